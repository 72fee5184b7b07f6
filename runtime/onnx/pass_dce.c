/*
 * pass_dce.c - dead code elimination for export.  The IR's own pass
 * (runtime/jit/passes/dce.c) does what export needs: it removes nodes
 * nothing reads and keeps in-place and "mutates" nodes, which the
 * symbolics then refuse by name, so the user learns of them rather than
 * getting a model that silently drops a write.  After the peephole and
 * broadcast fusion it sweeps the expands and no-ops they bypassed, and
 * the constants constant folding read.
 * The file also holds the pass order (yg__onnx_run_passes) and the
 * type filling that precedes them.
 */
#include "core/core.h"
#include "onnx/passes.h"

#include <stdlib.h>

yg_status yg__onnx_eliminate_dead_code(yg_graph *g) {
    return yg_graph_eliminate_dead_code(g);
}

/* Shape propagation that only fills what the graph does not know: a
 * trace's types are what the ops computed, while propagation's rules
 * may differ from a kernel (they said bool for sum of bools, which is
 * int64), and ONNX types must be the real ones.  Known fields win. */
static yg_status fill_unknown_types(yg_graph *g) {
    int64_t n = 0, k = 0;
    for (yg_ir_node *m = g->first; m != NULL; m = m->next)
        n += m->n_outputs;
    yg_ir_type *saved = malloc((size_t)(n > 0 ? n : 1) * sizeof *saved);
    if (saved == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "onnx_export: out of memory");
    for (yg_ir_node *m = g->first; m != NULL; m = m->next)
        for (int32_t i = 0; i < m->n_outputs; i++)
            saved[k++] = m->outputs[i]->type;
    yg_status st = yg_graph_propagate_shapes(g);
    k = 0;
    for (yg_ir_node *m = g->first; m != NULL && st == YG_OK; m = m->next) {
        for (int32_t i = 0; i < m->n_outputs; i++) {
            const yg_ir_type *old = &saved[k++];
            yg_ir_type *t = &m->outputs[i]->type;
            if (old->kind != YG_IR_TYPE_TENSOR || t->kind != YG_IR_TYPE_TENSOR)
                continue;
            if (old->dtype != YG_IR_UNKNOWN)
                t->dtype = old->dtype;
            if (old->device != YG_IR_UNKNOWN)
                t->device = old->device;
            if (old->requires_grad != YG_IR_UNKNOWN)
                t->requires_grad = old->requires_grad;
            if (old->ndim != YG_IR_UNKNOWN) {
                if (t->ndim != old->ndim)
                    *t = *old;
                for (int32_t d = 0; d < old->ndim; d++)
                    if (old->sizes[d] != YG_IR_UNKNOWN)
                        t->sizes[d] = old->sizes[d];
            }
        }
    }
    free(saved);
    return st;
}

yg_status yg__onnx_run_passes(yg_graph *g, yg_tensor *const *params, int64_t n_params) {
    /* Types first: a graph built by hand or parsed from text may leave
     * them unknown, and ONNX needs each output's element type. */
    YG_RETURN_IF_ERROR(fill_unknown_types(g));
    YG_RETURN_IF_ERROR(yg__onnx_peephole(g));
    YG_RETURN_IF_ERROR(yg__onnx_fold_constants(g, params, n_params));
    YG_RETURN_IF_ERROR(yg__onnx_fuse_broadcast(g));
    YG_RETURN_IF_ERROR(yg__onnx_insert_casts(g));
    return yg__onnx_eliminate_dead_code(g);
}
