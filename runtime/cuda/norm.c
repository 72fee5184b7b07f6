/*
 * norm.c - layer_norm's and batch_norm's fused kernels, forward and
 * backward, on a GPU: the CUDA implementations of the structured ops
 * (cuda/ops.h), which fill the results meta/norm.c made (grad_weight and
 * grad_bias zero) with the kernels of cuda/layer_norm.cu and cuda/norm.cu:
 * the operands made contiguous, the device made current, one launch,
 * checked.
 */
#include "cuda/cuda.h"
#include "decls/norms.h"
#include "decls/norms_backward.h"

#include "core/core.h"
#include "meta/norm.h"

/* Contiguous copies (or shared references) of the nullable t. */
static yg_status contiguous(const yg_tensor *t, yg_tensor **out) {
    *out = NULL;
    if (t == NULL)
        return YG_OK;
    return yg__tensor_contiguous_as(t, t->dtype, true, out);
}

static const void *data_or_null(const yg_tensor *t) {
    return t != NULL ? yg__tensor_ptr(t) : NULL;
}

static void *out_or_null(yg_tensor *t) {
    return t != NULL ? yg__tensor_ptr(t) : NULL;
}

yg_status yg__cuda_native_layer_norm_out(const yg_tensor *input,
                                         const int64_t *normalized_shape,
                                         int64_t normalized_shape_len,
                                         const yg_tensor *weight,
                                         const yg_tensor *bias,
                                         double eps,
                                         yg_tensor *out_output,
                                         yg_tensor *out_mean,
                                         yg_tensor *out_rstd) {
    const char *op = "native_layer_norm";
    int64_t rows, m;
    yg_tensor *x = NULL, *w = NULL, *b = NULL;
    yg_status st;

    YG_RETURN_IF_ERROR(
        yg__layer_norm_geometry(op, input, normalized_shape, normalized_shape_len, &rows, &m));
    st = yg__tensor_contiguous_as(input, input->dtype, true, &x);
    if (st == YG_OK)
        st = contiguous(weight, &w);
    if (st == YG_OK)
        st = contiguous(bias, &b);
    if (st == YG_OK && rows * m > 0)
        st = yg__cuda_layer_norm(op, input->storage->device_index, input->dtype == YG_FLOAT64,
                                 false, out_output, out_mean, out_rstd, NULL, x, NULL, NULL, w, b,
                                 rows, m, eps);
    yg_release(x);
    yg_release(w);
    yg_release(b);
    return st;
}

yg_status yg__cuda_native_layer_norm_backward_fused_out(const yg_tensor *grad_out,
                                                        const yg_tensor *input,
                                                        const yg_tensor *mean,
                                                        const yg_tensor *rstd,
                                                        const yg_tensor *weight,
                                                        const int64_t *normalized_shape,
                                                        int64_t normalized_shape_len,
                                                        const bool *grad_input_mask,
                                                        yg_tensor *out_grad_input,
                                                        yg_tensor *out_grad_weight,
                                                        yg_tensor *out_grad_bias) {
    const char *op = "native_layer_norm_backward_fused";
    int64_t rows, m;
    yg_tensor *g = NULL, *x = NULL, *mu = NULL, *rs = NULL, *w = NULL;
    yg_status st;

    (void)grad_input_mask;
    YG_RETURN_IF_ERROR(
        yg__layer_norm_geometry(op, input, normalized_shape, normalized_shape_len, &rows, &m));
    st = yg__tensor_contiguous_as(grad_out, input->dtype, true, &g);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(input, input->dtype, true, &x);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(mean, input->dtype, true, &mu);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(rstd, input->dtype, true, &rs);
    if (st == YG_OK)
        st = contiguous(weight, &w);
    /* No rows: the parameter gradients stay the zeros they were made. */
    if (st == YG_OK && rows * m > 0)
        st = yg__cuda_layer_norm(op, input->storage->device_index, input->dtype == YG_FLOAT64,
                                 true, out_grad_input, out_grad_weight, out_grad_bias, g, x, mu,
                                 rs, w, NULL, rows, m, 0.0);
    yg_release(g);
    yg_release(x);
    yg_release(mu);
    yg_release(rs);
    yg_release(w);
    return st;
}

/* One launch of a cuda/norm.cu kernel on device index. */
static yg_status launch(const char *op, int index, int (*fn)(const void *), const void *args) {
    int prev;
    YG_RETURN_IF_ERROR(yg__cuda_device_enter(op, index, &prev));
    int err = fn(args);
    yg__cuda_device_leave(prev);
    return yg__cuda_check_launch(op, index, err);
}

static int bn_forward_launch(const void *a) {
    return yg__cuda_batch_norm_launch(a);
}

static int bn_backward_launch(const void *a) {
    return yg__cuda_batch_norm_backward_launch(a);
}

yg_status yg__cuda_native_batch_norm_out(const yg_tensor *input,
                                         const yg_tensor *weight,
                                         const yg_tensor *bias,
                                         yg_tensor *running_mean,
                                         yg_tensor *running_var,
                                         bool training,
                                         double momentum,
                                         double eps,
                                         yg_tensor *out_output,
                                         yg_tensor *out_save_mean,
                                         yg_tensor *out_save_invstd) {
    const char *op = "native_batch_norm";
    int64_t n = 0, c = 0, l = 0;
    yg_tensor *x = NULL, *w = NULL, *b = NULL;
    yg_status st;

    YG_RETURN_IF_ERROR(yg__batch_norm_geometry(op, input, &n, &c, &l));
    st = yg__tensor_contiguous_as(input, input->dtype, true, &x);
    if (st == YG_OK)
        st = contiguous(weight, &w);
    if (st == YG_OK)
        st = contiguous(bias, &b);
    if (st == YG_OK) {
        /* One launch that also moves the running statistics. */
        yg__cuda_bn_args a = {
            .x = yg__tensor_ptr(x),
            .w = data_or_null(w),
            .b = data_or_null(b),
            .y = yg__tensor_ptr(out_output),
            .save_mean = yg__tensor_ptr(out_save_mean),
            .save_invstd = yg__tensor_ptr(out_save_invstd),
            .rm = running_mean != NULL ? yg__tensor_ptr(running_mean) : NULL,
            .rv = running_var != NULL ? yg__tensor_ptr(running_var) : NULL,
            .rm_stride = running_mean != NULL ? running_mean->strides[0] : 0,
            .rv_stride = running_var != NULL ? running_var->strides[0] : 0,
            .n = n,
            .c = c,
            .l = l,
            .momentum = momentum,
            .eps = eps,
            .f64 = input->dtype == YG_FLOAT64,
            .rm_f64 = running_mean != NULL && running_mean->dtype == YG_FLOAT64,
            .rv_f64 = running_var != NULL && running_var->dtype == YG_FLOAT64,
            .training = training,
        };
        st = launch(op, input->storage->device_index, bn_forward_launch, &a);
    }
    yg_release(x);
    yg_release(w);
    yg_release(b);
    return st;
}

yg_status yg__cuda_native_batch_norm_backward_fused_out(const yg_tensor *grad_out,
                                                        const yg_tensor *input,
                                                        const yg_tensor *weight,
                                                        const yg_tensor *save_mean,
                                                        const yg_tensor *save_invstd,
                                                        bool training,
                                                        const bool *grad_input_mask,
                                                        yg_tensor *out_grad_input,
                                                        yg_tensor *out_grad_weight,
                                                        yg_tensor *out_grad_bias) {
    const char *op = "native_batch_norm_backward_fused";
    int64_t n = 0, c = 0, l = 0;
    yg_tensor *g = NULL, *x = NULL, *w = NULL, *mu = NULL, *inv = NULL;
    yg_status st;

    (void)grad_input_mask;
    YG_RETURN_IF_ERROR(yg__batch_norm_geometry(op, input, &n, &c, &l));
    st = yg__tensor_contiguous_as(grad_out, input->dtype, true, &g);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(input, input->dtype, true, &x);
    if (st == YG_OK)
        st = contiguous(weight, &w);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(save_mean, input->dtype, true, &mu);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(save_invstd, input->dtype, true, &inv);
    if (st == YG_OK) {
        /* Every channel of gw and gb is written by the kernel. */
        yg__cuda_bn_backward_args a = {
            .g = yg__tensor_ptr(g),
            .x = yg__tensor_ptr(x),
            .w = data_or_null(w),
            .mean = yg__tensor_ptr(mu),
            .invstd = yg__tensor_ptr(inv),
            .gi = out_or_null(out_grad_input),
            .gw = out_or_null(out_grad_weight),
            .gb = out_or_null(out_grad_bias),
            .n = n,
            .c = c,
            .l = l,
            .f64 = input->dtype == YG_FLOAT64,
            .training = training,
        };
        st = launch(op, input->storage->device_index, bn_backward_launch, &a);
    }
    yg_release(g);
    yg_release(x);
    yg_release(w);
    yg_release(mu);
    yg_release(inv);
    return st;
}
