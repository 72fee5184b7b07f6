/*
 * clip_grad.c - yg_clip_grad_norm of yagrad/optim.h: rescale a list of
 * parameters' gradients so that their total 2-norm stays under a bound
 * (PyTorch's torch.nn.utils.clip_grad_norm_ with norm_type 2).
 *
 * It runs in two passes so that a failure changes nothing: the first
 * checks every parameter and gradient and sums the squares, the second
 * scales.  Squares are summed in double precision whatever the gradient's
 * dtype: a float32 running sum over a few million elements loses the
 * low digits of the norm, and the clipping factor would follow.
 *
 * Contiguous CPU gradients (what backward accumulates) are read and
 * scaled directly; any other gradient goes through the public ops
 * (a contiguous copy to read, the in-place mul_scalar_ to scale).
 */
#include "cpu/vec/kernels.h"
#include "optim/optim_int.h"
#include "yagrad/autograd.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_inplace_arithmetic.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_views.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

/* The margin PyTorch adds to the norm before dividing, so that an all-zero
 * gradient does not divide by zero. */
#define CLIP_EPS 1e-6

static bool direct(const yg_tensor *g) {
    return g->storage->device == YG_CPU && yg_tensor_is_contiguous(g);
}

/* Sum of the squared elements of contiguous CPU g (float32 or float64):
 * cpu/vec/optim_loops.c, vectorised and over the OpenMP threads. */
static double sum_squares_direct(const yg_tensor *g) {
    return yg__vec()->sum_squares[g->dtype == YG_FLOAT64](yg__tensor_ptr(g), yg_tensor_numel(g));
}

/* Sum of the squared elements of g, any layout or device (a GPU's with
 * ops: a square, a sum in double, and a read of the one value). */
static yg_status sum_squares(const yg_tensor *g, double *out) {
    yg_tensor *c = NULL, *sq = NULL, *s = NULL;
    yg_status st;

    if (direct(g)) {
        *out = sum_squares_direct(g);
        return YG_OK;
    }
    if (g->storage->device != YG_CPU) {
        st = yg_mul(g, g, &sq);
        if (st == YG_OK)
            st = yg_sum(sq, &s);
        if (st == YG_OK)
            st = yg_tensor_item(s, out);
        yg_release(sq);
        yg_release(s);
        return st;
    }
    st = yg_contiguous(g, &c);
    if (st == YG_OK)
        *out = sum_squares_direct(c);
    yg_release(c);
    return st;
}

/* Multiplies g by coef in place. */
static yg_status scale(yg_tensor *g, double coef) {
    int64_t n = yg_tensor_numel(g);
    yg_tensor *self = NULL;
    yg_status st;

    if (!direct(g)) {
        st = yg_mul_scalar_(g, coef, &self);
        yg_release(self);
        return st;
    }
    yg__vec()->scale[g->dtype == YG_FLOAT64](yg__tensor_ptr(g), n, coef);
    yg__tensor_bump_version(g);
    return YG_OK;
}

/* Checks parameter i and its gradient *g (a new ref, NULL without one),
 * and adds the gradient's squared norm to *total. */
static yg_status
check_and_sum(const char *fn, yg_tensor *const *params, int64_t i, yg_tensor **g, double *total) {
    const yg_tensor *p = params[i];
    double sq = 0;

    if (p == NULL)
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "%s: parameter %" PRId64 " is NULL", fn, i);
    for (int64_t j = 0; j < i; j++)
        if (params[j] == p)
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s: parameter %" PRId64 " is parameter %" PRId64
                            " again (its gradient would be scaled twice)", fn,
                            i,
                            j);
    YG_RETURN_IF_ERROR(yg_tensor_grad(p, g));
    if (*g == NULL)
        return YG_OK;
    if (!yg__dtype_is_floating((*g)->dtype))
        return yg__fail(YG_ERR_DTYPE,
                        "%s: the gradient of parameter %" PRId64
                        " has dtype %s (expected float32 or float64)", fn,
                        i,
                        yg_dtype_name((*g)->dtype));
    YG_RETURN_IF_ERROR(sum_squares(*g, &sq));
    if (!isfinite(sq))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: the gradient of parameter %" PRId64
                        " has a non-finite norm (%g); no gradient was changed", fn,
                        i,
                        sqrt(sq));
    *total += sq;
    return YG_OK;
}

/* The total norm of params' gradients; with clip, the gradients are then
 * scaled to at most max_norm. */
static yg_status norm_of(const char *fn,
                         yg_tensor *const *params,
                         int64_t params_len,
                         bool clip,
                         double max_norm,
                         double *out_total_norm) {
    yg_tensor **grads = NULL;
    double total = 0;
    yg_status st = YG_OK;

    if (out_total_norm != NULL)
        *out_total_norm = 0;
    if (clip && (!(max_norm > 0) || isinf(max_norm)))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: max_norm must be positive and finite, got %g", fn,
                        max_norm);
    if (params_len < 0 || (params_len > 0 && params == NULL))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: params is NULL or params_len %" PRId64 " is negative", fn,
                        params_len);
    if (params_len == 0)
        return YG_OK;
    grads = calloc((size_t)params_len, sizeof *grads);
    if (grads == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    for (int64_t i = 0; i < params_len && st == YG_OK; i++)
        st = check_and_sum(fn, params, i, &grads[i], &total);
    if (st != YG_OK)
        goto out;
    total = sqrt(total);
    if (!isfinite(total)) {
        st = yg__fail(YG_ERR_INVALID_ARGUMENT,
                      "%s: the total norm of the gradients overflows (%g); no "
                      "gradient was changed", fn,
                      total);
        goto out;
    }
    double coef = max_norm / (total + CLIP_EPS);
    if (clip && coef < 1) {
        bool prev = yg_set_grad_enabled(false);
        for (int64_t i = 0; i < params_len && st == YG_OK; i++)
            if (grads[i] != NULL)
                st = scale(grads[i], coef);
        yg_set_grad_enabled(prev);
        if (st != YG_OK)
            goto out;
    }
    if (out_total_norm != NULL)
        *out_total_norm = total;
out:
    for (int64_t i = 0; i < params_len; i++)
        yg_release(grads[i]);
    free(grads);
    return st;
}

yg_status yg_clip_grad_norm(yg_tensor *const *params,
                            int64_t params_len,
                            double max_norm,
                            double *out_total_norm) {
    return norm_of("clip_grad_norm", params, params_len, true, max_norm, out_total_norm);
}

yg_status yg_grad_norm(yg_tensor *const *params, int64_t params_len, double *out_total_norm) {
    if (out_total_norm == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "grad_norm: out_total_norm is NULL");
    return norm_of("grad_norm", params, params_len, false, 0, out_total_norm);
}
