/*
 * cuda/ops.h - the CUDA kernels of the generated dispatch tables: each has
 * its op's kernel signature and contract (the CPU's of cpu/cpu.h, whose
 * rules and messages it keeps), and runs on the inputs' GPU.  They live
 * in the CUDA module; the generated table of an op whose `dispatch:`
 * names one for CUDA finds it there by name (core/backend.h's
 * yg_kernel_ref) on first use.  Not public API.
 */
#ifndef YAGRAD_CUDA_OPS_H
#define YAGRAD_CUDA_OPS_H

#include "yagrad/random.h"
#include "yagrad/tensor.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- softmax (cuda/softmax.c) ---- */

/* The CUDA implementations of the structured softmax and log_softmax
 * (cuda/softmax.c): fill out, which yg__meta_softmax /
 * yg__meta_log_softmax made (meta/meta.h), from self on its GPU.
 * Errors as yg__cuda_check_launch. */
yg_status yg__cuda_softmax_out(const yg_tensor *self, int64_t dim, yg_tensor *out);
yg_status yg__cuda_log_softmax_out(const yg_tensor *self, int64_t dim, yg_tensor *out);
/* ... and of log_softmax_backward and softmax_backward_fused. */
yg_status yg__cuda_log_softmax_backward_out(const yg_tensor *grad_output,
                                            const yg_tensor *output,
                                            int64_t dim,
                                            yg_tensor *out);
yg_status yg__cuda_softmax_backward_fused_out(const yg_tensor *grad_output,
                                              const yg_tensor *output,
                                              int64_t dim,
                                              yg_tensor *out);

/* ---- mm and bmm (cuda/blas.c) ---- */

/* The CUDA implementations of the structured mm and bmm (meta/meta.h):
 * cuBLAS.  Errors name the op (YG_ERR_DEVICE with cuBLAS's reason). */
yg_status yg__cuda_mm_out(const yg_tensor *self, const yg_tensor *mat2, yg_tensor *out);
yg_status yg__cuda_bmm_out(const yg_tensor *self, const yg_tensor *mat2, yg_tensor *out);

/* ---- index ops (cuda/index.c) ---- */

/* The CUDA implementations of the structured index_select, gather, the
 * scatters, embedding and their gradients (meta/meta.h). */
yg_status yg__cuda_index_select_out(const yg_tensor *self,
                               int64_t dim,
                               const yg_tensor *index,
                               yg_tensor *out);
yg_status yg__cuda_index_select_backward_out(const yg_tensor *grad_output,
                                        const int64_t *self_sizes,
                                        int64_t self_sizes_len,
                                        int64_t dim,
                                        const yg_tensor *index,
                                        yg_tensor *out);
yg_status yg__cuda_gather_out(const yg_tensor *self,
                         int64_t dim,
                         const yg_tensor *index,
                         yg_tensor *out);
yg_status yg__cuda_gather_backward_out(const yg_tensor *grad_output,
                                  const int64_t *self_sizes,
                                  int64_t self_sizes_len,
                                  int64_t dim,
                                  const yg_tensor *index,
                                  yg_tensor *out);
yg_status yg__cuda_scatter_out(const yg_tensor *self,
                          int64_t dim,
                          const yg_tensor *index,
                          const yg_tensor *src,
                          yg_tensor *out);
yg_status yg__cuda_scatter_value_out(const yg_tensor *self,
                                int64_t dim,
                                const yg_tensor *index,
                                double value,
                                yg_tensor *out);
yg_status yg__cuda_scatter_add_out(const yg_tensor *self,
                              int64_t dim,
                              const yg_tensor *index,
                              const yg_tensor *src,
                              yg_tensor *out);
yg_status yg__cuda_embedding_out(const yg_tensor *weight,
                            const yg_tensor *indices,
                            int64_t padding_idx,
                            yg_tensor *out);
yg_status yg__cuda_embedding_backward_out(const yg_tensor *grad_output,
                                     const yg_tensor *indices,
                                     const int64_t *weight_sizes,
                                     int64_t weight_sizes_len,
                                     int64_t padding_idx,
                                     yg_tensor *out);

/* ---- cat (cuda/join.c), tril and triu (cuda/triangle.c) ---- */

/* The CUDA implementations of the structured cat, tril and triu
 * (meta/meta.h).  Errors name the op (YG_ERR_DEVICE). */
yg_status yg__cuda_cat_out(const yg_tensor *const *tensors,
                           int64_t tensors_len,
                           int64_t dim,
                           yg_tensor *out);
yg_status yg__cuda_tril_out(const yg_tensor *self, int64_t diagonal, yg_tensor *out);
yg_status yg__cuda_triu_out(const yg_tensor *self, int64_t diagonal, yg_tensor *out);

/* ---- advanced indexing (cuda/index_advanced.c) ---- */

yg_status yg__cuda_index(const yg_tensor *self,
                           const yg_tensor *const *indices,
                           int64_t indices_len,
                           yg_tensor **out);
yg_status yg__cuda_index_put(const yg_tensor *self,
                               const yg_tensor *const *indices,
                               int64_t indices_len,
                               const yg_tensor *values,
                               bool accumulate,
                               yg_tensor **out);
yg_status yg__cuda_index_put_(yg_tensor *self,
                                const yg_tensor *const *indices,
                                int64_t indices_len,
                                const yg_tensor *values,
                                bool accumulate,
                                yg_tensor **out);

/* ---- losses (cuda/loss.c) ---- */

/* The CUDA implementations of the structured nll_loss and
 * nll_loss_backward: fill out, which yg__meta_nll_loss /
 * yg__meta_nll_loss_backward made (meta/meta.h, the backward's zero).
 * Errors as yg__cuda_check_launch. */
yg_status yg__cuda_nll_loss_out(const yg_tensor *self,
                                const yg_tensor *target,
                                const yg_tensor *weight,
                                int64_t reduction,
                                int64_t ignore_index,
                                yg_tensor *out);
yg_status yg__cuda_nll_loss_backward_out(const yg_tensor *grad_output,
                                         const yg_tensor *target,
                                         const yg_tensor *weight,
                                         const int64_t *self_sizes,
                                         int64_t self_sizes_len,
                                         int64_t reduction,
                                         int64_t ignore_index,
                                         yg_tensor *out);

/* ---- normalization (cuda/norm.c) ---- */

/* The CUDA implementations of the structured native_layer_norm,
 * native_layer_norm_backward_fused, native_batch_norm and
 * native_batch_norm_backward_fused (meta/meta.h).  Errors as
 * yg__cuda_check_launch. */
yg_status yg__cuda_native_layer_norm_out(const yg_tensor *input,
                                    const int64_t *normalized_shape,
                                    int64_t normalized_shape_len,
                                    const yg_tensor *weight,
                                    const yg_tensor *bias,
                                    double eps,
                                    yg_tensor *out_output,
                                    yg_tensor *out_mean,
                                    yg_tensor *out_rstd);
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
                                                   yg_tensor *out_grad_bias);
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
                                       yg_tensor *out_save_invstd);
yg_status yg__cuda_native_batch_norm_backward_fused_out(const yg_tensor *grad_out,
                                                      const yg_tensor *input,
                                                      const yg_tensor *weight,
                                                      const yg_tensor *save_mean,
                                                      const yg_tensor *save_invstd,
                                                      bool training,
                                                      const bool *grad_input_mask,
                                                      yg_tensor *out_grad_input,
                                                      yg_tensor *out_grad_weight,
                                                      yg_tensor *out_grad_bias);

/* ---- padding (cuda/pad.c) ---- */

yg_status yg__cuda_reflection_pad(const yg_tensor *self,
                                 const int64_t *pad,
                                 int64_t pad_len,
                                 yg_tensor **out);
yg_status yg__cuda_replication_pad(const yg_tensor *self,
                                  const int64_t *pad,
                                  int64_t pad_len,
                                  yg_tensor **out);
yg_status yg__cuda_reflection_pad_backward(const yg_tensor *grad_output,
                                          const int64_t *self_sizes,
                                          int64_t self_sizes_len,
                                          const int64_t *pad,
                                          int64_t pad_len,
                                          yg_tensor **out);
yg_status yg__cuda_replication_pad_backward(const yg_tensor *grad_output,
                                           const int64_t *self_sizes,
                                           int64_t self_sizes_len,
                                           const int64_t *pad,
                                           int64_t pad_len,
                                           yg_tensor **out);

/* ---- random ops (cuda/random.c) ---- */

yg_status yg__cuda_rand_out(const int64_t *size,
                       int64_t size_len,
                       yg_generator *generator,
                       const yg_dtype *dtype,
                       const yg_device *device,
                       yg_tensor *out);
yg_status yg__cuda_randn_out(const int64_t *size,
                        int64_t size_len,
                        yg_generator *generator,
                        const yg_dtype *dtype,
                        const yg_device *device,
                        yg_tensor *out);
yg_status yg__cuda_randint_out(int64_t low,
                          int64_t high,
                          const int64_t *size,
                          int64_t size_len,
                          yg_generator *generator,
                          const yg_dtype *dtype,
                          const yg_device *device,
                          yg_tensor *out);
yg_status yg__cuda_bernoulli_out(const yg_tensor *self, yg_generator *generator, yg_tensor *out);
yg_status yg__cuda_bernoulli_p_out(const yg_tensor *self,
                              double p,
                              yg_generator *generator,
                              yg_tensor *out);

/* ---- recurrent cells (cuda/rnn.c) ---- */

/* The CUDA implementations of the structured lstm_cell_gates and
 * lstm_cell_gates_backward_fused (meta/meta.h).  Errors as
 * yg__cuda_check_launch. */
yg_status yg__cuda_lstm_cell_gates_out(const yg_tensor *input_gates,
                                       const yg_tensor *hidden_gates,
                                       const yg_tensor *cx,
                                       yg_tensor *out_hy,
                                       yg_tensor *out_cy);
yg_status yg__cuda_lstm_cell_gates_backward_fused_out(const yg_tensor *grad_hy,
                                                      const yg_tensor *grad_cy,
                                                      const yg_tensor *input_gates,
                                                      const yg_tensor *hidden_gates,
                                                      const yg_tensor *cx,
                                                      yg_tensor *out_grad_gates,
                                                      yg_tensor *out_grad_cx);

/* ---- reductions and scans (cuda/reduce.c) ---- */

/* sum, mean */
yg_status yg__cuda_sum(const yg_tensor *self, yg_tensor **out);
yg_status yg__cuda_sum_dim(const yg_tensor *self,
                           const int64_t *dim,
                           int64_t dim_len,
                           bool keepdim,
                           yg_tensor **out);
yg_status yg__cuda_mean(const yg_tensor *self, yg_tensor **out);
yg_status yg__cuda_mean_dim(const yg_tensor *self,
                            const int64_t *dim,
                            int64_t dim_len,
                            bool keepdim,
                            yg_tensor **out);

/* extrema, all, any */
yg_status yg__cuda_amax(const yg_tensor *self,
                        const int64_t *dim,
                        int64_t dim_len,
                        bool keepdim,
                        yg_tensor **out);
yg_status yg__cuda_amin(const yg_tensor *self,
                        const int64_t *dim,
                        int64_t dim_len,
                        bool keepdim,
                        yg_tensor **out);
yg_status yg__cuda_minmax_backward(const yg_tensor *grad_output,
                                   const yg_tensor *self,
                                   const yg_tensor *output,
                                   const int64_t *dim,
                                   int64_t dim_len,
                                   bool keepdim,
                                   yg_tensor **out);
yg_status yg__cuda_argmax(const yg_tensor *self, yg_tensor **out);
yg_status yg__cuda_argmax_dim(const yg_tensor *self, int64_t dim, bool keepdim, yg_tensor **out);
yg_status yg__cuda_argmin(const yg_tensor *self, yg_tensor **out);
yg_status yg__cuda_argmin_dim(const yg_tensor *self, int64_t dim, bool keepdim, yg_tensor **out);
yg_status yg__cuda_max_dim(const yg_tensor *self,
                           int64_t dim,
                           bool keepdim,
                           yg_tensor **out_values,
                           yg_tensor **out_indices);
yg_status yg__cuda_min_dim(const yg_tensor *self,
                           int64_t dim,
                           bool keepdim,
                           yg_tensor **out_values,
                           yg_tensor **out_indices);
yg_status yg__cuda_all(const yg_tensor *self, yg_tensor **out);
yg_status yg__cuda_all_dim(const yg_tensor *self,
                           const int64_t *dim,
                           int64_t dim_len,
                           bool keepdim,
                           yg_tensor **out);
yg_status yg__cuda_any(const yg_tensor *self, yg_tensor **out);
yg_status yg__cuda_any_dim(const yg_tensor *self,
                           const int64_t *dim,
                           int64_t dim_len,
                           bool keepdim,
                           yg_tensor **out);

/* prod, var, std, norm, logsumexp */
yg_status yg__cuda_prod_dim(const yg_tensor *self,
                            const int64_t *dim,
                            int64_t dim_len,
                            bool keepdim,
                            yg_tensor **out);
yg_status yg__cuda_prod_backward(const yg_tensor *grad_output,
                                 const yg_tensor *self,
                                 const int64_t *dim,
                                 int64_t dim_len,
                                 bool keepdim,
                                 yg_tensor **out);
yg_status yg__cuda_prod_double_backward(const yg_tensor *grad,
                                        const yg_tensor *grad_output,
                                        const yg_tensor *self,
                                        const int64_t *dim,
                                        int64_t dim_len,
                                        bool keepdim,
                                        yg_tensor **out);
yg_status yg__cuda_var(const yg_tensor *self,
                       const int64_t *dim,
                       int64_t dim_len,
                       int64_t correction,
                       bool keepdim,
                       yg_tensor **out);
yg_status yg__cuda_var_mean(const yg_tensor *self,
                            const int64_t *dim,
                            int64_t dim_len,
                            int64_t correction,
                            bool keepdim,
                            yg_tensor **out_var,
                            yg_tensor **out_mean);
yg_status yg__cuda_std(const yg_tensor *self,
                       const int64_t *dim,
                       int64_t dim_len,
                       int64_t correction,
                       bool keepdim,
                       yg_tensor **out);
yg_status yg__cuda_norm(const yg_tensor *self,
                        double p,
                        const int64_t *dim,
                        int64_t dim_len,
                        bool keepdim,
                        yg_tensor **out);
yg_status yg__cuda_norm_backward(const yg_tensor *grad_output,
                                 const yg_tensor *self,
                                 const yg_tensor *output,
                                 double p,
                                 const int64_t *dim,
                                 int64_t dim_len,
                                 bool keepdim,
                                 yg_tensor **out);
yg_status yg__cuda_logsumexp(const yg_tensor *self,
                             const int64_t *dim,
                             int64_t dim_len,
                             bool keepdim,
                             yg_tensor **out);

/* cumsum, cumprod */
yg_status yg__cuda_cumsum(const yg_tensor *self, int64_t dim, yg_tensor **out);
yg_status yg__cuda_cumprod(const yg_tensor *self, int64_t dim, yg_tensor **out);
yg_status
yg__cuda_cumprod_jvp(const yg_tensor *grad, const yg_tensor *self, int64_t dim, yg_tensor **out);
yg_status yg__cuda_cumprod_double_backward(const yg_tensor *grad,
                                           const yg_tensor *grad_output,
                                           const yg_tensor *self,
                                           int64_t dim,
                                           yg_tensor **out);
yg_status yg__cuda_cumprod_backward(const yg_tensor *grad_output,
                                    const yg_tensor *self,
                                    int64_t dim,
                                    yg_tensor **out);

/* ---- pooling and upsampling (cuda/pool.c, cuda/upsample.c) ---- */

/* max pooling */
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
                                           yg_tensor **out_indices);
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
                                           yg_tensor **out_indices);
yg_status yg__cuda_adaptive_max_pool2d(const yg_tensor *self,
                                       const int64_t *output_size,
                                       int64_t output_size_len,
                                       yg_tensor **out_values,
                                       yg_tensor **out_indices);

/* average pooling */
yg_status yg__cuda_avg_pool2d(const yg_tensor *self,
                              const int64_t *kernel_size,
                              int64_t kernel_size_len,
                              const int64_t *stride,
                              int64_t stride_len,
                              const int64_t *padding,
                              int64_t padding_len,
                              bool ceil_mode,
                              bool count_include_pad,
                              yg_tensor **out);
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
                                       yg_tensor **out);
yg_status yg__cuda_avg_pool3d(const yg_tensor *self,
                              const int64_t *kernel_size,
                              int64_t kernel_size_len,
                              const int64_t *stride,
                              int64_t stride_len,
                              const int64_t *padding,
                              int64_t padding_len,
                              bool ceil_mode,
                              bool count_include_pad,
                              int64_t divisor_override,
                              yg_tensor **out);
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
                                       int64_t divisor_override,
                                       yg_tensor **out);
yg_status yg__cuda_adaptive_avg_pool2d(const yg_tensor *self,
                                       const int64_t *output_size,
                                       int64_t output_size_len,
                                       yg_tensor **out);
yg_status yg__cuda_adaptive_avg_pool2d_backward(const yg_tensor *grad_output,
                                                const int64_t *self_sizes,
                                                int64_t self_sizes_len,
                                                yg_tensor **out);
yg_status yg__cuda_adaptive_avg_pool3d(const yg_tensor *self,
                                       const int64_t *output_size,
                                       int64_t output_size_len,
                                       yg_tensor **out);
yg_status yg__cuda_adaptive_avg_pool3d_backward(const yg_tensor *grad_output,
                                                const int64_t *self_sizes,
                                                int64_t self_sizes_len,
                                                yg_tensor **out);

/* nearest upsampling */
yg_status yg__cuda_upsample_nearest2d(const yg_tensor *self,
                                      const int64_t *output_size,
                                      int64_t output_size_len,
                                      yg_tensor **out);
yg_status yg__cuda_upsample_nearest2d_backward(const yg_tensor *grad_output,
                                               const int64_t *self_sizes,
                                               int64_t self_sizes_len,
                                               yg_tensor **out);

/* bilinear upsampling */
yg_status yg__cuda_upsample_bilinear2d(const yg_tensor *self,
                                       const int64_t *output_size,
                                       int64_t output_size_len,
                                       bool align_corners,
                                       double scales_h,
                                       double scales_w,
                                       yg_tensor **out);
yg_status yg__cuda_upsample_bilinear2d_backward(const yg_tensor *grad_output,
                                                const int64_t *self_sizes,
                                                int64_t self_sizes_len,
                                                bool align_corners,
                                                double scales_h,
                                                double scales_w,
                                                yg_tensor **out);

#endif /* YAGRAD_CUDA_OPS_H */
