/*
 * test_autograd.c - the engine: values of gradients against hand-derived
 * ones, accumulation, grad mode, broadcasting reduction, retain_graph and
 * the misuse messages.
 */
#include <stdlib.h>

#include "testutil.h"

static yg_tensor *leaf(const int64_t *sizes, int64_t ndim, const double *v)
{
    yg_tensor *t = yg_test_tensor(YG_FLOAT64, sizes, ndim, v);
    YG_CHECK(yg_tensor_set_requires_grad(t, true));
    return t;
}

static void expect_grad(const yg_tensor *t, const int64_t *sizes, int64_t ndim, const double *v)
{
    yg_tensor *g = NULL;
    YG_CHECK(yg_tensor_grad(t, &g));
    assert_non_null(g);
    YG_EXPECT_CLOSE(g, sizes, ndim, v, 1e-12, 1e-12);
    yg_release(g);
}

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
    const int64_t s[] = {2};
    const double xv[] = {1, 2};
    yg_tensor *x = leaf(s, 1, xv), *y = NULL;
    (void)state;
    YG_EXPECT_ERROR(yg_relu_backward(x, x, &y), YG_ERR_NOT_IMPLEMENTED, "relu_backward:",
                    "no derivative formula");
    assert_null(y);
    yg_release(x);
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

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grad_of_sum_of_squares_is_twice_x),
        cmocka_unit_test(test_grad_flows_through_both_arms_of_a_diamond),
        cmocka_unit_test(test_leaf_grad_accumulates_until_zeroed),
        cmocka_unit_test(test_broadcast_input_receives_reduced_grad),
        cmocka_unit_test(test_explicit_root_grad_weights_outputs),
        cmocka_unit_test(test_backward_on_a_leaf_accumulates_into_it),
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
    };
    return YG_TEST_RUN(tests, argc, argv);
}
