/*
 * test_ops_nn.c - the nn ops: softmax, the losses (mse, l1, smooth_l1,
 * binary_cross_entropy with and without logits, nll_loss and
 * cross_entropy with class weights, cross_entropy with class
 * indices, K-dim inputs and class probabilities), layer_norm and
 * embedding, against naive float64 loops written here.
 *
 * The composite ones (losses, layer_norm) have no derivative entry of
 * their own, so test_gradcheck.c does not see them; their gradients are
 * checked here against central differences, through every part autograd
 * records.
 */
#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_slicing.h"
#include "yagrad/ops_softmax.h"
#include "yagrad/ops_losses.h"
#include "yagrad/ops_norms.h"
#include "yagrad/ops_layers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* loss = f(x), x float64 requiring grad; ctx carries the other inputs. */
typedef yg_status (*loss_fn)(yg_tensor *x, void *ctx, yg_tensor **loss);

/* Compares d loss / dx from yg_backward with central differences (loss
 * summed when it is not a scalar). */
static void
expect_gradient_matches_differences(const char *what, yg_tensor *x, loss_fn f, void *ctx) {
    const double eps = 1e-6;
    yg_tensor *l = NULL, *s = NULL, *g = NULL;
    double *gv, *xv = yg_tensor_data(x);
    bool prev;

    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(f(x, ctx, &l));
    YG_CHECK(yg_sum(l, &s));
    YG_CHECK(yg_backward(s, NULL, false));
    YG_CHECK(yg_tensor_grad(x, &g));
    gv = yg_test_values(g);
    prev = yg_set_grad_enabled(false);
    for (int64_t i = 0; i < yg_tensor_numel(x); i++) {
        double orig = xv[i], lp, lm;
        yg_tensor *a = NULL, *b = NULL;
        xv[i] = orig + eps;
        YG_CHECK(f(x, ctx, &a));
        YG_CHECK(yg_sum(a, &b));
        YG_CHECK(yg_tensor_item(b, &lp));
        yg_release(a);
        yg_release(b);
        xv[i] = orig - eps;
        YG_CHECK(f(x, ctx, &a));
        YG_CHECK(yg_sum(a, &b));
        YG_CHECK(yg_tensor_item(b, &lm));
        yg_release(a);
        yg_release(b);
        xv[i] = orig;
        double numeric = (lp - lm) / (2 * eps);
        if (fabs(numeric - gv[i]) > 1e-6 + 1e-4 * fabs(numeric)) {
            print_error("%s: d/dx[%lld]: analytic %.10g, numeric %.10g\n",
                        what,
                        (long long)i,
                        gv[i],
                        numeric);
            fail();
        }
    }
    yg_set_grad_enabled(prev);
    free(gv);
    yg_release(g);
    yg_release(s);
    yg_release(l);
}

static void test_softmax_matches_naive_loops_and_sums_to_one(void **state) {
    const int64_t s[] = {3, 4};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, s, 2, -3, 3, 2), *y = NULL;
    double *xv = yg_test_values(x), expected[12];
    (void)state;
    for (int j = 0; j < 4; j++) {
        double z = 0;
        for (int i = 0; i < 3; i++)
            z += exp(xv[i * 4 + j]);
        for (int i = 0; i < 3; i++)
            expected[i * 4 + j] = exp(xv[i * 4 + j]) / z;
    }
    YG_CHECK(yg_softmax(x, 0, &y));
    YG_EXPECT_CLOSE(y, s, 2, expected, 1e-7, 1e-6);
    yg_release(y);
    free(xv);
    yg_release(x);
}

/* The fused kernels (cpu/vec/softmax.c) on blocks big enough to be split
 * over threads, along the last dim (rows) and along dim 0 with more
 * columns than one slab (256), forward and backward, float32 and float64,
 * against loops in double written here. */
static void check_softmax_block(yg_dtype dtype, int64_t rows, int64_t cols, int64_t dim) {
    const int64_t s[] = {rows, cols};
    int64_t n = rows * cols;
    yg_tensor *x = yg_test_rand(dtype, s, 2, -8, 8, 7), *g = yg_test_rand(dtype, s, 2, -1, 1, 8);
    double *xv = yg_test_values(x), *gv = yg_test_values(g);
    double *sm = malloc(sizeof(double) * (size_t)n), *lsm = malloc(sizeof(double) * (size_t)n);
    double *gsm = malloc(sizeof(double) * (size_t)n), *glsm = malloc(sizeof(double) * (size_t)n);
    int64_t lines = dim == 1 ? rows : cols, len = dim == 1 ? cols : rows;
    for (int64_t l = 0; l < lines; l++) {
        /* element k of line l */
#define AT(k) (dim == 1 ? l * cols + (k) : (k)*cols + l)
        double mx = -INFINITY, z = 0, dot = 0, gs = 0;
        for (int64_t k = 0; k < len; k++)
            mx = fmax(mx, xv[AT(k)]);
        for (int64_t k = 0; k < len; k++)
            z += exp(xv[AT(k)] - mx);
        for (int64_t k = 0; k < len; k++) {
            sm[AT(k)] = exp(xv[AT(k)] - mx) / z;
            lsm[AT(k)] = xv[AT(k)] - mx - log(z);
            dot += gv[AT(k)] * sm[AT(k)];
            gs += gv[AT(k)];
        }
        for (int64_t k = 0; k < len; k++) {
            gsm[AT(k)] = sm[AT(k)] * (gv[AT(k)] - dot);
            glsm[AT(k)] = gv[AT(k)] - sm[AT(k)] * gs;
        }
#undef AT
    }
    double tol = dtype == YG_FLOAT32 ? 2e-6 : 1e-12;
    yg_tensor *y = NULL, *ly = NULL, *gy = NULL, *gly = NULL;
    YG_CHECK(yg_softmax(x, dim, &y));
    YG_CHECK(yg_log_softmax(x, dim, &ly));
    YG_CHECK(yg_softmax_backward(g, y, dim, &gy));
    YG_CHECK(yg_log_softmax_backward(g, ly, dim, &gly));
    YG_EXPECT_CLOSE(y, s, 2, sm, tol, tol);
    YG_EXPECT_CLOSE(ly, s, 2, lsm, tol, tol);
    YG_EXPECT_CLOSE(gy, s, 2, gsm, tol, tol);
    YG_EXPECT_CLOSE(gly, s, 2, glsm, tol, tol);
    yg_release(y);
    yg_release(ly);
    yg_release(gy);
    yg_release(gly);
    free(sm);
    free(lsm);
    free(gsm);
    free(glsm);
    free(xv);
    free(gv);
    yg_release(x);
    yg_release(g);
}

static void test_fused_softmax_kernels_match_naive_loops_on_large_blocks(void **state) {
    (void)state;
    for (int d = 0; d < 2; d++) {
        yg_dtype dtype = d == 0 ? YG_FLOAT32 : YG_FLOAT64;
        check_softmax_block(dtype, 96, 1000, 1); /* 96 rows, split over threads */
        check_softmax_block(dtype, 70, 600, 0);  /* 600 columns: three slabs */
        check_softmax_block(dtype, 3, 5, 1);     /* small: one thread */
    }
}

/* ---- regression losses ---- */

typedef struct pair_ctx {
    yg_tensor *target, *weight, *pos_weight;
    yg_reduction reduction;
    double beta;
} pair_ctx;

static yg_status mse_of(yg_tensor *x, void *c, yg_tensor **o) {
    pair_ctx *p = c;
    return yg_mse_loss(x, p->target, p->reduction, o);
}
static yg_status l1_of(yg_tensor *x, void *c, yg_tensor **o) {
    pair_ctx *p = c;
    return yg_l1_loss(x, p->target, p->reduction, o);
}
static yg_status smooth_l1_of(yg_tensor *x, void *c, yg_tensor **o) {
    pair_ctx *p = c;
    return yg_smooth_l1_loss(x, p->target, p->reduction, p->beta, o);
}
static yg_status bce_of(yg_tensor *x, void *c, yg_tensor **o) {
    pair_ctx *p = c;
    return yg_binary_cross_entropy(x, p->target, p->weight, p->reduction, o);
}
static yg_status bce_logits_of(yg_tensor *x, void *c, yg_tensor **o) {
    pair_ctx *p = c;
    return yg_binary_cross_entropy_with_logits(
        x, p->target, p->weight, p->pos_weight, p->reduction, o);
}

static double ref_smooth_l1(double d, double beta) {
    double a = fabs(d);
    return a < beta ? 0.5 * d * d / beta : a - 0.5 * beta;
}

static void test_regression_losses_match_naive_loops_for_each_reduction(void **state) {
    const int64_t s[] = {3, 4};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 2, -2, 2, 1),
              *t = yg_test_rand(YG_FLOAT64, s, 2, -2, 2, 2);
    double *xv = yg_test_values(x), *tv = yg_test_values(t);
    double mse[12], l1[12], sl1[12];
    (void)state;
    for (int i = 0; i < 12; i++) {
        double d = xv[i] - tv[i];
        mse[i] = d * d;
        l1[i] = fabs(d);
        sl1[i] = ref_smooth_l1(d, 0.7);
    }
    for (int r = 0; r < 3; r++) {
        pair_ctx c = {.target = t, .reduction = r, .beta = 0.7};
        loss_fn fns[] = {mse_of, l1_of, smooth_l1_of};
        double *refs[] = {mse, l1, sl1};
        for (int k = 0; k < 3; k++) {
            yg_tensor *y = NULL;
            YG_CHECK(fns[k](x, &c, &y));
            if (r == 0) {
                YG_EXPECT_CLOSE(y, s, 2, refs[k], 1e-15, 1e-15);
            } else {
                double acc = 0;
                for (int i = 0; i < 12; i++)
                    acc += refs[k][i];
                acc = r == 1 ? acc / 12 : acc;
                YG_EXPECT_CLOSE(y, NULL, 0, &acc, 1e-14, 1e-14);
            }
            yg_release(y);
        }
    }
    free(xv);
    free(tv);
    yg_release(x);
    yg_release(t);
}

static void test_regression_loss_gradients_match_differences(void **state) {
    const int64_t s[] = {2, 3};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 2, -2, 2, 3),
              *t = yg_test_rand(YG_FLOAT64, s, 2, -2, 2, 4);
    pair_ctx c = {.target = t, .reduction = YG_REDUCTION_MEAN, .beta = 0.8};
    (void)state;
    expect_gradient_matches_differences("mse_loss", x, mse_of, &c);
    yg_tensor_zero_grad(x);
    expect_gradient_matches_differences("l1_loss", x, l1_of, &c);
    yg_tensor_zero_grad(x);
    expect_gradient_matches_differences("smooth_l1_loss", x, smooth_l1_of, &c);
    yg_release(x);
    yg_release(t);
}

/* ---- binary cross entropy ---- */

static void test_binary_cross_entropy_matches_naive_loops(void **state) {
    const int64_t s[] = {2, 3}, ws[] = {3};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 2, 0.05, 0.95, 5),
              *t = yg_test_rand(YG_FLOAT64, s, 2, 0, 1, 6);
    yg_tensor *w = yg_test_rand(YG_FLOAT64, ws, 1, 0.5, 2, 7), *y = NULL;
    double *xv = yg_test_values(x), *tv = yg_test_values(t), *wv = yg_test_values(w), e[6], sum = 0;
    pair_ctx c = {.target = t, .weight = w, .reduction = YG_REDUCTION_NONE};
    (void)state;
    for (int i = 0; i < 6; i++) {
        e[i] = -wv[i % 3] * (tv[i] * log(xv[i]) + (1 - tv[i]) * log(1 - xv[i]));
        sum += e[i];
    }
    YG_CHECK(bce_of(x, &c, &y));
    YG_EXPECT_CLOSE(y, s, 2, e, 1e-14, 1e-14);
    yg_release(y);
    c.reduction = YG_REDUCTION_SUM;
    YG_CHECK(bce_of(x, &c, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, &sum, 1e-14, 1e-14);
    yg_release(y);
    c.reduction = YG_REDUCTION_MEAN;
    expect_gradient_matches_differences("binary_cross_entropy", x, bce_of, &c);
    free(xv);
    free(tv);
    free(wv);
    yg_release(x);
    yg_release(t);
    yg_release(w);
}

static void test_binary_cross_entropy_clamps_its_logs(void **state) {
    const int64_t s[] = {2};
    const double xv[] = {0, 1}, tv[] = {1, 0}, e[] = {100, 100};
    yg_tensor *x = yg_test_tensor(YG_FLOAT32, s, 1, xv), *t = yg_test_tensor(YG_FLOAT32, s, 1, tv),
              *y = NULL;
    (void)state;
    YG_CHECK(yg_binary_cross_entropy(x, t, NULL, YG_REDUCTION_NONE, &y));
    YG_EXPECT_CLOSE(y, s, 1, e, 0, 0);
    yg_release(y);
    yg_release(x);
    yg_release(t);
}

static void test_binary_cross_entropy_with_logits_is_stable_and_smooth(void **state) {
    const int64_t s[] = {2, 3}, ps[] = {3};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 2, -4, 4, 8),
              *t = yg_test_rand(YG_FLOAT64, s, 2, 0, 1, 9);
    yg_tensor *pw = yg_test_rand(YG_FLOAT64, ps, 1, 0.5, 3, 10), *y = NULL;
    double *xv = yg_test_values(x), *tv = yg_test_values(t), *pv = yg_test_values(pw), e[6];
    pair_ctx c = {.target = t, .pos_weight = pw, .reduction = YG_REDUCTION_NONE};
    (void)state;
    for (int i = 0; i < 6; i++) {
        double sig = 1 / (1 + exp(-xv[i]));
        e[i] = -(pv[i % 3] * tv[i] * log(sig) + (1 - tv[i]) * log(1 - sig));
    }
    YG_CHECK(bce_logits_of(x, &c, &y));
    YG_EXPECT_CLOSE(y, s, 2, e, 1e-13, 1e-13);
    yg_release(y);
    c.reduction = YG_REDUCTION_MEAN;
    expect_gradient_matches_differences("binary_cross_entropy_with_logits", x, bce_logits_of, &c);
    {
        /* Large logits: no overflow; logit 0: the gradient is sigmoid(0) - t. */
        const int64_t s3[] = {3};
        const double big[] = {800, -800, 0}, tb[] = {0, 1, 0.25}, eb[] = {800, 800, log(2.0)};
        yg_tensor *xb = yg_test_tensor(YG_FLOAT64, s3, 1, big),
                  *tt = yg_test_tensor(YG_FLOAT64, s3, 1, tb);
        yg_tensor *l = NULL, *sum = NULL, *g = NULL;
        double *gv;
        YG_CHECK(yg_tensor_set_requires_grad(xb, true));
        YG_CHECK(yg_binary_cross_entropy_with_logits(xb, tt, NULL, NULL, YG_REDUCTION_NONE, &l));
        YG_EXPECT_CLOSE(l, s3, 1, eb, 1e-12, 1e-12);
        YG_CHECK(yg_sum(l, &sum));
        YG_CHECK(yg_backward(sum, NULL, false));
        YG_CHECK(yg_tensor_grad(xb, &g));
        gv = yg_test_values(g);
        assert_true(fabs(gv[2] - 0.25) < 1e-15);
        free(gv);
        yg_release(g);
        yg_release(sum);
        yg_release(l);
        yg_release(xb);
        yg_release(tt);
    }
    free(xv);
    free(tv);
    free(pv);
    yg_release(x);
    yg_release(t);
    yg_release(pw);
}

/* ---- cross entropy ---- */

typedef struct ce_ctx {
    yg_tensor *target, *weight;
    yg_reduction reduction;
    int64_t ignore_index;
} ce_ctx;

static yg_status ce_of(yg_tensor *x, void *c, yg_tensor **o) {
    ce_ctx *p = c;
    return yg_cross_entropy(x, p->target, p->weight, p->reduction, p->ignore_index, o);
}

/* -log softmax(row)[k] */
static double ref_ce(const double *row, int64_t n, int64_t stride, int64_t k) {
    double z = 0;
    for (int64_t j = 0; j < n; j++)
        z += exp(row[j * stride]);
    return log(z) - row[k * stride];
}

static void test_cross_entropy_with_class_indices_matches_naive_loops(void **state) {
    const int64_t s[] = {4, 5}, ts[] = {4};
    const double tv[] = {3, 0, -100, 4};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 2, -2, 2, 11),
              *t = yg_test_tensor(YG_INT64, ts, 1, tv), *y = NULL;
    double *xv = yg_test_values(x), e[4] = {0}, mean = 0;
    ce_ctx c = {.target = t, .reduction = YG_REDUCTION_NONE, .ignore_index = -100};
    (void)state;
    for (int i = 0; i < 4; i++)
        if (tv[i] >= 0) {
            e[i] = ref_ce(xv + i * 5, 5, 1, (int64_t)tv[i]);
            mean += e[i] / 3;
        }
    YG_CHECK(ce_of(x, &c, &y));
    YG_EXPECT_CLOSE(y, ts, 1, e, 1e-14, 1e-14);
    yg_release(y);
    c.reduction = YG_REDUCTION_MEAN;
    YG_CHECK(ce_of(x, &c, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, &mean, 1e-14, 1e-14);
    yg_release(y);
    expect_gradient_matches_differences("cross_entropy", x, ce_of, &c);
    free(xv);
    yg_release(x);
    yg_release(t);
}

static void test_cross_entropy_second_derivative_matches_naive_hessian(void **state) {
    /* Mean cross_entropy over N rows: the Hessian of row i is
     * (diag(p) - p p^T) / N, p = softmax(x_i) (the target drops out), so
     * H v is (p v - p (p . v)) / N per row.  Through log_softmax's double
     * backward (log_softmax_backward's entry). */
    const int64_t s[] = {3, 4}, ts[] = {3};
    const double tv[] = {2, 0, 3};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 2, -2, 2, 21),
              *v = yg_test_rand(YG_FLOAT64, s, 2, -1, 1, 22),
              *t = yg_test_tensor(YG_INT64, ts, 1, tv), *y = NULL, *g = NULL, *gv = NULL,
              *dot = NULL, *hv = NULL;
    double *xv = yg_test_values(x), *vv = yg_test_values(v), expected[12];
    (void)state;
    for (int i = 0; i < 3; i++) {
        double mx = xv[i * 4], z = 0, p[4], pv = 0;
        for (int j = 1; j < 4; j++)
            mx = xv[i * 4 + j] > mx ? xv[i * 4 + j] : mx;
        for (int j = 0; j < 4; j++)
            z += exp(xv[i * 4 + j] - mx);
        for (int j = 0; j < 4; j++) {
            p[j] = exp(xv[i * 4 + j] - mx) / z;
            pv += p[j] * vv[i * 4 + j];
        }
        for (int j = 0; j < 4; j++)
            expected[i * 4 + j] = (p[j] * vv[i * 4 + j] - p[j] * pv) / 3;
    }
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_cross_entropy(x, t, NULL, YG_REDUCTION_MEAN, -100, &y));
    YG_CHECK(yg_grad((const yg_tensor *const[]){y},
                     1,
                     NULL,
                     (const yg_tensor *const[]){x},
                     1,
                     false,
                     true,
                     false,
                     &g));
    YG_CHECK(yg_mul(g, v, &gv));
    YG_CHECK(yg_sum(gv, &dot));
    YG_CHECK(yg_grad((const yg_tensor *const[]){dot},
                     1,
                     NULL,
                     (const yg_tensor *const[]){x},
                     1,
                     false,
                     false,
                     false,
                     &hv));
    YG_EXPECT_CLOSE(hv, s, 2, expected, 1e-14, 1e-12);
    free(xv);
    free(vv);
    yg_release(hv);
    yg_release(dot);
    yg_release(gv);
    yg_release(g);
    yg_release(y);
    yg_release(t);
    yg_release(v);
    yg_release(x);
}

static void test_cross_entropy_over_k_dims_moves_the_class_dim(void **state) {
    const int64_t s[] = {2, 3, 4}, ts[] = {2, 4};
    const double tv[] = {0, 2, 1, 1, 2, 2, 0, 1};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 3, -2, 2, 12),
              *t = yg_test_tensor(YG_INT64, ts, 2, tv), *y = NULL;
    double *xv = yg_test_values(x), e[8];
    ce_ctx c = {.target = t, .reduction = YG_REDUCTION_NONE, .ignore_index = -100};
    (void)state;
    for (int n = 0; n < 2; n++)
        for (int d = 0; d < 4; d++)
            e[n * 4 + d] = ref_ce(xv + n * 12 + d, 3, 4, (int64_t)tv[n * 4 + d]);
    YG_CHECK(ce_of(x, &c, &y));
    YG_EXPECT_CLOSE(y, ts, 2, e, 1e-14, 1e-14);
    yg_release(y);
    c.reduction = YG_REDUCTION_SUM;
    expect_gradient_matches_differences("cross_entropy K-dim", x, ce_of, &c);
    free(xv);
    yg_release(x);
    yg_release(t);
}

static void test_cross_entropy_with_class_probabilities(void **state) {
    const int64_t s[] = {2, 3};
    const double pv[] = {0.2, 0.5, 0.3, 1, 0, 0};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 2, -2, 2, 13),
              *p = yg_test_tensor(YG_FLOAT64, s, 2, pv), *y = NULL;
    double *xv = yg_test_values(x), mean = 0;
    ce_ctx c = {.target = p, .reduction = YG_REDUCTION_MEAN, .ignore_index = -100};
    (void)state;
    for (int n = 0; n < 2; n++)
        for (int k = 0; k < 3; k++)
            mean += pv[n * 3 + k] * ref_ce(xv + n * 3, 3, 1, k) / 2;
    YG_CHECK(ce_of(x, &c, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, &mean, 1e-14, 1e-14);
    yg_release(y);
    expect_gradient_matches_differences("cross_entropy probabilities", x, ce_of, &c);
    free(xv);
    yg_release(x);
    yg_release(p);
}

static void test_losses_reject_bad_reduction_and_shapes(void **state) {
    const int64_t s[] = {2, 3}, ts[] = {3}, ks[] = {2, 3, 4}, kt[] = {2, 5};
    const double tv[] = {0, 1, 2};
    yg_tensor *x = NULL, *t = yg_test_tensor(YG_INT64, ts, 1, tv), *k = NULL, *kt_t = NULL,
              *y = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 2, YG_FLOAT64, &x));
    YG_CHECK(yg_tensor_zeros(ks, 3, YG_FLOAT64, &k));
    YG_CHECK(yg_tensor_zeros(kt, 2, YG_INT64, &kt_t));
    YG_EXPECT_ERROR(yg_mse_loss(x, x, 3, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "mse_loss: reduction must be none (0), mean (1) or sum (2), not 3");
    assert_null(y);
    YG_EXPECT_ERROR(yg_nll_loss(x, t, NULL, -1, -100, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "nll_loss: reduction must be none (0), mean (1) or sum (2), not -1");
    assert_null(y);
    YG_EXPECT_ERROR(
        yg_cross_entropy(x, t, NULL, YG_REDUCTION_MEAN, -100, &y), YG_ERR_SHAPE, "cross_entropy: nll_loss:");
    assert_null(y);
    YG_EXPECT_ERROR(
        yg_cross_entropy(k, kt_t, NULL, YG_REDUCTION_MEAN, -100, &y),
        YG_ERR_SHAPE,
        "cross_entropy: target [2, 5] does not match self [2, 3, 4] without its class dim 1");
    assert_null(y);
    YG_EXPECT_ERROR(yg_smooth_l1_loss(x, x, 1, -1, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "smooth_l1_loss: beta must be non-negative, got -1");
    assert_null(y);
    yg_release(x);
    yg_release(t);
    yg_release(k);
    yg_release(kt_t);
}

/* ---- nll_loss and cross_entropy with class weights ---- */

/* Naive weighted nll over rows of x (n rows, c classes, row-major):
 * losses[i] = -w[t] x[i, t] (0 when ignored); returns the sum of the losses
 * and sets *wsum to the sum of w[t] over the counted rows. */
static double ref_nll(const double *x,
                      int64_t n,
                      int64_t c,
                      const double *t,
                      const double *w,
                      int64_t ignore,
                      double *losses,
                      double *wsum) {
    double total = 0;
    *wsum = 0;
    for (int64_t i = 0; i < n; i++) {
        losses[i] = 0;
        if ((int64_t)t[i] == ignore)
            continue;
        int64_t k = (int64_t)t[i];
        double wk = w != NULL ? w[k] : 1.0;
        losses[i] = -wk * x[i * c + k];
        total += losses[i];
        *wsum += wk;
    }
    return total;
}

typedef struct nll_ctx {
    yg_tensor *target, *weight;
    yg_reduction reduction;
    int64_t ignore_index;
} nll_ctx;

static yg_status nll_of(yg_tensor *x, void *c, yg_tensor **o) {
    nll_ctx *p = c;
    return yg_nll_loss(x, p->target, p->weight, p->reduction, p->ignore_index, o);
}

/* Checks every reduction of nll_loss(x, t, w) against ref_nll; xv and wv
 * are x's and w's logical values. */
static void expect_nll_reductions(yg_tensor *x,
                                  const double *xv,
                                  yg_tensor *t,
                                  const double *tv,
                                  yg_tensor *w,
                                  const double *wv,
                                  int64_t ignore) {
    const int64_t n = yg_tensor_sizes(x)[0], c = yg_tensor_sizes(x)[1], ls[] = {n};
    double losses[16], wsum, total = ref_nll(xv, n, c, tv, wv, ignore, losses, &wsum);
    double mean = total / wsum;
    yg_tensor *y = NULL;

    YG_CHECK(yg_nll_loss(x, t, w, YG_REDUCTION_NONE, ignore, &y));
    YG_EXPECT_CLOSE(y, ls, 1, losses, 1e-14, 1e-14);
    yg_release(y);
    YG_CHECK(yg_nll_loss(x, t, w, YG_REDUCTION_MEAN, ignore, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, &mean, 1e-14, 1e-14);
    yg_release(y);
    YG_CHECK(yg_nll_loss(x, t, w, YG_REDUCTION_SUM, ignore, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, &total, 1e-14, 1e-14);
    yg_release(y);
}

static void test_log_softmax_jvp_rejects_bad_dims_and_shapes(void **state) {
    /* the adjoint of log_softmax_backward (double-backward): errors of its
     * inner ops, prefixed with its name */
    const int64_t s[] = {2, 3}, st[] = {3, 2};
    yg_tensor *g = NULL, *o = NULL, *ot = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 2, YG_FLOAT64, &g));
    YG_CHECK(yg_tensor_zeros(s, 2, YG_FLOAT64, &o));
    YG_CHECK(yg_tensor_zeros(st, 2, YG_FLOAT64, &ot));
    YG_EXPECT_ERROR(yg_log_softmax_jvp(g, o, 2, &y),
                    YG_ERR_INDEX,
                    "log_softmax_jvp: sum: dim 2 out of range for self with 2 dims");
    assert_null(y);
    YG_EXPECT_ERROR(yg_log_softmax_jvp(g, ot, 1, &y),
                    YG_ERR_SHAPE,
                    "log_softmax_jvp: mul: cannot broadcast self [2, 3] with other [3, 2]");
    assert_null(y);
    yg_release(g);
    yg_release(o);
    yg_release(ot);
}

static void test_nll_loss_with_weights_matches_naive_loops(void **state) {
    const int64_t s[] = {5, 4}, st[] = {4, 5}, ts[] = {5}, ws[] = {4}, w2s[] = {8};
    const double tv[] = {2, -100, 0, 3, 2}, wv[] = {0.5, 2, 1.5, 3};
    const double w2v[] = {0.5, 9, 2, 9, 1.5, 9, 3, 9};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 2, -3, 0, 21),
              *t = yg_test_tensor(YG_INT64, ts, 1, tv), *w = yg_test_tensor(YG_FLOAT64, ws, 1, wv),
              *w2 = yg_test_tensor(YG_FLOAT64, w2s, 1, w2v), *ws_view = NULL,
              *xt_base = yg_test_rand(YG_FLOAT64, st, 2, -3, 0, 22), *xt = NULL;
    double *xv = yg_test_values(x), *xtv;
    nll_ctx c = {.target = t, .weight = w, .reduction = YG_REDUCTION_MEAN, .ignore_index = -100};
    (void)state;
    expect_nll_reductions(x, xv, t, tv, w, wv, -100);
    expect_nll_reductions(x, xv, t, tv, NULL, NULL, -100);
    /* a transposed self and a strided weight (every other element) */
    YG_CHECK(yg_transpose(xt_base, 0, 1, &xt));
    YG_CHECK(yg_slice(w2, 0, 0, 8, 2, &ws_view));
    xtv = yg_test_values(xt);
    expect_nll_reductions(xt, xtv, t, tv, ws_view, wv, -100);
    /* ignore_index that is a class: rows with target 2 are left out */
    {
        const double t2v[] = {2, 1, 0, 3, 2};
        yg_tensor *t2 = yg_test_tensor(YG_INT64, ts, 1, t2v);
        expect_nll_reductions(x, xv, t2, t2v, w, wv, 2);
        yg_release(t2);
    }
    /* gradients (a fresh leaf each time: gradients accumulate) */
    expect_gradient_matches_differences("nll_loss weighted mean", x, nll_of, &c);
    c.reduction = YG_REDUCTION_NONE;
    {
        yg_tensor *x2 = yg_test_tensor(YG_FLOAT64, s, 2, xv);
        expect_gradient_matches_differences("nll_loss weighted none", x2, nll_of, &c);
        yg_release(x2);
    }
    free(xv);
    free(xtv);
    yg_release(x);
    yg_release(xt);
    yg_release(xt_base);
    yg_release(t);
    yg_release(w);
    yg_release(w2);
    yg_release(ws_view);
}

static void test_nll_loss_with_weights_of_a_single_sample_and_float32(void **state) {
    const int64_t s[] = {4}, ws[] = {4}, s2[] = {3, 4}, ts2[] = {3};
    const double xv[] = {-0.5, -1.25, -2, -0.75}, wv[] = {0.5, 2, 1.5, 3}, tv0[] = {2};
    const double tv2[] = {3, 1, 0};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 1, xv),
              *t = yg_test_tensor(YG_INT64, NULL, 0, tv0),
              *w = yg_test_tensor(YG_FLOAT64, ws, 1, wv), *y = NULL;
    yg_tensor *x32 = yg_test_rand(YG_FLOAT32, s2, 2, -3, 0, 23),
              *t2 = yg_test_tensor(YG_INT64, ts2, 1, tv2),
              *w32 = yg_test_tensor(YG_FLOAT32, ws, 1, wv);
    double *x32v = yg_test_values(x32), w32v[4];
    const double none = 1.5 * 2, mean = 2;
    (void)state;
    /* [C] self with a 0-dim target: -w[2] x[2]; mean divides w[2] out */
    YG_CHECK(yg_nll_loss(x, t, w, YG_REDUCTION_NONE, -100, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, &none, 1e-15, 1e-15);
    yg_release(y);
    YG_CHECK(yg_nll_loss(x, t, w, YG_REDUCTION_SUM, -100, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, &none, 1e-15, 1e-15);
    yg_release(y);
    YG_CHECK(yg_nll_loss(x, t, w, YG_REDUCTION_MEAN, -100, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, &mean, 1e-15, 1e-15);
    yg_release(y);
    /* float32 self and weight (the reference sees the float32 values) */
    for (int k = 0; k < 4; k++)
        w32v[k] = (float)wv[k];
    {
        double losses[3], wsum, total = ref_nll(x32v, 3, 4, tv2, w32v, -100, losses, &wsum);
        double m = total / wsum;
        YG_CHECK(yg_nll_loss(x32, t2, w32, YG_REDUCTION_MEAN, -100, &y));
        assert_int_equal(yg_tensor_dtype(y), YG_FLOAT32);
        YG_EXPECT_CLOSE(y, NULL, 0, &m, 1e-6, 1e-6);
        yg_release(y);
    }
    free(x32v);
    yg_release(x);
    yg_release(t);
    yg_release(w);
    yg_release(x32);
    yg_release(t2);
    yg_release(w32);
}

static void test_nll_loss_mean_over_no_weight_is_nan(void **state) {
    const int64_t s[] = {3, 2}, ts[] = {3}, ws[] = {2};
    const double tv[] = {-100, -100, -100}, tv1[] = {1, -100, 1}, wv[] = {1, 0},
                 zeros[] = {0, 0, 0};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 2, -3, 0, 24),
              *t = yg_test_tensor(YG_INT64, ts, 1, tv), *t1 = yg_test_tensor(YG_INT64, ts, 1, tv1),
              *w = yg_test_tensor(YG_FLOAT64, ws, 1, wv), *y = NULL, *g = NULL;
    double v, zero = 0;
    (void)state;
    /* every target ignored: mean is 0/0 = NaN (as in PyTorch), sum 0, none 0s */
    YG_CHECK(yg_nll_loss(x, t, NULL, YG_REDUCTION_MEAN, -100, &y));
    YG_CHECK(yg_tensor_item(y, &v));
    assert_true(isnan(v));
    yg_release(y);
    YG_CHECK(yg_nll_loss(x, t, w, YG_REDUCTION_SUM, -100, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, &zero, 0, 0);
    yg_release(y);
    YG_CHECK(yg_nll_loss(x, t, w, YG_REDUCTION_NONE, -100, &y));
    YG_EXPECT_CLOSE(y, ts, 1, zeros, 0, 0);
    yg_release(y);
    /* all ignored: the gradient of mean is 0 (nothing is picked) */
    {
        yg_tensor *g0 = NULL;
        YG_CHECK(yg_tensor_zeros(NULL, 0, YG_FLOAT64, &g0));
        YG_CHECK(yg_nll_loss_backward(g0, t, NULL, s, 2, 1, -100, &g));
        YG_EXPECT_CLOSE(g, s, 2, ((const double[]){0, 0, 0, 0, 0, 0}), 0, 0);
        yg_release(g);
        yg_release(g0);
    }
    /* counted targets whose weights sum to 0: NaN too */
    YG_CHECK(yg_nll_loss(x, t1, w, YG_REDUCTION_MEAN, -100, &y));
    YG_CHECK(yg_tensor_item(y, &v));
    assert_true(isnan(v));
    yg_release(y);
    yg_release(x);
    yg_release(t);
    yg_release(t1);
    yg_release(w);
}

static void test_cross_entropy_with_weights_matches_naive_loops(void **state) {
    const int64_t s[] = {4, 3}, ts[] = {4}, ws[] = {3}, ks[] = {2, 3, 2}, kts[] = {2, 2};
    const double tv[] = {2, 1, -100, 0}, wv[] = {0.5, 2, 1.5}, ktv[] = {0, 2, 1, 1};
    const double pv[] = {0.2, 0.5, 0.3, 1, 0, 0, 0, 0.5, 0.5, 0.1, 0.1, 0.8};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 2, -2, 2, 25),
              *t = yg_test_tensor(YG_INT64, ts, 1, tv), *w = yg_test_tensor(YG_FLOAT64, ws, 1, wv),
              *k = yg_test_rand(YG_FLOAT64, ks, 3, -2, 2, 26),
              *kt = yg_test_tensor(YG_INT64, kts, 2, ktv),
              *p = yg_test_tensor(YG_FLOAT64, s, 2, pv), *y = NULL;
    double *xv = yg_test_values(x), *kv = yg_test_values(k), total = 0, wsum = 0, e[4], soft = 0;
    ce_ctx c = {.target = t, .weight = w, .reduction = YG_REDUCTION_MEAN, .ignore_index = -100};
    (void)state;
    for (int i = 0; i < 4; i++) {
        if (tv[i] < 0)
            continue;
        total += wv[(int)tv[i]] * ref_ce(xv + i * 3, 3, 1, (int64_t)tv[i]);
        wsum += wv[(int)tv[i]];
    }
    double mean = total / wsum;
    YG_CHECK(ce_of(x, &c, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, &mean, 1e-14, 1e-14);
    yg_release(y);
    expect_gradient_matches_differences("cross_entropy weighted", x, ce_of, &c);
    /* [N, C, d]: class dim 1, none keeps target's shape */
    for (int n = 0; n < 2; n++)
        for (int d = 0; d < 2; d++) {
            int64_t cls = (int64_t)ktv[n * 2 + d];
            e[n * 2 + d] = wv[cls] * ref_ce(kv + n * 6 + d, 3, 2, cls);
        }
    YG_CHECK(yg_cross_entropy(k, kt, w, YG_REDUCTION_NONE, -100, &y));
    YG_EXPECT_CLOSE(y, kts, 2, e, 1e-14, 1e-14);
    yg_release(y);
    /* class probabilities: -sum_c w[c] p[i, c] log_softmax(x)[i, c], mean over N */
    for (int n = 0; n < 4; n++)
        for (int j = 0; j < 3; j++)
            soft += wv[j] * pv[n * 3 + j] * ref_ce(xv + n * 3, 3, 1, j) / 4;
    YG_CHECK(yg_cross_entropy(x, p, w, YG_REDUCTION_MEAN, -100, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, &soft, 1e-14, 1e-14);
    yg_release(y);
    c.target = p;
    {
        yg_tensor *x2 = yg_test_tensor(YG_FLOAT64, s, 2, xv); /* a fresh leaf */
        expect_gradient_matches_differences("cross_entropy weighted probabilities", x2, ce_of, &c);
        yg_release(x2);
    }
    free(xv);
    free(kv);
    yg_release(x);
    yg_release(t);
    yg_release(w);
    yg_release(k);
    yg_release(kt);
    yg_release(p);
}

static void test_nll_loss_and_cross_entropy_reject_bad_weights(void **state) {
    const int64_t s[] = {2, 3}, ts[] = {2}, w3[] = {3}, w4[] = {4}, w22[] = {2, 2}, gs[] = {2};
    const double tv[] = {0, 2}, ones[] = {1, 1, 1, 1};
    yg_tensor *x = NULL, *t = yg_test_tensor(YG_INT64, ts, 1, tv), *w = NULL, *wbig = NULL,
              *wmat = NULL, *w32 = NULL, *g = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 2, YG_FLOAT64, &x));
    w = yg_test_tensor(YG_FLOAT64, w3, 1, ones);
    wbig = yg_test_tensor(YG_FLOAT64, w4, 1, ones);
    wmat = yg_test_tensor(YG_FLOAT64, w22, 2, ones);
    w32 = yg_test_tensor(YG_FLOAT32, w3, 1, ones);
    g = yg_test_tensor(YG_FLOAT64, gs, 1, ones);
    YG_EXPECT_ERROR(yg_nll_loss(x, t, wbig, YG_REDUCTION_MEAN, -100, &y),
                    YG_ERR_SHAPE,
                    "nll_loss: expected weight of shape [3] (one per class), got [4]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_nll_loss(x, t, wmat, YG_REDUCTION_MEAN, -100, &y),
                    YG_ERR_SHAPE,
                    "nll_loss: expected weight of shape [3] (one per class), got [2, 2]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_nll_loss(x, t, w32, YG_REDUCTION_MEAN, -100, &y),
                    YG_ERR_DTYPE,
                    "nll_loss: weight of dtype float32 does not match self of dtype float64");
    assert_null(y);
    YG_EXPECT_ERROR(yg_nll_loss_backward(g, t, wbig, s, 2, 0, -100, &y),
                    YG_ERR_SHAPE,
                    "nll_loss_backward: expected weight of shape [3] (one per class), got [4]");
    assert_null(y);
    YG_EXPECT_ERROR(
        yg_nll_loss_backward(g, t, w32, s, 2, 0, -100, &y),
        YG_ERR_DTYPE,
        "nll_loss_backward: weight of dtype float32 does not match self of dtype float64");
    assert_null(y);
    YG_EXPECT_ERROR(
        yg_cross_entropy(x, t, wbig, YG_REDUCTION_MEAN, -100, &y),
        YG_ERR_SHAPE,
        "cross_entropy: expected weight of shape [3] (one per class of self [2, 3]), got [4]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_cross_entropy(x, t, w32, YG_REDUCTION_MEAN, -100, &y),
                    YG_ERR_DTYPE,
                    "cross_entropy: weight of dtype float32 does not match self of dtype float64");
    assert_null(y);
    /* a good weight still leaves the target checks in place */
    YG_EXPECT_ERROR(yg_nll_loss(x, g, w, YG_REDUCTION_MEAN, -100, &y),
                    YG_ERR_DTYPE,
                    "nll_loss: expected target of dtype int64, got float64");
    assert_null(y);
    yg_release(x);
    yg_release(t);
    yg_release(w);
    yg_release(wbig);
    yg_release(wmat);
    yg_release(w32);
    yg_release(g);
}

/* ---- layer_norm ---- */

typedef struct ln_ctx {
    yg_tensor *weight, *bias;
} ln_ctx;

static yg_status ln_of(yg_tensor *x, void *c, yg_tensor **o) {
    ln_ctx *p = c;
    const int64_t ns[] = {2, 3};
    return yg_layer_norm(x, ns, 2, p->weight, p->bias, 1e-5, o);
}

static void test_layer_norm_matches_naive_loops(void **state) {
    const int64_t s[] = {4, 2, 3}, ns[] = {2, 3};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 3, -2, 2, 14),
              *w = yg_test_rand(YG_FLOAT64, ns, 2, 0.5, 2, 15);
    yg_tensor *b = yg_test_rand(YG_FLOAT64, ns, 2, -1, 1, 16), *y = NULL;
    double *xv = yg_test_values(x), *wv = yg_test_values(w), *bv = yg_test_values(b), e[24],
           plain[24];
    ln_ctx c = {.weight = w, .bias = b};
    (void)state;
    for (int r = 0; r < 4; r++) {
        double mean = 0, var = 0;
        for (int i = 0; i < 6; i++)
            mean += xv[r * 6 + i] / 6;
        for (int i = 0; i < 6; i++)
            var += (xv[r * 6 + i] - mean) * (xv[r * 6 + i] - mean) / 6;
        for (int i = 0; i < 6; i++) {
            plain[r * 6 + i] = (xv[r * 6 + i] - mean) / sqrt(var + 1e-5);
            e[r * 6 + i] = plain[r * 6 + i] * wv[i] + bv[i];
        }
    }
    YG_CHECK(yg_layer_norm(x, ns, 2, w, b, 1e-5, &y));
    YG_EXPECT_CLOSE(y, s, 3, e, 1e-13, 1e-13);
    yg_release(y);
    YG_CHECK(yg_layer_norm(x, ns, 2, NULL, NULL, 1e-5, &y));
    YG_EXPECT_CLOSE(y, s, 3, plain, 1e-13, 1e-13);
    yg_release(y);
    expect_gradient_matches_differences("layer_norm", x, ln_of, &c);
    YG_EXPECT_ERROR(yg_layer_norm(x, (const int64_t[]){3, 2}, 2, NULL, NULL, 1e-5, &y),
                    YG_ERR_SHAPE,
                    "layer_norm: expected input whose trailing sizes are normalized_shape [3, 2], "
                    "got [4, 2, 3]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_layer_norm(x, ns, 2, x, NULL, 1e-5, &y),
                    YG_ERR_SHAPE,
                    "layer_norm: expected weight of normalized_shape [2, 3], got [4, 2, 3]");
    assert_null(y);
    free(xv);
    free(wv);
    free(bv);
    yg_release(x);
    yg_release(w);
    yg_release(b);
}

/* ---- embedding ---- */

static void test_embedding_picks_rows_and_skips_the_padding_gradient(void **state) {
    const int64_t ws[] = {4, 3}, is[] = {2, 2}, os[] = {2, 2, 3};
    const double iv[] = {1, 3, 3, 0};
    yg_tensor *w = yg_test_rand(YG_FLOAT64, ws, 2, -1, 1, 17),
              *i = yg_test_tensor(YG_INT64, is, 2, iv);
    yg_tensor *y = NULL, *s = NULL, *g = NULL;
    double *wv = yg_test_values(w), e[12];
    const double grad_e[] = {1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0}; /* row 3 is padding */
    (void)state;
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < 3; j++)
            e[k * 3 + j] = wv[(int)iv[k] * 3 + j];
    YG_CHECK(yg_tensor_set_requires_grad(w, true));
    YG_CHECK(yg_embedding(w, i, 3, &y));
    YG_EXPECT_CLOSE(y, os, 3, e, 0, 0);
    YG_CHECK(yg_sum(y, &s));
    YG_CHECK(yg_backward(s, NULL, false));
    YG_CHECK(yg_tensor_grad(w, &g));
    YG_EXPECT_CLOSE(g, ws, 2, grad_e, 0, 0);
    yg_release(g);
    yg_release(s);
    yg_release(y);
    {
        const double bad[] = {4, 0, 0, 0};
        yg_tensor *bi = yg_test_tensor(YG_INT64, is, 2, bad);
        YG_EXPECT_ERROR(yg_embedding(w, bi, -1, &y),
                        YG_ERR_INDEX,
                        "embedding: index 4 out of range for dim 0 of size 4");
        assert_null(y);
        yg_release(bi);
    }
    free(wv);
    yg_release(w);
    yg_release(i);
}

/* ---- attention ---- */

typedef struct attn_ctx {
    yg_tensor *k, *v, *mask;
    bool causal;
} attn_ctx;

static yg_status attn_of(yg_tensor *q, void *c, yg_tensor **o) {
    attn_ctx *p = c;
    return yg_scaled_dot_product_attention(q, p->k, p->v, p->mask, p->causal, NULL, o);
}

/* out[b][i] = sum_j softmax_j(q_i . k_j / sqrt(E) (masked)) v_j */
static void naive_attention(const double *q,
                            const double *k,
                            const double *v,
                            int B,
                            int L,
                            int S,
                            int E,
                            int Ev,
                            bool causal,
                            double *out) {
    for (int b = 0; b < B; b++)
        for (int i = 0; i < L; i++) {
            double w[8], z = 0;
            for (int j = 0; j < S; j++) {
                double dot = 0;
                for (int e = 0; e < E; e++)
                    dot += q[(b * L + i) * E + e] * k[(b * S + j) * E + e];
                w[j] = causal && j > i ? 0 : exp(dot / sqrt((double)E));
                z += w[j];
            }
            for (int e = 0; e < Ev; e++) {
                double acc = 0;
                for (int j = 0; j < S; j++)
                    acc += w[j] / z * v[(b * S + j) * Ev + e];
                out[(b * L + i) * Ev + e] = acc;
            }
        }
}

static void test_scaled_dot_product_attention_matches_naive_loops(void **state) {
    const int64_t qs[] = {2, 4, 3}, ks[] = {2, 4, 3}, vs[] = {2, 4, 2}, os[] = {2, 4, 2};
    yg_tensor *q = yg_test_rand(YG_FLOAT64, qs, 3, -1, 1, 1),
              *k = yg_test_rand(YG_FLOAT64, ks, 3, -1, 1, 2);
    yg_tensor *v = yg_test_rand(YG_FLOAT64, vs, 3, -1, 1, 3), *y = NULL;
    double *qv = yg_test_values(q), *kv = yg_test_values(k), *vv = yg_test_values(v), e[16], ec[16];
    attn_ctx c = {.k = k, .v = v, .causal = true};
    (void)state;
    naive_attention(qv, kv, vv, 2, 4, 4, 3, 2, false, e);
    naive_attention(qv, kv, vv, 2, 4, 4, 3, 2, true, ec);
    YG_CHECK(yg_scaled_dot_product_attention(q, k, v, NULL, false, NULL, &y));
    YG_EXPECT_CLOSE(y, os, 3, e, 1e-14, 1e-14);
    yg_release(y);
    YG_CHECK(yg_scaled_dot_product_attention(q, k, v, NULL, true, NULL, &y));
    YG_EXPECT_CLOSE(y, os, 3, ec, 1e-14, 1e-14);
    yg_release(y);
    /* A bool mask equal to the causal one gives the same result. */
    {
        const int64_t ms[] = {4, 4};
        double mv[16];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                mv[i * 4 + j] = j <= i;
        c.mask = yg_test_tensor(YG_BOOL, ms, 2, mv);
        YG_CHECK(yg_scaled_dot_product_attention(q, k, v, c.mask, false, NULL, &y));
        YG_EXPECT_CLOSE(y, os, 3, ec, 1e-14, 1e-14);
        yg_release(y);
    }
    expect_gradient_matches_differences("scaled_dot_product_attention", q, attn_of, &c);
    yg_release(c.mask);
    free(qv);
    free(kv);
    free(vv);
    yg_release(q);
    yg_release(k);
    yg_release(v);
}

/* ---- group_norm ---- */

typedef struct gn_ctx {
    yg_tensor *weight, *bias;
} gn_ctx;

static yg_status gn_of(yg_tensor *x, void *c, yg_tensor **o) {
    gn_ctx *p = c;
    return yg_group_norm(x, 2, p->weight, p->bias, 1e-5, o);
}

static void test_group_norm_matches_naive_loops(void **state) {
    const int64_t s[] = {2, 4, 3}, cs[] = {4};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 3, -2, 2, 21),
              *w = yg_test_rand(YG_FLOAT64, cs, 1, 0.5, 2, 22);
    yg_tensor *b = yg_test_rand(YG_FLOAT64, cs, 1, -1, 1, 23), *y = NULL;
    double *xv = yg_test_values(x), *wv = yg_test_values(w), *bv = yg_test_values(b), e[24];
    gn_ctx c = {.weight = w, .bias = b};
    (void)state;
    for (int n = 0; n < 2; n++)
        for (int g = 0; g < 2; g++) {
            const double *grp = xv + n * 12 + g * 6; /* channels 2g, 2g+1: 6 values */
            double mean = 0, var = 0;
            for (int i = 0; i < 6; i++)
                mean += grp[i] / 6;
            for (int i = 0; i < 6; i++)
                var += (grp[i] - mean) * (grp[i] - mean) / 6;
            for (int i = 0; i < 6; i++) {
                int ch = 2 * g + i / 3;
                e[n * 12 + g * 6 + i] = (grp[i] - mean) / sqrt(var + 1e-5) * wv[ch] + bv[ch];
            }
        }
    YG_CHECK(yg_group_norm(x, 2, w, b, 1e-5, &y));
    YG_EXPECT_CLOSE(y, s, 3, e, 1e-13, 1e-13);
    yg_release(y);
    expect_gradient_matches_differences("group_norm", x, gn_of, &c);
    YG_EXPECT_ERROR(
        yg_group_norm(x, 3, NULL, NULL, 1e-5, &y),
        YG_ERR_SHAPE,
        "group_norm: expected input [N, C, *] with C divisible by num_groups 3, got [2, 4, 3]");
    assert_null(y);
    free(xv);
    free(wv);
    free(bv);
    yg_release(x);
    yg_release(w);
    yg_release(b);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softmax_matches_naive_loops_and_sums_to_one),
        cmocka_unit_test(test_fused_softmax_kernels_match_naive_loops_on_large_blocks),
        cmocka_unit_test(test_regression_losses_match_naive_loops_for_each_reduction),
        cmocka_unit_test(test_regression_loss_gradients_match_differences),
        cmocka_unit_test(test_binary_cross_entropy_matches_naive_loops),
        cmocka_unit_test(test_binary_cross_entropy_clamps_its_logs),
        cmocka_unit_test(test_binary_cross_entropy_with_logits_is_stable_and_smooth),
        cmocka_unit_test(test_cross_entropy_with_class_indices_matches_naive_loops),
        cmocka_unit_test(test_cross_entropy_second_derivative_matches_naive_hessian),
        cmocka_unit_test(test_cross_entropy_over_k_dims_moves_the_class_dim),
        cmocka_unit_test(test_cross_entropy_with_class_probabilities),
        cmocka_unit_test(test_losses_reject_bad_reduction_and_shapes),
        cmocka_unit_test(test_log_softmax_jvp_rejects_bad_dims_and_shapes),
        cmocka_unit_test(test_nll_loss_with_weights_matches_naive_loops),
        cmocka_unit_test(test_nll_loss_with_weights_of_a_single_sample_and_float32),
        cmocka_unit_test(test_nll_loss_mean_over_no_weight_is_nan),
        cmocka_unit_test(test_cross_entropy_with_weights_matches_naive_loops),
        cmocka_unit_test(test_nll_loss_and_cross_entropy_reject_bad_weights),
        cmocka_unit_test(test_layer_norm_matches_naive_loops),
        cmocka_unit_test(test_embedding_picks_rows_and_skips_the_padding_gradient),
        cmocka_unit_test(test_scaled_dot_product_attention_matches_naive_loops),
        cmocka_unit_test(test_group_norm_matches_naive_loops),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
