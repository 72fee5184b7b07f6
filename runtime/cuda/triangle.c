/*
 * triangle.c - tril and triu on a GPU: the CUDA implementations of the
 * structured ops (cuda/ops.h), which zero the columns of each matrix row
 * outside the triangle in the contiguous copy meta/triangle.c made: one
 * 2-D memset per row index, across all the matrices at once (the rules
 * of cpu/triangle.c).
 */
#include "cuda/cuda.h"
#include "decls/indexing.h"

#include "core/core.h"
#include "meta/triangle.h"

static yg_status
triangle(const char *op, yg_tensor *res, int64_t diagonal, bool lower) {
    int64_t rows = res->sizes[res->ndim - 2], cols = res->sizes[res->ndim - 1];
    yg_status st = YG_OK;

    if (yg_tensor_numel(res) == 0)
        return YG_OK;
    int64_t batch = yg_tensor_numel(res) / (rows * cols);
    diagonal = yg__triangle_clamp(diagonal, rows, cols);
    size_t esize = yg_dtype_size(res->dtype);
    for (int64_t i = 0; i < rows && st == YG_OK; i++) {
        int64_t from, to;
        yg__triangle_zeroed(i, cols, diagonal, lower, &from, &to);
        if (to <= from)
            continue;
        st = yg__cuda_memset2d(op, res->storage->device_index,
                               yg__tensor_ptr(res) + (size_t)(i * cols + from) * esize,
                               (size_t)(rows * cols) * esize, (size_t)(to - from) * esize,
                               (size_t)batch);
    }
    return st;
}

yg_status yg__cuda_tril_out(const yg_tensor *self, int64_t diagonal, yg_tensor *out) {
    (void)self;
    return triangle("tril", out, diagonal, true);
}

yg_status yg__cuda_triu_out(const yg_tensor *self, int64_t diagonal, yg_tensor *out) {
    (void)self;
    return triangle("triu", out, diagonal, false);
}
