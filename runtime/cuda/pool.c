/*
 * pool.c - the host side of cuda/pool.cu for cpu/pool.c and
 * composite/pool.c: each call makes the current device its operands',
 * launches, and checks the launch.  cpu/pool.c has already validated the
 * arguments, made the input contiguous and allocated the results on the
 * device; max pooling's indices are checked here, on a host copy, before
 * the gradient kernel writes through them.  Nearest upsampling's gradient
 * gets its tables of output rows and columns per input row and column,
 * made here with the CPU's formula and copied to the device.
 */
#include "core/core.h"
#include "cuda/cuda.h"

#include <inttypes.h>

yg_status yg__cuda_max_pool(const char *op,
                            const yg_tensor *x,
                            const yg__cuda_pool_geom *g,
                            bool adaptive,
                            yg_tensor *values,
                            yg_tensor *indices) {
    int prev, index = x->storage->device_index;
    if (yg_tensor_numel(values) == 0)
        return YG_OK;
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, index, &prev));
    int err = yg__cuda_max_pool_launch(x->dtype == YG_FLOAT64,
                                       yg__tensor_ptr(x),
                                       yg__tensor_ptr(values),
                                       (int64_t *)yg__tensor_ptr(indices),
                                       *g,
                                       adaptive);
    yg__cuda_device_leave(prev);
    return yg__cuda_check_launch(op, index, err);
}

yg_status yg__cuda_avg_pool(const char *op,
                            const yg_tensor *src,
                            const yg__cuda_pool_geom *g,
                            bool adaptive,
                            bool backward,
                            bool count_include_pad,
                            int64_t divisor_override,
                            yg_tensor *dst) {
    int prev, index = src->storage->device_index, err;
    if (yg_tensor_numel(dst) == 0)
        return YG_OK;
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, index, &prev));
    if (adaptive)
        err = yg__cuda_adaptive_avg_pool_launch(
            src->dtype == YG_FLOAT64, yg__tensor_ptr(src), yg__tensor_ptr(dst), *g, backward);
    else
        err = yg__cuda_avg_pool_launch(src->dtype == YG_FLOAT64,
                                       yg__tensor_ptr(src),
                                       yg__tensor_ptr(dst),
                                       *g,
                                       backward,
                                       count_include_pad,
                                       divisor_override);
    yg__cuda_device_leave(prev);
    return yg__cuda_check_launch(op, index, err);
}

yg_status yg__cuda_max_pool_backward(const char *op,
                                     const yg_tensor *grad,
                                     const yg_tensor *indices,
                                     int64_t planes,
                                     int64_t ovol,
                                     int64_t ivol,
                                     yg_tensor *out) {
    int prev, index = out->storage->device_index;
    yg_tensor *g = NULL, *ix = NULL, *host = NULL;
    yg_status st;

    if (indices->dtype != YG_INT64)
        return yg__fail(
            YG_ERR_DTYPE, "expected indices of dtype int64, got %s", yg_dtype_name(indices->dtype));
    if (yg_tensor_numel(out) == 0)
        return YG_OK;
    st = yg__tensor_contiguous_as(grad, out->dtype, true, &g);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(indices, YG_INT64, true, &ix);
    if (st == YG_OK)
        st = yg_tensor_to_device(ix, YG_CPU, 0, &host);
    for (int64_t i = 0; st == YG_OK && i < planes * ovol; i++) {
        int64_t k = ((const int64_t *)yg__tensor_ptr(host))[i];
        if (k < 0 || k >= ivol)
            st = yg__fail(YG_ERR_INDEX,
                          "index %" PRId64 " at position %" PRId64
                          " is out of range for planes of %" PRId64 " elements",
                          k,
                          i,
                          ivol);
    }
    if (st == YG_OK)
        st = yg__cuda_device_enter(op, index, &prev);
    if (st == YG_OK) {
        int err = yg__cuda_max_pool_backward_launch(out->dtype == YG_FLOAT64,
                                                    yg__tensor_ptr(g),
                                                    (const int64_t *)yg__tensor_ptr(ix),
                                                    yg__tensor_ptr(out),
                                                    planes,
                                                    ovol,
                                                    ivol);
        yg__cuda_device_leave(prev);
        st = yg__cuda_check_launch(op, index, err);
    }
    yg_release(g);
    yg_release(ix);
    yg_release(host);
    return st;
}

/* start[i] (i = 0 .. in) = the first of the out outputs o whose source
 * o in / out (cpu/pool.c's upsample_nearest2d) is at least i, so input i
 * is copied by outputs [start[i], start[i + 1]); the source only grows
 * with o.  All 0 when the gradient is empty (out may then be 0, or any
 * size beside a 0). */
static void nearest_starts(int64_t in, int64_t out, bool empty, int64_t *start) {
    int64_t o = 0;
    for (int64_t i = 0; i <= in; i++) {
        while (!empty && o < out && o * in / out < i)
            o++;
        start[i] = o;
    }
}

yg_status yg__cuda_upsample_nearest(const char *op,
                                    const yg_tensor *src,
                                    const yg__cuda_pool_geom *g,
                                    bool backward,
                                    yg_tensor *dst) {
    int prev, index = dst->storage->device_index, err;
    int64_t ih = g->in[1], iw = g->in[2];
    int64_t *host = NULL;
    void *dev = NULL;
    size_t nbytes = 0;
    yg_status st = YG_OK;

    if (yg_tensor_numel(dst) == 0)
        return YG_OK;
    if (backward) {
        /* dst [planes, ih, iw] is not empty, so ih + iw + 2 int64 fit */
        nbytes = (size_t)(ih + 1 + iw + 1) * sizeof *host;
        host = yg__alloc(nbytes);
        if (host == NULL)
            return yg__fail(YG_ERR_OUT_OF_MEMORY,
                            "%s: out of host memory for %" PRId64 " + %" PRId64 " output ranges",
                            op,
                            ih + 1,
                            iw + 1);
        bool empty = yg_tensor_numel(src) == 0;
        nearest_starts(ih, g->out[1], empty, host);
        nearest_starts(iw, g->out[2], empty, host + ih + 1);
        st = yg__cuda_alloc(op, index, nbytes, &dev);
        if (st == YG_OK)
            st = yg__cuda_memcpy(op, dev, index, host, -1, nbytes);
    }
    if (st == YG_OK)
        st = yg__cuda_device_enter(op, index, &prev);
    if (st == YG_OK) {
        if (backward)
            err = yg__cuda_upsample_nearest_backward_launch((const double *)yg__tensor_ptr(src),
                                                            (double *)yg__tensor_ptr(dst),
                                                            *g,
                                                            (const int64_t *)dev,
                                                            (const int64_t *)dev + ih + 1);
        else
            err = yg__cuda_upsample_nearest_launch(
                (const double *)yg__tensor_ptr(src), (double *)yg__tensor_ptr(dst), *g);
        yg__cuda_device_leave(prev);
        st = yg__cuda_check_launch(op, index, err);
    }
    yg__cuda_free(index, dev); /* stream-ordered: reused only by later work */
    yg__free(host, nbytes);
    return st;
}
