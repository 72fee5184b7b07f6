/*
 * pass_peephole.c - removes nodes that are the identity once exported:
 * expand, view and reshape to the input's own (known) sizes; t(t(x));
 * contiguous and clone (ONNX values have no layout and are never
 * written); dropout with train=0 or p=0 (inference); to.dtype, to_copy
 * and type_as when the input already has the target dtype.  Each such
 * node's output is replaced by its input everywhere (graph outputs
 * included; the exporter gives an output that is a graph input its own
 * Identity) and the node is removed.
 *
 * It holds back on graphs that write in place (an op whose name ends in
 * '_', or a "mutates" attribute): replacing a fresh tensor (clone's
 * result) by its input would make a later write reach the input.  Other
 * side effects the IR knows do not alias (a random op's generator,
 * batch_norm's running statistics, which export refuses to update), so
 * a CNN with batch_norm or a model with dropout still gets the rewrite.
 * Unknown sizes or dtypes keep the node.
 */
#include <string.h>

#include "jit/passes/passes.h"
#include "onnx/passes.h"

static bool same_sizes(const yg_ir_node *n)
{
    return yg__pass_same_known_sizes(&n->inputs[0]->type, &n->outputs[0]->type);
}

static bool same_dtype(const yg_ir_node *n, int32_t dtype)
{
    int32_t in = n->inputs[0]->type.dtype;
    return in != YG_IR_UNKNOWN && in == dtype;
}

/* The value n computes when it is an identity of it, else NULL. */
static yg_ir_value *identity_of(const yg_ir_node *n)
{
    int64_t v = 0;
    double p = 0;

    if (n->op == NULL || n->n_inputs < 1 || n->n_outputs != 1 ||
        n->inputs[0]->type.kind != YG_IR_TYPE_TENSOR)
        return NULL;
    if ((yg__pass_is(n, "expand") || yg__pass_is(n, "view") || yg__pass_is(n, "reshape")) &&
        same_sizes(n))
        return n->inputs[0];
    if (yg__pass_is(n, "contiguous") || yg__pass_is(n, "clone"))
        return n->inputs[0];
    if (yg__pass_is(n, "t") && yg__pass_is(n->inputs[0]->node, "t"))
        return n->inputs[0]->node->inputs[0];
    if (yg__pass_is(n, "dropout") &&
        ((yg__ir_attr_as_int(n, "train", &v) && v == 0) ||
         (yg__ir_attr_as_double(n, "p", &p) && p == 0)))
        return n->inputs[0];
    if ((yg__pass_is(n, "to.dtype") || yg__pass_is(n, "to_copy")) &&
        yg__ir_attr_as_int(n, "dtype", &v) && same_dtype(n, (int32_t)v))
        return n->inputs[0];
    if (yg__pass_is(n, "type_as") && n->n_inputs == 2 &&
        same_dtype(n, n->inputs[1]->type.dtype))
        return n->inputs[0];
    return NULL;
}

static bool writes_in_place(const yg_graph *g)
{
    for (const yg_ir_node *n = g->first; n != NULL; n = n->next) {
        if (n->op != NULL) {
            const char *dot = strchr(n->kind, '.');
            size_t base = dot != NULL ? (size_t)(dot - n->kind) : strlen(n->kind);
            if (base > 0 && n->kind[base - 1] == '_')
                return true;
        }
        const yg_ir_attr *m = yg__ir_node_attr(n, "mutates");
        if (m != NULL || (n->op == NULL && yg__ir_node_has_side_effects(n)))
            return true;
    }
    return false;
}

yg_status yg__onnx_peephole(yg_graph *g)
{
    if (writes_in_place(g))
        return YG_OK;
    for (yg_ir_node *n = g->first, *next = NULL; n != NULL; n = next) {
        next = n->next;
        yg_ir_value *x = identity_of(n);
        if (x == NULL)
            continue;
        YG_RETURN_IF_ERROR(yg__ir_value_replace_all_uses(n->outputs[0], x));
        /* Removed here, not left to DCE: DCE keeps dropout (its schema
         * takes a Generator), though with train=0 it draws nothing. */
        yg__ir_node_destroy(n);
    }
    return YG_OK;
}
