/*
 * word_lm.h - what the three files of the word_lm example share:
 * word_lm.c (options, model, training, main), word_lm_corpus.c (reading
 * and tokenising the text, the vocabulary, batches, the unigram baseline)
 * and word_lm_plot.c (the SVG of the loss curves).  Example code: the
 * functions below stop the program with a message (wl_die) on a bad file
 * or when memory runs out, rather than returning an error.
 */
#ifndef WORD_LM_H
#define WORD_LM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Lines per block when one corpus is split: 90% train, 5% valid, 5% test. */
#define WL_SPLIT_BLOCK 100

/* Prints "word_lm: " and fmt (one %s, arg) to stderr and exits 1. */
void wl_die(const char *fmt, const char *arg);

/* malloc that exits on failure (and returns a block for n == 0). */
void *wl_xmalloc(size_t n);

/* ---- the corpus (word_lm_corpus.c) ---- */

typedef struct vocab {
    char **words;    /* id -> word */
    int64_t *counts; /* id -> occurrences in the training text */
    int64_t n, cap;
    int64_t *slots; /* hash table of ids, -1 empty; 2 * cap entries */
} vocab;

/* Frees v's words and tables (not v itself). */
void wl_vocab_free(vocab *v);

typedef struct corpus {
    vocab v;         /* <unk>, <eos>, then the kept training words */
    int64_t *ids[3]; /* train, valid, test token ids (malloc'd) */
    int64_t len[3];
    int64_t raw_types;  /* distinct training tokens */
    int64_t kept_types; /* those seen at least min_count times */
} corpus;

/* Where the text comes from: one file or folder split by lines (path),
 * or separate files (train and valid, test optional). */
typedef struct wl_corpus_options {
    const char *path, *train, *valid, *test;
    int64_t min_count; /* vocabulary: training words seen this often */
} wl_corpus_options;

/* Reads and tokenises the text (rules in word_lm.c's header comment) and
 * builds the vocabulary from the training part. */
void wl_load_corpus(const wl_corpus_options *o, corpus *c);

/* PyTorch's batchify: B streams, each a contiguous stretch of the text,
 * stored row-major [rows][B] (row r holds token r of every stream), so the
 * rows of a segment are one contiguous block. */
typedef struct batched {
    int64_t *data; /* malloc'd */
    int64_t rows, b;
} batched;

batched wl_batchify(const int64_t *ids, int64_t n, int64_t b);

/* Perplexity of the positions the model predicts (rows 1..rows-1 of d)
 * under add-one-smoothed unigram frequencies of the training text (v's
 * counts, train_len tokens). */
double wl_unigram_ppl(const batched *d, const vocab *v, int64_t train_len);

/* ---- the plot (word_lm_plot.c) ---- */

/* A curve of the plot: x in epochs (fractional), y a loss in nats. */
typedef struct curve {
    double *x, *y; /* malloc'd */
    int64_t n, cap;
} curve;

void wl_curve_add(curve *c, double x, double y);

/* Writes the train and validation loss curves (left axis: loss in nats;
 * right axis: the same heights as perplexity; x from 0 to epochs, labelled
 * x_label: "epoch", or "step" for the gpt2 example, which shares this
 * file) and the unigram baseline (dashed) as a standalone SVG.  Returns false, having said why on
 * stderr, when path cannot be written. */
bool wl_write_svg(const char *path,
                  const char *title,
                  const curve *train,
                  const curve *valid,
                  double unigram_loss,
                  const char *x_label,
                  int64_t epochs);

#endif /* WORD_LM_H */
