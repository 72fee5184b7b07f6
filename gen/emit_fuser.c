/*
 * emit_fuser.c - writes fuser/table.c: yg__fuse_ops[], parallel to
 * yg__ops[], the `pointwise:` expression of every functional pointwise op
 * as the fuser's code generator (runtime/jit/fuser/) pastes it into a
 * fused kernel: the same expression the eager loops compute (float32 with
 * floating literals as float; a top-level select whose arms call functions
 * split into condition, then and else, as the loops evaluate it), its
 * tensor argument names in order and its scalar arguments with their
 * defaults.  Ops without one are not fused.
 */
#include <stdlib.h>
#include <string.h>

#include "gen.h"

/* A C string literal of s (quotes and backslashes escaped). */
static void put_literal(gen_sb *sb, const char *s)
{
    gen_sb_puts(sb, "\"");
    for (; *s != '\0'; s++) {
        if (*s == '"' || *s == '\\')
            gen_sb_printf(sb, "\\%c", *s);
        else if (*s == '\n')
            gen_sb_puts(sb, " ");
        else
            gen_sb_putn(sb, s, 1);
    }
    gen_sb_puts(sb, "\"");
}

static bool fusible(const gen_op *op, const gen_pointwise_plan *pp)
{
    return op->valid && op->pointwise != NULL && op->form == GEN_FORM_FUNCTIONAL &&
           pp->body[0][0] != NULL && pp->body[1][0] != NULL;
}

/* Part k of body b (NULL when absent). */
static void put_part(gen_sb *sb, char *const *b, int k)
{
    if (b[k] == NULL)
        gen_sb_puts(sb, "NULL");
    else
        put_literal(sb, b[k]);
}

char *gen_emit_fuser_table_c(const gen_model *model, const gen_pointwise_plan *pointwise)
{
    gen_sb sb = {0}, rows = {0};
    int n = 0;

    gen_emit_marker(&sb, GEN_NATIVE_FILE);
    gen_sb_puts(&sb,
                "/*\n"
                " * fuser/table.c - yg__fuse_ops[]: for every op of yg__ops[] (same index)\n"
                " * with a `pointwise:` expression, the expression the fuser pastes into\n"
                " * fused kernels (runtime/jit/fuser/), its tensor and scalar argument\n"
                " * names and the scalars' defaults.  Other ops have none.\n"
                " */\n"
                "#include <math.h>\n\n"
                "#include \"jit/fuser/fuser.h\"\n\n");
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (!op->valid)
            continue;
        n++;
        if (!fusible(op, &pointwise[i])) {
            gen_sb_printf(&rows, "    {.n_inputs = 0}, /* %s */\n", op->full_name);
            continue;
        }
        int n_in = 0, n_sc = 0;
        gen_sb ins = {0}, scs = {0}, dfl = {0};
        for (int a = 0; a < op->schema.n_args; a++) {
            const gen_arg *arg = &op->schema.args[a];
            if (gen_arg_is_tensor(arg)) {
                gen_sb_printf(&ins, "%s\"%s\"", n_in++ > 0 ? ", " : "", arg->name);
            } else {
                gen_sb_printf(&scs, "%s\"%s\"", n_sc > 0 ? ", " : "", arg->name);
                bool has = arg->default_ != NULL && strcmp(arg->default_, "None") != 0;
                const char *d = !has                                  ? "NAN"
                                : strcmp(arg->default_, "True") == 0  ? "1"
                                : strcmp(arg->default_, "False") == 0 ? "0"
                                                                      : arg->default_;
                gen_sb_printf(&dfl, "%s%s", n_sc++ > 0 ? ", " : "", d);
            }
        }
        gen_sb_printf(&sb, "static const char *const %s_inputs[] = {%s};\n", op->cname,
                      ins.buf != NULL ? ins.buf : "");
        if (n_sc > 0) {
            gen_sb_printf(&sb, "static const char *const %s_scalars[] = {%s};\n", op->cname,
                          scs.buf != NULL ? scs.buf : "");
            gen_sb_printf(&sb, "static const double %s_defaults[] = {%s};\n", op->cname,
                          dfl.buf != NULL ? dfl.buf : "");
        }
        gen_sb_printf(&rows, "    {/* %s */\n", op->full_name);
        const char *fields[3] = {"expr", "then_", "else_"};
        for (int part = 0; part < 3; part++) {
            if (pointwise[i].body[0][part] == NULL)
                continue;
            gen_sb_printf(&rows, "     .%s = {", fields[part]);
            put_part(&rows, pointwise[i].body[0], part);
            gen_sb_puts(&rows, ", ");
            put_part(&rows, pointwise[i].body[1], part);
            gen_sb_puts(&rows, "},\n");
        }
        gen_sb_printf(&rows, "     .n_inputs = %d,\n     .input_names = %s_inputs", n_in,
                      op->cname);
        if (n_sc > 0)
            gen_sb_printf(&rows,
                          ",\n     .n_scalars = %d,\n     .scalar_names = %s_scalars,\n"
                          "     .scalar_defaults = %s_defaults",
                          n_sc, op->cname, op->cname);
        gen_sb_puts(&rows, "},\n");
        gen_sb_free(&ins);
        gen_sb_free(&scs);
        gen_sb_free(&dfl);
    }
    gen_sb_printf(&sb, "\nconst yg_fuse_op yg__fuse_ops[] = {\n%s};\n",
                  rows.buf != NULL ? rows.buf : "");
    gen_sb_printf(&sb, "const int32_t yg__fuse_ops_count = %d;\n", n);
    gen_sb_printf(&sb,
                  "_Static_assert(sizeof(yg__fuse_ops) / sizeof(yg__fuse_ops[0]) == %d,\n"
                  "               \"fuser table size\");\n",
                  n);
    gen_sb_free(&rows);
    return gen_sb_take(&sb);
}
