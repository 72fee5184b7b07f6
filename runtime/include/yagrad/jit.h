/*
 * yagrad/jit.h - the graph IR: build (or trace), print, parse, check,
 * optimise and run graphs of op calls.
 *
 * A yg_graph is a straight-line program: graph inputs (values), a list of
 * nodes in execution order, and graph outputs.  A node (yg_ir_node) calls
 * one op of specs/native_functions.yaml, named by its table name ("mul",
 * "sum.dim", "add_") or is one of the prim kinds below; it reads values
 * (inputs), writes values (outputs; several for ops like max.dim) and
 * carries named attributes for its non-tensor arguments (int, float, str,
 * int list, float list, tensor, subgraph).  Every value (yg_ir_value) has
 * one definition, a name unique in its graph, a type (yg_ir_type: Tensor,
 * with dtype, device, sizes and requires_grad each known or unknown, or
 * None) and a list of uses.  Subgraphs (graph attributes) are closed: they
 * see only their own inputs.
 *
 * A graph input may be marked as a parameter ("param %w" in text): a tensor
 * a traced function read without receiving it.  yg_trace records the op
 * calls of a C function as a graph (docs/ir.md, "Tracing").
 *
 * Prim kinds: prim::Constant (no inputs, one Tensor output, attribute
 * value: tensor), prim::None (no inputs, one None output: an absent
 * `Tensor?` argument), prim::FusionGroup (attribute subgraph: graph) and
 * prim::DifferentiableGraph (attributes f: graph; df: graph optional;
 * captures, grad_of_input: int lists; n_grad_outputs: int, see
 * yg_graph_create_autodiff_subgraphs), whose inputs and outputs are those
 * of the subgraph (f).
 *
 * The text form (docs/ir.md has the grammar) looks like
 *     graph(%x : Tensor(dtype=float32, sizes=[2, 3]), %w : Tensor):
 *       %y : Tensor = mm(%x, %w)
 *       %z : Tensor = sum.dim[dim=[1], keepdim=0](%y)
 *       return (%z)
 * and yg_graph_print(yg_graph_parse(text)) reproduces printed text exactly.
 *
 * Ownership: a graph owns its nodes, values and attributes; yg_ir_node and
 * yg_ir_value pointers are borrowed and stay valid while the graph lives
 * and the node is not removed by a pass.  Strings returned through char **
 * out-parameters are released with yg_string_release.  Tensors given as
 * attributes are copied.
 *
 * Thread safety: a graph is not thread-safe, not even for functions that
 * take it const (yg_graph_lint and the dumps keep marks in the nodes and
 * values); different
 * graphs may be used from different threads at once.
 *
 * Errors: see status.h.  Failures leave the graph as it was, except for
 * passes, which say so.  Anything not declared here is not API.
 */
#ifndef YAGRAD_JIT_H
#define YAGRAD_JIT_H

#include "yagrad/status.h"
#include "yagrad/tensor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct yg_graph yg_graph;
typedef struct yg_ir_node yg_ir_node;
typedef struct yg_ir_value yg_ir_value;

/* A field of yg_ir_type that is not known. */
#define YG_IR_UNKNOWN (-1)

typedef enum yg_ir_type_kind { YG_IR_TYPE_TENSOR = 0, YG_IR_TYPE_NONE = 1 } yg_ir_type_kind;

/* The static type of a value.  For YG_IR_TYPE_NONE the other fields are
 * ignored (and read back as unknown). */
typedef struct yg_ir_type {
    yg_ir_type_kind kind;
    int32_t dtype;              /* a yg_dtype, or YG_IR_UNKNOWN */
    int32_t device;             /* a yg_device, or YG_IR_UNKNOWN */
    int32_t ndim;               /* 0..YG_MAX_DIMS, or YG_IR_UNKNOWN (rank unknown) */
    int64_t sizes[YG_MAX_DIMS]; /* first ndim entries: >= 0, or YG_IR_UNKNOWN */
    int32_t requires_grad;      /* 0, 1, or YG_IR_UNKNOWN */
} yg_ir_type;

/* A Tensor type with every field unknown.  Cannot fail. */
yg_ir_type yg_ir_type_tensor(void);

/* The None type.  Cannot fail. */
yg_ir_type yg_ir_type_none(void);

typedef enum yg_ir_attr_kind {
    YG_IR_ATTR_INT = 0,
    YG_IR_ATTR_FLOAT = 1,
    YG_IR_ATTR_STR = 2,
    YG_IR_ATTR_INTS = 3,
    YG_IR_ATTR_FLOATS = 4,
    YG_IR_ATTR_TENSOR = 5,
    YG_IR_ATTR_GRAPH = 6
} yg_ir_attr_kind;

/* ---- graphs ---- */

/* A new empty graph (no inputs, nodes or outputs).
 *   out: out: new graph, release with yg_graph_release
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL out; YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_graph_create(yg_graph **out);

/* Frees g with its nodes, values and attributes.  NULL-safe. */
void yg_graph_release(yg_graph *g);

/* A deep copy of g (same names, types, attributes; subgraphs copied).
 *   g: borrowed;  out: out: new graph
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL g or out; YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_graph_clone(const yg_graph *g, yg_graph **out);

/* Appends a graph input.
 *   g:    in-out
 *   type: nullable, borrowed (NULL: Tensor with every field unknown)
 *   name: nullable; [A-Za-z0-9_.]+, unique in g (NULL: the next free number)
 *   out:  nullable; out: borrowed, valid while g lives
 * Returns: YG_ERR_INVALID_ARGUMENT for a NULL g, an invalid type, or a name
 *          that is malformed or taken; YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_graph_add_input(yg_graph *g,
                                          const yg_ir_type *type,
                                          const char *name,
                                          yg_ir_value **out);

/* Appends a node calling kind on inputs, with n_outputs new outputs
 * (Tensor type, unknown fields; None for prim::None) named by number.
 *   g:         in-out
 *   kind:      an op name of specs/native_functions.yaml ("sum.dim") or a
 *              prim kind ("prim::Constant")
 *   inputs:    borrowed, n_inputs values of g
 *   n_outputs: the op's number of results (1 for prim::Constant, ...)
 *   out:       nullable; out: borrowed, valid while g lives
 * Returns: YG_ERR_INVALID_ARGUMENT for an unknown kind, an input that is
 *          NULL or not a value of g, or input/output counts the kind does
 *          not take; YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_graph_add_node(yg_graph *g,
                                         const char *kind,
                                         yg_ir_value *const *inputs,
                                         int64_t n_inputs,
                                         int64_t n_outputs,
                                         yg_ir_node **out);

/* Appends prim::Constant[value=t] and returns its output, whose type is
 * t's dtype, device and sizes with requires_grad 0.
 *   g: in-out;  t: borrowed, copied (values only, no history)
 *   out: nullable; out: borrowed, valid while g lives
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL g or t; YG_ERR_DEVICE for a
 *          tensor not on the CPU; YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_graph_add_constant(yg_graph *g, const yg_tensor *t, yg_ir_value **out);

/* Sets the graph outputs (replacing any earlier ones).
 *   g: in-out;  values: borrowed, len values of g (repeats allowed)
 * Returns: YG_ERR_INVALID_ARGUMENT for a NULL entry or a value of another
 *          graph; YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_graph_set_outputs(yg_graph *g, yg_ir_value *const *values, int64_t len);

/* Counts and items.  Each cannot fail; NULL or an index out of range gives
 * 0 / NULL.  Returned pointers are borrowed, valid while g lives. */
int64_t yg_graph_num_inputs(const yg_graph *g);
yg_ir_value *yg_graph_input(const yg_graph *g, int64_t i);
int64_t yg_graph_num_outputs(const yg_graph *g);
yg_ir_value *yg_graph_output(const yg_graph *g, int64_t i);
int64_t yg_graph_num_nodes(const yg_graph *g);
yg_ir_node *yg_graph_first_node(const yg_graph *g);
yg_ir_node *yg_ir_node_next(const yg_ir_node *n);

/* ---- nodes ---- */

/* The node's kind ("mul", "prim::Constant").  Static string.  Cannot
 * fail; NULL gives NULL. */
const char *yg_ir_node_kind(const yg_ir_node *n);
int64_t yg_ir_node_num_inputs(const yg_ir_node *n);
yg_ir_value *yg_ir_node_input(const yg_ir_node *n, int64_t i);
int64_t yg_ir_node_num_outputs(const yg_ir_node *n);
yg_ir_value *yg_ir_node_output(const yg_ir_node *n, int64_t i);

/* Sets attribute name (an identifier [A-Za-z_][A-Za-z0-9_]*) of n,
 * replacing one of the same name.  Lists and strings are copied; a tensor
 * is copied (values only, contiguous, on the CPU); a graph is deep-copied.
 *   n: in-out;  name, values: borrowed
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL n, a malformed name, a NULL
 *          list with len > 0 or a NULL string/tensor/graph; YG_ERR_DEVICE
 *          for a tensor not on the CPU; YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_ir_node_set_int(yg_ir_node *n, const char *name, int64_t value);
YG_NODISCARD yg_status yg_ir_node_set_float(yg_ir_node *n, const char *name, double value);
YG_NODISCARD yg_status yg_ir_node_set_str(yg_ir_node *n, const char *name, const char *value);
YG_NODISCARD yg_status yg_ir_node_set_ints(yg_ir_node *n,
                                           const char *name,
                                           const int64_t *values,
                                           int64_t len);
YG_NODISCARD yg_status yg_ir_node_set_floats(yg_ir_node *n,
                                             const char *name,
                                             const double *values,
                                             int64_t len);
YG_NODISCARD yg_status yg_ir_node_set_tensor(yg_ir_node *n, const char *name, const yg_tensor *t);
YG_NODISCARD yg_status yg_ir_node_set_graph(yg_ir_node *n, const char *name, const yg_graph *sub);

/* Whether n has attribute name; its kind through *kind when it has.
 * Cannot fail; NULL arguments give false. */
bool yg_ir_node_has_attr(const yg_ir_node *n, const char *name, yg_ir_attr_kind *kind);

/* Reads attribute name of n.
 *   out (ints): out: borrowed array of *len entries, valid until the
 *               attribute changes; out (str): borrowed string, same;
 *   out (tensor): out: new ref to a copy;  out (graph): out: borrowed
 * Returns: YG_ERR_INVALID_ARGUMENT when n has no attribute name of that
 *          kind (the message says which kind it has). */
YG_NODISCARD yg_status yg_ir_node_get_int(const yg_ir_node *n, const char *name, int64_t *out);
YG_NODISCARD yg_status yg_ir_node_get_float(const yg_ir_node *n, const char *name, double *out);
YG_NODISCARD yg_status yg_ir_node_get_str(const yg_ir_node *n, const char *name, const char **out);
YG_NODISCARD yg_status yg_ir_node_get_ints(const yg_ir_node *n,
                                           const char *name,
                                           const int64_t **out,
                                           int64_t *len);
YG_NODISCARD yg_status yg_ir_node_get_tensor(const yg_ir_node *n,
                                             const char *name,
                                             yg_tensor **out);
YG_NODISCARD yg_status yg_ir_node_get_graph(const yg_ir_node *n,
                                            const char *name,
                                            const yg_graph **out);

/* ---- values ---- */

/* The value's name without '%' (borrowed, valid until renamed), its type,
 * its defining node (NULL for a graph input) and its number of uses
 * (node inputs and graph outputs).  Cannot fail; NULL gives NULL, the
 * unknown Tensor type, NULL, 0. */
const char *yg_ir_value_name(const yg_ir_value *v);
yg_ir_type yg_ir_value_type(const yg_ir_value *v);
yg_ir_node *yg_ir_value_node(const yg_ir_value *v);
int64_t yg_ir_value_num_uses(const yg_ir_value *v);

/* Sets v's type.  v: in-out;  type: borrowed
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL arguments or an invalid type
 *          (dtype/device out of range, ndim > YG_MAX_DIMS, size < -1). */
YG_NODISCARD yg_status yg_ir_value_set_type(yg_ir_value *v, const yg_ir_type *type);

/* Whether v is a graph input marked as a parameter: a tensor the traced
 * function read without receiving it as an input (weights, buffers).
 * Printed as "param %w : Tensor"; the caller binds it when running the
 * graph like any other input.  Cannot fail; NULL gives false. */
bool yg_ir_value_is_param(const yg_ir_value *v);

/* Marks or unmarks graph input v as a parameter.  v: in-out
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL v or a value that is not a
 *          graph input. */
YG_NODISCARD yg_status yg_ir_value_set_param(yg_ir_value *v, bool is_param);

/* Renames v.  name: [A-Za-z0-9_.]+, not taken by another value of its graph.
 * Returns: YG_ERR_INVALID_ARGUMENT for a malformed or taken name;
 *          YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_ir_value_set_name(yg_ir_value *v, const char *name);

/* ---- text ---- */

/* The text form of g (docs/ir.md), one node per line, ending in "\n".
 *   g: borrowed;  out: out: NUL-terminated, release with yg_string_release
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL arguments; YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_graph_print(const yg_graph *g, char **out);

/* Parses the text form of one graph.
 *   text: borrowed, len bytes (need not be NUL-terminated)
 *   out:  out: new graph
 * Each node is checked against its kind as it is read (input and output
 * counts, attribute names, subgraph arity), so an accepted graph passes
 * yg_graph_lint.
 * Returns: YG_ERR_INVALID_ARGUMENT for malformed text or a NULL out, with
 *          "graph_parse: LINE:COL: <what is wrong>" (1-based, columns in
 *          bytes) pointing at the offending token; YG_ERR_OUT_OF_MEMORY.
 *          On failure *out is NULL. */
YG_NODISCARD yg_status yg_graph_parse(const char *text, int64_t len, yg_graph **out);

/* Frees a string returned by this header.  NULL-safe. */
void yg_string_release(char *s);

/* Renames every value (inputs, then node outputs in order; each subgraph
 * on its own) to 0, 1, 2, ..., so graphs that differ only in value names
 * print the same.  g: in-out.
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL g; YG_ERR_OUT_OF_MEMORY (names
 *          may then be partly changed, the graph stays valid). */
YG_NODISCARD yg_status yg_graph_canonicalize(yg_graph *g);

/* Checks the invariants every pass keeps: each input defined before its
 * use, use lists matching node inputs, outputs defined in g, node outputs
 * pointing back at their node in order, input/output counts matching the
 * op's schema, prim kinds' attributes present; subgraphs checked too.
 *   g: borrowed
 * Returns: YG_ERR_INVALID_ARGUMENT with "graph_lint: <node>: <what>",
 *          naming the node as its text "%y = mul(%a, %b)". */
YG_NODISCARD yg_status yg_graph_lint(const yg_graph *g);

/* ---- passes (docs/ir.md lists what each does and when it holds back) ----
 * Each takes g in-out.  In debug builds (no NDEBUG) yg_graph_lint runs
 * after each pass and a violation is YG_ERR_INTERNAL.  On failure the graph
 * is valid but may be partly transformed. */

/* Removes nodes whose outputs are unused, keeping nodes with side effects:
 * in-place ops (name ending in '_' before any '.'), nodes carrying a str
 * attribute "mutates", and nodes whose subgraphs have either. */
YG_NODISCARD yg_status yg_graph_eliminate_dead_code(yg_graph *g);
/* Merges nodes with the same kind, inputs and attributes, unless they
 * have side effects, hold subgraphs or read a value something mutates. */
YG_NODISCARD yg_status yg_graph_eliminate_common_subexpressions(yg_graph *g);
/* Merges equal prim::Constant nodes (dtype, sizes, bytes) and moves the
 * constants to the start of the graph; mutated constants stay. */
YG_NODISCARD yg_status yg_graph_pool_constants(yg_graph *g);
/* Local rewrites: expand/view/reshape to the same sizes, double t,
 * transpose, neg, unsqueeze+squeeze, x*1, x/1, x+0, x-0, x**1. */
YG_NODISCARD yg_status yg_graph_peephole(yg_graph *g);
/* Computes output dtype, device and sizes from input types for the ops
 * whose rule is simple.  Returns: YG_ERR_SHAPE when known sizes cannot
 * go together, naming the node. */
YG_NODISCARD yg_status yg_graph_propagate_shapes(yg_graph *g);
/* Computes each output's requires_grad from its inputs. */
YG_NODISCARD yg_status yg_graph_propagate_requires_grad(yg_graph *g);
/* Feeds a broadcasting pointwise op the input of an expand when
 * broadcasting gives the same result sizes. */
YG_NODISCARD yg_status yg_graph_remove_unnecessary_expands(yg_graph *g);

/* Evaluates op nodes whose inputs are all constants and replaces them by
 * prim::Constant nodes, unless the node has side effects, reads or makes
 * a value something writes, is random (its schema takes a Generator),
 * fails on those constants (then it stays, with no error), or would make
 * a constant of more than 65536 elements larger than its inputs. */
YG_NODISCARD yg_status yg_graph_propagate_constants(yg_graph *g);

/* Runs passes named in a comma-separated list: "dce", "cse",
 * "constant_pooling", "constant_propagation", "peephole",
 * "shape_propagation", "requires_grad_propagation", "remove_expands".
 * Returns: YG_ERR_INVALID_ARGUMENT for an unknown name (before running
 *          any); the passes' errors. */
YG_NODISCARD yg_status yg_graph_run_passes(yg_graph *g, const char *names);

/* Runs the standard pipeline: shape_propagation, requires_grad_propagation,
 * peephole, remove_expands, constant_propagation, constant_pooling, cse,
 * dce. */
YG_NODISCARD yg_status yg_graph_optimize(yg_graph *g);

/* ---- tracing ---- */

/* A function to trace (docs/ir.md, "Tracing").  It computes its outputs
 * from its inputs with yagrad ops, as it would eagerly.
 *   ctx:       what yg_trace was given (a model's parameters, ...)
 *   inputs:    borrowed, n_inputs example tensors; in-out for in-place ops
 *   outputs:   n_outputs slots, NULL on entry; fn stores a new reference in
 *              each, typically as an op's out-parameter:
 *              `return yg_relu(h, &outputs[0]);`
 * Returns YG_OK, or a failure with its message (yg_trace passes it on,
 * prefixed "trace: "); fn releases what it made, as any caller of ops. */
typedef yg_status (*yg_trace_fn)(void *ctx,
                                 yg_tensor *const *inputs,
                                 int64_t n_inputs,
                                 yg_tensor **outputs,
                                 int64_t n_outputs);

typedef struct yg_trace_options {
    /* false (the default): a composite op (linear, lstm_cell, ...) is one
     * node; true: it is not recorded, the ops it calls are. */
    bool trace_through_composites;
} yg_trace_options;

/* What yg_trace returns.  The result owns every field; to keep one past
 * yg_trace_result_release, take it and set the field to NULL (or the
 * array entry, for tensors). */
typedef struct yg_trace_result {
    /* The graph: inputs are the n_inputs example inputs, in order, then
     * one input per parameter (yg_ir_value_is_param), in order of first
     * use; outputs are fn's outputs. */
    yg_graph *graph;
    /* fn's outputs, computed eagerly while tracing. */
    yg_tensor **outputs;
    int64_t n_outputs;
    /* The tensor behind each parameter input, in graph input order: run
     * the graph on the example inputs followed by these. */
    yg_tensor **params;
    int64_t n_params;
} yg_trace_result;

/* Runs fn once on inputs and records, as a graph, every op it calls on
 * this thread (the outermost call only: what an op does inside is not
 * recorded, nor gradient formulas run by a backward inside fn).  Types
 * carry each tensor's dtype, device, sizes and requires_grad.  Tensors fn
 * reads that no recorded op produced become parameter inputs when they
 * existed before yg_trace began, and prim::Constant nodes (CPU only) when
 * fn made them by other means (yg_tensor_from_data, ...); scalar arguments
 * become attributes.  Writes through yg_tensor_data are not seen.
 *   fn:      the function (non-NULL)
 *   ctx:     nullable, passed to fn
 *   inputs:  borrowed (in-out where fn writes them), n_inputs non-NULL
 *            tensors; a tensor given twice is read as its first input
 *   n_outputs: the number of outputs fn produces (>= 0)
 *   options: nullable, borrowed (NULL: every field false)
 *   out:     out: new result, release with yg_trace_result_release
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL fn, out, inputs or an input,
 *          a negative count, an output fn left NULL, or a call made while
 *          this thread is already tracing ("trace: already tracing on this
 *          thread"); fn's status (message prefixed "trace: ") when fn
 *          fails; the first failure to record an op fn called, even when
 *          fn ignored it and went on: YG_ERR_NOT_IMPLEMENTED for an op
 *          with an argument type the tracer cannot record ("trace: <op>:
 *          argument '<name>' of type <T> cannot be recorded"),
 *          YG_ERR_DEVICE for a constant not on the CPU,
 *          YG_ERR_OUT_OF_MEMORY.  On failure *out is NULL, nothing fn
 *          produced is kept, and the thread is ready to trace again. */
YG_NODISCARD yg_status yg_trace(yg_trace_fn fn,
                                void *ctx,
                                yg_tensor *const *inputs,
                                int64_t n_inputs,
                                int64_t n_outputs,
                                const yg_trace_options *options,
                                yg_trace_result **out);

/* Frees r and whatever its fields still hold.  NULL-safe. */
void yg_trace_result_release(yg_trace_result *r);

/* ---- running ---- */

/* Runs g: calls each node's op (the public yg_<op>, so autograd records
 * history as for eager calls when grad mode is on and an input requires
 * grad) in order, and returns the graph outputs.  Each value is released
 * right after its last use, so a chain holds only the tensors still
 * needed.  In-place nodes write their input, graph inputs included, as the
 * eager call would.  prim::Constant gives the constant's tensor (shared
 * with the graph when no node of g writes memory, else a fresh copy per
 * run; an output that would share a constant's memory is returned as a
 * copy, so writing an output never changes g); prim::None gives NULL.
 * prim::DifferentiableGraph runs f without per-op history and, when grad
 * mode is on and an input with a gradient requires grad, records one
 * autograd node (DifferentiableGraphBackward) whose backward runs df.
 * g is not modified, so several threads may run one graph at once.
 *   g:         borrowed
 *   inputs:    borrowed, n_inputs tensors, one per graph input in order
 *              (NULL exactly where the input's type is None); each must
 *              match its input's type where known: dtype, device, rank,
 *              each size (requires_grad is not checked)
 *   n_inputs:  yg_graph_num_inputs(g)
 *   outputs:   out: n_outputs new refs (NULL for a None output); all NULL
 *              on failure
 *   n_outputs: yg_graph_num_outputs(g)
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL g/inputs/outputs or counts
 *          that do not match ("interpreter: graph has 2 inputs, got 1"), a
 *          NULL input of Tensor type; YG_ERR_DTYPE, YG_ERR_DEVICE,
 *          YG_ERR_SHAPE for an input that does not match its type
 *          ("interpreter: input 0 %x: expected sizes [2, ?], got [3, 4]");
 *          YG_ERR_NOT_IMPLEMENTED for nodes it cannot run yet
 *          (ops with an
 *          argument type the boxed tables do not support:
 *          "interpreter: <op>: argument '<name>' of type <T> is not
 *          supported"); an op's own error, prefixed with the node
 *          ("interpreter: %y = mm(%a, %b): mm: ..."). */
YG_NODISCARD yg_status yg_graph_run(const yg_graph *g,
                                    yg_tensor *const *inputs,
                                    int64_t n_inputs,
                                    yg_tensor **outputs,
                                    int64_t n_outputs);

/* ---- autodiff (docs/ir.md, "Autodiff and the executor") ---- */

/* A graph's gradient as two graphs.  Run f on g's inputs: its first
 * n_outputs outputs are g's, the rest are intermediates df reads.  Run df
 * on the gradients of g's n_outputs outputs followed by the n_captures
 * captured values: it returns one gradient per input of g that requires
 * grad (a None output when no gradient reaches it).  Every field is owned
 * by the yg_gradient. */
typedef struct yg_gradient {
    yg_graph *f;
    yg_graph *df;
    int64_t n_inputs;   /* g's inputs (f's inputs) */
    int64_t n_outputs;  /* g's outputs: f's first outputs, df's first inputs */
    int64_t n_captures; /* df's inputs after the gradients */
    /* Per capture: the f input index i (>= 0) or, as -1 - j, the f
     * output j it is. */
    int64_t *captures;
    /* Per input of g: the df output holding its gradient, -1 when the
     * input does not require grad. */
    int64_t *grad_of_input;
} yg_gradient;

/* Builds g's gradient from the graph derivatives, which gen generates
 * from the same specs/derivatives.yaml formulas as the eager backward
 * nodes.  Gradients are built only for inputs that require grad and only
 * through nodes that need them; a gradient of a broadcast input is summed
 * to its size (sum_to) as in eager mode.
 *   g:             borrowed; values whose formulas read sizes need static
 *                  sizes (set input types and run yg_graph_propagate_shapes)
 *   requires_grad: nullable, borrowed, one per input of g (NULL: each
 *                  input's type's requires_grad == 1)
 *   out:           out: release with yg_gradient_release
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL g or out; YG_ERR_NOT_IMPLEMENTED
 *          for a node on a gradient path that has no graph derivative
 *          (an in-place op, a composite op, an entry marked
 *          `graph_grad: not_implemented`) or whose formula needs sizes the
 *          graph does not know: "autodiff: %y = mm(%a, %b): <why>";
 *          YG_ERR_OUT_OF_MEMORY.  On failure *out is NULL. */
YG_NODISCARD yg_status yg_graph_differentiate(const yg_graph *g,
                                              const bool *requires_grad,
                                              yg_gradient **out);

/* Frees g and its graphs.  NULL-safe. */
void yg_gradient_release(yg_gradient *g);

/* Merges maximal regions of differentiable nodes (ops with a graph
 * derivative whose formulas' metadata the graph knows, and ops whose
 * outputs carry no gradient) into prim::DifferentiableGraph nodes with
 * attributes f and df (yg_gradient's graphs), captures, grad_of_input and
 * n_grad_outputs (int lists / int).  A node joins only when no path
 * leaves and re-enters the region (no cycle), it writes no memory and no
 * value it reads is written by any node (in-place ops and their aliases
 * stay outside).  Regions of fewer than min_size differentiable op nodes
 * are left as they were.  requires_grad: as for yg_graph_differentiate
 * (NULL: from the input types).  A region's node outputs are its outputs
 * used after it followed by the intermediates df captures.
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL g or min_size < 1;
 *          YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_graph_create_autodiff_subgraphs(yg_graph *g,
                                                          const bool *requires_grad,
                                                          int64_t min_size);

/* Replaces each node of a composite op (one written with other ops, with
 * no derivative entry of its own: linear, lstm_cell, reshape, ...) whose
 * inputs' dtype, device (CPU) and sizes are all known by the ops it calls,
 * found by tracing it once through its composite on zero tensors of those
 * types, so autodiff can differentiate through it as eager autograd does.
 * Nodes it cannot decompose (types unknown, an input of more than 2^24
 * elements, parts that depend on the inputs' memory layout, the composite
 * reads tensors it did not receive) stay.  g: in-out.
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL g; YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_graph_decompose_composites(yg_graph *g);

/* Puts the nodes of each prim::DifferentiableGraph whose f has fewer than
 * min_size op nodes back into g in its place (their gradients then come
 * from eager autograd of each op), so a later pass can undo regions too
 * small to pay for their bookkeeping.  g: in-out.
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL g or min_size < 1;
 *          YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_graph_inline_autodiff_subgraphs(yg_graph *g, int64_t min_size);

/* ---- the fuser ---- */

/* Merges runs of pointwise op nodes (ops with a `pointwise:` expression in
 * specs/native_functions.yaml) over one floating dtype into
 * prim::FusionGroup nodes (attribute subgraph), which run as one kernel
 * generated from those expressions, compiled by the system C compiler and
 * loaded with dlopen, or, when the group's inputs are on a GPU, compiled
 * by NVRTC and launched there (docs/ir.md, "The fuser").  A node joins when its
 * dtype and its inputs' dtypes are known and equal (float32 or float64),
 * it writes no memory and reads or makes no value anything writes; a run
 * needs two such nodes.  A `cat` of values of the run joins as an exit
 * (written in place); a softmax, log_softmax, sum or affine layer_norm
 * over the last dim of a value of the run ends it as a reduction anchor.
 * A group has at most 16 inputs and writes at most 16 values.  Runs
 * yg_graph_propagate_shapes first (dtypes decide).  g: in-out.
 * Environment at run time: YG_FUSER_CC (the compiler; default: the one
 * that built yagrad), YG_FUSER_CACHE_DIR (the disk cache; default
 * $XDG_CACHE_HOME/yagrad/fuser or ~/.cache/yagrad/fuser), YG_FUSER_DUMP
 * (a folder to write every kernel's source to).  A group whose inputs
 * are on two devices fails when it runs, as an op would (YG_ERR_DEVICE,
 * naming both).
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL g; shape propagation's errors;
 *          YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_graph_fuse(yg_graph *g);

/* What the fuser did in this process. */
typedef struct yg_fuser_stats {
    int64_t kernels_compiled;  /* compiler runs that made a kernel */
    int64_t disk_cache_hits;   /* kernels loaded from the disk cache */
    int64_t memory_cache_hits; /* kernels found already loaded */
    int64_t fallbacks;         /* group runs that used the interpreter
                                  because no kernel could be made */
    char last_fallback[512];   /* why, for the last one ("" if none) */
    /* Groups whose inputs are on a GPU run a CUDA kernel compiled by NVRTC
     * for the device (PTX, loaded with the driver API).  The counters
     * above count the CPU's kernels; these the GPU's. */
    int64_t cuda_kernels_compiled;  /* NVRTC runs that made PTX */
    int64_t cuda_disk_cache_hits;   /* PTX read from the disk cache */
    int64_t cuda_memory_cache_hits; /* PTX or a loaded kernel already in
                                       this process (another graph, or
                                       yg_fuser_cuda_ptx, made it) */
    int64_t cuda_launches;          /* fused kernels launched on a GPU */
} yg_fuser_stats;

/* The fuser's counters.  Cannot fail. */
yg_fuser_stats yg_fuser_get_stats(void);

/* The CUDA form of the kernel of the group-th prim::FusionGroup of g (in
 * node order) and, compiled by NVRTC for arch ("compute_80"), its PTX:
 * what the group runs when its inputs are on a GPU (for the device's
 * architecture), through the same caches (it counts in yg_fuser_stats'
 * cuda_ fields).  Needs no GPU: the toolkit's ptxas can check the PTX.
 *   g: borrowed (fused: yg_graph_fuse);  arch: borrowed
 *   source, ptx: out: release with yg_string_release
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL arguments, no such group, or
 *          NVRTC's error log ("fuser: NVRTC failed for compute_80: ...");
 *          YG_ERR_NOT_IMPLEMENTED when NVRTC is not there (yagrad built
 *          without the CUDA toolkit, or the library cannot be loaded): then
 *          *source is still set and *ptx is NULL; YG_ERR_OUT_OF_MEMORY.
 *          On other failures both are NULL. */
YG_NODISCARD yg_status yg_fuser_cuda_ptx(const yg_graph *g,
                                         int64_t group,
                                         const char *arch,
                                         char **source,
                                         char **ptx);

/* ---- the graph executor ---- */

typedef struct yg_executor yg_executor;

typedef struct yg_executor_options {
    /* The smallest region made a prim::DifferentiableGraph (0: 2). */
    int64_t autodiff_min_size;
    /* true: run the graph as given (no optimisation passes). */
    bool no_optimize;
    /* true: key plans on every input's sizes even without gradients
     * (they always are when a gradient is needed). */
    bool specialize_sizes;
    /* true: no fusion groups (yg_graph_fuse) in the plans. */
    bool no_fuse;
    /* The most plans kept (0: 64); a new plan evicts the least recently
     * used one.  Negative is refused. */
    int64_t max_plans;
} yg_executor_options;

typedef struct yg_executor_stats {
    int64_t runs;        /* yg_executor_run calls that found or built a plan */
    int64_t hits;        /* plan-cache hits */
    int64_t misses;      /* calls that built a plan */
    int64_t plans;       /* plans in the cache */
    int64_t inlined;     /* runs while tracing (the graph inlined) */
    int64_t evictions;   /* plans dropped to keep the cache at max_plans */
    int64_t max_plans;   /* the cache's bound */
} yg_executor_stats;

/* An executor for a copy of g.  Each run computes an argument spec (grad
 * mode; per input: defined, requires_grad, dtype, device, rank,
 * contiguity; sizes when a gradient is needed or specialize_sizes) and
 * runs the plan built for that spec: a copy of g with the spec's types,
 * optimised (yg_graph_optimize) and, when a gradient is needed, with its
 * differentiable regions made prim::DifferentiableGraph nodes, whose
 * backward runs their df graph as one autograd node; then pointwise runs
 * are fused (yg_graph_fuse) in the graph and in each region's f and df.
 * Plans are built once per spec and kept, up to options' max_plans (64 by
 * default): past it the least recently used plan is dropped.
 *   g: borrowed (copied);  options: nullable, borrowed (NULL: defaults)
 *   out: out: release with yg_executor_release
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL g or out, or a graph that does
 *          not pass yg_graph_lint; YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_executor_create(const yg_graph *g,
                                          const yg_executor_options *options,
                                          yg_executor **out);

/* Frees e and its plans.  NULL-safe; e must not be running. */
void yg_executor_release(yg_executor *e);

/* Runs e's graph on inputs.  Thread-safe: several threads may run one
 * executor at once.  While this thread is tracing (yg_trace), the graph's
 * ops run one by one, so the outer trace records them (the graph is
 * inlined).  Outputs carry autograd history as eager calls would.
 *   inputs:  borrowed, n_inputs tensors (NULL exactly for None inputs)
 *   outputs: out: n_outputs new refs; all NULL on failure
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL arguments or counts that do not
 *          match ("executor: graph has 2 inputs, got 1"); YG_ERR_DTYPE,
 *          YG_ERR_DEVICE, YG_ERR_SHAPE for an input that does not match the
 *          graph's input type ("executor: input 0 %x: expected dtype
 *          float32, got float64"); a plan's or an op's error. */
YG_NODISCARD yg_status yg_executor_run(yg_executor *e,
                                       yg_tensor *const *inputs,
                                       int64_t n_inputs,
                                       yg_tensor **outputs,
                                       int64_t n_outputs);

/* Counters.  Cannot fail; NULL e gives zeros. */
yg_executor_stats yg_executor_get_stats(const yg_executor *e);

/* Debug state as text (release with yg_string_release): the plan graph
 * the last run on any thread used, or every plan with its spec ("spec:
 * grad=1 inputs=[float32 cpu [2, 3] requires_grad contiguous, ...]"
 * followed by the plan's graph).
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL arguments or no run yet;
 *          YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_executor_last_graph(yg_executor *e, char **out);
YG_NODISCARD yg_status yg_executor_dump_plans(yg_executor *e, char **out);

/* ---- dumps ---- */

/* g as JSON (the format of tools/ir_graph.schema.json: inputs, nodes with
 * attributes, edges, outputs, types; subgraphs nested) or as a Graphviz
 * digraph (subgraphs as clusters).
 *   g: borrowed;  out: out: NUL-terminated, release with yg_string_release
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL arguments; YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_graph_to_json(const yg_graph *g, char **out);
YG_NODISCARD yg_status yg_graph_to_dot(const yg_graph *g, char **out);

#ifdef __cplusplus
}
#endif
#endif /* YAGRAD_JIT_H */
