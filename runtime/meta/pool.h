/*
 * meta/pool.h - what both devices' pooling and nearest-upsampling kernels
 * share (cpu/pool.c, cuda/pool.c): the window geometry of one call, made
 * from the op's arguments after checking them, and the sizes of its
 * result.  Not public API.
 *
 * Each kernel views its input as planes: [planes, D, H, W] with planes =
 * N C, and D = 1 for the 2-d ops, so one geometry serves both and the 1-d
 * composites reach it through [..., 1, L].  The output size along a dim
 * follows PyTorch: (in + 2 pad - dilation (k - 1) - 1) / stride + 1,
 * rounded down, or up with ceil_mode as long as the last window starts
 * inside the input or its left padding.
 *
 * Every function checks with the kernel's own messages, naming op, so the
 * two devices refuse the same calls with the same words; g is filled on
 * success and unspecified on failure.
 */
#ifndef YAGRAD_META_POOL_H
#define YAGRAD_META_POOL_H

#include "core/core.h"

/* Pooling geometry of one call; index 0 is depth (1 for 2-d ops), 1
 * height, 2 width. */
typedef struct yg_pool_geom {
    int nsp; /* the spatial dims the op pools: 2 or 3 */
    int64_t planes;
    int64_t in[3], out[3];
    int64_t k[3], s[3], p[3], d[3];
} yg_pool_geom;

/* The product of a window or grid's three extents, checked (sizes.h):
 * 0 when one is 0, and 0 too when it overflows, which only an empty
 * tensor's grid can (the callers then have no element to walk). */
static inline int64_t yg__pool_vol(const int64_t v[3]) {
    int64_t n = yg__sizes_product(v, 3);
    return n < 0 ? 0 : n;
}

/* max_pool2d/3d_with_indices (nsp 2 or 3): checks self (floating, of nsp
 * + 1 or nsp + 2 dims) and the window arguments (1 or nsp entries each;
 * stride [] means kernel_size; padding at most half the window; a window
 * that fits the padded input) and fills g. */
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
                                yg_pool_geom *g);

/* avg_pool2d/3d (grad_output NULL: checks self) or their gradient
 * (self NULL: checks self_sizes, grad_output's dtype, and that
 * grad_output has the pooled output's element count, "<op>: grad_output
 * [..] does not match the pooled output (a x b per plane)"), with the
 * window arguments as yg__pool_max_geometry (dilation 1); fills g. */
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
                                yg_pool_geom *g);

/* adaptive_avg_pool2d/3d, adaptive_max_pool2d and upsample_nearest2d:
 * checks self as yg__pool_max_geometry does, refuses an empty plane
 * ("<op>: expected non-empty planes, got self [..]"), and takes g->out
 * from output_size (1 or nsp entries, each at least 1). */
yg_status yg__pool_adaptive_geometry(const char *op,
                                     int nsp,
                                     const yg_tensor *self,
                                     const int64_t *output_size,
                                     int64_t output_size_len,
                                     yg_pool_geom *g);

/* The gradients of those (adaptive average pooling, nearest upsampling):
 * checks self_sizes as yg__pool_adaptive_geometry checks self (with
 * grad_output's dtype), and that grad_output has the leading dims of
 * self_sizes; g->out gets grad_output's last nsp sizes. */
yg_status yg__pool_backward_geometry(const char *op,
                                     int nsp,
                                     const yg_tensor *grad_output,
                                     const int64_t *self_sizes,
                                     int64_t self_sizes_len,
                                     yg_pool_geom *g);

/* The error for max pooling's window o[3] of g, which covers only
 * padding (YG_ERR_SHAPE "<op>: window (1, 2) covers only padding of the
 * 2 x 2 input"): it has no maximum to send a gradient to. */
/* avg_pool3d's divisor_override (nullable: None) as the kernels take it:
 * *out = the given divisor, or 0 for None.  A given 0 fails with
 * YG_ERR_INVALID_ARGUMENT "<op>: divisor_override must not be 0". */
yg_status yg__pool_divisor(const char *op, const int64_t *divisor_override, int64_t *out);

yg_status yg__pool_padding_window_error(const char *op, const yg_pool_geom *g, const int64_t o[3]);

/* s (ndim entries) = sizes with the last nsp replaced by the last nsp
 * entries of sp[3]: a result's sizes from its input's and g's out (or,
 * for a gradient, self_sizes and g's in). */
void yg__pool_result_sizes(const int64_t *sizes,
                           int64_t ndim,
                           int nsp,
                           const int64_t *sp,
                           int64_t *s);

#endif /* YAGRAD_META_POOL_H */
