/*
 * remove_expands.c - feeds a broadcasting op the input of an expand when
 * broadcasting alone gives the same result.
 *
 * add(x, expand(y, [4, 3])) with x [4, 3] and y [3] computes the same as
 * add(x, y): the pointwise kernels broadcast, so the expand only costs a
 * view (and, in a fused kernel, index arithmetic).  The rewrite fires for
 * ops of kind "pointwise" and the comparison ops, on any input except an
 * in-place op's self (whose sizes are the result's), when every size
 * involved is known and the broadcast of the inputs with y in place of
 * the expand equals the broadcast with the expand.  It does not fire when
 * the expand is what makes the result big (add(x [3], expand(y [1], [2,
 * 3])) is [2, 3], add(x, y) would be [3]), or when sizes are unknown.
 * The expand, if now unused, is left to dce.
 */
#include "jit/passes/passes.h"
#include "op_ids.h"

#include <string.h>

static bool broadcasts(const yg_ir_node *n) {
    static const int32_t compare[] = {YG_OP_eq, YG_OP_ne, YG_OP_lt, YG_OP_le, YG_OP_gt,
                                      YG_OP_ge, YG_OP_logical_and, YG_OP_logical_or,
                                      YG_OP_logical_xor};
    if (n->op == NULL || n->n_inputs < 2)
        return false;
    if (n->op->kind == YG_OP_KIND_POINTWISE)
        return true;
    for (size_t i = 0; i < sizeof compare / sizeof compare[0]; i++) {
        if (yg__pass_is(n, compare[i]))
            return true;
    }
    return false;
}

/* The broadcast of n's tensor inputs, with input `skip` replaced by sub
 * (NULL: no replacement).  False when some size is unknown. */
static bool
broadcast_inputs(const yg_ir_node *n, int32_t skip, const yg_ir_value *sub, yg_ir_type *out) {
    bool first = true;
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const yg_ir_type *t = i == skip && sub != NULL ? &sub->type : &n->inputs[i]->type;
        if (t->kind != YG_IR_TYPE_TENSOR)
            continue;
        if (!yg__pass_sizes_known(t))
            return false;
        if (first) {
            *out = *t;
            first = false;
        } else if (!yg__pass_broadcast(out, t)) {
            return false;
        }
    }
    return !first;
}

static yg_status remove_expands(yg_graph *g, int depth) {
    for (yg_ir_node *n = g->first; n != NULL; n = n->next) {
        for (int32_t k = 0; k < n->n_attrs && depth < 256; k++) {
            if (n->attrs[k].kind == YG_IR_ATTR_GRAPH)
                YG_RETURN_IF_ERROR(remove_expands(n->attrs[k].u.g, depth + 1));
        }
        if (!broadcasts(n))
            continue;
        bool inplace = yg__ir_kind_info(n).is_inplace;
        for (int32_t i = inplace ? 1 : 0; i < n->n_inputs; i++) {
            const yg_ir_node *e = n->inputs[i]->node;
            if (e->kind == yg__prim_param || !yg__pass_is(e, YG_OP_expand))
                continue;
            yg_ir_value *y = e->inputs[0];
            yg_ir_type with, without;
            if (!broadcast_inputs(n, -1, NULL, &with) || !broadcast_inputs(n, i, y, &without))
                continue;
            if (yg__pass_same_known_sizes(&with, &without))
                YG_RETURN_IF_ERROR(yg__ir_node_replace_input(n, i, y));
        }
    }
    return YG_OK;
}

yg_status yg_graph_remove_unnecessary_expands(yg_graph *g) {
    if (g == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "remove_expands: graph is NULL");
    YG_RETURN_IF_ERROR(remove_expands(g, 0));
    return yg__ir_check_after_pass(g, "remove_expands");
}
