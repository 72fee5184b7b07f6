/*
 * softmax.c - softmax and log_softmax and their backwards on a GPU: the
 * CUDA implementations of the structured ops (cuda/ops.h), which fill the
 * result meta/softmax.c made, with the kernel of cuda/softmax.cu.
 */
#include "cuda/cuda.h"
#include "decls/softmax.h"

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

static yg_status softmax_backward_cuda(const char *op,
                                       const yg_tensor *grad_output,
                                       const yg_tensor *output,
                                       int64_t dim,
                                       bool is_log,
                                       yg_tensor *out) {
    yg_tensor *go = NULL, *y = NULL;
    int64_t d, outer, n, inner;
    yg_status st;

    YG_RETURN_IF_ERROR(yg__wrap_dim(op, "output", dim, output->ndim, &d));
    st = yg__tensor_contiguous_as(grad_output, grad_output->dtype, true, &go);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(output, output->dtype, true, &y);
    if (st == YG_OK) {
        yg__sizes_split(y->sizes, y->ndim, d, &outer, &n, &inner);
        if (outer * n * inner > 0)
            st = yg__cuda_softmax(op, y->storage->device_index, output->dtype == YG_FLOAT64,
                                  yg__tensor_ptr(out), yg__tensor_ptr(go), yg__tensor_ptr(y),
                                  outer, n, inner, is_log, true);
    }
    yg_release(go);
    yg_release(y);
    return st;
}

yg_status yg__cuda_log_softmax_backward_out(const yg_tensor *grad_output,
                                            const yg_tensor *output,
                                            int64_t dim,
                                            yg_tensor *out) {
    return softmax_backward_cuda("log_softmax_backward", grad_output, output, dim, true, out);
}

yg_status yg__cuda_softmax_backward_fused_out(const yg_tensor *grad_output,
                                              const yg_tensor *output,
                                              int64_t dim,
                                              yg_tensor *out) {
    return softmax_backward_cuda("softmax_backward_fused", grad_output, output, dim, false, out);
}
