/*
 * pool.c - pooling and nearest upsampling on a GPU (cuda/ops.h):
 * max_pool{2,3}d_with_indices, adaptive_max_pool2d, avg_pool{2,3}d,
 * adaptive_avg_pool{2,3}d, upsample_nearest2d and their gradients.
 *
 * Each keeps the rules and messages of its CPU kernel (cpu/pool.c): the
 * checks and the window geometry are meta/pool.h's, which both devices
 * call; what differs is the work.  cuda/pool.cu computes with
 * cpu/pool.c's arithmetic (double accumulation, the same window order,
 * results rounded once), on the input's own dtype instead of a float64
 * copy; its gradients gather per input element instead of scattering per
 * window, in the same order, so both devices agree to the bit.  A max
 * window that covers only padding is found here from the geometry alone
 * (window_of_padding) before the GPU runs.  upsample_nearest2d and its
 * gradient work on a float64 copy, rounded once into the input's dtype,
 * as the CPU's loops; the gradient's thread per input element adds the
 * outputs that copied it (a range of rows times a range of columns,
 * found here with the CPU's formula and copied to the device) in the
 * CPU's order.
 *
 * Each launch makes the operands' device current, launches and checks
 * the launch; inputs are made contiguous and results allocated on that
 * device first.  (Max pooling's gradient, through the indices, is
 * composite/pool.c's, over gather_backward.)
 */
#include "decls/adaptive_average_pooling.h"
#include "decls/average_pooling.h"
#include "decls/pooling.h"
#include "decls/resampling.h"
#include "meta/pool.h"

#include "cuda/cuda.h"

#include <inttypes.h>

/* ---- launches ---- */

/* The geometry g as cuda/pool.h's struct. */
static yg__cuda_pool_geom cuda_geom(const yg_pool_geom *g) {
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

/* cpu/pool.c's max pooling (adaptive: adaptive_max_pool2d's cells) of
 * the contiguous float32/float64 x [planes, *g->in] on its GPU into values
 * [planes, *g->out] (x's dtype) and int64 indices, both new and
 * contiguous there; no window may cover only padding (checked by the
 * caller).  cuda/pool.cu.  Errors name op: YG_ERR_DEVICE. */
static yg_status launch_max_pool(const char *op,
                                 const yg_tensor *x,
                                 const yg__cuda_pool_geom *g,
                                 bool adaptive,
                                 yg_tensor *values,
                                 yg_tensor *indices) {
    int prev, index = x->storage->device_index;
    if (yg_tensor_numel(values) == 0)
        return YG_OK;
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, index, &prev));
    int err = yg__cuda_max_pool_launch(x->dtype == YG_FLOAT64,
                                       yg__tensor_ptr(x),
                                       yg__tensor_ptr(values),
                                       (int64_t *)yg__tensor_ptr(indices),
                                       *g,
                                       adaptive);
    yg__cuda_device_leave(prev);
    return yg__cuda_check_launch(op, index, err);
}

/* cpu/pool.c's average pooling (adaptive: adaptive_avg_pool's cells) of
 * src into dst, or (backward) its gradient: src the grad_output [planes,
 * *g->out], dst [planes, *g->in] every element of which is written.
 * Both contiguous, float32/float64, on one GPU.  Deterministic: an input
 * element's gradient adds its windows' shares in increasing output
 * order, as the CPU.  Errors name op: YG_ERR_DEVICE. */
static yg_status launch_avg_pool(const char *op,
                                 const yg_tensor *src,
                                 const yg__cuda_pool_geom *g,
                                 bool adaptive,
                                 bool backward,
                                 bool count_include_pad,
                                 int64_t divisor_override,
                                 yg_tensor *dst) {
    int prev, index = src->storage->device_index, err;
    if (yg_tensor_numel(dst) == 0)
        return YG_OK;
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, index, &prev));
    if (adaptive)
        err = yg__cuda_adaptive_avg_pool_launch(
            src->dtype == YG_FLOAT64, yg__tensor_ptr(src), yg__tensor_ptr(dst), *g, backward);
    else
        err = yg__cuda_avg_pool_launch(src->dtype == YG_FLOAT64,
                                       yg__tensor_ptr(src),
                                       yg__tensor_ptr(dst),
                                       *g,
                                       backward,
                                       count_include_pad,
                                       divisor_override);
    yg__cuda_device_leave(prev);
    return yg__cuda_check_launch(op, index, err);
}

/* start[i] (i = 0 .. in) = the first of the out outputs o whose source
 * o in / out (cpu/pool.c's upsample_nearest2d) is at least i, so input i
 * is copied by outputs [start[i], start[i + 1]); the source only grows
 * with o.  All 0 when the gradient is empty (out may then be 0, or any
 * size beside a 0). */
static void nearest_starts(int64_t in, int64_t out, bool empty, int64_t *start) {
    int64_t o = 0;
    for (int64_t i = 0; i <= in; i++) {
        while (!empty && o < out && o * in / out < i)
            o++;
        start[i] = o;
    }
}

/* cpu/pool.c's upsample_nearest2d of src [planes, g->in[1], g->in[2]]
 * into dst [planes, g->out[1], g->out[2]] or (backward) its gradient:
 * src the grad_output [planes, *out], dst [planes, *in], each input
 * element the sum of the output gradients that copied it, added in
 * increasing output order as the CPU (tables of those outputs made on the
 * host, then copied).  Both contiguous float64 on one GPU; g->in[1],
 * g->in[2] > 0; every element of dst is written.  cuda/pool.cu.  Errors
 * name op: YG_ERR_OUT_OF_MEMORY (the tables), YG_ERR_DEVICE. */
static yg_status launch_upsample_nearest(const char *op,
                                         const yg_tensor *src,
                                         const yg__cuda_pool_geom *g,
                                         bool backward,
                                         yg_tensor *dst) {
    int prev, index = dst->storage->device_index, err;
    int64_t ih = g->in[1], iw = g->in[2];
    int64_t *host = NULL;
    void *dev = NULL;
    size_t nbytes = 0;
    yg_status st = YG_OK;

    if (yg_tensor_numel(dst) == 0)
        return YG_OK;
    if (backward) {
        /* dst [planes, ih, iw] is not empty, so ih + iw + 2 int64 fit */
        nbytes = (size_t)(ih + 1 + iw + 1) * sizeof *host;
        host = yg__alloc(nbytes);
        if (host == NULL)
            return yg__fail(YG_ERR_OUT_OF_MEMORY,
                            "%s: out of host memory for %" PRId64 " + %" PRId64 " output ranges",
                            op,
                            ih + 1,
                            iw + 1);
        bool empty = yg_tensor_numel(src) == 0;
        nearest_starts(ih, g->out[1], empty, host);
        nearest_starts(iw, g->out[2], empty, host + ih + 1);
        st = yg__cuda_alloc(op, index, nbytes, &dev);
        if (st == YG_OK)
            st = yg__cuda_memcpy(op, dev, index, host, -1, nbytes);
    }
    if (st == YG_OK)
        st = yg__cuda_device_enter(op, index, &prev);
    if (st == YG_OK) {
        if (backward)
            err = yg__cuda_upsample_nearest_backward_launch((const double *)yg__tensor_ptr(src),
                                                            (double *)yg__tensor_ptr(dst),
                                                            *g,
                                                            (const int64_t *)dev,
                                                            (const int64_t *)dev + ih + 1);
        else
            err = yg__cuda_upsample_nearest_launch(
                (const double *)yg__tensor_ptr(src), (double *)yg__tensor_ptr(dst), *g);
        yg__cuda_device_leave(prev);
        st = yg__cuda_check_launch(op, index, err);
    }
    yg__cuda_free(index, dev); /* stream-ordered: reused only by later work */
    yg__free(host, nbytes);
    return st;
}

/* ---- results ---- */

/* A new tensor for a kernel's result: sizes (ndim) with the last nsp
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
    yg__pool_result_sizes(sizes, ndim, nsp, sp, s);
    return yg__tensor_new_on(op, s, ndim, dtype, YG_CUDA, src->storage->device_index, out);
}

/* Average pooling (adaptive or not, forward or backward) of src into a
 * new tensor of sizes (ndim) with the last nsp dims those of g's output
 * (forward) or input (backward). */
static yg_status avg_run(const char *op,
                         const yg_tensor *src,
                         const yg_pool_geom *g,
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
        st = launch_avg_pool(
            op, x, &cg, adaptive, backward, count_include_pad, divisor_override, res);
    yg_release(x);
    if (st != YG_OK) {
        yg_release(res);
        return st;
    }
    *out = res;
    return YG_OK;
}

/* upsample_nearest2d (backward: its gradient) of src into a new tensor
 * of sizes (ndim) with the last two dims g's output (forward) or input
 * (backward): on a float64 copy of src, rounded once into src's dtype, as
 * the CPU's loops. */
static yg_status nearest_run(const char *op,
                             const yg_tensor *src,
                             const yg_pool_geom *g,
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
        st = launch_upsample_nearest(op, x, &cg, backward, res);
    yg_release(x);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(res, src->dtype, true, out);
    yg_release(res);
    return st;
}

/* ---- max pooling ---- */

/* Whether some window of g covers only padding, and then the first one
 * in row-major order in o[3] (the one the CPU's scan stops at).  A
 * window is empty when it is empty along one dim; along a dim, window w
 * has a tap in [0, in) iff its first tap at or after 0 is below in.  The
 * first empty window is all zeros when some dim's window 0 is empty,
 * else the first empty window of the innermost dim that has one, at 0
 * along the others. */
static bool window_of_padding(const yg_pool_geom *g, int64_t o[3]) {
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

/* The maximum of each window of g (or, when adaptive, of each adaptive
 * cell) and its position, into new values (self's dtype) and int64
 * indices on self's GPU. */
static yg_status max_pool_run(const char *op,
                              const yg_tensor *self,
                              const yg_pool_geom *g,
                              bool adaptive,
                              yg_tensor **out_values,
                              yg_tensor **out_indices) {
    int64_t o[3];
    yg_tensor *x = NULL, *res = NULL, *idx = NULL;
    yg__cuda_pool_geom cg = cuda_geom(g);
    yg_status st;

    if (!adaptive && window_of_padding(g, o))
        return yg__pool_padding_window_error(op, g, o);
    st = yg__tensor_contiguous_as(self, self->dtype, true, &x);
    if (st == YG_OK)
        st = cuda_result(op, self, self->sizes, self->ndim, g->nsp, g->out, self->dtype, &res);
    if (st == YG_OK)
        st = cuda_result(op, self, self->sizes, self->ndim, g->nsp, g->out, YG_INT64, &idx);
    if (st == YG_OK)
        st = launch_max_pool(op, x, &cg, adaptive, res, idx);
    if (st == YG_OK) {
        *out_values = res;
        *out_indices = idx;
        res = idx = NULL;
    }
    yg_release(x);
    yg_release(res);
    yg_release(idx);
    return st;
}

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

yg_status yg__cuda_max_pool2d_with_indices(const yg_tensor *self,
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

yg_status yg__cuda_max_pool3d_with_indices(const yg_tensor *self,
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

yg_status yg__cuda_adaptive_max_pool2d(const yg_tensor *self,
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

/* ---- average pooling ---- */

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
    bool backward = grad_output != NULL;

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
    return avg_run(op,
                   backward ? grad_output : self,
                   &g,
                   false,
                   backward,
                   count_include_pad,
                   divisor_override,
                   backward ? self_sizes : self->sizes,
                   backward ? self_sizes_len : self->ndim,
                   out);
}

yg_status yg__cuda_avg_pool2d(const yg_tensor *self,
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

yg_status yg__cuda_avg_pool2d_backward(const yg_tensor *grad_output,
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

yg_status yg__cuda_avg_pool3d(const yg_tensor *self,
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

yg_status yg__cuda_avg_pool3d_backward(const yg_tensor *grad_output,
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

/* ---- adaptive average pooling and nearest upsampling ---- */

static yg_status adaptive_avg_run(const char *op,
                                  int nsp,
                                  const yg_tensor *self,
                                  const int64_t *output_size,
                                  int64_t output_size_len,
                                  yg_tensor **out) {
    yg_pool_geom g;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__pool_adaptive_geometry(op, nsp, self, output_size, output_size_len, &g));
    return avg_run(op, self, &g, true, false, false, 0, self->sizes, self->ndim, out);
}

yg_status yg__cuda_adaptive_avg_pool2d(const yg_tensor *self,
                                       const int64_t *output_size,
                                       int64_t output_size_len,
                                       yg_tensor **out) {
    return adaptive_avg_run("adaptive_avg_pool2d", 2, self, output_size, output_size_len, out);
}

yg_status yg__cuda_adaptive_avg_pool3d(const yg_tensor *self,
                                       const int64_t *output_size,
                                       int64_t output_size_len,
                                       yg_tensor **out) {
    return adaptive_avg_run("adaptive_avg_pool3d", 3, self, output_size, output_size_len, out);
}

static yg_status adaptive_avg_backward_run(const char *op,
                                           int nsp,
                                           const yg_tensor *grad_output,
                                           const int64_t *self_sizes,
                                           int64_t self_sizes_len,
                                           yg_tensor **out) {
    yg_pool_geom g;

    *out = NULL;
    YG_RETURN_IF_ERROR(
        yg__pool_backward_geometry(op, nsp, grad_output, self_sizes, self_sizes_len, &g));
    return avg_run(op, grad_output, &g, true, true, false, 0, self_sizes, self_sizes_len, out);
}

yg_status yg__cuda_adaptive_avg_pool2d_backward(const yg_tensor *grad_output,
                                                const int64_t *self_sizes,
                                                int64_t self_sizes_len,
                                                yg_tensor **out) {
    return adaptive_avg_backward_run(
        "adaptive_avg_pool2d_backward", 2, grad_output, self_sizes, self_sizes_len, out);
}

yg_status yg__cuda_adaptive_avg_pool3d_backward(const yg_tensor *grad_output,
                                                const int64_t *self_sizes,
                                                int64_t self_sizes_len,
                                                yg_tensor **out) {
    return adaptive_avg_backward_run(
        "adaptive_avg_pool3d_backward", 3, grad_output, self_sizes, self_sizes_len, out);
}

yg_status yg__cuda_upsample_nearest2d(const yg_tensor *self,
                                      const int64_t *output_size,
                                      int64_t output_size_len,
                                      yg_tensor **out) {
    const char *op = "upsample_nearest2d";
    yg_pool_geom g;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__pool_adaptive_geometry(op, 2, self, output_size, output_size_len, &g));
    return nearest_run(op, self, &g, false, self->sizes, self->ndim, out);
}

yg_status yg__cuda_upsample_nearest2d_backward(const yg_tensor *grad_output,
                                               const int64_t *self_sizes,
                                               int64_t self_sizes_len,
                                               yg_tensor **out) {
    const char *op = "upsample_nearest2d_backward";
    yg_pool_geom g;

    *out = NULL;
    YG_RETURN_IF_ERROR(
        yg__pool_backward_geometry(op, 2, grad_output, self_sizes, self_sizes_len, &g));
    return nearest_run(op, grad_output, &g, true, self_sizes, self_sizes_len, out);
}
