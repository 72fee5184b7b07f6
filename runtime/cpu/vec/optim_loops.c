/*
 * optim_loops.c - one optimizer update of a contiguous parameter in a
 * single pass (kernels.h: sgd, adam), compiled once per CPU capability.
 *
 * Written with the public in-place ops, an SGD step with momentum makes
 * three passes over the parameter's size (buf *= m; buf += (1 - d) g;
 * p -= lr buf) and Adam seven (lerp, mul, addcmul, sqrt, div, add,
 * addcdiv) plus a temporary; here each element is read and written once.
 * The arithmetic is the same as the ops' (each in the parameter's dtype,
 * with the ops' scalar coefficients rounded to it), in the same order, so
 * the fused and unfused updates agree to the last bit or two (FMA
 * contraction may differ).  Large parameters are split over OpenMP
 * threads; the elements are independent.
 *
 * Gradient clipping's two passes live here too: the sum of squares (in
 * double, eight partial sums per thread so the adds pipeline and
 * vectorise, the threads' sums added in thread order: the result depends
 * on the thread count, not on the run) and the scaling.  The updates can
 * read the gradient scaled instead ((T)(g * grad_scale), the rounding of
 * that scaling pass), so a clipping coefficient or a loss scaler's
 * 1 / scale costs no pass of its own.
 */
#include "cpu/vec/kernels.h"
#include "cpu/vec/vecmath.h" /* type-generic sqrt: float math for float */

#include <omp.h>

#define DEFINE_OPTIM_LOOPS(SUFFIX, T)                                                                 \
    static void sgd_range_##SUFFIX(T *restrict p,                                                     \
                                   const T *restrict g,                                               \
                                   T *restrict buf,                                                   \
                                   int64_t lo,                                                        \
                                   int64_t hi,                                                        \
                                   const yg_sgd_step *a) {                                            \
        const T wd = (T)a->weight_decay, m = (T)a->momentum, keep = (T)(1 - a->dampening);            \
        const T neg_lr = (T)-a->lr;                                                                   \
        /* the options as locals: read through a inside the loop, they                              \
         * could alias p and the loop would stay scalar */ \
        const bool decay = a->weight_decay != 0, first = a->first, nesterov = a->nesterov;            \
        const bool scaled = a->grad_scale != 1;                                                       \
        const double gs = a->grad_scale;                                                              \
        for (int64_t i = lo; i < hi; i++) {                                                           \
            T gi = scaled ? (T)(g[i] * gs) : g[i];                                                    \
            T d = decay ? gi + wd * p[i] : gi;                                                        \
            T step = d;                                                                               \
            if (buf != NULL) {                                                                        \
                T b = first ? d : buf[i] * m + keep * d;                                              \
                buf[i] = b;                                                                           \
                step = nesterov ? d + m * b : b;                                                      \
            }                                                                                         \
            p[i] = p[i] + neg_lr * step;                                                              \
        }                                                                                             \
    }                                                                                                 \
                                                                                                      \
    static void adam_range_##SUFFIX(T *restrict p,                                                    \
                                    const T *restrict g,                                              \
                                    T *restrict mv,                                                   \
                                    T *restrict vv,                                                   \
                                    int64_t lo,                                                       \
                                    int64_t hi,                                                       \
                                    const yg_adam_step *a) {                                          \
        const T wd = (T)a->weight_decay, decay = (T)(1 - a->lr * a->weight_decay);                    \
        const T w1 = (T)(1 - a->beta1), b2 = (T)a->beta2, w2 = (T)(1 - a->beta2);                     \
        const T root_bc2 = (T)sqrt(a->bc2), eps = (T)a->eps, step = (T)(-a->lr / a->bc1);             \
        const bool l2 = !a->decoupled && a->weight_decay != 0;                                        \
        const bool decoupled = a->decoupled && a->weight_decay != 0;                                  \
        const bool scaled = a->grad_scale != 1;                                                       \
        const double gs = a->grad_scale;                                                              \
        for (int64_t i = lo; i < hi; i++) {                                                           \
            T gi = scaled ? (T)(g[i] * gs) : g[i];                                                    \
            T d = l2 ? gi + wd * p[i] : gi;                                                           \
            T x = decoupled ? p[i] * decay : p[i];                                                    \
            T m = mv[i] + w1 * (d - mv[i]);                                                           \
            T v = vv[i] * b2 + w2 * d * d;                                                            \
            mv[i] = m;                                                                                \
            vv[i] = v;                                                                                \
            p[i] = x + step * m / (sqrt(v) / root_bc2 + eps);                                         \
        }                                                                                             \
    }                                                                                                 \
                                                                                                      \
    void YG_ISA_NAME(yg__sgd_step_##SUFFIX)(                                                          \
        void *p, const void *g, void *buf, int64_t n, const yg_sgd_step *a) {                         \
        if (n < YG_VEC_PARALLEL_MIN) {                                                                \
            sgd_range_##SUFFIX(p, g, buf, 0, n, a);                                                   \
            return;                                                                                   \
        }                                                                                             \
        _Pragma("omp parallel") {                                                                     \
            int64_t k = omp_get_thread_num(), t = omp_get_num_threads();                              \
            sgd_range_##SUFFIX(p, g, buf, n *k / t, n * (k + 1) / t, a);                              \
        }                                                                                             \
    }                                                                                                 \
                                                                                                      \
    void YG_ISA_NAME(yg__adam_step_##SUFFIX)(                                                         \
        void *p, const void *g, void *m, void *v, int64_t n, const yg_adam_step *a) {                 \
        if (n < YG_VEC_PARALLEL_MIN) {                                                                \
            adam_range_##SUFFIX(p, g, m, v, 0, n, a);                                                 \
            return;                                                                                   \
        }                                                                                             \
        _Pragma("omp parallel") {                                                                     \
            int64_t k = omp_get_thread_num(), t = omp_get_num_threads();                              \
            adam_range_##SUFFIX(p, g, m, v, n *k / t, n * (k + 1) / t, a);                            \
        }                                                                                             \
    }

#define DEFINE_CLIP_LOOPS(SUFFIX, T)                                                                  \
    static double sum_squares_range_##SUFFIX(const T *restrict g, int64_t lo, int64_t hi) {           \
        double acc[8] = {0};                                                                          \
        int64_t i = lo;                                                                               \
        for (; i + 8 <= hi; i += 8)                                                                   \
            for (int k = 0; k < 8; k++)                                                               \
                acc[k] += (double)g[i + k] * (double)g[i + k];                                        \
        for (; i < hi; i++)                                                                           \
            acc[0] += (double)g[i] * (double)g[i];                                                    \
        return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));     \
    }                                                                                                 \
                                                                                                      \
    double YG_ISA_NAME(yg__sum_squares_##SUFFIX)(const void *g, int64_t n) {                          \
        if (n < YG_VEC_PARALLEL_MIN)                                                                  \
            return sum_squares_range_##SUFFIX(g, 0, n);                                               \
        double part[YG_VEC_MAX_THREADS] = {0};                                                        \
        int used = 0; /* threads that summed; 0: more than the slots */                              \
        _Pragma("omp parallel") {                                                                     \
            int64_t k = omp_get_thread_num(), t = omp_get_num_threads();                              \
            if (t <= YG_VEC_MAX_THREADS) {                                                            \
                part[k] = sum_squares_range_##SUFFIX(g, n * k / t, n * (k + 1) / t);                  \
                if (k == 0)                                                                           \
                    used = (int)t;                                                                    \
            }                                                                                         \
        }                                                                                             \
        if (used == 0)                                                                                \
            return sum_squares_range_##SUFFIX(g, 0, n);                                               \
        double s = 0;                                                                                 \
        for (int k = 0; k < used; k++)                                                                \
            s += part[k];                                                                             \
        return s;                                                                                     \
    }                                                                                                 \
                                                                                                      \
    void YG_ISA_NAME(yg__scale_##SUFFIX)(void *g, int64_t n, double coef) {                           \
        T *restrict v = g;                                                                            \
        if (n < YG_VEC_PARALLEL_MIN) {                                                                \
            for (int64_t i = 0; i < n; i++)                                                           \
                v[i] = (T)(v[i] * coef);                                                              \
            return;                                                                                   \
        }                                                                                             \
        _Pragma("omp parallel for schedule(static)") for (int64_t i = 0; i < n; i++) v[i] =           \
            (T)(v[i] * coef);                                                                         \
    }

DEFINE_CLIP_LOOPS(f32, float)
DEFINE_CLIP_LOOPS(f64, double)
DEFINE_OPTIM_LOOPS(f32, float)
DEFINE_OPTIM_LOOPS(f64, double)
