/*
 * meta/norm.h - the geometry of layer_norm's and batch_norm's fused
 * kernels, which the meta functions check (meta/norm.c) and both devices'
 * implementations read back.  Not public API.
 */
#ifndef YAGRAD_META_NORM_H
#define YAGRAD_META_NORM_H

#include "yagrad/status.h"
#include "yagrad/tensor.h"

#include <stdint.h>

/* *rows and *m (the row length) of input normalized over its trailing
 * sizes normalized_shape[0..len); fails with YG_ERR_SHAPE naming op when
 * they are not input's. */
yg_status yg__layer_norm_geometry(const char *op,
                                  const yg_tensor *input,
                                  const int64_t *normalized_shape,
                                  int64_t len,
                                  int64_t *rows,
                                  int64_t *m);

/* N, C and L of input [N, C, *] (L the product of the position dims; N
 * and L 0 for an empty input, whose other dims may be huge), after
 * checking its dims (YG_ERR_SHAPE naming op). */
yg_status
yg__batch_norm_geometry(const char *op, const yg_tensor *input, int64_t *n, int64_t *c, int64_t *l);

#endif /* YAGRAD_META_NORM_H */
