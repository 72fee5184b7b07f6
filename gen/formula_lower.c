/*
 * formula_lower.c - lowers a derivative formula, once formula_saves.c has
 * accepted it and recorded its saves, to the straight-line C of a backward
 * node: every nested op call becomes a temporary computed in evaluation
 * order, each followed by `if (st != YG_OK) goto out;`; a shared formula's
 * call writes every input's gradient (&grad_self, &grad_other).  Scalar
 * subexpressions are copied token by token from the formula's text with
 * argument names turned into the node's saved fields.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clang-c/Index.h>

#include "formula_int.h"
#include "gen.h"

/* ---- lowering ---- */

typedef struct strv {
    char **v;
    int n;
} strv;

static void strv_push(strv *s, char *str)
{
    s->v = gen_xrealloc(s->v, (size_t)(s->n + 1) * sizeof(char *));
    s->v[s->n++] = str;
}

static void strv_free(strv *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

static const char *const indent8 = "        ";

/* Emits `st = yg_<cname>(args..., &target0, &target1...);` (wrapped one
 * argument per line past 100 columns) and its error check. */
static void emit_call_to(gen_sb *sb, const char *cname, const strv *args,
                         const char *const *targets, int n_targets)
{
    gen_sb line = {0};

    gen_sb_printf(&line, "%sst = yg_%s(", indent8, cname);
    size_t open = line.len;
    size_t width = open + 1;
    for (int i = 0; i < args->n; i++)
        width += strlen(args->v[i]) + 2;
    for (int i = 0; i < n_targets; i++)
        width += strlen(targets[i]) + 3;
    for (int i = 0; i < args->n + n_targets; i++) {
        if (i < args->n)
            gen_sb_puts(&line, args->v[i]);
        else
            gen_sb_printf(&line, "&%s", targets[i - args->n]);
        if (i == args->n + n_targets - 1)
            gen_sb_puts(&line, ");\n");
        else if (width > 100)
            gen_sb_printf(&line, ",\n%*s", (int)open, "");
        else
            gen_sb_puts(&line, ", ");
    }
    gen_sb_puts(sb, line.buf);
    gen_sb_printf(sb, "%sif (st != YG_OK)\n%s    goto out;\n", indent8, indent8);
    gen_sb_free(&line);
}

static void emit_call(gen_sb *sb, const char *cname, const strv *args, const char *target)
{
    emit_call_to(sb, cname, args, &target, 1);
}

static char *new_temp(gen_formula_ctx *fc, const char *cname)
{
    gen_backward_plan *bp = fc->bp;
    char *name = gen_xprintf("%s_tmp%d", cname, bp->n_temps);

    bp->temps = gen_xrealloc(bp->temps, (size_t)(bp->n_temps + 1) * sizeof(char *));
    bp->temps[bp->n_temps++] = gen_xstrdup(name);
    return name;
}

static bool token_is(CXTranslationUnit tu, CXToken tok, const char *text)
{
    CXString sp = clang_getTokenSpelling(tu, tok);
    bool r = strcmp(clang_getCString(sp), text) == 0;

    clang_disposeString(sp);
    return r;
}

static char *lower_tokens(gen_formula_ctx *fc, CXToken *toks, unsigned from, unsigned to);

/* The parts of size(x, d) at toks[i] (the `size` token): x's name
 * (caller frees; NULL when there is none), the index of the ',' (0 when
 * there is none) and, through *close, the index of the call's ')'. */
static char *scan_size_call(gen_formula_ctx *fc, CXToken *toks, unsigned i, unsigned to,
                            unsigned *comma_out, unsigned *close)
{
    unsigned comma = 0, depth = 0, j = i + 1;
    char *x = NULL;

    for (; j < to; j++) {
        if (token_is(fc->tu, toks[j], "("))
            depth++;
        else if (token_is(fc->tu, toks[j], ")") && --depth == 0)
            break;
        else if (depth == 1 && comma == 0 && token_is(fc->tu, toks[j], ","))
            comma = j;
        else if (depth >= 1 && comma == 0 && x == NULL &&
                 clang_getTokenKind(toks[j]) == CXToken_Identifier) {
            CXString sp = clang_getTokenSpelling(fc->tu, toks[j]);
            x = gen_xstrdup(clang_getCString(sp));
            clang_disposeString(sp);
        }
    }
    *close = j;
    *comma_out = comma;
    return x;
}

/* size(x, d) at toks[i] (the `size` token) becomes a local read from x's
 * saved sizes with a range check before the call that uses it:
 *     int64_t self_size = 0;
 *     st = yg__saved_sizes_at(&node->self_sizes, "self", node->dim, &self_size);
 * Returns the local; *close is the index of the call's ')'. */
static char *lower_size_call(gen_formula_ctx *fc, CXToken *toks, unsigned i, unsigned to,
                             unsigned *close)
{
    unsigned comma = 0;
    char *x = scan_size_call(fc, toks, i, to, &comma, close);
    unsigned j = *close;

    if (j >= to || comma == 0 || x == NULL) {
        free(x);
        return NULL;
    }
    char *dim = lower_tokens(fc, toks, comma + 1, j);
    /* The same size read twice in one formula reuses its local. */
    char *key = gen_xprintf("%s|%s", x, dim);
    for (int k = 0; k < fc->n_size_locals; k++) {
        if (strcmp(fc->size_reads[2 * k], key) == 0) {
            free(key);
            free(dim);
            free(x);
            return gen_xstrdup(fc->size_reads[2 * k + 1]);
        }
    }
    /* self_size, then self_size1... for other dims of self */
    int same_x = 0;
    size_t xlen = strlen(x);
    for (int k = 0; k < fc->n_size_locals; k++)
        same_x += strncmp(fc->size_reads[2 * k], x, xlen) == 0 &&
                  fc->size_reads[2 * k][xlen] == '|';
    char *local = same_x == 0 ? gen_xprintf("%s_size", x) : gen_xprintf("%s_size%d", x, same_x);
    fc->size_reads = gen_xrealloc(fc->size_reads,
                                  (size_t)(fc->n_size_locals + 1) * 2 * sizeof(char *));
    fc->size_reads[2 * fc->n_size_locals] = key;
    fc->size_reads[2 * fc->n_size_locals + 1] = gen_xstrdup(local);
    fc->n_size_locals++;
    gen_sb_printf(&fc->code, "%sint64_t %s = 0;\n", indent8, local);
    char *head = gen_xstrdup("st = yg__saved_sizes_at(");
    char *a0 = gen_xprintf("&node->%s_sizes", x);
    char *a1 = gen_xprintf("\"%s\"", x);
    char *a3 = gen_xprintf("&%s", local);
    const char *args[] = {a0, a1, dim, a3};
    gen_emit_wrapped(&fc->code, indent8, head, args, 4, ");");
    gen_sb_printf(&fc->code, "%sif (st != YG_OK)\n%s    goto out;\n", indent8, indent8);
    free(head);
    free(a0);
    free(a1);
    free(a3);
    free(dim);
    free(x);
    return local;
}

/* size(x, d) at toks[i] in a graph derivative: x's static size,
 * `yg__df_size(s, <slot of x>, <d>)`.  *close is the index of the ')'. */
static char *lower_size_graph_grad(gen_formula_ctx *fc, CXToken *toks, unsigned i, unsigned to,
                                 unsigned *close)
{
    unsigned comma = 0;
    char *x = scan_size_call(fc, toks, i, to, &comma, close);
    unsigned j = *close;
    char *slot = x != NULL ? gen__df_slot(fc->d, x) : NULL;
    free(x);
    if (j >= to || comma == 0 || slot == NULL) {
        free(slot);
        return NULL;
    }
    char *dim = lower_tokens(fc, toks, comma + 1, j);
    char *r = gen_xprintf("yg__df_size(s, %s, %s)", slot, dim);
    free(slot);
    free(dim);
    return r;
}

/* The text of toks[from, to) (a scalar expression in the formula) with
 * argument names turned into node fields (alpha -> node->alpha,
 * numel(self) -> node->self_numel, size(self, d) -> a checked local). */
static char *lower_tokens(gen_formula_ctx *fc, CXToken *toks, unsigned from, unsigned to)
{
    gen_sb sb = {0};

    if (from >= to)
        return gen_xstrdup("");
    size_t pos = gen__loc_offset(clang_getTokenLocation(fc->tu, toks[from]));
    for (unsigned i = from; i < to; i++) {
        size_t off = gen__loc_offset(clang_getTokenLocation(fc->tu, toks[i]));
        CXString sp = clang_getTokenSpelling(fc->tu, toks[i]);
        const char *tok = clang_getCString(sp);
        gen_sb_putn(&sb, fc->f->expr + (pos - fc->expr_offset), off - pos);
        pos = off + strlen(tok);
        int index = gen__arg_index(fc->d->op, tok);
        bool ident = clang_getTokenKind(toks[i]) == CXToken_Identifier;
        if (ident && strcmp(tok, "numel") == 0 && i + 3 < to) {
            CXString a = clang_getTokenSpelling(fc->tu, toks[i + 2]);
            CXString b = clang_getTokenSpelling(fc->tu, toks[i + 3]);
            char *slot = fc->graph_grad ? gen__df_slot(fc->d, clang_getCString(a)) : NULL;
            if (fc->graph_grad)
                gen_sb_printf(&sb, "yg__df_numel(s, %s)", slot != NULL ? slot : "0");
            else
                gen_sb_printf(&sb, "node->%s_numel", clang_getCString(a));
            free(slot);
            pos = gen__loc_offset(clang_getTokenLocation(fc->tu, toks[i + 3])) +
                  strlen(clang_getCString(b));
            clang_disposeString(a);
            clang_disposeString(b);
            i += 3;
        } else if (ident && strcmp(tok, "size") == 0 && i + 1 < to &&
                   token_is(fc->tu, toks[i + 1], "(")) {
            unsigned close = i;
            char *local = fc->graph_grad ? lower_size_graph_grad(fc, toks, i, to, &close)
                                       : lower_size_call(fc, toks, i, to, &close);
            if (local == NULL) {
                gen__formula_error_at(fc, fc->cursor, "cannot lower this size() call%s", "");
                local = gen_xstrdup("0");
            } else {
                pos = gen__loc_offset(clang_getTokenLocation(fc->tu, toks[close])) + 1;
            }
            gen_sb_puts(&sb, local);
            free(local);
            i = close;
        } else if (ident && strcmp(tok, "device_index") == 0 && !fc->graph_grad && i + 3 < to) {
            /* device_index(x): x's saved device index (grad's own) */
            CXString a = clang_getTokenSpelling(fc->tu, toks[i + 2]);
            CXString b = clang_getTokenSpelling(fc->tu, toks[i + 3]);
            if (strcmp(clang_getCString(a), "grad") == 0)
                gen_sb_puts(&sb, "yg_tensor_device_index(grad)");
            else
                gen_sb_printf(&sb, "node->%s_device_index", clang_getCString(a));
            pos = gen__loc_offset(clang_getTokenLocation(fc->tu, toks[i + 3])) +
                  strlen(clang_getCString(b));
            clang_disposeString(a);
            clang_disposeString(b);
            i += 3;
        } else if (ident && index >= 0) {
            gen_sb_printf(&sb, fc->graph_grad ? "%s" : "node->%s", tok);
        } else {
            gen_sb_puts(&sb, tok);
        }
        clang_disposeString(sp);
    }
    return gen_sb_take(&sb);
}

/* The text of a scalar subexpression with argument names turned into node
 * fields (lower_tokens). */
char *gen__lower_scalar(gen_formula_ctx *fc, CXCursor c)
{
    CXSourceRange range = clang_getCursorExtent(c);
    size_t start = gen__loc_offset(clang_getRangeStart(range));
    size_t end = gen__loc_offset(clang_getRangeEnd(range));
    size_t len = strlen(fc->f->expr);
    CXToken *toks = NULL;
    unsigned n = 0;

    if (start < fc->expr_offset || end > fc->expr_offset + len || start > end) {
        gen__formula_error_at(fc, c, "cannot lower this scalar expression%s", "");
        return gen_xstrdup("0");
    }
    /* The range from the text's offsets: its start may lie in the
     * expansion of a helper macro (size(...)), which clang_tokenize would
     * read in the macro's definition. */
    CXFile file = NULL;
    clang_getFileLocation(clang_getRangeStart(range), &file, NULL, NULL, NULL);
    range = clang_getRange(clang_getLocationForOffset(fc->tu, file, (unsigned)start),
                           clang_getLocationForOffset(fc->tu, file, (unsigned)end));
    clang_tokenize(fc->tu, range, &toks, &n);
    /* clang_tokenize may return a token past the range's end. */
    unsigned to = 0;
    while (to < n && gen__loc_offset(clang_getTokenLocation(fc->tu, toks[to])) < end)
        to++;
    fc->cursor = c;
    char *r = lower_tokens(fc, toks, 0, to);
    clang_disposeTokens(fc->tu, toks, n);
    return r;
}

/* An IntArrayRef argument as two C arguments (items, length). */
static void lower_int_list(gen_formula_ctx *fc, CXCursor c, strv *args)
{
    c = gen__cursor_strip(c);
    if (gen__is_call_to(c, "list_sizes") && clang_Cursor_getNumArguments(c) == 2) {
        CXCursor a = gen__cursor_strip(clang_Cursor_getArgument(c, 0));
        if (clang_getCursorKind(a) == CXCursor_DeclRefExpr) {
            char *name = gen__cursor_name(a);
            strv_push(args, gen_xprintf("node->%s_sizes.items", name));
            strv_push(args, gen_xprintf("node->%s_sizes.len", name));
            free(name);
            return;
        }
    }
    if (gen__is_call_to(c, "sizes") && clang_Cursor_getNumArguments(c) == 1) {
        CXCursor a = gen__cursor_strip(clang_Cursor_getArgument(c, 0));
        if (clang_getCursorKind(a) == CXCursor_DeclRefExpr) {
            char *name = gen__cursor_name(a);
            strv_push(args, gen_xprintf("node->%s_sizes.sizes", name));
            strv_push(args, gen_xprintf("node->%s_sizes.ndim", name));
            free(name);
            return;
        }
    } else if (clang_getCursorKind(c) == CXCursor_DeclRefExpr) {
        char *name = gen__cursor_name(c);
        strv_push(args, gen_xprintf("node->%s.items", name));
        strv_push(args, gen_xprintf("node->%s.len", name));
        free(name);
        return;
    }
    gen__formula_error_at(fc, c,
                          "an int[] argument must be sizes(<tensor>), list_sizes(<Tensor[]>, dim) "
                          "or an int[] argument%s",
                          " of the op");
    strv_push(args, gen_xstrdup("NULL"));
    strv_push(args, gen_xstrdup("0"));
}

/* An argument for an optional scalar parameter (int?, float?, Scalar?):
 * an optional argument of the op, passed on as given (the node saved it
 * with whether it was given). */
static char *lower_optional_scalar(gen_formula_ctx *fc, CXCursor c)
{
    c = gen__cursor_strip(c);
    if (clang_getCursorKind(c) == CXCursor_DeclRefExpr) {
        char *name = gen__cursor_name(c);
        int index = gen__arg_index(fc->d->op, name);
        char *r = NULL;
        if (index >= 0 && fc->d->op->schema.args[index].nullable)
            r = gen_xprintf("node->has_%s ? &node->%s : NULL", name, name);
        free(name);
        if (r != NULL)
            return r;
    }
    gen__formula_error_at(fc, c, "an optional (int?, float?, Scalar?) parameter takes an optional "
                                 "argument of the op, passed on as it is%s",
                          "");
    return gen_xstrdup("NULL");
}

/* A ScalarType argument: dtype(<tensor>) (the node's saved <tensor>_dtype,
 * or the dtype of grad itself) or a ScalarType argument of the op (a
 * ScalarType? one as a pointer to the node's copy, or NULL when it was not
 * given).  The unit's types keep a value from reaching a parameter of the
 * other nullability. */
static char *lower_dtype(gen_formula_ctx *fc, CXCursor c)
{
    c = gen__cursor_strip(c);
    if (gen__is_call_to(c, gen__dtype_helper) && clang_Cursor_getNumArguments(c) == 1) {
        CXCursor a = gen__cursor_strip(clang_Cursor_getArgument(c, 0));
        if (clang_getCursorKind(a) == CXCursor_DeclRefExpr) {
            char *name = gen__cursor_name(a);
            char *r = strcmp(name, "grad") == 0 ? gen_xstrdup("yg_tensor_dtype(grad)")
                                                : gen_xprintf("node->%s_dtype", name);
            free(name);
            return r;
        }
    } else if (clang_getCursorKind(c) == CXCursor_DeclRefExpr) {
        char *name = gen__cursor_name(c);
        int index = gen__arg_index(fc->d->op, name);
        char *r = NULL;
        if (index >= 0 && gen_arg_is_dtype(&fc->d->op->schema.args[index]))
            r = fc->d->op->schema.args[index].nullable
                    ? gen_xprintf("node->has_%s ? &node->%s : NULL", name, name)
                    : gen_xprintf("node->%s", name);
        free(name);
        if (r != NULL)
            return r;
    }
    gen__formula_error_at(fc, c, "a ScalarType argument must be dtype(<tensor>) or a ScalarType "
                            "argument%s of the op",
                     "");
    return gen_xstrdup("0");
}

/* A Device argument: device(<tensor>), the node's saved <tensor>_device
 * (or the device of grad itself). */
static char *lower_device(gen_formula_ctx *fc, CXCursor c)
{
    c = gen__cursor_strip(c);
    if (gen__is_call_to(c, gen__device_helper) && clang_Cursor_getNumArguments(c) == 1) {
        CXCursor a = gen__cursor_strip(clang_Cursor_getArgument(c, 0));
        if (clang_getCursorKind(a) == CXCursor_DeclRefExpr) {
            char *name = gen__cursor_name(a);
            char *r = strcmp(name, "grad") == 0 ? gen_xstrdup("yg_tensor_device(grad)")
                                                : gen_xprintf("node->%s_device", name);
            free(name);
            return r;
        }
    }
    gen__formula_error_at(fc, c, "a Device argument must be device(<tensor>)%s", "");
    return gen_xstrdup("YG_CPU");
}

static void lower_args(gen_formula_ctx *fc, CXCursor c, const gen_op *op, strv *args_out);

/* A Tensor[] argument as two C arguments (items, length): grads of an op
 * returning Tensor[] (undefined ones replaced by zeros, emit_nodes.c), or
 * a saved Tensor[] / Tensor?[] argument of the op. */
static void lower_tensor_list(gen_formula_ctx *fc, CXCursor c, strv *args)
{
    c = gen__cursor_strip(c);
    if (clang_getCursorKind(c) == CXCursor_DeclRefExpr) {
        char *name = gen__cursor_name(c);
        int index = gen__arg_index(fc->d->op, name);
        if (strcmp(name, "grads") == 0 && gen_returns_list(fc->d->op)) {
            strv_push(args, gen_xstrdup("(const yg_tensor *const *)grads_defined"));
            strv_push(args, gen_xstrdup("base->n_outputs"));
            free(name);
            return;
        }
        if (index >= 0 && gen_arg_is_tensor_list(&fc->d->op->schema.args[index])) {
            strv_push(args, gen_xprintf("(const yg_tensor *const *)%s", name));
            strv_push(args, gen_xprintf("node->%s.len", name));
            free(name);
            return;
        }
        free(name);
    }
    gen__formula_error_at(fc, c,
                          "a Tensor[] argument must be grads (of an op returning Tensor[]) or a "
                          "Tensor[] argument%s of the op",
                          "");
    strv_push(args, gen_xstrdup("NULL"));
    strv_push(args, gen_xstrdup("0"));
}

/* Lowers a Tensor-valued expression.  With dest, the value is written to
 * dest as a new reference; without, returns the C expression holding it. */
static char *lower_tensor(gen_formula_ctx *fc, CXCursor c, const char *dest)
{
    c = gen__cursor_strip(c);
    enum CXCursorKind kind = clang_getCursorKind(c);

    const char *which = NULL;
    int index = 0;
    if (kind == CXCursor_ArraySubscriptExpr && gen__indexed_output(fc, c, &which, &index)) {
        char *local = gen__output_local(which, index);
        if (dest != NULL)
            gen_sb_printf(&fc->code, "%s%s = yg_retain(%s);\n", indent8, dest, local);
        return local;
    }
    if (kind == CXCursor_DeclRefExpr) {
        char *name = gen__cursor_name(c);
        if (dest != NULL)
            gen_sb_printf(&fc->code, "%s%s = yg_retain(%s);\n", indent8, dest, name);
        return name;
    }
    if (kind != CXCursor_CallExpr) {
        gen__formula_error_at(fc, c, "expected an op call or a Tensor variable here%s", "");
        return gen_xstrdup("NULL");
    }
    char *cname = gen__cursor_name(c);
    const gen_op *op = gen_model_find_cname(fc->model, cname);
    int n = clang_Cursor_getNumArguments(c);
    if (op == NULL || n != op->schema.n_args) {
        gen__formula_error_at(fc, c, "'%s' cannot be used as a Tensor-valued op here", cname);
        free(cname);
        return gen_xstrdup("NULL");
    }
    strv args = {0};
    lower_args(fc, c, op, &args);
    char *target = dest != NULL ? gen_xstrdup(dest) : new_temp(fc, cname);
    emit_call(&fc->code, cname, &args, target);
    strv_free(&args);
    free(cname);
    if (dest != NULL) {
        free(target);
        return NULL;
    }
    return target;
}

/* The C arguments of call c to op, each lowered (nested calls first). */
static void lower_args(gen_formula_ctx *fc, CXCursor c, const gen_op *op, strv *args_out)
{
    int n = clang_Cursor_getNumArguments(c);
    strv args = {0};

    for (int i = 0; i < n; i++) {
        CXCursor a = clang_Cursor_getArgument(c, (unsigned)i);
        const gen_arg *p = &op->schema.args[i];
        CXCursor sa = gen__cursor_strip(a);
        char *aname = clang_getCursorKind(sa) == CXCursor_DeclRefExpr ? gen__cursor_name(sa) : NULL;
        bool mask = aname != NULL && strcmp(aname, "grad_input_mask") == 0;
        free(aname);
        if (gen_arg_is_bool_list(p) && mask) {
            if (p->fixed_len != fc->n_members)
                gen__formula_errorf(fc, a,
                                    "grad_input_mask has one entry per input of the key (%d) but "
                                    "this parameter is bool[%d]",
                                    fc->n_members, p->fixed_len);
            strv_push(&args, gen_xstrdup("grad_input_mask"));
            continue;
        }
        if (gen_arg_is_device(&op->schema.args[i]) && !op->schema.args[i].nullable) {
            strv_push(&args, lower_device(fc, a));
            continue;
        }
        if (p->nullable &&
            (gen_arg_is_int(p) || p->type == GEN_T_FLOAT || p->type == GEN_T_SCALAR)) {
            strv_push(&args, lower_optional_scalar(fc, a));
            continue;
        }
        if (!gen__formula_readable(&op->schema.args[i])) {
            gen__formula_error_at(fc, a, "formulas cannot pass a %s argument to an op yet",
                                  gen_type_name(&op->schema.args[i]));
            strv_push(&args, gen_xstrdup("NULL"));
            continue;
        }
        switch (op->schema.args[i].type) {
        case GEN_T_TENSOR:
            strv_push(&args, lower_tensor(fc, a, NULL));
            break;
        case GEN_T_TENSOR_LIST:
            lower_tensor_list(fc, a, &args);
            break;
        case GEN_T_INT_LIST:
            lower_int_list(fc, a, &args);
            break;
        case GEN_T_SCALAR_TYPE:
            strv_push(&args, lower_dtype(fc, a));
            break;
        default:
            strv_push(&args, gen__lower_scalar(fc, a));
            break;
        }
    }
    *args_out = args;
}

/* A formula shared by the inputs of one key: one call to an op with as
 * many Tensor returns, each written to its input's gradient, after
 * grad_input_mask (whether each input's gradient is wanted, key order). */
static void lower_shared(gen_formula_ctx *fc, CXCursor c)
{
    c = gen__cursor_strip(c);
    char *cname = clang_getCursorKind(c) == CXCursor_CallExpr ? gen__cursor_name(c) : NULL;
    const gen_op *op = cname != NULL ? gen_model_find_cname(fc->model, cname) : NULL;

    if (op == NULL || op->schema.n_returns != fc->n_members ||
        clang_Cursor_getNumArguments(c) != op->schema.n_args) {
        gen__formula_errorf(fc, c,
                            "a formula shared by %d inputs must be one call to an op returning %d "
                            "Tensors",
                            fc->n_members, fc->n_members);
        free(cname);
        return;
    }
    const char **targets = gen_xcalloc((size_t)fc->n_members, sizeof(char *));
    char **mask = gen_xcalloc((size_t)fc->n_members, sizeof(char *));
    for (int i = 0; i < fc->n_members; i++) {
        targets[i] = gen__member_plan(fc, i)->grad_name;
        mask[i] = gen_xprintf("yg__node_needs_grad(base, %d)", fc->members[i]->edge);
    }
    if (fc->reads_mask) {
        char *head = gen_xprintf("bool grad_input_mask[%d] = {", fc->n_members);
        gen_emit_wrapped(&fc->code, indent8, head, (const char *const *)mask, fc->n_members,
                         "};");
        free(head);
    }
    strv args = {0};
    lower_args(fc, c, op, &args);
    emit_call_to(&fc->code, cname, &args, targets, fc->n_members);
    strv_free(&args);
    for (int i = 0; i < fc->n_members; i++)
        free(mask[i]);
    free(mask);
    free(targets);
    free(cname);
}

/* The formula of a Tensor[] input: one call to an op returning Tensor[],
 * whose items become the items' gradients (emit_nodes.c checks the
 * length). */
static void lower_list_gradient(gen_formula_ctx *fc, CXCursor c)
{
    c = gen__cursor_strip(c);
    char *cname = clang_getCursorKind(c) == CXCursor_CallExpr ? gen__cursor_name(c) : NULL;
    const gen_op *op = cname != NULL ? gen_model_find_cname(fc->model, cname) : NULL;

    if (op == NULL || !gen_returns_list(op) ||
        clang_Cursor_getNumArguments(c) != op->schema.n_args) {
        gen__formula_errorf(fc, c,
                            "the gradient of the Tensor[] argument '%s' must be one call to an op "
                            "returning Tensor[] (one gradient per item)",
                            fc->f->input);
        free(cname);
        return;
    }
    char *len = gen_xprintf("%s_len", fc->fp->grad_name);
    const char *targets[] = {fc->fp->grad_name, len};
    strv args = {0};
    lower_args(fc, c, op, &args);
    emit_call_to(&fc->code, cname, &args, targets, 2);
    strv_free(&args);
    free(len);
    free(cname);
}

/* A shared key's call writes every input's gradient, a Tensor[] input's
 * formula is one call returning Tensor[], any other formula one Tensor. */
void gen__formula_lower(gen_formula_ctx *fc, CXCursor expr)
{
    if (fc->n_members > 1)
        lower_shared(fc, expr);
    else if (fc->f->list)
        lower_list_gradient(fc, expr);
    else
        free(lower_tensor(fc, expr, fc->fp->grad_name));
}
