/*
 * int_divisor.c - the zero-divisor check of integer division kernels
 * (yg__check_int_divisor, core/core.h).  gen emits a call before the
 * pointwise iterator in the kernel of every op with an `int_divisor:`
 * (remainder, div.trunc, div.floor): their integer loops
 * (core/intmath.h) cannot fail element by element, and C's integer
 * division by zero traps, so a 0 is refused here, with the position of
 * the first one, before anything is written.  A GPU's divisor is read
 * through a host copy, so both devices refuse it alike.
 */
#include <stdio.h>

#include "core/core.h"

/* The dtype the inputs promote to, and whether it is int64 or int32. */
static bool integer_compute(const yg_tensor *const *inputs, int n_inputs, yg_dtype *out)
{
    yg_dtype d = inputs[0]->dtype;

    for (int i = 0; i < n_inputs; i++) {
        if (inputs[i] == NULL)
            return false;
        if (i > 0)
            d = yg__promote_types(d, inputs[i]->dtype);
    }
    *out = d;
    return d == YG_INT64 || d == YG_INT32;
}

yg_status yg__check_int_divisor(const char *op,
                                const yg_tensor *const *inputs,
                                int n_inputs,
                                int divisor,
                                const char *name)
{
    yg_dtype compute;

    if (!integer_compute(inputs, n_inputs, &compute))
        return YG_OK;
    const yg_tensor *t = inputs[divisor];
    int64_t n = yg__sizes_product(t->sizes, t->ndim);
    if (n <= 0)
        return YG_OK;
    if (t->storage->device != YG_CPU) { /* a GPU's divisor: its host copy */
        yg_tensor *host = NULL;
        const yg_tensor *copy[4] = {NULL}; /* a pointwise op's inputs, at most 4 */
        if (n_inputs > 4)
            return yg__fail(YG_ERR_INTERNAL, "%s: %d inputs to a divisor check", op, n_inputs);
        YG_RETURN_IF_ERROR(yg_tensor_to_device(t, YG_CPU, 0, &host));
        for (int i = 0; i < n_inputs; i++)
            copy[i] = i == divisor ? host : inputs[i];
        yg_status st = yg__check_int_divisor(op, copy, n_inputs, divisor, name);
        yg_release(host);
        return st;
    }
    /* Walk every element (any strides: a broadcast or transposed divisor)
     * with an odometer over the index; n > 0, so the offsets stay inside
     * the storage (core/sizes.h). */
    int64_t index[YG_MAX_DIMS] = {0};
    const char *base = yg__tensor_ptr(t);
    size_t elem = yg_dtype_size(t->dtype);
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0;
        for (int32_t d = 0; d < t->ndim; d++)
            off += index[d] * t->strides[d];
        if (yg__load_f64(base + off * (int64_t)elem, t->dtype) == 0.0) {
            char at[256];
            yg__format_sizes(index, t->ndim, at, sizeof at);
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s: integer division by zero: %s holds a 0 (at %s; the inputs "
                            "are %s)",
                            op,
                            name,
                            at,
                            yg_dtype_name(compute));
        }
        for (int32_t d = t->ndim - 1; d >= 0; d--) {
            if (++index[d] < t->sizes[d])
                break;
            index[d] = 0;
        }
    }
    return YG_OK;
}

yg_status yg__check_int_divisor_scalar(const char *op,
                                       const yg_tensor *const *inputs,
                                       int n_inputs,
                                       double divisor,
                                       const char *name)
{
    yg_dtype compute;

    if (!integer_compute(inputs, n_inputs, &compute) || divisor != 0.0)
        return YG_OK;
    return yg__fail(YG_ERR_INVALID_ARGUMENT,
                    "%s: integer division by zero: %s is 0 (the input is %s)",
                    op,
                    name,
                    yg_dtype_name(compute));
}
