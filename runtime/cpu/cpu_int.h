/*
 * cpu_int.h - helpers shared by the CPU kernels in runtime/cpu/ only (the
 * kernels themselves are declared in cpu.h).
 *
 * Reductions that are not plain sums (prod, amax, var, norm, logsumexp,
 * argmax, all, ...) and the scans along one dim work on "rows": self is
 * viewed with its kept dims first and its reduced dims last, and copied
 * (converted to one working dtype) into a contiguous [outer, inner]
 * block, so each output element is the reduction of one contiguous row of
 * inner elements.  The copy costs one pass over self, which these kernels
 * pay for simplicity: every layout, every dim list and every dtype then
 * take the same path, and each row is a plain loop a compiler vectorises.
 */
#ifndef YAGRAD_CPU_INT_H
#define YAGRAD_CPU_INT_H

#include "cpu/cpu.h"

typedef struct yg_rows {
    int64_t outer;                  /* number of rows: elements of the result */
    int64_t inner;                  /* row length: elements reduced into one */
    int32_t ndim;                   /* dims of self */
    bool reduced[YG_MAX_DIMS];      /* per dim of self */
    int64_t perm[YG_MAX_DIMS];      /* kept dims, then reduced dims */
    int64_t out_sizes[YG_MAX_DIMS]; /* sizes of the result (keepdim applied) */
    int64_t out_ndim;
    yg_tensor *data; /* contiguous [outer, inner] copy, or NULL */
} yg_rows;

/* Fills rows for reducing self over dim (an empty list means every dim;
 * negative dims wrap; a repeated dim is an error naming op) and, when
 * dtype is a valid yg_dtype, copies self converted to dtype into
 * rows->data, on self's device.  Pass YG_DTYPE_COUNT_ as dtype to get
 * only the geometry.  On failure nothing is held.  Release with
 * yg__rows_free. */
yg_status yg__rows_init(const char *op,
                        const yg_tensor *self,
                        const int64_t *dim,
                        int64_t dim_len,
                        bool keepdim,
                        yg_dtype dtype,
                        yg_rows *rows);

/* The row reductions a GPU runs on rows->data (cuda/rows.cu). */
typedef enum yg_rows_kind {
    YG_ROWS_AMAX,
    YG_ROWS_AMIN,
    YG_ROWS_ARGMAX,
    YG_ROWS_ARGMIN,
    YG_ROWS_MAX_DIM,
    YG_ROWS_MIN_DIM,
    YG_ROWS_ALL,
    YG_ROWS_ANY,
    YG_ROWS_VAR,
    YG_ROWS_STD,
    YG_ROWS_NORM,
    YG_ROWS_LOGSUMEXP,
    YG_ROWS_PROD,
} yg_rows_kind;

/* Reduces the rows (data on a GPU: float64, int64 or bool) by kind with
 * the CPU's rules into *values (of the result's sizes, converted to
 * values_dtype) and *indices (int64), each when not NULL.  param: var's
 * correction, norm's p.  Errors name op. */
yg_status yg__rows_reduce_cuda(const char *op,
                               const yg_rows *rows,
                               yg_rows_kind kind,
                               double param,
                               int values_dtype,
                               yg_tensor **values,
                               yg_tensor **indices);

/* The gradients a GPU computes on the rows (cuda/rows.cu), each in the
 * CPU kernel's order and arithmetic.  a and b are the operands of
 * yg__rows_grad_cuda beside rows->data ("per row": [outer] values from
 * yg__rows_per_row; "lines": [outer, inner] rows of a tensor of self's
 * sizes, laid out as rows->data). */
typedef enum yg_rows_grad_kind {
    YG_ROWS_GRAD_PROD,           /* prod_backward: a grad_output per row */
    YG_ROWS_GRAD_PROD_DOUBLE,    /* prod_double_backward: a grad's lines, b grad_output per row */
    YG_ROWS_GRAD_NORM,           /* norm_backward: a grad_output, b output per row; param p */
    YG_ROWS_GRAD_MINMAX,         /* minmax_backward: a grad_output, b output per row */
    YG_ROWS_GRAD_CUMPROD,        /* cumprod_backward: a grad_output's lines */
    YG_ROWS_GRAD_CUMPROD_JVP,    /* cumprod_jvp: a grad's lines */
    YG_ROWS_GRAD_CUMPROD_DOUBLE, /* cumprod_double_backward: a grad's, b grad_output's lines */
} yg_rows_grad_kind;

/* The gradient kind of the rows (data on a GPU, float64) with operands a
 * and b (float64, contiguous, on that GPU; b NULL where kind reads none):
 * computed into a float64 [outer, inner] block there, converted once to
 * dtype and laid out back in self_sizes (yg__rows_unpermute) as the new
 * *out.  param: norm's p.  Errors name op (YG_ERR_DEVICE for a launch,
 * YG_ERR_OUT_OF_MEMORY); *out is NULL on failure. */
yg_status yg__rows_grad_cuda(const char *op,
                             const yg_rows *rows,
                             yg_rows_grad_kind kind,
                             double param,
                             const yg_tensor *a,
                             const yg_tensor *b,
                             yg_dtype dtype,
                             const int64_t *self_sizes,
                             yg_tensor **out);

/* The same geometry for a scan along one dim: the rows are the lines of
 * self along dim (inner = size of dim, out_sizes = self's sizes). */
yg_status yg__rows_init_dim(const char *op,
                            const yg_tensor *self,
                            int64_t dim,
                            yg_dtype dtype,
                            yg_rows *rows);

void yg__rows_free(yg_rows *rows);

/* A contiguous copy in working dtype of t, a tensor with the result's
 * sizes (keepdim or not), as [outer] values: its row-major order is the
 * order of the rows.  Fails with YG_ERR_SHAPE ("<op>: <name> [..] does
 * not match the reduced shape [..]") when t has another number of
 * elements. */
yg_status yg__rows_per_row(const char *op,
                           const char *name,
                           const yg_rows *rows,
                           const yg_tensor *t,
                           yg_dtype dtype,
                           yg_tensor **out);

/* Turns block, a contiguous [outer, inner] tensor laid out like
 * rows->data, back into a new contiguous tensor with self's sizes. */
yg_status yg__rows_unpermute(const yg_rows *rows,
                             const yg_tensor *block,
                             const int64_t *self_sizes,
                             yg_tensor **out);

/* Fails with YG_ERR_DEVICE unless t is on the CPU, and YG_ERR_DTYPE
 * ("<op>: unsupported dtype int64 for <arg> (supported: float32,
 * float64)") unless it is float32 or float64. */
yg_status yg__cpu_check_floating(const char *op, const char *arg, const yg_tensor *t);
/* Its dtype half, for the kernels that serve every device. */
yg_status yg__check_floating(const char *op, const char *arg, const yg_tensor *t);

/* Writes v to element i of the contiguous tensor t, converted to t's
 * dtype (any dtype, by the rules of core/convert.c). */
void yg__store_f64(yg_tensor *t, int64_t i, double v);

/* ---- creation and random ops (creation.c, random.c) ---- */

/* The dtype of a creation op's result: *dtype, or dflt when dtype is NULL.
 * Fails with YG_ERR_DTYPE "<op>: invalid dtype <n>" for a value that is
 * no yg_dtype. */
yg_status yg__creation_dtype(const char *op, const yg_dtype *dtype, yg_dtype dflt, yg_dtype *out);

/* A new contiguous uninitialised tensor of sizes size (size_len entries),
 * after checking them with messages naming op: at most YG_MAX_DIMS dims,
 * no negative size, no element count overflow. */
/* Copies src converted to dtype into rows of dst (copy.c): src seen as
 * [outer, rest] with outer the product of its sizes before dim, row o of
 * it written contiguously at dst + o * dst_row_bytes.  Nothing for an
 * empty src.  cat writes each piece into its slot of the result so. */
void yg__cpu_copy_rows(char *dst,
                       int64_t dst_row_bytes,
                       const yg_tensor *src, /* borrowed, CPU */
                       int32_t dim,
                       yg_dtype dtype);

yg_status yg__creation_empty(const char *op,
                             const int64_t *size,
                             int64_t size_len,
                             yg_dtype dtype,
                             yg_tensor **out);
/* yg__creation_empty on device (cuda:0 for YG_CUDA: a Device argument
 * names no index). */
yg_status yg__creation_empty_on(const char *op,
                                const int64_t *size,
                                int64_t size_len,
                                yg_dtype dtype,
                                yg_device device,
                                yg_tensor **out);

/* Fails with YG_ERR_INVALID_ARGUMENT "<op>: <name> <v> is out of range
 * for int64" when dtype is int64 and v has no int64 value. */
yg_status yg__creation_check_value(const char *op, const char *name, double v, yg_dtype dtype);

#endif /* YAGRAD_CPU_INT_H */
