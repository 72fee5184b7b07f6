/*
 * scatter.cu - gather, scatter (from a tensor or a value) and scatter_add
 * along dim d on the GPU (yg__cuda_scatter_launch), for cpu/index.c,
 * which checked every index and made index, src and the result
 * contiguous (the result a copy of self, or zeros).
 *
 * gather: one thread per index element.  The scatters keep the CPU's
 * order: two elements of index can only address the same result element
 * when they differ in dim d alone, so one thread walks each line of index
 * along d in increasing position and stores or adds in that order, lines
 * in parallel.  A repeated index therefore leaves the CPU's value (the
 * last one stored, or the sum added in the CPU's order), bit for bit.
 */
#include "cuda/grid.cuh"
#include "cuda/launch.h"

#include <cuda_runtime.h>

namespace {

const int kThreads = 256;

struct geometry {
    int ndim, d;
    long long isizes[YG_CUDA_MAX_DIMS]; /* index (and src) sizes */
    long long rsizes[YG_CUDA_MAX_DIMS]; /* the result's (or self's, for gather) sizes */
    long long ssizes[YG_CUDA_MAX_DIMS]; /* src's sizes (scatter from a tensor) */
};

/* Offsets, in a contiguous tensor of sizes, of the element at coordinates
 * c with c[d] replaced by k (k < 0: not replaced). */
__device__ long long offset_of(const long long *c, const long long *sizes, int ndim, int d,
                               long long k)
{
    long long off = 0;
    for (int i = 0; i < ndim; i++)
        off = off * sizes[i] + (i == d && k >= 0 ? k : c[i]);
    return off;
}

__device__ void coords_of(long long e, const long long *sizes, int ndim, long long *c)
{
    for (int i = ndim - 1; i >= 0; i--) {
        c[i] = e % sizes[i];
        e /= sizes[i];
    }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    gather(T *out, const T *self, const long long *index, const geometry g, long long n)
{
    long long c[YG_CUDA_MAX_DIMS];
    for (long long e = (long long)blockIdx.x * kThreads + threadIdx.x; e < n;
         e += (long long)gridDim.x * kThreads) {
        coords_of(e, g.isizes, g.ndim, c);
        out[e] = self[offset_of(c, g.rsizes, g.ndim, g.d, g.ndim > 0 ? index[e] : -1)];
    }
}

template <typename T> __device__ T add(T a, T b)
{
    return a + b;
}
template <> __device__ int add<int>(int a, int b)
{
    return (int)((unsigned)a + (unsigned)b);
}
template <> __device__ unsigned char add<unsigned char>(unsigned char a, unsigned char b)
{
    return a || b;
}

/* mode: 0 copy from src, 1 store value, 2 add src. */
template <typename T>
__global__ void __launch_bounds__(kThreads)
    scatter(T *res, const T *src, T value, const long long *index, const geometry g, int mode,
            long long lines, long long line_len)
{
    long long c[YG_CUDA_MAX_DIMS];
    for (long long l = (long long)blockIdx.x * kThreads + threadIdx.x; l < lines;
         l += (long long)gridDim.x * kThreads) {
        /* the line's first element: l's coordinates over the dims but d */
        long long rest = l;
        for (int i = g.ndim - 1; i >= 0; i--) {
            if (i == g.d) {
                c[i] = 0;
                continue;
            }
            c[i] = rest % g.isizes[i];
            rest /= g.isizes[i];
        }
        for (long long k = 0; k < line_len; k++) {
            if (g.ndim > 0)
                c[g.d] = k;
            const long long e = offset_of(c, g.isizes, g.ndim, -1, -1);
            T *dst = res + offset_of(c, g.rsizes, g.ndim, g.d, g.ndim > 0 ? index[e] : -1);
            if (mode == 1)
                *dst = value;
            else {
                const T v = src[offset_of(c, g.ssizes, g.ndim, -1, -1)];
                *dst = mode == 0 ? v : add<T>(*dst, v);
            }
        }
    }
}

unsigned grid_for(long long n)
{
    long long b = (n + kThreads - 1) / kThreads;
    return yg_cuda_grid(b);
}

template <typename T>
int run(int is_gather, int mode, void *out, const void *src, const void *value,
        const long long *index, const geometry &g)
{
    long long n = 1;
    for (int i = 0; i < g.ndim; i++)
        n *= g.isizes[i];
    if (n == 0)
        return 0;
    if (is_gather) {
        gather<T><<<grid_for(n), kThreads, 0, YG_CUDA_STREAM>>>((T *)out, (const T *)src, index, g, n);
    } else {
        const long long line_len = g.ndim > 0 ? g.isizes[g.d] : 1;
        scatter<T><<<grid_for(n / line_len), kThreads, 0, YG_CUDA_STREAM>>>(
            (T *)out, (const T *)src, value != NULL ? *(const T *)value : (T)0, index, g, mode,
            n / line_len, line_len);
    }
    return (int)cudaGetLastError();
}

} /* namespace */

/* gather (is_gather: out = self gathered, src is self) or a scatter
 * (mode 0 copy, 1 value, 2 add) into out, all contiguous on the current
 * device; dtype: yg_dtype (float32 0 .. bfloat16 6, only 0-4 for add);
 * value: one element of out's dtype (mode 1); sizes: ndim entries each.
 * Returns the launch's cudaError_t. */
extern "C" int yg__cuda_scatter_launch(int is_gather, int mode, int dtype, void *out,
                                       const void *src, const void *value,
                                       const long long *index, int ndim, int d,
                                       const long long *isizes, const long long *rsizes,
                                       const long long *ssizes)
{
    geometry g;
    g.ndim = ndim;
    g.d = d;
    for (int i = 0; i < ndim; i++) {
        g.isizes[i] = isizes[i];
        g.rsizes[i] = rsizes[i];
        g.ssizes[i] = ssizes != NULL ? ssizes[i] : isizes[i];
    }
    switch (dtype) {
    case 0:
        return run<float>(is_gather, mode, out, src, value, index, g);
    case 1:
        return run<double>(is_gather, mode, out, src, value, index, g);
    case 2:
        return run<long long>(is_gather, mode, out, src, value, index, g);
    case 3:
        return run<unsigned char>(is_gather, mode, out, src, value, index, g);
    case 4:
        return run<int>(is_gather, mode, out, src, value, index, g);
    default: /* float16, bfloat16: moved as 16-bit patterns (never added) */
        return mode == 2 ? (int)cudaErrorInvalidValue
                         : run<unsigned short>(is_gather, mode, out, src, value, index, g);
    }
}
