/*
 * samples_creation.c - OpInfo samples of the creation ops (no Tensor input,
 * or only a Tensor to take the shape of) and the random ops.  Random ops
 * draw from the default generator, which opinfo_call seeds before every
 * call, so a sample gives the same values each time.  See opinfo.h.
 */
#include "opinfo.h"
#include "yagrad/ops_inplace_fill.h"
#include "yagrad/ops_creation.h"
#include "yagrad/ops_random.h"
#include "yagrad/ops_inplace_fill.h"
#include "yagrad/ops_creation.h"
#include "yagrad/ops_random.h"

static const int64_t size23[] = {2, 3};
static const yg_dtype f64 = YG_FLOAT64, i64 = YG_INT64;

/* empty's values are undefined: the sample fills them (with fill_) so that
 * the runners compare defined values; its shape and dtype are the op's. */
static yg_status filled(yg_status st, yg_tensor **o)
{
    yg_tensor *same = NULL;
    if (st == YG_OK)
        st = yg_fill_(*o, 0.25, &same);
    yg_release(same);
    if (st != YG_OK) {
        yg_release(*o);
        *o = NULL;
    }
    return st;
}

static yg_status f_zeros(yg_tensor *const *x, yg_tensor **o) { (void)x; return yg_zeros(size23, 2, NULL, NULL, o); }
static yg_status f_ones(yg_tensor *const *x, yg_tensor **o) { (void)x; return yg_ones(size23, 2, &f64, NULL, o); }
static yg_status f_full(yg_tensor *const *x, yg_tensor **o) { (void)x; return yg_full(size23, 2, -1.5, &f64, NULL, o); }
static yg_status f_empty(yg_tensor *const *x, yg_tensor **o) { (void)x; return filled(yg_empty(size23, 2, &f64, NULL, o), o); }
static yg_status f_arange(yg_tensor *const *x, yg_tensor **o) { (void)x; return yg_arange(5, NULL, NULL, o); }
static yg_status f_arange_start(yg_tensor *const *x, yg_tensor **o) { (void)x; return yg_arange_start(-1, 1, 0.25, &f64, NULL, o); }
static yg_status f_linspace(yg_tensor *const *x, yg_tensor **o) { (void)x; return yg_linspace(-2, 3, 6, &f64, NULL, o); }
static yg_status f_eye(yg_tensor *const *x, yg_tensor **o) { (void)x; return yg_eye(3, &f64, NULL, o); }
static yg_status f_eye_m(yg_tensor *const *x, yg_tensor **o) { (void)x; return yg_eye_m(2, 4, &i64, NULL, o); }
static yg_status f_zeros_like(yg_tensor *const *x, yg_tensor **o) { return yg_zeros_like(x[0], NULL, NULL, o); }
static yg_status f_ones_like(yg_tensor *const *x, yg_tensor **o) { return yg_ones_like(x[0], NULL, NULL, o); }
static yg_status f_full_like(yg_tensor *const *x, yg_tensor **o) { return yg_full_like(x[0], 2.5, NULL, NULL, o); }
static yg_status f_empty_like(yg_tensor *const *x, yg_tensor **o) { return filled(yg_empty_like(x[0], NULL, NULL, o), o); }
static yg_status f_rand(yg_tensor *const *x, yg_tensor **o) { (void)x; return yg_rand(size23, 2, NULL, &f64, NULL, o); }
static yg_status f_randn(yg_tensor *const *x, yg_tensor **o) { (void)x; return yg_randn(size23, 2, NULL, &f64, NULL, o); }
static yg_status f_randint(yg_tensor *const *x, yg_tensor **o) { (void)x; return yg_randint(-3, 4, size23, 2, NULL, NULL, NULL, o); }
static yg_status f_rand_like(yg_tensor *const *x, yg_tensor **o) { return yg_rand_like(x[0], NULL, NULL, NULL, o); }
static yg_status f_randn_like(yg_tensor *const *x, yg_tensor **o) { return yg_randn_like(x[0], NULL, NULL, NULL, o); }
static yg_status f_dropout(yg_tensor *const *x, yg_tensor **o) { return yg_dropout(x[0], 0.3, true, NULL, o); }
static yg_status f_dropout_eval(yg_tensor *const *x, yg_tensor **o) { return yg_dropout(x[0], 0.3, false, NULL, o); }

const sample opinfo_creation_samples[] = {
    {"zeros", "[2, 3], default dtype", 0, {{0}}, f_zeros},
    {"ones", "[2, 3] float64", 0, {{0}}, f_ones},
    {"full", "[2, 3] of -1.5", 0, {{0}}, f_full},
    {"empty", "[2, 3], filled by the sample", 0, {{0}}, f_empty},
    {"arange", "end 5 (int64)", 0, {{0}}, f_arange},
    {"arange.start", "-1 to 1 by 0.25", 0, {{0}}, f_arange_start},
    {"linspace", "-2 to 3 in 6 steps", 0, {{0}}, f_linspace},
    {"eye", "3", 0, {{0}}, f_eye},
    {"eye.m", "2 x 4 int64", 0, {{0}}, f_eye_m},
    {"zeros_like", "", 1, {F64(-1, 1, 2, 2, 3)}, f_zeros_like, NULL, OPINFO_ANY_SHAPE | OPINFO_NO_GRAD},
    {"ones_like", "", 1, {F64(-1, 1, 2, 2, 3)}, f_ones_like, NULL, OPINFO_ANY_SHAPE | OPINFO_NO_GRAD},
    {"full_like", "2.5", 1, {F64(-1, 1, 2, 2, 3)}, f_full_like, NULL, OPINFO_ANY_SHAPE | OPINFO_NO_GRAD},
    {"empty_like", "filled by the sample", 1, {F64(-1, 1, 2, 2, 3)}, f_empty_like, NULL, OPINFO_ANY_SHAPE | OPINFO_NO_GRAD},
    {"rand", "[2, 3] float64", 0, {{0}}, f_rand},
    {"randn", "[2, 3] float64", 0, {{0}}, f_randn},
    {"randint", "[-3, 4)", 0, {{0}}, f_randint},
    {"rand_like", "", 1, {F64(-1, 1, 2, 2, 3)}, f_rand_like, NULL, OPINFO_ANY_SHAPE | OPINFO_NO_GRAD},
    {"randn_like", "", 1, {F64(-1, 1, 2, 2, 3)}, f_randn_like, NULL, OPINFO_ANY_SHAPE | OPINFO_NO_GRAD},
    {"dropout", "p 0.3, training", 1, {F64(-1, 1, 2, 3, 4)}, f_dropout},
    {"dropout", "evaluation: a copy", 1, {F64(-1, 1, 2, 3, 4)}, f_dropout_eval},
    {NULL, NULL, 0, {{0}}, NULL, NULL, 0},
};
