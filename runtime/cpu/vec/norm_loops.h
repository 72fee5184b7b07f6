/*
 * norm_loops.h - the hot loops of layer_norm's and batch_norm's fused
 * kernels (norm.c), over one contiguous row or segment of float32 or
 * float64 values.
 *
 * They are plain C loops the compiler vectorises (sums carry `omp simd`
 * reductions; no intrinsics), compiled once per CPU capability (vec.h):
 * norm.c calls them through yg__vec()->norm, the chosen level's table.
 * None allocates, fails or touches OpenMP threads: norm.c decides who
 * runs which rows.
 *
 * Sums are returned in double.  For float32 data they are accumulated in
 * double too: the backward's g - mean(g) - xhat mean(g xhat) cancels, and
 * double sums keep the float32 results within a few ulps of the float64
 * ones (the OpInfo float32 tolerance is 2e-5) for rows of any length.  The
 * elementwise passes compute in the data's type, with the per-row
 * coefficients rounded to it once.
 */
#ifndef YAGRAD_CPU_NORM_LOOPS_H
#define YAGRAD_CPU_NORM_LOOPS_H

#include <stdint.h>

typedef struct yg_norm_loops {
    /* sum of x[0..n) */
    double (*sum_f32)(const float *x, int64_t n);
    double (*sum_f64)(const double *x, int64_t n);

    /* sum of (x - mean)^2 over x[0..n) (the second pass of a two-pass
     * variance, over data still in cache) */
    double (*sq_dev_f32)(const float *x, int64_t n, double mean);
    double (*sq_dev_f64)(const double *x, int64_t n, double mean);

    /* y = (x - mean) * scale + shift over n elements (batch_norm: scale and
     * shift are one channel's rstd * weight and bias) */
    void (*scale_shift_f32)(float *y,
                            const float *x,
                            int64_t n,
                            float mean,
                            float scale,
                            float shift);
    void (*scale_shift_f64)(double *y,
                            const double *x,
                            int64_t n,
                            double mean,
                            double scale,
                            double shift);

    /* y = (x - mean) * rstd * w[j] + b[j] over one row (layer_norm); w and b
     * are nullable (1 and 0) */
    void (*affine_row_f32)(float *y,
                           const float *x,
                           int64_t n,
                           float mean,
                           float rstd,
                           const float *w,
                           const float *b);
    void (*affine_row_f64)(double *y,
                           const double *x,
                           int64_t n,
                           double mean,
                           double rstd,
                           const double *w,
                           const double *b);

    /* *sum_g += sum of g w, *sum_gx += sum of g w (x - mean) over n elements
     * (w nullable: 1) */
    void (*dot_f32)(const float *g,
                    const float *x,
                    const float *w,
                    int64_t n,
                    double mean,
                    double *sum_g,
                    double *sum_gx);
    void (*dot_f64)(const double *g,
                    const double *x,
                    const double *w,
                    int64_t n,
                    double mean,
                    double *sum_g,
                    double *sum_gx);

    /* gw[j] += g[j] (x[j] - mean) rstd and gb[j] += g[j] over one row
     * (layer_norm's weight and bias gradients); gw and gb are nullable */
    void (*accumulate_row_f32)(float *gw,
                               float *gb,
                               const float *g,
                               const float *x,
                               int64_t n,
                               float mean,
                               float rstd);
    void (*accumulate_row_f64)(double *gw,
                               double *gb,
                               const double *g,
                               const double *x,
                               int64_t n,
                               double mean,
                               double rstd);

    /* gi = a g w[j] + b (x - mean) + c over n elements (w nullable: 1): the
     * input gradient of both norms, with a = rstd, b = -rstd^3 sum_gx / M and
     * c = -rstd sum_g / M when training (b = c = 0 when batch_norm evaluates) */
    void (*input_grad_f32)(float *gi,
                           const float *g,
                           const float *x,
                           const float *w,
                           int64_t n,
                           float mean,
                           float a,
                           float b,
                           float c);
    void (*input_grad_f64)(double *gi,
                           const double *g,
                           const double *x,
                           const double *w,
                           int64_t n,
                           double mean,
                           double a,
                           double b,
                           double c);
} yg_norm_loops;

#endif /* YAGRAD_CPU_NORM_LOOPS_H */
