/*
 * lstm_sequence.c - a recurrent model built from lstm_cell: it reads a
 * sequence of numbers one step at a time and says whether their sum is
 * positive, a task that needs the cell state to accumulate over time.
 *
 *   (h, c) = lstm_cell(x_t, h, c)   for t = 0 .. T-1, from h = c = 0
 *   logit = linear(h; 16 -> 1)
 *   loss = binary_cross_entropy_with_logits(logit, label)
 *
 * Backward runs through all T unrolled steps (backpropagation through
 * time); Adam updates the weights.  Prints the loss every few hundred
 * steps and ends with the accuracy on fresh sequences:
 * "accuracy: <value>".  Usage: lstm_sequence [steps]
 */
#include "yagrad/yagrad.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define T      10
#define HIDDEN 16
#define BATCH  32

/* Example code: stop on the first failure, saying why. */
#define CHECK(expr)                                                                                \
    do {                                                                                           \
        yg_status st_ = (expr);                                                                    \
        if (st_ != YG_OK) {                                                                        \
            fprintf(stderr,                                                                        \
                    "%s:%d: %s: %s\n",                                                             \
                    __FILE__,                                                                      \
                    __LINE__,                                                                      \
                    yg_status_name(st_),                                                           \
                    yg_last_error());                                                              \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static uint64_t rng_state = 0x853C49E6748FEA9BULL;

static double uniform(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* A parameter with sizes (ndim 1 or 2) and values in [-bound, bound). */
static yg_tensor *param(const int64_t *sizes, int64_t ndim, double bound) {
    int64_t n = ndim == 2 ? sizes[0] * sizes[1] : sizes[0];
    float *v = malloc((size_t)n * sizeof *v);
    yg_tensor *t = NULL;
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)((2 * uniform() - 1) * bound);
    CHECK(yg_tensor_from_data(v, sizes, ndim, YG_FLOAT32, &t));
    CHECK(yg_tensor_set_requires_grad(t, true));
    free(v);
    return t;
}

/* A batch: x [BATCH, T] uniform in [-1, 1), label [BATCH, 1] = sum > 0. */
static void make_batch(yg_tensor **x, yg_tensor **label) {
    const int64_t xs[] = {BATCH, T}, ls[] = {BATCH, 1};
    float xv[BATCH * T], lv[BATCH];
    for (int b = 0; b < BATCH; b++) {
        double s = 0;
        for (int t = 0; t < T; t++)
            s += xv[b * T + t] = (float)(2 * uniform() - 1);
        lv[b] = s > 0 ? 1.0f : 0.0f;
    }
    CHECK(yg_tensor_from_data(xv, xs, 2, YG_FLOAT32, x));
    CHECK(yg_tensor_from_data(lv, ls, 2, YG_FLOAT32, label));
}

typedef struct model {
    yg_tensor *w_ih, *w_hh, *b_ih, *b_hh, *w_out, *b_out;
} model;

/* The logits [BATCH, 1] of x [BATCH, T], as a new reference. */
static yg_tensor *forward(const model *m, const yg_tensor *x) {
    const int64_t hs[] = {BATCH, HIDDEN};
    yg_tensor *h = NULL, *c = NULL, *logit = NULL;
    CHECK(yg_tensor_zeros(hs, 2, YG_FLOAT32, &h));
    CHECK(yg_tensor_zeros(hs, 2, YG_FLOAT32, &c));
    for (int t = 0; t < T; t++) {
        yg_tensor *xt = NULL, *h2 = NULL, *c2 = NULL;
        CHECK(yg_narrow(x, 1, t, 1, &xt)); /* [BATCH, 1]: step t */
        CHECK(yg_lstm_cell(xt, h, c, m->w_ih, m->w_hh, m->b_ih, m->b_hh, &h2, &c2));
        yg_release(xt);
        yg_release(h);
        yg_release(c);
        h = h2;
        c = c2;
    }
    CHECK(yg_linear(h, m->w_out, m->b_out, &logit));
    yg_release(h);
    yg_release(c);
    return logit;
}

int main(int argc, char **argv) {
    int steps = argc > 1 ? atoi(argv[1]) : 600;
    const int64_t wih[] = {4 * HIDDEN, 1}, whh[] = {4 * HIDDEN, HIDDEN}, b[] = {4 * HIDDEN};
    const int64_t wout[] = {1, HIDDEN}, bout[] = {1};
    double k = 1 / sqrt(HIDDEN);
    model m = {param(wih, 2, k),
               param(whh, 2, k),
               param(b, 1, k),
               param(b, 1, k),
               param(wout, 2, k),
               param(bout, 1, k)};
    yg_tensor *params[] = {m.w_ih, m.w_hh, m.b_ih, m.b_hh, m.w_out, m.b_out};
    yg_optimizer *opt = NULL;
    yg_adam_options o = yg_adam_options_default();
    double running = 0;

    o.lr = 1e-2;
    CHECK(yg_optimizer_create_adam(params, 6, &o, &opt));
    for (int s = 0; s < steps; s++) {
        yg_tensor *x = NULL, *label = NULL, *logit, *loss = NULL;
        double l;
        make_batch(&x, &label);
        logit = forward(&m, x);
        CHECK(yg_binary_cross_entropy_with_logits(
            logit, label, NULL, NULL, YG_REDUCTION_MEAN, &loss));
        CHECK(yg_backward(loss, NULL, false));
        CHECK(yg_optimizer_step(opt));
        yg_optimizer_zero_grad(opt);
        CHECK(yg_tensor_item(loss, &l));
        running += l;
        if ((s + 1) % 200 == 0) {
            printf("step %4d  loss %.4f\n", s + 1, running / 200);
            running = 0;
        }
        yg_release(loss);
        yg_release(logit);
        yg_release(x);
        yg_release(label);
    }

    /* Accuracy on 20 fresh batches, without recording. */
    int correct = 0;
    bool prev = yg_set_grad_enabled(false);
    for (int r = 0; r < 20; r++) {
        yg_tensor *x = NULL, *label = NULL, *logit;
        make_batch(&x, &label);
        logit = forward(&m, x);
        const float *lv = yg_tensor_data(logit), *yv = yg_tensor_data(label);
        for (int i = 0; i < BATCH; i++)
            correct += (lv[i] > 0) == (yv[i] > 0.5f);
        yg_release(logit);
        yg_release(x);
        yg_release(label);
    }
    yg_set_grad_enabled(prev);
    printf("accuracy: %.3f\n", (double)correct / (20 * BATCH));

    yg_optimizer_release(opt);
    for (int i = 0; i < 6; i++)
        yg_release(params[i]);
    return 0;
}
