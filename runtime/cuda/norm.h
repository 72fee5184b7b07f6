/*
 * cuda/norm.h - the batch_norm kernels of cuda/norm.cu as host C code
 * calls them (cuda/norm.c for cpu/norm.c).  Read by C and by nvcc.  Not
 * public API.
 */
#ifndef YAGRAD_CUDA_NORM_H
#define YAGRAD_CUDA_NORM_H

#include <stdint.h>

/* One native_batch_norm call on an input seen as [n, c, l]: x, y
 * contiguous; w, b, save_mean, save_invstd contiguous [c] (w, b may be
 * NULL: 1 and 0); all of the input's dtype (f64: float64, else
 * float32).  rm, rv: the running statistics, [c] of their own dtype
 * (rm_f64, rv_f64) and stride, or NULL. */
typedef struct yg__cuda_bn_args {
    const void *x, *w, *b;
    void *y, *save_mean, *save_invstd;
    void *rm, *rv;
    int64_t rm_stride, rv_stride;
    int64_t n, c, l;
    double momentum, eps;
    int32_t f64, rm_f64, rv_f64, training;
} yg__cuda_bn_args;

/* One native_batch_norm_backward_fused call: g, x, gi contiguous [n, c,
 * l]; w, mean, invstd, gw, gb contiguous [c]; w, gi, gw, gb may be NULL. */
typedef struct yg__cuda_bn_backward_args {
    const void *g, *x, *w, *mean, *invstd;
    void *gi, *gw, *gb;
    int64_t n, c, l;
    int32_t f64, training;
} yg__cuda_bn_backward_args;

#ifdef __cplusplus
extern "C" {
#endif

/* Launch on the calling thread's current stream (YG_CUDA_STREAM); the
 * launch's cudaError_t (0: launched). */
int yg__cuda_batch_norm_launch(const yg__cuda_bn_args *a);
int yg__cuda_batch_norm_backward_launch(const yg__cuda_bn_backward_args *a);

#ifdef __cplusplus
}
#endif

#endif /* YAGRAD_CUDA_NORM_H */
