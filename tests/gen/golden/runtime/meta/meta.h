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

#endif
