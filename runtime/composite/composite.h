/*
 * composite.h - ops without kernels of their own.  Each is declared in
 * specs/native_functions.yaml with neither `dispatch:` nor `pointwise:`;
 * the generated yg_<op> calls yg__composite_<op>, which is written here in
 * terms of other public ops, so autograd records (and differentiates) its
 * parts.  Same signature and contract as the public op.  Not public API.
 */
#ifndef YAGRAD_COMPOSITE_H
#define YAGRAD_COMPOSITE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "yagrad/random.h"

/* Whether a composite must run as its parts (public ops): autograd would
 * record them (grad mode is on and one of inputs, n_inputs entries,
 * NULL-safe, requires grad) or a tracer would (trace_through_composites).
 * When it returns false a composite may run a fused kernel instead, e.g.
 * a backward formula's first-order run, whose result needs no history;
 * with create_graph the parts run and stay differentiable.  Cannot fail. */
bool yg__composite_needs_parts(const yg_tensor *const *inputs, int n_inputs);

yg_status yg__composite_sum_backward(const yg_tensor *grad,
                                     const int64_t *sizes,
                                     int64_t sizes_len,
                                     const int64_t *dim,
                                     int64_t dim_len,
                                     bool keepdim,
                                     yg_tensor **out);
yg_status yg__composite_mean_backward(const yg_tensor *grad,
                                      const int64_t *sizes,
                                      int64_t sizes_len,
                                      const int64_t *dim,
                                      int64_t dim_len,
                                      bool keepdim,
                                      yg_tensor **out);
yg_status yg__composite_sum_to(const yg_tensor *self,
                               const int64_t *size,
                               int64_t size_len,
                               yg_tensor **out);
yg_status yg__composite_matmul(const yg_tensor *self, const yg_tensor *other, yg_tensor **out);
yg_status yg__composite_linear(const yg_tensor *input,
                               const yg_tensor *weight,
                               const yg_tensor *bias,
                               yg_tensor **out);
yg_status yg__composite_reshape(const yg_tensor *self,
                                const int64_t *shape,
                                int64_t shape_len,
                                yg_tensor **out);

yg_status yg__composite_permute_backward(const yg_tensor *grad,
                                         const int64_t *dims,
                                         int64_t dims_len,
                                         yg_tensor **out);
yg_status yg__composite_narrow(const yg_tensor *self,
                               int64_t dim,
                               int64_t start,
                               int64_t length,
                               yg_tensor **out);
yg_status yg__composite_flatten(const yg_tensor *self,
                                int64_t start_dim,
                                int64_t end_dim,
                                yg_tensor **out);
yg_status yg__composite_contiguous(const yg_tensor *self, yg_tensor **out);
yg_status yg__composite_repeat(const yg_tensor *self,
                               const int64_t *repeats,
                               int64_t repeats_len,
                               yg_tensor **out);
yg_status yg__composite_constant_pad_nd_backward(const yg_tensor *grad,
                                                 const int64_t *pad,
                                                 int64_t pad_len,
                                                 yg_tensor **out);
yg_status yg__composite_scatter_src_backward(const yg_tensor *grad_output,
                                             int64_t dim,
                                             const yg_tensor *index,
                                             const int64_t *src_sizes,
                                             int64_t src_sizes_len,
                                             yg_tensor **out);
yg_status yg__composite_prod(const yg_tensor *self, yg_tensor **out);
yg_status yg__composite_max(const yg_tensor *self, yg_tensor **out);
yg_status yg__composite_min(const yg_tensor *self, yg_tensor **out);
yg_status yg__composite_var_backward(const yg_tensor *grad,
                                     const yg_tensor *self,
                                     const int64_t *dim,
                                     int64_t dim_len,
                                     int64_t correction,
                                     bool keepdim,
                                     yg_tensor **out);
yg_status yg__composite_logsumexp_backward(const yg_tensor *grad,
                                           const yg_tensor *self,
                                           const yg_tensor *output,
                                           const int64_t *dim,
                                           int64_t dim_len,
                                           bool keepdim,
                                           yg_tensor **out);
yg_status yg__composite_cumsum_backward(const yg_tensor *grad, int64_t dim, yg_tensor **out);
yg_status yg__composite_value_selecting_reduction_backward(const yg_tensor *grad,
                                                           int64_t dim,
                                                           const yg_tensor *indices,
                                                           const int64_t *sizes,
                                                           int64_t sizes_len,
                                                           bool keepdim,
                                                           yg_tensor **out);
yg_status yg__composite_dot(const yg_tensor *self, const yg_tensor *tensor, yg_tensor **out);
yg_status yg__composite_mv(const yg_tensor *self, const yg_tensor *vec, yg_tensor **out);
yg_status yg__composite_outer(const yg_tensor *self, const yg_tensor *vec2, yg_tensor **out);
yg_status yg__composite_mm_mat1_backward(const yg_tensor *grad,
                                         const yg_tensor *mat1,
                                         const yg_tensor *mat2,
                                         yg_tensor **out);
yg_status yg__composite_mm_mat2_backward(const yg_tensor *grad,
                                         const yg_tensor *mat1,
                                         const yg_tensor *mat2,
                                         yg_tensor **out);
yg_status yg__composite_addmm(const yg_tensor *self,
                              const yg_tensor *mat1,
                              const yg_tensor *mat2,
                              double beta,
                              double alpha,
                              yg_tensor **out);
yg_status yg__composite_baddbmm(const yg_tensor *self,
                                const yg_tensor *batch1,
                                const yg_tensor *batch2,
                                double beta,
                                double alpha,
                                yg_tensor **out);
yg_status yg__composite_softmax_backward(const yg_tensor *grad_output,
                                         const yg_tensor *output,
                                         int64_t dim,
                                         yg_tensor **out);
yg_status yg__composite_log_softmax_jvp(const yg_tensor *grad,
                                        const yg_tensor *output,
                                        int64_t dim,
                                        yg_tensor **out);
yg_status yg__composite_mse_loss(const yg_tensor *self,
                                 const yg_tensor *target,
                                 int64_t reduction,
                                 yg_tensor **out);
yg_status yg__composite_l1_loss(const yg_tensor *self,
                                const yg_tensor *target,
                                int64_t reduction,
                                yg_tensor **out);
yg_status yg__composite_smooth_l1_loss(const yg_tensor *self,
                                       const yg_tensor *target,
                                       int64_t reduction,
                                       double beta,
                                       yg_tensor **out);
yg_status yg__composite_binary_cross_entropy(const yg_tensor *self,
                                             const yg_tensor *target,
                                             const yg_tensor *weight,
                                             int64_t reduction,
                                             yg_tensor **out);
yg_status yg__composite_binary_cross_entropy_with_logits(const yg_tensor *self,
                                                         const yg_tensor *target,
                                                         const yg_tensor *weight,
                                                         const yg_tensor *pos_weight,
                                                         int64_t reduction,
                                                         yg_tensor **out);
yg_status yg__composite_cross_entropy(const yg_tensor *self,
                                      const yg_tensor *target,
                                      const yg_tensor *weight,
                                      int64_t reduction,
                                      int64_t ignore_index,
                                      yg_tensor **out);
yg_status yg__composite_layer_norm(const yg_tensor *input,
                                   const int64_t *normalized_shape,
                                   int64_t normalized_shape_len,
                                   const yg_tensor *weight,
                                   const yg_tensor *bias,
                                   double eps,
                                   yg_tensor **out);
yg_status yg__composite_lstm_cell(const yg_tensor *input,
                                  const yg_tensor *hx,
                                  const yg_tensor *cx,
                                  const yg_tensor *w_ih,
                                  const yg_tensor *w_hh,
                                  const yg_tensor *b_ih,
                                  const yg_tensor *b_hh,
                                  yg_tensor **out_hy,
                                  yg_tensor **out_cy);
yg_status yg__composite_lstm_cell_gates_backward(const yg_tensor *grad_hy,
                                                 const yg_tensor *grad_cy,
                                                 const yg_tensor *input_gates,
                                                 const yg_tensor *hidden_gates,
                                                 const yg_tensor *cx,
                                                 const bool *grad_input_mask,
                                                 yg_tensor **out_grad_input_gates,
                                                 yg_tensor **out_grad_hidden_gates,
                                                 yg_tensor **out_grad_cx);
yg_status yg__composite_gru_cell(const yg_tensor *input,
                                 const yg_tensor *hx,
                                 const yg_tensor *w_ih,
                                 const yg_tensor *w_hh,
                                 const yg_tensor *b_ih,
                                 const yg_tensor *b_hh,
                                 yg_tensor **out);
yg_status yg__composite_stack(const yg_tensor *const *tensors,
                              int64_t tensors_len,
                              int64_t dim,
                              yg_tensor **out);
/* pointwise.c: clamp.opt, clamp with either bound optional */
yg_status yg__composite_clamp_opt(const yg_tensor *self,
                                  const double *min,
                                  const double *max,
                                  yg_tensor **out);
yg_status yg__composite_div_mode(const yg_tensor *self,
                                 const yg_tensor *other,
                                 int64_t rounding_mode,
                                 yg_tensor **out);
yg_status yg__composite_atan2_backward(const yg_tensor *grad,
                                      const yg_tensor *self,
                                      const yg_tensor *other,
                                      const bool *grad_input_mask,
                                      yg_tensor **out_grad_self,
                                      yg_tensor **out_grad_other);
yg_status yg__composite_native_layer_norm_backward(const yg_tensor *grad_out,
                                                  const yg_tensor *input,
                                                  const yg_tensor *mean,
                                                  const yg_tensor *rstd,
                                                  const yg_tensor *weight,
                                                  const int64_t *normalized_shape,
                                                  int64_t normalized_shape_len,
                                                  double eps,
                                                  const bool *grad_input_mask,
                                                  yg_tensor **out_grad_input,
                                                  yg_tensor **out_grad_weight,
                                                  yg_tensor **out_grad_bias);
yg_status yg__composite_native_batch_norm_backward(const yg_tensor *grad_out,
                                                  const yg_tensor *input,
                                                  const yg_tensor *weight,
                                                  const yg_tensor *save_mean,
                                                  const yg_tensor *save_invstd,
                                                  bool training,
                                                  double eps,
                                                  const bool *grad_input_mask,
                                                  yg_tensor **out_grad_input,
                                                  yg_tensor **out_grad_weight,
                                                  yg_tensor **out_grad_bias);
/* conv.c: the convolution front ends and convolution_backward */
yg_status yg__composite_conv1d(const yg_tensor *input,
                               const yg_tensor *weight,
                               const yg_tensor *bias,
                               const int64_t *stride,
                               int64_t stride_len,
                               const int64_t *padding,
                               int64_t padding_len,
                               const int64_t *dilation,
                               int64_t dilation_len,
                               int64_t groups,
                               yg_tensor **out);
yg_status yg__composite_conv1d_padding(const yg_tensor *input,
                                       const yg_tensor *weight,
                                       const yg_tensor *bias,
                                       const int64_t *stride,
                                       int64_t stride_len,
                                       int64_t padding,
                                       const int64_t *dilation,
                                       int64_t dilation_len,
                                       int64_t groups,
                                       yg_tensor **out);
yg_status yg__composite_conv2d(const yg_tensor *input,
                               const yg_tensor *weight,
                               const yg_tensor *bias,
                               const int64_t *stride,
                               int64_t stride_len,
                               const int64_t *padding,
                               int64_t padding_len,
                               const int64_t *dilation,
                               int64_t dilation_len,
                               int64_t groups,
                               yg_tensor **out);
yg_status yg__composite_conv2d_padding(const yg_tensor *input,
                                       const yg_tensor *weight,
                                       const yg_tensor *bias,
                                       const int64_t *stride,
                                       int64_t stride_len,
                                       int64_t padding,
                                       const int64_t *dilation,
                                       int64_t dilation_len,
                                       int64_t groups,
                                       yg_tensor **out);
yg_status yg__composite_conv3d(const yg_tensor *input,
                               const yg_tensor *weight,
                               const yg_tensor *bias,
                               const int64_t *stride,
                               int64_t stride_len,
                               const int64_t *padding,
                               int64_t padding_len,
                               const int64_t *dilation,
                               int64_t dilation_len,
                               int64_t groups,
                               yg_tensor **out);
yg_status yg__composite_conv3d_padding(const yg_tensor *input,
                                       const yg_tensor *weight,
                                       const yg_tensor *bias,
                                       const int64_t *stride,
                                       int64_t stride_len,
                                       int64_t padding,
                                       const int64_t *dilation,
                                       int64_t dilation_len,
                                       int64_t groups,
                                       yg_tensor **out);
yg_status yg__composite_conv_transpose1d(const yg_tensor *input,
                                         const yg_tensor *weight,
                                         const yg_tensor *bias,
                                         const int64_t *stride,
                                         int64_t stride_len,
                                         const int64_t *padding,
                                         int64_t padding_len,
                                         const int64_t *output_padding,
                                         int64_t output_padding_len,
                                         int64_t groups,
                                         const int64_t *dilation,
                                         int64_t dilation_len,
                                         yg_tensor **out);
yg_status yg__composite_conv_transpose2d(const yg_tensor *input,
                                         const yg_tensor *weight,
                                         const yg_tensor *bias,
                                         const int64_t *stride,
                                         int64_t stride_len,
                                         const int64_t *padding,
                                         int64_t padding_len,
                                         const int64_t *output_padding,
                                         int64_t output_padding_len,
                                         int64_t groups,
                                         const int64_t *dilation,
                                         int64_t dilation_len,
                                         yg_tensor **out);
yg_status yg__composite_conv_transpose3d(const yg_tensor *input,
                                         const yg_tensor *weight,
                                         const yg_tensor *bias,
                                         const int64_t *stride,
                                         int64_t stride_len,
                                         const int64_t *padding,
                                         int64_t padding_len,
                                         const int64_t *output_padding,
                                         int64_t output_padding_len,
                                         int64_t groups,
                                         const int64_t *dilation,
                                         int64_t dilation_len,
                                         yg_tensor **out);
yg_status yg__composite_convolution(const yg_tensor *input,
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
                                    yg_tensor **out);
yg_status yg__composite_convolution_backward(const yg_tensor *grad_output,
                                             const yg_tensor *input,
                                             const yg_tensor *weight,
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
                                             const bool *output_mask,
                                             yg_tensor **out_grad_input,
                                             yg_tensor **out_grad_weight,
                                             yg_tensor **out_grad_bias);
yg_status yg__composite_scaled_dot_product_attention(const yg_tensor *query,
                                                     const yg_tensor *key,
                                                     const yg_tensor *value,
                                                     const yg_tensor *attn_mask,
                                                     bool is_causal,
                                                     const double *scale,
                                                     yg_tensor **out);
yg_status yg__composite_group_norm(const yg_tensor *input,
                                   int64_t num_groups,
                                   const yg_tensor *weight,
                                   const yg_tensor *bias,
                                   double eps,
                                   yg_tensor **out);

/* creation.c: *_like creation ops and dropout */
yg_status yg__composite_zeros_like(const yg_tensor *self,
                                   const yg_dtype *dtype,
                                   const yg_device *device,
                                   yg_tensor **out);
yg_status yg__composite_ones_like(const yg_tensor *self,
                                  const yg_dtype *dtype,
                                  const yg_device *device,
                                  yg_tensor **out);
yg_status yg__composite_full_like(const yg_tensor *self,
                                  double fill_value,
                                  const yg_dtype *dtype,
                                  const yg_device *device,
                                  yg_tensor **out);
yg_status yg__composite_empty_like(const yg_tensor *self,
                                   const yg_dtype *dtype,
                                   const yg_device *device,
                                   yg_tensor **out);
yg_status yg__composite_rand_like(const yg_tensor *self,
                                  yg_generator *generator,
                                  const yg_dtype *dtype,
                                  const yg_device *device,
                                  yg_tensor **out);
yg_status yg__composite_randn_like(const yg_tensor *self,
                                   yg_generator *generator,
                                   const yg_dtype *dtype,
                                   const yg_device *device,
                                   yg_tensor **out);
yg_status yg__composite_dropout(const yg_tensor *input,
                                double p,
                                bool train,
                                yg_generator *generator,
                                yg_tensor **out);

/* ---- nn-ops: batch_norm, max pooling with indices, padding modes ---- */
yg_status yg__composite_batch_norm(const yg_tensor *input,
                                   const yg_tensor *weight,
                                   const yg_tensor *bias,
                                   yg_tensor *running_mean,
                                   yg_tensor *running_var,
                                   bool training,
                                   double momentum,
                                   double eps,
                                   yg_tensor **out);
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
                                   yg_tensor **out);
yg_status yg__composite_max_pool2d_with_indices_backward(const yg_tensor *grad_output,
                                                         const yg_tensor *indices,
                                                         const int64_t *self_sizes,
                                                         int64_t self_sizes_len,
                                                         yg_tensor **out);
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
                                                yg_tensor **out_indices);
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
                                   yg_tensor **out);
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
                                   yg_tensor **out);
yg_status yg__composite_max_pool3d_with_indices_backward(const yg_tensor *grad_output,
                                                         const yg_tensor *indices,
                                                         const int64_t *self_sizes,
                                                         int64_t self_sizes_len,
                                                         yg_tensor **out);
yg_status yg__composite_avg_pool1d(const yg_tensor *self,
                                   const int64_t *kernel_size,
                                   int64_t kernel_size_len,
                                   const int64_t *stride,
                                   int64_t stride_len,
                                   const int64_t *padding,
                                   int64_t padding_len,
                                   bool ceil_mode,
                                   bool count_include_pad,
                                   yg_tensor **out);
yg_status yg__composite_adaptive_avg_pool1d(const yg_tensor *self,
                                            const int64_t *output_size,
                                            int64_t output_size_len,
                                            yg_tensor **out);
yg_status yg__composite_pad(const yg_tensor *self,
                            const int64_t *pad,
                            int64_t pad_len,
                            int64_t mode,
                            double value,
                            yg_tensor **out);
/* index.c: the gradients of advanced indexing */
yg_status yg__composite_index_backward(const yg_tensor *grad_output,
                                       const int64_t *self_sizes,
                                       int64_t self_sizes_len,
                                       const yg_tensor *const *indices,
                                       int64_t indices_len,
                                       yg_tensor **out);
yg_status yg__composite_index_put_self_backward(const yg_tensor *grad,
                                                const yg_tensor *const *indices,
                                                int64_t indices_len,
                                                bool accumulate,
                                                yg_tensor **out);
/* convert.c: dtype conversion */
yg_status yg__composite_to_dtype(const yg_tensor *self, yg_dtype dtype, bool copy, yg_tensor **out);
yg_status yg__composite_type_as(const yg_tensor *self, const yg_tensor *other, yg_tensor **out);

/* pool.c: the adjoints of adaptive_avg_pool2d_backward and
 * upsample_nearest2d_backward (double-backward) */
yg_status yg__composite_adaptive_avg_pool2d_to(const yg_tensor *self,
                                               const int64_t *sizes,
                                               int64_t sizes_len,
                                               yg_tensor **out);
yg_status yg__composite_upsample_nearest2d_to(const yg_tensor *self,
                                              const int64_t *sizes,
                                              int64_t sizes_len,
                                              yg_tensor **out);
/* The check of the *_to ops: sizes are the result's full sizes, whose
 * leading dims (all but the last nsp) must be self's. */
yg_status
yg__check_to_sizes(const yg_tensor *self, const int64_t *sizes, int64_t sizes_len, int64_t nsp);
yg_status yg__composite_adaptive_avg_pool3d_to(const yg_tensor *self,
                                               const int64_t *sizes,
                                               int64_t sizes_len,
                                               yg_tensor **out);

/* resample.c: upsample_bilinear2d_to (double-backward), interpolate,
 * pixel_shuffle, pixel_unshuffle, channel_shuffle */
yg_status yg__composite_upsample_bilinear2d_to(const yg_tensor *self,
                                               const int64_t *sizes,
                                               int64_t sizes_len,
                                               bool align_corners,
                                               double scales_h,
                                               double scales_w,
                                               yg_tensor **out);
yg_status yg__composite_interpolate(const yg_tensor *self,
                                    const int64_t *size,
                                    int64_t size_len,
                                    double scale_factor,
                                    int64_t mode,
                                    bool align_corners,
                                    yg_tensor **out);
yg_status
yg__composite_pixel_shuffle(const yg_tensor *self, int64_t upscale_factor, yg_tensor **out);
yg_status
yg__composite_pixel_unshuffle(const yg_tensor *self, int64_t downscale_factor, yg_tensor **out);
yg_status yg__composite_channel_shuffle(const yg_tensor *self, int64_t groups, yg_tensor **out);

#endif /* YAGRAD_COMPOSITE_H */
