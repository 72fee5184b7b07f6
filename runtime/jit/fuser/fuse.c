/*
 * fuse.c - yg_graph_fuse: runs of pointwise nodes become prim::FusionGroup
 * nodes.
 *
 * Which ops are pointwise is the YAML's business: an op with a
 * `pointwise:` expression (yg__fuse_ops[], generated) and a functional
 * form; no list is kept here.  A node joins a run when its one output and
 * every input have the same known floating dtype (the kernel computes in
 * it), it writes no memory and reads or makes no value anything writes
 * (yg__pass_mark_mutated).  Runs are taken in graph order, as the autodiff
 * regions are, so a group never has a path that leaves it and comes back;
 * a run ends where a node cannot join, the dtype changes, or the group
 * would pass YG_FUSE_MAX_INPUTS inputs or YG_FUSE_MAX_OUTPUTS outputs.
 * A `cat` of values of the run of one shape joins as an exit (the kernel writes the pieces into the cat's result);
 * a node reading the cat's result ends the run.  A softmax, log_softmax
 * or sum over the last dim of a value of the run ends the run as its
 * reduction anchor (the kernel reduces each row while it is in cache);
 * so does an affine layer_norm over the last dim.  First, each fusible
 * node moves up next to the nearest fusible node of its dtype when only
 * nodes that write nothing and that it does not read lie between
 * (sibling fusion across a matmul, say).
 * prim::Constant nodes in a run stay outside it (their values become
 * inputs).  A group's compiled kernels live in its subgraph.
 */
#include "jit/fuser/fuser.h"
#include "jit/passes/passes.h"

#include <stdlib.h>
#include <string.h>

static bool floating(int32_t dtype) {
    return dtype == YG_FLOAT32 || dtype == YG_FLOAT64;
}

/* The dtype n computes in, or YG_IR_UNKNOWN when n cannot join a group. */
static int32_t fusible_dtype(const yg_ir_node *n) {
    const yg_fuse_op *f = yg__fuse_op_of(n);
    if (f == NULL || n->n_outputs != 1 || n->n_inputs != f->n_inputs ||
        yg__ir_node_has_side_effects(n))
        return YG_IR_UNKNOWN;
    const yg_ir_value *o = n->outputs[0];
    if (o->type.kind != YG_IR_TYPE_TENSOR || !floating(o->type.dtype) || (o->scratch & 1))
        return YG_IR_UNKNOWN;
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const yg_ir_value *v = n->inputs[i];
        if (v->type.kind != YG_IR_TYPE_TENSOR || v->type.dtype != o->type.dtype || (v->scratch & 1))
            return YG_IR_UNKNOWN;
    }
    return o->type.dtype;
}

/* Whether n is defined by one of run[0..len). */
static bool in_run(yg_ir_node *const *run, int32_t len, const yg_ir_node *n) {
    for (int32_t i = 0; i < len; i++)
        if (run[i] == n)
            return true;
    return false;
}

/* Whether cat node n can be an exit of the run: it concatenates distinct
 * values of the run, of its dtype and of one known shape, and writes or
 * is written by nothing.  (A piece read elsewhere too is also an output.) */
static bool cat_exit(yg_ir_node *const *run, int32_t len, const yg_ir_node *n, int32_t dtype) {
    if (!yg__fuser_is_cat(n) || n->n_inputs < 1 || n->n_outputs != 1 ||
        yg__ir_node_has_side_effects(n) || (n->outputs[0]->scratch & 1) ||
        n->outputs[0]->type.dtype != dtype)
        return false;
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const yg_ir_value *v = n->inputs[i];
        if (v->node == NULL || !in_run(run, len, v->node) || v->type.dtype != dtype ||
            !yg__pass_sizes_known(&v->type) ||
            !yg__pass_same_known_sizes(&v->type, &n->inputs[0]->type))
            return false;
        for (int32_t j = 0; j < i; j++)
            if (n->inputs[j] == v)
                return false;
    }
    return true;
}

/* Whether n can end the run as its reduction anchor: a softmax,
 * log_softmax, sum or affine layer_norm over the last dim of a pointwise
 * value of the run, in the run's dtype (layer_norm's weight and bias, in
 * it too, are the group's inputs or values). */
static bool anchor_ok(yg_ir_node *const *run, int32_t len, const yg_ir_node *n, int32_t dtype) {
    if (len == 0 || yg__fuser_anchor(n) == YG_ANCHOR_NONE || yg__ir_node_has_side_effects(n) ||
        (n->outputs[0]->scratch & 1) || n->outputs[0]->type.dtype != dtype)
        return false;
    const yg_ir_value *x = n->inputs[0];
    if (x->node == NULL || !in_run(run, len, x->node) || yg__fuser_is_cat(x->node) ||
        x->type.dtype != dtype)
        return false;
    for (int32_t i = 1; i < n->n_inputs; i++)
        if (n->inputs[i]->type.dtype != dtype || (n->inputs[i]->scratch & 1))
            return false;
    /* A cat exit in the run would make the iteration shapes differ. */
    for (int32_t i = 0; i < len; i++)
        if (yg__fuser_is_cat(run[i]))
            return false;
    return true;
}

/* Whether n reads the result of a cat exit of the run (which must not be
 * read inside the group). */
static bool reads_exit(yg_ir_node *const *run, int32_t len, const yg_ir_node *n) {
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const yg_ir_node *d = n->inputs[i]->node;
        if (yg__fuser_is_cat(d) && in_run(run, len, d))
            return true;
    }
    return false;
}

/* Inputs and kernel outputs (a cat exit's pieces each count) the run
 * nodes[0..len) would have, were it a group. */
static void count_io(yg_ir_node *const *nodes, int32_t len, int32_t *n_in, int32_t *n_out) {
    *n_in = 0;
    *n_out = 0;
    for (int32_t i = 0; i < len; i++)
        nodes[i]->scratch = 2;
    for (int32_t i = 0; i < len; i++) {
        const yg_ir_node *n = nodes[i];
        for (int32_t j = 0; j < n->n_inputs; j++) {
            const yg_ir_value *v = n->inputs[j];
            bool seen = v->node->scratch == 2;
            for (int32_t a = 0; a < i && !seen; a++)
                for (int32_t b = 0; b < nodes[a]->n_inputs && !seen; b++)
                    seen = nodes[a]->inputs[b] == v;
            for (int32_t b = 0; b < j && !seen; b++)
                seen = n->inputs[b] == v;
            *n_in += !seen;
        }
        const yg_ir_value *o = n->outputs[0];
        bool outside = false;
        for (int32_t u = 0; u < o->n_uses && !outside; u++)
            outside = o->uses[u].node->scratch != 2;
        if (outside)
            *n_out += yg__fuser_is_cat(n) ? n->n_inputs : 1;
    }
    for (int32_t i = 0; i < len; i++)
        nodes[i]->scratch = 0;
}

/* Sibling fusion: moves each fusible node up to just after the nearest
 * earlier fusible node of its dtype, past nodes that write nothing and
 * define nothing it reads, so runs that a node which cannot join
 * separates (a matmul between two users of one input) become one. */
static void cluster(yg_graph *g) {
    for (yg_ir_node *n = g->first; n != NULL; n = n->next) {
        int32_t dtype = fusible_dtype(n);
        if (dtype == YG_IR_UNKNOWN || n->prev == NULL || fusible_dtype(n->prev) == dtype)
            continue;
        yg_ir_node *q = n->prev;
        bool ok = true;
        while (q != NULL && fusible_dtype(q) != dtype && ok) {
            ok = !yg__ir_node_has_side_effects(q) && !yg__fuser_is_cat(q) &&
                 yg__fuser_anchor(q) == YG_ANCHOR_NONE;
            for (int32_t i = 0; ok && i < n->n_inputs; i++)
                ok = n->inputs[i]->node != q;
            if (ok)
                q = q->prev;
        }
        if (ok && q != NULL && q->next != n)
            yg__ir_node_move_before(n, q->next);
    }
}

static yg_status put_subgraph(yg_ir_node *h, yg_graph **sub) {
    yg_ir_attr a = {0};
    a.name = strdup("subgraph");
    a.kind = YG_IR_ATTR_GRAPH;
    a.u.g = *sub;
    *sub = NULL;
    if (a.name == NULL) {
        yg_graph_release(a.u.g);
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "fuse: out of memory");
    }
    return yg__ir_node_put_attr(h, &a);
}

static yg_status make_group(yg_graph *g, yg_ir_node *const *nodes, int32_t len) {
    yg_graph *sub = NULL;
    yg_ir_node *h = NULL;
    yg_status st = yg__pass_outline(nodes, len, &sub);
    if (st == YG_OK)
        st = yg__pass_holder(g, yg__prim_fusion_group, sub, sub->ret->n_inputs, nodes[0], &h);
    for (int32_t i = 0; st == YG_OK && i < h->n_outputs; i++)
        st = yg_ir_value_set_type(h->outputs[i], &sub->ret->inputs[i]->type);
    if (st == YG_OK)
        st = yg__pass_replace_region(g, nodes, len, sub, h);
    if (st == YG_OK)
        st = put_subgraph(h, &sub);
    yg_graph_release(sub);
    return st;
}

yg_status yg_graph_fuse(yg_graph *g) {
    bool any = false;
    if (g == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "fuse: graph is NULL");
    /* Groups need their values' dtypes. */
    YG_RETURN_IF_ERROR(yg_graph_propagate_shapes(g));
    YG_RETURN_IF_ERROR(yg__pass_mark_mutated(g, "fuse", &any));
    yg_ir_node **run = malloc((size_t)(g->n_nodes + 1) * sizeof *run);
    if (run == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "fuse: out of memory");
    for (yg_ir_node *n = g->first; n != NULL; n = n->next)
        n->scratch = 0;
    cluster(g);
    yg_status st = YG_OK;
    yg_ir_node *n = g->first;
    while (st == YG_OK && n != NULL) {
        int32_t len = 0, dtype = fusible_dtype(n);
        if (dtype == YG_IR_UNKNOWN) {
            n = n->next;
            continue;
        }
        bool anchored = false;
        while (n != NULL && !anchored && !reads_exit(run, len, n) &&
               (fusible_dtype(n) == dtype || cat_exit(run, len, n, dtype) ||
                (anchored = anchor_ok(run, len, n, dtype)))) {
            int32_t n_in, n_out;
            run[len] = n;
            count_io(run, len + 1, &n_in, &n_out);
            if (n_in > YG_FUSE_MAX_INPUTS || n_out > YG_FUSE_MAX_OUTPUTS) {
                anchored = false;
                break;
            }
            len++;
            n = n->next;
        }
        if (len >= 2)
            st = make_group(g, run, len);
        else if (len == 0)
            n = n->next; /* a node too wide for a group of its own */
    }
    free(run);
    YG_RETURN_IF_ERROR(st);
    return yg__ir_check_after_pass(g, "fuse");
}
