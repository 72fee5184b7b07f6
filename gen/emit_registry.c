/*
 * emit_registry.c - writes generated_int.h (prototypes of the generated CPU
 * kernels and the registry types) and registry.c (the tables of every op and
 * every derivative, in YAML order).
 *
 * The registry lets tests and tools enumerate what the specs declare (the
 * gradcheck suite fails when a derivative has no sample input) without a
 * hand-kept list that could drift from the YAML.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

char *gen_emit_generated_int_h(const gen_model *model)
{
    gen_sb sb = {0};

    gen_emit_marker(&sb, GEN_NATIVE_FILE);
    gen_sb_puts(&sb,
                "/*\n"
                " * generated_int.h - internal declarations of the generated code: the\n"
                " * registry of ops and derivatives (registry.c).  It does not change when an\n"
                " * op is added (the tables' lengths are variables), so what includes it does\n"
                " * not recompile; the generated CPU kernels are declared per section in\n"
                " * kernels/<section>.h.  Not public API.\n"
                " */\n"
                "#ifndef YAGRAD_GENERATED_INT_H\n#define YAGRAD_GENERATED_INT_H\n\n"
                "#include <stdbool.h>\n#include <stdint.h>\n\n"
                "#include \"core/core.h\"\n");
    (void)model;
    gen_sb_puts(&sb,
                "\n/* ---- registry (registry.c) ---- */\n\n"
                "/* How an op is implemented. */\n"
                "typedef enum yg_op_kind {\n"
                "    YG_OP_KIND_POINTWISE, /* a `pointwise:` expression: generated kernels */\n"
                "    YG_OP_KIND_KERNEL,    /* `dispatch:` kernels */\n"
                "    YG_OP_KIND_COMPOSITE, /* yg__composite_<op>, written with other ops */\n"
                "} yg_op_kind;\n\n"
                "/* An op's `tags:`, one bit each (yg_op_info.tags). */\n"
                "#define YG_OP_TAG_POINTWISE (UINT32_C(1) << 0)\n"
                "#define YG_OP_TAG_BROADCAST (UINT32_C(1) << 1)\n"
                "#define YG_OP_TAG_REDUCTION (UINT32_C(1) << 2)\n"
                "#define YG_OP_TAG_VIEW (UINT32_C(1) << 3)\n"
                "#define YG_OP_TAG_OPAQUE (UINT32_C(1) << 4)\n\n"
                "/* What an argument is (yg_op_arg.flags), one bit each. */\n"
                "#define YG_OP_ARG_TENSOR (1u << 0)    /* Tensor, Tensor?, Tensor[], Tensor?[] */\n"
                "#define YG_OP_ARG_LIST (1u << 1)      /* Tensor[], Tensor?[]: a node's variadic inputs */\n"
                "#define YG_OP_ARG_OPTIONAL (1u << 2)  /* a nullable type: Tensor?, int?, ... */\n"
                "#define YG_OP_ARG_WRITTEN (1u << 3)   /* Tensor(a!): the op writes it */\n"
                "#define YG_OP_ARG_GENERATOR (1u << 4) /* Generator?: the op draws random numbers */\n\n"
                "/* One argument of an op's schema, in schema order. */\n"
                "typedef struct yg_op_arg {\n"
                "    const char *name;\n"
                "    unsigned flags; /* YG_OP_ARG_* */\n"
                "} yg_op_arg;\n\n"
                "/* One op of specs/native_functions.yaml: its schema as data (the\n"
                "   text is for messages and printing). */\n"
                "typedef struct yg_op_info {\n"
                "    const char *name;     /* \"sum.dim\" */\n"
                "    const char *schema;   /* the func string */\n"
                "    const char *location; /* \"specs/native_functions.yaml:42\" */\n"
                "    yg_op_kind kind;\n"
                "    uint32_t tags;        /* YG_OP_TAG_* */\n"
                "    uint32_t dtypes;      /* the claim: YG_DTYPE_BIT(d) for each yg_dtype d\n"
                "                             its Tensor inputs may have ('dtypes:') */\n"
                "    const yg_op_arg *args;\n"
                "    int32_t n_args;\n"
                "    int32_t n_returns;    /* -1: a Tensor[] return, any number */\n"
                "    bool returns_view;    /* Tensor(a): the result aliases an argument */\n"
                "    bool returns_written; /* Tensor(a!): the op writes and returns it */\n"
                "} yg_op_info;\n\n"
                "/* The bit of dtype d in yg_op_info.dtypes. */\n"
                "#define YG_DTYPE_BIT(d) (UINT32_C(1) << (d))\n\n"
                "/* One entry of specs/derivatives.yaml. */\n"
                "typedef struct yg_derivative_info {\n"
                "    const char *name;          /* \"sum.dim\" */\n"
                "    const char *schema;        /* the name: string */\n"
                "    const char *location;      /* \"specs/derivatives.yaml:42\" */\n"
                "    int n_inputs;              /* differentiable inputs */\n"
                "    const char *const *inputs; /* their names, in edge order */\n"
                "    const char *no_double_backward; /* why its formulas are not\n"
                "                                       differentiable; NULL: they are */\n"
                "} yg_derivative_info;\n\n"
                "extern const yg_op_info yg__ops[];\n"
                "extern const int32_t yg__ops_count;\n"
                "extern const yg_derivative_info yg__derivatives[];\n"
                "extern const int32_t yg__derivatives_count;\n\n"
                "#endif /* YAGRAD_GENERATED_INT_H */\n");
    return gen_sb_take(&sb);
}

/* A C string literal for s (the specs hold no quotes today, but a default
 * such as "[1, 2]" could). */
static void put_literal(gen_sb *sb, const char *s)
{
    size_t col = 18;

    gen_sb_puts(sb, "\"");
    for (const char *c = s; *c != '\0'; c++, col++) {
        /* Adjacent literals keep long schemas under 100 columns. */
        if (col > 70 && c[-1] == ',') {
            gen_sb_puts(sb, "\"\n                  \"");
            col = 18;
        }
        if (*c == '"' || *c == '\\')
            gen_sb_putn(sb, "\\", 1);
        if (*c == '\n')
            gen_sb_puts(sb, "\\n");
        else
            gen_sb_putn(sb, c, 1);
    }
    gen_sb_puts(sb, "\"");
}

/* "POINTWISE", "KERNEL", "COMPOSITE". */
static const char *upper_kind(gen_op_kind kind)
{
    return kind == GEN_OP_POINTWISE ? "POINTWISE" : kind == GEN_OP_KERNEL ? "KERNEL" : "COMPOSITE";
}

/* "static const yg_op_arg <op>_args[] = {{"self", YG_OP_ARG_TENSOR}, ...};" */
static void emit_op_args(gen_sb *sb, const gen_op *op)
{
    gen_sb_printf(sb, "static const yg_op_arg %s_args[] = {\n", op->cname);
    for (int j = 0; j < op->schema.n_args; j++) {
        const gen_arg *a = &op->schema.args[j];
        bool tensor = gen_arg_is_input(a);
        const char *bits[5];
        int n = 0;
        if (tensor)
            bits[n++] = "YG_OP_ARG_TENSOR";
        if (gen_arg_is_tensor_list(a))
            bits[n++] = "YG_OP_ARG_LIST";
        if (a->nullable)
            bits[n++] = "YG_OP_ARG_OPTIONAL";
        if (a->mutable_)
            bits[n++] = "YG_OP_ARG_WRITTEN";
        if (gen_arg_is_generator(a))
            bits[n++] = "YG_OP_ARG_GENERATOR";
        gen_sb_printf(sb, "    {\"%s\", ", a->name);
        for (int k = 0; k < n; k++)
            gen_sb_printf(sb, "%s%s", k > 0 ? " | " : "", bits[k]);
        gen_sb_puts(sb, n == 0 ? "0},\n" : "},\n");
    }
    gen_sb_puts(sb, "};\n");
}

/* An op entry's tags, arguments and returns. */
static void emit_op_facts(gen_sb *sb, const gen_op *op)
{
    gen_sb_puts(sb, "        .tags = ");
    for (int t = 0; t < op->n_tags; t++) {
        gen_sb_puts(sb, t > 0 ? " | YG_OP_TAG_" : "YG_OP_TAG_");
        for (const char *c = op->tags[t]; *c != '\0'; c++)
            gen_sb_printf(sb, "%c", toupper((unsigned char)*c));
    }
    gen_sb_puts(sb, op->n_tags == 0 ? "0,\n" : ",\n");
    if (op->schema.n_args > 0)
        gen_sb_printf(sb, "        .args = %s_args,\n        .n_args = %d,\n", op->cname,
                      op->schema.n_args);
    bool list = op->schema.n_returns == 1 && op->schema.returns[0].is_list;
    bool view = false, written = false;
    for (int r = 0; r < op->schema.n_returns; r++) {
        written |= op->schema.returns[r].mutable_;
        view |= op->schema.returns[r].alias != NULL && !op->schema.returns[r].mutable_;
    }
    gen_sb_printf(sb, "        .n_returns = %d,\n", list ? -1 : op->schema.n_returns);
    if (view)
        gen_sb_puts(sb, "        .returns_view = true,\n");
    if (written)
        gen_sb_puts(sb, "        .returns_written = true,\n");
}

char *gen_emit_registry_c(const gen_model *model)
{
    gen_sb sb = {0};
    int n_ops = 0;
    int n_derivs = 0;

    gen_emit_marker(&sb, GEN_NATIVE_FILE);
    gen_sb_puts(&sb,
                "/*\n"
                " * registry.c - every op of specs/native_functions.yaml and every entry of\n"
                " * specs/derivatives.yaml, in YAML order, for tests and tools that enumerate\n"
                " * them (see generated_int.h).\n"
                " */\n"
                "#include \"generated_int.h\"\n\n");
    for (int i = 0; i < model->n_derivs; i++) {
        const gen_deriv *d = &model->derivs[i];
        if (d->op == NULL || d->n_edges == 0)
            continue;
        gen_sb_printf(&sb, "static const char *const %s_derivative_inputs[] = {", d->op->cname);
        int k = 0;
        for (int j = 0; j < d->n_formulas; j++)
            if (d->formulas[j].edge >= 0)
                gen_sb_printf(&sb, "%s\"%s\"", k++ > 0 ? ", " : "", d->formulas[j].input);
        gen_sb_puts(&sb, "};\n");
    }
    for (int i = 0; i < model->n_ops; i++)
        if (model->ops[i].valid && model->ops[i].schema.n_args > 0)
            emit_op_args(&sb, &model->ops[i]);
    gen_sb_puts(&sb, "\nconst yg_op_info yg__ops[] = {\n");
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (!op->valid)
            continue;
        gen_sb_printf(&sb, "    {\n        .name = \"%s\",\n        .schema = ", op->full_name);
        put_literal(&sb, op->func);
        gen_sb_printf(&sb, ",\n        .location = \"%s:%d\",\n        .kind = YG_OP_KIND_%s,\n",
                      op->loc.file, op->loc.line, upper_kind(op->kind));
        emit_op_facts(&sb, op);
        /* ".dtypes = YG_DTYPE_BIT(YG_FLOAT32) | ...", wrapped at 100 columns */
        gen_sb_puts(&sb, "        .dtypes = ");
        size_t col = 18;
        int k = 0;
        for (int d = 0; d < gen_n_dtypes; d++) {
            if (!(op->dtypes & (UINT32_C(1) << d)))
                continue;
            char *bit = gen_xprintf("YG_DTYPE_BIT(%s)", gen_dtypes[d].enum_name);
            if (k++ > 0 && col + 3 + strlen(bit) + 1 > 100) {
                gen_sb_puts(&sb, " |\n                  ");
                col = 18;
            } else if (k > 1) {
                gen_sb_puts(&sb, " | ");
                col += 3;
            }
            gen_sb_puts(&sb, bit);
            col += strlen(bit);
            free(bit);
        }
        gen_sb_puts(&sb, ",\n    },\n");
        n_ops++;
    }
    gen_sb_puts(&sb, "};\n");
    gen_sb_printf(&sb, "const int32_t yg__ops_count = %d;\n", n_ops);
    gen_sb_puts(&sb, "_Static_assert(sizeof(yg__ops) / sizeof(yg__ops[0]) == ");
    gen_sb_printf(&sb, "%d, \"op table size\");\n\n", n_ops);
    gen_sb_puts(&sb, "const yg_derivative_info yg__derivatives[] = {\n");
    for (int i = 0; i < model->n_derivs; i++) {
        const gen_deriv *d = &model->derivs[i];
        if (d->op == NULL)
            continue;
        gen_sb_printf(&sb, "    {\n        .name = \"%s\",\n        .schema = ", d->op->full_name);
        put_literal(&sb, d->name_text);
        gen_sb_printf(&sb, ",\n        .location = \"%s:%d\",\n        .n_inputs = %d,\n",
                      d->loc.file, d->loc.line, d->n_edges);
        if (d->n_edges > 0)
            gen_sb_printf(&sb, "        .inputs = %s_derivative_inputs,\n", d->op->cname);
        else
            gen_sb_puts(&sb, "        .inputs = NULL,\n");
        if (d->no_double_backward != NULL) {
            gen_sb_puts(&sb, "        .no_double_backward = ");
            put_literal(&sb, d->no_double_backward);
            gen_sb_puts(&sb, ",\n");
        }
        gen_sb_puts(&sb, "    },\n");
        n_derivs++;
    }
    gen_sb_puts(&sb, "};\n");
    gen_sb_printf(&sb, "const int32_t yg__derivatives_count = %d;\n", n_derivs);
    gen_sb_puts(&sb, "_Static_assert(sizeof(yg__derivatives) / sizeof(yg__derivatives[0]) == ");
    gen_sb_printf(&sb, "%d,\n               \"derivative table size\");\n", n_derivs);
    return gen_sb_take(&sb);
}

char *gen_emit_kernels_h(const gen_model *model, int section)
{
    gen_sb sb = {0};
    const char *sec = model->sections[section].name;

    gen_emit_marker(&sb, GEN_NATIVE_FILE);
    gen_sb_printf(&sb,
                  "/*\n"
                  " * kernels/%s.h - the CPU kernels gen writes for the ops of section\n"
                  " * %s that have a `pointwise:` expression (kernels/%s.c), with\n"
                  " * the contract of cpu/cpu.h.  Not public API.\n"
                  " */\n"
                  "#ifndef YAGRAD_GENERATED_KERNELS_%s_H\n#define YAGRAD_GENERATED_KERNELS_%s_H\n\n"
                  "#include \"core/core.h\"\n",
                  sec, sec, sec, sec, sec);
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (!op->valid || op->kind != GEN_OP_POINTWISE || op->section != section)
            continue;
        gen_sb_puts(&sb, "\n");
        gen_emit_schema_only(&sb, "", op->func);
        gen_params params;
        gen_op_params_kernel(op, &params);
        char *prefix = gen_xprintf("yg_status yg__pw_%s(", op->cname);
        gen_emit_call_decl(&sb, prefix, &params, false, ";");
        free(prefix);
        gen_params_free(&params);
    }
    gen_sb_printf(&sb, "\n#endif /* YAGRAD_GENERATED_KERNELS_%s_H */\n", sec);
    return gen_sb_take(&sb);
}

/* The declaration "yg_status name(params);" of one handwritten function. */
static void emit_decl(gen_sb *sb, const gen_op *op, const char *name, bool impl)
{
    gen_params params;
    if (impl)
        gen_op_params_impl(op, &params);
    else
        gen_op_params_kernel(op, &params);
    char *prefix = gen_xprintf("yg_status %s(", name);
    gen_emit_call_decl(sb, prefix, &params, false, ";");
    free(prefix);
    gen_params_free(&params);
}

char *gen_emit_decls_h(const gen_model *model, int section)
{
    gen_sb sb = {0};
    const char *sec = model->sections[section].name;

    gen_emit_marker(&sb, GEN_NATIVE_FILE);
    gen_sb_printf(&sb,
                  "/*\n"
                  " * decls/%s.h - the handwritten functions behind the ops of section\n"
                  " * %s, declared from their YAML entries: each op's meta function\n"
                  " * (meta/meta.h's contract) and device implementations (`dispatch:`,\n"
                  " * cpu/cpu.h's and cuda/ops.h's contracts), or its composite\n"
                  " * (composite/composite.h's).  A file that defines one includes this\n"
                  " * header, so the compiler checks the definition against the YAML.\n"
                  " * Not public API.\n"
                  " */\n"
                  "#ifndef YAGRAD_GENERATED_DECLS_%s_H\n#define YAGRAD_GENERATED_DECLS_%s_H\n\n"
                  "#include \"core/core.h\"\n#include \"yagrad/ops_%s.h\"\n",
                  sec, sec, sec, sec, sec);
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (!op->valid || op->section != section || op->kind == GEN_OP_POINTWISE)
            continue;
        bool cuda = op->cuda_kernel != NULL && op->cpu_kernel != NULL &&
                    strcmp(op->cuda_kernel, op->cpu_kernel) != 0;
        gen_sb_puts(&sb, "\n");
        gen_emit_schema_only(&sb, "", op->func);
        if (op->kind == GEN_OP_COMPOSITE) {
            char *name = gen_xprintf("yg__composite_%s", op->cname);
            emit_decl(&sb, op, name, false);
            free(name);
            continue;
        }
        if (op->structured) {
            char *meta = gen_xprintf("yg__meta_%s", op->cname);
            emit_decl(&sb, op, meta, false);
            free(meta);
        }
        if (op->cpu_kernel != NULL)
            emit_decl(&sb, op, op->cpu_kernel, op->structured);
        if (cuda)
            emit_decl(&sb, op, op->cuda_kernel, op->structured);
    }
    gen_sb_printf(&sb, "\n#endif /* YAGRAD_GENERATED_DECLS_%s_H */\n", sec);
    return gen_sb_take(&sb);
}

char *gen_emit_op_ids_h(const gen_model *model)
{
    gen_sb sb = {0};
    int n = 0;

    gen_emit_marker(&sb, GEN_NATIVE_FILE);
    gen_sb_puts(&sb,
                "/*\n"
                " * op_ids.h - every op's id: its index in yg__ops[] (registry.c), named\n"
                " * YG_OP_<its C name>, so code that matches ops (the IR passes, shape\n"
                " * rules) names them in C, where a misspelt op does not compile.  It\n"
                " * changes when an op is added; include it only where ops are matched.\n"
                " * Not public API.\n"
                " */\n"
                "#ifndef YAGRAD_GENERATED_OP_IDS_H\n#define YAGRAD_GENERATED_OP_IDS_H\n\n"
                "#include \"generated_int.h\"\n\n"
                "typedef enum yg_op_id {\n");
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (!op->valid)
            continue;
        gen_sb_printf(&sb, "    YG_OP_%s, /* %s */\n", op->cname, op->full_name);
        n++;
    }
    gen_sb_printf(&sb,
                  "    YG_OP_COUNT_ /* %d */\n"
                  "} yg_op_id;\n\n"
                  "/* The id of op, an entry of yg__ops[].  Cannot fail. */\n"
                  "static inline yg_op_id yg__op_id(const yg_op_info *op)\n"
                  "{\n"
                  "    return (yg_op_id)(op - yg__ops);\n"
                  "}\n\n"
                  "#endif /* YAGRAD_GENERATED_OP_IDS_H */\n",
                  n);
    return gen_sb_take(&sb);
}
