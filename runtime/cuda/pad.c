/*
 * pad.c - reflection_pad and replication_pad and their gradients on a GPU
 * (cuda/ops.h): the checks, padded sizes and source maps of meta/pad.c,
 * then index_select along each padded dim with that dim's map (the
 * forward), or index_select's index-add in reverse, in float64 (the
 * gradient), each run as the structured op it is: its meta function,
 * then this module's implementation (cuda/index.c).
 */
#include "cuda/cuda.h"
#include "decls/indexing.h"
#include "decls/padding.h"

#include "core/core.h"
#include "meta/meta.h"
#include "meta/pad.h"

#include <string.h>

/* forward: from gathered along each padded dim, the last first;
 * backward: the index-adds of those gathers in reverse, ending at
 * in_sizes.  maps as yg__pad_source_maps made them (on the host). */
static yg_status chain(bool backward,
                       const yg_tensor *from,
                       const int64_t *in_sizes,
                       const int64_t *osizes,
                       int64_t ndim,
                       int64_t *const *maps,
                       int64_t pad_len,
                       yg_tensor **out) {
    int64_t sizes[YG_MAX_DIMS], k = pad_len / 2;
    yg_tensor *cur = yg_retain((yg_tensor *)from);
    yg_status st = YG_OK;

    memcpy(sizes, osizes, sizeof(int64_t) * (size_t)ndim);
    for (int64_t j = 0; j < k && st == YG_OK; j++) {
        int64_t d = backward ? ndim - k + j : ndim - 1 - j;
        yg_tensor *index = NULL, *next = NULL;
        st = yg_tensor_from_data(maps[d], &osizes[d], 1, YG_INT64, &index);
        if (st == YG_OK && backward) {
            sizes[d] = in_sizes[d];
            st = yg__meta_index_select_backward(cur, sizes, ndim, d, index, &next);
            if (st == YG_OK)
                st = yg__cuda_index_select_backward_out(cur, sizes, ndim, d, index, next);
        } else if (st == YG_OK) {
            st = yg__meta_index_select(cur, d, index, &next);
            if (st == YG_OK)
                st = yg__cuda_index_select_out(cur, d, index, next);
        }
        yg_release(index);
        yg_release(cur);
        cur = next;
    }
    if (st != YG_OK) {
        yg_release(cur);
        return st;
    }
    *out = cur;
    return YG_OK;
}

static yg_status mode_pad(const char *op,
                          bool reflect,
                          const yg_tensor *self,
                          const int64_t *pad,
                          int64_t pad_len,
                          yg_tensor **out) {
    int64_t osizes[YG_MAX_DIMS], *maps[YG_MAX_DIMS], *block = NULL;
    size_t block_bytes = 0;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__pad_geometry(op, reflect, self->sizes, self->ndim, pad, pad_len, osizes));
    /* No maps for an empty result: its other dims may be huge. */
    if (yg__sizes_product(osizes, self->ndim) == 0)
        return yg__tensor_new_on(op, osizes, self->ndim, self->dtype, YG_CUDA,
                                 self->storage->device_index, out);
    st = yg__pad_source_maps(op, reflect, self->sizes, osizes, self->ndim, pad, pad_len, maps,
                             &block, &block_bytes);
    if (st == YG_OK)
        st = chain(false, self, self->sizes, osizes, self->ndim, maps, pad_len, out);
    yg__free(block, block_bytes);
    return st;
}

static yg_status mode_pad_backward(const char *op,
                                   bool reflect,
                                   const yg_tensor *grad_output,
                                   const int64_t *self_sizes,
                                   int64_t self_sizes_len,
                                   const int64_t *pad,
                                   int64_t pad_len,
                                   yg_tensor **out) {
    int64_t osizes[YG_MAX_DIMS], *maps[YG_MAX_DIMS], *block = NULL;
    size_t block_bytes = 0;
    yg_tensor *go = NULL, *res = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__pad_backward_check(
        op, reflect, grad_output, self_sizes, self_sizes_len, pad, pad_len, osizes));
    st = yg__tensor_contiguous_as(grad_output, YG_FLOAT64, true, &go);
    if (st == YG_OK && yg_tensor_numel(go) > 0) {
        st = yg__pad_source_maps(op, reflect, self_sizes, osizes, self_sizes_len, pad, pad_len,
                                 maps, &block, &block_bytes);
        if (st == YG_OK)
            st = chain(true, go, self_sizes, osizes, self_sizes_len, maps, pad_len, &res);
    } else if (st == YG_OK) {
        /* no gradient element: zeros of self_sizes */
        st = yg__tensor_zeros_on(op, self_sizes, self_sizes_len, YG_FLOAT64, YG_CUDA,
                                 grad_output->storage->device_index, &res);
    }
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(res, grad_output->dtype, true, out);
    yg__free(block, block_bytes);
    yg_release(go);
    yg_release(res);
    return st;
}

yg_status yg__cuda_reflection_pad(const yg_tensor *self,
                                  const int64_t *pad,
                                  int64_t pad_len,
                                  yg_tensor **out) {
    return mode_pad("reflection_pad", true, self, pad, pad_len, out);
}

yg_status yg__cuda_replication_pad(const yg_tensor *self,
                                   const int64_t *pad,
                                   int64_t pad_len,
                                   yg_tensor **out) {
    return mode_pad("replication_pad", false, self, pad, pad_len, out);
}

yg_status yg__cuda_reflection_pad_backward(const yg_tensor *grad_output,
                                           const int64_t *self_sizes,
                                           int64_t self_sizes_len,
                                           const int64_t *pad,
                                           int64_t pad_len,
                                           yg_tensor **out) {
    return mode_pad_backward("reflection_pad_backward", true, grad_output, self_sizes,
                             self_sizes_len, pad, pad_len, out);
}

yg_status yg__cuda_replication_pad_backward(const yg_tensor *grad_output,
                                            const int64_t *self_sizes,
                                            int64_t self_sizes_len,
                                            const int64_t *pad,
                                            int64_t pad_len,
                                            yg_tensor **out) {
    return mode_pad_backward("replication_pad_backward", false, grad_output, self_sizes,
                             self_sizes_len, pad, pad_len, out);
}
