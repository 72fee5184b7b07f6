/*
 * cuda/pool.h - the pooling and nearest-upsampling kernels of cuda/pool.cu
 * as host C code calls them (cuda/pool.c): one call's window geometry and
 * the launchers.  Read by C and by nvcc.  Not public API.
 */
#ifndef YAGRAD_CUDA_POOL_H
#define YAGRAD_CUDA_POOL_H

#include <stdint.h>

/* meta/pool.h's geometry (yg_pool_geom, less its nsp): planes (N C) of
 * in[3] (depth, height, width; depth 1 for the 2-d ops) pooled to out[3]
 * by windows of k[3] moving by s[3] with padding p[3] and dilation d[3]
 * (1 for average pooling). */
typedef struct yg__cuda_pool_geom {
    int64_t planes;
    int64_t in[3], out[3];
    int64_t k[3], s[3], p[3], d[3];
} yg__cuda_pool_geom;

#ifdef __cplusplus
extern "C" {
#endif

/* Each launcher runs on the calling thread's current stream
 * (YG_CUDA_STREAM) and returns the launch's cudaError_t (0: launched).
 * f64: the data is float64, else float32; every buffer is contiguous
 * [planes, *in] or [planes, *out]. */

/* values and int64 indices of each window's maximum (adaptive: of each
 * adaptive cell), the first one on ties, NaN counting as the maximum. */
int yg__cuda_max_pool_launch(int f64,
                             const void *x,
                             void *values,
                             int64_t *indices,
                             yg__cuda_pool_geom g,
                             int adaptive);

/* Average pooling (backward 0: src [planes, *in] -> dst [planes, *out])
 * or its gradient (backward 1: src [planes, *out] -> dst [planes, *in]). */
int yg__cuda_avg_pool_launch(int f64,
                             const void *src,
                             void *dst,
                             yg__cuda_pool_geom g,
                             int backward,
                             int count_include_pad,
                             int64_t divisor_override);

/* Adaptive average pooling or its gradient, as yg__cuda_avg_pool_launch. */
int yg__cuda_adaptive_avg_pool_launch(int f64,
                                      const void *src,
                                      void *dst,
                                      yg__cuda_pool_geom g,
                                      int backward);

/* upsample_nearest2d: dst [planes, out[1], out[2]] = src [planes, in[1],
 * in[2]] at (oy in[1] / out[1], ox in[2] / out[2]) (cpu/pool.c's floor
 * formula); both float64, in[1], in[2] > 0.  No launch when dst is
 * empty. */
int yg__cuda_upsample_nearest_launch(const double *src, double *dst, yg__cuda_pool_geom g);

/* Its gradient: dst [planes, in[1], in[2]] (float64, every element
 * written) from grad [planes, out[1], out[2]]: input row y gathers the
 * output rows [rows[y], rows[y + 1]), column x the output columns
 * [cols[x], cols[x + 1]), rows outer, each in increasing order (the
 * order of cpu/pool.c's scatter).  rows (in[1] + 1 entries) and cols
 * (in[2] + 1) are device memory.  No launch when dst is empty. */
int yg__cuda_upsample_nearest_backward_launch(const double *grad,
                                              double *dst,
                                              yg__cuda_pool_geom g,
                                              const int64_t *rows,
                                              const int64_t *cols);

#ifdef __cplusplus
}
#endif

#endif /* YAGRAD_CUDA_POOL_H */
