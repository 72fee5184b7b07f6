/*
 * alloc.c - the one door for tensor memory: a caching allocator.
 *
 * Why cache: the first write to freshly mapped memory is slow (the kernel
 * faults in and zeroes every 4 KiB page), so an eager library that hands
 * big buffers back to the OS and maps new ones for every op loses much of
 * its speed (docs/architecture.md; figures: docs/benchmarks.md, section
 * "Figures behind other choices").  Freed blocks are kept in
 * power-of-two size classes and handed out again; yg_allocator_empty_cache
 * returns them to the system.
 *
 * YG_ALLOC_CACHE=0 in the environment (read once, at load) turns the
 * cache off: every free goes back to the system at once.  The asan preset
 * runs the suite so, so that a use after free or a leak is seen at the
 * block that caused it instead of hiding in a reused block.
 *
 * Invariants: a block's class is derived from the size it was asked for,
 * so yg__free needs the same nbytes; every block is 64-byte aligned (one
 * cache line, enough for AVX-512 loads).  One mutex guards the free lists
 * and statistics; the cache holds at most YG__CACHE_LIMIT bytes.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

#define YG__NUM_CLASSES 48
#define YG__MIN_CLASS 6 /* 64 bytes */
#define YG__CACHE_LIMIT ((int64_t)2 << 30)

typedef struct free_block {
    struct free_block *next;
} free_block;

static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
/* Written once by read_env before main, read-only after. */
static bool cache_enabled = true;
static free_block *free_lists[YG__NUM_CLASSES];
static yg_allocator_stats stats;

static int size_class(size_t nbytes)
{
    int c = YG__MIN_CLASS;
    while (c < YG__NUM_CLASSES - 1 && ((size_t)1 << c) < nbytes)
        c++;
    return c;
}

/* This thread's largest allowed block (yg__alloc_set_thread_limit); 0: no
 * limit beyond the largest class. */
static _Thread_local size_t thread_limit;

size_t yg__alloc_set_thread_limit(size_t nbytes)
{
    size_t old = thread_limit;

    thread_limit = nbytes;
    return old;
}

void *yg__alloc(size_t nbytes)
{
    int c = size_class(nbytes);
    size_t cap = (size_t)1 << c;
    void *p = NULL;

    if (((size_t)1 << c) < nbytes)
        return NULL; /* larger than the largest class (2^47 bytes) */
    if (thread_limit != 0 && nbytes > thread_limit)
        return NULL;
    pthread_mutex_lock(&alloc_lock);
    stats.num_allocs++;
    if (free_lists[c] != NULL) {
        p = free_lists[c];
        free_lists[c] = free_lists[c]->next;
        stats.cached_bytes -= (int64_t)cap;
        stats.num_cache_hits++;
    }
    pthread_mutex_unlock(&alloc_lock);
    if (p == NULL && posix_memalign(&p, 64, cap) != 0)
        return NULL;
    pthread_mutex_lock(&alloc_lock);
    stats.allocated_bytes += (int64_t)cap;
    if (stats.allocated_bytes > stats.peak_allocated_bytes)
        stats.peak_allocated_bytes = stats.allocated_bytes;
    pthread_mutex_unlock(&alloc_lock);
    return p;
}

void yg__free(void *ptr, size_t nbytes)
{
    int c;
    size_t cap;
    bool keep;

    if (ptr == NULL)
        return;
    c = size_class(nbytes);
    cap = (size_t)1 << c;
    pthread_mutex_lock(&alloc_lock);
    stats.allocated_bytes -= (int64_t)cap;
    keep = cache_enabled && stats.cached_bytes + (int64_t)cap <= YG__CACHE_LIMIT;
    if (keep) {
        free_block *b = ptr;
        b->next = free_lists[c];
        free_lists[c] = b;
        stats.cached_bytes += (int64_t)cap;
    }
    pthread_mutex_unlock(&alloc_lock);
    if (!keep)
        free(ptr);
}

void yg_allocator_empty_cache(void)
{
    free_block *lists[YG__NUM_CLASSES];

    pthread_mutex_lock(&alloc_lock);
    for (int c = 0; c < YG__NUM_CLASSES; c++) {
        lists[c] = free_lists[c];
        free_lists[c] = NULL;
    }
    stats.cached_bytes = 0;
    pthread_mutex_unlock(&alloc_lock);
    for (int c = 0; c < YG__NUM_CLASSES; c++) {
        while (lists[c] != NULL) {
            free_block *next = lists[c]->next;
            free(lists[c]);
            lists[c] = next;
        }
    }
}

void yg_allocator_get_stats(yg_allocator_stats *out)
{
    if (out == NULL)
        return;
    pthread_mutex_lock(&alloc_lock);
    *out = stats;
    pthread_mutex_unlock(&alloc_lock);
}

static void read_env(void) __attribute__((constructor));
static void read_env(void)
{
    const char *v = getenv("YG_ALLOC_CACHE");

    cache_enabled = v == NULL || strcmp(v, "0") != 0;
}

/* Frees the cache at exit so leak checkers see only real leaks. */
static void alloc_cleanup(void) __attribute__((destructor));
static void alloc_cleanup(void)
{
    yg_allocator_empty_cache();
}
