/*
 * meta/matmul.c - mm and bmm for every device (meta/matmul.h, meta/meta.h):
 * their checks and results, and the walk that hands each product of
 * the last two dims to a device's gemm.
 *
 * Strided operands go to gemm without a copy whenever one of their two
 * strides is 1: a row-major operand as NoTrans with its row stride as
 * leading dimension, a column-major one (such as t(w), which every linear
 * layer and every mm backward produces) as Trans.  Only operands with
 * neither stride 1 (or a stride 0 from expand) are copied to contiguous
 * first.  bmm runs one gemm per batch entry, on 2-D views of the
 * operands, so strided batches are read in place too; a device with a
 * batched gemm (cuBLAS's strided-batched calls) runs every entry in one
 * call when both operands' matrices can be passed as they are, whatever
 * their batch strides (yg__matmul_fill_batched).
 */
#include "decls/linalg.h"
#include "meta/matmul.h"
#include "meta/meta.h"

#include "core/core.h"

#include <limits.h>
#include <stdio.h>

/* How a 2-D operand is passed to gemm without a copy. */
typedef struct gemm_operand {
    const yg_tensor *t; /* what gemm reads: the input or its contiguous copy */
    bool trans;
    int ld;
} gemm_operand;

/* Whether a matrix of sizes and strides (2 each) can be passed as it
 * is; fills op's trans and ld if so.  Row-major (unit column stride) goes
 * as NoTrans with ld = row stride; column-major as Trans with ld = column
 * stride.  A size-1 dim may have any stride, so its stride is not trusted
 * and ld is the smallest legal value. */
static bool layout_of(const int64_t *sizes, const int64_t *strides, gemm_operand *op) {
    int64_t rows = sizes[0], cols = sizes[1];
    int64_t rs = strides[0], cs = strides[1];
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

/* layout_of for the 2-D t. */
static bool gemm_layout(const yg_tensor *t, gemm_operand *op) {
    return layout_of(t->sizes, t->strides, op);
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

/* Whether t's dtype is one mm and bmm compute in: float32 and float64,
 * and on the CPU float16 and bfloat16 (cpu/blas.c: float32 math, one
 * rounding on store). */
static bool product_dtype(const yg_tensor *t) {
    return yg__dtype_is_floating(t->dtype) ||
           (yg__dtype_is_half(t->dtype) && t->storage->device == YG_CPU);
}

/* Device and dtype checks shared by mm and bmm. */
static yg_status check_operands(const char *op, const yg_tensor *self, const yg_tensor *mat2) {
    static const char *const expected[] = {"float32 or float64",
                                           "float32, float64, float16 or bfloat16"};
    YG_RETURN_IF_ERROR(yg__check_devices(op, 2, (const yg_tensor *const[]){self, mat2},
                                         (const char *const[]){"self", "mat2"}, NULL, 0, NULL));
    bool cpu = self->storage->device == YG_CPU;
    if (!product_dtype(self))
        return yg__fail(YG_ERR_DTYPE,
                        "%s: expected %s, got self %s",
                        op,
                        expected[cpu],
                        yg_dtype_name(self->dtype));
    if (!product_dtype(mat2))
        return yg__fail(YG_ERR_DTYPE,
                        "%s: expected %s, got mat2 %s",
                        op,
                        expected[cpu],
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

/* The product's result of sizes on self's device: zeros for an empty sum
 * (k = 0, which gemm's lda rules do not allow), else uninitialised. */
static yg_status product_result(const char *op, const yg_tensor *self, const int64_t *sizes,
                                int64_t ndim, bool zero, yg_tensor **out) {
    if (zero)
        return yg__tensor_zeros_on(op, sizes, ndim, self->dtype, self->storage->device,
                                   self->storage->device_index, out);
    return yg__tensor_new_on(op, sizes, ndim, self->dtype, self->storage->device,
                             self->storage->device_index, out);
}

yg_status yg__meta_mm(const yg_tensor *self, const yg_tensor *mat2, yg_tensor **out) {
    *out = NULL;
    YG_RETURN_IF_ERROR(mm_check("mm", self, mat2));
    int64_t sizes[2] = {self->sizes[0], mat2->sizes[1]};
    return product_result("mm", self, sizes, 2, self->sizes[1] == 0, out);
}

yg_status yg__meta_bmm(const yg_tensor *self, const yg_tensor *mat2, yg_tensor **out) {
    char sbuf[128], mbuf[128];

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
    return product_result("bmm", self, sizes, 3, k == 0, out);
}

yg_status yg__matmul_fill(const char *op,
                          const yg_tensor *self,
                          const yg_tensor *mat2,
                          yg_tensor *out,
                          yg_gemm_fn gemm) {
    int32_t nd = self->ndim;
    int64_t batch = nd == 3 ? self->sizes[0] : 1;
    int64_t m = self->sizes[nd - 2], k = self->sizes[nd - 1], n = mat2->sizes[nd - 1];
    size_t esize = yg_dtype_size(self->dtype);
    yg_status st = YG_OK;

    if (m == 0 || n == 0 || k == 0) /* nothing, or the zeros the meta function made */
        return YG_OK;
    for (int64_t i = 0; i < batch && st == YG_OK; i++) {
        yg_tensor *a = NULL, *b = NULL, *acopy = NULL, *bcopy = NULL;
        gemm_operand ga, gb;
        /* bmm: the batch entry's matrices as 2-D views; mm: the operands */
        if (nd == 3) {
            st = yg__tensor_view(op, self, self->sizes + 1, self->strides + 1, 2,
                                 self->offset + i * self->strides[0], &a);
            if (st == YG_OK)
                st = yg__tensor_view(op, mat2, mat2->sizes + 1, mat2->strides + 1, 2,
                                     mat2->offset + i * mat2->strides[0], &b);
        }
        if (st == YG_OK)
            st = gemm_prepare(nd == 3 ? a : self, &ga, &acopy);
        if (st == YG_OK)
            st = gemm_prepare(nd == 3 ? b : mat2, &gb, &bcopy);
        if (st == YG_OK)
            st = gemm(op, out, ga.trans, gb.trans, m, n, k, yg__tensor_ptr(ga.t), ga.ld,
                      yg__tensor_ptr(gb.t), gb.ld,
                      yg__tensor_ptr(out) + (size_t)(i * m * n) * esize, n > 1 ? n : 1);
        yg_release(acopy);
        yg_release(bcopy);
        yg_release(a);
        yg_release(b);
    }
    return st;
}

yg_status yg__matmul_fill_batched(const char *op,
                                  const yg_tensor *self,
                                  const yg_tensor *mat2,
                                  yg_tensor *out,
                                  yg_gemm_fn gemm,
                                  yg_gemm_batched_fn batched) {
    gemm_operand ga, gb;
    int64_t batch = self->ndim == 3 ? self->sizes[0] : 1;
    int64_t m = self->sizes[self->ndim - 2], k = self->sizes[self->ndim - 1];
    int64_t n = mat2->sizes[mat2->ndim - 1];

    if (batch < 2 || m == 0 || n == 0 || k == 0 || self->strides[0] < 0 ||
        mat2->strides[0] < 0 || !layout_of(self->sizes + 1, self->strides + 1, &ga) ||
        !layout_of(mat2->sizes + 1, mat2->strides + 1, &gb))
        return yg__matmul_fill(op, self, mat2, out, gemm);
    return batched(op, out, ga.trans, gb.trans, m, n, k, yg__tensor_ptr(self), ga.ld,
                   self->strides[0], yg__tensor_ptr(mat2), gb.ld, mat2->strides[0],
                   yg__tensor_ptr(out), n > 1 ? n : 1, m * n, batch);
}
