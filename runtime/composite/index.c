/*
 * composite/index.c - gradients of the indexing ops written with other
 * ops, so that they are differentiable themselves.
 *
 * scatter_src_backward: the gradient of src in scatter and scatter_add is
 * grad gathered at index; src may be larger than index in any dim (its
 * extra elements are never read), and those elements get zeros, added by
 * padding the gathered gradient at the end of each dim.
 */
#include "composite/composite.h"
#include "yagrad/ops.h"

#include <inttypes.h>
#include <stdio.h>

yg_status yg__composite_scatter_src_backward(const yg_tensor *grad_output,
                                             int64_t dim,
                                             const yg_tensor *index,
                                             const int64_t *src_sizes,
                                             int64_t src_sizes_len,
                                             yg_tensor **out) {
    int64_t pad[2 * YG_MAX_DIMS];
    int64_t ndim = yg_tensor_ndim(index);
    const int64_t *isizes = yg_tensor_sizes(index);
    yg_tensor *gathered = NULL;
    bool same = true;
    char sbuf[160], ibuf[128];
    yg_status st;

    *out = NULL;
    if (src_sizes_len != ndim || (src_sizes_len > 0 && src_sizes == NULL))
        return yg__fail(YG_ERR_SHAPE,
                        "src_sizes %s must have as many dims as index %s",
                        yg__format_sizes(src_sizes, src_sizes_len, sbuf, sizeof sbuf),
                        yg_tensor_format_sizes(index, ibuf, sizeof ibuf));
    for (int64_t i = 0; i < ndim; i++) {
        /* pad pairs run from the last dim: (before, after) of dim ndim-1-i */
        int64_t d = ndim - 1 - i;
        pad[2 * i] = 0;
        pad[2 * i + 1] = src_sizes[d] - isizes[d];
        same = same && pad[2 * i + 1] == 0;
    }
    if (same)
        return yg_gather(grad_output, dim, index, out);
    st = yg_gather(grad_output, dim, index, &gathered);
    if (st == YG_OK)
        st = yg_constant_pad_nd(gathered, pad, 2 * ndim, 0, out);
    yg_release(gathered);
    return st;
}
