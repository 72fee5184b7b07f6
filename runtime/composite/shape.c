/*
 * composite/shape.c - reshape: a view when the input's strides allow one,
 * otherwise a contiguous copy (clone) viewed with the new shape.
 *
 * A contiguous input always takes the view path, so reshape never copies
 * what view could share; a non-contiguous one tries view first, because
 * many reshapes of strided tensors (splitting a dim, merging dims that are
 * contiguous with each other) still need no copy.  Autograd sees view or
 * clone + view and differentiates through them.  Errors of the inner ops
 * pass through with their own names (e.g. "view: size [4, 2] is invalid
 * for input [2, 3] with 6 elements").
 */
#include "composite/composite.h"
#include "yagrad/ops.h"

yg_status yg__composite_reshape(const yg_tensor *self,
                                const int64_t *shape,
                                int64_t shape_len,
                                yg_tensor **out) {
    yg_tensor *copy = NULL;
    yg_status st;

    *out = NULL;
    st = yg_view(self, shape, shape_len, out);
    if (st != YG_ERR_SHAPE || yg_tensor_is_contiguous(self))
        return st;
    /* The view needed a gap merged (or the shape is wrong, which the view
     * of the copy reports again); copy and view the copy. */
    st = yg_clone(self, &copy);
    if (st != YG_OK)
        goto out;
    st = yg_view(copy, shape, shape_len, out);
out:
    yg_release(copy);
    return st;
}
