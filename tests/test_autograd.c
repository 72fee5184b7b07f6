/*
 * test_autograd.c - the engine: values of gradients against hand-derived
 * ones, accumulation, grad mode, broadcasting reduction, retain_graph and
 * the misuse messages.  In-place writes and views are tested in
 * test_autograd_views.c.
 */
#include "autograd/node.h"
#include "autograd_util.h"
#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_inplace_arithmetic.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_cumulative.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_views.h"

#define YG_RETURN_IF_ERROR_TEST(expr)                                                              \
    do {                                                                                           \
        yg_status st_ = (expr);                                                                    \
        if (st_ != YG_OK)                                                                          \
            return st_;                                                                            \
    } while (0)

static void test_grad_of_sum_of_squares_is_twice_x(void **state)
{
    const int64_t s[] = {3};
    const double xv[] = {1, -2, 3}, expected[] = {2, -4, 6};
    yg_tensor *x = leaf(s, 1, xv), *sq = NULL, *loss = NULL;
    (void)state;
    YG_CHECK(yg_mul(x, x, &sq));
    YG_CHECK(yg_sum(sq, &loss));
    assert_string_equal(yg_tensor_grad_fn_name(loss), "SumBackward");
    assert_string_equal(yg_tensor_grad_fn_name(sq), "MulBackward");
    YG_CHECK(yg_backward(loss, NULL, false));
    expect_grad(x, s, 1, expected);
    yg_release(loss);
    yg_release(sq);
    yg_release(x);
}

static void test_grad_flows_through_both_arms_of_a_diamond(void **state)
{
    /* y = sum(x * x + x): dy/dx = 2x + 1 */
    const int64_t s[] = {2};
    const double xv[] = {0.5, -1.5}, expected[] = {2, -2};
    yg_tensor *x = leaf(s, 1, xv), *sq = NULL, *y = NULL, *loss = NULL;
    (void)state;
    YG_CHECK(yg_mul(x, x, &sq));
    YG_CHECK(yg_add(sq, x, 1.0, &y));
    YG_CHECK(yg_sum(y, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    expect_grad(x, s, 1, expected);
    yg_release(loss);
    yg_release(y);
    yg_release(sq);
    yg_release(x);
}

static void test_leaf_grad_accumulates_until_zeroed(void **state)
{
    const int64_t s[] = {2};
    const double xv[] = {1, 2}, once[] = {3, 3}, twice[] = {6, 6};
    yg_tensor *x = leaf(s, 1, xv), *y = NULL, *loss = NULL;
    (void)state;
    for (int i = 0; i < 2; i++) {
        YG_CHECK(yg_mul_scalar(x, 3.0, &y));
        YG_CHECK(yg_sum(y, &loss));
        YG_CHECK(yg_backward(loss, NULL, false));
        expect_grad(x, s, 1, i == 0 ? once : twice);
        yg_release(loss);
        yg_release(y);
    }
    yg_tensor_zero_grad(x);
    {
        yg_tensor *g = (yg_tensor *)0x1;
        YG_CHECK(yg_tensor_grad(x, &g));
        assert_null(g);
    }
    yg_release(x);
}

static void test_broadcast_input_receives_reduced_grad(void **state)
{
    const int64_t rs[] = {3}, ms[] = {2, 3};
    const double rv[] = {1, 2, 3}, mv[] = {1, 1, 1, 1, 1, 1}, expected[] = {2, 2, 2};
    yg_tensor *row = leaf(rs, 1, rv), *m = yg_test_tensor(YG_FLOAT64, ms, 2, mv);
    yg_tensor *y = NULL, *loss = NULL;
    (void)state;
    YG_CHECK(yg_add(m, row, 1.0, &y));
    YG_CHECK(yg_sum(y, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    expect_grad(row, rs, 1, expected);
    yg_release(loss);
    yg_release(y);
    yg_release(row);
    yg_release(m);
}

static void test_explicit_root_grad_weights_outputs(void **state)
{
    const int64_t s[] = {3};
    const double xv[] = {1, 2, 3}, gv[] = {1, 10, 100}, expected[] = {2, 20, 200};
    yg_tensor *x = leaf(s, 1, xv), *g = yg_test_tensor(YG_FLOAT64, s, 1, gv), *y = NULL;
    (void)state;
    YG_CHECK(yg_mul_scalar(x, 2.0, &y));
    YG_CHECK(yg_backward(y, g, false));
    expect_grad(x, s, 1, expected);
    yg_release(y);
    yg_release(g);
    yg_release(x);
}

static void test_backward_on_a_leaf_accumulates_into_it(void **state)
{
    const int64_t s[] = {1};
    const double xv[] = {4}, expected[] = {1};
    yg_tensor *x = leaf(s, 1, xv);
    (void)state;
    YG_CHECK(yg_backward(x, NULL, false));
    expect_grad(x, s, 1, expected);
    yg_release(x);
}

/* Doubles t in place (grad mode off: .grad tensors do not require grad). */
static void double_in_place(yg_tensor *t)
{
    yg_tensor *same = NULL;
    YG_CHECK(yg_mul_scalar_(t, 2.0, &same));
    yg_release(same);
}

static yg_tensor *grad_of(const yg_tensor *t)
{
    yg_tensor *g = NULL;
    YG_CHECK(yg_tensor_grad(t, &g));
    assert_non_null(g);
    return g;
}

static void test_leaves_given_one_gradient_get_grads_of_their_own(void **state)
{
    /* add's backward passes the root gradient on to both inputs: one
     * tensor, which neither .grad may be, nor the caller's root grad. */
    const int64_t s[] = {3};
    const double ones[] = {1, 1, 1}, gv[] = {1, 2, 3}, doubled[] = {2, 4, 6};
    yg_tensor *a = leaf(s, 1, ones), *b = leaf(s, 1, ones);
    yg_tensor *g = yg_test_tensor(YG_FLOAT64, s, 1, gv), *y = NULL, *ga = NULL;
    (void)state;
    YG_CHECK(yg_add(a, b, 1.0, &y));
    YG_CHECK(yg_backward(y, g, false));
    ga = grad_of(a);
    double_in_place(ga);
    expect_grad(a, s, 1, doubled);
    expect_grad(b, s, 1, gv);
    YG_EXPECT_CLOSE(g, s, 1, gv, 0, 0);
    yg_release(ga);
    yg_release(y);
    yg_release(g);
    yg_release(b);
    yg_release(a);
}

/* A tensor hook that keeps a reference to the gradient it sees. */
static yg_status keep_gradient(const yg_tensor *grad, void *ctx, yg_tensor **replacement)
{
    yg_tensor **kept = ctx;
    (void)replacement;
    yg_release(*kept);
    *kept = yg_retain((yg_tensor *)grad);
    return YG_OK;
}

static void test_grad_is_not_the_gradient_a_hook_kept(void **state)
{
    /* The gradient of x * 3 is a fresh tensor that .grad could take as
     * is, but the hook holds it too: writing it later must not reach
     * .grad. */
    const int64_t s[] = {2};
    const double xv[] = {1, 2}, threes[] = {3, 3};
    yg_tensor *x = leaf(s, 1, xv), *y = NULL, *loss = NULL, *kept = NULL;
    (void)state;
    YG_CHECK(yg_tensor_register_hook(x, keep_gradient, &kept));
    YG_CHECK(yg_mul_scalar(x, 3.0, &y));
    YG_CHECK(yg_sum(y, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    assert_non_null(kept);
    double_in_place(kept);
    expect_grad(x, s, 1, threes);
    yg_release(kept);
    yg_release(loss);
    yg_release(y);
    yg_release(x);
}

static void test_grad_accumulates_transposed_gradients(void **state)
{
    /* y = t(w) * c: w's gradient arrives as a transposed view, first
     * stored (a contiguous copy) and then added to .grad. */
    const int64_t ws[] = {2, 3}, cs[] = {3, 2};
    const double wv[] = {0, 0, 0, 0, 0, 0}, cv[] = {1, 2, 3, 4, 5, 6};
    const double once[] = {1, 3, 5, 2, 4, 6}, twice[] = {2, 6, 10, 4, 8, 12};
    yg_tensor *w = leaf(ws, 2, wv), *c = yg_test_tensor(YG_FLOAT64, cs, 2, cv);
    yg_tensor *held = NULL;
    (void)state;
    for (int i = 0; i < 2; i++) {
        yg_tensor *wt = NULL, *y = NULL, *loss = NULL;
        YG_CHECK(yg_t(w, &wt));
        YG_CHECK(yg_mul(wt, c, &y));
        YG_CHECK(yg_sum(y, &loss));
        YG_CHECK(yg_backward(loss, NULL, false));
        expect_grad(w, ws, 2, i == 0 ? once : twice);
        if (i == 0)
            held = grad_of(w);
        yg_release(loss);
        yg_release(y);
        yg_release(wt);
    }
    /* A .grad the caller holds is not written by a later accumulation. */
    YG_EXPECT_CLOSE(held, ws, 2, once, 0, 0);
    yg_release(held);
    yg_release(c);
    yg_release(w);
}

/* One transposed view used three times (a traced graph computes t(w) once
 * for every step): its node's input buffer receives three gradients laid
 * out as the view.  The first is kept as it is, a dense transposed buffer,
 * and the next two are summed into it in place; the values must be those
 * of a plain sum. */
static void test_shared_view_sums_its_transposed_gradients(void **state)
{
    const int64_t ws[] = {2, 3}, as[] = {4, 3};
    const double wv[] = {0, 0, 0, 0, 0, 0};
    double av[12], expected[6] = {0};
    yg_tensor *w = leaf(ws, 2, wv), *wt = NULL, *a = NULL, *total = NULL;
    (void)state;
    for (int i = 0; i < 12; i++)
        av[i] = 0.5 * i - 2;
    a = yg_test_tensor(YG_FLOAT64, as, 2, av);
    /* loss = sum_k sum(mm(a * k, t(w))): d/dw[j][c] = sum_k k * sum_r a[r][c] */
    for (int j = 0; j < 2; j++)
        for (int c = 0; c < 3; c++)
            for (int r = 0; r < 4; r++)
                expected[j * 3 + c] += (1 + 2 + 3) * av[r * 3 + c];
    YG_CHECK(yg_t(w, &wt));
    for (int k = 1; k <= 3; k++) {
        yg_tensor *ak = NULL, *y = NULL, *s = NULL, *next = NULL;
        YG_CHECK(yg_mul_scalar(a, k, &ak));
        YG_CHECK(yg_mm(ak, wt, &y));
        YG_CHECK(yg_sum(y, &s));
        if (total == NULL) {
            total = yg_retain(s);
        } else {
            YG_CHECK(yg_add(total, s, 1, &next));
            yg_release(total);
            total = next;
        }
        yg_release(s);
        yg_release(y);
        yg_release(ak);
    }
    YG_CHECK(yg_backward(total, NULL, false));
    expect_grad(w, ws, 2, expected);
    yg_release(total);
    yg_release(wt);
    yg_release(a);
    yg_release(w);
}

static void test_linear_weight_grad_is_row_major_and_accumulates(void **state)
{
    /* linear's weight gradient is t(t(x^T g)): a view of a fresh product
     * that .grad takes without a copy.  It must be a contiguous plain
     * tensor, add up over backwards (in place once nobody else holds it)
     * and leave a .grad the caller holds unchanged. */
    const int64_t xs[] = {2, 3}, ws[] = {2, 3};
    const double xv[] = {1, 2, 3, 4, 5, 6}, wv[] = {0, 0, 0, 0, 0, 0};
    const double once[] = {5, 7, 9, 5, 7, 9}, twice[] = {10, 14, 18, 10, 14, 18};
    const double thrice[] = {15, 21, 27, 15, 21, 27};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, xs, 2, xv), *w = leaf(ws, 2, wv), *held = NULL;
    (void)state;
    for (int i = 0; i < 3; i++) {
        yg_tensor *y = NULL, *loss = NULL;
        YG_CHECK(yg_linear(x, w, NULL, &y));
        YG_CHECK(yg_sum(y, &loss));
        YG_CHECK(yg_backward(loss, NULL, false));
        if (i == 0) {
            yg_tensor *g = grad_of(w);
            assert_true(yg_tensor_is_contiguous(g));
            assert_null(yg_tensor_grad_fn_name(g));
            yg_release(g);
        }
        if (i == 1)
            held = grad_of(w);
        expect_grad(w, ws, 2, i == 0 ? once : i == 1 ? twice : thrice);
        yg_release(loss);
        yg_release(y);
    }
    YG_EXPECT_CLOSE(held, ws, 2, twice, 0, 0);
    yg_release(held);
    yg_release(w);
    yg_release(x);
}

static void test_grad_accumulation_does_not_write_the_incoming_gradient(void **state)
{
    /* backward on a leaf with an explicit gradient, twice: the second
     * accumulation adds into .grad, never into the caller's gradient. */
    const int64_t s[] = {2};
    const double xv[] = {0, 0}, gv[] = {1, 2}, twice[] = {2, 4};
    yg_tensor *x = leaf(s, 1, xv), *g = yg_test_tensor(YG_FLOAT64, s, 1, gv);
    (void)state;
    YG_CHECK(yg_backward(x, g, false));
    YG_CHECK(yg_backward(x, g, false));
    expect_grad(x, s, 1, twice);
    YG_EXPECT_CLOSE(g, s, 1, gv, 0, 0);
    yg_release(g);
    yg_release(x);
}

static void test_no_grad_mode_records_nothing_and_nests(void **state)
{
    const int64_t s[] = {2};
    const double xv[] = {1, 2};
    yg_tensor *x = leaf(s, 1, xv), *y = NULL;
    bool outer, inner;
    (void)state;
    assert_true(yg_is_grad_enabled());
    outer = yg_set_grad_enabled(false);
    inner = yg_set_grad_enabled(false);
    YG_CHECK(yg_mul(x, x, &y));
    assert_false(yg_tensor_requires_grad(y));
    assert_null(yg_tensor_grad_fn_name(y));
    yg_set_grad_enabled(inner);
    assert_false(yg_is_grad_enabled());
    yg_set_grad_enabled(outer);
    assert_true(yg_is_grad_enabled());
    yg_release(y);
    yg_release(x);
}

static void test_retain_graph_allows_a_second_backward(void **state)
{
    const int64_t s[] = {2};
    const double xv[] = {1, 2}, expected[] = {4, 8};
    yg_tensor *x = leaf(s, 1, xv), *sq = NULL, *loss = NULL;
    (void)state;
    YG_CHECK(yg_mul(x, x, &sq));
    YG_CHECK(yg_sum(sq, &loss));
    YG_CHECK(yg_backward(loss, NULL, true));
    YG_CHECK(yg_backward(loss, NULL, false));
    expect_grad(x, s, 1, expected);
    yg_release(loss);
    yg_release(sq);
    yg_release(x);
}

static void test_second_backward_through_freed_values_is_refused(void **state)
{
    const int64_t s[] = {2};
    const double xv[] = {1, 2};
    yg_tensor *x = leaf(s, 1, xv), *sq = NULL, *loss = NULL;
    (void)state;
    YG_CHECK(yg_mul(x, x, &sq));
    YG_CHECK(yg_sum(sq, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    YG_EXPECT_ERROR(yg_backward(loss, NULL, false), YG_ERR_AUTOGRAD, "MulBackward:",
                    "second time", "retain_graph");
    yg_release(loss);
    yg_release(sq);
    yg_release(x);
}

static void test_backward_on_tensor_without_grad_is_refused(void **state)
{
    const int64_t s[] = {2};
    const double xv[] = {1, 2};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 1, xv), *loss = NULL;
    (void)state;
    YG_CHECK(yg_sum(x, &loss));
    YG_EXPECT_ERROR(yg_backward(loss, NULL, false), YG_ERR_AUTOGRAD, "backward:",
                    "does not require grad");
    yg_release(loss);
    yg_release(x);
}

static void test_implicit_grad_needs_a_single_element_root(void **state)
{
    const int64_t s[] = {2};
    const double xv[] = {1, 2};
    yg_tensor *x = leaf(s, 1, xv), *y = NULL;
    (void)state;
    YG_CHECK(yg_mul(x, x, &y));
    YG_EXPECT_ERROR(yg_backward(y, NULL, false), YG_ERR_AUTOGRAD, "backward:", "root [2]");
    yg_release(y);
    yg_release(x);
}

static void test_root_grad_of_wrong_shape_is_refused(void **state)
{
    const int64_t s[] = {2}, gs[] = {3};
    const double xv[] = {1, 2}, gv[] = {1, 1, 1};
    yg_tensor *x = leaf(s, 1, xv), *g = yg_test_tensor(YG_FLOAT64, gs, 1, gv), *y = NULL;
    (void)state;
    YG_CHECK(yg_mul(x, x, &y));
    YG_EXPECT_ERROR(yg_backward(y, g, false), YG_ERR_SHAPE, "backward: grad [3] does not match root [2]");
    yg_release(y);
    yg_release(g);
    yg_release(x);
}

static void test_modified_saved_tensor_is_detected(void **state)
{
    const int64_t s[] = {2};
    const double xv[] = {1, 2}, bv[] = {3, 4};
    yg_tensor *x = leaf(s, 1, xv), *b = yg_test_tensor(YG_FLOAT64, s, 1, bv);
    yg_tensor *y = NULL, *loss = NULL, *same = NULL;
    (void)state;
    YG_CHECK(yg_mul(x, b, &y)); /* saves b for x's gradient */
    YG_CHECK(yg_sum(y, &loss));
    YG_CHECK(yg_add_(b, b, 1.0, &same));
    YG_EXPECT_ERROR(yg_backward(loss, NULL, false), YG_ERR_AUTOGRAD, "MulBackward:",
                    "modified by an in-place operation", "version 1, expected version 0");
    yg_release(same);
    yg_release(loss);
    yg_release(y);
    yg_release(b);
    yg_release(x);
}

static void test_requires_grad_is_refused_for_non_leaf_and_integers(void **state)
{
    const int64_t s[] = {2};
    const double xv[] = {1, 2};
    yg_tensor *x = leaf(s, 1, xv), *y = NULL, *i = yg_test_tensor(YG_INT64, s, 1, xv);
    (void)state;
    YG_CHECK(yg_mul(x, x, &y));
    YG_EXPECT_ERROR(yg_tensor_set_requires_grad(y, true), YG_ERR_AUTOGRAD, "requires_grad_:",
                    "not a leaf", "MulBackward");
    YG_EXPECT_ERROR(yg_tensor_set_requires_grad(i, true), YG_ERR_DTYPE,
                    "only floating tensors can require gradients, got int64");
    yg_release(y);
    yg_release(i);
    yg_release(x);
}

static void test_op_without_formula_refuses_inputs_that_require_grad(void **state)
{
    /* cumprod_jvp has no entry in derivatives.yaml (it is only ever
     * called by CumprodBackwardBackward; its YAML entry says why with
     * `derivative: not_differentiable`); giving it a tensor that requires
     * grad must fail at the call, not at a later backward, saying why. */
    const int64_t s[] = {2};
    const double gv[] = {1, 2}, ov[] = {-0.5, -1.0};
    yg_tensor *g = leaf(s, 1, gv), *o = yg_test_tensor(YG_FLOAT64, s, 1, ov), *y = NULL;
    (void)state;
    YG_EXPECT_ERROR(yg_cumprod_jvp(g, o, 0, &y),
                    YG_ERR_NOT_IMPLEMENTED,
                    "cumprod_jvp: not differentiable (a part of cumprod's second derivative",
                    "but an input requires grad");
    assert_null(y);
    yg_release(g);
    yg_release(o);
}

static void test_long_chain_backward_does_not_recurse(void **state)
{
    /* 100k ops: a recursive engine or release would overflow the stack. */
    const int64_t s[] = {1};
    const double xv[] = {1}, expected[] = {1};
    yg_tensor *x = leaf(s, 1, xv), *cur = yg_retain(x), *next = NULL;
    (void)state;
    for (int i = 0; i < 100000; i++) {
        YG_CHECK(yg_mul_scalar(cur, 1.0, &next));
        yg_release(cur);
        cur = next;
    }
    YG_CHECK(yg_backward(cur, NULL, false));
    expect_grad(x, s, 1, expected);
    yg_release(cur);
    yg_release(x);
}

static void test_grad_returns_gradients_without_touching_dot_grad(void **state)
{
    const int64_t s[] = {3};
    const double xv[] = {1, 2, 3}, expected[] = {3, 12, 27};
    yg_tensor *x = leaf(s, 1, xv), *x2 = NULL, *x3 = NULL, *loss = NULL, *g[1] = {NULL};
    yg_tensor *dot_grad = (yg_tensor *)0x1;
    (void)state;
    YG_CHECK(yg_mul(x, x, &x2));
    YG_CHECK(yg_mul(x2, x, &x3));
    YG_CHECK(yg_sum(x3, &loss));
    YG_CHECK(yg_grad((const yg_tensor *const *)&loss, 1, NULL, (const yg_tensor *const *)&x, 1,
                     false, false, false, g));
    YG_EXPECT_CLOSE(g[0], s, 1, expected, 1e-12, 1e-12);
    YG_CHECK(yg_tensor_grad(x, &dot_grad));
    assert_null(dot_grad);
    yg_release(g[0]);
    yg_release(loss);
    yg_release(x3);
    yg_release(x2);
    yg_release(x);
}

static void test_double_backward_gives_second_derivative(void **state)
{
    /* d/dx sum(d/dx sum(x^3)) = d/dx sum(3x^2) = 6x */
    const int64_t s[] = {3};
    const double xv[] = {1, -2, 0.5}, expected[] = {6, -12, 3};
    yg_tensor *x = leaf(s, 1, xv), *x2 = NULL, *x3 = NULL, *loss = NULL, *g[1] = {NULL};
    yg_tensor *gsum = NULL;
    (void)state;
    YG_CHECK(yg_mul(x, x, &x2));
    YG_CHECK(yg_mul(x2, x, &x3));
    YG_CHECK(yg_sum(x3, &loss));
    YG_CHECK(yg_grad((const yg_tensor *const *)&loss, 1, NULL, (const yg_tensor *const *)&x, 1,
                     false, true, false, g));
    assert_true(yg_tensor_requires_grad(g[0]));
    YG_CHECK(yg_sum(g[0], &gsum));
    YG_CHECK(yg_backward(gsum, NULL, false));
    expect_grad(x, s, 1, expected);
    yg_release(gsum);
    yg_release(g[0]);
    yg_release(loss);
    yg_release(x3);
    yg_release(x2);
    yg_release(x);
}

static void test_grad_of_unused_input_is_null_only_when_allowed(void **state)
{
    const int64_t s[] = {2};
    const double v[] = {1, 2};
    yg_tensor *x = leaf(s, 1, v), *z = leaf(s, 1, v), *loss = NULL;
    const yg_tensor *inputs[2];
    yg_tensor *g[2] = {NULL, NULL};
    (void)state;
    inputs[0] = x;
    inputs[1] = z;
    YG_CHECK(yg_sum(x, &loss));
    YG_EXPECT_ERROR(yg_grad((const yg_tensor *const *)&loss, 1, NULL, inputs, 2, true, false,
                            false, g),
                    YG_ERR_AUTOGRAD, "grad: input 1 is not reachable", "allow_unused");
    assert_null(g[0]);
    assert_null(g[1]);
    YG_CHECK(yg_grad((const yg_tensor *const *)&loss, 1, NULL, inputs, 2, false, false, true, g));
    assert_non_null(g[0]);
    assert_null(g[1]);
    yg_release(g[0]);
    yg_release(loss);
    yg_release(x);
    yg_release(z);
}

static yg_status double_it(const yg_tensor *grad, void *ctx, yg_tensor **replacement)
{
    (*(int *)ctx)++;
    return yg_mul_scalar(grad, 2.0, replacement);
}

static void test_tensor_hooks_replace_gradients_of_leaves_and_non_leaves(void **state)
{
    /* loss = sum(3 * (x * 1)); hook on the intermediate doubles, hook on
     * the leaf doubles again: x.grad = 12 */
    const int64_t s[] = {2};
    const double v[] = {1, 2}, expected[] = {12, 12};
    yg_tensor *x = leaf(s, 1, v), *mid = NULL, *y = NULL, *loss = NULL;
    int calls = 0;
    (void)state;
    YG_CHECK(yg_mul_scalar(x, 1.0, &mid));
    YG_CHECK(yg_tensor_register_hook(mid, double_it, &calls));
    YG_CHECK(yg_tensor_register_hook(x, double_it, &calls));
    YG_CHECK(yg_mul_scalar(mid, 3.0, &y));
    YG_CHECK(yg_sum(y, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    expect_grad(x, s, 1, expected);
    assert_int_equal(calls, 2);
    yg_release(loss);
    yg_release(y);
    yg_release(mid);
    yg_release(x);
}

static yg_status failing_hook(const yg_tensor *grad, void *ctx, yg_tensor **replacement)
{
    (void)grad;
    (void)ctx;
    (void)replacement;
    return yg_set_error(YG_ERR_INVALID_ARGUMENT, "hook says no");
}

static void test_failing_hook_stops_backward_with_its_message(void **state)
{
    const int64_t s[] = {2};
    const double v[] = {1, 2};
    yg_tensor *x = leaf(s, 1, v), *mid = NULL, *loss = NULL;
    (void)state;
    YG_CHECK(yg_mul_scalar(x, 1.0, &mid));
    YG_CHECK(yg_tensor_register_hook(mid, failing_hook, NULL));
    YG_CHECK(yg_sum(mid, &loss));
    YG_EXPECT_ERROR(yg_backward(loss, NULL, false), YG_ERR_INVALID_ARGUMENT, "tensor hook",
                    "hook says no");
    yg_release(loss);
    yg_release(mid);
    yg_release(x);
}

static void test_retain_grad_keeps_the_grad_of_a_non_leaf(void **state)
{
    const int64_t s[] = {2};
    const double v[] = {1, 2}, expected[] = {3, 3};
    yg_tensor *x = leaf(s, 1, v), *mid = NULL, *y = NULL, *loss = NULL, *g = NULL;
    (void)state;
    YG_CHECK(yg_mul_scalar(x, 5.0, &mid));
    YG_CHECK(yg_tensor_retain_grad(mid));
    YG_CHECK(yg_mul_scalar(mid, 3.0, &y));
    YG_CHECK(yg_sum(y, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    YG_CHECK(yg_tensor_grad(mid, &g));
    YG_EXPECT_CLOSE(g, s, 1, expected, 0, 0);
    yg_release(g);
    yg_release(loss);
    yg_release(y);
    yg_release(x);
    yg_release(mid); /* after the graph: the retain hook must not dangle */
}

typedef struct hook_log {
    int pre, post;
    int32_t n_outputs, n_inputs;
} hook_log;

static yg_status log_pre(yg_node *node, yg_tensor **grads, int32_t n, void *ctx)
{
    hook_log *log = ctx;
    (void)node;
    (void)grads;
    log->pre++;
    log->n_outputs = n;
    return YG_OK;
}

static yg_status zero_first_input(yg_node *node, yg_tensor **grad_inputs, int32_t n_inputs,
                                  yg_tensor *const *grads, int32_t n_outputs, void *ctx)
{
    hook_log *log = ctx;
    yg_tensor *z = NULL;
    (void)node;
    (void)grads;
    (void)n_outputs;
    log->post++;
    log->n_inputs = n_inputs;
    YG_RETURN_IF_ERROR_TEST(yg_mul_scalar(grad_inputs[0], 0.0, &z));
    yg_release(grad_inputs[0]);
    grad_inputs[0] = z;
    return YG_OK;
}

static void test_node_hooks_see_and_replace_gradients(void **state)
{
    const int64_t s[] = {2};
    const double a_v[] = {1, 2}, b_v[] = {3, 4}, zeros[] = {0, 0}, expected_b[] = {1, 2};
    yg_tensor *a = leaf(s, 1, a_v), *b = leaf(s, 1, b_v), *y = NULL, *loss = NULL;
    hook_log log = {0};
    (void)state;
    YG_CHECK(yg_mul(a, b, &y));
    assert_string_equal(yg_node_name(yg_tensor_grad_fn(y)), "MulBackward");
    YG_CHECK(yg_node_register_pre_hook(yg_tensor_grad_fn(y), log_pre, &log));
    YG_CHECK(yg_node_register_post_hook(yg_tensor_grad_fn(y), zero_first_input, &log));
    YG_CHECK(yg_sum(y, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    assert_int_equal(log.pre, 1);
    assert_int_equal(log.post, 1);
    assert_int_equal(log.n_outputs, 1);
    assert_int_equal(log.n_inputs, 2);
    expect_grad(a, s, 1, zeros);
    expect_grad(b, s, 1, expected_b);
    yg_release(loss);
    yg_release(y);
    yg_release(a);
    yg_release(b);
}

static void test_detach_shares_data_but_not_history(void **state)
{
    const int64_t s[] = {2};
    const double v[] = {1, 2};
    yg_tensor *x = leaf(s, 1, v), *y = NULL, *d = NULL;
    (void)state;
    YG_CHECK(yg_mul_scalar(x, 2.0, &y));
    YG_CHECK(yg_detach(y, &d));
    assert_false(yg_tensor_requires_grad(d));
    assert_ptr_equal(yg_tensor_data(d), yg_tensor_data(y));
    YG_CHECK(yg_detach_(y));
    assert_true(yg_tensor_is_leaf(y));
    assert_false(yg_tensor_requires_grad(y));
    yg_release(d);
    yg_release(y);
    yg_release(x);
}

static void test_enable_grad_inside_no_grad_records_again(void **state)
{
    const int64_t s[] = {2};
    const double v[] = {1, 2};
    yg_tensor *x = leaf(s, 1, v), *y = NULL;
    bool outer = yg_set_grad_enabled(false), inner = yg_set_grad_enabled(true);
    (void)state;
    YG_CHECK(yg_mul(x, x, &y));
    assert_true(yg_tensor_requires_grad(y));
    yg_set_grad_enabled(inner);
    yg_set_grad_enabled(outer);
    yg_release(y);
    yg_release(x);
}

static void test_create_graph_records_dtype_conversions_of_gradients(void **state)
{
    /* loss = sum(a * y * y), a float32, y float64: the gradient for a is
     * y * y converted to float32 by the engine, so d/dy sum(grad_a) = 2y.
     * A float32 grad_output for a float64 output is converted too:
     * grad(out = y * y, grad_outputs = w) = 2 y w, whose derivative in w
     * is 2y. */
    const int64_t s[] = {3};
    const double av[] = {1, 2, 3}, yv[] = {0.5, -1, 2}, wv[] = {1, -2, 3};
    const double twice_y[] = {1, -2, 4};
    yg_tensor *a = yg_test_tensor(YG_FLOAT32, s, 1, av), *y = leaf(s, 1, yv);
    yg_tensor *w = yg_test_tensor(YG_FLOAT32, s, 1, wv);
    yg_tensor *ay = NULL, *yy = NULL, *prod = NULL, *loss = NULL, *inputs[2], *g[2] = {NULL, NULL};
    yg_tensor *sg = NULL, *gy = NULL, *gw = NULL, *sgy = NULL;
    (void)state;
    YG_CHECK(yg_tensor_set_requires_grad(a, true));
    YG_CHECK(yg_tensor_set_requires_grad(w, true));
    YG_CHECK(yg_mul(a, y, &ay));
    YG_CHECK(yg_mul(ay, y, &prod));
    YG_CHECK(yg_sum(prod, &loss));
    inputs[0] = a;
    inputs[1] = y;
    YG_CHECK(yg_grad((const yg_tensor *const *)&loss, 1, NULL, (const yg_tensor *const *)inputs,
                     2, false, true, false, g));
    assert_int_equal(yg_tensor_dtype(g[0]), YG_FLOAT32);
    assert_true(yg_tensor_requires_grad(g[0]));
    YG_CHECK(yg_sum(g[0], &sg));
    YG_CHECK(yg_grad((const yg_tensor *const *)&sg, 1, NULL, (const yg_tensor *const *)&y, 1,
                     false, false, false, &gy));
    YG_EXPECT_CLOSE(gy, s, 1, twice_y, 1e-6, 1e-6);

    YG_CHECK(yg_mul(y, y, &yy));
    YG_CHECK(yg_grad((const yg_tensor *const *)&yy, 1, (const yg_tensor *const *)&w,
                     (const yg_tensor *const *)&y, 1, false, true, false, &gw));
    assert_true(yg_tensor_requires_grad(gw));
    YG_CHECK(yg_sum(gw, &sgy));
    yg_release(gw);
    gw = NULL;
    YG_CHECK(yg_grad((const yg_tensor *const *)&sgy, 1, NULL, (const yg_tensor *const *)&w, 1,
                     false, false, false, &gw));
    YG_EXPECT_CLOSE(gw, s, 1, twice_y, 1e-6, 1e-6);
    yg_release(sgy);
    yg_release(gw);
    yg_release(yy);
    yg_release(gy);
    yg_release(sg);
    yg_release(g[1]);
    yg_release(g[0]);
    yg_release(loss);
    yg_release(prod);
    yg_release(ay);
    yg_release(w);
    yg_release(y);
    yg_release(a);
}

/* size(x, d) in a formula reads saved sizes through yg__saved_sizes_at: a
 * dim out of range (a formula computing d wrongly) is an error naming x and
 * d, prefixed by the node's name in its apply, never a read past ndim. */
static void test_size_of_saved_sizes_checks_the_dim(void **state)
{
    yg_saved_sizes s = {.ndim = 2, .sizes = {4, 3}};
    yg_saved_sizes scalar = {.ndim = 0};
    int64_t v = -1;
    (void)state;

    YG_CHECK(yg__saved_sizes_at(&s, "self", 0, &v));
    assert_int_equal(v, 4);
    YG_CHECK(yg__saved_sizes_at(&s, "self", -1, &v));
    assert_int_equal(v, 3);
    YG_CHECK(yg__saved_sizes_at(&s, "self", -2, &v));
    assert_int_equal(v, 4);
    YG_EXPECT_ERROR(yg__fail_prefix(yg__saved_sizes_at(&s, "self", 2, &v), "NarrowCopyBackward"),
                    YG_ERR_INDEX,
                    "NarrowCopyBackward: size(self, 2): dim 2 out of range for self [4, 3] "
                    "(expected -2 to 1)");
    assert_int_equal(v, 0);
    YG_EXPECT_ERROR(yg__saved_sizes_at(&s, "result", -3, &v), YG_ERR_INDEX,
                    "size(result, -3): dim -3 out of range for result [4, 3]");
    YG_EXPECT_ERROR(yg__saved_sizes_at(&scalar, "self", 0, &v), YG_ERR_INDEX,
                    "size(self, 0): dim 0 out of range for self [] (a 0-dim tensor has no dims)");
    YG_EXPECT_ERROR(yg__saved_sizes_at(&scalar, "self", -1, &v), YG_ERR_INDEX, "size(self, -1)");
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grad_of_sum_of_squares_is_twice_x),
        cmocka_unit_test(test_grad_flows_through_both_arms_of_a_diamond),
        cmocka_unit_test(test_leaf_grad_accumulates_until_zeroed),
        cmocka_unit_test(test_broadcast_input_receives_reduced_grad),
        cmocka_unit_test(test_explicit_root_grad_weights_outputs),
        cmocka_unit_test(test_backward_on_a_leaf_accumulates_into_it),
        cmocka_unit_test(test_leaves_given_one_gradient_get_grads_of_their_own),
        cmocka_unit_test(test_grad_is_not_the_gradient_a_hook_kept),
        cmocka_unit_test(test_grad_accumulates_transposed_gradients),
        cmocka_unit_test(test_shared_view_sums_its_transposed_gradients),
        cmocka_unit_test(test_linear_weight_grad_is_row_major_and_accumulates),
        cmocka_unit_test(test_grad_accumulation_does_not_write_the_incoming_gradient),
        cmocka_unit_test(test_no_grad_mode_records_nothing_and_nests),
        cmocka_unit_test(test_retain_graph_allows_a_second_backward),
        cmocka_unit_test(test_second_backward_through_freed_values_is_refused),
        cmocka_unit_test(test_backward_on_tensor_without_grad_is_refused),
        cmocka_unit_test(test_implicit_grad_needs_a_single_element_root),
        cmocka_unit_test(test_root_grad_of_wrong_shape_is_refused),
        cmocka_unit_test(test_modified_saved_tensor_is_detected),
        cmocka_unit_test(test_requires_grad_is_refused_for_non_leaf_and_integers),
        cmocka_unit_test(test_op_without_formula_refuses_inputs_that_require_grad),
        cmocka_unit_test(test_long_chain_backward_does_not_recurse),
        cmocka_unit_test(test_grad_returns_gradients_without_touching_dot_grad),
        cmocka_unit_test(test_double_backward_gives_second_derivative),
        cmocka_unit_test(test_grad_of_unused_input_is_null_only_when_allowed),
        cmocka_unit_test(test_tensor_hooks_replace_gradients_of_leaves_and_non_leaves),
        cmocka_unit_test(test_failing_hook_stops_backward_with_its_message),
        cmocka_unit_test(test_retain_grad_keeps_the_grad_of_a_non_leaf),
        cmocka_unit_test(test_node_hooks_see_and_replace_gradients),
        cmocka_unit_test(test_detach_shares_data_but_not_history),
        cmocka_unit_test(test_enable_grad_inside_no_grad_records_again),
        cmocka_unit_test(test_create_graph_records_dtype_conversions_of_gradients),
        cmocka_unit_test(test_size_of_saved_sizes_checks_the_dim),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
