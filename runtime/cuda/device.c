/*
 * device.c - CUDA devices (yagrad/cuda.h) and their caching allocators.
 *
 * The device count is read once (pthread_once); a machine without a
 * driver or a GPU gets 0 and the CUDA runtime's reason, kept for
 * yg_cuda_check's message.  Each device gets a block cache
 * (block_cache.h) on first use, whose segments come from cudaMalloc on
 * that device (the calling thread's current device is restored after).
 *
 * Streams: each thread has a current stream per device (thread-local,
 * NULL for the legacy default stream); kernels launch on it
 * (YG_CUDA_STREAM), allocations are made for it and copies are queued on
 * it.  A thread that sets a stream lists its table of current streams in
 * a process-wide list (unlisted when the thread exits), so that
 * destroying a stream clears it wherever it is current instead of
 * leaving other threads a dangling pointer; the table's entries are
 * atomics because that clearing writes another thread's table.  The
 * destroyed stream's cuBLAS workspace is freed and its device memory in
 * the caching allocator is refiled under the default stream (after the
 * stream was synchronised), where it returns to use.  Copies between
 * pageable host memory and a device of 1 MiB or more go through two
 * pinned staging buffers per device, so the host's memcpy of one chunk
 * overlaps the DMA of the other.
 */
#include "cuda/cuda.h"

#include "core/core.h"
#include "core/rng.h"
#include "cuda/block_cache.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct yg_cuda_stream {
    int device;
    cudaStream_t s;
};

struct yg_cuda_event {
    int device;
    cudaEvent_t e;
};

/* A thread's current streams (NULL: the default), and its links in the
 * list of the threads that ever set one. */
typedef struct thread_streams {
    _Atomic(yg_cuda_stream *) cur[YG_CUDA_MAX_DEVICES];
    bool listed;
    struct thread_streams *prev, *next;
} thread_streams;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static _Thread_local thread_streams current;
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static thread_streams *threads; /* the listed ones, under threads_lock */
static pthread_once_t threads_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t threads_key;
static bool threads_key_made;
static int n_devices;
static char why[256]; /* when n_devices == 0 */
static pthread_mutex_t caches_lock = PTHREAD_MUTEX_INITIALIZER;
static yg_block_cache *caches[YG_CUDA_MAX_DEVICES];

/* "12.4" for a CUDA version number (12040), "none" for 0 (no driver). */
static void version_text(int v, char *buf, size_t len) {
    if (v <= 0)
        snprintf(buf, len, "none");
    else
        snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* Why no device is usable: what kind of failure (no device, a driver too
 * old for the runtime this build links, or CUDA failing to start), the
 * runtime's error, and the driver and runtime versions, so that a GPU
 * run whose every test skips says why at once. */
static void init(void) {
    int n = 0, drv = 0, rt = 0;
    char dv[16], rv[16];
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        (void)cudaGetLastError(); /* clear the sticky-free error */
        (void)cudaDriverGetVersion(&drv);
        (void)cudaRuntimeGetVersion(&rt);
        version_text(drv, dv, sizeof dv);
        version_text(rt, rv, sizeof rv);
    }
    if (e != cudaSuccess) {
        const char *kind = e == cudaErrorNoDevice ? "no GPU is visible"
                           : e == cudaErrorInsufficientDriver && drv == 0
                               ? "no NVIDIA driver is loaded"
                           : e == cudaErrorInsufficientDriver
                               ? "the driver is older than the runtime this build links"
                               : "CUDA could not start";
        snprintf(why, sizeof why, "cuda: no CUDA device: %s (%s: %s; driver %s, runtime %s)", kind,
                 cudaGetErrorName(e), cudaGetErrorString(e), dv, rv);
        n = 0;
    } else if (n == 0) {
        snprintf(why, sizeof why, "cuda: no CUDA device: the driver reports none (driver %s, runtime %s)",
                 dv, rv);
    }
    n_devices = n > YG_CUDA_MAX_DEVICES ? YG_CUDA_MAX_DEVICES : n;
}

int yg__cuda_device_count(void) {
    pthread_once(&init_once, init);
    return n_devices;
}

yg_status yg__cuda_check(void) {
    pthread_once(&init_once, init);
    return n_devices > 0 ? YG_OK : yg__fail(YG_ERR_DEVICE, "%s", why);
}

yg_status yg__cuda_check_index(const char *op, int index) {
    pthread_once(&init_once, init);
    if (n_devices == 0)
        return yg__fail(YG_ERR_DEVICE, "%s: %s", op, why);
    if (index < 0 || index >= n_devices)
        return yg__fail(YG_ERR_DEVICE,
                        "%s: device index %d out of range (%d device%s)",
                        op,
                        index,
                        n_devices,
                        n_devices == 1 ? "" : "s");
    return YG_OK;
}

/* ---- streams and events ---- */

/* The calling thread's current stream object on device index (an index
 * in range). */
static yg_cuda_stream *current_of(int index) {
    return atomic_load_explicit(&current.cur[index], memory_order_acquire);
}

/* ... and its cudaStream_t. */
static cudaStream_t stream_of(int index) {
    yg_cuda_stream *st = current_of(index);
    return st != NULL ? st->s : NULL;
}

/* At thread exit (the key's destructor): takes the thread's table out of
 * the list. */
static void thread_unlist(void *arg) {
    thread_streams *t = arg;
    pthread_mutex_lock(&threads_lock);
    if (t->prev != NULL)
        t->prev->next = t->next;
    else
        threads = t->next;
    if (t->next != NULL)
        t->next->prev = t->prev;
    t->prev = t->next = NULL;
    t->listed = false;
    pthread_mutex_unlock(&threads_lock);
}

static void threads_key_init(void) {
    threads_key_made = pthread_key_create(&threads_key, thread_unlist) == 0;
}

/* Lists the calling thread's table (once per thread). */
static yg_status thread_list(const char *op) {
    if (current.listed)
        return YG_OK;
    pthread_once(&threads_key_once, threads_key_init);
    if (!threads_key_made || pthread_setspecific(threads_key, &current) != 0)
        return yg__fail(YG_ERR_OUT_OF_MEMORY,
                        "%s: no thread-specific key left to track this thread's streams",
                        op);
    pthread_mutex_lock(&threads_lock);
    current.prev = NULL;
    current.next = threads;
    if (threads != NULL)
        threads->prev = &current;
    threads = &current;
    current.listed = true;
    pthread_mutex_unlock(&threads_lock);
    return YG_OK;
}

void *yg__cuda_current_stream(void) {
    int d = 0;
    if (cudaGetDevice(&d) != cudaSuccess || d < 0 || d >= YG_CUDA_MAX_DEVICES) {
        (void)cudaGetLastError();
        return NULL;
    }
    return stream_of(d);
}

/* YG_ERR_DEVICE "<op>: cuda:I: <reason>" for a failed runtime call. */
static yg_status runtime_fail(const char *op, int index, cudaError_t e) {
    (void)cudaGetLastError();
    return yg__fail(YG_ERR_DEVICE, "%s: cuda:%d: %s", op, index, cudaGetErrorString(e));
}

yg_status yg__cuda_stream_create(int index, yg_cuda_stream **out) {
    const char *op = "cuda_stream_create";
    int prev;
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: out is NULL", op);
    *out = NULL;
    yg_cuda_stream *st = calloc(1, sizeof *st);
    if (st == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of host memory", op);
    yg_status r = yg__cuda_device_enter(op, index, &prev);
    if (r == YG_OK) {
        cudaError_t e = cudaStreamCreate(&st->s);
        yg__cuda_device_leave(prev);
        if (e != cudaSuccess)
            r = runtime_fail(op, index, e);
    }
    if (r != YG_OK) {
        free(st);
        return r;
    }
    st->device = index;
    *out = st;
    return YG_OK;
}

static yg_block_cache *cache_if_made(int index);

void yg__cuda_stream_destroy(yg_cuda_stream *stream) {
    if (stream == NULL)
        return;
    int dev = stream->device, prev = 0;
    /* Wherever the stream is current (only listed threads can have set
     * it), the default stream becomes current. */
    pthread_mutex_lock(&threads_lock);
    for (thread_streams *t = threads; t != NULL; t = t->next) {
        yg_cuda_stream *expected = stream;
        atomic_compare_exchange_strong(&t->cur[dev], &expected, NULL);
    }
    pthread_mutex_unlock(&threads_lock);
    bool entered = yg__cuda_device_enter("cuda_stream_destroy", dev, &prev) == YG_OK;
    (void)cudaStreamSynchronize(stream->s);
    yg__cuda_blas_forget_stream(dev, stream->s); /* its cuBLAS workspace */
    /* Its work is done, so its blocks may serve the default stream's. */
    yg_block_cache *c = cache_if_made(dev);
    if (c != NULL)
        (void)yg__block_cache_retire_stream(c, stream->s, NULL);
    (void)cudaStreamDestroy(stream->s);
    if (entered)
        yg__cuda_device_leave(prev);
    (void)cudaGetLastError();
    free(stream);
}

yg_status yg__cuda_set_stream(int index, yg_cuda_stream *stream) {
    YG_RETURN_IF_ERROR(yg__cuda_check_index("cuda_set_stream", index));
    if (stream != NULL && stream->device != index)
        return yg__fail(YG_ERR_DEVICE,
                        "cuda_set_stream: the stream is on cuda:%d, not cuda:%d",
                        stream->device,
                        index);
    if (stream != NULL)
        YG_RETURN_IF_ERROR(thread_list("cuda_set_stream"));
    atomic_store_explicit(&current.cur[index], stream, memory_order_release);
    return YG_OK;
}

yg_cuda_stream *yg__cuda_get_stream(int index) {
    return index >= 0 && index < YG_CUDA_MAX_DEVICES ? current_of(index) : NULL;
}

int yg__cuda_stream_device(const yg_cuda_stream *stream) {
    return stream->device;
}

yg_status yg__cuda_stream_synchronize(int index, yg_cuda_stream *stream) {
    const char *op = "cuda_stream_synchronize";
    int dev = stream != NULL ? stream->device : index, prev;
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, dev, &prev));
    cudaError_t e = cudaStreamSynchronize(stream != NULL ? stream->s : NULL);
    yg__cuda_device_leave(prev);
    return e == cudaSuccess ? YG_OK : runtime_fail(op, dev, e);
}

yg_status yg__cuda_event_create(int index, yg_cuda_event **out) {
    const char *op = "cuda_event_create";
    int prev;
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: out is NULL", op);
    *out = NULL;
    yg_cuda_event *ev = calloc(1, sizeof *ev);
    if (ev == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of host memory", op);
    yg_status r = yg__cuda_device_enter(op, index, &prev);
    if (r == YG_OK) {
        cudaError_t e = cudaEventCreate(&ev->e);
        yg__cuda_device_leave(prev);
        if (e != cudaSuccess)
            r = runtime_fail(op, index, e);
    }
    if (r != YG_OK) {
        free(ev);
        return r;
    }
    ev->device = index;
    *out = ev;
    return YG_OK;
}

void yg__cuda_event_destroy(yg_cuda_event *event) {
    if (event == NULL)
        return;
    (void)cudaEventDestroy(event->e);
    (void)cudaGetLastError();
    free(event);
}

/* The stream an event call means (NULL: the current one of the event's
 * device), checked to be on the event's device. */
static yg_status event_stream(const char *op,
                              const yg_cuda_event *event,
                              const yg_cuda_stream *stream,
                              cudaStream_t *s) {
    if (event == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: event is NULL", op);
    if (stream != NULL && stream->device != event->device)
        return yg__fail(YG_ERR_DEVICE,
                        "%s: the stream is on cuda:%d but the event on cuda:%d",
                        op,
                        stream->device,
                        event->device);
    *s = stream != NULL ? stream->s : stream_of(event->device);
    return YG_OK;
}

yg_status yg__cuda_event_record(yg_cuda_event *event, yg_cuda_stream *stream) {
    const char *op = "cuda_event_record";
    cudaStream_t s = NULL;
    int prev;
    YG_RETURN_IF_ERROR(event_stream(op, event, stream, &s));
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, event->device, &prev));
    cudaError_t e = cudaEventRecord(event->e, s);
    yg__cuda_device_leave(prev);
    return e == cudaSuccess ? YG_OK : runtime_fail(op, event->device, e);
}

yg_status yg__cuda_stream_wait_event(yg_cuda_stream *stream, yg_cuda_event *event) {
    const char *op = "cuda_stream_wait_event";
    cudaStream_t s = NULL;
    int prev;
    YG_RETURN_IF_ERROR(event_stream(op, event, stream, &s));
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, event->device, &prev));
    cudaError_t e = cudaStreamWaitEvent(s, event->e, 0);
    yg__cuda_device_leave(prev);
    return e == cudaSuccess ? YG_OK : runtime_fail(op, event->device, e);
}

yg_status yg__cuda_event_synchronize(yg_cuda_event *event) {
    if (event == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "cuda_event_synchronize: event is NULL");
    cudaError_t e = cudaEventSynchronize(event->e);
    return e == cudaSuccess ? YG_OK : runtime_fail("cuda_event_synchronize", event->device, e);
}

yg_status yg__cuda_event_query(yg_cuda_event *event, bool *done) {
    if (event == NULL || done == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "cuda_event_query: event or done is NULL");
    cudaError_t e = cudaEventQuery(event->e);
    *done = e == cudaSuccess;
    if (e == cudaSuccess || e == cudaErrorNotReady) {
        (void)cudaGetLastError();
        return YG_OK;
    }
    return runtime_fail("cuda_event_query", event->device, e);
}

yg_status yg__cuda_event_elapsed_ms(yg_cuda_event *start, yg_cuda_event *end, double *ms) {
    const char *op = "cuda_event_elapsed_ms";
    float f = 0;
    if (start == NULL || end == NULL || ms == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: start, end or ms is NULL", op);
    *ms = 0;
    if (start->device != end->device)
        return yg__fail(YG_ERR_DEVICE,
                        "%s: start is on cuda:%d but end on cuda:%d",
                        op,
                        start->device,
                        end->device);
    cudaError_t e = cudaEventElapsedTime(&f, start->e, end->e);
    if (e != cudaSuccess)
        return runtime_fail(op, start->device, e);
    *ms = f;
    return YG_OK;
}

/* ---- the allocator's backend: cudaMalloc / cudaFree on one device ---- */

static void *raw_alloc(void *ctx, size_t nbytes) {
    int dev = (int)(intptr_t)ctx, prev = 0;
    void *p = NULL;
    if (cudaGetDevice(&prev) != cudaSuccess || cudaSetDevice(dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    if (cudaMalloc(&p, nbytes) != cudaSuccess) {
        (void)cudaGetLastError(); /* out of memory is not sticky */
        p = NULL;
    }
    (void)cudaSetDevice(prev);
    return p;
}

static void raw_free(void *ctx, void *ptr) {
    int dev = (int)(intptr_t)ctx, prev = 0;
    if (cudaGetDevice(&prev) == cudaSuccess && cudaSetDevice(dev) == cudaSuccess) {
        (void)cudaFree(ptr);
        (void)cudaSetDevice(prev);
    }
    (void)cudaGetLastError();
}

/* Device index's cache, made on first use; NULL when out of host memory. */
static yg_block_cache *cache_of(int index) {
    pthread_mutex_lock(&caches_lock);
    if (caches[index] == NULL) {
        yg_block_cache_backend be = {
            .ctx = (void *)(intptr_t)index, .raw_alloc = raw_alloc, .raw_free = raw_free};
        if (yg__block_cache_create(&be, &caches[index]) != YG_OK)
            caches[index] = NULL;
    }
    yg_block_cache *c = caches[index];
    pthread_mutex_unlock(&caches_lock);
    return c;
}

/* Device index's cache, NULL when it has none yet. */
static yg_block_cache *cache_if_made(int index) {
    pthread_mutex_lock(&caches_lock);
    yg_block_cache *c = caches[index];
    pthread_mutex_unlock(&caches_lock);
    return c;
}

yg_status yg__cuda_alloc(const char *op, int index, size_t nbytes, void **out) {
    *out = NULL;
    YG_RETURN_IF_ERROR(yg__cuda_check_index(op, index));
    yg_block_cache *c = cache_of(index);
    if (c == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of host memory", op);
    void *p = yg__block_cache_alloc(c, nbytes, stream_of(index));
    if (p == NULL) {
        yg_block_cache_stats s = yg__block_cache_stats(c);
        return yg__fail(YG_ERR_OUT_OF_MEMORY,
                        "%s: out of CUDA memory allocating %zu bytes on cuda:%d (allocated %lld, "
                        "reserved %lld bytes)",
                        op,
                        nbytes,
                        index,
                        (long long)s.allocated_bytes,
                        (long long)s.reserved_bytes);
    }
    *out = p;
    return YG_OK;
}

void yg__cuda_free(int index, void *ptr) {
    if (ptr == NULL || index < 0 || index >= YG_CUDA_MAX_DEVICES)
        return;
    yg_block_cache *c = cache_if_made(index);
    if (c != NULL)
        (void)yg__block_cache_free(c, ptr);
}

/* Pinned staging: two buffers of STAGE_BYTES per device, made on first
 * use and kept for the process (as PyTorch's pinned-memory cache); a
 * copy holds its device's lock while it uses them. */
#define STAGE_BYTES ((size_t)4 << 20)
#define STAGE_MIN   ((size_t)1 << 20)

typedef struct staging {
    pthread_mutex_t lock;
    bool tried;          /* made (or failed to make) the buffers */
    void *buf[2];        /* pinned host memory, or NULL: no staging */
    cudaEvent_t done[2]; /* the last DMA from or to buf[i] */
} staging;

static staging stages[YG_CUDA_MAX_DEVICES];
static pthread_once_t stages_once = PTHREAD_ONCE_INIT;

static void stages_init(void) {
    for (int i = 0; i < YG_CUDA_MAX_DEVICES; i++)
        pthread_mutex_init(&stages[i].lock, NULL);
}

/* The device's staging with its lock held, or NULL (unlocked) when pinned
 * memory is not to be had: the copy then goes directly. */
static staging *staging_lock(void) {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= YG_CUDA_MAX_DEVICES)
        return NULL;
    pthread_once(&stages_once, stages_init);
    staging *g = &stages[dev];
    pthread_mutex_lock(&g->lock);
    if (!g->tried) {
        g->tried = true;
        bool ok = true;
        for (int i = 0; i < 2 && ok; i++)
            ok = cudaHostAlloc(&g->buf[i], STAGE_BYTES, cudaHostAllocDefault) == cudaSuccess &&
                 cudaEventCreateWithFlags(&g->done[i], cudaEventDisableTiming) == cudaSuccess;
        if (!ok) {
            for (int i = 0; i < 2; i++) {
                if (g->buf[i] != NULL)
                    (void)cudaFreeHost(g->buf[i]);
                g->buf[i] = NULL;
            }
            (void)cudaGetLastError();
        }
    }
    if (g->buf[0] == NULL || g->buf[1] == NULL) {
        pthread_mutex_unlock(&g->lock);
        return NULL;
    }
    return g;
}

/* Whether p is host memory the driver has not pinned. */
static bool pageable(const void *p) {
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return true;
    }
    return a.type == cudaMemoryTypeUnregistered;
}

/* Host to device through the staging buffers on stream s: chunk k is
 * copied into buffer k % 2 (once that buffer's last DMA is done) while
 * chunk k - 1 is in flight. */
static cudaError_t staged_to_device(staging *g, char *dst, const char *src, size_t n,
                                   cudaStream_t s) {
    cudaError_t e = cudaSuccess;
    for (size_t off = 0, k = 0; off < n && e == cudaSuccess; off += STAGE_BYTES, k++) {
        size_t len = n - off < STAGE_BYTES ? n - off : STAGE_BYTES;
        e = cudaEventSynchronize(g->done[k % 2]);
        if (e == cudaSuccess) {
            memcpy(g->buf[k % 2], src + off, len);
            e = cudaMemcpyAsync(dst + off, g->buf[k % 2], len, cudaMemcpyHostToDevice, s);
        }
        if (e == cudaSuccess)
            e = cudaEventRecord(g->done[k % 2], s);
    }
    return e == cudaSuccess ? cudaStreamSynchronize(s) : e;
}

/* Device to host the same way: chunk k's DMA into buffer k % 2 is queued
 * before chunk k - 1 is copied out of the other buffer. */
static cudaError_t staged_to_host(staging *g, char *dst, const char *src, size_t n,
                                  cudaStream_t s) {
    size_t chunks = (n + STAGE_BYTES - 1) / STAGE_BYTES;
    cudaError_t e = cudaSuccess;
    for (size_t k = 0; k <= chunks && e == cudaSuccess; k++) {
        if (k < chunks) {
            size_t off = k * STAGE_BYTES, len = n - off < STAGE_BYTES ? n - off : STAGE_BYTES;
            e = cudaMemcpyAsync(g->buf[k % 2], src + off, len, cudaMemcpyDeviceToHost, s);
            if (e == cudaSuccess)
                e = cudaEventRecord(g->done[k % 2], s);
        }
        if (k > 0 && e == cudaSuccess) {
            size_t off = (k - 1) * STAGE_BYTES, len = n - off < STAGE_BYTES ? n - off : STAGE_BYTES;
            e = cudaEventSynchronize(g->done[(k - 1) % 2]);
            if (e == cudaSuccess)
                memcpy(dst + off, g->buf[(k - 1) % 2], len);
        }
    }
    return e;
}

/* The copy itself, with the device of the copy current: on the current
 * stream, waited for. */
static cudaError_t copy_on_stream(void *dst, int dst_index, const void *src, int src_index,
                                  size_t nbytes, cudaStream_t s) {
    bool to_dev = src_index < 0, to_host = dst_index < 0;
    /* YG_CUDA_STAGING=0 turns staging off (bench/bench_cuda compares). */
    const char *env = getenv("YG_CUDA_STAGING");
    bool stage = env == NULL || strcmp(env, "0") != 0;
    if (stage && (to_dev || to_host) && nbytes >= STAGE_MIN && pageable(to_dev ? src : dst)) {
        staging *g = staging_lock();
        if (g != NULL) {
            /* Earlier work on other streams that wrote src is the
             * caller's to order (yagrad/cuda.h); the stream's own is
             * ordered by the queue. */
            cudaError_t e = to_dev ? staged_to_device(g, dst, src, nbytes, s)
                                   : staged_to_host(g, dst, src, nbytes, s);
            pthread_mutex_unlock(&g->lock);
            return e;
        }
    }
    cudaError_t e = cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDefault, s);
    /* Between devices the copy stays queued; with the host it is done. */
    return e == cudaSuccess && (to_dev || to_host) ? cudaStreamSynchronize(s) : e;
}

/* A copy from device src_index to another, dst_index, on the
 * destination's current stream, ordered both ways with the source's
 * current stream, as PyTorch's copies between GPUs are: after the work
 * queued there so far (which may still be writing src: an event recorded
 * there and waited on by the destination's stream), and before the work
 * queued there later (which may free src to the allocator, whose next
 * block on that stream could overwrite it while the copy reads: an event
 * recorded after the copy and waited on by the source's stream).  Neither
 * the host nor either stream waits otherwise.  Leaves dst_index current. */
static cudaError_t copy_between_devices(void *dst, int dst_index, const void *src, int src_index,
                                        size_t nbytes) {
    cudaStream_t ds = stream_of(dst_index), ss = stream_of(src_index);
    cudaEvent_t ready = NULL, done = NULL;
    /* An event is recorded on a stream of the device current when it was
     * made; a stream may wait on another device's event. */
    cudaError_t e = cudaSetDevice(src_index);
    if (e == cudaSuccess)
        e = cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
    if (e == cudaSuccess)
        e = cudaEventRecord(ready, ss);
    if (e == cudaSuccess)
        e = cudaSetDevice(dst_index);
    if (e == cudaSuccess)
        e = cudaStreamWaitEvent(ds, ready, 0);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDefault, ds);
    if (e == cudaSuccess)
        e = cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
    if (e == cudaSuccess)
        e = cudaEventRecord(done, ds);
    if (e == cudaSuccess)
        e = cudaSetDevice(src_index);
    if (e == cudaSuccess)
        e = cudaStreamWaitEvent(ss, done, 0);
    /* Destroying a recorded event is allowed: the waits stand.  Each is
     * destroyed with its own device current. */
    if (ready != NULL && cudaSetDevice(src_index) == cudaSuccess)
        (void)cudaEventDestroy(ready);
    if (done != NULL && cudaSetDevice(dst_index) == cudaSuccess)
        (void)cudaEventDestroy(done);
    cudaError_t back = cudaSetDevice(dst_index);
    return e != cudaSuccess ? e : back;
}

yg_status yg__cuda_memcpy(
    const char *op, void *dst, int dst_index, const void *src, int src_index, size_t nbytes) {
    int dev = dst_index >= 0 ? dst_index : src_index, prev = 0;
    bool between = dst_index >= 0 && src_index >= 0 && dst_index != src_index;
    YG_RETURN_IF_ERROR(yg__cuda_check_index(op, dev));
    if (between)
        YG_RETURN_IF_ERROR(yg__cuda_check_index(op, src_index));
    if (nbytes == 0)
        return YG_OK;
    /* Unified addressing tells the direction (cudaMemcpyDefault); the
     * device of the copy is current while it runs, on its current
     * stream. */
    cudaError_t e = cudaGetDevice(&prev);
    if (e == cudaSuccess)
        e = cudaSetDevice(dev);
    if (e == cudaSuccess && between)
        e = copy_between_devices(dst, dst_index, src, src_index, nbytes);
    else if (e == cudaSuccess)
        e = copy_on_stream(dst, dst_index, src, src_index, nbytes, stream_of(dev));
    (void)cudaSetDevice(prev);
    if (e != cudaSuccess) {
        char from[16] = "cpu", to[16] = "cpu";
        (void)cudaGetLastError();
        if (src_index >= 0)
            snprintf(from, sizeof from, "cuda:%d", src_index);
        if (dst_index >= 0)
            snprintf(to, sizeof to, "cuda:%d", dst_index);
        return yg__fail(YG_ERR_DEVICE,
                        "%s: copying %zu bytes from %s to %s: %s",
                        op,
                        nbytes,
                        from,
                        to,
                        cudaGetErrorString(e));
    }
    return YG_OK;
}

yg_status yg__cuda_memset(const char *op, int index, void *ptr, int value, size_t nbytes) {
    int prev = 0;
    YG_RETURN_IF_ERROR(yg__cuda_check_index(op, index));
    if (nbytes == 0)
        return YG_OK;
    cudaError_t e = cudaGetDevice(&prev);
    if (e == cudaSuccess)
        e = cudaSetDevice(index);
    if (e == cudaSuccess)
        e = cudaMemsetAsync(ptr, value, nbytes, stream_of(index));
    (void)cudaSetDevice(prev);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return yg__fail(YG_ERR_DEVICE,
                        "%s: setting %zu bytes on cuda:%d: %s",
                        op,
                        nbytes,
                        index,
                        cudaGetErrorString(e));
    }
    return YG_OK;
}

yg_status yg__cuda_memset2d(const char *op, int index, void *ptr, size_t pitch, size_t width,
                            size_t height) {
    int prev = 0;
    YG_RETURN_IF_ERROR(yg__cuda_check_index(op, index));
    if (width == 0 || height == 0)
        return YG_OK;
    cudaError_t e = cudaGetDevice(&prev);
    if (e == cudaSuccess)
        e = cudaSetDevice(index);
    if (e == cudaSuccess)
        e = cudaMemset2DAsync(ptr, pitch, 0, width, height, stream_of(index));
    (void)cudaSetDevice(prev);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return yg__fail(YG_ERR_DEVICE,
                        "%s: zeroing %zu rows of %zu bytes on cuda:%d: %s",
                        op,
                        height,
                        width,
                        index,
                        cudaGetErrorString(e));
    }
    return YG_OK;
}

yg_status yg__cuda_get_device_properties(int index, yg_cuda_device_properties *out) {
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "cuda_get_device_properties: out is NULL");
    memset(out, 0, sizeof *out);
    YG_RETURN_IF_ERROR(yg__cuda_check_index("cuda_get_device_properties", index));
    struct cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, index);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return yg__fail(YG_ERR_DEVICE,
                        "cuda_get_device_properties: cuda:%d: %s",
                        index,
                        cudaGetErrorString(e));
    }
    snprintf(out->name, sizeof out->name, "%s", p.name);
    out->major = p.major;
    out->minor = p.minor;
    out->multiprocessor_count = p.multiProcessorCount;
    out->total_memory = (int64_t)p.totalGlobalMem;
    out->shared_memory_per_block = (int64_t)p.sharedMemPerBlock;
    return YG_OK;
}

yg_status yg__cuda_synchronize(int index) {
    YG_RETURN_IF_ERROR(yg__cuda_check_index("cuda_synchronize", index));
    int prev = 0;
    cudaError_t e = cudaGetDevice(&prev);
    if (e == cudaSuccess)
        e = cudaSetDevice(index);
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    (void)cudaSetDevice(prev);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return yg__fail(YG_ERR_DEVICE, "cuda_synchronize: cuda:%d: %s", index, cudaGetErrorString(e));
    }
    return YG_OK;
}

yg_status yg__cuda_memory_stats_get(int index, yg_cuda_memory_stats *out) {
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "cuda_memory_stats_get: out is NULL");
    memset(out, 0, sizeof *out);
    YG_RETURN_IF_ERROR(yg__cuda_check_index("cuda_memory_stats_get", index));
    pthread_mutex_lock(&caches_lock);
    yg_block_cache *c = caches[index];
    pthread_mutex_unlock(&caches_lock);
    if (c == NULL)
        return YG_OK;
    yg_block_cache_stats s = yg__block_cache_stats(c);
    out->allocated_bytes = s.allocated_bytes;
    out->reserved_bytes = s.reserved_bytes;
    out->peak_allocated_bytes = s.peak_allocated_bytes;
    out->peak_reserved_bytes = s.peak_reserved_bytes;
    out->num_allocs = s.num_allocs;
    out->num_frees = s.num_frees;
    out->num_cuda_mallocs = s.num_raw_allocs;
    out->num_cuda_frees = s.num_raw_frees;
    out->num_ooms = s.num_ooms;
    return YG_OK;
}

void yg__cuda_empty_cache(void) {
    pthread_mutex_lock(&caches_lock);
    for (int i = 0; i < YG_CUDA_MAX_DEVICES; i++)
        if (caches[i] != NULL)
            yg__block_cache_empty(caches[i]);
    pthread_mutex_unlock(&caches_lock);
}

/* What yg__cuda_release_all runs first (yg__cuda_at_release). */
#define MAX_RELEASE_HOOKS 8
static pthread_mutex_t hooks_lock = PTHREAD_MUTEX_INITIALIZER;
static void (*release_hooks[MAX_RELEASE_HOOKS])(void);
static int n_release_hooks;

void yg__cuda_at_release(void (*fn)(void)) {
    pthread_mutex_lock(&hooks_lock);
    if (n_release_hooks < MAX_RELEASE_HOOKS)
        release_hooks[n_release_hooks++] = fn;
    pthread_mutex_unlock(&hooks_lock);
}

/* Frees device index's pinned staging buffers and their events (made
 * again by the next large copy). */
static void staging_release(int index) {
    pthread_once(&stages_once, stages_init);
    staging *g = &stages[index];
    pthread_mutex_lock(&g->lock);
    for (int i = 0; i < 2; i++) {
        if (g->buf[i] != NULL)
            (void)cudaFreeHost(g->buf[i]);
        if (g->done[i] != NULL)
            (void)cudaEventDestroy(g->done[i]);
        g->buf[i] = NULL;
        g->done[i] = NULL;
    }
    g->tried = false;
    pthread_mutex_unlock(&g->lock);
}

void yg__cuda_release_all(bool reset) {
    int n = yg__cuda_device_count(), prev = 0;
    bool used[YG_CUDA_MAX_DEVICES];
    if (n == 0)
        return;
    if (cudaGetDevice(&prev) != cudaSuccess)
        prev = 0;
    /* Only the devices this process used (every one that ran work has
     * an allocator): touching another would make it a context first. */
    for (int i = 0; i < n; i++)
        used[i] = cache_if_made(i) != NULL;
    /* Everything queued may still use a workspace or a staging buffer. */
    for (int i = 0; i < n; i++)
        if (used[i] && cudaSetDevice(i) == cudaSuccess)
            (void)cudaDeviceSynchronize();
    pthread_mutex_lock(&hooks_lock);
    int hooks = n_release_hooks;
    pthread_mutex_unlock(&hooks_lock);
    for (int h = 0; h < hooks; h++)
        release_hooks[h]();
    yg__cuda_blas_release();
    for (int i = 0; i < n; i++) {
        if (!used[i])
            continue;
        (void)cudaSetDevice(i);
        staging_release(i);
    }
    yg__cuda_empty_cache();
    /* The blocks still handed out die with the contexts: a leak checker
     * reports them, which is the point. */
    for (int i = 0; reset && i < n; i++)
        if (used[i] && cudaSetDevice(i) == cudaSuccess)
            (void)cudaDeviceReset();
    (void)cudaSetDevice(prev);
    (void)cudaGetLastError();
}

yg_status yg__cuda_device_enter(const char *op, int index, int *prev) {
    *prev = 0;
    YG_RETURN_IF_ERROR(yg__cuda_check_index(op, index));
    cudaError_t e = cudaGetDevice(prev);
    if (e == cudaSuccess && *prev != index)
        e = cudaSetDevice(index);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return yg__fail(YG_ERR_DEVICE, "%s: selecting cuda:%d: %s", op, index,
                        cudaGetErrorString(e));
    }
    return YG_OK;
}

void yg__cuda_device_leave(int prev) {
    int cur = prev;
    if (cudaGetDevice(&cur) == cudaSuccess && cur != prev)
        (void)cudaSetDevice(prev);
}

yg_status yg__cuda_check_launch(const char *op, int index, int err) {
    if (err == 0)
        return YG_OK;
    (void)cudaGetLastError();
    return yg__fail(YG_ERR_DEVICE,
                    "%s: launching a kernel on cuda:%d: %s",
                    op,
                    index,
                    cudaGetErrorString((cudaError_t)err));
}

yg_status yg__cuda_launch(const char *op, int index, yg_cuda_launch_fn fn,
                          const yg_cuda_loop_args *a) {
    int prev;
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, index, &prev));
    int err = fn(a);
    yg__cuda_device_leave(prev);
    return yg__cuda_check_launch(op, index, err);
}

/* cuda/copy.cu: [destination dtype].fn[source dtype]. */
extern const yg_cuda_loop_table yg__cuda_copy_loops[YG_CUDA_DTYPE_COUNT];

yg_status yg__cuda_copy(const char *op, yg_tensor *dst, const yg_tensor *src) {
    yg_tensor *ops[2] = {dst, (yg_tensor *)src};
    if (dst->ndim != src->ndim ||
        memcmp(dst->sizes, src->sizes, sizeof(int64_t) * (size_t)dst->ndim) != 0 ||
        dst->storage->device != YG_CUDA || src->storage->device != YG_CUDA ||
        dst->storage->device_index != src->storage->device_index)
        return yg__fail(YG_ERR_INTERNAL, "%s: a CUDA copy between different shapes or devices",
                        op);
    return yg__cuda_loop(op, ops, 2, yg__cuda_copy_loops[dst->dtype].fn[src->dtype], NULL, 0);
}

/* cuda/reduce.cu */
int yg__cuda_sum_rows_launch(int dtype, const void *src, void *dst, long long rows,
                             long long cols, int mean, double scale, void *scratch,
                             long long chunks);

yg_status yg__cuda_sum_rows(const char *op, int index, yg_dtype dtype, const void *src,
                            void *dst, int64_t rows, int64_t cols, bool mean) {
    /* Long rows are cut into stretches of >= 8192 elements, enough of them
     * (up to 1024 a row) for about 2048 blocks in all. */
    int64_t chunks = 1;
    if (rows < 2048 && cols >= 16384) {
        chunks = (2048 + rows - 1) / rows;
        int64_t most = (cols + 8191) / 8192;
        chunks = chunks < most ? chunks : most;
        chunks = chunks < 1024 ? chunks : 1024;
    }
    void *scratch = NULL;
    if (chunks > 1)
        YG_RETURN_IF_ERROR(yg__cuda_alloc(op, index, (size_t)(rows * chunks) * 8, &scratch));
    int prev;
    yg_status st = yg__cuda_device_enter(op, index, &prev);
    if (st == YG_OK) {
        int err = yg__cuda_sum_rows_launch((int)dtype, src, dst, rows, cols, mean,
                                           1.0 / (double)cols, scratch, chunks);
        yg__cuda_device_leave(prev);
        st = yg__cuda_check_launch(op, index, err);
    }
    /* The allocator reuses the scratch only for work queued after these
     * launches on the same stream. */
    yg__cuda_free(index, scratch);
    return st;
}

/* cuda/softmax.cu, cuda/nll.cu */
int yg__cuda_softmax_launch(int f64, void *dst, const void *a, const void *b, long long outer,
                            long long n, long long inner, int is_log, int backward);
int yg__cuda_nll_launch(int f64, int is_backward, const void *self, long long s0, long long s1,
                        const int64_t *target, long long ts, const void *weight, long long ws,
                        long long batch, long long classes, long long ignore, int reduction,
                        void *out, double *scratch);
long long yg__cuda_nll_scratch(int is_backward, int reduction, long long batch);

yg_status yg__cuda_softmax(const char *op, int index, bool f64, void *dst, const void *a,
                           const void *b, int64_t outer, int64_t n, int64_t inner, bool is_log,
                           bool backward) {
    int prev;
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, index, &prev));
    int err = yg__cuda_softmax_launch(f64, dst, a, b, outer, n, inner, is_log, backward);
    yg__cuda_device_leave(prev);
    return yg__cuda_check_launch(op, index, err);
}

yg_status yg__cuda_nll(const char *op, int index, bool f64, bool backward, const void *self,
                       int64_t s0, int64_t s1, const int64_t *target, int64_t ts,
                       const void *weight, int64_t ws, int64_t batch, int64_t classes,
                       int64_t ignore_index, int64_t reduction, void *out) {
    int prev;
    void *scratch = NULL;
    /* The partial sums of a large batch's reductions (cuda/nll.cu). */
    long long doubles = yg__cuda_nll_scratch(backward, (int)reduction, batch);
    if (doubles > 0)
        YG_RETURN_IF_ERROR(yg__cuda_alloc(op, index, (size_t)doubles * sizeof(double), &scratch));
    yg_status st = yg__cuda_device_enter(op, index, &prev);
    if (st == YG_OK) {
        int err = yg__cuda_nll_launch(f64, backward, self, s0, s1, target, ts, weight, ws, batch,
                                      classes, ignore_index, (int)reduction, out, scratch);
        yg__cuda_device_leave(prev);
        st = yg__cuda_check_launch(op, index, err);
    }
    yg__cuda_free(index, scratch); /* stream-ordered: reused only by later work */
    return st;
}

/* cuda/random.cu */
int yg__cuda_draw_launch(const yg__philox_range *r, int kind, int f64, int i64, long long low,
                         unsigned long long range, double p, const double *probs, void *out,
                         long long n);

yg_status yg__cuda_draw(const char *op, yg_tensor *t, const struct yg__philox_range *r, int kind,
                        int64_t low, uint64_t range, double p, const double *probs) {
    int prev, index = t->storage->device_index;
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, index, &prev));
    int err = yg__cuda_draw_launch(r, kind, t->dtype == YG_FLOAT64, t->dtype == YG_INT64, low,
                                   range, p, probs, yg__tensor_ptr(t), yg_tensor_numel(t));
    yg__cuda_device_leave(prev);
    return yg__cuda_check_launch(op, index, err);
}

/* cuda/rnn.cu */
int yg__cuda_lstm_gates_launch(int f64, int is_backward, void *out0, void *out1, const void *ghy,
                               const void *gcy, const void *ig, const void *hg, const void *cx,
                               long long rows, long long h);

yg_status yg__cuda_lstm_gates(const char *op, int index, bool f64, bool backward, yg_tensor *out0,
                              yg_tensor *out1, const yg_tensor *ghy, const yg_tensor *gcy,
                              const yg_tensor *ig, const yg_tensor *hg, const yg_tensor *cx,
                              int64_t rows, int64_t h) {
    int prev;
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, index, &prev));
    int err = yg__cuda_lstm_gates_launch(f64, backward, yg__tensor_ptr(out0), yg__tensor_ptr(out1),
                                         ghy != NULL ? yg__tensor_ptr(ghy) : NULL,
                                         gcy != NULL ? yg__tensor_ptr(gcy) : NULL,
                                         yg__tensor_ptr(ig), yg__tensor_ptr(hg), yg__tensor_ptr(cx),
                                         rows, h);
    yg__cuda_device_leave(prev);
    return yg__cuda_check_launch(op, index, err);
}

/* cuda/layer_norm.cu */
int yg__cuda_layer_norm_launch(int f64, int is_backward, void *p0, void *p1, void *p2,
                               const void *g, const void *x, const void *mean, const void *rstd,
                               const void *w, const void *b, long long rows, long long m,
                               double eps);

static void *ptr_or_null(const yg_tensor *t) {
    return t != NULL ? yg__tensor_ptr(t) : NULL;
}

yg_status yg__cuda_layer_norm(const char *op, int index, bool f64, bool backward, yg_tensor *p0,
                              yg_tensor *p1, yg_tensor *p2, const yg_tensor *g,
                              const yg_tensor *x, const yg_tensor *mean, const yg_tensor *rstd,
                              const yg_tensor *w, const yg_tensor *b, int64_t rows, int64_t m,
                              double eps) {
    int prev;
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, index, &prev));
    int err = yg__cuda_layer_norm_launch(f64, backward, ptr_or_null(p0), ptr_or_null(p1),
                                         ptr_or_null(p2), ptr_or_null(g), ptr_or_null(x),
                                         ptr_or_null(mean), ptr_or_null(rstd), ptr_or_null(w),
                                         ptr_or_null(b), rows, m, eps);
    yg__cuda_device_leave(prev);
    return yg__cuda_check_launch(op, index, err);
}

/* cuda/rows.cu */
int yg__cuda_rows_launch(int work, int kind, const void *data, long long outer, long long inner,
                         double param, void *values, long long *indices);

yg_status yg__cuda_rows(const char *op, const yg_tensor *data, int64_t outer, int64_t inner,
                        int kind, double param, yg_tensor *values, yg_tensor *indices) {
    int prev, index = data->storage->device_index;
    int work = data->dtype == YG_FLOAT64 ? 0 : data->dtype == YG_INT64 ? 1 : 2;
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, index, &prev));
    int err = yg__cuda_rows_launch(work, kind, yg__tensor_ptr(data), outer, inner, param,
                                   ptr_or_null(values),
                                   indices != NULL ? (long long *)yg__tensor_ptr(indices) : NULL);
    yg__cuda_device_leave(prev);
    return yg__cuda_check_launch(op, index, err);
}

int yg__cuda_rows_grad_launch(int kind, double param, long long outer, long long inner,
                              double *out, const double *x, const double *a, const double *b,
                              double *scratch);

yg_status yg__cuda_rows_grad(const char *op, int kind, double param, int64_t outer,
                             int64_t inner, yg_tensor *out, const yg_tensor *x,
                             const yg_tensor *a, const yg_tensor *b, yg_tensor *scratch) {
    int prev, index = out->storage->device_index;
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, index, &prev));
    int err = yg__cuda_rows_grad_launch(kind, param, outer, inner, ptr_or_null(out),
                                        ptr_or_null(x), ptr_or_null(a), ptr_or_null(b),
                                        ptr_or_null(scratch));
    yg__cuda_device_leave(prev);
    return yg__cuda_check_launch(op, index, err);
}

/* cuda/scatter.cu */
int yg__cuda_scatter_launch(int is_gather, int mode, int dtype, void *out, const void *src,
                            const void *value, const long long *index, int ndim, int d,
                            const long long *isizes, const long long *rsizes,
                            const long long *ssizes);

yg_status yg__cuda_scatter(const char *op, bool is_gather, int mode, yg_tensor *out,
                           const yg_tensor *src, const void *value, const yg_tensor *index, int d,
                           const yg_tensor *shape) {
    int prev, dev = out->storage->device_index;
    long long isz[YG_MAX_DIMS], rsz[YG_MAX_DIMS], ssz[YG_MAX_DIMS];
    for (int i = 0; i < index->ndim; i++) {
        isz[i] = index->sizes[i];
        rsz[i] = shape->sizes[i];
        ssz[i] = src != NULL && !is_gather ? src->sizes[i] : index->sizes[i];
    }
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, dev, &prev));
    int err = yg__cuda_scatter_launch(is_gather, mode, (int)out->dtype, yg__tensor_ptr(out),
                                      src != NULL ? yg__tensor_ptr(src) : NULL, value,
                                      (const long long *)yg__tensor_ptr(index), index->ndim, d,
                                      isz, rsz, ssz);
    yg__cuda_device_leave(prev);
    return yg__cuda_check_launch(op, dev, err);
}

int yg__cuda_scan_launch(int work, int prod, void *data, long long outer, long long inner);

yg_status yg__cuda_scan(const char *op, yg_tensor *data, int64_t outer, int64_t inner, bool prod) {
    int prev, index = data->storage->device_index;
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, index, &prev));
    int err = yg__cuda_scan_launch(data->dtype == YG_FLOAT64 ? 0 : 1, prod, yg__tensor_ptr(data),
                                   outer, inner);
    yg__cuda_device_leave(prev);
    return yg__cuda_check_launch(op, index, err);
}
