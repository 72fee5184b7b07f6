/*
 * text.c - see text.h.
 *
 * Numbers print in their shortest exact form: the printer tries 1, 2, ...
 * significant digits until the text reads back as the same value (at most
 * 17 tries for a double, 9 for a float32).  That keeps "0.1" as "0.1"
 * rather than "0.10000000000000001" and still makes print -> parse ->
 * print reproduce the text byte for byte.  The C library's strtod and
 * snprintf are locale-dependent; yagrad never calls setlocale, and a host
 * that sets LC_NUMERIC to a comma locale gets text it cannot read back
 * (docs/ir.md notes this).
 */
#include "jit/ir/text.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(yg_sb *sb, size_t extra) {
    if (sb->failed)
        return false;
    if (sb->len + extra + 1 <= sb->cap)
        return true;
    size_t cap = sb->cap == 0 ? 256 : sb->cap;
    while (cap < sb->len + extra + 1)
        cap *= 2;
    char *d = realloc(sb->data, cap);
    if (d == NULL) {
        sb->failed = true;
        return false;
    }
    sb->data = d;
    sb->cap = cap;
    return true;
}

void yg__sb_put(yg_sb *sb, const char *s, size_t len) {
    if (!reserve(sb, len))
        return;
    memcpy(sb->data + sb->len, s, len);
    sb->len += len;
    sb->data[sb->len] = '\0';
}

void yg__sb_putc(yg_sb *sb, char c) {
    yg__sb_put(sb, &c, 1);
}

void yg__sb_puts(yg_sb *sb, const char *s) {
    yg__sb_put(sb, s, strlen(s));
}

void yg__sb_printf(yg_sb *sb, const char *fmt, ...) {
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        sb->failed = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        yg__sb_put(sb, small, (size_t)n);
        return;
    }
    if (!reserve(sb, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

void yg__sb_indent(yg_sb *sb, int n) {
    for (int i = 0; i < n; i++)
        yg__sb_putc(sb, ' ');
}

void yg__sb_double(yg_sb *sb, double v, bool float_marker) {
    char buf[40];
    if (isnan(v)) {
        yg__sb_puts(sb, "nan");
        return;
    }
    if (isinf(v)) {
        yg__sb_puts(sb, v < 0 ? "-inf" : "inf");
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    yg__sb_puts(sb, buf);
    if (float_marker && strpbrk(buf, ".eE") == NULL)
        yg__sb_puts(sb, ".0");
}

void yg__sb_float32(yg_sb *sb, float v) {
    char buf[40];
    if (isnan(v)) {
        yg__sb_puts(sb, "nan");
        return;
    }
    if (isinf(v)) {
        yg__sb_puts(sb, v < 0 ? "-inf" : "inf");
        return;
    }
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, (double)v);
        if (strtof(buf, NULL) == v)
            break;
    }
    yg__sb_puts(sb, buf);
}

void yg__sb_quoted(yg_sb *sb, const char *s) {
    yg__sb_putc(sb, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\') {
            yg__sb_putc(sb, '\\');
            yg__sb_putc(sb, (char)*p);
        } else if (*p == '\n') {
            yg__sb_puts(sb, "\\n");
        } else if (*p == '\t') {
            yg__sb_puts(sb, "\\t");
        } else if (*p < 0x20 || *p >= 0x7f) {
            yg__sb_printf(sb, "\\x%02x", *p);
        } else {
            yg__sb_putc(sb, (char)*p);
        }
    }
    yg__sb_putc(sb, '"');
}

void yg__sb_json_string(yg_sb *sb, const char *s) {
    yg__sb_putc(sb, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\') {
            yg__sb_putc(sb, '\\');
            yg__sb_putc(sb, (char)*p);
        } else if (*p < 0x20 || *p >= 0x7f) {
            /* Bytes >= 0x7f are escaped as code points U+0080..U+00FF so the
             * JSON is valid UTF-8 whatever the attribute holds. */
            yg__sb_printf(sb, "\\u%04x", *p);
        } else {
            yg__sb_putc(sb, (char)*p);
        }
    }
    yg__sb_putc(sb, '"');
}

yg_status yg__sb_finish(yg_sb *sb, const char *what, char **out) {
    *out = NULL;
    if (!reserve(sb, 0)) {
        yg__sb_free(sb);
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    sb->data[sb->len] = '\0';
    *out = sb->data;
    sb->data = NULL;
    sb->len = sb->cap = 0;
    return YG_OK;
}

void yg__sb_free(yg_sb *sb) {
    free(sb->data);
    sb->data = NULL;
    sb->len = sb->cap = 0;
    sb->failed = false;
}
