/*
 * constant_propagation.c - evaluates nodes whose inputs are all constants
 * and replaces them with prim::Constant nodes holding the results.
 *
 * A node is folded when it is an op (not a prim), every input is the
 * output of a prim::Constant (or prim::None for an absent `Tensor?`; the
 * ONNX exporter also counts parameters, yg__pass_fold_constants), and
 * evaluating it now gives what running it later would:
 *   - it has no side effects (not in place, no "mutates" attribute), and
 *     neither its inputs nor its outputs are in an alias class something
 *     writes (yg__pass_mark_mutated): a write between here and the node
 *     would change what it reads;
 *   - it is not random: an op whose schema takes a `Generator` argument
 *     (PyTorch's mark of a random op, e.g. `Generator? generator`) draws
 *     new numbers on every run, so folding it would freeze one draw;
 *   - its boxed form exists (generated/boxed/).
 * The op runs through the same boxed table as the interpreter, with grad
 * mode off (constants never require grad).  An op that fails on these
 * constants (mm of mismatched sizes, say) is left in place and the pass
 * goes on without an error: the graph fails when run, as it would have,
 * and this thread's last error message is restored.  A result with more
 * than 65536 elements and more elements than all inputs together is not
 * folded either (expand of a scalar to a large shape would copy the whole
 * expansion into the graph); when shape propagation already knows the
 * result's sizes, such a node is not even evaluated, and otherwise the
 * evaluation runs under a per-block allocation limit of that size, so a
 * graph asking for a huge result costs nothing.
 *
 * Nodes are visited in order, so a chain on constants folds completely
 * in one pass.  The replaced constants keep their value names; the
 * constants that fed them stay until dce removes the unused ones.
 */
#include "jit/ir/boxing.h"
#include "jit/passes/passes.h"
#include "yagrad/autograd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FOLD_MAX_GROWTH 65536

/* Whether op takes a Generator (a random op). */
static bool is_random(const yg_op_info *op) {
    for (int32_t i = 0; i < op->n_args; i++)
        if (op->args[i].flags & YG_OP_ARG_GENERATOR)
            return true;
    return false;
}

/* What fold_with asks of the graph: which values are constants. */
typedef struct fold_with {
    yg_pass_constant_fn constant;
    void *ctx;
    int64_t max_growth; /* elements a result may have beyond its inputs' */
} fold_with;

const yg_tensor *yg__pass_constant_value(const yg_ir_value *v, void *ctx) {
    (void)ctx;
    const yg_ir_attr *a =
        v->node->kind == yg__prim_constant ? yg__ir_node_attr(v->node, "value") : NULL;
    return a != NULL && a->kind == YG_IR_ATTR_TENSOR ? a->u.t : NULL;
}

/* Whether n may be folded if its inputs are constants (see the top). */
static bool foldable(const yg_ir_node *n, const fold_with *w) {
    if (n->op == NULL || yg__ir_node_has_side_effects(n) || is_random(n->op))
        return false;
    if (yg__boxed_op_of(n)->fn == NULL)
        return false;
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const yg_ir_value *v = n->inputs[i];
        bool constant = w->constant(v, w->ctx) != NULL;
        if ((!constant && v->node->kind != yg__prim_none) || v->scratch != 0)
            return false;
    }
    for (int32_t i = 0; i < n->n_outputs; i++) {
        if (n->outputs[i]->scratch != 0)
            return false;
    }
    return true;
}

/* Runs n on its constant inputs; false (error message restored) when
 * the op fails or a result is too large to fold. */
static bool evaluate(const yg_ir_node *n, const fold_with *w, yg_tensor **in, yg_tensor **out) {
    char saved[YG__MESSAGE_CAP];
    int64_t in_numel = 0;
    snprintf(saved, sizeof saved, "%s", yg_last_error());
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const yg_ir_node *def = n->inputs[i]->node;
        /* borrowed: the boxed call only reads its inputs */
        in[i] = def->kind == yg__prim_none ? NULL : (yg_tensor *)w->constant(n->inputs[i], w->ctx);
        in_numel += in[i] != NULL ? yg_tensor_numel(in[i]) : 0;
    }
    /* Known result sizes (shape propagation ran first in the pipeline)
     * say "too large" before any work is done. */
    for (int32_t i = 0; i < n->n_outputs; i++) {
        const yg_ir_type *t = &n->outputs[i]->type;
        if (!yg__pass_sizes_known(t))
            continue;
        double numel = 1;
        for (int32_t d = 0; d < t->ndim; d++)
            numel *= (double)t->sizes[d];
        if (numel > (double)w->max_growth && numel > (double)in_numel)
            return false;
    }
    /* Unknown result sizes: no single block of the evaluation may exceed
     * what a foldable result may hold, so repeat[repeats=[1e9, 1e9]] on a
     * constant fails fast (out of memory, node left) instead of trying. */
    double most = (double)(in_numel > w->max_growth ? in_numel : w->max_growth);
    size_t old_limit = yg__alloc_set_thread_limit((size_t)(most * (double)sizeof(double)));
    bool prev = yg_set_grad_enabled(false);
    yg_status st = yg__boxed_op_of(n)->fn(n, in, n->n_inputs, out);
    yg_set_grad_enabled(prev);
    (void)yg__alloc_set_thread_limit(old_limit);
    if (st != YG_OK) {
        (void)yg_set_error(st, "%s", saved);
        return false;
    }
    bool ok = true;
    for (int32_t i = 0; i < n->n_outputs; i++) {
        int64_t numel = yg_tensor_numel(out[i]);
        if (out[i] == NULL || yg_tensor_device(out[i]) != YG_CPU ||
            (numel > w->max_growth && numel > in_numel))
            ok = false;
    }
    if (!ok) {
        for (int32_t i = 0; i < n->n_outputs; i++) {
            yg_release(out[i]);
            out[i] = NULL;
        }
    }
    return ok;
}

/* A prim::Constant holding a copy of t, linked just before pos. */
static yg_status make_constant(yg_ir_node *pos, const yg_tensor *t, yg_ir_value **out) {
    yg_ir_node *c = NULL;
    yg_ir_attr a = {0};
    a.kind = YG_IR_ATTR_TENSOR;
    YG_RETURN_IF_ERROR(yg__ir_tensor_snapshot("constant_propagation", t, &a.u.t));
    a.name = malloc(sizeof "value");
    if (a.name == NULL) {
        yg_release(a.u.t);
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "constant_propagation: out of memory");
    }
    memcpy(a.name, "value", sizeof "value");
    yg_status st = yg__ir_node_create(pos->owner, yg__prim_constant, NULL, 1, false, &c);
    if (st != YG_OK) {
        yg__ir_attr_clear(&a);
        return st;
    }
    yg__ir_node_move_before(c, pos);
    st = yg__ir_node_put_attr(c, &a); /* takes a's payload, even on failure */
    if (st != YG_OK) {
        yg__ir_node_destroy(c);
        return st;
    }
    yg_ir_type *ty = &c->outputs[0]->type;
    ty->kind = YG_IR_TYPE_TENSOR;
    ty->dtype = (int32_t)yg_tensor_dtype(t);
    ty->device = YG_CPU;
    ty->ndim = (int32_t)yg_tensor_ndim(t);
    for (int32_t d = 0; d < ty->ndim; d++)
        ty->sizes[d] = yg_tensor_sizes(t)[d];
    ty->requires_grad = 0;
    *out = c->outputs[0];
    return YG_OK;
}

/* Replaces n by one constant per result; n is destroyed.  On failure the
 * graph is valid, with n still in place. */
static yg_status replace(yg_ir_node *n, yg_tensor **results) {
    yg_ir_value *made[8] = {NULL};
    char *names[8] = {NULL};
    yg_status st = YG_OK;
    int32_t i;
    for (i = 0; i < n->n_outputs && st == YG_OK; i++)
        st = make_constant(n, results[i], &made[i]);
    for (int32_t k = 0; k < n->n_outputs && st == YG_OK; k++) {
        names[k] = malloc(strlen(n->outputs[k]->name) + 1);
        if (names[k] == NULL)
            st = yg__fail(YG_ERR_OUT_OF_MEMORY, "constant_propagation: out of memory");
        else
            strcpy(names[k], n->outputs[k]->name);
    }
    for (int32_t k = 0; k < n->n_outputs && st == YG_OK; k++)
        st = yg__ir_value_replace_all_uses(n->outputs[k], made[k]);
    if (st != YG_OK) {
        /* Uses partly moved: move them back, drop the new constants. */
        for (int32_t k = 0; k < n->n_outputs; k++) {
            if (made[k] != NULL && made[k]->n_uses > 0)
                (void)yg__ir_value_replace_all_uses(made[k], n->outputs[k]);
            if (made[k] != NULL && made[k]->n_uses == 0)
                yg__ir_node_destroy(made[k]->node);
        }
    } else {
        yg__ir_node_destroy(n);
        /* The old names are free now; the renames cannot collide. */
        for (int32_t k = 0; k < i && st == YG_OK; k++)
            st = yg__ir_value_rename(made[k], names[k], strlen(names[k]));
    }
    for (int32_t k = 0; k < 8; k++)
        free(names[k]);
    return st;
}

static yg_status propagate(yg_graph *g, const fold_with *w, int depth) {
    bool any = false;
    yg_tensor **in = NULL, *out[8];
    int32_t max_in = 1;
    yg_status st = YG_OK;
    YG_RETURN_IF_ERROR(yg__pass_mark_mutated(g, "constant_propagation", &any));
    for (yg_ir_node *n = g->first; n != NULL; n = n->next) {
        if (n->n_inputs > max_in)
            max_in = n->n_inputs;
    }
    in = malloc((size_t)max_in * sizeof *in);
    if (in == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "constant_propagation: out of memory");
    for (yg_ir_node *n = g->first, *next; n != NULL && st == YG_OK; n = next) {
        next = n->next;
        for (int32_t i = 0; i < n->n_attrs && st == YG_OK; i++) {
            if (n->attrs[i].kind == YG_IR_ATTR_GRAPH && depth < 256)
                st = propagate(n->attrs[i].u.g, w, depth + 1);
        }
        if (st != YG_OK || n->n_outputs > 8 || !foldable(n, w))
            continue;
        int32_t n_out = n->n_outputs;
        for (int32_t i = 0; i < n_out; i++)
            out[i] = NULL;
        if (!evaluate(n, w, in, out))
            continue;
        st = replace(n, out); /* destroys n on success */
        for (int32_t i = 0; i < n_out; i++)
            yg_release(out[i]);
    }
    free(in);
    return st;
}

yg_status
yg__pass_fold_constants(yg_graph *g, yg_pass_constant_fn constant, void *ctx, int64_t max_growth) {
    const fold_with w = {constant, ctx, max_growth};
    YG_RETURN_IF_ERROR(propagate(g, &w, 0));
    return yg__ir_check_after_pass(g, "constant_propagation");
}

yg_status yg_graph_propagate_constants(yg_graph *g) {
    if (g == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "constant_propagation: graph is NULL");
    return yg__pass_fold_constants(g, yg__pass_constant_value, NULL, FOLD_MAX_GROWTH);
}
