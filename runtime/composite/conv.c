/*
 * composite/conv.c - the convolution front ends (conv1d/2d/3d, their
 * string-padding overloads, conv_transpose1d/2d/3d), convolution, and
 * convolution_backward.
 *
 * The front ends check their arguments with the caller's own rank
 * (conv/params.c; the generated wrapper prefixes the op's name, so a bad
 * weight reads `conv2d: weight of sizes ...`), accept unbatched input
 * [C, *spatial] by adding and removing a batch dim, and call
 * convolution, which calls convolution_dispatch: the op with the
 * derivative entry and the backend choice (runtime/conv/).
 *
 * convolution_backward runs the backend's fused backward when nothing
 * records (conv/dispatch.c: one call, only the masked gradients).  When
 * its result must stay differentiable (create_graph, a trace) it is
 * written as convolutions instead, as ATen's _convolution_double_backward
 * is: grad_input is the adjoint convolution of grad_output (transposed
 * for an ordinary convolution, ordinary for a transposed one),
 * grad_weight a convolution of input by grad_output per group with the
 * batch as channels (stride and dilation swapped, then cropped to the
 * kernel), grad_bias a sum; all of them differentiate again.
 */
#include "conv/conv.h"
#include "decls/convolution.h"
#include "decls/convolution_general.h"

#include "composite/composite.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_slicing.h"
#include "yagrad/ops_join_split.h"
#include "yagrad/ops_padding.h"
#include "yagrad/ops_convolution.h"
#include "yagrad/ops_convolution_general.h"

#include <stdio.h>
#include <string.h>

/* Every front end: validate with n spatial dims (unbatched input gets a
 * batch dim of 1 first), then convolution. */
static yg_status front(int32_t n,
                       const yg_tensor *input,
                       const yg_tensor *weight,
                       const yg_tensor *bias,
                       const int64_t *stride,
                       const int64_t *padding,
                       const int64_t *dilation,
                       bool transposed,
                       const int64_t *output_padding,
                       int64_t groups,
                       yg_tensor **out) {
    yg_conv_params p;
    yg_tensor *x = NULL, *y = NULL;
    const int64_t zeros[3] = {0, 0, 0};
    const int64_t *op = output_padding != NULL ? output_padding : zeros;
    bool unbatched = yg_tensor_ndim(input) == n + 1;
    yg_status st = YG_OK;

    *out = NULL;
    if (unbatched)
        st = yg_unsqueeze(input, 0, &x);
    if (st != YG_OK)
        return st;
    const yg_tensor *in = unbatched ? x : input;
    st = yg__conv_params_init(
        in, weight, bias, n, stride, n, padding, n, dilation, n, transposed, op, n, groups, &p);
    if (st == YG_OK)
        st = yg_convolution(
            in, weight, bias, stride, n, padding, n, dilation, n, transposed, op, n, groups, &y);
    if (st == YG_OK && unbatched)
        st = yg_squeeze_dim(y, 0, out);
    else if (st == YG_OK)
        *out = yg_retain(y);
    yg_release(x);
    yg_release(y);
    return st;
}

/* padding valid or same (same: stride 1; the odd element of a pad goes
 * right, as in PyTorch).  padding was checked by the generated entry
 * point. */
static yg_status front_rule(int32_t n,
                           const yg_tensor *input,
                           const yg_tensor *weight,
                           const yg_tensor *bias,
                           const int64_t *stride,
                           int64_t padding,
                           const int64_t *dilation,
                           int64_t groups,
                           yg_tensor **out) {
    int64_t pad[3] = {0, 0, 0}, extra[6] = {0, 0, 0, 0, 0, 0};
    bool odd = false;
    yg_tensor *x = NULL;
    yg_status st;
    char buf[64];

    *out = NULL;
    if (padding == YG_CONV_PADDING_VALID)
        return front(n, input, weight, bias, stride, pad, dilation, false, NULL, groups, out);
    for (int32_t i = 0; i < n; i++) {
        if (stride[i] != 1)
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "padding same needs stride 1, got stride %s",
                            yg__format_sizes(stride, n, buf, sizeof buf));
    }
    if (yg_tensor_ndim(weight) != n + 2)
        return front(n, input, weight, bias, stride, pad, dilation, false, NULL, groups, out);
    for (int32_t i = 0; i < n; i++) {
        int64_t total, k = yg_tensor_size(weight, 2 + i);
        /* A dilation or kernel the convolution refuses, or a padding
         * beyond int64: left to its checks and messages (conv/params.c). */
        if (dilation[i] < 1 || k < 1 || !yg__mul_ok(dilation[i], k - 1, &total))
            return front(n, input, weight, bias, stride, pad, dilation, false, NULL, groups, out);
        pad[i] = total / 2;
        extra[2 * (n - 1 - i) + 1] = total % 2; /* constant_pad_nd: last dim first */
        odd = odd || total % 2 != 0;
    }
    if (!odd)
        return front(n, input, weight, bias, stride, pad, dilation, false, NULL, groups, out);
    st = yg_constant_pad_nd(input, extra, 2 * n, 0, &x);
    if (st == YG_OK)
        st = front(n, x, weight, bias, stride, pad, dilation, false, NULL, groups, out);
    yg_release(x);
    return st;
}

#define CONV_FRONT(N)                                                                              \
    yg_status yg__composite_conv##N##d(const yg_tensor *input,                                     \
                                       const yg_tensor *weight,                                    \
                                       const yg_tensor *bias,                                      \
                                       const int64_t *stride,                                      \
                                       int64_t stride_len,                                         \
                                       const int64_t *padding,                                     \
                                       int64_t padding_len,                                        \
                                       const int64_t *dilation,                                    \
                                       int64_t dilation_len,                                       \
                                       int64_t groups,                                             \
                                       yg_tensor **out) {                                          \
        (void)stride_len, (void)padding_len, (void)dilation_len; /* int[N]: checked */             \
        return front(N, input, weight, bias, stride, padding, dilation, false, NULL, groups, out); \
    }                                                                                              \
    yg_status yg__composite_conv##N##d_padding(const yg_tensor *input,                             \
                                               const yg_tensor *weight,                            \
                                               const yg_tensor *bias,                              \
                                               const int64_t *stride,                              \
                                               int64_t stride_len,                                 \
                                               int64_t padding,                                    \
                                               const int64_t *dilation,                            \
                                               int64_t dilation_len,                               \
                                               int64_t groups,                                     \
                                               yg_tensor **out) {                                  \
        (void)stride_len, (void)dilation_len;                                                      \
        return front_rule(N, input, weight, bias, stride, padding, dilation, groups, out);         \
    }                                                                                              \
    yg_status yg__composite_conv_transpose##N##d(const yg_tensor *input,                           \
                                                 const yg_tensor *weight,                          \
                                                 const yg_tensor *bias,                            \
                                                 const int64_t *stride,                            \
                                                 int64_t stride_len,                               \
                                                 const int64_t *padding,                           \
                                                 int64_t padding_len,                              \
                                                 const int64_t *output_padding,                    \
                                                 int64_t output_padding_len,                       \
                                                 int64_t groups,                                   \
                                                 const int64_t *dilation,                          \
                                                 int64_t dilation_len,                             \
                                                 yg_tensor **out) {                                \
        (void)stride_len, (void)padding_len, (void)output_padding_len, (void)dilation_len;         \
        return front(                                                                              \
            N, input, weight, bias, stride, padding, dilation, true, output_padding, groups, out); \
    }

CONV_FRONT(1)
CONV_FRONT(2)
CONV_FRONT(3)

yg_status yg__composite_convolution(const yg_tensor *input,
                                    const yg_tensor *weight,
                                    const yg_tensor *bias,
                                    const int64_t *stride,
                                    int64_t stride_len,
                                    const int64_t *padding,
                                    int64_t padding_len,
                                    const int64_t *dilation,
                                    int64_t dilation_len,
                                    bool transposed,
                                    const int64_t *output_padding,
                                    int64_t output_padding_len,
                                    int64_t groups,
                                    yg_tensor **out) {
    yg_conv_params p;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__conv_params_init(input,
                                            weight,
                                            bias,
                                            0,
                                            stride,
                                            stride_len,
                                            padding,
                                            padding_len,
                                            dilation,
                                            dilation_len,
                                            transposed,
                                            output_padding,
                                            output_padding_len,
                                            groups,
                                            &p));
    return yg_convolution_dispatch(input,
                                   weight,
                                   bias,
                                   stride,
                                   stride_len,
                                   padding,
                                   padding_len,
                                   dilation,
                                   dilation_len,
                                   transposed,
                                   output_padding,
                                   output_padding_len,
                                   groups,
                                   false,
                                   false,
                                   true,
                                   out);
}

/* The weight gradient of the ordinary convolution p describes, as
 * convolutions: ys is its y side [N, cy, *Y], xs its x side. */
static yg_status
weight_parts(const yg_conv_params *p, const yg_tensor *ys, const yg_tensor *xs, yg_tensor **out) {
    int32_t n = p->n_spatial, off = 3 - n;
    int64_t cxg = p->cx / p->groups, cyg = p->cy / p->groups, zeros[3] = {0, 0, 0};
    int64_t stride[3], pad[3], dil[3];
    yg_tensor *parts[64] = {NULL};
    yg_tensor *a = NULL, *at = NULL, *b = NULL, *bt = NULL, *r = NULL, *c = NULL;
    yg_status st = YG_OK;

    *out = NULL;
    if (p->groups > 64)
        return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                        "double backward of convolutions with more than 64 groups");
    for (int32_t i = 0; i < n; i++) {
        stride[i] = p->dil[off + i];
        pad[i] = p->pad[off + i];
        dil[i] = p->stride[off + i];
    }
    for (int64_t g = 0; g < p->groups && st == YG_OK; g++) {
        st = yg_narrow(xs, 1, g * cxg, cxg, &a);
        if (st == YG_OK)
            st = yg_transpose(a, 0, 1, &at);
        if (st == YG_OK)
            st = yg_narrow(ys, 1, g * cyg, cyg, &b);
        if (st == YG_OK)
            st = yg_transpose(b, 0, 1, &bt);
        if (st == YG_OK)
            st = yg_convolution(at, bt, NULL, stride, n, pad, n, dil, n, false, zeros, n, 1, &r);
        for (int32_t i = 0; i < n && st == YG_OK; i++) {
            st = yg_narrow(r, 2 + i, 0, p->k[off + i], &c);
            yg_release(r);
            r = c;
            c = NULL;
        }
        if (st == YG_OK)
            st = yg_transpose(r, 0, 1, &parts[g]);
        yg_release(a);
        yg_release(at);
        yg_release(b);
        yg_release(bt);
        yg_release(r);
        a = at = b = bt = r = NULL;
    }
    if (st == YG_OK)
        st = yg_cat((const yg_tensor *const *)parts, p->groups, 0, out);
    for (int64_t g = 0; g < p->groups; g++)
        yg_release(parts[g]);
    return st;
}

/* convolution_backward as differentiable ops (see the top). */
static yg_status backward_parts(const yg_conv_params *p,
                                const yg_tensor *grad_output,
                                const yg_tensor *input,
                                const yg_tensor *weight,
                                const int64_t *stride,
                                const int64_t *padding,
                                const int64_t *dilation,
                                const int64_t *output_padding,
                                const bool *mask,
                                yg_tensor **gi,
                                yg_tensor **gw,
                                yg_tensor **gb) {
    int32_t n = p->n_spatial, off = 3 - n;
    int64_t op[3], dims[4] = {0, 2, 3, 4};
    yg_status st = YG_OK;

    for (int32_t i = 0; i < n; i++) /* what makes the adjoint's output input's size */
        op[i] = p->x[off + i] - ((p->y[off + i] - 1) * p->stride[off + i] - 2 * p->pad[off + i] +
                                 p->dil[off + i] * (p->k[off + i] - 1) + 1);
    if (mask[0])
        st = yg_convolution(grad_output,
                            weight,
                            NULL,
                            stride,
                            n,
                            padding,
                            n,
                            dilation,
                            n,
                            !p->transposed,
                            p->transposed ? output_padding : op,
                            n,
                            p->groups,
                            gi);
    if (st == YG_OK && mask[1])
        st = p->transposed ? weight_parts(p, input, grad_output, gw)
                           : weight_parts(p, grad_output, input, gw);
    if (st == YG_OK && mask[2])
        st = yg_sum_dim(grad_output, dims, n + 1, false, gb);
    return st;
}

yg_status yg__composite_convolution_backward(const yg_tensor *grad_output,
                                             const yg_tensor *input,
                                             const yg_tensor *weight,
                                             const int64_t *stride,
                                             int64_t stride_len,
                                             const int64_t *padding,
                                             int64_t padding_len,
                                             const int64_t *dilation,
                                             int64_t dilation_len,
                                             bool transposed,
                                             const int64_t *output_padding,
                                             int64_t output_padding_len,
                                             int64_t groups,
                                             const bool *output_mask,
                                             yg_tensor **out_grad_input,
                                             yg_tensor **out_grad_weight,
                                             yg_tensor **out_grad_bias) {
    const yg_tensor *tensors[3] = {grad_output, input, weight};
    yg_tensor *gi = NULL, *gw = NULL, *gb = NULL;
    int64_t sizes[5];
    yg_conv_params p;
    yg_status st;
    char gbuf[160], ebuf[160];

    *out_grad_input = NULL;
    *out_grad_weight = NULL;
    *out_grad_bias = NULL;
    YG_RETURN_IF_ERROR(yg__conv_params_init(input,
                                            weight,
                                            NULL,
                                            0,
                                            stride,
                                            stride_len,
                                            padding,
                                            padding_len,
                                            dilation,
                                            dilation_len,
                                            transposed,
                                            output_padding,
                                            output_padding_len,
                                            groups,
                                            &p));
    yg__conv_output_sizes(&p, sizes);
    if (yg_tensor_ndim(grad_output) != p.n_spatial + 2 ||
        memcmp(yg_tensor_sizes(grad_output), sizes, sizeof(int64_t) * (size_t)(p.n_spatial + 2)) !=
            0)
        return yg__fail(
            YG_ERR_SHAPE,
            "expected grad_output of the output's sizes %s, got %s",
            yg__format_sizes(sizes, p.n_spatial + 2, ebuf, sizeof ebuf),
            yg__format_sizes(
                yg_tensor_sizes(grad_output), yg_tensor_ndim(grad_output), gbuf, sizeof gbuf));
    if (yg_tensor_dtype(grad_output) != p.dtype)
        return yg__fail(YG_ERR_DTYPE,
                        "expected grad_output of input's dtype %s, got %s",
                        yg_dtype_name(p.dtype),
                        yg_dtype_name(yg_tensor_dtype(grad_output)));
    if (!yg__composite_needs_parts(tensors, 3) || p.batch == 0)
        return yg__conv_backward(grad_output,
                                 input,
                                 weight,
                                 &p,
                                 output_mask,
                                 out_grad_input,
                                 out_grad_weight,
                                 out_grad_bias);
    st = backward_parts(&p,
                        grad_output,
                        input,
                        weight,
                        stride,
                        padding,
                        dilation,
                        output_padding,
                        output_mask,
                        &gi,
                        &gw,
                        &gb);
    if (st != YG_OK) {
        yg_release(gi);
        yg_release(gw);
        yg_release(gb);
        return st;
    }
    *out_grad_input = gi;
    *out_grad_weight = gw;
    *out_grad_bias = gb;
    return YG_OK;
}
