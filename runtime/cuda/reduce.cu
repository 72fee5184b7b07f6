/*
 * reduce.cu - sums of rows on the GPU: yg__cuda_sum_rows (cuda/cuda.h),
 * behind sum and mean (cpu/reduce.c), which first lay the input out as
 * contiguous rows (the kept dims, then the reduced ones).
 *
 * Each block sums one stretch of one row: its threads stride through the
 * stretch (consecutive threads, consecutive elements: coalesced) and the
 * block adds their partial sums in shared memory.  A few long rows (a
 * full sum) are cut into up to 1024 stretches each, whose partial sums a
 * second launch adds, so the whole GPU works on them.  Floating inputs
 * accumulate in double and integers and bool in int64, as on the CPU;
 * the result is rounded once, times scale for a mean.
 */
#include "cuda/grid.cuh"
#include "cuda/launch.h"

#include <cuda_runtime.h>

namespace {

const int kThreads = 256;

/* dst[b] = sum of stretch b % chunks of row b / chunks (times scale when
 * mean), for every b < rows * chunks. */
template <typename In, typename Acc, typename Out>
__global__ void __launch_bounds__(kThreads)
    sum_rows(const In *src, Out *dst, long long rows, long long cols, long long chunks,
             bool mean, double scale)
{
    __shared__ Acc part[kThreads];
    const long long per = (cols + chunks - 1) / chunks;

    for (long long b = blockIdx.x; b < rows * chunks; b += gridDim.x) {
        const long long row = b / chunks, begin = (b % chunks) * per;
        const long long end = begin + per < cols ? begin + per : cols;
        const In *p = src + row * cols;
        Acc acc = 0;
        for (long long j = begin + threadIdx.x; j < end; j += kThreads)
            acc += (Acc)p[j];
        part[threadIdx.x] = acc;
        __syncthreads();
        for (int s = kThreads / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s)
                part[threadIdx.x] += part[threadIdx.x + s];
            __syncthreads();
        }
        if (threadIdx.x == 0)
            dst[b] = mean ? (Out)((double)part[0] * scale) : (Out)part[0];
        __syncthreads(); /* part is reused by the next row */
    }
}

long long grid_for(long long blocks)
{
    return yg_cuda_grid(blocks);
}

template <typename In, typename Acc, typename Out>
int run(const void *src, void *dst, long long rows, long long cols, bool mean, double scale,
        void *scratch, long long chunks, cudaStream_t s)
{
    if (chunks <= 1) {
        sum_rows<In, Acc, Out><<<(unsigned)grid_for(rows), kThreads, 0, s>>>(
            (const In *)src, (Out *)dst, rows, cols, 1, mean, scale);
        return (int)cudaGetLastError();
    }
    sum_rows<In, Acc, Acc><<<(unsigned)grid_for(rows * chunks), kThreads, 0, s>>>(
        (const In *)src, (Acc *)scratch, rows, cols, chunks, false, 1.0);
    sum_rows<Acc, Acc, Out><<<(unsigned)grid_for(rows), kThreads, 0, s>>>(
        (const Acc *)scratch, (Out *)dst, rows, chunks, 1, mean, scale);
    return (int)cudaGetLastError();
}

} /* namespace */

/* dtype: the input's yg_dtype (float32 0, float64 1, int64 2, bool 3,
 * int32 4); the output is float32/float64 for those, int64 otherwise.
 * scratch: rows * chunks accumulators (8 bytes each) when chunks > 1.
 * Returns the launches' cudaError_t; 1 (cudaErrorInvalidValue) for a
 * dtype without a sum. */
extern "C" int yg__cuda_sum_rows_launch(int dtype, const void *src, void *dst, long long rows,
                                        long long cols, int mean, double scale, void *scratch,
                                        long long chunks)
{
    const cudaStream_t s = YG_CUDA_STREAM;
    switch (dtype) {
    case 0:
        return run<float, double, float>(src, dst, rows, cols, mean, scale, scratch, chunks, s);
    case 1:
        return run<double, double, double>(src, dst, rows, cols, mean, scale, scratch, chunks,
                                           s);
    case 2:
        return run<long long, long long, long long>(src, dst, rows, cols, mean, scale, scratch,
                                                    chunks, s);
    case 3:
        return run<unsigned char, long long, long long>(src, dst, rows, cols, mean, scale,
                                                        scratch, chunks, s);
    case 4:
        return run<int, long long, long long>(src, dst, rows, cols, mean, scale, scratch, chunks,
                                              s);
    default:
        return (int)cudaErrorInvalidValue;
    }
}
