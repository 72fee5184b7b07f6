/*
 * formula_graph_grad.c - lowers a derivative formula, once formula_lower.c
 * has lowered it for the eager backward node, a second time: to C that
 * builds the formula as IR (runtime/jit/autodiff/graph_grad.h) in a backward graph.
 * Same AST, same walk order, so the graph computes what the eager node
 * computes.  Every op call becomes
 *     n = yg__df_op(s, "mul.Scalar", 1);
 *     yg__df_in(s, n, <tensor argument>);
 *     yg__df_float(s, n, "other", <scalar expression>);
 *     yg_ir_value *mul_scalar_tmp0 = yg__df_out(s, n, 0);
 * with nested calls first; tensors of the forward node are read with
 * yg__df_input / yg__df_output / yg__df_grad, metadata from its static
 * types (yg__df_sizes, yg__df_numel, ...).  What the IR cannot express
 * is a located error that names the `graph_grad: not_implemented("why")`
 * way out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clang-c/Index.h>

#include "formula_int.h"
#include "gen.h"

static const char *const ind = "        ";

int gen__tensor_ordinal(const gen_op *op, const char *name)
{
    int ord = 0;

    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (!gen_arg_is_input(a))
            continue;
        if (strcmp(a->name, name) == 0)
            return ord;
        ord++;
    }
    return -1;
}

char *gen__df_slot(const gen_deriv *d, const char *name)
{
    int ord = gen__tensor_ordinal(d->op, name);

    if (ord >= 0)
        return gen_xprintf("%d", ord);
    if (strcmp(name, "result") == 0 || strcmp(name, "grad") == 0)
        return gen_xstrdup("YG_DF_OUT(0)");
    for (int i = 1; i < d->op->schema.n_returns; i++) {
        char *r = gen_xprintf("result%d", i);
        bool match = strcmp(r, name) == 0;
        free(r);
        if (match)
            return gen_xprintf("YG_DF_OUT(%d)", i);
    }
    return NULL;
}

static void fail(gen_formula_ctx *fc, CXCursor c, const char *what)
{
    gen__formula_errorf(fc, c,
                        "%s has no graph form; build it from ops, or mark the entry "
                        "`graph_grad: not_implemented(\"why\")`",
                        what);
}

static char *sym_tensor(gen_formula_ctx *fc, CXCursor c);

/* The name of a DeclRefExpr (caller frees), NULL for anything else. */
static char *ref_name(CXCursor c)
{
    c = gen__cursor_strip(c);
    return clang_getCursorKind(c) == CXCursor_DeclRefExpr ? gen__cursor_name(c) : NULL;
}

/* A forward tensor named in the formula, as a df value expression. */
static char *sym_named(gen_formula_ctx *fc, CXCursor c, const char *name)
{
    if (strcmp(name, "grad") == 0)
        return gen_xstrdup("yg__df_grad(s, 0)");
    if (strcmp(name, "result") == 0)
        return gen_xstrdup("yg__df_output(s, 0)");
    int ord = gen__tensor_ordinal(fc->d->op, name);
    int index = gen__arg_index(fc->d->op, name);
    if (ord >= 0 && gen_arg_is_tensor(&fc->d->op->schema.args[index]))
        return gen_xprintf("yg__df_input(s, %d)", ord);
    fail(fc, c, "this tensor reference");
    return gen_xstrdup("NULL");
}

/* An attribute a formula passes as a metadata helper of a forward value
 * x (sizes(x), dtype(x)), and the df call that records it. */
typedef struct meta_attr {
    const char *helper; /* the call in the formula unit */
    const char *df_fn;  /* records it: df_fn(s, n, "<attribute>", <x's slot>) */
    const char *what;   /* names it when x has no slot */
} meta_attr;

static const meta_attr sizes_attr = {"sizes", "yg__df_sizes", "sizes() of this value"};
static const meta_attr dtype_attr = {gen__dtype_helper, "yg__df_dtype_attr",
                                     "dtype() of this value"};

/* When argument a (of parameter p) is the call m->helper(x): appends
 * its df call, or fails when x is no forward value, and returns true;
 * false when a is no such call. */
static bool sym_meta_attr(gen_formula_ctx *fc, CXCursor a, const gen_arg *p, const meta_attr *m,
                          gen_sb *out)
{
    CXCursor sa = gen__cursor_strip(a);

    if (!gen__is_call_to(sa, m->helper) || clang_Cursor_getNumArguments(sa) != 1)
        return false;
    char *x = ref_name(clang_Cursor_getArgument(sa, 0));
    char *slot = x != NULL ? gen__df_slot(fc->d, x) : NULL;
    if (slot == NULL)
        fail(fc, a, m->what);
    else
        gen_sb_printf(out, "%s%s(s, n, \"%s\", %s);\n", ind, m->df_fn, p->name, slot);
    free(slot);
    free(x);
    return true;
}

/* A Tensor[] argument a (name: what it names, or NULL): the output
 * gradients (grads) or a Tensor[] input of the forward op. */
static void sym_tensor_list_arg(gen_formula_ctx *fc, CXCursor a, const char *name, gen_sb *out)
{
    const gen_op *fop = fc->d->op;

    if (name != NULL && strcmp(name, "grads") == 0)
        gen_sb_printf(out, "%syg__df_in_grads(s, n);\n", ind);
    else if (name != NULL && gen__tensor_ordinal(fop, name) >= 0)
        gen_sb_printf(out, "%syg__df_in_list(s, n, %d);\n", ind, gen__tensor_ordinal(fop, name));
    else
        fail(fc, a, "this Tensor[] argument");
}

/* An int[] attribute a of parameter p (name: what it names, or NULL):
 * sizes(x), list_sizes(x, dim) or an int[] argument of the forward op. */
static void sym_int_list_arg(gen_formula_ctx *fc, CXCursor a, const gen_arg *p, const char *name,
                             gen_sb *out)
{
    CXCursor sa = gen__cursor_strip(a);
    const gen_op *fop = fc->d->op;

    if (sym_meta_attr(fc, a, p, &sizes_attr, out))
        return;
    if (gen__is_call_to(sa, "list_sizes") && clang_Cursor_getNumArguments(sa) == 2) {
        char *x = ref_name(clang_Cursor_getArgument(sa, 0));
        int ord = x != NULL ? gen__tensor_ordinal(fop, x) : -1;
        char *dim = gen__lower_scalar(fc, clang_Cursor_getArgument(sa, 1));
        if (ord < 0)
            fail(fc, a, "list_sizes() of this value");
        else
            gen_sb_printf(out, "%syg__df_list_sizes(s, n, \"%s\", %d, %s);\n", ind, p->name, ord,
                          dim);
        free(dim);
        free(x);
    } else if (name != NULL && gen__arg_index(fop, name) >= 0) {
        gen_sb_printf(out, "%syg__df_ints(s, n, \"%s\", %s.items, %s.len);\n", ind, p->name, name,
                      name);
    } else {
        fail(fc, a, "this int[] argument");
    }
}

/* A bool[] attribute a of parameter p: only grad_input_mask, recorded
 * with the tensor ordinals of the key's inputs. */
static void sym_mask_arg(gen_formula_ctx *fc, CXCursor a, const gen_arg *p, const char *name,
                         gen_sb *out)
{
    if (name == NULL || strcmp(name, "grad_input_mask") != 0) {
        fail(fc, a, "this bool[] argument");
        return;
    }
    gen_sb ords = {0};
    for (int m = 0; m < fc->n_members; m++)
        gen_sb_printf(&ords, "%s%d", m > 0 ? ", " : "",
                      gen__tensor_ordinal(fc->d->op, fc->members[m]->input));
    gen_sb_printf(out, "%syg__df_mask(s, n, \"%s\", (const int[]){%s}, %d);\n", ind, p->name,
                  ords.buf, fc->n_members);
    gen_sb_free(&ords);
}

/* A ScalarType attribute a of parameter p: dtype(x) or a ScalarType
 * (ScalarType?: when given) argument of the forward op. */
static void sym_dtype_arg(gen_formula_ctx *fc, CXCursor a, const gen_arg *p, const char *name,
                          gen_sb *out)
{
    const gen_op *fop = fc->d->op;

    if (sym_meta_attr(fc, a, p, &dtype_attr, out))
        return;
    if (name != NULL && gen__arg_index(fop, name) >= 0) {
        if (fop->schema.args[gen__arg_index(fop, name)].nullable)
            gen_sb_printf(out, "%sif (%s != NULL)\n%s    yg__df_int(s, n, \"%s\", *%s);\n", ind,
                          name, ind, p->name, name);
        else
            gen_sb_printf(out, "%syg__df_int(s, n, \"%s\", %s);\n", ind, p->name, name);
    } else {
        fail(fc, a, "this ScalarType argument");
    }
}

/* An int, bool, float or Scalar attribute a of parameter p: an optional
 * one passes on an optional argument of the op (set when given); an
 * enum is recorded by name, as the tracer records it. */
static void sym_scalar_arg(gen_formula_ctx *fc, CXCursor a, const gen_arg *p, const char *name,
                           gen_sb *out)
{
    const gen_op *fop = fc->d->op;

    if (p->nullable) {
        int index = name != NULL ? gen__arg_index(fop, name) : -1;
        if (index < 0 || !fop->schema.args[index].nullable || p->enum_id > 0) {
            fail(fc, a, "an optional scalar argument that is not one of the op's");
            return;
        }
        gen_sb_printf(out, "%sif (%s != NULL)\n%s    yg__df_%s(s, n, \"%s\", *%s);\n", ind, name,
                      ind, gen_arg_is_int(p) ? "int" : "float", p->name, name);
        return;
    }
    char *text = gen__lower_scalar(fc, a);
    bool is_int = gen_arg_is_int(p) || p->type == GEN_T_BOOL;
    if (p->enum_id > 0)
        gen_sb_printf(out, "%syg__df_str(s, n, \"%s\", yg_%s_name(%s));\n", ind, p->name,
                      gen_arg_enum(p)->cname, text);
    else
        gen_sb_printf(out, "%syg__df_%s(s, n, \"%s\", %s);\n", ind, is_int ? "int" : "float",
                      p->name, text);
    free(text);
}

/* Appends one argument of a call to node n: an input or an attribute. */
static void sym_arg(gen_formula_ctx *fc, CXCursor a, const gen_arg *p, gen_sb *out)
{
    char *name = ref_name(a);

    switch (p->type) {
    case GEN_T_TENSOR: {
        char *v = sym_tensor(fc, a);
        gen_sb_printf(out, "%syg__df_in(s, n, %s);\n", ind, v);
        free(v);
        break;
    }
    case GEN_T_TENSOR_LIST:
        sym_tensor_list_arg(fc, a, name, out);
        break;
    case GEN_T_INT_LIST:
        sym_int_list_arg(fc, a, p, name, out);
        break;
    case GEN_T_BOOL_LIST:
        sym_mask_arg(fc, a, p, name, out);
        break;
    case GEN_T_SCALAR_TYPE:
        sym_dtype_arg(fc, a, p, name, out);
        break;
    case GEN_T_INT:
    case GEN_T_BOOL:
    case GEN_T_FLOAT:
    case GEN_T_SCALAR:
        sym_scalar_arg(fc, a, p, name, out);
        break;
    case GEN_T_STR: {
        char *text = gen__lower_scalar(fc, a);
        gen_sb_printf(out, "%syg__df_str(s, n, \"%s\", %s);\n", ind, p->name, text);
        free(text);
        break;
    }
    default:
        fail(fc, a, "an argument of this type");
        break;
    }
    free(name);
}

/* Emits the node of call c (its arguments first); returns its kind's op.
 * n_outputs is the C expression of the node's output count. */
static const gen_op *sym_call(gen_formula_ctx *fc, CXCursor c, const char *n_outputs)
{
    char *cname = clang_getCursorKind(c) == CXCursor_CallExpr ? gen__cursor_name(c) : NULL;
    const gen_op *op = cname != NULL ? gen_model_find_cname(fc->model, cname) : NULL;
    int n = clang_Cursor_getNumArguments(c);

    free(cname);
    if (op == NULL || n != op->schema.n_args) {
        fail(fc, c, "this expression");
        return NULL;
    }
    /* Arguments are lowered before the node: nested calls append their
     * nodes first (and reuse `n`), so the node's own lines come last. */
    gen_sb lines = {0};
    for (int i = 0; i < n; i++)
        sym_arg(fc, clang_Cursor_getArgument(c, (unsigned)i), &op->schema.args[i], &lines);
    char *count = n_outputs != NULL ? gen_xstrdup(n_outputs)
                                    : gen_xprintf("%d", op->schema.n_returns);
    gen_sb_printf(&fc->code, "%sn = yg__df_op(s, \"%s\", %s);\n", ind, op->full_name, count);
    gen_sb_puts(&fc->code, lines.buf != NULL ? lines.buf : "");
    gen_sb_free(&lines);
    free(count);
    return op;
}

/* A Tensor-valued expression: returns the C expression of its df value
 * (a temporary for a call). */
static char *sym_tensor(gen_formula_ctx *fc, CXCursor c)
{
    c = gen__cursor_strip(c);
    enum CXCursorKind kind = clang_getCursorKind(c);
    const char *which = NULL;
    int index = 0;

    if (kind == CXCursor_ArraySubscriptExpr && gen__indexed_output(fc, c, &which, &index))
        return strcmp(which, "grad") == 0 ? gen_xprintf("yg__df_grad(s, %d)", index)
                                          : gen_xprintf("yg__df_output(s, %d)", index);
    if (kind == CXCursor_DeclRefExpr) {
        char *name = gen__cursor_name(c);
        char *r = sym_named(fc, c, name);
        free(name);
        return r;
    }
    if (kind != CXCursor_CallExpr) {
        fail(fc, c, "this expression");
        return gen_xstrdup("NULL");
    }
    /* The nested calls of this call may reuse `n`; the value is read out
     * right after the node is made. */
    char *cname = gen__cursor_name(c);
    const gen_op *op = sym_call(fc, c, NULL);
    if (op == NULL) {
        free(cname);
        return gen_xstrdup("NULL");
    }
    if (op->schema.n_returns != 1 || gen_returns_list(op)) {
        fail(fc, c, "a nested call to an op returning several tensors");
        free(cname);
        return gen_xstrdup("NULL");
    }
    char *tmp = gen_xprintf("%s_tmp%d", cname, fc->sp->n_df_temps++);
    gen_sb_printf(&fc->code, "%syg_ir_value *%s = yg__df_out(s, n, 0);\n", ind, tmp);
    free(cname);
    return tmp;
}

void gen__formula_lower_graph_grad(gen_formula_ctx *fc, CXCursor expr)
{
    const gen_op *fop = fc->d->op;
    CXCursor c = gen__cursor_strip(expr);

    fc->graph_grad = true;
    if (fc->n_members > 1) {
        if (sym_call(fc, c, NULL) != NULL)
            for (int m = 0; m < fc->n_members; m++)
                gen_sb_printf(&fc->code, "%syg__df_set_grad(s, %d, yg__df_out(s, n, %d));\n",
                              ind, gen__tensor_ordinal(fop, fc->members[m]->input), m);
    } else if (fc->f->list) {
        int ord = gen__tensor_ordinal(fop, fc->f->input);
        char *count = gen_xprintf("yg__df_list_len(s, %d)", ord);
        const gen_op *op = sym_call(fc, c, count);
        free(count);
        if (op != NULL && !gen_returns_list(op))
            fail(fc, c, "a Tensor[] gradient from an op that does not return Tensor[]");
        else if (op != NULL)
            gen_sb_printf(&fc->code, "%syg__df_set_list_grads(s, %d, n);\n", ind, ord);
    } else {
        char *v = sym_tensor(fc, c);
        gen_sb_printf(&fc->code, "%syg__df_set_grad(s, %d, %s);\n", ind,
                      gen__tensor_ordinal(fop, fc->f->input), v);
        free(v);
    }
    fc->graph_grad = false;
}
