/*
 * builder.c - the building blocks symbolics are written with
 * (onnx/symbolic.h): ONNX nodes, their inputs, outputs and attributes,
 * and small initializers (int64 lists for `axes`/`shape`-style inputs,
 * 0-d scalars), all allocated from the export's arena (onnx_int.h), so a
 * symbolic that fails half-way leaves nothing to release.
 */
#include "core/core.h"
#include "onnx/onnx_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *yg__onnx_alloc(yg_onnx_ctx *cx, size_t n) {
    yg_onnx_block *b = calloc(1, sizeof *b + n);
    if (b == NULL)
        return NULL;
    b->next = cx->blocks;
    cx->blocks = b;
    return b->data;
}

char *yg__onnx_strdup(yg_onnx_ctx *cx, const char *s) {
    size_t n = strlen(s) + 1;
    char *d = yg__onnx_alloc(cx, n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

bool yg__onnx_push(yg_onnx_ctx *cx, yg_onnx_ptrs *a, void *p) {
    if (a->len == a->cap) {
        size_t cap = a->cap == 0 ? 8 : a->cap * 2;
        void **items = yg__onnx_alloc(cx, cap * sizeof *items);
        if (items == NULL)
            return false;
        if (a->len > 0)
            memcpy(items, a->items, a->len * sizeof *items);
        a->items = items; /* the old array stays in the arena until the end */
        a->cap = cap;
    }
    a->items[a->len++] = p;
    return true;
}

yg_status yg__onnx_hold(yg_onnx_ctx *cx, yg_tensor *t) {
    if (cx->n_held == cx->cap_held) {
        int64_t cap = cx->cap_held == 0 ? 16 : cx->cap_held * 2;
        yg_tensor **held = realloc(cx->held, (size_t)cap * sizeof *held);
        if (held == NULL) {
            yg_release(t);
            return yg__fail(YG_ERR_OUT_OF_MEMORY, "onnx_export: out of memory");
        }
        cx->held = held;
        cx->cap_held = cap;
    }
    cx->held[cx->n_held++] = t;
    return YG_OK;
}

void yg__onnx_ctx_free(yg_onnx_ctx *cx) {
    if (cx == NULL)
        return;
    while (cx->blocks != NULL) {
        yg_onnx_block *next = cx->blocks->next;
        free(cx->blocks);
        cx->blocks = next;
    }
    for (int64_t i = 0; i < cx->n_held; i++)
        yg_release(cx->held[i]);
    free(cx->held);
    cx->held = NULL;
    cx->n_held = cx->cap_held = 0;
}

static yg_status oom(void) {
    return yg__fail(YG_ERR_OUT_OF_MEMORY, "onnx_export: out of memory");
}

int32_t yg__onnx_opset(const yg_onnx_ctx *cx) {
    return cx->opset;
}

int32_t yg__onnx_dtype(int32_t dtype) {
    switch (dtype) {
    case YG_FLOAT32:
        return ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    case YG_FLOAT64:
        return ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE;
    case YG_INT64:
        return ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    case YG_BOOL:
        return ONNX__TENSOR_PROTO__DATA_TYPE__BOOL;
    case YG_INT32:
        return ONNX__TENSOR_PROTO__DATA_TYPE__INT32;
    case YG_FLOAT16:
        return ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16;
    case YG_BFLOAT16:
        return ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16;
    default:
        return 0;
    }
}

size_t yg__onnx_dtype_size(int32_t dtype) {
    switch (dtype) {
    case YG_FLOAT64:
    case YG_INT64:
        return 8;
    case YG_FLOAT32:
    case YG_INT32:
        return 4;
    case YG_FLOAT16:
    case YG_BFLOAT16:
        return 2;
    default:
        return 1;
    }
}

const char *yg__onnx_fresh_name(yg_onnx_ctx *cx, const char *base, const char *hint) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s:%s%lld", base, hint, (long long)cx->next_fresh++);
    return yg__onnx_strdup(cx, buf);
}

yg_status yg__onnx_unsupported(yg_onnx_ctx *cx, const yg_ir_node *node, const char *fmt, ...) {
    char text[256], reason[512];
    va_list ap;

    (void)cx;
    yg__ir_node_describe(node, text, sizeof text);
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return yg__fail(YG_ERR_NOT_IMPLEMENTED, "onnx_export: %s: %s: %s", text, node->kind, reason);
}

yg_status yg__onnx_require(yg_onnx_ctx *cx,
                           const yg_ir_node *node,
                           const char *arg,
                           bool ok,
                           const char *expected) {
    if (ok)
        return YG_OK;
    const yg_ir_attr *a = yg__ir_node_attr(node, arg);
    char got[64] = "?";
    if (a != NULL && a->kind == YG_IR_ATTR_INT)
        snprintf(got, sizeof got, "%lld", (long long)a->u.i);
    else if (a != NULL && a->kind == YG_IR_ATTR_FLOAT)
        snprintf(got, sizeof got, "%.17g", a->u.f);
    return yg__onnx_unsupported(
        cx, node, "argument '%s' must be %s to export (got %s)", arg, expected, got);
}

yg_status
yg__onnx_same_dtype(yg_onnx_ctx *cx, const yg_ir_node *node, int64_t i, const char *op_type) {
    yg_ir_type in = yg__onnx_input_type(node, i), out = node->outputs[0]->type;
    if (in.kind != YG_IR_TYPE_TENSOR || out.kind != YG_IR_TYPE_TENSOR ||
        in.dtype == YG_IR_UNKNOWN || out.dtype == YG_IR_UNKNOWN || in.dtype == out.dtype)
        return YG_OK;
    return yg__onnx_unsupported(cx,
                                node,
                                "the result is %s but ONNX %s computes in the type of input "
                                "%lld (%s)",
                                yg_dtype_name((yg_dtype)out.dtype),
                                op_type,
                                (long long)i,
                                yg_dtype_name((yg_dtype)in.dtype));
}

yg_status
yg__onnx_require_opset(yg_onnx_ctx *cx, const yg_ir_node *node, const char *op_type, int32_t min) {
    if (cx->opset >= min)
        return YG_OK;
    return yg__onnx_unsupported(
        cx, node, "needs opset %d (%s), exporting opset %d", (int)min, op_type, (int)cx->opset);
}

yg_status yg__onnx_node_new(yg_onnx_ctx *cx,
                            const yg_ir_node *node,
                            const char *op_type,
                            yg_onnx_node **out) {
    yg_onnx_node *o = yg__onnx_alloc(cx, sizeof *o);
    *out = NULL;
    if (o == NULL)
        return oom();
    onnx__node_proto__init(&o->proto);
    o->proto.op_type = yg__onnx_strdup(cx, op_type);
    const char *base = node != NULL && node->n_outputs > 0 ? node->outputs[0]->name : "node";
    o->proto.name = (char *)yg__onnx_fresh_name(cx, base, op_type);
    if (o->proto.op_type == NULL || o->proto.name == NULL || !yg__onnx_push(cx, &cx->nodes, o))
        return oom();
    *out = o;
    return YG_OK;
}

yg_status yg__onnx_input_name(yg_onnx_ctx *cx, yg_onnx_node *o, const char *name) {
    char *d = yg__onnx_strdup(cx, name);
    if (d == NULL || !yg__onnx_push(cx, &o->inputs, d))
        return oom();
    o->proto.input = (char **)o->inputs.items;
    o->proto.n_input = o->inputs.len;
    return YG_OK;
}

const char *yg__onnx_input_name_of(yg_onnx_ctx *cx, const yg_ir_node *node, int64_t i) {
    (void)cx;
    if (i < 0 || i >= node->n_inputs)
        return "";
    const yg_ir_value *v = node->inputs[i];
    if (v->type.kind == YG_IR_TYPE_NONE)
        return "";
    return v->name;
}

const char *yg__onnx_output_name_of(const yg_ir_node *node, int64_t i) {
    return node->outputs[i]->name;
}

yg_status yg__onnx_input(yg_onnx_ctx *cx, yg_onnx_node *o, const yg_ir_node *node, int64_t i) {
    if (i < 0 || i >= node->n_inputs)
        return yg__onnx_unsupported(cx, node, "input %lld out of range", (long long)i);
    return yg__onnx_input_name(cx, o, yg__onnx_input_name_of(cx, node, i));
}

yg_status yg__onnx_inputs(yg_onnx_ctx *cx,
                          yg_onnx_node *o,
                          const yg_ir_node *node,
                          int64_t first,
                          int64_t n_after) {
    for (int64_t i = first; i < node->n_inputs - n_after; i++)
        YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, i));
    return YG_OK;
}

yg_status yg__onnx_add_initializer(yg_onnx_ctx *cx,
                                   const char *name,
                                   int32_t dtype,
                                   const int64_t *sizes,
                                   int64_t ndim,
                                   const void *data,
                                   size_t nbytes) {
    Onnx__TensorProto *t = yg__onnx_alloc(cx, sizeof *t);
    if (t == NULL)
        return oom();
    onnx__tensor_proto__init(t);
    t->name = yg__onnx_strdup(cx, name);
    t->has_data_type = true;
    t->data_type = yg__onnx_dtype(dtype);
    if (t->data_type == 0)
        return yg__fail(YG_ERR_DTYPE,
                        "onnx_export: initializer %s: dtype %d has no ONNX type",
                        name,
                        (int)dtype);
    t->n_dims = (size_t)ndim;
    t->dims = yg__onnx_alloc(cx, (size_t)(ndim > 0 ? ndim : 1) * sizeof *t->dims);
    if (t->name == NULL || t->dims == NULL)
        return oom();
    for (int64_t d = 0; d < ndim; d++)
        t->dims[d] = sizes[d];
    t->has_raw_data = true;
    t->raw_data.len = nbytes;
    t->raw_data.data = (uint8_t *)data;
    if (!yg__onnx_push(cx, &cx->initializers, t))
        return oom();
    return YG_OK;
}

yg_status
yg__onnx_const_ints(yg_onnx_ctx *cx, const int64_t *values, int64_t len, const char **out) {
    int64_t *copy = yg__onnx_alloc(cx, (size_t)(len > 0 ? len : 1) * sizeof *copy);
    const char *name = yg__onnx_fresh_name(cx, "const", "ints");
    *out = NULL;
    if (copy == NULL || name == NULL)
        return oom();
    for (int64_t i = 0; i < len; i++)
        copy[i] = values[i]; /* little-endian host: raw_data is the array as it is */
    YG_RETURN_IF_ERROR(
        yg__onnx_add_initializer(cx, name, YG_INT64, &len, 1, copy, (size_t)len * sizeof *copy));
    *out = name;
    return YG_OK;
}

yg_status yg__onnx_const_scalar(yg_onnx_ctx *cx, int32_t dtype, double value, const char **out) {
    size_t size = yg__onnx_dtype_size(dtype);
    void *data = yg__onnx_alloc(cx, 8);
    const char *name = yg__onnx_fresh_name(cx, "const", "scalar");
    *out = NULL;
    if (data == NULL || name == NULL)
        return oom();
    switch (dtype) {
    case YG_FLOAT32:
        *(float *)data = (float)value;
        break;
    case YG_FLOAT64:
        *(double *)data = value;
        break;
    case YG_INT64:
        *(int64_t *)data = (int64_t)value;
        break;
    case YG_INT32:
        *(int32_t *)data = (int32_t)value;
        break;
    case YG_BOOL:
        *(uint8_t *)data = value != 0;
        break;
    case YG_FLOAT16:
        *(uint16_t *)data = yg__f16_from_f64(value);
        break;
    case YG_BFLOAT16:
        *(uint16_t *)data = yg__bf16_from_f64(value);
        break;
    default:
        return yg__fail(
            YG_ERR_DTYPE, "onnx_export: a scalar of dtype %d has no ONNX type", (int)dtype);
    }
    YG_RETURN_IF_ERROR(yg__onnx_add_initializer(cx, name, dtype, NULL, 0, data, size));
    *out = name;
    return YG_OK;
}

yg_status
yg__onnx_input_ints(yg_onnx_ctx *cx, yg_onnx_node *o, const int64_t *values, int64_t len) {
    const char *name = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_const_ints(cx, values, len, &name));
    return yg__onnx_input_name(cx, o, name);
}

yg_status yg__onnx_input_scalar(yg_onnx_ctx *cx,
                                yg_onnx_node *o,
                                const yg_ir_node *node,
                                int64_t like_input,
                                double value) {
    yg_ir_type t = yg__onnx_input_type(node, like_input);
    const char *name = NULL;
    if (t.kind != YG_IR_TYPE_TENSOR || t.dtype == YG_IR_UNKNOWN)
        return yg__onnx_unsupported(cx,
                                    node,
                                    "input %lld has an unknown dtype (run shape propagation)",
                                    (long long)like_input);
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, t.dtype, value, &name));
    return yg__onnx_input_name(cx, o, name);
}

yg_status yg__onnx_output_named(yg_onnx_ctx *cx, yg_onnx_node *o, const char *name) {
    char *d = yg__onnx_strdup(cx, name);
    if (d == NULL || !yg__onnx_push(cx, &o->outputs, d))
        return oom();
    o->proto.output = (char **)o->outputs.items;
    o->proto.n_output = o->outputs.len;
    return YG_OK;
}

yg_status yg__onnx_outputs(yg_onnx_ctx *cx, yg_onnx_node *o, const yg_ir_node *node) {
    for (int32_t i = 0; i < node->n_outputs; i++)
        YG_RETURN_IF_ERROR(yg__onnx_output_named(cx, o, node->outputs[i]->name));
    return YG_OK;
}

yg_status yg__onnx_output(yg_onnx_ctx *cx, yg_onnx_node *o, const yg_ir_node *node, int64_t i) {
    return yg__onnx_output_named(cx, o, node->outputs[i]->name);
}

yg_status yg__onnx_output_fresh(yg_onnx_ctx *cx,
                                yg_onnx_node *o,
                                const yg_ir_node *node,
                                const char *hint,
                                const char **name) {
    const char *base = node != NULL && node->n_outputs > 0 ? node->outputs[0]->name : "tmp";
    *name = yg__onnx_fresh_name(cx, base, hint);
    if (*name == NULL)
        return oom();
    return yg__onnx_output_named(cx, o, *name);
}

static yg_status new_attr(yg_onnx_ctx *cx,
                          yg_onnx_node *o,
                          const char *name,
                          Onnx__AttributeProto__AttributeType type,
                          Onnx__AttributeProto **out) {
    Onnx__AttributeProto *a = yg__onnx_alloc(cx, sizeof *a);
    if (a == NULL)
        return oom();
    onnx__attribute_proto__init(a);
    a->name = yg__onnx_strdup(cx, name);
    a->has_type = true;
    a->type = type;
    if (a->name == NULL || !yg__onnx_push(cx, &o->attrs, a))
        return oom();
    o->proto.attribute = (Onnx__AttributeProto **)o->attrs.items;
    o->proto.n_attribute = o->attrs.len;
    *out = a;
    return YG_OK;
}

yg_status yg__onnx_attr_int(yg_onnx_ctx *cx, yg_onnx_node *o, const char *name, int64_t v) {
    Onnx__AttributeProto *a = NULL;
    YG_RETURN_IF_ERROR(new_attr(cx, o, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, &a));
    a->has_i = true;
    a->i = v;
    return YG_OK;
}

yg_status yg__onnx_attr_float(yg_onnx_ctx *cx, yg_onnx_node *o, const char *name, double v) {
    Onnx__AttributeProto *a = NULL;
    YG_RETURN_IF_ERROR(new_attr(cx, o, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, &a));
    a->has_f = true;
    a->f = (float)v;
    return YG_OK;
}

yg_status yg__onnx_attr_ints(yg_onnx_ctx *cx,
                             yg_onnx_node *o,
                             const char *name,
                             const int64_t *v,
                             int64_t len) {
    Onnx__AttributeProto *a = NULL;
    YG_RETURN_IF_ERROR(new_attr(cx, o, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS, &a));
    a->ints = yg__onnx_alloc(cx, (size_t)(len > 0 ? len : 1) * sizeof *a->ints);
    if (a->ints == NULL)
        return oom();
    memcpy(a->ints, v, (size_t)len * sizeof *a->ints);
    a->n_ints = (size_t)len;
    return YG_OK;
}

yg_status yg__onnx_attr_str(yg_onnx_ctx *cx, yg_onnx_node *o, const char *name, const char *v) {
    Onnx__AttributeProto *a = NULL;
    YG_RETURN_IF_ERROR(new_attr(cx, o, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING, &a));
    a->has_s = true;
    a->s.data = (uint8_t *)yg__onnx_strdup(cx, v);
    if (a->s.data == NULL)
        return oom();
    a->s.len = strlen(v);
    return YG_OK;
}

yg_ir_type yg__onnx_input_type(const yg_ir_node *node, int64_t i) {
    if (i < 0 || i >= node->n_inputs)
        return yg_ir_type_tensor();
    return node->inputs[i]->type;
}

yg_status yg__onnx_unary(yg_onnx_ctx *cx,
                         const yg_ir_node *node,
                         const char *op_type,
                         const char *in,
                         const char *out_name,
                         const char **out) {
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, op_type, &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, in));
    if (out_name != NULL) {
        YG_RETURN_IF_ERROR(yg__onnx_output_named(cx, o, out_name));
        if (out != NULL)
            *out = out_name;
        return YG_OK;
    }
    return yg__onnx_output_fresh(cx, o, node, op_type, out);
}

yg_status yg__onnx_binary(yg_onnx_ctx *cx,
                          const yg_ir_node *node,
                          const char *op_type,
                          const char *a,
                          const char *b,
                          const char *out_name,
                          const char **out) {
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, op_type, &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, a));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, b));
    if (out_name != NULL) {
        YG_RETURN_IF_ERROR(yg__onnx_output_named(cx, o, out_name));
        if (out != NULL)
            *out = out_name;
        return YG_OK;
    }
    return yg__onnx_output_fresh(cx, o, node, op_type, out);
}
