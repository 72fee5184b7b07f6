/*
 * cuda/upsample.h - the bilinear upsampling kernels of cuda/upsample.cu
 * as host C code calls them (cuda/upsample.c): the launchers, over the
 * interpolation taps of meta/upsample.h.  Read by C and by nvcc.  Not
 * public API.
 */
#ifndef YAGRAD_CUDA_UPSAMPLE_H
#define YAGRAD_CUDA_UPSAMPLE_H

#include "meta/upsample.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Each launcher queues its kernel on the calling thread's current stream
 * (YG_CUDA_STREAM) and returns the launch's cudaError_t (0: launched, or
 * nothing to do).  Every pointer is device memory; the data is float64,
 * contiguous [planes, ih, iw] (the input side) or [planes, oh, ow] (the
 * output side); taps holds the oh row taps, then the ow column taps. */

/* dst [planes, oh, ow] = src [planes, ih, iw] interpolated at the taps. */
int yg__cuda_upsample_bilinear_launch(const double *src,
                                      double *dst,
                                      const yg_lerp_tap *taps,
                                      int64_t planes,
                                      int64_t ih,
                                      int64_t iw,
                                      int64_t oh,
                                      int64_t ow);

/* Its gradient: dst [planes, ih, iw] (every element written) from grad
 * [planes, oh, ow].  ranges: [lo, hi) pairs, ih for the input rows then
 * iw for the columns, covering every output row (column) whose tap has
 * that input as i0 or i1. */
int yg__cuda_upsample_bilinear_backward_launch(const double *grad,
                                               double *dst,
                                               const yg_lerp_tap *taps,
                                               const int64_t *ranges,
                                               int64_t planes,
                                               int64_t ih,
                                               int64_t iw,
                                               int64_t oh,
                                               int64_t ow);

#ifdef __cplusplus
}
#endif

#endif /* YAGRAD_CUDA_UPSAMPLE_H */
