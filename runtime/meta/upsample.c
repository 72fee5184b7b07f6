/*
 * meta/upsample.c - the checks and taps of bilinear upsampling
 * (meta/upsample.h), for cpu/upsample.c and cuda/upsample.c.
 *
 * The coordinate mapping is PyTorch's (area_pixel_compute_scale and
 * area_pixel_compute_source_index in aten/src/ATen/native/UpSample.h),
 * so results match torch.nn.functional.interpolate(mode="bilinear"):
 * with align_corners the output corners sit on the input corners
 * (source i (in - 1) / (out - 1), 0 for a single output); without it
 * the pixel centres are aligned, source (i + 0.5) r - 0.5 clamped at 0,
 * where r is 1 / scale when the caller passed a positive scale (what
 * interpolate(scale_factor=...) does; 0 stands for PyTorch's None) and
 * in / out otherwise.  The source
 * index is then split into a floor clamped to the last row and a weight
 * clamped to [0, 1], and the second neighbour is the next row unless the
 * floor is the last one (guard_index_and_lambda).
 */
#include "meta/upsample.h"

#include "core/core.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static double source_scale(int64_t in, int64_t out, bool align_corners, const double *scale) {
    if (align_corners)
        return out > 1 ? (double)(in - 1) / (double)(out - 1) : 0.0;
    return scale != NULL ? 1.0 / *scale : (double)in / (double)out;
}

/* A scale, when given, is positive and finite. */
static yg_status check_scales(const char *op, const double *scales_h, const double *scales_w) {
    const double *s[2] = {scales_h, scales_w};
    const char *names[2] = {"scales_h", "scales_w"};
    for (int i = 0; i < 2; i++)
        if (s[i] != NULL && (!(*s[i] > 0) || !isfinite(*s[i])))
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s: %s must be positive and finite when given, got %g",
                            op,
                            names[i],
                            *s[i]);
    return YG_OK;
}

static yg_lerp_tap tap(int64_t dst, int64_t in, double scale, bool align_corners) {
    yg_lerp_tap t;
    double src = align_corners ? scale * (double)dst : scale * ((double)dst + 0.5) - 0.5;
    if (!align_corners && src < 0)
        src = 0;
    /* Clamped in double first: a tiny scales_h gives a source index far
     * beyond int64 (converting it is undefined), a NaN one no index. */
    double last = (double)(in - 1 < YG__MAX_NUMEL ? in - 1 : YG__MAX_NUMEL);
    if (!(src <= last))
        src = last;
    t.i0 = (int64_t)floor(src);
    if (t.i0 > in - 1)
        t.i0 = in - 1;
    double l = src - (double)t.i0;
    l = l < 0 ? 0 : l > 1 ? 1 : l;
    t.i1 = t.i0 + (t.i0 < in - 1 ? 1 : 0);
    t.w1 = l;
    t.w0 = 1 - l;
    return t;
}

/* Checks the [C, H, W] / [N, C, H, W] floating input (sizes, dtype) and
 * gives its planes, ih and iw. */
static yg_status check_input(const char *op,
                             const int64_t *sizes,
                             int64_t ndim,
                             yg_dtype dtype,
                             int64_t *planes,
                             int64_t *ih,
                             int64_t *iw) {
    char buf[128];
    if (sizes == NULL || (ndim != 3 && ndim != 4))
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected self of 3 or 4 dims ([C, H, W] or [N, C, H, W]), got %s",
                        op,
                        yg__format_sizes(sizes, sizes == NULL ? 0 : ndim, buf, sizeof buf));
    if (!yg__dtype_is_floating(dtype))
        return yg__fail(YG_ERR_DTYPE,
                        "%s: unsupported dtype %s for self (supported: float32, float64)",
                        op,
                        yg_dtype_name(dtype));
    int64_t numel;
    /* sizes may come from the caller (the backward's self_sizes). */
    YG_RETURN_IF_ERROR(yg__sizes_numel(op, "self", sizes, ndim, &numel));
    *planes = yg__sizes_product(sizes, ndim - 2);
    if (*planes < 0)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: self %s has more than 2^59 planes",
                        op,
                        yg__format_sizes(sizes, ndim, buf, sizeof buf));
    *ih = sizes[ndim - 2];
    *iw = sizes[ndim - 1];
    if (*ih < 1 || *iw < 1)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: cannot interpolate an empty plane of self %s",
                        op,
                        yg__format_sizes(sizes, ndim, buf, sizeof buf));
    return YG_OK;
}

/* The output size of one dim from a scale (checked by check_scales):
 * floor(in * scale), as PyTorch computes it in double. */
static yg_status
scaled_size(const char *op, const char *name, int64_t in, const double *scale, int64_t *o) {
    if (scale == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: output_size is empty, so %s must be given",
                        op,
                        name);
    if ((double)in * *scale >= 9.0e18)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %" PRId64 " times %s %g overflows int64",
                        op,
                        in,
                        name,
                        *scale);
    *o = (int64_t)((double)in * *scale);
    return YG_OK;
}

/* The output [oh, ow] from output_size (1 or 2 entries) or, when it is
 * empty, from the scales. */
static yg_status output_hw(const char *op,
                           const int64_t *output_size,
                           int64_t output_size_len,
                           int64_t ih,
                           int64_t iw,
                           const double *scales_h,
                           const double *scales_w,
                           int64_t o[2]) {
    char buf[128];
    if (output_size_len == 0) {
        YG_RETURN_IF_ERROR(scaled_size(op, "scales_h", ih, scales_h, &o[0]));
        YG_RETURN_IF_ERROR(scaled_size(op, "scales_w", iw, scales_w, &o[1]));
    } else if ((output_size_len == 1 || output_size_len == 2) && output_size != NULL) {
        o[0] = output_size[0];
        o[1] = output_size[output_size_len - 1];
    } else {
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT,
            "%s: output_size must have 0, 1 or 2 entries, got %s",
            op,
            yg__format_sizes(
                output_size, output_size == NULL ? 0 : output_size_len, buf, sizeof buf));
    }
    if (o[0] < 1 || o[1] < 1)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: output size must be at least 1, got %" PRId64 " x %" PRId64,
                        op,
                        o[0],
                        o[1]);
    /* Bounded like sizes (sizes.h): the taps' count and bytes fit. */
    if (o[0] > YG__MAX_NUMEL || o[1] > YG__MAX_NUMEL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: output size must be at most 2^59, got %" PRId64 " x %" PRId64,
                        op,
                        o[0],
                        o[1]);
    return YG_OK;
}

yg_status yg__upsample_bilinear_geometry(const char *op,
                                         const yg_tensor *self,
                                         const int64_t *output_size,
                                         int64_t output_size_len,
                                         const double *scales_h,
                                         const double *scales_w,
                                         int64_t *planes,
                                         int64_t *ih,
                                         int64_t *iw,
                                         int64_t o[2]) {
    YG_RETURN_IF_ERROR(check_scales(op, scales_h, scales_w));
    YG_RETURN_IF_ERROR(check_input(op, self->sizes, self->ndim, self->dtype, planes, ih, iw));
    return output_hw(op, output_size, output_size_len, *ih, *iw, scales_h, scales_w, o);
}

yg_status yg__upsample_bilinear_backward_geometry(const char *op,
                                                  const yg_tensor *grad_output,
                                                  const int64_t *self_sizes,
                                                  int64_t self_sizes_len,
                                                  const double *scales_h,
                                                  const double *scales_w,
                                                  int64_t *planes,
                                                  int64_t *ih,
                                                  int64_t *iw,
                                                  int64_t o[2]) {
    int64_t nd = self_sizes_len;
    char gbuf[128], sbuf[128];

    YG_RETURN_IF_ERROR(check_scales(op, scales_h, scales_w));

    YG_RETURN_IF_ERROR(
        check_input(op, self_sizes, self_sizes_len, grad_output->dtype, planes, ih, iw));
    if (grad_output->ndim != nd ||
        memcmp(grad_output->sizes, self_sizes, sizeof(int64_t) * (size_t)(nd - 2)) != 0 ||
        grad_output->sizes[nd - 2] < 1 || grad_output->sizes[nd - 1] < 1)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: grad_output %s does not match the leading dims of self_sizes %s",
                        op,
                        yg__format_sizes(grad_output->sizes, grad_output->ndim, gbuf, sizeof gbuf),
                        yg__format_sizes(self_sizes, nd, sbuf, sizeof sbuf));
    o[0] = grad_output->sizes[nd - 2];
    o[1] = grad_output->sizes[nd - 1];
    return YG_OK;
}

yg_status yg__upsample_bilinear_taps(int64_t ih,
                                     int64_t iw,
                                     int64_t oh,
                                     int64_t ow,
                                     bool align_corners,
                                     const double *scales_h,
                                     const double *scales_w,
                                     yg_lerp_tap **taps,
                                     size_t *nbytes) {
    int64_t bytes;
    /* oh, ow may be an empty grad_output's sizes, up to INT64_MAX: more
     * taps than memory holds is out of memory, not a wrapped size. */
    bool fits = yg__add_ok(oh, ow, &bytes) && yg__mul_ok(bytes, (int64_t)sizeof **taps, &bytes);
    *nbytes = fits ? (size_t)bytes : 0;
    *taps = fits ? yg__alloc(*nbytes) : NULL;
    if (*taps == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY,
                        "upsample_bilinear2d: out of memory for %" PRId64 " + %" PRId64
                        " interpolation weights",
                        oh,
                        ow);
    double sh = source_scale(ih, oh, align_corners, scales_h);
    double sw = source_scale(iw, ow, align_corners, scales_w);
    for (int64_t y = 0; y < oh; y++)
        (*taps)[y] = tap(y, ih, sh, align_corners);
    for (int64_t x = 0; x < ow; x++)
        (*taps)[oh + x] = tap(x, iw, sw, align_corners);
    return YG_OK;
}
