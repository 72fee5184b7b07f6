/*
 * pointwise.c - the pointwise iterator's loops on a GPU: the CUDA
 * module's yg_pointwise_backend (meta/pointwise.h, registered as the
 * device table's pointwise, cuda/module.c).  The iterator
 * (cpu/pointwise.c) checks, broadcasts, promotes and makes the output;
 * here the descriptor's launcher table is found by name in the module
 * (YG_CUDA_LOOPS, generated/cuda/<section>.cu) and the merged walk of
 * meta/pointwise.c is handed to the launcher in elements instead of
 * bytes, flagged linear when every operand is one dense run and 32-bit
 * when every offset fits.  yg__cuda_loop is also the copy kernel's way in
 * (cuda/device.c).
 */
#include "cuda/cuda.h"

#include "core/core.h"
#include "meta/pointwise.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(YG_POINTWISE_MAX_OPERANDS == YG_CUDA_MAX_OPERANDS &&
                   YG_MAX_DIMS == YG_CUDA_MAX_DIMS && YG_DTYPE_COUNT_ == YG_CUDA_DTYPE_COUNT,
               "cuda/launch.h's limits are the iterator's");

/* Whether every offset of a's operands, and a grid-stride index past n,
 * fit int32 (cuda/launch.h). */
static bool cuda_index32_ok(const yg_cuda_loop_args *a) {
    const int64_t lim = INT32_MAX;
    if (a->n > lim - (int64_t)YG_CUDA_BLOCK * YG_CUDA_MAX_BLOCKS)
        return false;
    for (int k = 0; k < a->nops; k++) {
        int64_t reach = 0; /* the largest |offset|; each term is within the operand */
        for (int d = 0; d < a->ndim; d++)
            reach += (a->sizes[d] - 1) * llabs(a->strides[k][d]);
        if (reach > lim)
            return false;
    }
    return true;
}

yg_status yg__cuda_loop(const char *op,
                        yg_tensor *const *ops,
                        int nops,
                        yg_cuda_launch_fn fn,
                        const double *scalars,
                        int n_scalars) {
    yg_cuda_loop_args a;
    yg_walk w;

    if (n_scalars > YG_CUDA_MAX_SCALARS || nops > YG_CUDA_MAX_OPERANDS)
        return yg__fail(
            YG_ERR_INTERNAL, "%s: %d scalars and %d operands for a CUDA loop", op, n_scalars, nops);
    int64_t numel = yg_tensor_numel(ops[0]);
    if (numel == 0)
        return YG_OK;
    yg__walk_init(&w, ops, nops);
    memset(&a, 0, sizeof a);
    a.n = numel;
    a.ndim = w.ndim;
    a.nops = nops;
    a.linear = w.ndim == 1;
    for (int k = 0; k < nops; k++) {
        int64_t esize = (int64_t)yg_dtype_size(ops[k]->dtype);
        a.ptrs[k] = w.base[k];
        for (int d = 0; d < w.ndim; d++)
            a.strides[k][d] = w.strides[d][k] / esize;
        a.linear = a.linear && a.strides[k][0] == 1;
    }
    for (int d = 0; d < w.ndim; d++)
        a.sizes[d] = w.sizes[d];
    a.index32 = cuda_index32_ok(&a);
    for (int k = 0; k < n_scalars; k++)
        a.scalars[k] = scalars[k];
    return yg__cuda_launch(op, ops[0]->storage->device_index, fn, &a);
}

/* The launchers of ref (NULL: none), looked up by name in the module on
 * first use and kept. */
static const yg_cuda_loop_table *loops_of(yg_cuda_loops_ref *ref) {
    if (ref == NULL)
        return NULL;
    const yg_cuda_loop_table *t = atomic_load_explicit(&ref->table, memory_order_acquire);
    if (t == NULL) {
        t = yg__cuda_symbol(ref->name);
        if (t != NULL)
            atomic_store_explicit(&ref->table, t, memory_order_release);
    }
    return t;
}

static yg_status
find(const yg_pointwise_desc *desc, yg_dtype dtype, const void **loop, uint32_t *dtypes) {
    const yg_cuda_loop_table *t = loops_of(desc->cuda);
    yg_cuda_launch_fn fn;

    *loop = NULL;
    *dtypes = 0;
    if (t == NULL)
        return yg__fail(YG_ERR_DEVICE, "%s: no kernel for device cuda", desc->op);
    for (int d = 0; d < YG_CUDA_DTYPE_COUNT; d++)
        *dtypes |= t->fn[d] != NULL ? UINT32_C(1) << d : 0;
    fn = t->fn[dtype];
    /* POSIX: a function pointer fits a data pointer (as dlsym's) */
    if (fn != NULL)
        memcpy((void *)loop, &fn, sizeof fn);
    return YG_OK;
}

static yg_status run(const yg_pointwise_desc *desc,
                     yg_tensor *const *ops,
                     int nops,
                     const void *loop,
                     const double *scalars) {
    yg_cuda_launch_fn fn;

    memcpy(&fn, &loop, sizeof fn);
    return yg__cuda_loop(desc->op, ops, nops, fn, scalars, desc->n_scalars);
}

const yg_pointwise_backend yg__cuda_pointwise = {.find = find, .run = run};
