/*
 * autodiff_subgraphs.c - yg_graph_create_autodiff_subgraphs: differentiable
 * regions of a graph become prim::DifferentiableGraph nodes carrying their
 * forward graph f and backward graph df (yg_graph_differentiate).
 *
 * A node may join a region when it is an op node (or a prim::Constant /
 * prim::None) that writes no memory and reads or makes no value anything
 * writes (yg__pass_mark_mutated), and either none of its inputs requires
 * grad, or its op's outputs carry no gradient, or its graph derivative
 * builds with the graph's static types (a trial run into a scratch graph).
 * Regions are maximal runs of such nodes in the graph's order: every node
 * between two members is a member, so merging cannot create a cycle (a
 * node that cannot join ends the run).  A run is merged when it has at
 * least min_size op nodes and one of them is on a gradient path.
 */
#include "jit/autodiff/autodiff.h"
#include "jit/passes/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static yg_status oom(void) {
    return yg__fail(YG_ERR_OUT_OF_MEMORY, "create_autodiff_subgraphs: out of memory");
}

/* scratch of every value of g: index * 2 + (1 when something writes it). */
static bool mutated(const yg_ir_value *v) {
    return (v->scratch & 1) != 0;
}

static int64_t vidx(const yg_ir_value *v) {
    return v->scratch >> 1;
}

static yg_ir_value *trial_capture(yg_df *s, yg_ir_value *v) {
    yg_ir_value *dv = NULL;
    yg_ir_type t = v->type;
    yg__df_check(s, yg_graph_add_input(s->df, &t, NULL, &dv));
    return dv;
}

/* Whether n's graph derivative builds with the graph's types. */
static bool trial(yg_ir_node *n, const bool *rg) {
    const yg_graph_grad_op *so = yg__graph_grad_of(n);
    if (so == NULL || so->fn == NULL)
        return false;
    yg_graph *df = NULL;
    int32_t k = n->n_inputs + 2 * n->n_outputs + 1;
    yg_ir_value **buf = calloc((size_t)k, sizeof *buf);
    bool *needs = calloc((size_t)(n->n_inputs + 1), sizeof *needs);
    bool good = false;
    if (buf == NULL || needs == NULL || yg_graph_create(&df) != YG_OK)
        goto out;
    yg_df s = {.node = n,
                .df = df,
                .capture = trial_capture,
                .grads = buf,
                .needs = needs,
                .grad_inputs = buf + n->n_outputs,
                .st = YG_OK};
    for (int32_t i = 0; i < n->n_outputs && s.st == YG_OK; i++)
        s.st = yg_graph_add_input(df, &n->outputs[i]->type, NULL, &buf[i]);
    for (int32_t i = 0; i < n->n_inputs; i++)
        needs[i] = rg[vidx(n->inputs[i])];
    good = s.st == YG_OK && so->fn(&s, n) == YG_OK;
out:
    yg_graph_release(df);
    free(buf);
    free(needs);
    return good;
}

typedef struct region {
    yg_ir_node **nodes;
    int32_t len, cap;
} region;

static yg_status region_push(region *r, yg_ir_node *n) {
    if (r->len == r->cap) {
        int32_t cap = r->cap ? r->cap * 2 : 16;
        yg_ir_node **p = realloc(r->nodes, (size_t)cap * sizeof *p);
        if (p == NULL)
            return oom();
        r->nodes = p;
        r->cap = cap;
    }
    r->nodes[r->len++] = n;
    return YG_OK;
}

static yg_status put_graph(yg_ir_node *n, const char *name, yg_graph **g) {
    yg_ir_attr a = {0};
    a.name = strdup(name);
    a.kind = YG_IR_ATTR_GRAPH;
    a.u.g = *g;
    *g = NULL;
    if (a.name == NULL) {
        yg_graph_release(a.u.g);
        return oom();
    }
    return yg__ir_node_put_attr(n, &a);
}

/* Moves the prim::None nodes of r whose value is also used after the
 * region to just before it, out of r: a region's outputs are tensors, and
 * a node without inputs can move up freely. */
static void hoist_shared_nones(region *r) {
    for (int32_t i = 0; i < r->len; i++)
        r->nodes[i]->scratch = 1;
    int32_t kept = 0;
    yg_ir_node *first = r->nodes[0];
    for (int32_t i = 0; i < r->len; i++) {
        yg_ir_node *n = r->nodes[i];
        bool shared = false;
        if (n->kind == yg__prim_none)
            for (int32_t o = 0; o < n->n_outputs && !shared; o++)
                for (int32_t u = 0; u < n->outputs[o]->n_uses && !shared; u++)
                    shared = n->outputs[o]->uses[u].node->scratch != 1;
        if (shared && n != first) {
            yg__ir_node_move_before(n, first);
            n->scratch = 0;
        } else if (shared) {
            n->scratch = 0; /* already first: it stays where it is */
        } else {
            r->nodes[kept++] = n;
        }
    }
    r->len = kept;
    for (int32_t i = 0; i < r->len; i++)
        r->nodes[i]->scratch = 0;
}

/* Replaces region r of g by one prim::DifferentiableGraph node. */
static yg_status merge(yg_graph *g, region *r, const bool *rg) {
    yg_graph *sub = NULL;
    yg_gradient *grad = NULL;
    bool *sub_rg = NULL;
    yg_ir_node *h = NULL;

    hoist_shared_nones(r);
    if (r->len == 0)
        return YG_OK;
    yg_status st = yg__pass_outline(r->nodes, r->len, &sub);
    int32_t n_in = sub != NULL ? sub->param->n_outputs : 0;
    sub_rg = calloc((size_t)(n_in + 1), sizeof *sub_rg);
    if (st == YG_OK && sub_rg == NULL)
        st = oom();
    /* What requires grad, as this pass computed it. */
    for (int32_t i = 0; st == YG_OK && i < n_in; i++) {
        yg_ir_value *v = sub->param->outputs[i];
        const char *name = v->name;
        sub_rg[i] =
            v->type.kind == YG_IR_TYPE_TENSOR && rg[vidx(yg__ir_graph_find(g, name, strlen(name)))];
        yg_ir_type t = v->type;
        if (t.kind == YG_IR_TYPE_TENSOR)
            t.requires_grad = sub_rg[i];
        st = yg_ir_value_set_type(v, &t);
    }
    if (st == YG_OK)
        st = yg_graph_differentiate(sub, sub_rg, &grad);
    if (st == YG_OK)
        st = yg__pass_holder(g, yg__prim_diff_graph, sub, grad->f->ret->n_inputs, r->nodes[0], &h);
    for (int32_t i = 0; st == YG_OK && i < h->n_outputs; i++)
        st = yg_ir_value_set_type(h->outputs[i], &grad->f->ret->inputs[i]->type);
    if (st == YG_OK)
        st = yg_ir_node_set_ints(h, "captures", grad->captures, grad->n_captures);
    if (st == YG_OK)
        st = yg_ir_node_set_ints(h, "grad_of_input", grad->grad_of_input, grad->n_inputs);
    if (st == YG_OK)
        st = yg_ir_node_set_int(h, "n_grad_outputs", grad->n_outputs);
    if (st == YG_OK)
        st = put_graph(h, "f", &grad->f);
    if (st == YG_OK)
        st = put_graph(h, "df", &grad->df);
    if (st == YG_OK)
        st = yg__pass_replace_region(g, r->nodes, r->len, sub, h);
    yg_gradient_release(grad);
    yg_graph_release(sub);
    free(sub_rg);
    return st;
}

yg_status
yg_graph_create_autodiff_subgraphs(yg_graph *g, const bool *requires_grad, int64_t min_size) {
    bool any_mutation = false;
    if (g == NULL || min_size < 1)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "create_autodiff_subgraphs: graph is NULL or min_size < 1");
    YG_RETURN_IF_ERROR(yg__pass_mark_mutated(g, "create_autodiff_subgraphs", &any_mutation));
    int64_t k = 0;
    for (int32_t i = 0; i < g->param->n_outputs; i++, k++)
        g->param->outputs[i]->scratch += 2 * k;
    for (yg_ir_node *n = g->first; n != NULL; n = n->next)
        for (int32_t i = 0; i < n->n_outputs; i++, k++)
            n->outputs[i]->scratch += 2 * k;
    bool *rg = calloc((size_t)(k + 1), sizeof *rg);
    bool *cand = calloc((size_t)(g->n_nodes + 1), sizeof *cand);
    bool *on_path = calloc((size_t)(g->n_nodes + 1), sizeof *on_path);
    region r = {0};
    yg_status st = YG_OK;
    if (rg == NULL || cand == NULL || on_path == NULL) {
        st = oom();
        goto out;
    }
    for (int32_t i = 0; i < g->param->n_outputs; i++) {
        const yg_ir_value *v = g->param->outputs[i];
        rg[i] = v->type.kind == YG_IR_TYPE_TENSOR &&
                (requires_grad != NULL ? requires_grad[i] : v->type.requires_grad == 1);
    }
    int64_t ni = 0;
    for (yg_ir_node *n = g->first; n != NULL; n = n->next, ni++) {
        bool any_rg = false, clean = !yg__ir_node_has_side_effects(n);
        for (int32_t i = 0; i < n->n_inputs; i++) {
            any_rg |= rg[vidx(n->inputs[i])];
            clean &= !mutated(n->inputs[i]);
        }
        for (int32_t i = 0; i < n->n_outputs; i++)
            clean &= !mutated(n->outputs[i]);
        const yg_graph_grad_op *so = yg__graph_grad_of(n);
        bool no_grad = so != NULL && so->fn == NULL && so->no_grad;
        if (n->kind == yg__prim_constant || n->kind == yg__prim_none)
            cand[ni] = true;
        else if (n->op != NULL && clean)
            cand[ni] = !any_rg || no_grad || trial(n, rg);
        on_path[ni] = n->op != NULL && any_rg && !no_grad;
        for (int32_t i = 0; i < n->n_outputs; i++)
            rg[vidx(n->outputs[i])] = any_rg && !no_grad;
        n->scratch = 0;
    }
    /* Runs of candidates, merged from the last so earlier indices hold. */
    yg_ir_node *n = g->first;
    ni = 0;
    while (st == YG_OK && n != NULL) {
        r.len = 0;
        int64_t ops = 0;
        bool path = false;
        while (n != NULL && !cand[ni]) {
            n = n->next;
            ni++;
        }
        while (st == YG_OK && n != NULL && cand[ni]) {
            st = region_push(&r, n);
            ops += n->op != NULL;
            path |= on_path[ni];
            n = n->next;
            ni++;
        }
        if (st == YG_OK && r.len > 0 && ops >= min_size && path)
            st = merge(g, &r, rg);
    }
out:
    free(rg);
    free(cand);
    free(on_path);
    free(r.nodes);
    if (st != YG_OK)
        return st;
    return yg__ir_check_after_pass(g, "create_autodiff_subgraphs");
}

yg_status yg_graph_inline_autodiff_subgraphs(yg_graph *g, int64_t min_size) {
    if (g == NULL || min_size < 1)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "inline_autodiff_subgraphs: graph is NULL or min_size < 1");
    yg_ir_node *n = g->first;
    while (n != NULL) {
        yg_ir_node *next = n->next;
        const yg_graph *f = NULL;
        if (n->kind == yg__prim_diff_graph && yg_ir_node_get_graph(n, "f", &f) == YG_OK) {
            int64_t ops = 0;
            for (const yg_ir_node *m = f->first; m != NULL; m = m->next)
                ops += m->op != NULL;
            if (ops < min_size)
                YG_RETURN_IF_ERROR(yg__pass_inline(g, n, f, n->inputs));
        }
        n = next;
    }
    return yg__ir_check_after_pass(g, "inline_autodiff_subgraphs");
}
