/*
 * fuzz_schema.c - libFuzzer target over the `func:` signature parser
 * alone (gen/schema.c), which is fast enough for millions of inputs.
 * Seeds: fuzz/corpus/schema/, one signature per file.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gen_schema schema;
    char *text = malloc(size + 1);

    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    gen_diag_reset(true);
    if (gen_schema_parse(text, (gen_loc){.file = GEN_NATIVE_FILE, .line = 1, .col = 9}, &schema)) {
        for (int i = 0; i < schema.n_args; i++)
            (void)gen_type_name(&schema.args[i]);
        gen_schema_free(&schema);
    }
    free(text);
    return 0;
}
