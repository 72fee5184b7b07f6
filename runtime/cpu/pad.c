/*
 * pad.c - constant_pad_nd: self surrounded by (or, for negative amounts,
 * cropped to) a border of a constant value; reflection_pad and
 * replication_pad (and their gradients), described at their section
 * below.
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
#include "decls/inplace_fill.h"
#include "decls/padding.h"
#include "decls/slicing.h"
#include "meta/pad.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

yg_status yg__kernel_constant_pad_nd(const yg_tensor *self,
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
    for (int64_t i = 0; i < pad_len; i++)
        /* Bounded like sizes (sizes.h), so the sums below and -lo fit. */
        if (pad[i] < -YG__MAX_NUMEL || pad[i] > YG__MAX_NUMEL)
            return yg__fail(YG_ERR_SHAPE,
                            "constant_pad_nd: pad %s has an entry beyond 2^59",
                            yg__format_sizes(pad, pad_len, pbuf, sizeof pbuf));
    for (int64_t i = 0; i < pad_len / 2; i++) {
        int64_t d = self->ndim - 1 - i;
        /* An empty self's size may be near INT64_MAX (sizes.h). */
        YG_RETURN_IF_ERROR(yg__size_add(
            "constant_pad_nd", "padded size", sizes[d], pad[2 * i] + pad[2 * i + 1], &sizes[d]));
        if (sizes[d] < 0)
            return yg__fail(YG_ERR_SHAPE,
                            "constant_pad_nd: pad %s crops dim %" PRId64 " of self %s below size 0",
                            yg__format_sizes(pad, pad_len, pbuf, sizeof pbuf),
                            d,
                            yg__format_sizes(self->sizes, self->ndim, sbuf, sizeof sbuf));
    }
    YG_RETURN_IF_ERROR(yg__full_on("constant_pad_nd", sizes, self->ndim, self->dtype,
                                   self->storage->device, self->storage->device_index, value,
                                   &res));
    src = yg_retain((yg_tensor *)self);
    dst = yg_retain(res);
    for (int64_t i = 0; i < pad_len / 2; i++) {
        int64_t d = self->ndim - 1 - i, lo = pad[2 * i], hi = pad[2 * i + 1];
        int64_t s_start = lo < 0 ? -lo : 0, s_end = self->sizes[d] - (hi < 0 ? -hi : 0);
        int64_t d_start = lo > 0 ? lo : 0;
        if (s_end <= s_start)
            goto done; /* everything of self is cropped away along d */
        st = yg__kernel_slice(src, d, s_start, s_end, 1, &next);
        if (st != YG_OK)
            goto out;
        yg_release(src);
        src = next;
        st = yg__kernel_slice(dst, d, d_start, d_start + (s_end - s_start), 1, &next);
        if (st != YG_OK)
            goto out;
        yg_release(dst);
        dst = next;
        next = NULL;
    }
    st = yg__kernel_copy_(dst, src, &copied);
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

/* ---- reflect and replicate padding (nn-ops) ----
 *
 * reflection_pad and replication_pad pad the last 1, 2 or 3 dims of self
 * (pad has 2, 4 or 6 entries, (before, after) pairs from the last dim)
 * with a batch dim or not before one channel dim, as PyTorch's F.pad
 * does.  Output position o of a padded dim of size n reads input
 * i = o - before, mapped into the dim: reflected about its ends without
 * repeating them (-i, 2 (n - 1) - i), which needs every amount below n,
 * or clamped to [0, n - 1] (replicate), which needs n > 0.  The forward
 * copies elements of any dtype through those maps; the backward adds
 * each gradient element into the source it was read from, in float64.
 * The geometry and the maps are meta/pad.c's; cuda/pad.c drives the GPU's
 * index_select along each padded dim with the same maps (and its
 * index-add for the backward, in float64).
 */

static yg_status mode_pad(const char *op,
                          bool reflect,
                          const yg_tensor *self,
                          const int64_t *pad,
                          int64_t pad_len,
                          yg_tensor **out) {
    int64_t osizes[YG_MAX_DIMS], idx[YG_MAX_DIMS] = {0}, *maps[YG_MAX_DIMS], *block = NULL;
    size_t block_bytes = 0, elem = yg_dtype_size(self->dtype);
    yg_tensor *res = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__pad_geometry(op, reflect, self->sizes, self->ndim, pad, pad_len, osizes));
    st = yg__tensor_new_on(op, osizes, self->ndim, self->dtype, self->storage->device,
                           self->storage->device_index, &res);
    /* No maps for an empty result: its other dims may be huge (sizes.h),
     * and no element reads them. */
    if (st == YG_OK && yg_tensor_numel(res) > 0)
        st = yg__pad_source_maps(op, reflect, self->sizes, osizes, self->ndim, pad, pad_len, maps, &block,
                         &block_bytes);
    if (st != YG_OK)
        goto out;
    const char *src = yg__tensor_ptr(self);
    char *dst = yg__tensor_ptr(res);
    int64_t numel = yg_tensor_numel(res);
    /* walk the output in row-major order, idx its multi-index */
    for (int64_t e = 0; e < numel; e++) {
        int64_t off = 0;
        for (int64_t d = 0; d < self->ndim; d++)
            off += maps[d][idx[d]] * self->strides[d];
        memcpy(dst + (size_t)e * elem, src + off * (int64_t)elem, elem);
        for (int64_t d = self->ndim - 1; d >= 0 && ++idx[d] == osizes[d]; d--)
            idx[d] = 0;
    }
    *out = res;
    res = NULL;
out:
    yg__free(block, block_bytes);
    yg_release(res);
    return st;
}

static yg_status mode_pad_backward(const char *op,
                                   bool reflect,
                                   const yg_tensor *grad_output,
                                   const int64_t *self_sizes,
                                   int64_t self_sizes_len,
                                   const int64_t *pad,
                                   int64_t pad_len,
                                   yg_tensor **out) {
    int64_t osizes[YG_MAX_DIMS], idx[YG_MAX_DIMS] = {0}, *maps[YG_MAX_DIMS], *block = NULL;
    int64_t strides[YG_MAX_DIMS];
    size_t block_bytes = 0;
    yg_tensor *go = NULL, *res = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__pad_backward_check(
        op, reflect, grad_output, self_sizes, self_sizes_len, pad, pad_len, osizes));
    st = yg__tensor_contiguous_as(grad_output, YG_FLOAT64, true, &go);
    if (st == YG_OK)
        st = yg__full_on(op, self_sizes, self_sizes_len, YG_FLOAT64, grad_output->storage->device,
                         grad_output->storage->device_index, 0.0, &res);
    /* As in mode_pad: no maps when no gradient element is read. */
    if (st == YG_OK && yg_tensor_numel(go) > 0)
        st = yg__pad_source_maps(op, reflect, self_sizes, osizes, self_sizes_len, pad, pad_len, maps,
                         &block, &block_bytes);
    if (st != YG_OK)
        goto out;
    /* res is contiguous: its strides (sizes.h) rather than a product. */
    memcpy(strides, res->strides, sizeof(int64_t) * (size_t)self_sizes_len);
    const double *gv = (const double *)yg__tensor_ptr(go);
    double *rv = (double *)yg__tensor_ptr(res);
    int64_t numel = yg_tensor_numel(go);
    for (int64_t e = 0; e < numel; e++) {
        int64_t off = 0;
        for (int64_t d = 0; d < self_sizes_len; d++)
            off += maps[d][idx[d]] * strides[d];
        rv[off] += gv[e];
        for (int64_t d = self_sizes_len - 1; d >= 0 && ++idx[d] == osizes[d]; d--)
            idx[d] = 0;
    }
    st = yg__tensor_contiguous_as(res, grad_output->dtype, true, out);
out:
    yg__free(block, block_bytes);
    yg_release(go);
    yg_release(res);
    return st;
}

yg_status yg__cpu_reflection_pad(const yg_tensor *self,
                                 const int64_t *pad,
                                 int64_t pad_len,
                                 yg_tensor **out) {
    return mode_pad("reflection_pad", true, self, pad, pad_len, out);
}

yg_status yg__cpu_replication_pad(const yg_tensor *self,
                                  const int64_t *pad,
                                  int64_t pad_len,
                                  yg_tensor **out) {
    return mode_pad("replication_pad", false, self, pad, pad_len, out);
}

yg_status yg__cpu_reflection_pad_backward(const yg_tensor *grad_output,
                                          const int64_t *self_sizes,
                                          int64_t self_sizes_len,
                                          const int64_t *pad,
                                          int64_t pad_len,
                                          yg_tensor **out) {
    return mode_pad_backward("reflection_pad_backward",
                             true,
                             grad_output,
                             self_sizes,
                             self_sizes_len,
                             pad,
                             pad_len,
                             out);
}

yg_status yg__cpu_replication_pad_backward(const yg_tensor *grad_output,
                                           const int64_t *self_sizes,
                                           int64_t self_sizes_len,
                                           const int64_t *pad,
                                           int64_t pad_len,
                                           yg_tensor **out) {
    return mode_pad_backward("replication_pad_backward",
                             false,
                             grad_output,
                             self_sizes,
                             self_sizes_len,
                             pad,
                             pad_len,
                             out);
}
