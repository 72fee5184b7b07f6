/*
 * norm.c - the host side of cuda/norm.cu for cpu/norm.c's batch_norm
 * kernels: make the operands' device current, launch, check the launch.
 * cpu/norm.c has validated the arguments, made the operands contiguous
 * and allocated the results on the device.
 */
#include "core/core.h"
#include "cuda/cuda.h"

yg_status yg__cuda_batch_norm(const char *op, int index, const yg__cuda_bn_args *a) {
    int prev;
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, index, &prev));
    int err = yg__cuda_batch_norm_launch(a);
    yg__cuda_device_leave(prev);
    return yg__cuda_check_launch(op, index, err);
}

yg_status
yg__cuda_batch_norm_backward(const char *op, int index, const yg__cuda_bn_backward_args *a) {
    int prev;
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, index, &prev));
    int err = yg__cuda_batch_norm_backward_launch(a);
    yg__cuda_device_leave(prev);
    return yg__cuda_check_launch(op, index, err);
}
