/*
 * composite/reduce.c - the gradients of the reductions, written with public
 * ops so that they are differentiable themselves (double backward):
 * sum_backward, mean_backward, sum_to, var_backward, logsumexp_backward,
 * cumsum_backward and value_selecting_reduction_backward (of max.dim and
 * min.dim); and the all-element reductions prod, max and min,
 * which call their dim-list forms with an empty list (every dim).
 *
 * sum_backward puts back the dims that sum.dim removed (unsqueeze, unless
 * keepdim kept them) and broadcasts the gradient over them (expand, a view:
 * nothing is copied until a later op needs it).  sum_to is the reverse of
 * broadcasting: it sums a gradient over the dims that broadcasting added or
 * stretched, which every binary pointwise backward needs.
 *
 * As for every composite, messages of our own checks carry no op name (the
 * generated wrapper prefixes it); errors of the inner ops pass through with
 * their own names.
 */
#include "composite/composite.h"
#include "decls/cumulative.h"
#include "decls/extrema.h"
#include "decls/statistics.h"
#include "decls/sums.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_cumulative.h"
#include "yagrad/ops_extrema.h"
#include "yagrad/ops_indexing.h"
#include "yagrad/ops_join_split.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_unary_math.h"
#include "yagrad/ops_views.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Marks the reduced dims of a tensor of ndim dims: the wrapped dims of
 * the list, or every dim for an empty list (as sum.dim treats it). */
static yg_status reduced_dims(const int64_t *dim, int64_t dim_len, int64_t ndim, bool *reduced) {
    char buf[160];

    for (int64_t d = 0; d < YG_MAX_DIMS; d++)
        reduced[d] = dim_len == 0 && d < ndim;
    if (ndim < 0 || ndim > YG_MAX_DIMS)
        return yg__fail(YG_ERR_SHAPE,
                        "sizes have %" PRId64 " dims, at most %d are supported",
                        ndim,
                        YG_MAX_DIMS);
    if (dim_len > 0 && dim == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "dim is NULL with length %" PRId64, dim_len);
    for (int64_t i = 0; i < dim_len; i++) {
        int64_t n = ndim > 0 ? ndim : 1;
        int64_t d = dim[i] < 0 ? dim[i] + n : dim[i];
        if (d < 0 || d >= n)
            return yg__fail(YG_ERR_INDEX,
                            "dim %" PRId64 " out of range for %" PRId64 " dims in %s",
                            dim[i],
                            ndim,
                            yg__format_sizes(dim, dim_len, buf, sizeof buf));
        if (ndim == 0)
            continue;
        if (reduced[d])
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "dim %" PRId64 " appears more than once in %s",
                            d,
                            yg__format_sizes(dim, dim_len, buf, sizeof buf));
        reduced[d] = true;
    }
    return YG_OK;
}

/* The number of elements reduced into one: the product of the reduced
 * sizes, checked (sizes.h).  It can only overflow for an empty input
 * (a 0 among the kept sizes), whose gradient is empty and never divided:
 * 0 then. */
static int64_t reduced_count(const int64_t *sizes, int64_t ndim, const bool *reduced) {
    int64_t kept[YG_MAX_DIMS], n = 0;
    for (int64_t d = 0; d < ndim && d < YG_MAX_DIMS; d++)
        if (reduced[d])
            kept[n++] = sizes[d];
    int64_t count = yg__sizes_product(kept, n);
    return count < 0 ? 0 : count;
}

yg_status yg__composite_sum_backward(const yg_tensor *grad,
                                     const int64_t *sizes,
                                     int64_t sizes_len,
                                     const int64_t *dim,
                                     int64_t dim_len,
                                     bool keepdim,
                                     yg_tensor **out) {
    bool reduced[YG_MAX_DIMS];
    yg_tensor *cur = NULL, *next = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(reduced_dims(dim, dim_len, sizes_len, reduced));
    cur = yg_retain((yg_tensor *)grad);
    if (!keepdim) {
        /* Increasing order: each unsqueeze puts a dim where it was. */
        for (int64_t d = 0; d < sizes_len; d++) {
            if (!reduced[d])
                continue;
            st = yg_unsqueeze(cur, d, &next);
            if (st != YG_OK)
                goto out;
            yg_release(cur);
            cur = next;
            next = NULL;
        }
    }
    st = yg_expand(cur, sizes, sizes_len, out);
out:
    yg_release(cur);
    return st;
}

yg_status yg__composite_mean_backward(const yg_tensor *grad,
                                      const int64_t *sizes,
                                      int64_t sizes_len,
                                      const int64_t *dim,
                                      int64_t dim_len,
                                      bool keepdim,
                                      yg_tensor **out) {
    bool reduced[YG_MAX_DIMS];
    yg_tensor *summed = NULL;
    int64_t count = 1;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(reduced_dims(dim, dim_len, sizes_len, reduced));
    count = reduced_count(sizes, sizes_len, reduced);
    st = yg__composite_sum_backward(grad, sizes, sizes_len, dim, dim_len, keepdim, &summed);
    if (st != YG_OK)
        goto out;
    /* count 0 means an empty input: its gradient is empty too, and the
     * division (by zero) touches no element. */
    st = yg_div_scalar(summed, (double)count, out);
out:
    yg_release(summed);
    return st;
}

yg_status yg__composite_sum_to(const yg_tensor *self,
                               const int64_t *size,
                               int64_t size_len,
                               yg_tensor **out) {
    int64_t dims[YG_MAX_DIMS];
    int64_t ndims = 0;
    const int64_t *ssizes = yg_tensor_sizes(self);
    int64_t sndim = yg_tensor_ndim(self);
    int64_t lead = sndim - size_len;
    yg_tensor *summed = NULL;
    char sbuf[128], tbuf[160];
    yg_status st;

    *out = NULL;
    if (size_len > 0 && size == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "size is NULL with length %" PRId64, size_len);
    if (lead < 0)
        return yg__fail(YG_ERR_SHAPE,
                        "cannot sum self %s to size %s, which has more dims",
                        yg__format_sizes(ssizes, sndim, sbuf, sizeof sbuf),
                        yg__format_sizes(size, size_len, tbuf, sizeof tbuf));
    for (int64_t d = 0; d < lead; d++)
        dims[ndims++] = d;
    for (int64_t i = 0; i < size_len; i++) {
        int64_t have = ssizes[lead + i];
        if (size[i] == have)
            continue;
        if (size[i] != 1)
            return yg__fail(YG_ERR_SHAPE,
                            "cannot sum self %s to size %s: dim %" PRId64 " has size %" PRId64
                            ", expected %" PRId64 " or a target size of 1",
                            yg__format_sizes(ssizes, sndim, sbuf, sizeof sbuf),
                            yg__format_sizes(size, size_len, tbuf, sizeof tbuf),
                            lead + i,
                            have,
                            size[i]);
        dims[ndims++] = lead + i;
    }
    if (ndims == 0) {
        /* Nothing to sum.  A view (not self itself) keeps the result a
         * distinct tensor with its own autograd history. */
        return yg_view(self, size, size_len, out);
    }
    st = yg_sum_dim(self, dims, ndims, true, &summed);
    if (st != YG_OK)
        goto out;
    st = yg_view(summed, size, size_len, out);
out:
    yg_release(summed);
    return st;
}

yg_status yg__composite_prod(const yg_tensor *self, yg_tensor **out) {
    return yg_prod_dim(self, NULL, 0, false, out);
}

yg_status yg__composite_max(const yg_tensor *self, yg_tensor **out) {
    return yg_amax(self, NULL, 0, false, out);
}

yg_status yg__composite_min(const yg_tensor *self, yg_tensor **out) {
    return yg_amin(self, NULL, 0, false, out);
}

yg_status yg__composite_var_backward(const yg_tensor *grad,
                                     const yg_tensor *self,
                                     const int64_t *dim,
                                     int64_t dim_len,
                                     int64_t correction,
                                     bool keepdim,
                                     yg_tensor **out) {
    bool reduced[YG_MAX_DIMS];
    const int64_t *sizes = yg_tensor_sizes(self);
    int64_t ndim = yg_tensor_ndim(self), count = 1;
    yg_tensor *g = NULL, *mean = NULL, *dev = NULL, *prod = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(reduced_dims(dim, dim_len, ndim, reduced));
    count = reduced_count(sizes, ndim, reduced);
    /* 2 (self - mean) / (N - correction), times grad spread over the
     * reduced dims; N - correction <= 0 divides by 0, as the forward does. */
    double denom = (double)count - (double)correction;
    st = yg_sum_backward(grad, sizes, ndim, dim, dim_len, keepdim, &g);
    if (st == YG_OK)
        st = yg_mean_dim(self, dim, dim_len, true, &mean);
    if (st == YG_OK)
        st = yg_sub(self, mean, 1, &dev);
    if (st == YG_OK)
        st = yg_mul(g, dev, &prod);
    if (st == YG_OK)
        st = yg_mul_scalar(prod, 2 / (denom > 0 ? denom : 0), out);
    yg_release(g);
    yg_release(mean);
    yg_release(dev);
    yg_release(prod);
    return st;
}

yg_status yg__composite_logsumexp_backward(const yg_tensor *grad,
                                           const yg_tensor *self,
                                           const yg_tensor *output,
                                           const int64_t *dim,
                                           int64_t dim_len,
                                           bool keepdim,
                                           yg_tensor **out) {
    const int64_t *sizes = yg_tensor_sizes(self);
    int64_t ndim = yg_tensor_ndim(self);
    yg_tensor *g = NULL, *r = NULL, *shifted = NULL, *e = NULL;
    yg_status st;

    *out = NULL;
    /* grad * exp(self - output): the softmax of self over dim, scaled. */
    st = yg_sum_backward(grad, sizes, ndim, dim, dim_len, keepdim, &g);
    if (st == YG_OK)
        st = yg_sum_backward(output, sizes, ndim, dim, dim_len, keepdim, &r);
    if (st == YG_OK)
        st = yg_sub(self, r, 1, &shifted);
    if (st == YG_OK)
        st = yg_exp(shifted, &e);
    if (st == YG_OK)
        st = yg_mul(g, e, out);
    yg_release(g);
    yg_release(r);
    yg_release(shifted);
    yg_release(e);
    return st;
}

yg_status yg__composite_cumsum_backward(const yg_tensor *grad, int64_t dim, yg_tensor **out) {
    yg_tensor *flipped = NULL, *summed = NULL;
    yg_status st;

    *out = NULL;
    /* out_i = sum over j >= i of grad_j: a running sum from the end. */
    st = yg_flip(grad, &dim, 1, &flipped);
    if (st == YG_OK)
        st = yg_cumsum(flipped, dim, &summed);
    if (st == YG_OK)
        st = yg_flip(summed, &dim, 1, out);
    yg_release(flipped);
    yg_release(summed);
    return st;
}

/* The gradient of max.dim and min.dim: zeros of sizes with grad placed at
 * indices along dim, so it reaches the one selected element (as in
 * PyTorch) rather than being split between ties.  Built from unsqueeze
 * and gather_backward, so it is differentiable again. */
yg_status yg__composite_value_selecting_reduction_backward(const yg_tensor *grad,
                                                           int64_t dim,
                                                           const yg_tensor *indices,
                                                           const int64_t *sizes,
                                                           int64_t sizes_len,
                                                           bool keepdim,
                                                           yg_tensor **out) {
    yg_tensor *g = NULL, *idx = NULL;
    yg_status st;

    *out = NULL;
    if (dim < 0)
        dim += sizes_len > 0 ? sizes_len : 1;
    if (keepdim) {
        g = yg_retain((yg_tensor *)grad);
        idx = yg_retain((yg_tensor *)indices);
        st = YG_OK;
    } else {
        st = yg_unsqueeze(grad, dim, &g);
        if (st == YG_OK)
            st = yg_unsqueeze(indices, dim, &idx);
    }
    if (st == YG_OK)
        st = yg_gather_backward(g, sizes, sizes_len, dim, idx, out);
    yg_release(g);
    yg_release(idx);
    return st;
}
