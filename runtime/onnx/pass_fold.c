/*
 * pass_fold.c - constant folding for export: a node that depends only on
 * parameters and constants (t(w), w * 0.5, reshape(w, ...), a chain of
 * them) runs once now, and the model holds its result as an initializer
 * instead of the node and the parameter it read, as PyTorch's exporter
 * does with do_constant_folding.  It is the IR's constant propagation
 * (jit/passes/constant_propagation.c: no side effects, no random ops,
 * nothing written) with parameters counted as constants, and with no
 * growth: a result larger than its inputs together (an expand, a repeat,
 * a creation op, whose size may be a dynamic axis at trace time) stays a
 * node.  Parameters exported as model inputs (params_as_inputs) are not
 * constants.  A parameter whose tensor does not match its input's type is
 * not folded; the export then reports it.
 */
#include "jit/passes/passes.h"
#include "onnx/passes.h"
#include "yagrad/tensor.h"

typedef struct params {
    const yg_graph *g;
    yg_tensor *const *items;
    int64_t n;
} params;

/* Whether t is what v's type says (CPU, dtype, sizes). */
static bool matches(const yg_ir_value *v, const yg_tensor *t) {
    const yg_ir_type *ty = &v->type;
    if (t == NULL || yg_tensor_device(t) != YG_CPU || ty->kind != YG_IR_TYPE_TENSOR ||
        ty->dtype != (int32_t)yg_tensor_dtype(t) || ty->ndim != yg_tensor_ndim(t))
        return false;
    for (int32_t d = 0; d < ty->ndim; d++)
        if (ty->sizes[d] != yg_tensor_sizes(t)[d])
            return false;
    return true;
}

static const yg_tensor *param_or_constant(const yg_ir_value *v, void *ctx) {
    const params *p = ctx;
    if (!v->is_param)
        return yg__pass_constant_value(v, NULL);
    int64_t k = 0;
    for (int64_t i = 0; i < yg_graph_num_inputs(p->g); i++) {
        const yg_ir_value *in = yg_graph_input(p->g, i);
        if (in == v)
            return k < p->n && matches(v, p->items[k]) ? p->items[k] : NULL;
        k += in->is_param;
    }
    return NULL;
}

yg_status yg__onnx_fold_constants(yg_graph *g, yg_tensor *const *items, int64_t n) {
    params p = {g, items, n};
    return yg__pass_fold_constants(g, param_or_constant, &p, 0);
}
