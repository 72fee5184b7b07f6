/*
 * composite/pointwise.c - pointwise ops written with other pointwise ops:
 * div with a rounding mode, and atan2_backward (both gradients of atan2,
 * the shared formula of specs/derivatives.yaml), which is differentiable
 * again because its parts are, and clamp.opt, which picks clamp, clamp_min
 * or clamp_max by the bounds it is given.
 *
 * div.mode checks its rounding mode and runs div.trunc or div.floor,
 * pointwise ops whose gradients are zero, as in PyTorch.  On floating
 * inputs the quotient is rounded as computed in their dtype; on int64 and
 * int32 it is exact integer division (core/intmath.h), and a 0 divisor is
 * an error naming the op.
 */
#include "composite/composite.h"
#include "decls/arithmetic.h"
#include "decls/math_backward.h"
#include "decls/rounding.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_rounding.h"
#include "yagrad/ops_unary_math.h"

#include <string.h>

yg_status yg__composite_div_mode(const yg_tensor *self,
                                 const yg_tensor *other,
                                 int64_t rounding_mode,
                                 yg_tensor **out) {
    /* rounding_mode was checked by the generated entry point. */
    return rounding_mode == YG_ROUNDING_MODE_TRUNC ? yg_div_trunc(self, other, out)
                                                   : yg_div_floor(self, other, out);
}

yg_status yg__composite_clamp_opt(const yg_tensor *self,
                                  const double *min,
                                  const double *max,
                                  yg_tensor **out) {
    *out = NULL;
    if (min != NULL && max != NULL)
        return yg_clamp(self, *min, *max, out);
    if (min != NULL)
        return yg_clamp_min(self, *min, out);
    if (max != NULL)
        return yg_clamp_max(self, *max, out);
    return yg__fail(YG_ERR_INVALID_ARGUMENT, "at least one of min and max must be given");
}

/* grad / (self^2 + other^2) is common to both gradients; each is computed
 * only when grad_input_mask asks for it, and left NULL otherwise. */
yg_status yg__composite_atan2_backward(const yg_tensor *grad,
                                      const yg_tensor *self,
                                      const yg_tensor *other,
                                      const bool *grad_input_mask,
                                      yg_tensor **out_grad_self,
                                      yg_tensor **out_grad_other) {
    yg_tensor *self2 = NULL, *other2 = NULL, *denom = NULL, *scaled = NULL, *prod = NULL;
    yg_tensor *grad_self = NULL, *grad_other = NULL;
    yg_status st;

    *out_grad_self = NULL;
    *out_grad_other = NULL;
    st = yg_mul(self, self, &self2);
    if (st == YG_OK)
        st = yg_mul(other, other, &other2);
    if (st == YG_OK)
        st = yg_add(self2, other2, 1.0, &denom);
    if (st == YG_OK)
        st = yg_div(grad, denom, &scaled);
    if (st == YG_OK && grad_input_mask[0])
        st = yg_mul(scaled, other, &grad_self);
    if (st == YG_OK && grad_input_mask[1])
        st = yg_mul(scaled, self, &prod);
    if (st == YG_OK && grad_input_mask[1])
        st = yg_neg(prod, &grad_other);
    if (st == YG_OK) {
        *out_grad_self = grad_self;
        *out_grad_other = grad_other;
        grad_self = NULL;
        grad_other = NULL;
    }
    yg_release(grad_other);
    yg_release(grad_self);
    yg_release(prod);
    yg_release(scaled);
    yg_release(denom);
    yg_release(other2);
    yg_release(self2);
    return st;
}
