/*
 * kernels.h - the handwritten kernels compiled once per CPU capability
 * (runtime/cpu/vec/, see vec.h), as one table of function pointers per
 * level; yg__vec() returns the level chosen at load (cpu/capability.c).
 *
 * Each entry is an inner kernel: its tensors are contiguous, of the
 * dtype its name says, already checked by the op kernel that calls it
 * (runtime/cpu/nn.c, ...); it cannot fail.  Entries parallelise with OpenMP
 * themselves when the work is large enough, and run on the calling thread
 * below that (no fork/join on small tensors).
 */
#ifndef YAGRAD_CPU_VEC_KERNELS_H
#define YAGRAD_CPU_VEC_KERNELS_H

#include "cpu/vec/norm_loops.h"

#include <stdbool.h>
#include <stdint.h>

/* softmax.c: a [outer, n, inner] block reduced over its middle dim. */
typedef void (
    *yg_softmax_fn)(void *y, const void *x, int64_t outer, int64_t n, int64_t inner, bool is_log);
typedef void (*yg_softmax_backward_fn)(void *grad_input,
                                       const void *grad_output,
                                       const void *output,
                                       int64_t outer,
                                       int64_t n,
                                       int64_t inner,
                                       bool is_log);

/* optim_loops.c: one SGD or Adam(W) update of a contiguous parameter p
 * with gradient g and state buffers of its dtype and size (n elements);
 * the formulas of yagrad/optim.h. */
typedef struct yg_sgd_step {
    double lr, momentum, dampening, weight_decay;
    double grad_scale; /* g is read as (T)(g * grad_scale) (1: as it is) */
    bool nesterov;
    bool first; /* the momentum buffer starts as the (decayed) gradient */
} yg_sgd_step;
typedef struct yg_adam_step {
    double lr, beta1, beta2, eps, weight_decay;
    double grad_scale; /* as yg_sgd_step's */
    double bc1, bc2; /* 1 - beta^t of this step */
    bool decoupled;  /* AdamW: decay p itself, not the gradient */
} yg_adam_step;
/* buf NULL: no momentum */
typedef double (*yg_sum_squares_fn)(const void *g, int64_t n);
typedef void (*yg_scale_fn)(void *g, int64_t n, double coef);
typedef void (*yg_sgd_fn)(void *p, const void *g, void *buf, int64_t n, const yg_sgd_step *a);
typedef void (
    *yg_adam_fn)(void *p, const void *g, void *m, void *v, int64_t n, const yg_adam_step *a);

/* rnn_loops.c: lstm_cell_gates (cpu/rnn.c) over rows of [4H] projections
 * ig and hg and [H] cells cx; the backward writes both gg [rows, 4H] and
 * gcx [rows, H]. */
typedef void (*yg_lstm_gates_fn)(void *hy,
                                 void *cy,
                                 const void *ig,
                                 const void *hg,
                                 const void *cx,
                                 int64_t rows,
                                 int64_t h);
typedef void (*yg_lstm_gates_backward_fn)(void *gg,
                                          void *gcx,
                                          const void *ghy,
                                          const void *gcy,
                                          const void *ig,
                                          const void *hg,
                                          const void *cx,
                                          int64_t rows,
                                          int64_t h);

/* pool_loops.c: max pooling of planes [planes, in_h, in_w] whose windows
 * all lie inside (no padding, no dilation, no overhang) into values
 * [planes, out_h, out_w] of the input's dtype and int64 positions within
 * the plane; false (nothing written) when an output row is wider than
 * the kernel keeps (1024) or a plane holds 2^31 elements or more. */
typedef struct yg_max_pool_shape {
    int64_t planes, in_h, in_w, out_h, out_w, kernel_h, kernel_w, stride_h, stride_w;
} yg_max_pool_shape;
typedef bool (*yg_max_pool_fn)(const void *x, void *y, int64_t *at, const yg_max_pool_shape *s);

/* conv_loops.c: one (image, y channel) pair of a native depthwise
 * convolution whose last dim has stride 1 (conv/native.c): the channel's
 * x plane, its filter w (mode 0, 1), its y plane and its weight gradient
 * gw (mode 2).  mode 0: y = bias + A x; 1: x += A^T y; 2: gw += the
 * filter's gradient.  Geometry as conv/conv.h's parameters, 3-d. */
typedef struct yg_depthwise_geom {
    int64_t x[3], y[3], k[3], stride[3], pad[3], dil[3];
} yg_depthwise_geom;
typedef void (*yg_depthwise_rows_fn)(
    const yg_depthwise_geom *g, void *x, const void *w, void *y, void *gw, double bias, int mode);

/* attention_loops.c: the softmax steps of flash_attention's tiles
 * (cpu/attention.c), each [0] float32, [1] float64. */
typedef struct yg_attention_loops {
    void (*fwd_tile[2])(void *s,
                        int64_t lds,
                        int64_t bq,
                        int64_t bk,
                        double scale,
                        int64_t q0,
                        int64_t k0,
                        bool causal,
                        void *m,
                        void *l,
                        void *acc,
                        int64_t ev);
    void (*probs[2])(void *s,
                     int64_t lds,
                     int64_t bq,
                     int64_t bk,
                     double scale,
                     int64_t q0,
                     int64_t k0,
                     bool causal,
                     const void *lse);
    void (*dscores[2])(void *dp,
                       const void *p,
                       int64_t ld,
                       int64_t bq,
                       int64_t bk,
                       double scale,
                       const void *d);
} yg_attention_loops;

typedef struct yg_vec_kernels {
    /* y = softmax(x) or, when log, log_softmax(x); max and sum per row
     * (sums of exponentials in double for float32 too). */
    yg_softmax_fn softmax[2]; /* [0] float32, [1] float64 */
    /* The gradient of softmax (output: its result), or when log of
     * log_softmax (output: the log-probabilities). */
    yg_softmax_backward_fn softmax_backward[2];
    /* norm_loops.c: the row loops of layer_norm's and batch_norm's fused
     * kernels (cpu/norm.c). */
    const yg_norm_loops *norm;
    yg_sgd_fn sgd_step[2];   /* [0] float32, [1] float64 */
    yg_adam_fn adam_step[2]; /* [0] float32, [1] float64 */
    /* gradient clipping: the sum of the squared elements (in double),
     * and g *= coef (in double, rounded to g's dtype) */
    yg_sum_squares_fn sum_squares[2];
    yg_scale_fn scale[2];
    yg_lstm_gates_fn lstm_gates[2];
    yg_lstm_gates_backward_fn lstm_gates_backward[2];
    yg_max_pool_fn max_pool[2]; /* [0] float32, [1] float64 */
    yg_depthwise_rows_fn depthwise_rows[2];
    const yg_attention_loops *attention;
} yg_vec_kernels;

extern const yg_vec_kernels yg__vec_kernels_baseline;
extern const yg_vec_kernels yg__vec_kernels_avx2;
extern const yg_vec_kernels yg__vec_kernels_avx512;

/* The table of the level the kernels run at.  Cannot fail. */
const yg_vec_kernels *yg__vec(void);

/* Below this many elements a kernel runs on the calling thread: an
 * OpenMP fork/join costs a few microseconds, the pointwise iterator's
 * threshold (cpu/pointwise.c). */
#define YG_VEC_PARALLEL_MIN 32768

/* The most OpenMP threads a reduction keeps partial results for on the
 * stack; with more it runs on one thread. */
#define YG_VEC_MAX_THREADS 256

#ifdef YG_ISA /* inside the per-ISA builds: the entries of this level */
#include "cpu/vec/vec.h"

void YG_ISA_NAME(
    yg__softmax_f32)(void *y, const void *x, int64_t outer, int64_t n, int64_t inner, bool is_log);
void YG_ISA_NAME(
    yg__softmax_f64)(void *y, const void *x, int64_t outer, int64_t n, int64_t inner, bool is_log);
void YG_ISA_NAME(yg__softmax_backward_f32)(void *grad_input,
                                           const void *grad_output,
                                           const void *output,
                                           int64_t outer,
                                           int64_t n,
                                           int64_t inner,
                                           bool is_log);
void YG_ISA_NAME(yg__softmax_backward_f64)(void *grad_input,
                                           const void *grad_output,
                                           const void *output,
                                           int64_t outer,
                                           int64_t n,
                                           int64_t inner,
                                           bool is_log);
extern const yg_norm_loops YG_ISA_NAME(yg__norm_loops);
extern const yg_attention_loops YG_ISA_NAME(yg__attention_loops);
void YG_ISA_NAME(
    yg__sgd_step_f32)(void *p, const void *g, void *buf, int64_t n, const yg_sgd_step *a);
void YG_ISA_NAME(
    yg__sgd_step_f64)(void *p, const void *g, void *buf, int64_t n, const yg_sgd_step *a);
void YG_ISA_NAME(
    yg__adam_step_f32)(void *p, const void *g, void *m, void *v, int64_t n, const yg_adam_step *a);
void YG_ISA_NAME(
    yg__adam_step_f64)(void *p, const void *g, void *m, void *v, int64_t n, const yg_adam_step *a);
double YG_ISA_NAME(yg__sum_squares_f32)(const void *g, int64_t n);
double YG_ISA_NAME(yg__sum_squares_f64)(const void *g, int64_t n);
void YG_ISA_NAME(yg__scale_f32)(void *g, int64_t n, double coef);
void YG_ISA_NAME(yg__scale_f64)(void *g, int64_t n, double coef);
void YG_ISA_NAME(yg__depthwise_rows_f32)(
    const yg_depthwise_geom *g, void *x, const void *w, void *y, void *gw, double bias, int mode);
void YG_ISA_NAME(yg__depthwise_rows_f64)(
    const yg_depthwise_geom *g, void *x, const void *w, void *y, void *gw, double bias, int mode);
bool YG_ISA_NAME(yg__max_pool_f32)(const void *x, void *y, int64_t *at, const yg_max_pool_shape *s);
bool YG_ISA_NAME(yg__max_pool_f64)(const void *x, void *y, int64_t *at, const yg_max_pool_shape *s);
void YG_ISA_NAME(yg__lstm_gates_f32)(void *hy,
                                     void *cy,
                                     const void *ig,
                                     const void *hg,
                                     const void *cx,
                                     int64_t rows,
                                     int64_t h);
void YG_ISA_NAME(yg__lstm_gates_f64)(void *hy,
                                     void *cy,
                                     const void *ig,
                                     const void *hg,
                                     const void *cx,
                                     int64_t rows,
                                     int64_t h);
void YG_ISA_NAME(yg__lstm_gates_backward_f32)(void *gg,
                                              void *gcx,
                                              const void *ghy,
                                              const void *gcy,
                                              const void *ig,
                                              const void *hg,
                                              const void *cx,
                                              int64_t rows,
                                              int64_t h);
void YG_ISA_NAME(yg__lstm_gates_backward_f64)(void *gg,
                                              void *gcx,
                                              const void *ghy,
                                              const void *gcy,
                                              const void *ig,
                                              const void *hg,
                                              const void *cx,
                                              int64_t rows,
                                              int64_t h);
#endif

#endif /* YAGRAD_CPU_VEC_KERNELS_H */
