/*
 * test_optim.c - the optimizers of yagrad/optim.h against updates
 * computed by hand here (plain double loops over the formulas in the
 * header, which are PyTorch's), over several steps with changing
 * gradients; and their contract: skipped parameters, zero_grad, the
 * learning rate, grad mode, and the messages for bad options.  Gradient
 * clipping (yg_clip_grad_norm) against norms computed by hand.
 */
#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_views.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N 3

static const int64_t sizes[] = {N};

/* Sets p's .grad to g (through backward of sum(p * g)). */
static void set_grad(yg_tensor *p, const double *g) {
    yg_tensor *c = yg_test_tensor(yg_tensor_dtype(p), sizes, 1, g), *prod = NULL, *loss = NULL;
    yg_tensor_zero_grad(p);
    YG_CHECK(yg_mul(p, c, &prod));
    YG_CHECK(yg_sum(prod, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    yg_release(loss);
    yg_release(prod);
    yg_release(c);
}

static yg_tensor *param(const double *v, yg_dtype dtype) {
    yg_tensor *p = yg_test_tensor(dtype, sizes, 1, v);
    YG_CHECK(yg_tensor_set_requires_grad(p, true));
    return p;
}

static const double p0[N] = {1.0, -2.0, 0.5};
static const double grads[3][N] = {{0.5, 1.0, -0.25}, {-0.3, 0.2, 0.1}, {0.05, -1.5, 0.7}};

/* Runs three steps of opt on p with the gradients above and compares p
 * after each with ref[step]. */
static void expect_steps(yg_optimizer *opt, yg_tensor *p, double ref[3][N], double tol) {
    for (int s = 0; s < 3; s++) {
        set_grad(p, grads[s]);
        YG_CHECK(yg_optimizer_step(opt));
        YG_EXPECT_CLOSE(p, sizes, 1, ref[s], tol, tol);
    }
}

/* Hand-computed SGD (see optim.h). */
static void ref_sgd(const yg_sgd_options *o, double ref[3][N]) {
    double p[N], buf[N];
    memcpy(p, p0, sizeof p);
    for (int s = 0; s < 3; s++)
        for (int i = 0; i < N; i++) {
            double g = grads[s][i] + o->weight_decay * p[i];
            if (o->momentum != 0) {
                buf[i] = s == 0 ? g : o->momentum * buf[i] + (1 - o->dampening) * g;
                g = o->nesterov ? g + o->momentum * buf[i] : buf[i];
            }
            p[i] -= o->lr * g;
            ref[s][i] = p[i];
        }
}

/* Hand-computed Adam / AdamW (see optim.h). */
static void ref_adam(const yg_adam_options *o, bool decoupled, double ref[3][N]) {
    double p[N], m[N] = {0}, v[N] = {0};
    memcpy(p, p0, sizeof p);
    for (int s = 0; s < 3; s++) {
        int t = s + 1;
        for (int i = 0; i < N; i++) {
            double g = grads[s][i];
            if (decoupled)
                p[i] *= 1 - o->lr * o->weight_decay;
            else
                g += o->weight_decay * p[i];
            m[i] = o->beta1 * m[i] + (1 - o->beta1) * g;
            v[i] = o->beta2 * v[i] + (1 - o->beta2) * g * g;
            double mhat_scale = o->lr / (1 - pow(o->beta1, t));
            double denom = sqrt(v[i]) / sqrt(1 - pow(o->beta2, t)) + o->eps;
            p[i] -= mhat_scale * m[i] / denom;
            ref[s][i] = p[i];
        }
    }
}

static void check_sgd(const yg_sgd_options *o) {
    double ref[3][N];
    yg_tensor *p = param(p0, YG_FLOAT64);
    yg_optimizer *opt = NULL;
    ref_sgd(o, ref);
    YG_CHECK(yg_optimizer_create_sgd(&p, 1, o, &opt));
    expect_steps(opt, p, ref, 1e-15);
    yg_optimizer_release(opt);
    yg_release(p);
}

/* Contiguous float parameters take the fused one-pass update
 * (cpu/vec/optim_loops.c), others the in-place ops: the two must agree.
 * pa is contiguous, pb a transposed (non-contiguous) leaf with the same
 * values; 60000 elements also splits the fused loop over threads. */
static void check_fused_matches_ops(yg_dtype dtype, int kind) {
    const int64_t s[] = {300, 200};
    yg_tensor *pa = yg_test_rand(dtype, s, 2, -1, 1, 5), *base = NULL, *pb = NULL;
    yg_optimizer *oa = NULL, *ob = NULL;
    yg_sgd_options so = {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true};
    yg_adam_options ao = yg_adam_options_default();
    ao.weight_decay = 0.05;
    YG_CHECK(yg_transpose(pa, 0, 1, &base));
    YG_CHECK(yg_contiguous(base, &pb));
    yg_release(base);
    base = pb; /* [200, 300], contiguous; its transpose is pa's values */
    YG_CHECK(yg_transpose(base, 0, 1, &pb));
    assert_false(yg_tensor_is_contiguous(pb));
    YG_CHECK(yg_tensor_set_requires_grad(pa, true));
    YG_CHECK(yg_tensor_set_requires_grad(pb, true));
    if (kind == 0) {
        YG_CHECK(yg_optimizer_create_sgd(&pa, 1, &so, &oa));
        YG_CHECK(yg_optimizer_create_sgd(&pb, 1, &so, &ob));
    } else if (kind == 1) {
        YG_CHECK(yg_optimizer_create_adam(&pa, 1, &ao, &oa));
        YG_CHECK(yg_optimizer_create_adam(&pb, 1, &ao, &ob));
    } else {
        YG_CHECK(yg_optimizer_create_adamw(&pa, 1, &ao, &oa));
        YG_CHECK(yg_optimizer_create_adamw(&pb, 1, &ao, &ob));
    }
    for (int step = 0; step < 3; step++) {
        yg_tensor *c = yg_test_rand(dtype, s, 2, -1, 1, 20 + (uint64_t)step);
        yg_tensor *ps[2] = {pa, pb};
        for (int k = 0; k < 2; k++) {
            yg_tensor *prod = NULL, *loss = NULL;
            yg_tensor_zero_grad(ps[k]);
            YG_CHECK(yg_mul(ps[k], c, &prod));
            YG_CHECK(yg_sum(prod, &loss));
            YG_CHECK(yg_backward(loss, NULL, false));
            yg_release(loss);
            yg_release(prod);
        }
        YG_CHECK(yg_optimizer_step(oa));
        YG_CHECK(yg_optimizer_step(ob));
        yg_release(c);
    }
    double *va = yg_test_values(pa);
    double tol = dtype == YG_FLOAT32 ? 1e-6 : 1e-13;
    YG_EXPECT_CLOSE(pb, s, 2, va, tol, tol);
    free(va);
    yg_optimizer_release(oa);
    yg_optimizer_release(ob);
    yg_release(pa);
    yg_release(pb);
    yg_release(base);
}

static void test_fused_updates_match_the_op_updates(void **state) {
    (void)state;
    for (int kind = 0; kind < 3; kind++) {
        check_fused_matches_ops(YG_FLOAT32, kind);
        check_fused_matches_ops(YG_FLOAT64, kind);
    }
}

static void test_sgd_plain_step_is_p_minus_lr_g(void **state) {
    yg_sgd_options o = {.lr = 0.1};
    yg_tensor *p = param(p0, YG_FLOAT64);
    yg_optimizer *opt = NULL;
    const double expected[N] = {0.95, -2.1, 0.525};
    (void)state;
    YG_CHECK(yg_optimizer_create_sgd(&p, 1, &o, &opt));
    set_grad(p, grads[0]);
    YG_CHECK(yg_optimizer_step(opt));
    YG_EXPECT_CLOSE(p, sizes, 1, expected, 1e-15, 1e-15);
    yg_optimizer_release(opt);
    yg_release(p);
    check_sgd(&o);
}

static void test_sgd_momentum_dampening_and_weight_decay(void **state) {
    yg_sgd_options o = {.lr = 0.05, .momentum = 0.9, .dampening = 0.25, .weight_decay = 0.01};
    (void)state;
    check_sgd(&o);
}

static void test_sgd_nesterov(void **state) {
    yg_sgd_options o = {.lr = 0.05, .momentum = 0.8, .weight_decay = 0.1, .nesterov = true};
    (void)state;
    check_sgd(&o);
}

static void test_adam_matches_hand_computed_steps(void **state) {
    yg_adam_options o = yg_adam_options_default();
    double ref[3][N];
    yg_tensor *p = param(p0, YG_FLOAT64);
    yg_optimizer *opt = NULL;
    (void)state;
    o.lr = 0.01;
    ref_adam(&o, false, ref);
    YG_CHECK(yg_optimizer_create_adam(&p, 1, &o, &opt));
    expect_steps(opt, p, ref, 1e-14);
    yg_optimizer_release(opt);
    yg_release(p);
}

static void test_adam_with_l2_weight_decay(void **state) {
    yg_adam_options o = {.lr = 0.02, .beta1 = 0.8, .beta2 = 0.95, .eps = 1e-6, .weight_decay = 0.1};
    double ref[3][N];
    yg_tensor *p = param(p0, YG_FLOAT64);
    yg_optimizer *opt = NULL;
    (void)state;
    ref_adam(&o, false, ref);
    YG_CHECK(yg_optimizer_create_adam(&p, 1, &o, &opt));
    expect_steps(opt, p, ref, 1e-14);
    yg_optimizer_release(opt);
    yg_release(p);
}

static void test_adamw_decays_the_parameter_not_the_gradient(void **state) {
    yg_adam_options o = {.lr = 0.05, .beta1 = 0.9, .beta2 = 0.99, .eps = 1e-8, .weight_decay = 0.2};
    double ref[3][N], l2[3][N];
    yg_tensor *p = param(p0, YG_FLOAT64);
    yg_optimizer *opt = NULL;
    (void)state;
    ref_adam(&o, true, ref);
    ref_adam(&o, false, l2);
    assert_true(fabs(ref[2][0] - l2[2][0]) > 1e-6); /* the two rules really differ */
    YG_CHECK(yg_optimizer_create_adamw(&p, 1, &o, &opt));
    expect_steps(opt, p, ref, 1e-14);
    yg_optimizer_release(opt);
    yg_release(p);
}

/* A parameter given its own weight decay follows the formulas with that
 * decay; its neighbour keeps the options'. */
static void test_per_parameter_weight_decay(void **state) {
    yg_adam_options o = {.lr = 0.05, .beta1 = 0.9, .beta2 = 0.99, .eps = 1e-8, .weight_decay = 0.2};
    yg_adam_options none = o;
    double ref[3][N], ref_none[3][N];
    yg_tensor *p[2] = {param(p0, YG_FLOAT64), param(p0, YG_FLOAT64)};
    yg_optimizer *opt = NULL;
    (void)state;
    none.weight_decay = 0;
    ref_adam(&o, true, ref);
    ref_adam(&none, true, ref_none);
    YG_CHECK(yg_optimizer_create_adamw(p, 2, &o, &opt));
    YG_CHECK(yg_optimizer_set_param_weight_decay(opt, 1, 0));
    for (int s = 0; s < 3; s++) {
        set_grad(p[0], grads[s]);
        set_grad(p[1], grads[s]);
        YG_CHECK(yg_optimizer_step(opt));
        YG_EXPECT_CLOSE(p[0], sizes, 1, ref[s], 1e-14, 1e-14);
        YG_EXPECT_CLOSE(p[1], sizes, 1, ref_none[s], 1e-14, 1e-14);
    }
    YG_EXPECT_ERROR(yg_optimizer_set_param_weight_decay(opt, 2, 0.1), YG_ERR_INDEX, "parameter 2", "adamw's 2");
    YG_EXPECT_ERROR(yg_optimizer_set_param_weight_decay(opt, 0, -1), YG_ERR_INVALID_ARGUMENT, "weight_decay");
    yg_optimizer_release(opt);
    yg_release(p[0]);
    yg_release(p[1]);
}

/* An optimizer restored from another's state takes exactly the step the
 * original takes (what a checkpoint needs to resume training). */
static void test_state_round_trip_resumes_exactly(void **state) {
    yg_adam_options o = {.lr = 0.05, .beta1 = 0.9, .beta2 = 0.99, .eps = 1e-8, .weight_decay = 0.2};
    yg_tensor *a = param(p0, YG_FLOAT64), *b = NULL, *st[2], *bad = NULL;
    yg_optimizer *oa = NULL, *ob = NULL;
    const char *names[2];
    int64_t steps;
    (void)state;
    YG_CHECK(yg_optimizer_create_adamw(&a, 1, &o, &oa));
    for (int s = 0; s < 2; s++) {
        set_grad(a, grads[s]);
        YG_CHECK(yg_optimizer_step(oa));
    }
    assert_int_equal(yg_optimizer_state_names(oa, names), 2);
    assert_string_equal(names[0], "exp_avg");
    assert_string_equal(names[1], "exp_avg_sq");
    YG_CHECK(yg_optimizer_get_state(oa, 0, &steps, st));
    assert_int_equal(steps, 2);
    assert_non_null(st[0]);
    assert_non_null(st[1]);
    {
        bool prev = yg_set_grad_enabled(false);
        YG_CHECK(yg_clone(a, &b));
        yg_set_grad_enabled(prev);
    }
    YG_CHECK(yg_tensor_set_requires_grad(b, true));
    YG_CHECK(yg_optimizer_create_adamw(&b, 1, &o, &ob));
    YG_CHECK(yg_optimizer_set_state(ob, 0, steps, (const yg_tensor *const *)st));
    yg_release(st[0]);
    yg_release(st[1]);
    set_grad(a, grads[2]);
    set_grad(b, grads[2]);
    YG_CHECK(yg_optimizer_step(oa));
    YG_CHECK(yg_optimizer_step(ob));
    assert_memory_equal(yg_tensor_data(a), yg_tensor_data(b), N * sizeof(double));
    /* a state of the wrong shape is refused, naming both */
    const int64_t two[1] = {2};
    bad = yg_test_tensor(YG_FLOAT64, two, 1, p0);
    const yg_tensor *bads[2] = {bad, NULL};
    YG_EXPECT_ERROR(yg_optimizer_set_state(ob, 0, 1, bads), YG_ERR_SHAPE, "exp_avg of parameter 0", "[2]", "[3]");
    yg_release(bad);
    yg_optimizer_release(oa);
    yg_optimizer_release(ob);
    yg_release(a);
    yg_release(b);
}

static void test_adam_on_float32_parameters(void **state) {
    yg_adam_options o = yg_adam_options_default();
    double ref[3][N];
    yg_tensor *p = param(p0, YG_FLOAT32);
    yg_optimizer *opt = NULL;
    (void)state;
    o.lr = 0.1;
    ref_adam(&o, false, ref);
    YG_CHECK(yg_optimizer_create_adam(&p, 1, &o, &opt));
    expect_steps(opt, p, ref, 1e-6);
    assert_int_equal(yg_tensor_dtype(p), YG_FLOAT32);
    yg_optimizer_release(opt);
    yg_release(p);
}

static void test_step_skips_parameters_without_gradient(void **state) {
    yg_adam_options o = yg_adam_options_default();
    double ref[3][N];
    yg_tensor *ps[2] = {param(p0, YG_FLOAT64), param(p0, YG_FLOAT64)};
    yg_optimizer *opt = NULL;
    (void)state;
    o.lr = 0.01;
    ref_adam(&o, false, ref);
    YG_CHECK(yg_optimizer_create_adam(ps, 2, &o, &opt));
    /* Two steps that touch only ps[0] ... */
    for (int s = 0; s < 2; s++) {
        set_grad(ps[0], grads[s]);
        YG_CHECK(yg_optimizer_step(opt));
    }
    YG_EXPECT_CLOSE(ps[1], sizes, 1, p0, 0, 0);
    /* ... then ps[1] takes its first step: bias-corrected as step 1. */
    yg_tensor_zero_grad(ps[0]);
    set_grad(ps[1], grads[0]);
    YG_CHECK(yg_optimizer_step(opt));
    YG_EXPECT_CLOSE(ps[1], sizes, 1, ref[0], 1e-14, 1e-14);
    YG_EXPECT_CLOSE(ps[0], sizes, 1, ref[1], 1e-14, 1e-14);
    yg_optimizer_release(opt);
    yg_release(ps[0]);
    yg_release(ps[1]);
}

static void test_zero_grad_clears_every_parameter_gradient(void **state) {
    yg_sgd_options o = {.lr = 0.1};
    yg_tensor *ps[2] = {param(p0, YG_FLOAT64), param(p0, YG_FLOAT32)}, *g = NULL;
    yg_optimizer *opt = NULL;
    (void)state;
    YG_CHECK(yg_optimizer_create_sgd(ps, 2, &o, &opt));
    set_grad(ps[0], grads[0]);
    set_grad(ps[1], grads[1]);
    yg_optimizer_zero_grad(opt);
    YG_CHECK(yg_tensor_grad(ps[0], &g));
    assert_null(g);
    YG_CHECK(yg_tensor_grad(ps[1], &g));
    assert_null(g);
    yg_optimizer_zero_grad(NULL);
    yg_optimizer_release(opt);
    yg_release(ps[0]);
    yg_release(ps[1]);
}

static void test_step_is_not_recorded_and_restores_grad_mode(void **state) {
    yg_sgd_options o = {.lr = 0.1, .momentum = 0.9};
    yg_tensor *p = param(p0, YG_FLOAT64);
    yg_optimizer *opt = NULL;
    (void)state;
    YG_CHECK(yg_optimizer_create_sgd(&p, 1, &o, &opt));
    set_grad(p, grads[0]);
    assert_true(yg_is_grad_enabled());
    YG_CHECK(yg_optimizer_step(opt));
    assert_true(yg_is_grad_enabled());
    assert_true(yg_tensor_is_leaf(p));
    assert_true(yg_tensor_requires_grad(p));
    yg_optimizer_release(opt);
    yg_release(p);
}

static void test_learning_rate_can_be_changed_between_steps(void **state) {
    yg_sgd_options o = {.lr = 0.1};
    yg_tensor *p = param(p0, YG_FLOAT64);
    yg_optimizer *opt = NULL;
    double expected[N];
    (void)state;
    YG_CHECK(yg_optimizer_create_sgd(&p, 1, &o, &opt));
    assert_true(yg_optimizer_lr(opt) == 0.1);
    YG_CHECK(yg_optimizer_set_lr(opt, 0.5));
    assert_true(yg_optimizer_lr(opt) == 0.5);
    set_grad(p, grads[0]);
    YG_CHECK(yg_optimizer_step(opt));
    for (int i = 0; i < N; i++)
        expected[i] = p0[i] - 0.5 * grads[0][i];
    YG_EXPECT_CLOSE(p, sizes, 1, expected, 1e-15, 1e-15);
    YG_EXPECT_ERROR(yg_optimizer_set_lr(opt, -1),
                    YG_ERR_INVALID_ARGUMENT,
                    "sgd: lr must be non-negative, got -1");
    assert_true(yg_optimizer_lr(opt) == 0.5);
    assert_true(yg_optimizer_lr(NULL) == 0);
    yg_optimizer_release(opt);
    yg_release(p);
}

static void test_create_rejects_bad_options_and_parameters(void **state) {
    yg_tensor *p = param(p0, YG_FLOAT64), *i64 = NULL, *nonleaf = NULL;
    yg_tensor *dup[2] = {p, p};
    yg_optimizer *opt = NULL;
    yg_sgd_options bad_lr = {.lr = -0.1}, bad_nesterov = {.lr = 0.1, .nesterov = true};
    yg_adam_options bad_beta = yg_adam_options_default();
    (void)state;
    bad_beta.beta1 = 1;
    YG_CHECK(yg_tensor_zeros(sizes, 1, YG_INT64, &i64));
    YG_CHECK(yg_mul_scalar(p, 2, &nonleaf));
    YG_EXPECT_ERROR(yg_optimizer_create_sgd(&p, 1, &bad_lr, &opt),
                    YG_ERR_INVALID_ARGUMENT,
                    "sgd: lr must be non-negative, got -0.1");
    assert_null(opt);
    YG_EXPECT_ERROR(yg_optimizer_create_sgd(&p, 1, &bad_nesterov, &opt),
                    YG_ERR_INVALID_ARGUMENT,
                    "sgd: nesterov needs momentum > 0 and dampening 0");
    assert_null(opt);
    YG_EXPECT_ERROR(yg_optimizer_create_adam(&p, 1, &bad_beta, &opt),
                    YG_ERR_INVALID_ARGUMENT,
                    "adam: beta1 must be in [0, 1), got 1");
    assert_null(opt);
    YG_EXPECT_ERROR(yg_optimizer_create_adamw(&i64, 1, &bad_beta, &opt),
                    YG_ERR_INVALID_ARGUMENT,
                    "adamw: beta1");
    bad_beta.beta1 = 0.9;
    YG_EXPECT_ERROR(yg_optimizer_create_adamw(&i64, 1, &bad_beta, &opt),
                    YG_ERR_DTYPE,
                    "adamw: parameter 0 has dtype int64 (expected float32 or float64)");
    assert_null(opt);
    YG_EXPECT_ERROR(yg_optimizer_create_sgd(&nonleaf, 1, &bad_nesterov, &opt),
                    YG_ERR_INVALID_ARGUMENT,
                    "sgd: nesterov");
    bad_nesterov.momentum = 0.9;
    YG_EXPECT_ERROR(yg_optimizer_create_sgd(&nonleaf, 1, &bad_nesterov, &opt),
                    YG_ERR_INVALID_ARGUMENT,
                    "sgd: parameter 0 is not a leaf");
    assert_null(opt);
    YG_EXPECT_ERROR(yg_optimizer_create_sgd(dup, 2, &bad_nesterov, &opt),
                    YG_ERR_INVALID_ARGUMENT,
                    "sgd: parameter 1 is parameter 0 again");
    assert_null(opt);
    YG_EXPECT_ERROR(yg_optimizer_create_sgd(&p, 1, NULL, &opt),
                    YG_ERR_INVALID_ARGUMENT,
                    "sgd: options is NULL");
    assert_null(opt);
    YG_EXPECT_ERROR(
        yg_optimizer_step(NULL), YG_ERR_INVALID_ARGUMENT, "optimizer_step: opt is NULL");
    yg_optimizer_release(NULL);
    yg_release(nonleaf);
    yg_release(i64);
    yg_release(p);
}

static void test_optimizer_keeps_its_parameters_alive(void **state) {
    yg_sgd_options o = {.lr = 1};
    yg_tensor *p = param(p0, YG_FLOAT64), *q = NULL;
    yg_optimizer *opt = NULL;
    (void)state;
    YG_CHECK(yg_optimizer_create_sgd(&p, 1, &o, &opt));
    set_grad(p, grads[0]);
    q = p;
    yg_release(p); /* the optimizer's reference keeps it alive */
    YG_CHECK(yg_optimizer_step(opt));
    {
        double expected[N];
        for (int i = 0; i < N; i++)
            expected[i] = p0[i] - grads[0][i];
        YG_EXPECT_CLOSE(q, sizes, 1, expected, 1e-15, 1e-15);
    }
    yg_optimizer_release(opt);
}

/* The 2-norm over every gradient, by hand. */
static double hand_norm(const double (*g)[N], int n) {
    double s = 0;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < N; i++)
            s += g[k][i] * g[k][i];
    return sqrt(s);
}

static void expect_grad(const yg_tensor *p, const double *expected, double tol) {
    yg_tensor *g = NULL;
    YG_CHECK(yg_tensor_grad(p, &g));
    assert_non_null(g);
    YG_EXPECT_CLOSE(g, sizes, 1, expected, tol, tol);
    yg_release(g);
}

static void test_clip_grad_norm_scales_gradients_above_max_norm(void **state) {
    yg_tensor *ps[2] = {param(p0, YG_FLOAT64), param(p0, YG_FLOAT32)};
    double total = 0, coef, want[2][N];
    (void)state;
    set_grad(ps[0], grads[0]);
    set_grad(ps[1], grads[2]);
    /* grads[0] and grads[2]: |(0.5, 1, -0.25, 0.05, -1.5, 0.7)| =
     * sqrt(4.055) = 2.01370... in exact arithmetic; ps[1] holds the
     * float32 roundings of the last three, and those are what count. */
    double g[2][N] = {{0.5, 1.0, -0.25}, {0.05, -1.5, 0.7}};
    assert_true(fabs(hand_norm((const double(*)[N])g, 2) - sqrt(4.055)) < 1e-15);
    for (int i = 0; i < N; i++)
        g[1][i] = (float)g[1][i];
    double norm = hand_norm((const double(*)[N])g, 2);
    YG_CHECK(yg_clip_grad_norm(ps, 2, 0.5, &total));
    if (fabs(total - norm) > 1e-15)
        fail_msg("clip_grad_norm returned total norm %.17g, expected %.17g", total, norm);
    coef = 0.5 / (norm + 1e-6);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < N; i++)
            want[k][i] = g[k][i] * coef;
    expect_grad(ps[0], want[0], 1e-15);
    expect_grad(ps[1], want[1], 1e-7);
    /* The clipped gradients now have norm max_norm (up to the 1e-6). */
    YG_CHECK(yg_clip_grad_norm(ps, 2, 10, &total));
    assert_true(fabs(total - 0.5) < 1e-6);
    yg_release(ps[0]);
    yg_release(ps[1]);
}

/* A gradient large enough for the threaded, vectorised passes (and of an
 * odd length, so a remainder is left): the norm and the scaled values
 * against plain loops, in both dtypes. */
static void test_clip_grad_norm_of_large_gradients(void **state) {
    const int64_t n = 100003;
    const int64_t s[1] = {n};
    (void)state;
    for (int d = 0; d < 2; d++) {
        yg_dtype dt = d ? YG_FLOAT64 : YG_FLOAT32;
        yg_tensor *p = yg_test_rand(dt, s, 1, -1, 1, 3), *w = yg_test_rand(dt, s, 1, -1, 1, 4);
        yg_tensor *prod = NULL, *loss = NULL, *g = NULL;
        double total = 0, sq = 0;
        YG_CHECK(yg_tensor_set_requires_grad(p, true));
        YG_CHECK(yg_mul(p, w, &prod)); /* the gradient of sum(p * w) is w */
        YG_CHECK(yg_sum(prod, &loss));
        YG_CHECK(yg_backward(loss, NULL, false));
        double *wv = yg_test_values(w);
        for (int64_t i = 0; i < n; i++)
            sq += wv[i] * wv[i];
        YG_CHECK(yg_clip_grad_norm(&p, 1, 1.0, &total));
        if (fabs(total - sqrt(sq)) > 1e-12 * sqrt(sq))
            fail_msg("%s: total norm %.17g, expected %.17g", yg_dtype_name(dt), total, sqrt(sq));
        double coef = 1.0 / (total + 1e-6); /* the summation order may differ in the last bit */
        for (int64_t i = 0; i < n; i++)
            wv[i] = d ? wv[i] * coef : (double)(float)(wv[i] * coef);
        YG_CHECK(yg_tensor_grad(p, &g));
        YG_EXPECT_CLOSE(g, s, 1, wv, 0, 0);
        free(wv);
        yg_release(g);
        yg_release(prod);
        yg_release(loss);
        yg_release(p);
        yg_release(w);
    }
}

/* yg_grad_norm, then a step reading the gradients scaled, equals
 * clipping then stepping, bit for bit (the fused float32 and float64
 * updates, SGD with momentum and AdamW); the gradients stay as they were. */
static void test_grad_scale_in_the_step_equals_clipping_first(void **state) {
    const int64_t n = 50001;
    const int64_t s[1] = {n};
    (void)state;
    for (int k = 0; k < 4; k++) {
        yg_dtype dt = k & 1 ? YG_FLOAT64 : YG_FLOAT32;
        yg_tensor *p[2], *w = yg_test_rand(dt, s, 1, -1, 1, 9), *g0 = NULL, *gb = NULL;
        yg_optimizer *opt[2];
        yg_adam_options ao = {.lr = 0.01, .beta1 = 0.9, .beta2 = 0.95, .eps = 1e-8, .weight_decay = 0.1};
        yg_sgd_options so = {.lr = 0.1, .momentum = 0.9};
        double total[2];
        for (int j = 0; j < 2; j++) {
            p[j] = yg_test_rand(dt, s, 1, -1, 1, 10);
            YG_CHECK(yg_tensor_set_requires_grad(p[j], true));
            if (k < 2)
                YG_CHECK(yg_optimizer_create_adamw(&p[j], 1, &ao, &opt[j]));
            else
                YG_CHECK(yg_optimizer_create_sgd(&p[j], 1, &so, &opt[j]));
        }
        for (int step = 0; step < 2; step++)
            for (int j = 0; j < 2; j++) {
                yg_tensor *prod = NULL, *loss = NULL;
                yg_tensor_zero_grad(p[j]);
                YG_CHECK(yg_mul(p[j], w, &prod));
                YG_CHECK(yg_sum(prod, &loss));
                YG_CHECK(yg_backward(loss, NULL, false));
                if (j == 0) {
                    YG_CHECK(yg_clip_grad_norm(&p[0], 1, 0.5, &total[0]));
                } else {
                    YG_CHECK(yg_tensor_grad(p[1], &g0));
                    YG_CHECK(yg_grad_norm(&p[1], 1, &total[1]));
                    YG_CHECK(yg_optimizer_set_grad_scale(opt[1], fmin(1, 0.5 / (total[1] + 1e-6))));
                }
                YG_CHECK(yg_optimizer_step(opt[j]));
                if (j == 1) { /* the gradient was read scaled, not changed */
                    YG_CHECK(yg_tensor_grad(p[1], &gb));
                    double *a = yg_test_values(g0), *b = yg_test_values(gb), *wv = yg_test_values(w);
                    assert_memory_equal(a, wv, (size_t)n * sizeof *a);
                    assert_memory_equal(b, wv, (size_t)n * sizeof *b);
                    free(a), free(b), free(wv);
                    yg_release(g0), yg_release(gb);
                }
                yg_release(prod);
                yg_release(loss);
            }
        assert_memory_equal(&total[0], &total[1], sizeof total[0]);
        assert_memory_equal(yg_tensor_data(p[0]), yg_tensor_data(p[1]),
                            (size_t)n * (dt == YG_FLOAT64 ? 8 : 4));
        for (int j = 0; j < 2; j++) {
            yg_optimizer_release(opt[j]);
            yg_release(p[j]);
        }
        yg_release(w);
    }
    YG_EXPECT_ERROR(yg_optimizer_set_grad_scale(NULL, 1), YG_ERR_INVALID_ARGUMENT, "opt is NULL");
    YG_EXPECT_ERROR(yg_grad_norm(NULL, 0, NULL), YG_ERR_INVALID_ARGUMENT, "grad_norm", "out_total_norm");
}

static void test_clip_grad_norm_leaves_gradients_below_max_norm_alone(void **state) {
    yg_tensor *p = param(p0, YG_FLOAT64);
    double total = 0;
    (void)state;
    set_grad(p, grads[1]);
    YG_CHECK(yg_clip_grad_norm(&p, 1, 1.0, &total));
    assert_true(fabs(total - hand_norm(&grads[1], 1)) < 1e-15);
    expect_grad(p, grads[1], 0);
    /* The total norm is optional. */
    YG_CHECK(yg_clip_grad_norm(&p, 1, 1.0, NULL));
    /* No parameters: nothing to clip, norm 0. */
    total = -1;
    YG_CHECK(yg_clip_grad_norm(NULL, 0, 1.0, &total));
    assert_true(total == 0);
    yg_release(p);
}

static void test_clip_grad_norm_skips_parameters_without_gradient(void **state) {
    yg_tensor *ps[3] = {param(p0, YG_FLOAT64), param(p0, YG_FLOAT64), param(p0, YG_FLOAT64)};
    yg_tensor *g = NULL;
    double total = 0, want[N];
    (void)state;
    set_grad(ps[0], grads[0]);
    set_grad(ps[2], grads[2]);
    YG_CHECK(yg_tensor_grad(ps[1], &g));
    assert_null(g); /* ps[1] has no gradient: it counts as nothing */
    const double g2[2][N] = {{0.5, 1.0, -0.25}, {0.05, -1.5, 0.7}};
    double norm = hand_norm(g2, 2);
    YG_CHECK(yg_clip_grad_norm(ps, 3, 1.0, &total));
    assert_true(fabs(total - norm) < 1e-15);
    for (int i = 0; i < N; i++)
        want[i] = g2[0][i] / (norm + 1e-6);
    expect_grad(ps[0], want, 1e-15);
    YG_CHECK(yg_tensor_grad(ps[1], &g));
    assert_null(g);
    yg_release(ps[0]);
    yg_release(ps[1]);
    yg_release(ps[2]);
}

/* A leaf that is a transposed view: whatever layout its gradient has, the
 * norm and the scaling are those of its values. */
static void test_clip_grad_norm_of_a_transposed_parameter(void **state) {
    const int64_t s[] = {3, 2}, st[] = {2, 3};
    const double v[] = {1, 2, 3, 4, 5, 6}, w[] = {0.5, -1, 2, 0.25, -3, 1};
    yg_tensor *base = yg_test_tensor(YG_FLOAT64, st, 2, v), *p = NULL, *c = NULL, *prod = NULL,
              *loss = NULL, *g = NULL;
    double total = 0, norm = 0, want[6];
    (void)state;
    YG_CHECK(yg_transpose(base, 0, 1, &p)); /* [3, 2], not contiguous */
    assert_false(yg_tensor_is_contiguous(p));
    YG_CHECK(yg_tensor_set_requires_grad(p, true));
    c = yg_test_tensor(YG_FLOAT64, s, 2, w);
    YG_CHECK(yg_mul(p, c, &prod));
    YG_CHECK(yg_sum(prod, &loss));
    YG_CHECK(yg_backward(loss, NULL, false)); /* p's gradient: w */
    for (int i = 0; i < 6; i++)
        norm += w[i] * w[i];
    norm = sqrt(norm);
    YG_CHECK(yg_clip_grad_norm(&p, 1, 1.0, &total));
    assert_true(fabs(total - norm) < 1e-15);
    for (int i = 0; i < 6; i++)
        want[i] = w[i] / (norm + 1e-6);
    YG_CHECK(yg_tensor_grad(p, &g));
    YG_EXPECT_CLOSE(g, s, 2, want, 1e-15, 1e-15);
    yg_release(g);
    yg_release(loss);
    yg_release(prod);
    yg_release(c);
    yg_release(p);
    yg_release(base);
}

static void test_clip_grad_norm_rejects_bad_arguments_and_changes_nothing(void **state) {
    yg_tensor *ps[2] = {param(p0, YG_FLOAT64), param(p0, YG_FLOAT64)};
    yg_tensor *dup[2] = {ps[0], ps[0]}, *with_null[2] = {ps[0], NULL};
    const double bad[N] = {1.0, INFINITY, 0.5};
    double total = 0;
    (void)state;
    set_grad(ps[0], grads[0]);
    set_grad(ps[1], bad);
    total = 7;
    YG_EXPECT_ERROR(yg_clip_grad_norm(ps, 1, 0, &total),
                    YG_ERR_INVALID_ARGUMENT,
                    "clip_grad_norm: max_norm must be positive and finite, got 0");
    assert_true(total == 0);
    YG_EXPECT_ERROR(yg_clip_grad_norm(ps, 1, -0.5, &total),
                    YG_ERR_INVALID_ARGUMENT,
                    "clip_grad_norm: max_norm must be positive and finite, got -0.5");
    YG_EXPECT_ERROR(yg_clip_grad_norm(ps, 1, NAN, &total),
                    YG_ERR_INVALID_ARGUMENT,
                    "clip_grad_norm: max_norm",
                    "got nan");
    YG_EXPECT_ERROR(yg_clip_grad_norm(ps, 1, INFINITY, &total),
                    YG_ERR_INVALID_ARGUMENT,
                    "clip_grad_norm: max_norm",
                    "got inf");
    YG_EXPECT_ERROR(yg_clip_grad_norm(NULL, 2, 1.0, &total),
                    YG_ERR_INVALID_ARGUMENT,
                    "clip_grad_norm: params is NULL or params_len 2");
    YG_EXPECT_ERROR(yg_clip_grad_norm(ps, -1, 1.0, &total),
                    YG_ERR_INVALID_ARGUMENT,
                    "clip_grad_norm: params is NULL or params_len -1 is negative");
    YG_EXPECT_ERROR(yg_clip_grad_norm(dup, 2, 0.1, &total),
                    YG_ERR_INVALID_ARGUMENT,
                    "clip_grad_norm: parameter 1 is parameter 0 again");
    YG_EXPECT_ERROR(yg_clip_grad_norm(with_null, 2, 0.1, &total),
                    YG_ERR_INVALID_ARGUMENT,
                    "clip_grad_norm: parameter 1 is NULL");
    /* A gradient holding inf: refused before anything is scaled, so the
     * finite gradient of parameter 0 is unchanged too. */
    total = 7;
    YG_EXPECT_ERROR(yg_clip_grad_norm(ps, 2, 0.1, &total),
                    YG_ERR_INVALID_ARGUMENT,
                    "clip_grad_norm: the gradient of parameter 1 has a non-finite norm (inf)");
    assert_true(total == 0);
    expect_grad(ps[0], grads[0], 0);
    /* None of the failures above scaled anything. */
    YG_CHECK(yg_clip_grad_norm(ps, 1, 100, &total));
    assert_true(fabs(total - hand_norm(&grads[0], 1)) < 1e-15);
    yg_release(ps[0]);
    yg_release(ps[1]);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sgd_plain_step_is_p_minus_lr_g),
        cmocka_unit_test(test_fused_updates_match_the_op_updates),
        cmocka_unit_test(test_sgd_momentum_dampening_and_weight_decay),
        cmocka_unit_test(test_sgd_nesterov),
        cmocka_unit_test(test_adam_matches_hand_computed_steps),
        cmocka_unit_test(test_adam_with_l2_weight_decay),
        cmocka_unit_test(test_adamw_decays_the_parameter_not_the_gradient),
        cmocka_unit_test(test_adam_on_float32_parameters),
        cmocka_unit_test(test_step_skips_parameters_without_gradient),
        cmocka_unit_test(test_zero_grad_clears_every_parameter_gradient),
        cmocka_unit_test(test_step_is_not_recorded_and_restores_grad_mode),
        cmocka_unit_test(test_learning_rate_can_be_changed_between_steps),
        cmocka_unit_test(test_create_rejects_bad_options_and_parameters),
        cmocka_unit_test(test_optimizer_keeps_its_parameters_alive),
        cmocka_unit_test(test_per_parameter_weight_decay),
        cmocka_unit_test(test_state_round_trip_resumes_exactly),
        cmocka_unit_test(test_clip_grad_norm_scales_gradients_above_max_norm),
        cmocka_unit_test(test_clip_grad_norm_of_large_gradients),
        cmocka_unit_test(test_grad_scale_in_the_step_equals_clipping_first),
        cmocka_unit_test(test_clip_grad_norm_leaves_gradients_below_max_norm_alone),
        cmocka_unit_test(test_clip_grad_norm_skips_parameters_without_gradient),
        cmocka_unit_test(test_clip_grad_norm_of_a_transposed_parameter),
        cmocka_unit_test(test_clip_grad_norm_rejects_bad_arguments_and_changes_nothing),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
