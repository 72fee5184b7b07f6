/*
 * meta/upsample.h - what both devices' bilinear upsampling kernels share
 * (cpu/upsample.c, cuda/upsample.c): the checks of self (or self_sizes),
 * output_size, the scales and grad_output, with their messages, and the
 * interpolation taps of every output row and column, which one function
 * makes on the host for both devices, so both read the same coordinates
 * and weights.  Read by C and by nvcc (cuda/upsample.h, for the tap).
 * Not public API.
 *
 * The coordinate mapping is PyTorch's (meta/upsample.c says which
 * formulas), so results match torch.nn.functional.interpolate(
 * mode="bilinear").  Every function names op in its messages.
 */
#ifndef YAGRAD_META_UPSAMPLE_H
#define YAGRAD_META_UPSAMPLE_H

#include "yagrad/tensor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The tap of one output row or column: its two input neighbours i0 <= i1
 * (equal at the last one) and their weights.  One definition for both
 * devices, so the host's taps copy to the GPU byte for byte. */
typedef struct yg_lerp_tap {
    int64_t i0, i1;
    double w0, w1;
} yg_lerp_tap;

#ifdef __cplusplus
extern "C" {
#endif

/* upsample_bilinear2d: checks self (floating, [C, H, W] or [N, C, H, W],
 * no empty plane) and its output size, from output_size (1 or 2 entries)
 * or, when output_size is empty, floor(in * scale) per dim (both scales
 * then given); each output size in [1, 2^59].  A scale (nullable: None)
 * is positive and finite when given.  Gives the planes (N C), ih, iw and
 * o = {oh, ow}. */
yg_status yg__upsample_bilinear_geometry(const char *op,
                                         const yg_tensor *self,
                                         const int64_t *output_size,
                                         int64_t output_size_len,
                                         const double *scales_h,
                                         const double *scales_w,
                                         int64_t *planes,
                                         int64_t *ih,
                                         int64_t *iw,
                                         int64_t o[2]);

/* Its gradient: checks self_sizes as self above (with grad_output's
 * dtype), and that grad_output has the leading dims of self_sizes and a
 * non-empty plane ("<op>: grad_output [..] does not match the leading
 * dims of self_sizes [..]"), and the scales as above.  Gives the planes,
 * ih, iw and o = {oh, ow}, grad_output's plane. */
yg_status yg__upsample_bilinear_backward_geometry(const char *op,
                                                  const yg_tensor *grad_output,
                                                  const int64_t *self_sizes,
                                                  int64_t self_sizes_len,
                                                  const double *scales_h,
                                                  const double *scales_w,
                                                  int64_t *planes,
                                                  int64_t *ih,
                                                  int64_t *iw,
                                                  int64_t o[2]);

/* The taps of every output row and column, in one host allocation: *taps
 * holds oh row taps, then ow column taps, and is released with
 * yg__free(*taps, *nbytes).  A source coordinate is the output's divided
 * by its scale when given (checked), else scaled by in / out.  Fails with YG_ERR_OUT_OF_MEMORY
 * ("upsample_bilinear2d: out of memory for oh + ow interpolation
 * weights"), *taps NULL. */
yg_status yg__upsample_bilinear_taps(int64_t ih,
                                     int64_t iw,
                                     int64_t oh,
                                     int64_t ow,
                                     bool align_corners,
                                     const double *scales_h,
                                     const double *scales_w,
                                     yg_lerp_tap **taps,
                                     size_t *nbytes);

#ifdef __cplusplus
}
#endif

#endif /* YAGRAD_META_UPSAMPLE_H */
