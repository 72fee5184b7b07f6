/*
 * jit_trace_util.h - helpers shared by the yg_trace suites
 * (test_jit_trace.c, test_jit_trace_types.c): asserting on a recorded
 * graph's node kinds and printed text, its round trip through shape
 * propagation, the pipeline and text, and the recomputation of its types;
 * random float32 inputs and value comparison.
 */
#ifndef YAGRAD_JIT_TRACE_UTIL_H
#define YAGRAD_JIT_TRACE_UTIL_H

#include "yagrad/yagrad.h"

#include <stdint.h>

/* The node kinds of g joined by ',' ("linear,relu"); caller frees. */
char *kinds_of(const yg_graph *g);

/* Asserts that g's node kinds, joined by ',', are expected. */
void expect_kinds(const yg_graph *g, const char *expected);

/* Asserts that yg_graph_print(g) is expected. */
void expect_text(const yg_graph *g, const char *expected);

/* Asserts that shape propagation computes the types the trace recorded,
 * that the standard pipeline accepts a copy of g, that g lints clean and
 * that print(parse(print(g))) == print(g). */
void expect_round_trip(const yg_graph *g);

/* Asserts that shape propagation, given g with every node output type
 * wiped, recomputes what the trace recorded, leaving exactly n_unknown
 * fields unknown; then expect_round_trip(g). */
void expect_types_recomputed(const yg_graph *g, int n_unknown);

/* A new float32 tensor with deterministic values in [-1, 1). */
yg_tensor *rand_tensor(const int64_t *sizes, int64_t ndim, uint64_t seed);

/* Asserts a and b hold the same sizes and values. */
void expect_same_values(const yg_tensor *a, const yg_tensor *b);

/* Releases the first n of ts. */
void release_all(yg_tensor **ts, int n);

#endif /* YAGRAD_JIT_TRACE_UTIL_H */
