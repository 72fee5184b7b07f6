/*
 * boxing.h - calling an op from a graph node: the generated boxed-op table
 * (generated/boxed/) and the attribute readers its functions use.  Private
 * to runtime/jit/ and the generated code.
 *
 * yg__boxed_ops[] is parallel to yg__ops[] (same index, same order): the
 * entry of op i unpacks a node's tensor inputs and attributes into the C
 * arguments of the public yg_<op> function and calls it.  A node names
 * its non-tensor arguments as attributes (docs/ir.md); an attribute left
 * out means the schema's default, and an argument without a default must
 * be present.  Each reader below checks the attribute's kind and fails
 * with "<op>: attribute '<name>' must be ..." otherwise (the interpreter
 * prefixes the node).
 *
 * Ops whose signature uses a type gen cannot box yet have a NULL fn and a
 * reason ("argument 'generator' of type Generator? is not supported"),
 * which the interpreter reports as "interpreter: <op>: <reason>".
 */
#ifndef YAGRAD_JIT_BOXING_H
#define YAGRAD_JIT_BOXING_H

#include "jit/ir/ir.h"
#include "yagrad/enums.h" /* the yg_<enum>_name functions yg__box_enum takes */

#include <stdbool.h>
#include <stdint.h>

/* Calls node's op.
 *   node:    borrowed; an op node (node->op is its yg__ops entry)
 *   in:      borrowed, n_in tensors: the node's inputs in order, NULL
 *            for a None input
 *   out:     node->n_outputs slots; each receives a new reference
 * On failure every out slot is NULL and the op's message is set. */
typedef yg_status
yg_boxed_impl(const yg_ir_node *node, yg_tensor *const *in, int32_t n_in, yg_tensor **out);
typedef yg_boxed_impl *yg_boxed_fn;

typedef struct yg_boxed_op {
    const char *name;        /* the op's table name, as in yg__ops[] */
    yg_boxed_fn fn;          /* NULL when the op cannot be boxed */
    const char *unsupported; /* why fn is NULL; NULL when it is not */
} yg_boxed_op;

/* generated/boxed/table.c: one entry per yg__ops[] entry, same index;
 * the functions are declared in generated/boxed/boxed.h. */
extern const yg_boxed_op yg__boxed_ops[];
extern const int32_t yg__boxed_ops_count;

/* The entry of an op node's op.  Cannot fail (node->op must be set). */
const yg_boxed_op *yg__boxed_op_of(const yg_ir_node *node);

/* ---- attribute readers (boxing.c) ----
 * Each reads attribute name of node.  dflt is the schema's default (NULL:
 * the argument has none, so the attribute is required, except for the
 * nullable readers, where an absent attribute without default is None).
 * Returns YG_ERR_INVALID_ARGUMENT naming the op and the attribute when it
 * is missing or of the wrong kind. */

/* int: an int attribute (or a float holding a whole number). */
yg_status yg__box_int(const yg_ir_node *node, const char *name, const int64_t *dflt, int64_t *out);

/* int?: *out points at buf holding the value, or is NULL for None. */
yg_status yg__box_int_opt(const yg_ir_node *node,
                          const char *name,
                          const int64_t *dflt,
                          int64_t *buf,
                          const int64_t **out);

/* float, Scalar: an int or float attribute. */
yg_status yg__box_double(const yg_ir_node *node, const char *name, const double *dflt, double *out);

/* float?, Scalar?: *out points at buf, or is NULL for None. */
yg_status yg__box_double_opt(const yg_ir_node *node,
                             const char *name,
                             const double *dflt,
                             double *buf,
                             const double **out);

/* bool: an int attribute that is 0 or 1. */
yg_status yg__box_bool(const yg_ir_node *node, const char *name, const bool *dflt, bool *out);

/* An int list read from a node: items points into the node's attribute,
 * into the default or into buf (a single int attribute stands for a
 * one-element list, or for int[N] for N copies; gen allows N <= 64). */
typedef struct yg_box_ints {
    const int64_t *items; /* borrowed while the node lives */
    int64_t len;
    int64_t buf[64];
} yg_box_ints;

/* dflt_len for an int list without a default. */
#define YG_BOX_REQUIRED (-1)

/* int[] / int[N]: an int list (or a single int).  dflt_len is
 * YG_BOX_REQUIRED when the argument has no default.  fixed_len 0 means
 * int[]; otherwise the list must have that length. */
yg_status yg__box_ints(const yg_ir_node *node,
                       const char *name,
                       const int64_t *dflt,
                       int64_t dflt_len,
                       int32_t fixed_len,
                       yg_box_ints *out);

/* bool[N]: an int list of N entries, each 0 or 1, written into buf. */
yg_status yg__box_bools(const yg_ir_node *node,
                        const char *name,
                        const bool *dflt,
                        int32_t fixed_len,
                        bool *buf);

/* str: *out is borrowed from the node (or is dflt). */
yg_status yg__box_str(const yg_ir_node *node, const char *name, const char *dflt, const char **out);

/* An enum argument (yagrad/enums.h): a str attribute naming one of its
 * values, names being the enum's yg_<enum>_name; *out is the value's
 * number.  dflt (NULL: required) when the attribute is absent. */
yg_status yg__box_enum(const yg_ir_node *node,
                       const char *name,
                       const char *(*names)(int64_t),
                       const int64_t *dflt,
                       int64_t *out);

/* ScalarType: an int attribute holding a yg_dtype, or a str attribute
 * naming one ("float32"). */
yg_status yg__box_dtype(const yg_ir_node *node, const char *name, yg_dtype *out);

/* ScalarType?: *out points at buf, or is NULL when absent (None). */
yg_status
yg__box_dtype_opt(const yg_ir_node *node, const char *name, yg_dtype *buf, const yg_dtype **out);

/* Device: an int attribute holding a yg_device (the tracer records the
 * enum value). */
yg_status yg__box_device(const yg_ir_node *node, const char *name, yg_device *out);

/* Device?: *out points at buf, or is NULL when absent (None). */
yg_status yg__box_device_opt(const yg_ir_node *node,
                             const char *name,
                             yg_device *buf,
                             const yg_device **out);

/* A list return (`-> Tensor[]`): moves the op's len results in items into
 * the node's output slots and frees the array.  When len differs from the
 * node's output count (the graph was recorded for other sizes), releases
 * everything and fails naming the op and both counts. */
yg_status yg__box_list_out(const yg_ir_node *node, yg_tensor **items, int64_t len, yg_tensor **out);

#endif /* YAGRAD_JIT_BOXING_H */
