/*
 * emit_pointwise.c - writes kernels/<section>.c: the CPU kernel of every op
 * with a `pointwise:` expression, by section of native_functions.yaml.
 *
 * Each op gets one inner loop per supported dtype behind the iterator of
 * cpu/cpu.h.  A loop has a contiguous fast path (every stride equals the
 * element size: typed pointers and a plain indexed loop the compiler
 * vectorises) and a strided path for broadcast or transposed operands.  The
 * expression is evaluated with locals named like the op's arguments, of the
 * compute type, and <tgmath.h> makes exp/tanh/pow pick the float or double
 * function.  int64 and int32 loops exist only when formula_unit.c found the
 * expression integer-safe (no calls, no division) and the op claims them;
 * the descriptor names the Scalar arguments, which the iterator requires to
 * be integers on those dtypes.  In-place loops drop
 * `restrict`: there the output and self are the same memory.
 */
#include <stdlib.h>
#include <string.h>

#include "gen.h"

typedef struct dtype_info {
    const char *suffix; /* loop name suffix and YG_ enum tail */
    const char *enum_name;
    const char *ctype;
} dtype_info;

static const dtype_info dtypes[] = {
    {"float32", "YG_FLOAT32", "float"},
    {"float64", "YG_FLOAT64", "double"},
    {"int64", "YG_INT64", "int64_t"},
    {"int32", "YG_INT32", "int32_t"},
};

static int n_loop_dtypes(const gen_op *op)
{
    return op->int_safe ? 4 : 2;
}

/* Whether op gets a loop for dtypes[d]: gen can write one and the op
 * claims it (a claim narrower than the loops, say float32 and float64 for
 * an activation whose expression would run on integers, leaves the other
 * loops out, so the iterator refuses those dtypes). */
static bool emits_loop(const gen_op *op, int d)
{
    int k = gen_dtype_lookup(dtypes[d].suffix);
    return d < n_loop_dtypes(op) && k >= 0 && (op->dtypes & (UINT32_C(1) << k)) != 0;
}

uint32_t gen_pointwise_loop_dtypes(const gen_op *op)
{
    uint32_t mask = 0;

    /* A loop dtype missing from gen_dtypes (model.c) is left out of the
     * claim; test_opinfo then reports the op running on it unclaimed. */
    for (int d = 0; d < n_loop_dtypes(op); d++) {
        int k = gen_dtype_lookup(dtypes[d].suffix);
        if (k >= 0)
            mask |= UINT32_C(1) << k;
    }
    return mask;
}

static bool op_inplace(const gen_op *op)
{
    size_t n = strlen(op->cname);
    return n > 0 && op->cname[n - 1] == '_';
}

static void emit_loop(gen_sb *sb, const gen_op *op, const dtype_info *dt)
{
    const char *ct = dt->ctype;
    const char *restrict_kw = op_inplace(op) ? "" : "restrict ";
    int n_scalars = 0;
    int k;

    char *head = gen_xprintf("static void %s_loop_%s(", op->cname, dt->suffix);
    const char *params[] = {"char **p", "const int64_t *s", "int64_t n", "const double *scalars"};
    gen_emit_wrapped(sb, "", head, params, 4, ")");
    free(head);
    gen_sb_puts(sb, "{\n");
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (a->type == GEN_T_TENSOR)
            continue;
        gen_sb_printf(sb, "    const %s %s = (%s)scalars[%d];\n", ct, a->name, ct, n_scalars++);
    }
    if (n_scalars == 0)
        gen_sb_puts(sb, "    (void)scalars;\n");
    gen_sb_printf(sb, "    const int64_t elem = (int64_t)sizeof(%s);\n\n    if (", ct);
    k = 0;
    for (int i = 0; i < op->schema.n_args; i++) {
        if (op->schema.args[i].type != GEN_T_TENSOR)
            continue;
        if (k == 0)
            gen_sb_puts(sb, "s[0] == elem");
        k++;
        gen_sb_printf(sb, " && s[%d] == elem", k);
    }
    gen_sb_printf(sb, ") {\n        %s *%sdst = (%s *)p[0];\n", ct, restrict_kw, ct);
    k = 0;
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (a->type != GEN_T_TENSOR)
            continue;
        gen_sb_printf(sb, "        const %s *%ssrc_%s = (const %s *)p[%d];\n", ct, restrict_kw,
                      a->name, ct, ++k);
    }
    gen_sb_puts(sb, "\n        for (int64_t i = 0; i < n; i++) {\n");
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (a->type == GEN_T_TENSOR)
            gen_sb_printf(sb, "            const %s %s = src_%s[i];\n", ct, a->name, a->name);
    }
    if (strlen(op->pointwise) + 22 > 100)
        gen_sb_printf(sb, "\n            dst[i] =\n                %s;\n", op->pointwise);
    else
        gen_sb_printf(sb, "\n            dst[i] = %s;\n", op->pointwise);
    gen_sb_puts(sb, "        }\n        return;\n    }\n");
    gen_sb_puts(sb, "    for (int64_t i = 0; i < n; i++) {\n");
    k = 0;
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (a->type != GEN_T_TENSOR)
            continue;
        k++;
        gen_sb_printf(sb, "        const %s %s = *(const %s *)(p[%d] + i * s[%d]);\n", ct,
                      a->name, ct, k, k);
    }
    if (strlen(op->pointwise) + strlen(ct) + 34 > 100)
        gen_sb_printf(sb, "\n        *(%s *)(p[0] + i * s[0]) =\n            %s;\n", ct,
                      op->pointwise);
    else
        gen_sb_printf(sb, "\n        *(%s *)(p[0] + i * s[0]) = %s;\n", ct, op->pointwise);
    gen_sb_puts(sb, "    }\n}\n\n");
}

static int n_tensor_args(const gen_op *op)
{
    int n = 0;

    for (int i = 0; i < op->schema.n_args; i++)
        n += op->schema.args[i].type == GEN_T_TENSOR;
    return n;
}

static void emit_op(gen_sb *sb, const gen_op *op)
{
    int n_dtypes = n_loop_dtypes(op);
    int n_in = n_tensor_args(op);

    gen_sb_printf(sb, "/* ---- %s: %s ---- */\n\n", op->full_name, op->pointwise);
    for (int d = 0; d < n_dtypes; d++)
        if (emits_loop(op, d))
            emit_loop(sb, op, &dtypes[d]);
    gen_sb_printf(sb, "static const char *const %s_input_names[] = {", op->cname);
    int k = 0;
    for (int i = 0; i < op->schema.n_args; i++)
        if (op->schema.args[i].type == GEN_T_TENSOR)
            gen_sb_printf(sb, "%s\"%s\"", k++ > 0 ? ", " : "", op->schema.args[i].name);
    gen_sb_puts(sb, "};\n\n");
    int n_scalar_args = op->schema.n_args - n_in;
    if (n_scalar_args > 0) {
        gen_sb_printf(sb, "static const char *const %s_scalar_names[] = {", op->cname);
        k = 0;
        for (int i = 0; i < op->schema.n_args; i++)
            if (op->schema.args[i].type != GEN_T_TENSOR)
                gen_sb_printf(sb, "%s\"%s\"", k++ > 0 ? ", " : "", op->schema.args[i].name);
        gen_sb_puts(sb, "};\n\n");
    }
    gen_sb_printf(sb,
                  "static const yg_pointwise_desc %s_desc = {\n"
                  "    .op = \"%s\",\n    .n_inputs = %d,\n    .input_names = %s_input_names,\n"
                  "    .loops =\n        {\n",
                  op->cname, op->display, n_in, op->cname);
    for (int d = 0; d < n_dtypes; d++)
        if (emits_loop(op, d))
            gen_sb_printf(sb, "            [%s] = %s_loop_%s,\n", dtypes[d].enum_name, op->cname,
                          dtypes[d].suffix);
    if (n_scalar_args > 0)
        gen_sb_printf(sb,
                      "        },\n    .n_scalars = %d,\n    .scalar_names = %s_scalar_names,\n"
                      "};\n\n",
                      n_scalar_args, op->cname);
    else
        gen_sb_puts(sb, "        },\n};\n\n");

    gen_emit_schema_comment(sb, "", op->func, op->loc);
    gen_params params;
    gen_op_params(op, &params);
    char *prefix = gen_xprintf("yg_status yg__cpu_%s(", op->cname);
    gen_emit_call_decl(sb, prefix, &params, false, "");
    free(prefix);
    gen_params_free(&params);
    gen_sb_printf(sb, "{\n    const yg_tensor *inputs[%d] = {", n_in);
    k = 0;
    int n_scalars = 0;
    for (int i = 0; i < op->schema.n_args; i++) {
        if (op->schema.args[i].type == GEN_T_TENSOR)
            gen_sb_printf(sb, "%s%s", k++ > 0 ? ", " : "", op->schema.args[i].name);
        else
            n_scalars++;
    }
    gen_sb_puts(sb, "};\n");
    if (n_scalars > 0) {
        gen_sb_printf(sb, "    const double scalars[%d] = {", n_scalars);
        k = 0;
        for (int i = 0; i < op->schema.n_args; i++)
            if (op->schema.args[i].type != GEN_T_TENSOR)
                gen_sb_printf(sb, "%s%s", k++ > 0 ? ", " : "", op->schema.args[i].name);
        gen_sb_puts(sb, "};\n");
    }
    const char *sc = n_scalars > 0 ? "scalars" : "NULL";
    if (op_inplace(op)) {
        gen_sb_printf(sb,
                      "\n    YG_RETURN_IF_ERROR(yg__cpu_pointwise_inplace(&%s_desc, %s, inputs, "
                      "%s));\n    *out = yg_retain(%s);\n    return YG_OK;\n}\n",
                      op->cname, op->schema.args[0].name, sc, op->schema.args[0].name);
    } else {
        gen_sb_printf(sb, "\n    return yg__cpu_pointwise(&%s_desc, inputs, %s, out);\n}\n",
                      op->cname, sc);
    }
}

char *gen_emit_pointwise_c(const gen_model *model, int section)
{
    gen_sb sb = {0};

    gen_emit_marker(&sb, GEN_NATIVE_FILE);
    gen_sb_printf(&sb,
                "/*\n"
                " * kernels/%s.c - CPU kernels of the ops of section %s\n"
                " * that have a `pointwise:` expression in specs/native_functions.yaml.\n"
                " *\n"
                " * Each op has one inner loop per supported dtype, run by the broadcasting\n"
                " * iterator of cpu/cpu.h.  A loop takes a contiguous fast path when every\n"
                " * stride equals the element size (typed pointers the compiler vectorises)\n"
                " * and a strided path otherwise.  <tgmath.h> makes exp, tanh and pow pick\n"
                " * the float or double function from the locals' type.  int64 and int32\n"
                " * loops exist only for expressions without calls and division.\n"
                " */\n"
                "#include <stdint.h>\n#include <tgmath.h>\n\n"
                "#include \"cpu/cpu.h\"\n#include \"generated_int.h\"\n",
                model->sections[section].name, model->sections[section].name);
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (!op->valid || op->kind != GEN_OP_POINTWISE || op->section != section)
            continue;
        gen_sb_puts(&sb, "\n");
        emit_op(&sb, op);
    }
    return gen_sb_take(&sb);
}
