/*
 * compare.c - comparisons (eq, ne, lt, le, gt, ge, each against a tensor
 * or a Scalar) and logical ops (logical_and/or/xor/not), all with bool
 * results.
 *
 * They run on the pointwise iterator of pointwise.c through
 * yg__pointwise_to: the inputs are broadcast and promoted to a common
 * compute dtype exactly as for arithmetic (so int64 against float32
 * compares as float32, as in PyTorch), and the loop for that dtype writes
 * one bool per element.  The loops are written here rather than generated
 * because the generated pointwise path always returns the compute dtype.
 *
 * Scalar overloads compare each element converted to double with the
 * scalar, so 3 (int64) < 3.5 is true rather than comparing with a
 * truncated 3.  Logical ops read any non-zero value (NaN included) as
 * true.  NaN compares unequal to everything, itself included.  On a GPU
 * the iterator runs the same expressions from cuda/compare.cu.
 */
#include "cpu/cpu.h"
#include "decls/comparison.h"

/* Loop over n elements of compute type T: ptrs[0] is the bool output. */
#define DEFINE_BINARY_LOOP(NAME, T, EXPR)                                                          \
    static void NAME(char **p, const int64_t *s, int64_t n, const double *scalars) {               \
        (void)scalars;                                                                             \
        for (int64_t i = 0; i < n; i++) {                                                          \
            const T a = *(const T *)(p[1] + i * s[1]);                                             \
            const T b = *(const T *)(p[2] + i * s[2]);                                             \
            *(bool *)(p[0] + i * s[0]) = (EXPR);                                                   \
        }                                                                                          \
    }

#define DEFINE_SCALAR_LOOP(NAME, T, EXPR)                                                          \
    static void NAME(char **p, const int64_t *s, int64_t n, const double *scalars) {               \
        const double b = scalars[0];                                                               \
        for (int64_t i = 0; i < n; i++) {                                                          \
            const double a = (double)*(const T *)(p[1] + i * s[1]);                                \
            *(bool *)(p[0] + i * s[0]) = (EXPR);                                                   \
        }                                                                                          \
    }

#define DEFINE_UNARY_LOOP(NAME, T, EXPR)                                                           \
    static void NAME(char **p, const int64_t *s, int64_t n, const double *scalars) {               \
        (void)scalars;                                                                             \
        for (int64_t i = 0; i < n; i++) {                                                          \
            const T a = *(const T *)(p[1] + i * s[1]);                                             \
            *(bool *)(p[0] + i * s[0]) = (EXPR);                                                   \
        }                                                                                          \
    }

/* One op: its five loops (float32, float64, int64, bool, int32; float16
 * and bfloat16 are storage types and get the iterator's dtype error), its
 * descriptor and its kernel. */
#define DEFINE_BINARY_OP(OP, EXPR)                                                                 \
    YG_CUDA_LOOPS_DECLARE(OP);                                                                     \
    DEFINE_BINARY_LOOP(OP##_f32, float, EXPR)                                                      \
    DEFINE_BINARY_LOOP(OP##_f64, double, EXPR)                                                     \
    DEFINE_BINARY_LOOP(OP##_i64, int64_t, EXPR)                                                    \
    DEFINE_BINARY_LOOP(OP##_b8, bool, EXPR)                                                        \
    DEFINE_BINARY_LOOP(OP##_i32, int32_t, EXPR)                                                    \
    static const yg_loop_table OP##_loops = {{[YG_FLOAT32] = OP##_f32,                              \
                                              [YG_FLOAT64] = OP##_f64,                              \
                                              [YG_INT64] = OP##_i64,                                \
                                              [YG_BOOL] = OP##_b8,                                  \
                                              [YG_INT32] = OP##_i32}};                              \
    static const yg_pointwise_desc OP##_desc = {                                                   \
        .op = #OP,                                                                                 \
        .n_inputs = 2,                                                                             \
        .input_names = binary_names,                                                               \
        .loops = {[YG_CPU_BASELINE] = &OP##_loops},                                                \
        .cuda = YG_CUDA_LOOPS(OP),                                                                 \
    };                                                                                             \
    yg_status yg__kernel_##OP(                                                                     \
        const yg_tensor *self, const yg_tensor *other, yg_tensor **out) {                          \
        const yg_tensor *inputs[2] = {self, other};                                                \
        return yg__pointwise_to(&OP##_desc, inputs, NULL, YG_BOOL, out);                       \
    }

#define DEFINE_SCALAR_OP(OP, EXPR)                                                                 \
    YG_CUDA_LOOPS_DECLARE(OP##_scalar);                                                            \
    DEFINE_SCALAR_LOOP(OP##_scalar_f32, float, EXPR)                                               \
    DEFINE_SCALAR_LOOP(OP##_scalar_f64, double, EXPR)                                              \
    DEFINE_SCALAR_LOOP(OP##_scalar_i64, int64_t, EXPR)                                             \
    DEFINE_SCALAR_LOOP(OP##_scalar_b8, bool, EXPR)                                                 \
    DEFINE_SCALAR_LOOP(OP##_scalar_i32, int32_t, EXPR)                                             \
    static const yg_loop_table OP##_scalar_loops = {{[YG_FLOAT32] = OP##_scalar_f32,               \
                                                     [YG_FLOAT64] = OP##_scalar_f64,               \
                                                     [YG_INT64] = OP##_scalar_i64,                 \
                                                     [YG_BOOL] = OP##_scalar_b8,                   \
                                                     [YG_INT32] = OP##_scalar_i32}};               \
    static const yg_pointwise_desc OP##_scalar_desc = {                                            \
        .op = #OP,                                                                                 \
        .n_inputs = 1,                                                                             \
        .input_names = unary_names,                                                                \
        .loops = {[YG_CPU_BASELINE] = &OP##_scalar_loops},                                         \
        .cuda = YG_CUDA_LOOPS(OP##_scalar),                                                        \
    };                                                                                             \
    yg_status yg__kernel_##OP##_scalar(                                                            \
        const yg_tensor *self, double other, yg_tensor **out) {                                    \
        const yg_tensor *inputs[1] = {self};                                                       \
        const double scalars[1] = {other};                                                         \
        return yg__pointwise_to(&OP##_scalar_desc, inputs, scalars, YG_BOOL, out);             \
    }

static const char *const binary_names[] = {"self", "other"};
static const char *const unary_names[] = {"self"};

DEFINE_BINARY_OP(eq, a == b)
DEFINE_BINARY_OP(ne, a != b)
DEFINE_BINARY_OP(lt, a < b)
DEFINE_BINARY_OP(le, a <= b)
DEFINE_BINARY_OP(gt, a > b)
DEFINE_BINARY_OP(ge, a >= b)

DEFINE_SCALAR_OP(eq, a == b)
DEFINE_SCALAR_OP(ne, a != b)
DEFINE_SCALAR_OP(lt, a < b)
DEFINE_SCALAR_OP(le, a <= b)
DEFINE_SCALAR_OP(gt, a > b)
DEFINE_SCALAR_OP(ge, a >= b)

DEFINE_BINARY_OP(logical_and, a != 0 && b != 0)
DEFINE_BINARY_OP(logical_or, a != 0 || b != 0)
DEFINE_BINARY_OP(logical_xor, (a != 0) != (b != 0))

DEFINE_UNARY_LOOP(logical_not_f32, float, a == 0)
DEFINE_UNARY_LOOP(logical_not_f64, double, a == 0)
DEFINE_UNARY_LOOP(logical_not_i64, int64_t, a == 0)
DEFINE_UNARY_LOOP(logical_not_b8, bool, !a)
DEFINE_UNARY_LOOP(logical_not_i32, int32_t, a == 0)

static const yg_loop_table logical_not_loops = {{
    [YG_FLOAT32] = logical_not_f32,
    [YG_FLOAT64] = logical_not_f64,
    [YG_INT64] = logical_not_i64,
    [YG_BOOL] = logical_not_b8,
    [YG_INT32] = logical_not_i32,
}};

YG_CUDA_LOOPS_DECLARE(logical_not);

static const yg_pointwise_desc logical_not_desc = {
    .op = "logical_not",
    .n_inputs = 1,
    .input_names = unary_names,
    .loops = {[YG_CPU_BASELINE] = &logical_not_loops},
    .cuda = YG_CUDA_LOOPS(logical_not),
};

yg_status yg__kernel_logical_not(const yg_tensor *self, yg_tensor **out) {
    const yg_tensor *inputs[1] = {self};
    return yg__pointwise_to(&logical_not_desc, inputs, NULL, YG_BOOL, out);
}
