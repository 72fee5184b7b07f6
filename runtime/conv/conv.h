/*
 * conv/conv.h - the convolution dispatcher's interface to the rest of the
 * runtime: the validated parameters of one call, backend selection, and
 * the backends' entry points, the same three passes (forward, data
 * gradient, weight gradient) for each: conv/native.c and conv/onednn.c on
 * CPU tensors, conv/cudnn.c on CUDA tensors (each optional backend with a
 * stub, onednn_stub.c and cudnn_stub.c, when built without it).  Not
 * public API.
 *
 * Geometry.  Every convolution is handled as 3-d: a 1-d or 2-d one gets
 * size-1 leading spatial dims (stride, dilation 1, padding 0 there).  A
 * transposed convolution is the adjoint of an ordinary one, so the
 * backends only know ordinary ones: yg_conv_params describes the
 * *ordinary* convolution A (its "x side" and "y side"): for a plain
 * convolution x is the input and y the output; for a transposed one y is
 * the input and x the output, and its forward is A's data gradient.
 */
#ifndef YAGRAD_CONV_CONV_H
#define YAGRAD_CONV_CONV_H

#include "core/core.h"
#include "yagrad/conv.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct yg_conv_params {
    int32_t n_spatial;  /* 1, 2 or 3: the caller's spatial dims */
    bool transposed;    /* the caller's convolution is A's adjoint */
    int64_t batch;      /* N (0 is allowed) */
    int64_t groups;     /* G */
    int64_t cx, cy;     /* channels on A's x and y sides (both multiples of G) */
    int64_t x[3], y[3]; /* spatial sizes on the x and y sides, 3-d */
    int64_t k[3];       /* kernel sizes */
    int64_t stride[3], pad[3], dil[3];
    yg_dtype dtype;     /* float32 or float64: input, weight, bias agree */
    yg_device device;   /* where every operand is: YG_CPU or YG_CUDA */
    int device_index;   /* the CUDA device's index (0 on the cpu) */
    bool benchmark;     /* cudnn: time the algorithms once per geometry */
    bool deterministic; /* cudnn: only algorithms without atomics */
    /* A's weight is [cy, cx / G, k...] (the caller's weight as it is:
     * a transposed convolution's [C_in, C_out / G, k...] is that too) */
} yg_conv_params;

/* Validates a convolution call and fills p (benchmark and deterministic
 * from this thread's yg_conv_set_benchmark / yg_conv_set_deterministic;
 * the dispatcher also ORs in its own arguments).  Messages carry no op name
 * (the caller prefixes its own): `weight of sizes [64, 3, 3, 3] expects
 * input with 3 channels (groups 1), got input [8, 4, 32, 32]`.
 * n_spatial: the spatial dims the caller requires (1 to 3), or 0 for
 * input's dims - 2.  bias nullable.  Input must be batched [N, C, ...].
 * Returns: YG_OK; YG_ERR_SHAPE, YG_ERR_DTYPE, YG_ERR_DEVICE or
 * YG_ERR_INVALID_ARGUMENT with the message. */
yg_status yg__conv_params_init(const yg_tensor *input,
                               const yg_tensor *weight,
                               const yg_tensor *bias,
                               int32_t n_spatial,
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
                               yg_conv_params *p);

/* The caller's output sizes (ndim 2 + n_spatial) for p.  Cannot fail. */
void yg__conv_output_sizes(const yg_conv_params *p, int64_t *sizes);

/* The backend for a call: the forced one (this thread's, else
 * YG_CONV_BACKEND), else the best built one if allow_choice, else native;
 * for CUDA operands always cudnn (the only backend that takes them).
 * Fails (no op name in the message) when the forced backend is not built,
 * does not take the operands' device, or YG_CONV_BACKEND names none.
 * Records the choice as the last one. */
yg_status yg__conv_select(const yg_conv_params *p, bool allow_choice, yg_conv_backend *out);

/* native.c.  x, w, y, bias contiguous of p->dtype.  Fail only with
 * YG_ERR_OUT_OF_MEMORY (the im2col buffers). */

/* y = A(x) (+ bias per y channel; bias nullable) */
yg_status yg__conv_native_forward(const yg_conv_params *p,
                                  const void *x,
                                  const void *w,
                                  const void *bias,
                                  void *y);
/* x = A^T(y) (+ bias per x channel; nullable): the data gradient */
yg_status yg__conv_native_data(const yg_conv_params *p,
                               const void *y,
                               const void *w,
                               const void *bias,
                               void *x);
/* w = the gradient of <y, A_w(x)> in w (overwritten) */
yg_status yg__conv_native_weight(const yg_conv_params *p, const void *y, const void *x, void *w);

/* onednn.c (built with oneDNN) or onednn_stub.c (without): the same
 * three passes on oneDNN primitives, float32 only.  x, w, y, bias
 * contiguous float32.  Messages carry no op name.
 * Returns: YG_OK; YG_ERR_OUT_OF_MEMORY; YG_ERR_NOT_IMPLEMENTED (stub, or a
 * case oneDNN has no primitive for); YG_ERR_INTERNAL for any other dnnl
 * failure (its status named). */
yg_status yg__conv_onednn_forward(const yg_conv_params *p,
                                  const void *x,
                                  const void *w,
                                  const void *bias,
                                  void *y);
yg_status yg__conv_onednn_data(const yg_conv_params *p,
                               const void *y,
                               const void *w,
                               const void *bias,
                               void *x);
yg_status yg__conv_onednn_weight(const yg_conv_params *p, const void *y, const void *x, void *w);

/* Whether this build has the oneDNN backend.  Cannot fail. */
bool yg__conv_onednn_built(void);

/* Why oneDNN does not take p ("float64: oneDNN has no float64
 * convolution"), or NULL when it does.  A static string.  Cannot fail. */
const char *yg__conv_onednn_refuses(const yg_conv_params *p);

/* cudnn.c (built with cuDNN) or cudnn_stub.c (without): the same three
 * passes with cuDNN on device p->device_index, float32 or float64; x, w,
 * y, bias contiguous device memory there.  The algorithm is chosen per
 * geometry under a workspace limit (cudnnGet*_v7 heuristics, or
 * cudnnFind*Ex timings when p->benchmark; only deterministic ones when
 * p->deterministic) and cached.  Messages carry no op name.
 * Returns: YG_OK; YG_ERR_OUT_OF_MEMORY (workspace); YG_ERR_DEVICE for a
 * cuDNN or CUDA failure (cuDNN's reason named); YG_ERR_NOT_IMPLEMENTED
 * (stub, or a case no cuDNN algorithm takes). */
yg_status yg__conv_cudnn_forward(const yg_conv_params *p,
                                 const void *x,
                                 const void *w,
                                 const void *bias,
                                 void *y);
yg_status yg__conv_cudnn_data(const yg_conv_params *p,
                              const void *y,
                              const void *w,
                              const void *bias,
                              void *x);
yg_status yg__conv_cudnn_weight(const yg_conv_params *p, const void *y, const void *x, void *w);

/* Whether this build has the cuDNN backend.  Cannot fail. */
bool yg__conv_cudnn_built(void);

/* The caller's backward in one call (composite convolution_backward runs
 * it when nothing records): the gradients of the caller's convolution in
 * input, weight and bias per mask (else NULL), on the selected backend.
 * Messages carry no op name. */
yg_status yg__conv_backward(const yg_tensor *grad_output,
                            const yg_tensor *input,
                            const yg_tensor *weight,
                            const yg_conv_params *p,
                            const bool *mask,
                            yg_tensor **out_grad_input,
                            yg_tensor **out_grad_weight,
                            yg_tensor **out_grad_bias);

#endif /* YAGRAD_CONV_CONV_H */
