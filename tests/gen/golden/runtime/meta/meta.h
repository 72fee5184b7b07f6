/*
 * meta/meta.h of the golden test: the meta functions of the golden
 * spec's structured ops.  Found before the real one on the include path
 * of the golden compile check.
 */
#ifndef YAGRAD_GOLDEN_KERNELS_META_H
#define YAGRAD_GOLDEN_KERNELS_META_H

#include "yagrad/status.h"
#include "yagrad/tensor.h"

#include <stdint.h>

yg_status yg__meta_cumsum(const yg_tensor *self, int64_t dim, yg_tensor **out);
yg_status yg__meta_sincos(const yg_tensor *self, yg_tensor **out_sin, yg_tensor **out_cos);

#endif
