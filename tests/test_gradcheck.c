/*
 * test_gradcheck.c - every differentiable op of the OpInfo table
 * (tests/opinfo/), checked in float64 against central finite differences.
 *
 * The list of entries comes from the generator (yg__derivatives), not from
 * this file: an entry with no sample in tests/opinfo/ fails
 * test_every_derivative_has_a_sample, so a formula cannot be added without
 * being checked.  Composite ops (no entry: autograd flows through the ops
 * they call) are gradchecked on their samples too.  For a sample
 * y = f(x1..xn) and a random cotangent v, the analytic gradient of
 * sum(v * y) from yg_backward is compared, element by element, with
 * (L(x + eps) - L(x - eps)) / (2 eps).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generated_int.h"
#include "opinfo/opinfo.h"
#include "testutil.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_sums.h"

/* Input i of s in float64; floating inputs require grad unless constant. */
static yg_tensor *make_input(const sample *s, int i, uint64_t seed)
{
    yg_tensor *t = opinfo_make_input(s, i, YG_FLOAT64, seed, false, 0);
    if (s->in[i].dtype == YG_FLOAT64 && !s->in[i].constant)
        YG_CHECK(yg_tensor_set_requires_grad(t, true));
    return t;
}

/* L(x) = sum(v * f(x)), computed without recording. */
static double loss_value(const sample *s, yg_tensor *const *x, const double *v)
{
    yg_tensor *y = NULL;
    double *yv, total = 0;
    bool prev = yg_set_grad_enabled(false);
    YG_CHECK(opinfo_call(s, x, &y));
    yg_set_grad_enabled(prev);
    yv = yg_test_values(y);
    for (int64_t i = 0; i < yg_tensor_numel(y); i++)
        total += yv[i] * v[i];
    free(yv);
    yg_release(y);
    return total;
}

/* The derivative entry a sample checks (NULL for a composite op). */
static const yg_derivative_info *entry_of(const sample *s)
{
    return opinfo_derivative(s->op);
}

static int check_sample(const sample *s, uint64_t seed)
{
    const double eps = 1e-6, atol = 1e-6, rtol = 1e-4;
    const yg_derivative_info *entry = entry_of(s);
    yg_tensor *x[MAX_IN] = {0}, *y = NULL, *vt = NULL;
    double *v;
    int failures = 0;

    for (int i = 0; i < s->n_inputs; i++)
        x[i] = make_input(s, i, seed + (uint64_t)i);
    YG_CHECK(opinfo_call(s, x, &y));
    if (entry != NULL && entry->n_inputs == 0) {
        /* Every input non_differentiable: the op accepts inputs that
         * require grad and its result does not require grad. */
        if (yg_tensor_requires_grad(y)) {
            print_error("%s (%s): result of a non-differentiable op requires grad\n", s->op,
                        s->what);
            failures++;
        }
        yg_release(y);
        for (int i = 0; i < s->n_inputs; i++)
            yg_release(x[i]);
        return failures;
    }
    vt = yg_test_rand(YG_FLOAT64, yg_tensor_sizes(y), yg_tensor_ndim(y), -1, 1, seed + 99);
    v = yg_test_values(vt);
    YG_CHECK(yg_backward(y, vt, false));
    for (int i = 0; i < s->n_inputs; i++) {
        yg_tensor *g = NULL;
        double *gv, *data;
        int64_t n = yg_tensor_numel(x[i]);
        if (s->in[i].dtype != YG_FLOAT64 || s->in[i].constant)
            continue;
        YG_CHECK(yg_tensor_grad(x[i], &g));
        if (g == NULL) {
            print_error("%s (%s): input %d received no gradient\n", s->op, s->what, i);
            failures++;
            continue;
        }
        gv = yg_test_values(g);
        data = yg_tensor_data(x[i]);
        for (int64_t k = 0; k < n; k++) {
            double orig = data[k], lp, lm, numeric;
            data[k] = orig + eps;
            lp = loss_value(s, x, v);
            data[k] = orig - eps;
            lm = loss_value(s, x, v);
            data[k] = orig;
            numeric = (lp - lm) / (2 * eps);
            if (fabs(numeric - gv[k]) > atol + rtol * fabs(numeric)) {
                print_error("%s (%s): d/d input %d [%lld]: analytic %.10g, numeric %.10g\n",
                            s->op, s->what, i, (long long)k, gv[k], numeric);
                failures++;
                break;
            }
        }
        free(gv);
        yg_release(g);
    }
    free(v);
    yg_release(vt);
    yg_release(y);
    for (int i = 0; i < s->n_inputs; i++)
        yg_release(x[i]);
    return failures;
}

static void test_every_derivative_has_a_sample(void **state)
{
    int missing = 0;
    (void)state;
    for (int32_t d = 0; d < yg__derivatives_count; d++) {
        bool found = false;
        for (int s = 0; s < opinfo_sample_count() && !found; s++)
            found = strcmp(opinfo_sample_at(s)->op, yg__derivatives[d].name) == 0;
        if (!found) {
            print_error("derivative %s (%s) has no gradcheck sample in tests/opinfo/\n",
                        yg__derivatives[d].name, yg__derivatives[d].location);
            missing++;
        }
    }
    assert_int_equal(missing, 0);
}

static void test_every_derivative_matches_finite_differences(void **state)
{
    int failures = 0;
    (void)state;
    for (int s = 0; s < opinfo_sample_count(); s++)
        if (opinfo_is_differentiable(opinfo_sample_at(s)))
            failures += check_sample(opinfo_sample_at(s), 1000 + (uint64_t)s * 17);
    assert_int_equal(failures, 0);
}

/* ---- gradgradcheck ----
 * For a sample y = f(x) with cotangent v (itself an input here), the
 * first-order gradients G(x, v) = d<v, f(x)>/dx are computed with
 * create_graph, reduced with random weights w to L2 = sum(w * G), and the
 * gradient of L2 with respect to x and v is compared with central
 * differences of L2 (recomputing G without create_graph each time). */

typedef struct gg_case {
    const sample *s;
    yg_tensor *x[MAX_IN];
    yg_tensor *v;
    int n_diff;              /* float inputs that get a first-order gradient */
    int diff[MAX_IN];        /* their indices in x */
    yg_tensor *w[MAX_IN];    /* weights, one per diff input */
} gg_case;

/* L2 with or without create_graph; out is L2 (a 0-dim tensor). */
static yg_status gg_l2(const gg_case *c, bool create_graph, yg_tensor **out)
{
    yg_tensor *y = NULL, *g[MAX_IN] = {0}, *acc = NULL;
    const yg_tensor *inputs[MAX_IN];
    yg_status st;

    *out = NULL;
    for (int i = 0; i < c->n_diff; i++)
        inputs[i] = c->x[c->diff[i]];
    st = opinfo_call(c->s, (yg_tensor *const *)c->x, &y);
    if (st == YG_OK)
        st = yg_grad((const yg_tensor *const *)&y, 1, (const yg_tensor *const *)&c->v, inputs,
                     c->n_diff, false, create_graph, true, g);
    for (int i = 0; i < c->n_diff && st == YG_OK; i++) {
        yg_tensor *prod = NULL, *part = NULL, *sum = NULL;
        if (g[i] == NULL)
            continue;
        st = yg_mul(g[i], c->w[i], &prod);
        if (st == YG_OK)
            st = yg_sum(prod, &part);
        if (st == YG_OK && acc != NULL)
            st = yg_add(acc, part, 1.0, &sum);
        else if (st == YG_OK)
            sum = yg_retain(part);
        yg_release(prod);
        yg_release(part);
        yg_release(acc);
        acc = sum;
    }
    for (int i = 0; i < c->n_diff; i++)
        yg_release(g[i]);
    yg_release(y);
    if (st == YG_OK && acc == NULL)
        st = yg_tensor_scalar(0.0, YG_FLOAT64, &acc);
    if (st == YG_OK)
        *out = acc;
    else
        yg_release(acc);
    return st;
}

static double gg_value(const gg_case *c)
{
    yg_tensor *l2 = NULL;
    double v = 0;
    YG_CHECK(gg_l2(c, false, &l2));
    YG_CHECK(yg_tensor_item(l2, &v));
    yg_release(l2);
    return v;
}

static void gg_setup(gg_case *c, const sample *s, uint64_t seed)
{
    yg_tensor *y = NULL, *g[MAX_IN] = {0};
    const yg_tensor *inputs[MAX_IN];
    int n_float = 0, idx[MAX_IN];

    memset(c, 0, sizeof *c);
    c->s = s;
    for (int i = 0; i < s->n_inputs; i++) {
        c->x[i] = make_input(s, i, seed + (uint64_t)i);
        if (s->in[i].dtype == YG_FLOAT64 && !s->in[i].constant) {
            idx[n_float] = i;
            inputs[n_float++] = c->x[i];
        }
    }
    YG_CHECK(opinfo_call(s, c->x, &y));
    c->v = yg_test_rand(YG_FLOAT64, yg_tensor_sizes(y), yg_tensor_ndim(y), -1, 1, seed + 99);
    YG_CHECK(yg_tensor_set_requires_grad(c->v, true));
    YG_CHECK(yg_grad((const yg_tensor *const *)&y, 1, (const yg_tensor *const *)&c->v, inputs,
                     n_float, false, false, true, g));
    for (int i = 0; i < n_float; i++) {
        if (g[i] == NULL)
            continue;
        c->diff[c->n_diff] = idx[i];
        c->w[c->n_diff] = yg_test_rand(YG_FLOAT64, yg_tensor_sizes(g[i]), yg_tensor_ndim(g[i]),
                                       -1, 1, seed + 200 + (uint64_t)i);
        c->n_diff++;
        yg_release(g[i]);
    }
    yg_release(y);
}

static void gg_teardown(gg_case *c)
{
    for (int i = 0; i < MAX_IN; i++) {
        yg_release(c->x[i]);
        yg_release(c->w[i]);
    }
    yg_release(c->v);
}

/* Returns failures; *unsupported set when double backward reports
 * YG_ERR_NOT_IMPLEMENTED (an op without a formula was reached). */
static int gradgradcheck_sample(const sample *s, uint64_t seed, bool *unsupported)
{
    const double eps = 1e-6, atol = 1e-5, rtol = 1e-3;
    gg_case c;
    yg_tensor *l2 = NULL, *h[MAX_IN + 1] = {0};
    const yg_tensor *wrt[MAX_IN + 1];
    int n_wrt = 0, failures = 0;
    yg_status st;

    *unsupported = false;
    gg_setup(&c, s, seed);
    if (c.n_diff == 0) {
        gg_teardown(&c);
        return 0;
    }
    for (int i = 0; i < c.n_diff; i++)
        wrt[n_wrt++] = c.x[c.diff[i]];
    wrt[n_wrt++] = c.v;
    st = gg_l2(&c, true, &l2);
    if (st == YG_OK && !yg_tensor_requires_grad(l2))
        st = YG_OK; /* G does not depend on x or v: all second derivatives 0 */
    else if (st == YG_OK)
        st = yg_grad((const yg_tensor *const *)&l2, 1, NULL, wrt, n_wrt, false, false, true, h);
    if (st == YG_ERR_NOT_IMPLEMENTED) {
        *unsupported = true;
        goto out;
    }
    if (st != YG_OK) {
        print_error("%s (%s): double backward failed: %s\n", s->op, s->what, yg_last_error());
        failures++;
        goto out;
    }
    for (int k = 0; k < n_wrt && failures == 0; k++) {
        yg_tensor *t = (yg_tensor *)wrt[k];
        double *data = yg_tensor_data(t), *hv = h[k] ? yg_test_values(h[k]) : NULL;
        for (int64_t e = 0; e < yg_tensor_numel(t); e++) {
            double orig = data[e], lp, lm, numeric, analytic = hv ? hv[e] : 0;
            data[e] = orig + eps;
            lp = gg_value(&c);
            data[e] = orig - eps;
            lm = gg_value(&c);
            data[e] = orig;
            numeric = (lp - lm) / (2 * eps);
            if (fabs(numeric - analytic) > atol + rtol * fabs(numeric)) {
                print_error("%s (%s): second derivative wrt %s%d [%lld]: analytic %.10g, "
                            "numeric %.10g\n",
                            s->op, s->what, k == n_wrt - 1 ? "grad" : "input ",
                            k == n_wrt - 1 ? 0 : c.diff[k], (long long)e, analytic, numeric);
                failures++;
                break;
            }
        }
        free(hv);
    }
out:
    for (int k = 0; k < n_wrt; k++)
        yg_release(h[k]);
    yg_release(l2);
    gg_teardown(&c);
    return failures;
}

static void test_every_double_differentiable_derivative_passes_gradgradcheck(void **state)
{
    int failures = 0;
    (void)state;
    for (int i = 0; i < opinfo_sample_count(); i++) {
        const sample *s = opinfo_sample_at(i);
        const yg_derivative_info *entry = entry_of(s);
        bool unsupported;
        if (entry == NULL || entry->n_inputs == 0 || entry->no_double_backward != NULL ||
            !opinfo_is_differentiable(s))
            continue;
        failures += gradgradcheck_sample(s, 5000 + (uint64_t)i * 13, &unsupported);
        if (unsupported) {
            print_error("%s (%s, %s): double backward is not implemented (%s); implement it or "
                        "mark the entry with double_backward: not_implemented(\"why\")\n",
                        s->op, s->what, entry->location, yg_last_error());
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

static void test_double_backward_marks_are_not_stale(void **state)
{
    int stale = 0;
    (void)state;
    for (int32_t d = 0; d < yg__derivatives_count; d++) {
        bool any_unsupported = false;
        if (yg__derivatives[d].no_double_backward == NULL)
            continue;
        for (int i = 0; i < opinfo_sample_count(); i++) {
            const sample *s = opinfo_sample_at(i);
            bool unsupported;
            if (strcmp(s->op, yg__derivatives[d].name) != 0 || !opinfo_is_differentiable(s))
                continue;
            (void)gradgradcheck_sample(s, 7000 + (uint64_t)i, &unsupported);
            any_unsupported |= unsupported;
        }
        if (!any_unsupported) {
            print_error("%s (%s) is marked double_backward: not_implemented(\"%s\") but its "
                        "double backward runs: remove the mark\n",
                        yg__derivatives[d].name, yg__derivatives[d].location,
                        yg__derivatives[d].no_double_backward);
            stale++;
        }
    }
    assert_int_equal(stale, 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_derivative_has_a_sample),
        cmocka_unit_test(test_every_derivative_matches_finite_differences),
        cmocka_unit_test(test_every_double_differentiable_derivative_passes_gradgradcheck),
        cmocka_unit_test(test_double_backward_marks_are_not_stale),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
