/*
 * conv/conv.h - the convolution dispatcher's interface to the rest of the
 * runtime: the validated parameters of one call, backend selection, and
 * the registry of backends (conv/native.c, conv/onednn.c, conv/cudnn.c),
 * each behind the same three passes.  Not public API.
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

/* Whether this thread's convolutions have a forced backend (its own, or
 * YG_CONV_BACKEND set and not empty): then nothing falls back.  Cannot
 * fail. */
bool yg__conv_is_forced(void);

/* Records that the pass just run went to backend ran instead of the one
 * yg__conv_select chose, and why (yg_conv_last_backend,
 * yg_conv_last_note).  Cannot fail. */
void yg__conv_note_fallback(yg_conv_backend ran, const char *why);

/* A convolution backend: the three passes of an ordinary convolution A
 * over contiguous operands of p->dtype in the memory of device (x, w, y,
 * bias; bias nullable).  Messages carry no op name.  Each returns YG_OK,
 * YG_ERR_OUT_OF_MEMORY (buffers, workspaces), YG_ERR_NOT_IMPLEMENTED (a
 * case it has no algorithm for), YG_ERR_DEVICE or YG_ERR_INTERNAL (its
 * library's failure, named).
 *
 * The registry (select.c) holds one per yg_conv_backend: native.c and,
 * when built, onednn.c are in the library; cudnn.c is part of the CUDA
 * module and registers itself when the module loads. */
typedef struct yg_conv_impl {
    yg_device device; /* whose memory the passes read and write */

    /* Why the backend does not take p ("float64: oneDNN has no float64
     * convolution"), or NULL when it does; NULL for a backend that takes
     * every case.  A static string.  Cannot fail. */
    const char *(*refuses)(const yg_conv_params *p);

    /* y = A(x) (+ bias per y channel) */
    yg_status (*forward)(
        const yg_conv_params *p, const void *x, const void *w, const void *bias, void *y);
    /* x = A^T(y) (+ bias per x channel): the data gradient */
    yg_status (*data)(
        const yg_conv_params *p, const void *y, const void *w, const void *bias, void *x);
    /* w = the gradient of <y, A_w(x)> in w (overwritten) */
    yg_status (*weight)(const yg_conv_params *p, const void *y, const void *x, void *w);
    /* Optional (NULL: data, then weight): both gradients of an ordinary
     * (not transposed) convolution in one call, gx = A^T(y) and gw, so a
     * backend can share work between them (oneDNN converts y to its
     * layout once). */
    yg_status (*backward)(
        const yg_conv_params *p, const void *y, const void *x, const void *w, void *gx, void *gw);
} yg_conv_impl;

/* Makes impl (static, never freed) the backend b.  Cannot fail. */
void yg__conv_register(yg_conv_backend b, const yg_conv_impl *impl);

/* The backend b, or NULL when this process has none (not built, or, for
 * cudnn, the CUDA module not loadable: asking loads it).  Cannot fail. */
const yg_conv_impl *yg__conv_impl(yg_conv_backend b);

/* native.c: im2col and BLAS, float32 and float64, every case; fails only
 * with YG_ERR_OUT_OF_MEMORY. */
extern const yg_conv_impl yg__conv_native;

/* onednn.c (built with oneDNN): oneDNN primitives, float32 only. */
extern const yg_conv_impl yg__conv_onednn;

/* cudnn.c (in the CUDA module, built with cuDNN) registers cuDNN on
 * device p->device_index, float32 or float64: the algorithm is chosen per
 * geometry under a workspace limit (cudnnGet*_v7 heuristics, or
 * cudnnFind*Ex timings when p->benchmark; only deterministic ones when
 * p->deterministic) and cached. */

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
