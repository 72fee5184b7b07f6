/*
 * pool.c - 2-D and 3-D pooling and 2-D nearest resampling over the last
 * two or three dims of [N, C, (D,) H, W] (or [C, (D,) H, W]) inputs on
 * the CPU: max_pool{2,3}d_with_indices, avg_pool{2,3}d,
 * adaptive_avg_pool{2,3}d, adaptive_max_pool2d, upsample_nearest2d, and
 * their gradients.
 *
 * The checks and the window geometry are meta/pool.h's, which the GPU's
 * kernels (cuda/pool.c) call too.  Every kernel here views its input as
 * planes: a contiguous float64 copy of [planes, D, H, W] (planes = N C;
 * D = 1 for the 2-d ops, so one loop nest serves both and the 1-d
 * composites reach it through [..., 1, L]), computes each output plane
 * from its input plane in double, and converts the result to the input's
 * dtype once.  Max pooling, which only compares, reads float32 as it is
 * (no copy when contiguous) and runs its planes in parallel.  Padding is implicit: a max window skips padded positions
 * (as if they were -inf) and an average counts them as zeros when
 * count_include_pad, or divides only by the in-bounds count otherwise (a
 * divisor_override other than 0 replaces either divisor).
 *
 * The max-pooling kernels return each window's maximum (the first one on
 * ties, NaN counting as the maximum) and its position (z H + y) W + x in
 * the input plane, as PyTorch does; max_pool2d/3d and the 1-d ops are
 * composites over them, and their gradient sends grad_output to those
 * positions (composite/pool.c), so this file holds the CPU's one
 * max-pooling loop.  Adaptive cell i of n over a dim of size L covers
 * [floor(i L / n), ceil((i + 1) L / n)).  The resampling gradients add
 * each output gradient into the input positions it read from.
 *
 * cuda/pool.c has the GPU's kernels, which keep this file's arithmetic
 * (double accumulation, the same window order, results rounded once) and
 * its order of additions, so both devices agree to the bit.
 */
#include "decls/adaptive_average_pooling.h"
#include "decls/average_pooling.h"
#include "decls/pooling.h"
#include "decls/resampling.h"
#include "meta/pool.h"

#include "cpu/cpu_int.h"
#include "cpu/vec/kernels.h"

#include <math.h>

/* A new float64 tensor of the leading dims of sizes (ndim of them, the
 * last nsp replaced by the last nsp entries of sp[3]). */
static yg_status new_planes(const int64_t *sizes,
                            int64_t ndim,
                            int nsp,
                            const int64_t *sp,
                            bool zero,
                            yg_tensor **out) {
    int64_t s[YG_MAX_DIMS];
    yg__pool_result_sizes(sizes, ndim, nsp, sp, s);
    return zero ? yg_tensor_zeros(s, ndim, YG_FLOAT64, out)
                : yg_tensor_empty(s, ndim, YG_FLOAT64, out);
}

/* res (float64) converted to dtype into *out; res released. */
static yg_status finish(yg_tensor *res, yg_dtype dtype, yg_tensor **out) {
    yg_status st = yg__tensor_contiguous_as(res, dtype, true, out);
    yg_release(res);
    return st;
}

/* ---- max pooling ---- */

/* Whether a beats the best so far, b (NaN counts as the maximum; ties
 * keep the first). */
#define BEATS(a, b) (!isnan(b) && (isnan(a) || (a) > (b)))

/* Position of the maximum of window o[3] in plane x (of T), or -1 when
 * the window holds no input element. */
#define WINDOW_ARGMAX(name, T)                                                                     \
    static int64_t name(const yg_pool_geom *g, const T *x, const int64_t o[3]) {                   \
        int64_t best = -1;                                                                         \
        T top = 0;                                                                                 \
        for (int64_t kz = 0; kz < g->k[0]; kz++) {                                                 \
            int64_t z = o[0] * g->s[0] - g->p[0] + kz * g->d[0];                                   \
            if (z < 0 || z >= g->in[0])                                                            \
                continue;                                                                          \
            for (int64_t ky = 0; ky < g->k[1]; ky++) {                                             \
                int64_t y = o[1] * g->s[1] - g->p[1] + ky * g->d[1];                               \
                if (y < 0 || y >= g->in[1])                                                        \
                    continue;                                                                      \
                const int64_t row = (z * g->in[1] + y) * g->in[2];                                 \
                for (int64_t kx = 0; kx < g->k[2]; kx++) {                                         \
                    int64_t xx = o[2] * g->s[2] - g->p[2] + kx * g->d[2];                          \
                    if (xx < 0 || xx >= g->in[2])                                                  \
                        continue;                                                                  \
                    const T v = x[row + xx];                                                       \
                    if (best < 0 || BEATS(v, top)) {                                               \
                        best = row + xx;                                                           \
                        top = v;                                                                   \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        return best;                                                                               \
    }
WINDOW_ARGMAX(window_argmax, double)
WINDOW_ARGMAX(window_argmax_f32, float)

/* The same for 2-d windows without dilation (the usual pooling): the
 * window clipped to the plane once, then plain loops over its rows, in
 * the same order (so the same position on ties). */
#define WINDOW2D_ARGMAX(name, T)                                                                   \
    static int64_t name(const yg_pool_geom *g, const T *x, const int64_t o[3]) {                   \
        const int64_t y0 = o[1] * g->s[1] - g->p[1], x0 = o[2] * g->s[2] - g->p[2];                \
        const int64_t ylo = y0 > 0 ? y0 : 0, xlo = x0 > 0 ? x0 : 0;                                \
        const int64_t yhi = y0 + g->k[1] < g->in[1] ? y0 + g->k[1] : g->in[1];                     \
        const int64_t xhi = x0 + g->k[2] < g->in[2] ? x0 + g->k[2] : g->in[2];                     \
        if (ylo >= yhi || xlo >= xhi)                                                              \
            return -1;                                                                             \
        int64_t best = ylo * g->in[2] + xlo;                                                       \
        T top = x[best];                                                                           \
        for (int64_t y = ylo; y < yhi; y++) {                                                      \
            const T *row = x + y * g->in[2];                                                       \
            for (int64_t xx = xlo; xx < xhi; xx++) {                                               \
                /* BEATS without branches: random data would mispredict */                       \
                const T v = row[xx];                                                               \
                const bool take = (top == top) & ((v != v) | (v > top));                           \
                top = take ? v : top;                                                              \
                best = take ? y * g->in[2] + xx : best;                                            \
            }                                                                                      \
        }                                                                                          \
        return best;                                                                               \
    }
WINDOW2D_ARGMAX(window2d_argmax, double)
WINDOW2D_ARGMAX(window2d_argmax_f32, float)

/* The maximum of each window of g (or, when adaptive, of each adaptive
 * cell) and its position, into new values (self's dtype) and int64
 * indices. */
static yg_status max_pool_run(const char *op,
                              const yg_tensor *self,
                              yg_pool_geom *g,
                              bool adaptive,
                              yg_tensor **out_values,
                              yg_tensor **out_indices);

static yg_status max_pool_entry(const char *op,
                                int nsp,
                                const yg_tensor *self,
                                const int64_t *kernel_size,
                                int64_t kernel_size_len,
                                const int64_t *stride,
                                int64_t stride_len,
                                const int64_t *padding,
                                int64_t padding_len,
                                const int64_t *dilation,
                                int64_t dilation_len,
                                bool ceil_mode,
                                yg_tensor **out_values,
                                yg_tensor **out_indices) {
    yg_pool_geom g;
    *out_values = NULL;
    *out_indices = NULL;
    YG_RETURN_IF_ERROR(yg__pool_max_geometry(op,
                                             nsp,
                                             self,
                                             kernel_size,
                                             kernel_size_len,
                                             stride,
                                             stride_len,
                                             padding,
                                             padding_len,
                                             dilation,
                                             dilation_len,
                                             ceil_mode,
                                             &g));
    return max_pool_run(op, self, &g, false, out_values, out_indices);
}

yg_status yg__cpu_max_pool2d_with_indices(const yg_tensor *self,
                                          const int64_t *kernel_size,
                                          int64_t kernel_size_len,
                                          const int64_t *stride,
                                          int64_t stride_len,
                                          const int64_t *padding,
                                          int64_t padding_len,
                                          const int64_t *dilation,
                                          int64_t dilation_len,
                                          bool ceil_mode,
                                          yg_tensor **out_values,
                                          yg_tensor **out_indices) {
    return max_pool_entry("max_pool2d_with_indices",
                          2,
                          self,
                          kernel_size,
                          kernel_size_len,
                          stride,
                          stride_len,
                          padding,
                          padding_len,
                          dilation,
                          dilation_len,
                          ceil_mode,
                          out_values,
                          out_indices);
}

yg_status yg__cpu_max_pool3d_with_indices(const yg_tensor *self,
                                          const int64_t *kernel_size,
                                          int64_t kernel_size_len,
                                          const int64_t *stride,
                                          int64_t stride_len,
                                          const int64_t *padding,
                                          int64_t padding_len,
                                          const int64_t *dilation,
                                          int64_t dilation_len,
                                          bool ceil_mode,
                                          yg_tensor **out_values,
                                          yg_tensor **out_indices) {
    return max_pool_entry("max_pool3d_with_indices",
                          3,
                          self,
                          kernel_size,
                          kernel_size_len,
                          stride,
                          stride_len,
                          padding,
                          padding_len,
                          dilation,
                          dilation_len,
                          ceil_mode,
                          out_values,
                          out_indices);
}

/* The adaptive cell of output index o over a dim of size in: [*lo, *hi). */
static void adaptive_cell(int64_t o, int64_t in, int64_t out, int64_t *lo, int64_t *hi) {
    *lo = o * in / out;
    *hi = ((o + 1) * in + out - 1) / out;
}

/* Position of the maximum of the box [lo, hi) of plane x (row-major in
 * g->in), or -1 when the box is empty. */
#define BOX_ARGMAX(name, T)                                                                        \
    static int64_t name(                                                                           \
        const yg_pool_geom *g, const T *x, const int64_t lo[3], const int64_t hi[3]) {             \
        int64_t best = -1;                                                                         \
        for (int64_t z = lo[0]; z < hi[0]; z++)                                                    \
            for (int64_t y = lo[1]; y < hi[1]; y++)                                                \
                for (int64_t xx = lo[2]; xx < hi[2]; xx++) {                                       \
                    int64_t at = (z * g->in[1] + y) * g->in[2] + xx;                               \
                    if (best < 0 || BEATS(x[at], x[best]))                                         \
                        best = at;                                                                 \
                }                                                                                  \
        return best;                                                                               \
    }
BOX_ARGMAX(box_argmax, double)
BOX_ARGMAX(box_argmax_f32, float)

/* Output elements from which max pooling runs its planes in parallel. */
#define POOL_PARALLEL_MIN 16384

/* The maximum of every window (or adaptive cell) of every plane of x (of
 * T) into rv and its position into iv; a window with no input element
 * gets position -1 (the caller reports it).  Planes run in parallel: each
 * writes only its own outputs. */
#define MAX_POOL_PLANES(name, T, window, window2d, box)                                            \
    static void name(const yg_pool_geom *g, bool adaptive, const T *xv, T *rv, int64_t *iv) {      \
        const int64_t ivol = yg__pool_vol(g->in), ovol = yg__pool_vol(g->out);                     \
        const bool plain2d = g->k[0] == 1 && g->in[0] == 1 && g->out[0] == 1 && g->p[0] == 0 &&   \
                             g->d[1] == 1 && g->d[2] == 1;                                       \
        _Pragma("omp parallel for schedule(static) if (g->planes * ovol >= POOL_PARALLEL_MIN)")   \
        for (int64_t p = 0; p < g->planes; p++) {                                                  \
            const T *plane = xv + p * ivol;                                                        \
            int64_t o[3] = {0, 0, 0};                                                              \
            for (int64_t at_out = 0; at_out < ovol; at_out++) {                                    \
                int64_t at;                                                                        \
                if (adaptive) {                                                                    \
                    int64_t lo[3], hi[3];                                                          \
                    for (int i = 0; i < 3; i++)                                                    \
                        adaptive_cell(o[i], g->in[i], g->out[i], &lo[i], &hi[i]);                  \
                    at = box(g, plane, lo, hi);                                                    \
                } else if (plain2d) {                                                              \
                    at = window2d(g, plane, o);                                                    \
                } else {                                                                           \
                    at = window(g, plane, o);                                                      \
                }                                                                                  \
                rv[p * ovol + at_out] = at >= 0 ? plane[at] : 0;                                   \
                iv[p * ovol + at_out] = at;                                                        \
                if (++o[2] == g->out[2]) { /* the next output's coordinates */                     \
                    o[2] = 0;                                                                      \
                    if (++o[1] == g->out[1]) {                                                     \
                        o[1] = 0;                                                                  \
                        o[0]++;                                                                    \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }
MAX_POOL_PLANES(max_pool_planes, double, window_argmax, window2d_argmax, box_argmax)
MAX_POOL_PLANES(max_pool_planes_f32, float, window_argmax_f32, window2d_argmax_f32, box_argmax_f32)

/* Whether every window of g is 2-d and lies inside its plane, without
 * dilation (what the per-capability kernel handles). */
static bool inside_2d(const yg_pool_geom *g) {
    return g->k[0] == 1 && g->in[0] == 1 && g->out[0] == 1 && g->p[0] == 0 && g->p[1] == 0 &&
           g->p[2] == 0 && g->d[1] == 1 && g->d[2] == 1 && g->out[1] > 0 && g->out[2] > 0 &&
           (g->out[1] - 1) * g->s[1] + g->k[1] <= g->in[1] &&
           (g->out[2] - 1) * g->s[2] + g->k[2] <= g->in[2];
}

static yg_status max_pool_run(const char *op,
                              const yg_tensor *self,
                              yg_pool_geom *g,
                              bool adaptive,
                              yg_tensor **out_values,
                              yg_tensor **out_indices) {
    int64_t isizes[YG_MAX_DIMS];
    yg_tensor *x = NULL, *res = NULL, *idx = NULL;
    yg_status st;
    int n = g->nsp;
    /* float32 and float64 are compared as they are (a maximum needs no
     * wider type); other dtypes through a float64 copy */
    const bool f32 = self->dtype == YG_FLOAT32;
    const yg_dtype work = f32 ? YG_FLOAT32 : YG_FLOAT64;

    yg__pool_result_sizes(self->sizes, self->ndim, n, g->out, isizes);
    st = yg__tensor_contiguous_as(self, work, true, &x);
    if (st == YG_OK)
        st = yg_tensor_empty(isizes, self->ndim, work, &res);
    if (st == YG_OK)
        st = yg_tensor_empty(isizes, self->ndim, YG_INT64, &idx);
    if (st != YG_OK)
        goto out;
    int64_t *iv = (int64_t *)yg__tensor_ptr(idx);
    if (!adaptive && inside_2d(g)) {
        /* the usual case: the per-capability kernel (cpu/vec/pool_loops.c) */
        const yg_max_pool_shape shape = {g->planes, g->in[1], g->in[2], g->out[1], g->out[2],
                                         g->k[1], g->k[2], g->s[1], g->s[2]};
        if (yg__vec()->max_pool[f32 ? 0 : 1](yg__tensor_ptr(x), yg__tensor_ptr(res), iv, &shape))
            goto done; /* every window holds input elements: nothing to check */
    }
    if (f32)
        max_pool_planes_f32(
            g, adaptive, (const float *)yg__tensor_ptr(x), (float *)yg__tensor_ptr(res), iv);
    else
        max_pool_planes(
            g, adaptive, (const double *)yg__tensor_ptr(x), (double *)yg__tensor_ptr(res), iv);
    const int64_t total = yg_tensor_numel(idx), ovol = yg__pool_vol(g->out);
    for (int64_t i = 0; i < total; i++)
        if (iv[i] < 0) {
            /* only dilation over a tiny input (or an empty adaptive
             * input) gets here: a window of padding alone has no
             * maximum to send a gradient to */
            const int64_t at_out = i % ovol;
            const int64_t o[3] = {at_out / (g->out[1] * g->out[2]), at_out / g->out[2] % g->out[1],
                                  at_out % g->out[2]};
            st = yg__pool_padding_window_error(op, g, o);
            goto out;
        }
done:
    if (res->dtype == self->dtype) {
        *out_values = res;
        res = NULL;
    } else {
        st = finish(res, self->dtype, out_values);
        res = NULL;
    }
    if (st == YG_OK) {
        *out_indices = idx;
        idx = NULL;
    }
out:
    yg_release(x);
    yg_release(res);
    yg_release(idx);
    return st;
}

/* ---- average pooling ---- */

/* The divisor of window o[3] for average pooling. */
static double avg_divisor(const yg_pool_geom *g,
                          const int64_t o[3],
                          bool count_include_pad,
                          int64_t divisor_override) {
    if (divisor_override != 0)
        return (double)divisor_override;
    int64_t n = 1;
    for (int i = 0; i < 3; i++) {
        int64_t a = o[i] * g->s[i] - g->p[i], b = a + g->k[i];
        if (count_include_pad) {
            /* the window clipped to input + padding (ceil_mode can overhang) */
            int64_t pb = b < g->in[i] + g->p[i] ? b : g->in[i] + g->p[i];
            n *= pb - a;
        } else {
            int64_t ca = a > 0 ? a : 0, cb = b < g->in[i] ? b : g->in[i];
            n *= cb - ca;
        }
    }
    return (double)n;
}

/* Adds scale times the in-bounds elements of window o of plane x into
 * *acc (forward), or adds share into them (backward, when x_out given). */
static void avg_window(const yg_pool_geom *g,
                       const int64_t o[3],
                       const double *x,
                       double *acc,
                       double *x_out,
                       double share) {
    for (int64_t kz = 0; kz < g->k[0]; kz++) {
        int64_t z = o[0] * g->s[0] - g->p[0] + kz;
        if (z < 0 || z >= g->in[0])
            continue;
        for (int64_t ky = 0; ky < g->k[1]; ky++) {
            int64_t y = o[1] * g->s[1] - g->p[1] + ky;
            if (y < 0 || y >= g->in[1])
                continue;
            for (int64_t kx = 0; kx < g->k[2]; kx++) {
                int64_t xx = o[2] * g->s[2] - g->p[2] + kx;
                if (xx < 0 || xx >= g->in[2])
                    continue;
                int64_t at = (z * g->in[1] + y) * g->in[2] + xx;
                if (x_out != NULL)
                    x_out[at] += share;
                else
                    *acc += x[at];
            }
        }
    }
}

/* Average pooling (forward when grad_output is NULL, else its gradient
 * into planes of self_sizes) of nsp dims. */
static yg_status avg_pool_run(const char *op,
                              int nsp,
                              const yg_tensor *self,
                              const yg_tensor *grad_output,
                              const int64_t *self_sizes,
                              int64_t self_sizes_len,
                              const int64_t *kernel_size,
                              int64_t kernel_size_len,
                              const int64_t *stride,
                              int64_t stride_len,
                              const int64_t *padding,
                              int64_t padding_len,
                              bool ceil_mode,
                              bool count_include_pad,
                              int64_t divisor_override,
                              yg_tensor **out) {
    yg_pool_geom g;
    yg_tensor *x = NULL, *res = NULL;
    yg_status st;
    bool backward = grad_output != NULL;
    const yg_tensor *src = backward ? grad_output : self;
    int64_t o[3];

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__pool_avg_geometry(op,
                                             nsp,
                                             self,
                                             grad_output,
                                             self_sizes,
                                             self_sizes_len,
                                             kernel_size,
                                             kernel_size_len,
                                             stride,
                                             stride_len,
                                             padding,
                                             padding_len,
                                             ceil_mode,
                                             &g));
    int64_t ivol = yg__pool_vol(g.in), ovol = yg__pool_vol(g.out);
    st = yg__tensor_contiguous_as(src, YG_FLOAT64, true, &x);
    if (st == YG_OK)
        st = backward ? new_planes(self_sizes, self_sizes_len, nsp, g.in, true, &res)
                      : new_planes(self->sizes, self->ndim, nsp, g.out, false, &res);
    if (st != YG_OK) {
        yg_release(x);
        return st;
    }
    const double *xv = (const double *)yg__tensor_ptr(x);
    double *rv = (double *)yg__tensor_ptr(res);
    for (int64_t p = 0; p < g.planes; p++)
        for (int64_t at_out = 0; at_out < ovol; at_out++) {
            o[0] = at_out / (g.out[1] * g.out[2]);
            o[1] = at_out / g.out[2] % g.out[1];
            o[2] = at_out % g.out[2];
            double div = avg_divisor(&g, o, count_include_pad, divisor_override);
            if (backward) {
                avg_window(&g, o, NULL, NULL, rv + p * ivol, xv[p * ovol + at_out] / div);
            } else {
                double acc = 0;
                avg_window(&g, o, xv + p * ivol, &acc, NULL, 0);
                rv[p * ovol + at_out] = acc / div;
            }
        }
    yg_release(x);
    return finish(res, src->dtype, out);
}

yg_status yg__cpu_avg_pool2d(const yg_tensor *self,
                             const int64_t *kernel_size,
                             int64_t kernel_size_len,
                             const int64_t *stride,
                             int64_t stride_len,
                             const int64_t *padding,
                             int64_t padding_len,
                             bool ceil_mode,
                             bool count_include_pad,
                             yg_tensor **out) {
    return avg_pool_run("avg_pool2d",
                        2,
                        self,
                        NULL,
                        NULL,
                        0,
                        kernel_size,
                        kernel_size_len,
                        stride,
                        stride_len,
                        padding,
                        padding_len,
                        ceil_mode,
                        count_include_pad,
                        0,
                        out);
}

yg_status yg__cpu_avg_pool2d_backward(const yg_tensor *grad_output,
                                      const int64_t *self_sizes,
                                      int64_t self_sizes_len,
                                      const int64_t *kernel_size,
                                      int64_t kernel_size_len,
                                      const int64_t *stride,
                                      int64_t stride_len,
                                      const int64_t *padding,
                                      int64_t padding_len,
                                      bool ceil_mode,
                                      bool count_include_pad,
                                      yg_tensor **out) {
    return avg_pool_run("avg_pool2d_backward",
                        2,
                        NULL,
                        grad_output,
                        self_sizes,
                        self_sizes_len,
                        kernel_size,
                        kernel_size_len,
                        stride,
                        stride_len,
                        padding,
                        padding_len,
                        ceil_mode,
                        count_include_pad,
                        0,
                        out);
}

yg_status yg__cpu_avg_pool3d(const yg_tensor *self,
                             const int64_t *kernel_size,
                             int64_t kernel_size_len,
                             const int64_t *stride,
                             int64_t stride_len,
                             const int64_t *padding,
                             int64_t padding_len,
                             bool ceil_mode,
                             bool count_include_pad,
                             const int64_t *divisor_override,
                             yg_tensor **out) {
    int64_t divisor;
    YG_RETURN_IF_ERROR(yg__pool_divisor("avg_pool3d", divisor_override, &divisor));
    return avg_pool_run("avg_pool3d",
                        3,
                        self,
                        NULL,
                        NULL,
                        0,
                        kernel_size,
                        kernel_size_len,
                        stride,
                        stride_len,
                        padding,
                        padding_len,
                        ceil_mode,
                        count_include_pad,
                        divisor,
                        out);
}

yg_status yg__cpu_avg_pool3d_backward(const yg_tensor *grad_output,
                                      const int64_t *self_sizes,
                                      int64_t self_sizes_len,
                                      const int64_t *kernel_size,
                                      int64_t kernel_size_len,
                                      const int64_t *stride,
                                      int64_t stride_len,
                                      const int64_t *padding,
                                      int64_t padding_len,
                                      bool ceil_mode,
                                      bool count_include_pad,
                                      const int64_t *divisor_override,
                                      yg_tensor **out) {
    int64_t divisor;
    YG_RETURN_IF_ERROR(yg__pool_divisor("avg_pool3d_backward", divisor_override, &divisor));
    return avg_pool_run("avg_pool3d_backward",
                        3,
                        NULL,
                        grad_output,
                        self_sizes,
                        self_sizes_len,
                        kernel_size,
                        kernel_size_len,
                        stride,
                        stride_len,
                        padding,
                        padding_len,
                        ceil_mode,
                        count_include_pad,
                        divisor,
                        out);
}

/* ---- adaptive pooling and nearest upsampling ---- */

static yg_status adaptive_avg_run(const char *op,
                                  int nsp,
                                  const yg_tensor *self,
                                  const int64_t *output_size,
                                  int64_t output_size_len,
                                  yg_tensor **out) {
    yg_pool_geom g;
    yg_tensor *x = NULL, *res = NULL;
    int64_t lo[3], hi[3];
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__pool_adaptive_geometry(op, nsp, self, output_size, output_size_len, &g));
    YG_RETURN_IF_ERROR(yg__tensor_contiguous_as(self, YG_FLOAT64, true, &x));
    st = new_planes(self->sizes, self->ndim, nsp, g.out, false, &res);
    if (st != YG_OK) {
        yg_release(x);
        return st;
    }
    const double *xv = (const double *)yg__tensor_ptr(x);
    double *rv = (double *)yg__tensor_ptr(res);
    int64_t ivol = yg__pool_vol(g.in), ovol = yg__pool_vol(g.out);
    for (int64_t p = 0; p < g.planes; p++)
        for (int64_t at_out = 0; at_out < ovol; at_out++) {
            adaptive_cell(at_out / (g.out[1] * g.out[2]), g.in[0], g.out[0], &lo[0], &hi[0]);
            adaptive_cell(at_out / g.out[2] % g.out[1], g.in[1], g.out[1], &lo[1], &hi[1]);
            adaptive_cell(at_out % g.out[2], g.in[2], g.out[2], &lo[2], &hi[2]);
            double acc = 0;
            for (int64_t z = lo[0]; z < hi[0]; z++)
                for (int64_t y = lo[1]; y < hi[1]; y++)
                    for (int64_t xx = lo[2]; xx < hi[2]; xx++)
                        acc += xv[p * ivol + (z * g.in[1] + y) * g.in[2] + xx];
            int64_t count = (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
            rv[p * ovol + at_out] = count > 0 ? acc / (double)count : NAN;
        }
    yg_release(x);
    return finish(res, self->dtype, out);
}

yg_status yg__cpu_adaptive_avg_pool2d(const yg_tensor *self,
                                      const int64_t *output_size,
                                      int64_t output_size_len,
                                      yg_tensor **out) {
    return adaptive_avg_run("adaptive_avg_pool2d", 2, self, output_size, output_size_len, out);
}

yg_status yg__cpu_adaptive_avg_pool3d(const yg_tensor *self,
                                      const int64_t *output_size,
                                      int64_t output_size_len,
                                      yg_tensor **out) {
    return adaptive_avg_run("adaptive_avg_pool3d", 3, self, output_size, output_size_len, out);
}

yg_status yg__cpu_adaptive_max_pool2d(const yg_tensor *self,
                                      const int64_t *output_size,
                                      int64_t output_size_len,
                                      yg_tensor **out_values,
                                      yg_tensor **out_indices) {
    const char *op = "adaptive_max_pool2d";
    yg_pool_geom g;
    *out_values = NULL;
    *out_indices = NULL;
    /* refuses an empty plane, which has no maximum to return or send a
     * gradient to */
    YG_RETURN_IF_ERROR(yg__pool_adaptive_geometry(op, 2, self, output_size, output_size_len, &g));
    return max_pool_run(op, self, &g, true, out_values, out_indices);
}

/* The common start of the backward kernels that map grad_output back to
 * planes of self_sizes: the checks and geometry (meta/pool.h), a float64
 * copy of grad_output, and a zeroed float64 result. */
static yg_status backward_begin(const char *op,
                                int nsp,
                                const yg_tensor *grad_output,
                                const int64_t *self_sizes,
                                int64_t self_sizes_len,
                                yg_pool_geom *g,
                                yg_tensor **go,
                                yg_tensor **res) {
    yg_status st;

    YG_RETURN_IF_ERROR(
        yg__pool_backward_geometry(op, nsp, grad_output, self_sizes, self_sizes_len, g));
    st = yg__tensor_contiguous_as(grad_output, YG_FLOAT64, true, go);
    if (st == YG_OK)
        st = new_planes(self_sizes, self_sizes_len, nsp, g->in, true, res);
    if (st != YG_OK) {
        yg_release(*go);
        *go = NULL;
    }
    return st;
}

static yg_status adaptive_avg_backward_run(const char *op,
                                           int nsp,
                                           const yg_tensor *grad_output,
                                           const int64_t *self_sizes,
                                           int64_t self_sizes_len,
                                           yg_tensor **out) {
    yg_pool_geom g;
    yg_tensor *go = NULL, *res = NULL;
    int64_t lo[3], hi[3];

    *out = NULL;
    YG_RETURN_IF_ERROR(
        backward_begin(op, nsp, grad_output, self_sizes, self_sizes_len, &g, &go, &res));
    const double *gv = (const double *)yg__tensor_ptr(go);
    double *rv = (double *)yg__tensor_ptr(res);
    int64_t ivol = yg__pool_vol(g.in), ovol = yg__pool_vol(g.out);
    for (int64_t p = 0; p < g.planes; p++)
        for (int64_t at_out = 0; at_out < ovol; at_out++) {
            adaptive_cell(at_out / (g.out[1] * g.out[2]), g.in[0], g.out[0], &lo[0], &hi[0]);
            adaptive_cell(at_out / g.out[2] % g.out[1], g.in[1], g.out[1], &lo[1], &hi[1]);
            adaptive_cell(at_out % g.out[2], g.in[2], g.out[2], &lo[2], &hi[2]);
            int64_t count = (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
            double share = gv[p * ovol + at_out] / (double)count;
            for (int64_t z = lo[0]; z < hi[0]; z++)
                for (int64_t y = lo[1]; y < hi[1]; y++)
                    for (int64_t xx = lo[2]; xx < hi[2]; xx++)
                        rv[p * ivol + (z * g.in[1] + y) * g.in[2] + xx] += share;
        }
    yg_release(go);
    return finish(res, grad_output->dtype, out);
}

yg_status yg__cpu_adaptive_avg_pool2d_backward(const yg_tensor *grad_output,
                                               const int64_t *self_sizes,
                                               int64_t self_sizes_len,
                                               yg_tensor **out) {
    return adaptive_avg_backward_run(
        "adaptive_avg_pool2d_backward", 2, grad_output, self_sizes, self_sizes_len, out);
}

yg_status yg__cpu_adaptive_avg_pool3d_backward(const yg_tensor *grad_output,
                                               const int64_t *self_sizes,
                                               int64_t self_sizes_len,
                                               yg_tensor **out) {
    return adaptive_avg_backward_run(
        "adaptive_avg_pool3d_backward", 3, grad_output, self_sizes, self_sizes_len, out);
}

yg_status yg__cpu_upsample_nearest2d(const yg_tensor *self,
                                     const int64_t *output_size,
                                     int64_t output_size_len,
                                     yg_tensor **out) {
    const char *op = "upsample_nearest2d";
    yg_pool_geom g;
    yg_tensor *x = NULL, *res = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__pool_adaptive_geometry(op, 2, self, output_size, output_size_len, &g));
    YG_RETURN_IF_ERROR(yg__tensor_contiguous_as(self, YG_FLOAT64, true, &x));
    st = new_planes(self->sizes, self->ndim, 2, g.out, false, &res);
    if (st != YG_OK) {
        yg_release(x);
        return st;
    }
    const double *xv = (const double *)yg__tensor_ptr(x);
    double *rv = (double *)yg__tensor_ptr(res);
    int64_t ih = g.in[1], iw = g.in[2], oh = g.out[1], ow = g.out[2];
    for (int64_t p = 0; p < g.planes; p++)
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
                /* source index floor(dst in / out), PyTorch's "nearest" */
                int64_t y = oy * ih / oh, xx = ox * iw / ow;
                rv[(p * oh + oy) * ow + ox] = ih > 0 && iw > 0 ? xv[(p * ih + y) * iw + xx] : 0;
            }
    yg_release(x);
    return finish(res, self->dtype, out);
}

yg_status yg__cpu_upsample_nearest2d_backward(const yg_tensor *grad_output,
                                              const int64_t *self_sizes,
                                              int64_t self_sizes_len,
                                              yg_tensor **out) {
    const char *op = "upsample_nearest2d_backward";
    yg_pool_geom g;
    yg_tensor *go = NULL, *res = NULL;

    *out = NULL;
    YG_RETURN_IF_ERROR(
        backward_begin(op, 2, grad_output, self_sizes, self_sizes_len, &g, &go, &res));
    const double *gv = (const double *)yg__tensor_ptr(go);
    double *rv = (double *)yg__tensor_ptr(res);
    int64_t ih = g.in[1], iw = g.in[2], oh = g.out[1], ow = g.out[2];
    /* An empty grad_output may have a huge other dim: no walk over it. */
    for (int64_t p = 0; p < g.planes && yg_tensor_numel(go) > 0; p++)
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
                int64_t y = oy * ih / oh, xx = ox * iw / ow;
                rv[(p * ih + y) * iw + xx] += gv[(p * oh + oy) * ow + ox];
            }
    yg_release(go);
    return finish(res, grad_output->dtype, out);
}
