/*
 * composite/pointwise.c - pointwise ops written with other pointwise ops:
 * div with a rounding mode.
 *
 * div.mode divides and then rounds with trunc or floor, whose zero
 * gradients make the result's gradient zero, as in PyTorch.  The quotient
 * is rounded as computed in the inputs' floating dtype.
 */
#include "composite/composite.h"
#include "yagrad/ops.h"

#include <string.h>

yg_status yg__composite_div_mode(const yg_tensor *self,
                                 const yg_tensor *other,
                                 const char *rounding_mode,
                                 yg_tensor **out) {
    yg_tensor *q = NULL;
    yg_status st;
    bool trunc = rounding_mode != NULL && strcmp(rounding_mode, "trunc") == 0;
    bool floor = rounding_mode != NULL && strcmp(rounding_mode, "floor") == 0;

    *out = NULL;
    if (!trunc && !floor)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "rounding_mode must be \"trunc\" or \"floor\", got %s%s%s",
                        rounding_mode ? "\"" : "",
                        rounding_mode ? rounding_mode : "NULL",
                        rounding_mode ? "\"" : "");
    st = yg_div(self, other, &q);
    if (st == YG_OK)
        st = trunc ? yg_trunc(q, out) : yg_floor(q, out);
    yg_release(q);
    return st;
}
