/*
 * copy.cu - the CUDA loops of yg__cuda_copy (cuda/cuda.h): one element
 * converted from every dtype to every dtype, over cuda/pointwise.cuh's
 * kernel, so a strided or broadcast source costs what it costs any
 * pointwise op; and those of cpu/assign.c's descriptors: fill_ and zero_
 * (the value converted as the copies convert) and copy_ (same dtype).
 *
 * Conversions are the CPU's (core/convert.c, cpu/copy.c): a floating
 * source is read as double and an integer or bool one as int64 (both
 * exact), then stored with one rounding.  Floating to integer truncates,
 * NaN gives 0 and values out of range saturate; int64 to int32 wraps;
 * anything to bool is "non-zero"; float16 and bfloat16 round to nearest,
 * ties to even, with CUDA's conversions (a NaN becomes CUDA's canonical
 * NaN rather than the CPU's quiet NaN of the same sign: both are NaN).
 * float16 and bfloat16 elements are handled as their 16-bit patterns and
 * bool as bytes, as on the CPU.
 */
#include "cuda/pointwise.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace {

/* Per dtype: the element type T, load() to double or long long, and
 * store() from either. */
struct f32 {
    typedef float T;
    static __device__ double load(T v) { return v; }
    static __device__ T store(double v) { return (float)v; }
    static __device__ T store(long long v) { return (float)v; }
};

struct f64 {
    typedef double T;
    static __device__ double load(T v) { return v; }
    static __device__ T store(double v) { return v; }
    static __device__ T store(long long v) { return (double)v; }
};

struct i64 {
    typedef long long T;
    static __device__ long long load(T v) { return v; }
    static __device__ T store(double v)
    {
        if (v != v)
            return 0;
        if (v >= 0x1p63)
            return 0x7fffffffffffffffLL;
        if (v < -0x1p63)
            return -0x7fffffffffffffffLL - 1;
        return (long long)v;
    }
    static __device__ T store(long long v) { return v; }
};

struct b8 {
    typedef unsigned char T;
    static __device__ long long load(T v) { return v != 0; }
    static __device__ T store(double v) { return v != 0; }
    static __device__ T store(long long v) { return v != 0; }
};

struct i32 {
    typedef int T;
    static __device__ long long load(T v) { return v; }
    static __device__ T store(double v)
    {
        if (v != v)
            return 0;
        if (v >= 0x1p31)
            return 0x7fffffff;
        if (v <= -0x1p31 - 1)
            return -0x7fffffff - 1;
        return (int)v;
    }
    static __device__ T store(long long v) { return (int)(unsigned int)(unsigned long long)v; }
};

struct f16 {
    typedef unsigned short T;
    static __device__ double load(T v) { return __half2float(__ushort_as_half(v)); }
    static __device__ T store(double v) { return __half_as_ushort(__double2half(v)); }
    static __device__ T store(long long v) { return __half_as_ushort(__ll2half_rn(v)); }
};

struct bf16 {
    typedef unsigned short T;
    static __device__ double load(T v) { return __bfloat162float(__ushort_as_bfloat16(v)); }
    static __device__ T store(double v) { return __bfloat16_as_ushort(__double2bfloat16(v)); }
    static __device__ T store(long long v) { return __bfloat16_as_ushort(__ll2bfloat16_rn(v)); }
};

template <typename D, typename S> struct convert {
    __host__ __device__ explicit convert(const yg_cuda_loop_args *a) { (void)a; }

    __device__ typename D::T operator()(const typename S::T *v) const
    {
        return D::store(S::load(v[0]));
    }
};

#define COPY_LOOP(D, S)                                                                   \
    typedef convert<D, S> convert_##D##_##S;                                              \
    YG_CUDA_LOOP(copy_##D##_##S, D::T, S::T, 1, convert_##D##_##S)

#define COPY_LOOPS_TO(D)                                                                  \
    COPY_LOOP(D, f32)                                                                     \
    COPY_LOOP(D, f64)                                                                     \
    COPY_LOOP(D, i64)                                                                     \
    COPY_LOOP(D, b8)                                                                      \
    COPY_LOOP(D, i32)                                                                     \
    COPY_LOOP(D, f16)                                                                     \
    COPY_LOOP(D, bf16)

COPY_LOOPS_TO(f32)
COPY_LOOPS_TO(f64)
COPY_LOOPS_TO(i64)
COPY_LOOPS_TO(b8)
COPY_LOOPS_TO(i32)
COPY_LOOPS_TO(f16)
COPY_LOOPS_TO(bf16)

/* fill_: the value converted to D (per element: a compare or two); the
 * loop's one input is self itself, unread. */
template <typename D> struct fill {
    double value;

    __host__ __device__ explicit fill(const yg_cuda_loop_args *a) : value(a->scalars[0]) {}

    __device__ typename D::T operator()(const typename D::T *v) const
    {
        (void)v;
        return D::store(value);
    }
};

/* copy_ after cpu/assign.c converted src to self's dtype: v = {self, src}. */
template <typename D> struct assign {
    __host__ __device__ explicit assign(const yg_cuda_loop_args *a) { (void)a; }

    __device__ typename D::T operator()(const typename D::T *v) const { return v[1]; }
};

#define ASSIGN_LOOPS(D)                                                                   \
    typedef fill<D> fill_##D;                                                             \
    YG_CUDA_LOOP(fill_##D##_loop, D::T, D::T, 1, fill_##D)                                \
    typedef assign<D> assign_##D;                                                         \
    YG_CUDA_LOOP(assign_##D##_loop, D::T, D::T, 2, assign_##D)

ASSIGN_LOOPS(f32)
ASSIGN_LOOPS(f64)
ASSIGN_LOOPS(i64)
ASSIGN_LOOPS(b8)
ASSIGN_LOOPS(i32)
ASSIGN_LOOPS(f16)
ASSIGN_LOOPS(bf16)

} /* namespace */

#define COPY_TABLE_TO(D)                                                                  \
    {                                                                                     \
        {                                                                                 \
            copy_##D##_f32, copy_##D##_f64, copy_##D##_i64, copy_##D##_b8, copy_##D##_i32, \
                copy_##D##_f16, copy_##D##_bf16                                           \
        }                                                                                 \
    }

/* [destination dtype].fn[source dtype], in yg_dtype order. */
extern "C" const yg_cuda_loop_table yg__cuda_copy_loops[YG_CUDA_DTYPE_COUNT] = {
    COPY_TABLE_TO(f32),
    COPY_TABLE_TO(f64),
    COPY_TABLE_TO(i64),
    COPY_TABLE_TO(b8),
    COPY_TABLE_TO(i32),
    COPY_TABLE_TO(f16),
    COPY_TABLE_TO(bf16),
};

/* cpu/assign.c's descriptors, by the compute dtype (YG_CUDA_LOOPS). */
extern "C" const yg_cuda_loop_table yg__cuda_loops_fill = {{
    fill_f32_loop, fill_f64_loop, fill_i64_loop, fill_b8_loop, fill_i32_loop, fill_f16_loop,
    fill_bf16_loop}};
extern "C" const yg_cuda_loop_table yg__cuda_loops_assign = {{
    assign_f32_loop, assign_f64_loop, assign_i64_loop, assign_b8_loop, assign_i32_loop,
    assign_f16_loop, assign_bf16_loop}};
