/*
 * cuda/ops.h of the golden test: the CUDA kernels and structured
 * implementations of the golden spec, which the generated code never names directly
 * (it finds them in the CUDA module by name); gen checks their
 * signatures against this.
 */
#ifndef YAGRAD_GOLDEN_CUDA_H
#define YAGRAD_GOLDEN_CUDA_H

#include "yagrad/status.h"
#include "yagrad/tensor.h"

#include <stdint.h>

yg_status yg__golden_cuda_sum_dim(const yg_tensor *self,
                                  const int64_t *dim,
                                  int64_t dim_len,
                                  bool keepdim,
                                  yg_tensor **out);
yg_status yg__golden_cuda_cumsum_out(const yg_tensor *self, int64_t dim, yg_tensor *out);

#endif
