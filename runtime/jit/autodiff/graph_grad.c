/*
 * graph_grad.c - the builder the generated graph derivatives call
 * (graph_grad.h): reads the forward node through tensor ordinals and slots,
 * appends op nodes to the backward graph, sticky errors.
 */
#include "jit/autodiff/graph_grad.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static bool ok(const yg_df *s) {
    return s->st == YG_OK;
}

static void fail(yg_df *s, yg_status st) {
    if (s->st == YG_OK)
        s->st = st;
}

/* Fails with "autodiff: <forward node>: <what><name>". */
static void fail_node(yg_df *s, yg_status code, const char *what, const char *name) {
    char desc[200];
    if (!ok(s))
        return;
    yg__ir_node_describe(s->node, desc, sizeof desc);
    fail(s, yg__fail(code, "autodiff: %s: %s%s", desc, what, name));
}

void yg__df_check(yg_df *s, yg_status st) {
    if (st != YG_OK)
        fail(s, st);
}

yg_status yg__df_status(const yg_df *s) {
    return s->st;
}

/* The node inputs [*first, *first + *len) of tensor ordinal ord; false
 * when ord names no argument. */
static bool ordinal_inputs(const yg_ir_node *n, int ord, int32_t *first, int32_t *len) {
    yg_ir_kind_info info = yg__ir_kind_info(n);
    if (!info.has_tensor_list || ord < info.list_pos) {
        *first = ord;
        *len = 1;
        return ord >= 0 && ord < n->n_inputs;
    }
    int32_t list_len = n->n_inputs - info.n_tensor_args;
    if (ord == info.list_pos) {
        *first = info.list_pos;
        *len = list_len;
        return true;
    }
    *first = info.list_pos + list_len + (ord - 1 - info.list_pos);
    *len = 1;
    return *first < n->n_inputs;
}

static yg_ir_value *slot_value(yg_df *s, int slot) {
    int32_t first, len;
    if (slot >= 0)
        return ordinal_inputs(s->node, slot, &first, &len) && len == 1 ? s->node->inputs[first]
                                                                       : NULL;
    int32_t i = -1 - slot;
    return i < s->node->n_outputs ? s->node->outputs[i] : NULL;
}

bool yg__df_needs(yg_df *s, int ord) {
    int32_t first, len;
    if (!ordinal_inputs(s->node, ord, &first, &len))
        return false;
    for (int32_t i = first; i < first + len; i++)
        if (s->needs[i])
            return true;
    return false;
}

/* A prim::None of df. */
static yg_ir_value *none_value(yg_df *s) {
    yg_ir_node *n = NULL;
    yg_status st = yg_graph_add_node(s->df, "prim::None", NULL, 0, 1, &n);
    if (st != YG_OK) {
        fail(s, st);
        return NULL;
    }
    /* Made while the node reading it is half built: it goes first. */
    yg__ir_node_move_to_front(n);
    return n->outputs[0];
}

static yg_ir_value *captured(yg_df *s, yg_ir_value *v) {
    if (!ok(s))
        return NULL;
    if (v == NULL) {
        fail_node(s, YG_ERR_INTERNAL, "a formula read an argument the node does not have", "");
        return NULL;
    }
    if (v->type.kind == YG_IR_TYPE_NONE)
        return none_value(s);
    return s->capture(s, v);
}

yg_ir_value *yg__df_input(yg_df *s, int ord) {
    return ok(s) ? captured(s, slot_value(s, ord)) : NULL;
}

yg_ir_value *yg__df_output(yg_df *s, int i) {
    return ok(s) ? captured(s, slot_value(s, YG_DF_OUT(i))) : NULL;
}

/* The static type of a slot, all of whose sizes are known; NULL (and
 * YG_ERR_NOT_IMPLEMENTED) otherwise. */
static const yg_ir_type *known_type(yg_df *s, int slot, bool need_dtype) {
    yg_ir_value *v = ok(s) ? slot_value(s, slot) : NULL;
    if (!ok(s))
        return NULL;
    if (v == NULL || v->type.kind != YG_IR_TYPE_TENSOR) {
        fail_node(
            s, YG_ERR_INTERNAL, "a formula read metadata of a value that is not a tensor", "");
        return NULL;
    }
    bool known = v->type.ndim != YG_IR_UNKNOWN && (!need_dtype || v->type.dtype != YG_IR_UNKNOWN);
    for (int32_t d = 0; known && d < v->type.ndim; d++)
        known = v->type.sizes[d] != YG_IR_UNKNOWN;
    if (!known) {
        fail_node(
            s, YG_ERR_NOT_IMPLEMENTED, "its formula needs static sizes and dtype of %", v->name);
        return NULL;
    }
    return &v->type;
}

yg_ir_value *yg__df_grad(yg_df *s, int i) {
    if (!ok(s))
        return NULL;
    if (i < 0 || i >= s->node->n_outputs) {
        fail_node(s, YG_ERR_INTERNAL, "a formula read the gradient of a missing output", "");
        return NULL;
    }
    if (s->grads[i] != NULL)
        return s->grads[i];
    /* Undefined: zeros of the output's type, as the eager node's
     * yg__node_defined_grads makes them. */
    const yg_ir_type *t = known_type(s, YG_DF_OUT(i), true);
    yg_ir_node *n = yg__df_op(s, "zeros", 1);
    if (t == NULL || n == NULL)
        return NULL;
    yg__df_ints(s, n, "size", t->sizes, t->ndim);
    yg__df_int(s, n, "dtype", t->dtype);
    /* Made while the node reading it is half built: it goes first (it
     * reads nothing, so any place is valid). */
    yg__ir_node_move_to_front(n);
    s->grads[i] = yg__df_out(s, n, 0);
    return s->grads[i];
}

int64_t yg__df_list_len(yg_df *s, int ord) {
    int32_t first, len;
    if (!ok(s))
        return 0;
    if (!ordinal_inputs(s->node, ord, &first, &len)) {
        fail_node(s, YG_ERR_INTERNAL, "a formula read a missing Tensor[] argument", "");
        return 0;
    }
    return len;
}

int64_t yg__df_numel(yg_df *s, int slot) {
    const yg_ir_type *t = known_type(s, slot, false);
    if (t == NULL)
        return 0;
    int64_t n = yg__sizes_product(t->sizes, t->ndim);
    if (n < 0)
        fail_node(s, YG_ERR_SHAPE, "the element count of a value overflows: %",
                  slot_value(s, slot)->name);
    return n < 0 ? 0 : n;
}

int64_t yg__df_size(yg_df *s, int slot, int64_t dim) {
    const yg_ir_type *t = known_type(s, slot, false);
    if (t == NULL)
        return 0;
    int64_t d = dim < 0 ? dim + t->ndim : dim;
    if (d < 0 || d >= t->ndim) {
        char what[64];
        snprintf(what, sizeof what, "%" PRId64, dim);
        fail_node(s, YG_ERR_INDEX, "size(): dim out of range: ", what);
        return 0;
    }
    return t->sizes[d];
}

yg_dtype yg__df_dtype(yg_df *s, int slot) {
    const yg_ir_type *t = known_type(s, slot, true);
    return t != NULL ? (yg_dtype)t->dtype : YG_FLOAT32;
}

/* ---- appending ---- */

yg_ir_node *yg__df_op(yg_df *s, const char *kind, int64_t n_outputs) {
    yg_ir_node *n = NULL;
    if (!ok(s))
        return NULL;
    const yg_op_info *op = NULL;
    const char *k = yg__ir_kind_lookup(kind, strlen(kind), &op);
    if (k == NULL) {
        fail_node(s, YG_ERR_INTERNAL, "unknown op in a formula: ", kind);
        return NULL;
    }
    yg_status st = yg__ir_node_create(s->df, k, op, (int32_t)n_outputs, true, &n);
    if (st != YG_OK) {
        fail(s, st);
        return NULL;
    }
    return n;
}

void yg__df_in(yg_df *s, yg_ir_node *n, yg_ir_value *v) {
    if (ok(s) && (n == NULL || v == NULL))
        fail_node(s, YG_ERR_INTERNAL, "a formula input is missing", "");
    if (ok(s))
        yg__df_check(s, yg__ir_node_add_input(n, v));
}

void yg__df_in_list(yg_df *s, yg_ir_node *n, int ord) {
    int32_t first, len;
    if (!ok(s))
        return;
    if (!ordinal_inputs(s->node, ord, &first, &len)) {
        fail_node(s, YG_ERR_INTERNAL, "a formula read a missing Tensor[] argument", "");
        return;
    }
    for (int32_t i = first; i < first + len && ok(s); i++)
        yg__df_in(s, n, captured(s, s->node->inputs[i]));
}

void yg__df_in_grads(yg_df *s, yg_ir_node *n) {
    for (int32_t i = 0; i < s->node->n_outputs && ok(s); i++)
        yg__df_in(s, n, yg__df_grad(s, i));
}

void yg__df_int(yg_df *s, yg_ir_node *n, const char *name, int64_t v) {
    if (ok(s) && n != NULL)
        yg__df_check(s, yg_ir_node_set_int(n, name, v));
}

void yg__df_float(yg_df *s, yg_ir_node *n, const char *name, double v) {
    if (ok(s) && n != NULL)
        yg__df_check(s, yg_ir_node_set_float(n, name, v));
}

void yg__df_str(yg_df *s, yg_ir_node *n, const char *name, const char *v) {
    if (ok(s) && n != NULL && v != NULL)
        yg__df_check(s, yg_ir_node_set_str(n, name, v));
}

void yg__df_ints(yg_df *s, yg_ir_node *n, const char *name, const int64_t *v, int64_t len) {
    if (ok(s) && n != NULL)
        yg__df_check(s, yg_ir_node_set_ints(n, name, v, len));
}

void yg__df_sizes(yg_df *s, yg_ir_node *n, const char *name, int slot) {
    const yg_ir_type *t = known_type(s, slot, false);
    if (t != NULL)
        yg__df_ints(s, n, name, t->sizes, t->ndim);
}

void yg__df_list_sizes(yg_df *s, yg_ir_node *n, const char *name, int ord, int64_t dim) {
    int32_t first, len;
    int64_t sizes[YG_MAX_DIMS * 8];
    if (!ok(s))
        return;
    if (!ordinal_inputs(s->node, ord, &first, &len) || len > (int32_t)(sizeof sizes / 8)) {
        fail_node(s, YG_ERR_NOT_IMPLEMENTED, "a Tensor[] argument with too many items", "");
        return;
    }
    for (int32_t i = 0; i < len && ok(s); i++) {
        yg_ir_value *v = s->node->inputs[first + i];
        const yg_ir_type *t = &v->type;
        int64_t d = t->ndim > 0 && dim < 0 ? dim + t->ndim : dim;
        if (t->kind != YG_IR_TYPE_TENSOR || t->ndim == YG_IR_UNKNOWN || d < 0 || d >= t->ndim ||
            t->sizes[d] == YG_IR_UNKNOWN) {
            fail_node(s, YG_ERR_NOT_IMPLEMENTED, "its formula needs static sizes of %", v->name);
            return;
        }
        sizes[i] = t->sizes[d];
    }
    yg__df_ints(s, n, name, sizes, len);
}

void yg__df_dtype_attr(yg_df *s, yg_ir_node *n, const char *name, int slot) {
    yg_dtype d = yg__df_dtype(s, slot);
    yg__df_int(s, n, name, (int64_t)d);
}

void yg__df_mask(yg_df *s, yg_ir_node *n, const char *name, const int *ords, int len) {
    int64_t mask[16];
    if (!ok(s) || len > 16)
        return;
    for (int i = 0; i < len; i++)
        mask[i] = yg__df_needs(s, ords[i]);
    yg__df_ints(s, n, name, mask, len);
}

yg_ir_value *yg__df_out(yg_df *s, yg_ir_node *n, int i) {
    if (!ok(s) || n == NULL)
        return NULL;
    if (i >= n->n_outputs) {
        fail_node(s, YG_ERR_INTERNAL, "a formula read a missing output of ", n->kind);
        return NULL;
    }
    return n->outputs[i];
}

/* ---- results ---- */

void yg__df_set_grad(yg_df *s, int ord, yg_ir_value *v) {
    int32_t first, len;
    if (!ok(s) || !ordinal_inputs(s->node, ord, &first, &len) || len != 1)
        return;
    if (s->needs[first])
        s->grad_inputs[first] = v;
}

void yg__df_set_list_grads(yg_df *s, int ord, yg_ir_node *n) {
    int32_t first, len;
    if (!ok(s) || n == NULL || !ordinal_inputs(s->node, ord, &first, &len))
        return;
    if (n->n_outputs != len) {
        fail_node(s, YG_ERR_INTERNAL, "a Tensor[] gradient has the wrong length", "");
        return;
    }
    for (int32_t i = 0; i < len; i++)
        if (s->needs[first + i])
            s->grad_inputs[first + i] = n->outputs[i];
}
