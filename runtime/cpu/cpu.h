/*
 * cpu.h - the CPU backend: the pointwise iterator that generated kernels
 * run on (on the CPU, or through another device's backend,
 * meta/pointwise.h), the contract of the handwritten kernels named in
 * specs/native_functions.yaml `dispatch:` entries (gen declares them, in
 * decls/<section>.h) and the helpers they share.  Not public API.
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

/* ---- helpers of the handwritten kernels ----
 * The kernels themselves (one per `dispatch: CPU:` entry) are declared
 * by gen from the YAML, per section, in decls/<section>.h; the file that
 * defines one includes its section's header. */

/* scan.c: cumprod's forward-mode derivative */
yg_status
yg__cpu_cumprod_jvp(const yg_tensor *grad, const yg_tensor *self, int64_t dim, yg_tensor **out);

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
/* c = op(a) op(b) for float16 or bfloat16 (dtype) operands and result,
 * computed in float32 and rounded to nearest even once on store (blas.c
 * says how: oneDNN's bf16 matmul, else float32 copies and the float32
 * gemm).  Same argument rules as yg__cpu_gemm, beta 0.  Fails only with
 * YG_ERR_OUT_OF_MEMORY (the message names op). */
yg_status yg__cpu_gemm_half(const char *op,
                            yg_dtype dtype,
                            bool ta,
                            bool tb,
                            int64_t m,
                            int64_t n,
                            int64_t k,
                            const void *a,
                            int64_t lda,
                            const void *b,
                            int64_t ldb,
                            void *c,
                            int64_t ldc);
/* shape.c: views (share storage) */
yg_status
yg__kernel_view(const yg_tensor *self, const int64_t *size, int64_t size_len, yg_tensor **out);
yg_status
yg__kernel_expand(const yg_tensor *self, const int64_t *size, int64_t size_len, yg_tensor **out);

/* split.c: a tensor cut into a list of views along one dim (ops returning
 * Tensor(a)[]: *out is a new array of *out_len new refs) */
yg_status
yg__kernel_unbind(const yg_tensor *self, int64_t dim, yg_tensor ***out, int64_t *out_len);

/* copy.c: self copied to a device (any device to any), a new contiguous
 * tensor */
yg_status
yg__kernel_to_device(const yg_tensor *self, yg_device device, int64_t index, yg_tensor **out);

#endif /* YAGRAD_CPU_H */
