/*
 * emit_nodes.c - writes nodes/<section>.h and nodes/<section>.c: one backward
 * node per entry of specs/derivatives.yaml whose op is in that section.
 *
 * A node struct holds exactly what its formulas read, as inferred from
 * their ASTs (formula_saves.c): saved tensors, only the sizes, numel or dtype
 * of a tensor read through sizes()/numel()/dtype(), and copies of scalar,
 * ScalarType and int[] arguments.  Its apply function unpacks the saved
 * tensors, runs the lowered formula of each input whose edge needs a
 * gradient, and moves the results into grad_inputs only once every formula
 * succeeded, so a failure leaves grad_inputs all NULL as node.h requires.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

/* "POINTWISE_UNARY" for an include guard; static buffer. */
static const char *upper(const char *s)
{
    static char buf[64];
    size_t i = 0;

    for (; s[i] != '\0' && i + 1 < sizeof(buf); i++)
        buf[i] = (char)toupper((unsigned char)s[i]);
    buf[i] = '\0';
    return buf;
}

static const char *value_type(const gen_arg *a)
{
    return gen_type_of(a)->value_ctype;
}

static void emit_field(gen_sb *sb, const gen_deriv *d, const gen_save *s)
{
    switch (s->kind) {
    case GEN_SAVE_TENSOR:
        gen_sb_printf(sb, "    yg_saved_tensor %s;\n", s->field);
        break;
    case GEN_SAVE_SIZES:
        gen_sb_printf(sb, "    yg_saved_sizes %s;\n", s->field);
        break;
    case GEN_SAVE_NUMEL:
        gen_sb_printf(sb, "    int64_t %s;\n", s->field);
        break;
    case GEN_SAVE_DTYPE:
        gen_sb_printf(sb, "    yg_dtype %s;\n", s->field);
        break;
    case GEN_SAVE_DEVICE:
        gen_sb_printf(sb, "    yg_device %s;\n    int32_t %s_index;\n", s->field, s->field);
        break;
    case GEN_SAVE_VALUE:
        /* An optional (int?, float?, Scalar?, ScalarType?) argument: its
         * value and whether it was given. */
        if (d->op->schema.args[s->arg_index].nullable)
            gen_sb_printf(sb, "    bool has_%s;\n", s->field);
        gen_sb_printf(sb, "    %s %s;\n", value_type(&d->op->schema.args[s->arg_index]), s->field);
        break;
    case GEN_SAVE_INT_LIST:
    case GEN_SAVE_LIST_SIZES:
        gen_sb_printf(sb, "    yg_saved_int_list %s;\n", s->field);
        break;
    case GEN_SAVE_TENSOR_LIST:
        gen_sb_printf(sb, "    yg_saved_tensor_list %s;\n", s->field);
        break;
    }
}

char *gen_emit_nodes_h(const gen_model *model, const gen_backward_plan *backward, int section)
{
    gen_sb sb = {0};
    const char *fam = model->sections[section].name;

    gen_emit_marker(&sb, GEN_DERIV_FILE);
    gen_sb_printf(&sb,
                  "/*\n"
                  " * nodes/%s.h - the backward nodes of section %s: for every op\n"
                  " * with an entry in specs/derivatives.yaml, its struct (the saved values\n"
                  " * its formulas read) and its vtable.  The op wrappers of api/%s.c\n"
                  " * fill them in.  Not public API.\n"
                  " */\n"
                  "#ifndef YAGRAD_NODES_%s_H\n#define YAGRAD_NODES_%s_H\n\n"
                  "#include <stdbool.h>\n#include <stdint.h>\n\n"
                  "#include \"autograd/node.h\"\n",
                  fam, fam, fam, upper(fam), upper(fam));
    for (int i = 0; i < model->n_derivs; i++) {
        const gen_deriv *d = &model->derivs[i];
        /* Without edges (output not differentiable) nothing is recorded. */
        if (d->op == NULL || d->n_edges == 0 || d->op->section != section)
            continue;
        gen_sb_puts(&sb, "\n");
        gen_emit_schema_only(&sb, "", d->name_text);
        gen_sb_printf(&sb, "typedef struct %s_backward {\n    yg_node base;\n", d->op->cname);
        for (int j = 0; j < backward[i].n_saves; j++)
            emit_field(&sb, d, &backward[i].saves[j]);
        gen_sb_printf(&sb, "} %s_backward;\n", d->op->cname);
        gen_sb_printf(&sb, "extern const yg_node_vtable yg__%s_backward_vtable;\n", d->op->cname);
    }
    gen_sb_printf(&sb, "\n#endif /* YAGRAD_NODES_%s_H */\n", upper(fam));
    return gen_sb_take(&sb);
}

static bool has_releasable(const gen_backward_plan *bp)
{
    for (int j = 0; j < bp->n_saves; j++)
        if (bp->saves[j].kind == GEN_SAVE_TENSOR || bp->saves[j].kind == GEN_SAVE_INT_LIST ||
            bp->saves[j].kind == GEN_SAVE_TENSOR_LIST || bp->saves[j].kind == GEN_SAVE_LIST_SIZES)
            return true;
    return false;
}

/* The formula text made safe to put inside a C comment. */
static char *comment_text(const char *s)
{
    gen_sb sb = {0};

    for (const char *c = s; *c != '\0'; c++) {
        if (c[0] == '*' && c[1] == '/')
            gen_sb_puts(&sb, "* ");
        else if (*c == '\n')
            gen_sb_puts(&sb, " ");
        else
            gen_sb_putn(&sb, c, 1);
    }
    return gen_sb_take(&sb);
}

static int popcount64(uint64_t x)
{
    int n = 0;

    for (; x != 0; x &= x - 1)
        n++;
    return n;
}

/* "" for output 0, "1", "2"... otherwise: grad, grad1; result, result1.
 * Static buffer. */
static const char *suffix(int i)
{
    static char buf[16];

    if (i == 0)
        return "";
    snprintf(buf, sizeof(buf), "%d", i);
    return buf;
}

/* Multi-output ops: the engine passes NULL for an output whose gradient
 * is undefined.  A formula is linear in the gradients it reads, so when
 * all of them are undefined its gradient is zero and it is skipped (left
 * undefined): " && (grad != NULL || grad1 != NULL)". */
static void emit_defined_check(gen_sb *sb, uint64_t grads_read, int n_returns)
{
    int n = popcount64(grads_read), k = 0;

    if (n == 0)
        return;
    gen_sb_puts(sb, n > 1 ? " && (" : " && ");
    for (int i = 0; i < n_returns; i++) {
        if (!(grads_read & ((uint64_t)1 << i)))
            continue;
        gen_sb_printf(sb, "%sgrad%s != NULL", k++ > 0 ? " || " : "", suffix(i));
    }
    if (n > 1)
        gen_sb_puts(sb, ")");
}

/* ... and when only some are undefined, the undefined ones are zeros of
 * their output's recorded dtype and sizes, made for this formula (the
 * zeros are kept for a later formula that reads them too). */
static void emit_zero_fill(gen_sb *sb, uint64_t grads_read, int n_returns)
{
    for (int i = 0; i < n_returns; i++) {
        if (!(grads_read & ((uint64_t)1 << i)))
            continue;
        const char *sfx = suffix(i);
        gen_sb_printf(sb,
                      "        if (grad%s == NULL) {\n"
                      "            st = yg_tensor_zeros(base->outputs[%d].sizes,\n"
                      "                                 base->outputs[%d].ndim,\n"
                      "                                 base->outputs[%d].dtype,\n"
                      "                                 &zeros_grad%s);\n"
                      "            if (st != YG_OK)\n                goto out;\n"
                      "            grad%s = zeros_grad%s;\n"
                      "        }\n",
                      sfx, i, i, i, sfx, sfx, sfx);
    }
}

/* The comment "input: formula" above a lowered formula, indented 8; a
 * formula too long for one line goes on the next lines, broken after ", "
 * to stay within 100 columns. */
static void emit_formula_comment(gen_sb *sb, const char *input, const char *text)
{
    const size_t width = 100 - 11; /* after "         * " */

    if (strlen(input) + strlen(text) + 16 <= 100) {
        gen_sb_printf(sb, "        /* %s: %s */\n", input, text);
        return;
    }
    gen_sb_printf(sb, "        /* %s:\n", input);
    const char *p = text;
    while (*p != '\0') {
        size_t n = strlen(p);
        if (n + 3 > width) {
            /* The last ", " that keeps the line within width, if any. */
            size_t cut = 0;
            for (size_t i = 0; i + 2 <= width && p[i] != '\0'; i++)
                if (p[i] == ',' && p[i + 1] == ' ')
                    cut = i + 1;
            if (cut > 0)
                n = cut;
        }
        gen_sb_printf(sb, "         * %.*s%s\n", (int)n, p, p[n] == '\0' ? " */" : "");
        p += n;
        while (*p == ' ')
            p++;
    }
}

/* The formula of a key naming several inputs ("self, other: f(...)"),
 * lead is its first name: run when any of their gradients is wanted; the
 * lowered call writes every input's gradient (grad_input_mask tells the
 * callee which are wanted; it may leave the others NULL). */
static void emit_shared(gen_sb *sb, const gen_deriv *d, const gen_backward_plan *bp,
                        const gen_formula *lead)
{
    int n_returns = d->op->schema.n_returns;
    const gen_formula_plan *lp = &bp->formulas[lead - d->formulas];
    bool check_defined = n_returns > 1 && lp->grads_read != 0;
    gen_sb key = {0}, cond = {0};

    for (int k = 0; k < lead->group_size; k++) {
        for (int j = 0; j < d->n_formulas; j++) {
            const gen_formula *m = &d->formulas[j];
            if (m->group != lead->group || m->group_index != k)
                continue;
            gen_sb_printf(&cond, "%syg__node_needs_grad(base, %d)", k > 0 ? " || " : "",
                          m->edge);
            gen_sb_printf(&key, "%s%s", k > 0 ? ", " : "", m->input);
        }
    }
    gen_sb_printf(sb, "    if (%s%s%s", check_defined ? "(" : "", cond.buf,
                  check_defined ? ")" : "");
    if (check_defined)
        emit_defined_check(sb, lp->grads_read, n_returns);
    gen_sb_puts(sb, ") {\n");
    char *ct = comment_text(lead->expr);
    emit_formula_comment(sb, key.buf, ct);
    if (n_returns > 1 && popcount64(lp->grads_read) > 1)
        emit_zero_fill(sb, lp->grads_read, n_returns);
    gen_sb_puts(sb, lp->lowered != NULL ? lp->lowered : "");
    gen_sb_puts(sb, "    }\n");
    free(ct);
    gen_sb_free(&key);
    gen_sb_free(&cond);
}

/* The grads[i] that some formula may need as zeros (it reads several
 * outputs' gradients, and one may be undefined), as a bit mask. */
static uint64_t zero_filled_grads(const gen_deriv *d, const gen_backward_plan *bp)
{
    uint64_t zero_filled = 0;
    for (int j = 0; j < d->n_formulas; j++)
        if (d->formulas[j].edge >= 0 && popcount64(bp->formulas[j].grads_read) > 1)
            zero_filled |= bp->formulas[j].grads_read;
    return zero_filled;
}

/* The apply function's locals: the gradients it reads, the zeros it may
 * fill in, the saved tensors, each input's gradient and the formulas'
 * temporaries. */
static void emit_apply_locals(gen_sb *sb, const gen_deriv *d, const gen_backward_plan *bp,
                              uint64_t zero_filled)
{
    int n_returns = d->op->schema.n_returns;

    for (int i = 0; i < n_returns; i++)
        if (bp->grads_used & ((uint64_t)1 << i))
            gen_sb_printf(sb, "    yg_tensor *%s%s = grads[%d];\n", "grad", suffix(i), i);
    if (bp->grads_used == 0 && !bp->reads_grad_list)
        gen_sb_puts(sb, "    (void)grads;\n");
    /* An op returning Tensor[]: its formulas read the gradients as one
     * list, with zeros for the outputs whose gradient is undefined. */
    if (bp->reads_grad_list)
        gen_sb_puts(sb, "    yg_tensor **grads_defined = NULL;\n");
    for (int i = 0; i < n_returns; i++)
        if (zero_filled & ((uint64_t)1 << i))
            gen_sb_printf(sb, "    yg_tensor *zeros_grad%s = NULL;\n", suffix(i));
    for (int j = 0; j < bp->n_saves; j++)
        if (bp->saves[j].kind == GEN_SAVE_TENSOR)
            gen_sb_printf(sb, "    yg_tensor *%s = NULL;\n", bp->saves[j].field);
        else if (bp->saves[j].kind == GEN_SAVE_TENSOR_LIST)
            gen_sb_printf(sb, "    yg_tensor **%s = NULL;\n", bp->saves[j].field);
    for (int j = 0; j < d->n_formulas; j++)
        if (d->formulas[j].edge >= 0 && d->formulas[j].list)
            gen_sb_printf(sb, "    yg_tensor **%s = NULL;\n    int64_t %s_len = 0;\n",
                          bp->formulas[j].grad_name, bp->formulas[j].grad_name);
        else if (d->formulas[j].edge >= 0)
            gen_sb_printf(sb, "    yg_tensor *%s = NULL;\n", bp->formulas[j].grad_name);
    for (int j = 0; j < bp->n_temps; j++)
        gen_sb_printf(sb, "    yg_tensor *%s = NULL;\n", bp->temps[j]);
    gen_sb_puts(sb, "    yg_status st = YG_OK;\n\n");
}

/* The saved tensors unpacked from the node (a freed one fails). */
static void emit_apply_unpack(gen_sb *sb, const gen_backward_plan *bp)
{
    for (int j = 0; j < bp->n_saves; j++) {
        if (bp->saves[j].kind != GEN_SAVE_TENSOR && bp->saves[j].kind != GEN_SAVE_TENSOR_LIST)
            continue;
        gen_sb_printf(sb,
                      "    st = yg__saved_%s(&node->%s, base, &%s);\n"
                      "    if (st != YG_OK)\n        goto out;\n",
                      bp->saves[j].kind == GEN_SAVE_TENSOR ? "unpack" : "list_unpack",
                      bp->saves[j].field, bp->saves[j].field);
    }
    if (bp->reads_grad_list)
        gen_sb_puts(sb,
                    "    st = yg__node_defined_grads(base, grads, &grads_defined);\n"
                    "    if (st != YG_OK)\n        goto out;\n");
}

/* Each formula under the condition that its input needs a gradient (and,
 * for several outputs, that a gradient it reads is defined). */
static void emit_apply_formulas(gen_sb *sb, const gen_deriv *d, const gen_backward_plan *bp)
{
    int n_returns = d->op->schema.n_returns;

    for (int j = 0; j < d->n_formulas; j++) {
        const gen_formula *f = &d->formulas[j];
        const gen_formula_plan *fp = &bp->formulas[j];
        if (f->edge < 0)
            continue;
        if (f->expr != NULL && f->group_size > 1) {
            /* A key naming several inputs: one call at its first name. */
            if (f->group_index == 0)
                emit_shared(sb, d, bp, f);
            continue;
        }
        char *needs = gen_needs_grad(d, f->edge);
        if (f->not_implemented) {
            gen_sb_printf(sb,
                          "    if (%s) {\n"
                          "        /* %s: not_implemented */\n"
                          "        st = yg__fail(YG_ERR_NOT_IMPLEMENTED,\n"
                          "                      \"the gradient of %s is not implemented: %s\");\n"
                          "        goto out;\n    }\n",
                          needs, f->input, f->input, f->reason);
            free(needs);
            continue;
        }
        char *ct = comment_text(f->expr);
        gen_sb_printf(sb, "    if (%s", needs);
        free(needs);
        if (n_returns > 1)
            emit_defined_check(sb, fp->grads_read, n_returns);
        gen_sb_puts(sb, ") {\n");
        emit_formula_comment(sb, f->input, ct);
        if (n_returns > 1 && popcount64(fp->grads_read) > 1)
            emit_zero_fill(sb, fp->grads_read, n_returns);
        gen_sb_puts(sb, fp->lowered != NULL ? fp->lowered : "");
        if (f->list) {
            /* the items' edges: from f->edge to the last */
            char *n_items = f->edge == 0 ? gen_xstrdup("base->n_edges")
                                         : gen_xprintf("(base->n_edges - %d)", f->edge);
            gen_sb_printf(sb,
                          "        if (%s_len != %s) {\n"
                          "            st = yg__fail(YG_ERR_INTERNAL,\n"
                          "                          \"the gradient of %s has %%lld items \"\n"
                          "                          \"for %%lld tensors\",\n"
                          "                          (long long)%s_len,\n"
                          "                          (long long)%s);\n"
                          "            goto out;\n        }\n",
                          fp->grad_name, n_items, f->input, fp->grad_name, n_items);
            free(n_items);
        }
        gen_sb_puts(sb, "    }\n");
        free(ct);
    }
}

/* Once every formula succeeded: the gradients handed to grad_inputs. */
static void emit_apply_handover(gen_sb *sb, const gen_deriv *d, const gen_backward_plan *bp)
{
    gen_sb_puts(sb, "    /* Every formula succeeded: hand the gradients over. */\n");
    for (int j = 0; j < d->n_formulas; j++) {
        const gen_formula *f = &d->formulas[j];
        const char *grad = bp->formulas[j].grad_name;
        if (f->edge < 0)
            continue;
        if (f->list) {
            /* one per item (a NULL item: no gradient) */
            char *at = f->edge == 0 ? gen_xstrdup("i") : gen_xprintf("%d + i", f->edge);
            gen_sb_printf(sb,
                          "    for (int64_t i = 0; i < %s_len; i++) {\n"
                          "        grad_inputs[%s] = %s[i];\n"
                          "        %s[i] = NULL;\n    }\n",
                          grad, at, grad, grad);
            free(at);
            continue;
        }
        gen_sb_printf(sb, "    grad_inputs[%d] = %s;\n    %s = NULL;\n", f->edge, grad, grad);
    }
}

/* "out:" (only when something jumps to it) and the releases, in reverse
 * order of the locals. */
static void emit_apply_releases(gen_sb *sb, const gen_deriv *d, const gen_backward_plan *bp,
                                uint64_t zero_filled)
{
    int n_returns = d->op->schema.n_returns;

    /* The label exists only when something jumps to it. */
    bool jumps = false;
    for (int j = 0; j < bp->n_saves; j++)
        jumps |= bp->saves[j].kind == GEN_SAVE_TENSOR || bp->saves[j].kind == GEN_SAVE_TENSOR_LIST;
    jumps |= zero_filled != 0 || bp->reads_grad_list;
    for (int j = 0; j < d->n_formulas; j++)
        jumps |= d->formulas[j].not_implemented ||
                 (bp->formulas[j].lowered != NULL &&
                  strstr(bp->formulas[j].lowered, "goto out") != NULL);
    if (jumps)
        gen_sb_puts(sb, "out:\n");
    for (int j = bp->n_temps - 1; j >= 0; j--)
        gen_sb_printf(sb, "    yg_release(%s);\n", bp->temps[j]);
    for (int i = n_returns - 1; i >= 0; i--)
        if (zero_filled & ((uint64_t)1 << i))
            gen_sb_printf(sb, "    yg_release(zeros_grad%s);\n", suffix(i));
    for (int j = d->n_formulas - 1; j >= 0; j--)
        if (d->formulas[j].edge >= 0 && d->formulas[j].list)
            gen_sb_printf(sb, "    yg_release_list(%s, %s_len);\n", bp->formulas[j].grad_name,
                          bp->formulas[j].grad_name);
        else if (d->formulas[j].edge >= 0)
            gen_sb_printf(sb, "    yg_release(%s);\n", bp->formulas[j].grad_name);
    for (int j = bp->n_saves - 1; j >= 0; j--)
        if (bp->saves[j].kind == GEN_SAVE_TENSOR)
            gen_sb_printf(sb, "    yg_release(%s);\n", bp->saves[j].field);
        else if (bp->saves[j].kind == GEN_SAVE_TENSOR_LIST)
            gen_sb_printf(sb, "    yg_release_list(%s, node->%s.len);\n", bp->saves[j].field,
                          bp->saves[j].field);
    if (bp->reads_grad_list)
        gen_sb_puts(sb, "    yg_release_list(grads_defined, base->n_outputs);\n");
}

static void emit_apply(gen_sb *sb, const gen_deriv *d, const gen_backward_plan *bp)
{
    const char *cn = d->op->cname;
    char *display = gen_node_display_name(cn);

    gen_emit_schema_only(sb, "", d->name_text);
    gen_sb_printf(sb,
                  "static yg_status %s_backward_apply(yg_node *base,\n"
                  "%*syg_tensor *const *grads,\n"
                  "%*syg_tensor **grad_inputs)\n{\n",
                  cn, (int)strlen(cn) + 33, "", (int)strlen(cn) + 33, "");
    if (bp->n_saves > 0)
        gen_sb_printf(sb, "    %s_backward *node = (%s_backward *)base;\n", cn, cn);
    uint64_t zero_filled = zero_filled_grads(d, bp);
    emit_apply_locals(sb, d, bp, zero_filled);
    emit_apply_unpack(sb, bp);
    emit_apply_formulas(sb, d, bp);
    emit_apply_handover(sb, d, bp);
    emit_apply_releases(sb, d, bp, zero_filled);
    gen_sb_printf(sb,
                  "    if (st != YG_OK)\n        return yg__fail_prefix(st, \"%s\");\n"
                  "    return YG_OK;\n}\n\n",
                  display);
    free(display);
}

static void emit_release_saved(gen_sb *sb, const gen_deriv *d, const gen_backward_plan *bp)
{
    const char *cn = d->op->cname;

    gen_sb_printf(sb, "static void %s_backward_release_saved(yg_node *base)\n{\n", cn);
    gen_sb_printf(sb, "    %s_backward *node = (%s_backward *)base;\n\n", cn, cn);
    for (int j = 0; j < bp->n_saves; j++) {
        if (bp->saves[j].kind == GEN_SAVE_TENSOR)
            gen_sb_printf(sb, "    yg__saved_release(&node->%s);\n", bp->saves[j].field);
        else if (bp->saves[j].kind == GEN_SAVE_INT_LIST ||
                 bp->saves[j].kind == GEN_SAVE_LIST_SIZES)
            gen_sb_printf(sb, "    yg__saved_int_list_release(&node->%s);\n", bp->saves[j].field);
        else if (bp->saves[j].kind == GEN_SAVE_TENSOR_LIST)
            gen_sb_printf(sb, "    yg__saved_list_release(&node->%s);\n", bp->saves[j].field);
    }
    gen_sb_puts(sb, "}\n\n");
}

char *gen_emit_nodes_c(const gen_model *model, const gen_backward_plan *backward, int section)
{
    gen_sb sb = {0};
    const char *fam = model->sections[section].name;

    gen_emit_marker(&sb, GEN_DERIV_FILE);
    gen_sb_printf(&sb,
                "/*\n"
                " * nodes/%s.c - apply and release_saved of the backward nodes of\n"
                " * section %s, from the formulas of specs/derivatives.yaml lowered\n"
                " * to straight-line C.\n"
                " *\n"
                " * Each apply computes only the gradients whose edges are wanted, keeps\n"
                " * every intermediate in a named temporary released at out:, and moves its\n"
                " * results into grad_inputs only after all formulas succeeded, so that on\n"
                " * failure grad_inputs stays all NULL.  Errors are prefixed with the node's\n"
                " * name (\"MulBackward: mul: ...\").\n"
                " */\n"
                "#include \"nodes/%s.h\"\n\n"
                "#include \"autograd/node.h\"\n"
                "#include \"core/core.h\"\n"
                GEN_OPS_INCLUDES,
                fam, fam, fam);
    for (int i = 0; i < model->n_derivs; i++) {
        const gen_deriv *d = &model->derivs[i];
        /* Without edges (output not differentiable) nothing is recorded. */
        if (d->op == NULL || d->n_edges == 0 || d->op->section != section)
            continue;
        gen_sb_puts(&sb, "\n");
        emit_apply(&sb, d, &backward[i]);
        if (has_releasable(&backward[i]))
            emit_release_saved(&sb, d, &backward[i]);
        char *display = gen_node_display_name(d->op->cname);
        gen_sb_printf(&sb, "const yg_node_vtable yg__%s_backward_vtable = {\n", d->op->cname);
        gen_sb_printf(&sb, "    .name = \"%s\",\n", display);
        gen_sb_printf(&sb, "    .apply = %s_backward_apply,\n", d->op->cname);
        if (has_releasable(&backward[i]))
            gen_sb_printf(&sb, "    .release_saved = %s_backward_release_saved,\n", d->op->cname);
        else
            gen_sb_puts(&sb, "    .release_saved = NULL, /* nothing to release */\n");
        gen_sb_puts(&sb, "};\n");
        free(display);
    }
    return gen_take_with_ops_includes(model, -1, &sb);
}
