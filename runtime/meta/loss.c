/*
 * meta/loss.c - the meta functions of nll_loss and its backward
 * (meta/meta.h): their checks, every target's range among them, and
 * their result, for every device.
 */
#include "decls/losses.h"
#include "meta/meta.h"

#include "core/core.h"
#include "yagrad/enums.h"

#include <inttypes.h>
#include <stdio.h>

/* Checks what nll_loss and its backward share: the target's
 * dtype and shape against self's sizes, and every target's range.  On
 * success *batch is N (1 for a [C] self) and *classes is C. */
static yg_status nll_check(const char *op,
                           const yg_tensor *target,
                           const int64_t *self_sizes,
                           int64_t self_ndim,
                           int64_t ignore_index,
                           int64_t *batch,
                           int64_t *classes) {
    char sbuf[128], tbuf[128];

    if (self_ndim != 1 && self_ndim != 2)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected self of 1 or 2 dims ([C] or [N, C]), got %s",
                        op,
                        yg__format_sizes(self_sizes, self_ndim, sbuf, sizeof sbuf));
    if (target->dtype != YG_INT64)
        return yg__fail(YG_ERR_DTYPE,
                        "%s: expected target of dtype int64, got %s",
                        op,
                        yg_dtype_name(target->dtype));
    *batch = self_ndim == 2 ? self_sizes[0] : 1;
    *classes = self_sizes[self_ndim - 1];
    bool ok = self_ndim == 2 ? target->ndim == 1 && target->sizes[0] == *batch : target->ndim == 0;
    if (!ok)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: target %s does not match self %s (expected %s)",
                        op,
                        yg__format_sizes(target->sizes, target->ndim, tbuf, sizeof tbuf),
                        yg__format_sizes(self_sizes, self_ndim, sbuf, sizeof sbuf),
                        self_ndim == 2 ? "[N] for self [N, C]" : "a 0-dim target for self [C]");
    /* Targets are read with their strides (a target is rarely a view, but
     * one may be); a GPU's through a host copy, so the kernels never see a
     * bad one. */
    yg_tensor *host = NULL;
    YG_RETURN_IF_ERROR(yg_tensor_to_device(target, YG_CPU, 0, &host));
    const char *tp = yg__tensor_ptr(host);
    int64_t tstride = host->ndim == 1 ? host->strides[0] : 0;
    yg_status st = YG_OK;
    for (int64_t i = 0; i < *batch && st == YG_OK; i++) {
        int64_t t = ((const int64_t *)tp)[i * tstride];
        if (t != ignore_index && (t < 0 || t >= *classes))
            st = yg__fail(YG_ERR_INDEX,
                          "%s: target %" PRId64 " is out of bounds for %" PRId64 " classes",
                          op,
                          t,
                          *classes);
    }
    yg_release(host);
    return st;
}

/* Checks nll_loss's optional class weights: NULL, or a [classes] tensor
 * of the given dtype (self's, or grad_output's in the backward). */
static yg_status
nll_check_weight(const char *op, const yg_tensor *weight, int64_t classes, yg_dtype dtype) {
    char wbuf[128];

    if (weight == NULL)
        return YG_OK;
    if (weight->dtype != dtype)
        return yg__fail(YG_ERR_DTYPE,
                        "%s: weight of dtype %s does not match self of dtype %s",
                        op,
                        yg_dtype_name(weight->dtype),
                        yg_dtype_name(dtype));
    if (weight->ndim != 1 || weight->sizes[0] != classes)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected weight of shape [%" PRId64 "] (one per class), got %s",
                        op,
                        classes,
                        yg__format_sizes(weight->sizes, weight->ndim, wbuf, sizeof wbuf));
    return YG_OK;
}

yg_status yg__meta_nll_loss(const yg_tensor *self,
                            const yg_tensor *target,
                            const yg_tensor *weight,
                            int64_t reduction,
                            int64_t ignore_index,
                            yg_tensor **out) {
    int64_t batch, classes;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_floating("nll_loss", "self", self));
    YG_RETURN_IF_ERROR(nll_check(
        "nll_loss", target, self->sizes, self->ndim, ignore_index, &batch, &classes));
    YG_RETURN_IF_ERROR(nll_check_weight("nll_loss", weight, classes, self->dtype));
    return yg__tensor_new_on("nll_loss",
                             self->sizes,
                             reduction == YG_REDUCTION_NONE ? self->ndim - 1 : 0,
                             self->dtype,
                             self->storage->device,
                             self->storage->device_index,
                             out);
}

yg_status yg__meta_nll_loss_backward(const yg_tensor *grad_output,
                                     const yg_tensor *target,
                                     const yg_tensor *weight,
                                     const int64_t *self_sizes,
                                     int64_t self_sizes_len,
                                     int64_t reduction,
                                     int64_t ignore_index,
                                     yg_tensor **out) {
    int64_t batch, classes;
    char gbuf[128];

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_floating("nll_loss_backward", "grad_output", grad_output));
    if (self_sizes_len > 0 && self_sizes == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "nll_loss_backward: self_sizes is NULL");
    YG_RETURN_IF_ERROR(nll_check("nll_loss_backward",
                                 target,
                                 self_sizes,
                                 self_sizes_len,
                                 ignore_index,
                                 &batch,
                                 &classes));
    YG_RETURN_IF_ERROR(nll_check_weight("nll_loss_backward", weight, classes, grad_output->dtype));
    int64_t go_numel = yg_tensor_numel(grad_output);
    int64_t want = reduction == YG_REDUCTION_NONE ? batch : 1;
    if (go_numel != want ||
        (reduction == YG_REDUCTION_NONE && grad_output->ndim != self_sizes_len - 1))
        return yg__fail(YG_ERR_SHAPE,
                        "nll_loss_backward: grad_output %s does not match %" PRId64
                        " losses of reduction %" PRId64,
                        yg__format_sizes(grad_output->sizes, grad_output->ndim, gbuf, sizeof gbuf),
                        want,
                        reduction);
    return yg__tensor_zeros_on("nll_loss_backward",
                               self_sizes,
                               self_sizes_len,
                               grad_output->dtype,
                               grad_output->storage->device,
                               grad_output->storage->device_index,
                               out);
}
