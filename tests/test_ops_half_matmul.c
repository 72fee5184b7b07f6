/*
 * test_ops_half_matmul.c - mm, bmm, addmm, matmul and linear in bfloat16
 * and float16 on the CPU, forward and backward, against float64.
 *
 * The reference runs in float64 on the same inputs: each input is drawn,
 * rounded to the 16-bit dtype, and that rounded tensor (and its exact
 * float64 copy) is what both sides compute with; the gradient fed to
 * backward is rounded the same way.  So the only differences are the
 * 16-bit side's own roundings.
 *
 * Tolerance rule, per element of every result and every gradient:
 *
 *     |got - want| <= u * (R + sqrt(K)) * cond
 *
 * where u is the dtype's unit roundoff (bfloat16 2^-8, float16 2^-11),
 * cond is the same computation run in float64 on the absolute values of
 * the inputs (and of the output gradient): for a product element
 * sum_k |a_ik| |b_kj|, for addmm's |beta| |c| + |alpha| sum |a| |b|, for a
 * bias gradient sum |g|; it bounds every partial sum, so it is the
 * element's condition.  R = 4 counts the roundings to the dtype on the
 * longest path (a product, a scale, an add, an accumulated gradient), each
 * at most u relative to a partial result bounded by cond.  sqrt(K), K
 * the longest dimension of the case, covers the float32 accumulation
 * inside the kernels (at most K 2^-24 cond, far below u sqrt(K) cond for
 * every K here) with room for the rounding of a summed gradient.
 * Products of two 16-bit values are exact in float32, so nothing else
 * enters.
 */
#include "testutil.h"
#include "yagrad/ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INPUTS 3

typedef struct half_case {
    const char *name;
    int n_inputs;
    int64_t ndim[MAX_INPUTS];
    int64_t sizes[MAX_INPUTS][4];
    yg_status (*fn)(yg_tensor *const *x, yg_tensor **out);
} half_case;

static yg_status run_mm(yg_tensor *const *x, yg_tensor **out) {
    return yg_mm(x[0], x[1], out);
}

/* mat2 as the t() of a row-major [n, k] tensor: the Trans operand path. */
static yg_status run_mm_transposed(yg_tensor *const *x, yg_tensor **out) {
    yg_tensor *t = NULL;
    yg_status st = yg_t(x[1], &t);
    if (st == YG_OK)
        st = yg_mm(x[0], t, out);
    yg_release(t);
    return st;
}

/* Strided operands read in place: self a column slice of a wider matrix
 * (leading dim 40 > k), mat2 a row slice (leading dim 9 > n), both
 * narrowed views whose gradients are written through the slices. */
static yg_status run_mm_slices(yg_tensor *const *x, yg_tensor **out) {
    yg_tensor *a = NULL, *b = NULL;
    yg_status st = yg_narrow(x[0], 1, 3, 30, &a);
    if (st == YG_OK)
        st = yg_narrow(x[1], 1, 2, 6, &b);
    if (st == YG_OK)
        st = yg_mm(a, b, out);
    yg_release(a);
    yg_release(b);
    return st;
}

/* self used twice: its gradient is accumulated (add) in the dtype. */
static yg_status run_mm_shared(yg_tensor *const *x, yg_tensor **out) {
    yg_tensor *p = NULL, *q = NULL;
    yg_status st = yg_mm(x[0], x[1], &p);
    if (st == YG_OK)
        st = yg_mm(x[0], x[2], &q);
    if (st == YG_OK)
        st = yg_add(p, q, 1.0, out);
    yg_release(p);
    yg_release(q);
    return st;
}

static yg_status run_bmm(yg_tensor *const *x, yg_tensor **out) {
    return yg_bmm(x[0], x[1], out);
}

static yg_status run_addmm(yg_tensor *const *x, yg_tensor **out) {
    return yg_addmm(x[0], x[1], x[2], 0.5, 2.0, out);
}

static yg_status run_matmul(yg_tensor *const *x, yg_tensor **out) {
    return yg_matmul(x[0], x[1], out);
}

static yg_status run_linear(yg_tensor *const *x, yg_tensor **out) {
    return yg_linear(x[0], x[1], x[2], out);
}

static const half_case cases[] = {
    {"mm", 2, {2, 2}, {{5, 7}, {7, 3}}, run_mm},
    {"mm large (oneDNN for bfloat16)", 2, {2, 2}, {{48, 300}, {300, 40}}, run_mm},
    {"mm vector row", 2, {2, 2}, {{1, 64}, {64, 9}}, run_mm},
    {"mm transposed mat2", 2, {2, 2}, {{6, 33}, {10, 33}}, run_mm_transposed},
    {"mm of slices", 2, {2, 2}, {{50, 40}, {30, 9}}, run_mm_slices},
    {"mm shared self", 3, {2, 2, 2}, {{4, 9}, {9, 5}, {9, 5}}, run_mm_shared},
    {"bmm", 2, {3, 3}, {{3, 4, 6}, {3, 6, 5}}, run_bmm},
    {"addmm broadcast self", 3, {1, 2, 2}, {{3}, {4, 6}, {6, 3}}, run_addmm},
    {"addmm full self", 3, {2, 2, 2}, {{4, 3}, {4, 70}, {70, 3}}, run_addmm},
    {"matmul batch broadcast", 2, {4, 3}, {{2, 1, 4, 5}, {3, 5, 2}}, run_matmul},
    {"matmul vector-matrix", 2, {1, 2}, {{5}, {5, 3}}, run_matmul},
    {"matmul matrix-vector", 2, {2, 1}, {{4, 5}, {5}}, run_matmul},
    {"linear with bias", 3, {3, 2, 1}, {{2, 3, 8}, {4, 8}, {4}}, run_linear},
};

static double unit_roundoff(yg_dtype d) {
    return d == YG_BFLOAT16 ? ldexp(1.0, -8) : ldexp(1.0, -11);
}

/* x converted to dtype, without history. */
static yg_tensor *converted(const yg_tensor *x, yg_dtype dtype) {
    yg_tensor *y = NULL;
    bool prev = yg_set_grad_enabled(false);
    YG_CHECK(yg_to_dtype(x, dtype, true, &y));
    yg_set_grad_enabled(prev);
    return y;
}

static yg_tensor *absolute(const yg_tensor *x) {
    yg_tensor *y = NULL;
    bool prev = yg_set_grad_enabled(false);
    YG_CHECK(yg_abs(x, &y));
    yg_set_grad_enabled(prev);
    return y;
}

/* Runs c on leaves x (which require grad), backward with g; *out gets
 * the result, grads[i] each leaf's gradient. */
static void forward_backward(const half_case *c,
                             yg_tensor *const *x,
                             const yg_tensor *g,
                             yg_tensor **out,
                             yg_tensor **grads) {
    YG_CHECK(c->fn(x, out));
    YG_CHECK(yg_backward(*out, g, false));
    for (int i = 0; i < c->n_inputs; i++)
        YG_CHECK(yg_tensor_grad(x[i], &grads[i]));
}

/* The rule at the top: got (dtype) against want within u (R + sqrt(K))
 * cond, elementwise. */
static void expect_within(const char *what,
                          const half_case *c,
                          yg_dtype dtype,
                          int64_t kmax,
                          const yg_tensor *got,
                          const yg_tensor *want,
                          const yg_tensor *cond) {
    int64_t n = yg_tensor_numel(want);
    yg_tensor *g64 = NULL;
    double *gv, *wv, *cv;
    double bound = unit_roundoff(dtype) * (4.0 + sqrt((double)kmax));
    int bad = 0;

    assert_non_null(got);
    if (yg_tensor_dtype(got) != dtype)
        fail_msg("%s %s: %s has dtype %s, expected %s",
                 c->name,
                 yg_dtype_name(dtype),
                 what,
                 yg_dtype_name(yg_tensor_dtype(got)),
                 yg_dtype_name(dtype));
    assert_int_equal(yg_tensor_numel(got), n);
    g64 = converted(got, YG_FLOAT64);
    gv = yg_test_values(g64);
    wv = yg_test_values(want);
    cv = yg_test_values(cond);
    for (int64_t i = 0; i < n; i++) {
        double tol = bound * cv[i];
        if (!(fabs(gv[i] - wv[i]) <= tol) && bad++ < 3)
            print_error("%s %s: %s[%lld] = %.9g, float64 gives %.9g (|diff| %.3g > tol %.3g)\n",
                        c->name,
                        yg_dtype_name(dtype),
                        what,
                        (long long)i,
                        gv[i],
                        wv[i],
                        fabs(gv[i] - wv[i]),
                        tol);
    }
    free(gv);
    free(wv);
    free(cv);
    yg_release(g64);
    if (bad > 0)
        fail_msg("%s %s: %d elements of %s outside u (4 + sqrt(%lld)) cond",
                 c->name,
                 yg_dtype_name(dtype),
                 bad,
                 what,
                 (long long)kmax);
}

static void check_case(const half_case *c, yg_dtype dtype, uint64_t seed) {
    yg_tensor *h[MAX_INPUTS] = {0}, *r[MAX_INPUTS] = {0}, *a[MAX_INPUTS] = {0};
    yg_tensor *hg[MAX_INPUTS] = {0}, *rg[MAX_INPUTS] = {0}, *ag[MAX_INPUTS] = {0};
    yg_tensor *hout = NULL, *rout = NULL, *aout = NULL, *probe = NULL;
    yg_tensor *g64 = NULL, *gh = NULL, *gr = NULL, *ga = NULL;
    int64_t kmax = 1;

    for (int i = 0; i < c->n_inputs; i++) {
        yg_tensor *draw = yg_test_rand(YG_FLOAT64, c->sizes[i], c->ndim[i], -2.0, 2.0, seed + i);
        h[i] = converted(draw, dtype);
        r[i] = converted(h[i], YG_FLOAT64); /* exactly the rounded values */
        a[i] = absolute(r[i]);
        YG_CHECK(yg_tensor_set_requires_grad(h[i], true));
        YG_CHECK(yg_tensor_set_requires_grad(r[i], true));
        YG_CHECK(yg_tensor_set_requires_grad(a[i], true));
        for (int d = 0; d < c->ndim[i]; d++)
            kmax = c->sizes[i][d] > kmax ? c->sizes[i][d] : kmax;
        yg_release(draw);
    }
    /* The output gradient, rounded to the dtype like the inputs. */
    {
        bool prev = yg_set_grad_enabled(false);
        YG_CHECK(c->fn(r, &probe));
        yg_set_grad_enabled(prev);
    }
    g64 = yg_test_rand(
        YG_FLOAT64, yg_tensor_sizes(probe), yg_tensor_ndim(probe), -2.0, 2.0, seed + 17);
    gh = converted(g64, dtype);
    gr = converted(gh, YG_FLOAT64);
    ga = absolute(gr);

    forward_backward(c, h, gh, &hout, hg);
    forward_backward(c, r, gr, &rout, rg);
    forward_backward(c, a, ga, &aout, ag);
    expect_within("the result", c, dtype, kmax, hout, rout, aout);
    for (int i = 0; i < c->n_inputs; i++) {
        char what[48];
        snprintf(what, sizeof what, "the gradient of input %d", i);
        expect_within(what, c, dtype, kmax, hg[i], rg[i], ag[i]);
    }
    for (int i = 0; i < c->n_inputs; i++) {
        yg_release(h[i]);
        yg_release(r[i]);
        yg_release(a[i]);
        yg_release(hg[i]);
        yg_release(rg[i]);
        yg_release(ag[i]);
    }
    yg_release(hout);
    yg_release(rout);
    yg_release(aout);
    yg_release(probe);
    yg_release(g64);
    yg_release(gh);
    yg_release(gr);
    yg_release(ga);
}

static void test_bfloat16_products_and_gradients_match_float64(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i], YG_BFLOAT16, 100 + 10 * (uint64_t)i);
}

static void test_float16_products_and_gradients_match_float64(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i], YG_FLOAT16, 500 + 10 * (uint64_t)i);
}

/* Every stored element is the float32 result rounded to nearest even:
 * operands whose products are exact and whose sums stay exact in float32
 * give exactly the float64 product rounded once. */
static void test_half_products_round_to_nearest_even_once(void **state) {
    static const yg_dtype dts[] = {YG_BFLOAT16, YG_FLOAT16};
    /* [1, 2] @ [2, 16], every column [1, t]: with h half an ulp of 1 in
     * the dtype (bfloat16 2^-8, float16 2^-11), 1 + h lies halfway between
     * 1 and 1 + 2h and ties to even give 1; 1 + 3h lies halfway between
     * 1 + 2h and 1 + 4h and gives 1 + 4h.  16 columns take both the
     * 8-wide and the element-wise stores. */
    const int64_t s12[] = {1, 2}, s216[] = {2, 16};
    const double av[] = {1.0, 1.0};
    (void)state;
    for (int d = 0; d < 2; d++) {
        double h = dts[d] == YG_BFLOAT16 ? 0x1p-8 : 0x1p-11;
        for (int k = 0; k < 2; k++) {
            double bv[32], got[16];
            double want = k == 0 ? 1.0 : 1.0 + 4 * h;
            for (int j = 0; j < 16; j++) {
                bv[j] = 1.0;
                bv[16 + j] = k == 0 ? h : 3 * h;
            }
            yg_tensor *a64 = yg_test_tensor(YG_FLOAT64, s12, 2, av);
            yg_tensor *b64 = yg_test_tensor(YG_FLOAT64, s216, 2, bv);
            yg_tensor *a = converted(a64, dts[d]), *b = converted(b64, dts[d]), *p = NULL;
            YG_CHECK(yg_mm(a, b, &p));
            assert_int_equal(yg_tensor_dtype(p), dts[d]);
            YG_CHECK(yg_tensor_to_f64(p, got, 16));
            for (int j = 0; j < 16; j++)
                if (got[j] != want)
                    fail_msg("%s mm gives %.10g at column %d, expected %.10g (nearest even)",
                             yg_dtype_name(dts[d]),
                             got[j],
                             j,
                             want);
            yg_release(a64);
            yg_release(b64);
            yg_release(a);
            yg_release(b);
            yg_release(p);
        }
    }
}

static void test_half_products_refuse_mixed_and_integer_dtypes(void **state) {
    const int64_t s22[] = {2, 2}, s222[] = {2, 2, 2}, s2[] = {2};
    yg_tensor *b = NULL, *h = NULL, *f = NULL, *i64 = NULL, *b3 = NULL, *h3 = NULL, *hb = NULL;
    yg_tensor *out = NULL;
    (void)state;
    YG_CHECK(yg_tensor_full(s22, 2, 1.5, YG_BFLOAT16, &b));
    YG_CHECK(yg_tensor_full(s22, 2, 1.5, YG_FLOAT16, &h));
    YG_CHECK(yg_tensor_full(s22, 2, 1.5, YG_FLOAT32, &f));
    YG_CHECK(yg_tensor_full(s22, 2, 1, YG_INT64, &i64));
    YG_CHECK(yg_tensor_full(s222, 3, 1.5, YG_BFLOAT16, &b3));
    YG_CHECK(yg_tensor_full(s222, 3, 1.5, YG_FLOAT16, &h3));
    YG_CHECK(yg_tensor_full(s2, 1, 1.5, YG_FLOAT16, &hb));
    YG_EXPECT_ERROR(
        yg_mm(b, f, &out), YG_ERR_DTYPE, "mm: dtype mismatch: self bfloat16, mat2 float32");
    assert_null(out);
    YG_EXPECT_ERROR(
        yg_mm(h, b, &out), YG_ERR_DTYPE, "mm: dtype mismatch: self float16, mat2 bfloat16");
    YG_EXPECT_ERROR(
        yg_bmm(h3, b3, &out), YG_ERR_DTYPE, "bmm: dtype mismatch: self float16, mat2 bfloat16");
    YG_EXPECT_ERROR(
        yg_matmul(f, h, &out), YG_ERR_DTYPE, "dtype mismatch: self float32, mat2 float16");
    YG_EXPECT_ERROR(yg_mm(i64, i64, &out),
                    YG_ERR_DTYPE,
                    "mm: expected float32, float64, float16 or bfloat16, got self int64");
    YG_EXPECT_ERROR(yg_addmm(f, b, b, 1, 1, &out),
                    YG_ERR_DTYPE,
                    "addmm: dtype mismatch: self float32, mat1 bfloat16, mat2 bfloat16");
    YG_EXPECT_ERROR(yg_linear(h, h, b, &out),
                    YG_ERR_DTYPE,
                    "linear: dtype mismatch: input float16, weight float16, bias bfloat16");
    assert_null(out);
    /* float16 bias on a float16 linear is fine */
    YG_CHECK(yg_linear(h, h, hb, &out));
    assert_int_equal(yg_tensor_dtype(out), YG_FLOAT16);
    yg_release(out);
    yg_release(b);
    yg_release(h);
    yg_release(f);
    yg_release(i64);
    yg_release(b3);
    yg_release(h3);
    yg_release(hb);
}

/* A 16-bit tensor may require grad whatever it feeds; a backward through
 * an op that does not compute in its dtype fails there, naming the op and
 * the dtype, instead of dropping the gradient. */
static void test_backward_through_an_op_without_the_dtype_names_it(void **state) {
    const int64_t s33[] = {3, 3}, s2[] = {2};
    const double iv[] = {0, 2};
    yg_tensor *x = NULL, *w = NULL, *idx = yg_test_tensor(YG_FLOAT64, s2, 1, iv), *i64 = NULL;
    yg_tensor *rows = NULL, *y = NULL, *ones = NULL;
    (void)state;
    YG_CHECK(yg_to_dtype(idx, YG_INT64, false, &i64));
    YG_CHECK(yg_tensor_full(s33, 2, 0.5, YG_BFLOAT16, &x));
    YG_CHECK(yg_tensor_full(s33, 2, 0.25, YG_BFLOAT16, &w));
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_index_select(x, 0, i64, &rows)); /* indexing moves 16-bit values */
    YG_CHECK(yg_mm(rows, w, &y));
    YG_CHECK(yg_tensor_full(yg_tensor_sizes(y), yg_tensor_ndim(y), 1.0, YG_BFLOAT16, &ones));
    YG_EXPECT_ERROR(yg_backward(y, ones, false), YG_ERR_DTYPE, "index_select_backward", "bfloat16");
    yg_release(x);
    yg_release(w);
    yg_release(idx);
    yg_release(i64);
    yg_release(rows);
    yg_release(y);
    yg_release(ones);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bfloat16_products_and_gradients_match_float64),
        cmocka_unit_test(test_float16_products_and_gradients_match_float64),
        cmocka_unit_test(test_half_products_round_to_nearest_even_once),
        cmocka_unit_test(test_half_products_refuse_mixed_and_integer_dtypes),
        cmocka_unit_test(test_backward_through_an_op_without_the_dtype_names_it),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
