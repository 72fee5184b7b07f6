/*
 * word_lm_corpus.c - the text side of the word_lm example: files to
 * lines to tokens (the rules are in word_lm.c's header comment), the
 * vocabulary (an open-addressing hash table of words, FNV-1a), the split
 * of one corpus into train/valid/test by blocks of lines, PyTorch's
 * batchify, and the unigram baseline.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, lstat */

#include "word_lm.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- vocabulary: words <-> ids (open addressing, FNV-1a) ---- */

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
        v->slots = wl_xmalloc((size_t)(2 * cap) * sizeof *v->slots);
        if (v->words == NULL || v->counts == NULL)
            wl_die("out of memory%s", "");
        v->cap = cap;
        for (int64_t i = 0; i < 2 * cap; i++)
            v->slots[i] = -1;
        for (int64_t i = 0; i < v->n; i++)
            *vocab_slot(v, v->words[i]) = i;
    }
    v->words[v->n] = strdup(w);
    if (v->words[v->n] == NULL)
        wl_die("out of memory%s", "");
    v->counts[v->n] = 0;
    *vocab_slot(v, w) = v->n;
    return v->n++;
}

void wl_vocab_free(vocab *v) {
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
            wl_die("out of memory%s", "");
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
        wl_die("cannot open %s", path);
    do {
        if (n + 65536 > cap) {
            cap = 2 * cap + 65536;
            buf = realloc(buf, cap + 1);
            if (buf == NULL)
                wl_die("out of memory reading %s", path);
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    if (ferror(f))
        wl_die("cannot read %s", path);
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Tokenises path.  With split, each non-empty line goes to parts[0..2]
 * by its place in its block of WL_SPLIT_BLOCK (*line counts non-empty lines
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
            int64_t k = *line % WL_SPLIT_BLOCK;
            part = k < WL_SPLIT_BLOCK * 90 / 100 ? 0 : k < WL_SPLIT_BLOCK * 95 / 100 ? 1 : 2;
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
        wl_die("cannot open %s", path);
    if (!S_ISDIR(sb.st_mode)) {
        tokenize_file(path, parts, true, &line);
        return;
    }
    DIR *d = opendir(path);
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    if (d == NULL)
        wl_die("cannot open folder %s", path);
    while ((e = readdir(d)) != NULL) {
        size_t need = strlen(path) + strlen(e->d_name) + 2;
        char *full = wl_xmalloc(need);
        snprintf(full, need, "%s/%s", path, e->d_name);
        if (e->d_name[0] != '.' && lstat(full, &sb) == 0 && S_ISREG(sb.st_mode)) {
            names = realloc(names, (n + 1) * sizeof *names);
            if (names == NULL)
                wl_die("out of memory%s", "");
            names[n++] = full;
        } else {
            free(full);
        }
    }
    closedir(d);
    if (n == 0)
        wl_die("no regular files in %s", path);
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        tokenize_file(names[i], parts, true, &line);
        free(names[i]);
    }
    free(names);
}

/* Token ids of t under v; words not in v become <unk>. */
static int64_t *to_ids(const toklist *t, vocab *v, int64_t unk) {
    int64_t *ids = wl_xmalloc((size_t)t->n * sizeof *ids);
    const char *w = t->buf;
    for (int64_t i = 0; i < t->n; i++, w += strlen(w) + 1) {
        int64_t id = vocab_find(v, w);
        ids[i] = id >= 0 ? id : unk;
    }
    return ids;
}

void wl_load_corpus(const wl_corpus_options *o, corpus *c) {
    toklist parts[3] = {{0}};
    vocab all = {0};
    int64_t line = 0;
    if (o->path == NULL) {
        tokenize_file(o->train, &parts[0], false, &line);
        tokenize_file(o->valid, &parts[1], false, &line);
        if (o->test != NULL)
            tokenize_file(o->test, &parts[2], false, &line);
    } else {
        tokenize_corpus(o->path, parts);
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
        if (all.counts[i] >= o->min_count) {
            vocab_add(&c->v, all.words[i]);
            c->kept_types++;
        }
    wl_vocab_free(&all);
    for (int k = 0; k < 3; k++) {
        c->ids[k] = to_ids(&parts[k], &c->v, unk);
        c->len[k] = parts[k].n;
        free(parts[k].buf);
    }
    for (int64_t i = 0; i < c->len[0]; i++)
        c->v.counts[c->ids[0][i]]++;
}

/* ---- batches ---- */

batched wl_batchify(const int64_t *ids, int64_t n, int64_t b) {
    batched d = {.rows = n / b, .b = b};
    d.data = wl_xmalloc((size_t)(d.rows * b) * sizeof *d.data);
    for (int64_t s = 0; s < b; s++)
        for (int64_t r = 0; r < d.rows; r++)
            d.data[r * b + s] = ids[s * d.rows + r];
    return d;
}

double wl_unigram_ppl(const batched *d, const vocab *v, int64_t train_len) {
    double nll = 0;
    int64_t n = 0;
    for (int64_t r = 1; r < d->rows; r++)
        for (int64_t s = 0; s < d->b; s++, n++) {
            int64_t id = d->data[r * d->b + s];
            nll -= log((double)(v->counts[id] + 1) / (double)(train_len + v->n));
        }
    return n > 0 ? exp(nll / (double)n) : NAN;
}
