/*
 * rows.c - the reductions and gradients of meta/rows.h's rows on a GPU
 * (cuda/rows.h): the result allocated beside the block, the kernels of
 * cuda/rows.cu, the conversion to the result's dtype.
 */
#include "cuda/rows.h"

#include "cuda/cuda.h"

yg_status yg__cuda_reduce_rows(const char *op,
                               const yg_rows *rows,
                               yg_rows_kind kind,
                               double param,
                               int values_dtype,
                               yg_tensor **values,
                               yg_tensor **indices) {
    const yg_tensor *d = rows->data;
    yg_tensor *work = NULL, *idx = NULL, *conv = NULL;
    yg_status st = YG_OK;

    if (values != NULL)
        *values = NULL;
    if (indices != NULL)
        *indices = NULL;
    if (values != NULL)
        st = yg__tensor_new_on(op,
                               rows->out_sizes,
                               rows->out_ndim,
                               d->dtype,
                               YG_CUDA,
                               d->storage->device_index,
                               &work);
    if (st == YG_OK && indices != NULL)
        st = yg__tensor_new_on(
            op, rows->out_sizes, rows->out_ndim, YG_INT64, YG_CUDA, d->storage->device_index, &idx);
    if (st == YG_OK)
        st = yg__cuda_rows(op, d, rows->outer, rows->inner, (int)kind, param, work, idx);
    if (st == YG_OK && work != NULL && values_dtype != (int)d->dtype)
        st = yg__tensor_contiguous_as(work, (yg_dtype)values_dtype, false, &conv);
    if (st != YG_OK) {
        yg_release(work);
        yg_release(idx);
        return st;
    }
    if (conv != NULL) {
        yg_release(work);
        work = conv;
    }
    if (values != NULL)
        *values = work;
    if (indices != NULL)
        *indices = idx;
    return YG_OK;
}

yg_status yg__cuda_grad_rows(const char *op,
                             const yg_rows *rows,
                             yg_rows_grad_kind kind,
                             double param,
                             const yg_tensor *a,
                             const yg_tensor *b,
                             yg_dtype dtype,
                             const int64_t *self_sizes,
                             yg_tensor **out) {
    const yg_tensor *d = rows->data;
    const int64_t bs[2] = {rows->outer, rows->inner};
    int32_t index = d->storage->device_index;
    bool work = rows->outer > 0 && rows->inner > 0;
    yg_tensor *block = NULL, *scratch = NULL, *narrow = NULL;
    yg_status st;

    *out = NULL;
    st = yg__tensor_new_on(op, bs, 2, YG_FLOAT64, YG_CUDA, index, &block);
    /* The double-backward kernels keep one suffix per element besides
     * the block, as the CPU's loops do (only when there are elements). */
    if (st == YG_OK && work &&
        (kind == YG_ROWS_GRAD_PROD_DOUBLE || kind == YG_ROWS_GRAD_CUMPROD_DOUBLE))
        st = yg__tensor_new_on(op, bs, 2, YG_FLOAT64, YG_CUDA, index, &scratch);
    if (st == YG_OK)
        st = yg__cuda_rows_grad(
            op, (int)kind, param, rows->outer, rows->inner, block, d, a, b, scratch);
    /* Stream-ordered: the allocator reuses the scratch only for work
     * queued after the launch. */
    yg_release(scratch);
    if (st == YG_OK && dtype != YG_FLOAT64)
        st = yg__tensor_contiguous_as(block, dtype, false, &narrow);
    if (st == YG_OK)
        st = yg__rows_unpermute(rows, narrow != NULL ? narrow : block, self_sizes, out);
    yg_release(narrow);
    yg_release(block);
    return st;
}
