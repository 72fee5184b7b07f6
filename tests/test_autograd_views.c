/*
 * test_autograd_views.c - the engine on in-place writes and views:
 * in-place ops on leaves, non-leaves and views (rewriting the base's
 * history, refusals), double backward through in-place writes to views,
 * views read after their base was written (regenerated histories, no_grad
 * writes, non-contiguous bases), and accumulating into a stale view .grad.
 * Gradients are checked against out-of-place twins and finite differences.
 */
#define _POSIX_C_SOURCE 200809L /* alarm */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "autograd/node.h"
#include "autograd_util.h"
#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_inplace_arithmetic.h"
#include "yagrad/ops_inplace_fill.h"
#include "yagrad/ops_unary_math.h"
#include "yagrad/ops_trigonometric.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_slicing.h"

/* ---- in-place writes ---- */

static void test_inplace_on_a_leaf_that_requires_grad_is_refused(void **state)
{
    const int64_t s[] = {2};
    const double v[] = {1, 2};
    yg_tensor *x = leaf(s, 1, v), *y = yg_test_tensor(YG_FLOAT64, s, 1, v), *out = NULL;
    (void)state;
    YG_EXPECT_ERROR(yg_mul_(x, y, &out), YG_ERR_AUTOGRAD,
                    "mul_: in-place operation on a leaf tensor that requires grad");
    assert_null(out);
    /* Under no-grad (an optimizer step) it is allowed. */
    {
        bool prev = yg_set_grad_enabled(false);
        YG_CHECK(yg_mul_(x, y, &out));
        yg_set_grad_enabled(prev);
    }
    yg_release(out);
    yg_release(x);
    yg_release(y);
}

static void test_inplace_on_a_view_of_a_leaf_is_refused(void **state)
{
    const int64_t s[] = {2, 2};
    const double v[] = {1, 2, 3, 4};
    yg_tensor *x = leaf(s, 2, v), *xt = NULL, *out = NULL;
    (void)state;
    YG_CHECK(yg_t(x, &xt));
    YG_EXPECT_ERROR(yg_mul_scalar_(xt, 2.0, &out), YG_ERR_AUTOGRAD, "mul_",
                    "view of a leaf tensor that requires grad");
    assert_null(out);
    yg_release(xt);
    yg_release(x);
}

static void test_inplace_on_a_non_leaf_uses_the_old_value(void **state)
{
    /* h = 2x; h *= y (in place); loss = sum(h):
     * d/dx = 2y, d/dy = old h = 2x */
    const int64_t s[] = {3};
    const double xv[] = {1, 2, 3}, yv[] = {4, 5, 6};
    const double gx[] = {8, 10, 12}, gy[] = {2, 4, 6};
    yg_tensor *x = leaf(s, 1, xv), *y = leaf(s, 1, yv), *h = NULL, *same = NULL, *loss = NULL;
    (void)state;
    YG_CHECK(yg_mul_scalar(x, 2.0, &h));
    YG_CHECK(yg_mul_(h, y, &same));
    assert_ptr_equal(same, h);
    assert_string_equal(yg_tensor_grad_fn_name(h), "MulBackward");
    YG_CHECK(yg_sum(h, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    expect_grad(x, s, 1, gx);
    expect_grad(y, s, 1, gy);
    yg_release(loss);
    yg_release(same);
    yg_release(h);
    yg_release(x);
    yg_release(y);
}

static void test_inplace_on_a_view_rewrites_the_base_history(void **state)
{
    /* b = x * 1 ([2, 3]); row = select(b, 0, 1); row *= 3 (in place);
     * loss = sum(b) + sum(row): d/dx = 1 for row 0, 3 + 3 = 6 for row 1 */
    const int64_t s[] = {2, 3};
    const double xv[] = {1, 2, 3, 4, 5, 6}, expected[] = {1, 1, 1, 6, 6, 6};
    yg_tensor *x = leaf(s, 2, xv), *b = NULL, *row = NULL, *same = NULL;
    yg_tensor *sb = NULL, *sr = NULL, *loss = NULL;
    (void)state;
    YG_CHECK(yg_mul_scalar(x, 1.0, &b));
    YG_CHECK(yg_select(b, 0, 1, &row));
    YG_CHECK(yg_mul_scalar_(row, 3.0, &same));
    assert_string_equal(yg_tensor_grad_fn_name(b), "CopySlices");
    assert_string_equal(yg_tensor_grad_fn_name(row), "AsStridedBackward");
    YG_CHECK(yg_sum(b, &sb));
    YG_CHECK(yg_sum(row, &sr));
    YG_CHECK(yg_add(sb, sr, 1.0, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    expect_grad(x, s, 2, expected);
    yg_release(loss);
    yg_release(sr);
    yg_release(sb);
    yg_release(same);
    yg_release(row);
    yg_release(b);
    yg_release(x);
}

static void test_copy_into_a_view_sends_gradient_to_the_source(void **state)
{
    /* b = zeros-like base that does not require grad; b[0] <- src:
     * loss = sum(b * w): d/dsrc = w[0] */
    const int64_t s[] = {2, 2}, rs[] = {2};
    const double wv[] = {1, 2, 3, 4}, srcv[] = {7, 8}, expected[] = {1, 2};
    yg_tensor *b = NULL, *w = yg_test_tensor(YG_FLOAT64, s, 2, wv), *src = leaf(rs, 1, srcv);
    yg_tensor *row = NULL, *same = NULL, *prod = NULL, *loss = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 2, YG_FLOAT64, &b));
    YG_CHECK(yg_select(b, 0, 0, &row));
    YG_CHECK(yg_copy_(row, src, &same));
    assert_true(yg_tensor_requires_grad(b));
    YG_CHECK(yg_mul(b, w, &prod));
    YG_CHECK(yg_sum(prod, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    expect_grad(src, rs, 1, expected);
    yg_release(loss);
    yg_release(prod);
    yg_release(same);
    yg_release(row);
    yg_release(b);
    yg_release(w);
    yg_release(src);
}

static void test_inplace_on_a_view_from_a_multi_output_op_is_refused(void **state)
{
    /* No public op returns several views yet (split/chunk/unbind need
     * list returns); the generated wrapper of such an op marks each output
     * with yg__make_view(out, self, "<op>"), which this drives directly. */
    const int64_t s[] = {2, 2};
    const double v[] = {1, 2, 3, 4};
    yg_tensor *x = leaf(s, 2, v), *b = NULL, *part = NULL, *out = NULL;
    (void)state;
    YG_CHECK(yg_mul_scalar(x, 1.0, &b));
    YG_CHECK(yg_select(b, 0, 0, &part));
    YG_CHECK(yg__make_view(part, b, "unbind"));
    YG_EXPECT_ERROR(yg_mul_scalar_(part, 2.0, &out), YG_ERR_AUTOGRAD, "mul_:",
                    "one of several views returned by unbind", "clone it first");
    assert_null(out);
    yg_release(part);
    yg_release(b);
    yg_release(x);
}

/* ---- double backward through in-place writes to views ---- */

/* A loss of two inputs, computed with an in-place write to a view of a
 * non-leaf base (inplace) or as its out-of-place twin. */
typedef yg_status (*two_input_loss)(yg_tensor *const *in, bool inplace, yg_tensor **loss);

/* w = 1 + (y - 1) placed at row 1 of a [2, 3] tensor: b * w multiplies
 * row 1 of b by y, the out-of-place twin of select(b, 0, 1).mul_(y). */
static yg_status row_scale(const yg_tensor *y, int64_t row, yg_tensor **w)
{
    const int64_t bs[] = {2, 3};
    yg_tensor *ym1 = NULL, *placed = NULL;
    yg_status st = yg_add_scalar(y, -1.0, 1.0, &ym1);
    if (st == YG_OK)
        st = yg_select_backward(ym1, bs, 2, 0, row, &placed);
    if (st == YG_OK)
        st = yg_add_scalar(placed, 1.0, 1.0, w);
    yg_release(placed);
    yg_release(ym1);
    return st;
}

/* (a) b = x * x; select(b, 0, 1) *= y; loss = sum(b * b) */
static yg_status loss_mul_on_select(yg_tensor *const *in, bool inplace, yg_tensor **loss)
{
    yg_tensor *b = NULL, *row = NULL, *same = NULL, *w = NULL, *b2 = NULL, *sq = NULL;
    yg_status st = yg_mul(in[0], in[0], &b);
    if (st == YG_OK && inplace) {
        st = yg_select(b, 0, 1, &row);
        if (st == YG_OK)
            st = yg_mul_(row, in[1], &same);
        if (st == YG_OK)
            b2 = yg_retain(b);
    } else if (st == YG_OK) {
        st = row_scale(in[1], 1, &w);
        if (st == YG_OK)
            st = yg_mul(b, w, &b2);
    }
    if (st == YG_OK)
        st = yg_mul(b2, b2, &sq);
    if (st == YG_OK)
        st = yg_sum(sq, loss);
    yg_release(sq);
    yg_release(b2);
    yg_release(w);
    yg_release(same);
    yg_release(row);
    yg_release(b);
    return st;
}

/* (b) b = sin(x); slice(b, 1, 0, 3, 2) *= z (columns 0 and 2);
 * loss = sum(exp(b)) */
static yg_status loss_mul_on_strided_slice(yg_tensor *const *in, bool inplace, yg_tensor **loss)
{
    const int64_t bs[] = {2, 3};
    yg_tensor *b = NULL, *cols = NULL, *same = NULL, *zm1 = NULL, *placed = NULL, *w = NULL;
    yg_tensor *b2 = NULL, *e = NULL;
    yg_status st = yg_sin(in[0], &b);
    if (st == YG_OK && inplace) {
        st = yg_slice(b, 1, 0, 3, 2, &cols);
        if (st == YG_OK)
            st = yg_mul_(cols, in[1], &same);
        if (st == YG_OK)
            b2 = yg_retain(b);
    } else if (st == YG_OK) {
        st = yg_add_scalar(in[1], -1.0, 1.0, &zm1);
        if (st == YG_OK)
            st = yg_slice_backward(zm1, bs, 2, 1, 0, 3, 2, &placed);
        if (st == YG_OK)
            st = yg_add_scalar(placed, 1.0, 1.0, &w);
        if (st == YG_OK)
            st = yg_mul(b, w, &b2);
    }
    if (st == YG_OK)
        st = yg_exp(b2, &e);
    if (st == YG_OK)
        st = yg_sum(e, loss);
    yg_release(e);
    yg_release(b2);
    yg_release(w);
    yg_release(placed);
    yg_release(zm1);
    yg_release(same);
    yg_release(cols);
    yg_release(b);
    return st;
}

/* (c) b = 2 x; row = select(b, 0, 0); row *= y; then the view is read:
 * loss = sum(exp(row) * row) + sum(b * b) */
static yg_status loss_reads_the_view_after_the_write(yg_tensor *const *in, bool inplace,
                                                     yg_tensor **loss)
{
    yg_tensor *b = NULL, *row = NULL, *same = NULL, *w = NULL, *b2 = NULL, *e = NULL;
    yg_tensor *er = NULL, *s1 = NULL, *sq = NULL, *s2 = NULL;
    yg_status st = yg_mul_scalar(in[0], 2.0, &b);
    if (st == YG_OK && inplace) {
        st = yg_select(b, 0, 0, &row);
        if (st == YG_OK)
            st = yg_mul_(row, in[1], &same);
        if (st == YG_OK)
            b2 = yg_retain(b);
    } else if (st == YG_OK) {
        st = row_scale(in[1], 0, &w);
        if (st == YG_OK)
            st = yg_mul(b, w, &b2);
        if (st == YG_OK)
            st = yg_select(b2, 0, 0, &row);
    }
    if (st == YG_OK)
        st = yg_exp(row, &e);
    if (st == YG_OK)
        st = yg_mul(e, row, &er);
    if (st == YG_OK)
        st = yg_sum(er, &s1);
    if (st == YG_OK)
        st = yg_mul(b2, b2, &sq);
    if (st == YG_OK)
        st = yg_sum(sq, &s2);
    if (st == YG_OK)
        st = yg_add(s1, s2, 1.0, loss);
    yg_release(s2);
    yg_release(sq);
    yg_release(s1);
    yg_release(er);
    yg_release(e);
    yg_release(b2);
    yg_release(w);
    yg_release(same);
    yg_release(row);
    yg_release(b);
    return st;
}

/* (d) b = x * x; slice(b, 0, 0, 1) <- sin(y) (copy_, y broadcast from
 * [3] to [1, 3]); loss = sum(exp(b * x)).  The twin keeps row 1 of b and
 * places sin(y) in row 0. */
static yg_status loss_copy_into_a_slice_view(yg_tensor *const *in, bool inplace, yg_tensor **loss)
{
    const int64_t bs[] = {2, 3};
    const double keep_v[] = {0, 0, 0, 1, 1, 1};
    yg_tensor *b = NULL, *src = NULL, *top = NULL, *same = NULL, *keep = NULL, *kept = NULL;
    yg_tensor *placed = NULL, *b2 = NULL, *bx = NULL, *e = NULL;
    yg_status st = yg_mul(in[0], in[0], &b);
    if (st == YG_OK)
        st = yg_sin(in[1], &src);
    if (st == YG_OK && inplace) {
        st = yg_slice(b, 0, 0, 1, 1, &top);
        if (st == YG_OK)
            st = yg_copy_(top, src, &same);
        if (st == YG_OK)
            b2 = yg_retain(b);
    } else if (st == YG_OK) {
        keep = yg_test_tensor(YG_FLOAT64, bs, 2, keep_v);
        st = yg_mul(b, keep, &kept);
        if (st == YG_OK)
            st = yg_select_backward(src, bs, 2, 0, 0, &placed);
        if (st == YG_OK)
            st = yg_add(kept, placed, 1.0, &b2);
    }
    if (st == YG_OK)
        st = yg_mul(b2, in[0], &bx);
    if (st == YG_OK)
        st = yg_exp(bx, &e);
    if (st == YG_OK)
        st = yg_sum(e, loss);
    yg_release(e);
    yg_release(bx);
    yg_release(b2);
    yg_release(placed);
    yg_release(kept);
    yg_release(keep);
    yg_release(same);
    yg_release(top);
    yg_release(src);
    yg_release(b);
    return st;
}

/* First-order gradients of fn at in (leaves), with create_graph. */
static void grads_of(two_input_loss fn, yg_tensor *const *in, bool inplace, bool create_graph,
                     yg_tensor **g)
{
    yg_tensor *loss = NULL;
    YG_CHECK(fn(in, inplace, &loss));
    YG_CHECK(yg_grad((const yg_tensor *const *)&loss, 1, NULL, (const yg_tensor *const *)in, 2,
                     false, create_graph, false, g));
    yg_release(loss);
}

/* Hessian-vector product of fn at in along v, by double backward. */
static void hvp_of(two_input_loss fn, yg_tensor *const *in, yg_tensor *const *v, bool inplace,
                   yg_tensor **hv)
{
    yg_tensor *g[2] = {NULL, NULL}, *p0 = NULL, *p1 = NULL, *s0 = NULL, *s1 = NULL, *dot = NULL;
    grads_of(fn, in, inplace, true, g);
    assert_true(yg_tensor_requires_grad(g[0]));
    assert_true(yg_tensor_requires_grad(g[1]));
    YG_CHECK(yg_mul(g[0], v[0], &p0));
    YG_CHECK(yg_mul(g[1], v[1], &p1));
    YG_CHECK(yg_sum(p0, &s0));
    YG_CHECK(yg_sum(p1, &s1));
    YG_CHECK(yg_add(s0, s1, 1.0, &dot));
    YG_CHECK(yg_grad((const yg_tensor *const *)&dot, 1, NULL, (const yg_tensor *const *)in, 2,
                     false, false, false, hv));
    yg_release(dot);
    yg_release(s1);
    yg_release(s0);
    yg_release(p1);
    yg_release(p0);
    yg_release(g[1]);
    yg_release(g[0]);
}

/* The HVP through the in-place write must equal the out-of-place twin's
 * and a central finite difference of the first-order gradient. */
static void expect_hvp_matches_twin_and_finite_difference(two_input_loss fn,
                                                          const int64_t *const *sizes,
                                                          const int64_t *ndims)
{
    const double eps = 1e-5;
    yg_tensor *in[2], *v[2], *hv[2] = {NULL, NULL}, *hv_twin[2] = {NULL, NULL};
    yg_tensor *g_in[2] = {NULL, NULL}, *g_twin[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
        in[i] = yg_test_rand(YG_FLOAT64, sizes[i], ndims[i], -1.0, 1.0, 11 + (uint64_t)i);
        YG_CHECK(yg_tensor_set_requires_grad(in[i], true));
        v[i] = yg_test_rand(YG_FLOAT64, sizes[i], ndims[i], -1.0, 1.0, 21 + (uint64_t)i);
    }
    /* first order: in-place and twin agree (sanity of the twin) */
    grads_of(fn, in, true, false, g_in);
    grads_of(fn, in, false, false, g_twin);
    hvp_of(fn, in, v, true, hv);
    hvp_of(fn, in, v, false, hv_twin);
    for (int i = 0; i < 2; i++) {
        double *want = yg_test_values(g_twin[i]), *want_hv = yg_test_values(hv_twin[i]);
        YG_EXPECT_CLOSE(g_in[i], sizes[i], ndims[i], want, 1e-12, 1e-12);
        YG_EXPECT_CLOSE(hv[i], sizes[i], ndims[i], want_hv, 1e-12, 1e-12);
        free(want_hv);
        free(want);
    }
    /* finite difference: (grad(in + eps v) - grad(in - eps v)) / (2 eps) */
    {
        yg_tensor *plus[2], *minus[2], *gp[2] = {NULL, NULL}, *gm[2] = {NULL, NULL};
        for (int i = 0; i < 2; i++) {
            double *x = yg_test_values(in[i]), *d = yg_test_values(v[i]);
            int64_t n = yg_tensor_numel(in[i]);
            double *xp = malloc((size_t)n * sizeof *xp), *xm = malloc((size_t)n * sizeof *xm);
            assert_non_null(xp);
            assert_non_null(xm);
            for (int64_t k = 0; k < n; k++) {
                xp[k] = x[k] + eps * d[k];
                xm[k] = x[k] - eps * d[k];
            }
            plus[i] = leaf(sizes[i], ndims[i], xp);
            minus[i] = leaf(sizes[i], ndims[i], xm);
            free(xm);
            free(xp);
            free(d);
            free(x);
        }
        grads_of(fn, plus, true, false, gp);
        grads_of(fn, minus, true, false, gm);
        for (int i = 0; i < 2; i++) {
            double *a = yg_test_values(gp[i]), *b = yg_test_values(gm[i]);
            int64_t n = yg_tensor_numel(in[i]);
            for (int64_t k = 0; k < n; k++)
                a[k] = (a[k] - b[k]) / (2 * eps);
            YG_EXPECT_CLOSE(hv[i], sizes[i], ndims[i], a, 1e-6, 1e-6);
            free(b);
            free(a);
            yg_release(gm[i]);
            yg_release(gp[i]);
            yg_release(minus[i]);
            yg_release(plus[i]);
        }
    }
    for (int i = 0; i < 2; i++) {
        yg_release(g_twin[i]);
        yg_release(g_in[i]);
        yg_release(hv_twin[i]);
        yg_release(hv[i]);
        yg_release(v[i]);
        yg_release(in[i]);
    }
}

static void test_double_backward_through_mul_on_a_select_view(void **state)
{
    const int64_t xs[] = {2, 3}, ys[] = {3};
    const int64_t *sizes[] = {xs, ys}, ndims[] = {2, 1};
    (void)state;
    expect_hvp_matches_twin_and_finite_difference(loss_mul_on_select, sizes, ndims);
}

static void test_double_backward_through_mul_on_a_strided_slice_view(void **state)
{
    const int64_t xs[] = {2, 3}, zs[] = {2, 2};
    const int64_t *sizes[] = {xs, zs}, ndims[] = {2, 2};
    (void)state;
    expect_hvp_matches_twin_and_finite_difference(loss_mul_on_strided_slice, sizes, ndims);
}

static void test_double_backward_through_a_view_read_after_its_write(void **state)
{
    const int64_t xs[] = {2, 3}, ys[] = {3};
    const int64_t *sizes[] = {xs, ys}, ndims[] = {2, 1};
    (void)state;
    expect_hvp_matches_twin_and_finite_difference(loss_reads_the_view_after_the_write, sizes,
                                                  ndims);
}

static void test_double_backward_through_copy_into_a_slice_view(void **state)
{
    const int64_t xs[] = {2, 3}, ys[] = {3};
    const int64_t *sizes[] = {xs, ys}, ndims[] = {2, 1};
    (void)state;
    expect_hvp_matches_twin_and_finite_difference(loss_copy_into_a_slice_view, sizes, ndims);
}

/* ---- views read after their base was written ----
 *
 * A view made before its base is written in place (through another view,
 * or directly) reads the written values, so its history must be the
 * base's new one: the first read regenerates it (views.c).  Each loss has
 * an out-of-place twin; gradients must match it and finite differences. */

/* (e) b = x * x; v1 = select(b, 0, 0) and v2 = slice(b, 1, 0, 2) (columns
 * 0 and 1: two elements shared with v1), both made before v1 *= y;
 * loss = sum(v2 * v2) + sum(b). */
static yg_status loss_sibling_view_after_a_write(yg_tensor *const *in, bool inplace,
                                                 yg_tensor **loss)
{
    yg_tensor *b = NULL, *v1 = NULL, *v2 = NULL, *same = NULL, *w = NULL, *b2 = NULL;
    yg_tensor *sq = NULL, *s1 = NULL, *s2 = NULL;
    yg_status st = yg_mul(in[0], in[0], &b);
    if (st == YG_OK && inplace) {
        st = yg_select(b, 0, 0, &v1);
        if (st == YG_OK)
            st = yg_slice(b, 1, 0, 2, 1, &v2);
        if (st == YG_OK)
            st = yg_mul_(v1, in[1], &same);
        if (st == YG_OK)
            b2 = yg_retain(b);
    } else if (st == YG_OK) {
        st = row_scale(in[1], 0, &w);
        if (st == YG_OK)
            st = yg_mul(b, w, &b2);
        if (st == YG_OK)
            st = yg_slice(b2, 1, 0, 2, 1, &v2);
    }
    if (st == YG_OK)
        st = yg_mul(v2, v2, &sq);
    if (st == YG_OK)
        st = yg_sum(sq, &s1);
    if (st == YG_OK)
        st = yg_sum(b2, &s2);
    if (st == YG_OK)
        st = yg_add(s1, s2, 1.0, loss);
    yg_release(s2);
    yg_release(s1);
    yg_release(sq);
    yg_release(b2);
    yg_release(w);
    yg_release(same);
    yg_release(v2);
    yg_release(v1);
    yg_release(b);
    return st;
}

/* (f) b = x * x; v = select(b, 0, 1) made before b *= y (on the base
 * itself, y broadcast over the rows); loss = sum(exp(v)) + sum(b). */
static yg_status loss_old_view_after_a_base_write(yg_tensor *const *in, bool inplace,
                                                  yg_tensor **loss)
{
    yg_tensor *b = NULL, *v = NULL, *same = NULL, *b2 = NULL, *e = NULL, *s1 = NULL;
    yg_tensor *s2 = NULL;
    yg_status st = yg_mul(in[0], in[0], &b);
    if (st == YG_OK && inplace) {
        st = yg_select(b, 0, 1, &v);
        if (st == YG_OK)
            st = yg_mul_(b, in[1], &same);
        if (st == YG_OK)
            b2 = yg_retain(b);
    } else if (st == YG_OK) {
        st = yg_mul(b, in[1], &b2);
        if (st == YG_OK)
            st = yg_select(b2, 0, 1, &v);
    }
    if (st == YG_OK)
        st = yg_exp(v, &e);
    if (st == YG_OK)
        st = yg_sum(e, &s1);
    if (st == YG_OK)
        st = yg_sum(b2, &s2);
    if (st == YG_OK)
        st = yg_add(s1, s2, 1.0, loss);
    yg_release(s2);
    yg_release(s1);
    yg_release(e);
    yg_release(b2);
    yg_release(same);
    yg_release(v);
    yg_release(b);
    return st;
}

/* (g) b = x * x; u = slice(b, 1, 1, 3) (columns 1 and 2), a view of a
 * view w = select(u, 0, 1) (= b[1, 1:3]), then w *= y; u is stale, w was
 * rewritten; loss = sum(exp(u)) + sum(u * w). */
static yg_status loss_view_of_a_view(yg_tensor *const *in, bool inplace, yg_tensor **loss)
{
    const int64_t bs[] = {2, 3}, rs[] = {3};
    yg_tensor *b = NULL, *u = NULL, *w = NULL, *same = NULL, *ym1 = NULL, *in_row = NULL;
    yg_tensor *placed = NULL, *scale = NULL, *b2 = NULL, *e = NULL, *s1 = NULL, *uw = NULL;
    yg_tensor *s2 = NULL;
    yg_status st = yg_mul(in[0], in[0], &b);
    if (st == YG_OK && inplace) {
        st = yg_slice(b, 1, 1, 3, 1, &u);
        if (st == YG_OK)
            st = yg_select(u, 0, 1, &w);
        if (st == YG_OK)
            st = yg_mul_(w, in[1], &same);
    } else if (st == YG_OK) {
        st = yg_add_scalar(in[1], -1.0, 1.0, &ym1);
        if (st == YG_OK)
            st = yg_slice_backward(ym1, rs, 1, 0, 1, 3, 1, &in_row);
        if (st == YG_OK)
            st = yg_select_backward(in_row, bs, 2, 0, 1, &placed);
        if (st == YG_OK)
            st = yg_add_scalar(placed, 1.0, 1.0, &scale);
        if (st == YG_OK)
            st = yg_mul(b, scale, &b2);
        if (st == YG_OK)
            st = yg_slice(b2, 1, 1, 3, 1, &u);
        if (st == YG_OK)
            st = yg_select(u, 0, 1, &w);
    }
    if (st == YG_OK)
        st = yg_exp(u, &e);
    if (st == YG_OK)
        st = yg_sum(e, &s1);
    if (st == YG_OK)
        st = yg_mul(u, w, &uw);
    if (st == YG_OK)
        st = yg_sum(uw, &s2);
    if (st == YG_OK)
        st = yg_add(s1, s2, 1.0, loss);
    yg_release(s2);
    yg_release(uw);
    yg_release(s1);
    yg_release(e);
    yg_release(b2);
    yg_release(scale);
    yg_release(placed);
    yg_release(in_row);
    yg_release(ym1);
    yg_release(same);
    yg_release(w);
    yg_release(u);
    yg_release(b);
    return st;
}

/* The value of fn's loss at inputs holding values x (no grad). */
static double loss_value(two_input_loss fn, double *const *x, const int64_t *const *sizes,
                         const int64_t *ndims)
{
    yg_tensor *in[2], *loss = NULL;
    double *v, value;
    for (int i = 0; i < 2; i++)
        in[i] = yg_test_tensor(YG_FLOAT64, sizes[i], ndims[i], x[i]);
    YG_CHECK(fn(in, true, &loss));
    v = yg_test_values(loss);
    value = v[0];
    free(v);
    yg_release(loss);
    yg_release(in[1]);
    yg_release(in[0]);
    return value;
}

/* First-order gradients through the in-place writes must equal the
 * out-of-place twin's and central finite differences of the loss. */
static void expect_grads_match_twin_and_finite_difference(two_input_loss fn,
                                                          const int64_t *const *sizes,
                                                          const int64_t *ndims)
{
    const double eps = 1e-6;
    yg_tensor *in[2], *g[2] = {NULL, NULL}, *g_twin[2] = {NULL, NULL};
    double *x[2];
    for (int i = 0; i < 2; i++) {
        in[i] = yg_test_rand(YG_FLOAT64, sizes[i], ndims[i], -1.0, 1.0, 31 + (uint64_t)i);
        YG_CHECK(yg_tensor_set_requires_grad(in[i], true));
        x[i] = yg_test_values(in[i]);
    }
    grads_of(fn, in, true, false, g);
    grads_of(fn, in, false, false, g_twin);
    for (int i = 0; i < 2; i++) {
        double *want = yg_test_values(g_twin[i]);
        int64_t n = yg_tensor_numel(in[i]);
        YG_EXPECT_CLOSE(g[i], sizes[i], ndims[i], want, 1e-12, 1e-12);
        for (int64_t k = 0; k < n; k++) {
            double keep = x[i][k], up, down;
            x[i][k] = keep + eps;
            up = loss_value(fn, x, sizes, ndims);
            x[i][k] = keep - eps;
            down = loss_value(fn, x, sizes, ndims);
            x[i][k] = keep;
            want[k] = (up - down) / (2 * eps);
        }
        YG_EXPECT_CLOSE(g[i], sizes[i], ndims[i], want, 1e-6, 1e-6);
        free(want);
    }
    for (int i = 0; i < 2; i++) {
        free(x[i]);
        yg_release(g_twin[i]);
        yg_release(g[i]);
        yg_release(in[i]);
    }
}

static void test_overlapping_sibling_view_reads_the_write_through_another(void **state)
{
    const int64_t xs[] = {2, 3}, ys[] = {3};
    const int64_t *sizes[] = {xs, ys}, ndims[] = {2, 1};
    (void)state;
    expect_grads_match_twin_and_finite_difference(loss_sibling_view_after_a_write, sizes, ndims);
}

static void test_older_view_reads_an_inplace_write_on_the_base(void **state)
{
    const int64_t xs[] = {2, 3}, ys[] = {3};
    const int64_t *sizes[] = {xs, ys}, ndims[] = {2, 1};
    (void)state;
    expect_grads_match_twin_and_finite_difference(loss_old_view_after_a_base_write, sizes,
                                                  ndims);
}

static void test_view_of_a_view_reads_a_write_through_its_own_view(void **state)
{
    const int64_t xs[] = {2, 3}, ys[] = {2};
    const int64_t *sizes[] = {xs, ys}, ndims[] = {2, 1};
    (void)state;
    expect_grads_match_twin_and_finite_difference(loss_view_of_a_view, sizes, ndims);
}

static void test_double_backward_through_regenerated_views(void **state)
{
    const int64_t xs[] = {2, 3}, ys[] = {3}, ws[] = {2};
    const int64_t *sizes[] = {xs, ys}, *sizes_w[] = {xs, ws}, ndims[] = {2, 1};
    (void)state;
    expect_hvp_matches_twin_and_finite_difference(loss_sibling_view_after_a_write, sizes, ndims);
    expect_hvp_matches_twin_and_finite_difference(loss_old_view_after_a_base_write, sizes, ndims);
    expect_hvp_matches_twin_and_finite_difference(loss_view_of_a_view, sizes_w, ndims);
}

static void test_stale_view_history_is_regenerated_once_and_keeps_retain_grad(void **state)
{
    /* b = x * 1 ([2, 3]); v2 = columns 0-1 retains its grad; row 0 *= 3
     * through v1; loss = sum(v2): d/dx = 3 on row 0 of columns 0-1, 1 on
     * row 1, 0 in column 2; v2's grad is ones. */
    const int64_t s[] = {2, 3}, vs[] = {2, 2};
    const double xv[] = {1, 2, 3, 4, 5, 6}, gx[] = {3, 3, 0, 1, 1, 0}, gv[] = {1, 1, 1, 1};
    yg_tensor *x = leaf(s, 2, xv), *b = NULL, *v1 = NULL, *v2 = NULL, *same = NULL;
    yg_tensor *loss = NULL;
    yg_node *fn;
    (void)state;
    YG_CHECK(yg_mul_scalar(x, 1.0, &b));
    YG_CHECK(yg_select(b, 0, 0, &v1));
    YG_CHECK(yg_slice(b, 1, 0, 2, 1, &v2));
    YG_CHECK(yg_tensor_retain_grad(v2));
    assert_string_equal(yg_tensor_grad_fn_name(v2), "SliceBackward");
    YG_CHECK(yg_mul_scalar_(v1, 3.0, &same));
    assert_string_equal(yg_tensor_grad_fn_name(v2), "AsStridedBackward");
    fn = yg_tensor_grad_fn(v2);
    assert_ptr_equal(yg_tensor_grad_fn(v2), fn); /* nothing changed: same node */
    assert_false(yg_tensor_is_leaf(v2));
    YG_CHECK(yg_sum(v2, &loss));
    assert_ptr_equal(yg_tensor_grad_fn(v2), fn);
    YG_CHECK(yg_backward(loss, NULL, false));
    expect_grad(x, s, 2, gx);
    expect_grad(v2, vs, 2, gv);
    yg_release(loss);
    yg_release(same);
    yg_release(v2);
    yg_release(v1);
    yg_release(b);
    yg_release(x);
}

static void test_views_of_a_leaf_follow_a_no_grad_write(void **state)
{
    /* x leaf [2, 3]; v1 = row 0, v2 = columns 0-1.  Writing v1 in place
     * is refused; an optimizer-like x *= 2 under no-grad is not.  Then
     * loss = sum(v2 * v2): d/dx = 2 v2 = 4 x (old values) on columns 0-1. */
    const int64_t s[] = {2, 3};
    const double xv[] = {1, 2, 3, 4, 5, 6}, gx[] = {4, 8, 0, 16, 20, 0};
    yg_tensor *x = leaf(s, 2, xv), *v1 = NULL, *v2 = NULL, *out = NULL, *sq = NULL;
    yg_tensor *loss = NULL;
    (void)state;
    YG_CHECK(yg_select(x, 0, 0, &v1));
    YG_CHECK(yg_slice(x, 1, 0, 2, 1, &v2));
    YG_EXPECT_ERROR(yg_mul_scalar_(v1, 3.0, &out), YG_ERR_AUTOGRAD, "mul_",
                    "view of a leaf tensor that requires grad");
    assert_null(out);
    {
        bool prev = yg_set_grad_enabled(false);
        YG_CHECK(yg_mul_scalar_(x, 2.0, &out));
        yg_set_grad_enabled(prev);
    }
    YG_CHECK(yg_mul(v2, v2, &sq));
    YG_CHECK(yg_sum(sq, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    expect_grad(x, s, 2, gx);
    yg_release(loss);
    yg_release(sq);
    yg_release(out);
    yg_release(v2);
    yg_release(v1);
    yg_release(x);
}

static void test_view_of_a_base_that_gains_history_reads_it(void **state)
{
    /* b = zeros [2, 3] (no history); v = select(b, 0, 1); b <- src (copy_
     * on the base itself); loss = sum(v * v): d/dsrc = 2 src on row 1. */
    const int64_t s[] = {2, 3};
    const double srcv[] = {1, 2, 3, 4, 5, 6}, expected[] = {0, 0, 0, 8, 10, 12};
    yg_tensor *b = NULL, *src = leaf(s, 2, srcv), *v = NULL, *same = NULL, *sq = NULL;
    yg_tensor *loss = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 2, YG_FLOAT64, &b));
    YG_CHECK(yg_select(b, 0, 1, &v));
    assert_false(yg_tensor_requires_grad(v));
    YG_CHECK(yg_copy_(b, src, &same));
    assert_true(yg_tensor_requires_grad(v));
    YG_CHECK(yg_mul(v, v, &sq));
    YG_CHECK(yg_sum(sq, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    expect_grad(src, s, 2, expected);
    yg_release(loss);
    yg_release(sq);
    yg_release(same);
    yg_release(v);
    yg_release(src);
    yg_release(b);
}

static void test_view_made_under_no_grad_stays_a_constant(void **state)
{
    /* b = x * 1 ([2, 3]); v = select(b, 0, 0) made with grad mode off,
     * u = select(b, 0, 1) detach_'d; then b *= 2 with grad mode on.  v and
     * u keep no history (as they had none before the write):
     * loss = sum(b) + sum(v * w) sends only 2 to x. */
    const int64_t s[] = {2, 3}, rs[] = {3};
    const double xv[] = {1, 2, 3, 4, 5, 6}, wv[] = {1, 1, 1};
    const double expected[] = {2, 2, 2, 2, 2, 2};
    yg_tensor *x = leaf(s, 2, xv), *w = yg_test_tensor(YG_FLOAT64, rs, 1, wv), *b = NULL;
    yg_tensor *v = NULL, *u = NULL, *same = NULL, *vw = NULL, *s1 = NULL, *s2 = NULL;
    yg_tensor *loss = NULL;
    (void)state;
    YG_CHECK(yg_mul_scalar(x, 1.0, &b));
    {
        bool prev = yg_set_grad_enabled(false);
        YG_CHECK(yg_select(b, 0, 0, &v));
        yg_set_grad_enabled(prev);
    }
    YG_CHECK(yg_select(b, 0, 1, &u));
    YG_CHECK(yg_detach_(u));
    YG_CHECK(yg_mul_scalar_(b, 2.0, &same));
    assert_false(yg_tensor_requires_grad(v));
    assert_null(yg_tensor_grad_fn(v));
    assert_false(yg_tensor_requires_grad(u));
    assert_null(yg_tensor_grad_fn(u));
    YG_CHECK(yg_mul(v, w, &vw));
    assert_false(yg_tensor_requires_grad(vw));
    YG_CHECK(yg_sum(b, &s1));
    YG_CHECK(yg_sum(vw, &s2));
    YG_CHECK(yg_add(s1, s2, 1.0, &loss));
    YG_CHECK(yg_backward(loss, NULL, false));
    expect_grad(x, s, 2, expected);
    yg_release(loss);
    yg_release(s2);
    yg_release(s1);
    yg_release(vw);
    yg_release(same);
    yg_release(u);
    yg_release(v);
    yg_release(b);
    yg_release(w);
    yg_release(x);
}

static void test_stale_view_of_a_non_contiguous_base_is_refused(void **state)
{
    /* d = detach(t(zeros [2, 3])) is a root with transposed strides; v =
     * select(d, 0, 0); d <- src gives d history, v goes stale.  Regions
     * of a non-contiguous base are not supported: recording on v fails
     * (as writing through v would), it does not go on with no history. */
    const int64_t s[] = {2, 3}, ts[] = {3, 2};
    const double srcv[] = {1, 2, 3, 4, 5, 6};
    yg_tensor *a = NULL, *at = NULL, *d = NULL, *v = NULL, *src = leaf(ts, 2, srcv);
    yg_tensor *same = NULL, *out = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 2, YG_FLOAT64, &a));
    YG_CHECK(yg_t(a, &at));
    YG_CHECK(yg_detach(at, &d));
    YG_CHECK(yg_select(d, 0, 0, &v));
    YG_CHECK(yg_copy_(d, src, &same));
    assert_true(yg_tensor_requires_grad(v));
    YG_EXPECT_ERROR(yg_mul(v, v, &out), YG_ERR_NOT_IMPLEMENTED,
                    "AsStridedBackward: a view of a non-contiguous base read after an in-place "
                    "write to the base is not supported");
    assert_null(out);
    yg_release(same);
    yg_release(v);
    yg_release(d);
    yg_release(at);
    yg_release(a);
    yg_release(src);
}

/* A retained .grad that is a stale view, accumulated into under
 * create_graph: the sum must not run under the leaf's lock, since
 * rebuilding the view's history takes the view's own leaf lock, which can
 * be the same mutex (found by review: a self-deadlock when h and h.grad
 * shared a stripe).  All tensors share one mutex here, so any nesting
 * deadlocks; an alarm turns a hang into a failure. */
static void on_hang(int sig)
{
    static const char msg[] = "accumulating into a stale retained .grad hung (deadlock)\n";
    (void)sig;
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}

static void test_accumulating_a_stale_view_grad_does_not_deadlock(void **state)
{
    const double d[4] = {1, 2, 3, 4}, one[] = {1}, two_v[] = {2};
    const int64_t s4[] = {4};
    yg_tensor *y = yg_test_tensor(YG_FLOAT64, s4, 1, d), *h = NULL, *s = NULL, *r = NULL;
    yg_tensor *go = yg_test_tensor(YG_FLOAT64, NULL, 0, one), *gy = NULL, *hg = NULL;
    yg_tensor *two = yg_test_tensor(YG_FLOAT64, NULL, 0, two_v);
    (void)state;
    yg__leaf_locks_share_one(true);
    YG_CHECK(yg_tensor_set_requires_grad(y, true));
    YG_CHECK(yg_tensor_set_requires_grad(go, true));
    YG_CHECK(yg_mul_scalar(y, 1, &h));
    YG_CHECK(yg_tensor_retain_grad(h));
    YG_CHECK(yg_sum(h, &s));
    const yg_tensor *outs[1] = {s}, *gos[1] = {go}, *ins[1] = {y};
    YG_CHECK(yg_grad(outs, 1, gos, ins, 1, true, true, false, &gy));
    yg_release(gy);
    gy = NULL;
    /* h.grad is expand(go): writing go makes it a stale view. */
    YG_CHECK(yg_tensor_grad(h, &hg));
    assert_string_equal(yg_tensor_grad_fn_name(hg), "ExpandBackward");
    bool prev = yg_set_grad_enabled(false);
    YG_CHECK(yg_mul_(go, two, &r));
    yg_set_grad_enabled(prev);
    signal(SIGALRM, on_hang);
    alarm(20);
    YG_CHECK(yg_grad(outs, 1, gos, ins, 1, true, true, false, &gy));
    alarm(0);
    yg__leaf_locks_share_one(false);
    /* The first .grad is a view of go, so it reads 2 after the write;
     * plus the second run's 2. */
    yg_release(hg);
    YG_CHECK(yg_tensor_grad(h, &hg));
    const double want[] = {4, 4, 4, 4};
    YG_EXPECT_CLOSE(hg, s4, 1, want, 1e-12, 0);
    yg_release(hg);
    yg_release(gy);
    yg_release(r);
    yg_release(two);
    yg_release(go);
    yg_release(s);
    yg_release(h);
    yg_release(y);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accumulating_a_stale_view_grad_does_not_deadlock),
        cmocka_unit_test(test_inplace_on_a_leaf_that_requires_grad_is_refused),
        cmocka_unit_test(test_inplace_on_a_view_of_a_leaf_is_refused),
        cmocka_unit_test(test_inplace_on_a_non_leaf_uses_the_old_value),
        cmocka_unit_test(test_inplace_on_a_view_rewrites_the_base_history),
        cmocka_unit_test(test_copy_into_a_view_sends_gradient_to_the_source),
        cmocka_unit_test(test_inplace_on_a_view_from_a_multi_output_op_is_refused),
        cmocka_unit_test(test_double_backward_through_mul_on_a_select_view),
        cmocka_unit_test(test_double_backward_through_mul_on_a_strided_slice_view),
        cmocka_unit_test(test_double_backward_through_a_view_read_after_its_write),
        cmocka_unit_test(test_double_backward_through_copy_into_a_slice_view),
        cmocka_unit_test(test_overlapping_sibling_view_reads_the_write_through_another),
        cmocka_unit_test(test_older_view_reads_an_inplace_write_on_the_base),
        cmocka_unit_test(test_view_of_a_view_reads_a_write_through_its_own_view),
        cmocka_unit_test(test_double_backward_through_regenerated_views),
        cmocka_unit_test(test_stale_view_history_is_regenerated_once_and_keeps_retain_grad),
        cmocka_unit_test(test_views_of_a_leaf_follow_a_no_grad_write),
        cmocka_unit_test(test_view_of_a_base_that_gains_history_reads_it),
        cmocka_unit_test(test_view_made_under_no_grad_stays_a_constant),
        cmocka_unit_test(test_stale_view_of_a_non_contiguous_base_is_refused),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
