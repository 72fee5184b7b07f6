/*
 * composite/linalg.c - matmul, linear, dot, mv, outer, addmm and baddbmm
 * in terms of mm, bmm, views and pointwise ops, so autograd
 * differentiates them through those parts.
 *
 * matmul reshapes to as few products as it can: 2-D @ 2-D, vectors on
 * either side (a 1-D operand is made a row or a column and the added dim
 * is removed afterwards, as in NumPy), and an N-D self against a 2-D
 * other (the leading dims are flattened into rows) are one mm; when other
 * has more than 2 dims the batch dims broadcast and both operands are
 * expanded and flattened into one bmm.  linear is input @ t(weight) +
 * bias.  mm_mat1_backward and mm_mat2_backward are mm's gradients, each
 * produced in its operand's layout (see column_major).
 *
 * As for every composite, messages of our own checks carry no op name (the
 * generated wrapper prefixes it); errors of the inner ops pass through with
 * their own names.
 */
#include "composite/composite.h"
#include "decls/linalg.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_views.h"

#include <inttypes.h>
#include <stdio.h>

/* self (N-D, N >= 1) @ other (2-D): rows of self's flattened leading dims
 * times other, reshaped back; a 1-D self is one row that is dropped. */
static yg_status matmul_nd_2d(const yg_tensor *self, const yg_tensor *other, yg_tensor **out) {
    const int64_t *ss = yg_tensor_sizes(self);
    int64_t sn = yg_tensor_ndim(self);
    int64_t k = ss[sn - 1], n = yg_tensor_size(other, 1);
    int64_t rows_shape[2] = {1, k};
    int64_t out_shape[YG_MAX_DIMS];
    yg_tensor *rows = NULL, *prod = NULL;
    yg_status st;

    if (sn == 2)
        return yg_mm(self, other, out);
    /* Flatten with an explicit row count: -1 cannot be inferred for k = 0. */
    rows_shape[0] = yg__sizes_product(ss, sn - 1);
    if (rows_shape[0] < 0) {
        /* Only an empty self can have such leading dims (sizes.h). */
        char sbuf[128];
        return yg__fail(YG_ERR_SHAPE,
                        "the leading dims of self %s have more than 2^59 rows",
                        yg_tensor_format_sizes(self, sbuf, sizeof sbuf));
    }
    st = yg_reshape(self, rows_shape, 2, &rows);
    if (st != YG_OK)
        goto out;
    st = yg_mm(rows, other, &prod);
    if (st != YG_OK)
        goto out;
    for (int64_t d = 0; d < sn - 1; d++)
        out_shape[d] = ss[d];
    out_shape[sn - 1] = n;
    /* A 1-D self went in as one row and comes out as [n]. */
    st = yg_view(prod, out_shape, sn, out);
out:
    yg_release(rows);
    yg_release(prod);
    return st;
}

/* The batched case (some operand has more than 2 dims): vectors become
 * [1, k] / [k, 1] matrices, the batch dims broadcast, both operands are
 * expanded and flattened to [B, n, k] and [B, k, m] for one bmm, and the
 * result is reshaped to batch + [n, m] with the vector dims dropped. */
static yg_status matmul_batched(const yg_tensor *self, const yg_tensor *other, yg_tensor **out) {
    int64_t sn = yg_tensor_ndim(self), on = yg_tensor_ndim(other);
    int64_t a[YG_MAX_DIMS + 1], b[YG_MAX_DIMS + 1], an = 0, bn = 0;
    int64_t batch[YG_MAX_DIMS], nb = 0, count = 1;
    int64_t ea[YG_MAX_DIMS + 1], eb[YG_MAX_DIMS + 1], res[YG_MAX_DIMS + 1], rn = 0;
    yg_tensor *av = NULL, *bv = NULL, *ae = NULL, *be = NULL, *a3 = NULL, *b3 = NULL, *p = NULL;
    yg_status st;

    /* Matrix views of both operands (a vector gets a size-1 dim). */
    if (sn == 1) {
        a[an++] = 1;
        a[an++] = yg_tensor_sizes(self)[0];
    } else {
        for (int64_t d = 0; d < sn; d++)
            a[an++] = yg_tensor_sizes(self)[d];
    }
    if (on == 1) {
        b[bn++] = yg_tensor_sizes(other)[0];
        b[bn++] = 1;
    } else {
        for (int64_t d = 0; d < on; d++)
            b[bn++] = yg_tensor_sizes(other)[d];
    }
    int64_t n = a[an - 2], k = a[an - 1], k2 = b[bn - 2], m = b[bn - 1];
    if (k != k2) {
        char sbuf[128], obuf[128];
        return yg__fail(YG_ERR_SHAPE,
                        "cannot multiply self %s by other %s",
                        yg_tensor_format_sizes(self, sbuf, sizeof sbuf),
                        yg_tensor_format_sizes(other, obuf, sizeof obuf));
    }
    YG_RETURN_IF_ERROR(
        yg__broadcast_shapes("batch dims", "self", a, an - 2, "other", b, bn - 2, batch, &nb));
    count = yg__sizes_product(batch, nb);
    if (count < 0) {
        char sbuf[128], obuf[128];
        return yg__fail(YG_ERR_SHAPE,
                        "the batch dims of self %s and other %s have more than 2^59 elements",
                        yg_tensor_format_sizes(self, sbuf, sizeof sbuf),
                        yg_tensor_format_sizes(other, obuf, sizeof obuf));
    }
    for (int64_t d = 0; d < nb; d++)
        ea[d] = eb[d] = res[rn++] = batch[d];
    ea[nb] = n;
    ea[nb + 1] = k;
    eb[nb] = k;
    eb[nb + 1] = m;
    if (sn > 1)
        res[rn++] = n;
    if (on > 1)
        res[rn++] = m;
    const int64_t s3[3] = {count, n, k}, o3[3] = {count, k, m};
    st = yg_reshape(self, a, an, &av);
    if (st == YG_OK)
        st = yg_reshape(other, b, bn, &bv);
    if (st == YG_OK)
        st = yg_expand(av, ea, nb + 2, &ae);
    if (st == YG_OK)
        st = yg_expand(bv, eb, nb + 2, &be);
    if (st == YG_OK)
        st = yg_reshape(ae, s3, 3, &a3);
    if (st == YG_OK)
        st = yg_reshape(be, o3, 3, &b3);
    if (st == YG_OK)
        st = yg_bmm(a3, b3, &p);
    if (st == YG_OK)
        st = yg_reshape(p, res, rn, out);
    yg_release(av);
    yg_release(bv);
    yg_release(ae);
    yg_release(be);
    yg_release(a3);
    yg_release(b3);
    yg_release(p);
    return st;
}

yg_status yg__composite_matmul(const yg_tensor *self, const yg_tensor *other, yg_tensor **out) {
    int64_t sn = yg_tensor_ndim(self), on = yg_tensor_ndim(other);
    yg_tensor *col = NULL, *prod = NULL;
    char sbuf[128], obuf[128];
    yg_status st;

    *out = NULL;
    if (sn == 0 || on == 0)
        return yg__fail(YG_ERR_SHAPE,
                        "expected tensors of at least 1 dim, got self %s and other %s",
                        yg_tensor_format_sizes(self, sbuf, sizeof sbuf),
                        yg_tensor_format_sizes(other, obuf, sizeof obuf));
    if (on == 2)
        return matmul_nd_2d(self, other, out);
    if (on > 2)
        return matmul_batched(self, other, out);
    /* other is a vector: multiply by it as a column, then drop that dim. */
    st = yg_unsqueeze(other, 1, &col);
    if (st != YG_OK)
        goto out;
    st = matmul_nd_2d(self, col, &prod);
    if (st != YG_OK)
        goto out;
    {
        const int64_t *ps = yg_tensor_sizes(prod);
        int64_t pn = yg_tensor_ndim(prod);
        st = yg_view(prod, ps, pn - 1, out);
    }
out:
    yg_release(col);
    yg_release(prod);
    return st;
}

yg_status yg__composite_dot(const yg_tensor *self, const yg_tensor *tensor, yg_tensor **out) {
    yg_tensor *prod = NULL;
    char sbuf[128], tbuf[128];
    yg_status st;

    *out = NULL;
    if (yg_tensor_ndim(self) != 1 || yg_tensor_ndim(tensor) != 1 ||
        yg_tensor_numel(self) != yg_tensor_numel(tensor))
        return yg__fail(YG_ERR_SHAPE,
                        "expected 1-D tensors of equal length, got self %s and tensor %s",
                        yg_tensor_format_sizes(self, sbuf, sizeof sbuf),
                        yg_tensor_format_sizes(tensor, tbuf, sizeof tbuf));
    if (yg_tensor_dtype(self) != yg_tensor_dtype(tensor))
        return yg__fail(YG_ERR_DTYPE,
                        "dtype mismatch: self %s, tensor %s",
                        yg_dtype_name(yg_tensor_dtype(self)),
                        yg_dtype_name(yg_tensor_dtype(tensor)));
    st = yg_mul(self, tensor, &prod);
    if (st == YG_OK)
        st = yg_sum(prod, out);
    yg_release(prod);
    return st;
}

yg_status yg__composite_mv(const yg_tensor *self, const yg_tensor *vec, yg_tensor **out) {
    char sbuf[128], vbuf[128];

    *out = NULL;
    if (yg_tensor_ndim(self) != 2 || yg_tensor_ndim(vec) != 1)
        return yg__fail(YG_ERR_SHAPE,
                        "expected a 2-D self and a 1-D vec, got self %s and vec %s",
                        yg_tensor_format_sizes(self, sbuf, sizeof sbuf),
                        yg_tensor_format_sizes(vec, vbuf, sizeof vbuf));
    return yg_matmul(self, vec, out);
}

yg_status yg__composite_outer(const yg_tensor *self, const yg_tensor *vec2, yg_tensor **out) {
    yg_tensor *col = NULL, *row = NULL;
    char sbuf[128], vbuf[128];
    yg_status st;

    *out = NULL;
    if (yg_tensor_ndim(self) != 1 || yg_tensor_ndim(vec2) != 1)
        return yg__fail(YG_ERR_SHAPE,
                        "expected 1-D tensors, got self %s and vec2 %s",
                        yg_tensor_format_sizes(self, sbuf, sizeof sbuf),
                        yg_tensor_format_sizes(vec2, vbuf, sizeof vbuf));
    st = yg_unsqueeze(self, 1, &col);
    if (st == YG_OK)
        st = yg_unsqueeze(vec2, 0, &row);
    if (st == YG_OK)
        st = yg_mul(col, row, out);
    yg_release(col);
    yg_release(row);
    return st;
}

/* Whether t is a transposed row-major matrix (strides [1, rows]), as
 * t(weight) is.  A gradient for such an operand is computed transposed,
 * as t(product of the transposes): it then reaches the row-major tensor
 * behind the t() row-major, and a leaf's AccumulateGrad stores it
 * without the copy it needs for a transposed gradient (16-20% of an MLP
 * step and of an LSTM cell's forward+backward, by perf; issue 10).  With
 * a dim of size 1 both layouts coincide and the plain product is used. */
static bool column_major(const yg_tensor *t) {
    const int64_t *sizes = yg_tensor_sizes(t), *strides = yg_tensor_strides(t);
    return yg_tensor_ndim(t) == 2 && sizes[0] > 1 && sizes[1] > 1 && strides[0] == 1 &&
           strides[1] == sizes[0];
}

/* The product a @ b, or t(t(b) @ t(a)) when transposed. */
static yg_status
product(const yg_tensor *a, const yg_tensor *b, bool transposed, yg_tensor **out) {
    yg_tensor *at = NULL, *bt = NULL, *prod = NULL;
    yg_status st;

    *out = NULL;
    if (!transposed)
        return yg_mm(a, b, out);
    st = yg_t(a, &at);
    if (st == YG_OK)
        st = yg_t(b, &bt);
    if (st == YG_OK)
        st = yg_mm(bt, at, &prod);
    if (st == YG_OK)
        st = yg_t(prod, out);
    yg_release(at);
    yg_release(bt);
    yg_release(prod);
    return st;
}

yg_status yg__composite_mm_mat1_backward(const yg_tensor *grad,
                                         const yg_tensor *mat1,
                                         const yg_tensor *mat2,
                                         yg_tensor **out) {
    yg_tensor *m2t = NULL;
    yg_status st;

    *out = NULL;
    st = yg_t(mat2, &m2t);
    if (st == YG_OK)
        st = product(grad, m2t, column_major(mat1), out);
    yg_release(m2t);
    return st;
}

yg_status yg__composite_mm_mat2_backward(const yg_tensor *grad,
                                         const yg_tensor *mat1,
                                         const yg_tensor *mat2,
                                         yg_tensor **out) {
    yg_tensor *m1t = NULL;
    yg_status st;

    *out = NULL;
    st = yg_t(mat1, &m1t);
    if (st == YG_OK)
        st = product(m1t, grad, column_major(mat2), out);
    yg_release(m1t);
    return st;
}

/* beta self + alpha prod, with self not read when beta is 0.  self must
 * broadcast to prod's shape (the result never grows beyond the product). */
static yg_status
scale_add(const yg_tensor *self, yg_tensor *prod, double beta, double alpha, yg_tensor **out) {
    int64_t sn = yg_tensor_ndim(self), pn = yg_tensor_ndim(prod);
    bool fits = sn <= pn;
    yg_tensor *scaled = NULL;
    char sbuf[128], pbuf[128];
    yg_status st;

    for (int64_t i = 1; fits && i <= sn; i++) {
        int64_t have = yg_tensor_sizes(self)[sn - i], want = yg_tensor_sizes(prod)[pn - i];
        fits = have == want || have == 1;
    }
    if (!fits)
        return yg__fail(YG_ERR_SHAPE,
                        "self %s does not broadcast to the product's shape %s",
                        yg_tensor_format_sizes(self, sbuf, sizeof sbuf),
                        yg_tensor_format_sizes(prod, pbuf, sizeof pbuf));
    if (beta == 0)
        return yg_mul_scalar(prod, alpha, out);
    st = yg_mul_scalar(self, beta, &scaled);
    if (st == YG_OK)
        st = yg_add(scaled, prod, alpha, out);
    yg_release(scaled);
    return st;
}

/* Fails with YG_ERR_DTYPE "dtype mismatch: self float32, mat1 bfloat16,
 * mat2 bfloat16" when a float16 or bfloat16 operand (t[0..n), NULL
 * skipped) meets another dtype: 16-bit products take one dtype
 * throughout, while float32 and float64 operands keep promoting. */
static yg_status check_half_dtypes(int n, const yg_tensor *const *t, const char *const *names) {
    bool half = false, same = true;
    char msg[256];
    int pos = 0;

    for (int i = 0; i < n; i++) {
        if (t[i] == NULL)
            continue;
        half |= yg_tensor_dtype(t[i]) == YG_FLOAT16 || yg_tensor_dtype(t[i]) == YG_BFLOAT16;
        same &= yg_tensor_dtype(t[i]) == yg_tensor_dtype(t[0]);
    }
    if (!half || same)
        return YG_OK;
    for (int i = 0; i < n; i++)
        if (t[i] != NULL && pos < (int)sizeof msg)
            pos += snprintf(msg + pos,
                            sizeof msg - (size_t)pos,
                            "%s%s %s",
                            pos ? ", " : "",
                            names[i],
                            yg_dtype_name(yg_tensor_dtype(t[i])));
    return yg__fail(YG_ERR_DTYPE, "dtype mismatch: %s", msg);
}

yg_status yg__composite_addmm(const yg_tensor *self,
                              const yg_tensor *mat1,
                              const yg_tensor *mat2,
                              double beta,
                              double alpha,
                              yg_tensor **out) {
    yg_tensor *prod = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(check_half_dtypes(3,
                                         (const yg_tensor *const[]){self, mat1, mat2},
                                         (const char *const[]){"self", "mat1", "mat2"}));
    st = yg_mm(mat1, mat2, &prod);
    if (st == YG_OK)
        st = scale_add(self, prod, beta, alpha, out);
    yg_release(prod);
    return st;
}

yg_status yg__composite_baddbmm(const yg_tensor *self,
                                const yg_tensor *batch1,
                                const yg_tensor *batch2,
                                double beta,
                                double alpha,
                                yg_tensor **out) {
    yg_tensor *prod = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(check_half_dtypes(3,
                                         (const yg_tensor *const[]){self, batch1, batch2},
                                         (const char *const[]){"self", "batch1", "batch2"}));
    st = yg_bmm(batch1, batch2, &prod);
    if (st == YG_OK)
        st = scale_add(self, prod, beta, alpha, out);
    yg_release(prod);
    return st;
}

yg_status yg__composite_linear(const yg_tensor *input,
                               const yg_tensor *weight,
                               const yg_tensor *bias,
                               yg_tensor **out) {
    yg_tensor *wt = NULL, *prod = NULL;
    char buf[128];
    yg_status st;

    *out = NULL;
    if (yg_tensor_ndim(weight) != 2)
        return yg__fail(YG_ERR_SHAPE,
                        "expected weight of 2 dims [out_features, in_features], got %s",
                        yg_tensor_format_sizes(weight, buf, sizeof buf));
    YG_RETURN_IF_ERROR(check_half_dtypes(3,
                                         (const yg_tensor *const[]){input, weight, bias},
                                         (const char *const[]){"input", "weight", "bias"}));
    st = yg_t(weight, &wt);
    if (st != YG_OK)
        goto out;
    if (bias == NULL) {
        st = yg_matmul(input, wt, out);
        goto out;
    }
    st = yg_matmul(input, wt, &prod);
    if (st != YG_OK)
        goto out;
    st = yg_add(prod, bias, 1.0, out);
out:
    yg_release(wt);
    yg_release(prod);
    return st;
}
