/*
 * yaml_load.c - reads specs/native_functions.yaml and specs/derivatives.yaml
 * into the model with libyaml's document API.
 *
 * The document API keeps each node's start mark, so every value in the
 * model carries its display location ("specs/<file>.yaml", 1-based line and
 * column of its first character; quoted scalars start one column after the
 * quote).  libyaml itself accepts duplicate mapping keys and anything the
 * specs do not know; both are checked here, because a misspelt key
 * (`pointwize:`) silently ignored would turn a pointwise op into a composite
 * one.  Every problem is reported and loading goes on with the next entry,
 * so one run shows all errors.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "gen.h"

static gen_loc mark_loc(const char *file, yaml_mark_t mark)
{
    return (gen_loc){.file = file, .line = (int)mark.line + 1, .col = (int)mark.column + 1};
}

static gen_loc node_loc(const char *file, const yaml_node_t *n)
{
    return mark_loc(file, n->start_mark);
}

/* Location of a scalar's first content character. */
static gen_loc value_loc(const char *file, const yaml_node_t *n)
{
    gen_loc loc = node_loc(file, n);

    if (n->type == YAML_SCALAR_NODE && (n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                                        n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE))
        loc.col++;
    return loc;
}

/* Parses text as one YAML document; false (reported) on syntax errors. */
static bool load_document(const char *text, size_t len, const char *file, yaml_document_t *doc)
{
    yaml_parser_t parser;
    bool ok = false;

    if (!yaml_parser_initialize(&parser)) {
        gen_error((gen_loc){.file = file}, "cannot initialise the YAML parser");
        return false;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, doc)) {
        gen_loc loc = mark_loc(file, parser.problem_mark);
        const char *problem = parser.problem != NULL ? parser.problem : "invalid YAML";
        /* libyaml's words for a key indented deeper or shallower than its
         * neighbours, or a value with an unquoted ": " in it. */
        const char *hint =
            strstr(problem, "mapping values are not allowed") != NULL
                ? " (hint: a key indented deeper than the keys before it, or a value with "
                  "\": \" in it that needs quotes; an entry's keys line up under 'func:' or "
                  "'name:')"
            : strstr(problem, "did not find expected key") != NULL ||
                    strstr(problem, "did not find expected '-' indicator") != NULL
                ? " (hint: an unclosed quote, or a key indented less than the keys before it)"
                : "";
        if (parser.context != NULL)
            gen_error(loc, "YAML syntax error: %s %s%s", problem, parser.context, hint);
        else
            gen_error(loc, "YAML syntax error: %s%s", problem, hint);
    } else {
        ok = true;
    }
    yaml_parser_delete(&parser);
    return ok;
}

/* ---- scalars and keys ---- */

typedef struct loader {
    const char *file;
    yaml_document_t *doc;
    char *entry; /* the entry's op name ("sum.dim") for messages, or NULL */
} loader;

static yaml_node_t *get(loader *l, int index)
{
    return yaml_document_get_node(l->doc, index);
}

/* The text of a scalar node, or NULL after reporting that key's value must
 * be a non-empty string. */
static const char *scalar_value(loader *l, const yaml_node_t *n, const char *key)
{
    if (n == NULL || n->type != YAML_SCALAR_NODE || n->data.scalar.length == 0) {
        gen_error_in(l->entry, n != NULL ? node_loc(l->file, n) : (gen_loc){.file = l->file},
                     "'%s' must be a non-empty string", key);
        return NULL;
    }
    if (strlen((const char *)n->data.scalar.value) != n->data.scalar.length) {
        gen_error_in(l->entry, node_loc(l->file, n), "'%s' contains a NUL character", key);
        return NULL;
    }
    return (const char *)n->data.scalar.value;
}

/* Key text of a mapping pair, or NULL after reporting a non-scalar key. */
static const char *pair_key(loader *l, const yaml_node_pair_t *pair)
{
    yaml_node_t *k = get(l, pair->key);

    if (k == NULL || k->type != YAML_SCALAR_NODE ||
        strlen((const char *)k->data.scalar.value) != k->data.scalar.length) {
        gen_error_in(l->entry, k != NULL ? node_loc(l->file, k) : (gen_loc){.file = l->file},
                     "mapping keys must be plain strings");
        return NULL;
    }
    return (const char *)k->data.scalar.value;
}

/* Reports a key that already appeared earlier in the same mapping; true
 * when the pair must be skipped (duplicate or unusable key). */
static bool skip_pair(loader *l, const yaml_node_t *map, const yaml_node_pair_t *pair)
{
    const char *key = pair_key(l, pair);

    if (key == NULL)
        return true;
    for (const yaml_node_pair_t *q = map->data.mapping.pairs.start; q < pair; q++) {
        yaml_node_t *k = get(l, q->key);
        if (k != NULL && k->type == YAML_SCALAR_NODE &&
            strcmp((const char *)k->data.scalar.value, key) == 0) {
            gen_error_in(l->entry, node_loc(l->file, get(l, pair->key)),
                         "duplicate key '%s' (first given on line %d)", key,
                         (int)k->start_mark.line + 1);
            return true;
        }
    }
    return false;
}

/* The op name at the start of the entry's key (func or name) value, for
 * naming the entry in messages before its signature is parsed. */
static char *entry_name(loader *l, const yaml_node_t *entry, const char *key)
{
    for (yaml_node_pair_t *pair = entry->data.mapping.pairs.start;
         pair < entry->data.mapping.pairs.top; pair++) {
        yaml_node_t *k = get(l, pair->key);
        yaml_node_t *v = get(l, pair->value);
        if (k == NULL || v == NULL || k->type != YAML_SCALAR_NODE ||
            v->type != YAML_SCALAR_NODE ||
            strcmp((const char *)k->data.scalar.value, key) != 0)
            continue;
        const char *text = (const char *)v->data.scalar.value;
        size_t n = strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.");
        return n > 0 && n < 128 ? gen_xstrndup(text, n) : NULL;
    }
    return NULL;
}

static bool is_c_identifier(const char *s)
{
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (; *s != '\0'; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return false;
    return true;
}

/* The root list of entries; NULL for an empty file (reported otherwise). */
static yaml_node_t *root_list(const char *file, yaml_document_t *doc)
{
    yaml_node_t *root = yaml_document_get_root_node(doc);

    if (root == NULL)
        return NULL;
    if (root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0)
        return NULL;
    if (root->type != YAML_SEQUENCE_NODE) {
        gen_error(node_loc(file, root), "expected a list of entries (each starting with '- ')");
        return NULL;
    }
    return root;
}

/* ---- native_functions.yaml ---- */

/* `dispatch: {CPU: k}`, `{CPU: a, CUDA: b}` or `{CPU, CUDA: k}`. */
static void load_dispatch(loader *l, yaml_node_t *v, gen_op *op)
{
    if (v->type != YAML_MAPPING_NODE) {
        gen_error_in(l->entry, node_loc(l->file, v),
                     "'dispatch' must be a mapping such as {CPU: yg__cpu_mm}");
        return;
    }
    for (yaml_node_pair_t *pair = v->data.mapping.pairs.start; pair < v->data.mapping.pairs.top;
         pair++) {
        if (skip_pair(l, v, pair))
            continue;
        const char *key = pair_key(l, pair);
        yaml_node_t *kn = get(l, pair->key);
        yaml_node_t *val = get(l, pair->value);
        const char *kernel = NULL;
        if (val != NULL && val->type == YAML_SCALAR_NODE && val->data.scalar.length == 0)
            gen_error_in(l->entry, node_loc(l->file, kn),
                         "backend '%s' has no kernel (in a flow mapping, quote a list of "
                         "backends: {\"CPU, CUDA\": kernel})",
                         key);
        else
            kernel = scalar_value(l, val, "dispatch");
        if (kernel != NULL && !is_c_identifier(kernel)) {
            gen_error_in(l->entry, value_loc(l->file, val),
                         "kernel name '%s' is not a C identifier", kernel);
            kernel = NULL;
        }
        /* A comma list of backends shares one kernel. */
        for (const char *p = key; *p != '\0';) {
            while (*p == ' ')
                p++;
            size_t n = strcspn(p, ",");
            size_t len = n;
            while (len > 0 && p[len - 1] == ' ')
                len--;
            gen_loc loc = value_loc(l->file, kn);
            loc.col += (int)(p - key);
            char **slot = NULL;
            if (len == 3 && strncmp(p, "CPU", 3) == 0) {
                slot = &op->cpu_kernel;
            } else if (len == 4 && strncmp(p, "CUDA", 4) == 0) {
                slot = &op->cuda_kernel;
            } else {
                gen_error_in(l->entry, loc, "unknown dispatch key '%.*s' (expected CPU or CUDA)",
                             (int)len, p);
            }
            if (slot != NULL && *slot != NULL) {
                gen_error_in(l->entry, loc, "backend '%.*s' is given twice", (int)len, p);
            } else if (slot != NULL && kernel != NULL) {
                *slot = gen_xstrdup(kernel);
                if (slot == &op->cpu_kernel)
                    op->cpu_kernel_loc = value_loc(l->file, val);
                else
                    op->cuda_kernel_loc = value_loc(l->file, val);
            }
            p += n;
            if (*p == ',')
                p++;
        }
    }
}

/* One item (or a comma list of items) of a list-valued key such as tags
 * or variants, each with its location. */
typedef void (*item_fn)(loader *l, const char *item, gen_loc loc, gen_op *op);

static void for_each_item(loader *l, yaml_node_t *v, const char *key, item_fn fn, gen_op *op)
{
    if (v->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
             it++) {
            yaml_node_t *n = get(l, *it);
            const char *s = scalar_value(l, n, key);
            if (s != NULL)
                fn(l, s, value_loc(l->file, n), op);
        }
        return;
    }
    const char *s = scalar_value(l, v, key);
    if (s == NULL)
        return;
    gen_loc base = value_loc(l->file, v);
    for (const char *p = s; *p != '\0';) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, ",");
        size_t len = n;
        while (len > 0 && p[len - 1] == ' ')
            len--;
        char *item = gen_xstrndup(p, len);
        gen_loc loc = base;
        loc.col += (int)(p - s);
        fn(l, item, loc, op);
        free(item);
        p += n;
        if (*p == ',')
            p++;
    }
}

static void add_tag(loader *l, const char *item, gen_loc loc, gen_op *op)
{
    (void)l;
    op->tags = gen_xrealloc(op->tags, (size_t)(op->n_tags + 1) * sizeof(char *));
    op->tag_locs = gen_xrealloc(op->tag_locs, (size_t)(op->n_tags + 1) * sizeof(gen_loc));
    op->tags[op->n_tags] = gen_xstrdup(item);
    op->tag_locs[op->n_tags] = loc;
    op->n_tags++;
}

static void add_variant(loader *l, const char *item, gen_loc loc, gen_op *op)
{
    if (strcmp(item, "function") == 0)
        op->variant_function = true;
    else if (strcmp(item, "method") == 0)
        op->variant_method = true;
    else
        gen_error_in(l->entry, loc, "unknown variant '%s' (expected function or method)", item);
}

static void add_dtype(loader *l, const char *item, gen_loc loc, gen_op *op)
{
    int d = gen_dtype_lookup(item);

    if (d < 0) {
        char *choices = gen_dtype_choices();
        gen_error_in(l->entry, loc, "unknown dtype '%s' (expected %s)", item, choices);
        free(choices);
    } else if (op->dtypes & (UINT32_C(1) << d)) {
        gen_error_in(l->entry, loc, "dtype '%s' is given twice", item);
    } else {
        op->dtypes |= UINT32_C(1) << d;
        op->dtype_locs[d] = loc;
    }
}

/* `derivative: not_differentiable("why")`: the reason, a non-empty
 * string without '"' (it becomes part of a C string literal). */
static void load_no_derivative(loader *l, const char *s, gen_loc loc, gen_op *op)
{
    const char *head = "not_differentiable(\"";
    size_t n = strlen(s), h = strlen(head);
    if (n < h + 2 || strncmp(s, head, h) != 0 || strcmp(s + n - 2, "\")") != 0 ||
        memchr(s + h, '"', n - h - 2) != NULL || memchr(s + h, '\\', n - h - 2) != NULL) {
        gen_error_in(l->entry, loc,
                     "'derivative' takes not_differentiable(\"<why>\") (a reason without quotes "
                     "or backslashes), not '%s'",
                     s);
        return;
    }
    if (n == h + 2) {
        gen_error_in(l->entry, loc, "not_differentiable(\"\") needs a reason");
        return;
    }
    op->no_derivative = gen_xstrndup(s + h, n - h - 2);
    op->no_derivative_loc = loc;
}

static void load_native_entry(loader *l, yaml_node_t *entry, gen_op *op)
{
    bool has_variants = false;

    op->loc = node_loc(l->file, entry);
    for (yaml_node_pair_t *pair = entry->data.mapping.pairs.start;
         pair < entry->data.mapping.pairs.top; pair++) {
        if (skip_pair(l, entry, pair))
            continue;
        const char *key = pair_key(l, pair);
        yaml_node_t *kn = get(l, pair->key);
        yaml_node_t *v = get(l, pair->value);
        const char *s;
        if (v == NULL)
            continue;
        if (strcmp(key, "func") == 0) {
            if ((s = scalar_value(l, v, key)) != NULL) {
                op->func = gen_xstrdup(s);
                op->func_loc = value_loc(l->file, v);
            }
        } else if (strcmp(key, "pointwise") == 0) {
            if ((s = scalar_value(l, v, key)) != NULL) {
                op->pointwise = gen_xstrdup(s);
                op->pointwise_loc = value_loc(l->file, v);
            }
        } else if (strcmp(key, "pointwise_int") == 0) {
            if ((s = scalar_value(l, v, key)) != NULL) {
                op->pointwise_int = gen_xstrdup(s);
                op->pointwise_int_loc = value_loc(l->file, v);
            }
        } else if (strcmp(key, "int_divisor") == 0) {
            if ((s = scalar_value(l, v, key)) != NULL) {
                op->int_divisor = gen_xstrdup(s);
                op->int_divisor_loc = value_loc(l->file, v);
            }
        } else if (strcmp(key, "dispatch") == 0) {
            load_dispatch(l, v, op);
        } else if (strcmp(key, "structured") == 0) {
            op->structured_loc = value_loc(l->file, v);
            if ((s = scalar_value(l, v, key)) != NULL && strcmp(s, "true") == 0)
                op->structured = true;
            else if (s != NULL && strcmp(s, "false") != 0)
                gen_error_in(l->entry, op->structured_loc,
                             "'structured' must be true or false, not '%s'", s);
        } else if (strcmp(key, "tags") == 0) {
            for_each_item(l, v, key, add_tag, op);
        } else if (strcmp(key, "variants") == 0) {
            has_variants = true;
            for_each_item(l, v, key, add_variant, op);
        } else if (strcmp(key, "onnx") == 0) {
            if ((s = scalar_value(l, v, key)) != NULL) {
                op->onnx = gen_xstrdup(s);
                op->onnx_loc = value_loc(l->file, v);
            }
        } else if (strcmp(key, "dtypes") == 0) {
            op->dtypes_given = true;
            op->dtypes_loc = value_loc(l->file, v);
            for_each_item(l, v, key, add_dtype, op);
        } else if (strcmp(key, "derivative") == 0) {
            op->derivative_key = true;
            if ((s = scalar_value(l, v, key)) != NULL)
                load_no_derivative(l, s, value_loc(l->file, v), op);
        } else {
            gen_error_in(l->entry, node_loc(l->file, kn),
                         "unknown key '%s' (expected func, variants, dispatch, structured, "
                         "pointwise, pointwise_int, int_divisor, tags, onnx, dtypes or "
                         "derivative)",
                         key);
        }
    }
    if (!has_variants)
        op->variant_function = true;
    if (op->func == NULL && entry->data.mapping.pairs.top != entry->data.mapping.pairs.start)
        gen_error(op->loc, "entry has no 'func' key");
    else if (op->func == NULL)
        gen_error(op->loc, "empty entry: expected 'func: <signature>'");
}

/* Whether entry is a section item: a mapping with a 'section' key. */
static bool is_section_item(loader *l, const yaml_node_t *entry)
{
    for (yaml_node_pair_t *pair = entry->data.mapping.pairs.start;
         pair < entry->data.mapping.pairs.top; pair++) {
        yaml_node_t *k = get(l, pair->key);
        if (k != NULL && k->type == YAML_SCALAR_NODE &&
            strcmp((const char *)k->data.scalar.value, "section") == 0)
            return true;
    }
    return false;
}

/* A slug: a lowercase letter, then lowercase letters, digits and '_'. */
static bool is_slug(const char *s)
{
    if (!(s[0] >= 'a' && s[0] <= 'z'))
        return false;
    for (; *s != '\0'; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

/* `- section: <name>`: starts a section that every following op joins.
 * Reports other keys, names that are not slugs, the name of a fixed output
 * file (boxed/table.c) and a name given twice. */
static void load_section(loader *l, yaml_node_t *entry, gen_model *model)
{
    const char *name = NULL;
    gen_loc loc = {0};

    for (yaml_node_pair_t *pair = entry->data.mapping.pairs.start;
         pair < entry->data.mapping.pairs.top; pair++) {
        if (skip_pair(l, entry, pair))
            continue;
        const char *key = pair_key(l, pair);
        yaml_node_t *v = get(l, pair->value);
        if (strcmp(key, "section") != 0) {
            gen_error(node_loc(l->file, get(l, pair->key)),
                      "unknown key '%s' in a section item (it holds only 'section: <name>')",
                      key);
            continue;
        }
        if (v == NULL || (name = scalar_value(l, v, key)) == NULL)
            continue;
        loc = value_loc(l->file, v);
    }
    if (name == NULL)
        return;
    if (!is_slug(name)) {
        gen_error(loc,
                  "section name '%s' must be lowercase letters, digits and '_', starting with a "
                  "letter (it names the output files)",
                  name);
        return;
    }
    if (strcmp(name, "table") == 0) {
        gen_error(loc, "section name 'table' is taken by boxed/table.c");
        return;
    }
    for (int i = 0; i < model->n_sections; i++) {
        if (strcmp(model->sections[i].name, name) == 0) {
            gen_error(loc, "section '%s' is given twice (first on line %d)", name,
                      model->sections[i].loc.line);
            return;
        }
    }
    model->sections = gen_xrealloc(model->sections,
                                   (size_t)(model->n_sections + 1) * sizeof(gen_section));
    model->sections[model->n_sections++] = (gen_section){.name = gen_xstrdup(name), .loc = loc};
}

/* Whether entry is a mapping with key name ('- enum: ...'). */
static bool has_key(loader *l, const yaml_node_t *entry, const char *name)
{
    for (yaml_node_pair_t *pair = entry->data.mapping.pairs.start;
         pair < entry->data.mapping.pairs.top; pair++) {
        yaml_node_t *k = get(l, pair->key);
        if (k != NULL && k->type == YAML_SCALAR_NODE &&
            strcmp((const char *)k->data.scalar.value, name) == 0)
            return true;
    }
    return false;
}

/* `- enum: Reduction` + `values: [none, mean, sum]`: an argument type.
 * The name is CamelCase (Reduction, PaddingMode: C yg_reduction,
 * yg_padding_mode); values are slugs, at least two, distinct. */
static void load_enum(loader *l, yaml_node_t *entry, gen_model *model)
{
    gen_enum e = {0};
    bool ok = true;

    for (yaml_node_pair_t *pair = entry->data.mapping.pairs.start;
         pair < entry->data.mapping.pairs.top; pair++) {
        if (skip_pair(l, entry, pair))
            continue;
        const char *key = pair_key(l, pair);
        yaml_node_t *v = get(l, pair->value);
        const char *s;
        if (v == NULL)
            continue;
        if (strcmp(key, "enum") == 0 && (s = scalar_value(l, v, key)) != NULL) {
            e.loc = value_loc(l->file, v);
            bool camel = s[0] >= 'A' && s[0] <= 'Z';
            for (const char *c = s; *c != '\0'; c++)
                camel &= (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
                         (*c >= '0' && *c <= '9');
            if (!camel) {
                gen_error(e.loc, "enum name '%s' must be CamelCase letters and digits (Reduction, "
                                 "PaddingMode)",
                          s);
                ok = false;
                continue;
            }
            e.name = gen_xstrdup(s);
            gen_sb c = {0};
            for (const char *q = s; *q != '\0'; q++) {
                if (*q >= 'A' && *q <= 'Z' && q != s)
                    gen_sb_puts(&c, "_");
                char lower = *q >= 'A' && *q <= 'Z' ? (char)(*q - 'A' + 'a') : *q;
                gen_sb_putn(&c, &lower, 1);
            }
            e.cname = gen_sb_take(&c);
        } else if (strcmp(key, "values") == 0 && v->type == YAML_SEQUENCE_NODE) {
            for (yaml_node_item_t *it = v->data.sequence.items.start;
                 it < v->data.sequence.items.top; it++) {
                yaml_node_t *n = get(l, *it);
                const char *item = n != NULL ? scalar_value(l, n, key) : NULL;
                if (item == NULL)
                    continue;
                bool dup = false;
                for (int i = 0; i < e.n_values; i++)
                    dup |= strcmp(e.values[i], item) == 0;
                if (!is_slug(item) || dup) {
                    gen_error(value_loc(l->file, n),
                              dup ? "enum value '%s' is given twice"
                                  : "enum value '%s' must be lowercase letters, digits and '_'",
                              item);
                    ok = false;
                    continue;
                }
                e.values = gen_xrealloc(e.values, (size_t)(e.n_values + 1) * sizeof(char *));
                e.values[e.n_values++] = gen_xstrdup(item);
            }
        } else {
            gen_error(node_loc(l->file, get(l, pair->key)),
                      "unknown key '%s' in an enum item (it holds 'enum: <Name>' and 'values: "
                      "[<value>, ...]')",
                      key);
            ok = false;
        }
    }
    bool twice = false;
    for (int i = 0; e.name != NULL && i < model->n_enums; i++)
        if (strcmp(model->enums[i].name, e.name) == 0) {
            gen_error(e.loc, "enum '%s' is given twice (first on line %d)", e.name,
                      model->enums[i].loc.line);
            twice = true;
        }
    if (ok && !twice && e.name != NULL && e.n_values < 2)
        gen_error(e.loc, "enum '%s' needs 'values: [...]' with at least two values", e.name);
    /* A flawed enum is still declared (its error stops the run), so that
     * the arguments of its type report nothing more. */
    if (twice || e.name == NULL) {
        free(e.name);
        free(e.cname);
        for (int i = 0; i < e.n_values; i++)
            free(e.values[i]);
        free(e.values);
        return;
    }
    model->enums = gen_xrealloc(model->enums, (size_t)(model->n_enums + 1) * sizeof(gen_enum));
    model->enums[model->n_enums++] = e;
}

/* ---- doc comments ---- */

/* The start of each line of text (starts[i] is line i + 1), so that the
 * comments libyaml drops can be read back by line number. */
typedef struct line_index {
    const char **starts;
    int n;
    const char *end;
} line_index;

static void index_lines(const char *text, size_t len, line_index *ix)
{
    int cap = 64;

    ix->starts = gen_xmalloc((size_t)cap * sizeof(char *));
    ix->n = 0;
    ix->end = text + len;
    for (const char *p = text; p <= ix->end;) {
        if (ix->n == cap) {
            cap *= 2;
            ix->starts = gen_xrealloc(ix->starts, (size_t)cap * sizeof(char *));
        }
        ix->starts[ix->n++] = p;
        const char *nl = memchr(p, '\n', (size_t)(ix->end - p));
        if (nl == NULL)
            break;
        p = nl + 1;
    }
}

/* The text of line (1-based) and its length, without its line break and
 * trailing blanks. */
static const char *line_text(const line_index *ix, int line, size_t *n)
{
    const char *p = ix->starts[line - 1];
    const char *e = line < ix->n ? ix->starts[line] : ix->end;

    while (e > p && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
        e--;
    *n = (size_t)(e - p);
    return p;
}

/* The doc comment of the op whose `- func:` is on op->loc.line: the run of
 * lines starting with '#' in column 1 directly above it.  A blank line
 * ends the run, so a section item's comment (followed by a blank line)
 * never becomes its first op's doc.  Refuses text that would end or nest
 * the C comment the header prints it in. */
/* The doc comment of the item on line `at` (an op or an enum): the `#`
 * lines directly above it; NULL when there are none. */
static char *doc_above(const line_index *ix, const char *entry, gen_loc at)
{
    int first = at.line;
    gen_sb sb = {0};
    char *doc = NULL;

    if (at.line < 1 || at.line > ix->n)
        return NULL;

    while (first > 1) {
        size_t n;
        const char *p = line_text(ix, first - 1, &n);
        if (n == 0 || p[0] != '#')
            break;
        first--;
    }
    for (int line = first; line < at.line; line++) {
        size_t n;
        const char *p = line_text(ix, line, &n);
        size_t skip = n > 1 && p[1] == ' ' ? 2 : 1;
        for (size_t i = skip; i + 1 < n; i++) {
            if ((p[i] == '*' && p[i + 1] == '/') || (p[i] == '/' && p[i + 1] == '*')) {
                gen_loc loc = {.file = at.file, .line = line, .col = (int)i + 1};
                gen_error_in(entry, loc,
                             "doc comment contains '%c%c', which would %s the C comment it "
                             "becomes in the public header; reword it",
                             p[i], p[i + 1], p[i] == '*' ? "end" : "nest inside");
                break;
            }
        }
        if (sb.len > 0 || n > skip) /* leading empty lines are dropped */
            gen_sb_printf(&sb, "%s%.*s", sb.len > 0 ? "\n" : "", (int)(n - skip), p + skip);
    }
    while (sb.len > 0 && sb.buf[sb.len - 1] == '\n') /* and trailing ones */
        sb.buf[--sb.len] = '\0';
    if (sb.len > 0)
        doc = gen_sb_take(&sb);
    gen_sb_free(&sb);
    return doc;
}

void gen_load_native_text(const char *text, size_t len, gen_model *model)
{
    const char *file = GEN_NATIVE_FILE;
    yaml_document_t doc;

    if (!load_document(text, len, file, &doc)) {
        model->unreadable = true;
        return;
    }
    yaml_node_t *root = root_list(file, &doc);
    bool seen_section = false;
    line_index lines;
    index_lines(text, len, &lines);
    if (root != NULL) {
        size_t n = (size_t)(root->data.sequence.items.top - root->data.sequence.items.start);
        model->ops = gen_xcalloc(n, sizeof(gen_op));
        for (yaml_node_item_t *it = root->data.sequence.items.start;
             it < root->data.sequence.items.top; it++) {
            yaml_node_t *entry = yaml_document_get_node(&doc, *it);
            if (entry == NULL || entry->type != YAML_MAPPING_NODE) {
                gen_error(entry != NULL ? node_loc(file, entry) : (gen_loc){.file = file},
                          "each entry must be a mapping with a 'func' key");
                continue;
            }
            loader l = {.file = file, .doc = &doc};
            if (is_section_item(&l, entry)) {
                load_section(&l, entry, model);
                seen_section = true;
                continue;
            }
            if (has_key(&l, entry, "enum")) {
                int before = model->n_enums;
                load_enum(&l, entry, model);
                if (model->n_enums > before) {
                    gen_enum *e = &model->enums[before];
                    e->doc = doc_above(&lines, e->name, e->loc);
                }
                continue;
            }
            l.entry = entry_name(&l, entry, "func");
            gen_op *op = &model->ops[model->n_ops++];
            load_native_entry(&l, entry, op);
            op->doc = doc_above(&lines, l.entry, op->loc);
            op->section = model->n_sections - 1;
            /* After a rejected section item, its ops are not reported again. */
            if (op->func != NULL && !seen_section)
                gen_error_in(l.entry, op->loc,
                             "op before the first section item (start the file with "
                             "'- section: <name>')");
            free(l.entry);
            if (op->func == NULL) {
                gen_model_free_op(op);
                model->n_ops--;
            } else if (op->pointwise != NULL && op->section >= 0) {
                model->sections[op->section].has_pointwise = true;
            }
        }
    }
    free(lines.starts);
    yaml_document_delete(&doc);
}

/* ---- derivatives.yaml ---- */

static gen_formula *new_formula(gen_deriv *d, int *cap)
{
    if (d->n_formulas == *cap) {
        *cap = *cap == 0 ? 4 : *cap * 2;
        d->formulas = gen_xrealloc(d->formulas, (size_t)*cap * sizeof(gen_formula));
    }
    gen_formula *f = &d->formulas[d->n_formulas++];
    memset(f, 0, sizeof(*f));
    f->edge = -1;
    f->arg_index = -1;
    return f;
}

/* `not_implemented("why")`: true with *reason set (NULL after reporting a
 * malformed one); false when s is a formula. */
static bool parse_not_implemented(loader *l, const char *s, gen_loc loc, char **reason)
{
    const char *prefix = "not_implemented";
    size_t n = strlen(prefix);

    *reason = NULL;
    if (strncmp(s, prefix, n) != 0 || (isalnum((unsigned char)s[n]) || s[n] == '_'))
        return false;
    const char *p = s + n;
    size_t len = strlen(p);
    if (len < 4 || p[0] != '(' || p[1] != '"' || p[len - 1] != ')' || p[len - 2] != '"' ||
        strcspn(p + 2, "\"\\%\n\r\t") != len - 4) {
        loc.col += (int)n;
        gen_error_in(l->entry, loc,
                     "malformed not_implemented: write not_implemented(\"reason\") with a "
                     "one-line reason free of quotes, backslashes and '%%'");
        return true;
    }
    *reason = gen_xstrndup(p + 2, len - 4);
    return true;
}

static void load_output_differentiability(loader *l, yaml_node_t *v, gen_deriv *d)
{
    d->output_diff_loc = node_loc(l->file, v);
    if (v->type != YAML_SEQUENCE_NODE) {
        gen_error_in(l->entry, node_loc(l->file, v),
                     "'output_differentiability' must be a list such as [True, False]");
        return;
    }
    size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
    d->output_diff = gen_xcalloc(n, sizeof(bool));
    d->has_output_diff = true;
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
         it++) {
        yaml_node_t *n_ = get(l, *it);
        const char *s = scalar_value(l, n_, "output_differentiability");
        if (s == NULL)
            continue;
        if (strcmp(s, "True") == 0 || strcmp(s, "true") == 0)
            d->output_diff[d->n_output_diff++] = true;
        else if (strcmp(s, "False") == 0 || strcmp(s, "false") == 0)
            d->output_diff[d->n_output_diff++] = false;
        else {
            gen_error_in(l->entry, value_loc(l->file, n_),
                         "'output_differentiability' items must be True or False, not '%s'", s);
            d->has_output_diff = false; /* no follow-on length error */
        }
    }
}

/* An input key: one argument name, or a comma list of names that share
 * one formula ("input, weight, bias"). */
static void load_formula_key(loader *l, gen_deriv *d, int *cap, const char *key,
                             yaml_node_t *kn, yaml_node_t *v)
{
    const char *s = scalar_value(l, v, key);

    if (s == NULL)
        return;
    int group = d->n_groups++;
    int members = 0;
    for (const char *p = key; *p != '\0';) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, ",");
        size_t len = n;
        while (len > 0 && p[len - 1] == ' ')
            len--;
        gen_formula *f = new_formula(d, cap);
        f->input = gen_xstrndup(p, len);
        f->key_loc = value_loc(l->file, kn);
        f->key_loc.col += (int)(p - key);
        f->loc = f->key_loc;
        f->group = group;
        f->group_index = members++;
        if (strcmp(s, "non_differentiable") == 0) {
            /* no gradient, no edge */
        } else if (parse_not_implemented(l, s, value_loc(l->file, v), &f->reason)) {
            f->not_implemented = true;
            f->has_error = f->reason == NULL;
            f->loc = value_loc(l->file, v);
        } else {
            f->expr = gen_xstrdup(s);
            f->loc = value_loc(l->file, v);
        }
        p += n;
        if (*p == ',')
            p++;
    }
    for (int i = d->n_formulas - members; i < d->n_formulas; i++)
        d->formulas[i].group_size = members;
}

static void load_deriv_entry(loader *l, yaml_node_t *entry, gen_deriv *d)
{
    int cap = 0;

    d->loc = node_loc(l->file, entry);
    for (yaml_node_pair_t *pair = entry->data.mapping.pairs.start;
         pair < entry->data.mapping.pairs.top; pair++) {
        if (skip_pair(l, entry, pair))
            continue;
        const char *key = pair_key(l, pair);
        yaml_node_t *kn = get(l, pair->key);
        yaml_node_t *v = get(l, pair->value);
        if (v == NULL)
            continue;
        if (strcmp(key, "name") == 0) {
            const char *s = scalar_value(l, v, key);
            if (s != NULL) {
                d->name_text = gen_xstrdup(s);
                d->name_loc = value_loc(l->file, v);
            }
        } else if (strcmp(key, "output_differentiability") == 0) {
            load_output_differentiability(l, v, d);
        } else if (strcmp(key, "double_backward") == 0) {
            /* The only value: this entry's formulas are not differentiable
             * themselves (they call an op without a derivative); the
             * gradgradcheck test skips it and checks that it really fails. */
            const char *s = scalar_value(l, v, key);
            if (s != NULL && !parse_not_implemented(l, s, value_loc(l->file, v),
                                                    &d->no_double_backward))
                gen_error_in(l->entry, value_loc(l->file, v),
                             "'double_backward' takes only not_implemented(\"why\"), not '%s'", s);
        } else if (strcmp(key, "graph_grad") == 0) {
            /* The entry has no graph form (its formula reads something the
             * IR cannot express): the op stays outside autodiff subgraphs. */
            const char *s = scalar_value(l, v, key);
            if (s != NULL &&
                !parse_not_implemented(l, s, value_loc(l->file, v), &d->no_graph_grad))
                gen_error_in(l->entry, value_loc(l->file, v),
                             "'graph_grad' takes only not_implemented(\"why\"), not '%s'", s);
        } else {
            load_formula_key(l, d, &cap, key, kn, v);
        }
    }
    if (d->name_text == NULL)
        gen_error(d->loc, "entry has no 'name' key (the op's func signature)");
}

void gen_load_derivatives_text(const char *text, size_t len, gen_model *model)
{
    const char *file = GEN_DERIV_FILE;
    yaml_document_t doc;

    if (!load_document(text, len, file, &doc)) {
        model->unreadable = true;
        return;
    }
    yaml_node_t *root = root_list(file, &doc);
    if (root != NULL) {
        size_t n = (size_t)(root->data.sequence.items.top - root->data.sequence.items.start);
        model->derivs = gen_xcalloc(n, sizeof(gen_deriv));
        for (yaml_node_item_t *it = root->data.sequence.items.start;
             it < root->data.sequence.items.top; it++) {
            yaml_node_t *entry = yaml_document_get_node(&doc, *it);
            if (entry == NULL || entry->type != YAML_MAPPING_NODE) {
                gen_error(entry != NULL ? node_loc(file, entry) : (gen_loc){.file = file},
                          "each entry must be a mapping with a 'name' key");
                continue;
            }
            loader l = {.file = file, .doc = &doc};
            l.entry = entry_name(&l, entry, "name");
            load_deriv_entry(&l, entry, &model->derivs[model->n_derivs++]);
            free(l.entry);
        }
    }
    yaml_document_delete(&doc);
}

/* ---- files ---- */

/* Reads path into memory; NULL (reported against file) on failure. */
static char *read_spec(const char *path, const char *file, size_t *len)
{
    FILE *f = fopen(path, "rb");
    gen_sb sb = {0};
    char buf[65536];
    size_t got;

    if (f == NULL) {
        gen_error((gen_loc){.file = file}, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    while ((got = fread(buf, 1, sizeof(buf), f)) > 0)
        gen_sb_putn(&sb, buf, got);
    if (ferror(f)) {
        gen_error((gen_loc){.file = file}, "cannot read %s: %s", path, strerror(errno));
        fclose(f);
        gen_sb_free(&sb);
        return NULL;
    }
    fclose(f);
    *len = sb.len;
    return gen_sb_take(&sb);
}

void gen_load_native(const char *path, gen_model *model)
{
    size_t len = 0;
    char *text = read_spec(path, GEN_NATIVE_FILE, &len);

    if (text != NULL)
        gen_load_native_text(text, len, model);
    free(text);
}

void gen_load_derivatives(const char *path, gen_model *model)
{
    size_t len = 0;
    char *text = read_spec(path, GEN_DERIV_FILE, &len);

    if (text != NULL)
        gen_load_derivatives_text(text, len, model);
    free(text);
}
