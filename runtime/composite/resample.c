/*
 * composite/resample.c - resampling ops written over public ops:
 * upsample_bilinear2d_to (the adjoint of upsample_bilinear2d_backward, for
 * double backward), interpolate (F.interpolate: a mode picks the
 * upsample op), and the channel-to-space rearrangements
 * pixel_shuffle, pixel_unshuffle and channel_shuffle, each one reshape,
 * one permute and one reshape (which copies), as PyTorch's math kernels
 * for them are.  Autograd flows through the reshapes and the permute, so
 * the rearrangements need no derivative entries and differentiate to any
 * order; they move data only, so they take every dtype reshape takes.
 *
 * As for every composite, messages of our own checks carry no op name (the
 * generated wrapper prefixes it).
 */
#include "composite/composite.h"
#include "decls/resampling.h"
#include "yagrad/ops_resampling.h"
#include "yagrad/ops_views.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

yg_status yg__composite_upsample_bilinear2d_to(const yg_tensor *self,
                                               const int64_t *sizes,
                                               int64_t sizes_len,
                                               bool align_corners,
                                               const double *scales_h,
                                               const double *scales_w,
                                               yg_tensor **out) {
    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_to_sizes(self, sizes, sizes_len, 2));
    return yg_upsample_bilinear2d(
        self, sizes + sizes_len - 2, 2, align_corners, scales_h, scales_w, out);
}

yg_status yg__composite_interpolate(const yg_tensor *self,
                                    const int64_t *size,
                                    int64_t size_len,
                                    const double *scale_factor,
                                    int64_t mode,
                                    bool align_corners,
                                    yg_tensor **out) {
    int64_t nd = yg_tensor_ndim(self), to[2];
    bool by_scale = size_len == 0;
    char buf[128];

    *out = NULL;
    if (by_scale == (scale_factor == NULL))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "give either size or scale_factor, not %s (size of %" PRId64
                        " entries, scale_factor %s)",
                        by_scale ? "neither" : "both",
                        size_len,
                        scale_factor == NULL ? "None" : "given");
    if (scale_factor != NULL && !(*scale_factor > 0))
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "scale_factor must be positive, got %g",
                        *scale_factor);
    if (size_len > 2)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "size must have 1 or 2 entries ([s] for [s, s], or [oh, ow]), got %" PRId64,
                        size_len);
    if (mode == YG_INTERPOLATION_MODE_NEAREST && align_corners)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "align_corners applies to mode bilinear only");
    if (nd != 3 && nd != 4)
        return yg__fail(YG_ERR_SHAPE,
                        "expected self of 3 or 4 dims ([C, H, W] or [N, C, H, W]), got %s",
                        yg_tensor_format_sizes(self, buf, sizeof buf));
    if (mode == YG_INTERPOLATION_MODE_BILINEAR) {
        return yg_upsample_bilinear2d(
            self, size, size_len, align_corners, scale_factor, scale_factor, out);
    }
    for (int64_t i = 0; i < 2 && !by_scale; i++)
        to[i] = size[size_len == 1 ? 0 : i];
    for (int64_t i = 0; i < 2 && by_scale; i++) {
        double v = floor((double)yg_tensor_size(self, nd - 2 + i) * *scale_factor);
        if (!(v < 9223372036854775807.0))
            return yg__fail(YG_ERR_SHAPE,
                            "self %s times scale_factor %g overflows int64",
                            yg_tensor_format_sizes(self, buf, sizeof buf),
                            *scale_factor);
        to[i] = (int64_t)v;
    }
    return yg_upsample_nearest2d(self, to, 2, out);
}

/* reshape(self, a) -> permute(perm) -> reshape(b), into *out. */
static yg_status rearrange(const yg_tensor *self,
                           const int64_t *a,
                           int64_t a_len,
                           const int64_t *perm,
                           const int64_t *b,
                           int64_t b_len,
                           yg_tensor **out) {
    yg_tensor *v = NULL, *p = NULL;
    yg_status st = yg_reshape(self, a, a_len, &v);
    if (st == YG_OK)
        st = yg_permute(v, perm, a_len, &p);
    if (st == YG_OK)
        st = yg_reshape(p, b, b_len, out);
    yg_release(v);
    yg_release(p);
    return st;
}

/* Checks self has at least 3 dims and factor is positive. */
static yg_status check_shuffle(const yg_tensor *self, const char *name, int64_t factor) {
    char buf[128];
    if (yg_tensor_ndim(self) < 3)
        return yg__fail(YG_ERR_SHAPE,
                        "expected self of at least 3 dims ([*, C, H, W]), got %s",
                        yg_tensor_format_sizes(self, buf, sizeof buf));
    if (factor < 1)
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "%s must be at least 1, got %" PRId64, name, factor);
    if (yg_tensor_ndim(self) + 2 > YG_MAX_DIMS)
        return yg__fail(YG_ERR_SHAPE,
                        "self %s has too many dims to rearrange (at most %d)",
                        yg_tensor_format_sizes(self, buf, sizeof buf),
                        YG_MAX_DIMS - 2);
    return YG_OK;
}

/* a * b for a size of self times a factor, or YG_ERR_SHAPE naming self
 * (the composite's wrapper prefixes its name). */
static yg_status shuffle_mul(const yg_tensor *self, int64_t a, int64_t b, int64_t *out) {
    char buf[128];
    if (!yg__mul_ok(a, b, out))
        return yg__fail(YG_ERR_SHAPE,
                        "a size of self %s times the factor overflows int64: %" PRId64
                        " * %" PRId64,
                        yg_tensor_format_sizes(self, buf, sizeof buf),
                        a,
                        b);
    return YG_OK;
}

yg_status
yg__composite_pixel_shuffle(const yg_tensor *self, int64_t upscale_factor, yg_tensor **out) {
    int64_t nd = yg_tensor_ndim(self), r = upscale_factor, a[YG_MAX_DIMS], b[YG_MAX_DIMS],
            perm[YG_MAX_DIMS];
    char buf[128];

    *out = NULL;
    YG_RETURN_IF_ERROR(check_shuffle(self, "upscale_factor", r));
    const int64_t *s = yg_tensor_sizes(self);
    int64_t lead = nd - 3, c = s[nd - 3], h = s[nd - 2], w = s[nd - 1], rr, hr, wr;
    /* r^2 beyond int64 divides no channel count but 0: refused too. */
    if (!yg__mul_ok(r, r, &rr))
        return yg__fail(YG_ERR_SHAPE,
                        "channels of self %s must be divisible by upscale_factor^2, and "
                        "upscale_factor %" PRId64 " squared overflows int64",
                        yg_tensor_format_sizes(self, buf, sizeof buf),
                        r);
    if (c % rr != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "channels of self %s must be divisible by upscale_factor^2 = %" PRId64,
                        yg_tensor_format_sizes(self, buf, sizeof buf),
                        rr);
    YG_RETURN_IF_ERROR(shuffle_mul(self, h, r, &hr));
    YG_RETURN_IF_ERROR(shuffle_mul(self, w, r, &wr));
    /* [*, C, r, r, H, W] -> [*, C, H, r, W, r] -> [*, C, H r, W r] */
    for (int64_t d = 0; d < lead; d++) {
        a[d] = b[d] = s[d];
        perm[d] = d;
    }
    int64_t a_tail[] = {c / rr, r, r, h, w}, p_tail[] = {0, 3, 1, 4, 2};
    int64_t b_tail[] = {c / rr, hr, wr};
    for (int64_t i = 0; i < 5; i++) {
        a[lead + i] = a_tail[i];
        perm[lead + i] = lead + p_tail[i];
    }
    for (int64_t i = 0; i < 3; i++)
        b[lead + i] = b_tail[i];
    return rearrange(self, a, lead + 5, perm, b, lead + 3, out);
}

yg_status
yg__composite_pixel_unshuffle(const yg_tensor *self, int64_t downscale_factor, yg_tensor **out) {
    int64_t nd = yg_tensor_ndim(self), r = downscale_factor, a[YG_MAX_DIMS], b[YG_MAX_DIMS],
            perm[YG_MAX_DIMS];
    char buf[128];

    *out = NULL;
    YG_RETURN_IF_ERROR(check_shuffle(self, "downscale_factor", r));
    const int64_t *s = yg_tensor_sizes(self);
    int64_t lead = nd - 3, c = s[nd - 3], h = s[nd - 2], w = s[nd - 1];
    if (h % r != 0 || w % r != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "height and width of self %s must be divisible by downscale_factor "
                        "%" PRId64,
                        yg_tensor_format_sizes(self, buf, sizeof buf),
                        r);
    /* [*, C, H, r, W, r] -> [*, C, r, r, H, W] -> [*, C r^2, H, W] */
    for (int64_t d = 0; d < lead; d++) {
        a[d] = b[d] = s[d];
        perm[d] = d;
    }
    int64_t cr, crr;
    YG_RETURN_IF_ERROR(shuffle_mul(self, c, r, &cr));
    YG_RETURN_IF_ERROR(shuffle_mul(self, cr, r, &crr));
    int64_t a_tail[] = {c, h / r, r, w / r, r}, p_tail[] = {0, 2, 4, 1, 3};
    int64_t b_tail[] = {crr, h / r, w / r};
    for (int64_t i = 0; i < 5; i++) {
        a[lead + i] = a_tail[i];
        perm[lead + i] = lead + p_tail[i];
    }
    for (int64_t i = 0; i < 3; i++)
        b[lead + i] = b_tail[i];
    return rearrange(self, a, lead + 5, perm, b, lead + 3, out);
}

yg_status yg__composite_channel_shuffle(const yg_tensor *self, int64_t groups, yg_tensor **out) {
    int64_t nd = yg_tensor_ndim(self), a[YG_MAX_DIMS], perm[YG_MAX_DIMS];
    char buf[128];

    *out = NULL;
    if (nd < 3)
        return yg__fail(YG_ERR_SHAPE,
                        "expected self of at least 3 dims ([N, C, *]), got %s",
                        yg_tensor_format_sizes(self, buf, sizeof buf));
    if (nd + 1 > YG_MAX_DIMS)
        return yg__fail(YG_ERR_SHAPE,
                        "self %s has too many dims to rearrange (at most %d)",
                        yg_tensor_format_sizes(self, buf, sizeof buf),
                        YG_MAX_DIMS - 1);
    const int64_t *s = yg_tensor_sizes(self);
    if (groups < 1 || s[1] % groups != 0)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "groups %" PRId64 " must be positive and divide the %" PRId64
                        " channels of self %s",
                        groups,
                        s[1],
                        yg_tensor_format_sizes(self, buf, sizeof buf));
    /* [N, g, C / g, *] -> [N, C / g, g, *] -> [N, C, *] */
    a[0] = s[0];
    a[1] = groups;
    a[2] = s[1] / groups;
    perm[0] = 0;
    perm[1] = 2;
    perm[2] = 1;
    for (int64_t d = 2; d < nd; d++) {
        a[d + 1] = s[d];
        perm[d + 1] = d + 1;
    }
    return rearrange(self, a, nd + 1, perm, s, nd, out);
}
