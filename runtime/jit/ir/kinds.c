/*
 * kinds.c - node kinds: interning op names from the generated op table
 * (yg__ops[]), the prim kinds, and what an op's schema says about its
 * inputs and results, read from the table's data (yg_op_info's args and
 * returns; gen writes them from the parsed schema).
 *
 * Kinds are interned so passes compare them by pointer: an op node's kind
 * is the `name` string of its yg__ops entry; a prim node's kind is one of
 * the arrays below.  Lookup is a linear scan of ~200 names (about 1 us);
 * it happens once per node built or parsed, never per pass visit, so a
 * hash table would buy nothing measurable yet.
 */
#include "jit/ir/ir.h"

#include <string.h>

const char yg__prim_param[] = "prim::Param";
const char yg__prim_return[] = "prim::Return";
const char yg__prim_constant[] = "prim::Constant";
const char yg__prim_none[] = "prim::None";
const char yg__prim_fusion_group[] = "prim::FusionGroup";
const char yg__prim_diff_graph[] = "prim::DifferentiableGraph";

/* The prim kinds a user may name (Param and Return are structural). */
static const char *const public_prims[] = {
    yg__prim_constant,
    yg__prim_none,
    yg__prim_fusion_group,
    yg__prim_diff_graph,
};

const char *yg__ir_kind_lookup(const char *name, size_t len, const yg_op_info **op) {
    *op = NULL;
    for (size_t i = 0; i < sizeof public_prims / sizeof public_prims[0]; i++) {
        if (strlen(public_prims[i]) == len && memcmp(public_prims[i], name, len) == 0)
            return public_prims[i];
    }
    for (int32_t i = 0; i < yg__ops_count; i++) {
        const char *s = yg__ops[i].name;
        if (strlen(s) == len && memcmp(s, name, len) == 0) {
            *op = &yg__ops[i];
            return s;
        }
    }
    return NULL;
}

/* The tensor arguments of op as the IR sees them: their count (a list
 * not counted), whether one is a list, and how many come before it. */
static void count_tensor_args(const yg_op_info *op, yg_ir_kind_info *info) {
    for (int32_t i = 0; i < op->n_args; i++) {
        unsigned f = op->args[i].flags;
        if (!(f & YG_OP_ARG_TENSOR))
            continue;
        if (f & YG_OP_ARG_LIST) {
            info->has_tensor_list = true;
            info->list_pos = info->n_tensor_args;
        } else {
            info->n_tensor_args++;
        }
    }
}

yg_ir_kind_info yg__ir_kind_info(const yg_ir_node *n) {
    yg_ir_kind_info info = {0, false, 1, false, false, -1};
    if (n->op == NULL) {
        info.n_returns = 0;
        return info;
    }
    count_tensor_args(n->op, &info);
    info.n_returns = n->op->n_returns;
    info.is_inplace = n->op->returns_written;
    info.is_view = n->op->returns_view;
    return info;
}

/* The argument input idx of a node with n_inputs inputs stands for, or
 * NULL.  Inputs follow the tensor arguments in schema order; the one
 * Tensor[] (gen allows no second) takes what the others leave, wherever
 * it sits, so the arguments after it are counted from the end. */
static const yg_op_arg *tensor_arg(const yg_op_info *op, int32_t idx, int32_t n_inputs) {
    if (op == NULL || idx < 0 || idx >= n_inputs)
        return NULL;
    yg_ir_kind_info info = {0, false, 1, false, false, -1};
    count_tensor_args(op, &info);
    int32_t n_after = info.n_tensor_args - info.list_pos, want;
    if (!info.has_tensor_list || idx < info.list_pos)
        want = idx;
    else if (idx < n_inputs - n_after)
        want = info.list_pos;
    else
        want = info.list_pos + 1 + (idx - (n_inputs - n_after));
    for (int32_t i = 0, seen = 0; i < op->n_args; i++)
        if ((op->args[i].flags & YG_OP_ARG_TENSOR) && seen++ == want)
            return &op->args[i];
    return NULL;
}

bool yg__ir_tensor_arg_name(const yg_op_info *op,
                            int32_t idx,
                            int32_t n_inputs,
                            char *buf,
                            size_t buf_len) {
    const yg_op_arg *a = tensor_arg(op, idx, n_inputs);
    if (buf_len == 0)
        return false;
    buf[0] = '\0';
    if (a == NULL)
        return false;
    size_t n = strlen(a->name);
    if (n >= buf_len)
        n = buf_len - 1;
    memcpy(buf, a->name, n);
    buf[n] = '\0';
    return true;
}

bool yg__ir_tensor_arg_optional(const yg_op_info *op, int32_t idx, int32_t n_inputs) {
    const yg_op_arg *a = tensor_arg(op, idx, n_inputs);
    return a != NULL && (a->flags & YG_OP_ARG_OPTIONAL);
}

bool yg__ir_node_has_side_effects(const yg_ir_node *n) {
    if (n->op != NULL) {
        const char *dot = strchr(n->kind, '.');
        size_t base = dot != NULL ? (size_t)(dot - n->kind) : strlen(n->kind);
        if (base > 0 && n->kind[base - 1] == '_')
            return true;
        /* A state argument (Tensor(a!)?, batch_norm's running stats) is
         * written; a random op advances its generator, so two equal calls
         * differ and dropping one changes later draws. */
        for (int32_t i = 0; i < n->op->n_args; i++)
            if (n->op->args[i].flags & (YG_OP_ARG_WRITTEN | YG_OP_ARG_GENERATOR))
                return true;
    }
    for (int32_t i = 0; i < n->n_attrs; i++) {
        const yg_ir_attr *a = &n->attrs[i];
        if (a->kind == YG_IR_ATTR_STR && strcmp(a->name, "mutates") == 0)
            return true;
        if (a->kind == YG_IR_ATTR_GRAPH) {
            for (const yg_ir_node *m = a->u.g->first; m != NULL; m = m->next) {
                if (yg__ir_node_has_side_effects(m))
                    return true;
            }
        }
    }
    return false;
}

bool yg__ir_op_has_attr_arg(const yg_op_info *op, const char *name) {
    for (int32_t i = 0; op != NULL && i < op->n_args; i++)
        if (!(op->args[i].flags & YG_OP_ARG_TENSOR) && strcmp(op->args[i].name, name) == 0)
            return true;
    return false;
}
