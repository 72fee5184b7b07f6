/*
 * pool_loops.c - max pooling of planes whose windows all lie inside the
 * input (no padding, no dilation, no ceil-mode overhang: the usual
 * max_pool2d(k, s)), compiled once per CPU capability (kernels.h).
 *
 * Each output row keeps a row of running maxima and their positions;
 * every window element (in the window's row-major order) then updates the
 * whole row with selects instead of branches, so the compiler vectorises
 * the walk over the output columns, and random data costs no
 * mispredicted branches.  The rule is cpu/pool.c's: the first maximum
 * wins ties, and a NaN (the first one) wins over any number.  Positions
 * are counted within a plane, in int32 while the row is walked (the
 * caller checks a plane fits), and stored as int64.  Planes run in
 * parallel when there are enough output elements.
 */
#include "cpu/vec/kernels.h"

#include <omp.h>

/* The widest output row kept in a thread's stack. */
#define ROW_MAX 1024

#define DEFINE_MAX_POOL(SUFFIX, T)                                                                    \
    static void max_pool_plane_##SUFFIX(const T *restrict x,                                          \
                                        T *restrict y,                                                \
                                        int64_t *restrict at,                                         \
                                        const yg_max_pool_shape *s) {                                 \
        T top[ROW_MAX];                                                                               \
        int32_t pos[ROW_MAX];                                                                         \
        const int64_t W = s->in_w, OW = s->out_w, sw = s->stride_w;                                   \
        for (int64_t oy = 0; oy < s->out_h; oy++) {                                                   \
            const int64_t y0 = oy * s->stride_h;                                                      \
            for (int64_t ox = 0; ox < OW; ox++) {                                                     \
                top[ox] = x[y0 * W + ox * sw];                                                        \
                pos[ox] = (int32_t)(y0 * W + ox * sw);                                                \
            }                                                                                         \
            for (int64_t ky = 0; ky < s->kernel_h; ky++)                                              \
                for (int64_t kx = 0; kx < s->kernel_w; kx++) {                                        \
                    if (ky == 0 && kx == 0)                                                           \
                        continue;                                                                     \
                    const T *restrict r = x + (y0 + ky) * W + kx;                                     \
                    const int32_t off = (int32_t)((y0 + ky) * W + kx);                                \
                    for (int64_t ox = 0; ox < OW; ox++) {                                             \
                        const T v = r[ox * sw];                                                       \
                        const T t = top[ox];                                                          \
                        const bool take = (t == t) & ((v != v) | (v > t));                            \
                        top[ox] = take ? v : t;                                                       \
                        pos[ox] = take ? off + (int32_t)(ox * sw) : pos[ox];                          \
                    }                                                                                 \
                }                                                                                     \
            for (int64_t ox = 0; ox < OW; ox++) {                                                     \
                y[oy * OW + ox] = top[ox];                                                            \
                at[oy * OW + ox] = pos[ox];                                                           \
            }                                                                                         \
        }                                                                                             \
    }                                                                                                 \
                                                                                                      \
    bool YG_ISA_NAME(yg__max_pool_##SUFFIX)(                                                          \
        const void *x, void *y, int64_t *at, const yg_max_pool_shape *s) {                            \
        const int64_t ivol = s->in_h * s->in_w, ovol = s->out_h * s->out_w;                           \
        if (s->out_w > ROW_MAX || ivol >= INT32_MAX)                                                  \
            return false;                                                                             \
        _Pragma("omp parallel for schedule(static) if (s->planes * ovol >= YG_VEC_PARALLEL_MIN)")    \
        for (int64_t p = 0; p < s->planes; p++)                                                       \
            max_pool_plane_##SUFFIX((const T *)x + p * ivol, (T *)y + p * ovol, at + p * ovol, s);   \
        return true;                                                                                  \
    }

DEFINE_MAX_POOL(f32, float)
DEFINE_MAX_POOL(f64, double)
