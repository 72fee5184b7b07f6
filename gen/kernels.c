/*
 * kernels.c - checks the YAML against the handwritten kernel headers.
 *
 * Every dispatch kernel must be declared in the headers of runtime/cpu/ or
 * in runtime/cuda/ops.h, and every composite op must have
 * yg__composite_<op> declared in runtime/composite/composite.h, with the C
 * signature the YAML implies.  libclang parses the headers as they are (include paths runtime/ and
 * runtime/include) so a misspelt kernel is a located YAML error at gen time
 * rather than a link error later.
 */
#include <stdlib.h>
#include <string.h>

#include <clang-c/Index.h>

#include "gen.h"

typedef struct decl {
    char *name;
    char *type;     /* canonical function type spelling */
    int n_params;
    char **params;  /* each parameter's type as written (typedef names kept) */
    char **canon;   /* each parameter's canonical type */
    char *result;   /* the result type as written */
} decl;

typedef struct decls {
    decl *v;
    int n;
} decls;

static enum CXChildVisitResult collect_decl(CXCursor c, CXCursor parent, CXClientData data)
{
    decls *ds = data;

    (void)parent;
    if (clang_getCursorKind(c) != CXCursor_FunctionDecl)
        return CXChildVisit_Continue;
    CXString name = clang_getCursorSpelling(c);
    CXString type = clang_getTypeSpelling(clang_getCanonicalType(clang_getCursorType(c)));
    ds->v = gen_xrealloc(ds->v, (size_t)(ds->n + 1) * sizeof(decl));
    decl *d = &ds->v[ds->n];
    CXType ft = clang_getCursorType(c);
    d->name = gen_xstrdup(clang_getCString(name));
    d->type = gen_xstrdup(clang_getCString(type));
    int n = clang_getNumArgTypes(ft);
    d->n_params = n < 0 ? 0 : n;
    d->params = gen_xcalloc((size_t)d->n_params, sizeof(char *));
    d->canon = gen_xcalloc((size_t)d->n_params, sizeof(char *));
    for (int i = 0; i < d->n_params; i++) {
        CXType at = clang_getArgType(ft, (unsigned)i);
        CXString a = clang_getTypeSpelling(at);
        CXString ac = clang_getTypeSpelling(clang_getCanonicalType(at));
        d->params[i] = gen_xstrdup(clang_getCString(a));
        d->canon[i] = gen_xstrdup(clang_getCString(ac));
        clang_disposeString(a);
        clang_disposeString(ac);
    }
    CXString rs = clang_getTypeSpelling(clang_getResultType(ft));
    d->result = gen_xstrdup(clang_getCString(rs));
    clang_disposeString(rs);
    ds->n++;
    clang_disposeString(name);
    clang_disposeString(type);
    return CXChildVisit_Continue;
}

static const decl *find_decl(const decls *ds, const char *name)
{
    for (int i = 0; i < ds->n; i++)
        if (strcmp(ds->v[i].name, name) == 0)
            return &ds->v[i];
    return NULL;
}

/* Parses the kernel headers, plus one declaration per op of the type its
 * YAML implies (yg__expected_<i>), so clang spells both the same way:
 * comparing canonical type spellings is then a signature check. */
static void parse_kernel_headers(const char *runtime_dir, const char *const *include_dirs,
                                 int n_include_dirs, decls *ds, const gen_model *model,
                                 char ***expected_canon)
{
    CXIndex index = clang_createIndex(0, 0);
    gen_sb src = {0};
    char *inc1 = gen_xprintf("-I%s", runtime_dir);
    char *inc2 = gen_xprintf("-I%s/include", runtime_dir);
    const char *args[4 + 16] = {"-std=c11", "-D_GNU_SOURCE", inc1, inc2};
    char *extra[16];
    int n_args = 4;
    CXTranslationUnit tu = NULL;
    bool header_errors = false;

    for (int i = 0; i < n_include_dirs && i < 16; i++) {
        extra[i] = gen_xprintf("-I%s", include_dirs[i]);
        args[n_args++] = extra[i];
    }

    /* cuda/ops.h where the runtime has one (the error catalogue's small
     * runtimes have not). */
    gen_sb_puts(&src, "#include \"cpu/cpu.h\"\n#if __has_include(\"cuda/ops.h\")\n"
                      "#include \"cuda/ops.h\"\n#endif\n#include \"composite/composite.h\"\n"
                      "#if __has_include(\"meta/meta.h\")\n#include \"meta/meta.h\"\n"
                      "#endif\n");
    for (int i = 0; i < model->n_ops; i++) {
        if (!model->ops[i].valid)
            continue;
        gen_params params;
        gen_op_params_kernel(&model->ops[i], &params);
        gen_sb_printf(&src, "yg_status yg__expected_%d(", i);
        for (int j = 0; j < params.n; j++)
            gen_sb_printf(&src, "%s%s", j > 0 ? ", " : "", params.decls[j]);
        gen_sb_puts(&src, ");\n");
        gen_params_free(&params);
        if (!model->ops[i].structured)
            continue;
        gen_op_params_impl(&model->ops[i], &params);
        gen_sb_printf(&src, "yg_status yg__expected_impl_%d(", i);
        for (int j = 0; j < params.n; j++)
            gen_sb_printf(&src, "%s%s", j > 0 ? ", " : "", params.decls[j]);
        gen_sb_puts(&src, ");\n");
        gen_params_free(&params);
    }
    struct CXUnsavedFile file = {
        .Filename = "yagrad-gen-kernels.c", .Contents = src.buf, .Length = src.len};
    enum CXErrorCode rc = clang_parseTranslationUnit2(index, "yagrad-gen-kernels.c", args,
                                                      n_args, &file, 1,
                                                      CXTranslationUnit_KeepGoing, &tu);
    if (rc != CXError_Success || tu == NULL) {
        gen_error((gen_loc){0}, "libclang could not parse the kernel headers under %s",
                  runtime_dir);
        goto out;
    }
    for (unsigned i = 0; i < clang_getNumDiagnostics(tu); i++) {
        CXDiagnostic d = clang_getDiagnostic(tu, i);
        /* The first error only: the rest usually follow from it. */
        if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error && !header_errors) {
            CXFile f = NULL;
            unsigned line = 0, col = 0;
            clang_getSpellingLocation(clang_getDiagnosticLocation(d), &f, &line, &col, NULL);
            CXString fname = clang_getFileName(f);
            CXString msg = clang_getDiagnosticSpelling(d);
            const char *path = clang_getCString(fname) != NULL ? clang_getCString(fname) : "?";
            size_t n = strlen(runtime_dir);
            /* "runtime/cpu/cpu.h", whatever directory gen was given. */
            bool inside = strncmp(path, runtime_dir, n) == 0 && path[n] == '/';
            gen_error((gen_loc){0},
                      "the kernel headers do not compile, so the dispatch kernels cannot be "
                      "checked: %s%s:%u:%u: %s",
                      inside ? "runtime" : "", inside ? path + n : path, line, col,
                      clang_getCString(msg));
            clang_disposeString(msg);
            clang_disposeString(fname);
            header_errors = true;
        }
        clang_disposeDiagnostic(d);
    }
    if (header_errors) {
        clang_disposeTranslationUnit(tu);
        goto out;
    }
    clang_visitChildren(clang_getTranslationUnitCursor(tu), collect_decl, ds);
    *expected_canon = gen_xcalloc((size_t)model->n_ops, sizeof(char *));
    for (int i = 0; i < model->n_ops; i++) {
        char *name = gen_xprintf("yg__expected_%d", i);
        const decl *e = find_decl(ds, name);
        if (e != NULL)
            (*expected_canon)[i] = gen_xstrdup(e->type);
        free(name);
    }
    clang_disposeTranslationUnit(tu);
out:
    gen_sb_free(&src);
    free(inc1);
    free(inc2);
    for (int i = 0; i < n_include_dirs && i < 16; i++)
        free(extra[i]);
    clang_disposeIndex(index);
}

/* Edit distance of a and b (both short C names). */
/* The (up to 4) declarations with prefix whose names are nearest to want,
 * nearest first (ties in declaration order). */
static char *candidates(const decls *ds, const char *prefix, const char *want)
{
    gen_sb sb = {0};
    int picked[4];
    int n = 0;

    while (n < 4) {
        int best = -1;
        size_t best_d = 0;
        for (int i = 0; i < ds->n; i++) {
            bool taken = false;
            for (int k = 0; k < n; k++)
                taken |= picked[k] == i;
            if (taken || strncmp(ds->v[i].name, prefix, strlen(prefix)) != 0)
                continue;
            size_t d = gen_edit_distance(ds->v[i].name, want);
            if (best < 0 || d < best_d) {
                best = i;
                best_d = d;
            }
        }
        if (best < 0)
            break;
        picked[n] = best;
        gen_sb_printf(&sb, "%s%s", n > 0 ? ", " : "", ds->v[best].name);
        n++;
    }
    if (n == 0)
        gen_sb_puts(&sb, "(none)");
    return gen_sb_take(&sb);
}

/* "yg_status name(const yg_tensor *self, ...);": the whole prototype the
 * YAML implies for op's kernel or composite, with parameter names, to
 * paste into the header.  Caller frees. */
static char *prototype(const gen_op *op, const char *name, bool impl)
{
    gen_sb sb = {0};
    gen_params params;
    if (impl)
        gen_op_params_impl(op, &params);
    else
        gen_op_params_kernel(op, &params);
    gen_sb_printf(&sb, "yg_status %s(", name);
    for (int j = 0; j < params.n; j++)
        gen_sb_printf(&sb, "%s%s", j > 0 ? ", " : "", params.decls[j]);
    gen_sb_puts(&sb, params.n == 0 ? "void);" : ");");
    gen_params_free(&params);
    return gen_sb_take(&sb);
}

/* Says how the declaration d differs from the one the YAML implies. */
static void report_mismatch(const gen_op *op, gen_loc loc, const decl *d, const decl *e,
                            bool impl)
{
    if (d->n_params != e->n_params) {
        char *proto = prototype(op, d->name, impl);
        gen_error_in(op->full_name, loc, "%s takes %d parameters but the YAML implies %d: %s",
                     d->name, d->n_params, e->n_params, proto);
        free(proto);
        return;
    }
    for (int i = 0; i < d->n_params; i++) {
        if (strcmp(d->canon[i], e->canon[i]) != 0) {
            gen_error_in(op->full_name, loc,
                         "%s: parameter %d is '%s' but the YAML implies '%s'", d->name, i + 1,
                         d->params[i], e->params[i]);
            return;
        }
    }
    gen_error_in(op->full_name, loc, "%s returns '%s' but the YAML implies '%s'", d->name,
                 d->result, e->result);
}

/* Checks that want is declared (in header, whose names start with prefix)
 * with the canonical type expected: the op's kernel type, or with impl
 * its structured implementation's (yg_tensor *out). */
static void check_one(const decls *ds, const gen_op *op, const char *want, gen_loc loc,
                      const char *header, const char *prefix, const char *expected, int i,
                      bool impl)
{
    const decl *d = find_decl(ds, want);
    if (d == NULL) {
        char *list = candidates(ds, prefix, want);
        char *proto = prototype(op, want, impl);
        gen_error_in(op->full_name, loc,
                     "%s is not declared in %s; declare it as: %s (the nearest declared "
                     "there: %s)",
                     want, header, proto, list);
        free(proto);
        free(list);
    } else if (strcmp(d->type, expected) != 0) {
        char *name = impl ? gen_xprintf("yg__expected_impl_%d", i)
                          : gen_xprintf("yg__expected_%d", i);
        report_mismatch(op, loc, d, find_decl(ds, name), impl);
        free(name);
    }
}

void gen_check_kernels(const gen_model *model, const char *runtime_dir,
                       const char *const *include_dirs, int n_include_dirs)
{
    decls ds = {0};
    char **canon = NULL;

    parse_kernel_headers(runtime_dir, include_dirs, n_include_dirs, &ds, model, &canon);
    if (canon == NULL)
        goto out;
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (!op->valid || canon[i] == NULL)
            continue;
        if (op->structured) {
            char *meta = gen_xprintf("yg__meta_%s", op->cname);
            char *impl = gen_xprintf("yg__expected_impl_%d", i);
            const decl *e = find_decl(&ds, impl);
            check_one(&ds, op, meta, op->structured_loc, "runtime/meta/meta.h", "yg__meta_",
                      canon[i], i, false);
            if (e != NULL) {
                check_one(&ds, op, op->cpu_kernel, op->cpu_kernel_loc, "runtime/cpu/", "yg__cpu_",
                          e->type, i, true);
                if (op->cuda_kernel != NULL && strcmp(op->cuda_kernel, op->cpu_kernel) != 0)
                    check_one(&ds, op, op->cuda_kernel, op->cuda_kernel_loc, "runtime/cuda/ops.h",
                              "yg__cuda_", e->type, i, true);
            }
            free(meta);
            free(impl);
        } else if (op->kind == GEN_OP_KERNEL && op->cpu_kernel != NULL) {
            check_one(&ds, op, op->cpu_kernel, op->cpu_kernel_loc, "runtime/cpu/", "yg__cpu_",
                      canon[i], i, false);
            if (op->cuda_kernel != NULL && strcmp(op->cuda_kernel, op->cpu_kernel) != 0)
                check_one(&ds, op, op->cuda_kernel, op->cuda_kernel_loc, "runtime/cuda/ops.h",
                          "yg__cuda_", canon[i], i, false);
        } else if (op->kind == GEN_OP_COMPOSITE) {
            char *want = gen_xprintf("yg__composite_%s", op->cname);
            check_one(&ds, op, want, op->func_loc, "runtime/composite/composite.h",
                      "yg__composite_", canon[i], i, false);
            free(want);
        }
    }
out:
    for (int i = 0; i < ds.n; i++) {
        free(ds.v[i].name);
        free(ds.v[i].type);
        for (int j = 0; j < ds.v[i].n_params; j++) {
            free(ds.v[i].params[j]);
            free(ds.v[i].canon[j]);
        }
        free(ds.v[i].params);
        free(ds.v[i].canon);
        free(ds.v[i].result);
    }
    free(ds.v);
    if (canon != NULL)
        for (int i = 0; i < model->n_ops; i++)
            free(canon[i]);
    free(canon);
}
