/*
 * composite/nn.c - layers and gradients written with other ops:
 * layer_norm, group_norm, scaled_dot_product_attention (flash_attention,
 * the tiled kernel, when it applies; else its ops), and
 * softmax_backward (the gradient of softmax: softmax_backward_fused when
 * nothing records its parts, the parts when they must stay differentiable for
 * double backward).
 *
 * layer_norm normalizes over the trailing dims named by normalized_shape
 * with the biased variance (correction 0), as PyTorch does:
 * (x - mean) / sqrt(var + eps) * weight + bias.  It checks its arguments
 * and runs native_layer_norm, the fused kernel whose derivative entry
 * (native_layer_norm_backward, composite/norm_backward.c) gives the
 * gradient.
 *
 * As for every composite, messages of our own checks carry no op name (the
 * generated wrapper prefixes it); errors of the inner ops pass through with
 * their own names.
 */
#include "composite/composite.h"
#include "composite/norm_int.h"
#include "cpu/cpu.h"
#include "decls/layers.h"
#include "decls/norms.h"
#include "decls/softmax.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_blend.h"
#include "yagrad/ops_comparison.h"
#include "yagrad/ops_indexing.h"
#include "yagrad/ops_layers.h"
#include "yagrad/ops_attention.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_norms.h"
#include "yagrad/ops_softmax.h"
#include "yagrad/ops_statistics.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_unary_math.h"
#include "yagrad/ops_views.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

yg_status yg__composite_softmax_backward(const yg_tensor *grad_output,
                                         const yg_tensor *output,
                                         int64_t dim,
                                         yg_tensor **out) {
    yg_tensor *gy = NULL, *s = NULL, *d = NULL;
    yg_status st;

    *out = NULL;
    const yg_tensor *inputs[2] = {grad_output, output};
    if (!yg__composite_needs_parts(inputs, 2))
        return yg_softmax_backward_fused(grad_output, output, dim, out);
    /* y * (g - sum(g * y, dim)) */
    st = yg_mul(grad_output, output, &gy);
    if (st == YG_OK)
        st = yg_sum_dim(gy, &dim, 1, true, &s);
    if (st == YG_OK)
        st = yg_sub(grad_output, s, 1, &d);
    if (st == YG_OK)
        st = yg_mul(output, d, out);
    yg_release(gy);
    yg_release(s);
    yg_release(d);
    return st;
}

yg_status yg__composite_log_softmax_jvp(const yg_tensor *grad,
                                        const yg_tensor *output,
                                        int64_t dim,
                                        yg_tensor **out) {
    yg_tensor *e = NULL, *ge = NULL, *s = NULL;
    yg_status st;

    *out = NULL;
    /* g - sum(g * exp(y), dim) */
    st = yg_exp(output, &e);
    if (st == YG_OK)
        st = yg_mul(grad, e, &ge);
    if (st == YG_OK)
        st = yg_sum_dim(ge, &dim, 1, true, &s);
    if (st == YG_OK)
        st = yg_sub(grad, s, 1, out);
    yg_release(e);
    yg_release(ge);
    yg_release(s);
    return st;
}

/* Fails unless t (weight or bias) is NULL or has exactly shape. */
static yg_status
check_affine(const char *name, const yg_tensor *t, const int64_t *shape, int64_t len) {
    char tbuf[128], sbuf[160];

    if (t == NULL)
        return YG_OK;
    if (yg_tensor_ndim(t) != len ||
        memcmp(yg_tensor_sizes(t), shape, sizeof(int64_t) * (size_t)len) != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "expected %s of normalized_shape %s, got %s",
                        name,
                        yg__format_sizes(shape, len, sbuf, sizeof sbuf),
                        yg_tensor_format_sizes(t, tbuf, sizeof tbuf));
    return YG_OK;
}

yg_status yg__composite_layer_norm(const yg_tensor *input,
                                   const int64_t *normalized_shape,
                                   int64_t normalized_shape_len,
                                   const yg_tensor *weight,
                                   const yg_tensor *bias,
                                   double eps,
                                   yg_tensor **out) {
    int64_t nd = yg_tensor_ndim(input), len = normalized_shape_len;
    const int64_t *sizes = yg_tensor_sizes(input);
    yg_tensor *x = NULL, *w = NULL, *b = NULL, *mean = NULL, *rstd = NULL;
    const yg_tensor *operands[3] = {input, weight, bias};
    char ibuf[128], sbuf[160];
    yg_dtype dtype;
    yg_status st;

    *out = NULL;
    if (len < 1 || len > nd || normalized_shape == NULL ||
        memcmp(sizes + (nd - len), normalized_shape, sizeof(int64_t) * (size_t)len) != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "expected input whose trailing sizes are normalized_shape %s, got %s",
                        yg__format_sizes(normalized_shape, len, sbuf, sizeof sbuf),
                        yg_tensor_format_sizes(input, ibuf, sizeof ibuf));
    YG_RETURN_IF_ERROR(check_affine("weight", weight, normalized_shape, len));
    YG_RETURN_IF_ERROR(check_affine("bias", bias, normalized_shape, len));
    /* one fused kernel (runtime/cpu/norm.c) in the operands' promoted
     * dtype, as the composition of binary ops it replaces computed */
    dtype = yg__norm_dtype(operands, 3);
    st = yg__norm_as_dtype(input, dtype, &x);
    if (st == YG_OK)
        st = yg__norm_as_dtype(weight, dtype, &w);
    if (st == YG_OK)
        st = yg__norm_as_dtype(bias, dtype, &b);
    if (st == YG_OK)
        st = yg_native_layer_norm(x, normalized_shape, len, w, b, eps, out, &mean, &rstd);
    yg_release(x);
    yg_release(w);
    yg_release(b);
    yg_release(mean);
    yg_release(rstd);
    return st;
}

/* Whether scaled_dot_product_attention without a mask can run as
 * flash_attention (the tiled kernel, memory linear in L and S): a CPU
 * kernel of float32 or float64, for query, key and value of one dtype
 * whose batch dims are the same (flash_attention does not broadcast).
 * Anything else (a CUDA tensor, another dtype, broadcast batch dims)
 * keeps the ops below. */
static bool flash_applies(const yg_tensor *q, const yg_tensor *k, const yg_tensor *v) {
    yg_dtype dt = yg_tensor_dtype(q);
    int64_t nd = yg_tensor_ndim(q);
    if (dt != YG_FLOAT32 && dt != YG_FLOAT64)
        return false;
    if (yg_tensor_dtype(k) != dt || yg_tensor_dtype(v) != dt)
        return false;
    if (yg_tensor_device(q) != YG_CPU || yg_tensor_device(k) != YG_CPU ||
        yg_tensor_device(v) != YG_CPU)
        return false;
    if (yg_tensor_ndim(k) != nd || yg_tensor_ndim(v) != nd)
        return false;
    for (int64_t d = 0; d < nd - 2; d++) {
        if (yg_tensor_size(k, d) != yg_tensor_size(q, d) ||
            yg_tensor_size(v, d) != yg_tensor_size(q, d))
            return false;
    }
    return yg_tensor_size(k, -1) == yg_tensor_size(q, -1) &&
           yg_tensor_size(v, -2) == yg_tensor_size(k, -2);
}

yg_status yg__composite_scaled_dot_product_attention(const yg_tensor *query,
                                                     const yg_tensor *key,
                                                     const yg_tensor *value,
                                                     const yg_tensor *attn_mask,
                                                     bool is_causal,
                                                     const double *scale,
                                                     yg_tensor **out) {
    int64_t qn = yg_tensor_ndim(query), kn = yg_tensor_ndim(key);
    yg_tensor *kt = NULL, *raw = NULL, *scores = NULL, *masked = NULL, *ones = NULL, *upper = NULL;
    yg_tensor *notm = NULL, *attn = NULL;
    char qbuf[128], kbuf[128];
    yg_status st;

    *out = NULL;
    if (qn < 2 || kn < 2 || yg_tensor_ndim(value) < 2)
        return yg__fail(
            YG_ERR_SHAPE,
            "expected query, key and value of at least 2 dims [..., L, E], got query %s "
            "and key %s",
            yg_tensor_format_sizes(query, qbuf, sizeof qbuf),
            yg_tensor_format_sizes(key, kbuf, sizeof kbuf));
    if (attn_mask == NULL && flash_applies(query, key, value)) {
        yg_tensor *lse = NULL;
        st = yg_flash_attention(query, key, value, is_causal, scale, out, &lse);
        yg_release(lse);
        return st;
    }
    int64_t L = yg_tensor_size(query, -2), S = yg_tensor_size(key, -2),
            E = yg_tensor_size(query, -1);
    double s = scale != NULL ? *scale : 1 / sqrt((double)(E > 0 ? E : 1));
    st = yg_transpose(key, -2, -1, &kt);
    if (st == YG_OK)
        st = yg_matmul(query, kt, &raw);
    if (st == YG_OK)
        st = yg_mul_scalar(raw, s, &scores);
    if (st == YG_OK && is_causal) {
        /* key j is hidden from query i when j > i: the strict upper triangle */
        const int64_t ls[2] = {L, S};
        st = yg_tensor_full(ls, 2, 1, YG_BOOL, &ones);
        if (st == YG_OK)
            st = yg_triu(ones, 1, &upper);
        if (st == YG_OK)
            st = yg_masked_fill(scores, upper, -INFINITY, &masked);
        if (st == YG_OK) {
            yg_release(scores);
            scores = masked;
            masked = NULL;
        }
    }
    if (st == YG_OK && attn_mask != NULL) {
        if (yg_tensor_dtype(attn_mask) == YG_BOOL) {
            st = yg_logical_not(attn_mask, &notm);
            if (st == YG_OK)
                st = yg_masked_fill(scores, notm, -INFINITY, &masked);
        } else {
            st = yg_add(scores, attn_mask, 1, &masked);
        }
        if (st == YG_OK) {
            yg_release(scores);
            scores = masked;
            masked = NULL;
        }
    }
    if (st == YG_OK)
        st = yg_softmax(scores, -1, &attn);
    if (st == YG_OK)
        st = yg_matmul(attn, value, out);
    yg_release(kt);
    yg_release(raw);
    yg_release(scores);
    yg_release(masked);
    yg_release(ones);
    yg_release(upper);
    yg_release(notm);
    yg_release(attn);
    return st;
}

yg_status yg__composite_group_norm(const yg_tensor *input,
                                   int64_t num_groups,
                                   const yg_tensor *weight,
                                   const yg_tensor *bias,
                                   double eps,
                                   yg_tensor **out) {
    int64_t nd = yg_tensor_ndim(input), affine[YG_MAX_DIMS];
    const int64_t *sizes = yg_tensor_sizes(input);
    yg_tensor *g = NULL, *mean = NULL, *var = NULL, *ve = NULL, *inv = NULL, *cen = NULL;
    yg_tensor *xhat = NULL, *back = NULL, *w = NULL, *b = NULL, *scaled = NULL;
    char ibuf[128];
    yg_status st;

    *out = NULL;
    if (nd < 2 || num_groups <= 0 || sizes[1] % num_groups != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "expected input [N, C, *] with C divisible by num_groups %" PRId64
                        ", got %s",
                        num_groups,
                        yg_tensor_format_sizes(input, ibuf, sizeof ibuf));
    const int64_t channels[1] = {sizes[1]};
    YG_RETURN_IF_ERROR(check_affine("weight", weight, channels, 1));
    YG_RETURN_IF_ERROR(check_affine("bias", bias, channels, 1));
    /* Checked, a 0 first (core/sizes.h): an empty input's other dims may
     * be huge; then the groups cannot be formed. */
    int64_t per_group = yg__sizes_product(sizes + 1, nd - 1);
    if (per_group < 0)
        return yg__fail(YG_ERR_SHAPE,
                        "input %s has more than 2^59 elements per sample",
                        yg_tensor_format_sizes(input, ibuf, sizeof ibuf));
    per_group /= num_groups;
    const int64_t gs[3] = {sizes[0], num_groups, per_group}, last[1] = {2};
    /* [1, C, 1, ...]: weight and bias broadcast over N and the positions */
    for (int64_t d = 0; d < nd; d++)
        affine[d] = d == 1 ? sizes[1] : 1;
    st = yg_reshape(input, gs, 3, &g);
    if (st == YG_OK)
        st = yg_mean_dim(g, last, 1, true, &mean);
    if (st == YG_OK)
        st = yg_var(g, last, 1, 0, true, &var);
    if (st == YG_OK)
        st = yg_add_scalar(var, eps, 1, &ve);
    if (st == YG_OK)
        st = yg_rsqrt(ve, &inv);
    if (st == YG_OK)
        st = yg_sub(g, mean, 1, &cen);
    if (st == YG_OK)
        st = yg_mul(cen, inv, &xhat);
    if (st == YG_OK)
        st = yg_reshape(xhat, sizes, nd, &back);
    if (st == YG_OK && weight != NULL)
        st = yg_reshape(weight, affine, nd, &w);
    if (st == YG_OK && bias != NULL)
        st = yg_reshape(bias, affine, nd, &b);
    if (st == YG_OK && w != NULL)
        st = yg_mul(back, w, &scaled);
    if (st == YG_OK) {
        yg_tensor *y = scaled != NULL ? scaled : back;
        if (b != NULL)
            st = yg_add(y, b, 1, out);
        else
            *out = yg_retain(y);
    }
    yg_release(g);
    yg_release(mean);
    yg_release(var);
    yg_release(ve);
    yg_release(inv);
    yg_release(cen);
    yg_release(xhat);
    yg_release(back);
    yg_release(w);
    yg_release(b);
    yg_release(scaled);
    return st;
}
