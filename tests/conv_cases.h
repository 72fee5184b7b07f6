/*
 * conv_cases.h - the randomized table of convolution shapes that every
 * convolution backend is checked on (test_ops_conv.c against naive
 * loops, test_conv_onednn.c oneDNN against native) and their operand
 * sizes:
 * 1-d/2-d/3-d, stride, padding, dilation, groups 1, 2, depthwise and a
 * channel multiplier, 1x1, transposed with output_padding, batch 1 and
 * more, odd sizes, with and without bias.  Header-only (static): each
 * suite that includes it gets its own copy.
 */
#ifndef YAGRAD_TESTS_CONV_CASES_H
#define YAGRAD_TESTS_CONV_CASES_H

#include "testutil.h"

typedef struct conv_case {
    int nsp;              /* spatial dims */
    int64_t n, cin, cout; /* batch, channels of the input and the output */
    int64_t in[3], k[3];  /* spatial sizes of the input, kernel */
    int64_t s[3], p[3], d[3], op[3];
    int64_t groups;
    bool transposed, bias;
} conv_case;

static const conv_case cases[] = {
    /* nsp, n, cin, cout, in, k, s, p, d, op, groups, transposed, bias */
    {2, 2, 3, 4, {7, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0}, 1, false, true},
    {2, 1, 3, 5, {9, 8}, {3, 2}, {2, 3}, {1, 0}, {1, 2}, {0}, 1, false, false},
    {2, 3, 4, 6, {5, 7}, {3, 3}, {1, 2}, {2, 1}, {2, 1}, {0}, 2, false, true},
    {2, 2, 4, 4, {6, 5}, {3, 3}, {2, 1}, {1, 1}, {1, 1}, {0}, 4, false, true},  /* depthwise */
    {2, 2, 3, 6, {5, 5}, {2, 3}, {1, 1}, {0, 1}, {2, 1}, {0}, 3, false, false}, /* multiplier 2 */
    {2, 2, 8, 3, {5, 4}, {1, 1}, {1, 1}, {0, 0}, {1, 1}, {0}, 1, false, true},  /* 1x1 gemm */
    {1, 3, 2, 3, {11}, {4}, {3}, {2}, {2}, {0}, 1, false, true},
    {1, 1, 4, 2, {6}, {3}, {1}, {0}, {1}, {0}, 2, false, false},
    {3, 2, 2, 3, {4, 5, 3}, {2, 3, 2}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}, {0}, 1, false, true},
    {3, 1, 4, 4, {3, 4, 5}, {3, 3, 3}, {2, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0}, 4, false, false},
    {2, 2, 4, 3, {3, 4}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 1, true, true},
    {2, 1, 4, 4, {3, 3}, {2, 3}, {2, 1}, {0, 1}, {1, 2}, {1, 0}, 2, true, false},
    {2, 2, 3, 3, {4, 3}, {3, 3}, {1, 2}, {1, 0}, {1, 1}, {0, 1}, 3, true, true}, /* depthwise */
    {1, 2, 3, 2, {5}, {3}, {3}, {1}, {1}, {2}, 1, true, true},
    {3, 1, 2, 2, {2, 3, 2}, {2, 2, 3}, {2, 1, 2}, {0, 1, 1}, {1, 1, 1}, {1, 0, 1}, 1, true, true},
};

/* Fills sizes of input, weight and bias for case c; returns ndim. */
static inline int case_sizes(const conv_case *c, int64_t *xs, int64_t *ws, int64_t *bs) {
    int n = c->nsp;
    xs[0] = c->n;
    xs[1] = c->cin;
    ws[0] = c->transposed ? c->cin : c->cout;
    ws[1] = c->transposed ? c->cout / c->groups : c->cin / c->groups;
    for (int i = 0; i < n; i++) {
        xs[2 + i] = c->in[i];
        ws[2 + i] = c->k[i];
    }
    bs[0] = c->cout;
    return n + 2;
}

#endif /* YAGRAD_TESTS_CONV_CASES_H */
