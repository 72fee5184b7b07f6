/*
 * triangle.c - tril and triu: a copy of self with the elements above
 * (tril) or below (triu) a diagonal of each matrix in the last two dims
 * set to zero.
 *
 * The diagonal is an offset: element (i, j) is kept by tril when
 * j - i <= diagonal and by triu when j - i >= diagonal, so diagonal 0 is
 * the main diagonal, 1 the one above it, -1 the one below.  The copy is
 * contiguous, so each matrix row is one run of bytes and the zeroed part
 * of a row is one memset (all-zero bytes are 0 in every dtype).  On a
 * GPU each row's zeroed columns of every matrix are one zero_ of a view.
 */
#include "cpu/cpu.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static yg_status
triangle(const char *op, const yg_tensor *self, int64_t diagonal, bool lower, yg_tensor **out) {
    yg_tensor *res = NULL;
    char buf[128];

    *out = NULL;
    if (self->ndim < 2)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected self with at least 2 dims, got %s",
                        op,
                        yg__format_sizes(self->sizes, self->ndim, buf, sizeof buf));
    YG_RETURN_IF_ERROR(yg__tensor_contiguous_as(self, self->dtype, false, &res));
    int64_t rows = self->sizes[self->ndim - 2], cols = self->sizes[self->ndim - 1];
    if (yg_tensor_numel(res) == 0) {
        /* An empty self may have huge other dims: no loop over them. */
        *out = res;
        return YG_OK;
    }
    /* batch * rows * cols is res's numel: it fits.  A diagonal beyond
     * the matrix acts as its edge, and clamping keeps i + diagonal from
     * overflowing. */
    int64_t batch = yg_tensor_numel(res) / (rows * cols);
    if (diagonal > cols + 1)
        diagonal = cols + 1;
    if (diagonal < -rows - 1)
        diagonal = -rows - 1;
    if (res->storage->device == YG_CUDA) {
        /* On a GPU: zero_ on each row's zeroed columns across all the
         * matrices at once (a view of the row, sliced), rows launches. */
        yg_status st = YG_OK;
        for (int64_t i = 0; i < rows && st == YG_OK; i++) {
            int64_t edge = i + diagonal;
            int64_t from = lower ? (edge + 1 < 0 ? 0 : edge + 1) : 0;
            int64_t to = lower ? cols : (edge < cols ? edge : cols);
            yg_tensor *row = NULL, *part = NULL, *same = NULL;
            if (to <= from)
                continue;
            st = yg__kernel_select(res, res->ndim - 2, i, &row);
            if (st == YG_OK)
                st = yg__kernel_slice(row, row->ndim - 1, from, to, 1, &part);
            if (st == YG_OK)
                st = yg__kernel_zero_(part, &same);
            yg_release(same);
            yg_release(part);
            yg_release(row);
        }
        if (st != YG_OK) {
            yg_release(res);
            return st;
        }
        *out = res;
        return YG_OK;
    }
    size_t esize = yg_dtype_size(self->dtype);
    char *base = yg__tensor_ptr(res);
    for (int64_t b = 0; b < batch; b++) {
        for (int64_t i = 0; i < rows; i++) {
            char *row = base + (size_t)((b * rows + i) * cols) * esize;
            /* Kept columns: j <= i + diagonal (tril) or j >= i + diagonal (triu). */
            int64_t edge = i + diagonal;
            int64_t from, to;
            if (lower) {
                from = edge + 1 < 0 ? 0 : edge + 1;
                to = cols;
            } else {
                from = 0;
                to = edge < cols ? edge : cols;
            }
            if (to > from)
                memset(row + (size_t)from * esize, 0, (size_t)(to - from) * esize);
        }
    }
    *out = res;
    return YG_OK;
}

yg_status yg__kernel_tril(const yg_tensor *self, int64_t diagonal, yg_tensor **out) {
    return triangle("tril", self, diagonal, true, out);
}

yg_status yg__kernel_triu(const yg_tensor *self, int64_t diagonal, yg_tensor **out) {
    return triangle("triu", self, diagonal, false, out);
}
