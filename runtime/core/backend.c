/*
 * backend.c - the device registry (backend.h).
 */
#include "core/backend.h"
#include "core/core.h"

#include <stdatomic.h>

static _Atomic(const yg_device_backend *) backends[YG_DEVICE_COUNT_];

void yg__backend_register(yg_device device, const yg_device_backend *b)
{
    YG_ASSERT((unsigned)device < YG_DEVICE_COUNT_ && device != YG_CPU);
    atomic_store_explicit(&backends[device], b, memory_order_release);
}

yg_status yg__backend(const char *op, yg_device device, const yg_device_backend **out)
{
    const yg_device_backend *b = NULL;

    *out = NULL;
    if ((unsigned)device >= YG_DEVICE_COUNT_ || device == YG_CPU)
        return yg__fail(YG_ERR_DEVICE, "%s: invalid device %d", op, (int)device);
    b = atomic_load_explicit(&backends[device], memory_order_acquire);
    if (b == NULL)
        return yg__fail(YG_ERR_DEVICE,
                        "%s: %s: built without CUDA (configure with the CUDA toolkit installed and "
                        "YG_WITH_CUDA=ON)",
                        op,
                        yg__device_name(device));
    *out = b;
    return YG_OK;
}

const yg_device_backend *yg__backend_of(yg_device device)
{
    const yg_device_backend *b = atomic_load_explicit(&backends[device], memory_order_acquire);
    YG_ASSERT(b != NULL);
    return b;
}
