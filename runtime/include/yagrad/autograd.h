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
 * Thread safety: grad mode is per thread.  Several threads may build and
 * run backward over independent graphs at once; leaves shared between
 * them accumulate under a lock.  One graph must not be run backward by two
 * threads at once.  Anything not declared here is not API.
 */
#ifndef YAGRAD_AUTOGRAD_H
#define YAGRAD_AUTOGRAD_H

#include <stdbool.h>
#include <stdint.h>

#include "yagrad/status.h"
#include "yagrad/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Marks a leaf tensor as requiring (or not) gradients.
 *   t: in-out
 * Returns: YG_ERR_AUTOGRAD when t is not a leaf (it has a grad_fn),
 *          YG_ERR_DTYPE when requires_grad is true and t is not floating
 *          (float32, float64, float16 or bfloat16). */
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

/* Gradients of outputs with respect to inputs, returned instead of being
 * accumulated into .grad (which this function never touches).
 *   outputs:      borrowed, n_outputs tensors that require grad
 *   grad_outputs: nullable, borrowed; n_outputs entries, each nullable: an
 *                 output with a NULL entry must have one element (1 is used)
 *   inputs:       borrowed, n_inputs tensors that require grad
 *   retain_graph: keep saved values for another backward
 *   create_graph: record the backward computation itself, so the returned
 *                 gradients require grad and can be differentiated again
 *                 (implies retain_graph)
 *   allow_unused: an input the outputs do not depend on gets NULL instead
 *                 of an error
 *   grads:        out: n_inputs new refs (NULL only for unused inputs)
 * Returns: YG_ERR_AUTOGRAD when an output or input does not require grad,
 *          or an input is unused and allow_unused is false; the errors of
 *          yg_backward.  On failure every grads entry is NULL. */
YG_NODISCARD yg_status yg_grad(const yg_tensor *const *outputs,
                               int64_t n_outputs,
                               const yg_tensor *const *grad_outputs,
                               const yg_tensor *const *inputs,
                               int64_t n_inputs,
                               bool retain_graph,
                               bool create_graph,
                               bool allow_unused,
                               yg_tensor **grads);

/* A new tensor sharing t's storage, without history and not requiring
 * grad.  In-place writes to either are seen by both.
 *   t: borrowed;  out: out: new ref */
YG_NODISCARD yg_status yg_detach(const yg_tensor *t, yg_tensor **out);

/* Cuts t from its history in place: t becomes a leaf that does not
 * require grad.  t: in-out.
 * Returns: YG_ERR_AUTOGRAD when t is a view (detach the base instead). */
YG_NODISCARD yg_status yg_detach_(yg_tensor *t);

/* Makes a non-leaf tensor keep its gradient in .grad during backward (a
 * leaf always does).  t: in-out.  No-op for leaves.
 * Returns: YG_ERR_AUTOGRAD when t does not require grad. */
YG_NODISCARD yg_status yg_tensor_retain_grad(yg_tensor *t);

/* ---- hooks ----
 * Hooks run on the thread that runs backward, in registration order.  A
 * hook that fails stops backward with its status and message. */

/* Called with the gradient of t before it is used (before it reaches the
 * node that produced t, or before it is added into a leaf's .grad).
 *   grad:        borrowed
 *   ctx:         the pointer given at registration
 *   replacement: out: new ref to use instead of grad, or leave NULL */
typedef yg_status (*yg_tensor_hook_fn)(const yg_tensor *grad, void *ctx, yg_tensor **replacement);

/* Registers fn on t for as long as t (a leaf) or its history (non-leaf)
 * lives.  t: in-out.  Returns: YG_ERR_AUTOGRAD when t does not require
 * grad; YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_tensor_register_hook(yg_tensor *t, yg_tensor_hook_fn fn, void *ctx);

/* Called after backward has added a gradient into leaf's .grad (read it
 * with yg_tensor_grad), once per backward that reaches leaf, after its
 * tensor hooks.  Data-parallel training (distributed.h) starts gradient
 * communication from here, while backward goes on.
 *   leaf: borrowed, the tensor the hook was registered on
 *   ctx:  the pointer given at registration */
typedef yg_status (*yg_post_accumulate_hook_fn)(yg_tensor *leaf, void *ctx);

/* Registers fn on leaf t until removed or t dies.  t: in-out.
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL t or fn; YG_ERR_AUTOGRAD when
 *          t is not a leaf that requires grad; YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_tensor_register_post_accumulate_grad_hook(yg_tensor *t,
                                                                 yg_post_accumulate_hook_fn fn,
                                                                 void *ctx);

/* Removes one registration of (fn, ctx) from t.  Not while a backward
 * that reaches t runs.  t: in-out.
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL t or when (fn, ctx) is not
 *          registered on t. */
YG_NODISCARD yg_status yg_tensor_remove_post_accumulate_grad_hook(yg_tensor *t,
                                                               yg_post_accumulate_hook_fn fn,
                                                               void *ctx);

/* A backward node (the grad_fn of a tensor).  Opaque. */
typedef struct yg_node yg_node;

/* t's grad_fn, or NULL for a leaf.  Returns: borrowed, valid while t
 * lives.  Cannot fail. */
yg_node *yg_tensor_grad_fn(const yg_tensor *t);

/* The node's name ("MulBackward").  Static string.  Cannot fail. */
const char *yg_node_name(const yg_node *node);

/* Called before node runs, with its incoming gradients (n_outputs
 * entries, NULL when undefined); the hook may replace an entry by
 * releasing it and storing a new ref. */
typedef yg_status (*yg_node_pre_hook_fn)(yg_node *node,
                                         yg_tensor **grad_outputs,
                                         int32_t n_outputs,
                                         void *ctx);

/* Called after node ran, with the gradients it computed for its inputs
 * (n_inputs entries, NULL when not needed; replaceable as above) and the
 * incoming gradients (borrowed). */
typedef yg_status (*yg_node_post_hook_fn)(yg_node *node,
                                          yg_tensor **grad_inputs,
                                          int32_t n_inputs,
                                          yg_tensor *const *grad_outputs,
                                          int32_t n_outputs,
                                          void *ctx);

/* Register hooks on a node for as long as it lives.  node: in-out.
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL node or fn;
 *          YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_node_register_pre_hook(yg_node *node, yg_node_pre_hook_fn fn, void *ctx);
YG_NODISCARD yg_status yg_node_register_post_hook(yg_node *node,
                                                  yg_node_post_hook_fn fn,
                                                  void *ctx);

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
