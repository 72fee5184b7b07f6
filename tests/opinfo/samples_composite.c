/*
 * samples_composite.c - OpInfo samples of the ops without an entry in
 * specs/derivatives.yaml that are not gradient helpers: whole reductions,
 * linear algebra, shape ops, losses and nn layers (mostly composite: they
 * are gradchecked through their parts).  See opinfo.h.
 */
#include "opinfo.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_rounding.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_extrema.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_slicing.h"
#include "yagrad/ops_join_split.h"
#include "yagrad/ops_padding.h"
#include "yagrad/ops_losses.h"
#include "yagrad/ops_norms.h"
#include "yagrad/ops_layers.h"
#include "yagrad/ops_convolution.h"
#include "yagrad/ops_convolution_general.h"
#include "yagrad/ops_pooling.h"
#include "yagrad/ops_average_pooling.h"
#include "yagrad/ops_adaptive_average_pooling.h"
#include "yagrad/ops_resampling.h"
#include "yagrad/ops_dtype_conversion.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_rounding.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_extrema.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_slicing.h"
#include "yagrad/ops_join_split.h"
#include "yagrad/ops_padding.h"
#include "yagrad/ops_losses.h"
#include "yagrad/ops_norms.h"
#include "yagrad/ops_layers.h"
#include "yagrad/ops_convolution.h"
#include "yagrad/ops_convolution_general.h"
#include "yagrad/ops_pooling.h"
#include "yagrad/ops_average_pooling.h"
#include "yagrad/ops_adaptive_average_pooling.h"
#include "yagrad/ops_resampling.h"
#include "yagrad/ops_dtype_conversion.h"

static yg_status f_prod(yg_tensor *const *x, yg_tensor **o) { return yg_prod(x[0], o); }
static yg_status f_max(yg_tensor *const *x, yg_tensor **o) { return yg_max(x[0], o); }
static yg_status f_min(yg_tensor *const *x, yg_tensor **o) { return yg_min(x[0], o); }
static yg_status f_matmul(yg_tensor *const *x, yg_tensor **o) { return yg_matmul(x[0], x[1], o); }
static yg_status f_dot(yg_tensor *const *x, yg_tensor **o) { return yg_dot(x[0], x[1], o); }
static yg_status f_mv(yg_tensor *const *x, yg_tensor **o) { return yg_mv(x[0], x[1], o); }
static yg_status f_outer(yg_tensor *const *x, yg_tensor **o) { return yg_outer(x[0], x[1], o); }
static yg_status f_addmm(yg_tensor *const *x, yg_tensor **o) { return yg_addmm(x[0], x[1], x[2], 0.5, 2.0, o); }
static yg_status f_baddbmm(yg_tensor *const *x, yg_tensor **o) { return yg_baddbmm(x[0], x[1], x[2], 0.5, 2.0, o); }
static yg_status f_clamp_opt_min(yg_tensor *const *x, yg_tensor **o) { return yg_clamp_opt(x[0], &(const double){-0.25}, NULL, o); }
static yg_status f_clamp_opt_max(yg_tensor *const *x, yg_tensor **o) { return yg_clamp_opt(x[0], NULL, &(const double){0.5}, o); }
static yg_status f_clamp_opt_both(yg_tensor *const *x, yg_tensor **o) { return yg_clamp_opt(x[0], &(const double){-0.25}, &(const double){0.5}, o); }
static yg_status f_clamp_opt_int(yg_tensor *const *x, yg_tensor **o) { return yg_clamp_opt(x[0], &(const double){-1.0}, &(const double){1.0}, o); }
static yg_status f_clamp_opt_int_min(yg_tensor *const *x, yg_tensor **o) { return yg_clamp_opt(x[0], &(const double){-1.0}, NULL, o); }
static yg_status f_linear(yg_tensor *const *x, yg_tensor **o) { return yg_linear(x[0], x[1], x[2], o); }
static yg_status f_linear_nobias(yg_tensor *const *x, yg_tensor **o) { return yg_linear(x[0], x[1], NULL, o); }
static yg_status f_narrow(yg_tensor *const *x, yg_tensor **o) { return yg_narrow(x[0], 0, 1, 2, o); }
static yg_status f_flatten(yg_tensor *const *x, yg_tensor **o) { return yg_flatten(x[0], 1, -1, o); }
static yg_status f_contiguous(yg_tensor *const *x, yg_tensor **o) { return yg_contiguous(x[0], o); }
static yg_status f_cat(yg_tensor *const *x, yg_tensor **o) { return yg_cat((const yg_tensor *const *)x, 3, 1, o); }
static yg_status f_stack(yg_tensor *const *x, yg_tensor **o) { return yg_stack((const yg_tensor *const *)x, 2, -1, o); }
/* Five pieces along dim 0: an empty one and x[2] transposed (a
 * non-contiguous piece), so each piece's gradient goes to its own slot. */
static yg_status f_cat_five(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *t = NULL;
    yg_status st = yg_transpose(x[2], 0, 1, &t);
    if (st == YG_OK) {
        const yg_tensor *parts[5] = {x[0], x[1], t, x[3], x[4]};
        st = yg_cat(parts, 5, 0, o);
    }
    yg_release(t);
    return st;
}
/* Three along dim 1 (of the result), the middle one transposed. */
static yg_status f_stack_transposed(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *t = NULL;
    yg_status st = yg_transpose(x[1], 0, 1, &t);
    if (st == YG_OK) {
        const yg_tensor *parts[3] = {x[0], t, x[2]};
        st = yg_stack(parts, 3, 1, o);
    }
    yg_release(t);
    return st;
}
static yg_status f_mse(yg_tensor *const *x, yg_tensor **o) { return yg_mse_loss(x[0], x[1], 1, o); }
static yg_status f_mse_none(yg_tensor *const *x, yg_tensor **o) { return yg_mse_loss(x[0], x[1], 0, o); }
static yg_status f_l1(yg_tensor *const *x, yg_tensor **o) { return yg_l1_loss(x[0], x[1], 2, o); }
static yg_status f_smooth_l1(yg_tensor *const *x, yg_tensor **o) { return yg_smooth_l1_loss(x[0], x[1], 1, 0.5, o); }
static yg_status f_bce(yg_tensor *const *x, yg_tensor **o) { return yg_binary_cross_entropy(x[0], x[1], NULL, 1, o); }
static yg_status f_bce_weight(yg_tensor *const *x, yg_tensor **o) { return yg_binary_cross_entropy(x[0], x[1], x[2], 2, o); }
static yg_status f_bce_logits(yg_tensor *const *x, yg_tensor **o) { return yg_binary_cross_entropy_with_logits(x[0], x[1], NULL, x[2], 1, o); }
static yg_status f_cross_entropy(yg_tensor *const *x, yg_tensor **o) { return yg_cross_entropy(x[0], x[1], NULL, 1, -100, o); }
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

static yg_status op_cross_entropy_weight(yg_tensor *const *x, const yg_tensor *t, yg_tensor **o) { return yg_cross_entropy(x[0], t, x[1], 1, 1, o); }
static yg_status f_cross_entropy_weight(yg_tensor *const *x, yg_tensor **o) { return with_nll_target(x, op_cross_entropy_weight, o); }
static yg_status f_cross_entropy_weight_kdim(yg_tensor *const *x, yg_tensor **o) { return yg_cross_entropy(x[0], x[1], x[2], 0, -100, o); }
static yg_status f_cross_entropy_weight_soft(yg_tensor *const *x, yg_tensor **o) { return yg_cross_entropy(x[0], x[1], x[2], 2, -100, o); }
static yg_status f_gru(yg_tensor *const *x, yg_tensor **o) { return yg_gru_cell(x[0], x[1], x[2], x[3], NULL, NULL, o); }
static yg_status f_sdpa(yg_tensor *const *x, yg_tensor **o) { return yg_scaled_dot_product_attention(x[0], x[1], x[2], NULL, false, NULL, o); }
static yg_status f_sdpa_causal(yg_tensor *const *x, yg_tensor **o)
{
    const double scale = 0.5;
    return yg_scaled_dot_product_attention(x[0], x[1], x[2], NULL, true, &scale, o);
}
static yg_status f_group_norm(yg_tensor *const *x, yg_tensor **o) { return yg_group_norm(x[0], 2, x[1], x[2], 1e-5, o); }

static yg_status f_reshape(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t shape[] = {4, -1};
    return yg_reshape(x[0], shape, 2, o);
}

static yg_status f_repeat(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t repeats[] = {2, 1, 2};
    return yg_repeat(x[0], repeats, 3, o);
}

/* Six repeated dims: the (repeat, size) pairs would need 12 dims, more
 * than a tensor may have, so repeat goes one dim at a time. */
static yg_status f_repeat_many(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t repeats[] = {2, 2, 3, 2, 1, 2};
    return yg_repeat(x[0], repeats, 6, o);
}

static yg_status f_layer_norm(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t shape[] = {4};
    return yg_layer_norm(x[0], shape, 1, x[1], x[2], 1e-5, o);
}

/* hy + cy, so both outputs are checked. */
static yg_status f_lstm(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *hy = NULL, *cy = NULL;
    yg_status st = yg_lstm_cell(x[0], x[1], x[2], x[3], x[4], NULL, NULL, &hy, &cy);
    if (st == YG_OK)
        st = yg_add(hy, cy, 1.0, o);
    yg_release(hy);
    yg_release(cy);
    return st;
}

/* ---- nn-ops and shape-index (merged from main) ---- */
static const int64_t k2[] = {2}, k3[] = {3}, s2[] = {2}, p0[] = {0}, p1[] = {1}, d1[] = {1}, d2[] = {2};
static yg_status f_max_pool2d(yg_tensor *const *x, yg_tensor **o) { return yg_max_pool2d(x[0], k2, 1, NULL, 0, p0, 1, d1, 1, false, o); }
static yg_status f_max_pool2d_pad(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t dil[] = {1, 2};
    return yg_max_pool2d(x[0], k3, 1, s2, 1, p1, 1, dil, 2, true, o);
}
static yg_status f_max_pool1d(yg_tensor *const *x, yg_tensor **o) { return yg_max_pool1d(x[0], k3, 1, s2, 1, p1, 1, d2, 1, true, o); }

/* values + indices (as float64), so both outputs are checked */
static yg_status f_max_pool1d_idx(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *v = NULL, *i = NULL;
    yg_status st = yg_max_pool1d_with_indices(x[0], k2, 1, NULL, 0, p0, 1, d1, 1, false, &v, &i);
    if (st == YG_OK)
        st = yg_add(v, i, 1.0, o);
    yg_release(v);
    yg_release(i);
    return st;
}

static const int64_t pad2[] = {1, 2, 2, 1};
static yg_status f_pad_constant(yg_tensor *const *x, yg_tensor **o) { return yg_pad(x[0], pad2, 4, YG_PAD_MODE_CONSTANT, 0.5, o); }
static yg_status f_pad_reflect(yg_tensor *const *x, yg_tensor **o) { return yg_pad(x[0], pad2, 4, YG_PAD_MODE_REFLECT, 0, o); }
static yg_status f_pad_replicate(yg_tensor *const *x, yg_tensor **o) { return yg_pad(x[0], pad2, 4, YG_PAD_MODE_REPLICATE, 0, o); }

static yg_status f_batch_norm_train(yg_tensor *const *x, yg_tensor **o) { return yg_batch_norm(x[0], x[1], x[2], NULL, NULL, true, 0.1, 1e-5, o); }

/* evaluation with running statistics (copies: the op may write them) */
static yg_status f_batch_norm_eval(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *rm = NULL, *rv = NULL;
    yg_status st = yg_clone(x[3], &rm);
    if (st == YG_OK)
        st = yg_clone(x[4], &rv);
    if (st == YG_OK)
        st = yg_batch_norm(x[0], x[1], x[2], rm, rv, false, 0.1, 1e-5, o);
    yg_release(rm);
    yg_release(rv);
    return st;
}

/* ---- dtypes (merged from main): conversions ---- */
static yg_status f_to_same(yg_tensor *const *x, yg_tensor **o) { return yg_to_dtype(x[0], YG_FLOAT64, false, o); }
static yg_status f_to_int32(yg_tensor *const *x, yg_tensor **o) { return yg_to_dtype(x[0], YG_INT32, false, o); }
static yg_status f_type_as(yg_tensor *const *x, yg_tensor **o) { return yg_type_as(x[0], x[1], o); }

/* ---- convolution front ends ---- */
static const int64_t fc1[3] = {1, 1, 1}, fc0[3] = {0, 0, 0}, fc2[3] = {2, 2, 2};
static yg_status f_conv1d(yg_tensor *const *x, yg_tensor **o) { return yg_conv1d(x[0], x[1], x[2], fc2, 1, fc1, 1, fc1, 1, 1, o); }
static yg_status f_conv1d_same(yg_tensor *const *x, yg_tensor **o) { return yg_conv1d_padding(x[0], x[1], NULL, fc1, 1, YG_CONV_PADDING_SAME, fc2, 1, 1, o); }
static yg_status f_conv2d(yg_tensor *const *x, yg_tensor **o) { return yg_conv2d(x[0], x[1], x[2], fc1, 2, fc1, 2, fc1, 2, 2, o); }
static yg_status f_conv2d_unbatched(yg_tensor *const *x, yg_tensor **o) { return yg_conv2d(x[0], x[1], NULL, fc2, 2, fc0, 2, fc1, 2, 1, o); }
static yg_status f_conv2d_same(yg_tensor *const *x, yg_tensor **o) { return yg_conv2d_padding(x[0], x[1], x[2], fc1, 2, YG_CONV_PADDING_SAME, fc1, 2, 1, o); }
static yg_status f_conv2d_valid(yg_tensor *const *x, yg_tensor **o) { return yg_conv2d_padding(x[0], x[1], NULL, fc1, 2, YG_CONV_PADDING_VALID, fc1, 2, 1, o); }
/* samples have at most 4 dims: a 3-d weight [a, b, k...] comes as [a b, k...] */
static yg_status weight5(const yg_tensor *w, int64_t a, int64_t b, yg_tensor **o)
{
    int64_t sizes[5] = {a, b, 0, 0, 0};
    for (int i = 0; i < 3; i++)
        sizes[2 + i] = yg_tensor_size(w, 1 + i);
    return yg_reshape(w, sizes, 5, o);
}
static yg_status f_conv3d(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *w = NULL;
    yg_status st = weight5(x[1], 2, 2, &w);
    if (st == YG_OK)
        st = yg_conv3d(x[0], w, x[2], fc1, 3, fc1, 3, fc1, 3, 1, o);
    yg_release(w);
    return st;
}
static yg_status f_conv3d_same(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *w = NULL;
    yg_status st = weight5(x[1], 2, 1, &w);
    if (st == YG_OK)
        st = yg_conv3d_padding(x[0], w, NULL, fc1, 3, YG_CONV_PADDING_SAME, fc1, 3, 1, o);
    yg_release(w);
    return st;
}
static yg_status f_conv_t1d(yg_tensor *const *x, yg_tensor **o) { return yg_conv_transpose1d(x[0], x[1], x[2], fc2, 1, fc0, 1, fc1, 1, 1, fc1, 1, o); }
static yg_status f_conv_t2d(yg_tensor *const *x, yg_tensor **o) { return yg_conv_transpose2d(x[0], x[1], x[2], fc2, 2, fc1, 2, fc1, 2, 2, fc1, 2, o); }
static yg_status f_conv_t3d(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *w = NULL;
    yg_status st = weight5(x[1], 2, 1, &w);
    if (st == YG_OK)
        st = yg_conv_transpose3d(x[0], w, NULL, fc1, 3, fc0, 3, fc0, 3, 1, fc1, 3, o);
    yg_release(w);
    return st;
}
static yg_status f_convolution(yg_tensor *const *x, yg_tensor **o) { return yg_convolution(x[0], x[1], x[2], fc2, 2, fc0, 2, fc1, 2, false, fc0, 2, 1, o); }
/* ---- pool: 1-d and 3-d composites, pixel and channel shuffles ---- */
static const int64_t pc_k3[] = {3}, pc_s2[] = {2}, pc_p1[] = {1}, pc_k2[] = {2}, pc_d1[] = {1};
static yg_status f_max_pool3d(yg_tensor *const *x, yg_tensor **o) { return yg_max_pool3d(x[0], pc_k3, 1, pc_s2, 1, pc_p1, 1, pc_d1, 1, true, o); }
static yg_status f_avg_pool1d(yg_tensor *const *x, yg_tensor **o) { return yg_avg_pool1d(x[0], pc_k3, 1, pc_s2, 1, pc_p1, 1, false, true, o); }
static yg_status f_avg_pool1d_ceil(yg_tensor *const *x, yg_tensor **o) { return yg_avg_pool1d(x[0], pc_k2, 1, NULL, 0, pc_p1, 1, true, false, o); }
static yg_status f_adaptive_avg_pool1d(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t os[] = {4};
    return yg_adaptive_avg_pool1d(x[0], os, 1, o);
}
static yg_status f_pixel_shuffle(yg_tensor *const *x, yg_tensor **o) { return yg_pixel_shuffle(x[0], 2, o); }
static yg_status f_interp_nearest(yg_tensor *const *x, yg_tensor **o) { return yg_interpolate_opt(x[0], &(yg_interpolate_options){.size = YG_INTS(5, 7)}, o); }
static yg_status f_interp_nearest_scale(yg_tensor *const *x, yg_tensor **o) { return yg_interpolate_opt(x[0], &(yg_interpolate_options){.scale_factor = YG_SET(2.5)}, o); }
static yg_status f_interp_bilinear(yg_tensor *const *x, yg_tensor **o) { return yg_interpolate(x[0], (const int64_t[]){4}, 1, NULL, YG_INTERPOLATION_MODE_BILINEAR, true, o); }
static yg_status f_interp_bilinear_scale(yg_tensor *const *x, yg_tensor **o) { return yg_interpolate(x[0], NULL, 0, &(double){1.5}, YG_INTERPOLATION_MODE_BILINEAR, false, o); }
static yg_status f_pixel_unshuffle(yg_tensor *const *x, yg_tensor **o) { return yg_pixel_unshuffle(x[0], 2, o); }
static yg_status f_pixel_shuffle_3(yg_tensor *const *x, yg_tensor **o) { return yg_pixel_shuffle(x[0], 3, o); }
static yg_status f_channel_shuffle(yg_tensor *const *x, yg_tensor **o) { return yg_channel_shuffle(x[0], 3, o); }
static yg_status f_channel_shuffle_3d(yg_tensor *const *x, yg_tensor **o) { return yg_channel_shuffle(x[0], 2, o); }

const sample opinfo_composite_samples[] = {
    {"prod", "every element", 1, {F64(0.5, 1.5, 2, 2, 3)}, f_prod},
    {"max", "every element", 1, {F64(-1, 1, 2, 3, 4)}, f_max},
    {"min", "every element", 1, {F64(-1, 1, 2, 3, 4)}, f_min},
    {"matmul", "[3, 4] @ [4, 2]", 2, {F64(-1, 1, 2, 3, 4), F64(-1, 1, 2, 4, 2)}, f_matmul},
    {"matmul", "[4] @ [4, 2]", 2, {F64(-1, 1, 1, 4), F64(-1, 1, 2, 4, 2)}, f_matmul},
    {"matmul", "[2, 3, 4] @ [4]", 2, {F64(-1, 1, 3, 2, 3, 4), F64(-1, 1, 1, 4)}, f_matmul},
    {"matmul", "batch broadcast [2, 3, 4] @ [4, 2]", 2, {F64(-1, 1, 3, 2, 3, 4), F64(-1, 1, 2, 4, 2)}, f_matmul},
    {"dot", "[5] . [5]", 2, {F64(-1, 1, 1, 5), F64(-1, 1, 1, 5)}, f_dot},
    {"mv", "[3, 4] @ [4]", 2, {F64(-1, 1, 2, 3, 4), F64(-1, 1, 1, 4)}, f_mv},
    {"outer", "[3] x [4]", 2, {F64(-1, 1, 1, 3), F64(-1, 1, 1, 4)}, f_outer},
    {"addmm", "beta 0.5, alpha 2, broadcast self", 3, {F64(-1, 1, 1, 2), F64(-1, 1, 2, 3, 4), F64(-1, 1, 2, 4, 2)}, f_addmm},
    {"baddbmm", "beta 0.5, alpha 2", 3, {F64(-1, 1, 3, 2, 3, 2), F64(-1, 1, 3, 2, 3, 4), F64(-1, 1, 3, 2, 4, 2)}, f_baddbmm},
    {"clamp.opt", "min only", 1, {F64(-1, 1, 2, 3, 4)}, f_clamp_opt_min, NULL, OPINFO_FRACTIONAL_SCALAR},
    {"clamp.opt", "max only", 1, {F64(-1, 1, 2, 3, 4)}, f_clamp_opt_max, NULL, OPINFO_FRACTIONAL_SCALAR},
    {"clamp.opt", "both bounds", 1, {F64(-1, 1, 2, 3, 4)}, f_clamp_opt_both, NULL, OPINFO_FRACTIONAL_SCALAR},
    {"clamp.opt", "integer bounds [-1, 1]", 1, {F64(-3, 3, 2, 3, 4)}, f_clamp_opt_int},
    {"clamp.opt", "integer min -1 only", 1, {F64(-3, 3, 2, 3, 4)}, f_clamp_opt_int_min},
    {"linear", "with bias", 3, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 4, 3), F64(-1, 1, 1, 4)}, f_linear},
    {"linear", "without bias, batched input", 2, {F64(-1, 1, 3, 2, 2, 3), F64(-1, 1, 2, 4, 3)}, f_linear_nobias},
    {"reshape", "[2, 3, 4] -> [4, -1]", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_reshape},
    {"narrow", "dim 0, rows 1..2", 1, {F64(-1, 1, 2, 4, 3)}, f_narrow},
    {"flatten", "dims 1..-1", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_flatten},
    {"contiguous", "", 1, {F64(-1, 1, 2, 3, 4)}, f_contiguous, NULL, OPINFO_ANY_SHAPE},
    {"repeat", "[2, 3] x [2, 1, 2]", 1, {F64(-1, 1, 2, 2, 3)}, f_repeat},
    {"repeat", "[2, 1, 2, 3] x [2, 2, 3, 2, 1, 2]", 1, {F64(-1, 1, 4, 2, 1, 2, 3)}, f_repeat_many},
    {"cat", "three along dim 1", 3, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 1), F64(-1, 1, 2, 2, 2)}, f_cat},
    {"stack", "two along a new last dim", 2, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 3)}, f_stack},
    {"cat", "five along dim 0, an empty and a transposed piece", 5, {F64(-1, 1, 2, 1, 3), F64(-1, 1, 2, 0, 3), F64(-1, 1, 2, 3, 2), F64(-1, 1, 2, 4, 3), F64(-1, 1, 2, 2, 3)}, f_cat_five},
    {"stack", "three along dim 1, the middle one transposed", 3, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 3, 2), F64(-1, 1, 2, 2, 3)}, f_stack_transposed},
    {"mse_loss", "mean", 2, {F64(-1, 1, 2, 3, 4), C64(-1, 1, 2, 3, 4)}, f_mse},
    {"mse_loss", "none", 2, {F64(-1, 1, 2, 3, 4), C64(-1, 1, 2, 3, 4)}, f_mse_none},
    {"l1_loss", "sum", 2, {F64(-1, 1, 2, 3, 4), C64(-1, 1, 2, 3, 4)}, f_l1},
    {"smooth_l1_loss", "mean, beta 0.5", 2, {F64(-2, 2, 2, 3, 4), C64(-1, 1, 2, 3, 4)}, f_smooth_l1},
    {"binary_cross_entropy", "mean", 2, {F64(0.1, 0.9, 2, 3, 4), C64(0, 1, 2, 3, 4)}, f_bce},
    {"binary_cross_entropy", "sum, weight", 3, {F64(0.1, 0.9, 2, 3, 4), C64(0, 1, 2, 3, 4), C64(0.5, 2, 1, 4)}, f_bce_weight},
    {"binary_cross_entropy_with_logits", "mean, pos_weight", 3, {F64(-3, 3, 2, 3, 4), C64(0, 1, 2, 3, 4), C64(0.5, 2, 1, 4)}, f_bce_logits},
    {"cross_entropy", "mean", 2, {F64(-2, 2, 2, 4, 5), I64(0, 5, 1, 4)}, f_cross_entropy},
    {"cross_entropy", "mean, weight, ignore_index 1", 2, {F64(-2, 2, 2, 6, 3), C64(0.5, 2, 1, 3)}, f_cross_entropy_weight},
    {"cross_entropy", "none, weight, [N, C, d]", 3, {F64(-2, 2, 3, 2, 3, 4), I64(0, 3, 2, 2, 4), C64(0.5, 2, 1, 3)}, f_cross_entropy_weight_kdim},
    {"cross_entropy", "sum, weight, class probabilities", 3, {F64(-2, 2, 2, 2, 3), C64(0, 1, 2, 2, 3), C64(0.5, 2, 1, 3)}, f_cross_entropy_weight_soft},
    {"layer_norm", "last dim, affine", 3, {F64(-1, 1, 3, 2, 3, 4), F64(0.5, 1.5, 1, 4), F64(-1, 1, 1, 4)}, f_layer_norm},
    {"lstm_cell", "without biases, hy + cy", 5, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 4), F64(-1, 1, 2, 2, 4), F64(-0.5, 0.5, 2, 16, 3), F64(-0.5, 0.5, 2, 16, 4)}, f_lstm},
    {"gru_cell", "without biases", 4, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 4), F64(-0.5, 0.5, 2, 12, 3), F64(-0.5, 0.5, 2, 12, 4)}, f_gru},
    {"scaled_dot_product_attention", "no mask", 3, {F64(-1, 1, 3, 2, 3, 4), F64(-1, 1, 3, 2, 5, 4), F64(-1, 1, 3, 2, 5, 4)}, f_sdpa},
    {"scaled_dot_product_attention", "causal, scale 0.5", 3, {F64(-1, 1, 3, 2, 4, 4), F64(-1, 1, 3, 2, 4, 4), F64(-1, 1, 3, 2, 4, 4)}, f_sdpa_causal},
    {"group_norm", "2 groups of [2, 4, 3], affine", 3, {F64(-1, 1, 3, 2, 4, 3), F64(0.5, 1.5, 1, 4), F64(-1, 1, 1, 4)}, f_group_norm},
    /* ---- nn-ops and shape-index (merged from main) ---- */
    {"max_pool2d", "2x2 windows", 1, {F64(-1, 1, 4, 1, 2, 4, 6)}, f_max_pool2d},
    {"max_pool2d", "padding, stride 2, dilation, ceil_mode", 1, {F64(-1, 1, 3, 2, 6, 7)}, f_max_pool2d_pad},
    {"max_pool1d", "kernel 3, stride 2, padding 1, dilation 2, ceil_mode", 1, {F64(-1, 1, 3, 2, 2, 10)}, f_max_pool1d},
    {"max_pool1d_with_indices", "kernel 2, values + indices", 1, {F64(-1, 1, 3, 2, 3, 6)}, f_max_pool1d_idx},
    {"pad", "constant 0.5", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_pad_constant},
    {"pad", "reflect", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_pad_reflect},
    {"pad", "replicate", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_pad_replicate},
    {"batch_norm", "training, batch statistics, affine", 3, {F64(-1, 1, 2, 4, 3), F64(0.5, 1.5, 1, 3), F64(-1, 1, 1, 3)}, f_batch_norm_train},
    {"batch_norm", "evaluation, running statistics", 5, {F64(-1, 1, 3, 2, 3, 2), F64(0.5, 1.5, 1, 3), F64(-1, 1, 1, 3), C64(-0.5, 0.5, 1, 3), C64(0.5, 2, 1, 3)}, f_batch_norm_eval},
    /* ---- dtypes (merged from main): conversions ---- */
    {"to.dtype", "to float64 without copy", 1, {F64(-1, 1, 2, 2, 3)}, f_to_same, NULL, OPINFO_ANY_SHAPE},
    {"to.dtype", "to int32: truncates, no gradient", 1, {F64(-3, 3, 2, 2, 3)}, f_to_int32, NULL, OPINFO_ANY_SHAPE | OPINFO_NO_GRAD},
    {"type_as", "a floating other", 2, {F64(-1, 1, 2, 2, 3), C64(-1, 1, 1, 1)}, f_type_as},
    {"type_as", "an int64 other: truncates, no gradient", 2, {F64(-3, 3, 2, 2, 3), I64(0, 2, 1, 1)}, f_type_as, NULL, OPINFO_NO_GRAD},
    /* ---- convolution front ends ---- */
    {"conv1d", "stride 2, padding 1, bias", 3, {F64(-1, 1, 3, 2, 2, 7), F64(-1, 1, 3, 3, 2, 3), F64(-1, 1, 1, 3)}, f_conv1d},
    {"conv1d.padding", "same, dilation 2, odd total pad", 2, {F64(-1, 1, 3, 2, 2, 6), F64(-1, 1, 3, 2, 2, 2)}, f_conv1d_same},
    {"conv2d", "groups 2, padding 1, bias", 3, {F64(-1, 1, 4, 2, 4, 4, 5), F64(-1, 1, 4, 4, 2, 3, 3), F64(-1, 1, 1, 4)}, f_conv2d},
    {"conv2d", "unbatched [C, H, W], stride 2", 2, {F64(-1, 1, 3, 2, 5, 5), F64(-1, 1, 4, 3, 2, 2, 2)}, f_conv2d_unbatched},
    {"conv2d.padding", "same, 2x4 kernel, bias", 3, {F64(-1, 1, 4, 1, 2, 4, 5), F64(-1, 1, 4, 3, 2, 2, 4), F64(-1, 1, 1, 3)}, f_conv2d_same},
    {"conv2d.padding", "valid", 2, {F64(-1, 1, 4, 1, 2, 4, 5), F64(-1, 1, 4, 3, 2, 2, 3)}, f_conv2d_valid},
    {"conv3d", "unbatched, padding 1, bias", 3, {F64(-1, 1, 4, 2, 3, 3, 3), F64(-1, 1, 4, 4, 2, 2, 2), F64(-1, 1, 1, 2)}, f_conv3d},
    {"conv3d.padding", "unbatched, same, 3x1x2 kernel", 2, {F64(-1, 1, 4, 1, 3, 2, 3), F64(-1, 1, 4, 2, 3, 1, 2)}, f_conv3d_same},
    {"conv_transpose1d", "stride 2, output_padding 1, bias", 3, {F64(-1, 1, 3, 2, 3, 4), F64(-1, 1, 3, 3, 2, 3), F64(-1, 1, 1, 2)}, f_conv_t1d},
    {"conv_transpose2d", "groups 2, stride 2, padding 1, output_padding 1", 3, {F64(-1, 1, 4, 1, 4, 3, 3), F64(-1, 1, 4, 4, 1, 3, 3), F64(-1, 1, 1, 2)}, f_conv_t2d},
    {"conv_transpose3d", "unbatched, 2x2x2 kernel", 2, {F64(-1, 1, 4, 2, 2, 2, 2), F64(-1, 1, 4, 2, 2, 2, 2)}, f_conv_t3d},
    {"convolution", "2-d, stride 2, bias", 3, {F64(-1, 1, 4, 2, 2, 5, 5), F64(-1, 1, 4, 3, 2, 3, 3), F64(-1, 1, 1, 3)}, f_convolution},
    /* pool: 1-d and 3-d composites, pixel and channel shuffles */
    {"max_pool3d", "kernel 3, stride 2, padding 1, ceil_mode", 1, {F64(-1, 1, 4, 2, 4, 5, 6)}, f_max_pool3d},
    {"avg_pool1d", "kernel 3, stride 2, padding 1", 1, {F64(-1, 1, 3, 2, 3, 9)}, f_avg_pool1d},
    {"avg_pool1d", "kernel 2, padding 1, ceil_mode, padding not counted", 1, {F64(-1, 1, 2, 3, 8)}, f_avg_pool1d_ceil},
    {"adaptive_avg_pool1d", "L 7 -> 4", 1, {F64(-1, 1, 3, 2, 3, 7)}, f_adaptive_avg_pool1d},
    {"pixel_shuffle", "factor 2, [1, 8, 2, 3]", 1, {F64(-1, 1, 4, 1, 8, 2, 3)}, f_pixel_shuffle},
    {"interpolate", "nearest to [5, 7]", 1, {F64(-1, 1, 4, 1, 2, 3, 3)}, f_interp_nearest},
    {"interpolate", "nearest, scale_factor 2.5", 1, {F64(-1, 1, 3, 2, 2, 3)}, f_interp_nearest_scale},
    {"interpolate", "bilinear to [4] (4 x 4), align_corners", 1, {F64(-1, 1, 4, 1, 2, 3, 3)}, f_interp_bilinear},
    {"interpolate", "bilinear, scale_factor 1.5", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_interp_bilinear_scale},
    {"pixel_shuffle", "factor 3, [9, 2, 2] (no batch)", 1, {F64(-1, 1, 3, 9, 2, 2)}, f_pixel_shuffle_3},
    {"pixel_unshuffle", "factor 2, [2, 2, 4, 6]", 1, {F64(-1, 1, 4, 2, 2, 4, 6)}, f_pixel_unshuffle},
    {"channel_shuffle", "groups 3, [2, 6, 2, 2]", 1, {F64(-1, 1, 4, 2, 6, 2, 2)}, f_channel_shuffle},
    {"channel_shuffle", "groups 2, [1, 4, 5]", 1, {F64(-1, 1, 3, 1, 4, 5)}, f_channel_shuffle_3d},
    {NULL, NULL, 0, {{0}}, NULL, NULL, 0},
};
