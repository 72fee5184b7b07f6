/*
 * dist_check.c - argument checks shared by the MPI process group and its
 * stub, so both builds report bad arguments alike.
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
    YG_RETURN_IF_ERROR(yg__check_defined(op, arg, t));
    if (yg_tensor_device(t) != YG_CPU)
        return yg__fail(YG_ERR_DEVICE,
                        "%s: %s is on a CUDA device; only CPU tensors are supported (the NCCL "
                        "backend is not implemented)",
                        op,
                        arg);
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

yg_status yg__dist_check_reduce(const char *op, yg_reduce_op rop, yg_dtype dtype) {
    if ((int)rop < 0 || rop >= YG_REDUCE_OP_COUNT_)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: unknown reduce op %d", op, (int)rop);
    if (rop == YG_REDUCE_AVG && !yg__dtype_is_floating(dtype) && !yg__dtype_is_half(dtype))
        return yg__fail(
            YG_ERR_DTYPE, "%s: avg needs a floating dtype, got %s", op, yg_dtype_name(dtype));
    return YG_OK;
}
