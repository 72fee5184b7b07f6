/*
 * composite/loss.c - the regression and classification losses written
 * with other ops (mse_loss, l1_loss, smooth_l1_loss, binary_cross_entropy,
 * binary_cross_entropy_with_logits, cross_entropy), so that autograd
 * differentiates them, twice if asked, through their parts.
 *
 * Every loss computes its per-element values and then applies reduction
 * (0 none, 1 mean, 2 sum, as PyTorch's Reduction enum).
 * binary_cross_entropy_with_logits uses softplus(-x) = log(1 + exp(-x))
 * for the log-sigmoid terms: it neither overflows for large |x| (softplus
 * switches to the identity past its threshold) nor has a kink at x = 0,
 * where the max(-x, 0) + log1p(exp(-|x|)) spelling would give abs and relu
 * a subgradient and the wrong derivative.
 *
 * As for every composite, messages of our own checks carry no op name (the
 * generated wrapper prefixes it); errors of the inner ops pass through with
 * their own names.
 */
#include "composite/composite.h"
#include "decls/losses.h"
#include "yagrad/ops_activations.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_blend.h"
#include "yagrad/ops_comparison.h"
#include "yagrad/ops_losses.h"
#include "yagrad/ops_rounding.h"
#include "yagrad/ops_softmax.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_unary_math.h"
#include "yagrad/ops_views.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Applies reduction to the per-element losses (consumed: released here).
 * On success *out is a new reference. */
static yg_status reduce_loss(yg_tensor *loss, int64_t reduction, yg_tensor **out) {
    yg_status st;

    /* reduction was checked by the generated entry point. */
    switch (reduction) {
    case YG_REDUCTION_NONE:
        *out = loss;
        return YG_OK;
    case YG_REDUCTION_MEAN:
        st = yg_mean(loss, out);
        break;
    default:
        st = yg_sum(loss, out);
        break;
    }
    yg_release(loss);
    return st;
}

/* loss times weight when weight is given (loss consumed). */
static yg_status weighted(yg_tensor *loss, const yg_tensor *weight, yg_tensor **out) {
    yg_status st;

    if (weight == NULL) {
        *out = loss;
        return YG_OK;
    }
    st = yg_mul(loss, weight, out);
    yg_release(loss);
    return st;
}

yg_status yg__composite_mse_loss(const yg_tensor *self,
                                 const yg_tensor *target,
                                 int64_t reduction,
                                 yg_tensor **out) {
    yg_tensor *d = NULL, *sq = NULL;
    yg_status st;

    *out = NULL;
    st = yg_sub(self, target, 1, &d);
    if (st == YG_OK)
        st = yg_mul(d, d, &sq);
    yg_release(d);
    if (st != YG_OK)
        return st;
    return reduce_loss(sq, reduction, out);
}

yg_status yg__composite_l1_loss(const yg_tensor *self,
                                const yg_tensor *target,
                                int64_t reduction,
                                yg_tensor **out) {
    yg_tensor *d = NULL, *a = NULL;
    yg_status st;

    *out = NULL;
    st = yg_sub(self, target, 1, &d);
    if (st == YG_OK)
        st = yg_abs(d, &a);
    yg_release(d);
    if (st != YG_OK)
        return st;
    return reduce_loss(a, reduction, out);
}

yg_status yg__composite_smooth_l1_loss(const yg_tensor *self,
                                       const yg_tensor *target,
                                       int64_t reduction,
                                       double beta,
                                       yg_tensor **out) {
    yg_tensor *d = NULL, *a = NULL, *mask = NULL, *sq = NULL, *quad = NULL, *lin = NULL;
    yg_tensor *loss = NULL;
    yg_status st;

    *out = NULL;
    if (!(beta >= 0))
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "beta must be non-negative, got %g", beta);
    if (beta == 0)
        return yg__composite_l1_loss(self, target, reduction, out);
    st = yg_sub(self, target, 1, &d);
    if (st == YG_OK)
        st = yg_abs(d, &a);
    if (st == YG_OK)
        st = yg_lt_scalar(a, beta, &mask);
    if (st == YG_OK)
        st = yg_mul(d, d, &sq);
    if (st == YG_OK)
        st = yg_mul_scalar(sq, 0.5 / beta, &quad);
    if (st == YG_OK)
        st = yg_sub_scalar(a, 0.5 * beta, 1, &lin);
    if (st == YG_OK)
        st = yg_where(mask, quad, lin, &loss);
    yg_release(d);
    yg_release(a);
    yg_release(mask);
    yg_release(sq);
    yg_release(quad);
    yg_release(lin);
    if (st != YG_OK)
        return st;
    return reduce_loss(loss, reduction, out);
}

yg_status yg__composite_binary_cross_entropy(const yg_tensor *self,
                                             const yg_tensor *target,
                                             const yg_tensor *weight,
                                             int64_t reduction,
                                             yg_tensor **out) {
    yg_tensor *logx = NULL, *log1mx = NULL, *onem = NULL, *lx = NULL, *l1mx = NULL;
    yg_tensor *pos = NULL, *negt = NULL, *neg = NULL, *sum = NULL, *loss = NULL;
    yg_status st;

    *out = NULL;
    /* -(t log x + (1 - t) log(1 - x)), logs clamped at -100 */
    st = yg_log(self, &logx);
    if (st == YG_OK)
        st = yg_clamp_min(logx, -100, &lx);
    if (st == YG_OK)
        st = yg_rsub_scalar(self, 1, 1, &onem);
    if (st == YG_OK)
        st = yg_log(onem, &log1mx);
    if (st == YG_OK)
        st = yg_clamp_min(log1mx, -100, &l1mx);
    if (st == YG_OK)
        st = yg_mul(target, lx, &pos);
    if (st == YG_OK)
        st = yg_rsub_scalar(target, 1, 1, &negt);
    if (st == YG_OK)
        st = yg_mul(negt, l1mx, &neg);
    if (st == YG_OK)
        st = yg_add(pos, neg, 1, &sum);
    if (st == YG_OK)
        st = yg_neg(sum, &loss);
    yg_release(logx);
    yg_release(lx);
    yg_release(onem);
    yg_release(log1mx);
    yg_release(l1mx);
    yg_release(pos);
    yg_release(negt);
    yg_release(neg);
    yg_release(sum);
    if (st != YG_OK) {
        yg_release(loss);
        return st;
    }
    st = weighted(loss, weight, &loss);
    if (st != YG_OK)
        return st;
    return reduce_loss(loss, reduction, out);
}

yg_status yg__composite_binary_cross_entropy_with_logits(const yg_tensor *self,
                                                         const yg_tensor *target,
                                                         const yg_tensor *weight,
                                                         const yg_tensor *pos_weight,
                                                         int64_t reduction,
                                                         yg_tensor **out) {
    yg_tensor *negx = NULL, *sp = NULL, *onemt = NULL, *lin = NULL, *lw = NULL, *pwm1 = NULL;
    yg_tensor *scaled = NULL, *loss = NULL;
    yg_status st;

    *out = NULL;
    /* (1 - t) x + lw softplus(-x), lw = 1 + (pos_weight - 1) t */
    st = yg_neg(self, &negx);
    if (st == YG_OK)
        st = yg_softplus(negx, 1, 20, &sp);
    if (st == YG_OK)
        st = yg_rsub_scalar(target, 1, 1, &onemt);
    if (st == YG_OK)
        st = yg_mul(onemt, self, &lin);
    if (st == YG_OK && pos_weight != NULL) {
        st = yg_sub_scalar(pos_weight, 1, 1, &pwm1);
        if (st == YG_OK)
            st = yg_mul(pwm1, target, &lw);
        if (st == YG_OK) {
            yg_tensor *lw1 = NULL;
            st = yg_add_scalar(lw, 1, 1, &lw1);
            yg_release(lw);
            lw = lw1;
        }
        if (st == YG_OK)
            st = yg_mul(lw, sp, &scaled);
    }
    if (st == YG_OK)
        st = yg_add(lin, scaled != NULL ? scaled : sp, 1, &loss);
    yg_release(negx);
    yg_release(sp);
    yg_release(onemt);
    yg_release(lin);
    yg_release(lw);
    yg_release(pwm1);
    yg_release(scaled);
    if (st != YG_OK) {
        yg_release(loss);
        return st;
    }
    st = weighted(loss, weight, &loss);
    if (st != YG_OK)
        return st;
    return reduce_loss(loss, reduction, out);
}

/* Soft targets: -sum over the class dim of weight * target * log_softmax
 * (weight [C], if any, laid along the class dim); mean divides by the
 * number of samples, as in PyTorch. */
static yg_status cross_entropy_soft(const yg_tensor *lsm,
                                    const yg_tensor *target,
                                    const yg_tensor *weight,
                                    int64_t cdim,
                                    int64_t reduction,
                                    yg_tensor **out) {
    yg_tensor *prod = NULL, *wcol = NULL, *wprod = NULL, *summed = NULL, *loss = NULL;
    char sbuf[128], tbuf[128];
    yg_status st;

    if (yg_tensor_ndim(lsm) != yg_tensor_ndim(target) ||
        memcmp(yg_tensor_sizes(lsm),
               yg_tensor_sizes(target),
               sizeof(int64_t) * (size_t)yg_tensor_ndim(lsm)) != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "class-probability target %s must have the shape of self %s",
                        yg_tensor_format_sizes(target, tbuf, sizeof tbuf),
                        yg_tensor_format_sizes(lsm, sbuf, sizeof sbuf));
    st = yg_mul(target, lsm, &prod);
    if (st == YG_OK && weight != NULL) {
        /* weight as [C, 1, ...] so that it broadcasts along the class dim */
        int64_t ws[YG_MAX_DIMS], wn = yg_tensor_ndim(lsm) - cdim;
        ws[0] = yg_tensor_sizes(lsm)[cdim];
        for (int64_t d = 1; d < wn; d++)
            ws[d] = 1;
        st = yg_reshape(weight, ws, wn, &wcol);
        if (st == YG_OK)
            st = yg_mul(prod, wcol, &wprod);
    }
    if (st == YG_OK)
        st = yg_sum_dim(wprod != NULL ? wprod : prod, &cdim, 1, false, &summed);
    if (st == YG_OK)
        st = yg_neg(summed, &loss);
    yg_release(prod);
    yg_release(wcol);
    yg_release(wprod);
    yg_release(summed);
    if (st != YG_OK)
        return st;
    return reduce_loss(loss, reduction, out);
}

/* Class indices for self [N, C, d1, ...]: the class dim moved last and
 * everything else flattened into rows for nll_loss; reduction none gives
 * the losses back in target's shape. */
static yg_status cross_entropy_nd(const yg_tensor *lsm,
                                  const yg_tensor *target,
                                  const yg_tensor *weight,
                                  int64_t reduction,
                                  int64_t ignore_index,
                                  yg_tensor **out) {
    int64_t nd = yg_tensor_ndim(lsm), perm[YG_MAX_DIMS], rows = 1;
    int64_t classes = yg_tensor_sizes(lsm)[1];
    yg_tensor *moved = NULL, *flat = NULL, *tflat = NULL, *loss = NULL;
    yg_status st;

    perm[0] = 0;
    for (int64_t d = 2; d < nd; d++)
        perm[d - 1] = d;
    perm[nd - 1] = 1;
    for (int64_t d = 0; d < nd; d++)
        if (d != 1)
            rows *= yg_tensor_sizes(lsm)[d];
    const int64_t fs[2] = {rows, classes}, ts[1] = {rows};
    st = yg_permute(lsm, perm, nd, &moved);
    if (st == YG_OK)
        st = yg_reshape(moved, fs, 2, &flat);
    if (st == YG_OK)
        st = yg_reshape(target, ts, 1, &tflat);
    if (st == YG_OK)
        st = yg_nll_loss(
            flat, tflat, weight, reduction, ignore_index,
            reduction == YG_REDUCTION_NONE ? &loss : out);
    if (st == YG_OK && reduction == YG_REDUCTION_NONE)
        st = yg_reshape(loss, yg_tensor_sizes(target), yg_tensor_ndim(target), out);
    yg_release(moved);
    yg_release(flat);
    yg_release(tflat);
    yg_release(loss);
    return st;
}

yg_status yg__composite_cross_entropy(const yg_tensor *self,
                                      const yg_tensor *target,
                                      const yg_tensor *weight,
                                      int64_t reduction,
                                      int64_t ignore_index,
                                      yg_tensor **out) {
    int64_t nd = yg_tensor_ndim(self), cdim = nd == 1 ? 0 : 1;
    yg_tensor *lsm = NULL;
    char sbuf[128], tbuf[128], wbuf[128];
    yg_status st;

    *out = NULL;
    if (nd == 0)
        return yg__fail(YG_ERR_SHAPE, "expected self with a class dim, got a 0-dim self");
    if (weight != NULL && yg_tensor_dtype(weight) != yg_tensor_dtype(self))
        return yg__fail(YG_ERR_DTYPE,
                        "weight of dtype %s does not match self of dtype %s",
                        yg_dtype_name(yg_tensor_dtype(weight)),
                        yg_dtype_name(yg_tensor_dtype(self)));
    if (weight != NULL &&
        (yg_tensor_ndim(weight) != 1 || yg_tensor_sizes(weight)[0] != yg_tensor_sizes(self)[cdim]))
        return yg__fail(YG_ERR_SHAPE,
                        "expected weight of shape [%" PRId64 "] (one per class of self %s), got %s",
                        yg_tensor_sizes(self)[cdim],
                        yg_tensor_format_sizes(self, sbuf, sizeof sbuf),
                        yg_tensor_format_sizes(weight, wbuf, sizeof wbuf));
    bool soft = yg_tensor_dtype(target) == YG_FLOAT32 || yg_tensor_dtype(target) == YG_FLOAT64;
    if (!soft && nd > 2) {
        bool fits = yg_tensor_ndim(target) == nd - 1 &&
                    yg_tensor_sizes(target)[0] == yg_tensor_sizes(self)[0];
        for (int64_t d = 2; fits && d < nd; d++)
            fits = yg_tensor_sizes(target)[d - 1] == yg_tensor_sizes(self)[d];
        if (!fits)
            return yg__fail(YG_ERR_SHAPE,
                            "target %s does not match self %s without its class dim 1",
                            yg_tensor_format_sizes(target, tbuf, sizeof tbuf),
                            yg_tensor_format_sizes(self, sbuf, sizeof sbuf));
    }
    st = yg_log_softmax(self, cdim, &lsm);
    if (st != YG_OK)
        return st;
    if (soft)
        st = cross_entropy_soft(lsm, target, weight, cdim, reduction, out);
    else if (nd <= 2)
        st = yg_nll_loss(lsm, target, weight, reduction, ignore_index, out);
    else
        st = cross_entropy_nd(lsm, target, weight, reduction, ignore_index, out);
    yg_release(lsm);
    return st;
}
