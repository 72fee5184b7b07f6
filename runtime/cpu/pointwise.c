/*
 * pointwise.c - the pointwise iterator that every generated pointwise
 * kernel runs on (yg__pointwise and its in-place form), on the CPU or a
 * GPU.
 *
 * The generated code supplies one inner loop per compute dtype; this file
 * does everything around it: NumPy broadcasting, dtype promotion (inputs of
 * another dtype are converted to the compute dtype first, so a loop only
 * ever sees one element type), and the walk over the output.  The walk
 * describes every operand (the output first) by byte strides over the
 * output's shape, with stride 0 where an input is broadcast.  Dims of size
 * 1 are dropped and adjacent dims that are contiguous with each other for
 * every operand are merged, so a contiguous or simply broadcast problem
 * becomes one flat run: the loop is then called once per chunk over
 * thousands of elements and the compiler's vectorised body does the work.
 * Otherwise the innermost remaining dim is the loop's row and the outer
 * dims are walked with an odometer.
 *
 * On a GPU (inputs on a CUDA device) everything around the loop is the
 * same; the merged walk is handed to the descriptor's CUDA launcher
 * (cuda/launch.h) in elements instead of bytes, flagged linear when every
 * operand is one dense run and 32-bit when every offset fits.
 *
 * Threads: OpenMP (the same pool as OpenBLAS's OpenMP build, see blas.c).
 * Below YG_POINTWISE_PARALLEL_MIN elements the fork/join costs more than it
 * saves and the walk stays on the calling thread.  Work is split into
 * chunks of whole rows (or, for a flat run, of YG_POINTWISE_GRAIN
 * elements) so each thread writes a disjoint part of the output.
 */
#include "cpu/cpu.h"
#include "cuda/backend.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The output plus at most four inputs. */
#define MAX_OPERANDS 5
_Static_assert(MAX_OPERANDS == YG_CUDA_MAX_OPERANDS && YG_MAX_DIMS == YG_CUDA_MAX_DIMS,
               "cuda/launch.h's limits are the iterator's");

/* The loop of one compute dtype: a CPU loop, or a CUDA launcher. */
typedef struct loop {
    yg_loop_fn cpu;
    yg_cuda_launch_fn cuda;
} loop;

/* Below this many output elements a fork/join costs more than it saves. */
#define YG_POINTWISE_PARALLEL_MIN 32768

/* Elements per chunk of a flat run when it is split over threads. */
#define YG_POINTWISE_GRAIN 16384

/* The walk over the output after broadcasting and merging: dim 0 is the
 * innermost (the loop's row), sizes[d] > 1 for every d > 0. */
typedef struct walk {
    int nops;
    int ndim;
    int64_t sizes[YG_MAX_DIMS];
    int64_t strides[YG_MAX_DIMS][MAX_OPERANDS]; /* bytes, [dim][operand] */
    char *base[MAX_OPERANDS];
} walk;

/* Fills w from the operands (ops[0] is the output, whose shape every input
 * broadcasts to).  Dims are reversed so that dim 0 is the innermost, size-1
 * dims are dropped, the rest ordered by the output's strides and
 * mergeable neighbours merged. */
static void walk_init(walk *w, yg_tensor *const *ops, int nops) {
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
        int64_t size = w->sizes[d], st[MAX_OPERANDS];
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

/* Runs fn over rows [row_begin, row_end) of the walk; a row is the whole
 * innermost dim.  The outer dims are walked with an odometer started from
 * row_begin, so the division happens once per chunk, not once per row. */
static void
walk_rows(const walk *w, yg_loop_fn fn, const double *scalars, int64_t row_begin, int64_t row_end) {
    int64_t idx[YG_MAX_DIMS] = {0};
    char *ptrs[MAX_OPERANDS];
    int64_t rem = row_begin;

    for (int k = 0; k < w->nops; k++)
        ptrs[k] = w->base[k];
    for (int d = 1; d < w->ndim; d++) {
        idx[d] = rem % w->sizes[d];
        rem /= w->sizes[d];
        for (int k = 0; k < w->nops; k++)
            ptrs[k] += idx[d] * w->strides[d][k];
    }
    for (int64_t r = row_begin; r < row_end; r++) {
        fn(ptrs, w->strides[0], w->sizes[0], scalars);
        for (int d = 1; d < w->ndim; d++) {
            if (++idx[d] < w->sizes[d]) {
                for (int k = 0; k < w->nops; k++)
                    ptrs[k] += w->strides[d][k];
                break;
            }
            idx[d] = 0;
            for (int k = 0; k < w->nops; k++)
                ptrs[k] -= (w->sizes[d] - 1) * w->strides[d][k];
        }
    }
}

/* Runs fn over a flat run (ndim 1): elements [begin, end). */
static void
walk_flat(const walk *w, yg_loop_fn fn, const double *scalars, int64_t begin, int64_t end) {
    char *ptrs[MAX_OPERANDS];
    for (int k = 0; k < w->nops; k++)
        ptrs[k] = w->base[k] + begin * w->strides[0][k];
    fn(ptrs, w->strides[0], end - begin, scalars);
}

/* Calls fn over every element of ops[0] (numel > 0), in parallel when the
 * problem is large enough to pay for it. */
static void
run_loop(yg_tensor *const *ops, int nops, yg_loop_fn fn, const double *scalars, int64_t numel) {
    walk w;
    walk_init(&w, ops, nops);
    bool parallel = numel >= YG_POINTWISE_PARALLEL_MIN;

    if (w.ndim == 1) {
        int64_t n = w.sizes[0];
        int64_t nchunks = (n + YG_POINTWISE_GRAIN - 1) / YG_POINTWISE_GRAIN;
        if (!parallel || nchunks < 2) {
            walk_flat(&w, fn, scalars, 0, n);
            return;
        }
#pragma omp parallel for schedule(static)
        for (int64_t c = 0; c < nchunks; c++) {
            int64_t begin = c * YG_POINTWISE_GRAIN;
            int64_t end = begin + YG_POINTWISE_GRAIN < n ? begin + YG_POINTWISE_GRAIN : n;
            walk_flat(&w, fn, scalars, begin, end);
        }
        return;
    }

    int64_t rows = numel / w.sizes[0];
    int64_t rows_per_chunk = YG_POINTWISE_GRAIN / w.sizes[0];
    if (rows_per_chunk < 1)
        rows_per_chunk = 1;
    int64_t nchunks = (rows + rows_per_chunk - 1) / rows_per_chunk;
    if (!parallel || nchunks < 2) {
        walk_rows(&w, fn, scalars, 0, rows);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < nchunks; c++) {
        int64_t begin = c * rows_per_chunk;
        int64_t end = begin + rows_per_chunk < rows ? begin + rows_per_chunk : rows;
        walk_rows(&w, fn, scalars, begin, end);
    }
}

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
    walk w;

    if (n_scalars > YG_CUDA_MAX_SCALARS || nops > MAX_OPERANDS)
        return yg__fail(
            YG_ERR_INTERNAL, "%s: %d scalars and %d operands for a CUDA loop", op, n_scalars, nops);
    int64_t numel = yg_tensor_numel(ops[0]);
    if (numel == 0)
        return YG_OK;
    walk_init(&w, ops, nops);
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
    return yg__cuda()->launch(op, ops[0]->storage->device_index, fn, &a);
}

/* Runs the loop the check found over every element of ops[0], on the
 * inputs' device. */
static yg_status run(const yg_pointwise_desc *desc,
                     yg_tensor *const *ops,
                     const loop *fn,
                     const double *scalars,
                     int64_t numel) {
    int nops = desc->n_inputs + 1;
    if (numel == 0)
        return YG_OK;
    if (fn->cuda != NULL)
        return yg__cuda_loop(desc->op, ops, nops, fn->cuda, scalars, desc->n_scalars);
    run_loop(ops, nops, fn->cpu, scalars, numel);
    return YG_OK;
}

/* On an integer compute dtype, every operand scalar must be an integer
 * that dtype holds: the loop converts it to the element type, which would
 * truncate 2.5 to 2 silently (and be undefined for NaN or 1e300).  PyTorch
 * refuses a floating alpha for integral tensors the same way. */
static yg_status check_scalars(const yg_pointwise_desc *desc,
                               const double *scalars,
                               yg_dtype dtype,
                               const char *arg) {
    double lo, hi; /* the dtype's range, [lo, hi) */

    if (dtype == YG_INT64) {
        lo = -9223372036854775808.0;
        hi = 9223372036854775808.0;
    } else if (dtype == YG_INT32) {
        lo = -2147483648.0;
        hi = 2147483648.0;
    } else {
        return YG_OK;
    }
    for (int k = 0; k < desc->n_scalars; k++) {
        double v = scalars[k];
        if (!isfinite(v) || v != trunc(v))
            return yg__fail(YG_ERR_DTYPE,
                            "%s: %s %g is not an integer, %s is %s",
                            desc->op,
                            desc->scalar_names[k],
                            v,
                            arg,
                            yg_dtype_name(dtype));
        if (v < lo || v >= hi)
            return yg__fail(YG_ERR_DTYPE,
                            "%s: %s %.0f is out of range for %s, the dtype of %s",
                            desc->op,
                            desc->scalar_names[k],
                            v,
                            yg_dtype_name(dtype),
                            arg);
    }
    return YG_OK;
}

/* The CUDA module's launchers of ref (NULL: none), looked up by name on
 * first use and kept (cpu.h). */
static const yg_cuda_loop_table *cuda_loops(yg_cuda_loops_ref *ref) {
    if (ref == NULL)
        return NULL;
    const yg_cuda_loop_table *t = atomic_load_explicit(&ref->table, memory_order_acquire);
    if (t == NULL) {
        t = yg__cuda()->loops(ref->name);
        if (t != NULL)
            atomic_store_explicit(&ref->table, t, memory_order_release);
    }
    return t;
}

/* The supported dtypes of a loop table, "float32, float64", into buf. */
static void
list_dtypes(const yg_loop_table *cpu, const yg_cuda_loop_table *cuda, char *buf, size_t len) {
    size_t pos = 0;
    buf[0] = '\0';
    for (int d = 0; d < YG_DTYPE_COUNT_ && pos < len; d++) {
        bool has = cpu != NULL ? cpu->fn[d] != NULL : cuda != NULL && cuda->fn[d] != NULL;
        if (has)
            pos += (size_t)snprintf(
                buf + pos, len - pos, "%s%s", pos ? ", " : "", yg_dtype_name((yg_dtype)d));
    }
    if (pos == 0)
        snprintf(buf, len, "none");
}

/* Checks the descriptor, inputs and operand scalars, and finds the compute
 * dtype and its loop on the inputs' device.  Fails with YG_ERR_DTYPE
 * naming the supported dtypes when the kernel has no loop for the
 * promoted dtype, with YG_ERR_DEVICE when the inputs are on two devices
 * or the descriptor has no CUDA loops. */
static yg_status check_inputs(const yg_pointwise_desc *desc,
                              const yg_tensor *const *inputs,
                              const double *scalars,
                              yg_dtype *out_dtype,
                              loop *out_fn) {
    if (desc->n_inputs < 1 || desc->n_inputs > MAX_OPERANDS - 1)
        return yg__fail(YG_ERR_INTERNAL,
                        "%s: pointwise descriptor has %d inputs (expected 1 to %d)",
                        desc->op,
                        desc->n_inputs,
                        MAX_OPERANDS - 1);
    for (int i = 0; i < desc->n_inputs; i++)
        YG_RETURN_IF_ERROR(yg__check_defined(desc->op, desc->input_names[i], inputs[i]));
    YG_RETURN_IF_ERROR(
        yg__check_devices(desc->op, desc->n_inputs, inputs, desc->input_names, NULL, 0, NULL));
    yg_device device = inputs[0]->storage->device;
    yg_dtype dtype = inputs[0]->dtype;
    for (int i = 1; i < desc->n_inputs; i++)
        dtype = yg__promote_types(dtype, inputs[i]->dtype);
    const char *arg = desc->input_names[0];
    for (int i = desc->n_inputs - 1; i >= 0; i--) {
        if (inputs[i]->dtype == dtype)
            arg = desc->input_names[i];
    }
    const yg_loop_table *table = NULL;
    const yg_cuda_loop_table *cuda = NULL;
    bool found;
    if (device == YG_CUDA) {
        cuda = cuda_loops(desc->cuda);
        if (cuda == NULL)
            return yg__fail(YG_ERR_DEVICE, "%s: no kernel for device cuda", desc->op);
        found = cuda->fn[dtype] != NULL;
    } else {
        table = desc->loops[yg_cpu_capability_get()];
        if (table == NULL)
            table = desc->loops[YG_CPU_BASELINE];
        found = table != NULL && table->fn[dtype] != NULL;
    }
    if (!found) {
        char supported[128];
        list_dtypes(table, cuda, supported, sizeof supported);
        return yg__fail(YG_ERR_DTYPE,
                        "%s: unsupported dtype %s for %s (supported: %s)",
                        desc->op,
                        yg_dtype_name(dtype),
                        arg,
                        supported);
    }
    YG_RETURN_IF_ERROR(check_scalars(desc, scalars, dtype, arg));
    *out_dtype = dtype;
    out_fn->cpu = table != NULL ? table->fn[dtype] : NULL;
    out_fn->cuda = cuda != NULL ? cuda->fn[dtype] : NULL;
    return YG_OK;
}

/* The broadcast shape of all inputs. */
static yg_status broadcast_all(const yg_pointwise_desc *desc,
                               const yg_tensor *const *inputs,
                               int64_t *sizes,
                               int64_t *ndim) {
    int64_t acc[YG_MAX_DIMS];
    int64_t acc_ndim = inputs[0]->ndim;

    memcpy(acc, inputs[0]->sizes, sizeof(int64_t) * (size_t)acc_ndim);
    for (int i = 1; i < desc->n_inputs; i++) {
        const yg_tensor *t = inputs[i];
        /* Name the first input while only two are involved, so the usual
         * binary message reads "cannot broadcast self [..] with other [..]". */
        const char *aname = i == 1 ? desc->input_names[0] : "the broadcast of earlier inputs";
        int64_t next[YG_MAX_DIMS];
        /* Separate output: yg__broadcast_shapes does not allow aliasing. */
        YG_RETURN_IF_ERROR(yg__broadcast_shapes(desc->op,
                                                aname,
                                                acc,
                                                acc_ndim,
                                                desc->input_names[i],
                                                t->sizes,
                                                t->ndim,
                                                next,
                                                &acc_ndim));
        memcpy(acc, next, sizeof(int64_t) * (size_t)acc_ndim);
    }
    memcpy(sizes, acc, sizeof(int64_t) * (size_t)acc_ndim);
    *ndim = acc_ndim;
    return YG_OK;
}

/* The result's element count: it exists, so its sizes' product fits
 * (sizes.h), but only when a 0 is taken first. */
static int64_t numel_of(const int64_t *sizes, int64_t ndim) {
    return yg__sizes_product(sizes, ndim);
}

/* Converts the inputs whose dtype differs from dtype; conv[i] is a new
 * reference (the input itself when no conversion is needed). */
static yg_status convert_inputs(const yg_pointwise_desc *desc,
                                const yg_tensor *const *inputs,
                                yg_dtype dtype,
                                yg_tensor **conv) {
    for (int i = 0; i < desc->n_inputs; i++) {
        if (inputs[i]->dtype == dtype) {
            conv[i] = yg_retain((yg_tensor *)inputs[i]);
            continue;
        }
        yg_status st = yg__tensor_contiguous_as(inputs[i], dtype, false, &conv[i]);
        if (st != YG_OK)
            return st;
    }
    return YG_OK;
}

/* The out-of-place walk; out_dtype < 0 means the compute dtype. */
static yg_status pointwise(const yg_pointwise_desc *desc,
                           const yg_tensor *const *inputs,
                           const double *scalars,
                           int out_dtype,
                           yg_tensor **out) {
    yg_tensor *ops[MAX_OPERANDS] = {NULL};
    int64_t sizes[YG_MAX_DIMS];
    int64_t ndim = 0;
    yg_dtype dtype;
    loop fn;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(check_inputs(desc, inputs, scalars, &dtype, &fn));
    YG_RETURN_IF_ERROR(broadcast_all(desc, inputs, sizes, &ndim));
    st = convert_inputs(desc, inputs, dtype, ops + 1);
    if (st != YG_OK)
        goto out;
    st = yg__tensor_new_on(desc->op,
                           sizes,
                           ndim,
                           out_dtype < 0 ? dtype : (yg_dtype)out_dtype,
                           inputs[0]->storage->device,
                           inputs[0]->storage->device_index,
                           &ops[0]);
    if (st != YG_OK)
        goto out;
    st = run(desc, ops, &fn, scalars, numel_of(sizes, ndim));
    if (st != YG_OK)
        goto out;
    *out = ops[0];
    ops[0] = NULL;
out:
    for (int k = 0; k < MAX_OPERANDS; k++)
        yg_release(ops[k]);
    return st;
}

yg_status yg__pointwise(const yg_pointwise_desc *desc,
                        const yg_tensor *const *inputs,
                        const double *scalars,
                        yg_tensor **out) {
    return pointwise(desc, inputs, scalars, -1, out);
}

yg_status yg__pointwise_to(const yg_pointwise_desc *desc,
                           const yg_tensor *const *inputs,
                           const double *scalars,
                           yg_dtype out_dtype,
                           yg_tensor **out) {
    *out = NULL;
    if ((int)out_dtype < 0 || out_dtype >= YG_DTYPE_COUNT_)
        return yg__fail(YG_ERR_INTERNAL, "%s: invalid output dtype %d", desc->op, (int)out_dtype);
    return pointwise(desc, inputs, scalars, (int)out_dtype, out);
}

yg_status yg__pointwise_inplace(const yg_pointwise_desc *desc,
                                yg_tensor *self,
                                const yg_tensor *const *inputs,
                                const double *scalars) {
    yg_tensor *ops[MAX_OPERANDS] = {NULL};
    int64_t sizes[YG_MAX_DIMS];
    int64_t ndim = 0;
    yg_dtype dtype;
    loop fn;
    yg_status st;
    char sbuf[128], bbuf[128];

    YG_RETURN_IF_ERROR(yg__check_defined(desc->op, desc->input_names[0], self));
    if (inputs[0] != self)
        return yg__fail(
            YG_ERR_INTERNAL, "%s: in-place pointwise call whose first input is not self", desc->op);
    YG_RETURN_IF_ERROR(check_inputs(desc, inputs, scalars, &dtype, &fn));
    YG_RETURN_IF_ERROR(broadcast_all(desc, inputs, sizes, &ndim));
    if (ndim != self->ndim || memcmp(sizes, self->sizes, sizeof(int64_t) * (size_t)ndim) != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: result shape %s does not match %s %s (in-place ops cannot broadcast "
                        "self)",
                        desc->op,
                        yg__format_sizes(sizes, ndim, bbuf, sizeof bbuf),
                        desc->input_names[0],
                        yg__format_sizes(self->sizes, self->ndim, sbuf, sizeof sbuf));
    if (dtype != self->dtype)
        return yg__fail(YG_ERR_DTYPE,
                        "%s: result dtype %s cannot be stored in %s of dtype %s",
                        desc->op,
                        yg_dtype_name(dtype),
                        desc->input_names[0],
                        yg_dtype_name(self->dtype));
    /* A broadcast (stride 0) self would have several elements written
     * through one address; writing such a view in place is refused. */
    for (int32_t d = 0; d < self->ndim; d++) {
        if (self->strides[d] == 0 && self->sizes[d] > 1)
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s: %s is an expanded view (stride 0 in dim %d); clone it before "
                            "writing in place",
                            desc->op,
                            desc->input_names[0],
                            (int)d);
    }
    ops[0] = yg_retain(self);
    st = convert_inputs(desc, inputs, dtype, ops + 1);
    if (st != YG_OK)
        goto out;
    st = run(desc, ops, &fn, scalars, numel_of(sizes, ndim));
    if (st != YG_OK)
        goto out;
    yg__tensor_bump_version(self);
out:
    for (int k = 0; k < MAX_OPERANDS; k++)
        yg_release(ops[k]);
    return st;
}
