/*
 * device.c - CUDA devices (yagrad/cuda.h) and their caching allocators.
 *
 * The device count is read once (pthread_once); a machine without a
 * driver or a GPU gets 0 and the CUDA runtime's reason, kept for
 * yg_cuda_check's message.  Each device gets a block cache
 * (block_cache.h) on first use, whose segments come from cudaMalloc on
 * that device (the calling thread's current device is restored after).
 * Every allocation is on the default stream for now: per-thread streams
 * come with the kernels that run on them.
 */
#include "cuda/cuda.h"

#include "core/core.h"
#include "core/rng.h"
#include "cpu/cpu.h"
#include "cuda/block_cache.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int n_devices;
static char why[256]; /* when n_devices == 0 */
static pthread_mutex_t caches_lock = PTHREAD_MUTEX_INITIALIZER;
static yg_block_cache *caches[YG_CUDA_MAX_DEVICES];

static void init(void) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        snprintf(why, sizeof why, "cuda: no CUDA device (%s)", cudaGetErrorString(e));
        (void)cudaGetLastError(); /* clear the sticky-free error */
        n = 0;
    } else if (n == 0) {
        snprintf(why, sizeof why, "cuda: no CUDA device (the driver reports none)");
    }
    n_devices = n > YG_CUDA_MAX_DEVICES ? YG_CUDA_MAX_DEVICES : n;
}

bool yg_cuda_is_available(void) {
    pthread_once(&init_once, init);
    return n_devices > 0;
}

int yg_cuda_device_count(void) {
    pthread_once(&init_once, init);
    return n_devices;
}

yg_status yg_cuda_check(void) {
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

yg_status yg__cuda_alloc(const char *op, int index, size_t nbytes, void **out) {
    *out = NULL;
    YG_RETURN_IF_ERROR(yg__cuda_check_index(op, index));
    yg_block_cache *c = cache_of(index);
    if (c == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of host memory", op);
    void *p = yg__block_cache_alloc(c, nbytes, NULL);
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
    pthread_mutex_lock(&caches_lock);
    yg_block_cache *c = caches[index];
    pthread_mutex_unlock(&caches_lock);
    if (c != NULL)
        (void)yg__block_cache_free(c, ptr);
}

yg_status yg__cuda_memcpy(
    const char *op, void *dst, int dst_index, const void *src, int src_index, size_t nbytes) {
    int dev = dst_index >= 0 ? dst_index : src_index, prev = 0;
    YG_RETURN_IF_ERROR(yg__cuda_check_index(op, dev));
    if (nbytes == 0)
        return YG_OK;
    /* Unified addressing tells the direction (cudaMemcpyDefault); the
     * device of the copy is current while it runs. */
    cudaError_t e = cudaGetDevice(&prev);
    if (e == cudaSuccess)
        e = cudaSetDevice(dev);
    if (e == cudaSuccess)
        e = cudaMemcpy(dst, src, nbytes, cudaMemcpyDefault);
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

yg_status yg_cuda_get_device_properties(int index, yg_cuda_device_properties *out) {
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

yg_status yg_cuda_synchronize(int index) {
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

yg_status yg_cuda_memory_stats_get(int index, yg_cuda_memory_stats *out) {
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

void yg_cuda_empty_cache(void) {
    pthread_mutex_lock(&caches_lock);
    for (int i = 0; i < YG_CUDA_MAX_DEVICES; i++)
        if (caches[i] != NULL)
            yg__block_cache_empty(caches[i]);
    pthread_mutex_unlock(&caches_lock);
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
                             long long chunks, void *stream);

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
                                           1.0 / (double)cols, scratch, chunks, NULL);
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
                        void *out);

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
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, index, &prev));
    int err = yg__cuda_nll_launch(f64, backward, self, s0, s1, target, ts, weight, ws, batch,
                                  classes, ignore_index, (int)reduction, out);
    yg__cuda_device_leave(prev);
    return yg__cuda_check_launch(op, index, err);
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
