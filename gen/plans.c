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
    plans->pointwise = gen_xcalloc((size_t)model->n_ops + 1, sizeof(gen_pointwise_plan));
}

static void free_pointwise(gen_pointwise_plan *pp)
{
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 3; j++)
            free(pp->body[k][j]);
}

void gen_plans_free(gen_plans *plans)
{
    for (int i = 0; plans->pointwise != NULL && i < plans->n_ops; i++)
        free_pointwise(&plans->pointwise[i]);
    free(plans->pointwise);
    gen_onnx_maps_free(plans->onnx, plans->n_ops);
    memset(plans, 0, sizeof(*plans));
}
