/*
 * gpt2.h - the GPT-2 language model on yagrad, as reusable code: the
 * model (model.c), its checkpoints in the released checkpoints' safetensors
 * layout (checkpoint.c) and the token data it trains on (data.c).  The
 * command-line program (main.c) trains, checks and samples with it.
 *
 * The model is GPT-2's: token and position embeddings; `layers` pre-norm
 * blocks, each
 *     x = x + c_proj(attention(c_attn(ln_1(x))))       (causal, 1/sqrt(D))
 *     x = x + mlp.c_proj(gelu_tanh(mlp.c_fc(ln_2(x))))
 * then ln_f and a language-model head tied to the token embedding.  The
 * linear weights are stored [in, out], as the released checkpoints store
 * them (GPT-2's Conv1D), so a checkpoint's tensors load without a
 * transpose and a layer computes addmm(bias, x, weight).  The token
 * embedding has padded_vocab rows (vocab rounded up to a multiple of 64,
 * which keeps the head's matrix product on whole vector blocks); the
 * padding rows start at zero, their logits are set to -inf before the loss
 * and before sampling, so they carry no probability, get no gradient and
 * are never sampled.
 *
 * Every function returns a yg_status and leaves a message in
 * yg_last_error() on failure, like the library's own; on failure the out
 * parameters are NULL and nothing leaks.
 */
#ifndef GPT2_H
#define GPT2_H

#include "yagrad/optim.h"
#include "yagrad/yagrad.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct gpt2_config {
    int64_t layers;   /* >= 1 */
    int64_t channels; /* C, a multiple of heads */
    int64_t heads;    /* H; head dim D = C / H */
    int64_t vocab;    /* V, tokens the model predicts (>= 2) */
    int64_t context;  /* the longest sequence (rows of wpe) */
} gpt2_config;

/* The presets: "gpt2-124m" (12 layers, 768 channels, 12 heads, vocabulary
 * 50257, context 1024: the released model), "gpt2-bytes" (a byte-level
 * model small enough to train on two cores: 4 layers, 128 channels, 4
 * heads, vocabulary 256, context 128) and "gpt2-tiny" (the tests' model:
 * 2 layers, 64 channels, 4 heads, vocabulary 97, context 16).  Returns
 * false for another name.  Cannot fail otherwise. */
bool gpt2_preset(const char *name, gpt2_config *out);

/* vocab rounded up to a multiple of 64. */
int64_t gpt2_padded_vocab(const gpt2_config *config);

/* Checks a config, naming the first bad field.  YG_ERR_INVALID_ARGUMENT. */
YG_NODISCARD yg_status gpt2_config_check(const gpt2_config *config);

typedef struct gpt2 gpt2;

/* A model with GPT-2's initialisation: every weight matrix and both
 * embeddings normal(0, 0.02), the two residual projections of each block
 * (attn.c_proj, mlp.c_proj) normal(0, 0.02 / sqrt(2 layers)), biases 0,
 * layer-norm weights 1; drawn in parameter order from a generator seeded
 * with seed.  Every parameter requires grad.
 *   config: borrowed, copied
 *   dtype:  YG_FLOAT32 or YG_FLOAT64
 *   out:    out: release with gpt2_release */
YG_NODISCARD yg_status gpt2_create(const gpt2_config *config,
                                   yg_dtype dtype,
                                   uint64_t seed,
                                   gpt2 **out);

/* As gpt2_create, every parameter 0: a model to load parameters into
 * (drawing 124M normals costs seconds). */
YG_NODISCARD yg_status gpt2_create_zeros(const gpt2_config *config, yg_dtype dtype, gpt2 **out);

/* NULL-safe. */
void gpt2_release(gpt2 *model);

/* The config the model was made with.  Borrowed. */
const gpt2_config *gpt2_get_config(const gpt2 *model);

/* The parameters, in the released checkpoints' order and names
 * ("wte.weight", "wpe.weight", "h.0.ln_1.weight", ..., "ln_f.bias"):
 * 2 + 12 layers + 2 tensors.  The tensors are borrowed (the model owns
 * them); gpt2_params returns the model's array, valid while it lives. */
int64_t gpt2_num_params(const gpt2 *model);
yg_tensor *const *gpt2_params(const gpt2 *model);
const char *gpt2_param_name(const gpt2 *model, int64_t i);

/* Whether parameter i gets weight decay in training: the matrices and
 * embeddings (2-d), not the biases and layer-norm weights. */
bool gpt2_param_decays(const gpt2 *model, int64_t i);

/* One forward pass over tokens [B, T] (int64, values in [0, vocab),
 * T <= context).
 *   targets: nullable; [B, T] int64 in [0, vocab): with it *loss is the
 *            mean cross entropy of predicting targets
 *   logits:  nullable; out: [B, T, padded_vocab], padding columns -inf
 *   loss:    nullable; out: 0-d (needs targets) */
YG_NODISCARD yg_status gpt2_forward(gpt2 *model,
                                    const yg_tensor *tokens,
                                    const yg_tensor *targets,
                                    yg_tensor **logits,
                                    yg_tensor **loss);

/* ---- sampling with a key/value cache ---- */

typedef struct gpt2_cache gpt2_cache;

/* A cache of every layer's keys and values for batch sequences of up to
 * the model's context, empty.  out: release with gpt2_cache_release. */
YG_NODISCARD yg_status gpt2_cache_create(const gpt2 *model, int64_t batch, gpt2_cache **out);
void gpt2_cache_release(gpt2_cache *cache);

/* Tokens the cache holds per sequence. */
int64_t gpt2_cache_length(const gpt2_cache *cache);

/* Runs tokens [B, n] (positions length .. length + n - 1) through the
 * model with grad mode off, appending their keys and values to the cache
 * instead of recomputing the prefix.
 *   logits: out: [B, padded_vocab] for the last of the n tokens, padding
 *           columns -inf
 * Returns YG_ERR_SHAPE when the cache would grow past the context. */
YG_NODISCARD yg_status gpt2_forward_cached(gpt2 *model,
                                           gpt2_cache *cache,
                                           const yg_tensor *tokens,
                                           yg_tensor **logits);

/* ---- checkpoints (checkpoint.c) ---- */

/* Writes the parameters under their GPT-2 names (the token embedding
 * without its padding rows, [vocab, C]), the config as metadata, and,
 * when opt is not NULL, the optimizer's state and step under
 * "optimizer.<state>.<param name>" so training resumes exactly. */
YG_NODISCARD yg_status gpt2_save(const gpt2 *model,
                                 const yg_optimizer *opt,
                                 int64_t step,
                                 const char *path);

/* Reads a checkpoint written by gpt2_save or a released GPT-2
 * model.safetensors ("transformer." prefixes are accepted, attention mask
 * buffers ignored).  The config comes from the file's metadata, or, for a
 * file without it, from the tensors' shapes (heads as given in
 * *heads_hint, 12 for 0).  The model is float32 unless dtype says
 * otherwise.
 *   model: out: a new model
 *   step:  nullable; out: the training step stored, 0 if none */
YG_NODISCARD yg_status gpt2_load(const char *path,
                                 yg_dtype dtype,
                                 int64_t heads_hint,
                                 gpt2 **model,
                                 int64_t *step);

/* Restores the optimizer state saved with the checkpoint at path into opt
 * (made over model's parameters, in gpt2_params order). */
YG_NODISCARD yg_status gpt2_load_optimizer(const char *path, const gpt2 *model, yg_optimizer *opt);

/* ---- token data (data.c) ---- */

typedef struct gpt2_tokens {
    uint16_t *ids; /* malloc'd */
    int64_t n;
} gpt2_tokens;

/* Reads a token file in the format the hand-written C GPT-2 trainers use:
 * 256 little-endian int32 (magic 20240520, version 1, token count, the
 * rest 0), then that many uint16 tokens. */
YG_NODISCARD yg_status gpt2_tokens_read(const char *path, gpt2_tokens *out);

/* Writes tokens in that format. */
YG_NODISCARD yg_status gpt2_tokens_write(const char *path, const gpt2_tokens *tokens);

/* Byte-level tokens of a text file or of every regular file of a folder
 * (name order; symbolic links skipped): one token per byte. */
YG_NODISCARD yg_status gpt2_tokens_from_text(const char *path, gpt2_tokens *out);

void gpt2_tokens_free(gpt2_tokens *tokens);

/* A decoding table in the format of the C GPT-2 trainers'
 * gpt2_tokenizer.bin: 256 little-endian uint32 (magic 20240328, version
 * 1 or 2, vocabulary size, and for version 2 the end-of-text token), then
 * per token one length byte and that many bytes. */
typedef struct gpt2_tokenizer {
    int64_t n;       /* tokens */
    int64_t eot;     /* the end-of-text token, -1 when the file has none */
    char **bytes;    /* n entries, malloc'd */
    uint8_t *len;    /* n entries */
} gpt2_tokenizer;

YG_NODISCARD yg_status gpt2_tokenizer_read(const char *path, gpt2_tokenizer *out);
void gpt2_tokenizer_free(gpt2_tokenizer *t);

#endif /* GPT2_H */
