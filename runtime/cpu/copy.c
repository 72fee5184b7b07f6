/*
 * copy.c - yg__tensor_contiguous_as: a contiguous copy of any strided
 * tensor, converted to any dtype (float32, float64, int64, bool).
 *
 * Every kernel that wants plain row-major data (BLAS, reductions over odd
 * layouts, pointwise inputs of another dtype, clone) goes through here, so
 * it has three speeds.  A tensor that is already contiguous with the wanted
 * dtype is shared (a new reference) when the caller allows it, or copied
 * with one memcpy.  Otherwise the source is walked in row-major order with
 * an odometer over its outer dims and a typed inner loop over the
 * innermost dim; dims of size 1 are skipped and neighbours that are
 * contiguous with each other are merged first, so e.g. a slice of rows
 * becomes a single long run.  Conversions follow C's rules, except that a
 * conversion to bool gives true for any non-zero value (C's own rule for
 * _Bool, stated here because it differs from a plain integer cast).
 */
#include "cpu/cpu.h"

#include <string.h>

/* One typed inner loop: n elements from src (byte stride sstride) to a
 * contiguous dst. */
typedef void (*copy_fn)(char *dst, const char *src, int64_t sstride, int64_t n);

#define DEFINE_COPY(NAME, DST_T, SRC_T)                                                            \
    static void NAME(char *dst, const char *src, int64_t sstride, int64_t n) {                     \
        DST_T *d = (DST_T *)dst;                                                                   \
        for (int64_t i = 0; i < n; i++)                                                            \
            d[i] = (DST_T) * (const SRC_T *)(src + i * sstride);                                   \
    }

DEFINE_COPY(copy_f32_f32, float, float)
DEFINE_COPY(copy_f32_f64, float, double)
DEFINE_COPY(copy_f32_i64, float, int64_t)
DEFINE_COPY(copy_f32_b8, float, bool)
DEFINE_COPY(copy_f64_f32, double, float)
DEFINE_COPY(copy_f64_f64, double, double)
DEFINE_COPY(copy_f64_i64, double, int64_t)
DEFINE_COPY(copy_f64_b8, double, bool)
DEFINE_COPY(copy_i64_f32, int64_t, float)
DEFINE_COPY(copy_i64_f64, int64_t, double)
DEFINE_COPY(copy_i64_i64, int64_t, int64_t)
DEFINE_COPY(copy_i64_b8, int64_t, bool)
DEFINE_COPY(copy_b8_f32, bool, float)
DEFINE_COPY(copy_b8_f64, bool, double)
DEFINE_COPY(copy_b8_i64, bool, int64_t)
DEFINE_COPY(copy_b8_b8, bool, bool)

#undef DEFINE_COPY

/* [dst dtype][src dtype], in yg_dtype order. */
static const copy_fn copy_table[YG_DTYPE_COUNT_][YG_DTYPE_COUNT_] = {
    [YG_FLOAT32] = {[YG_FLOAT32] = copy_f32_f32,
                    [YG_FLOAT64] = copy_f32_f64,
                    [YG_INT64] = copy_f32_i64,
                    [YG_BOOL] = copy_f32_b8},
    [YG_FLOAT64] = {[YG_FLOAT32] = copy_f64_f32,
                    [YG_FLOAT64] = copy_f64_f64,
                    [YG_INT64] = copy_f64_i64,
                    [YG_BOOL] = copy_f64_b8},
    [YG_INT64] = {[YG_FLOAT32] = copy_i64_f32,
                  [YG_FLOAT64] = copy_i64_f64,
                  [YG_INT64] = copy_i64_i64,
                  [YG_BOOL] = copy_i64_b8},
    [YG_BOOL] = {[YG_FLOAT32] = copy_b8_f32,
                 [YG_FLOAT64] = copy_b8_f64,
                 [YG_INT64] = copy_b8_i64,
                 [YG_BOOL] = copy_b8_b8},
};

/* Source geometry reduced to what the walk needs: dim 0 innermost, size-1
 * dims dropped, contiguous neighbours merged; strides in bytes. */
static int collapse(const yg_tensor *t, int64_t *sizes, int64_t *strides) {
    int64_t esize = (int64_t)yg_dtype_size(t->dtype);
    int nd = 0;
    for (int32_t d = t->ndim - 1; d >= 0; d--) {
        if (t->sizes[d] == 1)
            continue;
        int64_t stride = t->strides[d] * esize;
        if (nd > 0 && stride == strides[nd - 1] * sizes[nd - 1]) {
            sizes[nd - 1] *= t->sizes[d];
            continue;
        }
        sizes[nd] = t->sizes[d];
        strides[nd] = stride;
        nd++;
    }
    if (nd == 0) {
        sizes[0] = 1;
        strides[0] = 0;
        nd = 1;
    }
    return nd;
}

/* Copies the numel > 0 elements of src into the contiguous dst. */
static void strided_copy(char *dst, const yg_tensor *src, yg_dtype dtype) {
    int64_t sizes[YG_MAX_DIMS], strides[YG_MAX_DIMS], idx[YG_MAX_DIMS] = {0};
    int nd = collapse(src, sizes, strides);
    copy_fn fn = copy_table[dtype][src->dtype];
    int64_t row_bytes = sizes[0] * (int64_t)yg_dtype_size(dtype);
    const char *sp = yg__tensor_ptr(src);

    for (;;) {
        fn(dst, sp, strides[0], sizes[0]);
        dst += row_bytes;
        int d = 1;
        for (; d < nd; d++) {
            if (++idx[d] < sizes[d]) {
                sp += strides[d];
                break;
            }
            idx[d] = 0;
            sp -= (sizes[d] - 1) * strides[d];
        }
        if (d == nd)
            return;
    }
}

yg_status yg__tensor_contiguous_as(const yg_tensor *t,
                                   yg_dtype dtype,
                                   bool share_if_possible,
                                   yg_tensor **out) {
    yg_tensor *res = NULL;
    int64_t numel = 1;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_defined("contiguous", "self", t));
    if ((int)dtype < 0 || dtype >= YG_DTYPE_COUNT_)
        return yg__fail(YG_ERR_DTYPE, "contiguous: invalid dtype %d", (int)dtype);
    if (t->storage->device != YG_CPU)
        return yg__fail(YG_ERR_DEVICE,
                        "contiguous: expected self on cpu, got %s",
                        yg__device_name(t->storage->device));
    bool contiguous = yg_tensor_is_contiguous(t);
    if (share_if_possible && contiguous && t->dtype == dtype) {
        *out = yg_retain((yg_tensor *)t);
        return YG_OK;
    }
    YG_RETURN_IF_ERROR(yg__tensor_empty_like(t, dtype, &res));
    for (int32_t d = 0; d < t->ndim; d++)
        numel *= t->sizes[d];
    if (numel > 0) {
        if (contiguous && t->dtype == dtype)
            memcpy(yg__tensor_ptr(res), yg__tensor_ptr(t), (size_t)numel * yg_dtype_size(dtype));
        else
            strided_copy(yg__tensor_ptr(res), t, dtype);
    }
    *out = res;
    return YG_OK;
}
