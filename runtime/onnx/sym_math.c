/*
 * sym_math.c - symbolics of ops that opset 17 has no single operator for,
 * written as small compositions of ONNX operators: pointwise functions
 * (expm1, log1p, log2, rsqrt, trunc, the tanh gelu, rounding divisions,
 * lerp, addcmul/addcdiv, clamp with optional bounds), reductions (boolean
 * all/any, values with indices, statistics with a correction, p-norms,
 * argmax/argmin over all elements, cumsum), products (outer, baddbmm) and
 * shape ops (repeat, flip, unbind, tril/triu, scatter).
 *
 * Each composition computes what the yagrad kernel computes, in the
 * input's dtype; where ONNX cannot (integer rounding divisions, reduced
 * dims of unknown size) the export fails naming the node and why.
 * Reductions use the opset-13..17 forms (axes as an attribute, but
 * ReduceSum's as an input).
 */
#include "jit/ir/boxing.h"
#include "onnx/onnx_gen.h"
#include "onnx/onnx_int.h"
#include "yagrad/enums.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- helpers ---- */

/* The dtype of node's input i, or an export error when the graph does not
 * know it (a composition needs its constants in that dtype). */
static yg_status dtype_of(yg_onnx_ctx *cx, const yg_ir_node *node, int64_t i, int32_t *out) {
    yg_ir_type t = yg__onnx_input_type(node, i);
    *out = t.kind == YG_IR_TYPE_TENSOR ? t.dtype : YG_IR_UNKNOWN;
    if (*out == YG_IR_UNKNOWN)
        return yg__onnx_unsupported(cx, node, "the dtype of input %lld is unknown", (long long)i);
    return YG_OK;
}

static bool is_float(int32_t d) {
    return d == YG_FLOAT32 || d == YG_FLOAT64 || d == YG_FLOAT16 || d == YG_BFLOAT16;
}

/* The input's name, the output's name. */
static const char *in(yg_onnx_ctx *cx, const yg_ir_node *node, int64_t i) {
    return yg__onnx_input_name_of(cx, node, i);
}

static const char *result(const yg_ir_node *node, int64_t i) {
    return yg__onnx_output_name_of(node, i);
}

/* A fresh value op_type(x) with an int64 list as its second input (axes of
 * Unsqueeze/Squeeze, a shape, repeats), into out_name (NULL: fresh, *out). */
static yg_status with_ints(yg_onnx_ctx *cx,
                           const yg_ir_node *node,
                           const char *op_type,
                           const char *x,
                           const int64_t *v,
                           int64_t n,
                           const char *out_name,
                           const char **out) {
    const char *ints = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_const_ints(cx, v, n, &ints));
    return yg__onnx_binary(cx, node, op_type, x, ints, out_name, out);
}

/* op_type(x) reducing axes (n of them; 0: every axis) as an attribute,
 * with keepdims, into out_name or a fresh name. */
static yg_status reduce(yg_onnx_ctx *cx,
                        const yg_ir_node *node,
                        const char *op_type,
                        const char *x,
                        const int64_t *axes,
                        int64_t n,
                        bool keepdims,
                        const char *out_name,
                        const char **out) {
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, op_type, &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, x));
    if (n > 0)
        YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "axes", axes, n));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "keepdims", keepdims));
    if (out_name != NULL)
        return yg__onnx_output_named(cx, o, out_name);
    return yg__onnx_output_fresh(cx, o, node, op_type, out);
}

/* Cast(x) to dtype, into out_name or a fresh name. */
static yg_status cast_to(yg_onnx_ctx *cx,
                         const yg_ir_node *node,
                         const char *x,
                         int32_t dtype,
                         const char *out_name,
                         const char **out) {
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Cast", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, x));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "to", yg__onnx_dtype(dtype)));
    if (out_name != NULL)
        return yg__onnx_output_named(cx, o, out_name);
    return yg__onnx_output_fresh(cx, o, node, "cast", out);
}

/* x * c + y for a constant c of dtype d (c == 1: x + y). */
static yg_status scaled_add(yg_onnx_ctx *cx,
                            const yg_ir_node *node,
                            int32_t d,
                            const char *y,
                            const char *x,
                            double c,
                            const char *out_name) {
    const char *k = NULL, *cx_ = x;
    if (c != 1) {
        YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, c, &k));
        YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", x, k, NULL, &cx_));
    }
    return yg__onnx_binary(cx, node, "Add", y, cx_, out_name, NULL);
}

/* trunc(x) of a float x: sign(x) floor(|x|). */
static yg_status trunc_of(yg_onnx_ctx *cx,
                          const yg_ir_node *node,
                          const char *x,
                          const char *out_name) {
    const char *a = NULL, *f = NULL, *s = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Abs", x, NULL, &a));
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Floor", a, NULL, &f));
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Sign", x, NULL, &s));
    return yg__onnx_binary(cx, node, "Mul", s, f, out_name, NULL);
}

/* dims normalised against rank (negative counts from the end); an export
 * error when one is out of range or the rank is unknown. */
static yg_status norm_dims(yg_onnx_ctx *cx,
                           const yg_ir_node *node,
                           const int64_t *dims,
                           int64_t n,
                           int64_t *out) {
    yg_ir_type t = yg__onnx_input_type(node, 0);
    if (t.kind != YG_IR_TYPE_TENSOR || t.ndim == YG_IR_UNKNOWN)
        return yg__onnx_unsupported(cx, node, "the rank of self is unknown");
    for (int64_t i = 0; i < n; i++) {
        int64_t d = dims[i] < 0 ? dims[i] + t.ndim : dims[i];
        if (d < 0 || d >= (t.ndim > 0 ? t.ndim : 1))
            return yg__onnx_unsupported(cx, node, "dim %lld out of range", (long long)dims[i]);
        out[i] = d;
    }
    return YG_OK;
}

/* ---- pointwise ---- */

yg_status yg__onnx_sym_expm1(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int32_t d;
    const char *e = NULL, *one = NULL;
    YG_RETURN_IF_ERROR(dtype_of(cx, node, 0, &d));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, 1.0, &one));
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Exp", in(cx, node, 0), NULL, &e));
    return yg__onnx_binary(cx, node, "Sub", e, one, result(node, 0), NULL);
}

yg_status yg__onnx_sym_log1p(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int32_t d;
    const char *p = NULL, *one = NULL;
    YG_RETURN_IF_ERROR(dtype_of(cx, node, 0, &d));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, 1.0, &one));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Add", in(cx, node, 0), one, NULL, &p));
    return yg__onnx_unary(cx, node, "Log", p, result(node, 0), NULL);
}

yg_status yg__onnx_sym_log2(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int32_t d;
    const char *l = NULL, *ln2 = NULL;
    YG_RETURN_IF_ERROR(dtype_of(cx, node, 0, &d));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, M_LN2, &ln2));
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Log", in(cx, node, 0), NULL, &l));
    return yg__onnx_binary(cx, node, "Div", l, ln2, result(node, 0), NULL);
}

yg_status yg__onnx_sym_rsqrt(yg_onnx_ctx *cx, const yg_ir_node *node) {
    const char *s = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Sqrt", in(cx, node, 0), NULL, &s));
    return yg__onnx_unary(cx, node, "Reciprocal", s, result(node, 0), NULL);
}

yg_status yg__onnx_sym_trunc(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int32_t d;
    YG_RETURN_IF_ERROR(dtype_of(cx, node, 0, &d));
    if (!is_float(d))
        return yg__onnx_unary(cx, node, "Identity", in(cx, node, 0), result(node, 0), NULL);
    return trunc_of(cx, node, in(cx, node, 0), result(node, 0));
}

/* 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), yagrad's gelu_tanh. */
yg_status yg__onnx_sym_gelu_tanh(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int32_t d;
    const char *x = in(cx, node, 0), *x2 = NULL, *x3 = NULL, *inner = NULL, *t = NULL, *one = NULL,
               *half = NULL, *k = NULL, *u = NULL, *p = NULL, *hx = NULL;
    YG_RETURN_IF_ERROR(dtype_of(cx, node, 0, &d));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", x, x, NULL, &x2));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", x2, x, NULL, &x3));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, 0.044715, &k));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", x3, k, NULL, &u));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Add", x, u, NULL, &inner));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, sqrt(2.0 / M_PI), &k));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", inner, k, NULL, &u));
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Tanh", u, NULL, &t));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, 1.0, &one));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Add", t, one, NULL, &p));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, 0.5, &half));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", x, half, NULL, &hx));
    return yg__onnx_binary(cx, node, "Mul", hx, p, result(node, 0), NULL);
}

/* self / other rounded (floor, else trunc).  Floats only: ONNX's integer
 * Div already truncates, and floor of integers needs a Mod fix-up that
 * is not written. */
static yg_status rounding_div(yg_onnx_ctx *cx, const yg_ir_node *node, bool floor) {
    int32_t d;
    const char *q = NULL;
    YG_RETURN_IF_ERROR(dtype_of(cx, node, 0, &d));
    if (!is_float(d) && !floor)
        return yg__onnx_binary(cx, node, "Div", in(cx, node, 0), in(cx, node, 1), result(node, 0),
                               NULL);
    if (!is_float(d))
        return yg__onnx_unsupported(cx, node, "floor division of integers is not written");
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Div", in(cx, node, 0), in(cx, node, 1), NULL, &q));
    if (floor)
        return yg__onnx_unary(cx, node, "Floor", q, result(node, 0), NULL);
    return trunc_of(cx, node, q, result(node, 0));
}

yg_status yg__onnx_sym_div_trunc(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return rounding_div(cx, node, false);
}

yg_status yg__onnx_sym_div_floor(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return rounding_div(cx, node, true);
}

yg_status yg__onnx_sym_div_mode(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int64_t mode = 0;
    YG_RETURN_IF_ERROR(yg__box_enum(node, "rounding_mode", yg_rounding_mode_name, NULL, &mode));
    return rounding_div(cx, node, mode == YG_ROUNDING_MODE_FLOOR);
}

/* self + weight (end - self), weight input 2 or the Scalar weight. */
static yg_status lerp(yg_onnx_ctx *cx, const yg_ir_node *node, bool scalar) {
    int32_t d;
    const char *diff = NULL, *w = NULL, *step = NULL;
    YG_RETURN_IF_ERROR(dtype_of(cx, node, 0, &d));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Sub", in(cx, node, 1), in(cx, node, 0), NULL, &diff));
    if (scalar) {
        double v = 0;
        YG_RETURN_IF_ERROR(yg__box_double(node, "weight", NULL, &v));
        YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, v, &w));
    } else {
        w = in(cx, node, 2);
    }
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", diff, w, NULL, &step));
    return yg__onnx_binary(cx, node, "Add", in(cx, node, 0), step, result(node, 0), NULL);
}

yg_status yg__onnx_sym_lerp_scalar(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return lerp(cx, node, true);
}

yg_status yg__onnx_sym_lerp(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return lerp(cx, node, false);
}

/* self + value (tensor1 op tensor2). */
static yg_status addc(yg_onnx_ctx *cx, const yg_ir_node *node, const char *op_type) {
    int32_t d;
    double value = 1;
    const char *t = NULL;
    YG_RETURN_IF_ERROR(dtype_of(cx, node, 0, &d));
    YG_RETURN_IF_ERROR(yg__box_double(node, "value", &(const double){1}, &value));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, op_type, in(cx, node, 1), in(cx, node, 2), NULL, &t));
    return scaled_add(cx, node, d, in(cx, node, 0), t, value, result(node, 0));
}

yg_status yg__onnx_sym_addcmul(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return addc(cx, node, "Mul");
}

yg_status yg__onnx_sym_addcdiv(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return addc(cx, node, "Div");
}

/* Clip(self, min, max), an absent bound as ONNX's absent input. */
yg_status yg__onnx_sym_clamp_opt(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int32_t d;
    double buf[2];
    const double *b[2] = {NULL, NULL};
    const char *names[2] = {"min", "max"};
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(dtype_of(cx, node, 0, &d));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Clip", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    for (int i = 0; i < 2; i++) {
        YG_RETURN_IF_ERROR(yg__box_double_opt(node, names[i], NULL, &buf[i], &b[i]));
        if (b[i] == NULL)
            YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, ""));
        else
            YG_RETURN_IF_ERROR(yg__onnx_input_scalar(cx, o, node, 0, *b[i]));
    }
    return yg__onnx_outputs(cx, o, node);
}

/* ---- reductions ---- */

yg_status yg__onnx_sym_cumsum(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int64_t dim = 0;
    const char *axis = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_same_dtype(cx, node, 0, "CumSum"));
    YG_RETURN_IF_ERROR(yg__box_int(node, "dim", NULL, &dim));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, YG_INT64, (double)dim, &axis));
    return yg__onnx_binary(cx, node, "CumSum", in(cx, node, 0), axis, result(node, 0), NULL);
}

/* ArgMax/ArgMin over all elements: of the flattened input. */
static yg_status arg_all(yg_onnx_ctx *cx, const yg_ir_node *node, const char *op_type) {
    const char *flat = NULL;
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(with_ints(cx, node, "Reshape", in(cx, node, 0), (const int64_t[]){-1}, 1,
                                 NULL, &flat));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, op_type, &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, flat));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "axis", 0));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "keepdims", 0));
    return yg__onnx_outputs(cx, o, node);
}

yg_status yg__onnx_sym_argmax(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return arg_all(cx, node, "ArgMax");
}

yg_status yg__onnx_sym_argmin(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return arg_all(cx, node, "ArgMin");
}

/* max.dim / min.dim: the values by ReduceMax/ReduceMin, the indices by
 * ArgMax/ArgMin (the first on ties, as yagrad). */
static yg_status values_indices(yg_onnx_ctx *cx, const yg_ir_node *node, bool max) {
    int64_t dim = 0;
    bool keepdim = false;
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__box_int(node, "dim", NULL, &dim));
    YG_RETURN_IF_ERROR(yg__box_bool(node, "keepdim", &(const bool){false}, &keepdim));
    YG_RETURN_IF_ERROR(reduce(cx, node, max ? "ReduceMax" : "ReduceMin", in(cx, node, 0), &dim, 1,
                              keepdim, result(node, 0), NULL));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, max ? "ArgMax" : "ArgMin", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "axis", dim));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "keepdims", keepdim));
    return yg__onnx_output(cx, o, node, 1);
}

yg_status yg__onnx_sym_max_dim(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return values_indices(cx, node, true);
}

yg_status yg__onnx_sym_min_dim(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return values_indices(cx, node, false);
}

/* all / any (over dims, or every dim): the input as bool, as int32,
 * reduced by ReduceMin (all) or ReduceMax (any), back to bool. */
static yg_status boolean_reduce(yg_onnx_ctx *cx, const yg_ir_node *node, bool all, bool by_dim) {
    int32_t d;
    yg_box_ints dims = {0};
    bool keepdim = false;
    const char *x = in(cx, node, 0), *b = NULL, *i32 = NULL, *r = NULL;
    YG_RETURN_IF_ERROR(dtype_of(cx, node, 0, &d));
    if (by_dim) {
        YG_RETURN_IF_ERROR(yg__box_ints(node, "dim", NULL, YG_BOX_REQUIRED, 0, &dims));
        YG_RETURN_IF_ERROR(yg__box_bool(node, "keepdim", &(const bool){false}, &keepdim));
    }
    if (d != YG_BOOL)
        YG_RETURN_IF_ERROR(cast_to(cx, node, x, YG_BOOL, NULL, &b));
    YG_RETURN_IF_ERROR(cast_to(cx, node, d != YG_BOOL ? b : x, YG_INT32, NULL, &i32));
    YG_RETURN_IF_ERROR(reduce(cx, node, all ? "ReduceMin" : "ReduceMax", i32, dims.items, dims.len,
                              keepdim, NULL, &r));
    return cast_to(cx, node, r, YG_BOOL, result(node, 0), NULL);
}

yg_status yg__onnx_sym_all(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return boolean_reduce(cx, node, true, false);
}

yg_status yg__onnx_sym_all_dim(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return boolean_reduce(cx, node, true, true);
}

yg_status yg__onnx_sym_any(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return boolean_reduce(cx, node, false, false);
}

yg_status yg__onnx_sym_any_dim(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return boolean_reduce(cx, node, false, true);
}

/* The variance over dim (every dim when empty) with correction:
 * ReduceSumSquare(x - mean) / (n - correction), n the reduced dims' sizes
 * (which the graph must know).  Writes the variance into var_name and
 * the mean (keepdims as asked) into mean_name, when not NULL. */
static yg_status variance(yg_onnx_ctx *cx,
                          const yg_ir_node *node,
                          const char *var_name,
                          const char **var,
                          const char *mean_name) {
    int32_t d;
    yg_box_ints dims = {0};
    int64_t correction = 1, axes[YG_MAX_DIMS], n_axes, count = 1;
    bool keepdim = false;
    const char *x = in(cx, node, 0), *mean = NULL, *dev = NULL, *ss = NULL, *den = NULL;
    yg_ir_type t = yg__onnx_input_type(node, 0);
    YG_RETURN_IF_ERROR(dtype_of(cx, node, 0, &d));
    YG_RETURN_IF_ERROR(yg__box_ints(node, "dim", NULL, 0, 0, &dims));
    YG_RETURN_IF_ERROR(yg__box_int(node, "correction", &(const int64_t){1}, &correction));
    YG_RETURN_IF_ERROR(yg__box_bool(node, "keepdim", &(const bool){false}, &keepdim));
    if (t.ndim == YG_IR_UNKNOWN || dims.len > YG_MAX_DIMS)
        return yg__onnx_unsupported(cx, node, "the rank of self is unknown");
    n_axes = dims.len > 0 ? dims.len : t.ndim;
    for (int64_t i = 0; i < n_axes; i++)
        axes[i] = dims.len > 0 ? dims.items[i] : i;
    YG_RETURN_IF_ERROR(norm_dims(cx, node, axes, n_axes, axes));
    for (int64_t i = 0; i < n_axes; i++) {
        if (t.sizes[axes[i]] == YG_IR_UNKNOWN)
            return yg__onnx_unsupported(cx, node, "the size of reduced dim %lld is unknown",
                                        (long long)axes[i]);
        count *= t.sizes[axes[i]];
    }
    YG_RETURN_IF_ERROR(reduce(cx, node, "ReduceMean", x, axes, n_axes, true, NULL, &mean));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Sub", x, mean, NULL, &dev));
    YG_RETURN_IF_ERROR(reduce(cx, node, "ReduceSumSquare", dev, axes, n_axes, keepdim, NULL, &ss));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, (double)(count - correction), &den));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Div", ss, den, var_name, var));
    if (mean_name != NULL)
        YG_RETURN_IF_ERROR(reduce(cx, node, "ReduceMean", x, axes, n_axes, keepdim, mean_name, NULL));
    return YG_OK;
}

yg_status yg__onnx_sym_var(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return variance(cx, node, result(node, 0), NULL, NULL);
}

yg_status yg__onnx_sym_std(yg_onnx_ctx *cx, const yg_ir_node *node) {
    const char *v = NULL;
    YG_RETURN_IF_ERROR(variance(cx, node, NULL, &v, NULL));
    return yg__onnx_unary(cx, node, "Sqrt", v, result(node, 0), NULL);
}

yg_status yg__onnx_sym_var_mean(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return variance(cx, node, result(node, 0), NULL, result(node, 1));
}

/* The p-norm over dim (every dim when empty): ReduceL1, ReduceL2, the
 * max or min of |x| for +-inf, the count of non-zeros for 0, else
 * (sum |x|^p)^(1/p). */
yg_status yg__onnx_sym_norm(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int32_t d;
    double p = 2;
    yg_box_ints dims = {0};
    bool keepdim = false;
    const char *x = in(cx, node, 0), *out = result(node, 0), *a = NULL, *k = NULL, *u = NULL,
               *s = NULL;
    YG_RETURN_IF_ERROR(dtype_of(cx, node, 0, &d));
    YG_RETURN_IF_ERROR(yg__box_double(node, "p", &(const double){2}, &p));
    YG_RETURN_IF_ERROR(yg__box_ints(node, "dim", NULL, 0, 0, &dims));
    YG_RETURN_IF_ERROR(yg__box_bool(node, "keepdim", &(const bool){false}, &keepdim));
    if (p == 2 || p == 1)
        return reduce(cx, node, p == 2 ? "ReduceL2" : "ReduceL1", x, dims.items, dims.len, keepdim,
                      out, NULL);
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Abs", x, NULL, &a));
    if (isinf(p))
        return reduce(cx, node, p > 0 ? "ReduceMax" : "ReduceMin", a, dims.items, dims.len,
                      keepdim, out, NULL);
    if (p == 0) {
        const char *nz = NULL;
        YG_RETURN_IF_ERROR(cast_to(cx, node, a, YG_BOOL, NULL, &nz));
        YG_RETURN_IF_ERROR(cast_to(cx, node, nz, d, NULL, &u));
    } else {
        YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, p, &k));
        YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Pow", a, k, NULL, &u));
    }
    {
        yg_onnx_node *o = NULL;
        YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "ReduceSum", &o));
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, u));
        if (dims.len > 0)
            YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, dims.items, dims.len));
        YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "keepdims", keepdim));
        if (p == 0)
            return yg__onnx_output_named(cx, o, out);
        YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "sum", &s));
    }
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, 1.0 / p, &k));
    return yg__onnx_binary(cx, node, "Pow", s, k, out, NULL);
}

/* ---- products ---- */

/* self[:, None] * vec2[None, :]. */
yg_status yg__onnx_sym_outer(yg_onnx_ctx *cx, const yg_ir_node *node) {
    const char *a = NULL, *b = NULL;
    YG_RETURN_IF_ERROR(
        with_ints(cx, node, "Unsqueeze", in(cx, node, 0), (const int64_t[]){1}, 1, NULL, &a));
    YG_RETURN_IF_ERROR(
        with_ints(cx, node, "Unsqueeze", in(cx, node, 1), (const int64_t[]){0}, 1, NULL, &b));
    return yg__onnx_binary(cx, node, "Mul", a, b, result(node, 0), NULL);
}

/* beta self + alpha batch1 @ batch2; beta 0 ignores self (NaN included),
 * as yagrad does. */
yg_status yg__onnx_sym_baddbmm(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int32_t d;
    double beta = 1, alpha = 1;
    const char *mm = NULL, *k = NULL, *scaled_self = NULL;
    YG_RETURN_IF_ERROR(dtype_of(cx, node, 0, &d));
    YG_RETURN_IF_ERROR(yg__box_double(node, "beta", &(const double){1}, &beta));
    YG_RETURN_IF_ERROR(yg__box_double(node, "alpha", &(const double){1}, &alpha));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "MatMul", in(cx, node, 1), in(cx, node, 2), NULL, &mm));
    if (beta == 0) {
        /* broadcast as self would: mm + 0 self would let NaN through */
        const char *shape = NULL;
        YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Shape", in(cx, node, 0), NULL, &shape));
        if (alpha != 1) {
            YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, alpha, &k));
            YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", mm, k, NULL, &mm));
        }
        return yg__onnx_binary(cx, node, "Expand", mm, shape, result(node, 0), NULL);
    }
    scaled_self = in(cx, node, 0);
    if (beta != 1) {
        YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, beta, &k));
        YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", scaled_self, k, NULL, &scaled_self));
    }
    return scaled_add(cx, node, d, scaled_self, mm, alpha, result(node, 0));
}

/* ---- shape ops ---- */

/* Tile by repeats; more repeats than dims first unsqueeze the leading ones. */
yg_status yg__onnx_sym_repeat(yg_onnx_ctx *cx, const yg_ir_node *node) {
    yg_box_ints r = {0};
    yg_ir_type t = yg__onnx_input_type(node, 0);
    const char *x = in(cx, node, 0);
    YG_RETURN_IF_ERROR(yg__box_ints(node, "repeats", NULL, YG_BOX_REQUIRED, 0, &r));
    if (t.kind != YG_IR_TYPE_TENSOR || t.ndim == YG_IR_UNKNOWN)
        return yg__onnx_unsupported(cx, node, "the rank of self is unknown");
    if (r.len < t.ndim)
        return yg__onnx_unsupported(cx, node, "fewer repeats than dims");
    if (r.len > t.ndim) {
        int64_t lead[YG_MAX_DIMS];
        for (int64_t i = 0; i < r.len - t.ndim; i++)
            lead[i] = i;
        YG_RETURN_IF_ERROR(with_ints(cx, node, "Unsqueeze", x, lead, r.len - t.ndim, NULL, &x));
    }
    return with_ints(cx, node, "Tile", x, r.items, r.len, result(node, 0), NULL);
}

/* Slice with step -1 over each flipped dim. */
yg_status yg__onnx_sym_flip(yg_onnx_ctx *cx, const yg_ir_node *node) {
    yg_box_ints dims = {0};
    int64_t starts[YG_MAX_DIMS], ends[YG_MAX_DIMS], steps[YG_MAX_DIMS];
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__box_ints(node, "dims", NULL, YG_BOX_REQUIRED, 0, &dims));
    if (dims.len == 0 || dims.len > YG_MAX_DIMS)
        return yg__onnx_unary(cx, node, "Identity", in(cx, node, 0), result(node, 0), NULL);
    for (int64_t i = 0; i < dims.len; i++) {
        starts[i] = -1;
        ends[i] = INT64_MIN;
        steps[i] = -1;
    }
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Slice", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, starts, dims.len));
    YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, ends, dims.len));
    YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, dims.items, dims.len));
    YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, steps, dims.len));
    return yg__onnx_outputs(cx, o, node);
}

/* Split into size-1 pieces along dim, each squeezed: one per output. */
yg_status yg__onnx_sym_unbind(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int64_t dim = 0, n = node->n_outputs;
    yg_onnx_node *o = NULL;
    const char *pieces[64];
    int64_t ones[64];
    YG_RETURN_IF_ERROR(yg__box_int(node, "dim", &(const int64_t){0}, &dim));
    if (n < 1 || n > 64)
        return yg__onnx_unsupported(cx, node, "%lld outputs (1 to 64 export)", (long long)n);
    YG_RETURN_IF_ERROR(norm_dims(cx, node, &dim, 1, &dim));
    for (int64_t i = 0; i < n; i++)
        ones[i] = 1;
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Split", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, ones, n));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "axis", dim));
    for (int64_t i = 0; i < n; i++)
        YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "piece", &pieces[i]));
    for (int64_t i = 0; i < n; i++)
        YG_RETURN_IF_ERROR(with_ints(cx, node, "Squeeze", pieces[i], &dim, 1, result(node, i), NULL));
    return YG_OK;
}

/* Trilu(self, diagonal as a 0-d int64, upper). */
static yg_status trilu(yg_onnx_ctx *cx, const yg_ir_node *node, bool upper) {
    int64_t diagonal = 0;
    yg_onnx_node *o = NULL;
    const char *k = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_require_opset(cx, node, "Trilu", 14));
    YG_RETURN_IF_ERROR(yg__box_int(node, "diagonal", &(const int64_t){0}, &diagonal));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, YG_INT64, (double)diagonal, &k));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Trilu", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, k));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "upper", upper));
    return yg__onnx_outputs(cx, o, node);
}

yg_status yg__onnx_sym_tril(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return trilu(cx, node, false);
}

yg_status yg__onnx_sym_triu(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return trilu(cx, node, true);
}

/* ScatterElements(self, index, updates, axis=dim[, reduction=add]). */
static yg_status scatter_elements(yg_onnx_ctx *cx,
                                  const yg_ir_node *node,
                                  const char *updates,
                                  bool add,
                                  int64_t dim) {
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "ScatterElements", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 1));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, updates));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "axis", dim));
    if (add)
        YG_RETURN_IF_ERROR(yg__onnx_attr_str(cx, o, "reduction", "add"));
    return yg__onnx_outputs(cx, o, node);
}

/* ScatterElements(self, index, updates, axis=dim); updates are src cut
 * to index's sizes (yagrad reads src only where index has entries, ONNX
 * needs them equal), or value expanded to them. */
static yg_status scatter(yg_onnx_ctx *cx, const yg_ir_node *node, int how) {
    int64_t dim = 0;
    yg_onnx_node *o = NULL;
    const char *updates = NULL;
    yg_ir_type ti = yg__onnx_input_type(node, 1);
    YG_RETURN_IF_ERROR(yg__box_int(node, "dim", NULL, &dim));
    if (how == 2) { /* scatter_add */
        YG_RETURN_IF_ERROR(yg__onnx_require_opset(cx, node, "ScatterElements reduction", 16));
    }
    if (how == 1) { /* scatter.value: value expanded to index's shape */
        const char *shape = NULL, *v = NULL;
        double value = 0;
        YG_RETURN_IF_ERROR(yg__box_double(node, "value", NULL, &value));
        YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Shape", in(cx, node, 1), NULL, &shape));
        YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Expand", &o));
        YG_RETURN_IF_ERROR(yg__onnx_input_scalar(cx, o, node, 0, value));
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, shape));
        YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "value", &v));
        return scatter_elements(cx, node, v, false, dim);
    }
    yg_ir_type ts = yg__onnx_input_type(node, 2);
    updates = in(cx, node, 2);
    bool same = ti.kind == YG_IR_TYPE_TENSOR && ts.kind == YG_IR_TYPE_TENSOR &&
                ti.ndim == ts.ndim && ti.ndim != YG_IR_UNKNOWN &&
                memcmp(ti.sizes, ts.sizes, sizeof(int64_t) * (size_t)ti.ndim) == 0;
    if (!same) {
        int64_t zeros[YG_MAX_DIMS] = {0}, axes[YG_MAX_DIMS];
        if (ti.kind != YG_IR_TYPE_TENSOR || ti.ndim == YG_IR_UNKNOWN)
            return yg__onnx_unsupported(cx, node, "the sizes of index are unknown");
        for (int64_t i = 0; i < ti.ndim; i++) {
            if (ti.sizes[i] == YG_IR_UNKNOWN)
                return yg__onnx_unsupported(cx, node, "the sizes of index are unknown");
            axes[i] = i;
        }
        YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Slice", &o));
        YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 2));
        YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, zeros, ti.ndim));
        YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, ti.sizes, ti.ndim));
        YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, axes, ti.ndim));
        YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "src", &updates));
    }
    return scatter_elements(cx, node, updates, how == 2, dim);
}

yg_status yg__onnx_sym_scatter(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return scatter(cx, node, 0);
}

yg_status yg__onnx_sym_scatter_value(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return scatter(cx, node, 1);
}

yg_status yg__onnx_sym_scatter_add(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return scatter(cx, node, 2);
}
