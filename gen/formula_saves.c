/*
 * formula_saves.c - the save analysis of a derivative formula: walks its
 * libclang AST (built by formula_unit.c), rejects what the lowering cannot
 * express (arithmetic on tensors, subscripts other than grads[i] and
 * results[i], unsupported constructs) and records what the backward node
 * keeps of each argument or output it reads.
 *
 * The AST says exactly how a formula reads a value: a tensor used only
 * inside the metadata helpers sizes(), numel(), dtype() or size(x, d)
 * needs only its sizes, numel or dtype saved, not the tensor, and
 * list_sizes(tensors, dim) keeps each item's size along dim.  The saves
 * are then ordered by argument (gen__sort_saves) so the node's struct fields
 * follow the op's signature rather than formula order.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <clang-c/Index.h>

#include "formula_int.h"
#include "gen.h"

/* ---- save inference ---- */

void gen__formula_error_at(gen_formula_ctx *fc, CXCursor c, const char *msg, const char *name)
{
    gen_error_in(fc->d->op->full_name, gen__cursor_loc(c, fc->f->loc, fc->expr_offset), msg, name);
    fc->fp->failed = true;
}

void gen__formula_errorf(gen_formula_ctx *fc, CXCursor c, const char *fmt, ...)
{
    gen_sb sb = {0};
    va_list ap;

    va_start(ap, fmt);
    gen_sb_vprintf(&sb, fmt, ap);
    va_end(ap);
    gen__formula_error_at(fc, c, "%s", sb.buf);
    gen_sb_free(&sb);
}

int gen__arg_index(const gen_op *op, const char *name)
{
    for (int i = 0; i < op->schema.n_args; i++)
        if (strcmp(op->schema.args[i].name, name) == 0)
            return i;
    return -1;
}

/* Records that the formula reads arg (an argument, or output output_nr
 * when output_nr >= 0: "result", "result1"...) as kind. */
static void add_save(gen_formula_ctx *fc, CXCursor at, const char *arg, gen_save_kind kind,
                     int output_nr)
{
    const gen_deriv *d = fc->d;
    gen_backward_plan *bp = fc->bp;
    int index = output_nr >= 0 ? -1 : gen__arg_index(d->op, arg);
    char *field = kind == GEN_SAVE_SIZES || kind == GEN_SAVE_LIST_SIZES
                      ? gen_xprintf("%s_sizes", arg)
                  : kind == GEN_SAVE_NUMEL ? gen_xprintf("%s_numel", arg)
                  : kind == GEN_SAVE_DTYPE ? gen_xprintf("%s_dtype", arg)
                  : kind == GEN_SAVE_DEVICE ? gen_xprintf("%s_device", arg)
                                           : gen_xstrdup(arg);

    for (int i = 0; i < bp->n_saves; i++) {
        gen_save *s = &bp->saves[i];
        if (strcmp(s->field, field) != 0)
            continue;
        if (s->kind != kind || strcmp(s->arg, arg) != 0)
            gen__formula_error_at(fc, at,
                                  "saved value '%s' would clash with an argument of that name",
                                  field);
        s->used_by |= fc->edges;
        free(field);
        return;
    }
    /* In-place ops: `self` in a formula is its value before the kernel
     * wrote it, so the node saves a copy taken before (emit_ops_c.c). */
    bool old_value = d->op->form == GEN_FORM_INPLACE && index == 0 && kind == GEN_SAVE_TENSOR;
    if (old_value) {
        const gen_op *clone = gen_model_find_cname(fc->model, "clone");
        if (clone == NULL || clone->schema.n_args != 1 || clone->schema.n_returns != 1 ||
            !gen_arg_is_tensor(&clone->schema.args[0]) || clone->schema.args[0].nullable) {
            gen__formula_error_at(fc, at,
                                  "this formula reads the value '%s' had before the in-place op "
                                  "wrote it, which is saved as a copy made by clone(Tensor self) "
                                  "-> Tensor; declare that op",
                                  arg);
            free(field);
            return;
        }
    }
    bp->saves = gen_xrealloc(bp->saves, (size_t)(bp->n_saves + 1) * sizeof(gen_save));
    bp->saves[bp->n_saves++] = (gen_save){.field = field,
                                        .arg = gen_xstrdup(arg),
                                        .arg_index = index,
                                        .output_nr = output_nr,
                                        .kind = kind,
                                        .used_by = fc->edges,
                                        .old_value = old_value};
}

/* list_sizes(tensors, dim) (call) in a formula: the node keeps each
 * item's size along dim, taken at record time, not the items.  dim must
 * name an int argument of the op. */
static void save_list_sizes(gen_formula_ctx *fc, CXCursor at, CXCursor call, const char *arg)
{
    CXCursor dim = clang_getNullCursor();
    char *dname = NULL;
    int index = -1;

    if (clang_Cursor_getNumArguments(call) == 2)
        dim = gen__cursor_strip(clang_Cursor_getArgument(call, 1));
    if (!clang_Cursor_isNull(dim) && clang_getCursorKind(dim) == CXCursor_DeclRefExpr) {
        dname = gen__cursor_name(dim);
        index = gen__arg_index(fc->d->op, dname);
    }
    if (index < 0 || !gen_arg_is_int(&fc->d->op->schema.args[index]) ||
        fc->d->op->schema.args[index].nullable) {
        gen__formula_error_at(fc, clang_Cursor_isNull(dim) ? at : dim,
                              "list_sizes(%s, dim) takes the name of an int argument of the op as "
                              "dim",
                              arg);
        free(dname);
        return;
    }
    add_save(fc, at, arg, GEN_SAVE_LIST_SIZES, -1);
    for (int i = 0; i < fc->bp->n_saves; i++)
        if (fc->bp->saves[i].kind == GEN_SAVE_LIST_SIZES && strcmp(fc->bp->saves[i].arg, arg) == 0 &&
            fc->bp->saves[i].at == NULL)
            fc->bp->saves[i].at = gen_xstrdup(dname);
    free(dname);
}

/* What dtype(x), size(x, d), device(x) and device_index(x) expand to in
 * the unit (formula_prelude in formula_unit.c). */
const char gen__dtype_helper[] = "yg__dtype_of";
const char gen__size_helper[] = "yg__size_of";
const char gen__device_helper[] = "yg__device_of";
const char gen__device_index_helper[] = "yg__device_index_of";

bool gen__is_call_to(CXCursor c, const char *name)
{
    if (clang_getCursorKind(c) != CXCursor_CallExpr)
        return false;
    char *n = gen__cursor_name(c);
    bool r = strcmp(n, name) == 0;
    free(n);
    return r;
}

/* The C local holding grads[i] ("grad", "grad1"...) or results[i]
 * ("result", "result1"...) in generated code.  Caller frees. */
char *gen__output_local(const char *which, int i)
{
    return i == 0 ? gen_xstrdup(which) : gen_xprintf("%s%d", which, i);
}

/* grads[i] / results[i]: the gradient or value of output i.  True with
 * *which = "grad" or "result" and *index = i when c is such a subscript
 * with a constant index in range; a bad index, or the gradient of an
 * output that is not differentiable, is reported (has_error) and false
 * returned. */
bool gen__indexed_output(gen_formula_ctx *fc, CXCursor c, const char **which, int *index)
{
    gen_kids k = gen__cursor_children(c);
    bool ok = false;
    const gen_deriv *d = fc->d;
    int n_returns = d->op->schema.n_returns;

    if (k.n == 2) {
        CXCursor base = gen__cursor_strip(k.c[0]);
        char *name =
            clang_getCursorKind(base) == CXCursor_DeclRefExpr ? gen__cursor_name(base) : NULL;
        if (name != NULL && (strcmp(name, "grads") == 0 || strcmp(name, "results") == 0)) {
            CXEvalResult ev = clang_Cursor_Evaluate(k.c[1]);
            bool is_int = ev != NULL && clang_EvalResult_getKind(ev) == CXEval_Int;
            long long i = is_int ? clang_EvalResult_getAsLongLong(ev) : -1;
            if (ev != NULL)
                clang_EvalResult_dispose(ev);
            gen_loc loc = gen__cursor_loc(k.c[1], fc->f->loc, fc->expr_offset);
            if (i < 0 || i >= n_returns) {
                gen_error_in(d->op->full_name, loc,
                             "%s[] needs a constant index from 0 to %d (the op has %d output%s)",
                             name, n_returns - 1, n_returns, n_returns == 1 ? "" : "s");
                fc->fp->failed = true;
            } else if (name[0] == 'g' && !d->output_diff[i]) {
                gen_error_in(d->op->full_name, loc,
                             "grads[%lld] is the gradient of an output that is not "
                             "differentiable (output_differentiability), so it is never "
                             "defined",
                             i);
                fc->fp->failed = true;
            } else {
                *which = name[0] == 'g' ? "grad" : "result";
                *index = (int)i;
                ok = true;
            }
        }
        free(name);
    }
    free(k.c);
    return ok;
}

/* The d of size(x, d) is an integer expression (int arguments, integer
 * literals): clang would quietly truncate a float or Scalar to long. */
static bool check_size_dim(gen_formula_ctx *fc, CXCursor dim)
{
    CXType t = clang_getCanonicalType(clang_getCursorType(dim));

    /* the integer types, _Bool (3) excluded */
    if (t.kind >= CXType_Char_U && t.kind <= CXType_Int128)
        return true;
    CXString sp = clang_getTypeSpelling(clang_getCursorType(dim));
    gen__formula_errorf(fc, dim,
                        "size(x, d) takes an integer d (an int argument or literal), not '%s'",
                        clang_getCString(sp));
    clang_disposeString(sp);
    return false;
}

/* The special names a formula may read (grad_input_mask, grad, grads,
 * result, results) where they are refused or need nothing saved: true
 * when name (read at c, under parent) was one of those cases, whether
 * accepted or reported. */
static bool infer_special_name(gen_formula_ctx *fc, CXCursor c, CXCursor parent, const char *name)
{
    int n_returns = fc->d->op->schema.n_returns;

    if (strcmp(name, "grad_input_mask") == 0) {
        fc->reads_mask = true;
        if (fc->n_members < 2)
            gen__formula_error_at(fc, c,
                                  "'%s' exists only in a formula shared by several inputs "
                                  "('self, other: f(...)'): one entry per input of the key",
                                  name);
    } else if (gen_returns_list(fc->d->op) &&
               (strcmp(name, "grad") == 0 || strcmp(name, "result") == 0 ||
                strcmp(name, "results") == 0)) {
        gen__formula_error_at(fc, c,
                              "'%s' is not defined for an op returning Tensor[]: its formulas "
                              "pass grads (the list of output gradients) whole to a Tensor[] "
                              "argument",
                              name);
    } else if (strcmp(name, "grads") == 0 && gen_returns_list(fc->d->op)) {
        /* the output gradients as one list: nothing to save */
        fc->bp->reads_grad_list = true;
    } else if ((strcmp(name, "grad") == 0 || strcmp(name, "result") == 0) && n_returns > 1) {
        gen__formula_error_at(fc, c,
                              "'%s' is ambiguous for an op with several outputs: write "
                              "grads[i] or results[i] for output i",
                              name);
    } else if (strcmp(name, "grad") == 0 &&
               (gen__is_call_to(parent, gen__size_helper) || gen__is_call_to(parent, "sizes") ||
                gen__is_call_to(parent, "numel"))) {
        /* The node saves no metadata of grad (it runs with grad). */
        const char *helper = gen__is_call_to(parent, "sizes")   ? "sizes"
                             : gen__is_call_to(parent, "numel") ? "numel"
                                                                : "size";
        gen__formula_errorf(fc, c,
                            "%s() takes a Tensor argument of the op or result, not 'grad' (it "
                            "has the sizes of result: write %s(result%s))",
                            helper, helper, strcmp(helper, "size") == 0 ? ", d" : "");
    } else if (strcmp(name, "grad") == 0) {
        /* the incoming gradient: nothing to save */
        fc->fp->grads_read |= 1;
        fc->bp->grads_used |= 1;
    } else {
        return false;
    }
    return true;
}

/* result, or the Tensor argument index, read at c under parent: saves
 * the tensor, or only the sizes, numel, dtype or device that the
 * metadata helper around it needs. */
static void infer_tensor_read(gen_formula_ctx *fc, CXCursor c, CXCursor parent, const char *name,
                              int index)
{
    /* size(x, d) keeps x's sizes and reads one at backward time. */
    bool size_of = gen__is_call_to(parent, gen__size_helper);
    bool device_of = gen__is_call_to(parent, gen__device_helper) ||
                     gen__is_call_to(parent, gen__device_index_helper);
    gen_save_kind sk = gen__is_call_to(parent, "sizes") || size_of ? GEN_SAVE_SIZES
                       : gen__is_call_to(parent, "numel")          ? GEN_SAVE_NUMEL
                       : gen__is_call_to(parent, gen__dtype_helper) ? GEN_SAVE_DTYPE
                       : device_of                                 ? GEN_SAVE_DEVICE
                                                                   : GEN_SAVE_TENSOR;
    if ((sk == GEN_SAVE_DTYPE || sk == GEN_SAVE_DEVICE || size_of) && index >= 0 &&
        fc->d->op->schema.args[index].nullable)
        gen__formula_errorf(fc, c,
                            "%s() of '%s', a Tensor? argument that may be NULL (None), is "
                            "not supported",
                            size_of ? "size" : sk == GEN_SAVE_DEVICE ? "device" : "dtype",
                            name);
    else
        add_save(fc, c, name, sk, index >= 0 ? -1 : 0);
}

/* result or an argument of the op (index, or -1), read at c under
 * parent: records what the node saves of it, or reports a type that
 * formulas cannot read. */
static void infer_arg_name(gen_formula_ctx *fc, CXCursor c, CXCursor parent, const char *name,
                           int index)
{
    const gen_arg *a = index >= 0 ? &fc->d->op->schema.args[index] : NULL;

    if (strcmp(name, "result") == 0 || (a != NULL && gen_arg_is_tensor(a))) {
        infer_tensor_read(fc, c, parent, name, index);
    } else if (a != NULL && gen_arg_is_tensor_list(a)) {
        if (gen__is_call_to(parent, "list_sizes"))
            save_list_sizes(fc, c, parent, name);
        else
            add_save(fc, c, name, GEN_SAVE_TENSOR_LIST, -1);
    } else if (a != NULL && !gen__formula_readable(a)) {
        gen__formula_error_at(fc, c,
                              "formulas cannot read '%s' yet: its type is not one of "
                              "Tensor, Tensor[], int, int?, int[], float, float?, bool, "
                              "Scalar, Scalar?, ScalarType and ScalarType?",
                              name);
    } else if (a != NULL) {
        add_save(fc, c, name, gen_arg_is_int_list(a) ? GEN_SAVE_INT_LIST : GEN_SAVE_VALUE, -1);
    }
}

/* grads[i] or results[i] at c (under parent): grads[i] marks output i's
 * gradient read, results[i] saves output i; anything else subscripted,
 * or such a subscript inside a metadata helper, is reported. */
static void infer_subscript(gen_formula_ctx *fc, CXCursor c, CXCursor parent)
{
    const char *which = NULL;
    int i = 0;

    if (gen_returns_list(fc->d->op)) {
        gen__formula_error_at(fc, c,
                              "an op returning Tensor[] has no grads[i] or results[i]%s: its "
                              "formulas pass grads whole to a Tensor[] argument",
                              "");
        return;
    }
    if (gen__indexed_output(fc, c, &which, &i)) {
        if (gen__is_call_to(parent, "sizes") || gen__is_call_to(parent, "numel")) {
            gen__formula_error_at(fc, c,
                                  "sizes() and numel() take a Tensor argument by name, not "
                                  "grads[i] or results[i]%s",
                                  "");
        } else if (gen__is_call_to(parent, gen__size_helper)) {
            gen__formula_error_at(fc, c,
                                  "size() takes a Tensor argument by name or result, not "
                                  "grads[i] or results[i]%s",
                                  "");
        } else if (gen__is_call_to(parent, gen__dtype_helper)) {
            gen__formula_error_at(fc, c,
                                  "dtype() takes a Tensor argument by name, not grads[i] or "
                                  "results[i]%s",
                                  "");
        } else if (strcmp(which, "grad") == 0) {
            fc->fp->grads_read |= (uint64_t)1 << i;
            fc->bp->grads_used |= (uint64_t)1 << i;
        } else {
            char *local = gen__output_local("result", i);
            add_save(fc, c, local, GEN_SAVE_TENSOR, i);
            free(local);
        }
        return;
    }
    if (!fc->fp->failed)
        gen__formula_error_at(fc, c, "subscripts apply only to grads[i] and results[i]%s", "");
}

/* Whether the operator at c has a Tensor operand or result (formulas
 * must call an op instead). */
static bool is_tensor_operator(CXCursor c)
{
    gen_kids k = gen__cursor_children(c);
    bool tensor = gen__is_tensor_type(clang_getCursorType(c));

    for (unsigned i = 0; i < k.n; i++)
        tensor |= gen__is_tensor_type(clang_getCursorType(k.c[i]));
    free(k.c);
    return tensor;
}

/* Walks the formula: records saves, rejects arithmetic on tensors and
 * constructs the lowering does not know. */
void gen__formula_infer(gen_formula_ctx *fc, CXCursor c, CXCursor parent)
{
    enum CXCursorKind kind = clang_getCursorKind(c);

    switch (kind) {
    case CXCursor_DeclRefExpr: {
        CXCursor ref = clang_getCursorReferenced(c);
        if (clang_getCursorKind(ref) != CXCursor_ParmDecl)
            break;
        char *name = gen__cursor_name(c);
        if (!infer_special_name(fc, c, parent, name))
            infer_arg_name(fc, c, parent, name, gen__arg_index(fc->d->op, name));
        free(name);
        break;
    }
    case CXCursor_ArraySubscriptExpr:
        infer_subscript(fc, c, parent);
        return;
    case CXCursor_BinaryOperator:
    case CXCursor_UnaryOperator:
    case CXCursor_CompoundAssignOperator:
    case CXCursor_ConditionalOperator:
        if (is_tensor_operator(c)) {
            gen__formula_error_at(fc, c,
                                  "operators do not apply to Tensor values in formulas%s; call "
                                  "an op such as add, sub, mul, div or neg",
                                  "");
            return;
        }
        break;
    case CXCursor_CallExpr:
        if (gen__is_call_to(c, gen__size_helper) && clang_Cursor_getNumArguments(c) == 2 &&
            !check_size_dim(fc, gen__cursor_strip(clang_Cursor_getArgument(c, 1))))
            return;
        break;
    case CXCursor_UnexposedExpr:
    case CXCursor_ParenExpr:
    case CXCursor_IntegerLiteral:
    case CXCursor_FloatingLiteral:
    case CXCursor_CStyleCastExpr:
        break;
    default: {
        CXString ks = clang_getCursorKindSpelling(kind);
        gen__formula_error_at(fc, c, "unsupported construct in a formula (%s)",
                              clang_getCString(ks));
        clang_disposeString(ks);
        return;
    }
    }
    gen_kids k = gen__cursor_children(c);
    for (unsigned i = 0; i < k.n; i++)
        gen__formula_infer(fc, k.c[i], gen__cursor_is_transparent(c) ? parent : c);
    free(k.c);
}

/* Whether formulas can read (and nodes save) an argument of a's type. */
bool gen__formula_readable(const gen_arg *a)
{
    return gen_type_of(a)->formula_readable;
}

/* Orders a node's saved values by argument (outputs last, in order), then
 * kind, so struct fields follow the signature rather than formula order. */
void gen__sort_saves(const gen_deriv *d, gen_backward_plan *bp)
{
    for (int i = 1; i < bp->n_saves; i++) {
        gen_save s = bp->saves[i];
        int key = s.arg_index < 0 ? d->op->schema.n_args + s.output_nr : s.arg_index;
        int j = i;
        while (j > 0) {
            const gen_save *p = &bp->saves[j - 1];
            int pkey = p->arg_index < 0 ? d->op->schema.n_args + p->output_nr : p->arg_index;
            if (pkey < key || (pkey == key && p->kind <= s.kind))
                break;
            bp->saves[j] = bp->saves[j - 1];
            j--;
        }
        bp->saves[j] = s;
    }
}

gen_formula_plan *gen__member_plan(const gen_formula_ctx *fc, int m)
{
    return &fc->bp->formulas[fc->members[m] - fc->d->formulas];
}
