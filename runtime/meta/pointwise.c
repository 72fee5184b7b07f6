/*
 * meta/pointwise.c - the merged walk of a pointwise op's operands
 * (meta/pointwise.h), which the CPU's loops and a GPU's launchers both
 * walk.
 */
#include "meta/pointwise.h"

#include "core/core.h"

#include <stdbool.h>
#include <stdlib.h>

/* Fills w from the operands (ops[0] is the output, whose shape every input
 * broadcasts to).  Dims are reversed so that dim 0 is the innermost, size-1
 * dims are dropped, the rest ordered by the output's strides and
 * mergeable neighbours merged. */
void yg__walk_init(yg_walk *w, yg_tensor *const *ops, int nops) {
    const yg_tensor *o = ops[0];
    int nd = 0;

    w->nops = nops;
    for (int k = 0; k < nops; k++)
        w->base[k] = yg__tensor_ptr(ops[k]);
    for (int32_t d = o->ndim - 1; d >= 0; d--) {
        if (o->sizes[d] == 1)
            continue;
        w->sizes[nd] = o->sizes[d];
        for (int k = 0; k < nops; k++) {
            const yg_tensor *t = ops[k];
            int32_t td = d - (o->ndim - t->ndim);
            int64_t esize = (int64_t)yg_dtype_size(t->dtype);
            bool present = td >= 0 && t->sizes[td] != 1;
            w->strides[nd][k] = present ? t->strides[td] * esize : 0;
        }
        nd++;
    }
    /* Walk the output in its memory order: dims sorted by its stride,
     * smallest first (a stable insertion sort; a contiguous output is in
     * order already).  Each element is independent, so the order is free,
     * and a transposed output with inputs of its layout (a gradient summed
     * into a transposed buffer) then walks as one linear run. */
    for (int d = 1; d < nd; d++) {
        int64_t size = w->sizes[d], st[YG_POINTWISE_MAX_OPERANDS];
        for (int k = 0; k < nops; k++)
            st[k] = w->strides[d][k];
        int e = d;
        for (; e > 0 && llabs(w->strides[e - 1][0]) > llabs(st[0]); e--) {
            w->sizes[e] = w->sizes[e - 1];
            for (int k = 0; k < nops; k++)
                w->strides[e][k] = w->strides[e - 1][k];
        }
        w->sizes[e] = size;
        for (int k = 0; k < nops; k++)
            w->strides[e][k] = st[k];
    }
    /* Merge dim d+1 into d when, for every operand, stepping once in d+1
     * is the same as stepping sizes[d] times in d. */
    int merged = 0;
    for (int d = 0; d < nd; d++) {
        if (merged > 0) {
            bool ok = true;
            int m = merged - 1;
            /* Only walked for a non-empty result: within its extent. */
            for (int k = 0; k < nops && ok; k++)
                ok = w->strides[d][k] == w->strides[m][k] * w->sizes[m];
            if (ok) {
                w->sizes[m] *= w->sizes[d];
                continue;
            }
        }
        w->sizes[merged] = w->sizes[d];
        for (int k = 0; k < nops; k++)
            w->strides[merged][k] = w->strides[d][k];
        merged++;
    }
    if (merged == 0) {
        /* A 0-dim output or one made only of size-1 dims: one element. */
        w->sizes[0] = 1;
        for (int k = 0; k < nops; k++)
            w->strides[0][k] = 0;
        merged = 1;
    }
    w->ndim = merged;
}
