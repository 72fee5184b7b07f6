/*
 * samples_edge.c - OpInfo samples with 0-dim and empty inputs for ops that
 * do not take every shape (ops that do are flagged OPINFO_ANY_SHAPE, or are
 * generated pointwise ops, and test_opinfo derives those cases itself).
 * See opinfo.h.
 */
#include "opinfo.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_cumulative.h"
#include "yagrad/ops_extrema.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_join_split.h"
#include "yagrad/ops_softmax.h"
#include "yagrad/ops_losses.h"
#include "yagrad/ops_norms.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_cumulative.h"
#include "yagrad/ops_extrema.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_join_split.h"
#include "yagrad/ops_softmax.h"
#include "yagrad/ops_losses.h"
#include "yagrad/ops_norms.h"

static const int64_t dim0[] = {0}, dim1[] = {1};


static yg_status f_sum(yg_tensor *const *x, yg_tensor **o) { return yg_sum(x[0], o); }
static yg_status f_sum_dim1(yg_tensor *const *x, yg_tensor **o) { return yg_sum_dim(x[0], dim1, 1, false, o); }
static yg_status f_mean(yg_tensor *const *x, yg_tensor **o) { return yg_mean(x[0], o); }
static yg_status f_prod(yg_tensor *const *x, yg_tensor **o) { return yg_prod(x[0], o); }
static yg_status f_max(yg_tensor *const *x, yg_tensor **o) { return yg_max(x[0], o); }
static yg_status f_argmax(yg_tensor *const *x, yg_tensor **o) { return yg_argmax(x[0], o); }
static yg_status f_all(yg_tensor *const *x, yg_tensor **o) { return yg_all(x[0], o); }
static yg_status f_any(yg_tensor *const *x, yg_tensor **o) { return yg_any(x[0], o); }
static yg_status f_cumsum(yg_tensor *const *x, yg_tensor **o) { return yg_cumsum(x[0], 1, o); }
static yg_status f_softmax(yg_tensor *const *x, yg_tensor **o) { return yg_softmax(x[0], 1, o); }
static yg_status f_log_softmax(yg_tensor *const *x, yg_tensor **o) { return yg_log_softmax(x[0], 1, o); }
static yg_status f_mm(yg_tensor *const *x, yg_tensor **o) { return yg_mm(x[0], x[1], o); }
static yg_status f_matmul(yg_tensor *const *x, yg_tensor **o) { return yg_matmul(x[0], x[1], o); }
static yg_status f_bmm(yg_tensor *const *x, yg_tensor **o) { return yg_bmm(x[0], x[1], o); }
static yg_status f_linear(yg_tensor *const *x, yg_tensor **o) { return yg_linear(x[0], x[1], x[2], o); }
static yg_status f_cat(yg_tensor *const *x, yg_tensor **o) { return yg_cat((const yg_tensor *const *)x, 3, 1, o); }
static yg_status f_t(yg_tensor *const *x, yg_tensor **o) { return yg_t(x[0], o); }
static yg_status f_transpose(yg_tensor *const *x, yg_tensor **o) { return yg_transpose(x[0], 0, -1, o); }
static yg_status f_mse(yg_tensor *const *x, yg_tensor **o) { return yg_mse_loss(x[0], x[1], 1, o); }
static yg_status f_flip(yg_tensor *const *x, yg_tensor **o) { return yg_flip(x[0], dim0, 1, o); }
static yg_status f_unsqueeze0(yg_tensor *const *x, yg_tensor **o) { return yg_unsqueeze(x[0], 0, o); }

static yg_status f_layer_norm(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t shape[] = {4};
    return yg_layer_norm(x[0], shape, 1, NULL, NULL, 1e-5, o);
}

static yg_status f_reshape(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t shape[] = {1};
    return yg_reshape(x[0], shape, 1, o);
}

const sample opinfo_edge_samples[] = {
    {"sum", "0-dim", 1, {F64(-1, 1, 0, 0)}, f_sum},
    {"sum", "empty [2, 0, 3]", 1, {F64(-1, 1, 3, 2, 0, 3)}, f_sum},
    {"sum.dim", "dim 1 of empty [2, 0, 3]", 1, {F64(-1, 1, 3, 2, 0, 3)}, f_sum_dim1},
    {"mean", "0-dim", 1, {F64(-1, 1, 0, 0)}, f_mean},
    {"prod", "empty [0, 3]", 1, {F64(-1, 1, 2, 0, 3)}, f_prod},
    {"max", "0-dim", 1, {F64(-1, 1, 0, 0)}, f_max},
    {"argmax", "0-dim", 1, {F64(-1, 1, 0, 0)}, f_argmax},
    {"all", "empty [0]", 1, {F64(-1, 1, 1, 0)}, f_all},
    {"any", "empty [0]", 1, {F64(-1, 1, 1, 0)}, f_any},
    {"cumsum", "dim 1 of empty [2, 0]", 1, {F64(-1, 1, 2, 2, 0)}, f_cumsum},
    {"softmax", "dim 1 of empty [0, 3]", 1, {F64(-1, 1, 2, 0, 3)}, f_softmax},
    {"log_softmax", "dim 1 of empty [0, 3]", 1, {F64(-1, 1, 2, 0, 3)}, f_log_softmax},
    {"mm", "empty inner dim: [3, 0] @ [0, 2] is zeros", 2, {F64(-1, 1, 2, 3, 0), F64(-1, 1, 2, 0, 2)}, f_mm},
    {"matmul", "empty batch [0, 3, 4] @ [4, 2]", 2, {F64(-1, 1, 3, 0, 3, 4), F64(-1, 1, 2, 4, 2)}, f_matmul},
    {"bmm", "empty rows [2, 0, 4] @ [2, 4, 3]", 2, {F64(-1, 1, 3, 2, 0, 4), F64(-1, 1, 3, 2, 4, 3)}, f_bmm},
    {"linear", "empty batch", 3, {F64(-1, 1, 2, 0, 3), F64(-1, 1, 2, 4, 3), F64(-1, 1, 1, 4)}, f_linear},
    {"cat", "with an empty piece", 3, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 0), F64(-1, 1, 2, 2, 2)}, f_cat},
    {"t", "0-dim", 1, {F64(-1, 1, 0, 0)}, f_t},
    {"t", "1-dim", 1, {F64(-1, 1, 1, 4)}, f_t},
    {"transpose", "empty [2, 0, 3]", 1, {F64(-1, 1, 3, 2, 0, 3)}, f_transpose},
    {"mse_loss", "0-dim", 2, {F64(-1, 1, 0, 0), C64(-1, 1, 0, 0)}, f_mse},
    {"flip", "empty [0, 3]", 1, {F64(-1, 1, 2, 0, 3)}, f_flip},
    {"unsqueeze", "0-dim", 1, {F64(-1, 1, 0, 0)}, f_unsqueeze0},
    {"reshape", "0-dim to [1]", 1, {F64(-1, 1, 0, 0)}, f_reshape},
    {"layer_norm", "empty batch [0, 4]", 1, {F64(-1, 1, 2, 0, 4)}, f_layer_norm},
    {NULL, NULL, 0, {{0}}, NULL, NULL, 0},
};
