/*
 * adam.c - one Adam or AdamW update (yagrad/optim.h gives the formulas):
 * for contiguous float parameters in one fused pass (cpu/vec/optim_loops.c,
 * the same arithmetic), otherwise with the public in-place ops.  Called by
 * yg_optimizer_step with grad mode off.
 *
 * The bias corrections use the parameter's own step count, so a parameter
 * that had no gradient for a while is corrected for the steps it actually
 * took.  The denominator is computed as sqrt(v) / sqrt(1 - beta2^t) + eps
 * (PyTorch's order), not sqrt(v / (1 - beta2^t)) + eps: the two differ
 * where eps matters.
 */
#include "cpu/vec/kernels.h"
#include "optim/optim_int.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_inplace_arithmetic.h"
#include "yagrad/ops_unary_math.h"

#include <math.h>

/* The one-pass update of cpu/vec/optim_loops.c, when it applies. */
static yg_status adam_fused(yg_optimizer *opt, yg_param_state *ps, const yg_tensor *g) {
    const yg_adam_options *o = &opt->adam;
    const yg_tensor *p = ps->param;
    int64_t t = ps->steps + 1;

    if (ps->buf0 == NULL)
        YG_RETURN_IF_ERROR(yg_tensor_zeros(p->sizes, p->ndim, p->dtype, &ps->buf0));
    if (ps->buf1 == NULL)
        YG_RETURN_IF_ERROR(yg_tensor_zeros(p->sizes, p->ndim, p->dtype, &ps->buf1));
    yg_adam_step a = {.lr = o->lr,
                      .beta1 = o->beta1,
                      .beta2 = o->beta2,
                      .eps = o->eps,
                      .weight_decay = ps->weight_decay,
                      .grad_scale = opt->grad_scale,
                      .bc1 = 1 - pow(o->beta1, (double)t),
                      .bc2 = 1 - pow(o->beta2, (double)t),
                      .decoupled = opt->kind == YG_OPTIM_ADAMW};
    yg__vec()->adam_step[p->dtype == YG_FLOAT64](yg__tensor_ptr(p),
                                                 yg__tensor_ptr(g),
                                                 yg__tensor_ptr(ps->buf0),
                                                 yg__tensor_ptr(ps->buf1),
                                                 yg_tensor_numel(p),
                                                 &a);
    yg__tensor_bump_version(p);
    yg__tensor_bump_version(ps->buf0);
    yg__tensor_bump_version(ps->buf1);
    ps->steps = t;
    return YG_OK;
}

yg_status yg__adam_update(yg_optimizer *opt, yg_param_state *ps, const yg_tensor *g) {
    const yg_adam_options *o = &opt->adam;
    yg_tensor *d = NULL, *root = NULL, *denom = NULL, *tmp = NULL, *scaled = NULL;
    yg_status st = YG_OK;

    if (yg__optim_fusable(ps->param, g, ps->buf0, ps->buf1)) {
        st = adam_fused(opt, ps, g);
        return st == YG_OK ? st : yg__fail_prefix(st, opt->name);
    }
    if (opt->grad_scale != 1) {
        st = yg_mul_scalar(g, opt->grad_scale, &scaled);
        if (st != YG_OK)
            goto out;
        g = scaled;
    }

    if (opt->kind == YG_OPTIM_ADAM && ps->weight_decay != 0)
        st = yg_add(g, ps->param, ps->weight_decay, &d);
    else
        d = yg_retain((yg_tensor *)g);
    if (st == YG_OK && opt->kind == YG_OPTIM_ADAMW && ps->weight_decay != 0) {
        st = yg_mul_scalar_(ps->param, 1 - o->lr * ps->weight_decay, &tmp);
        yg_release(tmp);
        tmp = NULL;
    }
    if (st == YG_OK && ps->buf0 == NULL)
        st = yg_tensor_zeros(ps->param->sizes, ps->param->ndim, ps->param->dtype, &ps->buf0);
    if (st == YG_OK && ps->buf1 == NULL)
        st = yg_tensor_zeros(ps->param->sizes, ps->param->ndim, ps->param->dtype, &ps->buf1);
    if (st != YG_OK)
        goto out;
    int64_t t = ps->steps + 1;
    double bc1 = 1 - pow(o->beta1, (double)t), bc2 = 1 - pow(o->beta2, (double)t);
    /* m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2 */
    st = yg_lerp_scalar_(ps->buf0, d, 1 - o->beta1, &tmp);
    yg_release(tmp);
    tmp = NULL;
    if (st == YG_OK)
        st = yg_mul_scalar_(ps->buf1, o->beta2, &tmp);
    yg_release(tmp);
    tmp = NULL;
    if (st == YG_OK)
        st = yg_addcmul_(ps->buf1, d, d, 1 - o->beta2, &tmp);
    yg_release(tmp);
    tmp = NULL;
    /* p -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps) */
    if (st == YG_OK)
        st = yg_sqrt(ps->buf1, &root);
    if (st == YG_OK)
        st = yg_div_scalar(root, sqrt(bc2), &denom);
    if (st == YG_OK)
        st = yg_add_scalar_(denom, o->eps, 1, &tmp);
    yg_release(tmp);
    tmp = NULL;
    if (st == YG_OK)
        st = yg_addcdiv_(ps->param, ps->buf0, denom, -o->lr / bc1, &tmp);
    if (st == YG_OK)
        ps->steps = t;
out:
    /* A failure partway leaves this parameter's moments updated without
     * the parameter: that is the documented partial-update case. */
    if (st != YG_OK)
        st = yg__fail_prefix(st, opt->name);
    yg_release(d);
    yg_release(root);
    yg_release(denom);
    yg_release(tmp);
    yg_release(scaled);
    return st;
}
