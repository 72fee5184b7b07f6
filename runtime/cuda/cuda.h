/*
 * cuda/cuda.h - what the CUDA backend's files share (device.c: devices and
 * the per-device caching allocator; cuda_stub.c: the same entry points in
 * a build without CUDA).  Not public API; yagrad/cuda.h is.
 */
#ifndef YAGRAD_CUDA_CUDA_H
#define YAGRAD_CUDA_CUDA_H

#include "yagrad/cuda.h"

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

#endif /* YAGRAD_CUDA_CUDA_H */
