/*
 * dump_dot.c - a graph as a Graphviz digraph: one box per node (kind and
 * attributes), one ellipse per graph input and output, one edge per use
 * labelled with the value's name and short type (dtype, sizes; the full
 * type is the edge's tooltip).  Each subgraph is a cluster
 * ("cluster_gN") drawn inside the cluster of the graph holding it, joined
 * to its holder by a dashed edge, so nested subgraphs nest visually.
 * Graphviz ids are prefixed by a per-dump graph number ("g0_n3") because
 * value names repeat across subgraphs.  Label text is escaped for DOT's
 * double-quoted strings; tests run the output through `dot -Tsvg`.
 */
#include "jit/ir/ir.h"
#include "jit/ir/text.h"

#include <stdio.h>

/* DOT-escaped text of s (quotes and backslashes). */
static void dot_escaped(yg_sb *sb, const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            yg__sb_putc(sb, '\\');
        if (*p == '\n')
            yg__sb_puts(sb, "\\n");
        else if (*p < 0x20 || *p >= 0x7f)
            yg__sb_printf(sb, "\\\\x%02x", *p);
        else
            yg__sb_putc(sb, (char)*p);
    }
}

/* A short attribute text for a node label: numbers and lists in full,
 * strings quoted, tensors as dtype and sizes, graphs as "graph". */
static void attr_text(yg_sb *sb, const yg_ir_attr *a) {
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
        for (int64_t i = 0; i < a->u.ints.len && i < 16; i++)
            yg__sb_printf(sb, "%s%lld", i > 0 ? ", " : "", (long long)a->u.ints.items[i]);
        yg__sb_puts(sb, a->u.ints.len > 16 ? ", ...]" : "]");
        break;
    case YG_IR_ATTR_FLOATS:
        yg__sb_putc(sb, '[');
        for (int64_t i = 0; i < a->u.floats.len && i < 16; i++) {
            if (i > 0)
                yg__sb_puts(sb, ", ");
            yg__sb_double(sb, a->u.floats.items[i], true);
        }
        yg__sb_puts(sb, a->u.floats.len > 16 ? ", ...]" : "]");
        break;
    case YG_IR_ATTR_TENSOR: {
        char sizes[128];
        yg__sb_printf(sb,
                      "tensor(%s, %s)",
                      yg_dtype_name(a->u.t->dtype),
                      yg__format_sizes(a->u.t->sizes, a->u.t->ndim, sizes, sizeof sizes));
        break;
    }
    case YG_IR_ATTR_GRAPH:
        yg__sb_puts(sb, "graph");
        break;
    }
}

typedef struct dot_state {
    yg_sb *sb;
    int64_t next_graph;
} dot_state;

/* Writes text escaped for a label, built in a scratch buffer. */
static void put_label(dot_state *st, yg_sb *text) {
    dot_escaped(st->sb, text->data != NULL ? text->data : "");
    if (text->failed)
        st->sb->failed = true;
    yg__sb_free(text);
}

static void dot_graph(dot_state *st, const yg_graph *g, int64_t gid, int depth);

static void dot_node(dot_state *st, const yg_ir_node *n, int64_t gid, int64_t id, int depth) {
    yg_sb *sb = st->sb;
    yg_sb label = {0};
    yg__sb_puts(&label, n->kind);
    for (int32_t i = 0; i < n->n_attrs; i++) {
        yg__sb_putc(&label, '\n');
        attr_text(&label, &n->attrs[i]);
    }
    yg__sb_printf(sb, "  g%lld_n%lld [label=\"", (long long)gid, (long long)id);
    put_label(st, &label);
    yg__sb_puts(sb, "\"];\n");
    for (int32_t i = 0; i < n->n_attrs; i++) {
        const yg_ir_attr *a = &n->attrs[i];
        if (a->kind != YG_IR_ATTR_GRAPH || depth >= 64)
            continue;
        int64_t sub = st->next_graph++;
        yg__sb_printf(sb, "  subgraph cluster_g%lld {\n    label=\"", (long long)sub);
        yg__sb_printf(&label, "%s of %s", a->name, n->kind);
        put_label(st, &label);
        yg__sb_puts(sb, "\";\n    style=rounded;\n");
        dot_graph(st, a->u.g, sub, depth + 1);
        yg__sb_puts(sb, "  }\n");
        yg__sb_printf(sb,
                      "  g%lld_n%lld -> g%lld_entry [style=dashed, arrowhead=none];\n",
                      (long long)gid,
                      (long long)id,
                      (long long)sub);
    }
}

/* The short type of an edge label: "float32 [2, ?]", with " grad" when
 * the value requires grad; nothing unknown is spelled. */
static void short_type(yg_sb *sb, const yg_ir_type *t) {
    if (t->kind != YG_IR_TYPE_TENSOR) {
        yg__sb_puts(sb, " None");
        return;
    }
    if (t->dtype != YG_IR_UNKNOWN)
        yg__sb_printf(sb, " %s", yg_dtype_name((yg_dtype)t->dtype));
    if (t->ndim != YG_IR_UNKNOWN) {
        yg__sb_puts(sb, " [");
        for (int32_t d = 0; d < t->ndim; d++) {
            if (t->sizes[d] == YG_IR_UNKNOWN)
                yg__sb_printf(sb, "%s?", d > 0 ? ", " : "");
            else
                yg__sb_printf(sb, "%s%lld", d > 0 ? ", " : "", (long long)t->sizes[d]);
        }
        yg__sb_puts(sb, "]");
    }
    if (t->requires_grad == 1)
        yg__sb_puts(sb, " grad");
}

/* An edge labelled with the value's name and short type; the full type
 * is its tooltip (a title in SVG). */
static void dot_edge(dot_state *st, const yg_ir_value *v, int64_t gid, const char *to) {
    yg_sb label = {0};
    if (v->node->kind == yg__prim_param)
        yg__sb_printf(st->sb, "  g%lld_in%d -> %s [label=\"", (long long)gid, v->offset, to);
    else
        yg__sb_printf(st->sb,
                      "  g%lld_n%lld -> %s [label=\"",
                      (long long)gid,
                      (long long)v->node->scratch,
                      to);
    yg__sb_printf(&label, "%%%s", v->name);
    short_type(&label, &v->type);
    put_label(st, &label);
    yg__sb_puts(st->sb, "\", tooltip=\"");
    yg__sb_printf(&label, "%%%s : ", v->name);
    yg__ir_print_type(&label, &v->type);
    put_label(st, &label);
    yg__sb_puts(st->sb, "\"];\n");
}

static void dot_graph(dot_state *st, const yg_graph *g, int64_t gid, int depth) {
    yg_sb *sb = st->sb;
    int64_t id = 0;
    char to[64];
    /* An invisible anchor for the dashed edge from a subgraph's holder. */
    yg__sb_printf(sb, "  g%lld_entry [shape=point, style=invis];\n", (long long)gid);
    for (int32_t i = 0; i < g->param->n_outputs; i++) {
        yg_sb label = {0};
        yg__sb_printf(sb, "  g%lld_in%d [shape=ellipse, label=\"", (long long)gid, i);
        yg__sb_printf(&label,
                      "%s %%%s",
                      g->param->outputs[i]->is_param ? "param" : "input",
                      g->param->outputs[i]->name);
        put_label(st, &label);
        yg__sb_puts(sb, "\"];\n");
    }
    for (yg_ir_node *n = g->first; n != NULL; n = n->next, id++) {
        n->scratch = id;
        dot_node(st, n, gid, id, depth);
    }
    for (const yg_ir_node *n = g->first; n != NULL; n = n->next) {
        snprintf(to, sizeof to, "g%lld_n%lld", (long long)gid, (long long)n->scratch);
        for (int32_t i = 0; i < n->n_inputs; i++)
            dot_edge(st, n->inputs[i], gid, to);
    }
    for (int32_t i = 0; i < g->ret->n_inputs; i++) {
        yg__sb_printf(
            sb, "  g%lld_out%d [shape=ellipse, label=\"output %d\"];\n", (long long)gid, i, i);
        snprintf(to, sizeof to, "g%lld_out%d", (long long)gid, i);
        dot_edge(st, g->ret->inputs[i], gid, to);
    }
}

yg_status yg_graph_to_dot(const yg_graph *g, char **out) {
    yg_sb sb = {0};
    dot_state st = {&sb, 1};
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_to_dot: out is NULL");
    *out = NULL;
    if (g == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_to_dot: graph is NULL");
    yg__sb_puts(&sb,
                "digraph yagrad {\n  compound=true;\n  node [shape=box, fontname=\"monospace\"];\n"
                "  edge [fontname=\"monospace\", fontsize=10];\n");
    dot_graph(&st, g, 0, 0);
    yg__sb_puts(&sb, "}\n");
    return yg__sb_finish(&sb, "graph_to_dot", out);
}
