/*
 * lint.c - the graph linter: the invariants of ir.h checked from scratch,
 * and the per-node kind check shared with graph building and the parser.
 *
 * The linter trusts nothing a pass could have broken: it walks the nodes
 * in order, marking each value defined (in its scratch field) as it goes,
 * so "used before its definition" covers values from later nodes, from
 * other graphs and from freed nodes alike (a value of another graph is
 * never marked).  Use lists are checked both ways: every input is a
 * recorded use, and every recorded use is an input, counted exactly.
 *
 * Messages name the node by its text ("%y = mul(%a, %b)") because a
 * pass author reads them next to a printed graph.
 */
#include "jit/ir/ir.h"

#include <stdio.h>
#include <string.h>

void yg__ir_node_describe(const yg_ir_node *n, char *buf, size_t buf_len) {
    size_t pos = 0;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        if (pos < buf_len)                                                                         \
            pos += (size_t)snprintf(buf + pos, buf_len - pos, __VA_ARGS__);                        \
    } while (0)
    if (buf_len == 0)
        return;
    buf[0] = '\0';
    if (n->kind == yg__prim_return) {
        PUT("return (");
    } else {
        for (int32_t i = 0; i < n->n_outputs; i++)
            PUT("%s%%%s", i > 0 ? ", " : "", n->outputs[i]->name);
        PUT("%s%s(", n->n_outputs > 0 ? " = " : "", n->kind);
    }
    for (int32_t i = 0; i < n->n_inputs; i++)
        PUT("%s%%%s", i > 0 ? ", " : "", n->inputs[i] != NULL ? n->inputs[i]->name : "<null>");
    PUT(")");
#undef PUT
}

/* Checks a subgraph holder's arity against its graph attribute. */
static bool
check_holder(const yg_ir_node *n, const char *attr, bool required, char *msg, size_t len) {
    const yg_ir_attr *a = yg__ir_node_attr(n, attr);
    if (a == NULL) {
        if (required)
            snprintf(msg, len, "%s needs a graph attribute %s", n->kind, attr);
        return !required;
    }
    if (a->kind != YG_IR_ATTR_GRAPH) {
        snprintf(msg, len, "%s: attribute %s must be a graph", n->kind, attr);
        return false;
    }
    if (strcmp(attr, "df") == 0)
        return true; /* df's arity is the backward's, not the node's */
    const yg_graph *g = a->u.g;
    if (g->param->n_outputs != n->n_inputs || g->ret->n_inputs != n->n_outputs) {
        snprintf(msg,
                 len,
                 "%s has %d inputs and %d outputs but its %s graph has %d and %d",
                 n->kind,
                 n->n_inputs,
                 n->n_outputs,
                 attr,
                 g->param->n_outputs,
                 g->ret->n_inputs);
        return false;
    }
    return true;
}

static bool check_prim(const yg_ir_node *n, bool attrs, char *msg, size_t len) {
    bool leaf = n->kind == yg__prim_constant || n->kind == yg__prim_none;
    if (leaf && (n->n_inputs != 0 || n->n_outputs != 1)) {
        snprintf(msg,
                 len,
                 "%s takes no inputs and has 1 output, got %d inputs and %d outputs",
                 n->kind,
                 n->n_inputs,
                 n->n_outputs);
        return false;
    }
    if (n->kind == yg__prim_none && n->outputs[0]->type.kind != YG_IR_TYPE_NONE) {
        snprintf(msg, len, "prim::None must output a None value");
        return false;
    }
    if (!attrs)
        return true;
    if (n->kind == yg__prim_constant) {
        const yg_ir_attr *a = yg__ir_node_attr(n, "value");
        if (a == NULL || a->kind != YG_IR_ATTR_TENSOR) {
            snprintf(msg, len, "prim::Constant needs a tensor attribute value");
            return false;
        }
        return true;
    }
    if (n->kind == yg__prim_fusion_group)
        return check_holder(n, "subgraph", true, msg, len);
    if (n->kind == yg__prim_diff_graph)
        return check_holder(n, "f", true, msg, len) && check_holder(n, "df", false, msg, len);
    return true;
}

static bool check_op(const yg_ir_node *n, bool attrs, char *msg, size_t len) {
    yg_ir_kind_info info = yg__ir_kind_info(n);
    bool count_ok = info.has_tensor_list ? n->n_inputs >= info.n_tensor_args
                                         : n->n_inputs == info.n_tensor_args;
    if (!count_ok) {
        snprintf(msg,
                 len,
                 "%s takes %s%d tensor inputs, got %d",
                 n->kind,
                 info.has_tensor_list ? "at least " : "",
                 info.n_tensor_args,
                 n->n_inputs);
        return false;
    }
    if (info.n_returns >= 0 && n->n_outputs != info.n_returns) {
        snprintf(msg, len, "%s has %d outputs, got %d", n->kind, info.n_returns, n->n_outputs);
        return false;
    }
    for (int32_t i = 0; i < n->n_inputs; i++) {
        if (n->inputs[i]->type.kind == YG_IR_TYPE_NONE &&
            !yg__ir_tensor_arg_optional(n->op, i, n->n_inputs)) {
            char arg[64];
            (void)yg__ir_tensor_arg_name(n->op, i, n->n_inputs, arg, sizeof arg);
            snprintf(msg, len, "%s: input %d (%s) is None but is not optional", n->kind, i, arg);
            return false;
        }
    }
    if (!attrs)
        return true;
    for (int32_t i = 0; i < n->n_attrs; i++) {
        const yg_ir_attr *a = &n->attrs[i];
        if (strcmp(a->name, "mutates") == 0 && a->kind == YG_IR_ATTR_STR)
            continue;
        if (!yg__ir_op_has_attr_arg(n->op, a->name)) {
            snprintf(
                msg, len, "%s has no argument %s (schema: %s)", n->kind, a->name, n->op->schema);
            return false;
        }
    }
    return true;
}

bool yg__ir_check_node(const yg_ir_node *n, bool attrs, char *msg, size_t msg_len) {
    for (int32_t i = 0; i < n->n_outputs; i++) {
        if (n->kind != yg__prim_none && n->outputs[i]->type.kind != YG_IR_TYPE_TENSOR) {
            snprintf(msg, msg_len, "%s: output %d must have a Tensor type", n->kind, i);
            return false;
        }
    }
    if (n->op == NULL)
        return check_prim(n, attrs, msg, msg_len);
    return check_op(n, attrs, msg, msg_len);
}

static yg_status lint_fail(const yg_ir_node *n, const char *what, const char *detail) {
    char desc[160];
    yg__ir_node_describe(n, desc, sizeof desc);
    return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_lint: %s: %s%s", desc, what, detail);
}

/* Checks that each input of n is defined (scratch == mark) and recorded
 * as a use. */
static yg_status lint_inputs(const yg_ir_node *n, int64_t mark) {
    char buf[128];
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const yg_ir_value *v = n->inputs[i];
        bool recorded = false;
        if (v == NULL) {
            snprintf(buf, sizeof buf, "input %d is NULL", i);
            return lint_fail(n, buf, "");
        }
        if (v->scratch != mark) {
            snprintf(buf, sizeof buf, "input %d %%%.64s is used before its definition", i, v->name);
            return lint_fail(n, buf, "");
        }
        for (int32_t k = 0; k < v->n_uses; k++) {
            if (v->uses[k].node == n && v->uses[k].index == i)
                recorded = true;
        }
        if (!recorded) {
            snprintf(buf, sizeof buf, "input %d %%%.64s is missing from its use list", i, v->name);
            return lint_fail(n, buf, "");
        }
    }
    return YG_OK;
}

/* Checks n's outputs and marks them defined. */
static yg_status lint_outputs(const yg_graph *g, const yg_ir_node *n, int64_t mark) {
    char buf[160];
    for (int32_t i = 0; i < n->n_outputs; i++) {
        yg_ir_value *v = n->outputs[i];
        if (v->node != n || v->offset != i) {
            snprintf(
                buf, sizeof buf, "output %d %%%.64s does not point back at its node", i, v->name);
            return lint_fail(n, buf, "");
        }
        if (v->name == NULL || yg__ir_graph_find(g, v->name, strlen(v->name)) != v) {
            snprintf(buf, sizeof buf, "output %d %%%.64s is not in the name table", i, v->name);
            return lint_fail(n, buf, "");
        }
        if (!yg__ir_type_valid(&v->type)) {
            snprintf(buf, sizeof buf, "output %d %%%.64s has an invalid type", i, v->name);
            return lint_fail(n, buf, "");
        }
        if (v->is_param && n != g->param) {
            snprintf(buf,
                     sizeof buf,
                     "output %d %%%.64s is marked as a parameter (only graph inputs can be)",
                     i,
                     v->name);
            return lint_fail(n, buf, "");
        }
        for (int32_t k = 0; k < v->n_uses; k++) {
            const yg_ir_use *u = &v->uses[k];
            if (u->index < 0 || u->index >= u->node->n_inputs || u->node->inputs[u->index] != v ||
                u->node->owner != g) {
                snprintf(buf,
                         sizeof buf,
                         "output %d %%%.64s has a stale use (input %d of a %s node)",
                         i,
                         v->name,
                         u->index,
                         u->node->kind);
                return lint_fail(n, buf, "");
            }
        }
        v->scratch = mark;
    }
    return YG_OK;
}

static yg_status lint_graph(const yg_graph *g, int depth);

static yg_status lint_node(const yg_graph *g, const yg_ir_node *n, int64_t mark, int depth) {
    char msg[256];
    if (n->owner != g)
        return lint_fail(n, "node belongs to another graph", "");
    YG_RETURN_IF_ERROR(lint_inputs(n, mark));
    if (!yg__ir_check_node(n, true, msg, sizeof msg))
        return lint_fail(n, msg, "");
    for (int32_t i = 0; i < n->n_attrs; i++) {
        if (i > 0 && strcmp(n->attrs[i - 1].name, n->attrs[i].name) >= 0)
            return lint_fail(n, "attributes are not sorted by name at ", n->attrs[i].name);
        if (n->attrs[i].kind == YG_IR_ATTR_GRAPH) {
            yg_status st = lint_graph(n->attrs[i].u.g, depth + 1);
            if (st != YG_OK) {
                char desc[160];
                yg__ir_node_describe(n, desc, sizeof desc);
                return yg__fail_prefix(st, desc);
            }
        }
    }
    return lint_outputs(g, n, mark);
}

static yg_status lint_graph(const yg_graph *g, int depth) {
    /* Each lint run uses a fresh mark so stale marks from an earlier run
     * (or another graph) never count as "defined".  The mark is derived
     * from a per-thread counter: graphs are not shared across threads
     * while linted. */
    static _Thread_local int64_t next_mark = 0;
    int64_t mark = ++next_mark;
    int64_t count = 0;
    if (depth > 256)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_lint: subgraphs nested too deep");
    YG_RETURN_IF_ERROR(lint_outputs(g, g->param, mark));
    for (const yg_ir_node *n = g->first; n != NULL; n = n->next) {
        if (n->next != NULL && n->next->prev != n)
            return lint_fail(n, "the node list is corrupt after this node", "");
        YG_RETURN_IF_ERROR(lint_node(g, n, mark, depth));
        /* lint_node may have linted subgraphs with newer marks; values of
         * this graph keep this graph's mark, so that is harmless. */
        count++;
    }
    if (count != g->n_nodes)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "graph_lint: node count %lld does not match the list (%lld nodes)",
                        (long long)g->n_nodes,
                        (long long)count);
    YG_RETURN_IF_ERROR(lint_inputs(g->ret, mark));
    int64_t values = g->param->n_outputs;
    for (const yg_ir_node *n = g->first; n != NULL; n = n->next)
        values += n->n_outputs;
    if (values != g->names.len)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "graph_lint: the name table has %lld names for %lld values",
                        (long long)g->names.len,
                        (long long)values);
    return YG_OK;
}

yg_status yg_graph_lint(const yg_graph *g) {
    if (g == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_lint: graph is NULL");
    return lint_graph(g, 0);
}

yg_status yg__ir_check_after_pass(const yg_graph *g, const char *pass) {
#ifdef NDEBUG
    (void)g;
    (void)pass;
    return YG_OK;
#else
    yg_status st = yg_graph_lint(g);
    if (st != YG_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", yg_last_error());
        return yg__fail(YG_ERR_INTERNAL, "%s: lint after pass: %s", pass, msg);
    }
    return YG_OK;
#endif
}
