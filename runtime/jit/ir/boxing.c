/*
 * boxing.c - the attribute readers the generated boxed-op functions call
 * (boxing.h), and the lookup of an op node's boxed entry.
 *
 * The readers are where a node's attributes meet the C types of the op's
 * signature, so this is where a wrong attribute kind becomes a message:
 * "sum.dim: attribute 'keepdim' must be a bool (0 or 1), got float 0.5".
 * Conversions are the ones the text form implies: bool is an int 0/1,
 * Scalar is an int or a float, a single int stands for a one-element int
 * list (the shape propagation pass reads it the same way), and a float
 * that is a whole number is accepted as an int.
 */
#include "jit/ir/boxing.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const yg_boxed_op *yg__boxed_op_of(const yg_ir_node *node) {
    ptrdiff_t i = node->op - yg__ops;
    YG_ASSERT(i >= 0 && i < yg__boxed_ops_count);
    YG_ASSERT(strcmp(yg__boxed_ops[i].name, node->op->name) == 0);
    return &yg__boxed_ops[i];
}

static const char *kind_name(yg_ir_attr_kind k) {
    switch (k) {
    case YG_IR_ATTR_INT:
        return "int";
    case YG_IR_ATTR_FLOAT:
        return "float";
    case YG_IR_ATTR_STR:
        return "str";
    case YG_IR_ATTR_INTS:
        return "int list";
    case YG_IR_ATTR_FLOATS:
        return "float list";
    case YG_IR_ATTR_TENSOR:
        return "tensor";
    case YG_IR_ATTR_GRAPH:
        return "graph";
    }
    return "unknown";
}

static yg_status missing(const yg_ir_node *node, const char *name, const char *type) {
    return yg__fail(YG_ERR_INVALID_ARGUMENT,
                    "%s: missing attribute '%s' (%s, no default)",
                    node->kind,
                    name,
                    type);
}

static yg_status wrong_kind(const yg_ir_node *node, const yg_ir_attr *a, const char *want) {
    char value[48] = "";
    if (a->kind == YG_IR_ATTR_INT)
        snprintf(value, sizeof value, " %lld", (long long)a->u.i);
    else if (a->kind == YG_IR_ATTR_FLOAT)
        snprintf(value, sizeof value, " %.17g", a->u.f);
    return yg__fail(YG_ERR_INVALID_ARGUMENT,
                    "%s: attribute '%s' must be %s, got %s%s",
                    node->kind,
                    a->name,
                    want,
                    kind_name(a->kind),
                    value);
}

/* An int attribute, or a float holding a whole number in int64 range
 * (the range test first: converting inf or 1e300 is undefined). */
static bool as_int(const yg_ir_attr *a, int64_t *out) {
    if (a->kind == YG_IR_ATTR_INT) {
        *out = a->u.i;
        return true;
    }
    if (a->kind == YG_IR_ATTR_FLOAT && a->u.f >= -9223372036854775808.0 &&
        a->u.f < 9223372036854775808.0 && a->u.f == (double)(int64_t)a->u.f) {
        *out = (int64_t)a->u.f;
        return true;
    }
    return false;
}

yg_status yg__box_int(const yg_ir_node *node, const char *name, const int64_t *dflt, int64_t *out) {
    const yg_ir_attr *a = yg__ir_node_attr(node, name);
    if (a == NULL) {
        if (dflt == NULL)
            return missing(node, name, "int");
        *out = *dflt;
        return YG_OK;
    }
    if (!as_int(a, out))
        return wrong_kind(node, a, "an int");
    return YG_OK;
}

yg_status yg__box_int_opt(const yg_ir_node *node,
                          const char *name,
                          const int64_t *dflt,
                          int64_t *buf,
                          const int64_t **out) {
    const yg_ir_attr *a = yg__ir_node_attr(node, name);
    *out = NULL;
    if (a == NULL) {
        if (dflt != NULL) {
            *buf = *dflt;
            *out = buf;
        }
        return YG_OK;
    }
    if (!as_int(a, buf))
        return wrong_kind(node, a, "an int");
    *out = buf;
    return YG_OK;
}

yg_status
yg__box_double(const yg_ir_node *node, const char *name, const double *dflt, double *out) {
    const yg_ir_attr *a = yg__ir_node_attr(node, name);
    if (a == NULL) {
        if (dflt == NULL)
            return missing(node, name, "float or Scalar");
        *out = *dflt;
        return YG_OK;
    }
    if (a->kind == YG_IR_ATTR_INT)
        *out = (double)a->u.i;
    else if (a->kind == YG_IR_ATTR_FLOAT)
        *out = a->u.f;
    else
        return wrong_kind(node, a, "an int or a float");
    return YG_OK;
}

yg_status yg__box_double_opt(const yg_ir_node *node,
                             const char *name,
                             const double *dflt,
                             double *buf,
                             const double **out) {
    *out = NULL;
    if (yg__ir_node_attr(node, name) == NULL && dflt == NULL)
        return YG_OK;
    YG_RETURN_IF_ERROR(yg__box_double(node, name, dflt, buf));
    *out = buf;
    return YG_OK;
}

yg_status yg__box_bool(const yg_ir_node *node, const char *name, const bool *dflt, bool *out) {
    const yg_ir_attr *a = yg__ir_node_attr(node, name);
    int64_t v = 0;
    if (a == NULL) {
        if (dflt == NULL)
            return missing(node, name, "bool");
        *out = *dflt;
        return YG_OK;
    }
    if (!as_int(a, &v) || (v != 0 && v != 1))
        return wrong_kind(node, a, "a bool (0 or 1)");
    *out = v == 1;
    return YG_OK;
}

yg_status yg__box_ints(const yg_ir_node *node,
                       const char *name,
                       const int64_t *dflt,
                       int64_t dflt_len,
                       int32_t fixed_len,
                       yg_box_ints *out) {
    const yg_ir_attr *a = yg__ir_node_attr(node, name);
    int64_t v = 0;
    if (a == NULL) {
        if (dflt_len < 0) {
            char type[16] = "int[]";
            if (fixed_len > 0)
                snprintf(type, sizeof type, "int[%d]", (int)fixed_len);
            return missing(node, name, type);
        }
        out->items = dflt;
        out->len = dflt_len;
        return YG_OK;
    }
    if (a->kind == YG_IR_ATTR_INTS) {
        out->items = a->u.ints.items;
        out->len = a->u.ints.len;
    } else if (as_int(a, &v)) {
        int32_t n = fixed_len > 0 && fixed_len <= 64 ? fixed_len : 1;
        for (int32_t i = 0; i < n; i++)
            out->buf[i] = v;
        out->items = out->buf;
        out->len = n;
    } else {
        return wrong_kind(node, a, "an int list");
    }
    if (fixed_len > 0 && out->len != fixed_len)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: attribute '%s' must have %d entries, got %lld",
                        node->kind,
                        name,
                        (int)fixed_len,
                        (long long)out->len);
    return YG_OK;
}

yg_status yg__box_bools(const yg_ir_node *node,
                        const char *name,
                        const bool *dflt,
                        int32_t fixed_len,
                        bool *buf) {
    const yg_ir_attr *a = yg__ir_node_attr(node, name);
    if (a == NULL) {
        if (dflt == NULL) {
            char type[16];
            snprintf(type, sizeof type, "bool[%d]", (int)fixed_len);
            return missing(node, name, type);
        }
        memcpy(buf, dflt, (size_t)fixed_len * sizeof *buf);
        return YG_OK;
    }
    if (a->kind != YG_IR_ATTR_INTS)
        return wrong_kind(node, a, "a list of 0/1 ints");
    if (a->u.ints.len != fixed_len)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: attribute '%s' must have %d entries, got %lld",
                        node->kind,
                        name,
                        (int)fixed_len,
                        (long long)a->u.ints.len);
    for (int32_t i = 0; i < fixed_len; i++) {
        int64_t v = a->u.ints.items[i];
        if (v != 0 && v != 1)
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s: attribute '%s' entry %d must be 0 or 1, got %lld",
                            node->kind,
                            name,
                            (int)i,
                            (long long)v);
        buf[i] = v == 1;
    }
    return YG_OK;
}

yg_status
yg__box_str(const yg_ir_node *node, const char *name, const char *dflt, const char **out) {
    const yg_ir_attr *a = yg__ir_node_attr(node, name);
    if (a == NULL) {
        if (dflt == NULL)
            return missing(node, name, "str");
        *out = dflt;
        return YG_OK;
    }
    if (a->kind != YG_IR_ATTR_STR)
        return wrong_kind(node, a, "a str");
    *out = a->u.s;
    return YG_OK;
}

/* '"none", "mean" or "sum"': the values of an enum, for messages. */
static const char *enum_values(const char *(*names)(int64_t), char *buf, size_t cap) {
    size_t len = 0;
    int64_t n = 0;

    buf[0] = '\0';
    while (names(n) != NULL)
        n++;
    for (int64_t v = 0; v < n && len < cap; v++)
        len += (size_t)snprintf(buf + len,
                                cap - len,
                                "%s\"%s\"",
                                v == 0 ? "" : v + 1 == n ? " or " : ", ",
                                names(v));
    return buf;
}

yg_status yg__box_enum(const yg_ir_node *node,
                       const char *name,
                       const char *(*names)(int64_t),
                       const int64_t *dflt,
                       int64_t *out) {
    const yg_ir_attr *a = yg__ir_node_attr(node, name);
    char want[160];

    if (a == NULL) {
        if (dflt == NULL)
            return missing(node, name, enum_values(names, want, sizeof want));
        *out = *dflt;
        return YG_OK;
    }
    if (a->kind != YG_IR_ATTR_STR)
        return wrong_kind(node, a, enum_values(names, want, sizeof want));
    for (int64_t v = 0; names(v) != NULL; v++) {
        if (strcmp(a->u.s, names(v)) == 0) {
            *out = v;
            return YG_OK;
        }
    }
    return yg__fail(YG_ERR_INVALID_ARGUMENT,
                    "%s: attribute '%s' must be %s, got \"%s\"",
                    node->kind,
                    name,
                    enum_values(names, want, sizeof want),
                    a->u.s);
}

yg_status yg__box_dtype(const yg_ir_node *node, const char *name, yg_dtype *out) {
    const yg_ir_attr *a = yg__ir_node_attr(node, name);
    int64_t v = -1;
    if (a == NULL)
        return missing(node, name, "ScalarType");
    if (a->kind == YG_IR_ATTR_STR) {
        for (int d = 0; d < YG_DTYPE_COUNT_; d++) {
            if (strcmp(a->u.s, yg_dtype_name((yg_dtype)d)) == 0)
                v = d;
        }
        if (v < 0)
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s: attribute '%s' names no dtype: \"%s\"",
                            node->kind,
                            name,
                            a->u.s);
    } else if (!as_int(a, &v) || v < 0 || v >= YG_DTYPE_COUNT_) {
        return wrong_kind(node, a, "a dtype (its name or number)");
    }
    *out = (yg_dtype)v;
    return YG_OK;
}

yg_status
yg__box_dtype_opt(const yg_ir_node *node, const char *name, yg_dtype *buf, const yg_dtype **out) {
    *out = NULL;
    if (yg__ir_node_attr(node, name) == NULL)
        return YG_OK;
    YG_RETURN_IF_ERROR(yg__box_dtype(node, name, buf));
    *out = buf;
    return YG_OK;
}

yg_status yg__box_device(const yg_ir_node *node, const char *name, yg_device *out) {
    const yg_ir_attr *a = yg__ir_node_attr(node, name);
    int64_t v = -1;
    if (a == NULL)
        return missing(node, name, "Device");
    if (!as_int(a, &v) || v < 0 || v >= YG_DEVICE_COUNT_)
        return wrong_kind(node, a, "a device (its number)");
    *out = (yg_device)v;
    return YG_OK;
}

yg_status yg__box_device_opt(const yg_ir_node *node,
                             const char *name,
                             yg_device *buf,
                             const yg_device **out) {
    *out = NULL;
    if (yg__ir_node_attr(node, name) == NULL)
        return YG_OK;
    YG_RETURN_IF_ERROR(yg__box_device(node, name, buf));
    *out = buf;
    return YG_OK;
}

yg_status yg__box_list_out(const yg_ir_node *node, yg_tensor **items, int64_t len, yg_tensor **out) {
    if (len != node->n_outputs) {
        yg_release_list(items, len);
        return yg__fail(YG_ERR_SHAPE,
                        "%s: the node has %d outputs but the op returned %" PRId64
                        " tensors (the graph was recorded for other sizes)",
                        node->kind,
                        node->n_outputs,
                        len);
    }
    for (int64_t i = 0; i < len; i++)
        out[i] = items[i];
    free(items);
    return YG_OK;
}
