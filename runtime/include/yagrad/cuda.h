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

/* Gives back everything the CUDA backend holds that no tensor owns, after
 * waiting for every device it used: the caching allocator's unused
 * segments, the cuBLAS and cuDNN handles and workspaces, and the pinned
 * staging buffers.  Each is made again on its next use.  With reset,
 * every device is then reset (cudaDeviceReset: its context, with every
 * allocation, stream and event made in it, is destroyed), which leak
 * checkers such as compute-sanitizer need at exit to report what is
 * still allocated: after a reset nothing made before may be used
 * (tensors, streams, events, fused kernels, process groups), so call it
 * with reset only at exit.  No other thread may be using a device
 * meanwhile.  Loads nothing: without the CUDA module it does nothing.
 * Cannot fail. */
void yg_cuda_release_all(bool reset);

/* ---- streams and events ----
 *
 * Every kernel, copy, cuBLAS and cuDNN call the backend makes for a
 * device is queued on the calling thread's current stream for that
 * device: the legacy default stream until yg_cuda_set_stream chose
 * another, so a program that never touches streams runs everything in
 * order on one queue per device.  Work on one stream runs in the order it
 * was queued; work on two streams may overlap and is ordered only by
 * events (yg_cuda_event_record, then yg_cuda_stream_wait_event) or by
 * waiting on the host.  Streams made here are blocking streams: the
 * legacy default stream waits for them and they for it.
 *
 * A copy between host and device (yg_tensor_to_device, reading a value)
 * waits for the current stream, so the host sees every earlier result.
 *
 * Memory: a tensor's device memory belongs to the stream that was current
 * when it was allocated, and once the tensor is released it is reused by
 * later work on that stream only.  A tensor read by another stream must
 * be kept alive until that stream's work is done (record an event on it
 * and wait for the event first), as in PyTorch without record_stream.
 * Once a stream is destroyed, its memory belongs to the default stream.
 *
 * NULL stands for the default stream wherever a stream is taken. */

typedef struct yg_cuda_stream yg_cuda_stream;
typedef struct yg_cuda_event yg_cuda_event;

/* A new stream on device index into *out.  Errors: YG_ERR_DEVICE (no
 * device, index out of range, the runtime's reason); YG_ERR_INVALID_ARGUMENT
 * for out == NULL. */
yg_status yg_cuda_stream_create(int index, yg_cuda_stream **out);

/* Waits for the stream's work and destroys it.  On every thread where it
 * was current the default stream becomes current again (no thread keeps a
 * dangling stream; one that is queueing work on it at that very moment
 * races with the destruction, as with any use after free).  The device
 * memory cached for it and the memory of tensors allocated on it are
 * filed under the default stream, where they return to use.  NULL-safe. */
void yg_cuda_stream_destroy(yg_cuda_stream *stream);

/* Makes stream (NULL: the default) the calling thread's current stream on
 * device index.  Errors: YG_ERR_DEVICE as yg_cuda_stream_create, or
 * "cuda_set_stream: the stream is on cuda:1, not cuda:0". */
yg_status yg_cuda_set_stream(int index, yg_cuda_stream *stream);

/* The calling thread's current stream on device index (NULL: the default,
 * also for an index out of range).  Cannot fail. */
yg_cuda_stream *yg_cuda_get_stream(int index);

/* The device a stream is on.  Cannot fail (stream not NULL). */
int yg_cuda_stream_device(const yg_cuda_stream *stream);

/* Waits until everything queued on stream (NULL: the default stream of
 * device index; index is ignored otherwise) has run.  Errors as
 * yg_cuda_synchronize. */
yg_status yg_cuda_stream_synchronize(int index, yg_cuda_stream *stream);

/* A new event on device index, able to time (yg_cuda_event_elapsed_ms).
 * Errors as yg_cuda_stream_create. */
yg_status yg_cuda_event_create(int index, yg_cuda_event **out);

/* Destroys an event (pending work that records it is unaffected).
 * NULL-safe. */
void yg_cuda_event_destroy(yg_cuda_event *event);

/* Records event at the current end of stream (NULL: the calling thread's
 * current stream on the event's device), which must be on the event's
 * device.  Errors: YG_ERR_DEVICE naming both devices, or the runtime's
 * reason; YG_ERR_INVALID_ARGUMENT for event == NULL. */
yg_status yg_cuda_event_record(yg_cuda_event *event, yg_cuda_stream *stream);

/* Makes work queued on stream from now on (NULL: the calling thread's
 * current stream on the event's device) wait until event has happened;
 * the host does not wait.  Errors as yg_cuda_event_record. */
yg_status yg_cuda_stream_wait_event(yg_cuda_stream *stream, yg_cuda_event *event);

/* Waits on the host until event has happened (at once for an event never
 * recorded).  Errors as yg_cuda_event_record. */
yg_status yg_cuda_event_synchronize(yg_cuda_event *event);

/* *done: whether event has happened.  Errors as yg_cuda_event_record. */
yg_status yg_cuda_event_query(yg_cuda_event *event, bool *done);

/* *ms: the milliseconds between two recorded, completed events.  Errors
 * as yg_cuda_event_record (the runtime's reason when one has not
 * completed). */
yg_status yg_cuda_event_elapsed_ms(yg_cuda_event *start, yg_cuda_event *end, double *ms);

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
