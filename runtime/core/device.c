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
 * list's items). */
static const yg_tensor *nth(int32_t n, const yg_tensor *const *ts, const yg_tensor *const *list,
                            int64_t k)
{
    return k < n ? ts[k] : list[k - n];
}

/* The name of argument k, into buf: "self", or "tensors[2]". */
static char *name_of(int32_t n, const char *const *names, const char *list_name, int64_t k,
                     char *buf, size_t len)
{
    if (k < n)
        snprintf(buf, len, "%s", names[k]);
    else
        snprintf(buf, len, "%s[%" PRId64 "]", list_name, k - n);
    return buf;
}

yg_status yg__check_devices(const char *op,
                            int32_t n,
                            const yg_tensor *const *ts,
                            const char *const *names,
                            const yg_tensor *const *list,
                            int64_t list_len,
                            const char *list_name)
{
    int64_t total = n + (list != NULL ? list_len : 0), first = -1;

    /* Every op with several tensors runs this: names are formatted only
     * for the message. */
    for (int64_t k = 0; k < total; k++) {
        const yg_tensor *t = nth(n, ts, list, k), *f;
        if (t == NULL)
            continue;
        if (first < 0) {
            first = k;
            continue;
        }
        f = nth(n, ts, list, first);
        if (yg_tensor_device(t) != yg_tensor_device(f) ||
            yg_tensor_device_index(t) != yg_tensor_device_index(f)) {
            char fname[64], tname[64], a[32], b[32];
            return yg__fail(YG_ERR_DEVICE,
                            "%s: expected all tensors on one device, but %s is on %s and %s on %s",
                            op,
                            name_of(n, names, list_name, first, fname, sizeof fname),
                            yg__format_device(f, a, sizeof a),
                            name_of(n, names, list_name, k, tname, sizeof tname),
                            yg__format_device(t, b, sizeof b));
        }
    }
    return YG_OK;
}
