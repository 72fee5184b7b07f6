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
 * On another device everything around the loop is the same; its backend
 * (core/backend.h's pointwise, meta/pointwise.h) finds the loop and runs
 * it over the same merged walk (meta/pointwise.c): the CUDA module hands
 * it to the descriptor's launcher (cuda/pointwise.c).
 *
 * Threads: OpenMP (the same pool as OpenBLAS's OpenMP build, see blas.c).
 * Below YG_POINTWISE_PARALLEL_MIN elements the fork/join costs more than it
 * saves and the walk stays on the calling thread.  Work is split into
 * chunks of whole rows (or, for a flat run, of YG_POINTWISE_GRAIN
 * elements) so each thread writes a disjoint part of the output.
 */
#include "cpu/cpu.h"

#include "core/backend.h"
#include "decls/inplace_fill.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPERANDS YG_POINTWISE_MAX_OPERANDS

/* The loop of one compute dtype: a CPU loop, or the one another device's
 * backend found (be: that backend's pointwise table). */
typedef struct loop {
    yg_loop_fn cpu;
    const void *other;
    const yg_pointwise_backend *be;
} loop;

/* Below this many output elements a fork/join costs more than it saves. */
#define YG_POINTWISE_PARALLEL_MIN 32768

/* Elements per chunk of a flat run when it is split over threads. */
#define YG_POINTWISE_GRAIN 16384

/* Runs fn over rows [row_begin, row_end) of the walk; a row is the whole
 * innermost dim.  The outer dims are walked with an odometer started from
 * row_begin, so the division happens once per chunk, not once per row. */
static void
walk_rows(const yg_walk *w, yg_loop_fn fn, const double *scalars, int64_t row_begin, int64_t row_end) {
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
walk_flat(const yg_walk *w, yg_loop_fn fn, const double *scalars, int64_t begin, int64_t end) {
    char *ptrs[MAX_OPERANDS];
    for (int k = 0; k < w->nops; k++)
        ptrs[k] = w->base[k] + begin * w->strides[0][k];
    fn(ptrs, w->strides[0], end - begin, scalars);
}

/* Calls fn over every element of ops[0] (numel > 0), in parallel when the
 * problem is large enough to pay for it. */
static void
run_loop(yg_tensor *const *ops, int nops, yg_loop_fn fn, const double *scalars, int64_t numel) {
    yg_walk w;
    yg__walk_init(&w, ops, nops);
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
    if (fn->be != NULL)
        return fn->be->run(desc, ops, nops, fn->other, scalars);
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

/* The dtypes of mask (1 << dtype), "float32, float64", into buf. */
static void list_dtypes(uint32_t mask, char *buf, size_t len) {
    size_t pos = 0;
    buf[0] = '\0';
    for (int d = 0; d < YG_DTYPE_COUNT_ && pos < len; d++) {
        if (mask & (UINT32_C(1) << d))
            pos += (size_t)snprintf(
                buf + pos, len - pos, "%s%s", pos ? ", " : "", yg_dtype_name((yg_dtype)d));
    }
    if (pos == 0)
        snprintf(buf, len, "none");
}

/* Checks the descriptor, inputs and operand scalars, and finds the compute
 * dtype and its loop on the inputs' device (*store_dtype: the dtype the
 * result is stored in, float16 or bfloat16 where the compute dtype is
 * float32 for them, else the compute dtype).  Fails with YG_ERR_DTYPE
 * naming the supported dtypes when the kernel has no loop for the
 * promoted dtype, with YG_ERR_DEVICE when the inputs are on two devices
 * or their device's backend has no loops for the descriptor. */
static yg_status check_inputs(const yg_pointwise_desc *desc,
                              const yg_tensor *const *inputs,
                              const double *scalars,
                              yg_dtype *out_dtype,
                              yg_dtype *store_dtype,
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
    uint32_t mask = 0;
    *store_dtype = dtype;
    out_fn->cpu = NULL;
    out_fn->other = NULL;
    out_fn->be = NULL;
    if (device != YG_CPU) {
        /* The tensor exists, so its backend registered. */
        out_fn->be = yg__backend_of(device)->pointwise;
        if (out_fn->be == NULL)
            return yg__fail(YG_ERR_DEVICE,
                            "%s: no kernel for device %s",
                            desc->op,
                            yg__device_name(device));
        YG_RETURN_IF_ERROR(out_fn->be->find(desc, dtype, &out_fn->other, &mask));
    } else {
        const yg_loop_table *table = desc->loops[yg_cpu_capability_get()];
        if (table == NULL)
            table = desc->loops[YG_CPU_BASELINE];
        for (int d = 0; table != NULL && d < YG_DTYPE_COUNT_; d++)
            mask |= table->fn[d] != NULL ? UINT32_C(1) << d : 0;
        out_fn->cpu = table != NULL ? table->fn[dtype] : NULL;
        /* A claimed 16-bit float runs the float32 loop (pointwise.h). */
        if (table != NULL && table->fn[YG_FLOAT32] != NULL) {
            mask |= desc->half_dtypes;
            if (out_fn->cpu == NULL && (desc->half_dtypes & (UINT32_C(1) << dtype))) {
                out_fn->cpu = table->fn[YG_FLOAT32];
                *store_dtype = dtype;
                dtype = YG_FLOAT32;
            }
        }
    }
    if (out_fn->cpu == NULL && out_fn->other == NULL) {
        char supported[128];
        list_dtypes(mask, supported, sizeof supported);
        return yg__fail(YG_ERR_DTYPE,
                        "%s: unsupported dtype %s for %s (supported: %s)",
                        desc->op,
                        yg_dtype_name(dtype),
                        arg,
                        supported);
    }
    YG_RETURN_IF_ERROR(check_scalars(desc, scalars, dtype, arg));
    *out_dtype = dtype;
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
    yg_dtype dtype, store;
    loop fn;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(check_inputs(desc, inputs, scalars, &dtype, &store, &fn));
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
    if (out_dtype < 0 && store != dtype) {
        /* float16/bfloat16 computed in float32: round once on store */
        st = yg__tensor_contiguous_as(ops[0], store, false, out);
        goto out;
    }
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

/* The in-place form on a float16/bfloat16 self: the out-of-place result
 * (computed in float32, rounded once) copied into self, which must have
 * the result's shape. */
static yg_status half_inplace(const yg_pointwise_desc *desc,
                              yg_tensor *self,
                              const yg_tensor *const *inputs,
                              const double *scalars) {
    yg_tensor *res = NULL, *same = NULL;
    char sbuf[128], rbuf[128];
    yg_status st = pointwise(desc, inputs, scalars, -1, &res);

    if (st == YG_OK && (res->ndim != self->ndim ||
                        memcmp(res->sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim) != 0))
        st = yg__fail(YG_ERR_SHAPE,
                      "%s: result shape %s does not match %s %s (in-place ops cannot broadcast "
                      "self)",
                      desc->op,
                      yg__format_sizes(res->sizes, res->ndim, rbuf, sizeof rbuf),
                      desc->input_names[0],
                      yg__format_sizes(self->sizes, self->ndim, sbuf, sizeof sbuf));
    if (st == YG_OK)
        st = yg__kernel_copy_(self, res, &same);
    yg_release(same);
    yg_release(res);
    return st;
}

yg_status yg__pointwise_inplace(const yg_pointwise_desc *desc,
                                yg_tensor *self,
                                const yg_tensor *const *inputs,
                                const double *scalars) {
    yg_tensor *ops[MAX_OPERANDS] = {NULL};
    int64_t sizes[YG_MAX_DIMS];
    int64_t ndim = 0;
    yg_dtype dtype, store;
    loop fn;
    yg_status st;
    char sbuf[128], bbuf[128];

    YG_RETURN_IF_ERROR(yg__check_defined(desc->op, desc->input_names[0], self));
    if (inputs[0] != self)
        return yg__fail(
            YG_ERR_INTERNAL, "%s: in-place pointwise call whose first input is not self", desc->op);
    YG_RETURN_IF_ERROR(check_inputs(desc, inputs, scalars, &dtype, &store, &fn));
    if (store != dtype)
        return half_inplace(desc, self, inputs, scalars);
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
