/*
 * pool.c - 2-D pooling and resampling over the last two dims of [N, C, H,
 * W] (or [C, H, W]) inputs: max_pool2d_with_indices, avg_pool2d,
 * adaptive_avg_pool2d, upsample_nearest2d, and their gradients.
 *
 * Every kernel views its input as planes: a contiguous float64 copy of
 * [planes, H, W] (planes = N C), computes each output plane from its input
 * plane in double, and converts the result to the input's dtype once.
 * Window geometry follows PyTorch: the output size along a dim is
 * (in + 2 pad - dilation (k - 1) - 1) / stride + 1, rounded down, or up
 * with ceil_mode as long as the last window starts inside the input or its
 * left padding.  Padding is implicit: a max window skips padded positions
 * (as if they were -inf) and an average counts them as zeros when
 * count_include_pad, or divides only by the in-bounds count otherwise.
 *
 * max_pool2d_with_indices returns each window's maximum (the first one on
 * ties, NaN counting as the maximum) and its position h W + w in the
 * input plane, as PyTorch does; max_pool2d and the 1-d ops are composites
 * over it, and its gradient sends grad_output to those positions
 * (composite/pool.c), so this file holds the one max-pooling kernel.  The
 * resampling gradients add each output gradient into the input positions
 * it read from.
 */
#include "cpu/cpu_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Pooling geometry of one call. */
typedef struct pool2d {
    int64_t planes, ih, iw, oh, ow;
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
} pool2d;

/* Reads an int[] of 1 or 2 entries (one means both dims) into v[2], or
 * def[2] when empty and def is given. */
static yg_status pair_arg(const char *op,
                          const char *name,
                          const int64_t *x,
                          int64_t len,
                          const int64_t *def,
                          int64_t min,
                          int64_t v[2]) {
    char buf[128];
    if (len == 0 && def != NULL) {
        v[0] = def[0];
        v[1] = def[1];
        return YG_OK;
    }
    if (len < 1 || len > 2 || x == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %s must have 1 or 2 entries, got %s",
                        op,
                        name,
                        yg__format_sizes(x, x == NULL ? 0 : len, buf, sizeof buf));
    v[0] = x[0];
    v[1] = len == 2 ? x[1] : x[0];
    if (v[0] < min || v[1] < min)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %s must be at least %" PRId64 ", got %s",
                        op,
                        name,
                        min,
                        yg__format_sizes(x, len, buf, sizeof buf));
    return YG_OK;
}

/* Checks self is a floating [N, C, H, W] or [C, H, W] tensor (or its
 * sizes, when sizes is given instead) and fills planes, ih, iw. */
static yg_status
check_input(const char *op, const int64_t *sizes, int64_t ndim, yg_dtype dtype, pool2d *g) {
    char buf[128];
    if (ndim != 3 && ndim != 4)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected self of 3 or 4 dims ([C, H, W] or [N, C, H, W]), got %s",
                        op,
                        yg__format_sizes(sizes, ndim, buf, sizeof buf));
    if (!yg__dtype_is_floating(dtype))
        return yg__fail(YG_ERR_DTYPE,
                        "%s: unsupported dtype %s for self (supported: float32, float64)",
                        op,
                        yg_dtype_name(dtype));
    g->planes = sizes[0] * (ndim == 4 ? sizes[1] : 1);
    g->ih = sizes[ndim - 2];
    g->iw = sizes[ndim - 1];
    return YG_OK;
}

static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
    int64_t span = in + 2 * p - d * (k - 1) - 1;
    if (span < 0)
        return 0;
    int64_t n = (ceil_mode ? span + s - 1 : span) / s + 1;
    /* with ceil_mode the last window must start inside input or left pad */
    if (ceil_mode && (n - 1) * s >= in + p)
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
                                 pool2d *g) {
    int64_t k[2], s[2], p[2], d[2] = {1, 1};
    char sbuf[160];
    YG_RETURN_IF_ERROR(pair_arg(op, "kernel_size", kernel_size, kernel_size_len, NULL, 1, k));
    YG_RETURN_IF_ERROR(pair_arg(op, "stride", stride, stride_len, k, 1, s));
    YG_RETURN_IF_ERROR(pair_arg(op, "padding", padding, padding_len, NULL, 0, p));
    if (dilation != NULL)
        YG_RETURN_IF_ERROR(pair_arg(op, "dilation", dilation, dilation_len, NULL, 1, d));
    if (2 * p[0] > k[0] || 2 * p[1] > k[1])
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: padding %s must be at most half of kernel_size",
                        op,
                        yg__format_sizes(p, 2, sbuf, sizeof sbuf));
    g->kh = k[0];
    g->kw = k[1];
    g->sh = s[0];
    g->sw = s[1];
    g->ph = p[0];
    g->pw = p[1];
    g->dh = d[0];
    g->dw = d[1];
    g->oh = out_size(g->ih, k[0], s[0], p[0], d[0], ceil_mode);
    g->ow = out_size(g->iw, k[1], s[1], p[1], d[1], ceil_mode);
    if (g->oh < 1 || g->ow < 1)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: input of %" PRId64 " x %" PRId64 " is too small for the window "
                        "(output would be %" PRId64 " x %" PRId64 ")",
                        op,
                        g->ih,
                        g->iw,
                        g->oh,
                        g->ow);
    return YG_OK;
}

/* A new tensor of self's leading dims and [oh, ow], dtype float64. */
static yg_status
new_planes(const int64_t *sizes, int64_t ndim, int64_t oh, int64_t ow, bool zero, yg_tensor **out) {
    int64_t s[4];
    for (int64_t d = 0; d < ndim - 2; d++)
        s[d] = sizes[d];
    s[ndim - 2] = oh;
    s[ndim - 1] = ow;
    return zero ? yg_tensor_zeros(s, ndim, YG_FLOAT64, out)
                : yg_tensor_empty(s, ndim, YG_FLOAT64, out);
}

/* res (float64) converted to dtype into *out; res released. */
static yg_status finish(yg_tensor *res, yg_dtype dtype, yg_tensor **out) {
    yg_status st = yg__tensor_contiguous_as(res, dtype, true, out);
    yg_release(res);
    return st;
}

/* Position of the maximum of window (oy, ox) in plane x, or -1 when the
 * window holds no input element. */
static int64_t window_argmax(const pool2d *g, const double *x, int64_t oy, int64_t ox) {
    int64_t best = -1;
    for (int64_t ky = 0; ky < g->kh; ky++) {
        int64_t y = oy * g->sh - g->ph + ky * g->dh;
        if (y < 0 || y >= g->ih)
            continue;
        for (int64_t kx = 0; kx < g->kw; kx++) {
            int64_t xx = ox * g->sw - g->pw + kx * g->dw;
            if (xx < 0 || xx >= g->iw)
                continue;
            int64_t at = y * g->iw + xx;
            if (best < 0 || (!isnan(x[best]) && (isnan(x[at]) || x[at] > x[best])))
                best = at;
        }
    }
    return best;
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
    const char *op = "max_pool2d_with_indices";
    pool2d g;
    int64_t isizes[4];
    yg_tensor *x = NULL, *res = NULL, *idx = NULL;
    yg_status st;

    *out_values = NULL;
    *out_indices = NULL;
    YG_RETURN_IF_ERROR(check_input(op, self->sizes, self->ndim, self->dtype, &g));
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
    for (int64_t d = 0; d < self->ndim - 2; d++)
        isizes[d] = self->sizes[d];
    isizes[self->ndim - 2] = g.oh;
    isizes[self->ndim - 1] = g.ow;
    st = yg__tensor_contiguous_as(self, YG_FLOAT64, true, &x);
    if (st == YG_OK)
        st = new_planes(self->sizes, self->ndim, g.oh, g.ow, false, &res);
    if (st == YG_OK)
        st = yg_tensor_empty(isizes, self->ndim, YG_INT64, &idx);
    if (st != YG_OK)
        goto out;
    const double *xv = (const double *)yg__tensor_ptr(x);
    double *rv = (double *)yg__tensor_ptr(res);
    int64_t *iv = (int64_t *)yg__tensor_ptr(idx);
    for (int64_t p = 0; p < g.planes; p++) {
        const double *plane = xv + p * g.ih * g.iw;
        for (int64_t oy = 0; oy < g.oh; oy++)
            for (int64_t ox = 0; ox < g.ow; ox++) {
                int64_t at = window_argmax(&g, plane, oy, ox);
                if (at < 0) {
                    /* only dilation over a tiny input gets here: a window
                     * of padding alone has no maximum to send a gradient to */
                    st = yg__fail(YG_ERR_SHAPE,
                                  "%s: window (%" PRId64 ", %" PRId64 ") covers only padding "
                                  "of the %" PRId64 " x %" PRId64 " input",
                                  op,
                                  oy,
                                  ox,
                                  g.ih,
                                  g.iw);
                    goto out;
                }
                rv[(p * g.oh + oy) * g.ow + ox] = plane[at];
                iv[(p * g.oh + oy) * g.ow + ox] = at;
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

/* The divisor of window (oy, ox) for average pooling. */
static double avg_divisor(const pool2d *g, int64_t oy, int64_t ox, bool count_include_pad) {
    int64_t y0 = oy * g->sh - g->ph, x0 = ox * g->sw - g->pw;
    int64_t y1 = y0 + g->kh, x1 = x0 + g->kw;
    /* the window clipped to input + padding (ceil_mode can overhang) */
    int64_t py1 = y1 < g->ih + g->ph ? y1 : g->ih + g->ph,
            px1 = x1 < g->iw + g->pw ? x1 : g->iw + g->pw;
    if (count_include_pad)
        return (double)((py1 - y0) * (px1 - x0));
    int64_t cy0 = y0 > 0 ? y0 : 0, cx0 = x0 > 0 ? x0 : 0;
    int64_t cy1 = y1 < g->ih ? y1 : g->ih, cx1 = x1 < g->iw ? x1 : g->iw;
    return (double)((cy1 - cy0) * (cx1 - cx0));
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
    pool2d g;
    yg_tensor *x = NULL, *res = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(check_input("avg_pool2d", self->sizes, self->ndim, self->dtype, &g));
    YG_RETURN_IF_ERROR(window_geometry("avg_pool2d",
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
    YG_RETURN_IF_ERROR(yg__tensor_contiguous_as(self, YG_FLOAT64, true, &x));
    st = new_planes(self->sizes, self->ndim, g.oh, g.ow, false, &res);
    if (st != YG_OK) {
        yg_release(x);
        return st;
    }
    const double *xv = (const double *)yg__tensor_ptr(x);
    double *rv = (double *)yg__tensor_ptr(res);
    for (int64_t p = 0; p < g.planes; p++)
        for (int64_t oy = 0; oy < g.oh; oy++)
            for (int64_t ox = 0; ox < g.ow; ox++) {
                double acc = 0;
                for (int64_t ky = 0; ky < g.kh; ky++) {
                    int64_t y = oy * g.sh - g.ph + ky;
                    for (int64_t kx = 0; kx < g.kw && y >= 0 && y < g.ih; kx++) {
                        int64_t xx = ox * g.sw - g.pw + kx;
                        if (xx >= 0 && xx < g.iw)
                            acc += xv[(p * g.ih + y) * g.iw + xx];
                    }
                }
                rv[(p * g.oh + oy) * g.ow + ox] = acc / avg_divisor(&g, oy, ox, count_include_pad);
            }
    yg_release(x);
    return finish(res, self->dtype, out);
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
    pool2d g;
    yg_tensor *go = NULL, *res = NULL;
    char gbuf[128];
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(
        check_input("avg_pool2d_backward", self_sizes, self_sizes_len, grad_output->dtype, &g));
    YG_RETURN_IF_ERROR(window_geometry("avg_pool2d_backward",
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
    if (yg_tensor_numel(grad_output) != g.planes * g.oh * g.ow)
        return yg__fail(YG_ERR_SHAPE,
                        "avg_pool2d_backward: grad_output %s does not match the pooled output "
                        "(%" PRId64 " x %" PRId64 " per plane)",
                        yg__format_sizes(grad_output->sizes, grad_output->ndim, gbuf, sizeof gbuf),
                        g.oh,
                        g.ow);
    st = yg__tensor_contiguous_as(grad_output, YG_FLOAT64, true, &go);
    if (st == YG_OK)
        st = new_planes(self_sizes, self_sizes_len, g.ih, g.iw, true, &res);
    if (st != YG_OK) {
        yg_release(go);
        return st;
    }
    const double *gv = (const double *)yg__tensor_ptr(go);
    double *rv = (double *)yg__tensor_ptr(res);
    for (int64_t p = 0; p < g.planes; p++)
        for (int64_t oy = 0; oy < g.oh; oy++)
            for (int64_t ox = 0; ox < g.ow; ox++) {
                double share =
                    gv[(p * g.oh + oy) * g.ow + ox] / avg_divisor(&g, oy, ox, count_include_pad);
                for (int64_t ky = 0; ky < g.kh; ky++) {
                    int64_t y = oy * g.sh - g.ph + ky;
                    for (int64_t kx = 0; kx < g.kw && y >= 0 && y < g.ih; kx++) {
                        int64_t xx = ox * g.sw - g.pw + kx;
                        if (xx >= 0 && xx < g.iw)
                            rv[(p * g.ih + y) * g.iw + xx] += share;
                    }
                }
            }
    yg_release(go);
    return finish(res, grad_output->dtype, out);
}

/* ---- adaptive average pooling and nearest upsampling ---- */

/* Whether g has the dims of sizes and the same sizes outside the last two. */
static bool leading_dims_match(const yg_tensor *g, const int64_t *sizes, int64_t ndim) {
    if (g->ndim != ndim)
        return false;
    for (int64_t d = 0; d < ndim - 2; d++)
        if (g->sizes[d] != sizes[d])
            return false;
    return true;
}

/* Output sizes [oh, ow] from an int[] of 1 or 2 positive entries. */
static yg_status
output_pair(const char *op, const int64_t *output_size, int64_t len, int64_t v[2]) {
    return pair_arg(op, "output_size", output_size, len, NULL, 1, v);
}

yg_status yg__cpu_adaptive_avg_pool2d(const yg_tensor *self,
                                      const int64_t *output_size,
                                      int64_t output_size_len,
                                      yg_tensor **out) {
    pool2d g;
    int64_t o[2];
    yg_tensor *x = NULL, *res = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(
        check_input("adaptive_avg_pool2d", self->sizes, self->ndim, self->dtype, &g));
    YG_RETURN_IF_ERROR(output_pair("adaptive_avg_pool2d", output_size, output_size_len, o));
    YG_RETURN_IF_ERROR(yg__tensor_contiguous_as(self, YG_FLOAT64, true, &x));
    st = new_planes(self->sizes, self->ndim, o[0], o[1], false, &res);
    if (st != YG_OK) {
        yg_release(x);
        return st;
    }
    const double *xv = (const double *)yg__tensor_ptr(x);
    double *rv = (double *)yg__tensor_ptr(res);
    for (int64_t p = 0; p < g.planes; p++)
        for (int64_t oy = 0; oy < o[0]; oy++) {
            /* rows [floor(oy H / oh), ceil((oy + 1) H / oh)) */
            int64_t y0 = oy * g.ih / o[0], y1 = ((oy + 1) * g.ih + o[0] - 1) / o[0];
            for (int64_t ox = 0; ox < o[1]; ox++) {
                int64_t x0 = ox * g.iw / o[1], x1 = ((ox + 1) * g.iw + o[1] - 1) / o[1];
                double acc = 0;
                for (int64_t y = y0; y < y1; y++)
                    for (int64_t xx = x0; xx < x1; xx++)
                        acc += xv[(p * g.ih + y) * g.iw + xx];
                int64_t count = (y1 - y0) * (x1 - x0);
                rv[(p * o[0] + oy) * o[1] + ox] = count > 0 ? acc / (double)count : NAN;
            }
        }
    yg_release(x);
    return finish(res, self->dtype, out);
}

/* The common start of the backward kernels that map grad_output back to
 * planes of self_sizes: checks, a float64 copy of grad_output, and a zeroed
 * float64 result. */
static yg_status backward_begin(const char *op,
                                const yg_tensor *grad_output,
                                const int64_t *self_sizes,
                                int64_t self_sizes_len,
                                pool2d *g,
                                int64_t *oh,
                                int64_t *ow,
                                yg_tensor **go,
                                yg_tensor **res) {
    char gbuf[128], sbuf[128];
    yg_status st;

    YG_RETURN_IF_ERROR(check_input(op, self_sizes, self_sizes_len, grad_output->dtype, g));
    if (!leading_dims_match(grad_output, self_sizes, self_sizes_len))
        return yg__fail(YG_ERR_SHAPE,
                        "%s: grad_output %s does not match the leading dims of self_sizes %s", op,
                        yg__format_sizes(grad_output->sizes, grad_output->ndim, gbuf, sizeof gbuf),
                        yg__format_sizes(self_sizes, self_sizes_len, sbuf, sizeof sbuf));
    *oh = grad_output->sizes[self_sizes_len - 2];
    *ow = grad_output->sizes[self_sizes_len - 1];
    st = yg__tensor_contiguous_as(grad_output, YG_FLOAT64, true, go);
    if (st == YG_OK)
        st = new_planes(self_sizes, self_sizes_len, g->ih, g->iw, true, res);
    if (st != YG_OK) {
        yg_release(*go);
        *go = NULL;
    }
    return st;
}

yg_status yg__cpu_adaptive_avg_pool2d_backward(const yg_tensor *grad_output,
                                               const int64_t *self_sizes,
                                               int64_t self_sizes_len,
                                               yg_tensor **out) {
    pool2d g;
    yg_tensor *go = NULL, *res = NULL;
    int64_t oh, ow;

    *out = NULL;
    YG_RETURN_IF_ERROR(backward_begin("adaptive_avg_pool2d_backward", grad_output, self_sizes, self_sizes_len, &g, &oh,
                                      &ow, &go, &res));
    const double *gv = (const double *)yg__tensor_ptr(go);
    double *rv = (double *)yg__tensor_ptr(res);
    for (int64_t p = 0; p < g.planes; p++)
        for (int64_t oy = 0; oy < oh; oy++) {
            int64_t y0 = oy * g.ih / oh, y1 = ((oy + 1) * g.ih + oh - 1) / oh;
            for (int64_t ox = 0; ox < ow; ox++) {
                int64_t x0 = ox * g.iw / ow, x1 = ((ox + 1) * g.iw + ow - 1) / ow;
                double share = gv[(p * oh + oy) * ow + ox] / (double)((y1 - y0) * (x1 - x0));
                for (int64_t y = y0; y < y1; y++)
                    for (int64_t xx = x0; xx < x1; xx++)
                        rv[(p * g.ih + y) * g.iw + xx] += share;
            }
        }
    yg_release(go);
    return finish(res, grad_output->dtype, out);
}

yg_status yg__cpu_upsample_nearest2d(const yg_tensor *self,
                                     const int64_t *output_size,
                                     int64_t output_size_len,
                                     yg_tensor **out) {
    pool2d g;
    int64_t o[2];
    yg_tensor *x = NULL, *res = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(check_input("upsample_nearest2d", self->sizes, self->ndim, self->dtype, &g));
    YG_RETURN_IF_ERROR(output_pair("upsample_nearest2d", output_size, output_size_len, o));
    YG_RETURN_IF_ERROR(yg__tensor_contiguous_as(self, YG_FLOAT64, true, &x));
    st = new_planes(self->sizes, self->ndim, o[0], o[1], false, &res);
    if (st != YG_OK) {
        yg_release(x);
        return st;
    }
    const double *xv = (const double *)yg__tensor_ptr(x);
    double *rv = (double *)yg__tensor_ptr(res);
    for (int64_t p = 0; p < g.planes; p++)
        for (int64_t oy = 0; oy < o[0]; oy++)
            for (int64_t ox = 0; ox < o[1]; ox++) {
                /* source index floor(dst in / out), PyTorch's "nearest" */
                int64_t y = oy * g.ih / o[0], xx = ox * g.iw / o[1];
                rv[(p * o[0] + oy) * o[1] + ox] =
                    g.ih > 0 && g.iw > 0 ? xv[(p * g.ih + y) * g.iw + xx] : 0;
            }
    yg_release(x);
    return finish(res, self->dtype, out);
}

yg_status yg__cpu_upsample_nearest2d_backward(const yg_tensor *grad_output,
                                              const int64_t *self_sizes,
                                              int64_t self_sizes_len,
                                              yg_tensor **out) {
    pool2d g;
    yg_tensor *go = NULL, *res = NULL;
    int64_t oh, ow;

    *out = NULL;
    YG_RETURN_IF_ERROR(backward_begin("upsample_nearest2d_backward", grad_output, self_sizes, self_sizes_len, &g, &oh,
                                      &ow, &go, &res));
    const double *gv = (const double *)yg__tensor_ptr(go);
    double *rv = (double *)yg__tensor_ptr(res);
    for (int64_t p = 0; p < g.planes && g.ih > 0 && g.iw > 0; p++)
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
                int64_t y = oy * g.ih / oh, xx = ox * g.iw / ow;
                rv[(p * g.ih + y) * g.iw + xx] += gv[(p * oh + oy) * ow + ox];
            }
    yg_release(go);
    return finish(res, grad_output->dtype, out);
}
