/*
 * composite/shape.c - shape ops written with other ops: reshape, flatten,
 * contiguous, narrow, repeat, stack, and the gradients of permute
 * and constant_pad_nd.
 *
 * reshape: a view when the input's strides allow one, otherwise a
 * contiguous copy (clone) viewed with the new shape.
 *
 * A contiguous input always takes the view path, so reshape never copies
 * what view could share; a non-contiguous one tries view first, because
 * many reshapes of strided tensors (splitting a dim, merging dims that are
 * contiguous with each other) still need no copy.  Autograd sees view or
 * clone + view and differentiates through them.  Errors of the inner ops
 * pass through with their own names (e.g. "view: size [4, 2] is invalid
 * for input [2, 3] with 6 elements").
 */
#include "composite/composite.h"
#include "decls/join_split.h"
#include "decls/padding.h"
#include "decls/slicing.h"
#include "decls/views.h"
#include "yagrad/ops_join_split.h"
#include "yagrad/ops_padding.h"
#include "yagrad/ops_slicing.h"
#include "yagrad/ops_views.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

yg_status yg__composite_reshape(const yg_tensor *self,
                                const int64_t *shape,
                                int64_t shape_len,
                                yg_tensor **out) {
    yg_tensor *copy = NULL;
    yg_status st;

    *out = NULL;
    st = yg_view(self, shape, shape_len, out);
    if (st != YG_ERR_SHAPE || yg_tensor_is_contiguous(self))
        return st;
    /* The view needed a gap merged (or the shape is wrong, which the view
     * of the copy reports again); copy and view the copy. */
    st = yg_clone(self, &copy);
    if (st != YG_OK)
        goto out;
    st = yg_view(copy, shape, shape_len, out);
out:
    yg_release(copy);
    return st;
}

yg_status yg__composite_permute_backward(const yg_tensor *grad,
                                         const int64_t *dims,
                                         int64_t dims_len,
                                         yg_tensor **out) {
    int64_t inverse[YG_MAX_DIMS];
    int64_t ndim = yg_tensor_ndim(grad);

    *out = NULL;
    if (dims_len != ndim || (dims_len > 0 && dims == NULL))
        return yg__fail(YG_ERR_SHAPE,
                        "dims has %" PRId64 " entries but grad has %" PRId64 " dims",
                        dims_len,
                        ndim);
    for (int64_t i = 0; i < ndim; i++)
        inverse[i] = -1;
    for (int64_t i = 0; i < dims_len; i++) {
        int64_t d = dims[i] < 0 ? dims[i] + ndim : dims[i];
        if (d < 0 || d >= ndim || inverse[d] >= 0)
            return yg__fail(
                YG_ERR_INVALID_ARGUMENT, "dims is not a permutation of %" PRId64 " dims", ndim);
        inverse[d] = i;
    }
    return yg_permute(grad, inverse, ndim, out);
}

yg_status yg__composite_narrow(const yg_tensor *self,
                               int64_t dim,
                               int64_t start,
                               int64_t length,
                               yg_tensor **out) {
    int64_t ndim = yg_tensor_ndim(self), d = dim < 0 ? dim + ndim : dim;
    char buf[128];

    *out = NULL;
    if (ndim == 0 || d < 0 || d >= ndim)
        return yg__fail(YG_ERR_INDEX,
                        "dim %" PRId64 " out of range for self %s",
                        dim,
                        yg_tensor_format_sizes(self, buf, sizeof buf));
    int64_t size = yg_tensor_sizes(self)[d];
    if (start < -size || start > size)
        return yg__fail(YG_ERR_INDEX,
                        "start %" PRId64 " out of range for dim %" PRId64 " of size %" PRId64,
                        start,
                        d,
                        size);
    if (start < 0)
        start += size;
    /* start is in [0, size]: size - start cannot overflow, start + length
     * could. */
    if (length < 0 || length > size - start)
        return yg__fail(YG_ERR_INDEX,
                        "start %" PRId64 " + length %" PRId64 " exceeds dim %" PRId64
                        " of size %" PRId64,
                        start,
                        length,
                        d,
                        size);
    return yg_slice(self, d, start, start + length, 1, out);
}

yg_status
yg__composite_flatten(const yg_tensor *self, int64_t start_dim, int64_t end_dim, yg_tensor **out) {
    int64_t ndim = yg_tensor_ndim(self), n = ndim > 0 ? ndim : 1;
    int64_t s = start_dim < 0 ? start_dim + n : start_dim, e = end_dim < 0 ? end_dim + n : end_dim;
    int64_t shape[YG_MAX_DIMS], len = 0;
    const int64_t *sizes = yg_tensor_sizes(self);

    *out = NULL;
    if (s < 0 || s >= n || e < 0 || e >= n)
        return yg__fail(YG_ERR_INDEX,
                        "start_dim %" PRId64 " or end_dim %" PRId64 " out of range for %" PRId64
                        " dims",
                        start_dim,
                        end_dim,
                        ndim);
    if (s > e)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "start_dim %" PRId64 " comes after end_dim %" PRId64,
                        start_dim,
                        end_dim);
    if (ndim == 0) {
        shape[0] = 1; /* a 0-dim tensor flattens to [1], as in PyTorch */
        return yg_reshape(self, shape, 1, out);
    }
    for (int64_t d = 0; d < s; d++)
        shape[len++] = sizes[d];
    /* The merged dim of an empty self may not fit (sizes.h). */
    shape[len] = yg__sizes_product(sizes + s, e - s + 1);
    if (shape[len] < 0) {
        char buf[128];
        return yg__fail(YG_ERR_SHAPE,
                        "dims %" PRId64 " to %" PRId64 " of self %s have more than 2^59 elements",
                        s,
                        e,
                        yg_tensor_format_sizes(self, buf, sizeof buf));
    }
    len++;
    for (int64_t d = e + 1; d < ndim; d++)
        shape[len++] = sizes[d];
    return yg_reshape(self, shape, len, out);
}

yg_status yg__composite_contiguous(const yg_tensor *self, yg_tensor **out) {
    *out = NULL;
    if (yg_tensor_is_contiguous(self)) {
        *out = yg_retain((yg_tensor *)self);
        return YG_OK;
    }
    return yg_clone(self, out);
}

/* self [a, b] repeated [r0, r1]: viewed as [1, a, 1, b], expanded to
 * [r0, a, r1, b] (no copy) and reshaped (one copy) to [r0 a, r1 b]. */
/* Repeats dim `dim` of x r times, through x viewed as [A, 1, s, B] (A the
 * dims before, s = size(x, dim), B the dims after) expanded to
 * [A, r, s, B]: at most four dims whatever x's rank, for the calls whose
 * pairs would not fit in YG_MAX_DIMS. */
static yg_status repeat_dim(const yg_tensor *x, int64_t dim, int64_t r, yg_tensor **out) {
    const int64_t *sizes = yg_tensor_sizes(x);
    int64_t ndim = yg_tensor_ndim(x), a = 1, b = 1, result[YG_MAX_DIMS];
    yg_tensor *v = NULL, *e = NULL;
    yg_status st;

    /* r * sizes[dim] fits (yg__composite_repeat checked it); a and b,
     * the products before and after dim, may not for an empty x. */
    a = yg__sizes_product(sizes, dim);
    b = yg__sizes_product(sizes + dim + 1, ndim - dim - 1);
    if (a < 0 || b < 0) {
        char buf[128];
        return yg__fail(YG_ERR_SHAPE,
                        "self %s has more than 2^59 elements around dim %" PRId64,
                        yg_tensor_format_sizes(x, buf, sizeof buf),
                        dim);
    }
    for (int64_t i = 0; i < ndim; i++)
        result[i] = i == dim ? r * sizes[i] : sizes[i];
    st = yg_reshape(x, (const int64_t[]){a, 1, sizes[dim], b}, 4, &v);
    if (st == YG_OK)
        st = yg_expand(v, (const int64_t[]){a, r, sizes[dim], b}, 4, &e);
    if (st == YG_OK)
        st = yg_reshape(e, result, ndim, out);
    yg_release(v);
    yg_release(e);
    return st;
}

yg_status yg__composite_repeat(const yg_tensor *self,
                               const int64_t *repeats,
                               int64_t repeats_len,
                               yg_tensor **out) {
    int64_t ndim = yg_tensor_ndim(self), lead = repeats_len - ndim;
    int64_t split[YG_MAX_DIMS], expanded[YG_MAX_DIMS], result[YG_MAX_DIMS];
    int64_t n_split = 0;
    const int64_t *sizes = yg_tensor_sizes(self);
    yg_tensor *v = NULL, *e = NULL;
    char buf[160];
    yg_status st;

    *out = NULL;
    if (repeats_len > 0 && repeats == NULL)
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "repeats is NULL with length %" PRId64, repeats_len);
    if (lead < 0 || repeats_len > YG_MAX_DIMS)
        return yg__fail(YG_ERR_SHAPE,
                        "repeats %s must have between %" PRId64
                        " (the dims of self) and %d entries",
                        yg__format_sizes(repeats, repeats_len, buf, sizeof buf),
                        ndim,
                        YG_MAX_DIMS);
    bool fits = true;
    for (int64_t i = 0; i < repeats_len; i++) {
        int64_t size = i < lead ? 1 : sizes[i - lead];
        if (repeats[i] < 0)
            return yg__fail(YG_ERR_SHAPE,
                            "repeats %s has a negative entry",
                            yg__format_sizes(repeats, repeats_len, buf, sizeof buf));
        /* Dim i becomes the pair (repeats[i], size), expanded from
         * (1, size); a dim repeated once needs no pair. */
        if (repeats[i] != 1) {
            if (n_split + 2 > YG_MAX_DIMS) {
                fits = false;
            } else {
                split[n_split] = 1;
                expanded[n_split++] = repeats[i];
            }
        }
        if (n_split + 1 > YG_MAX_DIMS) {
            fits = false;
        } else {
            split[n_split] = size;
            expanded[n_split++] = size;
        }
        if (size != 0 && repeats[i] > INT64_MAX / size)
            return yg__fail(YG_ERR_SHAPE,
                            "repeats %s: %" PRId64 " x %" PRId64 " elements along dim %" PRId64
                            " do not fit in int64",
                            yg__format_sizes(repeats, repeats_len, buf, sizeof buf),
                            repeats[i],
                            size,
                            i);
        result[i] = repeats[i] * size;
    }
    if (!fits) {
        /* More dims than a tensor may have: one dim at a time. */
        for (int64_t i = 0; i < repeats_len; i++)
            split[i] = i < lead ? 1 : sizes[i - lead];
        st = yg_reshape(self, split, repeats_len, &v);
        for (int64_t i = 0; i < repeats_len && st == YG_OK; i++) {
            if (repeats[i] == 1)
                continue;
            st = repeat_dim(v, i, repeats[i], &e);
            yg_release(v);
            v = e;
            e = NULL;
        }
        if (st == YG_OK)
            *out = yg_retain(v);
        goto out;
    }
    /* A view needs the pairs to be splits of self's dims, which reshape
     * gives for any layout (copying only when it must). */
    st = yg_reshape(self, split, n_split, &v);
    if (st != YG_OK)
        goto out;
    st = yg_expand(v, expanded, n_split, &e);
    if (st != YG_OK)
        goto out;
    st = yg_reshape(e, result, repeats_len, out);
out:
    yg_release(v);
    yg_release(e);
    return st;
}

yg_status yg__composite_constant_pad_nd_backward(const yg_tensor *grad,
                                                 const int64_t *pad,
                                                 int64_t pad_len,
                                                 yg_tensor **out) {
    int64_t negated[2 * YG_MAX_DIMS];

    *out = NULL;
    if (pad_len > 2 * YG_MAX_DIMS || (pad_len > 0 && pad == NULL))
        return yg__fail(YG_ERR_SHAPE,
                        "pad has %" PRId64 " entries, at most %d are supported",
                        pad_len,
                        2 * YG_MAX_DIMS);
    /* Padding by -pad crops what the padding added and re-adds (as
     * zeros) what a negative pad cropped. */
    for (int64_t i = 0; i < pad_len; i++) {
        /* Bounded like sizes (sizes.h): -INT64_MIN does not exist. */
        if (pad[i] < -YG__MAX_NUMEL || pad[i] > YG__MAX_NUMEL) {
            char buf[2 * YG_MAX_DIMS * 22];
            return yg__fail(YG_ERR_SHAPE,
                            "pad %s has an entry beyond 2^59",
                            yg__format_sizes(pad, pad_len, buf, sizeof buf));
        }
        negated[i] = -pad[i];
    }
    return yg_constant_pad_nd(grad, negated, pad_len, 0, out);
}

yg_status yg__composite_stack(const yg_tensor *const *tensors,
                              int64_t tensors_len,
                              int64_t dim,
                              yg_tensor **out) {
    yg_tensor **parts;
    char abuf[128], bbuf[128];
    yg_status st = YG_OK;

    *out = NULL;
    if (tensors_len < 1 || tensors == NULL)
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "expected at least one tensor, got %" PRId64, tensors_len);
    for (int64_t i = 0; i < tensors_len; i++) {
        if (tensors[i] == NULL)
            return yg__fail(YG_ERR_INVALID_ARGUMENT, "tensor %" PRId64 " is NULL", i);
        int64_t n = yg_tensor_ndim(tensors[i]);
        if (n != yg_tensor_ndim(tensors[0]) || memcmp(yg_tensor_sizes(tensors[i]),
                                                      yg_tensor_sizes(tensors[0]),
                                                      sizeof(int64_t) * (size_t)n) != 0)
            return yg__fail(YG_ERR_SHAPE,
                            "tensor %" PRId64 " %s does not have the sizes of tensor 0 %s",
                            i,
                            yg_tensor_format_sizes(tensors[i], abuf, sizeof abuf),
                            yg_tensor_format_sizes(tensors[0], bbuf, sizeof bbuf));
    }
    parts = calloc((size_t)tensors_len, sizeof *parts);
    if (parts == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "out of memory for %" PRId64 " tensors", tensors_len);
    for (int64_t i = 0; i < tensors_len && st == YG_OK; i++)
        st = yg_unsqueeze(tensors[i], dim, &parts[i]);
    if (st == YG_OK)
        st = yg_cat((const yg_tensor *const *)parts, tensors_len, dim, out);
    for (int64_t i = 0; i < tensors_len; i++)
        yg_release(parts[i]);
    free(parts);
    return st;
}
