/*
 * meta/meta.h - the meta functions of the structured ops (`structured:
 * true` in specs/native_functions.yaml): what every device shares of an
 * op, the checks of its arguments and its result, made (shape, dtype, and
 * the inputs' device) for a device's implementation to fill.  The
 * generated wrapper calls yg__meta_<op> once, then the implementation of
 * the inputs' device: yg__cpu_<op>_out (cpu/cpu.h) or yg__cuda_<op>_out
 * (in the CUDA module, cuda/cuda.h), which can no longer fail on the
 * arguments.  Not public API.
 *
 * Each has the op's kernel signature: inputs borrowed, *out a new
 * reference on success and NULL on failure; errors name the op.
 */
#ifndef YAGRAD_KERNELS_META_H
#define YAGRAD_KERNELS_META_H

#include "yagrad/status.h"
#include "yagrad/tensor.h"

#include <stdint.h>

/* softmax and log_softmax (meta/softmax.c): self floating; dim in
 * range (YG_ERR_INVALID_ARGUMENT "<op>: dim 2 out of range ..."); the
 * result has self's sizes and dtype, contiguous. */
yg_status yg__meta_softmax(const yg_tensor *self, int64_t dim, yg_tensor **out);
yg_status yg__meta_log_softmax(const yg_tensor *self, int64_t dim, yg_tensor **out);

#endif /* YAGRAD_KERNELS_META_H */
