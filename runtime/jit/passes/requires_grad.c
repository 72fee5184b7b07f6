/*
 * requires_grad.c - computes each value's requires_grad from the graph
 * inputs' flags, the way eager autograd would set it.
 *
 * An output requires grad when its op is differentiable and some tensor
 * input requires grad; it does not when every tensor input is known not
 * to, when the op is not differentiable (no entry in derivatives.yaml and
 * not composite: eager yagrad refuses such ops on inputs that require
 * grad, so their results never do), or when its dtype is known and not
 * floating (argmax's indices, comparisons' bools).  Constants and None
 * never require grad.  With an input whose flag is unknown and none known
 * true, the answer stays unknown.
 *
 * Run shape_propagation first: dtypes it fills in are what tell max.dim's
 * int64 indices apart from its values.  Subgraph holders pass their
 * inputs' flags into the subgraph and take its outputs'.
 */
#include "jit/passes/passes.h"

#include <string.h>

static bool differentiable(const yg_ir_node *n) {
    if (n->op->kind == YG_OP_KIND_COMPOSITE)
        return true;
    for (int32_t i = 0; i < yg__derivatives_count; i++) {
        if (strcmp(yg__derivatives[i].name, n->kind) == 0)
            return true;
    }
    return false;
}

static void propagate(yg_graph *g, int depth);

static void propagate_node(yg_ir_node *n, int depth) {
    if (n->kind == yg__prim_constant || n->kind == yg__prim_none) {
        for (int32_t i = 0; i < n->n_outputs; i++)
            if (n->outputs[i]->type.kind == YG_IR_TYPE_TENSOR)
                n->outputs[i]->type.requires_grad = 0;
        return;
    }
    if (n->op == NULL) {
        for (int32_t k = 0; k < n->n_attrs && depth < 256; k++) {
            yg_ir_attr *a = &n->attrs[k];
            if (a->kind != YG_IR_ATTR_GRAPH || strcmp(a->name, "df") == 0)
                continue;
            yg_graph *sub = a->u.g;
            if (sub->param->n_outputs != n->n_inputs || sub->ret->n_inputs != n->n_outputs)
                continue;
            for (int32_t i = 0; i < n->n_inputs; i++) {
                if (sub->param->outputs[i]->type.kind == YG_IR_TYPE_TENSOR)
                    sub->param->outputs[i]->type.requires_grad = n->inputs[i]->type.requires_grad;
            }
            propagate(sub, depth + 1);
            for (int32_t i = 0; i < n->n_outputs; i++)
                n->outputs[i]->type.requires_grad = sub->ret->inputs[i]->type.requires_grad;
        }
        return;
    }
    int32_t any = 0; /* 0: all known false, 1: one true, -1: unknown */
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const yg_ir_type *t = &n->inputs[i]->type;
        if (t->kind != YG_IR_TYPE_TENSOR)
            continue;
        if (t->requires_grad == 1) {
            any = 1;
            break;
        }
        if (t->requires_grad == YG_IR_UNKNOWN)
            any = YG_IR_UNKNOWN;
    }
    bool diff = differentiable(n);
    for (int32_t i = 0; i < n->n_outputs; i++) {
        yg_ir_type *t = &n->outputs[i]->type;
        bool floating =
            t->dtype == YG_IR_UNKNOWN || t->dtype == YG_FLOAT32 || t->dtype == YG_FLOAT64;
        t->requires_grad = !diff || !floating ? 0 : any;
    }
}

static void propagate(yg_graph *g, int depth) {
    for (yg_ir_node *n = g->first; n != NULL; n = n->next)
        propagate_node(n, depth);
}

yg_status yg_graph_propagate_requires_grad(yg_graph *g) {
    if (g == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "propagate_requires_grad: graph is NULL");
    propagate(g, 0);
    return yg__ir_check_after_pass(g, "propagate_requires_grad");
}
