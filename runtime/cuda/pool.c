/*
 * pool.c - the host side of cuda/pool.cu for cpu/pool.c and
 * composite/pool.c: each call makes the current device its operands',
 * launches, and checks the launch.  cpu/pool.c has already validated the
 * arguments, made the input contiguous and allocated the results on the
 * device; max pooling's indices are checked here, on a host copy, before
 * the gradient kernel writes through them.
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
