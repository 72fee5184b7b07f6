/*
 * pad.c - constant_pad_nd: self surrounded by (or, for negative amounts,
 * cropped to) a border of a constant value.
 *
 * pad lists (before, after) pairs starting from the last dim, as in
 * PyTorch: {1, 2} pads the last dim with one element before and two after,
 * {1, 2, 0, 3} also pads the dim before it with three elements after.
 * The result is filled with value, then the part of self that survives
 * any cropping is copied into its place through two views (one of self,
 * one of the result) with the strided copy_ kernel, so no element is
 * addressed by hand here.
 */
#include "cpu/cpu.h"

#include <inttypes.h>
#include <stdio.h>

yg_status yg__cpu_constant_pad_nd(const yg_tensor *self,
                                  const int64_t *pad,
                                  int64_t pad_len,
                                  double value,
                                  yg_tensor **out) {
    int64_t sizes[YG_MAX_DIMS];
    yg_tensor *res = NULL, *src = NULL, *dst = NULL, *next = NULL, *copied = NULL;
    char pbuf[160], sbuf[128];
    yg_status st;

    *out = NULL;
    if (pad_len > 0 && pad == NULL)
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "constant_pad_nd: pad is NULL with length %" PRId64, pad_len);
    if (pad_len % 2 != 0 || pad_len / 2 > self->ndim)
        return yg__fail(YG_ERR_SHAPE,
                        "constant_pad_nd: pad %s must have an even length of at most 2 * %d (the "
                        "dims of self %s)",
                        yg__format_sizes(pad, pad_len, pbuf, sizeof pbuf),
                        (int)self->ndim,
                        yg__format_sizes(self->sizes, self->ndim, sbuf, sizeof sbuf));
    for (int32_t d = 0; d < self->ndim; d++)
        sizes[d] = self->sizes[d];
    for (int64_t i = 0; i < pad_len / 2; i++) {
        int64_t d = self->ndim - 1 - i;
        sizes[d] += pad[2 * i] + pad[2 * i + 1];
        if (sizes[d] < 0)
            return yg__fail(YG_ERR_SHAPE,
                            "constant_pad_nd: pad %s crops dim %" PRId64 " of self %s below size 0",
                            yg__format_sizes(pad, pad_len, pbuf, sizeof pbuf),
                            d,
                            yg__format_sizes(self->sizes, self->ndim, sbuf, sizeof sbuf));
    }
    YG_RETURN_IF_ERROR(yg_tensor_full(sizes, self->ndim, value, self->dtype, &res));
    src = yg_retain((yg_tensor *)self);
    dst = yg_retain(res);
    for (int64_t i = 0; i < pad_len / 2; i++) {
        int64_t d = self->ndim - 1 - i, lo = pad[2 * i], hi = pad[2 * i + 1];
        int64_t s_start = lo < 0 ? -lo : 0, s_end = self->sizes[d] - (hi < 0 ? -hi : 0);
        int64_t d_start = lo > 0 ? lo : 0;
        if (s_end <= s_start)
            goto done; /* everything of self is cropped away along d */
        st = yg__cpu_slice(src, d, s_start, s_end, 1, &next);
        if (st != YG_OK)
            goto out;
        yg_release(src);
        src = next;
        st = yg__cpu_slice(dst, d, d_start, d_start + (s_end - s_start), 1, &next);
        if (st != YG_OK)
            goto out;
        yg_release(dst);
        dst = next;
        next = NULL;
    }
    st = yg__cpu_copy_(dst, src, &copied);
    if (st != YG_OK)
        goto out;
done:
    *out = res;
    res = NULL;
    st = YG_OK;
out:
    if (st != YG_OK)
        st = yg__fail_prefix(st, "constant_pad_nd");
    yg_release(copied);
    yg_release(src);
    yg_release(dst);
    yg_release(res);
    return st;
}
