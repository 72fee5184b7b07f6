/*
 * test_ops_batch_norm.c - batch_norm against naive float64 loops written
 * here: training (batch statistics, biased variance) and evaluation
 * (running statistics) outputs, the running statistics' update with the
 * unbiased variance, 1-d/2-d/3-d positions, non-contiguous and empty
 * inputs, its state arguments (refused when they require grad, version
 * bumped), every error message, and first and second derivatives against
 * central differences in both modes.
 *
 * batch_norm is composite (no derivative entry), so test_gradcheck.c does
 * not see it; the gradient checks live here.
 */
#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_norms.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The naive reference: x is [N, C, L] in row-major order (L = the
 * product of the position dims).  Training uses the batch statistics and
 * moves rm/rv (when given); evaluation uses rm/rv. */
static void naive_batch_norm(const double *x,
                             int64_t n,
                             int64_t c,
                             int64_t l,
                             const double *w,
                             const double *b,
                             double *rm,
                             double *rv,
                             bool training,
                             double momentum,
                             double eps,
                             double *y) {
    for (int64_t ch = 0; ch < c; ch++) {
        double mean = 0, var = 0, count = (double)(n * l);
        if (training) {
            for (int64_t i = 0; i < n; i++)
                for (int64_t k = 0; k < l; k++)
                    mean += x[(i * c + ch) * l + k];
            mean /= count;
            for (int64_t i = 0; i < n; i++)
                for (int64_t k = 0; k < l; k++) {
                    double d = x[(i * c + ch) * l + k] - mean;
                    var += d * d;
                }
            var /= count;
            if (rm != NULL) {
                rm[ch] = (1 - momentum) * rm[ch] + momentum * mean;
                rv[ch] = (1 - momentum) * rv[ch] + momentum * var * count / (count - 1);
            }
        } else {
            mean = rm[ch];
            var = rv[ch];
        }
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < l; k++) {
                double v = (x[(i * c + ch) * l + k] - mean) / sqrt(var + eps);
                y[(i * c + ch) * l + k] = v * (w ? w[ch] : 1) + (b ? b[ch] : 0);
            }
    }
}

/* Runs batch_norm on x of sizes (float64, or float32 when f32) and checks
 * it and the running statistics against the naive loops. */
static void check_against_naive(const int64_t *sizes, int64_t nd, bool training, bool affine) {
    int64_t l = 1;
    for (int64_t d = 2; d < nd; d++)
        l *= sizes[d];
    int64_t n = sizes[0], c = sizes[1], cs[1] = {c};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, sizes, nd, -2, 3, 11);
    yg_tensor *w = yg_test_rand(YG_FLOAT64, cs, 1, 0.5, 1.5, 12);
    yg_tensor *b = yg_test_rand(YG_FLOAT64, cs, 1, -1, 1, 13);
    yg_tensor *rm = yg_test_rand(YG_FLOAT64, cs, 1, -0.5, 0.5, 14);
    yg_tensor *rv = yg_test_rand(YG_FLOAT64, cs, 1, 0.5, 2, 15);
    yg_tensor *y = NULL;
    double *xv = yg_test_values(x), *wv = yg_test_values(w), *bv = yg_test_values(b);
    double *rmv = yg_test_values(rm), *rvv = yg_test_values(rv);
    double *expected = calloc((size_t)(n * c * l) + 1, sizeof(double));

    naive_batch_norm(xv, n, c, l, affine ? wv : NULL, affine ? bv : NULL, rmv, rvv, training,
                     0.2, 1e-3, expected);
    YG_CHECK(yg_batch_norm(x, affine ? w : NULL, affine ? b : NULL, rm, rv, training, 0.2, 1e-3,
                           &y));
    YG_EXPECT_CLOSE(y, sizes, nd, expected, 1e-12, 1e-10);
    YG_EXPECT_CLOSE(rm, cs, 1, rmv, 1e-14, 1e-12);
    YG_EXPECT_CLOSE(rv, cs, 1, rvv, 1e-14, 1e-12);
    free(expected);
    free(xv);
    free(wv);
    free(bv);
    free(rmv);
    free(rvv);
    yg_release(y);
    yg_release(x);
    yg_release(w);
    yg_release(b);
    yg_release(rm);
    yg_release(rv);
}

static void test_batch_norm_training_matches_naive_loops_for_1d_2d_3d(void **state) {
    const int64_t s0[] = {5, 3}, s1[] = {3, 4, 5}, s2[] = {2, 3, 4, 5}, s3[] = {2, 2, 3, 2, 3};
    (void)state;
    check_against_naive(s0, 2, true, true);
    check_against_naive(s1, 3, true, true);
    check_against_naive(s2, 4, true, false);
    check_against_naive(s3, 5, true, true);
}

static void test_batch_norm_eval_matches_naive_loops_with_running_statistics(void **state) {
    const int64_t s1[] = {1, 4, 5}, s2[] = {2, 3, 4, 5}, s3[] = {1, 2, 3, 2, 3};
    (void)state;
    check_against_naive(s1, 3, false, true);
    check_against_naive(s2, 4, false, false);
    check_against_naive(s3, 5, false, true);
}

/* A hand-computed update: channel 0 holds {1, 2, 3, 6} (mean 3, biased
 * variance 3.5, unbiased 14/3), channel 1 holds {0, 0, 2, 2} (mean 1,
 * biased 1, unbiased 4/3). */
static void test_batch_norm_moves_running_statistics_with_the_unbiased_variance(void **state) {
    const int64_t s[] = {2, 2, 2}, cs[] = {2};
    const double xv[] = {1, 2, 0, 0, 3, 6, 2, 2}, rm0[] = {1, -1}, rv0[] = {2, 0.5};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 3, xv);
    yg_tensor *rm = yg_test_tensor(YG_FLOAT64, cs, 1, rm0);
    yg_tensor *rv = yg_test_tensor(YG_FLOAT32, cs, 1, rv0);
    yg_tensor *y = NULL;
    (void)state;
    YG_CHECK(yg_batch_norm(x, NULL, NULL, rm, rv, true, 0.25, 0, &y));
    const double em[] = {0.75 * 1 + 0.25 * 3, 0.75 * -1 + 0.25 * 1};
    const double ev[] = {0.75 * 2 + 0.25 * 14.0 / 3, 0.75 * 0.5 + 0.25 * 4.0 / 3};
    YG_EXPECT_CLOSE(rm, cs, 1, em, 1e-15, 1e-12);
    YG_EXPECT_CLOSE(rv, cs, 1, ev, 1e-6, 1e-6); /* float32 running_var keeps its dtype */
    assert_int_equal(yg_tensor_dtype(rv), YG_FLOAT32);
    /* the output used the biased variance: (1 - 3) / sqrt(3.5) */
    double *yv = yg_test_values(y);
    assert_true(fabs(yv[0] - (1 - 3) / sqrt(3.5)) < 1e-12);
    assert_true(fabs(yv[2] - (0 - 1) / sqrt(1.0)) < 1e-12);
    free(yv);
    yg_release(y);
    yg_release(x);
    yg_release(rm);
    yg_release(rv);
}

static void test_batch_norm_eval_leaves_running_statistics_and_differs_from_training(void **state) {
    const int64_t s[] = {4, 2, 3}, cs[] = {2};
    const double rm0[] = {0.5, -0.5}, rv0[] = {2, 3};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 3, -1, 1, 3);
    yg_tensor *rm = yg_test_tensor(YG_FLOAT64, cs, 1, rm0);
    yg_tensor *rv = yg_test_tensor(YG_FLOAT64, cs, 1, rv0);
    yg_tensor *ye = NULL, *yt = NULL;
    (void)state;
    YG_CHECK(yg_batch_norm(x, NULL, NULL, rm, rv, false, 0.1, 1e-5, &ye));
    YG_EXPECT_CLOSE(rm, cs, 1, rm0, 0, 0);
    YG_EXPECT_CLOSE(rv, cs, 1, rv0, 0, 0);
    YG_CHECK(yg_batch_norm(x, NULL, NULL, NULL, NULL, true, 0.1, 1e-5, &yt));
    double *a = yg_test_values(ye), *b = yg_test_values(yt);
    assert_true(fabs(a[0] - b[0]) > 1e-3);
    free(a);
    free(b);
    yg_release(ye);
    yg_release(yt);
    yg_release(x);
    yg_release(rm);
    yg_release(rv);
}

/* input [N, C, L] made as a permuted view of an [N, L, C] tensor. */
static void test_batch_norm_of_a_non_contiguous_input_matches_its_copy(void **state) {
    const int64_t s[] = {3, 4, 2}, perm[] = {0, 2, 1}, ps[] = {3, 2, 4}, cs[] = {2};
    yg_tensor *base = yg_test_rand(YG_FLOAT64, s, 3, -1, 1, 21), *x = NULL, *y = NULL;
    yg_tensor *w = yg_test_rand(YG_FLOAT64, cs, 1, 0.5, 1.5, 22);
    yg_tensor *rm = NULL, *rv = NULL;
    double *bv = yg_test_values(base), *wv = yg_test_values(w), xv[24], expected[24];
    double rmv[2] = {0, 0}, rvv[2] = {1, 1};
    (void)state;
    YG_CHECK(yg_permute(base, perm, 3, &x));
    assert_false(yg_tensor_is_contiguous(x));
    for (int i = 0; i < 3; i++)
        for (int ch = 0; ch < 2; ch++)
            for (int k = 0; k < 4; k++)
                xv[(i * 2 + ch) * 4 + k] = bv[(i * 4 + k) * 2 + ch];
    rm = yg_test_tensor(YG_FLOAT64, cs, 1, rmv);
    rv = yg_test_tensor(YG_FLOAT64, cs, 1, rvv);
    naive_batch_norm(xv, 3, 2, 4, wv, NULL, rmv, rvv, true, 0.1, 1e-5, expected);
    YG_CHECK(yg_batch_norm(x, w, NULL, rm, rv, true, 0.1, 1e-5, &y));
    YG_EXPECT_CLOSE(y, ps, 3, expected, 1e-12, 1e-10);
    YG_EXPECT_CLOSE(rm, cs, 1, rmv, 1e-14, 1e-12);
    YG_EXPECT_CLOSE(rv, cs, 1, rvv, 1e-14, 1e-12);
    free(bv);
    free(wv);
    yg_release(base);
    yg_release(x);
    yg_release(y);
    yg_release(w);
    yg_release(rm);
    yg_release(rv);
}

static void test_batch_norm_of_an_empty_batch_is_empty_and_keeps_running_statistics(void **state) {
    const int64_t s[] = {0, 2, 3}, cs[] = {2};
    const double rm0[] = {0.5, -0.5}, rv0[] = {2, 3};
    yg_tensor *x = NULL, *y = NULL;
    yg_tensor *rm = yg_test_tensor(YG_FLOAT64, cs, 1, rm0);
    yg_tensor *rv = yg_test_tensor(YG_FLOAT64, cs, 1, rv0);
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 3, YG_FLOAT64, &x));
    YG_CHECK(yg_batch_norm(x, NULL, NULL, rm, rv, true, 0.1, 1e-5, &y));
    YG_EXPECT_CLOSE(y, s, 3, NULL, 0, 0);
    YG_EXPECT_CLOSE(rm, cs, 1, rm0, 0, 0);
    YG_EXPECT_CLOSE(rv, cs, 1, rv0, 0, 0);
    yg_release(y);
    YG_CHECK(yg_batch_norm(x, NULL, NULL, rm, rv, false, 0.1, 1e-5, &y));
    YG_EXPECT_CLOSE(y, s, 3, NULL, 0, 0);
    yg_release(y);
    yg_release(x);
    yg_release(rm);
    yg_release(rv);
}

/* A graph that saved running_mean sees the call as an in-place write:
 * the wrapper bumps the version of state arguments, in eval mode too
 * (where nothing is written), as PyTorch does for (a!) arguments. */
static void test_batch_norm_bumps_the_version_of_running_statistics(void **state) {
    const int64_t s[] = {4, 2}, cs[] = {2};
    const double rm0[] = {0.5, -0.5}, rv0[] = {2, 3};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 2, -1, 1, 5), *y = NULL;
    yg_tensor *a = yg_test_rand(YG_FLOAT64, cs, 1, -1, 1, 6);
    yg_tensor *rm = yg_test_tensor(YG_FLOAT64, cs, 1, rm0);
    yg_tensor *rv = yg_test_tensor(YG_FLOAT64, cs, 1, rv0);
    (void)state;
    YG_CHECK(yg_tensor_set_requires_grad(a, true));
    for (int training = 1; training >= 0; training--) {
        yg_tensor *p = NULL, *l = NULL;
        YG_CHECK(yg_mul(a, training ? rm : rv, &p)); /* saves it for a's gradient */
        YG_CHECK(yg_sum(p, &l));
        YG_CHECK(yg_batch_norm(x, NULL, NULL, rm, rv, training, 0.1, 1e-5, &y));
        YG_EXPECT_ERROR(yg_backward(l, NULL, false), YG_ERR_AUTOGRAD, "modified by an in-place");
        yg_release(y);
        yg_release(p);
        yg_release(l);
    }
    yg_release(x);
    yg_release(a);
    yg_release(rm);
    yg_release(rv);
}

static void test_batch_norm_rejects_bad_arguments_with_messages(void **state) {
    const int64_t s[] = {2, 3, 4}, one[] = {1, 3}, one3[] = {1, 3, 1}, c3[] = {3}, c4[] = {4};
    const int64_t flat[] = {6};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 3, -1, 1, 1), *y = NULL;
    yg_tensor *x1 = yg_test_rand(YG_FLOAT64, one, 2, -1, 1, 2);
    yg_tensor *x13 = yg_test_rand(YG_FLOAT64, one3, 3, -1, 1, 2);
    yg_tensor *v = yg_test_rand(YG_FLOAT64, flat, 1, -1, 1, 2);
    yg_tensor *good = yg_test_rand(YG_FLOAT64, c3, 1, 0.5, 1, 3);
    yg_tensor *good2 = yg_test_rand(YG_FLOAT64, c3, 1, 0.5, 1, 3);
    yg_tensor *bad = yg_test_rand(YG_FLOAT64, c4, 1, 0.5, 1, 4);
    yg_tensor *rg = yg_test_rand(YG_FLOAT64, c3, 1, 0.5, 1, 5);
    (void)state;
    YG_CHECK(yg_tensor_set_requires_grad(rg, true));
    YG_EXPECT_ERROR(yg_batch_norm(x, bad, NULL, NULL, NULL, true, 0.1, 1e-5, &y), YG_ERR_SHAPE,
                    "batch_norm: expected weight of sizes [3] (the channels of input [2, 3, 4]), "
                    "got [4]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_batch_norm(x, NULL, bad, NULL, NULL, true, 0.1, 1e-5, &y), YG_ERR_SHAPE,
                    "batch_norm: expected bias of sizes [3]", "got [4]");
    YG_EXPECT_ERROR(yg_batch_norm(x, NULL, NULL, bad, good, true, 0.1, 1e-5, &y), YG_ERR_SHAPE,
                    "batch_norm: expected running_mean of sizes [3]", "got [4]");
    YG_EXPECT_ERROR(yg_batch_norm(x, NULL, NULL, good, bad, false, 0.1, 1e-5, &y), YG_ERR_SHAPE,
                    "batch_norm: expected running_var of sizes [3]", "got [4]");
    YG_EXPECT_ERROR(yg_batch_norm(x1, NULL, NULL, good, good2, true, 0.1, 1e-5, &y), YG_ERR_SHAPE,
                    "batch_norm: expected more than 1 value per channel when training, got "
                    "input [1, 3]");
    YG_EXPECT_ERROR(yg_batch_norm(x13, NULL, NULL, NULL, NULL, true, 0.1, 1e-5, &y),
                    YG_ERR_SHAPE, "batch_norm: expected more than 1 value per channel",
                    "[1, 3, 1]");
    YG_EXPECT_ERROR(yg_batch_norm(x, NULL, NULL, NULL, NULL, false, 0.1, 1e-5, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "batch_norm: running_mean and running_var are required when not training");
    YG_EXPECT_ERROR(yg_batch_norm(x, NULL, NULL, good, NULL, true, 0.1, 1e-5, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "batch_norm: running_mean and running_var must be given together (got only "
                    "running_mean)");
    YG_EXPECT_ERROR(yg_batch_norm(x, NULL, NULL, rg, good, true, 0.1, 1e-5, &y), YG_ERR_AUTOGRAD,
                    "batch_norm: running_mean is state updated in place and must not require "
                    "grad");
    YG_EXPECT_ERROR(yg_batch_norm(x, NULL, NULL, good, rg, false, 0.1, 1e-5, &y), YG_ERR_AUTOGRAD,
                    "batch_norm: running_var is state updated in place");
    YG_EXPECT_ERROR(yg_batch_norm(v, NULL, NULL, NULL, NULL, true, 0.1, 1e-5, &y), YG_ERR_SHAPE,
                    "batch_norm: expected input of 2 to 5 dims [N, C, *], got [6]");
    YG_EXPECT_ERROR(yg_batch_norm(NULL, NULL, NULL, NULL, NULL, true, 0.1, 1e-5, &y),
                    YG_ERR_INVALID_ARGUMENT, "batch_norm", "input");
    assert_null(y);
    /* a failed training call leaves the running statistics unchanged */
    double *before = yg_test_values(good);
    YG_EXPECT_ERROR(yg_batch_norm(x, bad, NULL, good, good2, true, 0.1, 1e-5, &y), YG_ERR_SHAPE,
                    "weight");
    YG_EXPECT_CLOSE(good, c3, 1, before, 0, 0);
    free(before);
    yg_release(x);
    yg_release(x1);
    yg_release(x13);
    yg_release(v);
    yg_release(good);
    yg_release(good2);
    yg_release(bad);
    yg_release(rg);
}

/* ---- first and second derivatives against central differences ----
 * f(x[0..n)) -> y with a fixed cotangent v: the gradient of sum(v * y)
 * from yg_grad is compared with differences of that sum, and the gradient
 * of L2 = sum_i sum(w_i * G_i) (G from yg_grad with create_graph) with
 * respect to every x and v with differences of L2. */
typedef yg_status (*bn_fn)(yg_tensor *const *x, void *ctx, yg_tensor **y);

typedef struct grad_case {
    bn_fn f;
    void *ctx;
    yg_tensor *x[3];
    int n;
    yg_tensor *v;
    yg_tensor *w[3];
} grad_case;

static double first_order_loss(const grad_case *c) {
    yg_tensor *y = NULL, *p = NULL, *s = NULL;
    double out = 0;
    bool prev = yg_set_grad_enabled(false);
    YG_CHECK(c->f(c->x, c->ctx, &y));
    YG_CHECK(yg_mul(y, c->v, &p));
    YG_CHECK(yg_sum(p, &s));
    YG_CHECK(yg_tensor_item(s, &out));
    yg_set_grad_enabled(prev);
    yg_release(y);
    yg_release(p);
    yg_release(s);
    return out;
}

/* L2 as a tensor (create_graph) or its value. */
static yg_tensor *second_order_loss(const grad_case *c, bool create_graph) {
    yg_tensor *y = NULL, *g[3] = {0}, *acc = NULL;
    YG_CHECK(c->f(c->x, c->ctx, &y));
    YG_CHECK(yg_grad((const yg_tensor *const *)&y, 1, (const yg_tensor *const *)&c->v,
                     (const yg_tensor *const *)c->x, c->n, false, create_graph, true, g));
    for (int i = 0; i < c->n; i++) {
        yg_tensor *p = NULL, *s = NULL, *sum = NULL;
        YG_CHECK(yg_mul(g[i], c->w[i], &p));
        YG_CHECK(yg_sum(p, &s));
        if (acc != NULL) {
            YG_CHECK(yg_add(acc, s, 1, &sum));
            yg_release(s);
        } else {
            sum = s;
        }
        yg_release(acc);
        yg_release(p);
        yg_release(g[i]);
        acc = sum;
    }
    yg_release(y);
    return acc;
}

static void expect_close(const char *what, int order, int k, int64_t e, double a, double n) {
    if (fabs(a - n) > 1e-5 + 1e-3 * fabs(n)) {
        print_error("%s: order %d, wrt %d [%lld]: analytic %.10g, numeric %.10g\n",
                    what, order, k, (long long)e, a, n);
        fail();
    }
}

static void check_derivatives(const char *what, grad_case *c) {
    const double eps = 1e-6;
    yg_tensor *y = NULL, *g[3] = {0}, *l2 = NULL, *h[4] = {0};
    yg_tensor *wrt[4];

    YG_CHECK(c->f(c->x, c->ctx, &y));
    c->v = yg_test_rand(YG_FLOAT64, yg_tensor_sizes(y), yg_tensor_ndim(y), -1, 1, 77);
    YG_CHECK(yg_grad((const yg_tensor *const *)&y, 1, (const yg_tensor *const *)&c->v,
                     (const yg_tensor *const *)c->x, c->n, false, false, true, g));
    for (int i = 0; i < c->n; i++) {
        double *gv = yg_test_values(g[i]), *xv = yg_tensor_data(c->x[i]);
        for (int64_t e = 0; e < yg_tensor_numel(c->x[i]); e++) {
            double orig = xv[e], lp, lm;
            xv[e] = orig + eps;
            lp = first_order_loss(c);
            xv[e] = orig - eps;
            lm = first_order_loss(c);
            xv[e] = orig;
            expect_close(what, 1, i, e, gv[e], (lp - lm) / (2 * eps));
        }
        c->w[i] = yg_test_rand(YG_FLOAT64, yg_tensor_sizes(g[i]), yg_tensor_ndim(g[i]), -1, 1,
                               80 + (uint64_t)i);
        free(gv);
        yg_release(g[i]);
    }
    yg_release(y);
    YG_CHECK(yg_tensor_set_requires_grad(c->v, true));
    for (int i = 0; i < c->n; i++)
        wrt[i] = c->x[i];
    wrt[c->n] = c->v;
    l2 = second_order_loss(c, true);
    YG_CHECK(yg_grad((const yg_tensor *const *)&l2, 1, NULL, (const yg_tensor *const *)wrt,
                     c->n + 1, false, false, true, h));
    for (int k = 0; k <= c->n; k++) {
        double *hv = h[k] != NULL ? yg_test_values(h[k]) : NULL, *xv = yg_tensor_data(wrt[k]);
        for (int64_t e = 0; e < yg_tensor_numel(wrt[k]); e++) {
            double orig = xv[e], lp, lm;
            yg_tensor *t;
            xv[e] = orig + eps;
            t = second_order_loss(c, false);
            YG_CHECK(yg_tensor_item(t, &lp));
            yg_release(t);
            xv[e] = orig - eps;
            t = second_order_loss(c, false);
            YG_CHECK(yg_tensor_item(t, &lm));
            yg_release(t);
            xv[e] = orig;
            expect_close(what, 2, k, e, hv != NULL ? hv[e] : 0, (lp - lm) / (2 * eps));
        }
        free(hv);
        yg_release(h[k]);
    }
    yg_release(l2);
    yg_release(c->v);
    for (int i = 0; i < c->n; i++) {
        yg_release(c->w[i]);
        yg_release(c->x[i]);
    }
}

typedef struct bn_ctx {
    yg_tensor *rm, *rv;
    bool training;
} bn_ctx;

static yg_status bn_affine(yg_tensor *const *x, void *ctx, yg_tensor **y) {
    bn_ctx *b = ctx;
    return yg_batch_norm(x[0], x[1], x[2], b->rm, b->rv, b->training, 0.1, 1e-3, y);
}

static void test_batch_norm_first_and_second_derivatives_match_differences(void **state) {
    const int64_t s2[] = {3, 2, 4}, s4[] = {2, 2, 2, 3}, s0[] = {4, 3}, c2[] = {2}, c3[] = {3};
    bn_ctx train = {NULL, NULL, true};
    grad_case c = {bn_affine, &train, {NULL}, 3, NULL, {NULL}};
    (void)state;

    for (int mode = 0; mode < 2; mode++) {
        bn_ctx eval = {yg_test_rand(YG_FLOAT64, c2, 1, -0.5, 0.5, 31),
                       yg_test_rand(YG_FLOAT64, c2, 1, 0.5, 2, 32), false};
        c.ctx = mode == 0 ? &train : &eval;
        c.x[0] = yg_test_rand(YG_FLOAT64, s2, 3, -2, 2, 33);
        c.x[1] = yg_test_rand(YG_FLOAT64, c2, 1, 0.5, 1.5, 34);
        c.x[2] = yg_test_rand(YG_FLOAT64, c2, 1, -1, 1, 35);
        for (int i = 0; i < 3; i++)
            YG_CHECK(yg_tensor_set_requires_grad(c.x[i], true));
        check_derivatives(mode == 0 ? "batch_norm training [3, 2, 4]" : "batch_norm eval", &c);
        yg_release(eval.rm);
        yg_release(eval.rv);
    }
    /* 2-d positions, and no positions at all */
    c.ctx = &train;
    c.x[0] = yg_test_rand(YG_FLOAT64, s4, 4, -2, 2, 36);
    c.x[1] = yg_test_rand(YG_FLOAT64, c2, 1, 0.5, 1.5, 37);
    c.x[2] = yg_test_rand(YG_FLOAT64, c2, 1, -1, 1, 38);
    for (int i = 0; i < 3; i++)
        YG_CHECK(yg_tensor_set_requires_grad(c.x[i], true));
    check_derivatives("batch_norm training [2, 2, 2, 3]", &c);
    c.x[0] = yg_test_rand(YG_FLOAT64, s0, 2, -2, 2, 39);
    c.x[1] = yg_test_rand(YG_FLOAT64, c3, 1, 0.5, 1.5, 40);
    c.x[2] = yg_test_rand(YG_FLOAT64, c3, 1, -1, 1, 41);
    for (int i = 0; i < 3; i++)
        YG_CHECK(yg_tensor_set_requires_grad(c.x[i], true));
    check_derivatives("batch_norm training [4, 3]", &c);
}

/* Running statistics get no gradient: the input's gradient in training
 * does not depend on whether they are tracked, and they stay leaves. */
static void test_batch_norm_running_statistics_stay_without_grad(void **state) {
    const int64_t s[] = {3, 2, 2}, cs[] = {2};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 3, -1, 1, 51), *y = NULL, *l = NULL, *g = NULL;
    yg_tensor *rm = yg_test_rand(YG_FLOAT64, cs, 1, -1, 1, 52);
    yg_tensor *rv = yg_test_rand(YG_FLOAT64, cs, 1, 0.5, 1, 53);
    (void)state;
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_batch_norm(x, NULL, NULL, rm, rv, true, 0.1, 1e-5, &y));
    assert_false(yg_tensor_requires_grad(rm));
    assert_false(yg_tensor_requires_grad(rv));
    YG_CHECK(yg_sum(y, &l));
    YG_CHECK(yg_backward(l, NULL, false));
    YG_CHECK(yg_tensor_grad(rm, &g));
    assert_null(g);
    yg_release(x);
    yg_release(y);
    yg_release(l);
    yg_release(rm);
    yg_release(rv);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_norm_training_matches_naive_loops_for_1d_2d_3d),
        cmocka_unit_test(test_batch_norm_eval_matches_naive_loops_with_running_statistics),
        cmocka_unit_test(test_batch_norm_moves_running_statistics_with_the_unbiased_variance),
        cmocka_unit_test(test_batch_norm_eval_leaves_running_statistics_and_differs_from_training),
        cmocka_unit_test(test_batch_norm_of_a_non_contiguous_input_matches_its_copy),
        cmocka_unit_test(test_batch_norm_of_an_empty_batch_is_empty_and_keeps_running_statistics),
        cmocka_unit_test(test_batch_norm_bumps_the_version_of_running_statistics),
        cmocka_unit_test(test_batch_norm_rejects_bad_arguments_with_messages),
        cmocka_unit_test(test_batch_norm_first_and_second_derivatives_match_differences),
        cmocka_unit_test(test_batch_norm_running_statistics_stay_without_grad),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
