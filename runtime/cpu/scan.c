/*
 * scan.c - cumulative sum and product along one dim (cumsum, cumprod)
 * and the gradient of cumprod.
 *
 * The lines of self along dim become the rows of meta/rows.h: a contiguous
 * [outer, n] block in double (floating inputs) or int64 (int64 and bool,
 * which scan to int64 as in PyTorch), scanned in place and permuted back
 * to self's layout.  Floating scans accumulate in double.  These are the
 * CPU's kernels: cuda/reduce.c has the GPU's, which scan a block in
 * place, one thread a line in the same order, and run cumprod's gradients
 * with the loops below (cuda/rows.cu).
 *
 * cumprod_backward handles zeros without dividing by them.  With r_j the
 * prefix products and z the first zero of a line (z = n without one):
 * for k < z, d/dx_k = (sum over k <= j < z of g_j r_j) / x_k (terms from z
 * on contain the zero x_z); for k = z it is the sum over j >= z of
 * g_j times the product of x_0..x_j without x_z; for k > z it is 0.
 * Each line costs O(n).
 */
#include "cpu/cpu_int.h"
#include "decls/cumulative.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
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
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__rows_init_lines(
        "cumprod_backward", self, &grad_output, (const char *const[]){"grad_output"}, 1, dim,
        &rows, &grows));
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

/* ---- double-backward: cumprod_jvp, cumprod_double_backward ----
 * Both run cumprod's products on dual numbers x + e g (e^2 = 0):
 * (a, a') (x, g) = (a x, a' x + a g), never dividing, so they are exact
 * where self holds zeros.  cumprod_jvp is the e part of cumprod(x + e g);
 * cumprod_double_backward the e part of cumprod_backward(go, x + e g):
 * element m is A_m S_m, A_m the product of x_j + e g_j over j < m and
 * S_m = go_m + (x_{m+1} + e g_{m+1}) S_{m+1} (the real part of A_m S_m is
 * cumprod_backward itself). */

static const double *line_of(const yg_rows *rows, int64_t r) {
    return (const double *)yg__tensor_ptr(rows->data) + r * rows->inner;
}

/* block (float64 [outer, inner]) back to self's sizes and dtype */
static yg_status dual_finish(const yg_rows *rows,
                             yg_tensor *block,
                             yg_dtype dtype,
                             const int64_t *sizes,
                             yg_tensor **out) {
    yg_tensor *narrow = NULL;
    yg_status st;

    if (dtype != YG_FLOAT64) {
        st = yg__tensor_contiguous_as(block, dtype, false, &narrow);
        if (st != YG_OK)
            return st;
        block = narrow;
    }
    st = yg__rows_unpermute(rows, block, sizes, out);
    yg_release(narrow);
    return st;
}

yg_status
yg__cpu_cumprod_jvp(const yg_tensor *grad, const yg_tensor *self, int64_t dim, yg_tensor **out) {
    const yg_tensor *others[] = {grad};
    const char *const names[] = {"grad"};
    yg_rows rows, grows;
    yg_tensor *block = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__rows_init_lines("cumprod_jvp", self, others, names, 1, dim, &rows, &grows));
    const int64_t bs[2] = {rows.outer, rows.inner};
    st = yg_tensor_empty(bs, 2, YG_FLOAT64, &block);
    if (st != YG_OK)
        goto out;
    for (int64_t r = 0; r < rows.outer; r++) {
        const double *x = line_of(&rows, r), *g = line_of(&grows, r);
        double *o = (double *)yg__tensor_ptr(block) + r * rows.inner;
        double a = 1, da = 0;
        for (int64_t i = 0; i < rows.inner; i++) {
            da = da * x[i] + a * g[i];
            a *= x[i];
            o[i] = da;
        }
    }
    st = dual_finish(&rows, block, self->dtype, self->sizes, out);
out:
    yg_release(block);
    yg__rows_free(&rows);
    yg__rows_free(&grows);
    return st;
}

yg_status yg__cpu_cumprod_double_backward(const yg_tensor *grad,
                                             const yg_tensor *grad_output,
                                             const yg_tensor *self,
                                             int64_t dim,
                                             yg_tensor **out) {
    const yg_tensor *others[] = {grad, grad_output};
    const char *const names[] = {"grad", "grad_output"};
    yg_rows rows, orows[2];
    yg_tensor *block = NULL;
    double *suffix = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(
        yg__rows_init_lines("cumprod_double_backward", self, others, names, 2, dim, &rows, orows));
    const int64_t bs[2] = {rows.outer, rows.inner};
    st = yg_tensor_empty(bs, 2, YG_FLOAT64, &block);
    if (st != YG_OK)
        goto out;
    /* No rows, no scratch: an empty self may have a huge row length. */
    suffix = malloc((size_t)(rows.inner > 0 && rows.outer > 0 ? rows.inner : 1) * sizeof(double));
    if (suffix == NULL) {
        st = yg__fail(YG_ERR_OUT_OF_MEMORY, "cumprod_double_backward: out of memory");
        goto out;
    }
    for (int64_t r = 0; r < rows.outer; r++) {
        const double *x = line_of(&rows, r), *g = line_of(&orows[0], r),
                     *go = line_of(&orows[1], r);
        double *o = (double *)yg__tensor_ptr(block) + r * rows.inner;
        /* backward sweep: suffix[m] = s_m and o[m] = s'_m */
        double sm = 0, dsm = 0;
        for (int64_t m = rows.inner - 1; m >= 0; m--) {
            if (m + 1 < rows.inner) {
                dsm = dsm * x[m + 1] + sm * g[m + 1];
                sm *= x[m + 1];
            }
            sm += go[m];
            suffix[m] = sm;
            o[m] = dsm;
        }
        /* forward sweep: (a, a') = A_m, the e part of A_m S_m */
        double a = 1, da = 0;
        for (int64_t m = 0; m < rows.inner; m++) {
            o[m] = da * suffix[m] + a * o[m];
            da = da * x[m] + a * g[m];
            a *= x[m];
        }
    }
    st = dual_finish(&rows, block, self->dtype, self->sizes, out);
out:
    free(suffix);
    yg_release(block);
    yg__rows_free(&rows);
    yg__rows_free(&orows[0]);
    yg__rows_free(&orows[1]);
    return st;
}
