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
 * Gradients for one node slot are summed in an input buffer, in place
 * when no one else holds the buffer's tensor.  Each
 * gradient is checked against the forward tensor's recorded dtype and
 * sizes; a gradient that is a broadcast of it (an op broadcast the input)
 * is reduced with sum_to, so formulas never handle broadcasting.
 * Backward runs with grad mode off, unless create_graph: then every
 * formula is itself recorded and the gradients can be differentiated
 * again.  Saved values are released after each node unless retain_graph.
 *
 * yg_grad shares all of this: instead of running AccumulateGrad it
 * captures the gradient arriving at each input's edge, and it runs only
 * the nodes from which a captured edge is reachable ("needed").
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/node.h"
#include "core/observer.h"
#include "cpu/cpu.h"
#include "kernels/arithmetic.h"
#include "yagrad/autograd.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_dtype_conversion.h"
#include "yagrad/ops_sums.h"

typedef struct task_node {
    yg_node *node;       /* borrowed: the roots' history keeps it alive */
    int64_t deps;        /* incoming edges not yet delivered */
    yg_tensor **buffer;  /* n_outputs gradients, owned, NULL: undefined */
    bool needed;         /* apply runs (always, unless capturing) */
    bool visited;        /* private to mark_needed */
} task_node;

/* yg_grad: where input i's gradient arrives, and what arrived. */
typedef struct capture {
    yg_node *node;
    int32_t input_nr;
    yg_tensor *grad; /* owned */
} capture;

typedef struct graph_task {
    task_node *nodes;
    int64_t len, cap;
    int64_t *slots; /* open addressing: node pointer -> index, -1 empty */
    int64_t slot_cap;
    int64_t *heap;  /* ready node indices, max-heap on seq_nr */
    int64_t heap_len;
    bool retain_graph;
    capture *captures; /* NULL: accumulate into leaves (yg_backward) */
    int64_t n_captures;
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
    g->nodes[g->len].needed = true;
    g->nodes[g->len].visited = false;
    g->nodes[g->len].buffer = calloc((size_t)node->n_outputs, sizeof(yg_tensor *));
    if (g->nodes[g->len].buffer == NULL && node->n_outputs > 0)
        return oom();
    g->slots[h] = g->len;
    *index = g->len++;
    *added = true;
    return YG_OK;
}

/* Adds root and, when it is new, everything reachable from it, counting
 * each edge into its target's deps. */
static yg_status discover(graph_task *g, yg_node *root, int64_t *root_index)
{
    int64_t *stack = NULL, sp = 0, stack_cap = 32, idx;
    bool added;
    yg_status st;

    st = find_or_add(g, root, root_index, &added);
    if (st != YG_OK || !added)
        return st;
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

static int64_t index_of(const graph_task *g, const yg_node *node)
{
    uint64_t h = hash_ptr(node) & (uint64_t)(g->slot_cap - 1);
    while (g->slots[h] != -1) {
        if (g->nodes[g->slots[h]].node == node)
            return g->slots[h];
        h = (h + 1) & (uint64_t)(g->slot_cap - 1);
    }
    return -1;
}

static bool is_captured(const graph_task *g, const yg_edge *e)
{
    for (int64_t c = 0; c < g->n_captures; c++)
        if (g->captures[c].node == e->node && g->captures[c].input_nr == e->input_nr)
            return true;
    return false;
}

/* yg_grad: a node is needed when one of its edges is captured or leads to
 * a needed node.  Iterative post-order DFS (no recursion on long chains). */
static yg_status mark_needed(graph_task *g)
{
    typedef struct frame {
        int64_t idx;
        int32_t edge;
    } frame;
    frame *stack = malloc((size_t)(g->len > 0 ? g->len : 1) * sizeof *stack);
    int64_t sp = 0;

    if (stack == NULL)
        return oom();
    for (int64_t i = 0; i < g->len; i++)
        g->nodes[i].needed = false;
    for (int64_t start = 0; start < g->len; start++) {
        if (g->nodes[start].visited)
            continue;
        g->nodes[start].visited = true;
        stack[sp++] = (frame){start, 0};
        while (sp > 0) {
            frame *f = &stack[sp - 1];
            task_node *t = &g->nodes[f->idx];
            if (f->edge < t->node->n_edges) {
                const yg_edge *e = &t->node->next_edges[f->edge++];
                int64_t j;
                if (e->node == NULL)
                    continue;
                if (is_captured(g, e))
                    t->needed = true;
                j = index_of(g, e->node);
                if (!g->nodes[j].visited) {
                    g->nodes[j].visited = true;
                    stack[sp++] = (frame){j, 0};
                } else if (g->nodes[j].needed) {
                    t->needed = true;
                }
                continue;
            }
            sp--;
            if (sp > 0 && t->needed)
                g->nodes[stack[sp - 1].idx].needed = true;
        }
    }
    free(stack);
    return YG_OK;
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
        /* Under create_graph the conversion is recorded (to_copy). */
        if (yg_is_grad_enabled())
            YG_RETURN_IF_ERROR(yg_to_copy(*grad, m->dtype, &fixed));
        else
            YG_RETURN_IF_ERROR(yg__tensor_contiguous_as(*grad, m->dtype, true, &fixed));
        yg_release(*grad);
        *grad = fixed;
    }
    return YG_OK;
}

/* Whether grad can be summed into s in place: s is a plain contiguous
 * CPU tensor that only the slot holds (not a formula's view of another
 * gradient still in use, nor the caller's root gradient), and no history
 * is being recorded (create_graph). */
/* Whether t's elements fill its storage's span exactly once, in some
 * order of its dims (contiguous, or a permutation of that: a transposed
 * gradient), so an in-place sum writes each element once. */
static bool is_dense(const yg_tensor *t)
{
    int64_t sizes[YG_MAX_DIMS], strides[YG_MAX_DIMS], expected = 1;
    int n = 0;

    /* Nothing to sum into; and an empty tensor's other sizes may be huge
     * (sizes.h): their product below would overflow (fuzz_ops). */
    if (yg_tensor_numel(t) == 0)
        return false;
    for (int32_t d = 0; d < t->ndim; d++) {
        if (t->sizes[d] == 1)
            continue;
        int e = n++;
        for (; e > 0 && strides[e - 1] > t->strides[d]; e--) {
            sizes[e] = sizes[e - 1];
            strides[e] = strides[e - 1];
        }
        sizes[e] = t->sizes[d];
        strides[e] = t->strides[d];
    }
    for (int e = 0; e < n; e++) {
        if (strides[e] != expected)
            return false;
        expected *= sizes[e]; /* a non-empty header's numel fits (sizes.h) */
    }
    return true;
}

static bool summable_in_place(const yg_tensor *s, const yg_tensor *grad)
{
    return !yg_is_grad_enabled() && s->storage->device == YG_CPU &&
           grad->storage->device == YG_CPU && s->dtype == grad->dtype &&
           yg__tensor_is_exclusive(s, 1) && is_dense(s) && !yg_tensor_requires_grad(s);
}

/* Adds grad (owned, consumed) into slot: in place when the slot's tensor
 * is ours alone and dense (a node whose output is used several times then
 * costs no new buffer per incoming gradient; a dense transposed slot keeps
 * its layout, which the next gradients of that use share). */
static yg_status buffer_add(yg_tensor **slot, yg_tensor *grad)
{
    yg_tensor *sum = NULL;
    yg_status st;

    if (*slot == NULL) {
        *slot = grad;
        return YG_OK;
    }
    if (summable_in_place(*slot, grad)) {
        st = yg__pw_add_(*slot, grad, 1.0, &sum);
        yg_release(sum);
        yg_release(grad);
        return st;
    }
    st = yg_add(*slot, grad, 1.0, &sum);
    yg_release(grad);
    if (st != YG_OK)
        return st;
    yg_release(*slot);
    *slot = sum;
    return YG_OK;
}

static yg_status run_node(graph_task *g, int64_t idx)
{
    task_node *t = &g->nodes[idx];
    yg_node *n = t->node;
    yg_tensor **grad_inputs = NULL;
    bool any_defined = false, applied = false;
    yg_status st = YG_OK;

    for (int32_t i = 0; i < n->n_outputs; i++)
        any_defined |= t->buffer[i] != NULL;
    if (any_defined) {
        st = yg__run_pre_hooks(n, t->buffer);
        if (st != YG_OK)
            goto out;
    }
    for (int64_t c = 0; c < g->n_captures; c++)
        if (g->captures[c].node == n && g->captures[c].grad == NULL)
            g->captures[c].grad = yg_retain(t->buffer[g->captures[c].input_nr]);
    if (n->n_edges > 0) {
        grad_inputs = calloc((size_t)n->n_edges, sizeof *grad_inputs);
        if (grad_inputs == NULL) {
            st = oom();
            goto out;
        }
    }
    /* An output that reaches nothing contributes nothing: a node whose
     * incoming gradients are all undefined is not run, and allocates no
     * zeros; its inputs simply receive no gradient from it. */
    if (any_defined && t->needed) {
        st = n->vt->apply(n, t->buffer, grad_inputs);
        if (st != YG_OK) {
            yg__fail_prefix(st, n->vt->name);
            goto out;
        }
        applied = true;
        st = yg__run_post_hooks(n, grad_inputs, t->buffer);
        if (st != YG_OK)
            goto out;
    }
    if (applied && !g->retain_graph && n->vt->release_saved != NULL) {
        n->vt->release_saved(n);
        n->saved_released = true;
    }
    for (int32_t e = 0; e < n->n_edges; e++) {
        yg_edge *edge = &n->next_edges[e];
        int64_t next;
        if (edge->node == NULL)
            continue;
        next = index_of(g, edge->node);
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

/* record: create_graph, so a dtype conversion of grad is recorded. */
static yg_status root_gradient(const yg_tensor *root, const yg_tensor *grad, bool record,
                               yg_tensor **out)
{
    char a[128], b[128];

    *out = NULL;
    if (grad == NULL) {
        if (yg_tensor_numel(root) != 1)
            return yg__fail(YG_ERR_AUTOGRAD,
                            "backward: grad can be omitted only for a root with one element, "
                            "got root %s; pass grad",
                            yg__format_sizes(root->sizes, root->ndim, a, sizeof a));
        return yg__full_on("backward", root->sizes, root->ndim, root->dtype, root->storage->device,
                           root->storage->device_index, 1.0, out);
    }
    if (grad->ndim != root->ndim ||
        memcmp(grad->sizes, root->sizes, (size_t)root->ndim * sizeof(int64_t)) != 0)
        return yg__fail(YG_ERR_SHAPE, "backward: grad %s does not match root %s",
                        yg__format_sizes(grad->sizes, grad->ndim, a, sizeof a),
                        yg__format_sizes(root->sizes, root->ndim, b, sizeof b));
    if (grad->dtype == root->dtype) {
        *out = yg_retain((yg_tensor *)grad); /* keeps its history under create_graph */
        return YG_OK;
    }
    if (record) {
        bool prev = yg_set_grad_enabled(true);
        yg_status st = yg_to_copy(grad, root->dtype, out);
        yg_set_grad_enabled(prev);
        return st;
    }
    return yg__tensor_contiguous_as(grad, root->dtype, true, out);
}

/* The edge a gradient for t enters the graph through: its grad_fn, or
 * its leaf's AccumulateGrad.  out: new ref. */
static yg_status gradient_edge(yg_tensor *t, yg_node **node, int32_t *input_nr)
{
    YG_RETURN_IF_ERROR(yg__refresh_history(t));
    if (t->autograd->grad_fn != NULL) {
        *node = yg__node_retain(t->autograd->grad_fn);
        *input_nr = t->autograd->output_nr;
        return YG_OK;
    }
    *input_nr = 0;
    return yg__grad_accumulator(t, node);
}

/* Runs the task from n_roots roots (edges + seed gradients, all owned by
 * the caller).  Grad mode during the run is create_graph. */
static yg_status execute(graph_task *g, yg_node *const *roots, const int32_t *slots,
                         yg_tensor *const *seeds, int64_t n_roots, bool create_graph)
{
    int64_t *idx = NULL;
    bool prev_mode = yg_set_grad_enabled(create_graph);
    yg_status st = YG_OK;

    /* Gradient formulas are not part of a function being traced. */
    yg__obs_pause();
    idx = malloc((size_t)(n_roots > 0 ? n_roots : 1) * sizeof *idx);
    if (idx == NULL) {
        st = oom();
        goto out;
    }
    for (int64_t r = 0; r < n_roots && st == YG_OK; r++)
        st = discover(g, roots[r], &idx[r]);
    if (st == YG_OK && g->captures != NULL)
        st = mark_needed(g);
    if (st != YG_OK)
        goto out;
    g->heap = malloc((size_t)(g->len > 0 ? g->len : 1) * sizeof *g->heap);
    if (g->heap == NULL) {
        st = oom();
        goto out;
    }
    for (int64_t r = 0; r < n_roots; r++) {
        st = buffer_add(&g->nodes[idx[r]].buffer[slots[r]], yg_retain(seeds[r]));
        if (st != YG_OK)
            goto out;
    }
    for (int64_t r = 0; r < n_roots; r++) {
        bool first = true;
        for (int64_t q = 0; q < r; q++)
            first &= idx[q] != idx[r];
        if (first && g->nodes[idx[r]].deps == 0)
            heap_push(g, idx[r]);
    }
    while (g->heap_len > 0) {
        st = run_node(g, heap_pop(g));
        if (st != YG_OK)
            goto out;
    }
out:
    free(idx);
    yg__obs_resume();
    yg_set_grad_enabled(prev_mode);
    return st;
}

yg_status yg_backward(yg_tensor *root, const yg_tensor *grad, bool retain_graph)
{
    graph_task g = {0};
    yg_node *root_node = NULL;
    yg_tensor *seed = NULL;
    int32_t root_slot;
    yg_status st;

    YG_RETURN_IF_ERROR(yg__check_defined("backward", "root", root));
    if (!yg_tensor_requires_grad(root))
        return yg__fail(YG_ERR_AUTOGRAD,
                        "backward: root does not require grad and has no grad_fn (no input of "
                        "its computation requires grad, or it ran with grad mode off)");
    YG_RETURN_IF_ERROR(root_gradient(root, grad, false, &seed));
    st = gradient_edge(root, &root_node, &root_slot);
    g.retain_graph = retain_graph;
    if (st == YG_OK)
        st = execute(&g, &root_node, &root_slot, &seed, 1, false);
    yg_release(seed);
    graph_task_free(&g);
    yg__node_release(root_node);
    return st;
}

yg_status yg_grad(const yg_tensor *const *outputs, int64_t n_outputs,
                  const yg_tensor *const *grad_outputs, const yg_tensor *const *inputs,
                  int64_t n_inputs, bool retain_graph, bool create_graph, bool allow_unused,
                  yg_tensor **grads)
{
    graph_task g = {0};
    yg_node **roots = NULL;
    int32_t *slots = NULL;
    yg_tensor **seeds = NULL;
    yg_status st = YG_OK;

    if (grads == NULL || outputs == NULL || inputs == NULL || n_outputs < 1 || n_inputs < 1)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "grad: outputs, inputs and grads must be non-NULL, with at least one "
                        "output and one input");
    for (int64_t i = 0; i < n_inputs; i++)
        grads[i] = NULL;
    for (int64_t i = 0; i < n_outputs; i++)
        if (!yg_tensor_requires_grad(outputs[i]))
            return yg__fail(YG_ERR_AUTOGRAD, "grad: output %lld does not require grad",
                            (long long)i);
    for (int64_t i = 0; i < n_inputs; i++)
        if (!yg_tensor_requires_grad(inputs[i]))
            return yg__fail(YG_ERR_AUTOGRAD, "grad: input %lld does not require grad",
                            (long long)i);
    roots = calloc((size_t)n_outputs, sizeof *roots);
    slots = calloc((size_t)n_outputs, sizeof *slots);
    seeds = calloc((size_t)n_outputs, sizeof *seeds);
    g.captures = calloc((size_t)n_inputs, sizeof *g.captures);
    if (roots == NULL || slots == NULL || seeds == NULL || g.captures == NULL) {
        st = oom();
        goto out;
    }
    g.retain_graph = retain_graph || create_graph;
    for (int64_t i = 0; i < n_inputs && st == YG_OK; i++) {
        st = gradient_edge((yg_tensor *)inputs[i], &g.captures[i].node, &g.captures[i].input_nr);
        g.n_captures = i + 1;
    }
    for (int64_t i = 0; i < n_outputs && st == YG_OK; i++) {
        st = root_gradient(outputs[i], grad_outputs ? grad_outputs[i] : NULL, create_graph,
                               &seeds[i]);
        if (st == YG_OK)
            st = gradient_edge((yg_tensor *)outputs[i], &roots[i], &slots[i]);
    }
    if (st == YG_OK)
        st = execute(&g, roots, slots, seeds, n_outputs, create_graph);
    for (int64_t i = 0; i < n_inputs && st == YG_OK; i++)
        if (g.captures[i].grad == NULL && !allow_unused)
            st = yg__fail(YG_ERR_AUTOGRAD,
                          "grad: input %lld is not reachable from the outputs; pass "
                          "allow_unused=true to get NULL for it",
                          (long long)i);
    for (int64_t i = 0; i < n_inputs && st == YG_OK; i++) {
        grads[i] = g.captures[i].grad;
        g.captures[i].grad = NULL;
    }
out:
    /* The task first: its nodes are borrowed from the references released
     * below (a captured leaf's AccumulateGrad may have no other). */
    graph_task_free(&g);
    for (int64_t i = 0; i < g.n_captures; i++) {
        yg_release(g.captures[i].grad);
        yg__node_release(g.captures[i].node);
    }
    for (int64_t i = 0; i < n_outputs && roots != NULL; i++) {
        yg__node_release(roots[i]);
        yg_release(seeds[i]);
    }
    free(g.captures);
    g.captures = NULL;
    free(roots);
    free(slots);
    free(seeds);
    return st;
}
