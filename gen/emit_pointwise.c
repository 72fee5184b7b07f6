/*
 * emit_pointwise.c - writes loops/<section>.c, cuda/<section>.cu and
 * kernels/<section>.c: the kernels of every op with a `pointwise:`
 * expression, by section of native_functions.yaml.  loops/ holds the CPU
 * inner loops and is compiled once per CPU capability; cuda/ the CUDA
 * element functions over cuda/pointwise.cuh's kernel; kernels/ the
 * descriptors and entry points.
 *
 * Each op gets one inner loop per supported dtype behind the iterator of
 * cpu/cpu.h.  A loop has a contiguous fast path (every stride equals the
 * element size: typed pointers and a plain indexed loop the compiler
 * vectorises) and a strided path for broadcast or transposed operands.  The
 * expression is evaluated with locals named like the op's arguments, of the
 * compute type, and cpu/vec/vecmath.h makes exp/tanh/pow pick the float or
 * double function, SLEEF's vector math once vectorised.  The text comes
 * from gen_op.body (float constants as float in float32 loops; both arms
 * of a top-level select computed first).  int64 and int32 loops exist only
 * when formula_unit.c found the expression integer-safe (no calls, no
 * division), or the op gives a `pointwise_int:` expression for them, and
 * the op claims them; the descriptor names the Scalar arguments, which the
 * iterator requires to be integers on those dtypes.  With `int_divisor:`
 * the kernel first refuses a 0 divisor when the compute dtype is an
 * integer one (yg__check_int_divisor, core/core.h): integer division by
 * zero traps.
 * In-place loops drop `restrict`: there the output and self are the same
 * memory.
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

static int n_loop_dtypes(const gen_op *op, const gen_pointwise_plan *pp)
{
    return pp->int_safe || op->pointwise_int != NULL ? 4 : 2;
}

/* Whether op gets a loop for dtypes[d]: gen can write one and the op
 * claims it (a claim narrower than the loops, say float32 and float64 for
 * an activation whose expression would run on integers, leaves the other
 * loops out, so the iterator refuses those dtypes). */
static bool emits_loop(const gen_op *op, const gen_pointwise_plan *pp, int d)
{
    int k = gen_dtype_lookup(dtypes[d].suffix);
    return d < n_loop_dtypes(op, pp) && k >= 0 && (op->dtypes & (UINT32_C(1) << k)) != 0;
}

uint32_t gen_pointwise_loop_dtypes(const gen_op *op, const gen_pointwise_plan *pp)
{
    uint32_t mask = 0;

    /* A loop dtype missing from gen_dtypes (model.c) is left out of the
     * claim; test_opinfo then reports the op running on it unclaimed. */
    for (int d = 0; d < n_loop_dtypes(op, pp); d++) {
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

/* Writes the statements that compute one element into target (an lvalue
 * text such as "dst[i]") at indent, from pp->body for dtype dt. */
static void emit_body(gen_sb *sb, const gen_op *op, const gen_pointwise_plan *pp,
                      const dtype_info *dt, const char *indent, const char *target)
{
    char *const *body = pp->body[strcmp(dt->ctype, "float") == 0];
    const char *ct = dt->ctype;
    char *const int_body[3] = {op->pointwise_int, NULL, NULL};

    if (op->pointwise_int != NULL && strncmp(ct, "int", 3) == 0)
        body = int_body;
    if (body[1] != NULL) {
        gen_sb_printf(sb, "\n%sconst %s yg_then = (%s)(%s);\n", indent, ct, ct, body[1]);
        gen_sb_printf(sb, "%sconst %s yg_else = (%s)(%s);\n\n", indent, ct, ct, body[2]);
        gen_sb_printf(sb, "%s%s = %s ? yg_then : yg_else;\n", indent, target, body[0]);
        return;
    }
    if (strlen(indent) + strlen(target) + strlen(body[0]) + 4 > 100)
        gen_sb_printf(sb, "\n%s%s =\n%s    %s;\n", indent, target, indent, body[0]);
    else
        gen_sb_printf(sb, "\n%s%s = %s;\n", indent, target, body[0]);
}

static void emit_loop(gen_sb *sb, const gen_op *op, const gen_pointwise_plan *pp,
                      const dtype_info *dt)
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
        if (gen_arg_is_tensor(a))
            continue;
        gen_sb_printf(sb, "    const %s %s = (%s)scalars[%d];\n", ct, a->name, ct, n_scalars++);
    }
    if (n_scalars == 0)
        gen_sb_puts(sb, "    (void)scalars;\n");
    gen_sb_printf(sb, "    const int64_t elem = (int64_t)sizeof(%s);\n\n    if (", ct);
    k = 0;
    for (int i = 0; i < op->schema.n_args; i++) {
        if (!gen_arg_is_tensor(&op->schema.args[i]))
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
        if (!gen_arg_is_tensor(a))
            continue;
        gen_sb_printf(sb, "        const %s *%ssrc_%s = (const %s *)p[%d];\n", ct, restrict_kw,
                      a->name, ct, ++k);
    }
    gen_sb_puts(sb, "\n        for (int64_t i = 0; i < n; i++) {\n");
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (gen_arg_is_tensor(a))
            gen_sb_printf(sb, "            const %s %s = src_%s[i];\n", ct, a->name, a->name);
    }
    emit_body(sb, op, pp, dt, "            ", "dst[i]");
    gen_sb_puts(sb, "        }\n        return;\n    }\n");
    gen_sb_puts(sb, "    for (int64_t i = 0; i < n; i++) {\n");
    k = 0;
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (!gen_arg_is_tensor(a))
            continue;
        k++;
        gen_sb_printf(sb, "        const %s %s = *(const %s *)(p[%d] + i * s[%d]);\n", ct,
                      a->name, ct, k, k);
    }
    char *target = gen_xprintf("*(%s *)(p[0] + i * s[0])", ct);
    emit_body(sb, op, pp, dt, "        ", target);
    free(target);
    gen_sb_puts(sb, "    }\n}\n\n");
}

static int n_tensor_args(const gen_op *op)
{
    int n = 0;

    for (int i = 0; i < op->schema.n_args; i++)
        n += gen_arg_is_tensor(&op->schema.args[i]);
    return n;
}

/* The loops of op and its table for the ISA the file is compiled for. */
static void emit_op_loops(gen_sb *sb, const gen_op *op, const gen_pointwise_plan *pp)
{
    int n_dtypes = n_loop_dtypes(op, pp);

    gen_sb_printf(sb, "/* ---- %s: %s ---- */\n\n", op->full_name, op->pointwise);
    for (int d = 0; d < n_dtypes; d++)
        if (emits_loop(op, pp, d))
            emit_loop(sb, op, pp, &dtypes[d]);
    gen_sb_printf(sb, "const yg_loop_table YG_ISA_NAME(yg__loops_%s) = {{\n", op->cname);
    for (int d = 0; d < n_dtypes; d++)
        if (emits_loop(op, pp, d))
            gen_sb_printf(sb, "    [%s] = %s_loop_%s,\n", dtypes[d].enum_name, op->cname,
                          dtypes[d].suffix);
    gen_sb_puts(sb, "}};\n");
}

/* The ISA builds of the loops (cpu/vec/vec.h), by yagrad/cpu.h level. */
static const char *const isa_names[] = {"baseline", "avx2", "avx512"};
static const char *const isa_enums[] = {"YG_CPU_BASELINE", "YG_CPU_AVX2", "YG_CPU_AVX512"};

/* The descriptor and kernel of op, over the loop tables of every ISA. */
static void emit_op(gen_sb *sb, const gen_op *op)
{
    int n_in = n_tensor_args(op);

    gen_sb_printf(sb, "/* ---- %s: %s ---- */\n\n", op->full_name, op->pointwise);
    for (int isa = 0; isa < 3; isa++)
        gen_sb_printf(sb, "extern const yg_loop_table yg__loops_%s_%s;\n", op->cname,
                      isa_names[isa]);
    gen_sb_printf(sb, "YG_CUDA_LOOPS_DECLARE(%s);\n\n", op->cname);
    gen_sb_printf(sb, "static const char *const %s_input_names[] = {", op->cname);
    int k = 0;
    for (int i = 0; i < op->schema.n_args; i++)
        if (gen_arg_is_tensor(&op->schema.args[i]))
            gen_sb_printf(sb, "%s\"%s\"", k++ > 0 ? ", " : "", op->schema.args[i].name);
    gen_sb_puts(sb, "};\n\n");
    int n_scalar_args = op->schema.n_args - n_in;
    if (n_scalar_args > 0) {
        gen_sb_printf(sb, "static const char *const %s_scalar_names[] = {", op->cname);
        k = 0;
        for (int i = 0; i < op->schema.n_args; i++)
            if (!gen_arg_is_tensor(&op->schema.args[i]))
                gen_sb_printf(sb, "%s\"%s\"", k++ > 0 ? ", " : "", op->schema.args[i].name);
        gen_sb_puts(sb, "};\n\n");
    }
    gen_sb_printf(sb,
                  "static const yg_pointwise_desc %s_desc = {\n"
                  "    .op = \"%s\",\n    .n_inputs = %d,\n    .input_names = %s_input_names,\n"
                  "    .loops =\n        {\n",
                  op->cname, op->display, n_in, op->cname);
    for (int isa = 0; isa < 3; isa++)
        gen_sb_printf(sb, "            [%s] = &yg__loops_%s_%s,\n", isa_enums[isa], op->cname,
                      isa_names[isa]);
    gen_sb_printf(sb, "        },\n    .cuda = YG_CUDA_LOOPS(%s),\n", op->cname);
    if (n_scalar_args > 0)
        gen_sb_printf(sb, "    .n_scalars = %d,\n    .scalar_names = %s_scalar_names,\n",
                      n_scalar_args, op->cname);
    /* Claimed 16-bit floats compute through the float32 loop (the
     * iterator converts, pointwise.h). */
    int f16 = gen_dtype_lookup("float16"), bf16 = gen_dtype_lookup("bfloat16");
    bool has_f16 = f16 >= 0 && (op->dtypes & (UINT32_C(1) << f16));
    bool has_bf16 = bf16 >= 0 && (op->dtypes & (UINT32_C(1) << bf16));
    if (has_f16 || has_bf16)
        gen_sb_printf(sb,
                      "    .half_dtypes = %s%s%s,\n",
                      has_f16 ? "UINT32_C(1) << YG_FLOAT16" : "",
                      has_f16 && has_bf16 ? " | " : "",
                      has_bf16 ? "UINT32_C(1) << YG_BFLOAT16" : "");
    gen_sb_puts(sb, "};\n\n");

    gen_emit_schema_only(sb, "", op->func);
    gen_params params;
    gen_op_params_kernel(op, &params);
    char *prefix = gen_xprintf("yg_status yg__pw_%s(", op->cname);
    gen_emit_call_decl(sb, prefix, &params, false, "");
    free(prefix);
    gen_params_free(&params);
    gen_sb_printf(sb, "{\n    const yg_tensor *inputs[%d] = {", n_in);
    k = 0;
    int n_scalars = 0;
    for (int i = 0; i < op->schema.n_args; i++) {
        if (gen_arg_is_tensor(&op->schema.args[i]))
            gen_sb_printf(sb, "%s%s", k++ > 0 ? ", " : "", op->schema.args[i].name);
        else
            n_scalars++;
    }
    gen_sb_puts(sb, "};\n");
    if (n_scalars > 0) {
        gen_sb_printf(sb, "    const double scalars[%d] = {", n_scalars);
        k = 0;
        for (int i = 0; i < op->schema.n_args; i++)
            if (!gen_arg_is_tensor(&op->schema.args[i]))
                gen_sb_printf(sb, "%s%s", k++ > 0 ? ", " : "", op->schema.args[i].name);
        gen_sb_puts(sb, "};\n");
    }
    const char *sc = n_scalars > 0 ? "scalars" : "NULL";
    if (op->int_divisor_arg >= 0) {
        const gen_arg *d = &op->schema.args[op->int_divisor_arg];
        int index = 0;
        for (int i = 0; i < op->int_divisor_arg; i++)
            index += gen_arg_is_tensor(&op->schema.args[i]);
        if (gen_arg_is_tensor(d))
            gen_sb_printf(sb,
                          "\n    YG_RETURN_IF_ERROR(\n        yg__check_int_divisor(%s_desc.op, "
                          "inputs, %d, %d, \"%s\"));\n",
                          op->cname, n_in, index, d->name);
        else
            gen_sb_printf(sb,
                          "\n    YG_RETURN_IF_ERROR(\n        yg__check_int_divisor_scalar(%s_desc.op, "
                          "inputs, %d, %s, \"%s\"));\n",
                          op->cname, n_in, d->name, d->name);
    }
    if (op_inplace(op)) {
        gen_sb_printf(sb,
                      "\n    YG_RETURN_IF_ERROR(yg__pointwise_inplace(&%s_desc, %s, inputs, "
                      "%s));\n    *out = yg_retain(%s);\n    return YG_OK;\n}\n",
                      op->cname, op->schema.args[0].name, sc, op->schema.args[0].name);
    } else {
        gen_sb_printf(sb, "\n    return yg__pointwise(&%s_desc, inputs, %s, out);\n}\n",
                      op->cname, sc);
    }
}

char *gen_emit_pointwise_c(const gen_model *model, int section)
{
    gen_sb sb = {0};

    gen_emit_marker(&sb, GEN_NATIVE_FILE);
    gen_sb_printf(&sb,
                "/*\n"
                " * kernels/%s.c - the kernels of the ops of section %s\n"
                " * that have a `pointwise:` expression in specs/native_functions.yaml.\n"
                " *\n"
                " * Each op has a descriptor naming its inputs and its loops, one table per\n"
                " * CPU capability (loops/%s.c compiled for each, cpu/vec/vec.h) and the\n"
                " * CUDA launchers of cuda/%s.cu, and a kernel that runs the broadcasting\n"
                " * iterator of cpu/cpu.h over it on the device its inputs are on.\n"
                " */\n"
                "#include \"kernels/%s.h\"\n\n"
                "#include <stdint.h>\n\n"
                "#include \"cpu/cpu.h\"\n",
                model->sections[section].name, model->sections[section].name,
                model->sections[section].name, model->sections[section].name,
                model->sections[section].name);
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (!op->valid || op->kind != GEN_OP_POINTWISE || op->section != section)
            continue;
        gen_sb_puts(&sb, "\n");
        emit_op(&sb, op);
    }
    return gen_sb_take(&sb);
}

/* #include "core/intmath.h" when an op of section has a `pointwise_int:`
 * expression (its loops call the yg_int_* functions). */
static void put_intmath_include(gen_sb *sb, const gen_model *model, int section)
{
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (op->valid && op->kind == GEN_OP_POINTWISE && op->section == section &&
            op->pointwise_int != NULL) {
            gen_sb_puts(sb, "#include \"core/intmath.h\"\n");
            return;
        }
    }
}

char *gen_emit_loops_c(const gen_model *model, const gen_pointwise_plan *pointwise, int section)
{
    gen_sb sb = {0};

    gen_emit_marker(&sb, GEN_NATIVE_FILE);
    gen_sb_printf(&sb,
                "/*\n"
                " * loops/%s.c - the inner loops of the ops of section %s\n"
                " * that have a `pointwise:` expression in specs/native_functions.yaml,\n"
                " * compiled once per CPU capability (cpu/vec/vec.h) and chosen at load.\n"
                " *\n"
                " * Each op has one loop per supported dtype.  A loop takes a contiguous\n"
                " * fast path when every stride equals the element size (typed pointers the\n"
                " * compiler vectorises) and a strided path otherwise.  cpu/vec/vecmath.h\n"
                " * makes exp, tanh, pow, ... type-generic calls of SLEEF's vector math, so\n"
                " * the vectorised loops stay vectorised through them; float32 loops write\n"
                " * the expression's floating constants as float.  A top-level `c ? a : b`\n"
                " * whose arms call functions computes both arms first (yg_then, yg_else):\n"
                " * GCC vectorises that, not a call under a condition.  int64 and int32\n"
                " * loops exist for expressions without calls and division, or come from\n"
                " * the op's `pointwise_int:` expression (core/intmath.h).\n"
                " */\n"
                "#include <stdint.h>\n\n"
                "#include \"cpu/vec/vec.h\"\n#include \"cpu/vec/vecmath.h\"\n",
                model->sections[section].name, model->sections[section].name);
    put_intmath_include(&sb, model, section);
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (!op->valid || op->kind != GEN_OP_POINTWISE || op->section != section)
            continue;
        gen_sb_puts(&sb, "\n");
        emit_op_loops(&sb, op, &pointwise[i]);
    }
    return gen_sb_take(&sb);
}

/* ---- CUDA ----
 *
 * Per op and dtype, an element function (a struct over the input values,
 * whose constructor reads the scalars) evaluating the same text as the
 * CPU loop, and its launcher (YG_CUDA_LOOP, cuda/pointwise.cuh); per op,
 * the launcher table the descriptor points at.  CUDA's math functions
 * take the names C's have, overloaded for float. */

/* The position of dtypes[d] in yg_dtype (yagrad/tensor.h). */
static const char *const cuda_dtype_order[] = {"float32", "float64", "int64", "bool",
                                               "int32",   "float16", "bfloat16"};

static void emit_cuda_loop(gen_sb *sb, const gen_op *op, const gen_pointwise_plan *pp,
                           const dtype_info *dt)
{
    const char *ct = dt->ctype;
    int n_scalars = 0, k = 0;

    gen_sb_printf(sb, "struct %s_%s {\n", op->cname, dt->suffix);
    for (int i = 0; i < op->schema.n_args; i++)
        if (!gen_arg_is_tensor(&op->schema.args[i]))
            gen_sb_printf(sb, "    %s %s;\n", ct, op->schema.args[i].name);
    gen_sb_printf(sb, "\n    __host__ __device__ explicit %s_%s(const yg_cuda_loop_args *a)",
                  op->cname, dt->suffix);
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (gen_arg_is_tensor(a))
            continue;
        gen_sb_printf(sb, "%s%s((%s)a->scalars[%d])", n_scalars == 0 ? "\n        : " : ", ",
                      a->name, ct, n_scalars);
        n_scalars++;
    }
    gen_sb_printf(sb, "\n    {\n%s    }\n\n", n_scalars == 0 ? "        (void)a;\n" : "");
    gen_sb_printf(sb, "    __device__ %s operator()(const %s *v) const\n    {\n", ct, ct);
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (gen_arg_is_tensor(a))
            gen_sb_printf(sb, "        const %s %s = v[%d];\n", ct, a->name, k++);
    }
    char *target = gen_xprintf("const %s r", ct);
    emit_body(sb, op, pp, dt, "        ", target);
    free(target);
    gen_sb_puts(sb, "        return r;\n    }\n};\n");
    gen_sb_printf(sb, "YG_CUDA_LOOP(%s_%s_loop, %s, %s, %d, %s_%s)\n\n", op->cname, dt->suffix, ct,
                  ct, k, op->cname, dt->suffix);
}

static void emit_cuda_table(gen_sb *sb, const gen_op *op, const gen_pointwise_plan *pp)
{
    gen_sb_printf(sb, "extern \"C\" const yg_cuda_loop_table yg__cuda_loops_%s = {{\n",
                  op->cname);
    for (size_t j = 0; j < sizeof cuda_dtype_order / sizeof *cuda_dtype_order; j++) {
        int found = -1;
        for (int d = 0; d < n_loop_dtypes(op, pp); d++)
            if (emits_loop(op, pp, d) && strcmp(dtypes[d].suffix, cuda_dtype_order[j]) == 0)
                found = d;
        if (found >= 0)
            gen_sb_printf(sb, "    %s_%s_loop,\n", op->cname, dtypes[found].suffix);
        else
            gen_sb_printf(sb, "    NULL, /* %s */\n", cuda_dtype_order[j]);
    }
    gen_sb_puts(sb, "}};\n");
}

char *gen_emit_cuda_cu(const gen_model *model, const gen_pointwise_plan *pointwise, int section)
{
    gen_sb sb = {0};
    const char *name = model->sections[section].name;

    gen_emit_marker(&sb, GEN_NATIVE_FILE);
    gen_sb_printf(&sb,
                "/*\n"
                " * cuda/%s.cu - the CUDA loops of the ops of section %s\n"
                " * that have a `pointwise:` expression in specs/native_functions.yaml: per\n"
                " * op and dtype an element function over cuda/pointwise.cuh's kernel, and\n"
                " * per op the table of launchers that kernels/%s.c's descriptor names.\n"
                " * The expressions are the CPU loops' (float constants as float in float32\n"
                " * functions); CUDA's math functions take C's names, overloaded for float.\n"
                " * nvcc builds this file into the library when the CUDA backend is built;\n"
                " * the tests also compile it to PTX with NVRTC (no launchers there).\n"
                " */\n"
                "#include \"cuda/pointwise.cuh\"\n",
                name, name, name);
    put_intmath_include(&sb, model, section);
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (!op->valid || op->kind != GEN_OP_POINTWISE || op->section != section)
            continue;
        gen_sb_printf(&sb, "\n/* ---- %s: %s ---- */\n\n", op->full_name, op->pointwise);
        for (int d = 0; d < n_loop_dtypes(op, &pointwise[i]); d++)
            if (emits_loop(op, &pointwise[i], d))
                emit_cuda_loop(&sb, op, &pointwise[i], &dtypes[d]);
    }
    gen_sb_puts(&sb, "#ifndef __CUDACC_RTC__ /* NVRTC compiles no host code */\n");
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (!op->valid || op->kind != GEN_OP_POINTWISE || op->section != section)
            continue;
        gen_sb_puts(&sb, "\n");
        emit_cuda_table(&sb, op, &pointwise[i]);
    }
    gen_sb_puts(&sb, "#endif\n");
    return gen_sb_take(&sb);
}
