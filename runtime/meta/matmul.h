/*
 * meta/matmul.h - the walk of mm and bmm that both devices share
 * (meta/matmul.c): each product of the last two dims handed to a
 * device's gemm with the operands' layouts as they are when gemm can
 * read them (a copy otherwise).  Not public API.
 */
#ifndef YAGRAD_META_MATMUL_H
#define YAGRAD_META_MATMUL_H

#include "yagrad/status.h"
#include "yagrad/tensor.h"

#include <stdbool.h>
#include <stdint.h>

/* A device's gemm: c [m, n] (row-major, leading dim ldc) = op(a) op(b),
 * op transposing when ta / tb is set, in out's dtype on out's device; m,
 * n, k > 0 and the leading dims valid for row-major BLAS.  Errors name
 * op. */
typedef yg_status (*yg_gemm_fn)(const char *op,
                                const yg_tensor *out,
                                bool ta,
                                bool tb,
                                int64_t m,
                                int64_t n,
                                int64_t k,
                                const void *a,
                                int64_t lda,
                                const void *b,
                                int64_t ldb,
                                void *c,
                                int64_t ldc);

/* Fills out, which yg__meta_mm / yg__meta_bmm made, with self @ mat2 (2-D,
 * or 3-D batches, checked there) through gemm, one call per matrix.
 * Errors are gemm's or an operand copy's. */
yg_status yg__matmul_fill(const char *op,
                          const yg_tensor *self,
                          const yg_tensor *mat2,
                          yg_tensor *out,
                          yg_gemm_fn gemm);

#endif /* YAGRAD_META_MATMUL_H */
