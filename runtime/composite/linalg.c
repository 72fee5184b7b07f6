/*
 * composite/linalg.c - matmul and linear in terms of mm, t, view and add,
 * so autograd differentiates them through those parts.
 *
 * matmul covers the cases a multilayer perceptron needs, by reshaping to
 * one mm: 2-D @ 2-D, vectors on either side (a 1-D operand is made a row
 * or a column and the added dim is removed afterwards, as in NumPy), and
 * an N-D self against a 2-D other (the leading dims are flattened into
 * rows).  Batched products (other with more than 2 dims) are not
 * implemented and say so.  linear is input @ t(weight) + bias.
 *
 * As for every composite, messages of our own checks carry no op name (the
 * generated wrapper prefixes it); errors of the inner ops pass through with
 * their own names.
 */
#include "composite/composite.h"
#include "yagrad/ops.h"

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
    for (int64_t d = 0; d < sn - 1; d++)
        rows_shape[0] *= ss[d];
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
        return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                        "batched matmul of self %s and other %s is not implemented (other must "
                        "have 1 or 2 dims)",
                        yg_tensor_format_sizes(self, sbuf, sizeof sbuf),
                        yg_tensor_format_sizes(other, obuf, sizeof obuf));
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
