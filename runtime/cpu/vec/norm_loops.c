/*
 * norm_loops.c - the per-row loops of the fused norm kernels (see
 * norm_loops.h for what each computes and why sums are in double).
 *
 * Each function is written once as a macro over the element type T and
 * instantiated for float and double.  A loop with a nullable operand has a
 * branch per case outside the loop, so each inner loop is a straight
 * vectorisable body; `omp simd reduction` lets the compiler keep several
 * partial sums (reassociating the sum, which a plain loop forbids).
 */
#include "cpu/vec/kernels.h"

#include <stddef.h>

#define DEFINE_NORM_LOOPS(S, T)                                                                    \
    static double sum_##S(const T *x, int64_t n) {                                                 \
        double s = 0;                                                                              \
        _Pragma("omp simd reduction(+ : s)") for (int64_t j = 0; j < n; j++) s += (double)x[j];    \
        return s;                                                                                  \
    }                                                                                              \
                                                                                                   \
    static double sq_dev_##S(const T *x, int64_t n, double mean) {                                 \
        double s = 0;                                                                              \
        _Pragma("omp simd reduction(+ : s)") for (int64_t j = 0; j < n; j++) {                     \
            double d = (double)x[j] - mean;                                                        \
            s += d * d;                                                                            \
        }                                                                                          \
        return s;                                                                                  \
    }                                                                                              \
                                                                                                   \
    static void scale_shift_##S(T *y, const T *x, int64_t n, T mean, T scale, T shift) {           \
        _Pragma("omp simd") for (int64_t j = 0; j < n; j++) y[j] = (x[j] - mean) * scale + shift;  \
    }                                                                                              \
                                                                                                   \
    static void affine_row_##S(                                                                    \
        T *y, const T *x, int64_t n, T mean, T rstd, const T *w, const T *b) {                     \
        if (w != NULL && b != NULL) {                                                              \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++) y[j] =                             \
                (x[j] - mean) * rstd * w[j] + b[j];                                                \
        } else if (w != NULL) {                                                                    \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++) y[j] =                             \
                (x[j] - mean) * rstd * w[j];                                                       \
        } else if (b != NULL) {                                                                    \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++) y[j] =                             \
                (x[j] - mean) * rstd + b[j];                                                       \
        } else {                                                                                   \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++) y[j] = (x[j] - mean) * rstd;       \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    static void dot_##S(const T *g,                                                                \
                        const T *x,                                                                \
                        const T *w,                                                                \
                        int64_t n,                                                                 \
                        double mean,                                                               \
                        double *sum_g,                                                             \
                        double *sum_gx) {                                                          \
        double sg = 0, sgx = 0;                                                                    \
        if (w != NULL) {                                                                           \
            _Pragma("omp simd reduction(+ : sg, sgx)") for (int64_t j = 0; j < n; j++) {           \
                double gw = (double)g[j] * (double)w[j];                                           \
                sg += gw;                                                                          \
                sgx += gw * ((double)x[j] - mean);                                                 \
            }                                                                                      \
        } else {                                                                                   \
            _Pragma("omp simd reduction(+ : sg, sgx)") for (int64_t j = 0; j < n; j++) {           \
                sg += (double)g[j];                                                                \
                sgx += (double)g[j] * ((double)x[j] - mean);                                       \
            }                                                                                      \
        }                                                                                          \
        *sum_g += sg;                                                                              \
        *sum_gx += sgx;                                                                            \
    }                                                                                              \
                                                                                                   \
    static void accumulate_row_##S(                                                                \
        T *gw, T *gb, const T *g, const T *x, int64_t n, T mean, T rstd) {                         \
        if (gw != NULL && gb != NULL) {                                                            \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++) {                                  \
                gw[j] += g[j] * ((x[j] - mean) * rstd);                                            \
                gb[j] += g[j];                                                                     \
            }                                                                                      \
        } else if (gw != NULL) {                                                                   \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++) gw[j] +=                           \
                g[j] * ((x[j] - mean) * rstd);                                                     \
        } else if (gb != NULL) {                                                                   \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++) gb[j] += g[j];                     \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    static void input_grad_##S(                                                                    \
        T *gi, const T *g, const T *x, const T *w, int64_t n, T mean, T a, T b, T c) {             \
        if (w != NULL) {                                                                           \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++) gi[j] =                            \
                a * g[j] * w[j] + b * (x[j] - mean) + c;                                           \
        } else {                                                                                   \
            _Pragma("omp simd") for (int64_t j = 0; j < n; j++) gi[j] =                            \
                a * g[j] + b * (x[j] - mean) + c;                                                  \
        }                                                                                          \
    }

DEFINE_NORM_LOOPS(f32, float)
DEFINE_NORM_LOOPS(f64, double)

#define NORM_LOOP_ENTRIES(S)                                                                       \
    .sum_##S = sum_##S, .sq_dev_##S = sq_dev_##S, .scale_shift_##S = scale_shift_##S,              \
    .affine_row_##S = affine_row_##S, .dot_##S = dot_##S,                                          \
    .accumulate_row_##S = accumulate_row_##S, .input_grad_##S = input_grad_##S

const yg_norm_loops YG_ISA_NAME(yg__norm_loops) = {NORM_LOOP_ENTRIES(f32), NORM_LOOP_ENTRIES(f64)};
