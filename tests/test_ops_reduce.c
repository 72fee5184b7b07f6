/*
 * test_ops_reduce.c - the reductions and scans added after sum and mean
 * (prod, amax, amin, max, min, argmax, argmin, all, any, var, std, norm,
 * logsumexp, cumsum, cumprod) and the gradient kernels that need exact
 * values (prod_backward and cumprod_backward with zeros, minmax_backward
 * with ties), against naive float64 loops written here.
 *
 * The naive reference collects, for every output element, the list of
 * input elements reduced into it (by dropping the reduced coordinates),
 * then applies a plain formula to the list.
 */
#include "testutil.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_cumulative.h"
#include "yagrad/ops_extrema.h"
#include "yagrad/ops_statistics.h"
#include "yagrad/ops_views.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef double (*list_fn)(const double *v, int64_t n, double arg);

static double l_prod(const double *v, int64_t n, double a) {
    double p = 1;
    (void)a;
    for (int64_t i = 0; i < n; i++)
        p *= v[i];
    return p;
}
static double l_max(const double *v, int64_t n, double a) {
    double m = -INFINITY;
    (void)a;
    for (int64_t i = 0; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}
static double l_min(const double *v, int64_t n, double a) {
    double m = INFINITY;
    (void)a;
    for (int64_t i = 0; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}
/* a = correction */
static double l_var(const double *v, int64_t n, double a) {
    double mean = 0, ss = 0;
    for (int64_t i = 0; i < n; i++)
        mean += v[i] / (double)n;
    for (int64_t i = 0; i < n; i++)
        ss += (v[i] - mean) * (v[i] - mean);
    return ss / ((double)n - a);
}
static double l_std(const double *v, int64_t n, double a) {
    return sqrt(l_var(v, n, a));
}
/* a = p */
static double l_norm(const double *v, int64_t n, double a) {
    double acc = 0;
    if (isinf(a))
        return a > 0 ? fmax(l_max(v, n, 0), -l_min(v, n, 0)) : 0;
    for (int64_t i = 0; i < n; i++)
        acc += a == 0 ? (v[i] != 0) : pow(fabs(v[i]), a);
    return a == 0 ? acc : pow(acc, 1 / a);
}
static double l_logsumexp(const double *v, int64_t n, double a) {
    double s = 0;
    (void)a;
    for (int64_t i = 0; i < n; i++)
        s += exp(v[i]);
    return log(s);
}

/* Reference reduction of x (values xv, sizes s, ndim nd) over the dims
 * marked in reduced; writes the outputs in row-major order of the kept
 * dims and returns their count. */
static int64_t naive_reduce(const double *xv,
                            const int64_t *s,
                            int nd,
                            const bool *reduced,
                            list_fn fn,
                            double arg,
                            double *out) {
    int64_t n = 1, outer = 1, inner = 1;
    for (int d = 0; d < nd; d++) {
        n *= s[d];
        if (reduced[d])
            inner *= s[d];
        else
            outer *= s[d];
    }
    double *lists = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    int64_t *fill = calloc((size_t)(outer > 0 ? outer : 1), sizeof(int64_t));
    for (int64_t i = 0; i < n; i++) {
        int64_t rem = i, o = 0, ostride = 1;
        for (int d = nd - 1; d >= 0; d--) {
            int64_t c = rem % s[d];
            rem /= s[d];
            if (!reduced[d]) {
                o += c * ostride;
                ostride *= s[d];
            }
        }
        lists[o * inner + fill[o]++] = xv[i];
    }
    for (int64_t o = 0; o < outer; o++)
        out[o] = fn(lists + o * inner, inner, arg);
    free(lists);
    free(fill);
    return outer;
}

typedef yg_status (*reduce_op)(const yg_tensor *x,
                               const int64_t *dim,
                               int64_t dim_len,
                               bool keepdim,
                               double arg,
                               yg_tensor **out);

static yg_status
r_prod(const yg_tensor *x, const int64_t *d, int64_t n, bool k, double a, yg_tensor **o) {
    (void)a;
    return yg_prod_dim(x, d, n, k, o);
}
static yg_status
r_amax(const yg_tensor *x, const int64_t *d, int64_t n, bool k, double a, yg_tensor **o) {
    (void)a;
    return yg_amax(x, d, n, k, o);
}
static yg_status
r_amin(const yg_tensor *x, const int64_t *d, int64_t n, bool k, double a, yg_tensor **o) {
    (void)a;
    return yg_amin(x, d, n, k, o);
}
static yg_status
r_var(const yg_tensor *x, const int64_t *d, int64_t n, bool k, double a, yg_tensor **o) {
    return yg_var(x, d, n, (int64_t)a, k, o);
}
static yg_status
r_std(const yg_tensor *x, const int64_t *d, int64_t n, bool k, double a, yg_tensor **o) {
    return yg_std(x, d, n, (int64_t)a, k, o);
}
static yg_status
r_norm(const yg_tensor *x, const int64_t *d, int64_t n, bool k, double a, yg_tensor **o) {
    return yg_norm(x, a, d, n, k, o);
}
static yg_status
r_lse(const yg_tensor *x, const int64_t *d, int64_t n, bool k, double a, yg_tensor **o) {
    (void)a;
    return yg_logsumexp(x, d, n, k, o);
}

typedef struct reduce_case {
    const char *name;
    reduce_op op;
    list_fn ref;
    double arg;
} reduce_case;

static const reduce_case reduce_cases[] = {
    {"prod", r_prod, l_prod, 0},
    {"amax", r_amax, l_max, 0},
    {"amin", r_amin, l_min, 0},
    {"var", r_var, l_var, 1},
    {"var correction 0", r_var, l_var, 0},
    {"std", r_std, l_std, 1},
    {"norm 2", r_norm, l_norm, 2},
    {"norm 1", r_norm, l_norm, 1},
    {"norm inf", r_norm, l_norm, INFINITY},
    {"norm 0", r_norm, l_norm, 0},
    {"norm 3", r_norm, l_norm, 3},
    {"logsumexp", r_lse, l_logsumexp, 0},
};
#define N_REDUCE ((int)(sizeof reduce_cases / sizeof reduce_cases[0]))

/* Dim lists tried on a [3, 4, 5] input: one dim, two, all (empty), and
 * a negative one. */
static const int64_t dim_lists[][3] = {{1}, {0, 2}, {0}, {-1}, {0}};
static const int64_t dim_lens[] = {1, 2, 0, 1, 1};

static void check_reduce_case(const reduce_case *c,
                              const yg_tensor *x,
                              const double *xv,
                              const int64_t *s,
                              double tol) {
    for (int k = 0; k < 5; k++) {
        bool reduced[3] = {dim_lens[k] == 0, dim_lens[k] == 0, dim_lens[k] == 0};
        int64_t osz[3], on = 0, kosz[3];
        double expected[60];
        yg_tensor *y = NULL;
        for (int i = 0; i < dim_lens[k]; i++)
            reduced[(dim_lists[k][i] + 3) % 3] = true;
        for (int d = 0; d < 3; d++) {
            kosz[d] = reduced[d] ? 1 : s[d];
            if (!reduced[d])
                osz[on++] = s[d];
        }
        naive_reduce(xv, s, 3, reduced, c->ref, c->arg, expected);
        for (int keep = 0; keep < 2; keep++) {
            YG_CHECK(c->op(x, dim_lists[k], dim_lens[k], keep, c->arg, &y));
            if (keep)
                YG_EXPECT_CLOSE(y, kosz, 3, expected, tol, tol);
            else
                YG_EXPECT_CLOSE(y, osz, on, expected, tol, tol);
            yg_release(y);
        }
    }
}

/* sum and mean from 32768 elements split the walk's outermost dim over
 * threads (cpu/reduce.c): kept there (disjoint slots) or reduced there
 * (private partial sums), on contiguous and transposed inputs; var splits
 * its rows. */
static void test_large_sums_split_over_threads_match_naive_loops(void **state) {
    const int64_t s[] = {301, 257};
    int64_t n = s[0] * s[1];
    (void)state;
    for (int dt = 0; dt < 2; dt++) {
        yg_dtype dtype = dt == 0 ? YG_FLOAT32 : YG_FLOAT64;
        yg_tensor *x = yg_test_rand(dtype, s, 2, -1, 1, 11), *xt = NULL;
        double *v = yg_test_values(x), total = 0;
        double *rows = calloc((size_t)s[0], sizeof(double)), *cols = calloc((size_t)s[1], 8);
        for (int64_t i = 0; i < s[0]; i++)
            for (int64_t j = 0; j < s[1]; j++) {
                total += v[i * s[1] + j];
                rows[i] += v[i * s[1] + j];
                cols[j] += v[i * s[1] + j];
            }
        double tol = dtype == YG_FLOAT32 ? 1e-5 : 1e-11;
        const int64_t d0 = 0, d1 = 1;
        yg_tensor *a = NULL, *b = NULL, *c = NULL, *d = NULL, *m = NULL;
        YG_CHECK(yg_sum(x, &a));
        YG_CHECK(yg_sum_dim(x, &d0, 1, false, &b));
        YG_CHECK(yg_sum_dim(x, &d1, 1, false, &c));
        YG_CHECK(yg_transpose(x, 0, 1, &xt));
        YG_CHECK(yg_sum_dim(xt, &d0, 1, false, &d)); /* = rows, through a strided walk */
        YG_CHECK(yg_mean(x, &m));
        double mean = total / (double)n;
        /* var over the last dim: rows split over threads (reduce_stats.c) */
        double *vars = calloc((size_t)s[0], sizeof(double));
        for (int64_t i = 0; i < s[0]; i++) {
            double mu = rows[i] / (double)s[1];
            for (int64_t j = 0; j < s[1]; j++)
                vars[i] += (v[i * s[1] + j] - mu) * (v[i * s[1] + j] - mu) / (double)(s[1] - 1);
        }
        yg_tensor *var = NULL;
        YG_CHECK(yg_var(x, &d1, 1, 1, false, &var));
        YG_EXPECT_CLOSE(var, &s[0], 1, vars, tol, tol);
        yg_release(var);
        free(vars);
        YG_EXPECT_CLOSE(a, NULL, 0, &total, tol, tol);
        YG_EXPECT_CLOSE(b, &s[1], 1, cols, tol, tol);
        YG_EXPECT_CLOSE(c, &s[0], 1, rows, tol, tol);
        YG_EXPECT_CLOSE(d, &s[0], 1, rows, tol, tol);
        YG_EXPECT_CLOSE(m, NULL, 0, &mean, tol, tol);
        yg_release(a);
        yg_release(b);
        yg_release(c);
        yg_release(d);
        yg_release(m);
        yg_release(xt);
        yg_release(x);
        free(v);
        free(rows);
        free(cols);
    }
}

static void test_reductions_match_naive_loops_over_dim_lists(void **state) {
    const int64_t s[] = {3, 4, 5};
    (void)state;
    for (int d = 0; d < 2; d++) {
        yg_dtype dt = d ? YG_FLOAT64 : YG_FLOAT32;
        yg_tensor *x = yg_test_rand(dt, s, 3, -1.2, 1.2, 21);
        double *xv = yg_test_values(x);
        for (int k = 0; k < N_REDUCE; k++) {
            print_message("%s %s\n", reduce_cases[k].name, yg_dtype_name(dt));
            check_reduce_case(&reduce_cases[k], x, xv, s, d ? 1e-12 : 2e-5);
        }
        free(xv);
        yg_release(x);
    }
}

static void test_reductions_of_permuted_views_match_naive_loops(void **state) {
    const int64_t base[] = {5, 3, 4}, perm[] = {1, 2, 0}, s[] = {3, 4, 5};
    yg_tensor *b = yg_test_rand(YG_FLOAT64, base, 3, -1, 1, 5), *x = NULL;
    double *xv;
    (void)state;
    YG_CHECK(yg_permute(b, perm, 3, &x));
    assert_false(yg_tensor_is_contiguous(x));
    xv = yg_test_values(x);
    for (int k = 0; k < N_REDUCE; k++)
        check_reduce_case(&reduce_cases[k], x, xv, s, 1e-12);
    free(xv);
    yg_release(x);
    yg_release(b);
}

static void test_int64_prod_and_amax_are_exact(void **state) {
    const int64_t s[] = {2, 2};
    const double v[] = {3037000499.0, 3, -7, 2};
    const double prod0[] = {-21259003493.0, 6}, amax1[] = {3037000499.0, 2};
    const int64_t d0[] = {0}, d1[] = {1}, r[] = {2};
    yg_tensor *x = yg_test_tensor(YG_INT64, s, 2, v), *y = NULL;
    (void)state;
    YG_CHECK(yg_prod_dim(x, d0, 1, false, &y));
    assert_int_equal(yg_tensor_dtype(y), YG_INT64);
    YG_EXPECT_CLOSE(y, r, 1, prod0, 0, 0);
    yg_release(y);
    YG_CHECK(yg_amax(x, d1, 1, false, &y));
    assert_int_equal(yg_tensor_dtype(y), YG_INT64);
    YG_EXPECT_CLOSE(y, r, 1, amax1, 0, 0);
    yg_release(y);
    yg_release(x);
}

static void test_max_min_and_prod_of_every_element(void **state) {
    const int64_t s[] = {2, 3};
    const double v[] = {1, -4, 2, 0.5, 3, -1};
    const double mx[] = {3}, mn[] = {-4}, pr[] = {12};
    yg_tensor *x = yg_test_tensor(YG_FLOAT32, s, 2, v), *y = NULL;
    (void)state;
    YG_CHECK(yg_max(x, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, mx, 0, 0);
    yg_release(y);
    YG_CHECK(yg_min(x, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, mn, 0, 0);
    yg_release(y);
    YG_CHECK(yg_prod(x, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, pr, 0, 0);
    yg_release(y);
    yg_release(x);
}

static void test_amax_propagates_nan_and_rejects_empty_reductions(void **state) {
    const int64_t s[] = {2, 2}, e[] = {0, 3}, d0[] = {0}, d1[] = {1}, r[] = {2};
    const double v[] = {1, NAN, 3, 4}, expected[] = {NAN, 4};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 2, v), *z = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_amax(x, d1, 1, false, &y));
    YG_EXPECT_CLOSE(y, r, 1, expected, 0, 0);
    yg_release(y);
    YG_CHECK(yg_tensor_zeros(e, 2, YG_FLOAT32, &z));
    YG_EXPECT_ERROR(yg_amax(z, d0, 1, false, &y),
                    YG_ERR_SHAPE,
                    "amax: cannot reduce over zero elements of self [0, 3]");
    assert_null(y);
    /* Reducing the non-empty dim of an empty tensor is fine: empty result. */
    YG_CHECK(yg_amin(z, d1, 1, false, &y));
    {
        const int64_t es[] = {0};
        YG_EXPECT_CLOSE(y, es, 1, expected, 0, 0);
    }
    yg_release(y);
    YG_EXPECT_ERROR(yg_argmax(z, &y), YG_ERR_SHAPE, "argmax: cannot reduce over zero elements");
    assert_null(y);
    yg_release(z);
    yg_release(x);
}

static void test_argmax_and_argmin_take_the_first_extremum(void **state) {
    const int64_t s[] = {2, 4}, r[] = {2}, rk[] = {1, 4};
    const double v[] = {1, 5, 5, 0, 2, NAN, 9, NAN};
    const double amax_rows[] = {1, 1}, flat_max[] = {5}, flat_min[] = {3};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 2, v), *y = NULL;
    (void)state;
    YG_CHECK(yg_argmax_dim(x, 1, false, &y));
    assert_int_equal(yg_tensor_dtype(y), YG_INT64);
    YG_EXPECT_CLOSE(y, r, 1, amax_rows, 0, 0);
    yg_release(y);
    YG_CHECK(yg_argmin_dim(x, 0, true, &y));
    {
        const double e[] = {0, 1, 0, 1}; /* NaN (columns 1 and 3) counts as smallest */
        YG_EXPECT_CLOSE(y, rk, 2, e, 0, 0);
    }
    yg_release(y);
    YG_CHECK(yg_argmax(x, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, flat_max, 0, 0);
    yg_release(y);
    {
        const double w[] = {1, 5, 5, 0, 2, 3, 9, 4};
        yg_tensor *x2 = yg_test_tensor(YG_INT64, s, 2, w);
        YG_CHECK(yg_argmin(x2, &y));
        YG_EXPECT_CLOSE(y, NULL, 0, flat_min, 0, 0);
        yg_release(y);
        yg_release(x2);
    }
    yg_release(x);
}

static void test_all_and_any_read_non_zero_as_true(void **state) {
    const int64_t s[] = {2, 3}, d1[] = {1}, r[] = {2}, e[] = {0};
    const double v[] = {1, 2, -1, 0, 0, 3};
    const double all_r[] = {1, 0}, any_r[] = {1, 1}, t[] = {1}, f[] = {0};
    yg_tensor *x = yg_test_tensor(YG_FLOAT32, s, 2, v), *z = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_all_dim(x, d1, 1, false, &y));
    assert_int_equal(yg_tensor_dtype(y), YG_BOOL);
    YG_EXPECT_CLOSE(y, r, 1, all_r, 0, 0);
    yg_release(y);
    YG_CHECK(yg_any_dim(x, d1, 1, false, &y));
    YG_EXPECT_CLOSE(y, r, 1, any_r, 0, 0);
    yg_release(y);
    YG_CHECK(yg_all(x, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, f, 0, 0);
    yg_release(y);
    YG_CHECK(yg_tensor_zeros(e, 1, YG_INT64, &z));
    YG_CHECK(yg_all(z, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, t, 0, 0);
    yg_release(y);
    YG_CHECK(yg_any(z, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, f, 0, 0);
    yg_release(y);
    yg_release(z);
    yg_release(x);
}

static void test_scans_match_running_sums_and_products(void **state) {
    const int64_t s[] = {3, 4};
    yg_tensor *x = yg_test_rand(YG_FLOAT32, s, 2, -1.5, 1.5, 17), *y = NULL, *xt = NULL;
    double *xv = yg_test_values(x), cs0[12], cp1[12];
    (void)state;
    for (int j = 0; j < 4; j++) {
        double acc = 0;
        for (int i = 0; i < 3; i++)
            cs0[i * 4 + j] = acc += xv[i * 4 + j];
    }
    for (int i = 0; i < 3; i++) {
        double acc = 1;
        for (int j = 0; j < 4; j++)
            cp1[i * 4 + j] = acc *= xv[i * 4 + j];
    }
    YG_CHECK(yg_cumsum(x, 0, &y));
    YG_EXPECT_CLOSE(y, s, 2, cs0, 1e-6, 1e-6);
    yg_release(y);
    YG_CHECK(yg_cumprod(x, -1, &y));
    YG_EXPECT_CLOSE(y, s, 2, cp1, 1e-6, 1e-6);
    yg_release(y);
    /* Along dim 1 of the transpose = along dim 0 of x, transposed. */
    YG_CHECK(yg_t(x, &xt));
    YG_CHECK(yg_cumsum(xt, 1, &y));
    {
        const int64_t ts[] = {4, 3};
        double e[12];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 4; j++)
                e[j * 3 + i] = cs0[i * 4 + j];
        YG_EXPECT_CLOSE(y, ts, 2, e, 1e-6, 1e-6);
    }
    yg_release(y);
    free(xv);
    yg_release(xt);
    yg_release(x);
}

static void test_integer_cumsum_gives_int64(void **state) {
    const int64_t s[] = {4};
    const double v[] = {1, 0, 1, 1}, e[] = {1, 1, 2, 3};
    yg_tensor *x = yg_test_tensor(YG_BOOL, s, 1, v), *y = NULL;
    (void)state;
    YG_CHECK(yg_cumsum(x, 0, &y));
    assert_int_equal(yg_tensor_dtype(y), YG_INT64);
    YG_EXPECT_CLOSE(y, s, 1, e, 0, 0);
    yg_release(y);
    yg_release(x);
}

/* d/dx_k of sum_j g_j prod_{i<=j} x_i, by brute force. */
static void naive_cumprod_grad(const double *x, const double *g, int n, double *out) {
    for (int k = 0; k < n; k++) {
        out[k] = 0;
        for (int j = k; j < n; j++) {
            double p = 1;
            for (int i = 0; i <= j; i++)
                p *= i == k ? 1 : x[i];
            out[k] += g[j] * p;
        }
    }
}

static void test_cumprod_backward_is_exact_at_zeros(void **state) {
    const int64_t s[] = {3, 5};
    const double xv[] = {2, 0, 3, -1, 0.5, 0, 0, 4, 2, 1, 1.5, -2, 0.5, 3, 2};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 2, xv),
              *g = yg_test_rand(YG_FLOAT64, s, 2, -1, 1, 3);
    yg_tensor *y = NULL;
    double *gv = yg_test_values(g), expected[15];
    (void)state;
    for (int r = 0; r < 3; r++)
        naive_cumprod_grad(xv + r * 5, gv + r * 5, 5, expected + r * 5);
    YG_CHECK(yg_cumprod_backward(g, x, 1, &y));
    YG_EXPECT_CLOSE(y, s, 2, expected, 1e-14, 1e-14);
    yg_release(y);
    free(gv);
    yg_release(g);
    yg_release(x);
}

/* prod of x[0..n) without the positions a and b (-1: none) */
static double prod_without(const double *x, int n, int a, int b) {
    double p = 1;
    for (int j = 0; j < n; j++)
        if (j != a && j != b)
            p *= x[j];
    return p;
}

static void test_cumprod_jvp_and_double_backward_are_exact_at_zeros(void **state) {
    /* jvp_i = sum_{k <= i} g_k prod_{j <= i, j != k} x_j;
     * dbw_m = sum_{i >= m} go_i sum_{k <= i, k != m} g_k prod_{j <= i, j != k, m} x_j */
    const int64_t s[] = {3, 5}, bad[] = {5, 3};
    const double xv[] = {2, 0, 3, -1, 0.5, 0, 0, 4, 2, 1, 1.5, -2, 0.5, 3, 2};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 2, xv),
              *g = yg_test_rand(YG_FLOAT64, s, 2, -1, 1, 4),
              *go = yg_test_rand(YG_FLOAT64, s, 2, -1, 1, 5), *b = NULL, *y = NULL;
    double *gv = yg_test_values(g), *gov = yg_test_values(go), jvp[15], dbw[15];
    (void)state;
    for (int r = 0; r < 3; r++) {
        const double *xr = xv + r * 5, *gr = gv + r * 5, *gor = gov + r * 5;
        for (int i = 0; i < 5; i++) {
            jvp[r * 5 + i] = 0;
            for (int k = 0; k <= i; k++)
                jvp[r * 5 + i] += gr[k] * prod_without(xr, i + 1, k, -1);
        }
        for (int m = 0; m < 5; m++) {
            dbw[r * 5 + m] = 0;
            for (int i = m; i < 5; i++)
                for (int k = 0; k <= i; k++)
                    if (k != m)
                        dbw[r * 5 + m] += gor[i] * gr[k] * prod_without(xr, i + 1, k, m);
        }
    }
    YG_CHECK(yg_cumprod_jvp(g, x, 1, &y));
    YG_EXPECT_CLOSE(y, s, 2, jvp, 1e-14, 1e-14);
    yg_release(y);
    YG_CHECK(yg_cumprod_double_backward(g, go, x, 1, &y));
    YG_EXPECT_CLOSE(y, s, 2, dbw, 1e-14, 1e-14);
    yg_release(y);
    YG_CHECK(yg_tensor_zeros(bad, 2, YG_FLOAT64, &b));
    YG_EXPECT_ERROR(yg_cumprod_jvp(b, x, 1, &y),
                    YG_ERR_SHAPE,
                    "cumprod_jvp: grad [5, 3] does not match self [3, 5]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_cumprod_double_backward(g, b, x, 1, &y),
                    YG_ERR_SHAPE,
                    "cumprod_double_backward: grad_output [5, 3] does not match self [3, 5]");
    assert_null(y);
    free(gv);
    free(gov);
    yg_release(b);
    yg_release(go);
    yg_release(g);
    yg_release(x);
}

static void test_prod_backward_is_exact_at_zeros(void **state) {
    const int64_t s[] = {3, 3}, d1[] = {1}, r[] = {3};
    const double xv[] = {2, 0, 3, 0, 5, 0, 1.5, -2, 4};
    const double gv[] = {1, 2, -1};
    /* row 0: one zero; row 1: two zeros; row 2: none */
    const double expected[] = {0, 6, 0, 0, 0, 0, -8 * -1, 6 * -1, -3 * -1};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 2, xv), *g = yg_test_tensor(YG_FLOAT64, r, 1, gv);
    yg_tensor *y = NULL;
    (void)state;
    YG_CHECK(yg_prod_backward(g, x, d1, 1, false, &y));
    YG_EXPECT_CLOSE(y, s, 2, expected, 1e-15, 1e-15);
    yg_release(y);
    yg_release(g);
    yg_release(x);
}

static void test_prod_double_backward_is_exact_at_zeros(void **state) {
    /* go_r sum_{i != k} g_ri prod_{j != i, k} x_rj, by naive loops; rows
     * with one, two and three zeros and none, reduced over dim 1 */
    const int64_t s[] = {4, 3}, d1[] = {1}, r[] = {4}, bad[] = {3, 4};
    const double xv[] = {2, 0, 3, 0, 5, 0, 0, 0, 0, 1.5, -2, 4};
    const double gv[] = {1, -2, 0.5, 3, 1, -1, 2, 2, 2, -1, 0.25, 2};
    const double gov[] = {1, 2, -1, 0.5};
    double expected[12];
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 2, xv), *g = yg_test_tensor(YG_FLOAT64, s, 2, gv),
              *go = yg_test_tensor(YG_FLOAT64, r, 1, gov), *gb = NULL, *y = NULL;
    (void)state;
    for (int row = 0; row < 4; row++)
        for (int k = 0; k < 3; k++) {
            double acc = 0;
            for (int i = 0; i < 3; i++) {
                double p = gv[row * 3 + i];
                if (i == k)
                    continue;
                for (int j = 0; j < 3; j++)
                    if (j != i && j != k)
                        p *= xv[row * 3 + j];
                acc += p;
            }
            expected[row * 3 + k] = gov[row] * acc;
        }
    YG_CHECK(yg_prod_double_backward(g, go, x, d1, 1, false, &y));
    YG_EXPECT_CLOSE(y, s, 2, expected, 1e-15, 1e-15);
    yg_release(y);
    YG_CHECK(yg_tensor_zeros(bad, 2, YG_FLOAT64, &gb));
    YG_EXPECT_ERROR(yg_prod_double_backward(gb, go, x, d1, 1, false, &y),
                    YG_ERR_SHAPE,
                    "prod_double_backward: grad [3, 4] does not match self [4, 3]");
    assert_null(y);
    yg_release(gb);
    yg_release(go);
    yg_release(g);
    yg_release(x);
}

static void test_minmax_backward_splits_the_gradient_between_ties(void **state) {
    const int64_t s[] = {2, 3}, d1[] = {1}, r[] = {2};
    const double xv[] = {4, 1, 4, 2, 7, 3}, mv[] = {4, 7}, gv[] = {1, 3};
    const double expected[] = {0.5, 0, 0.5, 0, 3, 0};
    yg_tensor *x = yg_test_tensor(YG_FLOAT32, s, 2, xv), *m = yg_test_tensor(YG_FLOAT32, r, 1, mv);
    yg_tensor *g = yg_test_tensor(YG_FLOAT32, r, 1, gv), *y = NULL;
    (void)state;
    YG_CHECK(yg_minmax_backward(g, x, m, d1, 1, false, &y));
    YG_EXPECT_CLOSE(y, s, 2, expected, 0, 0);
    yg_release(y);
    YG_EXPECT_ERROR(yg_minmax_backward(x, x, m, d1, 1, false, &y),
                    YG_ERR_SHAPE,
                    "minmax_backward: grad_output [2, 3] does not match the reduced shape [2]");
    assert_null(y);
    yg_release(g);
    yg_release(m);
    yg_release(x);
}

static void test_logsumexp_does_not_overflow(void **state) {
    const int64_t s[] = {3}, d0[] = {0};
    const double v[] = {1000, 1000, -INFINITY}, expected[] = {1000 + 0.69314718055994531};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 1, v), *y = NULL;
    (void)state;
    YG_CHECK(yg_logsumexp(x, d0, 1, false, &y));
    YG_EXPECT_CLOSE(y, NULL, 0, expected, 1e-12, 1e-15);
    yg_release(y);
    yg_release(x);
}

static void test_float_reductions_reject_integer_input_and_bad_dims(void **state) {
    const int64_t s[] = {2, 3}, twice[] = {1, -1}, d5[] = {5};
    yg_tensor *x = NULL, *f = NULL, *y = NULL;
    (void)state;
    YG_CHECK(yg_tensor_zeros(s, 2, YG_INT64, &x));
    YG_CHECK(yg_tensor_zeros(s, 2, YG_FLOAT32, &f));
    YG_EXPECT_ERROR(
        yg_var(x, NULL, 0, 1, false, &y), YG_ERR_DTYPE, "var: unsupported dtype int64 for self");
    assert_null(y);
    YG_EXPECT_ERROR(
        yg_logsumexp(x, NULL, 0, false, &y), YG_ERR_DTYPE, "logsumexp: unsupported dtype int64");
    assert_null(y);
    YG_EXPECT_ERROR(yg_amax(f, twice, 2, false, &y),
                    YG_ERR_INVALID_ARGUMENT,
                    "amax: dim 1 appears more than once in dim list [1, -1]");
    assert_null(y);
    YG_EXPECT_ERROR(yg_norm(f, 2, d5, 1, false, &y), YG_ERR_INDEX, "norm: dim 5 out of range");
    assert_null(y);
    YG_EXPECT_ERROR(yg_norm(f, NAN, NULL, 0, false, &y), YG_ERR_INVALID_ARGUMENT, "norm: p is NaN");
    assert_null(y);
    YG_EXPECT_ERROR(yg_cumsum(f, 2, &y), YG_ERR_INDEX, "cumsum: dim 2 out of range");
    assert_null(y);
    yg_release(f);
    yg_release(x);
}

static void test_max_dim_returns_values_and_first_indices(void **state) {
    const int64_t s[] = {2, 3}, r[] = {2}, rk[] = {2, 1};
    const double v[] = {1, 4, 4, -2, -5, -5};
    const double maxv[] = {4, -2}, maxi[] = {1, 0}, minv[] = {1, -5}, mini[] = {0, 1};
    yg_tensor *x = yg_test_tensor(YG_FLOAT64, s, 2, v), *vals = NULL, *idx = NULL, *sum = NULL,
              *g = NULL;
    (void)state;
    YG_CHECK(yg_max_dim(x, 1, false, &vals, &idx));
    YG_EXPECT_CLOSE(vals, r, 1, maxv, 0, 0);
    YG_EXPECT_CLOSE(idx, r, 1, maxi, 0, 0);
    assert_int_equal(yg_tensor_dtype(idx), YG_INT64);
    yg_release(vals);
    yg_release(idx);
    YG_CHECK(yg_min_dim(x, -1, true, &vals, &idx));
    YG_EXPECT_CLOSE(vals, rk, 2, minv, 0, 0);
    YG_EXPECT_CLOSE(idx, rk, 2, mini, 0, 0);
    yg_release(vals);
    yg_release(idx);
    /* The gradient goes to the chosen index only, not split between ties. */
    YG_CHECK(yg_tensor_set_requires_grad(x, true));
    YG_CHECK(yg_max_dim(x, 1, false, &vals, &idx));
    YG_CHECK(yg_sum(vals, &sum));
    YG_CHECK(yg_backward(sum, NULL, false));
    YG_CHECK(yg_tensor_grad(x, &g));
    {
        const double e[] = {0, 1, 0, 1, 0, 0};
        YG_EXPECT_CLOSE(g, s, 2, e, 0, 0);
    }
    yg_release(g);
    yg_release(sum);
    yg_release(vals);
    yg_release(idx);
    YG_EXPECT_ERROR(yg_max_dim(x, 2, false, &vals, &idx), YG_ERR_INDEX, "max: dim 2 out of range");
    assert_null(vals);
    assert_null(idx);
    yg_release(x);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reductions_match_naive_loops_over_dim_lists),
        cmocka_unit_test(test_large_sums_split_over_threads_match_naive_loops),
        cmocka_unit_test(test_reductions_of_permuted_views_match_naive_loops),
        cmocka_unit_test(test_int64_prod_and_amax_are_exact),
        cmocka_unit_test(test_max_min_and_prod_of_every_element),
        cmocka_unit_test(test_amax_propagates_nan_and_rejects_empty_reductions),
        cmocka_unit_test(test_argmax_and_argmin_take_the_first_extremum),
        cmocka_unit_test(test_all_and_any_read_non_zero_as_true),
        cmocka_unit_test(test_scans_match_running_sums_and_products),
        cmocka_unit_test(test_integer_cumsum_gives_int64),
        cmocka_unit_test(test_cumprod_backward_is_exact_at_zeros),
        cmocka_unit_test(test_cumprod_jvp_and_double_backward_are_exact_at_zeros),
        cmocka_unit_test(test_prod_backward_is_exact_at_zeros),
        cmocka_unit_test(test_prod_double_backward_is_exact_at_zeros),
        cmocka_unit_test(test_minmax_backward_splits_the_gradient_between_ties),
        cmocka_unit_test(test_logsumexp_does_not_overflow),
        cmocka_unit_test(test_float_reductions_reject_integer_input_and_bad_dims),
        cmocka_unit_test(test_max_dim_returns_values_and_first_indices),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
