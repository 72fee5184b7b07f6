/*
 * engine.c - yg_backward: runs the backward graph of a root tensor.
 *
 * Two passes, both O(nodes + edges) with no recursion (chains of 100k ops
 * must not overflow the stack):
 *   1. discovery: an explicit-stack DFS from the root's edge finds every
 *      reachable node and counts, per node, the edges that point at it;
 *   2. execution: a node is ready when all its incoming gradients have
 *      arrived (count 0).  Among ready nodes the one created last (highest
 *      seq_nr) runs first, as in PyTorch, which keeps memory low for the
 *      usual "later ops depend on earlier ones" graphs.
 * Gradients for one node slot are summed in an input buffer.  Each
 * gradient is checked against the forward tensor's recorded dtype and
 * sizes; a gradient that is a broadcast of it (an op broadcast the input)
 * is reduced with sum_to, so formulas never handle broadcasting.
 * Backward runs with grad mode off; saved values are released after each
 * node unless retain_graph.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/node.h"
#include "yagrad/autograd.h"
#include "yagrad/ops.h"

typedef struct task_node {
    yg_node *node;       /* borrowed: the root's history keeps it alive */
    int64_t deps;        /* incoming edges not yet delivered */
    yg_tensor **buffer;  /* n_outputs gradients, owned, NULL: undefined */
} task_node;

typedef struct graph_task {
    task_node *nodes;
    int64_t len, cap;
    int64_t *slots; /* open addressing: node pointer -> index, -1 empty */
    int64_t slot_cap;
    int64_t *heap;  /* ready node indices, max-heap on seq_nr */
    int64_t heap_len;
} graph_task;

static uint64_t hash_ptr(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static yg_status oom(void)
{
    return yg__fail(YG_ERR_OUT_OF_MEMORY, "backward: out of memory");
}

static yg_status rehash(graph_task *g)
{
    int64_t cap = g->slot_cap ? g->slot_cap * 2 : 64;
    int64_t *slots = malloc((size_t)cap * sizeof *slots);
    if (slots == NULL)
        return oom();
    for (int64_t i = 0; i < cap; i++)
        slots[i] = -1;
    for (int64_t i = 0; i < g->len; i++) {
        uint64_t h = hash_ptr(g->nodes[i].node) & (uint64_t)(cap - 1);
        while (slots[h] != -1)
            h = (h + 1) & (uint64_t)(cap - 1);
        slots[h] = i;
    }
    free(g->slots);
    g->slots = slots;
    g->slot_cap = cap;
    return YG_OK;
}

/* Index of node in the task, adding it when new (*added set). */
static yg_status find_or_add(graph_task *g, yg_node *node, int64_t *index, bool *added)
{
    uint64_t h;

    if ((g->len + 1) * 2 > g->slot_cap)
        YG_RETURN_IF_ERROR(rehash(g));
    h = hash_ptr(node) & (uint64_t)(g->slot_cap - 1);
    while (g->slots[h] != -1) {
        if (g->nodes[g->slots[h]].node == node) {
            *index = g->slots[h];
            *added = false;
            return YG_OK;
        }
        h = (h + 1) & (uint64_t)(g->slot_cap - 1);
    }
    if (g->len == g->cap) {
        int64_t cap = g->cap ? g->cap * 2 : 32;
        task_node *nodes = realloc(g->nodes, (size_t)cap * sizeof *nodes);
        if (nodes == NULL)
            return oom();
        g->nodes = nodes;
        g->cap = cap;
    }
    g->nodes[g->len].node = node;
    g->nodes[g->len].deps = 0;
    g->nodes[g->len].buffer = calloc((size_t)node->n_outputs, sizeof(yg_tensor *));
    if (g->nodes[g->len].buffer == NULL && node->n_outputs > 0)
        return oom();
    g->slots[h] = g->len;
    *index = g->len++;
    *added = true;
    return YG_OK;
}

static yg_status discover(graph_task *g, yg_node *root, int64_t *root_index)
{
    int64_t *stack = NULL, sp = 0, stack_cap = 0, idx;
    bool added;
    yg_status st;

    st = find_or_add(g, root, root_index, &added);
    if (st != YG_OK)
        return st;
    stack_cap = 32;
    stack = malloc((size_t)stack_cap * sizeof *stack);
    if (stack == NULL)
        return oom();
    stack[sp++] = *root_index;
    while (sp > 0) {
        yg_node *n = g->nodes[stack[--sp]].node;
        for (int32_t e = 0; e < n->n_edges; e++) {
            yg_node *next = n->next_edges[e].node;
            if (next == NULL)
                continue;
            st = find_or_add(g, next, &idx, &added);
            if (st != YG_OK)
                goto out;
            g->nodes[idx].deps++;
            if (!added)
                continue;
            if (sp == stack_cap) {
                int64_t *s = realloc(stack, (size_t)stack_cap * 2 * sizeof *s);
                if (s == NULL) {
                    st = oom();
                    goto out;
                }
                stack = s;
                stack_cap *= 2;
            }
            stack[sp++] = idx;
        }
    }
out:
    free(stack);
    return st;
}

static bool heap_less(const graph_task *g, int64_t a, int64_t b)
{
    return g->nodes[a].node->seq_nr < g->nodes[b].node->seq_nr;
}

static void heap_push(graph_task *g, int64_t idx)
{
    int64_t i = g->heap_len++;
    g->heap[i] = idx;
    while (i > 0 && heap_less(g, g->heap[(i - 1) / 2], g->heap[i])) {
        int64_t p = (i - 1) / 2, tmp = g->heap[p];
        g->heap[p] = g->heap[i];
        g->heap[i] = tmp;
        i = p;
    }
}

static int64_t heap_pop(graph_task *g)
{
    int64_t top = g->heap[0], i = 0;
    g->heap[0] = g->heap[--g->heap_len];
    for (;;) {
        int64_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < g->heap_len && heap_less(g, g->heap[m], g->heap[l]))
            m = l;
        if (r < g->heap_len && heap_less(g, g->heap[m], g->heap[r]))
            m = r;
        if (m == i)
            break;
        int64_t tmp = g->heap[m];
        g->heap[m] = g->heap[i];
        g->heap[i] = tmp;
        i = m;
    }
    return top;
}

static bool same_sizes(const yg_output_meta *m, const yg_tensor *t)
{
    if (m->ndim != t->ndim)
        return false;
    for (int32_t i = 0; i < m->ndim; i++)
        if (m->sizes[i] != t->sizes[i])
            return false;
    return true;
}

/* Whether a tensor of sizes m broadcasts to t's sizes. */
static bool expandable_to(const yg_output_meta *m, const yg_tensor *t)
{
    if (m->ndim > t->ndim)
        return false;
    for (int32_t i = 0; i < m->ndim; i++) {
        int64_t ms = m->sizes[m->ndim - 1 - i], ts = t->sizes[t->ndim - 1 - i];
        if (ms != ts && ms != 1)
            return false;
    }
    return true;
}

/* Makes *grad (owned) match the forward tensor described by m. */
static yg_status conform(const yg_node *producer, int32_t edge, const yg_output_meta *m,
                         yg_tensor **grad)
{
    yg_tensor *fixed = NULL;
    char a[128], b[128];

    if (!same_sizes(m, *grad)) {
        if (!expandable_to(m, *grad))
            return yg__fail(YG_ERR_INTERNAL,
                            "%s: returned a gradient of shape %s for input %d, expected %s",
                            producer->vt->name,
                            yg__format_sizes((*grad)->sizes, (*grad)->ndim, a, sizeof a), edge,
                            yg__format_sizes(m->sizes, m->ndim, b, sizeof b));
        YG_RETURN_IF_ERROR(yg_sum_to(*grad, m->sizes, m->ndim, &fixed));
        yg_release(*grad);
        *grad = fixed;
        fixed = NULL;
    }
    if ((*grad)->dtype != m->dtype) {
        YG_RETURN_IF_ERROR(yg__tensor_contiguous_as(*grad, m->dtype, true, &fixed));
        yg_release(*grad);
        *grad = fixed;
    }
    return YG_OK;
}

/* Adds grad (owned, consumed) into slot. */
static yg_status buffer_add(yg_tensor **slot, yg_tensor *grad)
{
    yg_tensor *sum = NULL;
    yg_status st;

    if (*slot == NULL) {
        *slot = grad;
        return YG_OK;
    }
    st = yg_add(*slot, grad, 1.0, &sum);
    yg_release(grad);
    if (st != YG_OK)
        return st;
    yg_release(*slot);
    *slot = sum;
    return YG_OK;
}

static yg_status run_node(graph_task *g, int64_t idx, bool retain_graph)
{
    task_node *t = &g->nodes[idx];
    yg_node *n = t->node;
    yg_tensor **grad_inputs = NULL;
    bool any_defined = false;
    yg_status st = YG_OK;

    for (int32_t i = 0; i < n->n_outputs; i++)
        any_defined |= t->buffer[i] != NULL;
    if (n->n_edges > 0) {
        grad_inputs = calloc((size_t)n->n_edges, sizeof *grad_inputs);
        if (grad_inputs == NULL)
            return oom();
    }
    if (any_defined) {
        st = n->vt->apply(n, t->buffer, grad_inputs);
        if (st != YG_OK) {
            yg__fail_prefix(st, n->vt->name);
            goto out;
        }
    }
    if (!retain_graph && n->vt->release_saved != NULL) {
        n->vt->release_saved(n);
        n->saved_released = true;
    }
    for (int32_t e = 0; e < n->n_edges; e++) {
        yg_edge *edge = &n->next_edges[e];
        int64_t next;
        bool added;
        if (edge->node == NULL)
            continue;
        st = find_or_add(g, edge->node, &next, &added);
        if (st != YG_OK)
            goto out;
        t = &g->nodes[idx]; /* find_or_add never adds here, but stay safe */
        if (grad_inputs[e] != NULL) {
            yg_tensor *gi = grad_inputs[e];
            grad_inputs[e] = NULL;
            st = conform(n, e, &edge->node->outputs[edge->input_nr], &gi);
            if (st == YG_OK)
                st = buffer_add(&g->nodes[next].buffer[edge->input_nr], gi);
            else
                yg_release(gi);
            if (st != YG_OK)
                goto out;
        }
        if (--g->nodes[next].deps == 0)
            heap_push(g, next);
    }
out:
    for (int32_t e = 0; e < n->n_edges && grad_inputs != NULL; e++)
        yg_release(grad_inputs[e]);
    free(grad_inputs);
    t = &g->nodes[idx];
    for (int32_t i = 0; i < n->n_outputs; i++) {
        yg_release(t->buffer[i]);
        t->buffer[i] = NULL;
    }
    return st;
}

static void graph_task_free(graph_task *g)
{
    for (int64_t i = 0; i < g->len; i++) {
        for (int32_t j = 0; j < g->nodes[i].node->n_outputs; j++)
            yg_release(g->nodes[i].buffer[j]);
        free(g->nodes[i].buffer);
    }
    free(g->nodes);
    free(g->slots);
    free(g->heap);
}

static yg_status root_gradient(const yg_tensor *root, const yg_tensor *grad, yg_tensor **out)
{
    char a[128], b[128];

    *out = NULL;
    if (grad == NULL) {
        if (yg_tensor_numel(root) != 1)
            return yg__fail(YG_ERR_AUTOGRAD,
                            "backward: grad can be omitted only for a root with one element, "
                            "got root %s; pass grad",
                            yg__format_sizes(root->sizes, root->ndim, a, sizeof a));
        return yg_tensor_full(root->sizes, root->ndim, 1.0, root->dtype, out);
    }
    if (grad->ndim != root->ndim ||
        memcmp(grad->sizes, root->sizes, (size_t)root->ndim * sizeof(int64_t)) != 0)
        return yg__fail(YG_ERR_SHAPE, "backward: grad %s does not match root %s",
                        yg__format_sizes(grad->sizes, grad->ndim, a, sizeof a),
                        yg__format_sizes(root->sizes, root->ndim, b, sizeof b));
    return yg__tensor_contiguous_as(grad, root->dtype, true, out);
}

yg_status yg_backward(yg_tensor *root, const yg_tensor *grad, bool retain_graph)
{
    graph_task g = {0};
    yg_node *root_node = NULL;
    yg_tensor *root_grad = NULL;
    int64_t root_index;
    int32_t root_slot;
    bool prev_mode;
    yg_status st;

    YG_RETURN_IF_ERROR(yg__check_defined("backward", "root", root));
    if (!yg_tensor_requires_grad(root))
        return yg__fail(YG_ERR_AUTOGRAD,
                        "backward: root does not require grad and has no grad_fn (no input of "
                        "its computation requires grad, or it ran with grad mode off)");
    if (root->autograd->grad_fn != NULL) {
        root_node = yg__node_retain(root->autograd->grad_fn);
        root_slot = root->autograd->output_nr;
    } else {
        YG_RETURN_IF_ERROR(yg__grad_accumulator(root, &root_node));
        root_slot = 0;
    }
    prev_mode = yg_set_grad_enabled(false);
    st = root_gradient(root, grad, &root_grad);
    if (st != YG_OK)
        goto out;
    st = discover(&g, root_node, &root_index);
    if (st != YG_OK)
        goto out;
    g.heap = malloc((size_t)g.len * sizeof *g.heap);
    if (g.heap == NULL) {
        st = oom();
        goto out;
    }
    g.nodes[root_index].buffer[root_slot] = root_grad;
    root_grad = NULL;
    heap_push(&g, root_index);
    while (g.heap_len > 0) {
        st = run_node(&g, heap_pop(&g), retain_graph);
        if (st != YG_OK)
            goto out;
    }
out:
    yg_set_grad_enabled(prev_mode);
    yg_release(root_grad);
    graph_task_free(&g);
    yg__node_release(root_node);
    return st;
}
