/*
 * text.h - a growing string buffer and the number and string formatting
 * shared by the IR printer and the JSON and DOT dumpers.  Private to
 * runtime/jit/.
 *
 * The buffer records running out of memory once and then ignores further
 * writes, so a printer writes everything and checks one flag at the end
 * (the way stdio's ferror works), instead of testing every append.
 */
#ifndef YAGRAD_JIT_TEXT_H
#define YAGRAD_JIT_TEXT_H

#include "core/core.h"
#include "yagrad/jit.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct yg_sb {
    char *data;
    size_t len, cap;
    bool failed; /* an append ran out of memory */
} yg_sb;

void yg__sb_putc(yg_sb *sb, char c);
void yg__sb_puts(yg_sb *sb, const char *s);
void yg__sb_put(yg_sb *sb, const char *s, size_t len);
void yg__sb_printf(yg_sb *sb, const char *fmt, ...) YG__PRINTF(2, 3);
void yg__sb_indent(yg_sb *sb, int n);

/* The shortest decimal text that reads back (strtod) as exactly v; "inf",
 * "-inf", "nan" for non-finite values.  With float_marker, text that would
 * read as an integer gets ".0" appended ("1.0"). */
void yg__sb_double(yg_sb *sb, double v, bool float_marker);

/* The shortest decimal text that reads back (strtof) as exactly v. */
void yg__sb_float32(yg_sb *sb, float v);

/* s as a double-quoted string: \" \\ \n \t escaped, other bytes outside
 * printable ASCII as \xHH. */
void yg__sb_quoted(yg_sb *sb, const char *s);

/* s as a JSON string (\uXXXX for control bytes; other bytes as they are). */
void yg__sb_json_string(yg_sb *sb, const char *s);

/* Hands the text to *out (NUL-terminated) and resets sb; on an earlier
 * out-of-memory fails with "<what>: out of memory" and frees the text. */
yg_status yg__sb_finish(yg_sb *sb, const char *what, char **out);

/* A value type in the IR's text form: "Tensor(dtype=float32, sizes=[2,
 * ?])", "Tensor", "None" (printer.c). */
void yg__ir_print_type(yg_sb *sb, const yg_ir_type *t);

/* Frees the text.  NULL-safe. */
void yg__sb_free(yg_sb *sb);

#endif /* YAGRAD_JIT_TEXT_H */
