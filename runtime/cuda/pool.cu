/*
 * pool.cu - pooling on the GPU for cuda/pool.c's kernels (max, average
 * and adaptive average pooling over 2 or 3 dims, and the average ones'
 * gradients), with the arithmetic of the CPU's (cpu/pool.c), so the
 * results are the CPU's to the bit: every window is read in the CPU's
 * order (depth, height, width), sums and shares are computed in double
 * from the element type and rounded once, max pooling keeps the first
 * maximum (NaN counting as the largest) and its position (z H + y) W + x
 * in the plane.  Nearest upsampling and its gradient work on float64
 * copies, as cpu/pool.c does (the host rounds the result once).
 *
 * The forward kernels give each output element a thread.  The gradients
 * are deterministic without atomics: each input element's thread gathers
 * the shares of the windows (or adaptive cells) that cover it, in
 * increasing output order, which is the order in which cpu/pool.c's
 * scatter adds them into that element.
 */
#include "cuda/grid.cuh"
#include "cuda/pool.h"

#include "cuda/launch.h"

#include <cuda_runtime.h>

namespace {

const int kThreads = 256;

unsigned grid_for(long long n)
{
    long long blocks = (n + kThreads - 1) / kThreads;
    return yg_cuda_grid(blocks);
}

__device__ void unflatten(long long at, const int64_t *ext, long long o[3])
{
    o[2] = at % ext[2];
    o[1] = at / ext[2] % ext[1];
    o[0] = at / (ext[1] * ext[2]);
}

__device__ void adaptive_cell(long long o, long long in, long long out, long long *lo,
                              long long *hi)
{
    *lo = o * in / out;
    *hi = ((o + 1) * in + out - 1) / out;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    max_pool(const T *x, T *values, int64_t *indices, yg__cuda_pool_geom g, bool adaptive)
{
    const long long ovol = g.out[0] * g.out[1] * g.out[2], ivol = g.in[0] * g.in[1] * g.in[2];
    for (long long i = blockIdx.x * (long long)kThreads + threadIdx.x; i < g.planes * ovol;
         i += (long long)gridDim.x * kThreads) {
        const T *plane = x + i / ovol * ivol;
        long long o[3], lo[3], hi[3], step[3];
        unflatten(i % ovol, g.out, o);
        for (int d = 0; d < 3; d++) {
            if (adaptive) {
                adaptive_cell(o[d], g.in[d], g.out[d], &lo[d], &hi[d]);
                step[d] = 1;
            } else {
                /* taps lo, lo + d, ... below hi; the out-of-range ones are
                 * skipped below, as padding */
                lo[d] = o[d] * g.s[d] - g.p[d];
                hi[d] = lo[d] + g.k[d] * g.d[d];
                step[d] = g.d[d];
            }
        }
        long long best = -1;
        for (long long z = lo[0]; z < hi[0]; z += step[0]) {
            if (z < 0 || z >= g.in[0])
                continue;
            for (long long y = lo[1]; y < hi[1]; y += step[1]) {
                if (y < 0 || y >= g.in[1])
                    continue;
                for (long long xx = lo[2]; xx < hi[2]; xx += step[2]) {
                    if (xx < 0 || xx >= g.in[2])
                        continue;
                    long long at = (z * g.in[1] + y) * g.in[2] + xx;
                    double v = (double)plane[at];
                    if (best < 0 ||
                        (!isnan((double)plane[best]) && (isnan(v) || v > (double)plane[best])))
                        best = at;
                }
            }
        }
        /* the host refused windows of padding alone; NaN marks one anyway */
        values[i] = best >= 0 ? plane[best] : (T)NAN;
        indices[i] = best;
    }
}

/* cpu/pool.c's avg_divisor. */
__device__ double avg_divisor(const yg__cuda_pool_geom &g, const long long o[3],
                              bool count_include_pad, long long divisor_override)
{
    if (divisor_override != 0)
        return (double)divisor_override;
    long long n = 1;
    for (int i = 0; i < 3; i++) {
        long long a = o[i] * g.s[i] - g.p[i], b = a + g.k[i];
        if (count_include_pad) {
            long long pb = b < g.in[i] + g.p[i] ? b : g.in[i] + g.p[i];
            n *= pb - a;
        } else {
            long long ca = a > 0 ? a : 0, cb = b < g.in[i] ? b : g.in[i];
            n *= cb - ca;
        }
    }
    return (double)n;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    avg_pool(const T *x, T *y, yg__cuda_pool_geom g, bool count_include_pad,
             long long divisor_override)
{
    const long long ovol = g.out[0] * g.out[1] * g.out[2], ivol = g.in[0] * g.in[1] * g.in[2];
    for (long long i = blockIdx.x * (long long)kThreads + threadIdx.x; i < g.planes * ovol;
         i += (long long)gridDim.x * kThreads) {
        const T *plane = x + i / ovol * ivol;
        long long o[3];
        unflatten(i % ovol, g.out, o);
        double acc = 0;
        for (long long kz = 0; kz < g.k[0]; kz++) {
            long long z = o[0] * g.s[0] - g.p[0] + kz;
            if (z < 0 || z >= g.in[0])
                continue;
            for (long long ky = 0; ky < g.k[1]; ky++) {
                long long yy = o[1] * g.s[1] - g.p[1] + ky;
                if (yy < 0 || yy >= g.in[1])
                    continue;
                for (long long kx = 0; kx < g.k[2]; kx++) {
                    long long xx = o[2] * g.s[2] - g.p[2] + kx;
                    if (xx < 0 || xx >= g.in[2])
                        continue;
                    acc += (double)plane[(z * g.in[1] + yy) * g.in[2] + xx];
                }
            }
        }
        y[i] = (T)(acc / avg_divisor(g, o, count_include_pad, divisor_override));
    }
}

/* The windows covering position pos of a dim: [*lo, *hi]. */
__device__ void covering(long long pos, long long k, long long s, long long p, long long out,
                         long long *lo, long long *hi)
{
    long long first = pos + p - k + 1;
    *lo = first <= 0 ? 0 : (first + s - 1) / s;
    *hi = (pos + p) / s;
    if (*hi > out - 1)
        *hi = out - 1;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    avg_pool_backward(const T *grad, T *out, yg__cuda_pool_geom g, bool count_include_pad,
                      long long divisor_override)
{
    const long long ovol = g.out[0] * g.out[1] * g.out[2], ivol = g.in[0] * g.in[1] * g.in[2];
    for (long long i = blockIdx.x * (long long)kThreads + threadIdx.x; i < g.planes * ivol;
         i += (long long)gridDim.x * kThreads) {
        const T *gp = grad + i / ivol * ovol;
        long long at[3], lo[3], hi[3], o[3];
        unflatten(i % ivol, g.in, at);
        for (int d = 0; d < 3; d++)
            covering(at[d], g.k[d], g.s[d], g.p[d], g.out[d], &lo[d], &hi[d]);
        double acc = 0;
        for (o[0] = lo[0]; o[0] <= hi[0]; o[0]++)
            for (o[1] = lo[1]; o[1] <= hi[1]; o[1]++)
                for (o[2] = lo[2]; o[2] <= hi[2]; o[2]++)
                    acc += (double)gp[(o[0] * g.out[1] + o[1]) * g.out[2] + o[2]] /
                           avg_divisor(g, o, count_include_pad, divisor_override);
        out[i] = (T)acc;
    }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) adaptive_avg_pool(const T *x, T *y, yg__cuda_pool_geom g)
{
    const long long ovol = g.out[0] * g.out[1] * g.out[2], ivol = g.in[0] * g.in[1] * g.in[2];
    for (long long i = blockIdx.x * (long long)kThreads + threadIdx.x; i < g.planes * ovol;
         i += (long long)gridDim.x * kThreads) {
        const T *plane = x + i / ovol * ivol;
        long long o[3], lo[3], hi[3];
        unflatten(i % ovol, g.out, o);
        for (int d = 0; d < 3; d++)
            adaptive_cell(o[d], g.in[d], g.out[d], &lo[d], &hi[d]);
        double acc = 0;
        for (long long z = lo[0]; z < hi[0]; z++)
            for (long long yy = lo[1]; yy < hi[1]; yy++)
                for (long long xx = lo[2]; xx < hi[2]; xx++)
                    acc += (double)plane[(z * g.in[1] + yy) * g.in[2] + xx];
        long long count = (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
        y[i] = (T)(count > 0 ? acc / (double)count : NAN);
    }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    adaptive_avg_pool_backward(const T *grad, T *out, yg__cuda_pool_geom g)
{
    const long long ovol = g.out[0] * g.out[1] * g.out[2], ivol = g.in[0] * g.in[1] * g.in[2];
    for (long long i = blockIdx.x * (long long)kThreads + threadIdx.x; i < g.planes * ivol;
         i += (long long)gridDim.x * kThreads) {
        const T *gp = grad + i / ivol * ovol;
        long long at[3], first[3], last[3], o[3], lo[3], hi[3];
        unflatten(i % ivol, g.in, at);
        /* the cells around at's, checked exactly below */
        for (int d = 0; d < 3; d++) {
            first[d] = at[d] * g.out[d] / g.in[d] - 1;
            first[d] = first[d] > 0 ? first[d] : 0;
            last[d] = ((at[d] + 1) * g.out[d] + g.in[d] - 1) / g.in[d];
            last[d] = last[d] < g.out[d] - 1 ? last[d] : g.out[d] - 1;
        }
        double acc = 0;
        for (o[0] = first[0]; o[0] <= last[0]; o[0]++) {
            adaptive_cell(o[0], g.in[0], g.out[0], &lo[0], &hi[0]);
            if (at[0] < lo[0] || at[0] >= hi[0])
                continue;
            for (o[1] = first[1]; o[1] <= last[1]; o[1]++) {
                adaptive_cell(o[1], g.in[1], g.out[1], &lo[1], &hi[1]);
                if (at[1] < lo[1] || at[1] >= hi[1])
                    continue;
                for (o[2] = first[2]; o[2] <= last[2]; o[2]++) {
                    adaptive_cell(o[2], g.in[2], g.out[2], &lo[2], &hi[2]);
                    if (at[2] < lo[2] || at[2] >= hi[2])
                        continue;
                    long long count = (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
                    acc += (double)gp[(o[0] * g.out[1] + o[1]) * g.out[2] + o[2]] /
                           (double)count;
                }
            }
        }
        out[i] = (T)acc;
    }
}

/* cpu/pool.c's upsample_nearest2d: output (oy, ox) of a plane copies
 * input (oy ih / oh, ox iw / ow), rounded down. */
__global__ void __launch_bounds__(kThreads)
    upsample_nearest(const double *x, double *y, yg__cuda_pool_geom g)
{
    const long long ih = g.in[1], iw = g.in[2], oh = g.out[1], ow = g.out[2];
    for (long long i = blockIdx.x * (long long)kThreads + threadIdx.x; i < g.planes * oh * ow;
         i += (long long)gridDim.x * kThreads) {
        const long long p = i / (oh * ow), oy = i / ow % oh, ox = i % ow;
        const long long sy = oy * ih / oh, sx = ox * iw / ow;
        y[i] = x[(p * ih + sy) * iw + sx];
    }
}

/* Its gradient, gathered: input (y, x) of a plane adds the output
 * gradients of rows [rows[y], rows[y + 1]) and columns [cols[x],
 * cols[x + 1]) (the outputs that copied it) in row-major order, the order
 * in which cpu/pool.c's scatter adds them into it. */
__global__ void __launch_bounds__(kThreads)
    upsample_nearest_backward(const double *grad, double *out, yg__cuda_pool_geom g,
                              const int64_t *rows, const int64_t *cols)
{
    const long long ih = g.in[1], iw = g.in[2], oh = g.out[1], ow = g.out[2];
    for (long long i = blockIdx.x * (long long)kThreads + threadIdx.x; i < g.planes * ih * iw;
         i += (long long)gridDim.x * kThreads) {
        const long long p = i / (ih * iw), y = i / iw % ih, x = i % iw;
        const double *gp = grad + p * oh * ow;
        double acc = 0;
        for (long long oy = rows[y]; oy < rows[y + 1]; oy++)
            for (long long ox = cols[x]; ox < cols[x + 1]; ox++)
                acc += gp[oy * ow + ox];
        out[i] = acc;
    }
}

} /* namespace */

extern "C" int yg__cuda_max_pool_launch(int f64, const void *x, void *values, int64_t *indices,
                                        yg__cuda_pool_geom g, int adaptive)
{
    unsigned grid = grid_for(g.planes * g.out[0] * g.out[1] * g.out[2]);
    if (f64)
        max_pool<double><<<grid, kThreads, 0, YG_CUDA_STREAM>>>((const double *)x, (double *)values, indices, g,
                                             adaptive != 0);
    else
        max_pool<float><<<grid, kThreads, 0, YG_CUDA_STREAM>>>((const float *)x, (float *)values, indices, g,
                                            adaptive != 0);
    return (int)cudaGetLastError();
}

extern "C" int yg__cuda_avg_pool_launch(int f64, const void *src, void *dst, yg__cuda_pool_geom g,
                                        int backward, int count_include_pad,
                                        int64_t divisor_override)
{
    bool cip = count_include_pad != 0;
    if (backward) {
        unsigned grid = grid_for(g.planes * g.in[0] * g.in[1] * g.in[2]);
        if (f64)
            avg_pool_backward<double><<<grid, kThreads, 0, YG_CUDA_STREAM>>>((const double *)src, (double *)dst, g,
                                                          cip, divisor_override);
        else
            avg_pool_backward<float><<<grid, kThreads, 0, YG_CUDA_STREAM>>>((const float *)src, (float *)dst, g,
                                                         cip, divisor_override);
    } else {
        unsigned grid = grid_for(g.planes * g.out[0] * g.out[1] * g.out[2]);
        if (f64)
            avg_pool<double><<<grid, kThreads, 0, YG_CUDA_STREAM>>>((const double *)src, (double *)dst, g, cip,
                                                 divisor_override);
        else
            avg_pool<float><<<grid, kThreads, 0, YG_CUDA_STREAM>>>((const float *)src, (float *)dst, g, cip,
                                                divisor_override);
    }
    return (int)cudaGetLastError();
}

extern "C" int yg__cuda_adaptive_avg_pool_launch(int f64, const void *src, void *dst,
                                                 yg__cuda_pool_geom g, int backward)
{
    if (backward) {
        unsigned grid = grid_for(g.planes * g.in[0] * g.in[1] * g.in[2]);
        if (f64)
            adaptive_avg_pool_backward<double><<<grid, kThreads, 0, YG_CUDA_STREAM>>>((const double *)src,
                                                                   (double *)dst, g);
        else
            adaptive_avg_pool_backward<float><<<grid, kThreads, 0, YG_CUDA_STREAM>>>((const float *)src,
                                                                  (float *)dst, g);
    } else {
        unsigned grid = grid_for(g.planes * g.out[0] * g.out[1] * g.out[2]);
        if (f64)
            adaptive_avg_pool<double><<<grid, kThreads, 0, YG_CUDA_STREAM>>>((const double *)src, (double *)dst, g);
        else
            adaptive_avg_pool<float><<<grid, kThreads, 0, YG_CUDA_STREAM>>>((const float *)src, (float *)dst, g);
    }
    return (int)cudaGetLastError();
}

extern "C" int yg__cuda_upsample_nearest_launch(const double *src, double *dst,
                                                yg__cuda_pool_geom g)
{
    long long n = g.planes * g.out[1] * g.out[2];
    if (n <= 0)
        return (int)cudaSuccess;
    upsample_nearest<<<grid_for(n), kThreads, 0, YG_CUDA_STREAM>>>(src, dst, g);
    return (int)cudaGetLastError();
}

extern "C" int yg__cuda_upsample_nearest_backward_launch(const double *grad, double *dst,
                                                         yg__cuda_pool_geom g,
                                                         const int64_t *rows,
                                                         const int64_t *cols)
{
    long long n = g.planes * g.in[1] * g.in[2];
    if (n <= 0)
        return (int)cudaSuccess;
    upsample_nearest_backward<<<grid_for(n), kThreads, 0, YG_CUDA_STREAM>>>(grad, dst, g, rows,
                                                                             cols);
    return (int)cudaGetLastError();
}
