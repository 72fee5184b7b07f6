/*
 * yagrad/tensor.h - tensors: creation, inspection, reference counting.
 *
 * A yg_tensor is an opaque, reference-counted handle to a strided view of a
 * storage buffer: sizes, strides (in elements), an offset and a dtype.
 * Several tensors may share one storage (views such as transpose or expand).
 *
 * Ownership: every function that returns a tensor through an out-parameter
 * returns a NEW reference, which the caller releases with yg_release().
 * Tensor arguments are BORROWED unless a parameter says otherwise.
 * yg_release(NULL) is a harmless no-op.
 *
 * Thread safety: reference counting is atomic; a tensor may be read from
 * several threads at once.  Writing a tensor while another thread reads it
 * is a data race, as with any C object.
 *
 * Errors: see status.h.  Anything not declared here is not API.
 */
#ifndef YAGRAD_TENSOR_H
#define YAGRAD_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "yagrad/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest number of dimensions a tensor may have. */
#define YG_MAX_DIMS 8

typedef struct yg_tensor yg_tensor;

/* Element types.  Append only. */
typedef enum yg_dtype {
    YG_FLOAT32 = 0,
    YG_FLOAT64 = 1,
    YG_INT64 = 2,
    YG_BOOL = 3,
    YG_INT32 = 4,
    YG_FLOAT16 = 5,  /* IEEE binary16; a storage type on CPU (see below) */
    YG_BFLOAT16 = 6, /* bfloat16; a storage type on CPU (see below) */
    YG_DTYPE_COUNT_
} yg_dtype;

/* Devices.  A CUDA tensor's storage is memory of one GPU (its index:
 * yg_tensor_device_index), from a caching allocator (yagrad/cuda.h); it is
 * made by copying with yg_tensor_to_device.  Every op runs on CUDA
 * tensors (yagrad/cuda.h); an op given tensors of two devices fails with
 * YG_ERR_DEVICE naming both. */
typedef enum yg_device {
    YG_CPU = 0,
    YG_CUDA = 1,
    YG_DEVICE_COUNT_
} yg_device;

/* float16 and bfloat16 elements are held as their 16-bit patterns
 * (uint16_t).  On CPU tensors of them can be created, viewed, copied,
 * indexed and converted (yg_to_dtype, copy_, yg_tensor_to_f64); the
 * matrix products (mm, bmm, matmul, mv, addmm, baddbmm, linear), add,
 * mul by a scalar and sum compute on them in float32 and round once to
 * nearest even (an op's "Dtypes:" line says whether it takes them); other
 * compute ops refuse them with YG_ERR_DTYPE: convert to float32 first (a
 * binary op whose other operand is float32 or float64 converts them
 * itself, see promotion below).  They can require grad; gradients have
 * the tensor's dtype, and a backward through an op that refuses them
 * fails with that op's dtype error.
 * Conversions into them round to nearest, ties to even, with subnormals,
 * overflow to infinity and NaN kept.  A floating value converted to an
 * integer dtype truncates toward zero; NaN gives 0 and values out of the
 * integer's range saturate.  An int64 converted to int32 wraps around
 * (two's complement).  Any non-zero value (NaN too) converts to bool true.
 *
 * Binary ops on mixed dtypes compute in the promoted dtype:
 * bool < int32 < int64 < float16, bfloat16 < float32 < float64, and
 * float16 with bfloat16 gives float32. */

/* "float32", "float64", "int64", "bool", "int32", "float16", "bfloat16";
 * "unknown" otherwise.  Cannot fail. */
const char *yg_dtype_name(yg_dtype dtype);

/* Size in bytes of one element; 0 for an invalid dtype.  Cannot fail. */
size_t yg_dtype_size(yg_dtype dtype);

/* A new contiguous tensor with uninitialised contents.
 *   sizes:  borrowed, ndim entries, each >= 0 (nullable when ndim == 0)
 *   ndim:   0..YG_MAX_DIMS
 *   dtype:  element type
 *   out:    out: new ref
 * Returns: YG_ERR_SHAPE for a negative size or ndim out of range,
 *          YG_ERR_DTYPE for an invalid dtype, YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_tensor_empty(const int64_t *sizes,
                                       int64_t ndim,
                                       yg_dtype dtype,
                                       yg_tensor **out);

/* Like yg_tensor_empty, filled with zeros. */
YG_NODISCARD yg_status yg_tensor_zeros(const int64_t *sizes,
                                       int64_t ndim,
                                       yg_dtype dtype,
                                       yg_tensor **out);

/* Like yg_tensor_empty, every element set to value (converted to dtype). */
YG_NODISCARD yg_status yg_tensor_full(const int64_t *sizes,
                                      int64_t ndim,
                                      double value,
                                      yg_dtype dtype,
                                      yg_tensor **out);

/* A new contiguous tensor holding a copy of data.
 *   data:   borrowed, numel elements of dtype in row-major order
 *           (nullable when numel == 0)
 *   sizes, ndim, dtype, out: as yg_tensor_empty */
YG_NODISCARD yg_status yg_tensor_from_data(const void *data,
                                           const int64_t *sizes,
                                           int64_t ndim,
                                           yg_dtype dtype,
                                           yg_tensor **out);

/* A 0-dim tensor holding value converted to dtype. */
YG_NODISCARD yg_status yg_tensor_scalar(double value, yg_dtype dtype, yg_tensor **out);

/* Adds a reference and returns t.  NULL-safe.  Cannot fail. */
yg_tensor *yg_retain(yg_tensor *t);

/* Drops a reference; frees the tensor with the last one.  NULL-safe. */
void yg_release(yg_tensor *t);

/* Releases each of the len tensors of items (NULL entries allowed) and
 * frees the array itself: what ops returning Tensor[] (yg_split,
 * yg_chunk, ...) give back as (yg_tensor **out, int64_t out_len).
 * yg_release_list(NULL, n) is a harmless no-op.  Cannot fail. */
void yg_release_list(yg_tensor **items, int64_t len);

/* Inspection.  Each cannot fail; given NULL they return 0 / NULL / false.
 * yg_tensor_sizes and yg_tensor_strides return borrowed arrays of
 * yg_tensor_ndim() entries, valid while t lives. */
int64_t yg_tensor_ndim(const yg_tensor *t);
const int64_t *yg_tensor_sizes(const yg_tensor *t);
const int64_t *yg_tensor_strides(const yg_tensor *t);
int64_t yg_tensor_size(const yg_tensor *t, int64_t dim); /* dim may be negative */
int64_t yg_tensor_numel(const yg_tensor *t);
yg_dtype yg_tensor_dtype(const yg_tensor *t);
yg_device yg_tensor_device(const yg_tensor *t);
bool yg_tensor_is_contiguous(const yg_tensor *t);
/* Which device of its kind t is on: 1 for cuda:1, 0 on the CPU (and for
 * NULL). */
int32_t yg_tensor_device_index(const yg_tensor *t);

/* A contiguous tensor on device (index: which GPU; ignored for YG_CPU)
 * with t's sizes, dtype and values.  When t is there already and
 * contiguous, *out is a new reference to t itself; a view is gathered on
 * its own device first.  A copy of a t that requires grad (grad mode on)
 * is the differentiable to_device op (yagrad/ops_dtype_conversion.h):
 * backward copies the gradient back to t's device; any other copy has no
 * autograd history.
 * Copies to or from a GPU are complete when it returns (they wait for
 * the current stream: yagrad/cuda.h).
 *   t: borrowed;  out: out: new ref
 * Returns: YG_ERR_DEVICE for a device value that is no yg_device, or one
 *          that cannot be used, with the reason ("to_device: cuda: built
 *          without CUDA ...", "to_device: cuda: no CUDA device (...)",
 *          "to_device: device index 3 out of range (1 device)");
 *          YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_tensor_to_device(const yg_tensor *t,
                                           yg_device device,
                                           int32_t index,
                                           yg_tensor **out);

/* Pointer to the first element (storage data + offset): host memory for
 * a cpu tensor, device memory for a cuda one.
 * Returns: borrowed, valid while t's storage lives; writing through it
 * bypasses autograd's version checks. */
void *yg_tensor_data(const yg_tensor *t);

/* Copies t's elements, converted to float64, in row-major order (from a
 * GPU through a host copy).
 *   t:   borrowed
 *   dst: borrowed, room for dst_len doubles
 * Returns: YG_ERR_SHAPE when dst_len != numel(t). */
YG_NODISCARD yg_status yg_tensor_to_f64(const yg_tensor *t, double *dst, int64_t dst_len);

/* The single element of a tensor with numel 1, as a double.
 * Returns: YG_ERR_SHAPE when numel(t) != 1. */
YG_NODISCARD yg_status yg_tensor_item(const yg_tensor *t, double *out);

/* Writes "[2, 3]"-style sizes into buf (always NUL-terminated when
 * buf_len > 0; truncated if too small).  Returns buf.  Cannot fail. */
char *yg_tensor_format_sizes(const yg_tensor *t, char *buf, size_t buf_len);

/* Tensor memory comes from one caching allocator: freed blocks are kept
 * by size class (up to 2 GiB) and handed out again, so steady-state
 * training maps no fresh pages.  YG_ALLOC_CACHE=0 in the environment, read
 * once at load, turns the cache off (every block goes back to the system
 * when freed), which makes leak and use-after-free checkers precise. */

/* Sets every allocation of the tensor allocator's cache free.  Cannot fail. */
void yg_allocator_empty_cache(void);

/* Allocator statistics (bytes).  Cannot fail. */
typedef struct yg_allocator_stats {
    int64_t allocated_bytes; /* held by live storages */
    int64_t cached_bytes;    /* freed blocks kept for reuse */
    int64_t peak_allocated_bytes;
    int64_t num_allocs;      /* requests served */
    int64_t num_cache_hits;  /* requests served from the cache */
} yg_allocator_stats;
void yg_allocator_get_stats(yg_allocator_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* YAGRAD_TENSOR_H */
