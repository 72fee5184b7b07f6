/*
 * test_jit_trace_types.c - shape propagation recomputes what yg_trace
 * recorded: every node output type of a traced graph, wiped and
 * recomputed from the inputs alone, matches the trace, for creation,
 * random and conversion ops, list returns, norms, pools and pads,
 * advanced indexing, gathers and scatters, pointwise dtype promotion,
 * recurrent cells and attention.
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
#include "yagrad/ops_binary_math.h"
#include "yagrad/ops_blend.h"
#include "yagrad/ops_comparison.h"
#include "yagrad/ops_creation.h"
#include "yagrad/ops_dtype_conversion.h"
#include "yagrad/ops_indexing.h"
#include "yagrad/ops_join_split.h"
#include "yagrad/ops_layers.h"
#include "yagrad/ops_attention.h"
#include "yagrad/ops_norms.h"
#include "yagrad/ops_padding.h"
#include "yagrad/ops_pooling.h"
#include "yagrad/ops_random.h"
#include "yagrad/ops_resampling.h"
#include "yagrad/ops_rounding.h"
#include "yagrad/ops_slicing.h"
#include "yagrad/ops_statistics.h"
#include "yagrad/ops_trigonometric.h"
#include "yagrad/ops_unary_math.h"
#include "yagrad/ops_views.h"

#include <stdlib.h>
#include <string.h>

/* ---- shape propagation recomputes what the tracer recorded ---- */

/* Creation ops with and without dtype and device, *_like ops, random
 * ops and conversions, on inputs[0] ([2, 3] float32). */
static yg_status creates_converts_and_draws(void *ctx,
                                            yg_tensor *const *inputs,
                                            int64_t n_inputs,
                                            yg_tensor **outputs,
                                            int64_t n_outputs) {
    const int64_t size[] = {2, 3}, four[] = {4};
    const yg_dtype f64 = YG_FLOAT64, i32 = YG_INT32, f16 = YG_FLOAT16;
    const yg_device cpu = YG_CPU;
    const double lo = 0.0;
    yg_tensor *x = inputs[0], *t[20] = {NULL};
    yg_status st;
    (void)ctx;
    (void)n_inputs;
    (void)n_outputs;
    st = yg_zeros(size, 2, &f64, &cpu, &t[0]);
    if (st == YG_OK)
        st = yg_full(four, 1, 2.5, NULL, NULL, &t[1]);
    if (st == YG_OK)
        st = yg_arange(5, NULL, NULL, &t[2]);
    if (st == YG_OK)
        st = yg_arange_start(0, 1, 0.3, NULL, &cpu, &t[3]);
    if (st == YG_OK)
        st = yg_linspace(0, 1, 7, &f64, NULL, &t[4]);
    if (st == YG_OK)
        st = yg_eye_m(2, 3, &i32, NULL, &t[5]);
    if (st == YG_OK)
        st = yg_ones_like(x, &i32, NULL, &t[6]);
    if (st == YG_OK)
        st = yg_full_like(x, 1.5, NULL, &cpu, &t[7]);
    if (st == YG_OK)
        st = yg_empty_like(x, &f16, NULL, &t[8]);
    if (st == YG_OK)
        st = yg_rand(size, 2, NULL, NULL, NULL, &t[9]);
    if (st == YG_OK)
        st = yg_randn_like(x, NULL, &f64, NULL, &t[10]);
    if (st == YG_OK)
        st = yg_randint(0, 5, four, 1, NULL, NULL, NULL, &t[11]);
    if (st == YG_OK)
        st = yg_bernoulli(t[9], NULL, &t[12]);
    if (st == YG_OK)
        st = yg_dropout(x, 0.5, true, NULL, &t[13]);
    if (st == YG_OK)
        st = yg_to_dtype(x, YG_FLOAT64, false, &t[14]);
    if (st == YG_OK)
        st = yg_to_copy(x, YG_BFLOAT16, &t[15]);
    if (st == YG_OK)
        st = yg_type_as(t[6], t[0], &t[16]);
    if (st == YG_OK)
        st = yg_clamp_opt(x, &lo, NULL, &t[17]);
    if (st == YG_OK)
        st = yg_add(t[13], t[17], 1, &outputs[0]);
    if (st == YG_OK)
        st = yg_add(t[0], t[16], 1, &outputs[1]);
    release_all(t, 20);
    return st;
}

static void test_shape_propagation_recomputes_traced_creation_random_and_conversion(void **state) {
    (void)state;
    const int64_t xs[] = {2, 3};
    yg_tensor *x = rand_tensor(xs, 2, 31);
    yg_trace_result *r = NULL;
    YG_CHECK(yg_trace(creates_converts_and_draws, NULL, &x, 1, 2, NULL, &r));
    char *kinds = kinds_of(r->graph);
    assert_non_null(strstr(kinds, "zeros,full,arange,arange.start,linspace,eye.m,ones_like"));
    free(kinds);
    expect_types_recomputed(r->graph, 0);
    yg_trace_result_release(r);
    yg_release(x);
}

/* List returns, batch_norm, max pooling and padding on inputs[0] ([2, 3,
 * 5, 6] float32); ctx holds weight, bias and the running stats. */
static yg_status splits_norms_pools_and_pads(void *ctx,
                                             yg_tensor *const *inputs,
                                             int64_t n_inputs,
                                             yg_tensor **outputs,
                                             int64_t n_outputs) {
    yg_tensor *const *p = ctx;
    const int64_t two[] = {2}, three[] = {3}, one[] = {1}, sizes[] = {2, 3};
    const int64_t pad4[] = {1, 2, 2, 1}, pad2[] = {1, 1}, pad10[] = {1, 0};
    yg_tensor *x = inputs[0], *t[12] = {NULL};
    yg_tensor **chunks = NULL, **rows = NULL, **parts = NULL;
    int64_t n_chunks = 0, n_rows = 0, n_parts = 0;
    yg_status st;
    (void)n_inputs;
    (void)n_outputs;
    st = yg_chunk(x, 2, 3, &chunks, &n_chunks);
    if (st == YG_OK)
        st = yg_unbind(x, 1, &rows, &n_rows);
    if (st == YG_OK)
        st = yg_split_with_sizes(x, sizes, 2, 2, &parts, &n_parts);
    if (st == YG_OK)
        st = yg_batch_norm(x, p[0], p[1], p[2], p[3], true, 0.1, 1e-5, &t[0]);
    if (st == YG_OK) /* no running stats: None inputs */
        st = yg_batch_norm(chunks[0], NULL, NULL, NULL, NULL, true, 0.1, 1e-5, &t[11]);
    if (st == YG_OK)
        st = yg_max_pool2d_with_indices(x, three, 1, NULL, 0, one, 1, one, 1, true, &t[1], &t[2]);
    if (st == YG_OK)
        st = yg_max_pool1d(rows[0], three, 1, two, 1, one, 1, one, 1, false, &t[3]);
    if (st == YG_OK)
        st = yg_reflection_pad(x, pad4, 4, &t[4]);
    if (st == YG_OK)
        st = yg_replication_pad(chunks[1], pad4, 4, &t[5]);
    if (st == YG_OK)
        st = yg_pad(parts[1], pad10, 2, YG_PAD_MODE_CONSTANT, 0.5, &t[6]);
    if (st == YG_OK)
        st = yg_pad(rows[2], pad2, 2, YG_PAD_MODE_REFLECT, 0, &t[7]);
    if (st == YG_OK) {
        outputs[0] = yg_retain(t[0]);
        outputs[1] = yg_retain(t[2]);
    }
    release_all(t, 12);
    yg_release_list(chunks, n_chunks);
    yg_release_list(rows, n_rows);
    yg_release_list(parts, n_parts);
    return st;
}

static void test_shape_propagation_recomputes_traced_pieces_norms_pools_and_pads(void **state) {
    (void)state;
    const int64_t xs[] = {2, 3, 5, 6}, cs[] = {3};
    yg_tensor *x = rand_tensor(xs, 4, 41);
    yg_tensor *p[4] = {
        rand_tensor(cs, 1, 42), rand_tensor(cs, 1, 43), rand_tensor(cs, 1, 44), NULL};
    yg_trace_result *r = NULL;
    const double ones[] = {1, 1, 1};
    p[3] = yg_test_tensor(YG_FLOAT32, cs, 1, ones);
    YG_CHECK(yg_trace(splits_norms_pools_and_pads, p, &x, 1, 2, NULL, &r));
    yg_ir_node *chunk = yg_graph_first_node(r->graph);
    assert_string_equal(yg_ir_node_kind(chunk), "chunk");
    assert_int_equal(yg_ir_node_num_outputs(yg_ir_node_next(chunk)), 3); /* unbind */
    expect_types_recomputed(r->graph, 0);
    yg_trace_result_release(r);
    yg_release(x);
    release_all(p, 4);
}

/* Advanced indexing of inputs[0] ([4, 5, 6] float32) with int64 index
 * tensors (adjacent and separated), None entries and bool masks. */
static yg_status indexes_with_ints_and_masks(void *ctx,
                                             yg_tensor *const *inputs,
                                             int64_t n_inputs,
                                             yg_tensor **outputs,
                                             int64_t n_outputs) {
    const int64_t is[] = {2, 1}, js[] = {3}, ms[] = {4, 5}, m1s[] = {5};
    const int64_t iv[] = {0, 3}, jv[] = {1, -1, 2};
    const bool mv[20] = {[1] = true, [7] = true, [19] = true}, m1v[5] = {[0] = true, [4] = true};
    yg_tensor *x = inputs[0], *i = NULL, *j = NULL, *m = NULL, *m1 = NULL, *t[5] = {NULL};
    yg_status st;
    (void)ctx;
    (void)n_inputs;
    (void)n_outputs;
    st = yg_tensor_from_data(iv, is, 2, YG_INT64, &i);
    if (st == YG_OK)
        st = yg_tensor_from_data(jv, js, 1, YG_INT64, &j);
    if (st == YG_OK)
        st = yg_tensor_from_data(mv, ms, 2, YG_BOOL, &m);
    if (st == YG_OK)
        st = yg_tensor_from_data(m1v, m1s, 1, YG_BOOL, &m1);
    if (st == YG_OK)
        st = yg_index(x, (const yg_tensor *const[]){NULL, i, j}, 3, &t[0]);
    if (st == YG_OK)
        st = yg_index(x, (const yg_tensor *const[]){i, NULL, j}, 3, &t[1]);
    if (st == YG_OK)
        st = yg_index(x, (const yg_tensor *const[]){m}, 1, &t[2]);
    if (st == YG_OK)
        st = yg_index(x, (const yg_tensor *const[]){m, j}, 2, &t[3]);
    if (st == YG_OK)
        st = yg_index(x, (const yg_tensor *const[]){NULL, m1}, 2, &t[4]);
    if (st == YG_OK) {
        outputs[0] = yg_retain(t[1]);
        outputs[1] = yg_retain(t[4]);
    }
    release_all(t, 5);
    yg_release(i);
    yg_release(j);
    yg_release(m);
    yg_release(m1);
    return st;
}

static void test_shape_propagation_recomputes_traced_advanced_indexing(void **state) {
    (void)state;
    const int64_t xs[] = {4, 5, 6};
    yg_tensor *x = rand_tensor(xs, 3, 51);
    yg_trace_result *r = NULL;
    YG_CHECK(yg_trace(indexes_with_ints_and_masks, NULL, &x, 1, 2, NULL, &r));
    char *text = NULL;
    YG_CHECK(yg_graph_print(r->graph, &text));
    assert_non_null(strstr(text, "sizes=[4, 2, 3]"));
    assert_non_null(strstr(text, "sizes=[2, 3, 5]"));
    yg_string_release(text);
    /* Two sizes depend on values: the true count of a mask alone. */
    expect_types_recomputed(r->graph, 2);
    yg_trace_result_release(r);
    yg_release(x);
}

/* Reductions with two results, repeat, index_select, gather, scatter,
 * constant padding and 2-d pooling on inputs[0] ([2, 3, 5, 6] float32). */
static yg_status gathers_scatters_and_pools(void *ctx,
                                            yg_tensor *const *inputs,
                                            int64_t n_inputs,
                                            yg_tensor **outputs,
                                            int64_t n_outputs) {
    const int64_t dims[] = {1, -1}, reps[] = {2, 1, 1, 2}, four[] = {4}, gs[] = {2, 3, 5, 2};
    const int64_t sel[] = {0, 4, 1, 1}, pad[] = {-1, 2, 0, 1}, three[] = {3}, one[] = {1};
    const int64_t out24[] = {2, 4}, seven[] = {7}, zero = 2;
    yg_tensor *x = inputs[0], *idx = NULL, *idx0 = NULL, *g = NULL, *t[14] = {NULL};
    yg_status st;
    (void)ctx;
    (void)n_inputs;
    (void)n_outputs;
    st = yg_tensor_from_data(sel, four, 1, YG_INT64, &idx);
    if (st == YG_OK)
        st = yg_tensor_from_data(&zero, NULL, 0, YG_INT64, &idx0);
    if (st == YG_OK)
        st = yg_tensor_zeros(gs, 4, YG_INT64, &g);
    if (st == YG_OK)
        st = yg_var_mean(x, dims, 2, 1, true, &t[0], &t[1]);
    if (st == YG_OK)
        st = yg_repeat(x, reps, 4, &t[2]);
    if (st == YG_OK)
        st = yg_index_select(x, 2, idx, &t[3]);
    if (st == YG_OK)
        st = yg_index_select(x, -1, idx0, &t[4]);
    if (st == YG_OK)
        st = yg_gather(x, 3, g, &t[5]);
    if (st == YG_OK)
        st = yg_scatter(x, 3, g, x, &t[6]);
    if (st == YG_OK)
        st = yg_scatter_value(x, 3, g, 2.0, &t[7]);
    if (st == YG_OK)
        st = yg_scatter_add(x, 3, g, x, &t[8]);
    if (st == YG_OK)
        st = yg_constant_pad_nd(x, pad, 4, 0.0, &t[9]);
    if (st == YG_OK)
        st = yg_avg_pool2d(x, three, 1, NULL, 0, one, 1, true, true, &t[10]);
    if (st == YG_OK)
        st = yg_adaptive_avg_pool2d(x, out24, 2, &t[11]);
    if (st == YG_OK)
        st = yg_upsample_nearest2d(x, seven, 1, &t[12]);
    if (st == YG_OK) {
        outputs[0] = yg_retain(t[1]);
        outputs[1] = yg_retain(t[12]);
    }
    release_all(t, 14);
    yg_release(idx);
    yg_release(idx0);
    yg_release(g);
    return st;
}

static void test_shape_propagation_recomputes_traced_gathers_scatters_and_pools(void **state) {
    (void)state;
    const int64_t xs[] = {2, 3, 5, 6};
    yg_tensor *x = rand_tensor(xs, 4, 61);
    yg_trace_result *r = NULL;
    YG_CHECK(yg_trace(gathers_scatters_and_pools, NULL, &x, 1, 2, NULL, &r));
    char *kinds = kinds_of(r->graph);
    assert_non_null(strstr(kinds, "var_mean,repeat,prim::Constant,index_select"));
    assert_non_null(strstr(kinds, "avg_pool2d,adaptive_avg_pool2d,upsample_nearest2d"));
    free(kinds);
    expect_types_recomputed(r->graph, 0);
    yg_trace_result_release(r);
    yg_release(x);
}

/* Pointwise ops over inputs of two dtypes: every op the eager call
 * accepts is recorded (a refused dtype records nothing). */
typedef yg_status (*unary_fn)(const yg_tensor *, yg_tensor **);
typedef yg_status (*binary_fn)(const yg_tensor *, const yg_tensor *, yg_tensor **);

static yg_status pointwise_over_dtypes(void *ctx,
                                       yg_tensor *const *inputs,
                                       int64_t n_inputs,
                                       yg_tensor **outputs,
                                       int64_t n_outputs) {
    static const unary_fn unary[] = {yg_neg,
                                     yg_exp,
                                     yg_sqrt,
                                     yg_abs,
                                     yg_sign,
                                     yg_relu,
                                     yg_sigmoid,
                                     yg_floor,
                                     yg_round,
                                     yg_reciprocal,
                                     yg_erf,
                                     yg_logical_not};
    static const binary_fn binary[] = {yg_mul,
                                       yg_div,
                                       yg_maximum,
                                       yg_minimum,
                                       yg_atan2,
                                       yg_remainder,
                                       yg_pow,
                                       yg_logical_and,
                                       yg_eq,
                                       yg_lt};
    int *recorded = ctx;
    yg_tensor *y = NULL;
    (void)n_inputs;
    (void)n_outputs;
    for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++) {
        if (unary[i](inputs[0], &y) == YG_OK)
            ++*recorded;
        yg_release(y);
        y = NULL;
    }
    for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++) {
        if (binary[i](inputs[0], inputs[1], &y) == YG_OK)
            ++*recorded;
        yg_release(y);
        y = NULL;
    }
    if (yg_where(inputs[2], inputs[0], inputs[1], &y) == YG_OK)
        ++*recorded;
    yg_release(y);
    y = NULL;
    if (yg_add(inputs[0], inputs[1], 1, &y) == YG_OK)
        ++*recorded;
    yg_release(y);
    y = NULL;
    if (yg_div_mode(inputs[0], inputs[1], YG_ROUNDING_MODE_FLOOR, &y) == YG_OK)
        ++*recorded;
    yg_release(y);
    return yg_neg(inputs[1], &outputs[0]) == YG_OK ? YG_OK : yg_clone(inputs[1], &outputs[0]);
}

static void test_shape_propagation_recomputes_pointwise_dtypes_of_every_pair(void **state) {
    (void)state;
    static const yg_dtype dtypes[] = {
        YG_FLOAT32, YG_FLOAT64, YG_INT64, YG_INT32, YG_BOOL, YG_FLOAT16, YG_BFLOAT16};
    const int64_t as[] = {2, 3}, bs[] = {3}, cs[] = {2, 1};
    int total = 0;
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) {
        for (size_t j = 0; j < sizeof dtypes / sizeof dtypes[0]; j++) {
            yg_tensor *in[3] = {yg_test_rand(dtypes[i], as, 2, 0, 3, 71 + i),
                                yg_test_rand(dtypes[j], bs, 1, 0, 3, 91 + j),
                                yg_test_rand(YG_BOOL, cs, 2, 0, 2, 5)};
            yg_trace_result *r = NULL;
            int recorded = 0;
            YG_CHECK(yg_trace(pointwise_over_dtypes, &recorded, in, 3, 1, NULL, &r));
            total += recorded;
            expect_types_recomputed(r->graph, 0);
            yg_trace_result_release(r);
            release_all(in, 3);
        }
    }
    assert_true(total > 500); /* 624 when written: the compute dtypes' pairs */
}

/* gru_cell batched and lstm_cell unbatched, with and without biases. */
static yg_status runs_recurrent_cells(void *ctx,
                                      yg_tensor *const *inputs,
                                      int64_t n_inputs,
                                      yg_tensor **outputs,
                                      int64_t n_outputs) {
    yg_tensor *const *w = ctx;
    yg_tensor *cy = NULL;
    yg_status st;
    (void)n_inputs;
    (void)n_outputs;
    /* w: gru w_ih [6, 3], w_hh [6, 2], b [6]; lstm w_ih [8, 3], w_hh [8, 2] */
    st = yg_gru_cell(inputs[0], inputs[1], w[0], w[1], w[2], w[2], &outputs[0]);
    if (st == YG_OK)
        st =
            yg_lstm_cell(inputs[2], inputs[3], inputs[3], w[3], w[4], NULL, NULL, &outputs[1], &cy);
    yg_release(cy);
    return st;
}

static void test_shape_propagation_recomputes_traced_recurrent_cells(void **state) {
    (void)state;
    const int64_t xs[] = {4, 3}, hs[] = {4, 2}, x1[] = {3}, h1[] = {2};
    const int64_t gi[] = {6, 3}, gh[] = {6, 2}, gb[] = {6}, li[] = {8, 3}, lh[] = {8, 2};
    yg_tensor *in[4] = {
        rand_tensor(xs, 2, 1), rand_tensor(hs, 2, 2), rand_tensor(x1, 1, 3), rand_tensor(h1, 1, 4)};
    yg_tensor *w[5] = {rand_tensor(gi, 2, 5),
                       rand_tensor(gh, 2, 6),
                       rand_tensor(gb, 1, 7),
                       rand_tensor(li, 2, 8),
                       rand_tensor(lh, 2, 9)};
    yg_trace_result *r = NULL;
    YG_CHECK(yg_trace(runs_recurrent_cells, w, in, 4, 2, NULL, &r));
    expect_kinds(r->graph, "gru_cell,prim::None,prim::None,lstm_cell");
    expect_types_recomputed(r->graph, 0);
    yg_trace_result_release(r);
    release_all(in, 4);
    release_all(w, 5);
}

/* Attention with broadcast batch dims, bool and floating masks, and a
 * causal mask; inputs: query [2, 1, 4, 3], key [3, 5, 3], value [5, 6],
 * bool mask [4, 5], float mask [2, 1, 1, 5]. */
static yg_status attends(void *ctx,
                         yg_tensor *const *inputs,
                         int64_t n_inputs,
                         yg_tensor **outputs,
                         int64_t n_outputs) {
    yg_tensor *a = NULL, *b = NULL, *q2 = NULL, *k2 = NULL;
    const double scale = 0.5;
    yg_status st;
    (void)ctx;
    (void)n_inputs;
    (void)n_outputs;
    st = yg_scaled_dot_product_attention(inputs[0], inputs[1], inputs[2], NULL, false, NULL, &a);
    if (st == YG_OK)
        st = yg_scaled_dot_product_attention(
            inputs[0], inputs[1], inputs[2], inputs[3], false, &scale, &b);
    if (st == YG_OK)
        st = yg_scaled_dot_product_attention(
            inputs[0], inputs[1], inputs[2], inputs[4], false, NULL, &outputs[0]);
    if (st == YG_OK)
        st = yg_select(inputs[0], 0, 0, &q2); /* [1, 4, 3] */
    if (st == YG_OK)
        st = yg_select(inputs[1], 0, 1, &k2); /* [5, 3] */
    if (st == YG_OK)
        st = yg_scaled_dot_product_attention(q2, k2, inputs[2], NULL, true, NULL, &outputs[1]);
    yg_release(a);
    yg_release(b);
    yg_release(q2);
    yg_release(k2);
    return st;
}

static void test_shape_propagation_recomputes_traced_attention(void **state) {
    (void)state;
    const int64_t qs[] = {2, 1, 4, 3}, ks[] = {3, 5, 3}, vs[] = {5, 6}, ms[] = {4, 5},
                  fs[] = {2, 1, 1, 5};
    yg_tensor *in[5] = {rand_tensor(qs, 4, 1),
                        rand_tensor(ks, 3, 2),
                        rand_tensor(vs, 2, 3),
                        yg_test_rand(YG_BOOL, ms, 2, 0, 2, 4),
                        rand_tensor(fs, 4, 5)};
    yg_trace_result *r = NULL;
    YG_CHECK(yg_trace(attends, NULL, in, 5, 2, NULL, &r));
    char *text = NULL;
    YG_CHECK(yg_graph_print(r->graph, &text));
    assert_non_null(strstr(text, "sizes=[2, 3, 4, 6]"));
    yg_string_release(text);
    expect_kinds(r->graph,
                 "prim::None,scaled_dot_product_attention,scaled_dot_product_attention,"
                 "scaled_dot_product_attention,select,select,prim::None,"
                 "scaled_dot_product_attention");
    expect_types_recomputed(r->graph, 0);
    yg_trace_result_release(r);
    release_all(in, 5);
}

/* flash_attention (both outputs) and its fused gradient; inputs: query
 * [2, 4, 3], key [2, 5, 3], value [2, 5, 6], grad_output [2, 4, 6]. */
static yg_status flash_attends(void *ctx,
                               yg_tensor *const *inputs,
                               int64_t n_inputs,
                               yg_tensor **outputs,
                               int64_t n_outputs) {
    yg_tensor *o = NULL, *lse = NULL, *g[3] = {NULL, NULL, NULL};
    yg_status st;
    (void)ctx;
    (void)n_inputs;
    (void)n_outputs;
    st = yg_flash_attention(inputs[0], inputs[1], inputs[2], true, NULL, &o, &lse);
    if (st == YG_OK)
        st = yg_flash_attention_backward_fused(
            inputs[3], inputs[0], inputs[1], inputs[2], o, lse, true, NULL, &g[0], &g[1], &g[2]);
    if (st == YG_OK) {
        outputs[0] = yg_retain(lse);
        outputs[1] = yg_retain(g[1]);
    }
    yg_release(o);
    yg_release(lse);
    for (int i = 0; i < 3; i++)
        yg_release(g[i]);
    return st;
}

static void test_shape_propagation_recomputes_traced_flash_attention(void **state) {
    (void)state;
    const int64_t qs[] = {2, 4, 3}, ks[] = {2, 5, 3}, vs[] = {2, 5, 6}, gs[] = {2, 4, 6};
    yg_tensor *in[4] = {
        rand_tensor(qs, 3, 1), rand_tensor(ks, 3, 2), rand_tensor(vs, 3, 3), rand_tensor(gs, 3, 4)};
    yg_trace_result *r = NULL;
    YG_CHECK(yg_trace(flash_attends, NULL, in, 4, 2, NULL, &r));
    char *text = NULL;
    YG_CHECK(yg_graph_print(r->graph, &text));
    assert_non_null(strstr(text, "sizes=[2, 4, 6]"));
    assert_non_null(strstr(text, "sizes=[2, 4]"));
    yg_string_release(text);
    expect_kinds(r->graph, "flash_attention,flash_attention_backward_fused");
    expect_types_recomputed(r->graph, 0);
    yg_trace_result_release(r);
    release_all(in, 4);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shape_propagation_recomputes_traced_creation_random_and_conversion),
        cmocka_unit_test(test_shape_propagation_recomputes_traced_pieces_norms_pools_and_pads),
        cmocka_unit_test(test_shape_propagation_recomputes_traced_advanced_indexing),
        cmocka_unit_test(test_shape_propagation_recomputes_traced_gathers_scatters_and_pools),
        cmocka_unit_test(test_shape_propagation_recomputes_pointwise_dtypes_of_every_pair),
        cmocka_unit_test(test_shape_propagation_recomputes_traced_recurrent_cells),
        cmocka_unit_test(test_shape_propagation_recomputes_traced_attention),
        cmocka_unit_test(test_shape_propagation_recomputes_traced_flash_attention),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
