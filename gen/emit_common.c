/*
 * emit_common.c - formatting shared by the emitters: the @generated marker,
 * schema comments, C parameter lists with their ownership comments, and
 * node display names.
 *
 * gen lays out its output itself (one parameter per line once a declaration
 * passes 100 columns, trailing comments aligned) instead of running
 * clang-format at build time: another machine's clang-format would produce
 * another text and the staleness test would fail there.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

void gen_emit_marker(gen_sb *sb, const char *spec_file)
{
    gen_sb_printf(sb, "/* %s by gen from %s. DO NOT EDIT. */\n", "@" "generated", spec_file);
}

void gen_emit_schema_only(gen_sb *sb, const char *indent, const char *schema)
{
    if (strlen(indent) + strlen(schema) + 6 <= 100) {
        gen_sb_printf(sb, "%s/* %s */\n", indent, schema);
        return;
    }
    size_t col = strlen(indent) + 3;
    const char *s = schema;
    gen_sb_printf(sb, "%s/* ", indent);
    while (*s != '\0') {
        size_t n = strcspn(s, ",");
        if (s[n] == ',')
            n++;
        if (col + n > 97 && col > strlen(indent) + 3) {
            gen_sb_printf(sb, "\n%s *   ", indent);
            col = strlen(indent) + 5;
            while (*s == ' ') {
                s++;
                n--;
            }
        }
        gen_sb_putn(sb, s, n);
        col += n;
        s += n;
    }
    gen_sb_puts(sb, " */\n");
}

void gen_params_push(gen_params *p, char *decl, char *comment)
{
    p->decls = gen_xrealloc(p->decls, (size_t)(p->n + 1) * sizeof(char *));
    p->comments = gen_xrealloc(p->comments, (size_t)(p->n + 1) * sizeof(char *));
    p->decls[p->n] = decl;
    p->comments[p->n] = comment;
    p->n++;
}

/* The name of the argument a return aliases, for "a view of self". */
static const char *aliased_arg(const gen_op *op, const gen_return *r)
{
    if (r->alias == NULL)
        return NULL;
    for (int i = 0; i < op->schema.n_args; i++)
        if (op->schema.args[i].alias != NULL && strcmp(op->schema.args[i].alias, r->alias) == 0)
            return op->schema.args[i].name;
    return NULL;
}

char *gen_return_cname(const gen_op *op, int i)
{
    const gen_return *r = &op->schema.returns[i];

    if (op->schema.n_returns == 1)
        return gen_xstrdup("out");
    if (r->name != NULL)
        return gen_xprintf("out_%s", r->name);
    return gen_xprintf("out%d", i);
}

char *gen_enum_value_cname(const gen_enum *e, int v)
{
    char *s = gen_xprintf("YG_%s_%s", e->cname, e->values[v]);

    for (char *c = s; *c != '\0'; c++)
        *c = (*c >= 'a' && *c <= 'z') ? (char)(*c - 'a' + 'A') : *c;
    return s;
}

/* The out-parameters of op's returns: a new reference each (a view of
 * the argument it aliases, if any), or a Tensor[]'s new array of new
 * references and its length. */
static void push_return_params(gen_params *p, const gen_op *op)
{
    for (int i = 0; i < op->schema.n_returns; i++) {
        const gen_return *r = &op->schema.returns[i];
        const char *base = aliased_arg(op, r);
        char *name = gen_return_cname(op, i);
        if (r->is_list) {
            /* Tensor[]: a new array of new references and its length */
            char *what = base == NULL ? gen_xstrdup("out: new array of new refs")
                                      : gen_xprintf("out: new array of new refs, views of %s",
                                                    base);
            gen_params_push(p, gen_xprintf("yg_tensor ***%s", name),
                       gen_xprintf("%s; release with yg_release_list", what));
            gen_params_push(p, gen_xprintf("int64_t *%s_len", name),
                            gen_xstrdup("out: its length"));
            free(what);
            free(name);
            continue;
        }
        char *comment = base == NULL ? gen_xstrdup("out: new ref")
                        : r->mutable_ ? gen_xprintf("out: new ref to %s", base)
                                      : gen_xprintf("out: new ref, a view of %s", base);
        gen_params_push(p, gen_xprintf("yg_tensor **%s", name), comment);
        free(name);
    }
}

void gen_op_params(const gen_op *op, gen_params *p)
{
    memset(p, 0, sizeof(*p));
    for (int i = 0; i < op->schema.n_args; i++)
        gen_type_api_params(p, &op->schema.args[i]);
    push_return_params(p, op);
}

void gen_params_free(gen_params *p)
{
    for (int i = 0; i < p->n; i++) {
        free(p->decls[i]);
        free(p->comments[i]);
    }
    free(p->decls);
    free(p->comments);
    memset(p, 0, sizeof(*p));
}

void gen_emit_call_decl(gen_sb *sb, const char *prefix, const gen_params *p, bool with_comments,
                        const char *terminator)
{
    size_t one_line = strlen(prefix) + strlen(terminator) + 1;
    bool any_comment = false;
    size_t widest = 0;

    for (int i = 0; i < p->n; i++) {
        one_line += strlen(p->decls[i]) + 2;
        any_comment |= p->comments[i] != NULL;
        if (strlen(p->decls[i]) > widest)
            widest = strlen(p->decls[i]);
    }
    if (p->n == 0) {
        gen_sb_printf(sb, "%svoid)%s\n", prefix, terminator);
        return;
    }
    if (one_line <= 100 && !(with_comments && any_comment && p->n > 1)) {
        gen_sb_puts(sb, prefix);
        for (int i = 0; i < p->n; i++)
            gen_sb_printf(sb, "%s%s", i > 0 ? ", " : "", p->decls[i]);
        gen_sb_printf(sb, ")%s", terminator);
        if (with_comments && any_comment && p->comments[0] != NULL)
            gen_sb_printf(sb, " /* %s */", p->comments[0]);
        gen_sb_puts(sb, "\n");
        return;
    }
    /* One parameter per line, aligned after '(' when that fits. */
    size_t indent = strlen(prefix);
    size_t comment_col = indent + widest + 1 + strlen(terminator) + 1;
    size_t widest_comment = 0;
    for (int i = 0; i < p->n; i++)
        if (with_comments && p->comments[i] != NULL && strlen(p->comments[i]) > widest_comment)
            widest_comment = strlen(p->comments[i]);
    if (comment_col + (widest_comment > 0 ? widest_comment + 6 : 0) > 100) {
        gen_sb_printf(sb, "%s\n", prefix);
        indent = 4;
    } else {
        gen_sb_puts(sb, prefix);
    }
    comment_col = indent + widest + 1 + strlen(terminator) + 1;
    for (int i = 0; i < p->n; i++) {
        gen_sb line = {0};
        bool last = i + 1 == p->n;
        if (i > 0 || indent == 4)
            gen_sb_printf(&line, "%*s", (int)indent, "");
        else
            gen_sb_printf(&line, "%*s", (int)0, "");
        gen_sb_printf(&line, "%s%s%s", p->decls[i], last ? ")" : ",", last ? terminator : "");
        if (with_comments && p->comments[i] != NULL) {
            size_t col = (i == 0 && indent != 4 ? indent : 0) + line.len;
            gen_sb_printf(&line, "%*s/* %s */", (int)(comment_col > col ? comment_col - col : 1),
                          "", p->comments[i]);
        }
        gen_sb_printf(sb, "%s\n", line.buf);
        gen_sb_free(&line);
    }
}

bool gen_returns_list(const gen_op *op)
{
    return op->schema.n_returns == 1 && op->schema.returns[0].is_list;
}

char *gen_needs_grad(const gen_deriv *d, int edge)
{
    for (int j = 0; j < d->n_formulas; j++)
        if (d->formulas[j].list && d->formulas[j].edge == edge)
            return gen_xprintf("yg__node_needs_grad_from(base, %d)", edge);
    return gen_xprintf("yg__node_needs_grad(base, %d)", edge);
}

void gen_emit_forward_call(gen_sb *sb, const char *indent, const char *head, const gen_op *op,
                           const char *out_name, const char *tail)
{
    char **args = gen_xcalloc((size_t)(2 * op->schema.n_args + op->schema.n_returns + 2),
                              sizeof(char *));
    int n = 0;

    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        args[n++] = gen_xstrdup(a->name);
        if (gen_arg_has_len(a))
            args[n++] = gen_xprintf("%s_len", a->name);
    }
    if (out_name != NULL && strcmp(out_name, GEN_OUT_LOCALS) == 0) {
        for (int i = 0; i < op->schema.n_returns; i++)
            args[n++] = i == 0 ? gen_xstrdup("&result") : gen_xprintf("&result%d", i);
    } else if (out_name != NULL && strcmp(out_name, GEN_OUT_LOCAL_VALUES) == 0) {
        for (int i = 0; i < op->schema.n_returns; i++)
            args[n++] = i == 0 ? gen_xstrdup("result") : gen_xprintf("result%d", i);
    } else if (out_name != NULL) {
        args[n++] = gen_xstrdup(out_name);
    }
    for (int i = 0; out_name == NULL && i < op->schema.n_returns; i++)
        args[n++] = gen_return_cname(op, i);
    /* A Tensor[] return has its length after it: out_len, &result_len. */
    if (gen_returns_list(op)) {
        args[n] = gen_xprintf("%s_len", args[n - 1]);
        n++;
    }
    gen_emit_wrapped(sb, indent, head, (const char *const *)args, n, tail);
    for (int i = 0; i < n; i++)
        free(args[i]);
    free(args);
}

char *gen_node_display_name(const char *cname)
{
    gen_sb sb = {0};
    bool upper = true;

    for (const char *c = cname; *c != '\0'; c++) {
        if (*c == '_') {
            upper = true;
            continue;
        }
        char ch = upper ? (char)toupper((unsigned char)*c) : *c;
        gen_sb_putn(&sb, &ch, 1);
        upper = false;
    }
    gen_sb_puts(&sb, "Backward");
    return gen_sb_take(&sb);
}

const char *gen_kind_name(gen_op_kind kind)
{
    switch (kind) {
    case GEN_OP_POINTWISE:
        return "pointwise";
    case GEN_OP_KERNEL:
        return "kernel";
    case GEN_OP_COMPOSITE:
        return "composite";
    }
    return "?";
}

void gen_emit_wrapped(gen_sb *sb, const char *indent, const char *head, const char *const *args,
                      int n, const char *tail)
{
    size_t width = strlen(indent) + strlen(head) + strlen(tail);

    for (int i = 0; i < n; i++)
        width += strlen(args[i]) + (i > 0 ? 2 : 0);
    gen_sb_printf(sb, "%s%s", indent, head);
    for (int i = 0; i < n; i++) {
        if (i > 0 && width > 100)
            gen_sb_printf(sb, ",\n%*s", (int)(strlen(indent) + strlen(head)), "");
        else if (i > 0)
            gen_sb_puts(sb, ", ");
        gen_sb_puts(sb, args[i]);
    }
    gen_sb_printf(sb, "%s\n", tail);
}

char *gen_take_with_ops_includes(const gen_model *model, int own, gen_sb *sb)
{
    bool *used = gen_xcalloc((size_t)model->n_sections + 1, sizeof(bool));
    const char *text = sb->buf != NULL ? sb->buf : "";
    const char *mark = strstr(text, GEN_OPS_INCLUDES);
    gen_sb out = {0};

    if (own >= 0)
        used[own] = true;
    /* Every yg_<cname>( of a public op in the text names its section. */
    for (const char *p = strstr(text, "yg_"); p != NULL; p = strstr(p + 1, "yg_")) {
        if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
            continue;
        const char *e = p + 3;
        while (isalnum((unsigned char)*e) || *e == '_')
            e++;
        if (*e != '(')
            continue;
        char *name = gen_xstrndup(p + 3, (size_t)(e - p - 3));
        const gen_op *op = gen_model_find_cname(model, name);
        if (op != NULL && op->section >= 0)
            used[op->section] = true;
        free(name);
    }
    if (mark == NULL) {
        free(used);
        return gen_sb_take(sb);
    }
    gen_sb_putn(&out, text, (size_t)(mark - text));
    for (int s = 0; s < model->n_sections; s++)
        if (used[s])
            gen_sb_printf(&out, "#include \"yagrad/ops_%s.h\"\n", model->sections[s].name);
    gen_sb_puts(&out, mark + strlen(GEN_OPS_INCLUDES));
    free(used);
    gen_sb_free(sb);
    return gen_sb_take(&out);
}

/* The list items of a default "[1, 2]" (brackets stripped), or the single
 * number d repeated n times for "int[2] stride=1".  Caller frees. */
char *gen_default_list(const char *d, int n, bool as_bool, int *count)
{
    gen_sb sb = {0};
    *count = 0;
    if (d[0] != '[') {
        for (int i = 0; i < n; i++)
            gen_sb_printf(&sb, "%s%s", i > 0 ? ", " : "", d);
        *count = n;
        return gen_sb_take(&sb);
    }
    const char *p = d + 1;
    while (*p != '\0' && *p != ']') {
        while (*p == ' ')
            p++;
        size_t len = strcspn(p, ",]");
        while (len > 0 && p[len - 1] == ' ')
            len--;
        if (len == 0)
            break;
        char *item = gen_xstrndup(p, len);
        if (as_bool)
            gen_sb_printf(&sb, "%s%s", *count > 0 ? ", " : "",
                          strcmp(item, "True") == 0 ? "true" : "false");
        else
            gen_sb_printf(&sb, "%s%s", *count > 0 ? ", " : "", item);
        free(item);
        (*count)++;
        p += strcspn(p, ",]");
        if (*p == ',')
            p++;
    }
    return gen_sb_take(&sb);
}

void gen_op_params_kernel(const gen_op *op, gen_params *p)
{
    int k = 0;
    gen_op_params(op, p);
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (a->enum_id > 0) {
            free(p->decls[k]);
            p->decls[k] = gen_xprintf("int64_t %s", a->name);
        }
        k += gen_arg_has_len(a) ? 2 : 1;
    }
}

void gen_op_params_impl(const gen_op *op, gen_params *p)
{
    int k = op->schema.n_returns;

    gen_op_params_kernel(op, p);
    for (int i = 0; i < k; i++) {
        char *name = gen_return_cname(op, i);
        free(p->decls[p->n - k + i]);
        p->decls[p->n - k + i] = gen_xprintf("yg_tensor *%s", name);
        free(name);
    }
}
