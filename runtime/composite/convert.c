/*
 * composite/convert.c - dtype conversion written with to_copy: to.dtype
 * and type_as.
 *
 * to.dtype returns self itself (a new reference, with its history) when
 * self already has the wanted dtype and no copy is asked for, as PyTorch's
 * Tensor.to does; callers that need a tensor they may write must pass
 * copy = true.  Every conversion goes through to_copy, the one op with a
 * derivative, so autograd sees a single node per conversion and nothing
 * for the shared case.
 */
#include "composite/composite.h"
#include "decls/dtype_conversion.h"
#include "yagrad/ops_dtype_conversion.h"

yg_status yg__composite_to_dtype(const yg_tensor *self,
                                 yg_dtype dtype,
                                 bool copy,
                                 yg_tensor **out) {
    *out = NULL;
    if (!copy && yg_tensor_dtype(self) == dtype) {
        *out = yg_retain((yg_tensor *)self);
        return YG_OK;
    }
    return yg_to_copy(self, dtype, out);
}

yg_status yg__composite_type_as(const yg_tensor *self, const yg_tensor *other, yg_tensor **out) {
    return yg_to_dtype(self, yg_tensor_dtype(other), false, out);
}
