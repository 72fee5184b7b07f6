/*
 * test_ops_pointwise.c - forward values of the pointwise ops (unary
 * activations and math functions, scalar overloads, binary and ternary
 * ops) against naive float64 loops written here, never against the
 * kernels; and their bad-input messages.
 *
 * Every unary op of the table runs on float32 and float64, on a
 * contiguous [5, 7] input, on a transposed (non-contiguous) view, on a
 * 0-dim tensor and on an empty [0, 3] tensor.
 */
#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_blend.h"
#include "yagrad/ops_inplace_fill.h"
#include "yagrad/ops_comparison.h"
#include "yagrad/ops_unary_math.h"
#include "yagrad/ops_trigonometric.h"
#include "yagrad/ops_activations.h"
#include "yagrad/ops_rounding.h"
#include "yagrad/ops_activations_backward.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_views.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef yg_status (*unary_fn)(const yg_tensor *, yg_tensor **);

typedef struct unary_case {
    const char *name;
    unary_fn op;
    double (*ref)(double);
    double lo, hi; /* input range the op is tested on */
} unary_case;

/* ---- references (plain double math) ---- */
static double ref_abs(double x) {
    return x < 0 ? -x : x;
}
static double ref_sign(double x) {
    return x > 0 ? 1 : (x < 0 ? -1 : 0);
}
static double ref_log2(double x) {
    return log(x) / log(2.0);
}
static double ref_rsqrt(double x) {
    return 1 / sqrt(x);
}
static double ref_reciprocal(double x) {
    return 1 / x;
}
static double ref_gelu(double x) {
    return x * 0.5 * erfc(-x / sqrt(2.0));
}
static double ref_gelu_tanh(double x) {
    return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
}
static double ref_silu(double x) {
    return x / (1 + exp(-x));
}
static double ref_elu(double x) {
    return x > 0 ? x : 0.7 * (exp(x) - 1);
}
static double ref_leaky_relu(double x) {
    return x > 0 ? x : 0.2 * x;
}
static double ref_softplus(double x) {
    return 2 * x > 3 ? x : log(1 + exp(2 * x)) / 2;
}
static double ref_hardtanh(double x) {
    return fmin(fmax(x, -0.5), 0.8);
}
static double ref_clamp(double x) {
    return fmin(fmax(x, -0.25), 0.5);
}
static double ref_clamp_min(double x) {
    return fmax(x, 0.1);
}
static double ref_clamp_max(double x) {
    return fmin(x, 0.1);
}

/* ---- ops with their extra arguments bound as the references assume ---- */
static yg_status w_elu(const yg_tensor *x, yg_tensor **o) {
    return yg_elu(x, 0.7, o);
}
static yg_status w_leaky_relu(const yg_tensor *x, yg_tensor **o) {
    return yg_leaky_relu(x, 0.2, o);
}
static yg_status w_softplus(const yg_tensor *x, yg_tensor **o) {
    return yg_softplus(x, 2, 3, o);
}
static yg_status w_hardtanh(const yg_tensor *x, yg_tensor **o) {
    return yg_hardtanh(x, -0.5, 0.8, o);
}
static yg_status w_clamp(const yg_tensor *x, yg_tensor **o) {
    return yg_clamp(x, -0.25, 0.5, o);
}
static yg_status w_clamp_min(const yg_tensor *x, yg_tensor **o) {
    return yg_clamp_min(x, 0.1, o);
}
static yg_status w_clamp_max(const yg_tensor *x, yg_tensor **o) {
    return yg_clamp_max(x, 0.1, o);
}

static const unary_case unary_cases[] = {
    {"abs", yg_abs, ref_abs, -2, 2},
    {"sign", yg_sign, ref_sign, -2, 2},
    {"expm1", yg_expm1, expm1, -3, 3},
    {"log1p", yg_log1p, log1p, -0.9, 4},
    {"log2", yg_log2, ref_log2, 0.1, 9},
    {"rsqrt", yg_rsqrt, ref_rsqrt, 0.1, 9},
    {"reciprocal", yg_reciprocal, ref_reciprocal, 0.2, 5},
    {"sin", yg_sin, sin, -4, 4},
    {"cos", yg_cos, cos, -4, 4},
    {"tan", yg_tan, tan, -1.3, 1.3},
    {"erf", yg_erf, erf, -3, 3},
    {"gelu", yg_gelu, ref_gelu, -5, 5},
    {"gelu_tanh", yg_gelu_tanh, ref_gelu_tanh, -5, 5},
    {"silu", yg_silu, ref_silu, -6, 6},
    {"elu", w_elu, ref_elu, -3, 3},
    {"leaky_relu", w_leaky_relu, ref_leaky_relu, -3, 3},
    {"softplus", w_softplus, ref_softplus, -4, 4},
    {"hardtanh", w_hardtanh, ref_hardtanh, -2, 2},
    {"clamp", w_clamp, ref_clamp, -1, 1},
    {"clamp_min", w_clamp_min, ref_clamp_min, -1, 1},
    {"clamp_max", w_clamp_max, ref_clamp_max, -1, 1},
    {"floor", yg_floor, floor, -5, 5},
    {"ceil", yg_ceil, ceil, -5, 5},
    {"round", yg_round, nearbyint, -5, 5},
    {"trunc", yg_trunc, trunc, -5, 5},
};
#define N_UNARY ((int)(sizeof unary_cases / sizeof unary_cases[0]))

/* Runs one case on x and compares every element with ref (float32 in
 * relative terms: its inputs are exact, its math is single precision). */
static void expect_unary(const unary_case *c, const yg_tensor *x) {
    int64_t n = yg_tensor_numel(x);
    double *xv = yg_test_values(x), *expected = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    double tol = yg_tensor_dtype(x) == YG_FLOAT32 ? 2e-6 : 1e-13, *got;
    yg_tensor *y = NULL;

    for (int64_t i = 0; i < n; i++)
        expected[i] = c->ref(xv[i]);
    YG_CHECK(c->op(x, &y));
    assert_int_equal(yg_tensor_dtype(y), yg_tensor_dtype(x));
    got = yg_test_values(y);
    for (int64_t i = 0; i < n; i++) {
        if (!(fabs(got[i] - expected[i]) <= tol + tol * fabs(expected[i]))) {
            print_error("%s (%s): element %lld of input %.17g is %.17g, expected %.17g\n",
                        c->name,
                        yg_dtype_name(yg_tensor_dtype(x)),
                        (long long)i,
                        xv[i],
                        got[i],
                        expected[i]);
            fail();
        }
    }
    YG_EXPECT_CLOSE(y, yg_tensor_sizes(x), yg_tensor_ndim(x), expected, tol, tol);
    free(got);
    free(xv);
    free(expected);
    yg_release(y);
}

static void test_unary_ops_match_reference_on_contiguous_inputs(void **state) {
    const int64_t s[] = {5, 7};
    (void)state;
    for (int d = 0; d < 2; d++) {
        for (int k = 0; k < N_UNARY; k++) {
            const unary_case *c = &unary_cases[k];
            yg_tensor *x = yg_test_rand(d ? YG_FLOAT64 : YG_FLOAT32, s, 2, c->lo, c->hi, 11 + k);
            expect_unary(c, x);
            yg_release(x);
        }
    }
}

static void test_unary_ops_on_transposed_views_match_reference(void **state) {
    const int64_t s[] = {7, 5};
    (void)state;
    for (int k = 0; k < N_UNARY; k++) {
        const unary_case *c = &unary_cases[k];
        yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 2, c->lo, c->hi, 40 + k), *xt = NULL;
        YG_CHECK(yg_t(x, &xt));
        assert_false(yg_tensor_is_contiguous(xt));
        expect_unary(c, xt);
        yg_release(xt);
        yg_release(x);
    }
}

static void test_unary_ops_accept_0_dim_and_empty_inputs(void **state) {
    const int64_t empty[] = {0, 3};
    (void)state;
    for (int k = 0; k < N_UNARY; k++) {
        const unary_case *c = &unary_cases[k];
        yg_tensor *x = NULL, *e = NULL;
        YG_CHECK(yg_tensor_scalar(0.5 * (c->lo + c->hi) + 0.1, YG_FLOAT64, &x));
        expect_unary(c, x);
        YG_CHECK(yg_tensor_zeros(empty, 2, YG_FLOAT32, &e));
        expect_unary(c, e);
        yg_release(x);
        yg_release(e);
    }
}

static void test_round_rounds_half_to_even(void **state) {
    const int64_t s[] = {8};
    const double v[] = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, 16777216};
    const double expected[] = {0, 2, 2, 0, -2, -2, 2, 16777216};
    (void)state;
    for (int d = 0; d < 2; d++) {
        yg_tensor *x = yg_test_tensor(d ? YG_FLOAT64 : YG_FLOAT32, s, 1, v), *y = NULL;
        YG_CHECK(yg_round(x, &y));
        YG_EXPECT_CLOSE(y, s, 1, expected, 0, 0);
        yg_release(y);
        yg_release(x);
    }
}

static void test_abs_sign_and_clamp_stay_integer_on_int64(void **state) {
    const int64_t s[] = {4};
    const double v[] = {-3, 0, 2, 7};
    const double abs_e[] = {3, 0, 2, 7}, sign_e[] = {-1, 0, 1, 1}, clamp_e[] = {-1, 0, 2, 5};
    yg_tensor *x = yg_test_tensor(YG_INT64, s, 1, v), *y = NULL;
    (void)state;
    YG_CHECK(yg_abs(x, &y));
    assert_int_equal(yg_tensor_dtype(y), YG_INT64);
    YG_EXPECT_CLOSE(y, s, 1, abs_e, 0, 0);
    yg_release(y);
    YG_CHECK(yg_sign(x, &y));
    YG_EXPECT_CLOSE(y, s, 1, sign_e, 0, 0);
    yg_release(y);
    YG_CHECK(yg_clamp(x, -1, 5, &y));
    assert_int_equal(yg_tensor_dtype(y), YG_INT64);
    YG_EXPECT_CLOSE(y, s, 1, clamp_e, 0, 0);
    yg_release(y);
    yg_release(x);
}

static void test_clamp_keeps_nan(void **state) {
    const int64_t s[] = {3};
    const double v[] = {NAN, -5, 5}, expected[] = {NAN, -1, 1};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 1, v), *y = NULL;
    (void)state;
    YG_CHECK(yg_clamp(x, -1, 1, &y));
    YG_EXPECT_CLOSE(y, s, 1, expected, 0, 0);
    yg_release(y);
    yg_release(x);
}

static void test_softplus_is_linear_above_threshold(void **state) {
    const int64_t s[] = {2};
    const double v[] = {30, 1000}, expected[] = {30, 1000};
    yg_tensor *x = yg_test_tensor(YG_FLOAT32, s, 1, v), *y = NULL;
    (void)state;
    YG_CHECK(yg_softplus(x, 1, 20, &y));
    YG_EXPECT_CLOSE(y, s, 1, expected, 0, 0);
    yg_release(y);
    yg_release(x);
}

static void test_scalar_overloads_match_reference(void **state) {
    const int64_t s[] = {2, 3};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 2, -2, 2, 3), *y = NULL;
    double *xv = yg_test_values(x), add_e[6], sub_e[6], rsub_e[6];
    (void)state;
    for (int i = 0; i < 6; i++) {
        add_e[i] = xv[i] + 2 * 1.5;
        sub_e[i] = xv[i] - 2 * 1.5;
        rsub_e[i] = 1 - 3 * xv[i];
    }
    YG_CHECK(yg_add_scalar(x, 1.5, 2, &y));
    YG_EXPECT_CLOSE(y, s, 2, add_e, 1e-15, 1e-15);
    yg_release(y);
    YG_CHECK(yg_sub_scalar(x, 1.5, 2, &y));
    YG_EXPECT_CLOSE(y, s, 2, sub_e, 1e-15, 1e-15);
    yg_release(y);
    YG_CHECK(yg_rsub_scalar(x, 1, 3, &y));
    YG_EXPECT_CLOSE(y, s, 2, rsub_e, 1e-15, 1e-15);
    yg_release(y);
    free(xv);
    yg_release(x);
}

static void test_math_functions_reject_integer_input(void **state) {
    const int64_t s[] = {2};
    yg_tensor *x = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 1, YG_INT64, &x));
    YG_EXPECT_ERROR(
        yg_sin(x, &y), YG_ERR_DTYPE, "sin: unsupported dtype int64 for self", "float32, float64");
    assert_null(y);
    YG_EXPECT_ERROR(yg_gelu(x, &y), YG_ERR_DTYPE, "gelu: unsupported dtype int64 for self");
    assert_null(y);
    YG_EXPECT_ERROR(yg_reciprocal(x, &y), YG_ERR_DTYPE, "reciprocal: unsupported dtype int64");
    assert_null(y);
    yg_release(x);
}

static void test_unary_ops_reject_bool_input(void **state) {
    const int64_t s[] = {2};
    yg_tensor *x = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 1, YG_BOOL, &x));
    YG_EXPECT_ERROR(yg_abs(x, &y), YG_ERR_DTYPE, "abs: unsupported dtype bool for self");
    assert_null(y);
    yg_release(x);
}

/* A Scalar operand of a pointwise op on an integer tensor must be an
 * integer that dtype holds; 2.5 is not silently truncated to 2. */
static void test_fractional_scalars_are_refused_on_integers(void **state) {
    const int64_t s[] = {2};
    const double xv[] = {5, -7};
    yg_tensor *x64 = NULL, *x32 = NULL, *f = NULL, *m = NULL, *y = NULL, *same = NULL;
    (void)state;
    x64 = yg_test_tensor(YG_INT64, s, 1, xv);
    x32 = yg_test_tensor(YG_INT32, s, 1, xv);
    f = yg_test_tensor(YG_FLOAT64, s, 1, xv);

    YG_EXPECT_ERROR(
        yg_add(x64, x64, 2.5, &y), YG_ERR_DTYPE, "add: alpha 2.5 is not an integer, self is int64");
    assert_null(y);
    YG_EXPECT_ERROR(yg_add_scalar(x32, 1.5, 2.0, &y),
                    YG_ERR_DTYPE,
                    "add: other 1.5 is not an integer, self is int32");
    YG_EXPECT_ERROR(yg_add_scalar(x32, 1.0, -0.5, &y),
                    YG_ERR_DTYPE,
                    "add: alpha -0.5 is not an integer, self is int32");
    YG_EXPECT_ERROR(yg_clamp(x64, -0.5, 3.0, &y),
                    YG_ERR_DTYPE,
                    "clamp: min -0.5 is not an integer, self is int64");
    YG_EXPECT_ERROR(yg_hardtanh(x32, -1.0, 0.8, &y),
                    YG_ERR_DTYPE,
                    "hardtanh: max_val 0.8 is not an integer, self is int32");
    YG_EXPECT_ERROR(yg_clamp_min(x64, NAN, &y), YG_ERR_DTYPE, "clamp_min: min nan is not an integer");
    YG_EXPECT_ERROR(
        yg_clamp_max(x64, INFINITY, &y), YG_ERR_DTYPE, "clamp_max: max inf is not an integer");
    YG_EXPECT_ERROR(yg_clamp_opt(x32, NULL, &(const double){0.25}, &y),
                    YG_ERR_DTYPE,
                    "clamp_max: max 0.25 is not an integer, self is int32");
    YG_EXPECT_ERROR(yg_addcmul(x64, x64, x64, 0.5, &y),
                    YG_ERR_DTYPE,
                    "addcmul: value 0.5 is not an integer, self is int64");
    YG_CHECK(yg_ne(x64, x64, &m));
    YG_EXPECT_ERROR(yg_masked_fill(x64, m, 0.5, &y),
                    YG_ERR_DTYPE,
                    "masked_fill: value 0.5 is not an integer, self is int64");
    yg_release(m);
    /* the promoted dtype decides, and the message names its input */
    YG_EXPECT_ERROR(
        yg_sub(x32, x64, 0.5, &y), YG_ERR_DTYPE, "sub: alpha 0.5 is not an integer, other is int64");
    /* an integer outside the dtype's range */
    YG_EXPECT_ERROR(yg_mul_scalar(x32, 3e9, &y),
                    YG_ERR_DTYPE,
                    "mul: other 3000000000 is out of range for int32, the dtype of self");
    YG_EXPECT_ERROR(yg_mul_scalar(x64, 0x1p63, &y),
                    YG_ERR_DTYPE,
                    "mul: other 9223372036854775808 is out of range for int64");
    assert_null(y);

    /* in place: refused before anything is written */
    YG_EXPECT_ERROR(
        yg_add_(x64, x64, 0.5, &same), YG_ERR_DTYPE, "add_: alpha 0.5 is not an integer, self is int64");
    assert_null(same);
    YG_EXPECT_ERROR(yg_clamp_min_(x32, 0.1, &same),
                    YG_ERR_DTYPE,
                    "clamp_min_: min 0.1 is not an integer, self is int32");
    YG_EXPECT_CLOSE(x64, s, 1, xv, 0, 0);
    YG_EXPECT_CLOSE(x32, s, 1, xv, 0, 0);

    /* a floating operand promotes: the alpha is then a float64 operand */
    YG_CHECK(yg_add(x64, f, 2.5, &y));
    const double fe[] = {5 + 2.5 * 5, -7 + 2.5 * -7};
    YG_EXPECT_CLOSE(y, s, 1, fe, 0, 0);
    yg_release(y);
    yg_release(f);
    yg_release(x32);
    yg_release(x64);
}

/* Integer Scalars run on integer tensors, exactly, up to the dtype's ends. */
static void test_integer_scalars_run_on_integers(void **state) {
    const int64_t s[] = {4};
    const double xv[] = {5, -7, 0, 1};
    double want[4];
    yg_tensor *x = NULL, *y = NULL;
    (void)state;
    x = yg_test_tensor(YG_INT64, s, 1, xv);

    YG_CHECK(yg_add(x, x, -3.0, &y));
    for (int i = 0; i < 4; i++)
        want[i] = xv[i] - 3 * xv[i];
    assert_int_equal(yg_tensor_dtype(y), YG_INT64);
    YG_EXPECT_CLOSE(y, s, 1, want, 0, 0);
    yg_release(y);

    YG_CHECK(yg_clamp(x, -1.0, 2.0, &y));
    for (int i = 0; i < 4; i++)
        want[i] = xv[i] < -1 ? -1 : xv[i] > 2 ? 2 : xv[i];
    YG_EXPECT_CLOSE(y, s, 1, want, 0, 0);
    yg_release(y);

    /* -2^63, the least int64, is an integer int64 holds */
    YG_CHECK(yg_clamp_min(x, -0x1p63, &y));
    YG_EXPECT_CLOSE(y, s, 1, xv, 0, 0);
    yg_release(y);
    yg_release(x);
}

/* Floating by nature: these ops claim float32 and float64 only. */
static void test_floating_only_ops_refuse_integers(void **state) {
    const int64_t s[] = {2};
    yg_tensor *x = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 1, YG_INT64, &x));
    YG_EXPECT_ERROR(yg_leaky_relu(x, 0.0, &y),
                    YG_ERR_DTYPE,
                    "leaky_relu: unsupported dtype int64 for self (supported: float32, float64)");
    YG_EXPECT_ERROR(yg_lerp_scalar(x, x, 0.0, &y), YG_ERR_DTYPE, "lerp: unsupported dtype int64 for self");
    YG_EXPECT_ERROR(yg_sigmoid_backward(x, x, &y),
                    YG_ERR_DTYPE,
                    "sigmoid_backward: unsupported dtype int64 for grad_output");
    YG_EXPECT_ERROR(yg_tanh_backward(x, x, &y),
                    YG_ERR_DTYPE,
                    "tanh_backward: unsupported dtype int64 for grad_output");
    assert_null(y);
    yg_release(x);
}

static void test_leaky_relu_is_twice_differentiable(void **state) {
    /* y = sum(leaky_relu(x)^2): dy/dx = 2 f(x) f'(x), and the derivative
     * of sum(dy/dx) is 2 f'(x)^2 (f'' = 0 away from 0). */
    const int64_t s[] = {6};
    const double v[] = {-1.5, -0.2, 0.3, 1.1, -0.7, 2.0};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 1, v), *f = NULL, *sq = NULL, *y = NULL;
    yg_tensor *g = NULL, *gs = NULL, *gg = NULL;
    double e1[6], e2[6];
    (void)state;
    for (int i = 0; i < 6; i++) {
        double d = v[i] > 0 ? 1 : 0.1, fx = v[i] > 0 ? v[i] : 0.1 * v[i];
        e1[i] = 2 * fx * d;
        e2[i] = 2 * d * d;
    }
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_leaky_relu(x, 0.1, &f));
    YG_CHECK(yg_mul(f, f, &sq));
    YG_CHECK(yg_sum(sq, &y));
    {
        const yg_tensor *outs[] = {y}, *ins[] = {x};
        YG_CHECK(yg_grad(outs, 1, NULL, ins, 1, false, true, false, &g));
    }
    YG_EXPECT_CLOSE(g, s, 1, e1, 1e-15, 1e-15);
    assert_true(yg_tensor_requires_grad(g));
    YG_CHECK(yg_sum(g, &gs));
    YG_CHECK(yg_backward(gs, NULL, false));
    YG_CHECK(yg_tensor_grad(x, &gg));
    YG_EXPECT_CLOSE(gg, s, 1, e2, 1e-15, 1e-15);
    yg_release(gg);
    yg_release(gs);
    yg_release(g);
    yg_release(y);
    yg_release(sq);
    yg_release(f);
    yg_release(x);
}

/* clamp.opt without bounds: PyTorch's rule, at least one. */
static void test_clamp_opt_needs_a_bound(void **state) {
    (void)state;
    const int64_t s2[] = {2};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s2, 1, -1, 1, 3), *y = (yg_tensor *)0x1;
    YG_EXPECT_ERROR(yg_clamp_opt(x, NULL, NULL, &y), YG_ERR_INVALID_ARGUMENT,
                    "clamp: at least one of min and max must be given");
    assert_null(y);
    yg_release(x);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clamp_opt_needs_a_bound),
        cmocka_unit_test(test_unary_ops_match_reference_on_contiguous_inputs),
        cmocka_unit_test(test_unary_ops_on_transposed_views_match_reference),
        cmocka_unit_test(test_unary_ops_accept_0_dim_and_empty_inputs),
        cmocka_unit_test(test_round_rounds_half_to_even),
        cmocka_unit_test(test_abs_sign_and_clamp_stay_integer_on_int64),
        cmocka_unit_test(test_clamp_keeps_nan),
        cmocka_unit_test(test_softplus_is_linear_above_threshold),
        cmocka_unit_test(test_scalar_overloads_match_reference),
        cmocka_unit_test(test_math_functions_reject_integer_input),
        cmocka_unit_test(test_unary_ops_reject_bool_input),
        cmocka_unit_test(test_fractional_scalars_are_refused_on_integers),
        cmocka_unit_test(test_integer_scalars_run_on_integers),
        cmocka_unit_test(test_floating_only_ops_refuse_integers),
        cmocka_unit_test(test_leaky_relu_is_twice_differentiable),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
