/*
 * autodiff.h - what the graph autodiff files share: differentiate
 * (autodiff.c), the autodiff subgraph passes (passes/autodiff_subgraphs.c)
 * and the prim::DifferentiableGraph runtime (diff_graph.c).  Not public
 * API; yagrad/jit.h has yg_graph_differentiate and the passes.
 */
#ifndef YAGRAD_JIT_AUTODIFF_H
#define YAGRAD_JIT_AUTODIFF_H

#include "jit/ir/ir.h"
#include "jit/autodiff/graph_grad.h"

#include <stdbool.h>
#include <stdint.h>

/* The graph_grad-table entry of an op node (NULL for a prim node). */
const yg_graph_grad_op *yg__graph_grad_of(const yg_ir_node *n);

/* Runs a prim::DifferentiableGraph node (interpreter.c calls it): f
 * without recording, then, when grad mode is on and an input requires
 * grad, one autograd node whose backward runs df.
 *   in: borrowed, n->n_inputs;  out: n->n_outputs new refs */
yg_status yg__diff_graph_run(const yg_ir_node *n, yg_tensor *const *in, yg_tensor **out);

/* yg_graph_decompose_composites; with on_grad_paths, only nodes with an
 * input whose type says it requires grad (the rest keep their composite's
 * fused fast paths). */
yg_status yg__decompose_composites(yg_graph *g, bool on_grad_paths);

#endif /* YAGRAD_JIT_AUTODIFF_H */
