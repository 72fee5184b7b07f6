/*
 * composite/pool.c - max pooling written over the one max-pooling kernel,
 * max_pool2d_with_indices (cpu/pool.c): max_pool2d (its values),
 * max_pool1d_with_indices and max_pool1d (2-d pooling of [..., 1, L]),
 * and max_pool2d_with_indices_backward, the gradient through the indices.
 *
 * The gradient flattens each plane ([..., H, W] -> [..., H W]) and adds
 * grad_output at the indices with gather_backward; gather_backward's own
 * derivative is gather, so max pooling differentiates to any order (the
 * second derivative picks the gradient's values back at the indices).
 *
 * As for every composite, messages of our own checks carry no op name (the
 * generated wrapper prefixes it).
 */
#include "composite/composite.h"
#include "yagrad/ops.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

yg_status yg__composite_max_pool2d(const yg_tensor *self,
                                   const int64_t *kernel_size,
                                   int64_t kernel_size_len,
                                   const int64_t *stride,
                                   int64_t stride_len,
                                   const int64_t *padding,
                                   int64_t padding_len,
                                   const int64_t *dilation,
                                   int64_t dilation_len,
                                   bool ceil_mode,
                                   yg_tensor **out) {
    yg_tensor *indices = NULL;
    yg_status st = yg_max_pool2d_with_indices(self,
                                              kernel_size,
                                              kernel_size_len,
                                              stride,
                                              stride_len,
                                              padding,
                                              padding_len,
                                              dilation,
                                              dilation_len,
                                              ceil_mode,
                                              out,
                                              &indices);
    yg_release(indices);
    return st;
}

/* sizes with the last two dims merged into one, into flat; returns its
 * number of dims. */
static int64_t merge_last_two(const int64_t *sizes, int64_t nd, int64_t *flat) {
    for (int64_t d = 0; d < nd - 2; d++)
        flat[d] = sizes[d];
    flat[nd - 2] = sizes[nd - 2] * sizes[nd - 1];
    return nd - 1;
}

yg_status yg__composite_max_pool2d_with_indices_backward(const yg_tensor *grad_output,
                                                         const yg_tensor *indices,
                                                         const int64_t *self_sizes,
                                                         int64_t self_sizes_len,
                                                         yg_tensor **out) {
    int64_t nd = self_sizes_len, fs[YG_MAX_DIMS], fg[YG_MAX_DIMS];
    yg_tensor *g = NULL, *i = NULL, *flat = NULL;
    char gbuf[128], ibuf[128], sbuf[128];
    yg_status st;

    *out = NULL;
    if (nd < 2 || nd > YG_MAX_DIMS || self_sizes == NULL || yg_tensor_ndim(grad_output) != nd ||
        yg_tensor_ndim(indices) != nd ||
        memcmp(yg_tensor_sizes(grad_output),
               yg_tensor_sizes(indices),
               sizeof(int64_t) * (size_t)nd) != 0 ||
        memcmp(yg_tensor_sizes(grad_output), self_sizes, sizeof(int64_t) * (size_t)(nd - 2)) != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "expected grad_output and indices of one shape [..., oh, ow] whose "
                        "leading dims are those of self_sizes %s, got grad_output %s and "
                        "indices %s",
                        yg__format_sizes(
                            self_sizes, self_sizes == NULL ? 0 : nd, sbuf, sizeof sbuf),
                        yg_tensor_format_sizes(grad_output, gbuf, sizeof gbuf),
                        yg_tensor_format_sizes(indices, ibuf, sizeof ibuf));
    int64_t fnd = merge_last_two(self_sizes, nd, fs);
    merge_last_two(yg_tensor_sizes(grad_output), nd, fg);
    st = yg_reshape(grad_output, fg, fnd, &g);
    if (st == YG_OK)
        st = yg_reshape(indices, fg, fnd, &i);
    if (st == YG_OK)
        st = yg_gather_backward(g, fs, fnd, fnd - 1, i, &flat);
    if (st == YG_OK)
        st = yg_reshape(flat, self_sizes, nd, out);
    yg_release(g);
    yg_release(i);
    yg_release(flat);
    return st;
}

/* The 2-d form (first, second) of a 1-d argument of one entry, or an
 * empty list for an empty one when empty_ok. */
static yg_status pair_of(const char *name,
                         const int64_t *x,
                         int64_t len,
                         int64_t first,
                         bool empty_ok,
                         int64_t pair[2],
                         int64_t *pair_len) {
    char buf[128];

    if (len == 0 && empty_ok) {
        *pair_len = 0;
        return YG_OK;
    }
    if (len != 1 || x == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s must have 1 entry, got %s",
                        name,
                        yg__format_sizes(x, x == NULL ? 0 : len, buf, sizeof buf));
    pair[0] = first;
    pair[1] = x[0];
    *pair_len = 2;
    return YG_OK;
}

yg_status yg__composite_max_pool1d_with_indices(const yg_tensor *self,
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
    int64_t k[2], s[2], p[2], d[2], kl, sl, pl, dl;
    yg_tensor *x = NULL, *v = NULL, *i = NULL;
    char buf[128];
    yg_status st;

    *out_values = NULL;
    *out_indices = NULL;
    if (yg_tensor_ndim(self) != 2 && yg_tensor_ndim(self) != 3)
        return yg__fail(YG_ERR_SHAPE,
                        "expected self of 2 or 3 dims ([C, L] or [N, C, L]), got %s",
                        yg_tensor_format_sizes(self, buf, sizeof buf));
    YG_RETURN_IF_ERROR(pair_of("kernel_size", kernel_size, kernel_size_len, 1, false, k, &kl));
    YG_RETURN_IF_ERROR(pair_of("stride", stride, stride_len, 1, true, s, &sl));
    YG_RETURN_IF_ERROR(pair_of("padding", padding, padding_len, 0, false, p, &pl));
    YG_RETURN_IF_ERROR(pair_of("dilation", dilation, dilation_len, 1, false, d, &dl));
    st = yg_unsqueeze(self, -2, &x);
    if (st == YG_OK)
        st = yg_max_pool2d_with_indices(x, k, kl, s, sl, p, pl, d, dl, ceil_mode, &v, &i);
    if (st == YG_OK)
        st = yg_squeeze_dim(v, -2, out_values);
    if (st == YG_OK)
        st = yg_squeeze_dim(i, -2, out_indices);
    if (st != YG_OK) {
        yg_release(*out_values);
        *out_values = NULL;
    }
    yg_release(x);
    yg_release(v);
    yg_release(i);
    return st;
}

yg_status yg__composite_max_pool1d(const yg_tensor *self,
                                   const int64_t *kernel_size,
                                   int64_t kernel_size_len,
                                   const int64_t *stride,
                                   int64_t stride_len,
                                   const int64_t *padding,
                                   int64_t padding_len,
                                   const int64_t *dilation,
                                   int64_t dilation_len,
                                   bool ceil_mode,
                                   yg_tensor **out) {
    yg_tensor *indices = NULL;
    yg_status st = yg_max_pool1d_with_indices(self,
                                              kernel_size,
                                              kernel_size_len,
                                              stride,
                                              stride_len,
                                              padding,
                                              padding_len,
                                              dilation,
                                              dilation_len,
                                              ceil_mode,
                                              out,
                                              &indices);
    yg_release(indices);
    return st;
}

/* ---- double-backward: adaptive_avg_pool2d_to, upsample_nearest2d_to ----
 * The forward op with output_size the last two entries of sizes, the
 * result's full sizes: what a derivative formula has of grad_output
 * (sizes(grad_output)).  The leading dims of sizes must be self's. */
static yg_status check_to_sizes(const yg_tensor *self, const int64_t *sizes, int64_t sizes_len) {
    int64_t nd = yg_tensor_ndim(self);
    char sbuf[128], xbuf[128];

    if (sizes == NULL || sizes_len != nd || nd < 2 ||
        memcmp(sizes, yg_tensor_sizes(self), sizeof(int64_t) * (size_t)(nd - 2)) != 0)
        return yg__fail(
            YG_ERR_SHAPE,
            "expected sizes [..., oh, ow] whose leading dims are those of self %s, got %s",
            yg_tensor_format_sizes(self, xbuf, sizeof xbuf),
            yg__format_sizes(sizes, sizes == NULL ? 0 : sizes_len, sbuf, sizeof sbuf));
    return YG_OK;
}

yg_status yg__composite_adaptive_avg_pool2d_to(const yg_tensor *self,
                                               const int64_t *sizes,
                                               int64_t sizes_len,
                                               yg_tensor **out) {
    *out = NULL;
    YG_RETURN_IF_ERROR(check_to_sizes(self, sizes, sizes_len));
    return yg_adaptive_avg_pool2d(self, sizes + sizes_len - 2, 2, out);
}

yg_status yg__composite_upsample_nearest2d_to(const yg_tensor *self,
                                              const int64_t *sizes,
                                              int64_t sizes_len,
                                              yg_tensor **out) {
    *out = NULL;
    YG_RETURN_IF_ERROR(check_to_sizes(self, sizes, sizes_len));
    return yg_upsample_nearest2d(self, sizes + sizes_len - 2, 2, out);
}
