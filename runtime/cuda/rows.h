/*
 * cuda/rows.h - the reductions, scans and gradients of meta/rows.h's rows
 * on a GPU (cuda/rows.c over the kernels of cuda/rows.cu), for the CUDA
 * kernels of cuda/reduce.c.  Not public API.
 */
#ifndef YAGRAD_CUDA_ROWS_H
#define YAGRAD_CUDA_ROWS_H

#include "meta/rows.h"

/* The row reductions cuda/rows.cu runs on rows->data. */
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
yg_status yg__cuda_reduce_rows(const char *op,
                               const yg_rows *rows,
                               yg_rows_kind kind,
                               double param,
                               int values_dtype,
                               yg_tensor **values,
                               yg_tensor **indices);

/* The gradients a GPU computes on the rows (cuda/rows.cu), each in the
 * CPU kernel's order and arithmetic.  a and b are the operands of
 * yg__cuda_grad_rows beside rows->data ("per row": [outer] values from
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
yg_status yg__cuda_grad_rows(const char *op,
                             const yg_rows *rows,
                             yg_rows_grad_kind kind,
                             double param,
                             const yg_tensor *a,
                             const yg_tensor *b,
                             yg_dtype dtype,
                             const int64_t *self_sizes,
                             yg_tensor **out);

#endif /* YAGRAD_CUDA_ROWS_H */
