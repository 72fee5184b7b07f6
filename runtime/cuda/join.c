/*
 * join.c - cat on a GPU: the CUDA implementation of the structured op
 * (cuda/ops.h), which copies (and converts) each piece into its slice of
 * the result meta/join.c made, with the copy kernel of cuda/copy.cu.
 */
#include "cuda/cuda.h"
#include "decls/join_split.h"

#include "core/core.h"

yg_status yg__cuda_cat_out(const yg_tensor *const *tensors,
                           int64_t tensors_len,
                           int64_t dim,
                           yg_tensor *out) {
    int64_t sizes[YG_MAX_DIMS], d = dim < 0 ? dim + out->ndim : dim, offset = 0;
    yg_status st = YG_OK;

    if (yg_tensor_numel(out) == 0)
        return YG_OK;
    for (int32_t k = 0; k < out->ndim; k++)
        sizes[k] = out->sizes[k];
    for (int64_t i = 0; i < tensors_len && st == YG_OK; i++) {
        yg_tensor *slot = NULL;
        int64_t len = tensors[i]->sizes[d];
        if (len == 0)
            continue;
        sizes[d] = len;
        st = yg__tensor_view(
            "cat", out, sizes, out->strides, out->ndim, out->offset + offset * out->strides[d], &slot);
        if (st == YG_OK)
            st = yg__cuda_copy("cat", slot, tensors[i]);
        yg_release(slot);
        offset += len;
    }
    return st;
}
