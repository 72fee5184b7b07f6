/*
 * rows.cu - row reductions (yg__cuda_rows_launch), scans
 * (yg__cuda_scan_launch) and the gradients of prod, norm, minmax and
 * cumprod (yg__cuda_rows_grad_launch) on the GPU for the kernels of
 * cuda/reduce.c (the CPU's: cpu/reduce_extrema.c, reduce_stats.c and
 * scan.c, whose rules these keep), over the
 * contiguous [outer, inner] rows of meta/rows.h's yg_rows (float64, int64
 * or bool working copies, made on the device).  One block per row for
 * the reductions and for long scans; one thread per row for the scans of
 * short rows (the CPU's order) and the gradients.
 *
 * Extrema keep the CPU's rules: NaN wins (the first NaN's index), ties
 * give the first index; each thread scans its stride of the row keeping
 * (value, index), and the block merges pairs with the same rule, so the
 * result is the CPU's exactly.  all/any are and/or of bytes.  var/std,
 * norm and logsumexp accumulate in double in the CPU's passes (two for
 * var; max then sum of exp for logsumexp); their sums are added in
 * another order than the CPU's loop, so they agree to rounding.
 */
#include "core/norm_grad.h"
#include "cuda/grid.cuh"
#include "cuda/pointwise.cuh"

namespace {

const int kThreads = 256;

/* cuda/rows.h's kinds (yg_rows_kind). */
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

/* a * b; for integers as unsigned (wrapping, as the CPU's). */
template <typename T> __device__ T mul_wrap(T a, T b)
{
    if ((T)0.5 == 0)
        return (T)((unsigned long long)a * (unsigned long long)b);
    return a * b;
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
            /* Each thread multiplies its stride of the row, then the
             * block multiplies the partial products in a tree.  Integers
             * wrap, as unsigned: exact in any order; floating products
             * round in another order than the CPU's loop, so they agree
             * to rounding. */
            __shared__ T part[kThreads];
            T p = 1;
            for (long long i = threadIdx.x; i < inner; i += kThreads)
                p = mul_wrap<T>(p, x[i]);
            part[threadIdx.x] = p;
            __syncthreads();
            for (int s = kThreads / 2; s > 0; s >>= 1) {
                if (threadIdx.x < s)
                    part[threadIdx.x] = mul_wrap<T>(part[threadIdx.x], part[threadIdx.x + s]);
                __syncthreads();
            }
            if (threadIdx.x == 0)
                values[r] = part[0];
            __syncthreads(); /* part is free for the next row */
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
 * order: one thread per row (for many short rows). */
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

/* The same for long rows: one block per row.  Thread t scans its
 * contiguous chunk, the block scans the chunks' totals (thread 0, in
 * order), and each thread then combines its chunk with the total before
 * it.  Integers wrap, as unsigned: exact; floating sums and products
 * round in another order than the CPU's loop, so they agree to rounding. */
template <typename T>
__global__ void __launch_bounds__(kThreads) scan_long(T *data, long long outer, long long inner,
                                                      bool prod)
{
    __shared__ T total[kThreads];
    const long long chunk = (inner + kThreads - 1) / kThreads;
    for (long long r = blockIdx.x; r < outer; r += gridDim.x) {
        T *x = data + r * inner;
        const long long from = threadIdx.x * chunk;
        const long long to = from + chunk < inner ? from + chunk : inner;
        T acc = prod ? (T)1 : (T)0;
        for (long long i = from; i < to; i++) {
            acc = prod ? mul_wrap<T>(acc, x[i]) : (T)(acc + x[i]);
            x[i] = acc;
        }
        total[threadIdx.x] = acc;
        __syncthreads();
        if (threadIdx.x == 0) { /* exclusive prefix of the totals */
            T run = prod ? (T)1 : (T)0;
            for (int t = 0; t < kThreads; t++) {
                const T here = total[t];
                total[t] = run;
                run = prod ? mul_wrap<T>(run, here) : (T)(run + here);
            }
        }
        __syncthreads();
        const T before = total[threadIdx.x];
        if (threadIdx.x > 0)
            for (long long i = from; i < to; i++)
                x[i] = prod ? mul_wrap<T>(before, x[i]) : (T)(before + x[i]);
        __syncthreads(); /* total is free for the next row */
    }
}

/* Rows at least this long scan with a block each (scan_long). */
const long long kLongRow = 2048;

/* ---- the gradients of cpu/reduce_stats.c, reduce_extrema.c, scan.c ----
 * Each ports the CPU kernel's loop over one row (or line) as it is: the
 * one-thread kinds walk their rows in the CPU's order, so their products
 * and sums round as the CPU's; norm and minmax count per row with a
 * block (an integer count, exact) and then write each element alone.
 * Every product that meets a sum goes through __dmul_rn/__dadd_rn: nvcc
 * would contract it into an fma, which the CPU's baseline x86-64 build
 * never does. */

/* cuda/rows.h's kinds (yg_rows_grad_kind). */
enum { G_PROD, G_PROD_DOUBLE, G_NORM, G_MINMAX, G_CUMPROD, G_CUMPROD_JVP, G_CUMPROD_DOUBLE };

__device__ double mul(double a, double b)
{
    return __dmul_rn(a, b);
}

__device__ double add(double a, double b)
{
    return __dadd_rn(a, b);
}

/* prod_backward of one row: o[i] = g prefix_i suffix_i, the suffix
 * products kept in o first (the CPU keeps them in a row of scratch). */
__device__ void prod_row(const double *x, double g, double *o, long long n)
{
    double acc = 1;
    for (long long i = n - 1; i >= 0; i--) {
        o[i] = acc;
        acc *= x[i];
    }
    double prefix = 1;
    for (long long i = 0; i < n; i++) {
        o[i] = g * prefix * o[i];
        prefix *= x[i];
    }
}

/* prod_double_backward of one row (dual-number prefix and suffix
 * products): suffix in sf, its derivative in o until overwritten. */
__device__ void prod_double_row(const double *x, const double *gr, double go, double *o,
                                double *sf, long long n)
{
    double acc = 1, dacc = 0;
    for (long long i = n - 1; i >= 0; i--) {
        sf[i] = acc;
        o[i] = dacc;
        dacc = add(mul(dacc, x[i]), mul(acc, gr[i]));
        acc = mul(acc, x[i]);
    }
    double pre = 1, dpre = 0;
    for (long long i = 0; i < n; i++) {
        o[i] = go * add(mul(dpre, sf[i]), mul(pre, o[i]));
        dpre = add(mul(dpre, x[i]), mul(pre, gr[i]));
        pre = mul(pre, x[i]);
    }
}

/* cpu/scan.c's cumprod_line: the gradient of one line of n elements,
 * exact at zeros (z is the first zero, n without one). */
__device__ void cumprod_line(const double *x, const double *g, double *out, long long n)
{
    long long z = 0;
    while (z < n && x[z] != 0)
        z++;
    double r = 1, s = 0;
    for (long long j = 0; j < z; j++) {
        r = mul(r, x[j]);
        out[j] = mul(g[j], r);
    }
    for (long long k = z - 1; k >= 0; k--) {
        s = add(s, out[k]);
        out[k] = s / x[k];
    }
    if (z == n)
        return;
    double acc = 0, q = r;
    for (long long j = z; j < n; j++) {
        if (j > z)
            q = mul(q, x[j]);
        acc = add(acc, mul(g[j], q));
    }
    out[z] = acc;
    for (long long k = z + 1; k < n; k++)
        out[k] = 0;
}

/* cumprod_jvp of one line: the e part of cumprod(x + e g). */
__device__ void cumprod_jvp_line(const double *x, const double *g, double *o, long long n)
{
    double a = 1, da = 0;
    for (long long i = 0; i < n; i++) {
        da = add(mul(da, x[i]), mul(a, g[i]));
        a = mul(a, x[i]);
        o[i] = da;
    }
}

/* cumprod_double_backward of one line: a backward sweep (suffix sums s_m
 * into sf, their derivatives into o), then a forward one. */
__device__ void cumprod_double_line(const double *x, const double *g, const double *go,
                                    double *o, double *sf, long long n)
{
    double sm = 0, dsm = 0;
    for (long long m = n - 1; m >= 0; m--) {
        if (m + 1 < n) {
            dsm = add(mul(dsm, x[m + 1]), mul(sm, g[m + 1]));
            sm = mul(sm, x[m + 1]);
        }
        sm = add(sm, go[m]);
        sf[m] = sm;
        o[m] = dsm;
    }
    double a = 1, da = 0;
    for (long long m = 0; m < n; m++) {
        o[m] = add(mul(da, sf[m]), mul(a, o[m]));
        da = add(mul(da, x[m]), mul(a, g[m]));
        a = mul(a, x[m]);
    }
}

/* The one-thread kinds: a thread per row (line), in the CPU's order. */
__global__ void __launch_bounds__(kThreads)
    grad_lines(int kind, long long outer, long long inner, double *out, const double *x,
               const double *a, const double *b, double *scratch)
{
    for (long long r = (long long)blockIdx.x * kThreads + threadIdx.x; r < outer;
         r += (long long)gridDim.x * kThreads) {
        const long long at = r * inner;
        if (kind == G_PROD)
            prod_row(x + at, a[r], out + at, inner);
        else if (kind == G_PROD_DOUBLE)
            prod_double_row(x + at, a + at, b[r], out + at, scratch + at, inner);
        else if (kind == G_CUMPROD)
            cumprod_line(x + at, a + at, out + at, inner);
        else if (kind == G_CUMPROD_JVP)
            cumprod_jvp_line(x + at, a + at, out + at, inner);
        else
            cumprod_double_line(x + at, a + at, b + at, out + at, scratch + at, inner);
    }
}

/* norm_backward and minmax_backward: a block per row counts the elements
 * at the row's result (an exact integer sum), then each thread writes its
 * elements: g yg__norm_grad(x, n, p, count), or g / count where x is the
 * result (NaN matching NaN) and 0 elsewhere. */
__global__ void __launch_bounds__(kThreads)
    grad_rows(int kind, double p, long long outer, long long inner, double *out,
              const double *x, const double *g, const double *res)
{
    __shared__ long long part[kThreads];
    const bool minmax = kind == G_MINMAX, count_inf = minmax || isinf(p);
    for (long long r = blockIdx.x; r < outer; r += gridDim.x) {
        const double *xr = x + r * inner, rv = res[r], gv = g[r];
        double *o = out + r * inner;
        long long count = 0;
        if (count_inf) {
            /* uniform over the block: every thread reaches the barriers */
            long long c = 0;
            for (long long i = threadIdx.x; i < inner; i += kThreads)
                c += minmax ? xr[i] == rv || (isnan(xr[i]) && isnan(rv)) : fabs(xr[i]) == rv;
            part[threadIdx.x] = c;
            __syncthreads();
            for (int s = kThreads / 2; s > 0; s >>= 1) {
                if (threadIdx.x < s)
                    part[threadIdx.x] += part[threadIdx.x + s];
                __syncthreads();
            }
            count = part[0];
            __syncthreads(); /* part is free for the next row */
        }
        for (long long i = threadIdx.x; i < inner; i += kThreads) {
            if (minmax) {
                const bool hit = xr[i] == rv || (isnan(xr[i]) && isnan(rv));
                o[i] = hit ? gv / (double)count : 0;
            } else {
                o[i] = gv * yg__norm_grad(xr[i], rv, p, count);
            }
        }
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
    if (inner >= kLongRow) {
        const unsigned g = yg_cuda_grid(outer);
        if (work == 0)
            scan_long<double><<<g, kThreads, 0, YG_CUDA_STREAM>>>((double *)data, outer, inner, prod);
        else
            scan_long<unsigned long long><<<g, kThreads, 0, YG_CUDA_STREAM>>>(
                (unsigned long long *)data, outer, inner, prod);
        return (int)cudaGetLastError();
    }
    const long long b = (outer + kThreads - 1) / kThreads;
    const unsigned g = yg_cuda_grid(b);
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
    const unsigned g = yg_cuda_grid(outer);
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

/* The row gradient kind (meta/rows.h's yg_rows_grad_kind) of the
 * [outer, inner] float64 rows x into out, on the current device; a and b
 * as yg__cuda_rows_grad (cuda/cuda.h) says, scratch [outer, inner] for
 * the double-backward kinds.  Nothing when out has no element.  Returns
 * the launch's cudaError_t. */
extern "C" int yg__cuda_rows_grad_launch(int kind, double param, long long outer,
                                         long long inner, double *out, const double *x,
                                         const double *a, const double *b, double *scratch)
{
    if (outer == 0 || inner == 0)
        return 0;
    if (kind == G_NORM || kind == G_MINMAX) {
        const unsigned g = yg_cuda_grid(outer);
        grad_rows<<<g, kThreads, 0, YG_CUDA_STREAM>>>(kind, param, outer, inner, out, x, a, b);
    } else {
        const long long blocks = (outer + kThreads - 1) / kThreads;
        const unsigned g = yg_cuda_grid(blocks);
        grad_lines<<<g, kThreads, 0, YG_CUDA_STREAM>>>(kind, outer, inner, out, x, a, b,
                                                         scratch);
    }
    return (int)cudaGetLastError();
}
