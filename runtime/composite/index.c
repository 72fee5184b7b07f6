/*
 * composite/index.c - gradients of the indexing ops written with other
 * ops, so that they are differentiable themselves.
 *
 * scatter_src_backward: the gradient of src in scatter and scatter_add is
 * grad gathered at index; src may be larger than index in any dim (its
 * extra elements are never read), and those elements get zeros, added by
 * padding the gathered gradient at the end of each dim.
 *
 * index_backward: the gradient of self[indices] is grad added into zeros
 * of self's sizes at the indexed positions (index_put with accumulate, so
 * a position indexed twice gets both gradients); written with index_put,
 * whose own derivative makes it differentiable again.
 *
 * index_put_self_backward: the gradient of self in index_put is grad
 * unchanged when values were added (accumulate), else grad with the
 * overwritten positions zeroed: they no longer depend on self.
 */
#include "composite/composite.h"
#include "decls/advanced_indexing.h"
#include "decls/indexing.h"
#include "yagrad/ops_advanced_indexing.h"
#include "yagrad/ops_indexing.h"
#include "yagrad/ops_padding.h"

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
        /* src_sizes come from the caller: a size, or refused. */
        if (src_sizes[d] < 0 || src_sizes[d] > YG__MAX_NUMEL)
            return yg__fail(YG_ERR_SHAPE,
                            "src_sizes %s must be sizes in [0, 2^59]",
                            yg__format_sizes(src_sizes, src_sizes_len, sbuf, sizeof sbuf));
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

yg_status yg__composite_index_backward(const yg_tensor *grad_output,
                                       const int64_t *self_sizes,
                                       int64_t self_sizes_len,
                                       const yg_tensor *const *indices,
                                       int64_t indices_len,
                                       yg_tensor **out) {
    yg_tensor *zeros = NULL;
    yg_status st;

    *out = NULL;
    st = yg_tensor_zeros(self_sizes, self_sizes_len, yg_tensor_dtype(grad_output), &zeros);
    if (st == YG_OK)
        st = yg_index_put(zeros, indices, indices_len, grad_output, true, out);
    yg_release(zeros);
    return st;
}

yg_status yg__composite_index_put_self_backward(const yg_tensor *grad,
                                                const yg_tensor *const *indices,
                                                int64_t indices_len,
                                                bool accumulate,
                                                yg_tensor **out) {
    yg_tensor *zero = NULL;
    yg_status st;

    *out = NULL;
    if (accumulate) {
        *out = yg_retain((yg_tensor *)grad);
        return YG_OK;
    }
    st = yg_tensor_scalar(0.0, yg_tensor_dtype(grad), &zero);
    if (st == YG_OK)
        st = yg_index_put(grad, indices, indices_len, zero, false, out);
    yg_release(zero);
    return st;
}
