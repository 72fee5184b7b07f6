/*
 * index.cu - gathers and index-adds, behind index_select, embedding, their
 * gradients and advanced indexing (cpu/index.c and cpu/index_advanced.c
 * through cuda/index.c).
 *
 * Operands are contiguous [outer, size, inner] blocks (advanced indexing:
 * outer = inner = 1, the rows being element offsets).  gather:
 *   out[o, k, i] = src[o, index[k], i]
 * one thread per output element, elements moved as 1-, 2-, 4- or 8-byte
 * words.  index_add is deterministic: the host groups the positions k by
 * the row index[k] they add into (a CSR of rows), in increasing k, and
 * one thread per (o, row, i) does
 *   out[o, row, i] += grad[o, k, i] for each of its k, in increasing k
 * in the element's own type, in the CPU's order, so the results equal the
 * CPU's bit for bit (bool adds as logical or, halves in double rounded
 * once); or, for index_put without accumulate, assigns the grad of the
 * row's last k, the CPU's last write.
 */
#include "cuda/grid.cuh"
#include "cuda/launch.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace {

const int kThreads = 256;

unsigned grid_for(long long n)
{
    long long b = (n + kThreads - 1) / kThreads;
    return yg_cuda_grid(b);
}

template <typename W>
__global__ void __launch_bounds__(kThreads)
    gather(W *out, const W *src, const long long *index, long long outer, long long size,
           long long k_count, long long inner)
{
    const long long n = outer * k_count * inner;
    for (long long e = (long long)blockIdx.x * kThreads + threadIdx.x; e < n;
         e += (long long)gridDim.x * kThreads) {
        const long long i = e % inner, k = (e / inner) % k_count, o = e / (inner * k_count);
        out[e] = src[(o * size + index[k]) * inner + i];
    }
}

template <typename T> __device__ T add(T a, T b)
{
    return a + b;
}
template <> __device__ int add<int>(int a, int b)
{
    return (int)((unsigned)a + (unsigned)b); /* wraps, as the CPU's */
}
template <> __device__ unsigned char add<unsigned char>(unsigned char a, unsigned char b)
{
    return a || b;
}
/* Halves add in double and round once, as the CPU's accumulate. */
template <> __device__ __half add<__half>(__half a, __half b)
{
    return __double2half((double)__half2float(a) + (double)__half2float(b));
}
template <> __device__ __nv_bfloat16 add<__nv_bfloat16>(__nv_bfloat16 a, __nv_bfloat16 b)
{
    return __double2bfloat16((double)__bfloat162float(a) + (double)__bfloat162float(b));
}

/* out[o, row, i] += each grad[o, k, i] of the row's positions k, in
 * increasing k; assign: out[o, row, i] = that of the last k instead. */
template <typename T>
__global__ void __launch_bounds__(kThreads)
    index_add(T *out, const T *grad, const long long *rows, const long long *starts,
              const long long *ks, long long n_rows, long long outer, long long size,
              long long k_count, long long inner, bool assign)
{
    const long long n = outer * n_rows * inner;
    for (long long e = (long long)blockIdx.x * kThreads + threadIdx.x; e < n;
         e += (long long)gridDim.x * kThreads) {
        const long long i = e % inner, u = (e / inner) % n_rows, o = e / (inner * n_rows);
        T *dst = &out[(o * size + rows[u]) * inner + i];
        if (assign) {
            *dst = grad[(o * k_count + ks[starts[u + 1] - 1]) * inner + i];
            continue;
        }
        T acc = *dst;
        for (long long j = starts[u]; j < starts[u + 1]; j++)
            acc = add<T>(acc, grad[(o * k_count + ks[j]) * inner + i]);
        *dst = acc;
    }
}

} /* namespace */

/* out = src gathered along the middle dim by index (k_count device int64
 * values, all in [0, size)); esize: the element size in bytes.  Returns
 * the launch's cudaError_t. */
extern "C" int yg__cuda_gather_launch(int esize, void *out, const void *src,
                                      const long long *index, long long outer, long long size,
                                      long long k_count, long long inner)
{
    const unsigned g = grid_for(outer * k_count * inner);
    if (outer * k_count * inner == 0)
        return 0;
    if (esize == 8)
        gather<long long><<<g, kThreads, 0, YG_CUDA_STREAM>>>((long long *)out, (const long long *)src, index, outer,
                                           size, k_count, inner);
    else if (esize == 4)
        gather<int><<<g, kThreads, 0, YG_CUDA_STREAM>>>((int *)out, (const int *)src, index, outer, size, k_count,
                                     inner);
    else if (esize == 2)
        gather<short><<<g, kThreads, 0, YG_CUDA_STREAM>>>((short *)out, (const short *)src, index, outer, size,
                                       k_count, inner);
    else
        gather<char><<<g, kThreads, 0, YG_CUDA_STREAM>>>((char *)out, (const char *)src, index, outer, size, k_count,
                                      inner);
    return (int)cudaGetLastError();
}

/* The index-add of grad [outer, k_count, inner] into out [outer, size,
 * inner] through the row CSR (rows[n_rows], starts[n_rows + 1], ks:
 * device int64): out += the grads of each row in increasing k, or with
 * assign out = the grad of the row's last k; dtype: yg_dtype (float32 0,
 * float64 1, int64 2, bool 3, int32 4, float16 5, bfloat16 6).  Returns
 * the launch's cudaError_t. */
extern "C" int yg__cuda_index_add_launch(int dtype, void *out, const void *grad,
                                         const long long *rows, const long long *starts,
                                         const long long *ks, long long n_rows, long long outer,
                                         long long size, long long k_count, long long inner,
                                         int assign)
{
    const long long n = outer * n_rows * inner;
    const unsigned g = grid_for(n);
    if (n == 0)
        return 0;
#define INDEX_ADD(T)                                                                      \
    index_add<T><<<g, kThreads, 0, YG_CUDA_STREAM>>>((T *)out, (const T *)grad, rows, starts, \
                                                     ks, n_rows, outer, size, k_count, inner, \
                                                     assign != 0)
    switch (dtype) {
    case 0:
        INDEX_ADD(float);
        break;
    case 1:
        INDEX_ADD(double);
        break;
    case 2:
        INDEX_ADD(long long);
        break;
    case 3:
        INDEX_ADD(unsigned char);
        break;
    case 4:
        INDEX_ADD(int);
        break;
    case 5:
        INDEX_ADD(__half);
        break;
    case 6:
        INDEX_ADD(__nv_bfloat16);
        break;
    default:
        return (int)cudaErrorInvalidValue;
    }
#undef INDEX_ADD
    return (int)cudaGetLastError();
}
