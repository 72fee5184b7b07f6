/*
 * onnx_map.c - parses the `onnx:` key of each op (the language is in
 * onnx_map.h and docs/onnx.md) and checks it against the op's signature
 * and the ONNX operator table (onnx_ops.c): the ONNX operator exists, the
 * mapping gives it as many inputs as it takes and only attributes it has,
 * every argument it names exists and has a type that fits where it is
 * used, and every argument of the op is used somewhere, so a new
 * argument cannot be dropped from the export silently.  Errors point at
 * the token inside the value: "specs/native_functions.yaml:L:C: error:
 * <op>: ...".  The parser is a small recursive descent over a tokenizer;
 * it stops at the first error of an entry.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "onnx_map.h"

typedef enum tok_kind { T_END, T_IDENT, T_NUMBER, T_STRING, T_PUNCT, T_BAD } tok_kind;

typedef struct lexer {
    const char *text;
    size_t pos;
    tok_kind kind;
    size_t start, len; /* of the current token (for strings: the quotes included) */
    const gen_op *op;
    gen_loc base;
    bool failed;
} lexer;

static gen_loc at(const lexer *lx, size_t pos)
{
    gen_loc loc = lx->base;
    loc.col += (int)pos;
    return loc;
}

static void next(lexer *lx)
{
    const char *s = lx->text;
    size_t p = lx->pos;

    while (s[p] == ' ' || s[p] == '\t')
        p++;
    lx->start = p;
    if (s[p] == '\0') {
        lx->kind = T_END;
    } else if (isalpha((unsigned char)s[p]) || s[p] == '_') {
        while (isalnum((unsigned char)s[p]) || s[p] == '_')
            p++;
        lx->kind = T_IDENT;
    } else if (isdigit((unsigned char)s[p]) || s[p] == '-' || s[p] == '.') {
        p++;
        while (isalnum((unsigned char)s[p]) || s[p] == '.' ||
               ((s[p] == '-' || s[p] == '+') && (s[p - 1] == 'e' || s[p - 1] == 'E')))
            p++;
        lx->kind = T_NUMBER;
    } else if (s[p] == '"') {
        p++;
        while (s[p] != '\0' && s[p] != '"')
            p++;
        lx->kind = s[p] == '"' ? T_STRING : T_BAD;
        if (s[p] == '"')
            p++;
    } else if (s[p] == '=' && s[p + 1] == '=') {
        p += 2;
        lx->kind = T_PUNCT;
    } else if (strchr("(),=", s[p]) != NULL) {
        p++;
        lx->kind = T_PUNCT;
    } else {
        p++;
        lx->kind = T_BAD;
    }
    lx->len = p - lx->start;
    lx->pos = p;
}

static bool is(const lexer *lx, const char *punct)
{
    return (lx->kind == T_PUNCT || lx->kind == T_IDENT) && strlen(punct) == lx->len &&
           memcmp(lx->text + lx->start, punct, lx->len) == 0;
}

static char *tok_text(const lexer *lx)
{
    return gen_xstrndup(lx->text + lx->start, lx->len);
}

static void fail(lexer *lx, size_t pos, const char *fmt, const char *detail)
{
    if (lx->failed)
        return;
    lx->failed = true;
    char *msg = gen_xprintf(fmt, detail);
    gen_error_in(lx->op->display, at(lx, pos), "onnx: %s", msg);
    free(msg);
}

static void describe_token(lexer *lx, const char *expected)
{
    char *t = lx->kind == T_END ? gen_xstrdup("the end") : tok_text(lx);
    char *msg = gen_xprintf("expected %s, found '%%s'", expected);
    fail(lx, lx->start, msg, t);
    free(msg);
    free(t);
}

static bool expect(lexer *lx, const char *punct)
{
    if (is(lx, punct)) {
        next(lx);
        return true;
    }
    char *what = gen_xprintf("'%s'", punct);
    describe_token(lx, what);
    free(what);
    return false;
}

static int find_arg(const gen_op *op, const char *name)
{
    for (int i = 0; i < op->schema.n_args; i++)
        if (strcmp(op->schema.args[i].name, name) == 0)
            return i;
    return -1;
}

static const gen_onnx_schema *find_schema(const char *name)
{
    for (int i = 0; i < gen_n_onnx_schemas; i++)
        if (strcmp(gen_onnx_schemas[i].name, name) == 0)
            return &gen_onnx_schemas[i];
    return NULL;
}

/* A schema whose name equals name ignoring case, to suggest. */
static const gen_onnx_schema *near_schema(const char *name)
{
    for (int i = 0; i < gen_n_onnx_schemas; i++)
        if (strcasecmp(gen_onnx_schemas[i].name, name) == 0)
            return &gen_onnx_schemas[i];
    return NULL;
}

static void push_item(gen_onnx_map *m, gen_onnx_item it)
{
    m->items = gen_xrealloc(m->items, (size_t)(m->n_items + 1) * sizeof *m->items);
    m->items[m->n_items++] = it;
}

/* Resolves the argument named by the current identifier; -1 reported. */
static int arg_here(lexer *lx)
{
    char *name = tok_text(lx);
    int idx = find_arg(lx->op, name);
    if (idx < 0)
        fail(lx, lx->start, "'%s' is not an argument of the op", name);
    free(name);
    return idx;
}

static bool has_attr(const gen_onnx_schema *s, const char *name)
{
    for (int i = 0; s->attrs[i] != NULL; i++)
        if (strcmp(s->attrs[i], name) == 0)
            return true;
    return false;
}

static void fail_attr(lexer *lx, size_t pos, const gen_onnx_schema *s, const char *name)
{
    gen_sb sb = {0};
    gen_sb_printf(&sb, "%s has no attribute '%s' (", s->name, name);
    if (s->attrs[0] == NULL)
        gen_sb_puts(&sb, "it has none");
    for (int i = 0; s->attrs[i] != NULL; i++)
        gen_sb_printf(&sb, "%s%s", i > 0 ? ", " : "it has ", s->attrs[i]);
    gen_sb_puts(&sb, ")");
    char *msg = gen_sb_take(&sb);
    fail(lx, pos, "%s", msg);
    free(msg);
}

/* `name = value` after the '=' has been read; name is owned by the item. */
static void parse_attr(lexer *lx, gen_onnx_map *m, char *name, size_t name_pos)
{
    gen_onnx_item it = {.attr = name, .arg_index = -1, .like_index = -1, .loc = at(lx, name_pos)};

    if (!has_attr(m->schema, name)) {
        fail_attr(lx, name_pos, m->schema, name);
        free(name);
        return;
    }
    if (lx->kind == T_IDENT) {
        it.kind = GEN_ONNX_ATTR_ARG;
        it.arg_index = arg_here(lx);
        if (it.arg_index >= 0) {
            const gen_arg *a = &lx->op->schema.args[it.arg_index];
            if (gen_arg_is_input(a) ||
                gen_arg_is_generator(a) || gen_arg_is_device(a) ||
                gen_arg_is_bool_list(a) || gen_arg_is_dtype(a))
                fail(lx, lx->start, "argument '%s' cannot be an ONNX attribute (tensors are inputs)",
                     a->name);
            it.arg = gen_xstrdup(a->name);
        }
    } else if (lx->kind == T_NUMBER) {
        it.literal = tok_text(lx);
        it.kind = strpbrk(it.literal, ".eE") != NULL ? GEN_ONNX_ATTR_FLOAT : GEN_ONNX_ATTR_INT;
        char *end = NULL;
        (void)strtod(it.literal, &end);
        if (*end != '\0')
            fail(lx, lx->start, "malformed number '%s'", it.literal);
    } else if (lx->kind == T_STRING) {
        it.kind = GEN_ONNX_ATTR_STR;
        it.literal = gen_xstrndup(lx->text + lx->start + 1, lx->len - 2);
    } else {
        describe_token(lx, "an argument name, a number or a string");
        free(name);
        return;
    }
    next(lx);
    push_item(m, it);
}

/* scalar(arg) / ints(arg), after the function name and '('. */
static void parse_wrapped(lexer *lx, gen_onnx_map *m, gen_onnx_item_kind kind, size_t pos)
{
    gen_onnx_item it = {.kind = kind, .arg_index = -1, .like_index = -1, .loc = at(lx, pos)};

    if (lx->kind != T_IDENT) {
        describe_token(lx, "an argument name");
        return;
    }
    it.arg_index = arg_here(lx);
    if (it.arg_index < 0)
        return;
    const gen_arg *a = &lx->op->schema.args[it.arg_index];
    if (kind == GEN_ONNX_IGNORE) {
        it.arg = gen_xstrdup(a->name);
        next(lx);
        if (expect(lx, ")"))
            push_item(m, it);
        return;
    }
    bool ok = kind == GEN_ONNX_IN_SCALAR
                  ? (a->type == GEN_T_SCALAR || a->type == GEN_T_FLOAT || gen_arg_is_int(a))
                  : (gen_arg_is_int(a) || gen_arg_is_int_list(a));
    if (!ok || a->nullable) {
        char *msg = gen_xprintf("%s() takes %s; '%%s' is %s",
                                kind == GEN_ONNX_IN_SCALAR ? "scalar" : "ints",
                                kind == GEN_ONNX_IN_SCALAR ? "a Scalar, float or int argument"
                                                           : "an int or int[] argument",
                                gen_type_name(a));
        fail(lx, lx->start, msg, a->name);
        free(msg);
        return;
    }
    it.arg = gen_xstrdup(a->name);
    next(lx);
    if (kind == GEN_ONNX_IN_SCALAR && is(lx, ",")) {
        next(lx);
        if (lx->kind != T_IDENT) {
            describe_token(lx, "the tensor argument whose dtype the scalar takes");
            free(it.arg);
            return;
        }
        it.like_index = arg_here(lx);
        if (it.like_index >= 0 && !gen_arg_is_tensor(&lx->op->schema.args[it.like_index]))
            fail(lx, lx->start, "scalar(..., %s): not a Tensor argument",
                 lx->op->schema.args[it.like_index].name);
        if (lx->failed) {
            free(it.arg);
            return;
        }
        next(lx);
    }
    if (expect(lx, ")"))
        push_item(m, it);
    else
        free(it.arg);
}

static void parse_item(lexer *lx, gen_onnx_map *m)
{
    size_t pos = lx->start;

    if (lx->kind != T_IDENT) {
        describe_token(lx, "an input or an attribute");
        return;
    }
    char *name = tok_text(lx);
    next(lx);
    if (is(lx, "=")) {
        next(lx);
        parse_attr(lx, m, name, pos);
        return;
    }
    if (is(lx, "(") && (strcmp(name, "scalar") == 0 || strcmp(name, "ints") == 0 ||
                        strcmp(name, "ignore") == 0)) {
        next(lx);
        parse_wrapped(lx, m,
                      name[0] == 's'   ? GEN_ONNX_IN_SCALAR
                      : name[1] == 'n' ? GEN_ONNX_IN_INTS
                                       : GEN_ONNX_IGNORE,
                      pos);
        free(name);
        return;
    }
    gen_onnx_item it = {.kind = GEN_ONNX_IN_TENSOR,
                        .arg_index = find_arg(lx->op, name),
                        .like_index = -1,
                        .loc = at(lx, pos)};
    if (it.arg_index < 0) {
        fail(lx, pos, "'%s' is not an argument of the op", name);
        free(name);
        return;
    }
    const gen_arg *a = &lx->op->schema.args[it.arg_index];
    if (gen_arg_is_tensor_list(a)) {
        it.kind = GEN_ONNX_IN_LIST;
    } else if (!gen_arg_is_tensor(a)) {
        char *msg = gen_xprintf("'%%s' is %s, not a tensor: give it as an attribute (name=%s), "
                                "scalar(%s) or ints(%s)",
                                gen_type_name(a), a->name, a->name, a->name);
        fail(lx, pos, msg, a->name);
        free(msg);
        free(name);
        return;
    }
    it.arg = name;
    push_item(m, it);
}

static void parse_guard(lexer *lx, gen_onnx_map *m)
{
    gen_onnx_guard g = {.arg_index = -1, .loc = at(lx, lx->start)};

    if (lx->kind != T_IDENT) {
        describe_token(lx, "an argument name");
        return;
    }
    g.arg_index = arg_here(lx);
    if (g.arg_index < 0)
        return;
    const gen_arg *a = &lx->op->schema.args[g.arg_index];
    if (!gen_arg_is_int(a) && a->type != GEN_T_FLOAT && a->type != GEN_T_SCALAR &&
        a->type != GEN_T_BOOL) {
        fail(lx, lx->start, "a guard compares an int, float, Scalar or bool argument; '%s' is not",
             a->name);
        return;
    }
    g.arg = gen_xstrdup(a->name);
    next(lx);
    if (!expect(lx, "==")) {
        free(g.arg);
        return;
    }
    if (lx->kind == T_NUMBER || is(lx, "True") || is(lx, "False")) {
        g.literal = tok_text(lx);
        next(lx);
    } else {
        describe_token(lx, "a number, True or False");
        free(g.arg);
        return;
    }
    m->guards = gen_xrealloc(m->guards, (size_t)(m->n_guards + 1) * sizeof *m->guards);
    m->guards[m->n_guards++] = g;
}

/* Counts and argument coverage once the mapping parsed. */
static void check_map(lexer *lx, gen_onnx_map *m)
{
    const gen_op *op = lx->op;
    int n_inputs = 0;
    bool variadic = false;
    int last_tensor = -1;

    for (int i = 0; i < m->n_items; i++) {
        gen_onnx_item *it = &m->items[i];
        if (it->kind == GEN_ONNX_IN_LIST)
            variadic = true;
        if (it->kind == GEN_ONNX_IN_TENSOR)
            last_tensor = it->arg_index;
        if (it->kind == GEN_ONNX_IN_SCALAR && it->like_index < 0) {
            it->like_index = last_tensor;
            if (last_tensor < 0)
                fail(lx, (size_t)(it->loc.col - lx->base.col),
                     "scalar(%s) needs a tensor input before it, or scalar(arg, tensor_arg): it "
                     "takes that tensor's dtype",
                     it->arg);
        }
        if (it->kind <= GEN_ONNX_IN_INTS)
            n_inputs++;
    }
    if (lx->failed)
        return;
    const gen_onnx_schema *s = m->schema;
    if ((!variadic && n_inputs < s->min_inputs) || (s->max_inputs >= 0 && n_inputs > s->max_inputs)) {
        char *msg = s->min_inputs == s->max_inputs
                        ? gen_xprintf("%s takes %d input%s, the mapping gives %d%%s", s->name,
                                      s->min_inputs, s->min_inputs == 1 ? "" : "s", n_inputs)
                        : gen_xprintf("%s takes %d to %d inputs, the mapping gives %d%%s", s->name,
                                      s->min_inputs, s->max_inputs, n_inputs);
        fail(lx, 0, msg, "");
        free(msg);
        return;
    }
    int n_returns = op->schema.n_returns;
    bool list_return = n_returns == 1 && op->schema.returns[0].is_list;
    if (list_return || n_returns < s->min_outputs ||
        (s->max_outputs >= 0 && n_returns > s->max_outputs)) {
        char count[32];
        snprintf(count, sizeof count, "%d", n_returns);
        char *msg = gen_xprintf("%s gives %d to %d outputs, the op returns %s%%s", s->name,
                                s->min_outputs, s->max_outputs, list_return ? "a list" : count);
        fail(lx, 0, msg, "");
        free(msg);
        return;
    }
    for (int a = 0; a < op->schema.n_args; a++) {
        bool used = false;
        for (int i = 0; i < m->n_items; i++)
            used = used || m->items[i].arg_index == a;
        for (int g = 0; g < m->n_guards; g++)
            used = used || m->guards[g].arg_index == a;
        if (!used) {
            char *msg = gen_xprintf("argument '%%s' is not mapped (make it an input or an "
                                    "attribute, or add 'where %s == <value>')",
                                    op->schema.args[a].name);
            fail(lx, 0, msg, op->schema.args[a].name);
            free(msg);
            return;
        }
    }
}

static void parse_map(const gen_op *op, gen_onnx_map *m)
{
    lexer lx = {.text = op->onnx, .op = op, .base = op->onnx_loc};

    next(&lx);
    if (lx.kind != T_IDENT) {
        describe_token(&lx, "an ONNX operator, custom or unsupported(\"why\")");
        goto out;
    }
    char *head = tok_text(&lx);
    size_t head_pos = lx.start;
    next(&lx);
    if (strcmp(head, "custom") == 0) {
        free(head);
        m->form = GEN_ONNX_CUSTOM;
        if (lx.kind != T_END)
            describe_token(&lx, "the end after custom");
        goto out;
    }
    if (strcmp(head, "unsupported") == 0) {
        free(head);
        m->form = GEN_ONNX_UNSUPPORTED;
        if (!expect(&lx, "("))
            goto out;
        if (lx.kind != T_STRING || lx.len < 3) {
            describe_token(&lx, "a non-empty quoted reason");
            goto out;
        }
        m->reason = gen_xstrndup(lx.text + lx.start + 1, lx.len - 2);
        next(&lx);
        if (expect(&lx, ")") && lx.kind != T_END)
            describe_token(&lx, "the end");
        goto out;
    }
    m->form = GEN_ONNX_OP;
    m->op_type = head;
    m->schema = find_schema(head);
    if (m->schema == NULL) {
        const gen_onnx_schema *near = near_schema(head);
        if (near != NULL) {
            char *msg = gen_xprintf("unknown ONNX operator '%%s' (did you mean %s?)", near->name);
            fail(&lx, head_pos, msg, head);
            free(msg);
        } else {
            fail(&lx, head_pos, "unknown ONNX operator '%s' (not in the default domain at opset 17)",
                 head);
        }
        goto out;
    }
    if (!expect(&lx, "("))
        goto out;
    while (!lx.failed && !is(&lx, ")")) {
        parse_item(&lx, m);
        if (lx.failed || is(&lx, ")"))
            break;
        if (!expect(&lx, ","))
            break;
    }
    if (lx.failed || !expect(&lx, ")"))
        goto out;
    if (is(&lx, "where")) {
        do {
            next(&lx);
            parse_guard(&lx, m);
        } while (!lx.failed && is(&lx, "and"));
    }
    if (!lx.failed && lx.kind != T_END)
        describe_token(&lx, "the end, or 'where'");
    if (!lx.failed)
        check_map(&lx, m);
out:
    if (lx.failed)
        m->form = GEN_ONNX_UNMAPPED;
}

gen_onnx_map *gen_onnx_check(const gen_model *model)
{
    gen_onnx_map *maps = gen_xcalloc((size_t)model->n_ops + 1, sizeof *maps);

    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (op->valid && op->onnx != NULL)
            parse_map(op, &maps[i]);
    }
    return maps;
}

void gen_onnx_maps_free(gen_onnx_map *maps, int n)
{
    if (maps == NULL)
        return;
    for (int i = 0; i < n; i++) {
        gen_onnx_map *m = &maps[i];
        free(m->op_type);
        free(m->reason);
        for (int k = 0; k < m->n_items; k++) {
            free(m->items[k].attr);
            free(m->items[k].arg);
            free(m->items[k].literal);
        }
        free(m->items);
        for (int k = 0; k < m->n_guards; k++) {
            free(m->guards[k].arg);
            free(m->guards[k].literal);
        }
        free(m->guards);
    }
    free(maps);
}
