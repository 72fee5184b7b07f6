/*
 * blas.c - the CPU's gemm (yg__cpu_gemm) through OpenBLAS and oneDNN,
 * mm and bmm on the CPU (the structured ops' implementations: their
 * checks, results and the walk that avoids copying strided operands are
 * meta/matmul.c's), and the fix for OpenBLAS picking a slow kernel set
 * on CPUs it does not recognise.  A GPU's products go to cuBLAS through
 * the same walk (cuda/blas.c).
 *
 * Which gemm.  Every float32 and float64 product of the CPU backend (mm,
 * bmm, the native convolution's im2col products) goes through
 * yg__cpu_gemm.  float64 is OpenBLAS's dgemm.  float32 is oneDNN's
 * dnnl_sgemm when the library is built with oneDNN and the product has at
 * least YG_GEMM_ONEDNN_MIN multiply-adds (and is not x w^T over k >= 256,
 * see below), else OpenBLAS's sgemm: oneDNN is faster on the shapes of
 * training (an LSTM cell's gradients, large square products) and only a
 * little slower on a few products with a transposed right operand, while
 * below ~64^3 multiply-adds its fixed cost makes it the slower one
 * (figures: docs/benchmarks.md, section "BLAS: oneDNN, OpenBLAS and its
 * kernel sets").  Both run on the library's OpenMP threads and, called
 * inside a parallel region, on one.  YG_GEMM=openblas in the environment
 * (read once) sends float32 to OpenBLAS too, to compare or to rule oneDNN
 * out.
 *
 * Core selection.  Debian's OpenBLAS 0.3.21 is a DYNAMIC_ARCH build: its
 * load-time constructor reads cpuid and points the global `gotoblas` at one
 * of its kernel tables.  CPUs newer than its tables (some Xeons, e.g.) fall
 * back to "Prescott", the SSE3 kernels, which run sgemm several times
 * slower than the AVX2/AVX-512 ones (figures: docs/benchmarks.md, same
 * section).  So when libyagrad is loaded (a constructor, which runs after
 * OpenBLAS's own one because we link against it) and the user has not
 * chosen a core with OPENBLAS_CORETYPE, we check whether the
 * chosen core is a pre-AVX one although the CPU (and the OS, which
 * __builtin_cpu_supports checks through XGETBV) supports AVX2+FMA or
 * AVX-512; if so we re-run OpenBLAS's own selection with OPENBLAS_CORETYPE
 * set to "SkylakeX" or "Haswell" through its exported
 * gotoblas_dynamic_quit / gotoblas_dynamic_init, then remove the variable
 * again.  A correctly detected core is never touched.
 *
 * Caveats: the switch uses setenv, which is not safe while other threads
 * call getenv; it runs from a load-time constructor, normally before any
 * thread exists, but a program that dlopens libyagrad from a multi-threaded
 * context takes that (small) risk, and any other user of OpenBLAS in the
 * process gets the faster core too.  The symbols are declared weak, so an
 * OpenBLAS built without DYNAMIC_ARCH (which has no such selection and no
 * such bug) simply skips the fix.  Setting OPENBLAS_CORETYPE yourself turns
 * the fix off entirely.
 */
#include "cpu/cpu.h"
#include "decls/linalg.h"
#include "meta/matmul.h"

#include <cblas.h>
#include <limits.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif
#include <stdlib.h>
#include <string.h>
#ifdef YG_HAVE_ONEDNN
#include <dnnl.h>
#include <pthread.h>
#endif

/* Exported by DYNAMIC_ARCH builds of OpenBLAS only, hence weak. */
extern void gotoblas_dynamic_init(void) __attribute__((weak));
extern void gotoblas_dynamic_quit(void) __attribute__((weak));

/* Kernel sets OpenBLAS uses for CPUs without AVX; picking one of these on
 * a CPU with AVX2 means detection failed. */
static bool core_is_pre_avx(const char *name) {
    static const char *const pre_avx[] = {"Prescott",
                                          "Core2",
                                          "Penryn",
                                          "Dunnington",
                                          "Nehalem",
                                          "Atom",
                                          "Nano",
                                          "Katmai",
                                          "Coppermine",
                                          "Northwood",
                                          "Banias",
                                          "Opteron",
                                          "Opteron(SSE3)",
                                          "Barcelona"};
    if (name == NULL)
        return false;
    for (size_t i = 0; i < sizeof pre_avx / sizeof pre_avx[0]; i++) {
        if (strcmp(name, pre_avx[i]) == 0)
            return true;
    }
    return false;
}

/* Runs when libyagrad is loaded; see the comment at the top of the file. */
__attribute__((constructor)) static void blas_fix_core(void) {
    const char *target = NULL;

    if (getenv("OPENBLAS_CORETYPE") != NULL)
        return;
    if (gotoblas_dynamic_init == NULL || gotoblas_dynamic_quit == NULL)
        return;
    if (!core_is_pre_avx(openblas_get_corename()))
        return;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512cd"))
        target = "SkylakeX";
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        target = "Haswell";
    if (target == NULL)
        return;
    if (setenv("OPENBLAS_CORETYPE", target, 0) != 0)
        return;
    gotoblas_dynamic_quit();
    gotoblas_dynamic_init();
    unsetenv("OPENBLAS_CORETYPE");
}

/* Products below this many multiply-adds stay on OpenBLAS (see the top). */
#define YG_GEMM_ONEDNN_MIN ((int64_t)1 << 18)

/* Whether float32 products may go to oneDNN: built with it and not turned
 * off by YG_GEMM=openblas.  Read once; racing first calls store the same
 * value. */
#ifdef YG_HAVE_ONEDNN
static bool onednn_sgemm_enabled(void) {
    static int enabled = -1;
    int e = __atomic_load_n(&enabled, __ATOMIC_RELAXED);
    if (e < 0) {
        const char *v = getenv("YG_GEMM");
        e = v == NULL || strcmp(v, "openblas") != 0;
        __atomic_store_n(&enabled, e, __ATOMIC_RELAXED);
    }
    return e != 0;
}
#endif

/* A product with one row (m == 1: a vector times a matrix, as a language
 * model's step at batch 1) or one column (n == 1) is a matrix-vector
 * product: gemv reads the matrix once, where gemm would first pack all of
 * it (OpenBLAS's sgemm spends most of such a call copying).  Returns
 * false when the strides do not fit gemv's (the caller runs gemm). */
static bool gemv(yg_dtype dtype,
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
    const void *mat, *x;
    int64_t rows, cols, ld, incx, incy;
    bool trans;

    if (m == 1) {
        /* c[0, :] = op(a)[0, :] @ op(b): the matrix is b */
        mat = b, ld = ldb, x = a, incx = ta ? lda : 1, incy = 1;
        trans = !tb; /* b [k, n] row-major: y = b^T x; b^T stored [n, k]: y = b x */
        rows = tb ? n : k, cols = tb ? k : n;
    } else {
        /* c[:, 0] = op(a) @ op(b)[:, 0]: the matrix is a */
        mat = a, ld = lda, x = b, incx = tb ? 1 : ldb, incy = ldc;
        trans = ta;
        rows = ta ? k : m, cols = ta ? m : k;
    }
    if (ld < (cols > 1 ? cols : 1) || ld > INT_MAX || incx > INT_MAX || incy > INT_MAX)
        return false;
    if (dtype == YG_FLOAT64)
        cblas_dgemv(CblasRowMajor, trans ? CblasTrans : CblasNoTrans, (int)rows, (int)cols, 1.0, mat,
                    (int)ld, x, (int)incx, beta, c, (int)incy);
    else
        cblas_sgemv(CblasRowMajor, trans ? CblasTrans : CblasNoTrans, (int)rows, (int)cols, 1.0f, mat,
                    (int)ld, x, (int)incx, (float)beta, c, (int)incy);
    return true;
}

void yg__cpu_gemm(yg_dtype dtype,
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
    CBLAS_TRANSPOSE at = ta ? CblasTrans : CblasNoTrans, bt = tb ? CblasTrans : CblasNoTrans;

    if (m == 0 || n == 0)
        return;
    if ((m == 1 || n == 1) && k > 0 && gemv(dtype, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc))
        return;
    if (dtype == YG_FLOAT64) {
        cblas_dgemm(CblasRowMajor,
                    at,
                    bt,
                    (int)m,
                    (int)n,
                    (int)k,
                    1.0,
                    a,
                    (int)lda,
                    b,
                    (int)ldb,
                    beta,
                    c,
                    (int)ldc);
        return;
    }
#ifdef YG_HAVE_ONEDNN
    /* m, n, k <= INT_MAX (the callers' checks), so the product fits. */
    /* A transposed right operand alone (x w^T of a linear layer) over a
     * long k runs no faster on oneDNN, so OpenBLAS keeps it; over a short
     * k (a weight gradient) oneDNN is much faster (docs/benchmarks.md,
     * section "BLAS: oneDNN, OpenBLAS and its kernel sets"). */
    bool nt_long = tb && !ta && k >= 256;
    if (m * n * k >= YG_GEMM_ONEDNN_MIN && !nt_long && onednn_sgemm_enabled() &&
        dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, (float)beta, c, ldc) ==
            dnnl_success)
        return;
#endif
    cblas_sgemm(CblasRowMajor,
                at,
                bt,
                (int)m,
                (int)n,
                (int)k,
                1.0f,
                a,
                (int)lda,
                b,
                (int)ldb,
                (float)beta,
                c,
                (int)ldc);
}

/* ---- bfloat16 and float16 products ----
 *
 * Both compute in float32 and round once, to nearest even, when the
 * result is stored.  bfloat16 goes to oneDNN's matmul primitive with
 * bf16 source, weights and destination (float32 accumulation inside; on
 * a CPU with AMX or AVX512_BF16 oneDNN picks its brgemm kernels for
 * them, elsewhere a kernel that converts); the primitive is found in
 * oneDNN's own primitive cache (DNNL_PRIMITIVE_CACHE_CAPACITY, 1024
 * entries by default) after the first call of a shape, so only its
 * descriptor is built per call.  float16, bfloat16 without oneDNN,
 * YG_GEMM=openblas and any shape oneDNN refuses convert both operands to
 * float32 as they are stored (F16C rows for float16), run the float32
 * gemm above with the same transposes and round its result on store:
 * the same math (float32 products of exactly representable values,
 * float32 sums), slower. */

/* float16 rows through F16C (vcvtph2ps, and vcvtps2ph rounding to
 * nearest even), which every AVX2 CPU has; checked once at run time.
 * Other rows convert element by element (core/convert.c). */
#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) static void
f16_row_to_f32_f16c(const uint16_t *x, float *dst, int64_t n) {
    int64_t j = 0;
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(dst + j, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + j))));
    for (; j < n; j++)
        dst[j] = yg__f16_to_f32(x[j]);
}

__attribute__((target("avx,f16c"))) static void
f32_row_to_f16_f16c(const float *x, uint16_t *dst, int64_t n) {
    int64_t j = 0;
    for (; j + 8 <= n; j += 8)
        _mm_storeu_si128(
            (__m128i *)(dst + j),
            _mm256_cvtps_ph(_mm256_loadu_ps(x + j), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; j < n; j++)
        dst[j] = yg__f16_from_f64(x[j]);
}

/* F16C is CPUID leaf 1, ECX bit 29 (read directly: clang's
 * __builtin_cpu_supports has no "f16c"); AVX, which also checks that the
 * OS saves the YMM registers, through the builtin. */
static bool has_f16c(void) {
    unsigned a, b, c, d;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) && (c >> 29 & 1);
}
#else
static bool has_f16c(void) {
    return false;
}
#endif

/* n elements of a 16-bit row to float32. */
static void row_to_f32(yg_dtype dtype, bool f16c, const uint16_t *x, float *dst, int64_t n) {
#if defined(__x86_64__)
    if (f16c && dtype == YG_FLOAT16) {
        f16_row_to_f32_f16c(x, dst, n);
        return;
    }
#endif
    (void)f16c;
    for (int64_t j = 0; j < n; j++)
        dst[j] = dtype == YG_BFLOAT16 ? yg__bf16_to_f32(x[j]) : yg__f16_to_f32(x[j]);
}

/* n float32 elements to a 16-bit row, each rounded once to nearest even. */
static void row_from_f32(yg_dtype dtype, bool f16c, const float *x, uint16_t *dst, int64_t n) {
#if defined(__x86_64__)
    if (f16c && dtype == YG_FLOAT16) {
        f32_row_to_f16_f16c(x, dst, n);
        return;
    }
#endif
    (void)f16c;
    for (int64_t j = 0; j < n; j++)
        dst[j] = dtype == YG_BFLOAT16 ? yg__bf16_from_f64(x[j]) : yg__f16_from_f64(x[j]);
}

/* Copies the rows x cols matrix x (leading dim ld) to the contiguous
 * float32 dst, as it is stored: a transposed operand stays transposed
 * for the float32 gemm, so every row is read contiguously. */
static void half_to_f32(yg_dtype dtype,
                        bool f16c,
                        int64_t rows,
                        int64_t cols,
                        const uint16_t *x,
                        int64_t ld,
                        float *dst) {
    for (int64_t i = 0; i < rows; i++)
        row_to_f32(dtype, f16c, x + i * ld, dst + i * cols, cols);
}

/* The float32 route: see the comment above.  Fails only for memory. */
static yg_status half_gemm_f32(const char *op,
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
                               void *c,
                               int64_t ldc) {
    size_t na = (size_t)(m * k), nb = (size_t)(k * n), nc = (size_t)(m * n);
    float *buf = malloc((na + nb + nc) * sizeof(float));
    uint16_t *out = c;
    bool f16c = has_f16c();

    if (buf == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY,
                        "%s: out of memory for the float32 copies of a %s product",
                        op,
                        yg_dtype_name(dtype));
    /* op(a) is m x k, stored k x m when ta; likewise b */
    int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    half_to_f32(dtype, f16c, ar, ac, a, lda, buf);
    half_to_f32(dtype, f16c, br, bc, b, ldb, buf + na);
    yg__cpu_gemm(YG_FLOAT32,
                 ta,
                 tb,
                 m,
                 n,
                 k,
                 buf,
                 ac > 1 ? ac : 1,
                 buf + na,
                 bc > 1 ? bc : 1,
                 0.0,
                 buf + na + nb,
                 n > 1 ? n : 1);
    for (int64_t i = 0; i < m; i++)
        row_from_f32(dtype, f16c, buf + na + nb + (size_t)(i * n), out + i * ldc, n);
    free(buf);
    return YG_OK;
}

#ifdef YG_HAVE_ONEDNN
static pthread_once_t half_once = PTHREAD_ONCE_INIT;
static dnnl_engine_t half_engine;
static dnnl_status_t half_engine_status = dnnl_runtime_error;

static void half_engine_init(void) {
    half_engine_status = dnnl_engine_create(&half_engine, dnnl_cpu, 0);
}

/* A 2-D bf16 memory descriptor of op(x), rows x cols, x of leading dim
 * ld. */
static dnnl_status_t
half_md(dnnl_memory_desc_t *md, bool trans, int64_t rows, int64_t cols, int64_t ld) {
    dnnl_dims_t dims = {rows, cols};
    dnnl_dims_t strides = {trans ? 1 : ld, trans ? ld : 1};
    return dnnl_memory_desc_init_by_strides(md, 2, dims, dnnl_bf16, strides);
}

/* c = op(a) op(b) through oneDNN's bf16 matmul primitive; false when
 * oneDNN declines (the caller converts instead). */
static bool bf16_gemm_onednn(bool ta,
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
    dnnl_memory_desc_t amd, bmd, cmd;
    dnnl_matmul_desc_t desc;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_t prim = NULL;
    dnnl_memory_t am = NULL, bm = NULL, cm = NULL;
    dnnl_stream_t stream = NULL;
    dnnl_status_t s;

    pthread_once(&half_once, half_engine_init);
    if (half_engine_status != dnnl_success)
        return false;
    s = half_md(&amd, ta, m, k, lda);
    if (s == dnnl_success)
        s = half_md(&bmd, tb, k, n, ldb);
    if (s == dnnl_success)
        s = half_md(&cmd, false, m, n, ldc);
    if (s == dnnl_success)
        s = dnnl_matmul_desc_init(&desc, &amd, &bmd, NULL, &cmd);
    if (s == dnnl_success)
        s = dnnl_primitive_desc_create(&pd, &desc, NULL, half_engine, NULL);
    if (s == dnnl_success)
        s = dnnl_primitive_create(&prim, pd);
    if (s == dnnl_success)
        s = dnnl_memory_create(&am, &amd, half_engine, (void *)a);
    if (s == dnnl_success)
        s = dnnl_memory_create(&bm, &bmd, half_engine, (void *)b);
    if (s == dnnl_success)
        s = dnnl_memory_create(&cm, &cmd, half_engine, c);
    if (s == dnnl_success)
        s = dnnl_stream_create(&stream, half_engine, dnnl_stream_default_flags);
    if (s == dnnl_success) {
        dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}};
        s = dnnl_primitive_execute(prim, stream, 3, args);
        if (s == dnnl_success)
            s = dnnl_stream_wait(stream);
    }
    dnnl_stream_destroy(stream);
    dnnl_memory_destroy(am);
    dnnl_memory_destroy(bm);
    dnnl_memory_destroy(cm);
    dnnl_primitive_destroy(prim);
    dnnl_primitive_desc_destroy(pd);
    return s == dnnl_success;
}
#endif

yg_status yg__cpu_gemm_half(const char *op,
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
                            void *c,
                            int64_t ldc) {
    if (m == 0 || n == 0)
        return YG_OK;
#ifdef YG_HAVE_ONEDNN
    if (dtype == YG_BFLOAT16 && k > 0 && onednn_sgemm_enabled() &&
        bf16_gemm_onednn(ta, tb, m, n, k, a, lda, b, ldb, c, ldc))
        return YG_OK;
#endif
    return half_gemm_f32(op, dtype, ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
}

/* ---- mm and bmm: structured (meta/matmul.c checks, makes the result and
 * walks the products; the CPU's gemm computes them) ---- */

static yg_status cpu_gemm(const char *op,
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
    if (yg__dtype_is_half(out->dtype))
        return yg__cpu_gemm_half(op, out->dtype, ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
    yg__cpu_gemm(out->dtype, ta, tb, m, n, k, a, lda, b, ldb, 0.0, c, ldc);
    return YG_OK;
}

yg_status yg__cpu_mm_out(const yg_tensor *self, const yg_tensor *mat2, yg_tensor *out) {
    return yg__matmul_fill("mm", self, mat2, out, cpu_gemm);
}

yg_status yg__cpu_bmm_out(const yg_tensor *self, const yg_tensor *mat2, yg_tensor *out) {
    return yg__matmul_fill("bmm", self, mat2, out, cpu_gemm);
}
