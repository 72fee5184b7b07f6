/*
 * diag.c - error reporting for yagrad-gen.
 *
 * gen reports every error it finds, not just the first, so a person fixing
 * the specs sees them all in one build.  Each error is printed at once in
 * the compiler format "specs/<file>.yaml:LINE:COL: error: message" (which
 * editors and CI logs link to) and counted; the driver exits with status 1
 * when the count is not zero and then writes nothing.
 */
#include <stdarg.h>
#include <stdio.h>

#include "gen.h"

static int error_count;

void gen_error(gen_loc loc, const char *fmt, ...)
{
    va_list ap;

    if (loc.file != NULL && loc.line > 0 && loc.col > 0)
        fprintf(stderr, "%s:%d:%d: error: ", loc.file, loc.line, loc.col);
    else if (loc.file != NULL && loc.line > 0)
        fprintf(stderr, "%s:%d: error: ", loc.file, loc.line);
    else if (loc.file != NULL)
        fprintf(stderr, "%s: error: ", loc.file);
    else
        fprintf(stderr, "yagrad-gen: error: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    error_count++;
}

int gen_error_count(void)
{
    return error_count;
}
