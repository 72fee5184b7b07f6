/*
 * softmax.c - softmax and log_softmax, forward and backward, over the
 * middle dim of a contiguous [outer, n, inner] block (kernels.h), compiled
 * once per CPU capability.
 *
 * Over the last dim (inner 1) each row is read three times while it is in
 * L1/L2 (a 1024-float row is 4 KiB): once for its max, once to write
 * exp(x - max) and sum it, once to scale (softmax) or once to write
 * x - max - log(sum) (log_softmax), so memory sees one read and one write
 * per element.  Every pass is a plain loop that GCC vectorises: the max
 * and the sums through `omp simd` reductions (which allow the reordering
 * a vector reduction needs, for these loops only), exp through
 * vecmath.h's SLEEF functions.  Sums of exponentials and of gradient
 * products accumulate in double, for float32 too (a float32 sum of 1e6
 * terms would lose ~3 digits), but for softmax's forward over rows up to
 * SHORT_ROW, where that cost 20% and lane-wise float sums are exact enough.
 * Over another dim (inner > 1) the same passes run across a slab of up to
 * SLAB contiguous columns at once, so those loops vectorise along inner.
 *
 * Rows (and slabs) are split over OpenMP threads when the block has at
 * least YG_VEC_PARALLEL_MIN elements.  A row whose max is infinite uses 0
 * instead, so an all -inf row gives 0 / 0 = NaN (softmax) as before and
 * +inf entries give NaN, as in PyTorch; NaN propagates to its row.
 */
#include "cpu/vec/kernels.h"
#include "cpu/vec/vecmath.h"

#include <math.h>

/* Columns handled together when reducing a dim that is not the last. */
#define SLAB 256

/* Rows up to this long sum softmax's exponentials in the data's type: the
 * vector loop keeps one partial sum per lane (16 for float32 under
 * AVX-512, 4 at the baseline), so each adds at most 1024 to 4096 terms,
 * all positive (no cancellation): a few 1e-6 relative at worst; the
 * widening to double cost 20% of softmax's time (docs/benchmarks.md,
 * section "Figures behind other choices").  Longer rows sum in double. */
#define SHORT_ROW 16384

#define DEFINE_SOFTMAX(SUFFIX, T)                                                                  \
    static void row_##SUFFIX(T *restrict y, const T *restrict x, int64_t n, bool is_log) {         \
        T m = -INFINITY;                                                                           \
        _Pragma("omp simd reduction(max : m)") for (int64_t k = 0; k < n; k++) m =                 \
            x[k] > m ? x[k] : m;                                                                   \
        if (isinf(m))                                                                              \
            m = 0;                                                                                 \
        double s = 0;                                                                              \
        if (is_log) {                                                                              \
            _Pragma("omp simd reduction(+ : s)") for (int64_t k = 0; k < n; k++) s +=              \
                (double)exp(x[k] - m);                                                             \
            const T lse = (T)((double)m + log((double)s));                                         \
            for (int64_t k = 0; k < n; k++)                                                        \
                y[k] = x[k] - lse;                                                                 \
            return;                                                                                \
        }                                                                                          \
        if (n <= SHORT_ROW) {                                                                      \
            T st = 0;                                                                              \
            _Pragma("omp simd reduction(+ : st)") for (int64_t k = 0; k < n; k++) {                \
                const T e = exp(x[k] - m);                                                         \
                y[k] = e;                                                                          \
                st += e;                                                                           \
            }                                                                                      \
            s = st;                                                                                \
        } else {                                                                                   \
            _Pragma("omp simd reduction(+ : s)") for (int64_t k = 0; k < n; k++) {                 \
                const T e = exp(x[k] - m);                                                         \
                y[k] = e;                                                                          \
                s += (double)e;                                                                    \
            }                                                                                      \
        }                                                                                          \
        const T inv = (T)(1.0 / s);                                                                \
        for (int64_t k = 0; k < n; k++)                                                            \
            y[k] *= inv;                                                                           \
    }                                                                                              \
                                                                                                   \
    /* Columns [0, w) of one [n, inner] block (x and y point at its column 0). */                  \
    static void slab_##SUFFIX(                                                                     \
        T *restrict y, const T *restrict x, int64_t n, int64_t inner, int64_t w, bool is_log) {    \
        T m[SLAB];                                                                                 \
        double s[SLAB];                                                                            \
        for (int64_t i = 0; i < w; i++) {                                                          \
            m[i] = -INFINITY;                                                                      \
            s[i] = 0;                                                                              \
        }                                                                                          \
        for (int64_t k = 0; k < n; k++)                                                            \
            for (int64_t i = 0; i < w; i++)                                                        \
                m[i] = x[k * inner + i] > m[i] ? x[k * inner + i] : m[i];                          \
        for (int64_t i = 0; i < w; i++)                                                            \
            m[i] = isinf(m[i]) ? 0 : m[i];                                                         \
        for (int64_t k = 0; k < n; k++)                                                            \
            for (int64_t i = 0; i < w; i++) {                                                      \
                const T e = exp(x[k * inner + i] - m[i]);                                          \
                if (!is_log)                                                                       \
                    y[k * inner + i] = e;                                                          \
                s[i] += (double)e;                                                                 \
            }                                                                                      \
        for (int64_t i = 0; i < w; i++)                                                            \
            s[i] = is_log ? (double)m[i] + log(s[i]) : 1.0 / s[i];                                 \
        for (int64_t k = 0; k < n; k++)                                                            \
            for (int64_t i = 0; i < w; i++)                                                        \
                y[k * inner + i] =                                                                 \
                    is_log ? x[k * inner + i] - (T)s[i] : y[k * inner + i] * (T)s[i];              \
    }                                                                                              \
                                                                                                   \
    static void block_##SUFFIX(                                                                    \
        T *y, const T *x, int64_t n, int64_t inner, int64_t item, int64_t slabs, bool is_log) {    \
        if (inner == 1) {                                                                          \
            row_##SUFFIX(y + item * n, x + item * n, n, is_log);                                   \
            return;                                                                                \
        }                                                                                          \
        int64_t o = item / slabs, i0 = item % slabs * SLAB;                                        \
        int64_t w = inner - i0 < SLAB ? inner - i0 : SLAB;                                         \
        slab_##SUFFIX(y + o * n * inner + i0, x + o * n * inner + i0, n, inner, w, is_log);        \
    }                                                                                              \
                                                                                                   \
    void YG_ISA_NAME(yg__softmax_##SUFFIX)(                                                        \
        void *yv, const void *xv, int64_t outer, int64_t n, int64_t inner, bool is_log) {          \
        T *y = yv;                                                                                 \
        const T *x = xv;                                                                           \
        int64_t slabs = inner == 1 ? 1 : (inner + SLAB - 1) / SLAB;                                \
        int64_t items = outer * slabs;                                                             \
        if (outer * n * inner < YG_VEC_PARALLEL_MIN || items < 2) {                                \
            for (int64_t it = 0; it < items; it++)                                                 \
                block_##SUFFIX(y, x, n, inner, it, slabs, is_log);                                 \
            return;                                                                                \
        }                                                                                          \
        _Pragma("omp parallel for schedule(static)") for (int64_t it = 0; it < items; it++)        \
            block_##SUFFIX(y, x, n, inner, it, slabs, is_log);                                     \
    }

DEFINE_SOFTMAX(f32, float)
DEFINE_SOFTMAX(f64, double)

/* The backward: softmax  gi = y (go - sum(go y)),
 *               log      gi = go - exp(y) sum(go). */
#define DEFINE_SOFTMAX_BACKWARD(SUFFIX, T)                                                         \
    static void brow_##SUFFIX(                                                                     \
        T *restrict gi, const T *restrict go, const T *restrict y, int64_t n, bool is_log) {       \
        double s = 0;                                                                              \
        if (is_log) {                                                                              \
            _Pragma("omp simd reduction(+ : s)") for (int64_t k = 0; k < n; k++) s +=              \
                (double)go[k];                                                                     \
            const T ts = (T)s;                                                                     \
            for (int64_t k = 0; k < n; k++)                                                        \
                gi[k] = go[k] - exp(y[k]) * ts;                                                    \
            return;                                                                                \
        }                                                                                          \
        _Pragma("omp simd reduction(+ : s)") for (int64_t k = 0; k < n; k++) s +=                  \
            (double)go[k] * (double)y[k];                                                          \
        const T ts = (T)s;                                                                         \
        for (int64_t k = 0; k < n; k++)                                                            \
            gi[k] = y[k] * (go[k] - ts);                                                           \
    }                                                                                              \
                                                                                                   \
    static void bslab_##SUFFIX(T *restrict gi,                                                     \
                               const T *restrict go,                                               \
                               const T *restrict y,                                                \
                               int64_t n,                                                          \
                               int64_t inner,                                                      \
                               int64_t w,                                                          \
                               bool is_log) {                                                      \
        double s[SLAB];                                                                            \
        for (int64_t i = 0; i < w; i++)                                                            \
            s[i] = 0;                                                                              \
        for (int64_t k = 0; k < n; k++)                                                            \
            for (int64_t i = 0; i < w; i++)                                                        \
                s[i] += is_log ? (double)go[k * inner + i]                                         \
                               : (double)go[k * inner + i] * (double)y[k * inner + i];             \
        for (int64_t k = 0; k < n; k++)                                                            \
            for (int64_t i = 0; i < w; i++) {                                                      \
                const int64_t j = k * inner + i;                                                   \
                gi[j] = is_log ? go[j] - exp(y[j]) * (T)s[i] : y[j] * (go[j] - (T)s[i]);           \
            }                                                                                      \
    }                                                                                              \
                                                                                                   \
    static void bblock_##SUFFIX(T *gi,                                                             \
                                const T *go,                                                       \
                                const T *y,                                                        \
                                int64_t n,                                                         \
                                int64_t inner,                                                     \
                                int64_t item,                                                      \
                                int64_t slabs,                                                     \
                                bool is_log) {                                                     \
        if (inner == 1) {                                                                          \
            brow_##SUFFIX(gi + item * n, go + item * n, y + item * n, n, is_log);                  \
            return;                                                                                \
        }                                                                                          \
        int64_t o = item / slabs, i0 = item % slabs * SLAB;                                        \
        int64_t w = inner - i0 < SLAB ? inner - i0 : SLAB, off = o * n * inner + i0;               \
        bslab_##SUFFIX(gi + off, go + off, y + off, n, inner, w, is_log);                          \
    }                                                                                              \
                                                                                                   \
    void YG_ISA_NAME(yg__softmax_backward_##SUFFIX)(void *giv,                                     \
                                                    const void *gov,                               \
                                                    const void *yv,                                \
                                                    int64_t outer,                                 \
                                                    int64_t n,                                     \
                                                    int64_t inner,                                 \
                                                    bool is_log) {                                 \
        T *gi = giv;                                                                               \
        const T *go = gov, *y = yv;                                                                \
        int64_t slabs = inner == 1 ? 1 : (inner + SLAB - 1) / SLAB;                                \
        int64_t items = outer * slabs;                                                             \
        if (outer * n * inner < YG_VEC_PARALLEL_MIN || items < 2) {                                \
            for (int64_t it = 0; it < items; it++)                                                 \
                bblock_##SUFFIX(gi, go, y, n, inner, it, slabs, is_log);                           \
            return;                                                                                \
        }                                                                                          \
        _Pragma("omp parallel for schedule(static)") for (int64_t it = 0; it < items; it++)        \
            bblock_##SUFFIX(gi, go, y, n, inner, it, slabs, is_log);                               \
    }

DEFINE_SOFTMAX_BACKWARD(f32, float)
DEFINE_SOFTMAX_BACKWARD(f64, double)
