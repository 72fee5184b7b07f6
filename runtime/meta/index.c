/*
 * meta/index.c - the meta functions of the ops that address elements
 * through an int64 index tensor (meta/meta.h): index_select, gather,
 * scatter, scatter_add, embedding and their gradients.  Every index is
 * checked against the size it addresses, on a host copy for a GPU's, so
 * no implementation ever sees a bad one; the results are contiguous (the
 * scatters': a copy of self; the gradients': zeros).
 */
#include "decls/indexing.h"
#include "decls/layers.h"
#include "meta/meta.h"

#include "core/core.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The coordinates c of flat (row-major) element i of sizes[0..ndim). */
static void coords_of(int64_t i, const int64_t *sizes, int32_t ndim, int64_t *c) {
    for (int32_t d = ndim - 1; d >= 0; d--) {
        c[d] = sizes[d] > 0 ? i % sizes[d] : 0;
        i = sizes[d] > 0 ? i / sizes[d] : 0;
    }
}

/* The element of t at coordinates c, with c[dim] replaced by k (dim -1:
 * none). */
static char *elem_at(const yg_tensor *t, const int64_t *c, int64_t dim, int64_t k) {
    int64_t off = 0;
    for (int32_t d = 0; d < t->ndim; d++)
        off += (d == dim ? k : c[d]) * t->strides[d];
    return yg__tensor_ptr(t) + off * (int64_t)yg_dtype_size(t->dtype);
}

static int64_t numel(const yg_tensor *t) {
    return yg_tensor_numel(t); /* a 0 first: fits (sizes.h) */
}

static yg_status check_index_dtype(const char *op, const yg_tensor *index) {
    if (index->dtype != YG_INT64)
        return yg__fail(YG_ERR_DTYPE,
                        "%s: expected index of dtype int64, got %s",
                        op,
                        yg_dtype_name(index->dtype));
    return YG_OK;
}

/* Checks every element of index against [0, size); a GPU's on a host
 * copy, so no kernel ever sees a bad index. */
static yg_status
check_index_values(const char *op, const yg_tensor *index, int64_t size, int64_t dim) {
    int64_t c[YG_MAX_DIMS], n = numel(index);
    yg_tensor *host = NULL;
    yg_status st = YG_OK;
    YG_RETURN_IF_ERROR(yg_tensor_to_device(index, YG_CPU, 0, &host));
    if (yg_tensor_is_contiguous(host)) {
        /* the common case: one pass over the values (in parallel when
         * long); the walk below then only runs to name a bad one */
        const int64_t *v = (const int64_t *)yg__tensor_ptr(host);
        uint64_t bad = 0;
        /* one unsigned comparison catches negatives too */
#pragma omp parallel for schedule(static) reduction(| : bad) if (n >= 65536)
        for (int64_t i = 0; i < n; i++)
            bad |= (uint64_t)v[i] >= (uint64_t)size;
        if (!bad) {
            yg_release(host);
            return YG_OK;
        }
    }
    for (int64_t i = 0; i < n && st == YG_OK; i++) {
        coords_of(i, host->sizes, host->ndim, c);
        int64_t k = *(const int64_t *)elem_at(host, c, -1, 0);
        if (k < 0 || k >= size)
            st = yg__fail(YG_ERR_INDEX,
                          "%s: index %" PRId64 " out of range for dim %" PRId64 " of size %" PRId64,
                          op,
                          k,
                          dim,
                          size);
    }
    yg_release(host);
    return st;
}

/* The size of dim d of t, treating a 0-dim t as [1]. */
static int64_t size_or_1(const yg_tensor *t, int64_t d) {
    return t->ndim == 0 ? 1 : t->sizes[d];
}

/* The checks shared by gather and the scatters: index is int64 with
 * self's number of dims, no larger than limit (src, or self outside dim)
 * in any dim, and every value addresses dim d of self. */
static yg_status check_gather_scatter(const char *op,
                                      const yg_tensor *self,
                                      int64_t dim,
                                      const yg_tensor *index,
                                      const yg_tensor *src,
                                      int64_t *d) {
    char sbuf[128], ibuf[128], rbuf[128];

    YG_RETURN_IF_ERROR(check_index_dtype(op, index));
    YG_RETURN_IF_ERROR(yg__wrap_dim(op, "self", dim, self->ndim, d));
    if (index->ndim != self->ndim)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: index %s must have as many dims as self %s",
                        op,
                        yg__format_sizes(index->sizes, index->ndim, ibuf, sizeof ibuf),
                        yg__format_sizes(self->sizes, self->ndim, sbuf, sizeof sbuf));
    for (int32_t i = 0; i < index->ndim; i++) {
        if (i != *d && index->sizes[i] > self->sizes[i])
            return yg__fail(YG_ERR_SHAPE,
                            "%s: index %s is larger than self %s in dim %d",
                            op,
                            yg__format_sizes(index->sizes, index->ndim, ibuf, sizeof ibuf),
                            yg__format_sizes(self->sizes, self->ndim, sbuf, sizeof sbuf),
                            (int)i);
    }
    if (src != NULL) {
        if (src->dtype != self->dtype)
            return yg__fail(YG_ERR_DTYPE,
                            "%s: expected src of dtype %s (that of self), got %s",
                            op,
                            yg_dtype_name(self->dtype),
                            yg_dtype_name(src->dtype));
        if (src->ndim != index->ndim)
            return yg__fail(YG_ERR_SHAPE,
                            "%s: src %s must have as many dims as index %s",
                            op,
                            yg__format_sizes(src->sizes, src->ndim, rbuf, sizeof rbuf),
                            yg__format_sizes(index->sizes, index->ndim, ibuf, sizeof ibuf));
        for (int32_t i = 0; i < index->ndim; i++) {
            if (index->sizes[i] > src->sizes[i])
                return yg__fail(YG_ERR_SHAPE,
                                "%s: index %s is larger than src %s in dim %d",
                                op,
                                yg__format_sizes(index->sizes, index->ndim, ibuf, sizeof ibuf),
                                yg__format_sizes(src->sizes, src->ndim, rbuf, sizeof rbuf),
                                (int)i);
        }
    }
    return check_index_values(op, index, size_or_1(self, *d), *d);
}

/* weight must be [V, D]; every index in [0, V). */
static yg_status
embedding_check(const char *op, const int64_t *wsizes, int64_t wndim, const yg_tensor *indices) {
    char buf[128];

    YG_RETURN_IF_ERROR(check_index_dtype(op, indices));
    if (wndim != 2)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected weight of 2 dims [num_embeddings, embedding_dim], got %s",
                        op,
                        yg__format_sizes(wsizes, wndim, buf, sizeof buf));
    if (indices->ndim + 1 > YG_MAX_DIMS)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: indices %s have too many dims for a result with one more",
                        op,
                        yg__format_sizes(indices->sizes, indices->ndim, buf, sizeof buf));
    return check_index_values(op, indices, wsizes[0], 0);
}

yg_status yg__meta_index_select(const yg_tensor *self,
                                int64_t dim,
                                const yg_tensor *index,
                                yg_tensor **out) {
    int64_t sizes[YG_MAX_DIMS], d;
    char buf[128];

    *out = NULL;
    YG_RETURN_IF_ERROR(check_index_dtype("index_select", index));
    if (index->ndim > 1)
        return yg__fail(YG_ERR_SHAPE,
                        "index_select: expected index of 0 or 1 dims, got %s",
                        yg__format_sizes(index->sizes, index->ndim, buf, sizeof buf));
    if (self->ndim == 0)
        return yg__fail(YG_ERR_SHAPE,
                        "index_select: self must have at least 1 dim, got a 0-dim self");
    YG_RETURN_IF_ERROR(yg__wrap_dim("index_select", "self", dim, self->ndim, &d));
    YG_RETURN_IF_ERROR(check_index_values("index_select", index, self->sizes[d], d));
    memcpy(sizes, self->sizes, sizeof sizes);
    sizes[d] = numel(index);
    return yg__tensor_new_on("index_select",
                             sizes,
                             self->ndim,
                             self->dtype,
                             self->storage->device,
                             self->storage->device_index,
                             out);
}

yg_status yg__meta_index_select_backward(const yg_tensor *grad_output,
                                         const int64_t *self_sizes,
                                         int64_t self_sizes_len,
                                         int64_t dim,
                                         const yg_tensor *index,
                                         yg_tensor **out) {
    int64_t d;
    char gbuf[128], sbuf[128];
    yg_tensor *res = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(check_index_dtype("index_select_backward", index));
    YG_RETURN_IF_ERROR(yg__check_not_half("index_select_backward", "grad_output", grad_output));
    YG_RETURN_IF_ERROR(yg__tensor_zeros_on("index_select_backward",
                                           self_sizes,
                                           self_sizes_len,
                                           grad_output->dtype,
                                           grad_output->storage->device,
                                           grad_output->storage->device_index,
                                           &res));
    if (res->ndim == 0 || grad_output->ndim != res->ndim) {
        st = yg__fail(YG_ERR_SHAPE,
                      "index_select_backward: grad_output %s does not fit self_sizes %s",
                      yg__format_sizes(grad_output->sizes, grad_output->ndim, gbuf, sizeof gbuf),
                      yg__format_sizes(self_sizes, self_sizes_len, sbuf, sizeof sbuf));
        goto out;
    }
    st = yg__wrap_dim("index_select_backward", "grad_output", dim, grad_output->ndim, &d);
    if (st != YG_OK)
        goto out;
    for (int32_t i = 0; i < grad_output->ndim; i++) {
        int64_t want = i == d ? numel(index) : res->sizes[i];
        if (grad_output->sizes[i] != want) {
            st =
                yg__fail(YG_ERR_SHAPE,
                         "index_select_backward: grad_output %s does not fit self_sizes %s",
                         yg__format_sizes(grad_output->sizes, grad_output->ndim, gbuf, sizeof gbuf),
                         yg__format_sizes(self_sizes, self_sizes_len, sbuf, sizeof sbuf));
            goto out;
        }
    }
    st = check_index_values("index_select_backward", index, res->sizes[d], d);
    if (st != YG_OK)
        goto out;
    *out = res;
    return YG_OK;
out:
    yg_release(res);
    return st;
}

yg_status
yg__meta_gather(const yg_tensor *self, int64_t dim, const yg_tensor *index, yg_tensor **out) {
    int64_t d;

    *out = NULL;
    YG_RETURN_IF_ERROR(check_gather_scatter("gather", self, dim, index, NULL, &d));
    return yg__tensor_new_on("gather",
                             index->sizes,
                             index->ndim,
                             self->dtype,
                             self->storage->device,
                             self->storage->device_index,
                             out);
}

/* The scatters: their checks, then a contiguous copy of self. */
static yg_status scatter_meta(const char *op,
                              const yg_tensor *self,
                              int64_t dim,
                              const yg_tensor *index,
                              const yg_tensor *src,
                              bool add,
                              yg_tensor **out) {
    int64_t d;

    *out = NULL;
    if (add)
        YG_RETURN_IF_ERROR(yg__check_not_half(op, "self", self));
    YG_RETURN_IF_ERROR(check_gather_scatter(op, self, dim, index, src, &d));
    return yg__tensor_contiguous_as(self, self->dtype, false, out);
}

yg_status yg__meta_scatter(const yg_tensor *self,
                           int64_t dim,
                           const yg_tensor *index,
                           const yg_tensor *src,
                           yg_tensor **out) {
    return scatter_meta("scatter", self, dim, index, src, false, out);
}

yg_status yg__meta_scatter_value(const yg_tensor *self,
                                 int64_t dim,
                                 const yg_tensor *index,
                                 double value,
                                 yg_tensor **out) {
    (void)value;
    return scatter_meta("scatter", self, dim, index, NULL, false, out);
}

yg_status yg__meta_scatter_add(const yg_tensor *self,
                               int64_t dim,
                               const yg_tensor *index,
                               const yg_tensor *src,
                               yg_tensor **out) {
    return scatter_meta("scatter_add", self, dim, index, src, true, out);
}

yg_status yg__meta_gather_backward(const yg_tensor *grad_output,
                                   const int64_t *self_sizes,
                                   int64_t self_sizes_len,
                                   int64_t dim,
                                   const yg_tensor *index,
                                   yg_tensor **out) {
    yg_tensor *zeros = NULL;
    char gbuf[128], ibuf[128];
    int64_t d;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_not_half("gather_backward", "grad_output", grad_output));
    if (grad_output->ndim != index->ndim ||
        memcmp(grad_output->sizes, index->sizes, sizeof(int64_t) * (size_t)grad_output->ndim) != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "gather_backward: grad_output %s must have the sizes of index %s",
                        yg__format_sizes(grad_output->sizes, grad_output->ndim, gbuf, sizeof gbuf),
                        yg__format_sizes(index->sizes, index->ndim, ibuf, sizeof ibuf));
    YG_RETURN_IF_ERROR(yg__tensor_zeros_on("gather_backward",
                                           self_sizes,
                                           self_sizes_len,
                                           grad_output->dtype,
                                           grad_output->storage->device,
                                           grad_output->storage->device_index,
                                           &zeros));
    st = check_gather_scatter("gather_backward", zeros, dim, index, grad_output, &d);
    if (st != YG_OK) {
        yg_release(zeros);
        return st;
    }
    *out = zeros;
    return YG_OK;
}

yg_status yg__meta_embedding(const yg_tensor *weight,
                             const yg_tensor *indices,
                             int64_t padding_idx,
                             yg_tensor **out) {
    int64_t sizes[YG_MAX_DIMS];

    *out = NULL;
    (void)padding_idx; /* only the gradient treats the padding row apart */
    YG_RETURN_IF_ERROR(embedding_check("embedding", weight->sizes, weight->ndim, indices));
    for (int32_t d = 0; d < indices->ndim; d++)
        sizes[d] = indices->sizes[d];
    sizes[indices->ndim] = weight->sizes[1];
    return yg__tensor_new_on("embedding",
                             sizes,
                             indices->ndim + 1,
                             weight->dtype,
                             weight->storage->device,
                             weight->storage->device_index,
                             out);
}

yg_status yg__meta_embedding_backward(const yg_tensor *grad_output,
                                      const yg_tensor *indices,
                                      const int64_t *weight_sizes,
                                      int64_t weight_sizes_len,
                                      int64_t padding_idx,
                                      yg_tensor **out) {
    char gbuf[128], ibuf[128];

    *out = NULL;
    (void)padding_idx;
    YG_RETURN_IF_ERROR(yg__check_not_half("embedding_backward", "grad_output", grad_output));
    YG_RETURN_IF_ERROR(
        embedding_check("embedding_backward", weight_sizes, weight_sizes_len, indices));
    int64_t dim = weight_sizes[1];
    bool fits = grad_output->ndim == indices->ndim + 1 && grad_output->sizes[indices->ndim] == dim;
    for (int32_t d = 0; fits && d < indices->ndim; d++)
        fits = grad_output->sizes[d] == indices->sizes[d];
    if (!fits)
        return yg__fail(YG_ERR_SHAPE,
                        "embedding_backward: grad_output %s does not match indices %s with "
                        "embedding_dim %" PRId64,
                        yg__format_sizes(grad_output->sizes, grad_output->ndim, gbuf, sizeof gbuf),
                        yg__format_sizes(indices->sizes, indices->ndim, ibuf, sizeof ibuf),
                        dim);
    return yg__tensor_zeros_on("embedding_backward",
                               weight_sizes,
                               2,
                               grad_output->dtype,
                               grad_output->storage->device,
                               grad_output->storage->device_index,
                               out);
}
