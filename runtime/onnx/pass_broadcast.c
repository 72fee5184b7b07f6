/*
 * pass_broadcast.c - broadcast fusion for export: an op that broadcasts
 * in ONNX reads y instead of expand(y, sizes) when y's sizes are a suffix
 * of `sizes` and the op's result keeps its sizes without the expand.
 *
 * Why: a trace records the expands autograd or a composite made
 * (`add(x, expand(b, [N, M]))`); exported as ONNX Expand they cost a
 * materialised tensor and pin the traced N into the model, so a model
 * with a dynamic batch would still expand to the traced batch.  ONNX's
 * broadcasting (multidirectional for Add, Sub, Mul, Div, Pow, Where, the
 * comparisons; unidirectional into Gemm's C) aligns trailing dimensions,
 * so when y's sizes are the trailing sizes of the expansion the op
 * computes the same without it.  This is the rule of PyTorch's 2017
 * exporter (fuseBroadcast: "the original size is a suffix of the expanded
 * size").  It holds back when a size is unknown, when y's sizes are not a
 * suffix ([1, 3] expanded to [4, 3] is left alone, as the seed did), and
 * when the expand is what makes the result big (add(x [3], expand(y [3],
 * [2, 3])) is [2, 3], add(x, y) would be [3]).  The expand, once unused,
 * is left to DCE.
 */
#include "jit/passes/passes.h"
#include "onnx/passes.h"
#include "op_ids.h"

#include <string.h>

/* Whether input i of n broadcasts in ONNX (addmm: only self, Gemm's C). */
static bool broadcasting_input(const yg_ir_node *n, int32_t i) {
    static const char *const ops[] = {"add",
                                      "sub",
                                      "mul",
                                      "div",
                                      "pow",
                                      "where",
                                      "maximum",
                                      "minimum",
                                      "eq",
                                      "ne",
                                      "lt",
                                      "le",
                                      "gt",
                                      "ge",
                                      "logical_and",
                                      "logical_or",
                                      "logical_xor"};
    if (n->op == NULL)
        return false;
    if (strcmp(n->kind, "addmm") == 0)
        return i == 0;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (strcmp(n->kind, ops[k]) == 0)
            return true;
    return false;
}

static bool is_suffix(const yg_ir_type *y, const yg_ir_type *e) {
    if (y->ndim > e->ndim)
        return false;
    for (int32_t d = 0; d < y->ndim; d++)
        if (y->sizes[y->ndim - 1 - d] != e->sizes[e->ndim - 1 - d])
            return false;
    return true;
}

/* The broadcast of n's tensor inputs with input skip read as sub (NULL:
 * none); false when a size is unknown. */
static bool
broadcast_of(const yg_ir_node *n, int32_t skip, const yg_ir_value *sub, yg_ir_type *out) {
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

/* addmm's self must broadcast to the product's [n, m]: the result type. */
static bool keeps_result(const yg_ir_node *n, int32_t i, const yg_ir_value *y) {
    if (strcmp(n->kind, "addmm") == 0) {
        yg_ir_type r = n->outputs[0]->type, acc = y->type;
        return yg__pass_sizes_known(&r) && yg__pass_sizes_known(&acc) &&
               yg__pass_broadcast(&acc, &r) && yg__pass_same_known_sizes(&acc, &r);
    }
    yg_ir_type with, without;
    return broadcast_of(n, -1, NULL, &with) && broadcast_of(n, i, y, &without) &&
           yg__pass_same_known_sizes(&with, &without);
}

yg_status yg__onnx_fuse_broadcast(yg_graph *g) {
    for (yg_ir_node *n = g->first; n != NULL; n = n->next) {
        for (int32_t i = 0; i < n->n_inputs; i++) {
            const yg_ir_node *e = n->inputs[i]->node;
            if (e->kind == yg__prim_param || !yg__pass_is(e, YG_OP_expand) || !broadcasting_input(n, i))
                continue;
            yg_ir_value *y = e->inputs[0];
            const yg_ir_type *et = &e->outputs[0]->type;
            if (!yg__pass_sizes_known(&y->type) || !yg__pass_sizes_known(et) ||
                !is_suffix(&y->type, et) || !keeps_result(n, i, y))
                continue;
            YG_RETURN_IF_ERROR(yg__ir_node_replace_input(n, i, y));
        }
    }
    return YG_OK;
}
