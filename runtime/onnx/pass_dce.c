/*
 * pass_dce.c - dead code elimination for export.  The IR's own pass
 * (runtime/jit/passes/dce.c) does what export needs: it removes nodes
 * nothing reads and keeps in-place and "mutates" nodes, which the
 * symbolics then refuse by name, so the user learns of them rather than
 * getting a model that silently drops a write.  After the peephole and
 * broadcast fusion it sweeps the expands and no-ops they bypassed.
 */
#include "onnx/passes.h"

yg_status yg__onnx_eliminate_dead_code(yg_graph *g) {
    return yg_graph_eliminate_dead_code(g);
}

yg_status yg__onnx_run_passes(yg_graph *g) {
    /* Types first: a graph built by hand or parsed from text may leave
     * them unknown, and ONNX needs each output's element type. */
    YG_RETURN_IF_ERROR(yg_graph_propagate_shapes(g));
    YG_RETURN_IF_ERROR(yg__onnx_peephole(g));
    YG_RETURN_IF_ERROR(yg__onnx_fuse_broadcast(g));
    return yg__onnx_eliminate_dead_code(g);
}
