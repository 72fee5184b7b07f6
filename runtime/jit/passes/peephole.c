/*
 * peephole.c - local rewrites that replace a node's result by a value
 * that already exists.  Each rule below says when it fires; what it
 * leaves unused is removed by dce, which runs after it in the pipeline.
 *
 * Rules that return a view's input for a view (expand, view, reshape to
 * the same sizes; t(t(x)); transpose(transpose(x, a, b), a, b);
 * squeeze.dim(unsqueeze(x, d), d)) keep aliasing as it was: the result
 * already shared x's memory.  Rules that return x for a fresh tensor
 * (x * 1, x / 1, x + 0, x - 0, x ** 1, neg(neg(x)), and the same with a
 * constant tensor of ones or zeros) make two values share memory, so they
 * fire only in graphs without side effects, where sharing cannot be
 * observed.  The tensor-constant forms also require the result type to be
 * x's type: x's dtype known and not promoted by the constant's dtype, and
 * the constant's sizes broadcasting into x's without growing it.
 *
 * x + 0 is x for every x except -0.0, which becomes +0.0; like other
 * graph optimisers (PyTorch's peephole does the same) the rule ignores
 * the sign of a zero.
 */
#include "jit/passes/passes.h"
#include "op_ids.h"

#include <math.h>
#include <string.h>

static const yg_ir_type *type_of(const yg_ir_value *v) {
    return &v->type;
}

static const yg_ir_node *producer(const yg_ir_value *v) {
    return v->node->kind == yg__prim_param ? NULL : v->node;
}

/* expand / view / reshape whose size attribute equals the input's known
 * sizes (-1 entries match any size; view and reshape allow one). */
static yg_ir_value *same_size_view(const yg_ir_node *n, const char *attr, bool expand) {
    int64_t size[YG_MAX_DIMS];
    int32_t len = 0, minus_ones = 0;
    const yg_ir_type *t = type_of(n->inputs[0]);
    if (!yg__pass_sizes_known(t) || !yg__pass_ints_attr(n, attr, size, YG_MAX_DIMS, &len) ||
        len != t->ndim)
        return NULL;
    for (int32_t i = 0; i < len; i++) {
        if (size[i] == -1) {
            minus_ones++;
            continue;
        }
        if (size[i] != t->sizes[i])
            return NULL;
    }
    if (!expand && minus_ones > 1)
        return NULL;
    return n->inputs[0];
}

/* Wraps a dim into [0, ndim) when ndim is known; leaves it when not. */
static int64_t wrap(int64_t d, int32_t ndim) {
    return ndim > 0 && d < 0 ? d + ndim : d;
}

static yg_ir_value *double_transpose(const yg_ir_node *n) {
    const yg_ir_node *inner = producer(n->inputs[0]);
    if (yg__pass_is(n, YG_OP_t) && yg__pass_is(inner, YG_OP_t))
        return inner->inputs[0];
    if (!yg__pass_is(n, YG_OP_transpose) || !yg__pass_is(inner, YG_OP_transpose))
        return NULL;
    int32_t nd = type_of(inner->inputs[0])->ndim;
    int64_t a0 = yg__pass_int_attr(inner, "dim0", INT64_MIN),
            a1 = yg__pass_int_attr(inner, "dim1", INT64_MIN);
    int64_t b0 = yg__pass_int_attr(n, "dim0", INT64_MIN),
            b1 = yg__pass_int_attr(n, "dim1", INT64_MIN);
    if (a0 == INT64_MIN || a1 == INT64_MIN || b0 == INT64_MIN || b1 == INT64_MIN)
        return NULL;
    if (nd == YG_IR_UNKNOWN && (a0 < 0 || a1 < 0 || b0 < 0 || b1 < 0))
        return NULL;
    a0 = wrap(a0, nd);
    a1 = wrap(a1, nd);
    b0 = wrap(b0, nd);
    b1 = wrap(b1, nd);
    if ((a0 == b0 && a1 == b1) || (a0 == b1 && a1 == b0))
        return inner->inputs[0];
    return NULL;
}

static yg_ir_value *unsqueeze_squeeze(const yg_ir_node *n) {
    const yg_ir_node *inner = producer(n->inputs[0]);
    if (!yg__pass_is(n, YG_OP_squeeze_dim) || !yg__pass_is(inner, YG_OP_unsqueeze))
        return NULL;
    int32_t nd = type_of(inner->inputs[0])->ndim;
    int64_t u = yg__pass_int_attr(inner, "dim", INT64_MIN),
            s = yg__pass_int_attr(n, "dim", INT64_MIN);
    if (u == INT64_MIN || s == INT64_MIN)
        return NULL;
    if (nd == YG_IR_UNKNOWN && (u < 0 || s < 0))
        return NULL;
    if (nd != YG_IR_UNKNOWN) {
        u = wrap(u, nd + 1);
        s = wrap(s, nd + 1);
    }
    return u == s ? inner->inputs[0] : NULL;
}

/* Whether constant c combined with x (broadcast, promoted) gives x's type. */
static bool constant_keeps_type(const yg_ir_value *x, const yg_ir_value *c) {
    const yg_ir_type *tx = type_of(x);
    const yg_tensor *t = yg__ir_node_attr(c->node, "value")->u.t;
    if (tx->dtype == YG_IR_UNKNOWN ||
        (int32_t)yg__promote_types((yg_dtype)tx->dtype, t->dtype) != tx->dtype)
        return false;
    if (t->ndim == 0)
        return true;
    if (tx->ndim == YG_IR_UNKNOWN || t->ndim > tx->ndim)
        return false;
    for (int32_t i = 0; i < t->ndim; i++) {
        int64_t dx = tx->sizes[tx->ndim - t->ndim + i];
        if (t->sizes[i] != 1 && t->sizes[i] != dx)
            return false;
    }
    return true;
}

static bool attr_is(const yg_ir_node *n, const char *name, double dflt, bool has_dflt, double v) {
    double got;
    if (!yg__ir_attr_as_double(n, name, &got)) {
        if (!has_dflt)
            return false;
        got = dflt;
    }
    return got == v;
}

static bool alpha_finite(const yg_ir_node *n) {
    double alpha = 1;
    (void)yg__ir_attr_as_double(n, "alpha", &alpha);
    return isfinite(alpha);
}

/* The identity rules that make a fresh result an alias of x. */
static yg_ir_value *arithmetic_identity(const yg_ir_node *n) {
    if (yg__pass_is(n, YG_OP_mul_scalar) || yg__pass_is(n, YG_OP_div_scalar))
        return attr_is(n, "other", 0, false, 1) ? n->inputs[0] : NULL;
    if (yg__pass_is(n, YG_OP_add_scalar) || yg__pass_is(n, YG_OP_sub_scalar))
        return attr_is(n, "other", 0, false, 0) && alpha_finite(n) ? n->inputs[0] : NULL;
    if (yg__pass_is(n, YG_OP_pow_scalar))
        return attr_is(n, "exponent", 0, false, 1) ? n->inputs[0] : NULL;
    if (yg__pass_is(n, YG_OP_neg) && yg__pass_is(producer(n->inputs[0]), YG_OP_neg))
        return producer(n->inputs[0])->inputs[0];
    bool add = yg__pass_is(n, YG_OP_add), sub = yg__pass_is(n, YG_OP_sub);
    bool mul = yg__pass_is(n, YG_OP_mul), div = yg__pass_is(n, YG_OP_div);
    if (!(add || sub || mul || div))
        return NULL;
    yg_ir_value *a = n->inputs[0], *b = n->inputs[1];
    double neutral = add || sub ? 0 : 1;
    if ((add || sub) && !alpha_finite(n))
        return NULL;
    if (yg__pass_constant_all(producer(b), neutral) && constant_keeps_type(a, b))
        return a;
    /* 0 + alpha * b is b only for alpha 1; 1 * b is b. */
    bool commutes = mul || (add && attr_is(n, "alpha", 1, true, 1));
    if (commutes && yg__pass_constant_all(producer(a), neutral) && constant_keeps_type(b, a))
        return b;
    return NULL;
}

static yg_status peephole(yg_graph *g, int depth) {
    bool pure = !yg__pass_has_side_effects(g);
    for (yg_ir_node *n = g->first; n != NULL; n = n->next) {
        yg_ir_value *repl = NULL;
        if (n->op != NULL && n->n_inputs > 0 && n->n_outputs == 1) {
            if (yg__pass_is(n, YG_OP_expand))
                repl = same_size_view(n, "size", true);
            else if (yg__pass_is(n, YG_OP_view))
                repl = same_size_view(n, "size", false);
            else if (yg__pass_is(n, YG_OP_reshape))
                repl = same_size_view(n, "shape", false);
            if (repl == NULL)
                repl = double_transpose(n);
            if (repl == NULL)
                repl = unsqueeze_squeeze(n);
            if (repl == NULL && pure)
                repl = arithmetic_identity(n);
        }
        if (repl != NULL)
            YG_RETURN_IF_ERROR(yg__ir_value_replace_all_uses(n->outputs[0], repl));
        for (int32_t i = 0; i < n->n_attrs; i++) {
            if (n->attrs[i].kind == YG_IR_ATTR_GRAPH && depth < 256)
                YG_RETURN_IF_ERROR(peephole(n->attrs[i].u.g, depth + 1));
        }
    }
    return YG_OK;
}

yg_status yg_graph_peephole(yg_graph *g) {
    if (g == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "peephole: graph is NULL");
    YG_RETURN_IF_ERROR(peephole(g, 0));
    return yg__ir_check_after_pass(g, "peephole");
}
