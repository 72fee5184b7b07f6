/*
 * nn.c - the classification-loss kernels: softmax and log_softmax over any
 * dim, log_softmax's backward, nll_loss and its backward (float32 and
 * float64).
 *
 * log_softmax is computed stably, x - max - log(sum(exp(x - max))) (and
 * softmax as exp(x - max) / sum(exp(x - max))), so large logits do not
 * overflow.  Inputs are first made contiguous (a shared reference when
 * they already are), and the reduced dim is then addressed as the middle
 * of an [outer, dim, inner] block, which covers every dim without
 * transposing anything; the loops themselves are cpu/vec/softmax.c,
 * compiled per CPU capability.
 *
 * nll_loss takes log-probabilities self [N, C] (or [C] with a 0-dim
 * target), int64 class indices and optional class weights [C] (of self's
 * dtype; all ones when NULL): sample i adds -weight[t] self[i, t] with
 * t = target[i].  Targets equal to ignore_index add nothing and, for
 * reduction "mean", which divides by the sum of weight[t] over the other
 * samples, are not counted.  Every target is
 * checked against the class count before anything is computed, so a bad
 * label fails with YG_ERR_INDEX instead of reading out of bounds.
 *
 * Every kernel here serves both devices: on a GPU the same checks run
 * (targets through a host copy) and cuda/softmax.cu and cuda/nll.cu
 * compute.
 */
#include "cpu/cpu_int.h"
#include "cuda/backend.h"
#include "cpu/vec/kernels.h"
#include "yagrad/enums.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* softmax and log_softmax on the CPU: structured, so the checks and the
 * contiguous result out are meta/softmax.c's (meta/meta.h). */
static yg_status
softmax_cpu(const char *op, const yg_tensor *self, int64_t dim, bool is_log, yg_tensor *out) {
    yg_tensor *x = NULL;
    int64_t d, outer, n, inner;

    YG_RETURN_IF_ERROR(yg__wrap_dim(op, "self", dim, self->ndim, &d));
    YG_RETURN_IF_ERROR(yg__tensor_contiguous_as(self, self->dtype, true, &x));
    yg__sizes_split(x->sizes, x->ndim, d, &outer, &n, &inner);
    if (outer * n * inner > 0)
        yg__vec()->softmax[self->dtype == YG_FLOAT64](
            yg__tensor_ptr(out), yg__tensor_ptr(x), outer, n, inner, is_log);
    yg_release(x);
    return YG_OK;
}

yg_status yg__cpu_log_softmax_out(const yg_tensor *self, int64_t dim, yg_tensor *out) {
    return softmax_cpu("log_softmax", self, dim, true, out);
}

yg_status yg__cpu_softmax_out(const yg_tensor *self, int64_t dim, yg_tensor *out) {
    return softmax_cpu("softmax", self, dim, false, out);
}

/* The backward of softmax (is_log false) and log_softmax. */
static yg_status softmax_backward_like(const char *op,
                                       const yg_tensor *grad_output,
                                       const yg_tensor *output,
                                       int64_t dim,
                                       bool is_log,
                                       yg_tensor **out) {
    yg_tensor *go = NULL, *y = NULL, *res = NULL;
    int64_t d, outer, n, inner;
    char gbuf[128], obuf[128];
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_floating(op, "grad_output", grad_output));
    YG_RETURN_IF_ERROR(yg__check_floating(op, "output", output));
    if (grad_output->dtype != output->dtype)
        return yg__fail(YG_ERR_DTYPE,
                        "%s: dtype mismatch: grad_output %s, output %s",
                        op,
                        yg_dtype_name(grad_output->dtype),
                        yg_dtype_name(output->dtype));
    if (grad_output->ndim != output->ndim ||
        memcmp(grad_output->sizes, output->sizes, sizeof(int64_t) * (size_t)output->ndim) != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: shape mismatch: grad_output %s, output %s",
                        op,
                        yg__format_sizes(grad_output->sizes, grad_output->ndim, gbuf, sizeof gbuf),
                        yg__format_sizes(output->sizes, output->ndim, obuf, sizeof obuf));
    YG_RETURN_IF_ERROR(yg__wrap_dim(op, "output", dim, output->ndim, &d));
    st = yg__tensor_contiguous_as(grad_output, grad_output->dtype, true, &go);
    if (st != YG_OK)
        goto out;
    st = yg__tensor_contiguous_as(output, output->dtype, true, &y);
    if (st != YG_OK)
        goto out;
    st = yg__tensor_empty_like(output, output->dtype, &res);
    if (st != YG_OK)
        goto out;
    yg__sizes_split(y->sizes, y->ndim, d, &outer, &n, &inner);
    if (outer * n * inner > 0 && y->storage->device == YG_CUDA)
        st = yg__cuda()->softmax(op, y->storage->device_index, output->dtype == YG_FLOAT64,
                              yg__tensor_ptr(res), yg__tensor_ptr(go), yg__tensor_ptr(y), outer,
                              n, inner, is_log, true);
    else if (outer * n * inner > 0)
        yg__vec()->softmax_backward[output->dtype == YG_FLOAT64](
            yg__tensor_ptr(res), yg__tensor_ptr(go), yg__tensor_ptr(y), outer, n, inner, is_log);
    if (st != YG_OK)
        goto out;
    *out = res;
    res = NULL;
out:
    yg_release(go);
    yg_release(y);
    yg_release(res);
    return st;
}

yg_status yg__kernel_log_softmax_backward(const yg_tensor *grad_output,
                                       const yg_tensor *output,
                                       int64_t dim,
                                       yg_tensor **out) {
    return softmax_backward_like("log_softmax_backward", grad_output, output, dim, true, out);
}

yg_status yg__kernel_softmax_backward(const yg_tensor *grad_output,
                                   const yg_tensor *output,
                                   int64_t dim,
                                   yg_tensor **out) {
    return softmax_backward_like("softmax_backward", grad_output, output, dim, false, out);
}

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

/* weight[c] of a (possibly strided) [C] weight, 1 when there is none. */
static double weight_at(const yg_tensor *weight, int64_t c) {
    if (weight == NULL)
        return 1.0;
    const char *p = yg__tensor_ptr(weight);
    int64_t off = c * weight->strides[0];
    if (weight->dtype == YG_FLOAT32)
        return ((const float *)p)[off];
    return ((const double *)p)[off];
}

static int64_t target_at(const yg_tensor *target, int64_t i) {
    int64_t stride = target->ndim == 1 ? target->strides[0] : 0;
    return ((const int64_t *)yg__tensor_ptr(target))[i * stride];
}

/* Reads element (n, c) of a (possibly strided) 1-D or 2-D floating tensor. */
static double load2(const yg_tensor *t, int64_t n, int64_t c) {
    int64_t off = t->ndim == 2 ? n * t->strides[0] + c * t->strides[1] : c * t->strides[0];
    const char *p = yg__tensor_ptr(t);
    if (t->dtype == YG_FLOAT32)
        return ((const float *)p)[off];
    return ((const double *)p)[off];
}

static void store(yg_tensor *t, int64_t i, double v) {
    if (t->dtype == YG_FLOAT32)
        ((float *)yg__tensor_ptr(t))[i] = (float)v;
    else
        ((double *)yg__tensor_ptr(t))[i] = v;
}

yg_status yg__kernel_nll_loss(const yg_tensor *self,
                           const yg_tensor *target,
                           const yg_tensor *weight,
                           int64_t reduction,
                           int64_t ignore_index,
                           yg_tensor **out) {
    yg_tensor *res = NULL;
    int64_t batch, classes;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_floating("nll_loss", "self", self));
    YG_RETURN_IF_ERROR(nll_check(
        "nll_loss", target, self->sizes, self->ndim, ignore_index, &batch, &classes));
    YG_RETURN_IF_ERROR(nll_check_weight("nll_loss", weight, classes, self->dtype));
    if (self->storage->device == YG_CUDA) {
        int64_t ndim = reduction == YG_REDUCTION_NONE ? self->ndim - 1 : 0;
        st = yg__tensor_new_on(
            "nll_loss", self->sizes, ndim, self->dtype, YG_CUDA, self->storage->device_index, &res);
        if (st == YG_OK && yg_tensor_numel(res) > 0)
            st = yg__cuda()->nll("nll_loss", self->storage->device_index, self->dtype == YG_FLOAT64,
                              false, yg__tensor_ptr(self), self->ndim == 2 ? self->strides[0] : 0,
                              self->strides[self->ndim - 1],
                              (const int64_t *)yg__tensor_ptr(target),
                              target->ndim == 1 ? target->strides[0] : 0,
                              weight != NULL ? yg__tensor_ptr(weight) : NULL,
                              weight != NULL ? weight->strides[0] : 0, batch, classes,
                              ignore_index, reduction, yg__tensor_ptr(res));
        if (st != YG_OK) {
            yg_release(res);
            return st;
        }
        *out = res;
        return YG_OK;
    }
    if (reduction == YG_REDUCTION_NONE) {
        st = yg_tensor_empty(self->sizes, self->ndim - 1, self->dtype, &res);
        if (st != YG_OK)
            return st;
        for (int64_t i = 0; i < batch; i++) {
            int64_t t = target_at(target, i);
            store(res, i, t == ignore_index ? 0.0 : -weight_at(weight, t) * load2(self, i, t));
        }
        *out = res;
        return YG_OK;
    }
    double total = 0, total_weight = 0;
    for (int64_t i = 0; i < batch; i++) {
        int64_t t = target_at(target, i);
        if (t == ignore_index)
            continue;
        double w = weight_at(weight, t);
        total -= w * load2(self, i, t);
        total_weight += w;
    }
    /* A mean over no counted target (or weights summing to 0) is 0/0 =
     * NaN, as in PyTorch. */
    double value = reduction == YG_REDUCTION_MEAN ? total / total_weight : total;
    st = yg_tensor_empty(NULL, 0, self->dtype, &res);
    if (st != YG_OK)
        return st;
    store(res, 0, value);
    *out = res;
    return YG_OK;
}

yg_status yg__kernel_nll_loss_backward(const yg_tensor *grad_output,
                                    const yg_tensor *target,
                                    const yg_tensor *weight,
                                    const int64_t *self_sizes,
                                    int64_t self_sizes_len,
                                    int64_t reduction,
                                    int64_t ignore_index,
                                    yg_tensor **out) {
    yg_tensor *res = NULL;
    int64_t batch, classes;
    double total_weight = 0;
    char gbuf[128];
    yg_status st;

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
    st = yg__full_on("nll_loss_backward", self_sizes, self_sizes_len, grad_output->dtype,
                     grad_output->storage->device, grad_output->storage->device_index, 0.0, &res);
    if (st != YG_OK)
        return st;
    if (grad_output->storage->device == YG_CUDA) {
        if (batch > 0)
            st = yg__cuda()->nll("nll_loss_backward", grad_output->storage->device_index,
                              grad_output->dtype == YG_FLOAT64, true, yg__tensor_ptr(grad_output),
                              grad_output->ndim == 1 ? grad_output->strides[0] : 0, 0,
                              (const int64_t *)yg__tensor_ptr(target),
                              target->ndim == 1 ? target->strides[0] : 0,
                              weight != NULL ? yg__tensor_ptr(weight) : NULL,
                              weight != NULL ? weight->strides[0] : 0, batch, classes,
                              ignore_index, reduction, yg__tensor_ptr(res));
        if (st != YG_OK) {
            yg_release(res);
            return st;
        }
        *out = res;
        return YG_OK;
    }
    for (int64_t i = 0; i < batch; i++) {
        int64_t t = target_at(target, i);
        if (t != ignore_index)
            total_weight += weight_at(weight, t);
    }
    const char *gp = yg__tensor_ptr(grad_output);
    int64_t gstride = grad_output->ndim == 1 ? grad_output->strides[0] : 0;
    for (int64_t i = 0; i < batch; i++) {
        int64_t t = target_at(target, i);
        if (t == ignore_index)
            continue;
        int64_t gi = reduction == YG_REDUCTION_NONE ? i * gstride : 0;
        double g =
            grad_output->dtype == YG_FLOAT32 ? ((const float *)gp)[gi] : ((const double *)gp)[gi];
        /* Mean divides by the total weight, as the forward does (NaN in
         * every counted slot when that is 0). */
        if (reduction == YG_REDUCTION_MEAN)
            g /= total_weight;
        store(res, i * classes + t, -weight_at(weight, t) * g);
    }
    *out = res;
    return YG_OK;
}
