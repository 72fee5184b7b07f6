/*
 * autograd_util.c - see autograd_util.h.
 */
#include "autograd_util.h"

#include "testutil.h"

yg_tensor *leaf(const int64_t *sizes, int64_t ndim, const double *v) {
    yg_tensor *t = yg_test_tensor(YG_FLOAT64, sizes, ndim, v);
    YG_CHECK(yg_tensor_set_requires_grad(t, true));
    return t;
}

void expect_grad(const yg_tensor *t, const int64_t *sizes, int64_t ndim, const double *v) {
    yg_tensor *g = NULL;
    YG_CHECK(yg_tensor_grad(t, &g));
    assert_non_null(g);
    YG_EXPECT_CLOSE(g, sizes, ndim, v, 1e-12, 1e-12);
    yg_release(g);
}
