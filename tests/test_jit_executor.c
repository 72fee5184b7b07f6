/*
 * test_jit_executor.c - yg_executor: traced models run through the
 * executor (plans per argument spec, composites split, differentiable
 * regions as prim::DifferentiableGraph nodes whose backward runs their
 * generated df graph) compute the outputs and gradients eager autograd
 * computes; the plan cache hits and misses on the right specs; in-place
 * ops stay outside regions; bad inputs are refused naming the input.
 */
#include "testutil.h"
#include "yagrad/jit.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_inplace_arithmetic.h"
#include "yagrad/ops_inplace_fill.h"
#include "yagrad/ops_unary_math.h"
#include "yagrad/ops_trigonometric.h"
#include "yagrad/ops_activations.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_slicing.h"
#include "yagrad/ops_join_split.h"
#include "yagrad/ops_norms.h"
#include "yagrad/ops_layers.h"
#include "yagrad/ops_convolution.h"
#include "yagrad/ops_pooling.h"
#include "yagrad/ops_dtype_conversion.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXT 12

/* A model: fn(ctx = weights, inputs) -> outputs. */
typedef struct model {
    const char *name;
    yg_trace_fn fn;
    yg_tensor *w[MAXT]; /* weights (require grad) */
    int n_w;
    yg_tensor *x[MAXT]; /* inputs */
    int n_x;
    int n_out;
} model;

static yg_tensor *rnd(int64_t a, int64_t b, uint64_t seed, bool rg) {
    int64_t s[2] = {a, b};
    yg_tensor *t = yg_test_rand(YG_FLOAT64, s, b > 0 ? 2 : 1, -0.5, 0.5, seed);
    if (rg)
        YG_CHECK(yg_tensor_set_requires_grad(t, true));
    return t;
}

static yg_tensor *rnd4(const int64_t *s, uint64_t seed, bool rg) {
    yg_tensor *t = yg_test_rand(YG_FLOAT64, s, 4, -0.5, 0.5, seed);
    if (rg)
        YG_CHECK(yg_tensor_set_requires_grad(t, true));
    return t;
}

/* ---- models ---- */

static yg_status
mlp_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    model *m = ctx;
    yg_tensor *h = NULL, *a = NULL;
    (void)n_in;
    (void)n_out;
    yg_status st = yg_linear(in[0], m->w[0], m->w[1], &h);
    if (st == YG_OK)
        st = yg_relu(h, &a);
    if (st == YG_OK)
        st = yg_linear(a, m->w[2], m->w[3], &out[0]);
    yg_release(h);
    yg_release(a);
    return st;
}

static yg_status
lstm_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    model *m = ctx;
    (void)n_in;
    (void)n_out;
    return yg_lstm_cell(in[0], in[1], in[2], m->w[0], m->w[1], m->w[2], m->w[3], &out[0], &out[1]);
}

static yg_status
gru_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    model *m = ctx;
    (void)n_in;
    (void)n_out;
    return yg_gru_cell(in[0], in[1], m->w[0], m->w[1], m->w[2], m->w[3], &out[0]);
}

/* The LSTM cell written with ops, as a user (or PyTorch's fuser tests)
 * writes it: the gates' products, chunk, sigmoid / tanh and the cell
 * update.  in = input, hx, cx; w = w_ih, w_hh, b_ih, b_hh. */
static yg_status
lstm_ops_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    model *m = ctx;
    yg_tensor *t[9] = {0}, **ch = NULL;
    int64_t n_ch = 0;
    (void)n_in;
    (void)n_out;
    yg_status st = yg_linear(in[0], m->w[0], m->w[2], &t[0]);
    if (st == YG_OK)
        st = yg_linear(in[1], m->w[1], m->w[3], &t[1]);
    if (st == YG_OK)
        st = yg_add(t[0], t[1], 1, &t[2]);
    if (st == YG_OK)
        st = yg_chunk(t[2], 4, 1, &ch, &n_ch);
    if (st == YG_OK)
        st = yg_sigmoid(ch[0], &t[3]); /* input gate */
    if (st == YG_OK)
        st = yg_sigmoid(ch[1], &t[4]); /* forget gate */
    if (st == YG_OK)
        st = yg_tanh(ch[2], &t[5]); /* cell candidate */
    if (st == YG_OK)
        st = yg_sigmoid(ch[3], &t[6]); /* output gate */
    if (st == YG_OK)
        st = yg_mul(t[4], in[2], &t[7]);
    if (st == YG_OK)
        st = yg_mul(t[3], t[5], &t[8]);
    if (st == YG_OK)
        st = yg_add(t[7], t[8], 1, &out[1]);
    yg_release(t[7]);
    t[7] = NULL;
    if (st == YG_OK)
        st = yg_tanh(out[1], &t[7]);
    if (st == YG_OK)
        st = yg_mul(t[6], t[7], &out[0]);
    yg_release_list(ch, n_ch);
    for (int i = 0; i < 9; i++)
        yg_release(t[i]);
    return st;
}

/* A gated MLP block: silu(x w0^T) * gelu(x w1^T) w2^T + x, the pointwise
 * ops between the products fused forward and backward. */
static yg_status
act_mlp_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    model *m = ctx;
    yg_tensor *t[6] = {0};
    (void)n_in;
    (void)n_out;
    yg_status st = yg_linear(in[0], m->w[0], NULL, &t[0]);
    if (st == YG_OK)
        st = yg_linear(in[0], m->w[1], NULL, &t[1]);
    if (st == YG_OK)
        st = yg_silu(t[0], &t[2]);
    if (st == YG_OK)
        st = yg_gelu(t[1], &t[3]);
    if (st == YG_OK)
        st = yg_mul(t[2], t[3], &t[4]);
    if (st == YG_OK)
        st = yg_linear(t[4], m->w[2], NULL, &t[5]);
    if (st == YG_OK)
        st = yg_add(t[5], in[0], 1, &out[0]);
    for (int i = 0; i < 6; i++)
        yg_release(t[i]);
    return st;
}

/* x [B, T, 3 H D] as GPT-2 splits its fused qkv: viewed [B, T, 3, H, D],
 * permuted to [3, B, H, T, D], q, k and v selected (each [B, H, T, D]
 * with H and T swapped in memory), causal attention, heads merged back,
 * tanh.  The attention composite's parts view their inputs, which works
 * only for some layouts: it must stay whole in a plan (decompose.c). */
static yg_status
heads_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    model *m = ctx;
    const int64_t s5[5] = {2, 3, 3, 2, 4}, perm[5] = {2, 0, 3, 1, 4}, s3[3] = {2, 3, 8};
    yg_tensor *t[9] = {0};
    (void)n_in;
    (void)n_out;
    yg_status st = yg_mul(in[0], m->w[0], &t[0]);
    if (st == YG_OK)
        st = yg_view(t[0], s5, 5, &t[1]);
    if (st == YG_OK)
        st = yg_permute(t[1], perm, 5, &t[2]);
    for (int i = 0; i < 3 && st == YG_OK; i++)
        st = yg_select(t[2], 0, i, &t[3 + i]);
    if (st == YG_OK)
        st = yg_scaled_dot_product_attention(t[3], t[4], t[5], NULL, true, NULL, &t[6]);
    if (st == YG_OK)
        st = yg_transpose(t[6], 1, 2, &t[7]);
    if (st == YG_OK)
        st = yg_reshape(t[7], s3, 3, &t[8]);
    if (st == YG_OK)
        st = yg_tanh(t[8], &out[0]);
    for (int i = 0; i < 9; i++)
        yg_release(t[i]);
    return st;
}

/* x [T, D]: layer_norm, self-attention (one head), residual, MLP. */
static yg_status
block_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    model *m = ctx;
    yg_tensor *t[10] = {0};
    int64_t d = yg_tensor_sizes(in[0])[1];
    (void)n_in;
    (void)n_out;
    yg_status st = yg_layer_norm(in[0], &d, 1, m->w[0], m->w[1], 1e-5, &t[0]);
    if (st == YG_OK)
        st = yg_linear(t[0], m->w[2], NULL, &t[1]); /* q */
    if (st == YG_OK)
        st = yg_linear(t[0], m->w[3], NULL, &t[2]); /* k */
    if (st == YG_OK)
        st = yg_scaled_dot_product_attention(t[1], t[2], t[0], NULL, false, NULL, &t[3]);
    if (st == YG_OK)
        st = yg_add(in[0], t[3], 1, &t[4]);
    if (st == YG_OK)
        st = yg_linear(t[4], m->w[4], m->w[5], &t[5]);
    if (st == YG_OK)
        st = yg_gelu(t[5], &t[6]);
    if (st == YG_OK)
        st = yg_linear(t[6], m->w[6], NULL, &t[7]);
    if (st == YG_OK)
        st = yg_add(t[4], t[7], 1, &out[0]);
    for (int i = 0; i < 10; i++)
        yg_release(t[i]);
    return st;
}

static yg_status
cnn_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    model *m = ctx;
    yg_tensor *t[4] = {0};
    int64_t one[2] = {1, 1}, zero[2] = {0, 0}, k[2] = {2, 2};
    (void)n_in;
    (void)n_out;
    yg_status st = yg_conv2d(in[0], m->w[0], m->w[1], one, 2, one, 2, one, 2, 1, &t[0]);
    if (st == YG_OK)
        st = yg_relu(t[0], &t[1]);
    if (st == YG_OK)
        st = yg_max_pool2d(t[1], k, 2, k, 2, zero, 2, one, 2, false, &t[2]);
    if (st == YG_OK)
        st = yg_flatten(t[2], 1, -1, &t[3]);
    if (st == YG_OK)
        st = yg_linear(t[3], m->w[2], m->w[3], &out[0]);
    for (int i = 0; i < 4; i++)
        yg_release(t[i]);
    return st;
}

/* In-place inside the traced function: relu_ on an intermediate. */
static yg_status
inplace_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    model *m = ctx;
    yg_tensor *h = NULL, *r = NULL;
    (void)n_in;
    (void)n_out;
    yg_status st = yg_linear(in[0], m->w[0], m->w[1], &h);
    if (st == YG_OK)
        st = yg_relu_(h, &r);
    if (st == YG_OK)
        st = yg_tanh(r, &out[0]);
    yg_release(h);
    yg_release(r);
    return st;
}

/* Views inside the region: narrow, transpose, select, unsqueeze. */
static yg_status
views_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    model *m = ctx;
    yg_tensor *t[6] = {0};
    (void)n_in;
    (void)n_out;
    yg_status st = yg_linear(in[0], m->w[0], m->w[1], &t[0]); /* [3, 6] */
    if (st == YG_OK)
        st = yg_narrow(t[0], 1, 1, 4, &t[1]); /* [3, 4] */
    if (st == YG_OK)
        st = yg_transpose(t[1], 0, 1, &t[2]); /* [4, 3] */
    if (st == YG_OK)
        st = yg_select(t[2], 1, 2, &t[3]); /* [4] */
    if (st == YG_OK)
        st = yg_unsqueeze(t[3], 0, &t[4]); /* [1, 4] */
    if (st == YG_OK)
        st = yg_mul(t[4], t[1], &t[5]); /* [1, 4] broadcast against [3, 4] */
    if (st == YG_OK)
        st = yg_tanh(t[5], &out[0]);
    for (int i = 0; i < 6; i++)
        yg_release(t[i]);
    return st;
}

/* A view written in place: the slice and everything aliasing it stay out. */
static yg_status
view_write_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    model *m = ctx;
    yg_tensor *t[4] = {0};
    (void)n_in;
    (void)n_out;
    yg_status st = yg_linear(in[0], m->w[0], m->w[1], &t[0]);
    if (st == YG_OK)
        st = yg_neg(t[0], &t[1]);
    if (st == YG_OK)
        st = yg_narrow(t[1], 1, 0, 2, &t[2]);
    if (st == YG_OK)
        st = yg_mul_scalar_(t[2], 3.0, &t[3]);
    if (st == YG_OK)
        st = yg_sin(t[1], &out[0]);
    for (int i = 0; i < 4; i++)
        yg_release(t[i]);
    return st;
}

static void model_free(model *m) {
    for (int i = 0; i < m->n_w; i++)
        yg_release(m->w[i]);
    for (int i = 0; i < m->n_x; i++)
        yg_release(m->x[i]);
}

static model make_mlp(bool x_rg) {
    model m = {.name = "mlp", .fn = mlp_fn, .n_w = 4, .n_x = 1, .n_out = 1};
    m.w[0] = rnd(16, 12, 1, true);
    m.w[1] = rnd(16, 0, 2, true);
    m.w[2] = rnd(5, 16, 3, true);
    m.w[3] = rnd(5, 0, 4, true);
    m.x[0] = rnd(8, 12, 5, x_rg);
    return m;
}

static model make_lstm(bool x_rg) {
    model m = {.name = "lstm_cell", .fn = lstm_fn, .n_w = 4, .n_x = 3, .n_out = 2};
    m.w[0] = rnd(24, 5, 11, true);
    m.w[1] = rnd(24, 6, 12, true);
    m.w[2] = rnd(24, 0, 13, true);
    m.w[3] = rnd(24, 0, 14, true);
    m.x[0] = rnd(3, 5, 15, x_rg);
    m.x[1] = rnd(3, 6, 16, x_rg);
    m.x[2] = rnd(3, 6, 17, x_rg);
    return m;
}

static model make_lstm_ops(bool x_rg) {
    model m = make_lstm(x_rg);
    m.name = "lstm cell of ops";
    m.fn = lstm_ops_fn;
    return m;
}

static model make_act_mlp(bool x_rg) {
    model m = {.name = "silu-gelu MLP block", .fn = act_mlp_fn, .n_w = 3, .n_x = 1, .n_out = 1};
    m.w[0] = rnd(16, 8, 61, true);
    m.w[1] = rnd(16, 8, 62, true);
    m.w[2] = rnd(8, 16, 63, true);
    m.x[0] = rnd(5, 8, 64, x_rg);
    return m;
}

static model make_gru(bool x_rg) {
    model m = {.name = "gru_cell", .fn = gru_fn, .n_w = 4, .n_x = 2, .n_out = 1};
    m.w[0] = rnd(18, 5, 21, true);
    m.w[1] = rnd(18, 6, 22, true);
    m.w[2] = rnd(18, 0, 23, true);
    m.w[3] = rnd(18, 0, 24, true);
    m.x[0] = rnd(3, 5, 25, x_rg);
    m.x[1] = rnd(3, 6, 26, x_rg);
    return m;
}

static model make_block(bool x_rg) {
    model m = {.name = "transformer block", .fn = block_fn, .n_w = 7, .n_x = 1, .n_out = 1};
    m.w[0] = rnd(8, 0, 31, true);
    m.w[1] = rnd(8, 0, 32, true);
    m.w[2] = rnd(8, 8, 33, true);
    m.w[3] = rnd(8, 8, 34, true);
    m.w[4] = rnd(16, 8, 35, true);
    m.w[5] = rnd(16, 0, 36, true);
    m.w[6] = rnd(8, 16, 37, true);
    m.x[0] = rnd(5, 8, 38, x_rg);
    return m;
}

static model make_heads(bool x_rg) {
    model m = {.name = "attention over split heads", .fn = heads_fn, .n_w = 1, .n_x = 1, .n_out = 1};
    const int64_t xs[3] = {2, 3, 24};
    m.w[0] = rnd(24, 0, 39, true);
    m.x[0] = yg_test_rand(YG_FLOAT64, xs, 3, -0.5, 0.5, 40);
    if (x_rg)
        YG_CHECK(yg_tensor_set_requires_grad(m.x[0], true));
    return m;
}

static model make_cnn(bool x_rg) {
    model m = {.name = "cnn", .fn = cnn_fn, .n_w = 4, .n_x = 1, .n_out = 1};
    int64_t ws[4] = {4, 2, 3, 3}, xs[4] = {2, 2, 6, 6};
    m.w[0] = rnd4(ws, 41, true);
    m.w[1] = rnd(4, 0, 42, true);
    m.w[2] = rnd(3, 36, 43, true);
    m.w[3] = rnd(3, 0, 44, true);
    m.x[0] = rnd4(xs, 45, x_rg);
    return m;
}

/* ---- comparing ---- */

static void expect_same(const char *what, const yg_tensor *a, const yg_tensor *b) {
    if (a == NULL || b == NULL) {
        if (a != b)
            fail_msg("%s: one gradient is missing", what);
        return;
    }
    assert_int_equal(yg_tensor_numel(a), yg_tensor_numel(b));
    double *x = yg_test_values(a), *y = yg_test_values(b);
    for (int64_t i = 0; i < yg_tensor_numel(a); i++)
        if (fabs(x[i] - y[i]) > 1e-12 + 1e-9 * fabs(x[i]))
            fail_msg("%s [%lld]: eager %.17g, executor %.17g", what, (long long)i, x[i], y[i]);
    free(x);
    free(y);
}

/* Outputs and gradients (w.r.t. weights and inputs that require grad) of
 * m, eagerly and through an executor of its trace; returns the executor
 * (caller releases) when keep. */
static yg_executor *check_model(model *m, bool keep) {
    yg_trace_result *tr = NULL;
    yg_executor *e = NULL;
    yg_tensor *eo[4] = {0}, *jo[4] = {0}, *v[4] = {0};
    yg_tensor *eg[2 * MAXT] = {0}, *jg[2 * MAXT] = {0};
    const yg_tensor *wrt[2 * MAXT];
    yg_tensor *in[2 * MAXT];
    int n_wrt = 0;

    YG_CHECK(yg_trace(m->fn, m, m->x, m->n_x, m->n_out, NULL, &tr));
    assert_int_equal(tr->n_params, m->n_w);
    YG_CHECK(yg_executor_create(tr->graph, NULL, &e));
    for (int i = 0; i < m->n_x; i++)
        in[i] = m->x[i];
    for (int i = 0; i < m->n_w; i++)
        in[m->n_x + i] = tr->params[i];
    for (int i = 0; i < m->n_x + m->n_w; i++)
        if (yg_tensor_requires_grad(in[i]))
            wrt[n_wrt++] = in[i];
    YG_CHECK(m->fn(m, m->x, m->n_x, eo, m->n_out));
    /* Twice: a plan is built, then reused. */
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < m->n_out; i++)
            yg_release(jo[i]), jo[i] = NULL;
        YG_CHECK(yg_executor_run(e, in, m->n_x + m->n_w, jo, m->n_out));
    }
    yg_executor_stats s = yg_executor_get_stats(e);
    assert_int_equal(s.misses, 1);
    assert_int_equal(s.hits, 1);
    for (int i = 0; i < m->n_out; i++) {
        char what[96];
        snprintf(what, sizeof what, "%s output %d", m->name, i);
        expect_same(what, eo[i], jo[i]);
        v[i] = yg_test_rand(
            YG_FLOAT64, yg_tensor_sizes(eo[i]), yg_tensor_ndim(eo[i]), -1, 1, 900 + (uint64_t)i);
    }
    /* First order with create_graph, then the gradient of the sum of
     * squares of the first gradient: second order, where eager has it. */
    YG_CHECK(yg_grad((const yg_tensor *const *)eo,
                     m->n_out,
                     (const yg_tensor *const *)v,
                     wrt,
                     n_wrt,
                     false,
                     true,
                     true,
                     eg));
    YG_CHECK(yg_grad((const yg_tensor *const *)jo,
                     m->n_out,
                     (const yg_tensor *const *)v,
                     wrt,
                     n_wrt,
                     false,
                     true,
                     true,
                     jg));
    for (int i = 0; i < n_wrt; i++) {
        char what[96];
        snprintf(what, sizeof what, "%s gradient %d", m->name, i);
        expect_same(what, eg[i], jg[i]);
    }
    yg_tensor *gg[2][2 * MAXT] = {{0}};
    yg_status st2[2];
    for (int k = 0; k < 2; k++) {
        yg_tensor **g1 = k == 0 ? eg : jg, *sq = NULL, *z = NULL;
        YG_CHECK(yg_mul(g1[0], g1[0], &sq));
        YG_CHECK(yg_sum(sq, &z));
        const yg_tensor *zs[1] = {z};
        st2[k] = yg_grad(zs, 1, NULL, wrt, n_wrt, false, false, true, gg[k]);
        yg_release(sq);
        yg_release(z);
    }
    if (st2[0] == YG_OK) {
        YG_CHECK(st2[1]);
        for (int i = 0; i < n_wrt; i++) {
            char what[96];
            snprintf(what, sizeof what, "%s second-order gradient %d", m->name, i);
            expect_same(what, gg[0][i], gg[1][i]);
        }
    } else {
        printf("%s: eager has no second order here: %s\n", m->name, yg_last_error());
    }
    for (int i = 0; i < n_wrt; i++) {
        yg_release(eg[i]);
        yg_release(jg[i]);
        yg_release(gg[0][i]);
        yg_release(gg[1][i]);
    }
    /* The plan differentiated something as one region at least. */
    char *text = NULL;
    YG_CHECK(yg_executor_last_graph(e, &text));
    if (strstr(text, "prim::DifferentiableGraph") == NULL)
        fail_msg("%s: no DifferentiableGraph in the plan:\n%s", m->name, text);
    if (getenv("YG_TEST_PRINT_PLANS") != NULL)
        printf("%s plan:\n%s\n", m->name, text);
    yg_string_release(text);
    for (int i = 0; i < m->n_out; i++) {
        yg_release(eo[i]);
        yg_release(jo[i]);
        yg_release(v[i]);
    }
    yg_trace_result_release(tr);
    if (!keep) {
        yg_executor_release(e);
        return NULL;
    }
    return e;
}

static void run_model(model (*make)(bool)) {
    for (int x_rg = 0; x_rg < 2; x_rg++) {
        model m = make(x_rg);
        check_model(&m, false);
        model_free(&m);
    }
}

static void test_mlp_matches_eager(void **state) {
    (void)state;
    run_model(make_mlp);
}

static void test_lstm_cell_matches_eager(void **state) {
    (void)state;
    run_model(make_lstm);
    run_model(make_lstm_ops);
}

static void check_cell_fuses(model (*make)(bool), int n_cats, int df_groups);

/* The block's silu, gelu and product are one group forward; backward,
 * silu_backward, gelu_backward and the products' gradients are one, and
 * the sum of x's three gradients (after the matmuls) another. */
static void test_act_mlp_block_fuses_and_matches_eager(void **state) {
    (void)state;
    run_model(make_act_mlp);
    check_cell_fuses(make_act_mlp, 0, 2);
}

static void test_gru_cell_matches_eager(void **state) {
    (void)state;
    run_model(make_gru);
}

static void test_transformer_block_matches_eager(void **state) {
    (void)state;
    run_model(make_block);
}

static void test_attention_over_split_heads_matches_eager(void **state) {
    (void)state;
    run_model(make_heads);
}

static void test_cnn_matches_eager(void **state) {
    (void)state;
    run_model(make_cnn);
}

/* A cell's pointwise ops become one fusion group in the region's forward
 * graph and df_groups in its backward graph (df is printed before f), and
 * the backward's cats of the gate gradients (n_cats of them) are exits
 * of those groups. */
static void check_cell_fuses(model (*make)(bool), int n_cats, int df_groups) {
    model m = make(true);
    yg_executor *e = check_model(&m, true);
    char *text = NULL;
    YG_CHECK(yg_executor_last_graph(e, &text));
    const char *f_at = strstr(text, ", f=graph(");
    assert_non_null(f_at);
    int in_df = 0, in_f = 0, cats = 0;
    for (const char *p = strstr(text, "prim::FusionGroup"); p != NULL;
         p = strstr(p + 1, "prim::FusionGroup"))
        *(p < f_at ? &in_df : &in_f) += 1;
    assert_int_equal(in_df, df_groups);
    assert_int_equal(in_f, 1);
    /* The cats are inside the group (indented past df's own nodes), not
     * copies after it. */
    for (const char *p = strstr(text, "= cat["); p != NULL; p = strstr(p + 1, "= cat["))
        cats++;
    assert_int_equal(cats, n_cats);
    for (const char *p = strstr(text, "\n      %"); p != NULL; p = strstr(p + 1, "\n      %")) {
        const char *eol = strchr(p + 1, '\n');
        const char *cat = strstr(p, "= cat[");
        assert_true(cat == NULL || (eol != NULL && cat > eol));
    }
    yg_fuser_stats s = yg_fuser_get_stats();
    assert_int_equal(s.fallbacks, 0);
    yg_string_release(text);
    yg_executor_release(e);
    model_free(&m);
}

static void test_gru_cell_fuses_forward_and_backward(void **state) {
    (void)state;
    check_cell_fuses(make_gru, 2, 1);
}

/* The LSTM cell of ops: chunk's pieces read in place forward, one cat of
 * the four gate gradients as the backward group's exit. */
static void test_lstm_cell_of_ops_fuses_forward_and_backward(void **state) {
    (void)state;
    check_cell_fuses(make_lstm_ops, 1, 1);
}

static void test_inplace_ops_stay_outside_regions(void **state) {
    (void)state;
    model m = {.name = "in-place", .fn = inplace_fn, .n_w = 2, .n_x = 1, .n_out = 1};
    m.w[0] = rnd(6, 4, 51, true);
    m.w[1] = rnd(6, 0, 52, true);
    m.x[0] = rnd(3, 4, 53, false);
    yg_executor *e = check_model(&m, true);
    char *text = NULL;
    YG_CHECK(yg_executor_last_graph(e, &text));
    /* relu_ stays in the outer graph, not inside a region. */
    const char *r = strstr(text, "relu_(");
    assert_non_null(r);
    const char *region = strstr(text, "prim::DifferentiableGraph");
    assert_non_null(region);
    assert_true(strstr(text, "relu_(") == r);
    yg_string_release(text);
    yg_executor_release(e);
    model_free(&m);
}

static void test_views_inside_regions_match_eager(void **state) {
    (void)state;
    for (int x_rg = 0; x_rg < 2; x_rg++) {
        model m = {.name = "views", .fn = views_fn, .n_w = 2, .n_x = 1, .n_out = 1};
        m.w[0] = rnd(6, 4, 91, true);
        m.w[1] = rnd(6, 0, 92, true);
        m.x[0] = rnd(3, 4, 93, x_rg);
        yg_executor *e = check_model(&m, true);
        char *text = NULL;
        YG_CHECK(yg_executor_last_graph(e, &text));
        /* One region holds the views: it is the outer graph's only node. */
        int outer_nodes = 0;
        for (const char *p = strstr(text, "\n  %"); p != NULL; p = strstr(p + 1, "\n  %"))
            outer_nodes++;
        assert_int_equal(outer_nodes, 1);
        yg_string_release(text);
        yg_executor_release(e);
        model_free(&m);
    }
}

static void test_views_written_in_place_stay_outside(void **state) {
    (void)state;
    model m = {.name = "view written", .fn = view_write_fn, .n_w = 2, .n_x = 1, .n_out = 1};
    m.w[0] = rnd(4, 3, 94, true);
    m.w[1] = rnd(4, 0, 95, true);
    m.x[0] = rnd(2, 3, 96, false);
    yg_executor *e = check_model(&m, true);
    char *text = NULL;
    YG_CHECK(yg_executor_last_graph(e, &text));
    /* neg's result is written through the narrow view (a slice once the
     * composite narrow is split): neg, the slice, mul_ and sin, which
     * reads the written value, stay in the outer graph (lines indented by
     * two spaces; a region's f and df are indented further). */
    const char *outer[] = {"= neg(", "= slice[", "= mul_.Scalar[", "= sin("};
    for (int i = 0; i < 4; i++) {
        const char *at = strstr(text, outer[i]);
        assert_non_null(at);
        const char *line = at;
        while (line > text && line[-1] != '\n')
            line--;
        assert_true(line[0] == ' ' && line[1] == ' ' && line[2] == '%');
    }
    yg_string_release(text);
    yg_executor_release(e);
    model_free(&m);
}

/* Sizes are in a gradient spec, so a graph run at ever new batch sizes
 * would build a plan each; the cache keeps max_plans (here 3), dropping
 * the least recently used, and a size run again after its plan went is
 * rebuilt and computes what eager does (values and gradients). */
static void test_plan_cache_is_bounded_and_drops_the_least_recently_used(void **state) {
    (void)state;
    model m = make_mlp(false);
    yg_trace_result *tr = NULL;
    yg_executor *e = NULL;
    yg_tensor *in[5], *out = NULL;
    const yg_executor_options bad = {.max_plans = -1}, o = {.max_plans = 3};
    YG_CHECK(yg_trace(m.fn, &m, m.x, 1, 1, NULL, &tr));
    YG_EXPECT_ERROR(yg_executor_create(tr->graph, &bad, &e),
                    YG_ERR_INVALID_ARGUMENT,
                    "executor: max_plans -1 is negative");
    assert_null(e);
    YG_CHECK(yg_executor_create(tr->graph, &o, &e));
    for (int i = 0; i < 4; i++)
        in[1 + i] = tr->params[i];
    for (int64_t b = 1; b <= 10; b++) {
        in[0] = rnd(b, 12, 100 + (uint64_t)b, false);
        YG_CHECK(yg_executor_run(e, in, 5, &out, 1));
        assert_int_equal(yg_tensor_sizes(out)[0], b);
        yg_release(out);
        yg_release(in[0]);
        assert_true(yg_executor_get_stats(e).plans <= 3);
    }
    yg_executor_stats s = yg_executor_get_stats(e);
    assert_int_equal(s.plans, 3);
    assert_int_equal(s.max_plans, 3);
    assert_int_equal(s.misses, 10);
    assert_int_equal(s.evictions, 7);
    /* batch 1's plan went long ago: rebuilt, and right */
    in[0] = rnd(1, 12, 101, false);
    yg_tensor *eager = NULL, *loss = NULL, *loss_e = NULL, *g[4] = {NULL}, *ge[4] = {NULL};
    YG_CHECK(yg_executor_run(e, in, 5, &out, 1));
    YG_CHECK(m.fn(&m, in, 1, &eager, 1));
    assert_int_equal(yg_executor_get_stats(e).misses, 11);
    YG_CHECK(yg_sum(out, &loss));
    YG_CHECK(yg_sum(eager, &loss_e));
    for (int i = 0; i < 4; i++)
        yg_tensor_zero_grad(m.w[i]);
    YG_CHECK(yg_backward(loss, NULL, false));
    for (int i = 0; i < 4; i++) {
        YG_CHECK(yg_tensor_grad(m.w[i], &g[i]));
        yg_tensor_zero_grad(m.w[i]);
    }
    YG_CHECK(yg_backward(loss_e, NULL, false));
    for (int i = 0; i < 4; i++) {
        YG_CHECK(yg_tensor_grad(m.w[i], &ge[i]));
        expect_same("weight gradient after an eviction", ge[i], g[i]);
        yg_release(g[i]);
        yg_release(ge[i]);
    }
    expect_same("output after an eviction", eager, out);
    yg_release(loss);
    yg_release(loss_e);
    yg_release(out);
    yg_release(eager);
    yg_release(in[0]);
    yg_executor_release(e);
    yg_trace_result_release(tr);
    model_free(&m);
}

/* The cache keys on requires_grad, dtype and rank; no df without grad. */
static void test_plan_cache_hits_and_misses_by_spec(void **state) {
    (void)state;
    model m = make_mlp(false);
    yg_trace_result *tr = NULL;
    yg_executor *e = NULL;
    yg_tensor *in[5], *out = NULL;
    YG_CHECK(yg_trace(m.fn, &m, m.x, 1, 1, NULL, &tr));
    YG_CHECK(yg_executor_create(tr->graph, NULL, &e));
    in[0] = m.x[0];
    for (int i = 0; i < 4; i++)
        in[1 + i] = tr->params[i];
    /* 1: grad (weights require grad) */
    YG_CHECK(yg_executor_run(e, in, 5, &out, 1));
    yg_release(out);
    YG_CHECK(yg_executor_run(e, in, 5, &out, 1));
    yg_release(out);
    yg_executor_stats s = yg_executor_get_stats(e);
    assert_int_equal(s.misses, 1);
    assert_int_equal(s.hits, 1);
    char *with_grad = NULL, *no_grad = NULL;
    YG_CHECK(yg_executor_last_graph(e, &with_grad));
    assert_non_null(strstr(with_grad, "df="));
    /* 2: grad mode off: another plan, without a backward. */
    bool prev = yg_set_grad_enabled(false);
    YG_CHECK(yg_executor_run(e, in, 5, &out, 1));
    yg_set_grad_enabled(prev);
    yg_release(out);
    YG_CHECK(yg_executor_last_graph(e, &no_grad));
    assert_null(strstr(no_grad, "DifferentiableGraph"));
    s = yg_executor_get_stats(e);
    assert_int_equal(s.misses, 2);
    assert_int_equal(s.plans, 2);
    /* 3: another batch size under grad: sizes are in the spec. */
    yg_tensor *x2 = rnd(3, 12, 61, false);
    in[0] = x2;
    YG_CHECK(yg_executor_run(e, in, 5, &out, 1));
    assert_int_equal(yg_tensor_sizes(out)[0], 3);
    yg_release(out);
    s = yg_executor_get_stats(e);
    assert_int_equal(s.misses, 3);
    char *dump = NULL;
    YG_CHECK(yg_executor_dump_plans(e, &dump));
    assert_non_null(strstr(dump, "spec: grad=1 inputs=[float64 cpu [8, 12] contiguous"));
    assert_non_null(strstr(dump, "spec: grad=0 inputs=[float64 cpu rank 2 contiguous"));
    yg_string_release(dump);
    /* 4: wrong dtype and rank are refused naming the input. */
    yg_tensor *xf = NULL, *x1 = rnd(12, 0, 62, false);
    YG_CHECK(yg_to_copy(x2, YG_FLOAT32, &xf));
    in[0] = xf;
    YG_EXPECT_ERROR(yg_executor_run(e, in, 5, &out, 1),
                    YG_ERR_DTYPE,
                    "executor: input 0 %0: expected dtype float64, got float32");
    in[0] = x1;
    YG_EXPECT_ERROR(yg_executor_run(e, in, 5, &out, 1),
                    YG_ERR_SHAPE,
                    "executor: input 0 %0: expected rank 2, got 1");
    YG_EXPECT_ERROR(yg_executor_run(e, in, 4, &out, 1),
                    YG_ERR_INVALID_ARGUMENT,
                    "executor: graph has 5 inputs, got 4");
    assert_null(out);
    yg_string_release(with_grad);
    yg_string_release(no_grad);
    yg_release(xf);
    yg_release(x1);
    yg_release(x2);
    yg_executor_release(e);
    yg_trace_result_release(tr);
    model_free(&m);
}

/* A node without a graph derivative (the in-place add_, and mul, whose
 * result add_ writes) still runs, outside any region, and its gradient
 * comes from eager autograd, composed with the region's. */
static void test_graph_with_an_op_without_graph_derivative_still_runs(void **state) {
    (void)state;
    const char *text = "graph(%x : Tensor(dtype=float64, sizes=[4], requires_grad=true)):\n"
                       "  %e = exp(%x)\n"
                       "  %a = sin(%e)\n"
                       "  %b = mul(%a, %x)\n"
                       "  %c = add_(%b, %x)\n"
                       "  %d = sum(%c)\n"
                       "  return (%d)\n";
    yg_graph *g = NULL;
    yg_executor *e = NULL;
    YG_CHECK(yg_graph_parse(text, (int64_t)strlen(text), &g));
    YG_CHECK(yg_executor_create(g, NULL, &e));
    yg_tensor *x = rnd(4, 0, 71, true), *y = NULL, *gx = NULL;
    YG_CHECK(yg_executor_run(e, &x, 1, &y, 1));
    YG_CHECK(yg_backward(y, NULL, false));
    YG_CHECK(yg_tensor_grad(x, &gx));
    double *xv = yg_test_values(x), *gv = yg_test_values(gx);
    for (int i = 0; i < 4; i++) { /* d/dx (x sin(e^x) + x) */
        double ex = exp(xv[i]);
        assert_true(fabs(gv[i] - (sin(ex) + xv[i] * cos(ex) * ex + 1)) < 1e-12);
    }
    char *plan = NULL;
    YG_CHECK(yg_executor_last_graph(e, &plan));
    assert_non_null(strstr(plan, "prim::DifferentiableGraph"));
    assert_non_null(strstr(plan, "add_("));
    free(xv);
    free(gv);
    yg_string_release(plan);
    yg_release(gx);
    yg_release(y);
    yg_release(x);
    yg_executor_release(e);
    yg_graph_release(g);
}

/* Second order through regions: one whose df reads only the region's
 * input (x * x * x), one whose df reads an intermediate (sin(x * x): the
 * node runs f again with history under create_graph). */
static void second_order(const char *text, double (*d1)(double), double (*d2)(double)) {
    yg_graph *g = NULL;
    yg_executor *e = NULL;
    YG_CHECK(yg_graph_parse(text, (int64_t)strlen(text), &g));
    YG_CHECK(yg_executor_create(g, NULL, &e));
    yg_tensor *x = rnd(3, 0, 81, true), *y = NULL, *gx = NULL, *s = NULL, *ggx = NULL;
    YG_CHECK(yg_executor_run(e, &x, 1, &y, 1));
    char *plan = NULL;
    YG_CHECK(yg_executor_last_graph(e, &plan));
    assert_non_null(strstr(plan, "prim::DifferentiableGraph"));
    yg_string_release(plan);
    yg_tensor *ones = NULL;
    int64_t s3 = 3;
    YG_CHECK(yg_tensor_full(&s3, 1, 1.0, YG_FLOAT64, &ones));
    const yg_tensor *ys[1] = {y}, *xs[1] = {x}, *gs[1] = {ones};
    YG_CHECK(yg_grad(ys, 1, gs, xs, 1, false, true, false, &gx));
    YG_CHECK(yg_sum(gx, &s));
    const yg_tensor *ss[1] = {s};
    YG_CHECK(yg_grad(ss, 1, NULL, xs, 1, false, false, false, &ggx));
    double *xv = yg_test_values(x), *g1 = yg_test_values(gx), *g2 = yg_test_values(ggx);
    for (int i = 0; i < 3; i++) {
        assert_true(fabs(g1[i] - d1(xv[i])) < 1e-12);
        assert_true(fabs(g2[i] - d2(xv[i])) < 1e-12);
    }
    free(xv);
    free(g1);
    free(g2);
    yg_release(s);
    yg_release(ggx);
    yg_release(gx);
    yg_release(ones);
    yg_release(y);
    yg_release(x);
    yg_executor_release(e);
    yg_graph_release(g);
}

static double cube_d1(double x) {
    return 3 * x * x;
}
static double cube_d2(double x) {
    return 6 * x;
}
static double sinsq_d1(double x) {
    return 2 * x * cos(x * x);
}
static double sinsq_d2(double x) {
    return 2 * cos(x * x) - 4 * x * x * sin(x * x);
}

static void test_double_backward_through_regions(void **state) {
    (void)state;
    second_order("graph(%x : Tensor(dtype=float64, sizes=[3], requires_grad=true)):\n"
                 "  %a = mul(%x, %x)\n"
                 "  %b = mul(%a, %x)\n"
                 "  return (%b)\n",
                 cube_d1,
                 cube_d2);
    second_order("graph(%x : Tensor(dtype=float64, sizes=[3], requires_grad=true)):\n"
                 "  %a = mul(%x, %x)\n"
                 "  %b = sin(%a)\n"
                 "  return (%b)\n",
                 sinsq_d1,
                 sinsq_d2);
}

/* A prim::None made in one region and read after it (here by a layer
 * norm beyond an in-place op, which ends the region): the region's outputs
 * are tensors, so the None moves before it and both regions still form. */
static void test_a_none_shared_between_regions_stays_outside(void **state) {
    (void)state;
    const char *text =
        "graph(%x : Tensor(dtype=float64, sizes=[2, 3], requires_grad=true),"
        " %w : Tensor(dtype=float64, sizes=[2, 3])):\n"
        "  %a = exp(%x)\n"
        "  %n = prim::None()\n"
        "  %b = sin(%a)\n"
        "  %c = add_(%w, %b)\n"
        "  %d = mul(%c, %x)\n"
        "  %y, %m, %r = native_layer_norm[normalized_shape=[3], eps=1e-05](%d, %n, %n)\n"
        "  %z = tanh(%y)\n"
        "  return (%z)\n";
    yg_graph *g = NULL, *orig = NULL;
    YG_CHECK(yg_graph_parse(text, (int64_t)strlen(text), &g));
    YG_CHECK(yg_graph_clone(g, &orig));
    YG_CHECK(yg_graph_propagate_shapes(g));
    YG_CHECK(yg_graph_create_autodiff_subgraphs(g, NULL, 1));
    YG_CHECK(yg_graph_lint(g));
    char *made = NULL;
    YG_CHECK(yg_graph_print(g, &made));
    const char *first = strstr(made, "prim::DifferentiableGraph");
    assert_non_null(first);
    assert_non_null(strstr(first + 1, "prim::DifferentiableGraph")); /* two regions */
    assert_true(strstr(made, "prim::None") < first);                /* the None before both */
    const int64_t s[2] = {2, 3};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 2, -0.5, 0.5, 5), *w1 = yg_test_rand(YG_FLOAT64, s, 2, -0.5, 0.5, 6);
    yg_tensor *w2 = NULL, *y1 = NULL, *y2 = NULL;
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_clone(w1, &w2));
    yg_tensor *in1[2] = {x, w1}, *in2[2] = {x, w2};
    YG_CHECK(yg_graph_run(orig, in1, 2, &y1, 1));
    YG_CHECK(yg_graph_run(g, in2, 2, &y2, 1));
    expect_same("regions sharing a None", y1, y2);
    yg_string_release(made);
    yg_release(x);
    yg_release(w1);
    yg_release(w2);
    yg_release(y1);
    yg_release(y2);
    yg_graph_release(g);
    yg_graph_release(orig);
}

/* Regions made with min_size 1 and put back with a larger one: the graph
 * is as before (same text once canonicalised, same values). */
static void test_small_regions_are_inlined_back(void **state) {
    (void)state;
    const char *text = "graph(%x : Tensor(dtype=float64, sizes=[3], requires_grad=true)):\n"
                       "  %a = exp(%x)\n"
                       "  %b = add_(%a, %x)\n"
                       "  %c = sin(%b)\n"
                       "  %d = mul(%c, %c)\n"
                       "  return (%d)\n";
    yg_graph *g = NULL, *orig = NULL;
    YG_CHECK(yg_graph_parse(text, (int64_t)strlen(text), &g));
    YG_CHECK(yg_graph_clone(g, &orig));
    YG_CHECK(yg_graph_propagate_shapes(g));
    YG_CHECK(yg_graph_create_autodiff_subgraphs(g, NULL, 1));
    char *made = NULL;
    YG_CHECK(yg_graph_print(g, &made));
    /* exp alone is in-place's victim: outside; sin and mul make a region. */
    assert_non_null(strstr(made, "prim::DifferentiableGraph"));
    assert_non_null(strstr(made, "\n  %a : Tensor"));
    YG_CHECK(yg_graph_inline_autodiff_subgraphs(g, 10));
    YG_CHECK(yg_graph_lint(g));
    char *back = NULL;
    YG_CHECK(yg_graph_print(g, &back));
    assert_null(strstr(back, "DifferentiableGraph"));
    yg_tensor *x = rnd(3, 0, 97, true), *y1 = NULL, *y2 = NULL;
    YG_CHECK(yg_graph_run(orig, &x, 1, &y1, 1));
    YG_CHECK(yg_graph_run(g, &x, 1, &y2, 1));
    expect_same("inlined graph", y1, y2);
    yg_string_release(made);
    yg_string_release(back);
    yg_release(x);
    yg_release(y1);
    yg_release(y2);
    yg_graph_release(g);
    yg_graph_release(orig);
}

/* A fused no-gradient plan serves other batch sizes (sizes are not in
 * its spec); shapes that do not go together are refused by the ops, as
 * eager mode refuses them, never read out of bounds. */
static void test_fused_plan_takes_new_shapes_or_refuses_them(void **state) {
    (void)state;
    const char *text = "graph(%x : Tensor(dtype=float32, sizes=[2, 4]),"
                       " %y : Tensor(dtype=float32, sizes=[4])):\n"
                       "  %a = mul(%x, %y)\n"
                       "  %b = tanh(%a)\n"
                       "  %c = add(%b, %y)\n"
                       "  return (%c)\n";
    yg_graph *g = NULL;
    yg_executor *e = NULL;
    YG_CHECK(yg_graph_parse(text, (int64_t)strlen(text), &g));
    YG_CHECK(yg_executor_create(g, NULL, &e));
    int64_t sy[1] = {4};
    yg_tensor *y = yg_test_rand(YG_FLOAT32, sy, 1, -1, 1, 101);
    for (int64_t rows = 1; rows <= 9; rows += 4) {
        int64_t sx[2] = {rows, 4};
        yg_tensor *x = yg_test_rand(YG_FLOAT32, sx, 2, -1, 1, 100 + (uint64_t)rows);
        yg_tensor *in[2] = {x, y}, *out = NULL, *ref = NULL, *t1 = NULL, *t2 = NULL;
        YG_CHECK(yg_executor_run(e, in, 2, &out, 1));
        YG_CHECK(yg_mul(x, y, &t1));
        YG_CHECK(yg_tanh(t1, &t2));
        YG_CHECK(yg_add(t2, y, 1, &ref));
        expect_same("new batch size", ref, out);
        yg_release(x);
        yg_release(out);
        yg_release(ref);
        yg_release(t1);
        yg_release(t2);
    }
    char *plan = NULL;
    YG_CHECK(yg_executor_last_graph(e, &plan));
    assert_non_null(strstr(plan, "prim::FusionGroup"));
    yg_string_release(plan);
    assert_int_equal(yg_executor_get_stats(e).plans, 1);
    int64_t bad[2] = {3, 5};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, bad, 2, -1, 1, 102), *out = NULL;
    yg_tensor *in[2] = {x, y};
    YG_EXPECT_ERROR(yg_executor_run(e, in, 2, &out, 1), YG_ERR_SHAPE, "mul", "[3, 5]", "[4]");
    assert_null(out);
    yg_release(x);
    yg_release(y);
    yg_executor_release(e);
    yg_graph_release(g);
}

/* An executor run while tracing: its ops land in the outer trace. */
typedef struct outer {
    yg_executor *e;
    yg_tensor *const *params;
} outer;

static yg_status
outer_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    outer *o = ctx;
    yg_tensor *args[5] = {in[0], o->params[0], o->params[1], o->params[2], o->params[3]};
    yg_tensor *h = NULL;
    (void)n_in;
    (void)n_out;
    yg_status st = yg_executor_run(o->e, args, 5, &h, 1);
    if (st == YG_OK)
        st = yg_tanh(h, &out[0]);
    yg_release(h);
    return st;
}

static void test_executor_inlines_into_an_outer_trace(void **state) {
    (void)state;
    model m = make_mlp(false);
    yg_trace_result *tr = NULL, *tr2 = NULL;
    yg_executor *e = NULL;
    YG_CHECK(yg_trace(m.fn, &m, m.x, 1, 1, NULL, &tr));
    YG_CHECK(yg_executor_create(tr->graph, NULL, &e));
    outer o = {.e = e, .params = tr->params};
    YG_CHECK(yg_trace(outer_fn, &o, m.x, 1, 1, NULL, &tr2));
    char *text = NULL;
    YG_CHECK(yg_graph_print(tr2->graph, &text));
    assert_non_null(strstr(text, "linear("));
    assert_non_null(strstr(text, "tanh("));
    assert_int_equal(yg_executor_get_stats(e).inlined, 1);
    yg_string_release(text);
    yg_trace_result_release(tr2);
    yg_trace_result_release(tr);
    yg_executor_release(e);
    model_free(&m);
}

typedef struct thread_arg {
    yg_executor *e;
    yg_tensor **in;
    yg_tensor *expect;
    int bad;
} thread_arg;

static void *thread_main(void *p) {
    thread_arg *a = p;
    for (int i = 0; i < 20; i++) {
        yg_tensor *out = NULL;
        bool prev = yg_set_grad_enabled(i % 2 == 0);
        if (yg_executor_run(a->e, a->in, 5, &out, 1) != YG_OK) {
            a->bad++;
        } else {
            double *x = yg_test_values(out), *y = yg_test_values(a->expect);
            for (int64_t k = 0; k < yg_tensor_numel(out); k++)
                a->bad += fabs(x[k] - y[k]) > 1e-12;
            free(x);
            free(y);
        }
        yg_set_grad_enabled(prev);
        yg_release(out);
    }
    return NULL;
}

static void test_threads_share_one_executor(void **state) {
    (void)state;
    model m = make_mlp(false);
    yg_trace_result *tr = NULL;
    yg_executor *e = NULL;
    YG_CHECK(yg_trace(m.fn, &m, m.x, 1, 1, NULL, &tr));
    YG_CHECK(yg_executor_create(tr->graph, NULL, &e));
    yg_tensor *in[5] = {m.x[0], tr->params[0], tr->params[1], tr->params[2], tr->params[3]};
    thread_arg a[2] = {{e, in, tr->outputs[0], 0}, {e, in, tr->outputs[0], 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, thread_main, &a[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(a[0].bad + a[1].bad, 0);
    assert_int_equal(yg_executor_get_stats(e).plans, 2);
    yg_executor_release(e);
    yg_trace_result_release(tr);
    model_free(&m);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mlp_matches_eager),
        cmocka_unit_test(test_lstm_cell_matches_eager),
        cmocka_unit_test(test_gru_cell_matches_eager),
        cmocka_unit_test(test_transformer_block_matches_eager),
        cmocka_unit_test(test_attention_over_split_heads_matches_eager),
        cmocka_unit_test(test_cnn_matches_eager),
        cmocka_unit_test(test_gru_cell_fuses_forward_and_backward),
        cmocka_unit_test(test_lstm_cell_of_ops_fuses_forward_and_backward),
        cmocka_unit_test(test_act_mlp_block_fuses_and_matches_eager),
        cmocka_unit_test(test_inplace_ops_stay_outside_regions),
        cmocka_unit_test(test_views_inside_regions_match_eager),
        cmocka_unit_test(test_views_written_in_place_stay_outside),
        cmocka_unit_test(test_plan_cache_hits_and_misses_by_spec),
        cmocka_unit_test(test_plan_cache_is_bounded_and_drops_the_least_recently_used),
        cmocka_unit_test(test_graph_with_an_op_without_graph_derivative_still_runs),
        cmocka_unit_test(test_double_backward_through_regions),
        cmocka_unit_test(test_fused_plan_takes_new_shapes_or_refuses_them),
        cmocka_unit_test(test_a_none_shared_between_regions_stays_outside),
        cmocka_unit_test(test_small_regions_are_inlined_back),
        cmocka_unit_test(test_executor_inlines_into_an_outer_trace),
        cmocka_unit_test(test_threads_share_one_executor),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
