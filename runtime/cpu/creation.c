/*
 * creation.c - ops that make a tensor from nothing but their arguments:
 * zeros, ones, full, empty, arange, linspace and eye.
 *
 * Default dtypes follow PyTorch where C can tell: float32 for fills,
 * linspace and eye; arange gives int64 when start, end and step are all
 * integers (PyTorch decides from the Python types; a C double carries no
 * type, so integral values stand in for ints) and float32 otherwise.  full
 * always defaults to float32 for the same reason (PyTorch infers int64 for
 * an int fill value).
 *
 * Every value is computed in double and converted to the result dtype;
 * conversion to int64 truncates toward zero and is refused, with a
 * message, for values outside int64's range (the C conversion would be
 * undefined).  The generated wrapper has already picked the device (only
 * the CPU has kernels), so the device arguments are unused here.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "cpu/cpu_int.h"
#include "decls/creation.h"
#include "decls/inplace_fill.h"

yg_status yg__creation_check_value(const char *op, const char *name, double v, yg_dtype dtype)
{
    /* int64 holds [-2^63, 2^63); doubles outside it (and NaN) have no
     * int64 value. */
    if (dtype == YG_INT64 && !(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: %s %g is out of range for int64", op, name,
                        v);
    return YG_OK;
}

static yg_status fill(const char *op,
                      const int64_t *size,
                      int64_t size_len,
                      double value,
                      const yg_dtype *dtype,
                      const yg_device *device,
                      yg_tensor **out)
{
    yg_dtype dt;
    yg_tensor *t = NULL, *same = NULL;

    YG_RETURN_IF_ERROR(yg__creation_dtype(op, dtype, YG_FLOAT32, &dt));
    YG_RETURN_IF_ERROR(yg__creation_check_value(op, "fill_value", value, dt));
    YG_RETURN_IF_ERROR(yg__creation_empty_on(
        op, size, size_len, dt, device != NULL ? *device : YG_CPU, &t));
    if (t->storage->device != YG_CPU) { /* cuda/copy.cu's fill loop */
        yg_status st = yg__kernel_fill_(t, value, &same);
        yg_release(same);
        if (st != YG_OK) {
            yg_release(t);
            return yg__fail_prefix(st, op);
        }
        *out = t;
        return YG_OK;
    }
    int64_t n = yg_tensor_numel(t);
    if (value == 0 && !signbit(value)) {
        /* All-zero bytes are 0 in every dtype. */
        memset(yg__tensor_ptr(t), 0, (size_t)n * yg_dtype_size(dt));
    } else {
        for (int64_t i = 0; i < n; i++)
            yg__store_f64(t, i, value);
    }
    *out = t;
    return YG_OK;
}

yg_status yg__kernel_zeros(const int64_t *size,
                        int64_t size_len,
                        const yg_dtype *dtype,
                        const yg_device *device,
                        yg_tensor **out)
{
    return fill("zeros", size, size_len, 0.0, dtype, device, out);
}

yg_status yg__kernel_ones(const int64_t *size,
                       int64_t size_len,
                       const yg_dtype *dtype,
                       const yg_device *device,
                       yg_tensor **out)
{
    return fill("ones", size, size_len, 1.0, dtype, device, out);
}

yg_status yg__kernel_full(const int64_t *size,
                       int64_t size_len,
                       double fill_value,
                       const yg_dtype *dtype,
                       const yg_device *device,
                       yg_tensor **out)
{
    return fill("full", size, size_len, fill_value, dtype, device, out);
}

yg_status yg__kernel_empty(const int64_t *size,
                        int64_t size_len,
                        const yg_dtype *dtype,
                        const yg_device *device,
                        yg_tensor **out)
{
    yg_dtype dt;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__creation_dtype("empty", dtype, YG_FLOAT32, &dt));
    return yg__creation_empty_on(
        "empty", size, size_len, dt, device != NULL ? *device : YG_CPU, out);
}

static bool is_integral(double v)
{
    return isfinite(v) && floor(v) == v;
}

/* arange's length: ceil((end - start) / step), as PyTorch computes it. */
static yg_status arange_length(double start, double end, double step, int64_t *n)
{
    if (!isfinite(start) || !isfinite(end) || !isfinite(step))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "arange: start %g, end %g and step %g must be finite", start, end, step);
    if (step == 0)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "arange: step must be nonzero");
    if ((step > 0 && end < start) || (step < 0 && end > start))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "arange: start %g and end %g are inconsistent with the sign of step %g",
                        start, end, step);
    double len = ceil((end - start) / step);
    if (!(len < 4611686018427387904.0)) /* 2^62: far beyond memory, and exact */
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "arange: start %g, end %g, step %g give too many elements", start, end,
                        step);
    *n = (int64_t)len;
    return YG_OK;
}

/* t, made on the host, moved to *device when that is a GPU (*out: the
 * result either way; t is released).  arange, linspace and eye compute
 * their few values on the host: one copy, no kernel. */
static yg_status on_device(const char *op, const yg_device *device, yg_tensor *t, yg_tensor **out)
{
    if (device == NULL || *device == YG_CPU) {
        *out = t;
        return YG_OK;
    }
    yg_status st = yg_tensor_to_device(t, *device, 0, out);
    yg_release(t);
    return st == YG_OK ? YG_OK : yg__fail_prefix(st, op);
}

yg_status yg__kernel_arange_start(double start,
                               double end,
                               double step,
                               const yg_dtype *dtype,
                               const yg_device *device,
                               yg_tensor **out)
{
    yg_dtype dt;
    yg_tensor *t = NULL;
    int64_t n = 0;

    *out = NULL;
    yg_dtype dflt = is_integral(start) && is_integral(end) && is_integral(step) ? YG_INT64
                                                                               : YG_FLOAT32;
    YG_RETURN_IF_ERROR(yg__creation_dtype("arange", dtype, dflt, &dt));
    YG_RETURN_IF_ERROR(arange_length(start, end, step, &n));
    YG_RETURN_IF_ERROR(yg__creation_check_value("arange", "start", start, dt));
    YG_RETURN_IF_ERROR(yg__creation_check_value("arange", "end", end, dt));
    YG_RETURN_IF_ERROR(yg__creation_empty("arange", &n, 1, dt, &t));
    for (int64_t i = 0; i < n; i++)
        yg__store_f64(t, i, start + (double)i * step);
    return on_device("arange", device, t, out);
}

yg_status yg__kernel_arange(double end, const yg_dtype *dtype, const yg_device *device, yg_tensor **out)
{
    return yg__kernel_arange_start(0.0, end, 1.0, dtype, device, out);
}

yg_status yg__kernel_linspace(double start,
                           double end,
                           int64_t steps,
                           const yg_dtype *dtype,
                           const yg_device *device,
                           yg_tensor **out)
{
    yg_dtype dt;
    yg_tensor *t = NULL;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__creation_dtype("linspace", dtype, YG_FLOAT32, &dt));
    if (steps < 0)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "linspace: steps %" PRId64 " must be >= 0",
                        steps);
    YG_RETURN_IF_ERROR(yg__creation_check_value("linspace", "start", start, dt));
    YG_RETURN_IF_ERROR(yg__creation_check_value("linspace", "end", end, dt));
    YG_RETURN_IF_ERROR(yg__creation_empty("linspace", &steps, 1, dt, &t));
    /* PyTorch's symmetric form: the first half counts up from start, the
     * second half down from end, so both ends are exact.  One step is
     * start alone. */
    double step = steps > 1 ? (end - start) / (double)(steps - 1) : 0.0;
    for (int64_t i = 0; i < steps; i++)
        yg__store_f64(t, i, i < steps / 2 || steps == 1 ? start + (double)i * step
                                                         : end - (double)(steps - 1 - i) * step);
    return on_device("linspace", device, t, out);
}

yg_status yg__kernel_eye_m(int64_t n,
                        int64_t m,
                        const yg_dtype *dtype,
                        const yg_device *device,
                        yg_tensor **out)
{
    yg_dtype dt;
    yg_tensor *t = NULL;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__creation_dtype("eye", dtype, YG_FLOAT32, &dt));
    if (n < 0 || m < 0)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "eye: n %" PRId64 " and m %" PRId64 " must be >= 0", n, m);
    const int64_t size[2] = {n, m};
    YG_RETURN_IF_ERROR(yg__creation_empty("eye", size, 2, dt, &t));
    memset(yg__tensor_ptr(t), 0, (size_t)(n * m) * yg_dtype_size(dt));
    for (int64_t i = 0; i < n && i < m; i++)
        yg__store_f64(t, i * m + i, 1.0);
    return on_device("eye", device, t, out);
}

yg_status yg__kernel_eye(int64_t n, const yg_dtype *dtype, const yg_device *device, yg_tensor **out)
{
    return yg__kernel_eye_m(n, n, dtype, device, out);
}

yg_status yg__full_on(const char *op,
                      const int64_t *sizes,
                      int64_t ndim,
                      yg_dtype dtype,
                      yg_device device,
                      int32_t device_index,
                      double value,
                      yg_tensor **out)
{
    yg_tensor *t = NULL, *same = NULL;
    *out = NULL;
    YG_RETURN_IF_ERROR(yg__tensor_new_on(op, sizes, ndim, dtype, device, device_index, &t));
    yg_status st = yg__kernel_fill_(t, value, &same);
    yg_release(same);
    if (st != YG_OK) {
        yg_release(t);
        return yg__fail_prefix(st, op);
    }
    *out = t;
    return YG_OK;
}
