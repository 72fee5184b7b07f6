/*
 * emit_graph_grad.c - writes the graph derivatives: every entry of
 * specs/derivatives.yaml whose formulas have a graph form, as a function
 * that appends those formulas to a backward graph (runtime/jit/autodiff/graph_grad.h):
 *   graph_grad/<section>.c  yg__graph_grad_<op>, from the formulas that the
 *                         entry's eager node (nodes/<section>.c) runs
 *   graph_grad/graph_grad.h   their declarations
 *   graph_grad/table.c      yg__graph_grad_ops[], parallel to yg__ops[]
 * The formulas' scalar arguments are read from the forward node's
 * attributes with the boxed readers (the schema's default when absent).
 */
#include <stdlib.h>
#include <string.h>

#include "gen.h"

/* The tensor ordinal of argument index i of op. */
static int ordinal_of(const gen_op *op, int arg_index)
{
    int ord = 0;

    for (int i = 0; i < arg_index; i++)
        ord += gen_arg_is_input(&op->schema.args[i]);
    return ord;
}

bool gen_deriv_has_graph_grad(const gen_deriv *d, const gen_symbolic_plan *sp)
{
    bool any = false;

    if (d->op == NULL || !d->op->valid || d->no_graph_grad != NULL)
        return false;
    for (int i = 0; i < d->n_formulas; i++) {
        const gen_formula *f = &d->formulas[i];
        if (f->expr != NULL && f->group_index == 0) {
            if (sp->graph_grad[i] == NULL)
                return false;
            any = true;
        }
    }
    return any;
}

/* Why op has no graph derivative (static string or caller-freed
 * text in *owned), NULL when it has one; sp: the symbolic plan of its
 * derivative entry (when it has one). */
static const char *why_none(const gen_op *op, const gen_symbolic_plan *sp, char **owned)
{
    *owned = NULL;
    if (op->deriv == NULL)
        return "no entry in specs/derivatives.yaml";
    if (op->form != GEN_FORM_FUNCTIONAL && op->form != GEN_FORM_VIEW)
        return "in-place and out= ops stay outside autodiff subgraphs";
    for (int i = 0; i < op->schema.n_args; i++)
        if (op->schema.args[i].mutable_)
            return "in-place: writes an argument (running statistics); stays outside autodiff "
                   "subgraphs";
    if (op->deriv->no_graph_grad != NULL) {
        *owned = gen_xprintf("graph_grad: not_implemented: %s", op->deriv->no_graph_grad);
        return *owned;
    }
    bool any = false;
    for (int i = 0; i < op->deriv->n_formulas; i++)
        any |= op->deriv->formulas[i].expr != NULL;
    if (!any)
        return "no differentiable input";
    return gen_deriv_has_graph_grad(op->deriv, sp) ? NULL : "formulas not lowered";
}

/* Whether the entry's formulas read save s (the scalar arguments the
 * function must read from the node). */
static bool reads_attr(const gen_save *s)
{
    return s->arg_index >= 0 && (s->kind == GEN_SAVE_VALUE || s->kind == GEN_SAVE_INT_LIST);
}

static void emit_fn(gen_sb *sb, const gen_deriv *d, const gen_backward_plan *bp,
                    const gen_symbolic_plan *sp)
{
    const gen_op *op = d->op;
    gen_sb locals = {0}, reads = {0}, body = {0};
    bool any_call = false;

    for (int i = 0; i < bp->n_saves; i++) {
        const gen_save *s = &bp->saves[i];
        bool dup = false;
        for (int j = 0; j < i; j++)
            dup |= bp->saves[j].arg_index == s->arg_index && reads_attr(&bp->saves[j]);
        if (!reads_attr(s) || dup)
            continue;
        gen_box_arg b = {0};
        (void)gen_box_attr(&op->schema.args[s->arg_index], &b);
        gen_sb_puts(&locals, b.locals.buf != NULL ? b.locals.buf : "");
        gen_sb_puts(&reads, b.reads.buf != NULL ? b.reads.buf : "");
        gen_box_arg_free(&b);
    }
    for (int i = 0; i < d->n_formulas; i++) {
        const gen_formula *f = &d->formulas[i];
        if (f->group_index != 0 || (f->expr == NULL && !f->not_implemented))
            continue;
        gen_sb cond = {0};
        for (int m = 0; m < d->n_formulas; m++)
            if (d->formulas[m].group == f->group)
                gen_sb_printf(&cond, "%syg__df_needs(s, %d)", cond.len > 0 ? " || " : "",
                              ordinal_of(op, d->formulas[m].arg_index));
        gen_sb_printf(&body, "    if (%s) {\n", cond.buf);
        gen_sb_free(&cond);
        if (f->not_implemented) {
            gen_sb_printf(&body,
                          "        yg__df_check(s, yg__fail(YG_ERR_NOT_IMPLEMENTED,\n"
                          "                                  \"%s: the derivative for '%s' is "
                          "not implemented\"));\n",
                          op->display, f->input);
        } else {
            gen_sb_printf(&body, "        /* %s: %s */\n", f->input, f->expr);
            gen_sb_puts(&body, sp->graph_grad[i]);
            any_call |= strstr(sp->graph_grad[i], "yg__df_op(") != NULL;
        }
        gen_sb_puts(&body, "    }\n");
    }

    gen_sb_puts(sb, "\n");
    gen_emit_schema_only(sb, "", d->name_text);
    gen_sb_printf(sb, "yg_graph_grad_impl yg__graph_grad_%s; /* listed in graph_grad/table.c */\n",
                  op->cname);
    gen_sb_printf(sb, "yg_status yg__graph_grad_%s(yg_df *s, const yg_ir_node *node)\n{\n",
                  op->cname);
    if (any_call)
        gen_sb_puts(&locals, "    yg_ir_node *n = NULL;\n");
    if (locals.len > 0)
        gen_sb_printf(sb, "%s\n", locals.buf);
    if (reads.len == 0)
        gen_sb_puts(sb, "    (void)node;\n");
    gen_sb_puts(sb, reads.buf != NULL ? reads.buf : "");
    gen_sb_puts(sb, body.buf != NULL ? body.buf : "");
    gen_sb_puts(sb, "    return yg__df_status(s);\n}\n");
    gen_sb_free(&locals);
    gen_sb_free(&reads);
    gen_sb_free(&body);
}

/* The symbolic plan of op's derivative entry, NULL without one. */
static const gen_symbolic_plan *symbolic_of(const gen_model *model,
                                            const gen_symbolic_plan *symbolic, const gen_op *op)
{
    return op->deriv != NULL ? &symbolic[gen_deriv_index(model, op->deriv)] : NULL;
}

char *gen_emit_graph_grad_c(const gen_model *model, const gen_backward_plan *backward,
                            const gen_symbolic_plan *symbolic, int section)
{
    gen_sb sb = {0};

    gen_emit_marker(&sb, GEN_DERIV_FILE);
    gen_sb_printf(&sb,
                  "/*\n"
                  " * graph_grad/%s.c - the graph derivatives of section %s: each\n"
                  " * entry's formulas of specs/derivatives.yaml, the same ones its eager\n"
                  " * backward node runs (nodes/%s.c), as code that appends them to a\n"
                  " * backward graph (runtime/jit/autodiff/graph_grad.h).  Scalar arguments come from\n"
                  " * the forward node's attributes; errors are sticky in s.\n"
                  " */\n"
                  "#include \"graph_grad/graph_grad.h\"\n",
                  model->sections[section].name, model->sections[section].name,
                  model->sections[section].name);
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        char *owned;
        if (!op->valid || op->section != section ||
            why_none(op, symbolic_of(model, symbolic, op), &owned) != NULL) {
            if (op->valid && op->section == section)
                free(owned);
            continue;
        }
        int k = gen_deriv_index(model, op->deriv);
        emit_fn(&sb, op->deriv, &backward[k], &symbolic[k]);
    }
    return gen_sb_take(&sb);
}

char *gen_emit_graph_grad_h(const gen_model *model)
{
    gen_sb sb = {0};

    gen_emit_marker(&sb, GEN_DERIV_FILE);
    gen_sb_puts(&sb,
                "/*\n"
                " * graph_grad/graph_grad.h - what the graph derivatives of the ops (defined\n"
                " * in graph_grad/<section>.c, listed in yg__graph_grad_ops[]) are written\n"
                " * against.  Not public API.\n"
                " */\n"
                "#ifndef YAGRAD_GENERATED_GRAPH_GRAD_H\n#define YAGRAD_GENERATED_GRAPH_GRAD_H\n\n"
                "#include \"jit/ir/boxing.h\"\n#include \"jit/autodiff/graph_grad.h\"\n\n"
                "/* Each graph derivative is declared where it is defined and in\n"
                " * graph_grad/table.c, not here: this header does not change when an op is\n"
                " * added, so what includes it does not recompile. */\n");
    (void)model;
    gen_sb_puts(&sb, "\n#endif /* YAGRAD_GENERATED_GRAPH_GRAD_H */\n");
    return gen_sb_take(&sb);
}

char *gen_emit_graph_grad_table_c(const gen_model *model, const gen_symbolic_plan *symbolic)
{
    gen_sb sb = {0};
    int n = 0;

    gen_emit_marker(&sb, GEN_DERIV_FILE);
    gen_sb_puts(&sb,
                "/*\n"
                " * graph_grad/table.c - yg__graph_grad_ops[]: the graph derivative of every\n"
                " * op, in the order of yg__ops[] (registry.c); ops without one say why.\n"
                " */\n"
                "#include \"graph_grad/graph_grad.h\"\n\n");
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        char *owned;
        if (!op->valid)
            continue;
        if (why_none(op, symbolic_of(model, symbolic, op), &owned) == NULL)
            gen_sb_printf(&sb, "yg_graph_grad_impl yg__graph_grad_%s;\n", op->cname);
        free(owned);
    }
    gen_sb_puts(&sb, "\nconst yg_graph_grad_op yg__graph_grad_ops[] = {\n");
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        char *owned;
        if (!op->valid)
            continue;
        const char *why = why_none(op, symbolic_of(model, symbolic, op), &owned);
        /* Outputs that never carry a gradient, as in eager mode: an entry
         * without differentiable inputs, or a kernel without an entry (a
         * composite without one is differentiable through its parts). */
        bool any = false;
        for (int k = 0; op->deriv != NULL && k < op->deriv->n_formulas; k++)
            any |= op->deriv->formulas[k].edge >= 0;
        bool no_grad = op->deriv != NULL ? !any : op->kind != GEN_OP_COMPOSITE;
        if (why == NULL)
            gen_sb_printf(&sb, "    {.fn = yg__graph_grad_%s}, /* %s */\n", op->cname,
                          op->full_name);
        else
            gen_sb_printf(&sb, "    {.fn = NULL, .no_grad = %s, .unsupported = \"%s\"}, /* %s */\n",
                          no_grad ? "true" : "false", why, op->full_name);
        free(owned);
        n++;
    }
    gen_sb_puts(&sb, "};\n");
    gen_sb_printf(&sb, "const int32_t yg__graph_grad_ops_count = %d;\n", n);
    gen_sb_printf(&sb,
                  "_Static_assert(sizeof(yg__graph_grad_ops) / sizeof(yg__graph_grad_ops[0]) == %d,\n"
                  "               \"graph_grad table size\");\n",
                  n);
    return gen_sb_take(&sb);
}
