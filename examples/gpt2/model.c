#define _POSIX_C_SOURCE 200809L /* strdup */

/*
 * model.c - the GPT-2 model of gpt2.h: parameters, initialisation, the
 * training forward pass and the cached forward pass of sampling.  Both
 * passes run the same block code; the cached one writes each layer's new
 * keys and values into the cache and attends over everything it holds.
 *
 * Every function follows the library's failure guarantee: the first
 * failing call's status is returned (its message stays in
 * yg_last_error()), the references taken so far are released at `done`.
 */
#include "gpt2.h"

#include "yagrad/random.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parameters per block, in the released checkpoints' order. */
enum {
    LN1_W,
    LN1_B,
    ATTN_W,
    ATTN_B,
    ATTN_PROJ_W,
    ATTN_PROJ_B,
    LN2_W,
    LN2_B,
    FC_W,
    FC_B,
    FC_PROJ_W,
    FC_PROJ_B,
    PER_BLOCK
};

static const char *const block_names[PER_BLOCK] = {
    "ln_1.weight",
    "ln_1.bias",
    "attn.c_attn.weight",
    "attn.c_attn.bias",
    "attn.c_proj.weight",
    "attn.c_proj.bias",
    "ln_2.weight",
    "ln_2.bias",
    "mlp.c_fc.weight",
    "mlp.c_fc.bias",
    "mlp.c_proj.weight",
    "mlp.c_proj.bias",
};

#define WTE     0
#define WPE     1
#define BLOCK0  2
#define LNF_W(m) (BLOCK0 + PER_BLOCK * (m)->cfg.layers)
#define LNF_B(m) (LNF_W(m) + 1)

struct gpt2 {
    gpt2_config cfg;
    yg_dtype dtype;
    int64_t vp; /* padded vocabulary */
    int64_t n;  /* parameters */
    yg_tensor **p;
    char **names;
};

struct gpt2_cache {
    int64_t batch, length, layers;
    yg_tensor **k, **v; /* per layer [B, H, context, D] */
};

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        st = (expr);                                                                               \
        if (st != YG_OK)                                                                           \
            goto done;                                                                             \
    } while (0)

/* Releases *t and stores v in it: the chains below reuse one variable. */
static void set(yg_tensor **t, yg_tensor *v) {
    yg_release(*t);
    *t = v;
}

bool gpt2_preset(const char *name, gpt2_config *out) {
    static const struct {
        const char *name;
        gpt2_config c;
    } presets[] = {
        {"gpt2-124m", {12, 768, 12, 50257, 1024}},
        {"gpt2-bytes", {4, 128, 4, 256, 128}},
        {"gpt2-tiny", {2, 64, 4, 97, 16}},
    };
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(name, presets[i].name) == 0) {
            *out = presets[i].c;
            return true;
        }
    return false;
}

int64_t gpt2_padded_vocab(const gpt2_config *c) {
    return (c->vocab + 63) / 64 * 64;
}

yg_status gpt2_config_check(const gpt2_config *c) {
    const char *bad = c->layers < 1                                             ? "layers"
                      : c->heads < 1                                            ? "heads"
                      : c->channels < 1 || c->channels % c->heads != 0          ? "channels"
                      : c->vocab < 2 || c->vocab > 65535 * 64                   ? "vocab"
                      : c->context < 1                                          ? "context"
                                                                                : NULL;
    if (bad == NULL)
        return YG_OK;
    return yg_set_error(YG_ERR_INVALID_ARGUMENT,
                        "gpt2: bad config %s (layers %lld, channels %lld, heads %lld, vocab "
                        "%lld, context %lld; channels must be a multiple of heads)",
                        bad,
                        (long long)c->layers,
                        (long long)c->channels,
                        (long long)c->heads,
                        (long long)c->vocab,
                        (long long)c->context);
}

/* The shape of parameter i: 2-d matrices [in, out], 1-d vectors. */
static int64_t param_shape(const gpt2 *m, int64_t i, int64_t *shape) {
    int64_t C = m->cfg.channels;
    if (i == WTE) {
        shape[0] = m->vp, shape[1] = C;
        return 2;
    }
    if (i == WPE) {
        shape[0] = m->cfg.context, shape[1] = C;
        return 2;
    }
    if (i >= LNF_W(m)) {
        shape[0] = C;
        return 1;
    }
    switch ((i - BLOCK0) % PER_BLOCK) {
    case ATTN_W: shape[0] = C, shape[1] = 3 * C; return 2;
    case ATTN_B: shape[0] = 3 * C; return 1;
    case ATTN_PROJ_W: shape[0] = C, shape[1] = C; return 2;
    case FC_W: shape[0] = C, shape[1] = 4 * C; return 2;
    case FC_B: shape[0] = 4 * C; return 1;
    case FC_PROJ_W: shape[0] = 4 * C, shape[1] = C; return 2;
    default: shape[0] = C; return 1;
    }
}

bool gpt2_param_decays(const gpt2 *m, int64_t i) {
    int64_t shape[2];
    return param_shape(m, i, shape) == 2;
}

/* The initial value of parameter i (see gpt2_create); zeros without a
 * generator. */
static yg_status init_param(gpt2 *m, int64_t i, yg_generator *gen, yg_tensor **out) {
    int64_t shape[2], nd = param_shape(m, i, shape);
    int64_t k = i >= BLOCK0 && i < LNF_W(m) ? (i - BLOCK0) % PER_BLOCK : -1;
    yg_tensor *t = NULL;
    yg_status st;

    *out = NULL;
    if (gen == NULL)
        return yg_tensor_zeros(shape, nd, m->dtype, out);
    if (nd == 1) {
        bool one = i == LNF_W(m) || k == LN1_W || k == LN2_W;
        return yg_tensor_full(shape, 1, one ? 1 : 0, m->dtype, out);
    }
    double std = 0.02;
    if (k == ATTN_PROJ_W || k == FC_PROJ_W)
        std /= sqrt(2.0 * (double)m->cfg.layers);
    TRY(yg_randn(shape, 2, gen, &m->dtype, NULL, &t));
    TRY(yg_mul_scalar_(t, std, out));
    yg_release(*out);
    if (i == WTE && m->vp > m->cfg.vocab) {
        yg_tensor *pad = NULL;
        TRY(yg_narrow(t, 0, m->cfg.vocab, m->vp - m->cfg.vocab, &pad));
        st = yg_fill_(pad, 0, out);
        yg_release(pad);
        yg_release(*out);
        if (st != YG_OK)
            goto done;
    }
    *out = t;
    t = NULL;
done:
    yg_release(t);
    if (st != YG_OK)
        *out = NULL;
    return st;
}

/* gpt2_create, with GPT-2's initialisation when init, else zeros. */
static yg_status create(const gpt2_config *config, yg_dtype dtype, uint64_t seed, bool init, gpt2 **out) {
    yg_generator *gen = NULL;
    gpt2 *m = NULL;
    yg_status st;

    *out = NULL;
    TRY(gpt2_config_check(config));
    if (dtype != YG_FLOAT32 && dtype != YG_FLOAT64)
        return yg_set_error(YG_ERR_DTYPE, "gpt2: the model's dtype must be float32 or float64");
    m = calloc(1, sizeof *m);
    if (m == NULL)
        return yg_set_error(YG_ERR_OUT_OF_MEMORY, "gpt2: out of memory");
    m->cfg = *config;
    m->dtype = dtype;
    m->vp = gpt2_padded_vocab(config);
    m->n = BLOCK0 + PER_BLOCK * config->layers + 2;
    m->p = calloc((size_t)m->n, sizeof *m->p);
    m->names = calloc((size_t)m->n, sizeof *m->names);
    if (m->p == NULL || m->names == NULL) {
        st = yg_set_error(YG_ERR_OUT_OF_MEMORY, "gpt2: out of memory");
        goto done;
    }
    for (int64_t i = 0; i < m->n; i++) {
        char name[64];
        if (i == WTE || i == WPE)
            snprintf(name, sizeof name, "%s", i == WTE ? "wte.weight" : "wpe.weight");
        else if (i >= LNF_W(m))
            snprintf(name, sizeof name, "%s", i == LNF_W(m) ? "ln_f.weight" : "ln_f.bias");
        else
            snprintf(name,
                     sizeof name,
                     "h.%lld.%s",
                     (long long)((i - BLOCK0) / PER_BLOCK),
                     block_names[(i - BLOCK0) % PER_BLOCK]);
        m->names[i] = strdup(name);
        if (m->names[i] == NULL) {
            st = yg_set_error(YG_ERR_OUT_OF_MEMORY, "gpt2: out of memory");
            goto done;
        }
    }
    if (init)
        TRY(yg_generator_create(seed, &gen));
    for (int64_t i = 0; i < m->n; i++) {
        TRY(init_param(m, i, gen, &m->p[i]));
        TRY(yg_tensor_set_requires_grad(m->p[i], true));
    }
    *out = m;
    m = NULL;
done:
    yg_generator_release(gen);
    gpt2_release(m);
    return st;
}

yg_status gpt2_create(const gpt2_config *config, yg_dtype dtype, uint64_t seed, gpt2 **out) {
    return create(config, dtype, seed, true, out);
}

yg_status gpt2_create_zeros(const gpt2_config *config, yg_dtype dtype, gpt2 **out) {
    return create(config, dtype, 0, false, out);
}

void gpt2_release(gpt2 *m) {
    if (m == NULL)
        return;
    for (int64_t i = 0; i < m->n; i++) {
        if (m->p != NULL)
            yg_release(m->p[i]);
        if (m->names != NULL)
            free(m->names[i]);
    }
    free(m->p);
    free(m->names);
    free(m);
}

const gpt2_config *gpt2_get_config(const gpt2 *m) {
    return &m->cfg;
}

int64_t gpt2_num_params(const gpt2 *m) {
    return m->n;
}

yg_tensor *const *gpt2_params(const gpt2 *m) {
    return m->p;
}

const char *gpt2_param_name(const gpt2 *m, int64_t i) {
    return i >= 0 && i < m->n ? m->names[i] : NULL;
}

/* x [N, in] @ w [in, out] + b */
static yg_status linear(const yg_tensor *x, const yg_tensor *w, const yg_tensor *b, yg_tensor **out) {
    return yg_addmm(b, x, w, 1, 1, out);
}

/* Causal self-attention of block l over x2 [B*T, C] (T new positions);
 * with a cache, the keys and values of positions before them come from
 * it and the new ones are appended.  out: [B*T, C] before c_proj. */
static yg_status attention(gpt2 *m,
                           yg_tensor *const *bp,
                           const yg_tensor *x2,
                           int64_t B,
                           int64_t T,
                           gpt2_cache *cache,
                           int64_t l,
                           yg_tensor **out) {
    int64_t C = m->cfg.channels, H = m->cfg.heads, D = C / H;
    yg_tensor *qkv = NULL, *q = NULL, *k = NULL, *v = NULL, *y = NULL, *t = NULL, *mask = NULL;
    yg_tensor *part[3] = {NULL, NULL, NULL};
    yg_status st;

    *out = NULL;
    TRY(linear(x2, bp[ATTN_W], bp[ATTN_B], &qkv));
    {
        /* [B*T, 3C] -> [B, T, 3, H, D] -> [3, B, H, T, D] */
        const int64_t s5[5] = {B, T, 3, H, D}, perm[5] = {2, 0, 3, 1, 4};
        TRY(yg_view(qkv, s5, 5, &t));
        set(&qkv, t);
        t = NULL;
        TRY(yg_permute(qkv, perm, 5, &t));
        set(&qkv, t);
        t = NULL;
        for (int i = 0; i < 3; i++)
            TRY(yg_select(qkv, 0, i, &part[i]));
    }
    q = part[0];
    k = part[1];
    v = part[2];
    bool causal = true;
    if (cache != NULL) {
        /* append, then attend over the cache's first length + T positions */
        int64_t len = cache->length;
        yg_tensor *dst = NULL;
        for (int i = 0; i < 2; i++) {
            yg_tensor *c = i == 0 ? cache->k[l] : cache->v[l];
            TRY(yg_narrow(c, 2, len, T, &dst));
            st = yg_copy_(dst, i == 0 ? k : v, &t);
            yg_release(dst);
            set(&t, NULL);
            if (st != YG_OK)
                goto done;
        }
        TRY(yg_narrow(cache->k[l], 2, 0, len + T, &k));
        TRY(yg_narrow(cache->v[l], 2, 0, len + T, &v));
        if (len > 0 && T == 1) {
            causal = false; /* one new query sees every cached key */
        } else if (len > 0) {
            /* query i (position len + i) sees keys j <= len + i */
            size_t n = (size_t)(T * (len + T));
            bool *keep = malloc(n);
            if (keep == NULL) {
                st = yg_set_error(YG_ERR_OUT_OF_MEMORY, "gpt2: out of memory");
                goto done;
            }
            for (int64_t i = 0; i < T; i++)
                for (int64_t j = 0; j < len + T; j++)
                    keep[i * (len + T) + j] = j <= len + i;
            const int64_t ms[2] = {T, len + T};
            st = yg_tensor_from_data(keep, ms, 2, YG_BOOL, &mask);
            free(keep);
            if (st != YG_OK)
                goto done;
            causal = false;
        }
    }
    TRY(yg_scaled_dot_product_attention(q, k, v, mask, causal, NULL, &y));
    {
        /* [B, H, T, D] -> [B, T, H, D] -> [B*T, C] */
        const int64_t s2[2] = {B * T, C};
        TRY(yg_transpose(y, 1, 2, &t));
        set(&y, t);
        t = NULL;
        TRY(yg_reshape(y, s2, 2, out));
    }
done:
    if (cache != NULL) {
        yg_release(k);
        yg_release(v);
    }
    for (int i = 0; i < 3; i++)
        yg_release(part[i]);
    yg_release(qkv);
    yg_release(y);
    yg_release(t);
    yg_release(mask);
    return st;
}

/* Block l: x [B*T, C] -> out [B*T, C]. */
static yg_status block(gpt2 *m,
                       int64_t l,
                       const yg_tensor *x,
                       int64_t B,
                       int64_t T,
                       gpt2_cache *cache,
                       yg_tensor **out) {
    yg_tensor *const *bp = m->p + BLOCK0 + PER_BLOCK * l;
    const int64_t C = m->cfg.channels;
    yg_tensor *h = NULL, *a = NULL, *r = NULL, *t = NULL;
    yg_status st;

    *out = NULL;
    TRY(yg_layer_norm(x, &C, 1, bp[LN1_W], bp[LN1_B], 1e-5, &h));
    TRY(attention(m, bp, h, B, T, cache, l, &a));
    TRY(linear(a, bp[ATTN_PROJ_W], bp[ATTN_PROJ_B], &t));
    TRY(yg_add(x, t, 1, &r));
    set(&t, NULL);
    set(&h, NULL);
    TRY(yg_layer_norm(r, &C, 1, bp[LN2_W], bp[LN2_B], 1e-5, &h));
    TRY(linear(h, bp[FC_W], bp[FC_B], &t));
    set(&h, t);
    t = NULL;
    TRY(yg_gelu_tanh(h, &t));
    set(&h, t);
    t = NULL;
    TRY(linear(h, bp[FC_PROJ_W], bp[FC_PROJ_B], &t));
    TRY(yg_add(r, t, 1, out));
done:
    yg_release(h);
    yg_release(a);
    yg_release(r);
    yg_release(t);
    return st;
}

/* Checks tokens [B, T] (int64, T + pos0 <= context). */
static yg_status check_tokens(const gpt2 *m, const yg_tensor *t, const char *what, int64_t pos0) {
    if (yg_tensor_ndim(t) != 2 || yg_tensor_dtype(t) != YG_INT64)
        return yg_set_error(YG_ERR_SHAPE,
                            "gpt2: %s must be a [batch, time] int64 tensor, got %lld dims of %s",
                            what,
                            (long long)yg_tensor_ndim(t),
                            yg_dtype_name(yg_tensor_dtype(t)));
    if (yg_tensor_size(t, 1) < 1 || pos0 + yg_tensor_size(t, 1) > m->cfg.context)
        return yg_set_error(YG_ERR_SHAPE,
                            "gpt2: %lld %s at position %lld do not fit the context of %lld",
                            (long long)yg_tensor_size(t, 1),
                            what,
                            (long long)pos0,
                            (long long)m->cfg.context);
    return YG_OK;
}

/* The body shared by both passes: tokens [B, T] at positions pos0.. ->
 * logits [B*T, Vp] (or of the last position only), padding columns -inf. */
static yg_status run(gpt2 *m,
                     const yg_tensor *tokens,
                     int64_t pos0,
                     gpt2_cache *cache,
                     bool last_only,
                     yg_tensor **logits) {
    int64_t B = yg_tensor_size(tokens, 0), T = yg_tensor_size(tokens, 1), C = m->cfg.channels;
    yg_tensor *te = NULL, *pos = NULL, *pe = NULL, *x = NULL, *t = NULL, *wt = NULL, *pad = NULL;
    yg_status st;

    *logits = NULL;
    TRY(yg_embedding(m->p[WTE], tokens, -1, &te));
    {
        yg_dtype i64 = YG_INT64;
        TRY(yg_arange_start(
            (double)pos0, (double)(pos0 + T), 1, &i64, NULL, &pos)); /* positions */
    }
    TRY(yg_embedding(m->p[WPE], pos, -1, &pe));
    TRY(yg_add(te, pe, 1, &t)); /* [B, T, C] + [T, C] */
    {
        const int64_t s2[2] = {B * T, C};
        TRY(yg_view(t, s2, 2, &x));
        set(&t, NULL);
    }
    for (int64_t l = 0; l < m->cfg.layers; l++) {
        TRY(block(m, l, x, B, T, cache, &t));
        set(&x, t);
        t = NULL;
    }
    if (last_only) {
        const int64_t s3[3] = {B, T, C};
        TRY(yg_view(x, s3, 3, &t));
        set(&x, t);
        t = NULL;
        TRY(yg_select(x, 1, T - 1, &t));
        set(&x, t);
        t = NULL;
    }
    TRY(yg_layer_norm(x, &C, 1, m->p[LNF_W(m)], m->p[LNF_B(m)], 1e-5, &t));
    set(&x, t);
    t = NULL;
    TRY(yg_transpose(m->p[WTE], 0, 1, &wt));
    TRY(yg_matmul(x, wt, &t));
    if (m->vp > m->cfg.vocab) {
        yg_tensor *r = NULL;
        TRY(yg_narrow(t, 1, m->cfg.vocab, m->vp - m->cfg.vocab, &pad));
        TRY(yg_fill_(pad, -INFINITY, &r));
        yg_release(r);
    }
    *logits = t;
    t = NULL;
done:
    yg_release(te);
    yg_release(pos);
    yg_release(pe);
    yg_release(x);
    yg_release(t);
    yg_release(wt);
    yg_release(pad);
    return st;
}

yg_status gpt2_forward(gpt2 *m,
                       const yg_tensor *tokens,
                       const yg_tensor *targets,
                       yg_tensor **logits,
                       yg_tensor **loss) {
    yg_tensor *lg = NULL, *tg = NULL;
    yg_status st;

    if (logits != NULL)
        *logits = NULL;
    if (loss != NULL)
        *loss = NULL;
    TRY(check_tokens(m, tokens, "tokens", 0));
    if (loss != NULL) {
        if (targets == NULL)
            return yg_set_error(YG_ERR_INVALID_ARGUMENT, "gpt2: a loss needs targets");
        TRY(check_tokens(m, targets, "targets", 0));
        if (yg_tensor_size(targets, 0) != yg_tensor_size(tokens, 0) ||
            yg_tensor_size(targets, 1) != yg_tensor_size(tokens, 1))
            return yg_set_error(YG_ERR_SHAPE,
                                "gpt2: targets [%lld, %lld] do not match tokens [%lld, %lld]",
                                (long long)yg_tensor_size(targets, 0),
                                (long long)yg_tensor_size(targets, 1),
                                (long long)yg_tensor_size(tokens, 0),
                                (long long)yg_tensor_size(tokens, 1));
    }
    TRY(run(m, tokens, 0, NULL, false, &lg));
    if (loss != NULL) {
        const int64_t n = yg_tensor_numel(targets);
        TRY(yg_reshape(targets, &n, 1, &tg));
        TRY(yg_cross_entropy(lg, tg, NULL, YG_REDUCTION_MEAN, -100, loss));
    }
    if (logits != NULL) {
        const int64_t s3[3] = {yg_tensor_size(tokens, 0), yg_tensor_size(tokens, 1), m->vp};
        TRY(yg_view(lg, s3, 3, logits));
    }
done:
    yg_release(lg);
    yg_release(tg);
    if (st != YG_OK) {
        if (logits != NULL)
            set(logits, NULL);
        if (loss != NULL)
            set(loss, NULL);
    }
    return st;
}

/* ---- the key/value cache ---- */

yg_status gpt2_cache_create(const gpt2 *m, int64_t batch, gpt2_cache **out) {
    int64_t H = m->cfg.heads, D = m->cfg.channels / H, L = m->cfg.layers;
    const int64_t shape[4] = {batch, H, m->cfg.context, D};
    gpt2_cache *c;
    yg_status st = YG_OK;

    *out = NULL;
    if (batch < 1)
        return yg_set_error(YG_ERR_INVALID_ARGUMENT, "gpt2: a cache for batch %lld", (long long)batch);
    c = calloc(1, sizeof *c);
    if (c == NULL || (c->k = calloc((size_t)L, sizeof *c->k)) == NULL ||
        (c->v = calloc((size_t)L, sizeof *c->v)) == NULL) {
        if (c != NULL)
            free(c->k);
        free(c);
        return yg_set_error(YG_ERR_OUT_OF_MEMORY, "gpt2: out of memory");
    }
    c->batch = batch;
    c->layers = L;
    for (int64_t l = 0; l < L && st == YG_OK; l++) {
        st = yg_tensor_empty(shape, 4, m->dtype, &c->k[l]);
        if (st == YG_OK)
            st = yg_tensor_empty(shape, 4, m->dtype, &c->v[l]);
    }
    if (st != YG_OK) {
        for (int64_t l = 0; l < L; l++) {
            yg_release(c->k[l]);
            yg_release(c->v[l]);
        }
        free(c->k);
        free(c->v);
        free(c);
        return st;
    }
    *out = c;
    return YG_OK;
}

void gpt2_cache_release(gpt2_cache *c) {
    if (c == NULL)
        return;
    for (int64_t l = 0; l < c->layers; l++) {
        yg_release(c->k[l]);
        yg_release(c->v[l]);
    }
    free(c->k);
    free(c->v);
    free(c);
}

int64_t gpt2_cache_length(const gpt2_cache *c) {
    return c->length;
}

yg_status gpt2_forward_cached(gpt2 *m, gpt2_cache *c, const yg_tensor *tokens, yg_tensor **logits) {
    yg_status st;
    bool prev;

    *logits = NULL;
    TRY(check_tokens(m, tokens, "tokens", c->length));
    if (yg_tensor_size(tokens, 0) != c->batch)
        return yg_set_error(YG_ERR_SHAPE,
                            "gpt2: tokens of batch %lld for a cache of batch %lld",
                            (long long)yg_tensor_size(tokens, 0),
                            (long long)c->batch);
    prev = yg_set_grad_enabled(false);
    st = run(m, tokens, c->length, c, true, logits);
    yg_set_grad_enabled(prev);
    if (st == YG_OK)
        c->length += yg_tensor_size(tokens, 1);
done:
    return st;
}
