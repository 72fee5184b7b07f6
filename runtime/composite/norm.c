/*
 * composite/norm.c - batch_norm, written with other ops.
 *
 * input is [N, C, *] (1-d, 2-d or 3-d positions, or none); each channel is
 * normalized over N and the positions.  Training uses the batch mean and
 * the biased variance (correction 0) and, when running_mean and
 * running_var are given, moves them towards the batch statistics:
 *   running = (1 - momentum) running + momentum batch
 * with the unbiased variance (count / (count - 1) times the biased one),
 * as PyTorch does.  Evaluation normalizes with the running statistics.
 *
 * The output is built from differentiable ops (mean_dim, var, rsqrt,
 * sub, mul, add), so autograd differentiates it, twice if asked, with no
 * formula of its own.  The running statistics are state: the generated
 * wrapper refuses them when they require grad and bumps their versions;
 * here they are written last, with grad mode off, once the output exists,
 * so a failure leaves them unchanged.  An empty input (N or a position
 * dim 0) gives an empty output and leaves them unchanged too.
 *
 * As for every composite, messages of our own checks carry no op name (the
 * generated wrapper prefixes it).
 */
#include "composite/composite.h"
#include "yagrad/autograd.h"
#include "yagrad/ops.h"

#include <inttypes.h>
#include <stdio.h>

/* Fails unless t is NULL or has exactly the sizes [channels]. */
static yg_status check_channels(const char *name, const yg_tensor *t, const yg_tensor *input) {
    int64_t channels = yg_tensor_size(input, 1);
    char tbuf[128], ibuf[128];

    if (t == NULL)
        return YG_OK;
    if (yg_tensor_ndim(t) != 1 || yg_tensor_size(t, 0) != channels)
        return yg__fail(YG_ERR_SHAPE,
                        "expected %s of sizes [%" PRId64 "] (the channels of input %s), got %s",
                        name,
                        channels,
                        yg_tensor_format_sizes(input, ibuf, sizeof ibuf),
                        yg_tensor_format_sizes(t, tbuf, sizeof tbuf));
    return YG_OK;
}

/* (1 - momentum) running + momentum * scale * batch, batch reshaped to
 * running's sizes; computed with grad mode off by the caller. */
static yg_status moved(const yg_tensor *running,
                       const yg_tensor *batch,
                       double momentum,
                       double scale,
                       yg_tensor **out) {
    yg_tensor *flat = NULL, *kept = NULL;
    yg_status st;

    *out = NULL;
    st = yg_reshape(batch, yg_tensor_sizes(running), 1, &flat);
    if (st == YG_OK)
        st = yg_mul_scalar(running, 1 - momentum, &kept);
    if (st == YG_OK)
        st = yg_add(kept, flat, momentum * scale, out);
    yg_release(flat);
    yg_release(kept);
    return st;
}

/* Writes the moved running statistics (grad mode off), both computed
 * before either is written. */
static yg_status update_running(yg_tensor *running_mean,
                                yg_tensor *running_var,
                                const yg_tensor *mean,
                                const yg_tensor *var,
                                double momentum,
                                int64_t count) {
    yg_tensor *new_mean = NULL, *new_var = NULL, *r1 = NULL, *r2 = NULL;
    bool prev = yg_set_grad_enabled(false);
    yg_status st;

    st = moved(running_mean, mean, momentum, 1, &new_mean);
    if (st == YG_OK)
        st = moved(running_var, var, momentum, (double)count / (double)(count - 1), &new_var);
    if (st == YG_OK)
        st = yg_copy_(running_mean, new_mean, &r1);
    if (st == YG_OK)
        st = yg_copy_(running_var, new_var, &r2);
    yg_set_grad_enabled(prev);
    yg_release(new_mean);
    yg_release(new_var);
    yg_release(r1);
    yg_release(r2);
    return st;
}

yg_status yg__composite_batch_norm(const yg_tensor *input,
                                   const yg_tensor *weight,
                                   const yg_tensor *bias,
                                   yg_tensor *running_mean,
                                   yg_tensor *running_var,
                                   bool training,
                                   double momentum,
                                   double eps,
                                   yg_tensor **out) {
    int64_t nd = yg_tensor_ndim(input), dims[YG_MAX_DIMS], n_dims = 0, affine[YG_MAX_DIMS];
    yg_tensor *mean = NULL, *var = NULL, *ve = NULL, *inv = NULL, *cen = NULL, *xhat = NULL;
    yg_tensor *w = NULL, *b = NULL, *scaled = NULL, *res = NULL;
    char ibuf[128];
    yg_status st;

    *out = NULL;
    if (nd < 2 || nd > 5)
        return yg__fail(YG_ERR_SHAPE,
                        "expected input of 2 to 5 dims [N, C, *], got %s",
                        yg_tensor_format_sizes(input, ibuf, sizeof ibuf));
    YG_RETURN_IF_ERROR(check_channels("weight", weight, input));
    YG_RETURN_IF_ERROR(check_channels("bias", bias, input));
    YG_RETURN_IF_ERROR(check_channels("running_mean", running_mean, input));
    YG_RETURN_IF_ERROR(check_channels("running_var", running_var, input));
    if ((running_mean == NULL) != (running_var == NULL))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "running_mean and running_var must be given together (got only %s)",
                        running_mean != NULL ? "running_mean" : "running_var");
    int64_t channels = yg_tensor_size(input, 1);
    int64_t count = channels > 0 ? yg_tensor_numel(input) / channels : 0;
    if (training && count == 1)
        return yg__fail(YG_ERR_SHAPE,
                        "expected more than 1 value per channel when training, got input %s",
                        yg_tensor_format_sizes(input, ibuf, sizeof ibuf));
    if (!training && running_mean == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "running_mean and running_var are required when not training");
    /* [1, C, 1, ...]: per-channel values broadcast over N and positions */
    for (int64_t d = 0; d < nd; d++) {
        affine[d] = d == 1 ? channels : 1;
        if (d != 1)
            dims[n_dims++] = d;
    }
    if (training) {
        st = yg_mean_dim(input, dims, n_dims, true, &mean);
        if (st == YG_OK)
            st = yg_var(input, dims, n_dims, 0, true, &var);
    } else {
        st = yg_reshape(running_mean, affine, nd, &mean);
        if (st == YG_OK)
            st = yg_reshape(running_var, affine, nd, &var);
    }
    if (st == YG_OK)
        st = yg_add_scalar(var, eps, 1, &ve);
    if (st == YG_OK)
        st = yg_rsqrt(ve, &inv);
    if (st == YG_OK)
        st = yg_sub(input, mean, 1, &cen);
    if (st == YG_OK)
        st = yg_mul(cen, inv, &xhat);
    if (st == YG_OK && weight != NULL)
        st = yg_reshape(weight, affine, nd, &w);
    if (st == YG_OK && bias != NULL)
        st = yg_reshape(bias, affine, nd, &b);
    if (st == YG_OK && w != NULL)
        st = yg_mul(xhat, w, &scaled);
    if (st == YG_OK) {
        yg_tensor *y = scaled != NULL ? scaled : xhat;
        if (b != NULL)
            st = yg_add(y, b, 1, &res);
        else
            res = yg_retain(y);
    }
    if (st == YG_OK && training && running_mean != NULL && count > 0)
        st = update_running(running_mean, running_var, mean, var, momentum, count);
    if (st == YG_OK) {
        *out = res;
        res = NULL;
    }
    yg_release(mean);
    yg_release(var);
    yg_release(ve);
    yg_release(inv);
    yg_release(cen);
    yg_release(xhat);
    yg_release(w);
    yg_release(b);
    yg_release(scaled);
    yg_release(res);
    return st;
}
