/*
 * samples_derivatives.c - the OpInfo samples of the ops with an entry in
 * specs/derivatives.yaml (formerly the samples[] table of
 * tests/test_gradcheck.c): float64 inputs on which each formula is smooth.
 * test_gradcheck.c gradchecks every row, test_opinfo.c also runs each in
 * every claimed dtype and with non-contiguous inputs.
 *
 * New rows go at the end of the table as one block headed by a comment
 * naming the branch.
 */
#include <math.h>
#include <stdlib.h>

#include "opinfo.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_binary_math.h"
#include "yagrad/ops_blend.h"
#include "yagrad/ops_inplace_arithmetic.h"
#include "yagrad/ops_inplace_fill.h"
#include "yagrad/ops_comparison.h"
#include "yagrad/ops_unary_math.h"
#include "yagrad/ops_trigonometric.h"
#include "yagrad/ops_activations.h"
#include "yagrad/ops_rounding.h"
#include "yagrad/ops_activations_backward.h"
#include "yagrad/ops_math_backward.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_cumulative.h"
#include "yagrad/ops_extrema.h"
#include "yagrad/ops_statistics.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_slicing.h"
#include "yagrad/ops_join_split.h"
#include "yagrad/ops_padding.h"
#include "yagrad/ops_indexing.h"
#include "yagrad/ops_softmax.h"
#include "yagrad/ops_losses.h"
#include "yagrad/ops_layers.h"
#include "yagrad/ops_pooling.h"
#include "yagrad/ops_average_pooling.h"
#include "yagrad/ops_adaptive_average_pooling.h"
#include "yagrad/ops_resampling.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_binary_math.h"
#include "yagrad/ops_blend.h"
#include "yagrad/ops_inplace_arithmetic.h"
#include "yagrad/ops_inplace_fill.h"
#include "yagrad/ops_comparison.h"
#include "yagrad/ops_unary_math.h"
#include "yagrad/ops_trigonometric.h"
#include "yagrad/ops_activations.h"
#include "yagrad/ops_rounding.h"
#include "yagrad/ops_activations_backward.h"
#include "yagrad/ops_math_backward.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_cumulative.h"
#include "yagrad/ops_extrema.h"
#include "yagrad/ops_statistics.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_slicing.h"
#include "yagrad/ops_join_split.h"
#include "yagrad/ops_padding.h"
#include "yagrad/ops_indexing.h"
#include "yagrad/ops_softmax.h"
#include "yagrad/ops_losses.h"
#include "yagrad/ops_layers.h"
#include "yagrad/ops_pooling.h"
#include "yagrad/ops_average_pooling.h"
#include "yagrad/ops_adaptive_average_pooling.h"
#include "yagrad/ops_resampling.h"

/* ---- sample functions ---- */
static yg_status f_add(yg_tensor *const *x, yg_tensor **o) { return yg_add(x[0], x[1], 2.5, o); }
static yg_status f_sub(yg_tensor *const *x, yg_tensor **o) { return yg_sub(x[0], x[1], 0.5, o); }
/* Integer Scalars: these samples also run on int64 and int32, where a
 * fractional Scalar is refused (OPINFO_FRACTIONAL_SCALAR). */
static yg_status f_add_int(yg_tensor *const *x, yg_tensor **o) { return yg_add(x[0], x[1], 3.0, o); }
static yg_status f_sub_int(yg_tensor *const *x, yg_tensor **o) { return yg_sub(x[0], x[1], -2.0, o); }
static yg_status f_mul_scalar_int(yg_tensor *const *x, yg_tensor **o) { return yg_mul_scalar(x[0], -3.0, o); }
static yg_status f_add_scalar_int(yg_tensor *const *x, yg_tensor **o) { return yg_add_scalar(x[0], 3.0, 2.0, o); }
static yg_status f_sub_scalar_int(yg_tensor *const *x, yg_tensor **o) { return yg_sub_scalar(x[0], 3.0, 2.0, o); }
static yg_status f_hardtanh_int(yg_tensor *const *x, yg_tensor **o) { return yg_hardtanh(x[0], -1.0, 1.0, o); }
static yg_status f_clamp_int(yg_tensor *const *x, yg_tensor **o) { return yg_clamp(x[0], -1.0, 1.0, o); }
static yg_status f_clamp_min_int(yg_tensor *const *x, yg_tensor **o) { return yg_clamp_min(x[0], -1.0, o); }
static yg_status f_clamp_max_int(yg_tensor *const *x, yg_tensor **o) { return yg_clamp_max(x[0], 1.0, o); }
static yg_status f_addcmul_int(yg_tensor *const *x, yg_tensor **o) { return yg_addcmul(x[0], x[1], x[2], -2.0, o); }
static yg_status f_mul(yg_tensor *const *x, yg_tensor **o) { return yg_mul(x[0], x[1], o); }
static yg_status f_div(yg_tensor *const *x, yg_tensor **o) { return yg_div(x[0], x[1], o); }
static yg_status f_mul_scalar(yg_tensor *const *x, yg_tensor **o) { return yg_mul_scalar(x[0], -1.5, o); }
static yg_status f_div_scalar(yg_tensor *const *x, yg_tensor **o) { return yg_div_scalar(x[0], 4.0, o); }
static yg_status f_neg(yg_tensor *const *x, yg_tensor **o) { return yg_neg(x[0], o); }
static yg_status f_exp(yg_tensor *const *x, yg_tensor **o) { return yg_exp(x[0], o); }
static yg_status f_log(yg_tensor *const *x, yg_tensor **o) { return yg_log(x[0], o); }
static yg_status f_sqrt(yg_tensor *const *x, yg_tensor **o) { return yg_sqrt(x[0], o); }
static yg_status f_tanh(yg_tensor *const *x, yg_tensor **o) { return yg_tanh(x[0], o); }
static yg_status f_sigmoid(yg_tensor *const *x, yg_tensor **o) { return yg_sigmoid(x[0], o); }
static yg_status f_relu(yg_tensor *const *x, yg_tensor **o) { return yg_relu(x[0], o); }
static yg_status f_pow3(yg_tensor *const *x, yg_tensor **o) { return yg_pow_scalar(x[0], 3.0, o); }
static yg_status f_pow_half(yg_tensor *const *x, yg_tensor **o) { return yg_pow_scalar(x[0], 0.5, o); }
static yg_status f_sum(yg_tensor *const *x, yg_tensor **o) { return yg_sum(x[0], o); }
static yg_status f_mean(yg_tensor *const *x, yg_tensor **o) { return yg_mean(x[0], o); }
static yg_status f_mm(yg_tensor *const *x, yg_tensor **o) { return yg_mm(x[0], x[1], o); }
static yg_status f_t(yg_tensor *const *x, yg_tensor **o) { return yg_t(x[0], o); }
static yg_status f_clone(yg_tensor *const *x, yg_tensor **o) { return yg_clone(x[0], o); }
static yg_status f_add_scalar(yg_tensor *const *x, yg_tensor **o) { return yg_add_scalar(x[0], 1.5, 2.0, o); }
static yg_status f_sub_scalar(yg_tensor *const *x, yg_tensor **o) { return yg_sub_scalar(x[0], 1.5, 2.0, o); }
static yg_status f_rsub_scalar(yg_tensor *const *x, yg_tensor **o) { return yg_rsub_scalar(x[0], 1.0, 3.0, o); }
static yg_status f_abs(yg_tensor *const *x, yg_tensor **o) { return yg_abs(x[0], o); }
static yg_status f_sign(yg_tensor *const *x, yg_tensor **o) { return yg_sign(x[0], o); }
static yg_status f_expm1(yg_tensor *const *x, yg_tensor **o) { return yg_expm1(x[0], o); }
static yg_status f_log1p(yg_tensor *const *x, yg_tensor **o) { return yg_log1p(x[0], o); }
static yg_status f_log2(yg_tensor *const *x, yg_tensor **o) { return yg_log2(x[0], o); }
static yg_status f_rsqrt(yg_tensor *const *x, yg_tensor **o) { return yg_rsqrt(x[0], o); }
static yg_status f_reciprocal(yg_tensor *const *x, yg_tensor **o) { return yg_reciprocal(x[0], o); }
static yg_status f_sin(yg_tensor *const *x, yg_tensor **o) { return yg_sin(x[0], o); }
static yg_status f_cos(yg_tensor *const *x, yg_tensor **o) { return yg_cos(x[0], o); }
static yg_status f_tan(yg_tensor *const *x, yg_tensor **o) { return yg_tan(x[0], o); }
static yg_status f_erf(yg_tensor *const *x, yg_tensor **o) { return yg_erf(x[0], o); }
static yg_status f_gelu(yg_tensor *const *x, yg_tensor **o) { return yg_gelu(x[0], o); }
static yg_status f_gelu_tanh(yg_tensor *const *x, yg_tensor **o) { return yg_gelu_tanh(x[0], o); }
static yg_status f_silu(yg_tensor *const *x, yg_tensor **o) { return yg_silu(x[0], o); }
static yg_status f_elu(yg_tensor *const *x, yg_tensor **o) { return yg_elu(x[0], 0.7, o); }
static yg_status f_leaky_relu(yg_tensor *const *x, yg_tensor **o) { return yg_leaky_relu(x[0], 0.2, o); }
static yg_status f_softplus(yg_tensor *const *x, yg_tensor **o) { return yg_softplus(x[0], 2.0, 20.0, o); }
static yg_status f_softplus_thr(yg_tensor *const *x, yg_tensor **o) { return yg_softplus(x[0], 1.0, 0.5, o); }
static yg_status f_hardtanh(yg_tensor *const *x, yg_tensor **o) { return yg_hardtanh(x[0], -0.5, 0.8, o); }
static yg_status f_clamp(yg_tensor *const *x, yg_tensor **o) { return yg_clamp(x[0], -0.5, 0.5, o); }
static yg_status f_clamp_min(yg_tensor *const *x, yg_tensor **o) { return yg_clamp_min(x[0], 0.1, o); }
static yg_status f_clamp_max(yg_tensor *const *x, yg_tensor **o) { return yg_clamp_max(x[0], 0.1, o); }
static yg_status f_floor(yg_tensor *const *x, yg_tensor **o) { return yg_floor(x[0], o); }
static yg_status f_ceil(yg_tensor *const *x, yg_tensor **o) { return yg_ceil(x[0], o); }
static yg_status f_round(yg_tensor *const *x, yg_tensor **o) { return yg_round(x[0], o); }
static yg_status f_trunc(yg_tensor *const *x, yg_tensor **o) { return yg_trunc(x[0], o); }
static yg_status f_maximum(yg_tensor *const *x, yg_tensor **o) { return yg_maximum(x[0], x[1], o); }
static yg_status f_minimum(yg_tensor *const *x, yg_tensor **o) { return yg_minimum(x[0], x[1], o); }
static yg_status f_atan2(yg_tensor *const *x, yg_tensor **o) { return yg_atan2(x[0], x[1], o); }
static yg_status f_remainder(yg_tensor *const *x, yg_tensor **o) { return yg_remainder(x[0], x[1], o); }
static yg_status f_remainder_scalar(yg_tensor *const *x, yg_tensor **o) { return yg_remainder_scalar(x[0], -0.7, o); }
static yg_status f_remainder_scalar_int(yg_tensor *const *x, yg_tensor **o) { return yg_remainder_scalar(x[0], -3, o); }
static yg_status f_div_trunc_op(yg_tensor *const *x, yg_tensor **o) { return yg_div_trunc(x[0], x[1], o); }
static yg_status f_div_floor_op(yg_tensor *const *x, yg_tensor **o) { return yg_div_floor(x[0], x[1], o); }
static yg_status f_pow_tensor(yg_tensor *const *x, yg_tensor **o) { return yg_pow(x[0], x[1], o); }
static yg_status f_lerp(yg_tensor *const *x, yg_tensor **o) { return yg_lerp_scalar(x[0], x[1], 0.3, o); }
static yg_status f_lerp_tensor(yg_tensor *const *x, yg_tensor **o) { return yg_lerp(x[0], x[1], x[2], o); }
static yg_status f_addcmul(yg_tensor *const *x, yg_tensor **o) { return yg_addcmul(x[0], x[1], x[2], 0.5, o); }
static yg_status f_addcdiv(yg_tensor *const *x, yg_tensor **o) { return yg_addcdiv(x[0], x[1], x[2], -2.0, o); }
static yg_status f_where(yg_tensor *const *x, yg_tensor **o) { return yg_where(x[0], x[1], x[2], o); }
static yg_status f_where_so(yg_tensor *const *x, yg_tensor **o) { return yg_where_scalarother(x[0], x[1], 2.0, o); }
static yg_status f_where_ss(yg_tensor *const *x, yg_tensor **o) { return yg_where_scalarself(x[0], -1.0, x[1], o); }
static yg_status f_masked_fill(yg_tensor *const *x, yg_tensor **o) { return yg_masked_fill(x[0], x[1], 3.0, o); }
static yg_status f_tanh_bw(yg_tensor *const *x, yg_tensor **o) { return yg_tanh_backward(x[0], x[1], o); }
static yg_status f_sigmoid_bw(yg_tensor *const *x, yg_tensor **o) { return yg_sigmoid_backward(x[0], x[1], o); }

static yg_status f_sum_dim1(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t d[] = {1};
    return yg_sum_dim(x[0], d, 1, false, o);
}

static yg_status f_sum_dims_keep(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t d[] = {0, -1};
    return yg_sum_dim(x[0], d, 2, true, o);
}

static yg_status f_mean_dim0(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t d[] = {0};
    return yg_mean_dim(x[0], d, 1, false, o);
}

static yg_status f_mean_dims_keep(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t d[] = {1, 2};
    return yg_mean_dim(x[0], d, 2, true, o);
}

static yg_status f_transpose(yg_tensor *const *x, yg_tensor **o)
{
    return yg_transpose(x[0], 0, -1, o);
}

static yg_status f_view(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t s[] = {3, -1};
    return yg_view(x[0], s, 2, o);
}

static yg_status f_expand(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t s[] = {2, 3, 4};
    return yg_expand(x[0], s, 3, o);
}

static yg_status f_unsqueeze(yg_tensor *const *x, yg_tensor **o)
{
    return yg_unsqueeze(x[0], 1, o);
}

static yg_status f_log_softmax1(yg_tensor *const *x, yg_tensor **o)
{
    return yg_log_softmax(x[0], 1, o);
}

static yg_status f_log_softmax0(yg_tensor *const *x, yg_tensor **o)
{
    return yg_log_softmax(x[0], 0, o);
}

static yg_status f_nll_mean(yg_tensor *const *x, yg_tensor **o)
{
    return yg_nll_loss(x[0], x[1], NULL, 1, -100, o);
}

static yg_status f_nll_sum_ignore(yg_tensor *const *x, yg_tensor **o)
{
    return yg_nll_loss(x[0], x[1], NULL, 2, 1, o);
}

static yg_status f_nll_none(yg_tensor *const *x, yg_tensor **o)
{
    return yg_nll_loss(x[0], x[1], NULL, 0, -100, o);
}

static yg_status f_nll_mean_weight(yg_tensor *const *x, yg_tensor **o)
{
    return yg_nll_loss(x[0], x[1], x[2], 1, -100, o);
}

/* nll_loss rows with ignore_index 1 use this fixed target of 6 samples
 * (two ignored, whatever the seed; NLL_TARGET in reference.py). */
static const int64_t nll_target_s[] = {6}, nll_target_v[] = {0, 1, 2, 1, 0, 2};

static yg_status with_nll_target(yg_tensor *const *x,
                                 yg_status (*op)(yg_tensor *const *x, const yg_tensor *target, yg_tensor **o),
                                 yg_tensor **o)
{
    yg_tensor *target = NULL;
    yg_status st = yg_tensor_from_data(nll_target_v, nll_target_s, 1, YG_INT64, &target);
    if (st == YG_OK)
        st = op(x, target, o);
    yg_release(target);
    return st;
}

static yg_status op_nll_mean_weight_ignore(yg_tensor *const *x, const yg_tensor *t, yg_tensor **o) { return yg_nll_loss(x[0], t, x[1], 1, 1, o); }
static yg_status op_nll_sum_weight_ignore(yg_tensor *const *x, const yg_tensor *t, yg_tensor **o) { return yg_nll_loss(x[0], t, x[1], 2, 1, o); }
static yg_status op_nll_none_weight_ignore(yg_tensor *const *x, const yg_tensor *t, yg_tensor **o) { return yg_nll_loss(x[0], t, x[1], 0, 1, o); }
static yg_status f_nll_mean_weight_ignore(yg_tensor *const *x, yg_tensor **o) { return with_nll_target(x, op_nll_mean_weight_ignore, o); }
static yg_status f_nll_sum_weight_ignore(yg_tensor *const *x, yg_tensor **o) { return with_nll_target(x, op_nll_sum_weight_ignore, o); }
static yg_status f_nll_none_weight_ignore(yg_tensor *const *x, yg_tensor **o) { return with_nll_target(x, op_nll_none_weight_ignore, o); }

static yg_status f_squeeze(yg_tensor *const *x, yg_tensor **o) { return yg_squeeze(x[0], o); }
static yg_status f_squeeze_dim(yg_tensor *const *x, yg_tensor **o) { return yg_squeeze_dim(x[0], -2, o); }
static yg_status f_select(yg_tensor *const *x, yg_tensor **o) { return yg_select(x[0], 1, -1, o); }
static yg_status f_slice(yg_tensor *const *x, yg_tensor **o) { return yg_slice(x[0], 0, 1, 100, 2, o); }
static yg_status f_slice_neg(yg_tensor *const *x, yg_tensor **o) { return yg_slice(x[0], -1, -3, -1, 1, o); }
static yg_status f_tril(yg_tensor *const *x, yg_tensor **o) { return yg_tril(x[0], 0, o); }
static yg_status f_triu(yg_tensor *const *x, yg_tensor **o) { return yg_triu(x[0], -1, o); }

static yg_status f_permute(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t dims[] = {2, 0, 1};
    return yg_permute(x[0], dims, 3, o);
}

static yg_status f_select_backward(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t sizes[] = {2, 3, 4};
    return yg_select_backward(x[0], sizes, 3, 1, 2, o);
}

static yg_status f_slice_backward(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t sizes[] = {5, 3};
    return yg_slice_backward(x[0], sizes, 2, 0, 1, 5, 2, o);
}

static yg_status f_flip(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t dims[] = {0, -1};
    return yg_flip(x[0], dims, 2, o);
}

static yg_status f_constant_pad(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t pad[] = {1, 2, 0, 1};
    return yg_constant_pad_nd(x[0], pad, 4, 0.5, o);
}

static yg_status f_constant_crop(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t pad[] = {-1, 2};
    return yg_constant_pad_nd(x[0], pad, 2, 0, o);
}

/* Calls op with a fixed int64 index (sizes, values) built here, so that
 * scatter samples get indices without repeats. */
typedef yg_status (*index_op)(yg_tensor *const *x, const yg_tensor *index, yg_tensor **o);

static yg_status with_index(yg_tensor *const *x, const int64_t *sizes, int64_t ndim,
                            const int64_t *values, index_op op, yg_tensor **o)
{
    yg_tensor *index = NULL;
    yg_status st = yg_tensor_from_data(values, sizes, ndim, YG_INT64, &index);
    if (st == YG_OK)
        st = op(x, index, o);
    yg_release(index);
    return st;
}

static yg_status op_index_select(yg_tensor *const *x, const yg_tensor *i, yg_tensor **o) { return yg_index_select(x[0], 0, i, o); }
static yg_status op_index_select_bw(yg_tensor *const *x, const yg_tensor *i, yg_tensor **o)
{
    const int64_t sizes[] = {4, 3};
    return yg_index_select_backward(x[0], sizes, 2, 0, i, o);
}
static yg_status op_gather(yg_tensor *const *x, const yg_tensor *i, yg_tensor **o) { return yg_gather(x[0], 1, i, o); }
static yg_status op_gather_bw(yg_tensor *const *x, const yg_tensor *i, yg_tensor **o)
{
    const int64_t sizes[] = {3, 4};
    return yg_gather_backward(x[0], sizes, 2, 1, i, o);
}
static yg_status op_scatter(yg_tensor *const *x, const yg_tensor *i, yg_tensor **o) { return yg_scatter(x[0], 0, i, x[1], o); }
static yg_status op_scatter_value(yg_tensor *const *x, const yg_tensor *i, yg_tensor **o) { return yg_scatter_value(x[0], 0, i, 2.5, o); }
static yg_status op_scatter_add(yg_tensor *const *x, const yg_tensor *i, yg_tensor **o) { return yg_scatter_add(x[0], 0, i, x[1], o); }

/* rows 3, 0, 3 of a [4, 3] self (row 3 twice: its gradient adds up) */
static const int64_t rows_s[] = {3}, rows_v[] = {3, 0, 3};
/* per row of a [3, 4] self, two columns (repeats allowed for gather) */
static const int64_t cols_s[] = {3, 2}, cols_v[] = {1, 3, 0, 0, 2, 1};
/* a [2, 3] index into dim 0 of a [3, 3] self, no position twice */
static const int64_t scat_s[] = {2, 3}, scat_v[] = {2, 0, 1, 0, 1, 2};

static yg_status f_index_select(yg_tensor *const *x, yg_tensor **o) { return with_index(x, rows_s, 1, rows_v, op_index_select, o); }
static yg_status f_index_select_bw(yg_tensor *const *x, yg_tensor **o) { return with_index(x, rows_s, 1, rows_v, op_index_select_bw, o); }
static yg_status f_gather(yg_tensor *const *x, yg_tensor **o) { return with_index(x, cols_s, 2, cols_v, op_gather, o); }
static yg_status f_gather_bw(yg_tensor *const *x, yg_tensor **o) { return with_index(x, cols_s, 2, cols_v, op_gather_bw, o); }
static yg_status f_scatter(yg_tensor *const *x, yg_tensor **o) { return with_index(x, scat_s, 2, scat_v, op_scatter, o); }
static yg_status f_scatter_value(yg_tensor *const *x, yg_tensor **o) { return with_index(x, scat_s, 2, scat_v, op_scatter_value, o); }
static yg_status f_scatter_add(yg_tensor *const *x, yg_tensor **o) { return with_index(x, scat_s, 2, scat_v, op_scatter_add, o); }

static yg_status f_eq(yg_tensor *const *x, yg_tensor **o) { return yg_eq(x[0], x[1], o); }
static yg_status f_ne(yg_tensor *const *x, yg_tensor **o) { return yg_ne(x[0], x[1], o); }
static yg_status f_lt(yg_tensor *const *x, yg_tensor **o) { return yg_lt(x[0], x[1], o); }
static yg_status f_le(yg_tensor *const *x, yg_tensor **o) { return yg_le(x[0], x[1], o); }
static yg_status f_gt(yg_tensor *const *x, yg_tensor **o) { return yg_gt(x[0], x[1], o); }
static yg_status f_ge(yg_tensor *const *x, yg_tensor **o) { return yg_ge(x[0], x[1], o); }
static yg_status f_eq_s(yg_tensor *const *x, yg_tensor **o) { return yg_eq_scalar(x[0], 0.5, o); }
static yg_status f_ne_s(yg_tensor *const *x, yg_tensor **o) { return yg_ne_scalar(x[0], 0.5, o); }
static yg_status f_lt_s(yg_tensor *const *x, yg_tensor **o) { return yg_lt_scalar(x[0], 0.5, o); }
static yg_status f_le_s(yg_tensor *const *x, yg_tensor **o) { return yg_le_scalar(x[0], 0.5, o); }
static yg_status f_gt_s(yg_tensor *const *x, yg_tensor **o) { return yg_gt_scalar(x[0], 0.5, o); }
static yg_status f_ge_s(yg_tensor *const *x, yg_tensor **o) { return yg_ge_scalar(x[0], 0.5, o); }
static yg_status f_logical_and(yg_tensor *const *x, yg_tensor **o) { return yg_logical_and(x[0], x[1], o); }
static yg_status f_logical_or(yg_tensor *const *x, yg_tensor **o) { return yg_logical_or(x[0], x[1], o); }
static yg_status f_logical_xor(yg_tensor *const *x, yg_tensor **o) { return yg_logical_xor(x[0], x[1], o); }
static yg_status f_logical_not(yg_tensor *const *x, yg_tensor **o) { return yg_logical_not(x[0], o); }

static yg_status f_prod_dim(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t d[] = {1};
    return yg_prod_dim(x[0], d, 1, true, o);
}
static yg_status f_prod_all(yg_tensor *const *x, yg_tensor **o) { return yg_prod(x[0], o); }
static yg_status f_amax(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t d[] = {1};
    return yg_amax(x[0], d, 1, false, o);
}
static yg_status f_max_all(yg_tensor *const *x, yg_tensor **o) { return yg_max(x[0], o); }
static yg_status f_amin(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t d[] = {0, 2};
    return yg_amin(x[0], d, 2, true, o);
}
/* max.dim and min.dim: the values (the indices carry no gradient). */
static yg_status f_max_dim(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *indices = NULL;
    yg_status st = yg_max_dim(x[0], 1, false, o, &indices);
    yg_release(indices);
    return st;
}
static yg_status f_min_dim_keep(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *indices = NULL;
    yg_status st = yg_min_dim(x[0], -1, true, o, &indices);
    yg_release(indices);
    return st;
}
/* var_mean with both outputs used, and with one: then the other output's
 * gradient is undefined and the formula reads zeros in its place. */
static yg_status f_var_mean(yg_tensor *const *x, yg_tensor **o, int use)
{
    const int64_t d[] = {1};
    yg_tensor *var = NULL, *mean = NULL;
    yg_status st = yg_var_mean(x[0], d, 1, 1, false, &var, &mean);
    if (st == YG_OK)
        st = use == 0 ? yg_add(var, mean, 1.0, o) : (*o = yg_retain(use == 1 ? var : mean), YG_OK);
    yg_release(var);
    yg_release(mean);
    return st;
}
static yg_status f_var_mean_both(yg_tensor *const *x, yg_tensor **o) { return f_var_mean(x, o, 0); }
static yg_status f_var_mean_var(yg_tensor *const *x, yg_tensor **o) { return f_var_mean(x, o, 1); }
static yg_status f_var_mean_mean(yg_tensor *const *x, yg_tensor **o) { return f_var_mean(x, o, 2); }
static yg_status f_argmax(yg_tensor *const *x, yg_tensor **o) { return yg_argmax(x[0], o); }
static yg_status f_argmax_dim(yg_tensor *const *x, yg_tensor **o) { return yg_argmax_dim(x[0], 1, false, o); }
static yg_status f_argmin(yg_tensor *const *x, yg_tensor **o) { return yg_argmin(x[0], o); }
static yg_status f_argmin_dim(yg_tensor *const *x, yg_tensor **o) { return yg_argmin_dim(x[0], 0, true, o); }
static yg_status f_all(yg_tensor *const *x, yg_tensor **o) { return yg_all(x[0], o); }
static yg_status f_any(yg_tensor *const *x, yg_tensor **o) { return yg_any(x[0], o); }
static yg_status f_all_dim(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t d[] = {1};
    return yg_all_dim(x[0], d, 1, false, o);
}
static yg_status f_any_dim(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t d[] = {0};
    return yg_any_dim(x[0], d, 1, true, o);
}
static yg_status f_var(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t d[] = {1};
    return yg_var(x[0], d, 1, 1, false, o);
}
static yg_status f_var_all(yg_tensor *const *x, yg_tensor **o) { return yg_var(x[0], NULL, 0, 0, true, o); }
static yg_status f_std(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t d[] = {0};
    return yg_std(x[0], d, 1, 1, false, o);
}
static yg_status f_norm2_all(yg_tensor *const *x, yg_tensor **o) { return yg_norm(x[0], 2, NULL, 0, false, o); }
static yg_status f_norm1(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t d[] = {1};
    return yg_norm(x[0], 1, d, 1, false, o);
}
static yg_status f_norm_inf(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t d[] = {0};
    return yg_norm(x[0], INFINITY, d, 1, false, o);
}
static yg_status f_norm3(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t d[] = {-1};
    return yg_norm(x[0], 3, d, 1, true, o);
}
static yg_status f_logsumexp(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t d[] = {1};
    return yg_logsumexp(x[0], d, 1, false, o);
}
static yg_status f_logsumexp_all(yg_tensor *const *x, yg_tensor **o) { return yg_logsumexp(x[0], NULL, 0, true, o); }
static yg_status f_cumsum(yg_tensor *const *x, yg_tensor **o) { return yg_cumsum(x[0], 1, o); }
static yg_status f_cumprod0(yg_tensor *const *x, yg_tensor **o) { return yg_cumprod(x[0], 0, o); }
static yg_status f_cumprod1(yg_tensor *const *x, yg_tensor **o) { return yg_cumprod(x[0], -1, o); }

static yg_status f_bmm(yg_tensor *const *x, yg_tensor **o) { return yg_bmm(x[0], x[1], o); }

/* bmm of operands transposed in their matrix dims (column-major batches). */
static yg_status f_bmm_transposed(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *a = NULL, *b = NULL;
    yg_status st = yg_transpose(x[0], 1, 2, &a);
    if (st == YG_OK)
        st = yg_transpose(x[1], 1, 2, &b);
    if (st == YG_OK)
        st = yg_bmm(a, b, o);
    yg_release(a);
    yg_release(b);
    return st;
}

static yg_status f_softmax(yg_tensor *const *x, yg_tensor **o) { return yg_softmax(x[0], 1, o); }
static yg_status f_softmax0(yg_tensor *const *x, yg_tensor **o) { return yg_softmax(x[0], 0, o); }
static yg_status op_embedding(yg_tensor *const *x, const yg_tensor *i, yg_tensor **o) { return yg_embedding(x[0], i, -1, o); }
/* a [2, 3] batch of row indices into a [4, 3] table, row 2 twice */
static const int64_t emb_s[] = {2, 3}, emb_v[] = {2, 0, 3, 1, 2, 2};
static yg_status f_embedding(yg_tensor *const *x, yg_tensor **o) { return with_index(x, emb_s, 2, emb_v, op_embedding, o); }

static const int64_t k2[] = {2}, k3[] = {3}, s2[] = {2}, p0[] = {0}, p1[] = {1}, d1[] = {1};
static yg_status f_max_pool(yg_tensor *const *x, yg_tensor **o) { return yg_max_pool2d(x[0], k2, 1, NULL, 0, p0, 1, d1, 1, false, o); }
static yg_status f_max_pool_pad(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t dil[] = {1, 2};
    return yg_max_pool2d(x[0], k3, 1, s2, 1, p1, 1, dil, 2, true, o);
}
static yg_status f_avg_pool(yg_tensor *const *x, yg_tensor **o) { return yg_avg_pool2d(x[0], k3, 1, s2, 1, p1, 1, false, true, o); }
static yg_status f_avg_pool_ceil(yg_tensor *const *x, yg_tensor **o) { return yg_avg_pool2d(x[0], k2, 1, s2, 1, p1, 1, true, false, o); }
static yg_status f_avg_pool_bw(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t ss[] = {2, 5, 6};
    return yg_avg_pool2d_backward(x[0], ss, 3, k3, 1, s2, 1, p1, 1, false, true, o);
}
static yg_status f_adaptive(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t os[] = {3, 4};
    return yg_adaptive_avg_pool2d(x[0], os, 2, o);
}
static yg_status f_upsample(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t os[] = {5, 7};
    return yg_upsample_nearest2d(x[0], os, 2, o);
}

static yg_status f_leaky_bw(yg_tensor *const *x, yg_tensor **o) { return yg_leaky_relu_backward(x[0], x[1], 0.1, o); }
static yg_status f_hardtanh_bw(yg_tensor *const *x, yg_tensor **o) { return yg_hardtanh_backward(x[0], x[1], -0.5, 0.5, o); }
static yg_status f_clamp_bw(yg_tensor *const *x, yg_tensor **o) { return yg_clamp_backward(x[0], x[1], -0.5, 0.5, o); }
static yg_status f_clamp_min_bw(yg_tensor *const *x, yg_tensor **o) { return yg_clamp_min_backward(x[0], x[1], 0, o); }
static yg_status f_clamp_max_bw(yg_tensor *const *x, yg_tensor **o) { return yg_clamp_max_backward(x[0], x[1], 0, o); }
static yg_status f_maximum_bw(yg_tensor *const *x, yg_tensor **o) { return yg_maximum_backward(x[0], x[1], x[2], o); }
static yg_status f_minimum_bw(yg_tensor *const *x, yg_tensor **o) { return yg_minimum_backward(x[0], x[1], x[2], o); }

/* mul with a transposed (non-contiguous) first operand. */
static yg_status f_mul_transposed(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *xt = NULL;
    yg_status st = yg_t(x[0], &xt);
    if (st == YG_OK)
        st = yg_mul(xt, x[1], o);
    yg_release(xt);
    return st;
}

/* mm of transposed operands: exercises the BLAS transpose paths. */
static yg_status f_mm_transposed(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *a = NULL, *b = NULL;
    yg_status st = yg_t(x[0], &a);
    if (st == YG_OK)
        st = yg_t(x[1], &b);
    if (st == YG_OK)
        st = yg_mm(a, b, o);
    yg_release(a);
    yg_release(b);
    return st;
}


INPLACE_TWIN_SAMPLE(f_add_, yg_add_(self, x[1], 2.0, &same),
                    yg_add(self, x[1], 2.0, o))
INPLACE_TWIN_SAMPLE(f_sub_, yg_sub_(self, x[1], 0.5, &same),
                    yg_sub(self, x[1], 0.5, o))
INPLACE_TWIN_SAMPLE(f_sub_int_, yg_sub_(self, x[1], 2.0, &same),
                    yg_sub(self, x[1], 2.0, o))
INPLACE_TWIN_SAMPLE(f_mul_, yg_mul_(self, x[1], &same),
                    yg_mul(self, x[1], o))
INPLACE_TWIN_SAMPLE(f_div_, yg_div_(self, x[1], &same),
                    yg_div(self, x[1], o))
INPLACE_TWIN_SAMPLE(f_mul_scalar_, yg_mul_scalar_(self, -3.0, &same),
                    yg_mul_scalar(self, -3.0, o))
INPLACE_TWIN_SAMPLE(f_relu_, yg_relu_(self, &same),
                    yg_relu(self, o))
INPLACE_SAMPLE(f_copy_, yg_copy_(self, x[1], &same))
INPLACE_SAMPLE(f_zero_, yg_zero_(self, &same))

static yg_status f_relu_bw(yg_tensor *const *x, yg_tensor **o) { return yg_relu_backward(x[0], x[1], o); }
static yg_status f_pow_bw(yg_tensor *const *x, yg_tensor **o) { return yg_pow_backward(x[0], x[1], 2.5, o); }

const sample opinfo_derivative_samples[] = {
    {"add", "broadcast [2, 3] + [3], alpha 2.5", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 1, 3)}, f_add, NULL, OPINFO_FRACTIONAL_SCALAR},
    {"add", "broadcast [2, 3] + [3], integer alpha 3", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 1, 3)}, f_add_int},
    {"add", "0-dim + [2, 2]", 2, {F64(-1, 1, 0, 0), F64(-1, 1, 2, 2, 2)}, f_add, NULL, OPINFO_FRACTIONAL_SCALAR},
    {"sub", "broadcast [2, 1] - [1, 3], alpha 0.5", 2, {F64(-1, 1, 2, 2, 1), F64(-1, 1, 2, 1, 3)}, f_sub, NULL, OPINFO_FRACTIONAL_SCALAR},
    {"sub", "broadcast [2, 1] - [1, 3], integer alpha -2", 2, {F64(-1, 1, 2, 2, 1), F64(-1, 1, 2, 1, 3)}, f_sub_int},
    {"mul", "same shape", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 3)}, f_mul},
    {"mul", "transposed self", 2, {F64(-1, 1, 2, 3, 2), F64(-1, 1, 2, 2, 3)}, f_mul_transposed, NULL, OPINFO_FIXED_SHAPE},
    {"div", "broadcast, other away from 0", 2, {F64(-1, 1, 2, 2, 3), F64(0.5, 2, 1, 3)}, f_div},
    {"mul.Scalar", "times -1.5", 1, {F64(-1, 1, 2, 2, 3)}, f_mul_scalar, NULL, OPINFO_FRACTIONAL_SCALAR},
    {"mul.Scalar", "times -3", 1, {F64(-1, 1, 2, 2, 3)}, f_mul_scalar_int},
    {"div.Scalar", "over 4", 1, {F64(-1, 1, 2, 2, 3)}, f_div_scalar},
    {"neg", "", 1, {F64(-1, 1, 1, 5)}, f_neg},
    {"exp", "", 1, {F64(-2, 2, 2, 2, 3)}, f_exp},
    {"log", "positive input", 1, {F64(0.2, 3, 2, 2, 3)}, f_log},
    {"sqrt", "positive input", 1, {F64(0.2, 3, 2, 2, 3)}, f_sqrt},
    {"tanh", "", 1, {F64(-2, 2, 2, 2, 3)}, f_tanh},
    {"sigmoid", "", 1, {F64(-3, 3, 2, 2, 3)}, f_sigmoid},
    {"relu", "mixed signs", 1, {F64(-1, 1, 2, 3, 4)}, f_relu},
    {"pow.Scalar", "cube", 1, {F64(-2, 2, 2, 2, 3)}, f_pow3},
    {"pow.Scalar", "square root, positive input", 1, {F64(0.5, 2, 1, 4)}, f_pow_half},
    {"sum", "all elements", 1, {F64(-1, 1, 2, 2, 3)}, f_sum},
    {"sum.dim", "dim 1", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_sum_dim1},
    {"sum.dim", "dims 0 and -1, keepdim", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_sum_dims_keep},
    {"mean", "all elements", 1, {F64(-1, 1, 2, 3, 4)}, f_mean},
    {"mean.dim", "dim 0", 1, {F64(-1, 1, 2, 3, 4)}, f_mean_dim0},
    {"mean.dim", "dims 1, 2 keepdim", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_mean_dims_keep},
    {"prod.dim", "dim 1, keepdim, mixed signs", 1, {F64(-1.5, 1.5, 2, 3, 4)}, f_prod_dim},
    {"prod.dim", "every dim (prod)", 1, {F64(0.5, 1.5, 2, 2, 3)}, f_prod_all},
    {"amax", "dim 1", 1, {F64(-1, 1, 2, 3, 4)}, f_amax},
    {"amax", "every dim (max)", 1, {F64(-1, 1, 2, 3, 4)}, f_max_all},
    {"amin", "dims 0, 2 keepdim", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_amin},
    {"max.dim", "dim 1 (values)", 1, {F64(-1, 1, 2, 3, 4)}, f_max_dim},
    {"min.dim", "dim -1 keepdim (values)", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_min_dim_keep},
    {"argmax", "not differentiable", 1, {F64(-1, 1, 2, 3, 4)}, f_argmax},
    {"argmax.dim", "not differentiable", 1, {F64(-1, 1, 2, 3, 4)}, f_argmax_dim},
    {"argmin", "not differentiable", 1, {F64(-1, 1, 2, 3, 4)}, f_argmin},
    {"argmin.dim", "not differentiable", 1, {F64(-1, 1, 2, 3, 4)}, f_argmin_dim},
    {"all", "not differentiable", 1, {F64(-1, 1, 2, 3, 4)}, f_all},
    {"all.dim", "not differentiable", 1, {F64(-1, 1, 2, 3, 4)}, f_all_dim},
    {"any", "not differentiable", 1, {F64(-1, 1, 2, 3, 4)}, f_any},
    {"any.dim", "not differentiable", 1, {F64(-1, 1, 2, 3, 4)}, f_any_dim},
    {"var", "dim 1, correction 1", 1, {F64(-1, 1, 2, 3, 4)}, f_var},
    {"var", "every dim, correction 0, keepdim", 1, {F64(-1, 1, 3, 2, 3, 2)}, f_var_all},
    {"var_mean", "var + mean: both gradients defined", 1, {F64(-1, 1, 2, 3, 4)}, f_var_mean_both},
    {"var_mean", "var only: mean's gradient undefined", 1, {F64(-1, 1, 2, 3, 4)}, f_var_mean_var},
    {"var_mean", "mean only: var's gradient undefined", 1, {F64(-1, 1, 2, 3, 4)}, f_var_mean_mean},
    {"std", "dim 0", 1, {F64(-1, 1, 2, 3, 4)}, f_std},
    {"norm", "p 2 over every dim", 1, {F64(-1, 1, 2, 3, 4)}, f_norm2_all},
    {"norm", "p 1, dim 1", 1, {F64(-1, 1, 2, 3, 4)}, f_norm1},
    {"norm", "p inf, dim 0", 1, {F64(-1, 1, 2, 3, 4)}, f_norm_inf},
    {"norm", "p 3, dim -1 keepdim", 1, {F64(-1, 1, 2, 3, 4)}, f_norm3},
    {"logsumexp", "dim 1", 1, {F64(-3, 3, 2, 3, 4)}, f_logsumexp},
    {"logsumexp", "every dim, keepdim", 1, {F64(-3, 3, 2, 3, 4)}, f_logsumexp_all},
    {"cumsum", "dim 1", 1, {F64(-1, 1, 2, 3, 4)}, f_cumsum},
    {"cumprod", "dim 0", 1, {F64(-1.5, 1.5, 2, 4, 3)}, f_cumprod0},
    {"cumprod", "dim -1", 1, {F64(0.5, 1.5, 3, 2, 2, 5)}, f_cumprod1},
    {"mm", "[3, 4] @ [4, 2]", 2, {F64(-1, 1, 2, 3, 4), F64(-1, 1, 2, 4, 2)}, f_mm},
    {"mm", "transposed operands", 2, {F64(-1, 1, 2, 4, 3), F64(-1, 1, 2, 2, 4)}, f_mm_transposed},
    {"bmm", "[2, 3, 4] @ [2, 4, 2]", 2, {F64(-1, 1, 3, 2, 3, 4), F64(-1, 1, 3, 2, 4, 2)}, f_bmm},
    {"bmm", "transposed matrices", 2, {F64(-1, 1, 3, 2, 4, 3), F64(-1, 1, 3, 2, 2, 4)}, f_bmm_transposed},
    {"transpose", "dims 0, -1 of 3-D", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_transpose},
    {"t", "", 1, {F64(-1, 1, 2, 2, 3)}, f_t},
    {"view", "[2, 3] -> [3, -1]", 1, {F64(-1, 1, 2, 2, 3)}, f_view, NULL, OPINFO_CONTIGUOUS_ONLY},
    {"expand", "[3, 1] -> [2, 3, 4]", 1, {F64(-1, 1, 2, 3, 1)}, f_expand},
    {"unsqueeze", "dim 1", 1, {F64(-1, 1, 2, 2, 3)}, f_unsqueeze},
    {"clone", "", 1, {F64(-1, 1, 2, 2, 3)}, f_clone, NULL, OPINFO_ANY_SHAPE},
    {"squeeze", "[2, 1, 3, 1]", 1, {F64(-1, 1, 4, 2, 1, 3, 1)}, f_squeeze},
    {"squeeze.dim", "dim -2 of [2, 1, 3]", 1, {F64(-1, 1, 3, 2, 1, 3)}, f_squeeze_dim},
    {"permute", "[2, 0, 1]", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_permute},
    {"select", "dim 1, index -1", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_select},
    {"slice", "rows 1::2", 1, {F64(-1, 1, 2, 5, 3)}, f_slice},
    {"slice", "negative bounds", 1, {F64(-1, 1, 2, 2, 5)}, f_slice_neg},
    {"select_backward", "into [2, 3, 4]", 1, {F64(-1, 1, 2, 2, 4)}, f_select_backward},
    {"slice_backward", "into [5, 3]", 1, {F64(-1, 1, 2, 2, 3)}, f_slice_backward},
    {"flip", "dims 0, -1", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_flip},
    {"index_select", "repeated row", 1, {F64(-1, 1, 2, 4, 3)}, f_index_select},
    {"index_select_backward", "repeated row", 1, {F64(-1, 1, 2, 3, 3)}, f_index_select_bw},
    {"gather", "dim 1", 1, {F64(-1, 1, 2, 3, 4)}, f_gather},
    {"gather_backward", "dim 1", 1, {F64(-1, 1, 2, 3, 2)}, f_gather_bw},
    {"scatter", "dim 0", 2, {F64(-1, 1, 2, 3, 3), F64(-1, 1, 2, 2, 4)}, f_scatter},
    {"scatter.value", "dim 0", 1, {F64(-1, 1, 2, 3, 3)}, f_scatter_value},
    {"scatter_add", "dim 0", 2, {F64(-1, 1, 2, 3, 3), F64(-1, 1, 2, 2, 4)}, f_scatter_add},
    {"tril", "batched, diagonal 0", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_tril},
    {"triu", "diagonal -1", 1, {F64(-1, 1, 2, 4, 3)}, f_triu},
    {"constant_pad_nd", "two dims", 1, {F64(-1, 1, 2, 2, 3)}, f_constant_pad},
    {"constant_pad_nd", "crop and pad", 1, {F64(-1, 1, 2, 2, 4)}, f_constant_crop},
    {"eq", "not differentiable", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 1, 3)}, f_eq, NULL, OPINFO_ANY_SHAPE},
    {"ne", "not differentiable", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 1, 3)}, f_ne, NULL, OPINFO_ANY_SHAPE},
    {"lt", "not differentiable", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 1, 3)}, f_lt, NULL, OPINFO_ANY_SHAPE},
    {"le", "not differentiable", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 1, 3)}, f_le, NULL, OPINFO_ANY_SHAPE},
    {"gt", "not differentiable", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 1, 3)}, f_gt, NULL, OPINFO_ANY_SHAPE},
    {"ge", "not differentiable", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 1, 3)}, f_ge, NULL, OPINFO_ANY_SHAPE},
    {"eq.Scalar", "not differentiable", 1, {F64(-1, 1, 2, 2, 3)}, f_eq_s, NULL, OPINFO_ANY_SHAPE},
    {"ne.Scalar", "not differentiable", 1, {F64(-1, 1, 2, 2, 3)}, f_ne_s, NULL, OPINFO_ANY_SHAPE},
    {"lt.Scalar", "not differentiable", 1, {F64(-1, 1, 2, 2, 3)}, f_lt_s, NULL, OPINFO_ANY_SHAPE},
    {"le.Scalar", "not differentiable", 1, {F64(-1, 1, 2, 2, 3)}, f_le_s, NULL, OPINFO_ANY_SHAPE},
    {"gt.Scalar", "not differentiable", 1, {F64(-1, 1, 2, 2, 3)}, f_gt_s, NULL, OPINFO_ANY_SHAPE},
    {"ge.Scalar", "not differentiable", 1, {F64(-1, 1, 2, 2, 3)}, f_ge_s, NULL, OPINFO_ANY_SHAPE},
    {"logical_and", "not differentiable", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 3)}, f_logical_and, NULL, OPINFO_ANY_SHAPE},
    {"logical_or", "not differentiable", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 3)}, f_logical_or, NULL, OPINFO_ANY_SHAPE},
    {"logical_xor", "not differentiable", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 3)}, f_logical_xor, NULL, OPINFO_ANY_SHAPE},
    {"logical_not", "not differentiable", 1, {F64(-1, 1, 2, 2, 3)}, f_logical_not, NULL, OPINFO_ANY_SHAPE},
    {"softmax", "dim 1", 1, {F64(-2, 2, 2, 3, 5)}, f_softmax},
    {"softmax", "dim 0", 1, {F64(-2, 2, 2, 3, 5)}, f_softmax0},
    {"embedding", "repeated rows", 1, {F64(-1, 1, 2, 4, 3)}, f_embedding},
    {"max_pool2d_with_indices", "2x2 windows", 1, {F64(-1, 1, 4, 1, 2, 4, 6)}, f_max_pool},
    {"max_pool2d_with_indices", "padding, stride 2, dilation, ceil_mode", 1, {F64(-1, 1, 3, 2, 6, 7)}, f_max_pool_pad},
    {"avg_pool2d", "3x3 stride 2 padding 1", 1, {F64(-1, 1, 3, 2, 5, 6)}, f_avg_pool},
    {"avg_pool2d", "ceil_mode, padding not counted", 1, {F64(-1, 1, 4, 2, 1, 5, 5)}, f_avg_pool_ceil},
    {"avg_pool2d_backward", "into [2, 5, 6]", 1, {F64(-1, 1, 3, 2, 3, 3)}, f_avg_pool_bw},
    {"adaptive_avg_pool2d", "5x7 -> 3x4 (overlapping cells)", 1, {F64(-1, 1, 3, 2, 5, 7)}, f_adaptive},
    {"upsample_nearest2d", "3x3 -> 5x7", 1, {F64(-1, 1, 4, 1, 2, 3, 3)}, f_upsample},
    {"log_softmax", "dim 1", 1, {F64(-2, 2, 2, 3, 5)}, f_log_softmax1},
    {"log_softmax", "dim 0", 1, {F64(-2, 2, 2, 3, 5)}, f_log_softmax0},
    {"nll_loss", "mean", 2, {F64(-2, 0, 2, 4, 5), I64(0, 5, 1, 4)}, f_nll_mean},
    {"nll_loss", "sum, ignore_index 1", 2, {F64(-2, 0, 2, 6, 3), I64(0, 3, 1, 6)}, f_nll_sum_ignore},
    {"nll_loss", "none", 2, {F64(-2, 0, 2, 4, 5), I64(0, 5, 1, 4)}, f_nll_none},
    {"nll_loss", "mean, weight", 3, {F64(-2, 0, 2, 4, 5), I64(0, 5, 1, 4), C64(0.5, 2, 1, 5)}, f_nll_mean_weight},
    {"nll_loss", "mean, weight, ignore_index 1", 2, {F64(-2, 0, 2, 6, 3), C64(0.5, 2, 1, 3)}, f_nll_mean_weight_ignore},
    {"nll_loss", "sum, weight, ignore_index 1", 2, {F64(-2, 0, 2, 6, 3), C64(0.5, 2, 1, 3)}, f_nll_sum_weight_ignore},
    {"nll_loss", "none, weight, ignore_index 1", 2, {F64(-2, 0, 2, 6, 3), C64(0.5, 2, 1, 3)}, f_nll_none_weight_ignore},
    {"nll_loss", "[C] self, 0-dim target, mean, weight", 3, {F64(-2, 0, 1, 5), I64(0, 5, 0, 0), C64(0.5, 2, 1, 5)}, f_nll_mean_weight},
    {"add.Scalar", "plus 1.5 * 2", 1, {F64(-1, 1, 2, 2, 3)}, f_add_scalar, NULL, OPINFO_FRACTIONAL_SCALAR},
    {"add.Scalar", "plus 3 * 2", 1, {F64(-1, 1, 2, 2, 3)}, f_add_scalar_int},
    {"sub.Scalar", "minus 1.5 * 2", 1, {F64(-1, 1, 2, 2, 3)}, f_sub_scalar, NULL, OPINFO_FRACTIONAL_SCALAR},
    {"sub.Scalar", "minus 3 * 2", 1, {F64(-1, 1, 2, 2, 3)}, f_sub_scalar_int},
    {"rsub.Scalar", "1 - 3 x", 1, {F64(-1, 1, 2, 2, 3)}, f_rsub_scalar},
    {"abs", "mixed signs", 1, {F64(-1, 1, 2, 3, 4)}, f_abs},
    {"sign", "zero gradient", 1, {F64(-1, 1, 1, 6)}, f_sign},
    {"expm1", "", 1, {F64(-2, 2, 2, 2, 3)}, f_expm1},
    {"log1p", "input above -1", 1, {F64(-0.5, 3, 2, 2, 3)}, f_log1p},
    {"log2", "positive input", 1, {F64(0.2, 3, 2, 2, 3)}, f_log2},
    {"rsqrt", "positive input", 1, {F64(0.2, 3, 2, 2, 3)}, f_rsqrt},
    {"reciprocal", "input away from 0", 1, {F64(0.3, 3, 2, 2, 3)}, f_reciprocal},
    {"sin", "", 1, {F64(-3, 3, 2, 2, 3)}, f_sin},
    {"cos", "", 1, {F64(-3, 3, 2, 2, 3)}, f_cos},
    {"tan", "inside (-pi/2, pi/2)", 1, {F64(-1.2, 1.2, 2, 2, 3)}, f_tan},
    {"erf", "", 1, {F64(-2, 2, 2, 2, 3)}, f_erf},
    {"gelu", "", 1, {F64(-3, 3, 2, 3, 4)}, f_gelu},
    {"gelu_tanh", "", 1, {F64(-3, 3, 2, 3, 4)}, f_gelu_tanh},
    {"silu", "", 1, {F64(-4, 4, 2, 3, 4)}, f_silu},
    {"elu", "alpha 0.7", 1, {F64(-2, 2, 2, 3, 4)}, f_elu},
    {"leaky_relu", "slope 0.2", 1, {F64(-2, 2, 2, 3, 4)}, f_leaky_relu},
    {"softplus", "beta 2", 1, {F64(-3, 3, 2, 3, 4)}, f_softplus},
    {"softplus", "threshold 0.5 crossed", 1, {F64(-2, 2, 2, 3, 4)}, f_softplus_thr},
    {"hardtanh", "[-0.5, 0.8]", 1, {F64(-1.5, 1.5, 2, 3, 4)}, f_hardtanh, NULL, OPINFO_FRACTIONAL_SCALAR},
    {"hardtanh", "integer bounds [-1, 1]", 1, {F64(-3, 3, 2, 3, 4)}, f_hardtanh_int},
    {"clamp", "[-0.5, 0.5]", 1, {F64(-1, 1, 2, 3, 4)}, f_clamp, NULL, OPINFO_FRACTIONAL_SCALAR},
    {"clamp", "integer bounds [-1, 1]", 1, {F64(-3, 3, 2, 3, 4)}, f_clamp_int},
    {"clamp_min", "min 0.1", 1, {F64(-1, 1, 2, 3, 4)}, f_clamp_min, NULL, OPINFO_FRACTIONAL_SCALAR},
    {"clamp_min", "integer min -1", 1, {F64(-3, 3, 2, 3, 4)}, f_clamp_min_int},
    {"clamp_max", "max 0.1", 1, {F64(-1, 1, 2, 3, 4)}, f_clamp_max, NULL, OPINFO_FRACTIONAL_SCALAR},
    {"clamp_max", "integer max 1", 1, {F64(-3, 3, 2, 3, 4)}, f_clamp_max_int},
    {"floor", "zero gradient", 1, {F64(-3, 3, 2, 2, 3)}, f_floor},
    {"ceil", "zero gradient", 1, {F64(-3, 3, 2, 2, 3)}, f_ceil},
    {"round", "zero gradient", 1, {F64(-3, 3, 2, 2, 3)}, f_round},
    {"trunc", "zero gradient", 1, {F64(-3, 3, 2, 2, 3)}, f_trunc},
    {"maximum", "broadcast [2, 3] with [3]", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 1, 3)}, f_maximum},
    {"minimum", "broadcast [2, 1] with [3]", 2, {F64(-1, 1, 2, 2, 1), F64(-1, 1, 1, 3)}, f_minimum},
    {"atan2", "all quadrants", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 3)}, f_atan2},
    {"atan2", "other constant: grad_input_mask {1, 0}", 2, {F64(-1, 1, 2, 2, 3), C64(-1, 1, 1, 3)}, f_atan2},
    {"atan2", "self constant: grad_input_mask {0, 1}", 2, {C64(-1, 1, 1, 3), F64(-1, 1, 2, 2, 3)}, f_atan2},
    /* Divisors at least 1 away from 0, so the int64 and int32 runs (the
     * values floored or truncated) never divide by zero. */
    {"remainder", "positive divisor", 2, {F64(-3, 3, 2, 2, 3), F64(1.2, 3.5, 1, 3)}, f_remainder},
    {"remainder", "negative divisor", 2, {F64(-3, 3, 1, 5), F64(-3.5, -1.2, 1, 5)}, f_remainder},
    {"remainder.Scalar", "by -0.7", 1, {F64(-3, 3, 2, 2, 3)}, f_remainder_scalar, NULL, OPINFO_FRACTIONAL_SCALAR},
    {"remainder.Scalar", "by -3", 1, {F64(-5, 5, 2, 2, 3)}, f_remainder_scalar_int},
    {"div.trunc", "positive divisor, broadcast", 2, {F64(-3, 3, 2, 2, 3), F64(1.2, 3.5, 1, 3)}, f_div_trunc_op},
    {"div.floor", "negative divisor", 2, {F64(-3, 3, 2, 2, 3), F64(-3.5, -1.2, 2, 2, 3)}, f_div_floor_op},
    {"pow", "positive base", 2, {F64(0.5, 2, 2, 2, 3), F64(-2, 2, 2, 2, 3)}, f_pow_tensor},
    {"pow", "broadcast exponent", 2, {F64(0.5, 2, 2, 2, 3), F64(-1, 3, 0, 0)}, f_pow_tensor},
    {"lerp.Scalar", "weight 0.3", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 1, 3)}, f_lerp},
    {"lerp", "tensor weight", 3, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 3), F64(0, 1, 1, 3)}, f_lerp_tensor},
    {"addcmul", "value 0.5, broadcast", 3, {F64(-1, 1, 1, 3), F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 1)}, f_addcmul, NULL, OPINFO_FRACTIONAL_SCALAR},
    {"addcmul", "integer value -2, broadcast", 3, {F64(-1, 1, 1, 3), F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 1)}, f_addcmul_int},
    {"addcdiv", "value -2", 3, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 3), F64(0.5, 2, 2, 2, 3)}, f_addcdiv},
    {"where", "int64 condition, broadcast", 3, {I64(0, 2, 2, 2, 3), F64(-1, 1, 2, 2, 3), F64(-1, 1, 1, 3)}, f_where, NULL, OPINFO_NO_DTYPE_SWEEP},
    {"where.ScalarOther", "", 2, {I64(0, 2, 2, 2, 3), F64(-1, 1, 2, 2, 3)}, f_where_so, NULL, OPINFO_NO_DTYPE_SWEEP},
    {"where.ScalarSelf", "", 2, {I64(0, 2, 1, 4), F64(-1, 1, 1, 4)}, f_where_ss, NULL, OPINFO_NO_DTYPE_SWEEP},
    {"masked_fill", "mask broadcast over rows", 2, {F64(-1, 1, 2, 3, 4), I64(0, 2, 1, 4)}, f_masked_fill, NULL, OPINFO_NO_DTYPE_SWEEP},
    {"leaky_relu_backward", "grad_output (integer self)", 2, {F64(-1, 1, 2, 2, 3), I64(-2, 2, 2, 2, 3)}, f_leaky_bw, NULL, OPINFO_NO_DTYPE_SWEEP},
    {"hardtanh_backward", "grad_output (integer self)", 2, {F64(-1, 1, 2, 2, 3), I64(-2, 2, 2, 2, 3)}, f_hardtanh_bw, NULL, OPINFO_NO_DTYPE_SWEEP},
    {"clamp_backward", "grad_output (integer self)", 2, {F64(-1, 1, 2, 2, 3), I64(-2, 2, 2, 2, 3)}, f_clamp_bw, NULL, OPINFO_NO_DTYPE_SWEEP},
    {"clamp_min_backward", "grad_output (integer self)", 2, {F64(-1, 1, 2, 2, 3), I64(-2, 2, 2, 2, 3)}, f_clamp_min_bw, NULL, OPINFO_NO_DTYPE_SWEEP},
    {"clamp_max_backward", "grad_output (integer self)", 2, {F64(-1, 1, 2, 2, 3), I64(-2, 2, 2, 2, 3)}, f_clamp_max_bw, NULL, OPINFO_NO_DTYPE_SWEEP},
    {"maximum_backward", "grad_output, integer operands", 3, {F64(-1, 1, 2, 2, 3), I64(-2, 2, 2, 2, 3), I64(-2, 2, 1, 3)}, f_maximum_bw, NULL, OPINFO_NO_DTYPE_SWEEP},
    {"minimum_backward", "grad_output, integer operands", 3, {F64(-1, 1, 2, 2, 3), I64(-2, 2, 2, 2, 3), I64(-2, 2, 1, 3)}, f_minimum_bw, NULL, OPINFO_NO_DTYPE_SWEEP},
    {"tanh_backward", "", 2, {F64(-1, 1, 2, 2, 3), F64(-0.9, 0.9, 2, 2, 3)}, f_tanh_bw},
    {"sigmoid_backward", "", 2, {F64(-1, 1, 2, 2, 3), F64(0.1, 0.9, 2, 2, 3)}, f_sigmoid_bw},
    {"add_", "into a copy, broadcast other", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 1, 3)}, f_add_, f_add__twin},
    {"sub_", "into a copy", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 3)}, f_sub_, f_sub__twin, OPINFO_FRACTIONAL_SCALAR},
    {"sub_", "into a copy, integer alpha 2", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 3)}, f_sub_int_, f_sub_int__twin},
    {"mul_", "into a copy: other's grad reads old self", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 3)}, f_mul_, f_mul__twin},
    {"div_", "into a copy", 2, {F64(-1, 1, 2, 2, 3), F64(0.5, 2, 2, 2, 3)}, f_div_, f_div__twin},
    {"mul_.Scalar", "into a copy", 1, {F64(-1, 1, 2, 2, 3)}, f_mul_scalar_, f_mul_scalar__twin},
    {"relu_", "into a copy", 1, {F64(-1, 1, 2, 3, 4)}, f_relu_, f_relu__twin},
    {"copy_", "broadcast src into a copy", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 1, 3)}, f_copy_},
    {"zero_", "a copy", 1, {F64(-1, 1, 2, 2, 3)}, f_zero_},
    {"relu_backward", "output of mixed signs", 2, {F64(-1, 1, 2, 2, 3), C64(-1, 1, 2, 2, 3)}, f_relu_bw},
    {"pow_backward", "exponent 2.5, positive self", 2, {F64(-1, 1, 2, 2, 3), F64(0.5, 2, 2, 2, 3)}, f_pow_bw},
    {NULL, NULL, 0, {{0}}, NULL, NULL, 0},
};
