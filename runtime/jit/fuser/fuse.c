/*
 * fuse.c - yg_graph_fuse: runs of pointwise nodes become prim::FusionGroup
 * nodes.
 *
 * Which ops are pointwise is the YAML's business: an op with a
 * `pointwise:` expression (yg__fuse_ops[], generated) and a functional
 * form; no list is kept here.  A node joins a run when its one output and
 * every input have the same known floating dtype (the kernel computes in
 * it), it writes no memory and reads or makes no value anything writes
 * (yg__pass_mark_mutated).  First, a chunk of a pointwise value moves up
 * through its producers (push_chunks).  Runs are taken in graph order, as the autodiff
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
#include "op_ids.h"

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

/* The nearest fusible node of dtype from n going up (down: going down)
 * when every node between writes nothing, is no cat or anchor, and does
 * not depend on n that way (going up: defines nothing n reads; going
 * down: reads nothing n defines); NULL when one is in the way. */
static yg_ir_node *nearest_run(yg_ir_node *n, int32_t dtype, bool down) {
    for (yg_ir_node *q = down ? n->next : n->prev; q != NULL; q = down ? q->next : q->prev) {
        if (fusible_dtype(q) == dtype)
            return q;
        if (yg__ir_node_has_side_effects(q) || yg__fuser_is_cat(q) ||
            yg__fuser_anchor(q) != YG_ANCHOR_NONE)
            return NULL;
        const yg_ir_node *reader = down ? q : n, *writer = down ? n : q;
        for (int32_t i = 0; i < reader->n_inputs; i++)
            if (reader->inputs[i]->node == writer)
                return NULL;
    }
    return NULL;
}

/* Sibling fusion: moves each fusible node up to just after the nearest
 * earlier fusible node of its dtype, then down to just before the next
 * one (nearest_run says past what), so runs that a node which cannot join
 * separates (a matmul between two users of one input, or between two
 * products' pointwise users) become one.  Down goes last node first, so
 * that a run moves as a whole. */
static void cluster(yg_graph *g) {
    for (yg_ir_node *n = g->first; n != NULL; n = n->next) {
        int32_t dtype = fusible_dtype(n);
        if (dtype == YG_IR_UNKNOWN || n->prev == NULL || fusible_dtype(n->prev) == dtype)
            continue;
        yg_ir_node *q = nearest_run(n, dtype, false);
        if (q != NULL && q->next != n)
            yg__ir_node_move_before(n, q->next);
    }
    for (yg_ir_node *n = g->last, *prev; n != NULL; n = prev) {
        prev = n->prev;
        int32_t dtype = fusible_dtype(n);
        if (dtype == YG_IR_UNKNOWN || n->next == NULL || fusible_dtype(n->next) == dtype)
            continue;
        yg_ir_node *q = nearest_run(n, dtype, true);
        if (q != NULL)
            yg__ir_node_move_before(n, q);
    }
}

/* ---- chunk pushed up through pointwise producers ---- */

static yg_status put_int_attr(yg_ir_node *n, const char *name, int64_t v) {
    yg_ir_attr a = {0};
    a.name = strdup(name);
    a.kind = YG_IR_ATTR_INT;
    a.u.i = v;
    if (a.name == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "fuse: out of memory");
    return yg__ir_node_put_attr(n, &a);
}

/* How chunk node c (k pieces along dim d of x's n-d shape) would reach
 * input u of x's producer: -1 whole (u broadcasts along d: no such dim or
 * size 1), else the dim of u to chunk (its size along it is x's); -2 when
 * neither. */
static int32_t chunk_dim_of(const yg_ir_type *x, int32_t d, const yg_ir_type *u) {
    if (!yg__pass_sizes_known(u) || u->ndim > x->ndim)
        return -2;
    int32_t a = d - (x->ndim - u->ndim);
    if (a < 0 || u->sizes[a] == 1)
        return -1;
    return u->sizes[a] == x->sizes[d] ? a : -2;
}

/* Whether chunk node c can move above the producer of its input: a
 * fusible node read by c alone, with known sizes that split evenly into
 * the k pieces c has, each of its inputs chunkable or broadcast. */
static bool chunk_pushable(const yg_ir_node *c, int32_t *k, int32_t *d) {
    if (!yg__pass_is(c, YG_OP_chunk) || c->n_inputs != 1 || yg__ir_node_has_side_effects(c))
        return false;
    const yg_ir_value *x = c->inputs[0];
    const yg_ir_node *p = x->node;
    if (p == NULL || p->kind == yg__prim_param || fusible_dtype(p) == YG_IR_UNKNOWN ||
        x->n_uses != 1 || !yg__pass_sizes_known(&x->type) || x->type.ndim < 1)
        return false;
    int64_t chunks = yg__pass_int_attr(c, "chunks", 0), dim = yg__pass_int_attr(c, "dim", 0);
    if (dim < 0)
        dim += x->type.ndim;
    if (dim < 0 || dim >= x->type.ndim || chunks < 2 || chunks != c->n_outputs ||
        x->type.sizes[dim] % chunks != 0)
        return false;
    for (int32_t j = 0; j < p->n_inputs; j++)
        if (chunk_dim_of(&x->type, (int32_t)dim, &p->inputs[j]->type) == -2)
            return false;
    *k = (int32_t)chunks;
    *d = (int32_t)dim;
    return true;
}

/* Replaces c = chunk(p(u...)) by k copies of p, copy i reading piece i of
 * a new chunk of each u that has the chunked dim (u itself where it
 * broadcasts); the copies are placed before c, the chunks right after
 * their u's definition; c and p are removed. */
static yg_status push_chunk(yg_graph *g, yg_ir_node *c, int32_t k, int32_t d) {
    yg_ir_node *p = c->inputs[0]->node;
    const yg_ir_type *xt = &c->inputs[0]->type;
    yg_ir_node *pieces[YG_FUSE_MAX_INPUTS] = {NULL}; /* per input of p: its chunk */
    const yg_op_info *chunk_op = NULL;
    const char *chunk_kind = yg__ir_kind_lookup("chunk", 5, &chunk_op);
    yg_status st = YG_OK;

    if (p->n_inputs > YG_FUSE_MAX_INPUTS || chunk_kind == NULL)
        return YG_OK;
    for (int32_t j = 0; j < p->n_inputs && st == YG_OK; j++) {
        int32_t a = chunk_dim_of(xt, d, &p->inputs[j]->type);
        if (a < 0)
            continue;
        for (int32_t q = 0; q < j && pieces[j] == NULL; q++) /* one chunk per value */
            if (p->inputs[q] == p->inputs[j])
                pieces[j] = pieces[q];
        if (pieces[j] != NULL)
            continue;
        st = yg__ir_node_create(g, chunk_kind, chunk_op, k, false, &pieces[j]);
        if (st != YG_OK)
            break;
        /* Right after u's definition, so that pieces of several values
         * (two matmuls' results) do not split the run of their users. */
        yg_ir_node *def = p->inputs[j]->node;
        if (def == g->param)
            yg__ir_node_move_to_front(pieces[j]);
        else
            yg__ir_node_move_before(pieces[j], def->next);
        st = yg__ir_node_add_input(pieces[j], p->inputs[j]);
        if (st == YG_OK)
            st = put_int_attr(pieces[j], "chunks", k);
        if (st == YG_OK)
            st = put_int_attr(pieces[j], "dim", a);
        if (st == YG_OK)
            st = yg__shape_propagate_node(pieces[j]);
    }
    for (int32_t i = 0; i < k && st == YG_OK; i++) {
        yg_ir_node *n = NULL;
        st = yg__ir_node_create(g, p->kind, p->op, 1, false, &n);
        if (st != YG_OK)
            break;
        yg__ir_node_move_before(n, c);
        for (int32_t j = 0; j < p->n_inputs && st == YG_OK; j++)
            st = yg__ir_node_add_input(n, pieces[j] != NULL ? pieces[j]->outputs[i] : p->inputs[j]);
        for (int32_t a = 0; a < p->n_attrs && st == YG_OK; a++) {
            yg_ir_attr copy = {0};
            st = yg__ir_attr_copy(&p->attrs[a], &copy);
            if (st == YG_OK)
                st = yg__ir_node_put_attr(n, &copy);
        }
        if (st == YG_OK)
            st = yg__shape_propagate_node(n);
        if (st == YG_OK)
            st = yg__ir_value_replace_all_uses(c->outputs[i], n->outputs[0]);
    }
    if (st != YG_OK)
        return st; /* the graph stays valid: c still computes what it did */
    yg__ir_node_destroy(c);
    yg__ir_node_destroy(p);
    return YG_OK;
}

/* Chunks pushed up through pointwise producers until none moves (as
 * PyTorch's fuser did), so that the pieces a run reads are pieces of its
 * inputs (a matmul's result, a parameter), read in place, and the
 * producers join the run of the pieces' consumers: chunk(a + b, 4) of an
 * LSTM's gates becomes the pieces of a and b, added in the group. */
static yg_status push_chunks(yg_graph *g) {
    bool moved = true;
    while (moved) {
        moved = false;
        for (yg_ir_node *c = g->first; c != NULL; c = c->next) {
            int32_t k, d;
            if (!chunk_pushable(c, &k, &d))
                continue;
            YG_RETURN_IF_ERROR(push_chunk(g, c, k, d));
            moved = true;
            break;
        }
    }
    return YG_OK;
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
    for (yg_ir_node *n = g->first; n != NULL; n = n->next)
        n->scratch = 0;
    YG_RETURN_IF_ERROR(push_chunks(g));
    cluster(g);
    yg_ir_node **run = malloc((size_t)(g->n_nodes + 1) * sizeof *run);
    if (run == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "fuse: out of memory");
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
