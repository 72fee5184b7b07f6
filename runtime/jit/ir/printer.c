/*
 * printer.c - the text form of a graph (docs/ir.md has the grammar) and
 * canonicalize, which renumbers values so equal graphs print the same.
 *
 * The printer is the definition of "canonical text": the parser accepts
 * more (any whitespace, comments, attributes and type fields in any
 * order, types left out), and print(parse(print(g))) == print(g) holds
 * because everything the printer writes is fixed: attributes sorted by
 * name (the node keeps them so), type fields in one order with unknown
 * ones left out, numbers in their shortest exact form, and two spaces of
 * indent per level.  A subgraph prints inside its attribute, indented
 * under the node that holds it, with the closing ']' back at the node's
 * indent.  (Canonicalize lives in ir.c, next to the name table it
 * rebuilds.)
 */
#include "jit/ir/ir.h"
#include "jit/ir/text.h"

#include <string.h>

void yg__ir_print_type(yg_sb *sb, const yg_ir_type *t) {
    bool first = true;
    if (t->kind == YG_IR_TYPE_NONE) {
        yg__sb_puts(sb, "None");
        return;
    }
    yg__sb_puts(sb, "Tensor");
#define FIELD() yg__sb_puts(sb, first ? "(" : ", "), first = false
    if (t->dtype != YG_IR_UNKNOWN) {
        FIELD();
        yg__sb_printf(sb, "dtype=%s", yg_dtype_name((yg_dtype)t->dtype));
    }
    if (t->device != YG_IR_UNKNOWN) {
        FIELD();
        yg__sb_printf(sb, "device=%s", yg__device_name((yg_device)t->device));
    }
    if (t->ndim != YG_IR_UNKNOWN) {
        FIELD();
        yg__sb_puts(sb, "sizes=[");
        for (int32_t i = 0; i < t->ndim; i++) {
            if (i > 0)
                yg__sb_puts(sb, ", ");
            if (t->sizes[i] == YG_IR_UNKNOWN)
                yg__sb_putc(sb, '?');
            else
                yg__sb_printf(sb, "%lld", (long long)t->sizes[i]);
        }
        yg__sb_putc(sb, ']');
    }
    if (t->requires_grad != YG_IR_UNKNOWN) {
        FIELD();
        yg__sb_puts(sb, t->requires_grad ? "requires_grad=true" : "requires_grad=false");
    }
#undef FIELD
    if (!first)
        yg__sb_putc(sb, ')');
}

/* One element of a contiguous tensor, in the form the parser reads for
 * its dtype. */
static void print_element(yg_sb *sb, const yg_tensor *t, int64_t i) {
    const char *p = yg__tensor_ptr(t);
    switch (t->dtype) {
    case YG_FLOAT32:
        yg__sb_float32(sb, ((const float *)p)[i]);
        break;
    case YG_FLOAT64:
        yg__sb_double(sb, ((const double *)p)[i], false);
        break;
    case YG_INT64:
        yg__sb_printf(sb, "%lld", (long long)((const int64_t *)p)[i]);
        break;
    case YG_BOOL:
        yg__sb_putc(sb, ((const unsigned char *)p)[i] ? '1' : '0');
        break;
    case YG_INT32:
        yg__sb_printf(sb, "%lld", (long long)((const int32_t *)p)[i]);
        break;
    case YG_FLOAT16:
    case YG_BFLOAT16:
        yg__sb_float32(sb, (float)yg__load_f64(p + 2 * i, t->dtype));
        break;
    default:
        yg__sb_putc(sb, '?');
        break;
    }
}

static void print_tensor(yg_sb *sb, const yg_tensor *t) {
    int64_t numel = yg_tensor_numel(t);
    yg__sb_printf(sb, "tensor(%s, [", yg_dtype_name(t->dtype));
    for (int32_t i = 0; i < t->ndim; i++)
        yg__sb_printf(sb, "%s%lld", i > 0 ? ", " : "", (long long)t->sizes[i]);
    yg__sb_puts(sb, "], [");
    for (int64_t i = 0; i < numel; i++) {
        if (i > 0)
            yg__sb_puts(sb, ", ");
        print_element(sb, t, i);
    }
    yg__sb_puts(sb, "])");
}

static void print_graph(yg_sb *sb, const yg_graph *g, int indent);

static void print_attr(yg_sb *sb, const yg_ir_attr *a, int indent) {
    yg__sb_printf(sb, "%s=", a->name);
    switch (a->kind) {
    case YG_IR_ATTR_INT:
        yg__sb_printf(sb, "%lld", (long long)a->u.i);
        break;
    case YG_IR_ATTR_FLOAT:
        yg__sb_double(sb, a->u.f, true);
        break;
    case YG_IR_ATTR_STR:
        yg__sb_quoted(sb, a->u.s);
        break;
    case YG_IR_ATTR_INTS:
        yg__sb_putc(sb, '[');
        for (int64_t i = 0; i < a->u.ints.len; i++)
            yg__sb_printf(sb, "%s%lld", i > 0 ? ", " : "", (long long)a->u.ints.items[i]);
        yg__sb_putc(sb, ']');
        break;
    case YG_IR_ATTR_FLOATS:
        /* An empty float list is spelled "float[]": "[]" reads as ints. */
        yg__sb_puts(sb, a->u.floats.len == 0 ? "float[" : "[");
        for (int64_t i = 0; i < a->u.floats.len; i++) {
            if (i > 0)
                yg__sb_puts(sb, ", ");
            yg__sb_double(sb, a->u.floats.items[i], true);
        }
        yg__sb_putc(sb, ']');
        break;
    case YG_IR_ATTR_TENSOR:
        print_tensor(sb, a->u.t);
        break;
    case YG_IR_ATTR_GRAPH:
        print_graph(sb, a->u.g, indent + 2);
        yg__sb_putc(sb, '\n');
        yg__sb_indent(sb, indent);
        break;
    }
}

static void print_value_list(yg_sb *sb, yg_ir_value *const *values, int32_t n) {
    for (int32_t i = 0; i < n; i++)
        yg__sb_printf(sb, "%s%%%s", i > 0 ? ", " : "", values[i]->name);
}

static void print_node(yg_sb *sb, const yg_ir_node *n, int indent) {
    yg__sb_indent(sb, indent);
    for (int32_t i = 0; i < n->n_outputs; i++) {
        yg__sb_printf(sb, "%s%%%s : ", i > 0 ? ", " : "", n->outputs[i]->name);
        yg__ir_print_type(sb, &n->outputs[i]->type);
    }
    if (n->n_outputs > 0)
        yg__sb_puts(sb, " = ");
    yg__sb_puts(sb, n->kind);
    if (n->n_attrs > 0) {
        yg__sb_putc(sb, '[');
        for (int32_t i = 0; i < n->n_attrs; i++) {
            if (i > 0)
                yg__sb_puts(sb, ", ");
            print_attr(sb, &n->attrs[i], indent);
        }
        yg__sb_putc(sb, ']');
    }
    yg__sb_putc(sb, '(');
    print_value_list(sb, n->inputs, n->n_inputs);
    yg__sb_puts(sb, ")\n");
}

/* Prints "graph(...):\n", the nodes at indent + 2 and "return (...)"
 * without a final newline. */
static void print_graph(yg_sb *sb, const yg_graph *g, int indent) {
    yg__sb_puts(sb, "graph(");
    for (int32_t i = 0; i < g->param->n_outputs; i++) {
        const yg_ir_value *v = g->param->outputs[i];
        yg__sb_printf(
            sb, "%s%s%%%s : ", i > 0 ? ", " : "", v->is_param ? "param " : "", v->name);
        yg__ir_print_type(sb, &v->type);
    }
    yg__sb_puts(sb, "):\n");
    for (const yg_ir_node *n = g->first; n != NULL; n = n->next)
        print_node(sb, n, indent + 2);
    yg__sb_indent(sb, indent + 2);
    yg__sb_puts(sb, "return (");
    print_value_list(sb, g->ret->inputs, g->ret->n_inputs);
    yg__sb_putc(sb, ')');
}

yg_status yg_graph_print(const yg_graph *g, char **out) {
    yg_sb sb = {0};
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_print: out is NULL");
    *out = NULL;
    if (g == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_print: graph is NULL");
    print_graph(&sb, g, 0);
    yg__sb_putc(&sb, '\n');
    return yg__sb_finish(&sb, "graph_print", out);
}
