/*
 * attention_loops.c - the softmax parts of flash_attention's tiles
 * (kernels.h: yg_attention_loops' fwd_tile, probs and dscores;
 * cpu/attention.c runs the products through yg__cpu_gemm), compiled once
 * per CPU capability so that exp is SLEEF's vector function (vecmath.h).
 * Each loop runs over the whole tile row, hidden keys selected to 0, so
 * a causal diagonal tile does not end in a scalar tail of expf calls.
 *
 * A tile holds the raw products q . k of bq query rows and bk keys
 * (row stride lds).  Query row i is global row q0 + i and key column j
 * global key k0 + j; with causal set key k0 + j is hidden from row q0 + i
 * when k0 + j > q0 + i, so each row has a prefix of n = min(bk, q0 + i -
 * k0 + 1) keys it sees (n <= 0: none).  Hidden entries become 0, the
 * probability they have.
 */
#include "cpu/vec/kernels.h"
#include "cpu/vec/vecmath.h"

#include <math.h>

static int64_t visible(int64_t bk, int64_t q, int64_t k0, bool causal) {
    if (!causal)
        return bk;
    int64_t n = q - k0 + 1;
    return n < 0 ? 0 : (n > bk ? bk : n);
}

/* fwd_tile: the online softmax step of one tile (FlashAttention's
 * forward): the tile becomes exp(scale s - m_new) (0 where hidden), m and
 * l (the running maximum of the scaled scores and the running sum of
 * their exponentials) move to the new maximum, and the bq x ev
 * accumulator rows are rescaled by exp(m_old - m_new) before the caller
 * adds P V; a row that has seen no key yet stays as it is.
 * probs: the probabilities of a tile from each row's logsumexp lse,
 * exp(scale s - lse), 0 where hidden.
 * dscores: dp (the tile of grad_output value^T) becomes scale p (dp - d),
 * the gradient of the scaled scores times scale, d being each row's
 * rowsum(grad_output * output). */
#define DEFINE_ATTENTION_LOOPS(SUFFIX, T)                                                          \
    static void fwd_tile_##SUFFIX(void *sv,                                                        \
                                  int64_t lds,                                                     \
                                  int64_t bq,                                                      \
                                  int64_t bk,                                                      \
                                  double scale_d,                                                  \
                                  int64_t q0,                                                      \
                                  int64_t k0,                                                      \
                                  bool causal,                                                     \
                                  void *mv,                                                        \
                                  void *lv,                                                        \
                                  void *accv,                                                      \
                                  int64_t ev) {                                                    \
        T *s = sv, *m = mv, *l = lv, *acc = accv;                                                  \
        const T scale = (T)scale_d;                                                                \
        for (int64_t i = 0; i < bq; i++) {                                                         \
            T *restrict row = s + i * lds;                                                         \
            int64_t n = visible(bk, q0 + i, k0, causal);                                           \
            T mx = m[i];                                                                           \
            for (int64_t j = 0; j < n; j++)                                                        \
                row[j] *= scale;                                                                   \
            _Pragma("omp simd reduction(max : mx)") for (int64_t j = 0; j < n; j++) mx =           \
                row[j] > mx ? row[j] : mx;                                                         \
            if (mx == -INFINITY) {                                                                 \
                for (int64_t j = 0; j < bk; j++)                                                   \
                    row[j] = 0;                                                                    \
                continue;                                                                          \
            }                                                                                      \
            T sum = 0;                                                                             \
            _Pragma("omp simd reduction(+ : sum)") for (int64_t j = 0; j < bk; j++) {              \
                const T e = exp(row[j] - mx);                                                      \
                row[j] = j < n ? e : 0;                                                            \
                sum += row[j];                                                                     \
            }                                                                                      \
            const T alpha = exp(m[i] - mx);                                                        \
            if (alpha != 1) {                                                                      \
                T *restrict a = acc + i * ev;                                                      \
                for (int64_t c = 0; c < ev; c++)                                                   \
                    a[c] *= alpha;                                                                 \
            }                                                                                      \
            l[i] = l[i] * alpha + sum;                                                             \
            m[i] = mx;                                                                             \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    static void probs_##SUFFIX(void *sv,                                                           \
                               int64_t lds,                                                        \
                               int64_t bq,                                                         \
                               int64_t bk,                                                         \
                               double scale_d,                                                     \
                               int64_t q0,                                                         \
                               int64_t k0,                                                         \
                               bool causal,                                                        \
                               const void *lsev) {                                                 \
        T *s = sv;                                                                                 \
        const T *lse = lsev;                                                                       \
        const T scale = (T)scale_d;                                                                \
        for (int64_t i = 0; i < bq; i++) {                                                         \
            T *restrict row = s + i * lds;                                                         \
            int64_t n = visible(bk, q0 + i, k0, causal);                                           \
            const T z = lse[i];                                                                    \
            for (int64_t j = 0; j < bk; j++) {                                                     \
                const T e = exp(row[j] * scale - z);                                               \
                row[j] = j < n ? e : 0;                                                            \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
                                                                                                   \
    static void dscores_##SUFFIX(void *dpv,                                                        \
                                 const void *pv,                                                   \
                                 int64_t ld,                                                       \
                                 int64_t bq,                                                       \
                                 int64_t bk,                                                       \
                                 double scale_d,                                                   \
                                 const void *dv) {                                                 \
        T *dp = dpv;                                                                               \
        const T *p = pv, *d = dv;                                                                  \
        const T scale = (T)scale_d;                                                                \
        for (int64_t i = 0; i < bq; i++) {                                                         \
            T *restrict r = dp + i * ld;                                                           \
            const T *restrict pr = p + i * ld;                                                     \
            const T di = d[i];                                                                     \
            for (int64_t j = 0; j < bk; j++)                                                       \
                r[j] = scale * pr[j] * (r[j] - di);                                                \
        }                                                                                          \
    }

DEFINE_ATTENTION_LOOPS(f32, float)
DEFINE_ATTENTION_LOOPS(f64, double)

const yg_attention_loops YG_ISA_NAME(yg__attention_loops) = {
    .fwd_tile = {fwd_tile_f32, fwd_tile_f64},
    .probs = {probs_f32, probs_f64},
    .dscores = {dscores_f32, dscores_f64},
};
