/*
 * word_lm.c - a word-level LSTM language model, as PyTorch's
 * examples/word_language_model: embedding -> stacked LSTM (lstm_cell per
 * layer and time step) -> linear decoder over the vocabulary, trained by
 * truncated backpropagation through time with gradient clipping and SGD
 * whose learning rate is divided by 4 whenever the validation loss does
 * not improve.
 *
 *   word_lm [options] [CORPUS]
 *   word_lm [options] --train FILE --valid FILE [--test FILE]
 *
 * The corpus.  CORPUS is a text file or a folder of them (its regular
 * files, in name order; symbolic links are skipped, so Debian's GPL ->
 * GPL-3 is read once).  The default is /usr/share/common-licenses, the
 * license texts of Debian's base-files package (essential, so on every
 * Debian 12 system): 3770 non-empty lines, 48000 tokens of plain English
 * (13 license texts, some of which share passages).
 * Its non-empty lines are split in blocks of 100: the first 90 of each
 * block train, the next 5 validate, the last 5 test (90/5/5, the valid
 * and test text spread over every file).  With --train and --valid the
 * files are used as they are.  Text is tokenised as follows: ASCII letters
 * are lowercased; a word is a run of letters, digits and bytes >= 0x80,
 * with ' and - allowed inside it; any other non-blank byte is a token of
 * its own; each non-empty line ends with "<eos>".  The vocabulary is the
 * training words seen at least --min-count times (default 2); other words
 * become "<unk>", so the training text teaches that token too.
 *
 * The model (defaults are PyTorch's): embedding [V, emsize] with dropout,
 * --nlayers LSTM layers of --nhid units (dropout between layers and on
 * the last one's output), decoder linear(nhid -> V), mean cross entropy
 * over every position.  --tied makes the decoder use the embedding
 * matrix (emsize must equal nhid).  The hidden state is carried from one
 * --bptt segment to the next and detached between them; the batches are
 * --batch-size parallel streams of the text (10 for evaluation), as in
 * PyTorch.  Each step: zero the gradients, forward, backward,
 * yg_clip_grad_norm(--clip), SGD step with the current learning rate.
 *
 * --executor traces one training segment (the loss and the new hidden
 * state as a function of the tokens, the targets, the incoming hidden
 * state and the parameters) with yg_trace and runs every full-length
 * segment through a yg_executor: the plan makes the differentiable parts
 * prim::DifferentiableGraph nodes whose backward is the df graph built
 * from specs/derivatives.yaml, with pointwise chains fused.  Evaluation
 * runs a second trace (no dropout, the evaluation batch size) the same
 * way.  A segment shorter than --bptt (the last of an epoch: the graph
 * unrolls exactly --bptt steps) runs eagerly.
 *
 * Output: a progress line during each epoch (loss, perplexity, tokens/s),
 * the train and validation perplexity after each epoch next to the
 * unigram baseline (the validation text's perplexity under the training
 * text's add-one-smoothed word frequencies, over the same positions the
 * model predicts), tokens/s, the peak resident memory (getrusage), and an
 * SVG plot of the loss and perplexity curves (--svg, default word_lm.svg
 * in the current folder).  Exits 0 when the final validation perplexity
 * is below --max-ratio (default 1) times the unigram baseline, 2 when it
 * is not, 1 on an error (a bad option or file, a plot it cannot write).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, isatty */

#include "word_lm.h"

#include "yagrad/jit.h"
#include "yagrad/optim.h"
#include "yagrad/random.h"
#include "yagrad/yagrad.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_CORPUS "/usr/share/common-licenses"
#define MAX_LAYERS     8
#define EVAL_BATCH     10

/* Example code: stop on the first failure, saying why. */
#define CHECK(expr)                                                                                \
    do {                                                                                           \
        yg_status st_ = (expr);                                                                    \
        if (st_ != YG_OK) {                                                                        \
            fprintf(stderr,                                                                        \
                    "%s:%d: %s: %s\n",                                                             \
                    __FILE__,                                                                      \
                    __LINE__,                                                                      \
                    yg_status_name(st_),                                                           \
                    yg_last_error());                                                              \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

void wl_die(const char *fmt, const char *arg) {
    fprintf(stderr, "word_lm: ");
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

/* ---- options ---- */

typedef struct options {
    const char *corpus, *train, *valid, *test, *svg;
    int64_t emsize, nhid, nlayers, batch, bptt, epochs, min_count, log_interval;
    double lr, clip, dropout, max_ratio;
    uint64_t seed;
    bool tied, executor;
    yg_device device;
} options;

/* Where the model trains (--device); every tensor is made on the CPU and
 * moved there. */
static yg_device train_device = YG_CPU;

static void to_train_device(yg_tensor **t) {
    yg_tensor *moved = NULL;
    CHECK(yg_tensor_to_device(*t, train_device, 0, &moved));
    yg_release(*t);
    *t = moved;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: word_lm [options] [CORPUS]\n"
            "       word_lm [options] --train FILE --valid FILE [--test FILE]\n"
            "\n"
            "Trains a word-level LSTM language model (PyTorch's word_language_model).\n"
            "CORPUS: a text file or a folder of text files, split by lines in blocks of\n"
            "%d: 90%% train, 5%% valid, 5%% test (default %s,\n"
            "from Debian's base-files package).  Words are lowercased; punctuation\n"
            "marks are tokens; each line ends with <eos>.\n"
            "\n"
            "  --train FILE, --valid FILE, --test FILE   use these files instead\n"
            "  --emsize N       embedding size (200)\n"
            "  --nhid N         LSTM units per layer (200)\n"
            "  --nlayers N      LSTM layers, 1..%d (2)\n"
            "  --tied           decoder shares the embedding matrix (emsize == nhid)\n"
            "  --dropout P      dropout probability (0.2)\n"
            "  --lr X           initial learning rate (20); divided by 4 when the\n"
            "                   validation loss does not improve\n"
            "  --clip X         gradient norm clipping, 0 for none (0.25)\n"
            "  --epochs N       (6)\n"
            "  --batch-size N   training streams (20); evaluation uses %d\n"
            "  --bptt N         sequence length of a truncated BPTT segment (35)\n"
            "  --min-count N    vocabulary: training words seen N times (2)\n"
            "  --seed N         weights and dropout (1111)\n"
            "  --log-interval N progress every N batches (0: about 10 per epoch)\n"
            "  --executor       run the segments through the graph executor\n"
            "  --device D       cpu or cuda (the first GPU; exit 77 without one) (cpu)\n"
            "  --svg PATH       loss/perplexity plot (word_lm.svg)\n"
            "  --max-ratio R    exit 2 unless the final validation perplexity is below\n"
            "                   R times the unigram baseline (1)\n"
            "  --help\n",
            WL_SPLIT_BLOCK,
            DEFAULT_CORPUS,
            MAX_LAYERS,
            EVAL_BATCH);
}

static int64_t int_arg(const char *name, const char *s, int64_t lo) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo) {
        fprintf(stderr, "word_lm: %s wants an integer >= %lld, got '%s'\n", name, (long long)lo, s);
        exit(1);
    }
    return (int64_t)v;
}

static double real_arg(const char *name, const char *s, double lo, double hi) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v >= lo && v <= hi)) {
        fprintf(stderr, "word_lm: %s wants a number in [%g, %g], got '%s'\n", name, lo, hi, s);
        exit(1);
    }
    return v;
}

static options parse_args(int argc, char **argv) {
    options o = {.svg = "word_lm.svg",
                 .emsize = 200,
                 .nhid = 200,
                 .nlayers = 2,
                 .batch = 20,
                 .bptt = 35,
                 .epochs = 6,
                 .min_count = 2,
                 .lr = 20,
                 .clip = 0.25,
                 .dropout = 0.2,
                 .max_ratio = 1,
                 .seed = 1111};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "--tied") == 0) {
            o.tied = true;
        } else if (strcmp(a, "--device") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            if (strcmp(v, "cpu") != 0 && strcmp(v, "cuda") != 0) {
                fprintf(stderr, "word_lm: --device wants cpu or cuda, got '%s'\n", v);
                exit(1);
            }
            o.device = strcmp(v, "cuda") == 0 ? YG_CUDA : YG_CPU;
        } else if (strcmp(a, "--executor") == 0) {
            o.executor = true;
        } else if (a[0] == '-' && a[1] == '-') {
            if (i + 1 >= argc) {
                fprintf(stderr, "word_lm: %s wants a value\n", a);
                exit(1);
            }
            const char *v = argv[++i];
            if (strcmp(a, "--train") == 0)
                o.train = v;
            else if (strcmp(a, "--valid") == 0)
                o.valid = v;
            else if (strcmp(a, "--test") == 0)
                o.test = v;
            else if (strcmp(a, "--svg") == 0)
                o.svg = v;
            else if (strcmp(a, "--emsize") == 0)
                o.emsize = int_arg(a, v, 1);
            else if (strcmp(a, "--nhid") == 0)
                o.nhid = int_arg(a, v, 1);
            else if (strcmp(a, "--nlayers") == 0)
                o.nlayers = int_arg(a, v, 1);
            else if (strcmp(a, "--batch-size") == 0)
                o.batch = int_arg(a, v, 1);
            else if (strcmp(a, "--bptt") == 0)
                o.bptt = int_arg(a, v, 1);
            else if (strcmp(a, "--epochs") == 0)
                o.epochs = int_arg(a, v, 1);
            else if (strcmp(a, "--min-count") == 0)
                o.min_count = int_arg(a, v, 1);
            else if (strcmp(a, "--log-interval") == 0)
                o.log_interval = int_arg(a, v, 0);
            else if (strcmp(a, "--seed") == 0)
                o.seed = (uint64_t)int_arg(a, v, 0);
            else if (strcmp(a, "--lr") == 0)
                o.lr = real_arg(a, v, 0, 1e6);
            else if (strcmp(a, "--clip") == 0)
                o.clip = real_arg(a, v, 0, 1e12);
            else if (strcmp(a, "--dropout") == 0)
                o.dropout = real_arg(a, v, 0, 0.99);
            else if (strcmp(a, "--max-ratio") == 0)
                o.max_ratio = real_arg(a, v, 0, 1e12);
            else {
                fprintf(stderr, "word_lm: unknown option %s (see --help)\n", a);
                exit(1);
            }
        } else if (o.corpus == NULL) {
            o.corpus = a;
        } else {
            fprintf(stderr, "word_lm: more than one CORPUS (%s, %s)\n", o.corpus, a);
            exit(1);
        }
    }
    if (o.nlayers > MAX_LAYERS) {
        fprintf(stderr, "word_lm: --nlayers is at most %d\n", MAX_LAYERS);
        exit(1);
    }
    if ((o.train == NULL) != (o.valid == NULL) || (o.test != NULL && o.train == NULL)) {
        fprintf(stderr, "word_lm: --train and --valid go together (and --test with them)\n");
        exit(1);
    }
    if (o.train != NULL && o.corpus != NULL) {
        fprintf(stderr, "word_lm: give either CORPUS or --train/--valid, not both\n");
        exit(1);
    }
    if (o.tied && o.emsize != o.nhid) {
        fprintf(stderr,
                "word_lm: --tied needs --emsize equal to --nhid (got %lld and %lld)\n",
                (long long)o.emsize,
                (long long)o.nhid);
        exit(1);
    }
    if (o.train == NULL && o.corpus == NULL)
        o.corpus = DEFAULT_CORPUS;
    return o;
}

/* ---- the model ---- */

typedef struct model {
    int64_t vocab, emsize, nhid, nlayers;
    double dropout;
    bool train; /* dropout active */
    yg_tensor *encoder;
    yg_tensor *w_ih[MAX_LAYERS], *w_hh[MAX_LAYERS], *b_ih[MAX_LAYERS], *b_hh[MAX_LAYERS];
    yg_tensor *dec_w; /* the encoder itself when tied */
    yg_tensor *dec_b;
    yg_tensor *params[4 * MAX_LAYERS + 3];
    int64_t n_params;
} model;

static uint64_t rng_state;

static double uniform(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* A float32 parameter with values in [-bound, bound). */
static yg_tensor *param(model *m, int64_t rows, int64_t cols, double bound) {
    int64_t sizes[2] = {rows, cols}, n = rows * (cols > 0 ? cols : 1);
    float *v = wl_xmalloc((size_t)n * sizeof *v);
    yg_tensor *t = NULL;
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)((2 * uniform() - 1) * bound);
    CHECK(yg_tensor_from_data(v, sizes, cols > 0 ? 2 : 1, YG_FLOAT32, &t));
    to_train_device(&t);
    CHECK(yg_tensor_set_requires_grad(t, true));
    free(v);
    m->params[m->n_params++] = t;
    return t;
}

/* PyTorch's initialisation: embedding and decoder U(-0.1, 0.1), decoder
 * bias 0, LSTM weights and biases U(-1/sqrt(nhid), 1/sqrt(nhid)). */
static void model_init(model *m, const options *o, int64_t vocab_size) {
    double k = 1 / sqrt((double)o->nhid);
    memset(m, 0, sizeof *m);
    m->vocab = vocab_size;
    m->emsize = o->emsize;
    m->nhid = o->nhid;
    m->nlayers = o->nlayers;
    m->dropout = o->dropout;
    m->encoder = param(m, vocab_size, o->emsize, 0.1);
    for (int64_t l = 0; l < o->nlayers; l++) {
        m->w_ih[l] = param(m, 4 * o->nhid, l == 0 ? o->emsize : o->nhid, k);
        m->w_hh[l] = param(m, 4 * o->nhid, o->nhid, k);
        m->b_ih[l] = param(m, 4 * o->nhid, 0, k);
        m->b_hh[l] = param(m, 4 * o->nhid, 0, k);
    }
    m->dec_w = o->tied ? m->encoder : param(m, vocab_size, o->nhid, 0.1);
    m->dec_b = param(m, vocab_size, 0, 0);
}

static int64_t model_size(const model *m) {
    int64_t n = 0;
    for (int64_t i = 0; i < m->n_params; i++)
        n += yg_tensor_numel(m->params[i]);
    return n;
}

static void model_release(model *m) {
    for (int64_t i = 0; i < m->n_params; i++)
        yg_release(m->params[i]);
}

/* Dropout of x when training (a new reference either way). */
static yg_status drop(const model *m, yg_tensor *x, yg_tensor **out) {
    if (!m->train || m->dropout == 0) {
        *out = yg_retain(x);
        return YG_OK;
    }
    return yg_dropout(x, m->dropout, true, NULL, out);
}

/* One segment, as a yg_trace_fn (ctx: the model).
 *   inputs:  tokens [T, B] int64, targets [T * B] int64, then h and c
 *            [B, nhid] of each layer
 *   outputs: the mean cross entropy (0-dim), then the new h and c of each
 *            layer */
static yg_status
segment(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    const model *m = ctx;
    int64_t steps = yg_tensor_size(in[0], 0);
    yg_tensor **cur = wl_xmalloc((size_t)steps * sizeof *cur),
              **next = wl_xmalloc((size_t)steps * sizeof *next);
    yg_tensor *emb = NULL, *embd = NULL, *stacked = NULL, *dropped = NULL, *flat = NULL,
              *logits = NULL;
    yg_status st = YG_OK;
    (void)n_in;
    for (int64_t t = 0; t < steps; t++)
        cur[t] = next[t] = NULL;
    st = yg_embedding(m->encoder, in[0], -1, &emb); /* [T, B, emsize] */
    if (st == YG_OK)
        st = drop(m, emb, &embd);
    for (int64_t t = 0; t < steps && st == YG_OK; t++)
        st = yg_select(embd, 0, t, &cur[t]);
    for (int64_t l = 0; l < m->nlayers && st == YG_OK; l++) {
        yg_tensor *h = yg_retain(in[2 + 2 * l]), *c = yg_retain(in[3 + 2 * l]);
        for (int64_t t = 0; t < steps && st == YG_OK; t++) {
            yg_tensor *h2 = NULL, *c2 = NULL;
            st = yg_lstm_cell(
                cur[t], h, c, m->w_ih[l], m->w_hh[l], m->b_ih[l], m->b_hh[l], &h2, &c2);
            yg_release(h);
            yg_release(c);
            h = h2;
            c = c2;
            /* Dropout between layers; the last layer's comes after stack. */
            if (st == YG_OK && l + 1 < m->nlayers)
                st = drop(m, h, &next[t]);
            else if (st == YG_OK)
                next[t] = yg_retain(h);
        }
        out[1 + 2 * l] = h;
        out[2 + 2 * l] = c;
        for (int64_t t = 0; t < steps; t++) {
            yg_release(cur[t]);
            cur[t] = next[t];
            next[t] = NULL;
        }
    }
    if (st == YG_OK)
        st = yg_stack((const yg_tensor *const *)cur, steps, 0, &stacked); /* [T, B, nhid] */
    if (st == YG_OK)
        st = drop(m, stacked, &dropped);
    if (st == YG_OK)
        st = yg_flatten(dropped, 0, 1, &flat); /* [T * B, nhid] */
    if (st == YG_OK)
        st = yg_linear(flat, m->dec_w, m->dec_b, &logits); /* [T * B, V] */
    if (st == YG_OK)
        st = yg_cross_entropy(logits, in[1], NULL, YG_REDUCTION_MEAN, -100, &out[0]);
    if (st != YG_OK)
        for (int64_t i = 0; i < n_out; i++) {
            yg_release(out[i]);
            out[i] = NULL;
        }
    for (int64_t t = 0; t < steps; t++) {
        yg_release(cur[t]);
        yg_release(next[t]);
    }
    free(cur);
    free(next);
    yg_release(emb);
    yg_release(embd);
    yg_release(stacked);
    yg_release(dropped);
    yg_release(flat);
    yg_release(logits);
    return st;
}

/* ---- running segments, eagerly or through an executor ---- */

typedef struct runner {
    model *m;
    int64_t b, bptt;
    yg_tensor *hidden[2 * MAX_LAYERS]; /* h0, c0, h1, c1, ... (no history) */
    yg_trace_result *trace;            /* --executor: the traced segment */
    yg_executor *exec;
} runner;

static void runner_reset_hidden(runner *r) {
    int64_t sizes[2] = {r->b, r->m->nhid};
    for (int64_t i = 0; i < 2 * r->m->nlayers; i++) {
        yg_release(r->hidden[i]);
        r->hidden[i] = NULL;
        CHECK(yg_tensor_zeros(sizes, 2, YG_FLOAT32, &r->hidden[i]));
        to_train_device(&r->hidden[i]);
    }
}

/* The tokens and targets of the segment starting at row i. */
static void segment_data(const batched *d, int64_t i, int64_t steps, yg_tensor **x, yg_tensor **y) {
    int64_t xs[2] = {steps, d->b}, ys[1] = {steps * d->b};
    CHECK(yg_tensor_from_data(&d->data[i * d->b], xs, 2, YG_INT64, x));
    CHECK(yg_tensor_from_data(&d->data[(i + 1) * d->b], ys, 1, YG_INT64, y));
    to_train_device(x);
    to_train_device(y);
}

/* Traces the segment on the first bptt rows of d (needs rows > bptt) and
 * makes an executor for it. */
static void runner_trace(runner *r, const batched *d) {
    int64_t n_in = 2 + 2 * r->m->nlayers;
    yg_tensor *in[2 + 2 * MAX_LAYERS];
    segment_data(d, 0, r->bptt, &in[0], &in[1]);
    for (int64_t i = 0; i < 2 * r->m->nlayers; i++)
        in[2 + i] = r->hidden[i];
    CHECK(yg_trace(segment, r->m, in, n_in, 1 + 2 * r->m->nlayers, NULL, &r->trace));
    CHECK(yg_executor_create(r->trace->graph, NULL, &r->exec));
    /* The eager results of the trace (and the autograd graph behind them)
     * are not needed: drop them now rather than with the trace. */
    for (int64_t i = 0; i < r->trace->n_outputs; i++) {
        yg_release(r->trace->outputs[i]);
        r->trace->outputs[i] = NULL;
    }
    yg_release(in[0]);
    yg_release(in[1]);
}

/* Runs the segment of rows [i, i + steps] of d; returns the loss (a new
 * reference with history when grad mode is on) and moves the hidden state
 * on, detached. */
static yg_tensor *runner_step(runner *r, const batched *d, int64_t i, int64_t steps) {
    int64_t n_hidden = 2 * r->m->nlayers, n_in = 2 + n_hidden;
    yg_tensor *in[2 + 2 * MAX_LAYERS + 4 * MAX_LAYERS + 3], *out[1 + 2 * MAX_LAYERS] = {0};
    segment_data(d, i, steps, &in[0], &in[1]);
    for (int64_t k = 0; k < n_hidden; k++)
        in[2 + k] = r->hidden[k];
    if (r->exec != NULL && steps == r->bptt) {
        for (int64_t p = 0; p < r->trace->n_params; p++)
            in[n_in + p] = r->trace->params[p];
        CHECK(yg_executor_run(r->exec, in, n_in + r->trace->n_params, out, 1 + n_hidden));
    } else {
        CHECK(segment(r->m, in, n_in, out, 1 + n_hidden));
    }
    for (int64_t k = 0; k < n_hidden; k++) {
        yg_release(r->hidden[k]);
        r->hidden[k] = NULL;
        CHECK(yg_detach(out[1 + k], &r->hidden[k])); /* truncated BPTT */
        yg_release(out[1 + k]);
    }
    yg_release(in[0]);
    yg_release(in[1]);
    return out[0];
}

static void runner_release(runner *r) {
    for (int64_t i = 0; i < 2 * MAX_LAYERS; i++)
        yg_release(r->hidden[i]);
    yg_executor_release(r->exec);
    yg_trace_result_release(r->trace);
}

/* ---- training and evaluation ---- */

typedef struct stats {
    int64_t tokens;
    double seconds;
} stats;

/* One epoch over d; returns the mean training loss per token. */
static double train_epoch(runner *r,
                          yg_optimizer *opt,
                          const batched *d,
                          const options *o,
                          int64_t epoch,
                          curve *train_curve,
                          stats *s) {
    int64_t n_batches = (d->rows - 2) / o->bptt + 1, batch = 0, interval_tokens = 0;
    int64_t log_every = o->log_interval > 0 ? o->log_interval : (n_batches + 9) / 10;
    double total = 0, interval = 0, t0 = now(), t_log = t0;
    int64_t tokens = 0;
    bool tty = isatty(STDOUT_FILENO);
    r->m->train = true;
    runner_reset_hidden(r);
    for (int64_t i = 0; i < d->rows - 1; i += o->bptt, batch++) {
        int64_t steps = d->rows - 1 - i < o->bptt ? d->rows - 1 - i : o->bptt;
        double lv;
        yg_optimizer_zero_grad(opt);
        yg_tensor *loss = runner_step(r, d, i, steps);
        CHECK(yg_tensor_item(loss, &lv));
        CHECK(yg_backward(loss, NULL, false));
        yg_release(loss);
        if (o->clip > 0)
            CHECK(yg_clip_grad_norm(r->m->params, r->m->n_params, o->clip, NULL));
        CHECK(yg_optimizer_step(opt));
        total += lv * (double)(steps * d->b);
        interval += lv * (double)(steps * d->b);
        tokens += steps * d->b;
        interval_tokens += steps * d->b;
        if ((batch + 1) % log_every == 0 || batch + 1 == n_batches) {
            double t = now(), cur = interval / (double)interval_tokens;
            printf("%s| epoch %3lld | %5lld/%5lld batches | lr %6.3g | %7.0f tok/s | loss %6.3f | "
                   "ppl %9.2f%s",
                   tty ? "\r" : "",
                   (long long)epoch,
                   (long long)(batch + 1),
                   (long long)n_batches,
                   yg_optimizer_lr(opt),
                   (double)interval_tokens / (t - t_log),
                   cur,
                   exp(cur),
                   tty ? "" : "\n");
            fflush(stdout);
            wl_curve_add(
                train_curve, (double)(epoch - 1) + (double)(batch + 1) / (double)n_batches, cur);
            interval = 0;
            interval_tokens = 0;
            t_log = t;
        }
    }
    if (tty)
        printf("\n");
    s->tokens += tokens;
    s->seconds += now() - t0;
    return total / (double)tokens;
}

/* The mean loss per predicted token of d, without dropout or gradients. */
static double evaluate(runner *r, const batched *d, int64_t bptt) {
    double total = 0;
    int64_t tokens = 0;
    bool prev = yg_set_grad_enabled(false);
    r->m->train = false;
    runner_reset_hidden(r);
    for (int64_t i = 0; i < d->rows - 1; i += bptt) {
        int64_t steps = d->rows - 1 - i < bptt ? d->rows - 1 - i : bptt;
        double lv;
        yg_tensor *loss = runner_step(r, d, i, steps);
        CHECK(yg_tensor_item(loss, &lv));
        yg_release(loss);
        total += lv * (double)(steps * d->b);
        tokens += steps * d->b;
    }
    yg_set_grad_enabled(prev);
    return tokens > 0 ? total / (double)tokens : NAN;
}

/* ---- main ---- */

int main(int argc, char **argv) {
    options o = parse_args(argc, argv);
    train_device = o.device;
    if (train_device == YG_CUDA && yg_cuda_check() != YG_OK) {
        printf("word_lm: cannot train on cuda: %s\n", yg_last_error());
        return 77;
    }
    corpus c;
    model m;
    curve train_curve = {0}, valid_curve = {0};
    stats s = {0};

    wl_corpus_options co = {.path = o.corpus,
                            .train = o.train,
                            .valid = o.valid,
                            .test = o.test,
                            .min_count = o.min_count};
    wl_load_corpus(&co, &c);
    printf("corpus: %s | vocabulary %lld: <unk> and the %lld of %lld distinct training tokens "
           "seen %lld+ times | tokens: train %lld, valid %lld, test %lld\n",
           o.train != NULL ? o.train : o.corpus,
           (long long)c.v.n,
           (long long)c.kept_types,
           (long long)c.raw_types,
           (long long)o.min_count,
           (long long)c.len[0],
           (long long)c.len[1],
           (long long)c.len[2]);
    batched train = wl_batchify(c.ids[0], c.len[0], o.batch);
    batched valid = wl_batchify(c.ids[1], c.len[1], EVAL_BATCH);
    batched test = wl_batchify(c.ids[2], c.len[2], EVAL_BATCH);
    if (train.rows < 2 || valid.rows < 2) {
        fprintf(stderr,
                "word_lm: the corpus is too small: %lld training and %lld validation tokens for "
                "%lld and %d streams\n",
                (long long)c.len[0],
                (long long)c.len[1],
                (long long)o.batch,
                EVAL_BATCH);
        return 1;
    }
    double unigram = wl_unigram_ppl(&valid, &c.v, c.len[0]);

    rng_state = 0x9E3779B97F4A7C15ULL ^ (o.seed * 0xBF58476D1CE4E5B9ULL + 1);
    yg_manual_seed(o.seed);
    model_init(&m, &o, c.v.n);
    printf("model: embedding %lld, %lld x LSTM(%lld), decoder %s | %lld parameters | dropout %g "
           "| %s\n",
           (long long)o.emsize,
           (long long)o.nlayers,
           (long long)o.nhid,
           o.tied ? "tied to the embedding" : "linear",
           (long long)model_size(&m),
           o.dropout,
           o.executor ? "graph executor" : "eager");

    runner tr = {.m = &m, .b = o.batch, .bptt = o.bptt},
           ev = {.m = &m, .b = EVAL_BATCH, .bptt = o.bptt};
    if (o.executor) {
        /* One trace per batch size and dropout setting; data too short
         * for a full segment just runs eagerly. */
        runner_reset_hidden(&tr);
        m.train = true;
        if (train.rows > o.bptt)
            runner_trace(&tr, &train);
        runner_reset_hidden(&ev);
        m.train = false;
        bool prev = yg_set_grad_enabled(false);
        if (valid.rows > o.bptt)
            runner_trace(&ev, &valid);
        yg_set_grad_enabled(prev);
    }

    yg_optimizer *opt = NULL;
    yg_sgd_options so = {.lr = o.lr};
    CHECK(yg_optimizer_create_sgd(m.params, m.n_params, &so, &opt));
    double best = INFINITY, val_loss = NAN;
    for (int64_t epoch = 1; epoch <= o.epochs; epoch++) {
        double t0 = now();
        double train_loss = train_epoch(&tr, opt, &train, &o, epoch, &train_curve, &s);
        double train_seconds = now() - t0;
        val_loss = evaluate(&ev, &valid, o.bptt);
        wl_curve_add(&valid_curve, (double)epoch, val_loss);
        printf("| end of epoch %3lld | %6.1f s | %7.0f tok/s | train ppl %9.2f | valid ppl %9.2f | "
               "unigram ppl %9.2f\n",
               (long long)epoch,
               now() - t0,
               (double)((train.rows - 1) * train.b) / train_seconds,
               exp(train_loss),
               exp(val_loss),
               unigram);
        if (val_loss < best)
            best = val_loss;
        else
            CHECK(yg_optimizer_set_lr(opt, yg_optimizer_lr(opt) / 4)); /* anneal */
        fflush(stdout);
    }
    double val_ppl = exp(val_loss);
    printf("final: valid ppl %.2f | unigram baseline %.2f | ratio %.3f\n",
           val_ppl,
           unigram,
           val_ppl / unigram);
    if (test.rows >= 2) {
        double test_loss = evaluate(&ev, &test, o.bptt);
        printf("test: ppl %.2f | unigram baseline %.2f\n",
               exp(test_loss),
               wl_unigram_ppl(&test, &c.v, c.len[0]));
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("training: %lld tokens in %.1f s, %.0f tokens/s | peak memory (max RSS) %.1f MiB\n",
           (long long)s.tokens,
           s.seconds,
           (double)s.tokens / s.seconds,
           (double)ru.ru_maxrss / 1024.0);
    if (o.executor && tr.exec != NULL) {
        yg_executor_stats es = yg_executor_get_stats(tr.exec);
        printf("executor: %lld runs, %lld plans built\n", (long long)es.runs, (long long)es.misses);
    }

    char title[512];
    const char *name = o.train != NULL ? o.train : o.corpus, *slash = strrchr(name, '/');
    snprintf(title,
             sizeof title,
             "word_lm on %s: %lld x LSTM(%lld), %lld words%s",
             slash != NULL && slash[1] != '\0' ? slash + 1 : name,
             (long long)o.nlayers,
             (long long)o.nhid,
             (long long)c.v.n,
             o.executor ? ", graph executor" : "");
    bool plotted = wl_write_svg(o.svg, title, &train_curve, &valid_curve, log(unigram), "epoch", o.epochs);
    if (plotted)
        printf("plot: %s\n", o.svg);

    int rc = !plotted ? 1 : val_ppl < o.max_ratio * unigram ? 0 : 2;
    if (rc == 2)
        printf("FAIL: valid ppl %.2f is not below %g x the unigram baseline %.2f\n",
               val_ppl,
               o.max_ratio,
               unigram);
    yg_optimizer_release(opt);
    runner_release(&tr);
    runner_release(&ev);
    model_release(&m);
    for (int k = 0; k < 3; k++)
        free(c.ids[k]);
    free(train.data);
    free(valid.data);
    free(test.data);
    free(train_curve.x);
    free(train_curve.y);
    free(valid_curve.x);
    free(valid_curve.y);
    wl_vocab_free(&c.v);
    return rc;
}
