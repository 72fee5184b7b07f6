/*
 * test_gradcheck.c - every entry of specs/derivatives.yaml, checked in
 * float64 against central finite differences.
 *
 * The list of entries comes from the generator (yg__derivatives), not from
 * this file: an entry with no sample below fails
 * test_every_derivative_has_a_sample, so a formula cannot be added without
 * being checked.  For a sample y = f(x1..xn) and a random cotangent v, the
 * analytic gradient of sum(v * y) from yg_backward is compared, element by
 * element, with (L(x + eps) - L(x - eps)) / (2 eps).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generated_int.h"
#include "testutil.h"

#define MAX_IN 4

typedef struct input_spec {
    int64_t ndim;
    int64_t sizes[4];
    double lo, hi; /* value range (integers for YG_INT64 inputs) */
    yg_dtype dtype; /* YG_FLOAT64 inputs require grad; YG_INT64 ones do not */
} input_spec;

typedef yg_status (*sample_fn)(yg_tensor *const *x, yg_tensor **out);

typedef struct sample {
    const char *op; /* derivative entry name, e.g. "sum.dim" */
    const char *what;
    int n_inputs;
    input_spec in[MAX_IN];
    sample_fn fn;
} sample;

#define F64(lo_, hi_, nd, ...) {nd, {__VA_ARGS__}, lo_, hi_, YG_FLOAT64}
#define I64(lo_, hi_, nd, ...) {nd, {__VA_ARGS__}, lo_, hi_, YG_INT64}

/* ---- sample functions ---- */
static yg_status f_add(yg_tensor *const *x, yg_tensor **o) { return yg_add(x[0], x[1], 2.5, o); }
static yg_status f_sub(yg_tensor *const *x, yg_tensor **o) { return yg_sub(x[0], x[1], 0.5, o); }
static yg_status f_mul(yg_tensor *const *x, yg_tensor **o) { return yg_mul(x[0], x[1], o); }
static yg_status f_div(yg_tensor *const *x, yg_tensor **o) { return yg_div(x[0], x[1], o); }
static yg_status f_mul_scalar(yg_tensor *const *x, yg_tensor **o) { return yg_mul_scalar(x[0], -1.5, o); }
static yg_status f_div_scalar(yg_tensor *const *x, yg_tensor **o) { return yg_div_scalar(x[0], 4.0, o); }
static yg_status f_neg(yg_tensor *const *x, yg_tensor **o) { return yg_neg(x[0], o); }
static yg_status f_exp(yg_tensor *const *x, yg_tensor **o) { return yg_exp(x[0], o); }
static yg_status f_log(yg_tensor *const *x, yg_tensor **o) { return yg_log(x[0], o); }
static yg_status f_sqrt(yg_tensor *const *x, yg_tensor **o) { return yg_sqrt(x[0], o); }
static yg_status f_tanh(yg_tensor *const *x, yg_tensor **o) { return yg_tanh(x[0], o); }
static yg_status f_sigmoid(yg_tensor *const *x, yg_tensor **o) { return yg_sigmoid(x[0], o); }
static yg_status f_relu(yg_tensor *const *x, yg_tensor **o) { return yg_relu(x[0], o); }
static yg_status f_pow3(yg_tensor *const *x, yg_tensor **o) { return yg_pow(x[0], 3.0, o); }
static yg_status f_pow_half(yg_tensor *const *x, yg_tensor **o) { return yg_pow(x[0], 0.5, o); }
static yg_status f_sum(yg_tensor *const *x, yg_tensor **o) { return yg_sum(x[0], o); }
static yg_status f_mean(yg_tensor *const *x, yg_tensor **o) { return yg_mean(x[0], o); }
static yg_status f_mm(yg_tensor *const *x, yg_tensor **o) { return yg_mm(x[0], x[1], o); }
static yg_status f_t(yg_tensor *const *x, yg_tensor **o) { return yg_t(x[0], o); }
static yg_status f_clone(yg_tensor *const *x, yg_tensor **o) { return yg_clone(x[0], o); }
static yg_status f_tanh_bw(yg_tensor *const *x, yg_tensor **o) { return yg_tanh_backward(x[0], x[1], o); }
static yg_status f_sigmoid_bw(yg_tensor *const *x, yg_tensor **o) { return yg_sigmoid_backward(x[0], x[1], o); }

static yg_status f_sum_dim1(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t d[] = {1};
    return yg_sum_dim(x[0], d, 1, false, o);
}

static yg_status f_sum_dims_keep(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t d[] = {0, -1};
    return yg_sum_dim(x[0], d, 2, true, o);
}

static yg_status f_mean_dim0(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t d[] = {0};
    return yg_mean_dim(x[0], d, 1, false, o);
}

static yg_status f_mean_dims_keep(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t d[] = {1, 2};
    return yg_mean_dim(x[0], d, 2, true, o);
}

static yg_status f_transpose(yg_tensor *const *x, yg_tensor **o)
{
    return yg_transpose(x[0], 0, -1, o);
}

static yg_status f_view(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t s[] = {3, -1};
    return yg_view(x[0], s, 2, o);
}

static yg_status f_expand(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t s[] = {2, 3, 4};
    return yg_expand(x[0], s, 3, o);
}

static yg_status f_unsqueeze(yg_tensor *const *x, yg_tensor **o)
{
    return yg_unsqueeze(x[0], 1, o);
}

static yg_status f_log_softmax1(yg_tensor *const *x, yg_tensor **o)
{
    return yg_log_softmax(x[0], 1, o);
}

static yg_status f_log_softmax0(yg_tensor *const *x, yg_tensor **o)
{
    return yg_log_softmax(x[0], 0, o);
}

static yg_status f_nll_mean(yg_tensor *const *x, yg_tensor **o)
{
    return yg_nll_loss(x[0], x[1], 1, -100, o);
}

static yg_status f_nll_sum_ignore(yg_tensor *const *x, yg_tensor **o)
{
    return yg_nll_loss(x[0], x[1], 2, 1, o);
}

static yg_status f_nll_none(yg_tensor *const *x, yg_tensor **o)
{
    return yg_nll_loss(x[0], x[1], 0, -100, o);
}

/* mul with a transposed (non-contiguous) first operand. */
static yg_status f_mul_transposed(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *xt = NULL;
    yg_status st = yg_t(x[0], &xt);
    if (st == YG_OK)
        st = yg_mul(xt, x[1], o);
    yg_release(xt);
    return st;
}

/* mm of transposed operands: exercises the BLAS transpose paths. */
static yg_status f_mm_transposed(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *a = NULL, *b = NULL;
    yg_status st = yg_t(x[0], &a);
    if (st == YG_OK)
        st = yg_t(x[1], &b);
    if (st == YG_OK)
        st = yg_mm(a, b, o);
    yg_release(a);
    yg_release(b);
    return st;
}

static const sample samples[] = {
    {"add", "broadcast [2, 3] + [3], alpha 2.5", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 1, 3)}, f_add},
    {"add", "0-dim + [2, 2]", 2, {F64(-1, 1, 0, 0), F64(-1, 1, 2, 2, 2)}, f_add},
    {"sub", "broadcast [2, 1] - [1, 3], alpha 0.5", 2, {F64(-1, 1, 2, 2, 1), F64(-1, 1, 2, 1, 3)}, f_sub},
    {"mul", "same shape", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 3)}, f_mul},
    {"mul", "transposed self", 2, {F64(-1, 1, 2, 3, 2), F64(-1, 1, 2, 2, 3)}, f_mul_transposed},
    {"div", "broadcast, other away from 0", 2, {F64(-1, 1, 2, 2, 3), F64(0.5, 2, 1, 3)}, f_div},
    {"mul.Scalar", "times -1.5", 1, {F64(-1, 1, 2, 2, 3)}, f_mul_scalar},
    {"div.Scalar", "over 4", 1, {F64(-1, 1, 2, 2, 3)}, f_div_scalar},
    {"neg", "", 1, {F64(-1, 1, 1, 5)}, f_neg},
    {"exp", "", 1, {F64(-2, 2, 2, 2, 3)}, f_exp},
    {"log", "positive input", 1, {F64(0.2, 3, 2, 2, 3)}, f_log},
    {"sqrt", "positive input", 1, {F64(0.2, 3, 2, 2, 3)}, f_sqrt},
    {"tanh", "", 1, {F64(-2, 2, 2, 2, 3)}, f_tanh},
    {"sigmoid", "", 1, {F64(-3, 3, 2, 2, 3)}, f_sigmoid},
    {"relu", "mixed signs", 1, {F64(-1, 1, 2, 3, 4)}, f_relu},
    {"pow", "cube", 1, {F64(-2, 2, 2, 2, 3)}, f_pow3},
    {"pow", "square root, positive input", 1, {F64(0.5, 2, 1, 4)}, f_pow_half},
    {"sum", "all elements", 1, {F64(-1, 1, 2, 2, 3)}, f_sum},
    {"sum.dim", "dim 1", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_sum_dim1},
    {"sum.dim", "dims 0 and -1, keepdim", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_sum_dims_keep},
    {"mean", "all elements", 1, {F64(-1, 1, 2, 3, 4)}, f_mean},
    {"mean.dim", "dim 0", 1, {F64(-1, 1, 2, 3, 4)}, f_mean_dim0},
    {"mean.dim", "dims 1, 2 keepdim", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_mean_dims_keep},
    {"mm", "[3, 4] @ [4, 2]", 2, {F64(-1, 1, 2, 3, 4), F64(-1, 1, 2, 4, 2)}, f_mm},
    {"mm", "transposed operands", 2, {F64(-1, 1, 2, 4, 3), F64(-1, 1, 2, 2, 4)}, f_mm_transposed},
    {"transpose", "dims 0, -1 of 3-D", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_transpose},
    {"t", "", 1, {F64(-1, 1, 2, 2, 3)}, f_t},
    {"view", "[2, 3] -> [3, -1]", 1, {F64(-1, 1, 2, 2, 3)}, f_view},
    {"expand", "[3, 1] -> [2, 3, 4]", 1, {F64(-1, 1, 2, 3, 1)}, f_expand},
    {"unsqueeze", "dim 1", 1, {F64(-1, 1, 2, 2, 3)}, f_unsqueeze},
    {"clone", "", 1, {F64(-1, 1, 2, 2, 3)}, f_clone},
    {"log_softmax", "dim 1", 1, {F64(-2, 2, 2, 3, 5)}, f_log_softmax1},
    {"log_softmax", "dim 0", 1, {F64(-2, 2, 2, 3, 5)}, f_log_softmax0},
    {"nll_loss", "mean", 2, {F64(-2, 0, 2, 4, 5), I64(0, 5, 1, 4)}, f_nll_mean},
    {"nll_loss", "sum, ignore_index 1", 2, {F64(-2, 0, 2, 6, 3), I64(0, 3, 1, 6)}, f_nll_sum_ignore},
    {"nll_loss", "none", 2, {F64(-2, 0, 2, 4, 5), I64(0, 5, 1, 4)}, f_nll_none},
    {"tanh_backward", "", 2, {F64(-1, 1, 2, 2, 3), F64(-0.9, 0.9, 2, 2, 3)}, f_tanh_bw},
    {"sigmoid_backward", "", 2, {F64(-1, 1, 2, 2, 3), F64(0.1, 0.9, 2, 2, 3)}, f_sigmoid_bw},
};
#define N_SAMPLES ((int)(sizeof samples / sizeof samples[0]))

static yg_tensor *make_input(const input_spec *s, uint64_t seed)
{
    yg_tensor *t;
    if (s->dtype == YG_INT64) {
        t = yg_test_rand(YG_FLOAT64, s->sizes, s->ndim, s->lo, s->hi, seed);
        double *v = yg_test_values(t);
        for (int64_t i = 0; i < yg_tensor_numel(t); i++)
            v[i] = floor(v[i]);
        yg_release(t);
        t = yg_test_tensor(YG_INT64, s->sizes, s->ndim, v);
        free(v);
        return t;
    }
    t = yg_test_rand(YG_FLOAT64, s->sizes, s->ndim, s->lo, s->hi, seed);
    YG_CHECK(yg_tensor_set_requires_grad(t, true));
    return t;
}

/* L(x) = sum(v * f(x)), computed without recording. */
static double loss_value(const sample *s, yg_tensor *const *x, const double *v)
{
    yg_tensor *y = NULL;
    double *yv, total = 0;
    bool prev = yg_set_grad_enabled(false);
    YG_CHECK(s->fn(x, &y));
    yg_set_grad_enabled(prev);
    yv = yg_test_values(y);
    for (int64_t i = 0; i < yg_tensor_numel(y); i++)
        total += yv[i] * v[i];
    free(yv);
    yg_release(y);
    return total;
}

static int check_sample(const sample *s, uint64_t seed)
{
    const double eps = 1e-6, atol = 1e-6, rtol = 1e-4;
    yg_tensor *x[MAX_IN] = {0}, *y = NULL, *vt = NULL;
    double *v;
    int failures = 0;

    for (int i = 0; i < s->n_inputs; i++)
        x[i] = make_input(&s->in[i], seed + (uint64_t)i);
    YG_CHECK(s->fn(x, &y));
    vt = yg_test_rand(YG_FLOAT64, yg_tensor_sizes(y), yg_tensor_ndim(y), -1, 1, seed + 99);
    v = yg_test_values(vt);
    YG_CHECK(yg_backward(y, vt, false));
    for (int i = 0; i < s->n_inputs; i++) {
        yg_tensor *g = NULL;
        double *gv, *data;
        int64_t n = yg_tensor_numel(x[i]);
        if (s->in[i].dtype != YG_FLOAT64)
            continue;
        YG_CHECK(yg_tensor_grad(x[i], &g));
        if (g == NULL) {
            print_error("%s (%s): input %d received no gradient\n", s->op, s->what, i);
            failures++;
            continue;
        }
        gv = yg_test_values(g);
        data = yg_tensor_data(x[i]);
        for (int64_t k = 0; k < n; k++) {
            double orig = data[k], lp, lm, numeric;
            data[k] = orig + eps;
            lp = loss_value(s, x, v);
            data[k] = orig - eps;
            lm = loss_value(s, x, v);
            data[k] = orig;
            numeric = (lp - lm) / (2 * eps);
            if (fabs(numeric - gv[k]) > atol + rtol * fabs(numeric)) {
                print_error("%s (%s): d/d input %d [%lld]: analytic %.10g, numeric %.10g\n",
                            s->op, s->what, i, (long long)k, gv[k], numeric);
                failures++;
                break;
            }
        }
        free(gv);
        yg_release(g);
    }
    free(v);
    yg_release(vt);
    yg_release(y);
    for (int i = 0; i < s->n_inputs; i++)
        yg_release(x[i]);
    return failures;
}

static void test_every_derivative_has_a_sample(void **state)
{
    int missing = 0;
    (void)state;
    for (int32_t d = 0; d < yg__derivatives_count; d++) {
        bool found = false;
        for (int s = 0; s < N_SAMPLES && !found; s++)
            found = strcmp(samples[s].op, yg__derivatives[d].name) == 0;
        if (!found) {
            print_error("derivative %s (%s) has no gradcheck sample in %s\n",
                        yg__derivatives[d].name, yg__derivatives[d].location, __FILE__);
            missing++;
        }
    }
    assert_int_equal(missing, 0);
}

static void test_every_sample_names_a_derivative(void **state)
{
    int stale = 0;
    (void)state;
    for (int s = 0; s < N_SAMPLES; s++) {
        bool found = false;
        for (int32_t d = 0; d < yg__derivatives_count && !found; d++)
            found = strcmp(samples[s].op, yg__derivatives[d].name) == 0;
        if (!found) {
            print_error("sample for %s names no entry of specs/derivatives.yaml\n", samples[s].op);
            stale++;
        }
    }
    assert_int_equal(stale, 0);
}

static void test_every_derivative_matches_finite_differences(void **state)
{
    int failures = 0;
    (void)state;
    for (int s = 0; s < N_SAMPLES; s++)
        failures += check_sample(&samples[s], 1000 + (uint64_t)s * 17);
    assert_int_equal(failures, 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_derivative_has_a_sample),
        cmocka_unit_test(test_every_sample_names_a_derivative),
        cmocka_unit_test(test_every_derivative_matches_finite_differences),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
