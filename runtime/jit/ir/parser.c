/*
 * parser.c - reads the text form of a graph (docs/ir.md) back into a
 * yg_graph: a hand-written lexer and a recursive-descent parser, one
 * function per grammar rule.
 *
 * Robustness is the point of this file: the input may be anything (it is
 * fuzzed, fuzz/fuzz_ir.c), so every path returns a status with a message
 * "graph_parse: LINE:COL: <what>" pointing at the offending token, frees
 * what it built and never reads past `len` bytes (the text need not be
 * NUL-terminated).  Nothing is sized from the input before it is checked:
 * a tensor literal's element count must match its sizes before any
 * storage is allocated, subgraph nesting is capped (MAX_DEPTH) so the
 * recursion cannot exhaust the stack, and numbers are range-checked.
 *
 * A node is built only after its whole statement has been read (outputs,
 * kind, attributes, inputs), so "%x = neg(%x)" fails as a use of an
 * undefined value, and a half-read statement never leaves a node behind.
 * Each node is then checked against its kind (yg__ir_check_node) with the
 * kind's location, so arity and attribute-name errors are located too.
 */
#include "jit/ir/ir.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Subgraphs nest at most this deep; deeper text is refused. */
#define MAX_DEPTH 32
/* The longest number token read (longer ones are refused, not truncated). */
#define MAX_NUMBER_LEN 64

typedef enum tok_kind {
    T_EOF,
    T_IDENT,  /* [A-Za-z_][A-Za-z0-9_.:]* */
    T_VALUE,  /* %name; begin/len cover the name without '%' */
    T_INT,    /* [-+]?[0-9]+ */
    T_FLOAT,  /* number with '.', exponent, or [-+]inf / [-+]nan */
    T_STRING, /* "..."; begin/len cover the quotes */
    T_PUNCT   /* one of ( ) [ ] , : = ? */
} tok_kind;

typedef struct token {
    tok_kind kind;
    const char *begin;
    size_t len;
    int line, col;
} token;

typedef struct parser {
    const char *p, *end;
    int line, col; /* of p */
    token tok;     /* the current token */
} parser;

static yg_status vfail_at(int line, int col, const char *fmt, va_list ap) {
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_parse: %d:%d: %s", line, col, msg);
}

static yg_status fail_at(const token *t, const char *fmt, ...) YG__PRINTF(2, 3);
static yg_status fail_at(const token *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    yg_status st = vfail_at(t->line, t->col, fmt, ap);
    va_end(ap);
    return st;
}

static yg_status fail_here(const parser *ps, const char *fmt, ...) YG__PRINTF(2, 3);
static yg_status fail_here(const parser *ps, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    yg_status st = vfail_at(ps->line, ps->col, fmt, ap);
    va_end(ap);
    return st;
}

/* The token as quoted text for messages: 'abc', or "end of input". */
static const char *describe(const token *t, char *buf, size_t len) {
    size_t pos = 0;
    if (t->kind == T_EOF)
        return "end of input";
    const char *b = t->kind == T_VALUE ? t->begin - 1 : t->begin;
    size_t n = t->kind == T_VALUE ? t->len + 1 : t->len;
    buf[pos++] = '\'';
    for (size_t i = 0; i < n && pos + 8 < len; i++) {
        unsigned char c = (unsigned char)b[i];
        if (i == 24) {
            pos += (size_t)snprintf(buf + pos, len - pos, "...");
            break;
        }
        if (c >= 0x20 && c < 0x7f)
            buf[pos++] = (char)c;
        else
            pos += (size_t)snprintf(buf + pos, len - pos, "\\x%02x", c);
    }
    buf[pos++] = '\'';
    buf[pos] = '\0';
    return buf;
}

/* ---- lexer ---- */

static bool is_alpha(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

static void bump(parser *ps) {
    if (*ps->p == '\n') {
        ps->line++;
        ps->col = 1;
    } else {
        ps->col++;
    }
    ps->p++;
}

static bool at(const parser *ps, size_t ahead, char c) {
    return ps->end - ps->p > (ptrdiff_t)ahead && ps->p[ahead] == c;
}

static bool at_word(const parser *ps, size_t ahead, const char *w) {
    size_t n = strlen(w);
    return ps->end - ps->p >= (ptrdiff_t)(ahead + n) && memcmp(ps->p + ahead, w, n) == 0;
}

static void skip_space(parser *ps) {
    while (ps->p < ps->end) {
        char c = *ps->p;
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            bump(ps);
        } else if (c == '#') {
            while (ps->p < ps->end && *ps->p != '\n')
                bump(ps);
        } else {
            break;
        }
    }
}

static yg_status lex_number(parser *ps, token *t) {
    bool is_float = false;
    if (at(ps, 0, '-') || at(ps, 0, '+'))
        bump(ps);
    if (at_word(ps, 0, "inf") || at_word(ps, 0, "nan")) {
        for (int i = 0; i < 3; i++)
            bump(ps);
        is_float = true;
    } else {
        if (!(ps->p < ps->end && is_digit(*ps->p)))
            return fail_at(t, "malformed number");
        while (ps->p < ps->end && is_digit(*ps->p))
            bump(ps);
        if (at(ps, 0, '.')) {
            is_float = true;
            bump(ps);
            while (ps->p < ps->end && is_digit(*ps->p))
                bump(ps);
        }
        if (at(ps, 0, 'e') || at(ps, 0, 'E')) {
            is_float = true;
            bump(ps);
            if (at(ps, 0, '-') || at(ps, 0, '+'))
                bump(ps);
            if (!(ps->p < ps->end && is_digit(*ps->p)))
                return fail_at(t, "malformed number: exponent without digits");
            while (ps->p < ps->end && is_digit(*ps->p))
                bump(ps);
        }
    }
    if (ps->p < ps->end && (is_alpha(*ps->p) || is_digit(*ps->p) || *ps->p == '.'))
        return fail_at(t, "malformed number");
    t->kind = is_float ? T_FLOAT : T_INT;
    t->len = (size_t)(ps->p - t->begin);
    if (t->len > MAX_NUMBER_LEN)
        return fail_at(t, "number longer than %d characters", MAX_NUMBER_LEN);
    return YG_OK;
}

static yg_status lex_string(parser *ps, token *t) {
    bump(ps); /* the opening quote */
    while (ps->p < ps->end && *ps->p != '"') {
        if (*ps->p == '\\') {
            bump(ps);
            if (ps->p >= ps->end)
                break;
        }
        bump(ps);
    }
    if (ps->p >= ps->end)
        return fail_at(t, "unterminated string");
    bump(ps); /* the closing quote */
    t->kind = T_STRING;
    t->len = (size_t)(ps->p - t->begin);
    return YG_OK;
}

/* Reads the next token into ps->tok. */
static yg_status advance(parser *ps) {
    token *t = &ps->tok;
    skip_space(ps);
    t->begin = ps->p;
    t->line = ps->line;
    t->col = ps->col;
    t->len = 0;
    if (ps->p >= ps->end) {
        t->kind = T_EOF;
        return YG_OK;
    }
    char c = *ps->p;
    if (c == '%') {
        bump(ps);
        t->begin = ps->p;
        while (ps->p < ps->end && (is_alpha(*ps->p) || is_digit(*ps->p) || *ps->p == '.'))
            bump(ps);
        t->len = (size_t)(ps->p - t->begin);
        if (t->len == 0)
            return fail_at(t, "expected a value name after '%%'");
        t->kind = T_VALUE;
        return YG_OK;
    }
    if (is_digit(c) || ((c == '-' || c == '+') && ps->end - ps->p > 1 &&
                        (is_digit(ps->p[1]) || at_word(ps, 1, "inf") || at_word(ps, 1, "nan"))))
        return lex_number(ps, t);
    if (is_alpha(c)) {
        while (ps->p < ps->end &&
               (is_alpha(*ps->p) || is_digit(*ps->p) || *ps->p == '.' || *ps->p == ':'))
            bump(ps);
        t->len = (size_t)(ps->p - t->begin);
        t->kind = T_IDENT;
        return YG_OK;
    }
    if (c == '"')
        return lex_string(ps, t);
    if (strchr("()[],:=?", c) != NULL && c != '\0') {
        bump(ps);
        t->kind = T_PUNCT;
        t->len = 1;
        return YG_OK;
    }
    if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7f)
        return fail_here(ps, "unexpected character '%c'", c);
    return fail_here(ps, "unexpected byte 0x%02x", (unsigned char)c);
}

static bool is_punct(const token *t, char c) {
    return t->kind == T_PUNCT && *t->begin == c;
}

static bool is_word(const token *t, const char *w) {
    return t->kind == T_IDENT && t->len == strlen(w) && memcmp(t->begin, w, t->len) == 0;
}

/* Consumes punctuation c or fails with "expected 'c' <context>". */
static yg_status expect(parser *ps, char c, const char *context) {
    char buf[96];
    if (!is_punct(&ps->tok, c))
        return fail_at(
            &ps->tok, "expected '%c' %s, got %s", c, context, describe(&ps->tok, buf, sizeof buf));
    return advance(ps);
}

static yg_status expect_word(parser *ps, const char *w, const char *context) {
    char buf[96];
    if (!is_word(&ps->tok, w))
        return fail_at(
            &ps->tok, "expected '%s' %s, got %s", w, context, describe(&ps->tok, buf, sizeof buf));
    return advance(ps);
}

/* ---- numbers ---- */

static void token_text(const token *t, char *buf) {
    memcpy(buf, t->begin, t->len); /* len <= MAX_NUMBER_LEN */
    buf[t->len] = '\0';
}

static yg_status read_int(const token *t, int64_t *out) {
    char buf[MAX_NUMBER_LEN + 1];
    char tb[96];
    if (t->kind != T_INT)
        return fail_at(t, "expected an integer, got %s", describe(t, tb, sizeof tb));
    token_text(t, buf);
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno == ERANGE)
        return fail_at(t, "integer %s out of range", buf);
    *out = (int64_t)v;
    return YG_OK;
}

static bool is_number(const token *t) {
    return t->kind == T_INT || t->kind == T_FLOAT || is_word(t, "inf") || is_word(t, "nan");
}

static yg_status read_double(const token *t, double *out) {
    char buf[MAX_NUMBER_LEN + 1];
    char tb[96];
    if (!is_number(t))
        return fail_at(t, "expected a number, got %s", describe(t, tb, sizeof tb));
    token_text(t, buf);
    *out = strtod(buf, NULL); /* out of range reads as +-inf or 0 */
    return YG_OK;
}

static yg_status read_float32(const token *t, float *out) {
    char buf[MAX_NUMBER_LEN + 1];
    char tb[96];
    if (!is_number(t))
        return fail_at(t, "expected a number, got %s", describe(t, tb, sizeof tb));
    token_text(t, buf);
    *out = strtof(buf, NULL);
    return YG_OK;
}

/* ---- types ---- */

static bool lookup_dtype(const token *t, int32_t *out) {
    for (int32_t d = 0; d < YG_DTYPE_COUNT_; d++) {
        if (is_word(t, yg_dtype_name((yg_dtype)d))) {
            *out = d;
            return true;
        }
    }
    return false;
}

static yg_status parse_dtype(parser *ps, int32_t *out) {
    char tb[96];
    if (!lookup_dtype(&ps->tok, out))
        return fail_at(&ps->tok,
                       "unknown dtype %s (expected float32, float64, int64, bool, int32, "
                       "float16 or bfloat16)",
                       describe(&ps->tok, tb, sizeof tb));
    return advance(ps);
}

/* '[' [dim {',' dim}] ']' where dim is an integer >= 0, or '?' when
 * allow_unknown. */
static yg_status parse_dims(parser *ps, bool allow_unknown, int32_t *ndim, int64_t *sizes) {
    YG_RETURN_IF_ERROR(expect(ps, '[', "to open a size list"));
    *ndim = 0;
    if (is_punct(&ps->tok, ']'))
        return advance(ps);
    for (;;) {
        int64_t v;
        if (*ndim == YG_MAX_DIMS)
            return fail_at(&ps->tok, "more than %d dimensions", YG_MAX_DIMS);
        if (allow_unknown && is_punct(&ps->tok, '?')) {
            v = YG_IR_UNKNOWN;
        } else {
            YG_RETURN_IF_ERROR(read_int(&ps->tok, &v));
            if (v < 0)
                return fail_at(&ps->tok, "size %lld is negative", (long long)v);
        }
        sizes[(*ndim)++] = v;
        YG_RETURN_IF_ERROR(advance(ps));
        if (is_punct(&ps->tok, ']'))
            return advance(ps);
        YG_RETURN_IF_ERROR(expect(ps, ',', "or ']' in a size list"));
    }
}

/* 'None' | 'Tensor' ['(' field {',' field} ')'] */
static yg_status parse_type(parser *ps, yg_ir_type *out) {
    char tb[96];
    *out = yg_ir_type_tensor();
    if (is_word(&ps->tok, "None")) {
        *out = yg_ir_type_none();
        return advance(ps);
    }
    if (!is_word(&ps->tok, "Tensor"))
        return fail_at(&ps->tok,
                       "expected a type (Tensor or None), got %s",
                       describe(&ps->tok, tb, sizeof tb));
    YG_RETURN_IF_ERROR(advance(ps));
    if (!is_punct(&ps->tok, '('))
        return YG_OK;
    YG_RETURN_IF_ERROR(advance(ps));
    bool seen[4] = {false, false, false, false};
    for (;;) {
        token key = ps->tok;
        int field = is_word(&key, "dtype")           ? 0
                    : is_word(&key, "device")        ? 1
                    : is_word(&key, "sizes")         ? 2
                    : is_word(&key, "requires_grad") ? 3
                                                     : -1;
        if (field < 0)
            return fail_at(&key,
                           "unknown type field %s (expected dtype, device, sizes or "
                           "requires_grad)",
                           describe(&key, tb, sizeof tb));
        if (seen[field])
            return fail_at(&key, "duplicate type field %s", describe(&key, tb, sizeof tb));
        seen[field] = true;
        YG_RETURN_IF_ERROR(advance(ps));
        YG_RETURN_IF_ERROR(expect(ps, '=', "after a type field name"));
        if (field == 0) {
            YG_RETURN_IF_ERROR(parse_dtype(ps, &out->dtype));
        } else if (field == 1) {
            if (is_word(&ps->tok, "cpu"))
                out->device = YG_CPU;
            else if (is_word(&ps->tok, "cuda"))
                out->device = YG_CUDA;
            else
                return fail_at(&ps->tok,
                               "unknown device %s (expected cpu or cuda)",
                               describe(&ps->tok, tb, sizeof tb));
            YG_RETURN_IF_ERROR(advance(ps));
        } else if (field == 2) {
            YG_RETURN_IF_ERROR(parse_dims(ps, true, &out->ndim, out->sizes));
        } else {
            if (is_word(&ps->tok, "true"))
                out->requires_grad = 1;
            else if (is_word(&ps->tok, "false"))
                out->requires_grad = 0;
            else
                return fail_at(&ps->tok,
                               "expected true or false for requires_grad, got %s",
                               describe(&ps->tok, tb, sizeof tb));
            YG_RETURN_IF_ERROR(advance(ps));
        }
        if (is_punct(&ps->tok, ')'))
            return advance(ps);
        YG_RETURN_IF_ERROR(expect(ps, ',', "or ')' in a type"));
    }
}

/* ---- attributes ---- */

static yg_status parse_graph(parser *ps, int depth, yg_graph **out);

/* A growable buffer of fixed-size elements for lists and tensor values. */
typedef struct vec {
    void *items;
    int64_t len, cap;
    size_t elem;
} vec;

static bool vec_push(vec *v, const void *item) {
    if (v->len == v->cap) {
        int64_t cap = v->cap == 0 ? 8 : v->cap * 2;
        void *items = realloc(v->items, (size_t)cap * v->elem);
        if (items == NULL)
            return false;
        v->items = items;
        v->cap = cap;
    }
    memcpy((char *)v->items + (size_t)v->len * v->elem, item, v->elem);
    v->len++;
    return true;
}

static yg_status oom(void) {
    return yg__fail(YG_ERR_OUT_OF_MEMORY, "graph_parse: out of memory");
}

/* '[' numbers ']' after an optional "float" prefix: an int list unless
 * some element is a float or the prefix forces floats. */
static yg_status parse_list(parser *ps, bool force_float, yg_ir_attr *a) {
    vec toks = {NULL, 0, 0, sizeof(token)};
    bool any_float = force_float;
    yg_status st = expect(ps, '[', "to open a list");
    if (st != YG_OK)
        return st;
    while (toks.len > 0 || !is_punct(&ps->tok, ']')) {
        char tb[96];
        if (!is_number(&ps->tok)) {
            st = fail_at(
                &ps->tok, "expected a number in a list, got %s", describe(&ps->tok, tb, sizeof tb));
            goto out;
        }
        if (ps->tok.kind != T_INT)
            any_float = true;
        if (!vec_push(&toks, &ps->tok)) {
            st = oom();
            goto out;
        }
        st = advance(ps);
        if (st != YG_OK)
            goto out;
        if (is_punct(&ps->tok, ']'))
            break;
        st = expect(ps, ',', "or ']' in a list");
        if (st != YG_OK)
            goto out;
    }
    st = advance(ps);
    if (st != YG_OK)
        goto out;
    const token *items = toks.items;
    if (any_float) {
        a->kind = YG_IR_ATTR_FLOATS;
        a->u.floats.items = malloc((size_t)(toks.len > 0 ? toks.len : 1) * sizeof(double));
        if (a->u.floats.items == NULL) {
            st = oom();
            goto out;
        }
        for (int64_t i = 0; i < toks.len && st == YG_OK; i++) {
            st = read_double(&items[i], &a->u.floats.items[i]);
            a->u.floats.len = i + 1;
        }
    } else {
        a->kind = YG_IR_ATTR_INTS;
        a->u.ints.items = malloc((size_t)(toks.len > 0 ? toks.len : 1) * sizeof(int64_t));
        if (a->u.ints.items == NULL) {
            st = oom();
            goto out;
        }
        for (int64_t i = 0; i < toks.len && st == YG_OK; i++) {
            st = read_int(&items[i], &a->u.ints.items[i]);
            a->u.ints.len = i + 1;
        }
    }
out:
    free(toks.items);
    return st;
}

/* Appends one element token to values, converted to dtype. */
static yg_status push_element(vec *values, int32_t dtype, const token *t) {
    union {
        float f;
        double d;
        int64_t i;
        int32_t i32;
        uint16_t h;
        unsigned char b;
    } e;
    if (dtype == YG_FLOAT32) {
        YG_RETURN_IF_ERROR(read_float32(t, &e.f));
    } else if (dtype == YG_FLOAT64) {
        YG_RETURN_IF_ERROR(read_double(t, &e.d));
    } else if (dtype == YG_INT64) {
        YG_RETURN_IF_ERROR(read_int(t, &e.i));
    } else if (dtype == YG_INT32) {
        int64_t v;
        YG_RETURN_IF_ERROR(read_int(t, &v));
        if (v < INT32_MIN || v > INT32_MAX)
            return fail_at(t, "an int32 element must fit in 32 bits, got %lld", (long long)v);
        e.i32 = (int32_t)v;
    } else if (dtype == YG_FLOAT16 || dtype == YG_BFLOAT16) {
        /* Printed as the float32 value, which converts back exactly. */
        double v;
        YG_RETURN_IF_ERROR(read_double(t, &v));
        e.h = dtype == YG_FLOAT16 ? yg__f16_from_f64(v) : yg__bf16_from_f64(v);
    } else {
        int64_t v;
        YG_RETURN_IF_ERROR(read_int(t, &v));
        if (v != 0 && v != 1)
            return fail_at(t, "a bool element must be 0 or 1, got %lld", (long long)v);
        e.b = (unsigned char)v;
    }
    if (!vec_push(values, &e))
        return oom();
    return YG_OK;
}

/* 'tensor' '(' dtype ',' dims ',' '[' values ']' ')' */
static yg_status parse_tensor(parser *ps, yg_tensor **out) {
    token start = ps->tok;
    int32_t dtype = 0, ndim = 0;
    int64_t sizes[YG_MAX_DIMS];
    vec values = {NULL, 0, 0, 0};
    int64_t numel = 1;
    bool overflow = false;
    yg_status st;
    char buf[128];
    *out = NULL;
    YG_RETURN_IF_ERROR(advance(ps)); /* 'tensor' */
    YG_RETURN_IF_ERROR(expect(ps, '(', "after 'tensor'"));
    YG_RETURN_IF_ERROR(parse_dtype(ps, &dtype));
    YG_RETURN_IF_ERROR(expect(ps, ',', "after a tensor's dtype"));
    YG_RETURN_IF_ERROR(parse_dims(ps, false, &ndim, sizes));
    YG_RETURN_IF_ERROR(expect(ps, ',', "after a tensor's sizes"));
    YG_RETURN_IF_ERROR(expect(ps, '[', "to open a tensor's values"));
    values.elem = yg_dtype_size((yg_dtype)dtype);
    while (values.len > 0 || !is_punct(&ps->tok, ']')) {
        st = push_element(&values, dtype, &ps->tok);
        if (st != YG_OK)
            goto out;
        st = advance(ps);
        if (st != YG_OK)
            goto out;
        if (is_punct(&ps->tok, ']'))
            break;
        st = expect(ps, ',', "or ']' in a tensor's values");
        if (st != YG_OK)
            goto out;
    }
    /* Checked (sizes.h): a 0 anywhere makes the count 0 however large
     * the other sizes are (issue 18: [036854775808, 0, 922337200, 3]). */
    numel = yg__sizes_product(sizes, ndim);
    overflow = numel < 0;
    if (overflow || numel != values.len) {
        yg__format_sizes(sizes, ndim, buf, sizeof buf);
        st = fail_at(&start,
                     "tensor has %lld values but sizes %s need %s%lld",
                     (long long)values.len,
                     buf,
                     overflow ? "more than " : "",
                     (long long)(overflow ? INT64_MAX : numel));
        goto out;
    }
    int64_t strides[YG_MAX_DIMS];
    if (yg__sizes_strides("graph_parse", sizes, ndim, strides) != YG_OK) {
        yg__format_sizes(sizes, ndim, buf, sizeof buf);
        st = fail_at(&start, "tensor sizes %s have no int64 strides", buf);
        goto out;
    }
    st = advance(ps); /* ']' */
    if (st != YG_OK)
        goto out;
    st = expect(ps, ')', "to close a tensor");
    if (st != YG_OK)
        goto out;
    st = yg_tensor_from_data(values.items, sizes, ndim, (yg_dtype)dtype, out);
    if (st != YG_OK)
        st = yg__fail_prefix(st, "graph_parse");
out:
    free(values.items);
    return st;
}

/* Decodes the string token t (quotes included) into a new C string. */
static yg_status decode_string(const token *t, char **out) {
    char *s = malloc(t->len);
    size_t n = 0;
    *out = NULL;
    if (s == NULL)
        return oom();
    for (size_t i = 1; i + 1 < t->len; i++) {
        char c = t->begin[i];
        if (c == '\0') {
            free(s);
            return fail_at(t, "a NUL byte in a string");
        }
        if (c != '\\') {
            s[n++] = c;
            continue;
        }
        c = t->begin[++i];
        if (c == 'n') {
            s[n++] = '\n';
        } else if (c == 't') {
            s[n++] = '\t';
        } else if (c == '"' || c == '\\') {
            s[n++] = c;
        } else if (c == 'x' && i + 3 < t->len) {
            int v = 0;
            for (int k = 1; k <= 2; k++) {
                char h = t->begin[i + (size_t)k];
                int d = is_digit(h)              ? h - '0'
                        : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                        : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                                 : -1;
                if (d < 0) {
                    free(s);
                    return fail_at(t, "malformed \\x escape in a string");
                }
                v = v * 16 + d;
            }
            if (v == 0) {
                free(s);
                return fail_at(t, "a NUL byte (\\x00) in a string");
            }
            s[n++] = (char)v;
            i += 2;
        } else {
            free(s);
            return fail_at(t, "unknown escape in a string (use \\n \\t \\\" \\\\ \\xHH)");
        }
    }
    s[n] = '\0';
    *out = s;
    return YG_OK;
}

/* One attribute value into a (whose name is already set). */
static yg_status parse_attr_value(parser *ps, int depth, yg_ir_attr *a) {
    token t = ps->tok;
    char tb[96];
    if (t.kind == T_INT) {
        a->kind = YG_IR_ATTR_INT;
        YG_RETURN_IF_ERROR(read_int(&t, &a->u.i));
        return advance(ps);
    }
    if (t.kind == T_FLOAT || is_word(&t, "inf") || is_word(&t, "nan")) {
        a->kind = YG_IR_ATTR_FLOAT;
        YG_RETURN_IF_ERROR(read_double(&t, &a->u.f));
        return advance(ps);
    }
    if (t.kind == T_STRING) {
        a->kind = YG_IR_ATTR_STR;
        YG_RETURN_IF_ERROR(decode_string(&t, &a->u.s));
        return advance(ps);
    }
    if (is_punct(&t, '['))
        return parse_list(ps, false, a);
    if (is_word(&t, "float")) {
        YG_RETURN_IF_ERROR(advance(ps));
        return parse_list(ps, true, a);
    }
    if (is_word(&t, "tensor")) {
        a->kind = YG_IR_ATTR_TENSOR;
        return parse_tensor(ps, &a->u.t);
    }
    if (is_word(&t, "graph")) {
        if (depth + 1 > MAX_DEPTH)
            return fail_at(&t, "subgraphs nested deeper than %d", MAX_DEPTH);
        a->kind = YG_IR_ATTR_GRAPH;
        return parse_graph(ps, depth + 1, &a->u.g);
    }
    return fail_at(&t,
                   "expected an attribute value (number, string, list, tensor or graph), got %s",
                   describe(&t, tb, sizeof tb));
}

/* A node's attributes, in the order read; each owns its payload. */
typedef struct attr_list {
    yg_ir_attr *items;
    int32_t len, cap;
} attr_list;

static void attr_list_free(attr_list *l) {
    for (int32_t i = 0; i < l->len; i++)
        yg__ir_attr_clear(&l->items[i]);
    free(l->items);
    l->items = NULL;
    l->len = l->cap = 0;
}

/* '[' name '=' value {',' name '=' value} ']' */
static yg_status parse_attrs(parser *ps, int depth, attr_list *l) {
    char tb[96];
    YG_RETURN_IF_ERROR(advance(ps)); /* '[' */
    if (is_punct(&ps->tok, ']'))
        return advance(ps);
    for (;;) {
        token name = ps->tok;
        if (name.kind != T_IDENT || !yg__ir_valid_attr_name(name.begin, name.len))
            return fail_at(
                &name, "expected an attribute name, got %s", describe(&name, tb, sizeof tb));
        for (int32_t i = 0; i < l->len; i++) {
            if (strlen(l->items[i].name) == name.len &&
                memcmp(l->items[i].name, name.begin, name.len) == 0)
                return fail_at(&name, "duplicate attribute %s", describe(&name, tb, sizeof tb));
        }
        if (l->len == l->cap) {
            int32_t cap = l->cap == 0 ? 4 : l->cap * 2;
            yg_ir_attr *items = realloc(l->items, (size_t)cap * sizeof *items);
            if (items == NULL)
                return oom();
            l->items = items;
            l->cap = cap;
        }
        yg_ir_attr *a = &l->items[l->len];
        memset(a, 0, sizeof *a);
        a->name = malloc(name.len + 1);
        if (a->name == NULL)
            return oom();
        memcpy(a->name, name.begin, name.len);
        a->name[name.len] = '\0';
        a->kind = YG_IR_ATTR_INT; /* nothing to free until the value is read */
        l->len++;
        YG_RETURN_IF_ERROR(advance(ps));
        YG_RETURN_IF_ERROR(expect(ps, '=', "after an attribute name"));
        yg_status st = parse_attr_value(ps, depth, a);
        if (st != YG_OK) {
            /* Keep the name; drop the half-read payload's kind so clear
             * frees only what was set (payload pointers start NULL). */
            return st;
        }
        if (is_punct(&ps->tok, ']'))
            return advance(ps);
        YG_RETURN_IF_ERROR(expect(ps, ',', "or ']' between attributes"));
    }
}

/* ---- statements and graphs ---- */

typedef struct out_decl {
    token name;
    yg_ir_type type;
    bool typed; /* the text gave a type */
} out_decl;

/* %name {',' %name} after '(' up to ')', looked up in g. */
static yg_status parse_uses(parser *ps, yg_graph *g, vec *values) {
    char tb[96];
    if (is_punct(&ps->tok, ')'))
        return advance(ps);
    for (;;) {
        token t = ps->tok;
        if (t.kind != T_VALUE)
            return fail_at(&t, "expected a value (%%name), got %s", describe(&t, tb, sizeof tb));
        yg_ir_value *v = yg__ir_graph_find(g, t.begin, t.len);
        if (v == NULL)
            return fail_at(&t, "use of undefined value %s", describe(&t, tb, sizeof tb));
        if (!vec_push(values, &v))
            return oom();
        YG_RETURN_IF_ERROR(advance(ps));
        if (is_punct(&ps->tok, ')'))
            return advance(ps);
        YG_RETURN_IF_ERROR(expect(ps, ',', "or ')' between values"));
    }
}

/* Builds the node of a statement read in full and appends it to g. */
static yg_status build_node(yg_graph *g,
                            const token *kind_tok,
                            const char *kind,
                            const yg_op_info *op,
                            const vec *outs,
                            const vec *ins,
                            attr_list *attrs) {
    yg_ir_node *n = NULL;
    yg_status st;
    char tb[96], msg[256];
    const out_decl *decls = outs->items;
    yg_ir_value *const *inputs = ins->items;
    if (outs->len > 4096)
        return fail_at(kind_tok, "more than 4096 outputs");
    for (int64_t i = 0; i < outs->len; i++) {
        if (yg__ir_graph_find(g, decls[i].name.begin, decls[i].name.len) != NULL)
            return fail_at(
                &decls[i].name, "redefinition of %s", describe(&decls[i].name, tb, sizeof tb));
        for (int64_t k = 0; k < i; k++) {
            if (decls[k].name.len == decls[i].name.len &&
                memcmp(decls[k].name.begin, decls[i].name.begin, decls[i].name.len) == 0)
                return fail_at(
                    &decls[i].name, "redefinition of %s", describe(&decls[i].name, tb, sizeof tb));
        }
    }
    st = yg__ir_node_create(g, kind, op, 0, true, &n);
    if (st != YG_OK)
        return st;
    for (int64_t i = 0; i < outs->len; i++) {
        yg_ir_type type = decls[i].type;
        if (!decls[i].typed && kind == yg__prim_none)
            type = yg_ir_type_none();
        st = yg__ir_node_add_output(n, decls[i].name.begin, decls[i].name.len, &type);
        if (st != YG_OK)
            goto fail;
    }
    for (int64_t i = 0; i < ins->len; i++) {
        st = yg__ir_node_add_input(n, inputs[i]);
        if (st != YG_OK)
            goto fail;
    }
    for (int32_t i = 0; i < attrs->len; i++) {
        st = yg__ir_node_put_attr(n, &attrs->items[i]); /* takes the payload */
        memset(&attrs->items[i], 0, sizeof attrs->items[i]);
        if (st != YG_OK)
            goto fail;
    }
    if (!yg__ir_check_node(n, true, msg, sizeof msg)) {
        st = fail_at(kind_tok, "%s", msg);
        goto fail;
    }
    return YG_OK;
fail:
    /* The node's outputs have no uses yet: nothing after it was parsed. */
    yg__ir_node_destroy(n);
    return st;
}

/* [outs '='] kind ['[' attrs ']'] '(' uses ')' */
static yg_status parse_statement(parser *ps, yg_graph *g, int depth) {
    vec outs = {NULL, 0, 0, sizeof(out_decl)};
    vec ins = {NULL, 0, 0, sizeof(yg_ir_value *)};
    attr_list attrs = {NULL, 0, 0};
    yg_status st = YG_OK;
    char tb[96];
    const yg_op_info *op = NULL;
    const char *kind;
    token kind_tok;
    if (ps->tok.kind == T_VALUE) {
        for (;;) {
            out_decl d;
            d.name = ps->tok;
            d.type = yg_ir_type_tensor();
            d.typed = false;
            st = advance(ps);
            if (st != YG_OK)
                goto out;
            if (is_punct(&ps->tok, ':')) {
                d.typed = true;
                st = advance(ps);
                if (st == YG_OK)
                    st = parse_type(ps, &d.type);
                if (st != YG_OK)
                    goto out;
            }
            if (!vec_push(&outs, &d)) {
                st = oom();
                goto out;
            }
            if (!is_punct(&ps->tok, ','))
                break;
            st = advance(ps);
            if (st != YG_OK)
                goto out;
            if (ps->tok.kind != T_VALUE) {
                st = fail_at(&ps->tok,
                             "expected a value (%%name) after ',', got %s",
                             describe(&ps->tok, tb, sizeof tb));
                goto out;
            }
        }
        st = expect(ps, '=', "after a node's outputs");
        if (st != YG_OK)
            goto out;
    }
    kind_tok = ps->tok;
    if (kind_tok.kind != T_IDENT) {
        st = fail_at(&kind_tok, "expected an op name, got %s", describe(&kind_tok, tb, sizeof tb));
        goto out;
    }
    kind = yg__ir_kind_lookup(kind_tok.begin, kind_tok.len, &op);
    if (kind == NULL) {
        st = fail_at(&kind_tok, "unknown op %s", describe(&kind_tok, tb, sizeof tb));
        goto out;
    }
    st = advance(ps);
    if (st == YG_OK && is_punct(&ps->tok, '['))
        st = parse_attrs(ps, depth, &attrs);
    if (st == YG_OK)
        st = expect(ps, '(', "to open a node's inputs");
    if (st == YG_OK)
        st = parse_uses(ps, g, &ins);
    if (st == YG_OK)
        st = build_node(g, &kind_tok, kind, op, &outs, &ins, &attrs);
out:
    attr_list_free(&attrs);
    free(outs.items);
    free(ins.items);
    return st;
}

/* 'graph' '(' [param {',' param}] ')' ':' {statement} 'return' '(' uses ')' */
static yg_status parse_graph(parser *ps, int depth, yg_graph **out) {
    yg_graph *g = NULL;
    vec rets = {NULL, 0, 0, sizeof(yg_ir_value *)};
    yg_status st;
    char tb[96];
    *out = NULL;
    st = expect_word(ps, "graph", "to start a graph");
    if (st != YG_OK)
        return st;
    st = yg_graph_create(&g);
    if (st != YG_OK)
        return st;
    st = expect(ps, '(', "after 'graph'");
    bool first_input = true;
    while (st == YG_OK && (!first_input || !is_punct(&ps->tok, ')'))) {
        first_input = false;
        bool is_param = is_word(&ps->tok, "param");
        if (is_param) {
            st = advance(ps);
            if (st != YG_OK)
                break;
        }
        token name = ps->tok;
        yg_ir_type type = yg_ir_type_tensor();
        if (name.kind != T_VALUE) {
            st = fail_at(
                &name, "expected a graph input (%%name), got %s", describe(&name, tb, sizeof tb));
            break;
        }
        if (yg__ir_graph_find(g, name.begin, name.len) != NULL) {
            st = fail_at(&name, "redefinition of %s", describe(&name, tb, sizeof tb));
            break;
        }
        st = advance(ps);
        if (st == YG_OK && is_punct(&ps->tok, ':')) {
            st = advance(ps);
            if (st == YG_OK)
                st = parse_type(ps, &type);
        }
        if (st == YG_OK) {
            yg_ir_value *v = NULL;
            char nbuf[256];
            if (name.len >= sizeof nbuf) {
                st = fail_at(&name, "value name longer than %d characters", (int)sizeof nbuf - 1);
                break;
            }
            memcpy(nbuf, name.begin, name.len);
            nbuf[name.len] = '\0';
            st = yg_graph_add_input(g, &type, nbuf, &v);
            if (st == YG_OK)
                v->is_param = is_param;
        }
        if (st == YG_OK && is_punct(&ps->tok, ')'))
            break;
        if (st == YG_OK)
            st = expect(ps, ',', "or ')' between graph inputs");
    }
    if (st == YG_OK)
        st = advance(ps); /* ')' */
    if (st == YG_OK)
        st = expect(ps, ':', "after a graph's inputs");
    while (st == YG_OK && !is_word(&ps->tok, "return")) {
        if (ps->tok.kind == T_EOF) {
            st = fail_at(&ps->tok, "expected a node or 'return', got end of input");
            break;
        }
        st = parse_statement(ps, g, depth);
    }
    if (st == YG_OK)
        st = advance(ps); /* 'return' */
    if (st == YG_OK)
        st = expect(ps, '(', "after 'return'");
    if (st == YG_OK)
        st = parse_uses(ps, g, &rets);
    if (st == YG_OK)
        st = yg_graph_set_outputs(g, rets.items, rets.len);
    free(rets.items);
    if (st != YG_OK) {
        yg_graph_release(g);
        return st;
    }
    *out = g;
    return YG_OK;
}

yg_status yg_graph_parse(const char *text, int64_t len, yg_graph **out) {
    parser ps;
    yg_graph *g = NULL;
    yg_status st;
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_parse: out is NULL");
    *out = NULL;
    if (len < 0 || (text == NULL && len > 0))
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "graph_parse: invalid text (length %lld)", (long long)len);
    ps.p = text != NULL ? text : "";
    ps.end = ps.p + len;
    ps.line = 1;
    ps.col = 1;
    st = advance(&ps);
    if (st != YG_OK)
        return st;
    st = parse_graph(&ps, 0, &g);
    if (st != YG_OK)
        return st;
    if (ps.tok.kind != T_EOF) {
        char tb[96];
        st = fail_at(&ps.tok, "unexpected %s after the graph", describe(&ps.tok, tb, sizeof tb));
        yg_graph_release(g);
        return st;
    }
    st = yg__ir_check_after_pass(g, "graph_parse");
    if (st != YG_OK) {
        yg_graph_release(g);
        return st;
    }
    *out = g;
    return YG_OK;
}
