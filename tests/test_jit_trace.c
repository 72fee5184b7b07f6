/*
 * test_jit_trace.c - yg_trace: the graphs it records for an MLP, an LSTM
 * cell (composite, and traced through), a CNN-like function, in-place
 * ops and views; parameters as inputs, constants, scalar attributes;
 * shapes only in types; the round trip through text; and its failures,
 * each followed by a trace that works.  Shape propagation over traced
 * graphs is tested in test_jit_trace_types.c.
 */
#include "core/observer.h"
#include "jit/ir/ir.h"
#include "jit_trace_util.h"
#include "testutil.h"
#include "yagrad/ops_activations.h"
#include "yagrad/ops_advanced_indexing.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_average_pooling.h"
#include "yagrad/ops_adaptive_average_pooling.h"
#include "yagrad/ops_creation.h"
#include "yagrad/ops_inplace_arithmetic.h"
#include "yagrad/ops_inplace_fill.h"
#include "yagrad/ops_join_split.h"
#include "yagrad/ops_layers.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_norms.h"
#include "yagrad/ops_padding.h"
#include "yagrad/ops_pooling.h"
#include "yagrad/ops_random.h"
#include "yagrad/ops_resampling.h"
#include "yagrad/ops_softmax.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_unary_math.h"
#include "yagrad/ops_views.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- an MLP: linear, relu, linear, log_softmax ---- */

typedef struct mlp {
    yg_tensor *w1, *b1, *w2, *b2;
} mlp;

static mlp mlp_create(void) {
    const int64_t w1s[] = {4, 3}, b1s[] = {4}, w2s[] = {2, 4}, b2s[] = {2};
    mlp m = {rand_tensor(w1s, 2, 11),
             rand_tensor(b1s, 1, 12),
             rand_tensor(w2s, 2, 13),
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
    expect_types_recomputed(r->graph, 0);
    yg_release(eager);
    yg_trace_result_release(r);
    yg_release(x);
    mlp_release(&m);
}

/* ---- an LSTM cell: composite, recorded as itself or traced through ---- */

typedef struct lstm {
    yg_tensor *w_ih, *w_hh, *b_ih, *b_hh;
} lstm;

static lstm lstm_create(void) {
    const int64_t wis[] = {8, 3}, whs[] = {8, 2}, bs[] = {8};
    lstm l = {rand_tensor(wis, 2, 21),
              rand_tensor(whs, 2, 22),
              rand_tensor(bs, 1, 23),
              rand_tensor(bs, 1, 24)};
    return l;
}

static void lstm_release(lstm *l) {
    yg_release(l->w_ih);
    yg_release(l->w_hh);
    yg_release(l->b_ih);
    yg_release(l->b_hh);
}

static yg_status lstm_step(void *ctx,
                           yg_tensor *const *inputs,
                           int64_t n_inputs,
                           yg_tensor **outputs,
                           int64_t n_outputs) {
    const lstm *l = ctx;
    (void)n_inputs;
    (void)n_outputs;
    return yg_lstm_cell(inputs[0],
                        inputs[1],
                        inputs[2],
                        l->w_ih,
                        l->w_hh,
                        l->b_ih,
                        l->b_hh,
                        &outputs[0],
                        &outputs[1]);
}

static void test_trace_records_a_composite_op_as_one_node(void **state) {
    (void)state;
    const int64_t xs[] = {2, 3}, hs[] = {2, 2};
    lstm l = lstm_create();
    yg_tensor *in[3] = {rand_tensor(xs, 2, 1), rand_tensor(hs, 2, 2), rand_tensor(hs, 2, 3)};
    yg_trace_result *r = NULL;
    YG_CHECK(yg_trace(lstm_step, &l, in, 3, 2, NULL, &r));
    expect_kinds(r->graph, "lstm_cell");
    yg_ir_node *cell = yg_graph_first_node(r->graph);
    assert_int_equal(yg_ir_node_num_inputs(cell), 7);
    assert_int_equal(yg_ir_node_num_outputs(cell), 2);
    assert_int_equal(yg_graph_num_inputs(r->graph), 7); /* 3 inputs, 4 parameters */
    assert_int_equal(r->n_params, 4);
    assert_ptr_equal(yg_graph_output(r->graph, 0), yg_ir_node_output(cell, 0));
    assert_ptr_equal(yg_graph_output(r->graph, 1), yg_ir_node_output(cell, 1));
    expect_types_recomputed(r->graph, 0);
    yg_trace_result_release(r);
    for (int i = 0; i < 3; i++)
        yg_release(in[i]);
    lstm_release(&l);
}

static void test_trace_through_composites_records_their_parts(void **state) {
    (void)state;
    const int64_t xs[] = {2, 3}, hs[] = {2, 2};
    lstm l = lstm_create();
    yg_tensor *in[3] = {rand_tensor(xs, 2, 1), rand_tensor(hs, 2, 2), rand_tensor(hs, 2, 3)};
    yg_trace_result *composite = NULL, *parts = NULL;
    yg_trace_options opts = {.trace_through_composites = true};
    YG_CHECK(yg_trace(lstm_step, &l, in, 3, 2, NULL, &composite));
    YG_CHECK(yg_trace(lstm_step, &l, in, 3, 2, &opts, &parts));
    char *kinds = kinds_of(parts->graph);
    /* lstm_cell's parts: linear's, and the fused gates op (a kernel) */
    assert_null(strstr(kinds, "lstm_cell,"));
    assert_non_null(strstr(kinds, "lstm_cell_gates"));
    assert_non_null(strstr(kinds, "mm"));
    assert_true(yg_graph_num_nodes(parts->graph) > 5);
    /* The parts may be composites too (linear): none is left unexpanded
     * and none is a composite's inner call recorded twice. */
    assert_null(strstr(kinds, "linear"));
    free(kinds);
    /* Same parameters, same outputs. */
    assert_int_equal(parts->n_params, 4);
    expect_same_values(parts->outputs[0], composite->outputs[0]);
    expect_same_values(parts->outputs[1], composite->outputs[1]);
    expect_types_recomputed(parts->graph, 0);
    yg_trace_result_release(composite);
    yg_trace_result_release(parts);
    for (int i = 0; i < 3; i++)
        yg_release(in[i]);
    lstm_release(&l);
}

/* ---- a CNN-like function: pad, pools, upsample, flatten, linear ---- */

static yg_status cnn_forward(void *ctx,
                             yg_tensor *const *inputs,
                             int64_t n_inputs,
                             yg_tensor **outputs,
                             int64_t n_outputs) {
    yg_tensor *w = ctx;
    yg_tensor *t[7] = {NULL};
    const int64_t pad[] = {1, 1, 1, 1}, k2[] = {2, 2}, one[] = {1, 1}, up[] = {4, 4};
    const int64_t no[] = {0, 0};
    yg_status st;
    (void)n_inputs;
    (void)n_outputs;
    st = yg_constant_pad_nd(inputs[0], pad, 4, 0.5, &t[0]);
    if (st == YG_OK)
        st = yg_max_pool2d(t[0], k2, 2, k2, 2, no, 2, one, 2, false, &t[1]);
    if (st == YG_OK)
        st = yg_relu(t[1], &t[2]);
    if (st == YG_OK)
        st = yg_upsample_nearest2d(t[2], up, 2, &t[3]);
    if (st == YG_OK)
        st = yg_avg_pool2d(t[3], k2, 2, k2, 2, no, 2, false, true, &t[4]);
    if (st == YG_OK)
        st = yg_adaptive_avg_pool2d(t[4], one, 2, &t[5]);
    if (st == YG_OK)
        st = yg_flatten(t[5], 1, -1, &t[6]);
    if (st == YG_OK)
        st = yg_linear(t[6], w, NULL, &outputs[0]);
    for (int i = 0; i < 7; i++)
        yg_release(t[i]);
    return st;
}

static void test_trace_records_a_cnn_with_int_list_and_bool_attributes(void **state) {
    (void)state;
    const int64_t xs[] = {2, 3, 6, 6}, ws[] = {5, 3};
    yg_tensor *x = rand_tensor(xs, 4, 1), *w = rand_tensor(ws, 2, 2);
    yg_trace_result *r = NULL;
    YG_CHECK(yg_trace(cnn_forward, w, &x, 1, 1, NULL, &r));
    expect_kinds(r->graph,
                 "constant_pad_nd,max_pool2d,relu,upsample_nearest2d,avg_pool2d,"
                 "adaptive_avg_pool2d,flatten,prim::None,linear");
    yg_graph *g = r->graph;
    yg_ir_node *n = yg_graph_first_node(g);
    const int64_t *items = NULL;
    int64_t len = 0, v = 0;
    double f = 0;
    YG_CHECK(yg_ir_node_get_ints(n, "pad", &items, &len));
    assert_int_equal(len, 4);
    assert_int_equal(items[0], 1);
    YG_CHECK(yg_ir_node_get_float(n, "value", &f));
    assert_true(f == 0.5);
    n = yg_ir_node_next(n); /* max_pool2d */
    YG_CHECK(yg_ir_node_get_ints(n, "kernel_size", &items, &len));
    assert_int_equal(len, 2);
    assert_int_equal(items[1], 2);
    YG_CHECK(yg_ir_node_get_int(n, "ceil_mode", &v));
    assert_int_equal(v, 0);
    /* Types follow the example: [2, 3, 6, 6] padded to 8x8, pooled to 4x4. */
    yg_ir_type ty = yg_ir_value_type(yg_ir_node_output(n, 0));
    assert_int_equal(ty.ndim, 4);
    assert_int_equal(ty.sizes[2], 4);
    assert_int_equal(ty.dtype, YG_FLOAT32);
    assert_int_equal(ty.device, YG_CPU);
    assert_int_equal(ty.requires_grad, 0);
    /* The absent bias is prim::None, read by linear. */
    yg_ir_node *lin = yg_ir_value_node(yg_graph_output(g, 0));
    assert_string_equal(yg_ir_node_kind(lin), "linear");
    assert_string_equal(yg_ir_node_kind(yg_ir_value_node(yg_ir_node_input(lin, 2))), "prim::None");
    expect_types_recomputed(g, 0);
    yg_trace_result_release(r);
    yg_release(x);
    yg_release(w);
}

/* ---- in-place ops and views ---- */

static yg_status inplace_forward(void *ctx,
                                 yg_tensor *const *inputs,
                                 int64_t n_inputs,
                                 yg_tensor **outputs,
                                 int64_t n_outputs) {
    yg_tensor *v = NULL, *y = NULL, *tmp = NULL;
    yg_status st;
    (void)ctx;
    (void)n_inputs;
    (void)n_outputs;
    /* A view, a fresh result written twice in place, and an input
     * written in place and read again afterwards. */
    st = yg_transpose(inputs[0], 0, 1, &v);
    if (st == YG_OK)
        st = yg_mul_scalar(v, 2.0, &y);
    if (st == YG_OK)
        st = yg_add_(y, inputs[1], 1.0, &tmp);
    yg_release(tmp);
    tmp = NULL;
    if (st == YG_OK)
        st = yg_relu_(y, &tmp);
    yg_release(tmp);
    tmp = NULL;
    if (st == YG_OK)
        st = yg_mul_scalar_(inputs[1], 3.0, &tmp);
    yg_release(tmp);
    if (st == YG_OK)
        st = yg_add(y, inputs[1], 1.0, &outputs[0]);
    yg_release(v);
    yg_release(y);
    return st;
}

static void test_trace_records_in_place_ops_and_views_faithfully(void **state) {
    (void)state;
    const int64_t xs[] = {3, 2}, ys[] = {2, 3};
    yg_tensor *in[2] = {rand_tensor(xs, 2, 1), rand_tensor(ys, 2, 2)};
    yg_trace_result *r = NULL;
    YG_CHECK(yg_trace(inplace_forward, NULL, in, 2, 1, NULL, &r));
    expect_text(r->graph,
                "graph(%0 : Tensor(dtype=float32, device=cpu, sizes=[3, 2], requires_grad=false), "
                "%1 : Tensor(dtype=float32, device=cpu, sizes=[2, 3], requires_grad=false)):\n"
                "  %2 : Tensor(dtype=float32, device=cpu, sizes=[2, 3], requires_grad=false) = "
                "transpose[dim0=0, dim1=1](%0)\n"
                "  %3 : Tensor(dtype=float32, device=cpu, sizes=[2, 3], requires_grad=false) = "
                "mul.Scalar[other=2.0](%2)\n"
                "  %4 : Tensor(dtype=float32, device=cpu, sizes=[2, 3], requires_grad=false) = "
                "add_[alpha=1.0](%3, %1)\n"
                "  %5 : Tensor(dtype=float32, device=cpu, sizes=[2, 3], requires_grad=false) = "
                "relu_(%4)\n"
                "  %6 : Tensor(dtype=float32, device=cpu, sizes=[2, 3], requires_grad=false) = "
                "mul_.Scalar[other=3.0](%1)\n"
                "  %7 : Tensor(dtype=float32, device=cpu, sizes=[2, 3], requires_grad=false) = "
                "add[alpha=1.0](%5, %6)\n"
                "  return (%7)\n");
    expect_types_recomputed(r->graph, 0);
    /* Dead-code elimination keeps the writes. */
    YG_CHECK(yg_graph_eliminate_dead_code(r->graph));
    assert_int_equal(yg_graph_num_nodes(r->graph), 6);
    yg_trace_result_release(r);
    yg_release(in[0]);
    yg_release(in[1]);
}

/* ---- parameters, constants and the dumps ---- */

typedef struct closure {
    yg_tensor *weight; /* created before the trace: a parameter */
} closure;

static yg_status scale_and_shift(void *ctx,
                                 yg_tensor *const *inputs,
                                 int64_t n_inputs,
                                 yg_tensor **outputs,
                                 int64_t n_outputs) {
    const closure *c = ctx;
    const double shift[] = {1, 2, 3};
    const int64_t sizes[] = {3};
    yg_tensor *k = NULL, *y = NULL;
    yg_status st;
    (void)n_inputs;
    (void)n_outputs;
    /* Made inside the function by a non-op: a constant. */
    st = yg_tensor_from_data(shift, sizes, 1, YG_FLOAT64, &k);
    if (st == YG_OK)
        st = yg_mul(inputs[0], c->weight, &y);
    if (st == YG_OK)
        st = yg_add(y, k, 1.0, &outputs[0]);
    /* The weight returned as it is: an output that is a parameter. */
    if (st == YG_OK)
        outputs[1] = yg_retain(c->weight);
    /* An input returned as it is: the output is the input value. */
    if (st == YG_OK)
        outputs[2] = yg_retain(inputs[0]);
    yg_release(k);
    yg_release(y);
    return st;
}

static void test_trace_makes_read_tensors_parameters_and_new_ones_constants(void **state) {
    (void)state;
    const int64_t sizes[] = {3};
    const double wv[] = {0.5, -1, 2}, xv[] = {1, 1, 1};
    closure c = {yg_test_tensor(YG_FLOAT64, sizes, 1, wv)};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, sizes, 1, xv);
    yg_trace_result *r = NULL;
    char *json = NULL, *dot = NULL;
    YG_CHECK(yg_trace(scale_and_shift, &c, &x, 1, 3, NULL, &r));
    expect_text(r->graph,
                "graph(%0 : Tensor(dtype=float64, device=cpu, sizes=[3], requires_grad=false), "
                "param %1 : Tensor(dtype=float64, device=cpu, sizes=[3], requires_grad=false)):\n"
                "  %2 : Tensor(dtype=float64, device=cpu, sizes=[3], requires_grad=false) = "
                "mul(%0, %1)\n"
                "  %3 : Tensor(dtype=float64, device=cpu, sizes=[3], requires_grad=false) = "
                "prim::Constant[value=tensor(float64, [3], [1, 2, 3])]()\n"
                "  %4 : Tensor(dtype=float64, device=cpu, sizes=[3], requires_grad=false) = "
                "add[alpha=1.0](%2, %3)\n"
                "  return (%4, %1, %0)\n");
    assert_int_equal(r->n_params, 1);
    assert_ptr_equal(r->params[0], c.weight);
    assert_ptr_equal(r->outputs[1], c.weight);
    assert_ptr_equal(r->outputs[2], x);
    const double want[] = {1.5, 1, 5};
    YG_EXPECT_CLOSE(r->outputs[0], sizes, 1, want, 0, 0);
    expect_types_recomputed(r->graph, 0);
    YG_CHECK(yg_graph_to_json(r->graph, &json));
    assert_non_null(strstr(json, "\"param\": true"));
    YG_CHECK(yg_graph_to_dot(r->graph, &dot));
    assert_non_null(strstr(dot, "param %1"));
    yg_string_release(json);
    yg_string_release(dot);
    /* A clone keeps the mark; set_param moves it, but only on inputs. */
    yg_graph *clone = NULL;
    YG_CHECK(yg_graph_clone(r->graph, &clone));
    assert_true(yg_ir_value_is_param(yg_graph_input(clone, 1)));
    YG_CHECK(yg_ir_value_set_param(yg_graph_input(clone, 1), false));
    assert_false(yg_ir_value_is_param(yg_graph_input(clone, 1)));
    YG_EXPECT_ERROR(yg_ir_value_set_param(yg_graph_output(clone, 0), true),
                    YG_ERR_INVALID_ARGUMENT,
                    "value_set_param",
                    "is not a graph input");
    yg_graph_release(clone);
    yg_trace_result_release(r);
    yg_release(x);
    yg_release(c.weight);
}

static void test_lint_rejects_a_parameter_mark_on_a_node_output(void **state) {
    (void)state;
    const char *text = "graph(param %w : Tensor):\n"
                       "  %y : Tensor = neg(%w)\n"
                       "  return (%y)\n";
    yg_graph *g = NULL;
    YG_CHECK(yg_graph_parse(text, (int64_t)strlen(text), &g));
    assert_true(yg_ir_value_is_param(yg_graph_input(g, 0)));
    ((yg_ir_value *)yg_graph_output(g, 0))->is_param = true;
    YG_EXPECT_ERROR(
        yg_graph_lint(g), YG_ERR_INVALID_ARGUMENT, "graph_lint", "neg", "is marked as a parameter");
    yg_graph_release(g);
}

/* ---- scalar attributes ---- */

static yg_status scalars_forward(void *ctx,
                                 yg_tensor *const *inputs,
                                 int64_t n_inputs,
                                 yg_tensor **outputs,
                                 int64_t n_outputs) {
    yg_tensor *a = NULL, *b = NULL;
    const int64_t dims[] = {1};
    yg_status st;
    (void)ctx;
    (void)n_inputs;
    (void)n_outputs;
    st = yg_leaky_relu(inputs[0], 0.25, &a);
    if (st == YG_OK)
        st = yg_add_scalar(a, 3.0, -2.0, &b);
    if (st == YG_OK)
        st = yg_sum_dim(b, dims, 1, true, &outputs[0]);
    if (st == YG_OK)
        st = yg_div_mode(b, inputs[0], YG_ROUNDING_MODE_FLOOR, &outputs[1]);
    yg_release(a);
    yg_release(b);
    return st;
}

static void test_trace_records_scalars_as_attributes(void **state) {
    (void)state;
    const int64_t xs[] = {2, 3};
    yg_tensor *x = rand_tensor(xs, 2, 5);
    yg_trace_result *r = NULL;
    YG_CHECK(yg_trace(scalars_forward, NULL, &x, 1, 2, NULL, &r));
    expect_text(
        r->graph,
        "graph(%0 : Tensor(dtype=float32, device=cpu, sizes=[2, 3], requires_grad=false)):\n"
        "  %1 : Tensor(dtype=float32, device=cpu, sizes=[2, 3], requires_grad=false) = "
        "leaky_relu[negative_slope=0.25](%0)\n"
        "  %2 : Tensor(dtype=float32, device=cpu, sizes=[2, 3], requires_grad=false) = "
        "add.Scalar[alpha=-2.0, other=3.0](%1)\n"
        "  %3 : Tensor(dtype=float32, device=cpu, sizes=[2, 1], requires_grad=false) = "
        "sum.dim[dim=[1], keepdim=1](%2)\n"
        "  %4 : Tensor(dtype=float32, device=cpu, sizes=[2, 3], requires_grad=false) = "
        "div.mode[rounding_mode=\"floor\"](%2, %0)\n"
        "  return (%3, %4)\n");
    expect_types_recomputed(r->graph, 0);
    yg_trace_result_release(r);
    yg_release(x);
}

/* Enum arguments are recorded by name (yagrad/enums.h), which shape
 * propagation and the interpreter read back. */
static yg_status losses_forward(void *ctx,
                                yg_tensor *const *inputs,
                                int64_t n_inputs,
                                yg_tensor **outputs,
                                int64_t n_outputs) {
    yg_status st;
    (void)ctx;
    (void)n_inputs;
    (void)n_outputs;
    st = yg_mse_loss(inputs[0], inputs[1], YG_REDUCTION_NONE, &outputs[0]);
    if (st == YG_OK)
        st = yg_l1_loss(inputs[0], inputs[1], YG_REDUCTION_SUM, &outputs[1]);
    if (st == YG_OK)
        st = yg_pad(inputs[0], (const int64_t[]){1, 1}, 2, YG_PAD_MODE_REPLICATE, 0, &outputs[2]);
    if (st == YG_OK)
        st = yg_interpolate(
            inputs[2], NULL, 0, &(double){1.5}, YG_INTERPOLATION_MODE_BILINEAR, false, &outputs[3]);
    return st;
}

static void test_trace_records_enum_arguments_by_name(void **state) {
    (void)state;
    const int64_t xs[] = {2, 3}, is[] = {1, 2, 3};
    yg_tensor *in[3] = {rand_tensor(xs, 2, 5), rand_tensor(xs, 2, 6), rand_tensor(is, 3, 7)};
    yg_tensor *eager[4] = {NULL, NULL, NULL, NULL}, *run[4] = {NULL, NULL, NULL, NULL};
    yg_trace_result *r = NULL;
    char *text = NULL;
    YG_CHECK(yg_trace(losses_forward, NULL, in, 3, 4, NULL, &r));
    YG_CHECK(yg_graph_print(r->graph, &text));
    assert_non_null(strstr(text, "= mse_loss[reduction=\"none\"](%0, %1)"));
    assert_non_null(strstr(text, "= l1_loss[reduction=\"sum\"](%0, %1)"));
    assert_non_null(strstr(text, "= pad[mode=\"replicate\", pad=[1, 1], value=0.0](%0)"));
    assert_non_null(strstr(text, "= interpolate[align_corners=0, mode=\"bilinear\", "
                                 "scale_factor=1.5, size=[]](%2)"));
    expect_types_recomputed(r->graph, 0); /* none: [2, 3]; sum: []; [1, 3, 4] */
    YG_CHECK(losses_forward(NULL, in, 3, eager, 4));
    YG_CHECK(yg_graph_run(r->graph, in, 3, run, 4));
    for (int i = 0; i < 4; i++)
        expect_same_values(eager[i], run[i]);
    yg_string_release(text);
    release_all(eager, 4);
    release_all(run, 4);
    release_all(in, 3);
    yg_trace_result_release(r);
}

/* ---- shapes live in types only ---- */

/* Deletes every " : <type>" from printed text, leaving the structure. */
static void strip_types(char *s) {
    char *w = s;
    for (char *p = s; *p != '\0';) {
        if (strncmp(p, " : ", 3) == 0) {
            p += 3;
            if (strncmp(p, "None", 4) == 0) {
                p += 4;
                continue;
            }
            p += strlen("Tensor");
            if (*p == '(') {
                int depth = 0;
                do {
                    depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
                    p++;
                } while (depth > 0 && *p != '\0');
            }
            continue;
        }
        *w++ = *p++;
    }
    *w = '\0';
}

static void test_tracing_at_two_shapes_differs_only_in_types(void **state) {
    (void)state;
    const int64_t small[] = {2, 3}, large[] = {7, 3};
    mlp m = mlp_create();
    yg_tensor *x1 = rand_tensor(small, 2, 1), *x2 = rand_tensor(large, 2, 2);
    yg_trace_result *r1 = NULL, *r2 = NULL;
    char *t1 = NULL, *t2 = NULL;
    YG_CHECK(yg_trace(mlp_forward, &m, &x1, 1, 1, NULL, &r1));
    YG_CHECK(yg_trace(mlp_forward, &m, &x2, 1, 1, NULL, &r2));
    YG_CHECK(yg_graph_canonicalize(r1->graph));
    YG_CHECK(yg_graph_canonicalize(r2->graph));
    YG_CHECK(yg_graph_print(r1->graph, &t1));
    YG_CHECK(yg_graph_print(r2->graph, &t2));
    assert_string_not_equal(t1, t2);
    assert_non_null(strstr(t1, "sizes=[2, 4]"));
    assert_non_null(strstr(t2, "sizes=[7, 4]"));
    strip_types(t1);
    strip_types(t2);
    assert_string_equal(t1, t2);
    assert_non_null(strstr(t1, "param %1, param %2, param %3, param %4):"));
    yg_string_release(t1);
    yg_string_release(t2);
    yg_trace_result_release(r1);
    yg_trace_result_release(r2);
    yg_release(x1);
    yg_release(x2);
    mlp_release(&m);
}

/* ---- what is not recorded ---- */

static yg_status backward_inside(void *ctx,
                                 yg_tensor *const *inputs,
                                 int64_t n_inputs,
                                 yg_tensor **outputs,
                                 int64_t n_outputs) {
    yg_tensor *w = ctx, *y = NULL, *s = NULL;
    yg_status st;
    (void)n_inputs;
    (void)n_outputs;
    st = yg_mul(inputs[0], w, &y);
    if (st == YG_OK)
        st = yg_sum(y, &s);
    if (st == YG_OK)
        st = yg_backward(s, NULL, false);
    if (st == YG_OK)
        st = yg_tensor_grad(w, &outputs[1]);
    if (st == YG_OK)
        outputs[0] = yg_retain(s);
    yg_release(y);
    yg_release(s);
    return st;
}

static void test_trace_does_not_record_a_backward_run_inside_the_function(void **state) {
    (void)state;
    const int64_t sizes[] = {3};
    const double xv[] = {1, 2, 3}, wv[] = {4, 5, 6};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, sizes, 1, xv);
    yg_tensor *w = yg_test_tensor(YG_FLOAT64, sizes, 1, wv);
    yg_trace_result *r = NULL;
    YG_CHECK(yg_tensor_set_requires_grad(w, true));
    YG_CHECK(yg_trace(backward_inside, w, &x, 1, 2, NULL, &r));
    /* The gradient, made by backward during the trace, is a constant. */
    expect_kinds(r->graph, "mul,sum,prim::Constant");
    YG_EXPECT_CLOSE(r->outputs[1], sizes, 1, xv, 0, 0);
    expect_types_recomputed(r->graph, 0);
    yg_trace_result_release(r);
    yg_release(x);
    yg_release(w);
}

static yg_status same_tensor_twice(void *ctx,
                                   yg_tensor *const *inputs,
                                   int64_t n_inputs,
                                   yg_tensor **outputs,
                                   int64_t n_outputs) {
    (void)ctx;
    (void)n_inputs;
    (void)n_outputs;
    return yg_mul(inputs[0], inputs[1], &outputs[0]);
}

static void test_trace_reads_a_tensor_given_twice_as_its_first_input(void **state) {
    (void)state;
    const int64_t sizes[] = {2};
    yg_tensor *x = rand_tensor(sizes, 1, 3);
    yg_tensor *in[2] = {x, x};
    yg_trace_result *r = NULL;
    YG_CHECK(yg_trace(same_tensor_twice, NULL, in, 2, 1, NULL, &r));
    assert_int_equal(yg_graph_num_inputs(r->graph), 2);
    yg_ir_node *n = yg_graph_first_node(r->graph);
    assert_ptr_equal(yg_ir_node_input(n, 0), yg_graph_input(r->graph, 0));
    assert_ptr_equal(yg_ir_node_input(n, 1), yg_graph_input(r->graph, 0));
    yg_trace_result_release(r);
    yg_release(x);
}

static yg_status detaches(void *ctx,
                          yg_tensor *const *inputs,
                          int64_t n_inputs,
                          yg_tensor **outputs,
                          int64_t n_outputs) {
    yg_tensor *d = NULL;
    yg_status st;
    (void)ctx;
    (void)n_inputs;
    (void)n_outputs;
    st = yg_detach(inputs[0], &d);
    if (st == YG_OK)
        st = yg_mul(d, inputs[0], &outputs[0]);
    yg_release(d);
    return st;
}

static void test_trace_reads_a_detached_tensor_as_its_source_not_a_constant(void **state) {
    (void)state;
    const int64_t sizes[] = {2};
    yg_tensor *x = rand_tensor(sizes, 1, 3);
    yg_trace_result *r = NULL;
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_trace(detaches, NULL, &x, 1, 1, NULL, &r));
    expect_kinds(r->graph, "mul");
    yg_ir_node *n = yg_graph_first_node(r->graph);
    assert_ptr_equal(yg_ir_node_input(n, 0), yg_graph_input(r->graph, 0));
    assert_ptr_equal(yg_ir_node_input(n, 1), yg_graph_input(r->graph, 0));
    yg_trace_result_release(r);
    yg_release(x);
}

typedef struct other_thread {
    const yg_tensor *x;
    yg_tensor *y;
    yg_status st;
    bool recording; /* what yg__obs_recording said on that thread */
} other_thread;

static void *run_other_thread(void *arg) {
    other_thread *o = arg;
    o->recording = yg__obs_recording(false);
    o->st = yg_exp(o->x, &o->y);
    return NULL;
}

static yg_status uses_another_thread(void *ctx,
                                     yg_tensor *const *inputs,
                                     int64_t n_inputs,
                                     yg_tensor **outputs,
                                     int64_t n_outputs) {
    other_thread *o = ctx;
    pthread_t t;
    (void)n_inputs;
    (void)n_outputs;
    o->x = inputs[0];
    if (pthread_create(&t, NULL, run_other_thread, o) != 0)
        return yg_set_error(YG_ERR_INTERNAL, "pthread_create failed");
    pthread_join(t, NULL);
    if (o->st != YG_OK)
        return o->st;
    return yg_neg(inputs[0], &outputs[0]);
}

static void test_trace_records_only_the_calling_thread(void **state) {
    (void)state;
    const int64_t sizes[] = {2};
    yg_tensor *x = rand_tensor(sizes, 1, 3);
    other_thread o = {NULL, NULL, YG_OK, true};
    yg_trace_result *r = NULL;
    YG_CHECK(yg_trace(uses_another_thread, &o, &x, 1, 1, NULL, &r));
    assert_false(o.recording);
    expect_kinds(r->graph, "neg");
    yg_trace_result_release(r);
    yg_release(o.y);
    yg_release(x);
}

/* ---- failures ---- */

/* A trace that must work after a failed one: the state was cleaned up. */
static void expect_next_trace_works(void) {
    const int64_t sizes[] = {2};
    yg_tensor *x = rand_tensor(sizes, 1, 9);
    yg_tensor *in[2] = {x, x};
    yg_trace_result *r = NULL;
    assert_false(yg__obs_recording(false));
    YG_CHECK(yg_trace(same_tensor_twice, NULL, in, 2, 1, NULL, &r));
    expect_kinds(r->graph, "mul");
    yg_trace_result_release(r);
    yg_release(x);
}

static void test_trace_rejects_null_arguments(void **state) {
    (void)state;
    const int64_t sizes[] = {2};
    yg_tensor *x = rand_tensor(sizes, 1, 3), *in[2] = {x, NULL};
    yg_trace_result *r = (yg_trace_result *)&r;
    YG_EXPECT_ERROR(
        yg_trace(NULL, NULL, &x, 1, 1, NULL, &r), YG_ERR_INVALID_ARGUMENT, "trace: fn is NULL");
    assert_null(r);
    YG_EXPECT_ERROR(yg_trace(same_tensor_twice, NULL, &x, 1, 1, NULL, NULL),
                    YG_ERR_INVALID_ARGUMENT,
                    "trace: out is NULL");
    YG_EXPECT_ERROR(yg_trace(same_tensor_twice, NULL, in, 2, 1, NULL, &r),
                    YG_ERR_INVALID_ARGUMENT,
                    "trace: input 1 is NULL");
    YG_EXPECT_ERROR(yg_trace(same_tensor_twice, NULL, NULL, 1, 1, NULL, &r),
                    YG_ERR_INVALID_ARGUMENT,
                    "trace: invalid input list (1 entries)");
    YG_EXPECT_ERROR(yg_trace(same_tensor_twice, NULL, &x, 1, -1, NULL, &r),
                    YG_ERR_INVALID_ARGUMENT,
                    "trace: invalid output count -1");
    assert_null(r);
    yg_release(x);
    expect_next_trace_works();
}

static yg_status fails_with_a_shape_error(void *ctx,
                                          yg_tensor *const *inputs,
                                          int64_t n_inputs,
                                          yg_tensor **outputs,
                                          int64_t n_outputs) {
    yg_tensor *ok = NULL;
    yg_status st;
    (void)ctx;
    (void)n_inputs;
    (void)n_outputs;
    /* One output set before the failure: yg_trace releases it. */
    st = yg_neg(inputs[0], &outputs[1]);
    if (st == YG_OK)
        st = yg_relu(inputs[0], &ok);
    if (st == YG_OK)
        st = yg_mul(ok, inputs[1], &outputs[0]);
    yg_release(ok);
    return st;
}

static void test_trace_passes_on_the_failure_of_the_function(void **state) {
    (void)state;
    const int64_t a[] = {2, 3}, b[] = {4};
    yg_tensor *in[2] = {rand_tensor(a, 2, 1), rand_tensor(b, 1, 2)};
    yg_trace_result *r = NULL;
    YG_EXPECT_ERROR(yg_trace(fails_with_a_shape_error, NULL, in, 2, 2, NULL, &r),
                    YG_ERR_SHAPE,
                    "trace: mul: cannot broadcast self [2, 3] with other [4]");
    assert_null(r);
    yg_release(in[0]);
    yg_release(in[1]);
    expect_next_trace_works();
}

static yg_status leaves_an_output_unset(void *ctx,
                                        yg_tensor *const *inputs,
                                        int64_t n_inputs,
                                        yg_tensor **outputs,
                                        int64_t n_outputs) {
    (void)ctx;
    (void)n_inputs;
    (void)n_outputs;
    return yg_neg(inputs[0], &outputs[0]);
}

static void test_trace_rejects_an_output_the_function_left_unset(void **state) {
    (void)state;
    const int64_t sizes[] = {2};
    yg_tensor *x = rand_tensor(sizes, 1, 1);
    yg_trace_result *r = NULL;
    YG_EXPECT_ERROR(yg_trace(leaves_an_output_unset, NULL, &x, 1, 2, NULL, &r),
                    YG_ERR_INVALID_ARGUMENT,
                    "trace: fn returned YG_OK but left output 1 NULL");
    assert_null(r);
    yg_release(x);
    expect_next_trace_works();
}

static yg_status nests_a_trace(void *ctx,
                               yg_tensor *const *inputs,
                               int64_t n_inputs,
                               yg_tensor **outputs,
                               int64_t n_outputs) {
    yg_trace_result *inner = NULL;
    yg_status *inner_status = ctx;
    (void)n_outputs;
    *inner_status = yg_trace(leaves_an_output_unset, NULL, inputs, n_inputs, 1, NULL, &inner);
    assert_null(inner);
    /* Ignore the failure and go on: the outer trace must still fail. */
    return yg_neg(inputs[0], &outputs[0]);
}

static void test_trace_refuses_to_nest(void **state) {
    (void)state;
    const int64_t sizes[] = {2};
    yg_tensor *x = rand_tensor(sizes, 1, 1);
    yg_trace_result *r = NULL;
    yg_status inner = YG_OK;
    YG_EXPECT_ERROR(yg_trace(nests_a_trace, &inner, &x, 1, 1, NULL, &r),
                    YG_ERR_INVALID_ARGUMENT,
                    "trace: already tracing on this thread (yg_trace cannot nest)");
    assert_int_equal(inner, YG_ERR_INVALID_ARGUMENT);
    assert_null(r);
    yg_release(x);
    expect_next_trace_works();
}

/* What a generated wrapper does for an argument type the tracer cannot
 * record (no op in the specs has one today). */
/* Draws from a caller's generator, which the graph cannot name. */
static yg_status calls_an_unrecordable_op(void *ctx,
                                          yg_tensor *const *inputs,
                                          int64_t n_inputs,
                                          yg_tensor **outputs,
                                          int64_t n_outputs) {
    bool *ignore = ctx;
    yg_generator *gen = NULL;
    yg_tensor *drawn = NULL;
    yg_status st;
    (void)n_inputs;
    (void)n_outputs;
    YG_RETURN_IF_ERROR(yg_generator_create(7, &gen));
    st = yg_bernoulli_p(inputs[0], 0.5, gen, &drawn);
    yg_generator_release(gen);
    yg_release(drawn);
    if (st != YG_OK && !*ignore)
        return st;
    return yg_neg(inputs[0], &outputs[0]);
}

/* chunk (a list return), two draws from the default generator, zeros
 * with a device, and batch_norm updating its running stats. */
static yg_status chunks_noise_and_norm(void *ctx,
                                       yg_tensor *const *inputs,
                                       int64_t n_inputs,
                                       yg_tensor **outputs,
                                       int64_t n_outputs) {
    yg_tensor *const *stats = ctx;
    const int64_t size[] = {2, 3};
    const yg_device cpu = YG_CPU;
    yg_tensor **pieces = NULL, *sum = NULL, *r1 = NULL, *r2 = NULL, *z = NULL, *t = NULL;
    int64_t n_pieces = 0;
    yg_status st;
    (void)n_inputs;
    (void)n_outputs;
    st = yg_chunk(inputs[0], 2, 0, &pieces, &n_pieces);
    if (st == YG_OK)
        st = yg_add(pieces[0], pieces[1], 1, &sum);
    if (st == YG_OK)
        st = yg_rand(size, 2, NULL, NULL, NULL, &r1);
    if (st == YG_OK)
        st = yg_rand(size, 2, NULL, NULL, NULL, &r2);
    if (st == YG_OK)
        st = yg_zeros(size, 2, NULL, &cpu, &z);
    if (st == YG_OK)
        st = yg_add(r1, r2, 1, &t);
    if (st == YG_OK)
        st = yg_add(sum, t, 1, &outputs[0]);
    if (st == YG_OK)
        st = yg_add(z, sum, 1, &outputs[1]);
    if (st == YG_OK)
        st = yg_batch_norm(inputs[0], NULL, NULL, stats[0], stats[1], true, 0.1, 1e-5, &outputs[2]);
    yg_release_list(pieces, n_pieces);
    yg_release(sum);
    yg_release(r1);
    yg_release(r2);
    yg_release(z);
    yg_release(t);
    return st;
}

static void test_trace_records_list_returns_random_ops_and_state(void **state) {
    (void)state;
    const int64_t xs[] = {4, 3}, cs[] = {3};
    yg_tensor *x = rand_tensor(xs, 2, 21);
    yg_tensor *stats[2] = {rand_tensor(cs, 1, 22), rand_tensor(cs, 1, 23)};
    yg_trace_result *r = NULL;
    YG_CHECK(yg_trace(chunks_noise_and_norm, stats, &x, 1, 3, NULL, &r));
    expect_kinds(r->graph,
                 "chunk,add,rand,rand,zeros,add,add,add,prim::None,prim::None,batch_norm");
    yg_ir_node *chunk = yg_graph_first_node(r->graph);
    assert_int_equal(yg_ir_node_num_outputs(chunk), 2);
    /* The running stats are parameters the node writes. */
    assert_int_equal(yg_graph_num_inputs(r->graph), 3);
    assert_true(yg_ir_value_is_param(yg_graph_input(r->graph, 1)));
    char *text = NULL;
    YG_CHECK(yg_graph_print(r->graph, &text));
    assert_non_null(strstr(text, "= zeros[device=0, size=[2, 3]]()"));
    assert_non_null(strstr(text, "= rand[size=[2, 3]]()"));
    yg_string_release(text);
    /* Print -> parse -> print, and lint. */
    yg_graph *parsed = NULL;
    char *again = NULL;
    YG_CHECK(yg_graph_print(r->graph, &text));
    YG_CHECK(yg_graph_parse(text, (int64_t)strlen(text), &parsed));
    YG_CHECK(yg_graph_lint(parsed));
    YG_CHECK(yg_graph_print(parsed, &again));
    assert_string_equal(text, again);
    yg_string_release(text);
    yg_string_release(again);
    /* CSE must keep both draws, DCE the batch_norm that writes its stats
     * even with its result unused. */
    yg_graph *opt = NULL;
    YG_CHECK(yg_graph_clone(r->graph, &opt));
    YG_CHECK(yg_graph_optimize(opt));
    char *kinds = kinds_of(opt);
    assert_non_null(strstr(kinds, "rand,rand"));
    assert_non_null(strstr(kinds, "batch_norm"));
    free(kinds);
    yg_graph_release(opt);
    yg_graph_release(parsed);
    yg_trace_result_release(r);
    yg_release(x);
    yg_release(stats[0]);
    yg_release(stats[1]);
    expect_next_trace_works();
}

/* x[idx] = v: index_put_ on a clone of inputs[0] ([4, 3] float32) with
 * an int64 index, then with a None entry and a bool mask (accumulating
 * inputs[2], [2]), and the out-of-place index_put of inputs[0] itself.
 * The Tensor values argument follows the Tensor?[] indices. */
static yg_status writes_through_an_index(void *ctx,
                                         yg_tensor *const *inputs,
                                         int64_t n_inputs,
                                         yg_tensor **outputs,
                                         int64_t n_outputs) {
    const int64_t at[] = {2, 0}, two[] = {2}, three[] = {3};
    const bool mask[] = {true, false, true};
    yg_tensor *idx = NULL, *m = NULL, *y = NULL, *tmp = NULL;
    yg_status st;
    (void)ctx;
    (void)n_inputs;
    (void)n_outputs;
    st = yg_tensor_from_data(at, two, 1, YG_INT64, &idx);
    if (st == YG_OK)
        st = yg_tensor_from_data(mask, three, 1, YG_BOOL, &m);
    if (st == YG_OK)
        st = yg_clone(inputs[0], &y);
    if (st == YG_OK)
        st = yg_index_put_(y, (const yg_tensor *const[]){idx}, 1, inputs[1], false, &tmp);
    yg_release(tmp);
    tmp = NULL;
    if (st == YG_OK)
        st = yg_index_put_(y, (const yg_tensor *const[]){NULL, m}, 2, inputs[2], true, &tmp);
    yg_release(tmp);
    if (st == YG_OK)
        st = yg_index_put(
            inputs[0], (const yg_tensor *const[]){idx}, 1, inputs[1], true, &outputs[1]);
    if (st == YG_OK)
        outputs[0] = yg_retain(y);
    yg_release(idx);
    yg_release(m);
    yg_release(y);
    return st;
}

static void test_trace_records_index_put_with_values_after_the_indices(void **state) {
    (void)state;
    const int64_t xs[] = {4, 3}, vs[] = {2, 3}, ws[] = {2};
    yg_tensor *in[3] = {rand_tensor(xs, 2, 61), rand_tensor(vs, 2, 62), rand_tensor(ws, 1, 63)};
    yg_trace_result *r = NULL;
    YG_CHECK(yg_trace(writes_through_an_index, NULL, in, 3, 2, NULL, &r));
    expect_text(r->graph,
                "graph(%0 : Tensor(dtype=float32, device=cpu, sizes=[4, 3], requires_grad=false), "
                "%1 : Tensor(dtype=float32, device=cpu, sizes=[2, 3], requires_grad=false), "
                "%2 : Tensor(dtype=float32, device=cpu, sizes=[2], requires_grad=false)):\n"
                "  %3 : Tensor(dtype=float32, device=cpu, sizes=[4, 3], requires_grad=false) = "
                "clone(%0)\n"
                "  %4 : Tensor(dtype=int64, device=cpu, sizes=[2], requires_grad=false) = "
                "prim::Constant[value=tensor(int64, [2], [2, 0])]()\n"
                "  %5 : Tensor(dtype=float32, device=cpu, sizes=[4, 3], requires_grad=false) = "
                "index_put_[accumulate=0](%3, %4, %1)\n"
                "  %6 : None = prim::None()\n"
                "  %7 : Tensor(dtype=bool, device=cpu, sizes=[3], requires_grad=false) = "
                "prim::Constant[value=tensor(bool, [3], [1, 0, 1])]()\n"
                "  %8 : Tensor(dtype=float32, device=cpu, sizes=[4, 3], requires_grad=false) = "
                "index_put_[accumulate=1](%5, %6, %7, %2)\n"
                "  %9 : Tensor(dtype=float32, device=cpu, sizes=[4, 3], requires_grad=false) = "
                "index_put[accumulate=1](%0, %4, %1)\n"
                "  return (%8, %9)\n");
    expect_types_recomputed(r->graph, 0);
    /* The recorded graph computes what the function did. */
    yg_tensor *want[2] = {NULL, NULL}, *got[2] = {NULL, NULL};
    YG_CHECK(writes_through_an_index(NULL, in, 3, want, 2));
    YG_CHECK(yg_graph_run(r->graph, in, 3, got, 2));
    expect_same_values(got[0], want[0]);
    expect_same_values(got[1], want[1]);
    release_all(want, 2);
    release_all(got, 2);
    yg_trace_result_release(r);
    release_all(in, 3);
}

static void test_trace_refuses_an_op_it_cannot_record(void **state) {
    (void)state;
    const int64_t sizes[] = {2};
    yg_tensor *x = rand_tensor(sizes, 1, 1);
    yg_trace_result *r = NULL;
    bool ignore = false;
    YG_EXPECT_ERROR(yg_trace(calls_an_unrecordable_op, &ignore, &x, 1, 1, NULL, &r),
                    YG_ERR_NOT_IMPLEMENTED,
                    "trace: bernoulli.p: argument 'generator' of type Generator? cannot be "
                    "recorded (only NULL, the default generator, can)");
    assert_null(r);
    /* The same when the function ignores the refusal. */
    ignore = true;
    YG_EXPECT_ERROR(yg_trace(calls_an_unrecordable_op, &ignore, &x, 1, 1, NULL, &r),
                    YG_ERR_NOT_IMPLEMENTED,
                    "trace: bernoulli.p: argument 'generator' of type Generator? cannot be "
                    "recorded");
    assert_null(r);
    yg_release(x);
    expect_next_trace_works();
}

/* Records a node by hand, as a generated helper does, with a kind the IR
 * does not know: end_node must fail, release the result and NULL it. */
static yg_status records_a_bad_node(void *ctx,
                                    yg_tensor *const *inputs,
                                    int64_t n_inputs,
                                    yg_tensor **outputs,
                                    int64_t n_outputs) {
    bool *released = ctx;
    yg_tensor *extra = yg_retain(inputs[0]);
    (void)n_inputs;
    (void)n_outputs;
    yg__obs_begin_node("not_an_op");
    yg__obs_input(inputs[0]);
    yg__obs_attr_int("dim", 1);
    yg__obs_attr_str("mode", "x");
    yg__obs_output(&extra, NULL);
    yg_status st = yg__obs_end_node();
    *released = st != YG_OK && extra == NULL;
    return yg_neg(inputs[0], &outputs[0]);
}

static void test_trace_fails_and_releases_results_when_a_node_cannot_be_built(void **state) {
    (void)state;
    const int64_t sizes[] = {2};
    yg_tensor *x = rand_tensor(sizes, 1, 1);
    yg_trace_result *r = NULL;
    bool released = false;
    YG_EXPECT_ERROR(yg_trace(records_a_bad_node, &released, &x, 1, 1, NULL, &r),
                    YG_ERR_INTERNAL,
                    "trace: not_an_op is not a kind of the IR");
    assert_true(released);
    assert_null(r);
    yg_release(x);
    expect_next_trace_works();
}

static void test_tracing_is_off_outside_yg_trace(void **state) {
    (void)state;
    const int64_t sizes[] = {2};
    yg_tensor *x = rand_tensor(sizes, 1, 1), *y = NULL;
    /* Ops work as always, and the hook API is inert. */
    assert_false(yg__obs_recording(false));
    assert_false(yg__obs_recording(true));
    YG_CHECK(yg_neg(x, &y));
    YG_EXPECT_ERROR(yg__obs_end_node(), YG_ERR_INTERNAL, "trace: end_node without begin_node");
    yg_release(y);
    yg_release(x);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_records_an_mlp_with_its_weights_as_parameters),
        cmocka_unit_test(test_trace_records_a_composite_op_as_one_node),
        cmocka_unit_test(test_trace_through_composites_records_their_parts),
        cmocka_unit_test(test_trace_records_a_cnn_with_int_list_and_bool_attributes),
        cmocka_unit_test(test_trace_records_in_place_ops_and_views_faithfully),
        cmocka_unit_test(test_trace_makes_read_tensors_parameters_and_new_ones_constants),
        cmocka_unit_test(test_lint_rejects_a_parameter_mark_on_a_node_output),
        cmocka_unit_test(test_trace_records_scalars_as_attributes),
        cmocka_unit_test(test_trace_records_enum_arguments_by_name),
        cmocka_unit_test(test_tracing_at_two_shapes_differs_only_in_types),
        cmocka_unit_test(test_trace_does_not_record_a_backward_run_inside_the_function),
        cmocka_unit_test(test_trace_reads_a_tensor_given_twice_as_its_first_input),
        cmocka_unit_test(test_trace_reads_a_detached_tensor_as_its_source_not_a_constant),
        cmocka_unit_test(test_trace_records_only_the_calling_thread),
        cmocka_unit_test(test_trace_rejects_null_arguments),
        cmocka_unit_test(test_trace_passes_on_the_failure_of_the_function),
        cmocka_unit_test(test_trace_rejects_an_output_the_function_left_unset),
        cmocka_unit_test(test_trace_refuses_to_nest),
        cmocka_unit_test(test_trace_records_list_returns_random_ops_and_state),
        cmocka_unit_test(test_trace_records_index_put_with_values_after_the_indices),
        cmocka_unit_test(test_trace_refuses_an_op_it_cannot_record),
        cmocka_unit_test(test_trace_fails_and_releases_results_when_a_node_cannot_be_built),
        cmocka_unit_test(test_tracing_is_off_outside_yg_trace),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
