/*
 * reduce_stats.c - accumulating reductions beyond sum and mean: prod,
 * var, std and var_mean (with a correction), norm (any p, including 0 and +-inf),
 * logsumexp; and the gradients of prod and norm.
 *
 * All run on the rows of meta/rows.h and accumulate in double (float32
 * inputs too), rounding once into the result's dtype.  prod of int64 or
 * bool inputs multiplies in int64 and returns int64, as PyTorch does; the
 * others are defined for float32 and float64 only.
 *
 * Numerics: var is two-pass (mean first, then squared deviations), which
 * keeps full precision when the mean is large compared to the spread.
 * logsumexp subtracts the row maximum before exponentiating, so large
 * inputs do not overflow; a row whose maximum is infinite gives that
 * infinity.  prod_backward multiplies prefix and suffix products instead
 * of dividing the result by each element, so it is exact where an element
 * is zero (the gradient of prod(0, a, b) with respect to the 0 is a b).
 *
 * The CPU's kernels: cuda/reduce.c has the GPU's, which reduce the same
 * rows in the same passes and compute the gradients of prod and norm with
 * the loops below (cuda/rows.cu).
 */
#include "core/norm_grad.h"
#include "cpu/cpu_int.h"
#include "decls/statistics.h"
#include "decls/sums.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One reduction of a contiguous row of n doubles to one double. */
typedef double (*row_fn)(const double *x, int64_t n, const double *args);

static double prod_row(const double *x, int64_t n, const double *args);
static double var_row(const double *x, int64_t n, const double *args);
static double norm_row(const double *x, int64_t n, const double *args);

/* Runs fn over every row of self (floating only) and returns the
 * result-shaped tensor of self's dtype. */
static yg_status reduce_rows(const char *op,
                             const yg_tensor *self,
                             const int64_t *dim,
                             int64_t dim_len,
                             bool keepdim,
                             row_fn fn,
                             const double *args,
                             yg_tensor **out) {
    yg_rows rows;
    yg_tensor *res = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_floating(op, "self", self));
    YG_RETURN_IF_ERROR(yg__rows_init(op, self, dim, dim_len, keepdim, YG_FLOAT64, &rows));
    st = yg_tensor_empty(rows.out_sizes, rows.out_ndim, self->dtype, &res);
    if (st == YG_OK) {
        const double *x = (const double *)yg__tensor_ptr(rows.data);
        /* Rows are independent: split them over threads when there is
         * enough work (the pointwise iterator's threshold). */
        if (rows.outer > 1 && rows.outer * rows.inner >= 32768) {
#pragma omp parallel for schedule(static)
            for (int64_t r = 0; r < rows.outer; r++)
                yg__store_f64(res, r, fn(x + r * rows.inner, rows.inner, args));
        } else {
            for (int64_t r = 0; r < rows.outer; r++)
                yg__store_f64(res, r, fn(x + r * rows.inner, rows.inner, args));
        }
        *out = res;
    }
    yg__rows_free(&rows);
    return st;
}

/* ---- prod ---- */

static double prod_row(const double *x, int64_t n, const double *args) {
    double p = 1;
    (void)args;
    for (int64_t i = 0; i < n; i++)
        p *= x[i];
    return p;
}

yg_status yg__cpu_prod_dim(const yg_tensor *self,
                           const int64_t *dim,
                           int64_t dim_len,
                           bool keepdim,
                           yg_tensor **out) {
    yg_rows rows;
    yg_tensor *res = NULL;
    yg_status st;

    *out = NULL;
    if (yg__dtype_is_floating(self->dtype))
        return reduce_rows("prod", self, dim, dim_len, keepdim, prod_row, NULL, out);
    /* int64, int32 and bool: an exact int64 product. */
    YG_RETURN_IF_ERROR(yg__check_not_half("prod", "self", self));
    YG_RETURN_IF_ERROR(yg__rows_init("prod", self, dim, dim_len, keepdim, YG_INT64, &rows));
    st = yg_tensor_empty(rows.out_sizes, rows.out_ndim, YG_INT64, &res);
    if (st == YG_OK) {
        const int64_t *x = (const int64_t *)yg__tensor_ptr(rows.data);
        int64_t *dst = (int64_t *)yg__tensor_ptr(res);
        for (int64_t r = 0; r < rows.outer; r++) {
            /* Unsigned: overflow wraps (as in PyTorch) instead of being UB. */
            uint64_t p = 1;
            for (int64_t i = 0; i < rows.inner; i++)
                p *= (uint64_t)x[r * rows.inner + i];
            dst[r] = (int64_t)p;
        }
        *out = res;
    }
    yg__rows_free(&rows);
    return st;
}

yg_status yg__cpu_prod_backward(const yg_tensor *grad_output,
                                   const yg_tensor *self,
                                   const int64_t *dim,
                                   int64_t dim_len,
                                   bool keepdim,
                                   yg_tensor **out) {
    yg_rows rows;
    yg_tensor *g = NULL, *block = NULL;
    double *suffix = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_floating("prod_backward", "self", self));
    YG_RETURN_IF_ERROR(
        yg__rows_init("prod_backward", self, dim, dim_len, keepdim, YG_FLOAT64, &rows));
    st = yg__rows_per_row("prod_backward", "grad_output", &rows, grad_output, YG_FLOAT64, &g);
    if (st == YG_OK) {
        const int64_t bs[2] = {rows.outer, rows.inner};
        st = yg_tensor_empty(bs, 2, self->dtype, &block);
    }
    if (st != YG_OK)
        goto out;
    /* No rows, no scratch: an empty self may have a huge row length. */
    suffix = malloc((size_t)(rows.inner > 0 && rows.outer > 0 ? rows.inner : 1) * sizeof(double));
    if (suffix == NULL) {
        st = yg__fail(YG_ERR_OUT_OF_MEMORY, "prod_backward: out of memory");
        goto out;
    }
    const double *gv = (const double *)yg__tensor_ptr(g);
    for (int64_t r = 0; r < rows.outer; r++) {
        const double *x = (const double *)yg__tensor_ptr(rows.data) + r * rows.inner;
        /* d prod / d x_i = (x_0 ... x_{i-1}) (x_{i+1} ... x_{n-1}) */
        double acc = 1;
        for (int64_t i = rows.inner - 1; i >= 0; i--) {
            suffix[i] = acc;
            acc *= x[i];
        }
        double prefix = 1;
        for (int64_t i = 0; i < rows.inner; i++) {
            yg__store_f64(block, r * rows.inner + i, gv[r] * prefix * suffix[i]);
            prefix *= x[i];
        }
    }
    st = yg__rows_unpermute(&rows, block, self->sizes, out);
out:
    free(suffix);
    yg_release(g);
    yg_release(block);
    yg__rows_free(&rows);
    return st;
}

/* The self gradient of prod_backward (double-backward): for each x_k,
 * grad_output sum_{i != k} grad_i prod_{j != i, k} x_j.  Exact where self
 * holds zeros: prefix and suffix products carry, beside the product, its
 * derivative along grad (dual numbers: (a, a') (x, g) = (a x, a' x + a g)),
 * and element k takes pre' suf + pre suf'. */
yg_status yg__cpu_prod_double_backward(const yg_tensor *grad,
                                          const yg_tensor *grad_output,
                                          const yg_tensor *self,
                                          const int64_t *dim,
                                          int64_t dim_len,
                                          bool keepdim,
                                          yg_tensor **out) {
    yg_rows rows, grows;
    yg_tensor *g = NULL, *block = NULL;
    double *suffix = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_floating("prod_double_backward", "self", self));
    YG_RETURN_IF_ERROR(yg__check_sizes_match("prod_double_backward", "grad", grad, self));
    YG_RETURN_IF_ERROR(
        yg__rows_init("prod_double_backward", self, dim, dim_len, keepdim, YG_FLOAT64, &rows));
    st = yg__rows_init("prod_double_backward", grad, dim, dim_len, keepdim, YG_FLOAT64, &grows);
    if (st != YG_OK) {
        yg__rows_free(&rows);
        return st;
    }
    st =
        yg__rows_per_row("prod_double_backward", "grad_output", &rows, grad_output, YG_FLOAT64, &g);
    if (st == YG_OK) {
        const int64_t bs[2] = {rows.outer, rows.inner};
        st = yg_tensor_empty(bs, 2, self->dtype, &block);
    }
    if (st != YG_OK)
        goto out;
    /* No rows, no scratch (an empty self's row length may not fit 2x);
     * with rows, a row fits: the block holds it. */
    suffix =
        malloc((size_t)(rows.inner > 0 && rows.outer > 0 ? 2 * rows.inner : 1) * sizeof(double));
    if (suffix == NULL) {
        st = yg__fail(YG_ERR_OUT_OF_MEMORY, "prod_double_backward: out of memory");
        goto out;
    }
    double *dsuffix = rows.outer > 0 ? suffix + rows.inner : suffix; /* unused without rows */
    const double *gov = (const double *)yg__tensor_ptr(g);
    for (int64_t r = 0; r < rows.outer; r++) {
        const double *x = (const double *)yg__tensor_ptr(rows.data) + r * rows.inner;
        const double *gr = (const double *)yg__tensor_ptr(grows.data) + r * rows.inner;
        double acc = 1, dacc = 0;
        for (int64_t i = rows.inner - 1; i >= 0; i--) {
            suffix[i] = acc;
            dsuffix[i] = dacc;
            dacc = dacc * x[i] + acc * gr[i];
            acc *= x[i];
        }
        double pre = 1, dpre = 0;
        for (int64_t i = 0; i < rows.inner; i++) {
            yg__store_f64(
                block, r * rows.inner + i, gov[r] * (dpre * suffix[i] + pre * dsuffix[i]));
            dpre = dpre * x[i] + pre * gr[i];
            pre *= x[i];
        }
    }
    st = yg__rows_unpermute(&rows, block, self->sizes, out);
out:
    free(suffix);
    yg_release(g);
    yg_release(block);
    yg__rows_free(&grows);
    yg__rows_free(&rows);
    return st;
}

/* ---- var, std ---- */

/* args[0]: correction; args[1]: 1 for std. */
static double var_row(const double *x, int64_t n, const double *args) {
    double mean = 0, ss = 0;
#pragma omp simd reduction(+ : mean)
    for (int64_t i = 0; i < n; i++)
        mean += x[i];
    mean /= (double)n;
#pragma omp simd reduction(+ : ss)
    for (int64_t i = 0; i < n; i++)
        ss += (x[i] - mean) * (x[i] - mean);
    /* N - correction <= 0 divides by 0: inf, or NaN for an empty row. */
    double denom = (double)n - args[0];
    double v = ss / (denom > 0 ? denom : 0);
    return args[1] != 0 ? sqrt(v) : v;
}

yg_status yg__cpu_var(const yg_tensor *self,
                         const int64_t *dim,
                         int64_t dim_len,
                         int64_t correction,
                         bool keepdim,
                         yg_tensor **out) {
    const double args[2] = {(double)correction, 0};
    return reduce_rows("var", self, dim, dim_len, keepdim, var_row, args, out);
}

yg_status yg__cpu_std(const yg_tensor *self,
                         const int64_t *dim,
                         int64_t dim_len,
                         int64_t correction,
                         bool keepdim,
                         yg_tensor **out) {
    const double args[2] = {(double)correction, 1};
    return reduce_rows("std", self, dim, dim_len, keepdim, var_row, args, out);
}

/* Both statistics of var_mean as two reductions over the same rows (var
 * computes the mean again internally; fusing would save one read of
 * self).  On failure both outputs are NULL. */
yg_status yg__cpu_var_mean(const yg_tensor *self,
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
    st = yg__cpu_var(self, dim, dim_len, correction, keepdim, &var);
    if (st == YG_OK)
        st = yg__cpu_mean_dim(self, dim, dim_len, keepdim, out_mean);
    if (st != YG_OK) {
        yg_release(var);
        return yg__fail_prefix(st, "var_mean");
    }
    *out_var = var;
    return YG_OK;
}

/* ---- norm ---- */

/* args[0]: p. */
static double norm_row(const double *x, int64_t n, const double *args) {
    double p = args[0], acc;
    if (isinf(p)) {
        acc = p > 0 ? 0 : INFINITY;
        for (int64_t i = 0; i < n; i++) {
            double a = fabs(x[i]);
            if (isnan(a))
                return a;
            acc = p > 0 ? (a > acc ? a : acc) : (a < acc ? a : acc);
        }
        return acc;
    }
    acc = 0;
    if (p == 0) {
        for (int64_t i = 0; i < n; i++)
            acc += x[i] != 0;
        return acc;
    }
    if (p == 1) {
        for (int64_t i = 0; i < n; i++)
            acc += fabs(x[i]);
        return acc;
    }
    if (p == 2) {
        for (int64_t i = 0; i < n; i++)
            acc += x[i] * x[i];
        return sqrt(acc);
    }
    for (int64_t i = 0; i < n; i++)
        acc += pow(fabs(x[i]), p);
    return pow(acc, 1 / p);
}

yg_status yg__cpu_norm(const yg_tensor *self,
                          double p,
                          const int64_t *dim,
                          int64_t dim_len,
                          bool keepdim,
                          yg_tensor **out) {
    const double args[1] = {p};
    if (isnan(p))
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "norm: p is NaN");
    return reduce_rows("norm", self, dim, dim_len, keepdim, norm_row, args, out);
}


yg_status yg__cpu_norm_backward(const yg_tensor *grad_output,
                                   const yg_tensor *self,
                                   const yg_tensor *output,
                                   double p,
                                   const int64_t *dim,
                                   int64_t dim_len,
                                   bool keepdim,
                                   yg_tensor **out) {
    yg_rows rows;
    yg_tensor *g = NULL, *r = NULL, *block = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_floating("norm_backward", "self", self));
    YG_RETURN_IF_ERROR(
        yg__rows_init("norm_backward", self, dim, dim_len, keepdim, YG_FLOAT64, &rows));
    st = yg__rows_per_row("norm_backward", "grad_output", &rows, grad_output, YG_FLOAT64, &g);
    if (st == YG_OK)
        st = yg__rows_per_row("norm_backward", "output", &rows, output, YG_FLOAT64, &r);
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
        if (isinf(p))
            for (int64_t i = 0; i < rows.inner; i++)
                count += fabs(x[i]) == rv[row];
        for (int64_t i = 0; i < rows.inner; i++)
            yg__store_f64(
                block, row * rows.inner + i, gv[row] * yg__norm_grad(x[i], rv[row], p, count));
    }
    st = yg__rows_unpermute(&rows, block, self->sizes, out);
out:
    yg_release(g);
    yg_release(r);
    yg_release(block);
    yg__rows_free(&rows);
    return st;
}

/* ---- logsumexp ---- */

static double logsumexp_row(const double *x, int64_t n, const double *args) {
    double mx = -INFINITY, s = 0;
    (void)args;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(x[i]))
            return x[i];
        mx = x[i] > mx ? x[i] : mx;
    }
    if (isinf(mx))
        return mx; /* all -inf (or empty): -inf; any +inf: +inf */
    for (int64_t i = 0; i < n; i++)
        s += exp(x[i] - mx);
    return mx + log(s);
}

yg_status yg__cpu_logsumexp(const yg_tensor *self,
                               const int64_t *dim,
                               int64_t dim_len,
                               bool keepdim,
                               yg_tensor **out) {
    return reduce_rows("logsumexp", self, dim, dim_len, keepdim, logsumexp_row, NULL, out);
}
