/*
 * nll.cu - nll_loss and its backward on the GPU (yg__cuda_nll_launch),
 * for cpu/nn.c, which has checked every target against the class count
 * (on a host copy) before these run: sample i adds -weight[t] self[i, t]
 * with t = target[i]; ignore_index adds nothing and, for a mean, is not
 * counted in the total weight it divides by.
 *
 * Reduction "none" and the backward's scatter take one thread per sample
 * over as many blocks as that needs.  The reduced forms (and the mean
 * backward's total weight) accumulate in double: a batch of up to
 * kPerBlock samples in one block, as before; a larger one in
 * yg__cuda_nll_partials(batch) blocks, each writing its partial sums to a
 * scratch buffer the host gives, then one block adding the partials.
 * Both steps add in an order fixed by the batch size alone, so a result
 * repeats to the bit from run to run (no atomics).  The backward writes
 * into a zeroed [N, C] (or [C]) gradient.
 */
#include "cuda/grid.cuh"
#include "cuda/pointwise.cuh"

extern "C" long long yg__cuda_nll_partials_of(long long batch);

namespace {

const int kThreads = 256;
/* Samples one block reduces before a second block pays: 8 a thread. */
const long long kPerBlock = 8LL * kThreads;
/* The most partial sums: enough blocks for any GPU's SMs several times
 * over. */
const long long kMaxParts = 1024;

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

/* Reduction "none": out[i] for every sample. */
template <typename T> __global__ void __launch_bounds__(kThreads) forward_each(const nll_args a)
{
    const T *self = (const T *)a.self;
    T *out = (T *)a.out;
    for (long long i = (long long)blockIdx.x * kThreads + threadIdx.x; i < a.batch;
         i += (long long)gridDim.x * kThreads) {
        const long long t = a.target[i * a.ts];
        out[i] = t == a.ignore ? (T)0
                               : (T)(-weight_at<T>(a, t) * (double)self[i * a.s0 + t * a.s1]);
    }
}

/* The block's share of the sum and of the total weight (with_total:
 * the forward's sum too): its threads take samples blockIdx.x * kThreads
 * + threadIdx.x, a grid's width apart.  One block writes the result
 * (the forward's out[0], or part[0] = the total weight); more write
 * part[2 b], part[2 b + 1]. */
template <typename T>
__global__ void __launch_bounds__(kThreads) reduce_part(const nll_args a, bool with_total,
                                                         double *part)
{
    __shared__ double sh[32];
    const T *self = (const T *)a.self;
    double total = 0, total_weight = 0;
    for (long long i = (long long)blockIdx.x * kThreads + threadIdx.x; i < a.batch;
         i += (long long)gridDim.x * kThreads) {
        const long long t = a.target[i * a.ts];
        if (t == a.ignore)
            continue;
        const double w = weight_at<T>(a, t);
        if (with_total)
            total -= w * (double)self[i * a.s0 + t * a.s1];
        total_weight += w;
    }
    if (with_total)
        total = yg_cuda::block_reduce(total, sh, false);
    total_weight = yg_cuda::block_reduce(total_weight, sh, false);
    if (threadIdx.x != 0)
        return;
    if (gridDim.x > 1) {
        part[2 * blockIdx.x] = total;
        part[2 * blockIdx.x + 1] = total_weight;
    } else if (with_total) {
        ((T *)a.out)[0] = (T)(a.reduction == 1 ? total / total_weight : total);
    } else {
        part[0] = total_weight;
    }
}

/* One block: the n partial pairs of reduce_part added, in the order of
 * their blocks' threads; the forward's out[0] (with_total), or part[0]
 * = the total weight (read by scatter after this). */
template <typename T>
__global__ void __launch_bounds__(kThreads) reduce_finish(const nll_args a, bool with_total,
                                                           double *part, int n)
{
    __shared__ double sh[32];
    double total = 0, total_weight = 0;
    for (int b = threadIdx.x; b < n; b += kThreads) {
        total += part[2 * b];
        total_weight += part[2 * b + 1];
    }
    total = yg_cuda::block_reduce(total, sh, false);
    total_weight = yg_cuda::block_reduce(total_weight, sh, false);
    __syncthreads(); /* every thread has read part before thread 0 writes it */
    if (threadIdx.x != 0)
        return;
    if (with_total)
        ((T *)a.out)[0] = (T)(a.reduction == 1 ? total / total_weight : total);
    else
        part[0] = total_weight;
}

/* The backward's scatter: out[i, t] = -weight[t] grad (grad_output[i]
 * for "none", else its one value), divided by *total_weight for a mean. */
template <typename T>
__global__ void __launch_bounds__(kThreads) scatter(const nll_args a, const double *total_weight)
{
    const T *grad = (const T *)a.self;
    T *out = (T *)a.out;
    for (long long i = (long long)blockIdx.x * kThreads + threadIdx.x; i < a.batch;
         i += (long long)gridDim.x * kThreads) {
        const long long t = a.target[i * a.ts];
        if (t == a.ignore)
            continue;
        const double g = (double)grad[a.reduction == 0 ? i * a.s0 : 0];
        const double v = -weight_at<T>(a, t) * g;
        out[i * a.classes + t] = (T)(a.reduction == 1 ? v / *total_weight : v);
    }
}

template <typename T> int run(const nll_args &a, bool is_backward, double *scratch)
{
    const cudaStream_t s = YG_CUDA_STREAM;
    const long long parts = yg__cuda_nll_partials_of(a.batch);
    const unsigned each = yg_cuda_grid((a.batch + kThreads - 1) / kThreads);
    if (!is_backward && a.reduction == 0) {
        forward_each<T><<<each, kThreads, 0, s>>>(a);
    } else if (!is_backward) {
        reduce_part<T><<<(unsigned)parts, kThreads, 0, s>>>(a, true, scratch);
        if (parts > 1)
            reduce_finish<T><<<1, kThreads, 0, s>>>(a, true, scratch, (int)parts);
    } else if (a.reduction == 1) {
        reduce_part<T><<<(unsigned)parts, kThreads, 0, s>>>(a, false, scratch);
        if (parts > 1)
            reduce_finish<T><<<1, kThreads, 0, s>>>(a, false, scratch, (int)parts);
        scatter<T><<<each, kThreads, 0, s>>>(a, scratch);
    } else {
        scatter<T><<<each, kThreads, 0, s>>>(a, NULL);
    }
    return (int)cudaGetLastError();
}

} /* namespace */

/* The blocks of a reduced form over batch samples: 1 up to kPerBlock
 * samples, then one per kPerBlock more, at most kMaxParts. */
extern "C" long long yg__cuda_nll_partials_of(long long batch)
{
    long long parts = (batch + kPerBlock - 1) / kPerBlock;
    return parts < 1 ? 1 : parts > kMaxParts ? kMaxParts : parts;
}

/* The doubles of scratch yg__cuda_nll_launch needs for this call: 2 per
 * partial of a reduced form (the forward's sum or any mean backward's
 * total weight), 0 for reduction "none" and a backward sum. */
extern "C" long long yg__cuda_nll_scratch(int is_backward, int reduction, long long batch)
{
    if (reduction == 0 || (is_backward && reduction != 1))
        return 0;
    if (!is_backward && yg__cuda_nll_partials_of(batch) == 1)
        return 0; /* one block writes out[0] */
    return 2 * yg__cuda_nll_partials_of(batch);
}

/* The forward (backward 0) or backward of nll_loss in float32 (f64 0)
 * or float64 on the current device; see nll_args; scratch: the doubles
 * yg__cuda_nll_scratch asks for (NULL for 0).  Returns the launch's
 * cudaError_t. */
extern "C" int yg__cuda_nll_launch(int f64, int is_backward, const void *self, long long s0,
                                   long long s1, const long long *target, long long ts,
                                   const void *weight, long long ws, long long batch,
                                   long long classes, long long ignore, int reduction, void *out,
                                   double *scratch)
{
    const nll_args a = {self, s0, s1, target, ts, weight, ws, batch, classes, ignore, reduction,
                        out};
    return f64 ? run<double>(a, is_backward != 0, scratch)
               : run<float>(a, is_backward != 0, scratch);
}
