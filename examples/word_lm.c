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
 * is not, 1 on an error.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, lstat, clock_gettime, isatty */

#include "yagrad/jit.h"
#include "yagrad/optim.h"
#include "yagrad/random.h"
#include "yagrad/yagrad.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_CORPUS "/usr/share/common-licenses"
#define MAX_LAYERS     8
#define EVAL_BATCH     10
#define SPLIT_BLOCK    100 /* lines per block: 90 train, 5 valid, 5 test */

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

static void die(const char *fmt, const char *arg) {
    fprintf(stderr, "word_lm: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    exit(1);
}

static void *xmalloc(size_t n) {
    void *p = malloc(n > 0 ? n : 1);
    if (p == NULL)
        die("out of memory%s", "");
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
} options;

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
            "  --svg PATH       loss/perplexity plot (word_lm.svg)\n"
            "  --max-ratio R    exit 2 unless the final validation perplexity is below\n"
            "                   R times the unigram baseline (1)\n"
            "  --help\n",
            SPLIT_BLOCK,
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

/* ---- vocabulary: words <-> ids (open addressing, FNV-1a) ---- */

typedef struct vocab {
    char **words;    /* id -> word */
    int64_t *counts; /* id -> occurrences in the training text */
    int64_t n, cap;
    int64_t *slots; /* hash table of ids, -1 empty; 2 * cap entries */
} vocab;

static uint64_t hash_word(const char *w) {
    uint64_t h = 1469598103934665603ULL;
    for (; *w; w++)
        h = (h ^ (unsigned char)*w) * 1099511628211ULL;
    return h;
}

static int64_t *vocab_slot(vocab *v, const char *w) {
    uint64_t mask = (uint64_t)(2 * v->cap - 1);
    for (uint64_t i = hash_word(w) & mask;; i = (i + 1) & mask)
        if (v->slots[i] < 0 || strcmp(v->words[v->slots[i]], w) == 0)
            return &v->slots[i];
}

static int64_t vocab_find(vocab *v, const char *w) {
    return v->cap == 0 ? -1 : *vocab_slot(v, w);
}

/* The id of w, added (count 0) when new. */
static int64_t vocab_add(vocab *v, const char *w) {
    int64_t id = vocab_find(v, w);
    if (id >= 0)
        return id;
    if (v->n == v->cap) {
        int64_t cap = v->cap ? 2 * v->cap : 1024;
        v->words = realloc(v->words, (size_t)cap * sizeof *v->words);
        v->counts = realloc(v->counts, (size_t)cap * sizeof *v->counts);
        free(v->slots);
        v->slots = xmalloc((size_t)(2 * cap) * sizeof *v->slots);
        if (v->words == NULL || v->counts == NULL)
            die("out of memory%s", "");
        v->cap = cap;
        for (int64_t i = 0; i < 2 * cap; i++)
            v->slots[i] = -1;
        for (int64_t i = 0; i < v->n; i++)
            *vocab_slot(v, v->words[i]) = i;
    }
    v->words[v->n] = strdup(w);
    if (v->words[v->n] == NULL)
        die("out of memory%s", "");
    v->counts[v->n] = 0;
    *vocab_slot(v, w) = v->n;
    return v->n++;
}

static void vocab_free(vocab *v) {
    for (int64_t i = 0; i < v->n; i++)
        free(v->words[i]);
    free(v->words);
    free(v->counts);
    free(v->slots);
}

/* ---- text: files -> lines -> tokens ---- */

/* A growing list of token strings (one buffer, NUL-separated). */
typedef struct toklist {
    char *buf;
    size_t len, cap;
    int64_t n;
} toklist;

static void toklist_push(toklist *t, const char *s, size_t n) {
    if (t->len + n + 1 > t->cap) {
        t->cap = 2 * (t->len + n + 1) + 4096;
        t->buf = realloc(t->buf, t->cap);
        if (t->buf == NULL)
            die("out of memory%s", "");
    }
    memcpy(t->buf + t->len, s, n);
    t->buf[t->len + n] = '\0';
    t->len += n + 1;
    t->n++;
}

static bool word_byte(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

/* Appends the tokens of one line (and <eos> when it has any). */
static void tokenize_line(const char *s, size_t n, toklist *out) {
    char word[256];
    size_t i = 0;
    int64_t before = out->n;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            i++;
        } else if (word_byte(c)) {
            size_t len = 0;
            while (i < n) {
                unsigned char d = (unsigned char)s[i];
                bool inner = (d == '\'' || d == '-') && len > 0 && i + 1 < n &&
                             word_byte((unsigned char)s[i + 1]);
                if (!word_byte(d) && !inner)
                    break;
                if (len + 1 < sizeof word) /* longer words are cut */
                    word[len++] = (char)(d >= 'A' && d <= 'Z' ? d - 'A' + 'a' : d);
                i++;
            }
            toklist_push(out, word, len);
        } else {
            toklist_push(out, s + i, 1);
            i++;
        }
    }
    if (out->n > before)
        toklist_push(out, "<eos>", 5);
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    if (f == NULL)
        die("cannot open %s", path);
    do {
        if (n + 65536 > cap) {
            cap = 2 * cap + 65536;
            buf = realloc(buf, cap + 1);
            if (buf == NULL)
                die("out of memory reading %s", path);
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    if (ferror(f))
        die("cannot read %s", path);
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Tokenises path.  With split, each non-empty line goes to parts[0..2]
 * by its place in its block of SPLIT_BLOCK (*line counts non-empty lines
 * across files); without, everything goes to parts[0]. */
static void tokenize_file(const char *path, toklist *parts, bool split, int64_t *line) {
    size_t len;
    char *text = read_file(path, &len);
    for (size_t start = 0; start < len;) {
        size_t end = start;
        while (end < len && text[end] != '\n')
            end++;
        int part = 0;
        if (split) {
            int64_t k = *line % SPLIT_BLOCK;
            part = k < SPLIT_BLOCK * 90 / 100 ? 0 : k < SPLIT_BLOCK * 95 / 100 ? 1 : 2;
        }
        int64_t before = parts[part].n;
        tokenize_line(text + start, end - start, &parts[part]);
        if (parts[part].n > before)
            (*line)++;
        start = end + 1;
    }
    free(text);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The corpus given as CORPUS: one file, or a folder's regular files. */
static void tokenize_corpus(const char *path, toklist parts[3]) {
    struct stat sb;
    int64_t line = 0;
    if (stat(path, &sb) != 0)
        die("cannot open %s", path);
    if (!S_ISDIR(sb.st_mode)) {
        tokenize_file(path, parts, true, &line);
        return;
    }
    DIR *d = opendir(path);
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    if (d == NULL)
        die("cannot open folder %s", path);
    while ((e = readdir(d)) != NULL) {
        size_t need = strlen(path) + strlen(e->d_name) + 2;
        char *full = xmalloc(need);
        snprintf(full, need, "%s/%s", path, e->d_name);
        if (e->d_name[0] != '.' && lstat(full, &sb) == 0 && S_ISREG(sb.st_mode)) {
            names = realloc(names, (n + 1) * sizeof *names);
            if (names == NULL)
                die("out of memory%s", "");
            names[n++] = full;
        } else {
            free(full);
        }
    }
    closedir(d);
    if (n == 0)
        die("no regular files in %s", path);
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        tokenize_file(names[i], parts, true, &line);
        free(names[i]);
    }
    free(names);
}

/* Token ids of t under v; words not in v become <unk>. */
static int64_t *to_ids(const toklist *t, vocab *v, int64_t unk) {
    int64_t *ids = xmalloc((size_t)t->n * sizeof *ids);
    const char *w = t->buf;
    for (int64_t i = 0; i < t->n; i++, w += strlen(w) + 1) {
        int64_t id = vocab_find(v, w);
        ids[i] = id >= 0 ? id : unk;
    }
    return ids;
}

typedef struct corpus {
    vocab v;
    int64_t *ids[3]; /* train, valid, test token ids */
    int64_t len[3];
    int64_t raw_types; /* distinct training words before --min-count */
} corpus;

static void load_corpus(const options *o, corpus *c) {
    toklist parts[3] = {{0}};
    vocab all = {0};
    int64_t line = 0;
    if (o->train != NULL) {
        tokenize_file(o->train, &parts[0], false, &line);
        tokenize_file(o->valid, &parts[1], false, &line);
        if (o->test != NULL)
            tokenize_file(o->test, &parts[2], false, &line);
    } else {
        tokenize_corpus(o->corpus, parts);
    }
    /* Count the training words, then keep those seen min_count times. */
    const char *w = parts[0].buf;
    for (int64_t i = 0; i < parts[0].n; i++, w += strlen(w) + 1) {
        int64_t id = vocab_add(&all, w);
        all.counts[id]++;
    }
    memset(c, 0, sizeof *c);
    c->raw_types = all.n;
    int64_t unk = vocab_add(&c->v, "<unk>");
    vocab_add(&c->v, "<eos>");
    for (int64_t i = 0; i < all.n; i++)
        if (all.counts[i] >= o->min_count)
            vocab_add(&c->v, all.words[i]);
    vocab_free(&all);
    for (int k = 0; k < 3; k++) {
        c->ids[k] = to_ids(&parts[k], &c->v, unk);
        c->len[k] = parts[k].n;
        free(parts[k].buf);
    }
    for (int64_t i = 0; i < c->len[0]; i++)
        c->v.counts[c->ids[0][i]]++;
}

/* ---- batches ---- */

/* PyTorch's batchify: B streams, each a contiguous stretch of the text,
 * stored row-major [rows][B] (row r holds token r of every stream), so the
 * rows of a segment are one contiguous block. */
typedef struct batched {
    int64_t *data;
    int64_t rows, b;
} batched;

static batched batchify(const int64_t *ids, int64_t n, int64_t b) {
    batched d = {.rows = n / b, .b = b};
    d.data = xmalloc((size_t)(d.rows * b) * sizeof *d.data);
    for (int64_t s = 0; s < b; s++)
        for (int64_t r = 0; r < d.rows; r++)
            d.data[r * b + s] = ids[s * d.rows + r];
    return d;
}

/* Perplexity of the positions the model predicts (rows 1..rows-1) under
 * add-one-smoothed unigram frequencies of the training text. */
static double unigram_ppl(const batched *d, const vocab *v, int64_t train_len) {
    double nll = 0;
    int64_t n = 0;
    for (int64_t r = 1; r < d->rows; r++)
        for (int64_t s = 0; s < d->b; s++, n++) {
            int64_t id = d->data[r * d->b + s];
            nll -= log((double)(v->counts[id] + 1) / (double)(train_len + v->n));
        }
    return n > 0 ? exp(nll / (double)n) : NAN;
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
    float *v = xmalloc((size_t)n * sizeof *v);
    yg_tensor *t = NULL;
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)((2 * uniform() - 1) * bound);
    CHECK(yg_tensor_from_data(v, sizes, cols > 0 ? 2 : 1, YG_FLOAT32, &t));
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
    yg_tensor **cur = xmalloc((size_t)steps * sizeof *cur),
              **next = xmalloc((size_t)steps * sizeof *next);
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
        st = yg_cross_entropy(logits, in[1], NULL, 1, -100, &out[0]);
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
    }
}

/* The tokens and targets of the segment starting at row i. */
static void segment_data(const batched *d, int64_t i, int64_t steps, yg_tensor **x, yg_tensor **y) {
    int64_t xs[2] = {steps, d->b}, ys[1] = {steps * d->b};
    CHECK(yg_tensor_from_data(&d->data[i * d->b], xs, 2, YG_INT64, x));
    CHECK(yg_tensor_from_data(&d->data[(i + 1) * d->b], ys, 1, YG_INT64, y));
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

/* What the plot shows. */
typedef struct curve {
    double *x, *y; /* epochs (fractional), loss in nats */
    int64_t n, cap;
} curve;

static void curve_add(curve *c, double x, double y) {
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->x = realloc(c->x, (size_t)c->cap * sizeof *c->x);
        c->y = realloc(c->y, (size_t)c->cap * sizeof *c->y);
        if (c->x == NULL || c->y == NULL)
            die("out of memory%s", "");
    }
    c->x[c->n] = x;
    c->y[c->n++] = y;
}

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
            curve_add(
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

/* ---- the plot ---- */

/* A "nice" tick step (1, 2 or 5 times a power of ten) giving about n
 * ticks over span. */
static double nice_step(double span, int n) {
    double raw = span / n, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

static void xml_escaped(FILE *f, const char *s) {
    for (; *s; s++)
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else
            fputc(*s, f);
}

typedef struct plot {
    double x0, x1, y0, y1;           /* data ranges */
    double left, top, width, height; /* plot area in pixels */
} plot;

static double px(const plot *p, double x) {
    return p->left + (x - p->x0) / (p->x1 - p->x0) * p->width;
}

static double py(const plot *p, double y) {
    return p->top + (p->y1 - y) / (p->y1 - p->y0) * p->height;
}

static void polyline(FILE *f, const plot *p, const curve *c, const char *color, bool dots) {
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", color);
    for (int64_t i = 0; i < c->n; i++)
        if (isfinite(c->y[i]))
            fprintf(f, "%s%.1f,%.1f", i ? " " : "", px(p, c->x[i]), py(p, c->y[i]));
    fprintf(f, "\"/>\n");
    for (int64_t i = 0; dots && i < c->n; i++)
        if (isfinite(c->y[i]))
            fprintf(f,
                    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n",
                    px(p, c->x[i]),
                    py(p, c->y[i]),
                    color);
}

/* Writes the loss curves (left axis: loss in nats; right axis: the same
 * heights as perplexity) with the unigram baseline, as a standalone SVG. */
static void write_svg(const char *path,
                      const char *title,
                      const curve *train,
                      const curve *valid,
                      double unigram_loss,
                      int64_t epochs) {
    FILE *f = fopen(path, "w");
    plot p = {.x0 = 0, .x1 = (double)epochs, .left = 70, .top = 40, .width = 560, .height = 330};
    double lo = unigram_loss, hi = unigram_loss;
    if (f == NULL) {
        fprintf(stderr, "word_lm: cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    for (int k = 0; k < 2; k++) {
        const curve *c = k ? valid : train;
        for (int64_t i = 0; i < c->n; i++)
            if (isfinite(c->y[i])) {
                lo = fmin(lo, c->y[i]);
                hi = fmax(hi, c->y[i]);
            }
    }
    if (!isfinite(lo) || !isfinite(hi) || hi - lo < 1e-3) {
        lo = isfinite(lo) ? lo - 0.5 : 0;
        hi = lo + 1;
    }
    double ystep = nice_step(hi - lo, 6);
    p.y0 = floor(lo / ystep) * ystep;
    p.y1 = ceil(hi / ystep) * ystep;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"760\" height=\"470\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n"
            "<rect width=\"760\" height=\"470\" fill=\"white\"/>\n"
            "<text x=\"380\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">");
    xml_escaped(f, title);
    fprintf(f, "</text>\n");
    /* Grid, left ticks (loss) and right ticks (perplexity). */
    for (double y = p.y0; y <= p.y1 + 1e-9; y += ystep) {
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n",
                p.left,
                py(&p, y),
                p.left + p.width,
                py(&p, y),
                p.left - 6,
                py(&p, y) + 4,
                y);
    }
    for (int e10 = (int)floor(p.y0 / log(10)); e10 <= (int)ceil(p.y1 / log(10)); e10++)
        for (int k = 0; k < 3; k++) {
            double ppl = (k == 0 ? 1 : k == 1 ? 2 : 5) * pow(10, e10), y = log(ppl);
            if (y < p.y0 || y > p.y1 || ppl < 1)
                continue;
            fprintf(f,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n"
                    "<text x=\"%.1f\" y=\"%.1f\">%g</text>\n",
                    p.left + p.width,
                    py(&p, y),
                    p.left + p.width + 5,
                    py(&p, y),
                    p.left + p.width + 8,
                    py(&p, y) + 4,
                    ppl);
        }
    double xstep = nice_step((double)epochs, epochs < 10 ? (int)epochs : 10);
    if (xstep < 1)
        xstep = 1;
    for (double x = 0; x <= (double)epochs + 1e-9; x += xstep)
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n",
                px(&p, x),
                p.top + p.height,
                px(&p, x),
                p.top + p.height + 5,
                px(&p, x),
                p.top + p.height + 18,
                x);
    fprintf(f,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
            "stroke=\"black\"/>\n"
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">epoch</text>\n"
            "<text transform=\"translate(22 %.1f) rotate(-90)\" text-anchor=\"middle\">"
            "cross entropy (nats per token)</text>\n"
            "<text transform=\"translate(%.1f %.1f) rotate(90)\" text-anchor=\"middle\">"
            "perplexity</text>\n",
            p.left,
            p.top,
            p.width,
            p.height,
            p.left + p.width / 2,
            p.top + p.height + 36,
            p.top + p.height / 2,
            p.left + p.width + 58,
            p.top + p.height / 2);
    /* The curves, then the legend. */
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888888\" "
            "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n",
            p.left,
            py(&p, unigram_loss),
            p.left + p.width,
            py(&p, unigram_loss));
    polyline(f, &p, train, "#1f77b4", false);
    polyline(f, &p, valid, "#ff7f0e", true);
    const char *names[3] = {"train (running, with dropout)", "validation", "unigram baseline"};
    const char *colors[3] = {"#1f77b4", "#ff7f0e", "#888888"};
    /* The legend, in a row under the plot (inside it would hide a curve). */
    const double offset[3] = {0, 250, 380};
    double ly = p.top + p.height + 58;
    for (int k = 0; k < 3; k++) {
        double lx = p.left + offset[k];
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"2\"%s/>\n<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                lx,
                ly - 4,
                lx + 28,
                ly - 4,
                colors[k],
                k == 2 ? " stroke-dasharray=\"6 4\"" : "",
                lx + 36,
                ly,
                names[k]);
    }
    fprintf(f, "</svg>\n");
    if (fclose(f) != 0)
        fprintf(stderr, "word_lm: cannot write %s: %s\n", path, strerror(errno));
}

/* ---- main ---- */

int main(int argc, char **argv) {
    options o = parse_args(argc, argv);
    corpus c;
    model m;
    curve train_curve = {0}, valid_curve = {0};
    stats s = {0};

    load_corpus(&o, &c);
    printf("corpus: %s | vocabulary %lld (of %lld distinct training tokens; min count %lld) | "
           "tokens: train %lld, valid %lld, test %lld\n",
           o.train != NULL ? o.train : o.corpus,
           (long long)c.v.n,
           (long long)c.raw_types,
           (long long)o.min_count,
           (long long)c.len[0],
           (long long)c.len[1],
           (long long)c.len[2]);
    batched train = batchify(c.ids[0], c.len[0], o.batch);
    batched valid = batchify(c.ids[1], c.len[1], EVAL_BATCH);
    batched test = batchify(c.ids[2], c.len[2], EVAL_BATCH);
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
    double unigram = unigram_ppl(&valid, &c.v, c.len[0]);

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
        curve_add(&valid_curve, (double)epoch, val_loss);
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
               unigram_ppl(&test, &c.v, c.len[0]));
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
    write_svg(o.svg, title, &train_curve, &valid_curve, log(unigram), o.epochs);
    printf("plot: %s\n", o.svg);

    int rc = val_ppl < o.max_ratio * unigram ? 0 : 2;
    if (rc != 0)
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
    vocab_free(&c.v);
    return rc;
}
