/*
 * test_jit_fuser.c - the pointwise fuser: groups are made from the YAML's
 * pointwise ops, their generated kernels compute what the unfused graph
 * and eager ops compute (broadcasting, non-contiguous inputs, float32 and
 * float64), the disk cache is reused by another process and rebuilt when
 * corrupted, and a missing compiler falls back to the interpreter with its
 * reason.  Each test uses its own cache folder.
 *
 * The CUDA path: everywhere, the PTX cache and the kernel's argument
 * block (against the PTX's parameter) and, with CPU tensors marked as
 * cuda:0 (the fuser reads only the mark before it would need a device),
 * the refusal of two devices and the fallback without a driver.  The
 * test_cuda_runs_* tests need a GPU: they run fused groups on cuda:0 and
 * compare with the same graph on the CPU; without one they print
 * "skipped: no CUDA device ..." and exit 77, which CTest reports skipped
 * (tests/CMakeLists.txt).
 */
#define _GNU_SOURCE
#include "core/core.h"
#include "generated_int.h"
#include "jit/fuser/fuser.h"
#include "testutil.h"
#include "yagrad/cuda.h"
#include "yagrad/jit.h"
#include "yagrad/ops_views.h"

#include <math.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* tanh(x * w + b) * sigmoid(x): x [M, N], w [M, N], b [N] (broadcast). */
static const char *chain_text(const char *dt, int m, int n, double alpha, char *buf, size_t len) {
    snprintf(buf,
             len,
             "graph(%%x : Tensor(dtype=%s, sizes=[%d, %d]), %%w : Tensor(dtype=%s, sizes=[%d, %d]),"
             " %%b : Tensor(dtype=%s, sizes=[%d])):\n"
             "  %%p = mul(%%x, %%w)\n"
             "  %%q = add[alpha=%g](%%p, %%b)\n"
             "  %%t = tanh(%%q)\n"
             "  %%s = sigmoid(%%x)\n"
             "  %%y = mul(%%t, %%s)\n"
             "  return (%%y, %%q)\n",
             dt,
             m,
             n,
             dt,
             m,
             n,
             dt,
             n,
             alpha);
    return buf;
}

static yg_graph *parse(const char *text) {
    yg_graph *g = NULL;
    YG_CHECK(yg_graph_parse(text, (int64_t)strlen(text), &g));
    return g;
}

static int count_kind(const yg_graph *g, const char *kind) {
    int c = 0;
    for (yg_ir_node *n = yg_graph_first_node(g); n != NULL; n = yg_ir_node_next(n))
        c += strcmp(yg_ir_node_kind(n), kind) == 0;
    return c;
}

static void expect_close(const yg_tensor *a, const yg_tensor *b, double tol) {
    assert_int_equal(yg_tensor_numel(a), yg_tensor_numel(b));
    double *x = yg_test_values(a), *y = yg_test_values(b);
    for (int64_t i = 0; i < yg_tensor_numel(a); i++)
        if (fabs(x[i] - y[i]) > tol * (1 + fabs(x[i])))
            fail_msg("[%lld]: unfused %.9g, fused %.9g", (long long)i, x[i], y[i]);
    free(x);
    free(y);
}

static void use_cache_dir(const char *name, char *dir, size_t len) {
    snprintf(dir, len, "%s/yg-fuser-%s-%d", "/tmp", name, (int)getpid());
    setenv("YG_FUSER_CACHE_DIR", dir, 1);
}

/* Runs the chain fused and unfused on x, w, b; returns the fused group count. */
static int check_chain(yg_dtype dtype, int m, int n, double alpha, bool transpose_x, double tol) {
    char text[1024];
    const char *dt = dtype == YG_FLOAT32 ? "float32" : "float64";
    yg_graph *g = parse(chain_text(dt, m, n, alpha, text, sizeof text));
    yg_graph *f = parse(text);
    YG_CHECK(yg_graph_fuse(f));
    int groups = count_kind(f, "prim::FusionGroup");
    int64_t s[2] = {m, n}, st[2] = {n, m}, sb[1] = {n};
    yg_tensor *x = NULL, *xt = NULL;
    if (transpose_x) { /* same values, column-major */
        xt = yg_test_rand(dtype, st, 2, -2, 2, 1);
        YG_CHECK(yg_transpose(xt, 0, 1, &x));
    } else {
        x = yg_test_rand(dtype, s, 2, -2, 2, 1);
    }
    yg_tensor *w = yg_test_rand(dtype, s, 2, -1, 1, 2), *b = yg_test_rand(dtype, sb, 1, -1, 1, 3);
    yg_tensor *in[3] = {x, w, b}, *a[2] = {0}, *c[2] = {0};
    YG_CHECK(yg_graph_run(g, in, 3, a, 2));
    YG_CHECK(yg_graph_run(f, in, 3, c, 2));
    for (int i = 0; i < 2; i++) {
        expect_close(a[i], c[i], tol);
        yg_release(a[i]);
        yg_release(c[i]);
    }
    yg_release(x);
    yg_release(xt);
    yg_release(w);
    yg_release(b);
    yg_graph_release(g);
    yg_graph_release(f);
    return groups;
}

static void test_chain_fused_matches_unfused(void **state) {
    (void)state;
    yg_fuser_stats before = yg_fuser_get_stats();
    /* float32 and float64, contiguous and transposed, small and threaded. */
    assert_int_equal(check_chain(YG_FLOAT32, 7, 5, 1.0, false, 1e-6), 1);
    assert_int_equal(check_chain(YG_FLOAT64, 7, 5, 1.0, false, 1e-14), 1);
    assert_int_equal(check_chain(YG_FLOAT32, 300, 301, 0.5, true, 1e-6), 1);
    assert_int_equal(check_chain(YG_FLOAT64, 256, 512, 2.0, false, 1e-14), 1);
    yg_fuser_stats after = yg_fuser_get_stats();
    assert_true(after.kernels_compiled > before.kernels_compiled);
    assert_int_equal(after.fallbacks, before.fallbacks);
}

/* Scalars and size-1 dims broadcast; a 0-dim input. */
static void test_broadcast_shapes_match_unfused(void **state) {
    (void)state;
    const char *text = "graph(%x : Tensor(dtype=float32, sizes=[4, 1, 6]),"
                       " %y : Tensor(dtype=float32, sizes=[3, 1]), %z : Tensor(dtype=float32)):\n"
                       "  %a = mul(%x, %y)\n"
                       "  %b = sub[alpha=3](%a, %z)\n"
                       "  %c = exp(%b)\n"
                       "  %d = div.Scalar[other=7](%c)\n"
                       "  return (%d)\n";
    yg_graph *g = parse(text), *f = parse(text);
    YG_CHECK(yg_graph_fuse(f));
    assert_int_equal(count_kind(f, "prim::FusionGroup"), 1);
    int64_t sx[3] = {4, 1, 6}, sy[2] = {3, 1};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, sx, 3, -1, 1, 4),
              *y = yg_test_rand(YG_FLOAT32, sy, 2, -1, 1, 5);
    yg_tensor *z = NULL, *a = NULL, *c = NULL;
    YG_CHECK(yg_tensor_scalar(0.25, YG_FLOAT32, &z));
    yg_tensor *in[3] = {x, y, z};
    YG_CHECK(yg_graph_run(g, in, 3, &a, 1));
    YG_CHECK(yg_graph_run(f, in, 3, &c, 1));
    assert_int_equal(yg_tensor_ndim(c), 3);
    assert_int_equal(yg_tensor_sizes(c)[1], 3);
    expect_close(a, c, 1e-6);
    yg_release(a);
    yg_release(c);
    yg_release(x);
    yg_release(y);
    yg_release(z);
    yg_graph_release(g);
    yg_graph_release(f);
}

/* cat as a group's exit: the pieces are written into the result in place
 * (along the last dim and the first; a piece also read outside is an
 * output too; a cat whose result the group reads ends the run). */
static void test_cat_exits_match_unfused(void **state) {
    (void)state;
    const char *text = "graph(%x : Tensor(dtype=float32, sizes=[5, 7]),"
                       " %y : Tensor(dtype=float32, sizes=[7])):\n"
                       "  %a = mul(%x, %y)\n"
                       "  %b = tanh(%a)\n"
                       "  %c = sigmoid(%x)\n"
                       "  %d = cat[dim=-1](%a, %b, %c)\n"
                       "  %e = cat[dim=0](%c, %b)\n"
                       "  %f = exp(%d)\n"
                       "  return (%f, %e, %b)\n";
    yg_graph *g = parse(text), *f = parse(text);
    YG_CHECK(yg_graph_fuse(f));
    char *printed = NULL;
    YG_CHECK(yg_graph_print(f, &printed));
    /* One group holding both cats; exp reads a cat: outside. */
    assert_int_equal(count_kind(f, "prim::FusionGroup"), 1);
    assert_int_equal(count_kind(f, "cat"), 0);
    assert_int_equal(count_kind(f, "exp"), 1);
    yg_string_release(printed);
    int64_t sx[2] = {5, 7}, sy[1] = {7};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, sx, 2, -1, 1, 6),
              *y = yg_test_rand(YG_FLOAT32, sy, 1, -1, 1, 7);
    yg_tensor *in[2] = {x, y}, *a[3] = {0}, *c[3] = {0};
    yg_fuser_stats before = yg_fuser_get_stats();
    YG_CHECK(yg_graph_run(g, in, 2, a, 3));
    YG_CHECK(yg_graph_run(f, in, 2, c, 3));
    yg_fuser_stats after = yg_fuser_get_stats();
    assert_int_equal(after.fallbacks, before.fallbacks);
    assert_true(after.kernels_compiled + after.disk_cache_hits + after.memory_cache_hits >
                before.kernels_compiled + before.disk_cache_hits + before.memory_cache_hits);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(yg_tensor_ndim(a[i]), yg_tensor_ndim(c[i]));
        for (int d = 0; d < yg_tensor_ndim(a[i]); d++)
            assert_int_equal(yg_tensor_sizes(a[i])[d], yg_tensor_sizes(c[i])[d]);
        expect_close(a[i], c[i], 1e-6);
        yg_release(a[i]);
        yg_release(c[i]);
    }
    yg_release(x);
    yg_release(y);
    yg_graph_release(g);
    yg_graph_release(f);
}

/* Reduction anchors: softmax, log_softmax and sum over the last dim end a
 * group and run in its kernel, row by row. */
static void check_anchor(const char *tail, yg_dtype dt, bool transpose_x, int outs) {
    char text[1024];
    const char *dn = dt == YG_FLOAT32 ? "float32" : "float64";
    snprintf(text, sizeof text,
             "graph(%%x : Tensor(dtype=%s, sizes=[6, 37]), %%w : Tensor(dtype=%s, sizes=[37])):\n"
             "  %%a = mul(%%x, %%w)\n"
             "  %%b = tanh(%%a)\n"
             "  %%c = mul.Scalar[other=2.5](%%w)\n"
             "%s",
             dn, dn, tail);
    yg_graph *g = parse(text), *f = parse(text);
    YG_CHECK(yg_graph_fuse(f));
    assert_int_equal(count_kind(f, "prim::FusionGroup"), 1);
    assert_int_equal(yg_graph_num_nodes(f), 1); /* the anchor is inside */
    int64_t s[2] = {6, 37}, st[2] = {37, 6}, sw[1] = {37};
    yg_tensor *x = NULL, *xt = NULL, *w = yg_test_rand(dt, sw, 1, -1, 1, 31);
    if (transpose_x) {
        xt = yg_test_rand(dt, st, 2, -2, 2, 30);
        YG_CHECK(yg_transpose(xt, 0, 1, &x));
    } else {
        x = yg_test_rand(dt, s, 2, -2, 2, 30);
    }
    yg_tensor *in[2] = {x, w}, *a[2] = {0}, *c[2] = {0};
    yg_fuser_stats before = yg_fuser_get_stats();
    YG_CHECK(yg_graph_run(g, in, 2, a, outs));
    YG_CHECK(yg_graph_run(f, in, 2, c, outs));
    yg_fuser_stats after = yg_fuser_get_stats();
    assert_int_equal(after.fallbacks, before.fallbacks);
    /* The kernel ran (it was compiled or found), not the interpreter. */
    assert_true(after.kernels_compiled + after.disk_cache_hits + after.memory_cache_hits >
                before.kernels_compiled + before.disk_cache_hits + before.memory_cache_hits);
    for (int i = 0; i < outs; i++) {
        assert_int_equal(yg_tensor_ndim(a[i]), yg_tensor_ndim(c[i]));
        for (int d = 0; d < yg_tensor_ndim(a[i]); d++)
            assert_int_equal(yg_tensor_sizes(a[i])[d], yg_tensor_sizes(c[i])[d]);
        expect_close(a[i], c[i], dt == YG_FLOAT32 ? 1e-5 : 1e-12);
        yg_release(a[i]);
        yg_release(c[i]);
    }
    yg_release(x);
    yg_release(xt);
    yg_release(w);
    yg_graph_release(g);
    yg_graph_release(f);
}

static void test_reduction_anchors_match_unfused(void **state) {
    (void)state;
    for (int d = 0; d < 2; d++) {
        yg_dtype dt = d == 0 ? YG_FLOAT32 : YG_FLOAT64;
        for (int t = 0; t < 2; t++) {
            check_anchor("  %y = softmax[dim=-1](%b)\n  return (%y, %a)\n", dt, t, 2);
            check_anchor("  %y = log_softmax[dim=1](%b)\n  return (%y)\n", dt, t, 1);
            check_anchor("  %y = sum.dim[dim=[-1], keepdim=1](%b)\n  return (%y, %b)\n", dt, t,
                         2);
            check_anchor("  %y = sum.dim[dim=[1]](%b)\n  return (%y)\n", dt, t, 1);
            check_anchor("  %y = layer_norm[eps=0.001, normalized_shape=[37]](%b, %w, %c)\n"
                         "  return (%y)\n",
                         dt, t, 1);
        }
    }
}

/* Siblings across a node that cannot join: sin and cos of x with a matmul
 * between them (which neither reads) become one group. */
static void test_siblings_fuse_across_other_nodes(void **state) {
    (void)state;
    const char *text = "graph(%x : Tensor(dtype=float32, sizes=[4, 4])):\n"
                       "  %a = sin(%x)\n"
                       "  %m = mm(%x, %x)\n"
                       "  %c = cos(%x)\n"
                       "  %d = add(%a, %c)\n"
                       "  %e = add(%d, %m)\n"
                       "  return (%e)\n";
    yg_graph *g = parse(text), *f = parse(text);
    YG_CHECK(yg_graph_fuse(f));
    /* sin, cos and the first add in one group; mm; the last add reads mm
     * and stays a node of its own (a run needs two). */
    assert_int_equal(count_kind(f, "prim::FusionGroup"), 1);
    assert_int_equal(count_kind(f, "sin"), 0);
    assert_int_equal(count_kind(f, "cos"), 0);
    int64_t s[2] = {4, 4};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, s, 2, -1, 1, 40), *a = NULL, *c = NULL;
    YG_CHECK(yg_graph_run(g, &x, 1, &a, 1));
    YG_CHECK(yg_graph_run(f, &x, 1, &c, 1));
    expect_close(a, c, 1e-6);
    yg_release(a);
    yg_release(c);
    yg_release(x);
    yg_graph_release(g);
    yg_graph_release(f);
}

/* A chunk of a pointwise value moves up through its producers: the
 * pieces of the inputs (a bias [8] broadcast along rows is chunked too; a
 * [5, 1] column and a 0-dim scalar are read whole) feed one group with
 * the pieces' users.  A value read outside the chunk too, or a split that
 * is not even, stays as it is. */
static void test_chunks_move_up_into_the_group(void **state) {
    (void)state;
    const char *lstm_like =
        "graph(%x : Tensor(dtype=float64, sizes=[5, 8]), %b : Tensor(dtype=float64, sizes=[8]),"
        " %c : Tensor(dtype=float64, sizes=[5, 1]), %s : Tensor(dtype=float64, sizes=[])):\n"
        "  %a = add(%x, %b)\n"
        "  %d = mul(%a, %c)\n"
        "  %e = sub(%d, %s)\n"
        "  %p0, %p1, %p2, %p3 = chunk[chunks=4, dim=1](%e)\n"
        "  %q0 = sigmoid(%p0)\n"
        "  %q1 = tanh(%p1)\n"
        "  %q2 = mul(%q0, %q1)\n"
        "  %q3 = add(%q2, %p2)\n"
        "  %y = mul(%q3, %p3)\n"
        "  return (%y)\n";
    yg_graph *g = parse(lstm_like), *f = parse(lstm_like);
    YG_CHECK(yg_graph_fuse(f));
    assert_int_equal(count_kind(f, "prim::FusionGroup"), 1);
    assert_int_equal(count_kind(f, "chunk"), 2); /* of %x and of %b */
    assert_int_equal(yg_graph_num_nodes(f), 3);
    int64_t sx[2] = {5, 8}, sb[1] = {8}, sc[2] = {5, 1};
    yg_tensor *in[4] = {yg_test_rand(YG_FLOAT64, sx, 2, -1, 1, 41),
                        yg_test_rand(YG_FLOAT64, sb, 1, -1, 1, 42),
                        yg_test_rand(YG_FLOAT64, sc, 2, -1, 1, 43),
                        NULL};
    YG_CHECK(yg_tensor_scalar(0.25, YG_FLOAT64, &in[3]));
    yg_tensor *a = NULL, *c = NULL;
    YG_CHECK(yg_graph_run(g, in, 4, &a, 1));
    YG_CHECK(yg_graph_run(f, in, 4, &c, 1));
    expect_close(a, c, 1e-14);
    yg_release(a);
    yg_release(c);
    for (int i = 0; i < 4; i++)
        yg_release(in[i]);
    yg_graph_release(g);
    yg_graph_release(f);

    /* %e also returned: not moved; 8 into 3 pieces: not moved. */
    const char *kept[] = {
        "graph(%x : Tensor(dtype=float64, sizes=[5, 8])):\n"
        "  %e = exp(%x)\n"
        "  %p0, %p1 = chunk[chunks=2, dim=1](%e)\n"
        "  %y = mul(%p0, %p1)\n"
        "  return (%y, %e)\n",
        "graph(%x : Tensor(dtype=float64, sizes=[5, 8])):\n"
        "  %e = exp(%x)\n"
        "  %p0, %p1, %p2 = chunk[chunks=3, dim=1](%e)\n"
        "  %y = mul(%p0, %p1)\n"
        "  return (%y, %p2)\n",
    };
    for (int k = 0; k < 2; k++) {
        yg_graph *h = parse(kept[k]);
        YG_CHECK(yg_graph_fuse(h));
        assert_int_equal(count_kind(h, "chunk"), 1);
        assert_int_equal(count_kind(h, "exp"), 1); /* alone: no group of one */
        yg_graph_release(h);
    }
}

/* A layer_norm anchor over sizes the graph does not know (what an
 * executor's plan holds): fused, equal to the unfused graph, and where
 * the run's sizes do not fit normalized_shape or the weight, the
 * interpreter runs it and says what is wrong, as unfused. */
static void test_layer_norm_anchor_over_unknown_sizes(void **state) {
    (void)state;
    const char *text = "graph(%x : Tensor(dtype=float64, sizes=[?, ?]),"
                       " %r : Tensor(dtype=float64, sizes=[?, ?]),"
                       " %w : Tensor(dtype=float64, sizes=[?]), %b : Tensor(dtype=float64, sizes=[?])):\n"
                       "  %s = add(%x, %r)\n"
                       "  %y = layer_norm[eps=0.001, normalized_shape=[5]](%s, %w, %b)\n"
                       "  return (%y)\n";
    yg_graph *g = parse(text), *f = parse(text);
    YG_CHECK(yg_graph_fuse(f));
    assert_int_equal(count_kind(f, "prim::FusionGroup"), 1);
    assert_int_equal(yg_graph_num_nodes(f), 1);
    int64_t sx[2] = {4, 5}, sw[1] = {5}, sbad[2] = {4, 6}, s1[1] = {1};
    yg_tensor *x = yg_test_rand(YG_FLOAT64, sx, 2, -2, 2, 51),
              *r = yg_test_rand(YG_FLOAT64, sx, 2, -2, 2, 52),
              *w = yg_test_rand(YG_FLOAT64, sw, 1, 0.5, 2, 53),
              *b = yg_test_rand(YG_FLOAT64, sw, 1, -1, 1, 54);
    yg_tensor *in[4] = {x, r, w, b}, *a = NULL, *c = NULL;
    yg_fuser_stats before = yg_fuser_get_stats();
    YG_CHECK(yg_graph_run(g, in, 4, &a, 1));
    YG_CHECK(yg_graph_run(f, in, 4, &c, 1));
    yg_fuser_stats after = yg_fuser_get_stats();
    assert_true(after.kernels_compiled + after.disk_cache_hits + after.memory_cache_hits >
                before.kernels_compiled + before.disk_cache_hits + before.memory_cache_hits);
    expect_close(a, c, 1e-12);
    yg_release(a);
    yg_release(c);
    /* Rows of 6 for normalized_shape [5]; a weight of one value. */
    yg_tensor *x6 = yg_test_rand(YG_FLOAT64, sbad, 2, -2, 2, 55),
              *w1 = yg_test_rand(YG_FLOAT64, s1, 1, 0.5, 2, 56);
    yg_tensor *bad[2][4] = {{x6, x6, w, b}, {x, r, w1, b}};
    for (int k = 0; k < 2; k++) {
        char want[512];
        a = c = NULL;
        assert_int_not_equal(yg_graph_run(g, bad[k], 4, &a, 1), YG_OK);
        snprintf(want, sizeof want, "%s", yg_last_error());
        assert_int_not_equal(yg_graph_run(f, bad[k], 4, &c, 1), YG_OK);
        /* The same message, inside the group's context. */
        const char *inner = strstr(want, "layer_norm: ");
        assert_non_null(inner);
        assert_non_null(strstr(yg_last_error(), inner));
        assert_non_null(strstr(yg_last_error(), "prim::FusionGroup"));
        assert_null(c);
    }
    yg_release(x6);
    yg_release(w1);
    for (int i = 0; i < 4; i++)
        yg_release(in[i]);
    yg_graph_release(g);
    yg_graph_release(f);
}

/* Mixed dtypes, in-place writes and non-pointwise ops end groups. */
static void test_what_is_not_fused(void **state) {
    (void)state;
    const char *text = "graph(%x : Tensor(dtype=float32, sizes=[4, 4]),"
                       " %i : Tensor(dtype=float64, sizes=[4, 4])):\n"
                       "  %a = exp(%x)\n"
                       "  %b = neg(%a)\n"
                       "  %c = mm(%b, %b)\n"
                       "  %d = sin(%c)\n"
                       "  %e = add_(%d, %c)\n"
                       "  %f = cos(%i)\n"
                       "  %g = neg(%f)\n"
                       "  return (%e, %g)\n";
    yg_graph *f = parse(text);
    YG_CHECK(yg_graph_fuse(f));
    /* exp+neg (float32) and cos+neg (float64); sin feeds add_, which
     * writes sin's result: sin stays. */
    assert_int_equal(count_kind(f, "prim::FusionGroup"), 2);
    assert_int_equal(count_kind(f, "sin"), 1);
    assert_int_equal(count_kind(f, "mm"), 1);
    yg_graph_release(f);
}

/* ---- every pointwise op of the YAML ---- */

/* A graph applying every fusible op (generated/fuser/table.c) of yg__ops to
 * inputs %x, %y, %z of dtype dt, scalar arguments without a default set to
 * 0.5; every result is an output.  Fused, it is a handful of groups. */
static yg_graph *all_ops_graph(yg_dtype dt, int *n_ops) {
    yg_graph *g = NULL;
    yg_ir_value *in[3];
    yg_ir_type t = yg_ir_type_tensor();
    t.dtype = dt;
    t.device = YG_CPU;
    t.ndim = 1;
    t.sizes[0] = 37;
    YG_CHECK(yg_graph_create(&g));
    YG_CHECK(yg_graph_add_input(g, &t, "x", &in[0]));
    YG_CHECK(yg_graph_add_input(g, &t, "y", &in[1]));
    YG_CHECK(yg_graph_add_input(g, &t, "z", &in[2]));
    yg_ir_value **outs = calloc((size_t)yg__ops_count, sizeof *outs);
    int k = 0;
    for (int i = 0; i < yg__ops_count; i++) {
        const yg_fuse_op *f = &yg__fuse_ops[i];
        if (f->expr[0] == NULL || f->n_inputs > 3 || f->n_inputs < 1)
            continue;
        yg_ir_node *n = NULL;
        YG_CHECK(yg_graph_add_node(g, yg__ops[i].name, in, f->n_inputs, 1, &n));
        for (int a = 0; a < f->n_scalars; a++)
            if (isnan(f->scalar_defaults[a]))
                YG_CHECK(yg_ir_node_set_float(n, f->scalar_names[a], 0.5));
        outs[k++] = yg_ir_node_output(n, 0);
    }
    YG_CHECK(yg_graph_set_outputs(g, outs, k));
    free(outs);
    *n_ops = k;
    return g;
}

/* Every pointwise op, fused on the CPU, equals the unfused graph. */
static void test_every_pointwise_op_fuses(void **state) {
    (void)state;
    for (int d = 0; d < 2; d++) {
        yg_dtype dt = d == 0 ? YG_FLOAT32 : YG_FLOAT64;
        int n_ops = 0;
        yg_graph *g = all_ops_graph(dt, &n_ops), *f = NULL;
        YG_CHECK(yg_graph_clone(g, &f));
        YG_CHECK(yg_graph_fuse(f));
        int groups = count_kind(f, "prim::FusionGroup");
        int left = 0;
        for (yg_ir_node *n = yg_graph_first_node(f); n != NULL; n = yg_ir_node_next(n))
            left += strcmp(yg_ir_node_kind(n), "prim::FusionGroup") != 0;
        printf("%s: %d pointwise ops, %d fusion groups, %d nodes left outside (other "
               "output dtypes)\n",
               d == 0 ? "float32" : "float64",
               n_ops,
               groups,
               left);
        assert_true(groups >= 1);
        int64_t s[1] = {37};
        yg_tensor *in[3];
        for (int i = 0; i < 3; i++)
            in[i] = yg_test_rand(dt, s, 1, 0.1, 0.9, 20 + (uint64_t)i);
        yg_tensor **a = calloc((size_t)n_ops, sizeof *a), **c = calloc((size_t)n_ops, sizeof *c);
        yg_fuser_stats before = yg_fuser_get_stats();
        YG_CHECK(yg_graph_run(g, in, 3, a, n_ops));
        YG_CHECK(yg_graph_run(f, in, 3, c, n_ops));
        if (yg_fuser_get_stats().fallbacks != before.fallbacks)
            fail_msg("fell back: %s", yg_fuser_get_stats().last_fallback);
        for (int i = 0; i < n_ops; i++) {
            double *x = yg_test_values(a[i]), *y = yg_test_values(c[i]);
            for (int64_t e = 0; e < yg_tensor_numel(a[i]); e++) {
                bool same = (isnan(x[e]) && isnan(y[e])) || x[e] == y[e] ||
                            fabs(x[e] - y[e]) <= (d == 0 ? 1e-5 : 1e-12) * (1 + fabs(x[e]));
                if (!same)
                    fail_msg(
                        "output %d [%lld]: unfused %.9g, fused %.9g", i, (long long)e, x[e], y[e]);
            }
            free(x);
            free(y);
        }
        yg_release_list(a, n_ops);
        yg_release_list(c, n_ops);
        for (int i = 0; i < 3; i++)
            yg_release(in[i]);
        yg_graph_release(g);
        yg_graph_release(f);
    }
}

/* The CUDA form of every group compiles with NVRTC, and ptxas assembles
 * the PTX for sm_80 and sm_90 (no GPU needed). */
/* Compiles group k of f to PTX for compute_80 and has ptxas assemble it
 * for sm_80 and sm_90; both index widths must be there. */
static void check_ptx(yg_graph *f, int k, const char *what) {
    char *src = NULL, *ptx = NULL, path[256], cmd[800];
    YG_CHECK(yg_fuser_cuda_ptx(f, k, "compute_80", &src, &ptx));
    assert_non_null(strstr(ptx, ".entry yg_fused_kernel("));
    assert_non_null(strstr(ptx, ".entry yg_fused_kernel_i32("));
    snprintf(path, sizeof path, "/tmp/yg-ptx-%d-%s-%d.ptx", (int)getpid(), what, k);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(ptx, fp);
    fclose(fp);
    for (int a = 0; a < 2; a++) {
        snprintf(cmd,
                 sizeof cmd,
                 "'%s' -arch=%s '%s' -o /dev/null",
                 YG_PTXAS,
                 a == 0 ? "sm_80" : "sm_90",
                 path);
        if (system(cmd) != 0)
            fail_msg("ptxas rejected %s group %d (%s):\n%s", what, k, a == 0 ? "sm_80" : "sm_90", src);
    }
    unlink(path);
    yg_string_release(src);
    yg_string_release(ptx);
}

static void test_every_group_compiles_to_ptx(void **state) {
    (void)state;
    if (YG_PTXAS[0] == '\0') {
        yg_test_skip("yagrad was built without the CUDA toolkit (no NVRTC, no ptxas)");
    }
    int checked = 0;
    for (int d = 0; d < 2; d++) {
        const char *dn = d == 0 ? "float32" : "float64";
        int n_ops = 0;
        yg_graph *f = all_ops_graph(d == 0 ? YG_FLOAT32 : YG_FLOAT64, &n_ops);
        YG_CHECK(yg_graph_fuse(f));
        int groups = count_kind(f, "prim::FusionGroup");
        for (int k = 0; k < groups; k++, checked++)
            check_ptx(f, k, dn);
        yg_graph_release(f);
        /* Each reduction anchor's row kernel. */
        static const char *const anchors[] = {
            "  %y = softmax[dim=-1](%b)\n  return (%y, %a)\n",
            "  %y = log_softmax[dim=1](%b)\n  return (%y)\n",
            "  %y = sum.dim[dim=[-1], keepdim=1](%b)\n  return (%y, %b)\n",
            "  %y = layer_norm[eps=0.001, normalized_shape=[37]](%b, %w, %c)\n  return (%y)\n",
        };
        for (size_t i = 0; i < sizeof anchors / sizeof anchors[0]; i++, checked++) {
            char text[1024];
            snprintf(text, sizeof text,
                     "graph(%%x : Tensor(dtype=%s, sizes=[6, 37]),"
                     " %%w : Tensor(dtype=%s, sizes=[37])):\n"
                     "  %%a = mul(%%x, %%w)\n"
                     "  %%b = tanh(%%a)\n"
                     "  %%c = mul.Scalar[other=2.5](%%w)\n%s",
                     dn, dn, anchors[i]);
            yg_graph *h = parse(text);
            YG_CHECK(yg_graph_fuse(h));
            assert_int_equal(count_kind(h, "prim::FusionGroup"), 1);
            check_ptx(h, 0, dn);
            yg_graph_release(h);
        }
    }
    printf("%d groups compiled to PTX and assembled for sm_80 and sm_90\n", checked);
    assert_true(checked >= 10);
}

/* The 32-bit kernel is allowed exactly when every index fits int32. */
static void test_cuda_index32_choice(void **state) {
    (void)state;
    int64_t sizes[2] = {1000, 1000}, contig[4] = {1000, 1, 1000, 1}, bcast[4] = {1000, 1, 0, 1};
    assert_true(yg__fuser_cuda_index32_ok(1000000, 2, sizes, contig, 2, 65536));
    assert_true(yg__fuser_cuda_index32_ok(1000000, 2, sizes, bcast, 2, 65536));
    /* n plus the grid's step past INT32_MAX. */
    int64_t big[1] = {INT32_MAX - 10}, one[2] = {1, 1};
    assert_false(yg__fuser_cuda_index32_ok(big[0], 1, big, one, 2, 65536));
    assert_true(yg__fuser_cuda_index32_ok(big[0], 1, big, one, 2, 10));
    /* A small output reading a wide stride: the offset passes int32. */
    int64_t s2[2] = {3, 4}, wide[4] = {4, 1, (int64_t)1 << 31, 1};
    assert_false(yg__fuser_cuda_index32_ok(12, 2, s2, wide, 2, 128));
    /* Empty: nothing is indexed. */
    int64_t e[2] = {0, 5};
    assert_true(yg__fuser_cuda_index32_ok(0, 2, e, wide, 2, 128));
    /* Overflowing products are refused, not wrapped. */
    int64_t h[1] = {INT64_MAX / 2}, hs[1] = {4};
    assert_false(yg__fuser_cuda_index32_ok(10, 1, h, hs, 1, 1));
}

/* ---- caches and fallbacks, across processes ---- */

static char self_path[1024];

/* Runs this program with one argument and the environment as it is;
 * returns its exit status. */
static int run_child(const char *arg) {
    pid_t pid;
    char *argv[] = {self_path, (char *)arg, NULL};
    assert_int_equal(posix_spawn(&pid, self_path, NULL, NULL, argv, environ), 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

/* The child: runs the chain once, exits 0 when the kernel came from the
 * disk cache without compiling, 1 when it was compiled, 2 on a wrong
 * result or a fallback. */
static int child_main(void) {
    yg_fuser_stats before = yg_fuser_get_stats();
    int groups = check_chain(YG_FLOAT32, 9, 11, 1.5, false, 1e-6);
    yg_fuser_stats after = yg_fuser_get_stats();
    if (groups != 1 || after.fallbacks != before.fallbacks)
        return 2;
    if (after.kernels_compiled == before.kernels_compiled &&
        after.disk_cache_hits > before.disk_cache_hits)
        return 0;
    return 1;
}

static void test_disk_cache_is_shared_and_rebuilt_when_corrupt(void **state) {
    (void)state;
    char dir[256], *run_dir = strdup(getenv("YG_FUSER_CACHE_DIR"));
    use_cache_dir("disk", dir, sizeof dir);
    /* A first process compiles, a second loads what the first wrote. */
    assert_int_equal(run_child("--child"), 1);
    assert_int_equal(run_child("--child"), 0);
    /* Corrupt every cached object: the next process rebuilds and still
     * computes the right values. */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "for f in '%s'/*.so; do echo garbage > \"$f\"; done", dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(run_child("--child"), 1);
    assert_int_equal(run_child("--child"), 0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    setenv("YG_FUSER_CACHE_DIR", run_dir, 1);
    free(run_dir);
}

static void test_missing_compiler_falls_back_with_reason(void **state) {
    (void)state;
    char dir[256], *run_dir = strdup(getenv("YG_FUSER_CACHE_DIR"));
    use_cache_dir("nocc", dir, sizeof dir);
    setenv("YG_FUSER_CC", "/nonexistent/cc", 1);
    yg_fuser_stats before = yg_fuser_get_stats();
    /* alpha 0.75 appears in no other test's kernel: not in memory. */
    assert_int_equal(check_chain(YG_FLOAT32, 6, 6, 0.75, false, 0), 1);
    yg_fuser_stats after = yg_fuser_get_stats();
    unsetenv("YG_FUSER_CC");
    assert_true(after.fallbacks > before.fallbacks);
    assert_non_null(strstr(after.last_fallback, "compiler '/nonexistent/cc' failed"));
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    setenv("YG_FUSER_CACHE_DIR", run_dir, 1);
    free(run_dir);
}

/* ---- the CUDA path ---- */

/* A group's CUDA kernel for the PTX tests: a chain with an alpha no other
 * test uses, so its PTX is in no cache yet. */
static yg_graph *ptx_graph(double alpha) {
    char text[1024];
    yg_graph *f = parse(chain_text("float32", 3, 4, alpha, text, sizeof text));
    YG_CHECK(yg_graph_fuse(f));
    assert_int_equal(count_kind(f, "prim::FusionGroup"), 1);
    return f;
}

/* Child: makes the PTX of ptx_graph(1.625); exits 0 when it came from
 * the disk cache without NVRTC, 1 when NVRTC compiled it, 2 on error. */
static int ptx_child_main(void) {
    yg_graph *f = ptx_graph(1.625);
    char *src = NULL, *ptx = NULL;
    yg_fuser_stats before = yg_fuser_get_stats();
    yg_status st = yg_fuser_cuda_ptx(f, 0, "compute_80", &src, &ptx);
    yg_fuser_stats after = yg_fuser_get_stats();
    yg_string_release(src);
    yg_string_release(ptx);
    yg_graph_release(f);
    if (st != YG_OK)
        return 2;
    if (after.cuda_kernels_compiled == before.cuda_kernels_compiled &&
        after.cuda_disk_cache_hits == before.cuda_disk_cache_hits + 1)
        return 0;
    return after.cuda_kernels_compiled == before.cuda_kernels_compiled + 1 ? 1 : 2;
}

/* NVRTC runs once per kernel: a second request in the process is a
 * memory hit, a second process reads the disk cache, and a corrupted
 * file is compiled again. */
static void test_cuda_ptx_is_cached_in_memory_and_on_disk(void **state) {
    (void)state;
    if (YG_PTXAS[0] == '\0') {
        yg_test_skip("yagrad was built without the CUDA toolkit (no NVRTC)");
    }
    yg_graph *f = ptx_graph(1.375);
    char *src = NULL, *ptx = NULL, *ptx2 = NULL;
    yg_fuser_stats s0 = yg_fuser_get_stats();
    YG_CHECK(yg_fuser_cuda_ptx(f, 0, "compute_80", &src, &ptx));
    yg_fuser_stats s1 = yg_fuser_get_stats();
    yg_string_release(src);
    YG_CHECK(yg_fuser_cuda_ptx(f, 0, "compute_80", &src, &ptx2));
    yg_fuser_stats s2 = yg_fuser_get_stats();
    assert_int_equal(s1.cuda_kernels_compiled, s0.cuda_kernels_compiled + 1);
    assert_int_equal(s2.cuda_kernels_compiled, s1.cuda_kernels_compiled);
    assert_int_equal(s2.cuda_memory_cache_hits, s1.cuda_memory_cache_hits + 1);
    assert_string_equal(ptx, ptx2);
    /* Another architecture is another kernel. */
    yg_string_release(ptx2);
    yg_string_release(src);
    YG_CHECK(yg_fuser_cuda_ptx(f, 0, "compute_90", &src, &ptx2));
    assert_int_equal(yg_fuser_get_stats().cuda_kernels_compiled, s2.cuda_kernels_compiled + 1);
    yg_string_release(src);
    yg_string_release(ptx);
    yg_string_release(ptx2);
    yg_graph_release(f);

    char dir[256], cmd[600], *run_dir = strdup(getenv("YG_FUSER_CACHE_DIR"));
    use_cache_dir("ptx", dir, sizeof dir);
    assert_int_equal(run_child("--ptx-child"), 1);
    assert_int_equal(run_child("--ptx-child"), 0);
    snprintf(cmd, sizeof cmd, "for f in '%s'/*.ptx; do echo garbage > \"$f\"; done", dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(run_child("--ptx-child"), 1);
    assert_int_equal(run_child("--ptx-child"), 0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    setenv("YG_FUSER_CACHE_DIR", run_dir, 1);
    free(run_dir);
}

/* The host packs codegen's struct yg_fused_args (the kernels' one
 * parameter) in as many bytes as the PTX declares, with ndim and the
 * pointers where the PTX reads them, for an elementwise and an anchored
 * group, for each dtype. */
static void test_cuda_args_block_matches_the_ptx(void **state) {
    (void)state;
    if (YG_PTXAS[0] == '\0') {
        yg_test_skip("yagrad was built without the CUDA toolkit (no NVRTC)");
    }
    static const char *const texts[] = {
        /* 2 outputs, 3 inputs */
        "graph(%x : Tensor(dtype=DT, sizes=[3, 4]), %w : Tensor(dtype=DT, sizes=[3, 4]),"
        " %b : Tensor(dtype=DT, sizes=[4])):\n"
        "  %p = mul(%x, %w)\n  %q = add(%p, %b)\n  %t = tanh(%q)\n  return (%t, %q)\n",
        /* 1 output, 2 inputs, a softmax anchor */
        "graph(%x : Tensor(dtype=DT, sizes=[3, 4]), %w : Tensor(dtype=DT, sizes=[4])):\n"
        "  %p = mul(%x, %w)\n  %t = tanh(%p)\n  %y = softmax[dim=-1](%t)\n  return (%y)\n",
    };
    static const int nops[] = {5, 3};
    for (int d = 0; d < 2; d++) {
        for (int k = 0; k < 2; k++) {
            char text[1024], *src = NULL, *ptx = NULL;
            const char *dn = d == 0 ? "float32" : "float64";
            /* DT -> the dtype */
            size_t o = 0;
            for (const char *c = texts[k]; *c != '\0' && o + 8 < sizeof text; c++) {
                if (c[0] == 'D' && c[1] == 'T') {
                    o += (size_t)snprintf(text + o, sizeof text - o, "%s", dn);
                    c++;
                } else {
                    text[o++] = *c;
                }
            }
            text[o] = '\0';
            yg_graph *f = parse(text);
            YG_CHECK(yg_graph_fuse(f));
            YG_CHECK(yg_fuser_cuda_ptx(f, 0, "compute_80", &src, &ptx));
            for (int w = 0; w < 2; w++) {
                const char *name = w == 0 ? "yg_fused_kernel_param_0[" : "yg_fused_kernel_i32_param_0[";
                const char *p = strstr(ptx, name);
                long bytes = -1;
                assert_non_null(p);
                assert_int_equal(sscanf(p + strlen(name), "%ld", &bytes), 1);
                if (bytes != (long)yg__fuser_cuda_args_size(nops[k]))
                    fail_msg("%s %s group %d: the PTX takes %ld bytes, the host packs %zu",
                             dn, w == 0 ? "64-bit" : "32-bit", k, bytes,
                             yg__fuser_cuda_args_size(nops[k]));
            }
            /* ndim, an int, at byte 8; the first pointer after the
             * sizes and every operand's strides. */
            size_t ptrs = 16 + 8 * YG_MAX_DIMS + 8 * (size_t)(nops[k] * YG_MAX_DIMS);
            char want[32];
            snprintf(want, sizeof want, "+%zu];", ptrs);
            assert_non_null(strstr(ptx, want));
            const char *nd = strstr(ptx, "+8];");
            assert_non_null(nd);
            while (nd > ptx && nd[-1] != '\n')
                nd--;
            assert_true(strncmp(nd, "\tld.param.u32", 13) == 0);
            yg_string_release(src);
            yg_string_release(ptx);
            yg_graph_release(f);
        }
    }
    /* The largest group's block fits the 4 KiB every GPU takes. */
    assert_true(yg__fuser_cuda_args_size(YG_FUSE_MAX_INPUTS + YG_FUSE_MAX_OUTPUTS) <= 4096);
}

/* Marks t's storage as device dev, index 0 (undone with YG_CPU). */
static void mark(yg_tensor *t, yg_device dev) {
    t->storage->device = dev;
    t->storage->device_index = 0;
}

/* Inputs on two devices are refused before anything runs, naming both,
 * as an op refuses them; outputs stay NULL. */
static void test_group_refuses_inputs_on_two_devices(void **state) {
    (void)state;
    char text[1024];
    yg_graph *f = parse(chain_text("float32", 3, 4, 1.0, text, sizeof text));
    YG_CHECK(yg_graph_fuse(f));
    int64_t s[2] = {3, 4}, sb[1] = {4};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, s, 2, -1, 1, 60),
              *w = yg_test_rand(YG_FLOAT32, s, 2, -1, 1, 61),
              *b = yg_test_rand(YG_FLOAT32, sb, 1, -1, 1, 62);
    yg_tensor *in[3] = {x, w, b}, *out[2] = {0};
    mark(w, YG_CUDA);
    yg_status st = yg_graph_run(f, in, 3, out, 2);
    mark(w, YG_CPU);
    YG_EXPECT_ERROR(st,
                    YG_ERR_DEVICE,
                    "prim::FusionGroup: expected all tensors on one device, but x is on cpu "
                    "and w on cuda:0");
    assert_null(out[0]);
    assert_null(out[1]);
    yg_release(x);
    yg_release(w);
    yg_release(b);
    yg_graph_release(f);
}

/* Where no GPU is usable, a group whose inputs say cuda:0 finds no driver
 * (or no NVRTC): it counts a fallback with the reason and the interpreter
 * runs the eager ops, which say there is no device.  (With a GPU the
 * test_cuda_runs_* tests run the kernels instead.) */
static void test_cuda_group_without_a_driver_falls_back_with_reason(void **state) {
    (void)state;
    if (yg_cuda_check() == YG_OK) {
        printf("a device is usable here: the test_cuda_runs_* tests run the kernels\n");
        return;
    }
    /* Without the CUDA backend no CUDA tensor can exist, not even to fall
     * back on: the fake ones below would reach a device nobody serves. */
    if (strstr(yg_build_info(), " -cuda") != NULL) {
        printf("built without CUDA: no CUDA tensor can exist, so no CUDA group runs\n");
        YG_EXPECT_ERROR(yg_cuda_check(), YG_ERR_DEVICE, "cuda: built without CUDA");
        return;
    }
    char text[1024];
    yg_graph *f = parse(chain_text("float32", 3, 4, 1.0, text, sizeof text));
    YG_CHECK(yg_graph_fuse(f));
    int64_t s[2] = {3, 4}, sb[1] = {4};
    yg_tensor *in[3] = {yg_test_rand(YG_FLOAT32, s, 2, -1, 1, 63),
                        yg_test_rand(YG_FLOAT32, s, 2, -1, 1, 64),
                        yg_test_rand(YG_FLOAT32, sb, 1, -1, 1, 65)};
    yg_tensor *out[2] = {0};
    for (int i = 0; i < 3; i++)
        mark(in[i], YG_CUDA);
    yg_fuser_stats before = yg_fuser_get_stats();
    yg_status st = yg_graph_run(f, in, 3, out, 2);
    yg_fuser_stats after = yg_fuser_get_stats();
    for (int i = 0; i < 3; i++)
        mark(in[i], YG_CPU);
    assert_int_equal(st, YG_ERR_DEVICE); /* the eager ops: no device */
    assert_null(out[0]);
    assert_null(out[1]);
    assert_int_equal(after.fallbacks, before.fallbacks + 1);
    assert_int_equal(after.cuda_launches, before.cuda_launches);
    printf("fallback: %s\n", after.last_fallback);
    assert_true(strstr(after.last_fallback, "fuser: ") == after.last_fallback);
    assert_true(strstr(after.last_fallback, "CUDA driver") != NULL ||
                strstr(after.last_fallback, "without NVRTC") != NULL);
    for (int i = 0; i < 3; i++)
        yg_release(in[i]);
    yg_graph_release(f);
}

/* ---- on a GPU ---- */

/* Skips the calling test when no device is usable or yagrad cannot
 * compile kernels for one, saying why. */
static void need_device(void) {
    yg_test_need_gpu();
    if (YG_PTXAS[0] == '\0')
        yg_test_skip("built without CUDA's NVRTC: fused groups on a GPU run the eager ops");
}

/* t on cuda:0 with the same geometry when it is contiguous or a
 * transpose of a contiguous matrix (a view on the device). */
static yg_tensor *on_device(const yg_tensor *t) {
    yg_tensor *d = NULL, *v = NULL, *dv = NULL;
    if (yg_tensor_is_contiguous(t)) {
        YG_CHECK(yg_tensor_to_device(t, YG_CUDA, 0, &d));
        return d;
    }
    assert_int_equal(yg_tensor_ndim(t), 2);
    YG_CHECK(yg_transpose(t, 0, 1, &v));
    assert_true(yg_tensor_is_contiguous(v));
    YG_CHECK(yg_tensor_to_device(v, YG_CUDA, 0, &dv));
    YG_CHECK(yg_transpose(dv, 0, 1, &d));
    yg_release(v);
    yg_release(dv);
    return d;
}

/* Runs text unfused on the CPU inputs and fused on copies of them on
 * cuda:0; the outputs must be on cuda:0, of the same sizes and close; a
 * fused kernel must have been launched, with no fallback. */
static void
check_on_gpu(const char *text, yg_tensor *const *in, int n_in, int n_out, double tol) {
    yg_graph *g = parse(text), *f = parse(text);
    YG_CHECK(yg_graph_fuse(f));
    assert_true(count_kind(f, "prim::FusionGroup") >= 1);
    yg_tensor *din[8] = {0}, *a[8] = {0}, *c[8] = {0};
    assert_true(n_in <= 8 && n_out <= 8);
    for (int i = 0; i < n_in; i++)
        din[i] = on_device(in[i]);
    yg_fuser_stats before = yg_fuser_get_stats();
    YG_CHECK(yg_graph_run(g, in, n_in, a, n_out));
    YG_CHECK(yg_graph_run(f, din, n_in, c, n_out));
    YG_CHECK(yg_cuda_synchronize(0));
    yg_fuser_stats after = yg_fuser_get_stats();
    if (after.fallbacks != before.fallbacks)
        fail_msg("fell back: %s", after.last_fallback);
    assert_true(after.cuda_launches > before.cuda_launches);
    for (int i = 0; i < n_out; i++) {
        yg_tensor *h = NULL;
        assert_int_equal(yg_tensor_device(c[i]), YG_CUDA);
        assert_int_equal(yg_tensor_ndim(a[i]), yg_tensor_ndim(c[i]));
        for (int d = 0; d < yg_tensor_ndim(a[i]); d++)
            assert_int_equal(yg_tensor_sizes(a[i])[d], yg_tensor_sizes(c[i])[d]);
        YG_CHECK(yg_tensor_to_device(c[i], YG_CPU, 0, &h));
        expect_close(a[i], h, tol);
        yg_release(h);
        yg_release(a[i]);
        yg_release(c[i]);
    }
    for (int i = 0; i < n_in; i++)
        yg_release(din[i]);
    yg_graph_release(g);
    yg_graph_release(f);
}

/* tanh(x * w + b) * sigmoid(x) on cuda:0 (b broadcast along rows), in
 * float32 and float64, with a transposed x, small and large (the
 * grid-stride loop past one block per element). */
static void test_cuda_runs_the_chain_like_the_cpu(void **state) {
    (void)state;
    need_device();
    static const struct {
        yg_dtype dt;
        int m, n;
        double alpha;
        bool transpose;
        double tol;
    } cases[] = {
        {YG_FLOAT32, 7, 5, 1.0, false, 1e-5},
        {YG_FLOAT64, 7, 5, 1.0, false, 1e-12},
        {YG_FLOAT32, 300, 301, 0.5, true, 1e-5},
        {YG_FLOAT64, 256, 512, 2.0, true, 1e-12},
        {YG_FLOAT32, 4099, 4097, 1.0, false, 1e-5}, /* > 65535 blocks of 256 */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char text[1024];
        const char *dn = cases[k].dt == YG_FLOAT32 ? "float32" : "float64";
        int m = cases[k].m, n = cases[k].n;
        int64_t s[2] = {m, n}, st[2] = {n, m}, sb[1] = {n};
        yg_tensor *x = NULL, *xt = NULL;
        if (cases[k].transpose) {
            xt = yg_test_rand(cases[k].dt, st, 2, -2, 2, 70);
            YG_CHECK(yg_transpose(xt, 0, 1, &x));
        } else {
            x = yg_test_rand(cases[k].dt, s, 2, -2, 2, 70);
        }
        yg_tensor *in[3] = {x, yg_test_rand(cases[k].dt, s, 2, -1, 1, 71),
                            yg_test_rand(cases[k].dt, sb, 1, -1, 1, 72)};
        check_on_gpu(chain_text(dn, m, n, cases[k].alpha, text, sizeof text), in, 3, 2,
                     cases[k].tol);
        for (int i = 0; i < 3; i++)
            yg_release(in[i]);
        yg_release(xt);
    }
}

/* One thread's share of the two-thread test: its fused graph run 10
 * times on its own stream over cuda:0 inputs, each result read back and
 * compared with the unfused CPU run (no cmocka here: another thread). */
typedef struct fused_worker {
    yg_graph *f;
    yg_tensor *in[3];   /* on cuda:0 */
    yg_tensor *want[2]; /* the CPU's */
    yg_status st;
    char why[256];
    double worst;
} fused_worker;

static void *fused_worker_run(void *arg) {
    fused_worker *w = arg;
    yg_cuda_stream *s = NULL;
    w->st = yg_cuda_stream_create(0, &s);
    if (w->st == YG_OK)
        w->st = yg_cuda_set_stream(0, s);
    for (int round = 0; round < 10 && w->st == YG_OK; round++) {
        yg_tensor *out[2] = {NULL, NULL};
        w->st = yg_graph_run(w->f, w->in, 3, out, 2);
        for (int i = 0; i < 2 && w->st == YG_OK; i++) {
            yg_tensor *h = NULL;
            int64_t n = yg_tensor_numel(w->want[i]);
            double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
            w->st = yg_tensor_to_device(out[i], YG_CPU, 0, &h); /* waits for s */
            if (w->st == YG_OK && (a == NULL || b == NULL))
                w->st = YG_ERR_OUT_OF_MEMORY;
            if (w->st == YG_OK)
                w->st = yg_tensor_to_f64(h, a, n);
            if (w->st == YG_OK)
                w->st = yg_tensor_to_f64(w->want[i], b, n);
            for (int64_t j = 0; w->st == YG_OK && j < n; j++)
                w->worst = fabs(a[j] - b[j]) > w->worst ? fabs(a[j] - b[j]) : w->worst;
            free(a);
            free(b);
            yg_release(h);
        }
        yg_release(out[0]);
        yg_release(out[1]);
    }
    if (w->st != YG_OK)
        snprintf(w->why, sizeof w->why, "%s", yg_last_error());
    if (yg_cuda_set_stream(0, NULL) != YG_OK && w->st == YG_OK)
        w->st = YG_ERR_DEVICE;
    yg_cuda_stream_destroy(s);
    return NULL;
}

/* Issue 28, item 11: fused kernels launched on user streams from two
 * threads at once (each thread its own stream and fused graph, over the
 * same inputs) give the unfused CPU results every time, without falling
 * back. */
static void test_cuda_runs_on_user_streams_from_two_threads(void **state) {
    (void)state;
    need_device();
    char text[1024];
    int64_t s[2] = {300, 301}, sb[1] = {301};
    yg_tensor *in[3] = {yg_test_rand(YG_FLOAT32, s, 2, -2, 2, 90),
                        yg_test_rand(YG_FLOAT32, s, 2, -1, 1, 91),
                        yg_test_rand(YG_FLOAT32, sb, 1, -1, 1, 92)};
    yg_graph *g = parse(chain_text("float32", 300, 301, 1.0, text, sizeof text));
    fused_worker w[2];
    pthread_t th[2];
    memset(w, 0, sizeof w);
    for (int k = 0; k < 2; k++) {
        w[k].f = parse(text);
        YG_CHECK(yg_graph_fuse(w[k].f));
        for (int i = 0; i < 3; i++)
            w[k].in[i] = on_device(in[i]);
    }
    YG_CHECK(yg_graph_run(g, in, 3, w[0].want, 2));
    for (int i = 0; i < 2; i++)
        w[1].want[i] = yg_retain(w[0].want[i]);
    YG_CHECK(yg_cuda_synchronize(0)); /* the inputs are on the device */
    yg_fuser_stats before = yg_fuser_get_stats();
    for (int k = 0; k < 2; k++)
        assert_int_equal(pthread_create(&th[k], NULL, fused_worker_run, &w[k]), 0);
    for (int k = 0; k < 2; k++)
        assert_int_equal(pthread_join(th[k], NULL), 0);
    yg_fuser_stats after = yg_fuser_get_stats();
    if (after.fallbacks != before.fallbacks)
        fail_msg("fell back: %s", after.last_fallback);
    assert_true(after.cuda_launches >= before.cuda_launches + 20);
    for (int k = 0; k < 2; k++) {
        printf("thread %d: within %.3g of the cpu\n", k, w[k].worst);
        if (w[k].st != YG_OK)
            fail_msg("thread %d: %s: %s", k, yg_status_name(w[k].st), w[k].why);
        assert_true(w[k].worst <= 1e-5);
        for (int i = 0; i < 3; i++)
            yg_release(w[k].in[i]);
        for (int i = 0; i < 2; i++)
            yg_release(w[k].want[i]);
        yg_graph_release(w[k].f);
    }
    for (int i = 0; i < 3; i++)
        yg_release(in[i]);
    yg_graph_release(g);
}

/* Size-1 dims and a 0-dim input broadcast; cat exits write their slices
 * of one result on the device too. */
static void test_cuda_runs_broadcasts_and_cats_like_the_cpu(void **state) {
    (void)state;
    need_device();
    const char *bcast = "graph(%x : Tensor(dtype=float32, sizes=[4, 1, 6]),"
                        " %y : Tensor(dtype=float32, sizes=[3, 1]), %z : Tensor(dtype=float32)):\n"
                        "  %a = mul(%x, %y)\n"
                        "  %b = sub[alpha=3](%a, %z)\n"
                        "  %c = exp(%b)\n"
                        "  %d = div.Scalar[other=7](%c)\n"
                        "  return (%d)\n";
    int64_t sx[3] = {4, 1, 6}, sy[2] = {3, 1};
    yg_tensor *in[3] = {yg_test_rand(YG_FLOAT32, sx, 3, -1, 1, 73),
                        yg_test_rand(YG_FLOAT32, sy, 2, -1, 1, 74), NULL};
    YG_CHECK(yg_tensor_scalar(0.25, YG_FLOAT32, &in[2]));
    check_on_gpu(bcast, in, 3, 1, 1e-5);
    for (int i = 0; i < 3; i++)
        yg_release(in[i]);
    const char *cats = "graph(%x : Tensor(dtype=float64, sizes=[5, 7]),"
                       " %y : Tensor(dtype=float64, sizes=[7])):\n"
                       "  %a = mul(%x, %y)\n"
                       "  %b = tanh(%a)\n"
                       "  %c = sigmoid(%x)\n"
                       "  %d = cat[dim=-1](%a, %b, %c)\n"
                       "  %e = cat[dim=0](%c, %b)\n"
                       "  return (%d, %e, %b)\n";
    int64_t s5[2] = {5, 7}, s7[1] = {7};
    yg_tensor *cin[2] = {yg_test_rand(YG_FLOAT64, s5, 2, -1, 1, 75),
                         yg_test_rand(YG_FLOAT64, s7, 1, -1, 1, 76)};
    check_on_gpu(cats, cin, 2, 3, 1e-12);
    yg_release(cin[0]);
    yg_release(cin[1]);
}

/* softmax, log_softmax, sum and layer_norm anchors on the device: a block
 * per row, rows of 37 (one partial warp) and of 1500 (threads striding). */
static void test_cuda_runs_reduction_anchors_like_the_cpu(void **state) {
    (void)state;
    need_device();
    static const char *const tails[] = {
        "  %y = softmax[dim=-1](%b)\n  return (%y, %a)\n",
        "  %y = log_softmax[dim=1](%b)\n  return (%y)\n",
        "  %y = sum.dim[dim=[-1], keepdim=1](%b)\n  return (%y, %b)\n",
        "  %y = sum.dim[dim=[1]](%b)\n  return (%y)\n",
        "  %y = layer_norm[eps=0.001, normalized_shape=[COLS]](%b, %w, %c)\n  return (%y)\n",
    };
    static const int outs[] = {2, 1, 2, 1, 1};
    static const int cols[] = {37, 1500};
    for (int d = 0; d < 2; d++) {
        yg_dtype dt = d == 0 ? YG_FLOAT32 : YG_FLOAT64;
        const char *dn = d == 0 ? "float32" : "float64";
        for (int ci = 0; ci < 2; ci++) {
            for (int t = 0; t < 2; t++) {
                for (size_t k = 0; k < sizeof tails / sizeof tails[0]; k++) {
                    char tail[256], text[1024];
                    const char *at = strstr(tails[k], "COLS");
                    if (at != NULL)
                        snprintf(tail, sizeof tail, "%.*s%d%s", (int)(at - tails[k]), tails[k],
                                 cols[ci], at + 4);
                    else
                        snprintf(tail, sizeof tail, "%s", tails[k]);
                    snprintf(text, sizeof text,
                             "graph(%%x : Tensor(dtype=%s, sizes=[6, %d]),"
                             " %%w : Tensor(dtype=%s, sizes=[%d])):\n"
                             "  %%a = mul(%%x, %%w)\n"
                             "  %%b = tanh(%%a)\n"
                             "  %%c = mul.Scalar[other=2.5](%%w)\n%s",
                             dn, cols[ci], dn, cols[ci], tail);
                    int64_t s[2] = {6, cols[ci]}, st[2] = {cols[ci], 6}, sw[1] = {cols[ci]};
                    yg_tensor *x = NULL, *xt = NULL;
                    if (t) {
                        xt = yg_test_rand(dt, st, 2, -2, 2, 77);
                        YG_CHECK(yg_transpose(xt, 0, 1, &x));
                    } else {
                        x = yg_test_rand(dt, s, 2, -2, 2, 77);
                    }
                    yg_tensor *in[2] = {x, yg_test_rand(dt, sw, 1, -1, 1, 78)};
                    check_on_gpu(text, in, 2, outs[k], d == 0 ? 1e-5 : 1e-12);
                    yg_release(in[0]);
                    yg_release(in[1]);
                    yg_release(xt);
                }
            }
        }
    }
}

/* A group's first run on the GPU compiles its kernel (NVRTC, for the
 * device's architecture); its next runs launch it again without any
 * cache lookup, and another graph with the same group finds it loaded. */
static void test_cuda_runs_compile_once_then_hit_the_cache(void **state) {
    (void)state;
    need_device();
    char text[1024];
    chain_text("float32", 8, 9, 0.3125, text, sizeof text); /* an alpha of its own */
    int64_t s[2] = {8, 9}, sb[1] = {9};
    yg_tensor *cpu[3] = {yg_test_rand(YG_FLOAT32, s, 2, -1, 1, 80),
                         yg_test_rand(YG_FLOAT32, s, 2, -1, 1, 81),
                         yg_test_rand(YG_FLOAT32, sb, 1, -1, 1, 82)};
    yg_fuser_stats s0 = yg_fuser_get_stats();
    check_on_gpu(text, cpu, 3, 2, 1e-5);
    yg_fuser_stats s1 = yg_fuser_get_stats();
    check_on_gpu(text, cpu, 3, 2, 1e-5); /* a new graph: the loaded kernel */
    yg_fuser_stats s2 = yg_fuser_get_stats();
    printf("compiled %lld, memory hits %lld, launches %lld\n",
           (long long)(s2.cuda_kernels_compiled - s0.cuda_kernels_compiled),
           (long long)(s2.cuda_memory_cache_hits - s0.cuda_memory_cache_hits),
           (long long)(s2.cuda_launches - s0.cuda_launches));
    assert_int_equal(s1.cuda_kernels_compiled, s0.cuda_kernels_compiled + 1);
    assert_int_equal(s2.cuda_kernels_compiled, s1.cuda_kernels_compiled);
    assert_int_equal(s2.cuda_memory_cache_hits, s1.cuda_memory_cache_hits + 1);
    assert_int_equal(s2.cuda_launches, s1.cuda_launches + 1);
    /* One graph run twice: launched twice, looked up once. */
    yg_graph *f = parse(text);
    YG_CHECK(yg_graph_fuse(f));
    yg_tensor *din[3], *out[2] = {0};
    for (int i = 0; i < 3; i++)
        din[i] = on_device(cpu[i]);
    for (int r = 0; r < 2; r++) {
        YG_CHECK(yg_graph_run(f, din, 3, out, 2));
        yg_release(out[0]);
        yg_release(out[1]);
        out[0] = out[1] = NULL;
    }
    yg_fuser_stats s3 = yg_fuser_get_stats();
    assert_int_equal(s3.cuda_launches, s2.cuda_launches + 2);
    assert_int_equal(s3.cuda_memory_cache_hits, s2.cuda_memory_cache_hits + 1);
    assert_int_equal(s3.cuda_kernels_compiled, s2.cuda_kernels_compiled);
    /* A CPU input among cuda:0 ones: refused, naming both. */
    yg_tensor *mixed[3] = {din[0], cpu[1], din[2]};
    YG_EXPECT_ERROR(yg_graph_run(f, mixed, 3, out, 2), YG_ERR_DEVICE,
                    "expected all tensors on one device, but x is on cuda:0 and w on cpu");
    assert_null(out[0]);
    assert_null(out[1]);
    for (int i = 0; i < 3; i++) {
        yg_release(din[i]);
        yg_release(cpu[i]);
    }
    yg_graph_release(f);
}

int main(int argc, char **argv) {
    ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    self_path[n > 0 ? n : 0] = '\0';
    if (argc > 1 && strcmp(argv[1], "--child") == 0)
        return child_main();
    if (argc > 1 && strcmp(argv[1], "--ptx-child") == 0)
        return ptx_child_main();
    /* Kernels go to a folder of this run, removed at the end. */
    char dir[256], cmd[300];
    use_cache_dir("run", dir, sizeof dir);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_fused_matches_unfused),
        cmocka_unit_test(test_broadcast_shapes_match_unfused),
        cmocka_unit_test(test_cat_exits_match_unfused),
        cmocka_unit_test(test_reduction_anchors_match_unfused),
        cmocka_unit_test(test_every_pointwise_op_fuses),
        cmocka_unit_test(test_every_group_compiles_to_ptx),
        cmocka_unit_test(test_cuda_index32_choice),
        cmocka_unit_test(test_siblings_fuse_across_other_nodes),
        cmocka_unit_test(test_what_is_not_fused),
        cmocka_unit_test(test_chunks_move_up_into_the_group),
        cmocka_unit_test(test_layer_norm_anchor_over_unknown_sizes),
        cmocka_unit_test(test_disk_cache_is_shared_and_rebuilt_when_corrupt),
        cmocka_unit_test(test_missing_compiler_falls_back_with_reason),
        cmocka_unit_test(test_cuda_ptx_is_cached_in_memory_and_on_disk),
        cmocka_unit_test(test_cuda_args_block_matches_the_ptx),
        cmocka_unit_test(test_group_refuses_inputs_on_two_devices),
        cmocka_unit_test(test_cuda_group_without_a_driver_falls_back_with_reason),
        cmocka_unit_test(test_cuda_runs_the_chain_like_the_cpu),
        cmocka_unit_test(test_cuda_runs_broadcasts_and_cats_like_the_cpu),
        cmocka_unit_test(test_cuda_runs_reduction_anchors_like_the_cpu),
        cmocka_unit_test(test_cuda_runs_compile_once_then_hit_the_cache),
        cmocka_unit_test(test_cuda_runs_on_user_streams_from_two_threads),
    };
    int rc = YG_TEST_RUN(tests, argc, argv);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        rc = 1;
    return rc;
}
