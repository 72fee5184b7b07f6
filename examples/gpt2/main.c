/*
 * main.c - the gpt2 program: train, check and sample the GPT-2 model of
 * gpt2.h.
 *
 *   gpt2 train  [model options] [data options] [training options]
 *   gpt2 check  [model options] [data options] --out GRADS.safetensors
 *   gpt2 sample [model options] [--prompt TEXT | --prompt-tokens 1,2,3]
 *               [--tokens N] [--temperature T] [--top-k K] [--seed S]
 *               [--tokenizer gpt2_tokenizer.bin]
 *
 * Model: --preset gpt2-124m | gpt2-bytes (the default) | gpt2-tiny, then
 * --layers, --channels, --heads, --vocab, --context override its fields;
 * --dtype f32 (default) | f64; --seed S (initialisation, default 1337);
 * --load CKPT starts from a checkpoint (gpt2_save's, or a released
 * model.safetensors) instead.
 *
 * Data: --data FILE (a token file of the C GPT-2 trainers: 256 int32
 * header, uint16 tokens) with --val-data FILE, or --text PATH (a file or
 * folder, one token per byte; default /usr/share/common-licenses, the
 * license texts of Debian's essential base-files package).  Without
 * --val-data the last 10% of the tokens validate.  Batches are B rows of
 * T + 1 consecutive tokens taken in order through the training tokens
 * (a row's inputs are its first T tokens, its targets the last T), so a
 * step's batch depends only on the step number.
 *
 * Training: --batch B (4) --seq T (64) --steps N (50) --accum K (1, micro
 * batches per step, their gradients summed: the loss of each is divided
 * by K) --lr (6e-4, the peak) --warmup W (10 steps, linear from lr / W)
 * then cosine to --min-lr-frac (0.1) of the peak at the last step;
 * AdamW (beta 0.9, 0.95, eps 1e-8) with --weight-decay (0.1) on the
 * matrices and embeddings only; gradients clipped to global norm --clip
 * (1.0).  --val-every N steps (and after the last) the mean loss over
 * --val-batches batches of the validation tokens is printed next to the
 * unigram baseline (the validation targets' loss under the training
 * tokens' add-one-smoothed frequencies).  --save CKPT writes
 * the model and optimizer state after the last step, and every
 * --save-every N steps; --resume CKPT continues a run saved so, given the
 * same options (the next loss is bit for bit the one an uninterrupted run
 * gets).  --svg FILE plots the loss curves.  Exits 0
 * when the final validation loss is below --max-ratio (1) times the
 * baseline, 2 when it is not, 1 on an error.
 *
 * Check: one forward and backward on the first training batch; prints
 * the loss to 17 significant digits and writes every parameter's
 * gradient (under the parameter's name), the tokens ("tokens", int64) and
 * the loss ("loss") to --out, and with --params-out the parameters, so
 * another framework can compare.
 *
 * Sample: a byte-level model (vocabulary 256) reads --prompt as text and
 * prints bytes; another prints token ids, or, with --tokenizer (the C
 * GPT-2 trainers' decoding table, for the released model), their text.
 *
 * --json (train, sample) ends the output with one JSON line for
 * bench/compare_gpt2.py: the median step time after the first two steps,
 * or the tokens/s of sampling after the prompt.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "gpt2.h"

#include "yagrad/jit.h"
#include "yagrad/safetensors.h"

#include "../word_lm.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define DEFAULT_TEXT "/usr/share/common-licenses"

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        yg_status st_ = (expr);                                                                    \
        if (st_ != YG_OK) {                                                                        \
            fprintf(stderr, "gpt2: %s: %s\n", yg_status_name(st_), yg_last_error());               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

void wl_die(const char *fmt, const char *arg) {
    fprintf(stderr, "gpt2: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    exit(1);
}

void *wl_xmalloc(size_t n) {
    void *p = malloc(n > 0 ? n : 1);
    if (p == NULL)
        wl_die("out of memory%s", "");
    return p;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct options {
    const char *preset, *load, *data, *val_data, *text, *save, *resume, *svg, *out, *params_out;
    const char *prompt, *prompt_tokens, *tokenizer;
    gpt2_config cfg;
    yg_dtype dtype;
    uint64_t seed;
    bool json, executor;
    int64_t batch, seq, steps, accum, warmup, val_every, val_batches, tokens, top_k, save_every;
    double lr, min_lr_frac, weight_decay, clip, max_ratio, temperature;
} options;

static int64_t int_arg(const char *flag, const char *v) {
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno != 0 || *end != '\0' || x < 0)
        wl_die("bad value for an integer option: %s", v);
    (void)flag;
    return x;
}

static double num_arg(const char *v) {
    char *end;
    double x = strtod(v, &end);
    if (*end != '\0' || !isfinite(x) || x < 0)
        wl_die("bad value for a number option: %s", v);
    return x;
}

static void usage(void) {
    fprintf(stderr,
            "usage: gpt2 train|check|sample [options]  (see examples/gpt2/main.c or README.md)\n");
    exit(1);
}

static void parse(int argc, char **argv, options *o) {
    gpt2_config over = {-1, -1, -1, -1, -1};
    *o = (options){.preset = "gpt2-bytes",
                   .dtype = YG_FLOAT32,
                   .seed = 1337,
                   .batch = 4,
                   .seq = 64,
                   .steps = 50,
                   .accum = 1,
                   .warmup = 10,
                   .val_every = 25,
                   .val_batches = 8,
                   .tokens = 64,
                   .top_k = 40,
                   .lr = 6e-4,
                   .min_lr_frac = 0.1,
                   .weight_decay = 0.1,
                   .clip = 1.0,
                   .max_ratio = 1.0,
                   .temperature = 1.0};
    for (int i = 2; i < argc; i++) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define STR(name, field)                                                                           \
    if (strcmp(f, name) == 0) {                                                                    \
        if (v == NULL)                                                                             \
            wl_die("%s needs a value", f);                                                         \
        o->field = v;                                                                              \
        i++;                                                                                       \
        continue;                                                                                  \
    }
#define INT(name, field)                                                                           \
    if (strcmp(f, name) == 0) {                                                                    \
        if (v == NULL)                                                                             \
            wl_die("%s needs a value", f);                                                         \
        field = int_arg(f, v);                                                                     \
        i++;                                                                                       \
        continue;                                                                                  \
    }
#define NUM(name, field)                                                                           \
    if (strcmp(f, name) == 0) {                                                                    \
        if (v == NULL)                                                                             \
            wl_die("%s needs a value", f);                                                         \
        o->field = num_arg(v);                                                                     \
        i++;                                                                                       \
        continue;                                                                                  \
    }
        STR("--preset", preset)
        STR("--load", load)
        STR("--data", data)
        STR("--val-data", val_data)
        STR("--text", text)
        STR("--save", save)
        STR("--resume", resume)
        STR("--svg", svg)
        STR("--out", out)
        STR("--params-out", params_out)
        STR("--prompt", prompt)
        STR("--prompt-tokens", prompt_tokens)
        STR("--tokenizer", tokenizer)
        INT("--layers", over.layers)
        INT("--channels", over.channels)
        INT("--heads", over.heads)
        INT("--vocab", over.vocab)
        INT("--context", over.context)
        INT("--batch", o->batch)
        INT("--seq", o->seq)
        INT("--steps", o->steps)
        INT("--accum", o->accum)
        INT("--warmup", o->warmup)
        INT("--val-every", o->val_every)
        INT("--val-batches", o->val_batches)
        INT("--tokens", o->tokens)
        INT("--save-every", o->save_every)
        INT("--top-k", o->top_k)
        NUM("--lr", lr)
        NUM("--min-lr-frac", min_lr_frac)
        NUM("--weight-decay", weight_decay)
        NUM("--clip", clip)
        NUM("--max-ratio", max_ratio)
        NUM("--temperature", temperature)
        if (strcmp(f, "--seed") == 0 && v != NULL) {
            o->seed = (uint64_t)int_arg(f, v);
            i++;
            continue;
        }
        if (strcmp(f, "--executor") == 0) {
            o->executor = true;
            continue;
        }
        if (strcmp(f, "--json") == 0) {
            o->json = true;
            continue;
        }
        if (strcmp(f, "--dtype") == 0 && v != NULL) {
            if (strcmp(v, "f32") != 0 && strcmp(v, "f64") != 0)
                wl_die("--dtype takes f32 or f64, not %s", v);
            o->dtype = strcmp(v, "f64") == 0 ? YG_FLOAT64 : YG_FLOAT32;
            i++;
            continue;
        }
        wl_die("unknown option %s", f);
    }
    if (!gpt2_preset(o->preset, &o->cfg))
        wl_die("unknown preset %s (gpt2-124m, gpt2-bytes, gpt2-tiny)", o->preset);
    int64_t *dst[5] = {&o->cfg.layers, &o->cfg.channels, &o->cfg.heads, &o->cfg.vocab, &o->cfg.context};
    int64_t src[5] = {over.layers, over.channels, over.heads, over.vocab, over.context};
    for (int k = 0; k < 5; k++)
        if (src[k] >= 0)
            *dst[k] = src[k];
    if (o->batch < 1 || o->seq < 1 || o->accum < 1)
        wl_die("--batch, --seq and --accum must be at least 1%s", "");
}

/* ---- data ---- */

typedef struct dataset {
    gpt2_tokens train, val;
} dataset;

static void load_data(const options *o, int64_t n_vocab, dataset *d) {
    gpt2_tokens all = {0};
    if (o->data != NULL) {
        CHECK(gpt2_tokens_read(o->data, &all));
    } else {
        CHECK(gpt2_tokens_from_text(o->text != NULL ? o->text : DEFAULT_TEXT, &all));
    }
    if (o->val_data != NULL) {
        d->train = all;
        CHECK(gpt2_tokens_read(o->val_data, &d->val));
    } else {
        int64_t nv = all.n / 10;
        d->train.n = all.n - nv;
        d->train.ids = all.ids;
        d->val.n = nv;
        d->val.ids = wl_xmalloc((size_t)nv * sizeof *d->val.ids);
        memcpy(d->val.ids, all.ids + d->train.n, (size_t)nv * sizeof *d->val.ids);
    }
    for (int s = 0; s < 2; s++) {
        const gpt2_tokens *t = s == 0 ? &d->train : &d->val;
        for (int64_t i = 0; i < t->n; i++)
            if (t->ids[i] >= n_vocab) {
                char msg[96];
                snprintf(msg, sizeof msg, "token %u at %lld", t->ids[i], (long long)i);
                wl_die("%s is outside the model's vocabulary (use --vocab or another --preset)", msg);
            }
    }
}

static int by_asc(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

/* Batch k of B rows of T + 1 tokens from t: inputs and targets [B, T]. */
static void batch_at(const gpt2_tokens *t, int64_t k, int64_t B, int64_t T, yg_tensor **x, yg_tensor **y) {
    int64_t per = (t->n - 1) / (B * T);
    if (per < 1)
        wl_die("%s", "the data holds fewer tokens than one batch (lower --batch or --seq)");
    int64_t base = (k % per) * B * T;
    int64_t *xs = wl_xmalloc((size_t)(B * T) * sizeof *xs), *ys = wl_xmalloc((size_t)(B * T) * sizeof *ys);
    for (int64_t i = 0; i < B * T; i++) {
        xs[i] = t->ids[base + i];
        ys[i] = t->ids[base + i + 1];
    }
    const int64_t s[2] = {B, T};
    CHECK(yg_tensor_from_data(xs, s, 2, YG_INT64, x));
    CHECK(yg_tensor_from_data(ys, s, 2, YG_INT64, y));
    free(xs);
    free(ys);
}

/* Loss of the validation targets under the training tokens' add-one
 * unigram frequencies, over the positions the model predicts. */
static double unigram_loss(const dataset *d, int64_t n_vocab, int64_t B, int64_t T, int64_t batches) {
    double *count = calloc((size_t)n_vocab, sizeof *count), sum = 0;
    for (int64_t i = 0; i < d->train.n; i++)
        count[d->train.ids[i]] += 1;
    int64_t per = (d->val.n - 1) / (B * T), n = 0;
    for (int64_t k = 0; k < batches && k < per; k++)
        for (int64_t i = 0; i < B * T; i++, n++)
            sum -= log((count[d->val.ids[k * B * T + i + 1]] + 1) / ((double)d->train.n + (double)n_vocab));
    free(count);
    return sum / (double)n;
}

static double val_loss(gpt2 *m, const dataset *d, const options *o) {
    int64_t per = (d->val.n - 1) / (o->batch * o->seq), nb = o->val_batches < per ? o->val_batches : per;
    double sum = 0;
    bool prev = yg_set_grad_enabled(false);
    for (int64_t k = 0; k < nb; k++) {
        yg_tensor *x, *y, *loss;
        double v;
        batch_at(&d->val, k, o->batch, o->seq, &x, &y);
        CHECK(gpt2_forward(m, x, y, NULL, &loss));
        CHECK(yg_tensor_item(loss, &v));
        sum += v;
        yg_release(x);
        yg_release(y);
        yg_release(loss);
    }
    yg_set_grad_enabled(prev);
    return sum / (double)nb;
}

/* ---- the executor path ---- */

/* The loss of tokens inputs[0] predicting inputs[1], as a yg_trace_fn
 * (ctx: the model). */
static yg_status loss_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    (void)n_in;
    (void)n_out;
    return gpt2_forward(ctx, in[0], in[1], NULL, out);
}

typedef struct runner {
    gpt2 *m;
    yg_trace_result *trace; /* --executor: the traced loss */
    yg_executor *exec;
} runner;

/* The loss of x predicting y: eagerly, or through the executor (traced
 * on the first call). */
static yg_tensor *run_loss(runner *r, yg_tensor *x, yg_tensor *y) {
    yg_tensor *loss = NULL;
    if (r->exec == NULL && r->trace == NULL) {
        CHECK(gpt2_forward(r->m, x, y, NULL, &loss));
        return loss;
    }
    int64_t n = 2 + r->trace->n_params;
    yg_tensor **in = wl_xmalloc((size_t)n * sizeof *in);
    in[0] = x;
    in[1] = y;
    for (int64_t p = 0; p < r->trace->n_params; p++)
        in[2 + p] = r->trace->params[p];
    CHECK(yg_executor_run(r->exec, in, n, &loss, 1));
    free(in);
    return loss;
}

static void runner_trace(runner *r, yg_tensor *x, yg_tensor *y) {
    yg_tensor *in[2] = {x, y};
    CHECK(yg_trace(loss_fn, r->m, in, 2, 1, NULL, &r->trace));
    CHECK(yg_executor_create(r->trace->graph, NULL, &r->exec));
    yg_release(r->trace->outputs[0]); /* the eager loss of the trace */
    r->trace->outputs[0] = NULL;
}

static void runner_release(runner *r) {
    yg_executor_release(r->exec);
    yg_trace_result_release(r->trace);
}

/* ---- train ---- */

/* The learning rate of step s (from 0) of n. */
static double lr_at(const options *o, int64_t s) {
    if (s < o->warmup)
        return o->lr * (double)(s + 1) / (double)o->warmup;
    double span = (double)(o->steps - o->warmup), frac = span > 0 ? (double)(s - o->warmup) / span : 1;
    double min = o->lr * o->min_lr_frac;
    return min + 0.5 * (o->lr - min) * (1 + cos(3.14159265358979323846 * frac));
}

static double peak_rss_mb(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

static int train(const options *o) {
    gpt2 *m = NULL;
    yg_optimizer *opt = NULL;
    dataset d = {0};
    int64_t start = 0;
    curve tc = {0}, vc = {0};

    if (o->resume != NULL)
        CHECK(gpt2_load(o->resume, o->dtype, o->cfg.heads, &m, &start));
    else if (o->load != NULL)
        CHECK(gpt2_load(o->load, o->dtype, o->cfg.heads, &m, NULL));
    else
        CHECK(gpt2_create(&o->cfg, o->dtype, o->seed, &m));
    const gpt2_config *c = gpt2_get_config(m);
    if (o->seq > c->context)
        wl_die("%s", "--seq is longer than the model's context");
    load_data(o, c->vocab, &d);

    /* one AdamW over every parameter; the weight decay of each is its
     * group's (decay on matrices and embeddings only) */
    int64_t np = gpt2_num_params(m);
    yg_adam_options ao = {.lr = o->lr, .beta1 = 0.9, .beta2 = 0.95, .eps = 1e-8, .weight_decay = o->weight_decay};
    double *decay = wl_xmalloc((size_t)np * sizeof *decay);
    for (int64_t i = 0; i < np; i++)
        decay[i] = gpt2_param_decays(m, i) ? o->weight_decay : 0;
    CHECK(yg_optimizer_create_adamw(gpt2_params(m), np, &ao, &opt));
    for (int64_t i = 0; i < np; i++)
        CHECK(yg_optimizer_set_param_weight_decay(opt, i, decay[i]));
    free(decay);
    if (o->resume != NULL)
        CHECK(gpt2_load_optimizer(o->resume, m, opt));

    double base = unigram_loss(&d, c->vocab, o->batch, o->seq, o->val_batches), final_val = INFINITY;
    int64_t ntok = o->batch * o->seq * o->accum, nparams = 0;
    for (int64_t i = 0; i < np; i++)
        nparams += yg_tensor_numel(gpt2_params(m)[i]);
    printf("gpt2: %lld layers, %lld channels, %lld heads, vocabulary %lld (padded %lld), context %lld; "
           "%lld parameters; %lld train / %lld validation tokens\n",
           (long long)c->layers,
           (long long)c->channels,
           (long long)c->heads,
           (long long)c->vocab,
           (long long)gpt2_padded_vocab(c),
           (long long)c->context,
           (long long)nparams,
           (long long)d.train.n,
           (long long)d.val.n);
    printf("unigram baseline: validation loss %.4f\n", base);
    fflush(stdout);
    runner run = {.m = m};
    if (o->executor) {
        yg_tensor *x, *y;
        batch_at(&d.train, 0, o->batch, o->seq, &x, &y);
        runner_trace(&run, x, y);
        yg_release(x);
        yg_release(y);
    }
    double t_all = 0, *times = wl_xmalloc((size_t)(o->steps - start + 1) * sizeof *times);
    int64_t n_times = 0;
    for (int64_t s = start; s < o->steps; s++) {
        double t0 = now(), loss_sum = 0, norm = 0;
        yg_optimizer_zero_grad(opt);
        for (int64_t a = 0; a < o->accum; a++) {
            yg_tensor *x, *y, *loss, *scaled;
            double v;
            batch_at(&d.train, s * o->accum + a, o->batch, o->seq, &x, &y);
            loss = run_loss(&run, x, y);
            CHECK(yg_tensor_item(loss, &v));
            loss_sum += v;
            CHECK(yg_div_scalar(loss, (double)o->accum, &scaled));
            CHECK(yg_backward(scaled, NULL, false));
            yg_release(scaled);
            yg_release(loss);
            yg_release(x);
            yg_release(y);
        }
        /* clipping folded into the step: no pass over the gradients */
        CHECK(yg_grad_norm(gpt2_params(m), np, &norm));
        CHECK(yg_optimizer_set_grad_scale(opt, fmin(1, o->clip / (norm + 1e-6))));
        double lr = lr_at(o, s);
        CHECK(yg_optimizer_set_lr(opt, lr));
        CHECK(yg_optimizer_step(opt));
        double ms = 1e3 * (now() - t0), loss = loss_sum / (double)o->accum;
        if (s > start)
            t_all += ms;
        times[n_times++] = ms;
        printf("step %4lld/%lld: loss %.4f  lr %.3e  norm %.3f  %.1f ms  %.0f tokens/s\n",
               (long long)s + 1,
               (long long)o->steps,
               loss,
               lr,
               norm,
               ms,
               (double)ntok / (ms / 1e3));
        fflush(stdout);
        wl_curve_add(&tc, (double)(s + 1), loss);
        if (o->save != NULL && o->save_every > 0 && (s + 1) % o->save_every == 0 && s + 1 < o->steps)
            CHECK(gpt2_save(m, opt, s + 1, o->save));
        if ((o->val_every > 0 && (s + 1) % o->val_every == 0) || s + 1 == o->steps) {
            final_val = val_loss(m, &d, o);
            wl_curve_add(&vc, (double)(s + 1), final_val);
            printf("step %4lld: validation loss %.4f (unigram %.4f)\n", (long long)s + 1, final_val, base);
        }
    }
    if (start >= o->steps) { /* resumed at its end: nothing to train, still report */
        final_val = val_loss(m, &d, o);
        printf("step %4lld: validation loss %.4f (unigram %.4f)\n", (long long)start, final_val, base);
    }
    if (o->steps - start > 1)
        printf("mean step %.1f ms (after the first), peak RSS %.1f MB\n",
               t_all / (double)(o->steps - start - 1),
               peak_rss_mb());
    if (o->json && n_times > 0) {
        /* the median after the first two steps (allocations, first use) */
        int64_t skip = n_times > 2 ? 2 : 0;
        qsort(times + skip, (size_t)(n_times - skip), sizeof *times, by_asc);
        printf("{\"bench\":\"gpt2_step\",\"impl\":\"yagrad\",\"median_ms\":%.2f,\"steps\":%lld}\n",
               times[skip + (n_times - skip) / 2],
               (long long)n_times);
    }
    free(times);
    if (o->executor) {
        yg_executor_stats es = yg_executor_get_stats(run.exec);
        printf("executor: %lld runs, %lld plans built\n", (long long)es.runs, (long long)es.misses);
    }
    runner_release(&run);
    if (o->save != NULL) {
        CHECK(gpt2_save(m, opt, o->steps, o->save));
        printf("saved %s\n", o->save);
    }
    if (o->svg != NULL && tc.n > 0 && !wl_write_svg(o->svg, "gpt2", &tc, &vc, base, "step", o->steps))
        return 1;
    int rc = final_val < o->max_ratio * base ? 0 : 2;
    printf("final: validation loss %.4f, unigram %.4f: %s\n", final_val, base, rc == 0 ? "below" : "NOT below");
    free(tc.x), free(tc.y), free(vc.x), free(vc.y);
    gpt2_tokens_free(&d.train);
    gpt2_tokens_free(&d.val);
    yg_optimizer_release(opt);
    gpt2_release(m);
    return rc;
}

/* ---- check ---- */

static int check(const options *o) {
    gpt2 *m = NULL;
    dataset d = {0};
    yg_tensor *x, *y, *loss;
    double v;

    if (o->out == NULL)
        wl_die("%s", "check needs --out GRADS.safetensors");
    if (o->load != NULL)
        CHECK(gpt2_load(o->load, o->dtype, o->cfg.heads, &m, NULL));
    else
        CHECK(gpt2_create(&o->cfg, o->dtype, o->seed, &m));
    load_data(o, gpt2_get_config(m)->vocab, &d);
    batch_at(&d.train, 0, o->batch, o->seq, &x, &y);
    CHECK(gpt2_forward(m, x, y, NULL, &loss));
    CHECK(yg_backward(loss, NULL, false));
    CHECK(yg_tensor_item(loss, &v));
    printf("loss %.17g\n", v);

    int64_t np = gpt2_num_params(m), n = np + 3;
    const char **names = wl_xmalloc((size_t)n * sizeof *names);
    yg_tensor **ts = wl_xmalloc((size_t)n * sizeof *ts);
    for (int64_t i = 0; i < np; i++) {
        names[i] = gpt2_param_name(m, i);
        CHECK(yg_tensor_grad(gpt2_params(m)[i], &ts[i]));
        if (ts[i] == NULL)
            wl_die("parameter %s has no gradient", names[i]);
    }
    names[np] = "tokens", ts[np] = yg_retain(x);
    names[np + 1] = "targets", ts[np + 1] = yg_retain(y);
    names[np + 2] = "loss", ts[np + 2] = yg_retain(loss);
    CHECK(yg_safetensors_save(o->out, names, ts, n, NULL, NULL, 0));
    printf("wrote %lld gradients to %s\n", (long long)np, o->out);
    if (o->params_out != NULL) {
        CHECK(gpt2_save(m, NULL, 0, o->params_out));
        printf("wrote the parameters to %s\n", o->params_out);
    }
    for (int64_t i = 0; i < n; i++)
        yg_release(ts[i]);
    free(ts);
    free(names);
    yg_release(x);
    yg_release(y);
    yg_release(loss);
    gpt2_tokens_free(&d.train);
    gpt2_tokens_free(&d.val);
    gpt2_release(m);
    return 0;
}

/* ---- sample ---- */

/* splitmix64: the sampler's generator (seeded by --seed). */
static uint64_t next_u64(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int by_desc(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* A token from logits[0..V) (the padding is never looked at): softmax of
 * logits / temperature over the top_k largest (0: all), or the argmax
 * for temperature 0. */
static int64_t pick(const float *logits, int64_t V, double temperature, int64_t top_k, uint64_t *rng, double *work) {
    int64_t best = 0;
    for (int64_t i = 1; i < V; i++)
        if (logits[i] > logits[best])
            best = i;
    if (temperature == 0)
        return best;
    double cut = -INFINITY;
    if (top_k > 0 && top_k < V) {
        for (int64_t i = 0; i < V; i++)
            work[i] = logits[i];
        qsort(work, (size_t)V, sizeof *work, by_desc);
        cut = work[top_k - 1];
    }
    double sum = 0;
    for (int64_t i = 0; i < V; i++) {
        work[i] = logits[i] >= cut ? exp(((double)logits[i] - logits[best]) / temperature) : 0;
        sum += work[i];
    }
    double r = (double)(next_u64(rng) >> 11) * 0x1.0p-53 * sum;
    for (int64_t i = 0; i < V; i++) {
        r -= work[i];
        if (r < 0)
            return i;
    }
    return best;
}

static int sample(const options *o) {
    gpt2 *m = NULL;
    gpt2_cache *cache = NULL;
    int64_t *prompt = NULL, np = 0;
    uint64_t rng = o->seed;
    gpt2_tokenizer tok = {.eot = -1};

    if (o->load != NULL)
        CHECK(gpt2_load(o->load, YG_FLOAT32, o->cfg.heads, &m, NULL));
    else
        CHECK(gpt2_create(&o->cfg, YG_FLOAT32, o->seed, &m));
    const gpt2_config *c = gpt2_get_config(m);
    bool bytes = c->vocab == 256; /* a byte-level model: tokens are bytes */
    if (o->prompt_tokens != NULL) {
        const char *s = o->prompt_tokens;
        prompt = wl_xmalloc((strlen(s) / 2 + 2) * sizeof *prompt);
        while (*s) {
            char *end;
            long long t = strtoll(s, &end, 10);
            if (end == s || t < 0 || t >= c->vocab)
                wl_die("bad --prompt-tokens (comma-separated ids below the vocabulary): %s", o->prompt_tokens);
            prompt[np++] = t;
            s = *end == ',' ? end + 1 : end;
            if (*end != ',' && *end != '\0')
                wl_die("bad --prompt-tokens: %s", o->prompt_tokens);
        }
    } else {
        const char *s = o->prompt != NULL ? o->prompt : "\n";
        if (!bytes)
            wl_die("%s", "--prompt is text, for byte-level models; give --prompt-tokens to this model");
        prompt = wl_xmalloc((strlen(s) + 1) * sizeof *prompt);
        for (; *s; s++)
            prompt[np++] = (unsigned char)*s;
    }
    if (np < 1 || np + o->tokens > c->context) {
        char msg[160];
        snprintf(msg,
                 sizeof msg,
                 "a prompt of %lld tokens and --tokens %lld do not fit the model's context of %lld",
                 (long long)np,
                 (long long)o->tokens,
                 (long long)c->context);
        wl_die("%s", msg);
    }
    if (o->tokenizer != NULL) {
        CHECK(gpt2_tokenizer_read(o->tokenizer, &tok));
        if (tok.n < c->vocab)
            wl_die("%s", "the tokenizer has fewer tokens than the model's vocabulary");
        for (int64_t i = 0; i < np; i++)
            fwrite(tok.bytes[prompt[i]], 1, tok.len[prompt[i]], stdout);
    } else if (bytes) {
        fwrite(o->prompt != NULL ? o->prompt : "", 1, o->prompt != NULL ? strlen(o->prompt) : 0, stdout);
    }

    CHECK(gpt2_cache_create(m, 1, &cache));
    double *work = wl_xmalloc((size_t)c->vocab * sizeof *work), t_gen = 0;
    const int64_t ps[2] = {1, np};
    yg_tensor *in, *logits, *lc;
    CHECK(yg_tensor_from_data(prompt, ps, 2, YG_INT64, &in));
    for (int64_t k = 0; k < o->tokens; k++) {
        double t0 = now();
        CHECK(gpt2_forward_cached(m, cache, in, &logits));
        CHECK(yg_contiguous(logits, &lc));
        int64_t next = pick((const float *)yg_tensor_data(lc), c->vocab, o->temperature, o->top_k, &rng, work);
        if (k > 0)
            t_gen += now() - t0; /* the first call reads the whole prompt */
        yg_release(in);
        yg_release(logits);
        yg_release(lc);
        const int64_t s1[2] = {1, 1};
        CHECK(yg_tensor_from_data(&next, s1, 2, YG_INT64, &in));
        if (tok.bytes != NULL)
            fwrite(tok.bytes[next], 1, tok.len[next], stdout);
        else if (bytes)
            putchar((int)next);
        else
            printf("%s%lld", k > 0 ? "," : "", (long long)next);
        fflush(stdout);
    }
    yg_release(in);
    printf("\n");
    if (o->tokens > 1)
        fprintf(stderr,
                "gpt2: %lld tokens, %.1f tokens/s (after the prompt)\n",
                (long long)o->tokens,
                (double)(o->tokens - 1) / t_gen);
    if (o->json && o->tokens > 1)
        printf("{\"bench\":\"gpt2_sample\",\"impl\":\"yagrad\",\"tokens_per_s\":%.2f}\n",
               (double)(o->tokens - 1) / t_gen);
    free(work);
    free(prompt);
    gpt2_tokenizer_free(&tok);
    gpt2_cache_release(cache);
    gpt2_release(m);
    return 0;
}

int main(int argc, char **argv) {
    options o;
    if (argc < 2)
        usage();
    parse(argc, argv, &o);
    if (strcmp(argv[1], "train") == 0)
        return train(&o);
    if (strcmp(argv[1], "check") == 0)
        return check(&o);
    if (strcmp(argv[1], "sample") == 0)
        return sample(&o);
    usage();
    return 1;
}
