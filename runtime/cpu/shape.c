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
#include "cpu/cpu_int.h"
#include "decls/inplace_fill.h"
#include "decls/join_split.h"
#include "decls/slicing.h"
#include "decls/views.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

yg_status yg__kernel_transpose(const yg_tensor *self, int64_t dim0, int64_t dim1, yg_tensor **out) {
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
    return yg__tensor_view("transpose", self, sizes, strides, self->ndim, self->offset, out);
}

yg_status yg__kernel_t(const yg_tensor *self, yg_tensor **out) {
    char buf[128];

    *out = NULL;
    if (self->ndim > 2)
        return yg__fail(YG_ERR_SHAPE,
                        "t: expected a tensor with 2 or fewer dims, got self %s",
                        yg__format_sizes(self->sizes, self->ndim, buf, sizeof buf));
    if (self->ndim < 2)
        return yg__tensor_alias(self, out);
    return yg__kernel_transpose(self, 0, 1, out);
}

/* Whether any of sizes[0..n) is 0. */
static bool has_zero(const int64_t *sizes, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (sizes[i] == 0)
            return true;
    return false;
}

/* Resolves one -1 in size against numel into shape; rejects other
 * negative sizes, two -1s and a numel mismatch. */
static yg_status infer_size(const char *op,
                            const yg_tensor *self,
                            const int64_t *size,
                            int64_t size_len,
                            int64_t *shape) {
    char sbuf[160], ibuf[128];
    int64_t numel = yg_tensor_numel(self), known = 1, infer = -1;
    bool zero = false;

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
        } else if (size[i] == 0) {
            zero = true;
        } else if (!yg__mul_ok(known, size[i], &known) || known > YG__MAX_NUMEL) {
            /* The product of the non-zero sizes is bounded by numel unless
             * a 0 makes the whole product 0; either way it cannot match. */
            if (!zero && !has_zero(size + i, size_len - i))
                return yg__fail(YG_ERR_SHAPE,
                                "%s: size %s is invalid for input %s with %" PRId64 " elements",
                                op,
                                yg__format_sizes(size, size_len, sbuf, sizeof sbuf),
                                yg__format_sizes(self->sizes, self->ndim, ibuf, sizeof ibuf),
                                numel);
            known = YG__MAX_NUMEL + 1; /* saturate: only a 0 can still come */
        }
        shape[i] = size[i];
    }
    if (zero)
        known = 0;
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
    numel = yg__sizes_product(osizes, ondim); /* self's numel, a 0 first (sizes.h) */
    if (numel == 0) {
        /* Other shapes of an empty input get contiguous strides, which
         * yg__kernel_view computes (they may overflow: a status). */
        if (ondim == nndim && memcmp(osizes, nsizes, sizeof(int64_t) * (size_t)ondim) == 0) {
            memcpy(nstrides, ostrides, sizeof(int64_t) * (size_t)ondim);
            return true;
        }
        return false;
    }

    int64_t view_d = nndim - 1;
    int64_t chunk_base_stride = ostrides[ondim - 1];
    int64_t tensor_numel = 1, view_numel = 1;
    for (int64_t tensor_d = ondim - 1; tensor_d >= 0; tensor_d--) {
        int64_t chunk_stride;
        tensor_numel *= osizes[tensor_d]; /* a part of self's numel */
        /* A chunk ends where the next-outer dim is not contiguous with it;
         * a stride that would overflow is no stride of self. */
        bool chunk_ends =
            tensor_d == 0 || (osizes[tensor_d - 1] != 1 &&
                              (!yg__mul_ok(tensor_numel, chunk_base_stride, &chunk_stride) ||
                               ostrides[tensor_d - 1] != chunk_stride));
        if (chunk_ends) {
            while (view_d >= 0 && (view_numel < tensor_numel || nsizes[view_d] == 1)) {
                /* view_numel <= tensor_numel: inside self's extent. */
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
yg__kernel_view(const yg_tensor *self, const int64_t *size, int64_t size_len, yg_tensor **out) {
    int64_t shape[YG_MAX_DIMS], strides[YG_MAX_DIMS];

    *out = NULL;
    YG_RETURN_IF_ERROR(infer_size("view", self, size, size_len, shape));
    if (yg_tensor_numel(self) == 0 &&
        !(self->ndim == size_len &&
          memcmp(self->sizes, shape, sizeof(int64_t) * (size_t)size_len) == 0)) {
        YG_RETURN_IF_ERROR(yg__sizes_strides("view", shape, size_len, strides));
        return yg__tensor_view("view", self, shape, strides, (int32_t)size_len, self->offset, out);
    }
    if (!compute_stride(self->sizes, self->strides, self->ndim, shape, size_len, strides)) {
        char nbuf[160], ibuf[128], sbuf[128];
        format_strides(self, sbuf, sizeof sbuf);
        return yg__fail(YG_ERR_SHAPE,
                        "view: size %s is not compatible with input %s and strides %s; use reshape",
                        yg__format_sizes(shape, size_len, nbuf, sizeof nbuf),
                        yg__format_sizes(self->sizes, self->ndim, ibuf, sizeof ibuf),
                        sbuf);
    }
    return yg__tensor_view("view", self, shape, strides, (int32_t)size_len, self->offset, out);
}

yg_status
yg__kernel_expand(const yg_tensor *self, const int64_t *size, int64_t size_len, yg_tensor **out) {
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
    /* The view check refuses a result of more than 2^59 elements. */
    return yg__tensor_view("expand", self, sizes, strides, (int32_t)size_len, self->offset, out);
}

yg_status yg__kernel_unsqueeze(const yg_tensor *self, int64_t dim, yg_tensor **out) {
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
            strides[i] = 1;
            if (d < self->ndim && !yg__mul_ok(self->sizes[d], self->strides[d], &strides[i]))
                strides[i] = 1; /* only an empty self's strides get so large */
            continue;
        }
        sizes[i] = self->sizes[j];
        strides[i] = self->strides[j];
        j++;
    }
    return yg__tensor_view("unsqueeze", self, sizes, strides, self->ndim + 1, self->offset, out);
}

yg_status yg__kernel_clone(const yg_tensor *self, yg_tensor **out) {
    *out = NULL;
    return yg__tensor_contiguous_as(self, self->dtype, false, out);
}

yg_status yg__kernel_squeeze(const yg_tensor *self, yg_tensor **out) {
    int64_t sizes[YG_MAX_DIMS], strides[YG_MAX_DIMS];
    int32_t nd = 0;

    *out = NULL;
    for (int32_t d = 0; d < self->ndim; d++) {
        if (self->sizes[d] == 1)
            continue;
        sizes[nd] = self->sizes[d];
        strides[nd] = self->strides[d];
        nd++;
    }
    return yg__tensor_view("squeeze", self, sizes, strides, nd, self->offset, out);
}

yg_status yg__kernel_squeeze_dim(const yg_tensor *self, int64_t dim, yg_tensor **out) {
    int64_t sizes[YG_MAX_DIMS], strides[YG_MAX_DIMS];
    int64_t d;
    int32_t nd = 0;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__wrap_dim("squeeze", "self", dim, self->ndim, &d));
    /* A 0-dim self, or a dim whose size is not 1, is left as it is. */
    if (self->ndim == 0 || self->sizes[d] != 1)
        return yg__tensor_alias(self, out);
    for (int32_t i = 0; i < self->ndim; i++) {
        if (i == d)
            continue;
        sizes[nd] = self->sizes[i];
        strides[nd] = self->strides[i];
        nd++;
    }
    return yg__tensor_view("squeeze", self, sizes, strides, nd, self->offset, out);
}

/* Checks that dims is a permutation of [0, ndim) (negative dims wrap) and
 * writes the wrapped dims to perm. */
static yg_status check_permutation(const char *op,
                                   const yg_tensor *self,
                                   const int64_t *dims,
                                   int64_t dims_len,
                                   int64_t *perm) {
    bool seen[YG_MAX_DIMS] = {false};
    char dbuf[160], sbuf[128];

    if (dims_len > 0 && dims == NULL)
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "%s: dims is NULL with length %" PRId64, op, dims_len);
    if (dims_len != self->ndim)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: dims %s has %" PRId64 " entries but self %s has %d dims",
                        op,
                        yg__format_sizes(dims, dims_len, dbuf, sizeof dbuf),
                        dims_len,
                        yg__format_sizes(self->sizes, self->ndim, sbuf, sizeof sbuf),
                        (int)self->ndim);
    for (int64_t i = 0; i < dims_len; i++) {
        YG_RETURN_IF_ERROR(yg__wrap_dim(op, "self", dims[i], self->ndim, &perm[i]));
        if (seen[perm[i]])
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s: dim %" PRId64 " appears more than once in dims %s",
                            op,
                            perm[i],
                            yg__format_sizes(dims, dims_len, dbuf, sizeof dbuf));
        seen[perm[i]] = true;
    }
    return YG_OK;
}

yg_status
yg__kernel_permute(const yg_tensor *self, const int64_t *dims, int64_t dims_len, yg_tensor **out) {
    int64_t perm[YG_MAX_DIMS], sizes[YG_MAX_DIMS], strides[YG_MAX_DIMS];

    *out = NULL;
    YG_RETURN_IF_ERROR(check_permutation("permute", self, dims, dims_len, perm));
    for (int32_t i = 0; i < self->ndim; i++) {
        sizes[i] = self->sizes[perm[i]];
        strides[i] = self->strides[perm[i]];
    }
    return yg__tensor_view("permute", self, sizes, strides, self->ndim, self->offset, out);
}

yg_status yg__kernel_select(const yg_tensor *self, int64_t dim, int64_t index, yg_tensor **out) {
    int64_t sizes[YG_MAX_DIMS], strides[YG_MAX_DIMS];
    int64_t d;
    int32_t nd = 0;
    char buf[128];

    *out = NULL;
    if (self->ndim == 0)
        return yg__fail(YG_ERR_SHAPE, "select: cannot select from a 0-dim self");
    YG_RETURN_IF_ERROR(yg__wrap_dim("select", "self", dim, self->ndim, &d));
    int64_t size = self->sizes[d];
    if (index < -size || index >= size)
        return yg__fail(YG_ERR_INDEX,
                        "select: index %" PRId64 " out of range for dim %" PRId64
                        " of size %" PRId64 " in self %s",
                        index,
                        d,
                        size,
                        yg__format_sizes(self->sizes, self->ndim, buf, sizeof buf));
    if (index < 0)
        index += size;
    for (int32_t i = 0; i < self->ndim; i++) {
        if (i == d)
            continue;
        sizes[nd] = self->sizes[i];
        strides[nd] = self->strides[i];
        nd++;
    }
    /* index < size: for a non-empty self, index * stride lies inside its
     * extent; an empty result reaches nothing, and an empty self's
     * strides may be such that the product overflows: offset unused. */
    int64_t offset = self->offset;
    if (yg__sizes_product(sizes, nd) != 0)
        offset += index * self->strides[d];
    return yg__tensor_view("select", self, sizes, strides, nd, offset, out);
}

/* Python's slice bounds: negative start/end count from the end, both are
 * clamped to [0, size], and an end before start gives an empty slice. */
static void slice_bounds(int64_t size, int64_t *start, int64_t *end) {
    if (*start < 0)
        *start += size;
    if (*end < 0)
        *end += size;
    *start = *start < 0 ? 0 : (*start > size ? size : *start);
    *end = *end < *start ? *start : (*end > size ? size : *end);
}

yg_status yg__kernel_slice(const yg_tensor *self,
                           int64_t dim,
                           int64_t start,
                           int64_t end,
                           int64_t step,
                           yg_tensor **out) {
    int64_t sizes[YG_MAX_DIMS], strides[YG_MAX_DIMS];
    int64_t d;

    *out = NULL;
    if (self->ndim == 0)
        return yg__fail(YG_ERR_SHAPE, "slice: cannot slice a 0-dim self");
    YG_RETURN_IF_ERROR(yg__wrap_dim("slice", "self", dim, self->ndim, &d));
    if (step <= 0)
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "slice: step must be positive, got %" PRId64, step);
    slice_bounds(self->sizes[d], &start, &end);
    memcpy(sizes, self->sizes, sizeof sizes);
    memcpy(strides, self->strides, sizeof strides);
    /* end - start <= size, so dividing first cannot overflow where
     * end - start + step - 1 would for a huge step. */
    sizes[d] = (end - start) / step + ((end - start) % step != 0);
    /* A dim of size 0 or 1, or any dim of an empty result, may keep any
     * stride and offset (no element is reached through them); others
     * need the product, which fits when the result's extent does. */
    strides[d] = self->strides[d];
    int64_t offset = self->offset;
    if (yg__sizes_product(sizes, self->ndim) == 0)
        return yg__tensor_view("slice", self, sizes, strides, self->ndim, offset, out);
    if (sizes[d] > 1)
        YG_RETURN_IF_ERROR(yg__size_mul("slice", "stride", self->strides[d], step, &strides[d]));
    offset = start * self->strides[d]; /* start < size: inside self's extent */
    offset += self->offset;
    return yg__tensor_view("slice", self, sizes, strides, self->ndim, offset, out);
}

/* zeros of input_sizes (dtype of grad_output), the part that `part`
 * selects from it overwritten by grad_output; part is a select or a slice
 * of that zero tensor.  The shared tail of select_backward and
 * slice_backward. */
static yg_status write_into_zeros(const char *op,
                                  const yg_tensor *grad_output,
                                  yg_tensor *zeros,
                                  yg_tensor *part,
                                  yg_tensor **out) {
    char gbuf[128], pbuf[128];
    yg_tensor *res = NULL;
    yg_status st;

    if (part->ndim != grad_output->ndim ||
        memcmp(part->sizes, grad_output->sizes, sizeof(int64_t) * (size_t)part->ndim) != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: grad_output %s does not match the selected part %s",
                        op,
                        yg__format_sizes(grad_output->sizes, grad_output->ndim, gbuf, sizeof gbuf),
                        yg__format_sizes(part->sizes, part->ndim, pbuf, sizeof pbuf));
    st = yg__kernel_copy_(part, grad_output, &res);
    if (st != YG_OK)
        return yg__fail_prefix(st, op);
    yg_release(res);
    *out = yg_retain(zeros);
    return YG_OK;
}

yg_status yg__kernel_select_backward(const yg_tensor *grad_output,
                                     const int64_t *input_sizes,
                                     int64_t input_sizes_len,
                                     int64_t dim,
                                     int64_t index,
                                     yg_tensor **out) {
    yg_tensor *zeros = NULL, *part = NULL;
    yg_status st;

    *out = NULL;
    st = yg__full_on("select_backward",
                     input_sizes,
                     input_sizes_len,
                     grad_output->dtype,
                     grad_output->storage->device,
                     grad_output->storage->device_index,
                     0.0,
                     &zeros);
    if (st != YG_OK)
        return st;
    st = yg__kernel_select(zeros, dim, index, &part);
    if (st != YG_OK) {
        st = yg__fail_prefix(st, "select_backward");
        goto out;
    }
    st = write_into_zeros("select_backward", grad_output, zeros, part, out);
out:
    yg_release(part);
    yg_release(zeros);
    return st;
}

yg_status yg__kernel_slice_backward(const yg_tensor *grad_output,
                                    const int64_t *input_sizes,
                                    int64_t input_sizes_len,
                                    int64_t dim,
                                    int64_t start,
                                    int64_t end,
                                    int64_t step,
                                    yg_tensor **out) {
    yg_tensor *zeros = NULL, *part = NULL;
    yg_status st;

    *out = NULL;
    st = yg__full_on("slice_backward",
                     input_sizes,
                     input_sizes_len,
                     grad_output->dtype,
                     grad_output->storage->device,
                     grad_output->storage->device_index,
                     0.0,
                     &zeros);
    if (st != YG_OK)
        return st;
    st = yg__kernel_slice(zeros, dim, start, end, step, &part);
    if (st != YG_OK) {
        st = yg__fail_prefix(st, "slice_backward");
        goto out;
    }
    st = write_into_zeros("slice_backward", grad_output, zeros, part, out);
out:
    yg_release(part);
    yg_release(zeros);
    return st;
}

yg_status
yg__kernel_flip(const yg_tensor *self, const int64_t *dims, int64_t dims_len, yg_tensor **out) {
    int64_t strides[YG_MAX_DIMS];
    int64_t offset = self->offset;
    bool flipped[YG_MAX_DIMS] = {false};
    yg_tensor *reversed = NULL;
    char dbuf[160];
    yg_status st;

    *out = NULL;
    if (dims_len > 0 && dims == NULL)
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "flip: dims is NULL with length %" PRId64, dims_len);
    memcpy(strides, self->strides, sizeof strides);
    for (int64_t i = 0; i < dims_len; i++) {
        int64_t d;
        YG_RETURN_IF_ERROR(yg__wrap_dim("flip", "self", dims[i], self->ndim, &d));
        if (self->ndim == 0)
            continue;
        if (flipped[d])
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "flip: dim %" PRId64 " appears more than once in dims %s",
                            d,
                            yg__format_sizes(dims, dims_len, dbuf, sizeof dbuf));
        flipped[d] = true;
        /* Walk dim d backwards: start at its last element, negative stride
         * (inside self's extent, so no overflow; an empty self reaches
         * nothing and keeps its offset). */
        if (yg_tensor_numel(self) > 0)
            offset += (self->sizes[d] - 1) * self->strides[d];
        strides[d] = -self->strides[d];
    }
    /* The reversed view is internal: it never escapes, only its copy does
     * (on a GPU the copy kernel walks the negative strides). */
    st = yg__tensor_view("flip", self, self->sizes, strides, self->ndim, offset, &reversed);
    if (st != YG_OK)
        return st;
    st = yg__tensor_contiguous_as(reversed, self->dtype, false, out);
    yg_release(reversed);
    return st;
}

/* cat on the CPU, structured (meta/join.c checks and makes the result):
 * viewed as [outer, sizes[dim] * inner], piece i fills columns
 * [offset_i * inner, (offset_i + len_i) * inner) of every row, so each row
 * of a piece is one contiguous run of the result. */
yg_status yg__cpu_cat_out(const yg_tensor *const *tensors,
                          int64_t tensors_len,
                          int64_t dim,
                          yg_tensor *out) {
    int32_t ndim = out->ndim;
    int64_t d = dim < 0 ? dim + ndim : dim, inner = 1, offset = 0;

    if (yg_tensor_numel(out) == 0)
        return YG_OK; /* nothing to copy; the trailing product below need not fit */
    for (int32_t k = (int32_t)d + 1; k < ndim; k++)
        inner *= out->sizes[k]; /* a part of out's numel: fits */
    int64_t esize = (int64_t)yg_dtype_size(out->dtype);
    char *base = yg__tensor_ptr(out);
    for (int64_t i = 0; i < tensors_len; i++) {
        int64_t len = tensors[i]->sizes[d];
        if (len == 0)
            continue; /* nothing to copy (and its rows need no walk) */
        yg__cpu_copy_rows(base + offset * inner * esize, out->sizes[d] * inner * esize,
                          tensors[i], (int32_t)d, out->dtype);
        offset += len;
    }
    return YG_OK;
}
