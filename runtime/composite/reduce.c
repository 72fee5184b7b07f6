/*
 * composite/reduce.c - the gradients of the reductions, written with public
 * ops so that they are differentiable themselves (double backward):
 * sum_backward, mean_backward and sum_to.
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
#include "yagrad/ops.h"

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
    for (int64_t d = 0; d < sizes_len; d++) {
        if (reduced[d])
            count *= sizes[d];
    }
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
