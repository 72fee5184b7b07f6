/*
 * plans.c - the tables the analyses write (gen.h, "the plans"): their
 * allocation, one entry per op or derivative entry of the model they were
 * made for, and their release.
 *
 * Why tables beside the model rather than fields in it: which fields of
 * a mutable model were valid at which stage was known only from the
 * order of calls in main.c.  With the analyses' results in tables of
 * their own, the model is `const` to every emitter, and an emitter's
 * signature says which analyses it reads.
 */
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "onnx_map.h"

void gen_plans_init(gen_plans *plans, const gen_model *model)
{
    memset(plans, 0, sizeof(*plans));
    plans->n_ops = model->n_ops;
    plans->n_derivs = model->n_derivs;
    plans->pointwise = gen_xcalloc((size_t)model->n_ops + 1, sizeof(gen_pointwise_plan));
    plans->backward = gen_xcalloc((size_t)model->n_derivs + 1, sizeof(gen_backward_plan));
    plans->symbolic = gen_xcalloc((size_t)model->n_derivs + 1, sizeof(gen_symbolic_plan));
    for (int i = 0; i < model->n_derivs; i++) {
        size_t n = (size_t)model->derivs[i].n_formulas + 1;
        plans->backward[i].formulas = gen_xcalloc(n, sizeof(gen_formula_plan));
        plans->symbolic[i].graph_grad = gen_xcalloc(n, sizeof(char *));
        plans->backward[i].n_formulas = plans->symbolic[i].n_formulas = (int)n - 1;
    }
}

int gen_deriv_index(const gen_model *model, const gen_deriv *d)
{
    return (int)(d - model->derivs);
}

static void free_pointwise(gen_pointwise_plan *pp)
{
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 3; j++)
            free(pp->body[k][j]);
}

static void free_backward(gen_backward_plan *bp)
{
    for (int i = 0; bp->formulas != NULL && i < bp->n_formulas; i++) {
        free(bp->formulas[i].grad_name);
        free(bp->formulas[i].lowered);
    }
    free(bp->formulas);
    for (int i = 0; i < bp->n_saves; i++) {
        free(bp->saves[i].field);
        free(bp->saves[i].arg);
        free(bp->saves[i].at);
    }
    free(bp->saves);
    for (int i = 0; i < bp->n_temps; i++)
        free(bp->temps[i]);
    free(bp->temps);
}

static void free_symbolic(gen_symbolic_plan *sp)
{
    for (int i = 0; sp->graph_grad != NULL && i < sp->n_formulas; i++)
        free(sp->graph_grad[i]);
    free(sp->graph_grad);
}

void gen_plans_free(gen_plans *plans)
{
    for (int i = 0; plans->pointwise != NULL && i < plans->n_ops; i++)
        free_pointwise(&plans->pointwise[i]);
    free(plans->pointwise);
    for (int i = 0; plans->backward != NULL && i < plans->n_derivs; i++) {
        free_backward(&plans->backward[i]);
        free_symbolic(&plans->symbolic[i]);
    }
    free(plans->backward);
    free(plans->symbolic);
    gen_onnx_maps_free(plans->onnx, plans->n_ops);
    memset(plans, 0, sizeof(*plans));
}
