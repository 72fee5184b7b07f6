/*
 * samples_derivatives_more.c - more OpInfo samples of ops with an entry in
 * specs/derivatives.yaml: the blocks the rng-creation, nn-ops, shape-index
 * and dtypes branches added to the gradcheck table (bernoulli, pooling with
 * indices, padding modes, list ops, advanced indexing, conversions), kept
 * apart so that samples_derivatives.c stays short.  New rows of such ops go
 * at the end of either table, headed by a comment naming the branch.
 */
#include "opinfo.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_join_split.h"
#include "yagrad/ops_padding.h"
#include "yagrad/ops_advanced_indexing.h"
#include "yagrad/ops_norms.h"
#include "yagrad/ops_layers.h"
#include "yagrad/ops_attention.h"
#include "yagrad/ops_convolution.h"
#include "yagrad/ops_convolution_general.h"
#include "yagrad/ops_pooling.h"
#include "yagrad/ops_average_pooling.h"
#include "yagrad/ops_adaptive_average_pooling.h"
#include "yagrad/ops_resampling.h"
#include "yagrad/ops_random.h"
#include "yagrad/ops_dtype_conversion.h"
#include "yagrad/ops_arithmetic.h"
#include "yagrad/ops_views.h"
#include "yagrad/ops_join_split.h"
#include "yagrad/ops_padding.h"
#include "yagrad/ops_advanced_indexing.h"
#include "yagrad/ops_norms.h"
#include "yagrad/ops_layers.h"
#include "yagrad/ops_convolution.h"
#include "yagrad/ops_convolution_general.h"
#include "yagrad/ops_pooling.h"
#include "yagrad/ops_average_pooling.h"
#include "yagrad/ops_adaptive_average_pooling.h"
#include "yagrad/ops_resampling.h"
#include "yagrad/ops_random.h"
#include "yagrad/ops_dtype_conversion.h"

/* rng-creation: bernoulli's result carries no gradient; the inputs
 * require grad and must be accepted (dropout calls bernoulli.p on its). */
static yg_status f_bernoulli(yg_tensor *const *x, yg_tensor **o) { return yg_bernoulli(x[0], NULL, o); }
static yg_status f_bernoulli_p(yg_tensor *const *x, yg_tensor **o) { return yg_bernoulli_p(x[0], 0.3, NULL, o); }

/* ---- nn-ops: max pooling with indices, reflect/replicate pad ---- */
static yg_status f_max_pool_idx(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t k[] = {2, 3}, s[] = {1, 2}, p[] = {1, 1}, d[] = {1, 1};
    yg_tensor *i = NULL;
    yg_status st = yg_max_pool2d_with_indices(x[0], k, 2, s, 2, p, 2, d, 2, false, o, &i);
    yg_release(i);
    return st;
}
static yg_status f_max_pool1d(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t k[] = {3}, s[] = {2}, p[] = {1}, d[] = {2};
    return yg_max_pool1d(x[0], k, 1, s, 1, p, 1, d, 1, true, o);
}
static const int64_t pad2d[] = {1, 2, 2, 1}, pad1d[] = {3, 4}, pad3d[] = {1, 1, 2, 0, 1, 2};
static const int64_t pad2d_self[] = {2, 3, 4};
static yg_status f_reflect2d(yg_tensor *const *x, yg_tensor **o) { return yg_reflection_pad(x[0], pad2d, 4, o); }
static yg_status f_reflect1d(yg_tensor *const *x, yg_tensor **o) { return yg_reflection_pad(x[0], pad1d, 2, o); }
static yg_status f_reflect3d(yg_tensor *const *x, yg_tensor **o) { return yg_pad(x[0], pad3d, 6, YG_PAD_MODE_REFLECT, 0, o); }
static yg_status f_reflect_bw(yg_tensor *const *x, yg_tensor **o) { return yg_reflection_pad_backward(x[0], pad2d_self, 3, pad2d, 4, o); }
static yg_status f_replicate2d(yg_tensor *const *x, yg_tensor **o) { return yg_replication_pad(x[0], pad2d, 4, o); }
static yg_status f_replicate1d(yg_tensor *const *x, yg_tensor **o) { return yg_replication_pad(x[0], pad1d, 2, o); }
static yg_status f_replicate3d(yg_tensor *const *x, yg_tensor **o) { return yg_pad(x[0], pad3d, 6, YG_PAD_MODE_REPLICATE, 0, o); }
static yg_status f_replicate_bw(yg_tensor *const *x, yg_tensor **o) { return yg_replication_pad_backward(x[0], pad2d_self, 3, pad2d, 4, o); }
/* ---- shape-index: ops returning Tensor[] and advanced indexing ---- */

/* Samples of ops with several outputs: the outputs picked by use (a
 * bit mask, bit i for output i) are flattened and joined into one 1-D
 * result, so the harness checks sum(v * f(x)) with an independent
 * cotangent for every element of every used output; an output left out
 * has an undefined gradient, which the op's backward must treat as
 * zeros.  outs (n new refs) is released here. */
static yg_status join_outputs(yg_tensor **outs, int64_t n, uint64_t use, yg_tensor **o)
{
    const int64_t flat[] = {-1};
    yg_tensor *parts[16] = {0};
    int64_t n_parts = 0;
    yg_status st = n <= 16 ? YG_OK : YG_ERR_INVALID_ARGUMENT;

    for (int64_t i = 0; i < n && st == YG_OK; i++)
        if (use & ((uint64_t)1 << i))
            st = yg_reshape(outs[i], flat, 1, &parts[n_parts++]);
    if (st == YG_OK)
        st = yg_cat((const yg_tensor *const *)parts, n_parts, 0, o);
    for (int64_t i = 0; i < n_parts; i++)
        yg_release(parts[i]);
    yg_release_list(outs, n);
    return st;
}

static yg_status f_split(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor **outs = NULL;
    int64_t n = 0;
    yg_status st = yg_split(x[0], 2, 0, &outs, &n);
    return st == YG_OK ? join_outputs(outs, n, 0x7, o) : st;
}
static yg_status f_split_some(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor **outs = NULL;
    int64_t n = 0;
    yg_status st = yg_split(x[0], 2, -1, &outs, &n);
    return st == YG_OK ? join_outputs(outs, n, 0x5, o) : st;
}
static yg_status f_split_with_sizes(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t sizes[] = {1, 0, 4};
    yg_tensor **outs = NULL;
    int64_t n = 0;
    yg_status st = yg_split_with_sizes(x[0], sizes, 3, 1, &outs, &n);
    return st == YG_OK ? join_outputs(outs, n, 0x7, o) : st;
}
static yg_status f_chunk_last(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor **outs = NULL;
    int64_t n = 0;
    yg_status st = yg_chunk(x[0], 4, 0, &outs, &n);
    return st == YG_OK ? join_outputs(outs, n, (uint64_t)1 << (n - 1), o) : st;
}
static yg_status f_unbind_some(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor **outs = NULL;
    int64_t n = 0;
    yg_status st = yg_unbind(x[0], 1, &outs, &n);
    return st == YG_OK ? join_outputs(outs, n, 0x9, o) : st;
}
static yg_status f_unbind_1d(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor **outs = NULL;
    int64_t n = 0;
    yg_status st = yg_unbind(x[0], -1, &outs, &n);
    return st == YG_OK ? join_outputs(outs, n, 0x7, o) : st;
}

/* self[indices] and its writing forms with indices built here: rows is
 * an int64 index (of sizes rs), cols one for a later dim or NULL (kept),
 * mask a bool mask replacing both when given. */
typedef struct index_case {
    int64_t rs_ndim, rs[2], rows[6];
    int64_t cs_ndim, cs[2], cols[6];
    bool use_cols, gap; /* gap: a kept dim between rows and cols */
    int64_t ms[2];
    bool mask[12], use_mask;
} index_case;

static yg_status with_indices(const index_case *ic, yg_tensor *const *x, int which,
                              yg_tensor **o)
{
    yg_tensor *r = NULL, *c = NULL, *m = NULL, *self = NULL, *same = NULL;
    const yg_tensor *list[3] = {NULL, NULL, NULL};
    int64_t n = 0;
    yg_status st = YG_OK;

    if (ic->use_mask) {
        st = yg_tensor_from_data(ic->mask, ic->ms, 2, YG_BOOL, &m);
        list[n++] = m;
    } else {
        st = yg_tensor_from_data(ic->rows, ic->rs, ic->rs_ndim, YG_INT64, &r);
        list[n++] = r;
        if (ic->gap)
            list[n++] = NULL;
        if (st == YG_OK && ic->use_cols) {
            st = yg_tensor_from_data(ic->cols, ic->cs, ic->cs_ndim, YG_INT64, &c);
            list[n++] = c;
        }
    }
    if (st == YG_OK && which == 0)
        st = yg_index(x[0], list, n, o);
    else if (st == YG_OK && which == 1)
        st = yg_index_put(x[0], list, n, x[1], false, o);
    else if (st == YG_OK && which == 2)
        st = yg_index_put(x[0], list, n, x[1], true, o);
    else if (st == YG_OK) {
        /* in place into a non-leaf copy (a leaf that requires grad may not be written) */
        st = yg_clone(x[0], &self);
        if (st == YG_OK)
            st = yg_index_put_(self, list, n, x[1], which == 4, &same);
        if (st == YG_OK)
            *o = yg_retain(self);
    }
    yg_release(same);
    yg_release(self);
    yg_release(m);
    yg_release(c);
    yg_release(r);
    return st;
}

/* rows 3, 0, -1, 0 of a [4, 3] self as a [2, 2] index: rows repeat */
static const index_case ic_rows = {2, {2, 2}, {3, 0, -1, 0}, 0, {0}, {0}, false, false, {0}, {0}, false};
/* [3, 4, 5] self, dims 0 and 2 indexed with a kept dim between: B first */
static const index_case ic_gap = {1, {2}, {2, 0}, 1, {2}, {4, -5}, true, true, {0}, {0}, false};
/* a [3, 4] bool mask over the first two dims */
static const index_case ic_mask = {0, {0}, {0}, 0, {0}, {0}, false, false, {3, 4},
                                   {1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 1}, true};
/* rows 1, 1, 3 (1 twice) of a [4, 3] self, for accumulate */
static const index_case ic_acc = {1, {3}, {1, 1, 3}, 0, {0}, {0}, false, false, {0}, {0}, false};
/* rows 2, 0 and columns 1, 2 (pairs, no position twice) */
static const index_case ic_pairs = {1, {2}, {2, 0}, 1, {2}, {1, 2}, true, false, {0}, {0}, false};

static yg_status f_index_rows(yg_tensor *const *x, yg_tensor **o) { return with_indices(&ic_rows, x, 0, o); }
static yg_status f_index_gap(yg_tensor *const *x, yg_tensor **o) { return with_indices(&ic_gap, x, 0, o); }
static yg_status f_index_mask(yg_tensor *const *x, yg_tensor **o) { return with_indices(&ic_mask, x, 0, o); }
static yg_status f_index_put_pairs(yg_tensor *const *x, yg_tensor **o) { return with_indices(&ic_pairs, x, 1, o); }
static yg_status f_index_put_acc(yg_tensor *const *x, yg_tensor **o) { return with_indices(&ic_acc, x, 2, o); }
static yg_status f_index_put__rows(yg_tensor *const *x, yg_tensor **o) { return with_indices(&ic_pairs, x, 3, o); }
static yg_status f_index_put__acc(yg_tensor *const *x, yg_tensor **o) { return with_indices(&ic_acc, x, 4, o); }

/* dtypes branch: conversions.  float64 to float64 keeps finite
 * differences meaningful (float32 would round them away); the float32
 * path's gradient dtype is tested in test_dtypes.c. */
static yg_status f_to_copy(yg_tensor *const *x, yg_tensor **o) { return yg_to_copy(x[0], YG_FLOAT64, o); }
/* A copy to the input's own device (the GPU OpInfo run copies on the
 * GPU; tests/test_cuda.c crosses devices). */
static yg_status f_to_device(yg_tensor *const *x, yg_tensor **o)
{
    return yg_to_device(x[0], yg_tensor_device(x[0]), yg_tensor_device_index(x[0]), o);
}
static yg_status f_to_device_t(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *xt = NULL;
    yg_status st = yg_transpose(x[0], 0, 1, &xt);
    if (st == YG_OK)
        st = f_to_device(&xt, o);
    yg_release(xt);
    return st;
}
static yg_status f_to_dtype_copy_t(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *xt = NULL;
    yg_status st = yg_t(x[0], &xt);
    if (st == YG_OK)
        st = yg_to_dtype(xt, YG_FLOAT64, true, o);
    yg_release(xt);
    return st;
}

/* ---- norms: the fused kernels (their other outputs, the statistics,
 * carry no gradient; test_ops_nn.c and test_ops_batch_norm.c check them) */
/* ---- lstm_cell_gates: hy + cy, so both outputs (and their gradients)
 * are checked; [2, 12] projections (H = 3) and unbatched [8] (H = 2) */
static yg_status f_lstm_gates(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *hy = NULL, *cy = NULL;
    yg_status st = yg_lstm_cell_gates(x[0], x[1], x[2], &hy, &cy);
    if (st == YG_OK)
        st = yg_add(hy, cy, 1.0, o);
    yg_release(hy);
    yg_release(cy);
    return st;
}

/* flash_attention's output (logsumexp carries no gradient; its values are
 * test_ops_attention's) */
static yg_status flash(yg_tensor *const *x, bool causal, const double *scale, yg_tensor **o)
{
    yg_tensor *lse = NULL;
    yg_status st = yg_flash_attention(x[0], x[1], x[2], causal, scale, o, &lse);
    yg_release(lse);
    return st;
}
static const double flash_half = 0.5;
static yg_status f_flash(yg_tensor *const *x, yg_tensor **o) { return flash(x, false, NULL, o); }
static yg_status f_flash_causal(yg_tensor *const *x, yg_tensor **o) { return flash(x, true, NULL, o); }
static yg_status f_flash_causal_half(yg_tensor *const *x, yg_tensor **o) { return flash(x, true, &flash_half, o); }

static const int64_t norm_last[] = {4}, norm_last2[] = {3, 4};
static yg_status native_ln(yg_tensor *const *x, const int64_t *ns, int64_t len, const yg_tensor *b, yg_tensor **o)
{
    yg_tensor *mean = NULL, *rstd = NULL;
    yg_status st = yg_native_layer_norm(x[0], ns, len, x[1], b, 1e-5, o, &mean, &rstd);
    yg_release(mean);
    yg_release(rstd);
    return st;
}
static yg_status f_native_ln(yg_tensor *const *x, yg_tensor **o) { return native_ln(x, norm_last, 1, x[2], o); }
static yg_status f_native_ln2(yg_tensor *const *x, yg_tensor **o) { return native_ln(x, norm_last2, 2, NULL, o); }
static yg_status f_native_bn_train(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *sm = NULL, *si = NULL;
    yg_status st = yg_native_batch_norm(x[0], x[1], x[2], NULL, NULL, true, 0.1, 1e-5, o, &sm, &si);
    yg_release(sm);
    yg_release(si);
    return st;
}
/* evaluation with running statistics (copies: the op may write them) */
static yg_status f_native_bn_eval(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *rm = NULL, *rv = NULL, *sm = NULL, *si = NULL;
    yg_status st = yg_clone(x[3], &rm);
    if (st == YG_OK)
        st = yg_clone(x[4], &rv);
    if (st == YG_OK)
        st = yg_native_batch_norm(x[0], x[1], x[2], rm, rv, false, 0.1, 1e-5, o, &sm, &si);
    yg_release(rm);
    yg_release(rv);
    yg_release(sm);
    yg_release(si);
    return st;
}

/* ---- convolution: convolution_dispatch, the op with the derivative ---- */
static yg_status conv_call(yg_tensor *const *x, const yg_tensor *bias, int32_t n, const int64_t *s,
                           const int64_t *p, const int64_t *d, bool tr, const int64_t *op,
                           int64_t groups, yg_tensor **o)
{
    return yg_convolution_dispatch(x[0], x[1], bias, s, n, p, n, d, n, tr, op, n, groups, false, false, true, o);
}
static const int64_t cv1[3] = {1, 1, 1}, cv0[3] = {0, 0, 0}, cv2[3] = {2, 2, 2};
static yg_status f_cv_2d(yg_tensor *const *x, yg_tensor **o) { return conv_call(x, x[2], 2, cv2, cv1, cv1, false, cv0, 1, o); }
static yg_status f_cv_1d_dil(yg_tensor *const *x, yg_tensor **o) { return conv_call(x, NULL, 1, cv1, cv2, cv2, false, cv0, 1, o); }
static yg_status f_cv_3d(yg_tensor *const *x, yg_tensor **o)
{
    /* samples have at most 4 dims: input and weight get their 5th here */
    static const int64_t s[3] = {1, 2, 1}, p[3] = {1, 0, 1}, ws[5] = {2, 2, 2, 2, 2};
    yg_tensor *in = NULL, *w = NULL;
    yg_status st = yg_unsqueeze(x[0], 0, &in);
    if (st == YG_OK)
        st = yg_reshape(x[1], ws, 5, &w);
    if (st == YG_OK) {
        yg_tensor *xs[2] = {in, w};
        st = conv_call(xs, x[2], 3, s, p, cv1, false, cv0, 1, o);
    }
    yg_release(in);
    yg_release(w);
    return st;
}
static yg_status f_cv_groups(yg_tensor *const *x, yg_tensor **o)
{
    static const int64_t p[2] = {1, 0};
    return conv_call(x, x[2], 2, cv1, p, cv1, false, cv0, 2, o);
}
static yg_status f_cv_depthwise(yg_tensor *const *x, yg_tensor **o) { return conv_call(x, x[2], 2, cv2, cv1, cv1, false, cv0, 3, o); }
static yg_status f_cv_depthwise_mult(yg_tensor *const *x, yg_tensor **o) { return conv_call(x, NULL, 2, cv1, cv1, cv2, false, cv0, 3, o); }
static yg_status f_cv_t2d(yg_tensor *const *x, yg_tensor **o) { return conv_call(x, x[2], 2, cv2, cv1, cv1, true, cv1, 1, o); }
static yg_status f_cv_t_groups(yg_tensor *const *x, yg_tensor **o)
{
    static const int64_t s[2] = {2, 1}, d[2] = {1, 2}, op[2] = {1, 0};
    return conv_call(x, NULL, 2, s, cv0, d, true, op, 2, o);
}
static yg_status f_cv_t1d(yg_tensor *const *x, yg_tensor **o)
{
    static const int64_t s[1] = {3}, op[1] = {2};
    return conv_call(x, x[2], 1, s, cv1, cv1, true, op, 1, o);
}
static yg_status f_cv_1x1(yg_tensor *const *x, yg_tensor **o) { return conv_call(x, x[2], 2, cv1, cv0, cv1, false, cv0, 1, o); }
/* ---- pool: 3-d pooling, adaptive max pooling, bilinear upsampling ---- */
static const int64_t pl_k2[] = {2}, pl_k3[] = {3}, pl_s2[] = {2}, pl_p0[] = {0}, pl_p1[] = {1}, pl_d1[] = {1};
static yg_status f_max_pool3d(yg_tensor *const *x, yg_tensor **o) { return yg_max_pool3d(x[0], pl_k2, 1, NULL, 0, pl_p0, 1, pl_d1, 1, false, o); }
static yg_status f_max_pool3d_mixed(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t k[] = {3, 3, 2}, s[] = {2, 1, 2}, p[] = {1, 1, 0}, d[] = {1, 2, 1};
    return yg_max_pool3d(x[0], k, 3, s, 3, p, 3, d, 3, true, o);
}
/* values + indices (as floating), so both outputs are checked */
static yg_status f_max_pool3d_idx(yg_tensor *const *x, yg_tensor **o)
{
    yg_tensor *v = NULL, *i = NULL;
    yg_status st = yg_max_pool3d_with_indices(x[0], pl_k2, 1, NULL, 0, pl_p0, 1, pl_d1, 1, false, &v, &i);
    if (st == YG_OK)
        st = yg_add(v, i, 1.0, o);
    yg_release(v);
    yg_release(i);
    return st;
}
static yg_status f_adaptive_max(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t os[] = {3, 4};
    yg_tensor *i = NULL;
    yg_status st = yg_adaptive_max_pool2d(x[0], os, 2, o, &i);
    yg_release(i);
    return st;
}
static yg_status f_adaptive_max_idx(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t os[] = {2};
    yg_tensor *v = NULL, *i = NULL;
    yg_status st = yg_adaptive_max_pool2d(x[0], os, 1, &v, &i);
    if (st == YG_OK)
        st = yg_add(v, i, 1.0, o);
    yg_release(v);
    yg_release(i);
    return st;
}
static yg_status f_avg_pool3d(yg_tensor *const *x, yg_tensor **o) { return yg_avg_pool3d(x[0], pl_k3, 1, pl_s2, 1, pl_p1, 1, false, true, NULL, o); }
static yg_status f_avg_pool3d_ceil(yg_tensor *const *x, yg_tensor **o) { return yg_avg_pool3d(x[0], pl_k2, 1, pl_s2, 1, pl_p1, 1, true, false, NULL, o); }
static yg_status f_avg_pool3d_div(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t k[] = {2, 3, 2}, s[] = {1, 2, 2};
    return yg_avg_pool3d(x[0], k, 3, s, 3, pl_p0, 1, false, true, &(int64_t){5}, o);
}
static yg_status f_avg_pool3d_bw(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t ss[] = {2, 3, 5, 6};
    return yg_avg_pool3d_backward(x[0], ss, 4, pl_k3, 1, pl_s2, 1, pl_p1, 1, false, true, NULL, o);
}
static yg_status f_avg_pool3d_bw_div(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t ss[] = {1, 4, 5, 5};
    return yg_avg_pool3d_backward(x[0], ss, 4, pl_k2, 1, pl_s2, 1, pl_p1, 1, true, false, &(int64_t){3}, o);
}
static yg_status f_adaptive3d(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t os[] = {3, 2, 4};
    return yg_adaptive_avg_pool3d(x[0], os, 3, o);
}
static yg_status f_adaptive3d_bw(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t ss[] = {2, 5, 4, 7};
    return yg_adaptive_avg_pool3d_backward(x[0], ss, 4, o);
}
static const int64_t pl_o57[] = {5, 7};
static yg_status f_bilinear_ac(yg_tensor *const *x, yg_tensor **o) { return yg_upsample_bilinear2d(x[0], pl_o57, 2, true, NULL, NULL, o); }
static yg_status f_bilinear(yg_tensor *const *x, yg_tensor **o) { return yg_upsample_bilinear2d(x[0], pl_o57, 2, false, NULL, NULL, o); }
static yg_status f_bilinear_down(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t os[] = {2, 3};
    return yg_upsample_bilinear2d(x[0], os, 2, false, NULL, NULL, o);
}
static yg_status f_bilinear_scales(yg_tensor *const *x, yg_tensor **o) { return yg_upsample_bilinear2d(x[0], NULL, 0, false, &(double){1.7}, &(double){2.3}, o); }
static yg_status f_bilinear_scales_ac(yg_tensor *const *x, yg_tensor **o) { return yg_upsample_bilinear2d(x[0], NULL, 0, true, &(double){1.7}, &(double){2.3}, o); }
static yg_status f_bilinear_bw(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t ss[] = {1, 2, 3, 3};
    return yg_upsample_bilinear2d_backward(x[0], ss, 4, false, NULL, NULL, o);
}
static yg_status f_bilinear_bw_ac(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t ss[] = {2, 3, 4};
    return yg_upsample_bilinear2d_backward(x[0], ss, 3, true, NULL, NULL, o);
}
static yg_status f_bilinear_bw_scales(yg_tensor *const *x, yg_tensor **o)
{
    const int64_t ss[] = {2, 3, 4};
    return yg_upsample_bilinear2d_backward(x[0], ss, 3, false, &(double){1.7}, &(double){2.3}, o);
}

const sample opinfo_derivative_more_samples[] = {
    /* ---- rng-creation ---- */
    {"bernoulli", "probabilities that require grad", 1, {F64(0, 1, 2, 2, 3)}, f_bernoulli},
    {"bernoulli.p", "self that requires grad", 1, {F64(-1, 1, 2, 2, 3)}, f_bernoulli_p},
    /* ---- nn-ops: max pooling with indices, reflect/replicate pad ---- */
    {"max_pool2d_with_indices", "2x3 window, overlapping rows, values only", 1, {F64(-1, 1, 4, 2, 1, 4, 5)}, f_max_pool_idx},
    {"max_pool2d_with_indices", "1-d through max_pool1d, dilation, ceil_mode", 1, {F64(-1, 1, 3, 2, 2, 10)}, f_max_pool1d},
    {"reflection_pad", "2-d, [C, H, W]", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_reflect2d},
    {"reflection_pad", "1-d, amounts up to size - 1", 1, {F64(-1, 1, 3, 1, 2, 5)}, f_reflect1d},
    {"reflection_pad", "3-d through pad", 1, {F64(-1, 1, 4, 1, 3, 3, 4)}, f_reflect3d},
    {"reflection_pad_backward", "into [2, 3, 4]", 1, {F64(-1, 1, 3, 2, 6, 7)}, f_reflect_bw},
    {"replication_pad", "2-d, [C, H, W]", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_replicate2d},
    {"replication_pad", "1-d, amounts above size", 1, {F64(-1, 1, 2, 2, 3)}, f_replicate1d},
    {"replication_pad", "3-d through pad", 1, {F64(-1, 1, 4, 1, 3, 3, 4)}, f_replicate3d},
    {"replication_pad_backward", "into [2, 3, 4]", 1, {F64(-1, 1, 3, 2, 6, 7)}, f_replicate_bw},
    /* shape-index: ops returning Tensor[] and advanced indexing */
    {"split", "[5, 3] in pieces of 2, all used", 1, {F64(-1, 1, 2, 5, 3)}, f_split, NULL, OPINFO_JOINS_WITH_CAT},
    {"split", "[2, 5] along dim -1, piece 1 unused", 1, {F64(-1, 1, 2, 2, 5)}, f_split_some, NULL, OPINFO_JOINS_WITH_CAT},
    {"split_with_sizes", "[2, 5] as 1, 0, 4 along dim 1", 1, {F64(-1, 1, 2, 2, 5)}, f_split_with_sizes, NULL, OPINFO_JOINS_WITH_CAT},
    {"chunk", "[5, 2] in 4 chunks (3 pieces), only the last used", 1, {F64(-1, 1, 2, 5, 2)}, f_chunk_last, NULL, OPINFO_JOINS_WITH_CAT},
    {"unbind", "[3, 4] along dim 1, outputs 0 and 3 used", 1, {F64(-1, 1, 2, 3, 4)}, f_unbind_some, NULL, OPINFO_JOINS_WITH_CAT},
    {"unbind", "[3] into 0-dim outputs", 1, {F64(-1, 1, 1, 3)}, f_unbind_1d, NULL, OPINFO_JOINS_WITH_CAT},
    {"index", "[4, 3] by a [2, 2] row index with repeats and -1", 1, {F64(-1, 1, 2, 4, 3)}, f_index_rows},
    {"index", "[3, 4, 5] by dims 0 and 2 around a kept dim", 1, {F64(-1, 1, 3, 3, 4, 5)}, f_index_gap},
    {"index", "[3, 4, 2] by a [3, 4] bool mask", 1, {F64(-1, 1, 3, 3, 4, 2)}, f_index_mask},
    {"index_put", "(row, col) pairs of [4, 3], values [2]", 2, {F64(-1, 1, 2, 4, 3), F64(-1, 1, 1, 2)}, f_index_put_pairs},
    {"index_put", "accumulate, row 1 twice, values [3] broadcast", 2, {F64(-1, 1, 2, 4, 3), F64(-1, 1, 1, 3)}, f_index_put_acc},
    {"index_put_", "(row, col) pairs into a copy", 2, {F64(-1, 1, 2, 4, 3), F64(-1, 1, 1, 2)}, f_index_put__rows, f_index_put_pairs},
    {"index_put_", "accumulate into a copy, row 1 twice", 2, {F64(-1, 1, 2, 4, 3), F64(-1, 1, 2, 1, 3)}, f_index_put__acc, f_index_put_acc},
    /* ---- dtypes branch ---- */
    {"to_copy", "float64 to float64", 1, {F64(-1, 1, 2, 2, 3)}, f_to_copy},
    {"to_device", "to its own device", 1, {F64(-1, 1, 2, 2, 3)}, f_to_device},
    {"to_device", "transposed self", 1, {F64(-1, 1, 2, 3, 2)}, f_to_device_t, NULL, OPINFO_FIXED_SHAPE},
    {"to_copy", "transposed self through to.dtype(copy=true)", 1, {F64(-1, 1, 2, 3, 2)}, f_to_dtype_copy_t, NULL, OPINFO_FIXED_SHAPE},
    /* ---- norms: the fused kernels ---- */
    {"native_layer_norm", "last dim, affine", 3, {F64(-1, 1, 3, 2, 3, 4), F64(0.5, 1.5, 1, 4), F64(-1, 1, 1, 4)}, f_native_ln},
    {"native_layer_norm", "last two dims, weight only", 2, {F64(-1, 1, 3, 2, 3, 4), F64(0.5, 1.5, 2, 3, 4)}, f_native_ln2},
    {"flash_attention", "causal, 2 heads, L = S = 5", 3, {F64(-1, 1, 4, 2, 2, 5, 4), F64(-1, 1, 4, 2, 2, 5, 4), F64(-1, 1, 4, 2, 2, 5, 4)}, f_flash_causal},
    {"flash_attention", "not causal, L 3 != S 5, E 4 != Ev 3", 3, {F64(-1, 1, 3, 2, 3, 4), F64(-1, 1, 3, 2, 5, 4), F64(-1, 1, 3, 2, 5, 3)}, f_flash},
    {"flash_attention", "causal, L 6 > S 4, scale 0.5", 3, {F64(-1, 1, 3, 1, 6, 3), F64(-1, 1, 3, 1, 4, 3), F64(-1, 1, 3, 1, 4, 2)}, f_flash_causal_half},
    {"flash_attention", "causal, L 4 < S 6", 3, {F64(-1, 1, 2, 4, 3), F64(-1, 1, 2, 6, 3), F64(-1, 1, 2, 6, 2)}, f_flash_causal},
    {"flash_attention", "causal, 130 rows: two tiles, the last ragged", 3, {F64(-1, 1, 2, 130, 2), F64(-1, 1, 2, 130, 2), F64(-1, 1, 2, 130, 1)}, f_flash_causal},
    {"lstm_cell_gates", "batch of 2, H 3", 3, {F64(-2, 2, 2, 2, 12), F64(-2, 2, 2, 2, 12), F64(-1, 1, 2, 2, 3)}, f_lstm_gates},
    {"lstm_cell_gates", "unbatched, H 2", 3, {F64(-2, 2, 1, 8), F64(-2, 2, 1, 8), F64(-1, 1, 1, 2)}, f_lstm_gates},
    {"native_batch_norm", "training, affine", 3, {F64(-1, 1, 3, 2, 3, 4), F64(0.5, 1.5, 1, 3), F64(-1, 1, 1, 3)}, f_native_bn_train},
    {"native_batch_norm", "evaluation, running statistics", 5, {F64(-1, 1, 4, 2, 3, 2, 2), F64(0.5, 1.5, 1, 3), F64(-1, 1, 1, 3), C64(-0.5, 0.5, 1, 3), C64(0.5, 2, 1, 3)}, f_native_bn_eval},
    /* ---- convolution ---- */
    {"convolution_dispatch", "2-d, stride 2, padding 1, bias", 3, {F64(-1, 1, 4, 2, 3, 5, 5), F64(-1, 1, 4, 4, 3, 3, 3), F64(-1, 1, 1, 4)}, f_cv_2d},
    {"convolution_dispatch", "1-d, padding 2, dilation 2, no bias", 2, {F64(-1, 1, 3, 2, 2, 7), F64(-1, 1, 3, 3, 2, 3)}, f_cv_1d_dil},
    {"convolution_dispatch", "3-d, stride [1, 2, 1], padding [1, 0, 1], bias", 3, {F64(-1, 1, 4, 2, 3, 4, 3), F64(-1, 1, 4, 4, 2, 2, 2), F64(-1, 1, 1, 2)}, f_cv_3d},
    {"convolution_dispatch", "2-d, groups 2, padding [1, 0], bias", 3, {F64(-1, 1, 4, 2, 4, 5, 4), F64(-1, 1, 4, 6, 2, 3, 2), F64(-1, 1, 1, 6)}, f_cv_groups},
    {"convolution_dispatch", "depthwise, stride 2, padding 1, bias", 3, {F64(-1, 1, 4, 2, 3, 5, 5), F64(-1, 1, 4, 3, 1, 3, 3), F64(-1, 1, 1, 3)}, f_cv_depthwise},
    {"convolution_dispatch", "depthwise, multiplier 2, dilation 2", 2, {F64(-1, 1, 4, 1, 3, 6, 5), F64(-1, 1, 4, 6, 1, 3, 2)}, f_cv_depthwise_mult},
    {"convolution_dispatch", "1x1, bias", 3, {F64(-1, 1, 4, 2, 3, 3, 4), F64(-1, 1, 4, 4, 3, 1, 1), F64(-1, 1, 1, 4)}, f_cv_1x1},
    {"convolution_dispatch", "transposed 2-d, stride 2, output_padding 1, bias", 3, {F64(-1, 1, 4, 2, 4, 3, 3), F64(-1, 1, 4, 4, 3, 3, 3), F64(-1, 1, 1, 3)}, f_cv_t2d},
    {"convolution_dispatch", "transposed, groups 2, stride [2, 1], dilation [1, 2]", 2, {F64(-1, 1, 4, 1, 4, 3, 4), F64(-1, 1, 4, 4, 2, 2, 3)}, f_cv_t_groups},
    {"convolution_dispatch", "transposed 1-d, stride 3, output_padding 2, bias", 3, {F64(-1, 1, 3, 2, 3, 4), F64(-1, 1, 3, 3, 2, 3), F64(-1, 1, 1, 2)}, f_cv_t1d},
    /* pool: 3-d pooling, adaptive max pooling, bilinear upsampling */
    {"max_pool3d_with_indices", "2x2x2 windows", 1, {F64(-1, 1, 4, 2, 4, 4, 6)}, f_max_pool3d},
    {"max_pool3d_with_indices", "per-dim kernel, stride, padding, dilation, ceil_mode", 1, {F64(-1, 1, 4, 2, 5, 6, 7)}, f_max_pool3d_mixed},
    {"max_pool3d_with_indices", "values + indices", 1, {F64(-1, 1, 4, 2, 3, 4, 5)}, f_max_pool3d_idx},
    {"adaptive_max_pool2d", "5x7 -> 3x4 (overlapping cells)", 1, {F64(-1, 1, 3, 2, 5, 7)}, f_adaptive_max},
    {"adaptive_max_pool2d", "values + indices, 5x3 -> 2x2", 1, {F64(-1, 1, 4, 1, 2, 5, 3)}, f_adaptive_max_idx},
    {"avg_pool3d", "3x3x3 stride 2 padding 1", 1, {F64(-1, 1, 4, 2, 3, 5, 6)}, f_avg_pool3d},
    {"avg_pool3d", "ceil_mode, padding not counted", 1, {F64(-1, 1, 4, 2, 4, 5, 5)}, f_avg_pool3d_ceil},
    {"avg_pool3d", "per-dim kernel and stride, divisor_override 5", 1, {F64(-1, 1, 4, 2, 4, 5, 6)}, f_avg_pool3d_div},
    {"avg_pool3d_backward", "into [2, 3, 5, 6]", 1, {F64(-1, 1, 4, 2, 2, 3, 3)}, f_avg_pool3d_bw},
    {"avg_pool3d_backward", "ceil_mode, no padding counted, divisor_override 3", 1, {F64(-1, 1, 4, 1, 3, 3, 3)}, f_avg_pool3d_bw_div},
    {"adaptive_avg_pool3d", "5x4x7 -> 3x2x4", 1, {F64(-1, 1, 4, 2, 5, 4, 7)}, f_adaptive3d},
    {"adaptive_avg_pool3d_backward", "into [2, 5, 4, 7]", 1, {F64(-1, 1, 4, 2, 3, 2, 4)}, f_adaptive3d_bw},
    {"upsample_bilinear2d", "3x4 -> 5x7, align_corners", 1, {F64(-1, 1, 4, 1, 2, 3, 4)}, f_bilinear_ac},
    {"upsample_bilinear2d", "3x4 -> 5x7", 1, {F64(-1, 1, 4, 1, 2, 3, 4)}, f_bilinear},
    {"upsample_bilinear2d", "5x7 -> 2x3", 1, {F64(-1, 1, 3, 2, 5, 7)}, f_bilinear_down},
    {"upsample_bilinear2d", "scales 1.7, 2.3", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_bilinear_scales},
    {"upsample_bilinear2d", "scales 1.7, 2.3, align_corners", 1, {F64(-1, 1, 3, 2, 3, 4)}, f_bilinear_scales_ac},
    {"upsample_bilinear2d_backward", "into [1, 2, 3, 3]", 1, {F64(-1, 1, 4, 1, 2, 5, 7)}, f_bilinear_bw},
    {"upsample_bilinear2d_backward", "into [2, 3, 4], align_corners", 1, {F64(-1, 1, 3, 2, 5, 7)}, f_bilinear_bw_ac},
    {"upsample_bilinear2d_backward", "into [2, 3, 4], scales 1.7, 2.3", 1, {F64(-1, 1, 3, 2, 5, 9)}, f_bilinear_bw_scales},
    {NULL, NULL, 0, {{0}}, NULL, NULL, 0},
};
