/*
 * test_ops_rnn.c - lstm_cell and gru_cell against naive float64 loops of
 * PyTorch's formulas written here, their gradients (through every part
 * autograd records) against central differences, and their messages.
 */
#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_layers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { NB = 2, IN = 3, HID = 2 };

static double sig(double x) {
    return 1 / (1 + exp(-x));
}

/* y[n][j] = sum_k x[n][k] w[j][k] + b[j] (+ the same for a second pair). */
static void
naive_affine(const double *x, const double *w, const double *b, int n, int in, int out, double *y) {
    for (int r = 0; r < n; r++)
        for (int j = 0; j < out; j++) {
            double acc = b != NULL ? b[j] : 0;
            for (int k = 0; k < in; k++)
                acc += x[r * in + k] * w[j * in + k];
            y[r * out + j] = acc;
        }
}

typedef struct cell_inputs {
    yg_tensor *x, *h, *c, *wih, *whh, *bih, *bhh;
} cell_inputs;

static cell_inputs make_inputs(int gates) {
    const int64_t xs[] = {NB, IN}, hs[] = {NB, HID}, wis[] = {gates * HID, IN};
    const int64_t whs[] = {gates * HID, HID}, bs[] = {gates * HID};
    cell_inputs c = {
        .x = yg_test_rand(YG_FLOAT64, xs, 2, -1, 1, 1),
        .h = yg_test_rand(YG_FLOAT64, hs, 2, -1, 1, 2),
        .c = yg_test_rand(YG_FLOAT64, hs, 2, -1, 1, 3),
        .wih = yg_test_rand(YG_FLOAT64, wis, 2, -1, 1, 4),
        .whh = yg_test_rand(YG_FLOAT64, whs, 2, -1, 1, 5),
        .bih = yg_test_rand(YG_FLOAT64, bs, 1, -1, 1, 6),
        .bhh = yg_test_rand(YG_FLOAT64, bs, 1, -1, 1, 7),
    };
    return c;
}

static void free_inputs(cell_inputs *c) {
    yg_release(c->x);
    yg_release(c->h);
    yg_release(c->c);
    yg_release(c->wih);
    yg_release(c->whh);
    yg_release(c->bih);
    yg_release(c->bhh);
}

static void test_lstm_cell_matches_naive_loops(void **state) {
    const int64_t hs[] = {NB, HID};
    cell_inputs c = make_inputs(4);
    double *x = yg_test_values(c.x), *h = yg_test_values(c.h), *cx = yg_test_values(c.c);
    double *wih = yg_test_values(c.wih), *whh = yg_test_values(c.whh);
    double *bih = yg_test_values(c.bih), *bhh = yg_test_values(c.bhh);
    double pi[NB * 4 * HID], ph[NB * 4 * HID], hy[NB * HID], cy[NB * HID];
    yg_tensor *oh = NULL, *oc = NULL;
    (void)state;
    naive_affine(x, wih, bih, NB, IN, 4 * HID, pi);
    naive_affine(h, whh, bhh, NB, HID, 4 * HID, ph);
    for (int n = 0; n < NB; n++)
        for (int j = 0; j < HID; j++) {
            double g[4];
            for (int k = 0; k < 4; k++)
                g[k] = pi[n * 4 * HID + k * HID + j] + ph[n * 4 * HID + k * HID + j];
            double c1 = sig(g[1]) * cx[n * HID + j] + sig(g[0]) * tanh(g[2]);
            cy[n * HID + j] = c1;
            hy[n * HID + j] = sig(g[3]) * tanh(c1);
        }
    YG_CHECK(yg_lstm_cell(c.x, c.h, c.c, c.wih, c.whh, c.bih, c.bhh, &oh, &oc));
    YG_EXPECT_CLOSE(oh, hs, 2, hy, 1e-14, 1e-14);
    YG_EXPECT_CLOSE(oc, hs, 2, cy, 1e-14, 1e-14);
    yg_release(oh);
    yg_release(oc);
    free(x);
    free(h);
    free(cx);
    free(wih);
    free(whh);
    free(bih);
    free(bhh);
    free_inputs(&c);
}

static void test_gru_cell_matches_naive_loops(void **state) {
    const int64_t hs[] = {NB, HID};
    cell_inputs c = make_inputs(3);
    double *x = yg_test_values(c.x), *h = yg_test_values(c.h);
    double *wih = yg_test_values(c.wih), *whh = yg_test_values(c.whh);
    double pi[NB * 3 * HID], ph[NB * 3 * HID], hy[NB * HID];
    yg_tensor *out = NULL;
    (void)state;
    /* no biases: the NULL path */
    naive_affine(x, wih, NULL, NB, IN, 3 * HID, pi);
    naive_affine(h, whh, NULL, NB, HID, 3 * HID, ph);
    for (int n = 0; n < NB; n++)
        for (int j = 0; j < HID; j++) {
            const double *a = pi + n * 3 * HID, *b = ph + n * 3 * HID;
            double r = sig(a[j] + b[j]), z = sig(a[HID + j] + b[HID + j]);
            double nn = tanh(a[2 * HID + j] + r * b[2 * HID + j]);
            hy[n * HID + j] = (1 - z) * nn + z * h[n * HID + j];
        }
    YG_CHECK(yg_gru_cell(c.x, c.h, c.wih, c.whh, NULL, NULL, &out));
    YG_EXPECT_CLOSE(out, hs, 2, hy, 1e-14, 1e-14);
    yg_release(out);
    free(x);
    free(h);
    free(wih);
    free(whh);
    free_inputs(&c);
}

/* sum(hy) + 2 sum(cy) (LSTM) or sum(hy) (GRU), as a function of *which. */
static double cell_loss(cell_inputs *c, bool lstm, yg_tensor **loss_out) {
    yg_tensor *hy = NULL, *cy = NULL, *s1 = NULL, *s2 = NULL, *l = NULL;
    double v;
    if (lstm) {
        YG_CHECK(yg_lstm_cell(c->x, c->h, c->c, c->wih, c->whh, c->bih, c->bhh, &hy, &cy));
        YG_CHECK(yg_sum(hy, &s1));
        YG_CHECK(yg_sum(cy, &s2));
        YG_CHECK(yg_add(s1, s2, 2, &l));
    } else {
        YG_CHECK(yg_gru_cell(c->x, c->h, c->wih, c->whh, c->bih, c->bhh, &hy));
        YG_CHECK(yg_sum(hy, &l));
    }
    YG_CHECK(yg_tensor_item(l, &v));
    if (loss_out != NULL)
        *loss_out = yg_retain(l);
    yg_release(hy);
    yg_release(cy);
    yg_release(s1);
    yg_release(s2);
    yg_release(l);
    return v;
}

static void expect_cell_gradients(bool lstm) {
    cell_inputs c = make_inputs(lstm ? 4 : 3);
    yg_tensor *all[] = {c.x, c.h, c.c, c.wih, c.whh, c.bih, c.bhh}, *loss = NULL;
    const char *names[] = {"input", "hx", "cx", "w_ih", "w_hh", "b_ih", "b_hh"};
    for (int k = 0; k < 7; k++)
        YG_CHECK(yg_tensor_set_requires_grad(all[k], true));
    cell_loss(&c, lstm, &loss);
    YG_CHECK(yg_backward(loss, NULL, false));
    bool prev = yg_set_grad_enabled(false);
    for (int k = 0; k < 7; k++) {
        yg_tensor *g = NULL;
        double *gv, *d = yg_tensor_data(all[k]);
        if (!lstm && k == 2)
            continue; /* a GRU has no cell state */
        YG_CHECK(yg_tensor_grad(all[k], &g));
        gv = yg_test_values(g);
        for (int64_t i = 0; i < yg_tensor_numel(all[k]); i++) {
            double orig = d[i], lp, lm;
            d[i] = orig + 1e-6;
            lp = cell_loss(&c, lstm, NULL);
            d[i] = orig - 1e-6;
            lm = cell_loss(&c, lstm, NULL);
            d[i] = orig;
            double numeric = (lp - lm) / 2e-6;
            if (fabs(numeric - gv[i]) > 1e-6 + 1e-4 * fabs(numeric)) {
                print_error("%s: d/d %s[%lld]: analytic %.10g, numeric %.10g\n",
                            lstm ? "lstm_cell" : "gru_cell",
                            names[k],
                            (long long)i,
                            gv[i],
                            numeric);
                fail();
            }
        }
        free(gv);
        yg_release(g);
    }
    yg_set_grad_enabled(prev);
    yg_release(loss);
    free_inputs(&c);
}

static void test_lstm_cell_gradients_match_differences(void **state) {
    (void)state;
    expect_cell_gradients(true);
}

static void test_gru_cell_gradients_match_differences(void **state) {
    (void)state;
    expect_cell_gradients(false);
}

/* lstm_cell_gates and its gradient on rows enough to be split over
 * threads (40 x 4 x 1000 elements), in float32: the fused kernels against
 * the formulas in double, and the fused backward (no graph) against the
 * differentiable one (recording, as under create_graph). */
static void test_fused_lstm_gates_match_naive_loops_and_the_differentiable_path(void **state) {
    enum { R = 40, H = 1000 };
    const int64_t gs[] = {R, 4 * H}, cs[] = {R, H};
    (void)state;
    yg_tensor *ig = yg_test_rand(YG_FLOAT32, gs, 2, -3, 3, 1),
              *hg = yg_test_rand(YG_FLOAT32, gs, 2, -3, 3, 2);
    yg_tensor *cx = yg_test_rand(YG_FLOAT32, cs, 2, -1, 1, 3),
              *ghy = yg_test_rand(YG_FLOAT32, cs, 2, -1, 1, 4);
    yg_tensor *gcy = yg_test_rand(YG_FLOAT32, cs, 2, -1, 1, 5);
    double *a = yg_test_values(ig), *b = yg_test_values(hg), *c = yg_test_values(cx);
    double *h_ref = malloc(sizeof(double) * R * H), *c_ref = malloc(sizeof(double) * R * H);
    for (int r = 0; r < R; r++)
        for (int j = 0; j < H; j++) {
            const double *p = a + r * 4 * H, *q = b + r * 4 * H;
            double i = sig(p[j] + q[j]), f = sig(p[H + j] + q[H + j]);
            double g = tanh(p[2 * H + j] + q[2 * H + j]), o = sig(p[3 * H + j] + q[3 * H + j]);
            c_ref[r * H + j] = f * c[r * H + j] + i * g;
            h_ref[r * H + j] = o * tanh(c_ref[r * H + j]);
        }
    yg_tensor *hy = NULL, *cy = NULL;
    YG_CHECK(yg_lstm_cell_gates(ig, hg, cx, &hy, &cy));
    YG_EXPECT_CLOSE(hy, cs, 2, h_ref, 1e-6, 1e-5);
    YG_EXPECT_CLOSE(cy, cs, 2, c_ref, 1e-6, 1e-5);

    const bool mask[3] = {true, true, true};
    yg_tensor *fused[3] = {NULL}, *parts[3] = {NULL};
    YG_CHECK(
        yg_lstm_cell_gates_backward(ghy, gcy, ig, hg, cx, mask, &fused[0], &fused[1], &fused[2]));
    YG_CHECK(yg_tensor_set_requires_grad(cx, true)); /* records: the parts run */
    YG_CHECK(
        yg_lstm_cell_gates_backward(ghy, gcy, ig, hg, cx, mask, &parts[0], &parts[1], &parts[2]));
    assert_true(yg_tensor_requires_grad(parts[2]));
    assert_false(yg_tensor_requires_grad(fused[2]));
    for (int k = 0; k < 3; k++) {
        double *v = yg_test_values(parts[k]);
        YG_EXPECT_CLOSE(fused[k], yg_tensor_sizes(parts[k]), 2, v, 1e-6, 1e-5);
        free(v);
    }
    for (int k = 0; k < 3; k++) {
        yg_release(fused[k]);
        yg_release(parts[k]);
    }
    free(a);
    free(b);
    free(c);
    free(h_ref);
    free(c_ref);
    yg_release(hy);
    yg_release(cy);
    yg_release(ig);
    yg_release(hg);
    yg_release(cx);
    yg_release(ghy);
    yg_release(gcy);
}

static void test_lstm_cell_gates_rejects_mismatched_operands(void **state) {
    const int64_t g5[] = {2, 10}, g8[] = {2, 8}, c2[] = {2, 2}, c3[] = {2, 3};
    (void)state;
    yg_tensor *a = yg_test_rand(YG_FLOAT32, g8, 2, -1, 1, 1),
              *b5 = yg_test_rand(YG_FLOAT32, g5, 2, -1, 1, 2);
    yg_tensor *cx = yg_test_rand(YG_FLOAT32, c2, 2, -1, 1, 3),
              *cx3 = yg_test_rand(YG_FLOAT32, c3, 2, -1, 1, 4);
    yg_tensor *d = yg_test_rand(YG_FLOAT64, g8, 2, -1, 1, 5);
    yg_tensor *hy = (yg_tensor *)0x1, *cy = (yg_tensor *)0x1;
    YG_EXPECT_ERROR(yg_lstm_cell_gates(a, b5, cx, &hy, &cy),
                    YG_ERR_SHAPE,
                    "lstm_cell_gates:",
                    "hidden_gates [2, 10] does not match input_gates [2, 8]");
    assert_null(hy);
    assert_null(cy);
    YG_EXPECT_ERROR(yg_lstm_cell_gates(a, a, cx3, &hy, &cy),
                    YG_ERR_SHAPE,
                    "lstm_cell_gates:",
                    "expected cx of sizes [2, 2]",
                    "got [2, 3]");
    YG_EXPECT_ERROR(yg_lstm_cell_gates(a, d, cx, &hy, &cy),
                    YG_ERR_DTYPE,
                    "lstm_cell_gates:",
                    "hidden_gates",
                    "float64");
    yg_release(a);
    yg_release(b5);
    yg_release(cx);
    yg_release(cx3);
    yg_release(d);
}

static void test_cells_reject_weights_that_are_not_stacked_gates(void **state) {
    cell_inputs c = make_inputs(4);
    yg_tensor *hy = NULL, *cy = NULL;
    (void)state;
    /* 4H rows given to a GRU (3 gates) cannot split: 8 is not 3 gates. */
    YG_EXPECT_ERROR(yg_gru_cell(c.x, c.h, c.wih, c.whh, NULL, NULL, &hy),
                    YG_ERR_SHAPE,
                    "gru_cell: gate projections [2, 8] are not 3 stacked gates");
    assert_null(hy);
    YG_EXPECT_ERROR(yg_lstm_cell(c.x, c.h, c.c, c.whh, c.whh, NULL, NULL, &hy, &cy),
                    YG_ERR_SHAPE,
                    "lstm_cell: linear: ");
    assert_null(hy);
    assert_null(cy);
    free_inputs(&c);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lstm_cell_matches_naive_loops),
        cmocka_unit_test(test_gru_cell_matches_naive_loops),
        cmocka_unit_test(test_lstm_cell_gradients_match_differences),
        cmocka_unit_test(test_gru_cell_gradients_match_differences),
        cmocka_unit_test(test_cells_reject_weights_that_are_not_stacked_gates),
        cmocka_unit_test(test_fused_lstm_gates_match_naive_loops_and_the_differentiable_path),
        cmocka_unit_test(test_lstm_cell_gates_rejects_mismatched_operands),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
