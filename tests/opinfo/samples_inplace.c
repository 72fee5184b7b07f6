/*
 * samples_inplace.c - OpInfo samples of the in-place ops without an entry
 * in specs/derivatives.yaml (see opinfo.h), each with its out-of-place
 * twin where the YAML has one, and of div.mode.
 */
#include "opinfo.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_blend.h"
#include "yagrad/ops_inplace_arithmetic.h"
#include "yagrad/ops_inplace_fill.h"
#include "yagrad/ops_rounding.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_blend.h"
#include "yagrad/ops_inplace_arithmetic.h"
#include "yagrad/ops_inplace_fill.h"
#include "yagrad/ops_rounding.h"

INPLACE_TWIN_SAMPLE(f_add_scalar_, yg_add_scalar_(self, 1.5, -2.0, &same),
                    yg_add_scalar(self, 1.5, -2.0, o))
INPLACE_TWIN_SAMPLE(f_div_scalar_, yg_div_scalar_(self, 4.0, &same),
                    yg_div_scalar(self, 4.0, o))
INPLACE_TWIN_SAMPLE(f_addcmul_, yg_addcmul_(self, x[1], x[2], 0.5, &same),
                    yg_addcmul(self, x[1], x[2], 0.5, o))
INPLACE_TWIN_SAMPLE(f_addcdiv_, yg_addcdiv_(self, x[1], x[2], -2.0, &same),
                    yg_addcdiv(self, x[1], x[2], -2.0, o))
INPLACE_TWIN_SAMPLE(f_lerp_, yg_lerp_scalar_(self, x[1], 0.3, &same), yg_lerp_scalar(self, x[1], 0.3, o))
INPLACE_TWIN_SAMPLE(f_clamp_, yg_clamp_(self, -0.5, 0.5, &same), yg_clamp(self, -0.5, 0.5, o))
INPLACE_TWIN_SAMPLE(f_clamp_min_, yg_clamp_min_(self, 0.1, &same), yg_clamp_min(self, 0.1, o))
INPLACE_TWIN_SAMPLE(f_clamp_max_, yg_clamp_max_(self, 0.1, &same), yg_clamp_max(self, 0.1, o))
/* Integer Scalars, for int64 and int32 (OPINFO_FRACTIONAL_SCALAR above). */
INPLACE_TWIN_SAMPLE(f_add_scalar_int_, yg_add_scalar_(self, 3.0, -2.0, &same),
                    yg_add_scalar(self, 3.0, -2.0, o))
INPLACE_TWIN_SAMPLE(f_addcmul_int_, yg_addcmul_(self, x[1], x[2], -2.0, &same),
                    yg_addcmul(self, x[1], x[2], -2.0, o))
INPLACE_TWIN_SAMPLE(f_clamp_int_, yg_clamp_(self, -1.0, 1.0, &same), yg_clamp(self, -1.0, 1.0, o))
INPLACE_TWIN_SAMPLE(f_clamp_min_int_, yg_clamp_min_(self, -1.0, &same), yg_clamp_min(self, -1.0, o))
INPLACE_TWIN_SAMPLE(f_clamp_max_int_, yg_clamp_max_(self, 1.0, &same), yg_clamp_max(self, 1.0, o))
INPLACE_TWIN_SAMPLE(f_masked_fill_, yg_masked_fill_(self, x[1], 3.0, &same),
                    yg_masked_fill(self, x[1], 3.0, o))
INPLACE_SAMPLE(f_fill_, yg_fill_(self, -1.25, &same))

static yg_status f_div_trunc(yg_tensor *const *x, yg_tensor **o) { return yg_div_mode(x[0], x[1], YG_ROUNDING_MODE_TRUNC, o); }
static yg_status f_div_floor(yg_tensor *const *x, yg_tensor **o) { return yg_div_mode(x[0], x[1], YG_ROUNDING_MODE_FLOOR, o); }

const sample opinfo_inplace_samples[] = {
    {"add_.Scalar", "plus 1.5 * -2", 1, {F64(-1, 1, 2, 2, 3)}, f_add_scalar_, f_add_scalar__twin, OPINFO_FRACTIONAL_SCALAR},
    {"add_.Scalar", "plus 3 * -2", 1, {F64(-1, 1, 2, 2, 3)}, f_add_scalar_int_, f_add_scalar_int__twin},
    {"div_.Scalar", "over 4", 1, {F64(-1, 1, 2, 2, 3)}, f_div_scalar_, f_div_scalar__twin},
    {"addcmul_", "value 0.5, broadcast tensors", 3, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 1, 3), F64(-1, 1, 2, 2, 1)}, f_addcmul_, f_addcmul__twin, OPINFO_FRACTIONAL_SCALAR},
    {"addcmul_", "integer value -2, broadcast tensors", 3, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 1, 3), F64(-1, 1, 2, 2, 1)}, f_addcmul_int_, f_addcmul_int__twin},
    {"addcdiv_", "value -2", 3, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 3), F64(0.5, 2, 2, 2, 3)}, f_addcdiv_, f_addcdiv__twin},
    {"lerp_.Scalar", "weight 0.3, broadcast end", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 1, 3)}, f_lerp_, f_lerp__twin},
    {"clamp_", "[-0.5, 0.5]", 1, {F64(-1, 1, 2, 3, 4)}, f_clamp_, f_clamp__twin, OPINFO_FRACTIONAL_SCALAR},
    {"clamp_", "integer bounds [-1, 1]", 1, {F64(-3, 3, 2, 3, 4)}, f_clamp_int_, f_clamp_int__twin},
    {"clamp_min_", "min 0.1", 1, {F64(-1, 1, 2, 3, 4)}, f_clamp_min_, f_clamp_min__twin, OPINFO_FRACTIONAL_SCALAR},
    {"clamp_min_", "integer min -1", 1, {F64(-3, 3, 2, 3, 4)}, f_clamp_min_int_, f_clamp_min_int__twin},
    {"clamp_max_", "max 0.1", 1, {F64(-1, 1, 2, 3, 4)}, f_clamp_max_, f_clamp_max__twin, OPINFO_FRACTIONAL_SCALAR},
    {"clamp_max_", "integer max 1", 1, {F64(-3, 3, 2, 3, 4)}, f_clamp_max_int_, f_clamp_max_int__twin},
    {"masked_fill_", "mask broadcast over rows", 2, {F64(-1, 1, 2, 3, 4), I64(0, 2, 1, 4)}, f_masked_fill_, f_masked_fill__twin, OPINFO_NO_DTYPE_SWEEP},
    {"fill_", "-1.25", 1, {F64(-1, 1, 2, 2, 3)}, f_fill_},
    {"div.mode", "trunc, divisor away from 0", 2, {F64(-3, 3, 2, 2, 3), F64(1.2, 3.5, 1, 3)}, f_div_trunc},
    {"div.mode", "floor, negative divisor", 2, {F64(-3, 3, 2, 2, 3), F64(-3.5, -1.2, 2, 2, 3)}, f_div_floor},
    {NULL, NULL, 0, {{0}}, NULL, NULL, 0},
};
