/*
 * passes.h - the graph passes the exporter runs on its copy of the graph
 * before the symbolics, one file each (docs/onnx.md lists what each does
 * and when it holds back).  Each takes g in-out and leaves it valid; they
 * are internal (the tests call them on parsed IR).
 */
#ifndef YAGRAD_ONNX_PASSES_H
#define YAGRAD_ONNX_PASSES_H

#include "jit/ir/ir.h"

/* pass_broadcast.c: an expand feeding an ONNX-broadcasting op (add, sub,
 * mul, div, pow, where, comparisons, and addmm's self, Gemm's C) is
 * bypassed when the expanded input's sizes are a suffix of the expanded
 * sizes (ONNX's multidirectional broadcast then gives the same result,
 * and unidirectional for Gemm's C). */
yg_status yg__onnx_fuse_broadcast(yg_graph *g);

/* pass_peephole.c: removes what is the identity in ONNX terms: expand
 * and view/reshape to the input's own sizes, t(t(x)), contiguous, clone,
 * dropout with train=0, to/to_copy/type_as to the dtype the input has;
 * in graphs without side effects only. */
yg_status yg__onnx_peephole(yg_graph *g);

/* pass_fold.c: nodes that depend only on parameters (the n tensors of
 * params, in the order of g's parameter inputs) and constants are run
 * and become prim::Constant nodes, unless a result is larger than its
 * inputs together.  params NULL: parameters are not constants. */
yg_status yg__onnx_fold_constants(yg_graph *g, yg_tensor *const *params, int64_t n);

/* pass_cast.c: every value input of a pointwise or broadcasting op whose
 * dtype is not the promoted dtype of the op's tensor inputs is cast to it
 * (a to.dtype node, which exports as Cast): ONNX's elementwise operators
 * take one type, yagrad's ops promote. */
yg_status yg__onnx_insert_casts(yg_graph *g);

/* pass_dce.c: removes nodes whose outputs nothing reads (the IR's dead
 * code elimination, which keeps side effects). */
yg_status yg__onnx_eliminate_dead_code(yg_graph *g);

/* Runs shape propagation (yg_graph_propagate_shapes) to fill the types
 * g does not know (types it knows are kept), then in order: peephole,
 * constant folding (over params, as yg__onnx_fold_constants), broadcast
 * fusion, Cast insertion, DCE. */
yg_status yg__onnx_run_passes(yg_graph *g, yg_tensor *const *params, int64_t n_params);

#endif /* YAGRAD_ONNX_PASSES_H */
