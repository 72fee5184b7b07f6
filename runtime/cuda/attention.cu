/*
 * attention.cu - flash_attention and its fused gradient on the GPU
 * (yg__cuda_flash_attention_launch), for cuda/attention.c: a plain
 * correct path, one thread per query row (forward, grad_query) or per
 * key (grad_key, grad_value), walking the keys or queries it meets with
 * the same online softmax and the same formulas as the CPU's tiles
 * (cpu/attention.c): no [L, S] matrix, memory linear in L and S, and no
 * atomics, so results are deterministic.  It uses none of the GPU's
 * matrix units; scaled_dot_product_attention keeps its ops (cuBLAS) on
 * the GPU, and a tiled kernel in shared memory is the next step.
 * Operands are contiguous: q [batch, L, E], k [batch, S, E], v [batch, S,
 * Ev], o and go [batch, L, Ev], lse [batch, L].
 */
#include "cuda/grid.cuh"
#include "cuda/launch.h"

#include <cuda_runtime.h>

namespace {

const int kThreads = 128;

template <typename T> __device__ T dot(const T *a, const T *b, long long n)
{
    T s = 0;
    for (long long c = 0; c < n; c++)
        s += a[c] * b[c];
    return s;
}

/* The keys query i sees: [0, end). */
__device__ long long key_end(long long i, long long S, int causal)
{
    return causal ? (i + 1 < S ? i + 1 : S) : S;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    forward(T *o, T *lse, const T *q, const T *k, const T *v, long long batch, long long L,
            long long S, long long E, long long Ev, T scale, int causal)
{
    for (long long r = (long long)blockIdx.x * kThreads + threadIdx.x; r < batch * L;
         r += (long long)gridDim.x * kThreads) {
        const long long b = r / L, i = r % L, end = key_end(i, S, causal);
        const T *qr = q + r * E, *kb = k + b * S * E, *vb = v + b * S * Ev;
        T *orow = o + r * Ev;
        T m = -INFINITY, l = 0;
        for (long long c = 0; c < Ev; c++)
            orow[c] = 0;
        for (long long j = 0; j < end; j++) {
            const T s = dot<T>(qr, kb + j * E, E) * scale;
            if (s > m) {
                const T alpha = exp(m - s); /* 0 while m is -inf */
                l *= alpha;
                for (long long c = 0; c < Ev; c++)
                    orow[c] *= alpha;
                m = s;
            }
            const T p = exp(s - m);
            l += p;
            for (long long c = 0; c < Ev; c++)
                orow[c] += p * vb[j * Ev + c];
        }
        const T inv = l > 0 ? 1 / l : 0;
        for (long long c = 0; c < Ev; c++)
            orow[c] *= inv;
        lse[r] = m + log(l);
    }
}

/* grad_query, one thread per query row */
template <typename T>
__global__ void __launch_bounds__(kThreads)
    backward_query(T *gq, const T *go, const T *q, const T *k, const T *v, const T *o,
                   const T *lse, long long batch, long long L, long long S, long long E,
                   long long Ev, T scale, int causal)
{
    for (long long r = (long long)blockIdx.x * kThreads + threadIdx.x; r < batch * L;
         r += (long long)gridDim.x * kThreads) {
        const long long b = r / L, i = r % L, end = key_end(i, S, causal);
        const T *qr = q + r * E, *gor = go + r * Ev, *kb = k + b * S * E, *vb = v + b * S * Ev;
        const T d = dot<T>(gor, o + r * Ev, Ev), z = lse[r];
        T *g = gq + r * E;
        for (long long c = 0; c < E; c++)
            g[c] = 0;
        for (long long j = 0; j < end; j++) {
            const T p = exp(dot<T>(qr, kb + j * E, E) * scale - z);
            const T ds = scale * p * (dot<T>(gor, vb + j * Ev, Ev) - d);
            for (long long c = 0; c < E; c++)
                g[c] += ds * kb[j * E + c];
        }
    }
}

/* grad_key and grad_value, one thread per key */
template <typename T>
__global__ void __launch_bounds__(kThreads)
    backward_key(T *gk, T *gv, const T *go, const T *q, const T *k, const T *v, const T *o,
                 const T *lse, long long batch, long long L, long long S, long long E,
                 long long Ev, T scale, int causal)
{
    for (long long r = (long long)blockIdx.x * kThreads + threadIdx.x; r < batch * S;
         r += (long long)gridDim.x * kThreads) {
        const long long b = r / S, j = r % S;
        const T *kr = k + r * E, *vr = v + r * Ev;
        T *dk = gk + r * E, *dv = gv + r * Ev;
        for (long long c = 0; c < E; c++)
            dk[c] = 0;
        for (long long c = 0; c < Ev; c++)
            dv[c] = 0;
        /* causal: key j is seen by the queries i >= j */
        for (long long i = causal ? j : 0; i < L; i++) {
            const long long row = b * L + i;
            const T *qr = q + row * E, *gor = go + row * Ev;
            const T p = exp(dot<T>(qr, kr, E) * scale - lse[row]);
            const T d = dot<T>(gor, o + row * Ev, Ev);
            const T ds = scale * p * (dot<T>(gor, vr, Ev) - d);
            for (long long c = 0; c < Ev; c++)
                dv[c] += p * gor[c];
            for (long long c = 0; c < E; c++)
                dk[c] += ds * qr[c];
        }
    }
}

} /* namespace */

/* flash_attention (is_backward 0: p0 = output, p1 = logsumexp; go, o,
 * lse NULL) or its gradient (p0 = grad_query, p1 = grad_key, p2 =
 * grad_value) in float32 (f64 0) or float64 on the current device; batch
 * > 0 (L or S may be 0).  Returns the first launch's failing cudaError_t,
 * else 0. */
extern "C" int yg__cuda_flash_attention_launch(int f64, int is_backward, void *p0, void *p1,
                                               void *p2, const void *go, const void *q,
                                               const void *k, const void *v, const void *o,
                                               const void *lse, long long batch, long long L,
                                               long long S, long long E, long long Ev,
                                               double scale, int causal)
{
    const unsigned gl = yg_cuda_grid((batch * L + kThreads - 1) / kThreads);
    const unsigned gs = yg_cuda_grid((batch * S + kThreads - 1) / kThreads);
#define FLASH(T)                                                                                 \
    do {                                                                                         \
        if (!is_backward) {                                                                      \
            forward<T><<<gl, kThreads, 0, YG_CUDA_STREAM>>>((T *)p0, (T *)p1, (const T *)q,      \
                                                            (const T *)k, (const T *)v, batch,   \
                                                            L, S, E, Ev, (T)scale, causal);      \
            break;                                                                               \
        }                                                                                        \
        backward_query<T><<<gl, kThreads, 0, YG_CUDA_STREAM>>>(                                  \
            (T *)p0, (const T *)go, (const T *)q, (const T *)k, (const T *)v, (const T *)o,      \
            (const T *)lse, batch, L, S, E, Ev, (T)scale, causal);                               \
        int err = (int)cudaGetLastError();                                                       \
        if (err != 0 || batch * S == 0)                                                          \
            return err;                                                                          \
        backward_key<T><<<gs, kThreads, 0, YG_CUDA_STREAM>>>(                                    \
            (T *)p1, (T *)p2, (const T *)go, (const T *)q, (const T *)k, (const T *)v,           \
            (const T *)o, (const T *)lse, batch, L, S, E, Ev, (T)scale, causal);                 \
    } while (0)
    if (f64)
        FLASH(double);
    else
        FLASH(float);
#undef FLASH
    return (int)cudaGetLastError();
}
