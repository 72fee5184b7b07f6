/*
 * meta/creation.c - the checks of the creation and random ops
 * (meta/creation.h), for every device.
 */
#include "meta/creation.h"

#include "core/core.h"

#include <inttypes.h>
#include <stdio.h>

yg_status yg__creation_dtype(const char *op, const yg_dtype *dtype, yg_dtype dflt, yg_dtype *out)
{
    if (dtype == NULL) {
        *out = dflt;
        return YG_OK;
    }
    if ((unsigned)*dtype >= YG_DTYPE_COUNT_)
        return yg__fail(YG_ERR_DTYPE, "%s: invalid dtype %d", op, (int)*dtype);
    *out = *dtype;
    return YG_OK;
}

yg_status yg__creation_empty(const char *op,
                             const int64_t *size,
                             int64_t size_len,
                             yg_dtype dtype,
                             yg_tensor **out)
{
    return yg__creation_empty_on(op, size, size_len, dtype, YG_CPU, out);
}

yg_status yg__creation_empty_on(const char *op,
                                const int64_t *size,
                                int64_t size_len,
                                yg_dtype dtype,
                                yg_device device,
                                yg_tensor **out)
{
    char buf[160];

    *out = NULL;
    if (size_len < 0 || size_len > YG_MAX_DIMS)
        return yg__fail(YG_ERR_SHAPE, "%s: size has %" PRId64 " dims (at most %d)", op, size_len,
                        YG_MAX_DIMS);
    if (size_len > 0 && size == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: size is NULL with size_len %" PRId64, op,
                        size_len);
    for (int64_t i = 0; i < size_len; i++)
        if (size[i] < 0)
            return yg__fail(YG_ERR_SHAPE, "%s: negative size %" PRId64 " in size %s", op,
                            size[i], yg__format_sizes(size, size_len, buf, sizeof buf));
    /* Element count and strides checked there, under this op's name. */
    return yg__tensor_new_on(op, size, size_len, dtype, device, 0, out);
}
