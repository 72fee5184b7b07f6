/*
 * formula_unit.c - builds, parses and reads the synthetic translation units
 * through which gen analyses the C expressions of the specs with libclang:
 * the gradient formulas of derivatives.yaml and the pointwise expressions
 * of native_functions.yaml.  It holds the units' location map and the
 * rewriting of clang's diagnostics into the specs' terms, the cursor
 * helpers the other formula_*.c files share, and gen_analyse, which drives
 * the analysis: save inference is in formula_saves.c, lowering to C in
 * formula_lower.c.
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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <clang-c/Index.h>

#include "formula_int.h"
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

/* The functions a pointwise expression may call (pointwise_prelude below), for
 * "did you mean" hints. */
static const char *const pointwise_functions[] = {
    "exp",   "exp2",  "expm1", "log",   "log2",     "log10", "log1p",  "sqrt",  "cbrt",
    "sin",   "cos",   "tan",   "asin",  "acos",     "atan",  "atan2",  "sinh",  "cosh",
    "tanh",  "asinh", "acosh", "atanh", "pow",      "fabs",  "floor",  "ceil",  "round",
    "trunc", "fmin",  "fmax",  "fmod",  "erf",      "erfc",  "tgamma", "lgamma", "hypot",
    "copysign", "isinf", "isnan", "isfinite"};

/* "; did you mean 'x'?" for the name quoted at p (n bytes) when one of
 * candidates is near it, else "".  Caller frees. */
static char *did_you_mean(const char *p, size_t n, const char *const *candidates, int count)
{
    char *want = gen_xstrndup(p, n);
    const char *near = gen_nearest_name(want, candidates, count);
    free(want);
    return near != NULL ? gen_xprintf("; did you mean '%s'?", near) : gen_xstrdup("");
}

/* What a formula or expression may name, for hints: the ops' C names and
 * the helpers (formulas), or the functions of pointwise_prelude
 * (pointwise expressions); the entry's arguments and, in formulas, grad
 * and result.  names[] of *n. */
typedef struct name_list {
    const char **v;
    int n;
} name_list;

static void add_name(name_list *l, const char *s)
{
    l->v = gen_xrealloc(l->v, (size_t)(l->n + 1) * sizeof *l->v);
    l->v[l->n++] = s;
}

/* Rewrites clang's messages into the specs' terms; entry: the op whose
 * formula or expression it is (for its argument names), or NULL. */
static char *friendly_message(const char *msg, bool pointwise, const gen_model *model,
                              const char *entry)
{
    const char *prefix = "implicit declaration of function '";
    const char *p = strstr(msg, prefix);
    const char *undeclared = "use of undeclared identifier '";
    const char *u = strstr(msg, undeclared);

    if (p != NULL) {
        p += strlen(prefix);
        size_t n = strcspn(p, "'");
        name_list l = {0};
        if (pointwise) {
            for (size_t i = 0; i < sizeof pointwise_functions / sizeof pointwise_functions[0]; i++)
                add_name(&l, pointwise_functions[i]);
        } else {
            for (int i = 0; i < model->n_ops; i++)
                if (model->ops[i].valid)
                    add_name(&l, model->ops[i].cname);
            add_name(&l, "sizes");
            add_name(&l, "size");
            add_name(&l, "numel");
            add_name(&l, "dtype");
            add_name(&l, "list_sizes");
        }
        char *hint = did_you_mean(p, n, l.v, l.n), *r;
        free(l.v);
        if (pointwise)
            r = gen_xprintf("unknown function '%.*s'%s (pointwise expressions may call the C "
                            "math functions listed in docs/spec-reference.md)",
                            (int)n, p, hint);
        else
            r = gen_xprintf("unknown op '%.*s'%s (no op in " GEN_NATIVE_FILE
                            " has that C name, and the helpers are sizes(), size(), numel() and "
                            "dtype())",
                            (int)n, p, hint);
        free(hint);
        return r;
    }
    if (u != NULL && entry != NULL) {
        u += strlen(undeclared);
        size_t n = strcspn(u, "'");
        const gen_op *op = NULL;
        for (int i = 0; i < model->n_ops && op == NULL; i++)
            if (model->ops[i].valid && strcmp(model->ops[i].full_name, entry) == 0)
                op = &model->ops[i];
        name_list l = {0};
        for (int i = 0; op != NULL && i < op->schema.n_args; i++)
            add_name(&l, op->schema.args[i].name);
        if (!pointwise) {
            add_name(&l, "grad");
            add_name(&l, "grads");
            add_name(&l, "result");
            add_name(&l, "results");
        }
        char *hint = did_you_mean(u, n, l.v, l.n);
        free(l.v);
        char *r = gen_xprintf("use of undeclared identifier '%.*s'%s", (int)n, u, hint);
        free(hint);
        return r;
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

static void report_diagnostics(CXTranslationUnit tu, unit *u, bool pointwise,
                               const gen_model *model)
{
    unsigned n = clang_getNumDiagnostics(tu);
    gen_loc last = {0}; /* of the last error reported */

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
        const region *hit = NULL;
        for (int r = 0; r < u->n_regions && file != NULL; r++) {
            const region *reg = &u->regions[r];
            if (strcmp(reg->file, file) == 0 && (!reg->exact || reg->line == (int)line)) {
                hit = reg;
                break;
            }
        }
        char *msg = friendly_message(clang_getCString(spelling), pointwise, model,
                                     hit != NULL ? hit->entry : NULL);
        gen_loc loc = hit != NULL ? hit->base : (gen_loc){0};
        if (hit != NULL && hit->exact && col > 0)
            loc.col = hit->base.col + (int)col - 1;
        if (hit != NULL && ((!hit->exact && hit->err_flag != NULL && *hit->err_flag) ||
                            (loc.file == last.file && loc.line == last.line &&
                             loc.col == last.col))) {
            /* A follow-on of an error already reported for this expression
             * or at this very spot (an unknown op returns int in C, which
             * then fails to convert to Tensor): one message per mistake. */
        } else if (hit != NULL) {
            gen_error_in(hit->entry, loc, "%s", msg);
            last = loc;
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

/* ---- cursor helpers (declared in formula_int.h) ---- */

static enum CXChildVisitResult collect_child(CXCursor c, CXCursor parent, CXClientData data)
{
    gen_kids *k = data;

    (void)parent;
    if (k->n == k->cap) {
        k->cap = k->cap == 0 ? 4 : k->cap * 2;
        k->c = gen_xrealloc(k->c, k->cap * sizeof(CXCursor));
    }
    k->c[k->n++] = c;
    return CXChildVisit_Continue;
}

gen_kids gen__cursor_children(CXCursor c)
{
    gen_kids k = {0};

    clang_visitChildren(c, collect_child, &k);
    return k;
}

char *gen__cursor_name(CXCursor c)
{
    CXString s = clang_getCursorSpelling(c);
    char *r = gen_xstrdup(clang_getCString(s));

    clang_disposeString(s);
    return r;
}

bool gen__cursor_is_transparent(CXCursor c)
{
    enum CXCursorKind k = clang_getCursorKind(c);
    return k == CXCursor_UnexposedExpr || k == CXCursor_ParenExpr;
}

/* Skips implicit casts and parentheses. */
CXCursor gen__cursor_strip(CXCursor c)
{
    while (gen__cursor_is_transparent(c)) {
        gen_kids k = gen__cursor_children(c);
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
unsigned gen__loc_offset(CXSourceLocation loc)
{
    unsigned offset = 0;

    clang_getFileLocation(loc, NULL, NULL, NULL, &offset);
    return offset;
}

/* The YAML location of a cursor inside a formula starting at expr_offset. */
gen_loc gen__cursor_loc(CXCursor c, gen_loc expr_loc, size_t expr_offset)
{
    unsigned off = gen__loc_offset(clang_getCursorLocation(c));
    gen_loc loc = expr_loc;

    if (off >= expr_offset)
        loc.col += (int)(off - expr_offset);
    return loc;
}

/* Tensor is a pointer to the incomplete struct yg_tensor_ in the unit. */
bool gen__is_tensor_type(CXType t)
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
    gen_kids k = gen__cursor_children(fn);
    bool found = false;

    for (unsigned i = 0; i < k.n && !found; i++) {
        if (clang_getCursorKind(k.c[i]) != CXCursor_CompoundStmt)
            continue;
        gen_kids stmts = gen__cursor_children(k.c[i]);
        if (stmts.n >= 1) {
            CXCursor s = stmts.c[0];
            gen_kids inner = gen__cursor_children(s);
            if (clang_getCursorKind(s) == CXCursor_DeclStmt && inner.n == 1) {
                gen_kids var = gen__cursor_children(inner.c[0]);
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
    char *name = gen__cursor_name(c);
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
    const gen_type_info *t = gen_type_of(a);

    if (pointwise)
        return t->pointwise_ctype;
    return a->nullable ? t->unit_ctype_opt : t->unit_ctype;
}

static void unit_params(gen_sb *sb, const gen_op *op, bool pointwise)
{
    for (int i = 0; i < op->schema.n_args; i++)
        gen_sb_printf(sb, "%s%s %s", i > 0 ? ", " : "", unit_type(&op->schema.args[i], pointwise),
                      op->schema.args[i].name);
    if (op->schema.n_args == 0)
        gen_sb_puts(sb, "void");
}

/* ---- the analysis of one formula ---- */

/* Infers the saves of the formula whose synthetic function is fn, then
 * lowers it; fc->fp->lowered is set only when both succeed. */
static void analyse_formula(gen_formula_ctx *fc, CXCursor fn)
{
    CXCursor expr;

    if (!body_expr(fn, &expr)) {
        gen_error(fc->f->loc, "internal: cannot find the formula's expression in the AST");
        fc->fp->failed = true;
        return;
    }
    gen__formula_infer(fc, expr, clang_getNullCursor());
    if (fc->fp->failed)
        return;
    gen__formula_lower(fc, expr);
    if (fc->fp->failed)
        return;
    fc->fp->lowered = gen_sb_take(&fc->code);
    /* The same formula as IR, for the graph executor's autodiff; in-place
     * and out= ops stay outside autodiff subgraphs and have none. */
    if (fc->d->no_graph_grad != NULL || (fc->d->op->form != GEN_FORM_FUNCTIONAL &&
                                        fc->d->op->form != GEN_FORM_VIEW))
        return;
    for (int i = 0; i < fc->d->op->schema.n_args; i++)
        if (fc->d->op->schema.args[i].mutable_)
            return;
    gen__formula_lower_graph_grad(fc, expr);
    if (!fc->fp->failed)
        fc->sp->graph_grad[fc->f - fc->d->formulas] = gen_sb_take(&fc->code);
    gen_sb_free(&fc->code);
}

/* ---- the formula unit ---- */

/* grad_<input>, unless an argument already has that name (tanh_backward
 * has grad_output and output): then grad_in_<input>. */
static char *gradient_local_name(const gen_deriv *d, const gen_formula *f)
{
    char *name = gen_xprintf("grad_%s", f->input);

    while (gen__arg_index(d->op, name) >= 0) {
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
    "#define size(...) yg__size_of(__VA_ARGS__)\n"
    /* And device(x) / device_index(x): creation ops' argument is device. */
    "int yg__device_of(Tensor tensor);\n"
    "#define device(...) yg__device_of(__VA_ARGS__)\n"
    "long yg__device_index_of(Tensor tensor);\n"
    "#define device_index(...) yg__device_index_of(__VA_ARGS__)\n";

/* The formula unit's TensorN typedefs: an op with N Tensor returns
 * returns a TensorN, which only a key naming N inputs accepts
 * ("Tensor2 r_ = f(...)"), so clang types the tuple as a whole. */
static void declare_tuples(unit *u, const gen_model *model)
{
    int max_tuple = 1;

    for (int i = 0; i < model->n_ops; i++)
        if (model->ops[i].valid && model->ops[i].schema.n_returns > max_tuple)
            max_tuple = model->ops[i].schema.n_returns;
    for (int i = 0; i < model->n_derivs; i++)
        for (int j = 0; model->derivs[i].op != NULL && j < model->derivs[i].n_formulas; j++)
            if (model->derivs[i].formulas[j].group_size > max_tuple)
                max_tuple = model->derivs[i].formulas[j].group_size;
    for (int n = 2; n <= max_tuple; n++)
        gen_sb_printf(&u->text, "typedef struct Tensor%d { Tensor t_[%d]; } Tensor%d;\n", n, n, n);
}

/* A declaration of every valid op in the formula unit, at its YAML
 * line, so formulas call ops with clang checking the arguments. */
static void declare_ops(unit *u, const gen_model *model)
{
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (!op->valid)
            continue;
        gen_sb_printf(&u->text, "#line %d \"%s\"\n", op->func_loc.line, GEN_NATIVE_FILE);
        add_region(u, GEN_NATIVE_FILE, op->func_loc.line, op->func_loc, false, NULL,
                   op->full_name);
        if (gen_returns_list(op))
            gen_sb_puts(&u->text, "TensorList ");
        else if (op->schema.n_returns == 1)
            gen_sb_puts(&u->text, "Tensor ");
        else
            gen_sb_printf(&u->text, "Tensor%d ", op->schema.n_returns);
        gen_sb_printf(&u->text, "%s(", op->cname);
        unit_params(&u->text, op, false);
        gen_sb_puts(&u->text, ");\n");
    }
}

/* How many formula functions the unit holds: one per formula with an
 * expression, a shared one once. */
static int count_formulas(const gen_model *model)
{
    int n_formulas = 0;

    for (int i = 0; i < model->n_derivs; i++)
        for (int j = 0; model->derivs[i].op != NULL && j < model->derivs[i].n_formulas; j++)
            n_formulas += model->derivs[i].formulas[j].expr != NULL &&
                          model->derivs[i].formulas[j].group_index == 0;
    return n_formulas;
}

/* Sets up fc for formula j of derivative entry i: the formulas of its
 * key (members), the edges they fill and the plans it writes. */
static void init_formula_ctx(gen_formula_ctx *fc, const gen_model *model, gen_plans *plans, int i,
                             int j)
{
    const gen_deriv *d = &model->derivs[i];
    const gen_formula *f = &d->formulas[j];

    fc->model = model;
    fc->d = d;
    fc->f = f;
    fc->bp = &plans->backward[i];
    fc->fp = &plans->backward[i].formulas[j];
    fc->sp = &plans->symbolic[i];
    fc->members = gen_xcalloc((size_t)f->group_size, sizeof(gen_formula *));
    for (int m = 0; m < d->n_formulas; m++) {
        const gen_formula *g = &d->formulas[m];
        if (g->group == f->group && g->group_index < f->group_size) {
            fc->members[g->group_index] = g;
            fc->edges |= g->edge >= 0 ? (uint64_t)1 << g->edge : 0;
        }
    }
    fc->n_members = f->group_size;
}

/* Appends fc's formula to the unit as function yg__formula_<k> taking
 * the names a formula may read, its expression at its YAML location
 * (fc->expr_offset: where it starts in the unit). */
static void add_formula_fn(unit *u, gen_formula_ctx *fc, int k)
{
    const gen_deriv *d = fc->d;
    const gen_formula *f = fc->f;
    bool *failed = &fc->fp->failed;

    /* What clang reports in the function around the formula (a
     * tuple that does not fit the key) is about the formula. */
    char *name = gen_xprintf("yagrad-gen:formula:%d", k);
    synthetic_line(u, name, f->loc, failed, d->op->full_name);
    free(name);
    /* An op returning Tensor[] has its gradients as one list. */
    gen_sb_printf(&u->text,
                  "void yg__formula_%d(Tensor grad, Tensor result, %s grads, "
                  "Tensor *results, const _Bool *grad_input_mask",
                  k, gen_returns_list(d->op) ? "TensorList" : "Tensor *");
    for (int a = 0; a < d->op->schema.n_args; a++)
        gen_sb_printf(&u->text, ", %s %s", unit_type(&d->op->schema.args[a], false),
                      d->op->schema.args[a].name);
    if (f->group_size > 1)
        gen_sb_printf(&u->text, ") {\nTensor%d r_ =\n", f->group_size);
    else if (f->list)
        gen_sb_puts(&u->text, ") {\nTensorList r_ =\n");
    else
        gen_sb_puts(&u->text, ") {\nTensor r_ =\n");
    /* After an error, a placeholder of the right type keeps clang quiet. */
    char *placeholder = f->group_size > 1 ? gen_xprintf("(Tensor%d){{0}}", f->group_size)
                        : f->list         ? gen_xstrdup("(TensorList){0}")
                                          : gen_xstrdup("0");
    fc->expr_offset = yaml_line(u, *failed ? placeholder : f->expr, f->loc, failed,
                                d->op->full_name);
    free(placeholder);
    gen_loc end = f->loc;
    end.col += (int)strlen(f->expr);
    name = gen_xprintf("yagrad-gen:formula-end:%d", k);
    synthetic_line(u, name, end, failed, d->op->full_name);
    free(name);
    gen_sb_puts(&u->text, ";}\n");
}

/* Parses the formula unit, reports clang's diagnostics and analyses
 * each of the n_formulas formulas (ctxs) clang found no error in. */
static void analyse_unit(const gen_model *model, CXIndex index, unit *u, gen_formula_ctx *ctxs,
                         int n_formulas)
{
    CXTranslationUnit tu = parse_unit(index, u, "yagrad-gen-formulas.c");

    if (tu == NULL)
        return;
    report_diagnostics(tu, u, false, model);
    fn_slot *slots = gen_xcalloc((size_t)n_formulas, sizeof(fn_slot));
    find_ctx fctx = {.prefix = "yg__formula_", .slots = slots, .n = n_formulas};
    clang_visitChildren(clang_getTranslationUnitCursor(tu), find_fn, &fctx);
    for (int k = 0; k < n_formulas; k++) {
        if (ctxs[k].fp->failed)
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
}

/* Frees the n formula contexts ctxs and what each holds. */
static void free_formula_ctxs(gen_formula_ctx *ctxs, int n)
{
    for (int k = 0; k < n; k++) {
        gen_sb_free(&ctxs[k].code);
        free(ctxs[k].members);
        for (int i = 0; i < 2 * ctxs[k].n_size_locals; i++)
            free(ctxs[k].size_reads[i]);
        free(ctxs[k].size_reads);
    }
    free(ctxs);
}

/* Analyses every derivative formula in one synthetic unit (the prelude,
 * the ops, one function per formula): names each gradient local, infers
 * the saves and lowers the formula (analyse_formula). */
void gen_analyse_formulas(const gen_model *model, gen_plans *plans)
{
    CXIndex index = clang_createIndex(0, 0);
    unit u = {0};
    int n_formulas = count_formulas(model);
    gen_formula_ctx *ctxs = gen_xcalloc((size_t)n_formulas, sizeof(gen_formula_ctx));
    int k = 0;

    synthetic_line(&u, "yagrad-gen:prelude", (gen_loc){0}, NULL, NULL);
    gen_sb_puts(&u.text, formula_prelude);
    declare_tuples(&u, model);
    declare_ops(&u, model);
    for (int i = 0; i < model->n_derivs; i++) {
        const gen_deriv *d = &model->derivs[i];
        for (int j = 0; d->op != NULL && j < d->n_formulas; j++) {
            const gen_formula *f = &d->formulas[j];
            gen_formula_plan *fp = &plans->backward[i].formulas[j];
            fp->failed = f->has_error;
            if (f->not_implemented)
                fp->grad_name = gradient_local_name(d, f);
            if (f->expr == NULL)
                continue;
            fp->grad_name = gradient_local_name(d, f);
            /* A shared formula is analysed once, for the key's first name. */
            if (f->group_index != 0)
                continue;
            if (strpbrk(f->expr, ";{}#") != NULL) {
                gen_error_in(d->op->full_name, f->loc,
                             "a formula must be a single C expression (no ';', '{', '}' or "
                             "'#')");
                fp->failed = true;
            }
            init_formula_ctx(&ctxs[k], model, plans, i, j);
            add_formula_fn(&u, &ctxs[k], k);
            k++;
        }
    }
    analyse_unit(model, index, &u, ctxs, n_formulas);
    free_formula_ctxs(ctxs, n_formulas);
    unit_free(&u);
    for (int i = 0; i < model->n_derivs; i++)
        if (model->derivs[i].op != NULL)
            gen__sort_saves(&model->derivs[i], &plans->backward[i]);
    clang_disposeIndex(index);
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
    "double copysign(double, double);\n"
    /* Classification, as <math.h> has them (C99 macros; int results). */
    "int isinf(double); int isnan(double); int isfinite(double);\n"
    "#define INFINITY (__builtin_inf())\n"
    "#define NAN (__builtin_nan(\"\"))\n"
    /* core/intmath.h, for `pointwise_int:` expressions */
    "long yg_int_div_trunc(long, long); long yg_int_div_floor(long, long);\n"
    "long yg_int_remainder(long, long);\n";

/* The functions a `pointwise_int:` expression may call (core/intmath.h). */
static const char *const int_functions[] = {"yg_int_div_trunc", "yg_int_div_floor",
                                            "yg_int_remainder"};

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

/* The first call under a cursor of a function other than the yg_int_*
 * ones, for `pointwise_int:` (NULL when there is none; caller frees). */
typedef struct int_calls_ctx {
    char *bad;
} int_calls_ctx;

static enum CXChildVisitResult find_non_int_call(CXCursor c, CXCursor parent, CXClientData data)
{
    int_calls_ctx *ic = data;

    (void)parent;
    if (clang_getCursorKind(c) == CXCursor_CallExpr) {
        char *name = gen__cursor_name(c);
        bool ok = false;
        for (size_t i = 0; i < sizeof int_functions / sizeof int_functions[0]; i++)
            ok |= strcmp(name, int_functions[i]) == 0;
        if (!ok) {
            ic->bad = name;
            return CXChildVisit_Break;
        }
        free(name);
    }
    if (clang_getCursorKind(c) == CXCursor_FloatingLiteral) {
        ic->bad = gen_xstrdup("a floating literal");
        return CXChildVisit_Break;
    }
    return CXChildVisit_Recurse;
}

/* The ends (unit offsets) of the floating literals under a cursor. */
typedef struct floats_ctx {
    unsigned *ends;
    int n, cap;
} floats_ctx;

static enum CXChildVisitResult find_floats(CXCursor c, CXCursor parent, CXClientData data)
{
    floats_ctx *fc = data;

    (void)parent;
    if (clang_getCursorKind(c) == CXCursor_FloatingLiteral) {
        if (fc->n == fc->cap) {
            fc->cap = fc->cap ? 2 * fc->cap : 8;
            fc->ends = gen_xrealloc(fc->ends, (size_t)fc->cap * sizeof(unsigned));
        }
        fc->ends[fc->n++] = gen__loc_offset(clang_getRangeEnd(clang_getCursorExtent(c)));
    }
    return CXChildVisit_Recurse;
}

static bool has_call(CXCursor c)
{
    calls_ctx cc = {false};

    find_call(c, clang_getNullCursor(), &cc);
    if (!cc.has_call)
        clang_visitChildren(c, find_call, &cc);
    return cc.has_call;
}

/* The text of the expression (which starts at unit offset base) between
 * unit offsets from and to, with an f after each floating literal ending
 * in that range when f32 (not after one that has a suffix already). */
static char *
body_text(const char *expr, size_t base, size_t from, size_t to, const floats_ctx *fl, bool f32)
{
    gen_sb sb = {0};

    for (size_t off = from; off < to; off++) {
        gen_sb_putn(&sb, &expr[off - base], 1);
        for (int i = 0; f32 && i < fl->n; i++) {
            char last = expr[off - base];
            if (fl->ends[i] == off + 1 && strchr("fFlL", last) == NULL)
                gen_sb_puts(&sb, "f");
        }
    }
    return gen_sb_take(&sb);
}

static void cursor_span(CXCursor c, size_t *from, size_t *to)
{
    CXSourceRange r = clang_getCursorExtent(c);

    *from = gen__loc_offset(clang_getRangeStart(r));
    *to = gen__loc_offset(clang_getRangeEnd(r));
}

/* Fills pp->body from the expression's AST (expr, starting at unit offset
 * base): see gen_pointwise_plan.body. */
static void pointwise_bodies(const gen_op *op, gen_pointwise_plan *pp, CXCursor expr, size_t base)
{
    floats_ctx fl = {0};
    size_t len = strlen(op->pointwise);
    CXCursor c = expr;

    find_floats(expr, clang_getNullCursor(), &fl);
    clang_visitChildren(expr, find_floats, &fl);
    /* Look through parentheses and implicit conversions to the top
     * operator. */
    for (;;) {
        enum CXCursorKind kind = clang_getCursorKind(c);
        gen_kids k = gen__cursor_children(c);
        bool through = (kind == CXCursor_ParenExpr || kind == CXCursor_UnexposedExpr) && k.n == 1;
        if (through)
            c = k.c[0];
        free(k.c);
        if (!through)
            break;
    }
    gen_kids parts = {0};
    bool select = false;
    if (clang_getCursorKind(c) == CXCursor_ConditionalOperator) {
        parts = gen__cursor_children(c);
        select = parts.n == 3 && (has_call(parts.c[1]) || has_call(parts.c[2]));
    }
    for (int k = 0; k < 2; k++) {
        if (!select) {
            pp->body[k][0] = body_text(op->pointwise, base, base, base + len, &fl, k == 1);
            continue;
        }
        for (int j = 0; j < 3; j++) {
            size_t from, to;
            cursor_span(parts.c[j], &from, &to);
            if (from < base || to > base + len || from > to) {
                gen_error(op->pointwise_loc, "internal: pointwise subexpression out of range");
                from = to = base;
            }
            pp->body[k][j] = body_text(op->pointwise, base, from, to, &fl, k == 1);
        }
    }
    free(parts.c);
    free(fl.ends);
}

/* Appends op's pointwise expression (is_int: its pointwise_int one) to
 * the unit as the function yg__pointwise_<i> of its arguments as C
 * scalars (yg__pwint_<i>: every argument a long), after checking that it
 * is a single C expression; *err is set on any error in it.  Returns the
 * expression's offset in the unit. */
static size_t add_pointwise_fn(unit *u, const gen_op *op, int i, bool is_int, bool *err)
{
    const char *expr = is_int ? op->pointwise_int : op->pointwise;
    gen_loc loc = is_int ? op->pointwise_int_loc : op->pointwise_loc;
    const char *tag = is_int ? "pointwise-int" : "pointwise";

    if (strpbrk(expr, ";{}#") != NULL) {
        gen_error_in(op->full_name, loc, "%s",
                     is_int ? "a pointwise_int expression must be a single C expression (no ';', "
                              "'{', '}' or '#')"
                            : "a pointwise expression must be a single C expression (no ';', '{', "
                              "'}' or '#')");
        *err = true;
    }
    char *name = gen_xprintf("yagrad-gen:%s:%d", tag, i);
    synthetic_line(u, name, op->func_loc, err, op->full_name);
    free(name);
    if (is_int) {
        gen_sb_printf(&u->text, "long yg__pwint_%d(", i);
        for (int a = 0; a < op->schema.n_args; a++)
            gen_sb_printf(&u->text, "%slong %s", a > 0 ? ", " : "", op->schema.args[a].name);
    } else {
        gen_sb_printf(&u->text, "double yg__pointwise_%d(", i);
        unit_params(&u->text, op, true);
    }
    gen_sb_puts(&u->text, ") { return\n");
    size_t base = yaml_line(u, *err ? "0" : expr, loc, err, op->full_name);
    gen_loc end = loc;
    end.col += (int)strlen(expr);
    name = gen_xprintf("yagrad-gen:%s-end:%d", tag, i);
    synthetic_line(u, name, end, err, op->full_name);
    free(name);
    gen_sb_puts(&u->text, ";}\n");
    return base;
}

/* Reports a call in op's pointwise_int expression (expr, its AST) other
 * than the integer helpers, or a floating literal. */
static void check_int_calls(const gen_op *op, CXCursor expr)
{
    int_calls_ctx ic = {NULL};

    if (find_non_int_call(expr, clang_getNullCursor(), &ic) != CXChildVisit_Break)
        clang_visitChildren(expr, find_non_int_call, &ic);
    if (ic.bad != NULL) {
        gen_error_in(op->full_name, op->pointwise_int_loc,
                     "a pointwise_int expression computes in integers: it may call "
                     "yg_int_div_trunc, yg_int_div_floor and yg_int_remainder "
                     "(core/intmath.h), not %s%s%s",
                     strcmp(ic.bad, "a floating literal") == 0 ? "" : "'", ic.bad,
                     strcmp(ic.bad, "a floating literal") == 0 ? "" : "'");
        free(ic.bad);
    }
}

/* Analyses op, pointwise op i of the parsed unit: slot and int_slot are
 * its two functions, base the unit offset of its expression.  Sets pp's
 * int_safe and loop bodies, and checks pointwise_int. */
static void analyse_pointwise_op(const gen_op *op, gen_pointwise_plan *pp, int i,
                                 const fn_slot *slot, const fn_slot *int_slot, size_t base)
{
    CXCursor expr;

    if (!slot->found || !body_expr(slot->cursor, &expr)) {
        gen_error(op->pointwise_loc, "internal: pointwise function %d not found", i);
        return;
    }
    /* Integer loops only for expressions without calls (math
     * functions) and division (integer division truncates). */
    pp->int_safe = !has_call(expr) && strchr(op->pointwise, '/') == NULL;
    pointwise_bodies(op, pp, expr, base);
    if (op->pointwise_int == NULL)
        return;
    if (pp->int_safe) {
        gen_error_in(op->full_name, op->pointwise_int_loc,
                     "the 'pointwise' expression already runs on integers (no calls, no "
                     "'/'); drop 'pointwise_int'");
        return;
    }
    if (!int_slot->found || !body_expr(int_slot->cursor, &expr)) {
        gen_error(op->pointwise_int_loc, "internal: pointwise_int function %d not found", i);
        return;
    }
    check_int_calls(op, expr);
}

/* Analyses every pointwise op's expression in one synthetic unit (the
 * prelude, one function per expression): reports clang's diagnostics,
 * then fills each op's pointwise plan (analyse_pointwise_op). */
void gen_analyse_pointwise(const gen_model *model, gen_plans *plans)
{
    CXIndex index = clang_createIndex(0, 0);
    unit u = {0};
    bool *errors = gen_xcalloc((size_t)model->n_ops, sizeof(bool));
    size_t *bases = gen_xcalloc((size_t)model->n_ops, sizeof(size_t));

    synthetic_line(&u, "yagrad-gen:prelude", (gen_loc){0}, NULL, NULL);
    gen_sb_puts(&u.text, pointwise_prelude);
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (!op->valid || op->kind != GEN_OP_POINTWISE)
            continue;
        bases[i] = add_pointwise_fn(&u, op, i, false, &errors[i]);
        /* The integer loops' expression: every argument an integer. */
        if (op->pointwise_int != NULL)
            add_pointwise_fn(&u, op, i, true, &errors[i]);
    }
    CXTranslationUnit tu = parse_unit(index, &u, "yagrad-gen-pointwise.c");
    if (tu == NULL)
        goto out;
    report_diagnostics(tu, &u, true, model);
    fn_slot *slots = gen_xcalloc((size_t)model->n_ops, sizeof(fn_slot));
    find_ctx fctx = {.prefix = "yg__pointwise_", .slots = slots, .n = model->n_ops};
    clang_visitChildren(clang_getTranslationUnitCursor(tu), find_fn, &fctx);
    fn_slot *int_slots = gen_xcalloc((size_t)model->n_ops, sizeof(fn_slot));
    find_ctx ictx = {.prefix = "yg__pwint_", .slots = int_slots, .n = model->n_ops};
    clang_visitChildren(clang_getTranslationUnitCursor(tu), find_fn, &ictx);
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (op->valid && op->kind == GEN_OP_POINTWISE && !errors[i])
            analyse_pointwise_op(op, &plans->pointwise[i], i, &slots[i], &int_slots[i],
                                 bases[i]);
    }
    free(int_slots);
    free(slots);
    clang_disposeTranslationUnit(tu);
out:
    free(bases);
    free(errors);
    unit_free(&u);
    clang_disposeIndex(index);
}

void gen_analyse(gen_model *model, gen_plans *plans)
{
    gen_analyse_pointwise(model, plans);
    gen_resolve_dtypes(model, plans->pointwise);
    gen_check_derivatives_present(model);
    gen_analyse_formulas(model, plans);
}
