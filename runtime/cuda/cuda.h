/*
 * cuda/cuda.h - what the CUDA module's files share: device.c (devices,
 * the per-device caching allocator, kernel launches and the host side of
 * the kernels), the kernels of *.cu, blas.c (cuBLAS), index.c.  Code
 * outside the module reaches these only through the module's table
 * (cuda/backend.h).  Not public API; yagrad/cuda.h is.
 */
#ifndef YAGRAD_CUDA_CUDA_H
#define YAGRAD_CUDA_CUDA_H

#include "cuda/launch.h"
#include "cuda/norm.h"
#include "cuda/ops.h"
#include "cuda/pool.h"
#include "cuda/upsample.h"
#include "yagrad/cuda.h"
#include "yagrad/tensor.h"

#include <stdbool.h>
#include <stdint.h>

#include <stddef.h>

/* The most devices the backend uses (more are ignored). */
#define YG_CUDA_MAX_DEVICES 64

/* yagrad/cuda.h's functions as the module implements them (device.c):
 * each yg__cuda_X is yg_cuda_X, with its contract; cuda/api.c forwards
 * the public names here through the module's table (cuda/backend.h).
 * yg_cuda_is_available is device_count() > 0, and the TF32 switch lives
 * in cuda/api.c. */
yg_status yg__cuda_check(void);
int yg__cuda_device_count(void);
yg_status yg__cuda_get_device_properties(int index, yg_cuda_device_properties *out);
yg_status yg__cuda_synchronize(int index);
yg_status yg__cuda_memory_stats_get(int index, yg_cuda_memory_stats *out);
void yg__cuda_empty_cache(void);
void yg__cuda_release_all(bool reset);

/* Adds fn to what yg__cuda_release_all runs before it releases the
 * module's own resources (cuDNN's handles: conv/cudnn.c registers at
 * load).  At most 8; more are ignored.  Cannot fail. */
void yg__cuda_at_release(void (*fn)(void));
yg_status yg__cuda_stream_create(int index, yg_cuda_stream **out);
void yg__cuda_stream_destroy(yg_cuda_stream *stream);
yg_status yg__cuda_set_stream(int index, yg_cuda_stream *stream);
yg_cuda_stream *yg__cuda_get_stream(int index);
int yg__cuda_stream_device(const yg_cuda_stream *stream);
yg_status yg__cuda_stream_synchronize(int index, yg_cuda_stream *stream);
yg_status yg__cuda_event_create(int index, yg_cuda_event **out);
void yg__cuda_event_destroy(yg_cuda_event *event);
yg_status yg__cuda_event_record(yg_cuda_event *event, yg_cuda_stream *stream);
yg_status yg__cuda_stream_wait_event(yg_cuda_stream *stream, yg_cuda_event *event);
yg_status yg__cuda_event_synchronize(yg_cuda_event *event);
yg_status yg__cuda_event_query(yg_cuda_event *event, bool *done);
yg_status yg__cuda_event_elapsed_ms(yg_cuda_event *start, yg_cuda_event *end, double *ms);

/* *out = nbytes of memory on device index from its caching allocator, for
 * the calling thread's current stream.  Errors name op: YG_ERR_DEVICE
 * when no device is usable or index is out of range, YG_ERR_OUT_OF_MEMORY
 * "<op>: out of CUDA memory allocating N bytes on cuda:I (allocated A,
 * reserved R bytes)" after the cache was given back and the allocation
 * retried.  *out is NULL on failure. */
yg_status yg__cuda_alloc(const char *op, int index, size_t nbytes, void **out);

/* Returns memory from yg__cuda_alloc.  NULL-safe.  Cannot fail. */
void yg__cuda_free(int index, void *ptr);

/* Copies nbytes from src to dst, each host memory (index -1) or memory
 * from yg__cuda_alloc on device index, on the current stream of the
 * device (the destination's between devices); a copy with the host is
 * complete when it returns (the stream's earlier work too), one between
 * devices is queued after the source device's current stream's earlier
 * work, and that stream's later work after it (events both ways).  Large
 * copies with pageable host memory go through pinned staging buffers.
 * Errors name op: YG_ERR_DEVICE with the CUDA runtime's reason, naming
 * both ends. */
yg_status yg__cuda_memcpy(
    const char *op, void *dst, int dst_index, const void *src, int src_index, size_t nbytes);

/* Sets nbytes at ptr (memory from yg__cuda_alloc on device index) to the
 * byte value on the device's current stream.  Errors name op:
 * YG_ERR_DEVICE with the CUDA runtime's reason. */
yg_status yg__cuda_memset(const char *op, int index, void *ptr, int value, size_t nbytes);

/* Zeros height rows of width bytes, pitch bytes apart, from ptr (memory
 * from yg__cuda_alloc on device index) on the device's current stream.
 * Errors name op: YG_ERR_DEVICE with the CUDA runtime's reason. */
yg_status yg__cuda_memset2d(const char *op, int index, void *ptr, size_t pitch, size_t width,
                            size_t height);

/* The module's symbol name (a launcher table, an implementation), or
 * NULL (cuda/module.c). */
void *yg__cuda_symbol(const char *name);

/* Launches CUDA loop fn over every element of ops[0] on its GPU: ops[0]
 * is the output, ops[1..nops) inputs of its shape or broadcast to it, all
 * on one device, each of the element type fn takes at its position.
 * meta/pointwise.c's walk (size-1 dims dropped, mergeable dims merged) in
 * elements, with n_scalars of scalars (<= YG_CUDA_MAX_SCALARS).  An empty
 * ops[0] launches nothing.  Errors as yg__cuda_launch.  cuda/pointwise.c. */
yg_status yg__cuda_loop(const char *op,
                        yg_tensor *const *ops,
                        int nops,
                        yg_cuda_launch_fn fn,
                        const double *scalars,
                        int n_scalars);

/* The module's yg_pointwise_backend (meta/pointwise.h; cuda/pointwise.c). */
struct yg_pointwise_backend;
extern const struct yg_pointwise_backend yg__cuda_pointwise;

/* YG_OK when index names a usable device, else YG_ERR_DEVICE naming op. */
yg_status yg__cuda_check_index(const char *op, int index);

/* Makes device index current for the calling thread (*prev: the one to
 * give yg__cuda_device_leave).  Errors as yg__cuda_check_index, or
 * YG_ERR_DEVICE with the CUDA runtime's reason. */
yg_status yg__cuda_device_enter(const char *op, int index, int *prev);
void yg__cuda_device_leave(int prev);

/* YG_OK for a launch's cudaError_t err of 0, else YG_ERR_DEVICE
 * "<op>: launching a kernel on cuda:I: <reason>" (clearing the error). */
yg_status yg__cuda_check_launch(const char *op, int index, int err);

/* yg__cpu_gemm (cpu/cpu.h) on device index with cuBLAS: c [m, n]
 * (row-major, leading dim ldc) = op(a) op(b) + beta c, every pointer
 * device memory there; float32 (TF32 only when yg_cuda_set_allow_tf32
 * allowed it) or float64.  Errors name op: YG_ERR_DEVICE with cuBLAS's
 * reason. */
yg_status yg__cuda_gemm(const char *op,
                        int index,
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
                        double beta,
                        void *c,
                        int64_t ldc);

/* Frees the cuBLAS workspace of stream (a cudaStream_t, not NULL) on
 * device index, whose work is done (yg__cuda_stream_destroy synchronised
 * it).  Cannot fail (cuda/blas.c). */
void yg__cuda_blas_forget_stream(int index, void *stream);

/* Destroys every cuBLAS handle and frees every workspace (each handle is
 * made again on its next use).  No gemm may be running.  Cannot fail
 * (cuda/blas.c). */
void yg__cuda_blas_release(void);

/* Sums each of rows contiguous rows of cols elements of src (dtype
 * float32, float64, int64, bool or int32) into dst[rows] (float32/float64
 * for those, int64 for the others; times 1/cols when mean: a mean of no
 * element is NaN), accumulating in double or int64; both on device
 * index.  Errors name op: YG_ERR_DEVICE (launch), YG_ERR_OUT_OF_MEMORY
 * (the scratch of long rows).  cuda/reduce.cu. */
yg_status yg__cuda_sum_rows(const char *op, int index, yg_dtype dtype, const void *src,
                            void *dst, int64_t rows, int64_t cols, bool mean);

/* cpu/nn.c's softmax and log_softmax (is_log), forward or backward, on
 * device index: dst = f(a) or, backward, from a = grad_output and b =
 * output; contiguous [outer, n, inner] float32 or float64 (f64) blocks,
 * every extent > 0.  cuda/softmax.cu.  Errors as yg__cuda_check_launch. */
yg_status yg__cuda_softmax(const char *op, int index, bool f64, void *dst, const void *a,
                           const void *b, int64_t outer, int64_t n, int64_t inner, bool is_log,
                           bool backward);

/* cpu/nn.c's nll_loss (backward false: self with element strides s0, s1)
 * or its backward (self is grad_output, stride s0; out a zeroed [N, C]
 * contiguous gradient), with device int64 targets (stride ts, already
 * checked), weight (stride ws) or NULL, and a Reduction; on device index.
 * cuda/nll.cu.  Errors as yg__cuda_check_launch, or YG_ERR_OUT_OF_MEMORY
 * for the partial sums of a large batch. */
yg_status yg__cuda_nll(const char *op, int index, bool f64, bool backward, const void *self,
                       int64_t s0, int64_t s1, const int64_t *target, int64_t ts,
                       const void *weight, int64_t ws, int64_t batch, int64_t classes,
                       int64_t ignore_index, int64_t reduction, void *out);

/* cpu/random.c's draw of kind (0 uniform, 1 normal, 2 integer, 3
 * bernoulli) into t's n contiguous elements on its GPU, from the counters
 * of r: the CPU's values for the same counters (cuda/random.cu).  probs:
 * contiguous float64 device probabilities, one per element, or NULL for
 * p.  Errors as yg__cuda_check_launch. */
struct yg__philox_range;
yg_status yg__cuda_draw(const char *op, yg_tensor *t, const struct yg__philox_range *r, int kind,
                        int64_t low, uint64_t range, double p, const double *probs);

/* out [outer, k, inner] (new, contiguous, on src's GPU) = src viewed as
 * [outer, size, inner] gathered along its middle dim by the k int64
 * values of index (any device, already checked to be in [0, size)).
 * cuda/index.c.  Errors name op. */
yg_status yg__cuda_gather(const char *op, const yg_tensor *src, int64_t outer, int64_t size,
                          int64_t inner, const yg_tensor *index, yg_tensor *out);

/* out [outer, size, inner] (contiguous) += grad [outer, k, inner] at the
 * rows index names (k checked int64 values, any device; a row equal to
 * skip adds nothing), deterministically: each output element adds its
 * contributions in increasing k, in the element's type, as the CPU
 * does.  cuda/index.c.  Errors name op. */
yg_status yg__cuda_index_add(const char *op, const yg_tensor *grad, int64_t outer, int64_t size,
                             int64_t inner, const yg_tensor *index, int64_t skip, yg_tensor *out);

/* out (new, contiguous, n elements, self's dtype and GPU) [k] = self's
 * element at element offset off[k] from self's first element (n host
 * int64 offsets, each inside self's storage): advanced indexing's reads.
 * cuda/index.c.  Errors name op. */
yg_status yg__cuda_take(
    const char *op, const yg_tensor *self, const int64_t *off, int64_t n, yg_tensor *out);

/* Advanced indexing's writes: dst's element at element offset off[k]
 * (n host int64 offsets from dst's first element, each in [0, span)) gets
 * element k of values (contiguous, n elements, dst's dtype and GPU):
 * added in increasing k with accumulate, else the last k's value, both
 * deterministic and equal to the CPU's sequential loop.  cuda/index.c.
 * Errors name op. */
yg_status yg__cuda_put(const char *op,
                       yg_tensor *dst,
                       const int64_t *off,
                       int64_t n,
                       int64_t span,
                       const yg_tensor *values,
                       bool accumulate);

/* cpu/rnn.c's lstm_cell_gates (out0 = hy, out1 = cy) or, backward, its
 * gradient (out0: the gates' [rows, 4h], out1: cx's, from ghy and gcy),
 * over contiguous tensors on device index; rows * h > 0.  cuda/rnn.cu.
 * Errors as yg__cuda_check_launch. */
yg_status yg__cuda_lstm_gates(const char *op, int index, bool f64, bool backward, yg_tensor *out0,
                              yg_tensor *out1, const yg_tensor *ghy, const yg_tensor *gcy,
                              const yg_tensor *ig, const yg_tensor *hg, const yg_tensor *cx,
                              int64_t rows, int64_t h);

/* cpu/norm.c's native_layer_norm (backward false: p0 = y, p1 = mean,
 * p2 = rstd from x, w, b) or its fused gradient (p0 = grad_input, p1 =
 * grad_weight, p2 = grad_bias, each nullable, from g, x, mean, rstd, w),
 * over contiguous [rows, m] tensors on device index; w and b nullable;
 * rows * m > 0.  cuda/layer_norm.cu.  Errors as yg__cuda_check_launch. */
yg_status yg__cuda_layer_norm(const char *op, int index, bool f64, bool backward, yg_tensor *p0,
                              yg_tensor *p1, yg_tensor *p2, const yg_tensor *g,
                              const yg_tensor *x, const yg_tensor *mean, const yg_tensor *rstd,
                              const yg_tensor *w, const yg_tensor *b, int64_t rows, int64_t m,
                              double eps);

/* The row reduction kind (cuda/rows.h's yg_rows_kind) of the
 * contiguous [outer, inner] rows of data (float64, int64 or bool) into
 * values (data's dtype, nullable) and indices (int64, nullable), all on
 * data's GPU.  cuda/rows.cu.  Errors as yg__cuda_check_launch. */
yg_status yg__cuda_rows(const char *op, const yg_tensor *data, int64_t outer, int64_t inner,
                        int kind, double param, yg_tensor *values, yg_tensor *indices);

/* The row gradient kind (cuda/rows.h's yg_rows_grad_kind) of the
 * contiguous float64 [outer, inner] rows x, with operands a and b
 * (float64, contiguous; b nullable where kind reads none) and scratch (a
 * float64 [outer, inner] block for the double-backward kinds, else
 * NULL), into out (float64 [outer, inner], every element written), all
 * on out's GPU, in the CPU's order (cuda/rows.cu).  param: norm's p.
 * Launches nothing when out has no element.  Errors as
 * yg__cuda_check_launch. */
yg_status yg__cuda_rows_grad(const char *op, int kind, double param, int64_t outer,
                             int64_t inner, yg_tensor *out, const yg_tensor *x,
                             const yg_tensor *a, const yg_tensor *b, yg_tensor *scratch);

/* cpu/index.c's gather (is_gather: out = shape's elements at index along
 * d) or scatter (mode 0 copy src, 1 store *value, 2 add src) into out, in
 * the CPU's order (cuda/scatter.cu); out, src and index (int64, checked)
 * contiguous on one GPU; shape: self (gather) or out (scatter), for its
 * sizes.  Errors name op. */
yg_status yg__cuda_scatter(const char *op, bool is_gather, int mode, yg_tensor *out,
                           const yg_tensor *src, const void *value, const yg_tensor *index, int d,
                           const yg_tensor *shape);

/* cumsum (prod false) or cumprod along each contiguous row of the
 * float64 or int64 block data [outer, inner], in place, in the CPU's
 * order (cuda/rows.cu).  Errors as yg__cuda_check_launch. */
yg_status yg__cuda_scan(const char *op, yg_tensor *data, int64_t outer, int64_t inner, bool prod);

/* Runs launcher fn over a's loop on device index (made current for the
 * launch, then restored); the kernel runs asynchronously on a->stream.
 * Errors name op: YG_ERR_DEVICE "<op>: launching a kernel on cuda:I:
 * <the CUDA runtime's reason>". */
yg_status yg__cuda_launch(const char *op, int index, yg_cuda_launch_fn fn,
                          const yg_cuda_loop_args *a);

/* Copies src's elements, converted to dst's dtype by core/convert.c's
 * rules, into dst (any layout whose elements do not overlap): same sizes,
 * both on one device.  A kernel of cuda/copy.cu on the iterator's
 * geometry. */
yg_status yg__cuda_copy(const char *op, yg_tensor *dst, const yg_tensor *src);


#endif /* YAGRAD_CUDA_CUDA_H */
