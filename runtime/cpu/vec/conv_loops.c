/*
 * conv_loops.c - the row kernel of native depthwise convolutions
 * (conv/native.c) whose last dim has stride 1, compiled once per CPU
 * capability (kernels.h): for each kernel tap the valid stretch of an
 * output row is one contiguous axpy (forward, data gradient) or dot
 * product (weight gradient) against the input row, which the compiler
 * vectorises at the level's width.  One call is one (image, y channel)
 * pair; the caller spreads pairs over threads.
 */
#include "cpu/vec/kernels.h"

#include <string.h>

#define DEFINE_DEPTHWISE_ROWS(SUFFIX, T)                                                              \
    void YG_ISA_NAME(yg__depthwise_rows_##SUFFIX)(const yg_depthwise_geom *g,                         \
                                                  void *x_,                                           \
                                                  const void *w_,                                     \
                                                  void *y_,                                           \
                                                  void *gw_,                                          \
                                                  double bias,                                        \
                                                  int mode) {                                         \
        T *xc = x_, *yc = y_, *gc = gw_;                                                              \
        const T *wc = w_;                                                                             \
        const int64_t y2 = g->y[2], x2 = g->x[2];                                                     \
        for (int64_t o0 = 0; o0 < g->y[0]; o0++)                                                      \
            for (int64_t o1 = 0; o1 < g->y[1]; o1++) {                                                \
                T *restrict yrow = yc + (o0 * g->y[1] + o1) * y2;                                     \
                if (mode == 0)                                                                        \
                    for (int64_t o2 = 0; o2 < y2; o2++)                                               \
                        yrow[o2] = (T)bias;                                                           \
                for (int64_t k0 = 0; k0 < g->k[0]; k0++) {                                            \
                    int64_t i0 = o0 * g->stride[0] + k0 * g->dil[0] - g->pad[0];                      \
                    if (i0 < 0 || i0 >= g->x[0])                                                      \
                        continue;                                                                     \
                    for (int64_t k1 = 0; k1 < g->k[1]; k1++) {                                        \
                        int64_t i1 = o1 * g->stride[1] + k1 * g->dil[1] - g->pad[1];                  \
                        if (i1 < 0 || i1 >= g->x[1])                                                  \
                            continue;                                                                 \
                        T *restrict xrow = xc + (i0 * g->x[1] + i1) * x2;                             \
                        for (int64_t k2 = 0; k2 < g->k[2]; k2++) {                                    \
                            int64_t off = k2 * g->dil[2] - g->pad[2];                                 \
                            int64_t lo = off < 0 ? -off : 0;                                          \
                            int64_t hi = x2 - off < y2 ? x2 - off : y2;                               \
                            int64_t kk = (k0 * g->k[1] + k1) * g->k[2] + k2;                          \
                            if (hi <= lo)                                                             \
                                continue;                                                             \
                            if (mode == 0) {                                                          \
                                const T wk = wc[kk];                                                  \
                                for (int64_t o2 = lo; o2 < hi; o2++)                                  \
                                    yrow[o2] += wk * xrow[o2 + off];                                  \
                            } else if (mode == 1) {                                                   \
                                const T wk = wc[kk];                                                  \
                                for (int64_t o2 = lo; o2 < hi; o2++)                                  \
                                    xrow[o2 + off] += wk * yrow[o2];                                  \
                            } else {                                                                  \
                                T acc = 0;                                                            \
                                _Pragma("omp simd reduction(+ : acc)")                               \
                                for (int64_t o2 = lo; o2 < hi; o2++)                                  \
                                    acc += yrow[o2] * xrow[o2 + off];                                 \
                                gc[kk] += acc;                                                        \
                            }                                                                         \
                        }                                                                             \
                    }                                                                                 \
                }                                                                                     \
            }                                                                                         \
    }

DEFINE_DEPTHWISE_ROWS(f32, float)
DEFINE_DEPTHWISE_ROWS(f64, double)
