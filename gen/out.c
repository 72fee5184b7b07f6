/*
 * out.c - memory helpers, the string builder every emitter writes into, and
 * write-if-changed.
 *
 * Generated files are written only when their text differs from what is on
 * disk: the build lists them as byproducts, so rewriting an unchanged file
 * would recompile the library after every spec edit (torchgen does the same).
 * Allocation failure ends the process with a message; a build tool has no
 * better recovery, and it keeps every other function free of OOM paths.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "gen.h"

static void out_of_memory(void)
{
    fputs("yagrad-gen: error: out of memory\n", stderr);
    exit(1);
}

void *gen_xmalloc(size_t n)
{
    void *p = malloc(n == 0 ? 1 : n);

    if (p == NULL)
        out_of_memory();
    return p;
}

void *gen_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n == 0 ? 1 : n, size == 0 ? 1 : size);

    if (p == NULL)
        out_of_memory();
    return p;
}

void *gen_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n == 0 ? 1 : n);

    if (q == NULL)
        out_of_memory();
    return q;
}

char *gen_xstrdup(const char *s)
{
    return gen_xstrndup(s, strlen(s));
}

char *gen_xstrndup(const char *s, size_t n)
{
    char *p = gen_xmalloc(n + 1);

    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *gen_xprintf(const char *fmt, ...)
{
    gen_sb sb = {0};
    va_list ap;

    va_start(ap, fmt);
    gen_sb_vprintf(&sb, fmt, ap);
    va_end(ap);
    return gen_sb_take(&sb);
}

static void sb_reserve(gen_sb *sb, size_t extra)
{
    size_t need = sb->len + extra + 1;

    if (need <= sb->cap)
        return;
    size_t cap = sb->cap == 0 ? 256 : sb->cap;
    while (cap < need)
        cap *= 2;
    sb->buf = gen_xrealloc(sb->buf, cap);
    sb->cap = cap;
}

void gen_sb_putn(gen_sb *sb, const char *s, size_t n)
{
    sb_reserve(sb, n);
    memcpy(sb->buf + sb->len, s, n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
}

void gen_sb_puts(gen_sb *sb, const char *s)
{
    gen_sb_putn(sb, s, strlen(s));
}

void gen_sb_vprintf(gen_sb *sb, const char *fmt, va_list ap)
{
    va_list ap2;

    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return;
    sb_reserve(sb, (size_t)n);
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
}

void gen_sb_printf(gen_sb *sb, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    gen_sb_vprintf(sb, fmt, ap);
    va_end(ap);
}

char *gen_sb_take(gen_sb *sb)
{
    char *s = sb->buf != NULL ? sb->buf : gen_xstrdup("");

    sb->buf = NULL;
    sb->len = 0;
    sb->cap = 0;
    return s;
}

void gen_sb_free(gen_sb *sb)
{
    free(sb->buf);
    sb->buf = NULL;
    sb->len = 0;
    sb->cap = 0;
}

/* mkdir -p for the directory part of path. */
static bool make_parent_dirs(const char *path)
{
    char *copy = gen_xstrdup(path);
    bool ok = true;

    for (char *p = copy + 1; *p != '\0'; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(copy, 0777) != 0 && errno != EEXIST) {
            gen_error((gen_loc){0}, "cannot create directory %s: %s", copy, strerror(errno));
            ok = false;
            break;
        }
        *p = '/';
    }
    free(copy);
    return ok;
}

/* Whether the file at path holds exactly text. */
static bool file_equals(const char *path, const char *text)
{
    FILE *f = fopen(path, "rb");
    size_t len = strlen(text);
    bool equal = false;

    if (f == NULL)
        return false;
    char *buf = gen_xmalloc(len + 1);
    size_t got = fread(buf, 1, len + 1, f);
    equal = got == len && memcmp(buf, text, len) == 0;
    free(buf);
    fclose(f);
    return equal;
}

bool gen_write_if_changed(const char *dir, const char *relpath, const char *text)
{
    char *path = gen_xprintf("%s/%s", dir, relpath);
    char *tmp = NULL;
    bool ok = false;
    FILE *f = NULL;

    if (file_equals(path, text)) {
        ok = true;
        goto out;
    }
    if (!make_parent_dirs(path))
        goto out;
    /* Write a temporary file and rename it over the old one, so that an
     * interrupted run never leaves a truncated source behind. */
    tmp = gen_xprintf("%s.tmp", path);
    f = fopen(tmp, "wb");
    if (f == NULL) {
        gen_error((gen_loc){0}, "cannot write %s: %s", tmp, strerror(errno));
        goto out;
    }
    size_t len = strlen(text);
    if (fwrite(text, 1, len, f) != len) {
        gen_error((gen_loc){0}, "cannot write %s: %s", tmp, strerror(errno));
        goto out;
    }
    if (fclose(f) != 0) {
        f = NULL;
        gen_error((gen_loc){0}, "cannot write %s: %s", tmp, strerror(errno));
        goto out;
    }
    f = NULL;
    if (rename(tmp, path) != 0) {
        gen_error((gen_loc){0}, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        goto out;
    }
    ok = true;
out:
    if (f != NULL) {
        fclose(f);
        remove(tmp);
    }
    free(tmp);
    free(path);
    return ok;
}
