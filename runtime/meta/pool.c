/*
 * meta/pool.c - the pooling geometry of meta/pool.h: the checks of self
 * (or self_sizes), the window arguments, output_size and grad_output
 * that cpu/pool.c and cuda/pool.c share, with their messages, and the
 * output sizes the windows give.
 */
#include "meta/pool.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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
                             yg_pool_geom *g) {
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
                                 yg_pool_geom *g) {
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

yg_status yg__pool_max_geometry(const char *op,
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
                                yg_pool_geom *g) {
    YG_RETURN_IF_ERROR(check_input(op, self->sizes, self->ndim, self->dtype, nsp, g));
    return window_geometry(op,
                           kernel_size,
                           kernel_size_len,
                           stride,
                           stride_len,
                           padding,
                           padding_len,
                           dilation,
                           dilation_len,
                           ceil_mode,
                           g);
}

yg_status yg__pool_avg_geometry(const char *op,
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
                                yg_pool_geom *g) {
    char gbuf[128], obuf[80];
    bool backward = grad_output != NULL;

    if (backward)
        YG_RETURN_IF_ERROR(check_input(op, self_sizes, self_sizes_len, grad_output->dtype, nsp, g));
    else
        YG_RETURN_IF_ERROR(check_input(op, self->sizes, self->ndim, self->dtype, nsp, g));
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
                                       g));
    if (backward && yg_tensor_numel(grad_output) != g->planes * yg__pool_vol(g->out))
        return yg__fail(YG_ERR_SHAPE,
                        "%s: grad_output %s does not match the pooled output (%s per plane)",
                        op,
                        yg__format_sizes(grad_output->sizes, grad_output->ndim, gbuf, sizeof gbuf),
                        dims_text(g->out, nsp, obuf, sizeof obuf));
    return YG_OK;
}

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
check_spatial_nonzero(const char *op, const int64_t *sizes, int64_t ndim, const yg_pool_geom *g) {
    char buf[128];
    for (int i = 3 - g->nsp; i < 3; i++)
        if (g->in[i] == 0)
            return yg__fail(YG_ERR_SHAPE,
                            "%s: expected non-empty planes, got self %s",
                            op,
                            yg__format_sizes(sizes, ndim, buf, sizeof buf));
    return YG_OK;
}

yg_status yg__pool_adaptive_geometry(const char *op,
                                     int nsp,
                                     const yg_tensor *self,
                                     const int64_t *output_size,
                                     int64_t output_size_len,
                                     yg_pool_geom *g) {
    YG_RETURN_IF_ERROR(check_input(op, self->sizes, self->ndim, self->dtype, nsp, g));
    YG_RETURN_IF_ERROR(check_spatial_nonzero(op, self->sizes, self->ndim, g));
    return dims_arg(op, "output_size", output_size, output_size_len, nsp, NULL, 1, 1, g->out);
}

yg_status yg__pool_backward_geometry(const char *op,
                                     int nsp,
                                     const yg_tensor *grad_output,
                                     const int64_t *self_sizes,
                                     int64_t self_sizes_len,
                                     yg_pool_geom *g) {
    char gbuf[128], sbuf[128];

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
    return YG_OK;
}

yg_status yg__pool_padding_window_error(const char *op, const yg_pool_geom *g, const int64_t o[3]) {
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

void yg__pool_result_sizes(const int64_t *sizes,
                           int64_t ndim,
                           int nsp,
                           const int64_t *sp,
                           int64_t *s) {
    for (int64_t d = 0; d < ndim - nsp; d++)
        s[d] = sizes[d];
    for (int i = 0; i < nsp; i++)
        s[ndim - nsp + i] = sp[3 - nsp + i];
}

yg_status yg__pool_divisor(const char *op, const int64_t *divisor_override, int64_t *out) {
    *out = divisor_override != NULL ? *divisor_override : 0;
    if (divisor_override != NULL && *divisor_override == 0)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: divisor_override must not be 0", op);
    return YG_OK;
}
