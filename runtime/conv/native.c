/*
 * conv/native.c - the native convolution backend: im2col/col2im around
 * gemm (yg__cpu_gemm, the one mm uses), a plain gemm for
 * 1x1 stride-1 unpadded convolutions, and a direct kernel for depthwise
 * ones (groups == input channels).  float32 and float64; everything is
 * 3-d (conv/conv.h: 1-d and 2-d have size-1 leading spatial dims).
 *
 * For one image and one group g, with K = kernel elements and P the
 * y-side positions, col is the [C_x/G * K, P] matrix of x values each
 * output position reads (0 where it reads padding):
 *   forward  y_g [C_y/G, P]      = w_g [C_y/G, C_x/G K] col
 *   data     col                 = w_g^T y_g, then x_g = col2im(col)
 *   weight   w_g                += y_g col^T  (summed over the batch)
 * gemm reads w_g transposed through its trans flag, never a copy.  Groups
 * are a loop over groups.
 *
 * Threads.  Both gemms (OpenBLAS's OpenMP build, oneDNN) run a gemm on
 * one thread when called inside a parallel region.  So with a batch of at
 * least two images and enough work (YG_CONV_PARALLEL_MIN multiply-adds)
 * images are spread over OpenMP threads, each with its own col buffer
 * (and, for the weight gradient, its own accumulator, added in thread
 * order afterwards: deterministic for a thread count); otherwise images
 * run one after another and gemm uses the BLAS threads.
 */
#include "conv/conv.h"
#include "cpu/cpu.h"
#include "cpu/vec/kernels.h"

#include <inttypes.h>
#include <omp.h>
#include <string.h>

/* Multiply-adds below which a convolution stays on one thread (about
 * 0.1 ms of work).  A fork/join costs microseconds on an idle machine, but
 * after each region libgomp's workers spin for a while: at 65536 the
 * thousands of small convolutions of a gradcheck each opened a region,
 * and with another process on the second core (ctest -j2) the spinning
 * worker took the main thread's core, 1 s of checks became 120 s. */
#define YG_CONV_PARALLEL_MIN (1 << 20)

/* Elements of one image's im2col matrix below which its channels are not
 * split over threads (the copy is a few hundred microseconds there). */
#define YG_CONV_COLUMNS_PARALLEL_MIN (1 << 18)

typedef struct geom {
    int64_t cxg, cyg, K, P, Q; /* channels per group, kernel, y and x positions */
    bool f32, pointwise, depthwise;
    size_t elt;
} geom;

static geom geometry(const yg_conv_params *p) {
    geom g;
    g.cxg = p->cx / p->groups;
    g.cyg = p->cy / p->groups;
    /* Checked, a 0 first (core/sizes.h): the spatial sizes of an empty
     * operand (batch 0) may not multiply within int64; -1 then, and the
     * entry points below do no work for such operands. */
    g.K = yg__sizes_product(p->k, 3);
    g.P = yg__sizes_product(p->y, 3);
    g.Q = yg__sizes_product(p->x, 3);
    g.f32 = p->dtype == YG_FLOAT32;
    g.elt = g.f32 ? sizeof(float) : sizeof(double);
    g.pointwise = g.K == 1 && p->stride[0] == 1 && p->stride[1] == 1 && p->stride[2] == 1 &&
                  p->pad[0] == 0 && p->pad[1] == 0 && p->pad[2] == 0;
    g.depthwise = g.cxg == 1 && p->groups > 1;
    return g;
}

/* Threads to spread images over (1: run them in turn). */
static int batch_threads(const yg_conv_params *p, const geom *g) {
    int t = omp_get_max_threads();
    double work = (double)p->batch * (double)p->cy * (double)g->P * (double)(g->cxg * g->K);
    if (t < 2 || p->batch < 2 || work < YG_CONV_PARALLEL_MIN)
        return 1;
    return p->batch < t ? (int)p->batch : t;
}

/* The y positions o (0 <= o < ny) whose x position o s + off lies in
 * [0, nx): [*lo, *hi). */
static void valid_range(int64_t off, int64_t s, int64_t nx, int64_t ny, int64_t *lo, int64_t *hi) {
    int64_t a = off >= 0 ? 0 : (-off + s - 1) / s;
    int64_t b = nx - 1 - off < 0 ? 0 : (nx - 1 - off) / s + 1;
    *lo = a < ny ? a : ny;
    *hi = b < ny ? b : ny;
    if (*hi < *lo)
        *hi = *lo;
}

/* im2col (add false: col = gather of x) and col2im (add true: x += the
 * scatter of col; x must be zeroed first) for one image and group, per
 * dtype.  Parallel over channels when par (each channel owns its rows of
 * col and its plane of x). */
#define CONV_COLUMNS(T, SFX)                                                                       \
    static void columns_##SFX(                                                                     \
        const yg_conv_params *p, const geom *g, T *x, T *col, bool add, bool par) {                \
        _Pragma("omp parallel for if (par)") for (int64_t c = 0; c < g->cxg; c++) {                \
            for (int64_t k0 = 0; k0 < p->k[0]; k0++)                                               \
                for (int64_t k1 = 0; k1 < p->k[1]; k1++)                                           \
                    for (int64_t k2 = 0; k2 < p->k[2]; k2++) {                                     \
                        int64_t row = (c * p->k[0] + k0) * p->k[1] * p->k[2] + k1 * p->k[2] + k2;  \
                        T *cr = col + row * g->P;                                                  \
                        T *xc = x + c * g->Q;                                                      \
                        int64_t off0 = k0 * p->dil[0] - p->pad[0];                                 \
                        int64_t off1 = k1 * p->dil[1] - p->pad[1];                                 \
                        int64_t off2 = k2 * p->dil[2] - p->pad[2];                                 \
                        int64_t lo2, hi2, s2 = p->stride[2];                                       \
                        valid_range(off2, s2, p->x[2], p->y[2], &lo2, &hi2);                       \
                        for (int64_t o0 = 0; o0 < p->y[0]; o0++) {                                 \
                            int64_t i0 = o0 * p->stride[0] + off0;                                 \
                            for (int64_t o1 = 0; o1 < p->y[1]; o1++) {                             \
                                int64_t i1 = o1 * p->stride[1] + off1;                             \
                                T *cp = cr + (o0 * p->y[1] + o1) * p->y[2];                        \
                                bool in = i0 >= 0 && i0 < p->x[0] && i1 >= 0 && i1 < p->x[1];      \
                                if (!in) {                                                         \
                                    if (!add)                                                      \
                                        memset(cp, 0, sizeof(T) * (size_t)p->y[2]);                \
                                    continue;                                                      \
                                }                                                                  \
                                T *xp = xc + (i0 * p->x[1] + i1) * p->x[2] + off2;                 \
                                if (add) {                                                         \
                                    for (int64_t o2 = lo2; o2 < hi2; o2++)                         \
                                        xp[o2 * s2] += cp[o2];                                     \
                                    continue;                                                      \
                                }                                                                  \
                                for (int64_t o2 = 0; o2 < lo2; o2++)                               \
                                    cp[o2] = 0;                                                    \
                                if (s2 == 1)                                                       \
                                    for (int64_t o2 = lo2; o2 < hi2; o2++)                         \
                                        cp[o2] = xp[o2];                                           \
                                else                                                               \
                                    for (int64_t o2 = lo2; o2 < hi2; o2++)                         \
                                        cp[o2] = xp[o2 * s2];                                      \
                                for (int64_t o2 = hi2; o2 < p->y[2]; o2++)                         \
                                    cp[o2] = 0;                                                    \
                            }                                                                      \
                        }                                                                          \
                    }                                                                              \
        }                                                                                          \
    }

CONV_COLUMNS(float, f32)
CONV_COLUMNS(double, f64)

static void
columns(const yg_conv_params *p, const geom *g, void *x, void *col, bool add, bool par) {
    if (g->f32)
        columns_f32(p, g, x, col, add, par);
    else
        columns_f64(p, g, x, col, add, par);
}

/* Depthwise (one x channel per group, cyg = channel multiplier): direct
 * loops over (image, y channel) pairs.  mode 0: y = A x; 1: x += A^T y
 * (x zeroed first; each y channel of a group writes its x channel, so
 * the pairs of one x channel run on one thread); 2: w += the weight
 * gradient (each y channel owns its filter). */
/* A last dim of stride 1 runs by rows in the per-capability kernel
 * (cpu/vec/conv_loops.c): each kernel tap's valid stretch of an output
 * row is one contiguous axpy or dot product, which vectorises; other
 * strides run the per-position loop below, testing bounds per tap. */

#define CONV_DEPTHWISE(T, SFX)                                                                     \
    static void depthwise_##SFX(const yg_conv_params *p,                                           \
                                const geom *g,                                                     \
                                T *x,                                                              \
                                const T *w,                                                        \
                                T *y,                                                              \
                                T *wg,                                                             \
                                const T *bias,                                                     \
                                int mode,                                                          \
                                bool par) {                                                        \
        int64_t units = p->batch * p->cx;                                                          \
        const yg_depthwise_geom dg = {                                                             \
            {p->x[0], p->x[1], p->x[2]},        {p->y[0], p->y[1], p->y[2]},                       \
            {p->k[0], p->k[1], p->k[2]},        {p->stride[0], p->stride[1], p->stride[2]},        \
            {p->pad[0], p->pad[1], p->pad[2]},  {p->dil[0], p->dil[1], p->dil[2]}};                \
        _Pragma("omp parallel for if (par)") for (int64_t u = 0; u < units; u++) {                 \
            int64_t n = u / p->cx, c = u % p->cx;                                                  \
            T *xc = x + (n * p->cx + c) * g->Q;                                                    \
            for (int64_t j = 0; j < g->cyg; j++) {                                                 \
                int64_t oc = c * g->cyg + j;                                                       \
                T *yc = y + (n * p->cy + oc) * g->P;                                               \
                const T *wc = w != NULL ? w + oc * g->K : NULL;                                    \
                T *gc = wg != NULL ? wg + oc * g->K : NULL;                                        \
                const T b = bias != NULL ? bias[oc] : 0;                                           \
                if (p->stride[2] == 1) {                                                           \
                    yg__vec()->depthwise_rows[g->f32 ? 0 : 1](&dg, xc, wc, yc, gc, b, mode);       \
                    continue;                                                                      \
                }                                                                                  \
                for (int64_t o0 = 0; o0 < p->y[0]; o0++)                                           \
                    for (int64_t o1 = 0; o1 < p->y[1]; o1++)                                       \
                        for (int64_t o2 = 0; o2 < p->y[2]; o2++) {                                 \
                            int64_t o = (o0 * p->y[1] + o1) * p->y[2] + o2;                        \
                            T acc = 0, gy = mode != 0 ? yc[o] : 0;                                 \
                            for (int64_t k0 = 0; k0 < p->k[0]; k0++) {                             \
                                int64_t i0 = o0 * p->stride[0] + k0 * p->dil[0] - p->pad[0];       \
                                if (i0 < 0 || i0 >= p->x[0])                                       \
                                    continue;                                                      \
                                for (int64_t k1 = 0; k1 < p->k[1]; k1++) {                         \
                                    int64_t i1 = o1 * p->stride[1] + k1 * p->dil[1] - p->pad[1];   \
                                    if (i1 < 0 || i1 >= p->x[1])                                   \
                                        continue;                                                  \
                                    for (int64_t k2 = 0; k2 < p->k[2]; k2++) {                     \
                                        int64_t i2 =                                               \
                                            o2 * p->stride[2] + k2 * p->dil[2] - p->pad[2];        \
                                        if (i2 < 0 || i2 >= p->x[2])                               \
                                            continue;                                              \
                                        int64_t kk = (k0 * p->k[1] + k1) * p->k[2] + k2;           \
                                        int64_t i = (i0 * p->x[1] + i1) * p->x[2] + i2;            \
                                        if (mode == 0)                                             \
                                            acc += wc[kk] * xc[i];                                 \
                                        else if (mode == 1)                                        \
                                            xc[i] += wc[kk] * gy;                                  \
                                        else                                                       \
                                            gc[kk] += gy * xc[i];                                  \
                                    }                                                              \
                                }                                                                  \
                            }                                                                      \
                            if (mode == 0)                                                         \
                                yc[o] = b + acc;                                                   \
                        }                                                                          \
            }                                                                                      \
        }                                                                                          \
    }

CONV_DEPTHWISE(float, f32)
CONV_DEPTHWISE(double, f64)

/* mode 0 (forward, bias nullable: added to each y channel), 1 (data
 * gradient) or 2 (weight gradient) of a depthwise convolution. */
static void depthwise(const yg_conv_params *p,
                      const geom *g,
                      const void *x,
                      const void *w,
                      const void *y,
                      void *wg,
                      const void *bias,
                      int mode) {
    bool par =
        batch_threads(p, g) > 1 || (p->cx > 1 && omp_get_max_threads() > 1 &&
                                    (double)p->batch * p->cy * g->P * g->K >= YG_CONV_PARALLEL_MIN);
    /* mode 2 accumulates per y channel, which images share: serial over
     * images there (the units loop would race on gc) */
    if (mode == 2)
        par = false;
    if (g->f32)
        depthwise_f32(p, g, (float *)x, w, (float *)y, wg, bias, mode, par);
    else
        depthwise_f64(p, g, (double *)x, w, (double *)y, wg, bias, mode, par);
}

/* Adds bias[c] to every position of each of the c_n channels of each
 * image of t ([batch, c_n, n_pos]). */
static void
add_bias(const yg_conv_params *p, bool f32, void *t, const void *bias, int64_t c_n, int64_t n_pos) {
    for (int64_t n = 0; n < p->batch; n++)
        for (int64_t c = 0; c < c_n; c++) {
            int64_t base = (n * c_n + c) * n_pos;
            if (f32) {
                float b = ((const float *)bias)[c], *r = (float *)t + base;
                for (int64_t i = 0; i < n_pos; i++)
                    r[i] += b;
            } else {
                double b = ((const double *)bias)[c], *r = (double *)t + base;
                for (int64_t i = 0; i < n_pos; i++)
                    r[i] += b;
            }
        }
}

static char *at(const void *base, int64_t elems, size_t elt) {
    return (char *)base + (size_t)elems * elt;
}

/* y = A x for image n with col as scratch (NULL for 1x1). */
static void forward_image(const yg_conv_params *p,
                          const geom *g,
                          int64_t n,
                          const void *x,
                          const void *w,
                          void *y,
                          void *col,
                          bool par) {
    for (int64_t gi = 0; gi < p->groups; gi++) {
        const void *xg = at(x, (n * p->cx + gi * g->cxg) * g->Q, g->elt);
        const void *b = xg;
        if (col != NULL) {
            columns(p, g, (void *)xg, col, false, par);
            b = col;
        }
        yg__cpu_gemm(p->dtype,
             false,
             false,
             g->cyg,
             g->P,
             g->cxg * g->K,
             at(w, gi * g->cyg * g->cxg * g->K, g->elt),
             g->cxg * g->K,
             b,
             g->P,
             0.0,
             at(y, (n * p->cy + gi * g->cyg) * g->P, g->elt),
             g->P);
    }
}

/* x = A^T y for image n (x's plane zeroed here). */
static void data_image(const yg_conv_params *p,
                       const geom *g,
                       int64_t n,
                       const void *y,
                       const void *w,
                       void *x,
                       void *col,
                       bool par) {
    for (int64_t gi = 0; gi < p->groups; gi++) {
        void *xg = at(x, (n * p->cx + gi * g->cxg) * g->Q, g->elt);
        const void *wg = at(w, gi * g->cyg * g->cxg * g->K, g->elt);
        const void *yg = at(y, (n * p->cy + gi * g->cyg) * g->P, g->elt);
        if (col == NULL) {
            yg__cpu_gemm(p->dtype,
                 true,
                 false,
                 g->cxg,
                 g->P,
                 g->cyg,
                 wg,
                 g->cxg * g->K,
                 yg,
                 g->P,
                 0.0,
                 xg,
                 g->P);
            continue;
        }
        yg__cpu_gemm(p->dtype,
             true,
             false,
             g->cxg * g->K,
             g->P,
             g->cyg,
             wg,
             g->cxg * g->K,
             yg,
             g->P,
             0.0,
             col,
             g->P);
        memset(xg, 0, (size_t)(g->cxg * g->Q) * g->elt);
        columns(p, g, xg, col, true, par);
    }
}

/* w += the weight gradient of image n. */
static void weight_image(const yg_conv_params *p,
                         const geom *g,
                         int64_t n,
                         const void *y,
                         const void *x,
                         void *w,
                         void *col,
                         bool par) {
    for (int64_t gi = 0; gi < p->groups; gi++) {
        const void *xg = at(x, (n * p->cx + gi * g->cxg) * g->Q, g->elt);
        const void *b = xg;
        if (col != NULL) {
            columns(p, g, (void *)xg, col, false, par);
            b = col;
        }
        yg__cpu_gemm(p->dtype,
             false,
             true,
             g->cyg,
             g->cxg * g->K,
             g->P,
             at(y, (n * p->cy + gi * g->cyg) * g->P, g->elt),
             g->P,
             b,
             g->P,
             1.0,
             at(w, gi * g->cyg * g->cxg * g->K, g->elt),
             g->cxg * g->K);
    }
}

typedef enum pass { PASS_FORWARD, PASS_DATA, PASS_WEIGHT } pass;

/* Runs one pass over the batch, images on threads when worth it. */
static yg_status
run(const yg_conv_params *p, const geom *g, pass what, const void *a, const void *b, void *out) {
    int nt = batch_threads(p, g);
    int64_t col_elems = 0, wn;
    /* The weight exists (cy * cxg * K is its numel) but an im2col block,
     * a group's weight times the output positions, need not fit int64:
     * checked (core/sizes.h), reported as the memory it would take. */
    bool fits = yg__mul_ok(p->cy * g->cxg, g->K, &wn) &&
                (g->pointwise || (yg__mul_ok(g->cxg * g->K, g->P, &col_elems) &&
                                  yg__mul_ok(col_elems, (int64_t)g->elt * (nt + 1), &col_elems)));
    if (!fits)
        return yg__fail(YG_ERR_OUT_OF_MEMORY,
                        "no memory for im2col buffers of %" PRId64 " x %" PRId64 " elements",
                        g->cxg * g->K,
                        g->P);
    size_t col_bytes = g->pointwise ? 0 : (size_t)(g->cxg * g->K * g->P) * g->elt;
    size_t w_bytes = (size_t)wn * g->elt;
    size_t acc_bytes = what == PASS_WEIGHT && nt > 1 ? w_bytes : 0;
    size_t per = col_bytes + acc_bytes, total = per * (size_t)nt;
    char *buf = NULL;

    if (total > 0) {
        buf = yg__alloc(total);
        if (buf == NULL)
            return yg__fail(
                YG_ERR_OUT_OF_MEMORY, "no memory for %zu bytes of im2col buffers", total);
    }
    if (what == PASS_WEIGHT)
        memset(out, 0, w_bytes);
    if (acc_bytes > 0)
        memset(buf, 0, total);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t n = 0; n < p->batch; n++) {
        char *mine = buf != NULL ? buf + per * (size_t)omp_get_thread_num() : NULL;
        void *col = col_bytes > 0 ? mine : NULL;
        /* one image at a time: its im2col/col2im may split channels over
         * threads, when the copy is big enough to pay for a fork */
        bool par = nt == 1 && omp_get_max_threads() > 1 && g->cxg > 1 &&
                   (double)g->cxg * (double)g->K * (double)g->P >= YG_CONV_COLUMNS_PARALLEL_MIN;
        if (what == PASS_FORWARD)
            forward_image(p, g, n, a, b, out, col, par);
        else if (what == PASS_DATA)
            data_image(p, g, n, a, b, out, col, par);
        else
            weight_image(p, g, n, a, b, acc_bytes > 0 ? mine + col_bytes : out, col, par);
    }
    if (acc_bytes > 0) {
        int64_t m = p->cy * g->cxg * g->K;
        for (int t = 0; t < nt; t++) {
            const char *acc = buf + per * (size_t)t + col_bytes;
            for (int64_t i = 0; i < m; i++) {
                if (g->f32)
                    ((float *)out)[i] += ((const float *)acc)[i];
                else
                    ((double *)out)[i] += ((const double *)acc)[i];
            }
        }
    }
    if (buf != NULL)
        yg__free(buf, total);
    return YG_OK;
}

static yg_status native_forward(const yg_conv_params *p,
                                  const void *x,
                                  const void *w,
                                  const void *bias,
                                  void *y) {
    geom g = geometry(p);
    if (p->batch == 0 || p->cy == 0 || g.P <= 0)
        return YG_OK; /* y is empty */
    if (g.depthwise) {
        depthwise(p, &g, x, w, y, NULL, bias, 0); /* the bias with the taps */
        return YG_OK;
    }
    YG_RETURN_IF_ERROR(run(p, &g, PASS_FORWARD, x, w, y));
    if (bias != NULL)
        add_bias(p, g.f32, y, bias, p->cy, g.P);
    return YG_OK;
}

static yg_status native_data(const yg_conv_params *p,
                               const void *y,
                               const void *w,
                               const void *bias,
                               void *x) {
    geom g = geometry(p);
    if (p->batch == 0 || p->cx == 0 || g.Q <= 0)
        return YG_OK; /* x is empty */
    if (g.depthwise) {
        memset(x, 0, (size_t)(p->batch * p->cx * g.Q) * g.elt);
        depthwise(p, &g, x, w, y, NULL, NULL, 1);
    } else {
        YG_RETURN_IF_ERROR(run(p, &g, PASS_DATA, y, w, x));
    }
    if (bias != NULL)
        add_bias(p, g.f32, x, bias, p->cx, g.Q);
    return YG_OK;
}

static yg_status native_weight(const yg_conv_params *p, const void *y, const void *x, void *w) {
    geom g = geometry(p);
    if (p->batch == 0 || g.P <= 0 || g.Q <= 0) {
        /* No image, or one of no positions: the gradient is zero. */
        memset(w, 0, (size_t)(p->cy * g.cxg * g.K) * g.elt);
        return YG_OK;
    }
    if (g.depthwise) {
        memset(w, 0, (size_t)(p->cy * g.K) * g.elt);
        depthwise(p, &g, (void *)x, NULL, (void *)y, w, NULL, 2);
        return YG_OK;
    }
    return run(p, &g, PASS_WEIGHT, y, x, w);
}

const yg_conv_impl yg__conv_native = {
    .device = YG_CPU,
    .forward = native_forward,
    .data = native_data,
    .weight = native_weight,
};
