/*
 * index.c - the host side of cuda/index.cu for cpu/index.c and
 * cpu/index_advanced.c: gathers and deterministic index-adds along one
 * dim of GPU tensors, and by element offsets (advanced indexing).  The index
 * values were checked by the caller; here they are made contiguous on the
 * device (a gather) or grouped by row on the host (an index-add, whose
 * CSR of rows then goes to the device), and the operands are laid out as
 * contiguous [outer, size, inner] blocks.
 */
#include "core/core.h"
#include "cuda/cuda.h"
#include "decls/indexing.h"
#include "decls/layers.h"

#include <stdlib.h>
#include <string.h>

int yg__cuda_gather_launch(int esize,
                           void *out,
                           const void *src,
                           const long long *index,
                           long long outer,
                           long long size,
                           long long k_count,
                           long long inner);
int yg__cuda_index_add_launch(int dtype,
                              void *out,
                              const void *grad,
                              const long long *rows,
                              const long long *starts,
                              const long long *ks,
                              long long n_rows,
                              long long outer,
                              long long size,
                              long long k_count,
                              long long inner,
                              int assign);

yg_status yg__cuda_gather(const char *op,
                          const yg_tensor *src,
                          int64_t outer,
                          int64_t size,
                          int64_t inner,
                          const yg_tensor *index,
                          yg_tensor *out) {
    int index_dev = out->storage->device_index, prev;
    yg_tensor *s = NULL, *ix = NULL;
    yg_status st = yg__tensor_contiguous_as(src, src->dtype, true, &s);
    if (st == YG_OK)
        st = yg_tensor_to_device(index, YG_CUDA, index_dev, &ix);
    if (st == YG_OK)
        st = yg__cuda_device_enter(op, index_dev, &prev);
    if (st == YG_OK) {
        int err = yg__cuda_gather_launch((int)yg_dtype_size(src->dtype),
                                         yg__tensor_ptr(out),
                                         yg__tensor_ptr(s),
                                         (const long long *)yg__tensor_ptr(ix),
                                         outer,
                                         size,
                                         yg_tensor_numel(ix),
                                         inner);
        yg__cuda_device_leave(prev);
        st = yg__cuda_check_launch(op, index_dev, err);
    }
    yg_release(ix);
    yg_release(s);
    return st;
}

/* The rows index adds into, each once in increasing order, and for each
 * the positions k that add into it, in increasing k (starts[u] ..
 * starts[u + 1] of ks); a row equal to skip adds nothing.  One buffer of
 * 2 n_rows + 1 + n_ks int64: rows, starts, ks. */
static int64_t *row_csr(const int64_t *index,
                        int64_t k_count,
                        int64_t size,
                        int64_t skip,
                        int64_t *n_rows_out,
                        int64_t *total_out) {
    int64_t *count = calloc((size_t)size + 1, sizeof *count);
    if (count == NULL)
        return NULL;
    int64_t n_rows = 0, n_ks = 0;
    for (int64_t k = 0; k < k_count; k++) {
        if (index[k] == skip)
            continue;
        n_rows += count[index[k]]++ == 0;
        n_ks++;
    }
    int64_t total = 2 * n_rows + 1 + n_ks;
    int64_t *buf = malloc((size_t)(total > 0 ? total : 1) * sizeof *buf);
    int64_t *slot = malloc((size_t)size * sizeof *slot + 1);
    if (buf == NULL || slot == NULL) {
        free(buf);
        free(slot);
        free(count);
        return NULL;
    }
    int64_t *rows = buf, *starts = buf + n_rows, *ks = buf + 2 * n_rows + 1, u = 0, at = 0;
    for (int64_t r = 0; r < size; r++) {
        if (count[r] == 0)
            continue;
        rows[u] = r;
        starts[u] = at;
        slot[r] = at;
        at += count[r];
        u++;
    }
    starts[n_rows] = at;
    for (int64_t k = 0; k < k_count; k++)
        if (index[k] != skip)
            ks[slot[index[k]]++] = k;
    free(slot);
    free(count);
    *n_rows_out = n_rows;
    *total_out = total;
    return buf;
}

/* The CSR index-add (or, assign, last write) of grad's [outer, k_count,
 * inner] device elements into out's [outer, size, inner] at the rows of
 * the host int64 index (each in [0, size) or skip). */
static yg_status csr_run(const char *op,
                         int dev,
                         yg_dtype dtype,
                         void *out,
                         const void *grad,
                         const int64_t *index,
                         int64_t k_count,
                         int64_t outer,
                         int64_t size,
                         int64_t inner,
                         int64_t skip,
                         bool assign) {
    void *csr = NULL;
    int64_t n_rows = 0, total = 0;
    int prev;
    yg_status st = YG_OK;
    int64_t *buf = row_csr(index, k_count, size, skip, &n_rows, &total);
    if (buf == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY,
                        "%s: out of host memory grouping %lld indices",
                        op,
                        (long long)k_count);
    if (n_rows > 0)
        st = yg__cuda_alloc(op, dev, (size_t)total * sizeof(int64_t), &csr);
    if (st == YG_OK && n_rows > 0)
        st = yg__cuda_memcpy(op, csr, dev, buf, -1, (size_t)total * sizeof(int64_t));
    if (st == YG_OK && n_rows > 0)
        st = yg__cuda_device_enter(op, dev, &prev);
    if (st == YG_OK && n_rows > 0) {
        const long long *rows = csr;
        int err = yg__cuda_index_add_launch((int)dtype,
                                            out,
                                            grad,
                                            rows,
                                            rows + n_rows,
                                            rows + 2 * n_rows + 1,
                                            n_rows,
                                            outer,
                                            size,
                                            k_count,
                                            inner,
                                            assign);
        yg__cuda_device_leave(prev);
        st = yg__cuda_check_launch(op, dev, err);
    }
    yg__cuda_free(dev, csr); /* stream-ordered: reused only by later work */
    free(buf);
    return st;
}

yg_status yg__cuda_index_add(const char *op,
                             const yg_tensor *grad,
                             int64_t outer,
                             int64_t size,
                             int64_t inner,
                             const yg_tensor *index,
                             int64_t skip,
                             yg_tensor *out) {
    yg_tensor *g = NULL, *host = NULL;
    yg_status st = yg__tensor_contiguous_as(grad, grad->dtype, true, &g);
    if (st == YG_OK)
        st = yg_tensor_to_device(index, YG_CPU, 0, &host);
    if (st == YG_OK)
        st = csr_run(op,
                     out->storage->device_index,
                     grad->dtype,
                     yg__tensor_ptr(out),
                     yg__tensor_ptr(g),
                     (const int64_t *)yg__tensor_ptr(host),
                     yg_tensor_numel(index),
                     outer,
                     size,
                     inner,
                     skip,
                     false);
    yg_release(host);
    yg_release(g);
    return st;
}

yg_status yg__cuda_take(
    const char *op, const yg_tensor *self, const int64_t *off, int64_t n, yg_tensor *out) {
    int dev = self->storage->device_index, prev;
    void *ix = NULL;
    if (n == 0)
        return YG_OK;
    yg_status st = yg__cuda_alloc(op, dev, (size_t)n * sizeof(int64_t), &ix);
    if (st == YG_OK)
        st = yg__cuda_memcpy(op, ix, dev, off, -1, (size_t)n * sizeof(int64_t));
    if (st == YG_OK)
        st = yg__cuda_device_enter(op, dev, &prev);
    if (st == YG_OK) {
        /* [1, size, 1] blocks: out[k] = src[off[k]]; size is not read. */
        int err = yg__cuda_gather_launch((int)yg_dtype_size(self->dtype),
                                         yg__tensor_ptr(out),
                                         yg__tensor_ptr(self),
                                         ix,
                                         1,
                                         0,
                                         n,
                                         1);
        yg__cuda_device_leave(prev);
        st = yg__cuda_check_launch(op, dev, err);
    }
    yg__cuda_free(dev, ix);
    return st;
}

yg_status yg__cuda_put(const char *op,
                       yg_tensor *dst,
                       const int64_t *off,
                       int64_t n,
                       int64_t span,
                       const yg_tensor *values,
                       bool accumulate) {
    if (n == 0)
        return YG_OK;
    return csr_run(op,
                   dst->storage->device_index,
                   dst->dtype,
                   yg__tensor_ptr(dst),
                   yg__tensor_ptr(values),
                   off,
                   n,
                   1,
                   span,
                   1,
                   -1,
                   !accumulate);
}

/* ---- the CUDA implementations of the structured index ops (cuda/ops.h),
 * which fill the results meta/index.c made once it checked every index ---- */

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

yg_status yg__cuda_index_select_out(const yg_tensor *self,
                                    int64_t dim,
                                    const yg_tensor *index,
                                    yg_tensor *out) {
    int64_t d, outer, inner;

    YG_RETURN_IF_ERROR(yg__wrap_dim("index_select", "self", dim, self->ndim, &d));
    if (yg_tensor_numel(out) == 0)
        return YG_OK;
    split_sizes(self->sizes, self->ndim, d, &outer, &inner);
    return yg__cuda_gather("index_select", self, outer, self->sizes[d], inner, index, out);
}

yg_status yg__cuda_index_select_backward_out(const yg_tensor *grad_output,
                                             const int64_t *self_sizes,
                                             int64_t self_sizes_len,
                                             int64_t dim,
                                             const yg_tensor *index,
                                             yg_tensor *out) {
    int64_t d, outer, inner;

    (void)self_sizes;
    (void)self_sizes_len;
    YG_RETURN_IF_ERROR(
        yg__wrap_dim("index_select_backward", "grad_output", dim, grad_output->ndim, &d));
    if (yg_tensor_numel(grad_output) == 0)
        return YG_OK;
    split_sizes(out->sizes, out->ndim, d, &outer, &inner);
    return yg__cuda_index_add(
        "index_select_backward", grad_output, outer, out->sizes[d], inner, index, -1, out);
}

/* The gather (src is self) or a scatter into res (contiguous: a copy of
 * self, or zeros) with cuda/scatter.cu, in the CPU's order; mode 0 copies
 * src, 1 stores value, 2 adds src. */
static yg_status scatter(const char *op,
                         bool is_gather,
                         yg_tensor *res,
                         const yg_tensor *shape,
                         int64_t dim,
                         const yg_tensor *index,
                         const yg_tensor *src,
                         double value,
                         int mode) {
    yg_tensor *ix = NULL, *sc = NULL;
    _Alignas(8) char vbuf[8];
    int64_t d;

    YG_RETURN_IF_ERROR(yg__wrap_dim(op, "self", dim, shape->ndim, &d));
    if (mode == 1)
        yg__store_f64_as(vbuf, res->dtype, value);
    yg_status st = yg__tensor_contiguous_as(index, YG_INT64, true, &ix);
    if (st == YG_OK && src != NULL)
        st = yg__tensor_contiguous_as(src, src->dtype, true, &sc);
    if (st == YG_OK)
        st = yg__cuda_scatter(
            op, is_gather, mode, res, sc, mode == 1 ? vbuf : NULL, ix, (int)d, shape);
    yg_release(ix);
    yg_release(sc);
    return st;
}

yg_status
yg__cuda_gather_out(const yg_tensor *self, int64_t dim, const yg_tensor *index, yg_tensor *out) {
    return scatter("gather", true, out, self, dim, index, self, 0, 0);
}

yg_status yg__cuda_scatter_out(const yg_tensor *self,
                               int64_t dim,
                               const yg_tensor *index,
                               const yg_tensor *src,
                               yg_tensor *out) {
    (void)self;
    return scatter("scatter", false, out, out, dim, index, src, 0, 0);
}

yg_status yg__cuda_scatter_value_out(const yg_tensor *self,
                                     int64_t dim,
                                     const yg_tensor *index,
                                     double value,
                                     yg_tensor *out) {
    (void)self;
    return scatter("scatter", false, out, out, dim, index, NULL, value, 1);
}

yg_status yg__cuda_scatter_add_out(const yg_tensor *self,
                                   int64_t dim,
                                   const yg_tensor *index,
                                   const yg_tensor *src,
                                   yg_tensor *out) {
    (void)self;
    return scatter("scatter_add", false, out, out, dim, index, src, 0, 2);
}

yg_status yg__cuda_gather_backward_out(const yg_tensor *grad_output,
                                       const int64_t *self_sizes,
                                       int64_t self_sizes_len,
                                       int64_t dim,
                                       const yg_tensor *index,
                                       yg_tensor *out) {
    (void)self_sizes;
    (void)self_sizes_len;
    return scatter("gather_backward", false, out, out, dim, index, grad_output, 0, 2);
}

yg_status yg__cuda_embedding_out(const yg_tensor *weight,
                                 const yg_tensor *indices,
                                 int64_t padding_idx,
                                 yg_tensor *out) {
    (void)padding_idx;
    if (yg_tensor_numel(out) == 0)
        return YG_OK;
    return yg__cuda_gather(
        "embedding", weight, 1, weight->sizes[0], weight->sizes[1], indices, out);
}

yg_status yg__cuda_embedding_backward_out(const yg_tensor *grad_output,
                                          const yg_tensor *indices,
                                          const int64_t *weight_sizes,
                                          int64_t weight_sizes_len,
                                          int64_t padding_idx,
                                          yg_tensor *out) {
    (void)weight_sizes_len;
    if (yg_tensor_numel(indices) == 0 || weight_sizes[1] == 0)
        return YG_OK;
    return yg__cuda_index_add("embedding_backward",
                              grad_output,
                              1,
                              weight_sizes[0],
                              weight_sizes[1],
                              indices,
                              padding_idx,
                              out);
}
