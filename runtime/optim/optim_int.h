/*
 * optim_int.h - the optimizer object shared by optim.c (creation, step
 * loop, release) and the algorithms (sgd.c, adam.c).  Private to
 * runtime/optim/.
 */
#ifndef YAGRAD_OPTIM_INT_H
#define YAGRAD_OPTIM_INT_H

#include "core/core.h"
#include "yagrad/optim.h"

typedef enum yg_optim_kind { YG_OPTIM_SGD, YG_OPTIM_ADAM, YG_OPTIM_ADAMW } yg_optim_kind;

/* Per-parameter state; tensors are NULL until the first step that needs
 * them (and are never tracked by autograd). */
typedef struct yg_param_state {
    yg_tensor *param; /* retained */
    yg_tensor *buf0;  /* SGD: momentum buffer; Adam: first moment m */
    yg_tensor *buf1;  /* Adam: second moment v */
    int64_t steps;    /* updates applied to this parameter */
    double weight_decay; /* the options' until yg_optimizer_set_param_weight_decay */
} yg_param_state;

struct yg_optimizer {
    yg_optim_kind kind;
    const char *name; /* "sgd", "adam", "adamw": prefixes messages */
    yg_sgd_options sgd;
    yg_adam_options adam;
    yg_param_state *params;
    int64_t n_params;
    double grad_scale; /* yg_optimizer_set_grad_scale; 1 by default */
};

/* One update of p from grad g (both borrowed, g of p's shape and dtype),
 * with grad mode off.  Fail with a message naming opt->name. */
yg_status yg__sgd_update(yg_optimizer *opt, yg_param_state *ps, const yg_tensor *g);

/* Whether the fused one-pass update (cpu/vec/optim_loops.c) applies: p, g
 * and the state buffers (NULL ones are skipped) are contiguous CPU tensors
 * of one floating dtype.  Cannot fail. */
bool yg__optim_fusable(const yg_tensor *p,
                       const yg_tensor *g,
                       const yg_tensor *b0,
                       const yg_tensor *b1);
yg_status yg__adam_update(yg_optimizer *opt, yg_param_state *ps, const yg_tensor *g);

#endif /* YAGRAD_OPTIM_INT_H */
