/*
 * meta/rows.h - the geometry of the reductions that are not plain sums
 * (prod, amax, var, norm, logsumexp, argmax, all, ...) and of the scans
 * along one dim, which both devices' kernels share.  Not public API.
 *
 * They work on "rows": self is viewed with its kept dims first and its
 * reduced dims last, and copied (converted to one working dtype) into a
 * contiguous [outer, inner] block on self's device, so each output
 * element is the reduction of one contiguous row of inner elements.  The
 * copy costs one pass over self, which these kernels pay for simplicity:
 * every layout, every dim list and every dtype then take the same path,
 * and each row is a plain loop a compiler vectorises (cpu/) or a block of
 * threads (cuda/rows.cu).
 */
#ifndef YAGRAD_META_ROWS_H
#define YAGRAD_META_ROWS_H

#include "core/core.h"

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

/* The working dtype of an extremum's rows: float64 for floating (and
 * float16, bfloat16) inputs, int64 for the others, so int64 extremes are
 * exact beyond 2^53 and storing the extremum back is exact. */
static inline yg_dtype yg__rows_extremum_dtype(yg_dtype d)
{
    return yg__dtype_is_floating(d) || yg__dtype_is_half(d) ? YG_FLOAT64 : YG_INT64;
}

/* The lines along dim (yg__rows_init_dim, float64) of a floating self
 * into *rows and of each of the n_others tensors others[i] (named
 * names[i]) into orows[i], laid out alike.  Fails with YG_ERR_DTYPE
 * unless self is float32 or float64 and YG_ERR_SHAPE ("<op>: <name> [..]
 * does not match self [..]") unless each other tensor has self's sizes;
 * on failure nothing is held. */
yg_status yg__rows_init_lines(const char *op,
                              const yg_tensor *self,
                              const yg_tensor *const *others,
                              const char *const *names,
                              int n_others,
                              int64_t dim,
                              yg_rows *rows,
                              yg_rows *orows);

/* sum and mean (mean: floating self only) of self over dim: checks the
 * dtype ("<op>: unsupported dtype float16 for self (supported: float32,
 * float64, int64, int32, bool)") and the dims (as yg__rows_init), marks
 * the reduced dims of self in reduced[], sets *count to the number of
 * elements summed into one, and makes the result *res on self's device:
 * the kept sizes (with 1 for reduced dims when keepdim), dtype self's
 * when floating, else int64.  *res is NULL on failure. */
yg_status yg__reduce_sum_prepare(const char *op,
                                 const yg_tensor *self,
                                 const int64_t *dim,
                                 int64_t dim_len,
                                 bool keepdim,
                                 bool mean,
                                 bool *reduced,
                                 int64_t *count,
                                 yg_tensor **res);

/* Fails with YG_ERR_SHAPE ("<op>: cannot reduce over zero elements of
 * self [..] (the reduced dims are empty)") when rows has rows of no
 * element: an extremum of nothing. */
yg_status yg__rows_check_nonempty(const char *op, const yg_tensor *self, const yg_rows *rows);

#endif /* YAGRAD_META_ROWS_H */
