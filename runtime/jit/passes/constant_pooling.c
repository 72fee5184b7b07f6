/*
 * constant_pooling.c - merges equal prim::Constant nodes and gathers the
 * constants at the start of the graph.
 *
 * Two constants are equal when their tensors have the same dtype, sizes
 * and bytes (so 1.0 as float32 and as float64 stay apart, as do 0.0 and
 * -0.0).  The first of a group is kept and later ones' uses move to it;
 * every constant then moves to the front, in its original order.  Moving
 * a node with no inputs earlier can never break "defined before use".
 *
 * A constant that something writes (an in-place op on it or on a view of
 * it; yg__pass_mark_mutated) is neither merged nor used as the merge
 * target: two uses that each expect their own fresh tensor must not end
 * up writing one.
 */
#include "jit/passes/passes.h"

#include <stdlib.h>
#include <string.h>

static const yg_ir_attr *value_of(const yg_ir_node *n) {
    return yg__ir_node_attr(n, "value");
}

static uint64_t hash_constant(const yg_ir_node *n) {
    const yg_tensor *t = value_of(n)->u.t;
    uint64_t h = 1469598103934665603ULL;
    size_t bytes = (size_t)yg_tensor_numel(t) * yg_dtype_size(t->dtype);
    const unsigned char *p = (const unsigned char *)yg__tensor_ptr(t);
    h = (h ^ (uint64_t)t->dtype) * 1099511628211ULL;
    for (int32_t i = 0; i < t->ndim; i++)
        h = (h ^ (uint64_t)t->sizes[i]) * 1099511628211ULL;
    for (size_t i = 0; i < bytes; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

static yg_status pool(yg_graph *g, int depth) {
    bool any = false;
    yg_ir_node **table = NULL;
    uint64_t cap = 16, mask;
    YG_RETURN_IF_ERROR(yg__pass_mark_mutated(g, "constant_pooling", &any));
    while (cap < (uint64_t)g->n_nodes * 2)
        cap *= 2;
    mask = cap - 1;
    table = calloc(cap, sizeof *table);
    if (table == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "constant_pooling: out of memory");
    for (yg_ir_node *n = g->first, *next; n != NULL; n = next) {
        next = n->next;
        if (n->kind != yg__prim_constant || value_of(n) == NULL || n->outputs[0]->scratch != 0)
            continue;
        uint64_t j = hash_constant(n) & mask;
        while (table[j] != NULL && !yg__ir_attr_equal(value_of(table[j]), value_of(n)))
            j = (j + 1) & mask;
        if (table[j] == NULL) {
            table[j] = n;
            continue;
        }
        yg_status st = yg__ir_value_replace_all_uses(n->outputs[0], table[j]->outputs[0]);
        if (st != YG_OK) {
            free(table);
            return st;
        }
        yg__ir_node_destroy(n);
    }
    free(table);
    /* Gather the constants at the front, keeping their order: walk
     * backwards and move each to the front. */
    yg_ir_node *n = g->last;
    yg_ir_node *stop = NULL; /* the first constant moved: the walk ends there */
    while (n != NULL && n != stop) {
        yg_ir_node *prev = n->prev;
        if (n->kind == yg__prim_constant) {
            yg__ir_node_move_to_front(n);
            if (stop == NULL)
                stop = n;
        }
        n = prev;
    }
    for (n = g->first; n != NULL; n = n->next) {
        for (int32_t i = 0; i < n->n_attrs; i++) {
            if (n->attrs[i].kind == YG_IR_ATTR_GRAPH && depth < 256)
                YG_RETURN_IF_ERROR(pool(n->attrs[i].u.g, depth + 1));
        }
    }
    return YG_OK;
}

yg_status yg_graph_pool_constants(yg_graph *g) {
    if (g == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "constant_pooling: graph is NULL");
    YG_RETURN_IF_ERROR(pool(g, 0));
    return yg__ir_check_after_pass(g, "constant_pooling");
}
