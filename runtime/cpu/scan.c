/*
 * scan.c - cumulative sum and product along one dim (cumsum, cumprod)
 * and the gradient of cumprod.
 *
 * The lines of self along dim become the rows of cpu_int.h: a contiguous
 * [outer, n] block in double (floating inputs) or int64 (int64 and bool,
 * which scan to int64 as in PyTorch), scanned in place and permuted back
 * to self's layout.  Floating scans accumulate in double.
 *
 * cumprod_backward handles zeros without dividing by them.  With r_j the
 * prefix products and z the first zero of a line (z = n without one):
 * for k < z, d/dx_k = (sum over k <= j < z of g_j r_j) / x_k (terms from z
 * on contain the zero x_z); for k = z it is the sum over j >= z of
 * g_j times the product of x_0..x_j without x_z; for k > z it is 0.
 * Each line costs O(n).
 */
#include "cpu/cpu_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static yg_status
scan(const char *op, const yg_tensor *self, int64_t dim, bool prod, yg_tensor **out) {
    yg_rows rows;
    yg_tensor *block = NULL;
    bool floating = yg__dtype_is_floating(self->dtype);
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_not_half(op, "self", self));
    YG_RETURN_IF_ERROR(yg__rows_init_dim(op, self, dim, floating ? YG_FLOAT64 : YG_INT64, &rows));
    /* Scan a private copy: rows.data may share self's storage. */
    st = yg__tensor_contiguous_as(rows.data, rows.data->dtype, false, &block);
    if (st != YG_OK)
        goto out;
    for (int64_t r = 0; r < rows.outer; r++) {
        if (floating) {
            double *x = (double *)yg__tensor_ptr(block) + r * rows.inner;
            for (int64_t i = 1; i < rows.inner; i++)
                x[i] = prod ? x[i - 1] * x[i] : x[i - 1] + x[i];
        } else {
            /* Unsigned: overflow wraps instead of being undefined. */
            int64_t *x = (int64_t *)yg__tensor_ptr(block) + r * rows.inner;
            for (int64_t i = 1; i < rows.inner; i++)
                x[i] = (int64_t)(prod ? (uint64_t)x[i - 1] * (uint64_t)x[i]
                                      : (uint64_t)x[i - 1] + (uint64_t)x[i]);
        }
    }
    if (floating && self->dtype != YG_FLOAT64) {
        yg_tensor *narrow = NULL;
        st = yg__tensor_contiguous_as(block, self->dtype, false, &narrow);
        yg_release(block);
        block = narrow;
        if (st != YG_OK)
            goto out;
    }
    st = yg__rows_unpermute(&rows, block, self->sizes, out);
out:
    yg_release(block);
    yg__rows_free(&rows);
    return st;
}

yg_status yg__cpu_cumsum(const yg_tensor *self, int64_t dim, yg_tensor **out) {
    return scan("cumsum", self, dim, false, out);
}

yg_status yg__cpu_cumprod(const yg_tensor *self, int64_t dim, yg_tensor **out) {
    return scan("cumprod", self, dim, true, out);
}

/* The gradient of one line of n elements (see the top of the file). */
static void cumprod_line(const double *x, const double *g, double *out, int64_t n) {
    int64_t z = 0;
    while (z < n && x[z] != 0)
        z++;
    /* k < z: suffix sums of g_j r_j over j < z, divided by x_k. */
    double r = 1, s = 0;
    for (int64_t j = 0; j < z; j++) {
        r *= x[j];
        out[j] = g[j] * r; /* g_j r_j for now */
    }
    for (int64_t k = z - 1; k >= 0; k--) {
        s += out[k];
        out[k] = s / x[k];
    }
    if (z == n)
        return;
    /* k = z: r is now the product of x_0 .. x_{z-1}. */
    double acc = 0, q = r;
    for (int64_t j = z; j < n; j++) {
        if (j > z)
            q *= x[j];
        acc += g[j] * q;
    }
    out[z] = acc;
    for (int64_t k = z + 1; k < n; k++)
        out[k] = 0;
}

yg_status yg__cpu_cumprod_backward(const yg_tensor *grad_output,
                                   const yg_tensor *self,
                                   int64_t dim,
                                   yg_tensor **out) {
    yg_rows rows, grows;
    yg_tensor *block = NULL;
    char gbuf[128], sbuf[128];
    yg_status st;

    *out = NULL;
    if (!yg__dtype_is_floating(self->dtype))
        return yg__fail(YG_ERR_DTYPE,
                        "cumprod_backward: unsupported dtype %s for self (supported: float32, "
                        "float64)",
                        yg_dtype_name(self->dtype));
    if (grad_output->ndim != self->ndim ||
        memcmp(grad_output->sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim) != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "cumprod_backward: grad_output %s does not match self %s",
                        yg__format_sizes(grad_output->sizes, grad_output->ndim, gbuf, sizeof gbuf),
                        yg__format_sizes(self->sizes, self->ndim, sbuf, sizeof sbuf));
    YG_RETURN_IF_ERROR(yg__rows_init_dim("cumprod_backward", self, dim, YG_FLOAT64, &rows));
    st = yg__rows_init_dim("cumprod_backward", grad_output, dim, YG_FLOAT64, &grows);
    if (st != YG_OK) {
        yg__rows_free(&rows);
        return st;
    }
    {
        const int64_t bs[2] = {rows.outer, rows.inner};
        st = yg_tensor_empty(bs, 2, YG_FLOAT64, &block);
    }
    if (st != YG_OK)
        goto out;
    for (int64_t r = 0; r < rows.outer; r++)
        cumprod_line((const double *)yg__tensor_ptr(rows.data) + r * rows.inner,
                     (const double *)yg__tensor_ptr(grows.data) + r * rows.inner,
                     (double *)yg__tensor_ptr(block) + r * rows.inner,
                     rows.inner);
    if (self->dtype != YG_FLOAT64) {
        yg_tensor *narrow = NULL;
        st = yg__tensor_contiguous_as(block, self->dtype, false, &narrow);
        yg_release(block);
        block = narrow;
        if (st != YG_OK)
            goto out;
    }
    st = yg__rows_unpermute(&rows, block, self->sizes, out);
out:
    yg_release(block);
    yg__rows_free(&rows);
    yg__rows_free(&grows);
    return st;
}
