/*
 * sym_creation.c - symbolics of the creation ops, for graphs that keep
 * them (yg_graph_optimize folds those with constant arguments into
 * initializers): a filled tensor is Expand of a 0-d constant, so the
 * *_like ops follow their input's shape (Shape, dynamic); arange is
 * Range, linspace a scaled Range, eye EyeLike.  The dtype is the one the
 * graph gives the result.  (empty and empty_like are filled with zeros:
 * their values are unspecified.)
 */
#include "jit/ir/boxing.h"
#include "onnx/onnx_gen.h"
#include "onnx/onnx_int.h"

/* The dtype of node's result, which the graph must know. */
static yg_status result_dtype(yg_onnx_ctx *cx, const yg_ir_node *node, int32_t *out) {
    *out = node->n_outputs > 0 && node->outputs[0]->type.kind == YG_IR_TYPE_TENSOR
               ? node->outputs[0]->type.dtype
               : YG_IR_UNKNOWN;
    if (*out == YG_IR_UNKNOWN || yg__onnx_dtype(*out) == 0)
        return yg__onnx_unsupported(cx, node, "the result's dtype is unknown");
    return YG_OK;
}

/* Expand(value of the result's dtype, shape) into the node's output. */
static yg_status fill(yg_onnx_ctx *cx, const yg_ir_node *node, double value, const char *shape) {
    int32_t d;
    const char *v = NULL;
    YG_RETURN_IF_ERROR(result_dtype(cx, node, &d));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, value, &v));
    return yg__onnx_binary(cx, node, "Expand", v, shape, yg__onnx_output_name_of(node, 0), NULL);
}

/* fill of the sizes attribute "size". */
static yg_status fill_sized(yg_onnx_ctx *cx, const yg_ir_node *node, double value) {
    yg_box_ints size = {0};
    const char *shape = NULL;
    const yg_onnx_dim *forms[YG_MAX_DIMS] = {NULL};
    const yg_onnx_dim *od = yg__onnx_value_dims(cx, node->outputs[0]);
    YG_RETURN_IF_ERROR(yg__box_ints(node, "size", NULL, YG_BOX_REQUIRED, 0, &size));
    if (size.len > YG_MAX_DIMS)
        return yg__onnx_unsupported(cx, node, "more than %d dims", YG_MAX_DIMS);
    for (int64_t i = 0; od != NULL && node->outputs[0]->type.ndim == size.len && i < size.len; i++)
        if (yg__onnx_dim_is_symbolic(&od[i]))
            forms[i] = &od[i]; /* a dynamic size (dims.c) */
    YG_RETURN_IF_ERROR(yg__onnx_shape_value(cx, node, size.items, forms, size.len, &shape));
    return fill(cx, node, value, shape);
}

/* fill of the shape of input 0. */
static yg_status fill_like(yg_onnx_ctx *cx, const yg_ir_node *node, double value) {
    const char *shape = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Shape", yg__onnx_input_name_of(cx, node, 0), NULL,
                                      &shape));
    return fill(cx, node, value, shape);
}

yg_status yg__onnx_sym_zeros(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return fill_sized(cx, node, 0);
}

yg_status yg__onnx_sym_empty(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return fill_sized(cx, node, 0);
}

yg_status yg__onnx_sym_ones(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return fill_sized(cx, node, 1);
}

yg_status yg__onnx_sym_full(yg_onnx_ctx *cx, const yg_ir_node *node) {
    double v = 0;
    YG_RETURN_IF_ERROR(yg__box_double(node, "fill_value", NULL, &v));
    return fill_sized(cx, node, v);
}

yg_status yg__onnx_sym_zeros_like(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return fill_like(cx, node, 0);
}

yg_status yg__onnx_sym_empty_like(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return fill_like(cx, node, 0);
}

yg_status yg__onnx_sym_ones_like(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return fill_like(cx, node, 1);
}

yg_status yg__onnx_sym_full_like(yg_onnx_ctx *cx, const yg_ir_node *node) {
    double v = 0;
    YG_RETURN_IF_ERROR(yg__box_double(node, "fill_value", NULL, &v));
    return fill_like(cx, node, v);
}

/* Range(start, end, step) in the result's dtype, into out_name or a
 * fresh name. */
static yg_status range(yg_onnx_ctx *cx,
                       const yg_ir_node *node,
                       int32_t d,
                       double start,
                       double end,
                       double step,
                       const char *out_name,
                       const char **out) {
    const char *s = NULL, *e = NULL, *t = NULL;
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, start, &s));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, end, &e));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, step, &t));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Range", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, s));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, e));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, t));
    if (out_name != NULL)
        return yg__onnx_output_named(cx, o, out_name);
    return yg__onnx_output_fresh(cx, o, node, "range", out);
}

yg_status yg__onnx_sym_arange(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int32_t d;
    double end = 0;
    YG_RETURN_IF_ERROR(result_dtype(cx, node, &d));
    YG_RETURN_IF_ERROR(yg__box_double(node, "end", NULL, &end));
    const yg_onnx_dim *od = yg__onnx_value_dims(cx, node->outputs[0]);
    if (od != NULL && node->outputs[0]->type.ndim == 1 && od[0].value == end &&
        yg__onnx_dim_is_symbolic(&od[0])) {
        /* arange(T) of a dynamic T (dims.c): Range(0, T, 1) in int64, then
         * the result's dtype */
        const char *r = NULL;
        yg_onnx_node *o = NULL;
        if (d == YG_INT64)
            return yg__onnx_dim_range(cx, node, &od[0], yg__onnx_output_name_of(node, 0), NULL);
        YG_RETURN_IF_ERROR(yg__onnx_dim_range(cx, node, &od[0], NULL, &r));
        YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Cast", &o));
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, r));
        YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "to", yg__onnx_dtype(d)));
        return yg__onnx_outputs(cx, o, node);
    }
    return range(cx, node, d, 0, end, 1, yg__onnx_output_name_of(node, 0), NULL);
}

yg_status yg__onnx_sym_arange_start(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int32_t d;
    double start = 0, end = 0, step = 1;
    YG_RETURN_IF_ERROR(result_dtype(cx, node, &d));
    YG_RETURN_IF_ERROR(yg__box_double(node, "start", NULL, &start));
    YG_RETURN_IF_ERROR(yg__box_double(node, "end", NULL, &end));
    YG_RETURN_IF_ERROR(yg__box_double(node, "step", &(const double){1}, &step));
    return range(cx, node, d, start, end, step, yg__onnx_output_name_of(node, 0), NULL);
}

/* start + i (end - start) / (steps - 1) for i < steps. */
yg_status yg__onnx_sym_linspace(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int32_t d;
    double start = 0, end = 0;
    int64_t steps = 0;
    const char *i = NULL, *k = NULL, *s = NULL, *scaled = NULL;
    YG_RETURN_IF_ERROR(result_dtype(cx, node, &d));
    YG_RETURN_IF_ERROR(yg__box_double(node, "start", NULL, &start));
    YG_RETURN_IF_ERROR(yg__box_double(node, "end", NULL, &end));
    YG_RETURN_IF_ERROR(yg__box_int(node, "steps", NULL, &steps));
    if (d != YG_FLOAT32 && d != YG_FLOAT64)
        return yg__onnx_unsupported(cx, node, "linspace of a non-float dtype");
    YG_RETURN_IF_ERROR(range(cx, node, d, 0, (double)steps, 1, NULL, &i));
    YG_RETURN_IF_ERROR(
        yg__onnx_const_scalar(cx, d, steps > 1 ? (end - start) / (double)(steps - 1) : 0, &k));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, start, &s));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", i, k, NULL, &scaled));
    return yg__onnx_binary(cx, node, "Add", scaled, s, yg__onnx_output_name_of(node, 0), NULL);
}

/* EyeLike of an [n, m] zeros. */
static yg_status eye(yg_onnx_ctx *cx, const yg_ir_node *node, int64_t n, int64_t m) {
    int32_t d;
    const char *shape = NULL, *z = NULL, *zeros = NULL;
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(result_dtype(cx, node, &d));
    YG_RETURN_IF_ERROR(yg__onnx_const_ints(cx, (const int64_t[]){n, m}, 2, &shape));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, 0, &z));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Expand", z, shape, NULL, &zeros));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "EyeLike", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, zeros));
    return yg__onnx_outputs(cx, o, node);
}

yg_status yg__onnx_sym_eye(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int64_t n = 0;
    YG_RETURN_IF_ERROR(yg__box_int(node, "n", NULL, &n));
    return eye(cx, node, n, n);
}

yg_status yg__onnx_sym_eye_m(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int64_t n = 0, m = 0;
    YG_RETURN_IF_ERROR(yg__box_int(node, "n", NULL, &n));
    YG_RETURN_IF_ERROR(yg__box_int(node, "m", NULL, &m));
    return eye(cx, node, n, m);
}
