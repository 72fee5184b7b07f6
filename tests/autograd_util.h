/*
 * autograd_util.h - helpers shared by the engine suites (test_autograd.c,
 * test_autograd_views.c): float64 leaves that require grad, and asserting
 * on a tensor's accumulated .grad.
 */
#ifndef YAGRAD_AUTOGRAD_UTIL_H
#define YAGRAD_AUTOGRAD_UTIL_H

#include "yagrad/yagrad.h"

#include <stdint.h>

/* A new float64 leaf from v (row-major) that requires grad. */
yg_tensor *leaf(const int64_t *sizes, int64_t ndim, const double *v);

/* Asserts t's .grad has the given sizes and values within 1e-12. */
void expect_grad(const yg_tensor *t, const int64_t *sizes, int64_t ndim, const double *v);

#endif /* YAGRAD_AUTOGRAD_UTIL_H */
