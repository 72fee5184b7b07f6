/*
 * cuda/launch.h - how host C code hands an elementwise loop to the CUDA
 * kernels (cuda/pointwise.cuh): the operands' geometry and the launcher
 * type.  Read by C (cpu/pointwise.c, cuda/device.c), by nvcc (the
 * kernels gen writes into generated/cuda/, cuda/copy.cu) and by NVRTC
 * (the tests compile the generated kernels with it), so it uses no header
 * NVRTC lacks.  Not public API.
 */
#ifndef YAGRAD_CUDA_LAUNCH_H
#define YAGRAD_CUDA_LAUNCH_H

#ifdef __CUDACC_RTC__
typedef long long int64_t;
typedef int int32_t;
#else
#include <stdint.h>
#endif

/* The most operands of one loop: the output and up to 4 inputs (as
 * cpu/pointwise.c). */
#define YG_CUDA_MAX_OPERANDS 5
/* yagrad/tensor.h's YG_MAX_DIMS (cpu/pointwise.c checks they agree). */
#define YG_CUDA_MAX_DIMS 8
/* Operand scalars of one op (Scalar/float arguments, YAML order). */
#define YG_CUDA_MAX_SCALARS 4

/* Threads per block, and the most blocks of one launch (the grid-stride
 * loop covers the rest); the host's 32-bit index check counts on these.
 * The generated loops keep this cap, unlike the handwritten kernels
 * (cuda/grid.cuh): 2^24 threads already fill any GPU's resident threads
 * many times over, and the cap lets a loop of up to 2^31 - 2^24
 * elements index in 32 bits. */
#define YG_CUDA_BLOCK      256
#define YG_CUDA_MAX_BLOCKS 65536

/* One elementwise loop over n elements.  The dims are the output's after
 * compression: dims of size 1 dropped, and neighbours merged where every
 * operand steps through them as through one dim; sizes[0] is the
 * innermost.  strides are in elements (0 where an input is broadcast).
 * linear: every operand is dense in the output's order (one dim, stride
 * 1), so element i is at offset i of each; index32: every offset and n
 * fit int32, so the kernel may index in 32 bits. */
typedef struct yg_cuda_loop_args {
    int64_t n;
    int32_t ndim;
    int32_t nops;
    int32_t linear;
    int32_t index32;
    int32_t vec; /* set by the launcher: linear, and every operand aligned
                    for 16-byte loads and stores (cuda/pointwise.cuh) */
    int64_t sizes[YG_CUDA_MAX_DIMS];
    int64_t strides[YG_CUDA_MAX_OPERANDS][YG_CUDA_MAX_DIMS];
    char *ptrs[YG_CUDA_MAX_OPERANDS]; /* the output, then the inputs */
    double scalars[YG_CUDA_MAX_SCALARS];
} yg_cuda_loop_args;

/* Launches one loop on the current device.  Returns the launch's
 * cudaError_t as an int (0: launched); the kernel runs asynchronously on
 * the calling thread's current stream (YG_CUDA_STREAM). */
typedef int (*yg_cuda_launch_fn)(const yg_cuda_loop_args *args);

/* An op's launchers by compute dtype, in yg_dtype order (float32,
 * float64, int64, bool, int32, float16, bfloat16); NULL: unsupported. */
#define YG_CUDA_DTYPE_COUNT 7
typedef struct yg_cuda_loop_table {
    yg_cuda_launch_fn fn[YG_CUDA_DTYPE_COUNT];
} yg_cuda_loop_table;

#ifndef __CUDACC_RTC__
#ifdef __cplusplus
extern "C" {
#endif
/* The calling thread's current stream on the current device, as a
 * cudaStream_t (NULL: the legacy default stream): what yg_cuda_set_stream
 * chose (cuda/device.c).  Every kernel, copy, cuBLAS and cuDNN call of the
 * backend is queued on it, and allocations are made for it.  Cannot
 * fail. */
void *yg__cuda_current_stream(void);
#ifdef __cplusplus
}
#endif
/* The stream argument of every kernel launch: <<<grid, block, 0,
 * YG_CUDA_STREAM>>>. */
#define YG_CUDA_STREAM ((cudaStream_t)yg__cuda_current_stream())
#endif

#endif /* YAGRAD_CUDA_LAUNCH_H */
