/*
 * rnn.cu - lstm_cell_gates and its fused gradient on the GPU
 * (yg__cuda_lstm_gates_launch), for cpu/rnn.c: one thread per (row, j)
 * element of the [rows, h] state, the same expressions as the CPU's row
 * loops (cpu/vec/rnn_loops.c) over contiguous [rows, 4h] gate
 * projections i, f, g, o.
 */
#include "cuda/grid.cuh"
#include "cuda/launch.h"

#include <cuda_runtime.h>

namespace {

const int kThreads = 256;

template <typename T> __device__ T sigmoid(T x)
{
    return 1 / (1 + exp(-x));
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    forward(T *hy, T *cy, const T *ig, const T *hg, const T *cx, long long rows, long long h)
{
    for (long long e = (long long)blockIdx.x * kThreads + threadIdx.x; e < rows * h;
         e += (long long)gridDim.x * kThreads) {
        const long long r = e / h, j = e % h, b = r * 4 * h;
        const T i = sigmoid<T>(ig[b + j] + hg[b + j]);
        const T f = sigmoid<T>(ig[b + h + j] + hg[b + h + j]);
        const T g = tanh(ig[b + 2 * h + j] + hg[b + 2 * h + j]);
        const T o = sigmoid<T>(ig[b + 3 * h + j] + hg[b + 3 * h + j]);
        const T c = f * cx[e] + i * g;
        cy[e] = c;
        hy[e] = o * tanh(c);
    }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    backward(T *gg, T *gcx, const T *ghy, const T *gcy, const T *ig, const T *hg, const T *cx,
             long long rows, long long h)
{
    for (long long e = (long long)blockIdx.x * kThreads + threadIdx.x; e < rows * h;
         e += (long long)gridDim.x * kThreads) {
        const long long r = e / h, j = e % h, b = r * 4 * h;
        const T i = sigmoid<T>(ig[b + j] + hg[b + j]);
        const T f = sigmoid<T>(ig[b + h + j] + hg[b + h + j]);
        const T g = tanh(ig[b + 2 * h + j] + hg[b + 2 * h + j]);
        const T o = sigmoid<T>(ig[b + 3 * h + j] + hg[b + 3 * h + j]);
        const T tc = tanh(f * cx[e] + i * g);
        const T dc = gcy[e] + ghy[e] * o * (1 - tc * tc);
        gg[b + j] = dc * g * (i * (1 - i));
        gg[b + h + j] = dc * cx[e] * (f * (1 - f));
        gg[b + 2 * h + j] = dc * i * (1 - g * g);
        gg[b + 3 * h + j] = ghy[e] * tc * (o * (1 - o));
        gcx[e] = dc * f;
    }
}

} /* namespace */

/* The forward (out0 = hy, out1 = cy; ghy, gcy NULL) or the backward
 * (out0 = grad of the gates [rows, 4h], out1 = grad of cx) of
 * lstm_cell_gates in float32 (f64 0) or float64 on the current device;
 * rows * h > 0.  Returns the launch's cudaError_t. */
extern "C" int yg__cuda_lstm_gates_launch(int f64, int is_backward, void *out0, void *out1,
                                          const void *ghy, const void *gcy, const void *ig,
                                          const void *hg, const void *cx, long long rows,
                                          long long h)
{
    const long long blocks = (rows * h + kThreads - 1) / kThreads;
    const unsigned g = yg_cuda_grid(blocks);
#define LSTM(T)                                                                           \
    (is_backward ? backward<T><<<g, kThreads, 0, YG_CUDA_STREAM>>>((T *)out0, (T *)out1, (const T *)ghy,     \
                                                (const T *)gcy, (const T *)ig, (const T *)hg, \
                                                (const T *)cx, rows, h)                       \
                 : forward<T><<<g, kThreads, 0, YG_CUDA_STREAM>>>((T *)out0, (T *)out1, (const T *)ig,       \
                                               (const T *)hg, (const T *)cx, rows, h))
    if (f64)
        LSTM(double);
    else
        LSTM(float);
#undef LSTM
    return (int)cudaGetLastError();
}
