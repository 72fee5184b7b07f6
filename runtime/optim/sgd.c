/*
 * sgd.c - one SGD update (yagrad/optim.h gives the formulas), in one
 * fused pass or with the public in-place ops.  Called by yg_optimizer_step with grad mode
 * off.
 *
 * Contiguous float parameters take the fused one-pass update of
 * cpu/vec/optim_loops.c (same arithmetic); others the ops.
 *
 * The momentum buffer starts as a copy of the first (decayed) gradient,
 * as in PyTorch, rather than as zeros: with dampening d the first step
 * would otherwise move by (1 - d) times less than later ones.
 */
#include "cpu/vec/kernels.h"
#include "optim/optim_int.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_inplace_arithmetic.h"
#include "yagrad/ops_views.h"

/* The one-pass update of cpu/vec/optim_loops.c, when it applies. */
static yg_status sgd_fused(yg_optimizer *opt, yg_param_state *ps, const yg_tensor *g) {
    const yg_sgd_options *o = &opt->sgd;
    yg_sgd_step a = {.lr = o->lr,
                     .momentum = o->momentum,
                     .dampening = o->dampening,
                     .weight_decay = ps->weight_decay,
                      .grad_scale = opt->grad_scale,
                     .nesterov = o->nesterov,
                     .first = ps->buf0 == NULL};

    if (o->momentum != 0 && ps->buf0 == NULL)
        YG_RETURN_IF_ERROR(
            yg_tensor_empty(ps->param->sizes, ps->param->ndim, ps->param->dtype, &ps->buf0));
    void *buf = o->momentum != 0 ? yg__tensor_ptr(ps->buf0) : NULL;
    yg__vec()->sgd_step[ps->param->dtype == YG_FLOAT64](
        yg__tensor_ptr(ps->param), yg__tensor_ptr(g), buf, yg_tensor_numel(ps->param), &a);
    yg__tensor_bump_version(ps->param);
    if (buf != NULL)
        yg__tensor_bump_version(ps->buf0);
    ps->steps++;
    return YG_OK;
}

yg_status yg__sgd_update(yg_optimizer *opt, yg_param_state *ps, const yg_tensor *g) {
    const yg_sgd_options *o = &opt->sgd;
    yg_tensor *d = NULL, *step = NULL, *tmp = NULL, *scaled = NULL;
    yg_status st = YG_OK;

    if (yg__optim_fusable(ps->param, g, ps->buf0, NULL)) {
        st = sgd_fused(opt, ps, g);
        return st == YG_OK ? st : yg__fail_prefix(st, opt->name);
    }
    if (opt->grad_scale != 1) {
        st = yg_mul_scalar(g, opt->grad_scale, &scaled);
        if (st != YG_OK)
            goto out;
        g = scaled;
    }

    /* d = g + weight_decay * p (a new tensor: .grad is not modified). */
    if (ps->weight_decay != 0)
        st = yg_add(g, ps->param, ps->weight_decay, &d);
    else
        d = yg_retain((yg_tensor *)g);
    if (st != YG_OK)
        goto out;
    if (o->momentum != 0) {
        if (ps->buf0 == NULL) {
            st = yg_clone(d, &ps->buf0);
        } else {
            st = yg_mul_scalar_(ps->buf0, o->momentum, &tmp);
            yg_release(tmp);
            tmp = NULL;
            if (st == YG_OK)
                st = yg_add_(ps->buf0, d, 1 - o->dampening, &tmp);
        }
        if (st != YG_OK)
            goto out;
        if (o->nesterov)
            st = yg_add(d, ps->buf0, o->momentum, &step);
        else
            step = yg_retain(ps->buf0);
    } else {
        step = yg_retain(d);
    }
    if (st != YG_OK)
        goto out;
    yg_release(tmp);
    tmp = NULL;
    st = yg_add_(ps->param, step, -o->lr, &tmp);
    if (st == YG_OK)
        ps->steps++;
out:
    if (st != YG_OK)
        st = yg__fail_prefix(st, opt->name);
    yg_release(d);
    yg_release(step);
    yg_release(tmp);
    yg_release(scaled);
    return st;
}
