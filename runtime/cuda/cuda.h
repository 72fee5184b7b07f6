/*
 * cuda/cuda.h - what the CUDA backend's files share (device.c: devices,
 * the per-device caching allocator and kernel launches; copy.cu: strided
 * copies; cuda_stub.c: the same entry points in a build without CUDA).  Not public API; yagrad/cuda.h is.
 */
#ifndef YAGRAD_CUDA_CUDA_H
#define YAGRAD_CUDA_CUDA_H

#include "cuda/launch.h"
#include "yagrad/cuda.h"
#include "yagrad/tensor.h"

#include <stddef.h>

/* The most devices the backend uses (more are ignored). */
#define YG_CUDA_MAX_DEVICES 64

/* *out = nbytes of memory on device index from its caching allocator, for
 * the calling thread's current stream.  Errors name op: YG_ERR_DEVICE
 * when no device is usable or index is out of range, YG_ERR_OUT_OF_MEMORY
 * "<op>: out of CUDA memory allocating N bytes on cuda:I (allocated A,
 * reserved R bytes)" after the cache was given back and the allocation
 * retried.  *out is NULL on failure. */
yg_status yg__cuda_alloc(const char *op, int index, size_t nbytes, void **out);

/* Returns memory from yg__cuda_alloc.  NULL-safe.  Cannot fail. */
void yg__cuda_free(int index, void *ptr);

/* Copies nbytes from src to dst, each host memory (index -1) or memory
 * from yg__cuda_alloc on device index; synchronous: the copy is complete
 * when it returns.  Errors name op: YG_ERR_DEVICE with the CUDA runtime's
 * reason. */
yg_status yg__cuda_memcpy(
    const char *op, void *dst, int dst_index, const void *src, int src_index, size_t nbytes);

/* YG_OK when index names a usable device, else YG_ERR_DEVICE naming op. */
yg_status yg__cuda_check_index(const char *op, int index);

/* Runs launcher fn over a's loop on device index (made current for the
 * launch, then restored); the kernel runs asynchronously on a->stream.
 * Errors name op: YG_ERR_DEVICE "<op>: launching a kernel on cuda:I:
 * <the CUDA runtime's reason>". */
yg_status yg__cuda_launch(const char *op, int index, yg_cuda_launch_fn fn,
                          const yg_cuda_loop_args *a);

/* Copies src's elements, converted to dst's dtype by core/convert.c's
 * rules, into dst: same sizes, dst contiguous, both on device index.
 * A kernel of cuda/copy.cu on the iterator's geometry. */
yg_status yg__cuda_copy(const char *op, yg_tensor *dst, const yg_tensor *src);

#endif /* YAGRAD_CUDA_CUDA_H */
