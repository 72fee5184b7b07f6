/*
 * reduce.c - sum and mean, over all dims or over a list of dims, with
 * keepdim (yg__cpu_sum, yg__cpu_sum_dim, yg__cpu_mean,
 * yg__cpu_mean_dim), on either device.
 *
 * One walk serves every case: the input is visited once in its own memory
 * order (after dropping size-1 dims and merging neighbours that are
 * contiguous with each other), and each element is added into an
 * accumulator slot whose stride is 0 along reduced dims.  Visiting the
 * input in memory order keeps both common shapes fast without special
 * cases: reducing the last dim of a row-major matrix is a scalar loop over
 * contiguous memory, and reducing dim 0 (the bias gradient of a linear
 * layer) adds whole contiguous rows into the accumulator row.  Transposed
 * and other strided views need no copy.  Large inputs split the walk's
 * outermost dim over the OpenMP threads (rwalk_run).
 *
 * Accuracy: floating inputs (float32 too) accumulate in double and are
 * rounded once at the end, so a float32 sum of a million elements keeps
 * float32 precision instead of losing ~3 digits to sequential rounding.
 * int64 and bool sum in int64 (bool sums to int64, as in PyTorch); mean is
 * only defined for floating dtypes.  An empty reduction gives 0 for sum and
 * NaN (0/0) for mean.
 *
 * On a GPU the kept dims and then the reduced ones are laid out as
 * contiguous rows, which cuda/reduce.cu sums (the same accumulators).
 */
#include "cpu/cpu.h"
#include "decls/sums.h"
#include "meta/rows.h"

#include <inttypes.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

/* Below this many input elements the sum runs on the calling thread, as
 * the pointwise iterator decides (cpu/pointwise.c). */
#define YG_REDUCE_PARALLEL_MIN 32768

/* The walk over the input: dim 0 innermost; input strides in bytes,
 * accumulator strides in elements (0 along reduced dims). */
typedef struct rwalk {
    int ndim;
    int64_t sizes[YG_MAX_DIMS];
    int64_t istrides[YG_MAX_DIMS];
    int64_t astrides[YG_MAX_DIMS];
} rwalk;

/* Adds n input elements (byte stride is) into acc (element stride as). */
typedef void (*accum_fn)(void *acc, int64_t as, const char *src, int64_t is, int64_t n);

/* The contiguous cases are `omp simd` loops: the reduction clause lets
 * the compiler keep one partial sum per vector lane (a reordering of the
 * additions that -O2 alone may not make for floating point). */
#define DEFINE_ACCUM(NAME, ACC_T, SRC_T)                                                           \
    static void NAME(void *accp, int64_t as, const char *src, int64_t is, int64_t n) {             \
        ACC_T *acc = accp;                                                                         \
        const SRC_T *p = (const SRC_T *)src;                                                       \
        bool contiguous = is == (int64_t)sizeof(SRC_T);                                            \
        if (as == 0) {                                                                             \
            ACC_T s = 0;                                                                           \
            if (contiguous) {                                                                      \
                _Pragma("omp simd reduction(+ : s)") for (int64_t i = 0; i < n; i++) s +=          \
                    (ACC_T)p[i];                                                                   \
            } else {                                                                               \
                for (int64_t i = 0; i < n; i++)                                                    \
                    s += (ACC_T) * (const SRC_T *)(src + i * is);                                  \
            }                                                                                      \
            *acc += s;                                                                             \
            return;                                                                                \
        }                                                                                          \
        if (as == 1 && contiguous) {                                                               \
            _Pragma("omp simd") for (int64_t i = 0; i < n; i++) acc[i] += (ACC_T)p[i];             \
            return;                                                                                \
        }                                                                                          \
        for (int64_t i = 0; i < n; i++)                                                            \
            acc[i * as] += (ACC_T) * (const SRC_T *)(src + i * is);                                \
    }

DEFINE_ACCUM(accum_f32, double, float)
DEFINE_ACCUM(accum_f64, double, double)
DEFINE_ACCUM(accum_i64, int64_t, int64_t)
DEFINE_ACCUM(accum_b8, int64_t, bool)
DEFINE_ACCUM(accum_i32, int64_t, int32_t)

#undef DEFINE_ACCUM

/* float16 and bfloat16: each element converted exactly to float, summed
 * in double like float32 (the result is rounded once on store). */
#define DEFINE_ACCUM_HALF(NAME, TO_F32)                                                            \
    static void NAME(void *accp, int64_t as, const char *src, int64_t is, int64_t n) {             \
        double *acc = accp;                                                                        \
        for (int64_t i = 0; i < n; i++)                                                            \
            acc[i * as] += (double)TO_F32(*(const uint16_t *)(src + i * is));                      \
    }

DEFINE_ACCUM_HALF(accum_f16, yg__f16_to_f32)
DEFINE_ACCUM_HALF(accum_bf16, yg__bf16_to_f32)

#undef DEFINE_ACCUM_HALF

static accum_fn accum_for(yg_dtype dtype) {
    switch (dtype) {
    case YG_FLOAT32:
        return accum_f32;
    case YG_FLOAT64:
        return accum_f64;
    case YG_INT64:
        return accum_i64;
    case YG_BOOL:
        return accum_b8;
    case YG_INT32:
        return accum_i32;
    case YG_FLOAT16:
        return accum_f16;
    case YG_BFLOAT16:
        return accum_bf16;
    default:
        return NULL;
    }
}

/* Builds the walk from self and the reduced-dim mask; astride_of[d] is
 * the accumulator stride of input dim d. */
static void rwalk_init(rwalk *w, const yg_tensor *self, const int64_t *astride_of) {
    int64_t esize = (int64_t)yg_dtype_size(self->dtype);
    int nd = 0;
    for (int32_t d = self->ndim - 1; d >= 0; d--) {
        int64_t size = self->sizes[d];
        int64_t is = self->strides[d] * esize, as = astride_of[d];
        if (size == 1)
            continue;
        if (nd > 0 && is == w->istrides[nd - 1] * w->sizes[nd - 1] &&
            as == w->astrides[nd - 1] * w->sizes[nd - 1]) {
            w->sizes[nd - 1] *= size;
            continue;
        }
        w->sizes[nd] = size;
        w->istrides[nd] = is;
        w->astrides[nd] = as;
        nd++;
    }
    if (nd == 0) {
        w->sizes[0] = 1;
        w->istrides[0] = 0;
        w->astrides[0] = 0;
        nd = 1;
    }
    w->ndim = nd;
}

/* Adds the elements of self whose index along the walk's outermost dim
 * lies in [lo, hi) into acc (the whole walk's accumulator). */
static void rwalk_range(const rwalk *w,
                        const char *src,
                        char *acc,
                        size_t acc_esize,
                        accum_fn fn,
                        int64_t lo,
                        int64_t hi) {
    int top = w->ndim - 1;
    int64_t esize = (int64_t)acc_esize;

    if (top == 0) {
        fn(acc + lo * w->astrides[0] * esize,
           w->astrides[0],
           src + lo * w->istrides[0],
           w->istrides[0],
           hi - lo);
        return;
    }
    for (int64_t t = lo; t < hi; t++) {
        int64_t idx[YG_MAX_DIMS] = {0};
        const char *s = src + t * w->istrides[top];
        char *a = acc + t * w->astrides[top] * esize;
        for (;;) {
            fn(a, w->astrides[0], s, w->istrides[0], w->sizes[0]);
            int d = 1;
            for (; d < top; d++) {
                if (++idx[d] < w->sizes[d]) {
                    s += w->istrides[d];
                    a += w->astrides[d] * esize;
                    break;
                }
                idx[d] = 0;
                s -= (w->sizes[d] - 1) * w->istrides[d];
                a -= (w->sizes[d] - 1) * w->astrides[d] * esize;
            }
            if (d >= top)
                break;
        }
    }
}

/* Adds every element of self (in_numel > 0) into acc (out_numel slots)
 * along the walk.  From YG_REDUCE_PARALLEL_MIN elements the walk's
 * outermost dim is split over the OpenMP threads: where it is a kept dim
 * the threads write disjoint slots of acc; where it is reduced each thread
 * after the first sums into a private accumulator, added into acc in
 * thread order afterwards (so a result depends on the thread count only
 * through rounding, never from run to run).  Fails only when a private
 * accumulator cannot be allocated. */
static yg_status rwalk_run(const char *op,
                           const rwalk *w,
                           const yg_tensor *self,
                           char *acc,
                           size_t acc_esize,
                           int64_t out_numel,
                           int64_t in_numel,
                           bool floating,
                           accum_fn fn) {
    const char *src = yg__tensor_ptr(self);
    int top = w->ndim - 1;
    int64_t span = w->sizes[top];
    int nthreads = omp_get_max_threads();

    if (in_numel < YG_REDUCE_PARALLEL_MIN || span < 2 || nthreads < 2) {
        rwalk_range(w, src, acc, acc_esize, fn, 0, span);
        return YG_OK;
    }
    if (nthreads > span)
        nthreads = (int)span;
    bool shared = w->astrides[top] != 0;
    char *priv = NULL;
    if (!shared) {
        priv = calloc((size_t)(nthreads - 1) * (size_t)out_numel, acc_esize);
        if (priv == NULL)
            return yg__fail(YG_ERR_OUT_OF_MEMORY,
                            "%s: out of memory for %d x %" PRId64 " accumulators",
                            op,
                            nthreads - 1,
                            out_numel);
    }
#pragma omp parallel for schedule(static) num_threads(nthreads)
    for (int k = 0; k < nthreads; k++) {
        int64_t lo = span * k / nthreads, hi = span * (k + 1) / nthreads;
        char *a = shared || k == 0 ? acc : priv + (size_t)(k - 1) * (size_t)out_numel * acc_esize;
        rwalk_range(w, src, a, acc_esize, fn, lo, hi);
    }
    for (int k = 1; !shared && k < nthreads; k++) {
        const char *p = priv + (size_t)(k - 1) * (size_t)out_numel * acc_esize;
        for (int64_t i = 0; i < out_numel; i++) {
            if (floating)
                ((double *)acc)[i] += ((const double *)p)[i];
            else
                ((int64_t *)acc)[i] += ((const int64_t *)p)[i];
        }
    }
    free(priv);
    return YG_OK;
}

static yg_status reduce(const char *op,
                        const yg_tensor *self,
                        const int64_t *dim,
                        int64_t dim_len,
                        bool keepdim,
                        bool mean,
                        yg_tensor **out) {
    bool reduced[YG_MAX_DIMS];
    int64_t astride_of[YG_MAX_DIMS];
    int64_t out_numel, in_numel, count;
    yg_tensor *res = NULL;
    void *acc = NULL;
    yg_status st = YG_OK;

    *out = NULL;
    YG_RETURN_IF_ERROR(
        yg__reduce_sum_prepare(op, self, dim, dim_len, keepdim, mean, reduced, &count, &res));
    out_numel = yg_tensor_numel(res);
    if (out_numel == 0)
        goto done;
    in_numel = yg_tensor_numel(self);
    bool floating = yg__dtype_is_floating(self->dtype) || yg__dtype_is_half(self->dtype);
    yg_dtype out_dtype = res->dtype;
    size_t acc_esize = floating ? sizeof(double) : sizeof(int64_t);
    accum_fn fn = accum_for(self->dtype);
    /* The accumulator stride of each input dim: the accumulator is laid
     * out like the (contiguous) output, whose products fit. */
    int64_t stride = 1;
    for (int32_t d = self->ndim - 1; d >= 0; d--) {
        astride_of[d] = reduced[d] ? 0 : stride;
        if (!reduced[d])
            stride *= self->sizes[d];
    }
    acc = calloc((size_t)out_numel, acc_esize);
    if (acc == NULL) {
        st = yg__fail(
            YG_ERR_OUT_OF_MEMORY, "%s: out of memory for %" PRId64 " accumulators", op, out_numel);
        goto out;
    }
    if (in_numel > 0) {
        rwalk w;
        rwalk_init(&w, self, astride_of);
        st = rwalk_run(op, &w, self, acc, acc_esize, out_numel, in_numel, floating, fn);
        if (st != YG_OK)
            goto out;
    }
    char *dst = yg__tensor_ptr(res);
    if (!floating) {
        int64_t *a = acc;
        for (int64_t i = 0; i < out_numel; i++)
            ((int64_t *)dst)[i] = a[i];
    } else {
        double *a = acc;
        /* 0/0 gives NaN for the mean of nothing, as in PyTorch. */
        double scale = mean ? 1.0 / (double)count : 1.0;
        for (int64_t i = 0; i < out_numel; i++) {
            double v = mean && count == 0 ? a[i] / 0.0 : a[i] * scale;
            if (out_dtype == YG_FLOAT32)
                ((float *)dst)[i] = (float)v;
            else if (out_dtype == YG_FLOAT64)
                ((double *)dst)[i] = v;
            else /* float16, bfloat16: nearest even, once */
                yg__store_f64_as(dst + (size_t)i * 2, out_dtype, v);
        }
    }
done:
    *out = res;
    res = NULL;
out:
    free(acc);
    yg_release(res);
    return st;
}

yg_status yg__cpu_sum(const yg_tensor *self, yg_tensor **out) {
    return reduce("sum", self, NULL, 0, false, false, out);
}

yg_status yg__cpu_sum_dim(const yg_tensor *self,
                             const int64_t *dim,
                             int64_t dim_len,
                             bool keepdim,
                             yg_tensor **out) {
    return reduce("sum", self, dim, dim_len, keepdim, false, out);
}

yg_status yg__cpu_mean(const yg_tensor *self, yg_tensor **out) {
    return reduce("mean", self, NULL, 0, false, true, out);
}

yg_status yg__cpu_mean_dim(const yg_tensor *self,
                              const int64_t *dim,
                              int64_t dim_len,
                              bool keepdim,
                              yg_tensor **out) {
    return reduce("mean", self, dim, dim_len, keepdim, true, out);
}
