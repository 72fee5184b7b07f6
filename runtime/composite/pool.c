/*
 * composite/pool.c - pooling written over the pooling ops that have a
 * kernel per device (cpu/pool.c, cuda/pool.c) and over gather_backward:
 * max_pool2d/3d (the values of max_pool2d/3d_with_indices),
 * max_pool1d_with_indices, max_pool1d, avg_pool1d and
 * adaptive_avg_pool1d (2-d pooling of [..., 1, L]), and
 * max_pool2d/3d_with_indices_backward, the gradient through the indices
 * (also adaptive_max_pool2d's).
 *
 * The gradient flattens each plane ([..., H, W] -> [..., H W]) and adds
 * grad_output at the indices with gather_backward, on every device (its
 * CUDA kernel adds each plane's outputs in order, as the CPU's does);
 * gather_backward's own derivative is gather, so max pooling
 * differentiates to any order (the second derivative picks the
 * gradient's values back at the indices).
 *
 * As for every composite, messages of our own checks carry no op name (the
 * generated wrapper prefixes it).
 */
#include "composite/composite.h"
#include "decls/adaptive_average_pooling.h"
#include "decls/average_pooling.h"
#include "decls/pooling.h"
#include "decls/resampling.h"
#include "yagrad/ops_adaptive_average_pooling.h"
#include "yagrad/ops_average_pooling.h"
#include "yagrad/ops_indexing.h"
#include "yagrad/ops_pooling.h"
#include "yagrad/ops_resampling.h"
#include "yagrad/ops_views.h"

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

/* sizes with the last n dims merged into one, into flat; returns its
 * number of dims, or -1 when the merged dim is no size (a negative
 * entry, or more than 2^59 elements: sizes.h). */
static int64_t merge_last(const int64_t *sizes, int64_t nd, int64_t n, int64_t *flat) {
    for (int64_t d = 0; d < nd - n; d++)
        flat[d] = sizes[d];
    flat[nd - n] = yg__sizes_product(sizes + (nd - n), n);
    return flat[nd - n] < 0 ? -1 : nd - n + 1;
}

/* The gradient of max pooling over the last nsp dims: grad_output added
 * at indices, positions in the flattened last nsp dims of self_sizes. */
static yg_status indices_backward(int64_t nsp,
                                  const yg_tensor *grad_output,
                                  const yg_tensor *indices,
                                  const int64_t *self_sizes,
                                  int64_t self_sizes_len,
                                  yg_tensor **out) {
    int64_t nd = self_sizes_len, fs[YG_MAX_DIMS], fg[YG_MAX_DIMS];
    yg_tensor *g = NULL, *i = NULL, *flat = NULL;
    char gbuf[128], ibuf[128], sbuf[128];
    yg_status st;

    *out = NULL;
    if (nd < nsp || nd > YG_MAX_DIMS || self_sizes == NULL || yg_tensor_ndim(grad_output) != nd ||
        yg_tensor_ndim(indices) != nd ||
        memcmp(yg_tensor_sizes(grad_output),
               yg_tensor_sizes(indices),
               sizeof(int64_t) * (size_t)nd) != 0 ||
        memcmp(yg_tensor_sizes(grad_output), self_sizes, sizeof(int64_t) * (size_t)(nd - nsp)) != 0)
        return yg__fail(
            YG_ERR_SHAPE,
            "expected grad_output and indices of one shape [..., %s] whose "
            "leading dims are those of self_sizes %s, got grad_output %s and "
            "indices %s",
            nsp == 3 ? "od, oh, ow" : "oh, ow",
            yg__format_sizes(self_sizes, self_sizes == NULL ? 0 : nd, sbuf, sizeof sbuf),
            yg_tensor_format_sizes(grad_output, gbuf, sizeof gbuf),
            yg_tensor_format_sizes(indices, ibuf, sizeof ibuf));
    int64_t fnd = merge_last(self_sizes, nd, nsp, fs);
    if (fnd < 0 || merge_last(yg_tensor_sizes(grad_output), nd, nsp, fg) < 0)
        return yg__fail(YG_ERR_SHAPE,
                        "the last %" PRId64 " dims of self_sizes %s or grad_output %s are no "
                        "sizes of at most 2^59 elements",
                        nsp,
                        yg__format_sizes(self_sizes, nd, sbuf, sizeof sbuf),
                        yg_tensor_format_sizes(grad_output, gbuf, sizeof gbuf));
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

yg_status yg__composite_max_pool2d_with_indices_backward(const yg_tensor *grad_output,
                                                         const yg_tensor *indices,
                                                         const int64_t *self_sizes,
                                                         int64_t self_sizes_len,
                                                         yg_tensor **out) {
    return indices_backward(2, grad_output, indices, self_sizes, self_sizes_len, out);
}

yg_status yg__composite_max_pool3d_with_indices_backward(const yg_tensor *grad_output,
                                                         const yg_tensor *indices,
                                                         const int64_t *self_sizes,
                                                         int64_t self_sizes_len,
                                                         yg_tensor **out) {
    return indices_backward(3, grad_output, indices, self_sizes, self_sizes_len, out);
}

yg_status yg__composite_max_pool3d(const yg_tensor *self,
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
    yg_status st = yg_max_pool3d_with_indices(self,
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

/* Checks self is [C, L] or [N, C, L] for a 1-d op and views it as
 * [..., 1, L] in *x. */
static yg_status unsqueeze_1d(const yg_tensor *self, yg_tensor **x) {
    char buf[128];
    *x = NULL;
    if (yg_tensor_ndim(self) != 2 && yg_tensor_ndim(self) != 3)
        return yg__fail(YG_ERR_SHAPE,
                        "expected self of 2 or 3 dims ([C, L] or [N, C, L]), got %s",
                        yg_tensor_format_sizes(self, buf, sizeof buf));
    return yg_unsqueeze(self, -2, x);
}

yg_status yg__composite_avg_pool1d(const yg_tensor *self,
                                   const int64_t *kernel_size,
                                   int64_t kernel_size_len,
                                   const int64_t *stride,
                                   int64_t stride_len,
                                   const int64_t *padding,
                                   int64_t padding_len,
                                   bool ceil_mode,
                                   bool count_include_pad,
                                   yg_tensor **out) {
    int64_t k[2], s[2], p[2], kl, sl, pl;
    yg_tensor *x = NULL, *v = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(pair_of("kernel_size", kernel_size, kernel_size_len, 1, false, k, &kl));
    YG_RETURN_IF_ERROR(pair_of("stride", stride, stride_len, 1, true, s, &sl));
    YG_RETURN_IF_ERROR(pair_of("padding", padding, padding_len, 0, false, p, &pl));
    st = unsqueeze_1d(self, &x);
    if (st == YG_OK)
        st = yg_avg_pool2d(x, k, kl, s, sl, p, pl, ceil_mode, count_include_pad, &v);
    if (st == YG_OK)
        st = yg_squeeze_dim(v, -2, out);
    yg_release(x);
    yg_release(v);
    return st;
}

yg_status yg__composite_adaptive_avg_pool1d(const yg_tensor *self,
                                            const int64_t *output_size,
                                            int64_t output_size_len,
                                            yg_tensor **out) {
    int64_t o[2], ol;
    yg_tensor *x = NULL, *v = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(pair_of("output_size", output_size, output_size_len, 1, false, o, &ol));
    st = unsqueeze_1d(self, &x);
    if (st == YG_OK)
        st = yg_adaptive_avg_pool2d(x, o, ol, &v);
    if (st == YG_OK)
        st = yg_squeeze_dim(v, -2, out);
    yg_release(x);
    yg_release(v);
    return st;
}

/* ---- double-backward: adaptive_avg_pool2d_to, upsample_nearest2d_to ----
 * The forward op with output_size the last two entries of sizes, the
 * result's full sizes: what a derivative formula has of grad_output
 * (sizes(grad_output)).  The leading dims of sizes must be self's. */
yg_status
yg__check_to_sizes(const yg_tensor *self, const int64_t *sizes, int64_t sizes_len, int64_t nsp) {
    int64_t nd = yg_tensor_ndim(self);
    char sbuf[128], xbuf[128];

    if (sizes == NULL || sizes_len != nd || nd < nsp ||
        memcmp(sizes, yg_tensor_sizes(self), sizeof(int64_t) * (size_t)(nd - nsp)) != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "expected sizes [..., %s] whose leading dims are those of self %s, got %s",
                        nsp == 3 ? "od, oh, ow" : "oh, ow",
                        yg_tensor_format_sizes(self, xbuf, sizeof xbuf),
                        yg__format_sizes(sizes, sizes == NULL ? 0 : sizes_len, sbuf, sizeof sbuf));
    return YG_OK;
}

yg_status yg__composite_adaptive_avg_pool2d_to(const yg_tensor *self,
                                               const int64_t *sizes,
                                               int64_t sizes_len,
                                               yg_tensor **out) {
    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_to_sizes(self, sizes, sizes_len, 2));
    return yg_adaptive_avg_pool2d(self, sizes + sizes_len - 2, 2, out);
}

yg_status yg__composite_upsample_nearest2d_to(const yg_tensor *self,
                                              const int64_t *sizes,
                                              int64_t sizes_len,
                                              yg_tensor **out) {
    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_to_sizes(self, sizes, sizes_len, 2));
    return yg_upsample_nearest2d(self, sizes + sizes_len - 2, 2, out);
}

yg_status yg__composite_adaptive_avg_pool3d_to(const yg_tensor *self,
                                               const int64_t *sizes,
                                               int64_t sizes_len,
                                               yg_tensor **out) {
    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_to_sizes(self, sizes, sizes_len, 3));
    return yg_adaptive_avg_pool3d(self, sizes + sizes_len - 3, 3, out);
}
