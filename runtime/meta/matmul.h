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

/* A device's batched gemm: for each i in [0, batch), the matrix at c +
 * i * stride_c = op(the matrix at a + i * stride_a) op(the one at b + i *
 * stride_b), strides in elements (stride_a and stride_b may be 0: one
 * matrix for every entry), the rest as yg_gemm_fn; batch > 1.  Errors
 * name op. */
typedef yg_status (*yg_gemm_batched_fn)(const char *op,
                                        const yg_tensor *out,
                                        bool ta,
                                        bool tb,
                                        int64_t m,
                                        int64_t n,
                                        int64_t k,
                                        const void *a,
                                        int64_t lda,
                                        int64_t stride_a,
                                        const void *b,
                                        int64_t ldb,
                                        int64_t stride_b,
                                        void *c,
                                        int64_t ldc,
                                        int64_t stride_c,
                                        int64_t batch);

/* Fills out, which yg__meta_mm / yg__meta_bmm made, with self @ mat2 (2-D,
 * or 3-D batches, checked there) through gemm, one call per matrix.
 * Errors are gemm's or an operand copy's. */
yg_status yg__matmul_fill(const char *op,
                          const yg_tensor *self,
                          const yg_tensor *mat2,
                          yg_tensor *out,
                          yg_gemm_fn gemm);

/* yg__matmul_fill for bmm on a device with a batched gemm: one call of
 * batched over every entry when each operand's matrices can be passed as
 * they are (one of their two strides 1, a valid leading dim; the batch
 * stride any, 0 included) and there are two entries or more; otherwise,
 * and for mm, yg__matmul_fill with gemm.  Errors are gemm's, batched's or
 * an operand copy's. */
yg_status yg__matmul_fill_batched(const char *op,
                                  const yg_tensor *self,
                                  const yg_tensor *mat2,
                                  yg_tensor *out,
                                  yg_gemm_fn gemm,
                                  yg_gemm_batched_fn batched);

#endif /* YAGRAD_META_MATMUL_H */
