/*
 * test_jit_interp.c - the graph interpreter (yg_graph_run) and the boxed
 * op tables it calls through.
 *
 * Behaviour preservation: an MLP, an LSTM cell (one node, and traced
 * through the composite) and a small CNN-like function are C functions
 * traced with yg_trace; the graph's result equals the function's eager
 * result before any pass, after each pass of the standard pipeline in
 * turn, and after yg_graph_optimize on a fresh copy.  A graph written as
 * text adds rewrites the traces do not exercise.  Then the contract:
 * values freed at their last use (live-value count and allocator peak),
 * in-place nodes, multi-output nodes, constants and None, input checks
 * and the messages of every refusal, with all outputs NULL on failure.
 */
#include "jit/ir/boxing.h"
#include "jit/exec/interpreter.h"
#include "jit/ir/ir.h"
#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_inplace_arithmetic.h"
#include "yagrad/ops_unary_math.h"
#include "yagrad/ops_activations.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_extrema.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_join_split.h"
#include "yagrad/ops_advanced_indexing.h"
#include "yagrad/ops_softmax.h"
#include "yagrad/ops_norms.h"
#include "yagrad/ops_layers.h"
#include "yagrad/ops_pooling.h"
#include "yagrad/ops_average_pooling.h"
#include "yagrad/ops_adaptive_average_pooling.h"
#include "yagrad/ops_creation.h"
#include "yagrad/ops_random.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The passes of yg_graph_optimize, in its order. */
static const char *const pipeline[] = {
    "shape_propagation",
    "requires_grad_propagation",
    "peephole",
    "remove_expands",
    "constant_propagation",
    "constant_pooling",
    "cse",
    "dce",
};

static yg_graph *parse_ok(const char *text) {
    yg_graph *g = NULL;
    YG_CHECK(yg_graph_parse(text, (int64_t)strlen(text), &g));
    return g;
}

static char *print_ok(const yg_graph *g) {
    char *s = NULL;
    YG_CHECK(yg_graph_print(g, &s));
    return s;
}

/* Asserts a and b have the same dtype, sizes and values (within tol). */
static void
expect_same_tensor(const yg_tensor *a, const yg_tensor *b, double tol, const char *what) {
    assert_non_null(a);
    assert_non_null(b);
    if (yg_tensor_dtype(a) != yg_tensor_dtype(b) || yg_tensor_ndim(a) != yg_tensor_ndim(b)) {
        print_error("%s: dtype/rank differ: %s/%lld vs %s/%lld\n",
                    what,
                    yg_dtype_name(yg_tensor_dtype(a)),
                    (long long)yg_tensor_ndim(a),
                    yg_dtype_name(yg_tensor_dtype(b)),
                    (long long)yg_tensor_ndim(b));
        fail();
    }
    double *want = yg_test_values(b);
    YG_EXPECT_CLOSE(a, yg_tensor_sizes(b), yg_tensor_ndim(b), want, tol, 0);
    free(want);
}

/* Runs g and compares each output with want[i]. */
static void expect_run_matches(const yg_graph *g,
                               yg_tensor *const *in,
                               int64_t n_in,
                               yg_tensor *const *want,
                               int64_t n_out,
                               const char *stage) {
    yg_tensor *got[8] = {NULL};
    assert_true(n_out <= 8);
    yg_status st = yg_graph_run(g, in, n_in, got, n_out);
    if (st != YG_OK) {
        char *text = print_ok(g);
        print_error("after %s the graph fails: %s\n%s\n", stage, yg_last_error(), text);
        yg_string_release(text);
        fail();
    }
    for (int64_t i = 0; i < n_out; i++) {
        double *w = yg_test_values(want[i]);
        YG_EXPECT_CLOSE(got[i], yg_tensor_sizes(want[i]), yg_tensor_ndim(want[i]), w, 1e-12, 1e-12);
        free(w);
        yg_release(got[i]);
    }
}

/* Behaviour preservation of g0: a copy equals want before the passes,
 * after each pass of the pipeline (applied in turn), and after
 * yg_graph_optimize of a fresh copy; returns the optimised copy. */
static yg_graph *expect_graph_preserved(const yg_graph *g0,
                                        yg_tensor *const *in,
                                        int64_t n_in,
                                        yg_tensor *const *want,
                                        int64_t n_out) {
    yg_graph *g = NULL, *opt = NULL;
    YG_CHECK(yg_graph_clone(g0, &g));
    YG_CHECK(yg_graph_clone(g0, &opt));
    expect_run_matches(g, in, n_in, want, n_out, "nothing");
    for (size_t i = 0; i < sizeof pipeline / sizeof pipeline[0]; i++) {
        YG_CHECK(yg_graph_run_passes(g, pipeline[i]));
        YG_CHECK(yg_graph_lint(g));
        expect_run_matches(g, in, n_in, want, n_out, pipeline[i]);
    }
    YG_CHECK(yg_graph_optimize(opt));
    expect_run_matches(opt, in, n_in, want, n_out, "the whole pipeline");
    yg_graph_release(g);
    return opt;
}

/* The same for a graph written as text. */
static yg_graph *expect_preserved(const char *text,
                                  yg_tensor *const *in,
                                  int64_t n_in,
                                  yg_tensor *const *want,
                                  int64_t n_out) {
    yg_graph *g = parse_ok(text);
    yg_graph *opt = expect_graph_preserved(g, in, n_in, want, n_out);
    yg_graph_release(g);
    return opt;
}

/* Traces fn on in, then checks behaviour preservation of the traced
 * graph (run on in followed by the trace's parameters) against fn run
 * eagerly; returns the optimised graph. */
static yg_graph *expect_trace_preserved(yg_trace_fn fn,
                                        void *ctx,
                                        yg_tensor *const *in,
                                        int64_t n_in,
                                        int64_t n_out,
                                        const yg_trace_options *options) {
    yg_trace_result *r = NULL;
    yg_tensor *want[8] = {NULL}, *all[16];
    assert_true(n_out <= 8);
    YG_CHECK(fn(ctx, in, n_in, want, n_out));
    YG_CHECK(yg_trace(fn, ctx, in, n_in, n_out, options, &r));
    assert_true(n_in + r->n_params <= 16);
    for (int64_t i = 0; i < n_in; i++)
        all[i] = in[i];
    for (int64_t i = 0; i < r->n_params; i++)
        all[n_in + i] = r->params[i];
    yg_graph *opt = expect_graph_preserved(r->graph, all, n_in + r->n_params, want, n_out);
    for (int64_t i = 0; i < n_out; i++)
        yg_release(want[i]);
    yg_trace_result_release(r);
    return opt;
}

static yg_tensor *rand_f64(const int64_t *sizes, int64_t ndim, uint64_t seed) {
    return yg_test_rand(YG_FLOAT64, sizes, ndim, -1, 1, seed);
}

static void release_all(yg_tensor **t, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        yg_release(t[i]);
}

/* ---- behaviour preservation ---- */

/* The weights the traced functions close over (they become parameter
 * inputs of the traced graphs). */
typedef struct model {
    yg_tensor *w1, *b1, *w2, *b2;
} model;

static void model_init(model *m, int64_t in, int64_t hidden, int64_t out, uint64_t seed) {
    int64_t s1[] = {hidden, in}, s2[] = {out, hidden};
    m->w1 = yg_test_rand(YG_FLOAT64, s1, 2, -1, 1, seed);
    m->b1 = yg_test_rand(YG_FLOAT64, &hidden, 1, -1, 1, seed + 1);
    m->w2 = yg_test_rand(YG_FLOAT64, s2, 2, -1, 1, seed + 2);
    m->b2 = yg_test_rand(YG_FLOAT64, &out, 1, -1, 1, seed + 3);
}

static void model_release(model *m) {
    yg_release(m->w1);
    yg_release(m->b1);
    yg_release(m->w2);
    yg_release(m->b2);
}

/* An MLP with a few things for the passes to do: a multiplication by a
 * constant one (peephole), a product of two constants (constant
 * propagation, then pooling), an unused exp (dce). */
static yg_status
mlp(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    const model *m = ctx;
    yg_tensor *h = NULL, *a = NULL, *y = NULL, *one = NULL, *y1 = NULL, *two = NULL;
    yg_tensor *four = NULL, *s = NULL, *dead = NULL;
    (void)n_in;
    (void)n_out;
    yg_status st = yg_linear(in[0], m->w1, m->b1, &h);
    if (st == YG_OK)
        st = yg_relu(h, &a);
    if (st == YG_OK)
        st = yg_linear(a, m->w2, m->b2, &y);
    if (st == YG_OK)
        st = yg_tensor_scalar(1.0, YG_FLOAT64, &one);
    if (st == YG_OK)
        st = yg_mul(y, one, &y1);
    if (st == YG_OK)
        st = yg_tensor_scalar(2.0, YG_FLOAT64, &two);
    if (st == YG_OK)
        st = yg_mul(two, two, &four);
    if (st == YG_OK)
        st = yg_mul(y1, four, &s);
    if (st == YG_OK)
        st = yg_exp(s, &dead);
    if (st == YG_OK)
        st = yg_log_softmax(s, 1, &out[0]);
    yg_release(h);
    yg_release(a);
    yg_release(y);
    yg_release(one);
    yg_release(y1);
    yg_release(two);
    yg_release(four);
    yg_release(s);
    yg_release(dead);
    return st;
}

static void test_traced_mlp_matches_eager_through_every_pass(void **state) {
    (void)state;
    model m;
    int64_t sx[] = {4, 3};
    yg_tensor *x = rand_f64(sx, 2, 1);
    model_init(&m, 3, 5, 2, 2);
    yg_graph *opt = expect_trace_preserved(mlp, &m, &x, 1, 1, NULL);
    /* The pipeline did its work: linear, relu, linear, one folded
     * constant, mul, log_softmax. */
    char *text = print_ok(opt);
    assert_null(strstr(text, "exp("));
    assert_int_equal(yg_graph_num_nodes(opt), 6);
    yg_string_release(text);
    yg_graph_release(opt);
    model_release(&m);
    yg_release(x);
}

/* One LSTM step: m's w1/w2 are w_ih/w_hh, b1/b2 the biases. */
static yg_status
lstm(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    const model *m = ctx;
    (void)n_in;
    (void)n_out;
    return yg_lstm_cell(in[0], in[1], in[2], m->w1, m->w2, m->b1, m->b2, &out[0], &out[1]);
}

static void lstm_setup(model *m, yg_tensor **in) {
    int64_t sx[] = {3, 4}, sh[] = {3, 5}, sih[] = {20, 4}, shh[] = {20, 5}, sb[] = {20};
    in[0] = rand_f64(sx, 2, 11);
    in[1] = rand_f64(sh, 2, 12);
    in[2] = rand_f64(sh, 2, 13);
    m->w1 = rand_f64(sih, 2, 14);
    m->w2 = rand_f64(shh, 2, 15);
    m->b1 = rand_f64(sb, 1, 16);
    m->b2 = rand_f64(sb, 1, 17);
}

static void test_traced_lstm_cell_matches_eager_as_one_node_and_traced_through(void **state) {
    (void)state;
    model m;
    yg_tensor *in[3];
    yg_trace_options through = {.trace_through_composites = true};
    lstm_setup(&m, in);
    yg_graph *one = expect_trace_preserved(lstm, &m, in, 3, 2, NULL);
    assert_int_equal(yg_graph_num_nodes(one), 1);
    yg_graph *parts = expect_trace_preserved(lstm, &m, in, 3, 2, &through);
    assert_true(yg_graph_num_nodes(parts) > 6); /* linear's parts twice, the gates op */
    yg_graph_release(one);
    yg_graph_release(parts);
    model_release(&m);
    release_all(in, 3);
}

/* Normalise per channel, pool, classify: m's w1/b1 are the classifier. */
static yg_status
cnn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    const model *m = ctx;
    const int64_t k2[] = {2, 2}, out2[] = {2, 2}, s311[] = {3, 1, 1}, sx[] = {2, 3, 8, 8};
    const double mean_values[] = {0.1, 0.2, 0.3};
    yg_tensor *mean = NULL, *me = NULL, *xn = NULL, *xv = NULL, *p = NULL, *r = NULL;
    yg_tensor *a = NULL, *u = NULL, *f = NULL, *y = NULL;
    (void)n_in;
    (void)n_out;
    yg_status st = yg_tensor_from_data(mean_values, s311, 3, YG_FLOAT64, &mean);
    if (st == YG_OK)
        st = yg_expand(mean, sx, 4, &me); /* remove_expands */
    if (st == YG_OK)
        st = yg_sub(in[0], me, 1, &xn);
    if (st == YG_OK)
        st = yg_view(xn, sx, 4, &xv); /* peephole */
    if (st == YG_OK)
        st = yg_max_pool2d(
            xv, k2, 2, NULL, 0, (const int64_t[]){0}, 1, (const int64_t[]){1}, 1, false, &p);
    if (st == YG_OK)
        st = yg_relu(p, &r);
    if (st == YG_OK)
        st = yg_avg_pool2d(r, k2, 2, NULL, 0, (const int64_t[]){0}, 1, false, true, &a);
    if (st == YG_OK)
        st = yg_adaptive_avg_pool2d(a, out2, 2, &u);
    if (st == YG_OK)
        st = yg_flatten(u, 1, -1, &f);
    if (st == YG_OK)
        st = yg_linear(f, m->w1, m->b1, &y);
    if (st == YG_OK)
        st = yg_softmax(y, 1, &out[0]);
    yg_release(mean);
    yg_release(me);
    yg_release(xn);
    yg_release(xv);
    yg_release(p);
    yg_release(r);
    yg_release(a);
    yg_release(u);
    yg_release(f);
    yg_release(y);
    return st;
}

static void test_traced_cnn_like_function_matches_eager_through_every_pass(void **state) {
    (void)state;
    model m;
    int64_t sx[] = {2, 3, 8, 8};
    yg_tensor *x = rand_f64(sx, 4, 21);
    model_init(&m, 12, 4, 1, 22);
    yg_graph *opt = expect_trace_preserved(cnn, &m, &x, 1, 1, NULL);
    char *text = print_ok(opt);
    assert_null(strstr(text, "expand"));
    assert_null(strstr(text, "view"));
    yg_string_release(text);
    yg_graph_release(opt);
    model_release(&m);
    yg_release(x);
}

/* The same checks on graphs written as text, with rewrites the tracer
 * does not produce from the functions above: t(t(x)), a duplicate
 * expression, an LSTM cell spelled out with narrow. */
static const char lstm_ir[] =
    "graph(%x : Tensor(dtype=float64, sizes=[3, 4]), %h : Tensor(dtype=float64, sizes=[3, 5]),\n"
    "      %c : Tensor(dtype=float64, sizes=[3, 5]), %wih : Tensor(dtype=float64, sizes=[20, 4]),\n"
    "      %whh : Tensor(dtype=float64, sizes=[20, 5]), %bih : Tensor(dtype=float64, sizes=[20]),\n"
    "      %bhh : Tensor(dtype=float64, sizes=[20])):\n"
    "  %gi = linear(%x, %wih, %bih)\n"
    "  %gh = linear(%h, %whh, %bhh)\n"
    "  %g = add(%gi, %gh)\n"
    "  %i0 = narrow[dim=1, start=0, length=5](%g)\n"
    "  %f0 = narrow[dim=-1, start=5, length=5](%g)\n"
    "  %g0 = narrow[dim=1, start=10, length=5](%g)\n"
    "  %o0 = narrow[dim=1, start=15, length=5](%g)\n"
    "  %i = sigmoid(%i0)\n"
    "  %f = sigmoid(%f0)\n"
    "  %gg = tanh(%g0)\n"
    "  %o = sigmoid(%o0)\n"
    "  %fc = mul(%f, %c)\n"
    "  %ig = mul(%i, %gg)\n"
    "  %cy = add(%fc, %ig)\n"
    "  %tc = tanh(%cy)\n"
    "  %hy = mul(%o, %tc)\n"
    "  %hy2 = mul(%o, %tc)\n" /* cse */
    "  %t1 = t(%hy2)\n"
    "  %t2 = t(%t1)\n" /* peephole: t(t(x)) */
    "  return (%t2, %cy)\n";

static void test_written_lstm_cell_graph_matches_eager_through_every_pass(void **state) {
    (void)state;
    model m;
    yg_tensor *in[7], *want[2] = {NULL, NULL};
    lstm_setup(&m, in);
    in[3] = m.w1;
    in[4] = m.w2;
    in[5] = m.b1;
    in[6] = m.b2;
    YG_CHECK(lstm(&m, in, 3, want, 2));
    yg_graph *opt = expect_preserved(lstm_ir, in, 7, want, 2);
    assert_int_equal(yg_graph_num_nodes(opt), 16); /* 19 less hy2, t1, t2 */
    yg_graph_release(opt);
    /* Absent biases are prim::None inputs. */
    release_all(want, 2);
    YG_CHECK(yg_lstm_cell(in[0], in[1], in[2], in[3], in[4], NULL, NULL, &want[0], &want[1]));
    opt = expect_preserved("graph(%x, %h, %c, %wih, %whh, %bih, %bhh):\n"
                           "  %n = prim::None()\n"
                           "  %hy, %cy = lstm_cell(%x, %h, %c, %wih, %whh, %n, %n)\n"
                           "  return (%hy, %cy)\n",
                           in,
                           7,
                           want,
                           2);
    yg_graph_release(opt);
    release_all(want, 2);
    model_release(&m);
    release_all(in, 3);
}

/* Sum of fn's first output, backpropagated; returns the gradient of
 * each weight of m (new refs) after dropping earlier ones. */
static void grads_of(yg_tensor *out, model *m, yg_tensor **grads) {
    yg_tensor *loss = NULL;
    yg_tensor *w[4] = {m->w1, m->b1, m->w2, m->b2};
    for (int i = 0; i < 4; i++)
        yg_tensor_zero_grad(w[i]);
    YG_CHECK(yg_sum(out, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    for (int i = 0; i < 4; i++) {
        YG_CHECK(yg_tensor_grad(w[i], &grads[i]));
        assert_non_null(grads[i]);
    }
    yg_release(loss);
}

static void test_gradients_through_the_interpreter_match_eager(void **state) {
    (void)state;
    /* The interpreter calls the public ops, so a graph run with weights
     * that require grad records history: backward through its output
     * gives the eager gradients, before and after the pipeline. */
    model m;
    int64_t sx[] = {4, 3};
    yg_tensor *x = rand_f64(sx, 2, 81), *eager = NULL, *want[4], *got[4], *y = NULL;
    yg_trace_result *r = NULL;
    yg_graph *opt = NULL;
    model_init(&m, 3, 5, 2, 82);
    yg_tensor *w[4] = {m.w1, m.b1, m.w2, m.b2};
    for (int i = 0; i < 4; i++)
        YG_CHECK(yg_tensor_set_requires_grad(w[i], true));
    YG_CHECK(mlp(&m, &x, 1, &eager, 1));
    grads_of(eager, &m, want);
    YG_CHECK(yg_trace(mlp, &m, &x, 1, 1, NULL, &r));
    assert_int_equal(r->n_params, 4);
    YG_CHECK(yg_graph_clone(r->graph, &opt));
    YG_CHECK(yg_graph_optimize(opt));
    const yg_graph *graphs[2] = {r->graph, opt};
    for (int k = 0; k < 2; k++) {
        yg_tensor *all[5] = {x, r->params[0], r->params[1], r->params[2], r->params[3]};
        YG_CHECK(yg_graph_run(graphs[k], all, 5, &y, 1));
        assert_true(yg_tensor_requires_grad(y));
        grads_of(y, &m, got);
        for (int i = 0; i < 4; i++) {
            expect_same_tensor(got[i], want[i], 1e-12, "gradient");
            yg_release(got[i]);
        }
        yg_release(y);
    }
    release_all(want, 4);
    yg_release(eager);
    yg_graph_release(opt);
    yg_trace_result_release(r);
    model_release(&m);
    yg_release(x);
}

typedef struct worker {
    const yg_graph *g;
    yg_tensor *x;
    yg_tensor *out;
    yg_status st;
} worker;

static void *run_worker(void *arg) {
    worker *w = arg;
    for (int i = 0; i < 50 && w->st == YG_OK; i++) {
        yg_release(w->out);
        w->out = NULL;
        w->st = yg_graph_run(w->g, &w->x, 1, &w->out, 1);
    }
    return NULL;
}

static void test_threads_may_run_one_graph_at_once(void **state) {
    (void)state;
    enum { THREADS = 4 };
    int64_t s[] = {3};
    pthread_t tid[THREADS];
    worker w[THREADS];
    yg_graph *g = parse_ok("graph(%x):\n"
                           "  %c = prim::Constant[value=tensor(float64, [3], [1, 2, 3])]()\n"
                           "  %y = mul(%x, %c)\n"
                           "  %z = add(%y, %c)\n"
                           "  return (%z)\n");
    for (int i = 0; i < THREADS; i++) {
        w[i] =
            (worker){g, yg_test_tensor(YG_FLOAT64, s, 1, (const double[]){i, i, i}), NULL, YG_OK};
        assert_int_equal(pthread_create(&tid[i], NULL, run_worker, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(tid[i], NULL);
        YG_CHECK(w[i].st);
        double d = i;
        YG_EXPECT_CLOSE(w[i].out, s, 1, ((const double[]){d + 1, 2 * d + 2, 3 * d + 3}), 0, 0);
        yg_release(w[i].out);
        yg_release(w[i].x);
    }
    yg_graph_release(g);
}

/* ---- memory: values die at their last use ---- */

static void test_values_are_released_at_their_last_use(void **state) {
    (void)state;
    /* A chain of 12 ops on a 1 MiB tensor: at most the current value,
     * the next and the input are alive at once. */
    const int64_t n = 1 << 17;
    const double mib = (double)(n * 8);
    yg_tensor *x = NULL, *y = NULL;
    yg_allocator_stats before, after;
    yg_interp_stats stats;
    yg_graph *g = parse_ok("graph(%x):\n"
                           "  %a = neg(%x)\n  %b = exp(%a)\n  %c = neg(%b)\n  %d = exp(%c)\n"
                           "  %e = neg(%d)\n  %f = sigmoid(%e)\n  %g = neg(%f)\n  %h = exp(%g)\n"
                           "  %i = neg(%h)\n  %j = tanh(%i)\n  %k = neg(%j)\n  %l = sin(%k)\n"
                           "  return (%l)\n");
    YG_CHECK(yg_tensor_full(&n, 1, 0.5, YG_FLOAT64, &x));
    yg_allocator_get_stats(&before);
    YG_CHECK(yg_graph_run(g, &x, 1, &y, 1));
    yg_allocator_get_stats(&after);
    yg__interp_last_stats(&stats);
    assert_int_equal(stats.nodes_run, 12);
    assert_true(stats.peak_live <= 2);
    /* Every intermediate value and the frame's reference to x. */
    assert_int_equal(stats.released_early, 12);
    /* The allocator never held more than x, one value and the next: a
     * graph that kept every value would peak at 13 MiB. */
    double peak = (double)(after.peak_allocated_bytes > before.peak_allocated_bytes
                               ? after.peak_allocated_bytes
                               : before.allocated_bytes);
    if (peak - (double)before.allocated_bytes > 2.5 * mib) {
        print_error("peak grew by %.1f MiB\n", (peak - (double)before.allocated_bytes) / mib);
        fail();
    }
    /* And nothing is left behind but the output. */
    assert_true(after.allocated_bytes - before.allocated_bytes <= (int64_t)(1.1 * mib));
    yg_release(y);
    yg_release(x);
    yg_graph_release(g);
}

static void test_unused_outputs_of_multi_output_nodes_are_released_at_once(void **state) {
    (void)state;
    int64_t sx[] = {3, 4};
    yg_tensor *x = rand_f64(sx, 2, 31), *got[2] = {NULL, NULL}, *wv = NULL, *wi = NULL;
    yg_interp_stats stats;
    yg_graph *g = parse_ok("graph(%x):\n"
                           "  %v, %i = max.dim[dim=1](%x)\n"
                           "  %n = neg(%v)\n"
                           "  %v2, %i2 = min.dim[dim=0, keepdim=1](%x)\n"
                           "  return (%n, %i2)\n");
    YG_CHECK(yg_graph_run(g, &x, 1, got, 2));
    yg__interp_last_stats(&stats);
    /* %i at once, %v after neg, %v2 at once, %x after min.dim. */
    assert_int_equal(stats.released_early, 4);
    YG_CHECK(yg_max_dim(x, 1, false, &wv, &wi));
    yg_release(wi);
    YG_CHECK(yg_neg(wv, &wi));
    expect_same_tensor(got[0], wi, 0, "neg(max.dim values)");
    yg_release(wv);
    yg_release(wi);
    YG_CHECK(yg_min_dim(x, 0, true, &wv, &wi));
    expect_same_tensor(got[1], wi, 0, "min.dim indices");
    assert_int_equal(yg_tensor_dtype(got[1]), YG_INT64);
    yg_release(wv);
    yg_release(wi);
    release_all(got, 2);
    yg_release(x);
    yg_graph_release(g);
}

/* ---- in-place, constants, None ---- */

static void test_in_place_nodes_write_their_input_and_alias_it(void **state) {
    (void)state;
    int64_t s[] = {2, 2};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 2, (const double[]){1, 2, 3, 4});
    yg_tensor *got[3] = {NULL, NULL, NULL};
    yg_graph *g = parse_ok("graph(%x):\n"
                           "  %y = mul.Scalar[other=2](%x)\n"
                           "  %z = add_(%y, %x)\n"             /* y += x: 3x */
                           "  %w = add_.Scalar[other=1](%x)\n" /* writes the caller's x */
                           "  return (%z, %y, %w)\n");
    YG_CHECK(yg_graph_run(g, &x, 1, got, 3));
    YG_EXPECT_CLOSE(got[0], s, 2, ((const double[]){3, 6, 9, 12}), 0, 0);
    assert_ptr_equal(yg_tensor_data(got[0]), yg_tensor_data(got[1]));
    YG_EXPECT_CLOSE(x, s, 2, ((const double[]){2, 3, 4, 5}), 0, 0);
    assert_ptr_equal(yg_tensor_data(got[2]), yg_tensor_data(x));
    release_all(got, 3);
    yg_release(x);
    yg_graph_release(g);
}

static void test_constants_and_none_feed_ops(void **state) {
    (void)state;
    int64_t s[] = {2, 3};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 2, (const double[]){1, 2, 3, 4, 5, 6});
    yg_tensor *got[2] = {NULL, NULL};
    yg_graph *g = parse_ok("graph(%x):\n"
                           "  %w = prim::Constant[value=tensor(float64, [1, 3], [1, 0, -1])]()\n"
                           "  %n = prim::None()\n"
                           "  %y = linear(%x, %w, %n)\n"
                           "  return (%y, %n)\n");
    YG_CHECK(yg_graph_run(g, &x, 1, got, 2));
    YG_EXPECT_CLOSE(got[0], ((const int64_t[]){2, 1}), 2, ((const double[]){-2, -2}), 0, 0);
    assert_null(got[1]);
    yg_release(got[0]);
    yg_release(x);
    yg_graph_release(g);
}

static void test_writing_an_output_never_changes_the_graph(void **state) {
    (void)state;
    /* The constant is a graph output and the input of a view that is
     * one: both come back as copies, so writing them leaves the graph's
     * constant as it was. */
    yg_tensor *got[2] = {NULL, NULL}, *again[2] = {NULL, NULL}, *tmp = NULL;
    yg_graph *g = parse_ok("graph():\n"
                           "  %c = prim::Constant[value=tensor(float64, [2], [1, 2])]()\n"
                           "  %v = unsqueeze[dim=0](%c)\n"
                           "  return (%c, %v)\n");
    YG_CHECK(yg_graph_run(g, NULL, 0, got, 2));
    YG_CHECK(yg_add_scalar_(got[0], 10, 1, &tmp));
    yg_release(tmp);
    YG_CHECK(yg_add_scalar_(got[1], 10, 1, &tmp));
    yg_release(tmp);
    YG_CHECK(yg_graph_run(g, NULL, 0, again, 2));
    YG_EXPECT_CLOSE(again[0], ((const int64_t[]){2}), 1, ((const double[]){1, 2}), 0, 0);
    YG_EXPECT_CLOSE(again[1], ((const int64_t[]){1, 2}), 2, ((const double[]){1, 2}), 0, 0);
    release_all(got, 2);
    release_all(again, 2);
    yg_graph_release(g);
}

static void test_in_place_ops_on_constants_write_a_per_run_copy(void **state) {
    (void)state;
    yg_tensor *a = NULL, *b = NULL;
    yg_graph *g = parse_ok("graph():\n"
                           "  %c = prim::Constant[value=tensor(float64, [2], [1, 2])]()\n"
                           "  %v = mul_.Scalar[other=3](%c)\n"
                           "  return (%v)\n");
    YG_CHECK(yg_graph_run(g, NULL, 0, &a, 1));
    YG_CHECK(yg_graph_run(g, NULL, 0, &b, 1));
    YG_EXPECT_CLOSE(a, ((const int64_t[]){2}), 1, ((const double[]){3, 6}), 0, 0);
    YG_EXPECT_CLOSE(b, ((const int64_t[]){2}), 1, ((const double[]){3, 6}), 0, 0);
    yg_release(a);
    yg_release(b);
    yg_graph_release(g);
}

static void test_attributes_take_schema_defaults_when_absent(void **state) {
    (void)state;
    int64_t s[] = {2, 3};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 2, (const double[]){-1, 2, -3, 4, -5, 6});
    yg_tensor *got[3] = {NULL, NULL, NULL};
    /* leaky_relu's negative_slope=0.01, sum.dim's keepdim=False, cat's dim=0 */
    yg_graph *g = parse_ok("graph(%x):\n"
                           "  %l = leaky_relu(%x)\n"
                           "  %s = sum.dim[dim=1](%x)\n"
                           "  %c = cat(%x, %x, %x)\n"
                           "  return (%l, %s, %c)\n");
    YG_CHECK(yg_graph_run(g, &x, 1, got, 3));
    YG_EXPECT_CLOSE(got[0], s, 2, ((const double[]){-0.01, 2, -0.03, 4, -0.05, 6}), 1e-15, 0);
    YG_EXPECT_CLOSE(got[1], ((const int64_t[]){2}), 1, ((const double[]){-2, 5}), 0, 0);
    assert_int_equal(yg_tensor_size(got[2], 0), 6);
    release_all(got, 3);
    yg_release(x);
    yg_graph_release(g);
}

static void test_scalar_constants_give_zero_dim_tensors(void **state) {
    (void)state;
    /* The text form only writes tensor constants; built through the API
     * a constant may hold an int or a float, which runs as a 0-dim int64
     * or float64 tensor.  One without a value is refused. */
    yg_graph *g = NULL;
    yg_ir_node *ci = NULL, *cf = NULL, *add = NULL, *bad = NULL;
    yg_tensor *got[2] = {NULL, NULL};
    YG_CHECK(yg_graph_create(&g));
    YG_CHECK(yg_graph_add_node(g, "prim::Constant", NULL, 0, 1, &ci));
    YG_CHECK(yg_ir_node_set_int(ci, "value", 3));
    YG_CHECK(yg_graph_add_node(g, "prim::Constant", NULL, 0, 1, &cf));
    YG_CHECK(yg_ir_node_set_float(cf, "value", 0.5));
    yg_ir_value *ins[2] = {yg_ir_node_output(ci, 0), yg_ir_node_output(cf, 0)};
    YG_CHECK(yg_graph_add_node(g, "add", ins, 2, 1, &add));
    yg_ir_value *outs[2] = {yg_ir_node_output(add, 0), yg_ir_node_output(ci, 0)};
    YG_CHECK(yg_graph_set_outputs(g, outs, 2));
    YG_CHECK(yg_graph_run(g, NULL, 0, got, 2));
    assert_int_equal(yg_tensor_dtype(got[0]), YG_FLOAT64);
    assert_int_equal(yg_tensor_ndim(got[0]), 0);
    YG_EXPECT_CLOSE(got[0], NULL, 0, ((const double[]){3.5}), 0, 0);
    assert_int_equal(yg_tensor_dtype(got[1]), YG_INT64);
    release_all(got, 2);
    YG_CHECK(yg_graph_add_node(g, "prim::Constant", NULL, 0, 1, &bad));
    yg_ir_value *bad_out = yg_ir_node_output(bad, 0);
    YG_CHECK(yg_graph_set_outputs(g, &bad_out, 1));
    got[0] = (yg_tensor *)1;
    YG_EXPECT_ERROR(yg_graph_run(g, NULL, 0, got, 1),
                    YG_ERR_INVALID_ARGUMENT,
                    "interpreter: %",
                    "prim::Constant has no value");
    assert_null(got[0]);
    yg_graph_release(g);
}

/* ---- refusals ---- */

static void expect_run_error(const char *text,
                             yg_tensor *const *in,
                             int64_t n_in,
                             int64_t n_out,
                             yg_status code,
                             const char *msg1,
                             const char *msg2) {
    yg_graph *g = parse_ok(text);
    yg_tensor *out[4] = {(yg_tensor *)1, (yg_tensor *)1, (yg_tensor *)1, (yg_tensor *)1};
    YG_EXPECT_ERROR(yg_graph_run(g, in, n_in, out, n_out), code, msg1, msg2);
    for (int64_t i = 0; i < n_out; i++)
        assert_null(out[i]);
    yg_graph_release(g);
}

/* ---- index_put: Tensor values after the Tensor?[] indices ---- */

/* x[idx] = v twice on a clone of in[0] ([4, 3]): an int64 index, then a
 * None entry and a bool mask accumulating in[2] ([2]); and the
 * out-of-place index_put of in[0], which leaves in[0] as it was. */
static yg_status writes_through_indices(void *ctx,
                                        yg_tensor *const *in,
                                        int64_t n_in,
                                        yg_tensor **out,
                                        int64_t n_out) {
    const int64_t at[] = {2, 0}, two[] = {2}, three[] = {3};
    const bool mask[] = {true, false, true};
    yg_tensor *idx = NULL, *m = NULL, *y = NULL, *z = NULL, *tmp = NULL;
    yg_status st;
    (void)ctx;
    (void)n_in;
    (void)n_out;
    st = yg_tensor_from_data(at, two, 1, YG_INT64, &idx);
    if (st == YG_OK)
        st = yg_tensor_from_data(mask, three, 1, YG_BOOL, &m);
    if (st == YG_OK)
        st = yg_clone(in[0], &y);
    if (st == YG_OK)
        st = yg_index_put_(y, (const yg_tensor *const[]){idx}, 1, in[1], false, &tmp);
    yg_release(tmp);
    tmp = NULL;
    if (st == YG_OK)
        st = yg_index_put_(y, (const yg_tensor *const[]){NULL, m}, 2, in[2], true, &tmp);
    yg_release(tmp);
    if (st == YG_OK)
        st = yg_index_put(in[0], (const yg_tensor *const[]){idx}, 1, in[1], true, &z);
    if (st == YG_OK)
        st = yg_mul(y, z, &out[0]);
    if (st == YG_OK)
        out[1] = yg_retain(z);
    yg_release(idx);
    yg_release(m);
    yg_release(y);
    yg_release(z);
    return st;
}

static void test_traced_index_put_matches_eager_through_every_pass(void **state) {
    (void)state;
    int64_t xs[] = {4, 3}, vs[] = {2, 3}, ws[] = {2};
    yg_tensor *in[3] = {rand_f64(xs, 2, 71), rand_f64(vs, 2, 72), rand_f64(ws, 1, 73)};
    double *x0 = yg_test_values(in[0]);
    yg_graph *opt = expect_trace_preserved(writes_through_indices, NULL, in, 3, 2, NULL);
    /* Both writes survive and the caller's x is untouched. */
    int writes = 0;
    for (yg_ir_node *n = yg_graph_first_node(opt); n != NULL; n = yg_ir_node_next(n))
        writes += strcmp(yg_ir_node_kind(n), "index_put_") == 0;
    assert_int_equal(writes, 2);
    YG_EXPECT_CLOSE(in[0], xs, 2, x0, 0, 0);
    free(x0);
    yg_graph_release(opt);
    release_all(in, 3);
}

/* Two equal accumulating writes of %y, and results nobody reads: CSE
 * must not merge them nor DCE drop them, since %y is read afterwards. */
static void test_index_put_writes_are_neither_merged_nor_dropped(void **state) {
    (void)state;
    int64_t xs[] = {4}, vs[] = {2};
    yg_tensor *in[2] = {yg_test_tensor(YG_FLOAT64, xs, 1, (const double[]){1, 2, 3, 4}),
                        yg_test_tensor(YG_FLOAT64, vs, 1, (const double[]){10, 20})};
    /* y = x; y[[0, 2]] += v twice; y[mask] = 5; 2y. */
    yg_tensor *want = yg_test_tensor(YG_FLOAT64, xs, 1, (const double[]){42, 10, 86, 8});
    yg_graph *opt =
        expect_preserved("graph(%x, %v):\n"
                         "  %y = clone(%x)\n"
                         "  %i = prim::Constant[value=tensor(int64, [2], [0, 2])]()\n"
                         "  %a = index_put_[accumulate=1](%y, %i, %v)\n"
                         "  %b = index_put_[accumulate=1](%y, %i, %v)\n"
                         "  %m = prim::Constant[value=tensor(bool, [4], [0, 1, 0, 0])]()\n"
                         "  %f = prim::Constant[value=tensor(float64, [], [5])]()\n"
                         "  %c = index_put_(%y, %m, %f)\n"
                         "  %z = mul.Scalar[other=2](%y)\n"
                         "  return (%z)\n",
                         in,
                         2,
                         &want,
                         1);
    int writes = 0;
    for (yg_ir_node *n = yg_graph_first_node(opt); n != NULL; n = yg_ir_node_next(n))
        writes += strcmp(yg_ir_node_kind(n), "index_put_") == 0;
    assert_int_equal(writes, 3);
    yg_graph_release(opt);
    yg_release(want);
    release_all(in, 2);
}

/* ---- list returns, creation, random and state ops ---- */

/* chunk (a list return), zeros with a device, and batch_norm updating
 * its running stats (ctx). */
static yg_status
chunks_zeros_and_norm(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    yg_tensor *const *stats = ctx;
    const int64_t size[] = {2, 3};
    const yg_device cpu = YG_CPU;
    yg_tensor **pieces = NULL, *sum = NULL, *z = NULL;
    int64_t n_pieces = 0;
    yg_status st;
    (void)n_in;
    (void)n_out;
    st = yg_chunk(in[0], 2, 0, &pieces, &n_pieces);
    if (st == YG_OK)
        st = yg_mul(pieces[0], pieces[1], &sum);
    if (st == YG_OK)
        st = yg_zeros(size, 2, NULL, &cpu, &z);
    if (st == YG_OK)
        st = yg_sub(z, sum, 1, &out[0]);
    if (st == YG_OK)
        st = yg_batch_norm(in[0], NULL, NULL, stats[0], stats[1], true, 0.1, 1e-5, &out[1]);
    yg_release_list(pieces, n_pieces);
    yg_release(sum);
    yg_release(z);
    return st;
}

static void test_list_returns_creation_and_state_ops_match_eager(void **state) {
    (void)state;
    int64_t xs[] = {4, 3}, cs[] = {3};
    yg_tensor *x = rand_f64(xs, 2, 61);
    yg_tensor *stats[2] = {rand_f64(cs, 1, 62), rand_f64(cs, 1, 63)};
    yg_graph *opt = expect_trace_preserved(chunks_zeros_and_norm, stats, &x, 1, 2, NULL);
    yg_graph_release(opt);
    yg_release(x);
    yg_release(stats[0]);
    yg_release(stats[1]);
}

static yg_status draws(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    const int64_t size[] = {3, 2};
    yg_tensor *r = NULL;
    yg_status st;
    (void)ctx;
    (void)n_in;
    (void)n_out;
    st = yg_randn(size, 2, NULL, NULL, NULL, &r);
    if (st == YG_OK)
        st = yg_add(in[0], r, 1, &out[0]);
    yg_release(r);
    return st;
}

/* A traced draw from the default generator draws from it again when the
 * graph runs: the same values after the same seeding. */
static void test_random_nodes_draw_from_the_default_generator(void **state) {
    (void)state;
    int64_t xs[] = {3, 2};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, xs, 2, -1, 1, 64), *want = NULL, *got = NULL;
    yg_trace_result *r = NULL;
    YG_CHECK(yg_trace(draws, NULL, &x, 1, 1, NULL, &r));
    yg_manual_seed(5);
    YG_CHECK(draws(NULL, &x, 1, &want, 1));
    yg_manual_seed(5);
    YG_CHECK(yg_graph_run(r->graph, &x, 1, &got, 1));
    expect_same_tensor(got, want, 0, "randn node");
    yg_release(got);
    /* Constant propagation must not fold the draw into a constant. */
    YG_CHECK(yg_graph_optimize(r->graph));
    yg_manual_seed(5);
    YG_CHECK(yg_graph_run(r->graph, &x, 1, &got, 1));
    expect_same_tensor(got, want, 0, "randn node, optimised");
    yg_release(got);
    YG_CHECK(yg_graph_run(r->graph, &x, 1, &got, 1));
    double *first = yg_test_values(want), *second = yg_test_values(got);
    assert_true(first[0] != second[0]); /* the next run draws new values */
    free(first);
    free(second);
    yg_release(got);
    yg_release(want);
    yg_release(x);
    yg_trace_result_release(r);
}

/* A graph recorded for one number of pieces, run on sizes that give
 * another. */
static void test_a_list_return_of_another_length_is_refused(void **state) {
    (void)state;
    int64_t xs[] = {1, 3};
    yg_tensor *x = rand_f64(xs, 2, 65);
    expect_run_error("graph(%x):\n"
                     "  %a, %b = chunk[chunks=2](%x)\n"
                     "  return (%a, %b)\n",
                     &x,
                     1,
                     2,
                     YG_ERR_SHAPE,
                     "interpreter: %a, %b = chunk(%x)",
                     "chunk: the node has 2 outputs but the op returned 1 tensors");
    yg_release(x);
}

static void test_inputs_are_checked_against_the_graph_types(void **state) {
    (void)state;
    int64_t s23[] = {2, 3}, s34[] = {3, 4};
    yg_tensor *x = rand_f64(s23, 2, 41), *y = rand_f64(s34, 2, 42);
    yg_tensor *xf = yg_test_rand(YG_FLOAT32, s23, 2, 0, 1, 43);
    const char *typed = "graph(%x : Tensor(dtype=float64, device=cpu, sizes=[2, ?])):\n"
                        "  %y = neg(%x)\n"
                        "  return (%y)\n";
    expect_run_error(typed,
                     &xf,
                     1,
                     1,
                     YG_ERR_DTYPE,
                     "interpreter: input 0 %x",
                     "expected dtype float64, got float32");
    expect_run_error(
        typed, &y, 1, 1, YG_ERR_SHAPE, "input 0 %x", "expected sizes [2, ?], got [3, 4]");
    yg_tensor *none = NULL;
    expect_run_error(typed, &none, 1, 1, YG_ERR_INVALID_ARGUMENT, "input 0 %x is NULL", "Tensor");
    yg_tensor *two[2] = {x, x};
    expect_run_error(typed, two, 2, 1, YG_ERR_INVALID_ARGUMENT, "graph has 1 inputs, got 2", NULL);
    expect_run_error(typed, &x, 1, 2, YG_ERR_INVALID_ARGUMENT, "graph has 1 outputs", NULL);
    yg_tensor *out = NULL;
    YG_EXPECT_ERROR(
        yg_graph_run(NULL, &x, 1, &out, 1), YG_ERR_INVALID_ARGUMENT, "interpreter", NULL);
    yg_release(x);
    yg_release(y);
    yg_release(xf);
}

static void test_op_errors_name_the_node(void **state) {
    (void)state;
    int64_t s23[] = {2, 3};
    yg_tensor *in[2] = {rand_f64(s23, 2, 51), rand_f64(s23, 2, 52)};
    /* The first node succeeds; its result must not leak when mm fails. */
    expect_run_error("graph(%a, %b):\n"
                     "  %e = exp(%a)\n"
                     "  %y = mm(%e, %b)\n"
                     "  return (%y, %e)\n",
                     in,
                     2,
                     2,
                     YG_ERR_SHAPE,
                     "interpreter: %y = mm(%e, %b): mm: ",
                     "[2, 3]");
    release_all(in, 2);
}

static void test_bad_attributes_are_refused_naming_op_and_attribute(void **state) {
    (void)state;
    int64_t s23[] = {2, 3};
    yg_tensor *x = rand_f64(s23, 2, 61);
    expect_run_error("graph(%x):\n  %y = sum.dim[dim=1, keepdim=2](%x)\n  return (%y)\n",
                     &x,
                     1,
                     1,
                     YG_ERR_INVALID_ARGUMENT,
                     "interpreter: %y = sum.dim(%x): sum.dim: attribute 'keepdim'",
                     "must be a bool (0 or 1), got int 2");
    expect_run_error("graph(%x):\n  %y = sum.dim[dim=1.5](%x)\n  return (%y)\n",
                     &x,
                     1,
                     1,
                     YG_ERR_INVALID_ARGUMENT,
                     "sum.dim: attribute 'dim' must be an int list, got float 1.5",
                     NULL);
    expect_run_error("graph(%x):\n  %y = sum.dim(%x)\n  return (%y)\n",
                     &x,
                     1,
                     1,
                     YG_ERR_INVALID_ARGUMENT,
                     "sum.dim: missing attribute 'dim' (int[], no default)",
                     NULL);
    expect_run_error("graph(%x):\n  %y = div.mode[rounding_mode=3](%x, %x)\n  return (%y)\n",
                     &x,
                     1,
                     1,
                     YG_ERR_INVALID_ARGUMENT,
                     "div.mode: attribute 'rounding_mode' must be \"trunc\" or \"floor\", got int 3",
                     NULL);
    expect_run_error("graph(%x):\n  %y = div.mode[rounding_mode=\"round\"](%x, %x)\n  return (%y)\n",
                     &x,
                     1,
                     1,
                     YG_ERR_INVALID_ARGUMENT,
                     "div.mode: attribute 'rounding_mode' must be \"trunc\" or \"floor\", got \"round\"",
                     NULL);
    expect_run_error("graph(%x):\n  %y = div.mode(%x, %x)\n  return (%y)\n",
                     &x,
                     1,
                     1,
                     YG_ERR_INVALID_ARGUMENT,
                     "div.mode: missing attribute 'rounding_mode' (\"trunc\" or \"floor\", no default)",
                     NULL);
    expect_run_error("graph(%x):\n  %y = mul.Scalar[other=\"two\"](%x)\n  return (%y)\n",
                     &x,
                     1,
                     1,
                     YG_ERR_INVALID_ARGUMENT,
                     "mul.Scalar: attribute 'other' must be an int or a float, got str",
                     NULL);
    yg_release(x);
}

static void test_subgraph_nodes_run_or_are_refused_clearly(void **state) {
    (void)state;
    int64_t s[] = {2};
    yg_tensor *x = rand_f64(s, 1, 71);
    /* A FusionGroup runs its subgraph (as one kernel, or interpreted). */
    {
        yg_graph *fg = NULL;
        yg_tensor *fy = NULL, *fref = NULL;
        const char *ftext = "graph(%x):\n"
                            "  %y = prim::FusionGroup[subgraph=graph(%a):\n"
                            "      %b = neg(%a)\n"
                            "      return (%b)\n"
                            "  ](%x)\n"
                            "  return (%y)\n";
        YG_CHECK(yg_graph_parse(ftext, (int64_t)strlen(ftext), &fg));
        YG_CHECK(yg_graph_run(fg, &x, 1, &fy, 1));
        YG_CHECK(yg_neg(x, &fref));
        double *fa = yg_test_values(fy), *fb = yg_test_values(fref);
        assert_memory_equal(fa, fb, 2 * sizeof(double));
        free(fa);
        free(fb);
        yg_release(fy);
        yg_release(fref);
        yg_graph_release(fg);
    }
    /* A DifferentiableGraph without df runs f, its ops recording eager
     * history; with a df whose attributes do not fit, it is refused. */
    yg_graph *g = NULL;
    yg_tensor *y = NULL, *ref = NULL;
    const char *text = "graph(%x):\n"
                       "  %y = prim::DifferentiableGraph[f=graph(%a):\n"
                       "      %b = neg(%a)\n"
                       "      return (%b)\n"
                       "  ](%x)\n"
                       "  return (%y)\n";
    YG_CHECK(yg_graph_parse(text, (int64_t)strlen(text), &g));
    YG_CHECK(yg_graph_run(g, &x, 1, &y, 1));
    YG_CHECK(yg_neg(x, &ref));
    double *a = yg_test_values(y), *b = yg_test_values(ref);
    assert_memory_equal(a, b, 2 * sizeof(double));
    free(a);
    free(b);
    yg_release(y);
    yg_release(ref);
    yg_graph_release(g);
    expect_run_error("graph(%x):\n"
                     "  %y = prim::DifferentiableGraph[df=graph(%g):\n"
                     "      return (%g)\n"
                     "  , f=graph(%a):\n"
                     "      %b = neg(%a)\n"
                     "      return (%b)\n"
                     "  ](%x)\n"
                     "  return (%y)\n",
                     &x,
                     1,
                     1,
                     YG_ERR_INVALID_ARGUMENT,
                     "interpreter: %y = prim::DifferentiableGraph(%x)",
                     "captures");
    yg_release(x);
}

static void test_every_op_has_a_boxed_entry_in_table_order(void **state) {
    (void)state;
    /* The boxed table is parallel to the op table; an op without a
     * function says why. */
    assert_int_equal(yg__boxed_ops_count, yg__ops_count);
    for (int32_t i = 0; i < yg__ops_count; i++) {
        assert_string_equal(yg__boxed_ops[i].name, yg__ops[i].name);
        assert_true((yg__boxed_ops[i].fn == NULL) == (yg__boxed_ops[i].unsupported != NULL));
    }
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_traced_mlp_matches_eager_through_every_pass),
        cmocka_unit_test(test_traced_lstm_cell_matches_eager_as_one_node_and_traced_through),
        cmocka_unit_test(test_traced_cnn_like_function_matches_eager_through_every_pass),
        cmocka_unit_test(test_written_lstm_cell_graph_matches_eager_through_every_pass),
        cmocka_unit_test(test_gradients_through_the_interpreter_match_eager),
        cmocka_unit_test(test_threads_may_run_one_graph_at_once),
        cmocka_unit_test(test_values_are_released_at_their_last_use),
        cmocka_unit_test(test_unused_outputs_of_multi_output_nodes_are_released_at_once),
        cmocka_unit_test(test_in_place_nodes_write_their_input_and_alias_it),
        cmocka_unit_test(test_constants_and_none_feed_ops),
        cmocka_unit_test(test_writing_an_output_never_changes_the_graph),
        cmocka_unit_test(test_in_place_ops_on_constants_write_a_per_run_copy),
        cmocka_unit_test(test_attributes_take_schema_defaults_when_absent),
        cmocka_unit_test(test_scalar_constants_give_zero_dim_tensors),
        cmocka_unit_test(test_list_returns_creation_and_state_ops_match_eager),
        cmocka_unit_test(test_random_nodes_draw_from_the_default_generator),
        cmocka_unit_test(test_a_list_return_of_another_length_is_refused),
        cmocka_unit_test(test_inputs_are_checked_against_the_graph_types),
        cmocka_unit_test(test_op_errors_name_the_node),
        cmocka_unit_test(test_bad_attributes_are_refused_naming_op_and_attribute),
        cmocka_unit_test(test_subgraph_nodes_run_or_are_refused_clearly),
        cmocka_unit_test(test_every_op_has_a_boxed_entry_in_table_order),
        cmocka_unit_test(test_traced_index_put_matches_eager_through_every_pass),
        cmocka_unit_test(test_index_put_writes_are_neither_merged_nor_dropped),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
