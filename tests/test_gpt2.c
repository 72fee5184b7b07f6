/*
 * test_gpt2.c - the GPT-2 model of examples/gpt2 (compiled in): the key
 * and value cache gives the logits of the full forward pass; a
 * checkpoint resumes training bit for bit; files in the released
 * checkpoints' layout load; token files round trip; and bad tokens,
 * checkpoints and token files are refused with messages that name the
 * problem.  (The loss and gradients against NumPy: tests/gpt2/
 * reference.py; training: the example.gpt2_* tests.)
 */
#define _POSIX_C_SOURCE 200809L /* truncate */

#include "testutil.h"

#include "gpt2/gpt2.h"
#include "yagrad/jit.h"
#include "yagrad/safetensors.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static gpt2 *tiny(yg_dtype dtype) {
    gpt2_config c;
    gpt2 *m = NULL;
    assert_true(gpt2_preset("gpt2-tiny", &c));
    YG_CHECK(gpt2_create(&c, dtype, 11, &m));
    return m;
}

/* [B, T] tokens (int64) from a simple sequence below vocab. */
static yg_tensor *tokens(int64_t B, int64_t T, int64_t vocab, int64_t salt) {
    int64_t *v = malloc((size_t)(B * T) * sizeof *v);
    yg_tensor *t = NULL;
    for (int64_t i = 0; i < B * T; i++)
        v[i] = (i * 37 + salt * 11 + 5) % vocab;
    const int64_t s[2] = {B, T};
    YG_CHECK(yg_tensor_from_data(v, s, 2, YG_INT64, &t));
    free(v);
    return t;
}

static char *temp_path(const char *name) {
    static char buf[4][256];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 256, "/tmp/yg_test_gpt2_%d_%s", (int)getpid(), name);
    return p;
}

/* Logits of the cached passes (a prompt, single tokens, a chunk of two
 * after a prefix: the masked case) equal the full pass's at the same
 * positions. */
static void test_kv_cache_gives_the_full_forward_logits(void **state) {
    gpt2 *m = tiny(YG_FLOAT64);
    const gpt2_config *c = gpt2_get_config(m);
    int64_t Vp = gpt2_padded_vocab(c), T = 10;
    yg_tensor *all = tokens(1, T, c->vocab, 1), *full = NULL, *fc = NULL;
    gpt2_cache *cache = NULL;
    const int64_t chunks[] = {4, 1, 1, 2, 1, 1};
    int64_t pos = 0;
    (void)state;
    YG_CHECK(gpt2_forward(m, all, NULL, &full, NULL));
    YG_CHECK(yg_contiguous(full, &fc));
    const double *fv = yg_tensor_data(fc);
    YG_CHECK(gpt2_cache_create(m, 1, &cache));
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        yg_tensor *part = NULL, *lg = NULL, *lc = NULL;
        YG_CHECK(yg_narrow(all, 1, pos, chunks[k], &part));
        YG_CHECK(gpt2_forward_cached(m, cache, part, &lg));
        pos += chunks[k];
        assert_int_equal(gpt2_cache_length(cache), pos);
        YG_CHECK(yg_contiguous(lg, &lc));
        const double *lv = yg_tensor_data(lc);
        double worst = 0;
        for (int64_t v = 0; v < Vp; v++) {
            double want = fv[(pos - 1) * Vp + v];
            if (v >= c->vocab)
                assert_true(isinf(lv[v]) && lv[v] < 0 && isinf(want));
            else
                worst = fmax(worst, fabs(lv[v] - want));
        }
        if (worst > 1e-12)
            fail_msg("chunk %zu: cached logits differ from the full pass by %g", k, worst);
        yg_release(part);
        yg_release(lg);
        yg_release(lc);
    }
    /* the cache is full to 10 of 16: 7 more do not fit */
    yg_tensor *more = tokens(1, 7, c->vocab, 2), *lg = NULL;
    YG_EXPECT_ERROR(gpt2_forward_cached(m, cache, more, &lg), YG_ERR_SHAPE, "7 tokens at position 10",
                    "context of 16");
    assert_null(lg);
    yg_release(more);
    gpt2_cache_release(cache);
    yg_release(all);
    yg_release(full);
    yg_release(fc);
    gpt2_release(m);
}

/* One training step as the example takes it; returns the loss. */
static double train_step(gpt2 *m, yg_optimizer *opt, int64_t salt) {
    const gpt2_config *c = gpt2_get_config(m);
    yg_tensor *x = tokens(2, 8, c->vocab, salt), *y = tokens(2, 8, c->vocab, salt + 1), *loss = NULL;
    double v;
    yg_optimizer_zero_grad(opt);
    YG_CHECK(gpt2_forward(m, x, y, NULL, &loss));
    YG_CHECK(yg_tensor_item(loss, &v));
    YG_CHECK(yg_backward(loss, NULL, false));
    YG_CHECK(yg_clip_grad_norm(gpt2_params(m), gpt2_num_params(m), 1.0, NULL));
    YG_CHECK(yg_optimizer_step(opt));
    yg_release(x);
    yg_release(y);
    yg_release(loss);
    return v;
}

static yg_optimizer *adamw(gpt2 *m) {
    yg_adam_options o = {.lr = 1e-2, .beta1 = 0.9, .beta2 = 0.95, .eps = 1e-8, .weight_decay = 0.1};
    yg_optimizer *opt = NULL;
    YG_CHECK(yg_optimizer_create_adamw(gpt2_params(m), gpt2_num_params(m), &o, &opt));
    for (int64_t i = 0; i < gpt2_num_params(m); i++)
        YG_CHECK(yg_optimizer_set_param_weight_decay(opt, i, gpt2_param_decays(m, i) ? 0.1 : 0));
    return opt;
}

/* Saved after two steps and loaded (model and optimizer), the next two
 * losses are bit for bit those of the run that went on. */
static void test_checkpoint_resumes_training_bit_for_bit(void **state) {
    gpt2 *m = tiny(YG_FLOAT32), *r = NULL;
    yg_optimizer *opt = adamw(m), *ropt = NULL;
    const char *path = temp_path("resume.safetensors");
    int64_t step = -1;
    (void)state;
    train_step(m, opt, 0);
    train_step(m, opt, 1);
    YG_CHECK(gpt2_save(m, opt, 2, path));
    double a3 = train_step(m, opt, 2), a4 = train_step(m, opt, 3);
    YG_CHECK(gpt2_load(path, YG_FLOAT32, 0, &r, &step));
    assert_int_equal(step, 2);
    ropt = adamw(r);
    YG_CHECK(gpt2_load_optimizer(path, r, ropt));
    double b3 = train_step(r, ropt, 2), b4 = train_step(r, ropt, 3);
    assert_memory_equal(&a3, &b3, sizeof a3);
    assert_memory_equal(&a4, &b4, sizeof a4);
    /* the parameters after them too */
    for (int64_t i = 0; i < gpt2_num_params(m); i++) {
        yg_tensor *p = gpt2_params(m)[i], *q = gpt2_params(r)[i];
        assert_memory_equal(yg_tensor_data(p), yg_tensor_data(q), (size_t)yg_tensor_numel(p) * sizeof(float));
    }
    /* a model-only file has no optimizer state */
    YG_CHECK(gpt2_save(m, NULL, 0, path));
    YG_EXPECT_ERROR(gpt2_load_optimizer(path, r, ropt), YG_ERR_INDEX, "holds no optimizer state");
    unlink(path);
    yg_optimizer_release(opt);
    yg_optimizer_release(ropt);
    gpt2_release(m);
    gpt2_release(r);
}

/* A file laid out as the released model.safetensors ("transformer."
 * names in some copies, the token embedding [vocab, C] unpadded, causal
 * mask buffers "h.N.attn.bias", no metadata: the config from the shapes
 * and the heads given) loads and computes what the saved model does. */
static void test_a_released_style_file_loads(void **state) {
    gpt2 *m = tiny(YG_FLOAT32), *r = NULL;
    const gpt2_config *c = gpt2_get_config(m);
    int64_t n = gpt2_num_params(m);
    const char *path = temp_path("released.safetensors");
    char **names = calloc((size_t)n + 2, sizeof *names);
    yg_tensor **ts = calloc((size_t)n + 2, sizeof *ts);
    const int64_t mask_sizes[4] = {1, 1, c->context, c->context};
    (void)state;
    for (int64_t i = 0; i < n; i++) {
        names[i] = malloc(96);
        snprintf(names[i], 96, "transformer.%s", gpt2_param_name(m, i));
        if (i == 0)
            YG_CHECK(yg_narrow(gpt2_params(m)[0], 0, 0, c->vocab, &ts[i]));
        else
            ts[i] = yg_retain(gpt2_params(m)[i]);
    }
    for (int k = 0; k < 2; k++) {
        names[n + k] = malloc(96);
        snprintf(names[n + k], 96, "transformer.h.%d.attn.bias", k);
        YG_CHECK(yg_tensor_full(mask_sizes, 4, 1, YG_FLOAT32, &ts[n + k]));
    }
    YG_CHECK(yg_safetensors_save(path, (const char *const *)names, ts, n + 2, NULL, NULL, 0));
    YG_CHECK(gpt2_load(path, YG_FLOAT64, c->heads, &r, NULL));
    const gpt2_config *rc = gpt2_get_config(r);
    assert_int_equal(rc->layers, c->layers);
    assert_int_equal(rc->channels, c->channels);
    assert_int_equal(rc->vocab, c->vocab);
    assert_int_equal(rc->context, c->context);
    yg_tensor *x = tokens(2, 8, c->vocab, 3), *y = tokens(2, 8, c->vocab, 4), *la = NULL, *lb = NULL;
    double a, b;
    YG_CHECK(gpt2_forward(m, x, y, NULL, &la));
    YG_CHECK(gpt2_forward(r, x, y, NULL, &lb));
    YG_CHECK(yg_tensor_item(la, &a));
    YG_CHECK(yg_tensor_item(lb, &b));
    assert_true(fabs(a - b) < 1e-5); /* float32 model, float64 copy */
    yg_release(x);
    yg_release(y);
    yg_release(la);
    yg_release(lb);
    gpt2_release(r);
    r = NULL;

    /* a file missing a tensor, or with one of the wrong shape */
    free(names[n - 1]);
    names[n - 1] = malloc(96);
    snprintf(names[n - 1], 96, "transformer.ln_f.bias_renamed");
    YG_CHECK(yg_safetensors_save(path, (const char *const *)names, ts, n + 2, NULL, NULL, 0));
    YG_EXPECT_ERROR(gpt2_load(path, YG_FLOAT32, c->heads, &r, NULL), YG_ERR_INDEX, "has no tensor ln_f.bias");
    assert_null(r);
    snprintf(names[n - 1], 96, "transformer.ln_f.bias");
    yg_release(ts[n - 1]);
    const int64_t wrong[1] = {c->channels + 1};
    YG_CHECK(yg_tensor_zeros(wrong, 1, YG_FLOAT32, &ts[n - 1]));
    YG_CHECK(yg_safetensors_save(path, (const char *const *)names, ts, n + 2, NULL, NULL, 0));
    YG_EXPECT_ERROR(gpt2_load(path, YG_FLOAT32, c->heads, &r, NULL), YG_ERR_SHAPE, "ln_f.bias", "[65]", "[64]");
    assert_null(r);
    unlink(path);
    for (int64_t i = 0; i < n + 2; i++) {
        free(names[i]);
        yg_release(ts[i]);
    }
    free(names);
    free(ts);
    gpt2_release(m);
}

static yg_status loss_fn(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    (void)n_in;
    (void)n_out;
    return gpt2_forward(ctx, in[0], in[1], NULL, out);
}

/* The loss and every parameter gradient of c, for batch (x, y): eagerly
 * (e == NULL) or through the executor. */
static void loss_and_grads(gpt2 *m, yg_executor *e, yg_trace_result *tr, yg_tensor *x, yg_tensor *y,
                           double *loss, double **grads) {
    yg_tensor *l = NULL;
    for (int64_t i = 0; i < gpt2_num_params(m); i++)
        yg_tensor_zero_grad(gpt2_params(m)[i]);
    if (e == NULL) {
        YG_CHECK(gpt2_forward(m, x, y, NULL, &l));
    } else {
        yg_tensor *in[64] = {x, y};
        assert_true(tr->n_params + 2 <= 64);
        for (int64_t p = 0; p < tr->n_params; p++)
            in[2 + p] = tr->params[p];
        YG_CHECK(yg_executor_run(e, in, 2 + tr->n_params, &l, 1));
    }
    YG_CHECK(yg_tensor_item(l, loss));
    YG_CHECK(yg_backward(l, NULL, false));
    yg_release(l);
    for (int64_t i = 0; i < gpt2_num_params(m); i++) {
        yg_tensor *g = NULL;
        int64_t n = yg_tensor_numel(gpt2_params(m)[i]);
        YG_CHECK(yg_tensor_grad(gpt2_params(m)[i], &g));
        assert_non_null(g);
        grads[i] = malloc((size_t)n * sizeof **grads);
        YG_CHECK(yg_tensor_to_f64(g, grads[i], n));
        yg_release(g);
    }
}

/* The training loss traced once and run through the graph executor
 * (autodiff graphs, fusion) gives eager's loss and gradients, on the
 * traced batch and on another of its sizes.  (A traced graph holds its
 * sizes: another sequence length needs its own trace.) */
static void test_executor_gives_eager_loss_and_gradients(void **state) {
    gpt2 *m = tiny(YG_FLOAT64);
    int64_t np = gpt2_num_params(m), V = gpt2_get_config(m)->vocab;
    yg_trace_result *tr = NULL;
    yg_executor *e = NULL;
    double **ge = calloc((size_t)np, sizeof *ge), **gx = calloc((size_t)np, sizeof *gx);
    (void)state;
    yg_tensor *x = tokens(2, 8, V, 1), *y = tokens(2, 8, V, 2);
    yg_tensor *in[2] = {x, y};
    YG_CHECK(yg_trace(loss_fn, m, in, 2, 1, NULL, &tr));
    YG_CHECK(yg_executor_create(tr->graph, NULL, &e));
    for (int round = 0; round < 2; round++) {
        double le, lx;
        if (round == 1) { /* other tokens, the same plan */
            yg_release(x);
            yg_release(y);
            x = tokens(2, 8, V, 3);
            y = tokens(2, 8, V, 4);
        }
        loss_and_grads(m, NULL, NULL, x, y, &le, ge);
        loss_and_grads(m, e, tr, x, y, &lx, gx);
        if (fabs(le - lx) > 1e-12)
            fail_msg("round %d: loss %.17g eagerly, %.17g through the executor", round, le, lx);
        for (int64_t i = 0; i < np; i++) {
            double worst = 0;
            for (int64_t k = 0; k < yg_tensor_numel(gpt2_params(m)[i]); k++)
                worst = fmax(worst, fabs(ge[i][k] - gx[i][k]));
            if (worst > 1e-12)
                fail_msg("round %d: gradient of %s differs by %g", round, gpt2_param_name(m, i), worst);
            free(ge[i]);
            free(gx[i]);
        }
    }
    yg_executor_stats es = yg_executor_get_stats(e);
    assert_int_equal(es.runs, 2);
    assert_int_equal(es.misses, 1);
    free(ge);
    free(gx);
    yg_release(x);
    yg_release(y);
    yg_executor_release(e);
    yg_trace_result_release(tr);
    gpt2_release(m);
}

static void test_bad_tokens_are_refused_with_a_message(void **state) {
    gpt2 *m = tiny(YG_FLOAT32);
    yg_tensor *x = tokens(1, 17, 97, 0), *loss = NULL, *lg = NULL;
    gpt2_config bad = {2, 65, 4, 97, 16};
    gpt2 *none = NULL;
    (void)state;
    YG_EXPECT_ERROR(gpt2_forward(m, x, x, NULL, &loss), YG_ERR_SHAPE, "17 tokens", "context of 16");
    assert_null(loss);
    yg_release(x);
    x = tokens(2, 4, 97, 0);
    yg_tensor *y = tokens(1, 4, 97, 0);
    YG_EXPECT_ERROR(gpt2_forward(m, x, y, NULL, &loss), YG_ERR_SHAPE, "targets [1, 4]", "tokens [2, 4]");
    YG_EXPECT_ERROR(gpt2_forward(m, x, NULL, &lg, &loss), YG_ERR_INVALID_ARGUMENT, "a loss needs targets");
    assert_null(lg);
    YG_EXPECT_ERROR(gpt2_create(&bad, YG_FLOAT32, 0, &none), YG_ERR_INVALID_ARGUMENT, "bad config channels",
                    "channels 65", "heads 4");
    assert_null(none);
    yg_release(x);
    yg_release(y);
    gpt2_release(m);
}

static void test_token_files_round_trip_and_bad_ones_are_refused(void **state) {
    const char *path = temp_path("tokens.bin");
    uint16_t ids[5] = {0, 1, 50256, 300, 7};
    gpt2_tokens t = {ids, 5}, back = {0};
    (void)state;
    YG_CHECK(gpt2_tokens_write(path, &t));
    YG_CHECK(gpt2_tokens_read(path, &back));
    assert_int_equal(back.n, 5);
    assert_memory_equal(back.ids, ids, sizeof ids);
    gpt2_tokens_free(&back);
    /* truncated: the header says 5 tokens, the file holds 4 */
    assert_int_equal(truncate(path, 1024 + 8), 0);
    YG_EXPECT_ERROR(gpt2_tokens_read(path, &back), YG_ERR_IO, "the header says 5 tokens");
    assert_null(back.ids);
    /* not a token file */
    FILE *f = fopen(path, "wb");
    char junk[1024] = "hello";
    fwrite(junk, 1, sizeof junk, f);
    fclose(f);
    YG_EXPECT_ERROR(gpt2_tokens_read(path, &back), YG_ERR_IO, "not a token file", "magic");
    assert_int_equal(truncate(path, 10), 0);
    YG_EXPECT_ERROR(gpt2_tokens_read(path, &back), YG_ERR_IO, "shorter than the 1024-byte header");
    unlink(path);
}

/* A decoding table as the C GPT-2 trainers write it (version 2: with the
 * end-of-text token), and refusals of truncated or foreign files. */
static void test_tokenizer_files_are_read_and_bad_ones_refused(void **state) {
    const char *path = temp_path("tokenizer.bin");
    unsigned char head[1024] = {0};
    const uint32_t h[4] = {20240328, 2, 3, 2};
    gpt2_tokenizer t;
    (void)state;
    for (int i = 0; i < 4; i++)
        for (int b = 0; b < 4; b++)
            head[4 * i + b] = (unsigned char)(h[i] >> (8 * b));
    FILE *f = fopen(path, "wb");
    fwrite(head, 1, sizeof head, f);
    fwrite("\x05Hello\x01,\x0d<|endoftext|>", 1, 22, f);
    fclose(f);
    YG_CHECK(gpt2_tokenizer_read(path, &t));
    assert_int_equal(t.n, 3);
    assert_int_equal(t.eot, 2);
    assert_int_equal(t.len[0], 5);
    assert_memory_equal(t.bytes[0], "Hello", 5);
    assert_memory_equal(t.bytes[1], ",", 1);
    assert_memory_equal(t.bytes[2], "<|endoftext|>", 13);
    gpt2_tokenizer_free(&t);
    assert_int_equal(truncate(path, 1024 + 10), 0);
    YG_EXPECT_ERROR(gpt2_tokenizer_read(path, &t), YG_ERR_IO, "ends inside token 2 of 3");
    assert_null(t.bytes);
    head[0] ^= 1;
    f = fopen(path, "wb");
    fwrite(head, 1, sizeof head, f);
    fclose(f);
    YG_EXPECT_ERROR(gpt2_tokenizer_read(path, &t), YG_ERR_IO, "not a tokenizer file", "20240328");
    unlink(path);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kv_cache_gives_the_full_forward_logits),
        cmocka_unit_test(test_checkpoint_resumes_training_bit_for_bit),
        cmocka_unit_test(test_a_released_style_file_loads),
        cmocka_unit_test(test_executor_gives_eager_loss_and_gradients),
        cmocka_unit_test(test_bad_tokens_are_refused_with_a_message),
        cmocka_unit_test(test_token_files_round_trip_and_bad_ones_are_refused),
        cmocka_unit_test(test_tokenizer_files_are_read_and_bad_ones_refused),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
