/*
 * cuda/ops.h - the contract of the CUDA kernels of the generated dispatch
 * tables: each has its op's kernel signature and contract (the CPU's of
 * cpu/cpu.h, whose rules and messages it keeps), and runs on the inputs'
 * GPU.  gen declares them from the YAML, per section, in
 * decls/<section>.h.  They live in the CUDA module; the generated table
 * of an op whose `dispatch:` names one for CUDA finds it there by name
 * (core/backend.h's yg_kernel_ref) on first use.  This header holds the
 * helpers they share.  Not public API.
 */
#ifndef YAGRAD_CUDA_OPS_H
#define YAGRAD_CUDA_OPS_H

#include "yagrad/random.h"
#include "yagrad/tensor.h"

#include <stdbool.h>
#include <stdint.h>

/* cumsum, cumprod */
yg_status
yg__cuda_cumprod_jvp(const yg_tensor *grad, const yg_tensor *self, int64_t dim, yg_tensor **out);

#endif /* YAGRAD_CUDA_OPS_H */
