/*
 * hooks.c - user hooks on tensors and nodes, retain_grad, and the leaf
 * locks that make accumulation into shared leaves thread-safe.
 *
 * Where hooks live: a hook on a non-leaf tensor is a pre-hook of the node
 * that produced it, filtered by output_nr, because the gradient of that
 * tensor is exactly what arrives in that node's input slot.  A hook on a
 * leaf lives in the leaf's autograd meta and runs in AccumulateGrad.  The
 * retain_grad hook points at its tensor weakly (the tensor owns the node
 * that owns the hook); the tensor clears the pointer when it dies.
 *
 * Order, as in PyTorch: tensor hooks, then retain_grad, then node pre-hooks.
 * A leaf's post-accumulate hooks share its hook list (kind
 * YG_HOOK_POST_ACCUMULATE) and run in AccumulateGrad after the sum.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "autograd/node.h"

#define YG__LEAF_LOCKS 64

static pthread_mutex_t leaf_locks[YG__LEAF_LOCKS] = {
#define YG__M8                                                                                     \
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,               \
        PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,           \
        PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER
    YG__M8, YG__M8, YG__M8, YG__M8, YG__M8, YG__M8, YG__M8, YG__M8,
#undef YG__M8
};

/* yg__leaf_locks_share_one: every tensor on stripe 0, for tests. */
static atomic_bool one_stripe;

void yg__leaf_locks_share_one(bool on)
{
    atomic_store(&one_stripe, on);
}

int yg__leaf_lock_stripe(const yg_tensor *t)
{
    if (atomic_load_explicit(&one_stripe, memory_order_relaxed))
        return 0;
    return (int)(((uintptr_t)t >> 6) % YG__LEAF_LOCKS);
}

static pthread_mutex_t *leaf_mutex(const yg_tensor *leaf)
{
    return &leaf_locks[yg__leaf_lock_stripe(leaf)];
}

void yg__leaf_lock(const yg_tensor *leaf)
{
    pthread_mutex_lock(leaf_mutex(leaf));
}

void yg__leaf_unlock(const yg_tensor *leaf)
{
    pthread_mutex_unlock(leaf_mutex(leaf));
}

static yg_status hook_new(yg_hook_kind kind, int32_t output_nr, void *ctx, yg_hook **out)
{
    yg_hook *h = calloc(1, sizeof *h);
    if (h == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "register_hook: out of memory");
    h->kind = kind;
    h->output_nr = output_nr;
    h->ctx = ctx;
    *out = h;
    return YG_OK;
}

static void append(yg_hook **list, yg_hook *h)
{
    while (*list != NULL)
        list = &(*list)->next;
    *list = h;
}

void yg__hooks_free(yg_hook *hooks)
{
    while (hooks != NULL) {
        yg_hook *next = hooks->next;
        free(hooks);
        hooks = next;
    }
}

/* ---- registration ---- */

yg_status yg_tensor_register_hook(yg_tensor *t, yg_tensor_hook_fn fn, void *ctx)
{
    yg_hook *h = NULL;

    YG_RETURN_IF_ERROR(yg__check_defined("register_hook", "self", t));
    if (fn == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "register_hook: fn is NULL");
    if (!yg_tensor_requires_grad(t))
        return yg__fail(YG_ERR_AUTOGRAD,
                        "register_hook: cannot register a hook on a tensor that does not "
                        "require grad");
    YG_RETURN_IF_ERROR(yg__refresh_history(t));
    YG_RETURN_IF_ERROR(hook_new(YG_HOOK_TENSOR, 0, ctx, &h));
    h->fn.tensor = fn;
    if (t->autograd->grad_fn != NULL) {
        h->output_nr = t->autograd->output_nr;
        append(&t->autograd->grad_fn->pre_hooks, h);
    } else {
        yg__leaf_lock(t);
        append(&t->autograd->hooks, h);
        yg__leaf_unlock(t);
    }
    return YG_OK;
}

yg_status yg_tensor_register_post_accumulate_grad_hook(yg_tensor *t,
                                                      yg_post_accumulate_hook_fn fn,
                                                      void *ctx)
{
    yg_hook *h = NULL;

    YG_RETURN_IF_ERROR(yg__check_defined("register_post_accumulate_grad_hook", "self", t));
    if (fn == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "register_post_accumulate_grad_hook: fn is NULL");
    if (!yg_tensor_requires_grad(t) || yg_tensor_grad_fn(t) != NULL)
        return yg__fail(YG_ERR_AUTOGRAD,
                        "register_post_accumulate_grad_hook: self must be a leaf that requires "
                        "grad (got %s)",
                        yg_tensor_requires_grad(t) ? "a non-leaf" : "a tensor without grad");
    YG_RETURN_IF_ERROR(hook_new(YG_HOOK_POST_ACCUMULATE, 0, ctx, &h));
    h->fn.post_accumulate = fn;
    yg__leaf_lock(t);
    append(&t->autograd->hooks, h);
    yg__leaf_unlock(t);
    return YG_OK;
}

yg_status yg_tensor_remove_post_accumulate_grad_hook(yg_tensor *t,
                                                    yg_post_accumulate_hook_fn fn,
                                                    void *ctx)
{
    yg_hook **link, *found = NULL;

    YG_RETURN_IF_ERROR(yg__check_defined("remove_post_accumulate_grad_hook", "self", t));
    if (t->autograd != NULL) {
        yg__leaf_lock(t);
        for (link = &t->autograd->hooks; *link != NULL; link = &(*link)->next) {
            yg_hook *h = *link;
            if (h->kind == YG_HOOK_POST_ACCUMULATE && h->fn.post_accumulate == fn &&
                h->ctx == ctx) {
                *link = h->next;
                found = h;
                break;
            }
        }
        yg__leaf_unlock(t);
    }
    if (found == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "remove_post_accumulate_grad_hook: no such hook is registered on self");
    free(found);
    return YG_OK;
}

yg_status yg_tensor_retain_grad(yg_tensor *t)
{
    yg_hook *h = NULL;

    YG_RETURN_IF_ERROR(yg__check_defined("retain_grad", "self", t));
    if (!yg_tensor_requires_grad(t))
        return yg__fail(YG_ERR_AUTOGRAD,
                        "retain_grad: cannot retain the grad of a tensor that does not "
                        "require grad");
    YG_RETURN_IF_ERROR(yg__refresh_history(t));
    if (t->autograd->grad_fn == NULL || t->autograd->retain_hook != NULL)
        return YG_OK; /* leaves always keep their grad */
    YG_RETURN_IF_ERROR(yg__retain_hook_new(t, t->autograd->output_nr, &h));
    append(&t->autograd->grad_fn->pre_hooks, h);
    t->autograd->retain_hook = h;
    return YG_OK;
}

yg_status yg__retain_hook_new(yg_tensor *t, int32_t output_nr, yg_hook **out)
{
    YG_RETURN_IF_ERROR(hook_new(YG_HOOK_RETAIN_GRAD, output_nr, NULL, out));
    (*out)->target = t;
    return YG_OK;
}

yg_node *yg_tensor_grad_fn(const yg_tensor *t)
{
    if (t == NULL || t->autograd == NULL)
        return NULL;
    /* Out of memory regenerating a stale view's history leaves the old
     * node, which is what this can still report. */
    (void)yg__refresh_history(t);
    return t->autograd->grad_fn;
}

const char *yg_node_name(const yg_node *node)
{
    return node != NULL ? node->vt->name : "";
}

yg_status yg_node_register_pre_hook(yg_node *node, yg_node_pre_hook_fn fn, void *ctx)
{
    yg_hook *h = NULL;
    if (node == NULL || fn == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "register_pre_hook: node or fn is NULL");
    YG_RETURN_IF_ERROR(hook_new(YG_HOOK_NODE_PRE, 0, ctx, &h));
    h->fn.pre = fn;
    append(&node->pre_hooks, h);
    return YG_OK;
}

yg_status yg_node_register_post_hook(yg_node *node, yg_node_post_hook_fn fn, void *ctx)
{
    yg_hook *h = NULL;
    if (node == NULL || fn == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "register_post_hook: node or fn is NULL");
    YG_RETURN_IF_ERROR(hook_new(YG_HOOK_NODE_POST, 0, ctx, &h));
    h->fn.post = fn;
    append(&node->post_hooks, h);
    return YG_OK;
}

/* ---- running ---- */

static yg_status call_tensor_hook(const yg_hook *h, yg_tensor **grad)
{
    yg_tensor *rep = NULL;
    yg_status st = h->fn.tensor(*grad, h->ctx, &rep);
    if (st != YG_OK) {
        yg_release(rep);
        return yg__fail_prefix(st, "tensor hook");
    }
    if (rep != NULL) {
        yg_release(*grad);
        *grad = rep;
    }
    return YG_OK;
}

yg_status yg__run_tensor_hooks(yg_hook *hooks, int32_t output_nr, yg_tensor **grad)
{
    for (yg_hook *h = hooks; h != NULL && *grad != NULL; h = h->next)
        if (h->kind == YG_HOOK_TENSOR && h->output_nr == output_nr)
            YG_RETURN_IF_ERROR(call_tensor_hook(h, grad));
    return YG_OK;
}

yg_status yg__run_pre_hooks(yg_node *node, yg_tensor **grads)
{
    for (int32_t i = 0; i < node->n_outputs; i++)
        YG_RETURN_IF_ERROR(yg__run_tensor_hooks(node->pre_hooks, i, &grads[i]));
    for (yg_hook *h = node->pre_hooks; h != NULL; h = h->next) {
        if (h->kind != YG_HOOK_RETAIN_GRAD || h->target == NULL || grads[h->output_nr] == NULL)
            continue;
        /* The gradient goes on to the node: .grad gets a copy. */
        YG_RETURN_IF_ERROR(yg__accumulate_grad(h->target, grads[h->output_nr], 0));
    }
    for (yg_hook *h = node->pre_hooks; h != NULL; h = h->next) {
        if (h->kind != YG_HOOK_NODE_PRE)
            continue;
        yg_status st = h->fn.pre(node, grads, node->n_outputs, h->ctx);
        if (st != YG_OK)
            return yg__fail_prefix(st, node->vt->name);
    }
    return YG_OK;
}

yg_status yg__run_post_hooks(yg_node *node, yg_tensor **grad_inputs, yg_tensor *const *grads)
{
    for (yg_hook *h = node->post_hooks; h != NULL; h = h->next) {
        yg_status st = h->fn.post(node, grad_inputs, node->n_edges, grads, node->n_outputs, h->ctx);
        if (st != YG_OK)
            return yg__fail_prefix(st, node->vt->name);
    }
    return YG_OK;
}

yg_status yg__run_post_accumulate_hooks(yg_hook *hooks, yg_tensor *leaf)
{
    for (yg_hook *h = hooks; h != NULL; h = h->next) {
        if (h->kind != YG_HOOK_POST_ACCUMULATE)
            continue;
        yg_status st = h->fn.post_accumulate(leaf, h->ctx);
        if (st != YG_OK)
            return yg__fail_prefix(st, "post-accumulate hook");
    }
    return YG_OK;
}
