/*
 * reduce.c - the reductions and scans on a GPU (cuda/ops.h): sum and
 * mean, the extrema and all/any, prod, var, std, norm, logsumexp, cumsum
 * and cumprod, and the gradients of prod, norm, the extrema and cumprod.
 *
 * Each keeps the rules and messages of its CPU kernel (cpu/reduce.c,
 * reduce_extrema.c, reduce_stats.c, scan.c): the checks and the geometry
 * are meta/rows.h's, which both devices call; what differs is the work.
 * sum and mean lay the kept dims and then the reduced ones out as
 * contiguous rows that cuda/reduce.cu sums; the others reduce, scan or
 * differentiate meta/rows.h's rows with the kernels of cuda/rows.cu
 * (cuda/rows.h), in the CPU's order and arithmetic.
 */
#include "cuda/cuda.h"
#include "cuda/rows.h"
#include "decls/cumulative.h"
#include "decls/extrema.h"
#include "decls/statistics.h"
#include "decls/sums.h"

#include <math.h>

/* ---- sum, mean ---- */

/* self laid out as numel(res) contiguous rows of count elements (its kept
 * dims, then its reduced ones: a copy unless that order is already
 * contiguous), each summed into res. */
static yg_status reduce(const char *op,
                        const yg_tensor *self,
                        const int64_t *dim,
                        int64_t dim_len,
                        bool keepdim,
                        bool mean,
                        yg_tensor **out) {
    bool reduced[YG_MAX_DIMS];
    int64_t sizes[YG_MAX_DIMS], strides[YG_MAX_DIMS], count;
    int32_t nd = 0;
    yg_tensor *res = NULL, *perm = NULL, *rows = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(
        yg__reduce_sum_prepare(op, self, dim, dim_len, keepdim, mean, reduced, &count, &res));
    if (yg_tensor_numel(res) == 0) {
        *out = res;
        return YG_OK;
    }
    for (int pass = 0; pass < 2; pass++)
        for (int32_t d = 0; d < self->ndim; d++)
            if (reduced[d] == (pass == 1)) {
                sizes[nd] = self->sizes[d];
                strides[nd++] = self->strides[d];
            }
    st = yg__tensor_view(op, self, sizes, strides, nd, self->offset, &perm);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(perm, self->dtype, true, &rows);
    if (st == YG_OK)
        st = yg__cuda_sum_rows(op,
                               self->storage->device_index,
                               self->dtype,
                               yg__tensor_ptr(rows),
                               yg__tensor_ptr(res),
                               yg_tensor_numel(res),
                               count,
                               mean);
    yg_release(rows);
    yg_release(perm);
    if (st != YG_OK) {
        yg_release(res);
        return st;
    }
    *out = res;
    return YG_OK;
}

yg_status yg__cuda_sum(const yg_tensor *self, yg_tensor **out) {
    return reduce("sum", self, NULL, 0, false, false, out);
}

yg_status yg__cuda_sum_dim(const yg_tensor *self,
                           const int64_t *dim,
                           int64_t dim_len,
                           bool keepdim,
                           yg_tensor **out) {
    return reduce("sum", self, dim, dim_len, keepdim, false, out);
}

yg_status yg__cuda_mean(const yg_tensor *self, yg_tensor **out) {
    return reduce("mean", self, NULL, 0, false, true, out);
}

yg_status yg__cuda_mean_dim(const yg_tensor *self,
                            const int64_t *dim,
                            int64_t dim_len,
                            bool keepdim,
                            yg_tensor **out) {
    return reduce("mean", self, dim, dim_len, keepdim, true, out);
}

/* ---- extrema, all, any ---- */

/* The rows of self over dim in work dtype (an extremum's when work is
 * YG_DTYPE_COUNT_), checked to be non-empty when nonempty, reduced by
 * kind into *values (converted to values_dtype) and *indices, each when
 * not NULL. */
static yg_status reduce_rows(const char *op,
                             const yg_tensor *self,
                             const int64_t *dim,
                             int64_t dim_len,
                             bool keepdim,
                             yg_dtype work,
                             bool nonempty,
                             yg_rows_kind kind,
                             double param,
                             yg_dtype values_dtype,
                             yg_tensor **values,
                             yg_tensor **indices) {
    yg_rows rows;
    yg_status st;

    if (values != NULL)
        *values = NULL;
    if (indices != NULL)
        *indices = NULL;
    if (work == YG_DTYPE_COUNT_)
        work = yg__rows_extremum_dtype(self->dtype);
    YG_RETURN_IF_ERROR(yg__rows_init(op, self, dim, dim_len, keepdim, work, &rows));
    st = nonempty ? yg__rows_check_nonempty(op, self, &rows) : YG_OK;
    if (st == YG_OK)
        st = yg__cuda_reduce_rows(op, &rows, kind, param, (int)values_dtype, values, indices);
    yg__rows_free(&rows);
    return st;
}

yg_status yg__cuda_amax(const yg_tensor *self,
                        const int64_t *dim,
                        int64_t dim_len,
                        bool keepdim,
                        yg_tensor **out) {
    return reduce_rows("amax", self, dim, dim_len, keepdim, YG_DTYPE_COUNT_, true, YG_ROWS_AMAX, 0,
                       self->dtype, out, NULL);
}

yg_status yg__cuda_amin(const yg_tensor *self,
                        const int64_t *dim,
                        int64_t dim_len,
                        bool keepdim,
                        yg_tensor **out) {
    return reduce_rows("amin", self, dim, dim_len, keepdim, YG_DTYPE_COUNT_, true, YG_ROWS_AMIN, 0,
                       self->dtype, out, NULL);
}

yg_status yg__cuda_argmax(const yg_tensor *self, yg_tensor **out) {
    return reduce_rows("argmax", self, NULL, 0, false, YG_DTYPE_COUNT_, true, YG_ROWS_ARGMAX, 0,
                       YG_INT64, NULL, out);
}

yg_status yg__cuda_argmax_dim(const yg_tensor *self, int64_t dim, bool keepdim, yg_tensor **out) {
    return reduce_rows("argmax", self, &dim, 1, keepdim, YG_DTYPE_COUNT_, true, YG_ROWS_ARGMAX,
                       0, YG_INT64, NULL, out);
}

yg_status yg__cuda_argmin(const yg_tensor *self, yg_tensor **out) {
    return reduce_rows("argmin", self, NULL, 0, false, YG_DTYPE_COUNT_, true, YG_ROWS_ARGMIN, 0,
                       YG_INT64, NULL, out);
}

yg_status yg__cuda_argmin_dim(const yg_tensor *self, int64_t dim, bool keepdim, yg_tensor **out) {
    return reduce_rows("argmin", self, &dim, 1, keepdim, YG_DTYPE_COUNT_, true, YG_ROWS_ARGMIN,
                       0, YG_INT64, NULL, out);
}

yg_status yg__cuda_max_dim(const yg_tensor *self,
                           int64_t dim,
                           bool keepdim,
                           yg_tensor **out_values,
                           yg_tensor **out_indices) {
    return reduce_rows("max", self, &dim, 1, keepdim, YG_DTYPE_COUNT_, true, YG_ROWS_MAX_DIM, 0,
                       self->dtype, out_values, out_indices);
}

yg_status yg__cuda_min_dim(const yg_tensor *self,
                           int64_t dim,
                           bool keepdim,
                           yg_tensor **out_values,
                           yg_tensor **out_indices) {
    return reduce_rows("min", self, &dim, 1, keepdim, YG_DTYPE_COUNT_, true, YG_ROWS_MIN_DIM, 0,
                       self->dtype, out_values, out_indices);
}

/* bool rows: the conversion already maps non-zero (and NaN) to true. */
yg_status yg__cuda_all(const yg_tensor *self, yg_tensor **out) {
    return reduce_rows("all", self, NULL, 0, false, YG_BOOL, false, YG_ROWS_ALL, 0, YG_BOOL, out,
                       NULL);
}

yg_status yg__cuda_all_dim(const yg_tensor *self,
                           const int64_t *dim,
                           int64_t dim_len,
                           bool keepdim,
                           yg_tensor **out) {
    return reduce_rows("all", self, dim, dim_len, keepdim, YG_BOOL, false, YG_ROWS_ALL, 0, YG_BOOL,
                       out, NULL);
}

yg_status yg__cuda_any(const yg_tensor *self, yg_tensor **out) {
    return reduce_rows("any", self, NULL, 0, false, YG_BOOL, false, YG_ROWS_ANY, 0, YG_BOOL, out,
                       NULL);
}

yg_status yg__cuda_any_dim(const yg_tensor *self,
                           const int64_t *dim,
                           int64_t dim_len,
                           bool keepdim,
                           yg_tensor **out) {
    return reduce_rows("any", self, dim, dim_len, keepdim, YG_BOOL, false, YG_ROWS_ANY, 0, YG_BOOL,
                       out, NULL);
}

/* ---- prod, var, std, norm, logsumexp ---- */

/* A statistic of floating self's rows, accumulated in double. */
static yg_status statistic(const char *op,
                           const yg_tensor *self,
                           const int64_t *dim,
                           int64_t dim_len,
                           bool keepdim,
                           yg_rows_kind kind,
                           double param,
                           yg_tensor **out) {
    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_floating(op, "self", self));
    return reduce_rows(op, self, dim, dim_len, keepdim, YG_FLOAT64, false, kind, param,
                       self->dtype, out, NULL);
}

yg_status yg__cuda_prod_dim(const yg_tensor *self,
                            const int64_t *dim,
                            int64_t dim_len,
                            bool keepdim,
                            yg_tensor **out) {
    *out = NULL;
    if (yg__dtype_is_floating(self->dtype))
        return statistic("prod", self, dim, dim_len, keepdim, YG_ROWS_PROD, 0, out);
    /* int64, int32 and bool: an exact int64 product. */
    YG_RETURN_IF_ERROR(yg__check_not_half("prod", "self", self));
    return reduce_rows("prod", self, dim, dim_len, keepdim, YG_INT64, false, YG_ROWS_PROD, 0,
                       YG_INT64, out, NULL);
}

yg_status yg__cuda_var(const yg_tensor *self,
                       const int64_t *dim,
                       int64_t dim_len,
                       int64_t correction,
                       bool keepdim,
                       yg_tensor **out) {
    return statistic("var", self, dim, dim_len, keepdim, YG_ROWS_VAR, (double)correction, out);
}

yg_status yg__cuda_std(const yg_tensor *self,
                       const int64_t *dim,
                       int64_t dim_len,
                       int64_t correction,
                       bool keepdim,
                       yg_tensor **out) {
    return statistic("std", self, dim, dim_len, keepdim, YG_ROWS_STD, (double)correction, out);
}

yg_status yg__cuda_var_mean(const yg_tensor *self,
                            const int64_t *dim,
                            int64_t dim_len,
                            int64_t correction,
                            bool keepdim,
                            yg_tensor **out_var,
                            yg_tensor **out_mean) {
    yg_tensor *var = NULL;
    yg_status st;

    *out_var = NULL;
    *out_mean = NULL;
    st = yg__cuda_var(self, dim, dim_len, correction, keepdim, &var);
    if (st == YG_OK)
        st = yg__cuda_mean_dim(self, dim, dim_len, keepdim, out_mean);
    if (st != YG_OK) {
        yg_release(var);
        return yg__fail_prefix(st, "var_mean");
    }
    *out_var = var;
    return YG_OK;
}

yg_status yg__cuda_norm(const yg_tensor *self,
                        double p,
                        const int64_t *dim,
                        int64_t dim_len,
                        bool keepdim,
                        yg_tensor **out) {
    *out = NULL;
    if (isnan(p))
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "norm: p is NaN");
    return statistic("norm", self, dim, dim_len, keepdim, YG_ROWS_NORM, p, out);
}

yg_status yg__cuda_logsumexp(const yg_tensor *self,
                             const int64_t *dim,
                             int64_t dim_len,
                             bool keepdim,
                             yg_tensor **out) {
    return statistic("logsumexp", self, dim, dim_len, keepdim, YG_ROWS_LOGSUMEXP, 0, out);
}

/* ---- the gradients of the reductions ---- */

/* The gradient kind of floating self's rows over dim, with grad_output
 * and output (nullable) per row. */
static yg_status per_row_grad(const char *op,
                              const yg_tensor *grad_output,
                              const yg_tensor *self,
                              const yg_tensor *output,
                              const int64_t *dim,
                              int64_t dim_len,
                              bool keepdim,
                              yg_rows_grad_kind kind,
                              double param,
                              yg_tensor **out) {
    yg_rows rows;
    yg_tensor *g = NULL, *r = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_floating(op, "self", self));
    YG_RETURN_IF_ERROR(yg__rows_init(op, self, dim, dim_len, keepdim, YG_FLOAT64, &rows));
    st = yg__rows_per_row(op, "grad_output", &rows, grad_output, YG_FLOAT64, &g);
    if (st == YG_OK && output != NULL)
        st = yg__rows_per_row(op, "output", &rows, output, YG_FLOAT64, &r);
    if (st == YG_OK)
        st = yg__cuda_grad_rows(op, &rows, kind, param, g, r, self->dtype, self->sizes, out);
    yg_release(g);
    yg_release(r);
    yg__rows_free(&rows);
    return st;
}

yg_status yg__cuda_minmax_backward(const yg_tensor *grad_output,
                                   const yg_tensor *self,
                                   const yg_tensor *output,
                                   const int64_t *dim,
                                   int64_t dim_len,
                                   bool keepdim,
                                   yg_tensor **out) {
    return per_row_grad("minmax_backward", grad_output, self, output, dim, dim_len, keepdim,
                        YG_ROWS_GRAD_MINMAX, 0, out);
}

yg_status yg__cuda_prod_backward(const yg_tensor *grad_output,
                                 const yg_tensor *self,
                                 const int64_t *dim,
                                 int64_t dim_len,
                                 bool keepdim,
                                 yg_tensor **out) {
    return per_row_grad("prod_backward", grad_output, self, NULL, dim, dim_len, keepdim,
                        YG_ROWS_GRAD_PROD, 0, out);
}

yg_status yg__cuda_norm_backward(const yg_tensor *grad_output,
                                 const yg_tensor *self,
                                 const yg_tensor *output,
                                 double p,
                                 const int64_t *dim,
                                 int64_t dim_len,
                                 bool keepdim,
                                 yg_tensor **out) {
    return per_row_grad("norm_backward", grad_output, self, output, dim, dim_len, keepdim,
                        YG_ROWS_GRAD_NORM, p, out);
}

yg_status yg__cuda_prod_double_backward(const yg_tensor *grad,
                                        const yg_tensor *grad_output,
                                        const yg_tensor *self,
                                        const int64_t *dim,
                                        int64_t dim_len,
                                        bool keepdim,
                                        yg_tensor **out) {
    const char *op = "prod_double_backward";
    yg_rows rows, grows;
    yg_tensor *g = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_floating(op, "self", self));
    YG_RETURN_IF_ERROR(yg__check_sizes_match(op, "grad", grad, self));
    YG_RETURN_IF_ERROR(yg__rows_init(op, self, dim, dim_len, keepdim, YG_FLOAT64, &rows));
    st = yg__rows_init(op, grad, dim, dim_len, keepdim, YG_FLOAT64, &grows);
    if (st != YG_OK) {
        yg__rows_free(&rows);
        return st;
    }
    st = yg__rows_per_row(op, "grad_output", &rows, grad_output, YG_FLOAT64, &g);
    if (st == YG_OK)
        st = yg__cuda_grad_rows(op, &rows, YG_ROWS_GRAD_PROD_DOUBLE, 0, grows.data, g,
                                self->dtype, self->sizes, out);
    yg_release(g);
    yg__rows_free(&grows);
    yg__rows_free(&rows);
    return st;
}

/* ---- cumsum, cumprod and cumprod's gradients ---- */

static yg_status
scan(const char *op, const yg_tensor *self, int64_t dim, bool prod, yg_tensor **out) {
    yg_rows rows;
    yg_tensor *block = NULL, *narrow = NULL;
    bool floating = yg__dtype_is_floating(self->dtype);
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_not_half(op, "self", self));
    YG_RETURN_IF_ERROR(yg__rows_init_dim(op, self, dim, floating ? YG_FLOAT64 : YG_INT64, &rows));
    /* Scan a private copy: rows.data may share self's storage. */
    st = yg__tensor_contiguous_as(rows.data, rows.data->dtype, false, &block);
    if (st == YG_OK)
        st = yg__cuda_scan(op, block, rows.outer, rows.inner, prod);
    if (st == YG_OK && floating && self->dtype != YG_FLOAT64)
        st = yg__tensor_contiguous_as(block, self->dtype, false, &narrow);
    if (st == YG_OK)
        st = yg__rows_unpermute(&rows, narrow != NULL ? narrow : block, self->sizes, out);
    yg_release(narrow);
    yg_release(block);
    yg__rows_free(&rows);
    return st;
}

yg_status yg__cuda_cumsum(const yg_tensor *self, int64_t dim, yg_tensor **out) {
    return scan("cumsum", self, dim, false, out);
}

yg_status yg__cuda_cumprod(const yg_tensor *self, int64_t dim, yg_tensor **out) {
    return scan("cumprod", self, dim, true, out);
}

/* The gradient kind of self's lines along dim with the lines of others
 * (each of self's sizes) as its operands. */
static yg_status lines_grad(const char *op,
                            const yg_tensor *self,
                            const yg_tensor *const *others,
                            const char *const *names,
                            int n_others,
                            int64_t dim,
                            yg_rows_grad_kind kind,
                            yg_tensor **out) {
    yg_rows rows, orows[2];
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__rows_init_lines(op, self, others, names, n_others, dim, &rows, orows));
    st = yg__cuda_grad_rows(op, &rows, kind, 0, orows[0].data,
                            n_others > 1 ? orows[1].data : NULL, self->dtype, self->sizes, out);
    for (int i = 0; i < n_others; i++)
        yg__rows_free(&orows[i]);
    yg__rows_free(&rows);
    return st;
}

yg_status yg__cuda_cumprod_backward(const yg_tensor *grad_output,
                                    const yg_tensor *self,
                                    int64_t dim,
                                    yg_tensor **out) {
    return lines_grad("cumprod_backward", self, &grad_output, (const char *const[]){"grad_output"},
                      1, dim, YG_ROWS_GRAD_CUMPROD, out);
}

yg_status
yg__cuda_cumprod_jvp(const yg_tensor *grad, const yg_tensor *self, int64_t dim, yg_tensor **out) {
    return lines_grad("cumprod_jvp", self, &grad, (const char *const[]){"grad"}, 1, dim,
                      YG_ROWS_GRAD_CUMPROD_JVP, out);
}

yg_status yg__cuda_cumprod_double_backward(const yg_tensor *grad,
                                           const yg_tensor *grad_output,
                                           const yg_tensor *self,
                                           int64_t dim,
                                           yg_tensor **out) {
    const yg_tensor *others[] = {grad, grad_output};
    return lines_grad("cumprod_double_backward", self, others,
                      (const char *const[]){"grad", "grad_output"}, 2, dim,
                      YG_ROWS_GRAD_CUMPROD_DOUBLE, out);
}
