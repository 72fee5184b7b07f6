/*
 * export.c - yg_onnx_export and yg_onnx_export_to_buffer (yagrad/onnx.h):
 * copy the graph, run the export passes, name its inputs and outputs,
 * turn each node into ONNX nodes through yg__onnx_symbolics[], pack the
 * ModelProto with protobuf-c and write it.
 *
 * Invariants: the caller's graph is only read; everything the model holds
 * lives in the export's arena (onnx_int.h) or in tensors the context
 * holds, so every failure path is "free the context"; the file appears
 * only complete: the bytes go to a temporary file created next to path
 * (mkstemp), which is renamed over path after a successful write and
 * close, and unlinked otherwise.
 *
 * Model: IR version 8 (the newest Debian's onnx 1.12 checker knows, and
 * what opset 17 belongs to), one opset import of the default domain,
 * graph "yagrad".  Values keep their graph names; names the exporter
 * makes contain ':' (never in a graph's value names) so they cannot
 * collide.
 */
#include "core/core.h"
#include "onnx/onnx_int.h"
#include "onnx/passes.h"
#include "yagrad/ops_views.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "raw_data is written in host order: the exporter needs a little-endian host"
#endif

#define IR_VERSION 8

static yg_status oom(void) {
    return yg__fail(YG_ERR_OUT_OF_MEMORY, "onnx_export: out of memory");
}

static bool valid_dim_name(const char *s) {
    if (s == NULL || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return false;
    for (; *s != '\0'; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

static int64_t count_params(const yg_graph *g) {
    int64_t n = 0;
    for (int64_t i = 0; i < yg_graph_num_inputs(g); i++)
        n += yg_ir_value_is_param(yg_graph_input(g, i));
    return n;
}

/* The graph inputs that are model inputs (not initializers), in order. */
static bool is_model_input(const yg_ir_value *v, const yg_onnx_options *o) {
    return !v->is_param || o->params_as_inputs;
}

static yg_status check_options(const yg_graph *g, int64_t n_params, const yg_onnx_options *o) {
    int64_t n_model_inputs = 0;

    if (o->opset < YG_ONNX_OPSET_MIN || o->opset > YG_ONNX_OPSET_MAX)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "onnx_export: opset %d is not supported (accepted: %d to %d)",
                        (int)o->opset,
                        YG_ONNX_OPSET_MIN,
                        YG_ONNX_OPSET_MAX);
    if (!o->params_as_inputs && n_params != count_params(g))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "onnx_export: the graph has %lld parameter inputs, got %lld params",
                        (long long)count_params(g),
                        (long long)n_params);
    for (int64_t i = 0; i < yg_graph_num_inputs(g); i++)
        n_model_inputs += is_model_input(yg_graph_input(g, i), o);
    if (o->n_input_names < 0 || o->n_input_names > n_model_inputs ||
        (o->n_input_names > 0 && o->input_names == NULL))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "onnx_export: %lld input names for %lld model inputs",
                        (long long)o->n_input_names,
                        (long long)n_model_inputs);
    if (o->n_output_names < 0 || o->n_output_names > yg_graph_num_outputs(g) ||
        (o->n_output_names > 0 && o->output_names == NULL))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "onnx_export: %lld output names for %lld outputs",
                        (long long)o->n_output_names,
                        (long long)yg_graph_num_outputs(g));
    if (o->n_dynamic_axes < 0 || (o->n_dynamic_axes > 0 && o->dynamic_axes == NULL))
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "onnx_export: dynamic_axes is NULL");
    for (int64_t k = 0; k < o->n_dynamic_axes; k++) {
        const yg_onnx_dynamic_axis *d = &o->dynamic_axes[k];
        const char *what = d->is_output ? "output" : "input";
        int64_t count = d->is_output ? yg_graph_num_outputs(g) : n_model_inputs;
        if (d->index < 0 || d->index >= count)
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "onnx_export: dynamic axis %lld: %s %lld out of range (%lld %ss)",
                            (long long)k,
                            what,
                            (long long)d->index,
                            (long long)count,
                            what);
        if (!valid_dim_name(d->name))
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "onnx_export: dynamic axis %lld: malformed name '%s'",
                            (long long)k,
                            d->name != NULL ? d->name : "(null)");
    }
    return YG_OK;
}

/* ---- types ---- */

static const char *
dynamic_name(const yg_onnx_options *o, bool is_output, int64_t index, int64_t axis) {
    for (int64_t k = 0; k < o->n_dynamic_axes; k++) {
        const yg_onnx_dynamic_axis *d = &o->dynamic_axes[k];
        if (d->is_output == is_output && d->index == index && d->axis == axis)
            return d->name;
    }
    return NULL;
}

static yg_status value_info(yg_onnx_ctx *cx,
                            const char *name,
                            const yg_ir_type *t,
                            const yg_onnx_options *o,
                            bool is_output,
                            int64_t index,
                            Onnx__ValueInfoProto **out) {
    Onnx__ValueInfoProto *vi = yg__onnx_alloc(cx, sizeof *vi);
    Onnx__TypeProto *tp = yg__onnx_alloc(cx, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = yg__onnx_alloc(cx, sizeof *tt);
    if (vi == NULL || tp == NULL || tt == NULL)
        return oom();
    if (t->kind != YG_IR_TYPE_TENSOR || t->dtype == YG_IR_UNKNOWN || yg__onnx_dtype(t->dtype) == 0)
        return yg__fail(YG_ERR_DTYPE,
                        "onnx_export: %s %lld %%%s: %s",
                        is_output ? "output" : "input",
                        (long long)index,
                        name,
                        t->kind != YG_IR_TYPE_TENSOR ? "is None (ONNX values are tensors)"
                                                     : "has no known ONNX dtype");
    for (int64_t k = 0; k < o->n_dynamic_axes; k++) {
        const yg_onnx_dynamic_axis *d = &o->dynamic_axes[k];
        if (d->is_output == is_output && d->index == index &&
            (t->ndim < 0 || d->axis < 0 || d->axis >= t->ndim))
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "onnx_export: dynamic axis %lld of %s %lld %%%s out of range (rank %d)",
                            (long long)d->axis,
                            is_output ? "output" : "input",
                            (long long)index,
                            name,
                            (int)t->ndim);
    }
    onnx__value_info_proto__init(vi);
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    vi->name = yg__onnx_strdup(cx, name);
    vi->type = tp;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    tt->has_elem_type = true;
    tt->elem_type = yg__onnx_dtype(t->dtype);
    if (vi->name == NULL)
        return oom();
    if (t->ndim >= 0) {
        Onnx__TensorShapeProto *sh = yg__onnx_alloc(cx, sizeof *sh);
        Onnx__TensorShapeProto__Dimension **dims =
            yg__onnx_alloc(cx, (size_t)(t->ndim > 0 ? t->ndim : 1) * sizeof *dims);
        if (sh == NULL || dims == NULL)
            return oom();
        onnx__tensor_shape_proto__init(sh);
        sh->n_dim = (size_t)t->ndim;
        sh->dim = dims;
        for (int32_t d = 0; d < t->ndim; d++) {
            dims[d] = yg__onnx_alloc(cx, sizeof *dims[d]);
            if (dims[d] == NULL)
                return oom();
            onnx__tensor_shape_proto__dimension__init(dims[d]);
            const char *sym = dynamic_name(o, is_output, index, d);
            if (sym != NULL) {
                dims[d]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
                dims[d]->dim_param = yg__onnx_strdup(cx, sym);
                if (dims[d]->dim_param == NULL)
                    return oom();
            } else if (t->sizes[d] >= 0) {
                dims[d]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
                dims[d]->dim_value = t->sizes[d];
            }
        }
        tt->shape = sh;
    }
    *out = vi;
    return YG_OK;
}

/* ---- inputs, parameters and constants ---- */

static yg_status param_initializer(yg_onnx_ctx *cx, const yg_ir_value *v, yg_tensor *p) {
    const yg_ir_type *t = &v->type;
    char buf[128];

    if (p == NULL || yg_tensor_device(p) != YG_CPU)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "onnx_export: param %%%s: %s",
                        v->name,
                        p == NULL ? "tensor is NULL" : "tensor is not on the CPU");
    if (t->dtype != YG_IR_UNKNOWN && t->dtype != (int32_t)yg_tensor_dtype(p))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "onnx_export: param %%%s: dtype %d does not match the input's %d",
                        v->name,
                        (int)yg_tensor_dtype(p),
                        (int)t->dtype);
    bool sizes_ok = t->ndim < 0 || t->ndim == yg_tensor_ndim(p);
    for (int32_t d = 0; sizes_ok && t->ndim >= 0 && d < t->ndim; d++)
        sizes_ok = t->sizes[d] < 0 || t->sizes[d] == yg_tensor_sizes(p)[d];
    if (!sizes_ok)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "onnx_export: param %%%s: sizes %s do not match the input's type",
                        v->name,
                        yg_tensor_format_sizes(p, buf, sizeof buf));
    yg_tensor *c = NULL;
    if (yg_tensor_is_contiguous(p)) {
        yg_retain(p);
        c = p;
    } else {
        YG_RETURN_IF_ERROR(yg_contiguous(p, &c));
    }
    YG_RETURN_IF_ERROR(yg__onnx_hold(cx, c));
    return yg__onnx_add_initializer(cx,
                                    v->name,
                                    yg_tensor_dtype(c),
                                    yg_tensor_sizes(c),
                                    yg_tensor_ndim(c),
                                    yg_tensor_data(c),
                                    (size_t)yg_tensor_numel(c) *
                                        yg__onnx_dtype_size(yg_tensor_dtype(c)));
}

static yg_status constant_initializer(yg_onnx_ctx *cx, const yg_ir_node *n) {
    const yg_ir_attr *a = yg__ir_node_attr(n, "value");
    if (a == NULL || a->kind != YG_IR_ATTR_TENSOR)
        return yg__fail(YG_ERR_INTERNAL, "onnx_export: prim::Constant without a tensor value");
    yg_tensor *t = a->u.t; /* contiguous CPU copy owned by the graph copy */
    return yg__onnx_add_initializer(cx,
                                    n->outputs[0]->name,
                                    yg_tensor_dtype(t),
                                    yg_tensor_sizes(t),
                                    yg_tensor_ndim(t),
                                    yg_tensor_data(t),
                                    (size_t)yg_tensor_numel(t) *
                                        yg__onnx_dtype_size(yg_tensor_dtype(t)));
}

/* ---- nodes ---- */

static yg_status export_node(yg_onnx_ctx *cx, const yg_ir_node *n) {
    if (n->kind == yg__prim_constant)
        return constant_initializer(cx, n);
    if (n->kind == yg__prim_none)
        return YG_OK;
    if (n->op == NULL)
        return yg__onnx_unsupported(cx,
                                    n,
                                    "prim kinds other than Constant and None do not "
                                    "export (export the graph before fusion)");
    ptrdiff_t idx = n->op - yg__ops;
    if (idx < 0 || idx >= yg__onnx_symbolics_count ||
        strcmp(yg__onnx_symbolics[idx].name, n->op->name) != 0)
        return yg__fail(YG_ERR_INTERNAL, "onnx_export: the symbolic table does not match the ops");
    const yg_onnx_symbolic *s = &yg__onnx_symbolics[idx];
    if (s->fn == NULL)
        return yg__onnx_unsupported(cx,
                                    n,
                                    "not exportable: %s",
                                    s->unsupported != NULL
                                        ? s->unsupported
                                        : "no onnx: mapping in specs/native_functions.yaml");
    if (s->min_opset > cx->opset)
        return yg__onnx_require_opset(cx, n, s->onnx_op, s->min_opset);
    return s->fn(cx, n);
}

/* ---- names ---- */

static yg_status rename_value(yg_ir_value *v, const char *name, const char *what, int64_t i) {
    if (strcmp(v->name, name) == 0)
        return YG_OK;
    if (!yg__ir_valid_value_name(name, strlen(name)))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "onnx_export: %s name %lld '%s' is malformed (expected [A-Za-z0-9_.]+)",
                        what,
                        (long long)i,
                        name);
    if (yg__ir_graph_find(v->node->owner, name, strlen(name)) != NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "onnx_export: %s name %lld '%s' is already used in the graph",
                        what,
                        (long long)i,
                        name);
    return yg__ir_value_rename(v, name, strlen(name));
}

static yg_status name_inputs(yg_graph *g, const yg_onnx_options *o) {
    int64_t k = 0;
    for (int64_t i = 0; i < yg_graph_num_inputs(g) && k < o->n_input_names; i++) {
        yg_ir_value *v = yg_graph_input(g, i);
        if (!is_model_input(v, o))
            continue;
        if (o->input_names[k] != NULL)
            YG_RETURN_IF_ERROR(rename_value(v, o->input_names[k], "input", k));
        k++;
    }
    return YG_OK;
}

/* Whether output i is a node's output met first here: it is exported
 * under its value's name; other outputs (a graph input, an initializer,
 * a repeat) get an Identity to a name of their own. */
static bool plain_output(const yg_graph *g, int64_t i) {
    yg_ir_value *v = yg_graph_output(g, i);
    bool plain = v->node->kind != yg__prim_param && v->node->kind != yg__prim_constant;
    for (int64_t j = 0; j < i && plain; j++)
        plain = yg_graph_output(g, j) != v;
    return plain;
}

/* Renames the plain outputs the user names (before any node refers to them). */
static yg_status name_outputs(yg_graph *g, const yg_onnx_options *o) {
    for (int64_t i = 0; i < o->n_output_names; i++)
        if (o->output_names[i] != NULL && plain_output(g, i))
            YG_RETURN_IF_ERROR(
                rename_value(yg_graph_output(g, i), o->output_names[i], "output", i));
    return YG_OK;
}

/* The output's ONNX name, adding the Identity a non-plain output needs.
 * Its name is the user's, else the output's name before the passes (a
 * peephole may have made the output a graph input), else "output<i>". */
static yg_status output_name(yg_onnx_ctx *cx,
                             const yg_graph *g,
                             const yg_onnx_options *o,
                             const char *const *orig,
                             int64_t i,
                             const char **out) {
    yg_ir_value *v = yg_graph_output(g, i);
    const char *want = i < o->n_output_names ? o->output_names[i] : NULL;
    if (want == NULL && orig != NULL && strcmp(orig[i], v->name) != 0 &&
        yg__ir_graph_find(g, orig[i], strlen(orig[i])) == NULL)
        want = orig[i];
    if (plain_output(g, i)) {
        *out = v->name;
        return YG_OK;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "output%lld", (long long)i);
    const char *name = want != NULL ? want : buf;
    if (want != NULL && !yg__ir_valid_value_name(want, strlen(want)))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "onnx_export: output name %lld '%s' is malformed (expected [A-Za-z0-9_.]+)",
                        (long long)i,
                        want);
    if (yg__ir_graph_find(g, name, strlen(name)) != NULL)
        name = yg__onnx_fresh_name(cx, name, "out");
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, NULL, "Identity", v->name, name, out));
    return YG_OK;
}

/* ---- the model ---- */

static yg_status build(yg_onnx_ctx *cx,
                       yg_graph *g,
                       yg_tensor *const *params,
                       const yg_onnx_options *o,
                       const char *const *orig,
                       Onnx__ModelProto *m) {
    Onnx__GraphProto *gp = yg__onnx_alloc(cx, sizeof *gp);
    Onnx__OperatorSetIdProto *opset = yg__onnx_alloc(cx, sizeof *opset);
    Onnx__OperatorSetIdProto **opsets = yg__onnx_alloc(cx, sizeof *opsets);
    yg_onnx_ptrs inputs = {0}, outputs = {0};
    int64_t k_param = 0, k_input = 0;

    if (gp == NULL || opset == NULL || opsets == NULL)
        return oom();
    onnx__graph_proto__init(gp);
    onnx__operator_set_id_proto__init(opset);
    opset->domain = "";
    opset->has_version = true;
    opset->version = o->opset;
    opsets[0] = opset;
    m->has_ir_version = true;
    m->ir_version = IR_VERSION;
    m->n_opset_import = 1;
    m->opset_import = opsets;
    m->producer_name = (char *)(o->producer_name != NULL ? o->producer_name : "yagrad");
    m->producer_version = (char *)(o->producer_version != NULL ? o->producer_version : "0.1.0");
    m->doc_string = (char *)o->doc_string;
    m->graph = gp;
    gp->name = "yagrad";

    for (int64_t i = 0; i < yg_graph_num_inputs(g); i++) {
        yg_ir_value *v = yg_graph_input(g, i);
        if (!is_model_input(v, o)) {
            if (v->n_uses == 0) { /* folded into the constants that replace its uses */
                k_param++;
                continue;
            }
            YG_RETURN_IF_ERROR(yg__onnx_dims_input(cx, v, NULL)); /* numbers */
            YG_RETURN_IF_ERROR(param_initializer(cx, v, params[k_param++]));
            continue;
        }
        k_param += v->is_param;
        Onnx__ValueInfoProto *vi = NULL;
        const char *axis_names[YG_MAX_DIMS] = {NULL};
        for (int32_t d = 0; d < v->type.ndim; d++)
            axis_names[d] = dynamic_name(o, false, k_input, d);
        YG_RETURN_IF_ERROR(value_info(cx, v->name, &v->type, o, false, k_input, &vi));
        YG_RETURN_IF_ERROR(yg__onnx_dims_input(cx, v, axis_names));
        k_input++;
        if (!yg__onnx_push(cx, &inputs, vi))
            return oom();
    }
    YG_RETURN_IF_ERROR(yg__onnx_dims_nodes(cx, g));
    for (yg_ir_node *n = g->first; n != NULL; n = n->next)
        YG_RETURN_IF_ERROR(export_node(cx, n));
    for (int64_t i = 0; i < yg_graph_num_outputs(g); i++) {
        const char *name = NULL;
        Onnx__ValueInfoProto *vi = NULL;
        YG_RETURN_IF_ERROR(output_name(cx, g, o, orig, i, &name));
        YG_RETURN_IF_ERROR(value_info(cx, name, &yg_graph_output(g, i)->type, o, true, i, &vi));
        if (!yg__onnx_push(cx, &outputs, vi))
            return oom();
    }
    gp->n_input = inputs.len;
    gp->input = (Onnx__ValueInfoProto **)inputs.items;
    gp->n_output = outputs.len;
    gp->output = (Onnx__ValueInfoProto **)outputs.items;
    gp->n_initializer = cx->initializers.len;
    gp->initializer = (Onnx__TensorProto **)cx->initializers.items;
    gp->n_node = cx->nodes.len;
    gp->node = yg__onnx_alloc(cx, (cx->nodes.len > 0 ? cx->nodes.len : 1) * sizeof *gp->node);
    if (gp->node == NULL)
        return oom();
    for (size_t i = 0; i < cx->nodes.len; i++)
        gp->node[i] = &((yg_onnx_node *)cx->nodes.items[i])->proto;
    return YG_OK;
}

static yg_status export_bytes(const yg_graph *g,
                              yg_tensor *const *params,
                              int64_t n_params,
                              const yg_onnx_options *options,
                              uint8_t **out,
                              size_t *out_len) {
    yg_onnx_options o = options != NULL ? *options : (yg_onnx_options){0};
    yg_onnx_ctx cx = {0};
    yg_graph *copy = NULL;
    Onnx__ModelProto m;
    yg_status st;

    *out = NULL;
    *out_len = 0;
    if (o.opset == 0)
        o.opset = YG_ONNX_OPSET_DEFAULT;
    if (g == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "onnx_export: graph is NULL");
    if (n_params < 0 || (n_params > 0 && params == NULL))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "onnx_export: params is NULL with n_params %lld",
                        (long long)n_params);
    if (yg__onnx_symbolics_count != yg__ops_count)
        return yg__fail(YG_ERR_INTERNAL,
                        "onnx_export: symbolic table has %d entries for %d ops",
                        (int)yg__onnx_symbolics_count,
                        (int)yg__ops_count);
    YG_RETURN_IF_ERROR(check_options(g, n_params, &o));
    cx.opset = o.opset;
    onnx__model_proto__init(&m);
    st = yg_graph_clone(g, &copy);
    if (st != YG_OK)
        goto out;
    /* The outputs' names before the passes, which may replace them. */
    const char **orig =
        yg__onnx_alloc(&cx, (size_t)(yg_graph_num_outputs(copy) + 1) * sizeof *orig);
    if (orig == NULL) {
        st = oom();
        goto out;
    }
    for (int64_t i = 0; i < yg_graph_num_outputs(copy) && st == YG_OK; i++) {
        orig[i] = yg__onnx_strdup(&cx, yg_graph_output(copy, i)->name);
        if (orig[i] == NULL)
            st = oom();
    }
    if (st == YG_OK)
        st = yg__onnx_run_passes(copy, o.params_as_inputs ? NULL : params, o.params_as_inputs ? 0 : n_params);
    if (st == YG_OK)
        st = name_inputs(copy, &o);
    if (st == YG_OK)
        st = name_outputs(copy, &o);
    if (st == YG_OK)
        st = build(&cx, copy, params, &o, orig, &m);
    if (st != YG_OK)
        goto out;
    size_t len = protobuf_c_message_get_packed_size(&m.base);
    uint8_t *buf = malloc(len > 0 ? len : 1);
    if (buf == NULL) {
        st = oom();
        goto out;
    }
    protobuf_c_message_pack(&m.base, buf);
    *out = buf;
    *out_len = len;
    if (o.summary != NULL)
        *o.summary = (yg_onnx_summary){.opset = o.opset,
                                       .n_nodes = (int64_t)m.graph->n_node,
                                       .n_initializers = (int64_t)m.graph->n_initializer,
                                       .n_inputs = (int64_t)m.graph->n_input,
                                       .n_outputs = (int64_t)m.graph->n_output,
                                       .n_bytes = len};
out:
    yg__onnx_ctx_free(&cx);
    yg_graph_release(copy);
    return st;
}

static yg_status export_to_buffer(const yg_graph *g,
                                  yg_tensor *const *params,
                                  int64_t n_params,
                                  const yg_onnx_options *options,
                                  uint8_t **out,
                                  size_t *out_len) {
    if (out == NULL || out_len == NULL) {
        if (out != NULL)
            *out = NULL;
        if (out_len != NULL)
            *out_len = 0;
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "onnx_export: out or out_len is NULL");
    }
    return export_bytes(g, params, n_params, options, out, out_len);
}

/* Writes len bytes to a temporary file beside path and renames it over
 * path; on failure removes the temporary and leaves path as it was. */
static yg_status write_atomically(const char *path, const uint8_t *buf, size_t len) {
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (tmp == NULL)
        return oom();
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp.XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        yg_status st = yg__fail(YG_ERR_IO, "onnx_export: cannot create '%s': %s", tmp, strerror(e));
        free(tmp);
        return st;
    }
    FILE *f = fdopen(fd, "wb");
    bool ok = f != NULL && fwrite(buf, 1, len, f) == len;
    int e = errno;
    if (f != NULL) {
        if (fclose(f) != 0 && ok) {
            ok = false;
            e = errno;
        }
    } else {
        close(fd);
    }
    if (ok && rename(tmp, path) != 0) {
        ok = false;
        e = errno;
    }
    yg_status st = YG_OK;
    if (!ok) {
        remove(tmp);
        st = yg__fail(YG_ERR_IO, "onnx_export: cannot write '%s': %s", path, strerror(e));
    }
    free(tmp);
    return st;
}

static yg_status export_file(const yg_graph *g,
                              yg_tensor *const *params,
                              int64_t n_params,
                              const yg_onnx_options *options,
                              const char *path) {
    uint8_t *buf = NULL;
    size_t len = 0;

    /* The summary reaches the caller only once the file is written. */
    yg_onnx_options o = options != NULL ? *options : (yg_onnx_options){0};
    yg_onnx_summary summary = {0};
    o.summary = &summary;
    if (path == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "onnx_export: path is NULL");
    YG_RETURN_IF_ERROR(export_bytes(g, params, n_params, &o, &buf, &len));
    yg_status st = write_atomically(path, buf, len);
    free(buf);
    if (st == YG_OK && options != NULL && options->summary != NULL)
        *options->summary = summary;
    return st;
}

static bool op_exportable(const char *name, const char **onnx_op, const char **reason) {
    if (onnx_op != NULL)
        *onnx_op = NULL;
    if (reason != NULL)
        *reason = "unknown op";
    if (name == NULL)
        return false;
    for (int32_t i = 0; i < yg__onnx_symbolics_count; i++) {
        const yg_onnx_symbolic *s = &yg__onnx_symbolics[i];
        if (strcmp(s->name, name) != 0)
            continue;
        if (reason != NULL)
            *reason = s->fn != NULL ? NULL : s->unsupported;
        if (onnx_op != NULL)
            *onnx_op = s->onnx_op;
        return s->fn != NULL;
    }
    return false;
}

const yg__onnx_exporter yg__onnx = {
    .export_file = export_file,
    .export_to_buffer = export_to_buffer,
    .op_exportable = op_exportable,
};
