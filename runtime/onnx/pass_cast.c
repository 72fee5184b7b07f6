/*
 * pass_cast.c - Cast insertion for export: ONNX's elementwise operators
 * (Add, Mul, Where's values, the comparisons, ...) take inputs of one
 * type, while yagrad's pointwise ops promote (add of an int64 and a
 * float32 tensor computes in float32).  So every input of a pointwise or
 * broadcasting op whose dtype is not the promoted dtype of the op's
 * tensor inputs gets a to.dtype node before it, which exports as Cast;
 * the op then computes what yagrad computed.  Boolean inputs that are
 * conditions or masks (where's condition, masked_fill's mask) take no
 * part in the promotion.  Inputs of unknown dtype leave the node alone.
 */
#include "jit/passes/passes.h"
#include "onnx/passes.h"
#include "op_ids.h"

#include <string.h>

/* Whether input i of n is a condition or mask rather than a value. */
static bool is_condition(const yg_ir_node *n, int32_t i) {
    char name[64];
    if (!yg__ir_tensor_arg_name(n->op, i, n->n_inputs, name, sizeof name))
        return true;
    return strcmp(name, "condition") == 0 || strcmp(name, "mask") == 0;
}

/* The promoted dtype of n's value inputs; false when one is unknown or
 * there are fewer than two, or they agree already. */
static bool promoted(const yg_ir_node *n, yg_dtype *out) {
    int32_t seen = 0;
    bool differ = false;
    yg_dtype d = YG_FLOAT32;
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const yg_ir_type *t = &n->inputs[i]->type;
        if (t->kind != YG_IR_TYPE_TENSOR || is_condition(n, i))
            continue;
        if (t->dtype == YG_IR_UNKNOWN)
            return false;
        differ |= seen > 0 && (yg_dtype)t->dtype != d;
        d = seen++ == 0 ? (yg_dtype)t->dtype : yg__promote_types(d, (yg_dtype)t->dtype);
    }
    *out = d;
    return seen >= 2 && differ;
}

/* Makes n read to.dtype(input i, d) at input i. */
static yg_status cast_input(yg_graph *g, yg_ir_node *n, int32_t i, yg_dtype d) {
    const yg_op_info *op = NULL;
    const char *kind = yg__ir_kind_lookup("to.dtype", 8, &op);
    yg_ir_node *c = NULL;
    if (kind == NULL)
        return YG_OK;
    YG_RETURN_IF_ERROR(yg__ir_node_create(g, kind, op, 1, false, &c));
    yg__ir_node_move_before(c, n);
    YG_RETURN_IF_ERROR(yg__ir_node_add_input(c, n->inputs[i]));
    YG_RETURN_IF_ERROR(yg_ir_node_set_int(c, "dtype", d));
    c->outputs[0]->type = n->inputs[i]->type;
    c->outputs[0]->type.dtype = d;
    return yg__ir_node_replace_input(n, i, c->outputs[0]);
}

yg_status yg__onnx_insert_casts(yg_graph *g) {
    for (yg_ir_node *n = g->first; n != NULL; n = n->next) {
        yg_dtype d;
        if (n->op == NULL ||
            !(n->op->kind == YG_OP_KIND_POINTWISE || (n->op->tags & YG_OP_TAG_BROADCAST)) ||
            !promoted(n, &d))
            continue;
        for (int32_t i = 0; i < n->n_inputs; i++) {
            const yg_ir_type *t = &n->inputs[i]->type;
            if (t->kind == YG_IR_TYPE_TENSOR && !is_condition(n, i) && (yg_dtype)t->dtype != d)
                YG_RETURN_IF_ERROR(cast_input(g, n, i, d));
        }
    }
    return YG_OK;
}
