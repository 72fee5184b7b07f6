/*
 * triangle.c - tril and triu: a copy of self with the elements above
 * (tril) or below (triu) a diagonal of each matrix in the last two dims
 * set to zero.
 *
 * The diagonal is an offset: element (i, j) is kept by tril when
 * j - i <= diagonal and by triu when j - i >= diagonal, so diagonal 0 is
 * the main diagonal, 1 the one above it, -1 the one below.  The copy is
 * contiguous, so each matrix row is one run of bytes and the zeroed part
 * of a row is one memset (all-zero bytes are 0 in every dtype).  Both
 * are structured: meta/triangle.c checks self and makes the copy; on a GPU
 * (cuda/triangle.c) each row's zeroed columns of every matrix are one 2-D
 * memset.
 */
#include "cpu/cpu.h"
#include "decls/indexing.h"
#include "meta/triangle.h"

#include <string.h>

static yg_status triangle(yg_tensor *res, int64_t diagonal, bool lower) {
    int64_t rows = res->sizes[res->ndim - 2], cols = res->sizes[res->ndim - 1];
    if (yg_tensor_numel(res) == 0)
        return YG_OK; /* an empty self may have huge other dims: no loop over them */
    /* batch * rows * cols is res's numel: it fits. */
    int64_t batch = yg_tensor_numel(res) / (rows * cols);
    diagonal = yg__triangle_clamp(diagonal, rows, cols);
    size_t esize = yg_dtype_size(res->dtype);
    char *base = yg__tensor_ptr(res);
    for (int64_t b = 0; b < batch; b++) {
        for (int64_t i = 0; i < rows; i++) {
            char *row = base + (size_t)((b * rows + i) * cols) * esize;
            int64_t from, to;
            yg__triangle_zeroed(i, cols, diagonal, lower, &from, &to);
            if (to > from)
                memset(row + (size_t)from * esize, 0, (size_t)(to - from) * esize);
        }
    }
    return YG_OK;
}

yg_status yg__cpu_tril_out(const yg_tensor *self, int64_t diagonal, yg_tensor *out) {
    (void)self;
    return triangle(out, diagonal, true);
}

yg_status yg__cpu_triu_out(const yg_tensor *self, int64_t diagonal, yg_tensor *out) {
    (void)self;
    return triangle(out, diagonal, false);
}
