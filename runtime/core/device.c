/*
 * device.c - which device an op with a Device argument runs on.  The
 * generated wrappers of such ops (creation and random ops, which may have
 * no tensor to take a device from) call this before indexing their kernel
 * table, so an out-of-range enum value is an error, never an index past
 * the table.
 */
#include "core/core.h"

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
