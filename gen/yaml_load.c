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

/* Parses the file at path; false (reported) on I/O or syntax errors. */
static bool load_document(const char *path, const char *file, yaml_document_t *doc)
{
    yaml_parser_t parser;
    FILE *f = fopen(path, "rb");
    bool ok = false;

    if (f == NULL) {
        gen_error((gen_loc){.file = file}, "cannot open %s: %s", path, strerror(errno));
        return false;
    }
    if (!yaml_parser_initialize(&parser)) {
        gen_error((gen_loc){.file = file}, "cannot initialise the YAML parser");
        fclose(f);
        return false;
    }
    yaml_parser_set_input_file(&parser, f);
    if (!yaml_parser_load(&parser, doc)) {
        gen_loc loc = mark_loc(file, parser.problem_mark);
        if (parser.context != NULL)
            gen_error(loc, "YAML syntax error: %s %s",
                      parser.problem != NULL ? parser.problem : "invalid YAML", parser.context);
        else
            gen_error(loc, "YAML syntax error: %s",
                      parser.problem != NULL ? parser.problem : "invalid YAML");
    } else {
        ok = true;
    }
    yaml_parser_delete(&parser);
    fclose(f);
    return ok;
}

/* The text of a scalar node, or NULL after reporting that key's value must
 * be a non-empty string. */
static const char *scalar_value(const char *file, const yaml_node_t *n, const char *key)
{
    if (n == NULL || n->type != YAML_SCALAR_NODE || n->data.scalar.length == 0) {
        gen_error(n != NULL ? node_loc(file, n) : (gen_loc){.file = file},
                  "'%s' must be a non-empty string", key);
        return NULL;
    }
    if (strlen((const char *)n->data.scalar.value) != n->data.scalar.length) {
        gen_error(node_loc(file, n), "'%s' contains a NUL character", key);
        return NULL;
    }
    return (const char *)n->data.scalar.value;
}

/* Key text of a mapping pair, or NULL after reporting a non-scalar key. */
static const char *pair_key(const char *file, yaml_document_t *doc, const yaml_node_pair_t *pair)
{
    yaml_node_t *k = yaml_document_get_node(doc, pair->key);

    if (k == NULL || k->type != YAML_SCALAR_NODE) {
        gen_error(k != NULL ? node_loc(file, k) : (gen_loc){.file = file},
                  "mapping keys must be plain strings");
        return NULL;
    }
    return (const char *)k->data.scalar.value;
}

/* Reports a key that already appeared earlier in the same mapping. */
static bool is_duplicate_key(const char *file, yaml_document_t *doc, const yaml_node_t *map,
                             const yaml_node_pair_t *pair)
{
    const char *key = pair_key(file, doc, pair);

    if (key == NULL)
        return true;
    for (const yaml_node_pair_t *q = map->data.mapping.pairs.start; q < pair; q++) {
        yaml_node_t *k = yaml_document_get_node(doc, q->key);
        if (k != NULL && k->type == YAML_SCALAR_NODE &&
            strcmp((const char *)k->data.scalar.value, key) == 0) {
            yaml_node_t *kn = yaml_document_get_node(doc, pair->key);
            gen_error(node_loc(file, kn), "duplicate key '%s' (first given on line %d)", key,
                      (int)k->start_mark.line + 1);
            return true;
        }
    }
    return false;
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

static void load_dispatch(const char *file, yaml_document_t *doc, yaml_node_t *v, gen_op *op)
{
    if (v->type != YAML_MAPPING_NODE) {
        gen_error(node_loc(file, v), "'dispatch' must be a mapping such as {CPU: yg__cpu_mm}");
        return;
    }
    for (yaml_node_pair_t *pair = v->data.mapping.pairs.start; pair < v->data.mapping.pairs.top;
         pair++) {
        if (is_duplicate_key(file, doc, v, pair))
            continue;
        const char *key = pair_key(file, doc, pair);
        yaml_node_t *kn = yaml_document_get_node(doc, pair->key);
        yaml_node_t *val = yaml_document_get_node(doc, pair->value);
        char **slot;
        if (strcmp(key, "CPU") == 0) {
            slot = &op->cpu_kernel;
            if (val != NULL)
                op->cpu_kernel_loc = value_loc(file, val);
        } else if (strcmp(key, "CUDA") == 0) {
            slot = &op->cuda_kernel;
        } else {
            gen_error(node_loc(file, kn), "unknown dispatch key '%s' (expected CPU or CUDA)", key);
            continue;
        }
        const char *s = scalar_value(file, val, key);
        if (s != NULL)
            *slot = gen_xstrdup(s);
    }
}

static void load_tags(const char *file, yaml_document_t *doc, yaml_node_t *v, gen_op *op)
{
    if (v->type != YAML_SEQUENCE_NODE) {
        gen_error(node_loc(file, v), "'tags' must be a list such as [pointwise, broadcast]");
        return;
    }
    size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
    op->tags = gen_xcalloc(n, sizeof(char *));
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
         it++) {
        const char *s = scalar_value(file, yaml_document_get_node(doc, *it), "tags");
        if (s != NULL)
            op->tags[op->n_tags++] = gen_xstrdup(s);
    }
}

static void load_native_entry(const char *file, yaml_document_t *doc, yaml_node_t *entry,
                              gen_op *op)
{
    op->loc = node_loc(file, entry);
    for (yaml_node_pair_t *pair = entry->data.mapping.pairs.start;
         pair < entry->data.mapping.pairs.top; pair++) {
        if (is_duplicate_key(file, doc, entry, pair))
            continue;
        const char *key = pair_key(file, doc, pair);
        yaml_node_t *kn = yaml_document_get_node(doc, pair->key);
        yaml_node_t *v = yaml_document_get_node(doc, pair->value);
        const char *s;
        if (v == NULL)
            continue;
        if (strcmp(key, "func") == 0) {
            if ((s = scalar_value(file, v, key)) != NULL) {
                op->func = gen_xstrdup(s);
                op->func_loc = value_loc(file, v);
            }
        } else if (strcmp(key, "pointwise") == 0) {
            if ((s = scalar_value(file, v, key)) != NULL) {
                op->pointwise = gen_xstrdup(s);
                op->pointwise_loc = value_loc(file, v);
            }
        } else if (strcmp(key, "dispatch") == 0) {
            load_dispatch(file, doc, v, op);
        } else if (strcmp(key, "tags") == 0) {
            load_tags(file, doc, v, op);
        } else if (strcmp(key, "onnx") == 0) {
            if ((s = scalar_value(file, v, key)) != NULL)
                op->onnx = gen_xstrdup(s);
        } else {
            gen_error(node_loc(file, kn),
                      "unknown key '%s' (expected func, pointwise, dispatch, tags or onnx)", key);
        }
    }
    if (op->func == NULL && entry->data.mapping.pairs.top != entry->data.mapping.pairs.start)
        gen_error(op->loc, "entry has no 'func' key");
    else if (op->func == NULL)
        gen_error(op->loc, "empty entry: expected 'func: <signature>'");
}

void gen_load_native(const char *path, gen_model *model)
{
    const char *file = GEN_NATIVE_FILE;
    yaml_document_t doc;

    if (!load_document(path, file, &doc))
        return;
    yaml_node_t *root = root_list(file, &doc);
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
            gen_op *op = &model->ops[model->n_ops++];
            load_native_entry(file, &doc, entry, op);
            if (op->func == NULL) {
                gen_model_free_op(op);
                model->n_ops--;
            }
        }
    }
    yaml_document_delete(&doc);
}

static void load_deriv_entry(const char *file, yaml_document_t *doc, yaml_node_t *entry,
                             gen_deriv *d)
{
    size_t n = (size_t)(entry->data.mapping.pairs.top - entry->data.mapping.pairs.start);

    d->loc = node_loc(file, entry);
    d->formulas = gen_xcalloc(n, sizeof(gen_formula));
    for (yaml_node_pair_t *pair = entry->data.mapping.pairs.start;
         pair < entry->data.mapping.pairs.top; pair++) {
        if (is_duplicate_key(file, doc, entry, pair))
            continue;
        const char *key = pair_key(file, doc, pair);
        yaml_node_t *kn = yaml_document_get_node(doc, pair->key);
        yaml_node_t *v = yaml_document_get_node(doc, pair->value);
        const char *s = v != NULL ? scalar_value(file, v, key) : NULL;
        if (s == NULL)
            continue;
        if (strcmp(key, "name") == 0) {
            d->name_text = gen_xstrdup(s);
            d->name_loc = value_loc(file, v);
            continue;
        }
        gen_formula *f = &d->formulas[d->n_formulas++];
        f->input = gen_xstrdup(key);
        f->key_loc = node_loc(file, kn);
        f->loc = f->key_loc;
        f->edge = -1;
        f->arg_index = -1;
        if (strcmp(s, "non_differentiable") != 0) {
            f->expr = gen_xstrdup(s);
            f->loc = value_loc(file, v);
        }
    }
    if (d->name_text == NULL)
        gen_error(d->loc, "entry has no 'name' key (the op's func signature)");
}

void gen_load_derivatives(const char *path, gen_model *model)
{
    const char *file = GEN_DERIV_FILE;
    yaml_document_t doc;

    if (!load_document(path, file, &doc))
        return;
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
            load_deriv_entry(file, &doc, entry, &model->derivs[model->n_derivs++]);
        }
    }
    yaml_document_delete(&doc);
}
