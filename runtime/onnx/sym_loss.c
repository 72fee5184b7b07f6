/*
 * sym_loss.c - symbolics of the losses (for graphs that report a loss,
 * e.g. an evaluation graph), and of atan2 and remainder, which opset 17
 * has no operator for.
 *
 * nll_loss and cross_entropy with class indices are ONNX's own
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (the same
 * weighting, ignore_index and reductions); cross_entropy with class
 * probabilities, and the elementwise losses, are compositions ending in
 * the reduction: none, ReduceMean or ReduceSum over every element.
 * binary_cross_entropy clamps each log at -100, as yagrad does, and the
 * logits form uses yagrad's overflow-free formula.
 */
#include "jit/ir/boxing.h"
#include "onnx/onnx_gen.h"
#include "onnx/onnx_int.h"
#include "yagrad/enums.h"

#include <math.h>

static bool is_none(const yg_ir_node *node, int64_t i) {
    return i < 0 || i >= node->n_inputs || node->inputs[i]->type.kind == YG_IR_TYPE_NONE;
}

static yg_status dtype_of(yg_onnx_ctx *cx, const yg_ir_node *node, int64_t i, int32_t *out) {
    yg_ir_type t = yg__onnx_input_type(node, i);
    *out = t.kind == YG_IR_TYPE_TENSOR ? t.dtype : YG_IR_UNKNOWN;
    if (*out == YG_IR_UNKNOWN)
        return yg__onnx_unsupported(cx, node, "the dtype of input %lld is unknown", (long long)i);
    return YG_OK;
}

static const char *in(yg_onnx_ctx *cx, const yg_ir_node *node, int64_t i) {
    return yg__onnx_input_name_of(cx, node, i);
}

/* A 0-d constant of dtype d. */
static yg_status k(yg_onnx_ctx *cx, int32_t d, double v, const char **out) {
    return yg__onnx_const_scalar(cx, d, v, out);
}

static yg_status bin(yg_onnx_ctx *cx,
                     const yg_ir_node *node,
                     const char *op,
                     const char *a,
                     const char *b,
                     const char **out) {
    return yg__onnx_binary(cx, node, op, a, b, NULL, out);
}

static yg_status un(yg_onnx_ctx *cx,
                    const yg_ir_node *node,
                    const char *op,
                    const char *a,
                    const char **out) {
    return yg__onnx_unary(cx, node, op, a, NULL, out);
}

/* The node's reduction of per-element losses: Identity, ReduceMean or
 * ReduceSum over every element, into the node's output. */
static yg_status reduce_loss(yg_onnx_ctx *cx, const yg_ir_node *node, const char *losses) {
    int64_t r = YG_REDUCTION_MEAN;
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(
        yg__box_enum(node, "reduction", yg_reduction_name, &(const int64_t){YG_REDUCTION_MEAN}, &r));
    const char *out = yg__onnx_output_name_of(node, 0);
    if (r == YG_REDUCTION_NONE)
        return yg__onnx_unary(cx, node, "Identity", losses, out, NULL);
    YG_RETURN_IF_ERROR(
        yg__onnx_node_new(cx, node, r == YG_REDUCTION_MEAN ? "ReduceMean" : "ReduceSum", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, losses));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "keepdims", 0));
    return yg__onnx_output_named(cx, o, out);
}

/* losses * weight (node's input i) when it is given. */
static yg_status weighted(yg_onnx_ctx *cx, const yg_ir_node *node, int64_t i, const char **losses) {
    if (is_none(node, i))
        return YG_OK;
    return bin(cx, node, "Mul", *losses, in(cx, node, i), losses);
}

yg_status yg__onnx_sym_mse_loss(yg_onnx_ctx *cx, const yg_ir_node *node) {
    const char *d = NULL, *sq = NULL;
    YG_RETURN_IF_ERROR(bin(cx, node, "Sub", in(cx, node, 0), in(cx, node, 1), &d));
    YG_RETURN_IF_ERROR(bin(cx, node, "Mul", d, d, &sq));
    return reduce_loss(cx, node, sq);
}

yg_status yg__onnx_sym_l1_loss(yg_onnx_ctx *cx, const yg_ir_node *node) {
    const char *d = NULL, *a = NULL;
    YG_RETURN_IF_ERROR(bin(cx, node, "Sub", in(cx, node, 0), in(cx, node, 1), &d));
    YG_RETURN_IF_ERROR(un(cx, node, "Abs", d, &a));
    return reduce_loss(cx, node, a);
}

/* |d| < beta ? 0.5 d^2 / beta : |d| - 0.5 beta (beta 0: |d|). */
yg_status yg__onnx_sym_smooth_l1_loss(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int32_t t;
    double beta = 1;
    const char *d = NULL, *a = NULL, *b = NULL, *c = NULL, *sq = NULL, *q = NULL, *lin = NULL,
               *less = NULL, *l = NULL;
    YG_RETURN_IF_ERROR(dtype_of(cx, node, 0, &t));
    YG_RETURN_IF_ERROR(yg__box_double(node, "beta", &(const double){1}, &beta));
    YG_RETURN_IF_ERROR(bin(cx, node, "Sub", in(cx, node, 0), in(cx, node, 1), &d));
    YG_RETURN_IF_ERROR(un(cx, node, "Abs", d, &a));
    if (beta == 0)
        return reduce_loss(cx, node, a);
    YG_RETURN_IF_ERROR(k(cx, t, beta, &b));
    YG_RETURN_IF_ERROR(k(cx, t, 0.5 / beta, &c));
    YG_RETURN_IF_ERROR(bin(cx, node, "Mul", d, d, &sq));
    YG_RETURN_IF_ERROR(bin(cx, node, "Mul", sq, c, &q));
    YG_RETURN_IF_ERROR(k(cx, t, 0.5 * beta, &c));
    YG_RETURN_IF_ERROR(bin(cx, node, "Sub", a, c, &lin));
    YG_RETURN_IF_ERROR(bin(cx, node, "Less", a, b, &less));
    {
        yg_onnx_node *o = NULL;
        YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Where", &o));
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, less));
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, q));
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, lin));
        YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "huber", &l));
    }
    return reduce_loss(cx, node, l);
}

/* max(log(x), -100). */
static yg_status clamped_log(yg_onnx_ctx *cx,
                             const yg_ir_node *node,
                             int32_t t,
                             const char *x,
                             const char **out) {
    const char *l = NULL, *floor_ = NULL;
    YG_RETURN_IF_ERROR(un(cx, node, "Log", x, &l));
    YG_RETURN_IF_ERROR(k(cx, t, -100.0, &floor_));
    return bin(cx, node, "Max", l, floor_, out);
}

/* -weight (y log p + (1 - y) log(1 - p)), each log clamped at -100. */
yg_status yg__onnx_sym_binary_cross_entropy(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int32_t t;
    const char *p = in(cx, node, 0), *y = in(cx, node, 1), *one = NULL, *lp = NULL, *q = NULL,
               *lq = NULL, *ny = NULL, *a = NULL, *b = NULL, *s = NULL, *l = NULL;
    YG_RETURN_IF_ERROR(dtype_of(cx, node, 0, &t));
    YG_RETURN_IF_ERROR(k(cx, t, 1.0, &one));
    YG_RETURN_IF_ERROR(clamped_log(cx, node, t, p, &lp));
    YG_RETURN_IF_ERROR(bin(cx, node, "Sub", one, p, &q));
    YG_RETURN_IF_ERROR(clamped_log(cx, node, t, q, &lq));
    YG_RETURN_IF_ERROR(bin(cx, node, "Sub", one, y, &ny));
    YG_RETURN_IF_ERROR(bin(cx, node, "Mul", y, lp, &a));
    YG_RETURN_IF_ERROR(bin(cx, node, "Mul", ny, lq, &b));
    YG_RETURN_IF_ERROR(bin(cx, node, "Add", a, b, &s));
    YG_RETURN_IF_ERROR(un(cx, node, "Neg", s, &l));
    YG_RETURN_IF_ERROR(weighted(cx, node, 2, &l));
    return reduce_loss(cx, node, l);
}

/* (1 - y) x + (1 + (pos_weight - 1) y) (log(1 + exp(-|x|)) + max(-x, 0)),
 * times weight. */
yg_status yg__onnx_sym_binary_cross_entropy_with_logits(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int32_t t;
    const char *x = in(cx, node, 0), *y = in(cx, node, 1), *one = NULL, *ny = NULL, *a = NULL,
               *ax = NULL, *nax = NULL, *sp = NULL, *nx = NULL, *rl = NULL, *lse = NULL,
               *lw = NULL, *b = NULL, *l = NULL;
    YG_RETURN_IF_ERROR(dtype_of(cx, node, 0, &t));
    YG_RETURN_IF_ERROR(k(cx, t, 1.0, &one));
    YG_RETURN_IF_ERROR(bin(cx, node, "Sub", one, y, &ny));
    YG_RETURN_IF_ERROR(bin(cx, node, "Mul", ny, x, &a));
    YG_RETURN_IF_ERROR(un(cx, node, "Abs", x, &ax));
    YG_RETURN_IF_ERROR(un(cx, node, "Neg", ax, &nax));
    YG_RETURN_IF_ERROR(un(cx, node, "Softplus", nax, &sp));
    YG_RETURN_IF_ERROR(un(cx, node, "Neg", x, &nx));
    YG_RETURN_IF_ERROR(un(cx, node, "Relu", nx, &rl));
    YG_RETURN_IF_ERROR(bin(cx, node, "Add", sp, rl, &lse));
    if (!is_none(node, 3)) {
        const char *pm = NULL, *py = NULL;
        YG_RETURN_IF_ERROR(bin(cx, node, "Sub", in(cx, node, 3), one, &pm));
        YG_RETURN_IF_ERROR(bin(cx, node, "Mul", pm, y, &py));
        YG_RETURN_IF_ERROR(bin(cx, node, "Add", one, py, &lw));
        YG_RETURN_IF_ERROR(bin(cx, node, "Mul", lw, lse, &b));
    } else {
        b = lse;
    }
    YG_RETURN_IF_ERROR(bin(cx, node, "Add", a, b, &l));
    YG_RETURN_IF_ERROR(weighted(cx, node, 2, &l));
    return reduce_loss(cx, node, l);
}

/* NegativeLogLikelihoodLoss or SoftmaxCrossEntropyLoss with the node's
 * reduction and ignore_index; self must be batched ([N, C, ...]). */
static yg_status onnx_loss(yg_onnx_ctx *cx, const yg_ir_node *node, const char *op_type) {
    int64_t r = YG_REDUCTION_MEAN, ignore = -100;
    yg_ir_type t = yg__onnx_input_type(node, 0);
    yg_onnx_node *o = NULL;
    if (t.kind != YG_IR_TYPE_TENSOR || t.ndim == YG_IR_UNKNOWN || t.ndim < 2)
        return yg__onnx_unsupported(cx, node, "%s needs a batched self [N, C, ...]", op_type);
    YG_RETURN_IF_ERROR(
        yg__box_enum(node, "reduction", yg_reduction_name, &(const int64_t){YG_REDUCTION_MEAN}, &r));
    YG_RETURN_IF_ERROR(yg__box_int(node, "ignore_index", &(const int64_t){-100}, &ignore));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, op_type, &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 1));
    if (!is_none(node, 2))
        YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 2));
    YG_RETURN_IF_ERROR(yg__onnx_attr_str(cx, o, "reduction", yg_reduction_name(r)));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "ignore_index", ignore));
    return yg__onnx_output(cx, o, node, 0);
}

yg_status yg__onnx_sym_nll_loss(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return onnx_loss(cx, node, "NegativeLogLikelihoodLoss");
}

/* Class indices: SoftmaxCrossEntropyLoss.  Class probabilities (a float
 * target): -sum over the classes of target LogSoftmax(self), per sample
 * (times weight per class), then the reduction (mean over the samples). */
yg_status yg__onnx_sym_cross_entropy(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int32_t td;
    const char *ls = NULL, *p = NULL, *s = NULL, *l = NULL;
    yg_ir_type t = yg__onnx_input_type(node, 0);
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(dtype_of(cx, node, 1, &td));
    if (td == YG_INT64 || td == YG_INT32)
        return onnx_loss(cx, node, "SoftmaxCrossEntropyLoss");
    if (t.kind != YG_IR_TYPE_TENSOR || t.ndim == YG_IR_UNKNOWN)
        return yg__onnx_unsupported(cx, node, "the rank of self is unknown");
    int64_t axis = t.ndim == 1 ? 0 : 1;
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "LogSoftmax", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "axis", axis));
    YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "logp", &ls));
    YG_RETURN_IF_ERROR(bin(cx, node, "Mul", ls, in(cx, node, 1), &p));
    if (!is_none(node, 2)) {
        /* weight [C] along the class dim: [C, 1, ...] for spatial dims */
        const char *w = in(cx, node, 2);
        int64_t lead[YG_MAX_DIMS];
        int64_t n = t.ndim - axis - 1;
        for (int64_t i = 0; i < n; i++)
            lead[i] = i + 1;
        if (n > 0) {
            const char *axes = NULL;
            YG_RETURN_IF_ERROR(yg__onnx_const_ints(cx, lead, n, &axes));
            YG_RETURN_IF_ERROR(bin(cx, node, "Unsqueeze", w, axes, &w));
        }
        YG_RETURN_IF_ERROR(bin(cx, node, "Mul", p, w, &p));
    }
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "ReduceSum", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, p));
    YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, &axis, 1));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "keepdims", 0));
    YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "sum", &s));
    YG_RETURN_IF_ERROR(un(cx, node, "Neg", s, &l));
    return reduce_loss(cx, node, l);
}

/* ---- atan2 and remainder ---- */

/* atan(y / x), moved by +-pi where x < 0 (by the sign of y). */
yg_status yg__onnx_sym_atan2(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int32_t t;
    const char *y = in(cx, node, 0), *x = in(cx, node, 1), *q = NULL, *a = NULL, *zero = NULL,
               *pi = NULL, *npi = NULL, *ypos = NULL, *adj = NULL, *moved = NULL, *xneg = NULL;
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(dtype_of(cx, node, 0, &t));
    YG_RETURN_IF_ERROR(bin(cx, node, "Div", y, x, &q));
    YG_RETURN_IF_ERROR(un(cx, node, "Atan", q, &a));
    YG_RETURN_IF_ERROR(k(cx, t, 0.0, &zero));
    YG_RETURN_IF_ERROR(k(cx, t, M_PI, &pi));
    YG_RETURN_IF_ERROR(k(cx, t, -M_PI, &npi));
    YG_RETURN_IF_ERROR(bin(cx, node, "GreaterOrEqual", y, zero, &ypos));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Where", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, ypos));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, pi));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, npi));
    YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "adj", &adj));
    YG_RETURN_IF_ERROR(bin(cx, node, "Add", a, adj, &moved));
    YG_RETURN_IF_ERROR(bin(cx, node, "Less", x, zero, &xneg));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Where", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, xneg));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, moved));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, a));
    return yg__onnx_outputs(cx, o, node);
}

/* Python's remainder (the divisor's sign): a - floor(a / b) b for floats,
 * Mod (fmod=0, the divisor's sign too) for integers. */
static yg_status python_mod(yg_onnx_ctx *cx, const yg_ir_node *node, const char *b) {
    int32_t t;
    const char *a = in(cx, node, 0), *q = NULL, *f = NULL, *m = NULL;
    YG_RETURN_IF_ERROR(dtype_of(cx, node, 0, &t));
    if (t == YG_INT64 || t == YG_INT32) {
        yg_onnx_node *o = NULL;
        YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Mod", &o));
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, a));
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, b));
        YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "fmod", 0));
        return yg__onnx_outputs(cx, o, node);
    }
    YG_RETURN_IF_ERROR(bin(cx, node, "Div", a, b, &q));
    YG_RETURN_IF_ERROR(un(cx, node, "Floor", q, &f));
    YG_RETURN_IF_ERROR(bin(cx, node, "Mul", f, b, &m));
    return yg__onnx_binary(cx, node, "Sub", a, m, yg__onnx_output_name_of(node, 0), NULL);
}

yg_status yg__onnx_sym_remainder(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return python_mod(cx, node, in(cx, node, 1));
}

yg_status yg__onnx_sym_remainder_scalar(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int32_t t;
    double other = 0;
    const char *b = NULL;
    YG_RETURN_IF_ERROR(dtype_of(cx, node, 0, &t));
    YG_RETURN_IF_ERROR(yg__box_double(node, "other", NULL, &other));
    YG_RETURN_IF_ERROR(k(cx, t, other, &b));
    return python_mod(cx, node, b);
}
