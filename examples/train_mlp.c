/*
 * train_mlp.c - the main example: a two-hidden-layer MLP learns to tell
 * three interleaved spirals apart, trained with minibatch SGD (momentum)
 * through yagrad's autograd.
 *
 *   linear(2 -> 64) -> relu -> linear(64 -> 64) -> relu -> linear(64 -> 3)
 *   loss = nll_loss(log_softmax(logits, 1), labels)
 *
 * Prints the loss and training accuracy after each epoch and ends with
 * "accuracy: <value>".  Usage: train_mlp [--ddp] [--device cpu|cuda] [epochs]
 *
 * --device cuda trains on the first GPU: parameters, batches and every
 * op of the step live there (the data is made on the CPU and copied
 * over).  Without a usable GPU it says why and exits with status 77.
 *
 * --ddp trains data-parallel (yagrad/distributed.h) under mpirun:
 *   mpirun -np 2 build/dev/examples/train_mlp --ddp
 * (with --device cuda over NCCL, each rank on the GPU of its local rank).
 * Each rank takes its share of every epoch's shuffled points (the
 * distributed sampler), the global batch of BATCH points is split
 * across the ranks, yg_ddp averages the gradients, and rank 0 prints
 * (its own shard's loss, and the accuracy on all points).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "yagrad/yagrad.h"

#define CLASSES 3
#define PER_CLASS 200
#define N_POINTS (CLASSES * PER_CLASS)
#define HIDDEN 64
#define BATCH 32

/* Example code: stop on the first failure, saying why. */
#define CHECK(expr)                                                                                \
    do {                                                                                           \
        yg_status st_ = (expr);                                                                    \
        if (st_ != YG_OK) {                                                                        \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, yg_status_name(st_),            \
                    yg_last_error());                                                              \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

static double uniform(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static double normal(void)
{
    double u1 = uniform() + 1e-12, u2 = uniform();
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Three spirals, as in CS231n: class k sweeps angle [4k, 4k + 4]. */
static void make_spirals(float *xs, int64_t *ys)
{
    for (int k = 0; k < CLASSES; k++) {
        for (int i = 0; i < PER_CLASS; i++) {
            double r = (double)i / (PER_CLASS - 1);
            double t = 4.0 * k + 4.0 * r + 0.2 * normal();
            int n = k * PER_CLASS + i;
            xs[2 * n] = (float)(r * sin(t));
            xs[2 * n + 1] = (float)(r * cos(t));
            ys[n] = k;
        }
    }
}

typedef struct layer {
    yg_tensor *weight, *bias;     /* parameters, require grad */
    yg_tensor *v_weight, *v_bias; /* momentum buffers */
} layer;

/* Where the model trains (--device; with --ddp on a GPU, the device of
 * this rank's NCCL communicator). */
static yg_device device = YG_CPU;
static int device_index = 0;

/* *t moved to the training device (a no-op on the CPU). */
static void to_training_device(yg_tensor **t)
{
    yg_tensor *moved = NULL;
    CHECK(yg_tensor_to_device(*t, device, device_index, &moved));
    yg_release(*t);
    *t = moved;
}

static yg_tensor *param(int64_t rows, int64_t cols, double bound)
{
    int64_t sizes[2] = {rows, cols};
    int64_t n = rows * cols;
    float *v = malloc((size_t)n * sizeof *v);
    yg_tensor *t = NULL;
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)((2 * uniform() - 1) * bound);
    CHECK(yg_tensor_from_data(v, sizes, cols > 0 ? 2 : 1, YG_FLOAT32, &t));
    to_training_device(&t);
    CHECK(yg_tensor_set_requires_grad(t, true));
    free(v);
    return t;
}

static void layer_init(layer *l, int64_t in, int64_t out)
{
    double bound = sqrt(6.0 / (double)in); /* He uniform, for relu */
    int64_t bsize[1] = {out};
    l->weight = param(out, in, bound);
    CHECK(yg_tensor_zeros(bsize, 1, YG_FLOAT32, &l->bias));
    to_training_device(&l->bias);
    CHECK(yg_tensor_set_requires_grad(l->bias, true));
    l->v_weight = NULL;
    l->v_bias = NULL;
}

static void layer_free(layer *l)
{
    yg_release(l->weight);
    yg_release(l->bias);
    yg_release(l->v_weight);
    yg_release(l->v_bias);
}

/* logits = net(x); every intermediate released as soon as it is used. */
static yg_tensor *forward(layer *net, const yg_tensor *x)
{
    yg_tensor *h = NULL, *a = NULL, *cur = yg_retain((yg_tensor *)x);
    for (int i = 0; i < 3; i++) {
        CHECK(yg_linear(cur, net[i].weight, net[i].bias, &h));
        yg_release(cur);
        if (i == 2)
            return h;
        CHECK(yg_relu(h, &a));
        yg_release(h);
        cur = a;
    }
    return NULL;
}

/* v = momentum * v + grad; p -= lr * v; runs with grad mode off. */
static void sgd_step(yg_tensor *p, yg_tensor **v, double lr, double momentum)
{
    yg_tensor *g = NULL, *scaled = NULL, *nv = NULL, *same = NULL;
    CHECK(yg_tensor_grad(p, &g));
    if (g == NULL)
        return;
    if (*v == NULL) {
        nv = yg_retain(g);
    } else {
        CHECK(yg_mul_scalar(*v, momentum, &scaled));
        CHECK(yg_add(scaled, g, 1.0, &nv));
    }
    CHECK(yg_add_(p, nv, -lr, &same));
    yg_release(same);
    yg_release(scaled);
    yg_release(g);
    yg_release(*v);
    *v = nv;
    yg_tensor_zero_grad(p);
}

static double accuracy(layer *net, const yg_tensor *x, const int64_t *ys)
{
    bool prev = yg_set_grad_enabled(false);
    yg_tensor *logits = forward(net, x), *host = NULL;
    CHECK(yg_tensor_to_device(logits, YG_CPU, 0, &host)); /* logits itself on the CPU */
    const float *l = yg_tensor_data(host);
    int correct = 0;
    for (int n = 0; n < N_POINTS; n++) {
        int best = 0;
        for (int k = 1; k < CLASSES; k++)
            if (l[n * CLASSES + k] > l[n * CLASSES + best])
                best = k;
        correct += best == ys[n];
    }
    yg_release(host);
    yg_release(logits);
    yg_set_grad_enabled(prev);
    return (double)correct / N_POINTS;
}

/* Data-parallel state: NULL pg when training alone. */
typedef struct ddp_run {
    yg_process_group *pg;
    yg_ddp *ddp;
    int rank, world;
} ddp_run;

/* Joins the job's process group: MPI on the CPU, NCCL on GPUs (each
 * rank on the GPU its local rank picks). */
static void ddp_join(ddp_run *run)
{
    yg_process_group_options o = {.backend = device == YG_CUDA ? YG_DIST_NCCL : YG_DIST_MPI};
    CHECK(yg_process_group_create(&o, &run->pg));
    if (device == YG_CUDA)
        device_index = yg_process_group_cuda_device(run->pg);
    run->rank = yg_process_group_rank(run->pg);
    run->world = yg_process_group_world_size(run->pg);
    if (BATCH % run->world != 0) {
        fprintf(stderr, "train_mlp --ddp: the batch of %d must split evenly over %d ranks\n",
                BATCH, run->world);
        exit(1);
    }
}

static void ddp_start(ddp_run *run, layer *net)
{
    yg_tensor *params[6];
    for (int l = 0; l < 3; l++) {
        params[2 * l] = net[l].weight;
        params[2 * l + 1] = net[l].bias;
    }
    /* Rank 0's initial parameters are copied to every rank here. */
    CHECK(yg_ddp_create(run->pg, params, 6, NULL, &run->ddp));
}

/* This epoch's points for this rank: all of them shuffled when alone,
 * else the rank's shard of one shuffle common to all ranks. */
static int epoch_order(const ddp_run *run, int epoch, int *order)
{
    int64_t idx[N_POINTS];
    int64_t len = yg_distributed_sampler_len(N_POINTS, run->world);
    CHECK(yg_distributed_sampler_indices(N_POINTS, run->world, run->rank, 1234, epoch, true, idx,
                                         len));
    for (int64_t i = 0; i < len; i++)
        order[i] = (int)idx[i];
    return (int)len;
}

int main(int argc, char **argv)
{
    bool use_ddp = false;
    int epochs = 60;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--ddp") == 0) {
            use_ddp = true;
        } else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            const char *d = argv[++i];
            if (strcmp(d, "cuda") != 0 && strcmp(d, "cpu") != 0) {
                fprintf(stderr, "train_mlp: --device must be cpu or cuda, not %s\n", d);
                return 2;
            }
            device = strcmp(d, "cuda") == 0 ? YG_CUDA : YG_CPU;
        } else {
            epochs = atoi(argv[i]);
        }
    }
    if (device == YG_CUDA && yg_cuda_check() != YG_OK) {
        printf("train_mlp: cannot train on cuda: %s\n", yg_last_error());
        return 77;
    }
    int batch = BATCH, n_local = N_POINTS;
    ddp_run run = {NULL, NULL, 0, 1};
    static float xs[N_POINTS * 2];
    static int64_t ys[N_POINTS];
    int order[N_POINTS];
    int64_t all_sizes[2] = {N_POINTS, 2};
    yg_tensor *x_all = NULL;
    layer net[3];
    double acc = 0, lr = 0.05, momentum = 0.9;
    struct timespec t0, t1;

    if (use_ddp)
        ddp_join(&run);
    make_spirals(xs, ys);
    CHECK(yg_tensor_from_data(xs, all_sizes, 2, YG_FLOAT32, &x_all));
    to_training_device(&x_all);
    layer_init(&net[0], 2, HIDDEN);
    layer_init(&net[1], HIDDEN, HIDDEN);
    layer_init(&net[2], HIDDEN, CLASSES);
    for (int i = 0; i < N_POINTS; i++)
        order[i] = i;
    if (use_ddp) {
        ddp_start(&run, net);
        batch = BATCH / run.world;
    }

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int epoch = 1; epoch <= epochs; epoch++) {
        double loss_sum = 0;
        int batches = 0;
        if (use_ddp) {
            n_local = epoch_order(&run, epoch, order);
        } else {
            for (int i = N_POINTS - 1; i > 0; i--) { /* shuffle */
                int j = (int)(uniform() * (i + 1)), tmp = order[i];
                order[i] = order[j];
                order[j] = tmp;
            }
        }
        for (int start = 0; start + batch <= n_local; start += batch) {
            float bx[BATCH * 2];
            int64_t by[BATCH], bxs[2] = {batch, 2}, bys[1] = {batch};
            yg_tensor *x = NULL, *y = NULL, *logits, *logp = NULL, *loss = NULL;
            double loss_value;
            for (int b = 0; b < batch; b++) {
                int n = order[start + b];
                bx[2 * b] = xs[2 * n];
                bx[2 * b + 1] = xs[2 * n + 1];
                by[b] = ys[n];
            }
            CHECK(yg_tensor_from_data(bx, bxs, 2, YG_FLOAT32, &x));
            CHECK(yg_tensor_from_data(by, bys, 1, YG_INT64, &y));
            to_training_device(&x);
            to_training_device(&y);
            logits = forward(net, x);
            CHECK(yg_log_softmax(logits, 1, &logp));
            CHECK(yg_nll_loss(logp, y, NULL, YG_REDUCTION_MEAN, -100, &loss));
            CHECK(yg_tensor_item(loss, &loss_value));
            CHECK(yg_backward(loss, NULL, false));
            if (use_ddp) /* waits for the buckets backward started; averages */
                CHECK(yg_ddp_finish(run.ddp));
            {
                bool prev = yg_set_grad_enabled(false);
                for (int l = 0; l < 3; l++) {
                    sgd_step(net[l].weight, &net[l].v_weight, lr, momentum);
                    sgd_step(net[l].bias, &net[l].v_bias, lr, momentum);
                }
                yg_set_grad_enabled(prev);
            }
            loss_sum += loss_value;
            batches++;
            yg_release(loss);
            yg_release(logp);
            yg_release(logits);
            yg_release(x);
            yg_release(y);
        }
        acc = accuracy(net, x_all, ys);
        if (run.rank == 0)
            printf("epoch %3d/%d  loss %.4f  train accuracy %.4f\n", epoch, epochs,
               loss_sum / batches, acc);
        fflush(stdout);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (run.rank == 0)
        printf("trained %d epochs in %.2f s on %d rank(s), %s\n", epochs,
               (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec),
               run.world, device == YG_CUDA ? "cuda:0" : "cpu");
    for (int l = 0; l < 3; l++)
        layer_free(&net[l]);
    yg_release(x_all);
    yg_ddp_release(run.ddp);
    yg_process_group_release(run.pg);
    if (run.rank == 0)
        printf("accuracy: %.4f\n", acc);
    return 0;
}
