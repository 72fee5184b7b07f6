/*
 * upsample.c - the host side of cuda/upsample.cu for cpu/upsample.c:
 * copies the taps cpu/upsample.c made (and, for the gradient, the range
 * of outputs that read each input row and column, made here from them)
 * to the device, makes the operands' device current, launches and checks
 * the launch.  cpu/upsample.c has already validated the arguments, made
 * the input a contiguous float64 copy and allocated the result on the
 * device.
 */
#include "core/core.h"
#include "cuda/cuda.h"

#include <inttypes.h>
#include <string.h>

/* r[2 i], r[2 i + 1] (i < n) = [lo, hi), the outputs o among count whose
 * tap t[o] has i0 or i1 equal to i ([0, 0) when none).  Taps only grow
 * with o, so every output between reads input i too (the kernel checks
 * each one). */
static void tap_ranges(const yg__cuda_lerp_tap *t, int64_t count, int64_t n, int64_t *r) {
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

yg_status yg__cuda_upsample_bilinear(const char *op,
                                     const yg_tensor *src,
                                     const yg__cuda_lerp_tap *taps,
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

    /* Every spatial size is at least 1 (cpu/upsample.c checked), so both
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
