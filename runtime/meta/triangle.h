/*
 * meta/triangle.h - which elements tril and triu zero, for both devices'
 * implementations.  Not public API.
 *
 * The diagonal is an offset: element (i, j) is kept by tril when
 * j - i <= diagonal and by triu when j - i >= diagonal.
 */
#ifndef YAGRAD_META_TRIANGLE_H
#define YAGRAD_META_TRIANGLE_H

#include <stdbool.h>
#include <stdint.h>

/* diagonal clamped to a rows x cols matrix: beyond it, the diagonal acts
 * as its edge, and i + diagonal cannot overflow. */
static inline int64_t yg__triangle_clamp(int64_t diagonal, int64_t rows, int64_t cols)
{
    if (diagonal > cols + 1)
        return cols + 1;
    if (diagonal < -rows - 1)
        return -rows - 1;
    return diagonal;
}

/* The columns [*from, *to) of row i that tril (lower) or triu zeroes in a
 * matrix of cols columns, for a clamped diagonal; empty when to <= from. */
static inline void
yg__triangle_zeroed(int64_t i, int64_t cols, int64_t diagonal, bool lower, int64_t *from, int64_t *to)
{
    int64_t edge = i + diagonal;
    *from = lower ? (edge + 1 < 0 ? 0 : edge + 1) : 0;
    *to = lower ? cols : (edge < cols ? edge : cols);
}

#endif /* YAGRAD_META_TRIANGLE_H */
