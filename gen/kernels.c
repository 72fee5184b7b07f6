/*
 * kernels.c - checks the YAML against the handwritten kernel headers.
 *
 * Every `dispatch: {CPU: name}` must be declared in the headers of runtime/cpu/ and
 * every composite op must have yg__composite_<op> declared in
 * runtime/composite/composite.h, with the C signature the YAML implies.
 * libclang parses the two headers as they are (include paths runtime/ and
 * runtime/include) so a misspelt kernel is a located YAML error at gen time
 * rather than a link error later.
 */
#include <stdlib.h>
#include <string.h>

#include <clang-c/Index.h>

#include "gen.h"

typedef struct decl {
    char *name;
    char *type; /* canonical function type spelling */
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
    ds->v[ds->n].name = gen_xstrdup(clang_getCString(name));
    ds->v[ds->n].type = gen_xstrdup(clang_getCString(type));
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
static void parse_kernel_headers(const char *runtime_dir, decls *ds, const gen_model *model,
                                 char ***expected_canon)
{
    CXIndex index = clang_createIndex(0, 0);
    gen_sb src = {0};
    char *inc1 = gen_xprintf("-I%s", runtime_dir);
    char *inc2 = gen_xprintf("-I%s/include", runtime_dir);
    const char *args[] = {"-std=c11", "-D_GNU_SOURCE", inc1, inc2};
    CXTranslationUnit tu = NULL;

    gen_sb_puts(&src, "#include \"cpu/cpu.h\"\n#include \"composite/composite.h\"\n");
    for (int i = 0; i < model->n_ops; i++) {
        if (!model->ops[i].valid)
            continue;
        gen_params params;
        gen_op_params(&model->ops[i], &params);
        gen_sb_printf(&src, "yg_status yg__expected_%d(", i);
        for (int j = 0; j < params.n; j++)
            gen_sb_printf(&src, "%s%s", j > 0 ? ", " : "", params.decls[j]);
        gen_sb_puts(&src, ");\n");
        gen_params_free(&params);
    }
    struct CXUnsavedFile file = {
        .Filename = "yagrad-gen-kernels.c", .Contents = src.buf, .Length = src.len};
    enum CXErrorCode rc = clang_parseTranslationUnit2(index, "yagrad-gen-kernels.c", args, 4,
                                                      &file, 1, CXTranslationUnit_KeepGoing, &tu);
    if (rc != CXError_Success || tu == NULL) {
        gen_error((gen_loc){0}, "libclang could not parse the kernel headers under %s",
                  runtime_dir);
        goto out;
    }
    for (unsigned i = 0; i < clang_getNumDiagnostics(tu); i++) {
        CXDiagnostic d = clang_getDiagnostic(tu, i);
        if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
            CXString s = clang_formatDiagnostic(d, clang_defaultDiagnosticDisplayOptions());
            gen_error((gen_loc){0}, "in the kernel headers: %s", clang_getCString(s));
            clang_disposeString(s);
        }
        clang_disposeDiagnostic(d);
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
    clang_disposeIndex(index);
}

/* Lists the declarations whose names share the op's prefix, for the error. */
static char *candidates(const decls *ds, const char *prefix)
{
    gen_sb sb = {0};
    int n = 0;

    for (int i = 0; i < ds->n; i++) {
        if (strncmp(ds->v[i].name, prefix, strlen(prefix)) != 0)
            continue;
        gen_sb_printf(&sb, "%s%s", n++ > 0 ? ", " : "", ds->v[i].name);
    }
    if (n == 0)
        gen_sb_puts(&sb, "(none)");
    return gen_sb_take(&sb);
}

void gen_check_kernels(const gen_model *model, const char *runtime_dir)
{
    decls ds = {0};
    char **canon = NULL;

    parse_kernel_headers(runtime_dir, &ds, model, &canon);
    if (canon == NULL)
        goto out;
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        char *want = NULL;
        gen_loc loc;
        const char *header;
        const char *prefix;
        if (!op->valid || canon[i] == NULL)
            continue;
        if (op->kind == GEN_OP_KERNEL && op->cpu_kernel != NULL) {
            want = gen_xstrdup(op->cpu_kernel);
            loc = op->cpu_kernel_loc;
            header = "runtime/cpu/";
            prefix = "yg__cpu_";
        } else if (op->kind == GEN_OP_COMPOSITE) {
            want = gen_xprintf("yg__composite_%s", op->cname);
            loc = op->func_loc;
            header = "runtime/composite/composite.h";
            prefix = "yg__composite_";
        } else {
            continue;
        }
        const decl *d = find_decl(&ds, want);
        if (d == NULL) {
            char *list = candidates(&ds, prefix);
            gen_error(loc, "%s is not declared in %s; declared there: %s", want, header, list);
            free(list);
        } else if (strcmp(d->type, canon[i]) != 0) {
            gen_error(loc, "%s is declared as '%s' but '%s' implies '%s'", want, d->type,
                      op->full_name, canon[i]);
        }
        free(want);
    }
out:
    for (int i = 0; i < ds.n; i++) {
        free(ds.v[i].name);
        free(ds.v[i].type);
    }
    free(ds.v);
    if (canon != NULL)
        for (int i = 0; i < model->n_ops; i++)
            free(canon[i]);
    free(canon);
}
