/*
 * cuda/pointwise.cuh - the one elementwise CUDA kernel, which every
 * generated CUDA loop (generated/cuda/<section>.cu, one per op and dtype
 * from the op's `pointwise:` expression) and the copy kernel (cuda/copy.cu)
 * instantiate with their own element function.
 *
 * Geometry is the host's (cuda/launch.h): dims already compressed, so a
 * transposed or broadcast operand costs one div/mod per remaining dim and
 * a dense one none.  Each element function is instantiated four ways:
 * linear or strided, 32- or 64-bit index.  The host picks one per launch
 * (32-bit division is several times cheaper on the GPU).  One thread per
 * element in a grid-stride loop of YG_CUDA_BLOCK threads per block; on
 * the linear path, when every operand is aligned for it, one thread per
 * 16 bytes of the wider type instead (four float32 elements per load and
 * store, two float64), which is what reaches the memory's bandwidth.
 *
 * An element function Op is a struct constructed from the loop's
 * arguments (it reads its scalars there) with
 *     __device__ Out operator()(const In *v) const
 * over the NIN input values.  YG_CUDA_LOOP(fn, Out, In, NIN, Op) defines
 * launcher fn (cuda/launch.h's yg_cuda_launch_fn) under nvcc, and under
 * NVRTC, which compiles device code only, instantiates the four kernels
 * so the tests can compile every generated loop to PTX.
 */
#ifndef YAGRAD_CUDA_POINTWISE_CUH
#define YAGRAD_CUDA_POINTWISE_CUH

#include "cuda/launch.h"

#ifdef __CUDACC_RTC__
typedef unsigned long long uint64_t;
#define UINT64_C(c) c##ULL
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fffffff)
#define NULL 0
#else
#include <cuda_runtime.h>
#include <math.h>
#endif

namespace yg_cuda {

/* Operand offsets of element i (I: the index type). */
template <typename I, int NOPS>
__device__ __forceinline__ void offsets(const yg_cuda_loop_args &a, I i, I (&off)[NOPS])
{
#pragma unroll
    for (int k = 0; k < NOPS; k++)
        off[k] = 0;
    for (int d = 0; d < a.ndim; d++) {
        const I size = (I)a.sizes[d];
        const I c = i % size;
        i /= size;
#pragma unroll
        for (int k = 0; k < NOPS; k++)
            off[k] += c * (I)a.strides[k][d];
    }
}

/* Elements per thread and access on the vector path: as many as fit 16
 * bytes of the wider of In and Out (1: no vector path). */
template <typename Out, typename In> struct vec_width {
    static const int bytes = sizeof(In) > sizeof(Out) ? (int)sizeof(In) : (int)sizeof(Out);
    static const int value = bytes >= 16 ? 1 : 16 / bytes;
};

/* W elements loaded or stored as one aligned access. */
template <typename T, int W> struct alignas(sizeof(T) * W) pack {
    T v[W];
};

template <typename Out, typename In, int NIN, typename Op, bool LINEAR, typename I>
__global__ void __launch_bounds__(YG_CUDA_BLOCK) loop(const yg_cuda_loop_args a, const Op op)
{
    const I n = (I)a.n;
    const I step = (I)gridDim.x * (I)blockDim.x;
    const I first = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x;
    I from = 0; /* where the element walk starts */

    if (LINEAR && vec_width<Out, In>::value > 1 && a.vec) {
        /* Every operand dense and aligned: W elements per access, then
         * the last n % W elements one by one. */
        const int W = vec_width<Out, In>::value;
        const I nv = n / W;
        for (I j = first; j < nv; j += step) {
            pack<In, W> p[NIN];
            pack<Out, W> r;
#pragma unroll
            for (int k = 0; k < NIN; k++)
                p[k] = ((const pack<In, W> *)a.ptrs[k + 1])[j];
#pragma unroll
            for (int w = 0; w < W; w++) {
                In v[NIN];
#pragma unroll
                for (int k = 0; k < NIN; k++)
                    v[k] = p[k].v[w];
                r.v[w] = op(v);
            }
            ((pack<Out, W> *)a.ptrs[0])[j] = r;
        }
        from = nv * W;
    }
    for (I i = from + first; i < n; i += step) {
        In v[NIN];
        if (LINEAR) {
#pragma unroll
            for (int k = 0; k < NIN; k++)
                v[k] = ((const In *)a.ptrs[k + 1])[i];
            ((Out *)a.ptrs[0])[i] = op(v);
        } else {
            I off[NIN + 1];
            offsets<I, NIN + 1>(a, i, off);
#pragma unroll
            for (int k = 0; k < NIN; k++)
                v[k] = ((const In *)a.ptrs[k + 1])[off[k + 1]];
            ((Out *)a.ptrs[0])[off[0]] = op(v);
        }
    }
}

/* The sum (max when is_max) of v over the block's threads, returned to
 * every thread; every thread of the block must call it, blockDim.x a
 * multiple of 32 up to 1024.  sh: 32 doubles of shared memory, which may
 * be reused once every thread has the result. */
__device__ __forceinline__ double block_reduce(double v, double *sh, bool is_max)
{
    for (int o = 16; o > 0; o >>= 1) {
        const double w = __shfl_down_sync(0xffffffffu, v, o);
        v = is_max ? (w > v || w != w ? w : v) : v + w;
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads(); /* sh may still be read from the last call */
    if (lane == 0)
        sh[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x >> 5) ? sh[lane] : (is_max ? -INFINITY : 0.0);
        for (int o = 16; o > 0; o >>= 1) {
            const double w = __shfl_down_sync(0xffffffffu, v, o);
            v = is_max ? (w > v || w != w ? w : v) : v + w;
        }
        if (lane == 0)
            sh[0] = v;
    }
    __syncthreads();
    return sh[0];
}

#ifndef __CUDACC_RTC__
template <typename Out, typename In, int NIN, typename Op>
int launch(const yg_cuda_loop_args *a)
{
    const Op op(a);
    const cudaStream_t s = YG_CUDA_STREAM;
    const int W = vec_width<Out, In>::value;
    yg_cuda_loop_args b = *a;

    if (a->n <= 0)
        return 0;
    /* The vector path when every operand is aligned for its pack. */
    b.vec = W > 1 && a->linear && (uintptr_t)a->ptrs[0] % (sizeof(Out) * W) == 0;
    for (int k = 0; k < NIN; k++)
        b.vec = b.vec && (uintptr_t)a->ptrs[k + 1] % (sizeof(In) * W) == 0;
    int64_t blocks = ((b.vec ? (a->n + W - 1) / W : a->n) + YG_CUDA_BLOCK - 1) / YG_CUDA_BLOCK;
    if (blocks > YG_CUDA_MAX_BLOCKS)
        blocks = YG_CUDA_MAX_BLOCKS;
    if (a->linear && a->index32)
        loop<Out, In, NIN, Op, true, int><<<(unsigned)blocks, YG_CUDA_BLOCK, 0, s>>>(b, op);
    else if (a->linear)
        loop<Out, In, NIN, Op, true, int64_t><<<(unsigned)blocks, YG_CUDA_BLOCK, 0, s>>>(b, op);
    else if (a->index32)
        loop<Out, In, NIN, Op, false, int><<<(unsigned)blocks, YG_CUDA_BLOCK, 0, s>>>(b, op);
    else
        loop<Out, In, NIN, Op, false, int64_t><<<(unsigned)blocks, YG_CUDA_BLOCK, 0, s>>>(b, op);
    return (int)cudaGetLastError();
}
#endif

} /* namespace yg_cuda */

#ifdef __CUDACC_RTC__
#define YG_CUDA_LOOP(fn, Out, In, NIN, Op)                                              \
    template __global__ void yg_cuda::loop<Out, In, NIN, Op, true, int>(                 \
        const yg_cuda_loop_args, const Op);                                              \
    template __global__ void yg_cuda::loop<Out, In, NIN, Op, true, int64_t>(             \
        const yg_cuda_loop_args, const Op);                                              \
    template __global__ void yg_cuda::loop<Out, In, NIN, Op, false, int>(                \
        const yg_cuda_loop_args, const Op);                                              \
    template __global__ void yg_cuda::loop<Out, In, NIN, Op, false, int64_t>(            \
        const yg_cuda_loop_args, const Op);
#else
#define YG_CUDA_LOOP(fn, Out, In, NIN, Op)                                              \
    static int fn(const yg_cuda_loop_args *a)                                            \
    {                                                                                    \
        return yg_cuda::launch<Out, In, NIN, Op>(a);                                     \
    }
#endif

#endif /* YAGRAD_CUDA_POINTWISE_CUH */
