/*
 * composite.h - ops without kernels of their own.  Each is declared in
 * specs/native_functions.yaml with neither `dispatch:` nor `pointwise:`;
 * the generated yg_<op> calls yg__composite_<op>, which is written here in
 * terms of other public ops, so autograd records (and differentiates) its
 * parts.  Same signature and contract as the public op.  Not public API.
 */
#ifndef YAGRAD_COMPOSITE_H
#define YAGRAD_COMPOSITE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"

yg_status yg__composite_sum_backward(const yg_tensor *grad,
                                     const int64_t *sizes,
                                     int64_t sizes_len,
                                     const int64_t *dim,
                                     int64_t dim_len,
                                     bool keepdim,
                                     yg_tensor **out);
yg_status yg__composite_mean_backward(const yg_tensor *grad,
                                      const int64_t *sizes,
                                      int64_t sizes_len,
                                      const int64_t *dim,
                                      int64_t dim_len,
                                      bool keepdim,
                                      yg_tensor **out);
yg_status yg__composite_sum_to(const yg_tensor *self,
                               const int64_t *size,
                               int64_t size_len,
                               yg_tensor **out);
yg_status yg__composite_matmul(const yg_tensor *self, const yg_tensor *other, yg_tensor **out);
yg_status yg__composite_linear(const yg_tensor *input,
                               const yg_tensor *weight,
                               const yg_tensor *bias,
                               yg_tensor **out);
yg_status yg__composite_reshape(const yg_tensor *self,
                                const int64_t *shape,
                                int64_t shape_len,
                                yg_tensor **out);

#endif /* YAGRAD_COMPOSITE_H */
