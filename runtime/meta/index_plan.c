/*
 * meta/index_plan.c - advanced indexing's plan (meta/index_plan.h): how
 * self[indices] maps the result's elements to self's, made once on the
 * host for either device, with every check of index, index_put and
 * index_put_.
 */
#include "meta/index_plan.h"

#include "core/core.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void yg__index_plan_free(yg_index_plan *p) {
    for (int32_t d = 0; d < YG_MAX_DIMS; d++) {
        yg_release(p->idx[d]);
        p->idx[d] = NULL;
    }
}

/* The k int64 tensors [nnz] of the true positions of a bool mask of k
 * dims, into idx[0..k). */
static yg_status mask_positions(const yg_tensor *mask, yg_tensor **idx) {
    int64_t n = 1, nnz = 0, c[YG_MAX_DIMS];
    const size_t bsz = sizeof(bool);
    yg_status st = YG_OK;

    n = yg_tensor_numel(mask); /* a 0 first: fits (sizes.h) */
    /* Two passes: count, then write coordinates. */
    for (int pass = 0; pass < 2 && st == YG_OK; pass++) {
        int64_t k = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t rest = i, off = 0;
            for (int32_t d = mask->ndim - 1; d >= 0; d--) {
                c[d] = rest % mask->sizes[d];
                rest /= mask->sizes[d];
                off += c[d] * mask->strides[d];
            }
            if (!*(const bool *)(yg__tensor_ptr(mask) + off * (int64_t)bsz))
                continue;
            for (int32_t d = 0; pass == 1 && d < mask->ndim; d++)
                ((int64_t *)yg__tensor_ptr(idx[d]))[k] = c[d];
            k++;
        }
        nnz = k;
        for (int32_t d = 0; pass == 0 && d < mask->ndim && st == YG_OK; d++)
            st = yg_tensor_empty(&nnz, 1, YG_INT64, &idx[d]);
    }
    return st;
}

/* Checks every value of the int64 tensor t against [-size, size). */
static yg_status check_positions(const char *op, const yg_tensor *t, int64_t dim, int64_t size) {
    int64_t n = yg_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        int64_t rest = i, off = 0;
        for (int32_t d = t->ndim - 1; d >= 0; d--) {
            off += (rest % t->sizes[d]) * t->strides[d];
            rest /= t->sizes[d];
        }
        int64_t k = ((const int64_t *)yg__tensor_ptr(t))[off];
        if (k < -size || k >= size)
            return yg__fail(YG_ERR_INDEX,
                            "%s: index %" PRId64 " is out of bounds for dim %" PRId64
                            " with size %" PRId64,
                            op,
                            k,
                            dim,
                            size);
    }
    return YG_OK;
}

/* Turns indices into a plan for self, or fails naming op; on failure the
 * plan holds nothing. */
yg_status yg__index_plan_init(const char *op,
                           const yg_tensor *self,
                           const yg_tensor *const *indices,
                           int64_t indices_len,
                           yg_index_plan *p) {
    char abuf[128], bbuf[128];
    int32_t d = 0, first = -1, last = -1;
    yg_status st = YG_OK;

    memset(p, 0, sizeof *p);
    p->ndim = self->ndim;
    if (indices_len > 0 && indices == NULL)
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "%s: indices is NULL with length %" PRId64, op, indices_len);
    for (int64_t i = 0; i < indices_len && st == YG_OK; i++) {
        const yg_tensor *t = indices[i];
        yg_tensor *host = NULL; /* a GPU index's values, read here */
        int32_t k = t == NULL ? 1 : t->dtype == YG_BOOL ? t->ndim : 1;
        if (d + k > self->ndim) {
            st = yg__fail(YG_ERR_INDEX,
                          "%s: too many indices for self %s: indices[%" PRId64
                          "] would index dim %d",
                          op,
                          yg__format_sizes(self->sizes, self->ndim, abuf, sizeof abuf),
                          i,
                          (int)(d + k - 1));
            break;
        }
        if (t == NULL) {
            d++;
            continue;
        }
        if (t->storage->device != self->storage->device ||
            t->storage->device_index != self->storage->device_index) {
            char a[32], b[32];
            st = yg__fail(YG_ERR_DEVICE,
                          "%s: indices[%" PRId64 "] is on %s, expected %s (self's device)",
                          op,
                          i,
                          yg__format_device(t, a, sizeof a),
                          yg__format_device(self, b, sizeof b));
            break;
        }
        if (t->storage->device != YG_CPU) {
            st = yg_tensor_to_device(t, YG_CPU, 0, &host);
            if (st != YG_OK)
                break;
            t = host;
        }
        if (t->dtype == YG_INT64) {
            st = check_positions(op, t, d, self->sizes[d]);
            /* An index sharing self's storage could be overwritten by
             * index_put_ before it is read: keep a copy of the checked
             * positions instead. */
            if (st == YG_OK && t->storage == self->storage)
                st = yg__tensor_contiguous_as(t, YG_INT64, false, &p->idx[d++]);
            else if (st == YG_OK)
                p->idx[d++] = yg_retain((yg_tensor *)t);
        } else if (t->dtype != YG_BOOL) {
            st = yg__fail(YG_ERR_DTYPE,
                          "%s: indices[%" PRId64 "] has dtype %s; expected int64 or bool",
                          op,
                          i,
                          yg_dtype_name(t->dtype));
        } else if (t->ndim == 0) {
            st = yg__fail(YG_ERR_SHAPE,
                          "%s: indices[%" PRId64 "] is a 0-dim bool mask, which is not supported",
                          op,
                          i);
        } else {
            for (int32_t j = 0; j < k && st == YG_OK; j++)
                if (t->sizes[j] != self->sizes[d + j])
                    st = yg__fail(YG_ERR_SHAPE,
                                  "%s: mask indices[%" PRId64 "] %s does not match self %s at "
                                  "dim %d",
                                  op,
                                  i,
                                  yg__format_sizes(t->sizes, t->ndim, abuf, sizeof abuf),
                                  yg__format_sizes(self->sizes, self->ndim, bbuf, sizeof bbuf),
                                  (int)(d + j));
            if (st == YG_OK)
                st = mask_positions(t, &p->idx[d]);
            d += k;
        }
        yg_release(host);
    }
    /* B: the index tensors broadcast together, NumPy's rule. */
    for (int32_t e = 0; e < self->ndim && st == YG_OK; e++) {
        const yg_tensor *t = p->idx[e];
        if (t == NULL)
            continue;
        if (first < 0)
            first = e;
        last = e;
        int64_t nd = t->ndim > p->bndim ? t->ndim : p->bndim, sizes[YG_MAX_DIMS];
        for (int64_t j = 0; j < nd; j++) {
            int64_t a = j - (nd - p->bndim) >= 0 ? p->bsizes[j - (nd - p->bndim)] : 1;
            int64_t b = j - (nd - t->ndim) >= 0 ? t->sizes[j - (nd - t->ndim)] : 1;
            if (a != b && a != 1 && b != 1) {
                st = yg__fail(YG_ERR_SHAPE,
                              "%s: the indices cannot be broadcast together: %s and %s (for "
                              "dim %d)",
                              op,
                              yg__format_sizes(p->bsizes, p->bndim, abuf, sizeof abuf),
                              yg__format_sizes(t->sizes, t->ndim, bbuf, sizeof bbuf),
                              (int)e);
                break;
            }
            sizes[j] = a == 1 ? b : a;
        }
        p->bndim = (int32_t)nd;
        memcpy(p->bsizes, sizes, sizeof(int64_t) * (size_t)nd);
    }
    /* Where B lands: in place of adjacent indexed dims, else first. */
    bool adjacent = true;
    for (int32_t e = first; first >= 0 && e <= last; e++)
        adjacent = adjacent && p->idx[e] != NULL;
    p->bpos = first >= 0 && adjacent ? first : 0;
    if (st == YG_OK) {
        int32_t kept_dims = 0;
        for (int32_t e = 0; e < self->ndim; e++)
            kept_dims += p->idx[e] == NULL;
        p->out_ndim = kept_dims + (first >= 0 ? p->bndim : 0);
        if (p->out_ndim > YG_MAX_DIMS)
            st = yg__fail(YG_ERR_SHAPE,
                          "%s: the result would have %d dims, more than %d",
                          op,
                          (int)p->out_ndim,
                          YG_MAX_DIMS);
    }
    if (st == YG_OK) {
        /* Kept dims before bpos, then B, then the other kept dims. */
        int32_t o = 0, seen = 0;
        for (int32_t e = 0; e < self->ndim; e++) {
            if (p->idx[e] != NULL)
                continue;
            if (seen == p->bpos && first >= 0 && o == seen)
                o += p->bndim;
            p->kept_at[e] = o;
            p->out_sizes[o] = self->sizes[e];
            o++;
            seen++;
        }
        for (int32_t j = 0; first >= 0 && j < p->bndim; j++)
            p->out_sizes[p->bpos + j] = p->bsizes[j];
    }
    if (st != YG_OK)
        yg__index_plan_free(p);
    return st;
}

/* Byte offset in self (from its first element) of the result element at
 * coordinates c. */
int64_t yg__index_plan_offset(const yg_index_plan *p, const yg_tensor *self, const int64_t *c) {
    int64_t off = 0;
    const int64_t *b = c + p->bpos;

    for (int32_t d = 0; d < p->ndim; d++) {
        const yg_tensor *t = p->idx[d];
        if (t == NULL) {
            off += c[p->kept_at[d]] * self->strides[d];
            continue;
        }
        int64_t toff = 0;
        for (int32_t j = 0; j < t->ndim; j++) {
            int64_t bj = b[p->bndim - t->ndim + j];
            toff += (t->sizes[j] == 1 ? 0 : bj) * t->strides[j];
        }
        int64_t k = ((const int64_t *)yg__tensor_ptr(t))[toff];
        off += (k < 0 ? k + self->sizes[d] : k) * self->strides[d];
    }
    return off * (int64_t)yg_dtype_size(self->dtype);
}

void yg__index_coords_of(int64_t i, const int64_t *sizes, int32_t ndim, int64_t *c) {
    for (int32_t d = ndim - 1; d >= 0; d--) {
        c[d] = i % sizes[d];
        i /= sizes[d];
    }
}

/* The result's element count; the callers ask only after the result
 * exists, so the checked product is its numel (sizes.h). */
int64_t yg__index_plan_numel(const yg_index_plan *p) {
    return yg__sizes_product(p->out_sizes, p->out_ndim);
}

/* The element offsets of the result's n elements in t (the plan's
 * geometry), into a new host buffer (free()), or NULL when out of
 * memory: what a GPU reads or writes (cuda/index.c). */
int64_t *yg__index_plan_offsets(const yg_index_plan *p, const yg_tensor *t, int64_t n) {
    int64_t c[YG_MAX_DIMS], esize = (int64_t)yg_dtype_size(t->dtype);
    int64_t *off = malloc((size_t)(n > 0 ? n : 1) * sizeof *off);
    for (int64_t i = 0; off != NULL && i < n; i++) {
        yg__index_coords_of(i, p->out_sizes, p->out_ndim, c);
        off[i] = yg__index_plan_offset(p, t, c) / esize;
    }
    return off;
}

yg_status yg__index_put_prepare(const char *op,
                                const yg_tensor *dst,
                                const yg_tensor *const *indices,
                                int64_t indices_len,
                                const yg_tensor *values,
                                bool in_place,
                                yg_index_plan *p,
                                yg_tensor **values_copy,
                                int64_t *n) {
    char vbuf[128], obuf[128];
    yg_status st = YG_OK;

    *values_copy = NULL;
    if (values->dtype != dst->dtype)
        return yg__fail(YG_ERR_DTYPE,
                        "%s: values has dtype %s but self has %s; they must match",
                        op,
                        yg_dtype_name(values->dtype),
                        yg_dtype_name(dst->dtype));
    YG_RETURN_IF_ERROR(yg__index_plan_init(op, dst, indices, indices_len, p));
    bool fits = values->ndim <= p->out_ndim;
    for (int32_t j = 0; fits && j < values->ndim; j++) {
        int64_t want = p->out_sizes[p->out_ndim - values->ndim + j];
        fits = values->sizes[j] == want || values->sizes[j] == 1;
    }
    if (!fits) {
        st = yg__fail(YG_ERR_SHAPE,
                      "%s: values %s cannot be broadcast to the indexed shape %s",
                      op,
                      yg__format_sizes(values->sizes, values->ndim, vbuf, sizeof vbuf),
                      yg__format_sizes(p->out_sizes, p->out_ndim, obuf, sizeof obuf));
        goto out;
    }
    /* values sharing self's storage would be read after being written. */
    if (in_place && values->storage == dst->storage) {
        st = yg__tensor_contiguous_as(values, values->dtype, false, values_copy);
        if (st != YG_OK)
            goto out;
    }
    *n = yg__index_plan_numel(p);
    if (*n < 0)
        /* No tensor of the indexed shape exists here to bound it. */
        st = yg__fail(YG_ERR_SHAPE,
                      "%s: the indexed shape %s has more than 2^59 elements",
                      op,
                      yg__format_sizes(p->out_sizes, p->out_ndim, obuf, sizeof obuf));
out:
    if (st != YG_OK) {
        yg_release(*values_copy);
        *values_copy = NULL;
        yg__index_plan_free(p);
    }
    return st;
}
