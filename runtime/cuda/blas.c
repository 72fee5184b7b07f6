/*
 * blas.c - yg__cuda_gemm: cuBLAS's sgemm/dgemm behind the row-major
 * interface of the CPU's yg__cpu_gemm, and mm and bmm on a GPU, which run
 * meta/matmul.c's walk over it as the CPU's run it over yg__cpu_gemm.
 *
 * cuBLAS is column-major: a row-major C = op(A) op(B) is the column-major
 * C^T = op(B)^T op(A)^T, which is the same call with the operands (and
 * their transpose flags) swapped and m and n exchanged; no copy.  bmm
 * runs as one cublas{S,D}gemmStridedBatched call when its operands'
 * matrices can be passed as they are (meta/matmul.c says when), else one
 * gemm per entry.  TF32
 * tensor-op math is off unless yg_cuda_set_allow_tf32 turned it on
 * (float32 products then round their inputs to 10 mantissa bits, as
 * PyTorch's allow_tf32 does).
 *
 * Handles and workspaces.  One handle per device, made on first use and
 * used under a lock (a handle is not safe for concurrent calls), and one
 * workspace per (device, stream), as PyTorch keeps one per (handle,
 * stream).  Why not one handle per stream: a handle costs a context's
 * worth of setup and host memory, while all the per-stream state cuBLAS
 * has is the stream and the workspace, both of which can be set per call.
 * Why a workspace per stream: cublasSetStream resets the handle to
 * cuBLAS's default workspace pool, so with the stream set per call, gemms
 * in flight on two streams would share that pool and one could overwrite
 * the other's scratch.  So every call sets the stream and then
 * cublasSetWorkspace to the stream's own buffer, which only work queued on
 * that stream touches, in queue order.  The buffers come straight from
 * cudaMalloc (once per stream and device, not from the caching allocator,
 * whose counters then describe tensors alone) and are freed when their
 * stream is destroyed (yg__cuda_blas_forget_stream) or with the handles
 * (yg__cuda_blas_release).
 */
#include "core/core.h"
#include "cuda/cuda.h"
#include "decls/linalg.h"
#include "meta/matmul.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static cublasHandle_t handles[YG_CUDA_MAX_DEVICES];

/* The workspaces of one device, one per stream that ran a gemm there. */
typedef struct workspace {
    cudaStream_t stream;
    void *ptr;
} workspace;

typedef struct device_workspaces {
    workspace *w;
    int len, cap;
    size_t size; /* bytes per workspace; 0 until the first is made */
} device_workspaces;

static device_workspaces workspaces[YG_CUDA_MAX_DEVICES];

/* cuBLAS's documentation recommends a user workspace of at least 32 MiB
 * on Hopper (compute capability 9.x) and later, 4 MiB before. */
static size_t workspace_size(int index) {
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, index) != cudaSuccess) {
        (void)cudaGetLastError();
        major = 0;
    }
    return major >= 9 ? (size_t)32 << 20 : (size_t)4 << 20;
}

static const char *cublas_reason(cublasStatus_t s) {
    switch (s) {
    case CUBLAS_STATUS_NOT_INITIALIZED:
        return "cuBLAS not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED:
        return "cuBLAS could not allocate";
    case CUBLAS_STATUS_INVALID_VALUE:
        return "invalid value";
    case CUBLAS_STATUS_ARCH_MISMATCH:
        return "architecture mismatch";
    case CUBLAS_STATUS_EXECUTION_FAILED:
        return "execution failed";
    case CUBLAS_STATUS_NOT_SUPPORTED:
        return "not supported";
    default:
        return "cuBLAS error";
    }
}

/* Points device index's handle at stream s with s's own workspace, made
 * on first use (after giving the caching allocator's unused segments back
 * when cudaMalloc is short).  Caller holds handles_lock, device index
 * current, the handle made. */
static yg_status bind_stream(const char *op, int index, cudaStream_t s) {
    device_workspaces *d = &workspaces[index];
    void *ws = NULL;
    cublasStatus_t cs = cublasSetStream(handles[index], s);
    if (cs != CUBLAS_STATUS_SUCCESS)
        return yg__fail(
            YG_ERR_DEVICE, "%s: cuBLAS setting the stream on cuda:%d: %s", op, index,
            cublas_reason(cs));
    for (int i = 0; i < d->len && ws == NULL; i++)
        if (d->w[i].stream == s)
            ws = d->w[i].ptr;
    if (ws == NULL) {
        if (d->len == d->cap) {
            int cap = d->cap == 0 ? 4 : d->cap * 2;
            workspace *w = realloc(d->w, (size_t)cap * sizeof *w);
            if (w == NULL)
                return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of host memory", op);
            d->w = w;
            d->cap = cap;
        }
        if (d->size == 0)
            d->size = workspace_size(index);
        if (cudaMalloc(&ws, d->size) != cudaSuccess) {
            (void)cudaGetLastError(); /* out of memory is not sticky */
            yg__cuda_empty_cache();
            if (cudaMalloc(&ws, d->size) != cudaSuccess) {
                (void)cudaGetLastError();
                return yg__fail(YG_ERR_OUT_OF_MEMORY,
                                "%s: out of CUDA memory allocating the cuBLAS workspace of %zu "
                                "bytes on cuda:%d",
                                op,
                                d->size,
                                index);
            }
        }
        d->w[d->len++] = (workspace){.stream = s, .ptr = ws};
    }
    cs = cublasSetWorkspace(handles[index], ws, d->size);
    if (cs != CUBLAS_STATUS_SUCCESS)
        return yg__fail(YG_ERR_DEVICE, "%s: cuBLAS setting the workspace on cuda:%d: %s", op,
                        index, cublas_reason(cs));
    return YG_OK;
}

void yg__cuda_blas_forget_stream(int index, void *stream) {
    if (index < 0 || index >= YG_CUDA_MAX_DEVICES || stream == NULL)
        return;
    pthread_mutex_lock(&handles_lock);
    device_workspaces *d = &workspaces[index];
    for (int i = 0; i < d->len; i++) {
        if (d->w[i].stream != (cudaStream_t)stream)
            continue;
        /* The handle may still name the stream and its buffer: point it
         * at the default stream (and cuBLAS's own pool) first. */
        if (handles[index] != NULL)
            (void)cublasSetStream(handles[index], NULL);
        (void)cudaFree(d->w[i].ptr);
        (void)cudaGetLastError();
        d->w[i] = d->w[--d->len];
        break;
    }
    pthread_mutex_unlock(&handles_lock);
}

void yg__cuda_blas_release(void) {
    int prev = 0;
    if (cudaGetDevice(&prev) != cudaSuccess)
        prev = 0;
    pthread_mutex_lock(&handles_lock);
    for (int index = 0; index < YG_CUDA_MAX_DEVICES; index++) {
        device_workspaces *d = &workspaces[index];
        if (handles[index] == NULL && d->len == 0)
            continue;
        (void)cudaSetDevice(index);
        if (handles[index] != NULL)
            (void)cublasDestroy(handles[index]); /* waits for its work */
        handles[index] = NULL;
        for (int i = 0; i < d->len; i++)
            (void)cudaFree(d->w[i].ptr);
        free(d->w);
        *d = (device_workspaces){0};
    }
    pthread_mutex_unlock(&handles_lock);
    (void)cudaSetDevice(prev);
    (void)cudaGetLastError();
}

/* One gemm (batch 1) or a strided batch of them: yg__cuda_gemm's and
 * yg__cuda_gemm_batched's contracts.  The batch is cut into calls of at
 * most INT_MAX entries (cuBLAS counts them in an int). */
static yg_status gemm_run(const char *op,
                          int index,
                          yg_dtype dtype,
                          bool ta,
                          bool tb,
                          int64_t m,
                          int64_t n,
                          int64_t k,
                          const void *a,
                          int64_t lda,
                          int64_t stride_a,
                          const void *b,
                          int64_t ldb,
                          int64_t stride_b,
                          double beta,
                          void *c,
                          int64_t ldc,
                          int64_t stride_c,
                          int64_t batch) {
    int prev = 0;
    size_t esize = yg_dtype_size(dtype);
    if (m == 0 || n == 0 || batch == 0)
        return YG_OK;
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, index, &prev));
    pthread_mutex_lock(&handles_lock);
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    yg_status st = YG_OK;
    if (handles[index] == NULL && (s = cublasCreate(&handles[index])) != CUBLAS_STATUS_SUCCESS)
        handles[index] = NULL;
    /* On the calling thread's current stream, with that stream's own
     * workspace (the handle is shared; see the top of the file). */
    if (s == CUBLAS_STATUS_SUCCESS)
        st = bind_stream(op, index, (cudaStream_t)yg__cuda_current_stream());
    if (s == CUBLAS_STATUS_SUCCESS && st == YG_OK)
        s = cublasSetMathMode(handles[index],
                              yg_cuda_get_allow_tf32() ? CUBLAS_TF32_TENSOR_OP_MATH
                                                       : CUBLAS_DEFAULT_MATH);
    /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T:
     * the operands swapped, m and n exchanged. */
    cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    const double one64 = 1.0, beta64 = beta;
    const float one32 = 1.0f, beta32 = (float)beta;
    for (int64_t done = 0; done < batch && s == CUBLAS_STATUS_SUCCESS && st == YG_OK;) {
        int64_t part = batch - done < INT_MAX ? batch - done : INT_MAX;
        const char *pa = (const char *)a + (size_t)(done * stride_a) * esize;
        const char *pb = (const char *)b + (size_t)(done * stride_b) * esize;
        char *pc = (char *)c + (size_t)(done * stride_c) * esize;
        if (batch == 1 && dtype == YG_FLOAT64)
            s = cublasDgemm(handles[index], ob, oa, (int)n, (int)m, (int)k, &one64,
                            (const double *)pb, (int)ldb, (const double *)pa, (int)lda,
                            &beta64, (double *)pc, (int)ldc);
        else if (batch == 1)
            s = cublasSgemm(handles[index], ob, oa, (int)n, (int)m, (int)k, &one32,
                            (const float *)pb, (int)ldb, (const float *)pa, (int)lda, &beta32,
                            (float *)pc, (int)ldc);
        else if (dtype == YG_FLOAT64)
            s = cublasDgemmStridedBatched(handles[index], ob, oa, (int)n, (int)m, (int)k, &one64,
                                          (const double *)pb, (int)ldb, (long long)stride_b,
                                          (const double *)pa, (int)lda, (long long)stride_a,
                                          &beta64, (double *)pc, (int)ldc, (long long)stride_c,
                                          (int)part);
        else
            s = cublasSgemmStridedBatched(handles[index], ob, oa, (int)n, (int)m, (int)k, &one32,
                                          (const float *)pb, (int)ldb, (long long)stride_b,
                                          (const float *)pa, (int)lda, (long long)stride_a,
                                          &beta32, (float *)pc, (int)ldc, (long long)stride_c,
                                          (int)part);
        done += part;
    }
    pthread_mutex_unlock(&handles_lock);
    yg__cuda_device_leave(prev);
    if (st != YG_OK)
        return st;
    if (s != CUBLAS_STATUS_SUCCESS)
        return yg__fail(YG_ERR_DEVICE,
                        "%s: cuBLAS gemm%s on cuda:%d ([%lld, %lld] x [%lld, %lld]%s%lld): %s",
                        op,
                        batch > 1 ? " (strided batch)" : "",
                        index,
                        (long long)m,
                        (long long)k,
                        (long long)k,
                        (long long)n,
                        batch > 1 ? ", batch " : "",
                        batch > 1 ? (long long)batch : 0LL,
                        cublas_reason(s));
    return YG_OK;
}

yg_status yg__cuda_gemm(const char *op,
                        int index,
                        yg_dtype dtype,
                        bool ta,
                        bool tb,
                        int64_t m,
                        int64_t n,
                        int64_t k,
                        const void *a,
                        int64_t lda,
                        const void *b,
                        int64_t ldb,
                        double beta,
                        void *c,
                        int64_t ldc) {
    return gemm_run(op, index, dtype, ta, tb, m, n, k, a, lda, 0, b, ldb, 0, beta, c, ldc, 0, 1);
}

/* ---- mm and bmm on a GPU: the structured ops' CUDA implementations
 * (cuda/ops.h), meta/matmul.c's walk over cuBLAS ---- */

static yg_status cuda_gemm(const char *op,
                           const yg_tensor *out,
                           bool ta,
                           bool tb,
                           int64_t m,
                           int64_t n,
                           int64_t k,
                           const void *a,
                           int64_t lda,
                           const void *b,
                           int64_t ldb,
                           void *c,
                           int64_t ldc) {
    return yg__cuda_gemm(op, out->storage->device_index, out->dtype, ta, tb, m, n, k, a, lda, b,
                         ldb, 0.0, c, ldc);
}

yg_status yg__cuda_mm_out(const yg_tensor *self, const yg_tensor *mat2, yg_tensor *out) {
    return yg__matmul_fill("mm", self, mat2, out, cuda_gemm);
}

/* Every entry of a bmm whose operands allow it in one strided-batched
 * call, instead of one locked call per entry. */
static yg_status cuda_gemm_batched(const char *op,
                                   const yg_tensor *out,
                                   bool ta,
                                   bool tb,
                                   int64_t m,
                                   int64_t n,
                                   int64_t k,
                                   const void *a,
                                   int64_t lda,
                                   int64_t stride_a,
                                   const void *b,
                                   int64_t ldb,
                                   int64_t stride_b,
                                   void *c,
                                   int64_t ldc,
                                   int64_t stride_c,
                                   int64_t batch) {
    return gemm_run(op, out->storage->device_index, out->dtype, ta, tb, m, n, k, a, lda, stride_a,
                    b, ldb, stride_b, 0.0, c, ldc, stride_c, batch);
}

yg_status yg__cuda_bmm_out(const yg_tensor *self, const yg_tensor *mat2, yg_tensor *out) {
    return yg__matmul_fill_batched("bmm", self, mat2, out, cuda_gemm, cuda_gemm_batched);
}
