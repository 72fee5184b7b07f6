/*
 * decompose.c - yg_graph_decompose_composites: a composite op node (an op
 * written with other ops, runtime/composite/, with no derivative entry of
 * its own) becomes the ops it calls, so that autodiff, which has a
 * graph derivative per derivative entry, can differentiate through it
 * as eager autograd does through its parts.
 *
 * The parts are found by tracing the op once through its composite
 * (yg_trace with trace_through_composites) on zero tensors of the node's
 * static input types, then copied in place of the node.  A composite's
 * structure depends on its inputs' types and its attributes, not on their
 * values; a node whose inputs' types are not fully known (dtype, device,
 * sizes), with an input of more than 2^24 elements (the trace computes on
 * dummies that large), that reads a tensor it did not receive (a
 * parameter), or whose trace fails stays as it is.
 */
#include "jit/autodiff/autodiff.h"
#include "jit/ir/boxing.h"
#include "jit/passes/passes.h"
#include "op_ids.h"
#include "yagrad/autograd.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_slicing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest input (in elements) a composite is traced on to split it. */
#define YG_DECOMPOSE_MAX_NUMEL ((int64_t)1 << 24)

typedef struct call {
    const yg_ir_node *n;
    yg_tensor **all; /* n->n_inputs, NULL for None inputs */
} call;

static yg_status
call_boxed(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    call *c = ctx;
    (void)n_out;
    for (int32_t i = 0, k = 0; i < c->n->n_inputs; i++)
        c->all[i] = c->n->inputs[i]->type.kind == YG_IR_TYPE_NONE ? NULL : in[k++];
    (void)n_in;
    return yg__boxed_op_of(c->n)->fn(c->n, c->all, c->n->n_inputs, out);
}

static bool decomposable(const yg_ir_node *n) {
    if (n->op == NULL || n->op->kind != YG_OP_KIND_COMPOSITE)
        return false;
    const yg_graph_grad_op *so = yg__graph_grad_of(n);
    if (so->fn != NULL || so->no_grad || yg__ir_node_has_side_effects(n))
        return false;
    if (yg__boxed_op_of(n)->fn == NULL)
        return false;
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const yg_ir_type *t = &n->inputs[i]->type;
        if (t->kind == YG_IR_TYPE_NONE)
            continue;
        if (t->dtype == YG_IR_UNKNOWN || t->device != YG_CPU || !yg__pass_sizes_known(t))
            return false;
        /* The trace runs the composite on dummies of these sizes: a plan
         * does not allocate and compute on inputs larger than this. */
        int64_t numel = yg__sizes_product(t->sizes, t->ndim);
        if (numel < 0 || numel > YG_DECOMPOSE_MAX_NUMEL)
            return false;
    }
    return true;
}

/* Zeros of type t: contiguous, or (strided) laid out another way: the
 * last two dims transposed in memory, or every other element of a larger
 * vector for one dim. */
static yg_status dummy(const yg_ir_type *t, bool strided, yg_tensor **out) {
    int64_t sizes[YG_MAX_DIMS];
    yg_tensor *base = NULL;
    yg_status st;
    *out = NULL;
    for (int32_t d = 0; d < t->ndim; d++)
        sizes[d] = t->sizes[d];
    if (!strided || t->ndim == 0)
        return yg_tensor_zeros(sizes, t->ndim, (yg_dtype)t->dtype, out);
    if (t->ndim == 1) {
        sizes[0] *= 2; /* a vector of t's elements, which the node's input has */
        st = yg_tensor_zeros(sizes, 1, (yg_dtype)t->dtype, &base);
        if (st == YG_OK)
            st = yg_slice(base, 0, 0, sizes[0], 2, out);
    } else {
        sizes[t->ndim - 1] = t->sizes[t->ndim - 2];
        sizes[t->ndim - 2] = t->sizes[t->ndim - 1];
        st = yg_tensor_zeros(sizes, t->ndim, (yg_dtype)t->dtype, &base);
        if (st == YG_OK)
            st = yg_transpose(base, -1, -2, out);
    }
    yg_release(base);
    return st;
}

/* Traces n's composite on dummy inputs; *text is the trace's canonical
 * text (caller frees), NULL when it cannot be used. */
static yg_status
trace_once(const yg_ir_node *n, bool strided, yg_tensor **buf, yg_trace_result **tr, char **text) {
    int32_t k = 0;
    yg_status st = YG_OK;
    *tr = NULL;
    *text = NULL;
    for (int32_t i = 0; st == YG_OK && i < n->n_inputs; i++) {
        const yg_ir_type *t = &n->inputs[i]->type;
        if (t->kind != YG_IR_TYPE_NONE)
            st = dummy(t, strided, &buf[k++]);
    }
    call c = {.n = n, .all = buf + n->n_inputs};
    yg_trace_options opt = {.trace_through_composites = true};
    bool prev = yg_set_grad_enabled(false);
    if (st == YG_OK)
        st = yg_trace(call_boxed, &c, buf, k, n->n_outputs, &opt, tr);
    yg_set_grad_enabled(prev);
    for (int32_t i = 0; i < k; i++) {
        yg_release(buf[i]);
        buf[i] = NULL;
    }
    if (st != YG_OK || (*tr)->n_params > 0 || yg_graph_num_inputs((*tr)->graph) != k)
        return YG_OK; /* not usable: the node stays */
    st = yg_graph_canonicalize((*tr)->graph);
    if (st == YG_OK)
        st = yg_graph_print((*tr)->graph, text);
    return st;
}

/* Whether a view from type a to type b only splits dims and adds or
 * drops dims of size 1: each dim of a of size > 1 is the product of a run
 * of b's.  Such a view works whatever a's strides; merging two dims does
 * not (they must be contiguous with each other). */
static bool view_only_splits(const yg_ir_type *a, const yg_ir_type *b) {
    int32_t j = 0;
    for (int32_t i = 0; i < a->ndim; i++) {
        if (a->sizes[i] == 1)
            continue;
        int64_t p = 1;
        while (j < b->ndim && p < a->sizes[i])
            p *= b->sizes[j++];
        if (p != a->sizes[i])
            return false;
    }
    return true;
}

/* Whether the trace views (the view op, merging dims) a value that may
 * share the memory of one of its inputs: the input itself or a view op's
 * result over it.  Whether such a view works depends on how the input is
 * laid out, which static types do not record: the two layouts traced
 * below cannot stand for every one (a [B, H, T, D] slice of a permuted
 * qkv merges B and H only by a copy).  A view of a result the trace
 * computed (contiguous, fresh) is safe, and so is one that only splits
 * dims. */
static bool views_an_input(const yg_graph *g) {
    for (int32_t i = 0; i < g->param->n_outputs; i++)
        g->param->outputs[i]->scratch = 1;
    for (const yg_ir_node *m = g->first; m != NULL; m = m->next) {
        bool aliases = m->n_inputs > 0 && m->inputs[0]->scratch == 1;
        if (aliases && yg__pass_is(m, YG_OP_view) && m->n_outputs == 1 &&
            !view_only_splits(&m->inputs[0]->type, &m->outputs[0]->type))
            return true;
        for (int32_t o = 0; o < m->n_outputs; o++)
            m->outputs[o]->scratch = aliases && m->op != NULL && m->op->returns_view ? 1 : 0;
    }
    return false;
}

/* Decomposes n when it can be; *done says whether it was.  The composite
 * is traced on contiguous and on strided inputs: a composite whose parts
 * depend on the layout (reshape: a view, or a copy) stays whole, since
 * static types do not say how a value is laid out; so does one that
 * views its inputs (views_an_input). */
static yg_status decompose(yg_graph *g, yg_ir_node *n, bool *done) {
    yg_tensor **buf = calloc((size_t)(2 * n->n_inputs + 1), sizeof *buf);
    yg_ir_value **map = calloc((size_t)(n->n_inputs + 1), sizeof *map);
    yg_trace_result *tr = NULL, *tr2 = NULL;
    char *text = NULL, *text2 = NULL;
    yg_status st = YG_OK;

    *done = false;
    if (buf == NULL || map == NULL) {
        st = yg__fail(YG_ERR_OUT_OF_MEMORY, "decompose_composites: out of memory");
        goto out;
    }
    for (int32_t i = 0, k = 0; i < n->n_inputs; i++)
        if (n->inputs[i]->type.kind != YG_IR_TYPE_NONE)
            map[k++] = n->inputs[i];
    st = trace_once(n, false, buf, &tr, &text);
    if (st == YG_OK && text != NULL)
        st = trace_once(n, true, buf, &tr2, &text2);
    if (st != YG_OK || text == NULL || text2 == NULL || strcmp(text, text2) != 0)
        goto out;
    if (views_an_input(tr->graph))
        goto out;
    /* A trace that holds the node's own kind again would loop. */
    for (const yg_ir_node *m = tr->graph->first; m != NULL; m = m->next)
        if (m->kind == n->kind)
            goto out;
    st = yg__pass_inline(g, n, tr->graph, map);
    *done = st == YG_OK;
out:
    yg_string_release(text);
    yg_string_release(text2);
    yg_trace_result_release(tr);
    yg_trace_result_release(tr2);
    free(buf);
    free(map);
    return st;
}

yg_status yg_graph_decompose_composites(yg_graph *g) {
    return yg__decompose_composites(g, false);
}

yg_status yg__decompose_composites(yg_graph *g, bool on_grad_paths) {
    if (g == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "decompose_composites: graph is NULL");
    /* A traced composite's parts are never composites themselves (the
     * trace goes through nested ones), so one walk suffices. */
    yg_ir_node *n = g->first;
    while (n != NULL) {
        yg_ir_node *next = n->next;
        bool done = false, wanted = !on_grad_paths;
        for (int32_t i = 0; i < n->n_inputs && !wanted; i++)
            wanted = n->inputs[i]->type.requires_grad == 1;
        if (wanted && decomposable(n))
            YG_RETURN_IF_ERROR(decompose(g, n, &done));
        n = next;
    }
    return yg__ir_check_after_pass(g, "decompose_composites");
}
