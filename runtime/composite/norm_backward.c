/*
 * norm_backward.c - native_layer_norm_backward and
 * native_batch_norm_backward: the gradients of the fused norm kernels, in
 * input, weight and bias (each only when grad_input_mask asks for it).
 *
 * With xhat = (x - mean) rstd over the normalized group (a row of
 * layer_norm, a channel of batch_norm when training) of M values and
 * g = grad_out weight:
 *   grad_input  = rstd (g - mean(g) - xhat mean(g xhat))
 *   grad_weight = sum of grad_out xhat over the other dims
 *   grad_bias   = sum of grad_out over the other dims
 * and, when batch_norm evaluates (mean and rstd are the running
 * statistics' constants), grad_input = g rstd.
 *
 * Each op is composite so that it has two ways to run.  When nothing
 * records its parts (yg__composite_needs_parts: grad mode off, as in a
 * backward without create_graph, or no input requiring grad, and no
 * tracer recording through composites) it runs the fused kernel (*_backward_fused,
 * runtime/cpu/norm.c): two passes per row or channel.  Otherwise its
 * result must differentiate again (double backward), so it computes the
 * same formulas with differentiable ops, the statistics recomputed from
 * input (with eps) so that their dependence on input is part of the
 * graph; the mean and rstd arguments, which native_*_norm returns without
 * history, are then unused.  Both ways agree when mean and rstd are
 * native_*_norm's of input, as the derivative formulas pass them.
 */
#include "composite/composite.h"
#include "composite/norm_int.h"
#include "decls/norms_backward.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_norms.h"
#include "yagrad/ops_norms_backward.h"
#include "yagrad/ops_statistics.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_unary_math.h"
#include "yagrad/ops_views.h"

/* grad_input, grad_weight and grad_bias from the differentiable formulas:
 * the group is dims[0..n_dims) (kept with keepdim), the others other[..];
 * w, mean and rstd broadcast against input (w nullable). */
typedef struct norm_parts {
    const int64_t *dims, *other;
    int64_t n_dims, n_other;
    bool training; /* false: mean and rstd are constants (batch_norm eval) */
} norm_parts;

/* The sum of t over p->other into *out (t itself when there is none). */
static yg_status sum_other(const norm_parts *p, const yg_tensor *t, yg_tensor **out) {
    if (p->n_other == 0) {
        *out = yg_retain((yg_tensor *)t);
        return YG_OK;
    }
    return yg_sum_dim(t, p->other, p->n_other, false, out);
}

static yg_status differentiable(const norm_parts *p,
                                const yg_tensor *grad_out,
                                const yg_tensor *input,
                                const yg_tensor *w,
                                const yg_tensor *mean,
                                const yg_tensor *rstd,
                                const bool *mask,
                                yg_tensor **gi,
                                yg_tensor **gw,
                                yg_tensor **gb) {
    yg_tensor *cen = NULL, *xhat = NULL, *g = NULL, *mg = NULL, *gx = NULL, *mgx = NULL;
    yg_tensor *d1 = NULL, *d2 = NULL, *d3 = NULL, *p1 = NULL;
    yg_status st;

    st = yg_sub(input, mean, 1, &cen);
    if (st == YG_OK)
        st = yg_mul(cen, rstd, &xhat);
    if (st == YG_OK && mask[0]) {
        st = w != NULL ? yg_mul(grad_out, w, &g) : (g = yg_retain((yg_tensor *)grad_out), YG_OK);
        if (st == YG_OK && p->training) {
            st = yg_mean_dim(g, p->dims, p->n_dims, true, &mg);
            if (st == YG_OK)
                st = yg_mul(g, xhat, &gx);
            if (st == YG_OK)
                st = yg_mean_dim(gx, p->dims, p->n_dims, true, &mgx);
            if (st == YG_OK)
                st = yg_sub(g, mg, 1, &d1);
            if (st == YG_OK)
                st = yg_mul(xhat, mgx, &d2);
            if (st == YG_OK)
                st = yg_sub(d1, d2, 1, &d3);
            if (st == YG_OK)
                st = yg_mul(d3, rstd, gi);
        } else if (st == YG_OK) {
            st = yg_mul(g, rstd, gi);
        }
    }
    if (st == YG_OK && mask[1]) {
        st = yg_mul(grad_out, xhat, &p1);
        if (st == YG_OK)
            st = sum_other(p, p1, gw);
    }
    if (st == YG_OK && mask[2])
        st = sum_other(p, grad_out, gb);
    yg_release(cen);
    yg_release(xhat);
    yg_release(g);
    yg_release(mg);
    yg_release(gx);
    yg_release(mgx);
    yg_release(d1);
    yg_release(d2);
    yg_release(d3);
    yg_release(p1);
    return st;
}

/* mean and rstd = rsqrt(biased var + eps) of input over dims, kept. */
static yg_status statistics(const yg_tensor *input,
                            const int64_t *dims,
                            int64_t n_dims,
                            double eps,
                            yg_tensor **mean,
                            yg_tensor **rstd) {
    yg_tensor *var = NULL, *ve = NULL;
    yg_status st;

    st = yg_mean_dim(input, dims, n_dims, true, mean);
    if (st == YG_OK)
        st = yg_var(input, dims, n_dims, 0, true, &var);
    if (st == YG_OK)
        st = yg_add_scalar(var, eps, 1, &ve);
    if (st == YG_OK)
        st = yg_rsqrt(ve, rstd);
    yg_release(var);
    yg_release(ve);
    return st;
}

/* Moves the three results out, or releases them on failure. */
static yg_status finish(yg_status st,
                        yg_tensor *gi,
                        yg_tensor *gw,
                        yg_tensor *gb,
                        yg_tensor **out_gi,
                        yg_tensor **out_gw,
                        yg_tensor **out_gb) {
    if (st != YG_OK) {
        yg_release(gi);
        yg_release(gw);
        yg_release(gb);
        return st;
    }
    *out_gi = gi;
    *out_gw = gw;
    *out_gb = gb;
    return YG_OK;
}

yg_status yg__composite_native_layer_norm_backward(const yg_tensor *grad_out,
                                                   const yg_tensor *input,
                                                   const yg_tensor *mean,
                                                   const yg_tensor *rstd,
                                                   const yg_tensor *weight,
                                                   const int64_t *normalized_shape,
                                                   int64_t normalized_shape_len,
                                                   double eps,
                                                   const bool *grad_input_mask,
                                                   yg_tensor **out_grad_input,
                                                   yg_tensor **out_grad_weight,
                                                   yg_tensor **out_grad_bias) {
    const yg_tensor *tensors[5] = {grad_out, input, mean, rstd, weight};
    int64_t nd = yg_tensor_ndim(input), len = normalized_shape_len;
    int64_t dims[YG_MAX_DIMS], other[YG_MAX_DIMS];
    yg_tensor *mu = NULL, *rs = NULL, *gi = NULL, *gw = NULL, *gb = NULL;
    yg_status st;

    *out_grad_input = NULL;
    *out_grad_weight = NULL;
    *out_grad_bias = NULL;
    if (!yg__composite_needs_parts(tensors, 5) || len < 1 || len > nd)
        return yg_native_layer_norm_backward_fused(grad_out,
                                                   input,
                                                   mean,
                                                   rstd,
                                                   weight,
                                                   normalized_shape,
                                                   len,
                                                   grad_input_mask,
                                                   out_grad_input,
                                                   out_grad_weight,
                                                   out_grad_bias);
    for (int64_t d = 0; d < nd; d++) {
        if (d < nd - len)
            other[d] = d;
        else
            dims[d - (nd - len)] = d;
    }
    norm_parts p = {dims, other, len, nd - len, true};
    st = statistics(input, dims, len, eps, &mu, &rs);
    if (st == YG_OK)
        st = differentiable(&p, grad_out, input, weight, mu, rs, grad_input_mask, &gi, &gw, &gb);
    yg_release(mu);
    yg_release(rs);
    return finish(st, gi, gw, gb, out_grad_input, out_grad_weight, out_grad_bias);
}

yg_status yg__composite_native_batch_norm_backward(const yg_tensor *grad_out,
                                                   const yg_tensor *input,
                                                   const yg_tensor *weight,
                                                   const yg_tensor *save_mean,
                                                   const yg_tensor *save_invstd,
                                                   bool training,
                                                   double eps,
                                                   const bool *grad_input_mask,
                                                   yg_tensor **out_grad_input,
                                                   yg_tensor **out_grad_weight,
                                                   yg_tensor **out_grad_bias) {
    const yg_tensor *tensors[5] = {grad_out, input, weight, save_mean, save_invstd};
    int64_t nd = yg_tensor_ndim(input), dims[YG_MAX_DIMS], affine[YG_MAX_DIMS], n_dims = 0;
    yg_tensor *mu = NULL, *rs = NULL, *w = NULL, *gi = NULL, *gw = NULL, *gb = NULL;
    yg_status st;

    *out_grad_input = NULL;
    *out_grad_weight = NULL;
    *out_grad_bias = NULL;
    if (!yg__composite_needs_parts(tensors, 5) || nd < 2 || nd > 5)
        return yg_native_batch_norm_backward_fused(grad_out,
                                                   input,
                                                   weight,
                                                   save_mean,
                                                   save_invstd,
                                                   training,
                                                   grad_input_mask,
                                                   out_grad_input,
                                                   out_grad_weight,
                                                   out_grad_bias);
    /* the group is every dim but the channels; per-channel values are
     * [1, C, 1, ...] to broadcast */
    for (int64_t d = 0; d < nd; d++) {
        affine[d] = d == 1 ? yg_tensor_size(input, 1) : 1;
        if (d != 1)
            dims[n_dims++] = d;
    }
    norm_parts p = {dims, dims, n_dims, n_dims, training};
    if (training) {
        st = statistics(input, dims, n_dims, eps, &mu, &rs);
    } else {
        st = yg_reshape(save_mean, affine, nd, &mu);
        if (st == YG_OK)
            st = yg_reshape(save_invstd, affine, nd, &rs);
    }
    if (st == YG_OK && weight != NULL)
        st = yg_reshape(weight, affine, nd, &w);
    if (st == YG_OK)
        st = differentiable(&p, grad_out, input, w, mu, rs, grad_input_mask, &gi, &gw, &gb);
    yg_release(mu);
    yg_release(rs);
    yg_release(w);
    return finish(st, gi, gw, gb, out_grad_input, out_grad_weight, out_grad_bias);
}
