/*
 * conv/dispatch.c - convolution_dispatch's kernel (cpu and CUDA tensors)
 * and the fused backward: validate once (conv/params.c), pick a backend
 * (conv/select.c), make the operands contiguous, run the backend.  CUDA
 * operands go to cudnn (conv/cudnn.c) and their results are allocated on
 * the operands' device; the grad_bias of CUDA operands is sum.dim, whose
 * CUDA reduction accumulates in double as bias_grad below does.
 *
 * Non-contiguous inputs (any layout, a transposed view, a slice) are
 * copied to contiguous NCHW first; contiguous ones are used in place.
 * The results are new contiguous tensors.  A transposed convolution runs
 * as the data gradient of the ordinary convolution it is the adjoint of
 * (conv/conv.h), its data gradient as that convolution's forward, and its
 * weight gradient as the weight gradient with the roles of input and
 * grad_output swapped.
 */
#include "conv/conv.h"
#include "cpu/cpu.h"
#include "decls/convolution_general.h"
#include "yagrad/ops_sums.h"

/* A contiguous copy (or a shared reference) of the nullable t. */
static yg_status dense(const yg_tensor *t, yg_tensor **out) {
    *out = NULL;
    if (t == NULL)
        return YG_OK;
    return yg__tensor_contiguous_as(t, t->dtype, true, out);
}

static const void *data(const yg_tensor *t) {
    return t != NULL ? yg__tensor_ptr(t) : NULL;
}

yg_status yg__kernel_convolution_dispatch(const yg_tensor *input,
                                          const yg_tensor *weight,
                                          const yg_tensor *bias,
                                          const int64_t *stride,
                                          int64_t stride_len,
                                          const int64_t *padding,
                                          int64_t padding_len,
                                          const int64_t *dilation,
                                          int64_t dilation_len,
                                          bool transposed,
                                          const int64_t *output_padding,
                                          int64_t output_padding_len,
                                          int64_t groups,
                                          bool benchmark,
                                          bool deterministic,
                                          bool allow_backend_choice,
                                          yg_tensor **out) {
    yg_conv_params p;
    yg_conv_backend backend;
    yg_tensor *x = NULL, *w = NULL, *b = NULL, *y = NULL;
    int64_t sizes[5];
    yg_status st;

    *out = NULL;
    st = yg__conv_params_init(input,
                              weight,
                              bias,
                              0,
                              stride,
                              stride_len,
                              padding,
                              padding_len,
                              dilation,
                              dilation_len,
                              transposed,
                              output_padding,
                              output_padding_len,
                              groups,
                              &p);
    /* The thread's flags (yagrad/conv.h) or this call's turn them on;
     * only cudnn reads them: the cpu backends are deterministic for a
     * thread count and have nothing to time. */
    p.benchmark = p.benchmark || benchmark;
    p.deterministic = p.deterministic || deterministic;
    if (st == YG_OK)
        st = yg__conv_select(&p, allow_backend_choice, &backend);
    if (st != YG_OK)
        return yg__fail_prefix(st, "convolution_dispatch");
    yg__conv_output_sizes(&p, sizes);
    st = dense(input, &x);
    if (st == YG_OK)
        st = dense(weight, &w);
    if (st == YG_OK)
        st = dense(bias, &b);
    if (st == YG_OK)
        st = yg__tensor_new_on(
            "convolution_dispatch", sizes, p.n_spatial + 2, p.dtype, p.device, p.device_index, &y);
    if (st == YG_OK && !transposed)
        st = yg__conv_impl(backend)->forward(&p, data(x), data(w), data(b), yg__tensor_ptr(y));
    else if (st == YG_OK)
        st = yg__conv_impl(backend)->data(&p, data(x), data(w), data(b), yg__tensor_ptr(y));
    yg_release(x);
    yg_release(w);
    yg_release(b);
    if (st != YG_OK) {
        yg_release(y);
        return yg__fail_prefix(st, "convolution_dispatch");
    }
    *out = y;
    return YG_OK;
}

/* grad_bias: grad_output summed over every dim but the channels. */
static yg_status bias_grad(const yg_conv_params *p, const yg_tensor *gy, yg_tensor **out) {
    int64_t c = p->transposed ? p->cx : p->cy, pos = 1, sizes[1] = {c};
    yg_status st;

    *out = NULL;
    if (p->device == YG_CUDA) {
        int64_t dims[4] = {0, 2, 3, 4};
        return yg_sum_dim(gy, dims, gy->ndim - 1, false, out);
    }
    st = yg_tensor_zeros(sizes, 1, p->dtype, out);
    if (st != YG_OK || yg_tensor_numel(gy) == 0)
        return st; /* an empty gy sums to zeros, and pos may not fit */
    pos = yg__sizes_product(gy->sizes + 2, gy->ndim - 2);
    for (int64_t n = 0; n < p->batch; n++)
        for (int64_t ch = 0; ch < c; ch++) {
            int64_t base = (n * c + ch) * pos;
            double s = 0;
            if (p->dtype == YG_FLOAT32) {
                const float *r = (const float *)yg__tensor_ptr(gy) + base;
                for (int64_t i = 0; i < pos; i++)
                    s += r[i];
                ((float *)yg__tensor_ptr(*out))[ch] += (float)s;
            } else {
                const double *r = (const double *)yg__tensor_ptr(gy) + base;
                for (int64_t i = 0; i < pos; i++)
                    s += r[i];
                ((double *)yg__tensor_ptr(*out))[ch] += s;
            }
        }
    return YG_OK;
}

yg_status yg__conv_backward(const yg_tensor *grad_output,
                            const yg_tensor *input,
                            const yg_tensor *weight,
                            const yg_conv_params *p,
                            const bool *mask,
                            yg_tensor **out_grad_input,
                            yg_tensor **out_grad_weight,
                            yg_tensor **out_grad_bias) {
    yg_conv_backend backend;
    yg_tensor *gy = NULL, *x = NULL, *w = NULL, *gi = NULL, *gw = NULL, *gb = NULL;
    yg_status st;

    *out_grad_input = NULL;
    *out_grad_weight = NULL;
    *out_grad_bias = NULL;
    YG_RETURN_IF_ERROR(yg__conv_select(p, true, &backend));
    st = dense(grad_output, &gy);
    if (st == YG_OK && mask[1])
        st = dense(input, &x);
    if (st == YG_OK && mask[0])
        st = dense(weight, &w);
    if (st == YG_OK && mask[0])
        st = yg__tensor_empty_like(input, p->dtype, &gi);
    if (st == YG_OK && mask[0] && !p->transposed)
        st = yg__conv_impl(backend)->data(p, data(gy), data(w), NULL, yg__tensor_ptr(gi));
    else if (st == YG_OK && mask[0])
        st = yg__conv_impl(backend)->forward(p, data(gy), data(w), NULL, yg__tensor_ptr(gi));
    if (st == YG_OK && mask[1])
        st = yg__tensor_empty_like(weight, p->dtype, &gw);
    if (st == YG_OK && mask[1] && !p->transposed)
        st = yg__conv_impl(backend)->weight(p, data(gy), data(x), yg__tensor_ptr(gw));
    else if (st == YG_OK && mask[1])
        st = yg__conv_impl(backend)->weight(p, data(x), data(gy), yg__tensor_ptr(gw));
    if (st == YG_OK && mask[2])
        st = bias_grad(p, gy, &gb);
    yg_release(gy);
    yg_release(x);
    yg_release(w);
    if (st != YG_OK) {
        yg_release(gi);
        yg_release(gw);
        yg_release(gb);
        return st;
    }
    *out_grad_input = gi;
    *out_grad_weight = gw;
    *out_grad_bias = gb;
    return YG_OK;
}
