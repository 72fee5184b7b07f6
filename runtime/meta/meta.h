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
 * reference on success and NULL on failure; errors name the op.  gen
 * declares them from the YAML, beside the op's implementations, in
 * decls/<section>.h; this header is their contract.
 */
#ifndef YAGRAD_META_META_H
#define YAGRAD_META_META_H

#include "yagrad/status.h"
#include "yagrad/random.h"
#include "yagrad/tensor.h"

#include <stdint.h>

#endif /* YAGRAD_META_META_H */
