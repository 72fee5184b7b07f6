/*
 * nll.cu - nll_loss and its backward on the GPU (yg__cuda_nll_launch),
 * for cpu/nn.c, which has checked every target against the class count
 * (on a host copy) before these run: sample i adds -weight[t] self[i, t]
 * with t = target[i]; ignore_index adds nothing and, for a mean, is not
 * counted in the total weight it divides by.
 *
 * The reductions are one block (a batch is thousands of rows at most),
 * accumulating in double; reduction "none" and the backward's scatter
 * take one thread per sample.  The backward writes into a zeroed
 * [N, C] (or [C]) gradient.
 */
#include "cuda/grid.cuh"
#include "cuda/pointwise.cuh"

namespace {

const int kThreads = 256;

struct nll_args {
    const void *self; /* forward: self; backward: grad_output */
    long long s0, s1; /* self's strides (forward), grad_output's stride (backward: s0) */
    const long long *target;
    long long ts;
    const void *weight;
    long long ws;
    long long batch, classes, ignore;
    int reduction; /* 0 none, 1 mean, 2 sum (yagrad/enums.h) */
    void *out;
};

template <typename T>
__device__ double weight_at(const nll_args &a, long long t)
{
    return a.weight == NULL ? 1.0 : (double)((const T *)a.weight)[t * a.ws];
}

template <typename T> __global__ void __launch_bounds__(kThreads) forward(const nll_args a)
{
    __shared__ double sh[32];
    const T *self = (const T *)a.self;
    T *out = (T *)a.out;
    if (a.reduction == 0) {
        for (long long i = (long long)blockIdx.x * kThreads + threadIdx.x; i < a.batch;
             i += (long long)gridDim.x * kThreads) {
            const long long t = a.target[i * a.ts];
            out[i] = t == a.ignore ? (T)0
                                   : (T)(-weight_at<T>(a, t) * (double)self[i * a.s0 + t * a.s1]);
        }
        return;
    }
    double total = 0, total_weight = 0;
    for (long long i = threadIdx.x; i < a.batch; i += kThreads) {
        const long long t = a.target[i * a.ts];
        if (t == a.ignore)
            continue;
        const double w = weight_at<T>(a, t);
        total -= w * (double)self[i * a.s0 + t * a.s1];
        total_weight += w;
    }
    total = yg_cuda::block_reduce(total, sh, false);
    total_weight = yg_cuda::block_reduce(total_weight, sh, false);
    if (threadIdx.x == 0)
        out[0] = (T)(a.reduction == 1 ? total / total_weight : total);
}

template <typename T> __global__ void __launch_bounds__(kThreads) backward(const nll_args a)
{
    __shared__ double sh[32];
    const T *grad = (const T *)a.self;
    T *out = (T *)a.out;
    double total_weight = 0;
    for (long long i = threadIdx.x; i < a.batch; i += kThreads) {
        const long long t = a.target[i * a.ts];
        if (t != a.ignore)
            total_weight += weight_at<T>(a, t);
    }
    total_weight = yg_cuda::block_reduce(total_weight, sh, false);
    for (long long i = threadIdx.x; i < a.batch; i += kThreads) {
        const long long t = a.target[i * a.ts];
        if (t == a.ignore)
            continue;
        const double g = (double)grad[a.reduction == 0 ? i * a.s0 : 0];
        const double v = -weight_at<T>(a, t) * g;
        out[i * a.classes + t] = (T)(a.reduction == 1 ? v / total_weight : v);
    }
}

} /* namespace */

/* The forward (backward 0) or backward of nll_loss in float32 (f64 0)
 * or float64 on the current device; see nll_args.  Returns the launch's
 * cudaError_t. */
extern "C" int yg__cuda_nll_launch(int f64, int is_backward, const void *self, long long s0,
                                   long long s1, const long long *target, long long ts,
                                   const void *weight, long long ws, long long batch,
                                   long long classes, long long ignore, int reduction, void *out)
{
    const nll_args a = {self, s0, s1, target, ts, weight, ws, batch, classes, ignore, reduction,
                        out};
    unsigned blocks = 1;
    if (!is_backward && reduction == 0) {
        long long b = (batch + kThreads - 1) / kThreads;
        blocks = yg_cuda_grid(b);
    }
    if (is_backward)
        f64 ? backward<double><<<1, kThreads, 0, YG_CUDA_STREAM>>>(a) : backward<float><<<1, kThreads, 0, YG_CUDA_STREAM>>>(a);
    else
        f64 ? forward<double><<<blocks, kThreads, 0, YG_CUDA_STREAM>>>(a) : forward<float><<<blocks, kThreads, 0, YG_CUDA_STREAM>>>(a);
    return (int)cudaGetLastError();
}
