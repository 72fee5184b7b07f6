/*
 * dist_check.c - argument checks shared by the MPI process group, the
 * NCCL backend and their stubs, so every build reports bad arguments
 * alike.
 */
#include "distributed/dist_int.h"

#include <limits.h>

const char *yg__reduce_op_name(yg_reduce_op op) {
    switch (op) {
    case YG_REDUCE_SUM:
        return "sum";
    case YG_REDUCE_AVG:
        return "avg";
    case YG_REDUCE_MAX:
        return "max";
    default:
        return "unknown";
    }
}

yg_status yg__dist_check_tensor(const char *op, const char *arg, const yg_tensor *t) {
    char dev[32];

    YG_RETURN_IF_ERROR(yg__check_defined(op, arg, t));
    if (yg_tensor_device(t) != YG_CPU)
        return yg__fail(YG_ERR_DEVICE,
                        "%s: %s is on %s but this MPI process group takes cpu tensors (a group "
                        "with backend YG_DIST_NCCL takes CUDA tensors)",
                        op,
                        arg,
                        yg__format_device(t, dev, sizeof dev));
    /* MPI counts are int: a larger count would be truncated silently. */
    if (yg_tensor_numel(t) > INT_MAX)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: %s has %lld elements; MPI counts are int, at most %d per call",
                        op,
                        arg,
                        (long long)yg_tensor_numel(t),
                        INT_MAX);
    return YG_OK;
}

yg_status
yg__dist_check_cuda_tensor(const char *op, const char *arg, const yg_tensor *t, int device) {
    char dev[32];

    YG_RETURN_IF_ERROR(yg__check_defined(op, arg, t));
    if (yg_tensor_device(t) != YG_CUDA || yg_tensor_device_index(t) != device)
        return yg__fail(YG_ERR_DEVICE,
                        "%s: %s is on %s but this NCCL process group takes tensors on cuda:%d",
                        op,
                        arg,
                        yg__format_device(t, dev, sizeof dev),
                        device);
    /* A non-contiguous tensor is fine: the NCCL backend reduces a
     * contiguous copy and copies the result back, as the MPI part does. */
    return YG_OK;
}

yg_status yg__dist_check_pair(const char *op,
                              int world_size,
                              const yg_tensor *input,
                              const yg_tensor *output,
                              bool gather) {
    char a[128], b[128];
    int64_t big = gather ? yg_tensor_numel(output) : yg_tensor_numel(input);
    int64_t small = gather ? yg_tensor_numel(input) : yg_tensor_numel(output);

    if (yg_tensor_dtype(input) != yg_tensor_dtype(output))
        return yg__fail(YG_ERR_DTYPE,
                        "%s: input is %s but output is %s",
                        op,
                        yg_dtype_name(yg_tensor_dtype(input)),
                        yg_dtype_name(yg_tensor_dtype(output)));
    if (big != small * world_size)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: %s %s must have world size (%d) times the elements of %s %s",
                        op,
                        gather ? "output" : "input",
                        yg_tensor_format_sizes(gather ? output : input, a, sizeof a),
                        world_size,
                        gather ? "input" : "output",
                        yg_tensor_format_sizes(gather ? input : output, b, sizeof b));
    return YG_OK;
}

yg_status yg__dist_check_reduce(const char *op, yg_reduce_op rop, yg_dtype dtype) {
    if ((int)rop < 0 || rop >= YG_REDUCE_OP_COUNT_)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: unknown reduce op %d", op, (int)rop);
    if (rop == YG_REDUCE_AVG && !yg__dtype_is_floating(dtype) && !yg__dtype_is_half(dtype))
        return yg__fail(
            YG_ERR_DTYPE, "%s: avg needs a floating dtype, got %s", op, yg_dtype_name(dtype));
    return YG_OK;
}
