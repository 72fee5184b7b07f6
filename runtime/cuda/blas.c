/*
 * blas.c - yg__cuda_gemm: cuBLAS's sgemm/dgemm behind the row-major
 * interface of the CPU's yg__cpu_gemm, and mm and bmm on a GPU, which run
 * meta/matmul.c's walk over it as the CPU's run it over yg__cpu_gemm.
 *
 * cuBLAS is column-major: a row-major C = op(A) op(B) is the column-major
 * C^T = op(B)^T op(A)^T, which is the same call with the operands (and
 * their transpose flags) swapped and m and n exchanged; no copy.  One
 * handle per device, made on first use and used under a lock (a handle
 * is not safe for concurrent calls).  TF32 tensor-op math is off unless
 * yg_cuda_set_allow_tf32 turned it on (float32 products then round their
 * inputs to 10 mantissa bits, as PyTorch's allow_tf32 does).
 */
#include "core/core.h"
#include "cuda/cuda.h"
#include "decls/linalg.h"
#include "meta/matmul.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <pthread.h>

static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static cublasHandle_t handles[YG_CUDA_MAX_DEVICES];

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
    int prev = 0;
    if (m == 0 || n == 0)
        return YG_OK;
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, index, &prev));
    pthread_mutex_lock(&handles_lock);
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    if (handles[index] == NULL)
        s = cublasCreate(&handles[index]);
    /* On the calling thread's current stream (the handle is shared). */
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasSetStream(handles[index], (cudaStream_t)yg__cuda_current_stream());
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasSetMathMode(handles[index],
                              yg_cuda_get_allow_tf32() ? CUBLAS_TF32_TENSOR_OP_MATH
                                                       : CUBLAS_DEFAULT_MATH);
    cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (s == CUBLAS_STATUS_SUCCESS && dtype == YG_FLOAT64) {
        const double one = 1.0, bt = beta;
        s = cublasDgemm(handles[index],
                        ob,
                        oa,
                        (int)n,
                        (int)m,
                        (int)k,
                        &one,
                        b,
                        (int)ldb,
                        a,
                        (int)lda,
                        &bt,
                        c,
                        (int)ldc);
    } else if (s == CUBLAS_STATUS_SUCCESS) {
        const float one = 1.0f, bt = (float)beta;
        s = cublasSgemm(handles[index],
                        ob,
                        oa,
                        (int)n,
                        (int)m,
                        (int)k,
                        &one,
                        b,
                        (int)ldb,
                        a,
                        (int)lda,
                        &bt,
                        c,
                        (int)ldc);
    }
    pthread_mutex_unlock(&handles_lock);
    yg__cuda_device_leave(prev);
    if (s != CUBLAS_STATUS_SUCCESS)
        return yg__fail(
            YG_ERR_DEVICE, "%s: cuBLAS gemm on cuda:%d: %s", op, index, cublas_reason(s));
    return YG_OK;
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

yg_status yg__cuda_bmm_out(const yg_tensor *self, const yg_tensor *mat2, yg_tensor *out) {
    return yg__matmul_fill("bmm", self, mat2, out, cuda_gemm);
}
