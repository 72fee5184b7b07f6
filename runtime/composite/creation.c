/*
 * composite/creation.c - creation ops shaped like a tensor (zeros_like,
 * ones_like, full_like, empty_like, rand_like, randn_like) and dropout.
 *
 * A *_like op is its plain op called with self's sizes; dtype and device
 * default to self's.  It reads only self's metadata, so self may require
 * grad and the result never does.
 *
 * dropout(input, p, train) is input * mask / (1 - p) with mask drawn by
 * bernoulli(input, 1 - p): autograd differentiates the product (the mask
 * is a constant), so the gradient is grad * mask / (1 - p) without a
 * formula of its own, and a generator seeded alike gives the same mask
 * again (which is how it is gradchecked).  With train false or p 0 it
 * returns a copy of input (clone, so the result is differentiable and
 * writing it leaves input alone); with p 1 it returns input * 0 and draws
 * nothing.
 *
 * As for every composite, messages of our own checks carry no op name (the
 * generated wrapper prefixes it); errors of the inner ops pass through with
 * their own names.
 */
#include "composite/composite.h"
#include "decls/creation.h"
#include "decls/random.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_creation.h"
#include "yagrad/ops_random.h"
#include "yagrad/ops_views.h"

static const yg_dtype *dtype_or(const yg_dtype *dtype, const yg_tensor *self)
{
    return dtype != NULL ? dtype : &self->dtype;
}

static const yg_device *device_or(const yg_device *device, const yg_tensor *self)
{
    return device != NULL ? device : &self->storage->device;
}

yg_status yg__composite_zeros_like(const yg_tensor *self,
                                   const yg_dtype *dtype,
                                   const yg_device *device,
                                   yg_tensor **out)
{
    return yg_zeros(self->sizes, self->ndim, dtype_or(dtype, self), device_or(device, self), out);
}

yg_status yg__composite_ones_like(const yg_tensor *self,
                                  const yg_dtype *dtype,
                                  const yg_device *device,
                                  yg_tensor **out)
{
    return yg_ones(self->sizes, self->ndim, dtype_or(dtype, self), device_or(device, self), out);
}

yg_status yg__composite_full_like(const yg_tensor *self,
                                  double fill_value,
                                  const yg_dtype *dtype,
                                  const yg_device *device,
                                  yg_tensor **out)
{
    return yg_full(self->sizes, self->ndim, fill_value, dtype_or(dtype, self),
                   device_or(device, self), out);
}

yg_status yg__composite_empty_like(const yg_tensor *self,
                                   const yg_dtype *dtype,
                                   const yg_device *device,
                                   yg_tensor **out)
{
    return yg_empty(self->sizes, self->ndim, dtype_or(dtype, self), device_or(device, self), out);
}

yg_status yg__composite_rand_like(const yg_tensor *self,
                                  yg_generator *generator,
                                  const yg_dtype *dtype,
                                  const yg_device *device,
                                  yg_tensor **out)
{
    return yg_rand(self->sizes, self->ndim, generator, dtype_or(dtype, self),
                   device_or(device, self), out);
}

yg_status yg__composite_randn_like(const yg_tensor *self,
                                   yg_generator *generator,
                                   const yg_dtype *dtype,
                                   const yg_device *device,
                                   yg_tensor **out)
{
    return yg_randn(self->sizes, self->ndim, generator, dtype_or(dtype, self),
                    device_or(device, self), out);
}

yg_status yg__composite_dropout(const yg_tensor *input,
                                double p,
                                bool train,
                                yg_generator *generator,
                                yg_tensor **out)
{
    yg_tensor *mask = NULL, *scaled = NULL;
    yg_status st;

    *out = NULL;
    if (!(p >= 0.0 && p <= 1.0))
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "p %g is outside [0, 1]", p);
    if (!yg__dtype_is_floating(input->dtype))
        return yg__fail(YG_ERR_DTYPE,
                        "unsupported dtype %s for input (expected float32 or float64)",
                        yg_dtype_name(input->dtype));
    if (!train || p == 0.0)
        return yg_clone(input, out);
    if (p == 1.0)
        return yg_mul_scalar(input, 0.0, out);
    st = yg_bernoulli_p(input, 1.0 - p, generator, &mask);
    if (st != YG_OK)
        goto out;
    st = yg_mul_scalar(mask, 1.0 / (1.0 - p), &scaled);
    if (st != YG_OK)
        goto out;
    st = yg_mul(input, scaled, out);
out:
    yg_release(scaled);
    yg_release(mask);
    return st;
}
