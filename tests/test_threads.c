/*
 * test_threads.c - autograd under concurrency: grad mode is per thread,
 * threads run forward and backward over independent graphs at once, a
 * leaf shared by all of them accumulates every thread's gradient, and a
 * view made stale by an in-place write is regenerated safely when several
 * threads read it at once.  Run it under the tsan preset to check for data
 * races.
 */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */
#include <pthread.h>
#include <stdio.h>

#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_inplace_arithmetic.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_slicing.h"

#define THREADS 4
#define ITERS 50

typedef struct worker {
    yg_tensor *shared; /* leaf [3], requires grad, shared by all threads */
    int index;
    yg_status status;
    char message[256];
    bool grad_mode_seen_off;
} worker;

static void *run_worker(void *arg)
{
    worker *w = arg;
    const int64_t s[] = {3};
    double v[3] = {1, 2, 3};
    yg_tensor *own = NULL;

    /* Odd threads turn grad mode off: must not affect the others. */
    if (w->index % 2 == 1) {
        yg_set_grad_enabled(false);
        yg_set_grad_enabled(true);
    }
    w->status = yg_tensor_from_data(v, s, 1, YG_FLOAT64, &own);
    if (w->status == YG_OK)
        w->status = yg_tensor_set_requires_grad(own, true);
    for (int i = 0; i < ITERS && w->status == YG_OK; i++) {
        yg_tensor *p = NULL, *q = NULL, *loss = NULL;
        /* loss = sum(shared * own) + sum(own): d/dshared = own = [1,2,3] */
        w->status = yg_mul(w->shared, own, &p);
        if (w->status == YG_OK)
            w->status = yg_add(p, own, 1.0, &q);
        if (w->status == YG_OK)
            w->status = yg_sum(q, &loss);
        if (w->status == YG_OK)
            w->status = yg_backward(loss, NULL, false);
        yg_release(loss);
        yg_release(q);
        yg_release(p);
    }
    if (w->status != YG_OK)
        snprintf(w->message, sizeof w->message, "%s", yg_last_error());
    yg_release(own);
    return NULL;
}

static void test_threads_share_a_leaf_and_accumulate_every_gradient(void **state)
{
    const int64_t s[] = {3};
    const double sv[] = {0.5, 0.5, 0.5};
    const double expected[] = {THREADS * ITERS * 1.0, THREADS * ITERS * 2.0, THREADS * ITERS * 3.0};
    yg_tensor *shared = yg_test_tensor(YG_FLOAT64, s, 1, sv), *g = NULL;
    pthread_t tid[THREADS];
    worker w[THREADS];
    (void)state;
    YG_CHECK(yg_tensor_set_requires_grad(shared, true));
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){.shared = shared, .index = i, .status = YG_OK};
        assert_int_equal(pthread_create(&tid[i], NULL, run_worker, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(tid[i], NULL);
        if (w[i].status != YG_OK)
            print_error("thread %d failed: %s\n", i, w[i].message);
        assert_int_equal(w[i].status, YG_OK);
    }
    YG_CHECK(yg_tensor_grad(shared, &g));
    YG_EXPECT_CLOSE(g, s, 1, expected, 1e-9, 0);
    yg_release(g);
    yg_release(shared);
}

typedef struct view_reader {
    yg_tensor *view; /* a view of a non-leaf base, stale when the thread starts */
    pthread_barrier_t *start; /* all readers start reading together */
    yg_status status;
    char message[256];
} view_reader;

/* loss = sum(view * view); backward.  The first read of the view in any
 * thread regenerates its history; the others must see the new one. */
static void *read_stale_view(void *arg)
{
    view_reader *r = arg;
    yg_tensor *sq = NULL, *loss = NULL;
    pthread_barrier_wait(r->start);
    r->status = yg_mul(r->view, r->view, &sq);
    if (r->status == YG_OK)
        r->status = yg_sum(sq, &loss);
    if (r->status == YG_OK)
        r->status = yg_backward(loss, NULL, true);
    if (r->status != YG_OK)
        snprintf(r->message, sizeof r->message, "%s", yg_last_error());
    yg_release(loss);
    yg_release(sq);
    return NULL;
}

static void test_threads_read_a_stale_view_at_once(void **state)
{
    /* x = ones [2, 3]; b = x * 1; v2 = columns 0-1 of b.  Each round
     * doubles row 0 through another view (v2 goes stale), then THREADS
     * threads read v2 at once.  After round r row 0 of v2 is c x with
     * c = 2^(r+1), so each thread adds 2 c^2 on row 0 of columns 0-1 and
     * 2 on row 1. */
    enum { ROUNDS = 8 };
    const int64_t s[] = {2, 3};
    const double ones[] = {1, 1, 1, 1, 1, 1};
    double expected[6] = {0};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 2, ones), *b = NULL, *v1 = NULL, *v2 = NULL;
    yg_tensor *g = NULL;
    pthread_t tid[THREADS];
    pthread_barrier_t start;
    view_reader r[THREADS];
    (void)state;
    assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_mul_scalar(x, 1.0, &b));
    YG_CHECK(yg_select(b, 0, 0, &v1));
    YG_CHECK(yg_slice(b, 1, 0, 2, 1, &v2));
    for (int round = 0; round < ROUNDS; round++) {
        yg_tensor *same = NULL;
        double c = (double)(2 << round);
        YG_CHECK(yg_mul_scalar_(v1, 2.0, &same));
        yg_release(same);
        for (int i = 0; i < THREADS; i++) {
            r[i] = (view_reader){.view = v2, .start = &start, .status = YG_OK};
            assert_int_equal(pthread_create(&tid[i], NULL, read_stale_view, &r[i]), 0);
        }
        for (int i = 0; i < THREADS; i++) {
            pthread_join(tid[i], NULL);
            if (r[i].status != YG_OK)
                print_error("thread %d failed: %s\n", i, r[i].message);
            assert_int_equal(r[i].status, YG_OK);
        }
        expected[0] += THREADS * 2 * c * c;
        expected[1] += THREADS * 2 * c * c;
        expected[3] += THREADS * 2.0;
        expected[4] += THREADS * 2.0;
    }
    YG_CHECK(yg_tensor_grad(x, &g));
    YG_EXPECT_CLOSE(g, s, 2, expected, 1e-9, 0);
    pthread_barrier_destroy(&start);
    yg_release(g);
    yg_release(v2);
    yg_release(v1);
    yg_release(b);
    yg_release(x);
}

static void *turn_grad_off(void *arg)
{
    bool *seen_on_after = arg;
    yg_set_grad_enabled(false);
    *seen_on_after = yg_is_grad_enabled();
    return NULL;
}

static void test_grad_mode_is_per_thread(void **state)
{
    pthread_t t;
    bool other = true;
    (void)state;
    assert_int_equal(pthread_create(&t, NULL, turn_grad_off, &other), 0);
    pthread_join(t, NULL);
    assert_false(other);
    assert_true(yg_is_grad_enabled());
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_share_a_leaf_and_accumulate_every_gradient),
        cmocka_unit_test(test_threads_read_a_stale_view_at_once),
        cmocka_unit_test(test_grad_mode_is_per_thread),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
