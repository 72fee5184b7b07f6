/*
 * composite/attention.c - flash_attention_backward, the gradient of
 * flash_attention: flash_attention_backward_fused (cpu/attention.c, over
 * tiles, memory linear in L and S) when nothing records its parts, else
 * differentiable ops that recompute the probabilities from query and key
 * and materialise them ([..., L, S]), so that a gradient taken with
 * create_graph differentiates again (double backward).  That path reads
 * neither output nor logsumexp: both are functions of query, key and
 * value, which it differentiates through directly.
 */
#include "decls/attention.h"

#include "composite/composite.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_attention.h"
#include "yagrad/ops_blend.h"
#include "yagrad/ops_indexing.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_softmax.h"
#include "yagrad/ops_views.h"

#include <math.h>

/* The gradients as ops: p = softmax(scale q k^T, causal triu(1) hidden),
 * gv = p^T go, ds = scale softmax_backward(go v^T, p), gq = ds k,
 * gk = ds^T q; each only when its mask entry is set. */
static yg_status backward_parts(const yg_tensor *grad_output,
                                const yg_tensor *query,
                                const yg_tensor *key,
                                const yg_tensor *value,
                                bool is_causal,
                                const double *scale,
                                const bool *mask,
                                yg_tensor **out) {
    int64_t L = yg_tensor_size(query, -2), S = yg_tensor_size(key, -2),
            E = yg_tensor_size(query, -1);
    double s = scale != NULL ? *scale : 1 / sqrt((double)(E > 0 ? E : 1));
    yg_tensor *kt = NULL, *raw = NULL, *sc = NULL, *ones = NULL, *upper = NULL, *masked = NULL;
    yg_tensor *p = NULL, *pt = NULL, *vt = NULL, *dp = NULL, *dsm = NULL, *ds = NULL, *dst = NULL;
    yg_status st;

    st = yg_transpose(key, -2, -1, &kt);
    if (st == YG_OK)
        st = yg_matmul(query, kt, &raw);
    if (st == YG_OK)
        st = yg_mul_scalar(raw, s, &sc);
    if (st == YG_OK && is_causal) {
        const int64_t ls[2] = {L, S};
        st = yg_tensor_full(ls, 2, 1, YG_BOOL, &ones);
        if (st == YG_OK)
            st = yg_triu(ones, 1, &upper);
        if (st == YG_OK)
            st = yg_masked_fill(sc, upper, -INFINITY, &masked);
        if (st == YG_OK) {
            yg_release(sc);
            sc = masked;
            masked = NULL;
        }
    }
    if (st == YG_OK)
        st = yg_softmax(sc, -1, &p);
    if (st == YG_OK && mask[2]) {
        st = yg_transpose(p, -2, -1, &pt);
        if (st == YG_OK)
            st = yg_matmul(pt, grad_output, &out[2]);
    }
    if (st == YG_OK && (mask[0] || mask[1])) {
        st = yg_transpose(value, -2, -1, &vt);
        if (st == YG_OK)
            st = yg_matmul(grad_output, vt, &dp);
        if (st == YG_OK)
            st = yg_softmax_backward(dp, p, -1, &dsm);
        if (st == YG_OK)
            st = yg_mul_scalar(dsm, s, &ds);
        if (st == YG_OK && mask[0])
            st = yg_matmul(ds, key, &out[0]);
        if (st == YG_OK && mask[1]) {
            st = yg_transpose(ds, -2, -1, &dst);
            if (st == YG_OK)
                st = yg_matmul(dst, query, &out[1]);
        }
    }
    yg_release(kt);
    yg_release(raw);
    yg_release(sc);
    yg_release(ones);
    yg_release(upper);
    yg_release(masked);
    yg_release(p);
    yg_release(pt);
    yg_release(vt);
    yg_release(dp);
    yg_release(dsm);
    yg_release(ds);
    yg_release(dst);
    return st;
}

yg_status yg__composite_flash_attention_backward(const yg_tensor *grad_output,
                                                 const yg_tensor *query,
                                                 const yg_tensor *key,
                                                 const yg_tensor *value,
                                                 const yg_tensor *output,
                                                 const yg_tensor *logsumexp,
                                                 bool is_causal,
                                                 const double *scale,
                                                 const bool *grad_input_mask,
                                                 yg_tensor **out_grad_query,
                                                 yg_tensor **out_grad_key,
                                                 yg_tensor **out_grad_value) {
    const yg_tensor *inputs[6] = {grad_output, query, key, value, output, logsumexp};
    yg_tensor *r[3] = {NULL, NULL, NULL};
    yg_tensor **outs[3] = {out_grad_query, out_grad_key, out_grad_value};
    yg_status st;

    *out_grad_query = NULL;
    *out_grad_key = NULL;
    *out_grad_value = NULL;
    if (!yg__composite_needs_parts(inputs, 6))
        st = yg_flash_attention_backward_fused(grad_output,
                                               query,
                                               key,
                                               value,
                                               output,
                                               logsumexp,
                                               is_causal,
                                               scale,
                                               &r[0],
                                               &r[1],
                                               &r[2]);
    else
        st = backward_parts(grad_output, query, key, value, is_causal, scale, grad_input_mask, r);
    for (int i = 0; i < 3; i++) {
        if (st == YG_OK && grad_input_mask[i])
            *outs[i] = r[i];
        else
            yg_release(r[i]);
    }
    return st;
}
