/*
 * device.c - which device an op with a Device argument runs on.  The
 * generated wrappers of such ops (creation and random ops, which may have
 * no tensor to take a device from) call this before indexing their kernel
 * table, so an out-of-range enum value is an error, never an index past
 * the table.
 */
#include "core/core.h"

#include <inttypes.h>
#include <stdio.h>

yg_status yg__dispatch_device(const char *op,
                              const yg_device *device,
                              const yg_tensor *like,
                              yg_device *out)
{
    if (device == NULL) {
        *out = like != NULL ? yg_tensor_device(like) : YG_CPU;
        return YG_OK;
    }
    if ((unsigned)*device >= YG_DEVICE_COUNT_)
        return yg__fail(YG_ERR_DEVICE, "%s: invalid device %d", op, (int)*device);
    *out = *device;
    return YG_OK;
}

/* Tensor k of the arguments yg__check_devices gets (fixed ones, then the
 * list's items), with its name in name. */
static const yg_tensor *nth(int32_t n,
                            const yg_tensor *const *ts,
                            const char *const *names,
                            const yg_tensor *const *list,
                            const char *list_name,
                            int64_t k,
                            char *name,
                            size_t name_len)
{
    if (k < n) {
        snprintf(name, name_len, "%s", names[k]);
        return ts[k];
    }
    snprintf(name, name_len, "%s[%" PRId64 "]", list_name, k - n);
    return list[k - n];
}

yg_status yg__check_devices(const char *op,
                            int32_t n,
                            const yg_tensor *const *ts,
                            const char *const *names,
                            const yg_tensor *const *list,
                            int64_t list_len,
                            const char *list_name)
{
    const yg_tensor *first = NULL;
    char first_name[64] = "", name[64], a[32], b[32];

    for (int64_t k = 0; k < n + (list != NULL ? list_len : 0); k++) {
        const yg_tensor *t = nth(n, ts, names, list, list_name, k, name, sizeof name);
        if (t == NULL)
            continue;
        if (first == NULL) {
            first = t;
            snprintf(first_name, sizeof first_name, "%s", name);
        } else if (yg_tensor_device(t) != yg_tensor_device(first) ||
                   yg_tensor_device_index(t) != yg_tensor_device_index(first)) {
            return yg__fail(YG_ERR_DEVICE,
                            "%s: expected all tensors on one device, but %s is on %s and %s on %s",
                            op,
                            first_name,
                            yg__format_device(first, a, sizeof a),
                            name,
                            yg__format_device(t, b, sizeof b));
        }
    }
    return YG_OK;
}
