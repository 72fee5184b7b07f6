/*
 * meta/pad.h - the geometry of reflection_pad and replication_pad, which
 * both devices' kernels share (meta/pad.c).  Not public API.
 *
 * reflection_pad and replication_pad pad the last 1, 2 or 3 dims of self
 * (pad has 2, 4 or 6 entries, (before, after) pairs from the last dim)
 * with a batch dim or not before one channel dim, as PyTorch's F.pad
 * does.  Output position o of a padded dim of size n reads input
 * i = o - before, mapped into the dim: reflected about its ends without
 * repeating them (-i, 2 (n - 1) - i), which needs every amount below n,
 * or clamped to [0, n - 1] (replicate), which needs n > 0.
 */
#ifndef YAGRAD_META_PAD_H
#define YAGRAD_META_PAD_H

#include "yagrad/status.h"
#include "yagrad/tensor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Checks pad against sizes[0..ndim) for the mode (reflect, else
 * replicate) and fills osizes, the padded sizes.  Errors name op. */
yg_status yg__pad_geometry(const char *op,
                           bool reflect,
                           const int64_t *sizes,
                           int64_t ndim,
                           const int64_t *pad,
                           int64_t pad_len,
                           int64_t *osizes);

/* maps[d][o]: the input index read by output index o along dim d (the
 * identity for dims not padded), in one yg__alloc block *block of
 * *block_bytes (free with yg__free).  Errors name op (out of memory). */
yg_status yg__pad_source_maps(const char *op,
                              bool reflect,
                              const int64_t *sizes,
                              const int64_t *osizes,
                              int64_t ndim,
                              const int64_t *pad,
                              int64_t pad_len,
                              int64_t **maps,
                              int64_t **block,
                              size_t *block_bytes);

/* The checks of a mode pad's gradient: self_sizes of 1 to YG_MAX_DIMS
 * entries, grad_output floating and of self_sizes padded by pad (whose
 * sizes it fills into osizes).  Errors name op. */
yg_status yg__pad_backward_check(const char *op,
                                 bool reflect,
                                 const yg_tensor *grad_output,
                                 const int64_t *self_sizes,
                                 int64_t self_sizes_len,
                                 const int64_t *pad,
                                 int64_t pad_len,
                                 int64_t *osizes);

#endif /* YAGRAD_META_PAD_H */
