/*
 * node.c - backward nodes, edges, recording history and saved values.
 *
 * Releasing a node can release a long chain: each node holds its
 * predecessors through its edges, and saved inputs hold their own grad_fn.
 * A recursive release of a 100k-op chain would overflow the stack, so dead
 * nodes go onto a thread-local worklist (linked through the node itself,
 * no allocation) that the outermost yg__node_release drains.
 */
#include <stdlib.h>
#include <string.h>

#include "autograd/node.h"
#include "cpu/cpu.h"
#include "yagrad/autograd.h"

static atomic_ullong next_seq_nr;

static _Thread_local yg_node *dead_list;
static _Thread_local bool draining;

yg_status yg__node_new(const yg_node_vtable *vt, size_t size, int32_t n_edges, int32_t n_outputs,
                       yg_node **out)
{
    yg_node *n;

    *out = NULL;
    YG_ASSERT(size >= sizeof(yg_node));
    n = calloc(1, size);
    if (n == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of memory creating node", vt->name);
    n->next_edges = n_edges > 0 ? calloc((size_t)n_edges, sizeof *n->next_edges) : NULL;
    n->outputs = n_outputs > 0 ? calloc((size_t)n_outputs, sizeof *n->outputs) : NULL;
    if ((n_edges > 0 && n->next_edges == NULL) || (n_outputs > 0 && n->outputs == NULL)) {
        free(n->next_edges);
        free(n->outputs);
        free(n);
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of memory creating node", vt->name);
    }
    n->vt = vt;
    atomic_init(&n->refcount, 1);
    n->seq_nr = atomic_fetch_add(&next_seq_nr, 1);
    n->n_edges = n_edges;
    n->n_outputs = n_outputs;
    *out = n;
    return YG_OK;
}

yg_node *yg__node_retain(yg_node *n)
{
    if (n != NULL)
        atomic_fetch_add(&n->refcount, 1);
    return n;
}

static void node_destroy(yg_node *n)
{
    if (n->vt->release_saved != NULL)
        n->vt->release_saved(n);
    if (n->vt->destroy != NULL)
        n->vt->destroy(n);
    yg__hooks_free(n->pre_hooks);
    yg__hooks_free(n->post_hooks);
    for (int32_t i = 0; i < n->n_edges; i++)
        yg__node_release(n->next_edges[i].node);
    free(n->next_edges);
    free(n->outputs);
    free(n);
}

void yg__node_release(yg_node *n)
{
    if (n == NULL || atomic_fetch_sub(&n->refcount, 1) != 1)
        return;
    n->release_next = dead_list;
    dead_list = n;
    if (draining)
        return;
    draining = true;
    while (dead_list != NULL) {
        yg_node *d = dead_list;
        dead_list = d->release_next;
        node_destroy(d);
    }
    draining = false;
}

/* ---- recording ---- */

bool yg__any_requires_grad(int n, const yg_tensor *const *tensors)
{
    if (!yg_is_grad_enabled())
        return false;
    for (int i = 0; i < n; i++)
        if (yg_tensor_requires_grad(tensors[i]))
            return true;
    return false;
}

yg_status yg__node_set_edge(yg_node *node, int32_t i, const yg_tensor *t)
{
    yg_node *acc = NULL;

    YG_ASSERT(i >= 0 && i < node->n_edges);
    if (t == NULL || t->autograd == NULL)
        return YG_OK;
    YG_RETURN_IF_ERROR(yg__refresh_history(t));
    if (t->autograd->grad_fn != NULL) {
        node->next_edges[i].node = yg__node_retain(t->autograd->grad_fn);
        node->next_edges[i].input_nr = t->autograd->output_nr;
        return YG_OK;
    }
    if (!t->autograd->requires_grad)
        return YG_OK;
    /* The refcount is the only part of t that changes; t is a leaf. */
    YG_RETURN_IF_ERROR(yg__grad_accumulator((yg_tensor *)t, &acc));
    node->next_edges[i].node = acc;
    node->next_edges[i].input_nr = 0;
    return YG_OK;
}

yg_status yg__set_history(yg_tensor *t, yg_node *node, int32_t output_nr)
{
    yg_autograd_meta *m;
    yg_output_meta *om;

    YG_ASSERT(output_nr >= 0 && output_nr < node->n_outputs);
    /* float16 and bfloat16 results carry history like float32 ones: their
     * gradients have their dtype, and an op in the backward that does not
     * compute in it fails there with its dtype error. */
    if (!yg__dtype_is_floating(t->dtype) && !yg__dtype_is_half(t->dtype))
        return YG_OK;
    YG_RETURN_IF_ERROR(yg__autograd_meta_get(t, &m));
    yg__node_release(m->grad_fn);
    m->grad_fn = yg__node_retain(node);
    m->output_nr = output_nr;
    om = &node->outputs[output_nr];
    om->dtype = t->dtype;
    om->device = t->storage->device;
    om->device_index = t->storage->device_index;
    om->ndim = t->ndim;
    memcpy(om->sizes, t->sizes, sizeof om->sizes);
    if (m->view_base != NULL)
        atomic_store_explicit(&m->view_version, yg__tensor_version(t), memory_order_release);
    return YG_OK;
}

/* ---- saved values ---- */

yg_status yg__saved_save(yg_saved_tensor *s, const yg_tensor *t, bool is_output,
                         int32_t output_nr, const char *name)
{
    s->name = name;
    s->is_output = is_output;
    s->output_nr = output_nr;
    if (t == NULL)
        return YG_OK;
    if (is_output) {
        /* Keep the data, not the history: the output's grad_fn is the
         * saving node itself, and a strong ref would be a cycle. */
        YG_RETURN_IF_ERROR(yg__tensor_alias(t, &s->data));
    } else {
        s->data = yg_retain((yg_tensor *)t);
    }
    s->version = yg__tensor_version(t);
    s->was_saved = true;
    return YG_OK;
}

yg_status yg__saved_unpack(const yg_saved_tensor *s, yg_node *node, yg_tensor **out)
{
    yg_tensor *t = NULL;
    uint32_t version;

    *out = NULL;
    if (!s->was_saved)
        return YG_OK;
    if (node->saved_released || s->data == NULL)
        return yg__fail(YG_ERR_AUTOGRAD,
                        "%s: trying to backward through the graph a second time: its saved "
                        "values (%s) were freed by the first backward; pass retain_graph=true "
                        "to the first yg_backward",
                        node->vt->name, s->name);
    version = yg__tensor_version(s->data);
    if (version != s->version)
        return yg__fail(YG_ERR_AUTOGRAD,
                        "%s: a tensor saved for backward (%s) was modified by an in-place "
                        "operation: it is at version %u, expected version %u",
                        node->vt->name, s->name, version, s->version);
    if (s->is_output && yg_is_grad_enabled()) {
        /* Differentiating through the saved output: give it back its
         * history, this node (safe: the node is alive while it runs). */
        YG_RETURN_IF_ERROR(yg__tensor_alias(s->data, &t));
        yg_status st = yg__set_history(t, node, s->output_nr);
        if (st != YG_OK) {
            yg_release(t);
            return st;
        }
        *out = t;
        return YG_OK;
    }
    *out = yg_retain(s->data);
    return YG_OK;
}

void yg__saved_release(yg_saved_tensor *s)
{
    yg_tensor *t = s->data;
    s->data = NULL;
    yg_release(t);
}

yg_status yg__saved_int_list_save(yg_saved_int_list *s, const int64_t *items, int64_t len)
{
    s->len = 0;
    s->items = NULL;
    if (len <= 0)
        return YG_OK;
    s->items = malloc((size_t)len * sizeof *items);
    if (s->items == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "out of memory saving an int list");
    memcpy(s->items, items, (size_t)len * sizeof *items);
    s->len = len;
    return YG_OK;
}

yg_status yg__saved_sizes_at(const yg_saved_sizes *s, const char *name, int64_t dim, int64_t *out)
{
    char buf[256];

    *out = 0;
    if (dim < -(int64_t)s->ndim || dim >= (int64_t)s->ndim) {
        yg__format_sizes(s->sizes, s->ndim, buf, sizeof buf);
        if (s->ndim == 0)
            return yg__fail(YG_ERR_INDEX,
                            "size(%s, %lld): dim %lld out of range for %s %s (a 0-dim tensor "
                            "has no dims)",
                            name, (long long)dim, (long long)dim, name, buf);
        return yg__fail(YG_ERR_INDEX,
                        "size(%s, %lld): dim %lld out of range for %s %s (expected %d to %d)",
                        name, (long long)dim, (long long)dim, name, buf, -(int)s->ndim,
                        (int)s->ndim - 1);
    }
    *out = s->sizes[dim < 0 ? dim + s->ndim : dim];
    return YG_OK;
}

yg_status yg__saved_list_sizes_save(yg_saved_int_list *s,
                                    const yg_tensor *const *items,
                                    int64_t len,
                                    int64_t dim)
{
    s->len = 0;
    s->items = NULL;
    if (len <= 0)
        return YG_OK;
    s->items = malloc((size_t)len * sizeof *s->items);
    if (s->items == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "out of memory saving the sizes of a list");
    for (int64_t i = 0; i < len; i++) {
        int64_t ndim = yg_tensor_ndim(items[i]);
        int64_t d = dim < 0 ? dim + ndim : dim;
        if (d < 0 || d >= ndim) {
            free(s->items);
            s->items = NULL;
            return yg__fail(YG_ERR_INTERNAL,
                            "dim %lld out of range for item %lld of %lld dims",
                            (long long)dim, (long long)i, (long long)ndim);
        }
        s->items[i] = yg_tensor_sizes(items[i])[d];
    }
    s->len = len;
    return YG_OK;
}

void yg__saved_int_list_release(yg_saved_int_list *s)
{
    free(s->items);
    s->items = NULL;
    s->len = 0;
}

yg_status yg__saved_list_save(yg_saved_tensor_list *s,
                              const yg_tensor *const *items,
                              int64_t len,
                              const char *name)
{
    yg_status st;

    s->len = 0;
    s->items = NULL;
    if (len <= 0)
        return YG_OK;
    s->items = calloc((size_t)len, sizeof *s->items);
    if (s->items == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "out of memory saving %s", name);
    s->len = len;
    for (int64_t i = 0; i < len; i++) {
        st = yg__saved_save(&s->items[i], items[i], false, 0, name);
        if (st != YG_OK)
            return st; /* the node's release_saved frees what was saved */
    }
    return YG_OK;
}

yg_status yg__saved_list_unpack(const yg_saved_tensor_list *s, yg_node *node, yg_tensor ***out)
{
    yg_tensor **items;
    yg_status st;

    *out = NULL;
    if (s->len == 0)
        return YG_OK;
    if (s->items == NULL)
        return yg__fail(YG_ERR_AUTOGRAD,
                        "%s: trying to backward through the graph a second time: its saved "
                        "values were freed by the first backward; pass retain_graph=true to the "
                        "first yg_backward",
                        node->vt->name);
    items = calloc((size_t)s->len, sizeof *items);
    if (items == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of memory unpacking saved tensors",
                        node->vt->name);
    for (int64_t i = 0; i < s->len; i++) {
        st = yg__saved_unpack(&s->items[i], node, &items[i]);
        if (st != YG_OK) {
            yg_release_list(items, s->len);
            return st;
        }
    }
    *out = items;
    return YG_OK;
}

void yg__saved_list_release(yg_saved_tensor_list *s)
{
    /* len stays: a later unpack then knows the values are gone. */
    for (int64_t i = 0; s->items != NULL && i < s->len; i++)
        yg__saved_release(&s->items[i]);
    free(s->items);
    s->items = NULL;
}

yg_status yg__node_defined_grads(const yg_node *node, yg_tensor *const *grads, yg_tensor ***out)
{
    yg_tensor **items;
    yg_status st;

    *out = NULL;
    items = calloc(node->n_outputs > 0 ? (size_t)node->n_outputs : 1, sizeof *items);
    if (items == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of memory", node->vt->name);
    for (int32_t i = 0; i < node->n_outputs; i++) {
        const yg_output_meta *m = &node->outputs[i];
        if (grads[i] != NULL) {
            items[i] = yg_retain(grads[i]);
            continue;
        }
        st = yg__full_on(node->vt->name, m->sizes, m->ndim, m->dtype, m->device,
                         m->device_index, 0.0, &items[i]);
        if (st != YG_OK) {
            yg_release_list(items, node->n_outputs);
            return st;
        }
    }
    *out = items;
    return YG_OK;
}
