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
 * On a GPU the same maps drive index_select along each padded dim (and
 * its index-add for the backward, in float64), which run there.
 */

/* Checks pad against self's sizes for mode and fills the output sizes. */
static yg_status pad_geometry(const char *op,
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
static yg_status source_maps(const char *op,
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

/* A GPU's mode pad through index_select, which runs there: forward,
 * self gathered along each padded dim by that dim's map; backward
 * (from_float64, a float64 gradient of osizes), the index-adds of those
 * gathers in reverse, ending at in_sizes.  maps as source_maps made
 * them (on the host; index_select takes them to the device). */
static yg_status mode_pad_cuda(bool backward,
                               const yg_tensor *from,
                               const int64_t *in_sizes,
                               const int64_t *osizes,
                               int64_t ndim,
                               int64_t *const *maps,
                               int64_t pad_len,
                               yg_tensor **out) {
    int64_t sizes[YG_MAX_DIMS], k = pad_len / 2;
    yg_tensor *cur = yg_retain((yg_tensor *)from);
    yg_status st = YG_OK;

    memcpy(sizes, osizes, sizeof(int64_t) * (size_t)ndim);
    for (int64_t j = 0; j < k && st == YG_OK; j++) {
        /* forward: the last dim first; backward: undone in reverse */
        int64_t d = backward ? ndim - k + j : ndim - 1 - j;
        yg_tensor *index = NULL, *next = NULL;
        st = yg_tensor_from_data(maps[d], &osizes[d], 1, YG_INT64, &index);
        if (st == YG_OK && backward) {
            sizes[d] = in_sizes[d];
            st = yg__kernel_index_select_backward(cur, sizes, ndim, d, index, &next);
        } else if (st == YG_OK) {
            st = yg__kernel_index_select(cur, d, index, &next);
        }
        yg_release(index);
        yg_release(cur);
        cur = next;
    }
    if (st != YG_OK) {
        yg_release(cur);
        return st;
    }
    *out = cur;
    return YG_OK;
}

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
    YG_RETURN_IF_ERROR(pad_geometry(op, reflect, self->sizes, self->ndim, pad, pad_len, osizes));
    st = yg__tensor_new_on(op, osizes, self->ndim, self->dtype, self->storage->device,
                           self->storage->device_index, &res);
    /* No maps for an empty result: its other dims may be huge (sizes.h),
     * and no element reads them. */
    if (st == YG_OK && yg_tensor_numel(res) > 0)
        st = source_maps(op, reflect, self->sizes, osizes, self->ndim, pad, pad_len, maps, &block,
                         &block_bytes);
    if (st != YG_OK)
        goto out;
    if (self->storage->device == YG_CUDA && yg_tensor_numel(res) > 0) {
        yg_release(res);
        res = NULL;
        st = mode_pad_cuda(false, self, self->sizes, osizes, self->ndim, maps, pad_len, &res);
        if (st != YG_OK)
            goto out;
    }
    if (self->storage->device == YG_CUDA) {
        *out = res;
        res = NULL;
        goto out;
    }
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
    char gbuf[128], sbuf[128], pbuf[160];
    yg_status st;

    *out = NULL;
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
        pad_geometry(op, reflect, self_sizes, self_sizes_len, pad, pad_len, osizes));
    if (grad_output->ndim != self_sizes_len ||
        memcmp(grad_output->sizes, osizes, sizeof(int64_t) * (size_t)self_sizes_len) != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: grad_output %s does not match self_sizes %s padded by %s",
                        op,
                        yg__format_sizes(grad_output->sizes, grad_output->ndim, gbuf, sizeof gbuf),
                        yg__format_sizes(self_sizes, self_sizes_len, sbuf, sizeof sbuf),
                        yg__format_sizes(pad, pad_len, pbuf, sizeof pbuf));
    st = yg__tensor_contiguous_as(grad_output, YG_FLOAT64, true, &go);
    if (st == YG_OK)
        st = yg__full_on(op, self_sizes, self_sizes_len, YG_FLOAT64, grad_output->storage->device,
                         grad_output->storage->device_index, 0.0, &res);
    /* As in mode_pad: no maps when no gradient element is read. */
    if (st == YG_OK && yg_tensor_numel(go) > 0)
        st = source_maps(op, reflect, self_sizes, osizes, self_sizes_len, pad, pad_len, maps,
                         &block, &block_bytes);
    if (st != YG_OK)
        goto out;
    if (go->storage->device == YG_CUDA) {
        if (yg_tensor_numel(go) > 0) {
            yg_release(res);
            res = NULL;
            st = mode_pad_cuda(
                true, go, self_sizes, osizes, self_sizes_len, maps, pad_len, &res);
        }
        if (st == YG_OK)
            st = yg__tensor_contiguous_as(res, grad_output->dtype, true, out);
        goto out;
    }
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

yg_status yg__kernel_reflection_pad(const yg_tensor *self,
                                 const int64_t *pad,
                                 int64_t pad_len,
                                 yg_tensor **out) {
    return mode_pad("reflection_pad", true, self, pad, pad_len, out);
}

yg_status yg__kernel_replication_pad(const yg_tensor *self,
                                  const int64_t *pad,
                                  int64_t pad_len,
                                  yg_tensor **out) {
    return mode_pad("replication_pad", false, self, pad, pad_len, out);
}

yg_status yg__kernel_reflection_pad_backward(const yg_tensor *grad_output,
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

yg_status yg__kernel_replication_pad_backward(const yg_tensor *grad_output,
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
