/*
 * yagrad/optim.h - optimizers: SGD (with momentum, Nesterov momentum and
 * weight decay), Adam and AdamW.
 *
 * An optimizer (yg_optimizer, opaque) holds references to a list of
 * parameters (leaf float32/float64 tensors) and their per-parameter state
 * (momentum buffers, moment estimates, step counts).  Create one with
 * yg_optimizer_create_sgd / _adam / _adamw; after each yg_backward call
 * yg_optimizer_step to update the parameters in place from their .grad,
 * and yg_optimizer_zero_grad before the next backward; release it with
 * yg_optimizer_release.
 *
 * The updates follow PyTorch's torch.optim algorithms (the formulas are
 * given per constructor below) and run as in-place ops with grad mode off
 * for the duration of the step, so they are not recorded.  Parameters
 * without a gradient (.grad none) are skipped and their state is left
 * alone.  A parameter's version counter is bumped by each step, so a
 * graph that saved a parameter before the step refuses to run backward
 * through the modified value.
 *
 * yg_clip_grad_norm rescales a list of parameters' gradients so that
 * their total 2-norm is at most a bound (PyTorch's
 * torch.nn.utils.clip_grad_norm_), between yg_backward and the step.
 *
 * Thread safety: an optimizer is not thread-safe; step it from one thread
 * at a time, while no other thread uses its parameters.  The same holds
 * for yg_clip_grad_norm and the parameters it is given.
 *
 * Errors: see status.h.  Anything not declared here is not API.
 */
#ifndef YAGRAD_OPTIM_H
#define YAGRAD_OPTIM_H

#include "yagrad/status.h"
#include "yagrad/tensor.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct yg_optimizer yg_optimizer;

/* SGD.  With g the gradient of parameter p and buf its momentum buffer:
 *   g = g + weight_decay * p                      (if weight_decay != 0)
 *   buf = g on the first step, else
 *   buf = momentum * buf + (1 - dampening) * g    (if momentum != 0)
 *   g = nesterov ? g + momentum * buf : buf       (if momentum != 0)
 *   p = p - lr * g
 * Pass zeros for what you do not use: {.lr = 0.1} is plain SGD. */
typedef struct yg_sgd_options {
    double lr;           /* >= 0 */
    double momentum;     /* >= 0 */
    double dampening;    /* >= 0; must be 0 with nesterov */
    double weight_decay; /* >= 0 (L2 penalty added to the gradient) */
    bool nesterov;       /* requires momentum > 0 */
} yg_sgd_options;

/* Adam and AdamW.  With step count t (per parameter, from 1), moments m
 * and v (zero before the first step):
 *   Adam:  g = g + weight_decay * p               (if weight_decay != 0)
 *   AdamW: p = p * (1 - lr * weight_decay)        (decoupled decay)
 *   m = beta1 * m + (1 - beta1) * g
 *   v = beta2 * v + (1 - beta2) * g * g
 *   p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
 * yg_adam_options_default() gives PyTorch's defaults. */
typedef struct yg_adam_options {
    double lr;           /* >= 0; default 1e-3 */
    double beta1;        /* in [0, 1); default 0.9 */
    double beta2;        /* in [0, 1); default 0.999 */
    double eps;          /* >= 0; default 1e-8 */
    double weight_decay; /* >= 0; default 0 for Adam (PyTorch's AdamW uses 1e-2) */
} yg_adam_options;

/* {lr 1e-3, beta1 0.9, beta2 0.999, eps 1e-8, weight_decay 0}.
 * Cannot fail. */
yg_adam_options yg_adam_options_default(void);

/* Creates an SGD optimizer over params.
 *   params:     borrowed array of params_len tensors; each is retained
 *               (the optimizer keeps its own reference until released)
 *   params_len: >= 0
 *   options:    borrowed, copied
 *   out:        out: new optimizer, release with yg_optimizer_release
 * Returns: YG_ERR_INVALID_ARGUMENT for an option out of range, a NULL or
 *          repeated parameter, or a parameter that is not a leaf;
 *          YG_ERR_DTYPE for a parameter that is not float32/float64;
 *          YG_ERR_OUT_OF_MEMORY.  On failure *out is NULL. */
YG_NODISCARD yg_status yg_optimizer_create_sgd(yg_tensor *const *params,
                                               int64_t params_len,
                                               const yg_sgd_options *options,
                                               yg_optimizer **out);

/* Creates an Adam optimizer over params (L2 weight decay, added to the
 * gradient).  Parameters, ownership and errors as yg_optimizer_create_sgd. */
YG_NODISCARD yg_status yg_optimizer_create_adam(yg_tensor *const *params,
                                                int64_t params_len,
                                                const yg_adam_options *options,
                                                yg_optimizer **out);

/* Creates an AdamW optimizer over params (decoupled weight decay, applied
 * to the parameter).  Parameters, ownership and errors as
 * yg_optimizer_create_sgd. */
YG_NODISCARD yg_status yg_optimizer_create_adamw(yg_tensor *const *params,
                                                 int64_t params_len,
                                                 const yg_adam_options *options,
                                                 yg_optimizer **out);

/* Updates every parameter that has a gradient, in place.
 *   opt: in-out
 * Returns: YG_ERR_INVALID_ARGUMENT when opt is NULL; YG_ERR_SHAPE or
 *          YG_ERR_DTYPE when a gradient does not match its parameter;
 *          YG_ERR_OUT_OF_MEMORY.  On failure the parameters before the one
 *          named in the message have been updated and the rest have not. */
YG_NODISCARD yg_status yg_optimizer_step(yg_optimizer *opt);

/* Sets every parameter's .grad to none (as yg_tensor_zero_grad).
 * NULL-safe.  Cannot fail. */
void yg_optimizer_zero_grad(yg_optimizer *opt);

/* The learning rate used by the next step; 0 for NULL.  Cannot fail. */
double yg_optimizer_lr(const yg_optimizer *opt);

/* Changes the learning rate for later steps (a schedule).
 *   opt: in-out
 * Returns: YG_ERR_INVALID_ARGUMENT when opt is NULL or lr < 0 (or NaN). */
YG_NODISCARD yg_status yg_optimizer_set_lr(yg_optimizer *opt, double lr);

/* Makes the following steps read every gradient multiplied by scale (in
 * double, rounded to the gradient's dtype: what scaling the gradients in
 * place would give), without changing the gradients: a clipping
 * coefficient (with yg_grad_norm) or a loss scaler's 1 / scale folded
 * into the update instead of a pass over every gradient.  1 by default;
 * it stays until set again.
 *   opt: in-out
 * Returns: YG_ERR_INVALID_ARGUMENT when opt is NULL or scale is not
 *          positive and finite. */
YG_NODISCARD yg_status yg_optimizer_set_grad_scale(yg_optimizer *opt, double scale);

/* The scale the next step reads the gradients with; 0 for NULL.  Cannot
 * fail. */
double yg_optimizer_grad_scale(const yg_optimizer *opt);

/* Gives parameter i its own weight decay (PyTorch's parameter groups:
 * e.g. none for biases and norm weights), in place of the options'.
 *   opt: in-out
 * Returns: YG_ERR_INVALID_ARGUMENT when opt is NULL or weight_decay < 0
 *          (or NaN); YG_ERR_INDEX when i is not in [0, params_len). */
YG_NODISCARD yg_status yg_optimizer_set_param_weight_decay(yg_optimizer *opt,
                                                           int64_t i,
                                                           double weight_decay);

/* The names of the per-parameter state tensors of opt's algorithm, as
 * PyTorch's state_dict names them: SGD "momentum_buffer" (1), Adam and
 * AdamW "exp_avg", "exp_avg_sq" (2).
 *   names: out: up to 2 borrowed static strings
 * Returns how many (0 for NULL).  Cannot fail. */
int yg_optimizer_state_names(const yg_optimizer *opt, const char **names);

/* Parameter i's state, to save it: the updates it has had and its state
 * tensors in yg_optimizer_state_names order.
 *   steps: out
 *   state: out: 2 entries, each a new reference to the optimizer's own
 *          tensor (the next step changes it) or NULL where the algorithm
 *          has none or has not made it yet
 * Returns: YG_ERR_INVALID_ARGUMENT when opt is NULL; YG_ERR_INDEX when i
 *          is out of range.  On failure the outs are 0 and NULL. */
YG_NODISCARD yg_status yg_optimizer_get_state(const yg_optimizer *opt,
                                              int64_t i,
                                              int64_t *steps,
                                              yg_tensor **state);

/* Restores parameter i's state saved by yg_optimizer_get_state, so the
 * next step is the one the saved optimizer would have taken.
 *   state: borrowed; yg_optimizer_state_names entries, each NULL (none
 *          yet) or of the parameter's sizes and dtype; copied
 * Returns: YG_ERR_INVALID_ARGUMENT for a NULL opt or steps < 0;
 *          YG_ERR_INDEX for i out of range; YG_ERR_SHAPE for a state
 *          tensor whose sizes or dtype differ from the parameter's (the
 *          message names both); YG_ERR_OUT_OF_MEMORY.  On failure the
 *          state is unchanged. */
YG_NODISCARD yg_status yg_optimizer_set_state(yg_optimizer *opt,
                                              int64_t i,
                                              int64_t steps,
                                              const yg_tensor *const *state);

/* Clips gradients by their total norm, as PyTorch's clip_grad_norm_ with
 * norm_type 2: with total = sqrt(sum over the parameters' gradients of
 * their squared elements), computed in double precision, every gradient
 * is multiplied in place by max_norm / (total + 1e-6) when that factor is
 * below 1, and left alone otherwise.  Parameters without a gradient
 * (.grad none) are skipped.  The scaling is not recorded by autograd and
 * bumps each scaled gradient's version counter.
 *   params:         borrowed array of params_len tensors (leaves or not)
 *   params_len:     >= 0 (0: nothing to clip, the norm is 0)
 *   max_norm:       > 0 and finite
 *   out_total_norm: nullable; out: the total norm before clipping
 * Returns: YG_ERR_INVALID_ARGUMENT for max_norm <= 0, NaN or infinite, a
 *          NULL params with params_len > 0, a negative params_len, a NULL
 *          or repeated parameter, or a total norm that is not finite (a
 *          gradient holds inf or NaN: the message names the first such
 *          parameter); YG_ERR_DTYPE for a gradient that is not float32 or
 *          float64; YG_ERR_DEVICE for a gradient not on the CPU;
 *          YG_ERR_OUT_OF_MEMORY.  On failure *out_total_norm is 0 and no
 *          gradient has been changed (every check runs before any scaling;
 *          contiguous gradients, which backward makes, are scaled by a loop
 *          that cannot fail). */
YG_NODISCARD yg_status yg_clip_grad_norm(yg_tensor *const *params,
                                         int64_t params_len,
                                         double max_norm,
                                         double *out_total_norm);

/* The total norm yg_clip_grad_norm computes (the same checks, messages
 * prefixed "grad_norm"), without scaling anything: with
 * yg_optimizer_set_grad_scale(opt, min(1, max_norm / (norm + 1e-6))) the
 * step does what clipping then stepping does, one pass fewer.
 *   out_total_norm: out (not NULL)
 * Returns: as yg_clip_grad_norm, and YG_ERR_INVALID_ARGUMENT for a NULL
 *          out_total_norm. */
YG_NODISCARD yg_status yg_grad_norm(yg_tensor *const *params,
                                    int64_t params_len,
                                    double *out_total_norm);

/* Releases the optimizer, its state and its references to the parameters
 * (which live on while others hold them).  NULL-safe. */
void yg_optimizer_release(yg_optimizer *opt);

#ifdef __cplusplus
}
#endif
#endif /* YAGRAD_OPTIM_H */
