/*
 * assign.c - the in-place assignments fill_, zero_ and copy_, for every
 * dtype (bool, int32, float16 and bfloat16 included) and any strided self.
 *
 * All three run on the in-place pointwise iterator (pointwise.c), which
 * already refuses an expanded (stride 0) self, checks that the result
 * keeps self's shape and bumps self's version counter; the loops here only
 * store.  copy_ converts src to self's dtype before the walk (the iterator
 * itself would promote self instead, and refuse to store the wider
 * result), and copies src first when it shares self's storage: copying a
 * tensor onto an overlapping view of itself (x.copy_(x.t())) would
 * otherwise read elements it has already overwritten.
 *
 * The three are the kernels of every device (yg__kernel_*): on a GPU the
 * iterator runs the CUDA loops of cuda/copy.cu instead.
 */
#include "cpu/cpu.h"
#include "decls/inplace_fill.h"

#define DEFINE_FILL_LOOP(NAME, T)                                                                  \
    static void NAME(char **p, const int64_t *s, int64_t n, const double *scalars) {               \
        const T v = (T)scalars[0];                                                                 \
        for (int64_t i = 0; i < n; i++)                                                            \
            *(T *)(p[0] + i * s[0]) = v;                                                           \
    }

#define DEFINE_COPY_LOOP(NAME, T)                                                                  \
    static void NAME(char **p, const int64_t *s, int64_t n, const double *scalars) {               \
        (void)scalars;                                                                             \
        for (int64_t i = 0; i < n; i++)                                                            \
            *(T *)(p[0] + i * s[0]) = *(const T *)(p[2] + i * s[2]);                               \
    }

DEFINE_FILL_LOOP(fill_f32, float)
DEFINE_FILL_LOOP(fill_f64, double)

/* The value converted once by the rules of core/convert.c (truncating
 * toward zero and saturating for int64 and int32, NaN giving 0; rounding
 * for float16/bfloat16), then stored n times.  A fill value is data, not
 * an operand: unlike the Scalars of pointwise expressions it is converted,
 * as PyTorch's fill_ converts it, never refused. */
#define DEFINE_FILL_CONVERTED_LOOP(NAME, T, DTYPE)                                                 \
    static void NAME(char **p, const int64_t *s, int64_t n, const double *scalars) {               \
        T v;                                                                                       \
        yg__store_f64_as(&v, DTYPE, scalars[0]);                                                   \
        for (int64_t i = 0; i < n; i++)                                                            \
            *(T *)(p[0] + i * s[0]) = v;                                                           \
    }

DEFINE_FILL_CONVERTED_LOOP(fill_i64, int64_t, YG_INT64)
DEFINE_FILL_CONVERTED_LOOP(fill_i32, int32_t, YG_INT32)
DEFINE_FILL_CONVERTED_LOOP(fill_f16, uint16_t, YG_FLOAT16)
DEFINE_FILL_CONVERTED_LOOP(fill_bf16, uint16_t, YG_BFLOAT16)

/* C's conversion to bool is already "non-zero is true" (NaN too). */
static void fill_b8(char **p, const int64_t *s, int64_t n, const double *scalars) {
    const bool v = scalars[0] != 0;
    for (int64_t i = 0; i < n; i++)
        *(bool *)(p[0] + i * s[0]) = v;
}

DEFINE_COPY_LOOP(copy_f32, float)
DEFINE_COPY_LOOP(copy_f64, double)
DEFINE_COPY_LOOP(copy_i64, int64_t)
DEFINE_COPY_LOOP(copy_b8, bool)
DEFINE_COPY_LOOP(copy_i32, int32_t)
DEFINE_COPY_LOOP(copy_16, uint16_t) /* float16 and bfloat16: the bits */

YG_CUDA_LOOPS_DECLARE(fill); /* cuda/copy.cu */
YG_CUDA_LOOPS_DECLARE(assign);

static const char *const fill_names[] = {"self"};
static const char *const copy_names[] = {"self", "src"};

/* fill_ and zero_ run the same loops; only the name in messages differs. */
static const yg_loop_table fill_loops = {{
    [YG_FLOAT32] = fill_f32,
    [YG_FLOAT64] = fill_f64,
    [YG_INT64] = fill_i64,
    [YG_BOOL] = fill_b8,
    [YG_INT32] = fill_i32,
    [YG_FLOAT16] = fill_f16,
    [YG_BFLOAT16] = fill_bf16,
}};

static const yg_pointwise_desc fill_desc = {
    .op = "fill_",
    .n_inputs = 1,
    .input_names = fill_names,
    .loops = {[YG_CPU_BASELINE] = &fill_loops},
    .cuda = YG_CUDA_LOOPS(fill),
};

static const yg_pointwise_desc zero_desc = {
    .op = "zero_",
    .n_inputs = 1,
    .input_names = fill_names,
    .loops = {[YG_CPU_BASELINE] = &fill_loops},
    .cuda = YG_CUDA_LOOPS(fill),
};

static const yg_loop_table copy_loops = {{
    [YG_FLOAT32] = copy_f32,
    [YG_FLOAT64] = copy_f64,
    [YG_INT64] = copy_i64,
    [YG_BOOL] = copy_b8,
    [YG_INT32] = copy_i32,
    [YG_FLOAT16] = copy_16,
    [YG_BFLOAT16] = copy_16,
}};

static const yg_pointwise_desc copy_desc = {
    .op = "copy_",
    .n_inputs = 2,
    .input_names = copy_names,
    .loops = {[YG_CPU_BASELINE] = &copy_loops},
    .cuda = YG_CUDA_LOOPS(assign),
};

yg_status yg__kernel_fill_(yg_tensor *self, double value, yg_tensor **out) {
    const yg_tensor *inputs[1] = {self};
    const double scalars[1] = {value};

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__pointwise_inplace(&fill_desc, self, inputs, scalars));
    *out = yg_retain(self);
    return YG_OK;
}

yg_status yg__kernel_zero_(yg_tensor *self, yg_tensor **out) {
    const yg_tensor *inputs[1] = {self};
    const double scalars[1] = {0};

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__pointwise_inplace(&zero_desc, self, inputs, scalars));
    *out = yg_retain(self);
    return YG_OK;
}

yg_status yg__kernel_copy_(yg_tensor *self, const yg_tensor *src, yg_tensor **out) {
    yg_tensor *conv = NULL;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_devices("copy_",
                                         2,
                                         (const yg_tensor *const[]){self, src},
                                         (const char *const[]){"self", "src"},
                                         NULL,
                                         0,
                                         NULL));
    /* A private copy when src overlaps self's storage (see the top). */
    bool share = src->storage != self->storage;
    st = yg__tensor_contiguous_as(src, self->dtype, share, &conv);
    if (st != YG_OK)
        return yg__fail_prefix(st, "copy_");
    const yg_tensor *inputs[2] = {self, conv};
    st = yg__pointwise_inplace(&copy_desc, self, inputs, NULL);
    if (st == YG_OK)
        *out = yg_retain(self);
    yg_release(conv);
    return st;
}
