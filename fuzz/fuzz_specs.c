/*
 * fuzz_specs.c - libFuzzer target over everything yagrad-gen does with a
 * spec short of writing files: YAML loading of both files, signature
 * parsing, model resolution, formula and pointwise analysis with libclang,
 * and every emitter.  gen must report errors for any input and never
 * crash, hang or leak; ASan and UBSan watch.
 *
 * Input: native_functions.yaml, then a line "%%", then derivatives.yaml
 * (both optional).  Seeds: fuzz/corpus/specs/ (the real specs, the golden
 * spec and every case of the error catalogue, split the same way).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void run_emitters(const gen_model *model, const gen_plans *plans)
{
    free(gen_emit_ops_h(model));
    free(gen_emit_generated_int_h(model));
    free(gen_emit_registry_c(model));
    for (int s = 0; s < model->n_sections; s++) {
        free(gen_emit_ops_section_h(model, s));
        free(gen_emit_api_c(model, plans->backward, s));
        free(gen_emit_nodes_h(model, plans->backward, s));
        free(gen_emit_nodes_c(model, plans->backward, s));
        if (model->sections[s].has_pointwise)
            free(gen_emit_pointwise_c(model, s));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *sep = NULL;
    gen_model model = {0};
    gen_plans plans = {0};

    /* Formulas are compiled by libclang; keep each input small enough that
     * the fuzzer explores rather than waits. */
    if (size > 16384)
        return 0;
    for (size_t i = 0; i + 3 <= size; i++) {
        if (memcmp(text + i, "%%\n", 3) == 0 && (i == 0 || text[i - 1] == '\n')) {
            sep = text + i;
            break;
        }
    }
    size_t native_len = sep != NULL ? (size_t)(sep - text) : size;
    gen_diag_reset(true);
    gen_load_native_text(text, native_len, &model);
    if (sep != NULL)
        gen_load_derivatives_text(sep + 3, size - native_len - 3, &model);
    gen_model_resolve(&model);
    gen_plans_init(&plans, &model);
    gen_analyse(&model, &plans);
    /* main.c emits only error-free models; emitting the rest too checks
     * that the emitters survive whatever resolution let through. */
    if (gen_error_count() == 0)
        run_emitters(&model, &plans);
    gen_plans_free(&plans);
    gen_model_free(&model);
    return 0;
}
