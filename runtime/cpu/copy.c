/*
 * copy.c - yg__tensor_contiguous_as: a contiguous copy of any strided
 * tensor, converted to any dtype (every pair of the seven).
 *
 * Every kernel that wants plain row-major data (BLAS, reductions over odd
 * layouts, pointwise inputs of another dtype, clone) goes through here, so
 * it has three speeds.  A tensor that is already contiguous with the wanted
 * dtype is shared (a new reference) when the caller allows it, or copied
 * with one memcpy.  Otherwise the source is walked in row-major order with
 * an odometer over its outer dims and a typed inner loop over the
 * innermost dim; dims of size 1 are skipped and neighbours that are
 * contiguous with each other are merged first, so e.g. a slice of rows
 * becomes a single long run.  Conversions follow C's rules where C
 * defines them (a conversion to bool gives true for any non-zero value,
 * NaN too); where C does not (NaN or out-of-range floats to integers,
 * int64 to int32) and for float16/bfloat16 they follow core/convert.c.
 * A tensor of another device is copied there by the same rules, by its
 * backend's copy (core/backend.h; the CUDA module's yg__cuda_copy).
 */
#include "core/backend.h"
#include "cpu/cpu.h"
#include "cpu/cpu_int.h"
#include "decls/dtype_conversion.h"

#include <inttypes.h>
#include <stdint.h>
#include <string.h>

/* One typed inner loop: n elements from src (byte stride sstride) to a
 * contiguous dst. */
typedef void (*copy_fn)(char *dst, const char *src, int64_t sstride, int64_t n);

/* Loads: a floating source reads as double (exact for every floating
 * dtype), an integer or bool source as int64_t (exact).  A bool byte is
 * read as "non-zero" so that a stray byte value cannot make an invalid
 * _Bool. */
static inline double ld_f32(const char *p) {
    return *(const float *)p;
}
static inline double ld_f64(const char *p) {
    return *(const double *)p;
}
static inline double ld_f16(const char *p) {
    return yg__f16_to_f32(*(const uint16_t *)p);
}
static inline double ld_bf16(const char *p) {
    return yg__bf16_to_f32(*(const uint16_t *)p);
}
static inline int64_t ld_i64(const char *p) {
    return *(const int64_t *)p;
}
static inline int64_t ld_i32(const char *p) {
    return *(const int32_t *)p;
}
static inline int64_t ld_b8(const char *p) {
    return *(const unsigned char *)p != 0;
}

/* Stores, one from double (_F) and one from int64_t (_I) per dtype, by the
 * rules in convert.c: one rounding into float16/bfloat16, saturation from
 * floating to integers, wrap-around from int64 to int32. */
static inline float st_f32_F(double v) {
    return (float)v;
}
static inline float st_f32_I(int64_t v) {
    return (float)v;
}
static inline double st_f64_F(double v) {
    return v;
}
static inline double st_f64_I(int64_t v) {
    return (double)v;
}
static inline int64_t st_i64_F(double v) {
    return yg__i64_from_f64(v);
}
static inline int64_t st_i64_I(int64_t v) {
    return v;
}
static inline bool st_b8_F(double v) {
    return v != 0;
}
static inline bool st_b8_I(int64_t v) {
    return v != 0;
}
static inline int32_t st_i32_F(double v) {
    return yg__i32_from_f64(v);
}
static inline int32_t st_i32_I(int64_t v) {
    return yg__i32_from_i64(v);
}
static inline uint16_t st_f16_F(double v) {
    return yg__f16_from_f64(v);
}
static inline uint16_t st_f16_I(int64_t v) {
    return yg__f16_from_i64(v);
}
static inline uint16_t st_bf16_F(double v) {
    return yg__bf16_from_f64(v);
}
static inline uint16_t st_bf16_I(int64_t v) {
    return yg__bf16_from_i64(v);
}

/* copy_<dst>_<src>; KIND is F for a floating source, I for an integer one. */
#define DEFINE_COPY(DST, DST_T, SRC, KIND)                                                         \
    static void copy_##DST##_##SRC(char *dst, const char *src, int64_t sstride, int64_t n) {       \
        DST_T *d = (DST_T *)dst;                                                                   \
        for (int64_t i = 0; i < n; i++)                                                            \
            d[i] = st_##DST##_##KIND(ld_##SRC(src + i * sstride));                                 \
    }

/* Every source dtype into one destination dtype. */
#define DEFINE_COPIES_TO(DST, DST_T)                                                               \
    DEFINE_COPY(DST, DST_T, f32, F)                                                                \
    DEFINE_COPY(DST, DST_T, f64, F)                                                                \
    DEFINE_COPY(DST, DST_T, i64, I)                                                                \
    DEFINE_COPY(DST, DST_T, b8, I)                                                                 \
    DEFINE_COPY(DST, DST_T, i32, I)                                                                \
    DEFINE_COPY(DST, DST_T, f16, F)                                                                \
    DEFINE_COPY(DST, DST_T, bf16, F)

DEFINE_COPIES_TO(f32, float)
DEFINE_COPIES_TO(f64, double)
DEFINE_COPIES_TO(i64, int64_t)
DEFINE_COPIES_TO(b8, bool)
DEFINE_COPIES_TO(i32, int32_t)
DEFINE_COPIES_TO(f16, uint16_t)
DEFINE_COPIES_TO(bf16, uint16_t)

#undef DEFINE_COPIES_TO
#undef DEFINE_COPY

/* A row of copy_table: every source dtype, in yg_dtype order. */
#define COPY_ROW(DST)                                                                              \
    {                                                                                              \
        [YG_FLOAT32] = copy_##DST##_f32, [YG_FLOAT64] = copy_##DST##_f64,                          \
        [YG_INT64] = copy_##DST##_i64, [YG_BOOL] = copy_##DST##_b8, [YG_INT32] = copy_##DST##_i32, \
        [YG_FLOAT16] = copy_##DST##_f16, [YG_BFLOAT16] = copy_##DST##_bf16,                        \
    }

/* [dst dtype][src dtype]. */
static const copy_fn copy_table[YG_DTYPE_COUNT_][YG_DTYPE_COUNT_] = {
    [YG_FLOAT32] = COPY_ROW(f32),
    [YG_FLOAT64] = COPY_ROW(f64),
    [YG_INT64] = COPY_ROW(i64),
    [YG_BOOL] = COPY_ROW(b8),
    [YG_INT32] = COPY_ROW(i32),
    [YG_FLOAT16] = COPY_ROW(f16),
    [YG_BFLOAT16] = COPY_ROW(bf16),
};

#undef COPY_ROW

/* Source geometry reduced to what the walk needs: dim 0 innermost, size-1
 * dims dropped, contiguous neighbours merged; strides in bytes. */
static int collapse(const yg_tensor *t, int64_t *sizes, int64_t *strides) {
    int64_t esize = (int64_t)yg_dtype_size(t->dtype);
    int nd = 0;
    for (int32_t d = t->ndim - 1; d >= 0; d--) {
        if (t->sizes[d] == 1)
            continue;
        /* Only called for a non-empty t: its strides and sizes' products
         * lie inside its extent (core/sizes.h). */
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

/* A walk over the numel > 0 elements of a geometry (collapsed once, used
 * for any number of copies from different starting points). */
typedef struct copy_walk {
    int nd;
    int64_t sizes[YG_MAX_DIMS], strides[YG_MAX_DIMS];
    copy_fn fn;
    bool same; /* a dense row of the same dtype: a plain byte copy */
    int64_t row_bytes;
} copy_walk;

static void walk_init(copy_walk *w, const yg_tensor *src, yg_dtype dtype) {
    w->nd = collapse(src, w->sizes, w->strides);
    w->fn = copy_table[dtype][src->dtype];
    w->row_bytes = w->sizes[0] * (int64_t)yg_dtype_size(dtype);
    w->same = src->dtype == dtype && w->strides[0] == (int64_t)yg_dtype_size(dtype);
}

/* Copies the elements of w's geometry starting at sp into the contiguous
 * dst. */
static void walk_copy(const copy_walk *w, char *dst, const char *sp) {
    int64_t idx[YG_MAX_DIMS] = {0};

    for (;;) {
        if (w->same)
            memcpy(dst, sp, (size_t)w->row_bytes);
        else
            w->fn(dst, sp, w->strides[0], w->sizes[0]);
        dst += w->row_bytes;
        int d = 1;
        for (; d < w->nd; d++) {
            if (++idx[d] < w->sizes[d]) {
                sp += w->strides[d];
                break;
            }
            idx[d] = 0;
            sp -= (w->sizes[d] - 1) * w->strides[d];
        }
        if (d == w->nd)
            return;
    }
}

/* Copies the numel > 0 elements of src into the contiguous dst. */
static void strided_copy(char *dst, const yg_tensor *src, yg_dtype dtype) {
    copy_walk w;

    walk_init(&w, src, dtype);
    walk_copy(&w, dst, yg__tensor_ptr(src));
}

void yg__cpu_copy_rows(char *dst,
                       int64_t dst_row_bytes,
                       const yg_tensor *src,
                       int32_t dim,
                       yg_dtype dtype) {
    int64_t idx[YG_MAX_DIMS] = {0};
    int64_t esize = (int64_t)yg_dtype_size(src->dtype);
    const char *sp = yg__tensor_ptr(src);
    /* A header describing one row (the dims from dim on) for walk_init
     * only: it is never retained, released or given out. */
    yg_tensor row = *src;
    copy_walk w;

    for (int32_t d = 0; d < src->ndim; d++)
        if (src->sizes[d] == 0)
            return;
    row.ndim = src->ndim - dim;
    memmove(row.sizes, src->sizes + dim, sizeof(int64_t) * (size_t)row.ndim);
    memmove(row.strides, src->strides + dim, sizeof(int64_t) * (size_t)row.ndim);
    walk_init(&w, &row, dtype);
    for (;;) {
        walk_copy(&w, dst, sp);
        dst += dst_row_bytes;
        int32_t d = dim - 1;
        for (; d >= 0; d--) {
            if (++idx[d] < src->sizes[d]) {
                sp += src->strides[d] * esize;
                break;
            }
            idx[d] = 0;
            sp -= (src->sizes[d] - 1) * src->strides[d] * esize;
        }
        if (d < 0)
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
    bool contiguous = yg_tensor_is_contiguous(t);
    if (share_if_possible && contiguous && t->dtype == dtype) {
        *out = yg_retain((yg_tensor *)t);
        return YG_OK;
    }
    if (t->storage->device != YG_CPU) {
        /* The tensor exists, so its backend registered: its copy kernel. */
        YG_RETURN_IF_ERROR(yg__tensor_new_on("contiguous",
                                             t->sizes,
                                             t->ndim,
                                             dtype,
                                             t->storage->device,
                                             t->storage->device_index,
                                             &res));
        yg_status st = yg__backend_of(t->storage->device)->copy("contiguous", res, t);
        if (st != YG_OK) {
            yg_release(res);
            return st;
        }
        *out = res;
        return YG_OK;
    }
    YG_RETURN_IF_ERROR(yg__tensor_empty_like(t, dtype, &res));
    numel = yg_tensor_numel(t);
    if (numel > 0) {
        if (contiguous && t->dtype == dtype)
            memcpy(yg__tensor_ptr(res), yg__tensor_ptr(t), (size_t)numel * yg_dtype_size(dtype));
        else
            strided_copy(yg__tensor_ptr(res), t, dtype);
    }
    *out = res;
    return YG_OK;
}

yg_status yg__kernel_to_copy(const yg_tensor *self, yg_dtype dtype, yg_tensor **out) {
    *out = NULL;
    if ((int)dtype < 0 || dtype >= YG_DTYPE_COUNT_)
        return yg__fail(YG_ERR_DTYPE, "to_copy: invalid dtype %d", (int)dtype);
    yg_status st = yg__tensor_contiguous_as(self, dtype, false, out);
    if (st != YG_OK)
        return yg__fail_prefix(st, "to_copy");
    return YG_OK;
}

yg_status
yg__kernel_to_device(const yg_tensor *self, yg_device device, int64_t index, yg_tensor **out) {
    yg_tensor *r = NULL;
    *out = NULL;
    if ((unsigned)device >= YG_DEVICE_COUNT_)
        return yg__fail(YG_ERR_DEVICE, "to_device: invalid device %d", (int)device);
    if (device == YG_CPU)
        index = 0;
    if (index < 0 || index > INT32_MAX)
        return yg__fail(YG_ERR_DEVICE,
                        "to_device: device index %" PRId64 " out of range",
                        index);
    YG_RETURN_IF_ERROR(yg__tensor_to(self, device, (int32_t)index, &r));
    if (r != self) {
        *out = r;
        return YG_OK;
    }
    /* There already: still a new tensor, which the op's node may own. */
    yg_release(r);
    return yg__tensor_contiguous_as(self, self->dtype, false, out);
}
