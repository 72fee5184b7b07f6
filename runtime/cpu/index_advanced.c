/*
 * index_advanced.c - advanced indexing: self[indices] (index) and its
 * writing forms index_put / index_put_, with NumPy's and PyTorch's rules.
 *
 * indices holds one entry per leading dim of self: an int64 tensor picks
 * positions along its dim, a bool mask of k dims stands for the k int64
 * tensors of its true positions (it must match self's sizes there), NULL
 * keeps the whole dim (a full slice), and dims past the end of the list
 * are kept too.  The int64 tensors broadcast together to one shape B.  The
 * result has B in place of the indexed dims when those are adjacent
 * (x[:, i, j] of [N, A, B, C] is [N, *B, C]); when a kept dim separates
 * them, B comes first and the kept dims follow in order, as in NumPy.
 * Negative indices count from the end of their dim.
 *
 * Everything is validated (dtypes, mask sizes, broadcasting, every index
 * value against its dim) before anything is allocated for the result or
 * written, so a bad index fails with YG_ERR_INDEX naming the op, the dim,
 * the value and the size.  The walk is one flat loop over the elements of
 * the result (of the indexed region, for index_put) whose coordinates are
 * recovered by division, reading and writing through strides: like
 * index.c, these are memory-bound gathers and scatters.
 *
 * The plan and the checks are meta/index_plan.c's, which the GPU's
 * kernels (cuda/index_advanced.c) share: there the walk makes the element
 * offset of every result element on the host, and the device gathers at
 * those offsets or writes at them (grouped by destination so that
 * repeated positions accumulate in the CPU's order, or keep the CPU's
 * last write, deterministically).
 */
#include "cpu/cpu.h"
#include "decls/advanced_indexing.h"
#include "meta/index_plan.h"

#include <string.h>

yg_status yg__cpu_index(const yg_tensor *self,
                        const yg_tensor *const *indices,
                        int64_t indices_len,
                        yg_tensor **out) {
    yg_index_plan p;
    int64_t c[YG_MAX_DIMS];
    yg_tensor *res = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__index_plan_init("index", self, indices, indices_len, &p));
    st = yg__tensor_new_on("index", p.out_sizes, p.out_ndim, self->dtype, YG_CPU, 0, &res);
    if (st == YG_OK) {
        int64_t n = yg__index_plan_numel(&p);
        size_t esize = yg_dtype_size(self->dtype);
        char *dst = yg__tensor_ptr(res), *src = yg__tensor_ptr(self);
        for (int64_t i = 0; i < n; i++) {
            yg__index_coords_of(i, p.out_sizes, p.out_ndim, c);
            memcpy(dst + (size_t)i * esize, src + yg__index_plan_offset(&p, self, c), esize);
        }
        *out = res;
    }
    yg__index_plan_free(&p);
    return st;
}

static void accumulate(char *dst, const char *src, yg_dtype dtype) {
    switch (dtype) {
    case YG_FLOAT32:
        *(float *)dst += *(const float *)src;
        break;
    case YG_FLOAT64:
        *(double *)dst += *(const double *)src;
        break;
    case YG_INT64:
        *(int64_t *)dst += *(const int64_t *)src;
        break;
    case YG_INT32:
        *(int32_t *)dst += *(const int32_t *)src;
        break;
    case YG_FLOAT16: /* added in double (exact for two halves), rounded once */
        *(uint16_t *)dst = yg__f16_from_f64((double)yg__f16_to_f32(*(const uint16_t *)dst) +
                                            (double)yg__f16_to_f32(*(const uint16_t *)src));
        break;
    case YG_BFLOAT16:
        *(uint16_t *)dst = yg__bf16_from_f64((double)yg__bf16_to_f32(*(const uint16_t *)dst) +
                                             (double)yg__bf16_to_f32(*(const uint16_t *)src));
        break;
    default: /* bool adds as logical or */
        *(bool *)dst = *(bool *)dst || *(const bool *)src;
        break;
    }
}

/* Writes (or, with accumulate, adds) values broadcast over the indexed
 * region of dst, after index_put's checks (meta/index_plan.c). */
static yg_status put_values(const char *op,
                            yg_tensor *dst,
                            const yg_tensor *const *indices,
                            int64_t indices_len,
                            const yg_tensor *values,
                            bool accumulate_,
                            bool in_place) {
    yg_index_plan p;
    int64_t c[YG_MAX_DIMS], n = 0;
    yg_tensor *vcopy = NULL;

    YG_RETURN_IF_ERROR(yg__index_put_prepare(
        op, dst, indices, indices_len, values, in_place, &p, &vcopy, &n));
    if (vcopy != NULL)
        values = vcopy;
    size_t esize = yg_dtype_size(dst->dtype);
    char *base = yg__tensor_ptr(dst), *vbase = yg__tensor_ptr(values);
    for (int64_t i = 0; i < n; i++) {
        yg__index_coords_of(i, p.out_sizes, p.out_ndim, c);
        int64_t voff = 0;
        for (int32_t j = 0; j < values->ndim; j++) {
            int64_t cj = c[p.out_ndim - values->ndim + j];
            voff += (values->sizes[j] == 1 ? 0 : cj) * values->strides[j];
        }
        char *d = base + yg__index_plan_offset(&p, dst, c);
        const char *v = vbase + voff * (int64_t)esize;
        if (accumulate_)
            accumulate(d, v, dst->dtype);
        else
            memcpy(d, v, esize);
    }
    yg_release(vcopy);
    yg__index_plan_free(&p);
    return YG_OK;
}

yg_status yg__cpu_index_put(const yg_tensor *self,
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

yg_status yg__cpu_index_put_(yg_tensor *self,
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
