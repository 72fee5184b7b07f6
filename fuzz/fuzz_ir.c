/*
 * fuzz_ir.c - libFuzzer target over the IR parser (runtime/jit/ir/parser.c)
 * and everything that runs on what it accepts.  Seeds: fuzz/corpus/ir/,
 * one graph text per file (a few malformed on purpose).
 *
 * Beyond "no crash, no leak, no undefined behaviour", each input checks
 * the properties the IR promises, and traps when one breaks:
 *   - a rejected text gets YG_ERR_INVALID_ARGUMENT with a located
 *     "graph_parse: LINE:COL: ..." message;
 *   - an accepted graph lints clean, and print -> parse -> print is exact;
 *   - a clone prints the same, and canonicalized copies print the same;
 *   - the JSON and DOT dumps succeed;
 *   - the optimisation pipeline either succeeds or reports a shape error,
 *     leaves a graph that lints clean and still round-trips exactly.
 */
#include "yagrad/yagrad.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

/* Prints g, parses the text back and checks it prints the same; returns
 * the text (caller releases). */
static char *round_trip(const yg_graph *g) {
    char *once = NULL, *twice = NULL;
    yg_graph *again = NULL;
    CHECK(yg_graph_print(g, &once) == YG_OK);
    CHECK(yg_graph_parse(once, (int64_t)strlen(once), &again) == YG_OK);
    CHECK(yg_graph_lint(again) == YG_OK);
    CHECK(yg_graph_print(again, &twice) == YG_OK);
    CHECK(strcmp(once, twice) == 0);
    yg_string_release(twice);
    yg_graph_release(again);
    return once;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    yg_graph *g = NULL, *copy = NULL;
    char *text = NULL, *other = NULL, *dump = NULL;
    yg_status st = yg_graph_parse((const char *)data, (int64_t)size, &g);
    if (st != YG_OK) {
        CHECK(g == NULL);
        CHECK(st == YG_ERR_INVALID_ARGUMENT);
        CHECK(strncmp(yg_last_error(), "graph_parse: ", 13) == 0);
        return 0;
    }
    CHECK(yg_graph_lint(g) == YG_OK);
    text = round_trip(g);

    CHECK(yg_graph_clone(g, &copy) == YG_OK);
    CHECK(yg_graph_print(copy, &other) == YG_OK);
    CHECK(strcmp(text, other) == 0);
    yg_string_release(other);
    CHECK(yg_graph_canonicalize(g) == YG_OK);
    CHECK(yg_graph_canonicalize(copy) == YG_OK);
    yg_string_release(text);
    text = round_trip(g);
    CHECK(yg_graph_print(copy, &other) == YG_OK);
    CHECK(strcmp(text, other) == 0);
    yg_string_release(other);

    CHECK(yg_graph_to_json(g, &dump) == YG_OK);
    yg_string_release(dump);
    CHECK(yg_graph_to_dot(g, &dump) == YG_OK);
    yg_string_release(dump);

    st = yg_graph_optimize(copy);
    CHECK(st == YG_OK || st == YG_ERR_SHAPE);
    CHECK(yg_graph_lint(copy) == YG_OK);
    yg_string_release(round_trip(copy));

    yg_string_release(text);
    yg_graph_release(copy);
    yg_graph_release(g);
    return 0;
}
