/*
 * dce.c - dead code elimination: removes nodes whose results nobody
 * uses, keeping every node with side effects.
 *
 * One backward walk suffices: nodes are in execution order, so when a
 * node is visited every node that could use its outputs has already been
 * visited and, if dead, removed with its uses.  A node is kept when it
 * has side effects (an in-place op, a "mutates" attribute, a subgraph
 * holding either; yg__ir_node_has_side_effects), and then so are the
 * nodes producing its inputs, because its uses keep them alive.  An
 * in-place op whose result is unused still writes its self input, which
 * something later (or the caller, for a graph input) may read: removing
 * it would change the program, so it stays.
 *
 * Subgraphs of kept nodes are cleaned the same way; their outputs are all
 * used (they are the holder's outputs), so only inner dead nodes go.
 */
#include "jit/passes/passes.h"

static void dce(yg_graph *g) {
    yg_ir_node *n = g->last;
    while (n != NULL) {
        yg_ir_node *prev = n->prev;
        bool used = yg__ir_node_has_side_effects(n);
        for (int32_t i = 0; i < n->n_outputs && !used; i++)
            used = n->outputs[i]->n_uses > 0;
        if (!used) {
            yg__ir_node_destroy(n);
        } else {
            for (int32_t i = 0; i < n->n_attrs; i++) {
                if (n->attrs[i].kind == YG_IR_ATTR_GRAPH)
                    dce(n->attrs[i].u.g);
            }
        }
        n = prev;
    }
}

yg_status yg_graph_eliminate_dead_code(yg_graph *g) {
    if (g == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "dce: graph is NULL");
    dce(g);
    return yg__ir_check_after_pass(g, "dce");
}
