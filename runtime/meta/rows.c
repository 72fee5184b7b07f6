/*
 * meta/rows.c - the row geometry of meta/rows.h: reduced dims moved last and
 * self copied into a contiguous [outer, inner] block (yg__rows_init),
 * the per-row view of a result-shaped tensor, and the way back from a
 * block to self's layout (for gradients).
 *
 * Moving dims is a permuted view (no copy); the one copy converts to the
 * working dtype at the same time, through yg__tensor_contiguous_as,
 * which shares an input that is already contiguous in that dtype.
 */
#include "meta/rows.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static yg_status mark_reduced(const char *op,
                              const yg_tensor *self,
                              const int64_t *dim,
                              int64_t dim_len,
                              bool *reduced) {
    char buf[160];

    for (int32_t d = 0; d < YG_MAX_DIMS; d++)
        reduced[d] = dim_len == 0 && d < self->ndim;
    if (dim_len > 0 && dim == NULL)
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "%s: dim is NULL with length %" PRId64, op, dim_len);
    for (int64_t i = 0; i < dim_len; i++) {
        int64_t d;
        YG_RETURN_IF_ERROR(yg__wrap_dim(op, "self", dim[i], self->ndim, &d));
        if (self->ndim == 0)
            continue; /* dim 0 / -1 of a 0-dim tensor names the tensor itself */
        if (reduced[d])
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s: dim %" PRId64 " appears more than once in dim list %s",
                            op,
                            d,
                            yg__format_sizes(dim, dim_len, buf, sizeof buf));
        reduced[d] = true;
    }
    return YG_OK;
}

/* Geometry from rows->reduced; then the copy when dtype is valid. */
static yg_status
finish_init(const char *op, const yg_tensor *self, bool keepdim, yg_dtype dtype, yg_rows *rows) {
    int64_t sizes[YG_MAX_DIMS], strides[YG_MAX_DIMS];
    int64_t np = 0;
    yg_tensor *view = NULL;
    yg_status st;

    rows->ndim = self->ndim;
    rows->outer = 1;
    rows->inner = 1;
    rows->out_ndim = 0;
    rows->data = NULL;
    for (int32_t d = 0; d < self->ndim; d++) {
        /* Only overflows for an empty self with huge other dims (a 0 in
         * the other half of the product). */
        if (rows->reduced[d]) {
            YG_RETURN_IF_ERROR(
                yg__size_mul(op, "row length", rows->inner, self->sizes[d], &rows->inner));
            if (keepdim)
                rows->out_sizes[rows->out_ndim++] = 1;
        } else {
            YG_RETURN_IF_ERROR(
                yg__size_mul(op, "row count", rows->outer, self->sizes[d], &rows->outer));
            rows->out_sizes[rows->out_ndim++] = self->sizes[d];
            rows->perm[np++] = d;
        }
    }
    for (int32_t d = 0; d < self->ndim; d++)
        if (rows->reduced[d])
            rows->perm[np++] = d;
    if ((int)dtype < 0 || dtype >= YG_DTYPE_COUNT_)
        return YG_OK;
    for (int32_t i = 0; i < self->ndim; i++) {
        sizes[i] = self->sizes[rows->perm[i]];
        strides[i] = self->strides[rows->perm[i]];
    }
    st = yg__tensor_view(op, self, sizes, strides, self->ndim, self->offset, &view);
    if (st != YG_OK)
        return st;
    st = yg__tensor_contiguous_as(view, dtype, true, &rows->data);
    yg_release(view);
    return st;
}

yg_status yg__rows_init(const char *op,
                        const yg_tensor *self,
                        const int64_t *dim,
                        int64_t dim_len,
                        bool keepdim,
                        yg_dtype dtype,
                        yg_rows *rows) {
    memset(rows, 0, sizeof *rows);
    YG_RETURN_IF_ERROR(mark_reduced(op, self, dim, dim_len, rows->reduced));
    return finish_init(op, self, keepdim, dtype, rows);
}



yg_status yg__rows_init_dim(const char *op,
                            const yg_tensor *self,
                            int64_t dim,
                            yg_dtype dtype,
                            yg_rows *rows) {
    yg_status st;

    memset(rows, 0, sizeof *rows);
    YG_RETURN_IF_ERROR(mark_reduced(op, self, &dim, 1, rows->reduced));
    st = finish_init(op, self, true, dtype, rows);
    /* A scan keeps every dim: the "result" of a row is the whole row, so
     * rows of no elements are no work: an empty self with a huge other
     * dim must not loop over them (fuzz_ops: cumprod of [36854775808, 0]
     * over dim 1). */
    if (rows->inner == 0)
        rows->outer = 0;
    rows->out_ndim = self->ndim;
    for (int32_t d = 0; d < self->ndim; d++)
        rows->out_sizes[d] = self->sizes[d];
    return st;
}

void yg__rows_free(yg_rows *rows) {
    yg_release(rows->data);
    rows->data = NULL;
}

yg_status yg__rows_per_row(const char *op,
                           const char *name,
                           const yg_rows *rows,
                           const yg_tensor *t,
                           yg_dtype dtype,
                           yg_tensor **out) {
    int64_t n = yg_tensor_numel(t); /* a 0 first: fits (sizes.h) */
    char tbuf[128], rbuf[128];

    *out = NULL;
    if (n != rows->outer)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: %s %s does not match the reduced shape %s",
                        op,
                        name,
                        yg__format_sizes(t->sizes, t->ndim, tbuf, sizeof tbuf),
                        yg__format_sizes(rows->out_sizes, rows->out_ndim, rbuf, sizeof rbuf));
    return yg__tensor_contiguous_as(t, dtype, true, out);
}

yg_status yg__rows_unpermute(const yg_rows *rows,
                             const yg_tensor *block,
                             const int64_t *self_sizes,
                             yg_tensor **out) {
    int64_t psizes[YG_MAX_DIMS], pstrides[YG_MAX_DIMS], sizes[YG_MAX_DIMS], strides[YG_MAX_DIMS];
    yg_tensor *view = NULL;
    yg_status st;

    *out = NULL;
    /* block is contiguous over the permuted sizes; dim perm[i] of self is
     * dim i of that layout. */
    for (int32_t i = 0; i < rows->ndim; i++)
        psizes[i] = self_sizes[rows->perm[i]];
    YG_RETURN_IF_ERROR(yg__sizes_strides("rows", psizes, rows->ndim, pstrides));
    for (int32_t i = 0; i < rows->ndim; i++) {
        sizes[rows->perm[i]] = psizes[i];
        strides[rows->perm[i]] = pstrides[i];
    }
    st = yg__tensor_view("rows", block, sizes, strides, rows->ndim, block->offset, &view);
    if (st != YG_OK)
        return st;
    st = yg__tensor_contiguous_as(view, block->dtype, true, out);
    yg_release(view);
    return st;
}

yg_status yg__rows_check_nonempty(const char *op, const yg_tensor *self, const yg_rows *rows) {
    char buf[128];

    if (rows->inner == 0 && rows->outer > 0)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: cannot reduce over zero elements of self %s (the reduced dims are "
                        "empty)",
                        op,
                        yg__format_sizes(self->sizes, self->ndim, buf, sizeof buf));
    return YG_OK;
}

yg_status yg__rows_init_lines(const char *op,
                              const yg_tensor *self,
                              const yg_tensor *const *others,
                              const char *const *names,
                              int n_others,
                              int64_t dim,
                              yg_rows *rows,
                              yg_rows *orows) {
    yg_status st;

    YG_RETURN_IF_ERROR(yg__check_floating(op, "self", self));
    for (int i = 0; i < n_others; i++)
        YG_RETURN_IF_ERROR(yg__check_sizes_match(op, names[i], others[i], self));
    YG_RETURN_IF_ERROR(yg__rows_init_dim(op, self, dim, YG_FLOAT64, rows));
    for (int i = 0; i < n_others; i++) {
        st = yg__rows_init_dim(op, others[i], dim, YG_FLOAT64, &orows[i]);
        if (st != YG_OK) {
            while (--i >= 0)
                yg__rows_free(&orows[i]);
            yg__rows_free(rows);
            return st;
        }
    }
    return YG_OK;
}

yg_status yg__reduce_sum_prepare(const char *op,
                                 const yg_tensor *self,
                                 const int64_t *dim,
                                 int64_t dim_len,
                                 bool keepdim,
                                 bool mean,
                                 bool *reduced,
                                 int64_t *count,
                                 yg_tensor **res) {
    int64_t out_sizes[YG_MAX_DIMS], rsizes[YG_MAX_DIMS];
    int64_t out_ndim = 0, nr = 0;
    yg_dtype d = self->dtype;
    /* sum (not mean) of float16/bfloat16 on the CPU: summed in double,
     * rounded once to the dtype (cpu/reduce.c) */
    bool half = yg__dtype_is_half(d) && !mean && self->storage->device == YG_CPU;
    bool summable = d == YG_FLOAT32 || d == YG_FLOAT64 || d == YG_INT64 || d == YG_INT32 ||
                    d == YG_BOOL || half;

    *res = NULL;
    if (!summable || (mean && !yg__dtype_is_floating(d)))
        return yg__fail(YG_ERR_DTYPE,
                        "%s: unsupported dtype %s for self (supported: %s)",
                        op,
                        yg_dtype_name(d),
                        mean ? "float32, float64"
                        : self->storage->device == YG_CPU
                            ? "float32, float64, int64, int32, bool, float16, bfloat16"
                            : "float32, float64, int64, int32, bool");
    YG_RETURN_IF_ERROR(mark_reduced(op, self, dim, dim_len, reduced));
    /* Output sizes first: the output's own checks (sizes.h) bound every
     * product the kernels take, even for an empty self with huge other
     * dims. */
    for (int32_t i = 0; i < self->ndim; i++) {
        if (reduced[i]) {
            rsizes[nr++] = self->sizes[i];
            if (keepdim)
                out_sizes[out_ndim++] = 1;
        } else {
            out_sizes[out_ndim++] = self->sizes[i];
        }
    }
    YG_RETURN_IF_ERROR(yg__tensor_new_on(op,
                                         out_sizes,
                                         out_ndim,
                                         yg__dtype_is_floating(d) || half ? d : YG_INT64,
                                         self->storage->device,
                                         self->storage->device_index,
                                         res));
    /* With a non-empty result, the product is numel(self) / numel(res)
     * (or a 0), which fits. */
    *count = yg_tensor_numel(*res) > 0 ? yg__sizes_product(rsizes, nr) : 0;
    return YG_OK;
}
