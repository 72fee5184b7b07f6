/*
 * test_distributed_nccl.c - process groups over NCCL (yagrad/distributed.h,
 * backend YG_DIST_NCCL).
 *
 * Four tests run everywhere: what creating an NCCL group says where it
 * cannot be made (built without MPI or NCCL, or no CUDA device), the
 * refusal of an unknown backend, the device refusals of the argument
 * checks both backends share, and yg_ddp_create's refusal of parameters
 * on two devices or on one the group does not take (on cpu tensors whose
 * storage is marked cuda:N for the calls, as test_cuda.c does: the
 * checks read no data; through an MPI group of one rank, this process
 * as MPI's singleton, where the build has MPI).  The others make a
 * one-rank NCCL group and need a GPU and an NCCL build; without them
 * they print "skipped: no CUDA device ..." or "skipped: built without
 * NCCL" and exit 77, which CTest reports as skipped (YG_REQUIRE_GPU=1: a
 * failure), never
 * passed.  All are labelled `cuda`.
 */
#include "core/core.h"
#include "distributed/dist_int.h"
#include "testutil.h"
#include "yagrad/cuda.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_creation.h"
#include "yagrad/ops_dtype_conversion.h"
#include "yagrad/ops_inplace_arithmetic.h"
#include "yagrad/ops_inplace_fill.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_slicing.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_trigonometric.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Skips the calling test unless an NCCL group can be made, saying why. */
static void need_nccl(void) {
    if (!yg_distributed_nccl_is_available())
        yg_test_skip("built without NCCL");
    yg_test_need_gpu();
}

static yg_process_group *nccl_group(void) {
    yg_process_group_options o = {0};
    yg_process_group *pg = NULL;
    o.backend = YG_DIST_NCCL;
    YG_CHECK(yg_process_group_create(&o, &pg));
    assert_non_null(pg);
    return pg;
}

/* values as dtype on cuda:0. */
static yg_tensor *
device_tensor(yg_dtype dtype, const int64_t *sizes, int64_t ndim, const double *values) {
    yg_tensor *h = yg_test_tensor(YG_FLOAT64, sizes, ndim, values), *c = NULL, *d = NULL;
    YG_CHECK(yg_to_dtype(h, dtype, true, &c));
    YG_CHECK(yg_tensor_to_device(c, YG_CUDA, 0, &d));
    yg_release(h);
    yg_release(c);
    return d;
}

/* Asserts that device tensor d holds values (exactly: every value used
 * here is exact in every dtype). */
static void
expect_values(const yg_tensor *d, const int64_t *sizes, int64_t ndim, const double *values) {
    yg_tensor *h = NULL;
    YG_CHECK(yg_tensor_to_device(d, YG_CPU, 0, &h));
    YG_EXPECT_CLOSE(h, sizes, ndim, values, 0, 0);
    yg_release(h);
}

/* ---- everywhere ---- */

static void test_nccl_group_creation_says_why_it_cannot_run(void **state) {
    yg_process_group_options o = {0};
    yg_process_group *pg = (yg_process_group *)1;
    (void)state;

    o.backend = YG_DIST_NCCL;
    if (!yg_distributed_is_available() || !yg_distributed_nccl_is_available()) {
        assert_false(yg_distributed_nccl_is_available());
        YG_EXPECT_ERROR(yg_process_group_create(&o, &pg),
                        YG_ERR_NOT_IMPLEMENTED,
                        "process_group_create: ",
                        "built without NCCL");
        assert_null(pg);
        printf("this build has no NCCL: %s\n", yg_last_error());
        return;
    }
    if (yg_cuda_check() == YG_OK) {
        printf("a device is usable here: the one-rank tests create NCCL groups\n");
        return;
    }
    /* Refused before MPI starts: nothing to release. */
    YG_EXPECT_ERROR(yg_process_group_create(&o, &pg),
                    YG_ERR_DEVICE,
                    "process_group_create: ",
                    "no CUDA device");
    assert_null(pg);
    printf("no device here: %s\n", yg_last_error());
}

static void test_unknown_backend_is_refused(void **state) {
    yg_process_group_options o = {0};
    yg_process_group *pg = (yg_process_group *)1;
    (void)state;

    o.backend = (yg_dist_backend)7;
    if (!yg_distributed_is_available()) {
        YG_EXPECT_ERROR(
            yg_process_group_create(&o, &pg), YG_ERR_NOT_IMPLEMENTED, "built without MPI");
    } else {
        YG_EXPECT_ERROR(yg_process_group_create(&o, &pg),
                        YG_ERR_INVALID_ARGUMENT,
                        "process_group_create: unknown backend 7");
    }
    assert_null(pg);
    assert_int_equal(yg_process_group_backend(NULL), YG_DIST_MPI);
    assert_int_equal(yg_process_group_cuda_device(NULL), -1);
}

/* The checks every collective of each backend runs first, on a cpu
 * tensor marked as a CUDA one for the calls (nothing reads its data). */
static void test_checks_refuse_tensors_of_the_other_device_naming_both(void **state) {
    const int64_t s[] = {2, 3}, st[] = {3, 2}, tst[] = {1, 3};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, s, 2, -1, 1, 5), *t = NULL;
    (void)state;

    YG_CHECK(yg__dist_check_tensor("all_reduce", "tensor", x));
    YG_EXPECT_ERROR(
        yg__dist_check_cuda_tensor("all_reduce", "tensor", x, 0),
        YG_ERR_DEVICE,
        "all_reduce: tensor is on cpu but this NCCL process group takes tensors on cuda:0");
    x->storage->device = YG_CUDA;
    x->storage->device_index = 1;
    YG_EXPECT_ERROR(yg__dist_check_tensor("broadcast", "tensor", x),
                    YG_ERR_DEVICE,
                    "broadcast: tensor is on cuda:1 but this MPI process group takes cpu tensors",
                    "YG_DIST_NCCL");
    YG_EXPECT_ERROR(
        yg__dist_check_cuda_tensor("all_gather", "output", x, 0),
        YG_ERR_DEVICE,
        "all_gather: output is on cuda:1 but this NCCL process group takes tensors on cuda:0");
    YG_CHECK(yg__dist_check_cuda_tensor("all_gather", "output", x, 1));
    YG_CHECK(yg__tensor_view("test", x, st, tst, 2, 0, &t)); /* the transpose */
    /* Any layout: a non-contiguous tensor goes through a contiguous copy. */
    YG_CHECK(yg__dist_check_cuda_tensor("reduce_scatter", "input", t, 1));
    x->storage->device = YG_CPU;
    x->storage->device_index = 0;
    yg_release(t);
    yg_release(x);
}

/* Marks t's storage as device memory of cuda:index (or the CPU again,
 * index -1) for checks that read no data. */
static void mark(yg_tensor *t, int index) {
    t->storage->device = index < 0 ? YG_CPU : YG_CUDA;
    t->storage->device_index = index < 0 ? 0 : index;
}

/* yg_ddp_create refuses parameters on two devices, or on a device the
 * group's backend does not take, naming the parameter and both devices:
 * the check itself for both backends (an NCCL group cannot be made
 * without a GPU), then through an MPI group of one rank, where the
 * refusal comes back after the ranks' count exchange. */
static void test_ddp_refuses_parameters_on_two_devices_or_the_wrong_one(void **state) {
    const int64_t s[] = {2, 3};
    yg_tensor *a = yg_test_rand(YG_FLOAT32, s, 2, -1, 1, 7);
    yg_tensor *b = yg_test_rand(YG_FLOAT32, s, 2, -1, 1, 8);
    yg_tensor *c = yg_test_rand(YG_FLOAT32, s, 2, -1, 1, 9);
    yg_process_group *mpi = NULL;
    yg_ddp *ddp = (yg_ddp *)1;
    (void)state;

    YG_CHECK(yg_tensor_set_requires_grad(a, true));
    YG_CHECK(yg_tensor_set_requires_grad(b, true));
    mark(b, 0);
    mark(c, 1);
    YG_EXPECT_ERROR(
        yg__ddp_check_device(0, a, a, YG_DIST_NCCL, 0),
        YG_ERR_DEVICE,
        "ddp_create: parameter 0 is on cpu but this NCCL process group takes tensors on cuda:0");
    YG_EXPECT_ERROR(
        yg__ddp_check_device(0, c, c, YG_DIST_NCCL, 0),
        YG_ERR_DEVICE,
        "ddp_create: parameter 0 is on cuda:1 but this NCCL process group takes tensors on cuda:0");
    YG_EXPECT_ERROR(yg__ddp_check_device(1, a, b, YG_DIST_NCCL, 0),
                    YG_ERR_DEVICE,
                    "ddp_create: parameter 1 is on cpu but parameter 0 is on cuda:0",
                    "every parameter must be on one device");
    YG_EXPECT_ERROR(yg__ddp_check_device(2, c, b, YG_DIST_NCCL, 0),
                    YG_ERR_DEVICE,
                    "ddp_create: parameter 2 is on cuda:1 but parameter 0 is on cuda:0");
    YG_EXPECT_ERROR(
        yg__ddp_check_device(0, b, b, YG_DIST_MPI, -1),
        YG_ERR_DEVICE,
        "ddp_create: parameter 0 is on cuda:0 but this MPI process group takes cpu tensors");
    YG_EXPECT_ERROR(yg__ddp_check_device(1, b, a, YG_DIST_MPI, -1),
                    YG_ERR_DEVICE,
                    "ddp_create: parameter 1 is on cuda:0 but parameter 0 is on cpu");
    YG_CHECK(yg__ddp_check_device(1, b, b, YG_DIST_NCCL, 0));
    YG_CHECK(yg__ddp_check_device(1, a, a, YG_DIST_MPI, -1));

    if (yg_distributed_is_available()) {
        yg_tensor *mixed[2] = {a, b}, *gpu[1] = {b};
        YG_CHECK(yg_process_group_create(NULL, &mpi));
        YG_EXPECT_ERROR(yg_ddp_create(mpi, mixed, 2, NULL, &ddp),
                        YG_ERR_DEVICE,
                        "ddp_create: parameter 1 is on cuda:0 but parameter 0 is on cpu");
        assert_null(ddp);
        ddp = (yg_ddp *)1;
        YG_EXPECT_ERROR(
            yg_ddp_create(mpi, gpu, 1, NULL, &ddp),
            YG_ERR_DEVICE,
            "ddp_create: parameter 0 is on cuda:0 but this MPI process group takes cpu tensors");
        assert_null(ddp);
        /* The group is still usable: cpu parameters are taken. */
        YG_CHECK(yg_ddp_create(mpi, &a, 1, NULL, &ddp));
        assert_int_equal(yg_ddp_bucket_count(ddp), 1);
        yg_ddp_release(ddp);
        yg_process_group_release(mpi);
    } else {
        printf("this build has no MPI: only the check itself ran\n");
    }
    mark(b, -1);
    mark(c, -1);
    yg_release(a);
    yg_release(b);
    yg_release(c);
}

/* ---- on a GPU ---- */

static void test_one_rank_group_all_reduces_sum_avg_and_max(void **state) {
    static const yg_dtype dts[] = {
        YG_FLOAT32, YG_FLOAT64, YG_INT64, YG_INT32, YG_BOOL, YG_FLOAT16, YG_BFLOAT16};
    const int64_t s[] = {2, 3};
    const double v[] = {1, -2, 3.5, 0, 7, -0.25}, vi[] = {1, -2, 3, 0, 7, -4},
                 vb[] = {1, 0, 1, 0, 0, 1};
    yg_process_group *pg;
    (void)state;

    need_nccl();
    pg = nccl_group();
    assert_int_equal(yg_process_group_backend(pg), YG_DIST_NCCL);
    assert_int_equal(yg_process_group_cuda_device(pg), 0);
    assert_int_equal(yg_process_group_rank(pg), 0);
    assert_int_equal(yg_process_group_world_size(pg), 1);
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
        bool floating = dts[k] != YG_INT64 && dts[k] != YG_INT32 && dts[k] != YG_BOOL;
        const double *want = dts[k] == YG_BOOL ? vb : floating ? v : vi;
        for (int op = YG_REDUCE_SUM; op <= YG_REDUCE_MAX; op++) {
            yg_tensor *d = device_tensor(dts[k], s, 2, want);
            if (op == YG_REDUCE_AVG && !floating) {
                YG_EXPECT_ERROR(yg_process_group_all_reduce(pg, d, YG_REDUCE_AVG, NULL),
                                YG_ERR_DTYPE,
                                "all_reduce: avg needs a floating dtype");
            } else {
                YG_CHECK(yg_process_group_all_reduce(pg, d, (yg_reduce_op)op, NULL));
                expect_values(d, s, 2, want); /* one rank: the reduction of one value */
            }
            yg_release(d);
        }
    }
    yg_process_group_release(pg);
}

static void test_one_rank_group_broadcasts_gathers_scatters_and_waits(void **state) {
    const int64_t s[] = {4}, s2[] = {1, 4};
    const double v[] = {1, 2, 3, 4}, zero[] = {0, 0, 0, 0};
    yg_process_group *pg;
    yg_tensor *x, *out, *small;
    yg_work *work = NULL;
    bool done = false;
    (void)state;

    need_nccl();
    pg = nccl_group();
    x = device_tensor(YG_FLOAT32, s, 1, v);
    YG_CHECK(yg_process_group_broadcast(pg, x, 0, NULL));
    expect_values(x, s, 1, v);
    YG_EXPECT_ERROR(yg_process_group_broadcast(pg, x, 1, NULL),
                    YG_ERR_INDEX,
                    "broadcast: root 1 out of range for world size 1");

    out = device_tensor(YG_FLOAT32, s2, 2, zero);
    YG_CHECK(yg_process_group_all_gather(pg, x, out, NULL));
    expect_values(out, s2, 2, v);
    yg_release(out);
    out = device_tensor(YG_FLOAT32, s, 1, zero);
    YG_CHECK(yg_process_group_reduce_scatter(pg, x, out, YG_REDUCE_SUM, NULL));
    expect_values(out, s, 1, v);
    small = device_tensor(YG_FLOAT32, s2, 1, zero); /* 1 element */
    YG_EXPECT_ERROR(yg_process_group_all_gather(pg, x, small, NULL),
                    YG_ERR_SHAPE,
                    "all_gather: output [1] must have world size (1) times the elements of input "
                    "[4]");
    yg_release(small);

    /* Non-blocking: test until done, then wait returns the same. */
    YG_CHECK(yg_process_group_all_reduce(pg, out, YG_REDUCE_MAX, &work));
    assert_non_null(work);
    while (!done)
        YG_CHECK(yg_work_test(work, &done));
    YG_CHECK(yg_work_wait(work));
    yg_work_release(work);
    expect_values(out, s, 1, v);
    YG_CHECK(yg_process_group_barrier(pg, &work));
    YG_CHECK(yg_work_wait(work));
    yg_work_release(work);
    YG_CHECK(yg_process_group_barrier(pg, NULL));
    /* Released unfinished: waits for it before freeing. */
    YG_CHECK(yg_process_group_all_reduce(pg, x, YG_REDUCE_SUM, &work));
    yg_work_release(work);
    yg_release(out);
    yg_release(x);
    yg_process_group_release(pg);
}

/* Through the public entry points with real device tensors: an NCCL
 * group refuses cpu tensors (and takes non-contiguous ones), an MPI group
 * CUDA ones, and ddp over an NCCL group refuses cpu parameters and
 * parameters on two devices. */
static void test_groups_refuse_tensors_of_the_other_device(void **state) {
    const int64_t s[] = {2, 3}, st[] = {3, 2}, tst[] = {1, 3};
    const double v[] = {1, 2, 3, 4, 5, 6};
    yg_process_group *nccl, *mpi = NULL;
    yg_tensor *h = yg_test_tensor(YG_FLOAT32, s, 2, v), *d, *t = NULL;
    yg_tensor *hp = yg_test_tensor(YG_FLOAT32, s, 2, v), *dp, *mixed[2];
    yg_ddp *ddp = (yg_ddp *)1;
    yg_work *work = (yg_work *)1;
    (void)state;

    need_nccl();
    nccl = nccl_group();
    d = device_tensor(YG_FLOAT32, s, 2, v);
    dp = device_tensor(YG_FLOAT32, s, 2, v);
    YG_CHECK(yg_tensor_set_requires_grad(hp, true));
    YG_CHECK(yg_tensor_set_requires_grad(dp, true));
    YG_EXPECT_ERROR(
        yg_process_group_all_reduce(nccl, h, YG_REDUCE_SUM, &work),
        YG_ERR_DEVICE,
        "all_reduce: tensor is on cpu but this NCCL process group takes tensors on cuda:0");
    assert_null(work);
    YG_EXPECT_ERROR(yg_process_group_all_gather(nccl, d, h, NULL),
                    YG_ERR_DEVICE,
                    "all_gather: output is on cpu but this NCCL process group");
    YG_CHECK(yg__tensor_view("test", d, st, tst, 2, 0, &t)); /* the transpose, kernel-free */
    /* through a contiguous copy */
    YG_CHECK(yg_process_group_broadcast(nccl, t, 0, NULL));
    expect_values(d, s, 2, v);
    YG_EXPECT_ERROR(
        yg_ddp_create(nccl, &hp, 1, NULL, &ddp),
        YG_ERR_DEVICE,
        "ddp_create: parameter 0 is on cpu but this NCCL process group takes tensors on cuda:0");
    assert_null(ddp);
    mixed[0] = dp;
    mixed[1] = hp;
    YG_EXPECT_ERROR(yg_ddp_create(nccl, mixed, 2, NULL, &ddp),
                    YG_ERR_DEVICE,
                    "ddp_create: parameter 1 is on cpu but parameter 0 is on cuda:0");
    assert_null(ddp);

    YG_CHECK(yg_process_group_create(NULL, &mpi));
    assert_int_equal(yg_process_group_backend(mpi), YG_DIST_MPI);
    assert_int_equal(yg_process_group_cuda_device(mpi), -1);
    YG_EXPECT_ERROR(yg_process_group_all_reduce(mpi, d, YG_REDUCE_SUM, NULL),
                    YG_ERR_DEVICE,
                    "all_reduce: tensor is on cuda:0 but this MPI process group takes cpu tensors");
    /* Both groups still work after the refusals. */
    YG_CHECK(yg_process_group_all_reduce(mpi, h, YG_REDUCE_SUM, NULL));
    YG_CHECK(yg_process_group_all_reduce(nccl, d, YG_REDUCE_SUM, NULL));
    expect_values(d, s, 2, v);
    YG_EXPECT_ERROR(yg_ddp_create(mpi, &dp, 1, NULL, &ddp),
                    YG_ERR_DEVICE,
                    "ddp_create: parameter 0 is on cuda:0 but this MPI process group takes cpu "
                    "tensors");
    assert_null(ddp);
    yg_process_group_release(mpi);
    yg_release(t);
    yg_release(d);
    yg_release(h);
    yg_release(dp);
    yg_release(hp);
    yg_process_group_release(nccl);
}

/* Non-contiguous device tensors go through a contiguous copy that is
 * reduced and copied back.  On one rank a reduction is the identity, so
 * the copy back shows in all_gather and reduce_scatter into transposed
 * outputs (the gathered values land transposed in the output's storage),
 * and the all-reduce of every other column must leave the columns
 * between untouched. */
static void test_one_rank_group_reduces_non_contiguous_tensors_through_a_copy(void **state) {
    const int64_t s24[] = {2, 4}, s23[] = {2, 3}, s32[] = {3, 2};
    /* columns 0 and 2 of a [2, 4]; the transpose of a [3, 2] (sizes
     * [2, 3]) and of a [2, 3] (sizes [3, 2]) */
    const int64_t cols[] = {2, 2}, cols_st[] = {4, 2}, of32[] = {1, 2}, of23[] = {1, 3};
    const double v8[] = {0, 1, 2, 3, 4, 5, 6, 7}, v6[] = {1, 2, 3, 4, 5, 6};
    const double zero6[] = {0, 0, 0, 0, 0, 0}, tr6[] = {1, 4, 2, 5, 3, 6};
    yg_process_group *pg;
    yg_tensor *base, *view = NULL, *in, *out_base, *out = NULL, *in_t = NULL;
    yg_work *work = NULL;
    bool done = false;
    (void)state;

    need_nccl();
    pg = nccl_group();

    /* all_reduce (sum, then avg through a work handle) of columns 0 and 2 */
    base = device_tensor(YG_FLOAT32, s24, 2, v8);
    YG_CHECK(yg__tensor_view("test", base, cols, cols_st, 2, 0, &view));
    assert_false(yg_tensor_is_contiguous(view));
    YG_CHECK(yg_process_group_all_reduce(pg, view, YG_REDUCE_SUM, NULL));
    expect_values(base, s24, 2, v8);
    YG_CHECK(yg_process_group_all_reduce(pg, view, YG_REDUCE_AVG, &work));
    while (!done)
        YG_CHECK(yg_work_test(work, &done));
    YG_CHECK(yg_work_wait(work)); /* the copy back happened once; again is the same */
    yg_work_release(work);
    expect_values(base, s24, 2, v8);
    yg_release(view);
    yg_release(base);

    /* all_gather of [2, 3] into a transposed view of a [3, 2] */
    in = device_tensor(YG_FLOAT32, s23, 2, v6);
    out_base = device_tensor(YG_FLOAT32, s32, 2, zero6);
    YG_CHECK(yg__tensor_view("test", out_base, s23, of32, 2, 0, &out));
    YG_CHECK(yg_process_group_all_gather(pg, in, out, &work));
    YG_CHECK(yg_work_wait(work));
    yg_work_release(work);
    expect_values(out_base, s32, 2, tr6);
    expect_values(out, s23, 2, v6);
    yg_release(out);
    yg_release(out_base);

    /* reduce_scatter of a transposed input into a transposed output */
    YG_CHECK(yg__tensor_view("test", in, s32, of23, 2, 0, &in_t)); /* [[1,4],[2,5],[3,6]] */
    out_base = device_tensor(YG_FLOAT32, s23, 2, zero6);
    YG_CHECK(yg__tensor_view("test", out_base, s32, of23, 2, 0, &out));
    YG_CHECK(yg_process_group_reduce_scatter(pg, in_t, out, YG_REDUCE_SUM, NULL));
    expect_values(out_base, s23, 2, v6);

    /* broadcast of a non-contiguous tensor, and one released unwaited (no
     * copy back, but no harm: it waits for NCCL before freeing) */
    YG_CHECK(yg_process_group_broadcast(pg, in_t, 0, NULL));
    expect_values(in, s23, 2, v6);
    YG_CHECK(yg_process_group_all_reduce(pg, out, YG_REDUCE_MAX, &work));
    yg_work_release(work);
    expect_values(out_base, s23, 2, v6);
    yg_release(out);
    yg_release(out_base);
    yg_release(in_t);
    yg_release(in);
    yg_process_group_release(pg);
}

/* Collectives follow the calling thread's current stream: an input filled
 * by a kernel on a stream of the test's own is gathered after the fill,
 * and a kernel queued on that stream after the wait sees the result. */
static void test_one_rank_group_orders_collectives_on_the_current_stream(void **state) {
    const int64_t n[] = {1 << 20};
    const yg_dtype f32 = YG_FLOAT32;
    const yg_device cuda = YG_CUDA;
    yg_process_group *pg;
    yg_cuda_stream *stream = NULL;
    yg_tensor *x = NULL, *out = NULL, *same = NULL;
    yg_work *work = NULL;
    double first = 0, last = 0;
    (void)state;

    need_nccl();
    pg = nccl_group();
    YG_CHECK(yg_cuda_stream_create(0, &stream));
    YG_CHECK(yg_cuda_set_stream(0, stream));
    YG_CHECK(yg_zeros(n, 1, &f32, &cuda, &x));
    YG_CHECK(yg_zeros(n, 1, &f32, &cuda, &out));
    for (int round = 1; round <= 3; round++) {
        YG_CHECK(yg_fill_(x, 1.5 * round, &same)); /* queued on the stream */
        yg_release(same);
        YG_CHECK(yg_process_group_all_gather(pg, x, out, &work));
        YG_CHECK(yg_work_wait(work));
        yg_work_release(work);
        YG_CHECK(yg_mul_scalar_(out, 2.0, &same)); /* after the wait, on the stream */
        yg_release(same);
        {
            yg_tensor *e = NULL;
            YG_CHECK(yg_select(out, 0, 0, &e));
            YG_CHECK(yg_tensor_item(e, &first));
            yg_release(e);
            YG_CHECK(yg_select(out, 0, n[0] - 1, &e));
            YG_CHECK(yg_tensor_item(e, &last));
            yg_release(e);
        }
        assert_true(first == 3.0 * round && last == 3.0 * round);
    }
    yg_release(x); /* made for the stream: released before it goes */
    yg_release(out);
    YG_CHECK(yg_cuda_set_stream(0, NULL));
    yg_cuda_stream_destroy(stream);
    yg_process_group_release(pg);
}

/* ---- yg_ddp over NCCL ---- */

enum { NB = 6, NIN = 4, NHID = 8, NOUT = 3, NSTEPS = 6 };

/* w1 [4, 8], b1 [8], w2 [8, 3], b2 [3], unused [3, 3]: float64 leaves on
 * cuda:0 with the same values for every seed. */
static void cuda_model(yg_tensor **p) {
    const int64_t shapes[5][2] = {{NIN, NHID}, {NHID, 0}, {NHID, NOUT}, {NOUT, 0}, {3, 3}};
    for (int k = 0; k < 5; k++) {
        int64_t ndim = shapes[k][1] ? 2 : 1, n = shapes[k][0] * (ndim == 2 ? shapes[k][1] : 1);
        double v[64];
        for (int64_t i = 0; i < n; i++)
            v[i] = sin((double)(k * 13 + i)) * 0.5;
        p[k] = device_tensor(YG_FLOAT64, shapes[k], ndim, v);
        YG_CHECK(yg_tensor_set_requires_grad(p[k], true));
    }
}

/* backward of sum((tanh(x @ w1 + b1) @ w2 + b2 - t)^2) on step's batch */
static void cuda_step_backward(yg_tensor **p, int step) {
    const int64_t sx[] = {NB, NIN}, st[] = {NB, NOUT};
    double vx[NB * NIN], vt[NB * NOUT];
    yg_tensor *x, *t, *m = NULL, *h = NULL, *a = NULL, *y = NULL, *y2 = NULL, *d = NULL;
    yg_tensor *sq = NULL, *l = NULL;

    for (int i = 0; i < NB * NIN; i++)
        vx[i] = cos(step * 31.0 + i * 0.7);
    for (int i = 0; i < NB * NOUT; i++)
        vt[i] = sin(step * 17.0 + i * 0.3);
    x = device_tensor(YG_FLOAT64, sx, 2, vx);
    t = device_tensor(YG_FLOAT64, st, 2, vt);
    YG_CHECK(yg_mm(x, p[0], &m));
    YG_CHECK(yg_add(m, p[1], 1, &h));
    YG_CHECK(yg_tanh(h, &a));
    YG_CHECK(yg_mm(a, p[2], &y));
    YG_CHECK(yg_add(y, p[3], 1, &y2));
    YG_CHECK(yg_sub(y2, t, 1, &d));
    YG_CHECK(yg_mul(d, d, &sq));
    YG_CHECK(yg_sum(sq, &l));
    YG_CHECK(yg_backward(l, NULL, false));
    yg_tensor *all[] = {x, t, m, h, a, y, y2, d, sq, l};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        yg_release(all[k]);
}

static void count_started(yg_ddp_event event, int64_t bucket, void *ctx) {
    (void)bucket;
    if (event == YG_DDP_BUCKET_STARTED)
        (*(int *)ctx)++;
}

/* yg_ddp on cuda:0 parameters over a one-rank NCCL group: its buckets
 * live on the GPU, and the parameters after SGD steps through it equal
 * plain SGD on the same data (the average over one rank is the
 * gradient); half the steps run with a stream of the test's own as the
 * current one.  The unused parameter keeps .grad none. */
static void test_ddp_on_cuda_parameters_matches_plain_sgd(void **state) {
    yg_sgd_options sgd = {.lr = 0.05};
    int started = 0;
    yg_ddp_options opts = {.bucket_bytes = 64,
                           .find_unused_parameters = true,
                           .on_event = count_started,
                           .on_event_ctx = &started};
    yg_process_group *pg;
    yg_optimizer *ref_opt = NULL, *opt = NULL;
    yg_cuda_stream *stream = NULL;
    yg_tensor *ref[5], *m[5], *g = (yg_tensor *)1;
    yg_ddp *ddp = NULL;
    (void)state;

    need_nccl();
    pg = nccl_group();
    cuda_model(ref);
    cuda_model(m);
    YG_CHECK(yg_optimizer_create_sgd(ref, 5, &sgd, &ref_opt));
    YG_CHECK(yg_optimizer_create_sgd(m, 5, &sgd, &opt));
    YG_CHECK(yg_ddp_create(pg, m, 5, &opts, &ddp));
    assert_true(yg_ddp_bucket_count(ddp) > 2);
    YG_CHECK(yg_cuda_stream_create(0, &stream));
    for (int step = 0; step < NSTEPS; step++) {
        if (step == NSTEPS / 2)
            YG_CHECK(yg_cuda_set_stream(0, stream));
        cuda_step_backward(ref, step);
        YG_CHECK(yg_optimizer_step(ref_opt));
        yg_optimizer_zero_grad(ref_opt);
        cuda_step_backward(m, step);
        YG_CHECK(yg_ddp_finish(ddp));
        YG_CHECK(yg_tensor_grad(m[0], &g));
        assert_int_equal(yg_tensor_device(g), YG_CUDA);
        yg_release(g);
        YG_CHECK(yg_optimizer_step(opt));
        yg_optimizer_zero_grad(opt);
    }
    /* Every bucket started each step (the unused one from finish). */
    assert_int_equal(started, NSTEPS * (int)yg_ddp_bucket_count(ddp));
    for (int k = 0; k < 5; k++) {
        double a[64], b[64];
        int64_t n = yg_tensor_numel(m[k]);
        YG_CHECK(yg_tensor_to_f64(ref[k], a, n));
        YG_CHECK(yg_tensor_to_f64(m[k], b, n));
        for (int64_t i = 0; i < n; i++)
            if (fabs(a[i] - b[i]) > 1e-12)
                fail_msg("parameter %d element %lld: ddp %.17g, plain sgd %.17g",
                         k,
                         (long long)i,
                         b[i],
                         a[i]);
    }
    YG_CHECK(yg_tensor_grad(m[4], &g));
    assert_null(g);
    /* Everything used on the stream is released before it goes. */
    yg_ddp_release(ddp);
    yg_optimizer_release(opt);
    yg_optimizer_release(ref_opt);
    for (int k = 0; k < 5; k++) {
        yg_release(ref[k]);
        yg_release(m[k]);
    }
    YG_CHECK(yg_cuda_set_stream(0, NULL));
    yg_cuda_stream_destroy(stream);
    yg_process_group_release(pg);
}

/* Issue 28, item 11: two ranks on one GPU cannot form an NCCL group
 * (NCCL refuses duplicate devices in ncclCommInitRank): every rank gets
 * a status naming ncclCommInitRank and no group, and none hangs.  Runs
 * under mpirun -np 2 on a machine with one GPU
 * (distributed_nccl.np2_two_ranks_on_one_gpu_are_refused); as a single
 * process, or where each rank has a GPU of its own, it skips, saying
 * so. */
static void test_two_ranks_on_one_gpu_are_refused(void **state) {
    yg_process_group_options o = {0};
    yg_process_group *pg = NULL;
    char why[160];
    (void)state;
    need_nccl();
    if (yg_cuda_device_count() > 1) {
        snprintf(why, sizeof why, "%d GPUs: each rank gets one of its own", yg_cuda_device_count());
        yg_test_skip(why);
    }
    YG_CHECK(yg_process_group_create(&o, &pg)); /* MPI: how many ranks? */
    int ranks = yg_process_group_world_size(pg);
    yg_process_group_release(pg);
    pg = (yg_process_group *)1;
    if (ranks < 2)
        yg_test_skip("needs two MPI ranks (CTest runs it under mpirun -np 2 as "
                     "distributed_nccl.np2_two_ranks_on_one_gpu_are_refused)");
    o.backend = YG_DIST_NCCL;
    yg_status st = yg_process_group_create(&o, &pg);
    printf("two ranks on cuda:0: %s: %s\n", yg_status_name(st), yg_last_error());
    assert_int_not_equal(st, YG_OK);
    assert_null(pg);
    assert_non_null(strstr(yg_last_error(), "process_group_create: "));
    assert_non_null(strstr(yg_last_error(), "ncclCommInitRank"));
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nccl_group_creation_says_why_it_cannot_run),
        cmocka_unit_test(test_unknown_backend_is_refused),
        cmocka_unit_test(test_checks_refuse_tensors_of_the_other_device_naming_both),
        cmocka_unit_test(test_ddp_refuses_parameters_on_two_devices_or_the_wrong_one),
        cmocka_unit_test(test_one_rank_group_all_reduces_sum_avg_and_max),
        cmocka_unit_test(test_one_rank_group_broadcasts_gathers_scatters_and_waits),
        cmocka_unit_test(test_groups_refuse_tensors_of_the_other_device),
        cmocka_unit_test(test_one_rank_group_reduces_non_contiguous_tensors_through_a_copy),
        cmocka_unit_test(test_one_rank_group_orders_collectives_on_the_current_stream),
        cmocka_unit_test(test_ddp_on_cuda_parameters_matches_plain_sgd),
        cmocka_unit_test(test_two_ranks_on_one_gpu_are_refused),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
