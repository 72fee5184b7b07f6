/*
 * reduce_extrema.c - reductions that pick rather than accumulate: amax,
 * amin, argmax, argmin (over all elements or one dim), max.dim and
 * min.dim (values and indices in one pass), all and any (bool results),
 * and minmax_backward, the gradient of amax/amin/max/min.
 *
 * All run on the rows of meta/rows.h (reduced dims moved last and copied to
 * a contiguous block): floating inputs in double, int64 and bool inputs
 * in int64, so int64 extremes are exact beyond 2^53.
 *
 * NaN: amax and amin return NaN for a row holding one, and argmax/argmin
 * return the index of the first NaN, as PyTorch does (NaN is treated as
 * larger/smaller than everything).  Ties: argmax/argmin (and max.dim,
 * min.dim) give the first index; minmax_backward splits the gradient evenly between all elements
 * equal to the result.  An empty row has no extremum: amax, amin, argmax
 * and argmin fail on one; all gives true and any false.
 *
 * The CPU's kernels: cuda/reduce.c has the GPU's, which reduce the same
 * rows with these rules (cuda/rows.cu).
 */
#include "cpu/cpu_int.h"
#include "decls/extrema.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

/* ---- amax, amin ---- */

static yg_status extremum(const char *op,
                          const yg_tensor *self,
                          const int64_t *dim,
                          int64_t dim_len,
                          bool keepdim,
                          bool is_max,
                          yg_tensor **out) {
    yg_rows rows;
    yg_tensor *res = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(
        yg__rows_init(op, self, dim, dim_len, keepdim, yg__rows_extremum_dtype(self->dtype), &rows));
    st = yg__rows_check_nonempty(op, self, &rows);
    if (st != YG_OK)
        goto out;
    st = yg_tensor_empty(rows.out_sizes, rows.out_ndim, self->dtype, &res);
    if (st != YG_OK)
        goto out;
    for (int64_t r = 0; r < rows.outer; r++) {
        if (rows.data->dtype == YG_FLOAT64) {
            const double *x = (const double *)yg__tensor_ptr(rows.data) + r * rows.inner;
            double best = x[0];
            for (int64_t i = 1; i < rows.inner && !isnan(best); i++)
                if (isnan(x[i]) || (is_max ? x[i] > best : x[i] < best))
                    best = x[i];
            yg__store_f64(res, r, best);
        } else {
            const int64_t *x = (const int64_t *)yg__tensor_ptr(rows.data) + r * rows.inner;
            int64_t best = x[0];
            for (int64_t i = 1; i < rows.inner; i++)
                if (is_max ? x[i] > best : x[i] < best)
                    best = x[i];
            if (res->dtype == YG_INT64)
                ((int64_t *)yg__tensor_ptr(res))[r] = best;
            else /* int32 or bool: exact as a double */
                yg__store_f64(res, r, (double)best);
        }
    }
    *out = res;
    res = NULL;
out:
    yg_release(res);
    yg__rows_free(&rows);
    return st;
}

yg_status yg__cpu_amax(const yg_tensor *self,
                       const int64_t *dim,
                       int64_t dim_len,
                       bool keepdim,
                       yg_tensor **out) {
    return extremum("amax", self, dim, dim_len, keepdim, true, out);
}

yg_status yg__cpu_amin(const yg_tensor *self,
                       const int64_t *dim,
                       int64_t dim_len,
                       bool keepdim,
                       yg_tensor **out) {
    return extremum("amin", self, dim, dim_len, keepdim, false, out);
}

/* ---- argmax, argmin ---- */

static yg_status arg_extremum(const char *op,
                              const yg_tensor *self,
                              const int64_t *dim,
                              int64_t dim_len,
                              bool keepdim,
                              bool is_max,
                              yg_tensor **out) {
    yg_rows rows;
    yg_tensor *res = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(
        yg__rows_init(op, self, dim, dim_len, keepdim, yg__rows_extremum_dtype(self->dtype), &rows));
    st = yg__rows_check_nonempty(op, self, &rows);
    if (st != YG_OK)
        goto out;
    st = yg_tensor_empty(rows.out_sizes, rows.out_ndim, YG_INT64, &res);
    if (st != YG_OK)
        goto out;
    int64_t *dst = (int64_t *)yg__tensor_ptr(res);
    for (int64_t r = 0; r < rows.outer; r++) {
        int64_t at = 0;
        if (rows.data->dtype == YG_FLOAT64) {
            const double *x = (const double *)yg__tensor_ptr(rows.data) + r * rows.inner;
            for (int64_t i = 1; i < rows.inner && !isnan(x[at]); i++)
                if (isnan(x[i]) || (is_max ? x[i] > x[at] : x[i] < x[at]))
                    at = i;
        } else {
            const int64_t *x = (const int64_t *)yg__tensor_ptr(rows.data) + r * rows.inner;
            for (int64_t i = 1; i < rows.inner; i++)
                if (is_max ? x[i] > x[at] : x[i] < x[at])
                    at = i;
        }
        dst[r] = at;
    }
    *out = res;
    res = NULL;
out:
    yg_release(res);
    yg__rows_free(&rows);
    return st;
}

yg_status yg__cpu_argmax(const yg_tensor *self, yg_tensor **out) {
    return arg_extremum("argmax", self, NULL, 0, false, true, out);
}

yg_status yg__cpu_argmax_dim(const yg_tensor *self, int64_t dim, bool keepdim, yg_tensor **out) {
    return arg_extremum("argmax", self, &dim, 1, keepdim, true, out);
}

yg_status yg__cpu_argmin(const yg_tensor *self, yg_tensor **out) {
    return arg_extremum("argmin", self, NULL, 0, false, false, out);
}

yg_status yg__cpu_argmin_dim(const yg_tensor *self, int64_t dim, bool keepdim, yg_tensor **out) {
    return arg_extremum("argmin", self, &dim, 1, keepdim, false, out);
}

/* ---- max.dim, min.dim: values and indices ---- */

/* The extremum along dim and its int64 index in one pass, with argmax's
 * rules (first index on ties, NaN wins).  On failure both outputs are
 * NULL. */
static yg_status extremum_dim(const char *op,
                              const yg_tensor *self,
                              int64_t dim,
                              bool keepdim,
                              bool is_max,
                              yg_tensor **out_values,
                              yg_tensor **out_indices) {
    yg_rows rows;
    yg_tensor *values = NULL, *indices = NULL;
    yg_status st;

    *out_values = NULL;
    *out_indices = NULL;
    YG_RETURN_IF_ERROR(
        yg__rows_init(op, self, &dim, 1, keepdim, yg__rows_extremum_dtype(self->dtype), &rows));
    st = yg__rows_check_nonempty(op, self, &rows);
    if (st == YG_OK)
        st = yg_tensor_empty(rows.out_sizes, rows.out_ndim, self->dtype, &values);
    if (st == YG_OK)
        st = yg_tensor_empty(rows.out_sizes, rows.out_ndim, YG_INT64, &indices);
    if (st != YG_OK)
        goto out;
    int64_t *dst = (int64_t *)yg__tensor_ptr(indices);
    for (int64_t r = 0; r < rows.outer; r++) {
        int64_t at = 0;
        if (rows.data->dtype == YG_FLOAT64) {
            const double *x = (const double *)yg__tensor_ptr(rows.data) + r * rows.inner;
            for (int64_t i = 1; i < rows.inner && !isnan(x[at]); i++)
                if (isnan(x[i]) || (is_max ? x[i] > x[at] : x[i] < x[at]))
                    at = i;
            yg__store_f64(values, r, x[at]);
        } else {
            const int64_t *x = (const int64_t *)yg__tensor_ptr(rows.data) + r * rows.inner;
            for (int64_t i = 1; i < rows.inner; i++)
                if (is_max ? x[i] > x[at] : x[i] < x[at])
                    at = i;
            if (values->dtype == YG_INT64)
                ((int64_t *)yg__tensor_ptr(values))[r] = x[at];
            else /* int32 or bool: exact as a double */
                yg__store_f64(values, r, (double)x[at]);
        }
        dst[r] = at;
    }
    *out_values = values;
    *out_indices = indices;
    values = NULL;
    indices = NULL;
out:
    yg_release(values);
    yg_release(indices);
    yg__rows_free(&rows);
    return st;
}

yg_status yg__cpu_max_dim(const yg_tensor *self,
                          int64_t dim,
                          bool keepdim,
                          yg_tensor **out_values,
                          yg_tensor **out_indices) {
    return extremum_dim("max", self, dim, keepdim, true, out_values, out_indices);
}

yg_status yg__cpu_min_dim(const yg_tensor *self,
                          int64_t dim,
                          bool keepdim,
                          yg_tensor **out_values,
                          yg_tensor **out_indices) {
    return extremum_dim("min", self, dim, keepdim, false, out_values, out_indices);
}

/* ---- all, any ---- */

static yg_status all_any(const char *op,
                         const yg_tensor *self,
                         const int64_t *dim,
                         int64_t dim_len,
                         bool keepdim,
                         bool is_all,
                         yg_tensor **out) {
    yg_rows rows;
    yg_tensor *res = NULL;
    yg_status st;

    *out = NULL;
    /* bool rows: the conversion already maps non-zero (and NaN) to true. */
    YG_RETURN_IF_ERROR(yg__rows_init(op, self, dim, dim_len, keepdim, YG_BOOL, &rows));
    st = yg_tensor_empty(rows.out_sizes, rows.out_ndim, YG_BOOL, &res);
    if (st != YG_OK)
        goto out;
    bool *dst = (bool *)yg__tensor_ptr(res);
    for (int64_t r = 0; r < rows.outer; r++) {
        const bool *x = (const bool *)yg__tensor_ptr(rows.data) + r * rows.inner;
        bool acc = is_all;
        for (int64_t i = 0; i < rows.inner && acc == is_all; i++)
            acc = x[i];
        dst[r] = acc;
    }
    *out = res;
    res = NULL;
out:
    yg_release(res);
    yg__rows_free(&rows);
    return st;
}

yg_status yg__cpu_all(const yg_tensor *self, yg_tensor **out) {
    return all_any("all", self, NULL, 0, false, true, out);
}

yg_status yg__cpu_all_dim(const yg_tensor *self,
                          const int64_t *dim,
                          int64_t dim_len,
                          bool keepdim,
                          yg_tensor **out) {
    return all_any("all", self, dim, dim_len, keepdim, true, out);
}

yg_status yg__cpu_any(const yg_tensor *self, yg_tensor **out) {
    return all_any("any", self, NULL, 0, false, false, out);
}

yg_status yg__cpu_any_dim(const yg_tensor *self,
                          const int64_t *dim,
                          int64_t dim_len,
                          bool keepdim,
                          yg_tensor **out) {
    return all_any("any", self, dim, dim_len, keepdim, false, out);
}

/* ---- minmax_backward ---- */

yg_status yg__cpu_minmax_backward(const yg_tensor *grad_output,
                                     const yg_tensor *self,
                                     const yg_tensor *output,
                                     const int64_t *dim,
                                     int64_t dim_len,
                                     bool keepdim,
                                     yg_tensor **out) {
    yg_rows rows;
    yg_tensor *g = NULL, *r = NULL, *block = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_floating("minmax_backward", "self", self));
    YG_RETURN_IF_ERROR(
        yg__rows_init("minmax_backward", self, dim, dim_len, keepdim, YG_FLOAT64, &rows));
    st = yg__rows_per_row("minmax_backward", "grad_output", &rows, grad_output, YG_FLOAT64, &g);
    if (st == YG_OK)
        st = yg__rows_per_row("minmax_backward", "output", &rows, output, YG_FLOAT64, &r);
    if (st == YG_OK) {
        const int64_t bs[2] = {rows.outer, rows.inner};
        st = yg_tensor_empty(bs, 2, self->dtype, &block);
    }
    if (st != YG_OK)
        goto out;
    const double *gv = (const double *)yg__tensor_ptr(g), *rv = (const double *)yg__tensor_ptr(r);
    for (int64_t row = 0; row < rows.outer; row++) {
        const double *x = (const double *)yg__tensor_ptr(rows.data) + row * rows.inner;
        int64_t count = 0;
        for (int64_t i = 0; i < rows.inner; i++)
            count += x[i] == rv[row] || (isnan(x[i]) && isnan(rv[row]));
        for (int64_t i = 0; i < rows.inner; i++) {
            bool hit = x[i] == rv[row] || (isnan(x[i]) && isnan(rv[row]));
            yg__store_f64(block, row * rows.inner + i, hit ? gv[row] / (double)count : 0);
        }
    }
    st = yg__rows_unpermute(&rows, block, self->sizes, out);
out:
    yg_release(g);
    yg_release(r);
    yg_release(block);
    yg__rows_free(&rows);
    return st;
}
