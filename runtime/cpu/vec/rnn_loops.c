/*
 * rnn_loops.c - the pointwise part of an LSTM step and its gradient in
 * one pass each (kernels.h: lstm_gates, lstm_gates_backward), compiled
 * once per CPU capability.
 *
 * Row r of the [rows, 4H] projections holds the gates i, f, g, o as four
 * runs of H; element j of every run and of the [rows, H] cell state is one
 * lane of the loop, so the loop reads the two projections and cx once and
 * writes hy and cy once, where the ops made nine passes and as many
 * temporaries.  sigmoid is 1 / (1 + exp(-x)) and tanh SLEEF's, in the
 * data's type (vecmath.h), as the generated sigmoid and tanh kernels
 * compute them.  The backward recomputes the activations from the saved
 * projections instead of saving four more tensors, and always writes both
 * gradients: a branch on a NULL one inside the loop kept GCC from
 * vectorising it (10% of an LSTM step in scalar tanhf).
 */
#include "cpu/vec/kernels.h"
#include "cpu/vec/vecmath.h"

#define DEFINE_LSTM_LOOPS(SUFFIX, T)                                                               \
    static void fwd_row_##SUFFIX(T *restrict hy,                                                   \
                                 T *restrict cy,                                                   \
                                 const T *restrict ig,                                             \
                                 const T *restrict hg,                                             \
                                 const T *restrict cx,                                             \
                                 int64_t h) {                                                      \
        for (int64_t j = 0; j < h; j++) {                                                          \
            const T i = 1 / (1 + exp(-(ig[j] + hg[j])));                                           \
            const T f = 1 / (1 + exp(-(ig[h + j] + hg[h + j])));                                   \
            const T g = tanh(ig[2 * h + j] + hg[2 * h + j]);                                       \
            const T o = 1 / (1 + exp(-(ig[3 * h + j] + hg[3 * h + j])));                           \
            const T c = f * cx[j] + i * g;                                                         \
            cy[j] = c;                                                                             \
            hy[j] = o * tanh(c);                                                                   \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    static void bwd_row_##SUFFIX(T *restrict gg,                                                   \
                                 T *restrict gcx,                                                  \
                                 const T *restrict ghy,                                            \
                                 const T *restrict gcy,                                            \
                                 const T *restrict ig,                                             \
                                 const T *restrict hg,                                             \
                                 const T *restrict cx,                                             \
                                 int64_t h) {                                                      \
        for (int64_t j = 0; j < h; j++) {                                                          \
            const T i = 1 / (1 + exp(-(ig[j] + hg[j])));                                           \
            const T f = 1 / (1 + exp(-(ig[h + j] + hg[h + j])));                                   \
            const T g = tanh(ig[2 * h + j] + hg[2 * h + j]);                                       \
            const T o = 1 / (1 + exp(-(ig[3 * h + j] + hg[3 * h + j])));                           \
            const T tc = tanh(f * cx[j] + i * g);                                                  \
            const T dc = gcy[j] + ghy[j] * o * (1 - tc * tc);                                      \
            gg[j] = dc * g * (i * (1 - i));                                                        \
            gg[h + j] = dc * cx[j] * (f * (1 - f));                                                \
            gg[2 * h + j] = dc * i * (1 - g * g);                                                  \
            gg[3 * h + j] = ghy[j] * tc * (o * (1 - o));                                           \
            gcx[j] = dc * f;                                                                       \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    static void fwd_rows_##SUFFIX(                                                                 \
        T *hy, T *cy, const T *ig, const T *hg, const T *cx, int64_t r, int64_t h) {               \
        fwd_row_##SUFFIX(hy + r * h, cy + r * h, ig + r * 4 * h, hg + r * 4 * h, cx + r * h, h);   \
    }                                                                                              \
                                                                                                   \
    static void bwd_rows_##SUFFIX(T *gg,                                                           \
                                  T *gcx,                                                          \
                                  const T *ghy,                                                    \
                                  const T *gcy,                                                    \
                                  const T *ig,                                                     \
                                  const T *hg,                                                     \
                                  const T *cx,                                                     \
                                  int64_t r,                                                       \
                                  int64_t h) {                                                     \
        bwd_row_##SUFFIX(gg + r * 4 * h,                                                           \
                         gcx + r * h,                                                              \
                         ghy + r * h,                                                              \
                         gcy + r * h,                                                              \
                         ig + r * 4 * h,                                                           \
                         hg + r * 4 * h,                                                           \
                         cx + r * h,                                                               \
                         h);                                                                       \
    }                                                                                              \
                                                                                                   \
    void YG_ISA_NAME(yg__lstm_gates_##SUFFIX)(void *hy,                                            \
                                              void *cy,                                            \
                                              const void *ig,                                      \
                                              const void *hg,                                      \
                                              const void *cx,                                      \
                                              int64_t rows,                                        \
                                              int64_t h) {                                         \
        bool threads = rows > 1 && rows * 4 * h >= YG_VEC_PARALLEL_MIN;                            \
        _Pragma("omp parallel for schedule(static) if (threads)") for (int64_t r = 0; r < rows;    \
                                                                       r++)                        \
            fwd_rows_##SUFFIX(hy, cy, ig, hg, cx, r, h);                                           \
    }                                                                                              \
                                                                                                   \
    void YG_ISA_NAME(yg__lstm_gates_backward_##SUFFIX)(void *gg,                                   \
                                                       void *gcx,                                  \
                                                       const void *ghy,                            \
                                                       const void *gcy,                            \
                                                       const void *ig,                             \
                                                       const void *hg,                             \
                                                       const void *cx,                             \
                                                       int64_t rows,                               \
                                                       int64_t h) {                                \
        bool threads = rows > 1 && rows * 4 * h >= YG_VEC_PARALLEL_MIN;                            \
        _Pragma("omp parallel for schedule(static) if (threads)") for (int64_t r = 0; r < rows;    \
                                                                       r++)                        \
            bwd_rows_##SUFFIX(gg, gcx, ghy, gcy, ig, hg, cx, r, h);                                \
    }

DEFINE_LSTM_LOOPS(f32, float)
DEFINE_LSTM_LOOPS(f64, double)
