/*
 * meta/random.c - the meta functions of the random ops (meta/meta.h):
 * rand, randn, randint, bernoulli.  Everything is checked here, before
 * an implementation reserves any counter of the generator, so a call
 * that fails leaves the generator untouched.
 */
#include "decls/random.h"
#include "meta/meta.h"

#include "core/core.h"
#include "meta/creation.h"

#include <inttypes.h>
#include <stdio.h>

static yg_status floating_dtype(const char *op, const yg_dtype *dtype, yg_dtype *out)
{
    YG_RETURN_IF_ERROR(yg__creation_dtype(op, dtype, YG_FLOAT32, out));
    if (!yg__dtype_is_floating(*out))
        return yg__fail(YG_ERR_DTYPE, "%s: unsupported dtype %s (expected float32 or float64)", op,
                        yg_dtype_name(*out));
    return YG_OK;
}

static yg_status random_result(const char *op,
                               const int64_t *size,
                               int64_t size_len,
                               const yg_dtype *dtype,
                               const yg_device *device,
                               yg_tensor **out)
{
    yg_dtype dt;

    *out = NULL;
    YG_RETURN_IF_ERROR(floating_dtype(op, dtype, &dt));
    return yg__creation_empty_on(op, size, size_len, dt, device != NULL ? *device : YG_CPU, out);
}

yg_status yg__meta_rand(const int64_t *size,
                        int64_t size_len,
                        yg_generator *generator,
                        const yg_dtype *dtype,
                        const yg_device *device,
                        yg_tensor **out)
{
    (void)generator;
    return random_result("rand", size, size_len, dtype, device, out);
}

yg_status yg__meta_randn(const int64_t *size,
                         int64_t size_len,
                         yg_generator *generator,
                         const yg_dtype *dtype,
                         const yg_device *device,
                         yg_tensor **out)
{
    (void)generator;
    return random_result("randn", size, size_len, dtype, device, out);
}

yg_status yg__meta_randint(int64_t low,
                           int64_t high,
                           const int64_t *size,
                           int64_t size_len,
                           yg_generator *generator,
                           const yg_dtype *dtype,
                           const yg_device *device,
                           yg_tensor **out)
{
    yg_dtype dt;

    (void)generator;
    *out = NULL;
    YG_RETURN_IF_ERROR(yg__creation_dtype("randint", dtype, YG_INT64, &dt));
    if (dt == YG_BOOL)
        return yg__fail(YG_ERR_DTYPE,
                        "randint: unsupported dtype bool (expected int64, float32 or float64)");
    if (low >= high)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "randint: low %" PRId64 " must be less than high %" PRId64, low, high);
    return yg__creation_empty_on("randint", size, size_len, dt,
                                 device != NULL ? *device : YG_CPU, out);
}

/* Every probability in [0, 1], read on a host copy. */
yg_status yg__meta_bernoulli(const yg_tensor *self, yg_generator *generator, yg_tensor **out)
{
    yg_tensor *probs = NULL, *host = NULL;
    yg_status st;

    (void)generator;
    *out = NULL;
    if (!yg__dtype_is_floating(self->dtype))
        return yg__fail(YG_ERR_DTYPE,
                        "bernoulli: unsupported dtype %s for self (expected float32 or float64 "
                        "probabilities)",
                        yg_dtype_name(self->dtype));
    YG_RETURN_IF_ERROR(yg__tensor_contiguous_as(self, YG_FLOAT64, true, &probs));
    st = yg_tensor_to_device(probs, YG_CPU, 0, &host);
    yg_release(probs);
    if (st != YG_OK)
        return st;
    const double *p = (const double *)yg__tensor_ptr(host);
    int64_t n = yg_tensor_numel(host);
    for (int64_t i = 0; i < n && st == YG_OK; i++)
        if (!(p[i] >= 0.0 && p[i] <= 1.0))
            st = yg__fail(YG_ERR_INVALID_ARGUMENT,
                          "bernoulli: probability %g at flat index %" PRId64
                          " of self is outside [0, 1]",
                          p[i], i);
    yg_release(host);
    if (st != YG_OK)
        return st;
    return yg__tensor_empty_like(self, self->dtype, out);
}

yg_status yg__meta_bernoulli_p(const yg_tensor *self,
                               double p,
                               yg_generator *generator,
                               yg_tensor **out)
{
    (void)generator;
    *out = NULL;
    if (!(p >= 0.0 && p <= 1.0))
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "bernoulli: p %g is outside [0, 1]", p);
    return yg__tensor_empty_like(self, self->dtype, out);
}
