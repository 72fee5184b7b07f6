/*
 * upsample.c - bilinear upsampling on a GPU (cuda/ops.h):
 * upsample_bilinear2d and its gradient.
 *
 * Each keeps the rules and messages of its CPU kernel (cpu/upsample.c):
 * the checks and the taps (coordinates and weights) are
 * meta/upsample.h's, made on the host by the function the CPU calls and
 * copied to the device as they are (with, for the gradient, the range of
 * outputs that read each input row and column, made here from them).
 * cuda/upsample.cu then computes on a float64 copy of the input with
 * cpu/upsample.c's products and sums in its order (no FMA contraction),
 * the gradient gathering per input element what the CPU's loop scatters,
 * and the result is rounded once into the input's dtype, so both devices
 * agree to the bit.
 */
#include "decls/resampling.h"
#include "meta/upsample.h"

#include "core/core.h"
#include "cuda/cuda.h"

#include <inttypes.h>
#include <string.h>

/* r[2 i], r[2 i + 1] (i < n) = [lo, hi), the outputs o among count whose
 * tap t[o] has i0 or i1 equal to i ([0, 0) when none).  Taps only grow
 * with o, so every output between reads input i too (the kernel checks
 * each one). */
static void tap_ranges(const yg_lerp_tap *t, int64_t count, int64_t n, int64_t *r) {
    memset(r, 0, (size_t)(2 * n) * sizeof *r);
    for (int64_t o = 0; o < count; o++) {
        const int64_t ends[2] = {t[o].i0, t[o].i1};
        for (int k = 0; k < 2; k++) {
            int64_t i = ends[k];
            if (r[2 * i + 1] == 0)
                r[2 * i] = o;
            r[2 * i + 1] = o + 1;
        }
    }
}

/* cpu/upsample.c's upsample_bilinear2d of src [planes, ih, iw] into dst
 * [planes, oh, ow] or (backward) its gradient: src the grad_output
 * [planes, oh, ow], dst [planes, ih, iw].  taps: host memory, the oh row
 * taps then the ow column taps, copied to the device as they are (with,
 * backward, the range of outputs whose taps touch each input row and
 * column).  Both contiguous float64 on one GPU; every element of dst is
 * written; each value is the CPU's product and sum order, no FMA
 * contraction.  cuda/upsample.cu.  Errors name op:
 * YG_ERR_OUT_OF_MEMORY, YG_ERR_DEVICE. */
static yg_status launch_bilinear(const char *op,
                                 const yg_tensor *src,
                                 const yg_lerp_tap *taps,
                                 int64_t planes,
                                 int64_t ih,
                                 int64_t iw,
                                 int64_t oh,
                                 int64_t ow,
                                 bool backward,
                                 yg_tensor *dst) {
    int prev, index = dst->storage->device_index, err;
    void *dtaps = NULL, *dranges = NULL;
    int64_t *ranges = NULL;
    size_t tbytes = (size_t)(oh + ow) * sizeof *taps, rbytes = 0;
    yg_status st;

    /* Every spatial size is at least 1 (meta/upsample.h checked), so both
     * are empty exactly when planes is 0. */
    if (yg_tensor_numel(dst) == 0 || yg_tensor_numel(src) == 0)
        return YG_OK;
    st = yg__cuda_alloc(op, index, tbytes, &dtaps);
    if (st == YG_OK)
        st = yg__cuda_memcpy(op, dtaps, index, taps, -1, tbytes);
    if (st == YG_OK && backward) {
        rbytes = (size_t)(2 * (ih + iw)) * sizeof *ranges;
        ranges = yg__alloc(rbytes);
        if (ranges == NULL)
            st = yg__fail(YG_ERR_OUT_OF_MEMORY,
                          "%s: out of host memory for %" PRId64 " + %" PRId64 " output ranges",
                          op,
                          ih,
                          iw);
    }
    if (st == YG_OK && backward) {
        tap_ranges(taps, oh, ih, ranges);
        tap_ranges(taps + oh, ow, iw, ranges + 2 * ih);
        st = yg__cuda_alloc(op, index, rbytes, &dranges);
        if (st == YG_OK)
            st = yg__cuda_memcpy(op, dranges, index, ranges, -1, rbytes);
    }
    if (st == YG_OK)
        st = yg__cuda_device_enter(op, index, &prev);
    if (st == YG_OK) {
        if (backward)
            err = yg__cuda_upsample_bilinear_backward_launch((const double *)yg__tensor_ptr(src),
                                                             (double *)yg__tensor_ptr(dst),
                                                             dtaps,
                                                             dranges,
                                                             planes,
                                                             ih,
                                                             iw,
                                                             oh,
                                                             ow);
        else
            err = yg__cuda_upsample_bilinear_launch((const double *)yg__tensor_ptr(src),
                                                    (double *)yg__tensor_ptr(dst),
                                                    dtaps,
                                                    planes,
                                                    ih,
                                                    iw,
                                                    oh,
                                                    ow);
        yg__cuda_device_leave(prev);
        st = yg__cuda_check_launch(op, index, err);
    }
    /* stream-ordered: reused only by later work */
    yg__cuda_free(index, dranges);
    yg__cuda_free(index, dtaps);
    yg__free(ranges, rbytes);
    return st;
}

yg_status yg__cuda_upsample_bilinear2d(const yg_tensor *self,
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
        st = yg__tensor_new_on(
            op, sizes, self->ndim, YG_FLOAT64, YG_CUDA, self->storage->device_index, &res);
    if (st == YG_OK)
        st = launch_bilinear(op, x, t, planes, ih, iw, o[0], o[1], false, res);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(res, self->dtype, true, out);
    yg__free(t, tbytes);
    yg_release(x);
    yg_release(res);
    return st;
}

yg_status yg__cuda_upsample_bilinear2d_backward(const yg_tensor *grad_output,
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
        st = yg__tensor_new_on(op,
                               self_sizes,
                               self_sizes_len,
                               YG_FLOAT64,
                               YG_CUDA,
                               grad_output->storage->device_index,
                               &res);
    if (st == YG_OK)
        st = launch_bilinear(op, go, t, planes, ih, iw, oh, ow, true, res);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(res, grad_output->dtype, true, out);
    yg__free(t, tbytes);
    yg_release(go);
    yg_release(res);
    return st;
}
