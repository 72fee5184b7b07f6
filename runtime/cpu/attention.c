/*
 * attention.c - flash_attention and its fused gradient on the CPU:
 * attention over tiles of queries and keys with an online softmax
 * (FlashAttention, Dao et al. 2022; the backward as FlashAttention-2
 * orders it), so no [L, S] matrix is ever made: each thread holds a few
 * 128 x 128 blocks, and besides the inputs and results the memory is
 * one value per query row.
 *
 * The operands are made contiguous and walked as one flat batch of
 * (L, E) / (S, E) / (S, Ev) matrices (meta/attention.c checked that the
 * batch dims agree).  The products of a tile (q k^T, p v, and in the
 * backward p^T dO, dO v^T, dS^T q, dS k) are small gemms through
 * yg__cpu_gemm, which runs on the calling thread inside a parallel
 * region; the softmax steps between them are cpu/vec/attention_loops.c,
 * compiled per CPU capability so that exp is SLEEF's vector function.
 *
 * Forward: one work item per (batch, query tile), largest first when
 * causal (the last query tile sees every key tile), taken dynamically by
 * the OpenMP threads.  Each keeps a running maximum m and sum l per row
 * and an accumulator of p v; key tiles wholly above the diagonal (every
 * key after every query of the tile) are skipped.  At the end output =
 * acc / l and logsumexp = m + log(l).
 *
 * Backward: one work item per (batch, key tile); the item owns the key
 * tile's rows of grad_key and grad_value and walks the query tiles that
 * see it, recomputing p = exp(scale q k^T - logsumexp).  grad_query
 * collects from every key tile, so each thread adds into its own zeroed
 * copy, summed at the end (none when one thread runs).
 */
#include "decls/attention.h"

#include "cpu/cpu.h"
#include "cpu/vec/kernels.h"

#include <math.h>
#include <omp.h>
#include <string.h>

/* Tile sizes.  128 x 128 everywhere (a float32 score tile is 64 KiB,
 * L2-resident) took 0.77 s of CPU for 13 reps of bench_eager attention
 * on one thread, 64 x 64 0.89 s, 32 x 32 1.04 s; 256 x 256 and mixed
 * sizes were no better (docs/benchmarks.md, "Causal attention").  Larger
 * tiles make fewer, larger gemm calls; the causal diagonal tiles, half
 * wasted, cost more. */
#define FQ 128 /* forward: query rows per tile */
#define FK 128 /* forward: keys per tile */
#define BQ 128 /* backward: query rows per tile */
#define BK 128 /* backward: keys per tile */

typedef struct attn_geom {
    int64_t batch, L, S, E, Ev;
    double scale;
    bool causal;
    bool f64;
    size_t esize;
} attn_geom;

static void geometry(const yg_tensor *q,
                     const yg_tensor *k,
                     const yg_tensor *v,
                     bool is_causal,
                     const double *scale,
                     attn_geom *g) {
    int32_t nd = q->ndim;
    g->batch = 1;
    for (int32_t d = 0; d < nd - 2; d++)
        g->batch *= q->sizes[d];
    g->L = q->sizes[nd - 2];
    g->E = q->sizes[nd - 1];
    g->S = k->sizes[nd - 2];
    g->Ev = v->sizes[nd - 1];
    g->scale = scale != NULL ? *scale : 1 / sqrt((double)(g->E > 0 ? g->E : 1));
    g->causal = is_causal;
    g->f64 = q->dtype == YG_FLOAT64;
    g->esize = g->f64 ? 8 : 4;
}

/* c [m, n] = a b (op as ta / tb) + beta c, empty dims allowed (k == 0 is
 * a product of zeros). */
static void gemm(const attn_geom *g,
                 bool ta,
                 bool tb,
                 int64_t m,
                 int64_t n,
                 int64_t k,
                 const void *a,
                 int64_t lda,
                 const void *b,
                 int64_t ldb,
                 double beta,
                 void *c,
                 int64_t ldc) {
    if (m == 0 || n == 0)
        return;
    if (k == 0) {
        if (beta == 0)
            for (int64_t i = 0; i < m; i++)
                memset((char *)c + (size_t)(i * ldc) * g->esize, 0, (size_t)n * g->esize);
        return;
    }
    yg__cpu_gemm(g->f64 ? YG_FLOAT64 : YG_FLOAT32, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

/* The key tiles query tile [q0, q0 + bq) sees: [0, end). */
static int64_t key_end(const attn_geom *g, int64_t q0, int64_t bq) {
    if (!g->causal)
        return g->S;
    int64_t end = q0 + bq; /* keys up to q0 + bq - 1 */
    return end < g->S ? end : g->S;
}

/* Whether to fork threads: the work (multiply-adds) of the whole op. */
static bool worth_threads(const attn_geom *g) {
    double work = (double)g->batch * (double)g->L * (double)g->S * (double)(g->E + g->Ev);
    return work >= YG_VEC_PARALLEL_MIN * 16.0 && omp_get_max_threads() > 1;
}

#define AT(base, off) ((void *)((char *)(base) + (size_t)(off)*g->esize))

static void forward_item(const attn_geom *g,
                         const yg_attention_loops *lp,
                         int64_t b,
                         int64_t q0,
                         const char *q,
                         const char *k,
                         const char *v,
                         char *o,
                         char *lse,
                         char *scratch) {
    int64_t bq = g->L - q0 < FQ ? g->L - q0 : FQ, f = g->f64;
    void *s = scratch, *acc = AT(scratch, FQ * FK);
    void *m = AT(acc, FQ * g->Ev), *l = AT(m, FQ);
    const void *qb = AT(q, (b * g->L + q0) * g->E);

    memset(acc, 0, (size_t)(bq * g->Ev) * g->esize);
    for (int64_t i = 0; i < bq; i++) {
        if (f) {
            ((double *)m)[i] = -INFINITY;
            ((double *)l)[i] = 0;
        } else {
            ((float *)m)[i] = -INFINITY;
            ((float *)l)[i] = 0;
        }
    }
    int64_t end = key_end(g, q0, bq);
    for (int64_t k0 = 0; k0 < end; k0 += FK) {
        int64_t bk = end - k0 < FK ? end - k0 : FK;
        gemm(g, false, true, bq, bk, g->E, qb, g->E, AT(k, (b * g->S + k0) * g->E), g->E, 0, s, FK);
        lp->fwd_tile[f](s, FK, bq, bk, g->scale, q0, k0, g->causal, m, l, acc, g->Ev);
        gemm(g,
             false,
             false,
             bq,
             g->Ev,
             bk,
             s,
             FK,
             AT(v, (b * g->S + k0) * g->Ev),
             g->Ev,
             1,
             acc,
             g->Ev);
    }
    for (int64_t i = 0; i < bq; i++) {
        int64_t row = b * g->L + q0 + i;
        if (f) {
            double li = ((double *)l)[i], inv = li > 0 ? 1 / li : 0;
            double *dst = (double *)o + row * g->Ev, *src = (double *)acc + i * g->Ev;
            for (int64_t c = 0; c < g->Ev; c++)
                dst[c] = src[c] * inv;
            ((double *)lse)[row] = ((double *)m)[i] + log(li);
        } else {
            float li = ((float *)l)[i], inv = li > 0 ? 1 / li : 0;
            float *dst = (float *)o + row * g->Ev, *src = (float *)acc + i * g->Ev;
            for (int64_t c = 0; c < g->Ev; c++)
                dst[c] = src[c] * inv;
            ((float *)lse)[row] = ((float *)m)[i] + logf(li);
        }
    }
}

yg_status yg__cpu_flash_attention_out(const yg_tensor *query,
                                      const yg_tensor *key,
                                      const yg_tensor *value,
                                      bool is_causal,
                                      const double *scale,
                                      yg_tensor *out_output,
                                      yg_tensor *out_logsumexp) {
    yg_tensor *q = NULL, *k = NULL, *v = NULL;
    attn_geom geom;
    const attn_geom *g = &geom;
    char *scratch = NULL;
    size_t per = 0;
    int nt = 1;
    yg_status st;

    geometry(query, key, value, is_causal, scale, &geom);
    if (g->batch == 0 || g->L == 0)
        return YG_OK;
    st = yg__tensor_contiguous_as(query, query->dtype, true, &q);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(key, query->dtype, true, &k);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(value, query->dtype, true, &v);
    if (st != YG_OK)
        goto out;
    nt = worth_threads(g) ? omp_get_max_threads() : 1;
    per = (size_t)(FQ * FK + FQ * g->Ev + 2 * FQ) * g->esize;
    scratch = yg__alloc(per * (size_t)nt);
    if (scratch == NULL) {
        st = yg__fail(
            YG_ERR_OUT_OF_MEMORY, "flash_attention: out of memory for %zu bytes", per * (size_t)nt);
        goto out;
    }
    const yg_attention_loops *lp = yg__vec()->attention;
    int64_t qtiles = (g->L + FQ - 1) / FQ, items = g->batch * qtiles;
    const char *qp = yg__tensor_ptr(q), *kp = yg__tensor_ptr(k), *vp = yg__tensor_ptr(v);
    char *op = yg__tensor_ptr(out_output), *lp_out = yg__tensor_ptr(out_logsumexp);
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (int64_t it = 0; it < items; it++) {
        /* the last query tiles first: causal, they see the most keys */
        int64_t t = qtiles - 1 - it / g->batch, b = it % g->batch;
        forward_item(
            g, lp, b, t * FQ, qp, kp, vp, op, lp_out, scratch + per * (size_t)omp_get_thread_num());
    }
out:
    yg__free(scratch, per * (size_t)nt);
    yg_release(q);
    yg_release(k);
    yg_release(v);
    return st;
}

/* The tensors of the backward, contiguous, and its per-row D. */
typedef struct attn_bwd {
    const char *q, *k, *v, *go, *lse, *d;
    char *gq, *gk, *gv;
} attn_bwd;

/* Key tile [k0, k0 + bk) of batch b: its rows of grad_key and grad_value
 * (owned by this item), and its share of grad_query added into gq (this
 * thread's). */
static void backward_item(const attn_geom *g,
                          const yg_attention_loops *lp,
                          const attn_bwd *a,
                          int64_t b,
                          int64_t k0,
                          char *gq,
                          char *scratch) {
    int64_t bk = g->S - k0 < BK ? g->S - k0 : BK, f = g->f64;
    void *p = scratch, *dp = AT(scratch, BQ * BK);
    void *gk = AT(a->gk, (b * g->S + k0) * g->E), *gv = AT(a->gv, (b * g->S + k0) * g->Ev);
    const void *kb = AT(a->k, (b * g->S + k0) * g->E), *vb = AT(a->v, (b * g->S + k0) * g->Ev);

    memset(gk, 0, (size_t)(bk * g->E) * g->esize);
    memset(gv, 0, (size_t)(bk * g->Ev) * g->esize);
    /* causal: query i sees key k0 when i >= k0, so the query tiles from
     * the one holding row k0 */
    int64_t first = g->causal ? k0 / BQ * BQ : 0;
    for (int64_t q0 = first; q0 < g->L; q0 += BQ) {
        int64_t bq = g->L - q0 < BQ ? g->L - q0 : BQ, row = b * g->L + q0;
        const void *qb = AT(a->q, row * g->E), *gob = AT(a->go, row * g->Ev);
        gemm(g, false, true, bq, bk, g->E, qb, g->E, kb, g->E, 0, p, BK);
        lp->probs[f](p, BK, bq, bk, g->scale, q0, k0, g->causal, AT(a->lse, row));
        /* grad_value += p^T grad_output */
        gemm(g, true, false, bk, g->Ev, bq, p, BK, gob, g->Ev, 1, gv, g->Ev);
        /* dp = grad_output value^T, then scale p (dp - D) */
        gemm(g, false, true, bq, bk, g->Ev, gob, g->Ev, vb, g->Ev, 0, dp, BK);
        lp->dscores[f](dp, p, BK, bq, bk, g->scale, AT(a->d, row));
        /* grad_key += dS^T query, grad_query += dS key */
        gemm(g, true, false, bk, g->E, bq, dp, BK, qb, g->E, 1, gk, g->E);
        gemm(g, false, false, bq, g->E, bk, dp, BK, kb, g->E, 1, AT(gq, row * g->E), g->E);
    }
}

/* D = rowsum(grad_output * output) per query row, into d. */
static void row_dots(const attn_geom *g, const void *go, const void *o, void *d, int nt) {
    int64_t rows = g->batch * g->L, ev = g->Ev;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t r = 0; r < rows; r++) {
        if (g->f64) {
            const double *x = (const double *)go + r * ev, *y = (const double *)o + r * ev;
            double s = 0;
            for (int64_t c = 0; c < ev; c++)
                s += x[c] * y[c];
            ((double *)d)[r] = s;
        } else {
            const float *x = (const float *)go + r * ev, *y = (const float *)o + r * ev;
            float s = 0;
            for (int64_t c = 0; c < ev; c++)
                s += x[c] * y[c];
            ((float *)d)[r] = s;
        }
    }
}

/* dst += src over n elements */
static void add_into(const attn_geom *g, void *dst, const void *src, int64_t n) {
    if (g->f64) {
        double *x = dst;
        const double *y = src;
        for (int64_t i = 0; i < n; i++)
            x[i] += y[i];
    } else {
        float *x = dst;
        const float *y = src;
        for (int64_t i = 0; i < n; i++)
            x[i] += y[i];
    }
}

yg_status yg__cpu_flash_attention_backward_fused_out(const yg_tensor *grad_output,
                                                     const yg_tensor *query,
                                                     const yg_tensor *key,
                                                     const yg_tensor *value,
                                                     const yg_tensor *output,
                                                     const yg_tensor *logsumexp,
                                                     bool is_causal,
                                                     const double *scale,
                                                     yg_tensor *out_grad_query,
                                                     yg_tensor *out_grad_key,
                                                     yg_tensor *out_grad_value) {
    yg_tensor *t[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    const yg_tensor *in[6] = {query, key, value, grad_output, output, logsumexp};
    attn_geom geom;
    const attn_geom *g = &geom;
    char *buf = NULL;
    size_t nbytes = 0;
    int nt = 1;
    yg_status st = YG_OK;

    geometry(query, key, value, is_causal, scale, &geom);
    int64_t nq = g->batch * g->L * g->E;
    if (nq > 0)
        memset(yg__tensor_ptr(out_grad_query), 0, (size_t)nq * g->esize);
    if (g->batch == 0 || g->S == 0) {
        /* no key: grad_key and grad_value are empty, grad_query 0 */
        return YG_OK;
    }
    for (int i = 0; i < 6 && st == YG_OK; i++)
        st = yg__tensor_contiguous_as(in[i], query->dtype, true, &t[i]);
    if (st != YG_OK)
        goto out;
    nt = worth_threads(g) ? omp_get_max_threads() : 1;
    size_t per = (size_t)(2 * BQ * BK) * g->esize;
    size_t dbytes = (size_t)(g->batch * g->L) * g->esize;
    size_t gqbytes = nt > 1 ? (size_t)nq * g->esize : 0;
    nbytes = per * (size_t)nt + dbytes + gqbytes * (size_t)nt;
    buf = yg__alloc(nbytes);
    if (buf == NULL) {
        st = yg__fail(YG_ERR_OUT_OF_MEMORY,
                      "flash_attention_backward_fused: out of memory for %zu bytes",
                      nbytes);
        goto out;
    }
    char *dbuf = buf + per * (size_t)nt, *gqs = dbuf + dbytes;
    if (gqbytes > 0)
        memset(gqs, 0, gqbytes * (size_t)nt);
    attn_bwd a = {
        .q = yg__tensor_ptr(t[0]),
        .k = yg__tensor_ptr(t[1]),
        .v = yg__tensor_ptr(t[2]),
        .go = yg__tensor_ptr(t[3]),
        .lse = yg__tensor_ptr(t[5]),
        .d = dbuf,
        .gq = yg__tensor_ptr(out_grad_query),
        .gk = yg__tensor_ptr(out_grad_key),
        .gv = yg__tensor_ptr(out_grad_value),
    };
    row_dots(g, a.go, yg__tensor_ptr(t[4]), dbuf, nt);
    const yg_attention_loops *lp = yg__vec()->attention;
    int64_t ktiles = (g->S + BK - 1) / BK, items = g->batch * ktiles;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (int64_t it = 0; it < items; it++) {
        /* the first key tiles first: causal, every query tile sees them */
        int64_t kt = it / g->batch, b = it % g->batch;
        int th = omp_get_thread_num();
        char *gq = gqbytes > 0 ? gqs + gqbytes * (size_t)th : a.gq;
        backward_item(g, lp, &a, b, kt * BK, gq, buf + per * (size_t)th);
    }
    if (gqbytes > 0) {
        /* sum the threads' grad_query in thread order, split over rows */
        int64_t rows = g->batch * g->L;
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int64_t r = 0; r < rows; r++)
            for (int th = 0; th < nt; th++)
                add_into(g,
                         AT(a.gq, r * g->E),
                         gqs + gqbytes * (size_t)th + (size_t)(r * g->E) * g->esize,
                         g->E);
    }
out:
    yg__free(buf, nbytes);
    for (int i = 0; i < 6; i++)
        yg_release(t[i]);
    return st;
}
