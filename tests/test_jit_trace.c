/*
 * test_jit_trace.c - yg_trace: the graphs it records for an MLP, an LSTM
 * cell (composite, and traced through), a CNN-like function, in-place
 * ops and views; parameters as inputs, constants, scalar attributes;
 * shapes only in types; the round trip through text; and its failures,
 * each followed by a trace that works.
 */
#include "jit/tracer.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---- */

/* The node kinds of g joined by ',' ("linear,relu"); caller frees. */
static char *kinds_of(const yg_graph *g) {
    size_t cap = 16, len = 0;
    char *s = calloc(cap, 1);
    assert_non_null(s);
    for (yg_ir_node *n = yg_graph_first_node(g); n != NULL; n = yg_ir_node_next(n)) {
        const char *k = yg_ir_node_kind(n);
        size_t need = len + strlen(k) + 2;
        if (need > cap) {
            cap = need * 2;
            s = realloc(s, cap);
            assert_non_null(s);
        }
        len += (size_t)sprintf(s + len, "%s%s", len > 0 ? "," : "", k);
    }
    return s;
}

static void __attribute__((unused)) expect_kinds(const yg_graph *g, const char *expected) {
    char *got = kinds_of(g);
    if (strcmp(got, expected) != 0)
        print_error("node kinds: got %s, expected %s\n", got, expected);
    assert_string_equal(got, expected);
    free(got);
}

static void expect_text(const yg_graph *g, const char *expected) {
    char *got = NULL;
    YG_CHECK(yg_graph_print(g, &got));
    if (strcmp(got, expected) != 0)
        print_error("got:\n%s\nexpected:\n%s\n", got, expected);
    assert_string_equal(got, expected);
    yg_string_release(got);
}

/* Asserts print(parse(print(g))) == print(g) and that g lints clean. */
static void expect_round_trip(const yg_graph *g) {
    char *text = NULL, *again = NULL;
    yg_graph *parsed = NULL;
    YG_CHECK(yg_graph_lint(g));
    YG_CHECK(yg_graph_print(g, &text));
    YG_CHECK(yg_graph_parse(text, (int64_t)strlen(text), &parsed));
    YG_CHECK(yg_graph_lint(parsed));
    YG_CHECK(yg_graph_print(parsed, &again));
    if (strcmp(text, again) != 0)
        print_error("printed:\n%s\nreparsed:\n%s\n", text, again);
    assert_string_equal(text, again);
    yg_string_release(text);
    yg_string_release(again);
    yg_graph_release(parsed);
}

static yg_tensor *rand_tensor(const int64_t *sizes, int64_t ndim, uint64_t seed) {
    return yg_test_rand(YG_FLOAT32, sizes, ndim, -1, 1, seed);
}

/* Asserts a and b hold the same sizes and values. */
static void expect_same_values(const yg_tensor *a, const yg_tensor *b) {
    double *want = yg_test_values(b);
    YG_EXPECT_CLOSE(a, yg_tensor_sizes(b), yg_tensor_ndim(b), want, 0, 0);
    free(want);
}

/* ---- an MLP: linear, relu, linear, log_softmax ---- */

typedef struct mlp {
    yg_tensor *w1, *b1, *w2, *b2;
} mlp;

static mlp mlp_create(void) {
    const int64_t w1s[] = {4, 3}, b1s[] = {4}, w2s[] = {2, 4}, b2s[] = {2};
    mlp m = {rand_tensor(w1s, 2, 11), rand_tensor(b1s, 1, 12), rand_tensor(w2s, 2, 13),
             rand_tensor(b2s, 1, 14)};
    YG_CHECK(yg_tensor_set_requires_grad(m.w1, true));
    YG_CHECK(yg_tensor_set_requires_grad(m.b1, true));
    YG_CHECK(yg_tensor_set_requires_grad(m.w2, true));
    YG_CHECK(yg_tensor_set_requires_grad(m.b2, true));
    return m;
}

static void mlp_release(mlp *m) {
    yg_release(m->w1);
    yg_release(m->b1);
    yg_release(m->w2);
    yg_release(m->b2);
}

static yg_status mlp_forward(void *ctx,
                             yg_tensor *const *inputs,
                             int64_t n_inputs,
                             yg_tensor **outputs,
                             int64_t n_outputs) {
    const mlp *m = ctx;
    yg_tensor *h = NULL, *r = NULL, *o = NULL;
    yg_status st;
    (void)n_inputs;
    (void)n_outputs;
    st = yg_linear(inputs[0], m->w1, m->b1, &h);
    if (st == YG_OK)
        st = yg_relu(h, &r);
    if (st == YG_OK)
        st = yg_linear(r, m->w2, m->b2, &o);
    if (st == YG_OK)
        st = yg_log_softmax(o, 1, &outputs[0]);
    yg_release(h);
    yg_release(r);
    yg_release(o);
    return st;
}

static void test_trace_records_an_mlp_with_its_weights_as_parameters(void **state) {
    (void)state;
    const int64_t xs[] = {5, 3};
    mlp m = mlp_create();
    yg_tensor *x = rand_tensor(xs, 2, 1), *eager = NULL;
    yg_trace_result *r = NULL;
    YG_CHECK(yg_trace(mlp_forward, &m, &x, 1, 1, NULL, &r));
    expect_text(r->graph,
                "graph(%0 : Tensor(dtype=float32, device=cpu, sizes=[5, 3], requires_grad=false), "
                "param %1 : Tensor(dtype=float32, device=cpu, sizes=[4, 3], requires_grad=true), "
                "param %2 : Tensor(dtype=float32, device=cpu, sizes=[4], requires_grad=true), "
                "param %5 : Tensor(dtype=float32, device=cpu, sizes=[2, 4], requires_grad=true), "
                "param %6 : Tensor(dtype=float32, device=cpu, sizes=[2], requires_grad=true)):\n"
                "  %3 : Tensor(dtype=float32, device=cpu, sizes=[5, 4], requires_grad=true) = "
                "linear(%0, %1, %2)\n"
                "  %4 : Tensor(dtype=float32, device=cpu, sizes=[5, 4], requires_grad=true) = "
                "relu(%3)\n"
                "  %7 : Tensor(dtype=float32, device=cpu, sizes=[5, 2], requires_grad=true) = "
                "linear(%4, %5, %6)\n"
                "  %8 : Tensor(dtype=float32, device=cpu, sizes=[5, 2], requires_grad=true) = "
                "log_softmax[dim=1](%7)\n"
                "  return (%8)\n");
    /* The parameters are the tensors the function read, in order of use. */
    assert_int_equal(r->n_params, 4);
    assert_ptr_equal(r->params[0], m.w1);
    assert_ptr_equal(r->params[1], m.b1);
    assert_ptr_equal(r->params[2], m.w2);
    assert_ptr_equal(r->params[3], m.b2);
    assert_false(yg_ir_value_is_param(yg_graph_input(r->graph, 0)));
    assert_true(yg_ir_value_is_param(yg_graph_input(r->graph, 1)));
    /* The eager outputs are what the function computes untraced. */
    assert_int_equal(r->n_outputs, 1);
    yg_tensor *outs[1] = {NULL};
    YG_CHECK(mlp_forward(&m, &x, 1, outs, 1));
    eager = outs[0];
    expect_same_values(r->outputs[0], eager);
    /* They keep their autograd history: a backward reaches the weights. */
    assert_true(yg_tensor_requires_grad(r->outputs[0]));
    expect_round_trip(r->graph);
    yg_release(eager);
    yg_trace_result_release(r);
    yg_release(x);
    mlp_release(&m);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_records_an_mlp_with_its_weights_as_parameters),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
