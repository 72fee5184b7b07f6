/*
 * cpu.h - the CPU backend: the pointwise iterator that generated kernels
 * run on, and the handwritten kernels named in specs/native_functions.yaml
 * `dispatch:` entries.  Not public API.
 *
 * Kernel contract (every yg__cpu_* op kernel): same C signature as the
 * public op it implements (see generated ops.h); inputs are borrowed and
 * already checked to be non-NULL where the YAML says `Tensor`; the kernel
 * validates shapes, dims and dtypes itself, naming the op in its message;
 * it writes a new reference to *out on success and leaves *out NULL on
 * failure.  Kernels never record autograd history.
 */
#ifndef YAGRAD_CPU_H
#define YAGRAD_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"

/* ---- pointwise iterator (cpu/pointwise.c) ---- */

/* One inner loop over n elements.
 *   ptrs:    n_inputs + 1 byte pointers; ptrs[0] is the output
 *   strides: byte strides, same order (0 for a broadcast operand)
 *   scalars: the op's Scalar/float arguments in YAML order, as doubles */
typedef void (*yg_loop_fn)(char **ptrs, const int64_t *strides, int64_t n, const double *scalars);

typedef struct yg_pointwise_desc {
    const char *op;                       /* "mul", for messages */
    int n_inputs;                         /* tensor inputs, <= 4 */
    const char *const *input_names;       /* {"self", "other"} */
    yg_loop_fn loops[YG_DTYPE_COUNT_];    /* by compute dtype; NULL: unsupported */
} yg_pointwise_desc;

/* out = f(inputs...) elementwise with NumPy broadcasting.  The compute
 * dtype is the promotion of the inputs' dtypes; inputs of another dtype are
 * converted first.  A dtype with no loop fails with YG_ERR_DTYPE:
 * "exp: unsupported dtype int64 for self (supported: float32, float64)".
 * Shapes that do not broadcast fail with YG_ERR_SHAPE.  The output is a
 * new contiguous tensor of the compute dtype. */
yg_status yg__cpu_pointwise(const yg_pointwise_desc *desc,
                            const yg_tensor *const *inputs,
                            const double *scalars,
                            yg_tensor **out);

/* In-place form: self = f(self, inputs[1..]); inputs[0] must be self.
 * The result must have self's shape and dtype (no broadcast of self, no
 * dtype change), else YG_ERR_SHAPE / YG_ERR_DTYPE before anything is
 * written.  Bumps self's version. */
yg_status yg__cpu_pointwise_inplace(const yg_pointwise_desc *desc,
                                    yg_tensor *self,
                                    const yg_tensor *const *inputs,
                                    const double *scalars);

/* ---- handwritten kernels (one per `dispatch: CPU:` entry) ---- */

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

/* blas.c */
yg_status yg__cpu_mm(const yg_tensor *self, const yg_tensor *mat2, yg_tensor **out);

/* shape.c: views (share storage) and copies */
yg_status yg__cpu_transpose(const yg_tensor *self, int64_t dim0, int64_t dim1, yg_tensor **out);
yg_status yg__cpu_t(const yg_tensor *self, yg_tensor **out);
yg_status yg__cpu_view(const yg_tensor *self, const int64_t *size, int64_t size_len, yg_tensor **out);
yg_status yg__cpu_expand(const yg_tensor *self, const int64_t *size, int64_t size_len, yg_tensor **out);
yg_status yg__cpu_unsqueeze(const yg_tensor *self, int64_t dim, yg_tensor **out);
yg_status yg__cpu_clone(const yg_tensor *self, yg_tensor **out);

/* nn.c */
yg_status yg__cpu_log_softmax(const yg_tensor *self, int64_t dim, yg_tensor **out);
yg_status yg__cpu_log_softmax_backward(const yg_tensor *grad_output,
                                       const yg_tensor *output,
                                       int64_t dim,
                                       yg_tensor **out);
yg_status yg__cpu_nll_loss(const yg_tensor *self,
                           const yg_tensor *target,
                           int64_t reduction,
                           int64_t ignore_index,
                           yg_tensor **out);
yg_status yg__cpu_nll_loss_backward(const yg_tensor *grad_output,
                                    const yg_tensor *target,
                                    const int64_t *self_sizes,
                                    int64_t self_sizes_len,
                                    int64_t reduction,
                                    int64_t ignore_index,
                                    yg_tensor **out);

#endif /* YAGRAD_CPU_H */
