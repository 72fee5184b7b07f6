/*
 * cuda/grid.cuh - the x-dimension of a launch's grid for the handwritten
 * kernels, every one of which walks its work in a grid-stride loop (a
 * block or a thread takes items blockIdx.x, blockIdx.x + gridDim.x, ...
 * with 64-bit counters), so any grid of at least one block is correct and
 * a larger one only spreads the work wider.  Not public API.
 *
 * The cap is CUDA's own limit for gridDim.x, 2^31 - 1 (compute
 * capability 3.0 and later; 65535 is the limit of y and z): capping at
 * 65535, as these kernels did, left a one-block-per-row kernel over a
 * million rows with 16 rows per block in sequence, and a thread-per-item
 * kernel over 2^31 items with 128 per thread.  Every starting index is
 * computed as (long long)blockIdx.x * kThreads + threadIdx.x, so 2^31 - 1
 * blocks of 1024 threads do not overflow.  The generated pointwise loops
 * keep their own cap (cuda/launch.h's YG_CUDA_MAX_BLOCKS), which their
 * 32-bit index check counts on.
 */
#ifndef YAGRAD_CUDA_GRID_CUH
#define YAGRAD_CUDA_GRID_CUH

/* blocks (any value; under 1 gives 1) as a valid gridDim.x. */
static inline __host__ unsigned yg_cuda_grid(long long blocks)
{
    return blocks < 1 ? 1u : blocks > 2147483647LL ? 2147483647u : (unsigned)blocks;
}

#endif /* YAGRAD_CUDA_GRID_CUH */
