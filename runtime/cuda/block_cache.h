/*
 * block_cache.h - the caching allocator of device memory, apart from the
 * device: it carves blocks out of segments that a backend provides
 * (cudaMalloc for the CUDA backend, malloc in the tests, so that the
 * bookkeeping is tested on machines without a GPU).  Not public API.
 *
 * Why: cudaMalloc and cudaFree synchronise the device and cost tens of
 * microseconds to milliseconds; an eager library allocates per op.  So, as
 * PyTorch's CUDA caching allocator does:
 *   - requests are rounded up to 512 bytes;
 *   - small requests (<= 1 MiB) come from 2 MiB segments, large ones from
 *     segments of their size rounded up to 2 MiB (the two pools never
 *     share a segment, so small blocks do not fragment large segments);
 *   - a free block that is larger than the request is split, the rest
 *     staying free when it is at least 512 bytes (small pool) or 1 MiB
 *     (large pool); a block freed next to a free neighbour of its segment
 *     is merged with it;
 *   - a request takes the smallest free block of its pool and stream that
 *     fits (best fit over free lists bucketed by power-of-two size);
 *   - blocks belong to the stream they were allocated on and are reused
 *     only on it (a block freed while another stream still uses it is the
 *     caller's business, as in PyTorch without record_stream), until that
 *     stream is retired (yg__block_cache_retire_stream) and they pass to
 *     another;
 *   - when the backend runs out, every segment with no block in use is
 *     given back and the request retried once; then it fails (NULL).
 * One mutex guards a cache; all functions are thread-safe.
 */
#ifndef YAGRAD_CUDA_BLOCK_CACHE_H
#define YAGRAD_CUDA_BLOCK_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "yagrad/status.h"

/* Where segments come from.  raw_alloc returns a segment of nbytes or
 * NULL when the device has no memory for it; raw_free gives one back.
 * Both are called with the cache's mutex held. */
typedef struct yg_block_cache_backend {
    void *ctx;
    void *(*raw_alloc)(void *ctx, size_t nbytes);
    void (*raw_free)(void *ctx, void *ptr);
} yg_block_cache_backend;

/* Counters, in bytes and calls. */
typedef struct yg_block_cache_stats {
    int64_t allocated_bytes;      /* in blocks handed out (rounded sizes) */
    int64_t reserved_bytes;       /* in segments held from the backend */
    int64_t peak_allocated_bytes;
    int64_t peak_reserved_bytes;
    int64_t num_allocs, num_frees; /* blocks */
    int64_t num_raw_allocs, num_raw_frees; /* segments (cudaMalloc / cudaFree) */
    int64_t num_splits, num_merges;
    int64_t num_ooms; /* requests that failed after the retry */
} yg_block_cache_stats;

typedef struct yg_block_cache yg_block_cache;

/* A new empty cache over backend (copied).  YG_ERR_OUT_OF_MEMORY when the
 * host is out of memory. */
yg_status yg__block_cache_create(const yg_block_cache_backend *backend, yg_block_cache **out);

/* Gives every segment back and frees the cache.  Blocks still handed out
 * become invalid.  NULL-safe. */
void yg__block_cache_destroy(yg_block_cache *c);

/* A block of at least nbytes (0 gives a valid block) for stream (any
 * pointer; NULL is the default stream), aligned to 512 bytes from its
 * segment's start; NULL when the backend is out of memory even after
 * giving back the unused segments (or nbytes is absurd). */
void *yg__block_cache_alloc(yg_block_cache *c, size_t nbytes, void *stream);

/* Returns a block from yg__block_cache_alloc to the cache.  NULL-safe;
 * a pointer the cache did not hand out is ignored and returns false. */
bool yg__block_cache_free(yg_block_cache *c, void *ptr);

/* The rounded size of the block at ptr, 0 when ptr is not a live block. */
size_t yg__block_cache_block_size(yg_block_cache *c, void *ptr);

/* Files every block of stream (free or in use; any pointer) under to
 * instead, so that what a destroyed stream held returns to use on
 * another (the CUDA backend: the default stream, after synchronising the
 * dead one) rather than waiting for a stream that will never allocate
 * again.  Returns the bytes of the segments refiled.  Cannot fail. */
size_t yg__block_cache_retire_stream(yg_block_cache *c, void *stream, void *to);

/* Gives back every segment with no block in use. */
void yg__block_cache_empty(yg_block_cache *c);

/* A snapshot of the counters. */
yg_block_cache_stats yg__block_cache_stats(yg_block_cache *c);

#endif /* YAGRAD_CUDA_BLOCK_CACHE_H */
