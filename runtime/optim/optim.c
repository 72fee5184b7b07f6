/*
 * optim.c - the optimizer object of yagrad/optim.h: creation (option and
 * parameter checks), the step loop, zero_grad, the learning rate, release.
 * The update rules live in sgd.c and adam.c.
 *
 * step turns grad mode off for its duration, so every in-place update
 * runs on parameters that require grad without being recorded (the
 * generated in-place ops refuse such inputs only while grad mode is on),
 * and restores the caller's mode on every path.
 */
#include "optim/optim_int.h"
#include "yagrad/autograd.h"
#include "yagrad/ops_views.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

bool yg__optim_fusable(const yg_tensor *p,
                       const yg_tensor *g,
                       const yg_tensor *b0,
                       const yg_tensor *b1) {
    const yg_tensor *ts[4] = {p, g, b0, b1};

    for (int i = 0; i < 4; i++) {
        const yg_tensor *t = ts[i];
        if (t == NULL)
            continue;
        if (t->storage->device != YG_CPU || t->dtype != p->dtype || !yg_tensor_is_contiguous(t))
            return false;
    }
    return p->dtype == YG_FLOAT32 || p->dtype == YG_FLOAT64;
}

yg_adam_options yg_adam_options_default(void) {
    return (yg_adam_options){
        .lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0};
}

/* "name: what must be non-negative, got v" unless v >= 0 (NaN fails). */
static yg_status check_nonneg(const char *name, const char *what, double v) {
    if (!(v >= 0))
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "%s: %s must be non-negative, got %g", name, what, v);
    return YG_OK;
}

static yg_status check_beta(const char *name, const char *what, double v) {
    if (!(v >= 0 && v < 1))
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: %s must be in [0, 1), got %g", name, what, v);
    return YG_OK;
}

static yg_status check_params(const char *name, yg_tensor *const *params, int64_t n) {
    if (n < 0 || (n > 0 && params == NULL))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: params is NULL or params_len %" PRId64 " is negative",
                        name,
                        n);
    for (int64_t i = 0; i < n; i++) {
        const yg_tensor *p = params[i];
        if (p == NULL)
            return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: parameter %" PRId64 " is NULL", name, i);
        if (!yg__dtype_is_floating(p->dtype))
            return yg__fail(YG_ERR_DTYPE,
                            "%s: parameter %" PRId64 " has dtype %s (expected float32 or float64)",
                            name,
                            i,
                            yg_dtype_name(p->dtype));
        if (!yg_tensor_is_leaf(p))
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s: parameter %" PRId64 " is not a leaf (it has a grad_fn)",
                            name,
                            i);
        for (int64_t j = 0; j < i; j++)
            if (params[j] == p)
                return yg__fail(YG_ERR_INVALID_ARGUMENT,
                                "%s: parameter %" PRId64 " is parameter %" PRId64 " again",
                                name,
                                i,
                                j);
    }
    return YG_OK;
}

static yg_status create(yg_optim_kind kind,
                        const char *name,
                        yg_tensor *const *params,
                        int64_t n,
                        yg_optimizer **out) {
    yg_optimizer *opt;

    YG_RETURN_IF_ERROR(check_params(name, params, n));
    opt = calloc(1, sizeof *opt);
    if (opt != NULL && n > 0)
        opt->params = calloc((size_t)n, sizeof *opt->params);
    if (opt == NULL || (n > 0 && opt->params == NULL)) {
        free(opt);
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
    }
    opt->kind = kind;
    opt->name = name;
    opt->grad_scale = 1;
    opt->n_params = n;
    for (int64_t i = 0; i < n; i++)
        opt->params[i].param = yg_retain(params[i]);
    *out = opt;
    return YG_OK;
}

yg_status yg_optimizer_create_sgd(yg_tensor *const *params,
                                  int64_t params_len,
                                  const yg_sgd_options *options,
                                  yg_optimizer **out) {
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "sgd: out-parameter out is NULL");
    *out = NULL;
    if (options == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "sgd: options is NULL");
    YG_RETURN_IF_ERROR(check_nonneg("sgd", "lr", options->lr));
    YG_RETURN_IF_ERROR(check_nonneg("sgd", "momentum", options->momentum));
    YG_RETURN_IF_ERROR(check_nonneg("sgd", "dampening", options->dampening));
    YG_RETURN_IF_ERROR(check_nonneg("sgd", "weight_decay", options->weight_decay));
    if (options->nesterov && (options->momentum <= 0 || options->dampening != 0))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "sgd: nesterov needs momentum > 0 and dampening 0, got momentum %g, "
                        "dampening %g",
                        options->momentum,
                        options->dampening);
    YG_RETURN_IF_ERROR(create(YG_OPTIM_SGD, "sgd", params, params_len, out));
    (*out)->sgd = *options;
    for (int64_t i = 0; i < params_len; i++)
        (*out)->params[i].weight_decay = options->weight_decay;
    return YG_OK;
}

static yg_status create_adam(yg_optim_kind kind,
                             const char *name,
                             yg_tensor *const *params,
                             int64_t params_len,
                             const yg_adam_options *options,
                             yg_optimizer **out) {
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: out-parameter out is NULL", name);
    *out = NULL;
    if (options == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: options is NULL", name);
    YG_RETURN_IF_ERROR(check_nonneg(name, "lr", options->lr));
    YG_RETURN_IF_ERROR(check_beta(name, "beta1", options->beta1));
    YG_RETURN_IF_ERROR(check_beta(name, "beta2", options->beta2));
    YG_RETURN_IF_ERROR(check_nonneg(name, "eps", options->eps));
    YG_RETURN_IF_ERROR(check_nonneg(name, "weight_decay", options->weight_decay));
    YG_RETURN_IF_ERROR(create(kind, name, params, params_len, out));
    (*out)->adam = *options;
    for (int64_t i = 0; i < params_len; i++)
        (*out)->params[i].weight_decay = options->weight_decay;
    return YG_OK;
}

yg_status yg_optimizer_create_adam(yg_tensor *const *params,
                                   int64_t params_len,
                                   const yg_adam_options *options,
                                   yg_optimizer **out) {
    return create_adam(YG_OPTIM_ADAM, "adam", params, params_len, options, out);
}

yg_status yg_optimizer_create_adamw(yg_tensor *const *params,
                                    int64_t params_len,
                                    const yg_adam_options *options,
                                    yg_optimizer **out) {
    return create_adam(YG_OPTIM_ADAMW, "adamw", params, params_len, options, out);
}

/* Fails unless g has p's sizes and dtype. */
static yg_status
check_grad(const yg_optimizer *opt, int64_t i, const yg_tensor *p, const yg_tensor *g) {
    char pbuf[128], gbuf[128];
    bool same = p->ndim == g->ndim;
    for (int32_t d = 0; same && d < p->ndim; d++)
        same = p->sizes[d] == g->sizes[d];
    if (!same)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: gradient %s of parameter %" PRId64 " does not match its sizes %s",
                        opt->name,
                        yg__format_sizes(g->sizes, g->ndim, gbuf, sizeof gbuf),
                        i,
                        yg__format_sizes(p->sizes, p->ndim, pbuf, sizeof pbuf));
    if (g->dtype != p->dtype)
        return yg__fail(YG_ERR_DTYPE,
                        "%s: gradient of parameter %" PRId64 " has dtype %s, the parameter %s",
                        opt->name,
                        i,
                        yg_dtype_name(g->dtype),
                        yg_dtype_name(p->dtype));
    return YG_OK;
}

yg_status yg_optimizer_step(yg_optimizer *opt) {
    yg_status st = YG_OK;

    if (opt == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "optimizer_step: opt is NULL");
    bool prev = yg_set_grad_enabled(false);
    for (int64_t i = 0; i < opt->n_params && st == YG_OK; i++) {
        yg_param_state *ps = &opt->params[i];
        yg_tensor *g = NULL;
        st = yg_tensor_grad(ps->param, &g);
        if (st != YG_OK || g == NULL)
            continue;
        st = check_grad(opt, i, ps->param, g);
        if (st == YG_OK)
            st = opt->kind == YG_OPTIM_SGD ? yg__sgd_update(opt, ps, g)
                                           : yg__adam_update(opt, ps, g);
        yg_release(g);
    }
    yg_set_grad_enabled(prev);
    return st;
}

void yg_optimizer_zero_grad(yg_optimizer *opt) {
    if (opt == NULL)
        return;
    for (int64_t i = 0; i < opt->n_params; i++)
        yg_tensor_zero_grad(opt->params[i].param);
}

double yg_optimizer_lr(const yg_optimizer *opt) {
    if (opt == NULL)
        return 0;
    return opt->kind == YG_OPTIM_SGD ? opt->sgd.lr : opt->adam.lr;
}

yg_status yg_optimizer_set_lr(yg_optimizer *opt, double lr) {
    if (opt == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "optimizer_set_lr: opt is NULL");
    YG_RETURN_IF_ERROR(check_nonneg(opt->name, "lr", lr));
    if (opt->kind == YG_OPTIM_SGD)
        opt->sgd.lr = lr;
    else
        opt->adam.lr = lr;
    return YG_OK;
}

yg_status yg_optimizer_set_grad_scale(yg_optimizer *opt, double scale) {
    if (opt == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "optimizer_set_grad_scale: opt is NULL");
    if (!(scale > 0) || !isfinite(scale))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: grad_scale must be positive and finite, got %g",
                        opt->name,
                        scale);
    opt->grad_scale = scale;
    return YG_OK;
}

double yg_optimizer_grad_scale(const yg_optimizer *opt) {
    return opt != NULL ? opt->grad_scale : 0;
}

/* Fails unless opt is not NULL and i names one of its parameters. */
static yg_status check_index(const yg_optimizer *opt, const char *fn, int64_t i) {
    if (opt == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: opt is NULL", fn);
    if (i < 0 || i >= opt->n_params)
        return yg__fail(YG_ERR_INDEX,
                        "%s: parameter %" PRId64 " of %s's %" PRId64,
                        fn,
                        i,
                        opt->name,
                        opt->n_params);
    return YG_OK;
}

yg_status yg_optimizer_set_param_weight_decay(yg_optimizer *opt, int64_t i, double weight_decay) {
    YG_RETURN_IF_ERROR(check_index(opt, "optimizer_set_param_weight_decay", i));
    YG_RETURN_IF_ERROR(check_nonneg(opt->name, "weight_decay", weight_decay));
    opt->params[i].weight_decay = weight_decay;
    return YG_OK;
}

int yg_optimizer_state_names(const yg_optimizer *opt, const char **names) {
    if (opt == NULL)
        return 0;
    if (opt->kind == YG_OPTIM_SGD) {
        names[0] = "momentum_buffer";
        return 1;
    }
    names[0] = "exp_avg";
    names[1] = "exp_avg_sq";
    return 2;
}

yg_status yg_optimizer_get_state(const yg_optimizer *opt, int64_t i, int64_t *steps, yg_tensor **state) {
    const char *names[2];
    *steps = 0;
    state[0] = state[1] = NULL;
    YG_RETURN_IF_ERROR(check_index(opt, "optimizer_get_state", i));
    const yg_param_state *ps = &opt->params[i];
    int n = yg_optimizer_state_names(opt, names);
    *steps = ps->steps;
    state[0] = ps->buf0 != NULL ? yg_retain(ps->buf0) : NULL;
    if (n > 1)
        state[1] = ps->buf1 != NULL ? yg_retain(ps->buf1) : NULL;
    return YG_OK;
}

yg_status yg_optimizer_set_state(yg_optimizer *opt, int64_t i, int64_t steps, const yg_tensor *const *state) {
    const char *names[2];
    yg_tensor *copy[2] = {NULL, NULL};
    char pbuf[128], sbuf[128];
    yg_status st = YG_OK;

    YG_RETURN_IF_ERROR(check_index(opt, "optimizer_set_state", i));
    yg_param_state *ps = &opt->params[i];
    int n = yg_optimizer_state_names(opt, names);
    if (steps < 0)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: set_state: negative step count %" PRId64 " for parameter %" PRId64,
                        opt->name,
                        steps,
                        i);
    for (int k = 0; k < n && st == YG_OK; k++) {
        const yg_tensor *s = state[k];
        if (s == NULL)
            continue;
        bool same = s->ndim == ps->param->ndim && s->dtype == ps->param->dtype;
        for (int32_t d = 0; same && d < s->ndim; d++)
            same = s->sizes[d] == ps->param->sizes[d];
        if (!same) {
            st = yg__fail(YG_ERR_SHAPE,
                          "%s: set_state: %s of parameter %" PRId64 " is %s %s, the parameter %s %s",
                          opt->name,
                          names[k],
                          i,
                          yg_dtype_name(s->dtype),
                          yg__format_sizes(s->sizes, s->ndim, sbuf, sizeof sbuf),
                          yg_dtype_name(ps->param->dtype),
                          yg__format_sizes(ps->param->sizes, ps->param->ndim, pbuf, sizeof pbuf));
            break;
        }
        bool prev = yg_set_grad_enabled(false);
        st = yg_clone(s, &copy[k]);
        yg_set_grad_enabled(prev);
    }
    if (st != YG_OK) {
        yg_release(copy[0]);
        yg_release(copy[1]);
        return st;
    }
    yg_release(ps->buf0);
    yg_release(ps->buf1);
    ps->buf0 = copy[0];
    ps->buf1 = copy[1];
    ps->steps = steps;
    return YG_OK;
}

void yg_optimizer_release(yg_optimizer *opt) {
    if (opt == NULL)
        return;
    for (int64_t i = 0; i < opt->n_params; i++) {
        yg_release(opt->params[i].param);
        yg_release(opt->params[i].buf0);
        yg_release(opt->params[i].buf1);
    }
    free(opt->params);
    free(opt);
}
