/*
 * blas.c - matrix multiply (yg__kernel_mm) through OpenBLAS, and the fix for
 * OpenBLAS picking a slow kernel set on CPUs it does not recognise.
 *
 * mm hands strided operands to cblas_?gemm without copying whenever one of
 * their two strides is 1: a row-major operand goes in as CblasNoTrans with
 * its row stride as leading dimension, a column-major one (such as t(w),
 * which every linear layer and every mm backward produces) as CblasTrans.
 * Only operands with neither stride 1 (or a stride 0 from expand) are
 * copied to contiguous first.  mm and bmm serve both devices: on a GPU the
 * same operands go to cuBLAS (cuda/blas.c, yg__cuda_gemm).
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
#include "cuda/backend.h"

#include <cblas.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#ifdef YG_HAVE_ONEDNN
#include <dnnl.h>
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

/* How a 2-D operand is passed to gemm without a copy. */
typedef struct gemm_operand {
    const yg_tensor *t; /* what gemm reads: the input or its contiguous copy */
    bool trans;
    int ld;
} gemm_operand;

/* Whether t can be passed as it is; fills op if so.  Row-major (unit
 * column stride) goes as NoTrans with ld = row stride; column-major as
 * Trans with ld = column stride.  A size-1 dim may have any stride, so
 * its stride is not trusted and ld is the smallest legal value. */
static bool gemm_layout(const yg_tensor *t, gemm_operand *op) {
    int64_t rows = t->sizes[0], cols = t->sizes[1];
    int64_t rs = t->strides[0], cs = t->strides[1];
    int64_t min_row_ld = cols > 1 ? cols : 1, min_col_ld = rows > 1 ? rows : 1;

    if ((cols == 1 || cs == 1) && (rows == 1 || rs >= min_row_ld)) {
        int64_t ld = rows == 1 ? min_row_ld : rs;
        if (ld > INT_MAX)
            return false;
        op->trans = false;
        op->ld = (int)ld;
        return true;
    }
    if ((rows == 1 || rs == 1) && (cols == 1 || cs >= min_col_ld)) {
        int64_t ld = cols == 1 ? min_col_ld : cs;
        if (ld > INT_MAX)
            return false;
        op->trans = true;
        op->ld = (int)ld;
        return true;
    }
    return false;
}

/* Fills op for t, copying t to contiguous (*copy, a new ref) when its
 * layout cannot be passed as it is. */
static yg_status gemm_prepare(const yg_tensor *t, gemm_operand *op, yg_tensor **copy) {
    op->t = t;
    if (gemm_layout(t, op))
        return YG_OK;
    YG_RETURN_IF_ERROR(yg__tensor_contiguous_as(t, t->dtype, false, copy));
    op->t = *copy;
    op->trans = false;
    op->ld = t->sizes[1] > 1 ? (int)t->sizes[1] : 1;
    return YG_OK;
}

/* Device and dtype checks shared by mm and bmm. */
static yg_status check_operands(const char *op, const yg_tensor *self, const yg_tensor *mat2) {
    YG_RETURN_IF_ERROR(yg__check_devices(op, 2, (const yg_tensor *const[]){self, mat2},
                                         (const char *const[]){"self", "mat2"}, NULL, 0, NULL));
    if (!yg__dtype_is_floating(self->dtype))
        return yg__fail(YG_ERR_DTYPE,
                        "%s: expected float32 or float64, got self %s",
                        op,
                        yg_dtype_name(self->dtype));
    if (!yg__dtype_is_floating(mat2->dtype))
        return yg__fail(YG_ERR_DTYPE,
                        "%s: expected float32 or float64, got mat2 %s",
                        op,
                        yg_dtype_name(mat2->dtype));
    if (self->dtype != mat2->dtype)
        return yg__fail(YG_ERR_DTYPE,
                        "%s: dtype mismatch: self %s, mat2 %s",
                        op,
                        yg_dtype_name(self->dtype),
                        yg_dtype_name(mat2->dtype));
    return YG_OK;
}

/* The shape checks of one product of the last two dims (mm, and each
 * matrix of bmm): inner dims agree and fit BLAS's int. */
static yg_status check_product(const char *op, const yg_tensor *self, const yg_tensor *mat2) {
    char sbuf[128], mbuf[128];
    int32_t sn = self->ndim, mn = mat2->ndim;

    if (self->sizes[sn - 1] != mat2->sizes[mn - 2])
        return yg__fail(YG_ERR_SHAPE,
                        "%s: cannot multiply self %s by mat2 %s",
                        op,
                        yg__format_sizes(self->sizes, sn, sbuf, sizeof sbuf),
                        yg__format_sizes(mat2->sizes, mn, mbuf, sizeof mbuf));
    if (self->sizes[sn - 2] > INT_MAX || self->sizes[sn - 1] > INT_MAX ||
        mat2->sizes[mn - 1] > INT_MAX)
        return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                        "%s: dims above %d are not supported by the BLAS interface: self %s, "
                        "mat2 %s",
                        op,
                        INT_MAX,
                        yg__format_sizes(self->sizes, sn, sbuf, sizeof sbuf),
                        yg__format_sizes(mat2->sizes, mn, mbuf, sizeof mbuf));
    return YG_OK;
}

static yg_status mm_check(const char *op, const yg_tensor *self, const yg_tensor *mat2) {
    char sbuf[128], mbuf[128];

    if (self->ndim != 2)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected 2-D tensors, got self %s",
                        op,
                        yg__format_sizes(self->sizes, self->ndim, sbuf, sizeof sbuf));
    if (mat2->ndim != 2)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected 2-D tensors, got mat2 %s",
                        op,
                        yg__format_sizes(mat2->sizes, mat2->ndim, mbuf, sizeof mbuf));
    YG_RETURN_IF_ERROR(check_operands(op, self, mat2));
    return check_product(op, self, mat2);
}

/* dst (row-major m x n, leading dim n) = a @ b for 2-D a [m, k], b [k, n]
 * with k > 0, m > 0, n > 0 and checked dims; a or b are copied only when
 * their layout cannot go to gemm as it is. */
static yg_status
gemm_into(const char *op, const yg_tensor *self, const yg_tensor *mat2, char *dst) {
    yg_tensor *acopy = NULL, *bcopy = NULL;
    gemm_operand a, b;
    yg_status st;
    int64_t m = self->sizes[0], k = self->sizes[1], n = mat2->sizes[1];

    st = gemm_prepare(self, &a, &acopy);
    if (st != YG_OK)
        goto out;
    st = gemm_prepare(mat2, &b, &bcopy);
    if (st != YG_OK)
        goto out;
    if (self->storage->device == YG_CUDA)
        st = yg__cuda()->gemm(op, self->storage->device_index, self->dtype, a.trans, b.trans, m, n,
                           k, yg__tensor_ptr(a.t), a.ld, yg__tensor_ptr(b.t), b.ld, 0.0, dst,
                           n > 1 ? n : 1);
    else
        yg__cpu_gemm(self->dtype,
                     a.trans,
                     b.trans,
                     m,
                     n,
                     k,
                     yg__tensor_ptr(a.t),
                     a.ld,
                     yg__tensor_ptr(b.t),
                     b.ld,
                     0.0,
                     dst,
                     n > 1 ? n : 1);
out:
    yg_release(acopy);
    yg_release(bcopy);
    return st;
}

/* A new result of sizes on self's device, zeroed when zero is set. */
static yg_status product_result(const char *op, const yg_tensor *self, const int64_t *sizes,
                                int64_t ndim, bool zero, yg_tensor **out) {
    yg_tensor *same = NULL;
    YG_RETURN_IF_ERROR(yg__tensor_new_on(op, sizes, ndim, self->dtype, self->storage->device,
                                         self->storage->device_index, out));
    if (!zero)
        return YG_OK;
    yg_status st = yg__kernel_zero_(*out, &same);
    yg_release(same);
    if (st != YG_OK) {
        yg_release(*out);
        *out = NULL;
    }
    return st;
}

yg_status yg__kernel_mm(const yg_tensor *self, const yg_tensor *mat2, yg_tensor **out) {
    yg_tensor *res = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(mm_check("mm", self, mat2));
    int64_t m = self->sizes[0], k = self->sizes[1], n = mat2->sizes[1];
    int64_t sizes[2] = {m, n};

    /* An empty sum (k = 0, which gemm's lda rules do not allow) is zeros. */
    YG_RETURN_IF_ERROR(product_result("mm", self, sizes, 2, k == 0, &res));
    if (k == 0) {
        *out = res;
        return YG_OK;
    }
    if (m > 0 && n > 0) {
        st = gemm_into("mm", self, mat2, yg__tensor_ptr(res));
        if (st != YG_OK) {
            yg_release(res);
            return st;
        }
    }
    *out = res;
    return YG_OK;
}

/* bmm: one gemm per batch entry, on 2-D views of the operands (so strided
 * batches are read in place, like mm's operands). */
yg_status yg__kernel_bmm(const yg_tensor *self, const yg_tensor *mat2, yg_tensor **out) {
    yg_tensor *res = NULL, *a = NULL, *b = NULL;
    char sbuf[128], mbuf[128];
    yg_status st = YG_OK;

    *out = NULL;
    if (self->ndim != 3 || mat2->ndim != 3)
        return yg__fail(YG_ERR_SHAPE,
                        "bmm: expected 3-D tensors, got self %s and mat2 %s",
                        yg__format_sizes(self->sizes, self->ndim, sbuf, sizeof sbuf),
                        yg__format_sizes(mat2->sizes, mat2->ndim, mbuf, sizeof mbuf));
    if (self->sizes[0] != mat2->sizes[0])
        return yg__fail(YG_ERR_SHAPE,
                        "bmm: batch sizes differ: self %s, mat2 %s",
                        yg__format_sizes(self->sizes, 3, sbuf, sizeof sbuf),
                        yg__format_sizes(mat2->sizes, 3, mbuf, sizeof mbuf));
    int64_t batch = self->sizes[0], m = self->sizes[1], k = self->sizes[2], n = mat2->sizes[2];
    int64_t sizes[3] = {batch, m, n};
    YG_RETURN_IF_ERROR(check_operands("bmm", self, mat2));
    YG_RETURN_IF_ERROR(check_product("bmm", self, mat2));
    YG_RETURN_IF_ERROR(product_result("bmm", self, sizes, 3, k == 0, &res));
    if (k == 0) {
        *out = res;
        return YG_OK;
    }
    size_t esize = yg_dtype_size(self->dtype);
    for (int64_t i = 0; i < batch && m > 0 && n > 0; i++) {
        st = yg__kernel_select(self, 0, i, &a);
        if (st == YG_OK)
            st = yg__kernel_select(mat2, 0, i, &b);
        if (st == YG_OK)
            st = gemm_into("bmm", a, b, yg__tensor_ptr(res) + (size_t)(i * m * n) * esize);
        yg_release(a);
        yg_release(b);
        a = b = NULL;
        if (st != YG_OK) {
            yg_release(res);
            return st;
        }
    }
    *out = res;
    return YG_OK;
}
