/*
 * meta.c - per-tensor autograd state (requires_grad, .grad, grad_fn) and
 * the AccumulateGrad node that ends every path at a leaf.
 *
 * A leaf's AccumulateGrad holds a strong reference to the leaf; the leaf
 * points back weakly (meta->grad_accumulator, cleared when the node dies).
 * So a leaf the user released stays alive while a graph that will write
 * its gradient exists, and there is no reference cycle.
 */
#include <stdlib.h>

#include "autograd/node.h"
#include "core/observer.h"
#include "kernels/arithmetic.h"
#include "yagrad/autograd.h"
#include "yagrad/ops_arithmetic.h"

typedef struct accumulate_grad {
    yg_node base;
    yg_tensor *leaf; /* strong ref */
} accumulate_grad;

yg_status yg__autograd_meta_get(yg_tensor *t, yg_autograd_meta **out)
{
    if (t->autograd == NULL) {
        t->autograd = calloc(1, sizeof *t->autograd);
        if (t->autograd == NULL)
            return yg__fail(YG_ERR_OUT_OF_MEMORY, "out of memory creating autograd state");
    }
    *out = t->autograd;
    return YG_OK;
}

void yg__autograd_meta_free(yg_autograd_meta *meta)
{
    if (meta == NULL)
        return;
    /* The retain_grad hook lives in grad_fn, which may outlive us. */
    if (meta->retain_hook != NULL)
        meta->retain_hook->target = NULL;
    yg_release(meta->grad);
    yg__node_release(meta->grad_fn);
    yg__hooks_free(meta->hooks);
    yg_release(meta->view_base);
    /* grad_accumulator is weak; an accumulator alive would hold us alive. */
    free(meta);
}

bool yg__tensor_is_exclusive(const yg_tensor *t, long refs)
{
    const yg_tensor *base = t->autograd != NULL ? t->autograd->view_base : NULL;
    long storage_refs = 1;

    /* A gradient made by a view op (t(grad), reshape(grad)) keeps its
     * root base alive: that base counts as t's own when nothing else
     * holds it. */
    if (base != NULL && base->storage == t->storage &&
        atomic_load(&((yg_tensor *)base)->refcount) == 1)
        storage_refs = 2;
    return atomic_load(&((yg_tensor *)t)->refcount) == refs &&
           atomic_load(&t->storage->refcount) == storage_refs;
}

/* Whether a plain tensor (no history, does not require grad) g can be
 * written or kept as is: contiguous in dtype. */
static bool plain_contiguous(const yg_tensor *g, yg_dtype dtype)
{
    return g->dtype == dtype && yg_tensor_is_contiguous(g) && !yg_tensor_requires_grad(g);
}

/* Adds g into t's .grad in place, under t's leaf lock, when no one but
 * the autograd state holds .grad (a caller's reference to .grad keeps
 * the value it had: the sum is then a new tensor).  *done says whether
 * it did.  The kernel takes no leaf lock (no autograd: .grad and g are
 * plain tensors), so it may run under ours. */
static yg_status add_in_place(yg_tensor *t, const yg_tensor *g, bool *done)
{
    yg_autograd_meta *m = t->autograd;
    yg_tensor *same = NULL;
    yg_status st = YG_OK;

    *done = false;
    yg__leaf_lock(t);
    if (m->grad != NULL && m->grad->storage->device == YG_CPU &&
        g->storage->device == YG_CPU && yg__tensor_is_exclusive(m->grad, 1) &&
        plain_contiguous(m->grad, t->dtype) && g->dtype == t->dtype) {
        st = yg__pw_add_(m->grad, g, 1.0, &same);
        if (st == YG_OK)
            yg__tensor_bump_version(m->grad);
        yg_release(same);
        *done = st == YG_OK;
    }
    yg__leaf_unlock(t);
    return st;
}

yg_status yg__accumulate_grad(yg_tensor *t, const yg_tensor *g, long steal_refs)
{
    yg_autograd_meta *m = t->autograd;
    /* Under create_graph the gradient keeps its history, so .grad can be
     * differentiated again; otherwise .grad is stored contiguous in t's
     * dtype (never a stride-0 broadcast view optimizers would trip on),
     * and is never a tensor anyone else holds: g is taken as .grad only
     * when steal_refs references are all there are to it (PyTorch's
     * AccumulateGrad steals on the same condition), else copied. */
    bool keep_history = yg_is_grad_enabled() && yg_tensor_requires_grad(g);
    bool steal = !keep_history && steal_refs > 0 && yg__tensor_is_exclusive(g, steal_refs) &&
                 plain_contiguous(g, t->dtype);

    /* The sum runs without t's leaf lock: an op may take leaf locks of its
     * own (a stale view's history is rebuilt under its lock, which can be
     * t's stripe), and the striped mutexes do not nest.  The result is
     * installed only if .grad did not change meanwhile; else it is redone
     * on the new .grad.  The in-place sum runs under the lock, but calls
     * a kernel, which takes none. */
    if (!keep_history) {
        bool done;
        YG_RETURN_IF_ERROR(add_in_place(t, g, &done));
        if (done)
            return YG_OK;
    }
    for (;;) {
        yg_tensor *old, *fresh = NULL;
        yg_status st = YG_OK;
        bool installed = false;

        yg__leaf_lock(t);
        old = yg_retain(m->grad);
        yg__leaf_unlock(t);
        if (old == NULL && keep_history)
            fresh = yg_retain((yg_tensor *)g);
        else if (old == NULL && steal && g->autograd == NULL)
            fresh = yg_retain((yg_tensor *)g);
        else if (old == NULL && steal) /* a view: .grad is a plain alias */
            st = yg__tensor_alias(g, &fresh);
        else if (old == NULL)
            st = yg__tensor_contiguous_as(g, t->dtype, false, &fresh);
        else
            st = yg_add(old, g, 1.0, &fresh);
        if (st != YG_OK) {
            yg_release(old);
            return st;
        }
        yg__leaf_lock(t);
        if (m->grad == old) {
            m->grad = fresh;
            installed = true;
        }
        yg__leaf_unlock(t);
        if (installed) {
            yg_release(old); /* the reference .grad held */
            yg_release(old); /* ours */
            return YG_OK;
        }
        yg_release(fresh);
        yg_release(old);
    }
}

static yg_status accumulate_grad_apply(yg_node *base, yg_tensor *const *grads,
                                       yg_tensor **grad_inputs)
{
    accumulate_grad *node = (accumulate_grad *)base;
    yg_tensor *leaf = node->leaf, *g;
    yg_hook *hooks;
    yg_status st;

    (void)grad_inputs;
    if (grads[0] == NULL)
        return YG_OK;
    yg__leaf_lock(leaf);
    hooks = leaf->autograd->hooks; /* append-only: safe to walk unlocked */
    yg__leaf_unlock(leaf);
    g = yg_retain(grads[0]);
    st = yg__run_tensor_hooks(hooks, 0, &g);
    /* g may become .grad when it is held only by us and, when no hook
     * replaced it, by the engine's input buffer. */
    if (st == YG_OK)
        st = yg__accumulate_grad(leaf, g, g == grads[0] ? 2 : 1);
    yg_release(g);
    /* After the sum, so a hook reads the .grad this backward completed
     * (data-parallel training starts a bucket's all-reduce from here). */
    if (st == YG_OK)
        st = yg__run_post_accumulate_hooks(hooks, leaf);
    return st;
}

/* The leaf is not a saved value: every backward through this node needs
 * it, so it is released only when the node dies. */
static void accumulate_grad_destroy(yg_node *base)
{
    accumulate_grad *node = (accumulate_grad *)base;
    yg_tensor *leaf = node->leaf;
    node->leaf = NULL;
    yg__leaf_lock(leaf);
    if (leaf->autograd != NULL && leaf->autograd->grad_accumulator == base)
        leaf->autograd->grad_accumulator = NULL;
    yg__leaf_unlock(leaf);
    yg_release(leaf);
}

static const yg_node_vtable accumulate_grad_vtable = {
    .name = "AccumulateGrad",
    .apply = accumulate_grad_apply,
    .destroy = accumulate_grad_destroy,
};

yg_status yg__grad_accumulator(yg_tensor *leaf, yg_node **out)
{
    yg_autograd_meta *m;
    yg_node *n = NULL;

    yg_status st = YG_OK;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__autograd_meta_get(leaf, &m));
    yg__leaf_lock(leaf);
    /* The cached node may be dying on another thread (refcount 0, not yet
     * unlinked): only reuse it while it still has references. */
    n = m->grad_accumulator;
    if (n != NULL && atomic_fetch_add(&n->refcount, 1) == 0) {
        atomic_fetch_sub(&n->refcount, 1);
        n = NULL;
    }
    if (n == NULL) {
        st = yg__node_new(&accumulate_grad_vtable, sizeof(accumulate_grad), 0, 1, &n);
        if (st == YG_OK) {
            ((accumulate_grad *)n)->leaf = yg_retain(leaf);
            n->outputs[0].dtype = leaf->dtype;
            n->outputs[0].device = leaf->storage->device;
            n->outputs[0].device_index = leaf->storage->device_index;
            n->outputs[0].ndim = leaf->ndim;
            for (int32_t i = 0; i < leaf->ndim; i++)
                n->outputs[0].sizes[i] = leaf->sizes[i];
            m->grad_accumulator = n;
        }
    }
    yg__leaf_unlock(leaf);
    *out = n;
    return st;
}

/* ---- public API ---- */

yg_status yg_tensor_set_requires_grad(yg_tensor *t, bool requires_grad)
{
    yg_autograd_meta *m;

    YG_RETURN_IF_ERROR(yg__check_defined("requires_grad_", "self", t));
    YG_RETURN_IF_ERROR(yg__refresh_history(t));
    if (t->autograd != NULL && t->autograd->grad_fn != NULL)
        return yg__fail(YG_ERR_AUTOGRAD,
                        "requires_grad_: self is not a leaf (it was produced by %s); set "
                        "requires_grad on the leaves it was computed from",
                        t->autograd->grad_fn->vt->name);
    if (requires_grad && !yg__dtype_is_floating(t->dtype) && !yg__dtype_is_half(t->dtype))
        return yg__fail(YG_ERR_DTYPE,
                        "requires_grad_: only floating tensors can require gradients, got %s",
                        yg_dtype_name(t->dtype));
    if (!requires_grad && t->autograd == NULL)
        return YG_OK;
    YG_RETURN_IF_ERROR(yg__autograd_meta_get(t, &m));
    m->requires_grad = requires_grad;
    return YG_OK;
}

/* Whether t has history; a stale view's is read as it will be after a
 * refresh (views.c). */
static bool has_history(const yg_tensor *t)
{
    if (t->autograd->view_base != NULL && !yg__view_is_current(t))
        return yg__view_has_history(t);
    return t->autograd->grad_fn != NULL;
}

bool yg_tensor_requires_grad(const yg_tensor *t)
{
    return t != NULL && t->autograd != NULL && (t->autograd->requires_grad || has_history(t));
}

bool yg_tensor_is_leaf(const yg_tensor *t)
{
    return t == NULL || t->autograd == NULL || !has_history(t);
}

yg_status yg_tensor_grad(const yg_tensor *t, yg_tensor **out)
{
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "grad: out-parameter out is NULL");
    *out = NULL;
    if (t != NULL && t->autograd != NULL) {
        yg__leaf_lock(t);
        *out = yg_retain(t->autograd->grad);
        yg__leaf_unlock(t);
    }
    return YG_OK;
}

void yg_tensor_zero_grad(yg_tensor *t)
{
    yg_tensor *old;
    if (t == NULL || t->autograd == NULL)
        return;
    yg__leaf_lock(t);
    old = t->autograd->grad;
    t->autograd->grad = NULL;
    yg__leaf_unlock(t);
    yg_release(old);
}

yg_status yg_detach(const yg_tensor *t, yg_tensor **out)
{
    YG_RETURN_IF_ERROR(yg__check_out("detach", "out", out));
    YG_RETURN_IF_ERROR(yg__check_defined("detach", "self", t));
    YG_RETURN_IF_ERROR(yg__tensor_alias(t, out));
    yg__obs_alias(*out, t);
    return YG_OK;
}

yg_status yg_detach_(yg_tensor *t)
{
    yg_autograd_meta *m;
    yg_node *old;

    YG_RETURN_IF_ERROR(yg__check_defined("detach_", "self", t));
    m = t->autograd;
    if (m == NULL)
        return YG_OK;
    old = m->grad_fn;
    if (m->retain_hook != NULL) {
        m->retain_hook->target = NULL;
        m->retain_hook = NULL;
    }
    m->grad_fn = NULL;
    m->output_nr = 0;
    m->requires_grad = false;
    /* A view stays detached when its base is written later: no refresh
     * gives it the base's history (views.c). */
    m->view_no_grad = true;
    yg__node_release(old);
    return YG_OK;
}

const char *yg_tensor_grad_fn_name(const yg_tensor *t)
{
    yg_node *fn = yg_tensor_grad_fn(t);
    return fn != NULL ? fn->vt->name : NULL;
}
