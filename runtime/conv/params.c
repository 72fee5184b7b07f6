/*
 * conv/params.c - validation of a convolution call, once, into
 * yg_conv_params (conv/conv.h).  Every front end (conv2d, ...) checks
 * its arguments here before any tensor is reshaped, so that a wrong
 * argument is reported with the caller's name and values
 * (`conv2d: weight of sizes [64, 3, 3, 3] expects input with 3 channels
 * (groups 1), got input [8, 4, 32, 32]`); the dispatcher checks again
 * (cheap) because convolution_dispatch is public too.  Messages carry no
 * op name: the caller prefixes its own.
 *
 * output_padding must be below stride (PyTorch also accepts it below the
 * dilation; then the adjoint's input gradient would need cropping, which
 * the native backend does not do).
 */
#include "conv/conv.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* dtype and device of one operand (nullable). */
static yg_status check_operand(const char *name, const yg_tensor *t, const yg_tensor *input) {
    if (t == NULL)
        return YG_OK;
    char ibuf[32], tbuf[32];
    if (t->storage->device != input->storage->device ||
        t->storage->device_index != input->storage->device_index)
        return yg__fail(YG_ERR_DEVICE,
                        "expected %s on input's device %s, got %s",
                        name,
                        yg__format_device(input, ibuf, sizeof ibuf),
                        yg__format_device(t, tbuf, sizeof tbuf));
    if (t->dtype != YG_FLOAT32 && t->dtype != YG_FLOAT64)
        return yg__fail(YG_ERR_DTYPE,
                        "unsupported dtype %s for %s (supported: float32, float64)",
                        yg_dtype_name(t->dtype),
                        name);
    if (t->dtype != input->dtype)
        return yg__fail(YG_ERR_DTYPE,
                        "expected %s of input's dtype %s, got %s",
                        name,
                        yg_dtype_name(input->dtype),
                        yg_dtype_name(t->dtype));
    return YG_OK;
}

/* One list argument: n entries each >= lo (lo 0 or 1). */
static yg_status
check_list(const char *name, const int64_t *v, int64_t len, int32_t n, int64_t lo) {
    char buf[160];
    if (len != n)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "expected %s with %d entries (one per spatial dim), got %s",
                        name,
                        (int)n,
                        yg__format_sizes(v, len, buf, sizeof buf));
    for (int32_t i = 0; i < n; i++) {
        /* Bounded like sizes (sizes.h): the output size arithmetic stays
         * checkable. */
        if (v[i] > YG__MAX_NUMEL)
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s %s must be at most 2^59",
                            name,
                            yg__format_sizes(v, len, buf, sizeof buf));
        if (v[i] < lo)
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s %s must be %s",
                            name,
                            yg__format_sizes(v, len, buf, sizeof buf),
                            lo == 0 ? "non-negative" : "at least 1");
    }
    return YG_OK;
}

static yg_status check_ranks(const yg_tensor *input, const yg_tensor *weight, int32_t n) {
    char ibuf[160], wbuf[160];
    if (n < 1 || n > 3 || input->ndim != n + 2)
        return yg__fail(YG_ERR_SHAPE,
                        "expected input with %d dims [N, C, %s], got input %s",
                        n >= 1 && n <= 3 ? n + 2 : 3,
                        n == 1 || n < 1 || n > 3 ? "L"
                        : n == 2                 ? "H, W"
                                                 : "D, H, W",
                        yg__format_sizes(input->sizes, input->ndim, ibuf, sizeof ibuf));
    if (weight->ndim != n + 2)
        return yg__fail(YG_ERR_SHAPE,
                        "expected weight with %d dims for input %s, got weight of sizes %s",
                        n + 2,
                        yg__format_sizes(input->sizes, input->ndim, ibuf, sizeof ibuf),
                        yg__format_sizes(weight->sizes, weight->ndim, wbuf, sizeof wbuf));
    for (int32_t d = 0; d < weight->ndim; d++) {
        if (weight->sizes[d] < 1)
            return yg__fail(YG_ERR_SHAPE,
                            "weight of sizes %s is empty",
                            yg__format_sizes(weight->sizes, weight->ndim, wbuf, sizeof wbuf));
    }
    return YG_OK;
}

/* Channels of input, weight and bias against groups; fills cx, cy. */
static yg_status check_channels(const yg_tensor *input,
                                const yg_tensor *weight,
                                const yg_tensor *bias,
                                yg_conv_params *p) {
    char ibuf[160], wbuf[160], bbuf[160];
    int64_t c = input->sizes[1], w0 = weight->sizes[0], w1 = weight->sizes[1], g = p->groups;
    int64_t w1g;

    yg__format_sizes(input->sizes, input->ndim, ibuf, sizeof ibuf);
    yg__format_sizes(weight->sizes, weight->ndim, wbuf, sizeof wbuf);
    if (!yg__mul_ok(w1, g, &w1g))
        return yg__fail(YG_ERR_SHAPE,
                        "weight of sizes %s times groups %" PRId64 " overflows int64 channels",
                        wbuf,
                        g);
    int64_t expect = p->transposed ? w0 : w1g, c_out = p->transposed ? w1g : w0;
    if (w0 % g != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "weight of sizes %s has %" PRId64
                        " %s channels, not divisible by groups %" PRId64,
                        wbuf,
                        w0,
                        p->transposed ? "input" : "output",
                        g);
    if (c != expect)
        return yg__fail(YG_ERR_SHAPE,
                        "weight of sizes %s expects input with %" PRId64
                        " channels (groups %" PRId64 "), got input %s",
                        wbuf,
                        expect,
                        g,
                        ibuf);
    if (bias != NULL && (bias->ndim != 1 || bias->sizes[0] != c_out))
        return yg__fail(YG_ERR_SHAPE,
                        "expected bias of sizes [%" PRId64
                        "] (the output channels of weight %s), got %s",
                        c_out,
                        wbuf,
                        yg__format_sizes(bias->sizes, bias->ndim, bbuf, sizeof bbuf));
    p->cx = p->transposed ? w1g : c;
    p->cy = p->transposed ? c : w0;
    return YG_OK;
}

yg_status yg__conv_params_init(const yg_tensor *input,
                               const yg_tensor *weight,
                               const yg_tensor *bias,
                               int32_t n_spatial,
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
                               yg_conv_params *p) {
    char ibuf[160], obuf[160], sbuf[160];
    int32_t n = n_spatial > 0 ? n_spatial : input->ndim - 2;
    int64_t outs[3];

    memset(p, 0, sizeof *p);
    YG_RETURN_IF_ERROR(check_operand("input", input, input));
    YG_RETURN_IF_ERROR(check_operand("weight", weight, input));
    YG_RETURN_IF_ERROR(check_operand("bias", bias, input));
    YG_RETURN_IF_ERROR(check_ranks(input, weight, n));
    YG_RETURN_IF_ERROR(check_list("stride", stride, stride_len, n, 1));
    YG_RETURN_IF_ERROR(check_list("padding", padding, padding_len, n, 0));
    YG_RETURN_IF_ERROR(check_list("dilation", dilation, dilation_len, n, 1));
    if (transposed) {
        YG_RETURN_IF_ERROR(check_list("output_padding", output_padding, output_padding_len, n, 0));
        for (int32_t i = 0; i < n; i++) {
            if (output_padding[i] >= stride[i])
                return yg__fail(YG_ERR_INVALID_ARGUMENT,
                                "output_padding %s must be smaller than stride %s",
                                yg__format_sizes(output_padding, n, obuf, sizeof obuf),
                                yg__format_sizes(stride, n, sbuf, sizeof sbuf));
        }
    }
    if (groups < 1)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "groups %" PRId64 " must be at least 1", groups);
    p->n_spatial = n;
    p->transposed = transposed;
    p->groups = groups;
    p->batch = input->sizes[0];
    p->dtype = input->dtype;
    p->device = input->storage->device;
    p->device_index = input->storage->device == YG_CUDA ? input->storage->device_index : 0;
    p->benchmark = yg_conv_benchmark();
    p->deterministic = yg_conv_deterministic();
    YG_RETURN_IF_ERROR(check_channels(input, weight, bias, p));
    for (int32_t i = 0; i < 3; i++) {
        int32_t s = i - (3 - n); /* the caller's spatial dim, < 0: padded */
        bool real = s >= 0;
        int64_t in = real ? input->sizes[2 + s] : 1, k = real ? weight->sizes[2 + s] : 1;
        int64_t st = real ? stride[s] : 1, pd = real ? padding[s] : 0, dl = real ? dilation[s] : 1;
        int64_t span, out = 0, t;
        /* k <= 2^59 (weight is not empty), st, pd, dl, output_padding
         * <= 2^59 (check_list); in may be anything up to INT64_MAX (an
         * empty input): every step that can overflow is checked. */
        bool ok = yg__mul_ok(dl, k - 1, &span) && yg__add_ok(span, 1, &span);
        if (ok && transposed) {
            ok = yg__mul_ok(in - 1, st, &t) && yg__add_ok(t, span - 2 * pd, &t) &&
                 yg__add_ok(t, real ? output_padding[s] : 0, &out);
        } else if (ok) {
            ok = yg__add_ok(in, 2 * pd, &t);
            if (ok && t >= span)
                out = (t - span) / st + 1;
        }
        if (!ok)
            return yg__fail(YG_ERR_SHAPE,
                            "output size of input %s, weight %s overflows int64",
                            yg__format_sizes(input->sizes, input->ndim, ibuf, sizeof ibuf),
                            yg__format_sizes(weight->sizes, weight->ndim, sbuf, sizeof sbuf));
        if (real)
            outs[s] = out;
        p->x[i] = transposed ? out : in;
        p->y[i] = transposed ? in : out;
        p->k[i] = k;
        p->stride[i] = st;
        p->pad[i] = pd;
        p->dil[i] = dl;
    }
    for (int32_t s = 0; s < n; s++) {
        if (outs[s] < 1)
            return yg__fail(
                YG_ERR_SHAPE,
                "output sizes %s would be smaller than 1: input %s, weight %s, padding %s",
                yg__format_sizes(outs, n, obuf, sizeof obuf),
                yg__format_sizes(input->sizes, input->ndim, ibuf, sizeof ibuf),
                yg__format_sizes(weight->sizes, weight->ndim, sbuf, sizeof sbuf),
                yg__format_sizes(padding, n, (char[160]){0}, 160));
    }
    return YG_OK;
}

void yg__conv_output_sizes(const yg_conv_params *p, int64_t *sizes) {
    sizes[0] = p->batch;
    sizes[1] = p->transposed ? p->cx : p->cy;
    for (int32_t s = 0; s < p->n_spatial; s++) {
        int32_t i = s + (3 - p->n_spatial);
        sizes[2 + s] = p->transposed ? p->x[i] : p->y[i];
    }
}
