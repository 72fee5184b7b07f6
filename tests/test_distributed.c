/*
 * test_distributed.c - the single-process parts of data parallelism: the
 * post-accumulate gradient hook the wrapper is built on, the distributed
 * sampler, and argument checks that need no peer.  The multi-rank tests
 * run under mpirun: tests/distributed/dist_tests.c.
 */
#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_sums.h"

#include <stdlib.h>
#include <string.h>

typedef struct hook_log {
    int calls;
    double grad_seen[4]; /* .grad when the hook ran */
    int order[4];
    int n_order;
} hook_log;

static yg_status record_grad(yg_tensor *leaf, void *ctx) {
    hook_log *log = ctx;
    yg_tensor *g = NULL;
    yg_status st = yg_tensor_grad(leaf, &g);
    if (st != YG_OK)
        return st;
    assert_non_null(g);
    assert_int_equal(yg_tensor_to_f64(g, log->grad_seen, yg_tensor_numel(g)), YG_OK);
    yg_release(g);
    log->calls++;
    return YG_OK;
}

static yg_status fail_hook(yg_tensor *leaf, void *ctx) {
    (void)leaf, (void)ctx;
    return yg_set_error(YG_ERR_IO, "my hook: peer gone");
}

/* y = sum(w * x), twice: the hook sees the gradient already added, the
 * second time the sum of both. */
static void test_post_accumulate_hook_sees_the_accumulated_grad(void **state) {
    int64_t s[1] = {2};
    yg_tensor *w = yg_test_tensor(YG_FLOAT64, s, 1, (double[]){1, 2});
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 1, (double[]){3, 4});
    hook_log log = {0};
    (void)state;

    YG_CHECK(yg_tensor_set_requires_grad(w, true));
    YG_CHECK(yg_tensor_register_post_accumulate_grad_hook(w, record_grad, &log));
    for (int it = 0; it < 2; it++) {
        yg_tensor *p = NULL, *y = NULL;
        YG_CHECK(yg_mul(w, x, &p));
        YG_CHECK(yg_sum(p, &y));
        YG_CHECK(yg_backward(y, NULL, false));
        assert_int_equal(log.calls, it + 1);
        assert_true(log.grad_seen[0] == 3.0 * (it + 1) && log.grad_seen[1] == 4.0 * (it + 1));
        yg_release(p);
        yg_release(y);
    }
    YG_CHECK(yg_tensor_remove_post_accumulate_grad_hook(w, record_grad, &log));
    yg_release(w);
    yg_release(x);
}

static void test_post_accumulate_hook_failure_stops_backward_with_its_message(void **state) {
    int64_t s[1] = {2};
    yg_tensor *w = yg_test_tensor(YG_FLOAT64, s, 1, (double[]){1, 2});
    yg_tensor *y = NULL;
    (void)state;

    YG_CHECK(yg_tensor_set_requires_grad(w, true));
    YG_CHECK(yg_tensor_register_post_accumulate_grad_hook(w, fail_hook, NULL));
    YG_CHECK(yg_sum(w, &y));
    YG_EXPECT_ERROR(
        yg_backward(y, NULL, false), YG_ERR_IO, "post-accumulate hook", "my hook: peer gone");
    yg_release(y);
    yg_release(w);
}

static void test_removed_post_accumulate_hook_no_longer_runs(void **state) {
    int64_t s[1] = {2};
    yg_tensor *w = yg_test_tensor(YG_FLOAT64, s, 1, (double[]){1, 2});
    yg_tensor *y = NULL;
    hook_log log = {0};
    (void)state;

    YG_CHECK(yg_tensor_set_requires_grad(w, true));
    YG_CHECK(yg_tensor_register_post_accumulate_grad_hook(w, record_grad, &log));
    YG_CHECK(yg_tensor_remove_post_accumulate_grad_hook(w, record_grad, &log));
    YG_EXPECT_ERROR(yg_tensor_remove_post_accumulate_grad_hook(w, record_grad, &log),
                    YG_ERR_INVALID_ARGUMENT,
                    "remove_post_accumulate_grad_hook",
                    "no such hook");
    YG_CHECK(yg_sum(w, &y));
    YG_CHECK(yg_backward(y, NULL, false));
    assert_int_equal(log.calls, 0);
    yg_release(y);
    yg_release(w);
}

static void test_post_accumulate_hook_rejects_non_leaves_and_plain_tensors(void **state) {
    int64_t s[1] = {2};
    yg_tensor *w = yg_test_tensor(YG_FLOAT64, s, 1, (double[]){1, 2});
    yg_tensor *plain = yg_test_tensor(YG_FLOAT64, s, 1, (double[]){1, 2});
    yg_tensor *y = NULL;
    (void)state;

    YG_CHECK(yg_tensor_set_requires_grad(w, true));
    YG_CHECK(yg_mul(w, w, &y));
    YG_EXPECT_ERROR(yg_tensor_register_post_accumulate_grad_hook(y, record_grad, NULL),
                    YG_ERR_AUTOGRAD,
                    "register_post_accumulate_grad_hook",
                    "non-leaf");
    YG_EXPECT_ERROR(yg_tensor_register_post_accumulate_grad_hook(plain, record_grad, NULL),
                    YG_ERR_AUTOGRAD,
                    "register_post_accumulate_grad_hook",
                    "without grad");
    YG_EXPECT_ERROR(yg_tensor_register_post_accumulate_grad_hook(w, NULL, NULL),
                    YG_ERR_INVALID_ARGUMENT,
                    "fn is NULL");
    YG_EXPECT_ERROR(yg_tensor_register_post_accumulate_grad_hook(NULL, record_grad, NULL),
                    YG_ERR_INVALID_ARGUMENT,
                    "register_post_accumulate_grad_hook");
    yg_release(y);
    yg_release(w);
    yg_release(plain);
}

/* ---- sampler ---- */

static void test_sampler_shards_cover_every_index_once_padded(void **state) {
    enum { N = 10, W = 3 };
    int64_t len = yg_distributed_sampler_len(N, W), idx[W][4];
    int seen[N] = {0};
    (void)state;

    assert_int_equal(len, 4);
    for (int r = 0; r < W; r++)
        YG_CHECK(yg_distributed_sampler_indices(N, W, r, 42, 0, true, idx[r], len));
    for (int r = 0; r < W; r++)
        for (int k = 0; k < len; k++) {
            assert_true(idx[r][k] >= 0 && idx[r][k] < N);
            seen[idx[r][k]]++;
        }
    /* 12 slots for 10 items: every item once, two wrapped around twice. */
    for (int i = 0; i < N; i++)
        assert_true(seen[i] == 1 || seen[i] == 2);
}

static void test_sampler_is_the_same_for_a_seed_and_changes_with_the_epoch(void **state) {
    int64_t a[50], b[50], c[50];
    (void)state;

    YG_CHECK(yg_distributed_sampler_indices(100, 2, 1, 7, 3, true, a, 50));
    YG_CHECK(yg_distributed_sampler_indices(100, 2, 1, 7, 3, true, b, 50));
    YG_CHECK(yg_distributed_sampler_indices(100, 2, 1, 7, 4, true, c, 50));
    assert_memory_equal(a, b, sizeof a);
    assert_memory_not_equal(a, c, sizeof a);
    YG_CHECK(yg_distributed_sampler_indices(100, 2, 1, 7, 3, false, a, 50));
    for (int k = 0; k < 50; k++)
        assert_int_equal(a[k], 1 + 2 * k);
}

static void test_sampler_rejects_bad_arguments_naming_the_values(void **state) {
    int64_t out[4];
    (void)state;

    YG_EXPECT_ERROR(yg_distributed_sampler_indices(10, 3, 3, 0, 0, true, out, 4),
                    YG_ERR_INVALID_ARGUMENT,
                    "distributed_sampler",
                    "rank 3");
    YG_EXPECT_ERROR(yg_distributed_sampler_indices(10, 3, 0, 0, 0, true, out, 3),
                    YG_ERR_INVALID_ARGUMENT,
                    "distributed_sampler",
                    "= 4 indices");
    YG_EXPECT_ERROR(yg_distributed_sampler_indices(0, 3, 0, 0, 0, true, out, 0),
                    YG_ERR_INVALID_ARGUMENT,
                    "n 0");
    assert_int_equal(yg_distributed_sampler_len(10, 0), 0);
}

/* ---- without peers ---- */

static void test_collectives_reject_a_null_group_and_bad_arguments(void **state) {
    yg_work *work = (yg_work *)1;
    (void)state;

    YG_EXPECT_ERROR(yg_process_group_barrier(NULL, &work),
                    YG_ERR_INVALID_ARGUMENT,
                    "barrier",
                    "process group is NULL");
    assert_null(work);
    YG_EXPECT_ERROR(yg_work_wait(NULL), YG_ERR_INVALID_ARGUMENT, "work_wait");
    yg_work_release(NULL);
    yg_process_group_release(NULL);
    assert_int_equal(yg_process_group_rank(NULL), 0);
    assert_int_equal(yg_process_group_world_size(NULL), 0);
    YG_EXPECT_ERROR(
        yg_ddp_create(NULL, NULL, 0, NULL, NULL), YG_ERR_INVALID_ARGUMENT, "ddp_create");
    YG_EXPECT_ERROR(yg_ddp_finish(NULL), YG_ERR_INVALID_ARGUMENT, "ddp_finish");
    yg_ddp_release(NULL);
}

static void test_process_group_says_when_built_without_mpi(void **state) {
    yg_process_group *pg = (yg_process_group *)1;
    (void)state;

    if (yg_distributed_is_available()) /* tests/distributed/ covers creation */
        yg_test_skip("built with MPI: tests/distributed/ checks creating a group");
    YG_EXPECT_ERROR(yg_process_group_create(NULL, &pg),
                    YG_ERR_NOT_IMPLEMENTED,
                    "process_group_create",
                    "built without MPI");
    assert_null(pg);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_post_accumulate_hook_sees_the_accumulated_grad),
        cmocka_unit_test(test_post_accumulate_hook_failure_stops_backward_with_its_message),
        cmocka_unit_test(test_removed_post_accumulate_hook_no_longer_runs),
        cmocka_unit_test(test_post_accumulate_hook_rejects_non_leaves_and_plain_tensors),
        cmocka_unit_test(test_sampler_shards_cover_every_index_once_padded),
        cmocka_unit_test(test_sampler_is_the_same_for_a_seed_and_changes_with_the_epoch),
        cmocka_unit_test(test_sampler_rejects_bad_arguments_naming_the_values),
        cmocka_unit_test(test_collectives_reject_a_null_group_and_bad_arguments),
        cmocka_unit_test(test_process_group_says_when_built_without_mpi),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
