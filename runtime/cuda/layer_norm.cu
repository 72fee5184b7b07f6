/*
 * layer_norm.cu - native_layer_norm and its fused gradient on the GPU
 * (yg__cuda_layer_norm_launch), for cpu/norm.c, over contiguous
 * [rows, m] inputs (the normalized dims flattened).
 *
 * Forward: one block per row; the mean and the sum of squared deviations
 * in double (block reductions), rstd = 1 / sqrt(var + eps), then
 * y = (x - mean) rstd w + b.  Backward, per row (one block): with
 * sg = sum w g and sgx = sum w g (x - mean),
 *   grad_input = w g rstd - rstd^3 sgx / m (x - mean) - rstd sg / m;
 * grad_weight[j] = sum over rows of g (x - mean) rstd and grad_bias[j] =
 * sum of g: one thread per column adding the rows in order
 * (deterministic).  w and b may be NULL (ones, zeros).
 */
#include "cuda/grid.cuh"
#include "cuda/pointwise.cuh"

namespace {

const int kThreads = 256;

unsigned grid_for(long long blocks)
{
    return yg_cuda_grid(blocks);
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    forward(T *y, T *mean, T *rstd, const T *x, const T *w, const T *b, long long rows,
            long long m, double eps)
{
    __shared__ double sh[32];
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *xr = x + r * m;
        double s = 0;
        for (long long j = threadIdx.x; j < m; j += kThreads)
            s += (double)xr[j];
        const double mu = m > 0 ? yg_cuda::block_reduce(s, sh, false) / (double)m : 0;
        double q = 0;
        for (long long j = threadIdx.x; j < m; j += kThreads) {
            const double d = (double)xr[j] - mu;
            q += d * d;
        }
        q = yg_cuda::block_reduce(q, sh, false);
        const double rs = m > 0 ? 1 / sqrt(q / (double)m + eps) : 1 / sqrt(eps);
        const T tmu = (T)mu, trs = (T)rs;
        for (long long j = threadIdx.x; j < m; j += kThreads) {
            T v = (xr[j] - tmu) * trs;
            if (w != NULL)
                v = v * w[j];
            if (b != NULL)
                v = v + b[j];
            y[r * m + j] = v;
        }
        if (threadIdx.x == 0) {
            mean[r] = tmu;
            rstd[r] = trs;
        }
    }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    input_grad(T *gi, const T *g, const T *x, const T *mean, const T *rstd, const T *w,
               long long rows, long long m)
{
    __shared__ double sh[32];
    const double inv_m = m > 0 ? 1 / (double)m : 0;
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const T *gr = g + r * m, *xr = x + r * m;
        const double mu = mean[r], rs = rstd[r];
        double sg = 0, sgx = 0;
        for (long long j = threadIdx.x; j < m; j += kThreads) {
            const double wg = (double)gr[j] * (w != NULL ? (double)w[j] : 1.0);
            sg += wg;
            sgx += wg * ((double)xr[j] - mu);
        }
        sg = yg_cuda::block_reduce(sg, sh, false);
        sgx = yg_cuda::block_reduce(sgx, sh, false);
        const double a = -rs * rs * rs * sgx * inv_m, c = -rs * sg * inv_m;
        for (long long j = threadIdx.x; j < m; j += kThreads) {
            const double wg = (double)gr[j] * (w != NULL ? (double)w[j] : 1.0);
            gi[r * m + j] = (T)(wg * rs + a * ((double)xr[j] - mu) + c);
        }
    }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    param_grads(T *gw, T *gb, const T *g, const T *x, const T *mean, const T *rstd,
                long long rows, long long m)
{
    for (long long j = (long long)blockIdx.x * kThreads + threadIdx.x; j < m;
         j += (long long)gridDim.x * kThreads) {
        T sw = 0, sb = 0;
        for (long long r = 0; r < rows; r++) {
            const T gv = g[r * m + j];
            sw += gv * ((x[r * m + j] - mean[r]) * rstd[r]);
            sb += gv;
        }
        if (gw != NULL)
            gw[j] = sw;
        if (gb != NULL)
            gb[j] = sb;
    }
}

template <typename T>
int run(int is_backward, void *p0, void *p1, void *p2, const void *g, const void *x,
        const void *mean, const void *rstd, const void *w, const void *b, long long rows,
        long long m, double eps)
{
    if (!is_backward) {
        forward<T><<<grid_for(rows), kThreads, 0, YG_CUDA_STREAM>>>((T *)p0, (T *)p1, (T *)p2, (const T *)x,
                                                 (const T *)w, (const T *)b, rows, m, eps);
        return (int)cudaGetLastError();
    }
    if (p0 != NULL)
        input_grad<T><<<grid_for(rows), kThreads, 0, YG_CUDA_STREAM>>>((T *)p0, (const T *)g, (const T *)x,
                                                    (const T *)mean, (const T *)rstd,
                                                    (const T *)w, rows, m);
    if (p1 != NULL || p2 != NULL)
        param_grads<T><<<grid_for((m + kThreads - 1) / kThreads), kThreads, 0, YG_CUDA_STREAM>>>(
            (T *)p1, (T *)p2, (const T *)g, (const T *)x, (const T *)mean, (const T *)rstd, rows,
            m);
    return (int)cudaGetLastError();
}

} /* namespace */

/* Forward (is_backward 0): p0 = y [rows, m], p1 = mean [rows], p2 = rstd
 * [rows] from x, w, b (nullable).  Backward: p0 = grad_input (or NULL),
 * p1 = grad_weight [m], p2 = grad_bias [m] (each nullable) from g, x,
 * mean, rstd, w.  float32 (f64 0) or float64, contiguous, on the current
 * device; rows * m > 0.  Returns the launches' cudaError_t. */
extern "C" int yg__cuda_layer_norm_launch(int f64, int is_backward, void *p0, void *p1, void *p2,
                                          const void *g, const void *x, const void *mean,
                                          const void *rstd, const void *w, const void *b,
                                          long long rows, long long m, double eps)
{
    return f64 ? run<double>(is_backward, p0, p1, p2, g, x, mean, rstd, w, b, rows, m, eps)
               : run<float>(is_backward, p0, p1, p2, g, x, mean, rstd, w, b, rows, m, eps);
}
