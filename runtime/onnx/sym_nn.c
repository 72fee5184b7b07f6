/*
 * sym_nn.c - handwritten ONNX symbolics of the layer ops (`onnx: custom`):
 * linear, layer_norm, group_norm, batch_norm (inference), convolution and pooling,
 * dropout (inference), dtype conversions, and the activations with no
 * single ONNX operator before opset 18 (gelu, silu) or with a negated
 * one (ne).  Training-mode behaviour that ONNX inference cannot reproduce
 * (batch statistics, random dropout) fails naming the node.
 */
#include "jit/ir/boxing.h"
#include "onnx/onnx_gen.h"
#include "onnx/onnx_int.h"

#include <math.h>
#include <string.h>

static yg_status oom(void) {
    return yg__fail(YG_ERR_OUT_OF_MEMORY, "onnx_export: out of memory");
}

static int32_t input_dtype(const yg_ir_node *node, int64_t i) {
    yg_ir_type t = yg__onnx_input_type(node, i);
    return t.kind == YG_IR_TYPE_TENSOR ? t.dtype : YG_IR_UNKNOWN;
}

/* Whether node's input i is absent (None, or past its inputs). */
static bool is_none(const yg_ir_node *node, int64_t i) {
    return i < 0 || i >= node->n_inputs || node->inputs[i]->type.kind == YG_IR_TYPE_NONE;
}

/* input @ weight^T (+ bias) into out_name (NULL: a fresh name in *out):
 * Gemm(transB=1) for a 2-d input, MatMul(Transpose) and Add otherwise. */
yg_status yg__onnx_linear(yg_onnx_ctx *cx,
                          const yg_ir_node *node,
                          const char *input,
                          int32_t input_rank,
                          const char *weight,
                          const char *bias,
                          const char *out_name,
                          const char **out) {
    yg_onnx_node *o = NULL;
    const char *wt = NULL, *mm = NULL;
    if (input_rank == 2) {
        YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Gemm", &o));
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, input));
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, weight));
        if (bias != NULL)
            YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, bias));
        YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "transB", 1));
        if (out_name != NULL) {
            *out = out_name;
            return yg__onnx_output_named(cx, o, out_name);
        }
        return yg__onnx_output_fresh(cx, o, node, "gemm", out);
    }
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Transpose", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, weight));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "perm", (const int64_t[]){1, 0}, 2));
    YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "wt", &wt));
    if (bias == NULL)
        return yg__onnx_binary(cx, node, "MatMul", input, wt, out_name, out);
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "MatMul", input, wt, NULL, &mm));
    return yg__onnx_binary(cx, node, "Add", mm, bias, out_name, out);
}

yg_status yg__onnx_sym_linear(yg_onnx_ctx *cx, const yg_ir_node *node) {
    yg_ir_type t = yg__onnx_input_type(node, 0);
    const char *out = NULL;
    if (t.ndim < 0)
        return yg__onnx_unsupported(cx, node, "input 0 has an unknown rank");
    return yg__onnx_linear(cx,
                           node,
                           yg__onnx_input_name_of(cx, node, 0),
                           t.ndim,
                           yg__onnx_input_name_of(cx, node, 1),
                           is_none(node, 2) ? NULL : yg__onnx_input_name_of(cx, node, 2),
                           yg__onnx_output_name_of(node, 0),
                           &out);
}

/* A constant of sizes [n] filled with value, in dtype. */
static yg_status filled(yg_onnx_ctx *cx, int32_t dtype, int64_t n, double value, const char **out) {
    size_t es = yg__onnx_dtype_size(dtype);
    uint8_t *data = yg__onnx_alloc(cx, (size_t)n * es + 8);
    if (data == NULL)
        return oom();
    if (dtype != YG_FLOAT32 && dtype != YG_FLOAT64)
        return yg__fail(YG_ERR_DTYPE, "onnx_export: a filled constant needs float32 or float64");
    for (int64_t i = 0; i < n; i++) {
        if (dtype == YG_FLOAT32)
            ((float *)data)[i] = (float)value;
        else
            ((double *)data)[i] = value;
    }
    *out = yg__onnx_fresh_name(cx, "const", "filled");
    if (*out == NULL)
        return oom();
    return yg__onnx_add_initializer(cx, *out, dtype, &n, 1, data, (size_t)n * es);
}

yg_status yg__onnx_sym_layer_norm(yg_onnx_ctx *cx, const yg_ir_node *node) {
    yg_box_ints shape = {0};
    double eps = 0;
    yg_onnx_node *o = NULL;
    const char *scale = NULL;
    YG_RETURN_IF_ERROR(yg__box_ints(node, "normalized_shape", NULL, YG_BOX_REQUIRED, 0, &shape));
    YG_RETURN_IF_ERROR(yg__box_double(node, "eps", &(const double){1e-05}, &eps));
    YG_RETURN_IF_ERROR(yg__onnx_require_opset(cx, node, "LayerNormalization", 17));
    if (shape.len < 1)
        return yg__onnx_unsupported(cx, node, "normalized_shape is empty");
    if (is_none(node, 1)) {
        int64_t n = 1;
        for (int64_t i = 0; i < shape.len; i++)
            n *= shape.items[i];
        const char *flat = NULL;
        YG_RETURN_IF_ERROR(filled(cx, input_dtype(node, 0), n, 1.0, &flat));
        YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Reshape", &o));
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, flat));
        YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, shape.items, shape.len));
        YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "scale", &scale));
    } else {
        scale = yg__onnx_input_name_of(cx, node, 1);
    }
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "LayerNormalization", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, scale));
    if (!is_none(node, 2))
        YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 2));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "axis", -shape.len));
    YG_RETURN_IF_ERROR(yg__onnx_attr_float(cx, o, "epsilon", eps));
    return yg__onnx_outputs(cx, o, node);
}

/* Reshapes name to [n, 1, ..., 1] (rank dims) for a per-channel scale
 * or shift of an [N, C, ...] input. */
static yg_status per_channel(yg_onnx_ctx *cx,
                             const yg_ir_node *node,
                             const char *name,
                             int64_t n,
                             int32_t rank,
                             const char **out) {
    int64_t shape[YG_MAX_DIMS];
    yg_onnx_node *o = NULL;
    shape[0] = n;
    for (int32_t d = 1; d < rank - 1; d++)
        shape[d] = 1;
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Reshape", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, name));
    YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, shape, rank - 1));
    return yg__onnx_output_fresh(cx, o, node, "per_channel", out);
}

/* InstanceNormalization over [N, G, -1] (each group's statistics, as
 * group_norm computes them), reshaped back to the input's shape (Shape of
 * the input, so the batch may vary), then the per-channel affine. */
yg_status yg__onnx_sym_group_norm(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int64_t groups = 0;
    double eps = 0;
    yg_onnx_node *o = NULL;
    const char *shape = NULL, *grouped = NULL, *normed = NULL, *ones = NULL, *zeros = NULL;
    const char *y = NULL, *w = NULL, *b = NULL;
    yg_ir_type t = yg__onnx_input_type(node, 0);
    YG_RETURN_IF_ERROR(yg__box_int(node, "num_groups", NULL, &groups));
    YG_RETURN_IF_ERROR(yg__box_double(node, "eps", &(const double){1e-05}, &eps));
    if (t.ndim < 2 || t.sizes[1] < 0 || groups <= 0 || t.sizes[1] % groups != 0)
        return yg__onnx_unsupported(cx,
                                    node,
                                    "needs an [N, C, ...] input with C known and "
                                    "a multiple of num_groups");
    YG_RETURN_IF_ERROR(
        yg__onnx_unary(cx, node, "Shape", yg__onnx_input_name_of(cx, node, 0), NULL, &shape));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Reshape", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, (const int64_t[]){0, groups, -1}, 3));
    YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "grouped", &grouped));
    YG_RETURN_IF_ERROR(filled(cx, t.dtype, groups, 1.0, &ones));
    YG_RETURN_IF_ERROR(filled(cx, t.dtype, groups, 0.0, &zeros));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "InstanceNormalization", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, grouped));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, ones));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, zeros));
    YG_RETURN_IF_ERROR(yg__onnx_attr_float(cx, o, "epsilon", eps));
    YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "normed", &normed));
    bool has_w = !is_none(node, 1), has_b = !is_none(node, 2);
    const char *out = yg__onnx_output_name_of(node, 0);
    YG_RETURN_IF_ERROR(
        yg__onnx_binary(cx, node, "Reshape", normed, shape, has_w || has_b ? NULL : out, &y));
    if (has_w) {
        YG_RETURN_IF_ERROR(
            per_channel(cx, node, yg__onnx_input_name_of(cx, node, 1), t.sizes[1], t.ndim, &w));
        YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", y, w, has_b ? NULL : out, &y));
    }
    if (has_b) {
        YG_RETURN_IF_ERROR(
            per_channel(cx, node, yg__onnx_input_name_of(cx, node, 2), t.sizes[1], t.ndim, &b));
        YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Add", y, b, out, &y));
    }
    return YG_OK;
}

yg_status yg__onnx_sym_batch_norm(yg_onnx_ctx *cx, const yg_ir_node *node) {
    bool training = false;
    double eps = 0, momentum = 0;
    yg_onnx_node *o = NULL;
    const char *names[5];
    YG_RETURN_IF_ERROR(yg__box_bool(node, "training", &(const bool){false}, &training));
    YG_RETURN_IF_ERROR(yg__box_double(node, "momentum", &(const double){0.1}, &momentum));
    YG_RETURN_IF_ERROR(yg__box_double(node, "eps", &(const double){1e-05}, &eps));
    if (training)
        return yg__onnx_unsupported(cx,
                                    node,
                                    "training=1 normalises by batch statistics and "
                                    "updates the running ones; export in eval mode");
    if (is_none(node, 3) || is_none(node, 4))
        return yg__onnx_unsupported(cx, node, "no running statistics to normalise with");
    yg_ir_type t = yg__onnx_input_type(node, 0);
    if (t.ndim < 2 || t.sizes[1] < 0)
        return yg__onnx_unsupported(cx, node, "input's channel count is unknown");
    for (int k = 0; k < 5; k++)
        names[k] = yg__onnx_input_name_of(cx, node, k);
    if (is_none(node, 1))
        YG_RETURN_IF_ERROR(filled(cx, t.dtype, t.sizes[1], 1.0, &names[1]));
    if (is_none(node, 2))
        YG_RETURN_IF_ERROR(filled(cx, t.dtype, t.sizes[1], 0.0, &names[2]));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "BatchNormalization", &o));
    for (int k = 0; k < 5; k++)
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, names[k]));
    YG_RETURN_IF_ERROR(yg__onnx_attr_float(cx, o, "epsilon", eps));
    YG_RETURN_IF_ERROR(yg__onnx_attr_float(cx, o, "momentum", 1 - momentum));
    return yg__onnx_outputs(cx, o, node);
}

/* Conv from a node whose stride/padding/dilation/groups attributes are
 * lists of spatial length n (or single ints). */
static yg_status conv(yg_onnx_ctx *cx, const yg_ir_node *node, int32_t n) {
    yg_box_ints stride = {0}, padding = {0}, dilation = {0};
    int64_t groups = 1, pads[6];
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__box_ints(node, "stride", (const int64_t[]){1, 1, 1}, n, n, &stride));
    YG_RETURN_IF_ERROR(yg__box_ints(node, "padding", (const int64_t[]){0, 0, 0}, n, n, &padding));
    YG_RETURN_IF_ERROR(yg__box_ints(node, "dilation", (const int64_t[]){1, 1, 1}, n, n, &dilation));
    YG_RETURN_IF_ERROR(yg__box_int(node, "groups", &(const int64_t){1}, &groups));
    if (stride.len != n || padding.len != n || dilation.len != n || n > 3)
        return yg__onnx_unsupported(
            cx, node, "stride, padding and dilation need %d entries", (int)n);
    for (int32_t i = 0; i < n; i++) {
        pads[i] = padding.items[i];
        pads[n + i] = padding.items[i];
    }
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Conv", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 1));
    if (!is_none(node, 2))
        YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 2));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "strides", stride.items, n));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "pads", pads, 2 * n));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "dilations", dilation.items, n));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "group", groups));
    return yg__onnx_outputs(cx, o, node);
}

yg_status yg__onnx_sym_conv1d(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return conv(cx, node, 1);
}

yg_status yg__onnx_sym_conv2d(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return conv(cx, node, 2);
}

yg_status yg__onnx_sym_conv3d(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return conv(cx, node, 3);
}

yg_status yg__onnx_sym_convolution(yg_onnx_ctx *cx, const yg_ir_node *node) {
    bool transposed = false;
    yg_ir_type w = yg__onnx_input_type(node, 1);
    YG_RETURN_IF_ERROR(yg__box_bool(node, "transposed", NULL, &transposed));
    if (transposed)
        return yg__onnx_unsupported(cx, node, "transposed convolution is not written yet");
    if (w.ndim < 3 || w.ndim > 5)
        return yg__onnx_unsupported(cx, node, "weight rank unknown or not 3 to 5");
    return conv(cx, node, w.ndim - 2);
}

/* An int list attribute of a 2-d pooling op as 2 entries: one entry
 * stands for both dims, as PyTorch's pooling reads it; an empty list
 * (stride's default) gives dflt. */
static yg_status pair(yg_onnx_ctx *cx,
                      const yg_ir_node *node,
                      const char *name,
                      const int64_t *dflt,
                      int64_t dflt_len,
                      const int64_t *fallback,
                      int64_t out[2]) {
    yg_box_ints v = {0};
    YG_RETURN_IF_ERROR(yg__box_ints(node, name, dflt, dflt_len, 0, &v));
    if (v.len == 0 && fallback != NULL) {
        out[0] = fallback[0];
        out[1] = fallback[1];
    } else if (v.len == 1 || v.len == 2) {
        out[0] = v.items[0];
        out[1] = v.items[v.len - 1];
    } else {
        return yg__onnx_unsupported(
            cx, node, "%s needs 1 or 2 entries, got %lld", name, (long long)v.len);
    }
    return YG_OK;
}

static yg_status pool(yg_onnx_ctx *cx, const yg_ir_node *node, const char *op_type, bool max) {
    int64_t kernel[2], stride[2], padding[2], dilation[2] = {1, 1}, pads[4];
    bool ceil_mode = false, include_pad = true;
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(pair(cx, node, "kernel_size", NULL, YG_BOX_REQUIRED, NULL, kernel));
    YG_RETURN_IF_ERROR(pair(cx, node, "stride", NULL, 0, kernel, stride));
    YG_RETURN_IF_ERROR(pair(cx, node, "padding", (const int64_t[]){0}, 1, NULL, padding));
    YG_RETURN_IF_ERROR(yg__box_bool(node, "ceil_mode", &(const bool){false}, &ceil_mode));
    if (max)
        YG_RETURN_IF_ERROR(pair(cx, node, "dilation", (const int64_t[]){1}, 1, NULL, dilation));
    else
        YG_RETURN_IF_ERROR(
            yg__box_bool(node, "count_include_pad", &(const bool){true}, &include_pad));
    for (int i = 0; i < 2; i++)
        pads[i] = pads[2 + i] = padding[i];
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, op_type, &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "kernel_shape", kernel, 2));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "strides", stride, 2));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "pads", pads, 4));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "ceil_mode", ceil_mode));
    if (max)
        YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "dilations", dilation, 2));
    else
        YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "count_include_pad", include_pad));
    return yg__onnx_outputs(cx, o, node);
}

yg_status yg__onnx_sym_max_pool2d(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return pool(cx, node, "MaxPool", true);
}

yg_status yg__onnx_sym_avg_pool2d(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return pool(cx, node, "AveragePool", false);
}

yg_status yg__onnx_sym_dropout(yg_onnx_ctx *cx, const yg_ir_node *node) {
    double p = 0;
    bool train = false;
    YG_RETURN_IF_ERROR(yg__box_double(node, "p", NULL, &p));
    YG_RETURN_IF_ERROR(yg__box_bool(node, "train", NULL, &train));
    if (train && p > 0)
        return yg__onnx_unsupported(cx, node, "train=1 drops at random; export in eval mode");
    return yg__onnx_unary(cx,
                          node,
                          "Identity",
                          yg__onnx_input_name_of(cx, node, 0),
                          yg__onnx_output_name_of(node, 0),
                          NULL);
}

static yg_status cast(yg_onnx_ctx *cx, const yg_ir_node *node, int32_t dtype) {
    yg_onnx_node *o = NULL;
    int32_t to = yg__onnx_dtype(dtype);
    if (to == 0)
        return yg__onnx_unsupported(cx, node, "dtype %d has no ONNX type", (int)dtype);
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Cast", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "to", to));
    return yg__onnx_outputs(cx, o, node);
}

yg_status yg__onnx_sym_to_copy(yg_onnx_ctx *cx, const yg_ir_node *node) {
    yg_dtype d = YG_FLOAT32;
    YG_RETURN_IF_ERROR(yg__box_dtype(node, "dtype", &d));
    return cast(cx, node, d);
}

yg_status yg__onnx_sym_to_dtype(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return yg__onnx_sym_to_copy(cx, node);
}

yg_status yg__onnx_sym_type_as(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int32_t d = input_dtype(node, 1);
    if (d == YG_IR_UNKNOWN)
        return yg__onnx_unsupported(cx, node, "other's dtype is unknown");
    return cast(cx, node, d);
}

/* 0.5 x (1 + erf(x / sqrt 2)), yagrad's exact gelu. */
yg_status yg__onnx_sym_gelu(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int32_t d = input_dtype(node, 0);
    const char *x = yg__onnx_input_name_of(cx, node, 0);
    const char *c = NULL, *half = NULL, *one = NULL, *scaled = NULL, *erf = NULL, *plus = NULL,
               *hx = NULL;
    if (d == YG_IR_UNKNOWN)
        return yg__onnx_unsupported(cx, node, "input dtype unknown");
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, M_SQRT1_2, &c));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, 0.5, &half));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, 1.0, &one));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", x, c, NULL, &scaled));
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Erf", scaled, NULL, &erf));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Add", erf, one, NULL, &plus));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", x, half, NULL, &hx));
    return yg__onnx_binary(cx, node, "Mul", hx, plus, yg__onnx_output_name_of(node, 0), NULL);
}

yg_status yg__onnx_sym_silu(yg_onnx_ctx *cx, const yg_ir_node *node) {
    const char *x = yg__onnx_input_name_of(cx, node, 0), *s = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Sigmoid", x, NULL, &s));
    return yg__onnx_binary(cx, node, "Mul", x, s, yg__onnx_output_name_of(node, 0), NULL);
}

static yg_status not_equal(yg_onnx_ctx *cx, const yg_ir_node *node, const char *other) {
    const char *eq = NULL;
    YG_RETURN_IF_ERROR(
        yg__onnx_binary(cx, node, "Equal", yg__onnx_input_name_of(cx, node, 0), other, NULL, &eq));
    return yg__onnx_unary(cx, node, "Not", eq, yg__onnx_output_name_of(node, 0), NULL);
}

yg_status yg__onnx_sym_ne(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return not_equal(cx, node, yg__onnx_input_name_of(cx, node, 1));
}

yg_status yg__onnx_sym_ne_scalar(yg_onnx_ctx *cx, const yg_ir_node *node) {
    double other = 0;
    const char *c = NULL;
    int32_t d = input_dtype(node, 0);
    YG_RETURN_IF_ERROR(yg__box_double(node, "other", NULL, &other));
    if (d == YG_IR_UNKNOWN)
        return yg__onnx_unsupported(cx, node, "input dtype unknown");
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, d, other, &c));
    return not_equal(cx, node, c);
}

/* The pads are yagrad's (begin, end) pairs from the last dim backwards;
 * ONNX Pad (opset 11: pads as an input) takes every begin, then every
 * end, from the first dim.  mode is ONNX's name: "constant", "reflect" or
 * "edge" (yagrad's replicate).  A negative amount crops in both. */
static yg_status
pad_as(yg_onnx_ctx *cx, const yg_ir_node *node, const char *mode, bool with_value) {
    yg_ir_type x = yg__onnx_input_type(node, 0);
    yg_box_ints pad = {0};
    int64_t pads[2 * YG_MAX_DIMS] = {0};
    double value = 0;
    const char *fill = NULL;
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_require_opset(cx, node, "Pad", 11));
    YG_RETURN_IF_ERROR(yg__box_ints(node, "pad", NULL, YG_BOX_REQUIRED, 0, &pad));
    if (x.kind != YG_IR_TYPE_TENSOR || x.ndim == YG_IR_UNKNOWN || x.dtype == YG_IR_UNKNOWN)
        return yg__onnx_unsupported(cx, node, "the input's rank and dtype must be known");
    if (pad.len % 2 != 0 || pad.len / 2 > x.ndim)
        return yg__onnx_unsupported(
            cx, node, "pad of %d entries for %d dims", (int)pad.len, (int)x.ndim);
    for (int64_t k = 0; k < pad.len / 2; k++) {
        int64_t dim = x.ndim - 1 - k;
        pads[dim] = pad.items[2 * k];
        pads[x.ndim + dim] = pad.items[2 * k + 1];
    }
    if (with_value) {
        YG_RETURN_IF_ERROR(yg__box_double(node, "value", &(const double){0}, &value));
        YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, x.dtype, value, &fill));
    }
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Pad", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, pads, 2 * x.ndim));
    if (fill != NULL)
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, fill));
    YG_RETURN_IF_ERROR(yg__onnx_attr_str(cx, o, "mode", mode));
    return yg__onnx_outputs(cx, o, node);
}

yg_status yg__onnx_sym_constant_pad_nd(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return pad_as(cx, node, "constant", true);
}

yg_status yg__onnx_sym_reflection_pad(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return pad_as(cx, node, "reflect", false);
}

yg_status yg__onnx_sym_replication_pad(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return pad_as(cx, node, "edge", false);
}

/* pad's mode (an enum, named in the node) picks one of the three. */
yg_status yg__onnx_sym_pad(yg_onnx_ctx *cx, const yg_ir_node *node) {
    static const char *const onnx_mode[] = {
        [YG_PAD_MODE_CONSTANT] = "constant",
        [YG_PAD_MODE_REFLECT] = "reflect",
        [YG_PAD_MODE_REPLICATE] = "edge",
    };
    int64_t mode = YG_PAD_MODE_CONSTANT;
    YG_RETURN_IF_ERROR(yg__box_enum(node, "mode", yg_pad_mode_name, &mode, &mode));
    return pad_as(cx, node, onnx_mode[mode], mode == YG_PAD_MODE_CONSTANT);
}
