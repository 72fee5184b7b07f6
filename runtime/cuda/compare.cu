/*
 * compare.cu - the CUDA loops of cpu/compare.c's descriptors: the
 * comparisons (against a tensor or a Scalar) and the logical ops, by
 * compute dtype, each writing one bool (a byte, 0 or 1) per element with
 * the expressions compare.c uses on the CPU.
 */
#include "cuda/pointwise.cuh"

namespace {

typedef unsigned char b8;

#define BINARY(OP, EXPR)                                                                  \
    template <typename T> struct OP##_fn {                                                \
        __host__ __device__ explicit OP##_fn(const yg_cuda_loop_args *x) { (void)x; }     \
        __device__ b8 operator()(const T *v) const                                        \
        {                                                                                 \
            const T a = v[0], b = v[1];                                                   \
            return (EXPR);                                                                \
        }                                                                                 \
    };

/* Scalar forms compare the element converted to double, as on the CPU. */
#define SCALAR(OP, EXPR)                                                                  \
    template <typename T> struct OP##_scalar_fn {                                         \
        double b;                                                                         \
        __host__ __device__ explicit OP##_scalar_fn(const yg_cuda_loop_args *x)           \
            : b(x->scalars[0])                                                            \
        {                                                                                 \
        }                                                                                 \
        __device__ b8 operator()(const T *v) const                                        \
        {                                                                                 \
            const double a = (double)v[0];                                                \
            return (EXPR);                                                                \
        }                                                                                 \
    };

#define UNARY(OP, EXPR)                                                                   \
    template <typename T> struct OP##_fn {                                                \
        __host__ __device__ explicit OP##_fn(const yg_cuda_loop_args *x) { (void)x; }     \
        __device__ b8 operator()(const T *v) const                                        \
        {                                                                                 \
            const T a = v[0];                                                             \
            return (EXPR);                                                                \
        }                                                                                 \
    };

/* The five compute dtypes' loops of element function FN with nin inputs. */
#define LOOPS(NAME, FN, nin)                                                              \
    YG_CUDA_LOOP(NAME##_f32, b8, float, nin, FN<float>)                                   \
    YG_CUDA_LOOP(NAME##_f64, b8, double, nin, FN<double>)                                 \
    YG_CUDA_LOOP(NAME##_i64, b8, long long, nin, FN<long long>)                           \
    YG_CUDA_LOOP(NAME##_b8, b8, b8, nin, FN<b8>)                                          \
    YG_CUDA_LOOP(NAME##_i32, b8, int, nin, FN<int>)

#define BINARY_OP(OP, EXPR) BINARY(OP, EXPR) LOOPS(OP, OP##_fn, 2)
#define SCALAR_OP(OP, EXPR) SCALAR(OP, EXPR) LOOPS(OP##_scalar, OP##_scalar_fn, 1)

BINARY_OP(eq, a == b)
BINARY_OP(ne, a != b)
BINARY_OP(lt, a < b)
BINARY_OP(le, a <= b)
BINARY_OP(gt, a > b)
BINARY_OP(ge, a >= b)
SCALAR_OP(eq, a == b)
SCALAR_OP(ne, a != b)
SCALAR_OP(lt, a < b)
SCALAR_OP(le, a <= b)
SCALAR_OP(gt, a > b)
SCALAR_OP(ge, a >= b)
BINARY_OP(logical_and, a != 0 && b != 0)
BINARY_OP(logical_or, a != 0 || b != 0)
BINARY_OP(logical_xor, (a != 0) != (b != 0))
UNARY(logical_not, a == 0)
LOOPS(logical_not, logical_not_fn, 1)

} /* namespace */

/* yg_dtype order; float16 and bfloat16 are storage types (no loop). */
#define TABLE(NAME)                                                                       \
    extern "C" const yg_cuda_loop_table yg__cuda_loops_##NAME = {                         \
        {NAME##_f32, NAME##_f64, NAME##_i64, NAME##_b8, NAME##_i32, NULL, NULL}};

TABLE(eq)
TABLE(ne)
TABLE(lt)
TABLE(le)
TABLE(gt)
TABLE(ge)
TABLE(eq_scalar)
TABLE(ne_scalar)
TABLE(lt_scalar)
TABLE(le_scalar)
TABLE(gt_scalar)
TABLE(ge_scalar)
TABLE(logical_and)
TABLE(logical_or)
TABLE(logical_xor)
TABLE(logical_not)
