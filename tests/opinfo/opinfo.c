/*
 * opinfo.c - gathers the family tables of the OpInfo table and builds
 * sample inputs (see opinfo.h).
 */
#include "opinfo.h"

#include "testutil.h"
#include "yagrad/ops_inplace_fill.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_slicing.h"
#include "yagrad/ops_dtype_conversion.h"
#include "yagrad/ops_inplace_fill.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_slicing.h"
#include "yagrad/ops_dtype_conversion.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const sample *const tables[] = {
    opinfo_derivative_samples,
    opinfo_derivative_more_samples,
    opinfo_inplace_samples,
    opinfo_backward_samples,
    opinfo_composite_samples,
    opinfo_edge_samples,
    opinfo_creation_samples,
};
#define N_TABLES ((int)(sizeof tables / sizeof tables[0]))

int opinfo_sample_count(void) {
    int n = 0;
    for (int t = 0; t < N_TABLES; t++)
        for (const sample *s = tables[t]; s->op != NULL; s++)
            n++;
    return n;
}

const sample *opinfo_sample_at(int i) {
    for (int t = 0; t < N_TABLES; t++)
        for (const sample *s = tables[t]; s->op != NULL; s++)
            if (i-- == 0)
                return s;
    return NULL;
}

yg_status opinfo_call(const sample *s, yg_tensor *const *x, yg_tensor **out)
{
    yg_manual_seed(OPINFO_SEED);
    return s->fn(x, out);
}

const yg_op_info *opinfo_op(const char *name) {
    for (int32_t i = 0; i < yg__ops_count; i++)
        if (strcmp(yg__ops[i].name, name) == 0)
            return &yg__ops[i];
    return NULL;
}

const yg_derivative_info *opinfo_derivative(const char *name) {
    for (int32_t i = 0; i < yg__derivatives_count; i++)
        if (strcmp(yg__derivatives[i].name, name) == 0)
            return &yg__derivatives[i];
    return NULL;
}

bool opinfo_is_differentiable(const sample *s) {
    const yg_derivative_info *d = opinfo_derivative(s->op);
    const yg_op_info *op = opinfo_op(s->op);
    bool any_float = false;

    for (int i = 0; i < s->n_inputs; i++)
        any_float |= s->in[i].dtype == YG_FLOAT64 && !s->in[i].constant;
    if (!any_float)
        return false;
    if (d != NULL)
        return true; /* an entry without inputs is checked to record nothing */
    return op != NULL && op->kind == YG_OP_KIND_COMPOSITE && !(s->flags & OPINFO_NO_GRAD);
}

/* Values of spec in [lo, hi), converted for dtype: integers are floored,
 * bools are "above the middle of the range". */
static double *make_values(const input_spec *spec,
                           yg_dtype dtype,
                           const int64_t *sizes,
                           int64_t ndim,
                           uint64_t seed) {
    yg_tensor *t = yg_test_rand(YG_FLOAT64, sizes, ndim, spec->lo, spec->hi, seed);
    double *v = yg_test_values(t);
    int64_t n = yg_tensor_numel(t);

    yg_release(t);
    for (int64_t i = 0; i < n; i++) {
        if (dtype == YG_INT64)
            v[i] = floor(v[i]);
        else if (dtype == YG_BOOL)
            v[i] = v[i] > (spec->lo + spec->hi) / 2;
    }
    return v;
}

/* A tensor of dtype from values: yg_test_tensor for the dtypes it writes,
 * else (float16, bfloat16) float64 values converted by the runtime. */
static yg_tensor *make_tensor(yg_dtype dtype, const int64_t *sizes, int64_t ndim,
                              const double *v)
{
    yg_tensor *t, *c = NULL;

    if (dtype != YG_FLOAT16 && dtype != YG_BFLOAT16)
        return yg_test_tensor(dtype, sizes, ndim, v);
    t = yg_test_tensor(YG_FLOAT64, sizes, ndim, v);
    YG_CHECK(yg_to_dtype(t, dtype, false, &c));
    yg_release(t);
    return c;
}

bool opinfo_refused_on(const sample *s, yg_dtype dtype) {
    return (s->flags & OPINFO_FRACTIONAL_SCALAR) && (dtype == YG_INT64 || dtype == YG_INT32);
}

yg_tensor *opinfo_make_input(const sample *s,
                             int i,
                             yg_dtype dtype,
                             uint64_t seed,
                             bool noncontig,
                             int shape_mode) {
    const input_spec *spec = &s->in[i];
    int64_t sizes[5], ndim = spec->ndim, rev[5], perm[5];
    yg_dtype dt = spec->dtype == YG_INT64 ? YG_INT64 : dtype;
    yg_tensor *t, *base = NULL, *view = NULL, *same = NULL;
    double *v;

    memcpy(sizes, spec->sizes, sizeof spec->sizes);
    if (shape_mode == 1)
        ndim = 0;
    else if (shape_mode == 2)
        sizes[ndim++] = 0;
    v = make_values(spec, dt, sizes, ndim, seed);
    t = make_tensor(dt, sizes, ndim, v);
    free(v);
    if (!noncontig || ndim == 0)
        return t;
    if (ndim == 1) {
        /* every other element of a [2n] tensor */
        int64_t big = 2 * sizes[0];
        YG_CHECK(yg_tensor_zeros(&big, 1, dt, &base));
        YG_CHECK(yg_slice(base, 0, 0, big, 2, &view));
    } else {
        /* a transposed layout: storage sizes reversed, permuted back */
        for (int64_t d = 0; d < ndim; d++) {
            rev[d] = sizes[ndim - 1 - d];
            perm[d] = ndim - 1 - d;
        }
        YG_CHECK(yg_tensor_zeros(rev, ndim, dt, &base));
        YG_CHECK(yg_permute(base, perm, ndim, &view));
    }
    YG_CHECK(yg_copy_(view, t, &same));
    yg_release(same);
    yg_release(base);
    yg_release(t);
    return view;
}

/* Ops without samples yet (keep sorted by YAML order; remove an op when
 * its samples land: every_op_has_samples fails on a stale entry). */
const char *const opinfo_known_gaps[] = {
    NULL,
};

const opinfo_accepted opinfo_accepts_unclaimed[] = {
    {"mse_loss",
     YG_INT64,
     "with reduction none a composite of sub and mul (int64 ops); its mean sample refuses int64"},
    {"l1_loss",
     YG_INT64,
     "with reduction sum a composite of sub, abs and sum (int64 ops); mean would refuse int64"},
    {"mse_loss", YG_INT32, "as for int64"},
    {"l1_loss", YG_INT32, "as for int64"},
    {NULL, YG_FLOAT64, NULL},
};
