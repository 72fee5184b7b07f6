/*
 * emit_boxed.c - writes the boxed-op table the graph interpreter and the
 * constant propagation pass call ops through:
 *   boxed/<section>.c  yg__boxed_<op>: unpacks a graph node's tensor inputs
 *                     and attributes into the C arguments of yg_<op>
 *   boxed/boxed.h     their declarations
 *   boxed/table.c     yg__boxed_ops[], parallel to yg__ops[] (same index)
 *
 * Tensor arguments are the node's inputs in schema order (a Tensor[]
 * takes what the other tensor arguments leave: it is `in + k` with length
 * n_in - n_other, and a tensor after it is read from the end of in);
 * every other argument is the node attribute of the same name, read by a
 * helper of runtime/jit/ir/boxing.h that applies the schema's default when
 * the attribute is absent and checks its kind.  Nothing depends on an op's
 * name.  An argument type this file does not know how to box (types other
 * branches add to gen_type) gives a NULL entry with the reason, which the
 * interpreter reports; the op itself stays callable from C.
 */
#include <stdlib.h>
#include <string.h>

#include "gen.h"

static bool is_tensor(const gen_arg *a)
{
    return gen_arg_is_tensor(a);
}

/* Why op's results cannot be boxed (caller frees), or NULL: each must
 * be one `yg_tensor **` out-parameter, written as &out[i].  A return type
 * added later (a Tensor[] result, say) maps to other C parameters. */
static char *unsupported_returns(const gen_op *op)
{
    gen_params p;
    int n_arg_params = 0;
    char *why = NULL;

    for (int i = 0; i < op->schema.n_args; i++)
        n_arg_params += gen_arg_has_len(&op->schema.args[i]) ? 2 : 1;
    if (gen_returns_list(op))
        return NULL; /* moved into the node's outputs by yg__box_list_out */
    gen_op_params(op, &p);
    if (p.n - n_arg_params != op->schema.n_returns)
        why = gen_xstrdup("its returns are not one tensor each and are not supported");
    for (int i = n_arg_params; why == NULL && i < p.n; i++)
        if (strncmp(p.decls[i], "yg_tensor **", 12) != 0 || p.decls[i][12] == '*')
            why = gen_xprintf("return '%s' is not supported", p.decls[i]);
    gen_params_free(&p);
    return why;
}

/* Why op cannot be boxed (caller frees), or NULL when it can. */
static char *unsupported_reason(const gen_op *op)
{
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (is_tensor(a) || gen_arg_is_tensor_list(a))
            continue;
        gen_box_arg b = {0};
        bool ok = gen_box_attr(a, &b);
        gen_box_arg_free(&b);
        if (!ok)
            return gen_xprintf("argument '%s' of type %s is not supported", a->name,
                               gen_type_name(a));
    }
    return unsupported_returns(op);
}

static void emit_boxed_fn(gen_sb *sb, const gen_op *op)
{
    const gen_schema *s = &op->schema;
    gen_box_arg *args = gen_xcalloc((size_t)s->n_args + 1, sizeof(gen_box_arg));
    int n_tensors = 0, seen = 0;
    bool any_attr = false, has_list = false;
    gen_sb locals = {0}, reads = {0};

    for (int i = 0; i < s->n_args; i++)
        n_tensors += is_tensor(&s->args[i]);
    for (int i = 0; i < s->n_args; i++) {
        const gen_arg *a = &s->args[i];
        gen_box_arg *b = &args[i];
        if (is_tensor(a) && has_list) {
            /* After the list (docs/ir.md): counted from the end. */
            gen_box_arg_add(b, gen_xprintf("in[n_in - %d]", n_tensors - seen));
            seen++;
        } else if (is_tensor(a)) {
            gen_box_arg_add(b, gen_xprintf("in[%d]", seen));
            seen++;
        } else if (gen_arg_is_tensor_list(a)) {
            has_list = true;
            gen_box_arg_add(b, seen > 0 ? gen_xprintf("(const yg_tensor *const *)(in + %d)", seen)
                                 : gen_xstrdup("(const yg_tensor *const *)in"));
            gen_box_arg_add(b, n_tensors > 0 ? gen_xprintf("n_in - %d", n_tensors)
                                             : gen_xstrdup("n_in"));
        } else {
            any_attr |= !gen_arg_is_generator(a);
            (void)gen_box_attr(a, b);
            gen_sb_puts(&locals, b->locals.buf != NULL ? b->locals.buf : "");
            gen_sb_puts(&reads, b->reads.buf != NULL ? b->reads.buf : "");
        }
    }

    if (gen_returns_list(op))
        gen_sb_puts(&locals, "    yg_tensor **items = NULL;\n    int64_t len = 0;\n");

    gen_sb_puts(sb, "\n");
    gen_emit_schema_only(sb, "", op->func);
    gen_sb_printf(sb, "yg_boxed_impl yg__boxed_%s; /* listed in boxed/table.c */\n", op->cname);
    gen_sb_printf(sb,
                  "yg_status yg__boxed_%s(const yg_ir_node *node,\n"
                  "%*syg_tensor *const *in,\n"
                  "%*sint32_t n_in,\n"
                  "%*syg_tensor **out)\n{\n",
                  op->cname, (int)strlen(op->cname) + 21, "", (int)strlen(op->cname) + 21, "",
                  (int)strlen(op->cname) + 21, "");
    if (locals.len > 0)
        gen_sb_printf(sb, "%s\n", locals.buf);
    if (!any_attr)
        gen_sb_puts(sb, "    (void)node;\n");
    if (n_tensors == 0 && !has_list)
        gen_sb_puts(sb, "    (void)in;\n");
    if (!has_list)
        gen_sb_puts(sb, "    (void)n_in;\n");
    if (reads.len > 0)
        gen_sb_puts(sb, reads.buf);

    char **call = gen_xcalloc((size_t)(2 * s->n_args + s->n_returns + 1), sizeof(char *));
    int n = 0;
    for (int i = 0; i < s->n_args; i++)
        for (int k = 0; k < args[i].n_call; k++)
            call[n++] = args[i].call[k];
    bool list = gen_returns_list(op);
    if (list) {
        call[n++] = gen_xstrdup("&items");
        call[n++] = gen_xstrdup("&len");
    } else {
        for (int i = 0; i < s->n_returns; i++)
            call[n++] = gen_xprintf("&out[%d]", i);
    }
    char *head = gen_xprintf(list ? "YG_RETURN_IF_ERROR(yg_%s(" : "return yg_%s(", op->cname);
    gen_emit_wrapped(sb, "    ", head, (const char *const *)call, n, list ? "));" : ");");
    if (list)
        gen_sb_puts(sb, "    return yg__box_list_out(node, items, len, out);\n");
    gen_sb_puts(sb, "}\n");

    free(head);
    for (int i = 0; i < n; i++)
        free(call[i]);
    free(call);
    for (int i = 0; i < s->n_args; i++) {
        gen_sb_free(&args[i].locals);
        gen_sb_free(&args[i].reads);
    }
    free(args);
    gen_sb_free(&locals);
    gen_sb_free(&reads);
}

char *gen_emit_boxed_c(const gen_model *model, int section)
{
    gen_sb sb = {0};

    gen_emit_marker(&sb, GEN_NATIVE_FILE);
    gen_sb_printf(&sb,
                  "/*\n"
                  " * boxed/%s.c - the boxed form of every op of section %s:\n"
                  " * a function that calls yg_<op> with a graph node's tensor inputs and\n"
                  " * attributes (see runtime/jit/ir/boxing.h).  An attribute left out of the\n"
                  " * node takes the schema's default; one of the wrong kind fails naming op\n"
                  " * and attribute.  Outputs are new references.\n"
                  " */\n"
                  "#include \"boxed/boxed.h\"\n\n"
                  GEN_OPS_INCLUDES,
                  model->sections[section].name, model->sections[section].name);
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (!op->valid || op->section != section)
            continue;
        char *why = unsupported_reason(op);
        if (why == NULL)
            emit_boxed_fn(&sb, op);
        free(why);
    }
    return gen_take_with_ops_includes(model, section, &sb);
}

char *gen_emit_boxed_h(const gen_model *model)
{
    gen_sb sb = {0};

    gen_emit_marker(&sb, GEN_NATIVE_FILE);
    gen_sb_puts(&sb,
                "/*\n"
                " * boxed/boxed.h - what the boxed functions of the ops (defined in\n"
                " * boxed/<section>.c, listed in yg__boxed_ops[]) are written against.  Not\n"
                " * public API.\n"
                " */\n"
                "#ifndef YAGRAD_GENERATED_BOXED_H\n#define YAGRAD_GENERATED_BOXED_H\n\n"
                "#include \"jit/ir/boxing.h\"\n\n"
                "/* Each boxed function is declared where it is defined and in\n"
                " * boxed/table.c, not here: this header does not change when an op is\n"
                " * added, so what includes it does not recompile. */\n");
    (void)model;
    gen_sb_puts(&sb, "\n#endif /* YAGRAD_GENERATED_BOXED_H */\n");
    return gen_sb_take(&sb);
}

char *gen_emit_boxed_table_c(const gen_model *model)
{
    gen_sb sb = {0};
    int n = 0;

    gen_emit_marker(&sb, GEN_NATIVE_FILE);
    gen_sb_puts(&sb,
                "/*\n"
                " * boxed/table.c - yg__boxed_ops[]: the boxed function of every op, in the\n"
                " * order of yg__ops[] (registry.c), so an op's index finds both.  Ops with\n"
                " * an argument type that cannot be boxed yet have no function and say why.\n"
                " */\n"
                "#include \"boxed/boxed.h\"\n\n");
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        char *why;
        if (!op->valid || (why = unsupported_reason(op)) != NULL) {
            if (op->valid)
                free(why);
            continue;
        }
        gen_sb_printf(&sb, "yg_boxed_impl yg__boxed_%s;\n", op->cname);
    }
    gen_sb_puts(&sb, "\nconst yg_boxed_op yg__boxed_ops[] = {\n");
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (!op->valid)
            continue;
        char *why = unsupported_reason(op);
        if (why == NULL)
            gen_sb_printf(&sb, "    {.name = \"%s\", .fn = yg__boxed_%s},\n", op->full_name,
                          op->cname);
        else
            gen_sb_printf(&sb, "    {.name = \"%s\",\n     .fn = NULL,\n     .unsupported = \"%s\"},\n",
                          op->full_name, why);
        free(why);
        n++;
    }
    gen_sb_puts(&sb, "};\n");
    gen_sb_printf(&sb, "const int32_t yg__boxed_ops_count = %d;\n", n);
    gen_sb_printf(&sb,
                  "_Static_assert(sizeof(yg__boxed_ops) / sizeof(yg__boxed_ops[0]) == %d,\n"
                  "               \"boxed table size\");\n",
                  n);
    return gen_sb_take(&sb);
}
