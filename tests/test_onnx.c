/*
 * test_onnx.c - yg_onnx_export (yagrad/onnx.h): models traced from
 * yagrad code (MLP, LSTM cell, GRU cell, a transformer block, a CNN) and
 * one small graph per exportable op are exported, together with a case
 * file (inputs and yagrad's eager outputs, as JSON) per model.  CTest
 * then runs onnx.checker over them (tests/onnx/check_models.py) and runs
 * them in onnxruntime (tests/onnx/run_ort.js), comparing within 1e-5;
 * models exported with a dynamic batch are run at another batch size
 * than the traced one.  The failure tests assert status, message and
 * that no file is left behind.
 *
 * Files go to $YG_ONNX_OUT (CTest sets it to build/<preset>/tests/onnx_out).
 */
#define _POSIX_C_SOURCE 200809L
#ifdef YG_WITHOUT_ONNX
/* Configured with -DYG_WITH_ONNX=OFF: nothing to test; CTest skips. */
#include <stdio.h>
int main(void);
int main(void) {
    puts("SKIP: built without ONNX (-DYG_WITH_ONNX=OFF)");
    return 77;
}
#else
#include "onnx/onnx.pb-c.h"
#include "onnx/symbolic.h"
#include "testutil.h"
#include "yagrad/onnx.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_activations.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_norms.h"
#include "yagrad/ops_layers.h"
#include "yagrad/ops_convolution.h"
#include "yagrad/ops_pooling.h"
#include "yagrad/ops_creation.h"
#include "yagrad/ops_join_split.h"
#include "yagrad/ops_resampling.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* ---- files ---- */

static const char *out_dir(void) {
    const char *d = getenv("YG_ONNX_OUT");
    if (d == NULL)
        d = "onnx_out";
    mkdir(d, 0755);
    return d;
}

static char *path_of(const char *name, const char *ext) {
    static char buf[4][512];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 512, "%s/%s%s", out_dir(), name, ext);
    return p;
}

static bool file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static const char *dtype_name(yg_dtype d) {
    switch (d) {
    case YG_FLOAT32:
        return "float32";
    case YG_FLOAT64:
        return "float64";
    case YG_INT64:
        return "int64";
    case YG_INT32:
        return "int32";
    case YG_BOOL:
        return "bool";
    default:
        return "unsupported";
    }
}

static void write_tensor(FILE *f, const char *name, const yg_tensor *t) {
    int64_t n = yg_tensor_numel(t);
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    assert_non_null(v);
    YG_CHECK(yg_tensor_to_f64(t, v, n));
    fprintf(f,
            "{\"name\": \"%s\", \"dtype\": \"%s\", \"dims\": [",
            name,
            dtype_name(yg_tensor_dtype(t)));
    for (int64_t d = 0; d < yg_tensor_ndim(t); d++)
        fprintf(f, "%s%lld", d > 0 ? ", " : "", (long long)yg_tensor_sizes(t)[d]);
    fputs("], \"data\": [", f);
    for (int64_t i = 0; i < n; i++) {
        assert_true(isfinite(v[i]));
        fprintf(f, "%s%.17g", i > 0 ? ", " : "", v[i]);
    }
    fputs("]}", f);
    free(v);
}

/* Writes DIR/<name>.json: the inputs ONNX Runtime feeds and the outputs
 * yagrad computed eagerly on them. */
static void write_case(const char *name,
                       const char *const *in_names,
                       yg_tensor *const *ins,
                       int n_in,
                       const char *const *out_names,
                       yg_tensor *const *outs,
                       int n_out) {
    FILE *f = fopen(path_of(name, ".json"), "w");
    assert_non_null(f);
    fputs("{\"atol\": 1e-5, \"rtol\": 1e-5,\n \"inputs\": [", f);
    for (int i = 0; i < n_in; i++) {
        fputs(i > 0 ? ",\n  " : "", f);
        write_tensor(f, in_names[i], ins[i]);
    }
    fputs("],\n \"outputs\": [", f);
    for (int i = 0; i < n_out; i++) {
        fputs(i > 0 ? ",\n  " : "", f);
        write_tensor(f, out_names[i], outs[i]);
    }
    fputs("]}\n", f);
    assert_int_equal(fclose(f), 0);
}

/* ---- traced models ---- */

typedef struct model {
    const char *name;
    yg_trace_fn fn;
    yg_tensor *p[20];
    int n_p;
} model;

static yg_tensor *param(model *m, const int64_t *sizes, int64_t ndim, double lo, double hi) {
    yg_tensor *t = yg_test_rand(YG_FLOAT32, sizes, ndim, lo, hi, 1000 + (uint64_t)m->n_p);
    m->p[m->n_p++] = t;
    return t;
}

static void model_free(model *m) {
    for (int i = 0; i < m->n_p; i++)
        yg_release(m->p[i]);
}

static yg_status
mlp_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    model *m = ctx;
    yg_tensor *h = NULL, *r = NULL;
    (void)n_in;
    (void)n_out;
    yg_status st = yg_linear(in[0], m->p[0], m->p[1], &h);
    if (st == YG_OK)
        st = yg_relu(h, &r);
    if (st == YG_OK)
        st = yg_linear(r, m->p[2], m->p[3], &out[0]);
    yg_release(h);
    yg_release(r);
    return st;
}

static yg_status
lstm_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    model *m = ctx;
    (void)n_in;
    (void)n_out;
    return yg_lstm_cell(in[0], in[1], in[2], m->p[0], m->p[1], m->p[2], m->p[3], &out[0], &out[1]);
}

static yg_status
gru_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    model *m = ctx;
    (void)n_in;
    (void)n_out;
    return yg_gru_cell(in[0], in[1], m->p[0], m->p[1], m->p[2], m->p[3], &out[0]);
}

/* Pre-norm block: x + attn(ln1(x)), then + mlp(ln2(.)) with gelu. */
static yg_status
block_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    model *m = ctx;
    yg_tensor *t[12] = {NULL};
    const int64_t d[1] = {16};
    (void)n_in;
    (void)n_out;
    yg_status st = yg_layer_norm(in[0], d, 1, m->p[0], m->p[1], 1e-5, &t[0]);
    if (st == YG_OK)
        st = yg_linear(t[0], m->p[2], m->p[3], &t[1]);
    if (st == YG_OK)
        st = yg_linear(t[0], m->p[4], m->p[5], &t[2]);
    if (st == YG_OK)
        st = yg_linear(t[0], m->p[6], m->p[7], &t[3]);
    if (st == YG_OK)
        st = yg_scaled_dot_product_attention(t[1], t[2], t[3], NULL, true, NULL, &t[4]);
    if (st == YG_OK)
        st = yg_linear(t[4], m->p[8], m->p[9], &t[5]);
    if (st == YG_OK)
        st = yg_add(in[0], t[5], 1, &t[6]);
    if (st == YG_OK)
        st = yg_layer_norm(t[6], d, 1, m->p[10], m->p[11], 1e-5, &t[7]);
    if (st == YG_OK)
        st = yg_linear(t[7], m->p[12], m->p[13], &t[8]);
    if (st == YG_OK)
        st = yg_gelu(t[8], &t[9]);
    if (st == YG_OK)
        st = yg_linear(t[9], m->p[14], m->p[15], &t[10]);
    if (st == YG_OK)
        st = yg_add(t[6], t[10], 1, &out[0]);
    for (int i = 0; i < 12; i++)
        yg_release(t[i]);
    return st;
}

/* Sizes recorded at the traced batch that must follow another batch:
 * view(x, [batch, 6]) -> linear -> times a [3] row expanded to
 * [batch, 3] (broadcast fusion removes that expand) -> plus a [1, 3] row
 * expanded to [batch, 3] and ones([batch, 3]) (sizes computed from the
 * input's shape) -> unsqueeze ->
 * expand to [batch, 3, 2] (an Expand that keeps the batch dim) -> relu. */
static yg_status
reshape_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    model *m = ctx;
    yg_tensor *t[6] = {NULL}, *row = NULL, *ones = NULL, *sum = NULL, *both = NULL;
    const int64_t b = yg_tensor_size(in[0], 0);
    const int64_t vs[2] = {b, 6}, es[2] = {b, 3}, xs[3] = {b, 3, 2};
    (void)n_in;
    (void)n_out;
    yg_status st = yg_view(in[0], vs, 2, &t[0]);
    if (st == YG_OK)
        st = yg_linear(t[0], m->p[0], NULL, &t[1]);
    if (st == YG_OK)
        st = yg_expand(m->p[1], es, 2, &t[2]);
    if (st == YG_OK)
        st = yg_mul(t[1], t[2], &t[3]);
    if (st == YG_OK) /* a [1, 3] row expanded to [batch, 3]: Expand of a computed size */
        st = yg_expand(m->p[2], es, 2, &row);
    if (st == YG_OK)
        st = yg_ones(es, 2, NULL, NULL, &ones); /* a creation op of [batch, 3] */
    if (st == YG_OK)
        st = yg_add(row, ones, 1, &sum);
    if (st == YG_OK)
        st = yg_add(t[3], sum, 1, &both);
    if (st == YG_OK)
        st = yg_unsqueeze(both, 2, &t[4]);
    if (st == YG_OK)
        st = yg_expand(t[4], xs, 3, &t[5]);
    if (st == YG_OK)
        st = yg_relu(t[5], &out[0]);
    for (int i = 0; i < 6; i++)
        yg_release(t[i]);
    yg_release(row);
    yg_release(ones);
    yg_release(sum);
    yg_release(both);
    return st;
}

/* conv 3x3 -> batch_norm (eval) -> relu -> max_pool 2 -> flatten -> linear */
static yg_status
cnn_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    model *m = ctx;
    yg_tensor *t[5] = {NULL};
    const int64_t one[2] = {1, 1}, k2[2] = {2, 2};
    (void)n_in;
    (void)n_out;
    yg_status st = yg_conv2d(in[0], m->p[0], m->p[1], one, 2, one, 2, one, 2, 1, &t[0]);
    if (st == YG_OK)
        st = yg_batch_norm(t[0], m->p[2], m->p[3], m->p[4], m->p[5], false, 0.1, 1e-5, &t[1]);
    if (st == YG_OK)
        st = yg_relu(t[1], &t[2]);
    if (st == YG_OK)
        st = yg_max_pool2d(t[2], k2, 2, NULL, 0, (const int64_t[]){0}, 1, one, 1, false, &t[3]);
    if (st == YG_OK)
        st = yg_flatten(t[3], 1, -1, &t[4]);
    if (st == YG_OK)
        st = yg_linear(t[4], m->p[6], m->p[7], &out[0]);
    for (int i = 0; i < 5; i++)
        yg_release(t[i]);
    return st;
}

/* How a model is exported and run: its inputs (sizes with the batch at
 * axis 0 and, when seq_axis >= 0, the sequence length at seq_axis; an
 * input with a vocab entry > 0 is int64 token ids below it, else float32
 * in [-1, 1]), names, the traced (batch, length) and the runs. */
typedef struct export_spec {
    const int64_t (*in_sizes)[4];
    const int64_t *in_ndim;
    const int64_t *vocab; /* NULL: every input float32 */
    int n_in; /* at most 8, as n_out */
    const char *const *in_names;
    const char *const *out_names;
    int n_out;
    int seq_axis; /* -1: no sequence axis */
    int64_t trace[2];
    int64_t runs[4][2];
    int n_runs;
    const yg_trace_options *topt;
    const yg_onnx_dynamic_axis *axes; /* NULL: batch (and sequence) as above */
    int n_axes;
} export_spec;

/* Token ids of the given sizes in [0, vocab) from a seed. */
static yg_tensor *token_ids(const int64_t *sizes, int64_t ndim, int64_t vocab, uint64_t seed) {
    int64_t ids[256], n = 1;
    yg_tensor *out = NULL;
    for (int64_t d = 0; d < ndim; d++)
        n *= sizes[d];
    assert_true(n <= 256);
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        ids[i] = (int64_t)((seed >> 33) % (uint64_t)vocab);
    }
    YG_CHECK(yg_tensor_from_data(ids, sizes, ndim, YG_INT64, &out));
    return out;
}

static yg_tensor *spec_input(const export_spec *s, int i, const int64_t bt[2], uint64_t seed) {
    int64_t sizes[4];
    memcpy(sizes, s->in_sizes[i], sizeof sizes);
    sizes[0] = bt[0];
    if (s->seq_axis > 0 && s->seq_axis < s->in_ndim[i])
        sizes[s->seq_axis] = bt[1];
    if (s->vocab != NULL && s->vocab[i] > 0)
        return token_ids(sizes, s->in_ndim[i], s->vocab[i], seed);
    return yg_test_rand(YG_FLOAT32, sizes, s->in_ndim[i], -1, 1, seed);
}

/* Traces m at s->trace, exports it as <name>.onnx with axis 0 of every
 * input and output dynamic ("batch"), and seq_axis too ("sequence"),
 * and writes <name>.json with yagrad's eager outputs at every run. */
static void export_runs(model *m, const export_spec *s) {
    yg_tensor *ins[8] = {NULL};
    yg_trace_result *r = NULL;
    yg_onnx_dynamic_axis axes[16];
    int n_axes = 0;

    for (int i = 0; i < s->n_in; i++)
        ins[i] = spec_input(s, i, s->trace, 7 + (uint64_t)i);
    YG_CHECK(yg_trace(m->fn, m, ins, s->n_in, s->n_out, s->topt, &r));
    for (int i = 0; s->axes == NULL && i < s->n_in + s->n_out; i++) {
        const bool is_out = i >= s->n_in;
        const int64_t k = is_out ? i - s->n_in : i;
        const yg_ir_value *v = is_out ? yg_graph_output(r->graph, k) : NULL;
        const int64_t ndim = is_out ? v->type.ndim : s->in_ndim[i];
        axes[n_axes++] = (yg_onnx_dynamic_axis){is_out, k, 0, "batch"};
        if (s->seq_axis > 0 && s->seq_axis < ndim)
            axes[n_axes++] = (yg_onnx_dynamic_axis){is_out, k, s->seq_axis, "sequence"};
    }
    yg_onnx_options o = {.input_names = s->in_names,
                         .n_input_names = s->n_in,
                         .output_names = s->out_names,
                         .n_output_names = s->n_out,
                         .dynamic_axes = s->axes != NULL ? s->axes : axes,
                         .n_dynamic_axes = s->axes != NULL ? s->n_axes : n_axes,
                         .doc_string = m->name};
    YG_CHECK(yg_onnx_export(r->graph, r->params, r->n_params, &o, path_of(m->name, ".onnx")));
    yg_trace_result_release(r);
    for (int i = 0; i < s->n_in; i++)
        yg_release(ins[i]);

    FILE *f = fopen(path_of(m->name, ".json"), "w");
    assert_non_null(f);
    fputs("{\"atol\": 1e-5, \"rtol\": 1e-5,\n \"runs\": [", f);
    for (int k = 0; k < s->n_runs; k++) {
        yg_tensor *run_ins[8] = {NULL}, *outs[8] = {NULL};
        for (int i = 0; i < s->n_in; i++)
            run_ins[i] = spec_input(s, i, s->runs[k], 70 + 10 * (uint64_t)k + (uint64_t)i);
        YG_CHECK(m->fn(m, run_ins, s->n_in, outs, s->n_out));
        fputs(k > 0 ? ",\n  {\"inputs\": [" : "{\"inputs\": [", f);
        for (int i = 0; i < s->n_in; i++) {
            fputs(i > 0 ? ", " : "", f);
            write_tensor(f, s->in_names[i], run_ins[i]);
        }
        fputs("], \"outputs\": [", f);
        for (int i = 0; i < s->n_out; i++) {
            fputs(i > 0 ? ", " : "", f);
            write_tensor(f, s->out_names[i], outs[i]);
        }
        fputs("]}", f);
        for (int i = 0; i < 8; i++) {
            yg_release(run_ins[i]);
            yg_release(outs[i]);
        }
    }
    fputs("]}\n", f);
    assert_int_equal(fclose(f), 0);
}

/* export_runs with float32 inputs, a dynamic batch only, traced at batch
 * b_trace and run at b_run. */
static void export_model(model *m,
                         const int64_t (*in_sizes)[4],
                         const int64_t *in_ndim,
                         int n_in,
                         const char *const *in_names,
                         const char *const *out_names,
                         int n_out,
                         int64_t b_trace,
                         int64_t b_run,
                         const yg_trace_options *topt) {
    export_spec s = {.in_sizes = in_sizes,
                     .in_ndim = in_ndim,
                     .n_in = n_in,
                     .in_names = in_names,
                     .out_names = out_names,
                     .n_out = n_out,
                     .seq_axis = -1,
                     .trace = {b_trace, 1},
                     .runs = {{b_run, 1}},
                     .n_runs = 1,
                     .topt = topt};
    export_runs(m, &s);
}

static void test_export_mlp(void **state) {
    (void)state;
    model m = {.name = "mlp", .fn = mlp_fn};
    param(&m, (const int64_t[]){16, 4}, 2, -0.5, 0.5);
    param(&m, (const int64_t[]){16}, 1, -0.1, 0.1);
    param(&m, (const int64_t[]){3, 16}, 2, -0.5, 0.5);
    param(&m, (const int64_t[]){3}, 1, -0.1, 0.1);
    export_model(&m,
                 (const int64_t[][4]){{0, 4}},
                 (const int64_t[]){2},
                 1,
                 (const char *const[]){"x"},
                 (const char *const[]){"logits"},
                 1,
                 5,
                 7,
                 NULL);
    model_free(&m);
}

static void test_export_lstm_cell(void **state) {
    (void)state;
    model m = {.name = "lstm_cell", .fn = lstm_fn};
    param(&m, (const int64_t[]){64, 8}, 2, -0.3, 0.3);
    param(&m, (const int64_t[]){64, 16}, 2, -0.3, 0.3);
    param(&m, (const int64_t[]){64}, 1, -0.1, 0.1);
    param(&m, (const int64_t[]){64}, 1, -0.1, 0.1);
    export_model(&m,
                 (const int64_t[][4]){{0, 8}, {0, 16}, {0, 16}},
                 (const int64_t[]){2, 2, 2},
                 3,
                 (const char *const[]){"x", "h", "c"},
                 (const char *const[]){"hy", "cy"},
                 2,
                 3,
                 20,
                 NULL);
    model_free(&m);
}

/* Traced through the composite: t, mm, add and the fused
 * lstm_cell_gates; the peephole folds the projections back into linear. */
static void test_export_lstm_cell_traced_through_composites(void **state) {
    (void)state;
    model m = {.name = "lstm_cell_parts", .fn = lstm_fn};
    const yg_trace_options topt = {.trace_through_composites = true};
    param(&m, (const int64_t[]){64, 8}, 2, -0.3, 0.3);
    param(&m, (const int64_t[]){64, 16}, 2, -0.3, 0.3);
    param(&m, (const int64_t[]){64}, 1, -0.1, 0.1);
    param(&m, (const int64_t[]){64}, 1, -0.1, 0.1);
    export_model(&m,
                 (const int64_t[][4]){{0, 8}, {0, 16}, {0, 16}},
                 (const int64_t[]){2, 2, 2},
                 3,
                 (const char *const[]){"x", "h", "c"},
                 (const char *const[]){"hy", "cy"},
                 2,
                 3,
                 11,
                 &topt);
    model_free(&m);
}

static void test_export_view_and_expand_follow_a_dynamic_batch(void **state) {
    (void)state;
    model m = {.name = "reshape", .fn = reshape_fn};
    param(&m, (const int64_t[]){3, 6}, 2, -0.5, 0.5);
    param(&m, (const int64_t[]){3}, 1, 0.5, 1.5);
    param(&m, (const int64_t[]){1, 3}, 2, -0.5, 0.5);
    export_model(&m,
                 (const int64_t[][4]){{0, 2, 3}},
                 (const int64_t[]){3},
                 1,
                 (const char *const[]){"x"},
                 (const char *const[]){"y"},
                 1,
                 4,
                 9,
                 NULL);
    model_free(&m);
}

static void test_export_gru_cell(void **state) {
    (void)state;
    model m = {.name = "gru_cell", .fn = gru_fn};
    param(&m, (const int64_t[]){48, 8}, 2, -0.3, 0.3);
    param(&m, (const int64_t[]){48, 16}, 2, -0.3, 0.3);
    param(&m, (const int64_t[]){48}, 1, -0.1, 0.1);
    param(&m, (const int64_t[]){48}, 1, -0.1, 0.1);
    export_model(&m,
                 (const int64_t[][4]){{0, 8}, {0, 16}},
                 (const int64_t[]){2, 2},
                 2,
                 (const char *const[]){"x", "h"},
                 (const char *const[]){"hy"},
                 1,
                 4,
                 9,
                 NULL);
    model_free(&m);
}

static void test_export_transformer_block(void **state) {
    (void)state;
    model m = {.name = "transformer_block", .fn = block_fn};
    const int64_t d[1] = {16}, dd[2] = {16, 16}, up[2] = {64, 16}, down[2] = {16, 64},
                  up_b[1] = {64};
    param(&m, d, 1, 0.8, 1.2); /* ln1 weight, bias */
    param(&m, d, 1, -0.1, 0.1);
    for (int i = 0; i < 4; i++) { /* q, k, v, out projections */
        param(&m, dd, 2, -0.3, 0.3);
        param(&m, d, 1, -0.1, 0.1);
    }
    param(&m, d, 1, 0.8, 1.2); /* ln2 */
    param(&m, d, 1, -0.1, 0.1);
    param(&m, up, 2, -0.3, 0.3);
    param(&m, up_b, 1, -0.1, 0.1);
    param(&m, down, 2, -0.2, 0.2);
    param(&m, d, 1, -0.1, 0.1);
    /* dynamic batch and length: traced at (3, 5), run at two other
     * batches and two other lengths */
    export_spec s = {.in_sizes = (const int64_t[][4]){{0, 0, 16}},
                     .in_ndim = (const int64_t[]){3},
                     .n_in = 1,
                     .in_names = (const char *const[]){"x"},
                     .out_names = (const char *const[]){"y"},
                     .n_out = 1,
                     .seq_axis = 1,
                     .trace = {3, 5},
                     .runs = {{2, 7}, {6, 7}, {2, 4}},
                     .n_runs = 3};
    export_runs(&m, &s);
    model_free(&m);
}

/* A small encoder-decoder: conv 3x3 stride 2 -> relu -> transposed conv
 * 2x2 stride 2 -> relu -> bilinear upsampling x2 -> conv 3x3 -> sigmoid,
 * [B, 1, 8, 8] -> [B, 1, 16, 16]. */
static yg_status
encdec_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    model *m = ctx;
    yg_tensor *t[6] = {NULL};
    const int64_t one[2] = {1, 1}, two[2] = {2, 2}, zero[2] = {0, 0}, up[2] = {16, 16};
    (void)n_in;
    (void)n_out;
    yg_status st = yg_conv2d(in[0], m->p[0], m->p[1], two, 2, one, 2, one, 2, 1, &t[0]);
    if (st == YG_OK)
        st = yg_relu(t[0], &t[1]);
    if (st == YG_OK)
        st = yg_conv_transpose2d(t[1], m->p[2], m->p[3], two, 2, zero, 2, zero, 2, 1, one, 2, &t[2]);
    if (st == YG_OK)
        st = yg_relu(t[2], &t[3]);
    if (st == YG_OK)
        st = yg_upsample_bilinear2d(t[3], up, 2, false, NULL, NULL, &t[4]);
    if (st == YG_OK)
        st = yg_conv2d(t[4], m->p[4], m->p[5], one, 2, one, 2, one, 2, 1, &t[5]);
    if (st == YG_OK)
        st = yg_sigmoid(t[5], &out[0]);
    for (int i = 0; i < 6; i++)
        yg_release(t[i]);
    return st;
}

static void test_export_encoder_decoder_cnn(void **state) {
    (void)state;
    model m = {.name = "encdec", .fn = encdec_fn};
    param(&m, (const int64_t[]){6, 1, 3, 3}, 4, -0.5, 0.5);
    param(&m, (const int64_t[]){6}, 1, -0.1, 0.1);
    param(&m, (const int64_t[]){6, 4, 2, 2}, 4, -0.5, 0.5); /* transposed: [in, out, kh, kw] */
    param(&m, (const int64_t[]){4}, 1, -0.1, 0.1);
    param(&m, (const int64_t[]){1, 4, 3, 3}, 4, -0.5, 0.5);
    param(&m, (const int64_t[]){1}, 1, -0.1, 0.1);
    export_spec s = {.in_sizes = (const int64_t[][4]){{0, 1, 8, 8}},
                     .in_ndim = (const int64_t[]){4},
                     .n_in = 1,
                     .in_names = (const char *const[]){"image"},
                     .out_names = (const char *const[]){"decoded"},
                     .n_out = 1,
                     .seq_axis = -1,
                     .trace = {3, 1},
                     .runs = {{2, 1}, {5, 1}},
                     .n_runs = 2};
    export_runs(&m, &s);
    model_free(&m);
}

/* One step of a two-layer recurrent language model: embedding -> cell
 * -> cell -> decoder, the states in and out (the caller loops over the
 * sequence, feeding the states back).  gru: GRU cells, else LSTM. */
typedef struct lm_model {
    model m;
    bool gru;
} lm_model;

static yg_status lm_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    lm_model *lm = ctx;
    yg_tensor **p = lm->m.p, *e = NULL;
    (void)n_in;
    (void)n_out;
    yg_status st = yg_embedding(p[0], in[0], -1, &e);
    if (st == YG_OK && lm->gru) {
        st = yg_gru_cell(e, in[1], p[1], p[2], p[3], p[4], &out[1]);
        if (st == YG_OK)
            st = yg_gru_cell(out[1], in[2], p[5], p[6], p[7], p[8], &out[2]);
        if (st == YG_OK)
            st = yg_linear(out[2], p[9], p[10], &out[0]);
    } else if (st == YG_OK) {
        st = yg_lstm_cell(e, in[1], in[2], p[1], p[2], p[3], p[4], &out[1], &out[2]);
        if (st == YG_OK)
            st = yg_lstm_cell(out[1], in[3], in[4], p[5], p[6], p[7], p[8], &out[3], &out[4]);
        if (st == YG_OK)
            st = yg_linear(out[3], p[9], p[10], &out[0]);
    }
    yg_release(e);
    return st;
}

static void export_lm(bool gru) {
    lm_model lm = {.m = {.name = gru ? "gru_lm" : "lstm_lm", .fn = lm_fn}, .gru = gru};
    const int64_t V = 40, E = 12, H = 10, G = (gru ? 3 : 4) * H;
    param(&lm.m, (const int64_t[]){V, E}, 2, -0.5, 0.5);
    for (int layer = 0; layer < 2; layer++) {
        param(&lm.m, (const int64_t[]){G, layer == 0 ? E : H}, 2, -0.3, 0.3);
        param(&lm.m, (const int64_t[]){G, H}, 2, -0.3, 0.3);
        param(&lm.m, (const int64_t[]){G}, 1, -0.1, 0.1);
        param(&lm.m, (const int64_t[]){G}, 1, -0.1, 0.1);
    }
    param(&lm.m, (const int64_t[]){V, H}, 2, -0.3, 0.3);
    param(&lm.m, (const int64_t[]){V}, 1, -0.1, 0.1);
    export_spec s = {.in_sizes = (const int64_t[][4]){{0}, {0, H}, {0, H}, {0, H}, {0, H}},
                     .in_ndim = (const int64_t[]){1, 2, 2, 2, 2},
                     .vocab = (const int64_t[]){V, 0, 0, 0, 0},
                     .n_in = gru ? 3 : 5,
                     .in_names = gru ? (const char *const[]){"token", "h1", "h2"}
                                     : (const char *const[]){"token", "h1", "c1", "h2", "c2"},
                     .out_names = gru ? (const char *const[]){"logits", "h1_out", "h2_out"}
                                      : (const char *const[]){"logits", "h1_out", "c1_out",
                                                              "h2_out", "c2_out"},
                     .n_out = gru ? 3 : 5,
                     .seq_axis = -1,
                     .trace = {3, 1},
                     .runs = {{2, 1}, {7, 1}},
                     .n_runs = 2};
    export_runs(&lm.m, &s);
    model_free(&lm.m);
}

static void test_export_lstm_language_model_step(void **state) {
    (void)state;
    export_lm(false);
}

static void test_export_gru_language_model_step(void **state) {
    (void)state;
    export_lm(true);
}

/* ---- a small GPT with a dynamic batch and sequence length ---- */

enum { GPT_V = 11, GPT_C = 8, GPT_H = 2, GPT_D = 4, GPT_TMAX = 16 };

/* Token and position embeddings (arange(T)), one pre-LayerNorm block
 * (fused qkv projection split three ways, heads by view [B, T, H, D] and
 * transpose, causal attention, reshape back to [B, T, C], output
 * projection, residual; LayerNorm, 4C GELU MLP, residual), a final
 * LayerNorm and the head tied to the token embedding, viewed as
 * [B * T, V] logits as a loss would read them.  Every size comes from
 * the input at trace time, as a user's code computes it. */
static yg_status gpt_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    model *m = ctx;
    yg_tensor *t[24] = {NULL}, **qkv = NULL;
    int64_t n_qkv = 0;
    const int64_t b = yg_tensor_size(in[0], 0), T = yg_tensor_size(in[0], 1), c[1] = {GPT_C};
    const int64_t heads[4] = {b, T, GPT_H, GPT_D}, merged[3] = {b, T, GPT_C},
                  flat[2] = {b * T, GPT_V};
    const yg_dtype i64 = YG_INT64;
    (void)n_in;
    (void)n_out;
    yg_status st = yg_embedding(m->p[0], in[0], -1, &t[0]);
    if (st == YG_OK)
        st = yg_arange((double)T, &i64, NULL, &t[1]);
    if (st == YG_OK)
        st = yg_embedding(m->p[1], t[1], -1, &t[2]);
    if (st == YG_OK)
        st = yg_add(t[0], t[2], 1, &t[3]); /* x [B, T, C] */
    if (st == YG_OK)
        st = yg_layer_norm(t[3], c, 1, m->p[2], m->p[3], 1e-5, &t[4]);
    if (st == YG_OK)
        st = yg_linear(t[4], m->p[4], m->p[5], &t[5]);
    if (st == YG_OK)
        st = yg_split(t[5], GPT_C, -1, &qkv, &n_qkv);
    for (int i = 0; i < 3 && st == YG_OK; i++) {
        st = yg_view(qkv[i], heads, 4, &t[6 + 2 * i]);
        if (st == YG_OK)
            st = yg_transpose(t[6 + 2 * i], 1, 2, &t[7 + 2 * i]); /* [B, H, T, D] */
    }
    if (st == YG_OK)
        st = yg_scaled_dot_product_attention(t[7], t[9], t[11], NULL, true, NULL, &t[12]);
    if (st == YG_OK)
        st = yg_transpose(t[12], 1, 2, &t[13]);
    if (st == YG_OK)
        st = yg_reshape(t[13], merged, 3, &t[14]);
    if (st == YG_OK)
        st = yg_linear(t[14], m->p[6], m->p[7], &t[15]);
    if (st == YG_OK)
        st = yg_add(t[3], t[15], 1, &t[16]);
    if (st == YG_OK)
        st = yg_layer_norm(t[16], c, 1, m->p[8], m->p[9], 1e-5, &t[17]);
    if (st == YG_OK)
        st = yg_linear(t[17], m->p[10], m->p[11], &t[18]);
    if (st == YG_OK)
        st = yg_gelu(t[18], &t[19]);
    if (st == YG_OK)
        st = yg_linear(t[19], m->p[12], m->p[13], &t[20]);
    if (st == YG_OK)
        st = yg_add(t[16], t[20], 1, &t[21]);
    if (st == YG_OK)
        st = yg_layer_norm(t[21], c, 1, m->p[14], m->p[15], 1e-5, &t[22]);
    if (st == YG_OK)
        st = yg_linear(t[22], m->p[0], NULL, &t[23]); /* tied head [B, T, V] */
    if (st == YG_OK)
        st = yg_view(t[23], flat, 2, &out[0]);
    yg_release_list(qkv, n_qkv);
    for (int i = 0; i < 24; i++)
        yg_release(t[i]);
    return st;
}

/* The GPT's parameters, in gpt_fn's order. */
static void gpt_params(model *mp) {
    const int64_t c[1] = {GPT_C};
    param(mp, (const int64_t[]){GPT_V, GPT_C}, 2, -0.5, 0.5);    /* wte */
    param(mp, (const int64_t[]){GPT_TMAX, GPT_C}, 2, -0.5, 0.5); /* wpe */
    param(mp, c, 1, 0.8, 1.2);
    param(mp, c, 1, -0.1, 0.1);
    param(mp, (const int64_t[]){3 * GPT_C, GPT_C}, 2, -0.4, 0.4);
    param(mp, (const int64_t[]){3 * GPT_C}, 1, -0.1, 0.1);
    param(mp, (const int64_t[]){GPT_C, GPT_C}, 2, -0.4, 0.4);
    param(mp, c, 1, -0.1, 0.1);
    param(mp, c, 1, 0.8, 1.2);
    param(mp, c, 1, -0.1, 0.1);
    param(mp, (const int64_t[]){4 * GPT_C, GPT_C}, 2, -0.4, 0.4);
    param(mp, (const int64_t[]){4 * GPT_C}, 1, -0.1, 0.1);
    param(mp, (const int64_t[]){GPT_C, 4 * GPT_C}, 2, -0.3, 0.3);
    param(mp, c, 1, -0.1, 0.1);
    param(mp, c, 1, 0.8, 1.2);
    param(mp, c, 1, -0.1, 0.1);
}

/* Exports the GPT as <name> traced at (b, t) with its batch and sequence
 * dynamic, and writes eager's results at the runs for onnxruntime. */
static void export_gpt(const char *name, int64_t b, int64_t t, const int64_t (*runs)[2], int n_runs) {
    model m = {.name = name, .fn = gpt_fn};
    gpt_params(&m);
    const yg_onnx_dynamic_axis axes[3] = {
        {false, 0, 0, "batch"}, {false, 0, 1, "sequence"}, {true, 0, 0, "tokens"}};
    export_spec s = {.in_sizes = (const int64_t[][4]){{0, 0}},
                     .in_ndim = (const int64_t[]){2},
                     .vocab = (const int64_t[]){GPT_V},
                     .n_in = 1,
                     .in_names = (const char *const[]){"idx"},
                     .out_names = (const char *const[]){"logits"},
                     .n_out = 1,
                     .seq_axis = 1,
                     .trace = {b, t},
                     .n_runs = n_runs,
                     .axes = axes,
                     .n_axes = 3};
    memcpy(s.runs, runs, (size_t)n_runs * sizeof runs[0]);
    export_runs(&m, &s);
    model_free(&m);
}

/* Traced at batch 3 and length 5 (sizes that no fixed size of the model
 * has), exported with both axes dynamic, run at batch 2 and 6 and
 * lengths 7 and 4 in onnxruntime against eager. */
static void test_export_gpt_with_dynamic_batch_and_sequence(void **state) {
    (void)state;
    export_gpt("gpt", 3, 5, (const int64_t[][2]){{2, 7}, {6, 7}, {2, 4}}, 3);
}

/* Traced where the dynamic sizes equal each other and a fixed size
 * (batch 4, length 4, head dim 4): which sizes are dynamic cannot be told
 * apart (docs/onnx.md), so the forms fall back to numbers where a size is
 * ambiguous; the export must still be a valid model that computes the
 * traced sizes' result. */
static void test_export_gpt_traced_at_ambiguous_sizes(void **state) {
    (void)state;
    export_gpt("gpt_ambiguous", 4, 4, (const int64_t[][2]){{4, 4}}, 1);
}

static void test_export_cnn(void **state) {
    (void)state;
    model m = {.name = "cnn", .fn = cnn_fn};
    const int64_t c[1] = {4};
    param(&m, (const int64_t[]){4, 1, 3, 3}, 4, -0.5, 0.5);
    param(&m, c, 1, -0.1, 0.1);
    param(&m, c, 1, 0.8, 1.2);  /* bn weight */
    param(&m, c, 1, -0.1, 0.1); /* bn bias */
    param(&m, c, 1, -0.2, 0.2); /* running mean */
    param(&m, c, 1, 0.5, 1.5);  /* running var */
    param(&m, (const int64_t[]){10, 64}, 2, -0.2, 0.2);
    param(&m, (const int64_t[]){10}, 1, -0.1, 0.1);
    export_model(&m,
                 (const int64_t[][4]){{0, 1, 8, 8}},
                 (const int64_t[]){4},
                 1,
                 (const char *const[]){"image"},
                 (const char *const[]){"logits"},
                 1,
                 2,
                 5,
                 NULL);
    model_free(&m);
}

/* ---- one small graph per exportable op ---- */

#define F34      "Tensor(dtype=float32, sizes=[3, 4])"
#define B34      "Tensor(dtype=bool, sizes=[3, 4])"
#define G1(call) "graph(%a : " F34 "):\n  %y : Tensor = " call "(%a)\n  return (%y)\n"
#define G2(call)                                                                                   \
    "graph(%a : " F34 ", %b : " F34 "):\n  %y : Tensor = " call "(%a, %b)\n  return (%y)\n"
#define GB2(call)                                                                                  \
    "graph(%a : " B34 ", %b : " B34 "):\n  %y : Tensor = " call "(%a, %b)\n  return (%y)\n"
#define GS(sizes, call)                                                                            \
    "graph(%a : Tensor(dtype=float32, sizes=" sizes ")):\n  %y : Tensor = " call "(%a)\n"          \
    "  return (%y)\n"

typedef struct sym_case {
    const char *op;      /* the op table name the case covers */
    const char *text;    /* the graph */
    bool positive;       /* float inputs in [0.5, 1.5) instead of [-1, 1) */
    int64_t index_bound; /* int64 inputs take values in [0, index_bound) */
} sym_case;

static const sym_case sym_cases[] = {
    {"add", G2("add[alpha=1]"), false, 0},
    {"sub", G2("sub[alpha=1]"), false, 0},
    {"mul", G2("mul"), false, 0},
    {"div", G2("div"), true, 0},
    {"mul.Scalar", G1("mul.Scalar[other=2.5]"), false, 0},
    {"div.Scalar", G1("div.Scalar[other=2.0]"), false, 0},
    {"add.Scalar", G1("add.Scalar[alpha=1, other=1.5]"), false, 0},
    {"sub.Scalar", G1("sub.Scalar[alpha=1, other=0.5]"), false, 0},
    {"rsub.Scalar", G1("rsub.Scalar[alpha=1, other=1.0]"), false, 0},
    {"maximum", G2("maximum"), false, 0},
    {"minimum", G2("minimum"), false, 0},
    {"pow", G2("pow"), true, 0},
    {"where",
     "graph(%c : " B34 ", %a : " F34 ", %b : " F34 "):\n  %y : Tensor = where(%c, %a, %b)\n"
     "  return (%y)\n",
     false,
     0},
    {"where.ScalarOther",
     "graph(%c : " B34 ", %a : " F34 "):\n  %y : Tensor = where.ScalarOther[other=0.5](%c, %a)\n"
     "  return (%y)\n",
     false,
     0},
    {"where.ScalarSelf",
     "graph(%c : " B34 ", %b : " F34 "):\n  %y : Tensor = where.ScalarSelf[self=0.5](%c, %b)\n"
     "  return (%y)\n",
     false,
     0},
    {"masked_fill",
     "graph(%a : " F34 ", %m : " B34 "):\n  %y : Tensor = masked_fill[value=-1.0](%a, %m)\n"
     "  return (%y)\n",
     false,
     0},
    {"eq", G2("eq"), false, 0},
    {"ne", G2("ne"), false, 0},
    {"lt", G2("lt"), false, 0},
    {"le", G2("le"), false, 0},
    {"gt", G2("gt"), false, 0},
    {"ge", G2("ge"), false, 0},
    {"eq.Scalar", G1("eq.Scalar[other=0.0]"), false, 0},
    {"ne.Scalar", G1("ne.Scalar[other=0.0]"), false, 0},
    {"lt.Scalar", G1("lt.Scalar[other=0.1]"), false, 0},
    {"le.Scalar", G1("le.Scalar[other=0.1]"), false, 0},
    {"gt.Scalar", G1("gt.Scalar[other=0.1]"), false, 0},
    {"ge.Scalar", G1("ge.Scalar[other=0.1]"), false, 0},
    {"logical_and", GB2("logical_and"), false, 0},
    {"logical_or", GB2("logical_or"), false, 0},
    {"logical_xor", GB2("logical_xor"), false, 0},
    {"logical_not",
     "graph(%a : " B34 "):\n  %y : Tensor = logical_not(%a)\n  return (%y)\n",
     false,
     0},
    {"neg", G1("neg"), false, 0},
    {"exp", G1("exp"), false, 0},
    {"log", G1("log"), true, 0},
    {"sqrt", G1("sqrt"), true, 0},
    {"pow.Scalar", G1("pow.Scalar[exponent=2.0]"), true, 0},
    {"abs", G1("abs"), false, 0},
    {"sign", G1("sign"), false, 0},
    {"reciprocal", G1("reciprocal"), true, 0},
    {"tanh", G1("tanh"), false, 0},
    {"sin", G1("sin"), false, 0},
    {"cos", G1("cos"), false, 0},
    {"tan", G1("tan"), false, 0},
    {"erf", G1("erf"), false, 0},
    {"sigmoid", G1("sigmoid"), false, 0},
    {"relu", G1("relu"), false, 0},
    {"gelu", G1("gelu"), false, 0},
    {"silu", G1("silu"), false, 0},
    {"elu", G1("elu[alpha=1.0]"), false, 0},
    {"leaky_relu", G1("leaky_relu[negative_slope=0.1]"), false, 0},
    {"softplus", G1("softplus[beta=1, threshold=20]"), false, 0},
    {"hardtanh", G1("hardtanh[max_val=0.5, min_val=-0.5]"), false, 0},
    {"clamp", G1("clamp[max=0.4, min=-0.3]"), false, 0},
    {"clamp_min", G1("clamp_min[min=0.1]"), false, 0},
    {"clamp_max", G1("clamp_max[max=0.2]"), false, 0},
    {"floor", G1("floor"), false, 0},
    {"ceil", G1("ceil"), false, 0},
    {"round", G1("round"), false, 0},
    {"sum", G1("sum"), false, 0},
    {"sum.dim", G1("sum.dim[dim=[1], keepdim=0]"), false, 0},
    {"mean", G1("mean"), false, 0},
    {"mean.dim", G1("mean.dim[dim=[0], keepdim=1]"), false, 0},
    {"prod", G1("prod"), true, 0},
    {"prod.dim", G1("prod.dim[dim=[1], keepdim=0]"), true, 0},
    {"amax", G1("amax[dim=[1], keepdim=0]"), false, 0},
    {"amin", G1("amin[dim=[0], keepdim=1]"), false, 0},
    {"max", G1("max"), false, 0},
    {"min", G1("min"), false, 0},
    {"argmax.dim", G1("argmax.dim[dim=1, keepdim=0]"), false, 0},
    {"argmin.dim", G1("argmin.dim[dim=0, keepdim=1]"), false, 0},
    {"logsumexp", G1("logsumexp[dim=[1], keepdim=0]"), false, 0},
    {"softmax", G1("softmax[dim=1]"), false, 0},
    {"log_softmax", G1("log_softmax[dim=1]"), false, 0},
    {"mm",
     "graph(%a : " F34 ", %b : Tensor(dtype=float32, sizes=[4, 5])):\n"
     "  %y : Tensor = mm(%a, %b)\n  return (%y)\n",
     false,
     0},
    {"bmm",
     "graph(%a : Tensor(dtype=float32, sizes=[2, 3, 4]), %b : Tensor(dtype=float32, sizes=[2, 4, "
     "5])):\n"
     "  %y : Tensor = bmm(%a, %b)\n  return (%y)\n",
     false,
     0},
    {"matmul",
     "graph(%a : Tensor(dtype=float32, sizes=[2, 3, 4]), %b : Tensor(dtype=float32, sizes=[4, "
     "5])):\n"
     "  %y : Tensor = matmul(%a, %b)\n  return (%y)\n",
     false,
     0},
    {"dot",
     "graph(%a : Tensor(dtype=float32, sizes=[4]), %b : Tensor(dtype=float32, sizes=[4])):\n"
     "  %y : Tensor = dot(%a, %b)\n  return (%y)\n",
     false,
     0},
    {"mv",
     "graph(%a : " F34 ", %b : Tensor(dtype=float32, sizes=[4])):\n"
     "  %y : Tensor = mv(%a, %b)\n  return (%y)\n",
     false,
     0},
    {"addmm",
     "graph(%s : Tensor(dtype=float32, sizes=[3, 5]), %a : " F34
     ", %b : Tensor(dtype=float32, sizes=[4, 5])):\n"
     "  %y : Tensor = addmm[alpha=0.5, beta=2.0](%s, %a, %b)\n  return (%y)\n",
     false,
     0},
    {"linear",
     "graph(%a : " F34
     ", %w : Tensor(dtype=float32, sizes=[5, 4]), %b : Tensor(dtype=float32, sizes=[5])):\n"
     "  %y : Tensor = linear(%a, %w, %b)\n  return (%y)\n",
     false,
     0},
    {"t", G1("t"), false, 0},
    {"transpose", GS("[2, 3, 4]", "transpose[dim0=0, dim1=-1]"), false, 0},
    {"permute", GS("[2, 3, 4]", "permute[dims=[2, 0, 1]]"), false, 0},
    {"view", G1("view[size=[2, -1]]"), false, 0},
    {"reshape", G1("reshape[shape=[4, 3]]"), false, 0},
    {"expand", GS("[3, 1]", "expand[size=[2, -1, 4]]"), false, 0},
    {"unsqueeze", G1("unsqueeze[dim=1]"), false, 0},
    {"squeeze", GS("[3, 1, 4]", "squeeze"), false, 0},
    {"squeeze.dim", GS("[3, 1, 4]", "squeeze.dim[dim=1]"), false, 0},
    {"flatten", GS("[2, 3, 2, 2]", "flatten[end_dim=-1, start_dim=1]"), false, 0},
    {"clone", G1("clone"), false, 0},
    {"contiguous", G1("contiguous"), false, 0},
    {"select", G1("select[dim=1, index=-1]"), false, 0},
    {"slice", G1("slice[dim=1, end=4, start=1, step=2]"), false, 0},
    {"narrow", G1("narrow[dim=0, length=2, start=-2]"), false, 0},
    {"cat", G2("cat[dim=1]"), false, 0},
    {"stack", G2("stack[dim=-1]"), false, 0},
    {"split",
     "graph(%a : " F34 "):\n  %y0 : Tensor, %y1 : Tensor = split[dim=1, split_size=3](%a)\n"
     "  return (%y0, %y1)\n",
     false,
     0},
    {"split_with_sizes",
     "graph(%a : " F34 "):\n"
     "  %y0 : Tensor, %y1 : Tensor = split_with_sizes[dim=0, split_sizes=[1, 2]](%a)\n"
     "  return (%y0, %y1)\n",
     false,
     0},
    {"chunk",
     "graph(%a : " F34 "):\n  %y0 : Tensor, %y1 : Tensor = chunk[chunks=2, dim=1](%a)\n"
     "  return (%y0, %y1)\n",
     false,
     0},
    {"index_select",
     "graph(%a : " F34 ", %i : Tensor(dtype=int64, sizes=[2])):\n"
     "  %y : Tensor = index_select[dim=1](%a, %i)\n  return (%y)\n",
     false,
     4},
    {"index",
     "graph(%a : " F34 ", %i : Tensor(dtype=int64, sizes=[2, 2])):\n"
     "  %n : None = prim::None()\n"
     "  %y : Tensor = index(%a, %n, %i)\n  return (%y)\n",
     false,
     4},
    {"index", /* two index tensors broadcast together: GatherND */
     "graph(%a : " F34 ", %i : Tensor(dtype=int64, sizes=[2, 1]), "
     "%j : Tensor(dtype=int64, sizes=[3])):\n"
     "  %y : Tensor = index(%a, %i, %j)\n  return (%y)\n",
     false,
     3},
    {"index", /* adjacent, not first: B where the indexed dims were */
     "graph(%a : Tensor(dtype=float32, sizes=[2, 3, 4]), %i : Tensor(dtype=int64, sizes=[2, 2]), "
     "%j : Tensor(dtype=int64, sizes=[2])):\n"
     "  %n : None = prim::None()\n"
     "  %y : Tensor = index(%a, %n, %i, %j)\n  return (%y)\n",
     false,
     3},
    {"index", /* not adjacent: B first */
     "graph(%a : Tensor(dtype=float32, sizes=[2, 3, 4]), %i : Tensor(dtype=int64, sizes=[3]), "
     "%j : Tensor(dtype=int64, sizes=[3])):\n"
     "  %n : None = prim::None()\n"
     "  %y : Tensor = index(%a, %i, %n, %j)\n  return (%y)\n",
     false,
     2},
    {"index", /* negative indices count from the end */
     "graph(%a : " F34 ", %j : Tensor(dtype=int64, sizes=[2])):\n"
     "  %i : Tensor = prim::Constant[value=tensor(int64, [2], [-1, 0])]()\n"
     "  %y : Tensor = index(%a, %i, %j)\n  return (%y)\n",
     false,
     4},
    {"index", /* a boolean mask: its true positions (NonZero) */
     "graph(%a : " F34 ", %m : " B34 "):\n"
     "  %y : Tensor = index(%a, %m)\n  return (%y)\n",
     false,
     0},
    {"index_put", /* distinct positions: ScatterND */
     "graph(%a : " F34 ", %i : Tensor(dtype=int64, sizes=[2]), "
     "%j : Tensor(dtype=int64, sizes=[2]), %v : Tensor(dtype=float32, sizes=[2])):\n"
     "  %y : Tensor = index_put[accumulate=0](%a, %i, %j, %v)\n  return (%y)\n",
     false,
     2},
    {"index_put", /* accumulate over repeated positions: reduction add */
     "graph(%a : " F34 ", %i : Tensor(dtype=int64, sizes=[5]), "
     "%v : Tensor(dtype=float32, sizes=[4])):\n"
     "  %y : Tensor = index_put[accumulate=1](%a, %i, %v)\n  return (%y)\n",
     false,
     3},
    {"index_put", /* indexed dims after a whole one: values in NumPy's order */
     "graph(%a : Tensor(dtype=float32, sizes=[2, 3, 4]), %i : Tensor(dtype=int64, sizes=[2]), "
     "%j : Tensor(dtype=int64, sizes=[2]), %v : Tensor(dtype=float32, sizes=[2, 2])):\n"
     "  %n : None = prim::None()\n"
     "  %y : Tensor = index_put[accumulate=0](%a, %n, %i, %j, %v)\n  return (%y)\n",
     false,
     2},
    {"adaptive_max_pool2d",
     "graph(%a : Tensor(dtype=float32, sizes=[2, 2, 4, 6])):\n"
     "  %v : Tensor, %i : Tensor = adaptive_max_pool2d[output_size=[2, 3]](%a)\n"
     "  return (%v, %i)\n",
     false,
     0},
    {"gather",
     "graph(%a : " F34 ", %i : Tensor(dtype=int64, sizes=[3, 2])):\n"
     "  %y : Tensor = gather[dim=1](%a, %i)\n  return (%y)\n",
     false,
     4},
    {"embedding",
     "graph(%w : Tensor(dtype=float32, sizes=[5, 4]), %i : Tensor(dtype=int64, sizes=[2, 3])):\n"
     "  %y : Tensor = embedding[padding_idx=-1](%w, %i)\n  return (%y)\n",
     false,
     5},
    {"layer_norm",
     "graph(%a : " F34
     ", %w : Tensor(dtype=float32, sizes=[4]), %b : Tensor(dtype=float32, sizes=[4])):\n"
     "  %y : Tensor = layer_norm[eps=1e-05, normalized_shape=[4]](%a, %w, %b)\n  return (%y)\n",
     false,
     0},
    {"group_norm",
     "graph(%a : Tensor(dtype=float32, sizes=[2, 4, 3]), %w : Tensor(dtype=float32, sizes=[4]),"
     " %b : Tensor(dtype=float32, sizes=[4])):\n"
     "  %y : Tensor = group_norm[eps=1e-05, num_groups=2](%a, %w, %b)\n  return (%y)\n",
     false,
     0},
    {"batch_norm",
     "graph(%a : " F34
     ", %w : Tensor(dtype=float32, sizes=[4]), %b : Tensor(dtype=float32, sizes=[4]),"
     " %m : Tensor(dtype=float32, sizes=[4]), %v : Tensor(dtype=float32, sizes=[4])):\n"
     "  %y : Tensor = batch_norm[eps=1e-05, momentum=0.1, training=0](%a, %w, %b, %m, %v)\n"
     "  return (%y)\n",
     true,
     0},
    {"dropout", G1("dropout[p=0.5, train=0]"), false, 0},
    {"to.dtype", G1("to.dtype[copy=0, dtype=1]"), false, 0},
    {"to_copy", G1("to_copy[dtype=1]"), false, 0},
    {"type_as",
     "graph(%a : " F34 ", %b : Tensor(dtype=float64, sizes=[2])):\n"
     "  %y : Tensor = type_as(%a, %b)\n  return (%y)\n",
     false,
     0},
    {"conv1d",
     "graph(%a : Tensor(dtype=float32, sizes=[2, 3, 8]), %w : Tensor(dtype=float32, sizes=[4, 3, "
     "3])):\n"
     "  %n : None = prim::None()\n"
     "  %y : Tensor = conv1d[dilation=[1], groups=1, padding=[1], stride=[2]](%a, %w, %n)\n"
     "  return (%y)\n",
     false,
     0},
    {"constant_pad_nd", G1("constant_pad_nd[pad=[1, 2, -1, 1], value=0.5]"), false, 0},
    {"reflection_pad", G1("reflection_pad[pad=[2, 1]]"), false, 0},
    {"replication_pad", G1("replication_pad[pad=[0, 3]]"), false, 0},
    {"pad", G1("pad[mode=\"replicate\", pad=[1, 2]]"), false, 0},
    {"pad", G1("pad[pad=[1, 0, 0, 2], value=2.0]"), false, 0},
    {"pad",
     "graph(%a : Tensor(dtype=float32, sizes=[2, 3, 4])):\n"
     "  %y : Tensor = pad[mode=\"reflect\", pad=[1, 2, 2, 1]](%a)\n  return (%y)\n",
     false,
     0},
    {"conv2d",
     "graph(%a : Tensor(dtype=float32, sizes=[1, 2, 5, 5]), %w : Tensor(dtype=float32, sizes=[4, "
     "1, 3, 3]),"
     " %b : Tensor(dtype=float32, sizes=[4])):\n"
     "  %y : Tensor = conv2d[dilation=[1, 1], groups=2, padding=[1, 0], stride=[1, 2]](%a, %w, "
     "%b)\n"
     "  return (%y)\n",
     false,
     0},
    {"conv3d",
     "graph(%a : Tensor(dtype=float32, sizes=[1, 1, 4, 4, 4]), %w : Tensor(dtype=float32, "
     "sizes=[2, 1, 2, 2, 2])):\n"
     "  %n : None = prim::None()\n"
     "  %y : Tensor = conv3d[dilation=[1, 1, 1], groups=1, padding=[0, 0, 0], stride=[1, 1, "
     "1]](%a, %w, %n)\n"
     "  return (%y)\n",
     false,
     0},
    {"convolution",
     "graph(%a : Tensor(dtype=float32, sizes=[1, 2, 5, 5]), %w : Tensor(dtype=float32, sizes=[3, "
     "2, 3, 3]),"
     " %b : Tensor(dtype=float32, sizes=[3])):\n"
     "  %y : Tensor = convolution[dilation=[2, 1], groups=1, output_padding=[0, 0], padding=[1, 1],"
     " stride=[1, 1], transposed=0](%a, %w, %b)\n"
     "  return (%y)\n",
     false,
     0},
    {"max_pool2d",
     GS("[1, 2, 5, 5]", "max_pool2d[ceil_mode=1, kernel_size=[2, 2], stride=[2, 2]]"),
     false,
     0},
    {"avg_pool2d",
     GS("[1, 2, 5, 5]",
        "avg_pool2d[count_include_pad=0, kernel_size=[3, 3], padding=[1, 1], stride=[2, 2]]"),
     false,
     0},
    {"adaptive_avg_pool2d",
     GS("[1, 2, 4, 6]", "adaptive_avg_pool2d[output_size=[2, 3]]"),
     false,
     0},
    {"lstm_cell",
     "graph(%x : Tensor(dtype=float32, sizes=[2, 3]), %h : Tensor(dtype=float32, sizes=[2, 4]),"
     " %c : Tensor(dtype=float32, sizes=[2, 4]), %wi : Tensor(dtype=float32, sizes=[16, 3]),"
     " %wh : Tensor(dtype=float32, sizes=[16, 4])):\n"
     "  %n : None = prim::None()\n"
     "  %hy : Tensor, %cy : Tensor = lstm_cell(%x, %h, %c, %wi, %wh, %n, %n)\n"
     "  return (%hy, %cy)\n",
     false,
     0},
    {"lstm_cell_gates",
     "graph(%a : Tensor(dtype=float32, sizes=[2, 8]), %b : Tensor(dtype=float32, sizes=[2, 8]),"
     " %c : Tensor(dtype=float32, sizes=[2, 2])):\n"
     "  %hy : Tensor, %cy : Tensor = lstm_cell_gates(%a, %b, %c)\n"
     "  return (%hy, %cy)\n",
     false,
     0},
    {"gru_cell",
     "graph(%x : Tensor(dtype=float32, sizes=[3]), %h : Tensor(dtype=float32, sizes=[4]),"
     " %wi : Tensor(dtype=float32, sizes=[12, 3]), %wh : Tensor(dtype=float32, sizes=[12, 4]),"
     " %bi : Tensor(dtype=float32, sizes=[12]), %bh : Tensor(dtype=float32, sizes=[12])):\n"
     "  %y : Tensor = gru_cell(%x, %h, %wi, %wh, %bi, %bh)\n"
     "  return (%y)\n",
     false,
     0},
    /* ---- compositions (runtime/onnx/sym_math.c) ---- */
    {"expm1", G1("expm1"), false, 0},
    {"log1p", G1("log1p"), true, 0},
    {"log2", G1("log2"), true, 0},
    {"rsqrt", G1("rsqrt"), true, 0},
    {"trunc", G1("trunc"), false, 0},
    {"gelu_tanh", G1("gelu_tanh"), false, 0},
    {"div.trunc", G2("div.trunc"), true, 0},
    {"div.floor", G2("div.floor"), true, 0},
    {"div.mode", G2("div.mode[rounding_mode=\"floor\"]"), true, 0},
    {"lerp.Scalar", G2("lerp.Scalar[weight=0.3]"), false, 0},
    {"lerp",
     "graph(%a : " F34 ", %b : " F34 ", %w : " F34 "):\n  %y : Tensor = lerp(%a, %b, %w)\n"
     "  return (%y)\n",
     false,
     0},
    {"addcmul",
     "graph(%a : " F34 ", %b : " F34 ", %c : " F34 "):\n"
     "  %y : Tensor = addcmul[value=0.5](%a, %b, %c)\n  return (%y)\n",
     false,
     0},
    {"addcdiv",
     "graph(%a : " F34 ", %b : " F34 ", %c : " F34 "):\n"
     "  %y : Tensor = addcdiv[value=2.0](%a, %b, %c)\n  return (%y)\n",
     true,
     0},
    {"clamp.opt", G1("clamp.opt[max=0.25]"), false, 0},
    {"cumsum", G1("cumsum[dim=1]"), false, 0},
    {"argmax", G1("argmax"), false, 0},
    {"argmin", G1("argmin"), false, 0},
    {"max.dim",
     "graph(%a : " F34 "):\n  %v : Tensor, %i : Tensor = max.dim[dim=1, keepdim=1](%a)\n"
     "  return (%v, %i)\n",
     false,
     0},
    {"min.dim",
     "graph(%a : " F34 "):\n  %v : Tensor, %i : Tensor = min.dim[dim=0](%a)\n"
     "  return (%v, %i)\n",
     false,
     0},
    {"all", "graph(%a : " B34 "):\n  %y : Tensor = all(%a)\n  return (%y)\n", false, 0},
    {"any", G1("any"), false, 0},
    {"all.dim", G1("all.dim[dim=[1], keepdim=1]"), false, 0},
    {"any.dim",
     "graph(%a : " B34 "):\n  %y : Tensor = any.dim[dim=[0]](%a)\n  return (%y)\n",
     false,
     0},
    {"var", G1("var[dim=[1], correction=1]"), false, 0},
    {"std", G1("std[correction=0, keepdim=1]"), false, 0},
    {"var_mean",
     "graph(%a : " F34 "):\n  %v : Tensor, %m : Tensor = var_mean[dim=[0]](%a)\n"
     "  return (%v, %m)\n",
     false,
     0},
    {"norm", G1("norm[p=3.0, dim=[1]]"), false, 0},
    {"outer",
     "graph(%a : Tensor(dtype=float32, sizes=[3]), %b : Tensor(dtype=float32, sizes=[4])):\n"
     "  %y : Tensor = outer(%a, %b)\n  return (%y)\n",
     false,
     0},
    {"baddbmm",
     "graph(%a : Tensor(dtype=float32, sizes=[2, 3, 4]), %b : Tensor(dtype=float32, sizes=[2, 3, "
     "5]), %c : Tensor(dtype=float32, sizes=[2, 5, 4])):\n"
     "  %y : Tensor = baddbmm[alpha=0.5, beta=2.0](%a, %b, %c)\n  return (%y)\n",
     false,
     0},
    {"repeat", G1("repeat[repeats=[2, 1, 3]]"), false, 0},
    {"flip", G1("flip[dims=[0, -1]]"), false, 0},
    {"unbind",
     "graph(%a : " F34 "):\n  %p : Tensor, %q : Tensor, %r : Tensor = unbind[dim=0](%a)\n"
     "  return (%p, %q, %r)\n",
     false,
     0},
    {"tril", G1("tril[diagonal=1]"), false, 0},
    {"triu", G1("triu[diagonal=-1]"), false, 0},
    {"scatter",
     "graph(%a : " F34 ", %i : Tensor(dtype=int64, sizes=[2, 4]), %s : " F34 "):\n"
     "  %y : Tensor = scatter[dim=0](%a, %i, %s)\n  return (%y)\n",
     false,
     3},
    {"scatter.value",
     "graph(%a : " F34 ", %i : Tensor(dtype=int64, sizes=[3, 2])):\n"
     "  %y : Tensor = scatter.value[dim=1, value=7.5](%a, %i)\n  return (%y)\n",
     false,
     4},
    {"scatter_add",
     "graph(%a : " F34 ", %i : Tensor(dtype=int64, sizes=[3, 4]), %s : " F34 "):\n"
     "  %y : Tensor = scatter_add[dim=1](%a, %i, %s)\n  return (%y)\n",
     false,
     4},
    /* ---- image ops (runtime/onnx/sym_vision.c) ---- */
    {"conv1d.padding",
     "graph(%a : Tensor(dtype=float32, sizes=[1, 2, 7]), %w : Tensor(dtype=float32, sizes=[3, 2, 3])):\n"
     "  %n : None = prim::None()\n  %y : Tensor = conv1d.padding[dilation=[2], groups=1, padding=\"same\", stride=[1]](%a, %w, %n)\n  return (%y)\n",
     false,
     0},
    {"conv2d.padding",
     "graph(%a : Tensor(dtype=float32, sizes=[1, 2, 5, 6]), %w : Tensor(dtype=float32, sizes=[3, 2, 2, 3]), %b : Tensor(dtype=float32, sizes=[3])):\n"
     "  %y : Tensor = conv2d.padding[dilation=[1, 1], groups=1, padding=\"same\", stride=[1, 1]](%a, %w, %b)\n  return (%y)\n",
     false,
     0},
    {"conv3d.padding",
     "graph(%a : Tensor(dtype=float32, sizes=[1, 1, 4, 4, 4]), %w : Tensor(dtype=float32, sizes=[2, 1, 3, 3, 3])):\n"
     "  %n : None = prim::None()\n  %y : Tensor = conv3d.padding[dilation=[1, 1, 1], groups=1, padding=\"valid\", stride=[1, 1, 1]](%a, %w, %n)\n  return (%y)\n",
     false,
     0},
    {"conv_transpose1d",
     "graph(%a : Tensor(dtype=float32, sizes=[1, 4, 5]), %w : Tensor(dtype=float32, sizes=[4, 2, 3])):\n"
     "  %n : None = prim::None()\n  %y : Tensor = conv_transpose1d[dilation=[1], groups=1, output_padding=[1], padding=[1], stride=[2]](%a, %w, %n)\n  return (%y)\n",
     false,
     0},
    {"conv_transpose2d",
     "graph(%a : Tensor(dtype=float32, sizes=[1, 4, 3, 3]), %w : Tensor(dtype=float32, sizes=[4, 2, 3, 3]), %b : Tensor(dtype=float32, sizes=[2])):\n"
     "  %y : Tensor = conv_transpose2d[dilation=[1, 1], groups=1, output_padding=[1, 1], padding=[1, 1], stride=[2, 2]](%a, %w, %b)\n  return (%y)\n",
     false,
     0},
    {"conv_transpose3d",
     "graph(%a : Tensor(dtype=float32, sizes=[1, 2, 3, 3, 3]), %w : Tensor(dtype=float32, sizes=[2, 1, 2, 2, 2])):\n"
     "  %n : None = prim::None()\n  %y : Tensor = conv_transpose3d[dilation=[1, 1, 1], groups=2, output_padding=[0, 0, 0], padding=[0, 0, 0], stride=[1, 1, 1]](%a, %w, %n)\n  return (%y)\n",
     false,
     0},
    {"max_pool1d", GS("[1, 2, 7]", "max_pool1d[kernel_size=[3], padding=[1], stride=[2]]"), false, 0},
    {"max_pool3d", GS("[1, 2, 4, 4, 4]", "max_pool3d[kernel_size=[2, 2, 2]]"), false, 0},
    {"avg_pool1d", GS("[1, 2, 7]", "avg_pool1d[count_include_pad=0, kernel_size=[3], padding=[1], stride=[2]]"), false, 0},
    {"avg_pool3d", GS("[1, 1, 4, 4, 4]", "avg_pool3d[kernel_size=[2, 2, 2], stride=[2, 2, 2]]"), false, 0},
    {"adaptive_avg_pool1d", GS("[1, 2, 6]", "adaptive_avg_pool1d[output_size=[3]]"), false, 0},
    {"adaptive_avg_pool3d", GS("[1, 2, 4, 4, 4]", "adaptive_avg_pool3d[output_size=[1, 1, 1]]"), false, 0},
    {"upsample_nearest2d", GS("[1, 2, 3, 4]", "upsample_nearest2d[output_size=[5, 7]]"), false, 0},
    {"upsample_bilinear2d", GS("[1, 2, 3, 4]", "upsample_bilinear2d[align_corners=0, output_size=[5, 7]]"), false, 0},
    {"interpolate", GS("[1, 2, 3, 4]", "interpolate[mode=\"bilinear\", scale_factor=1.5]"), false, 0},
    {"pixel_shuffle", GS("[1, 8, 2, 3]", "pixel_shuffle[upscale_factor=2]"), false, 0},
    {"pixel_unshuffle", GS("[1, 2, 4, 6]", "pixel_unshuffle[downscale_factor=2]"), false, 0},
    {"channel_shuffle", GS("[1, 6, 2, 2]", "channel_shuffle[groups=3]"), false, 0},
    /* ---- losses, atan2, remainder (runtime/onnx/sym_loss.c) ---- */
    {"mse_loss", G2("mse_loss[reduction=\"sum\"]"), false, 0},
    {"l1_loss", G2("l1_loss"), false, 0},
    {"smooth_l1_loss", G2("smooth_l1_loss[beta=0.5, reduction=\"none\"]"), false, 0},
    {"binary_cross_entropy",
     "graph(%a : " F34 ", %b : " F34 "):\n  %p : Tensor = sigmoid(%a)\n"
     "  %t : Tensor = sigmoid(%b)\n  %n : None = prim::None()\n"
     "  %y : Tensor = binary_cross_entropy(%p, %t, %n)\n  return (%y)\n",
     false,
     0},
    {"binary_cross_entropy_with_logits",
     "graph(%a : " F34 ", %b : " F34 ", %w : Tensor(dtype=float32, sizes=[4])):\n"
     "  %t : Tensor = sigmoid(%b)\n"
     "  %y : Tensor = binary_cross_entropy_with_logits(%a, %t, %w, %w)\n  return (%y)\n",
     false,
     0},
    {"nll_loss",
     "graph(%a : " F34 ", %t : Tensor(dtype=int64, sizes=[3])):\n  %n : None = prim::None()\n"
     "  %y : Tensor = nll_loss[ignore_index=2](%a, %t, %n)\n  return (%y)\n",
     false,
     4},
    {"cross_entropy",
     "graph(%a : " F34 ", %t : Tensor(dtype=int64, sizes=[3]), %w : Tensor(dtype=float32, "
     "sizes=[4])):\n"
     "  %y : Tensor = cross_entropy(%a, %t, %w)\n  return (%y)\n",
     true,
     4},
    {"cross_entropy",
     "graph(%a : " F34 ", %b : " F34 "):\n  %t : Tensor = softmax[dim=1](%b)\n"
     "  %n : None = prim::None()\n"
     "  %y : Tensor = cross_entropy[reduction=\"none\"](%a, %t, %n)\n  return (%y)\n",
     false,
     0},
    {"atan2", G2("atan2"), false, 0},
    {"remainder", G2("remainder"), true, 0},
    {"remainder.Scalar", G1("remainder.Scalar[other=0.7]"), false, 0},
    {"upsample_nearest2d_to", GS("[1, 2, 3, 4]", "upsample_nearest2d_to[sizes=[1, 2, 5, 7]]"), false, 0},
    {"upsample_bilinear2d_to",
     GS("[1, 2, 3, 4]", "upsample_bilinear2d_to[align_corners=1, sizes=[1, 2, 5, 7]]"),
     false,
     0},
    /* ---- creation (runtime/onnx/sym_creation.c) ---- */
    {"zeros_like", G1("zeros_like"), false, 0},
    {"ones_like", G1("ones_like"), false, 0},
    {"full_like", G1("full_like[fill_value=2.5]"), false, 0},
    {"empty_like",
     "graph(%a : " F34 "):\n  %e : Tensor = empty_like(%a)\n  %y : Tensor = zeros_like(%e)\n"
     "  return (%y)\n",
     false,
     0},
    {"zeros",
     "graph(%a : " F34 "):\n  %z : Tensor = zeros[size=[3, 4]]()\n"
     "  %y : Tensor = add[alpha=1](%a, %z)\n  return (%y)\n",
     false,
     0},
    {"ones",
     "graph(%a : " F34 "):\n  %z : Tensor = ones[size=[4]]()\n"
     "  %y : Tensor = add[alpha=1](%a, %z)\n  return (%y)\n",
     false,
     0},
    {"full",
     "graph(%a : " F34 "):\n  %z : Tensor = full[fill_value=-1.5, size=[3, 1]]()\n"
     "  %y : Tensor = add[alpha=1](%a, %z)\n  return (%y)\n",
     false,
     0},
    {"empty",
     "graph(%a : " F34 "):\n  %e : Tensor = empty[size=[3, 4]]()\n"
     "  %z : Tensor = zeros_like(%e)\n  %y : Tensor = add[alpha=1](%a, %z)\n  return (%y)\n",
     false,
     0},
    {"arange",
     "graph(%a : " F34 "):\n  %z : Tensor = arange[dtype=\"float32\", end=4]()\n"
     "  %y : Tensor = add[alpha=1](%a, %z)\n  return (%y)\n",
     false,
     0},
    {"arange.start",
     "graph(%a : " F34 "):\n  %z : Tensor = arange.start[dtype=\"float32\", end=2.0, start=-1.0, step=0.75]()\n"
     "  %y : Tensor = add[alpha=1](%a, %z)\n  return (%y)\n",
     false,
     0},
    {"linspace",
     "graph(%a : " F34 "):\n  %z : Tensor = linspace[end=1.0, start=-1.0, steps=4]()\n"
     "  %y : Tensor = add[alpha=1](%a, %z)\n  return (%y)\n",
     false,
     0},
    {"eye.m",
     "graph(%a : " F34 "):\n  %z : Tensor = eye.m[dtype=\"float32\", m=4, n=3]()\n"
     "  %y : Tensor = add[alpha=1](%a, %z)\n  return (%y)\n",
     false,
     0},
    {"eye",
     "graph(%a : Tensor(dtype=float32, sizes=[3, 3])):\n  %z : Tensor = eye[dtype=\"float32\", n=3]()\n"
     "  %y : Tensor = add[alpha=1](%a, %z)\n  return (%y)\n",
     false,
     0},
    {"max_pool2d_with_indices",
     "graph(%a : Tensor(dtype=float32, sizes=[2, 2, 5, 6])):\n"
     "  %v : Tensor, %i : Tensor = max_pool2d_with_indices[kernel_size=[2, 3], padding=[1, 1], "
     "stride=[2, 2]](%a)\n  return (%v, %i)\n",
     false,
     0},
    {"max_pool1d_with_indices",
     "graph(%a : Tensor(dtype=float32, sizes=[2, 3, 7])):\n"
     "  %v : Tensor, %i : Tensor = max_pool1d_with_indices[kernel_size=[3], stride=[2]](%a)\n"
     "  return (%v, %i)\n",
     false,
     0},
    {"max_pool3d_with_indices",
     "graph(%a : Tensor(dtype=float32, sizes=[1, 2, 4, 4, 4])):\n"
     "  %v : Tensor, %i : Tensor = max_pool3d_with_indices[kernel_size=[2, 2, 2]](%a)\n"
     "  return (%v, %i)\n",
     false,
     0},
    /* ---- mixed dtypes: Cast insertion (runtime/onnx/pass_cast.c) ---- */
    {"add",
     "graph(%a : " F34 ", %i : Tensor(dtype=int64, sizes=[3, 4])):\n"
     "  %y : Tensor = add[alpha=1](%a, %i)\n  return (%y)\n",
     false,
     5},
    {"lt",
     "graph(%a : " F34 ", %i : Tensor(dtype=int64, sizes=[4])):\n"
     "  %y : Tensor = lt(%i, %a)\n  return (%y)\n",
     false,
     2},
    {"where",
     "graph(%c : " B34 ", %a : " F34 ", %d : Tensor(dtype=float64, sizes=[3, 4])):\n"
     "  %y : Tensor = where(%c, %a, %d)\n  return (%y)\n",
     false,
     0},
    {"scaled_dot_product_attention",
     "graph(%q : Tensor(dtype=float32, sizes=[2, 3, 4]), %k : Tensor(dtype=float32, sizes=[2, 5, "
     "4]),"
     " %v : Tensor(dtype=float32, sizes=[2, 5, 2]), %m : Tensor(dtype=bool, sizes=[3, 5])):\n"
     "  %y : Tensor = scaled_dot_product_attention[is_causal=0, scale=0.7](%q, %k, %v, %m)\n"
     "  return (%y)\n",
     false,
     0},
    {"flash_attention",
     "graph(%q : Tensor(dtype=float32, sizes=[2, 3, 4]), %k : Tensor(dtype=float32, sizes=[2, 5, "
     "4]),"
     " %v : Tensor(dtype=float32, sizes=[2, 5, 2])):\n"
     "  %y : Tensor, %l : Tensor = flash_attention[is_causal=1, scale=0.7](%q, %k, %v)\n"
     "  return (%y, %l)\n",
     false,
     0},
};

static void fill_bool(yg_tensor *t, uint64_t seed) {
    uint8_t *d = yg_tensor_data(t);
    for (int64_t i = 0; i < yg_tensor_numel(t); i++)
        d[i] = (uint8_t)(((uint64_t)i * 7 + seed) % 3 != 0);
}

/* An input matching v's type. */
static yg_tensor *input_for(const yg_ir_value *v, const sym_case *c, uint64_t seed) {
    yg_ir_type t = yg_ir_value_type(v);
    yg_tensor *x = NULL;
    if (t.dtype == YG_FLOAT32)
        return yg_test_rand(
            YG_FLOAT32, t.sizes, t.ndim, c->positive ? 0.5 : -1, c->positive ? 1.5 : 1, seed);
    YG_CHECK(yg_tensor_zeros(t.sizes, t.ndim, (yg_dtype)t.dtype, &x));
    if (t.dtype == YG_BOOL) {
        fill_bool(x, seed);
    } else if (t.dtype == YG_INT64) {
        int64_t *d = yg_tensor_data(x);
        for (int64_t i = 0; i < yg_tensor_numel(x); i++)
            d[i] = (int64_t)(((uint64_t)i * 3 + seed) % (uint64_t)c->index_bound);
    } else if (t.dtype == YG_FLOAT64) {
        double *d = yg_tensor_data(x);
        for (int64_t i = 0; i < yg_tensor_numel(x); i++)
            d[i] = 0.25 * (double)i;
    }
    return x;
}

/* "sym_<op>", and "sym_<op>_<k>" for the k-th further case of an op, so
 * that no case's files overwrite another's. */
static void case_name(const sym_case *c, char *buf, size_t n) {
    int k = 0;
    for (const sym_case *p = sym_cases; p < c; p++)
        k += strcmp(p->op, c->op) == 0;
    if (k == 0)
        snprintf(buf, n, "sym_%s", c->op);
    else
        snprintf(buf, n, "sym_%s_%d", c->op, k);
    for (char *p = buf; *p != '\0'; p++)
        if (*p == '.')
            *p = '_';
}

/* Exports one case: parses it, runs it with the interpreter (yagrad's
 * eager ops) and writes the model and the case. */
static void export_sym_case(const sym_case *c, FILE *manifest, FILE *manifest13, int *n13) {
    yg_graph *g = NULL;
    yg_tensor *ins[8] = {NULL}, *outs[4] = {NULL};
    const char *in_names[8] = {NULL}, *out_names[4] = {NULL};
    char name[128];
    int n_in = 0, n_model = 0;

    YG_CHECK(yg_graph_parse(c->text, (int64_t)strlen(c->text), &g));
    int64_t n = yg_graph_num_inputs(g), n_out = yg_graph_num_outputs(g);
    assert_true(n <= 8 && n_out <= 4);
    for (int64_t i = 0; i < n; i++) {
        ins[i] = input_for(yg_graph_input(g, i), c, 11 * (uint64_t)i + 3);
        n_in++;
    }
    YG_CHECK(yg_graph_run(g, ins, n, outs, n_out));
    /* Shape propagation has no rule for a few ops (conv1d, ...): give
     * the outputs the types a trace would have recorded. */
    for (int64_t i = 0; i < n_out; i++) {
        yg_ir_type t = yg_ir_type_tensor();
        t.dtype = (int32_t)yg_tensor_dtype(outs[i]);
        t.device = (int32_t)yg_tensor_device(outs[i]);
        t.ndim = (int32_t)yg_tensor_ndim(outs[i]);
        for (int32_t d = 0; d < t.ndim; d++)
            t.sizes[d] = yg_tensor_sizes(outs[i])[d];
        YG_CHECK(yg_ir_value_set_type(yg_graph_output(g, i), &t));
    }
    case_name(c, name, sizeof name);
    yg_status st = yg_onnx_export(g, NULL, 0, NULL, path_of(name, ".onnx"));
    if (st != YG_OK)
        fail_msg("%s: %s", c->op, yg_last_error());
    for (int64_t i = 0; i < n; i++)
        in_names[n_model++] = yg_ir_value_name(yg_graph_input(g, i));
    for (int64_t i = 0; i < n_out; i++)
        out_names[i] = yg_ir_value_name(yg_graph_output(g, i));
    write_case(name, in_names, ins, n_model, out_names, outs, (int)n_out);
    fprintf(manifest, "%s\n", name);
    /* The same at opset 13, the lowest accepted: it exports, or fails
     * only because an operator it needs is newer. */
    yg_onnx_options o13 = {.opset = 13};
    char name13[140];
    snprintf(name13, sizeof name13, "%s_opset13", name);
    st = yg_onnx_export(g, NULL, 0, &o13, path_of(name13, ".onnx"));
    if (st == YG_OK) {
        write_case(name13, in_names, ins, n_model, out_names, outs, (int)n_out);
        fprintf(manifest13, "%s\n", name13);
        (*n13)++;
    } else {
        YG_EXPECT_ERROR(st, YG_ERR_NOT_IMPLEMENTED, "needs opset", "exporting opset 13");
        assert_false(file_exists(path_of(name13, ".onnx")));
    }
    for (int i = 0; i < n_in; i++)
        yg_release(ins[i]);
    for (int64_t i = 0; i < n_out; i++)
        yg_release(outs[i]);
    yg_graph_release(g);
}

static void test_every_exportable_op_has_a_case_that_exports(void **state) {
    (void)state;
    FILE *manifest = fopen(path_of("manifest", ".txt"), "w");
    FILE *manifest13 = fopen(path_of("manifest_opset13", ".txt"), "w");
    int n13 = 0;
    const size_t n_cases = sizeof sym_cases / sizeof sym_cases[0];
    assert_non_null(manifest);
    assert_non_null(manifest13);
    for (size_t k = 0; k < n_cases; k++)
        export_sym_case(&sym_cases[k], manifest, manifest13, &n13);
    assert_int_equal(fclose(manifest), 0);
    assert_int_equal(fclose(manifest13), 0);
    printf("%zu op cases exported at opset 17, %d of them at opset 13\n", n_cases, n13);
    /* Each op with a symbolic has a case, so a new `onnx:` mapping is
     * checked and run in onnxruntime as soon as it is written. */
    for (int32_t i = 0; i < yg__onnx_symbolics_count; i++) {
        const yg_onnx_symbolic *s = &yg__onnx_symbolics[i];
        bool found = false;
        for (size_t k = 0; k < sizeof sym_cases / sizeof sym_cases[0] && !found; k++)
            found = strcmp(sym_cases[k].op, s->name) == 0;
        if (s->fn != NULL && !found)
            fail_msg("%s exports (%s) but tests/test_onnx.c has no sym_cases entry for it",
                     s->name,
                     s->onnx_op);
    }
}

/* Lists the coverage: every op is exportable (generated or handwritten)
 * or marked unsupported with a reason; none is left unmapped. */
static void test_every_op_is_exportable_or_marked_unsupported(void **state) {
    int generated = 0, custom = 0, unsupported = 0;
    (void)state;
    assert_int_equal(yg__onnx_symbolics_count, yg__ops_count);
    for (int32_t i = 0; i < yg__onnx_symbolics_count; i++) {
        const yg_onnx_symbolic *s = &yg__onnx_symbolics[i];
        const char *op = NULL, *reason = NULL;
        assert_string_equal(s->name, yg__ops[i].name);
        bool ok = yg_onnx_op_exportable(s->name, &op, &reason);
        if (ok && strcmp(op, "custom") == 0)
            custom++;
        else if (ok)
            generated++;
        else if (reason != NULL)
            unsupported++;
        else
            fail_msg("%s has no onnx: key in specs/native_functions.yaml (map it, mark it custom "
                     "or unsupported(\"why\"))",
                     s->name);
    }
    printf("onnx coverage: %d ops: %d exportable (%d generated from the YAML, %d handwritten), "
           "%d unsupported\n",
           yg__ops_count,
           generated + custom,
           generated,
           custom,
           unsupported);
    assert_int_equal(generated + custom + unsupported, yg__ops_count);
    const char *op = NULL, *reason = NULL;
    assert_false(yg_onnx_op_exportable("no_such_op", &op, &reason));
    assert_null(op);
    assert_string_equal(reason, "unknown op");
}

/* ---- failures ---- */

static yg_graph *parse(const char *text) {
    yg_graph *g = NULL;
    YG_CHECK(yg_graph_parse(text, (int64_t)strlen(text), &g));
    return g;
}

static void test_unsupported_op_names_node_op_and_reason_and_writes_nothing(void **state) {
    (void)state;
    yg_graph *g =
        parse("graph(%a : " F34 "):\n"
              "  %y : Tensor = cumprod[dim=1](%a)\n  return (%y)\n");
    const char *path = path_of("unsupported", ".onnx");
    remove(path);
    YG_EXPECT_ERROR(yg_onnx_export(g, NULL, 0, NULL, path),
                    YG_ERR_NOT_IMPLEMENTED,
                    "onnx_export: %y = cumprod(%a): cumprod: not exportable: ",
                    "ONNX has no cumulative product operator");
    assert_false(file_exists(path));
    uint8_t *buf = (uint8_t *)1;
    size_t len = 1;
    YG_EXPECT_ERROR(yg_onnx_export_to_buffer(g, NULL, 0, NULL, &buf, &len),
                    YG_ERR_NOT_IMPLEMENTED,
                    "cumprod");
    assert_null(buf);
    assert_int_equal(len, 0);
    yg_graph_release(g);
}

static void test_op_needing_a_higher_opset_fails_naming_it(void **state) {
    (void)state;
    yg_graph *g = parse("graph(%a : " F34 "):\n"
                        "  %n : None = prim::None()\n"
                        "  %y : Tensor = layer_norm[eps=1e-05, normalized_shape=[4]](%a, %n, %n)\n"
                        "  return (%y)\n");
    const char *path = path_of("low_opset", ".onnx");
    remove(path);
    yg_onnx_options o = {.opset = 13};
    YG_EXPECT_ERROR(yg_onnx_export(g, NULL, 0, &o, path),
                    YG_ERR_NOT_IMPLEMENTED,
                    "layer_norm: needs opset 17 (LayerNormalization), exporting opset 13");
    assert_false(file_exists(path));
    o.opset = 17;
    YG_CHECK(yg_onnx_export(g, NULL, 0, &o, path));
    assert_true(file_exists(path));
    yg_graph_release(g);
}

static void test_opset_outside_13_to_17_is_refused(void **state) {
    (void)state;
    yg_graph *g = parse(G1("relu"));
    uint8_t *buf = NULL;
    size_t len = 0;
    yg_onnx_options o = {.opset = 12};
    YG_EXPECT_ERROR(yg_onnx_export_to_buffer(g, NULL, 0, &o, &buf, &len),
                    YG_ERR_INVALID_ARGUMENT,
                    "onnx_export: opset 12 is not supported (accepted: 13 to 17)");
    o.opset = 18;
    YG_EXPECT_ERROR(yg_onnx_export_to_buffer(g, NULL, 0, &o, &buf, &len),
                    YG_ERR_INVALID_ARGUMENT,
                    "opset 18 is not supported");
    o.opset = 13;
    YG_CHECK(yg_onnx_export_to_buffer(g, NULL, 0, &o, &buf, &len));
    assert_non_null(buf);
    assert_true(len > 0);
    yg_onnx_buffer_release(buf);
    yg_graph_release(g);
}

static void test_unwritable_path_is_an_io_error_and_leaves_no_file(void **state) {
    (void)state;
    yg_graph *g = parse(G1("relu"));
    YG_EXPECT_ERROR(yg_onnx_export(g, NULL, 0, NULL, "/nonexistent-yagrad-dir/m.onnx"),
                    YG_ERR_IO,
                    "onnx_export: cannot create '/nonexistent-yagrad-dir/m.onnx.tmp.",
                    "No such file or directory");
    assert_false(file_exists("/nonexistent-yagrad-dir"));
    /* A directory as the path: the temporary is written, the rename
     * fails, and the temporary is removed. */
    const char *dir = path_of("a_directory", "");
    mkdir(dir, 0755);
    YG_EXPECT_ERROR(yg_onnx_export(g, NULL, 0, NULL, dir), YG_ERR_IO, "cannot write", dir);
    yg_graph_release(g);
}

static void test_failed_export_leaves_an_existing_file_unchanged(void **state) {
    (void)state;
    const char *path = path_of("keep", ".onnx");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("old", f);
    fclose(f);
    yg_graph *g =
        parse("graph(%a : " F34 "):\n  %y : Tensor = cumprod[dim=1](%a)\n  return (%y)\n");
    YG_EXPECT_ERROR(yg_onnx_export(g, NULL, 0, NULL, path),
                    YG_ERR_NOT_IMPLEMENTED,
                    "cumprod: not exportable: ONNX has no cumulative product operator");
    char buf[16] = {0};
    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "old");
    yg_graph_release(g);
}

static void test_where_guard_refuses_values_the_mapping_cannot_express(void **state) {
    (void)state;
    yg_graph *g = parse(G2("add[alpha=2]"));
    uint8_t *buf = NULL;
    size_t len = 0;
    YG_EXPECT_ERROR(
        yg_onnx_export_to_buffer(g, NULL, 0, NULL, &buf, &len),
        YG_ERR_NOT_IMPLEMENTED,
        "onnx_export: %y = add(%a, %b): add: argument 'alpha' must be 1 to export (got 2)");
    yg_graph_release(g);
    g = parse(G1("dropout[p=0.5, train=1]"));
    YG_EXPECT_ERROR(yg_onnx_export_to_buffer(g, NULL, 0, NULL, &buf, &len),
                    YG_ERR_NOT_IMPLEMENTED,
                    "dropout: train=1 drops at random; export in eval mode");
    yg_graph_release(g);
}

/* What advanced indexing still refuses: a boolean mask beside another
 * index tensor, and index_put's accumulate below opset 16 (ScatterND's
 * reduction). */
static void test_index_mask_with_other_indices_and_old_accumulate_are_refused(void **state) {
    (void)state;
    uint8_t *buf = NULL;
    size_t len = 0;
    yg_graph *g = parse("graph(%a : " F34 ", %m : Tensor(dtype=bool, sizes=[3]),"
                        " %j : Tensor(dtype=int64, sizes=[2])):\n"
                        "  %y : Tensor = index(%a, %m, %j)\n  return (%y)\n");
    YG_EXPECT_ERROR(yg_onnx_export_to_buffer(g, NULL, 0, NULL, &buf, &len),
                    YG_ERR_NOT_IMPLEMENTED,
                    "%y = index(%a, %m, %j): index: a boolean mask with other index tensors; "
                    "not written yet");
    yg_graph_release(g);
    g = parse("graph(%a : " F34 ", %i : Tensor(dtype=int64, sizes=[2]),"
              " %v : Tensor(dtype=float32, sizes=[4])):\n"
              "  %y : Tensor = index_put[accumulate=1](%a, %i, %v)\n  return (%y)\n");
    const yg_onnx_options o13 = {.opset = 13};
    YG_EXPECT_ERROR(yg_onnx_export_to_buffer(g, NULL, 0, &o13, &buf, &len),
                    YG_ERR_NOT_IMPLEMENTED,
                    "index_put: needs opset 16 (ScatterND reduction=add), exporting opset 13");
    assert_null(buf);
    yg_graph_release(g);
}

static void test_result_dtype_onnx_would_not_compute_is_refused(void **state) {
    (void)state;
    /* yagrad sums bools to int64; ONNX ReduceSum keeps its input's type
     * (and has no bool), so the mapping must not be applied blindly. */
    yg_graph *g = parse("graph(%a : " B34 "):\n"
                        "  %y : Tensor(dtype=int64, sizes=[]) = sum(%a)\n  return (%y)\n");
    uint8_t *buf = NULL;
    size_t len = 0;
    YG_EXPECT_ERROR(yg_onnx_export_to_buffer(g, NULL, 0, NULL, &buf, &len),
                    YG_ERR_NOT_IMPLEMENTED,
                    "onnx_export: %y = sum(%a): sum: the result is int64 but ONNX ReduceSum "
                    "computes in the type of input 0 (bool)");
    assert_null(buf);
    yg_graph_release(g);
}

static void test_bad_arguments_are_refused(void **state) {
    (void)state;
    yg_graph *g = parse("graph(%a : " F34 ", param %w : " F34 "):\n"
                        "  %y : Tensor = mul(%a, %w)\n  return (%y)\n");
    uint8_t *buf = NULL;
    size_t len = 0;
    YG_EXPECT_ERROR(yg_onnx_export(NULL, NULL, 0, NULL, "x.onnx"),
                    YG_ERR_INVALID_ARGUMENT,
                    "onnx_export: graph is NULL");
    YG_EXPECT_ERROR(
        yg_onnx_export(g, NULL, 0, NULL, NULL), YG_ERR_INVALID_ARGUMENT, "path is NULL");
    YG_EXPECT_ERROR(yg_onnx_export_to_buffer(g, NULL, 0, NULL, NULL, &len),
                    YG_ERR_INVALID_ARGUMENT,
                    "out or out_len is NULL");
    YG_EXPECT_ERROR(yg_onnx_export_to_buffer(g, NULL, 0, NULL, &buf, &len),
                    YG_ERR_INVALID_ARGUMENT,
                    "the graph has 1 parameter inputs, got 0 params");
    yg_tensor *w = yg_test_rand(YG_FLOAT32, (const int64_t[]){4, 3}, 2, -1, 1, 1);
    YG_EXPECT_ERROR(yg_onnx_export_to_buffer(g, &w, 1, NULL, &buf, &len),
                    YG_ERR_INVALID_ARGUMENT,
                    "param %w: sizes [4, 3] do not match the input's type");
    const char *names[] = {"bad name"};
    yg_onnx_options o = {.params_as_inputs = true, .input_names = names, .n_input_names = 1};
    YG_EXPECT_ERROR(yg_onnx_export_to_buffer(g, NULL, 0, &o, &buf, &len),
                    YG_ERR_INVALID_ARGUMENT,
                    "input name 0 'bad name' is malformed");
    yg_onnx_dynamic_axis ax = {false, 0, 5, "batch"};
    yg_onnx_options o2 = {.params_as_inputs = true, .dynamic_axes = &ax, .n_dynamic_axes = 1};
    YG_EXPECT_ERROR(yg_onnx_export_to_buffer(g, NULL, 0, &o2, &buf, &len),
                    YG_ERR_INVALID_ARGUMENT,
                    "dynamic axis 5 of input 0 %a out of range (rank 2)");
    ax = (yg_onnx_dynamic_axis){false, 0, 0, "9batch"};
    YG_EXPECT_ERROR(yg_onnx_export_to_buffer(g, NULL, 0, &o2, &buf, &len),
                    YG_ERR_INVALID_ARGUMENT,
                    "malformed name '9batch'");
    /* params as model inputs: the export needs no tensors */
    o2.n_dynamic_axes = 0;
    YG_CHECK(yg_onnx_export_to_buffer(g, NULL, 0, &o2, &buf, &len));
    yg_onnx_buffer_release(buf);
    yg_release(w);
    yg_graph_release(g);
}

/* ---- what the options put into the model ---- */

static Onnx__ModelProto *export_and_unpack(const yg_graph *g,
                                           yg_tensor *const *params,
                                           int64_t n_params,
                                           const yg_onnx_options *o) {
    uint8_t *buf = NULL;
    size_t len = 0;
    YG_CHECK(yg_onnx_export_to_buffer(g, params, n_params, o, &buf, &len));
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
    assert_non_null(m);
    yg_onnx_buffer_release(buf);
    return m;
}

/* A subgraph on parameters only (w * 2, permuted) folds into one
 * initializer holding its value; expand of a parameter to the input's
 * batch (larger than the parameter) stays a node; exported with the
 * parameters as inputs, nothing folds. */
static void test_parameter_subgraphs_fold_into_initializers(void **state) {
    (void)state;
    yg_graph *g = parse("graph(%x : Tensor(dtype=float32, sizes=[5, 3]), "
                        "param %w : Tensor(dtype=float32, sizes=[4, 3]), "
                        "param %b : Tensor(dtype=float32, sizes=[1, 4])):\n"
                        "  %w2 : Tensor = mul.Scalar[other=2.0](%w)\n"
                        "  %wt : Tensor = permute[dims=[1, 0]](%w2)\n"
                        "  %h : Tensor = matmul(%x, %wt)\n"
                        "  %be : Tensor = expand[size=[5, 4]](%b)\n"
                        "  %y : Tensor = mul(%h, %be)\n"
                        "  return (%y)\n");
    const double wv[12] = {1, -2, 3.5, 4, 5, 6, 7, 8, 9, 10, 11, -0.25};
    const double bv[4] = {0.5, -1, 2, 3};
    yg_tensor *p[2] = {yg_test_tensor(YG_FLOAT32, (const int64_t[]){4, 3}, 2, wv),
                       yg_test_tensor(YG_FLOAT32, (const int64_t[]){1, 4}, 2, bv)};
    yg_onnx_dynamic_axis ax[2] = {{false, 0, 0, "batch"}, {true, 0, 0, "batch"}};
    yg_onnx_options o = {.dynamic_axes = ax, .n_dynamic_axes = 2};
    Onnx__ModelProto *m = export_and_unpack(g, p, 2, &o);
    Onnx__GraphProto *gp = m->graph;
    const Onnx__TensorProto *wt = NULL;
    bool has_b = false;
    for (size_t i = 0; i < gp->n_initializer; i++) {
        if (strcmp(gp->initializer[i]->name, "wt") == 0)
            wt = gp->initializer[i];
        has_b = has_b || strcmp(gp->initializer[i]->name, "b") == 0;
        assert_string_not_equal(gp->initializer[i]->name, "w"); /* replaced by wt */
    }
    assert_non_null(wt);
    assert_true(has_b);
    assert_int_equal(wt->n_dims, 2);
    assert_int_equal(wt->dims[0], 3);
    assert_int_equal(wt->dims[1], 4);
    const float *got = (const float *)wt->raw_data.data;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++)
            assert_float_equal(got[r * 4 + c], 2 * wv[c * 3 + r], 0);
    bool expand = false;
    for (size_t i = 0; i < gp->n_node; i++) {
        assert_string_not_equal(gp->node[i]->op_type, "Transpose");
        expand = expand || strcmp(gp->node[i]->op_type, "Expand") == 0;
    }
    assert_true(expand);
    onnx__model_proto__free_unpacked(m, NULL);

    o.params_as_inputs = true;
    m = export_and_unpack(g, p, 2, &o);
    assert_int_equal(m->graph->n_input, 3);
    bool transpose = false;
    for (size_t i = 0; i < m->graph->n_node; i++)
        transpose = transpose || strcmp(m->graph->node[i]->op_type, "Transpose") == 0;
    assert_true(transpose);
    onnx__model_proto__free_unpacked(m, NULL);
    yg_release(p[0]);
    yg_release(p[1]);
    yg_graph_release(g);
}

static void test_options_reach_the_model(void **state) {
    (void)state;
    yg_graph *g = parse("graph(%a : " F34 ", param %w : " F34 "):\n"
                        "  %y : Tensor = mul(%a, %w)\n  return (%y)\n");
    const double wv[12] = {1, -2, 3.5, 4, 5, 6, 7, 8, 9, 10, 11, -0.25};
    yg_tensor *w = yg_test_tensor(YG_FLOAT32, (const int64_t[]){3, 4}, 2, wv);
    yg_onnx_dynamic_axis ax[2] = {{false, 0, 0, "batch"}, {true, 0, 0, "batch"}};
    yg_onnx_summary sum = {0};
    yg_onnx_options o = {.opset = 15,
                         .input_names = (const char *const[]){"features"},
                         .n_input_names = 1,
                         .output_names = (const char *const[]){"scores"},
                         .n_output_names = 1,
                         .dynamic_axes = ax,
                         .n_dynamic_axes = 2,
                         .producer_name = "test",
                         .producer_version = "9.9",
                         .doc_string = "a doc",
                         .summary = &sum};
    Onnx__ModelProto *m = export_and_unpack(g, &w, 1, &o);
    assert_int_equal(m->ir_version, 8);
    assert_int_equal(m->n_opset_import, 1);
    assert_string_equal(m->opset_import[0]->domain, "");
    assert_int_equal(m->opset_import[0]->version, 15);
    assert_string_equal(m->producer_name, "test");
    assert_string_equal(m->producer_version, "9.9");
    assert_string_equal(m->doc_string, "a doc");
    Onnx__GraphProto *gp = m->graph;
    assert_int_equal(gp->n_input, 1);
    assert_string_equal(gp->input[0]->name, "features");
    Onnx__TensorShapeProto *sh = gp->input[0]->type->tensor_type->shape;
    assert_int_equal(sh->n_dim, 2);
    assert_string_equal(sh->dim[0]->dim_param, "batch");
    assert_int_equal(sh->dim[1]->dim_value, 4);
    assert_int_equal(gp->n_output, 1);
    assert_string_equal(gp->output[0]->name, "scores");
    assert_string_equal(gp->output[0]->type->tensor_type->shape->dim[0]->dim_param, "batch");
    /* The parameter is an initializer: float32, its sizes, raw
     * little-endian bytes equal to the tensor's. */
    assert_int_equal(gp->n_initializer, 1);
    Onnx__TensorProto *t = gp->initializer[0];
    assert_string_equal(t->name, "w");
    assert_int_equal(t->data_type, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    assert_int_equal(t->n_dims, 2);
    assert_int_equal(t->dims[0], 3);
    assert_int_equal(t->dims[1], 4);
    assert_int_equal(t->raw_data.len, 12 * sizeof(float));
    assert_memory_equal(t->raw_data.data, yg_tensor_data(w), 12 * sizeof(float));
    assert_int_equal(gp->n_node, 1);
    assert_string_equal(gp->node[0]->op_type, "Mul");
    assert_int_equal(sum.opset, 15);
    assert_int_equal(sum.n_nodes, 1);
    assert_int_equal(sum.n_initializers, 1);
    assert_int_equal(sum.n_inputs, 1);
    onnx__model_proto__free_unpacked(m, NULL);
    /* With params_as_inputs the parameter is a model input instead. */
    yg_onnx_options o2 = {.params_as_inputs = true};
    m = export_and_unpack(g, NULL, 0, &o2);
    assert_int_equal(m->opset_import[0]->version, 17);
    assert_string_equal(m->producer_name, "yagrad");
    assert_int_equal(m->graph->n_input, 2);
    assert_string_equal(m->graph->input[1]->name, "w");
    assert_int_equal(m->graph->n_initializer, 0);
    onnx__model_proto__free_unpacked(m, NULL);
    yg_release(w);
    yg_graph_release(g);
}

static void test_output_that_is_an_input_gets_an_identity_with_its_name(void **state) {
    (void)state;
    /* clone is bypassed by the peephole, making the output %a itself. */
    yg_graph *g = parse(G1("clone"));
    Onnx__ModelProto *m = export_and_unpack(g, NULL, 0, NULL);
    assert_int_equal(m->graph->n_node, 1);
    assert_string_equal(m->graph->node[0]->op_type, "Identity");
    assert_string_equal(m->graph->node[0]->input[0], "a");
    assert_string_equal(m->graph->output[0]->name, "y");
    onnx__model_proto__free_unpacked(m, NULL);
    yg_graph_release(g);
}

/* ---- timing (reported, never asserted) ---- */

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Exports the LM with vocabulary V and hidden size H five times and
 * prints the best time (a figure for the report, never asserted). */
static void time_lm_export(int64_t V, int64_t H) {
    lm_model lm = {.m = {.name = "lstm_lm_timed", .fn = lm_fn}};
    model *m = &lm.m;
    param(m, (const int64_t[]){V, H}, 2, -0.1, 0.1);
    for (int l = 0; l < 2; l++) {
        param(m, (const int64_t[]){4 * H, H}, 2, -0.05, 0.05);
        param(m, (const int64_t[]){4 * H, H}, 2, -0.05, 0.05);
        param(m, (const int64_t[]){4 * H}, 1, -0.05, 0.05);
        param(m, (const int64_t[]){4 * H}, 1, -0.05, 0.05);
    }
    param(m, (const int64_t[]){V, H}, 2, -0.1, 0.1);
    param(m, (const int64_t[]){V}, 1, -0.1, 0.1);
    int64_t n_params = 0;
    for (int i = 0; i < m->n_p; i++)
        n_params += yg_tensor_numel(m->p[i]);
    yg_tensor *ins[5] = {NULL};
    YG_CHECK(yg_tensor_zeros((const int64_t[]){20}, 1, YG_INT64, &ins[0]));
    for (int i = 1; i < 5; i++)
        ins[i] = yg_test_rand(YG_FLOAT32, (const int64_t[]){20, H}, 2, -1, 1, (uint64_t)i);
    yg_trace_result *r = NULL;
    YG_CHECK(yg_trace(lm_fn, &lm, ins, 5, 5, NULL, &r));
    double best = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = seconds();
        YG_CHECK(yg_onnx_export(
            r->graph, r->params, r->n_params, NULL, path_of("lstm_lm_timed", ".onnx")));
        double t = seconds() - t0;
        best = t < best ? t : best;
    }
    printf("onnx export of an LSTM LM step (vocab %lld, 2 x lstm_cell %lld; %.1f MB of float32 "
           "parameters): %.1f ms (best of 5, file written)\n",
           (long long)V,
           (long long)H,
           (double)n_params * 4 / 1e6,
           best * 1e3);
    yg_trace_result_release(r);
    for (int i = 0; i < 5; i++)
        yg_release(ins[i]);
    model_free(m);
}

/* The size (<= 10 MB of parameters) and a larger one. */
static void test_export_time_of_an_lstm_language_model(void **state) {
    (void)state;
    time_lm_export(4000, 200);
    time_lm_export(2000, 650);
}

/* The LSTM cell of the benchmark (batch 20, hidden 650), exported for
 * tests/onnx/bench_ort.js; prints yagrad's eager time for comparison. */
static void test_export_lstm_cell_650_for_the_benchmark(void **state) {
    (void)state;
    model m = {.name = "lstm_cell_650", .fn = lstm_fn};
    const int64_t H = 650, B = 20;
    param(&m, (const int64_t[]){4 * H, H}, 2, -0.05, 0.05);
    param(&m, (const int64_t[]){4 * H, H}, 2, -0.05, 0.05);
    param(&m, (const int64_t[]){4 * H}, 1, -0.05, 0.05);
    param(&m, (const int64_t[]){4 * H}, 1, -0.05, 0.05);
    yg_tensor *ins[3], *outs[2] = {NULL};
    for (int i = 0; i < 3; i++)
        ins[i] = yg_test_rand(YG_FLOAT32, (const int64_t[]){B, H}, 2, -1, 1, 5 + (uint64_t)i);
    yg_trace_result *r = NULL;
    YG_CHECK(yg_trace(lstm_fn, &m, ins, 3, 2, NULL, &r));
    yg_onnx_options o = {.input_names = (const char *const[]){"x", "h", "c"},
                         .n_input_names = 3,
                         .output_names = (const char *const[]){"hy", "cy"},
                         .n_output_names = 2};
    YG_CHECK(yg_onnx_export(r->graph, r->params, r->n_params, &o, path_of(m.name, ".onnx")));
    bool prev = yg_set_grad_enabled(false);
    double best = 1e9;
    for (int rep = 0; rep < 50; rep++) {
        double t0 = seconds();
        YG_CHECK(lstm_fn(&m, ins, 3, outs, 2));
        double t = seconds() - t0;
        best = t < best ? t : best;
        yg_release(outs[0]);
        yg_release(outs[1]);
        outs[0] = outs[1] = NULL;
    }
    yg_set_grad_enabled(prev);
    printf("yagrad eager lstm_cell (batch 20, hidden 650): %.3f ms (best of 50)\n", best * 1e3);
    yg_trace_result_release(r);
    for (int i = 0; i < 3; i++)
        yg_release(ins[i]);
    model_free(&m);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_export_mlp),
        cmocka_unit_test(test_export_lstm_cell),
        cmocka_unit_test(test_export_lstm_cell_traced_through_composites),
        cmocka_unit_test(test_export_view_and_expand_follow_a_dynamic_batch),
        cmocka_unit_test(test_export_gru_cell),
        cmocka_unit_test(test_export_transformer_block),
        cmocka_unit_test(test_export_gpt_with_dynamic_batch_and_sequence),
        cmocka_unit_test(test_export_gpt_traced_at_ambiguous_sizes),
        cmocka_unit_test(test_export_encoder_decoder_cnn),
        cmocka_unit_test(test_export_lstm_language_model_step),
        cmocka_unit_test(test_export_gru_language_model_step),
        cmocka_unit_test(test_export_cnn),
        cmocka_unit_test(test_every_exportable_op_has_a_case_that_exports),
        cmocka_unit_test(test_every_op_is_exportable_or_marked_unsupported),
        cmocka_unit_test(test_unsupported_op_names_node_op_and_reason_and_writes_nothing),
        cmocka_unit_test(test_op_needing_a_higher_opset_fails_naming_it),
        cmocka_unit_test(test_opset_outside_13_to_17_is_refused),
        cmocka_unit_test(test_unwritable_path_is_an_io_error_and_leaves_no_file),
        cmocka_unit_test(test_failed_export_leaves_an_existing_file_unchanged),
        cmocka_unit_test(test_where_guard_refuses_values_the_mapping_cannot_express),
        cmocka_unit_test(test_result_dtype_onnx_would_not_compute_is_refused),
        cmocka_unit_test(test_index_mask_with_other_indices_and_old_accumulate_are_refused),
        cmocka_unit_test(test_bad_arguments_are_refused),
        cmocka_unit_test(test_options_reach_the_model),
        cmocka_unit_test(test_parameter_subgraphs_fold_into_initializers),
        cmocka_unit_test(test_output_that_is_an_input_gets_an_identity_with_its_name),
        cmocka_unit_test(test_export_time_of_an_lstm_language_model),
        cmocka_unit_test(test_export_lstm_cell_650_for_the_benchmark),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
#endif /* YG_WITHOUT_ONNX */
