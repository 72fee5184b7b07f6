/*
 * composite/rnn.c - one step of an LSTM (lstm_cell) and of a GRU
 * (gru_cell), written with linear and other ops so autograd differentiates
 * them through their parts; lstm_cell's pointwise part is one op,
 * lstm_cell_gates (a fused kernel with its own derivative), whose
 * gradient lstm_cell_gates_backward is here: the fused kernel when
 * nothing records its parts, differentiable ops (double backward) else.
 *
 * The formulas and the gate order are PyTorch's:
 *   LSTM: [i f g o] = input w_ih^T + b_ih + hx w_hh^T + b_hh,
 *         cy = sigmoid(f) cx + sigmoid(i) tanh(g),  hy = sigmoid(o) tanh(cy)
 *   GRU:  [r z n] from each product separately,
 *         r = sigmoid(r_i + r_h), z = sigmoid(z_i + z_h),
 *         n = tanh(n_i + r n_h),  hy = (1 - z) n + z hx
 * Gates are split with chunk along the last dim, so batched ([N, I]) and
 * unbatched ([I]) inputs take the same path.
 *
 * As for every composite, messages of our own checks carry no op name (the
 * generated wrapper prefixes it); errors of the inner ops pass through with
 * their own names.
 */
#include "composite/composite.h"
#include "cpu/cpu.h"
#include "decls/layers.h"
#include "yagrad/ops_activations.h"
#include "yagrad/ops_activations_backward.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_join_split.h"
#include "yagrad/ops_layers.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_trigonometric.h"

#include <inttypes.h>
#include <stdio.h>

/* The n gates stacked along the last dim of t, as views (out[0..n-1],
 * new refs).  chunk, not one narrow per gate: chunk's backward writes
 * every gate's gradient into one buffer (cat), where each narrow's makes
 * a zero-filled tensor of t's size for the engine to sum. */
static yg_status gates(const yg_tensor *t, int64_t n, yg_tensor **out) {
    int64_t size = yg_tensor_size(t, -1), len = 0;
    yg_tensor **parts = NULL;
    char buf[128];

    /* A last dim of 0 passes the modulo but chunks into one piece, not
     * n (fuzz_ops found the read past the list). */
    if (size % n != 0 || size == 0)
        return yg__fail(YG_ERR_SHAPE,
                        "gate projections %s are not %" PRId64 " stacked gates",
                        yg_tensor_format_sizes(t, buf, sizeof buf),
                        n);
    YG_RETURN_IF_ERROR(yg_chunk(t, n, -1, &parts, &len));
    for (int64_t k = 0; k < n; k++)
        out[k] = yg_retain(parts[k]);
    yg_release_list(parts, len);
    return YG_OK;
}

yg_status yg__composite_lstm_cell(const yg_tensor *input,
                                  const yg_tensor *hx,
                                  const yg_tensor *cx,
                                  const yg_tensor *w_ih,
                                  const yg_tensor *w_hh,
                                  const yg_tensor *b_ih,
                                  const yg_tensor *b_hh,
                                  yg_tensor **out_hy,
                                  yg_tensor **out_cy) {
    yg_tensor *pi = NULL, *ph = NULL;
    yg_status st;

    *out_hy = NULL;
    *out_cy = NULL;
    st = yg_linear(input, w_ih, b_ih, &pi);
    if (st == YG_OK)
        st = yg_linear(hx, w_hh, b_hh, &ph);
    if (st == YG_OK)
        st = yg_lstm_cell_gates(pi, ph, cx, out_hy, out_cy);
    yg_release(pi);
    yg_release(ph);
    return st;
}

/* The gradients of lstm_cell_gates with differentiable ops (so they
 * differentiate again), from the activations recomputed from the gates. */
static yg_status lstm_gates_backward_parts(const yg_tensor *grad_hy,
                                           const yg_tensor *grad_cy,
                                           const yg_tensor *input_gates,
                                           const yg_tensor *hidden_gates,
                                           const yg_tensor *cx,
                                           const bool *mask,
                                           yg_tensor **out) {
    yg_tensor *sum = NULL, *raw[4] = {NULL}, *act[4] = {NULL}, *fc = NULL, *ig = NULL;
    yg_tensor *c = NULL, *tc = NULL, *ho = NULL, *dtc = NULL, *dc = NULL, *t[4] = {NULL};
    yg_tensor *d[4] = {NULL}, *stacked = NULL;
    yg_status st;

    st = yg_add(input_gates, hidden_gates, 1, &sum);
    if (st == YG_OK)
        st = gates(sum, 4, raw);
    for (int k = 0; k < 4 && st == YG_OK; k++)
        st = k == 2 ? yg_tanh(raw[k], &act[k]) : yg_sigmoid(raw[k], &act[k]);
    /* c = f cx + i g, dc = grad_cy + tanh'(c) grad_hy o */
    if (st == YG_OK)
        st = yg_mul(act[1], cx, &fc);
    if (st == YG_OK)
        st = yg_mul(act[0], act[2], &ig);
    if (st == YG_OK)
        st = yg_add(fc, ig, 1, &c);
    if (st == YG_OK)
        st = yg_tanh(c, &tc);
    if (st == YG_OK)
        st = yg_mul(grad_hy, act[3], &ho);
    if (st == YG_OK)
        st = yg_tanh_backward(ho, tc, &dtc);
    if (st == YG_OK)
        st = yg_add(grad_cy, dtc, 1, &dc);
    if (st == YG_OK && (mask[0] || mask[1])) {
        /* d_i = sigmoid'(i) dc g, d_f = sigmoid'(f) dc cx,
         * d_g = tanh'(g) dc i, d_o = sigmoid'(o) grad_hy tanh(c) */
        st = yg_mul(dc, act[2], &t[0]);
        if (st == YG_OK)
            st = yg_mul(dc, cx, &t[1]);
        if (st == YG_OK)
            st = yg_mul(dc, act[0], &t[2]);
        if (st == YG_OK)
            st = yg_mul(grad_hy, tc, &t[3]);
        for (int k = 0; k < 4 && st == YG_OK; k++)
            st = k == 2 ? yg_tanh_backward(t[k], act[k], &d[k])
                        : yg_sigmoid_backward(t[k], act[k], &d[k]);
        if (st == YG_OK)
            st = yg_cat((const yg_tensor *const *)d, 4, -1, &stacked);
        if (st == YG_OK) {
            out[0] = mask[0] ? yg_retain(stacked) : NULL;
            out[1] = mask[1] ? yg_retain(stacked) : NULL;
        }
    }
    if (st == YG_OK && mask[2])
        st = yg_mul(dc, act[1], &out[2]);
    if (st != YG_OK) {
        for (int k = 0; k < 3; k++) {
            yg_release(out[k]);
            out[k] = NULL;
        }
    }
    yg_release(sum);
    for (int k = 0; k < 4; k++) {
        yg_release(raw[k]);
        yg_release(act[k]);
        yg_release(t[k]);
        yg_release(d[k]);
    }
    yg_release(fc);
    yg_release(ig);
    yg_release(c);
    yg_release(tc);
    yg_release(ho);
    yg_release(dtc);
    yg_release(dc);
    yg_release(stacked);
    return st;
}

yg_status yg__composite_lstm_cell_gates_backward(const yg_tensor *grad_hy,
                                                 const yg_tensor *grad_cy,
                                                 const yg_tensor *input_gates,
                                                 const yg_tensor *hidden_gates,
                                                 const yg_tensor *cx,
                                                 const bool *grad_input_mask,
                                                 yg_tensor **out_grad_input_gates,
                                                 yg_tensor **out_grad_hidden_gates,
                                                 yg_tensor **out_grad_cx) {
    const yg_tensor *inputs[5] = {grad_hy, grad_cy, input_gates, hidden_gates, cx};
    yg_tensor *out[3] = {NULL, NULL, NULL};
    yg_status st;

    *out_grad_input_gates = NULL;
    *out_grad_hidden_gates = NULL;
    *out_grad_cx = NULL;
    if (!yg__composite_needs_parts(inputs, 5)) {
        yg_tensor *gg = NULL, *gcx = NULL;
        st = yg_lstm_cell_gates_backward_fused(
            grad_hy, grad_cy, input_gates, hidden_gates, cx, &gg, &gcx);
        if (st != YG_OK)
            return st;
        if (grad_input_mask[0])
            *out_grad_input_gates = yg_retain(gg);
        if (grad_input_mask[1])
            *out_grad_hidden_gates = yg_retain(gg);
        if (grad_input_mask[2])
            *out_grad_cx = yg_retain(gcx);
        yg_release(gg);
        yg_release(gcx);
        return YG_OK;
    }
    st = lstm_gates_backward_parts(
        grad_hy, grad_cy, input_gates, hidden_gates, cx, grad_input_mask, out);
    if (st == YG_OK) {
        *out_grad_input_gates = out[0];
        *out_grad_hidden_gates = out[1];
        *out_grad_cx = out[2];
    }
    return st;
}

yg_status yg__composite_gru_cell(const yg_tensor *input,
                                 const yg_tensor *hx,
                                 const yg_tensor *w_ih,
                                 const yg_tensor *w_hh,
                                 const yg_tensor *b_ih,
                                 const yg_tensor *b_hh,
                                 yg_tensor **out) {
    yg_tensor *pi = NULL, *ph = NULL, *gi[3] = {NULL}, *gh[3] = {NULL};
    yg_tensor *rs = NULL, *zs = NULL, *r = NULL, *z = NULL, *rn = NULL, *ns = NULL, *n = NULL;
    yg_tensor *diff = NULL, *zd = NULL;
    yg_status st;

    *out = NULL;
    st = yg_linear(input, w_ih, b_ih, &pi);
    if (st == YG_OK)
        st = yg_linear(hx, w_hh, b_hh, &ph);
    if (st == YG_OK)
        st = gates(pi, 3, gi);
    if (st == YG_OK)
        st = gates(ph, 3, gh);
    if (st == YG_OK)
        st = yg_add(gi[0], gh[0], 1, &rs);
    if (st == YG_OK)
        st = yg_sigmoid(rs, &r);
    if (st == YG_OK)
        st = yg_add(gi[1], gh[1], 1, &zs);
    if (st == YG_OK)
        st = yg_sigmoid(zs, &z);
    if (st == YG_OK)
        st = yg_mul(r, gh[2], &rn);
    if (st == YG_OK)
        st = yg_add(gi[2], rn, 1, &ns);
    if (st == YG_OK)
        st = yg_tanh(ns, &n);
    /* (1 - z) n + z hx = n + z (hx - n) */
    if (st == YG_OK)
        st = yg_sub(hx, n, 1, &diff);
    if (st == YG_OK)
        st = yg_mul(z, diff, &zd);
    if (st == YG_OK)
        st = yg_add(n, zd, 1, out);
    yg_release(pi);
    yg_release(ph);
    for (int k = 0; k < 3; k++) {
        yg_release(gi[k]);
        yg_release(gh[k]);
    }
    yg_release(rs);
    yg_release(zs);
    yg_release(r);
    yg_release(z);
    yg_release(rn);
    yg_release(ns);
    yg_release(n);
    yg_release(diff);
    yg_release(zd);
    return st;
}
