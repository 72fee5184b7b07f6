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
 *
 * It also gives Gemm its transposed operand: what a trace through
 * composites records for linear -- mm or matmul of x and t(w), then an
 * add of a 1-d bias -- becomes one linear node again, which exports as
 * Gemm(transB=1) (a 2-d x) or MatMul(Transpose(w)) and Add, instead of a
 * Transpose, a MatMul and an Add.  The new node keeps the replaced
 * node's value name, so a graph output keeps its name.
 */
#include "jit/passes/passes.h"
#include "onnx/passes.h"
#include "op_ids.h"

#include <string.h>

static bool same_sizes(const yg_ir_node *n) {
    return yg__pass_same_known_sizes(&n->inputs[0]->type, &n->outputs[0]->type);
}

static bool same_dtype(const yg_ir_node *n, int32_t dtype) {
    int32_t in = n->inputs[0]->type.dtype;
    return in != YG_IR_UNKNOWN && in == dtype;
}

/* The value n computes when it is an identity of it, else NULL. */
static yg_ir_value *identity_of(const yg_ir_node *n) {
    int64_t v = 0;
    double p = 0;

    if (n->op == NULL || n->n_inputs < 1 || n->n_outputs != 1 ||
        n->inputs[0]->type.kind != YG_IR_TYPE_TENSOR)
        return NULL;
    if ((yg__pass_is(n, YG_OP_expand) || yg__pass_is(n, YG_OP_view) || yg__pass_is(n, YG_OP_reshape)) &&
        same_sizes(n))
        return n->inputs[0];
    if (yg__pass_is(n, YG_OP_contiguous) || yg__pass_is(n, YG_OP_clone))
        return n->inputs[0];
    if (yg__pass_is(n, YG_OP_t) && yg__pass_is(n->inputs[0]->node, YG_OP_t))
        return n->inputs[0]->node->inputs[0];
    if (yg__pass_is(n, YG_OP_dropout) && ((yg__ir_attr_as_int(n, "train", &v) && v == 0) ||
                                      (yg__ir_attr_as_double(n, "p", &p) && p == 0)))
        return n->inputs[0];
    if ((yg__pass_is(n, YG_OP_to_dtype) || yg__pass_is(n, YG_OP_to_copy)) &&
        yg__ir_attr_as_int(n, "dtype", &v) && same_dtype(n, (int32_t)v))
        return n->inputs[0];
    if (yg__pass_is(n, YG_OP_type_as) && n->n_inputs == 2 && same_dtype(n, n->inputs[1]->type.dtype))
        return n->inputs[0];
    return NULL;
}

static bool writes_in_place(const yg_graph *g) {
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

/* Replaces node n (one output) by linear(x, w, b) (b NULL: a new
 * prim::None), placed where n was, with n's output type and name. */
static yg_status replace_by_linear(yg_ir_node *n, yg_ir_value *x, yg_ir_value *w, yg_ir_value *b) {
    const yg_op_info *op = NULL;
    const char *kind = yg__ir_kind_lookup("linear", 6, &op);
    yg_ir_node *lin = NULL, *none = NULL;
    yg_ir_value *old = n->outputs[0];
    char name[256];

    if (kind == NULL || strlen(old->name) >= sizeof name)
        return YG_OK; /* no linear op in this build, or an odd name: keep n */
    strcpy(name, old->name);
    if (b == NULL) {
        YG_RETURN_IF_ERROR(yg__ir_node_create(n->owner, yg__prim_none, NULL, 1, false, &none));
        yg__ir_node_move_before(none, n);
        b = none->outputs[0];
    }
    YG_RETURN_IF_ERROR(yg__ir_node_create(n->owner, kind, op, 1, false, &lin));
    yg__ir_node_move_before(lin, n);
    YG_RETURN_IF_ERROR(yg__ir_node_add_input(lin, x));
    YG_RETURN_IF_ERROR(yg__ir_node_add_input(lin, w));
    YG_RETURN_IF_ERROR(yg__ir_node_add_input(lin, b));
    lin->outputs[0]->type = old->type;
    YG_RETURN_IF_ERROR(yg__ir_value_replace_all_uses(old, lin->outputs[0]));
    yg__ir_node_destroy(n);
    return yg__ir_value_rename(lin->outputs[0], name, strlen(name));
}

/* The w of a `t(w)` input with w 2-d, else NULL. */
static yg_ir_value *transposed_matrix(const yg_ir_value *v) {
    const yg_ir_node *t = v->node;
    if (!yg__pass_is(t, YG_OP_t) || t->inputs[0]->type.ndim != 2)
        return NULL;
    return t->inputs[0];
}

static bool is_bias_of(const yg_ir_value *b, const yg_ir_node *lin) {
    const yg_ir_type *w = &lin->inputs[1]->type;
    return b->type.kind == YG_IR_TYPE_TENSOR && b->type.ndim == 1 && w->ndim == 2 &&
           b->type.sizes[0] >= 0 && b->type.sizes[0] == w->sizes[0] &&
           b->type.dtype == lin->outputs[0]->type.dtype && b->type.dtype != YG_IR_UNKNOWN;
}

/* mm/matmul(x, t(w)) -> linear(x, w); add(linear(x, w), b) with a 1-d b
 * of w's out_features and alpha 1 -> linear(x, w, b). */
static yg_status fold_linear(yg_graph *g) {
    for (yg_ir_node *n = g->first, *next = NULL; n != NULL; n = next) {
        next = n->next;
        if ((yg__pass_is(n, YG_OP_mm) || yg__pass_is(n, YG_OP_matmul)) && n->inputs[0]->type.ndim >= 1) {
            yg_ir_value *w = transposed_matrix(n->inputs[1]);
            if (w != NULL)
                YG_RETURN_IF_ERROR(replace_by_linear(n, n->inputs[0], w, NULL));
            continue;
        }
        double alpha = 1;
        if (!yg__pass_is(n, YG_OP_add) || (yg__ir_attr_as_double(n, "alpha", &alpha) && alpha != 1))
            continue;
        for (int k = 0; k < 2; k++) {
            yg_ir_node *lin = n->inputs[k]->node;
            yg_ir_value *b = n->inputs[1 - k];
            if (!yg__pass_is(lin, YG_OP_linear) || lin->outputs[0]->n_uses != 1 ||
                lin->inputs[2]->type.kind != YG_IR_TYPE_NONE || !is_bias_of(b, lin) ||
                !yg__pass_same_known_sizes(&lin->outputs[0]->type, &n->outputs[0]->type))
                continue;
            yg_ir_value *x = lin->inputs[0], *w = lin->inputs[1];
            YG_RETURN_IF_ERROR(replace_by_linear(n, x, w, b));
            break; /* lin is now unused: DCE removes it */
        }
    }
    return YG_OK;
}

yg_status yg__onnx_peephole(yg_graph *g) {
    if (writes_in_place(g))
        return YG_OK;
    YG_RETURN_IF_ERROR(fold_linear(g));
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
