/*
 * norm_int.h - helpers shared by the norm composites of this directory
 * (nn.c's layer_norm, norm.c's batch_norm, norm_backward.c); defined in
 * norm.c.
 */
#ifndef YAGRAD_COMPOSITE_NORM_INT_H
#define YAGRAD_COMPOSITE_NORM_INT_H

#include "composite/composite.h"

/* The dtype the fused norm kernels run in for these operands (nullable,
 * n of them): float64 when the first is floating and any other is
 * float64, else the first's dtype, as the binary ops of the compositions
 * they replaced promoted.  Cannot fail. */
yg_dtype yg__norm_dtype(const yg_tensor *const *operands, int n);

/* t converted to dtype (differentiably, yg_to_dtype), a new reference to
 * t when it has it already, NULL when t is NULL. */
yg_status yg__norm_as_dtype(const yg_tensor *t, yg_dtype dtype, yg_tensor **out);

#endif /* YAGRAD_COMPOSITE_NORM_INT_H */
