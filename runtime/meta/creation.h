/*
 * meta/creation.h - the checks every device's creation and random ops
 * share (meta/creation.c): the dtype of the result and a new tensor of a
 * user-given size.  Not public API.
 */
#ifndef YAGRAD_META_CREATION_H
#define YAGRAD_META_CREATION_H

#include "yagrad/status.h"
#include "yagrad/tensor.h"

#include <stdint.h>

/* The dtype of a creation op's result: *dtype, or dflt when dtype is NULL.
 * Fails with YG_ERR_DTYPE "<op>: invalid dtype <n>" for a value that is
 * no yg_dtype. */
yg_status yg__creation_dtype(const char *op, const yg_dtype *dtype, yg_dtype dflt, yg_dtype *out);

/* A new contiguous uninitialised tensor of sizes size (size_len entries),
 * after checking them with messages naming op: at most YG_MAX_DIMS dims,
 * no negative size, no element count overflow. */
yg_status yg__creation_empty(const char *op,
                             const int64_t *size,
                             int64_t size_len,
                             yg_dtype dtype,
                             yg_tensor **out);
/* yg__creation_empty on device (cuda:0 for YG_CUDA: a Device argument
 * names no index). */
yg_status yg__creation_empty_on(const char *op,
                                const int64_t *size,
                                int64_t size_len,
                                yg_dtype dtype,
                                yg_device device,
                                yg_tensor **out);

#endif /* YAGRAD_META_CREATION_H */
