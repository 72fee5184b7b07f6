/*
 * loss.c - nll_loss and its backward on a GPU: the CUDA implementations
 * of the structured ops (cuda/ops.h), which fill the result meta/loss.c
 * made (the backward's already zero) with the kernel of cuda/nll.cu.
 * The targets were checked on a host copy there, so the kernel never
 * sees a bad one.
 */
#include "cuda/cuda.h"
#include "decls/losses.h"

#include "core/core.h"

yg_status yg__cuda_nll_loss_out(const yg_tensor *self,
                                const yg_tensor *target,
                                const yg_tensor *weight,
                                int64_t reduction,
                                int64_t ignore_index,
                                yg_tensor *out) {
    int64_t batch = self->ndim == 2 ? self->sizes[0] : 1;

    if (yg_tensor_numel(out) == 0)
        return YG_OK;
    return yg__cuda_nll("nll_loss",
                        self->storage->device_index,
                        self->dtype == YG_FLOAT64,
                        false,
                        yg__tensor_ptr(self),
                        self->ndim == 2 ? self->strides[0] : 0,
                        self->strides[self->ndim - 1],
                        (const int64_t *)yg__tensor_ptr(target),
                        target->ndim == 1 ? target->strides[0] : 0,
                        weight != NULL ? yg__tensor_ptr(weight) : NULL,
                        weight != NULL ? weight->strides[0] : 0,
                        batch,
                        self->sizes[self->ndim - 1],
                        ignore_index,
                        reduction,
                        yg__tensor_ptr(out));
}

yg_status yg__cuda_nll_loss_backward_out(const yg_tensor *grad_output,
                                         const yg_tensor *target,
                                         const yg_tensor *weight,
                                         const int64_t *self_sizes,
                                         int64_t self_sizes_len,
                                         int64_t reduction,
                                         int64_t ignore_index,
                                         yg_tensor *out) {
    int64_t batch = self_sizes_len == 2 ? self_sizes[0] : 1;

    if (batch == 0)
        return YG_OK;
    return yg__cuda_nll("nll_loss_backward",
                        grad_output->storage->device_index,
                        grad_output->dtype == YG_FLOAT64,
                        true,
                        yg__tensor_ptr(grad_output),
                        grad_output->ndim == 1 ? grad_output->strides[0] : 0,
                        0,
                        (const int64_t *)yg__tensor_ptr(target),
                        target->ndim == 1 ? target->strides[0] : 0,
                        weight != NULL ? yg__tensor_ptr(weight) : NULL,
                        weight != NULL ? weight->strides[0] : 0,
                        batch,
                        self_sizes[self_sizes_len - 1],
                        ignore_index,
                        reduction,
                        yg__tensor_ptr(out));
}
