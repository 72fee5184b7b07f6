/*
 * pool.c - 2-D and 3-D pooling and 2-D nearest resampling over the last
 * two or three dims of [N, C, (D,) H, W] (or [C, (D,) H, W]) inputs:
 * max_pool{2,3}d_with_indices, avg_pool{2,3}d, adaptive_avg_pool{2,3}d,
 * adaptive_max_pool2d, upsample_nearest2d, and their gradients.
 *
 * Every kernel views its input as planes: a contiguous float64 copy of
 * [planes, D, H, W] (planes = N C; D = 1 for the 2-d ops, so one loop nest
 * serves both and the 1-d composites reach it through [..., 1, L]),
 * computes each output plane from its input plane in double, and converts
 * the result to the input's dtype once.  Window geometry follows PyTorch:
 * the output size along a dim is (in + 2 pad - dilation (k - 1) - 1) /
 * stride + 1, rounded down, or up with ceil_mode as long as the last
 * window starts inside the input or its left padding.  Padding is
 * implicit: a max window skips padded positions (as if they were -inf)
 * and an average counts them as zeros when count_include_pad, or divides
 * only by the in-bounds count otherwise (a divisor_override other than 0
 * replaces either divisor).
 *
 * The max-pooling kernels return each window's maximum (the first one on
 * ties, NaN counting as the maximum) and its position (z H + y) W + x in
 * the input plane, as PyTorch does; max_pool2d/3d and the 1-d ops are
 * composites over them, and their gradient sends grad_output to those
 * positions (composite/pool.c), so this file holds the one max-pooling
 * loop.  Adaptive cell i of n over a dim of size L covers
 * [floor(i L / n), ceil((i + 1) L / n)).  The resampling gradients add
 * each output gradient into the input positions it read from.
 *
 * The max, average and adaptive average kernels and their gradients
 * serve CUDA tensors too: the same checks, then cuda/pool.cu computes
 * with this file's arithmetic (double accumulation, the same window
 * order, results rounded once), on the input's own dtype instead of a
 * float64 copy; its gradients gather per input element instead of
 * scattering per window, in the same order, so both devices agree to
 * the bit.  A max window that covers only padding is found on the host
 * from the geometry alone (window_of_padding) before the GPU runs.
 * upsample_nearest2d and its gradient serve CUDA tensors the same way,
 * on a float64 copy as here; the gradient's thread per input element
 * adds the outputs that copied it (a range of rows times a range of
 * columns, found on the host) in this file's order.
 */
#include "cpu/cpu_int.h"
#include "cuda/backend.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Pooling geometry of one call; index 0 is depth (1 for 2-d ops), 1
 * height, 2 width. */
typedef struct pool_geom {
    int nsp; /* the spatial dims the op pools: 2 or 3 */
    int64_t planes;
    int64_t in[3], out[3];
    int64_t k[3], s[3], p[3], d[3];
} pool_geom;

/* "a x b" or "a x b x c" of the last n of v[3]. */
static const char *dims_text(const int64_t *v, int nsp, char *buf, size_t len) {
    if (nsp == 3)
        snprintf(buf, len, "%" PRId64 " x %" PRId64 " x %" PRId64, v[0], v[1], v[2]);
    else
        snprintf(buf, len, "%" PRId64 " x %" PRId64, v[1], v[2]);
    return buf;
}

/* Reads an int[] of 1 or nsp entries (one means every dim) into the last
 * nsp entries of v[3] (v[0] = fill for 2-d), or def[3] when empty and def
 * is given. */
static yg_status dims_arg(const char *op,
                          const char *name,
                          const int64_t *x,
                          int64_t len,
                          int nsp,
                          const int64_t *def,
                          int64_t min,
                          int64_t fill,
                          int64_t v[3]) {
    char buf[128];
    if (len == 0 && def != NULL) {
        memcpy(v, def, 3 * sizeof *v);
        return YG_OK;
    }
    if ((len != 1 && len != nsp) || x == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %s must have 1 or %d entries, got %s",
                        op,
                        name,
                        nsp,
                        yg__format_sizes(x, x == NULL ? 0 : len, buf, sizeof buf));
    v[0] = fill;
    for (int i = 0; i < nsp; i++) {
        v[3 - nsp + i] = x[len == 1 ? 0 : i];
        if (v[3 - nsp + i] < min)
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s: %s must be at least %" PRId64 ", got %s",
                            op,
                            name,
                            min,
                            yg__format_sizes(x, len, buf, sizeof buf));
        /* Bounded like sizes (sizes.h), so out_size's sums cannot overflow. */
        if (v[3 - nsp + i] > YG__MAX_NUMEL)
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s: %s must be at most 2^59, got %s",
                            op,
                            name,
                            yg__format_sizes(x, len, buf, sizeof buf));
    }
    return YG_OK;
}

/* Checks self is a floating tensor of nsp + 1 or nsp + 2 dims (or its
 * sizes, when sizes is given instead) and fills nsp, planes and in. */
static yg_status check_input(const char *op,
                             const int64_t *sizes,
                             int64_t ndim,
                             yg_dtype dtype,
                             int nsp,
                             pool_geom *g) {
    char buf[128];
    if (ndim != nsp + 1 && ndim != nsp + 2)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected self of %d or %d dims (%s or %s), got %s",
                        op,
                        nsp + 1,
                        nsp + 2,
                        nsp == 3 ? "[C, D, H, W]" : "[C, H, W]",
                        nsp == 3 ? "[N, C, D, H, W]" : "[N, C, H, W]",
                        yg__format_sizes(sizes, ndim, buf, sizeof buf));
    if (!yg__dtype_is_floating(dtype))
        return yg__fail(YG_ERR_DTYPE,
                        "%s: unsupported dtype %s for self (supported: float32, float64)",
                        op,
                        yg_dtype_name(dtype));
    int64_t numel;
    /* sizes may come from the user (the backward ops' self_sizes). */
    YG_RETURN_IF_ERROR(yg__sizes_numel(op, "self", sizes, ndim, &numel));
    g->nsp = nsp;
    g->planes = yg__sizes_product(sizes, ndim - nsp);
    if (g->planes < 0)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: self %s has more than 2^59 planes",
                        op,
                        yg__format_sizes(sizes, ndim, buf, sizeof buf));
    g->in[0] = 1;
    for (int i = 0; i < nsp; i++)
        g->in[3 - nsp + i] = sizes[ndim - nsp + i];
    return YG_OK;
}

static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
    int64_t reach, span, last, limit;
    /* k, s, p, d are in [0, 2^59] (dims_arg); in is a size, up to
     * INT64_MAX for an empty input (the soak of fuzz_ops: max_pool1d of
     * [0, 9223372036854775807]).  A reach beyond int64 fits no window; a
     * span beyond it gives more windows than any tensor may hold, which
     * the result's allocation then refuses. */
    if (!yg__mul_ok(d, k - 1, &reach))
        return 0;
    if (!yg__add_ok(in - reach - 1, 2 * p, &span))
        return INT64_MAX;
    if (span < 0)
        return 0;
    int64_t n;
    /* span / s may be INT64_MAX itself (stride 1): more windows than any
     * tensor holds, as above (the soak of fuzz_ops: avg_pool2d with
     * ceil_mode of [1, 9223372036854775807, 0]). */
    if (!yg__add_ok(span / s, (ceil_mode && span % s != 0) + 1, &n))
        return INT64_MAX;
    /* with ceil_mode the last window must start inside input or left pad */
    if (ceil_mode && yg__mul_ok(n - 1, s, &last) && yg__add_ok(in, p, &limit) && last >= limit)
        n--;
    return n;
}

/* Window geometry from the op's arguments (dilation NULL means 1). */
static yg_status window_geometry(const char *op,
                                 const int64_t *kernel_size,
                                 int64_t kernel_size_len,
                                 const int64_t *stride,
                                 int64_t stride_len,
                                 const int64_t *padding,
                                 int64_t padding_len,
                                 const int64_t *dilation,
                                 int64_t dilation_len,
                                 bool ceil_mode,
                                 pool_geom *g) {
    static const int64_t ones[3] = {1, 1, 1};
    char buf[160], obuf[80];
    int n = g->nsp;
    YG_RETURN_IF_ERROR(
        dims_arg(op, "kernel_size", kernel_size, kernel_size_len, n, NULL, 1, 1, g->k));
    YG_RETURN_IF_ERROR(dims_arg(op, "stride", stride, stride_len, n, g->k, 1, 1, g->s));
    YG_RETURN_IF_ERROR(dims_arg(op, "padding", padding, padding_len, n, NULL, 0, 0, g->p));
    memcpy(g->d, ones, sizeof ones);
    if (dilation != NULL)
        YG_RETURN_IF_ERROR(dims_arg(op, "dilation", dilation, dilation_len, n, NULL, 1, 1, g->d));
    for (int i = 0; i < 3; i++)
        if (2 * g->p[i] > g->k[i])
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s: padding %s must be at most half of kernel_size",
                            op,
                            yg__format_sizes(g->p + 3 - n, n, buf, sizeof buf));
    bool empty = false;
    for (int i = 0; i < 3; i++) {
        g->out[i] = out_size(g->in[i], g->k[i], g->s[i], g->p[i], g->d[i], ceil_mode);
        empty = empty || g->out[i] < 1;
    }
    if (empty)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: input of %s is too small for the window (output would be %s)",
                        op,
                        dims_text(g->in, n, buf, sizeof buf),
                        dims_text(g->out, n, obuf, sizeof obuf));
    return YG_OK;
}

/* A new float64 tensor of the leading dims of sizes (ndim of them, the
 * last nsp replaced by the last nsp entries of sp[3]). */
static yg_status new_planes(const int64_t *sizes,
                            int64_t ndim,
                            int nsp,
                            const int64_t *sp,
                            bool zero,
                            yg_tensor **out) {
    int64_t s[YG_MAX_DIMS];
    for (int64_t d = 0; d < ndim - nsp; d++)
        s[d] = sizes[d];
    for (int i = 0; i < nsp; i++)
        s[ndim - nsp + i] = sp[3 - nsp + i];
    return zero ? yg_tensor_zeros(s, ndim, YG_FLOAT64, out)
                : yg_tensor_empty(s, ndim, YG_FLOAT64, out);
}

/* res (float64) converted to dtype into *out; res released. */
static yg_status finish(yg_tensor *res, yg_dtype dtype, yg_tensor **out) {
    yg_status st = yg__tensor_contiguous_as(res, dtype, true, out);
    yg_release(res);
    return st;
}

/* The product of a window or grid's three extents, checked (sizes.h):
 * 0 when one is 0, and 0 too when it overflows, which only an empty
 * tensor's grid can (the callers then have no element to walk). */
static int64_t vol(const int64_t v[3]) {
    int64_t n = yg__sizes_product(v, 3);
    return n < 0 ? 0 : n;
}

/* ---- the CUDA path ---- */

/* The geometry g as cuda/pool.h's struct. */
static yg__cuda_pool_geom cuda_geom(const pool_geom *g) {
    yg__cuda_pool_geom c;
    c.planes = g->planes;
    for (int i = 0; i < 3; i++) {
        c.in[i] = g->in[i];
        c.out[i] = g->out[i];
        c.k[i] = g->k[i];
        c.s[i] = g->s[i];
        c.p[i] = g->p[i];
        c.d[i] = g->d[i];
    }
    return c;
}

/* A new tensor for a CUDA kernel's result: sizes (ndim) with the last nsp
 * replaced by the last nsp of sp[3], of dtype, on src's GPU. */
static yg_status cuda_result(const char *op,
                             const yg_tensor *src,
                             const int64_t *sizes,
                             int64_t ndim,
                             int nsp,
                             const int64_t *sp,
                             yg_dtype dtype,
                             yg_tensor **out) {
    int64_t s[YG_MAX_DIMS];
    for (int64_t d = 0; d < ndim - nsp; d++)
        s[d] = sizes[d];
    for (int i = 0; i < nsp; i++)
        s[ndim - nsp + i] = sp[3 - nsp + i];
    return yg__tensor_new_on(op, s, ndim, dtype, YG_CUDA, src->storage->device_index, out);
}

/* Average pooling (adaptive or not, forward or backward) of the CUDA
 * tensor src into a new tensor of sizes (ndim) with the last nsp dims
 * those of g's output (forward) or input (backward). */
static yg_status cuda_avg_run(const char *op,
                              const yg_tensor *src,
                              const pool_geom *g,
                              bool adaptive,
                              bool backward,
                              bool count_include_pad,
                              int64_t divisor_override,
                              const int64_t *sizes,
                              int64_t ndim,
                              yg_tensor **out) {
    yg_tensor *x = NULL, *res = NULL;
    yg__cuda_pool_geom cg = cuda_geom(g);
    yg_status st = yg__tensor_contiguous_as(src, src->dtype, true, &x);
    if (st == YG_OK)
        st = cuda_result(op, src, sizes, ndim, g->nsp, backward ? g->in : g->out, src->dtype, &res);
    if (st == YG_OK)
        st = yg__cuda()->avg_pool(
            op, x, &cg, adaptive, backward, count_include_pad, divisor_override, res);
    yg_release(x);
    if (st != YG_OK) {
        yg_release(res);
        return st;
    }
    *out = res;
    return YG_OK;
}

/* upsample_nearest2d (backward: its gradient) of the CUDA tensor src
 * into a new tensor of sizes (ndim) with the last two dims g's output
 * (forward) or input (backward): on a float64 copy of src, rounded once
 * into src's dtype, as the CPU's loops. */
static yg_status cuda_nearest_run(const char *op,
                                  const yg_tensor *src,
                                  const pool_geom *g,
                                  bool backward,
                                  const int64_t *sizes,
                                  int64_t ndim,
                                  yg_tensor **out) {
    yg_tensor *x = NULL, *res = NULL;
    yg__cuda_pool_geom cg = cuda_geom(g);
    yg_status st = yg__tensor_contiguous_as(src, YG_FLOAT64, true, &x);
    if (st == YG_OK)
        st = cuda_result(op, src, sizes, ndim, 2, backward ? g->in : g->out, YG_FLOAT64, &res);
    if (st == YG_OK)
        st = yg__cuda()->upsample_nearest(op, x, &cg, backward, res);
    yg_release(x);
    if (st != YG_OK) {
        yg_release(res);
        return st;
    }
    return finish(res, src->dtype, out);
}

/* The error for window o[3] of g, which covers only padding. */
static yg_status padding_window_error(const char *op, const pool_geom *g, const int64_t o[3]) {
    char buf[80], ibuf[80];
    if (g->nsp == 3)
        snprintf(buf, sizeof buf, "(%" PRId64 ", %" PRId64 ", %" PRId64 ")", o[0], o[1], o[2]);
    else
        snprintf(buf, sizeof buf, "(%" PRId64 ", %" PRId64 ")", o[1], o[2]);
    return yg__fail(YG_ERR_SHAPE,
                    "%s: window %s covers only padding of the %s input",
                    op,
                    buf,
                    dims_text(g->in, g->nsp, ibuf, sizeof ibuf));
}

/* Whether some window of g covers only padding, and then the first one
 * in row-major order in o[3] (the one the CPU's scan stops at).  A
 * window is empty when it is empty along one dim; along a dim, window w
 * has a tap in [0, in) iff its first tap at or after 0 is below in.  The
 * first empty window is all zeros when some dim's window 0 is empty,
 * else the first empty window of the innermost dim that has one, at 0
 * along the others. */
static bool window_of_padding(const pool_geom *g, int64_t o[3]) {
    int64_t first[3] = {-1, -1, -1};
    o[0] = o[1] = o[2] = 0;
    if (g->planes == 0)
        return false;
    for (int i = 0; i < 3; i++)
        for (int64_t w = 0; w < g->out[i] && first[i] < 0; w++) {
            int64_t start = w * g->s[i] - g->p[i];
            int64_t t = start >= 0 ? 0 : (-start + g->d[i] - 1) / g->d[i];
            if (t >= g->k[i] || start + t * g->d[i] >= g->in[i])
                first[i] = w;
        }
    for (int i = 0; i < 3; i++)
        if (first[i] == 0)
            return true;
    for (int i = 2; i >= 0; i--)
        if (first[i] > 0) {
            o[i] = first[i];
            return true;
        }
    return false;
}

/* ---- max pooling ---- */

/* Position of the maximum of window o[3] in plane x, or -1 when the
 * window holds no input element. */
static int64_t window_argmax(const pool_geom *g, const double *x, const int64_t o[3]) {
    int64_t best = -1;
    for (int64_t kz = 0; kz < g->k[0]; kz++) {
        int64_t z = o[0] * g->s[0] - g->p[0] + kz * g->d[0];
        if (z < 0 || z >= g->in[0])
            continue;
        for (int64_t ky = 0; ky < g->k[1]; ky++) {
            int64_t y = o[1] * g->s[1] - g->p[1] + ky * g->d[1];
            if (y < 0 || y >= g->in[1])
                continue;
            for (int64_t kx = 0; kx < g->k[2]; kx++) {
                int64_t xx = o[2] * g->s[2] - g->p[2] + kx * g->d[2];
                if (xx < 0 || xx >= g->in[2])
                    continue;
                int64_t at = (z * g->in[1] + y) * g->in[2] + xx;
                if (best < 0 || (!isnan(x[best]) && (isnan(x[at]) || x[at] > x[best])))
                    best = at;
            }
        }
    }
    return best;
}

/* The maximum of each window of g (or, when adaptive, of each adaptive
 * cell) and its position, into new values (self's dtype) and int64
 * indices. */
static yg_status max_pool_run(const char *op,
                              const yg_tensor *self,
                              pool_geom *g,
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
    pool_geom g;
    *out_values = NULL;
    *out_indices = NULL;
    YG_RETURN_IF_ERROR(check_input(op, self->sizes, self->ndim, self->dtype, nsp, &g));
    YG_RETURN_IF_ERROR(window_geometry(op,
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

yg_status yg__kernel_max_pool2d_with_indices(const yg_tensor *self,
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

yg_status yg__kernel_max_pool3d_with_indices(const yg_tensor *self,
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
static int64_t
box_argmax(const pool_geom *g, const double *x, const int64_t lo[3], const int64_t hi[3]) {
    int64_t best = -1;
    for (int64_t z = lo[0]; z < hi[0]; z++)
        for (int64_t y = lo[1]; y < hi[1]; y++)
            for (int64_t xx = lo[2]; xx < hi[2]; xx++) {
                int64_t at = (z * g->in[1] + y) * g->in[2] + xx;
                if (best < 0 || (!isnan(x[best]) && (isnan(x[at]) || x[at] > x[best])))
                    best = at;
            }
    return best;
}

static yg_status max_pool_run(const char *op,
                              const yg_tensor *self,
                              pool_geom *g,
                              bool adaptive,
                              yg_tensor **out_values,
                              yg_tensor **out_indices) {
    int64_t isizes[YG_MAX_DIMS], o[3];
    yg_tensor *x = NULL, *res = NULL, *idx = NULL;
    yg_status st;
    int n = g->nsp;

    for (int64_t d = 0; d < self->ndim - n; d++)
        isizes[d] = self->sizes[d];
    for (int i = 0; i < n; i++)
        isizes[self->ndim - n + i] = g->out[3 - n + i];
    if (self->storage->device == YG_CUDA) {
        yg__cuda_pool_geom cg = cuda_geom(g);
        if (!adaptive && window_of_padding(g, o))
            return padding_window_error(op, g, o);
        st = yg__tensor_contiguous_as(self, self->dtype, true, &x);
        if (st == YG_OK)
            st = cuda_result(op, self, isizes, self->ndim, 0, g->out, self->dtype, &res);
        if (st == YG_OK)
            st = cuda_result(op, self, isizes, self->ndim, 0, g->out, YG_INT64, &idx);
        if (st == YG_OK)
            st = yg__cuda()->max_pool(op, x, &cg, adaptive, res, idx);
        if (st == YG_OK) {
            *out_values = res;
            *out_indices = idx;
            res = idx = NULL;
        }
        goto out;
    }
    st = yg__tensor_contiguous_as(self, YG_FLOAT64, true, &x);
    if (st == YG_OK)
        st = new_planes(self->sizes, self->ndim, n, g->out, false, &res);
    if (st == YG_OK)
        st = yg_tensor_empty(isizes, self->ndim, YG_INT64, &idx);
    if (st != YG_OK)
        goto out;
    const double *xv = (const double *)yg__tensor_ptr(x);
    double *rv = (double *)yg__tensor_ptr(res);
    int64_t *iv = (int64_t *)yg__tensor_ptr(idx);
    int64_t ivol = vol(g->in), ovol = vol(g->out);
    for (int64_t p = 0; p < g->planes; p++) {
        const double *plane = xv + p * ivol;
        for (int64_t at_out = 0; at_out < ovol; at_out++) {
            int64_t at;
            o[0] = at_out / (g->out[1] * g->out[2]);
            o[1] = at_out / g->out[2] % g->out[1];
            o[2] = at_out % g->out[2];
            if (adaptive) {
                int64_t lo[3], hi[3];
                for (int i = 0; i < 3; i++)
                    adaptive_cell(o[i], g->in[i], g->out[i], &lo[i], &hi[i]);
                at = box_argmax(g, plane, lo, hi);
            } else {
                at = window_argmax(g, plane, o);
            }
            if (at < 0) {
                /* only dilation over a tiny input (or an empty adaptive
                 * input) gets here: a window of padding alone has no
                 * maximum to send a gradient to */
                st = padding_window_error(op, g, o);
                goto out;
            }
            rv[p * ovol + at_out] = plane[at];
            iv[p * ovol + at_out] = at;
        }
    }
    st = finish(res, self->dtype, out_values);
    res = NULL;
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
static double avg_divisor(const pool_geom *g,
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
static void avg_window(const pool_geom *g,
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
    pool_geom g;
    yg_tensor *x = NULL, *res = NULL;
    char gbuf[128], obuf[80];
    yg_status st;
    bool backward = grad_output != NULL;
    const yg_tensor *src = backward ? grad_output : self;
    int64_t o[3];

    *out = NULL;
    if (backward)
        YG_RETURN_IF_ERROR(
            check_input(op, self_sizes, self_sizes_len, grad_output->dtype, nsp, &g));
    else
        YG_RETURN_IF_ERROR(check_input(op, self->sizes, self->ndim, self->dtype, nsp, &g));
    YG_RETURN_IF_ERROR(window_geometry(op,
                                       kernel_size,
                                       kernel_size_len,
                                       stride,
                                       stride_len,
                                       padding,
                                       padding_len,
                                       NULL,
                                       0,
                                       ceil_mode,
                                       &g));
    int64_t ivol = vol(g.in), ovol = vol(g.out);
    if (backward && yg_tensor_numel(grad_output) != g.planes * ovol)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: grad_output %s does not match the pooled output (%s per plane)",
                        op,
                        yg__format_sizes(grad_output->sizes, grad_output->ndim, gbuf, sizeof gbuf),
                        dims_text(g.out, nsp, obuf, sizeof obuf));
    if (src->storage->device == YG_CUDA)
        return cuda_avg_run(op,
                            src,
                            &g,
                            false,
                            backward,
                            count_include_pad,
                            divisor_override,
                            backward ? self_sizes : self->sizes,
                            backward ? self_sizes_len : self->ndim,
                            out);
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

yg_status yg__kernel_avg_pool2d(const yg_tensor *self,
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

yg_status yg__kernel_avg_pool2d_backward(const yg_tensor *grad_output,
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

yg_status yg__kernel_avg_pool3d(const yg_tensor *self,
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
                        divisor_override,
                        out);
}

yg_status yg__kernel_avg_pool3d_backward(const yg_tensor *grad_output,
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
                        divisor_override,
                        out);
}

/* ---- adaptive pooling and nearest upsampling ---- */

/* Whether g has the dims of sizes and the same sizes outside the last nsp. */
static bool leading_dims_match(const yg_tensor *g, const int64_t *sizes, int64_t ndim, int nsp) {
    if (g->ndim != ndim)
        return false;
    for (int64_t d = 0; d < ndim - nsp; d++)
        if (g->sizes[d] != sizes[d])
            return false;
    return true;
}

/* As PyTorch: an adaptive window over an empty spatial dim has no mean,
 * and walking the other dims' windows for nothing took hours for
 * [2, 922337200, 0, 1] (fuzz_ops). */
static yg_status
check_spatial_nonzero(const char *op, const int64_t *sizes, int64_t ndim, const pool_geom *g) {
    char buf[128];
    for (int i = 3 - g->nsp; i < 3; i++)
        if (g->in[i] == 0)
            return yg__fail(YG_ERR_SHAPE,
                            "%s: expected non-empty planes, got self %s",
                            op,
                            yg__format_sizes(sizes, ndim, buf, sizeof buf));
    return YG_OK;
}

/* The input geometry of self and output sizes from output_size (1 or nsp
 * positive entries). */
static yg_status adaptive_begin(const char *op,
                                int nsp,
                                const yg_tensor *self,
                                const int64_t *output_size,
                                int64_t output_size_len,
                                pool_geom *g) {
    YG_RETURN_IF_ERROR(check_input(op, self->sizes, self->ndim, self->dtype, nsp, g));
    YG_RETURN_IF_ERROR(check_spatial_nonzero(op, self->sizes, self->ndim, g));
    return dims_arg(op, "output_size", output_size, output_size_len, nsp, NULL, 1, 1, g->out);
}

static yg_status adaptive_avg_run(const char *op,
                                  int nsp,
                                  const yg_tensor *self,
                                  const int64_t *output_size,
                                  int64_t output_size_len,
                                  yg_tensor **out) {
    pool_geom g;
    yg_tensor *x = NULL, *res = NULL;
    int64_t lo[3], hi[3];
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(adaptive_begin(op, nsp, self, output_size, output_size_len, &g));
    if (self->storage->device == YG_CUDA)
        return cuda_avg_run(op, self, &g, true, false, false, 0, self->sizes, self->ndim, out);
    YG_RETURN_IF_ERROR(yg__tensor_contiguous_as(self, YG_FLOAT64, true, &x));
    st = new_planes(self->sizes, self->ndim, nsp, g.out, false, &res);
    if (st != YG_OK) {
        yg_release(x);
        return st;
    }
    const double *xv = (const double *)yg__tensor_ptr(x);
    double *rv = (double *)yg__tensor_ptr(res);
    int64_t ivol = vol(g.in), ovol = vol(g.out);
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

yg_status yg__kernel_adaptive_avg_pool2d(const yg_tensor *self,
                                         const int64_t *output_size,
                                         int64_t output_size_len,
                                         yg_tensor **out) {
    return adaptive_avg_run("adaptive_avg_pool2d", 2, self, output_size, output_size_len, out);
}

yg_status yg__kernel_adaptive_avg_pool3d(const yg_tensor *self,
                                         const int64_t *output_size,
                                         int64_t output_size_len,
                                         yg_tensor **out) {
    return adaptive_avg_run("adaptive_avg_pool3d", 3, self, output_size, output_size_len, out);
}

yg_status yg__kernel_adaptive_max_pool2d(const yg_tensor *self,
                                         const int64_t *output_size,
                                         int64_t output_size_len,
                                         yg_tensor **out_values,
                                         yg_tensor **out_indices) {
    const char *op = "adaptive_max_pool2d";
    pool_geom g;
    char buf[128];
    *out_values = NULL;
    *out_indices = NULL;
    YG_RETURN_IF_ERROR(adaptive_begin(op, 2, self, output_size, output_size_len, &g));
    /* an empty plane has no maximum to return or send a gradient to */
    if (g.in[1] == 0 || g.in[2] == 0)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected non-empty planes, got self %s",
                        op,
                        yg__format_sizes(self->sizes, self->ndim, buf, sizeof buf));
    return max_pool_run(op, self, &g, true, out_values, out_indices);
}

/* The common start of the backward kernels that map grad_output back to
 * planes of self_sizes: checks, a float64 copy of grad_output, and a zeroed
 * float64 result (neither when go is NULL); g->out gets grad_output's
 * last nsp sizes. */
static yg_status backward_begin(const char *op,
                                int nsp,
                                const yg_tensor *grad_output,
                                const int64_t *self_sizes,
                                int64_t self_sizes_len,
                                pool_geom *g,
                                yg_tensor **go,
                                yg_tensor **res) {
    char gbuf[128], sbuf[128];
    yg_status st;

    YG_RETURN_IF_ERROR(check_input(op, self_sizes, self_sizes_len, grad_output->dtype, nsp, g));
    YG_RETURN_IF_ERROR(check_spatial_nonzero(op, self_sizes, self_sizes_len, g));
    if (!leading_dims_match(grad_output, self_sizes, self_sizes_len, nsp))
        return yg__fail(YG_ERR_SHAPE,
                        "%s: grad_output %s does not match the leading dims of self_sizes %s",
                        op,
                        yg__format_sizes(grad_output->sizes, grad_output->ndim, gbuf, sizeof gbuf),
                        yg__format_sizes(self_sizes, self_sizes_len, sbuf, sizeof sbuf));
    g->out[0] = 1;
    for (int i = 0; i < nsp; i++)
        g->out[3 - nsp + i] = grad_output->sizes[self_sizes_len - nsp + i];
    if (go == NULL)
        return YG_OK; /* the checks and g only: the CUDA path */
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
    pool_geom g;
    yg_tensor *go = NULL, *res = NULL;
    int64_t lo[3], hi[3];

    *out = NULL;
    if (grad_output->storage->device == YG_CUDA) {
        YG_RETURN_IF_ERROR(
            backward_begin(op, nsp, grad_output, self_sizes, self_sizes_len, &g, NULL, NULL));
        return cuda_avg_run(
            op, grad_output, &g, true, true, false, 0, self_sizes, self_sizes_len, out);
    }
    YG_RETURN_IF_ERROR(
        backward_begin(op, nsp, grad_output, self_sizes, self_sizes_len, &g, &go, &res));
    const double *gv = (const double *)yg__tensor_ptr(go);
    double *rv = (double *)yg__tensor_ptr(res);
    int64_t ivol = vol(g.in), ovol = vol(g.out);
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

yg_status yg__kernel_adaptive_avg_pool2d_backward(const yg_tensor *grad_output,
                                                  const int64_t *self_sizes,
                                                  int64_t self_sizes_len,
                                                  yg_tensor **out) {
    return adaptive_avg_backward_run(
        "adaptive_avg_pool2d_backward", 2, grad_output, self_sizes, self_sizes_len, out);
}

yg_status yg__kernel_adaptive_avg_pool3d_backward(const yg_tensor *grad_output,
                                                  const int64_t *self_sizes,
                                                  int64_t self_sizes_len,
                                                  yg_tensor **out) {
    return adaptive_avg_backward_run(
        "adaptive_avg_pool3d_backward", 3, grad_output, self_sizes, self_sizes_len, out);
}

yg_status yg__kernel_upsample_nearest2d(const yg_tensor *self,
                                        const int64_t *output_size,
                                        int64_t output_size_len,
                                        yg_tensor **out) {
    const char *op = "upsample_nearest2d";
    pool_geom g;
    yg_tensor *x = NULL, *res = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(adaptive_begin(op, 2, self, output_size, output_size_len, &g));
    if (self->storage->device == YG_CUDA)
        return cuda_nearest_run(op, self, &g, false, self->sizes, self->ndim, out);
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

yg_status yg__kernel_upsample_nearest2d_backward(const yg_tensor *grad_output,
                                                 const int64_t *self_sizes,
                                                 int64_t self_sizes_len,
                                                 yg_tensor **out) {
    const char *op = "upsample_nearest2d_backward";
    pool_geom g;
    yg_tensor *go = NULL, *res = NULL;

    *out = NULL;
    if (grad_output->storage->device == YG_CUDA) {
        YG_RETURN_IF_ERROR(
            backward_begin(op, 2, grad_output, self_sizes, self_sizes_len, &g, NULL, NULL));
        return cuda_nearest_run(op, grad_output, &g, true, self_sizes, self_sizes_len, out);
    }
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
