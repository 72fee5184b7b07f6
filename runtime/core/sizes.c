/*
 * sizes.c - the checked size arithmetic of sizes.h: element counts,
 * contiguous strides and the extent check every tensor header passes
 * (yg__tensor_new, yg__tensor_view).
 *
 * The extent check is what lets kernels keep plain `i * stride` in their
 * loops: once a header exists, every element it names lies inside its
 * storage, so no index times stride inside its sizes can overflow.  It
 * costs one pass over at most YG_MAX_DIMS dims per view, a few
 * nanoseconds next to the header's allocation.
 */
#include "core/core.h"

#include <inttypes.h>

yg_status yg__size_mul(const char *op, const char *what, int64_t a, int64_t b, int64_t *out) {
    if (!yg__mul_ok(a, b, out))
        return yg__fail(
            YG_ERR_SHAPE, "%s: %s overflows int64: %" PRId64 " * %" PRId64, op, what, a, b);
    return YG_OK;
}

yg_status yg__size_add(const char *op, const char *what, int64_t a, int64_t b, int64_t *out) {
    if (!yg__add_ok(a, b, out))
        return yg__fail(
            YG_ERR_SHAPE, "%s: %s overflows int64: %" PRId64 " + %" PRId64, op, what, a, b);
    return YG_OK;
}

int64_t yg__sizes_product(const int64_t *sizes, int64_t ndim) {
    int64_t n = 1;
    bool zero = false;

    /* A 0 anywhere makes the product 0 whatever the others are, but the
     * others must still be valid sizes; the product of the non-zero ones
     * is bounded only when there is no 0 (an empty tensor may have huge
     * other dims, issue 18). */
    for (int64_t i = 0; i < ndim; i++) {
        if (sizes[i] < 0)
            return -1;
        if (sizes[i] == 0)
            zero = true;
    }
    if (zero)
        return 0;
    for (int64_t i = 0; i < ndim; i++)
        if (!yg__mul_ok(n, sizes[i], &n) || n > YG__MAX_NUMEL)
            return -1;
    return n;
}

yg_status
yg__sizes_numel(const char *op, const char *arg, const int64_t *sizes, int64_t ndim, int64_t *out) {
    char buf[160];
    int64_t n = yg__sizes_product(sizes, ndim);

    if (n >= 0) {
        *out = n;
        return YG_OK;
    }
    for (int64_t i = 0; i < ndim; i++)
        if (sizes[i] < 0)
            return yg__fail(YG_ERR_SHAPE,
                            "%s: negative size %" PRId64 " in %s %s",
                            op,
                            sizes[i],
                            arg,
                            yg__format_sizes(sizes, ndim, buf, sizeof buf));
    return yg__fail(YG_ERR_SHAPE,
                    "%s: %s %s has more than 2^59 elements",
                    op,
                    arg,
                    yg__format_sizes(sizes, ndim, buf, sizeof buf));
}

yg_status yg__sizes_strides(const char *op, const int64_t *sizes, int64_t ndim, int64_t *strides) {
    char buf[160];
    int64_t stride = 1;

    for (int64_t i = ndim - 1; i >= 0; i--) {
        strides[i] = stride;
        /* The product past dim 0 is never used: not computing it is what
         * lets [36854775808, 0, 922337200, 3] have strides. */
        if (i > 0 && !yg__mul_ok(stride, sizes[i] > 1 ? sizes[i] : 1, &stride))
            return yg__fail(YG_ERR_SHAPE,
                            "%s: the contiguous strides of sizes %s overflow int64",
                            op,
                            yg__format_sizes(sizes, ndim, buf, sizeof buf));
    }
    return YG_OK;
}

static yg_status geometry_fail(const char *op,
                               const char *why,
                               const int64_t *sizes,
                               const int64_t *strides,
                               int64_t ndim,
                               int64_t offset,
                               int64_t storage_numel) {
    char sbuf[160], tbuf[160];
    return yg__fail(YG_ERR_SHAPE,
                    "%s: sizes %s with strides %s and offset %" PRId64 " %s a storage of %" PRId64
                    " elements",
                    op,
                    yg__format_sizes(sizes, ndim, sbuf, sizeof sbuf),
                    yg__format_sizes(strides, ndim, tbuf, sizeof tbuf),
                    offset,
                    why,
                    storage_numel);
}

yg_status yg__geometry_check(const char *op,
                             const int64_t *sizes,
                             const int64_t *strides,
                             int64_t ndim,
                             int64_t offset,
                             int64_t storage_numel) {
    int64_t numel, lo = offset, hi = offset;

    YG_RETURN_IF_ERROR(yg__sizes_numel(op, "sizes", sizes, ndim, &numel));
    if (numel == 0)
        return YG_OK;
    for (int64_t i = 0; i < ndim; i++) {
        int64_t reach;
        if (!yg__mul_ok(sizes[i] - 1, strides[i], &reach) ||
            !yg__add_ok(reach < 0 ? lo : hi, reach, reach < 0 ? &lo : &hi))
            return geometry_fail(
                op, "overflow int64 inside", sizes, strides, ndim, offset, storage_numel);
    }
    if (lo < 0 || hi >= storage_numel)
        return geometry_fail(op, "reach outside", sizes, strides, ndim, offset, storage_numel);
    return YG_OK;
}

void yg__sizes_split(const int64_t *sizes, int64_t ndim, int64_t dim, int64_t *outer,
                     int64_t *n, int64_t *inner) {
    *n = ndim > 0 ? sizes[dim] : 1;
    if (yg__sizes_product(sizes, ndim) == 0) {
        *outer = 0;
        *inner = 0;
        return;
    }
    *outer = yg__sizes_product(sizes, dim < ndim ? dim : ndim);
    *inner = dim + 1 < ndim ? yg__sizes_product(sizes + dim + 1, ndim - dim - 1) : 1;
}
