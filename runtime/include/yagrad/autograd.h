/*
 * yagrad/autograd.h - reverse-mode automatic differentiation.
 *
 * A tensor that requires grad is a leaf the user wants gradients for.
 * While grad mode is on (the default, per thread), every differentiable op
 * with an input that requires grad records a backward node; its result
 * requires grad and remembers that node (its "grad_fn").  yg_backward()
 * walks the nodes from a result back to the leaves in dependency order and
 * accumulates gradients into each leaf's .grad.
 *
 * Saved values: nodes keep what their gradient formulas need (inputs,
 * outputs, or only their sizes).  yg_backward frees them when it is done
 * unless retain_graph is true; a second backward through freed values fails
 * with YG_ERR_AUTOGRAD.
 *
 * Thread safety: grad mode is per thread.  Graphs are not shared between
 * threads in this version.  Anything not declared here is not API.
 */
#ifndef YAGRAD_AUTOGRAD_H
#define YAGRAD_AUTOGRAD_H

#include <stdbool.h>

#include "yagrad/status.h"
#include "yagrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Marks a leaf tensor as requiring (or not) gradients.
 *   t: in-out
 * Returns: YG_ERR_AUTOGRAD when t is not a leaf (it has a grad_fn),
 *          YG_ERR_DTYPE when requires_grad is true and t is not floating. */
YG_NODISCARD yg_status yg_tensor_set_requires_grad(yg_tensor *t, bool requires_grad);

/* Whether gradients flow to t (a leaf marked so, or a result of a
 * recorded op).  NULL gives false.  Cannot fail. */
bool yg_tensor_requires_grad(const yg_tensor *t);

/* Whether t is a leaf (has no grad_fn).  NULL gives true.  Cannot fail. */
bool yg_tensor_is_leaf(const yg_tensor *t);

/* The accumulated gradient of a leaf.
 *   t:   borrowed
 *   out: out: new ref, NULL when no gradient has been accumulated
 * Returns: YG_OK always (t NULL gives *out NULL). */
YG_NODISCARD yg_status yg_tensor_grad(const yg_tensor *t, yg_tensor **out);

/* Drops the accumulated gradient of t (sets .grad to none).  NULL-safe.
 * Cannot fail. */
void yg_tensor_zero_grad(yg_tensor *t);

/* The name of the node that produced t ("MulBackward", ...), or NULL for a
 * leaf.  Returns: borrowed static string.  Cannot fail. */
const char *yg_tensor_grad_fn_name(const yg_tensor *t);

/* Computes gradients of root with respect to the leaves it depends on and
 * adds them into their .grad.
 *   root:         borrowed; must require grad
 *   grad:         nullable, borrowed; d(loss)/d(root).  When NULL, root must
 *                 have exactly one element and 1 is used
 *   retain_graph: keep saved values so backward can run again
 * Returns: YG_ERR_AUTOGRAD when root does not require grad, when saved
 *          values were already freed or modified; YG_ERR_SHAPE when grad
 *          does not match root; errors of the gradient formulas, prefixed
 *          with the node name.  On failure some leaves may already have
 *          received their gradient. */
YG_NODISCARD yg_status yg_backward(yg_tensor *root, const yg_tensor *grad, bool retain_graph);

/* Grad mode of the calling thread (true by default). Cannot fail. */
bool yg_is_grad_enabled(void);

/* Sets the calling thread's grad mode; returns the previous mode, so that
 * scopes nest:  bool prev = yg_set_grad_enabled(false); ...;
 * yg_set_grad_enabled(prev);   Cannot fail. */
bool yg_set_grad_enabled(bool enabled);

#ifdef __cplusplus
}
#endif
#endif /* YAGRAD_AUTOGRAD_H */
