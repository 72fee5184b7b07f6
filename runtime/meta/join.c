/*
 * meta/join.c - the meta function of cat (meta/meta.h): every piece
 * checked against tensor 0 (the messages of the former composite), the
 * result made once, of the promoted dtype.
 */
#include "decls/join_split.h"
#include "meta/meta.h"

#include "core/core.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

yg_status
yg__meta_cat(const yg_tensor *const *tensors, int64_t tensors_len, int64_t dim, yg_tensor **out) {
    int64_t sizes[YG_MAX_DIMS], d;
    char abuf[128], bbuf[128];

    *out = NULL;
    if (tensors_len < 1 || tensors == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "cat: expected at least one tensor, got %" PRId64,
                        tensors_len);
    const yg_tensor *first = tensors[0];
    int32_t ndim = first->ndim;
    if (ndim == 0)
        return yg__fail(YG_ERR_SHAPE, "cat: cannot join 0-dim tensors (tensor 0 is 0-dim)");
    d = dim < 0 ? dim + ndim : dim;
    if (d < 0 || d >= ndim)
        return yg__fail(YG_ERR_INDEX,
                        "cat: dim %" PRId64 " out of range for tensors of %" PRId32 " dims",
                        dim,
                        ndim);
    memcpy(sizes, first->sizes, sizeof(int64_t) * (size_t)ndim);
    sizes[d] = 0;
    yg_dtype dtype = first->dtype;
    for (int64_t i = 0; i < tensors_len; i++) {
        const yg_tensor *t = tensors[i];
        bool fits = t->ndim == ndim;
        for (int32_t k = 0; fits && k < ndim; k++)
            fits = k == d || t->sizes[k] == first->sizes[k];
        if (!fits)
            return yg__fail(YG_ERR_SHAPE,
                            "cat: tensor %" PRId64 " %s does not match tensor 0 %s outside dim "
                            "%" PRId64,
                            i,
                            yg_tensor_format_sizes(t, abuf, sizeof abuf),
                            yg_tensor_format_sizes(first, bbuf, sizeof bbuf),
                            d);
        if (t->storage->device != first->storage->device)
            return yg__fail(YG_ERR_DEVICE,
                            "cat: tensor %" PRId64 " is on %s but tensor 0 on %s",
                            i,
                            yg__device_name(t->storage->device),
                            yg__device_name(first->storage->device));
        if (t->sizes[d] > INT64_MAX - sizes[d])
            return yg__fail(YG_ERR_SHAPE, "cat: the size along dim %" PRId64 " overflows", d);
        sizes[d] += t->sizes[d];
        dtype = yg__promote_types(dtype, t->dtype);
    }
    return yg__tensor_new_on(
        "cat", sizes, ndim, dtype, first->storage->device, first->storage->device_index, out);
}
