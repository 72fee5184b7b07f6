/*
 * data.c - the token data of gpt2.h: files in the hand-written C GPT-2
 * trainers' format, and byte-level tokens of text.
 */
#define _DEFAULT_SOURCE /* DT_REG, DT_UNKNOWN */

#include "gpt2.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TOKENS_MAGIC   20240520
#define TOKENS_VERSION 1
#define HEADER_INTS    256

void gpt2_tokens_free(gpt2_tokens *t) {
    free(t->ids);
    t->ids = NULL;
    t->n = 0;
}

static uint32_t le32(const unsigned char *b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

yg_status gpt2_tokens_read(const char *path, gpt2_tokens *out) {
    unsigned char head[HEADER_INTS * 4];
    yg_status st = YG_OK;
    FILE *f = fopen(path, "rb");

    out->ids = NULL;
    out->n = 0;
    if (f == NULL)
        return yg_set_error(YG_ERR_IO, "gpt2: cannot open %s: %s", path, strerror(errno));
    if (fread(head, 1, sizeof head, f) != sizeof head) {
        st = yg_set_error(YG_ERR_IO, "gpt2: %s: shorter than the 1024-byte header", path);
        goto done;
    }
    uint32_t magic = le32(head), version = le32(head + 4), n = le32(head + 8);
    if (magic != TOKENS_MAGIC || version != TOKENS_VERSION) {
        st = yg_set_error(YG_ERR_IO,
                          "gpt2: %s: not a token file (magic %u, version %u; expected %u, %u)",
                          path,
                          magic,
                          version,
                          TOKENS_MAGIC,
                          TOKENS_VERSION);
        goto done;
    }
    out->ids = malloc((size_t)n * 2 + 2);
    if (out->ids == NULL) {
        st = yg_set_error(YG_ERR_OUT_OF_MEMORY, "gpt2: %s: out of memory for %u tokens", path, n);
        goto done;
    }
    unsigned char *raw = (unsigned char *)out->ids;
    if (fread(raw, 2, n, f) != n) {
        st = yg_set_error(YG_ERR_IO, "gpt2: %s: the header says %u tokens, the file has fewer", path, n);
        goto done;
    }
    for (uint32_t i = 0; i < n; i++) /* little-endian on any host */
        out->ids[i] = (uint16_t)(raw[2 * i] | raw[2 * i + 1] << 8);
    out->n = n;
done:
    fclose(f);
    if (st != YG_OK)
        gpt2_tokens_free(out);
    return st;
}

yg_status gpt2_tokens_write(const char *path, const gpt2_tokens *t) {
    unsigned char head[HEADER_INTS * 4] = {0};
    const uint32_t v[3] = {TOKENS_MAGIC, TOKENS_VERSION, (uint32_t)t->n};
    FILE *f;
    bool ok;

    if (t->n < 0 || t->n > UINT32_MAX)
        return yg_set_error(YG_ERR_INVALID_ARGUMENT, "gpt2: %lld tokens do not fit a token file", (long long)t->n);
    for (int i = 0; i < 3; i++)
        for (int b = 0; b < 4; b++)
            head[4 * i + b] = (unsigned char)(v[i] >> (8 * b));
    f = fopen(path, "wb");
    if (f == NULL)
        return yg_set_error(YG_ERR_IO, "gpt2: cannot write %s: %s", path, strerror(errno));
    ok = fwrite(head, 1, sizeof head, f) == sizeof head;
    for (int64_t i = 0; ok && i < t->n; i++) {
        const unsigned char b[2] = {(unsigned char)(t->ids[i] & 0xff), (unsigned char)(t->ids[i] >> 8)};
        ok = fwrite(b, 1, 2, f) == 2;
    }
    ok = fclose(f) == 0 && ok;
    return ok ? YG_OK : yg_set_error(YG_ERR_IO, "gpt2: writing %s failed", path);
}

/* Appends the bytes of the file at path to out. */
static yg_status append_file(const char *path, gpt2_tokens *out, int64_t *cap) {
    FILE *f = fopen(path, "rb");
    unsigned char buf[1 << 16];
    size_t got;

    if (f == NULL)
        return yg_set_error(YG_ERR_IO, "gpt2: cannot open %s: %s", path, strerror(errno));
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
        if (out->n + (int64_t)got > *cap) {
            int64_t nc = 2 * *cap + (int64_t)got;
            uint16_t *p = realloc(out->ids, (size_t)nc * sizeof *p);
            if (p == NULL) {
                fclose(f);
                return yg_set_error(YG_ERR_OUT_OF_MEMORY, "gpt2: out of memory reading %s", path);
            }
            out->ids = p;
            *cap = nc;
        }
        for (size_t i = 0; i < got; i++)
            out->ids[out->n++] = buf[i];
    }
    fclose(f);
    return YG_OK;
}

#define TOKENIZER_MAGIC 20240328

void gpt2_tokenizer_free(gpt2_tokenizer *t) {
    for (int64_t i = 0; t->bytes != NULL && i < t->n; i++)
        free(t->bytes[i]);
    free(t->bytes);
    free(t->len);
    *t = (gpt2_tokenizer){.eot = -1};
}

yg_status gpt2_tokenizer_read(const char *path, gpt2_tokenizer *out) {
    unsigned char head[HEADER_INTS * 4];
    yg_status st = YG_OK;
    FILE *f = fopen(path, "rb");

    *out = (gpt2_tokenizer){.eot = -1};
    if (f == NULL)
        return yg_set_error(YG_ERR_IO, "gpt2: cannot open %s: %s", path, strerror(errno));
    if (fread(head, 1, sizeof head, f) != sizeof head) {
        st = yg_set_error(YG_ERR_IO, "gpt2: %s: shorter than the 1024-byte header", path);
        goto done;
    }
    uint32_t magic = le32(head), version = le32(head + 4), n = le32(head + 8);
    if (magic != TOKENIZER_MAGIC || (version != 1 && version != 2)) {
        st = yg_set_error(YG_ERR_IO,
                          "gpt2: %s: not a tokenizer file (magic %u, version %u; expected %u, 1 or 2)",
                          path,
                          magic,
                          version,
                          TOKENIZER_MAGIC);
        goto done;
    }
    out->bytes = calloc(n > 0 ? n : 1, sizeof *out->bytes);
    out->len = calloc(n > 0 ? n : 1, 1);
    if (out->bytes == NULL || out->len == NULL) {
        st = yg_set_error(YG_ERR_OUT_OF_MEMORY, "gpt2: %s: out of memory for %u tokens", path, n);
        goto done;
    }
    out->n = n;
    out->eot = version == 2 ? (int64_t)le32(head + 12) : -1;
    for (uint32_t i = 0; i < n; i++) {
        int len = fgetc(f);
        if (len == EOF || (out->bytes[i] = malloc((size_t)len + 1)) == NULL ||
            fread(out->bytes[i], 1, (size_t)len, f) != (size_t)len) {
            st = yg_set_error(YG_ERR_IO, "gpt2: %s: ends inside token %u of %u", path, i, n);
            goto done;
        }
        out->len[i] = (uint8_t)len;
    }
done:
    fclose(f);
    if (st != YG_OK)
        gpt2_tokenizer_free(out);
    return st;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

yg_status gpt2_tokens_from_text(const char *path, gpt2_tokens *out) {
    struct stat sb;
    int64_t cap = 0;
    yg_status st = YG_OK;

    out->ids = NULL;
    out->n = 0;
    if (stat(path, &sb) != 0)
        return yg_set_error(YG_ERR_IO, "gpt2: cannot read %s: %s", path, strerror(errno));
    if (!S_ISDIR(sb.st_mode)) {
        st = append_file(path, out, &cap);
    } else {
        /* the regular files of the folder, in name order */
        DIR *d = opendir(path);
        struct dirent *e;
        char **names = NULL;
        size_t n = 0, ncap = 0;
        if (d == NULL)
            return yg_set_error(YG_ERR_IO, "gpt2: cannot list %s: %s", path, strerror(errno));
        while ((e = readdir(d)) != NULL && st == YG_OK) {
            char full[4096];
            struct stat fs;
            snprintf(full, sizeof full, "%s/%s", path, e->d_name);
            if (lstat(full, &fs) != 0 || !S_ISREG(fs.st_mode))
                continue;
            if (n == ncap) {
                ncap = ncap ? 2 * ncap : 32;
                char **p = realloc(names, ncap * sizeof *p);
                if (p == NULL) {
                    st = yg_set_error(YG_ERR_OUT_OF_MEMORY, "gpt2: out of memory listing %s", path);
                    break;
                }
                names = p;
            }
            names[n] = strdup(full);
            if (names[n] == NULL)
                st = yg_set_error(YG_ERR_OUT_OF_MEMORY, "gpt2: out of memory listing %s", path);
            else
                n++;
        }
        closedir(d);
        if (names != NULL)
            qsort(names, n, sizeof *names, by_name);
        for (size_t i = 0; i < n; i++) {
            if (st == YG_OK)
                st = append_file(names[i], out, &cap);
            free(names[i]);
        }
        free(names);
    }
    if (st == YG_OK && out->n < 2)
        st = yg_set_error(YG_ERR_IO, "gpt2: %s holds fewer than 2 bytes of text", path);
    if (st != YG_OK)
        gpt2_tokens_free(out);
    return st;
}
