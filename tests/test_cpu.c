/*
 * test_cpu.c - the CPU capability the kernels run at (yagrad/cpu.h), the
 * vectorised math behind them, and the allocator's cache switch.
 *
 * CTest runs the capability tests once per level (YG_CPU_CAPABILITY set
 * to baseline, avx2, avx512) and once without it; the OpInfo NumPy
 * comparison also runs at the baseline and AVX2 levels (tests/CMakeLists.txt).
 */
#include "testutil.h"
#include "yagrad/ops_unary_math.h"
#include "yagrad/ops_trigonometric.h"
#include "yagrad/ops_activations.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_slicing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_capability_is_one_the_processor_supports(void **state) {
    (void)state;
    yg_cpu_capability got = yg_cpu_capability_get(), top = yg_cpu_capability_supported();
    assert_true((int)got >= 0 && got < YG_CPU_CAPABILITY_COUNT_);
    assert_true((int)top >= 0 && top < YG_CPU_CAPABILITY_COUNT_);
    assert_true(got <= top);
}

/* YG_CPU_CAPABILITY caps the level; a higher or unknown value is ignored. */
static void test_capability_follows_the_environment(void **state) {
    (void)state;
    const char *env = getenv("YG_CPU_CAPABILITY");
    yg_cpu_capability expected = yg_cpu_capability_supported();
    for (int c = 0; env != NULL && c < YG_CPU_CAPABILITY_COUNT_; c++) {
        if (strcmp(env, yg_cpu_capability_name((yg_cpu_capability)c)) == 0 &&
            (yg_cpu_capability)c < expected)
            expected = (yg_cpu_capability)c;
    }
    if (yg_cpu_capability_get() != expected)
        fail_msg("YG_CPU_CAPABILITY=%s: running at %s, expected %s",
                 env ? env : "(unset)",
                 yg_cpu_capability_name(yg_cpu_capability_get()),
                 yg_cpu_capability_name(expected));
}

static void test_capability_names_every_level(void **state) {
    (void)state;
    assert_string_equal(yg_cpu_capability_name(YG_CPU_BASELINE), "baseline");
    assert_string_equal(yg_cpu_capability_name(YG_CPU_AVX2), "avx2");
    assert_string_equal(yg_cpu_capability_name(YG_CPU_AVX512), "avx512");
    assert_string_equal(yg_cpu_capability_name(YG_CPU_CAPABILITY_COUNT_), "unknown");
    assert_string_equal(yg_cpu_capability_name((yg_cpu_capability)-1), "unknown");
}

typedef yg_status (*unary_op)(const yg_tensor *self, yg_tensor **out);

static yg_status elu_one(const yg_tensor *self, yg_tensor **out) {
    return yg_elu(self, 1.0, out);
}

static yg_status gelu_none(const yg_tensor *self, yg_tensor **out) {
    return yg_gelu(self, out);
}

/* A float32 op's vectorised loop (contiguous input: SLEEF's vector
 * functions), its strided loop (a column of a [n, 2] tensor: the scalar
 * functions) and float64 libm agree: both float paths within 4e-7
 * relative (a few float ULPs) of the double result, over inputs that
 * cross every branch of the expressions (elu's select included). */
static void check_paths(const char *name, unary_op op, double (*ref)(double)) {
    enum { N = 4099 }; /* not a multiple of any vector width: remainders too */
    const int64_t sizes[] = {N, 2};
    double *v = malloc(sizeof(double) * 2 * N);
    for (int64_t i = 0; i < N; i++)
        v[2 * i] = v[2 * i + 1] = -9.0 + 18.0 * (double)i / (N - 1);
    yg_tensor *x2 = yg_test_tensor(YG_FLOAT32, sizes, 2, v), *col = NULL, *flatx = NULL;
    yg_tensor *y_strided = NULL, *y_flat = NULL;
    YG_CHECK(yg_select(x2, 1, 0, &col)); /* stride 2: the strided loop */
    YG_CHECK(yg_contiguous(col, &flatx));
    assert_false(yg_tensor_is_contiguous(col));
    YG_CHECK(op(col, &y_strided));
    YG_CHECK(op(flatx, &y_flat));
    double *a = yg_test_values(y_flat), *b = yg_test_values(y_strided);
    for (int64_t i = 0; i < N; i++) {
        double x = (double)(float)v[2 * i];
        double r = ref(x);
        /* 5e-7 absolute: gelu computes 1 + erf(x) in float, which cancels in
         * its left tail (an error up to |x| ulp(1) / 2 there, as in PyTorch) */
        double tol = 4e-7 * fabs(r) + 5e-7;
        if (fabs(a[i] - r) > tol || fabs(b[i] - r) > tol)
            fail_msg("%s(%.9g): vectorised %.9g, strided %.9g, float64 reference %.17g",
                     name,
                     x,
                     a[i],
                     b[i],
                     r);
    }
    free(a);
    free(b);
    free(v);
    yg_release(x2);
    yg_release(col);
    yg_release(flatx);
    yg_release(y_strided);
    yg_release(y_flat);
}

static double ref_sigmoid(double x) {
    return 1 / (1 + exp(-x));
}

static double ref_elu(double x) {
    return x > 0 ? x : expm1(x);
}

static double ref_gelu(double x) {
    return 0.5 * x * (1 + erf(x / sqrt(2.0)));
}

static void test_vectorised_and_strided_math_agree_with_libm(void **state) {
    (void)state;
    check_paths("exp", yg_exp, exp);
    check_paths("tanh", yg_tanh, tanh);
    check_paths("sigmoid", yg_sigmoid, ref_sigmoid);
    check_paths("elu", elu_one, ref_elu);
    check_paths("gelu", gelu_none, ref_gelu);
    check_paths("sin", yg_sin, sin);
}

/* YG_ALLOC_CACHE=0 sends freed blocks back to the system at once. */
static void test_allocator_cache_follows_the_environment(void **state) {
    (void)state;
    const char *env = getenv("YG_ALLOC_CACHE");
    bool enabled = env == NULL || strcmp(env, "0") != 0;
    const int64_t sizes[] = {1024};
    yg_allocator_stats before, after;
    yg_tensor *t = NULL;

    yg_allocator_empty_cache();
    YG_CHECK(yg_tensor_zeros(sizes, 1, YG_FLOAT32, &t));
    yg_allocator_get_stats(&before);
    yg_release(t);
    yg_allocator_get_stats(&after);
    assert_int_equal(after.cached_bytes - before.cached_bytes, enabled ? 4096 : 0);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capability_is_one_the_processor_supports),
        cmocka_unit_test(test_capability_follows_the_environment),
        cmocka_unit_test(test_capability_names_every_level),
        cmocka_unit_test(test_vectorised_and_strided_math_agree_with_libm),
        cmocka_unit_test(test_allocator_cache_follows_the_environment),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
