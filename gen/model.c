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

static const char *const reserved_cnames[] = {"sizes", "numel", "size", "dim", "list_sizes"};

/* The YAML location of byte offset pos of op's func string. */
static gen_loc func_at(const gen_op *op, int pos)
{
    gen_loc loc = op->func_loc;

    loc.col += pos;
    return loc;
}

static void check_pointwise(gen_op *op)
{
    int n_tensors = 0;

    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (gen_arg_is_tensor(a) && !a->nullable) {
            n_tensors++;
            continue;
        }
        if ((a->type == GEN_T_SCALAR || a->type == GEN_T_FLOAT) && !a->nullable)
            continue;
        gen_error_in(op->full_name, func_at(op, a->pos),
                     "argument '%s' has type %s; pointwise ops take only Tensor, Scalar and "
                     "float arguments",
                     a->name, gen_type_name(a));
        op->valid = false;
    }
    if (n_tensors == 0 || n_tensors > 4) {
        gen_error_in(op->full_name, op->func_loc,
                     "a pointwise op must take 1 to 4 Tensor arguments, not %d", n_tensors);
        op->valid = false;
    }
    if (op->schema.n_returns != 1 || op->schema.returns[0].is_list) {
        gen_error_in(op->full_name, func_at(op, op->schema.returns_pos),
                     "a pointwise op must return one Tensor");
        op->valid = false;
    }
}

/* pointwise_int and int_divisor: an integer expression belongs to a
 * pointwise op, and the divisor is one of its Tensor or Scalar arguments
 * (formula_unit.c checks the expression itself). */
static void check_pointwise_int(gen_op *op)
{
    op->int_divisor_arg = -1;
    if (op->pointwise_int != NULL && op->pointwise == NULL) {
        gen_error_in(op->full_name, op->pointwise_int_loc,
                     "'pointwise_int' gives the integer loops of a pointwise op, and this op "
                     "has no 'pointwise' expression");
        op->valid = false;
    }
    if (op->int_divisor == NULL)
        return;
    if (op->pointwise_int == NULL) {
        gen_error_in(op->full_name, op->int_divisor_loc,
                     "'int_divisor' names the divisor of the 'pointwise_int' expression, and "
                     "this op has none");
        op->valid = false;
        return;
    }
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (strcmp(a->name, op->int_divisor) == 0 &&
            (gen_arg_is_tensor(a) || a->type == GEN_T_SCALAR)) {
            op->int_divisor_arg = i;
            return;
        }
    }
    gen_sb names = {0};
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (gen_arg_is_tensor(a) || a->type == GEN_T_SCALAR)
            gen_sb_printf(&names, "%s'%s'", names.len > 0 ? ", " : "", a->name);
    }
    gen_error_in(op->full_name, op->int_divisor_loc,
                 "int_divisor '%s' is not a Tensor or Scalar argument of %s (those are: %s)",
                 op->int_divisor, op->full_name, names.len > 0 ? names.buf : "none");
    free(names.buf);
    op->valid = false;
}

/* The argument whose alias annotation is alias, or NULL. */
static const gen_arg *alias_arg(const gen_op *op, const char *alias)
{
    for (int i = 0; i < op->schema.n_args; i++)
        if (op->schema.args[i].alias != NULL && strcmp(op->schema.args[i].alias, alias) == 0)
            return &op->schema.args[i];
    return NULL;
}

/* Derives the op's form from its alias annotations and checks it against
 * the naming rules: an in-place op ends in '_', takes Tensor(a!) self
 * first and returns it; an out variant writes keyword-only arguments; a
 * view returns Tensor(a) of a Tensor(a) argument. */
static void check_form(gen_op *op)
{
    const gen_schema *s = &op->schema;
    const gen_arg *written = NULL;
    bool returns_view = false;
    bool alias_error = false;

    for (int i = 0; i < s->n_args; i++) {
        const gen_arg *a = &s->args[i];
        for (int j = 0; j < i && a->alias != NULL; j++) {
            if (s->args[j].alias != NULL && strcmp(s->args[j].alias, a->alias) == 0) {
                gen_error_in(op->full_name, func_at(op, a->pos),
                             "alias '%s' of argument '%s' is already used by argument '%s'",
                             a->alias, a->name, s->args[j].name);
                op->valid = false;
            }
        }
        /* Tensor(a!)? is state a functional op may update (running
         * statistics); it makes the op neither in-place nor an out variant. */
        if (a->mutable_ && !gen_arg_is_state(a) && written == NULL)
            written = a;
    }
    for (int i = 0; i < s->n_returns; i++) {
        const gen_return *r = &s->returns[i];
        if (r->alias == NULL)
            continue;
        const gen_arg *a = alias_arg(op, r->alias);
        if (a == NULL) {
            gen_error_in(op->full_name, func_at(op, r->pos),
                         "return alias '%s' matches no argument (annotate the argument it "
                         "aliases as Tensor(%s) or Tensor(%s!))",
                         r->alias, r->alias, r->alias);
            op->valid = false;
        } else if (gen_arg_is_state(a)) {
            gen_error_in(op->full_name, func_at(op, r->pos),
                         "returns its argument '%s', but a Tensor(%s!)? argument is optional "
                         "state the op updates in place and cannot be returned",
                         a->name, a->alias);
            op->valid = false;
            alias_error = true;
        } else if (a->mutable_ != r->mutable_) {
            gen_error_in(op->full_name, func_at(op, r->pos),
                         "the return is annotated (%s%s) but argument '%s' is (%s%s); both "
                         "must agree",
                         r->alias, r->mutable_ ? "!" : "", a->name, a->alias,
                         a->mutable_ ? "!" : "");
            op->valid = false;
            alias_error = true;
        } else if (!r->mutable_) {
            returns_view = true;
        }
    }
    if (op_is_inplace(op)) {
        op->form = GEN_FORM_INPLACE;
        if (s->n_args == 0 || !s->args[0].mutable_ || !gen_arg_is_tensor(&s->args[0]) ||
            s->args[0].nullable) {
            gen_error_in(op->full_name, s->n_args > 0 ? func_at(op, s->args[0].pos) : op->func_loc,
                         "an in-place op (its name ends in '_') must take its first argument "
                         "as Tensor(a!) self");
            op->valid = false;
        } else if (!alias_error &&
                   (s->n_returns != 1 || s->returns[0].alias == NULL ||
                    strcmp(s->returns[0].alias, s->args[0].alias) != 0 ||
                    !s->returns[0].mutable_)) {
            gen_error_in(op->full_name, func_at(op, s->returns_pos),
                         "an in-place op must return its first argument: '-> Tensor(%s!)'",
                         s->args[0].alias);
            op->valid = false;
        }
    } else if (written != NULL) {
        op->form = GEN_FORM_OUT;
        if (!written->kwarg_only) {
            gen_error_in(op->full_name, func_at(op, written->pos),
                         "writes its argument '%s' (Tensor(%s!)) but is not in-place: name "
                         "it '%s_' to modify '%s' in place, or make '%s' keyword-only (after "
                         "'*') for an out variant",
                         written->name, written->alias, s->name, written->name,
                      written->name);
            op->valid = false;
        }
    } else if (returns_view) {
        op->form = GEN_FORM_VIEW;
    } else {
        op->form = GEN_FORM_FUNCTIONAL;
    }
}

/* The runtime's dtypes an op may claim (yg_dtype in tensor.h); bit i of
 * gen_op.dtypes is row i.  Adding a runtime dtype is one row here. */
const gen_dtype gen_dtypes[] = {
    {"float32", "YG_FLOAT32"},
    {"float64", "YG_FLOAT64"},
    {"int64", "YG_INT64"},
    {"bool", "YG_BOOL"},
    {"int32", "YG_INT32"},
    {"float16", "YG_FLOAT16"},
    {"bfloat16", "YG_BFLOAT16"},
};
const int gen_n_dtypes = (int)(sizeof(gen_dtypes) / sizeof(gen_dtypes[0]));
_Static_assert(sizeof(gen_dtypes) / sizeof(gen_dtypes[0]) <= 32, "gen_op.dtypes is 32 bits");

int gen_dtype_lookup(const char *name)
{
    for (int i = 0; i < gen_n_dtypes; i++)
        if (strcmp(gen_dtypes[i].name, name) == 0)
            return i;
    return -1;
}

char *gen_dtype_choices(void)
{
    gen_sb sb = {0};

    for (int i = 0; i < gen_n_dtypes; i++)
        gen_sb_printf(&sb, "%s%s", i == 0 ? "" : i == gen_n_dtypes - 1 ? " or " : ", ",
                      gen_dtypes[i].name);
    return gen_sb_take(&sb);
}

static uint32_t dtype_bit(const char *name)
{
    return UINT32_C(1) << gen_dtype_lookup(name);
}

void gen_resolve_dtypes(gen_model *model, const gen_pointwise_plan *pointwise)
{
    for (int i = 0; i < model->n_ops; i++) {
        gen_op *op = &model->ops[i];
        if (!op->valid)
            continue;
        uint32_t loops =
            op->kind == GEN_OP_POINTWISE ? gen_pointwise_loop_dtypes(op, &pointwise[i]) : 0;
        if (!op->dtypes_given) {
            /* Default: what a pointwise op has loops for; every dtype for a
             * view (it moves no data); the floating dtypes otherwise. */
            if (op->kind == GEN_OP_POINTWISE)
                op->dtypes = loops;
            else if (op->form == GEN_FORM_VIEW)
                op->dtypes = (UINT32_C(1) << gen_n_dtypes) - 1;
            else
                op->dtypes = dtype_bit("float32") | dtype_bit("float64");
            continue;
        }
        if (op->dtypes == 0) {
            gen_error_in(op->full_name, op->dtypes_loc,
                         "'dtypes' is empty; an op claims at least one dtype");
            continue;
        }
        if (op->kind != GEN_OP_POINTWISE)
            continue;
        /* float16 and bfloat16 compute through the float32 loop (the
         * iterator converts and rounds once; meta/pointwise.h), so an op
         * that claims float32 may claim them. */
        if (loops & op->dtypes & dtype_bit("float32"))
            loops |= dtype_bit("float16") | dtype_bit("bfloat16");
        for (int d = 0; d < gen_n_dtypes; d++) {
            if ((op->dtypes & ~loops) & (UINT32_C(1) << d))
                gen_error_in(op->full_name, op->dtype_locs[d],
                             "claims dtype '%s' but gen writes no %s loop for this pointwise "
                             "expression (int64 loops need an expression without calls and "
                             "'/', or a 'pointwise_int' expression); drop it from 'dtypes'",
                             gen_dtypes[d].name, gen_dtypes[d].name);
        }
    }
}

static const char *const known_tags[] = {"pointwise", "broadcast", "reduction", "view", "opaque"};

static void check_tags(gen_op *op)
{
    for (int i = 0; i < op->n_tags; i++) {
        bool known = false;
        for (size_t k = 0; k < sizeof(known_tags) / sizeof(known_tags[0]); k++)
            known |= strcmp(op->tags[i], known_tags[k]) == 0;
        if (!known) {
            gen_error_in(op->full_name, op->tag_locs[i],
                         "unknown tag '%s' (expected pointwise, broadcast, reduction, view or "
                         "opaque)",
                         op->tags[i]);
        } else if (strcmp(op->tags[i], "view") == 0 && op->form != GEN_FORM_VIEW) {
            gen_error_in(op->full_name, op->tag_locs[i],
                         "tagged 'view' but returns no view (a view returns Tensor(a) of a "
                         "Tensor(a) argument)");
        }
        for (int j = 0; j < i; j++)
            if (strcmp(op->tags[i], op->tags[j]) == 0)
                gen_error_in(op->full_name, op->tag_locs[i], "tag '%s' is given twice",
                             op->tags[i]);
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
            gen_error_in(op->full_name, op->func_loc,
                         "the name '%s' is reserved for the formula helper %s()", op->cname,
                         op->cname);
            op->valid = false;
        }
    }
    for (int j = 0; j < index; j++) {
        const gen_op *other = &model->ops[j];
        if (other->full_name != NULL && strcmp(other->full_name, op->full_name) == 0) {
            gen_error_in(op->full_name, op->func_loc,
                         "duplicate op (first declared on line %d); give one of them another "
                         "overload name",
                         other->loc.line);
            op->valid = false;
            break;
        }
        if (other->cname != NULL && strcmp(other->cname, op->cname) == 0) {
            gen_error_in(op->full_name, op->func_loc,
                         "its C name yg_%s is that of '%s' on line %d; rename one of them",
                         op->cname, other->full_name, other->loc.line);
            op->valid = false;
            break;
        }
    }
    check_form(op);
    if (op->pointwise != NULL && (op->cpu_kernel != NULL || op->cuda_kernel != NULL)) {
        gen_error_in(op->full_name, op->pointwise_loc,
                     "has both 'pointwise' and 'dispatch'; keep one");
        op->valid = false;
    }
    bool has_tensor = false;
    for (int i = 0; i < op->schema.n_args; i++)
        has_tensor |= ((gen_arg_is_input(&op->schema.args[i])) &&
                       !op->schema.args[i].nullable) ||
                      gen_arg_is_device(&op->schema.args[i]);
    check_pointwise_int(op);
    if (op->pointwise != NULL) {
        op->kind = GEN_OP_POINTWISE;
        check_pointwise(op);
    } else if (op->cpu_kernel != NULL || op->cuda_kernel != NULL) {
        op->kind = GEN_OP_KERNEL;
        if (!has_tensor) {
            gen_error_in(op->full_name, op->func_loc,
                         "a kernel op dispatches on the device of a Tensor or Tensor[] argument "
                         "or on a Device argument, and has none");
            op->valid = false;
        }
    } else {
        op->kind = GEN_OP_COMPOSITE;
    }
    if (op->structured && op->kind != GEN_OP_KERNEL) {
        gen_error_in(op->full_name, op->structured_loc,
                     "is structured but has no 'dispatch' kernels: a structured op's meta "
                     "function checks and allocates, its kernels fill the result");
        op->valid = false;
    } else if (op->structured &&
               (op->form != GEN_FORM_FUNCTIONAL || op->schema.n_returns < 1 ||
                op->schema.returns[0].is_list)) {
        gen_error_in(op->full_name, op->structured_loc,
                     "is structured but does not return new Tensors (in-place, out=, view and "
                     "list results are not structured yet)");
        op->valid = false;
    }
    check_tags(op);
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

/* The check of d's output_differentiability against the op's returns;
 * then every output has an entry (true when the key is not given), and
 * *nondiff_output says whether none of them is differentiable.  False
 * (reported) on a wrong count. */
static bool resolve_output_diff(gen_deriv *d, bool *nondiff_output)
{
    const gen_op *op = d->op;

    if (d->has_output_diff && d->n_output_diff != op->schema.n_returns) {
        gen_error_in(op->full_name, d->output_diff_loc,
                     "'output_differentiability' has %d entries but the op returns %d",
                     d->n_output_diff, op->schema.n_returns);
        return false;
    }
    /* From here on every output has an entry (true when not given). */
    if (!d->has_output_diff) {
        free(d->output_diff);
        d->output_diff = gen_xcalloc((size_t)op->schema.n_returns, sizeof(bool));
        for (int i = 0; i < op->schema.n_returns; i++)
            d->output_diff[i] = true;
        d->n_output_diff = op->schema.n_returns;
    }
    *nondiff_output = true;
    for (int i = 0; i < d->n_output_diff; i++)
        *nondiff_output &= !d->output_diff[i];
    return true;
}

/* Resolves the key of formula i of d to its argument (arg_index): false
 * (reported) when no argument has that name, the argument cannot have
 * gradients through this key, or an earlier key already named it. */
static bool resolve_formula_key(gen_deriv *d, int i)
{
    const gen_op *op = d->op;
    gen_formula *f = &d->formulas[i];

    for (int j = 0; j < op->schema.n_args; j++)
        if (strcmp(op->schema.args[j].name, f->input) == 0)
            f->arg_index = j;
    if (f->arg_index < 0) {
        gen_error_in(op->full_name, f->key_loc,
                     "unknown key '%s': no argument has that name (keys are 'name', "
                     "'output_differentiability' and Tensor argument names)",
                     f->input);
        return false;
    }
    const gen_arg *a = &op->schema.args[f->arg_index];
    if (gen_arg_is_tensor_list(a) && a->nullable) {
        gen_error_in(op->full_name, f->key_loc,
                     "argument '%s' is a Tensor?[]; only a Tensor[] (without '?') has "
                     "gradients, one per item",
                     f->input);
        return false;
    }
    if (gen_arg_is_tensor_list(a) && f->group_size > 1) {
        gen_error_in(op->full_name, f->key_loc,
                     "the Tensor[] argument '%s' cannot share a formula with other "
                     "inputs; give it its own key",
                     f->input);
        return false;
    }
    if (!gen_arg_is_input(a)) {
        gen_error_in(op->full_name, f->key_loc,
                     "argument '%s' is a %s, not a Tensor; only Tensor arguments have "
                     "gradients",
                     f->input, gen_type_name(a));
        return false;
    }
    for (int k = 0; k < i; k++) {
        if (d->formulas[k].arg_index == f->arg_index) {
            gen_error_in(op->full_name, f->key_loc,
                         "argument '%s' already has a formula (line %d)", f->input,
                         d->formulas[k].key_loc.line);
            return false;
        }
    }
    return true;
}

/* The checks of op's arguments against d's formulas: none is named like
 * a formula variable, and (unless no output is differentiable) every
 * Tensor argument has a key.  False (reported) otherwise. */
static bool check_formula_args(const gen_deriv *d, bool nondiff_output)
{
    const gen_op *op = d->op;
    bool ok = true;

    for (int j = 0; j < op->schema.n_args; j++) {
        const gen_arg *a = &op->schema.args[j];
        if (strcmp(a->name, "grad") == 0 || strcmp(a->name, "result") == 0 ||
            strcmp(a->name, "grad_input_mask") == 0) {
            gen_error_in(op->full_name, d->name_loc,
                         "argument '%s' clashes with the formula variable '%s'", a->name,
                         a->name);
            ok = false;
        }
        if (!gen_arg_is_tensor(a) || nondiff_output)
            continue;
        bool found = false;
        for (int i = 0; i < d->n_formulas; i++)
            found |= d->formulas[i].arg_index == j;
        if (!found) {
            gen_error_in(op->full_name, d->name_loc,
                         "no formula for Tensor argument '%s' (write '%s: non_differentiable' "
                         "if it has no gradient)",
                         a->name, a->name);
            ok = false;
        }
    }
    return ok;
}

/* Puts d's formulas in signature order and numbers their edges, so edge
 * numbers follow the arguments, except that the edges of a Tensor[]
 * input (as many as it has items, known only at record time) come after
 * all others.  False (reported) past 64 edges. */
static bool number_edges(gen_deriv *d)
{
    const gen_op *op = d->op;
    gen_formula *sorted = gen_xcalloc((size_t)d->n_formulas, sizeof(gen_formula));
    int n = 0;

    d->n_edges = 0;
    for (int j = 0; j < op->schema.n_args; j++) {
        for (int i = 0; i < d->n_formulas; i++) {
            if (d->formulas[i].arg_index != j)
                continue;
            sorted[n] = d->formulas[i];
            sorted[n].list = gen_arg_is_tensor_list(&op->schema.args[j]);
            bool has_edge = sorted[n].expr != NULL || sorted[n].not_implemented;
            sorted[n].edge = has_edge && !sorted[n].list ? d->n_edges++ : -1;
            n++;
        }
    }
    /* A schema has at most one list argument (schema.c), so at most one
     * formula takes the list edges. */
    for (int i = 0; i < n; i++) {
        if (sorted[i].list && (sorted[i].expr != NULL || sorted[i].not_implemented))
            sorted[i].edge = d->n_edges++;
    }
    free(d->formulas);
    d->formulas = sorted;
    if (d->n_edges > 64) {
        gen_error_in(op->full_name, d->name_loc, "more than 64 differentiable inputs");
        return false;
    }
    return true;
}

/* Resolves d's formulas against its op: output_differentiability, each
 * key's argument, formulas that could never run, the arguments' checks,
 * then the edges.  False when anything was reported. */
static bool resolve_formulas(gen_deriv *d)
{
    gen_op *op = d->op;
    bool nondiff_output = false;
    bool ok = resolve_output_diff(d, &nondiff_output);

    for (int i = 0; i < d->n_formulas; i++) {
        gen_formula *f = &d->formulas[i];
        ok &= resolve_formula_key(d, i);
        if (!nondiff_output || f->expr == NULL)
            continue;
        if (op->schema.n_returns == 1)
            gen_error_in(op->full_name, f->loc,
                         "the output is not differentiable (output_differentiability: [False]), "
                         "so this formula would never run; write 'non_differentiable'");
        else
            gen_error_in(op->full_name, f->loc,
                         "no output is differentiable (output_differentiability), so this "
                         "formula would never run; write 'non_differentiable'");
        ok = false;
    }
    ok &= check_formula_args(d, nondiff_output);
    if (!ok)
        return false;
    return number_edges(d);
}

static void resolve_deriv(gen_model *model, int index)
{
    gen_deriv *d = &model->derivs[index];

    if (d->name_text == NULL)
        return;
    gen_op *op = find_op_by_func(model, d->name_text);
    if (op == NULL) {
        gen_op *near = find_op_by_prefix(model, d->name_text);
        size_t n = strcspn(d->name_text, "( ");
        char *entry = n > 0 ? gen_xstrndup(d->name_text, n) : NULL;
        if (near != NULL)
            gen_error_in(entry, d->name_loc,
                         "'name' must repeat the op's func exactly; did you mean '%s' "
                         "(" GEN_NATIVE_FILE ":%d)?",
                         near->func, near->loc.line);
        else
            gen_error_in(entry, d->name_loc,
                         "no op in " GEN_NATIVE_FILE " has the signature '%s'", d->name_text);
        free(entry);
        return;
    }
    if (!op->valid)
        return;
    if (op->deriv != NULL) {
        gen_error_in(op->full_name, d->name_loc,
                     "second derivative entry (the first is on line %d)", op->deriv->loc.line);
        return;
    }
    if (op->kind == GEN_OP_COMPOSITE) {
        gen_error_in(op->full_name, d->name_loc,
                     "has a derivative but is composite (no 'dispatch' or 'pointwise' in "
                     GEN_NATIVE_FILE ":%d): either give it a kernel with 'dispatch:' or "
                     "'pointwise:', or delete this entry and let autograd flow through its "
                     "parts",
                     op->loc.line);
        return;
    }
    if (op->form == GEN_FORM_OUT) {
        gen_error_in(op->full_name, d->name_loc,
                     "derivatives of out variants are not supported yet");
        return;
    }
    if (op->schema.n_returns > 64) {
        gen_error_in(op->full_name, d->name_loc, "more than 64 outputs");
        return;
    }
    d->op = op;
    if (resolve_formulas(d))
        op->deriv = d;
    else
        d->op = NULL;
    op->deriv_rejected = op->deriv == NULL;
}

void gen_model_resolve(gen_model *model)
{
    gen_schema_set_enums(model->enums, model->n_enums);
    for (int i = 0; i < model->n_ops; i++)
        resolve_op(model, i);
    for (int i = 0; i < model->n_derivs; i++)
        resolve_deriv(model, i);
}

void gen_check_derivatives_present(const gen_model *model)
{
    uint32_t floating = dtype_bit("float32") | dtype_bit("float64");
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (!op->valid)
            continue;
        if (op->no_derivative != NULL && op->deriv != NULL) {
            gen_error_in(op->full_name, op->no_derivative_loc,
                         "says 'derivative: not_differentiable' but has an entry in "
                         GEN_DERIV_FILE " (line %d): keep one",
                         op->deriv->loc.line);
            continue;
        }
        if (op->no_derivative != NULL && op->kind == GEN_OP_COMPOSITE) {
            gen_error_in(op->full_name, op->no_derivative_loc,
                         "a composite op differentiates through its parts; 'derivative' "
                         "applies to ops with a kernel");
            continue;
        }
        bool tensor_in = false;
        for (int a = 0; a < op->schema.n_args; a++)
            tensor_in |= gen_arg_is_input(&op->schema.args[a]);
        /* Out variants are not differentiated (as in PyTorch): their
         * wrapper refuses inputs that require grad. */
        if (op->deriv != NULL || op->deriv_rejected || op->derivative_key ||
            op->kind == GEN_OP_COMPOSITE ||
            op->form == GEN_FORM_VIEW || op->form == GEN_FORM_OUT || !tensor_in ||
            (op->dtypes & floating) == 0)
            continue;
        gen_error_in(op->full_name, op->func_loc,
                     "computes floating-point values with a kernel but has no entry in "
                     GEN_DERIV_FILE ": add one (a formula per input, or 'non_differentiable' "
                     "for an input whose gradient is not defined), or say why it has none "
                     "with 'derivative: not_differentiable(\"<why>\")' here");
    }
}

const gen_op *gen_model_find_cname(const gen_model *model, const char *cname)
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
    free(op->pointwise_int);
    free(op->int_divisor);
    free(op->no_derivative);
    free(op->cpu_kernel);
    free(op->cuda_kernel);
    for (int i = 0; i < op->n_tags; i++)
        free(op->tags[i]);
    free(op->tags);
    free(op->tag_locs);
    free(op->onnx);
    free(op->doc);
    memset(op, 0, sizeof(*op));
}

static void free_deriv(gen_deriv *d)
{
    free(d->name_text);
    free(d->no_double_backward);
    free(d->no_graph_grad);
    for (int i = 0; i < d->n_formulas; i++) {
        free(d->formulas[i].input);
        free(d->formulas[i].expr);
        free(d->formulas[i].reason);
    }
    free(d->formulas);
    free(d->output_diff);
}

void gen_model_free(gen_model *model)
{
    for (int i = 0; i < model->n_ops; i++)
        gen_model_free_op(&model->ops[i]);
    free(model->ops);
    for (int i = 0; i < model->n_derivs; i++)
        free_deriv(&model->derivs[i]);
    free(model->derivs);
    for (int i = 0; i < model->n_sections; i++)
        free(model->sections[i].name);
    free(model->sections);
    for (int i = 0; i < model->n_enums; i++) {
        free(model->enums[i].name);
        free(model->enums[i].cname);
        free(model->enums[i].doc);
        for (int j = 0; j < model->enums[i].n_values; j++)
            free(model->enums[i].values[j]);
        free(model->enums[i].values);
    }
    free(model->enums);
    gen_schema_set_enums(NULL, 0);
    memset(model, 0, sizeof(*model));
}
