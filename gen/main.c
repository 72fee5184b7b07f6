/*
 * main.c - the driver of yagrad-gen:
 *   yagrad-gen [--runtime RUNTIME_DIR [--include DIR]...] SPECS_DIR OUT_DIR
 * loads SPECS_DIR/native_functions.yaml and SPECS_DIR/derivatives.yaml,
 * checks and analyses them, and writes the generated sources into OUT_DIR.
 * With --runtime, the dispatch kernels and composite implementations are
 * checked against RUNTIME_DIR/cpu/cpu.h and RUNTIME_DIR/composite/
 * composite.h (--include adds include directories for those headers).
 * OUT_DIR belongs to gen: .c/.h files there that it did not write are
 * removed, so an old layout never lingers.
 *
 * Nothing is written unless the whole run is free of errors, so a broken
 * spec never leaves a half-updated generated/ behind; and a file is only
 * rewritten when its text changed.  The output depends only on the specs
 * (and gen itself): no timestamps, no absolute paths, YAML order.
 */
#include <ftw.h>
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

/* Writes every output file into out_dir (see "Output is split by section"
 * in gen.h).  cmake/GenFiles.cmake derives the same list from the YAML. */
static void write_outputs(const gen_model *model, const gen_onnx_map *onnx, const char *out_dir)
{
    outputs o = {0};

    emit(&o, out_dir, "include/yagrad/ops.h", gen_emit_ops_h(model));
    emit(&o, out_dir, "include/yagrad/enums.h", gen_emit_enums_h(model));
    emit(&o, out_dir, "generated_int.h", gen_emit_generated_int_h(model));
    emit(&o, out_dir, "registry.c", gen_emit_registry_c(model));
    emit(&o, out_dir, "boxed/boxed.h", gen_emit_boxed_h(model));
    emit(&o, out_dir, "boxed/table.c", gen_emit_boxed_table_c(model));
    emit(&o, out_dir, "graph_grad/graph_grad.h", gen_emit_graph_grad_h(model));
    emit(&o, out_dir, "graph_grad/table.c", gen_emit_graph_grad_table_c(model));
    emit(&o, out_dir, "fuser/table.c", gen_emit_fuser_table_c(model));
    emit(&o, out_dir, "onnx/onnx_gen.h", gen_emit_onnx_gen_h(model, onnx));
    emit(&o, out_dir, "onnx/table.c", gen_emit_onnx_table_c(model, onnx));
    for (int s = 0; s < model->n_sections; s++) {
        const char *name = model->sections[s].name;
        char *path = gen_xprintf("include/yagrad/ops_%s.h", name);
        emit(&o, out_dir, path, gen_emit_ops_section_h(model, s));
        free(path);
        path = gen_xprintf("api/%s.c", name);
        emit(&o, out_dir, path, gen_emit_api_c(model, s));
        free(path);
        path = gen_xprintf("nodes/%s.h", name);
        emit(&o, out_dir, path, gen_emit_nodes_h(model, s));
        free(path);
        path = gen_xprintf("nodes/%s.c", name);
        emit(&o, out_dir, path, gen_emit_nodes_c(model, s));
        free(path);
        path = gen_xprintf("boxed/%s.c", name);
        emit(&o, out_dir, path, gen_emit_boxed_c(model, s));
        free(path);
        path = gen_xprintf("graph_grad/%s.c", name);
        emit(&o, out_dir, path, gen_emit_graph_grad_c(model, s));
        free(path);
        path = gen_xprintf("onnx/%s.c", name);
        emit(&o, out_dir, path, gen_emit_onnx_c(model, onnx, s));
        free(path);
        if (!model->sections[s].has_pointwise)
            continue;
        path = gen_xprintf("kernels/%s.h", name);
        emit(&o, out_dir, path, gen_emit_kernels_h(model, s));
        free(path);
        path = gen_xprintf("kernels/%s.c", name);
        emit(&o, out_dir, path, gen_emit_pointwise_c(model, s));
        free(path);
        path = gen_xprintf("loops/%s.c", name);
        emit(&o, out_dir, path, gen_emit_loops_c(model, s));
        free(path);
        path = gen_xprintf("cuda/%s.cu", name);
        emit(&o, out_dir, path, gen_emit_cuda_cu(model, s));
        free(path);
    }
    if (gen_error_count() == 0)
        remove_stale_outputs(&o, out_dir);
    for (int i = 0; i < o.n; i++)
        free(o.paths[i]);
    free(o.paths);
}

static int usage(void)
{
    fputs("usage: yagrad-gen [--runtime RUNTIME_DIR [--include DIR]...] SPECS_DIR OUT_DIR\n",
          stderr);
    return 2;
}

int main(int argc, char **argv)
{
    const char *runtime_dir = NULL;
    const char *includes[16];
    int n_includes = 0;
    const char *positional[2];
    int n_positional = 0;
    gen_model model = {0};
    gen_onnx_map *onnx = NULL;
    int rc = 1;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runtime") == 0 && i + 1 < argc)
            runtime_dir = argv[++i];
        else if (strcmp(argv[i], "--include") == 0 && i + 1 < argc && n_includes < 16)
            includes[n_includes++] = argv[++i];
        else if (argv[i][0] == '-' && argv[i][1] != '\0')
            return usage();
        else if (n_positional < 2)
            positional[n_positional++] = argv[i];
        else
            return usage();
    }
    if (n_positional != 2)
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
    gen_analyse(&model);
    if (runtime_dir != NULL)
        gen_check_kernels(&model, runtime_dir, includes, n_includes);
    onnx = gen_onnx_check(&model);
    if (gen_error_count() > 0)
        goto out;
    write_outputs(&model, onnx, positional[1]);
    if (gen_error_count() == 0)
        rc = 0;
out:
    if (gen_error_count() > 0)
        fprintf(stderr, "yagrad-gen: %d error%s; nothing written\n", gen_error_count(),
                gen_error_count() == 1 ? "" : "s");
    gen_onnx_maps_free(onnx, model.n_ops);
    gen_model_free(&model);
    return rc;
}
