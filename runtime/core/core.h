/*
 * core.h - tensor and storage internals shared by every runtime module and
 * by the generated code.  Not public API.
 *
 * A storage owns one buffer from the caching allocator (yg__alloc) and a
 * version counter shared by every tensor viewing it; in-place writes bump
 * it so autograd can detect saved values that were modified.
 *
 * Errors are set with yg__fail(), which formats the thread-local message
 * and returns the code: return yg__fail(YG_ERR_SHAPE, "mm: ...").
 */
#ifndef YAGRAD_CORE_H
#define YAGRAD_CORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sizes.h"
#include "yagrad/status.h"
#include "yagrad/tensor.h"

#if defined(__GNUC__) || defined(__clang__)
#define YG__PRINTF(fmt_idx, arg_idx) __attribute__((format(printf, fmt_idx, arg_idx)))
#else
#define YG__PRINTF(fmt_idx, arg_idx)
#endif

#ifdef NDEBUG
#define YG_ASSERT(cond) ((void)0)
#else
#include <assert.h>
#define YG_ASSERT(cond) assert(cond)
#endif

/* Propagates a failure; use only while the function owns nothing. */
#define YG_RETURN_IF_ERROR(expr)                                                                   \
    do {                                                                                           \
        yg_status yg__st_ = (expr);                                                                \
        if (yg__st_ != YG_OK)                                                                      \
            return yg__st_;                                                                        \
    } while (0)

typedef struct yg_node yg_node;
typedef struct yg_autograd_meta yg_autograd_meta;

/* ---- errors (core/status.c) ---- */

/* Sets this thread's message from fmt and returns code. */
yg_status yg__fail(yg_status code, const char *fmt, ...) YG__PRINTF(2, 3);

/* Bytes of a thread's error message, terminator included (longer messages
 * are cut); a buffer this size holds a copy of yg_last_error(). */
#define YG__MESSAGE_CAP 1024

/* Prepends "prefix: " to this thread's message (composite ops and backward
 * nodes name themselves).  Returns code. */
yg_status yg__fail_prefix(yg_status code, const char *prefix);

/* ---- allocator (core/alloc.c) ---- */

/* 64-byte aligned block of at least nbytes from the size-class cache; NULL
 * when out of memory (no message set).  nbytes 0 gives a valid block. */
void *yg__alloc(size_t nbytes);
/* Returns a block from yg__alloc to the cache.  NULL-safe. */
void yg__free(void *ptr, size_t nbytes);
/* Makes yg__alloc on this thread fail (NULL, so the op reports out of
 * memory) for blocks over nbytes; 0 lifts the limit.  Returns the previous
 * limit, to restore.  For work that must stay small whatever its input
 * asks for: constant propagation evaluating an op of a graph it was given.
 * Cannot fail. */
size_t yg__alloc_set_thread_limit(size_t nbytes);

/* ---- storage and tensor ---- */

/* data is host memory from yg__alloc on YG_CPU, device memory from the
 * CUDA caching allocator (cuda/cuda.h) on YG_CUDA: only code that checked
 * the device (a kernel of that device, yg__require_host) reads it. */
typedef struct yg_storage {
    atomic_long refcount;
    void *data;
    size_t nbytes;
    yg_device device;
    int32_t device_index; /* which GPU (cuda:1 is 1); 0 on the CPU */
    atomic_uint version;  /* bumped by every in-place write to any view */
} yg_storage;

struct yg_tensor {
    atomic_long refcount;
    yg_storage *storage;
    int64_t offset; /* in elements */
    int32_t ndim;
    yg_dtype dtype;
    int64_t sizes[YG_MAX_DIMS];
    int64_t strides[YG_MAX_DIMS]; /* in elements */
    yg_autograd_meta *autograd;   /* NULL until autograd needs one */
    uint64_t serial;              /* creation order, from yg__tensor_next_serial */
};

/* A new contiguous tensor of sizes and dtype, uninitialised; the checks
 * and messages of yg_tensor_empty under the name op ("<op>: negative
 * size in size [..]", "<op>: the contiguous strides of sizes [..]
 * overflow int64", ...). */
yg_status yg__tensor_new(const char *op,
                         const int64_t *sizes,
                         int64_t ndim,
                         yg_dtype dtype,
                         yg_tensor **out);

/* yg__tensor_new on device (and device_index; 0 for the CPU).  A device
 * that cannot be used fails with YG_ERR_DEVICE naming op and the reason
 * ("built without CUDA", an index out of range). */
yg_status yg__tensor_new_on(const char *op,
                            const int64_t *sizes,
                            int64_t ndim,
                            yg_dtype dtype,
                            yg_device device,
                            int32_t device_index,
                            yg_tensor **out);

/* yg__tensor_new_on with every element zero (all bits clear: 0, 0.0,
 * false in every dtype), on any device (its backend's memset). */
yg_status yg__tensor_zeros_on(const char *op,
                              const int64_t *sizes,
                              int64_t ndim,
                              yg_dtype dtype,
                              yg_device device,
                              int32_t device_index,
                              yg_tensor **out);

/* Fails with YG_ERR_DEVICE, "<op>: <arg> is on cuda:0; this needs a cpu
 * tensor (copy it with yg_tensor_to_device)", unless t's data is host
 * memory; for code outside the kernels that reads or writes elements. */
yg_status yg__require_host(const char *op, const char *arg, const yg_tensor *t);

/* "cpu" or "cuda:<index>" for t's device, into buf (NUL-terminated). */
char *yg__format_device(const yg_tensor *t, char *buf, size_t buf_len);

/* A new tensor viewing t's storage with the given geometry (no autograd
 * history, dtype of t).  sizes/strides have ndim entries.  Every view goes
 * through here, so this is where a geometry is checked (sizes.h,
 * yg__geometry_check): a view that would reach outside t's storage, or
 * whose element count or extent overflows, fails with YG_ERR_SHAPE
 * "<op>: sizes [..] with strides [..] and offset N ..." naming op. */
yg_status yg__tensor_view(const char *op,
                          const yg_tensor *t,
                          const int64_t *sizes,
                          const int64_t *strides,
                          int32_t ndim,
                          int64_t offset,
                          yg_tensor **out);

/* A new contiguous tensor with t's sizes and the given dtype (uninit), on
 * t's device. */
yg_status yg__tensor_empty_like(const yg_tensor *t, yg_dtype dtype, yg_tensor **out);

/* A new contiguous tensor with a copy of t's values converted to dtype.
 * No autograd history.  Cheap path: returns a new ref to t itself when t
 * is already contiguous with that dtype and share_if_possible is true. */
yg_status yg__tensor_contiguous_as(const yg_tensor *t,
                                   yg_dtype dtype,
                                   bool share_if_possible,
                                   yg_tensor **out);

/* t's values on (device, index) (a valid device; index 0 for the CPU),
 * contiguous: a new reference to t itself when it is there and contiguous
 * already, else a copy (a view is gathered on its own device first).  No
 * autograd history.  Errors name "to_device": YG_ERR_DEVICE (no such
 * device, a failed copy), YG_ERR_OUT_OF_MEMORY. */
yg_status yg__tensor_to(const yg_tensor *t, yg_device device, int32_t index, yg_tensor **out);

/* A new tensor that shares t's storage and geometry but has no autograd
 * metadata ("detached alias"). */
yg_status yg__tensor_alias(const yg_tensor *t, yg_tensor **out);

/* Frees a tensor's autograd state (autograd/meta.c).  NULL-safe. */
void yg__autograd_meta_free(yg_autograd_meta *meta);

/* The serial the next tensor header created (by any thread) will get.
 * Serials count up from 1 in creation order; views and aliases get their
 * own.  The tracer compares a tensor's serial with the value read when
 * the trace began to tell tensors that existed before it (parameters)
 * from ones created during it (constants).  Cannot fail. */
uint64_t yg__tensor_next_serial(void);

/* Bumps the version counter of t's storage (after an in-place write). */
void yg__tensor_bump_version(const yg_tensor *t);
uint32_t yg__tensor_version(const yg_tensor *t);

/* Element pointer helpers. */
static inline char *yg__tensor_ptr(const yg_tensor *t)
{
    return (char *)t->storage->data + t->offset * (int64_t)yg_dtype_size(t->dtype);
}

/* Whether CPU kernels compute in d as a floating type: float32 and
 * float64.  float16 and bfloat16 (yg__dtype_is_half) are not included:
 * most compute kernels refuse them; those that take them (the matrix
 * products, add, mul.Scalar, sum) compute in float32 and check for them
 * apart.  Both kinds carry autograd history. */
static inline bool yg__dtype_is_floating(yg_dtype d)
{
    return d == YG_FLOAT32 || d == YG_FLOAT64;
}

/* float16 or bfloat16: 16-bit floats, mostly storage types on CPU. */
static inline bool yg__dtype_is_half(yg_dtype d)
{
    return d == YG_FLOAT16 || d == YG_BFLOAT16;
}

/* Fails with YG_ERR_DTYPE, "<op>: <arg> has dtype float16, a storage type
 * on cpu: convert it with to() to float32 first", when t is float16 or
 * bfloat16; for kernels that compute. */
yg_status yg__check_not_half(const char *op, const char *arg, const yg_tensor *t);

/* Fails with YG_ERR_SHAPE "<op>: <name> [5, 3] does not match self [3,
 * 5]" unless t has self's sizes. */
yg_status yg__check_sizes_match(const char *op,
                                const char *name,
                                const yg_tensor *t,
                                const yg_tensor *self);

/* Fails with YG_ERR_DTYPE ("<op>: unsupported dtype int64 for <arg>
 * (supported: float32, float64)") unless t is float32 or float64. */
yg_status yg__check_floating(const char *op, const char *arg, const yg_tensor *t);

/* ---- element conversions (core/convert.c) ---- */

/* float16/bfloat16 bits nearest to v (ties to even; NaN stays NaN). */
uint16_t yg__f16_from_f64(double v);
uint16_t yg__f16_from_i64(int64_t v);
uint16_t yg__bf16_from_f64(double v);
uint16_t yg__bf16_from_i64(int64_t v);
/* The value of float16/bfloat16 bits (exact). */
float yg__f16_to_f32(uint16_t h);
float yg__bf16_to_f32(uint16_t h);
/* Truncation toward zero; NaN gives 0, out-of-range values saturate. */
int64_t yg__i64_from_f64(double v);
int32_t yg__i32_from_f64(double v);
/* Two's complement wrap-around. */
int32_t yg__i32_from_i64(int64_t v);
/* One element at p of dtype, as a double (int64 beyond 2^53 rounds). */
double yg__load_f64(const void *p, yg_dtype dtype);
/* Stores v converted to dtype at p, by the rules above. */
void yg__store_f64_as(void *p, yg_dtype dtype, double v);

/* The dtype two operands promote to: bool < int32 < int64 < float16,
 * bfloat16 < float32 < float64; float16 with bfloat16 gives float32. */
yg_dtype yg__promote_types(yg_dtype a, yg_dtype b);

/* "cpu", "cuda"; "unknown" otherwise. */
const char *yg__device_name(yg_device device);

/* The device whose kernel an op with a Device argument runs (core/device.c):
 * *device when device is not NULL, else the device of like, else the CPU
 * (like is NULL for ops without tensors).  Fails with YG_ERR_DEVICE
 * "<op>: invalid device <n>" for a value that is no yg_device. */
yg_status yg__dispatch_device(const char *op,
                              const yg_device *device,
                              const yg_tensor *like,
                              yg_device *out);

/* Fails with YG_ERR_DEVICE unless the given tensors (n of ts, named
 * names; then list_len items of list, named "list_name[i]"; NULL entries
 * skipped) are all on one device: "add: expected all tensors on one
 * device, but self is on cpu and other on cuda:0".  The generated entry
 * point of every kernel op with several tensors calls it. */
yg_status yg__check_devices(const char *op,
                            int32_t n,
                            const yg_tensor *const *ts,
                            const char *const *names,
                            const yg_tensor *const *list,
                            int64_t list_len,
                            const char *list_name);

/* Writes "[2, 3]" for sizes into buf (NUL-terminated, truncated). */
char *yg__format_sizes(const int64_t *sizes, int64_t ndim, char *buf, size_t buf_len);

/* Wraps dim into [0, ndim) or fails with
 * "<op>: dim <d> out of range for <arg> with <ndim> dims". */
yg_status yg__wrap_dim(const char *op, const char *arg, int64_t dim, int64_t ndim, int64_t *out);

/* Broadcast shape of a and b (NumPy rules) or fail with
 * "<op>: cannot broadcast <aname> [..] with <bname> [..]". */
yg_status yg__broadcast_shapes(const char *op,
                               const char *aname,
                               const int64_t *asizes,
                               int64_t andim,
                               const char *bname,
                               const int64_t *bsizes,
                               int64_t bndim,
                               int64_t *out_sizes,
                               int64_t *out_ndim);

/* For the kernels gen writes for ops with an `int_divisor:` (core/intmath.h):
 * when the inputs (all present) promote to int64 or int32, fails with
 * YG_ERR_INVALID_ARGUMENT, "<op>: integer division by zero: <name> holds
 * a 0 (at [1, 0]; the inputs are int64)", if inputs[divisor] has a zero
 * element, or "<op>: integer division by zero: <name> is 0 (the input is
 * int64)" for a Scalar divisor.  Other dtypes and devices pass through,
 * for the pointwise iterator to take or refuse.  Reads every element of
 * the divisor once (core/int_divisor.c). */
yg_status yg__check_int_divisor(const char *op,
                                const yg_tensor *const *inputs,
                                int n_inputs,
                                int divisor,
                                const char *name);
yg_status yg__check_int_divisor_scalar(const char *op,
                                       const yg_tensor *const *inputs,
                                       int n_inputs,
                                       double divisor,
                                       const char *name);

/* Fails with "<op>: <arg> is undefined (NULL)" when t is NULL. */
yg_status yg__check_defined(const char *op, const char *arg, const yg_tensor *t);

/* Fails with "<op>: out-parameter <name> is NULL" when out is NULL, else
 * sets *out = NULL. */
yg_status yg__check_out(const char *op, const char *name, yg_tensor **out);

/* The same for the out-parameters of an op returning Tensor[] (out and
 * out_len): fails naming whichever is NULL, else sets *out = NULL and
 * *out_len = 0. */
yg_status yg__check_list_out(const char *op, const char *name, yg_tensor ***out, int64_t *out_len);

#endif /* YAGRAD_CORE_H */
