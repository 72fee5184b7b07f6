/*
 * export_onnx.c - traces three models and exports each as an ONNX file
 * (yagrad/onnx.h) that onnxruntime and other ONNX runtimes load:
 *
 *   mlp.onnx        the MLP of train_mlp.c: linear(2 -> 64) -> relu ->
 *                   linear(64 -> 64) -> relu -> linear(64 -> 3)
 *   cnn.onnx        the ConvNet of train_cnn.c, in evaluation mode:
 *                   2 x [conv 3x3 -> batch_norm -> relu -> max_pool 2]
 *                   -> flatten -> linear(784 -> 6)
 *   lstm_cell.onnx  one LSTM cell step, input 32, hidden 64
 *
 * The weights are freshly initialised (seeded), not trained: the point is
 * the export.  Each model's batch dimension is exported as a dynamic axis
 * "batch", so the files run at any batch size.  Prints one summary line
 * per model (ONNX nodes, initializers, opset, bytes).
 * Usage: export_onnx [DIR]   (default: the current directory)
 */
#include "yagrad/yagrad.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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

/* A float32 tensor of uniform values in [-bound, bound) (+ offset). */
static yg_tensor *uniform_tensor(const int64_t *sizes, int64_t ndim, double bound, double offset) {
    int64_t n = 1;
    for (int64_t d = 0; d < ndim; d++)
        n *= sizes[d];
    float *v = malloc((size_t)n * sizeof *v);
    if (v == NULL)
        exit(1);
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)(offset + bound * (2 * uniform() - 1));
    yg_tensor *t = NULL;
    CHECK(yg_tensor_from_data(v, sizes, ndim, YG_FLOAT32, &t));
    free(v);
    return t;
}

typedef struct weights {
    yg_tensor *w[16];
    int n;
} weights;

static yg_tensor *add(weights *m, yg_tensor *t) {
    m->w[m->n++] = t;
    return t;
}

static void weights_release(weights *m) {
    for (int i = 0; i < m->n; i++)
        yg_release(m->w[i]);
}

/* ---- the models, as functions yg_trace records ---- */

static yg_status
mlp(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    yg_tensor *const *w = ((weights *)ctx)->w;
    yg_tensor *h1 = NULL, *r1 = NULL, *h2 = NULL, *r2 = NULL;
    (void)n_in;
    (void)n_out;
    yg_status st = yg_linear(in[0], w[0], w[1], &h1);
    if (st == YG_OK)
        st = yg_relu(h1, &r1);
    if (st == YG_OK)
        st = yg_linear(r1, w[2], w[3], &h2);
    if (st == YG_OK)
        st = yg_relu(h2, &r2);
    if (st == YG_OK)
        st = yg_linear(r2, w[4], w[5], &out[0]);
    yg_release(h1);
    yg_release(r1);
    yg_release(h2);
    yg_release(r2);
    return st;
}

/* conv (no bias) -> batch_norm (evaluation) -> relu -> max_pool 2, with
 * weights w[0..4]: conv weight, bn weight, bn bias, running mean, var. */
static yg_status block(yg_tensor *const *w, const yg_tensor *x, yg_tensor **out) {
    const int64_t one[] = {1, 1}, two[] = {2, 2}, zero[] = {0, 0};
    yg_tensor *c = NULL, *n = NULL, *r = NULL;
    yg_status st = yg_conv2d(x, w[0], NULL, one, 2, one, 2, one, 2, 1, &c);
    if (st == YG_OK)
        st = yg_batch_norm(c, w[1], w[2], w[3], w[4], false, 0.1, 1e-5, &n);
    if (st == YG_OK)
        st = yg_relu(n, &r);
    if (st == YG_OK)
        st = yg_max_pool2d(r, two, 2, two, 2, zero, 2, one, 2, false, out);
    yg_release(c);
    yg_release(n);
    yg_release(r);
    return st;
}

static yg_status
cnn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    yg_tensor *const *w = ((weights *)ctx)->w;
    yg_tensor *h1 = NULL, *h2 = NULL, *flat = NULL;
    (void)n_in;
    (void)n_out;
    yg_status st = block(w, in[0], &h1);
    if (st == YG_OK)
        st = block(w + 5, h1, &h2);
    if (st == YG_OK)
        st = yg_flatten(h2, 1, -1, &flat);
    if (st == YG_OK)
        st = yg_linear(flat, w[10], w[11], &out[0]);
    yg_release(h1);
    yg_release(h2);
    yg_release(flat);
    return st;
}

static yg_status
lstm(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    yg_tensor *const *w = ((weights *)ctx)->w;
    (void)n_in;
    (void)n_out;
    return yg_lstm_cell(in[0], in[1], in[2], w[0], w[1], w[2], w[3], &out[0], &out[1]);
}

/* Traces fn on the example inputs and exports it to dir/name.onnx with
 * a dynamic batch on every input and output. */
static void export_model(const char *dir,
                         const char *name,
                         yg_trace_fn fn,
                         weights *w,
                         yg_tensor *const *inputs,
                         int n_in,
                         const char *const *in_names,
                         const char *const *out_names,
                         int n_out) {
    yg_trace_result *r = NULL;
    yg_onnx_dynamic_axis axes[8];
    yg_onnx_summary s = {0};
    char path[1024];
    int n_axes = 0;

    for (int i = 0; i < n_in; i++)
        axes[n_axes++] = (yg_onnx_dynamic_axis){false, i, 0, "batch"};
    for (int i = 0; i < n_out; i++)
        axes[n_axes++] = (yg_onnx_dynamic_axis){true, i, 0, "batch"};
    CHECK(yg_trace(fn, w, inputs, n_in, n_out, NULL, &r));
    yg_onnx_options o = {.input_names = in_names,
                         .n_input_names = n_in,
                         .output_names = out_names,
                         .n_output_names = n_out,
                         .dynamic_axes = axes,
                         .n_dynamic_axes = n_axes,
                         .producer_name = "yagrad examples/export_onnx",
                         .doc_string = name,
                         .summary = &s};
    snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
    CHECK(yg_onnx_export(r->graph, r->params, r->n_params, &o, path));
    printf("%-16s %3lld graph nodes -> %3lld ONNX nodes, %2lld initializers, %lld inputs, "
           "%lld outputs, opset %d, %zu bytes\n",
           path,
           (long long)yg_graph_num_nodes(r->graph),
           (long long)s.n_nodes,
           (long long)s.n_initializers,
           (long long)s.n_inputs,
           (long long)s.n_outputs,
           (int)s.opset,
           s.n_bytes);
    yg_trace_result_release(r);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    weights m = {0}, c = {0}, l = {0};
    yg_tensor *x[3] = {NULL};

    /* MLP: PyTorch's default bound 1/sqrt(fan_in) for weights and biases. */
    add(&m, uniform_tensor((const int64_t[]){64, 2}, 2, 1 / sqrt(2.0), 0));
    add(&m, uniform_tensor((const int64_t[]){64}, 1, 1 / sqrt(2.0), 0));
    add(&m, uniform_tensor((const int64_t[]){64, 64}, 2, 0.125, 0));
    add(&m, uniform_tensor((const int64_t[]){64}, 1, 0.125, 0));
    add(&m, uniform_tensor((const int64_t[]){3, 64}, 2, 0.125, 0));
    add(&m, uniform_tensor((const int64_t[]){3}, 1, 0.125, 0));
    x[0] = uniform_tensor((const int64_t[]){32, 2}, 2, 1, 0);
    export_model(dir,
                 "mlp",
                 mlp,
                 &m,
                 x,
                 1,
                 (const char *const[]){"points"},
                 (const char *const[]){"logits"},
                 1);
    yg_release(x[0]);

    for (int b = 0; b < 2; b++) {
        int64_t cin = b == 0 ? 1 : 8, cout = b == 0 ? 8 : 16;
        add(&c,
            uniform_tensor((const int64_t[]){cout, cin, 3, 3}, 4, 1 / sqrt(9.0 * (double)cin), 0));
        add(&c, uniform_tensor(&cout, 1, 0.1, 1)); /* bn weight near 1 */
        add(&c, uniform_tensor(&cout, 1, 0.1, 0)); /* bn bias near 0 */
        add(&c, uniform_tensor(&cout, 1, 0.1, 0)); /* running mean */
        add(&c, uniform_tensor(&cout, 1, 0.2, 1)); /* running var near 1 */
    }
    add(&c, uniform_tensor((const int64_t[]){6, 784}, 2, 1 / 28.0, 0));
    add(&c, uniform_tensor((const int64_t[]){6}, 1, 1 / 28.0, 0));
    x[0] = uniform_tensor((const int64_t[]){4, 1, 28, 28}, 4, 0.5, 0.5);
    export_model(dir,
                 "cnn",
                 cnn,
                 &c,
                 x,
                 1,
                 (const char *const[]){"images"},
                 (const char *const[]){"logits"},
                 1);
    yg_release(x[0]);

    add(&l, uniform_tensor((const int64_t[]){256, 32}, 2, 0.125, 0));
    add(&l, uniform_tensor((const int64_t[]){256, 64}, 2, 0.125, 0));
    add(&l, uniform_tensor((const int64_t[]){256}, 1, 0.125, 0));
    add(&l, uniform_tensor((const int64_t[]){256}, 1, 0.125, 0));
    x[0] = uniform_tensor((const int64_t[]){8, 32}, 2, 1, 0);
    x[1] = uniform_tensor((const int64_t[]){8, 64}, 2, 1, 0);
    x[2] = uniform_tensor((const int64_t[]){8, 64}, 2, 1, 0);
    export_model(dir,
                 "lstm_cell",
                 lstm,
                 &l,
                 x,
                 3,
                 (const char *const[]){"x", "h", "c"},
                 (const char *const[]){"h_next", "c_next"},
                 2);
    for (int i = 0; i < 3; i++)
        yg_release(x[i]);

    weights_release(&m);
    weights_release(&c);
    weights_release(&l);
    return 0;
}
