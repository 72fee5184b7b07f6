/*
 * shape.c - views that share their input's storage (transpose, t, view,
 * expand, unsqueeze) and clone, the contiguous copy.
 *
 * A view only computes new sizes, strides and offset and hands them to
 * yg__tensor_view; no element is touched, so views cost one small
 * allocation whatever the tensor's size, and an in-place write through one
 * is seen by all (they share the storage's version counter).
 *
 * view follows PyTorch's rule (computeStride in ATen's TensorUtils.cpp):
 * the input's dims are split into chunks that are each contiguous in
 * memory, and a view exists exactly when every new dim lies inside one
 * chunk.  So a view can split or merge dims of a non-contiguous tensor as
 * long as it never merges across a gap; otherwise the message says to use
 * reshape, which copies.
 */
#include "cpu/cpu.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

yg_status yg__cpu_transpose(const yg_tensor *self, int64_t dim0, int64_t dim1, yg_tensor **out) {
    int64_t sizes[YG_MAX_DIMS], strides[YG_MAX_DIMS];
    int64_t d0, d1;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__wrap_dim("transpose", "self", dim0, self->ndim, &d0));
    YG_RETURN_IF_ERROR(yg__wrap_dim("transpose", "self", dim1, self->ndim, &d1));
    memcpy(sizes, self->sizes, sizeof sizes);
    memcpy(strides, self->strides, sizeof strides);
    if (self->ndim > 0) {
        sizes[d0] = self->sizes[d1];
        sizes[d1] = self->sizes[d0];
        strides[d0] = self->strides[d1];
        strides[d1] = self->strides[d0];
    }
    return yg__tensor_view(self, sizes, strides, self->ndim, self->offset, out);
}

yg_status yg__cpu_t(const yg_tensor *self, yg_tensor **out) {
    char buf[128];

    *out = NULL;
    if (self->ndim > 2)
        return yg__fail(YG_ERR_SHAPE,
                        "t: expected a tensor with 2 or fewer dims, got self %s",
                        yg__format_sizes(self->sizes, self->ndim, buf, sizeof buf));
    if (self->ndim < 2)
        return yg__tensor_alias(self, out);
    return yg__cpu_transpose(self, 0, 1, out);
}

/* Resolves one -1 in size against numel into shape; rejects other
 * negative sizes, two -1s and a numel mismatch. */
static yg_status infer_size(const char *op,
                            const yg_tensor *self,
                            const int64_t *size,
                            int64_t size_len,
                            int64_t *shape) {
    char sbuf[160], ibuf[128];
    int64_t numel = 1, known = 1, infer = -1;

    for (int32_t d = 0; d < self->ndim; d++)
        numel *= self->sizes[d];
    if (size_len < 0 || size_len > YG_MAX_DIMS)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: %" PRId64 " dims requested, at most %d are supported",
                        op,
                        size_len,
                        YG_MAX_DIMS);
    if (size_len > 0 && size == NULL)
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "%s: size is NULL with length %" PRId64, op, size_len);
    for (int64_t i = 0; i < size_len; i++) {
        if (size[i] == -1) {
            if (infer >= 0)
                return yg__fail(YG_ERR_SHAPE,
                                "%s: only one dim can be inferred (-1), got size %s",
                                op,
                                yg__format_sizes(size, size_len, sbuf, sizeof sbuf));
            infer = i;
        } else if (size[i] < 0) {
            return yg__fail(YG_ERR_SHAPE,
                            "%s: invalid size %" PRId64 " in size %s",
                            op,
                            size[i],
                            yg__format_sizes(size, size_len, sbuf, sizeof sbuf));
        } else {
            known *= size[i];
        }
        shape[i] = size[i];
    }
    if (infer >= 0) {
        /* numel 0 with a 0 among the known sizes leaves -1 ambiguous. */
        if (known == 0 || numel % known != 0)
            return yg__fail(YG_ERR_SHAPE,
                            "%s: size %s is invalid for input %s with %" PRId64 " elements",
                            op,
                            yg__format_sizes(size, size_len, sbuf, sizeof sbuf),
                            yg__format_sizes(self->sizes, self->ndim, ibuf, sizeof ibuf),
                            numel);
        shape[infer] = numel / known;
        known *= shape[infer];
    }
    if (known != numel)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: size %s is invalid for input %s with %" PRId64 " elements",
                        op,
                        yg__format_sizes(size, size_len, sbuf, sizeof sbuf),
                        yg__format_sizes(self->sizes, self->ndim, ibuf, sizeof ibuf),
                        numel);
    return YG_OK;
}

/* PyTorch's computeStride: strides for viewing (osizes, ostrides) as
 * nsizes, or false when the view would merge dims across a gap. */
static bool compute_stride(const int64_t *osizes,
                           const int64_t *ostrides,
                           int64_t ondim,
                           const int64_t *nsizes,
                           int64_t nndim,
                           int64_t *nstrides) {
    int64_t numel = 1;

    if (ondim == 0) {
        for (int64_t d = 0; d < nndim; d++)
            nstrides[d] = 1;
        return true;
    }
    for (int64_t d = 0; d < ondim; d++)
        numel *= osizes[d];
    if (numel == 0) {
        if (ondim == nndim && memcmp(osizes, nsizes, sizeof(int64_t) * (size_t)ondim) == 0) {
            memcpy(nstrides, ostrides, sizeof(int64_t) * (size_t)ondim);
            return true;
        }
        for (int64_t d = nndim - 1; d >= 0; d--) {
            if (d == nndim - 1)
                nstrides[d] = 1;
            else
                nstrides[d] = (nsizes[d + 1] > 1 ? nsizes[d + 1] : 1) * nstrides[d + 1];
        }
        return true;
    }

    int64_t view_d = nndim - 1;
    int64_t chunk_base_stride = ostrides[ondim - 1];
    int64_t tensor_numel = 1, view_numel = 1;
    for (int64_t tensor_d = ondim - 1; tensor_d >= 0; tensor_d--) {
        tensor_numel *= osizes[tensor_d];
        /* A chunk ends where the next-outer dim is not contiguous with it. */
        if (tensor_d == 0 || (osizes[tensor_d - 1] != 1 &&
                              ostrides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
            while (view_d >= 0 && (view_numel < tensor_numel || nsizes[view_d] == 1)) {
                nstrides[view_d] = view_numel * chunk_base_stride;
                view_numel *= nsizes[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel)
                return false;
            if (tensor_d > 0) {
                chunk_base_stride = ostrides[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}

static void format_strides(const yg_tensor *t, char *buf, size_t len) {
    yg__format_sizes(t->strides, t->ndim, buf, len);
}

yg_status
yg__cpu_view(const yg_tensor *self, const int64_t *size, int64_t size_len, yg_tensor **out) {
    int64_t shape[YG_MAX_DIMS], strides[YG_MAX_DIMS];

    *out = NULL;
    YG_RETURN_IF_ERROR(infer_size("view", self, size, size_len, shape));
    if (!compute_stride(self->sizes, self->strides, self->ndim, shape, size_len, strides)) {
        char nbuf[160], ibuf[128], sbuf[128];
        format_strides(self, sbuf, sizeof sbuf);
        return yg__fail(YG_ERR_SHAPE,
                        "view: size %s is not compatible with input %s and strides %s; use reshape",
                        yg__format_sizes(shape, size_len, nbuf, sizeof nbuf),
                        yg__format_sizes(self->sizes, self->ndim, ibuf, sizeof ibuf),
                        sbuf);
    }
    return yg__tensor_view(self, shape, strides, (int32_t)size_len, self->offset, out);
}

yg_status
yg__cpu_expand(const yg_tensor *self, const int64_t *size, int64_t size_len, yg_tensor **out) {
    int64_t sizes[YG_MAX_DIMS], strides[YG_MAX_DIMS];
    char sbuf[128], nbuf[160];

    *out = NULL;
    if (size_len > 0 && size == NULL)
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "expand: size is NULL with length %" PRId64, size_len);
    if (size_len < self->ndim || size_len > YG_MAX_DIMS)
        return yg__fail(YG_ERR_SHAPE,
                        "expand: size %s must have between %d and %d dims for self %s",
                        yg__format_sizes(size, size_len, nbuf, sizeof nbuf),
                        (int)self->ndim,
                        YG_MAX_DIMS,
                        yg__format_sizes(self->sizes, self->ndim, sbuf, sizeof sbuf));
    for (int64_t i = size_len - 1; i >= 0; i--) {
        int64_t sd = i - (size_len - self->ndim); /* matching dim of self, or < 0 */
        int64_t want = size[i];
        if (sd < 0) {
            if (want < 0)
                return yg__fail(YG_ERR_SHAPE,
                                "expand: size %" PRId64
                                " is not allowed for new leading dim %" PRId64 " (size %s)",
                                want,
                                i,
                                yg__format_sizes(size, size_len, nbuf, sizeof nbuf));
            sizes[i] = want;
            strides[i] = 0;
            continue;
        }
        int64_t have = self->sizes[sd];
        if (want == -1 || want == have) {
            sizes[i] = have;
            strides[i] = self->strides[sd];
        } else if (have == 1 && want >= 0) {
            sizes[i] = want;
            strides[i] = 0;
        } else {
            return yg__fail(YG_ERR_SHAPE,
                            "expand: cannot expand self %s to size %s: dim %" PRId64
                            " has size %" PRId64 " (expected 1 or %" PRId64 ")",
                            yg__format_sizes(self->sizes, self->ndim, sbuf, sizeof sbuf),
                            yg__format_sizes(size, size_len, nbuf, sizeof nbuf),
                            sd,
                            have,
                            want);
        }
    }
    return yg__tensor_view(self, sizes, strides, (int32_t)size_len, self->offset, out);
}

yg_status yg__cpu_unsqueeze(const yg_tensor *self, int64_t dim, yg_tensor **out) {
    int64_t sizes[YG_MAX_DIMS], strides[YG_MAX_DIMS];
    int64_t d;
    char buf[128];

    *out = NULL;
    if (self->ndim >= YG_MAX_DIMS)
        return yg__fail(YG_ERR_SHAPE,
                        "unsqueeze: self %s already has the maximum of %d dims",
                        yg__format_sizes(self->sizes, self->ndim, buf, sizeof buf),
                        YG_MAX_DIMS);
    YG_RETURN_IF_ERROR(yg__wrap_dim("unsqueeze", "self", dim, self->ndim + 1, &d));
    for (int64_t i = 0, j = 0; i <= self->ndim; i++) {
        if (i == d) {
            sizes[i] = 1;
            /* Any stride is valid for a size-1 dim; this one keeps a
             * contiguous tensor contiguous by PyTorch's definition. */
            strides[i] = d < self->ndim ? self->sizes[d] * self->strides[d] : 1;
            continue;
        }
        sizes[i] = self->sizes[j];
        strides[i] = self->strides[j];
        j++;
    }
    return yg__tensor_view(self, sizes, strides, self->ndim + 1, self->offset, out);
}

yg_status yg__cpu_clone(const yg_tensor *self, yg_tensor **out) {
    *out = NULL;
    return yg__tensor_contiguous_as(self, self->dtype, false, out);
}
