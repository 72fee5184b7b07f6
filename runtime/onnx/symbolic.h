/*
 * symbolic.h - what an ONNX symbolic is written against: the generated
 * ones (generated/onnx/<section>.c, from the `onnx:` keys of
 * native_functions.yaml) and the handwritten ones of runtime/onnx/sym_*.c.
 * Private to the exporter and the generated code; no protobuf type shows
 * here, so the generated files compile without the protobuf-c bindings.
 *
 * A symbolic turns one graph node into ONNX nodes: it creates each with
 * yg__onnx_node_new, gives it inputs (the node's inputs by index, fresh
 * intermediate names, or initializers it makes: int64 lists, scalars),
 * attributes and outputs.  Everything it creates belongs to the export
 * (yg_onnx_ctx) and is freed with it, so symbolics release nothing and may
 * return on the first failure.  ONNX value names are the graph's value
 * names (the exporter renames inputs and outputs first); a None input is
 * the empty name, ONNX's "absent optional input".
 *
 * Errors: YG_ERR_NOT_IMPLEMENTED through yg__onnx_unsupported, naming the
 * node ("onnx_export: %3 = add(%1, %2): ..."); the boxing readers' messages
 * for malformed attributes; YG_ERR_OUT_OF_MEMORY.
 */
#ifndef YAGRAD_ONNX_SYMBOLIC_H
#define YAGRAD_ONNX_SYMBOLIC_H

#include "jit/ir/ir.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct yg_onnx_ctx yg_onnx_ctx;   /* one export */
typedef struct yg_onnx_node yg_onnx_node; /* an ONNX node being built */

/* Emits the ONNX nodes computing node (an op node of the graph exported). */
typedef yg_status yg_onnx_symbolic_fn(yg_onnx_ctx *cx, const yg_ir_node *node);

/* How one op exports: generated/onnx/table.c, parallel to yg__ops[]. */
typedef struct yg_onnx_symbolic {
    const char *name;        /* the op's table name */
    yg_onnx_symbolic_fn *fn; /* NULL: not exportable */
    int32_t min_opset;       /* the lowest opset fn's operator exists in (0: fn checks) */
    const char *onnx_op;     /* "Add", "custom", or NULL */
    const char *unsupported; /* why fn is NULL (onnx: unsupported("why")); NULL when unmapped */
} yg_onnx_symbolic;

extern const yg_onnx_symbolic yg__onnx_symbolics[];
extern const int32_t yg__onnx_symbolics_count;

/* The opset being exported. */
int32_t yg__onnx_opset(const yg_onnx_ctx *cx);

/* Fails with YG_ERR_NOT_IMPLEMENTED and "onnx_export: <node text>: <op>:
 * <formatted reason>". */
yg_status yg__onnx_unsupported(yg_onnx_ctx *cx, const yg_ir_node *node, const char *fmt, ...)
    YG__PRINTF(3, 4);

/* Fails unless ok: "<op>: argument 'alpha' must be 1 to export (got 2)". */
yg_status yg__onnx_require(yg_onnx_ctx *cx,
                           const yg_ir_node *node,
                           const char *arg,
                           bool ok,
                           const char *expected);

/* Fails unless node's output 0 has the dtype of its input i (when both
 * are known): op_type computes in that input's type, so a yagrad result
 * of another dtype (a sum of bools is int64) would not match. */
yg_status
yg__onnx_same_dtype(yg_onnx_ctx *cx, const yg_ir_node *node, int64_t i, const char *op_type);

/* Fails unless the export's opset is at least min (for op_type). */
yg_status
yg__onnx_require_opset(yg_onnx_ctx *cx, const yg_ir_node *node, const char *op_type, int32_t min);

/* A new ONNX node of op_type, named after node (*out borrowed from cx). */
yg_status
yg__onnx_node_new(yg_onnx_ctx *cx, const yg_ir_node *node, const char *op_type, yg_onnx_node **out);

/* Inputs: node's input i; node's inputs first..n-1-n_after; a name
 * (copied; "" for absent); a 1-d int64 initializer; a 0-d initializer of
 * the dtype of node's input like_input holding value. */
yg_status yg__onnx_input(yg_onnx_ctx *cx, yg_onnx_node *o, const yg_ir_node *node, int64_t i);
yg_status yg__onnx_inputs(yg_onnx_ctx *cx,
                          yg_onnx_node *o,
                          const yg_ir_node *node,
                          int64_t first,
                          int64_t n_after);
yg_status yg__onnx_input_name(yg_onnx_ctx *cx, yg_onnx_node *o, const char *name);
yg_status yg__onnx_input_ints(yg_onnx_ctx *cx, yg_onnx_node *o, const int64_t *values, int64_t len);
yg_status yg__onnx_input_scalar(yg_onnx_ctx *cx,
                                yg_onnx_node *o,
                                const yg_ir_node *node,
                                int64_t like_input,
                                double value);
/* A 0-d initializer of dtype (a yg_dtype) holding value; its name in *out
 * (borrowed from cx). */
yg_status yg__onnx_const_scalar(yg_onnx_ctx *cx, int32_t dtype, double value, const char **out);
/* A 1-d int64 initializer; its name in *out. */
yg_status
yg__onnx_const_ints(yg_onnx_ctx *cx, const int64_t *values, int64_t len, const char **out);

/* Outputs: all of node's outputs in order (the usual last call); node's
 * output i; a fresh intermediate name ("<node's first output>_<hint>N"),
 * returned in *name (borrowed from cx). */
yg_status yg__onnx_outputs(yg_onnx_ctx *cx, yg_onnx_node *o, const yg_ir_node *node);
yg_status yg__onnx_output(yg_onnx_ctx *cx, yg_onnx_node *o, const yg_ir_node *node, int64_t i);
yg_status yg__onnx_output_fresh(yg_onnx_ctx *cx,
                                yg_onnx_node *o,
                                const yg_ir_node *node,
                                const char *hint,
                                const char **name);

/* Attributes of o. */
yg_status yg__onnx_attr_int(yg_onnx_ctx *cx, yg_onnx_node *o, const char *name, int64_t v);
yg_status yg__onnx_attr_float(yg_onnx_ctx *cx, yg_onnx_node *o, const char *name, double v);
yg_status yg__onnx_attr_ints(yg_onnx_ctx *cx,
                             yg_onnx_node *o,
                             const char *name,
                             const int64_t *v,
                             int64_t len);
yg_status yg__onnx_attr_str(yg_onnx_ctx *cx, yg_onnx_node *o, const char *name, const char *v);

/* The ONNX name of node's input i ("" for None) / output i. */
const char *yg__onnx_input_name_of(yg_onnx_ctx *cx, const yg_ir_node *node, int64_t i);
const char *yg__onnx_output_name_of(const yg_ir_node *node, int64_t i);

#endif /* YAGRAD_ONNX_SYMBOLIC_H */
