/*
 * softmax.cu - softmax and log_softmax, forward and backward, over the
 * middle dim of a contiguous [outer, n, inner] block (cpu/nn.c's layout,
 * so any dim is reached without a transpose): yg__cuda_softmax_launch.
 *
 * inner == 1 (the last dim): one block per row, its threads striding
 * along the row (coalesced), three passes each ending in a block
 * reduction: max, sum of exp(x - max) in double, then the outputs.
 * inner > 1: one thread per (outer, inner) column, walking n with stride
 * inner, so a warp reads consecutive columns.  Backward, from the output
 * y and the incoming gradient g:
 *   softmax:     g_in = y (g - sum(g y))
 *   log_softmax: g_in = g - exp(y) sum(g)
 * The sums accumulate in double, as on the CPU for long rows.
 */
#include "cuda/grid.cuh"
#include "cuda/pointwise.cuh"

namespace {

const int kThreads = 256;

template <typename T>
__global__ void __launch_bounds__(kThreads)
    rows_forward(T *dst, const T *src, long long rows, long long n, bool is_log)
{
    __shared__ double sh[32];
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *x = src + r * n;
        T *y = dst + r * n;
        double m = -INFINITY;
        for (long long j = threadIdx.x; j < n; j += kThreads)
            m = (double)x[j] > m || x[j] != x[j] ? (double)x[j] : m;
        m = yg_cuda::block_reduce(m, sh, true);
        double sum = 0;
        for (long long j = threadIdx.x; j < n; j += kThreads)
            sum += exp((double)x[j] - m);
        sum = yg_cuda::block_reduce(sum, sh, false);
        const double lse = m + log(sum), inv = 1 / sum;
        for (long long j = threadIdx.x; j < n; j += kThreads)
            y[j] = is_log ? (T)((double)x[j] - lse) : (T)(exp((double)x[j] - m) * inv);
    }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    rows_backward(T *dst, const T *grad, const T *out, long long rows, long long n, bool is_log)
{
    __shared__ double sh[32];
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *g = grad + r * n, *y = out + r * n;
        T *gi = dst + r * n;
        double sum = 0;
        for (long long j = threadIdx.x; j < n; j += kThreads)
            sum += is_log ? (double)g[j] : (double)g[j] * (double)y[j];
        sum = yg_cuda::block_reduce(sum, sh, false);
        for (long long j = threadIdx.x; j < n; j += kThreads)
            gi[j] = is_log ? (T)((double)g[j] - exp((double)y[j]) * sum)
                           : (T)((double)y[j] * ((double)g[j] - sum));
    }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    cols_forward(T *dst, const T *src, long long outer, long long n, long long inner, bool is_log)
{
    const long long cols = outer * inner;
    for (long long c = (long long)blockIdx.x * kThreads + threadIdx.x; c < cols;
         c += (long long)gridDim.x * kThreads) {
        const long long base = (c / inner) * n * inner + c % inner;
        double m = -INFINITY, sum = 0;
        for (long long j = 0; j < n; j++) {
            const double v = (double)src[base + j * inner];
            m = v > m || v != v ? v : m;
        }
        for (long long j = 0; j < n; j++)
            sum += exp((double)src[base + j * inner] - m);
        const double lse = m + log(sum), inv = 1 / sum;
        for (long long j = 0; j < n; j++) {
            const double v = (double)src[base + j * inner];
            dst[base + j * inner] = is_log ? (T)(v - lse) : (T)(exp(v - m) * inv);
        }
    }
}

template <typename T>
__global__ void __launch_bounds__(kThreads) cols_backward(
    T *dst, const T *grad, const T *out, long long outer, long long n, long long inner,
    bool is_log)
{
    const long long cols = outer * inner;
    for (long long c = (long long)blockIdx.x * kThreads + threadIdx.x; c < cols;
         c += (long long)gridDim.x * kThreads) {
        const long long base = (c / inner) * n * inner + c % inner;
        double sum = 0;
        for (long long j = 0; j < n; j++) {
            const long long k = base + j * inner;
            sum += is_log ? (double)grad[k] : (double)grad[k] * (double)out[k];
        }
        for (long long j = 0; j < n; j++) {
            const long long k = base + j * inner;
            const double g = grad[k], y = out[k];
            dst[k] = is_log ? (T)(g - exp(y) * sum) : (T)(y * (g - sum));
        }
    }
}

unsigned grid_for(long long blocks)
{
    return yg_cuda_grid(blocks);
}

template <typename T>
int run(void *dst, const void *a, const void *b, long long outer, long long n, long long inner,
        bool is_log, bool backward)
{
    if (inner == 1 && !backward)
        rows_forward<T><<<grid_for(outer), kThreads, 0, YG_CUDA_STREAM>>>((T *)dst, (const T *)a, outer, n, is_log);
    else if (inner == 1)
        rows_backward<T><<<grid_for(outer), kThreads, 0, YG_CUDA_STREAM>>>((T *)dst, (const T *)a, (const T *)b,
                                                         outer, n, is_log);
    else if (!backward)
        cols_forward<T><<<grid_for((outer * inner + kThreads - 1) / kThreads), kThreads, 0, YG_CUDA_STREAM>>>(
            (T *)dst, (const T *)a, outer, n, inner, is_log);
    else
        cols_backward<T><<<grid_for((outer * inner + kThreads - 1) / kThreads), kThreads, 0, YG_CUDA_STREAM>>>(
            (T *)dst, (const T *)a, (const T *)b, outer, n, inner, is_log);
    return (int)cudaGetLastError();
}

} /* namespace */

/* dst = (log_)softmax of a, or its backward from a = grad_output and
 * b = output, over [outer, n, inner] contiguous float32 (f64 0) or
 * float64 (f64 1) blocks on the current device; every extent > 0.
 * Returns the launch's cudaError_t. */
extern "C" int yg__cuda_softmax_launch(int f64, void *dst, const void *a, const void *b,
                                       long long outer, long long n, long long inner,
                                       int is_log, int backward)
{
    return f64 ? run<double>(dst, a, b, outer, n, inner, is_log, backward)
               : run<float>(dst, a, b, outer, n, inner, is_log, backward);
}
