/*
 * train_cnn.c - a small ConvNet trained with AdamW to tell six kinds of
 * shape apart in 28x28 images the example draws itself: a filled square,
 * a disc, a triangle, a cross, a horizontal bar and a vertical bar, each
 * at a random position, size and brightness, over Gaussian pixel noise.
 *
 *   block(c_in -> c_out) = max_pool2d(relu(batch_norm(conv2d(x; 3x3, pad 1))), 2)
 *   x [n, 1, 28, 28] -> block(1 -> 8) -> [n, 8, 14, 14]
 *                    -> block(8 -> 16) -> [n, 16, 7, 7]
 *                    -> flatten -> linear(784 -> 6) = logits
 *   loss = cross_entropy(logits, labels)
 *
 * batch_norm runs in training mode (batch statistics, running averages
 * updated in place) while training and in evaluation mode (the running
 * averages) for the held-out accuracy.  The model is kept small on
 * purpose: it trains in seconds on two cores.  Every random number (the
 * images, the initial weights, the minibatch order) comes from one seeded
 * xorshift generator, so a run is reproducible.  Prints the mean loss and
 * the accuracy on the minibatches (as trained, in training mode) after
 * each epoch and ends with the accuracy on held-out images:
 * "accuracy: <value>".  Usage: train_cnn [--device cpu|cuda] [epochs]
 *
 * --device cuda trains on the first GPU: parameters, running statistics,
 * batches and every op of the step (cuDNN convolutions, the pooling and
 * batch_norm kernels, AdamW) stay there; the logits come back to the CPU
 * for argmax_dim, which has no CUDA kernel yet.  Without a usable GPU it
 * says why and exits with status 77 (CTest's skip code).
 */
#include "yagrad/yagrad.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLASSES 6
#define SIDE    28
#define PIXELS  (SIDE * SIDE)
#define TRAIN   1800
#define TEST    600
#define BATCH   50
#define C1      8
#define C2      16
#define FLAT    (C2 * (SIDE / 4) * (SIDE / 4))

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

static uint64_t rng_state = 0x5DEECE66DULL;

/* Where the model trains (--device). */
static yg_device device = YG_CPU;

/* *t moved to the training device (a no-op on the CPU). */
static void to_training_device(yg_tensor **t) {
    yg_tensor *moved = NULL;
    CHECK(yg_tensor_to_device(*t, device, 0, &moved));
    yg_release(*t);
    *t = moved;
}

/* The index of each row's largest logit, on the CPU (argmax_dim has no
 * CUDA kernel yet; the copy of a CUDA logits needs grad mode off). */
static yg_tensor *predictions(const yg_tensor *logits) {
    yg_tensor *host = NULL, *pred = NULL;
    bool prev = yg_set_grad_enabled(false);
    CHECK(yg_tensor_to_device(logits, YG_CPU, 0, &host));
    CHECK(yg_argmax_dim(host, 1, false, &pred));
    yg_set_grad_enabled(prev);
    yg_release(host);
    return pred;
}

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

/* Whether the pixel at offset (dx, dy) from the centre lies inside a shape
 * of class k and half-size s (y grows downwards). */
static bool inside(int k, double dx, double dy, double s) {
    double adx = fabs(dx), ady = fabs(dy), arm = s / 3;
    switch (k) {
    case 0: /* filled square */
        return adx <= s && ady <= s;
    case 1: /* disc */
        return dx * dx + dy * dy <= s * s;
    case 2: /* triangle, apex up */
        return ady <= s && adx <= (dy + s) / 2;
    case 3: /* cross */
        return (adx <= s && ady <= arm) || (ady <= s && adx <= arm);
    case 4: /* horizontal bar */
        return adx <= s + 2 && ady <= 1.5;
    default: /* vertical bar */
        return ady <= s + 2 && adx <= 1.5;
    }
}

/* n images with uniformly drawn classes: half-size 5 to 9 pixels, centre
 * up to 4 pixels off the middle, brightness 0.6 to 1, noise sigma 0.2. */
static void make_shapes(int n, float *xs, int64_t *ys) {
    for (int i = 0; i < n; i++) {
        int k = (int)(uniform() * CLASSES) % CLASSES;
        double s = 5 + 4 * uniform(), bright = 0.6 + 0.4 * uniform();
        double cx = SIDE / 2.0 + 8 * uniform() - 4, cy = SIDE / 2.0 + 8 * uniform() - 4;
        for (int y = 0; y < SIDE; y++)
            for (int x = 0; x < SIDE; x++) {
                double v = inside(k, x + 0.5 - cx, y + 0.5 - cy, s) ? bright : 0;
                xs[(size_t)i * PIXELS + (size_t)(y * SIDE + x)] = (float)(v + 0.2 * normal());
            }
        ys[i] = k;
    }
}

/* A parameter of sizes[0..ndim) with values uniform in [-bound, bound). */
static yg_tensor *param(const int64_t *sizes, int64_t ndim, double bound) {
    int64_t n = 1;
    for (int64_t d = 0; d < ndim; d++)
        n *= sizes[d];
    float *v = malloc((size_t)n * sizeof *v);
    yg_tensor *t = NULL;
    if (v == NULL) {
        fprintf(stderr, "train_cnn: out of memory\n");
        exit(1);
    }
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)((2 * uniform() - 1) * bound);
    CHECK(yg_tensor_from_data(v, sizes, ndim, YG_FLOAT32, &t));
    to_training_device(&t);
    CHECK(yg_tensor_set_requires_grad(t, true));
    free(v);
    return t;
}

/* A [c] parameter filled with value (batch_norm's weight and bias). */
static yg_tensor *filled(int64_t c, double value) {
    yg_tensor *t = NULL;
    CHECK(yg_tensor_full(&c, 1, value, YG_FLOAT32, &t));
    to_training_device(&t);
    CHECK(yg_tensor_set_requires_grad(t, true));
    return t;
}

/* conv2d (no bias: batch_norm's shift takes its place) -> batch_norm ->
 * relu -> max_pool2d, with its running statistics. */
typedef struct block {
    yg_tensor *conv_w, *bn_w, *bn_b, *running_mean, *running_var;
} block;

static block block_create(int64_t c_in, int64_t c_out) {
    const int64_t w_sizes[] = {c_out, c_in, 3, 3};
    block b;
    b.conv_w = param(w_sizes, 4, 1 / sqrt((double)(c_in * 9))); /* PyTorch's default bound */
    b.bn_w = filled(c_out, 1);
    b.bn_b = filled(c_out, 0);
    CHECK(yg_tensor_zeros(&c_out, 1, YG_FLOAT32, &b.running_mean));
    CHECK(yg_tensor_full(&c_out, 1, 1, YG_FLOAT32, &b.running_var));
    to_training_device(&b.running_mean);
    to_training_device(&b.running_var);
    return b;
}

static void block_release(block *b) {
    yg_release(b->conv_w);
    yg_release(b->bn_w);
    yg_release(b->bn_b);
    yg_release(b->running_mean);
    yg_release(b->running_var);
}

/* The block applied to x, as a new reference. */
static yg_tensor *block_forward(const block *b, const yg_tensor *x, bool training) {
    const int64_t two[] = {2, 2};
    yg_tensor *c = NULL, *n = NULL, *r = NULL, *p = NULL;
    /* The short forms (yagrad/options.h): only what differs from the
     * defaults (stride 1, no dilation, momentum 0.1, eps 1e-5, stride =
     * kernel size). */
    CHECK(yg_conv2d_opt(x, b->conv_w, &(yg_conv2d_options){.padding = YG_INTS(1, 1)}, &c));
    CHECK(yg_batch_norm_opt(c,
                            &(yg_batch_norm_options){.weight = b->bn_w,
                                                     .bias = b->bn_b,
                                                     .running_mean = b->running_mean,
                                                     .running_var = b->running_var,
                                                     .training = YG_SET(training)},
                            &n));
    CHECK(yg_relu(n, &r));
    CHECK(yg_max_pool2d_opt(r, two, 2, NULL, &p));
    yg_release(c);
    yg_release(n);
    yg_release(r);
    return p;
}

typedef struct model {
    block b1, b2;
    yg_tensor *fc_w, *fc_b;
} model;

/* logits of x [n, 1, SIDE, SIDE] as a new reference. */
static yg_tensor *forward(const model *m, const yg_tensor *x, bool training) {
    yg_tensor *h1 = block_forward(&m->b1, x, training);
    yg_tensor *h2 = block_forward(&m->b2, h1, training);
    yg_tensor *flat = NULL, *logits = NULL;
    CHECK(yg_flatten(h2, 1, -1, &flat));
    CHECK(yg_linear(flat, m->fc_w, m->fc_b, &logits));
    yg_release(h1);
    yg_release(h2);
    yg_release(flat);
    return logits;
}

/* The fraction of the n images xs the model (in evaluation mode) labels
 * as ys, classified BATCH at a time. */
static double accuracy(const model *m, const float *xs, const int64_t *ys, int n) {
    int correct = 0;
    bool prev = yg_set_grad_enabled(false);
    for (int start = 0; start < n; start += BATCH) {
        int len = n - start < BATCH ? n - start : BATCH;
        const int64_t xsz[] = {len, 1, SIDE, SIDE};
        yg_tensor *x = NULL, *logits, *pred;
        CHECK(yg_tensor_from_data(xs + (size_t)start * PIXELS, xsz, 4, YG_FLOAT32, &x));
        to_training_device(&x);
        logits = forward(m, x, false);
        pred = predictions(logits);
        const int64_t *p = yg_tensor_data(pred);
        for (int i = 0; i < len; i++)
            correct += p[i] == ys[start + i];
        yg_release(pred);
        yg_release(logits);
        yg_release(x);
    }
    yg_set_grad_enabled(prev);
    return (double)correct / n;
}

/* A new random order of 0..n-1 in order[] (Fisher-Yates). */
static void shuffle(int *order, int n) {
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(uniform() * (i + 1)) % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

int main(int argc, char **argv) {
    int epochs = 6;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            const char *d = argv[++i];
            if (strcmp(d, "cuda") != 0 && strcmp(d, "cpu") != 0) {
                fprintf(stderr, "train_cnn: --device must be cpu or cuda, not %s\n", d);
                return 2;
            }
            device = strcmp(d, "cuda") == 0 ? YG_CUDA : YG_CPU;
        } else {
            epochs = atoi(argv[i]);
        }
    }
    if (device == YG_CUDA && yg_cuda_check() != YG_OK) {
        printf("train_cnn: cannot train on cuda: %s\n", yg_last_error());
        return 77;
    }
    float *xs = malloc(sizeof(float) * TRAIN * PIXELS),
          *txs = malloc(sizeof(float) * TEST * PIXELS);
    float *bx = malloc(sizeof(float) * BATCH * PIXELS);
    int64_t *ys = malloc(sizeof(int64_t) * TRAIN), *tys = malloc(sizeof(int64_t) * TEST);
    int64_t by[BATCH];
    int *order = malloc(sizeof(int) * TRAIN);
    const int64_t fc_sizes[] = {CLASSES, FLAT}, fc_b_sizes[] = {CLASSES};
    model m;
    yg_optimizer *opt = NULL;
    yg_adam_options o = yg_adam_options_default();

    if (xs == NULL || txs == NULL || bx == NULL || ys == NULL || tys == NULL || order == NULL) {
        fprintf(stderr, "train_cnn: out of memory\n");
        return 1;
    }
    make_shapes(TRAIN, xs, ys);
    make_shapes(TEST, txs, tys);
    for (int i = 0; i < TRAIN; i++)
        order[i] = i;

    m.b1 = block_create(1, C1);
    m.b2 = block_create(C1, C2);
    m.fc_w = param(fc_sizes, 2, 1 / sqrt((double)FLAT));
    m.fc_b = param(fc_b_sizes, 1, 1 / sqrt((double)FLAT));
    yg_tensor *params[] = {
        m.b1.conv_w, m.b1.bn_w, m.b1.bn_b, m.b2.conv_w, m.b2.bn_w, m.b2.bn_b, m.fc_w, m.fc_b};
    const int n_params = (int)(sizeof params / sizeof params[0]);
    o.lr = 3e-3;
    o.weight_decay = 1e-2;
    CHECK(yg_optimizer_create_adamw(params, n_params, &o, &opt));

    for (int e = 0; e < epochs; e++) {
        double total = 0;
        int correct = 0;
        shuffle(order, TRAIN);
        for (int b = 0; b < TRAIN / BATCH; b++) {
            const int64_t xsz[] = {BATCH, 1, SIDE, SIDE}, ysz[] = {BATCH};
            yg_tensor *x = NULL, *y = NULL, *logits, *loss = NULL, *pred;
            double l;
            for (int i = 0; i < BATCH; i++) {
                int src = order[b * BATCH + i];
                memcpy(bx + (size_t)i * PIXELS, xs + (size_t)src * PIXELS, sizeof(float) * PIXELS);
                by[i] = ys[src];
            }
            CHECK(yg_tensor_from_data(bx, xsz, 4, YG_FLOAT32, &x));
            CHECK(yg_tensor_from_data(by, ysz, 1, YG_INT64, &y));
            to_training_device(&x);
            to_training_device(&y);
            logits = forward(&m, x, true);
            CHECK(yg_cross_entropy_opt(logits, y, NULL, &loss)); /* mean, no weights */
            CHECK(yg_backward(loss, NULL, false));
            CHECK(yg_optimizer_step(opt));
            yg_optimizer_zero_grad(opt);
            CHECK(yg_tensor_item(loss, &l));
            total += l;
            pred = predictions(logits);
            const int64_t *p = yg_tensor_data(pred);
            for (int i = 0; i < BATCH; i++)
                correct += p[i] == by[i];
            yg_release(pred);
            yg_release(loss);
            yg_release(logits);
            yg_release(x);
            yg_release(y);
        }
        printf("epoch %d  loss %.4f  train accuracy %.3f\n",
               e + 1,
               total / (TRAIN / BATCH),
               (double)correct / TRAIN);
    }
    printf("trained on %s\n", device == YG_CUDA ? "cuda:0" : "cpu");
    printf("accuracy: %.3f\n", accuracy(&m, txs, tys, TEST));

    yg_optimizer_release(opt);
    block_release(&m.b1);
    block_release(&m.b2);
    yg_release(m.fc_w);
    yg_release(m.fc_b);
    free(order);
    free(tys);
    free(ys);
    free(bx);
    free(txs);
    free(xs);
    return 0;
}
