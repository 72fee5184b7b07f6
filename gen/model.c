/*
 * model.c - resolves the loaded specs into a consistent model: parses each
 * signature, derives C names ("sum.dim" -> sum_dim, "add_" -> add_), decides
 * each op's kind, links derivative entries to their ops and numbers edges.
 *
 * Edge i of a backward node is the i-th Tensor argument (in signature
 * order) that has a formula; non_differentiable inputs get no edge.  The
 * checks here are the ones that need both files; each reports a located
 * error and marks the entry invalid so later stages skip it instead of
 * emitting code from a half-understood spec.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

/* C name without yg_: base name without a trailing '_', then _overload in
 * lowercase, then '_' again for in-place ops. */
static char *make_cname(const gen_schema *s)
{
    gen_sb sb = {0};
    size_t n = strlen(s->name);
    bool inplace = n > 1 && s->name[n - 1] == '_';

    gen_sb_putn(&sb, s->name, inplace ? n - 1 : n);
    if (s->overload != NULL) {
        gen_sb_puts(&sb, "_");
        for (const char *c = s->overload; *c != '\0'; c++) {
            char lc = (char)tolower((unsigned char)*c);
            gen_sb_putn(&sb, &lc, 1);
        }
    }
    if (inplace)
        gen_sb_puts(&sb, "_");
    return gen_sb_take(&sb);
}

static bool op_is_inplace(const gen_op *op)
{
    size_t n = strlen(op->schema.name);
    return n > 1 && op->schema.name[n - 1] == '_';
}

static const char *const reserved_cnames[] = {"sizes", "numel", "size", "dim"};

static void check_pointwise(gen_op *op)
{
    int n_tensors = 0;

    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (a->type == GEN_T_TENSOR && !a->nullable) {
            n_tensors++;
            continue;
        }
        if (a->type == GEN_T_SCALAR || a->type == GEN_T_FLOAT)
            continue;
        gen_error(op->func_loc,
                  "pointwise op '%s': argument '%s' has type %s; pointwise ops take only "
                  "Tensor, Scalar and float arguments",
                  op->full_name, a->name, gen_type_name(a));
        op->valid = false;
    }
    if (n_tensors == 0 || n_tensors > 4) {
        gen_error(op->func_loc, "pointwise op '%s' must take 1 to 4 Tensor arguments, not %d",
                  op->full_name, n_tensors);
        op->valid = false;
    }
    if (op->schema.n_returns != 1) {
        gen_error(op->func_loc, "pointwise op '%s' must return one Tensor", op->full_name);
        op->valid = false;
    }
    if (op_is_inplace(op) && op->schema.n_args > 0 &&
        !(op->schema.args[0].type == GEN_T_TENSOR && op->schema.args[0].mutable_)) {
        gen_error(op->func_loc, "in-place op '%s' must take Tensor(a!) as its first argument",
                  op->full_name);
        op->valid = false;
    }
}

static void resolve_op(gen_model *model, int index)
{
    gen_op *op = &model->ops[index];

    if (!gen_schema_parse(op->func, op->func_loc, &op->schema))
        return;
    op->valid = true;
    op->full_name = op->schema.overload != NULL
                        ? gen_xprintf("%s.%s", op->schema.name, op->schema.overload)
                        : gen_xstrdup(op->schema.name);
    op->cname = make_cname(&op->schema);
    op->display = gen_xstrdup(op->schema.name);
    for (size_t i = 0; i < sizeof(reserved_cnames) / sizeof(reserved_cnames[0]); i++) {
        if (strcmp(op->cname, reserved_cnames[i]) == 0) {
            gen_error(op->func_loc, "op name '%s' is reserved for the formula helper %s()",
                      op->cname, op->cname);
            op->valid = false;
        }
    }
    for (int j = 0; j < index; j++) {
        const gen_op *other = &model->ops[j];
        if (other->cname != NULL && strcmp(other->cname, op->cname) == 0) {
            gen_error(op->func_loc, "op '%s' has the C name yg_%s of the op on line %d",
                      op->full_name, op->cname, other->loc.line);
            op->valid = false;
        }
    }
    if (op->pointwise != NULL && (op->cpu_kernel != NULL || op->cuda_kernel != NULL)) {
        gen_error(op->pointwise_loc, "op '%s' has both 'pointwise' and 'dispatch'",
                  op->full_name);
        op->valid = false;
    }
    bool has_tensor = false;
    for (int i = 0; i < op->schema.n_args; i++)
        has_tensor |= op->schema.args[i].type == GEN_T_TENSOR && !op->schema.args[i].nullable;
    if (op->pointwise != NULL) {
        op->kind = GEN_OP_POINTWISE;
        check_pointwise(op);
    } else if (op->cpu_kernel != NULL || op->cuda_kernel != NULL) {
        op->kind = GEN_OP_KERNEL;
        if (!has_tensor) {
            gen_error(op->func_loc,
                      "op '%s' dispatches by device and needs a non-nullable Tensor argument",
                      op->full_name);
            op->valid = false;
        }
    } else {
        op->kind = GEN_OP_COMPOSITE;
    }
}

static gen_op *find_op_by_func(gen_model *model, const char *func)
{
    for (int i = 0; i < model->n_ops; i++)
        if (strcmp(model->ops[i].func, func) == 0)
            return &model->ops[i];
    return NULL;
}

/* The op whose full name matches the one in text, for "did you mean". */
static gen_op *find_op_by_prefix(gen_model *model, const char *text)
{
    size_t n = strcspn(text, "(");

    while (n > 0 && text[n - 1] == ' ')
        n--;
    for (int i = 0; i < model->n_ops; i++) {
        const char *fn = model->ops[i].full_name;
        if (fn != NULL && strlen(fn) == n && strncmp(fn, text, n) == 0)
            return &model->ops[i];
    }
    return NULL;
}

static bool resolve_formulas(gen_deriv *d)
{
    gen_op *op = d->op;
    bool ok = true;

    for (int i = 0; i < d->n_formulas; i++) {
        gen_formula *f = &d->formulas[i];
        for (int j = 0; j < op->schema.n_args; j++)
            if (strcmp(op->schema.args[j].name, f->input) == 0)
                f->arg_index = j;
        if (f->arg_index < 0) {
            gen_error(f->key_loc,
                      "unknown key '%s': '%s' has no argument of that name (keys are 'name' "
                      "and Tensor argument names)",
                      f->input, op->full_name);
            ok = false;
        } else if (op->schema.args[f->arg_index].type != GEN_T_TENSOR) {
            gen_error(f->key_loc, "argument '%s' of '%s' is a %s, not a Tensor; only Tensor "
                      "arguments have gradients",
                      f->input, op->full_name, gen_type_name(&op->schema.args[f->arg_index]));
            ok = false;
        }
    }
    for (int j = 0; j < op->schema.n_args; j++) {
        const gen_arg *a = &op->schema.args[j];
        if (strcmp(a->name, "grad") == 0 || strcmp(a->name, "result") == 0) {
            gen_error(d->name_loc, "argument '%s' of '%s' clashes with the formula variable '%s'",
                      a->name, op->full_name, a->name);
            ok = false;
        }
        if (a->type != GEN_T_TENSOR)
            continue;
        bool found = false;
        for (int i = 0; i < d->n_formulas; i++)
            found |= d->formulas[i].arg_index == j;
        if (!found) {
            gen_error(d->name_loc,
                      "no formula for Tensor argument '%s' of '%s' (write '%s: "
                      "non_differentiable' if it has no gradient)",
                      a->name, op->full_name, a->name);
            ok = false;
        }
    }
    if (!ok)
        return false;
    /* Signature order, so edge numbers follow the arguments. */
    gen_formula *sorted = gen_xcalloc((size_t)d->n_formulas, sizeof(gen_formula));
    int n = 0;
    d->n_edges = 0;
    for (int j = 0; j < op->schema.n_args; j++) {
        for (int i = 0; i < d->n_formulas; i++) {
            if (d->formulas[i].arg_index != j)
                continue;
            sorted[n] = d->formulas[i];
            sorted[n].edge = sorted[n].expr != NULL ? d->n_edges++ : -1;
            n++;
        }
    }
    free(d->formulas);
    d->formulas = sorted;
    if (d->n_edges > 64) {
        gen_error(d->name_loc, "'%s' has more than 64 differentiable inputs", op->full_name);
        return false;
    }
    return true;
}

static void resolve_deriv(gen_model *model, int index)
{
    gen_deriv *d = &model->derivs[index];

    if (d->name_text == NULL)
        return;
    gen_op *op = find_op_by_func(model, d->name_text);
    if (op == NULL) {
        gen_op *near = find_op_by_prefix(model, d->name_text);
        if (near != NULL)
            gen_error(d->name_loc,
                      "'name' must repeat the op's func exactly; did you mean '%s' "
                      "(" GEN_NATIVE_FILE ":%d)?",
                      near->func, near->loc.line);
        else
            gen_error(d->name_loc, "no op in " GEN_NATIVE_FILE " has the signature '%s'",
                      d->name_text);
        return;
    }
    if (!op->valid)
        return;
    if (op->deriv != NULL) {
        gen_error(d->name_loc, "second derivative entry for '%s' (the first is on line %d)",
                  op->full_name, op->deriv->loc.line);
        return;
    }
    if (op->schema.n_returns != 1 || op_is_inplace(op) || op->kind == GEN_OP_COMPOSITE) {
        gen_error(d->name_loc,
                  "'%s': derivatives of %s are not supported yet", op->full_name,
                  op->schema.n_returns != 1 ? "ops with several returns"
                  : op_is_inplace(op)       ? "in-place ops"
                                            : "composite ops (autograd already flows through "
                                              "their parts)");
        return;
    }
    d->op = op;
    if (resolve_formulas(d))
        op->deriv = d;
    else
        d->op = NULL;
}

void gen_model_resolve(gen_model *model)
{
    for (int i = 0; i < model->n_ops; i++)
        resolve_op(model, i);
    for (int i = 0; i < model->n_derivs; i++)
        resolve_deriv(model, i);
}

gen_op *gen_model_find_cname(const gen_model *model, const char *cname)
{
    for (int i = 0; i < model->n_ops; i++)
        if (model->ops[i].valid && strcmp(model->ops[i].cname, cname) == 0)
            return &model->ops[i];
    return NULL;
}

void gen_model_free_op(gen_op *op)
{
    free(op->func);
    gen_schema_free(&op->schema);
    free(op->full_name);
    free(op->cname);
    free(op->display);
    free(op->pointwise);
    free(op->cpu_kernel);
    free(op->cuda_kernel);
    for (int i = 0; i < op->n_tags; i++)
        free(op->tags[i]);
    free(op->tags);
    free(op->onnx);
    memset(op, 0, sizeof(*op));
}

static void free_deriv(gen_deriv *d)
{
    free(d->name_text);
    for (int i = 0; i < d->n_formulas; i++) {
        free(d->formulas[i].input);
        free(d->formulas[i].expr);
        free(d->formulas[i].lowered);
        free(d->formulas[i].grad_name);
    }
    free(d->formulas);
    for (int i = 0; i < d->n_saves; i++) {
        free(d->saves[i].field);
        free(d->saves[i].arg);
    }
    free(d->saves);
    for (int i = 0; i < d->n_temps; i++)
        free(d->temps[i]);
    free(d->temps);
}

void gen_model_free(gen_model *model)
{
    for (int i = 0; i < model->n_ops; i++)
        gen_model_free_op(&model->ops[i]);
    free(model->ops);
    for (int i = 0; i < model->n_derivs; i++)
        free_deriv(&model->derivs[i]);
    free(model->derivs);
    memset(model, 0, sizeof(*model));
}
