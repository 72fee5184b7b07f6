/*
 * checkpoint.c - the model's checkpoints as safetensors files
 * (yagrad/safetensors.h) in the released GPT-2 checkpoints' layout: the
 * tensor names of gpt2_param_name, linear weights [in, out], the token
 * embedding [vocab, C] without the padding rows.  gpt2_save adds
 * metadata ("format": "pt", as the released files have, the config and
 * the training step) and, for resuming, the optimizer's state:
 * "optimizer.<state>.<param>" (PyTorch's state names, exp_avg and
 * exp_avg_sq for AdamW; the token embedding's with its padding rows,
 * which stay 0) and "optimizer.steps" (int64, one per parameter).
 */
#include "gpt2.h"

#include "yagrad/safetensors.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONFIG_KEY "yagrad.gpt2.config"
#define STEP_KEY   "yagrad.gpt2.step"
#define MAX_STATES 2

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        st = (expr);                                                                               \
        if (st != YG_OK)                                                                           \
            goto done;                                                                             \
    } while (0)

yg_status gpt2_save(const gpt2 *m, const yg_optimizer *opt, int64_t step, const char *path) {
    const gpt2_config *c = gpt2_get_config(m);
    int64_t np = gpt2_num_params(m), n = 0, cap = np * (1 + MAX_STATES) + 1;
    const char *state_names[MAX_STATES];
    int ns = opt != NULL ? yg_optimizer_state_names(opt, state_names) : 0;
    const char **names = calloc((size_t)cap, sizeof *names);
    char **owned = calloc((size_t)cap, sizeof *owned);
    yg_tensor **ts = calloc((size_t)cap, sizeof *ts);
    int64_t *steps = calloc((size_t)np + 1, sizeof *steps);
    char config[160], stepbuf[32];
    yg_status st = YG_OK;

    if (names == NULL || owned == NULL || ts == NULL || steps == NULL) {
        st = yg_set_error(YG_ERR_OUT_OF_MEMORY, "gpt2_save: out of memory");
        goto done;
    }
    for (int64_t i = 0; i < np; i++) {
        yg_tensor *p = gpt2_params(m)[i];
        names[n] = gpt2_param_name(m, i);
        if (i == 0) /* wte without its padding rows */
            TRY(yg_narrow(p, 0, 0, c->vocab, &ts[n]));
        else
            ts[n] = yg_retain(p);
        n++;
    }
    for (int64_t i = 0; i < np && ns > 0; i++) {
        yg_tensor *state[MAX_STATES];
        TRY(yg_optimizer_get_state(opt, i, &steps[i], state));
        for (int k = 0; k < ns; k++) {
            if (state[k] == NULL)
                continue;
            size_t len = strlen(state_names[k]) + strlen(gpt2_param_name(m, i)) + 16;
            owned[n] = malloc(len);
            if (owned[n] == NULL) {
                for (int j = k; j < ns; j++)
                    yg_release(state[j]);
                st = yg_set_error(YG_ERR_OUT_OF_MEMORY, "gpt2_save: out of memory");
                goto done;
            }
            snprintf(owned[n], len, "optimizer.%s.%s", state_names[k], gpt2_param_name(m, i));
            names[n] = owned[n];
            ts[n++] = state[k];
        }
    }
    if (ns > 0) {
        names[n] = "optimizer.steps";
        TRY(yg_tensor_from_data(steps, &np, 1, YG_INT64, &ts[n]));
        n++;
    }
    snprintf(config,
             sizeof config,
             "layers=%" PRId64 " channels=%" PRId64 " heads=%" PRId64 " vocab=%" PRId64
             " context=%" PRId64,
             c->layers,
             c->channels,
             c->heads,
             c->vocab,
             c->context);
    snprintf(stepbuf, sizeof stepbuf, "%" PRId64, step);
    {
        const char *keys[3] = {"format", CONFIG_KEY, STEP_KEY};
        const char *values[3] = {"pt", config, stepbuf};
        TRY(yg_safetensors_save(path, names, ts, n, keys, values, 3));
    }
done:
    for (int64_t i = 0; i < cap && ts != NULL; i++) {
        yg_release(ts[i]);
        free(owned[i]);
    }
    free(names);
    free(owned);
    free(ts);
    free(steps);
    return st;
}

/* The tensor's name in f: as given, or under "transformer." (the prefix of
 * some released files); NULL when neither exists. */
static const char *find(const yg_safetensors *f, const char *name, char *buf, size_t len) {
    yg_safetensors_info info;
    if (yg_safetensors_info_of(f, name, &info) == YG_OK)
        return name;
    snprintf(buf, len, "transformer.%s", name);
    if (yg_safetensors_info_of(f, buf, &info) == YG_OK)
        return buf;
    return NULL;
}

/* Reads tensor name of f into dst (converting from the file's dtype). */
static yg_status read_param(const yg_safetensors *f, const char *path, const char *name, yg_tensor *dst) {
    char buf[160];
    const char *key = find(f, name, buf, sizeof buf);
    yg_safetensors_info info;
    yg_tensor *t = NULL, *r = NULL;
    yg_status st;

    if (key == NULL)
        return yg_set_error(YG_ERR_INDEX, "gpt2_load: %s has no tensor %s", path, name);
    TRY(yg_safetensors_info_of(f, key, &info));
    if (info.dtype_supported && info.dtype == yg_tensor_dtype(dst))
        return yg_safetensors_read_into(f, key, dst);
    TRY(yg_safetensors_get(f, key, &t));
    bool prev = yg_set_grad_enabled(false);
    st = yg_copy_(dst, t, &r);
    yg_set_grad_enabled(prev);
done:
    yg_release(t);
    yg_release(r);
    return st;
}

/* The config: from the metadata gpt2_save writes, else from the shapes. */
static yg_status config_of(const yg_safetensors *f, const char *path, int64_t heads_hint, gpt2_config *c) {
    const char *meta = yg_safetensors_metadata(f, CONFIG_KEY);
    char buf[160];
    yg_safetensors_info wte, wpe, info;
    long long v[5];

    if (meta != NULL) {
        if (sscanf(meta, "layers=%lld channels=%lld heads=%lld vocab=%lld context=%lld", &v[0], &v[1], &v[2], &v[3], &v[4]) != 5)
            return yg_set_error(YG_ERR_INVALID_ARGUMENT, "gpt2_load: %s: bad %s metadata \"%s\"", path, CONFIG_KEY, meta);
        *c = (gpt2_config){v[0], v[1], v[2], v[3], v[4]};
        return gpt2_config_check(c);
    }
    const char *k1 = find(f, "wte.weight", buf, sizeof buf);
    if (k1 == NULL || yg_safetensors_info_of(f, k1, &wte) != YG_OK || wte.ndim != 2)
        return yg_set_error(YG_ERR_SHAPE, "gpt2_load: %s has no 2-d wte.weight", path);
    const char *k2 = find(f, "wpe.weight", buf, sizeof buf);
    if (k2 == NULL || yg_safetensors_info_of(f, k2, &wpe) != YG_OK || wpe.ndim != 2)
        return yg_set_error(YG_ERR_SHAPE, "gpt2_load: %s has no 2-d wpe.weight", path);
    c->vocab = wte.sizes[0];
    c->channels = wte.sizes[1];
    c->context = wpe.sizes[0];
    c->heads = heads_hint > 0 ? heads_hint : 12;
    c->layers = 0;
    for (;;) {
        char name[64];
        snprintf(name, sizeof name, "h.%lld.ln_1.weight", (long long)c->layers);
        const char *k = find(f, name, buf, sizeof buf);
        if (k == NULL || yg_safetensors_info_of(f, k, &info) != YG_OK)
            break;
        c->layers++;
    }
    return gpt2_config_check(c);
}

yg_status gpt2_load(const char *path, yg_dtype dtype, int64_t heads_hint, gpt2 **model, int64_t *step) {
    yg_safetensors *f = NULL;
    gpt2 *m = NULL;
    gpt2_config c;
    yg_tensor *wte = NULL;
    yg_status st;

    *model = NULL;
    if (step != NULL)
        *step = 0;
    TRY(yg_safetensors_open(path, &f));
    TRY(config_of(f, path, heads_hint, &c));
    TRY(gpt2_create_zeros(&c, dtype, &m));
    for (int64_t i = 0; i < gpt2_num_params(m); i++) {
        yg_tensor *dst = gpt2_params(m)[i];
        if (i == 0) { /* the file's rows; the padding stays 0 */
            TRY(yg_narrow(dst, 0, 0, c.vocab, &wte));
            dst = wte;
        }
        TRY(read_param(f, path, gpt2_param_name(m, i), dst));
    }
    if (step != NULL) {
        const char *s = yg_safetensors_metadata(f, STEP_KEY);
        *step = s != NULL ? strtoll(s, NULL, 10) : 0;
    }
    *model = m;
    m = NULL;
done:
    yg_release(wte);
    gpt2_release(m);
    yg_safetensors_close(f);
    return st;
}

yg_status gpt2_load_optimizer(const char *path, const gpt2 *m, yg_optimizer *opt) {
    yg_safetensors *f = NULL;
    yg_tensor *steps = NULL;
    const char *state_names[MAX_STATES];
    int ns = yg_optimizer_state_names(opt, state_names);
    int64_t np = gpt2_num_params(m);
    yg_status st;

    TRY(yg_safetensors_open(path, &f));
    st = yg_safetensors_get(f, "optimizer.steps", &steps);
    if (st != YG_OK) {
        st = yg_set_error(st, "gpt2_load_optimizer: %s holds no optimizer state (%s)", path, yg_last_error());
        goto done;
    }
    if (yg_tensor_ndim(steps) != 1 || yg_tensor_size(steps, 0) != np || yg_tensor_dtype(steps) != YG_INT64) {
        st = yg_set_error(YG_ERR_SHAPE, "gpt2_load_optimizer: %s: optimizer.steps is not %lld int64", path, (long long)np);
        goto done;
    }
    for (int64_t i = 0; i < np; i++) {
        yg_tensor *state[MAX_STATES] = {NULL, NULL};
        for (int k = 0; k < ns && st == YG_OK; k++) {
            char name[160];
            yg_safetensors_info info;
            snprintf(name, sizeof name, "optimizer.%s.%s", state_names[k], gpt2_param_name(m, i));
            if (yg_safetensors_info_of(f, name, &info) == YG_OK)
                st = yg_safetensors_get(f, name, &state[k]);
        }
        if (st == YG_OK)
            st = yg_optimizer_set_state(opt, i, ((const int64_t *)yg_tensor_data(steps))[i], (const yg_tensor *const *)state);
        for (int k = 0; k < MAX_STATES; k++)
            yg_release(state[k]);
        if (st != YG_OK)
            goto done;
    }
done:
    yg_release(steps);
    yg_safetensors_close(f);
    return st;
}
