/*
 * split.c - the ops that cut a tensor into a list of views along one dim:
 * split (pieces of split_size, the last one shorter), split_with_sizes,
 * chunk (chunks pieces of ceil(size / chunks), so possibly fewer), and
 * unbind (every index of dim, the dim removed).
 *
 * Every piece is a view sharing self's storage (and so its version
 * counter); the generated wrappers mark them as views of self made by a
 * multi-output op, which refuses in-place writes to them (see
 * autograd/views.c).  Sizes follow PyTorch: split of a dim of size 0
 * gives one empty piece, a split_size larger than the dim gives the whole
 * dim, unbind of a dim of size 0 gives an empty list.
 *
 * All checks run before anything is allocated; on failure *out is NULL
 * and *out_len 0.
 */
#include "cpu/cpu.h"
#include "decls/join_split.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* n views of self along dim d, piece i of sizes[i] elements (or, when
 * sizes is NULL, the dim removed at index i). */
static yg_status make_pieces(const char *op,
                             const yg_tensor *self,
                             int64_t d,
                             const int64_t *sizes,
                             int64_t n,
                             yg_tensor ***out,
                             int64_t *out_len) {
    int64_t vsizes[YG_MAX_DIMS], vstrides[YG_MAX_DIMS];
    int64_t start = 0;
    yg_tensor **items;
    yg_status st = YG_OK;

    items = calloc(n > 0 ? (size_t)n : 1, sizeof *items);
    if (items == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of memory for %" PRId64 " views", op, n);
    for (int64_t i = 0; i < n && st == YG_OK; i++) {
        int32_t nd = 0;
        for (int32_t k = 0; k < self->ndim; k++) {
            if (k == d && sizes == NULL)
                continue;
            vsizes[nd] = k == d ? sizes[i] : self->sizes[k];
            vstrides[nd] = self->strides[k];
            nd++;
        }
        int64_t offset;
        /* start may equal the dim's size (an empty last piece), one
         * stride past what self reaches: checked. */
        st = yg__size_mul(op, "piece offset", start, self->strides[d], &offset);
        if (st == YG_OK)
            st = yg__size_add(op, "piece offset", self->offset, offset, &offset);
        if (st == YG_OK)
            st = yg__tensor_view(op, self, vsizes, vstrides, nd, offset, &items[i]);
        start += sizes != NULL ? sizes[i] : 1;
    }
    if (st != YG_OK) {
        yg_release_list(items, n);
        return st;
    }
    *out = items;
    *out_len = n;
    return YG_OK;
}

static yg_status check_not_0dim(const char *op, const yg_tensor *self) {
    if (self->ndim == 0)
        return yg__fail(YG_ERR_SHAPE, "%s: expected self with at least 1 dim, got a 0-dim self", op);
    return YG_OK;
}

/* split_size pieces of dim d of self (PyTorch's rule for the count). */
static yg_status split_by_size(const char *op,
                               const yg_tensor *self,
                               int64_t split_size,
                               int64_t d,
                               yg_tensor ***out,
                               int64_t *out_len) {
    int64_t size = self->sizes[d], n, *sizes;
    yg_status st;

    if (split_size < 0 || (split_size == 0 && size != 0))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: split_size %" PRId64 " must be positive for dim %" PRId64
                        " of size %" PRId64 " (0 only for a dim of size 0)",
                        op,
                        split_size,
                        d,
                        size);
    n = split_size == 0 ? 1 : size / split_size + (size % split_size != 0);
    if (n == 0)
        n = 1; /* a dim of size 0 splits into one empty piece */
    sizes = malloc((size_t)n * sizeof *sizes);
    if (sizes == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of memory for %" PRId64 " pieces", op, n);
    for (int64_t i = 0; i < n; i++)
        sizes[i] = i + 1 < n ? split_size : size - split_size * (n - 1);
    st = make_pieces(op, self, d, sizes, n, out, out_len);
    free(sizes);
    return st;
}

yg_status yg__kernel_split(
    const yg_tensor *self, int64_t split_size, int64_t dim, yg_tensor ***out, int64_t *out_len) {
    int64_t d;

    YG_RETURN_IF_ERROR(check_not_0dim("split", self));
    YG_RETURN_IF_ERROR(yg__wrap_dim("split", "self", dim, self->ndim, &d));
    return split_by_size("split", self, split_size, d, out, out_len);
}

yg_status yg__kernel_chunk(
    const yg_tensor *self, int64_t chunks, int64_t dim, yg_tensor ***out, int64_t *out_len) {
    int64_t d;

    YG_RETURN_IF_ERROR(check_not_0dim("chunk", self));
    if (chunks <= 0)
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "chunk: chunks must be positive, got %" PRId64, chunks);
    YG_RETURN_IF_ERROR(yg__wrap_dim("chunk", "self", dim, self->ndim, &d));
    /* ceil(size / chunks) per piece: 5 in 4 chunks gives 2, 2, 1 */
    int64_t size = self->sizes[d];
    return split_by_size("chunk", self, size / chunks + (size % chunks != 0), d, out, out_len);
}

yg_status yg__kernel_split_with_sizes(const yg_tensor *self,
                                   const int64_t *split_sizes,
                                   int64_t split_sizes_len,
                                   int64_t dim,
                                   yg_tensor ***out,
                                   int64_t *out_len) {
    int64_t d, total = 0;
    char buf[160], sbuf[128];

    YG_RETURN_IF_ERROR(check_not_0dim("split_with_sizes", self));
    YG_RETURN_IF_ERROR(yg__wrap_dim("split_with_sizes", "self", dim, self->ndim, &d));
    if (split_sizes_len > 0 && split_sizes == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "split_with_sizes: split_sizes is NULL with length %" PRId64,
                        split_sizes_len);
    for (int64_t i = 0; i < split_sizes_len; i++) {
        if (split_sizes[i] < 0)
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "split_with_sizes: split_sizes %s has a negative entry",
                            yg__format_sizes(split_sizes, split_sizes_len, buf, sizeof buf));
        if (split_sizes[i] > INT64_MAX - total)
            return yg__fail(YG_ERR_SHAPE,
                            "split_with_sizes: split_sizes %s sum past int64, not to dim %" PRId64
                            " of self %s (size %" PRId64 ")",
                            yg__format_sizes(split_sizes, split_sizes_len, buf, sizeof buf),
                            d,
                            yg__format_sizes(self->sizes, self->ndim, sbuf, sizeof sbuf),
                            self->sizes[d]);
        total += split_sizes[i];
    }
    if (total != self->sizes[d])
        return yg__fail(YG_ERR_SHAPE,
                        "split_with_sizes: split_sizes %s sum to %" PRId64
                        " but dim %" PRId64 " of self %s has size %" PRId64,
                        yg__format_sizes(split_sizes, split_sizes_len, buf, sizeof buf),
                        total,
                        d,
                        yg__format_sizes(self->sizes, self->ndim, sbuf, sizeof sbuf),
                        self->sizes[d]);
    return make_pieces("split_with_sizes", self, d, split_sizes, split_sizes_len, out, out_len);
}

yg_status
yg__kernel_unbind(const yg_tensor *self, int64_t dim, yg_tensor ***out, int64_t *out_len) {
    int64_t d;

    YG_RETURN_IF_ERROR(check_not_0dim("unbind", self));
    YG_RETURN_IF_ERROR(yg__wrap_dim("unbind", "self", dim, self->ndim, &d));
    return make_pieces("unbind", self, d, NULL, self->sizes[d], out, out_len);
}
