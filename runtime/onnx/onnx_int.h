/*
 * onnx_int.h - the exporter's private state, shared by export.c (the
 * driver), builder.c (what symbolic.h declares) and the handwritten
 * symbolics.  Private to runtime/onnx/.
 *
 * Memory: an export allocates every protobuf-c structure, string and
 * array from its context's arena (a list of malloc'd blocks), so building
 * never frees piecemeal and a failure at any point releases everything
 * with yg__onnx_ctx_free.  Tensors the model points into (parameters made
 * contiguous) are referenced by the context until it is freed, so packing
 * reads them without copies.
 */
#ifndef YAGRAD_ONNX_INT_H
#define YAGRAD_ONNX_INT_H

#include "onnx/exporter.h"
#include "onnx/onnx.pb-c.h"
#include "onnx/symbolic.h"
#include "yagrad/onnx.h"

typedef struct yg_onnx_block {
    struct yg_onnx_block *next;
    max_align_t data[]; /* the allocation */
} yg_onnx_block;

/* A growable array of pointers in the arena. */
typedef struct yg_onnx_ptrs {
    void **items;
    size_t len, cap;
} yg_onnx_ptrs;

struct yg_onnx_node {
    Onnx__NodeProto proto;
    yg_onnx_ptrs inputs, outputs, attrs;
};

/* The most dynamic axes (symbols) one export tells apart. */
#define YG_ONNX_MAX_SYMS 8

/* A dim in symbolic form (dims.c): coef * the product of symbol k to the
 * power exp[k]; value is what it was at the traced sizes.  A number has
 * every exp 0 and coef == value. */
typedef struct yg_onnx_dim {
    int64_t value;
    int64_t coef;
    uint8_t exp[YG_ONNX_MAX_SYMS];
} yg_onnx_dim;

/* A dynamic axis: the model input (its ONNX name) and axis holding it,
 * and the ONNX values computing it, made on first use (dims.c). */
typedef struct yg_onnx_sym {
    const char *name; /* the yg_onnx_dynamic_axis name */
    const char *input;
    int64_t axis;
    int64_t value;
    const char *shape;  /* Shape(input) */
    const char *vector; /* Gather(shape, [axis]), int64 [1] */
    const char *scalar; /* Gather(shape, axis), int64 0-d */
} yg_onnx_sym;

struct yg_onnx_ctx {
    int32_t opset;
    yg_onnx_block *blocks;
    yg_onnx_ptrs nodes;        /* yg_onnx_node *, in order */
    yg_onnx_ptrs initializers; /* Onnx__TensorProto * */
    yg_tensor **held;          /* tensors initializers point into */
    int64_t n_held, cap_held;
    int64_t next_fresh; /* numbers intermediate and initializer names */
    yg_onnx_sym syms[YG_ONNX_MAX_SYMS];
    int n_syms;
    yg_onnx_dim (*dims)[YG_MAX_DIMS]; /* per value, at its scratch index */
    int64_t n_dims, cap_dims;
};

/* Arena allocation (zeroed); NULL when out of memory (no message). */
void *yg__onnx_alloc(yg_onnx_ctx *cx, size_t n);
char *yg__onnx_strdup(yg_onnx_ctx *cx, const char *s);
/* Appends p; false when out of memory. */
bool yg__onnx_push(yg_onnx_ctx *cx, yg_onnx_ptrs *a, void *p);
/* Keeps a reference to t until the context is freed. */
yg_status yg__onnx_hold(yg_onnx_ctx *cx, yg_tensor *t);
/* Frees the arena and the held tensors.  NULL-safe. */
void yg__onnx_ctx_free(yg_onnx_ctx *cx);

/* The ONNX TensorProto data type of a yg_dtype; 0 for none. */
int32_t yg__onnx_dtype(int32_t dtype);
/* Bytes per element of a yg_dtype. */
size_t yg__onnx_dtype_size(int32_t dtype);

/* An initializer named name (arena copy) of dtype and sizes whose raw
 * data is the nbytes at data (not copied: data must outlive packing). */
yg_status yg__onnx_add_initializer(yg_onnx_ctx *cx,
                                   const char *name,
                                   int32_t dtype,
                                   const int64_t *sizes,
                                   int64_t ndim,
                                   const void *data,
                                   size_t nbytes);

/* A fresh name "<base>:<hint><N>" (':' never occurs in a graph's value
 * names, so it cannot collide). */
const char *yg__onnx_fresh_name(yg_onnx_ctx *cx, const char *base, const char *hint);

/* ---- handwritten symbolic helpers (builder.c) ---- */

/* Appends output name (copied) to o. */
yg_status yg__onnx_output_named(yg_onnx_ctx *cx, yg_onnx_node *o, const char *name);

/* A one-input, one-output ONNX node reading in and writing a fresh name
 * (*out) or, with out_name non-NULL, writing out_name. */
yg_status yg__onnx_unary(yg_onnx_ctx *cx,
                         const yg_ir_node *node,
                         const char *op_type,
                         const char *in,
                         const char *out_name,
                         const char **out);
/* A two-input node, same conventions. */
yg_status yg__onnx_binary(yg_onnx_ctx *cx,
                          const yg_ir_node *node,
                          const char *op_type,
                          const char *a,
                          const char *b,
                          const char *out_name,
                          const char **out);
/* input @ weight^T (+ bias, NULL for none) into out_name (NULL: a fresh
 * name, returned in *out): Gemm(transB=1) for a rank-2 input, else
 * MatMul(input, Transpose(weight)) and Add (sym_nn.c). */
yg_status yg__onnx_linear(yg_onnx_ctx *cx,
                          const yg_ir_node *node,
                          const char *input,
                          int32_t input_rank,
                          const char *weight,
                          const char *bias,
                          const char *out_name,
                          const char **out);
/* The IR type of node's input i. */
yg_ir_type yg__onnx_input_type(const yg_ir_node *node, int64_t i);

/* ---- dynamic sizes (dims.c) ---- */

/* Gives input v (a model input) its forms: axis_names[d] (NULL: none)
 * names a dynamic axis.  Call for every model input, then
 * yg__onnx_dims_nodes once, before any node is emitted; values never
 * given forms (parameters) read as NULL. */
yg_status yg__onnx_dims_input(yg_onnx_ctx *cx, yg_ir_value *v, const char *const *axis_names);
/* Forms for every node output of g, in order. */
yg_status yg__onnx_dims_nodes(yg_onnx_ctx *cx, yg_graph *g);
/* v's dims (v->type.ndim of them), or NULL when it has none. */
const yg_onnx_dim *yg__onnx_value_dims(const yg_onnx_ctx *cx, const yg_ir_value *v);
bool yg__onnx_dim_is_symbolic(const yg_onnx_dim *d);
/* An int64 value computing d: [1] or, with scalar, 0-d (for Range). */
yg_status yg__onnx_dim_value(yg_onnx_ctx *cx,
                             const yg_ir_node *node,
                             const yg_onnx_dim *d,
                             bool scalar,
                             const char **out);
/* Range(0, n, 1) in int64 into out_name, or (out_name NULL) a fresh
 * name in *out. */
yg_status yg__onnx_dim_range(yg_onnx_ctx *cx,
                             const yg_ir_node *node,
                             const yg_onnx_dim *n,
                             const char *out_name,
                             const char **out);
/* A 1-d int64 shape of n entries: numbers[i], or forms[i] computed where
 * forms[i] is not NULL; an initializer when every form is NULL. */
yg_status yg__onnx_shape_value(yg_onnx_ctx *cx,
                               const yg_ir_node *node,
                               const int64_t *numbers,
                               const yg_onnx_dim *const *forms,
                               int64_t n,
                               const char **out);

#endif /* YAGRAD_ONNX_INT_H */
