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
 *
 * Fallback: cudnn chosen automatically (nothing forced) that returns
 * YG_ERR_NOT_IMPLEMENTED (no algorithm within the workspace limit, as
 * cuDNN 9 may answer for float64 or under deterministic; a tensor of
 * 2^31 elements or more) has the pass run on native with host copies of
 * the operands, the result copied back into the device tensor, and the
 * fallback noted (yg_conv_last_backend, yg_conv_last_note): slow, but a
 * result where there would be an error.  A forced cudnn still fails.
 */
#include "conv/conv.h"
#include "core/backend.h"
#include "cpu/cpu.h"
#include "cpu/vec/kernels.h"
#include "decls/convolution_general.h"
#include "yagrad/ops_sums.h"

#include <stdio.h>

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

/* The three passes of yg_conv_impl. */
typedef enum conv_pass { PASS_FORWARD, PASS_DATA, PASS_WEIGHT } conv_pass;

/* pass of impl over the dense tensors' memory: in0, in1 are (x, w)
 * forward, (y, w) data, (y, x) weight; bias nullable. */
static yg_status run_impl(const yg_conv_impl *impl,
                          const yg_conv_params *p,
                          conv_pass pass,
                          const yg_tensor *in0,
                          const yg_tensor *in1,
                          const yg_tensor *bias,
                          yg_tensor *out) {
    if (pass == PASS_FORWARD)
        return impl->forward(p, data(in0), data(in1), data(bias), yg__tensor_ptr(out));
    if (pass == PASS_DATA)
        return impl->data(p, data(in0), data(in1), data(bias), yg__tensor_ptr(out));
    return impl->weight(p, data(in0), data(in1), yg__tensor_ptr(out));
}

/* pass on native over host copies of the CUDA operands, the result copied
 * into out (on the operands' GPU). */
static yg_status run_on_host(const yg_conv_params *p,
                             conv_pass pass,
                             const yg_tensor *in0,
                             const yg_tensor *in1,
                             const yg_tensor *bias,
                             yg_tensor *out) {
    yg_conv_params hp = *p;
    yg_tensor *h0 = NULL, *h1 = NULL, *hb = NULL, *hout = NULL;
    yg_status st;

    hp.device = YG_CPU;
    hp.device_index = 0;
    st = yg__tensor_to(in0, YG_CPU, 0, &h0);
    if (st == YG_OK)
        st = yg__tensor_to(in1, YG_CPU, 0, &h1);
    if (st == YG_OK && bias != NULL)
        st = yg__tensor_to(bias, YG_CPU, 0, &hb);
    if (st == YG_OK)
        st = yg__tensor_new_on(
            "convolution_dispatch", out->sizes, out->ndim, out->dtype, YG_CPU, 0, &hout);
    if (st == YG_OK)
        st = run_impl(&yg__conv_native, &hp, pass, h0, h1, hb, hout);
    if (st == YG_OK && hout->storage->nbytes > 0)
        st = yg__backend_of(YG_CUDA)->memcpy(
            "convolution_dispatch",
            yg__tensor_ptr(out),
            p->device_index,
            yg__tensor_ptr(hout),
            -1,
            (size_t)yg_tensor_numel(hout) * yg_dtype_size(hout->dtype));
    yg_release(h0);
    yg_release(h1);
    yg_release(hb);
    yg_release(hout);
    return st;
}

/* pass on backend b; cudnn chosen automatically that cannot run the
 * case falls back to native on host copies, noting why. */
static yg_status run_pass(const yg_conv_params *p,
                          yg_conv_backend b,
                          conv_pass pass,
                          const yg_tensor *in0,
                          const yg_tensor *in1,
                          const yg_tensor *bias,
                          yg_tensor *out) {
    char why[384];
    yg_status st = run_impl(yg__conv_impl(b), p, pass, in0, in1, bias, out);

    if (st != YG_ERR_NOT_IMPLEMENTED || b != YG_CONV_BACKEND_CUDNN || yg__conv_is_forced())
        return st;
    snprintf(why, sizeof why, "%s; ran on native with host copies", yg_last_error());
    st = run_on_host(p, pass, in0, in1, bias, out);
    if (st == YG_OK)
        yg__conv_note_fallback(YG_CONV_BACKEND_NATIVE, why);
    return st;
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
    if (st == YG_OK)
        st = run_pass(&p, backend, transposed ? PASS_DATA : PASS_FORWARD, x, w, b, y);
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
    /* channels in parallel: each adds its batch's sums in batch order, as
     * a serial loop would */
    const int64_t batch = p->batch;
    const bool f32 = p->dtype == YG_FLOAT32;
    void *sums = yg__tensor_ptr(*out);
    const void *g = yg__tensor_ptr(gy);
#pragma omp parallel for schedule(static) if (batch * c * pos >= 65536 && c > 1)
    for (int64_t ch = 0; ch < c; ch++)
        for (int64_t n = 0; n < batch; n++) {
            int64_t base = (n * c + ch) * pos;
            /* each plane summed in double by the CPU's vector loop */
            if (f32)
                ((float *)sums)[ch] += (float)yg__vec()->norm->sum_f32((const float *)g + base, pos);
            else
                ((double *)sums)[ch] += yg__vec()->norm->sum_f64((const double *)g + base, pos);
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
    if (st == YG_OK && mask[1])
        st = yg__tensor_empty_like(weight, p->dtype, &gw);
    const yg_conv_impl *impl = yg__conv_impl(backend);
    const bool both = mask[0] && mask[1] && !p->transposed && impl != NULL && impl->backward != NULL;
    if (both) { /* both gradients in one call (the backend shares work) */
        if (st == YG_OK)
            st = impl->backward(
                p, data(gy), data(x), data(w), yg__tensor_ptr(gi), yg__tensor_ptr(gw));
    } else {
        if (st == YG_OK && mask[0])
            st = run_pass(p, backend, p->transposed ? PASS_FORWARD : PASS_DATA, gy, w, NULL, gi);
        if (st == YG_OK && mask[1] && !p->transposed)
            st = run_pass(p, backend, PASS_WEIGHT, gy, x, NULL, gw);
        else if (st == YG_OK && mask[1])
            st = run_pass(p, backend, PASS_WEIGHT, x, gy, NULL, gw);
    }
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
