/*
 * classify_blobs.c - a classifier trained with cross_entropy and AdamW:
 * five Gaussian blobs in 8 dimensions, with overlapping tails, told
 * apart by a small residual MLP.
 *
 *   h = gelu(layer_norm(linear(x; 8 -> 32)))
 *   logits = linear(h; 32 -> 5)
 *   loss = cross_entropy(logits, labels)      (log_softmax + nll_loss)
 *
 * The optimizer (yagrad/optim.h) owns the update: after each backward,
 * yg_optimizer_step applies AdamW to every parameter in place and
 * yg_optimizer_zero_grad clears the gradients for the next minibatch.
 * Prints the loss every few epochs and ends with the accuracy on a held
 * out set: "accuracy: <value>".  Usage: classify_blobs [epochs]
 */
#include "yagrad/yagrad.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CLASSES 5
#define DIM     8
#define HIDDEN  32
#define TRAIN   1000
#define TEST    500
#define BATCH   50

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

static uint64_t rng_state = 0x2545F4914F6CDD1DULL;

static double uniform(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static double normal(void) {
    double u1 = uniform() + 1e-12, u2 = uniform();
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

/* n points: class k is a unit Gaussian around centers[k]. */
static void make_blobs(double centers[CLASSES][DIM], int n, float *xs, int64_t *ys) {
    for (int i = 0; i < n; i++) {
        int k = (int)(uniform() * CLASSES) % CLASSES;
        for (int d = 0; d < DIM; d++)
            xs[i * DIM + d] = (float)(centers[k][d] + normal());
        ys[i] = k;
    }
}

/* A parameter of sizes [rows, cols] (or [rows] when cols is 0) with
 * values uniform in [-bound, bound). */
static yg_tensor *param(int64_t rows, int64_t cols, double bound) {
    int64_t sizes[2] = {rows, cols};
    int64_t n = cols > 0 ? rows * cols : rows;
    float *v = malloc((size_t)n * sizeof *v);
    yg_tensor *t = NULL;
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)((2 * uniform() - 1) * bound);
    CHECK(yg_tensor_from_data(v, sizes, cols > 0 ? 2 : 1, YG_FLOAT32, &t));
    CHECK(yg_tensor_set_requires_grad(t, true));
    free(v);
    return t;
}

typedef struct model {
    yg_tensor *w1, *b1, *ln_w, *ln_b, *w2, *b2;
} model;

/* logits of x [n, DIM] as a new reference. */
static yg_tensor *forward(const model *m, const yg_tensor *x) {
    const int64_t hidden[] = {HIDDEN};
    yg_tensor *h = NULL, *n = NULL, *a = NULL, *logits = NULL;
    CHECK(yg_linear(x, m->w1, m->b1, &h));
    CHECK(yg_layer_norm(h, hidden, 1, m->ln_w, m->ln_b, 1e-5, &n));
    CHECK(yg_gelu(n, &a));
    CHECK(yg_linear(a, m->w2, m->b2, &logits));
    yg_release(h);
    yg_release(n);
    yg_release(a);
    return logits;
}

static double accuracy(const model *m, const float *xs, const int64_t *ys, int n) {
    const int64_t xsz[] = {n, DIM};
    yg_tensor *x = NULL, *logits = NULL, *pred = NULL;
    int64_t *p;
    int correct = 0;
    bool prev = yg_set_grad_enabled(false);
    CHECK(yg_tensor_from_data(xs, xsz, 2, YG_FLOAT32, &x));
    logits = forward(m, x);
    CHECK(yg_argmax_dim(logits, 1, false, &pred));
    p = yg_tensor_data(pred);
    for (int i = 0; i < n; i++)
        correct += p[i] == ys[i];
    yg_set_grad_enabled(prev);
    yg_release(pred);
    yg_release(logits);
    yg_release(x);
    return (double)correct / n;
}

int main(int argc, char **argv) {
    int epochs = argc > 1 ? atoi(argv[1]) : 30;
    double centers[CLASSES][DIM];
    float *xs = malloc(sizeof(float) * TRAIN * DIM), *txs = malloc(sizeof(float) * TEST * DIM);
    int64_t ys[TRAIN], tys[TEST];
    const int64_t one[] = {HIDDEN};
    model m;
    yg_optimizer *opt = NULL;
    yg_adam_options o = yg_adam_options_default();

    for (int k = 0; k < CLASSES; k++)
        for (int d = 0; d < DIM; d++)
            centers[k][d] = 0.7 * normal();
    make_blobs(centers, TRAIN, xs, ys);
    make_blobs(centers, TEST, txs, tys);

    m.w1 = param(HIDDEN, DIM, 1 / sqrt(DIM));
    m.b1 = param(HIDDEN, 0, 0);
    CHECK(yg_tensor_full(one, 1, 1, YG_FLOAT32, &m.ln_w));
    CHECK(yg_tensor_set_requires_grad(m.ln_w, true));
    CHECK(yg_tensor_zeros(one, 1, YG_FLOAT32, &m.ln_b));
    CHECK(yg_tensor_set_requires_grad(m.ln_b, true));
    m.w2 = param(CLASSES, HIDDEN, 1 / sqrt(HIDDEN));
    m.b2 = param(CLASSES, 0, 0);
    yg_tensor *params[] = {m.w1, m.b1, m.ln_w, m.ln_b, m.w2, m.b2};
    o.lr = 3e-3;
    o.weight_decay = 1e-2;
    CHECK(yg_optimizer_create_adamw(params, 6, &o, &opt));

    for (int e = 0; e < epochs; e++) {
        double total = 0;
        for (int b = 0; b < TRAIN / BATCH; b++) {
            const int64_t xsz[] = {BATCH, DIM}, ysz[] = {BATCH};
            yg_tensor *x = NULL, *y = NULL, *logits, *loss = NULL;
            double l;
            CHECK(yg_tensor_from_data(xs + b * BATCH * DIM, xsz, 2, YG_FLOAT32, &x));
            CHECK(yg_tensor_from_data(ys + b * BATCH, ysz, 1, YG_INT64, &y));
            logits = forward(&m, x);
            CHECK(yg_cross_entropy_opt(logits, y, NULL, &loss)); /* mean, no weights */
            CHECK(yg_backward(loss, NULL, false));
            CHECK(yg_optimizer_step(opt));
            yg_optimizer_zero_grad(opt);
            CHECK(yg_tensor_item(loss, &l));
            total += l;
            yg_release(loss);
            yg_release(logits);
            yg_release(x);
            yg_release(y);
        }
        if (e % 5 == 4 || e == epochs - 1)
            printf("epoch %2d  loss %.4f\n", e + 1, total / (TRAIN / BATCH));
    }
    printf("train accuracy: %.3f\n", accuracy(&m, xs, ys, TRAIN));
    printf("accuracy: %.3f\n", accuracy(&m, txs, tys, TEST));

    yg_optimizer_release(opt);
    for (int i = 0; i < 6; i++)
        yg_release(params[i]);
    free(xs);
    free(txs);
    return 0;
}
