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
