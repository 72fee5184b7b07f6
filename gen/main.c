/*
 * main.c - the driver of yagrad-gen:
 *   yagrad-gen [--runtime RUNTIME_DIR] SPECS_DIR OUT_DIR
 * loads SPECS_DIR/native_functions.yaml and SPECS_DIR/derivatives.yaml,
 * checks and analyses them, and writes the generated sources into OUT_DIR.
 *
 * Nothing is written unless the whole run is free of errors, so a broken
 * spec never leaves a half-updated generated/ behind; and a file is only
 * rewritten when its text changed.  The output depends only on the specs
 * (and gen itself): no timestamps, no absolute paths, YAML order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

typedef char *(*emit_fn)(const gen_model *model);

static const struct {
    const char *path;
    emit_fn emit;
} outputs[] = {
    {"include/yagrad/ops.h", gen_emit_ops_h},
    {"generated_int.h", gen_emit_generated_int_h},
    {"autograd_nodes.h", gen_emit_nodes_h},
    {"ops.c", gen_emit_ops_c},
    {"autograd_nodes.c", gen_emit_nodes_c},
    {"cpu_pointwise.c", gen_emit_pointwise_c},
    {"registry.c", gen_emit_registry_c},
};

static int usage(void)
{
    fputs("usage: yagrad-gen [--runtime RUNTIME_DIR] SPECS_DIR OUT_DIR\n", stderr);
    return 2;
}

int main(int argc, char **argv)
{
    const char *runtime_dir = NULL;
    const char *positional[2];
    int n_positional = 0;
    gen_model model = {0};
    int rc = 1;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runtime") == 0 && i + 1 < argc)
            runtime_dir = argv[++i];
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
    gen_load_derivatives(derivs, &model);
    free(native);
    free(derivs);
    gen_model_resolve(&model);
    gen_analyse(&model);
    if (runtime_dir != NULL)
        gen_check_kernels(&model, runtime_dir);
    if (gen_error_count() > 0)
        goto out;
    for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++) {
        char *text = outputs[i].emit(&model);
        gen_write_if_changed(positional[1], outputs[i].path, text);
        free(text);
    }
    if (gen_error_count() == 0)
        rc = 0;
out:
    if (gen_error_count() > 0)
        fprintf(stderr, "yagrad-gen: %d error%s; nothing written\n", gen_error_count(),
                gen_error_count() == 1 ? "" : "s");
    gen_model_free(&model);
    return rc;
}
