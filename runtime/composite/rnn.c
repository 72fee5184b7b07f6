/*
 * composite/rnn.c - one step of an LSTM (lstm_cell) and of a GRU
 * (gru_cell), written with linear, chunk and pointwise ops so autograd
 * differentiates them through their parts.
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
#include "yagrad/ops.h"

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

    if (size % n != 0)
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
    yg_tensor *pi = NULL, *ph = NULL, *sum = NULL, *raw[4] = {NULL}, *act[4] = {NULL};
    yg_tensor *fc = NULL, *ig = NULL, *cy = NULL, *tc = NULL;
    yg_status st;

    *out_hy = NULL;
    *out_cy = NULL;
    st = yg_linear(input, w_ih, b_ih, &pi);
    if (st == YG_OK)
        st = yg_linear(hx, w_hh, b_hh, &ph);
    if (st == YG_OK)
        st = yg_add(pi, ph, 1, &sum);
    if (st == YG_OK)
        st = gates(sum, 4, raw);
    for (int k = 0; k < 4 && st == YG_OK; k++)
        st = k == 2 ? yg_tanh(raw[k], &act[k]) : yg_sigmoid(raw[k], &act[k]);
    if (st == YG_OK)
        st = yg_mul(act[1], cx, &fc);
    if (st == YG_OK)
        st = yg_mul(act[0], act[2], &ig);
    if (st == YG_OK)
        st = yg_add(fc, ig, 1, &cy);
    if (st == YG_OK)
        st = yg_tanh(cy, &tc);
    if (st == YG_OK)
        st = yg_mul(act[3], tc, out_hy);
    if (st == YG_OK) {
        *out_cy = cy;
        cy = NULL;
    }
    yg_release(pi);
    yg_release(ph);
    yg_release(sum);
    for (int k = 0; k < 4; k++) {
        yg_release(raw[k]);
        yg_release(act[k]);
    }
    yg_release(fc);
    yg_release(ig);
    yg_release(cy);
    yg_release(tc);
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
