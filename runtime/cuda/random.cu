/*
 * random.cu - the random ops' draws on the GPU (yg__cuda_draw_launch), for
 * cpu/random.c, which validates and reserves the generator's counters on
 * the host.  Element i takes counter base + i of the same Philox4x32-10
 * (core/rng.h, compiled here as device code) and the same transform as
 * the CPU's draw_range, so a GPU tensor holds the CPU's values for the
 * same seed and offset: bit for bit for rand, randint and bernoulli;
 * randn goes through CUDA's double log and cos, which may differ from
 * the host libm's in the last bit of a float64 result.
 */
#include "core/rng.h"

#include "cuda/grid.cuh"
#include "cuda/launch.h"

#include <cuda_runtime.h>

namespace {

const int kThreads = 256;

/* cpu/random.c's draw kinds. */
enum { UNIFORM, NORMAL, INT, BERNOULLI };

struct draw_args {
    yg__philox_range r;
    int kind;
    int f64;      /* the result's dtype: float64, else float32 (int64 for INT when i64) */
    int i64;      /* INT into int64 */
    long long low;
    unsigned long long range;
    double p;
    const double *probs; /* BERNOULLI: one per element (contiguous float64), or NULL */
    void *out;
    long long n;
};

__device__ void store(const draw_args &a, long long i, double v)
{
    if (a.f64)
        ((double *)a.out)[i] = v;
    else
        ((float *)a.out)[i] = (float)v;
}

__global__ void __launch_bounds__(kThreads) draw(const draw_args a)
{
    for (long long i = (long long)blockIdx.x * kThreads + threadIdx.x; i < a.n;
         i += (long long)gridDim.x * kThreads) {
        uint32_t w[4];
        yg__philox_words(&a.r, (uint64_t)i, w);
        if (a.kind == UNIFORM) {
            if (a.f64)
                ((double *)a.out)[i] = yg__uniform_f64(w[0], w[1]);
            else
                ((float *)a.out)[i] = yg__uniform_f32(w[0]);
        } else if (a.kind == NORMAL) {
            const double u1 = 1.0 - yg__uniform_f64(w[0], w[1]);
            const double u2 = yg__uniform_f64(w[2], w[3]);
            store(a, i, sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
        } else if (a.kind == INT) {
            const unsigned long long x = ((unsigned long long)w[0] << 32 | w[1]) % a.range;
            const long long v = (long long)((unsigned long long)a.low + x);
            if (a.i64)
                ((long long *)a.out)[i] = v;
            else
                store(a, i, (double)v);
        } else {
            const double p = a.probs != NULL ? a.probs[i] : a.p;
            store(a, i, yg__uniform_f64(w[0], w[1]) < p ? 1.0 : 0.0);
        }
    }
}

} /* namespace */

/* Fills n elements at out on the current device; see draw_args.  Returns
 * the launch's cudaError_t. */
extern "C" int yg__cuda_draw_launch(const yg__philox_range *r, int kind, int f64, int i64,
                                    long long low, unsigned long long range, double p,
                                    const double *probs, void *out, long long n)
{
    if (n <= 0)
        return 0;
    const draw_args a = {*r, kind, f64, i64, low, range, p, probs, out, n};
    long long blocks = (n + kThreads - 1) / kThreads;
    draw<<<yg_cuda_grid(blocks), kThreads, 0, YG_CUDA_STREAM>>>(a);
    return (int)cudaGetLastError();
}
