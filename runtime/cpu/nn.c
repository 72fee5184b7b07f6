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
 * All are structured (meta/meta.h): the checks (targets through a host
 * copy) and the result are meta/softmax.c's and meta/loss.c's, which the
 * GPU's implementations (cuda/softmax.c, cuda/loss.c) share.
 */
#include "cpu/cpu_int.h"
#include "cpu/vec/kernels.h"
#include "decls/losses.h"
#include "decls/softmax.h"
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

/* The backward of softmax (is_log false) and log_softmax, structured:
 * the checks and the result out are meta/softmax.c's. */
static yg_status softmax_backward_cpu(const char *op,
                                      const yg_tensor *grad_output,
                                      const yg_tensor *output,
                                      int64_t dim,
                                      bool is_log,
                                      yg_tensor *out) {
    yg_tensor *go = NULL, *y = NULL;
    int64_t d, outer, n, inner;
    yg_status st;

    YG_RETURN_IF_ERROR(yg__wrap_dim(op, "output", dim, output->ndim, &d));
    st = yg__tensor_contiguous_as(grad_output, grad_output->dtype, true, &go);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(output, output->dtype, true, &y);
    if (st == YG_OK) {
        yg__sizes_split(y->sizes, y->ndim, d, &outer, &n, &inner);
        if (outer * n * inner > 0)
            yg__vec()->softmax_backward[output->dtype == YG_FLOAT64](yg__tensor_ptr(out),
                                                                     yg__tensor_ptr(go),
                                                                     yg__tensor_ptr(y),
                                                                     outer,
                                                                     n,
                                                                     inner,
                                                                     is_log);
    }
    yg_release(go);
    yg_release(y);
    return st;
}

yg_status yg__cpu_log_softmax_backward_out(const yg_tensor *grad_output,
                                           const yg_tensor *output,
                                           int64_t dim,
                                           yg_tensor *out) {
    return softmax_backward_cpu("log_softmax_backward", grad_output, output, dim, true, out);
}

yg_status yg__cpu_softmax_backward_fused_out(const yg_tensor *grad_output,
                                             const yg_tensor *output,
                                             int64_t dim,
                                             yg_tensor *out) {
    return softmax_backward_cpu("softmax_backward_fused", grad_output, output, dim, false, out);
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

/* nll_loss and its backward on the CPU: structured, so the checks and
 * the result out are meta/loss.c's (meta/meta.h). */
yg_status yg__cpu_nll_loss_out(const yg_tensor *self,
                               const yg_tensor *target,
                               const yg_tensor *weight,
                               int64_t reduction,
                               int64_t ignore_index,
                               yg_tensor *out) {
    int64_t batch = self->ndim == 2 ? self->sizes[0] : 1;

    if (reduction == YG_REDUCTION_NONE) {
        for (int64_t i = 0; i < batch; i++) {
            int64_t t = target_at(target, i);
            store(out, i, t == ignore_index ? 0.0 : -weight_at(weight, t) * load2(self, i, t));
        }
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
    store(out, 0, reduction == YG_REDUCTION_MEAN ? total / total_weight : total);
    return YG_OK;
}

yg_status yg__cpu_nll_loss_backward_out(const yg_tensor *grad_output,
                                        const yg_tensor *target,
                                        const yg_tensor *weight,
                                        const int64_t *self_sizes,
                                        int64_t self_sizes_len,
                                        int64_t reduction,
                                        int64_t ignore_index,
                                        yg_tensor *out) {
    int64_t batch = self_sizes_len == 2 ? self_sizes[0] : 1;
    int64_t classes = self_sizes[self_sizes_len - 1];
    double total_weight = 0;

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
        store(out, i * classes + t, -weight_at(weight, t) * g);
    }
    return YG_OK;
}
