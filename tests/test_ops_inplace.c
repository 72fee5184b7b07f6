/*
 * test_ops_inplace.c - the in-place ops: each pointwise one against its
 * out-of-place twin (on contiguous and transposed selves), fill_, zero_ and
 * copy_ against values written here, and the refusals (broadcasting self,
 * widening self's dtype, writing an expanded view, inputs that require
 * grad while grad mode is on).
 */
#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_blend.h"
#include "yagrad/ops_inplace_arithmetic.h"
#include "yagrad/ops_inplace_fill.h"
#include "yagrad/ops_activations.h"
#include "yagrad/ops_rounding.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_slicing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One in-place op and its out-of-place twin over (self, a, b). */
typedef struct inplace_case {
    const char *name;
    yg_status (*inplace)(yg_tensor *self, const yg_tensor *a, const yg_tensor *b, yg_tensor **out);
    yg_status (*twin)(const yg_tensor *self,
                      const yg_tensor *a,
                      const yg_tensor *b,
                      yg_tensor **out);
    double lo, hi; /* range of a and b */
} inplace_case;

#define UNUSED_AB (void)a, (void)b
static yg_status i_sub(yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    (void)b;
    return yg_sub_(s, a, 2, o);
}
static yg_status o_sub(const yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    (void)b;
    return yg_sub(s, a, 2, o);
}
static yg_status i_mul(yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    (void)b;
    return yg_mul_(s, a, o);
}
static yg_status o_mul(const yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    (void)b;
    return yg_mul(s, a, o);
}
static yg_status i_div(yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    (void)b;
    return yg_div_(s, a, o);
}
static yg_status o_div(const yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    (void)b;
    return yg_div(s, a, o);
}
static yg_status i_add_s(yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    UNUSED_AB;
    return yg_add_scalar_(s, 1.5, -2, o);
}
static yg_status
o_add_s(const yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    UNUSED_AB;
    return yg_add_scalar(s, 1.5, -2, o);
}
static yg_status i_mul_s(yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    UNUSED_AB;
    return yg_mul_scalar_(s, 0.3, o);
}
static yg_status
o_mul_s(const yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    UNUSED_AB;
    return yg_mul_scalar(s, 0.3, o);
}
static yg_status i_div_s(yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    UNUSED_AB;
    return yg_div_scalar_(s, 3, o);
}
static yg_status
o_div_s(const yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    UNUSED_AB;
    return yg_div_scalar(s, 3, o);
}
static yg_status i_addcmul(yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    return yg_addcmul_(s, a, b, 0.5, o);
}
static yg_status
o_addcmul(const yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    return yg_addcmul(s, a, b, 0.5, o);
}
static yg_status i_addcdiv(yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    return yg_addcdiv_(s, a, b, -1, o);
}
static yg_status
o_addcdiv(const yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    return yg_addcdiv(s, a, b, -1, o);
}
static yg_status i_lerp(yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    (void)b;
    return yg_lerp_scalar_(s, a, 0.1, o);
}
static yg_status o_lerp(const yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    (void)b;
    return yg_lerp_scalar(s, a, 0.1, o);
}
static yg_status i_relu(yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    UNUSED_AB;
    return yg_relu_(s, o);
}
static yg_status o_relu(const yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    UNUSED_AB;
    return yg_relu(s, o);
}
static yg_status i_clamp(yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    UNUSED_AB;
    return yg_clamp_(s, -0.2, 0.3, o);
}
static yg_status
o_clamp(const yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    UNUSED_AB;
    return yg_clamp(s, -0.2, 0.3, o);
}
static yg_status i_clamp_min(yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    UNUSED_AB;
    return yg_clamp_min_(s, -0.2, o);
}
static yg_status
o_clamp_min(const yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    UNUSED_AB;
    return yg_clamp_min(s, -0.2, o);
}
static yg_status i_clamp_max(yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    UNUSED_AB;
    return yg_clamp_max_(s, 0.3, o);
}
static yg_status
o_clamp_max(const yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    UNUSED_AB;
    return yg_clamp_max(s, 0.3, o);
}
static yg_status i_add(yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    (void)b;
    return yg_add_(s, a, 0.5, o);
}
static yg_status o_add(const yg_tensor *s, const yg_tensor *a, const yg_tensor *b, yg_tensor **o) {
    (void)b;
    return yg_add(s, a, 0.5, o);
}

static const inplace_case inplace_cases[] = {
    {"add_", i_add, o_add, -1, 1},
    {"sub_", i_sub, o_sub, -1, 1},
    {"mul_", i_mul, o_mul, -1, 1},
    {"div_", i_div, o_div, 0.5, 2},
    {"add_.Scalar", i_add_s, o_add_s, -1, 1},
    {"mul_.Scalar", i_mul_s, o_mul_s, -1, 1},
    {"div_.Scalar", i_div_s, o_div_s, -1, 1},
    {"addcmul_", i_addcmul, o_addcmul, -1, 1},
    {"addcdiv_", i_addcdiv, o_addcdiv, 0.5, 2},
    {"lerp_.Scalar", i_lerp, o_lerp, -1, 1},
    {"relu_", i_relu, o_relu, -1, 1},
    {"clamp_", i_clamp, o_clamp, -1, 1},
    {"clamp_min_", i_clamp_min, o_clamp_min, -1, 1},
    {"clamp_max_", i_clamp_max, o_clamp_max, -1, 1},
};
#define N_INPLACE ((int)(sizeof inplace_cases / sizeof inplace_cases[0]))

/* Runs c in place on self (a [3, 4] tensor, maybe a view) with a
 * broadcast row a [4] and a full b [3, 4]; compares with the twin. */
static void expect_matches_twin(const inplace_case *c, yg_tensor *self, uint64_t seed) {
    const int64_t s[] = {3, 4}, r[] = {4};
    yg_tensor *a = yg_test_rand(yg_tensor_dtype(self), r, 1, c->lo, c->hi, seed);
    yg_tensor *b = yg_test_rand(yg_tensor_dtype(self), s, 2, c->lo, c->hi, seed + 1);
    yg_tensor *expected = NULL, *out = NULL;
    double *ev;

    YG_CHECK(c->twin(self, a, b, &expected));
    ev = yg_test_values(expected);
    YG_CHECK(c->inplace(self, a, b, &out));
    if (out != self) {
        print_error("%s: out is not a new reference to self\n", c->name);
        fail();
    }
    YG_EXPECT_CLOSE(self, s, 2, ev, 0, 0);
    free(ev);
    yg_release(out);
    yg_release(expected);
    yg_release(a);
    yg_release(b);
}

static void test_inplace_ops_match_out_of_place_twins(void **state) {
    const int64_t s[] = {3, 4};
    (void)state;
    for (int d = 0; d < 2; d++) {
        for (int k = 0; k < N_INPLACE; k++) {
            yg_tensor *x = yg_test_rand(d ? YG_FLOAT64 : YG_FLOAT32, s, 2, -1, 1, 5 + k);
            expect_matches_twin(&inplace_cases[k], x, 100 + k);
            yg_release(x);
        }
    }
}

static void test_inplace_ops_write_through_transposed_views(void **state) {
    const int64_t s[] = {4, 3};
    (void)state;
    for (int k = 0; k < N_INPLACE; k++) {
        yg_tensor *base = yg_test_rand(YG_FLOAT64, s, 2, -1, 1, 9 + k), *v = NULL, *check = NULL;
        double *vv;
        YG_CHECK(yg_t(base, &v));
        expect_matches_twin(&inplace_cases[k], v, 200 + k);
        /* The base sees the writes: its transpose equals the view. */
        vv = yg_test_values(v);
        YG_CHECK(yg_t(base, &check));
        YG_EXPECT_CLOSE(check, yg_tensor_sizes(v), 2, vv, 0, 0);
        free(vv);
        yg_release(check);
        yg_release(v);
        yg_release(base);
    }
}

/* A pointwise loop walks its output in memory order: self a permuted
 * dense view, other of the same layout, contiguous, or broadcast; every
 * element gets the out-of-place sum. */
static void test_inplace_add_walks_a_permuted_self_in_memory_order(void **state) {
    const int64_t s[] = {2, 3, 5}, perm[] = {2, 0, 1}, row[] = {1, 1, 3};
    (void)state;
    for (int form = 0; form < 3; form++) {
        yg_tensor *base = yg_test_rand(YG_FLOAT32, s, 3, -1, 1, 31), *self = NULL;
        yg_tensor *obase = yg_test_rand(YG_FLOAT32, s, 3, -1, 1, 32), *other = NULL;
        yg_tensor *want = NULL, *res = NULL;
        YG_CHECK(yg_permute(base, perm, 3, &self)); /* [5, 2, 3], not contiguous */
        assert_false(yg_tensor_is_contiguous(self));
        if (form == 0)
            YG_CHECK(yg_permute(obase, perm, 3, &other));
        else if (form == 1)
            YG_CHECK(yg_contiguous(self, &other));
        else
            other = yg_test_rand(YG_FLOAT32, row, 3, -1, 1, 33);
        YG_CHECK(yg_add(self, other, 2.0, &want));
        double *w = yg_test_values(want);
        YG_CHECK(yg_add_(self, other, 2.0, &res));
        YG_EXPECT_CLOSE(self, yg_tensor_sizes(want), 3, w, 0, 0);
        free(w);
        yg_release(res);
        yg_release(want);
        yg_release(other);
        yg_release(obase);
        yg_release(self);
        yg_release(base);
    }
}

static void test_masked_fill_inplace_matches_twin(void **state) {
    const int64_t s[] = {2, 3}, r[] = {3};
    const double mv[] = {0, 1, 1};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, s, 2, -1, 1, 4), *m = yg_test_tensor(YG_BOOL, r, 1, mv);
    yg_tensor *expected = NULL, *out = NULL;
    double *ev;
    (void)state;
    YG_CHECK(yg_masked_fill(x, m, -7, &expected));
    ev = yg_test_values(expected);
    YG_CHECK(yg_masked_fill_(x, m, -7, &out));
    assert_ptr_equal(out, x);
    YG_EXPECT_CLOSE(x, s, 2, ev, 0, 0);
    free(ev);
    yg_release(out);
    yg_release(expected);
    yg_release(m);
    yg_release(x);
}

static void test_fill_and_zero_set_every_dtype(void **state) {
    const int64_t s[] = {2, 3};
    const yg_dtype dts[] = {YG_FLOAT32, YG_FLOAT64, YG_INT64, YG_BOOL};
    const double sevens[] = {7, 7, 7, 7, 7, 7}, ones[] = {1, 1, 1, 1, 1, 1}, zeros[6] = {0};
    (void)state;
    for (int i = 0; i < 4; i++) {
        yg_tensor *x = NULL, *out = NULL;
        YG_CHECK(yg_tensor_zeros(s, 2, dts[i], &x));
        YG_CHECK(yg_fill_(x, 7.25, &out));
        assert_ptr_equal(out, x);
        yg_release(out);
        if (dts[i] == YG_BOOL) {
            YG_EXPECT_CLOSE(x, s, 2, ones, 0, 0);
        } else if (dts[i] == YG_INT64) {
            YG_EXPECT_CLOSE(x, s, 2, sevens, 0, 0);
        } else {
            const double e[] = {7.25, 7.25, 7.25, 7.25, 7.25, 7.25};
            YG_EXPECT_CLOSE(x, s, 2, e, 0, 0);
        }
        YG_CHECK(yg_zero_(x, &out));
        yg_release(out);
        YG_EXPECT_CLOSE(x, s, 2, zeros, 0, 0);
        yg_release(x);
    }
}

/* A fill value is stored as the dtype converts it: toward zero, NaN as 0,
 * saturating beyond the range (no undefined float-to-int conversion). */
static void test_fill_converts_the_value_on_integers(void **state) {
    const int64_t s[] = {2};
    const double vals[] = {-2.75, NAN, 1e300, -1e300};
    const double e64[] = {-2, 0, 0x1p63, -0x1p63}, e32[] = {-2, 0, 2147483647, -2147483648.0};
    (void)state;
    for (int k = 0; k < 4; k++) {
        yg_tensor *a = NULL, *b = NULL, *out = NULL;
        YG_CHECK(yg_tensor_zeros(s, 1, YG_INT64, &a));
        YG_CHECK(yg_tensor_zeros(s, 1, YG_INT32, &b));
        YG_CHECK(yg_fill_(a, vals[k], &out));
        yg_release(out);
        YG_CHECK(yg_fill_(b, vals[k], &out));
        yg_release(out);
        const double ea[] = {e64[k], e64[k]}, eb[] = {e32[k], e32[k]};
        YG_EXPECT_CLOSE(a, s, 1, ea, 0, 0);
        YG_EXPECT_CLOSE(b, s, 1, eb, 0, 0);
        yg_release(a);
        yg_release(b);
    }
}

static void test_fill_writes_only_the_view(void **state) {
    const int64_t s[] = {3, 3};
    const double expected[] = {0, 5, 0, 0, 5, 0, 0, 5, 0};
    yg_tensor *x = NULL, *col = NULL, *out = NULL;
    const int64_t cs[] = {3, 1}, cst[] = {3, 1};
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 2, YG_FLOAT64, &x));
    YG_CHECK(yg_narrow(x, 1, 1, 1, &col));
    assert_int_equal(yg_tensor_strides(col)[0], cst[0]);
    assert_int_equal(yg_tensor_sizes(col)[0], cs[0]);
    YG_CHECK(yg_fill_(col, 5, &out));
    YG_EXPECT_CLOSE(x, s, 2, expected, 0, 0);
    yg_release(out);
    yg_release(col);
    yg_release(x);
}

static void test_copy_broadcasts_and_converts_src(void **state) {
    const int64_t s[] = {2, 3}, r[] = {3};
    const double rv[] = {1.75, -2.5, 3}, expected[] = {1, -2, 3, 1, -2, 3};
    yg_tensor *x = NULL, *src = yg_test_tensor(YG_FLOAT64, r, 1, rv), *out = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 2, YG_INT64, &x));
    YG_CHECK(yg_copy_(x, src, &out));
    assert_ptr_equal(out, x);
    assert_int_equal(yg_tensor_dtype(x), YG_INT64);
    YG_EXPECT_CLOSE(x, s, 2, expected, 0, 0);
    yg_release(out);
    yg_release(src);
    yg_release(x);
}

static void test_copy_from_an_overlapping_view_reads_the_old_values(void **state) {
    const int64_t s[] = {2, 2};
    const double v[] = {1, 2, 3, 4}, expected[] = {1, 3, 2, 4};
    yg_tensor *x = yg_test_tensor(YG_FLOAT32, s, 2, v), *xt = NULL, *out = NULL;
    (void)state;
    YG_CHECK(yg_t(x, &xt));
    YG_CHECK(yg_copy_(x, xt, &out));
    YG_EXPECT_CLOSE(x, s, 2, expected, 0, 0);
    yg_release(out);
    yg_release(xt);
    yg_release(x);
}

static void test_inplace_ops_reject_broadcasting_self(void **state) {
    const int64_t s[] = {3}, big[] = {2, 3};
    yg_tensor *x = NULL, *y = NULL, *out = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 1, YG_FLOAT32, &x));
    YG_CHECK(yg_tensor_zeros(big, 2, YG_FLOAT32, &y));
    YG_EXPECT_ERROR(
        yg_mul_(x, y, &out), YG_ERR_SHAPE, "mul_: result shape [2, 3] does not match self [3]");
    assert_null(out);
    YG_EXPECT_ERROR(yg_copy_(x, y, &out), YG_ERR_SHAPE, "copy_:", "[2, 3]", "self [3]");
    assert_null(out);
    yg_release(x);
    yg_release(y);
}

static void test_inplace_ops_reject_widening_self_dtype(void **state) {
    const int64_t s[] = {3};
    yg_tensor *x = NULL, *y = NULL, *out = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 1, YG_INT64, &x));
    YG_CHECK(yg_tensor_zeros(s, 1, YG_FLOAT32, &y));
    YG_EXPECT_ERROR(yg_sub_(x, y, 1, &out),
                    YG_ERR_DTYPE,
                    "sub_: result dtype float32 cannot be stored in self of dtype int64");
    assert_null(out);
    yg_release(x);
    yg_release(y);
}

static void test_inplace_ops_reject_expanded_self(void **state) {
    const int64_t s[] = {1, 3}, to[] = {2, 3};
    yg_tensor *x = NULL, *e = NULL, *out = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 2, YG_FLOAT32, &x));
    YG_CHECK(yg_expand(x, to, 2, &e));
    YG_EXPECT_ERROR(
        yg_fill_(e, 1, &out), YG_ERR_INVALID_ARGUMENT, "fill_: self is an expanded view");
    assert_null(out);
    YG_EXPECT_ERROR(yg_relu_(e, &out), YG_ERR_INVALID_ARGUMENT, "relu_: self is an expanded view");
    assert_null(out);
    yg_release(e);
    yg_release(x);
}

/* Every in-place op has a derivative (gen requires one): written into a
 * tensor that does not require grad, from ones that do, it records, and
 * the gradient flows to its inputs: d/dt sum(x + 1.5 t t) = 3 t. */
static void test_inplace_ops_record_when_an_input_requires_grad(void **state) {
    const int64_t s[] = {3};
    const double tv[] = {1, 2, -3}, want[] = {3, 6, -9};
    yg_tensor *x = NULL, *t = yg_test_tensor(YG_FLOAT64, s, 1, tv), *out = NULL, *sum = NULL,
              *g = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 1, YG_FLOAT64, &x));
    YG_CHECK(yg_tensor_set_requires_grad(t, true));
    YG_CHECK(yg_addcmul_(x, t, t, 1.5, &out));
    assert_true(yg_tensor_requires_grad(x));
    YG_CHECK(yg_sum(x, &sum));
    YG_CHECK(yg_backward(sum, NULL, false));
    YG_CHECK(yg_tensor_grad(t, &g));
    YG_EXPECT_CLOSE(g, s, 1, want, 1e-12, 0);
    yg_release(g);
    yg_release(sum);
    yg_release(out);
    yg_release(t);
    yg_release(x);
}

static void test_inplace_ops_refuse_inputs_that_require_grad_in_grad_mode(void **state) {
    const int64_t s[] = {3};
    yg_tensor *x = NULL, *t = NULL, *out = NULL;
    bool prev;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 1, YG_FLOAT64, &x));
    YG_CHECK(yg_tensor_zeros(s, 1, YG_FLOAT64, &t));
    YG_CHECK(yg_tensor_set_requires_grad(t, true));
    /* An in-place op refuses to overwrite a leaf requiring grad. */
    YG_EXPECT_ERROR(
        yg_mul_scalar_(t, 2, &out), YG_ERR_AUTOGRAD, "mul_:", "leaf tensor that requires grad");
    assert_null(out);
    /* Under no-grad (what optimizers do) the same calls update in place. */
    prev = yg_set_grad_enabled(false);
    YG_CHECK(yg_add_scalar_(t, 1, 1, &out));
    yg_release(out);
    YG_CHECK(yg_addcmul_(x, t, t, 2, &out));
    yg_set_grad_enabled(prev);
    {
        const double e[] = {2, 2, 2};
        YG_EXPECT_CLOSE(x, s, 1, e, 0, 0);
    }
    yg_release(out);
    yg_release(t);
    yg_release(x);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inplace_ops_match_out_of_place_twins),
        cmocka_unit_test(test_inplace_ops_write_through_transposed_views),
        cmocka_unit_test(test_inplace_add_walks_a_permuted_self_in_memory_order),
        cmocka_unit_test(test_masked_fill_inplace_matches_twin),
        cmocka_unit_test(test_fill_and_zero_set_every_dtype),
        cmocka_unit_test(test_fill_converts_the_value_on_integers),
        cmocka_unit_test(test_fill_writes_only_the_view),
        cmocka_unit_test(test_copy_broadcasts_and_converts_src),
        cmocka_unit_test(test_copy_from_an_overlapping_view_reads_the_old_values),
        cmocka_unit_test(test_inplace_ops_reject_broadcasting_self),
        cmocka_unit_test(test_inplace_ops_reject_widening_self_dtype),
        cmocka_unit_test(test_inplace_ops_reject_expanded_self),
        cmocka_unit_test(test_inplace_ops_refuse_inputs_that_require_grad_in_grad_mode),
        cmocka_unit_test(test_inplace_ops_record_when_an_input_requires_grad),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
