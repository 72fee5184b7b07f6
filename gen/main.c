/*
 * main.c - the driver of yagrad-gen:
 *   yagrad-gen SPECS_DIR OUT_DIR
 *   yagrad-gen --list-outputs SPECS_DIR
 * loads SPECS_DIR/native_functions.yaml and SPECS_DIR/derivatives.yaml,
 * checks and analyses them, and writes the generated sources into OUT_DIR.
 * gen reads no runtime source: it declares the handwritten functions the
 * YAML names (decls/<section>.h), and the compiler checks their
 * definitions against those declarations.
 * OUT_DIR belongs to gen: .c/.h files there that it did not write are
 * removed, so an old layout never lingers.  --list-outputs prints the
 * paths of the files gen would write, one a line, and writes nothing.
 *
 * Nothing is written unless the whole run is free of errors, so a broken
 * spec never leaves a half-updated generated/ behind; and a file is only
 * rewritten when its text changed.  The output depends only on the specs
 * (and gen itself): no timestamps, no absolute paths, YAML order.
 */
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "onnx_map.h"

typedef struct outputs {
    char **paths;
    int n;
} outputs;

static void emit(outputs *o, const char *out_dir, const char *path, char *text)
{
    gen_write_if_changed(out_dir, path, text);
    free(text);
    o->paths = gen_xrealloc(o->paths, (size_t)(o->n + 1) * sizeof(char *));
    o->paths[o->n++] = gen_xstrdup(path);
}

/* nftw has no user pointer: the walk below is the only user of these. */
static const outputs *walk_outputs;
static size_t walk_prefix;

static int remove_stale(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    size_t n = strlen(path);

    (void)sb;
    (void)ftw;
    if (flag != FTW_F || n < 2 || path[n - 2] != '.' || (path[n - 1] != 'c' && path[n - 1] != 'h'))
        return 0;
    for (int i = 0; i < walk_outputs->n; i++)
        if (strcmp(path + walk_prefix, walk_outputs->paths[i]) == 0)
            return 0;
    if (remove(path) != 0)
        gen_error((gen_loc){0}, "cannot remove the stale output %s", path);
    return 0;
}

/* Removes .c/.h files under out_dir that this run did not write (outputs
 * of an older layout), so the build tree and generated/ hold exactly
 * gen's current output. */
static void remove_stale_outputs(const outputs *o, const char *out_dir)
{
    walk_outputs = o;
    walk_prefix = strlen(out_dir) + 1;
    nftw(out_dir, remove_stale, 16, FTW_PHYS);
}

/* ---- the outputs: one row per kind of file, the one list of what gen
 * writes.  The build reads it at configure time (--list-outputs, from
 * cmake/GenFiles.cmake) to know which files to compile;
 * gen.listed_outputs_are_the_written_files checks that the listing and
 * the files written agree ---- */

typedef enum output_scope {
    ONCE,                  /* one file */
    PER_SECTION,           /* one per `- section:` of the YAML */
    PER_POINTWISE_SECTION, /* one per section with a `pointwise:` op */
} output_scope;

typedef struct output_kind {
    const char *path; /* with %s for the section's name */
    output_scope scope;
    char *(*emit)(const gen_model *model, const gen_plans *plans, int section);
} output_kind;

/* The emitters under the table's one signature: each wrapper hands its
 * emitter the model and the plans it reads (gen.h, "the plans"). */
static char *ops_h(const gen_model *m, const gen_plans *p, int s)
{
    (void)p;
    (void)s;
    return gen_emit_ops_h(m);
}

static char *enums_h(const gen_model *m, const gen_plans *p, int s)
{
    (void)p;
    (void)s;
    return gen_emit_enums_h(m);
}

static char *generated_int_h(const gen_model *m, const gen_plans *p, int s)
{
    (void)p;
    (void)s;
    return gen_emit_generated_int_h(m);
}

static char *op_ids_h(const gen_model *m, const gen_plans *p, int s)
{
    (void)p;
    (void)s;
    return gen_emit_op_ids_h(m);
}

static char *registry_c(const gen_model *m, const gen_plans *p, int s)
{
    (void)p;
    (void)s;
    return gen_emit_registry_c(m);
}

static char *boxed_h(const gen_model *m, const gen_plans *p, int s)
{
    (void)p;
    (void)s;
    return gen_emit_boxed_h(m);
}

static char *boxed_table_c(const gen_model *m, const gen_plans *p, int s)
{
    (void)p;
    (void)s;
    return gen_emit_boxed_table_c(m);
}

static char *graph_grad_h(const gen_model *m, const gen_plans *p, int s)
{
    (void)p;
    (void)s;
    return gen_emit_graph_grad_h(m);
}

static char *graph_grad_table_c(const gen_model *m, const gen_plans *p, int s)
{
    (void)s;
    return gen_emit_graph_grad_table_c(m, p->symbolic);
}

static char *fuser_table_c(const gen_model *m, const gen_plans *p, int s)
{
    (void)s;
    return gen_emit_fuser_table_c(m, p->pointwise);
}

static char *onnx_gen_h(const gen_model *m, const gen_plans *p, int s)
{
    (void)s;
    return gen_emit_onnx_gen_h(m, p->onnx);
}

static char *onnx_table_c(const gen_model *m, const gen_plans *p, int s)
{
    (void)s;
    return gen_emit_onnx_table_c(m, p->onnx);
}

static char *ops_section_h(const gen_model *m, const gen_plans *p, int s)
{
    (void)p;
    return gen_emit_ops_section_h(m, s);
}

static char *api_c(const gen_model *m, const gen_plans *p, int s)
{
    return gen_emit_api_c(m, p->backward, s);
}

static char *nodes_h(const gen_model *m, const gen_plans *p, int s)
{
    return gen_emit_nodes_h(m, p->backward, s);
}

static char *nodes_c(const gen_model *m, const gen_plans *p, int s)
{
    return gen_emit_nodes_c(m, p->backward, s);
}

static char *boxed_c(const gen_model *m, const gen_plans *p, int s)
{
    (void)p;
    return gen_emit_boxed_c(m, s);
}

static char *graph_grad_c(const gen_model *m, const gen_plans *p, int s)
{
    return gen_emit_graph_grad_c(m, p->backward, p->symbolic, s);
}

static char *onnx_c(const gen_model *m, const gen_plans *p, int s)
{
    return gen_emit_onnx_c(m, p->onnx, s);
}

static char *decls_h(const gen_model *m, const gen_plans *p, int s)
{
    (void)p;
    return gen_emit_decls_h(m, s);
}

static char *kernels_h(const gen_model *m, const gen_plans *p, int s)
{
    (void)p;
    return gen_emit_kernels_h(m, s);
}

static char *kernels_c(const gen_model *m, const gen_plans *p, int s)
{
    (void)p;
    return gen_emit_pointwise_c(m, s);
}

static char *loops_c(const gen_model *m, const gen_plans *p, int s)
{
    return gen_emit_loops_c(m, p->pointwise, s);
}

static char *cuda_cu(const gen_model *m, const gen_plans *p, int s)
{
    return gen_emit_cuda_cu(m, p->pointwise, s);
}

/* In this order (see "Output is split by section" in gen.h). */
static const output_kind output_kinds[] = {
    {"include/yagrad/ops.h", ONCE, ops_h},
    {"include/yagrad/enums.h", ONCE, enums_h},
    {"generated_int.h", ONCE, generated_int_h},
    {"registry.c", ONCE, registry_c},
    {"op_ids.h", ONCE, op_ids_h},
    {"boxed/boxed.h", ONCE, boxed_h},
    {"boxed/table.c", ONCE, boxed_table_c},
    {"graph_grad/graph_grad.h", ONCE, graph_grad_h},
    {"graph_grad/table.c", ONCE, graph_grad_table_c},
    {"fuser/table.c", ONCE, fuser_table_c},
    {"onnx/onnx_gen.h", ONCE, onnx_gen_h},
    {"onnx/table.c", ONCE, onnx_table_c},
    {"include/yagrad/ops_%s.h", PER_SECTION, ops_section_h},
    {"api/%s.c", PER_SECTION, api_c},
    {"nodes/%s.h", PER_SECTION, nodes_h},
    {"nodes/%s.c", PER_SECTION, nodes_c},
    {"boxed/%s.c", PER_SECTION, boxed_c},
    {"graph_grad/%s.c", PER_SECTION, graph_grad_c},
    {"onnx/%s.c", PER_SECTION, onnx_c},
    {"decls/%s.h", PER_SECTION, decls_h},
    {"kernels/%s.h", PER_POINTWISE_SECTION, kernels_h},
    {"kernels/%s.c", PER_POINTWISE_SECTION, kernels_c},
    {"loops/%s.c", PER_POINTWISE_SECTION, loops_c},
    {"cuda/%s.cu", PER_POINTWISE_SECTION, cuda_cu},
};

typedef void (*output_fn)(void *ctx, const char *path, const output_kind *kind, int section);

/* Calls fn with every file of model's output: the ONCE rows, then each
 * section's rows in order. */
static void for_each_output(const gen_model *model, output_fn fn, void *ctx)
{
    const int n = (int)(sizeof output_kinds / sizeof output_kinds[0]);

    for (int k = 0; k < n; k++)
        if (output_kinds[k].scope == ONCE)
            fn(ctx, output_kinds[k].path, &output_kinds[k], -1);
    for (int s = 0; s < model->n_sections; s++)
        for (int k = 0; k < n; k++) {
            const output_kind *o = &output_kinds[k];
            if (o->scope == ONCE ||
                (o->scope == PER_POINTWISE_SECTION && !model->sections[s].has_pointwise))
                continue;
            char *path = gen_xprintf(o->path, model->sections[s].name);
            fn(ctx, path, o, s);
            free(path);
        }
}

typedef struct write_ctx {
    outputs o;
    const gen_model *model;
    const gen_plans *plans;
    const char *out_dir;
} write_ctx;

static void write_one(void *ctx, const char *path, const output_kind *kind, int section)
{
    write_ctx *w = ctx;

    emit(&w->o, w->out_dir, path, kind->emit(w->model, w->plans, section));
}

/* Writes every output file into out_dir. */
static void write_outputs(const gen_model *model, const gen_plans *plans, const char *out_dir)
{
    write_ctx w = {.model = model, .plans = plans, .out_dir = out_dir};

    for_each_output(model, write_one, &w);
    if (gen_error_count() == 0)
        remove_stale_outputs(&w.o, out_dir);
    for (int i = 0; i < w.o.n; i++)
        free(w.o.paths[i]);
    free(w.o.paths);
}

static void list_one(void *ctx, const char *path, const output_kind *kind, int section)
{
    (void)ctx;
    (void)kind;
    (void)section;
    printf("%s\n", path);
}

static int usage(void)
{
    fputs("usage: yagrad-gen SPECS_DIR OUT_DIR\n"
          "       yagrad-gen --list-outputs SPECS_DIR\n",
          stderr);
    return 2;
}

int main(int argc, char **argv)
{
    const char *positional[2];
    int n_positional = 0;
    gen_model model = {0};
    gen_plans plans = {0};
    int rc = 1;
    bool list = false;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--list-outputs") == 0)
            list = true;
        else if (argv[i][0] == '-' && argv[i][1] != '\0')
            return usage();
        else if (n_positional < 2)
            positional[n_positional++] = argv[i];
        else
            return usage();
    }
    if (n_positional != (list ? 1 : 2))
        return usage();

    char *native = gen_xprintf("%s/native_functions.yaml", positional[0]);
    char *derivs = gen_xprintf("%s/derivatives.yaml", positional[0]);
    gen_load_native(native, &model);
    if (!model.unreadable) /* nothing in derivatives.yaml can match a broken file's ops */
        gen_load_derivatives(derivs, &model);
    free(native);
    free(derivs);
    if (model.unreadable)
        goto out;
    gen_model_resolve(&model);
    if (list) {
        /* The files a build of these specs gets: the sections and their
         * pointwise ops are all it takes. */
        if (gen_error_count() == 0) {
            for_each_output(&model, list_one, NULL);
            rc = 0;
        }
        goto out;
    }
    /* Resolution done, the analyses write their plans; from here on the
     * model is only read (gen_resolve_dtypes, inside gen_analyse, is the
     * last write: the loops an op has decide its default dtypes). */
    gen_plans_init(&plans, &model);
    gen_analyse(&model, &plans);
    plans.onnx = gen_onnx_check(&model);
    if (gen_error_count() > 0)
        goto out;
    write_outputs(&model, &plans, positional[1]);
    if (gen_error_count() == 0)
        rc = 0;
out:
    if (gen_error_count() > 0)
        fprintf(stderr, "yagrad-gen: %d error%s; nothing written\n", gen_error_count(),
                gen_error_count() == 1 ? "" : "s");
    gen_plans_free(&plans);
    gen_model_free(&model);
    return rc;
}
