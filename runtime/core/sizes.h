/*
 * sizes.h - checked arithmetic on sizes, strides, storage offsets, byte
 * counts and index ranges.  Not public API; core.h includes it, so every
 * runtime module and the generated code see it.
 *
 * The rule (docs/architecture.md, "Size arithmetic"): a product or sum
 * that involves a tensor size, a stride, an offset or a count computed
 * from user input goes through these helpers, never a raw `*` or `+`.
 * Signed overflow is undefined behaviour in C, and a wrapped size turns
 * into an out-of-bounds access one step later (issue 18: `stride *=
 * sizes[i]` in tensor_new overflowed for sizes [36854775808, 0, 922337200,
 * 3]).  The raw operators stay only where an invariant bounds the values:
 * inside a kernel loop over a tensor that exists, every index times its
 * stride lies inside the tensor's storage, because yg__tensor_view and
 * yg__tensor_new refuse any geometry whose extent does not fit (below).
 *
 * Two tiers:
 *   - yg__mul_ok / yg__add_ok: the compiler builtins, for code that has
 *     its own message to give (false on overflow, *out then unspecified);
 *   - yg__size_mul / yg__size_add / yg__sizes_numel / yg__sizes_strides /
 *     yg__geometry_check: set "<op>: ..." naming the operands and return
 *     YG_ERR_SHAPE, for direct use with YG_RETURN_IF_ERROR.
 */
#ifndef YAGRAD_CORE_SIZES_H
#define YAGRAD_CORE_SIZES_H

#include "yagrad/status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most elements any tensor (a view included) may have: 2^59 - 1.  Any
 * element count times any dtype size (at most 8) and then some (16 bytes
 * a complex element would take) still fits int64, so byte counts derived
 * from a numel need no further check. */
#define YG__MAX_NUMEL (INT64_MAX / 16)

/* a * b into *out; false when the product overflows int64.  Cannot fail
 * otherwise (no message is set). */
static inline bool yg__mul_ok(int64_t a, int64_t b, int64_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}

/* a + b into *out; false when the sum overflows int64. */
static inline bool yg__add_ok(int64_t a, int64_t b, int64_t *out) {
    return !__builtin_add_overflow(a, b, out);
}

/* a * b into *out, or YG_ERR_SHAPE "<op>: <what> overflows int64: <a> *
 * <b>" (what says which quantity, e.g. "output size", "stride"). */
yg_status yg__size_mul(const char *op, const char *what, int64_t a, int64_t b, int64_t *out);

/* a + b into *out, or YG_ERR_SHAPE "<op>: <what> overflows int64: <a> +
 * <b>". */
yg_status yg__size_add(const char *op, const char *what, int64_t a, int64_t b, int64_t *out);

/* The product of sizes[0..ndim) (1 for ndim 0), or -1 when a size is
 * negative or the product exceeds YG__MAX_NUMEL.  Cannot fail. */
int64_t yg__sizes_product(const int64_t *sizes, int64_t ndim);

/* The outer, dim and inner extents of a contiguous tensor of sizes
 * (ndim > 0, dim in range; ndim 0 counts as one element) split at dim:
 * outer * n * inner is its element count.  An empty tensor gives 0 for
 * outer and inner (its other dims may be huge: their partial products
 * could overflow).  Cannot fail. */
void yg__sizes_split(const int64_t *sizes, int64_t ndim, int64_t dim, int64_t *outer,
                     int64_t *n, int64_t *inner);

/* The element count of sizes into *out.  Fails with YG_ERR_SHAPE
 * "<op>: negative size <n> in <arg> [..]" or "<op>: <arg> [..] has more than
 * 2^59 elements" (arg names the argument, e.g. "size", "self"). */
yg_status
yg__sizes_numel(const char *op, const char *arg, const int64_t *sizes, int64_t ndim, int64_t *out);

/* Row-major contiguous strides of sizes into strides (ndim entries): each
 * the product of the later sizes, a size 0 or 1 counting as 1 (as
 * PyTorch's empty_tensor_restride).  Sizes must be >= 0.  Fails with
 * YG_ERR_SHAPE "<op>: the contiguous strides of sizes [..] overflow
 * int64" when one does not fit; only the strides themselves are computed,
 * not the product past the outermost dim, so an empty tensor with huge
 * sizes exists as long as its strides do. */
yg_status yg__sizes_strides(const char *op, const int64_t *sizes, int64_t ndim, int64_t *strides);

/* Checks that a geometry addresses only elements [0, storage_numel) of a
 * storage: sizes >= 0, the element count at most YG__MAX_NUMEL, and, when
 * the count is not 0, offset + sum of (size - 1) * stride over the dims
 * (the lowest and the highest element it reaches, strides may be
 * negative) inside the storage, every step computed without overflow.
 * An empty geometry reaches no element: its offset and strides are not
 * checked against the storage (they only must not overflow when they are
 * formed).  Fails with YG_ERR_SHAPE "<op>: sizes [..] with strides [..]
 * and offset N reach outside a storage of M elements" or an overflow
 * message naming the same values. */
yg_status yg__geometry_check(const char *op,
                             const int64_t *sizes,
                             const int64_t *strides,
                             int64_t ndim,
                             int64_t offset,
                             int64_t storage_numel);

#endif /* YAGRAD_CORE_SIZES_H */
