/*
 * test_ops_random.c - the Philox4x32-10 generator and the random ops.
 *
 * Philox is checked against Random123's published known-answer vectors;
 * rand against the documented transform of the generator's words,
 * recomputed here from yg_philox4x32_10; every op for reproducibility
 * (same seed, same values; another seed, other values; one thread or two,
 * same values); the distributions with fixed seeds and loose bounds (the
 * seeds make each check deterministic, the bounds leave room for several
 * standard errors); dropout's scaling and gradient; and the messages for
 * bad arguments.
 */
#include "testutil.h"
#include "yagrad/ops_creation.h"
#include "yagrad/ops_random.h"

#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const yg_dtype f32 = YG_FLOAT32, f64 = YG_FLOAT64, i64 = YG_INT64, b8 = YG_BOOL;
static const yg_device cuda = YG_CUDA;

static void test_philox_matches_random123_known_answers(void **state)
{
    /* Random123 1.14, tests/kat_vectors, the "philox4x32 10" lines:
     * counter (4 words), key (2 words), expected output (4 words). */
    static const uint32_t kat[3][10] = {
        {0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000,
         0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
         0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0,
         0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1},
    };
    (void)state;
    for (int v = 0; v < 3; v++) {
        uint32_t out[4];
        yg_philox4x32_10(kat[v], kat[v] + 4, out);
        for (int k = 0; k < 4; k++)
            assert_int_equal(out[k], kat[v][6 + k]);
    }
}

/* Words of counter c under seed, as yagrad lays them out. */
static void words(uint64_t seed, uint64_t c, uint32_t w[4])
{
    const uint32_t ctr[4] = {(uint32_t)c, (uint32_t)(c >> 32), 0, 0};
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    yg_philox4x32_10(ctr, key, w);
}

static void test_rand_is_the_documented_transform_of_counters(void **state)
{
    const int64_t s[] = {3, 5};
    const uint64_t seed = 0x123456789abcdefULL;
    yg_generator *g = NULL;
    yg_tensor *a = NULL, *b = NULL;
    double ea[15], eb[15];
    (void)state;
    YG_CHECK(yg_generator_create(seed, &g));
    YG_CHECK(yg_rand(s, 2, g, NULL, NULL, &a));
    assert_int_equal(yg_tensor_dtype(a), YG_FLOAT32);
    assert_int_equal(yg_generator_offset(g), 15);
    YG_CHECK(yg_rand(s, 2, g, &f64, NULL, &b));
    assert_int_equal(yg_generator_offset(g), 30);
    for (int i = 0; i < 15; i++) {
        uint32_t w[4];
        words(seed, (uint64_t)i, w);
        ea[i] = (double)(w[0] >> 8) / 16777216.0;
        words(seed, 15 + (uint64_t)i, w);
        eb[i] = ((double)(w[0] >> 5) * 67108864.0 + (double)(w[1] >> 6)) / 9007199254740992.0;
    }
    YG_EXPECT_CLOSE(a, s, 2, ea, 0, 0);
    YG_EXPECT_CLOSE(b, s, 2, eb, 0, 0);
    assert_int_equal(yg_generator_seed(g), seed);
    yg_release(a);
    yg_release(b);
    yg_generator_release(g);
}

typedef yg_status (*draw_fn)(yg_generator *g, yg_tensor **out);

static const int64_t big[] = {1 << 17};
static yg_status draw_rand(yg_generator *g, yg_tensor **o) { return yg_rand(big, 1, g, &f64, NULL, o); }
static yg_status draw_randn(yg_generator *g, yg_tensor **o) { return yg_randn(big, 1, g, NULL, NULL, o); }
static yg_status draw_randint(yg_generator *g, yg_tensor **o) { return yg_randint(-5, 1000, big, 1, g, NULL, NULL, o); }
static yg_status draw_bernoulli_p(yg_generator *g, yg_tensor **o)
{
    yg_tensor *x = NULL;
    yg_status st = yg_zeros(big, 1, NULL, NULL, &x);
    if (st == YG_OK)
        st = yg_bernoulli_p(x, 0.3, g, o);
    yg_release(x);
    return st;
}

static const draw_fn draws[] = {draw_rand, draw_randn, draw_randint, draw_bernoulli_p};
#define N_DRAWS ((int)(sizeof draws / sizeof draws[0]))

/* Whether a and b hold the same values (bit for bit). */
static bool same_values(const yg_tensor *a, const yg_tensor *b)
{
    return yg_tensor_numel(a) == yg_tensor_numel(b) && yg_tensor_dtype(a) == yg_tensor_dtype(b) &&
           memcmp(yg_tensor_data(a), yg_tensor_data(b),
                  (size_t)yg_tensor_numel(a) * yg_dtype_size(yg_tensor_dtype(a))) == 0;
}

static void test_same_seed_gives_same_values_and_another_seed_others(void **state)
{
    (void)state;
    for (int d = 0; d < N_DRAWS; d++) {
        yg_generator *g1 = NULL, *g2 = NULL, *g3 = NULL;
        yg_tensor *a = NULL, *b = NULL, *c = NULL, *a2 = NULL;
        YG_CHECK(yg_generator_create(11, &g1));
        YG_CHECK(yg_generator_create(11, &g2));
        YG_CHECK(yg_generator_create(12, &g3));
        YG_CHECK(draws[d](g1, &a));
        YG_CHECK(draws[d](g2, &b));
        YG_CHECK(draws[d](g3, &c));
        YG_CHECK(draws[d](g1, &a2));
        assert_true(same_values(a, b));
        assert_false(same_values(a, c));
        /* the second draw continues the stream rather than repeating it */
        assert_false(same_values(a, a2));
        yg_release(a);
        yg_release(b);
        yg_release(c);
        yg_release(a2);
        yg_generator_release(g1);
        yg_generator_release(g2);
        yg_generator_release(g3);
    }
}

static void test_values_do_not_depend_on_the_thread_count(void **state)
{
    int saved = omp_get_max_threads();
    (void)state;
    for (int d = 0; d < N_DRAWS; d++) {
        yg_tensor *one = NULL, *two = NULL;
        yg_generator *g = NULL;
        YG_CHECK(yg_generator_create(2024, &g));
        omp_set_num_threads(1);
        YG_CHECK(draws[d](g, &one));
        yg_generator_manual_seed(g, 2024);
        omp_set_num_threads(2);
        YG_CHECK(draws[d](g, &two));
        assert_true(same_values(one, two));
        yg_release(one);
        yg_release(two);
        yg_generator_release(g);
    }
    omp_set_num_threads(saved);
}

static void test_default_generator_follows_manual_seed(void **state)
{
    const int64_t s[] = {64};
    yg_generator *g = NULL;
    yg_tensor *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    (void)state;
    assert_non_null(yg_default_generator());
    yg_generator_release(yg_default_generator()); /* a no-op */
    yg_manual_seed(77);
    assert_int_equal(yg_generator_seed(NULL), 77);
    assert_int_equal(yg_generator_offset(NULL), 0);
    YG_CHECK(yg_randn(s, 1, NULL, NULL, NULL, &a));
    YG_CHECK(yg_randn(s, 1, NULL, NULL, NULL, &b));
    assert_false(same_values(a, b));
    yg_manual_seed(77);
    YG_CHECK(yg_randn(s, 1, yg_default_generator(), NULL, NULL, &c));
    assert_true(same_values(a, c));
    /* an explicit generator with that seed gives the same stream */
    YG_CHECK(yg_generator_create(77, &g));
    yg_generator_set_offset(g, 64);
    YG_CHECK(yg_randn(s, 1, g, NULL, NULL, &d));
    assert_true(same_values(b, d));
    yg_release(a);
    yg_release(b);
    yg_release(c);
    yg_release(d);
    yg_generator_release(g);
}

#define SHARE_DRAWS 50
#define SHARE_SIZE 10

typedef struct share {
    yg_generator *g;
    yg_tensor *parts[SHARE_DRAWS];
    yg_status st;
} share;

static void *draw_shared(void *arg)
{
    share *sh = arg;
    const int64_t s[] = {SHARE_SIZE};
    sh->st = YG_OK;
    for (int k = 0; k < SHARE_DRAWS && sh->st == YG_OK; k++)
        sh->st = yg_rand(s, 1, sh->g, &f64, NULL, &sh->parts[k]);
    return NULL;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_threads_sharing_a_generator_get_disjoint_counters(void **state)
{
    enum { TOTAL = 2 * SHARE_DRAWS * SHARE_SIZE };
    const int64_t all[] = {TOTAL};
    share sh[2] = {{0}};
    pthread_t th[2];
    yg_generator *g = NULL, *ref = NULL;
    yg_tensor *whole = NULL;
    double got[TOTAL];
    int n = 0;
    (void)state;
    YG_CHECK(yg_generator_create(31, &g));
    for (int t = 0; t < 2; t++) {
        sh[t].g = g;
        assert_int_equal(pthread_create(&th[t], NULL, draw_shared, &sh[t]), 0);
    }
    for (int t = 0; t < 2; t++)
        assert_int_equal(pthread_join(th[t], NULL), 0);
    for (int t = 0; t < 2; t++) {
        YG_CHECK(sh[t].st);
        for (int k = 0; k < SHARE_DRAWS; k++) {
            const double *v = yg_tensor_data(sh[t].parts[k]);
            for (int i = 0; i < SHARE_SIZE; i++)
                got[n++] = v[i];
            yg_release(sh[t].parts[k]);
        }
    }
    assert_int_equal(yg_generator_offset(g), TOTAL);
    /* together the draws used counters 0 .. TOTAL - 1, each once: the
     * values are those of one draw of TOTAL elements, in some order */
    YG_CHECK(yg_generator_create(31, &ref));
    YG_CHECK(yg_rand(all, 1, ref, &f64, NULL, &whole));
    double *want = yg_test_values(whole);
    qsort(got, TOTAL, sizeof got[0], compare_doubles);
    qsort(want, TOTAL, sizeof want[0], compare_doubles);
    for (int i = 0; i < TOTAL; i++)
        assert_true(got[i] == want[i]);
    free(want);
    yg_release(whole);
    yg_generator_release(ref);
    yg_generator_release(g);
}

/* Mean and (population) variance of t's values. */
static void moments(const yg_tensor *t, double *mean, double *var)
{
    double *v = yg_test_values(t), s = 0, ss = 0;
    int64_t n = yg_tensor_numel(t);
    for (int64_t i = 0; i < n; i++)
        s += v[i];
    *mean = s / (double)n;
    for (int64_t i = 0; i < n; i++)
        ss += (v[i] - *mean) * (v[i] - *mean);
    *var = ss / (double)n;
    free(v);
}

static void test_rand_and_randn_have_the_right_moments(void **state)
{
    const int64_t s[] = {100000};
    const yg_dtype dts[] = {YG_FLOAT32, YG_FLOAT64};
    yg_generator *g = NULL;
    double mean, var;
    (void)state;
    YG_CHECK(yg_generator_create(5, &g));
    for (int k = 0; k < 2; k++) {
        yg_tensor *u = NULL, *n = NULL;
        YG_CHECK(yg_rand(s, 1, g, &dts[k], NULL, &u));
        assert_int_equal(yg_tensor_dtype(u), dts[k]);
        double *v = yg_test_values(u);
        for (int64_t i = 0; i < s[0]; i++)
            assert_true(v[i] >= 0.0 && v[i] < 1.0);
        free(v);
        /* standard errors: mean 0.0009, variance about 0.0002 */
        moments(u, &mean, &var);
        assert_true(fabs(mean - 0.5) < 0.01);
        assert_true(fabs(var - 1.0 / 12.0) < 0.002);
        YG_CHECK(yg_randn(s, 1, g, &dts[k], NULL, &n));
        /* standard errors: mean 0.003, variance 0.0045 */
        moments(n, &mean, &var);
        assert_true(fabs(mean) < 0.02);
        assert_true(fabs(var - 1.0) < 0.03);
        v = yg_test_values(n);
        int64_t within1 = 0;
        for (int64_t i = 0; i < s[0]; i++) {
            assert_true(isfinite(v[i]));
            within1 += fabs(v[i]) < 1.0;
        }
        /* P(|z| < 1) = 0.6827 */
        assert_true(fabs((double)within1 / (double)s[0] - 0.6827) < 0.01);
        free(v);
        yg_release(u);
        yg_release(n);
    }
    yg_generator_release(g);
}

static void test_randint_covers_low_to_high_evenly(void **state)
{
    const int64_t s[] = {70000}, s0[] = {0};
    yg_generator *g = NULL;
    yg_tensor *t = NULL, *f = NULL;
    int64_t counts[7] = {0};
    (void)state;
    YG_CHECK(yg_generator_create(9, &g));
    YG_CHECK(yg_randint(-3, 4, s, 1, g, NULL, NULL, &t));
    assert_int_equal(yg_tensor_dtype(t), YG_INT64);
    const int64_t *v = yg_tensor_data(t);
    for (int64_t i = 0; i < s[0]; i++) {
        assert_true(v[i] >= -3 && v[i] < 4);
        counts[v[i] + 3]++;
    }
    /* 10000 expected per value, standard error 93 */
    for (int k = 0; k < 7; k++)
        assert_true(llabs(counts[k] - 10000) < 500);
    YG_CHECK(yg_randint(10, 12, s, 1, g, &f64, NULL, &f));
    assert_int_equal(yg_tensor_dtype(f), YG_FLOAT64);
    const double *fv = yg_tensor_data(f);
    for (int64_t i = 0; i < s[0]; i++)
        assert_true(fv[i] == 10.0 || fv[i] == 11.0);
    yg_release(f);
    /* one value possible, and an empty result */
    yg_release(t);
    YG_CHECK(yg_randint(5, 6, s, 1, g, NULL, NULL, &t));
    v = yg_tensor_data(t);
    for (int64_t i = 0; i < s[0]; i++)
        assert_true(v[i] == 5);
    yg_release(t);
    uint64_t before = yg_generator_offset(g);
    YG_CHECK(yg_randint(0, 2, s0, 1, g, NULL, NULL, &t));
    assert_int_equal(yg_tensor_numel(t), 0);
    assert_int_equal(yg_generator_offset(g), before);
    yg_release(t);
    yg_generator_release(g);
}

static void test_bernoulli_follows_its_probabilities(void **state)
{
    const int64_t s[] = {4, 20000};
    yg_generator *g = NULL;
    yg_tensor *p = NULL, *t = NULL, *x = NULL, *q = NULL;
    double pv[4 * 20000];
    const double probs[4] = {0.0, 0.25, 0.9, 1.0};
    (void)state;
    for (int r = 0; r < 4; r++)
        for (int i = 0; i < 20000; i++)
            pv[r * 20000 + i] = probs[r];
    p = yg_test_tensor(YG_FLOAT64, s, 2, pv);
    YG_CHECK(yg_generator_create(3, &g));
    YG_CHECK(yg_bernoulli(p, g, &t));
    assert_int_equal(yg_tensor_dtype(t), YG_FLOAT64);
    const double *v = yg_tensor_data(t);
    for (int r = 0; r < 4; r++) {
        double ones = 0;
        for (int i = 0; i < 20000; i++) {
            assert_true(v[r * 20000 + i] == 0.0 || v[r * 20000 + i] == 1.0);
            ones += v[r * 20000 + i];
        }
        /* exact at 0 and 1; standard error at most 0.0031 */
        if (probs[r] == 0.0 || probs[r] == 1.0)
            assert_true(ones == probs[r] * 20000);
        else
            assert_true(fabs(ones / 20000 - probs[r]) < 0.015);
    }
    yg_release(t);
    /* bernoulli.p keeps self's shape and dtype (any dtype) */
    YG_CHECK(yg_zeros(s, 2, &b8, NULL, &x));
    YG_CHECK(yg_bernoulli_p(x, 0.6, g, &q));
    assert_int_equal(yg_tensor_dtype(q), YG_BOOL);
    assert_int_equal(yg_tensor_numel(q), 80000);
    const bool *bv = yg_tensor_data(q);
    double ones = 0;
    for (int64_t i = 0; i < 80000; i++)
        ones += bv[i];
    assert_true(fabs(ones / 80000 - 0.6) < 0.01);
    yg_release(q);
    yg_release(x);
    yg_release(p);
    yg_generator_release(g);
}

static void test_rand_like_uses_self_shape_dtype_and_generator(void **state)
{
    const int64_t s[] = {3, 4};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 2, -1, 1, 1), *a = NULL, *b = NULL, *c = NULL;
    yg_generator *g1 = NULL, *g2 = NULL;
    (void)state;
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_generator_create(8, &g1));
    YG_CHECK(yg_generator_create(8, &g2));
    YG_CHECK(yg_rand_like(x, g1, NULL, NULL, &a));
    YG_CHECK(yg_rand(s, 2, g2, &f64, NULL, &b));
    assert_int_equal(yg_tensor_dtype(a), YG_FLOAT64);
    assert_false(yg_tensor_requires_grad(a));
    assert_true(same_values(a, b));
    YG_CHECK(yg_randn_like(x, g1, &f32, NULL, &c));
    assert_int_equal(yg_tensor_dtype(c), YG_FLOAT32);
    assert_int_equal(yg_tensor_size(c, 1), 4);
    yg_release(a);
    yg_release(b);
    yg_release(c);
    yg_release(x);
    yg_generator_release(g1);
    yg_generator_release(g2);
}

static void test_dropout_zeroes_and_scales(void **state)
{
    const int64_t s[] = {50000};
    yg_tensor *x = NULL, *y = NULL;
    yg_generator *g = NULL;
    (void)state;
    YG_CHECK(yg_full(s, 1, 2.0, &f64, NULL, &x));
    YG_CHECK(yg_generator_create(21, &g));
    YG_CHECK(yg_dropout(x, 0.25, true, g, &y));
    const double *v = yg_tensor_data(y);
    int64_t zeros = 0;
    for (int64_t i = 0; i < s[0]; i++) {
        assert_true(v[i] == 0.0 || fabs(v[i] - 2.0 / 0.75) < 1e-15);
        zeros += v[i] == 0.0;
    }
    /* standard error 0.0019 */
    assert_true(fabs((double)zeros / (double)s[0] - 0.25) < 0.01);
    yg_release(y);
    /* not training, or p 0: the values of x (a copy) */
    uint64_t before = yg_generator_offset(g);
    YG_CHECK(yg_dropout(x, 0.5, false, g, &y));
    assert_true(same_values(x, y));
    assert_ptr_not_equal(yg_tensor_data(x), yg_tensor_data(y));
    yg_release(y);
    YG_CHECK(yg_dropout(x, 0.0, true, g, &y));
    assert_true(same_values(x, y));
    yg_release(y);
    /* p 1: zeros */
    YG_CHECK(yg_dropout(x, 1.0, true, g, &y));
    v = yg_tensor_data(y);
    for (int64_t i = 0; i < s[0]; i++)
        assert_true(v[i] == 0.0);
    yg_release(y);
    assert_int_equal(yg_generator_offset(g), before);
    yg_release(x);
    yg_generator_release(g);
}

/* dropout(x, 0.4, train) with a generator seeded alike every call, so the
 * mask is the same each time. */
static yg_status seeded_dropout(const yg_tensor *x, yg_tensor **out)
{
    yg_generator *g = NULL;
    yg_status st = yg_generator_create(99, &g);
    if (st != YG_OK)
        return st;
    st = yg_dropout(x, 0.4, true, g, out);
    yg_generator_release(g);
    return st;
}

static void test_dropout_gradient_matches_finite_differences(void **state)
{
    const int64_t s[] = {3, 4};
    const double eps = 1e-6;
    yg_tensor *x = yg_test_rand(YG_FLOAT64, s, 2, -1, 1, 4), *v = NULL, *y = NULL, *g = NULL;
    (void)state;
    v = yg_test_rand(YG_FLOAT64, s, 2, -1, 1, 5);
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(seeded_dropout(x, &y));
    assert_true(yg_tensor_requires_grad(y));
    YG_CHECK(yg_backward(y, v, false));
    YG_CHECK(yg_tensor_grad(x, &g));
    double *gv = yg_test_values(g), *vv = yg_test_values(v), *xd = yg_tensor_data(x);
    int64_t dropped = 0;
    for (int64_t k = 0; k < 12; k++) {
        double orig = xd[k], l[2];
        for (int side = 0; side < 2; side++) {
            yg_tensor *yy = NULL;
            xd[k] = orig + (side == 0 ? eps : -eps);
            bool prev = yg_set_grad_enabled(false);
            YG_CHECK(seeded_dropout(x, &yy));
            yg_set_grad_enabled(prev);
            double *yv = yg_test_values(yy);
            l[side] = 0;
            for (int64_t i = 0; i < 12; i++)
                l[side] += yv[i] * vv[i];
            free(yv);
            yg_release(yy);
        }
        xd[k] = orig;
        double numeric = (l[0] - l[1]) / (2 * eps);
        assert_true(fabs(numeric - gv[k]) < 1e-6 + 1e-4 * fabs(numeric));
        /* each gradient is 0 (dropped) or v / (1 - p) (kept) */
        assert_true(gv[k] == 0.0 || fabs(gv[k] - vv[k] / 0.6) < 1e-12);
        dropped += gv[k] == 0.0;
    }
    assert_true(dropped > 0 && dropped < 12);
    free(gv);
    free(vv);
    yg_release(g);
    yg_release(y);
    yg_release(v);
    yg_release(x);
}

static void test_random_ops_reject_bad_arguments(void **state)
{
    const int64_t s[] = {2, 2}, neg[] = {-1};
    const double bad_p[] = {0.5, 1.5, 0.0, 0.2};
    yg_tensor *t = NULL, *p = NULL, *i = NULL;
    yg_generator *g = NULL;
    (void)state;
    YG_CHECK(yg_generator_create(1, &g));
    YG_EXPECT_ERROR(yg_rand(s, 2, g, &i64, NULL, &t), YG_ERR_DTYPE,
                    "rand: unsupported dtype int64 (expected float32 or float64)");
    assert_null(t);
    YG_EXPECT_ERROR(yg_randn(neg, 1, g, NULL, NULL, &t), YG_ERR_SHAPE,
                    "randn: negative size -1 in size [-1]");
    if (!yg_cuda_is_available()) /* randn has a CUDA kernel; without a GPU it says why */
        YG_EXPECT_ERROR(yg_randn(s, 2, g, NULL, &cuda, &t), YG_ERR_DEVICE, "randn: cuda: ");
    YG_EXPECT_ERROR(yg_randint(5, 5, s, 2, g, NULL, NULL, &t), YG_ERR_INVALID_ARGUMENT,
                    "randint: low 5 must be less than high 5");
    YG_EXPECT_ERROR(yg_randint(0, 2, s, 2, g, &b8, NULL, &t), YG_ERR_DTYPE,
                    "randint: unsupported dtype bool");
    p = yg_test_tensor(YG_FLOAT64, s, 2, bad_p);
    YG_EXPECT_ERROR(yg_bernoulli(p, g, &t), YG_ERR_INVALID_ARGUMENT,
                    "bernoulli: probability 1.5 at flat index 1 of self is outside [0, 1]");
    YG_EXPECT_ERROR(yg_bernoulli_p(p, -0.5, g, &t), YG_ERR_INVALID_ARGUMENT,
                    "bernoulli: p -0.5 is outside [0, 1]");
    YG_EXPECT_ERROR(yg_bernoulli_p(p, NAN, g, &t), YG_ERR_INVALID_ARGUMENT,
                    "bernoulli: p nan is outside [0, 1]");
    YG_CHECK(yg_ones(s, 2, &i64, NULL, &i));
    YG_EXPECT_ERROR(yg_bernoulli(i, g, &t), YG_ERR_DTYPE,
                    "bernoulli: unsupported dtype int64 for self");
    YG_EXPECT_ERROR(yg_dropout(p, 1.5, true, g, &t), YG_ERR_INVALID_ARGUMENT,
                    "dropout: p 1.5 is outside [0, 1]");
    YG_EXPECT_ERROR(yg_dropout(i, 0.5, true, g, &t), YG_ERR_DTYPE,
                    "dropout: unsupported dtype int64 for input");
    YG_EXPECT_ERROR(yg_rand_like(i, g, NULL, NULL, &t), YG_ERR_DTYPE,
                    "rand_like: rand: unsupported dtype int64");
    YG_EXPECT_ERROR(yg_dropout(NULL, 0.5, true, g, &t), YG_ERR_INVALID_ARGUMENT,
                    "dropout: input is undefined");
    assert_null(t);
    /* a failed call draws nothing */
    assert_int_equal(yg_generator_offset(g), 0);
    YG_EXPECT_ERROR(yg_generator_create(1, NULL), YG_ERR_INVALID_ARGUMENT,
                    "generator_create: out-parameter out is NULL");
    yg_release(p);
    yg_release(i);
    yg_generator_release(g);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_philox_matches_random123_known_answers),
        cmocka_unit_test(test_rand_is_the_documented_transform_of_counters),
        cmocka_unit_test(test_same_seed_gives_same_values_and_another_seed_others),
        cmocka_unit_test(test_values_do_not_depend_on_the_thread_count),
        cmocka_unit_test(test_default_generator_follows_manual_seed),
        cmocka_unit_test(test_threads_sharing_a_generator_get_disjoint_counters),
        cmocka_unit_test(test_rand_and_randn_have_the_right_moments),
        cmocka_unit_test(test_randint_covers_low_to_high_evenly),
        cmocka_unit_test(test_bernoulli_follows_its_probabilities),
        cmocka_unit_test(test_rand_like_uses_self_shape_dtype_and_generator),
        cmocka_unit_test(test_dropout_zeroes_and_scales),
        cmocka_unit_test(test_dropout_gradient_matches_finite_differences),
        cmocka_unit_test(test_random_ops_reject_bad_arguments),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
