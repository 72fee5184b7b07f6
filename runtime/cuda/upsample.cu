/*
 * upsample.cu - bilinear upsampling on the GPU for cuda/upsample.c's
 * kernels (upsample_bilinear2d and its gradient), with the arithmetic of
 * the CPU's (cpu/upsample.c): the taps (coordinates and weights) are the
 * host's own (meta/upsample.h), copied as they are, and every product and
 * sum is the CPU's, in its order, rounded as the CPU rounds it
 * (__dmul_rn and __dadd_rn: nvcc would otherwise contract them into
 * FMAs, which the CPU file's x86-64 baseline build has none of), so both
 * devices agree to the bit.
 *
 * The forward kernel gives each output element a thread.  The gradient
 * is deterministic without atomics: each input element's thread walks
 * the outputs whose taps touch its row and column (ranges made on the
 * host) in increasing output order and, for each, adds the terms the
 * CPU's scatter adds into that element, in the CPU's statement order
 * (row tap 0 then 1, each column tap 0 then 1); at the last row or
 * column, where i0 == i1, both weights apply, as on the CPU.
 */
#include "cuda/grid.cuh"
#include "cuda/launch.h"
#include "cuda/upsample.h"

#include <cuda_runtime.h>

namespace {

const int kThreads = 256;

unsigned grid_for(long long n) {
    long long blocks = (n + kThreads - 1) / kThreads;
    return yg_cuda_grid(blocks);
}

__global__ void __launch_bounds__(kThreads) bilinear(const double *x,
                                                     double *y,
                                                     const yg_lerp_tap *taps,
                                                     long long planes,
                                                     long long ih,
                                                     long long iw,
                                                     long long oh,
                                                     long long ow) {
    const yg_lerp_tap *cols = taps + oh;
    for (long long i = blockIdx.x * (long long)kThreads + threadIdx.x; i < planes * oh * ow;
         i += (long long)gridDim.x * kThreads) {
        const long long p = i / (oh * ow), oy = i / ow % oh, ox = i % ow;
        const yg_lerp_tap r = taps[oy], c = cols[ox];
        const double *in = x + p * ih * iw;
        const double *r0 = in + r.i0 * iw, *r1 = in + r.i1 * iw;
        /* r.w0 (c.w0 r0[c.i0] + c.w1 r0[c.i1]) + r.w1 (c.w0 r1[c.i0] + c.w1 r1[c.i1]) */
        const double top = __dadd_rn(__dmul_rn(c.w0, r0[c.i0]), __dmul_rn(c.w1, r0[c.i1]));
        const double bottom = __dadd_rn(__dmul_rn(c.w0, r1[c.i0]), __dmul_rn(c.w1, r1[c.i1]));
        y[i] = __dadd_rn(__dmul_rn(r.w0, top), __dmul_rn(r.w1, bottom));
    }
}

/* acc + (wy wx) g, as the CPU's `+= wy * wx * g`. */
__device__ double add_term(double acc, double wy, double wx, double g) {
    return __dadd_rn(acc, __dmul_rn(__dmul_rn(wy, wx), g));
}

__global__ void __launch_bounds__(kThreads) bilinear_backward(const double *grad,
                                                              double *out,
                                                              const yg_lerp_tap *taps,
                                                              const int64_t *ranges,
                                                              long long planes,
                                                              long long ih,
                                                              long long iw,
                                                              long long oh,
                                                              long long ow) {
    const yg_lerp_tap *cols = taps + oh;
    const int64_t *row_range = ranges, *col_range = ranges + 2 * ih;
    for (long long i = blockIdx.x * (long long)kThreads + threadIdx.x; i < planes * ih * iw;
         i += (long long)gridDim.x * kThreads) {
        const long long p = i / (ih * iw), y = i / iw % ih, x = i % iw;
        const double *gp = grad + p * oh * ow;
        double acc = 0;
        for (long long oy = row_range[2 * y]; oy < row_range[2 * y + 1]; oy++) {
            const yg_lerp_tap r = taps[oy];
            for (long long ox = col_range[2 * x]; ox < col_range[2 * x + 1]; ox++) {
                const yg_lerp_tap c = cols[ox];
                const double g = gp[oy * ow + ox];
                /* the CPU's r0[c.i0], r0[c.i1], r1[c.i0], r1[c.i1] */
                if (r.i0 == y) {
                    if (c.i0 == x)
                        acc = add_term(acc, r.w0, c.w0, g);
                    if (c.i1 == x)
                        acc = add_term(acc, r.w0, c.w1, g);
                }
                if (r.i1 == y) {
                    if (c.i0 == x)
                        acc = add_term(acc, r.w1, c.w0, g);
                    if (c.i1 == x)
                        acc = add_term(acc, r.w1, c.w1, g);
                }
            }
        }
        out[i] = acc;
    }
}

} /* namespace */

extern "C" int yg__cuda_upsample_bilinear_launch(const double *src,
                                                 double *dst,
                                                 const yg_lerp_tap *taps,
                                                 int64_t planes,
                                                 int64_t ih,
                                                 int64_t iw,
                                                 int64_t oh,
                                                 int64_t ow) {
    long long n = planes * oh * ow;
    if (n <= 0)
        return (int)cudaSuccess;
    bilinear<<<grid_for(n), kThreads, 0, YG_CUDA_STREAM>>>(src, dst, taps, planes, ih, iw, oh, ow);
    return (int)cudaGetLastError();
}

extern "C" int yg__cuda_upsample_bilinear_backward_launch(const double *grad,
                                                          double *dst,
                                                          const yg_lerp_tap *taps,
                                                          const int64_t *ranges,
                                                          int64_t planes,
                                                          int64_t ih,
                                                          int64_t iw,
                                                          int64_t oh,
                                                          int64_t ow) {
    long long n = planes * ih * iw;
    if (n <= 0)
        return (int)cudaSuccess;
    bilinear_backward<<<grid_for(n), kThreads, 0, YG_CUDA_STREAM>>>(
        grad, dst, taps, ranges, planes, ih, iw, oh, ow);
    return (int)cudaGetLastError();
}
