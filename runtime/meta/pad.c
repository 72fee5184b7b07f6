/*
 * meta/pad.c - what both devices' reflection_pad and replication_pad
 * (and their gradients) share (meta/pad.h): the checks of pad against the
 * sizes, the padded sizes and the source maps that say which input
 * element each output element reads.
 */
#include "meta/pad.h"

#include "core/core.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Checks pad against self's sizes for mode and fills the output sizes. */
yg_status yg__pad_geometry(const char *op,
                           bool reflect,
                           const int64_t *sizes,
                           int64_t ndim,
                           const int64_t *pad,
                           int64_t pad_len,
                           int64_t *osizes) {
    const char *mode = reflect ? "reflect" : "replicate";
    char pbuf[160], sbuf[128];
    int64_t numel;

    /* sizes may come from the caller (the backward's self_sizes). */
    YG_RETURN_IF_ERROR(yg__sizes_numel(op, "self_sizes", sizes, ndim, &numel));
    if (pad_len > 0 && pad == NULL)
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "%s: pad is NULL with length %" PRId64, op, pad_len);
    if (pad_len != 2 && pad_len != 4 && pad_len != 6)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %s pad %s must have 2, 4 or 6 entries (1-d, 2-d or 3-d padding)",
                        op,
                        mode,
                        yg__format_sizes(pad, pad_len, pbuf, sizeof pbuf));
    int64_t k = pad_len / 2;
    if (ndim != k + 1 && ndim != k + 2)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: %" PRId64 "-d %s padding needs self of %" PRId64 " or %" PRId64
                        " dims, got %s",
                        op,
                        k,
                        mode,
                        k + 1,
                        k + 2,
                        yg__format_sizes(sizes, ndim, sbuf, sizeof sbuf));
    for (int64_t d = 0; d < ndim; d++)
        osizes[d] = sizes[d];
    for (int64_t i = 0; i < k; i++) {
        int64_t d = ndim - 1 - i, lo = pad[2 * i], hi = pad[2 * i + 1], n = sizes[d];
        if (lo < 0 || hi < 0)
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s: %s pad %s has a negative amount",
                            op,
                            mode,
                            yg__format_sizes(pad, pad_len, pbuf, sizeof pbuf));
        if (reflect && (lo >= n || hi >= n) && (lo > 0 || hi > 0))
            return yg__fail(YG_ERR_SHAPE,
                            "%s: reflect pad (%" PRId64 ", %" PRId64 ") of dim %" PRId64
                            " must be less than its size %" PRId64 " (pad %s, self %s)",
                            op,
                            lo,
                            hi,
                            d,
                            n,
                            yg__format_sizes(pad, pad_len, pbuf, sizeof pbuf),
                            yg__format_sizes(sizes, ndim, sbuf, sizeof sbuf));
        if (!reflect && n == 0 && (lo > 0 || hi > 0))
            return yg__fail(YG_ERR_SHAPE,
                            "%s: replicate pad (%" PRId64 ", %" PRId64 ") of dim %" PRId64
                            " needs a non-empty dim, got size 0 (pad %s, self %s)",
                            op,
                            lo,
                            hi,
                            d,
                            yg__format_sizes(pad, pad_len, pbuf, sizeof pbuf),
                            yg__format_sizes(sizes, ndim, sbuf, sizeof sbuf));
        /* Replicate pads may exceed the dim; their sum must still fit
         * (the whole result's size is checked when it is allocated). */
        if (lo > INT64_MAX / 4 - n || hi > INT64_MAX / 4 - n - lo)
            return yg__fail(YG_ERR_SHAPE,
                            "%s: pad (%" PRId64 ", %" PRId64 ") of dim %" PRId64
                            " is too large (pad %s, self %s)",
                            op,
                            lo,
                            hi,
                            d,
                            yg__format_sizes(pad, pad_len, pbuf, sizeof pbuf),
                            yg__format_sizes(sizes, ndim, sbuf, sizeof sbuf));
        osizes[d] = n + lo + hi;
    }
    return YG_OK;
}

/* maps[d][o]: the input index read by output index o along dim d (the
 * identity for dims not padded), in one yg__alloc block *block. */
yg_status yg__pad_source_maps(const char *op,
                              bool reflect,
                              const int64_t *sizes,
                              const int64_t *osizes,
                              int64_t ndim,
                              const int64_t *pad,
                              int64_t pad_len,
                              int64_t **maps,
                              int64_t **block,
                              size_t *block_bytes) {
    int64_t total = 0, k = pad_len / 2;

    for (int64_t d = 0; d < ndim; d++)
        total += osizes[d];
    *block_bytes = sizeof(int64_t) * (size_t)(total > 0 ? total : 1);
    *block = yg__alloc(*block_bytes);
    if (*block == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu bytes", op, *block_bytes);
    int64_t *at = *block;
    for (int64_t d = 0; d < ndim; d++) {
        int64_t i = ndim - 1 - d, lo = i < k ? pad[2 * i] : 0, n = sizes[d];
        maps[d] = at;
        for (int64_t o = 0; o < osizes[d]; o++) {
            int64_t src = o - lo;
            if (reflect) {
                src = src < 0 ? -src : src;
                src = src >= n ? 2 * (n - 1) - src : src;
            } else {
                src = src < 0 ? 0 : src >= n ? n - 1 : src;
            }
            at[o] = src;
        }
        at += osizes[d];
    }
    return YG_OK;
}

yg_status yg__pad_backward_check(const char *op,
                                 bool reflect,
                                 const yg_tensor *grad_output,
                                 const int64_t *self_sizes,
                                 int64_t self_sizes_len,
                                 const int64_t *pad,
                                 int64_t pad_len,
                                 int64_t *osizes) {
    char gbuf[128], sbuf[128], pbuf[160];

    if (self_sizes_len < 1 || self_sizes_len > YG_MAX_DIMS || self_sizes == NULL)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: self_sizes must have 1 to %d entries",
                        op,
                        (int)YG_MAX_DIMS);
    if (!yg__dtype_is_floating(grad_output->dtype))
        return yg__fail(YG_ERR_DTYPE,
                        "%s: unsupported dtype %s for grad_output (supported: float32, float64)",
                        op,
                        yg_dtype_name(grad_output->dtype));
    YG_RETURN_IF_ERROR(
        yg__pad_geometry(op, reflect, self_sizes, self_sizes_len, pad, pad_len, osizes));
    if (grad_output->ndim != self_sizes_len ||
        memcmp(grad_output->sizes, osizes, sizeof(int64_t) * (size_t)self_sizes_len) != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: grad_output %s does not match self_sizes %s padded by %s",
                        op,
                        yg__format_sizes(grad_output->sizes, grad_output->ndim, gbuf, sizeof gbuf),
                        yg__format_sizes(self_sizes, self_sizes_len, sbuf, sizeof sbuf),
                        yg__format_sizes(pad, pad_len, pbuf, sizeof pbuf));
    return YG_OK;
}
