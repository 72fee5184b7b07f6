/*
 * upsample.c - bilinear resampling of the last two dims of [N, C, H, W]
 * (or [C, H, W]) inputs on the CPU, upsample_bilinear2d, and its
 * gradient.
 *
 * The checks and the taps (each output row's and column's two input
 * neighbours and weights, PyTorch's coordinate mapping) are
 * meta/upsample.h's, which the GPU's kernels (cuda/upsample.c) call too.
 * As in pool.c, each kernel works on a contiguous float64 copy of the
 * input planes and converts the result to the input's dtype once; the
 * gradient adds each output gradient, times the same weights, into the
 * four input positions the output read.
 *
 * cuda/upsample.c has the GPU's kernels: cuda/upsample.cu computes with
 * this file's products and sums in this file's order (no FMA
 * contraction), the gradient gathering per input element what the loop
 * below scatters, so both devices agree to the bit.
 */
#include "decls/resampling.h"
#include "meta/upsample.h"

#include "cpu/cpu_int.h"

#include <string.h>

/* A new float64 result of sizes (ndim), zeroed when zero. */
static yg_status new_result(const int64_t *sizes, int64_t ndim, bool zero, yg_tensor **out) {
    return zero ? yg_tensor_zeros(sizes, ndim, YG_FLOAT64, out)
                : yg_tensor_empty(sizes, ndim, YG_FLOAT64, out);
}

yg_status yg__cpu_upsample_bilinear2d(const yg_tensor *self,
                                      const int64_t *output_size,
                                      int64_t output_size_len,
                                      bool align_corners,
                                      const double *scales_h,
                                      const double *scales_w,
                                      yg_tensor **out) {
    const char *op = "upsample_bilinear2d";
    int64_t planes, ih, iw, o[2] = {0, 0}, sizes[4];
    yg_tensor *x = NULL, *res = NULL;
    yg_lerp_tap *t = NULL;
    size_t tbytes = 0;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__upsample_bilinear_geometry(
        op, self, output_size, output_size_len, scales_h, scales_w, &planes, &ih, &iw, o));
    memcpy(sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim);
    sizes[self->ndim - 2] = o[0];
    sizes[self->ndim - 1] = o[1];
    st = yg__upsample_bilinear_taps(
        ih, iw, o[0], o[1], align_corners, scales_h, scales_w, &t, &tbytes);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(self, YG_FLOAT64, true, &x);
    if (st == YG_OK)
        st = new_result(sizes, self->ndim, false, &res);
    if (st != YG_OK)
        goto out;
    const double *xv = (const double *)yg__tensor_ptr(x);
    double *rv = (double *)yg__tensor_ptr(res);
    const yg_lerp_tap *cols = t + o[0];
    for (int64_t p = 0; p < planes; p++) {
        const double *in = xv + p * ih * iw;
        for (int64_t y = 0; y < o[0]; y++) {
            const double *r0 = in + t[y].i0 * iw, *r1 = in + t[y].i1 * iw;
            for (int64_t xx = 0; xx < o[1]; xx++) {
                const yg_lerp_tap *c = &cols[xx];
                rv[(p * o[0] + y) * o[1] + xx] = t[y].w0 * (c->w0 * r0[c->i0] + c->w1 * r0[c->i1]) +
                                                 t[y].w1 * (c->w0 * r1[c->i0] + c->w1 * r1[c->i1]);
            }
        }
    }
    st = yg__tensor_contiguous_as(res, self->dtype, true, out);
out:
    yg__free(t, tbytes);
    yg_release(x);
    yg_release(res);
    return st;
}

yg_status yg__cpu_upsample_bilinear2d_backward(const yg_tensor *grad_output,
                                               const int64_t *self_sizes,
                                               int64_t self_sizes_len,
                                               bool align_corners,
                                               const double *scales_h,
                                               const double *scales_w,
                                               yg_tensor **out) {
    const char *op = "upsample_bilinear2d_backward";
    int64_t planes, ih, iw, o[2] = {0, 0};
    yg_tensor *go = NULL, *res = NULL;
    yg_lerp_tap *t = NULL;
    size_t tbytes = 0;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__upsample_bilinear_backward_geometry(
        op, grad_output, self_sizes, self_sizes_len, scales_h, scales_w, &planes, &ih, &iw, o));
    int64_t oh = o[0], ow = o[1];
    st = yg__upsample_bilinear_taps(ih, iw, oh, ow, align_corners, scales_h, scales_w, &t, &tbytes);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(grad_output, YG_FLOAT64, true, &go);
    if (st == YG_OK)
        st = new_result(self_sizes, self_sizes_len, true, &res);
    if (st != YG_OK)
        goto out;
    const double *gv = (const double *)yg__tensor_ptr(go);
    double *rv = (double *)yg__tensor_ptr(res);
    const yg_lerp_tap *cols = t + oh;
    for (int64_t p = 0; p < planes; p++) {
        double *in = rv + p * ih * iw;
        for (int64_t y = 0; y < oh; y++) {
            double *r0 = in + t[y].i0 * iw, *r1 = in + t[y].i1 * iw;
            for (int64_t xx = 0; xx < ow; xx++) {
                const yg_lerp_tap *c = &cols[xx];
                double g = gv[(p * oh + y) * ow + xx];
                r0[c->i0] += t[y].w0 * c->w0 * g;
                r0[c->i1] += t[y].w0 * c->w1 * g;
                r1[c->i0] += t[y].w1 * c->w0 * g;
                r1[c->i1] += t[y].w1 * c->w1 * g;
            }
        }
    }
    st = yg__tensor_contiguous_as(res, grad_output->dtype, true, out);
out:
    yg__free(t, tbytes);
    yg_release(go);
    yg_release(res);
    return st;
}
