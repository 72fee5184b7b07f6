/*
 * schema.c - the parser for `func:` signatures such as
 *   sum.dim(Tensor self, int[] dim, bool keepdim=False) -> Tensor
 *
 * A small recursive-descent parser over the string, tracking the byte
 * offset so every error points at the exact column inside the YAML scalar
 * (a regex parser would only say "bad signature").  Grammar:
 *   schema  := ident ['.' ident] '(' [item {',' item}] ')' '->' returns
 *   item    := '*' | type ident ['=' default]
 *   type    := 'Tensor' ['?' | '?' '[' ']' | '[' ']' | '(' ident ['!'] ')']
 *            | 'int' ['?' | '[' [N] ']'] | 'float' ['?'] | 'bool' ['[' N ']']
 *            | 'Scalar' ['?'] | 'ScalarType' ['?'] | 'str'
 *            | 'Device' ['?'] | 'Generator' '?'
 *   returns := ret | '(' ret {',' ret} ')'
 *   ret     := 'Tensor' ['(' ident ['!'] ')'] ['[' ']'] [ident]   ('[]': the only return)
 *   default := 'None' | 'True' | 'False' | number | '[' [number {',' number}] ']'
 *            | quoted string
 * The parser reports the first error of a signature and gives up on it;
 * the caller goes on with the next entry.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

typedef struct parser {
    const char *text;
    size_t pos;
    gen_loc loc;
    bool failed;
    char *entry; /* "sum.dim" for messages, or NULL */
} parser;

static void perror_at(parser *p, size_t pos, const char *fmt, const char *a, const char *b)
{
    gen_loc loc = p->loc;

    if (p->failed)
        return;
    p->failed = true;
    loc.col += (int)pos;
    if (p->entry == NULL) {
        gen_error(loc, fmt, a, b);
        return;
    }
    char *msg = gen_xprintf(fmt, a, b);
    gen_error_in(p->entry, loc, "%s", msg);
    free(msg);
}

static void skip_ws(parser *p)
{
    while (p->text[p->pos] == ' ' || p->text[p->pos] == '\t')
        p->pos++;
}

static bool peek(parser *p, char c)
{
    skip_ws(p);
    return p->text[p->pos] == c;
}

static bool accept(parser *p, char c)
{
    if (!peek(p, c))
        return false;
    p->pos++;
    return true;
}

/* A printable description of the character at pos for messages. */
static const char *here(parser *p)
{
    static _Thread_local char buf[8];
    char c = p->text[p->pos];

    if (c == '\0')
        return "end of signature";
    buf[0] = '\'';
    buf[1] = isprint((unsigned char)c) ? c : '?';
    buf[2] = '\'';
    buf[3] = '\0';
    return buf;
}

static bool expect(parser *p, char c, const char *what)
{
    if (accept(p, c))
        return true;
    perror_at(p, p->pos, "malformed signature: expected %s, found %s", what, here(p));
    return false;
}

/* An identifier, or NULL with an error naming what was expected. */
static char *ident(parser *p, const char *what)
{
    skip_ws(p);
    size_t start = p->pos;
    const char *t = p->text;

    if (!(isalpha((unsigned char)t[start]) || t[start] == '_')) {
        perror_at(p, start, "malformed signature: expected %s, found %s", what, here(p));
        return NULL;
    }
    while (isalnum((unsigned char)t[p->pos]) || t[p->pos] == '_')
        p->pos++;
    return gen_xstrndup(t + start, p->pos - start);
}

/* `(a)` or `(a!)` after Tensor. */
static bool alias_annotation(parser *p, char **alias, bool *mutable_)
{
    if (!accept(p, '('))
        return true;
    *alias = ident(p, "an alias name such as 'a'");
    if (*alias == NULL)
        return false;
    if (accept(p, '!'))
        *mutable_ = true;
    return expect(p, ')', "')' closing the alias annotation");
}

static const char *const reserved_names[] = {
    /* locals and out-parameters of the generated wrappers */
    "out", "result", "node", "st", "inputs", "kernel", "dev", "scalars", "base",
    /* formula variables besides grad */
    "grads", "results",
    /* C keywords and types an argument name would clash with */
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch",
    "typedef", "union", "unsigned", "void", "volatile", "while", "bool", "true", "false",
};

static bool is_reserved(const char *name)
{
    for (size_t i = 0; i < sizeof(reserved_names) / sizeof(reserved_names[0]); i++)
        if (strcmp(name, reserved_names[i]) == 0)
            return true;
    if (strncmp(name, "yg_", 3) == 0)
        return true;
    /* out0, out1, ...: the out-parameters of multi-return ops; result1,
     * grad1, ...: the outputs and their gradients in generated code. */
    static const char *const numbered[] = {"out", "result", "grad"};
    for (size_t i = 0; i < sizeof(numbered) / sizeof(numbered[0]); i++) {
        size_t n = strlen(numbered[i]);
        if (strncmp(name, numbered[i], n) != 0 || name[n] == '\0')
            continue;
        bool digits = true;
        for (const char *c = name + n; *c != '\0'; c++)
            digits &= isdigit((unsigned char)*c) != 0;
        if (digits)
            return true;
    }
    return false;
}

/* Whether d is an int64 (integer) or a finite double, as C can spell it
 * in the generated code.  strtoll saturates out-of-range text (it set
 * ERANGE, unread, so 99999999999999999999 passed and went into the
 * generated C as a constant too large for int64: issue 18), and -2^63
 * has no C literal (it is -(2^63), which does not fit), so both are
 * refused; so is a double beyond DBL_MAX. */
static bool is_number(const char *d, bool integer)
{
    char *end;

    errno = 0;
    if (integer) {
        long long v = strtoll(d, &end, 10);
        if (v == LLONG_MIN)
            return false;
    } else {
        strtod(d, &end);
    }
    return errno != ERANGE && end != d && *end == '\0' && !isspace((unsigned char)*d);
}

/* Whether d is "[n, n, ...]" of integers (or of True/False when bools);
 * the number of items goes to *count. */
static bool is_list(const char *d, bool bools, int *count)
{
    size_t n = strlen(d);
    int items = 0;

    if (n < 2 || d[0] != '[' || d[n - 1] != ']')
        return false;
    char *body = gen_xstrndup(d + 1, n - 2);
    bool ok = true;
    char *save = NULL;
    bool empty = strspn(body, " \t") == strlen(body);
    for (char *tok = empty ? NULL : strtok_r(body, ",", &save); tok != NULL && ok;
         tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ' || *tok == '\t')
            tok++;
        size_t tl = strlen(tok);
        while (tl > 0 && (tok[tl - 1] == ' ' || tok[tl - 1] == '\t'))
            tok[--tl] = '\0';
        if (bools)
            ok = strcmp(tok, "True") == 0 || strcmp(tok, "False") == 0;
        else
            ok = is_number(tok, true);
        items++;
    }
    free(body);
    /* strtok_r skips empty fields: "[1,,2]" and "[1,]" are errors. */
    if (ok && !empty && (strstr(d, ",,") != NULL || d[n - 2] == ',' || d[1] == ','))
        ok = false;
    *count = items;
    return ok;
}

/* Checks a default's spelling against the argument's type. */
static bool default_ok(const gen_arg *a, const char *d)
{
    int count = 0;

    if (strcmp(d, "None") == 0)
        return a->nullable && a->type != GEN_T_TENSOR_LIST;
    switch (a->type) {
    case GEN_T_TENSOR:
    case GEN_T_SCALAR_TYPE:
    case GEN_T_DEVICE:
    case GEN_T_GENERATOR:
        return false;
    case GEN_T_TENSOR_LIST:
        return strcmp(d, "[]") == 0;
    case GEN_T_BOOL:
        return strcmp(d, "True") == 0 || strcmp(d, "False") == 0;
    case GEN_T_INT:
        return is_number(d, true);
    case GEN_T_FLOAT:
    case GEN_T_SCALAR:
        return is_number(d, false);
    case GEN_T_INT_LIST:
        if (a->fixed_len > 0 && is_number(d, true))
            return true; /* int[2] stride=1 means [1, 1] */
        return is_list(d, false, &count) && (a->fixed_len == 0 || count == a->fixed_len);
    case GEN_T_BOOL_LIST:
        return is_list(d, true, &count) && count == a->fixed_len;
    case GEN_T_STR: {
        size_t n = strlen(d);
        return n >= 2 && (d[0] == '\'' || d[0] == '"') && d[n - 1] == d[0] &&
               strcspn(d + 1, "\\\"'") == n - 2;
    }
    }
    return false;
}

/* "[N]" after int or bool: N in 1..64, or nothing when allow_empty. */
static bool list_suffix(parser *p, gen_arg *a, bool allow_empty)
{
    size_t start = ++p->pos;
    long n = 0;

    while (isdigit((unsigned char)p->text[p->pos]) && n < 1000)
        n = n * 10 + (p->text[p->pos++] - '0');
    if (p->pos == start && !allow_empty) {
        perror_at(p, start, "malformed signature: expected a length N in '%s[N]', found %s",
                  a->type == GEN_T_BOOL_LIST ? "bool" : "int", here(p));
        return false;
    }
    if (p->pos > start && (n <= 0 || n > 64)) {
        perror_at(p, start, "list length must be 1 to 64%s%s", "", "");
        return false;
    }
    a->fixed_len = (int)n;
    return expect(p, ']', "']' closing the list type");
}

/* The model's enum types (gen_schema_set_enums). */
static const gen_enum *known_enums;
static int n_known_enums;

void gen_schema_set_enums(const gen_enum *enums, int n)
{
    known_enums = enums;
    n_known_enums = n;
}

const gen_enum *gen_arg_enum(const gen_arg *a)
{
    return a->enum_id > 0 && a->enum_id <= n_known_enums ? &known_enums[a->enum_id - 1] : NULL;
}

static int find_enum(const char *name)
{
    for (int i = 0; i < n_known_enums; i++)
        if (strcmp(known_enums[i].name, name) == 0)
            return i;
    return -1;
}

/* Tensor's suffixes after its name (next, the character after it):
 * Tensor?, Tensor[], Tensor?[], Tensor(a), Tensor(a!) and Tensor(a!)?. */
static bool tensor_type(parser *p, gen_arg *a, char next)
{
    bool ok = true;

    a->type = GEN_T_TENSOR;
    if (next == '?') {
        p->pos++;
        a->nullable = true;
        if (p->text[p->pos] == '[') {
            /* Tensor?[]: a list whose items may be NULL */
            p->pos++;
            a->type = GEN_T_TENSOR_LIST;
            ok = expect(p, ']', "']' (a list of optional Tensors is written Tensor?[])");
        }
    } else if (next == '[') {
        p->pos++;
        a->type = GEN_T_TENSOR_LIST;
        ok = expect(p, ']', "']' (a Tensor list is written Tensor[])");
    } else if (next == '(') {
        ok = alias_annotation(p, &a->alias, &a->mutable_);
        /* Tensor(a!)?: optional state the op updates in place */
        if (ok && a->mutable_ && p->text[p->pos] == '?') {
            p->pos++;
            a->nullable = true;
        }
    }
    return ok;
}

/* The value types other than Tensor and Generator, and the suffixes
 * each takes after its name. */
typedef struct value_type {
    const char *name;
    gen_type type;
    bool optional;      /* T?: nullable */
    bool has_list;      /* T[N], of list_type */
    gen_type list_type;
    bool list_any_len;  /* T[] (any length) as well as T[N] */
} value_type;

static const value_type value_types[] = {
    {.name = "int",
     .type = GEN_T_INT,
     .optional = true,
     .has_list = true,
     .list_type = GEN_T_INT_LIST,
     .list_any_len = true},
    {.name = "bool", .type = GEN_T_BOOL, .has_list = true, .list_type = GEN_T_BOOL_LIST},
    {.name = "float", .type = GEN_T_FLOAT, .optional = true},
    {.name = "Scalar", .type = GEN_T_SCALAR, .optional = true},
    {.name = "ScalarType", .type = GEN_T_SCALAR_TYPE, .optional = true},
    {.name = "str", .type = GEN_T_STR},
    {.name = "Device", .type = GEN_T_DEVICE, .optional = true},
};

/* The row of value_types named name, or NULL. */
static const value_type *find_value_type(const char *name)
{
    for (size_t i = 0; i < sizeof value_types / sizeof value_types[0]; i++)
        if (strcmp(value_types[i].name, name) == 0)
            return &value_types[i];
    return NULL;
}

/* Sets a's type from vt and reads its suffix (next, the character after
 * the name): '?' or a list's "[]" / "[N]". */
static bool value_type_suffix(parser *p, gen_arg *a, const value_type *vt, char next)
{
    a->type = vt->type;
    if (vt->optional && next == '?') {
        p->pos++;
        a->nullable = true;
    } else if (vt->has_list && next == '[') {
        a->type = vt->list_type;
        return list_suffix(p, a, vt->list_any_len);
    }
    return true;
}

/* Reports the unknown type t (at start) with the nearest known name and
 * the list of the known ones, enums included. */
static void unknown_type(parser *p, const char *t, size_t start)
{
    static const char *const builtin[] = {"Tensor", "int",        "float", "bool",     "Scalar",
                                          "str",    "ScalarType", "Device", "Generator"};
    enum { N_BUILTIN = (int)(sizeof builtin / sizeof builtin[0]) };
    const char **types = gen_xmalloc((size_t)(N_BUILTIN + n_known_enums) * sizeof(char *));
    gen_sb enums = {0};

    for (int i = 0; i < N_BUILTIN; i++)
        types[i] = builtin[i];
    for (int i = 0; i < n_known_enums; i++) {
        types[N_BUILTIN + i] = known_enums[i].name;
        gen_sb_printf(&enums, ", %s", known_enums[i].name);
    }
    const char *near = gen_nearest_name(t, types, N_BUILTIN + n_known_enums);
    char *hint = near != NULL ? gen_xprintf("; did you mean '%s'?", near) : gen_xstrdup("");
    char *known = gen_xprintf("%s%s", n_known_enums > 0 ? " or a declared enum:" : "",
                              enums.buf != NULL ? enums.buf + 1 : "");
    char *msg = gen_xprintf("unknown argument type '%s'%s (expected Tensor, Tensor?, "
                            "Tensor[], int, int?, int[], int[N], float, float?, bool, "
                            "bool[N], Scalar, Scalar?, ScalarType?, str, Device, Device?, "
                            "Generator?%s)",
                            t, hint, known);
    perror_at(p, start, "%s%s", msg, "");
    free(msg);
    free(known);
    free(hint);
    free(types);
    gen_sb_free(&enums);
}

/* The checks after type t: no suffix it does not take, then a space. */
static bool type_end_ok(parser *p, const char *t)
{
    if (!p->failed && strchr("?[(", p->text[p->pos]) != NULL && p->text[p->pos] != '\0') {
        perror_at(p, p->pos, "type '%s' cannot take the suffix %s", t, here(p));
        return false;
    }
    if (p->text[p->pos] != ' ' && p->text[p->pos] != '\t' && !p->failed) {
        perror_at(p, p->pos, "malformed signature: expected a space after the type, found %s%s",
                  here(p), "");
        return false;
    }
    return true;
}

/* Parses an argument's type into a (type, nullable, list length, alias,
 * enum); false when it is malformed (reported). */
static bool parse_type(parser *p, gen_arg *a)
{
    skip_ws(p);
    size_t start = p->pos;
    char *t = ident(p, "an argument type");

    a->pos = (int)start;
    if (t == NULL)
        return false;
    bool ok = true;
    char next = p->text[p->pos];
    const value_type *vt = find_value_type(t);
    if (strcmp(t, "Tensor") == 0) {
        ok = tensor_type(p, a, next);
    } else if (vt != NULL) {
        ok = value_type_suffix(p, a, vt, next);
    } else if (strcmp(t, "Generator") == 0) {
        /* A generator is advanced by the op; NULL means the default one,
         * so the type is always nullable. */
        a->type = GEN_T_GENERATOR;
        a->nullable = true;
        ok = expect(p, '?', "'?' (a generator is written Generator?: NULL means the default "
                            "generator)");
    } else if (find_enum(t) >= 0) {
        a->type = GEN_T_INT;
        a->enum_id = find_enum(t) + 1;
    } else {
        unknown_type(p, t, start);
        ok = false;
    }
    if (ok)
        ok = type_end_ok(p, t);
    free(t);
    return ok;
}

static bool parse_default(parser *p, gen_arg *a)
{
    skip_ws(p);
    size_t start = p->pos;
    int depth = 0;

    char quote = p->text[p->pos] == '\'' || p->text[p->pos] == '"' ? p->text[p->pos] : 0;

    if (quote != 0) {
        p->pos++;
        while (p->text[p->pos] != '\0' && p->text[p->pos] != quote)
            p->pos++;
        if (p->text[p->pos] == quote)
            p->pos++;
    }
    while (quote == 0 && p->text[p->pos] != '\0') {
        char c = p->text[p->pos];
        if (c == '[')
            depth++;
        else if (c == ']')
            depth--;
        else if ((c == ',' || c == ')') && depth <= 0)
            break;
        p->pos++;
    }
    size_t end = p->pos;
    while (end > start && (p->text[end - 1] == ' ' || p->text[end - 1] == '\t'))
        end--;
    a->default_ = gen_xstrndup(p->text + start, end - start);
    if (a->enum_id > 0) {
        /* A value's name; stored as its number, what the IR and kernels use. */
        const gen_enum *e = &known_enums[a->enum_id - 1];
        if (e->n_values < 2) /* reported at the enum item */
            return true;
        for (int i = 0; i < e->n_values; i++) {
            if (strcmp(e->values[i], a->default_) == 0) {
                free(a->default_);
                a->default_ = gen_xprintf("%d", i);
                return true;
            }
        }
        const char *near = gen_nearest_name(a->default_, (const char *const *)e->values,
                                            e->n_values);
        gen_sb names = {0};
        for (int i = 0; i < e->n_values; i++)
            gen_sb_printf(&names, "%s%s", i == 0 ? "" : i + 1 == e->n_values ? " or " : ", ",
                          e->values[i]);
        char *msg = gen_xprintf("invalid default '%s' for %s (%s)%s%s%s", a->default_, e->name,
                                names.buf, near != NULL ? "; did you mean '" : "",
                                near != NULL ? near : "", near != NULL ? "'?" : "");
        perror_at(p, start, "%s%s", msg, "");
        free(msg);
        gen_sb_free(&names);
        return false;
    }
    if (!default_ok(a, a->default_)) {
        perror_at(p, start, "invalid default '%s' for an argument of type %s", a->default_,
                  gen_type_name(a));
        return false;
    }
    return true;
}

static bool parse_args(parser *p, gen_schema *s)
{
    bool kwarg_only = false;
    size_t cap = 0;

    if (accept(p, ')'))
        return true;
    for (;;) {
        skip_ws(p);
        size_t item_start = p->pos;
        if (accept(p, '*')) {
            if (kwarg_only) {
                perror_at(p, item_start, "malformed signature: '*' appears twice%s%s", "", "");
                return false;
            }
            kwarg_only = true;
        } else {
            if ((size_t)s->n_args == cap) {
                cap = cap == 0 ? 4 : cap * 2;
                s->args = gen_xrealloc(s->args, cap * sizeof(gen_arg));
            }
            gen_arg *a = &s->args[s->n_args++];
            memset(a, 0, sizeof(*a));
            a->kwarg_only = kwarg_only;
            if (!parse_type(p, a))
                return false;
            skip_ws(p);
            size_t name_pos = p->pos;
            a->name_pos = (int)name_pos;
            a->name = ident(p, "an argument name");
            if (a->name == NULL)
                return false;
            if (is_reserved(a->name)) {
                perror_at(p, name_pos, "argument name '%s' is reserved%s", a->name,
                          " (a C keyword or a name the generated code uses)");
                return false;
            }
            for (int i = 0; i + 1 < s->n_args; i++) {
                if (strcmp(s->args[i].name, a->name) == 0) {
                    perror_at(p, name_pos, "duplicate argument name '%s'%s", a->name, "");
                    return false;
                }
            }
            if (a->type == GEN_T_TENSOR_LIST) {
                for (int i = 0; i + 1 < s->n_args; i++) {
                    if (s->args[i].type == GEN_T_TENSOR_LIST) {
                        perror_at(p, item_start,
                                  "argument '%s': a second Tensor[] argument is not supported%s",
                                  a->name,
                                  " (a traced node's inputs give the length of one list only)");
                        return false;
                    }
                }
            }
            if (accept(p, '=') && !parse_default(p, a))
                return false;
        }
        if (accept(p, ')'))
            return true;
        if (!expect(p, ',', "',' or ')' after an argument"))
            return false;
    }
}

static bool parse_return(parser *p, gen_schema *s)
{
    skip_ws(p);
    size_t start = p->pos;
    char *t = ident(p, "a return type");

    if (t == NULL)
        return false;
    if (strcmp(t, "Tensor") != 0) {
        perror_at(p, start, "unsupported return type '%s'%s (expected Tensor)", t, "");
        free(t);
        return false;
    }
    free(t);
    s->returns = gen_xrealloc(s->returns, (size_t)(s->n_returns + 1) * sizeof(gen_return));
    gen_return *r = &s->returns[s->n_returns++];
    memset(r, 0, sizeof(*r));
    r->pos = (int)start;
    if (p->text[p->pos] == '(' && !alias_annotation(p, &r->alias, &r->mutable_))
        return false;
    if (p->text[p->pos] == '[') {
        p->pos++;
        if (!expect(p, ']', "']' (a list of Tensors is returned as Tensor[])"))
            return false;
        r->is_list = true;
        if (r->mutable_) {
            perror_at(p, start, "a list return cannot be written in place (%s): %s",
                      "Tensor(a!)[]", "return Tensor(a)[] views, or one Tensor(a!)");
            return false;
        }
    }
    skip_ws(p);
    if (!(isalpha((unsigned char)p->text[p->pos]) || p->text[p->pos] == '_'))
        return true;
    size_t name_pos = p->pos;
    r->name = ident(p, "a return name");
    if (is_reserved(r->name)) {
        perror_at(p, name_pos, "return name '%s' is reserved%s", r->name,
                  " (a C keyword or a name the generated code uses)");
        return false;
    }
    for (int i = 0; i + 1 < s->n_returns; i++) {
        if (s->returns[i].name != NULL && strcmp(s->returns[i].name, r->name) == 0) {
            perror_at(p, name_pos, "duplicate return name '%s'%s", r->name, "");
            return false;
        }
    }
    return true;
}

bool gen_schema_parse(const char *text, gen_loc loc, gen_schema *s)
{
    parser p = {.text = text, .pos = 0, .loc = loc, .failed = false, .entry = NULL};
    bool ok = false;

    memset(s, 0, sizeof(*s));
    size_t n = strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.");
    if (n > 0 && n < 128)
        p.entry = gen_xstrndup(text, n);
    s->name = ident(&p, "an op name");
    if (s->name == NULL)
        goto fail;
    if (p.text[p.pos] == '.') {
        p.pos++;
        s->overload = ident(&p, "an overload name after '.'");
        if (s->overload == NULL)
            goto fail;
    }
    if (!expect(&p, '(', "'(' opening the argument list"))
        goto fail;
    if (!parse_args(&p, s))
        goto fail;
    skip_ws(&p);
    if (strncmp(p.text + p.pos, "->", 2) != 0) {
        perror_at(&p, p.pos, "malformed signature: expected '->' and the return type, found %s%s",
                  here(&p), "");
        goto fail;
    }
    p.pos += 2;
    skip_ws(&p);
    s->returns_pos = (int)p.pos;
    if (accept(&p, '(')) {
        do {
            if (!parse_return(&p, s))
                goto fail;
        } while (accept(&p, ','));
        if (!expect(&p, ')', "')' closing the return list"))
            goto fail;
    } else if (!parse_return(&p, s)) {
        goto fail;
    }
    for (int i = 0; i < s->n_returns && s->n_returns > 1; i++) {
        if (s->returns[i].is_list) {
            perror_at(&p, (size_t)s->returns[i].pos,
                      "a Tensor[] return must be the only return (its length is known only "
                      "when the op runs)%s%s",
                      "", "");
            goto fail;
        }
    }
    skip_ws(&p);
    if (p.text[p.pos] != '\0') {
        perror_at(&p, p.pos, "malformed signature: unexpected %s after the return type%s",
                  here(&p), "");
        goto fail;
    }
    ok = true;
fail:
    if (!ok)
        gen_schema_free(s);
    free(p.entry);
    return ok;
}

void gen_schema_free(gen_schema *s)
{
    for (int i = 0; i < s->n_args; i++) {
        free(s->args[i].name);
        free(s->args[i].alias);
        free(s->args[i].default_);
    }
    for (int i = 0; i < s->n_returns; i++) {
        free(s->returns[i].alias);
        free(s->returns[i].name);
    }
    free(s->args);
    free(s->returns);
    free(s->name);
    free(s->overload);
    memset(s, 0, sizeof(*s));
}

const char *gen_type_name(const gen_arg *a)
{
    static _Thread_local char buf[32];

    switch (a->type) {
    case GEN_T_TENSOR:
        return a->nullable ? "Tensor?" : "Tensor";
    case GEN_T_TENSOR_LIST:
        return a->nullable ? "Tensor?[]" : "Tensor[]";
    case GEN_T_INT:
        if (a->enum_id > 0 && a->enum_id <= n_known_enums)
            return known_enums[a->enum_id - 1].name;
        return a->nullable ? "int?" : "int";
    case GEN_T_INT_LIST:
        if (a->fixed_len == 0)
            return "int[]";
        snprintf(buf, sizeof(buf), "int[%d]", a->fixed_len);
        return buf;
    case GEN_T_FLOAT:
        return a->nullable ? "float?" : "float";
    case GEN_T_BOOL:
        return "bool";
    case GEN_T_BOOL_LIST:
        snprintf(buf, sizeof(buf), "bool[%d]", a->fixed_len);
        return buf;
    case GEN_T_SCALAR:
        return a->nullable ? "Scalar?" : "Scalar";
    case GEN_T_SCALAR_TYPE:
        return a->nullable ? "ScalarType?" : "ScalarType";
    case GEN_T_STR:
        return "str";
    case GEN_T_DEVICE:
        return a->nullable ? "Device?" : "Device";
    case GEN_T_GENERATOR:
        return "Generator?";
    }
    return "?";
}
