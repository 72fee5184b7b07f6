/*
 * dist_tests.c - the multi-rank tests of yagrad/distributed.h, run as
 * `mpirun -np N dist_tests <case>` (tests/CMakeLists.txt registers each
 * case at 2 and 3 ranks where it applies).  Every rank runs the case and
 * checks its own results; a failed check prints the rank, the case and
 * the line and exits 1, which makes mpirun (and CTest) fail.
 *
 * The failure cases (shape mismatch, a rank leaving early) pass when
 * every rank gets the documented error within the time bound.
 */
#include "yagrad/autograd.h"
#include "yagrad/conv.h"
#include "yagrad/cpu.h"
#include "yagrad/cuda.h"
#include "yagrad/distributed.h"
#include "yagrad/jit.h"
#include "yagrad/onnx.h"
#include "yagrad/optim.h"
#include "yagrad/random.h"
#include "yagrad/status.h"
#include "yagrad/tensor.h"
#include "yagrad/version.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_trigonometric.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_slicing.h"
#include "yagrad/ops_losses.h"
#include "yagrad/ops_dtype_conversion.h"

#include <math.h>
#include <mpi.h> /* only to split a communicator for one case */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int g_rank = -1;
static const char *g_case = "";

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fail_at(__LINE__, #cond, NULL);                                                        \
    } while (0)
#define CHECK_OK(expr)                                                                             \
    do {                                                                                           \
        yg_status st_ = (expr);                                                                    \
        if (st_ != YG_OK)                                                                          \
            fail_at(__LINE__, #expr, yg_last_error());                                             \
    } while (0)

static void fail_at(int line, const char *what, const char *msg) {
    fprintf(stderr,
            "rank %d: %s: line %d: check failed: %s%s%s\n",
            g_rank,
            g_case,
            line,
            what,
            msg != NULL ? ": " : "",
            msg != NULL ? msg : "");
    exit(1);
}

/* st must be `code` with a message containing `part`. */
static void expect_error(int line, yg_status st, yg_status code, const char *part) {
    if (st != code || strstr(yg_last_error(), part) == NULL) {
        fprintf(stderr,
                "rank %d: %s: line %d: expected %s containing \"%s\", got %s: %s\n",
                g_rank,
                g_case,
                line,
                yg_status_name(code),
                part,
                yg_status_name(st),
                yg_last_error());
        exit(1);
    }
}
#define EXPECT_ERROR(st, code, part) expect_error(__LINE__, (st), (code), (part))

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A tensor of dtype holding values (converted). */
static yg_tensor *make(yg_dtype dtype, const int64_t *sizes, int64_t ndim, const double *values) {
    yg_tensor *d = NULL, *t = NULL;
    CHECK_OK(yg_tensor_from_data(values, sizes, ndim, YG_FLOAT64, &d));
    CHECK_OK(yg_to_copy(d, dtype, &t));
    yg_release(d);
    return t;
}

static void expect_values(const yg_tensor *t, const double *want, int64_t n, const char *what) {
    double got[64];
    CHECK(yg_tensor_numel(t) == n && n <= 64);
    CHECK_OK(yg_tensor_to_f64(t, got, n));
    for (int64_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            fprintf(stderr,
                    "rank %d: %s: %s %s: element %lld is %g, expected %g\n",
                    g_rank,
                    g_case,
                    what,
                    yg_dtype_name(yg_tensor_dtype(t)),
                    (long long)i,
                    got[i],
                    want[i]);
            exit(1);
        }
}

/* ---- collectives ---- */

/* Element i of rank r's input: r + i (bool: (r + i) odd), exact in every
 * dtype, halves included. */
static double input_value(yg_dtype dt, int r, int64_t i) {
    return dt == YG_BOOL ? (double)((r + i) % 2) : (double)(r + i);
}

static void check_all_reduce(yg_process_group *pg, yg_dtype dt, yg_reduce_op op, bool async) {
    int w = yg_process_group_world_size(pg), r = yg_process_group_rank(pg);
    int64_t sizes[2] = {2, 3};
    double in[6], want[6];
    yg_tensor *t;
    yg_work *work = NULL;

    for (int64_t i = 0; i < 6; i++) {
        double sum = 0, max = -1e9;
        in[i] = input_value(dt, r, i);
        for (int q = 0; q < w; q++) {
            sum += input_value(dt, q, i);
            max = fmax(max, input_value(dt, q, i));
        }
        if (dt == YG_BOOL)
            want[i] = sum > 0;
        else
            want[i] = op == YG_REDUCE_SUM ? sum : op == YG_REDUCE_MAX ? max : sum / w;
    }
    t = make(dt, sizes, 2, in);
    if (async) {
        bool done = false;
        CHECK_OK(yg_process_group_all_reduce(pg, t, op, &work));
        while (!done)
            CHECK_OK(yg_work_test(work, &done));
        CHECK_OK(yg_work_wait(work)); /* again: same status */
        yg_work_release(work);
    } else {
        CHECK_OK(yg_process_group_all_reduce(pg, t, op, NULL));
    }
    if (dt == YG_FLOAT16 || dt == YG_BFLOAT16 || dt == YG_FLOAT32)
        for (int64_t i = 0; i < 6; i++) /* avg of 3 ranks: thirds */
            want[i] = (double)(float)want[i];
    if ((dt == YG_FLOAT16 || dt == YG_BFLOAT16) && op == YG_REDUCE_AVG && w == 3) {
        yg_tensor *round = NULL;
        yg_tensor *exact = make(YG_FLOAT64, sizes, 2, want);
        CHECK_OK(yg_to_copy(exact, dt, &round)); /* what one rounding gives */
        CHECK_OK(yg_tensor_to_f64(round, want, 6));
        yg_release(round);
        yg_release(exact);
    }
    expect_values(t, want, 6, "all_reduce");
    yg_release(t);
}

/* A transposed (non-contiguous) view is reduced in place through a copy. */
static void check_non_contiguous(yg_process_group *pg) {
    int w = yg_process_group_world_size(pg), r = yg_process_group_rank(pg);
    int64_t sizes[2] = {2, 3};
    double in[6], want[6], got[6];
    yg_tensor *base, *view = NULL;

    for (int i = 0; i < 6; i++)
        in[i] = r * 10 + i;
    base = make(YG_FLOAT32, sizes, 2, in);
    CHECK_OK(yg_transpose(base, 0, 1, &view));
    CHECK(!yg_tensor_is_contiguous(view));
    CHECK_OK(yg_process_group_all_reduce(pg, view, YG_REDUCE_SUM, NULL));
    CHECK_OK(yg_tensor_to_f64(base, got, 6));
    for (int i = 0; i < 6; i++) {
        want[i] = 10.0 * w * (w - 1) / 2 + (double)w * i;
        CHECK(got[i] == want[i]);
    }
    yg_release(view);
    yg_release(base);
}

static void check_broadcast_gather_scatter(yg_process_group *pg, yg_dtype dt) {
    int w = yg_process_group_world_size(pg), r = yg_process_group_rank(pg);
    int64_t s3[1] = {3}, sg[2] = {w, 3};
    double in[3], want[64];
    yg_tensor *t, *out = NULL, *big;
    int root = w - 1;

    /* broadcast from the last rank */
    for (int i = 0; i < 3; i++)
        in[i] = input_value(dt, r, i);
    t = make(dt, s3, 1, in);
    CHECK_OK(yg_process_group_broadcast(pg, t, root, NULL));
    for (int i = 0; i < 3; i++)
        want[i] = input_value(dt, root, i);
    expect_values(t, want, 3, "broadcast");
    yg_release(t);

    /* all_gather into [w, 3] */
    t = make(dt, s3, 1, in);
    CHECK_OK(yg_tensor_zeros(sg, 2, dt, &out));
    CHECK_OK(yg_process_group_all_gather(pg, t, out, NULL));
    for (int q = 0; q < w; q++)
        for (int i = 0; i < 3; i++)
            want[q * 3 + i] = input_value(dt, q, i);
    expect_values(out, want, 3 * w, "all_gather");
    yg_release(t);
    yg_release(out);

    /* reduce_scatter (sum) of [w, 3]: rank r gets row r summed over ranks */
    if (dt == YG_BOOL)
        return;
    {
        double rows[64];
        for (int64_t i = 0; i < 3 * w; i++)
            rows[i] = input_value(dt, r, i);
        big = make(dt, sg, 2, rows);
        CHECK_OK(yg_tensor_zeros(s3, 1, dt, &out));
        CHECK_OK(yg_process_group_reduce_scatter(pg, big, out, YG_REDUCE_SUM, NULL));
        for (int i = 0; i < 3; i++) {
            want[i] = 0;
            for (int q = 0; q < w; q++)
                want[i] += input_value(dt, q, r * 3 + i);
        }
        expect_values(out, want, 3, "reduce_scatter");
        yg_release(big);
        yg_release(out);
    }
}

static int case_collectives(yg_process_group *pg) {
    const yg_dtype dtypes[] = {
        YG_FLOAT32, YG_FLOAT64, YG_INT64, YG_BOOL, YG_INT32, YG_FLOAT16, YG_BFLOAT16};
    for (size_t k = 0; k < sizeof dtypes / sizeof dtypes[0]; k++) {
        yg_dtype dt = dtypes[k];
        bool floating =
            dt == YG_FLOAT32 || dt == YG_FLOAT64 || dt == YG_FLOAT16 || dt == YG_BFLOAT16;
        check_all_reduce(pg, dt, YG_REDUCE_SUM, false);
        check_all_reduce(pg, dt, YG_REDUCE_MAX, true);
        if (floating)
            check_all_reduce(pg, dt, YG_REDUCE_AVG, k % 2 == 0);
        check_broadcast_gather_scatter(pg, dt);
    }
    check_non_contiguous(pg);
    CHECK_OK(yg_process_group_barrier(pg, NULL));
    return 0;
}

static int case_collective_argument_errors(yg_process_group *pg) {
    int w = yg_process_group_world_size(pg);
    int64_t s3[1] = {3}, s4[1] = {4};
    yg_tensor *i64 = NULL, *f32 = NULL, *f32b = NULL;
    yg_work *work = (yg_work *)1;

    CHECK_OK(yg_tensor_zeros(s3, 1, YG_INT64, &i64));
    CHECK_OK(yg_tensor_zeros(s3, 1, YG_FLOAT32, &f32));
    CHECK_OK(yg_tensor_zeros(s4, 1, YG_FLOAT32, &f32b));
    EXPECT_ERROR(yg_process_group_all_reduce(pg, i64, YG_REDUCE_AVG, &work),
                 YG_ERR_DTYPE,
                 "all_reduce: avg needs a floating dtype, got int64");
    CHECK(work == NULL);
    EXPECT_ERROR(yg_process_group_all_reduce(pg, f32, (yg_reduce_op)7, NULL),
                 YG_ERR_INVALID_ARGUMENT,
                 "all_reduce: unknown reduce op 7");
    EXPECT_ERROR(yg_process_group_broadcast(pg, f32, w, NULL), YG_ERR_INDEX, "broadcast: root");
    EXPECT_ERROR(yg_process_group_all_gather(pg, f32, f32b, NULL),
                 YG_ERR_SHAPE,
                 "all_gather: output [4] must have world size");
    EXPECT_ERROR(yg_process_group_all_gather(pg, i64, f32, NULL),
                 YG_ERR_DTYPE,
                 "all_gather: input is int64 but output is float32");
    EXPECT_ERROR(yg_process_group_all_reduce(pg, NULL, YG_REDUCE_SUM, NULL),
                 YG_ERR_INVALID_ARGUMENT,
                 "all_reduce: tensor is undefined");
    {
        /* 3e9 elements through a stride-0 view: refused before any copy. */
        int64_t huge[1] = {3000000000LL};
        yg_tensor *one = NULL, *big = NULL;
        CHECK_OK(yg_tensor_zeros(NULL, 0, YG_FLOAT32, &one));
        CHECK_OK(yg_expand(one, huge, 1, &big));
        EXPECT_ERROR(yg_process_group_all_reduce(pg, big, YG_REDUCE_SUM, NULL),
                     YG_ERR_SHAPE,
                     "all_reduce: tensor has 3000000000 elements; MPI counts are int");
        yg_release(big);
        yg_release(one);
    }
    /* Nothing was queued: the group still works. */
    CHECK_OK(yg_process_group_barrier(pg, NULL));
    yg_release(i64);
    yg_release(f32);
    yg_release(f32b);
    return 0;
}

/* ---- data parallel ---- */

enum { B = 12, D_IN = 4, D_HID = 8, D_OUT = 3, STEPS = 20 };

typedef struct model {
    yg_tensor *p[5]; /* w1 [4, 8], b1 [8], w2 [8, 3], b2 [3], unused [3, 3] */
} model;

static void model_init(model *m, uint64_t seed) {
    const int64_t shapes[5][2] = {{D_IN, D_HID}, {D_HID, 0}, {D_HID, D_OUT}, {D_OUT, 0}, {3, 3}};
    for (int k = 0; k < 5; k++) {
        int64_t ndim = shapes[k][1] ? 2 : 1, n = shapes[k][0] * (ndim == 2 ? shapes[k][1] : 1);
        double v[64];
        for (int64_t i = 0; i < n; i++)
            v[i] = sin((double)(seed * 97 + (uint64_t)k * 13 + (uint64_t)i)) * 0.5;
        CHECK_OK(yg_tensor_from_data(v, shapes[k], ndim, YG_FLOAT64, &m->p[k]));
        CHECK_OK(yg_tensor_set_requires_grad(m->p[k], true));
    }
}

static void model_free(model *m) {
    for (int k = 0; k < 5; k++)
        yg_release(m->p[k]);
}

/* The batch of a step: the same on every rank. */
static void batch(int step, yg_tensor **x, yg_tensor **t) {
    int64_t sx[2] = {B, D_IN}, st[2] = {B, D_OUT};
    double vx[B * D_IN], vt[B * D_OUT];
    for (int i = 0; i < B * D_IN; i++)
        vx[i] = cos(step * 31.0 + i * 0.7);
    for (int i = 0; i < B * D_OUT; i++)
        vt[i] = sin(step * 17.0 + i * 0.3);
    CHECK_OK(yg_tensor_from_data(vx, sx, 2, YG_FLOAT64, x));
    CHECK_OK(yg_tensor_from_data(vt, st, 2, YG_FLOAT64, t));
}

/* Backward of scale * mse(model(x[rows]), t[rows]). */
static void
forward_backward(model *m, yg_tensor *x, yg_tensor *t, int64_t start, int64_t rows, double scale) {
    yg_tensor *xs = NULL, *ts = NULL, *h = NULL, *a = NULL, *y = NULL, *l = NULL, *ls = NULL;
    CHECK_OK(yg_narrow(x, 0, start, rows, &xs));
    CHECK_OK(yg_narrow(t, 0, start, rows, &ts));
    CHECK_OK(yg_addmm(m->p[1], xs, m->p[0], 1.0, 1.0, &h));
    CHECK_OK(yg_tanh(h, &a));
    yg_release(h);
    CHECK_OK(yg_addmm(m->p[3], a, m->p[2], 1.0, 1.0, &y));
    CHECK_OK(yg_mse_loss(y, ts, 1, &l));
    CHECK_OK(yg_mul_scalar(l, scale, &ls));
    CHECK_OK(yg_backward(ls, NULL, false));
    yg_release(xs);
    yg_release(ts);
    yg_release(a);
    yg_release(y);
    yg_release(l);
    yg_release(ls);
}

/* 20 SGD steps: reference on the full batch in this process, the same
 * through yg_ddp with each rank on its B / world rows (in two no_sync
 * micro-batches when accumulate), then every parameter compared. */
static int run_equivalence(yg_process_group *pg, bool accumulate) {
    int w = yg_process_group_world_size(pg), r = yg_process_group_rank(pg);
    int64_t per_rank = B / w;
    yg_sgd_options sgd = {.lr = 0.1};
    yg_ddp_options opts = {.bucket_bytes = 256, .find_unused_parameters = true};
    yg_optimizer *ref_opt = NULL, *opt = NULL;
    yg_ddp *ddp = NULL;
    model ref, m;

    model_init(&ref, 0);
    model_init(&m, (uint64_t)r); /* only rank 0's values must survive */
    CHECK_OK(yg_optimizer_create_sgd(ref.p, 5, &sgd, &ref_opt));
    CHECK_OK(yg_optimizer_create_sgd(m.p, 5, &sgd, &opt));
    CHECK_OK(yg_ddp_create(pg, m.p, 5, &opts, &ddp));
    CHECK(yg_ddp_bucket_count(ddp) > 1);
    for (int step = 0; step < STEPS; step++) {
        yg_tensor *x = NULL, *t = NULL;
        batch(step, &x, &t);
        forward_backward(&ref, x, t, 0, B, 1.0);
        CHECK_OK(yg_optimizer_step(ref_opt));
        yg_optimizer_zero_grad(ref_opt);
        if (accumulate) {
            int64_t half = per_rank / 2;
            CHECK(yg_ddp_set_sync(ddp, false));
            forward_backward(&m, x, t, r * per_rank, half, 0.5);
            CHECK_OK(yg_ddp_finish(ddp)); /* a no-op while sync is off */
            CHECK(!yg_ddp_set_sync(ddp, true));
            forward_backward(&m, x, t, r * per_rank + half, per_rank - half, 0.5);
        } else {
            forward_backward(&m, x, t, r * per_rank, per_rank, 1.0);
        }
        CHECK_OK(yg_ddp_finish(ddp));
        CHECK_OK(yg_optimizer_step(opt));
        yg_optimizer_zero_grad(opt);
        yg_release(x);
        yg_release(t);
    }
    for (int k = 0; k < 5; k++) {
        double a[64], b[64];
        int64_t n = yg_tensor_numel(m.p[k]);
        yg_tensor *g = NULL;
        CHECK_OK(yg_tensor_to_f64(ref.p[k], a, n));
        CHECK_OK(yg_tensor_to_f64(m.p[k], b, n));
        for (int64_t i = 0; i < n; i++)
            if (fabs(a[i] - b[i]) > 1e-6) {
                fprintf(stderr,
                        "rank %d: %s: parameter %d element %lld: ddp %.17g, one rank %.17g\n",
                        r,
                        g_case,
                        k,
                        (long long)i,
                        b[i],
                        a[i]);
                exit(1);
            }
        CHECK_OK(yg_tensor_grad(m.p[k], &g));
        yg_release(g);
    }
    {
        /* The unused parameter kept .grad none, as on one rank. */
        yg_tensor *g = (yg_tensor *)1;
        CHECK_OK(yg_tensor_grad(m.p[4], &g));
        CHECK(g == NULL);
    }
    yg_ddp_release(ddp);
    yg_optimizer_release(opt);
    yg_optimizer_release(ref_opt);
    model_free(&ref);
    model_free(&m);
    return 0;
}

static int case_ddp_equivalence(yg_process_group *pg) {
    return run_equivalence(pg, false);
}

static int case_ddp_equivalence_no_sync(yg_process_group *pg) {
    return run_equivalence(pg, true);
}

/* A parameter only rank 0 uses: with find_unused_parameters its gradient
 * is rank 0's divided by the world size; without, every rank fails
 * naming it. */
static void sum_of(yg_tensor *p, yg_tensor **loss) {
    CHECK_OK(yg_sum(p, loss));
}

static int case_ddp_unused_on_some_ranks(yg_process_group *pg) {
    int w = yg_process_group_world_size(pg), r = yg_process_group_rank(pg);
    int64_t s[1] = {4};
    double ones[4] = {1, 1, 1, 1};
    yg_tensor *a = NULL, *b = NULL, *la = NULL, *lb = NULL, *loss = NULL, *g = NULL;
    yg_ddp_options opts = {.find_unused_parameters = true};
    yg_ddp *ddp = NULL;
    yg_tensor *params[2];

    CHECK_OK(yg_tensor_from_data(ones, s, 1, YG_FLOAT64, &a));
    CHECK_OK(yg_tensor_from_data(ones, s, 1, YG_FLOAT64, &b));
    CHECK_OK(yg_tensor_set_requires_grad(a, true));
    CHECK_OK(yg_tensor_set_requires_grad(b, true));
    params[0] = a;
    params[1] = b;
    for (int pass = 0; pass < 2; pass++) {
        opts.find_unused_parameters = pass == 0;
        CHECK_OK(yg_ddp_create(pg, params, 2, &opts, &ddp));
        sum_of(a, &la);
        if (r == 0) {
            sum_of(b, &lb);
            CHECK_OK(yg_add(la, lb, 1.0, &loss));
        } else {
            loss = yg_retain(la);
        }
        CHECK_OK(yg_backward(loss, NULL, false));
        if (pass == 0) {
            double want[4] = {1.0 / w, 1.0 / w, 1.0 / w, 1.0 / w}, one[4] = {1, 1, 1, 1};
            CHECK_OK(yg_ddp_finish(ddp));
            CHECK_OK(yg_tensor_grad(b, &g));
            expect_values(g, want, 4, "locally unused parameter's grad");
            yg_release(g);
            CHECK_OK(yg_tensor_grad(a, &g));
            expect_values(g, one, 4, "used parameter's grad");
            yg_release(g);
        } else {
            char want[128];
            snprintf(want,
                     sizeof want,
                     "ddp_finish: parameter 1 [4] received no gradient on %d of %d ranks",
                     w - 1,
                     w);
            EXPECT_ERROR(yg_ddp_finish(ddp), YG_ERR_AUTOGRAD, want);
        }
        yg_tensor_zero_grad(a);
        yg_tensor_zero_grad(b);
        yg_release(la);
        yg_release(lb);
        yg_release(loss);
        la = lb = loss = NULL;
        yg_ddp_release(ddp);
    }
    yg_release(a);
    yg_release(b);
    return 0;
}

/* Overlap, by event order: bucket 0 (the last layer's parameters) is
 * queued while backward still has the first layer to do. */
typedef struct event_log {
    int n;
    char what[64][32];
} event_log;

static void log_event(event_log *log, const char *s) {
    if (log->n < 64)
        snprintf(log->what[log->n++], sizeof log->what[0], "%s", s);
}

static void on_ddp_event(yg_ddp_event ev, int64_t bucket, void *ctx) {
    char s[32];
    snprintf(s,
             sizeof s,
             "%s %lld",
             ev == YG_DDP_BUCKET_STARTED ? "started" : "finished",
             (long long)bucket);
    log_event(ctx, s);
}

static yg_status first_layer_starts(yg_node *node, yg_tensor **g, int32_t n, void *ctx) {
    (void)node, (void)g, (void)n;
    log_event(ctx, "first layer backward");
    return YG_OK;
}

static int index_of(const event_log *log, const char *s) {
    for (int i = 0; i < log->n; i++)
        if (strcmp(log->what[i], s) == 0)
            return i;
    return -1;
}

static int case_ddp_overlaps_backward(yg_process_group *pg) {
    int64_t sx[2] = {16, 64}, sw[2] = {64, 64}, sb[1] = {64};
    event_log log = {0};
    yg_ddp_options opts = {
        .bucket_bytes = 64 * 64 * 8 + 64 * 8, .on_event = on_ddp_event, .on_event_ctx = &log};
    yg_tensor *p[6], *x = NULL, *h = NULL, *a = NULL, *loss = NULL;
    yg_ddp *ddp = NULL;

    CHECK_OK(yg_tensor_full(sx, 2, 0.5, YG_FLOAT64, &x));
    for (int k = 0; k < 3; k++) {
        CHECK_OK(yg_tensor_full(sw, 2, 0.01 * (k + 1), YG_FLOAT64, &p[2 * k]));
        CHECK_OK(yg_tensor_full(sb, 1, 0.1, YG_FLOAT64, &p[2 * k + 1]));
        CHECK_OK(yg_tensor_set_requires_grad(p[2 * k], true));
        CHECK_OK(yg_tensor_set_requires_grad(p[2 * k + 1], true));
    }
    CHECK_OK(yg_ddp_create(pg, p, 6, &opts, &ddp));
    CHECK(yg_ddp_bucket_count(ddp) == 3); /* one layer per bucket */
    a = yg_retain(x);
    for (int k = 0; k < 3; k++) {
        CHECK_OK(yg_addmm(p[2 * k + 1], a, p[2 * k], 1.0, 1.0, &h));
        if (k == 0)
            CHECK_OK(yg_node_register_pre_hook(yg_tensor_grad_fn(h), first_layer_starts, &log));
        yg_release(a);
        CHECK_OK(yg_tanh(h, &a));
        yg_release(h);
    }
    CHECK_OK(yg_sum(a, &loss));
    CHECK_OK(yg_backward(loss, NULL, false));
    log_event(&log, "backward returned");
    CHECK_OK(yg_ddp_finish(ddp));
    CHECK(index_of(&log, "started 0") >= 0);
    CHECK(index_of(&log, "started 0") < index_of(&log, "first layer backward"));
    CHECK(index_of(&log, "started 1") < index_of(&log, "first layer backward"));
    CHECK(index_of(&log, "started 2") < index_of(&log, "backward returned"));
    CHECK(index_of(&log, "backward returned") < index_of(&log, "finished 0"));
    yg_ddp_release(ddp);
    yg_release(a);
    yg_release(loss);
    yg_release(x);
    for (int k = 0; k < 6; k++)
        yg_release(p[k]);
    return 0;
}

/* Rank 1 has a different second parameter: every rank fails with the
 * same message, none hangs. */
static int case_ddp_shape_mismatch(yg_process_group *pg) {
    int r = yg_process_group_rank(pg);
    int64_t s0[2] = {4, 8}, s1[2] = {4, r == 1 ? 9 : 8};
    yg_tensor *p[2];
    yg_ddp *ddp = (yg_ddp *)1;
    double t0 = now_s();

    CHECK_OK(yg_tensor_zeros(s0, 2, YG_FLOAT64, &p[0]));
    CHECK_OK(yg_tensor_zeros(s1, 2, YG_FLOAT64, &p[1]));
    CHECK_OK(yg_tensor_set_requires_grad(p[0], true));
    CHECK_OK(yg_tensor_set_requires_grad(p[1], true));
    EXPECT_ERROR(
        yg_ddp_create(pg, p, 2, NULL, &ddp),
        YG_ERR_SHAPE,
        "ddp_create: parameter 1 is [4, 8] float64 on rank 0 but [4, 9] float64 on rank 1");
    CHECK(ddp == NULL);
    CHECK(now_s() - t0 < 5.0);
    /* The group still works: the mismatch was found from gathered data. */
    CHECK_OK(yg_process_group_barrier(pg, NULL));
    yg_release(p[0]);
    yg_release(p[1]);
    return 0;
}

/* Rank 1 passes one parameter fewer, then a parameter that does not
 * require grad: every rank fails, none waits for another. */
static int case_ddp_count_mismatch_and_local_rejection(yg_process_group *pg) {
    int r = yg_process_group_rank(pg);
    int64_t s[1] = {3};
    yg_tensor *p[2];
    yg_ddp *ddp = (yg_ddp *)1;

    CHECK_OK(yg_tensor_zeros(s, 1, YG_FLOAT64, &p[0]));
    CHECK_OK(yg_tensor_zeros(s, 1, YG_FLOAT64, &p[1]));
    CHECK_OK(yg_tensor_set_requires_grad(p[0], true));
    CHECK_OK(yg_ddp_create(pg, p, 1, NULL, &ddp)); /* one parameter everywhere: fine */
    yg_ddp_release(ddp);
    CHECK_OK(yg_tensor_set_requires_grad(p[1], true));
    EXPECT_ERROR(yg_ddp_create(pg, p, r == 1 ? 1 : 2, NULL, &ddp),
                 YG_ERR_SHAPE,
                 "ddp_create: rank 0 has 2 parameters but rank 1 has 1");
    CHECK(ddp == NULL);
    if (r == 1)
        CHECK_OK(yg_tensor_set_requires_grad(p[1], false));
    if (r == 1)
        EXPECT_ERROR(yg_ddp_create(pg, p, 2, NULL, &ddp),
                     YG_ERR_AUTOGRAD,
                     "ddp_create: parameter 1 is not a leaf that requires grad");
    else
        EXPECT_ERROR(yg_ddp_create(pg, p, 2, NULL, &ddp),
                     YG_ERR_INVALID_ARGUMENT,
                     "ddp_create: rank 1 rejected its parameters");
    CHECK(ddp == NULL);
    CHECK_OK(yg_process_group_barrier(pg, NULL));
    yg_release(p[0]);
    yg_release(p[1]);
    return 0;
}

/* The last rank releases its group (MPI_Finalize) and leaves; the others'
 * next collective times out within its bound, and the group is then
 * broken for every later call. */
static int case_rank_exits_early(yg_process_group *pg) {
    int w = yg_process_group_world_size(pg), r = yg_process_group_rank(pg);
    int64_t s[1] = {1000};
    yg_tensor *t = NULL;
    double t0;

    CHECK_OK(yg_process_group_barrier(pg, NULL));
    if (r == w - 1)
        return 0; /* main releases the group and exits */
    CHECK_OK(yg_tensor_full(s, 1, 1.0, YG_FLOAT32, &t));
    t0 = now_s();
    EXPECT_ERROR(yg_process_group_all_reduce(pg, t, YG_REDUCE_SUM, NULL),
                 YG_ERR_IO,
                 "all_reduce: timed out after 2000 ms");
    CHECK(now_s() - t0 < 10.0);
    EXPECT_ERROR(yg_process_group_barrier(pg, NULL),
                 YG_ERR_IO,
                 "barrier: the process group is broken by an earlier failure: all_reduce: timed "
                 "out");
    yg_release(t);
    fprintf(stderr, "rank %d: got the timeout after %.1f s, as expected\n", r, now_s() - t0);
    return 0;
}

/* A group of one rank (no peer): collectives are identities. */
static int case_single_rank(yg_process_group *pg) {
    int64_t s[1] = {3};
    double v[3] = {1, 2, 3};
    yg_tensor *t = make(YG_FLOAT64, s, 1, v);
    CHECK(yg_process_group_world_size(pg) == 1);
    CHECK_OK(yg_process_group_all_reduce(pg, t, YG_REDUCE_AVG, NULL));
    expect_values(t, v, 3, "all_reduce on one rank");
    yg_release(t);
    return 0;
}

/* A group over the even ranks and one over the odd ranks, from an
 * MPI_Comm_split of the program's own: sums stay within each group. */
static int case_group_from_a_split_communicator(yg_process_group *pg) {
    int r = yg_process_group_rank(pg), w = yg_process_group_world_size(pg), size = 0;
    int64_t s[1] = {1};
    double v[1] = {(double)r}, want = 0;
    yg_process_group_options opts = {.timeout_ms = 20000};
    yg_process_group *sub = NULL;
    yg_tensor *t = NULL;
    MPI_Comm split;

    CHECK(MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &split) == MPI_SUCCESS);
    opts.mpi_comm = &split;
    CHECK_OK(yg_process_group_create(&opts, &sub));
    MPI_Comm_free(&split); /* the group holds its own duplicate */
    for (int q = r % 2; q < w; q += 2) {
        want += q;
        size++;
    }
    CHECK(yg_process_group_world_size(sub) == size);
    CHECK(yg_process_group_rank(sub) == r / 2);
    t = make(YG_FLOAT64, s, 1, v);
    CHECK_OK(yg_process_group_all_reduce(sub, t, YG_REDUCE_SUM, NULL));
    expect_values(t, &want, 1, "all_reduce in the split group");
    yg_release(t);
    yg_process_group_release(sub);
    CHECK_OK(yg_process_group_barrier(pg, NULL)); /* the world group still works */
    return 0;
}

typedef struct test_case {
    const char *name;
    int (*fn)(yg_process_group *pg);
    int64_t timeout_ms;
} test_case;

static const test_case cases[] = {
    {"collectives_match_expected_values_for_every_dtype", case_collectives, 0},
    {"collectives_reject_bad_arguments_without_queueing", case_collective_argument_errors, 0},
    {"ddp_matches_one_rank_after_20_sgd_steps", case_ddp_equivalence, 0},
    {"ddp_no_sync_accumulation_matches_one_rank", case_ddp_equivalence_no_sync, 0},
    {"ddp_handles_parameters_unused_on_some_ranks", case_ddp_unused_on_some_ranks, 0},
    {"ddp_first_bucket_starts_before_backward_ends", case_ddp_overlaps_backward, 0},
    {"ddp_shape_mismatch_fails_on_every_rank", case_ddp_shape_mismatch, 5000},
    {"ddp_count_mismatch_and_local_rejection_fail_on_every_rank",
     case_ddp_count_mismatch_and_local_rejection,
     5000},
    {"rank_exiting_early_times_out_on_the_others", case_rank_exits_early, 2000},
    {"single_rank_group_is_an_identity", case_single_rank, 0},
    {"group_from_a_split_communicator", case_group_from_a_split_communicator, 0},
};

int main(int argc, char **argv) {
    yg_process_group_options opts = {0};
    yg_process_group *pg = NULL;
    const test_case *tc = NULL;
    int rc, world;

    for (size_t k = 0; argc > 1 && k < sizeof cases / sizeof cases[0]; k++)
        if (strcmp(argv[1], cases[k].name) == 0)
            tc = &cases[k];
    if (tc == NULL) {
        fprintf(stderr, "usage: mpirun -np N %s <case>; cases:\n", argv[0]);
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
            fprintf(stderr, "  %s\n", cases[k].name);
        return 2;
    }
    g_case = tc->name;
    opts.timeout_ms = tc->timeout_ms > 0 ? tc->timeout_ms : 60000;
    CHECK_OK(yg_process_group_create(&opts, &pg));
    g_rank = yg_process_group_rank(pg);
    world = yg_process_group_world_size(pg);
    rc = tc->fn(pg);
    yg_process_group_release(pg);
    if (rc == 0 && g_rank == 0)
        printf("%s: passed on %d ranks\n", g_case, world);
    return rc;
}
