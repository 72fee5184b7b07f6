/*
 * composite/rnn.c - one step of an LSTM (lstm_cell) and of a GRU
 * (gru_cell), written with linear, narrow and pointwise ops so autograd
 * differentiates them through their parts.
 *
 * The formulas and the gate order are PyTorch's:
 *   LSTM: [i f g o] = input w_ih^T + b_ih + hx w_hh^T + b_hh,
 *         cy = sigmoid(f) cx + sigmoid(i) tanh(g),  hy = sigmoid(o) tanh(cy)
 *   GRU:  [r z n] from each product separately,
 *         r = sigmoid(r_i + r_h), z = sigmoid(z_i + z_h),
 *         n = tanh(n_i + r n_h),  hy = (1 - z) n + z hx
 * Gates are split with narrow along the last dim, so batched ([N, I]) and
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

/* Gate k of n stacked along the last dim of t (a view). */
static yg_status gate(const yg_tensor *t, int64_t k, int64_t n, yg_tensor **out) {
    int64_t size = yg_tensor_size(t, -1);
    char buf[128];

    if (size % n != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "gate projections %s are not %" PRId64 " stacked gates",
                        yg_tensor_format_sizes(t, buf, sizeof buf),
                        n);
    return yg_narrow(t, -1, k * (size / n), size / n, out);
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
    yg_tensor *pi = NULL, *ph = NULL, *gates = NULL, *raw[4] = {NULL}, *act[4] = {NULL};
    yg_tensor *fc = NULL, *ig = NULL, *cy = NULL, *tc = NULL;
    yg_status st;

    *out_hy = NULL;
    *out_cy = NULL;
    st = yg_linear(input, w_ih, b_ih, &pi);
    if (st == YG_OK)
        st = yg_linear(hx, w_hh, b_hh, &ph);
    if (st == YG_OK)
        st = yg_add(pi, ph, 1, &gates);
    for (int k = 0; k < 4 && st == YG_OK; k++) {
        st = gate(gates, k, 4, &raw[k]);
        if (st == YG_OK)
            st = k == 2 ? yg_tanh(raw[k], &act[k]) : yg_sigmoid(raw[k], &act[k]);
    }
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
    yg_release(gates);
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
    for (int k = 0; k < 3 && st == YG_OK; k++) {
        st = gate(pi, k, 3, &gi[k]);
        if (st == YG_OK)
            st = gate(ph, k, 3, &gh[k]);
    }
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
