/*
 * norm.c - the fused kernels of layer_norm and batch_norm, forward and
 * backward (float32 and float64).
 *
 * layer_norm normalizes each row of M = prod(normalized_shape) trailing
 * elements; batch_norm each channel c of an input seen as [N, C, L] (L the
 * product of the position dims), whose values are N contiguous segments
 * of L.  Statistics take two passes (sum, then the sum of squared
 * deviations from the mean, which cannot cancel catastrophically as the
 * sum of squares can) over data that the first pass has just brought into
 * cache: a layer_norm row (4 KiB for 1024 float32) stays in L1, a
 * batch_norm channel of 32 x 56 x 56 float32 (400 KiB) in L2.  The output
 * pass reads it once more from cache and writes the result, so each op
 * reads its input from memory once and writes its output once, where the
 * old compositions (mean, var, sub, mul, add, ...) made seven or more
 * passes and as many temporaries.  The backward is the same shape: one
 * pass for the two row sums (sum g w and sum g w (x - mean)), which also
 * adds the row into grad_weight and grad_bias, and one pass writing
 * grad_input.
 *
 * Rows (layer_norm) or channels (batch_norm) are spread over OpenMP
 * threads when the input has at least YG_NORM_PARALLEL_MIN elements, and
 * run on the calling thread below that, so small tensors never pay for a
 * fork.  layer_norm's grad_weight and grad_bias are column sums over rows:
 * each thread sums its rows into a buffer of its own, and the buffers are
 * added in thread order afterwards (deterministic for a thread count).
 *
 * Inputs of any layout are first made contiguous (a shared reference when
 * they already are).  weight, bias and the statistics must have input's
 * dtype (layer_norm and batch_norm convert them before calling); the
 * running statistics of batch_norm are state, kept in their own dtype
 * (float32 or float64) and layout, and written only once the output
 * exists.  Messages name the op: `native_layer_norm: ...`.
 *
 * All four are the CPU's implementations of structured ops: the checks
 * and the results are meta/norm.c's, which the GPU's (cuda/norm.c, over
 * cuda/layer_norm.cu and cuda/norm.cu: the same formulas, statistics in
 * double) share.
 */
#include "cpu/cpu_int.h"
#include "cpu/vec/kernels.h"
#include "decls/norms.h"
#include "decls/norms_backward.h"
#include "meta/norm.h"

#include <inttypes.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

/* The smallest input worth OpenMP threads: the pointwise kernels' grain
 * (runtime/cpu/pointwise.c), below which a fork/join costs more than the
 * work it splits. */
#define YG_NORM_PARALLEL_MIN 32768

static bool worth_threads(int64_t numel, int64_t units) {
    return numel >= YG_NORM_PARALLEL_MIN && units > 1 && omp_get_max_threads() > 1;
}

/* Contiguous copies (or shared references) of the nullable t. */
static yg_status contiguous(const yg_tensor *t, yg_tensor **out) {
    *out = NULL;
    if (t == NULL)
        return YG_OK;
    return yg__tensor_contiguous_as(t, t->dtype, true, out);
}

static const void *data_or_null(const yg_tensor *t) {
    return t != NULL ? yg__tensor_ptr(t) : NULL;
}

/* ---- layer_norm ---- */

typedef struct ln_forward {
    const void *x, *w, *b;
    void *y, *mean, *rstd;
    int64_t m;
    double eps;
    bool f32;
} ln_forward;

static void ln_forward_row(const ln_forward *a, int64_t r) {
    int64_t m = a->m;
    double mu = NAN, rs = NAN;

    if (a->f32) {
        const float *x = (const float *)a->x + r * m;
        if (m > 0) {
            mu = yg__vec()->norm->sum_f32(x, m) / (double)m;
            rs = 1 / sqrt(yg__vec()->norm->sq_dev_f32(x, m, mu) / (double)m + a->eps);
        }
        yg__vec()->norm->affine_row_f32(
            (float *)a->y + r * m, x, m, (float)mu, (float)rs, a->w, a->b);
        ((float *)a->mean)[r] = (float)mu;
        ((float *)a->rstd)[r] = (float)rs;
    } else {
        const double *x = (const double *)a->x + r * m;
        if (m > 0) {
            mu = yg__vec()->norm->sum_f64(x, m) / (double)m;
            rs = 1 / sqrt(yg__vec()->norm->sq_dev_f64(x, m, mu) / (double)m + a->eps);
        }
        yg__vec()->norm->affine_row_f64((double *)a->y + r * m, x, m, mu, rs, a->w, a->b);
        ((double *)a->mean)[r] = mu;
        ((double *)a->rstd)[r] = rs;
    }
}

/* The implementations below fill the results the meta functions of
 * meta/norm.c made after checking the arguments (structured ops,
 * meta/meta.h). */
yg_status yg__cpu_native_layer_norm_out(const yg_tensor *input,
                                        const int64_t *normalized_shape,
                                        int64_t normalized_shape_len,
                                        const yg_tensor *weight,
                                        const yg_tensor *bias,
                                        double eps,
                                        yg_tensor *y,
                                        yg_tensor *mean,
                                        yg_tensor *rstd) {
    int64_t rows, m;
    yg_tensor *x = NULL, *w = NULL, *b = NULL;
    yg_status st;

    YG_RETURN_IF_ERROR(yg__layer_norm_geometry(
        "native_layer_norm", input, normalized_shape, normalized_shape_len, &rows, &m));
    st = yg__tensor_contiguous_as(input, input->dtype, true, &x);
    if (st == YG_OK)
        st = contiguous(weight, &w);
    if (st == YG_OK)
        st = contiguous(bias, &b);
    if (st != YG_OK)
        goto out;
    ln_forward a = {data_or_null(x),
                    data_or_null(w),
                    data_or_null(b),
                    yg__tensor_ptr(y),
                    yg__tensor_ptr(mean),
                    yg__tensor_ptr(rstd),
                    m,
                    eps,
                    input->dtype == YG_FLOAT32};
    if (worth_threads(rows * m, rows)) {
#pragma omp parallel for schedule(static)
        for (int64_t r = 0; r < rows; r++)
            ln_forward_row(&a, r);
    } else {
        for (int64_t r = 0; r < rows; r++)
            ln_forward_row(&a, r);
    }
out:
    yg_release(x);
    yg_release(w);
    yg_release(b);
    return st;
}

typedef struct ln_backward {
    const void *g, *x, *mean, *rstd, *w;
    void *gi;
    int64_t m;
    bool f32;
} ln_backward;

/* Rows [r0, r1) of the backward: grad_input's rows when gi is set, and
 * their sums into gw and gb (nullable, of input's type). */
static void ln_backward_rows(const ln_backward *a, int64_t r0, int64_t r1, void *gw, void *gb) {
    int64_t m = a->m;
    double inv_m = m > 0 ? 1 / (double)m : 0;

    for (int64_t r = r0; r < r1; r++) {
        if (a->f32) {
            const float *g = (const float *)a->g + r * m, *x = (const float *)a->x + r * m;
            float mu = ((const float *)a->mean)[r], rs = ((const float *)a->rstd)[r];
            double sg = 0, sgx = 0, rsd = rs;
            yg__vec()->norm->accumulate_row_f32(gw, gb, g, x, m, mu, rs);
            if (a->gi != NULL) {
                yg__vec()->norm->dot_f32(g, x, a->w, m, mu, &sg, &sgx);
                yg__vec()->norm->input_grad_f32((float *)a->gi + r * m,
                                                g,
                                                x,
                                                a->w,
                                                m,
                                                mu,
                                                rs,
                                                (float)(-rsd * rsd * rsd * sgx * inv_m),
                                                (float)(-rsd * sg * inv_m));
            }
        } else {
            const double *g = (const double *)a->g + r * m, *x = (const double *)a->x + r * m;
            double mu = ((const double *)a->mean)[r], rs = ((const double *)a->rstd)[r];
            double sg = 0, sgx = 0;
            yg__vec()->norm->accumulate_row_f64(gw, gb, g, x, m, mu, rs);
            if (a->gi != NULL) {
                yg__vec()->norm->dot_f64(g, x, a->w, m, mu, &sg, &sgx);
                yg__vec()->norm->input_grad_f64((double *)a->gi + r * m,
                                                g,
                                                x,
                                                a->w,
                                                m,
                                                mu,
                                                rs,
                                                -rs * rs * rs * sgx * inv_m,
                                                -rs * sg * inv_m);
            }
        }
    }
}

/* dst[j] += src[j] for j < n, in type f32 or f64. */
static void add_into(void *dst, const void *src, int64_t n, bool f32) {
    if (f32)
        for (int64_t j = 0; j < n; j++)
            ((float *)dst)[j] += ((const float *)src)[j];
    else
        for (int64_t j = 0; j < n; j++)
            ((double *)dst)[j] += ((const double *)src)[j];
}

/* Runs the backward over every row, on threads when worth it: each
 * thread sums its rows' grad_weight and grad_bias into its own zeroed
 * buffer, added into gw and gb (zeroed, nullable) in thread order. */
static yg_status ln_backward_run(const ln_backward *a, int64_t rows, void *gw, void *gb) {
    int64_t m = a->m, esize = a->f32 ? 4 : 8;
    int nt = worth_threads(rows * m, rows) ? omp_get_max_threads() : 1;
    size_t nbytes;
    char *partial;

    if (nt == 1) {
        ln_backward_rows(a, 0, rows, gw, gb);
        return YG_OK;
    }
    nbytes = (size_t)nt * 2 * (size_t)m * (size_t)esize;
    partial = (gw != NULL || gb != NULL) ? yg__alloc(nbytes) : NULL;
    if ((gw != NULL || gb != NULL) && partial == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY,
                        "native_layer_norm_backward_fused: out of memory for %zu bytes",
                        nbytes);
    if (partial != NULL)
        memset(partial, 0, nbytes);
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        int64_t r0 = rows * t / n, r1 = rows * (t + 1) / n;
        char *mine = partial != NULL ? partial + (size_t)t * 2 * (size_t)(m * esize) : NULL;
        ln_backward_rows(a, r0, r1, gw != NULL ? mine : NULL, gb != NULL ? mine + m * esize : NULL);
    }
    for (int t = 0; partial != NULL && t < nt; t++) {
        char *mine = partial + (size_t)t * 2 * (size_t)(m * esize);
        if (gw != NULL)
            add_into(gw, mine, m, a->f32);
        if (gb != NULL)
            add_into(gb, mine + m * esize, m, a->f32);
    }
    yg__free(partial, nbytes);
    return YG_OK;
}

yg_status yg__cpu_native_layer_norm_backward_fused_out(const yg_tensor *grad_out,
                                                       const yg_tensor *input,
                                                       const yg_tensor *mean,
                                                       const yg_tensor *rstd,
                                                       const yg_tensor *weight,
                                                       const int64_t *normalized_shape,
                                                       int64_t normalized_shape_len,
                                                       const bool *grad_input_mask,
                                                       yg_tensor *gi,
                                                       yg_tensor *gw,
                                                       yg_tensor *gb) {
    int64_t rows, m;
    yg_tensor *g = NULL, *x = NULL, *mu = NULL, *rs = NULL, *w = NULL;
    yg_status st;

    (void)grad_input_mask;
    YG_RETURN_IF_ERROR(yg__layer_norm_geometry("native_layer_norm_backward_fused",
                                               input,
                                               normalized_shape,
                                               normalized_shape_len,
                                               &rows,
                                               &m));
    st = yg__tensor_contiguous_as(grad_out, input->dtype, true, &g);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(input, input->dtype, true, &x);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(mean, input->dtype, true, &mu);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(rstd, input->dtype, true, &rs);
    if (st == YG_OK)
        st = contiguous(weight, &w);
    if (st != YG_OK)
        goto out;
    ln_backward a = {yg__tensor_ptr(g),
                     yg__tensor_ptr(x),
                     yg__tensor_ptr(mu),
                     yg__tensor_ptr(rs),
                     data_or_null(w),
                     gi != NULL ? yg__tensor_ptr(gi) : NULL,
                     m,
                     input->dtype == YG_FLOAT32};
    st = ln_backward_run(
        &a, rows, gw != NULL ? yg__tensor_ptr(gw) : NULL, gb != NULL ? yg__tensor_ptr(gb) : NULL);
out:
    yg_release(g);
    yg_release(x);
    yg_release(mu);
    yg_release(rs);
    yg_release(w);
    return st;
}

/* ---- batch_norm ---- */

/* Element i of a 1-d float32 or float64 tensor of any stride. */
static double *state_f64(const yg_tensor *t, int64_t i) {
    return (double *)yg__tensor_ptr(t) + i * t->strides[0];
}

static float *state_f32(const yg_tensor *t, int64_t i) {
    return (float *)yg__tensor_ptr(t) + i * t->strides[0];
}

static double state_get(const yg_tensor *t, int64_t i) {
    return t->dtype == YG_FLOAT32 ? (double)*state_f32(t, i) : *state_f64(t, i);
}

static void state_set(yg_tensor *t, int64_t i, double v) {
    if (t->dtype == YG_FLOAT32)
        *state_f32(t, i) = (float)v;
    else
        *state_f64(t, i) = v;
}

typedef struct bn_forward {
    const void *x, *w, *b;
    const yg_tensor *rm, *rv;
    void *y, *save_mean, *save_invstd;
    double *batch_var; /* [C]: the biased variance, when training */
    int64_t n, c, l;
    double eps;
    bool training, f32;
} bn_forward;

static void bn_forward_channel(const bn_forward *a, int64_t ch) {
    int64_t n = a->n, c = a->c, l = a->l;
    double count = (double)(n * l), mu = NAN, var = NAN, inv;

    if (a->training) {
        if (n * l > 0) {
            double s = 0, sq = 0;
            for (int64_t i = 0; i < n; i++)
                s += a->f32 ? yg__vec()->norm->sum_f32((const float *)a->x + (i * c + ch) * l, l)
                            : yg__vec()->norm->sum_f64((const double *)a->x + (i * c + ch) * l, l);
            mu = s / count;
            for (int64_t i = 0; i < n; i++)
                sq +=
                    a->f32
                        ? yg__vec()->norm->sq_dev_f32((const float *)a->x + (i * c + ch) * l, l, mu)
                        : yg__vec()->norm->sq_dev_f64(
                              (const double *)a->x + (i * c + ch) * l, l, mu);
            var = sq / count;
        }
        a->batch_var[ch] = var;
    } else {
        mu = state_get(a->rm, ch);
        var = state_get(a->rv, ch);
    }
    inv = 1 / sqrt(var + a->eps);
    if (a->f32) {
        const float *w = a->w, *b = a->b;
        float scale = (float)inv * (w != NULL ? w[ch] : 1), shift = b != NULL ? b[ch] : 0;
        for (int64_t i = 0; i < n; i++)
            yg__vec()->norm->scale_shift_f32((float *)a->y + (i * c + ch) * l,
                                             (const float *)a->x + (i * c + ch) * l,
                                             l,
                                             (float)mu,
                                             scale,
                                             shift);
        ((float *)a->save_mean)[ch] = (float)mu;
        ((float *)a->save_invstd)[ch] = (float)inv;
    } else {
        const double *w = a->w, *b = a->b;
        double scale = inv * (w != NULL ? w[ch] : 1), shift = b != NULL ? b[ch] : 0;
        for (int64_t i = 0; i < n; i++)
            yg__vec()->norm->scale_shift_f64((double *)a->y + (i * c + ch) * l,
                                             (const double *)a->x + (i * c + ch) * l,
                                             l,
                                             mu,
                                             scale,
                                             shift);
        ((double *)a->save_mean)[ch] = mu;
        ((double *)a->save_invstd)[ch] = inv;
    }
}

/* batch_norm of an [N, C] input (no positions, l = 1; BatchNorm1d after
 * a linear layer): a channel's values are a column, so the per-channel
 * loops above would run once per element.  Here each pass walks the rows
 * and works on all channels at once, which vectorises across channels;
 * the arithmetic is the per-channel path's.  scratch holds 2 C doubles. */
#define DEFINE_BN_FORWARD_ROWS(SUFFIX, T)                                                          \
    static void bn_forward_rows_##SUFFIX(const bn_forward *a, double *mean, double *var) {         \
        const int64_t n = a->n, c = a->c;                                                          \
        const T *x = a->x, *w = a->w, *b = a->b;                                                   \
        T *y = a->y, *sm = a->save_mean, *si = a->save_invstd;                                     \
        if (a->training) {                                                                         \
            for (int64_t ch = 0; ch < c; ch++)                                                     \
                mean[ch] = var[ch] = 0;                                                            \
            for (int64_t i = 0; i < n; i++)                                                        \
                _Pragma("omp simd") for (int64_t ch = 0; ch < c; ch++) mean[ch] +=                 \
                    (double)x[i * c + ch];                                                         \
            for (int64_t ch = 0; ch < c; ch++)                                                     \
                mean[ch] = n > 0 ? mean[ch] / (double)n : NAN;                                     \
            for (int64_t i = 0; i < n; i++)                                                        \
                _Pragma("omp simd") for (int64_t ch = 0; ch < c; ch++) {                           \
                    double d = (double)x[i * c + ch] - mean[ch];                                   \
                    var[ch] += d * d;                                                              \
                }                                                                                  \
            for (int64_t ch = 0; ch < c; ch++) {                                                   \
                var[ch] = n > 0 ? var[ch] / (double)n : NAN;                                       \
                a->batch_var[ch] = var[ch];                                                        \
            }                                                                                      \
        } else {                                                                                   \
            for (int64_t ch = 0; ch < c; ch++) {                                                   \
                mean[ch] = state_get(a->rm, ch);                                                   \
                var[ch] = state_get(a->rv, ch);                                                    \
            }                                                                                      \
        }                                                                                          \
        /* from here mean and var hold the per-channel T coefficients */                           \
        for (int64_t ch = 0; ch < c; ch++) {                                                       \
            double inv = 1 / sqrt(var[ch] + a->eps);                                               \
            sm[ch] = (T)mean[ch];                                                                  \
            si[ch] = (T)inv;                                                                       \
            var[ch] = (double)((T)inv * (w != NULL ? w[ch] : (T)1));                               \
        }                                                                                          \
        for (int64_t i = 0; i < n; i++)                                                            \
            _Pragma("omp simd") for (int64_t ch = 0; ch < c; ch++) y[i * c + ch] =                 \
                (x[i * c + ch] - sm[ch]) * (T)var[ch] + (b != NULL ? b[ch] : (T)0);                \
    }

DEFINE_BN_FORWARD_ROWS(f32, float)
DEFINE_BN_FORWARD_ROWS(f64, double)

yg_status yg__cpu_native_batch_norm_out(const yg_tensor *input,
                                        const yg_tensor *weight,
                                        const yg_tensor *bias,
                                        yg_tensor *running_mean,
                                        yg_tensor *running_var,
                                        bool training,
                                        double momentum,
                                        double eps,
                                        yg_tensor *y,
                                        yg_tensor *sm,
                                        yg_tensor *si) {
    const char *op = "native_batch_norm";
    int64_t n = 0, c = 0, l = 0;
    yg_tensor *x = NULL, *w = NULL, *b = NULL;
    double *batch_var = NULL;
    size_t var_bytes = 0;
    yg_status st;

    YG_RETURN_IF_ERROR(yg__batch_norm_geometry(op, input, &n, &c, &l));
    var_bytes = sizeof(double) * (size_t)c;
    st = yg__tensor_contiguous_as(input, input->dtype, true, &x);
    if (st == YG_OK)
        st = contiguous(weight, &w);
    if (st == YG_OK)
        st = contiguous(bias, &b);
    if (st == YG_OK && (batch_var = yg__alloc(var_bytes)) == NULL)
        st = yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu bytes", op, var_bytes);
    if (st != YG_OK)
        goto out;
    bn_forward a = {data_or_null(x),
                    data_or_null(w),
                    data_or_null(b),
                    running_mean,
                    running_var,
                    yg__tensor_ptr(y),
                    yg__tensor_ptr(sm),
                    yg__tensor_ptr(si),
                    batch_var,
                    n,
                    c,
                    l,
                    eps,
                    training,
                    input->dtype == YG_FLOAT32};
    if (l == 1 && n > 1) {
        double *scratch = yg__alloc(2 * var_bytes);
        if (scratch == NULL) {
            st = yg__fail(
                YG_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu bytes", op, 2 * var_bytes);
            goto out;
        }
        if (a.f32)
            bn_forward_rows_f32(&a, scratch, scratch + c);
        else
            bn_forward_rows_f64(&a, scratch, scratch + c);
        yg__free(scratch, 2 * var_bytes);
    } else if (worth_threads(n * c * l, c)) {
#pragma omp parallel for schedule(static)
        for (int64_t ch = 0; ch < c; ch++)
            bn_forward_channel(&a, ch);
    } else {
        for (int64_t ch = 0; ch < c; ch++)
            bn_forward_channel(&a, ch);
    }
    /* running = (1 - momentum) running + momentum batch, with the unbiased
     * variance; written last, so a failure above leaves them unchanged */
    if (training && running_mean != NULL && n * l > 0) {
        double count = (double)(n * l);
        for (int64_t ch = 0; ch < c; ch++) {
            double mu = input->dtype == YG_FLOAT32 ? (double)((const float *)yg__tensor_ptr(sm))[ch]
                                                   : ((const double *)yg__tensor_ptr(sm))[ch];
            state_set(
                running_mean, ch, (1 - momentum) * state_get(running_mean, ch) + momentum * mu);
            state_set(running_var,
                      ch,
                      (1 - momentum) * state_get(running_var, ch) +
                          momentum * batch_var[ch] * count / (count - 1));
        }
    }
out:
    yg__free(batch_var, var_bytes);
    yg_release(x);
    yg_release(w);
    yg_release(b);
    return st;
}

typedef struct bn_backward {
    const void *g, *x, *w, *mean, *invstd;
    void *gi, *gw, *gb;
    int64_t n, c, l;
    bool training;
    bool f32;
} bn_backward;

static void bn_backward_channel(const bn_backward *a, int64_t ch) {
    int64_t n = a->n, c = a->c, l = a->l;
    double count = (double)(n * l), sg = 0, sgx = 0, mu, inv, wc;
    bool sums = a->gw != NULL || a->gb != NULL || (a->gi != NULL && a->training);

    if (a->f32) {
        mu = ((const float *)a->mean)[ch];
        inv = ((const float *)a->invstd)[ch];
        wc = a->w != NULL ? ((const float *)a->w)[ch] : 1;
    } else {
        mu = ((const double *)a->mean)[ch];
        inv = ((const double *)a->invstd)[ch];
        wc = a->w != NULL ? ((const double *)a->w)[ch] : 1;
    }
    for (int64_t i = 0; sums && i < n; i++) {
        int64_t off = (i * c + ch) * l;
        if (a->f32)
            yg__vec()->norm->dot_f32(
                (const float *)a->g + off, (const float *)a->x + off, NULL, l, mu, &sg, &sgx);
        else
            yg__vec()->norm->dot_f64(
                (const double *)a->g + off, (const double *)a->x + off, NULL, l, mu, &sg, &sgx);
    }
    double ca = inv * wc, cb = 0, cc = 0;
    if (a->training && count > 0) {
        cb = -wc * inv * inv * inv * sgx / count;
        cc = -wc * inv * sg / count;
    }
    for (int64_t i = 0; a->gi != NULL && i < n; i++) {
        int64_t off = (i * c + ch) * l;
        if (a->f32)
            yg__vec()->norm->input_grad_f32((float *)a->gi + off,
                                            (const float *)a->g + off,
                                            (const float *)a->x + off,
                                            NULL,
                                            l,
                                            (float)mu,
                                            (float)ca,
                                            (float)cb,
                                            (float)cc);
        else
            yg__vec()->norm->input_grad_f64((double *)a->gi + off,
                                            (const double *)a->g + off,
                                            (const double *)a->x + off,
                                            NULL,
                                            l,
                                            mu,
                                            ca,
                                            cb,
                                            cc);
    }
    if (a->f32) {
        if (a->gw != NULL)
            ((float *)a->gw)[ch] = (float)(sgx * inv);
        if (a->gb != NULL)
            ((float *)a->gb)[ch] = (float)sg;
    } else {
        if (a->gw != NULL)
            ((double *)a->gw)[ch] = sgx * inv;
        if (a->gb != NULL)
            ((double *)a->gb)[ch] = sg;
    }
}

/* The backward of an [N, C] input by rows, as bn_forward_rows: the
 * per-channel sums sum g and sum g (x - mean) over all channels at once,
 * then grad_input a g + b (x - mean) + c with bn_backward_channel's
 * coefficients.  scratch holds 2 C doubles. */
#define DEFINE_BN_BACKWARD_ROWS(SUFFIX, T)                                                         \
    static void bn_backward_rows_##SUFFIX(const bn_backward *a, double *sg, double *sgx) {         \
        const int64_t n = a->n, c = a->c;                                                          \
        const T *g = a->g, *x = a->x, *w = a->w, *mu = a->mean, *inv = a->invstd;                  \
        T *gi = a->gi, *gw = a->gw, *gb = a->gb;                                                   \
        double count = (double)n;                                                                  \
        for (int64_t ch = 0; ch < c; ch++)                                                         \
            sg[ch] = sgx[ch] = 0;                                                                  \
        for (int64_t i = 0; i < n; i++)                                                            \
            _Pragma("omp simd") for (int64_t ch = 0; ch < c; ch++) {                               \
                double gv = (double)g[i * c + ch];                                                 \
                sg[ch] += gv;                                                                      \
                sgx[ch] += gv * ((double)x[i * c + ch] - (double)mu[ch]);                          \
            }                                                                                      \
        for (int64_t ch = 0; ch < c; ch++) {                                                       \
            double iv = (double)inv[ch], wc = w != NULL ? (double)w[ch] : 1;                       \
            if (gw != NULL)                                                                        \
                gw[ch] = (T)(sgx[ch] * iv);                                                        \
            if (gb != NULL)                                                                        \
                gb[ch] = (T)sg[ch];                                                                \
            /* the coefficients, in place of the sums */                                           \
            double cb = a->training ? -wc * iv * iv * iv * sgx[ch] / count : 0;                    \
            double cc = a->training ? -wc * iv * sg[ch] / count : 0;                               \
            sg[ch] = cb;                                                                           \
            sgx[ch] = cc;                                                                          \
        }                                                                                          \
        if (gi == NULL)                                                                            \
            return;                                                                                \
        for (int64_t i = 0; i < n; i++)                                                            \
            _Pragma("omp simd") for (int64_t ch = 0; ch < c; ch++) {                               \
                const T ca = (T)((double)inv[ch] * (w != NULL ? (double)w[ch] : 1));               \
                gi[i * c + ch] =                                                                   \
                    ca * g[i * c + ch] + (T)sg[ch] * (x[i * c + ch] - mu[ch]) + (T)sgx[ch];        \
            }                                                                                      \
    }

DEFINE_BN_BACKWARD_ROWS(f32, float)
DEFINE_BN_BACKWARD_ROWS(f64, double)

yg_status yg__cpu_native_batch_norm_backward_fused_out(const yg_tensor *grad_out,
                                                       const yg_tensor *input,
                                                       const yg_tensor *weight,
                                                       const yg_tensor *save_mean,
                                                       const yg_tensor *save_invstd,
                                                       bool training,
                                                       const bool *grad_input_mask,
                                                       yg_tensor *gi,
                                                       yg_tensor *gw,
                                                       yg_tensor *gb) {
    const char *op = "native_batch_norm_backward_fused";
    int64_t n = 0, c = 0, l = 0;
    yg_tensor *g = NULL, *x = NULL, *w = NULL, *mu = NULL, *inv = NULL;
    yg_status st;

    (void)grad_input_mask;
    YG_RETURN_IF_ERROR(yg__batch_norm_geometry(op, input, &n, &c, &l));
    st = yg__tensor_contiguous_as(grad_out, input->dtype, true, &g);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(input, input->dtype, true, &x);
    if (st == YG_OK)
        st = contiguous(weight, &w);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(save_mean, input->dtype, true, &mu);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(save_invstd, input->dtype, true, &inv);
    if (st != YG_OK)
        goto out;
    bn_backward a = {yg__tensor_ptr(g),
                     yg__tensor_ptr(x),
                     data_or_null(w),
                     yg__tensor_ptr(mu),
                     yg__tensor_ptr(inv),
                     gi != NULL ? yg__tensor_ptr(gi) : NULL,
                     gw != NULL ? yg__tensor_ptr(gw) : NULL,
                     gb != NULL ? yg__tensor_ptr(gb) : NULL,
                     n,
                     c,
                     l,
                     training,
                     input->dtype == YG_FLOAT32};
    if (l == 1 && n > 1) {
        size_t bytes = 2 * sizeof(double) * (size_t)c;
        double *scratch = yg__alloc(bytes);
        if (scratch == NULL) {
            st = yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of memory for %zu bytes", op, bytes);
            goto out;
        }
        if (a.f32)
            bn_backward_rows_f32(&a, scratch, scratch + c);
        else
            bn_backward_rows_f64(&a, scratch, scratch + c);
        yg__free(scratch, bytes);
    } else if (worth_threads(n * c * l, c)) {
#pragma omp parallel for schedule(static)
        for (int64_t ch = 0; ch < c; ch++)
            bn_backward_channel(&a, ch);
    } else {
        for (int64_t ch = 0; ch < c; ch++)
            bn_backward_channel(&a, ch);
    }
out:
    yg_release(g);
    yg_release(x);
    yg_release(w);
    yg_release(mu);
    yg_release(inv);
    return st;
}
