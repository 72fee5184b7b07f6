/*
 * autodiff.c - yg_graph_differentiate: a graph's gradient as a second
 * graph, built from the generated graph derivatives (graph_grad.h), the
 * same formulas of specs/derivatives.yaml the eager backward nodes run.
 *
 * f is a copy of g.  Walking f backwards from its outputs, each node that
 * has a gradient on some output and an input that requires grad gets its
 * graph derivative appended to df; the gradients it returns are made
 * to match the input's static type as the eager engine does (sum_to over
 * broadcast dims, to.dtype for another dtype) and summed into the input's
 * gradient.  A forward value a formula reads is captured: a df input,
 * recorded in the capture list; an intermediate (neither an input nor an
 * output of g) is also appended to f's outputs so that the runtime keeps
 * it.  Only the gradients of inputs that require grad are built, so df
 * has no dead part.
 */
#include "jit/autodiff/autodiff.h"

#include "jit/passes/passes.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct diff {
    yg_graph *f, *df;
    int64_t n_values;
    yg_ir_value **grad;    /* per f value (by scratch): df gradient */
    yg_ir_value **capture; /* per f value: its df input once captured */
    bool *rg;              /* per f value: requires grad */
    yg_gradient *out;
    int64_t cap_captures;
} diff;

static yg_status oom(void) {
    return yg__fail(YG_ERR_OUT_OF_MEMORY, "autodiff: out of memory");
}

static int64_t idx(const yg_ir_value *v) {
    return v->scratch;
}

static bool is_floating(int32_t dtype) {
    return dtype == YG_IR_UNKNOWN || dtype == YG_FLOAT32 || dtype == YG_FLOAT64 ||
           dtype == YG_FLOAT16 || dtype == YG_BFLOAT16;
}

const yg_graph_grad_op *yg__graph_grad_of(const yg_ir_node *n) {
    if (n->op == NULL)
        return NULL;
    return &yg__graph_grad_ops[n->op - yg__ops];
}

/* Appends a capture of f value v (input index i >= 0, or output -1 - j). */
static yg_status add_capture(diff *d, int64_t ref) {
    yg_gradient *g = d->out;
    if (g->n_captures == d->cap_captures) {
        int64_t cap = d->cap_captures ? d->cap_captures * 2 : 8;
        int64_t *c = realloc(g->captures, (size_t)cap * sizeof *c);
        if (c == NULL)
            return oom();
        g->captures = c;
        d->cap_captures = cap;
    }
    g->captures[g->n_captures++] = ref;
    return YG_OK;
}

static yg_ir_value *capture(yg_df *s, yg_ir_value *v) {
    diff *d = s->ctx;
    int64_t i = idx(v);
    yg_ir_value *dv = NULL;
    if (d->capture[i] != NULL)
        return d->capture[i];
    yg_ir_type t = v->type;
    t.requires_grad = YG_IR_UNKNOWN;
    yg_status st = yg_graph_add_input(d->df, &t, NULL, &dv);
    int64_t ref = -1;
    if (st == YG_OK && v->node == d->f->param) {
        ref = v->offset;
    } else if (st == YG_OK) {
        /* An output of g already, or appended to f's outputs. */
        int32_t j = 0;
        while (j < d->f->ret->n_inputs && d->f->ret->inputs[j] != v)
            j++;
        if (j == d->f->ret->n_inputs)
            st = yg__ir_node_add_input(d->f->ret, v);
        ref = -1 - j;
    }
    if (st == YG_OK)
        st = add_capture(d, ref);
    if (st != YG_OK) {
        yg__df_check(s, st);
        return NULL;
    }
    d->capture[i] = dv;
    return dv;
}

/* A node appended to df (inputs given, attributes set by the caller). */
static yg_status
df_node(diff *d, const char *kind, yg_ir_value *const *in, int64_t n_in, yg_ir_node **out) {
    return yg_graph_add_node(d->df, kind, in, n_in, 1, out);
}

/* Makes gradient *v match the forward value's static type t. */
static yg_status conform(diff *d, const yg_ir_type *t, yg_ir_value **v) {
    yg_ir_node *n = NULL;
    const yg_ir_type *gt = &(*v)->type;
    if (yg__pass_sizes_known(t) && !yg__pass_same_known_sizes(t, gt)) {
        YG_RETURN_IF_ERROR(df_node(d, "sum_to", v, 1, &n));
        YG_RETURN_IF_ERROR(yg_ir_node_set_ints(n, "size", t->sizes, t->ndim));
        YG_RETURN_IF_ERROR(yg__shape_propagate_node(n));
        *v = n->outputs[0];
    }
    if (t->dtype != YG_IR_UNKNOWN && (*v)->type.dtype != t->dtype) {
        YG_RETURN_IF_ERROR(df_node(d, "to.dtype", v, 1, &n));
        YG_RETURN_IF_ERROR(yg_ir_node_set_int(n, "dtype", t->dtype));
        YG_RETURN_IF_ERROR(yg__shape_propagate_node(n));
        *v = n->outputs[0];
    }
    return YG_OK;
}

/* Sums gradient v into f value x's gradient. */
static yg_status accumulate(diff *d, yg_ir_value *x, yg_ir_value *v) {
    yg_ir_value **slot = &d->grad[idx(x)];
    if (*slot == NULL) {
        *slot = v;
        return YG_OK;
    }
    yg_ir_node *n = NULL;
    yg_ir_value *in[2] = {*slot, v};
    YG_RETURN_IF_ERROR(df_node(d, "add", in, 2, &n));
    YG_RETURN_IF_ERROR(yg__shape_propagate_node(n));
    *slot = n->outputs[0];
    return YG_OK;
}

/* Why n cannot be differentiated, or NULL. */
static const char *why_not(const yg_ir_node *n) {
    if (n->op == NULL)
        return "prim nodes other than Constant and None are not differentiable here";
    const yg_graph_grad_op *s = yg__graph_grad_of(n);
    if (s->fn != NULL)
        return NULL;
    return s->unsupported;
}

static yg_status fail_node(const yg_ir_node *n, yg_status code, const char *why) {
    char desc[200];
    yg__ir_node_describe(n, desc, sizeof desc);
    return yg__fail(code, "autodiff: %s: %s", desc, why);
}

/* Numbers f's values and computes which require grad. */
static yg_status forward_pass(diff *d, const bool *requires_grad) {
    int64_t k = 0;
    yg_graph *f = d->f;
    for (int32_t i = 0; i < f->param->n_outputs; i++)
        f->param->outputs[i]->scratch = k++;
    for (yg_ir_node *n = f->first; n != NULL; n = n->next)
        for (int32_t i = 0; i < n->n_outputs; i++)
            n->outputs[i]->scratch = k++;
    d->n_values = k;
    d->grad = calloc((size_t)(k > 0 ? k : 1), sizeof *d->grad);
    d->capture = calloc((size_t)(k > 0 ? k : 1), sizeof *d->capture);
    d->rg = calloc((size_t)(k > 0 ? k : 1), sizeof *d->rg);
    if (d->grad == NULL || d->capture == NULL || d->rg == NULL)
        return oom();
    for (int32_t i = 0; i < f->param->n_outputs; i++) {
        const yg_ir_value *v = f->param->outputs[i];
        d->rg[i] = v->type.kind == YG_IR_TYPE_TENSOR && is_floating(v->type.dtype) &&
                   (requires_grad != NULL ? requires_grad[i] : v->type.requires_grad == 1);
    }
    for (yg_ir_node *n = f->first; n != NULL; n = n->next) {
        bool any = false;
        for (int32_t i = 0; i < n->n_inputs; i++)
            any |= d->rg[idx(n->inputs[i])];
        if (!any)
            continue;
        if (yg__ir_node_has_side_effects(n))
            return fail_node(n,
                             YG_ERR_NOT_IMPLEMENTED,
                             "in-place ops are not differentiated in graphs (they stay outside "
                             "autodiff subgraphs)");
        const yg_graph_grad_op *s = yg__graph_grad_of(n);
        if (s != NULL && s->fn == NULL && s->no_grad)
            continue;
        const char *why = why_not(n);
        if (why != NULL)
            return fail_node(n, YG_ERR_NOT_IMPLEMENTED, why);
        for (int32_t i = 0; i < n->n_outputs; i++)
            d->rg[idx(n->outputs[i])] = n->outputs[i]->type.kind == YG_IR_TYPE_TENSOR &&
                                        is_floating(n->outputs[i]->type.dtype);
    }
    return YG_OK;
}

/* Appends node n's derivative to df. */
static yg_status backward_node(diff *d, yg_ir_node *n) {
    bool any_grad = false, any_need = false;
    for (int32_t i = 0; i < n->n_outputs; i++)
        any_grad |= d->grad[idx(n->outputs[i])] != NULL;
    for (int32_t i = 0; i < n->n_inputs; i++)
        any_need |= d->rg[idx(n->inputs[i])];
    if (!any_grad || !any_need)
        return YG_OK;
    int32_t k = n->n_inputs + n->n_outputs;
    yg_ir_value **buf = calloc((size_t)(k + n->n_inputs), sizeof *buf);
    bool *needs = calloc((size_t)(n->n_inputs > 0 ? n->n_inputs : 1), sizeof *needs);
    if (buf == NULL || needs == NULL) {
        free(buf);
        free(needs);
        return oom();
    }
    yg_ir_value **grads = buf, **grad_inputs = buf + n->n_outputs;
    for (int32_t i = 0; i < n->n_outputs; i++)
        grads[i] = d->grad[idx(n->outputs[i])];
    for (int32_t i = 0; i < n->n_inputs; i++)
        needs[i] = d->rg[idx(n->inputs[i])];
    yg_df s = {.node = n,
                .df = d->df,
                .capture = capture,
                .ctx = d,
                .grads = grads,
                .needs = needs,
                .grad_inputs = grad_inputs,
                .st = YG_OK};
    yg_ir_node *mark = d->df->last;
    yg_status st = yg__graph_grad_of(n)->fn(&s, n);
    /* Types of the new df nodes, so conform sees the gradients' sizes. */
    for (yg_ir_node *m = mark != NULL ? mark->next : d->df->first; st == YG_OK && m != NULL;
         m = m->next)
        st = yg__shape_propagate_node(m);
    for (int32_t i = 0; st == YG_OK && i < n->n_inputs; i++) {
        if (grad_inputs[i] == NULL)
            continue;
        st = conform(d, &n->inputs[i]->type, &grad_inputs[i]);
        if (st == YG_OK)
            st = accumulate(d, n->inputs[i], grad_inputs[i]);
    }
    free(buf);
    free(needs);
    return st;
}

static yg_status build(diff *d, const yg_graph *g, const bool *requires_grad) {
    yg_gradient *out = d->out;
    YG_RETURN_IF_ERROR(yg_graph_clone(g, &d->f));
    out->f = d->f;
    YG_RETURN_IF_ERROR(yg_graph_create(&d->df));
    out->df = d->df;
    YG_RETURN_IF_ERROR(forward_pass(d, requires_grad));
    yg_graph *f = d->f;
    out->n_outputs = f->ret->n_inputs;
    out->n_inputs = f->param->n_outputs;
    /* df's first inputs: one gradient per output of g. */
    for (int32_t i = 0; i < f->ret->n_inputs; i++) {
        yg_ir_value *o = f->ret->inputs[i], *gi = NULL;
        yg_ir_type t = o->type;
        t.requires_grad = YG_IR_UNKNOWN;
        if (t.kind == YG_IR_TYPE_NONE)
            t = yg_ir_type_tensor();
        char name[32];
        snprintf(name, sizeof name, "grad_%d", i);
        YG_RETURN_IF_ERROR(yg_graph_add_input(d->df, &t, name, &gi));
        if (d->rg[idx(o)])
            YG_RETURN_IF_ERROR(accumulate(d, o, gi));
    }
    for (yg_ir_node *n = f->last; n != NULL; n = n->prev)
        YG_RETURN_IF_ERROR(backward_node(d, n));
    /* df's outputs: the gradient of each input that requires grad. */
    out->grad_of_input = malloc((size_t)(out->n_inputs > 0 ? out->n_inputs : 1) * sizeof(int64_t));
    yg_ir_value **outs = malloc((size_t)(out->n_inputs > 0 ? out->n_inputs : 1) * sizeof *outs);
    if (out->grad_of_input == NULL || outs == NULL) {
        free(outs);
        return oom();
    }
    int64_t n_out = 0;
    yg_status st = YG_OK;
    for (int32_t i = 0; st == YG_OK && i < f->param->n_outputs; i++) {
        out->grad_of_input[i] = -1;
        if (!d->rg[i])
            continue;
        yg_ir_value *gv = d->grad[i];
        if (gv == NULL) {
            yg_ir_node *none = NULL;
            st = yg_graph_add_node(d->df, "prim::None", NULL, 0, 1, &none);
            gv = st == YG_OK ? none->outputs[0] : NULL;
        }
        out->grad_of_input[i] = n_out;
        outs[n_out++] = gv;
    }
    if (st == YG_OK)
        st = yg_graph_set_outputs(d->df, outs, n_out);
    free(outs);
    YG_RETURN_IF_ERROR(st);
    /* Formulas written for any scalar leave x * 1 and the like. */
    YG_RETURN_IF_ERROR(yg_graph_run_passes(d->df, "peephole,dce"));
    YG_RETURN_IF_ERROR(yg__ir_check_after_pass(d->f, "differentiate (f)"));
    return yg__ir_check_after_pass(d->df, "differentiate (df)");
}

yg_status yg_graph_differentiate(const yg_graph *g, const bool *requires_grad, yg_gradient **out) {
    if (out != NULL)
        *out = NULL;
    if (g == NULL || out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "differentiate: graph or out is NULL");
    diff d = {0};
    d.out = calloc(1, sizeof *d.out);
    if (d.out == NULL)
        return oom();
    yg_status st = build(&d, g, requires_grad);
    free(d.grad);
    free(d.capture);
    free(d.rg);
    if (st != YG_OK) {
        yg_gradient_release(d.out);
        return st;
    }
    *out = d.out;
    return YG_OK;
}

void yg_gradient_release(yg_gradient *g) {
    if (g == NULL)
        return;
    yg_graph_release(g->f);
    yg_graph_release(g->df);
    free(g->captures);
    free(g->grad_of_input);
    free(g);
}
