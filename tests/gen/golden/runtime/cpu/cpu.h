/*
 * cpu.h of the golden test: the real cpu/cpu.h (iterator, pointwise
 * descriptors) plus the kernels the golden spec names, all yg__golden_*
 * so that they never clash with the real runtime's.  Found before the
 * real one on the include path of the golden compile check.
 */
#ifndef YAGRAD_GOLDEN_CPU_H
#define YAGRAD_GOLDEN_CPU_H

#include "../../../../../runtime/cpu/cpu.h"

yg_status yg__golden_mm(const yg_tensor *self, const yg_tensor *mat2, yg_tensor **out);
yg_status yg__golden_cumsum_out(const yg_tensor *self, int64_t dim, yg_tensor *out);
yg_status yg__golden_cat(const yg_tensor *const *tensors,
                      int64_t tensors_len,
                      int64_t dim,
                      yg_tensor **out);
yg_status yg__golden_argmax(const yg_tensor *self, const int64_t *dim, bool keepdim, yg_tensor **out);
yg_status yg__golden_pool(const yg_tensor *self,
                       const int64_t *kernel_size,
                       int64_t kernel_size_len,
                       const int64_t *stride,
                       int64_t stride_len,
                       const double *eps,
                       const double *scale,
                       const char *mode,
                       const yg_dtype *dtype,
                       yg_tensor **out);
yg_status yg__golden_pool_backward(const yg_tensor *grad,
                                const yg_tensor *self,
                                const bool *output_mask,
                                yg_tensor **out_grad_self,
                                yg_tensor **out_grad_scale);
yg_status yg__golden_loss(const yg_tensor *self,
                          const yg_tensor *target,
                          int64_t reduction,
                          yg_tensor **out);
yg_status yg__golden_max_dim(const yg_tensor *self, int64_t dim, yg_tensor **out0, yg_tensor **out1);
yg_status yg__golden_max_dim_backward(const yg_tensor *grad,
                                     int64_t dim,
                                     const yg_tensor *indices,
                                     const int64_t *sizes,
                                     int64_t sizes_len,
                                     yg_tensor **out);
yg_status yg__golden_sincos_out(const yg_tensor *self, yg_tensor *out_sin, yg_tensor *out_cos);
yg_status yg__golden_scaled(const yg_tensor *self, const yg_tensor *scale, yg_tensor **out);
yg_status yg__golden_scaled_backward(const yg_tensor *grad,
                                     const yg_tensor *self,
                                     const yg_tensor *scale,
                                     const bool *grad_input_mask,
                                     yg_tensor **out_grad_self,
                                     yg_tensor **out_grad_scale);
yg_status yg__golden_mul_out(const yg_tensor *self,
                          const yg_tensor *other,
                          yg_tensor *dest,
                          yg_tensor **out);
yg_status yg__golden_sign(const yg_tensor *self, yg_tensor **out);

yg_status yg__golden_sum_dim(const yg_tensor *self,
                             const int64_t *dim,
                             int64_t dim_len,
                             bool keepdim,
                             yg_tensor **out);
yg_status yg__golden_t(const yg_tensor *self, yg_tensor **out);
yg_status yg__golden_expand(const yg_tensor *self,
                            const int64_t *size,
                            int64_t size_len,
                            yg_tensor **out);
yg_status yg__golden_clone(const yg_tensor *self, yg_tensor **out);
yg_status yg__golden_noise(const int64_t *size,
                        int64_t size_len,
                        yg_generator *generator,
                        const yg_dtype *dtype,
                        const yg_device *device,
                        yg_tensor **out);
yg_status yg__golden_noise_like(const yg_tensor *self, yg_device device, yg_tensor **out);
yg_status yg__golden_running_scale(const yg_tensor *self,
                                   yg_tensor *running,
                                   double momentum,
                                   yg_tensor **out);
yg_status yg__golden_split(
    const yg_tensor *self, int64_t split_size, int64_t dim, yg_tensor ***out, int64_t *out_len);
yg_status yg__golden_split_with_sizes(const yg_tensor *self,
                                      const int64_t *split_sizes,
                                      int64_t split_sizes_len,
                                      int64_t dim,
                                      yg_tensor ***out,
                                      int64_t *out_len);
yg_status yg__golden_unbind(const yg_tensor *self, int64_t dim, yg_tensor ***out, int64_t *out_len);
yg_status yg__golden_index(const yg_tensor *self,
                           const yg_tensor *const *indices,
                           int64_t indices_len,
                           yg_tensor **out);
yg_status yg__golden_index_backward(const yg_tensor *grad_output,
                                    const int64_t *self_sizes,
                                    int64_t self_sizes_len,
                                    const yg_tensor *const *indices,
                                    int64_t indices_len,
                                    yg_tensor **out);

/* jit-trace */
yg_status yg__golden_cat_then(const yg_tensor *const *tensors,
                              int64_t tensors_len,
                              const yg_tensor *other,
                              yg_tensor **out);

/* dtype(x) and ScalarType arguments in formulas */
yg_status yg__golden_convert(const yg_tensor *self, yg_dtype dtype, yg_tensor **out);
yg_status yg__golden_round_trip(const yg_tensor *self, yg_dtype via, yg_tensor **out);
yg_status yg__golden_total(const yg_tensor *self, const yg_dtype *dtype, yg_tensor **out);
yg_status yg__golden_total_backward(const yg_tensor *grad,
                                    const int64_t *self_sizes,
                                    int64_t self_sizes_len,
                                    yg_dtype self_dtype,
                                    const yg_dtype *dtype,
                                    yg_tensor **out);
yg_status yg__golden_narrow_copy(const yg_tensor *self,
                                 int64_t dim,
                                 int64_t start,
                                 int64_t length,
                                 yg_tensor **out);
yg_status yg__golden_pad_dim(const yg_tensor *self,
                             int64_t dim,
                             int64_t before,
                             int64_t after,
                             yg_tensor **out);

#endif /* YAGRAD_GOLDEN_CPU_H */
