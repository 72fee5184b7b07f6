/*
 * sym_vision.c - symbolics of the image ops beyond sym_nn.c's 2-d
 * convolution and pooling: transposed convolutions, convolutions with
 * string padding ('valid', 'same'), 1-d and 3-d pooling, adaptive average
 * pooling of equal windows, nearest and bilinear resampling (Resize), and
 * the channel rearrangements (pixel_shuffle, pixel_unshuffle,
 * channel_shuffle).
 *
 * Resize reproduces yagrad's coordinate maps: nearest is "asymmetric"
 * with floor (source = floor(dst * in / out)); bilinear is
 * "align_corners", or "pytorch_half_pixel" with sizes (scale in / out) or
 * with the given scales (scale 1 / s, output floor(in * s)), which is
 * PyTorch's.  Output sizes keep the input's leading dims from Shape, so a
 * dynamic batch stays dynamic.  The rearrangements and 'same' padding
 * need the sizes the graph knows.
 */
#include "jit/ir/boxing.h"
#include "onnx/onnx_gen.h"
#include "onnx/onnx_int.h"
#include "yagrad/enums.h"

#include <string.h>

/* Whether node's input i is absent (None, or past its inputs). */
static bool is_none(const yg_ir_node *node, int64_t i) {
    return i < 0 || i >= node->n_inputs || node->inputs[i]->type.kind == YG_IR_TYPE_NONE;
}

/* An int list attribute of n spatial entries: one entry stands for all
 * of them, an empty list (pooling's stride) for fallback. */
static yg_status spatial(yg_onnx_ctx *cx,
                         const yg_ir_node *node,
                         const char *name,
                         const int64_t *dflt,
                         int64_t dflt_len,
                         const int64_t *fallback,
                         int32_t n,
                         int64_t *out) {
    yg_box_ints v = {0};
    YG_RETURN_IF_ERROR(yg__box_ints(node, name, dflt, dflt_len, 0, &v));
    if (v.len == 0 && fallback != NULL) {
        memcpy(out, fallback, sizeof(int64_t) * (size_t)n);
        return YG_OK;
    }
    if (v.len != 1 && v.len != n)
        return yg__onnx_unsupported(cx, node, "%s needs 1 or %d entries, got %lld", name, (int)n,
                                    (long long)v.len);
    for (int32_t i = 0; i < n; i++)
        out[i] = v.items[v.len == 1 ? 0 : i];
    return YG_OK;
}

/* The input's rank, which must be batched: n spatial dims after N and C. */
static yg_status batched(yg_onnx_ctx *cx, const yg_ir_node *node, int32_t n) {
    yg_ir_type t = yg__onnx_input_type(node, 0);
    if (t.kind != YG_IR_TYPE_TENSOR || t.ndim != n + 2)
        return yg__onnx_unsupported(cx, node, "expected a batched input of %d dims", (int)n + 2);
    return YG_OK;
}

/* ---- convolutions ---- */

/* A Conv or ConvTranspose node (*out) over node's input, weight and
 * bias (when given), with the attributes both share. */
static yg_status conv_node(yg_onnx_ctx *cx,
                           const yg_ir_node *node,
                           const char *op_type,
                           int32_t n,
                           const int64_t *stride,
                           const int64_t *pads,
                           const int64_t *dilation,
                           int64_t groups,
                           yg_onnx_node **out) {
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, op_type, &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 1));
    if (!is_none(node, 2))
        YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 2));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "strides", stride, n));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "pads", pads, 2 * n));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "dilations", dilation, n));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "group", groups));
    *out = o;
    return YG_OK;
}

/* ConvTranspose from conv_transposeNd's attributes (weight [C_in,
 * C_out / groups, k...] is ONNX's layout too). */
static yg_status conv_transpose(yg_onnx_ctx *cx, const yg_ir_node *node, int32_t n) {
    int64_t stride[3], padding[3], out_pad[3], dilation[3], pads[6], groups = 1;
    const int64_t ones[3] = {1, 1, 1}, zeros[3] = {0, 0, 0};
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(spatial(cx, node, "stride", ones, n, NULL, n, stride));
    YG_RETURN_IF_ERROR(spatial(cx, node, "padding", zeros, n, NULL, n, padding));
    YG_RETURN_IF_ERROR(spatial(cx, node, "output_padding", zeros, n, NULL, n, out_pad));
    YG_RETURN_IF_ERROR(spatial(cx, node, "dilation", ones, n, NULL, n, dilation));
    YG_RETURN_IF_ERROR(yg__box_int(node, "groups", &(const int64_t){1}, &groups));
    for (int32_t i = 0; i < n; i++)
        pads[i] = pads[n + i] = padding[i];
    YG_RETURN_IF_ERROR(conv_node(cx, node, "ConvTranspose", n, stride, pads, dilation, groups, &o));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "output_padding", out_pad, n));
    return yg__onnx_outputs(cx, o, node);
}

yg_status yg__onnx_sym_conv_transpose1d(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return conv_transpose(cx, node, 1);
}

yg_status yg__onnx_sym_conv_transpose2d(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return conv_transpose(cx, node, 2);
}

yg_status yg__onnx_sym_conv_transpose3d(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return conv_transpose(cx, node, 3);
}

/* Conv with padding 'valid' (none) or 'same': dilation (k - 1) split with
 * the odd one on the end side, as yagrad and PyTorch pad; the kernel
 * sizes come from the weight's type. */
static yg_status conv_padding(yg_onnx_ctx *cx, const yg_ir_node *node, int32_t n) {
    int64_t stride[3], dilation[3], pads[6] = {0}, groups = 1, mode = 0;
    const int64_t ones[3] = {1, 1, 1};
    yg_ir_type w = yg__onnx_input_type(node, 1);
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(spatial(cx, node, "stride", ones, n, NULL, n, stride));
    YG_RETURN_IF_ERROR(spatial(cx, node, "dilation", ones, n, NULL, n, dilation));
    YG_RETURN_IF_ERROR(yg__box_int(node, "groups", &(const int64_t){1}, &groups));
    YG_RETURN_IF_ERROR(yg__box_enum(node, "padding", yg_conv_padding_name,
                                    &(const int64_t){YG_CONV_PADDING_VALID}, &mode));
    if (mode == YG_CONV_PADDING_SAME) {
        if (w.kind != YG_IR_TYPE_TENSOR || w.ndim != n + 2)
            return yg__onnx_unsupported(cx, node, "the weight's sizes are unknown");
        for (int32_t i = 0; i < n; i++) {
            if (w.sizes[2 + i] == YG_IR_UNKNOWN)
                return yg__onnx_unsupported(cx, node, "the weight's sizes are unknown");
            int64_t total = dilation[i] * (w.sizes[2 + i] - 1);
            pads[i] = total / 2;
            pads[n + i] = total - total / 2;
        }
    }
    YG_RETURN_IF_ERROR(conv_node(cx, node, "Conv", n, stride, pads, dilation, groups, &o));
    return yg__onnx_outputs(cx, o, node);
}

yg_status yg__onnx_sym_conv1d_padding(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return conv_padding(cx, node, 1);
}

yg_status yg__onnx_sym_conv2d_padding(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return conv_padding(cx, node, 2);
}

yg_status yg__onnx_sym_conv3d_padding(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return conv_padding(cx, node, 3);
}

/* ---- pooling ---- */

static yg_status pool_outputs(yg_onnx_ctx *cx, const yg_ir_node *node, yg_onnx_node *o, int32_t n);

/* MaxPool or AveragePool over n spatial dims of a batched input. */
static yg_status pool(yg_onnx_ctx *cx, const yg_ir_node *node, int32_t n, bool max) {
    int64_t kernel[3], stride[3], padding[3], dilation[3], pads[6];
    const int64_t zero[1] = {0}, one[1] = {1};
    bool ceil_mode = false, include_pad = true;
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(batched(cx, node, n));
    YG_RETURN_IF_ERROR(spatial(cx, node, "kernel_size", NULL, YG_BOX_REQUIRED, NULL, n, kernel));
    YG_RETURN_IF_ERROR(spatial(cx, node, "stride", NULL, 0, kernel, n, stride));
    YG_RETURN_IF_ERROR(spatial(cx, node, "padding", zero, 1, NULL, n, padding));
    YG_RETURN_IF_ERROR(yg__box_bool(node, "ceil_mode", &(const bool){false}, &ceil_mode));
    if (max) {
        YG_RETURN_IF_ERROR(spatial(cx, node, "dilation", one, 1, NULL, n, dilation));
    } else {
        int64_t buf = 0;
        const int64_t *divisor = NULL;
        YG_RETURN_IF_ERROR(
            yg__box_bool(node, "count_include_pad", &(const bool){true}, &include_pad));
        if (yg__ir_op_has_attr_arg(node->op, "divisor_override"))
            YG_RETURN_IF_ERROR(
                yg__box_int_opt(node, "divisor_override", NULL, &buf, &divisor));
        if (divisor != NULL)
            return yg__onnx_unsupported(cx, node, "AveragePool has no divisor_override");
    }
    for (int32_t i = 0; i < n; i++)
        pads[i] = pads[n + i] = padding[i];
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, max ? "MaxPool" : "AveragePool", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "kernel_shape", kernel, n));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "strides", stride, n));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "pads", pads, 2 * n));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "ceil_mode", ceil_mode));
    if (max)
        YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "dilations", dilation, n));
    else
        YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "count_include_pad", include_pad));
    return pool_outputs(cx, node, o, n);
}

/* The outputs of a MaxPool/AveragePool o: the values, and MaxPool's
 * indices when node has them: ONNX's count over N*C*(D*)H*W, yagrad's
 * within each plane, so modulo the plane's size (which the graph must
 * know). */
static yg_status pool_outputs(yg_onnx_ctx *cx, const yg_ir_node *node, yg_onnx_node *o, int32_t n) {
    YG_RETURN_IF_ERROR(yg__onnx_output(cx, o, node, 0));
    if (node->n_outputs < 2)
        return YG_OK;
    yg_ir_type t = yg__onnx_input_type(node, 0);
    int64_t plane = 1;
    const char *flat = NULL, *size = NULL;
    for (int32_t i = 0; i < n; i++) {
        if (t.sizes[2 + i] == YG_IR_UNKNOWN)
            return yg__onnx_unsupported(cx, node, "indices need the spatial sizes");
        plane *= t.sizes[2 + i];
    }
    YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "flat", &flat));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, YG_INT64, (double)plane, &size));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Mod", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, flat));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, size));
    return yg__onnx_output(cx, o, node, 1);
}

yg_status yg__onnx_sym_max_pool1d(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return pool(cx, node, 1, true);
}

yg_status yg__onnx_sym_max_pool3d(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return pool(cx, node, 3, true);
}

yg_status yg__onnx_sym_max_pool1d_with_indices(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return pool(cx, node, 1, true);
}

yg_status yg__onnx_sym_max_pool2d_with_indices(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return pool(cx, node, 2, true);
}

yg_status yg__onnx_sym_max_pool3d_with_indices(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return pool(cx, node, 3, true);
}

yg_status yg__onnx_sym_avg_pool1d(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return pool(cx, node, 1, false);
}

yg_status yg__onnx_sym_avg_pool3d(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return pool(cx, node, 3, false);
}

/* Global{Average,Max}Pool when every output size is 1 (and no indices
 * are asked for); {Average,Max}Pool when each output cell covers an
 * equal window (input sizes multiples of the output's), as PyTorch's
 * exporter does; unequal windows are refused. */
static yg_status adaptive(yg_onnx_ctx *cx, const yg_ir_node *node, int32_t n, bool max) {
    yg_box_ints size = {0};
    int64_t k[3];
    bool global = node->n_outputs == 1;
    yg_ir_type t = yg__onnx_input_type(node, 0);
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(batched(cx, node, n));
    YG_RETURN_IF_ERROR(yg__box_ints(node, "output_size", NULL, YG_BOX_REQUIRED, 0, &size));
    if (size.len != 1 && size.len != n)
        return yg__onnx_unsupported(cx, node, "output_size needs 1 or %d entries", (int)n);
    for (int32_t i = 0; i < n; i++) {
        int64_t in = t.sizes[2 + i], out = size.items[size.len == 1 ? 0 : i];
        global &= out == 1;
        if (in == YG_IR_UNKNOWN || out <= 0 || in % out != 0)
            global = false, k[i] = -1;
        else
            k[i] = in / out;
    }
    if (global) {
        YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, max ? "GlobalMaxPool" : "GlobalAveragePool", &o));
        YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
        return yg__onnx_outputs(cx, o, node);
    }
    for (int32_t i = 0; i < n; i++)
        if (k[i] < 0)
            return yg__onnx_unsupported(
                cx, node, "unequal adaptive windows (input size not a multiple of output_size)");
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, max ? "MaxPool" : "AveragePool", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "kernel_shape", k, n));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "strides", k, n));
    return pool_outputs(cx, node, o, n);
}

yg_status yg__onnx_sym_adaptive_avg_pool1d(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return adaptive(cx, node, 1, false);
}

yg_status yg__onnx_sym_adaptive_avg_pool3d(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return adaptive(cx, node, 3, false);
}

yg_status yg__onnx_sym_adaptive_avg_pool2d(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return adaptive(cx, node, 2, false);
}

yg_status yg__onnx_sym_adaptive_max_pool2d(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return adaptive(cx, node, 2, true);
}

/* ---- resampling ---- */

/* The sizes input of a Resize to out (2 entries) over the last two dims:
 * the input's leading dims from Shape (dynamic), then out. */
static yg_status resize_sizes(yg_onnx_ctx *cx,
                              const yg_ir_node *node,
                              const int64_t out[2],
                              const char **sizes) {
    yg_ir_type t = yg__onnx_input_type(node, 0);
    const char *shape = NULL, *lead = NULL, *tail = NULL;
    yg_onnx_node *o = NULL;
    if (t.kind != YG_IR_TYPE_TENSOR || t.ndim == YG_IR_UNKNOWN || t.ndim < 3)
        return yg__onnx_unsupported(cx, node, "expected self of 3 or 4 dims");
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Shape", yg__onnx_input_name_of(cx, node, 0), NULL,
                                      &shape));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Slice", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, shape));
    YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, (const int64_t[]){0}, 1));
    YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, (const int64_t[]){t.ndim - 2}, 1));
    YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "lead", &lead));
    YG_RETURN_IF_ERROR(yg__onnx_const_ints(cx, out, 2, &tail));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Concat", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, lead));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, tail));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "axis", 0));
    return yg__onnx_output_fresh(cx, o, node, "sizes", sizes);
}

/* A float32 scales input: 1 for the leading dims, then s[2]. */
static yg_status resize_scales(yg_onnx_ctx *cx,
                               const yg_ir_node *node,
                               const double s[2],
                               const char **scales) {
    yg_ir_type t = yg__onnx_input_type(node, 0);
    int64_t n = t.ndim;
    if (t.kind != YG_IR_TYPE_TENSOR || n == YG_IR_UNKNOWN || n < 3 || n > YG_MAX_DIMS)
        return yg__onnx_unsupported(cx, node, "expected self of 3 or 4 dims");
    float *v = yg__onnx_alloc(cx, sizeof(float) * (size_t)n);
    *scales = yg__onnx_fresh_name(cx, "const", "scales");
    if (v == NULL || *scales == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "onnx_export: out of memory");
    for (int64_t i = 0; i < n; i++)
        v[i] = i < n - 2 ? 1.0f : (float)s[i - (n - 2)];
    return yg__onnx_add_initializer(cx, *scales, YG_FLOAT32, &n, 1, v, sizeof(float) * (size_t)n);
}

/* Resize(self, roi absent, scales or sizes) with mode and coordinate map. */
static yg_status resize(yg_onnx_ctx *cx,
                        const yg_ir_node *node,
                        const char *scales,
                        const char *sizes,
                        const char *mode,
                        const char *coords) {
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Resize", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, ""));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, scales != NULL ? scales : ""));
    if (sizes != NULL)
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, sizes));
    YG_RETURN_IF_ERROR(yg__onnx_attr_str(cx, o, "mode", mode));
    YG_RETURN_IF_ERROR(yg__onnx_attr_str(cx, o, "coordinate_transformation_mode", coords));
    if (strcmp(mode, "nearest") == 0)
        YG_RETURN_IF_ERROR(yg__onnx_attr_str(cx, o, "nearest_mode", "floor"));
    return yg__onnx_outputs(cx, o, node);
}

/* Two output sizes from an int list of 1 or 2 entries. */
static yg_status two(yg_onnx_ctx *cx, const yg_ir_node *node, const yg_box_ints *v, int64_t o[2]) {
    if (v->len != 1 && v->len != 2)
        return yg__onnx_unsupported(cx, node, "expected 1 or 2 output sizes, got %lld",
                                    (long long)v->len);
    o[0] = v->items[0];
    o[1] = v->items[v->len - 1];
    return YG_OK;
}

yg_status yg__onnx_sym_upsample_nearest2d(yg_onnx_ctx *cx, const yg_ir_node *node) {
    yg_box_ints size = {0};
    int64_t out[2];
    const char *sizes = NULL;
    YG_RETURN_IF_ERROR(yg__box_ints(node, "output_size", NULL, YG_BOX_REQUIRED, 0, &size));
    YG_RETURN_IF_ERROR(two(cx, node, &size, out));
    YG_RETURN_IF_ERROR(resize_sizes(cx, node, out, &sizes));
    return resize(cx, node, NULL, sizes, "nearest", "asymmetric");
}

/* Bilinear to output_size or by the scales (see the top). */
static yg_status bilinear(yg_onnx_ctx *cx,
                          const yg_ir_node *node,
                          const yg_box_ints *size,
                          const double *sh,
                          const double *sw,
                          bool align_corners) {
    const char *coords = align_corners ? "align_corners" : "pytorch_half_pixel";
    if (size->len > 0) {
        int64_t out[2];
        const char *sizes = NULL;
        if (!align_corners && (sh != NULL || sw != NULL))
            return yg__onnx_unsupported(cx, node, "output_size with scales maps by the scales, "
                                                  "which Resize with sizes does not");
        YG_RETURN_IF_ERROR(two(cx, node, size, out));
        YG_RETURN_IF_ERROR(resize_sizes(cx, node, out, &sizes));
        return resize(cx, node, NULL, sizes, "linear", coords);
    }
    if (sh == NULL || sw == NULL)
        return yg__onnx_unsupported(cx, node, "no output_size and no scales");
    const char *scales = NULL;
    YG_RETURN_IF_ERROR(resize_scales(cx, node, (const double[]){*sh, *sw}, &scales));
    return resize(cx, node, scales, NULL, "linear", coords);
}

yg_status yg__onnx_sym_upsample_bilinear2d(yg_onnx_ctx *cx, const yg_ir_node *node) {
    yg_box_ints size = {0};
    bool align = false;
    double bh = 0, bw = 0;
    const double *sh = NULL, *sw = NULL;
    YG_RETURN_IF_ERROR(yg__box_ints(node, "output_size", NULL, YG_BOX_REQUIRED, 0, &size));
    YG_RETURN_IF_ERROR(yg__box_bool(node, "align_corners", NULL, &align));
    YG_RETURN_IF_ERROR(yg__box_double_opt(node, "scales_h", NULL, &bh, &sh));
    YG_RETURN_IF_ERROR(yg__box_double_opt(node, "scales_w", NULL, &bw, &sw));
    return bilinear(cx, node, &size, sh, sw, align);
}

/* interpolate: nearest maps by in / out, so a scale_factor becomes the
 * sizes floor(in * s) (which the graph must know); bilinear as
 * upsample_bilinear2d. */
yg_status yg__onnx_sym_interpolate(yg_onnx_ctx *cx, const yg_ir_node *node) {
    yg_box_ints size = {0};
    int64_t mode = 0, out[2];
    bool align = false;
    double buf = 0;
    const double *s = NULL;
    const char *sizes = NULL;
    yg_ir_type t = yg__onnx_input_type(node, 0);
    YG_RETURN_IF_ERROR(yg__box_ints(node, "size", NULL, 0, 0, &size));
    YG_RETURN_IF_ERROR(yg__box_double_opt(node, "scale_factor", NULL, &buf, &s));
    YG_RETURN_IF_ERROR(yg__box_enum(node, "mode", yg_interpolation_mode_name,
                                    &(const int64_t){YG_INTERPOLATION_MODE_NEAREST}, &mode));
    YG_RETURN_IF_ERROR(yg__box_bool(node, "align_corners", &(const bool){false}, &align));
    if ((size.len > 0) == (s != NULL))
        return yg__onnx_unsupported(cx, node, "give either size or scale_factor");
    if (mode == YG_INTERPOLATION_MODE_BILINEAR)
        return bilinear(cx, node, &size, s, s, align);
    if (size.len > 0) {
        YG_RETURN_IF_ERROR(two(cx, node, &size, out));
    } else {
        for (int i = 0; i < 2; i++) {
            int64_t in = t.kind == YG_IR_TYPE_TENSOR && t.ndim >= 3 ? t.sizes[t.ndim - 2 + i]
                                                                    : YG_IR_UNKNOWN;
            if (in == YG_IR_UNKNOWN)
                return yg__onnx_unsupported(cx, node, "scale_factor over spatial sizes the "
                                                      "graph does not know");
            out[i] = (int64_t)((double)in * *s);
        }
    }
    YG_RETURN_IF_ERROR(resize_sizes(cx, node, out, &sizes));
    return resize(cx, node, NULL, sizes, "nearest", "asymmetric");
}

/* ---- channel rearrangements ---- */

/* Reshape(x, shape) into out_name or a fresh name. */
static yg_status reshape(yg_onnx_ctx *cx,
                         const yg_ir_node *node,
                         const char *x,
                         const int64_t *shape,
                         int64_t n,
                         const char *out_name,
                         const char **out) {
    const char *s = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_const_ints(cx, shape, n, &s));
    return yg__onnx_binary(cx, node, "Reshape", x, s, out_name, out);
}

/* Transpose(x, perm) into a fresh name. */
static yg_status transpose(yg_onnx_ctx *cx,
                           const yg_ir_node *node,
                           const char *x,
                           const int64_t *perm,
                           int64_t n,
                           const char **out) {
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Transpose", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, x));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "perm", perm, n));
    return yg__onnx_output_fresh(cx, o, node, "t", out);
}

/* The [N, C, H, W] sizes of a 4-d input the graph knows. */
static yg_status known_nchw(yg_onnx_ctx *cx, const yg_ir_node *node, int64_t s[4]) {
    yg_ir_type t = yg__onnx_input_type(node, 0);
    if (t.kind != YG_IR_TYPE_TENSOR || t.ndim != 4)
        return yg__onnx_unsupported(cx, node, "expected a 4-d input of known sizes");
    for (int i = 0; i < 4; i++) {
        if (t.sizes[i] == YG_IR_UNKNOWN)
            return yg__onnx_unsupported(cx, node, "expected a 4-d input of known sizes");
        s[i] = t.sizes[i];
    }
    return YG_OK;
}

/* DepthToSpace in CRD order: channel c r^2 + i r + j to (c, h r + i, w r + j). */
yg_status yg__onnx_sym_pixel_shuffle(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int64_t r = 1;
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(batched(cx, node, 2));
    YG_RETURN_IF_ERROR(yg__box_int(node, "upscale_factor", NULL, &r));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "DepthToSpace", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "blocksize", r));
    YG_RETURN_IF_ERROR(yg__onnx_attr_str(cx, o, "mode", "CRD"));
    return yg__onnx_outputs(cx, o, node);
}

/* The inverse, in the same order (SpaceToDepth has DCR's only):
 * [N, C, H/r, r, W/r, r] -> [N, C, r, r, H/r, W/r] -> [N, C r^2, H/r, W/r]. */
yg_status yg__onnx_sym_pixel_unshuffle(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int64_t r = 1, s[4];
    const char *a = NULL, *b = NULL;
    YG_RETURN_IF_ERROR(known_nchw(cx, node, s));
    YG_RETURN_IF_ERROR(yg__box_int(node, "downscale_factor", NULL, &r));
    if (r < 1 || s[2] % r != 0 || s[3] % r != 0)
        return yg__onnx_unsupported(cx, node, "spatial sizes not multiples of %lld", (long long)r);
    YG_RETURN_IF_ERROR(reshape(cx, node, yg__onnx_input_name_of(cx, node, 0),
                               (const int64_t[]){s[0], s[1], s[2] / r, r, s[3] / r, r}, 6, NULL,
                               &a));
    YG_RETURN_IF_ERROR(transpose(cx, node, a, (const int64_t[]){0, 1, 3, 5, 2, 4}, 6, &b));
    return reshape(cx, node, b, (const int64_t[]){s[0], s[1] * r * r, s[2] / r, s[3] / r}, 4,
                   yg__onnx_output_name_of(node, 0), NULL);
}

/* [N, g, C/g, H, W] -> [N, C/g, g, H, W] -> [N, C, H, W]. */
yg_status yg__onnx_sym_channel_shuffle(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int64_t g = 1, s[4];
    const char *a = NULL, *b = NULL;
    YG_RETURN_IF_ERROR(known_nchw(cx, node, s));
    YG_RETURN_IF_ERROR(yg__box_int(node, "groups", NULL, &g));
    if (g < 1 || s[1] % g != 0)
        return yg__onnx_unsupported(cx, node, "channels not a multiple of groups");
    YG_RETURN_IF_ERROR(reshape(cx, node, yg__onnx_input_name_of(cx, node, 0),
                               (const int64_t[]){s[0], g, s[1] / g, s[2], s[3]}, 5, NULL, &a));
    YG_RETURN_IF_ERROR(transpose(cx, node, a, (const int64_t[]){0, 2, 1, 3, 4}, 5, &b));
    return reshape(cx, node, b, s, 4, yg__onnx_output_name_of(node, 0), NULL);
}

/* The _to forms (adjoints in double backward): to the last two entries
 * of sizes. */
static yg_status last_two(yg_onnx_ctx *cx, const yg_ir_node *node, yg_box_ints *v) {
    YG_RETURN_IF_ERROR(yg__box_ints(node, "sizes", NULL, YG_BOX_REQUIRED, 0, v));
    if (v->len < 2)
        return yg__onnx_unsupported(cx, node, "sizes needs at least 2 entries");
    v->items += v->len - 2;
    v->len = 2;
    return YG_OK;
}

yg_status yg__onnx_sym_upsample_nearest2d_to(yg_onnx_ctx *cx, const yg_ir_node *node) {
    yg_box_ints size = {0};
    const char *sizes = NULL;
    YG_RETURN_IF_ERROR(last_two(cx, node, &size));
    YG_RETURN_IF_ERROR(resize_sizes(cx, node, size.items, &sizes));
    return resize(cx, node, NULL, sizes, "nearest", "asymmetric");
}

yg_status yg__onnx_sym_upsample_bilinear2d_to(yg_onnx_ctx *cx, const yg_ir_node *node) {
    yg_box_ints size = {0};
    bool align = false;
    double bh = 0, bw = 0;
    const double *sh = NULL, *sw = NULL;
    YG_RETURN_IF_ERROR(last_two(cx, node, &size));
    YG_RETURN_IF_ERROR(yg__box_bool(node, "align_corners", NULL, &align));
    YG_RETURN_IF_ERROR(yg__box_double_opt(node, "scales_h", NULL, &bh, &sh));
    YG_RETURN_IF_ERROR(yg__box_double_opt(node, "scales_w", NULL, &bw, &sw));
    return bilinear(cx, node, &size, sh, sw, align);
}
