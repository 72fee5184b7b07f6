/*
 * yagrad/onnx.h - export a graph (usually a trace, yagrad/jit.h) as an ONNX
 * model: a ModelProto of IR version 8 with one opset import of the default
 * domain (13..17, 17 by default), that onnx.checker accepts and other
 * runtimes (onnxruntime) run to the same results.
 *
 * How: the exporter works on a copy of the graph (the caller's graph is
 * never changed), runs the export passes on it (shape propagation for
 * the types it does not know, peephole, broadcast fusion, dead code
 * elimination; docs/onnx.md), then turns each node into
 * ONNX nodes through its op's symbolic: generated from the `onnx:` key of
 * specs/native_functions.yaml for ops that are one ONNX operator, or
 * handwritten (runtime/onnx/sym_*.c) for structural ones (linear, lstm_cell,
 * layer_norm, convolution, ...).  An op marked `onnx: unsupported("why")`
 * fails the export with that reason.  prim::Constant values become
 * initializers; parameter inputs (`param %w`) become initializers holding
 * the tensors passed as params (raw little-endian data), or stay graph
 * inputs when options ask so.
 *
 * What is fixed at export: attribute values the trace recorded (slice
 * bounds, split sizes, most view and expand sizes) are constants in the
 * model, as they are in the graph.  A dynamic axis (yg_onnx_dynamic_axis)
 * makes an input or output dimension symbolic in the model's types; it
 * runs at other sizes when no recorded size depends on it.  Sizes equal
 * to the input's own dims are exported so they follow it (view(x,
 * [batch, -1]) does; an expand of a [1, n] row to [batch, n] does not):
 * docs/onnx.md lists what follows and what stays pinned.
 *
 * Ownership: every argument is borrowed; a buffer returned by
 * yg_onnx_export_to_buffer is the caller's, released with
 * yg_onnx_buffer_release.  Thread safety: an export reads the graph (and
 * keeps marks in it, like yg_graph_lint), so one graph must not be
 * exported or changed from two threads at once.
 *
 * Errors (yagrad/status.h): messages start "onnx_export: ".  On any
 * failure nothing is written (the file is written to a temporary name in
 * the same directory and renamed over path only when complete) and the
 * out-parameters are NULL/0.  Anything not declared here is not API.
 */
#ifndef YAGRAD_ONNX_H
#define YAGRAD_ONNX_H

#include "yagrad/jit.h"
#include "yagrad/status.h"
#include "yagrad/tensor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether this build of yagrad has the exporter (configured with
 * YG_WITH_ONNX, protobuf-c and libonnx-dev found).  Without it every
 * export fails with YG_ERR_NOT_IMPLEMENTED, "onnx_export: built without
 * ONNX ...".  Cannot fail. */
bool yg_onnx_is_available(void);

/* The opsets the exporter accepts, and its default. */
#define YG_ONNX_OPSET_MIN     13
#define YG_ONNX_OPSET_MAX     17
#define YG_ONNX_OPSET_DEFAULT 17

/* A dimension of a graph input or output that is symbolic in the model:
 * dimension `axis` of the input (is_output false) or output `index` is
 * called `name` ("batch") instead of its traced size. */
typedef struct yg_onnx_dynamic_axis {
    bool is_output;
    int64_t index;    /* graph input or output index */
    int64_t axis;     /* 0 <= axis < its rank */
    const char *name; /* [A-Za-z_][A-Za-z0-9_]* */
} yg_onnx_dynamic_axis;

/* What an export wrote (yg_onnx_options.summary). */
typedef struct yg_onnx_summary {
    int32_t opset;
    int64_t n_nodes;        /* ONNX nodes in the graph */
    int64_t n_initializers; /* parameters, constants and the exporter's own */
    int64_t n_inputs, n_outputs;
    size_t n_bytes; /* the serialized model */
} yg_onnx_summary;

/* Export options.  Zero-initialise (or pass NULL) for the defaults:
 * opset 17, names from the graph, parameters as initializers, producer
 * "yagrad" with the library's version, no doc string. */
typedef struct yg_onnx_options {
    int32_t opset; /* 0: YG_ONNX_OPSET_DEFAULT; else YG_ONNX_OPSET_MIN..MAX */
    /* Names of the model's inputs (the graph inputs that are not
     * exported as initializers, in order) and outputs; NULL, or an entry
     * NULL, keeps the graph's value name.  Each [A-Za-z0-9_.]+, unique. */
    const char *const *input_names;
    int64_t n_input_names;
    const char *const *output_names;
    int64_t n_output_names;
    const yg_onnx_dynamic_axis *dynamic_axes;
    int64_t n_dynamic_axes;
    /* true: parameter inputs stay model inputs (with their types) and
     * params may be NULL; false: they are initializers from params. */
    bool params_as_inputs;
    const char *producer_name;    /* NULL: "yagrad" */
    const char *producer_version; /* NULL: the library's version */
    const char *doc_string;       /* NULL: none */
    yg_onnx_summary *summary;     /* nullable; out: filled on success only */
} yg_onnx_options;

/* Exports g as an ONNX model file.
 *   g:        borrowed; the graph (not changed)
 *   params:   borrowed, n_params contiguous-or-not CPU tensors, one per
 *             parameter input of g in order (yg_trace_result's params);
 *             nullable when g has no parameters or options say
 *             params_as_inputs
 *   n_params: the number of parameter inputs of g (or 0 with NULL params)
 *   options:  nullable, borrowed
 *   path:     the file to write (replaced when it exists)
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL g/path, a params count that is
 *          not g's number of parameter inputs, a param whose dtype or
 *          sizes differ from its input's type, an opset out of range, a
 *          malformed or repeated name, a dynamic axis out of range;
 *          YG_ERR_NOT_IMPLEMENTED for a node that cannot be exported,
 *          naming it and the reason ("onnx_export: %12 =
 *          scatter_add(%a, %i, %s): scatter_add: not exportable:
 *          ScatterElements reduction=add; not written yet"), or an op
 *          that needs a higher opset ("... layer_norm: needs opset 17
 *          (LayerNormalization), exporting opset 13"), or one whose
 *          result dtype the ONNX operator would not compute ("sum: the
 *          result is int64 but ONNX ReduceSum computes in the type of
 *          input 0 (bool)"); YG_ERR_DTYPE for a
 *          dtype ONNX has no type for; YG_ERR_IO when the file cannot be
 *          written ("onnx_export: cannot create '<path>.tmp...': <reason>");
 *          YG_ERR_OUT_OF_MEMORY.  On failure no file is created or changed. */
YG_NODISCARD yg_status yg_onnx_export(const yg_graph *g,
                                      yg_tensor *const *params,
                                      int64_t n_params,
                                      const yg_onnx_options *options,
                                      const char *path);

/* The same model as bytes in memory.
 *   out:     out: the serialized ModelProto, release with yg_onnx_buffer_release
 *   out_len: out: its length in bytes
 * Returns: as yg_onnx_export, without YG_ERR_IO; YG_ERR_INVALID_ARGUMENT
 *          for NULL out or out_len.  On failure *out is NULL, *out_len 0. */
YG_NODISCARD yg_status yg_onnx_export_to_buffer(const yg_graph *g,
                                                yg_tensor *const *params,
                                                int64_t n_params,
                                                const yg_onnx_options *options,
                                                uint8_t **out,
                                                size_t *out_len);

/* Frees a buffer from yg_onnx_export_to_buffer.  NULL-safe. */
void yg_onnx_buffer_release(uint8_t *buf);

/* How op `name` (a table name, "mul", "sum.dim") exports: true when it
 * has a symbolic, and then *onnx_op is its ONNX operator ("Mul", or
 * "custom" for a handwritten one); false when it has none, and then
 * *reason is why (NULL for an op without an `onnx:` key) and *onnx_op
 * NULL.  Both outputs nullable, static strings.  Unknown names give false
 * with reason "unknown op".  Cannot fail. */
bool yg_onnx_op_exportable(const char *name, const char **onnx_op, const char **reason);

#ifdef __cplusplus
}
#endif
#endif /* YAGRAD_ONNX_H */
