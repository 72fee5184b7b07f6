/*
 * yagrad/cuda.h - CUDA devices: whether there are any, what they are, the
 * caching allocator that holds their memory, and the switch for TF32.
 *
 * The CUDA backend is optional at build time (CMake's YG_WITH_CUDA, on when
 * nvcc is found) and at run time (a machine without an NVIDIA driver or
 * GPU).  Either way these functions work: yg_cuda_is_available() is false
 * and yg_cuda_check() says why, "built without CUDA" or "no CUDA device
 * (...)" with the CUDA runtime's reason.
 *
 * Device memory comes from a caching allocator per device (never one
 * cudaMalloc per tensor): requests are rounded to 512 bytes; small ones
 * (<= 1 MiB) are cut from 2 MiB segments, large ones from segments of
 * their size rounded to 2 MiB; free blocks are split and merged, reused
 * on the stream they were allocated on, and kept until
 * yg_cuda_empty_cache() or until a cudaMalloc fails, when the unused
 * segments are given back and the allocation retried once.
 *
 * Thread safety: every function may be called from any thread.
 */
#ifndef YAGRAD_CUDA_H
#define YAGRAD_CUDA_H

#include <stdbool.h>
#include <stdint.h>

#include "yagrad/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether the library has the CUDA backend and at least one device is
 * usable.  Cannot fail. */
bool yg_cuda_is_available(void);

/* The number of usable CUDA devices; 0 when yg_cuda_is_available() is
 * false.  Cannot fail. */
int yg_cuda_device_count(void);

/* YG_OK when a device is usable, else YG_ERR_DEVICE with the reason as
 * the message: "cuda: built without CUDA" or "cuda: no CUDA device
 * (<the CUDA runtime's error>)". */
yg_status yg_cuda_check(void);

typedef struct yg_cuda_device_properties {
    char name[256];
    int major, minor;              /* compute capability */
    int multiprocessor_count;
    int64_t total_memory;          /* bytes */
    int64_t shared_memory_per_block; /* bytes */
} yg_cuda_device_properties;

/* What device index is.  Errors: YG_ERR_DEVICE when no device is usable
 * (yg_cuda_check's message) or index is not in [0, count): "cuda: device
 * index 3 out of range (2 devices)"; YG_ERR_INVALID_ARGUMENT for out ==
 * NULL. */
yg_status yg_cuda_get_device_properties(int index, yg_cuda_device_properties *out);

/* Waits until everything queued on device index has run.  Errors as
 * yg_cuda_get_device_properties, plus YG_ERR_DEVICE with the CUDA
 * runtime's message when a kernel failed. */
yg_status yg_cuda_synchronize(int index);

/* The caching allocator's counters for device index (bytes, calls). */
typedef struct yg_cuda_memory_stats {
    int64_t allocated_bytes;      /* in blocks handed out */
    int64_t reserved_bytes;       /* held from cudaMalloc */
    int64_t peak_allocated_bytes;
    int64_t peak_reserved_bytes;
    int64_t num_allocs, num_frees;
    int64_t num_cuda_mallocs, num_cuda_frees;
    int64_t num_ooms; /* allocations that failed after giving the cache back */
} yg_cuda_memory_stats;

/* Errors as yg_cuda_get_device_properties.  A device not used yet has
 * all zeros. */
yg_status yg_cuda_memory_stats_get(int index, yg_cuda_memory_stats *out);

/* Gives every cached segment with no block in use back to the driver, on
 * every device.  Cannot fail. */
void yg_cuda_empty_cache(void);

/* Whether float32 matrix products (mm, bmm and what is built on them) may
 * use TF32 tensor cores: faster, with their inputs rounded to 10 mantissa
 * bits.  Off by default, so float32 products on a GPU are as exact as on
 * the CPU.  Process-wide; a build without CUDA ignores it (and reports
 * false).  Cannot fail. */
void yg_cuda_set_allow_tf32(bool allow);
bool yg_cuda_get_allow_tf32(void);

#ifdef __cplusplus
}
#endif

#endif /* YAGRAD_CUDA_H */
