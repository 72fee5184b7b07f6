/*
 * emit_onnx.c - writes the ONNX symbolics of the ops whose `onnx:` key maps
 * them to one ONNX operator (onnx_map.h):
 *   onnx/onnx_gen.h   declarations of every symbolic, generated and
 *                     handwritten (yg__onnx_sym_<cname>), so a handwritten
 *                     one with the wrong signature fails to compile
 *   onnx/<section>.c  yg__onnx_sym_<cname> for the section's mapped ops
 *   onnx/table.c      yg__onnx_symbolics[], parallel to yg__ops[]
 *
 * A symbolic reads the node's attributes with the boxing readers (an
 * absent attribute is the schema's default, as for the interpreter),
 * checks its `where` guards, and emits one ONNX node through the helpers
 * of runtime/onnx/symbolic.h; the exporter owns everything it builds, so
 * the code has nothing to release.
 */
#include <stdlib.h>
#include <string.h>

#include "onnx_map.h"

/* The node input index of tensor argument a: its position among the
 * tensor arguments, or, after a Tensor[] argument, "n_in - k". */
static char *input_index(const gen_op *op, int a)
{
    int before = 0, after = 0;
    bool list_before = false;
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *x = &op->schema.args[i];
        if (gen_arg_is_tensor_list(x) && i < a)
            list_before = true;
        if (!gen_arg_is_tensor(x))
            continue;
        if (i < a)
            before++;
        else if (i > a)
            after++;
    }
    if (list_before)
        return gen_xprintf("yg_ir_node_num_inputs(node) - %d", after + 1);
    return gen_xprintf("%d", before);
}

/* ONNX computes this operator in the type of one of its inputs; a
 * result yagrad gives another dtype (a sum of bools, say) must not be
 * exported as if it matched: the check that the two agree. */
static void emit_output_type_check(gen_sb *body, const gen_op *op, const gen_onnx_map *m)
{
    for (int i = 0, pos = 0; i < m->n_items && m->schema->out_type_input >= 0; i++) {
        const gen_onnx_item *it = &m->items[i];
        if (it->kind > GEN_ONNX_IN_INTS || pos++ != m->schema->out_type_input)
            continue;
        int arg = it->kind == GEN_ONNX_IN_SCALAR ? it->like_index : it->arg_index;
        if (it->kind != GEN_ONNX_IN_INTS && arg >= 0) {
            char *idx = input_index(op, arg);
            gen_sb_printf(body,
                          "    YG_RETURN_IF_ERROR(yg__onnx_same_dtype(cx, node, %s, \"%s\"));\n", idx,
                          m->op_type);
            free(idx);
        }
        break;
    }
}

/* The call that hands one item of the `onnx:` mapping to the node o: an
 * input, an attribute or a literal. */
static void emit_item(gen_sb *body, const gen_op *op, const gen_onnx_item *it)
{
    const gen_arg *x = it->arg_index >= 0 ? &op->schema.args[it->arg_index] : NULL;
    char *idx = NULL;

    switch (it->kind) {
    case GEN_ONNX_IN_TENSOR:
        idx = input_index(op, it->arg_index);
        gen_sb_printf(body, "    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, %s));\n", idx);
        free(idx);
        break;
    case GEN_ONNX_IN_LIST: {
        int k = 0, after = 0;
        for (int j = 0; j < op->schema.n_args; j++)
            if (gen_arg_is_tensor(&op->schema.args[j]) && j < it->arg_index)
                k++;
            else if (gen_arg_is_tensor(&op->schema.args[j]))
                after++;
        gen_sb_printf(body, "    YG_RETURN_IF_ERROR(yg__onnx_inputs(cx, o, node, %d, %d));\n",
                      k, after);
        break;
    }
    case GEN_ONNX_IN_SCALAR:
        idx = input_index(op, it->like_index);
        gen_sb_printf(body,
                      "    YG_RETURN_IF_ERROR(yg__onnx_input_scalar(cx, o, node, %s, %s));\n",
                      idx, x->name);
        free(idx);
        break;
    case GEN_ONNX_IGNORE:
        gen_sb_printf(body, "    /* ignore(%s): no effect on the forward value */\n",
                      x->name);
        break;
    case GEN_ONNX_IN_INTS:
        if (gen_arg_is_int(x))
            gen_sb_printf(body,
                          "    YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, &%s, 1));\n",
                          x->name);
        else
            gen_sb_printf(body,
                          "    YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, %s.items, %s.len));\n",
                          x->name, x->name);
        break;
    case GEN_ONNX_ATTR_ARG:
        gen_type_onnx_attr(body, x, it->attr);
        break;
    case GEN_ONNX_ATTR_INT:
        gen_sb_printf(body, "    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, \"%s\", %s));\n",
                      it->attr, it->literal);
        break;
    case GEN_ONNX_ATTR_FLOAT:
        gen_sb_printf(body, "    YG_RETURN_IF_ERROR(yg__onnx_attr_float(cx, o, \"%s\", %s));\n",
                      it->attr, it->literal);
        break;
    case GEN_ONNX_ATTR_STR:
        gen_sb_printf(body,
                      "    YG_RETURN_IF_ERROR(yg__onnx_attr_str(cx, o, \"%s\", \"%s\"));\n",
                      it->attr, it->literal);
        break;
    }
}

static void emit_symbolic(gen_sb *sb, const gen_op *op, const gen_onnx_map *m)
{
    gen_sb decl = {0}, reads = {0}, body = {0};

    for (int a = 0; a < op->schema.n_args; a++) {
        const gen_arg *x = &op->schema.args[a];
        if (!gen_arg_is_input(x))
            gen_type_onnx_read(&decl, &reads, x);
    }
    for (int g = 0; g < m->n_guards; g++) {
        const gen_onnx_guard *gd = &m->guards[g];
        const gen_arg *x = &op->schema.args[gd->arg_index];
        gen_sb_printf(&body,
                      "    YG_RETURN_IF_ERROR(yg__onnx_require(cx, node, \"%s\", %s%s == %s, \"%s\"));\n",
                      x->name, x->nullable ? "*" : "", x->name, gen_default_c(gd->literal),
                      gd->literal);
    }
    emit_output_type_check(&body, op, m);
    gen_sb_printf(&body, "    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, \"%s\", &o));\n",
                  m->op_type);
    for (int i = 0; i < m->n_items; i++)
        emit_item(&body, op, &m->items[i]);
    gen_sb_puts(&body, "    return yg__onnx_outputs(cx, o, node);\n");

    gen_sb_puts(sb, "\n");
    gen_emit_schema_only(sb, "", op->func);
    gen_sb_printf(sb, "/* onnx: %s */\n", op->onnx);
    gen_sb_printf(sb, "yg_onnx_symbolic_fn yg__onnx_sym_%s; /* listed in onnx/table.c */\n",
                  op->cname);
    gen_sb_printf(sb, "yg_status yg__onnx_sym_%s(yg_onnx_ctx *cx, const yg_ir_node *node)\n{\n",
                  op->cname);
    char *d = gen_sb_take(&decl);
    char *r = gen_sb_take(&reads);
    char *b = gen_sb_take(&body);
    gen_sb_puts(sb, d);
    gen_sb_puts(sb, "    yg_onnx_node *o = NULL;\n\n");
    if (r[0] != '\0') {
        gen_sb_puts(sb, r);
        gen_sb_puts(sb, "\n");
    }
    gen_sb_puts(sb, b);
    gen_sb_puts(sb, "}\n");
    free(d);
    free(r);
    free(b);
}

char *gen_emit_onnx_c(const gen_model *model, const gen_onnx_map *maps, int section)
{
    gen_sb sb = {0};
    int n = 0;

    gen_emit_marker(&sb, GEN_NATIVE_FILE);
    gen_sb_printf(&sb,
                  "/*\n"
                  " * onnx/%s.c - the ONNX symbolics of section %s:\n"
                  " * one per op whose `onnx:` key maps it to one ONNX operator\n"
                  " * (docs/onnx.md).  Each emits that operator for one graph node through\n"
                  " * runtime/onnx/symbolic.h.\n"
                  " */\n",
                  model->sections[section].name, model->sections[section].name);
    gen_sb_puts(&sb, "#include \"onnx/onnx_gen.h\"\n\n#include \"jit/ir/boxing.h\"\n");
    for (int i = 0; i < model->n_ops; i++) {
        if (model->ops[i].section != section || maps[i].form != GEN_ONNX_OP)
            continue;
        emit_symbolic(&sb, &model->ops[i], &maps[i]);
        n++;
    }
    if (n == 0)
        gen_sb_puts(&sb, "\n/* No op of this section maps to one ONNX operator. */\n");
    return gen_sb_take(&sb);
}

/* The lowest opset a generated symbolic needs: its operator's. */
static int min_opset(const gen_onnx_map *m)
{
    return m->form == GEN_ONNX_OP ? m->schema->min_opset : 0;
}

char *gen_emit_onnx_gen_h(const gen_model *model, const gen_onnx_map *maps)
{
    gen_sb sb = {0};

    gen_emit_marker(&sb, GEN_NATIVE_FILE);
    gen_sb_puts(&sb, "/*\n"
                     " * onnx/onnx_gen.h - the ONNX symbolic of every op whose `onnx:` key is\n"
                     " * custom (handwritten in runtime/onnx/); the generated ones (an `onnx:`\n"
                     " * operator, onnx/<section>.c) are declared in onnx/table.c.  Private to\n"
                     " * the exporter.\n"
                     " */\n"
                     "#ifndef YAGRAD_GENERATED_ONNX_GEN_H\n#define YAGRAD_GENERATED_ONNX_GEN_H\n\n"
                     "#include \"onnx/symbolic.h\"\n\n");
    /* The handwritten ones only: a generated symbolic is declared where
     * it is defined and in onnx/table.c, so adding an op that maps to an
     * operator does not change this header (and recompile the exporter). */
    for (int i = 0; i < model->n_ops; i++)
        if (maps[i].form == GEN_ONNX_CUSTOM)
            gen_sb_printf(&sb, "yg_onnx_symbolic_fn yg__onnx_sym_%s; /* handwritten */\n",
                          model->ops[i].cname);
    gen_sb_puts(&sb, "\n#endif /* YAGRAD_GENERATED_ONNX_GEN_H */\n");
    return gen_sb_take(&sb);
}

static void c_string(gen_sb *sb, const char *s)
{
    gen_sb_puts(sb, "\"");
    for (; *s != '\0'; s++) {
        if (*s == '"' || *s == '\\')
            gen_sb_puts(sb, "\\");
        gen_sb_putn(sb, s, 1);
    }
    gen_sb_puts(sb, "\"");
}

char *gen_emit_onnx_table_c(const gen_model *model, const gen_onnx_map *maps)
{
    gen_sb sb = {0};
    int n = 0;

    gen_emit_marker(&sb, GEN_NATIVE_FILE);
    gen_sb_puts(&sb, "/*\n"
                     " * onnx/table.c - yg__onnx_symbolics[]: how each op of yg__ops[] (same\n"
                     " * index) exports to ONNX, from its `onnx:` key.\n"
                     " */\n"
                     "#include \"onnx/onnx_gen.h\"\n\n");
    for (int i = 0; i < model->n_ops; i++)
        if (maps[i].form == GEN_ONNX_OP)
            gen_sb_printf(&sb, "yg_onnx_symbolic_fn yg__onnx_sym_%s;\n", model->ops[i].cname);
    gen_sb_puts(&sb, "\nconst yg_onnx_symbolic yg__onnx_symbolics[] = {\n");
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        const gen_onnx_map *m = &maps[i];
        if (!op->valid)
            continue;
        gen_sb_printf(&sb, "    {\"%s\", ", op->full_name);
        switch (m->form) {
        case GEN_ONNX_OP:
            gen_sb_printf(&sb, "yg__onnx_sym_%s, %d, \"%s\", NULL},\n", op->cname, min_opset(m),
                          m->op_type);
            break;
        case GEN_ONNX_CUSTOM:
            gen_sb_printf(&sb, "yg__onnx_sym_%s, 0, \"custom\", NULL},\n", op->cname);
            break;
        case GEN_ONNX_UNSUPPORTED:
            /* past 100 columns the reason goes on its own line */
            gen_sb_puts(&sb, strlen(op->full_name) + strlen(m->reason) > 66 ? "NULL, 0, NULL,\n     "
                                                                              : "NULL, 0, NULL, ");
            c_string(&sb, m->reason);
            gen_sb_puts(&sb, "},\n");
            break;
        case GEN_ONNX_UNMAPPED:
            gen_sb_puts(&sb, "NULL, 0, NULL, NULL},\n");
            break;
        }
        n++;
    }
    gen_sb_printf(&sb, "};\n\nconst int32_t yg__onnx_symbolics_count = %d;\n", n);
    return gen_sb_take(&sb);
}
