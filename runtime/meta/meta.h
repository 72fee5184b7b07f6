/*
 * meta/meta.h - the meta functions of the structured ops (`structured:
 * true` in specs/native_functions.yaml): what every device shares of an
 * op, the checks of its arguments and its result, made (shape, dtype, and
 * the inputs' device) for a device's implementation to fill.  The
 * generated wrapper calls yg__meta_<op> once, then the implementation of
 * the inputs' device: yg__cpu_<op>_out (cpu/cpu.h) or yg__cuda_<op>_out
 * (in the CUDA module, cuda/cuda.h), which can no longer fail on the
 * arguments.  Not public API.
 *
 * Each has the op's kernel signature: inputs borrowed, *out a new
 * reference on success and NULL on failure; errors name the op.
 */
#ifndef YAGRAD_META_META_H
#define YAGRAD_META_META_H

#include "yagrad/status.h"
#include "yagrad/random.h"
#include "yagrad/tensor.h"

#include <stdint.h>

/* softmax and log_softmax (meta/softmax.c): self floating; dim in
 * range (YG_ERR_INVALID_ARGUMENT "<op>: dim 2 out of range ..."); the
 * result has self's sizes and dtype, contiguous. */
yg_status yg__meta_softmax(const yg_tensor *self, int64_t dim, yg_tensor **out);
yg_status yg__meta_log_softmax(const yg_tensor *self, int64_t dim, yg_tensor **out);

/* log_softmax_backward and softmax_backward_fused (meta/softmax.c):
 * grad_output and output floating, of one dtype
 * ("<op>: dtype mismatch: grad_output float32, output float64") and one
 * shape ("<op>: shape mismatch: grad_output [..], output [..]"); dim in
 * range of output.  The result has output's sizes and dtype,
 * contiguous. */
yg_status yg__meta_log_softmax_backward(const yg_tensor *grad_output,
                                        const yg_tensor *output,
                                        int64_t dim,
                                        yg_tensor **out);
yg_status yg__meta_softmax_backward_fused(const yg_tensor *grad_output,
                                          const yg_tensor *output,
                                          int64_t dim,
                                          yg_tensor **out);

/* nll_loss (meta/loss.c): self floating, [N, C] or [C]; target int64,
 * [N] or 0-dim, every value a class or ignore_index (YG_ERR_INDEX "<op>:
 * target 7 is out of bounds for 3 classes", checked on a host copy);
 * weight NULL or [C] of self's dtype.  The result: [N] for reduction
 * none, else 0-dim; self's dtype, on self's device. */
yg_status yg__meta_nll_loss(const yg_tensor *self,
                            const yg_tensor *target,
                            const yg_tensor *weight,
                            int64_t reduction,
                            int64_t ignore_index,
                            yg_tensor **out);
/* nll_loss_backward: the same checks against self_sizes, grad_output
 * floating with one element per loss of reduction; the result of
 * self_sizes and grad_output's dtype, zero (the implementations write
 * only the counted targets' slots). */
yg_status yg__meta_nll_loss_backward(const yg_tensor *grad_output,
                                     const yg_tensor *target,
                                     const yg_tensor *weight,
                                     const int64_t *self_sizes,
                                     int64_t self_sizes_len,
                                     int64_t reduction,
                                     int64_t ignore_index,
                                     yg_tensor **out);

/* lstm_cell_gates (meta/rnn.c): input_gates and hidden_gates [N, 4H] or
 * [4H], cx [N, H] or [H], one floating dtype, one device; hy and cy of
 * cx's sizes. */
yg_status yg__meta_lstm_cell_gates(const yg_tensor *input_gates,
                                   const yg_tensor *hidden_gates,
                                   const yg_tensor *cx,
                                   yg_tensor **out_hy,
                                   yg_tensor **out_cy);
/* lstm_cell_gates_backward_fused: the same checks, grad_hy and grad_cy
 * of cx's sizes and dtype; the gates' gradient of input_gates' sizes, the
 * cell's of cx's. */
yg_status yg__meta_lstm_cell_gates_backward_fused(const yg_tensor *grad_hy,
                                                  const yg_tensor *grad_cy,
                                                  const yg_tensor *input_gates,
                                                  const yg_tensor *hidden_gates,
                                                  const yg_tensor *cx,
                                                  yg_tensor **out_grad_gates,
                                                  yg_tensor **out_grad_cx);

/* native_layer_norm, native_batch_norm and their fused backwards
 * (meta/norm.c): input floating; weight, bias, the statistics of input's
 * dtype and of the normalized_shape / channel sizes; running statistics
 * [C] floating (their own dtype), both or neither, required when not
 * training.  The output has input's sizes, the statistics one per row
 * (layer_norm: input's sizes with 1 for the normalized dims) or per
 * channel; a backward's grad_weight and grad_bias are zero, and a result
 * whose grad_input_mask entry is false is NULL. */
yg_status yg__meta_native_layer_norm(const yg_tensor *input,
                                    const int64_t *normalized_shape,
                                    int64_t normalized_shape_len,
                                    const yg_tensor *weight,
                                    const yg_tensor *bias,
                                    double eps,
                                    yg_tensor **out_output,
                                    yg_tensor **out_mean,
                                    yg_tensor **out_rstd);
yg_status yg__meta_native_layer_norm_backward_fused(const yg_tensor *grad_out,
                                                   const yg_tensor *input,
                                                   const yg_tensor *mean,
                                                   const yg_tensor *rstd,
                                                   const yg_tensor *weight,
                                                   const int64_t *normalized_shape,
                                                   int64_t normalized_shape_len,
                                                   const bool *grad_input_mask,
                                                   yg_tensor **out_grad_input,
                                                   yg_tensor **out_grad_weight,
                                                   yg_tensor **out_grad_bias);
yg_status yg__meta_native_batch_norm(const yg_tensor *input,
                                       const yg_tensor *weight,
                                       const yg_tensor *bias,
                                       yg_tensor *running_mean,
                                       yg_tensor *running_var,
                                       bool training,
                                       double momentum,
                                       double eps,
                                       yg_tensor **out_output,
                                       yg_tensor **out_save_mean,
                                       yg_tensor **out_save_invstd);
yg_status yg__meta_native_batch_norm_backward_fused(const yg_tensor *grad_out,
                                                      const yg_tensor *input,
                                                      const yg_tensor *weight,
                                                      const yg_tensor *save_mean,
                                                      const yg_tensor *save_invstd,
                                                      bool training,
                                                      const bool *grad_input_mask,
                                                      yg_tensor **out_grad_input,
                                                      yg_tensor **out_grad_weight,
                                                      yg_tensor **out_grad_bias);

/* index_select, gather, scatter, scatter_value, scatter_add, embedding
 * and their gradients (meta/index.c): index int64, every value in range
 * of the size it addresses (YG_ERR_INDEX "<op>: index 5 out of range for
 * dim 0 of size 3", checked on a host copy); the results are contiguous:
 * a scatter's a copy of self, a gradient's zeros. */
yg_status yg__meta_index_select(const yg_tensor *self,
                               int64_t dim,
                               const yg_tensor *index,
                               yg_tensor **out);
yg_status yg__meta_index_select_backward(const yg_tensor *grad_output,
                                        const int64_t *self_sizes,
                                        int64_t self_sizes_len,
                                        int64_t dim,
                                        const yg_tensor *index,
                                        yg_tensor **out);
yg_status yg__meta_gather(const yg_tensor *self,
                         int64_t dim,
                         const yg_tensor *index,
                         yg_tensor **out);
yg_status yg__meta_gather_backward(const yg_tensor *grad_output,
                                  const int64_t *self_sizes,
                                  int64_t self_sizes_len,
                                  int64_t dim,
                                  const yg_tensor *index,
                                  yg_tensor **out);
yg_status yg__meta_scatter(const yg_tensor *self,
                          int64_t dim,
                          const yg_tensor *index,
                          const yg_tensor *src,
                          yg_tensor **out);
yg_status yg__meta_scatter_value(const yg_tensor *self,
                                int64_t dim,
                                const yg_tensor *index,
                                double value,
                                yg_tensor **out);
yg_status yg__meta_scatter_add(const yg_tensor *self,
                              int64_t dim,
                              const yg_tensor *index,
                              const yg_tensor *src,
                              yg_tensor **out);
yg_status yg__meta_embedding(const yg_tensor *weight,
                            const yg_tensor *indices,
                            int64_t padding_idx,
                            yg_tensor **out);
yg_status yg__meta_embedding_backward(const yg_tensor *grad_output,
                                     const yg_tensor *indices,
                                     const int64_t *weight_sizes,
                                     int64_t weight_sizes_len,
                                     int64_t padding_idx,
                                     yg_tensor **out);

/* rand, randn, randint, bernoulli (meta/random.c): dtype, sizes, range
 * and probabilities checked (bernoulli's on a host copy) before any
 * counter of the generator is reserved; the result on the requested
 * device (cuda:0 for YG_CUDA) or on self's. */
yg_status yg__meta_rand(const int64_t *size,
                       int64_t size_len,
                       yg_generator *generator,
                       const yg_dtype *dtype,
                       const yg_device *device,
                       yg_tensor **out);
yg_status yg__meta_randn(const int64_t *size,
                        int64_t size_len,
                        yg_generator *generator,
                        const yg_dtype *dtype,
                        const yg_device *device,
                        yg_tensor **out);
yg_status yg__meta_randint(int64_t low,
                          int64_t high,
                          const int64_t *size,
                          int64_t size_len,
                          yg_generator *generator,
                          const yg_dtype *dtype,
                          const yg_device *device,
                          yg_tensor **out);
yg_status yg__meta_bernoulli(const yg_tensor *self, yg_generator *generator, yg_tensor **out);
yg_status yg__meta_bernoulli_p(const yg_tensor *self,
                              double p,
                              yg_generator *generator,
                              yg_tensor **out);

/* mm and bmm (meta/matmul.c): self and mat2 floating, of one dtype and
 * device, 2-D (mm) or 3-D with one batch size (bmm), inner dims equal and
 * every dim within BLAS's int; the result [m, n] or [batch, m, n] on
 * their device, zeros when the inner dim is 0. */
yg_status yg__meta_mm(const yg_tensor *self, const yg_tensor *mat2, yg_tensor **out);
yg_status yg__meta_bmm(const yg_tensor *self, const yg_tensor *mat2, yg_tensor **out);

/* cat (meta/join.c): at least one tensor, none 0-dim, dim in range, every
 * piece of tensor 0's sizes outside dim and on its device; the result of
 * the promoted dtype.  tril and triu (meta/triangle.c): self of at least
 * 2 dims; the result a contiguous copy of self. */
yg_status yg__meta_cat(const yg_tensor *const *tensors,
                       int64_t tensors_len,
                       int64_t dim,
                       yg_tensor **out);
yg_status yg__meta_tril(const yg_tensor *self, int64_t diagonal, yg_tensor **out);
yg_status yg__meta_triu(const yg_tensor *self, int64_t diagonal, yg_tensor **out);

#endif /* YAGRAD_META_META_H */
