/*
 * formula.c - analyses the C expressions of the specs with libclang: the
 * gradient formulas of derivatives.yaml and the pointwise expressions of
 * native_functions.yaml.
 *
 * Why a C compiler rather than a regex: clang already knows how to report an
 * unknown function, a wrong argument count or a type mismatch, and its AST
 * tells us exactly which arguments a formula reads and how (a tensor used
 * only inside sizes()/numel()/dtype() needs its metadata saved, not the
 * tensor).
 *
 * Formulas go into one synthetic translation unit (parsed from memory) that
 * declares every op by its short C name over opaque types (Tensor is a
 * pointer to an incomplete struct, IntArrayRef a struct, Scalar a double,
 * ScalarType a struct so that only dtype() and ScalarType arguments fit it),
 * then one function per formula whose parameters are grad, result and the
 * op's arguments.  Each formula sits alone on a line after
 * `#line N "specs/derivatives.yaml"`, so clang's presumed locations map back
 * to the YAML: line N, column = the formula's column + clang's column - 1.
 * Text gen adds around a formula gets its own `#line 1 "yagrad-gen:..."`
 * marker so diagnostics there (a formula missing its closing parenthesis)
 * can be attributed to the formula they follow.  Pointwise expressions get a
 * second unit of the same shape over doubles with the C math functions
 * declared: an op named `exp` and the math function `exp` cannot share one.
 *
 * An op with N > 1 returns is declared returning a struct TensorN, and the
 * formula of a key naming N inputs ("self, other: f(...)") initializes a
 * TensorN, so clang itself rejects a tuple where a Tensor is expected and
 * the reverse (tuple_message words that in the specs' terms).  Such a
 * shared formula is analysed once, for the key's first name.
 *
 * From each formula's AST we infer the saved values and lower the formula
 * to straight-line C: every nested op call becomes a temporary computed in
 * evaluation order, each followed by `if (st != YG_OK) goto out;`; a shared
 * formula's call writes every input's gradient (&grad_self, &grad_other).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clang-c/Index.h>

#include "gen.h"

/* ---- the synthetic translation unit and its location map ---- */

typedef struct region {
    char *file;         /* presumed file name of the region */
    int line;           /* its presumed line (1 for synthetic regions) */
    gen_loc base;       /* YAML location of the region's column 1 */
    bool exact;         /* columns map 1:1 (the region is YAML text) */
    const char *entry;  /* the op it belongs to, for messages; may be NULL */
    bool *err_flag;     /* set when a diagnostic lands here; may be NULL */
} region;

typedef struct unit {
    gen_sb text;
    region *regions;
    int n_regions;
    int cap_regions;
} unit;

static void add_region(unit *u, const char *file, int line, gen_loc base, bool exact,
                       bool *err_flag, const char *entry)
{
    if (u->n_regions == u->cap_regions) {
        u->cap_regions = u->cap_regions == 0 ? 64 : u->cap_regions * 2;
        u->regions = gen_xrealloc(u->regions, (size_t)u->cap_regions * sizeof(region));
    }
    u->regions[u->n_regions++] = (region){
        .file = gen_xstrdup(file),
        .line = line,
        .base = base,
        .exact = exact,
        .err_flag = err_flag,
        .entry = entry};
}

static void unit_free(unit *u)
{
    for (int i = 0; i < u->n_regions; i++)
        free(u->regions[i].file);
    free(u->regions);
    gen_sb_free(&u->text);
}

/* Appends `#line 1 "name"` and a region for it. */
static void synthetic_line(unit *u, const char *name, gen_loc base, bool *err_flag,
                           const char *entry)
{
    gen_sb_printf(&u->text, "#line 1 \"%s\"\n", name);
    add_region(u, name, 1, base, false, err_flag, entry);
}

/* Appends expr on its own line after a #line directive for loc; returns the
 * byte offset of its first character in the unit. */
static size_t yaml_line(unit *u, const char *expr, gen_loc loc, bool *err_flag,
                        const char *entry)
{
    gen_sb_printf(&u->text, "#line %d \"%s\"\n", loc.line, loc.file);
    add_region(u, loc.file, loc.line, (gen_loc){loc.file, loc.line, loc.col}, true, err_flag,
               entry);
    size_t offset = u->text.len;
    /* A block scalar may hold newlines; spaces keep the offsets. */
    for (const char *c = expr; *c != '\0'; c++) {
        char ch = *c == '\n' || *c == '\r' ? ' ' : *c;
        gen_sb_putn(&u->text, &ch, 1);
    }
    gen_sb_puts(&u->text, "\n");
    return offset;
}

static const char *const unit_args[] = {
    "-std=c11",
    "-fno-builtin",
    "-ferror-limit=0",
    "-Werror=implicit-function-declaration",
    "-Werror=int-conversion",
    "-Werror=incompatible-pointer-types",
    "-Werror=int-to-pointer-cast",
    "-Werror=pointer-to-int-cast",
    "-Wno-unused",
};

static CXTranslationUnit parse_unit(CXIndex index, unit *u, const char *name)
{
    struct CXUnsavedFile file = {
        .Filename = name, .Contents = u->text.buf, .Length = (unsigned long)u->text.len};
    CXTranslationUnit tu = NULL;
    enum CXErrorCode rc = clang_parseTranslationUnit2(
        index, name, unit_args, (int)(sizeof(unit_args) / sizeof(unit_args[0])), &file, 1,
        CXTranslationUnit_KeepGoing, &tu);

    if (rc != CXError_Success || tu == NULL) {
        gen_error((gen_loc){0}, "libclang could not parse the synthetic unit %s (error %d)", name,
                  (int)rc);
        return NULL;
    }
    return tu;
}

/* Removes clang's " (aka '...')" notes: the spec author knows Tensor, not
 * the synthetic unit's struct yg_tensor_. */
static char *strip_aka(const char *msg)
{
    gen_sb sb = {0};

    for (const char *p = msg; *p != '\0';) {
        const char *aka = strstr(p, " (aka '");
        if (aka == NULL) {
            gen_sb_puts(&sb, p);
            break;
        }
        gen_sb_putn(&sb, p, (size_t)(aka - p));
        const char *end = strstr(aka + 7, "')");
        p = end != NULL ? end + 2 : aka + strlen(aka);
    }
    return gen_sb_take(&sb);
}

/* N of "'TensorN'" at p (1 for "'Tensor'"), or 0 when p holds neither. */
static int tuple_size(const char *p)
{
    if (p == NULL || strncmp(p, "'Tensor", 7) != 0)
        return 0;
    p += 7;
    if (*p == '\'')
        return 1;
    int n = 0;
    while (*p >= '0' && *p <= '9')
        n = n * 10 + (*p++ - '0');
    return *p == '\'' ? n : 0;
}

/* clang's view of a tuple mismatch (an op with N returns is declared to
 * return a TensorN, and a key naming N inputs expects one), in the specs'
 * terms; NULL when msg is something else. */
static char *tuple_message(const char *msg)
{
    const char *init = "initializing ";
    const char *pass = "passing ";
    const char *with = strstr(msg, "incompatible type ");
    int want = 0, got = 0;

    if (with == NULL)
        return NULL;
    if (strncmp(msg, init, strlen(init)) == 0) {
        want = tuple_size(msg + strlen(init));
        got = tuple_size(with + strlen("incompatible type "));
    } else if (strncmp(msg, pass, strlen(pass)) == 0) {
        got = tuple_size(msg + strlen(pass));
        want = got > 1 ? 1 : 0;
    }
    if (want == 0 || got == 0 || (want == 1 && got == 1))
        return NULL;
    if (want > 1)
        return gen_xprintf("a formula shared by %d inputs must be one call to an op returning %d "
                           "Tensors (one gradient per input, in key order), but it returns %d",
                           want, want, got);
    return gen_xprintf("this op returns %d Tensors: it can only be the whole formula of a key "
                       "naming %d inputs ('a, b: op(...)')",
                       got, got);
}

/* Rewrites clang's messages into the specs' terms. */
static char *friendly_message(const char *msg, bool pointwise)
{
    const char *prefix = "implicit declaration of function '";
    const char *p = strstr(msg, prefix);

    if (p != NULL) {
        p += strlen(prefix);
        size_t n = strcspn(p, "'");
        if (pointwise)
            return gen_xprintf("unknown function '%.*s' (pointwise expressions may call only "
                               "C math functions)",
                               (int)n, p);
        return gen_xprintf("unknown op '%.*s' (no op in " GEN_NATIVE_FILE
                           " has that C name, and the helpers are sizes(), size(), numel() and "
                           "dtype())",
                           (int)n, p);
    }
    char *tuple = pointwise ? NULL : tuple_message(msg);
    if (tuple != NULL)
        return tuple;
    if (!pointwise && strstr(msg, "to parameter of incompatible type 'TensorList'") != NULL)
        return gen_xstrdup("a Tensor[] parameter takes grads (of an op returning Tensor[]) or a "
                           "Tensor[] argument of the op");
    if (!pointwise && strstr(msg, "subscripted value is not an array") != NULL)
        return gen_xstrdup("subscripts apply only to grads[i] and results[i] (an op returning "
                           "Tensor[] passes grads whole to a Tensor[] argument)");
    if (!pointwise && strstr(msg, "invalid operands to binary expression") != NULL &&
        strstr(msg, "'Tensor'") != NULL)
        return gen_xstrdup("operators do not apply to Tensor values in formulas; call an op "
                           "such as add, sub, mul, div or neg");
    return strip_aka(msg);
}

static void report_diagnostics(CXTranslationUnit tu, unit *u, bool pointwise)
{
    unsigned n = clang_getNumDiagnostics(tu);

    for (unsigned i = 0; i < n; i++) {
        CXDiagnostic diag = clang_getDiagnostic(tu, i);
        enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(diag);
        if (sev < CXDiagnostic_Warning) {
            clang_disposeDiagnostic(diag);
            continue;
        }
        CXString fname;
        unsigned line = 0, col = 0;
        clang_getPresumedLocation(clang_getDiagnosticLocation(diag), &fname, &line, &col);
        const char *file = clang_getCString(fname);
        CXString spelling = clang_getDiagnosticSpelling(diag);
        char *msg = friendly_message(clang_getCString(spelling), pointwise);
        const region *hit = NULL;
        for (int r = 0; r < u->n_regions && file != NULL; r++) {
            const region *reg = &u->regions[r];
            if (strcmp(reg->file, file) == 0 && (!reg->exact || reg->line == (int)line)) {
                hit = reg;
                break;
            }
        }
        if (hit != NULL && !hit->exact && hit->err_flag != NULL && *hit->err_flag) {
            /* A follow-on of an error already reported for this expression
             * (an unknown op returns int in C, which then fails to convert
             * to Tensor): one message per mistake is enough. */
        } else if (hit != NULL) {
            gen_loc loc = hit->base;
            if (hit->exact && col > 0)
                loc.col = hit->base.col + (int)col - 1;
            gen_error_in(hit->entry, loc, "%s", msg);
            if (hit->err_flag != NULL)
                *hit->err_flag = true;
        } else {
            gen_error((gen_loc){0}, "internal: in gen's synthetic unit %s:%u:%u: %s",
                      file != NULL ? file : "?", line, col, msg);
        }
        free(msg);
        clang_disposeString(spelling);
        clang_disposeString(fname);
        clang_disposeDiagnostic(diag);
    }
}

/* ---- cursor helpers ---- */

typedef struct kids {
    CXCursor *c;
    unsigned n;
    unsigned cap;
} kids;

static enum CXChildVisitResult collect_child(CXCursor c, CXCursor parent, CXClientData data)
{
    kids *k = data;

    (void)parent;
    if (k->n == k->cap) {
        k->cap = k->cap == 0 ? 4 : k->cap * 2;
        k->c = gen_xrealloc(k->c, k->cap * sizeof(CXCursor));
    }
    k->c[k->n++] = c;
    return CXChildVisit_Continue;
}

static kids children(CXCursor c)
{
    kids k = {0};

    clang_visitChildren(c, collect_child, &k);
    return k;
}

static char *cursor_name(CXCursor c)
{
    CXString s = clang_getCursorSpelling(c);
    char *r = gen_xstrdup(clang_getCString(s));

    clang_disposeString(s);
    return r;
}

static bool is_transparent(CXCursor c)
{
    enum CXCursorKind k = clang_getCursorKind(c);
    return k == CXCursor_UnexposedExpr || k == CXCursor_ParenExpr;
}

/* Skips implicit casts and parentheses. */
static CXCursor strip(CXCursor c)
{
    while (is_transparent(c)) {
        kids k = children(c);
        bool one = k.n == 1;
        if (one)
            c = k.c[0];
        free(k.c);
        if (!one)
            break;
    }
    return c;
}

/* Byte offset of a location in the unit: where the formula's text holds
 * it, also inside the helper macros (the `x` of dtype(x) is at x, their
 * expansion at the helper's name). */
static unsigned loc_offset(CXSourceLocation loc)
{
    unsigned offset = 0;

    clang_getFileLocation(loc, NULL, NULL, NULL, &offset);
    return offset;
}

/* The YAML location of a cursor inside a formula starting at expr_offset. */
static gen_loc cursor_loc(CXCursor c, gen_loc expr_loc, size_t expr_offset)
{
    unsigned off = loc_offset(clang_getCursorLocation(c));
    gen_loc loc = expr_loc;

    if (off >= expr_offset)
        loc.col += (int)(off - expr_offset);
    return loc;
}

/* Tensor is a pointer to the incomplete struct yg_tensor_ in the unit. */
static bool is_tensor_type(CXType t)
{
    CXType c = clang_getCanonicalType(t);

    if (c.kind != CXType_Pointer)
        return false;
    CXString sp = clang_getTypeSpelling(clang_getPointeeType(c));
    bool r = strstr(clang_getCString(sp), "yg_tensor_") != NULL;
    clang_disposeString(sp);
    return r;
}

/* The body expression of a synthetic function: the initializer of `r_` or
 * the operand of `return`. */
static bool body_expr(CXCursor fn, CXCursor *out)
{
    kids k = children(fn);
    bool found = false;

    for (unsigned i = 0; i < k.n && !found; i++) {
        if (clang_getCursorKind(k.c[i]) != CXCursor_CompoundStmt)
            continue;
        kids stmts = children(k.c[i]);
        if (stmts.n >= 1) {
            CXCursor s = stmts.c[0];
            kids inner = children(s);
            if (clang_getCursorKind(s) == CXCursor_DeclStmt && inner.n == 1) {
                kids var = children(inner.c[0]);
                if (var.n > 0) {
                    *out = var.c[var.n - 1];
                    found = true;
                }
                free(var.c);
            } else if (clang_getCursorKind(s) == CXCursor_ReturnStmt && inner.n == 1) {
                *out = inner.c[0];
                found = true;
            }
            free(inner.c);
        }
        free(stmts.c);
    }
    free(k.c);
    return found;
}

typedef struct fn_slot {
    CXCursor cursor;
    bool found;
} fn_slot;

typedef struct find_ctx {
    const char *prefix;
    fn_slot *slots;
    int n;
} find_ctx;

static enum CXChildVisitResult find_fn(CXCursor c, CXCursor parent, CXClientData data)
{
    find_ctx *fc = data;

    (void)parent;
    if (clang_getCursorKind(c) != CXCursor_FunctionDecl || !clang_isCursorDefinition(c))
        return CXChildVisit_Continue;
    char *name = cursor_name(c);
    size_t n = strlen(fc->prefix);
    if (strncmp(name, fc->prefix, n) == 0) {
        int k = atoi(name + n);
        if (k >= 0 && k < fc->n) {
            fc->slots[k].cursor = c;
            fc->slots[k].found = true;
        }
    }
    free(name);
    return CXChildVisit_Continue;
}

/* ---- C spellings in the synthetic unit ---- */

static const char *unit_type(const gen_arg *a, bool pointwise)
{
    if (pointwise)
        return a->type == GEN_T_INT ? "long" : a->type == GEN_T_BOOL ? "_Bool" : "double";
    switch (a->type) {
    case GEN_T_TENSOR:
        return "Tensor";
    case GEN_T_TENSOR_LIST:
        return "TensorList";
    case GEN_T_INT:
        return a->nullable ? "const long *" : "long";
    case GEN_T_INT_LIST:
        return "IntArrayRef";
    case GEN_T_BOOL_LIST:
        return "const _Bool *";
    case GEN_T_FLOAT:
    case GEN_T_SCALAR:
        return a->nullable ? "const double *" : a->type == GEN_T_FLOAT ? "double" : "Scalar";
    case GEN_T_BOOL:
        return "_Bool";
    case GEN_T_SCALAR_TYPE:
        return a->nullable ? "const ScalarType *" : "ScalarType";
    case GEN_T_STR:
        return "const char *";
    case GEN_T_DEVICE:
        return a->nullable ? "const int *" : "int";
    case GEN_T_GENERATOR:
        return "void *";
    }
    return "void";
}

/* Whether formulas can read (and nodes save) an argument of a's type. */
static bool formula_readable(const gen_arg *a)
{
    switch (a->type) {
    case GEN_T_TENSOR:
    case GEN_T_TENSOR_LIST:
    case GEN_T_INT_LIST:
    case GEN_T_BOOL:
    case GEN_T_SCALAR_TYPE:
        return true;
    case GEN_T_INT:
    case GEN_T_FLOAT:
    case GEN_T_SCALAR:
        return !a->nullable;
    default:
        return false;
    }
}

static void unit_params(gen_sb *sb, const gen_op *op, bool pointwise)
{
    for (int i = 0; i < op->schema.n_args; i++)
        gen_sb_printf(sb, "%s%s %s", i > 0 ? ", " : "", unit_type(&op->schema.args[i], pointwise),
                      op->schema.args[i].name);
    if (op->schema.n_args == 0)
        gen_sb_puts(sb, "void");
}

/* ---- save inference ---- */

typedef struct formula_ctx {
    gen_model *model;
    gen_deriv *d;
    gen_formula *f;
    size_t expr_offset; /* of f->expr in the unit */
    CXTranslationUnit tu;
    gen_sb code;        /* lowered code */
    /* A key naming several inputs ("self, other: f(...)"): its formulas,
     * in key order (members[0] is f); one member otherwise. */
    gen_formula **members;
    int n_members;
    uint64_t edges;     /* the edges of members: whose gradients read a save */
    bool reads_mask;    /* the formula reads grad_input_mask */
    int n_size_locals;  /* size(x, d) calls lowered so far */
    char **size_reads;  /* per call: "x|d" as lowered, then its local */
    CXCursor cursor;    /* the scalar expression being lowered */
} formula_ctx;

static void formula_error_at(formula_ctx *fc, CXCursor c, const char *msg, const char *name)
{
    gen_error_in(fc->d->op->full_name, cursor_loc(c, fc->f->loc, fc->expr_offset), msg, name);
    fc->f->has_error = true;
}

static void formula_errorf(formula_ctx *fc, CXCursor c, const char *fmt, ...) GEN_PRINTF(3, 4);

static void formula_errorf(formula_ctx *fc, CXCursor c, const char *fmt, ...)
{
    gen_sb sb = {0};
    va_list ap;

    va_start(ap, fmt);
    gen_sb_vprintf(&sb, fmt, ap);
    va_end(ap);
    formula_error_at(fc, c, "%s", sb.buf);
    gen_sb_free(&sb);
}

static int arg_index(const gen_op *op, const char *name)
{
    for (int i = 0; i < op->schema.n_args; i++)
        if (strcmp(op->schema.args[i].name, name) == 0)
            return i;
    return -1;
}

/* Records that the formula reads arg (an argument, or output output_nr
 * when output_nr >= 0: "result", "result1"...) as kind. */
static void add_save(formula_ctx *fc, CXCursor at, const char *arg, gen_save_kind kind,
                     int output_nr)
{
    gen_deriv *d = fc->d;
    int index = output_nr >= 0 ? -1 : arg_index(d->op, arg);
    char *field = kind == GEN_SAVE_SIZES || kind == GEN_SAVE_LIST_SIZES
                      ? gen_xprintf("%s_sizes", arg)
                  : kind == GEN_SAVE_NUMEL ? gen_xprintf("%s_numel", arg)
                  : kind == GEN_SAVE_DTYPE ? gen_xprintf("%s_dtype", arg)
                                           : gen_xstrdup(arg);

    for (int i = 0; i < d->n_saves; i++) {
        gen_save *s = &d->saves[i];
        if (strcmp(s->field, field) != 0)
            continue;
        if (s->kind != kind || strcmp(s->arg, arg) != 0)
            formula_error_at(fc, at, "saved value '%s' would clash with an argument of that name",
                             field);
        s->used_by |= fc->edges;
        free(field);
        return;
    }
    /* In-place ops: `self` in a formula is its value before the kernel
     * wrote it, so the node saves a copy taken before (emit_ops_c.c). */
    bool old_value = d->op->form == GEN_FORM_INPLACE && index == 0 && kind == GEN_SAVE_TENSOR;
    if (old_value) {
        const gen_op *clone = gen_model_find_cname(fc->model, "clone");
        if (clone == NULL || clone->schema.n_args != 1 || clone->schema.n_returns != 1 ||
            clone->schema.args[0].type != GEN_T_TENSOR || clone->schema.args[0].nullable) {
            formula_error_at(fc, at,
                             "this formula reads the value '%s' had before the in-place op "
                             "wrote it, which is saved as a copy made by clone(Tensor self) -> "
                             "Tensor; declare that op",
                             arg);
            free(field);
            return;
        }
    }
    d->saves = gen_xrealloc(d->saves, (size_t)(d->n_saves + 1) * sizeof(gen_save));
    d->saves[d->n_saves++] = (gen_save){.field = field,
                                        .arg = gen_xstrdup(arg),
                                        .arg_index = index,
                                        .output_nr = output_nr,
                                        .kind = kind,
                                        .used_by = fc->edges,
                                        .old_value = old_value};
}

/* list_sizes(tensors, dim) (call) in a formula: the node keeps each
 * item's size along dim, taken at record time, not the items.  dim must
 * name an int argument of the op. */
static void save_list_sizes(formula_ctx *fc, CXCursor at, CXCursor call, const char *arg)
{
    CXCursor dim = clang_getNullCursor();
    char *dname = NULL;
    int index = -1;

    if (clang_Cursor_getNumArguments(call) == 2)
        dim = strip(clang_Cursor_getArgument(call, 1));
    if (!clang_Cursor_isNull(dim) && clang_getCursorKind(dim) == CXCursor_DeclRefExpr) {
        dname = cursor_name(dim);
        index = arg_index(fc->d->op, dname);
    }
    if (index < 0 || fc->d->op->schema.args[index].type != GEN_T_INT ||
        fc->d->op->schema.args[index].nullable) {
        formula_error_at(fc, clang_Cursor_isNull(dim) ? at : dim,
                         "list_sizes(%s, dim) takes the name of an int argument of the op as "
                         "dim",
                         arg);
        free(dname);
        return;
    }
    add_save(fc, at, arg, GEN_SAVE_LIST_SIZES, -1);
    for (int i = 0; i < fc->d->n_saves; i++)
        if (fc->d->saves[i].kind == GEN_SAVE_LIST_SIZES && strcmp(fc->d->saves[i].arg, arg) == 0 &&
            fc->d->saves[i].at == NULL)
            fc->d->saves[i].at = gen_xstrdup(dname);
    free(dname);
}

/* What dtype(x) and size(x, d) expand to in the unit (formula_prelude). */
static const char dtype_helper[] = "yg__dtype_of";
static const char size_helper[] = "yg__size_of";

static bool is_call_to(CXCursor c, const char *name)
{
    if (clang_getCursorKind(c) != CXCursor_CallExpr)
        return false;
    char *n = cursor_name(c);
    bool r = strcmp(n, name) == 0;
    free(n);
    return r;
}

/* The C local holding grads[i] ("grad", "grad1"...) or results[i]
 * ("result", "result1"...) in generated code.  Caller frees. */
static char *output_local(const char *which, int i)
{
    return i == 0 ? gen_xstrdup(which) : gen_xprintf("%s%d", which, i);
}

/* grads[i] / results[i]: the gradient or value of output i.  True with
 * *which = "grad" or "result" and *index = i when c is such a subscript
 * with a constant index in range; a bad index, or the gradient of an
 * output that is not differentiable, is reported (has_error) and false
 * returned. */
static bool indexed_output(formula_ctx *fc, CXCursor c, const char **which, int *index)
{
    kids k = children(c);
    bool ok = false;
    const gen_deriv *d = fc->d;
    int n_returns = d->op->schema.n_returns;

    if (k.n == 2) {
        CXCursor base = strip(k.c[0]);
        char *name = clang_getCursorKind(base) == CXCursor_DeclRefExpr ? cursor_name(base) : NULL;
        if (name != NULL && (strcmp(name, "grads") == 0 || strcmp(name, "results") == 0)) {
            CXEvalResult ev = clang_Cursor_Evaluate(k.c[1]);
            bool is_int = ev != NULL && clang_EvalResult_getKind(ev) == CXEval_Int;
            long long i = is_int ? clang_EvalResult_getAsLongLong(ev) : -1;
            if (ev != NULL)
                clang_EvalResult_dispose(ev);
            gen_loc loc = cursor_loc(k.c[1], fc->f->loc, fc->expr_offset);
            if (i < 0 || i >= n_returns) {
                gen_error_in(d->op->full_name, loc,
                             "%s[] needs a constant index from 0 to %d (the op has %d output%s)",
                             name, n_returns - 1, n_returns, n_returns == 1 ? "" : "s");
                fc->f->has_error = true;
            } else if (name[0] == 'g' && !d->output_diff[i]) {
                gen_error_in(d->op->full_name, loc,
                             "grads[%lld] is the gradient of an output that is not "
                             "differentiable (output_differentiability), so it is never "
                             "defined",
                             i);
                fc->f->has_error = true;
            } else {
                *which = name[0] == 'g' ? "grad" : "result";
                *index = (int)i;
                ok = true;
            }
        }
        free(name);
    }
    free(k.c);
    return ok;
}

/* The d of size(x, d) is an integer expression (int arguments, integer
 * literals): clang would quietly truncate a float or Scalar to long. */
static bool check_size_dim(formula_ctx *fc, CXCursor dim)
{
    CXType t = clang_getCanonicalType(clang_getCursorType(dim));

    /* the integer types, _Bool (3) excluded */
    if (t.kind >= CXType_Char_U && t.kind <= CXType_Int128)
        return true;
    CXString sp = clang_getTypeSpelling(clang_getCursorType(dim));
    formula_errorf(fc, dim,
                   "size(x, d) takes an integer d (an int argument or literal), not '%s'",
                   clang_getCString(sp));
    clang_disposeString(sp);
    return false;
}

/* Walks the formula: records saves, rejects arithmetic on tensors and
 * constructs the lowering does not know. */
static void infer(formula_ctx *fc, CXCursor c, CXCursor parent)
{
    enum CXCursorKind kind = clang_getCursorKind(c);

    switch (kind) {
    case CXCursor_DeclRefExpr: {
        CXCursor ref = clang_getCursorReferenced(c);
        if (clang_getCursorKind(ref) != CXCursor_ParmDecl)
            break;
        char *name = cursor_name(c);
        int index = arg_index(fc->d->op, name);
        int n_returns = fc->d->op->schema.n_returns;
        if (strcmp(name, "grad_input_mask") == 0) {
            fc->reads_mask = true;
            if (fc->n_members < 2)
                formula_error_at(fc, c,
                                 "'%s' exists only in a formula shared by several inputs "
                                 "('self, other: f(...)'): one entry per input of the key",
                                 name);
        } else if (gen_returns_list(fc->d->op) &&
                   (strcmp(name, "grad") == 0 || strcmp(name, "result") == 0 ||
                    strcmp(name, "results") == 0)) {
            formula_error_at(fc, c,
                             "'%s' is not defined for an op returning Tensor[]: its formulas "
                             "pass grads (the list of output gradients) whole to a Tensor[] "
                             "argument",
                             name);
        } else if (strcmp(name, "grads") == 0 && gen_returns_list(fc->d->op)) {
            /* the output gradients as one list: nothing to save */
            fc->d->reads_grad_list = true;
        } else if ((strcmp(name, "grad") == 0 || strcmp(name, "result") == 0) && n_returns > 1) {
            formula_error_at(fc, c,
                             "'%s' is ambiguous for an op with several outputs: write grads[i] "
                             "or results[i] for output i",
                             name);
        } else if (strcmp(name, "grad") == 0 &&
                   (is_call_to(parent, size_helper) || is_call_to(parent, "sizes") ||
                    is_call_to(parent, "numel"))) {
            /* The node saves no metadata of grad (it runs with grad). */
            const char *helper = is_call_to(parent, "sizes")   ? "sizes"
                                 : is_call_to(parent, "numel") ? "numel"
                                                               : "size";
            formula_errorf(fc, c,
                           "%s() takes a Tensor argument of the op or result, not 'grad' (it "
                           "has the sizes of result: write %s(result%s))",
                           helper, helper, strcmp(helper, "size") == 0 ? ", d" : "");
        } else if (strcmp(name, "grad") == 0) {
            /* the incoming gradient: nothing to save */
            fc->f->grads_read |= 1;
            fc->d->grads_used |= 1;
        } else if (strcmp(name, "result") == 0 ||
                   (index >= 0 && fc->d->op->schema.args[index].type == GEN_T_TENSOR)) {
            /* size(x, d) keeps x's sizes and reads one at backward time. */
            bool size_of = is_call_to(parent, size_helper);
            gen_save_kind sk = is_call_to(parent, "sizes") || size_of ? GEN_SAVE_SIZES
                               : is_call_to(parent, "numel")          ? GEN_SAVE_NUMEL
                               : is_call_to(parent, dtype_helper)     ? GEN_SAVE_DTYPE
                                                                      : GEN_SAVE_TENSOR;
            if ((sk == GEN_SAVE_DTYPE || size_of) && index >= 0 &&
                fc->d->op->schema.args[index].nullable)
                formula_errorf(fc, c,
                               "%s() of '%s', a Tensor? argument that may be NULL (None), is "
                               "not supported",
                               size_of ? "size" : "dtype", name);
            else
                add_save(fc, c, name, sk, index >= 0 ? -1 : 0);
        } else if (index >= 0 && fc->d->op->schema.args[index].type == GEN_T_TENSOR_LIST) {
            if (is_call_to(parent, "list_sizes"))
                save_list_sizes(fc, c, parent, name);
            else
                add_save(fc, c, name, GEN_SAVE_TENSOR_LIST, -1);
        } else if (index >= 0 && !formula_readable(&fc->d->op->schema.args[index])) {
            formula_error_at(fc, c, "formulas cannot read '%s' yet: its type is not one of "
                                    "Tensor, Tensor[], int, int[], float, bool, Scalar and "
                                    "ScalarType",
                             name);
        } else if (index >= 0) {
            add_save(fc, c, name,
                     fc->d->op->schema.args[index].type == GEN_T_INT_LIST ? GEN_SAVE_INT_LIST
                                                                         : GEN_SAVE_VALUE,
                     -1);
        }
        free(name);
        break;
    }
    case CXCursor_ArraySubscriptExpr: {
        const char *which = NULL;
        int i = 0;
        if (gen_returns_list(fc->d->op)) {
            formula_error_at(fc, c,
                             "an op returning Tensor[] has no grads[i] or results[i]%s: its "
                             "formulas pass grads whole to a Tensor[] argument",
                             "");
            return;
        }
        if (indexed_output(fc, c, &which, &i)) {
            if (is_call_to(parent, "sizes") || is_call_to(parent, "numel")) {
                formula_error_at(fc, c,
                                 "sizes() and numel() take a Tensor argument by name, not "
                                 "grads[i] or results[i]%s",
                                 "");
            } else if (is_call_to(parent, size_helper)) {
                formula_error_at(fc, c,
                                 "size() takes a Tensor argument by name or result, not "
                                 "grads[i] or results[i]%s",
                                 "");
            } else if (is_call_to(parent, dtype_helper)) {
                formula_error_at(fc, c,
                                 "dtype() takes a Tensor argument by name, not grads[i] or "
                                 "results[i]%s",
                                 "");
            } else if (strcmp(which, "grad") == 0) {
                fc->f->grads_read |= (uint64_t)1 << i;
                fc->d->grads_used |= (uint64_t)1 << i;
            } else {
                char *local = output_local("result", i);
                add_save(fc, c, local, GEN_SAVE_TENSOR, i);
                free(local);
            }
            return;
        }
        if (!fc->f->has_error)
            formula_error_at(fc, c, "subscripts apply only to grads[i] and results[i]%s", "");
        return;
    }
    case CXCursor_BinaryOperator:
    case CXCursor_UnaryOperator:
    case CXCursor_CompoundAssignOperator:
    case CXCursor_ConditionalOperator: {
        kids k = children(c);
        bool tensor = is_tensor_type(clang_getCursorType(c));
        for (unsigned i = 0; i < k.n; i++)
            tensor |= is_tensor_type(clang_getCursorType(k.c[i]));
        free(k.c);
        if (tensor) {
            formula_error_at(fc, c,
                             "operators do not apply to Tensor values in formulas%s; call an op "
                             "such as add, sub, mul, div or neg",
                             "");
            return;
        }
        break;
    }
    case CXCursor_CallExpr:
        if (is_call_to(c, size_helper) && clang_Cursor_getNumArguments(c) == 2 &&
            !check_size_dim(fc, strip(clang_Cursor_getArgument(c, 1))))
            return;
        break;
    case CXCursor_UnexposedExpr:
    case CXCursor_ParenExpr:
    case CXCursor_IntegerLiteral:
    case CXCursor_FloatingLiteral:
    case CXCursor_CStyleCastExpr:
        break;
    default: {
        CXString ks = clang_getCursorKindSpelling(kind);
        formula_error_at(fc, c, "unsupported construct in a formula (%s)", clang_getCString(ks));
        clang_disposeString(ks);
        return;
    }
    }
    kids k = children(c);
    for (unsigned i = 0; i < k.n; i++)
        infer(fc, k.c[i], is_transparent(c) ? parent : c);
    free(k.c);
}

/* ---- lowering ---- */

typedef struct strv {
    char **v;
    int n;
} strv;

static void strv_push(strv *s, char *str)
{
    s->v = gen_xrealloc(s->v, (size_t)(s->n + 1) * sizeof(char *));
    s->v[s->n++] = str;
}

static void strv_free(strv *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

static const char *const indent8 = "        ";

/* Emits `st = yg_<cname>(args..., &target0, &target1...);` (wrapped one
 * argument per line past 100 columns) and its error check. */
static void emit_call_to(gen_sb *sb, const char *cname, const strv *args,
                         const char *const *targets, int n_targets)
{
    gen_sb line = {0};

    gen_sb_printf(&line, "%sst = yg_%s(", indent8, cname);
    size_t open = line.len;
    size_t width = open + 1;
    for (int i = 0; i < args->n; i++)
        width += strlen(args->v[i]) + 2;
    for (int i = 0; i < n_targets; i++)
        width += strlen(targets[i]) + 3;
    for (int i = 0; i < args->n + n_targets; i++) {
        if (i < args->n)
            gen_sb_puts(&line, args->v[i]);
        else
            gen_sb_printf(&line, "&%s", targets[i - args->n]);
        if (i == args->n + n_targets - 1)
            gen_sb_puts(&line, ");\n");
        else if (width > 100)
            gen_sb_printf(&line, ",\n%*s", (int)open, "");
        else
            gen_sb_puts(&line, ", ");
    }
    gen_sb_puts(sb, line.buf);
    gen_sb_printf(sb, "%sif (st != YG_OK)\n%s    goto out;\n", indent8, indent8);
    gen_sb_free(&line);
}

static void emit_call(gen_sb *sb, const char *cname, const strv *args, const char *target)
{
    emit_call_to(sb, cname, args, &target, 1);
}

static char *new_temp(formula_ctx *fc, const char *cname)
{
    gen_deriv *d = fc->d;
    char *name = gen_xprintf("%s_tmp%d", cname, d->n_temps);

    d->temps = gen_xrealloc(d->temps, (size_t)(d->n_temps + 1) * sizeof(char *));
    d->temps[d->n_temps++] = gen_xstrdup(name);
    return name;
}

static bool token_is(CXTranslationUnit tu, CXToken tok, const char *text)
{
    CXString sp = clang_getTokenSpelling(tu, tok);
    bool r = strcmp(clang_getCString(sp), text) == 0;

    clang_disposeString(sp);
    return r;
}

static char *lower_tokens(formula_ctx *fc, CXToken *toks, unsigned from, unsigned to);

/* size(x, d) at toks[i] (the `size` token) becomes a local read from x's
 * saved sizes with a range check before the call that uses it:
 *     int64_t self_size = 0;
 *     st = yg__saved_sizes_at(&node->self_sizes, "self", node->dim, &self_size);
 * Returns the local; *close is the index of the call's ')'. */
static char *lower_size_call(formula_ctx *fc, CXToken *toks, unsigned i, unsigned to,
                             unsigned *close)
{
    unsigned comma = 0, depth = 0, j = i + 1;
    char *x = NULL;

    for (; j < to; j++) {
        if (token_is(fc->tu, toks[j], "("))
            depth++;
        else if (token_is(fc->tu, toks[j], ")") && --depth == 0)
            break;
        else if (depth == 1 && comma == 0 && token_is(fc->tu, toks[j], ","))
            comma = j;
        else if (depth >= 1 && comma == 0 && x == NULL &&
                 clang_getTokenKind(toks[j]) == CXToken_Identifier) {
            CXString sp = clang_getTokenSpelling(fc->tu, toks[j]);
            x = gen_xstrdup(clang_getCString(sp));
            clang_disposeString(sp);
        }
    }
    *close = j;
    if (j >= to || comma == 0 || x == NULL) {
        free(x);
        return NULL;
    }
    char *dim = lower_tokens(fc, toks, comma + 1, j);
    /* The same size read twice in one formula reuses its local. */
    char *key = gen_xprintf("%s|%s", x, dim);
    for (int k = 0; k < fc->n_size_locals; k++) {
        if (strcmp(fc->size_reads[2 * k], key) == 0) {
            free(key);
            free(dim);
            free(x);
            return gen_xstrdup(fc->size_reads[2 * k + 1]);
        }
    }
    /* self_size, then self_size1... for other dims of self */
    int same_x = 0;
    size_t xlen = strlen(x);
    for (int k = 0; k < fc->n_size_locals; k++)
        same_x += strncmp(fc->size_reads[2 * k], x, xlen) == 0 &&
                  fc->size_reads[2 * k][xlen] == '|';
    char *local = same_x == 0 ? gen_xprintf("%s_size", x) : gen_xprintf("%s_size%d", x, same_x);
    fc->size_reads = gen_xrealloc(fc->size_reads,
                                  (size_t)(fc->n_size_locals + 1) * 2 * sizeof(char *));
    fc->size_reads[2 * fc->n_size_locals] = key;
    fc->size_reads[2 * fc->n_size_locals + 1] = gen_xstrdup(local);
    fc->n_size_locals++;
    gen_sb_printf(&fc->code, "%sint64_t %s = 0;\n", indent8, local);
    char *head = gen_xstrdup("st = yg__saved_sizes_at(");
    char *a0 = gen_xprintf("&node->%s_sizes", x);
    char *a1 = gen_xprintf("\"%s\"", x);
    char *a3 = gen_xprintf("&%s", local);
    const char *args[] = {a0, a1, dim, a3};
    gen_emit_wrapped(&fc->code, indent8, head, args, 4, ");");
    gen_sb_printf(&fc->code, "%sif (st != YG_OK)\n%s    goto out;\n", indent8, indent8);
    free(head);
    free(a0);
    free(a1);
    free(a3);
    free(dim);
    free(x);
    return local;
}

/* The text of toks[from, to) (a scalar expression in the formula) with
 * argument names turned into node fields (alpha -> node->alpha,
 * numel(self) -> node->self_numel, size(self, d) -> a checked local). */
static char *lower_tokens(formula_ctx *fc, CXToken *toks, unsigned from, unsigned to)
{
    gen_sb sb = {0};

    if (from >= to)
        return gen_xstrdup("");
    size_t pos = loc_offset(clang_getTokenLocation(fc->tu, toks[from]));
    for (unsigned i = from; i < to; i++) {
        size_t off = loc_offset(clang_getTokenLocation(fc->tu, toks[i]));
        CXString sp = clang_getTokenSpelling(fc->tu, toks[i]);
        const char *tok = clang_getCString(sp);
        gen_sb_putn(&sb, fc->f->expr + (pos - fc->expr_offset), off - pos);
        pos = off + strlen(tok);
        int index = arg_index(fc->d->op, tok);
        bool ident = clang_getTokenKind(toks[i]) == CXToken_Identifier;
        if (ident && strcmp(tok, "numel") == 0 && i + 3 < to) {
            CXString a = clang_getTokenSpelling(fc->tu, toks[i + 2]);
            CXString b = clang_getTokenSpelling(fc->tu, toks[i + 3]);
            gen_sb_printf(&sb, "node->%s_numel", clang_getCString(a));
            pos = loc_offset(clang_getTokenLocation(fc->tu, toks[i + 3])) +
                  strlen(clang_getCString(b));
            clang_disposeString(a);
            clang_disposeString(b);
            i += 3;
        } else if (ident && strcmp(tok, "size") == 0 && i + 1 < to &&
                   token_is(fc->tu, toks[i + 1], "(")) {
            unsigned close = i;
            char *local = lower_size_call(fc, toks, i, to, &close);
            if (local == NULL) {
                formula_error_at(fc, fc->cursor, "cannot lower this size() call%s", "");
                local = gen_xstrdup("0");
            } else {
                pos = loc_offset(clang_getTokenLocation(fc->tu, toks[close])) + 1;
            }
            gen_sb_puts(&sb, local);
            free(local);
            i = close;
        } else if (ident && index >= 0) {
            gen_sb_printf(&sb, "node->%s", tok);
        } else {
            gen_sb_puts(&sb, tok);
        }
        clang_disposeString(sp);
    }
    return gen_sb_take(&sb);
}

/* The text of a scalar subexpression with argument names turned into node
 * fields (lower_tokens). */
static char *lower_scalar(formula_ctx *fc, CXCursor c)
{
    CXSourceRange range = clang_getCursorExtent(c);
    size_t start = loc_offset(clang_getRangeStart(range));
    size_t end = loc_offset(clang_getRangeEnd(range));
    size_t len = strlen(fc->f->expr);
    CXToken *toks = NULL;
    unsigned n = 0;

    if (start < fc->expr_offset || end > fc->expr_offset + len || start > end) {
        formula_error_at(fc, c, "cannot lower this scalar expression%s", "");
        return gen_xstrdup("0");
    }
    /* The range from the text's offsets: its start may lie in the
     * expansion of a helper macro (size(...)), which clang_tokenize would
     * read in the macro's definition. */
    CXFile file = NULL;
    clang_getFileLocation(clang_getRangeStart(range), &file, NULL, NULL, NULL);
    range = clang_getRange(clang_getLocationForOffset(fc->tu, file, (unsigned)start),
                           clang_getLocationForOffset(fc->tu, file, (unsigned)end));
    clang_tokenize(fc->tu, range, &toks, &n);
    /* clang_tokenize may return a token past the range's end. */
    unsigned to = 0;
    while (to < n && loc_offset(clang_getTokenLocation(fc->tu, toks[to])) < end)
        to++;
    fc->cursor = c;
    char *r = lower_tokens(fc, toks, 0, to);
    clang_disposeTokens(fc->tu, toks, n);
    return r;
}

/* An IntArrayRef argument as two C arguments (items, length). */
static void lower_int_list(formula_ctx *fc, CXCursor c, strv *args)
{
    c = strip(c);
    if (is_call_to(c, "list_sizes") && clang_Cursor_getNumArguments(c) == 2) {
        CXCursor a = strip(clang_Cursor_getArgument(c, 0));
        if (clang_getCursorKind(a) == CXCursor_DeclRefExpr) {
            char *name = cursor_name(a);
            strv_push(args, gen_xprintf("node->%s_sizes.items", name));
            strv_push(args, gen_xprintf("node->%s_sizes.len", name));
            free(name);
            return;
        }
    }
    if (is_call_to(c, "sizes") && clang_Cursor_getNumArguments(c) == 1) {
        CXCursor a = strip(clang_Cursor_getArgument(c, 0));
        if (clang_getCursorKind(a) == CXCursor_DeclRefExpr) {
            char *name = cursor_name(a);
            strv_push(args, gen_xprintf("node->%s_sizes.sizes", name));
            strv_push(args, gen_xprintf("node->%s_sizes.ndim", name));
            free(name);
            return;
        }
    } else if (clang_getCursorKind(c) == CXCursor_DeclRefExpr) {
        char *name = cursor_name(c);
        strv_push(args, gen_xprintf("node->%s.items", name));
        strv_push(args, gen_xprintf("node->%s.len", name));
        free(name);
        return;
    }
    formula_error_at(fc, c,
                     "an int[] argument must be sizes(<tensor>), list_sizes(<Tensor[]>, dim) "
                     "or an int[] argument%s",
                     " of the op");
    strv_push(args, gen_xstrdup("NULL"));
    strv_push(args, gen_xstrdup("0"));
}

/* A ScalarType argument: dtype(<tensor>) (the node's saved <tensor>_dtype,
 * or the dtype of grad itself) or a ScalarType argument of the op (a
 * ScalarType? one as a pointer to the node's copy, or NULL when it was not
 * given).  The unit's types keep a value from reaching a parameter of the
 * other nullability. */
static char *lower_dtype(formula_ctx *fc, CXCursor c)
{
    c = strip(c);
    if (is_call_to(c, dtype_helper) && clang_Cursor_getNumArguments(c) == 1) {
        CXCursor a = strip(clang_Cursor_getArgument(c, 0));
        if (clang_getCursorKind(a) == CXCursor_DeclRefExpr) {
            char *name = cursor_name(a);
            char *r = strcmp(name, "grad") == 0 ? gen_xstrdup("yg_tensor_dtype(grad)")
                                                : gen_xprintf("node->%s_dtype", name);
            free(name);
            return r;
        }
    } else if (clang_getCursorKind(c) == CXCursor_DeclRefExpr) {
        char *name = cursor_name(c);
        int index = arg_index(fc->d->op, name);
        char *r = NULL;
        if (index >= 0 && fc->d->op->schema.args[index].type == GEN_T_SCALAR_TYPE)
            r = fc->d->op->schema.args[index].nullable
                    ? gen_xprintf("node->has_%s ? &node->%s : NULL", name, name)
                    : gen_xprintf("node->%s", name);
        free(name);
        if (r != NULL)
            return r;
    }
    formula_error_at(fc, c, "a ScalarType argument must be dtype(<tensor>) or a ScalarType "
                            "argument%s of the op",
                     "");
    return gen_xstrdup("0");
}

static void lower_args(formula_ctx *fc, CXCursor c, const gen_op *op, strv *args_out);

/* A Tensor[] argument as two C arguments (items, length): grads of an op
 * returning Tensor[] (undefined ones replaced by zeros, emit_nodes.c), or
 * a saved Tensor[] / Tensor?[] argument of the op. */
static void lower_tensor_list(formula_ctx *fc, CXCursor c, strv *args)
{
    c = strip(c);
    if (clang_getCursorKind(c) == CXCursor_DeclRefExpr) {
        char *name = cursor_name(c);
        int index = arg_index(fc->d->op, name);
        if (strcmp(name, "grads") == 0 && gen_returns_list(fc->d->op)) {
            strv_push(args, gen_xstrdup("(const yg_tensor *const *)grads_defined"));
            strv_push(args, gen_xstrdup("base->n_outputs"));
            free(name);
            return;
        }
        if (index >= 0 && fc->d->op->schema.args[index].type == GEN_T_TENSOR_LIST) {
            strv_push(args, gen_xprintf("(const yg_tensor *const *)%s", name));
            strv_push(args, gen_xprintf("node->%s.len", name));
            free(name);
            return;
        }
        free(name);
    }
    formula_error_at(fc, c,
                     "a Tensor[] argument must be grads (of an op returning Tensor[]) or a "
                     "Tensor[] argument%s of the op",
                     "");
    strv_push(args, gen_xstrdup("NULL"));
    strv_push(args, gen_xstrdup("0"));
}

/* Lowers a Tensor-valued expression.  With dest, the value is written to
 * dest as a new reference; without, returns the C expression holding it. */
static char *lower_tensor(formula_ctx *fc, CXCursor c, const char *dest)
{
    c = strip(c);
    enum CXCursorKind kind = clang_getCursorKind(c);

    const char *which = NULL;
    int index = 0;
    if (kind == CXCursor_ArraySubscriptExpr && indexed_output(fc, c, &which, &index)) {
        char *local = output_local(which, index);
        if (dest != NULL)
            gen_sb_printf(&fc->code, "%s%s = yg_retain(%s);\n", indent8, dest, local);
        return local;
    }
    if (kind == CXCursor_DeclRefExpr) {
        char *name = cursor_name(c);
        if (dest != NULL)
            gen_sb_printf(&fc->code, "%s%s = yg_retain(%s);\n", indent8, dest, name);
        return name;
    }
    if (kind != CXCursor_CallExpr) {
        formula_error_at(fc, c, "expected an op call or a Tensor variable here%s", "");
        return gen_xstrdup("NULL");
    }
    char *cname = cursor_name(c);
    const gen_op *op = gen_model_find_cname(fc->model, cname);
    int n = clang_Cursor_getNumArguments(c);
    if (op == NULL || n != op->schema.n_args) {
        formula_error_at(fc, c, "'%s' cannot be used as a Tensor-valued op here", cname);
        free(cname);
        return gen_xstrdup("NULL");
    }
    strv args = {0};
    lower_args(fc, c, op, &args);
    char *target = dest != NULL ? gen_xstrdup(dest) : new_temp(fc, cname);
    emit_call(&fc->code, cname, &args, target);
    strv_free(&args);
    free(cname);
    if (dest != NULL) {
        free(target);
        return NULL;
    }
    return target;
}

/* The C arguments of call c to op, each lowered (nested calls first). */
static void lower_args(formula_ctx *fc, CXCursor c, const gen_op *op, strv *args_out)
{
    int n = clang_Cursor_getNumArguments(c);
    strv args = {0};

    for (int i = 0; i < n; i++) {
        CXCursor a = clang_Cursor_getArgument(c, (unsigned)i);
        const gen_arg *p = &op->schema.args[i];
        CXCursor sa = strip(a);
        char *aname = clang_getCursorKind(sa) == CXCursor_DeclRefExpr ? cursor_name(sa) : NULL;
        bool mask = aname != NULL && strcmp(aname, "grad_input_mask") == 0;
        free(aname);
        if (p->type == GEN_T_BOOL_LIST && mask) {
            if (p->fixed_len != fc->n_members)
                formula_errorf(fc, a,
                               "grad_input_mask has one entry per input of the key (%d) but "
                               "this parameter is bool[%d]",
                               fc->n_members, p->fixed_len);
            strv_push(&args, gen_xstrdup("grad_input_mask"));
            continue;
        }
        if (!formula_readable(&op->schema.args[i])) {
            formula_error_at(fc, a, "formulas cannot pass a %s argument to an op yet",
                             gen_type_name(&op->schema.args[i]));
            strv_push(&args, gen_xstrdup("NULL"));
            continue;
        }
        switch (op->schema.args[i].type) {
        case GEN_T_TENSOR:
            strv_push(&args, lower_tensor(fc, a, NULL));
            break;
        case GEN_T_TENSOR_LIST:
            lower_tensor_list(fc, a, &args);
            break;
        case GEN_T_INT_LIST:
            lower_int_list(fc, a, &args);
            break;
        case GEN_T_SCALAR_TYPE:
            strv_push(&args, lower_dtype(fc, a));
            break;
        default:
            strv_push(&args, lower_scalar(fc, a));
            break;
        }
    }
    *args_out = args;
}

/* A formula shared by the inputs of one key: one call to an op with as
 * many Tensor returns, each written to its input's gradient, after
 * grad_input_mask (whether each input's gradient is wanted, key order). */
static void lower_shared(formula_ctx *fc, CXCursor c)
{
    c = strip(c);
    char *cname = clang_getCursorKind(c) == CXCursor_CallExpr ? cursor_name(c) : NULL;
    const gen_op *op = cname != NULL ? gen_model_find_cname(fc->model, cname) : NULL;

    if (op == NULL || op->schema.n_returns != fc->n_members ||
        clang_Cursor_getNumArguments(c) != op->schema.n_args) {
        formula_errorf(fc, c,
                       "a formula shared by %d inputs must be one call to an op returning %d "
                       "Tensors",
                       fc->n_members, fc->n_members);
        free(cname);
        return;
    }
    const char **targets = gen_xcalloc((size_t)fc->n_members, sizeof(char *));
    char **mask = gen_xcalloc((size_t)fc->n_members, sizeof(char *));
    for (int i = 0; i < fc->n_members; i++) {
        targets[i] = fc->members[i]->grad_name;
        mask[i] = gen_xprintf("yg__node_needs_grad(base, %d)", fc->members[i]->edge);
    }
    if (fc->reads_mask) {
        char *head = gen_xprintf("bool grad_input_mask[%d] = {", fc->n_members);
        gen_emit_wrapped(&fc->code, indent8, head, (const char *const *)mask, fc->n_members,
                         "};");
        free(head);
    }
    strv args = {0};
    lower_args(fc, c, op, &args);
    emit_call_to(&fc->code, cname, &args, targets, fc->n_members);
    strv_free(&args);
    for (int i = 0; i < fc->n_members; i++)
        free(mask[i]);
    free(mask);
    free(targets);
    free(cname);
}

/* The formula of a Tensor[] input: one call to an op returning Tensor[],
 * whose items become the items' gradients (emit_nodes.c checks the
 * length). */
static void lower_list_gradient(formula_ctx *fc, CXCursor c)
{
    c = strip(c);
    char *cname = clang_getCursorKind(c) == CXCursor_CallExpr ? cursor_name(c) : NULL;
    const gen_op *op = cname != NULL ? gen_model_find_cname(fc->model, cname) : NULL;

    if (op == NULL || !gen_returns_list(op) ||
        clang_Cursor_getNumArguments(c) != op->schema.n_args) {
        formula_errorf(fc, c,
                       "the gradient of the Tensor[] argument '%s' must be one call to an op "
                       "returning Tensor[] (one gradient per item)",
                       fc->f->input);
        free(cname);
        return;
    }
    char *len = gen_xprintf("%s_len", fc->f->grad_name);
    const char *targets[] = {fc->f->grad_name, len};
    strv args = {0};
    lower_args(fc, c, op, &args);
    emit_call_to(&fc->code, cname, &args, targets, 2);
    strv_free(&args);
    free(len);
    free(cname);
}

static void analyse_formula(formula_ctx *fc, CXCursor fn)
{
    CXCursor expr;

    if (!body_expr(fn, &expr)) {
        gen_error(fc->f->loc, "internal: cannot find the formula's expression in the AST");
        fc->f->has_error = true;
        return;
    }
    infer(fc, expr, clang_getNullCursor());
    if (fc->f->has_error)
        return;
    if (fc->n_members > 1)
        lower_shared(fc, expr);
    else if (fc->f->list)
        lower_list_gradient(fc, expr);
    else
        free(lower_tensor(fc, expr, fc->f->grad_name));
    if (!fc->f->has_error)
        fc->f->lowered = gen_sb_take(&fc->code);
}

/* ---- the formula unit ---- */

/* grad_<input>, unless an argument already has that name (tanh_backward
 * has grad_output and output): then grad_in_<input>. */
static char *gradient_local_name(const gen_deriv *d, const gen_formula *f)
{
    char *name = gen_xprintf("grad_%s", f->input);

    while (arg_index(d->op, name) >= 0) {
        char *longer = gen_xprintf("grad_in_%s", name + 5);
        free(name);
        name = longer;
    }
    return name;
}

static const char formula_prelude[] =
    "typedef struct yg_tensor_ *Tensor;\n"
    "typedef struct IntArrayRef { const long *data; long len; } IntArrayRef;\n"
    "typedef double Scalar;\n"
    "typedef struct TensorList { const Tensor *data; long len; } TensorList;\n"
    "typedef struct ScalarType { int dtype_; } ScalarType;\n"
    "IntArrayRef sizes(Tensor self);\n"
    "IntArrayRef list_sizes(TensorList tensors, long dim);\n"
    "long numel(Tensor self);\n"
    /* A macro, so that an op's argument named dtype (to_copy's) does not
     * hide the helper: `dtype` alone is the argument, `dtype(x)` the helper.
     * Variadic, so that clang counts the arguments against the function. */
    "ScalarType yg__dtype_of(Tensor tensor);\n"
    "#define dtype(...) yg__dtype_of(__VA_ARGS__)\n"
    /* The same for size(x, d): view's and expand's argument is named size. */
    "long yg__size_of(Tensor tensor, long dim);\n"
    "#define size(...) yg__size_of(__VA_ARGS__)\n";

static void analyse_formulas(gen_model *model, CXIndex index)
{
    unit u = {0};
    int n_formulas = 0;
    formula_ctx *ctxs = NULL;

    synthetic_line(&u, "yagrad-gen:prelude", (gen_loc){0}, NULL, NULL);
    gen_sb_puts(&u.text, formula_prelude);
    /* An op with N Tensor returns returns a TensorN, which only a key
     * naming N inputs accepts ("Tensor2 r_ = f(...)"), so clang types
     * the tuple as a whole. */
    int max_tuple = 1;
    for (int i = 0; i < model->n_ops; i++)
        if (model->ops[i].valid && model->ops[i].schema.n_returns > max_tuple)
            max_tuple = model->ops[i].schema.n_returns;
    for (int i = 0; i < model->n_derivs; i++)
        for (int j = 0; model->derivs[i].op != NULL && j < model->derivs[i].n_formulas; j++)
            if (model->derivs[i].formulas[j].group_size > max_tuple)
                max_tuple = model->derivs[i].formulas[j].group_size;
    for (int n = 2; n <= max_tuple; n++)
        gen_sb_printf(&u.text, "typedef struct Tensor%d { Tensor t_[%d]; } Tensor%d;\n", n, n, n);
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (!op->valid)
            continue;
        gen_sb_printf(&u.text, "#line %d \"%s\"\n", op->func_loc.line, GEN_NATIVE_FILE);
        add_region(&u, GEN_NATIVE_FILE, op->func_loc.line, op->func_loc, false, NULL,
                   op->full_name);
        if (gen_returns_list(op))
            gen_sb_puts(&u.text, "TensorList ");
        else if (op->schema.n_returns == 1)
            gen_sb_puts(&u.text, "Tensor ");
        else
            gen_sb_printf(&u.text, "Tensor%d ", op->schema.n_returns);
        gen_sb_printf(&u.text, "%s(", op->cname);
        unit_params(&u.text, op, false);
        gen_sb_puts(&u.text, ");\n");
    }
    for (int i = 0; i < model->n_derivs; i++)
        for (int j = 0; model->derivs[i].op != NULL && j < model->derivs[i].n_formulas; j++)
            n_formulas += model->derivs[i].formulas[j].expr != NULL &&
                          model->derivs[i].formulas[j].group_index == 0;
    ctxs = gen_xcalloc((size_t)n_formulas, sizeof(formula_ctx));
    int k = 0;
    for (int i = 0; i < model->n_derivs; i++) {
        gen_deriv *d = &model->derivs[i];
        for (int j = 0; d->op != NULL && j < d->n_formulas; j++) {
            gen_formula *f = &d->formulas[j];
            if (f->not_implemented)
                f->grad_name = gradient_local_name(d, f);
            if (f->expr == NULL)
                continue;
            f->grad_name = gradient_local_name(d, f);
            /* A shared formula is analysed once, for the key's first name. */
            if (f->group_index != 0)
                continue;
            if (strpbrk(f->expr, ";{}#") != NULL) {
                gen_error_in(d->op->full_name, f->loc,
                             "a formula must be a single C expression (no ';', '{', '}' or "
                             "'#')");
                f->has_error = true;
            }
            formula_ctx *fc = &ctxs[k];
            fc->model = model;
            fc->d = d;
            fc->f = f;
            fc->members = gen_xcalloc((size_t)f->group_size, sizeof(gen_formula *));
            for (int m = 0; m < d->n_formulas; m++) {
                gen_formula *g = &d->formulas[m];
                if (g->group == f->group && g->group_index < f->group_size) {
                    fc->members[g->group_index] = g;
                    fc->edges |= g->edge >= 0 ? (uint64_t)1 << g->edge : 0;
                }
            }
            fc->n_members = f->group_size;
            /* What clang reports in the function around the formula (a
             * tuple that does not fit the key) is about the formula. */
            char *name = gen_xprintf("yagrad-gen:formula:%d", k);
            synthetic_line(&u, name, f->loc, &f->has_error, d->op->full_name);
            free(name);
            /* An op returning Tensor[] has its gradients as one list. */
            gen_sb_printf(&u.text,
                          "void yg__formula_%d(Tensor grad, Tensor result, %s grads, "
                          "Tensor *results, const _Bool *grad_input_mask",
                          k, gen_returns_list(d->op) ? "TensorList" : "Tensor *");
            for (int a = 0; a < d->op->schema.n_args; a++)
                gen_sb_printf(&u.text, ", %s %s", unit_type(&d->op->schema.args[a], false),
                              d->op->schema.args[a].name);
            if (f->group_size > 1)
                gen_sb_printf(&u.text, ") {\nTensor%d r_ =\n", f->group_size);
            else if (f->list)
                gen_sb_puts(&u.text, ") {\nTensorList r_ =\n");
            else
                gen_sb_puts(&u.text, ") {\nTensor r_ =\n");
            /* After an error, a placeholder of the right type keeps clang quiet. */
            char *placeholder = f->group_size > 1 ? gen_xprintf("(Tensor%d){{0}}", f->group_size)
                                : f->list         ? gen_xstrdup("(TensorList){0}")
                                                  : gen_xstrdup("0");
            fc->expr_offset = yaml_line(&u, f->has_error ? placeholder : f->expr, f->loc,
                                        &f->has_error, d->op->full_name);
            free(placeholder);
            gen_loc end = f->loc;
            end.col += (int)strlen(f->expr);
            name = gen_xprintf("yagrad-gen:formula-end:%d", k);
            synthetic_line(&u, name, end, &f->has_error, d->op->full_name);
            free(name);
            gen_sb_puts(&u.text, ";}\n");
            k++;
        }
    }
    CXTranslationUnit tu = parse_unit(index, &u, "yagrad-gen-formulas.c");
    if (tu == NULL)
        goto out;
    report_diagnostics(tu, &u, false);
    fn_slot *slots = gen_xcalloc((size_t)n_formulas, sizeof(fn_slot));
    find_ctx fctx = {.prefix = "yg__formula_", .slots = slots, .n = n_formulas};
    clang_visitChildren(clang_getTranslationUnitCursor(tu), find_fn, &fctx);
    for (k = 0; k < n_formulas; k++) {
        if (ctxs[k].f->has_error)
            continue;
        if (!slots[k].found) {
            gen_error(ctxs[k].f->loc, "internal: formula function %d not found", k);
            continue;
        }
        ctxs[k].tu = tu;
        analyse_formula(&ctxs[k], slots[k].cursor);
    }
    free(slots);
    clang_disposeTranslationUnit(tu);
out:
    for (k = 0; k < n_formulas; k++) {
        gen_sb_free(&ctxs[k].code);
        free(ctxs[k].members);
        for (int i = 0; i < 2 * ctxs[k].n_size_locals; i++)
            free(ctxs[k].size_reads[i]);
        free(ctxs[k].size_reads);
    }
    free(ctxs);
    unit_free(&u);
}

/* ---- the pointwise unit ---- */

static const char pointwise_prelude[] =
    "double exp(double); double exp2(double); double expm1(double); double log(double);\n"
    "double log2(double); double log10(double); double log1p(double); double sqrt(double);\n"
    "double cbrt(double); double sin(double); double cos(double); double tan(double);\n"
    "double asin(double); double acos(double); double atan(double); double atan2(double, "
    "double);\n"
    "double sinh(double); double cosh(double); double tanh(double); double asinh(double);\n"
    "double acosh(double); double atanh(double); double pow(double, double);\n"
    "double fabs(double); double floor(double); double ceil(double); double round(double);\n"
    "double trunc(double); double fmin(double, double); double fmax(double, double);\n"
    "double fmod(double, double); double erf(double); double erfc(double);\n"
    "double tgamma(double); double lgamma(double); double hypot(double, double);\n"
    "double copysign(double, double);\n";

typedef struct calls_ctx {
    bool has_call;
} calls_ctx;

static enum CXChildVisitResult find_call(CXCursor c, CXCursor parent, CXClientData data)
{
    calls_ctx *cc = data;

    (void)parent;
    if (clang_getCursorKind(c) == CXCursor_CallExpr) {
        cc->has_call = true;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

static void analyse_pointwise(gen_model *model, CXIndex index)
{
    unit u = {0};
    bool *errors = gen_xcalloc((size_t)model->n_ops, sizeof(bool));

    synthetic_line(&u, "yagrad-gen:prelude", (gen_loc){0}, NULL, NULL);
    gen_sb_puts(&u.text, pointwise_prelude);
    for (int i = 0; i < model->n_ops; i++) {
        gen_op *op = &model->ops[i];
        if (!op->valid || op->kind != GEN_OP_POINTWISE)
            continue;
        if (strpbrk(op->pointwise, ";{}#") != NULL) {
            gen_error_in(op->full_name, op->pointwise_loc,
                         "a pointwise expression must be a single C expression (no ';', '{', "
                         "'}' or '#')");
            errors[i] = true;
        }
        char *name = gen_xprintf("yagrad-gen:pointwise:%d", i);
        synthetic_line(&u, name, op->func_loc, &errors[i], op->full_name);
        free(name);
        gen_sb_printf(&u.text, "double yg__pointwise_%d(", i);
        unit_params(&u.text, op, true);
        gen_sb_puts(&u.text, ") { return\n");
        yaml_line(&u, errors[i] ? "0" : op->pointwise, op->pointwise_loc, &errors[i],
                  op->full_name);
        gen_loc end = op->pointwise_loc;
        end.col += (int)strlen(op->pointwise);
        name = gen_xprintf("yagrad-gen:pointwise-end:%d", i);
        synthetic_line(&u, name, end, &errors[i], op->full_name);
        free(name);
        gen_sb_puts(&u.text, ";}\n");
    }
    CXTranslationUnit tu = parse_unit(index, &u, "yagrad-gen-pointwise.c");
    if (tu == NULL)
        goto out;
    report_diagnostics(tu, &u, true);
    fn_slot *slots = gen_xcalloc((size_t)model->n_ops, sizeof(fn_slot));
    find_ctx fctx = {.prefix = "yg__pointwise_", .slots = slots, .n = model->n_ops};
    clang_visitChildren(clang_getTranslationUnitCursor(tu), find_fn, &fctx);
    for (int i = 0; i < model->n_ops; i++) {
        gen_op *op = &model->ops[i];
        CXCursor expr;
        if (!op->valid || op->kind != GEN_OP_POINTWISE || errors[i])
            continue;
        if (!slots[i].found || !body_expr(slots[i].cursor, &expr)) {
            gen_error(op->pointwise_loc, "internal: pointwise function %d not found", i);
            continue;
        }
        /* Integer loops only for expressions without calls (math
         * functions) and division (integer division truncates). */
        calls_ctx cc = {false};
        find_call(expr, clang_getNullCursor(), &cc);
        if (!cc.has_call)
            clang_visitChildren(expr, find_call, &cc);
        op->int_safe = !cc.has_call && strchr(op->pointwise, '/') == NULL;
    }
    free(slots);
    clang_disposeTranslationUnit(tu);
out:
    free(errors);
    unit_free(&u);
}

/* Orders a node's saved values by argument (outputs last, in order), then
 * kind, so struct fields follow the signature rather than formula order. */
static void sort_saves(gen_deriv *d)
{
    for (int i = 1; i < d->n_saves; i++) {
        gen_save s = d->saves[i];
        int key = s.arg_index < 0 ? d->op->schema.n_args + s.output_nr : s.arg_index;
        int j = i;
        while (j > 0) {
            const gen_save *p = &d->saves[j - 1];
            int pkey = p->arg_index < 0 ? d->op->schema.n_args + p->output_nr : p->arg_index;
            if (pkey < key || (pkey == key && p->kind <= s.kind))
                break;
            d->saves[j] = d->saves[j - 1];
            j--;
        }
        d->saves[j] = s;
    }
}

void gen_analyse(gen_model *model)
{
    CXIndex index = clang_createIndex(0, 0);

    analyse_pointwise(model, index);
    gen_resolve_dtypes(model);
    analyse_formulas(model, index);
    for (int i = 0; i < model->n_derivs; i++)
        if (model->derivs[i].op != NULL)
            sort_saves(&model->derivs[i]);
    clang_disposeIndex(index);
}
