/*
 * cpu.h - the CPU backend: the pointwise iterator that generated kernels
 * run on (on the CPU, or through another device's backend,
 * meta/pointwise.h), and the handwritten kernels named in
 * specs/native_functions.yaml `dispatch:` entries.  Not public API.
 *
 * Kernel contract (every op kernel): same C signature as the public op it
 * implements (see generated ops.h); inputs are borrowed and already
 * checked to be non-NULL where the YAML says `Tensor`; the kernel
 * validates shapes, dims and dtypes itself, naming the op in its message;
 * it writes a new reference to *out on success and leaves *out NULL on
 * failure.  Kernels never record autograd history.  A structured op's
 * implementation (yg__cpu_<op>_out) instead fills the results its meta
 * function (meta/meta.h) made and checked.
 *
 * Names say which devices a kernel serves: yg__cpu_<op> (and _out) only
 * ever sees CPU tensors, the CUDA module has its own (cuda/ops.h);
 * yg__kernel_<op> is device-neutral and serves every device (views,
 * creation, the pointwise iterator's ops), reaching another device only
 * through the device table (core/backend.h).  yg__cpu_gemm and the like
 * are CPU helpers, not op kernels.
 */
#ifndef YAGRAD_CPU_H
#define YAGRAD_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "meta/pointwise.h"
#include "yagrad/cpu.h"
#include "yagrad/random.h"

/* ---- pointwise iterator (cpu/pointwise.c) ---- */

/* One inner loop over n elements.
 *   ptrs:    n_inputs + 1 byte pointers; ptrs[0] is the output
 *   strides: byte strides, same order (0 for a broadcast operand)
 *   scalars: the op's Scalar/float arguments in YAML order, as doubles */
typedef void (*yg_loop_fn)(char **ptrs, const int64_t *strides, int64_t n, const double *scalars);

/* An op's loops by compute dtype; NULL: the dtype is unsupported. */
typedef struct yg_loop_table {
    yg_loop_fn fn[YG_DTYPE_COUNT_];
} yg_loop_table;

/* out = f(inputs...) elementwise with NumPy broadcasting (the descriptor,
 * meta/pointwise.h), on the device the inputs are on (all on one: the
 * generated entry points check that); a tensor of another device runs its
 * backend's loops (core/backend.h's pointwise), and everything said here
 * holds there too.  The compute
 * dtype is the promotion of the inputs' dtypes; inputs of another dtype are
 * converted first.  A dtype with no loop fails with YG_ERR_DTYPE:
 * "exp: unsupported dtype int64 for self (supported: float32, float64)".
 * On an integer compute dtype the first desc->n_scalars scalars are
 * operands of the expression and must be integers the dtype holds, else
 * YG_ERR_DTYPE: "add: alpha 2.5 is not an integer, self is int64".
 * Shapes that do not broadcast fail with YG_ERR_SHAPE.  The output is a
 * new contiguous tensor of the compute dtype on the inputs' device. */
yg_status yg__pointwise(const yg_pointwise_desc *desc,
                            const yg_tensor *const *inputs,
                            const double *scalars,
                            yg_tensor **out);

/* Like yg__pointwise, but the output has dtype out_dtype instead of the
 * compute dtype: the loop for compute dtype D reads D inputs and writes
 * out_dtype elements (comparisons and logical ops write bool). */
yg_status yg__pointwise_to(const yg_pointwise_desc *desc,
                               const yg_tensor *const *inputs,
                               const double *scalars,
                               yg_dtype out_dtype,
                               yg_tensor **out);

/* In-place form: self = f(self, inputs[1..]); inputs[0] must be self.
 * The result must have self's shape and dtype (no broadcast of self, no
 * dtype change), else YG_ERR_SHAPE / YG_ERR_DTYPE before anything is
 * written.  Bumps self's version. */
yg_status yg__pointwise_inplace(const yg_pointwise_desc *desc,
                                    yg_tensor *self,
                                    const yg_tensor *const *inputs,
                                    const double *scalars);


/* A new tensor of sizes and dtype filled with value (converted as fill_
 * converts it) on a device: what autograd makes its seed and zero
 * gradients with.  Errors name op (creation.c). */
yg_status yg__full_on(const char *op,
                      const int64_t *sizes,
                      int64_t ndim,
                      yg_dtype dtype,
                      yg_device device,
                      int32_t device_index,
                      double value,
                      yg_tensor **out);

/* ---- handwritten kernels (one per `dispatch: CPU:` entry) ---- */

/* compare.c: comparisons and logical ops, bool results */
yg_status yg__kernel_eq(const yg_tensor *self, const yg_tensor *other, yg_tensor **out);
yg_status yg__kernel_ne(const yg_tensor *self, const yg_tensor *other, yg_tensor **out);
yg_status yg__kernel_lt(const yg_tensor *self, const yg_tensor *other, yg_tensor **out);
yg_status yg__kernel_le(const yg_tensor *self, const yg_tensor *other, yg_tensor **out);
yg_status yg__kernel_gt(const yg_tensor *self, const yg_tensor *other, yg_tensor **out);
yg_status yg__kernel_ge(const yg_tensor *self, const yg_tensor *other, yg_tensor **out);
yg_status yg__kernel_eq_scalar(const yg_tensor *self, double other, yg_tensor **out);
yg_status yg__kernel_ne_scalar(const yg_tensor *self, double other, yg_tensor **out);
yg_status yg__kernel_lt_scalar(const yg_tensor *self, double other, yg_tensor **out);
yg_status yg__kernel_le_scalar(const yg_tensor *self, double other, yg_tensor **out);
yg_status yg__kernel_gt_scalar(const yg_tensor *self, double other, yg_tensor **out);
yg_status yg__kernel_ge_scalar(const yg_tensor *self, double other, yg_tensor **out);
yg_status yg__kernel_logical_and(const yg_tensor *self, const yg_tensor *other, yg_tensor **out);
yg_status yg__kernel_logical_or(const yg_tensor *self, const yg_tensor *other, yg_tensor **out);
yg_status yg__kernel_logical_xor(const yg_tensor *self, const yg_tensor *other, yg_tensor **out);
yg_status yg__kernel_logical_not(const yg_tensor *self, yg_tensor **out);

/* assign.c: fill_, zero_, copy_ (every dtype, strided self) */
yg_status yg__kernel_fill_(yg_tensor *self, double value, yg_tensor **out);
yg_status yg__kernel_zero_(yg_tensor *self, yg_tensor **out);
yg_status yg__kernel_copy_(yg_tensor *self, const yg_tensor *src, yg_tensor **out);

/* pool.c: 2-D and 3-D pooling and nearest resampling of [N, C, (D,) H, W] / [C, (D,) H, W] */
yg_status yg__cpu_max_pool2d_with_indices(const yg_tensor *self,
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
yg_status yg__cpu_avg_pool2d(const yg_tensor *self,
                             const int64_t *kernel_size,
                             int64_t kernel_size_len,
                             const int64_t *stride,
                             int64_t stride_len,
                             const int64_t *padding,
                             int64_t padding_len,
                             bool ceil_mode,
                             bool count_include_pad,
                             yg_tensor **out);
yg_status yg__cpu_avg_pool2d_backward(const yg_tensor *grad_output,
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
yg_status yg__cpu_adaptive_avg_pool2d(const yg_tensor *self,
                                      const int64_t *output_size,
                                      int64_t output_size_len,
                                      yg_tensor **out);
yg_status yg__cpu_adaptive_avg_pool2d_backward(const yg_tensor *grad_output,
                                               const int64_t *self_sizes,
                                               int64_t self_sizes_len,
                                               yg_tensor **out);
yg_status yg__cpu_max_pool3d_with_indices(const yg_tensor *self,
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
yg_status yg__cpu_avg_pool3d(const yg_tensor *self,
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
yg_status yg__cpu_avg_pool3d_backward(const yg_tensor *grad_output,
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
yg_status yg__cpu_adaptive_avg_pool3d(const yg_tensor *self,
                                      const int64_t *output_size,
                                      int64_t output_size_len,
                                      yg_tensor **out);
yg_status yg__cpu_adaptive_avg_pool3d_backward(const yg_tensor *grad_output,
                                               const int64_t *self_sizes,
                                               int64_t self_sizes_len,
                                               yg_tensor **out);
yg_status yg__cpu_adaptive_max_pool2d(const yg_tensor *self,
                                      const int64_t *output_size,
                                      int64_t output_size_len,
                                      yg_tensor **out_values,
                                      yg_tensor **out_indices);
yg_status yg__cpu_upsample_nearest2d(const yg_tensor *self,
                                     const int64_t *output_size,
                                     int64_t output_size_len,
                                     yg_tensor **out);
yg_status yg__cpu_upsample_nearest2d_backward(const yg_tensor *grad_output,
                                              const int64_t *self_sizes,
                                              int64_t self_sizes_len,
                                              yg_tensor **out);

/* upsample.c: bilinear resampling of [N, C, H, W] / [C, H, W] */
yg_status yg__cpu_upsample_bilinear2d(const yg_tensor *self,
                                      const int64_t *output_size,
                                      int64_t output_size_len,
                                      bool align_corners,
                                      double scales_h,
                                      double scales_w,
                                      yg_tensor **out);
yg_status yg__cpu_upsample_bilinear2d_backward(const yg_tensor *grad_output,
                                               const int64_t *self_sizes,
                                               int64_t self_sizes_len,
                                               bool align_corners,
                                               double scales_h,
                                               double scales_w,
                                               yg_tensor **out);

/* reduce.c */
yg_status yg__cpu_sum(const yg_tensor *self, yg_tensor **out);
yg_status yg__cpu_sum_dim(const yg_tensor *self,
                          const int64_t *dim,
                          int64_t dim_len,
                          bool keepdim,
                          yg_tensor **out);
yg_status yg__cpu_mean(const yg_tensor *self, yg_tensor **out);
yg_status yg__cpu_mean_dim(const yg_tensor *self,
                           const int64_t *dim,
                           int64_t dim_len,
                           bool keepdim,
                           yg_tensor **out);

/* reduce_extrema.c */
yg_status yg__cpu_amax(const yg_tensor *self,
                       const int64_t *dim,
                       int64_t dim_len,
                       bool keepdim,
                       yg_tensor **out);
yg_status yg__cpu_amin(const yg_tensor *self,
                       const int64_t *dim,
                       int64_t dim_len,
                       bool keepdim,
                       yg_tensor **out);
yg_status yg__cpu_minmax_backward(const yg_tensor *grad_output,
                                     const yg_tensor *self,
                                     const yg_tensor *output,
                                     const int64_t *dim,
                                     int64_t dim_len,
                                     bool keepdim,
                                     yg_tensor **out);
yg_status yg__cpu_argmax(const yg_tensor *self, yg_tensor **out);
yg_status yg__cpu_argmax_dim(const yg_tensor *self, int64_t dim, bool keepdim, yg_tensor **out);
yg_status yg__cpu_argmin(const yg_tensor *self, yg_tensor **out);
yg_status yg__cpu_argmin_dim(const yg_tensor *self, int64_t dim, bool keepdim, yg_tensor **out);
yg_status yg__cpu_max_dim(const yg_tensor *self,
                          int64_t dim,
                          bool keepdim,
                          yg_tensor **out_values,
                          yg_tensor **out_indices);
yg_status yg__cpu_min_dim(const yg_tensor *self,
                          int64_t dim,
                          bool keepdim,
                          yg_tensor **out_values,
                          yg_tensor **out_indices);
yg_status yg__cpu_all(const yg_tensor *self, yg_tensor **out);
yg_status yg__cpu_all_dim(const yg_tensor *self,
                          const int64_t *dim,
                          int64_t dim_len,
                          bool keepdim,
                          yg_tensor **out);
yg_status yg__cpu_any(const yg_tensor *self, yg_tensor **out);
yg_status yg__cpu_any_dim(const yg_tensor *self,
                          const int64_t *dim,
                          int64_t dim_len,
                          bool keepdim,
                          yg_tensor **out);

/* reduce_stats.c */
yg_status yg__cpu_prod_dim(const yg_tensor *self,
                           const int64_t *dim,
                           int64_t dim_len,
                           bool keepdim,
                           yg_tensor **out);
yg_status yg__cpu_prod_backward(const yg_tensor *grad_output,
                                   const yg_tensor *self,
                                   const int64_t *dim,
                                   int64_t dim_len,
                                   bool keepdim,
                                   yg_tensor **out);
yg_status yg__cpu_prod_double_backward(const yg_tensor *grad,
                                          const yg_tensor *grad_output,
                                          const yg_tensor *self,
                                          const int64_t *dim,
                                          int64_t dim_len,
                                          bool keepdim,
                                          yg_tensor **out);
yg_status yg__cpu_var(const yg_tensor *self,
                      const int64_t *dim,
                      int64_t dim_len,
                      int64_t correction,
                      bool keepdim,
                      yg_tensor **out);
yg_status yg__cpu_var_mean(const yg_tensor *self,
                           const int64_t *dim,
                           int64_t dim_len,
                           int64_t correction,
                           bool keepdim,
                           yg_tensor **out_var,
                           yg_tensor **out_mean);
yg_status yg__cpu_std(const yg_tensor *self,
                      const int64_t *dim,
                      int64_t dim_len,
                      int64_t correction,
                      bool keepdim,
                      yg_tensor **out);
yg_status yg__cpu_norm(const yg_tensor *self,
                       double p,
                       const int64_t *dim,
                       int64_t dim_len,
                       bool keepdim,
                       yg_tensor **out);
yg_status yg__cpu_norm_backward(const yg_tensor *grad_output,
                                   const yg_tensor *self,
                                   const yg_tensor *output,
                                   double p,
                                   const int64_t *dim,
                                   int64_t dim_len,
                                   bool keepdim,
                                   yg_tensor **out);
yg_status yg__cpu_logsumexp(const yg_tensor *self,
                            const int64_t *dim,
                            int64_t dim_len,
                            bool keepdim,
                            yg_tensor **out);

/* scan.c */
yg_status yg__cpu_cumsum(const yg_tensor *self, int64_t dim, yg_tensor **out);
yg_status yg__cpu_cumprod(const yg_tensor *self, int64_t dim, yg_tensor **out);
yg_status
yg__cpu_cumprod_jvp(const yg_tensor *grad, const yg_tensor *self, int64_t dim, yg_tensor **out);
yg_status yg__cpu_cumprod_double_backward(const yg_tensor *grad,
                                             const yg_tensor *grad_output,
                                             const yg_tensor *self,
                                             int64_t dim,
                                             yg_tensor **out);
yg_status yg__cpu_cumprod_backward(const yg_tensor *grad_output,
                                      const yg_tensor *self,
                                      int64_t dim,
                                      yg_tensor **out);

/* blas.c */
/* c [m, n] (row-major, leading dim ldc) = op(a) op(b) + beta c, op
 * transposing when ta / tb is set; float32 or float64 (dtype); m, n, k and
 * the leading dims within int and valid for row-major BLAS.  Cannot fail.
 * float32 goes to oneDNN or OpenBLAS (blas.c says which, and why). */
void yg__cpu_gemm(yg_dtype dtype,
                  bool ta,
                  bool tb,
                  int64_t m,
                  int64_t n,
                  int64_t k,
                  const void *a,
                  int64_t lda,
                  const void *b,
                  int64_t ldb,
                  double beta,
                  void *c,
                  int64_t ldc);
/* mm and bmm, structured: fill out, which yg__meta_mm / yg__meta_bmm
 * (meta/meta.h) made, through yg__cpu_gemm.  Errors as an operand copy's. */
yg_status yg__cpu_mm_out(const yg_tensor *self, const yg_tensor *mat2, yg_tensor *out);
yg_status yg__cpu_bmm_out(const yg_tensor *self, const yg_tensor *mat2, yg_tensor *out);

/* shape.c: views (share storage) and copies */
yg_status yg__kernel_transpose(const yg_tensor *self, int64_t dim0, int64_t dim1, yg_tensor **out);
yg_status yg__kernel_t(const yg_tensor *self, yg_tensor **out);
yg_status
yg__kernel_view(const yg_tensor *self, const int64_t *size, int64_t size_len, yg_tensor **out);
yg_status
yg__kernel_expand(const yg_tensor *self, const int64_t *size, int64_t size_len, yg_tensor **out);
yg_status yg__kernel_unsqueeze(const yg_tensor *self, int64_t dim, yg_tensor **out);
yg_status yg__kernel_clone(const yg_tensor *self, yg_tensor **out);
/* tensors joined along dim in one result allocated once; mixed dtypes
 * promote as in PyTorch (yg__promote_types). */
/* cat, structured: fills out, which yg__meta_cat (meta/meta.h) made. */
yg_status yg__cpu_cat_out(const yg_tensor *const *tensors, /* borrowed, tensors_len entries */
                          int64_t tensors_len,
                          int64_t dim,
                          yg_tensor *out);
yg_status yg__kernel_squeeze(const yg_tensor *self, yg_tensor **out);
yg_status yg__kernel_squeeze_dim(const yg_tensor *self, int64_t dim, yg_tensor **out);
yg_status yg__kernel_permute(const yg_tensor *self,
                          const int64_t *dims,
                          int64_t dims_len,
                          yg_tensor **out);
yg_status yg__kernel_select(const yg_tensor *self, int64_t dim, int64_t index, yg_tensor **out);
yg_status yg__kernel_slice(const yg_tensor *self,
                        int64_t dim,
                        int64_t start,
                        int64_t end,
                        int64_t step,
                        yg_tensor **out);
yg_status yg__kernel_select_backward(const yg_tensor *grad_output,
                                  const int64_t *input_sizes,
                                  int64_t input_sizes_len,
                                  int64_t dim,
                                  int64_t index,
                                  yg_tensor **out);
yg_status yg__kernel_slice_backward(const yg_tensor *grad_output,
                                 const int64_t *input_sizes,
                                 int64_t input_sizes_len,
                                 int64_t dim,
                                 int64_t start,
                                 int64_t end,
                                 int64_t step,
                                 yg_tensor **out);
yg_status yg__kernel_flip(const yg_tensor *self,
                       const int64_t *dims,
                       int64_t dims_len,
                       yg_tensor **out);

/* split.c: a tensor cut into a list of views along one dim (ops returning
 * Tensor(a)[]: *out is a new array of *out_len new refs) */
yg_status yg__kernel_split(
    const yg_tensor *self, int64_t split_size, int64_t dim, yg_tensor ***out, int64_t *out_len);
yg_status yg__kernel_split_with_sizes(const yg_tensor *self,
                                   const int64_t *split_sizes,
                                   int64_t split_sizes_len,
                                   int64_t dim,
                                   yg_tensor ***out,
                                   int64_t *out_len);
yg_status yg__kernel_chunk(
    const yg_tensor *self, int64_t chunks, int64_t dim, yg_tensor ***out, int64_t *out_len);
yg_status
yg__kernel_unbind(const yg_tensor *self, int64_t dim, yg_tensor ***out, int64_t *out_len);

/* index_advanced.c: self[indices] with int64 / bool index tensors (NULL
 * entries keep their dim), and writing values there; both devices (a
 * GPU's indices are read on the host, where the offsets are made) */
yg_status yg__cpu_index(const yg_tensor *self,
                           const yg_tensor *const *indices,
                           int64_t indices_len,
                           yg_tensor **out);
yg_status yg__cpu_index_put(const yg_tensor *self,
                               const yg_tensor *const *indices,
                               int64_t indices_len,
                               const yg_tensor *values,
                               bool accumulate,
                               yg_tensor **out);
yg_status yg__cpu_index_put_(yg_tensor *self,
                                const yg_tensor *const *indices,
                                int64_t indices_len,
                                const yg_tensor *values,
                                bool accumulate,
                                yg_tensor **out);

/* index.c: the index ops, structured: fill out, which yg__meta_<op>
 * (meta/meta.h) made after checking every index. */
yg_status yg__cpu_index_select_out(const yg_tensor *self,
                               int64_t dim,
                               const yg_tensor *index,
                               yg_tensor *out);
yg_status yg__cpu_index_select_backward_out(const yg_tensor *grad_output,
                                        const int64_t *self_sizes,
                                        int64_t self_sizes_len,
                                        int64_t dim,
                                        const yg_tensor *index,
                                        yg_tensor *out);
yg_status yg__cpu_gather_out(const yg_tensor *self,
                         int64_t dim,
                         const yg_tensor *index,
                         yg_tensor *out);
yg_status yg__cpu_gather_backward_out(const yg_tensor *grad_output,
                                  const int64_t *self_sizes,
                                  int64_t self_sizes_len,
                                  int64_t dim,
                                  const yg_tensor *index,
                                  yg_tensor *out);
yg_status yg__cpu_scatter_out(const yg_tensor *self,
                          int64_t dim,
                          const yg_tensor *index,
                          const yg_tensor *src,
                          yg_tensor *out);
yg_status yg__cpu_scatter_value_out(const yg_tensor *self,
                                int64_t dim,
                                const yg_tensor *index,
                                double value,
                                yg_tensor *out);
yg_status yg__cpu_scatter_add_out(const yg_tensor *self,
                              int64_t dim,
                              const yg_tensor *index,
                              const yg_tensor *src,
                              yg_tensor *out);
yg_status yg__cpu_embedding_out(const yg_tensor *weight,
                            const yg_tensor *indices,
                            int64_t padding_idx,
                            yg_tensor *out);
yg_status yg__cpu_embedding_backward_out(const yg_tensor *grad_output,
                                     const yg_tensor *indices,
                                     const int64_t *weight_sizes,
                                     int64_t weight_sizes_len,
                                     int64_t padding_idx,
                                     yg_tensor *out);


/* triangle.c: tril, triu; pad.c: constant_pad_nd */
yg_status yg__cpu_tril_out(const yg_tensor *self, int64_t diagonal, yg_tensor *out);
yg_status yg__cpu_triu_out(const yg_tensor *self, int64_t diagonal, yg_tensor *out);
yg_status yg__kernel_constant_pad_nd(const yg_tensor *self,
                                  const int64_t *pad,
                                  int64_t pad_len,
                                  double value,
                                  yg_tensor **out);
/* pad.c: reflect and replicate padding of the last 1-3 dims */
yg_status yg__cpu_reflection_pad(const yg_tensor *self,
                                 const int64_t *pad,
                                 int64_t pad_len,
                                 yg_tensor **out);
yg_status yg__cpu_replication_pad(const yg_tensor *self,
                                  const int64_t *pad,
                                  int64_t pad_len,
                                  yg_tensor **out);
yg_status yg__cpu_reflection_pad_backward(const yg_tensor *grad_output,
                                          const int64_t *self_sizes,
                                          int64_t self_sizes_len,
                                          const int64_t *pad,
                                          int64_t pad_len,
                                          yg_tensor **out);
yg_status yg__cpu_replication_pad_backward(const yg_tensor *grad_output,
                                           const int64_t *self_sizes,
                                           int64_t self_sizes_len,
                                           const int64_t *pad,
                                           int64_t pad_len,
                                           yg_tensor **out);

/* rnn.c: lstm_cell_gates and its fused gradient, structured: fill the
 * results yg__meta_lstm_cell_gates / yg__meta_lstm_cell_gates_backward_fused
 * made (meta/meta.h). */
yg_status yg__cpu_lstm_cell_gates_out(const yg_tensor *input_gates,
                                      const yg_tensor *hidden_gates,
                                      const yg_tensor *cx,
                                      yg_tensor *out_hy,
                                      yg_tensor *out_cy);
yg_status yg__cpu_lstm_cell_gates_backward_fused_out(const yg_tensor *grad_hy,
                                                     const yg_tensor *grad_cy,
                                                     const yg_tensor *input_gates,
                                                     const yg_tensor *hidden_gates,
                                                     const yg_tensor *cx,
                                                     yg_tensor *out_grad_gates,
                                                     yg_tensor *out_grad_cx);

/* nn.c */
/* The CPU implementations of the structured softmax and log_softmax:
 * fill out, which yg__meta_softmax / yg__meta_log_softmax made
 * (meta/meta.h) after checking the arguments ... */
yg_status yg__cpu_softmax_out(const yg_tensor *self, int64_t dim, yg_tensor *out);
yg_status yg__cpu_log_softmax_out(const yg_tensor *self, int64_t dim, yg_tensor *out);
/* ... and of log_softmax_backward and softmax_backward_fused (the fused
 * gradient of softmax, which the composite softmax_backward runs when
 * nothing needs its parts recorded). */
yg_status yg__cpu_log_softmax_backward_out(const yg_tensor *grad_output,
                                           const yg_tensor *output,
                                           int64_t dim,
                                           yg_tensor *out);
yg_status yg__cpu_softmax_backward_fused_out(const yg_tensor *grad_output,
                                             const yg_tensor *output,
                                             int64_t dim,
                                             yg_tensor *out);
/* nll_loss and its backward, structured: fill out, which
 * yg__meta_nll_loss / yg__meta_nll_loss_backward made (meta/meta.h, the
 * backward's zero) after checking the arguments.  Cannot fail. */
yg_status yg__cpu_nll_loss_out(const yg_tensor *self,
                               const yg_tensor *target,
                               const yg_tensor *weight,
                               int64_t reduction,
                               int64_t ignore_index,
                               yg_tensor *out);
yg_status yg__cpu_nll_loss_backward_out(const yg_tensor *grad_output,
                                        const yg_tensor *target,
                                        const yg_tensor *weight,
                                        const int64_t *self_sizes,
                                        int64_t self_sizes_len,
                                        int64_t reduction,
                                        int64_t ignore_index,
                                        yg_tensor *out);

/* runtime/conv/dispatch.c: convolution_dispatch's kernel for cpu and
 * CUDA tensors (the backends behind it are in runtime/conv/, declared in
 * conv/conv.h) */
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
                                          yg_tensor **out);

/* norm.c: layer_norm's and batch_norm's fused kernels and their
 * backward, structured: fill the results of yg__meta_native_layer_norm
 * etc. (meta/meta.h; the per-row loops are in vec/norm_loops.c, per CPU
 * capability) */
yg_status yg__cpu_native_layer_norm_out(const yg_tensor *input,
                                    const int64_t *normalized_shape,
                                    int64_t normalized_shape_len,
                                    const yg_tensor *weight,
                                    const yg_tensor *bias,
                                    double eps,
                                    yg_tensor *out_output,
                                    yg_tensor *out_mean,
                                    yg_tensor *out_rstd);
yg_status yg__cpu_native_layer_norm_backward_fused_out(const yg_tensor *grad_out,
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
yg_status yg__cpu_native_batch_norm_out(const yg_tensor *input,
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
yg_status yg__cpu_native_batch_norm_backward_fused_out(const yg_tensor *grad_out,
                                                      const yg_tensor *input,
                                                      const yg_tensor *weight,
                                                      const yg_tensor *save_mean,
                                                      const yg_tensor *save_invstd,
                                                      bool training,
                                                      const bool *grad_input_mask,
                                                      yg_tensor *out_grad_input,
                                                      yg_tensor *out_grad_weight,
                                                      yg_tensor *out_grad_bias);

/* creation.c: tensors made from their arguments (the generated wrapper has
 * already picked the device from `device`, so kernels ignore it) */
yg_status yg__kernel_zeros(const int64_t *size,
                        int64_t size_len,
                        const yg_dtype *dtype,
                        const yg_device *device,
                        yg_tensor **out);
yg_status yg__kernel_ones(const int64_t *size,
                       int64_t size_len,
                       const yg_dtype *dtype,
                       const yg_device *device,
                       yg_tensor **out);
yg_status yg__kernel_full(const int64_t *size,
                       int64_t size_len,
                       double fill_value,
                       const yg_dtype *dtype,
                       const yg_device *device,
                       yg_tensor **out);
yg_status yg__kernel_empty(const int64_t *size,
                        int64_t size_len,
                        const yg_dtype *dtype,
                        const yg_device *device,
                        yg_tensor **out);
yg_status yg__kernel_arange(double end, const yg_dtype *dtype, const yg_device *device, yg_tensor **out);
yg_status yg__kernel_arange_start(double start,
                               double end,
                               double step,
                               const yg_dtype *dtype,
                               const yg_device *device,
                               yg_tensor **out);
yg_status yg__kernel_linspace(double start,
                           double end,
                           int64_t steps,
                           const yg_dtype *dtype,
                           const yg_device *device,
                           yg_tensor **out);
yg_status yg__kernel_eye(int64_t n, const yg_dtype *dtype, const yg_device *device, yg_tensor **out);
yg_status yg__kernel_eye_m(int64_t n,
                        int64_t m,
                        const yg_dtype *dtype,
                        const yg_device *device,
                        yg_tensor **out);

/* random.c: random ops drawing from a Philox generator (NULL: the
 * default), structured: reserve the generator's counters and fill out,
 * which yg__meta_<op> (meta/meta.h) made. */
yg_status yg__cpu_rand_out(const int64_t *size,
                       int64_t size_len,
                       yg_generator *generator,
                       const yg_dtype *dtype,
                       const yg_device *device,
                       yg_tensor *out);
yg_status yg__cpu_randn_out(const int64_t *size,
                        int64_t size_len,
                        yg_generator *generator,
                        const yg_dtype *dtype,
                        const yg_device *device,
                        yg_tensor *out);
yg_status yg__cpu_randint_out(int64_t low,
                          int64_t high,
                          const int64_t *size,
                          int64_t size_len,
                          yg_generator *generator,
                          const yg_dtype *dtype,
                          const yg_device *device,
                          yg_tensor *out);
yg_status yg__cpu_bernoulli_out(const yg_tensor *self, yg_generator *generator, yg_tensor *out);
yg_status yg__cpu_bernoulli_p_out(const yg_tensor *self,
                              double p,
                              yg_generator *generator,
                              yg_tensor *out);
/* copy.c: self converted to dtype, a new contiguous tensor; self copied
 * to a device (any device to any), a new contiguous tensor */
yg_status yg__kernel_to_copy(const yg_tensor *self, yg_dtype dtype, yg_tensor **out);
yg_status
yg__kernel_to_device(const yg_tensor *self, yg_device device, int64_t index, yg_tensor **out);

#endif /* YAGRAD_CPU_H */
