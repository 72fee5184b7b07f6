/*
 * softmax.c - softmax and log_softmax on a GPU: the CUDA implementations
 * of the structured ops (cuda/cuda.h), which fill the result
 * meta/softmax.c made, with the kernel of cuda/softmax.cu.
 */
#include "cuda/cuda.h"

#include "core/core.h"

static yg_status
softmax_cuda(const char *op, const yg_tensor *self, int64_t dim, bool is_log, yg_tensor *out) {
    yg_tensor *x = NULL;
    int64_t d, outer, n, inner;
    yg_status st = YG_OK;

    YG_RETURN_IF_ERROR(yg__wrap_dim(op, "self", dim, self->ndim, &d));
    YG_RETURN_IF_ERROR(yg__tensor_contiguous_as(self, self->dtype, true, &x));
    yg__sizes_split(x->sizes, x->ndim, d, &outer, &n, &inner);
    if (outer * n * inner > 0)
        st = yg__cuda_softmax(op, x->storage->device_index, self->dtype == YG_FLOAT64,
                              yg__tensor_ptr(out), yg__tensor_ptr(x), NULL, outer, n, inner,
                              is_log, false);
    yg_release(x);
    return st;
}

yg_status yg__cuda_log_softmax_out(const yg_tensor *self, int64_t dim, yg_tensor *out) {
    return softmax_cuda("log_softmax", self, dim, true, out);
}

yg_status yg__cuda_softmax_out(const yg_tensor *self, int64_t dim, yg_tensor *out) {
    return softmax_cuda("softmax", self, dim, false, out);
}
