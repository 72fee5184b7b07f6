/*
 * index.c - ops that address elements through an int64 index tensor:
 * index_select, gather, scatter (from a tensor or a value), scatter_add,
 * embedding, and the gradients of index_select, gather and embedding (an
 * index-add and scatter-adds into zeros; embedding's skips the rows of
 * padding_idx).
 *
 * Every kernel checks every index against the size it addresses before
 * it writes anything, so a bad index fails with YG_ERR_INDEX naming the
 * offending value instead of reading or writing out of bounds.  Inputs
 * are read through their strides (no contiguous copy); results are new
 * contiguous tensors.  The walks are one flat loop over the index (or
 * output) elements whose coordinates are recovered by division: these
 * ops are memory-bound gathers, and the division is cheap next to the
 * scattered load.
 *
 * Copies move elements as bytes, so every dtype works; the adding
 * kernels (scatter_add and the two gradients) add in the element's own
 * type, and bool adds as logical or.
 *
 * index_select, embedding, gather, the scatters and their gradients serve
 * both devices: a GPU's
 * indices are checked on a host copy, then cuda/index.c gathers, or adds
 * in the CPU's order (deterministic, bit for bit).
 */
#include "cpu/cpu.h"
#include "cuda/backend.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Adds the element at src into the element at dst (both of dtype). */
typedef void (*add_elem_fn)(char *dst, const char *src);

static void add_f32(char *dst, const char *src) {
    *(float *)dst += *(const float *)src;
}
static void add_f64(char *dst, const char *src) {
    *(double *)dst += *(const double *)src;
}
static void add_i64(char *dst, const char *src) {
    *(int64_t *)dst += *(const int64_t *)src;
}
static void add_b8(char *dst, const char *src) {
    *(bool *)dst = *(bool *)dst || *(const bool *)src;
}
static void add_i32(char *dst, const char *src) {
    /* Unsigned: overflow wraps instead of being undefined. */
    *(int32_t *)dst = (int32_t)((uint32_t) * (int32_t *)dst + (uint32_t) * (const int32_t *)src);
}

/* float16 and bfloat16 have no adder of their own: the callers refuse
 * them first (yg__check_not_half). */
static add_elem_fn add_for(yg_dtype dtype) {
    switch (dtype) {
    case YG_FLOAT32:
        return add_f32;
    case YG_FLOAT64:
        return add_f64;
    case YG_INT64:
        return add_i64;
    case YG_INT32:
        return add_i32;
    default:
        return add_b8;
    }
}

/* Coordinates of the i-th element (row-major) of a tensor of sizes. */
static void coords_of(int64_t i, const int64_t *sizes, int32_t ndim, int64_t *c) {
    for (int32_t d = ndim - 1; d >= 0; d--) {
        c[d] = sizes[d] > 0 ? i % sizes[d] : 0;
        i = sizes[d] > 0 ? i / sizes[d] : 0;
    }
}

/* Byte address of the element of t at coordinates c, with c[dim]
 * replaced by k when dim >= 0. */
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

/* The [outer, size, inner] split of sizes at dim d (outer and inner are
 * parts of a tensor's element count: they fit). */
static void
split_sizes(const int64_t *sizes, int32_t ndim, int64_t d, int64_t *outer, int64_t *inner) {
    *outer = 1;
    *inner = 1;
    for (int32_t k = 0; k < ndim; k++) {
        if (k < d)
            *outer *= sizes[k];
        else if (k > d)
            *inner *= sizes[k];
    }
}

/* The size of dim d of t, treating a 0-dim t as [1]. */
static int64_t size_or_1(const yg_tensor *t, int64_t d) {
    return t->ndim == 0 ? 1 : t->sizes[d];
}

/* ---- index_select ---- */

yg_status yg__kernel_index_select(const yg_tensor *self,
                                  int64_t dim,
                                  const yg_tensor *index,
                                  yg_tensor **out) {
    int64_t sizes[YG_MAX_DIMS], c[YG_MAX_DIMS], d;
    char buf[128];
    yg_tensor *res = NULL;

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
    YG_RETURN_IF_ERROR(yg__tensor_new_on("index_select",
                                         sizes,
                                         self->ndim,
                                         self->dtype,
                                         self->storage->device,
                                         self->storage->device_index,
                                         &res));
    if (self->storage->device == YG_CUDA) {
        int64_t outer, inner;
        split_sizes(self->sizes, self->ndim, d, &outer, &inner);
        yg_status st =
            yg_tensor_numel(res) == 0
                ? YG_OK
                : yg__cuda()->gather("index_select", self, outer, self->sizes[d], inner, index, res);
        if (st != YG_OK) {
            yg_release(res);
            return st;
        }
        *out = res;
        return YG_OK;
    }
    size_t esize = yg_dtype_size(self->dtype);
    int64_t n = numel(res);
    char *dst = yg__tensor_ptr(res);
    for (int64_t i = 0; i < n; i++) {
        coords_of(i, sizes, self->ndim, c);
        int64_t ic[1] = {c[d]};
        int64_t k = *(const int64_t *)elem_at(index, ic, -1, 0);
        memcpy(dst + (size_t)i * esize, elem_at(self, c, d, k), esize);
    }
    *out = res;
    return YG_OK;
}

yg_status yg__kernel_index_select_backward(const yg_tensor *grad_output,
                                           const int64_t *self_sizes,
                                           int64_t self_sizes_len,
                                           int64_t dim,
                                           const yg_tensor *index,
                                           yg_tensor **out) {
    int64_t c[YG_MAX_DIMS], d;
    char gbuf[128], sbuf[128];
    yg_tensor *res = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(check_index_dtype("index_select_backward", index));
    YG_RETURN_IF_ERROR(yg__check_not_half("index_select_backward", "grad_output", grad_output));
    st = yg__full_on("index_select_backward",
                     self_sizes,
                     self_sizes_len,
                     grad_output->dtype,
                     grad_output->storage->device,
                     grad_output->storage->device_index,
                     0.0,
                     &res);
    if (st != YG_OK)
        return st;
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
    if (res->storage->device == YG_CUDA) {
        int64_t outer, inner;
        split_sizes(res->sizes, res->ndim, d, &outer, &inner);
        if (yg_tensor_numel(grad_output) > 0)
            st = yg__cuda()->index_add(
                "index_select_backward", grad_output, outer, res->sizes[d], inner, index, -1, res);
        if (st != YG_OK)
            goto out;
        *out = res;
        res = NULL;
        goto out;
    }
    add_elem_fn add = add_for(grad_output->dtype);
    int64_t n = numel(grad_output);
    for (int64_t i = 0; i < n; i++) {
        coords_of(i, grad_output->sizes, grad_output->ndim, c);
        int64_t ic[1] = {c[d]};
        int64_t k = *(const int64_t *)elem_at(index, ic, -1, 0);
        add(elem_at(res, c, d, k), elem_at(grad_output, c, -1, 0));
    }
    *out = res;
    res = NULL;
out:
    yg_release(res);
    return st;
}

/* ---- gather and scatter ---- */

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

enum scatter_mode { SCATTER_COPY, SCATTER_VALUE, SCATTER_ADD };

/* value converted once to dtype, into buf (8 bytes). */
static void value_bytes(yg_dtype dtype, double value, char *vbuf) {
    switch (dtype) {
    case YG_FLOAT32: {
        float f = (float)value;
        memcpy(vbuf, &f, sizeof f);
        break;
    }
    case YG_FLOAT64:
        memcpy(vbuf, &value, sizeof value);
        break;
    case YG_INT64: {
        /* Saturating: (int64_t)-inf is undefined (fuzz_ops). */
        int64_t k = yg__i64_from_f64(value);
        memcpy(vbuf, &k, sizeof k);
        break;
    }
    case YG_INT32:
    case YG_FLOAT16:
    case YG_BFLOAT16:
        yg__store_f64_as(vbuf, dtype, value);
        break;
    default:
        vbuf[0] = value != 0;
        break;
    }
}

/* The GPU's gather (src is self) or scatter into res (contiguous, on the
 * GPU: a copy of self, or zeros) with cuda/scatter.cu, in the CPU's order;
 * index's values were checked. */
static yg_status scatter_cuda(const char *op,
                              bool is_gather,
                              yg_tensor *res,
                              int64_t d,
                              const yg_tensor *index,
                              const yg_tensor *src,
                              double value,
                              enum scatter_mode mode) {
    yg_tensor *ix = NULL, *sc = NULL;
    _Alignas(8) char vbuf[8];
    yg_status st = yg__tensor_contiguous_as(index, YG_INT64, true, &ix);
    if (st == YG_OK && src != NULL)
        st = yg__tensor_contiguous_as(src, src->dtype, true, &sc);
    if (mode == SCATTER_VALUE)
        value_bytes(res->dtype, value, vbuf);
    if (st == YG_OK)
        st = yg__cuda()->scatter(op,
                              is_gather,
                              (int)mode,
                              res,
                              sc,
                              mode == SCATTER_VALUE ? vbuf : NULL,
                              ix,
                              (int)d,
                              is_gather ? src : res);
    yg_release(ix);
    yg_release(sc);
    return st;
}

yg_status
yg__kernel_gather(const yg_tensor *self, int64_t dim, const yg_tensor *index, yg_tensor **out) {
    int64_t c[YG_MAX_DIMS], d;
    yg_tensor *res = NULL;

    *out = NULL;
    YG_RETURN_IF_ERROR(check_gather_scatter("gather", self, dim, index, NULL, &d));
    YG_RETURN_IF_ERROR(yg__tensor_new_on("gather",
                                         index->sizes,
                                         index->ndim,
                                         self->dtype,
                                         self->storage->device,
                                         self->storage->device_index,
                                         &res));
    if (self->storage->device == YG_CUDA) {
        yg_status st = scatter_cuda("gather", true, res, d, index, self, 0, SCATTER_COPY);
        if (st != YG_OK) {
            yg_release(res);
            return st;
        }
        *out = res;
        return YG_OK;
    }
    size_t esize = yg_dtype_size(self->dtype);
    int64_t n = numel(index);
    char *dst = yg__tensor_ptr(res);
    for (int64_t i = 0; i < n; i++) {
        coords_of(i, index->sizes, index->ndim, c);
        int64_t k = *(const int64_t *)elem_at(index, c, -1, 0);
        memcpy(dst + (size_t)i * esize, elem_at(self, c, self->ndim > 0 ? d : -1, k), esize);
    }
    *out = res;
    return YG_OK;
}

/* res (a contiguous copy of self, or zeros) receives src or value at the
 * positions index names, by copy or addition. */
static void scatter_into(yg_tensor *res,
                         int64_t d,
                         const yg_tensor *index,
                         const yg_tensor *src,
                         double value,
                         enum scatter_mode mode) {
    int64_t c[YG_MAX_DIMS];
    int64_t n = numel(index);
    size_t esize = yg_dtype_size(res->dtype);
    add_elem_fn add = add_for(res->dtype);
    _Alignas(8) char vbuf[8];

    if (mode == SCATTER_VALUE)
        value_bytes(res->dtype, value, vbuf);
    int64_t dd = res->ndim > 0 ? d : -1;
    for (int64_t i = 0; i < n; i++) {
        coords_of(i, index->sizes, index->ndim, c);
        int64_t k = *(const int64_t *)elem_at(index, c, -1, 0);
        char *dst = elem_at(res, c, dd, k);
        if (mode == SCATTER_VALUE)
            memcpy(dst, vbuf, esize);
        else if (mode == SCATTER_COPY)
            memcpy(dst, elem_at(src, c, -1, 0), esize);
        else
            add(dst, elem_at(src, c, -1, 0));
    }
}

static yg_status scatter(const char *op,
                         const yg_tensor *self,
                         int64_t dim,
                         const yg_tensor *index,
                         const yg_tensor *src,
                         double value,
                         enum scatter_mode mode,
                         yg_tensor **out) {
    int64_t d;
    yg_tensor *res = NULL;

    *out = NULL;
    if (mode == SCATTER_ADD)
        YG_RETURN_IF_ERROR(yg__check_not_half(op, "self", self));
    YG_RETURN_IF_ERROR(check_gather_scatter(op, self, dim, index, src, &d));
    YG_RETURN_IF_ERROR(yg__tensor_contiguous_as(self, self->dtype, false, &res));
    if (res->storage->device == YG_CUDA) {
        yg_status st = scatter_cuda(op, false, res, d, index, src, value, mode);
        if (st != YG_OK) {
            yg_release(res);
            return st;
        }
        *out = res;
        return YG_OK;
    }
    scatter_into(res, d, index, src, value, mode);
    *out = res;
    return YG_OK;
}

yg_status yg__kernel_scatter(const yg_tensor *self,
                             int64_t dim,
                             const yg_tensor *index,
                             const yg_tensor *src,
                             yg_tensor **out) {
    return scatter("scatter", self, dim, index, src, 0, SCATTER_COPY, out);
}

yg_status yg__kernel_scatter_value(const yg_tensor *self,
                                   int64_t dim,
                                   const yg_tensor *index,
                                   double value,
                                   yg_tensor **out) {
    return scatter("scatter", self, dim, index, NULL, value, SCATTER_VALUE, out);
}

yg_status yg__kernel_scatter_add(const yg_tensor *self,
                                 int64_t dim,
                                 const yg_tensor *index,
                                 const yg_tensor *src,
                                 yg_tensor **out) {
    return scatter("scatter_add", self, dim, index, src, 0, SCATTER_ADD, out);
}

yg_status yg__kernel_gather_backward(const yg_tensor *grad_output,
                                     const int64_t *self_sizes,
                                     int64_t self_sizes_len,
                                     int64_t dim,
                                     const yg_tensor *index,
                                     yg_tensor **out) {
    yg_tensor *zeros = NULL;
    yg_status st;
    char gbuf[128], ibuf[128];

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_not_half("gather_backward", "grad_output", grad_output));
    if (grad_output->ndim != index->ndim ||
        memcmp(grad_output->sizes, index->sizes, sizeof(int64_t) * (size_t)grad_output->ndim) != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "gather_backward: grad_output %s must have the sizes of index %s",
                        yg__format_sizes(grad_output->sizes, grad_output->ndim, gbuf, sizeof gbuf),
                        yg__format_sizes(index->sizes, index->ndim, ibuf, sizeof ibuf));
    st = yg__full_on("gather_backward",
                     self_sizes,
                     self_sizes_len,
                     grad_output->dtype,
                     grad_output->storage->device,
                     grad_output->storage->device_index,
                     0.0,
                     &zeros);
    if (st != YG_OK)
        return st;
    int64_t d;
    st = check_gather_scatter("gather_backward", zeros, dim, index, grad_output, &d);
    if (st == YG_OK && zeros->storage->device == YG_CUDA)
        st = scatter_cuda("gather_backward", false, zeros, d, index, grad_output, 0, SCATTER_ADD);
    if (st == YG_OK) {
        if (zeros->storage->device != YG_CUDA)
            scatter_into(zeros, d, index, grad_output, 0, SCATTER_ADD);
        *out = zeros;
        zeros = NULL;
    }
    yg_release(zeros);
    return st;
}

/* ---- embedding ---- */

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

yg_status yg__kernel_embedding(const yg_tensor *weight,
                               const yg_tensor *indices,
                               int64_t padding_idx,
                               yg_tensor **out) {
    int64_t sizes[YG_MAX_DIMS], c[YG_MAX_DIMS];
    yg_tensor *res = NULL;

    *out = NULL;
    (void)padding_idx; /* only the gradient treats the padding row apart */
    YG_RETURN_IF_ERROR(embedding_check("embedding", weight->sizes, weight->ndim, indices));
    int64_t dim = weight->sizes[1], n = numel(indices);
    for (int32_t d = 0; d < indices->ndim; d++)
        sizes[d] = indices->sizes[d];
    sizes[indices->ndim] = dim;
    YG_RETURN_IF_ERROR(yg__tensor_new_on("embedding",
                                         sizes,
                                         indices->ndim + 1,
                                         weight->dtype,
                                         weight->storage->device,
                                         weight->storage->device_index,
                                         &res));
    if (weight->storage->device == YG_CUDA) {
        yg_status st =
            yg_tensor_numel(res) == 0
                ? YG_OK
                : yg__cuda()->gather("embedding", weight, 1, weight->sizes[0], dim, indices, res);
        if (st != YG_OK) {
            yg_release(res);
            return st;
        }
        *out = res;
        return YG_OK;
    }
    size_t esize = yg_dtype_size(weight->dtype);
    char *dst = yg__tensor_ptr(res);
    for (int64_t i = 0; i < n; i++) {
        coords_of(i, indices->sizes, indices->ndim, c);
        int64_t row = *(const int64_t *)elem_at(indices, c, -1, 0);
        int64_t wc[2] = {row, 0};
        for (int64_t j = 0; j < dim; j++) {
            wc[1] = j;
            memcpy(dst + (size_t)(i * dim + j) * esize, elem_at(weight, wc, -1, 0), esize);
        }
    }
    *out = res;
    return YG_OK;
}

yg_status yg__kernel_embedding_backward(const yg_tensor *grad_output,
                                        const yg_tensor *indices,
                                        const int64_t *weight_sizes,
                                        int64_t weight_sizes_len,
                                        int64_t padding_idx,
                                        yg_tensor **out) {
    int64_t c[YG_MAX_DIMS], gc[YG_MAX_DIMS];
    yg_tensor *res = NULL;
    char gbuf[128], ibuf[128];
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_not_half("embedding_backward", "grad_output", grad_output));
    YG_RETURN_IF_ERROR(
        embedding_check("embedding_backward", weight_sizes, weight_sizes_len, indices));
    int64_t dim = weight_sizes[1], n = numel(indices);
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
    st = yg__full_on("embedding_backward",
                     weight_sizes,
                     2,
                     grad_output->dtype,
                     grad_output->storage->device,
                     grad_output->storage->device_index,
                     0.0,
                     &res);
    if (st != YG_OK)
        return st;
    if (res->storage->device == YG_CUDA) {
        if (n > 0 && dim > 0)
            st = yg__cuda()->index_add("embedding_backward",
                                    grad_output,
                                    1,
                                    weight_sizes[0],
                                    dim,
                                    indices,
                                    padding_idx,
                                    res);
        if (st != YG_OK) {
            yg_release(res);
            return st;
        }
        *out = res;
        return YG_OK;
    }
    add_elem_fn add = add_for(grad_output->dtype);
    for (int64_t i = 0; i < n; i++) {
        coords_of(i, indices->sizes, indices->ndim, c);
        int64_t row = *(const int64_t *)elem_at(indices, c, -1, 0);
        if (row == padding_idx)
            continue;
        for (int32_t d = 0; d < indices->ndim; d++)
            gc[d] = c[d];
        for (int64_t j = 0; j < dim; j++) {
            int64_t rc[2] = {row, j};
            gc[indices->ndim] = j;
            add(elem_at(res, rc, -1, 0), elem_at(grad_output, gc, -1, 0));
        }
    }
    *out = res;
    return YG_OK;
}
