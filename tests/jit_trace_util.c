/*
 * jit_trace_util.c - see jit_trace_util.h.
 */
#include "jit_trace_util.h"

#include "jit/ir/ir.h"
#include "testutil.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The node kinds of g joined by ',' ("linear,relu"); caller frees. */
char *kinds_of(const yg_graph *g) {
    size_t cap = 16, len = 0;
    char *s = calloc(cap, 1);
    assert_non_null(s);
    for (yg_ir_node *n = yg_graph_first_node(g); n != NULL; n = yg_ir_node_next(n)) {
        const char *k = yg_ir_node_kind(n);
        size_t need = len + strlen(k) + 2;
        if (need > cap) {
            cap = need * 2;
            s = realloc(s, cap);
            assert_non_null(s);
        }
        len += (size_t)sprintf(s + len, "%s%s", len > 0 ? "," : "", k);
    }
    return s;
}

void expect_kinds(const yg_graph *g, const char *expected) {
    char *got = kinds_of(g);
    if (strcmp(got, expected) != 0)
        print_error("node kinds: got %s, expected %s\n", got, expected);
    assert_string_equal(got, expected);
    free(got);
}

void expect_text(const yg_graph *g, const char *expected) {
    char *got = NULL;
    YG_CHECK(yg_graph_print(g, &got));
    if (strcmp(got, expected) != 0)
        print_error("got:\n%s\nexpected:\n%s\n", got, expected);
    assert_string_equal(got, expected);
    yg_string_release(got);
}

/* Asserts that shape propagation computes the types the trace recorded,
 * that the standard pipeline accepts a copy of g, that g lints clean and
 * that print(parse(print(g))) == print(g). */
void expect_round_trip(const yg_graph *g) {
    char *text = NULL, *again = NULL;
    yg_graph *parsed = NULL, *optimized = NULL;
    YG_CHECK(yg_graph_clone(g, &optimized));
    YG_CHECK(yg_graph_propagate_shapes(optimized));
    YG_CHECK(yg_graph_print(g, &text));
    YG_CHECK(yg_graph_print(optimized, &again));
    if (strcmp(text, again) != 0)
        print_error("traced:\n%s\nshape propagation:\n%s\n", text, again);
    assert_string_equal(text, again);
    yg_string_release(text);
    yg_string_release(again);
    text = again = NULL;
    YG_CHECK(yg_graph_optimize(optimized));
    YG_CHECK(yg_graph_lint(optimized));
    yg_graph_release(optimized);
    YG_CHECK(yg_graph_lint(g));
    YG_CHECK(yg_graph_print(g, &text));
    YG_CHECK(yg_graph_parse(text, (int64_t)strlen(text), &parsed));
    YG_CHECK(yg_graph_lint(parsed));
    YG_CHECK(yg_graph_print(parsed, &again));
    if (strcmp(text, again) != 0)
        print_error("printed:\n%s\nreparsed:\n%s\n", text, again);
    assert_string_equal(text, again);
    yg_string_release(text);
    yg_string_release(again);
    yg_graph_release(parsed);
}

yg_tensor *rand_tensor(const int64_t *sizes, int64_t ndim, uint64_t seed) {
    return yg_test_rand(YG_FLOAT32, sizes, ndim, -1, 1, seed);
}

/* Asserts a and b hold the same sizes and values. */
void expect_same_values(const yg_tensor *a, const yg_tensor *b) {
    double *want = yg_test_values(b);
    YG_EXPECT_CLOSE(a, yg_tensor_sizes(b), yg_tensor_ndim(b), want, 0, 0);
    free(want);
}

/* Recomputes every node output type of g from its inputs alone: a copy
 * of g with each node output's type wiped (requires_grad kept) goes
 * through shape propagation, and each field it computes must equal what
 * the trace recorded from real tensors.  Exactly n_unknown fields may be
 * left unknown (a size that depends on values, like a bool mask's count
 * of true positions); then the usual round trip. */
void expect_types_recomputed(const yg_graph *g, int n_unknown) {
    yg_graph *wiped = NULL;
    YG_CHECK(yg_graph_clone(g, &wiped));
    for (yg_ir_node *n = yg_graph_first_node(wiped); n != NULL; n = yg_ir_node_next(n)) {
        for (int32_t i = 0; i < n->n_outputs; i++) {
            yg_ir_type *t = &n->outputs[i]->type;
            if (t->kind != YG_IR_TYPE_TENSOR)
                continue;
            int32_t rg = t->requires_grad;
            *t = yg_ir_type_tensor();
            t->requires_grad = rg;
        }
    }
    YG_CHECK(yg_graph_propagate_shapes(wiped));
    int unknown = 0;
    bool same = true;
    for (yg_ir_node *a = yg_graph_first_node(g), *b = yg_graph_first_node(wiped); a != NULL;
         a = yg_ir_node_next(a), b = yg_ir_node_next(b)) {
        for (int32_t i = 0; i < a->n_outputs; i++) {
            const yg_ir_type *want = &a->outputs[i]->type, *got = &b->outputs[i]->type;
            if (want->kind != YG_IR_TYPE_TENSOR)
                continue;
            unknown += (got->dtype == YG_IR_UNKNOWN) + (got->device == YG_IR_UNKNOWN) +
                       (got->ndim == YG_IR_UNKNOWN);
            same = same && (got->dtype == YG_IR_UNKNOWN || got->dtype == want->dtype) &&
                   (got->device == YG_IR_UNKNOWN || got->device == want->device) &&
                   (got->ndim == YG_IR_UNKNOWN || got->ndim == want->ndim);
            for (int32_t d = 0; got->ndim != YG_IR_UNKNOWN && d < got->ndim; d++) {
                unknown += got->sizes[d] == YG_IR_UNKNOWN;
                same = same && (got->sizes[d] == YG_IR_UNKNOWN || got->sizes[d] == want->sizes[d]);
            }
        }
    }
    if (!same || unknown != n_unknown) {
        char *text = NULL, *again = NULL;
        YG_CHECK(yg_graph_print(g, &text));
        YG_CHECK(yg_graph_print(wiped, &again));
        print_error("traced:\n%s\nrecomputed (%d unknown fields, expected %d):\n%s\n",
                    text,
                    unknown,
                    n_unknown,
                    again);
        yg_string_release(text);
        yg_string_release(again);
    }
    assert_true(same);
    assert_int_equal(unknown, n_unknown);
    yg_graph_release(wiped);
    expect_round_trip(g);
}

/* Releases the first n of ts. */
void release_all(yg_tensor **ts, int n) {
    for (int i = 0; i < n; i++)
        yg_release(ts[i]);
}
