/*
 * pipeline.c - runs passes by name and the standard optimisation order.
 *
 * The order of yg_graph_optimize: shape_propagation first (peephole and
 * remove_expands need sizes; requires_grad needs dtypes), then
 * requires_grad_propagation, then the rewrites (peephole, remove_expands)
 * that leave dead nodes behind, constant_propagation (after the rewrites,
 * so an expand they removed is not folded into a large constant, and
 * before pooling, so the constants it makes are pooled), constant_pooling
 * before cse (so equal constants are one value and nodes using them
 * become equal), and dce last to sweep what the others left unused.
 */
#include "jit/passes/passes.h"

#include <string.h>

typedef struct named_pass {
    const char *name;
    yg_status (*run)(yg_graph *g);
} named_pass;

static const named_pass passes[] = {
    {"shape_propagation", yg_graph_propagate_shapes},
    {"requires_grad_propagation", yg_graph_propagate_requires_grad},
    {"peephole", yg_graph_peephole},
    {"remove_expands", yg_graph_remove_unnecessary_expands},
    {"constant_propagation", yg_graph_propagate_constants},
    {"constant_pooling", yg_graph_pool_constants},
    {"cse", yg_graph_eliminate_common_subexpressions},
    {"dce", yg_graph_eliminate_dead_code},
};

/* The pass named by [s, s + len), or NULL. */
static const named_pass *lookup(const char *s, size_t len) {
    for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++) {
        if (strlen(passes[i].name) == len && memcmp(passes[i].name, s, len) == 0)
            return &passes[i];
    }
    return NULL;
}

/* Splits names at commas (spaces around names ignored); calls each pass
 * when run is true, else only checks the names. */
static yg_status each(yg_graph *g, const char *names, bool run) {
    const char *p = names;
    for (;;) {
        while (*p == ' ')
            p++;
        const char *end = p;
        while (*end != '\0' && *end != ',')
            end++;
        const char *last = end;
        while (last > p && last[-1] == ' ')
            last--;
        const named_pass *pass = lookup(p, (size_t)(last - p));
        if (pass == NULL)
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "run_passes: unknown pass '%.*s' (known: shape_propagation, "
                            "requires_grad_propagation, peephole, remove_expands, "
                            "constant_propagation, constant_pooling, cse, dce)",
                            (int)(last - p > 64 ? 64 : last - p),
                            p);
        if (run)
            YG_RETURN_IF_ERROR(pass->run(g));
        if (*end == '\0')
            return YG_OK;
        p = end + 1;
    }
}

yg_status yg_graph_run_passes(yg_graph *g, const char *names) {
    if (g == NULL || names == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "run_passes: graph or names is NULL");
    YG_RETURN_IF_ERROR(each(g, names, false));
    return each(g, names, true);
}

yg_status yg_graph_optimize(yg_graph *g) {
    if (g == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "optimize: graph is NULL");
    for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++)
        YG_RETURN_IF_ERROR(passes[i].run(g));
    return YG_OK;
}
