/*
 * norm.cu - batch_norm's fused kernels on the GPU (cpu/norm.c's
 * native_batch_norm and native_batch_norm_backward_fused), with the CPU's
 * formulas: per channel, the mean and then the sum of squared deviations
 * from it (two passes, no cancellation), both accumulated in double; the
 * output (x - mean) scale + shift and the input gradient a g + b (x -
 * mean) + c in the element type with coefficients rounded to it as the
 * CPU rounds them; the running statistics moved with the unbiased
 * variance, in their own dtype, by the same block that computed them.
 *
 * One block per channel (a grid-stride loop over channels beyond the
 * grid): its threads stride over the channel's n segments of l
 * elements (consecutive threads, consecutive positions) and add their
 * partial sums in a fixed tree, so a result does not depend on
 * scheduling.  The sums differ from the CPU's only in their order
 * (double accumulation keeps that far below float32 rounding).
 */
#include "cuda/grid.cuh"
#include "cuda/norm.h"

#include "cuda/launch.h"

#include <cuda_runtime.h>

namespace {

const int kThreads = 256;

/* The sum over the block of v (every thread gets it). */
__device__ double block_sum(double v, double *part)
{
    part[threadIdx.x] = v;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    double total = part[0];
    __syncthreads(); /* part is reused by the next sum */
    return total;
}

__device__ double state_get(const void *t, bool f64, long long stride, long long i)
{
    return f64 ? ((const double *)t)[i * stride] : (double)((const float *)t)[i * stride];
}

__device__ void state_set(void *t, bool f64, long long stride, long long i, double v)
{
    if (f64)
        ((double *)t)[i * stride] = v;
    else
        ((float *)t)[i * stride] = (float)v;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) batch_norm(yg__cuda_bn_args a)
{
    __shared__ double part[kThreads];
    const long long n = a.n, c = a.c, l = a.l, m = n * l;
    const T *x = (const T *)a.x, *w = (const T *)a.w, *b = (const T *)a.b;
    T *y = (T *)a.y;
    const double count = (double)m;

    for (long long ch = blockIdx.x; ch < c; ch += gridDim.x) {
        double mu = NAN, var = NAN;
        if (a.training) {
            if (m > 0) {
                double s = 0;
                for (long long j = threadIdx.x; j < m; j += kThreads)
                    s += (double)x[(j / l * c + ch) * l + j % l];
                mu = block_sum(s, part) / count;
                double sq = 0;
                for (long long j = threadIdx.x; j < m; j += kThreads) {
                    double d = (double)x[(j / l * c + ch) * l + j % l] - mu;
                    sq += d * d;
                }
                var = block_sum(sq, part) / count;
            }
        } else {
            mu = state_get(a.rm, a.rm_f64, a.rm_stride, ch);
            var = state_get(a.rv, a.rv_f64, a.rv_stride, ch);
        }
        double inv = 1 / sqrt(var + a.eps);
        const T tmu = (T)mu;
        const T scale = (T)inv * (w != NULL ? w[ch] : (T)1), shift = b != NULL ? b[ch] : (T)0;
        for (long long j = threadIdx.x; j < m; j += kThreads) {
            long long at = (j / l * c + ch) * l + j % l;
            /* no contraction into an fma: the CPU rounds the product */
            y[at] = a.f64 ? (T)__dadd_rn(__dmul_rn((double)(x[at] - tmu), (double)scale),
                                         (double)shift)
                          : (T)__fadd_rn(__fmul_rn((float)(x[at] - tmu), (float)scale),
                                         (float)shift);
        }
        if (threadIdx.x == 0) {
            ((T *)a.save_mean)[ch] = tmu;
            ((T *)a.save_invstd)[ch] = (T)inv;
            if (a.training && a.rm != NULL && m > 0) {
                double rm = state_get(a.rm, a.rm_f64, a.rm_stride, ch);
                double rv = state_get(a.rv, a.rv_f64, a.rv_stride, ch);
                state_set(a.rm, a.rm_f64, a.rm_stride, ch,
                          (1 - a.momentum) * rm + a.momentum * (double)tmu);
                state_set(a.rv, a.rv_f64, a.rv_stride, ch,
                          (1 - a.momentum) * rv + a.momentum * var * count / (count - 1));
            }
        }
    }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) batch_norm_backward(yg__cuda_bn_backward_args a)
{
    __shared__ double part[kThreads];
    const long long n = a.n, c = a.c, l = a.l, m = n * l;
    const T *g = (const T *)a.g, *x = (const T *)a.x, *w = (const T *)a.w;
    T *gi = (T *)a.gi;
    const double count = (double)m;
    const bool sums = a.gw != NULL || a.gb != NULL || (a.gi != NULL && a.training);

    for (long long ch = blockIdx.x; ch < c; ch += gridDim.x) {
        double mu = (double)((const T *)a.mean)[ch], inv = (double)((const T *)a.invstd)[ch];
        double wc = w != NULL ? (double)w[ch] : 1, sg = 0, sgx = 0;
        if (sums) {
            double s = 0, sx = 0;
            for (long long j = threadIdx.x; j < m; j += kThreads) {
                long long at = (j / l * c + ch) * l + j % l;
                double gv = (double)g[at];
                s += gv;
                sx += gv * ((double)x[at] - mu);
            }
            sg = block_sum(s, part);
            sgx = block_sum(sx, part);
        }
        double ca = inv * wc, cb = 0, cc = 0;
        if (a.training && count > 0) {
            cb = -wc * inv * inv * inv * sgx / count;
            cc = -wc * inv * sg / count;
        }
        const T tmu = (T)mu, ta = (T)ca, tb = (T)cb, tc = (T)cc;
        for (long long j = threadIdx.x; gi != NULL && j < m; j += kThreads) {
            long long at = (j / l * c + ch) * l + j % l;
            if (a.f64)
                gi[at] = (T)__dadd_rn(__dadd_rn(__dmul_rn((double)ta, (double)g[at]),
                                                __dmul_rn((double)tb, (double)(x[at] - tmu))),
                                      (double)tc);
            else
                gi[at] = (T)__fadd_rn(__fadd_rn(__fmul_rn((float)ta, (float)g[at]),
                                                __fmul_rn((float)tb, (float)(x[at] - tmu))),
                                      (float)tc);
        }
        if (threadIdx.x == 0) {
            if (a.gw != NULL)
                ((T *)a.gw)[ch] = (T)(sgx * inv);
            if (a.gb != NULL)
                ((T *)a.gb)[ch] = (T)sg;
        }
    }
}

unsigned grid_for(long long c)
{
    return yg_cuda_grid(c);
}

} /* namespace */

extern "C" int yg__cuda_batch_norm_launch(const yg__cuda_bn_args *a)
{
    if (a->f64)
        batch_norm<double><<<grid_for(a->c), kThreads, 0, YG_CUDA_STREAM>>>(*a);
    else
        batch_norm<float><<<grid_for(a->c), kThreads, 0, YG_CUDA_STREAM>>>(*a);
    return (int)cudaGetLastError();
}

extern "C" int yg__cuda_batch_norm_backward_launch(const yg__cuda_bn_backward_args *a)
{
    if (a->f64)
        batch_norm_backward<double><<<grid_for(a->c), kThreads, 0, YG_CUDA_STREAM>>>(*a);
    else
        batch_norm_backward<float><<<grid_for(a->c), kThreads, 0, YG_CUDA_STREAM>>>(*a);
    return (int)cudaGetLastError();
}
