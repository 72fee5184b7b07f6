/*
 * dump_json.c - a graph as JSON, for tools (tools/ir_viewer.html renders
 * it) and tests (tools/ir_graph.schema.json describes it; tests check
 * every dump against it).
 *
 * Shape: {"inputs": [value], "nodes": [node], "edges": [edge],
 * "outputs": [name]}; a value is {"name", "type"}; a node is {"id",
 * "kind", "inputs": [name], "outputs": [value], "attributes": [attr]}; an
 * edge joins {"node", "index"} ends, node -1 meaning the graph's inputs
 * (as a source) or outputs (as a destination).  Unknown type fields are
 * null.  A graph attribute's value is a nested graph object of the same
 * shape, so subgraphs nest to any depth.  Non-finite floats, which JSON
 * cannot spell, are the strings "nan", "inf" and "-inf".  A tensor
 * attribute lists at most its first 64 values (with "numel" the true
 * count), enough to recognise a constant without making a dump of model
 * weights unreadable.
 */
#include "jit/ir/ir.h"
#include "jit/ir/text.h"

#include <math.h>

#define MAX_TENSOR_VALUES 64

static void json_double(yg_sb *sb, double v) {
    if (isnan(v))
        yg__sb_puts(sb, "\"nan\"");
    else if (isinf(v))
        yg__sb_puts(sb, v < 0 ? "\"-inf\"" : "\"inf\"");
    else
        yg__sb_double(sb, v, false);
}

static void json_type(yg_sb *sb, const yg_ir_type *t) {
    if (t->kind == YG_IR_TYPE_NONE) {
        yg__sb_puts(sb, "{\"kind\": \"None\"}");
        return;
    }
    yg__sb_puts(sb, "{\"kind\": \"Tensor\", \"dtype\": ");
    if (t->dtype == YG_IR_UNKNOWN)
        yg__sb_puts(sb, "null");
    else
        yg__sb_printf(sb, "\"%s\"", yg_dtype_name((yg_dtype)t->dtype));
    yg__sb_puts(sb, ", \"device\": ");
    if (t->device == YG_IR_UNKNOWN)
        yg__sb_puts(sb, "null");
    else
        yg__sb_printf(sb, "\"%s\"", yg__device_name((yg_device)t->device));
    yg__sb_puts(sb, ", \"sizes\": ");
    if (t->ndim == YG_IR_UNKNOWN) {
        yg__sb_puts(sb, "null");
    } else {
        yg__sb_putc(sb, '[');
        for (int32_t i = 0; i < t->ndim; i++) {
            if (i > 0)
                yg__sb_puts(sb, ", ");
            if (t->sizes[i] == YG_IR_UNKNOWN)
                yg__sb_puts(sb, "null");
            else
                yg__sb_printf(sb, "%lld", (long long)t->sizes[i]);
        }
        yg__sb_putc(sb, ']');
    }
    yg__sb_puts(sb, ", \"requires_grad\": ");
    yg__sb_puts(sb,
                t->requires_grad == YG_IR_UNKNOWN ? "null"
                : t->requires_grad                ? "true"
                                                  : "false");
    yg__sb_putc(sb, '}');
}

static void json_value(yg_sb *sb, const yg_ir_value *v) {
    yg__sb_puts(sb, "{\"name\": ");
    yg__sb_json_string(sb, v->name);
    yg__sb_puts(sb, ", \"type\": ");
    json_type(sb, &v->type);
    if (v->is_param)
        yg__sb_puts(sb, ", \"param\": true");
    yg__sb_putc(sb, '}');
}

static void json_tensor(yg_sb *sb, const yg_tensor *t) {
    int64_t numel = yg_tensor_numel(t);
    const char *p = yg__tensor_ptr(t);
    yg__sb_printf(sb, "{\"dtype\": \"%s\", \"sizes\": [", yg_dtype_name(t->dtype));
    for (int32_t i = 0; i < t->ndim; i++)
        yg__sb_printf(sb, "%s%lld", i > 0 ? ", " : "", (long long)t->sizes[i]);
    yg__sb_printf(sb, "], \"numel\": %lld, \"values\": [", (long long)numel);
    for (int64_t i = 0; i < numel && i < MAX_TENSOR_VALUES; i++) {
        if (i > 0)
            yg__sb_puts(sb, ", ");
        switch (t->dtype) {
        case YG_FLOAT32:
            json_double(sb, ((const float *)p)[i]);
            break;
        case YG_FLOAT64:
            json_double(sb, ((const double *)p)[i]);
            break;
        case YG_INT64:
            yg__sb_printf(sb, "%lld", (long long)((const int64_t *)p)[i]);
            break;
        case YG_INT32:
            yg__sb_printf(sb, "%lld", (long long)((const int32_t *)p)[i]);
            break;
        case YG_FLOAT16:
        case YG_BFLOAT16:
            json_double(sb, yg__load_f64(p + 2 * i, t->dtype));
            break;
        default:
            yg__sb_printf(sb, "%d", ((const unsigned char *)p)[i] ? 1 : 0);
            break;
        }
    }
    yg__sb_puts(sb, "]}");
}

static void json_graph(yg_sb *sb, const yg_graph *g, int depth);

static void json_attr(yg_sb *sb, const yg_ir_attr *a, int depth) {
    static const char *const kinds[] = {"int", "float", "str", "ints", "floats", "tensor", "graph"};
    yg__sb_puts(sb, "{\"name\": ");
    yg__sb_json_string(sb, a->name);
    yg__sb_printf(sb, ", \"kind\": \"%s\", \"value\": ", kinds[a->kind]);
    switch (a->kind) {
    case YG_IR_ATTR_INT:
        yg__sb_printf(sb, "%lld", (long long)a->u.i);
        break;
    case YG_IR_ATTR_FLOAT:
        json_double(sb, a->u.f);
        break;
    case YG_IR_ATTR_STR:
        yg__sb_json_string(sb, a->u.s);
        break;
    case YG_IR_ATTR_INTS:
        yg__sb_putc(sb, '[');
        for (int64_t i = 0; i < a->u.ints.len; i++)
            yg__sb_printf(sb, "%s%lld", i > 0 ? ", " : "", (long long)a->u.ints.items[i]);
        yg__sb_putc(sb, ']');
        break;
    case YG_IR_ATTR_FLOATS:
        yg__sb_putc(sb, '[');
        for (int64_t i = 0; i < a->u.floats.len; i++) {
            if (i > 0)
                yg__sb_puts(sb, ", ");
            json_double(sb, a->u.floats.items[i]);
        }
        yg__sb_putc(sb, ']');
        break;
    case YG_IR_ATTR_TENSOR:
        json_tensor(sb, a->u.t);
        break;
    case YG_IR_ATTR_GRAPH:
        json_graph(sb, a->u.g, depth + 1);
        break;
    }
    yg__sb_putc(sb, '}');
}

/* Writes one edge end: the producer of v as a source, or a consumer. */
static void
json_edge(yg_sb *sb, bool *first, const yg_ir_value *v, int64_t to_node, int32_t to_index) {
    int64_t from = v->node->kind == yg__prim_param ? -1 : v->node->scratch;
    yg__sb_puts(sb, *first ? "\n    " : ",\n    ");
    *first = false;
    yg__sb_puts(sb, "{\"value\": ");
    yg__sb_json_string(sb, v->name);
    yg__sb_printf(sb,
                  ", \"from\": {\"node\": %lld, \"index\": %d}, \"to\": {\"node\": %lld, "
                  "\"index\": %d}}",
                  (long long)from,
                  v->offset,
                  (long long)to_node,
                  to_index);
}

static void json_graph(yg_sb *sb, const yg_graph *g, int depth) {
    bool first = true;
    int64_t id = 0;
    if (depth > 256) {
        yg__sb_puts(sb, "null");
        return;
    }
    yg__sb_puts(sb, "{\"inputs\": [");
    for (int32_t i = 0; i < g->param->n_outputs; i++) {
        if (i > 0)
            yg__sb_puts(sb, ", ");
        json_value(sb, g->param->outputs[i]);
    }
    yg__sb_puts(sb, "],\n  \"nodes\": [");
    /* Node ids are positions; they are stored in scratch for the edges. */
    for (yg_ir_node *n = g->first; n != NULL; n = n->next, id++) {
        n->scratch = id;
        yg__sb_printf(sb, "%s\n    {\"id\": %lld, \"kind\": ", id > 0 ? "," : "", (long long)id);
        yg__sb_json_string(sb, n->kind);
        yg__sb_puts(sb, ", \"inputs\": [");
        for (int32_t i = 0; i < n->n_inputs; i++) {
            if (i > 0)
                yg__sb_puts(sb, ", ");
            yg__sb_json_string(sb, n->inputs[i]->name);
        }
        yg__sb_puts(sb, "], \"outputs\": [");
        for (int32_t i = 0; i < n->n_outputs; i++) {
            if (i > 0)
                yg__sb_puts(sb, ", ");
            json_value(sb, n->outputs[i]);
        }
        yg__sb_puts(sb, "], \"attributes\": [");
        for (int32_t i = 0; i < n->n_attrs; i++) {
            if (i > 0)
                yg__sb_puts(sb, ", ");
            json_attr(sb, &n->attrs[i], depth);
        }
        yg__sb_puts(sb, "]}");
    }
    yg__sb_puts(sb, "],\n  \"edges\": [");
    for (const yg_ir_node *n = g->first; n != NULL; n = n->next) {
        for (int32_t i = 0; i < n->n_inputs; i++)
            json_edge(sb, &first, n->inputs[i], n->scratch, i);
    }
    for (int32_t i = 0; i < g->ret->n_inputs; i++)
        json_edge(sb, &first, g->ret->inputs[i], -1, i);
    yg__sb_puts(sb, "],\n  \"outputs\": [");
    for (int32_t i = 0; i < g->ret->n_inputs; i++) {
        if (i > 0)
            yg__sb_puts(sb, ", ");
        yg__sb_json_string(sb, g->ret->inputs[i]->name);
    }
    yg__sb_puts(sb, "]}");
}

yg_status yg_graph_to_json(const yg_graph *g, char **out) {
    yg_sb sb = {0};
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_to_json: out is NULL");
    *out = NULL;
    if (g == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_to_json: graph is NULL");
    json_graph(&sb, g, 0);
    yg__sb_putc(&sb, '\n');
    return yg__sb_finish(&sb, "graph_to_json", out);
}
