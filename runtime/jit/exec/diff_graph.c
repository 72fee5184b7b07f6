/*
 * diff_graph.c - running a prim::DifferentiableGraph node: its forward
 * graph f without recording per-op history, and, when grad mode is on and
 * an input requires grad, one autograd node (DifferentiableGraphBackward)
 * whose apply runs the backward graph df.  So eager autograd and graph
 * autograd compose: the node's edges point at its inputs' history, and
 * whatever eager ops follow record onto its outputs.
 *
 * The autograd node keeps df alive with a reference (yg__graph_retain),
 * so the plan that made it may be released first, and saves the values df
 * captures as saved tensors: an in-place write to one of them between
 * forward and backward fails the backward as it does in eager mode.
 * df runs through the interpreter, so with create_graph its ops record
 * history and the gradient can be differentiated again.  What df reads
 * must then carry history too: inputs and outputs do (outputs through this
 * node), intermediates, which f computed without history, do not; for a
 * df that reads some, the node also keeps its inputs and f, and under
 * create_graph runs f again with history to make them.
 */
#include "autograd/node.h"
#include "jit/autodiff/autodiff.h"
#include "yagrad/autograd.h"

#include <stdlib.h>
#include <string.h>

typedef struct dg_backward {
    yg_node base;
    yg_graph *df;           /* a reference */
    int32_t n_inputs;       /* the node's inputs (edges) */
    int64_t *grad_of_input; /* per input: df output, -1: none */
    int64_t n_captures;
    yg_saved_tensor *captured; /* n_captures */
    int64_t *capture_refs;     /* n_captures: input i, or -1 - output j of f */
    bool reads_intermediates;  /* df reads values f kept only for it */
    yg_graph *f;               /* a reference, when reads_intermediates */
    yg_saved_tensor *inputs;   /* every input, when reads_intermediates */
} dg_backward;

static void dg_release_saved(yg_node *base) {
    dg_backward *b = (dg_backward *)base;
    for (int64_t i = 0; i < b->n_captures; i++)
        yg__saved_release(&b->captured[i]);
    for (int32_t i = 0; b->inputs != NULL && i < b->n_inputs; i++)
        yg__saved_release(&b->inputs[i]);
}

static void dg_destroy(yg_node *base) {
    dg_backward *b = (dg_backward *)base;
    yg_graph_release(b->df);
    yg_graph_release(b->f);
    free(b->grad_of_input);
    free(b->captured);
    free(b->capture_refs);
    free(b->inputs);
}

/* For create_graph through a df that reads intermediates (which f made
 * without history): f again, on the saved inputs, with grad mode on, so
 * the values df reads carry history back to the inputs.  in[] receives the
 * captures (new refs) after the node's n_outputs gradients. */
static yg_status recompute_captures(dg_backward *b, yg_tensor **in) {
    yg_node *base = &b->base;
    int64_t n_f = b->f->ret->n_inputs;
    yg_tensor **x = calloc((size_t)(b->n_inputs + n_f + 1), sizeof *x);
    if (x == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "DifferentiableGraphBackward: out of memory");
    yg_tensor **y = x + b->n_inputs;
    yg_status st = YG_OK;
    for (int32_t i = 0; st == YG_OK && i < b->n_inputs; i++)
        st = yg__saved_unpack(&b->inputs[i], base, &x[i]);
    if (st == YG_OK)
        st = yg_graph_run(b->f, x, b->n_inputs, y, n_f);
    for (int64_t k = 0; st == YG_OK && k < b->n_captures; k++) {
        int64_t ref = b->capture_refs[k];
        in[base->n_outputs + k] = yg_retain(ref >= 0 ? x[ref] : y[-1 - ref]);
    }
    for (int64_t i = 0; i < b->n_inputs + n_f; i++)
        yg_release(x[i]);
    free(x);
    return st;
}

static yg_status dg_apply(yg_node *base, yg_tensor *const *grads, yg_tensor **grad_inputs) {
    dg_backward *b = (dg_backward *)base;
    int64_t n_in = base->n_outputs + b->n_captures;
    int64_t n_out = b->df->ret->n_inputs;
    yg_tensor **defined = NULL;
    yg_status st;

    yg_tensor **in = calloc((size_t)(n_in + n_out + 1), sizeof *in);
    if (in == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "DifferentiableGraphBackward: out of memory");
    yg_tensor **out = in + n_in;
    st = yg__node_defined_grads(base, grads, &defined);
    for (int32_t i = 0; st == YG_OK && i < base->n_outputs; i++)
        in[i] = defined[i];
    if (st == YG_OK && b->reads_intermediates && yg_is_grad_enabled())
        st = recompute_captures(b, in);
    else
        for (int64_t i = 0; st == YG_OK && i < b->n_captures; i++)
            st = yg__saved_unpack(&b->captured[i], base, &in[base->n_outputs + i]);
    if (st == YG_OK)
        st = yg_graph_run(b->df, in, n_in, out, n_out);
    if (st == YG_OK) {
        for (int32_t i = 0; i < b->n_inputs; i++) {
            int64_t k = b->grad_of_input[i];
            if (k >= 0 && yg__node_needs_grad(base, i)) {
                grad_inputs[i] = out[k];
                out[k] = NULL;
            }
        }
    }
    for (int64_t i = base->n_outputs; i < n_in + n_out; i++)
        yg_release(in[i]);
    free(defined); /* its refs moved into in[] */
    for (int32_t i = 0; i < base->n_outputs; i++)
        yg_release(in[i]);
    free(in);
    if (st != YG_OK)
        return yg__fail_prefix(st, "DifferentiableGraphBackward");
    return YG_OK;
}

static const yg_node_vtable dg_vtable = {
    .name = "DifferentiableGraphBackward",
    .apply = dg_apply,
    .release_saved = dg_release_saved,
    .destroy = dg_destroy,
};

/* The holder's attributes. */
typedef struct holder {
    const yg_graph *f, *df;
    const int64_t *captures, *grad_of_input;
    int64_t n_captures, n_grad_of_input, n_grad_outputs;
} holder;

static yg_status read_holder(const yg_ir_node *n, holder *h) {
    int64_t len = 0;
    YG_RETURN_IF_ERROR(yg_ir_node_get_graph(n, "f", &h->f));
    h->df = NULL;
    if (!yg_ir_node_has_attr(n, "df", NULL))
        return YG_OK; /* f alone: its ops record eager history */
    YG_RETURN_IF_ERROR(yg_ir_node_get_graph(n, "df", &h->df));
    YG_RETURN_IF_ERROR(yg_ir_node_get_ints(n, "captures", &h->captures, &h->n_captures));
    YG_RETURN_IF_ERROR(yg_ir_node_get_ints(n, "grad_of_input", &h->grad_of_input, &len));
    YG_RETURN_IF_ERROR(yg_ir_node_get_int(n, "n_grad_outputs", &h->n_grad_outputs));
    if (len != n->n_inputs || h->n_grad_outputs > n->n_outputs ||
        h->df->param->n_outputs != h->n_grad_outputs + h->n_captures)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "prim::DifferentiableGraph: attributes do not match the node");
    return YG_OK;
}

/* Makes the backward node of one run and the outputs' history. */
static yg_status
record(const yg_ir_node *n, const holder *h, yg_tensor *const *in, yg_tensor **out) {
    yg_node *base = NULL;
    YG_RETURN_IF_ERROR(yg__node_new(
        &dg_vtable, sizeof(dg_backward), n->n_inputs, (int32_t)h->n_grad_outputs, &base));
    dg_backward *b = (dg_backward *)base;
    yg_status st = YG_OK;
    b->df = yg__graph_retain((yg_graph *)h->df);
    b->n_inputs = n->n_inputs;
    b->grad_of_input = malloc((size_t)(n->n_inputs > 0 ? n->n_inputs : 1) * sizeof(int64_t));
    b->captured = calloc((size_t)(h->n_captures > 0 ? h->n_captures : 1), sizeof *b->captured);
    b->capture_refs = malloc((size_t)(h->n_captures > 0 ? h->n_captures : 1) * sizeof(int64_t));
    if (b->grad_of_input == NULL || b->captured == NULL || b->capture_refs == NULL) {
        st = yg__fail(YG_ERR_OUT_OF_MEMORY, "DifferentiableGraph: out of memory");
        goto out;
    }
    b->n_captures = h->n_captures;
    for (int32_t i = 0; i < n->n_inputs; i++) {
        b->grad_of_input[i] = h->grad_of_input[i];
        if (h->grad_of_input[i] >= 0 && st == YG_OK)
            st = yg__node_set_edge(base, i, in[i]);
    }
    for (int64_t k = 0; st == YG_OK && k < h->n_captures; k++) {
        int64_t ref = h->captures[k];
        b->capture_refs[k] = ref;
        if (ref >= 0) {
            st = yg__saved_save(&b->captured[k], in[ref], false, 0, "input");
        } else {
            int64_t j = -1 - ref;
            bool is_output = j < h->n_grad_outputs;
            b->reads_intermediates |= !is_output;
            st = yg__saved_save(&b->captured[k],
                                out[j],
                                is_output,
                                (int32_t)(is_output ? j : 0),
                                is_output ? "output" : "intermediate");
        }
    }
    /* To differentiate df itself (create_graph), intermediates are made
     * again with history from the inputs: keep the inputs and f. */
    if (st == YG_OK && b->reads_intermediates) {
        b->inputs = calloc((size_t)(n->n_inputs > 0 ? n->n_inputs : 1), sizeof *b->inputs);
        if (b->inputs == NULL)
            st = yg__fail(YG_ERR_OUT_OF_MEMORY, "DifferentiableGraph: out of memory");
        for (int32_t i = 0; st == YG_OK && i < n->n_inputs; i++)
            st = yg__saved_save(&b->inputs[i], in[i], false, 0, "input");
        if (st == YG_OK)
            b->f = yg__graph_retain((yg_graph *)h->f);
    }
    for (int64_t i = 0; st == YG_OK && i < h->n_grad_outputs; i++)
        if (out[i] != NULL)
            st = yg__set_history(out[i], base, (int32_t)i);
out:
    yg__node_release(base);
    return st;
}

yg_status yg__diff_graph_run(const yg_ir_node *n, yg_tensor *const *in, yg_tensor **out) {
    holder h;
    YG_RETURN_IF_ERROR(read_holder(n, &h));
    if (h.df == NULL)
        return yg_graph_run(h.f, in, n->n_inputs, out, n->n_outputs);
    bool rec = false;
    if (yg_is_grad_enabled())
        for (int32_t i = 0; i < n->n_inputs && !rec; i++)
            rec = h.grad_of_input[i] >= 0 && in[i] != NULL && yg_tensor_requires_grad(in[i]);
    bool prev = yg_set_grad_enabled(rec ? false : yg_is_grad_enabled());
    yg_status st = yg_graph_run(h.f, in, n->n_inputs, out, n->n_outputs);
    yg_set_grad_enabled(prev);
    if (st == YG_OK && rec)
        st = record(n, &h, in, out);
    if (st != YG_OK) {
        for (int32_t i = 0; i < n->n_outputs; i++) {
            yg_release(out[i]);
            out[i] = NULL;
        }
    }
    return st;
}
