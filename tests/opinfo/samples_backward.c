/*
 * samples_backward.c - OpInfo samples of the gradient helpers (the ops
 * derivative formulas call: *_backward, sum_to, ...); those with an entry
 * of their own in specs/derivatives.yaml are gradchecked and
 * gradgradchecked on these rows too.  Where a helper reads the
 * forward's output, the sample computes it from the inputs so that the
 * helper sees consistent values.  See opinfo.h.
 */
#include "opinfo.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_activations_backward.h"
#include "yagrad/ops_math_backward.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_cumulative.h"
#include "yagrad/ops_extrema.h"
#include "yagrad/ops_statistics.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_padding.h"
#include "yagrad/ops_indexing.h"
#include "yagrad/ops_advanced_indexing.h"
#include "yagrad/ops_softmax.h"
#include "yagrad/ops_losses.h"
#include "yagrad/ops_norms.h"
#include "yagrad/ops_norms_backward.h"
#include "yagrad/ops_layers.h"
#include "yagrad/ops_attention.h"
#include "yagrad/ops_convolution.h"
#include "yagrad/ops_convolution_general.h"
#include "yagrad/ops_pooling.h"
#include "yagrad/ops_adaptive_average_pooling.h"
#include "yagrad/ops_resampling.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_activations_backward.h"
#include "yagrad/ops_math_backward.h"
#include "yagrad/ops_sums.h"
#include "yagrad/ops_cumulative.h"
#include "yagrad/ops_extrema.h"
#include "yagrad/ops_statistics.h"
#include "yagrad/ops_linalg.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_padding.h"
#include "yagrad/ops_indexing.h"
#include "yagrad/ops_advanced_indexing.h"
#include "yagrad/ops_softmax.h"
#include "yagrad/ops_losses.h"
#include "yagrad/ops_layers.h"
#include "yagrad/ops_convolution.h"
#include "yagrad/ops_convolution_general.h"
#include "yagrad/ops_pooling.h"
#include "yagrad/ops_adaptive_average_pooling.h"
#include "yagrad/ops_resampling.h"

static const int64_t dim1[] = {1}, sz34[] = {3, 4};

static yg_status f_gelu_bw(yg_tensor *const *x, yg_tensor **o) { return yg_gelu_backward(x[0], x[1], o); }
static yg_status f_gelu_tanh_bw(yg_tensor *const *x, yg_tensor **o) { return yg_gelu_tanh_backward(x[0], x[1], o); }
static yg_status f_silu_bw(yg_tensor *const *x, yg_tensor **o) { return yg_silu_backward(x[0], x[1], o); }
static yg_status f_elu_bw(yg_tensor *const *x, yg_tensor **o) { return yg_elu_backward(x[0], x[1], 0.7, o); }
static yg_status f_softplus_bw(yg_tensor *const *x, yg_tensor **o) { return yg_softplus_backward(x[0], x[1], 2.0, 20.0, o); }
static yg_status f_pow_bw_self(yg_tensor *const *x, yg_tensor **o) { return yg_pow_backward_self(x[0], x[1], x[2], o); }

static yg_status f_atan2_bw(yg_tensor *const *x, yg_tensor **o)
{
    const bool mask[] = {true, true};
    yg_tensor *gs = NULL, *go = NULL;
    yg_status st = yg_atan2_backward(x[0], x[1], x[2], mask, &gs, &go);
    if (st == YG_OK)
        st = yg_add(gs, go, 1.0, o);
    yg_release(gs);
    yg_release(go);
    return st;
}

static yg_status f_pow_bw_exponent(yg_tensor *const *x, yg_tensor **o) { return yg_pow_backward_exponent(x[0], x[1], x[2], x[3], o); }

static yg_status f_prod_bw(yg_tensor *const *x, yg_tensor **o) { return yg_prod_backward(x[0], x[1], dim1, 1, false, o); }
static yg_status f_prod_dbw(yg_tensor *const *x, yg_tensor **o) { return yg_prod_double_backward(x[0], x[1], x[2], dim1, 1, false, o); }
static yg_status f_value_sel_bw(yg_tensor *const *x, yg_tensor **o)
{
    return yg_value_selecting_reduction_backward(x[0], 1, x[1], sz34, 2, false, o);
}

/* Helpers that read the forward's output take it as an input (any values
 * are valid for them), except minmax_backward, which compares it with self:
 * there output = amax(self, 1). */
static yg_status f_minmax_bw(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *output = NULL;
    yg_status st = yg_amax(x[1], dim1, 1, false, &output);
    if (st == YG_OK)
        st = yg_minmax_backward(x[0], x[1], output, dim1, 1, false, o);
    yg_release(output);
    return st;
}
static yg_status f_norm_bw(yg_tensor *const *x, yg_tensor **o) { return yg_norm_backward(x[0], x[1], x[2], 2, dim1, 1, false, o); }
static yg_status f_norm3_bw(yg_tensor *const *x, yg_tensor **o) { return yg_norm_backward(x[0], x[1], x[2], 3, dim1, 1, false, o); }
static yg_status f_lse_bw(yg_tensor *const *x, yg_tensor **o) { return yg_logsumexp_backward(x[0], x[1], x[2], dim1, 1, false, o); }
static yg_status f_log_softmax_bw(yg_tensor *const *x, yg_tensor **o) { return yg_log_softmax_backward(x[0], x[1], 1, o); }
static yg_status f_log_softmax_jvp(yg_tensor *const *x, yg_tensor **o) { return yg_log_softmax_jvp(x[0], x[1], 1, o); }
static yg_status f_softmax_bw(yg_tensor *const *x, yg_tensor **o) { return yg_softmax_backward(x[0], x[1], 1, o); }
static yg_status f_softmax_bw_fused(yg_tensor *const *x, yg_tensor **o) { return yg_softmax_backward_fused(x[0], x[1], 1, o); }
static yg_status f_mm_mat1_bw(yg_tensor *const *x, yg_tensor **o) { return yg_mm_mat1_backward(x[0], x[1], x[2], o); }
static yg_status f_mm_mat2_bw(yg_tensor *const *x, yg_tensor **o) { return yg_mm_mat2_backward(x[0], x[1], x[2], o); }

/* The operand whose layout the gradient follows given column-major: as
 * t() of the sample's row-major [cols, rows] input. */
static yg_status f_mm_mat1_bw_colmajor(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *m1 = NULL;
    yg_status st = yg_t(x[1], &m1);
    if (st == YG_OK)
        st = yg_mm_mat1_backward(x[0], m1, x[2], o);
    yg_release(m1);
    return st;
}
static yg_status f_mm_mat2_bw_colmajor(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *m2 = NULL;
    yg_status st = yg_t(x[2], &m2);
    if (st == YG_OK)
        st = yg_mm_mat2_backward(x[0], x[1], m2, o);
    yg_release(m2);
    return st;
}

static yg_status f_var_bw(yg_tensor *const *x, yg_tensor **o) { return yg_var_backward(x[0], x[1], dim1, 1, 1, false, o); }
static yg_status f_cumsum_bw(yg_tensor *const *x, yg_tensor **o) { return yg_cumsum_backward(x[0], 1, o); }
static yg_status f_cumprod_bw(yg_tensor *const *x, yg_tensor **o) { return yg_cumprod_backward(x[0], x[1], 1, o); }
static yg_status f_cumprod_jvp(yg_tensor *const *x, yg_tensor **o) { return yg_cumprod_jvp(x[0], x[1], 1, o); }
static yg_status f_cumprod_dbw(yg_tensor *const *x, yg_tensor **o) { return yg_cumprod_double_backward(x[0], x[1], x[2], 1, o); }
static yg_status f_sum_bw(yg_tensor *const *x, yg_tensor **o) { return yg_sum_backward(x[0], sz34, 2, dim1, 1, false, o); }
static yg_status f_mean_bw(yg_tensor *const *x, yg_tensor **o) { return yg_mean_backward(x[0], sz34, 2, dim1, 1, true, o); }

static yg_status f_sum_to(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t size[] = {3, 1};
    return yg_sum_to(x[0], size, 2, o);
}

static yg_status f_permute_bw(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t dims[] = {2, 0, 1};
    return yg_permute_backward(x[0], dims, 3, o);
}

static yg_status f_scatter_src_bw(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t src[] = {2, 3};
    return yg_scatter_src_backward(x[0], 0, x[1], src, 2, o);
}

static yg_status f_pad_bw(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t pad[] = {1, 2, 0, 1};
    return yg_constant_pad_nd_backward(x[0], pad, 4, o);
}

static yg_status f_nll_bw(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t self_sizes[] = {4, 5};
    return yg_nll_loss_backward(x[0], x[1], NULL, self_sizes, 2, 1, -100, o);
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

static const int64_t nll_self_sizes[] = {6, 3};
static yg_status op_nll_bw_weight_mean(yg_tensor *const *x, const yg_tensor *t, yg_tensor **o) { return yg_nll_loss_backward(x[0], t, x[1], nll_self_sizes, 2, 1, 1, o); }
static yg_status op_nll_bw_weight_sum(yg_tensor *const *x, const yg_tensor *t, yg_tensor **o) { return yg_nll_loss_backward(x[0], t, x[1], nll_self_sizes, 2, 2, 1, o); }
static yg_status op_nll_bw_weight_none(yg_tensor *const *x, const yg_tensor *t, yg_tensor **o) { return yg_nll_loss_backward(x[0], t, x[1], nll_self_sizes, 2, 0, 1, o); }
static yg_status f_nll_bw_weight_mean(yg_tensor *const *x, yg_tensor **o) { return with_nll_target(x, op_nll_bw_weight_mean, o); }
static yg_status f_nll_bw_weight_sum(yg_tensor *const *x, yg_tensor **o) { return with_nll_target(x, op_nll_bw_weight_sum, o); }
static yg_status f_nll_bw_weight_none(yg_tensor *const *x, yg_tensor **o) { return with_nll_target(x, op_nll_bw_weight_none, o); }

static yg_status f_nll_bw_weight_1d(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t self_sizes[] = {5};
    return yg_nll_loss_backward(x[0], x[1], x[2], self_sizes, 1, 1, -100, o);
}

static yg_status f_embedding_bw(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t weight_sizes[] = {5, 4};
    return yg_embedding_backward(x[0], x[1], weight_sizes, 2, -1, o);
}

/* the fixed indices nll_target_v (rows 0, 1, 2 of [5, 4]), row 1 padding */
static const int64_t emb_pad_weight_sizes[] = {5, 4};
static yg_status op_embedding_bw_pad(yg_tensor *const *x, const yg_tensor *t, yg_tensor **o) { return yg_embedding_backward(x[0], t, emb_pad_weight_sizes, 2, 1, o); }
static yg_status f_embedding_bw_pad(yg_tensor *const *x, yg_tensor **o) { return with_nll_target(x, op_embedding_bw_pad, o); }

static yg_status f_adaptive_bw(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t self_sizes[] = {2, 5, 7};
    return yg_adaptive_avg_pool2d_backward(x[0], self_sizes, 3, o);
}

static yg_status f_upsample_bw(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t self_sizes[] = {1, 2, 3, 3};
    return yg_upsample_nearest2d_backward(x[0], self_sizes, 4, o);
}

static yg_status f_adaptive_to(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t sizes[] = {2, 3, 4};
    return yg_adaptive_avg_pool2d_to(x[0], sizes, 3, o);
}

static yg_status f_upsample_to(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t sizes[] = {1, 2, 5, 7};
    return yg_upsample_nearest2d_to(x[0], sizes, 4, o);
}

static yg_status f_max_pool_idx_bw(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t self_sizes[] = {1, 2, 4, 6};
    return yg_max_pool2d_with_indices_backward(x[0], x[1], self_sizes, 4, o);
}

static yg_status f_index_bw(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t self_sizes[] = {4, 3};
    const yg_tensor *indices[] = {x[1]};
    return yg_index_backward(x[0], self_sizes, 2, indices, 1, o);
}

static yg_status f_index_put_self_bw(yg_tensor *const *x, yg_tensor **o)
{
    const yg_tensor *indices[] = {x[1]};
    return yg_index_put_self_backward(x[0], indices, 1, false, o);
}

/* ---- norms: the backward of the fused kernels.  mean and rstd (or
 * save_mean and save_invstd) must be the statistics of input, so the call
 * computes them, without a graph; where that fails (a dtype the ops
 * refuse), input stands in for them so that the op under test reports
 * the dtype itself.  Each row returns one of the three gradients. */
static const int64_t bw_norm_last[] = {4};
static yg_status norm_bw_pick(yg_status st, yg_tensor **g, int which, yg_tensor **o)
{
    if (st == YG_OK)
        *o = yg_retain(g[which]);
    for (int i = 0; i < 3; i++)
        yg_release(g[i]);
    return st;
}
/* lstm_cell_gates_backward: x = grad_hy, grad_cy, input_gates,
 * hidden_gates, cx; which picks the gates' gradient (0) or cx's (2). */
static yg_status lstm_gates_bw(yg_tensor *const *x, yg_tensor **o, int which)
{
    const bool mask[3] = {true, true, true};
    yg_tensor *g[3] = {NULL, NULL, NULL};
    yg_status st = yg_lstm_cell_gates_backward(x[0], x[1], x[2], x[3], x[4], mask, &g[0], &g[1], &g[2]);
    return norm_bw_pick(st, g, which, o);
}
static yg_status f_lstm_gates_bw_gates(yg_tensor *const *x, yg_tensor **o) { return lstm_gates_bw(x, o, 0); }
static yg_status f_lstm_gates_bw_cx(yg_tensor *const *x, yg_tensor **o) { return lstm_gates_bw(x, o, 2); }
/* lstm_cell_gates_backward_fused: the same inputs; which picks the gates'
 * gradient (0) or cx's (1). */
static yg_status lstm_gates_bw_fused(yg_tensor *const *x, yg_tensor **o, int which)
{
    yg_tensor *g[3] = {NULL, NULL, NULL};
    yg_status st = yg_lstm_cell_gates_backward_fused(x[0], x[1], x[2], x[3], x[4], &g[0], &g[1]);
    return norm_bw_pick(st, g, which, o);
}
static yg_status f_lstm_gates_bw_fused_gates(yg_tensor *const *x, yg_tensor **o) { return lstm_gates_bw_fused(x, o, 0); }
static yg_status f_lstm_gates_bw_fused_cx(yg_tensor *const *x, yg_tensor **o) { return lstm_gates_bw_fused(x, o, 1); }
/* flash_attention_backward(_fused): x = grad_output, query, key, value;
 * output and logsumexp are flash_attention's of them, computed without a
 * graph (query itself stands in where that fails, so that the op under
 * test reports a refused dtype); which picks grad_query (0), grad_key
 * (1) or grad_value (2). */
static yg_status flash_bw(yg_tensor *const *x, yg_tensor **o, int which, bool causal, bool fused)
{
    const bool mask[3] = {true, true, true};
    yg_tensor *y = NULL, *lse = NULL, *g[3] = {NULL, NULL, NULL};
    bool prev = yg_set_grad_enabled(false);
    yg_status st = yg_flash_attention(x[1], x[2], x[3], causal, NULL, &y, &lse);
    yg_set_grad_enabled(prev);
    if (st != YG_OK) {
        y = yg_retain(x[1]);
        lse = yg_retain(x[1]);
    }
    if (fused)
        st = yg_flash_attention_backward_fused(x[0], x[1], x[2], x[3], y, lse, causal, NULL, &g[0], &g[1], &g[2]);
    else
        st = yg_flash_attention_backward(x[0], x[1], x[2], x[3], y, lse, causal, NULL, mask, &g[0], &g[1], &g[2]);
    yg_release(y);
    yg_release(lse);
    return norm_bw_pick(st, g, which, o);
}
static yg_status f_flash_bw_q(yg_tensor *const *x, yg_tensor **o) { return flash_bw(x, o, 0, true, false); }
static yg_status f_flash_bw_k(yg_tensor *const *x, yg_tensor **o) { return flash_bw(x, o, 1, true, false); }
static yg_status f_flash_bw_v(yg_tensor *const *x, yg_tensor **o) { return flash_bw(x, o, 2, false, false); }
static yg_status f_flash_bw_fused_q(yg_tensor *const *x, yg_tensor **o) { return flash_bw(x, o, 0, true, true); }
static yg_status f_flash_bw_fused_k(yg_tensor *const *x, yg_tensor **o) { return flash_bw(x, o, 1, true, true); }
static yg_status f_flash_bw_fused_v(yg_tensor *const *x, yg_tensor **o) { return flash_bw(x, o, 2, false, true); }
static yg_status ln_bw(yg_tensor *const *x, yg_tensor **o, int which, bool fused)
{
    const bool mask[3] = {true, true, true};
    yg_tensor *y = NULL, *mean = NULL, *rstd = NULL, *g[3] = {NULL, NULL, NULL};
    bool prev = yg_set_grad_enabled(false);
    yg_status st = yg_native_layer_norm(x[1], bw_norm_last, 1, NULL, NULL, 1e-5, &y, &mean, &rstd);
    yg_set_grad_enabled(prev);
    if (st != YG_OK) {
        mean = yg_retain(x[1]);
        rstd = yg_retain(x[1]);
    }
    if (fused)
        st = yg_native_layer_norm_backward_fused(x[0], x[1], mean, rstd, x[2], bw_norm_last, 1, mask, &g[0], &g[1], &g[2]);
    else
        st = yg_native_layer_norm_backward(x[0], x[1], mean, rstd, x[2], bw_norm_last, 1, 1e-5, mask, &g[0], &g[1], &g[2]);
    yg_release(y);
    yg_release(mean);
    yg_release(rstd);
    return norm_bw_pick(st, g, which, o);
}
static yg_status f_ln_bw_input(yg_tensor *const *x, yg_tensor **o) { return ln_bw(x, o, 0, false); }
static yg_status f_ln_bw_weight(yg_tensor *const *x, yg_tensor **o) { return ln_bw(x, o, 1, false); }
static yg_status f_ln_bw_bias(yg_tensor *const *x, yg_tensor **o) { return ln_bw(x, o, 2, false); }
static yg_status f_ln_bw_fused_input(yg_tensor *const *x, yg_tensor **o) { return ln_bw(x, o, 0, true); }
static yg_status f_ln_bw_fused_weight(yg_tensor *const *x, yg_tensor **o) { return ln_bw(x, o, 1, true); }
static yg_status f_ln_bw_fused_bias(yg_tensor *const *x, yg_tensor **o) { return ln_bw(x, o, 2, true); }
/* x: grad_out, input, weight, and for evaluation running_mean, running_var */
static yg_status bn_bw(yg_tensor *const *x, yg_tensor **o, int which, bool fused, bool training)
{
    const bool mask[3] = {true, true, true};
    yg_tensor *y = NULL, *sm = NULL, *si = NULL, *rm = NULL, *rv = NULL, *g[3] = {NULL, NULL, NULL};
    bool prev = yg_set_grad_enabled(false);
    yg_status st = YG_OK;
    if (!training) {
        st = yg_clone(x[3], &rm);
        if (st == YG_OK)
            st = yg_clone(x[4], &rv);
    }
    if (st == YG_OK)
        st = yg_native_batch_norm(x[1], NULL, NULL, rm, rv, training, 0.1, 1e-5, &y, &sm, &si);
    yg_set_grad_enabled(prev);
    if (st != YG_OK) {
        yg_release(sm);
        yg_release(si);
        sm = yg_retain(x[1]);
        si = yg_retain(x[1]);
    }
    if (fused)
        st = yg_native_batch_norm_backward_fused(x[0], x[1], x[2], sm, si, training, mask, &g[0], &g[1], &g[2]);
    else
        st = yg_native_batch_norm_backward(x[0], x[1], x[2], sm, si, training, 1e-5, mask, &g[0], &g[1], &g[2]);
    yg_release(y);
    yg_release(sm);
    yg_release(si);
    yg_release(rm);
    yg_release(rv);
    return norm_bw_pick(st, g, which, o);
}
static yg_status f_bn_bw_input(yg_tensor *const *x, yg_tensor **o) { return bn_bw(x, o, 0, false, true); }
static yg_status f_bn_bw_weight(yg_tensor *const *x, yg_tensor **o) { return bn_bw(x, o, 1, false, true); }
static yg_status f_bn_bw_bias(yg_tensor *const *x, yg_tensor **o) { return bn_bw(x, o, 2, false, true); }
static yg_status f_bn_bw_eval_input(yg_tensor *const *x, yg_tensor **o) { return bn_bw(x, o, 0, false, false); }
static yg_status f_bn_bw_eval_weight(yg_tensor *const *x, yg_tensor **o) { return bn_bw(x, o, 1, false, false); }
static yg_status f_bn_bw_fused_input(yg_tensor *const *x, yg_tensor **o) { return bn_bw(x, o, 0, true, true); }
static yg_status f_bn_bw_fused_weight(yg_tensor *const *x, yg_tensor **o) { return bn_bw(x, o, 1, true, true); }
static yg_status f_bn_bw_fused_bias(yg_tensor *const *x, yg_tensor **o) { return bn_bw(x, o, 2, true, true); }
static yg_status f_bn_bw_fused_eval_input(yg_tensor *const *x, yg_tensor **o) { return bn_bw(x, o, 0, true, false); }
static yg_status f_bn_bw_fused_eval_weight(yg_tensor *const *x, yg_tensor **o) { return bn_bw(x, o, 1, true, false); }

/* ---- convolution_backward: one output per row ---- */
static yg_status conv_bw(yg_tensor *const *x, bool transposed, int which, yg_tensor **o)
{
    static const int64_t one[2] = {1, 1}, two[2] = {2, 2};
    bool mask[3] = {which == 0, which == 1, which == 2};
    yg_tensor *g[3] = {NULL, NULL, NULL};
    yg_status st = transposed
        ? yg_convolution_backward(x[0], x[1], x[2], two, 2, one, 2, one, 2, true, one, 2, 1, mask, &g[0], &g[1], &g[2])
        : yg_convolution_backward(x[0], x[1], x[2], one, 2, one, 2, one, 2, false, one, 2, 2, mask, &g[0], &g[1], &g[2]);
    *o = g[which];
    for (int i = 0; i < 3; i++)
        if (i != which)
            yg_release(g[i]);
    return st;
}
static yg_status f_conv_bw_input(yg_tensor *const *x, yg_tensor **o) { return conv_bw(x, false, 0, o); }
static yg_status f_conv_bw_weight(yg_tensor *const *x, yg_tensor **o) { return conv_bw(x, false, 1, o); }
static yg_status f_conv_bw_bias(yg_tensor *const *x, yg_tensor **o) { return conv_bw(x, false, 2, o); }
static yg_status f_conv_t_bw_input(yg_tensor *const *x, yg_tensor **o) { return conv_bw(x, true, 0, o); }
static yg_status f_conv_t_bw_weight(yg_tensor *const *x, yg_tensor **o) { return conv_bw(x, true, 1, o); }
/* ---- pool: 3-d max pooling's gradient, the double-backward *_to ops ---- */
static yg_status f_max_pool3d_idx_bw(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t self_sizes[] = {2, 3, 4, 6};
    return yg_max_pool3d_with_indices_backward(x[0], x[1], self_sizes, 4, o);
}
static yg_status f_adaptive3d_to(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t sizes[] = {2, 3, 2, 4};
    return yg_adaptive_avg_pool3d_to(x[0], sizes, 4, o);
}
static yg_status f_bilinear_to(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t sizes[] = {1, 2, 5, 7};
    return yg_upsample_bilinear2d_to(x[0], sizes, 4, true, NULL, NULL, o);
}
static yg_status f_bilinear_to_scales(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t sizes[] = {2, 5, 9};
    return yg_upsample_bilinear2d_to(x[0], sizes, 3, false, &(double){1.7}, &(double){2.3}, o);
}

const sample opinfo_backward_samples[] = {
    {"gelu_backward", "", 2, {F64(-1, 1, 2, 2, 3), F64(-3, 3, 2, 2, 3)}, f_gelu_bw},
    {"gelu_tanh_backward", "", 2, {F64(-1, 1, 2, 2, 3), F64(-3, 3, 2, 2, 3)}, f_gelu_tanh_bw},
    {"silu_backward", "broadcast grad", 2, {F64(-1, 1, 1, 3), F64(-3, 3, 2, 2, 3)}, f_silu_bw},
    {"elu_backward", "alpha 0.7", 2, {F64(-1, 1, 2, 2, 3), F64(-2, 2, 2, 2, 3)}, f_elu_bw},
    {"softplus_backward", "beta 2", 2, {F64(-1, 1, 2, 2, 3), F64(-3, 3, 2, 2, 3)}, f_softplus_bw},
    {"atan2_backward", "both gradients, summed", 3, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 3), F64(0.2, 1, 2, 2, 3)}, f_atan2_bw},
    {"pow_backward_self", "positive self", 3, {F64(-1, 1, 2, 2, 3), F64(0.5, 2, 2, 2, 3), F64(-2, 2, 2, 2, 3)}, f_pow_bw_self},
    {"pow_backward_exponent", "positive self, output given", 4, {F64(-1, 1, 2, 2, 3), F64(0.5, 2, 2, 2, 3), F64(-2, 2, 2, 2, 3), F64(0.5, 2, 2, 2, 3)}, f_pow_bw_exponent},
    {"prod_backward", "dim 1 of [3, 4]", 2, {F64(-1, 1, 1, 3), F64(0.5, 1.5, 2, 3, 4)}, f_prod_bw},
    {"prod_double_backward", "dim 1 of [3, 4]", 3, {F64(-1, 1, 2, 3, 4), F64(-1, 1, 1, 3), F64(-1.5, 1.5, 2, 3, 4)}, f_prod_dbw},
    {"value_selecting_reduction_backward", "dim 1 of [3, 4]", 2, {F64(-1, 1, 1, 3), I64(0, 4, 1, 3)}, f_value_sel_bw},
    {"minmax_backward", "amax over dim 1 (self flat: constant)", 2, {F64(-1, 1, 1, 3), C64(-1, 1, 2, 3, 4)}, f_minmax_bw},
    {"var_backward", "dim 1, correction 1", 2, {F64(-1, 1, 1, 3), F64(-1, 1, 2, 3, 4)}, f_var_bw},
    {"norm_backward", "p 2, dim 1, output given", 3, {F64(-1, 1, 1, 3), F64(-1, 1, 2, 3, 4), F64(0.5, 2, 1, 3)}, f_norm_bw},
    {"norm_backward", "p 3, dim 1, output given", 3, {F64(-1, 1, 1, 3), F64(-1, 1, 2, 3, 4), F64(0.5, 2, 1, 3)}, f_norm3_bw},
    {"logsumexp_backward", "dim 1, output given", 3, {F64(-1, 1, 1, 3), F64(-2, 2, 2, 3, 4), F64(1, 3, 1, 3)}, f_lse_bw},
    {"cumsum_backward", "dim 1", 1, {F64(-1, 1, 2, 3, 4)}, f_cumsum_bw},
    {"cumprod_backward", "dim 1", 2, {F64(-1, 1, 2, 3, 4), F64(0.5, 1.5, 2, 3, 4)}, f_cumprod_bw},
    {"cumprod_jvp", "dim 1", 2, {F64(-1, 1, 2, 3, 4), F64(-1.5, 1.5, 2, 3, 4)}, f_cumprod_jvp},
    {"cumprod_double_backward", "dim 1", 3, {F64(-1, 1, 2, 3, 4), F64(-1, 1, 2, 3, 4), F64(-1.5, 1.5, 2, 3, 4)}, f_cumprod_dbw},
    {"sum_backward", "into [3, 4] over dim 1", 1, {F64(-1, 1, 1, 3)}, f_sum_bw},
    {"mean_backward", "into [3, 4] over dim 1, keepdim", 1, {F64(-1, 1, 2, 3, 1)}, f_mean_bw},
    {"sum_to", "[2, 3, 4] -> [3, 1]", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_sum_to},
    {"permute_backward", "dims [2, 0, 1]", 1, {F64(-1, 1, 3, 4, 2, 3)}, f_permute_bw},
    {"scatter_src_backward", "dim 0", 2, {F64(-1, 1, 2, 3, 3), I64(0, 3, 2, 2, 3)}, f_scatter_src_bw},
    {"constant_pad_nd_backward", "two dims", 1, {F64(-1, 1, 2, 3, 6)}, f_pad_bw},
    {"log_softmax_backward", "dim 1, output given", 2, {F64(-1, 1, 2, 3, 5), F64(-3, -0.1, 2, 3, 5)}, f_log_softmax_bw},
    {"log_softmax_jvp", "dim 1, output given", 2, {F64(-1, 1, 2, 3, 5), F64(-3, -0.1, 2, 3, 5)}, f_log_softmax_jvp},
    {"mm_mat1_backward", "row-major mat1 (read for its layout: constant)", 3, {F64(-1, 1, 2, 3, 2), C64(-1, 1, 2, 3, 4), F64(-1, 1, 2, 4, 2)}, f_mm_mat1_bw},
    {"mm_mat1_backward", "column-major mat1 (constant)", 3, {F64(-1, 1, 2, 3, 2), C64(-1, 1, 2, 4, 3), F64(-1, 1, 2, 4, 2)}, f_mm_mat1_bw_colmajor},
    {"mm_mat2_backward", "row-major mat2 (read for its layout: constant)", 3, {F64(-1, 1, 2, 3, 2), F64(-1, 1, 2, 3, 4), C64(-1, 1, 2, 4, 2)}, f_mm_mat2_bw},
    {"mm_mat2_backward", "column-major mat2 (constant)", 3, {F64(-1, 1, 2, 3, 2), F64(-1, 1, 2, 3, 4), C64(-1, 1, 2, 2, 4)}, f_mm_mat2_bw_colmajor},
    {"softmax_backward", "dim 1, output given", 2, {F64(-1, 1, 2, 3, 5), F64(0.05, 0.5, 2, 3, 5)}, f_softmax_bw},
    {"softmax_backward_fused", "dim 1, output given", 2, {F64(-1, 1, 2, 3, 5), C64(0.05, 0.5, 2, 3, 5)}, f_softmax_bw_fused},
    {"nll_loss_backward", "mean", 2, {F64(-1, 1, 0, 0), I64(0, 5, 1, 4)}, f_nll_bw},
    {"nll_loss_backward", "mean, weight, ignore_index 1", 2, {F64(-1, 1, 0, 0), C64(0.5, 2, 1, 3)}, f_nll_bw_weight_mean},
    {"nll_loss_backward", "sum, weight, ignore_index 1", 2, {F64(-1, 1, 0, 0), C64(0.5, 2, 1, 3)}, f_nll_bw_weight_sum},
    {"nll_loss_backward", "none, weight, ignore_index 1", 2, {F64(-1, 1, 1, 6), C64(0.5, 2, 1, 3)}, f_nll_bw_weight_none},
    {"nll_loss_backward", "[C] self, mean, weight", 3, {F64(-1, 1, 0, 0), I64(0, 5, 0, 0), C64(0.5, 2, 1, 5)}, f_nll_bw_weight_1d},
    {"embedding_backward", "[2, 3] indices into [5, 4]", 2, {F64(-1, 1, 3, 2, 3, 4), I64(0, 5, 2, 2, 3)}, f_embedding_bw},
    {"embedding_backward", "padding_idx 1, fixed indices", 1, {F64(-1, 1, 2, 6, 4)}, f_embedding_bw_pad},
    {"adaptive_avg_pool2d_backward", "into [2, 5, 7]", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_adaptive_bw},
    {"upsample_nearest2d_backward", "into [1, 2, 3, 3]", 1, {F64(-1, 1, 4, 1, 2, 5, 7)}, f_upsample_bw},
    {"adaptive_avg_pool2d_to", "[2, 5, 7] to [2, 3, 4]", 1, {F64(-1, 1, 3, 2, 5, 7)}, f_adaptive_to},
    {"upsample_nearest2d_to", "[1, 2, 3, 3] to [1, 2, 5, 7]", 1, {F64(-1, 1, 4, 1, 2, 3, 3)}, f_upsample_to},
    {"max_pool2d_with_indices_backward", "[1, 2, 2, 3] into [1, 2, 4, 6], positions repeat", 2, {F64(-1, 1, 4, 1, 2, 2, 3), I64(0, 24, 4, 1, 2, 2, 3)}, f_max_pool_idx_bw},
    {"index_backward", "rows of [4, 3], repeats add up", 2, {F64(-1, 1, 2, 5, 3), I64(0, 4, 1, 5)}, f_index_bw},
    {"index_put_self_backward", "rows of [4, 3] zeroed", 2, {F64(-1, 1, 2, 4, 3), I64(0, 4, 1, 2)}, f_index_put_self_bw},
    /* ---- norms: the backward of the fused kernels ---- */
    {"native_layer_norm_backward", "grad_input, last dim", 3, {F64(-1, 1, 3, 2, 3, 4), F64(-1, 1, 3, 2, 3, 4), F64(0.5, 1.5, 1, 4)}, f_ln_bw_input},
    {"native_layer_norm_backward", "grad_weight, last dim", 3, {F64(-1, 1, 3, 2, 3, 4), F64(-1, 1, 3, 2, 3, 4), C64(0.5, 1.5, 1, 4)}, f_ln_bw_weight},
    {"native_layer_norm_backward", "grad_bias, last dim", 3, {F64(-1, 1, 3, 2, 3, 4), C64(-1, 1, 3, 2, 3, 4), C64(0.5, 1.5, 1, 4)}, f_ln_bw_bias},
    {"native_layer_norm_backward_fused", "grad_input, last dim", 3, {F64(-1, 1, 3, 2, 3, 4), F64(-1, 1, 3, 2, 3, 4), F64(0.5, 1.5, 1, 4)}, f_ln_bw_fused_input},
    {"native_layer_norm_backward_fused", "grad_weight, last dim", 3, {F64(-1, 1, 3, 2, 3, 4), F64(-1, 1, 3, 2, 3, 4), C64(0.5, 1.5, 1, 4)}, f_ln_bw_fused_weight},
    {"native_layer_norm_backward_fused", "grad_bias, last dim", 3, {F64(-1, 1, 3, 2, 3, 4), C64(-1, 1, 3, 2, 3, 4), C64(0.5, 1.5, 1, 4)}, f_ln_bw_fused_bias},
    {"lstm_cell_gates_backward", "grad of the gates", 5, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 3), F64(-2, 2, 2, 2, 12), F64(-2, 2, 2, 2, 12), F64(-1, 1, 2, 2, 3)}, f_lstm_gates_bw_gates},
    {"lstm_cell_gates_backward", "grad of cx", 5, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 3), F64(-2, 2, 2, 2, 12), F64(-2, 2, 2, 2, 12), F64(-1, 1, 2, 2, 3)}, f_lstm_gates_bw_cx},
    {"lstm_cell_gates_backward_fused", "grad of the gates", 5, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 3), F64(-2, 2, 2, 2, 12), F64(-2, 2, 2, 2, 12), F64(-1, 1, 2, 2, 3)}, f_lstm_gates_bw_fused_gates},
    {"lstm_cell_gates_backward_fused", "grad of cx", 5, {F64(-1, 1, 2, 2, 3), F64(-1, 1, 2, 2, 3), F64(-2, 2, 2, 2, 12), F64(-2, 2, 2, 2, 12), F64(-1, 1, 2, 2, 3)}, f_lstm_gates_bw_fused_cx},
    {"flash_attention_backward", "grad_query, causal, L 5 != S 6", 4, {F64(-1, 1, 3, 2, 5, 3), F64(-1, 1, 3, 2, 5, 4), F64(-1, 1, 3, 2, 6, 4), F64(-1, 1, 3, 2, 6, 3)}, f_flash_bw_q},
    {"flash_attention_backward", "grad_key, causal, L 5 != S 6", 4, {F64(-1, 1, 3, 2, 5, 3), F64(-1, 1, 3, 2, 5, 4), F64(-1, 1, 3, 2, 6, 4), F64(-1, 1, 3, 2, 6, 3)}, f_flash_bw_k},
    {"flash_attention_backward", "grad_value, L 5 != S 6", 4, {F64(-1, 1, 3, 2, 5, 3), F64(-1, 1, 3, 2, 5, 4), F64(-1, 1, 3, 2, 6, 4), C64(-1, 1, 3, 2, 6, 3)}, f_flash_bw_v},
    {"flash_attention_backward_fused", "grad_query, causal, L 5 != S 6", 4, {F64(-1, 1, 3, 2, 5, 3), F64(-1, 1, 3, 2, 5, 4), F64(-1, 1, 3, 2, 6, 4), F64(-1, 1, 3, 2, 6, 3)}, f_flash_bw_fused_q},
    {"flash_attention_backward_fused", "grad_key, causal, L 5 != S 6", 4, {F64(-1, 1, 3, 2, 5, 3), F64(-1, 1, 3, 2, 5, 4), F64(-1, 1, 3, 2, 6, 4), F64(-1, 1, 3, 2, 6, 3)}, f_flash_bw_fused_k},
    {"flash_attention_backward_fused", "grad_value, L 5 != S 6", 4, {F64(-1, 1, 3, 2, 5, 3), F64(-1, 1, 3, 2, 5, 4), F64(-1, 1, 3, 2, 6, 4), C64(-1, 1, 3, 2, 6, 3)}, f_flash_bw_fused_v},
    {"native_batch_norm_backward", "grad_input, training", 3, {F64(-1, 1, 3, 2, 3, 4), F64(-1, 1, 3, 2, 3, 4), F64(0.5, 1.5, 1, 3)}, f_bn_bw_input},
    {"native_batch_norm_backward", "grad_weight, training", 3, {F64(-1, 1, 3, 2, 3, 4), F64(-1, 1, 3, 2, 3, 4), C64(0.5, 1.5, 1, 3)}, f_bn_bw_weight},
    {"native_batch_norm_backward", "grad_bias, training", 3, {F64(-1, 1, 3, 2, 3, 4), C64(-1, 1, 3, 2, 3, 4), C64(0.5, 1.5, 1, 3)}, f_bn_bw_bias},
    {"native_batch_norm_backward", "grad_input, evaluation", 5, {F64(-1, 1, 4, 2, 3, 2, 2), C64(-1, 1, 4, 2, 3, 2, 2), F64(0.5, 1.5, 1, 3), C64(-0.5, 0.5, 1, 3), C64(0.5, 2, 1, 3)}, f_bn_bw_eval_input},
    {"native_batch_norm_backward", "grad_weight, evaluation", 5, {F64(-1, 1, 4, 2, 3, 2, 2), F64(-1, 1, 4, 2, 3, 2, 2), C64(0.5, 1.5, 1, 3), C64(-0.5, 0.5, 1, 3), C64(0.5, 2, 1, 3)}, f_bn_bw_eval_weight},
    {"native_batch_norm_backward_fused", "grad_input, training", 3, {F64(-1, 1, 3, 2, 3, 4), F64(-1, 1, 3, 2, 3, 4), F64(0.5, 1.5, 1, 3)}, f_bn_bw_fused_input},
    {"native_batch_norm_backward_fused", "grad_weight, training", 3, {F64(-1, 1, 3, 2, 3, 4), F64(-1, 1, 3, 2, 3, 4), C64(0.5, 1.5, 1, 3)}, f_bn_bw_fused_weight},
    {"native_batch_norm_backward_fused", "grad_bias, training", 3, {F64(-1, 1, 3, 2, 3, 4), C64(-1, 1, 3, 2, 3, 4), C64(0.5, 1.5, 1, 3)}, f_bn_bw_fused_bias},
    {"native_batch_norm_backward_fused", "grad_input, evaluation", 5, {F64(-1, 1, 4, 2, 3, 2, 2), C64(-1, 1, 4, 2, 3, 2, 2), F64(0.5, 1.5, 1, 3), C64(-0.5, 0.5, 1, 3), C64(0.5, 2, 1, 3)}, f_bn_bw_fused_eval_input},
    {"native_batch_norm_backward_fused", "grad_weight, evaluation", 5, {F64(-1, 1, 4, 2, 3, 2, 2), F64(-1, 1, 4, 2, 3, 2, 2), C64(0.5, 1.5, 1, 3), C64(-0.5, 0.5, 1, 3), C64(0.5, 2, 1, 3)}, f_bn_bw_fused_eval_weight},
    /* ---- convolution_backward (groups 2, padding 1; transposed: stride 2, output_padding 1) ---- */
    {"convolution_backward", "grad_input, groups 2", 3, {F64(-1, 1, 4, 2, 4, 3, 4), C64(-1, 1, 4, 2, 4, 3, 4), F64(-1, 1, 4, 4, 2, 3, 3)}, f_conv_bw_input},
    {"convolution_backward", "grad_weight, groups 2", 3, {F64(-1, 1, 4, 2, 4, 3, 4), F64(-1, 1, 4, 2, 4, 3, 4), C64(-1, 1, 4, 4, 2, 3, 3)}, f_conv_bw_weight},
    {"convolution_backward", "grad_bias", 3, {F64(-1, 1, 4, 2, 4, 3, 4), C64(-1, 1, 4, 2, 4, 3, 4), C64(-1, 1, 4, 4, 2, 3, 3)}, f_conv_bw_bias},
    {"convolution_backward", "grad_input, transposed", 3, {F64(-1, 1, 4, 1, 2, 6, 6), C64(-1, 1, 4, 1, 3, 3, 3), F64(-1, 1, 4, 3, 2, 3, 3)}, f_conv_t_bw_input},
    {"convolution_backward", "grad_weight, transposed", 3, {F64(-1, 1, 4, 1, 2, 6, 6), F64(-1, 1, 4, 1, 3, 3, 3), C64(-1, 1, 4, 3, 2, 3, 3)}, f_conv_t_bw_weight},
    /* pool: 3-d max pooling's gradient, the double-backward *_to ops */
    {"max_pool3d_with_indices_backward", "[2, 2, 2, 3] into [2, 3, 4, 6], positions repeat", 2, {F64(-1, 1, 4, 2, 2, 2, 3), I64(0, 72, 4, 2, 2, 2, 3)}, f_max_pool3d_idx_bw},
    {"adaptive_avg_pool3d_to", "[2, 5, 4, 7] to [2, 3, 2, 4]", 1, {F64(-1, 1, 4, 2, 5, 4, 7)}, f_adaptive3d_to},
    {"upsample_bilinear2d_to", "[1, 2, 3, 3] to [1, 2, 5, 7], align_corners", 1, {F64(-1, 1, 4, 1, 2, 3, 3)}, f_bilinear_to},
    {"upsample_bilinear2d_to", "[2, 3, 4] to [2, 5, 9], scales 1.7, 2.3", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_bilinear_to_scales},
    {NULL, NULL, 0, {{0}}, NULL, NULL, 0},
};
