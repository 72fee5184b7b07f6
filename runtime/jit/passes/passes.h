/*
 * passes.h - what the graph passes share: the mutation (alias) analysis,
 * type helpers and small attribute readers.  Private to runtime/jit/.
 *
 * Every pass is one file in this directory with one public entry point in
 * yagrad/jit.h (yg_graph_<verb>); pipeline.c runs them by name.  Passes
 * work on a valid graph (yg_graph_lint holds before) and keep it valid;
 * in debug builds the entry points lint after the pass.
 */
#ifndef YAGRAD_JIT_PASSES_H
#define YAGRAD_JIT_PASSES_H

#include "jit/ir/ir.h"

#include <stdbool.h>
#include <stdint.h>

/* Marks every value of g (not of its subgraphs) that a node of g may
 * write: sets v->scratch to 1 for values in an alias class (views and
 * in-place results join the class of their self input) written by an
 * in-place op, or read by a node with a "mutates" attribute or a
 * side-effecting subgraph; 0 for the rest.  *any says whether g has a
 * side-effecting node at all.  Fails only when out of memory. */
yg_status yg__pass_mark_mutated(yg_graph *g, const char *pass, bool *any);

/* Whether g has a node with side effects (yg__ir_node_has_side_effects). */
bool yg__pass_has_side_effects(const yg_graph *g);

/* Whether t is a tensor type whose rank and every size are known. */
bool yg__pass_sizes_known(const yg_ir_type *t);

/* Whether two tensor types have the same known rank and sizes. */
bool yg__pass_same_known_sizes(const yg_ir_type *a, const yg_ir_type *b);

/* Broadcasts b into *acc (NumPy rules) with unknown sizes allowed: an
 * unknown rank makes the result rank unknown; an unknown dim against a
 * known dim other than 1 gives that dim.  Returns false (and leaves *acc
 * unspecified) when two known dims differ and neither is 1. */
bool yg__pass_broadcast(yg_ir_type *acc, const yg_ir_type *b);

/* The int / int-list attribute name of n, or dflt when absent.  An int
 * list attribute read as a list; an int read as a one-element list. */
int64_t yg__pass_int_attr(const yg_ir_node *n, const char *name, int64_t dflt);
bool yg__pass_ints_attr(const yg_ir_node *n,
                        const char *name,
                        int64_t *out,
                        int32_t cap,
                        int32_t *len);

/* Whether n is a node of the op whose id (op_ids.h, YG_OP_<op>) is id:
 * callers name ops in C, so a misspelt one does not compile. */
bool yg__pass_is(const yg_ir_node *n, int32_t id);

/* The tensor value v holds when it is a constant to fold with (borrowed),
 * or NULL (constant_propagation.c). */
typedef const yg_tensor *(*yg_pass_constant_fn)(const yg_ir_value *v, void *ctx);
/* prim::Constant values: yg_graph_propagate_constants's notion. */
const yg_tensor *yg__pass_constant_value(const yg_ir_value *v, void *ctx);
/* Constant propagation over g where constant(v, ctx) says which values
 * are constants; folded results become prim::Constant nodes.  A result
 * of more than max_growth elements and more than its inputs together is
 * not folded (yg_graph_propagate_constants: 65536; 0 folds only what
 * does not grow, so never a creation op). */
yg_status
yg__pass_fold_constants(yg_graph *g, yg_pass_constant_fn constant, void *ctx, int64_t max_growth);

/* Whether the constant node's tensor has every element equal to v. */
bool yg__pass_constant_all(const yg_ir_node *n, double v);

/* Replaces node n of g by a copy of sub's nodes, placed where n was:
 * sub's input i stands for map[i] (a value of g), and each use of n's
 * output i reads the copy of sub's output i, typed as n's output was.
 * The copies' other types keep their sizes with requires_grad unknown.
 * Writes the scratch of sub's values.  On failure g is valid with n in
 * place (some copies may be left unused). */
yg_status yg__pass_inline(yg_graph *g, yg_ir_node *n, const yg_graph *sub, yg_ir_value **map);

/* Outlining a region (a run of nodes of one graph, in order):
 *   yg__pass_outline: a new graph holding copies of the nodes, with the
 *     values they read from outside as inputs (first-use order) and their
 *     values used outside as outputs, named and typed as in the region's
 *     graph.  Uses the nodes' scratch (left 0).
 *   yg__pass_holder: a node of kind with n_outputs outputs inserted before
 *     `before`, whose inputs are the values of g that sub's inputs name.
 *   yg__pass_replace_region: moves every use of the value sub's output k
 *     names to h's output k (which takes that value's scratch), then
 *     removes the region's nodes.
 * Each fails only when out of memory (replace_region may leave uses
 * moved; the graph stays valid). */
yg_status yg__pass_outline(yg_ir_node *const *nodes, int32_t len, yg_graph **sub);
yg_status yg__pass_holder(yg_graph *g, const char *kind, const yg_graph *sub, int32_t n_outputs,
                          yg_ir_node *before, yg_ir_node **out);
yg_status yg__pass_replace_region(yg_graph *g, yg_ir_node *const *nodes, int32_t len,
                                  const yg_graph *sub, yg_ir_node *h);

/* Shape propagation of one node (shape_propagation.c): its outputs'
 * types from its inputs' where a rule knows them.  Returns YG_ERR_SHAPE
 * when known sizes cannot go together. */
yg_status yg__shape_propagate_node(yg_ir_node *n);

#endif /* YAGRAD_JIT_PASSES_H */
