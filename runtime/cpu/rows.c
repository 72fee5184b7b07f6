/*
 * rows.c - small helpers of the CPU kernels (cpu_int.h): storing a double
 * into any dtype, the CPU-and-floating check.
 */
#include "cpu/cpu_int.h"

void yg__store_f64(yg_tensor *t, int64_t i, double v) {
    yg__store_f64_as(yg__tensor_ptr(t) + i * (int64_t)yg_dtype_size(t->dtype), t->dtype, v);
}

yg_status yg__cpu_check_floating(const char *op, const char *arg, const yg_tensor *t) {
    if (t->storage->device != YG_CPU)
        return yg__fail(YG_ERR_DEVICE,
                        "%s: expected %s on cpu, got %s",
                        op,
                        arg,
                        yg__device_name(t->storage->device));
    return yg__check_floating(op, arg, t);
}
