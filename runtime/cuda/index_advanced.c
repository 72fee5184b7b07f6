/*
 * index_advanced.c - advanced indexing on a GPU (cuda/ops.h): index,
 * index_put and index_put_ with meta/index_plan.c's plan and checks, made
 * on the host from host copies of the indices; the walk makes the element
 * offset of every result element on the host, and the device gathers at
 * those offsets (yg__cuda_take) or writes at them (yg__cuda_put, grouped
 * by destination so that repeated positions accumulate in the CPU's
 * order, or keep the CPU's last write, deterministically).
 */
#include "cuda/cuda.h"
#include "decls/advanced_indexing.h"

#include "core/core.h"
#include "meta/index_plan.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static yg_status offsets_oom(const char *op, int64_t n) {
    return yg__fail(YG_ERR_OUT_OF_MEMORY,
                    "%s: out of host memory for the offsets of %" PRId64 " elements",
                    op,
                    n);
}

yg_status yg__cuda_index(const yg_tensor *self,
                         const yg_tensor *const *indices,
                         int64_t indices_len,
                         yg_tensor **out) {
    yg_index_plan p;
    yg_tensor *res = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__index_plan_init("index", self, indices, indices_len, &p));
    st = yg__tensor_new_on(
        "index", p.out_sizes, p.out_ndim, self->dtype, YG_CUDA, self->storage->device_index, &res);
    if (st == YG_OK) {
        int64_t n = yg__index_plan_numel(&p);
        int64_t *off = yg__index_plan_offsets(&p, self, n);
        st = off == NULL ? offsets_oom("index", n) : yg__cuda_take("index", self, off, n, res);
        free(off);
    }
    if (st == YG_OK)
        *out = res;
    else
        yg_release(res);
    yg__index_plan_free(&p);
    return st;
}

/* values broadcast over the indexed region of dst (expanded to the
 * plan's shape, made contiguous on the GPU), written at the offsets. */
static yg_status put_values(const char *op,
                            yg_tensor *dst,
                            const yg_tensor *const *indices,
                            int64_t indices_len,
                            const yg_tensor *values,
                            bool accumulate,
                            bool in_place) {
    yg_index_plan p;
    int64_t n = 0, span = 1, strides[YG_MAX_DIMS], *off = NULL;
    yg_tensor *vcopy = NULL, *ex = NULL, *vc = NULL;
    yg_status st;

    YG_RETURN_IF_ERROR(yg__index_put_prepare(
        op, dst, indices, indices_len, values, in_place, &p, &vcopy, &n));
    if (vcopy != NULL)
        values = vcopy;
    if (n == 0)
        goto out_ok;
    for (int32_t d = 0; d < dst->ndim; d++)
        span += (dst->sizes[d] - 1) * dst->strides[d];
    /* values' dims align right with the indexed shape; size 1 broadcasts */
    for (int32_t j = 0; j < p.out_ndim; j++) {
        int32_t v = j - (p.out_ndim - values->ndim);
        strides[j] = v < 0 || values->sizes[v] == 1 ? 0 : values->strides[v];
    }
    st = yg__tensor_view(op, values, p.out_sizes, strides, p.out_ndim, values->offset, &ex);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(ex, dst->dtype, false, &vc);
    if (st == YG_OK && (off = yg__index_plan_offsets(&p, dst, n)) == NULL)
        st = offsets_oom(op, n);
    if (st == YG_OK)
        st = yg__cuda_put(op, dst, off, n, span, vc, accumulate);
    free(off);
    yg_release(vc);
    yg_release(ex);
    yg_release(vcopy);
    yg__index_plan_free(&p);
    return st;
out_ok:
    yg_release(vcopy);
    yg__index_plan_free(&p);
    return YG_OK;
}

yg_status yg__cuda_index_put(const yg_tensor *self,
                             const yg_tensor *const *indices,
                             int64_t indices_len,
                             const yg_tensor *values,
                             bool accumulate,
                             yg_tensor **out) {
    yg_tensor *res = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__tensor_contiguous_as(self, self->dtype, false, &res));
    st = put_values("index_put", res, indices, indices_len, values, accumulate, false);
    if (st != YG_OK) {
        yg_release(res);
        return st;
    }
    *out = res;
    return YG_OK;
}

yg_status yg__cuda_index_put_(yg_tensor *self,
                              const yg_tensor *const *indices,
                              int64_t indices_len,
                              const yg_tensor *values,
                              bool accumulate,
                              yg_tensor **out) {
    *out = NULL;
    YG_RETURN_IF_ERROR(
        put_values("index_put_", self, indices, indices_len, values, accumulate, true));
    yg__tensor_bump_version(self);
    *out = yg_retain(self);
    return YG_OK;
}
