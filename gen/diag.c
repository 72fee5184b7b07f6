/*
 * diag.c - error reporting for yagrad-gen.
 *
 * gen reports every error it finds, not just the first, so a person fixing
 * the specs sees them all in one build.  Each error is printed at once in
 * the compiler format "specs/<file>.yaml:LINE:COL: error: ENTRY: message"
 * (which editors and CI logs link to; ENTRY names the op, "sum.dim", as
 * runtime messages start with the op) and counted; the driver exits with status 1
 * when the count is not zero and then writes nothing.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

static int error_count;
static bool quiet;

static void verror(const char *entry, gen_loc loc, const char *fmt, va_list ap)
{
    error_count++;
    if (quiet)
        return;
    if (loc.file != NULL && loc.line > 0 && loc.col > 0)
        fprintf(stderr, "%s:%d:%d: error: ", loc.file, loc.line, loc.col);
    else if (loc.file != NULL && loc.line > 0)
        fprintf(stderr, "%s:%d: error: ", loc.file, loc.line);
    else if (loc.file != NULL)
        fprintf(stderr, "%s: error: ", loc.file);
    else
        fprintf(stderr, "yagrad-gen: error: ");
    if (entry != NULL)
        fprintf(stderr, "%s: ", entry);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void gen_error(gen_loc loc, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    verror(NULL, loc, fmt, ap);
    va_end(ap);
}

void gen_error_in(const char *entry, gen_loc loc, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    verror(entry, loc, fmt, ap);
    va_end(ap);
}

int gen_error_count(void)
{
    return error_count;
}

void gen_diag_reset(bool be_quiet)
{
    error_count = 0;
    quiet = be_quiet;
}

size_t gen_edit_distance(const char *a, const char *b)
{
    /* Optimal string alignment: insertions, deletions, substitutions and
     * transpositions of neighbours ("epx" is one edit from "exp"). */
    size_t la = strlen(a), lb = strlen(b), w = lb + 1;
    size_t *d = gen_xcalloc((la + 1) * w, sizeof(size_t));

    for (size_t i = 0; i <= la; i++)
        d[i * w] = i;
    for (size_t j = 0; j <= lb; j++)
        d[j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t best = d[(i - 1) * w + j - 1] + (a[i - 1] != b[j - 1]);
            if (d[(i - 1) * w + j] + 1 < best)
                best = d[(i - 1) * w + j] + 1;
            if (d[i * w + j - 1] + 1 < best)
                best = d[i * w + j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[(i - 2) * w + j - 2] + 1 < best)
                best = d[(i - 2) * w + j - 2] + 1;
            d[i * w + j] = best;
        }
    }
    size_t r = d[la * w + lb];
    free(d);
    return r;
}

const char *gen_nearest_name(const char *want, const char *const *candidates, int n)
{
    const char *best = NULL;
    size_t best_d = 0;

    for (int i = 0; i < n; i++) {
        if (candidates[i] == NULL || strcmp(candidates[i], want) == 0)
            continue;
        size_t d = gen_edit_distance(candidates[i], want);
        if (best == NULL || d < best_d) {
            best = candidates[i];
            best_d = d;
        }
    }
    if (best == NULL || best_d > 2 || 2 * best_d >= strlen(want))
        return NULL;
    return best;
}
