/*
 * conv/onednn.c - the oneDNN convolution backend (Debian libdnnl-dev 2.6,
 * C API): forward, data gradient and weight gradient of the ordinary
 * convolution A of conv/conv.h, float32, 1-d, 2-d and 3-d.  Compiled
 * only when CMake finds oneDNN (else conv/onednn_stub.c).
 *
 * Layouts.  The caller's tensors are plain (NCW, NCHW, NCDHW; weight
 * [cy, cx / G, k...], seen by oneDNN as [G, cy / G, cx / G, k...]).  Each
 * primitive is created with format_tag any, so oneDNN picks its blocked
 * layouts (nChw16c, ...); an operand whose chosen layout differs from the
 * plain one is reordered into a buffer the cache entry owns before the
 * primitive (inputs) or out of it afterwards (outputs).
 *
 * Cache.  Creating a primitive descriptor, primitive and reorders costs
 * milliseconds, so they are kept in a small cache (YG_ONEDNN_CACHE
 * entries, least recently used evicted) keyed by pass and every geometry
 * field of yg_conv_params.  One mutex guards the cache and the execution
 * that uses an entry (its buffers are the entry's): convolutions from
 * several user threads run one at a time here, each on all of oneDNN's
 * threads.  oneDNN (Debian's build) threads with OpenMP (libgomp), the
 * same pool as OpenBLAS and yagrad's own loops, so OMP_NUM_THREADS and
 * omp_set_num_threads govern it too.
 *
 * Backward.  Both gradients of one convolution run under one hold of the
 * lock (onednn_backward), and the weight pass reads the data pass's
 * conversion of the output gradient when both chose one layout: the
 * conversion of a large activation costs about as much as a tenth of the
 * pass.
 *
 * The engine and the stream are created once (pthread_once); a failure
 * there is kept and returned by every later call.
 */
#include "conv/conv.h"

#include <dnnl.h>
#include <dnnl_debug.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define YG_ONEDNN_CACHE 32 /* entries */

typedef enum pass { PASS_FORWARD, PASS_DATA, PASS_WEIGHT } pass;

static const char *const pass_names[] = {"forward", "backward data", "backward weights"};

/* pass, bias, n_spatial, batch, groups, cx, cy, then x, y, k, stride,
 * pad, dil (3 each): every field that shapes a primitive. */
#define KEY_LEN (7 + 6 * 3)

/* One operand of a primitive: the caller's plain memory and, when oneDNN
 * chose another layout, its own buffer and the reorder between them. */
typedef struct operand {
    int arg;               /* DNNL_ARG_* */
    bool out;              /* written by the primitive */
    dnnl_memory_t user;    /* the caller's buffer (handle set per call) */
    dnnl_memory_t inner;   /* the primitive's layout, or NULL: user is used */
    dnnl_primitive_t move; /* user -> inner (in) or inner -> user (out) */
} operand;

typedef struct entry {
    int64_t key[KEY_LEN];
    dnnl_primitive_t prim;
    operand ops[4];
    int n_ops;
    uint64_t used; /* tick of the last use, for eviction */
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *cache[YG_ONEDNN_CACHE]; /* guarded by lock */
static uint64_t tick, hits, misses;   /* guarded by lock */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static dnnl_engine_t engine;
static dnnl_stream_t stream;
static dnnl_status_t init_status;

static void init(void) {
    init_status = dnnl_engine_create(&engine, dnnl_cpu, 0);
    if (init_status == dnnl_success)
        init_status = dnnl_stream_create(&stream, engine, dnnl_stream_default_flags);
}

/* A yagrad status for the dnnl status s of what. */
static yg_status fail(dnnl_status_t s, const char *what) {
    yg_status code = s == dnnl_out_of_memory   ? YG_ERR_OUT_OF_MEMORY
                     : s == dnnl_unimplemented ? YG_ERR_NOT_IMPLEMENTED
                                               : YG_ERR_INTERNAL;
    return yg__fail(code, "onednn: %s: %s", what, dnnl_status2str(s));
}

static const char *onednn_refuses(const yg_conv_params *p) {
    if (p->dtype != YG_FLOAT32)
        return "float64: oneDNN has no float64 convolution";
    if (p->batch == 0 || p->cx == 0 || p->cy == 0)
        return "empty batch or channels";
    for (int d = 0; d < 3; d++) {
        int64_t span = (p->k[d] - 1) * p->dil[d] + 1;
        /* oneDNN derives y from x with the right padding equal to the left */
        if ((p->x[d] + 2 * p->pad[d] - span) / p->stride[d] + 1 != p->y[d])
            return "output_padding beyond what oneDNN's padding expresses";
    }
    return NULL;
}

void yg_conv_onednn_cache_stats(int64_t *out_hits, int64_t *out_misses, int64_t *out_entries) {
    int64_t n = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < YG_ONEDNN_CACHE; i++)
        n += cache[i] != NULL;
    *out_hits = (int64_t)hits;
    *out_misses = (int64_t)misses;
    *out_entries = n;
    pthread_mutex_unlock(&lock);
}

static void make_key(const yg_conv_params *p, pass what, bool bias, int64_t *key) {
    int i = 0;
    key[i++] = what;
    key[i++] = bias;
    key[i++] = p->n_spatial;
    key[i++] = p->batch;
    key[i++] = p->groups;
    key[i++] = p->cx;
    key[i++] = p->cy;
    for (int d = 0; d < 3; d++) {
        key[i++] = p->x[d];
        key[i++] = p->y[d];
        key[i++] = p->k[d];
        key[i++] = p->stride[d];
        key[i++] = p->pad[d];
        key[i++] = p->dil[d];
    }
}

static void entry_free(entry *e) {
    if (e == NULL)
        return;
    for (int i = 0; i < e->n_ops; i++) {
        dnnl_memory_destroy(e->ops[i].user);
        dnnl_memory_destroy(e->ops[i].inner);
        dnnl_primitive_destroy(e->ops[i].move);
    }
    dnnl_primitive_destroy(e->prim);
    free(e);
}

/* The plain memory descriptors of p: x side, y side, weight, bias. */
typedef struct descs {
    dnnl_memory_desc_t x, y, w, b;
    dnnl_dims_t stride, dil, pad_l, pad_r;
} descs;

static dnnl_format_tag_t plain_tag(int ndims) {
    static const dnnl_format_tag_t tags[] = {dnnl_abc, dnnl_abcd, dnnl_abcde, dnnl_abcdef};
    return tags[ndims - 3];
}

/* Fills d: plain (tag any when any) descriptors and the geometry. */
static dnnl_status_t make_descs(const yg_conv_params *p, bool any, descs *d) {
    int ns = p->n_spatial, off = 3 - ns, nw = ns + 2 + (p->groups > 1);
    dnnl_dims_t xd = {p->batch, p->cx}, yd = {p->batch, p->cy}, wd, bd = {p->cy};
    dnnl_status_t s;
    int j = 0;

    if (p->groups > 1)
        wd[j++] = p->groups;
    wd[j++] = p->cy / p->groups;
    wd[j++] = p->cx / p->groups;
    for (int i = 0; i < ns; i++) {
        xd[2 + i] = p->x[off + i];
        yd[2 + i] = p->y[off + i];
        wd[j++] = p->k[off + i];
        d->stride[i] = p->stride[off + i];
        d->dil[i] = p->dil[off + i] - 1; /* oneDNN counts the holes */
        d->pad_l[i] = p->pad[off + i];
        d->pad_r[i] = p->pad[off + i];
    }
    s = dnnl_memory_desc_init_by_tag(
        &d->x, ns + 2, xd, dnnl_f32, any ? dnnl_format_tag_any : plain_tag(ns + 2));
    if (s == dnnl_success)
        s = dnnl_memory_desc_init_by_tag(
            &d->y, ns + 2, yd, dnnl_f32, any ? dnnl_format_tag_any : plain_tag(ns + 2));
    if (s == dnnl_success)
        s = dnnl_memory_desc_init_by_tag(
            &d->w, nw, wd, dnnl_f32, any ? dnnl_format_tag_any : plain_tag(nw));
    if (s == dnnl_success)
        s = dnnl_memory_desc_init_by_tag(&d->b, 1, bd, dnnl_f32, dnnl_a);
    return s;
}

/* The primitive descriptor of pass what (for the backward passes, a
 * forward one first: oneDNN wants it as a hint). */
static dnnl_status_t
make_pd(const yg_conv_params *p, pass what, bool bias, dnnl_primitive_desc_t *out) {
    dnnl_convolution_desc_t fwd, bwd;
    dnnl_primitive_desc_t hint = NULL;
    descs d;
    dnnl_status_t s;

    *out = NULL;
    s = make_descs(p, true, &d);
    if (s == dnnl_success)
        s = dnnl_dilated_convolution_forward_desc_init(&fwd,
                                                       dnnl_forward_training,
                                                       dnnl_convolution_direct,
                                                       &d.x,
                                                       &d.w,
                                                       bias ? &d.b : NULL,
                                                       &d.y,
                                                       d.stride,
                                                       d.dil,
                                                       d.pad_l,
                                                       d.pad_r);
    if (s != dnnl_success)
        return s;
    if (what == PASS_FORWARD)
        return dnnl_primitive_desc_create(out, &fwd, NULL, engine, NULL);
    s = dnnl_primitive_desc_create(&hint, &fwd, NULL, engine, NULL);
    if (s == dnnl_success && what == PASS_DATA)
        s = dnnl_dilated_convolution_backward_data_desc_init(
            &bwd, dnnl_convolution_direct, &d.x, &d.w, &d.y, d.stride, d.dil, d.pad_l, d.pad_r);
    else if (s == dnnl_success)
        s = dnnl_dilated_convolution_backward_weights_desc_init(&bwd,
                                                                dnnl_convolution_direct,
                                                                &d.x,
                                                                &d.w,
                                                                NULL,
                                                                &d.y,
                                                                d.stride,
                                                                d.dil,
                                                                d.pad_l,
                                                                d.pad_r);
    if (s == dnnl_success)
        s = dnnl_primitive_desc_create(out, &bwd, NULL, engine, hint);
    dnnl_primitive_desc_destroy(hint);
    return s;
}

/* Sets up operand o for argument arg: user is the plain layout, chosen
 * the primitive's; a reorder and a buffer when they differ. */
static dnnl_status_t make_operand(operand *o,
                                  int arg,
                                  bool out,
                                  const dnnl_memory_desc_t *user,
                                  const dnnl_memory_desc_t *chosen) {
    dnnl_primitive_desc_t rpd = NULL;
    dnnl_status_t s;

    o->arg = arg;
    o->out = out;
    s = dnnl_memory_create(&o->user, user, engine, DNNL_MEMORY_NONE);
    if (s != dnnl_success || dnnl_memory_desc_equal(user, chosen))
        return s;
    s = dnnl_memory_create(&o->inner, chosen, engine, DNNL_MEMORY_ALLOCATE);
    if (s == dnnl_success && !out)
        s = dnnl_reorder_primitive_desc_create(&rpd, user, engine, chosen, engine, NULL);
    else if (s == dnnl_success)
        s = dnnl_reorder_primitive_desc_create(&rpd, chosen, engine, user, engine, NULL);
    if (s == dnnl_success)
        s = dnnl_primitive_create(&o->move, rpd);
    dnnl_primitive_desc_destroy(rpd);
    return s;
}

/* A new cache entry for (p, what, bias). */
static yg_status
entry_new(const yg_conv_params *p, pass what, bool bias, const int64_t *key, entry **out) {
    dnnl_primitive_desc_t pd = NULL;
    descs plain;
    dnnl_status_t s;
    entry *e = calloc(1, sizeof *e);

    *out = NULL;
    if (e == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "onednn: cache entry of %zu bytes", sizeof *e);
    memcpy(e->key, key, sizeof e->key);
    s = make_descs(p, false, &plain);
    if (s == dnnl_success)
        s = make_pd(p, what, bias, &pd);
    if (s == dnnl_success)
        s = dnnl_primitive_create(&e->prim, pd);
#define QUERY(q) dnnl_primitive_desc_query_md(pd, q, 0)
    if (s == dnnl_success && what == PASS_FORWARD) {
        s = make_operand(
            &e->ops[e->n_ops++], DNNL_ARG_SRC, false, &plain.x, QUERY(dnnl_query_src_md));
        if (s == dnnl_success)
            s = make_operand(&e->ops[e->n_ops++],
                             DNNL_ARG_WEIGHTS,
                             false,
                             &plain.w,
                             QUERY(dnnl_query_weights_md));
        if (s == dnnl_success)
            s = make_operand(
                &e->ops[e->n_ops++], DNNL_ARG_DST, true, &plain.y, QUERY(dnnl_query_dst_md));
        if (s == dnnl_success && bias)
            s = make_operand(&e->ops[e->n_ops++],
                             DNNL_ARG_BIAS,
                             false,
                             &plain.b,
                             dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1));
    } else if (s == dnnl_success && what == PASS_DATA) {
        s = make_operand(
            &e->ops[e->n_ops++], DNNL_ARG_DIFF_DST, false, &plain.y, QUERY(dnnl_query_diff_dst_md));
        if (s == dnnl_success)
            s = make_operand(&e->ops[e->n_ops++],
                             DNNL_ARG_WEIGHTS,
                             false,
                             &plain.w,
                             QUERY(dnnl_query_weights_md));
        if (s == dnnl_success)
            s = make_operand(&e->ops[e->n_ops++],
                             DNNL_ARG_DIFF_SRC,
                             true,
                             &plain.x,
                             QUERY(dnnl_query_diff_src_md));
    } else if (s == dnnl_success) {
        s = make_operand(
            &e->ops[e->n_ops++], DNNL_ARG_SRC, false, &plain.x, QUERY(dnnl_query_src_md));
        if (s == dnnl_success)
            s = make_operand(&e->ops[e->n_ops++],
                             DNNL_ARG_DIFF_DST,
                             false,
                             &plain.y,
                             QUERY(dnnl_query_diff_dst_md));
        if (s == dnnl_success)
            s = make_operand(&e->ops[e->n_ops++],
                             DNNL_ARG_DIFF_WEIGHTS,
                             true,
                             &plain.w,
                             QUERY(dnnl_query_diff_weights_md));
    }
#undef QUERY
    dnnl_primitive_desc_destroy(pd);
    if (s != dnnl_success) {
        entry_free(e);
        return fail(s, pass_names[what]);
    }
    *out = e;
    return YG_OK;
}

/* The entry for key, made (and the least recently used one evicted) when
 * missing.  Caller holds lock. */
static yg_status lookup(const yg_conv_params *p, pass what, bool bias, entry **out) {
    int64_t key[KEY_LEN];
    int victim = 0;

    make_key(p, what, bias, key);
    for (int i = 0; i < YG_ONEDNN_CACHE; i++) {
        entry *e = cache[i];
        if (e != NULL && memcmp(e->key, key, sizeof key) == 0) {
            hits++;
            e->used = ++tick;
            *out = e;
            return YG_OK;
        }
        if (e == NULL || (cache[victim] != NULL && e->used < cache[victim]->used))
            victim = i;
    }
    misses++;
    YG_RETURN_IF_ERROR(entry_new(p, what, bias, key, out));
    entry_free(cache[victim]);
    cache[victim] = *out;
    (*out)->used = ++tick;
    return YG_OK;
}

/* The operand of e for argument arg, or NULL. */
static operand *operand_of(entry *e, int arg) {
    for (int i = 0; i < e->n_ops; i++)
        if (e->ops[i].arg == arg)
            return &e->ops[i];
    return NULL;
}

/* Runs e on the caller's buffers (in the order of e->ops).  reuse, when
 * not NULL, is an operand of another entry whose inner buffer already
 * holds the input with reuse->arg converted to the same layout: e reads
 * it there instead of converting again. */
static yg_status execute(entry *e, void *const *bufs, pass what, const operand *reuse) {
    dnnl_exec_arg_t args[4];
    dnnl_status_t s = dnnl_success;

    for (int i = 0; i < e->n_ops && s == dnnl_success; i++) {
        operand *o = &e->ops[i];
        s = dnnl_memory_set_data_handle(o->user, bufs[i]);
        args[i].arg = o->arg;
        args[i].memory = o->inner != NULL ? o->inner : o->user;
        if (reuse != NULL && o->arg == reuse->arg && o->inner != NULL) {
            args[i].memory = reuse->inner;
            continue;
        }
        if (s == dnnl_success && o->inner != NULL && !o->out) {
            dnnl_exec_arg_t r[2] = {{DNNL_ARG_FROM, o->user}, {DNNL_ARG_TO, o->inner}};
            s = dnnl_primitive_execute(o->move, stream, 2, r);
        }
    }
    if (s == dnnl_success)
        s = dnnl_primitive_execute(e->prim, stream, e->n_ops, args);
    for (int i = 0; i < e->n_ops && s == dnnl_success; i++) {
        operand *o = &e->ops[i];
        if (o->inner != NULL && o->out) {
            dnnl_exec_arg_t r[2] = {{DNNL_ARG_FROM, o->inner}, {DNNL_ARG_TO, o->user}};
            s = dnnl_primitive_execute(o->move, stream, 2, r);
        }
    }
    if (s == dnnl_success)
        s = dnnl_stream_wait(stream);
    return s == dnnl_success ? YG_OK : fail(s, pass_names[what]);
}

static yg_status run(const yg_conv_params *p, pass what, bool bias, void *const *bufs) {
    entry *e = NULL;
    yg_status st;

    pthread_once(&once, init);
    if (init_status != dnnl_success)
        return fail(init_status, "engine");
    pthread_mutex_lock(&lock);
    st = lookup(p, what, bias, &e);
    if (st == YG_OK)
        st = execute(e, bufs, what, NULL);
    pthread_mutex_unlock(&lock);
    return st;
}

static yg_status onednn_forward(const yg_conv_params *p,
                                  const void *x,
                                  const void *w,
                                  const void *bias,
                                  void *y) {
    void *bufs[] = {(void *)x, (void *)w, y, (void *)bias};
    return run(p, PASS_FORWARD, bias != NULL, bufs);
}

static yg_status onednn_data(const yg_conv_params *p,
                               const void *y,
                               const void *w,
                               const void *bias,
                               void *x) {
    void *bufs[] = {(void *)y, (void *)w, x};
    int64_t pos = p->x[0] * p->x[1] * p->x[2];

    YG_RETURN_IF_ERROR(run(p, PASS_DATA, false, bufs));
    if (bias == NULL)
        return YG_OK;
    /* oneDNN's data gradient has no bias: the transposed forward's, here */
    for (int64_t n = 0; n < p->batch; n++)
        for (int64_t c = 0; c < p->cx; c++) {
            float *r = (float *)x + (n * p->cx + c) * pos, b = ((const float *)bias)[c];
            for (int64_t i = 0; i < pos; i++)
                r[i] += b;
        }
    return YG_OK;
}

static yg_status onednn_weight(const yg_conv_params *p, const void *y, const void *x, void *w) {
    void *bufs[] = {(void *)x, (void *)y, w};
    return run(p, PASS_WEIGHT, false, bufs);
}

/* Whether operands a and b both convert into one layout. */
static bool same_layout(const operand *a, const operand *b) {
    const dnnl_memory_desc_t *ma = NULL, *mb = NULL;
    return a != NULL && b != NULL && a->inner != NULL && b->inner != NULL &&
           dnnl_memory_get_memory_desc(a->inner, &ma) == dnnl_success &&
           dnnl_memory_get_memory_desc(b->inner, &mb) == dnnl_success &&
           dnnl_memory_desc_equal(ma, mb);
}

/* Both gradients under one hold of the lock: the weight pass reads the
 * data pass's conversion of y (diff_dst) when both chose one layout, so y
 * is converted once instead of twice. */
static yg_status onednn_backward(
    const yg_conv_params *p, const void *y, const void *x, const void *w, void *gx, void *gw) {
    void *dbufs[] = {(void *)y, (void *)w, gx}, *wbufs[] = {(void *)x, (void *)y, gw};
    entry *de = NULL, *we = NULL;
    yg_status st;

    pthread_once(&once, init);
    if (init_status != dnnl_success)
        return fail(init_status, "engine");
    pthread_mutex_lock(&lock);
    st = lookup(p, PASS_DATA, false, &de);
    if (st == YG_OK) /* de was just used: the lookup cannot evict it */
        st = lookup(p, PASS_WEIGHT, false, &we);
    if (st == YG_OK)
        st = execute(de, dbufs, PASS_DATA, NULL);
    if (st == YG_OK) {
        const operand *dy = operand_of(de, DNNL_ARG_DIFF_DST);
        st = execute(we, wbufs, PASS_WEIGHT, same_layout(dy, operand_of(we, DNNL_ARG_DIFF_DST)) ? dy : NULL);
    }
    pthread_mutex_unlock(&lock);
    return st;
}

const yg_conv_impl yg__conv_onednn = {
    .device = YG_CPU,
    .refuses = onednn_refuses,
    .forward = onednn_forward,
    .data = onednn_data,
    .weight = onednn_weight,
    .backward = onednn_backward,
};
