/*
 * views.c - autograd for views and in-place writes.
 *
 * A view shares storage with its base, so writing it in place changes the
 * base too.  When that happens the base's history must change: the
 * region the view covers now holds f(old region, other inputs).  As in
 * PyTorch, the base gets a CopySlices node: given the base's gradient, it
 * runs the in-place op's own backward on the view's region (fn), puts the
 * gradient for the old region back into that region, and sends the rest
 * to fn's other inputs.  The view itself becomes an as_strided view of the
 * rewritten base (AsStridedBackward), so later uses of either are right.
 *
 * Geometry: views keep sizes/strides/offset in storage coordinates; the
 * root base of an autograd view is contiguous (it was made by a kernel or
 * from data), so a view's place inside the base's gradient is its own
 * strides with offset (view offset - base offset).
 *
 * Double backward: with grad mode on inside apply (create_graph), both
 * nodes build their gradients from a region gather (AsStridedBackward is
 * its backward) and a region scatter into zeros (AsStridedScatterBackward,
 * whose backward is the gather) plus masked_fill, so the gradients carry
 * history to any order.  With grad mode off they keep the raw copies.
 *
 * Other views of the base (made before the write, or the base itself
 * when it is a view of another) read the new values too, yet their
 * grad_fn still points at the history before it.  As in PyTorch, a view
 * records the storage version at which its history was set; a read of its
 * history (to record an edge or a hook, or yg_tensor_grad_fn) that finds
 * the storage at another version first regenerates it as an
 * AsStridedBackward of the base's current history.  The version check is
 * lock-free (an acquire load matched by the release store that publishes
 * a new grad_fn); a regeneration builds the node outside any lock (its
 * edge may take the base's leaf lock) and swaps it in under the view's
 * leaf lock, so concurrent readers of one view regenerate it once.
 */
#include <stdlib.h>
#include <string.h>

#include "autograd/node.h"
#include "cpu/cpu.h"
#include "decls/inplace_fill.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_blend.h"
#include "yagrad/ops_views.h"

typedef struct view_geometry {
    int32_t ndim;
    int64_t sizes[YG_MAX_DIMS];
    int64_t strides[YG_MAX_DIMS];
    int64_t offset; /* relative to the base's first element */
} view_geometry;

static void geometry_of(const yg_tensor *view, const yg_tensor *base, view_geometry *g)
{
    g->ndim = view->ndim;
    memcpy(g->sizes, view->sizes, sizeof g->sizes);
    memcpy(g->strides, view->strides, sizeof g->strides);
    g->offset = view->offset - base->offset;
}

/* A view of t (contiguous, base-shaped) at geometry g. */
static yg_status slice_of(const yg_tensor *t, const view_geometry *g, yg_tensor **out)
{
    return yg__tensor_view("as_strided", t, g->sizes, g->strides, g->ndim, t->offset + g->offset, out);
}

yg_status yg__make_view(yg_tensor *view, const yg_tensor *self, const char *multi_output_op)
{
    yg_autograd_meta *m;
    const yg_tensor *root = self;

    if (self->autograd != NULL && self->autograd->view_base != NULL)
        root = self->autograd->view_base;
    YG_RETURN_IF_ERROR(yg__autograd_meta_get(view, &m));
    yg_release(m->view_base);
    m->view_base = yg_retain((yg_tensor *)root);
    m->view_op = multi_output_op;
    m->view_no_grad = !yg_is_grad_enabled();
    atomic_store_explicit(&m->view_version, yg__tensor_version(view), memory_order_release);
    return YG_OK;
}

yg_status yg__check_inplace(const char *op, const yg_tensor *self)
{
    const yg_autograd_meta *m = self->autograd;

    if (!yg_is_grad_enabled() || m == NULL)
        return YG_OK;
    if (m->grad_fn == NULL && m->requires_grad && m->view_base == NULL)
        return yg__fail(YG_ERR_AUTOGRAD,
                        "%s: in-place operation on a leaf tensor that requires grad (self) "
                        "would make its .grad wrong; do it under yg_set_grad_enabled(false), or "
                        "on a clone",
                        op);
    if (m->view_base != NULL) {
        const yg_autograd_meta *bm = m->view_base->autograd;
        if (bm != NULL && bm->grad_fn == NULL && bm->requires_grad)
            return yg__fail(YG_ERR_AUTOGRAD,
                            "%s: in-place operation on a view of a leaf tensor that requires "
                            "grad (self); do it under yg_set_grad_enabled(false), or on a clone",
                            op);
        if (m->view_op != NULL && yg_tensor_requires_grad(self))
            return yg__fail(YG_ERR_AUTOGRAD,
                            "%s: self is one of several views returned by %s; in-place on it "
                            "is not allowed because the gradients of the other views would be "
                            "wrong; clone it first",
                            op, m->view_op);
    }
    return YG_OK;
}

/* ---- region gather and scatter, recorded under grad mode ---- */

typedef struct as_strided_backward {
    yg_node base;
    view_geometry view;
    int32_t base_ndim;
    int64_t base_sizes[YG_MAX_DIMS];
} as_strided_backward;

typedef struct as_strided_scatter_backward {
    yg_node base;
    view_geometry view;
} as_strided_scatter_backward;

static const yg_node_vtable as_strided_vtable;
static const yg_node_vtable as_strided_scatter_vtable;

/* out = a contiguous copy of the region g of t (base-shaped).  With grad
 * mode on and t requiring grad, out's history is an AsStridedBackward
 * (a scatter) into t. */
static yg_status region_gather(const yg_tensor *t, const view_geometry *g, yg_tensor **out)
{
    const yg_tensor *in[1] = {t};
    yg_tensor *dense = NULL, *region = NULL, *result = NULL;
    yg_node *node = NULL;
    bool record = yg__any_requires_grad(1, in);
    bool prev = yg_set_grad_enabled(false);
    yg_status st = YG_OK;

    *out = NULL;
    if (!yg_tensor_is_contiguous(t))
        st = yg_clone(t, &dense);
    if (st == YG_OK)
        st = slice_of(dense != NULL ? dense : t, g, &region);
    if (st == YG_OK)
        st = yg_clone(region, &result);
    yg_set_grad_enabled(prev);
    if (st == YG_OK && record)
        st = yg__node_new(&as_strided_vtable, sizeof(as_strided_backward), 1, 1, &node);
    if (st == YG_OK && record) {
        as_strided_backward *asb = (as_strided_backward *)node;
        asb->view = *g;
        asb->base_ndim = t->ndim;
        memcpy(asb->base_sizes, t->sizes, sizeof t->sizes);
        st = yg__node_set_edge(node, 0, t);
        if (st == YG_OK)
            st = yg__set_history(result, node, 0);
    }
    if (st == YG_OK) {
        *out = result;
        result = NULL;
    }
    yg__node_release(node);
    yg_release(result);
    yg_release(region);
    yg_release(dense);
    return st;
}

/* out = zeros of the base's sizes (grad's dtype) with region g set to
 * grad.  With grad mode on and grad requiring grad, out's history is an
 * AsStridedScatterBackward (a gather) into grad. */
static yg_status region_scatter(const yg_tensor *grad, const view_geometry *g, int32_t base_ndim,
                                const int64_t *base_sizes, yg_tensor **out)
{
    const yg_tensor *in[1] = {grad};
    yg_tensor *result = NULL, *region = NULL, *same = NULL;
    yg_node *node = NULL;
    bool record = yg__any_requires_grad(1, in);
    yg_status st;

    *out = NULL;
    st = yg__full_on("AsStridedScatterBackward", base_sizes, base_ndim, grad->dtype,
                     grad->storage->device, grad->storage->device_index, 0.0, &result);
    if (st == YG_OK)
        st = slice_of(result, g, &region);
    if (st == YG_OK)
        st = yg__kernel_copy_(region, grad, &same);
    if (st == YG_OK && record)
        st = yg__node_new(&as_strided_scatter_vtable, sizeof(as_strided_scatter_backward), 1, 1,
                          &node);
    if (st == YG_OK && record) {
        ((as_strided_scatter_backward *)node)->view = *g;
        st = yg__node_set_edge(node, 0, grad);
        if (st == YG_OK)
            st = yg__set_history(result, node, 0);
    }
    if (st == YG_OK) {
        *out = result;
        result = NULL;
    }
    yg__node_release(node);
    yg_release(same);
    yg_release(region);
    yg_release(result);
    return st;
}

/* AsStridedBackward: a view's history after its base was rewritten (and
 * the history of a region gather).  Its gradient is the scatter. */
static yg_status as_strided_apply(yg_node *base, yg_tensor *const *grads, yg_tensor **grad_inputs)
{
    as_strided_backward *node = (as_strided_backward *)base;
    return region_scatter(grads[0], &node->view, node->base_ndim, node->base_sizes,
                          &grad_inputs[0]);
}

static const yg_node_vtable as_strided_vtable = {
    .name = "AsStridedBackward",
    .apply = as_strided_apply,
};

/* AsStridedScatterBackward: the history of a region scatter; its gradient
 * is the gather of the same region. */
static yg_status as_strided_scatter_apply(yg_node *base, yg_tensor *const *grads,
                                          yg_tensor **grad_inputs)
{
    as_strided_scatter_backward *node = (as_strided_scatter_backward *)base;
    return region_gather(grads[0], &node->view, &grad_inputs[0]);
}

static const yg_node_vtable as_strided_scatter_vtable = {
    .name = "AsStridedScatterBackward",
    .apply = as_strided_scatter_apply,
};

/* Bool mask of the base's sizes, true on region g. */
static yg_status region_mask(const yg_tensor *like, const view_geometry *g, yg_tensor **out)
{
    yg_tensor *mask = NULL, *region = NULL, *same = NULL;
    yg_status st;

    *out = NULL;
    st = yg__full_on("region_mask", like->sizes, like->ndim, YG_BOOL, like->storage->device,
                     like->storage->device_index, 0.0, &mask);
    if (st == YG_OK)
        st = slice_of(mask, g, &region);
    if (st == YG_OK)
        st = yg__kernel_fill_(region, 1.0, &same);
    if (st == YG_OK) {
        *out = mask;
        mask = NULL;
    }
    yg_release(same);
    yg_release(region);
    yg_release(mask);
    return st;
}

/* ---- CopySlices ---- */

typedef struct copy_slices {
    yg_node base;
    yg_node *fn;         /* the in-place op's backward, strong */
    view_geometry view;  /* the written region of the base */
} copy_slices;

/* CopySlices under grad mode (create_graph): the same result built from
 * recorded ops, result = masked_fill(grad, region, 0) + scatter(fn's
 * gradient for the old region), fn applied to gather(grad). */
static yg_status copy_slices_apply_recorded(copy_slices *node, yg_tensor *const *grads,
                                            yg_tensor **fn_grads, yg_tensor **result)
{
    yg_node *fn = node->fn;
    const yg_tensor *g = grads[0];
    yg_tensor *grad_view = NULL, *mask = NULL, *kept = NULL, *placed = NULL;
    yg_status st;

    *result = NULL;
    st = region_gather(g, &node->view, &grad_view);
    if (st == YG_OK)
        st = fn->vt->apply(fn, &grad_view, fn_grads);
    if (st == YG_OK)
        st = region_mask(g, &node->view, &mask);
    if (st == YG_OK)
        st = yg_masked_fill(g, mask, 0.0, &kept);
    if (st == YG_OK && fn_grads[0] != NULL)
        st = region_scatter(fn_grads[0], &node->view, g->ndim, g->sizes, &placed);
    if (st == YG_OK && placed != NULL)
        st = yg_add(kept, placed, 1.0, result);
    else if (st == YG_OK) {
        *result = kept;
        kept = NULL;
    }
    yg_release(placed);
    yg_release(kept);
    yg_release(mask);
    yg_release(grad_view);
    return st;
}

/* CopySlices with grad mode off: raw copies into a clone of grad. */
static yg_status copy_slices_apply_raw(copy_slices *node, yg_tensor *const *grads,
                                       yg_tensor **fn_grads, yg_tensor **result)
{
    yg_node *fn = node->fn;
    yg_tensor *region = NULL, *grad_view = NULL, *same = NULL;
    yg_status st;

    st = yg_clone(grads[0], result);
    if (st == YG_OK)
        st = slice_of(*result, &node->view, &region);
    if (st == YG_OK)
        st = yg_clone(region, &grad_view);
    if (st == YG_OK)
        st = fn->vt->apply(fn, &grad_view, fn_grads);
    if (st == YG_OK && fn_grads[0] != NULL)
        st = yg__kernel_copy_(region, fn_grads[0], &same);
    else if (st == YG_OK)
        st = yg__kernel_zero_(region, &same);
    if (st != YG_OK) {
        yg_release(*result);
        *result = NULL;
    }
    yg_release(same);
    yg_release(grad_view);
    yg_release(region);
    return st;
}

static yg_status copy_slices_apply(yg_node *base, yg_tensor *const *grads,
                                   yg_tensor **grad_inputs)
{
    copy_slices *node = (copy_slices *)base;
    yg_node *fn = node->fn;
    yg_tensor *result = NULL;
    yg_tensor **fn_grads = NULL;
    yg_status st;

    fn_grads = calloc((size_t)fn->n_edges, sizeof *fn_grads);
    if (fn_grads == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "CopySlices: out of memory");
    /* result = grads[0] with the view's region replaced by the gradient
     * of the region's old values. */
    if (yg_is_grad_enabled())
        st = copy_slices_apply_recorded(node, grads, fn_grads, &result);
    else
        st = copy_slices_apply_raw(node, grads, fn_grads, &result);
    if (st != YG_OK)
        goto out;
    grad_inputs[0] = result;
    for (int32_t i = 1; i < fn->n_edges; i++) {
        grad_inputs[i] = fn_grads[i];
        fn_grads[i] = NULL;
    }
out:
    for (int32_t i = 0; i < fn->n_edges; i++)
        yg_release(fn_grads[i]);
    free(fn_grads);
    return st;
}

static void copy_slices_release_saved(yg_node *base)
{
    copy_slices *node = (copy_slices *)base;
    if (node->fn->vt->release_saved != NULL)
        node->fn->vt->release_saved(node->fn);
    node->fn->saved_released = true;
}

static void copy_slices_destroy(yg_node *base)
{
    yg__node_release(((copy_slices *)base)->fn);
}

static const yg_node_vtable copy_slices_vtable = {
    .name = "CopySlices",
    .apply = copy_slices_apply,
    .release_saved = copy_slices_release_saved,
    .destroy = copy_slices_destroy,
};

/* ---- a view's history from its base ---- */

/* A new AsStridedBackward node for view of root (contiguous), its edge
 * the root's current gradient edge and its output view's metadata. */
static yg_status as_strided_node(const yg_tensor *view, const yg_tensor *root, yg_node **out)
{
    as_strided_backward *asb;
    yg_node *node = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__node_new(&as_strided_vtable, sizeof(as_strided_backward), 1, 1, &node));
    st = yg__node_set_edge(node, 0, root);
    if (st != YG_OK) {
        yg__node_release(node);
        return st;
    }
    asb = (as_strided_backward *)node;
    geometry_of(view, root, &asb->view);
    asb->base_ndim = root->ndim;
    memcpy(asb->base_sizes, root->sizes, sizeof root->sizes);
    node->outputs[0].dtype = view->dtype;
    node->outputs[0].device = view->storage->device;
    node->outputs[0].device_index = view->storage->device_index;
    node->outputs[0].ndim = view->ndim;
    memcpy(node->outputs[0].sizes, view->sizes, sizeof view->sizes);
    *out = node;
    return YG_OK;
}

/* A view without history stays so when it is a leaf that requires grad
 * (requires_grad_ on a view of a base without history: it keeps its
 * AccumulateGrad) or was made with grad mode off or detach_'d (a
 * constant, as before the base was written; its own in-place write under
 * grad mode would give it history). */
static bool stays_without_history(const yg_autograd_meta *m)
{
    return m->grad_fn == NULL && (m->requires_grad || m->view_no_grad);
}

yg_status yg__view_refresh(const yg_tensor *t)
{
    yg_autograd_meta *m = t->autograd;
    const yg_tensor *root = m->view_base;
    uint32_t version = yg__tensor_version(t);
    yg_node *fn = NULL, *old = NULL;
    yg_hook *retain = NULL;
    yg_status st = YG_OK;

    /* Built before taking t's lock: the edge may take root's leaf lock,
     * which can be the same stripe. */
    if (yg_tensor_requires_grad(root)) {
        if (!yg_tensor_is_contiguous(root))
            return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                            "AsStridedBackward: a view of a non-contiguous base read after an "
                            "in-place write to the base is not supported");
        YG_RETURN_IF_ERROR(as_strided_node(t, root, &fn));
    }
    yg__leaf_lock(t);
    if (!yg__view_is_current(t) && !stays_without_history(m)) {
        /* retain_grad follows the tensor to its new node; the old node
         * keeps serving graphs recorded before, without writing t's grad. */
        if (fn != NULL && m->retain_hook != NULL)
            st = yg__retain_hook_new((yg_tensor *)t, 0, &retain);
        if (st == YG_OK) {
            old = m->grad_fn;
            m->grad_fn = fn;
            m->output_nr = 0;
            fn = NULL;
            if (m->retain_hook != NULL) {
                m->retain_hook->target = NULL;
                m->retain_hook = retain;
            }
            if (retain != NULL)
                m->grad_fn->pre_hooks = retain; /* a new node: no hooks yet */
        }
    }
    if (st == YG_OK)
        atomic_store_explicit(&m->view_version, version, memory_order_release);
    yg__leaf_unlock(t);
    yg__node_release(fn); /* unused: another thread regenerated first */
    yg__node_release(old);
    return st;
}

bool yg__view_has_history(const yg_tensor *t)
{
    yg_autograd_meta *m = t->autograd;
    uint32_t version = yg__tensor_version(t);
    bool has;

    yg__leaf_lock(t);
    if (yg__view_is_current(t) || stays_without_history(m)) {
        has = m->grad_fn != NULL;
    } else {
        has = yg_tensor_requires_grad(m->view_base);
        /* Nothing to regenerate: mark it current, so later reads stay on
         * the lock-free path. */
        if (!has && m->grad_fn == NULL)
            atomic_store_explicit(&m->view_version, version, memory_order_release);
    }
    yg__leaf_unlock(t);
    return has;
}

/* ---- rebase ---- */

yg_status yg__rebase_history(yg_tensor *self, yg_node *node)
{
    yg_tensor *root = self->autograd != NULL ? self->autograd->view_base : NULL;
    yg_node *cs = NULL, *asb = NULL;
    yg_edge old_base_edge = {NULL, 0};
    yg_status st;

    if (root == NULL)
        return yg__set_history(self, node, 0);
    if (!yg_tensor_is_contiguous(root))
        return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                        "%s: in-place on a view of a non-contiguous base is not supported",
                        node->vt->name);
    /* The base's old gradient edge: where the gradient for the base's
     * values before this write goes.  fn's own edge 0 is redirected there
     * so fn computes the old region's gradient exactly when it is wanted. */
    YG_RETURN_IF_ERROR(yg__node_new(&copy_slices_vtable, sizeof(copy_slices), node->n_edges, 1,
                                    &cs));
    st = yg__node_set_edge(cs, 0, root);
    if (st != YG_OK)
        goto out;
    old_base_edge = cs->next_edges[0];
    yg__node_release(node->next_edges[0].node);
    node->next_edges[0].node = yg__node_retain(old_base_edge.node);
    node->next_edges[0].input_nr = old_base_edge.input_nr;
    for (int32_t i = 1; i < node->n_edges; i++) {
        cs->next_edges[i].node = yg__node_retain(node->next_edges[i].node);
        cs->next_edges[i].input_nr = node->next_edges[i].input_nr;
    }
    ((copy_slices *)cs)->fn = yg__node_retain(node);
    geometry_of(self, root, &((copy_slices *)cs)->view);
    st = yg__set_history(root, cs, 0);
    if (st != YG_OK)
        goto out;
    /* The view now reads the rewritten base. */
    st = as_strided_node(self, root, &asb);
    if (st != YG_OK)
        goto out;
    st = yg__set_history(self, asb, 0);
out:
    yg__node_release(asb);
    yg__node_release(cs);
    return st;
}
