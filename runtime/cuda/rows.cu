/*
 * rows.cu - row reductions (yg__cuda_rows_launch) and scans
 * (yg__cuda_scan_launch) on the GPU for the
 * reductions of cpu/reduce_extrema.c and cpu/reduce_stats.c, over the
 * contiguous [outer, inner] rows of cpu_int.h's yg_rows (float64, int64
 * or bool working copies, made on the device).  One block per row.
 *
 * Extrema keep the CPU's rules: NaN wins (the first NaN's index), ties
 * give the first index; each thread scans its stride of the row keeping
 * (value, index), and the block merges pairs with the same rule, so the
 * result is the CPU's exactly.  all/any are and/or of bytes.  var/std,
 * norm and logsumexp accumulate in double in the CPU's passes (two for
 * var; max then sum of exp for logsumexp); their sums are added in
 * another order than the CPU's loop, so they agree to rounding.
 */
#include "cuda/pointwise.cuh"

namespace {

const int kThreads = 256;

/* cpu/cpu_int.h's kinds (yg_rows_kind). */
enum { AMAX, AMIN, ARGMAX, ARGMIN, MAX_DIM, MIN_DIM, ALL, ANY, VAR, STD, NORM, LOGSUMEXP, PROD };

/* Whether (v, i) beats (w, j) for a maximum (is_max) or minimum. */
template <typename T> __device__ bool beats(T v, long long i, T w, long long j, bool is_max)
{
    const bool vn = v != v, wn = w != w;
    if (vn || wn)
        return vn && (!wn || i < j);
    if (v == w)
        return i < j;
    return is_max ? v > w : v < w;
}

template <typename T>
__device__ void extremum(const T *x, long long inner, bool is_max, T *best, long long *at)
{
    __shared__ T sv[kThreads];
    __shared__ long long si[kThreads];
    T b = x[0];
    long long a = 0;
    for (long long i = threadIdx.x; i < inner; i += kThreads)
        if (beats<T>(x[i], i, b, a, is_max)) {
            b = x[i];
            a = i;
        }
    sv[threadIdx.x] = b;
    si[threadIdx.x] = a;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s && beats<T>(sv[threadIdx.x + s], si[threadIdx.x + s], sv[threadIdx.x],
                                        si[threadIdx.x], is_max)) {
            sv[threadIdx.x] = sv[threadIdx.x + s];
            si[threadIdx.x] = si[threadIdx.x + s];
        }
        __syncthreads();
    }
    *best = sv[0];
    *at = si[0];
    __syncthreads();
}

/* The floating statistics of one row of doubles. */
__device__ double statistic(const double *x, long long n, int kind, double param, double *sh)
{
    double acc = 0;
    if (kind == VAR || kind == STD) {
        for (long long i = threadIdx.x; i < n; i += kThreads)
            acc += x[i];
        const double mean = yg_cuda::block_reduce(acc, sh, false) / (double)n;
        acc = 0;
        for (long long i = threadIdx.x; i < n; i += kThreads)
            acc += (x[i] - mean) * (x[i] - mean);
        const double ss = yg_cuda::block_reduce(acc, sh, false), denom = (double)n - param;
        const double v = ss / (denom > 0 ? denom : 0);
        return kind == STD ? sqrt(v) : v;
    }
    if (kind == LOGSUMEXP) {
        double mx = -INFINITY;
        for (long long i = threadIdx.x; i < n; i += kThreads)
            mx = x[i] != x[i] || x[i] > mx ? x[i] : mx;
        mx = yg_cuda::block_reduce(mx, sh, true);
        if (mx != mx || isinf(mx))
            return mx;
        for (long long i = threadIdx.x; i < n; i += kThreads)
            acc += exp(x[i] - mx);
        return mx + log(yg_cuda::block_reduce(acc, sh, false));
    }
    /* NORM */
    const double p = param;
    if (isinf(p)) {
        /* max (or min) of |x|, NaN winning: the max reduction propagates
         * NaN; the minimum is the negated maximum of -|x|. */
        acc = p > 0 ? 0 : -INFINITY;
        for (long long i = threadIdx.x; i < n; i += kThreads) {
            const double a = p > 0 ? fabs(x[i]) : -fabs(x[i]);
            acc = a != a || a > acc ? a : acc;
        }
        acc = yg_cuda::block_reduce(acc, sh, true);
        return p > 0 ? acc : -acc;
    }
    for (long long i = threadIdx.x; i < n; i += kThreads) {
        const double a = fabs(x[i]);
        acc += p == 0 ? (double)(x[i] != 0) : p == 1 ? a : p == 2 ? a * a : pow(a, p);
    }
    acc = yg_cuda::block_reduce(acc, sh, false);
    return p == 0 || p == 1 ? acc : p == 2 ? sqrt(acc) : pow(acc, 1 / p);
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    rows(const T *data, long long outer, long long inner, int kind, double param, T *values,
         long long *indices)
{
    __shared__ double sh[32];
    for (long long r = blockIdx.x; r < outer; r += gridDim.x) {
        const T *x = data + r * inner;
        if (kind == PROD) {
            /* One thread, the CPU's order: the product is exact to it
             * (integers wrap, as unsigned). */
            if (threadIdx.x == 0) {
                if (sizeof(T) == 8 && (T)0.5 == 0) {
                    unsigned long long p = 1;
                    for (long long i = 0; i < inner; i++)
                        p *= (unsigned long long)x[i];
                    values[r] = (T)p;
                } else {
                    T p = 1;
                    for (long long i = 0; i < inner; i++)
                        p *= x[i];
                    values[r] = p;
                }
            }
        } else if (kind == ALL || kind == ANY) {
            int acc = kind == ALL;
            for (long long i = threadIdx.x; i < inner; i += kThreads)
                acc = kind == ALL ? acc && x[i] != 0 : acc || x[i] != 0;
            acc = __syncthreads_count(acc);
            if (threadIdx.x == 0)
                values[r] = (T)(kind == ALL ? acc == (int)blockDim.x : acc > 0);
        } else if (kind >= VAR && kind <= LOGSUMEXP) {
            const double v = statistic((const double *)x, inner, kind, param, sh);
            if (threadIdx.x == 0)
                values[r] = (T)v;
        } else {
            T best;
            long long at;
            extremum<T>(x, inner, kind == AMAX || kind == ARGMAX || kind == MAX_DIM, &best, &at);
            if (threadIdx.x == 0) {
                if (values != NULL)
                    values[r] = best;
                if (indices != NULL)
                    indices[r] = at;
            }
        }
    }
}

/* cumsum (prod false) or cumprod of each row in place, in the CPU's
 * order: one thread per row. */
template <typename T>
__global__ void __launch_bounds__(kThreads) scan(T *data, long long outer, long long inner,
                                                 bool prod)
{
    for (long long r = (long long)blockIdx.x * kThreads + threadIdx.x; r < outer;
         r += (long long)gridDim.x * kThreads) {
        T *x = data + r * inner;
        for (long long i = 1; i < inner; i++)
            x[i] = prod ? x[i - 1] * x[i] : x[i - 1] + x[i];
    }
}

} /* namespace */

/* Scans each of outer contiguous rows of inner elements of data (work 0
 * float64, 1 int64: wrapping, as unsigned) in place, on the current
 * device.  Returns the launch's cudaError_t. */
extern "C" int yg__cuda_scan_launch(int work, int prod, void *data, long long outer,
                                    long long inner)
{
    if (outer == 0 || inner < 2)
        return 0;
    const long long b = (outer + kThreads - 1) / kThreads;
    const unsigned g = (unsigned)(b < 65535 ? b : 65535);
    if (work == 0)
        scan<double><<<g, kThreads, 0, YG_CUDA_STREAM>>>((double *)data, outer, inner, prod);
    else
        scan<unsigned long long><<<g, kThreads, 0, YG_CUDA_STREAM>>>((unsigned long long *)data, outer, inner, prod);
    return (int)cudaGetLastError();
}

/* Reduces each of outer contiguous rows of inner elements (inner > 0 but
 * for ALL and ANY) of data (work: 0 float64, 1 int64, 2 bool bytes) by
 * kind into values[outer] (of data's type; NULL for ARGMAX/ARGMIN) and
 * indices[outer] (int64; NULL unless ARGMAX/ARGMIN/MAX_DIM/MIN_DIM), on
 * the current device.  param: var's correction, norm's p.  Returns the
 * launch's cudaError_t. */
extern "C" int yg__cuda_rows_launch(int work, int kind, const void *data, long long outer,
                                    long long inner, double param, void *values,
                                    long long *indices)
{
    const unsigned g = (unsigned)(outer < 65535 ? (outer > 0 ? outer : 1) : 65535);
    if (outer == 0)
        return 0;
    if (work == 0)
        rows<double><<<g, kThreads, 0, YG_CUDA_STREAM>>>((const double *)data, outer, inner, kind, param,
                                      (double *)values, indices);
    else if (work == 1)
        rows<long long><<<g, kThreads, 0, YG_CUDA_STREAM>>>((const long long *)data, outer, inner, kind, param,
                                         (long long *)values, indices);
    else
        rows<unsigned char><<<g, kThreads, 0, YG_CUDA_STREAM>>>((const unsigned char *)data, outer, inner, kind,
                                             param, (unsigned char *)values, indices);
    return (int)cudaGetLastError();
}
