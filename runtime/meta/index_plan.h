/*
 * meta/index_plan.h - advanced indexing's plan, which both devices'
 * index, index_put and index_put_ share (meta/index_plan.c).  Not public
 * API.
 *
 * indices holds one entry per leading dim of self: an int64 tensor picks
 * positions along its dim, a bool mask of k dims stands for the k int64
 * tensors of its true positions (it must match self's sizes there), NULL
 * keeps the whole dim (a full slice), and dims past the end of the list
 * are kept too.  The int64 tensors broadcast together to one shape B.  The
 * result has B in place of the indexed dims when those are adjacent
 * (x[:, i, j] of [N, A, B, C] is [N, *B, C]); when a kept dim separates
 * them, B comes first and the kept dims follow in order, as in NumPy.
 * Negative indices count from the end of their dim.  The plan holds host
 * copies of the positions (a GPU's are read there, and checked anyway).
 */
#ifndef YAGRAD_META_INDEX_PLAN_H
#define YAGRAD_META_INDEX_PLAN_H

#include "yagrad/status.h"
#include "yagrad/tensor.h"

#include <stdbool.h>
#include <stdint.h>

/* How self[indices] maps result coordinates to self's elements. */
typedef struct yg_index_plan {
    int32_t ndim;                    /* self's dims */
    yg_tensor *idx[YG_MAX_DIMS];     /* int64 positions per dim of self (owned); NULL: kept */
    int32_t bndim;                   /* dims of B, the broadcast shape of idx */
    int64_t bsizes[YG_MAX_DIMS];
    int32_t bpos;                    /* the result dim where B starts */
    int32_t out_ndim;
    int64_t out_sizes[YG_MAX_DIMS];
    int32_t kept_at[YG_MAX_DIMS];    /* for a kept dim of self: its result dim */
} yg_index_plan;

/* Turns indices into a plan for self after checking them (dtypes, mask
 * sizes, devices, broadcasting, every position against its dim:
 * YG_ERR_INDEX "<op>: index 7 is out of bounds for dim 0 with size 3"),
 * or fails naming op; on failure the plan holds nothing. */
yg_status yg__index_plan_init(const char *op,
                              const yg_tensor *self,
                              const yg_tensor *const *indices,
                              int64_t indices_len,
                              yg_index_plan *p);

/* Releases what p holds.  Cannot fail. */
void yg__index_plan_free(yg_index_plan *p);

/* The result's element count (the plan's out_sizes; negative when it
 * would not fit). */
int64_t yg__index_plan_numel(const yg_index_plan *p);

/* Coordinates c of the i-th element (row-major) of sizes[0..ndim). */
void yg__index_coords_of(int64_t i, const int64_t *sizes, int32_t ndim, int64_t *c);

/* Byte offset in self (from its first element) of the result element at
 * coordinates c. */
int64_t yg__index_plan_offset(const yg_index_plan *p, const yg_tensor *self, const int64_t *c);

/* The element offsets of the result's n elements in t (the plan's
 * geometry), into a new host buffer (free()), or NULL when out of memory:
 * what a GPU reads or writes. */
int64_t *yg__index_plan_offsets(const yg_index_plan *p, const yg_tensor *t, int64_t n);

/* index_put's checks for writing values into dst at indices: values of
 * dst's dtype and broadcastable to the indexed shape, the plan (*p,
 * yg__index_plan_free it), *n its element count, and, in place, a copy
 * of values when they share dst's storage (*values_copy, else NULL;
 * release it).  On failure nothing is held. */
yg_status yg__index_put_prepare(const char *op,
                                const yg_tensor *dst,
                                const yg_tensor *const *indices,
                                int64_t indices_len,
                                const yg_tensor *values,
                                bool in_place,
                                yg_index_plan *p,
                                yg_tensor **values_copy,
                                int64_t *n);

#endif /* YAGRAD_META_INDEX_PLAN_H */
