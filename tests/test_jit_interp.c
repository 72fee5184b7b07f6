/*
 * test_jit_interp.c - the graph interpreter (yg_graph_run) and the boxed
 * op tables it calls through.
 *
 * Behaviour preservation: for an MLP, an LSTM cell and a small CNN-like
 * function, the graph's result equals the eager result of the same C
 * function, before any pass, after each pass of the standard pipeline in
 * turn, and after yg_graph_optimize on a fresh copy.  Then the contract:
 * values freed at their last use (live-value count and allocator peak),
 * in-place nodes, multi-output nodes, constants and None, input checks
 * and the messages of every refusal, with all outputs NULL on failure.
 */
#include "jit/boxing.h"
#include "jit/interpreter.h"
#include "jit/ir.h"
#include "testutil.h"

#include <math.h>
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

/* Behaviour preservation of text's graph: equal to want before the
 * passes, after each pass of the pipeline (applied in turn), and after
 * yg_graph_optimize of a fresh copy; returns the optimised graph. */
static yg_graph *expect_preserved(const char *text,
                                  yg_tensor *const *in,
                                  int64_t n_in,
                                  yg_tensor *const *want,
                                  int64_t n_out) {
    yg_graph *g = parse_ok(text), *opt = NULL;
    expect_run_matches(g, in, n_in, want, n_out, "parsing");
    YG_CHECK(yg_graph_clone(g, &opt));
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

static yg_tensor *rand_f64(const int64_t *sizes, int64_t ndim, uint64_t seed) {
    return yg_test_rand(YG_FLOAT64, sizes, ndim, -1, 1, seed);
}

static void release_all(yg_tensor **t, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        yg_release(t[i]);
}

/* ---- behaviour preservation ---- */

/* The eager function the MLP graph below spells out. */
static yg_status mlp(yg_tensor *const *in, yg_tensor **out) {
    yg_tensor *h = NULL, *a = NULL, *y = NULL, *s = NULL;
    yg_status st = yg_linear(in[0], in[1], in[2], &h);
    if (st == YG_OK)
        st = yg_relu(h, &a);
    if (st == YG_OK)
        st = yg_linear(a, in[3], in[4], &y);
    if (st == YG_OK)
        st = yg_mul_scalar(y, 4.0, &s);
    if (st == YG_OK)
        st = yg_log_softmax(s, 1, out);
    yg_release(h);
    yg_release(a);
    yg_release(y);
    yg_release(s);
    return st;
}

static const char mlp_ir[] =
    "graph(%x : Tensor(dtype=float64, sizes=[4, 3]), %w1 : Tensor(dtype=float64, sizes=[5, 3]),\n"
    "      %b1 : Tensor(dtype=float64, sizes=[5]), %w2 : Tensor(dtype=float64, sizes=[2, 5]),\n"
    "      %b2 : Tensor(dtype=float64, sizes=[2])):\n"
    "  %h = linear(%x, %w1, %b1)\n"
    "  %a = relu(%h)\n"
    "  %y = linear(%a, %w2, %b2)\n"
    "  %one = prim::Constant[value=tensor(float64, [], [1])]()\n"
    "  %y1 = mul(%y, %one)\n" /* peephole: x * 1 */
    "  %two = prim::Constant[value=tensor(float64, [], [2])]()\n"
    "  %two2 = prim::Constant[value=tensor(float64, [], [2])]()\n"
    "  %four = mul(%two, %two2)\n" /* constants to pool and fold */
    "  %s = mul(%y1, %four)\n"
    "  %dead = exp(%s)\n" /* dce */
    "  %p = log_softmax[dim=1](%s)\n"
    "  return (%p)\n";

static void test_mlp_graph_matches_eager_through_every_pass(void **state) {
    (void)state;
    int64_t sx[] = {4, 3}, sw1[] = {5, 3}, sb1[] = {5}, sw2[] = {2, 5}, sb2[] = {2};
    yg_tensor *in[5] = {rand_f64(sx, 2, 1),
                        rand_f64(sw1, 2, 2),
                        rand_f64(sb1, 1, 3),
                        rand_f64(sw2, 2, 4),
                        rand_f64(sb2, 1, 5)};
    yg_tensor *want = NULL;
    YG_CHECK(mlp(in, &want));
    yg_graph *opt = expect_preserved(mlp_ir, in, 5, &want, 1);
    /* The pipeline did something: the identity, the duplicate constant
     * and the dead exp are gone. */
    assert_true(yg_graph_num_nodes(opt) < 11);
    yg_graph_release(opt);
    yg_release(want);
    release_all(in, 5);
}

/* The eager LSTM cell: the composite op itself. */
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

static void lstm_inputs(yg_tensor **in) {
    int64_t sx[] = {3, 4}, sh[] = {3, 5}, sih[] = {20, 4}, shh[] = {20, 5}, sb[] = {20};
    in[0] = rand_f64(sx, 2, 11);
    in[1] = rand_f64(sh, 2, 12);
    in[2] = rand_f64(sh, 2, 13);
    in[3] = rand_f64(sih, 2, 14);
    in[4] = rand_f64(shh, 2, 15);
    in[5] = rand_f64(sb, 1, 16);
    in[6] = rand_f64(sb, 1, 17);
}

static void test_lstm_cell_graph_matches_eager_through_every_pass(void **state) {
    (void)state;
    yg_tensor *in[7], *want[2] = {NULL, NULL};
    lstm_inputs(in);
    YG_CHECK(yg_lstm_cell(in[0], in[1], in[2], in[3], in[4], in[5], in[6], &want[0], &want[1]));
    yg_graph *opt = expect_preserved(lstm_ir, in, 7, want, 2);
    yg_graph_release(opt);
    release_all(want, 2);
    release_all(in, 7);
}

static void test_lstm_cell_node_runs_as_a_multi_output_op(void **state) {
    (void)state;
    yg_tensor *in[7], *want[2] = {NULL, NULL};
    lstm_inputs(in);
    YG_CHECK(yg_lstm_cell(in[0], in[1], in[2], in[3], in[4], NULL, NULL, &want[0], &want[1]));
    /* Absent biases are prim::None inputs. */
    yg_graph *opt = expect_preserved("graph(%x, %h, %c, %wih, %whh, %bih, %bhh):\n"
                                     "  %n = prim::None()\n"
                                     "  %hy, %cy = lstm_cell(%x, %h, %c, %wih, %whh, %n, %n)\n"
                                     "  return (%hy, %cy)\n",
                                     in,
                                     7,
                                     want,
                                     2);
    yg_graph_release(opt);
    release_all(want, 2);
    release_all(in, 7);
}

/* The eager CNN-like function the graph below spells out: normalise
 * per channel, pool, classify. */
static yg_status cnn(yg_tensor *const *in, yg_tensor **out) {
    const int64_t k2[] = {2, 2}, out2[] = {2, 2}, s311[] = {3, 1, 1};
    yg_tensor *mean = yg_test_tensor(YG_FLOAT64, s311, 3, (const double[]){0.1, 0.2, 0.3});
    yg_tensor *xn = NULL, *p = NULL, *r = NULL, *a = NULL, *u = NULL, *f = NULL, *y = NULL;
    yg_status st = yg_sub(in[0], mean, 1, &xn);
    if (st == YG_OK)
        st = yg_max_pool2d(
            xn, k2, 2, NULL, 0, (const int64_t[]){0}, 1, (const int64_t[]){1}, 1, false, &p);
    if (st == YG_OK)
        st = yg_relu(p, &r);
    if (st == YG_OK)
        st = yg_avg_pool2d(r, k2, 2, NULL, 0, (const int64_t[]){0}, 1, false, true, &a);
    if (st == YG_OK)
        st = yg_adaptive_avg_pool2d(a, out2, 2, &u);
    if (st == YG_OK)
        st = yg_flatten(u, 1, -1, &f);
    if (st == YG_OK)
        st = yg_linear(f, in[1], in[2], &y);
    if (st == YG_OK)
        st = yg_softmax(y, 1, out);
    yg_release(mean);
    yg_release(xn);
    yg_release(p);
    yg_release(r);
    yg_release(a);
    yg_release(u);
    yg_release(f);
    yg_release(y);
    return st;
}

static const char cnn_ir[] =
    "graph(%x : Tensor(dtype=float64, sizes=[2, 3, 8, 8]),\n"
    "      %w : Tensor(dtype=float64, sizes=[4, 12]), %b : Tensor(dtype=float64, sizes=[4])):\n"
    "  %mean = prim::Constant[value=tensor(float64, [3, 1, 1], [0.1, 0.2, 0.3])]()\n"
    "  %me = expand[size=[2, 3, 8, 8]](%mean)\n" /* remove_expands */
    "  %xn = sub(%x, %me)\n"
    "  %xv = view[size=[2, 3, 8, 8]](%xn)\n" /* peephole: same sizes */
    "  %p = max_pool2d[kernel_size=[2, 2]](%xv)\n"
    "  %r = relu(%p)\n"
    "  %a = avg_pool2d[kernel_size=[2, 2]](%r)\n"
    "  %u = adaptive_avg_pool2d[output_size=[2, 2]](%a)\n"
    "  %f = flatten[start_dim=1](%u)\n"
    "  %wt = t(%w)\n"
    "  %m = mm(%f, %wt)\n"
    "  %y = add(%m, %b)\n"
    "  %s = softmax[dim=1](%y)\n"
    "  return (%s)\n";

static void test_cnn_like_graph_matches_eager_through_every_pass(void **state) {
    (void)state;
    int64_t sx[] = {2, 3, 8, 8}, sw[] = {4, 12}, sb[] = {4};
    yg_tensor *in[3] = {rand_f64(sx, 4, 21), rand_f64(sw, 2, 22), rand_f64(sb, 1, 23)};
    yg_tensor *want = NULL;
    YG_CHECK(cnn(in, &want));
    yg_graph *opt = expect_preserved(cnn_ir, in, 3, &want, 1);
    char *text = print_ok(opt);
    assert_null(strstr(text, "expand"));
    assert_null(strstr(text, "view"));
    yg_string_release(text);
    yg_graph_release(opt);
    yg_release(want);
    release_all(in, 3);
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
                     "div.mode: attribute 'rounding_mode' must be a str, got int 3",
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

static void test_subgraph_nodes_are_refused_clearly(void **state) {
    (void)state;
    int64_t s[] = {2};
    yg_tensor *x = rand_f64(s, 1, 71);
    expect_run_error("graph(%x):\n"
                     "  %y = prim::FusionGroup[subgraph=graph(%a):\n"
                     "      %b = neg(%a)\n"
                     "      return (%b)\n"
                     "  ](%x)\n"
                     "  return (%y)\n",
                     &x,
                     1,
                     1,
                     YG_ERR_NOT_IMPLEMENTED,
                     "interpreter: %y = prim::FusionGroup(%x)",
                     "not run by the interpreter yet");
    expect_run_error("graph(%x):\n"
                     "  %y = prim::DifferentiableGraph[f=graph(%a):\n"
                     "      %b = neg(%a)\n"
                     "      return (%b)\n"
                     "  ](%x)\n"
                     "  return (%y)\n",
                     &x,
                     1,
                     1,
                     YG_ERR_NOT_IMPLEMENTED,
                     "prim::DifferentiableGraph nodes are not run",
                     NULL);
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
        cmocka_unit_test(test_mlp_graph_matches_eager_through_every_pass),
        cmocka_unit_test(test_lstm_cell_graph_matches_eager_through_every_pass),
        cmocka_unit_test(test_lstm_cell_node_runs_as_a_multi_output_op),
        cmocka_unit_test(test_cnn_like_graph_matches_eager_through_every_pass),
        cmocka_unit_test(test_values_are_released_at_their_last_use),
        cmocka_unit_test(test_unused_outputs_of_multi_output_nodes_are_released_at_once),
        cmocka_unit_test(test_in_place_nodes_write_their_input_and_alias_it),
        cmocka_unit_test(test_constants_and_none_feed_ops),
        cmocka_unit_test(test_writing_an_output_never_changes_the_graph),
        cmocka_unit_test(test_in_place_ops_on_constants_write_a_per_run_copy),
        cmocka_unit_test(test_attributes_take_schema_defaults_when_absent),
        cmocka_unit_test(test_inputs_are_checked_against_the_graph_types),
        cmocka_unit_test(test_op_errors_name_the_node),
        cmocka_unit_test(test_bad_attributes_are_refused_naming_op_and_attribute),
        cmocka_unit_test(test_subgraph_nodes_are_refused_clearly),
        cmocka_unit_test(test_every_op_has_a_boxed_entry_in_table_order),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
