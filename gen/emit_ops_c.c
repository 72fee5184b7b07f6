/*
 * emit_ops_c.c - writes api/<section>.c: the public yg_<op> of every op of
 * one section of native_functions.yaml.
 *
 * Each wrapper checks its out-parameters and non-nullable tensors, then
 *   - composite ops call yg__composite_<op> and prefix its errors: their
 *     parts record autograd history themselves;
 *   - other ops pick their kernel from a per-op table indexed by the
 *     device of the first tensor argument, or by their Device argument
 *     when they have one (dispatch is a lookup, not a switch), and
 *       - with a derivative entry, run the kernel and, when an input needs
 *         a gradient, record the backward node (<op>_record); in-place
 *         ops build the node before the kernel (copying the old self
 *         when a formula reads it) and rebase self's history after it;
 *       - without one, refuse before running anything when an input
 *         requires grad, rather than silently cut the graph.
 * View outputs are marked views of their base (yg__make_view).  *out is
 * written only on success; nothing is leaked on any path.
 */
#include <stdlib.h>
#include <string.h>

#include "gen.h"

/* The formula of the differentiable Tensor[] input, or NULL. */
static const gen_formula *list_formula(const gen_deriv *d)
{
    for (int j = 0; j < d->n_formulas; j++)
        if (d->formulas[j].list && d->formulas[j].edge >= 0)
            return &d->formulas[j];
    return NULL;
}

static bool is_differentiable_arg(const gen_deriv *d, int arg)
{
    for (int j = 0; j < d->n_formulas; j++)
        if (d->formulas[j].arg_index == arg && d->formulas[j].edge >= 0)
            return true;
    return false;
}

/* Whether the record function needs argument i (an edge or a save). */
static bool record_needs_arg(const gen_deriv *d, const gen_backward_plan *bp, int i)
{
    if (is_differentiable_arg(d, i))
        return true;
    for (int j = 0; j < bp->n_saves; j++)
        if (bp->saves[j].arg_index == i)
            return true;
    return false;
}

/* Whether the record function needs output i: it gets history (a
 * differentiable output) or is saved. */
static bool record_needs_output(const gen_deriv *d, const gen_backward_plan *bp, int i)
{
    if (d->output_diff[i])
        return true;
    for (int j = 0; j < bp->n_saves; j++)
        if (bp->saves[j].arg_index < 0 && bp->saves[j].output_nr == i)
            return true;
    return false;
}

/* The local holding output i in a wrapper with a derivative: result,
 * result1, ...  Caller frees. */
static char *result_local(int i)
{
    return i == 0 ? gen_xstrdup("result") : gen_xprintf("result%d", i);
}

/* Multi-output ops: whether output i becomes history of the node, as a C
 * condition: a differentiable output that is floating (an integer output,
 * such as indices, never carries a gradient).  Caller frees. */
static char *gets_history(const gen_op *op, int i)
{
    char *local = result_local(i);
    char *cond = op->deriv->output_diff[i]
                     ? gen_xprintf("yg__dtype_is_floating(yg_tensor_dtype(%s))", local)
                     : gen_xstrdup("false");

    free(local);
    return cond;
}

static void emit_check_prologue(gen_sb *sb, const gen_op *op)
{
    for (int i = 0; i < op->schema.n_returns; i++) {
        char *name = gen_return_cname(op, i);
        if (op->schema.returns[i].is_list)
            gen_sb_printf(sb,
                          "    YG_RETURN_IF_ERROR(yg__check_list_out(\"%s\", \"%s\", %s, "
                          "%s_len));\n",
                          op->display, name, name, name);
        else
            gen_sb_printf(sb, "    YG_RETURN_IF_ERROR(yg__check_out(\"%s\", \"%s\", %s));\n",
                          op->display, name, name);
        free(name);
    }
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (gen_arg_is_tensor(a) && !a->nullable)
            gen_sb_printf(sb, "    YG_RETURN_IF_ERROR(yg__check_defined(\"%s\", \"%s\", %s));\n",
                          op->display, a->name, a->name);
        if (gen_arg_is_state(a))
            gen_sb_printf(sb,
                          "    if (%s != NULL && yg_tensor_requires_grad(%s))\n"
                          "        return yg__fail(YG_ERR_AUTOGRAD,\n"
                          "                        \"%s: %s is state updated in place and "
                          "must not \"\n"
                          "                        \"require grad\");\n",
                          a->name, a->name, op->display, a->name);
        if (gen_arg_is_tensor_list(a))
            gen_sb_printf(sb,
                          "    if (%s_len < 0 || (%s == NULL && %s_len > 0))\n"
                          "        return yg__fail(YG_ERR_INVALID_ARGUMENT,\n"
                          "                        \"%s: %s is %%s with %s_len %%lld\",\n"
                          "                        %s == NULL ? \"NULL\" : \"given\",\n"
                          "                        (long long)%s_len);\n",
                          a->name, a->name, a->name, op->display, a->name, a->name, a->name,
                          a->name);
        if (gen_arg_is_tensor_list(a) && !a->nullable)
            gen_sb_printf(sb,
                          "    for (int64_t i = 0; i < %s_len; i++)\n"
                          "        YG_RETURN_IF_ERROR(yg__check_defined(\"%s\", \"%s\", "
                          "%s[i]));\n",
                          a->name, op->display, a->name, a->name);
        if (a->enum_id > 0) {
            const gen_enum *e = gen_arg_enum(a);
            gen_sb names = {0};
            for (int v = 0; v < e->n_values; v++)
                gen_sb_printf(&names, "%s%s (%d)",
                              v == 0 ? "" : v + 1 == e->n_values ? " or " : ", ", e->values[v], v);
            /* The enum may be unsigned: a negative value wraps to a large one. */
            gen_sb_printf(sb,
                          "    if ((unsigned long long)%s >= %d)\n"
                          "        return yg__fail(YG_ERR_INVALID_ARGUMENT,\n"
                          "                        \"%s: %s must be %s, not %%d\",\n"
                          "                        (int)%s);\n",
                          a->name, e->n_values, op->display, a->name, names.buf, a->name);
            gen_sb_free(&names);
        }
        if (gen_arg_is_int_list(a) && a->fixed_len > 0)
            gen_sb_printf(sb,
                          "    if (%s_len != %d)\n"
                          "        return yg__fail(YG_ERR_INVALID_ARGUMENT,\n"
                          "                        \"%s: %s must have %d entries, not %%lld\",\n"
                          "                        (long long)%s_len);\n",
                          a->name, a->fixed_len, op->display, a->name, a->fixed_len, a->name);
    }
}

static bool has_state_args(const gen_op *op)
{
    for (int i = 0; i < op->schema.n_args; i++)
        if (gen_arg_is_state(&op->schema.args[i]))
            return true;
    return false;
}

/* After the op succeeded: bumps the version of each state argument given
 * (Tensor(a!)?), which the kernel or composite wrote in place, so a saved
 * copy of it is caught as stale. */
static void emit_state_bumps(gen_sb *sb, const gen_op *op, const char *indent)
{
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (gen_arg_is_state(a))
            gen_sb_printf(sb, "%sif (%s != NULL)\n%s    yg__tensor_bump_version(%s);\n", indent,
                          a->name, indent, a->name);
    }
}

/* The argument result i writes (Tensor(a!) in, Tensor(a!) out), or NULL. */
static const gen_arg *written_arg(const gen_op *op, int i)
{
    const gen_return *r = &op->schema.returns[i];

    if (r->alias == NULL || !r->mutable_)
        return NULL;
    for (int j = 0; j < op->schema.n_args; j++)
        if (op->schema.args[j].alias != NULL && strcmp(op->schema.args[j].alias, r->alias) == 0)
            return &op->schema.args[j];
    return NULL;
}

/* Writes the tracer calls recording op's arguments into record (may be
 * NULL); returns the first argument the tracer cannot record, or NULL. */
static const gen_arg *emit_trace_args(gen_sb *record, const gen_op *op)
{
    gen_sb scratch = {0};

    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (!gen_type_emit_trace(record != NULL ? record : &scratch, a)) {
            gen_sb_free(&scratch);
            return a;
        }
    }
    gen_sb_free(&scratch);
    return NULL;
}

/* Emits `static yg_status <op>_traced(...)`: runs yg_<op> with tracing
 * paused and records it as one node (runtime/core/observer.h).  Ops with an
 * argument the tracer cannot record get none (see emit_trace_check). */
static void emit_traced(gen_sb *sb, const gen_op *op)
{
    gen_params params;
    gen_sb record = {0};

    if (emit_trace_args(&record, op) != NULL) {
        gen_sb_free(&record);
        return;
    }
    gen_sb_printf(sb,
                  "/* Runs yg_%s with tracing paused and records it as one node\n"
                  " * (core/observer.h). */\n",
                  op->cname);
    char *prefix = gen_xprintf("static yg_status %s_traced(", op->cname);
    gen_op_params(op, &params);
    gen_emit_call_decl(sb, prefix, &params, false, "");
    gen_params_free(&params);
    free(prefix);
    gen_sb_puts(sb, "{\n    yg_status st;\n\n    yg__obs_pause();\n");
    char *call = gen_xprintf("st = yg_%s(", op->cname);
    gen_emit_forward_call(sb, "    ", call, op, NULL, ");");
    free(call);
    gen_sb_printf(sb,
                  "    yg__obs_resume();\n"
                  "    if (st != YG_OK)\n        return st;\n"
                  "    yg__obs_begin_node(\"%s\");\n",
                  op->full_name);
    gen_sb_puts(sb, record.buf != NULL ? record.buf : "");
    gen_sb_free(&record);
    for (int i = 0; i < op->schema.n_returns; i++) {
        char *name = gen_return_cname(op, i);
        const gen_arg *w = written_arg(op, i);
        if (gen_returns_list(op))
            gen_sb_printf(sb, "    yg__obs_output_list(%s, %s_len);\n", name, name);
        else
            gen_sb_printf(sb, "    yg__obs_output(%s, %s);\n", name,
                          w != NULL ? w->name : "NULL");
        free(name);
    }
    gen_sb_puts(sb, "    return yg__obs_end_node();\n}\n\n");
}

/* The first statements of yg_<op>: hand the call to <op>_traced when it is
 * to be recorded, or refuse it when an argument cannot be recorded. */
static void emit_trace_check(gen_sb *sb, const gen_op *op)
{
    const gen_arg *refused = emit_trace_args(NULL, op);

    gen_sb_printf(sb, "    if (yg__obs_recording(%s))\n",
                  op->kind == GEN_OP_COMPOSITE ? "true" : "false");
    if (refused != NULL) {
        gen_sb_printf(sb, "        return yg__obs_refuse(\"%s\", \"%s\", \"%s\");\n",
                      op->display, refused->name, gen_type_name(refused));
        return;
    }
    char *head = gen_xprintf("return %s_traced(", op->cname);
    gen_emit_forward_call(sb, "        ", head, op, NULL, ");");
    free(head);
}

static void emit_composite(gen_sb *sb, const gen_op *op)
{
    gen_sb_puts(sb, "{\n    yg_status st;\n\n");
    emit_trace_check(sb, op);
    emit_check_prologue(sb, op);
    char *head = gen_xprintf("st = yg__composite_%s(", op->cname);
    gen_emit_forward_call(sb, "    ", head, op, NULL, ");");
    free(head);
    gen_sb_printf(sb, "    if (st != YG_OK)\n        return yg__fail_prefix(st, \"%s\");\n",
                  op->display);
    emit_state_bumps(sb, op, "    ");
    gen_sb_puts(sb, "    return YG_OK;\n}\n");
}

static const char *first_tensor(const gen_op *op)
{
    for (int i = 0; i < op->schema.n_args; i++)
        if (gen_arg_is_tensor(&op->schema.args[i]) && !op->schema.args[i].nullable)
            return op->schema.args[i].name;
    return NULL;
}

/* Emits the statement that sets dev, the device whose kernel runs: that of
 * the op's Device argument when it has one (when that is NULL: the device
 * of device_of, or the CPU for an op without tensors, as creation ops
 * have), else the device of device_of. */
static void emit_device_choice(gen_sb *sb, const gen_op *op, const char *device_of)
{
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (!gen_arg_is_device(a))
            continue;
        gen_sb_printf(sb, "    YG_RETURN_IF_ERROR(yg__dispatch_device(\"%s\", %s%s, %s, &dev));\n",
                      op->display, a->nullable ? "" : "&", a->name,
                      device_of != NULL ? device_of : "NULL");
        return;
    }
    gen_sb_printf(sb, "    dev = yg_tensor_device(%s);\n", device_of);
}

/* Emits the check that the op's tensors (those given: nullable ones may
 * be NULL) are on one device, when it takes more than one; a kernel of one
 * device must never see another's memory. */
static void emit_same_device_check(gen_sb *sb, const gen_op *op)
{
    gen_sb ts = {0}, names = {0};
    const char *list = NULL;
    int n = 0;

    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (gen_arg_is_tensor_list(a)) {
            list = a->name;
        } else if (gen_arg_is_tensor(a)) {
            gen_sb_printf(&ts, "%s%s", n == 0 ? "" : ", ", a->name);
            gen_sb_printf(&names, "%s\"%s\"", n == 0 ? "" : ", ", a->name);
            n++;
        }
    }
    if (n + (list != NULL) >= 2 || (list != NULL && n == 0)) {
        char *fixed = n > 0 ? gen_xprintf("(const yg_tensor *const[]){%s}", ts.buf)
                            : gen_xstrdup("NULL");
        char *fixed_names = n > 0 ? gen_xprintf("(const char *const[]){%s}", names.buf)
                                  : gen_xstrdup("NULL");
        char *lst = list != NULL ? gen_xprintf("%s, %s_len, \"%s\"", list, list, list)
                                 : gen_xstrdup("NULL, 0, NULL");
        gen_sb_printf(sb,
                      "    YG_RETURN_IF_ERROR(yg__check_devices(\"%s\",\n"
                      "                                         %d,\n"
                      "                                         %s,\n"
                      "                                         %s,\n"
                      "                                         %s));\n",
                      op->display, n, fixed, fixed_names, lst);
        free(fixed);
        free(fixed_names);
        free(lst);
    }
    gen_sb_free(&ts);
    gen_sb_free(&names);
}

/* Whether op's CUDA kernel is a function of its own, in the CUDA module. */
static bool cuda_in_module(const gen_op *op)
{
    return op->kind == GEN_OP_KERNEL && op->cuda_kernel != NULL &&
           (op->cpu_kernel == NULL || strcmp(op->cuda_kernel, op->cpu_kernel) != 0);
}

/* "static yg_status <op>_<name>(<the kernel's parameters>)\n" */
static void emit_kernel_signature(gen_sb *sb, const gen_op *op, const char *name)
{
    gen_params params;
    char *prefix = gen_xprintf("static yg_status %s_%s(", op->cname, name);

    gen_op_params_kernel(op, &params);
    gen_emit_call_decl(sb, prefix, &params, false, "");
    gen_params_free(&params);
    free(prefix);
}

/* A structured op's kernel table: its meta function makes the result
 * once, in <op>_structured, for every device; each device's adapter
 * hands that function its implementation, which fills the result. */
static void emit_structured_table(gen_sb *sb, const gen_op *op)
{
    gen_params params;
    char *prefix = gen_xprintf("typedef yg_status (*%s_impl_fn)(", op->cname);
    char *head;

    gen_op_params_impl(op, &params);
    gen_emit_call_decl(sb, prefix, &params, false, ";");
    free(prefix);
    /* the runner: the implementation first, then the kernel's parameters */
    gen_params_free(&params);
    gen_op_params_kernel(op, &params);
    params.decls = gen_xrealloc(params.decls, (size_t)(params.n + 1) * sizeof(char *));
    params.comments = gen_xrealloc(params.comments, (size_t)(params.n + 1) * sizeof(char *));
    memmove(params.decls + 1, params.decls, (size_t)params.n * sizeof(char *));
    memmove(params.comments + 1, params.comments, (size_t)params.n * sizeof(char *));
    params.decls[0] = gen_xprintf("%s_impl_fn impl", op->cname);
    params.comments[0] = NULL;
    params.n++;
    bool several = op->schema.n_returns > 1;
    gen_sb_printf(sb,
                  "\n/* %s is structured: yg__meta_%s checks the arguments and makes the\n"
                  " * %s once for every device; impl, the device's, fills %s. */\n",
                  op->display, op->cname, several ? "results" : "result", several ? "them" : "it");
    prefix = gen_xprintf("static yg_status %s_structured(", op->cname);
    gen_emit_call_decl(sb, prefix, &params, false, "");
    gen_params_free(&params);
    free(prefix);
    int k = op->schema.n_returns;
    gen_sb_puts(sb, "{\n    yg_tensor *result = NULL");
    for (int i = 1; i < k; i++)
        gen_sb_printf(sb, ", *result%d = NULL", i);
    gen_sb_puts(sb, ";\n");
    head = gen_xprintf("yg_status st = yg__meta_%s(", op->cname);
    gen_emit_forward_call(sb, "    ", head, op, k == 1 ? "&result" : GEN_OUT_LOCALS, ");");
    free(head);
    gen_sb_puts(sb, "\n    if (st == YG_OK)\n");
    gen_emit_forward_call(sb, "        ", "st = impl(", op, k == 1 ? "result" : GEN_OUT_LOCAL_VALUES,
                          ");");
    gen_sb_puts(sb, "    if (st != YG_OK) {\n        yg_release(result);\n");
    for (int i = 1; i < k; i++)
        gen_sb_printf(sb, "        yg_release(result%d);\n", i);
    gen_sb_puts(sb, "        return st;\n    }\n");
    for (int i = 0; i < k; i++) {
        char *out = gen_return_cname(op, i);
        if (i == 0)
            gen_sb_printf(sb, "    *%s = result;\n", out);
        else
            gen_sb_printf(sb, "    *%s = result%d;\n", out, i);
        free(out);
    }
    gen_sb_puts(sb, "    return YG_OK;\n}\n\n");
    /* the CPU's adapter */
    emit_kernel_signature(sb, op, "cpu");
    head = gen_xprintf("return %s_structured(%s, ", op->cname, op->cpu_kernel);
    gen_sb_puts(sb, "{\n");
    gen_emit_forward_call(sb, "    ", head, op, NULL, ");");
    gen_sb_puts(sb, "}\n\n");
    free(head);
    if (cuda_in_module(op)) {
        gen_sb_printf(sb,
                      "/* %s is the CUDA module's: found there by name on first use,\n"
                      " * loading the module if no CUDA tensor has yet (core/backend.h). */\n",
                      op->cuda_kernel);
        emit_kernel_signature(sb, op, "cuda");
        gen_sb_printf(sb,
                      "{\n    static yg_kernel_ref ref = {.name = \"%s\"};\n"
                      "    yg_kernel_fn fn;\n\n"
                      "    YG_RETURN_IF_ERROR(yg__backend_kernel(\"%s\", YG_CUDA, &ref, &fn));\n",
                      op->cuda_kernel, op->display);
        head = gen_xprintf("return %s_structured((%s_impl_fn)fn, ", op->cname, op->cname);
        gen_emit_forward_call(sb, "    ", head, op, NULL, ");");
        gen_sb_puts(sb, "}\n\n");
        free(head);
    }
    gen_sb_printf(sb, "static const %s_fn %s_kernels[YG_DEVICE_COUNT_] = {\n", op->cname,
                  op->cname);
    gen_sb_printf(sb, "    [YG_CPU] = %s_cpu,\n", op->cname);
    if (cuda_in_module(op))
        gen_sb_printf(sb, "    [YG_CUDA] = %s_cuda,\n", op->cname);
    else if (op->cuda_kernel != NULL)
        gen_sb_printf(sb, "    [YG_CUDA] = %s_cpu, /* one implementation */\n", op->cname);
    else
        gen_sb_puts(sb, "    [YG_CUDA] = NULL, /* reserved */\n");
    gen_sb_puts(sb, "};\n\n");
}

static void emit_kernel_table(gen_sb *sb, const gen_op *op)
{
    gen_params params;
    char *prefix = gen_xprintf("typedef yg_status (*%s_fn)(", op->cname);

    gen_op_params_kernel(op, &params);
    gen_emit_call_decl(sb, prefix, &params, false, ";");
    gen_params_free(&params);
    free(prefix);
    if (op->structured) {
        emit_structured_table(sb, op);
        return;
    }
    if (cuda_in_module(op)) {
        gen_sb_printf(sb,
                      "\n/* %s is the CUDA module's: found there by name on first use,\n"
                      " * loading the module if no CUDA tensor has yet (core/backend.h). */\n",
                      op->cuda_kernel);
        emit_kernel_signature(sb, op, "cuda");
        gen_sb_printf(sb,
                      "{\n    static yg_kernel_ref ref = {.name = \"%s\"};\n"
                      "    yg_kernel_fn fn;\n\n"
                      "    YG_RETURN_IF_ERROR(yg__backend_kernel(\"%s\", YG_CUDA, &ref, &fn));\n",
                      op->cuda_kernel, op->display);
        char *head = gen_xprintf("return ((%s_fn)fn)(", op->cname);
        gen_emit_forward_call(sb, "    ", head, op, NULL, ");");
        free(head);
        gen_sb_puts(sb, "}\n");
    }
    const char *cpu = op->kind == GEN_OP_POINTWISE ? NULL : op->cpu_kernel;
    gen_sb_printf(sb, "\nstatic const %s_fn %s_kernels[YG_DEVICE_COUNT_] = {\n", op->cname,
                  op->cname);
    if (op->kind == GEN_OP_POINTWISE) /* one iterator serves both devices */
        gen_sb_printf(sb, "    [YG_CPU] = yg__pw_%s,\n    [YG_CUDA] = yg__pw_%s,\n", op->cname,
                      op->cname);
    else if (cpu != NULL)
        gen_sb_printf(sb, "    [YG_CPU] = %s,\n", cpu);
    else
        gen_sb_puts(sb, "    [YG_CPU] = NULL,\n");
    if (cuda_in_module(op))
        gen_sb_printf(sb, "    [YG_CUDA] = %s_cuda,\n", op->cname);
    else if (op->cuda_kernel != NULL)
        gen_sb_printf(sb, "    [YG_CUDA] = %s,\n", op->cuda_kernel);
    else if (op->kind != GEN_OP_POINTWISE)
        gen_sb_puts(sb, "    [YG_CUDA] = NULL, /* reserved */\n");
    gen_sb_puts(sb, "};\n\n");
}

typedef enum save_filter {
    SAVES_ALL,
    SAVES_BUT_RESULT, /* in-place: result exists only after the kernel */
    SAVES_RESULT,
} save_filter;

static void emit_saves(gen_sb *sb, const gen_op *op, const gen_backward_plan *bp,
                       save_filter filter);

/* The parameters of op's record function: only the arguments its node
 * reads (so none goes unused), then the outputs it records, or, in
 * place, the node it hands back. */
static void record_params(const gen_op *op, const gen_backward_plan *bp, gen_params *out)
{
    const gen_deriv *d = op->deriv;
    bool inplace = op->form == GEN_FORM_INPLACE;
    gen_params params = {0};
    gen_params all;

    gen_op_params(op, &all);
    int c = 0;
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        int width = gen_arg_has_len(a) ? 2 : 1;
        if (record_needs_arg(d, bp, i)) {
            for (int k = 0; k < width; k++) {
                params.decls = gen_xrealloc(params.decls, (size_t)(params.n + 1) * sizeof(char *));
                params.comments =
                    gen_xrealloc(params.comments, (size_t)(params.n + 1) * sizeof(char *));
                params.decls[params.n] = gen_xstrdup(all.decls[c + k]);
                params.comments[params.n] = NULL;
                params.n++;
            }
        }
        c += width;
    }
    gen_params_free(&all);
    for (int i = 0; i < op->schema.n_returns; i++) {
        if (!inplace && !record_needs_output(d, bp, i))
            continue;
        char *local = result_local(i);
        bool list = op->schema.returns[i].is_list;
        params.decls = gen_xrealloc(params.decls, (size_t)(params.n + 2) * sizeof(char *));
        params.comments = gen_xrealloc(params.comments, (size_t)(params.n + 2) * sizeof(char *));
        params.decls[params.n] = inplace ? gen_xstrdup("yg_node **node_out")
                                 : list  ? gen_xprintf("yg_tensor *const *%s", local)
                                         : gen_xprintf("yg_tensor *%s", local);
        params.comments[params.n] = NULL;
        params.n++;
        if (list) {
            /* Tensor[]: the outputs and their number */
            params.decls[params.n] = gen_xprintf("int64_t %s_len", local);
            params.comments[params.n] = NULL;
            params.n++;
        }
        free(local);
    }

    *out = params;
}

/* The comment above op's record function. */
static void emit_record_doc(gen_sb *sb, const gen_op *op, const char *display)
{
    bool inplace = op->form == GEN_FORM_INPLACE;

    if (inplace)
        gen_sb_printf(sb,
                      "/* Builds %s before the kernel writes %s: one edge per\n"
                      " * differentiable input (%s's edge is its history so far) and the\n"
                      " * values its formulas read, each saved only when a gradient that reads\n"
                      " * it is wanted; a formula that reads %s gets a copy of its old value.\n"
                      " * The caller saves result and rebases %s's history on the node. */\n",
                      display, op->schema.args[0].name, op->schema.args[0].name,
                      op->schema.args[0].name, op->schema.args[0].name);
    else if (gen_returns_list(op))
        gen_sb_printf(sb,
                      "/* Records %s as the history of every output (result[i] is slot i\n"
                      " * of the node): one edge per differentiable input and the values its\n"
                      " * formulas read, each saved only when a gradient that reads it is\n"
                      " * wanted. */\n",
                      display);
    else if (op->schema.n_returns == 1)
        gen_sb_printf(sb,
                      "/* Records %s as the history of result: one edge per differentiable\n"
                      " * input and the values its formulas read, each saved only when a\n"
                      " * gradient that reads it is wanted. */\n",
                      display);
    else
        gen_sb_printf(sb,
                      "/* Records %s as the history of every differentiable floating\n"
                      " * output (output i is slot i of the node): one edge per differentiable\n"
                      " * input and the values its formulas read, each saved only when a\n"
                      " * gradient that reads it is wanted. */\n",
                      display);
}

/* The record function's refusals of more outputs or list items than a
 * node's int32 edge and slot counts hold; lf: the formula of a Tensor[]
 * input, or NULL. */
static void emit_record_limits(gen_sb *sb, const gen_op *op, const gen_formula *lf)
{
    if (gen_returns_list(op))
        gen_sb_printf(sb,
                      "    if (result_len > INT32_MAX)\n"
                      "        return yg__fail(YG_ERR_INVALID_ARGUMENT,\n"
                      "                        \"%s: %%lld outputs are more than autograd can "
                      "record\",\n"
                      "                        (long long)result_len);\n",
                      op->display);
    if (lf != NULL) {
        char *limit = lf->edge == 0 ? gen_xstrdup("INT32_MAX")
                                    : gen_xprintf("INT32_MAX - %d", lf->edge);
        gen_sb_printf(sb,
                      "    if (%s_len > %s)\n"
                      "        return yg__fail(YG_ERR_INVALID_ARGUMENT,\n"
                      "                        \"%s: %%lld tensors are more than autograd can "
                      "record\",\n"
                      "                        (long long)%s_len);\n",
                      lf->input, limit, op->display, lf->input);
        free(limit);
    }
}

/* st = yg__node_new(...) for op's node: its edges (a Tensor[] input has
 * one edge per item, after the others) and output slots. */
static void emit_node_new(gen_sb *sb, const gen_op *op, const gen_formula *lf)
{
    const gen_deriv *d = op->deriv;

    char *a0 = gen_xprintf("&yg__%s_backward_vtable", op->cname);
    char *a1 = gen_xprintf("sizeof(%s_backward)", op->cname);
    char *a2 = lf == NULL       ? gen_xprintf("%d", d->n_edges)
               : lf->edge == 0 ? gen_xprintf("(int32_t)%s_len", lf->input)
                               : gen_xprintf("(int32_t)(%d + %s_len)", lf->edge, lf->input);
    char *a3 = gen_returns_list(op) ? gen_xstrdup("(int32_t)result_len")
                                    : gen_xprintf("%d", op->schema.n_returns);
    const char *nargs[] = {a0, a1, a2, a3, "&base"};
    gen_emit_wrapped(sb, "    ", "st = yg__node_new(", nargs, 5, ");");
    free(a0);
    free(a1);
    free(a2);
    free(a3);
}

/* One yg__node_set_edge per differentiable input (per item of a
 * Tensor[] input). */
static void emit_edges(gen_sb *sb, const gen_deriv *d)
{
    for (int j = 0; j < d->n_formulas; j++) {
        if (d->formulas[j].edge < 0)
            continue;
        if (d->formulas[j].list) {
            /* one edge per item, after the others */
            char *at = d->formulas[j].edge == 0 ? gen_xstrdup("(int32_t)i")
                                                : gen_xprintf("(int32_t)(%d + i)",
                                                              d->formulas[j].edge);
            gen_sb_printf(sb,
                          "    for (int64_t i = 0; i < %s_len; i++) {\n"
                          "        st = yg__node_set_edge(base, %s, %s[i]);\n"
                          "        if (st != YG_OK)\n            goto out;\n    }\n",
                          d->formulas[j].input, at, d->formulas[j].input);
            free(at);
            continue;
        }
        gen_sb_printf(sb,
                      "    st = yg__node_set_edge(base, %d, %s);\n"
                      "    if (st != YG_OK)\n        goto out;\n",
                      d->formulas[j].edge, d->formulas[j].input);
    }
}

/* The record function's end from the saves on: the outputs' histories
 * (in place: the node handed back), then "out:". */
static void emit_record_histories(gen_sb *sb, const gen_op *op)
{
    const gen_deriv *d = op->deriv;

    if (op->form == GEN_FORM_INPLACE) {
        gen_sb_puts(sb, "    *node_out = yg__node_retain(base);\n    st = YG_OK;\nout:\n");
    } else if (gen_returns_list(op)) {
        gen_sb_puts(sb,
                    "    for (int64_t i = 0; i < result_len; i++) {\n"
                    "        st = yg__set_history(result[i], base, (int32_t)i);\n"
                    "        if (st != YG_OK)\n            goto out;\n    }\n"
                    "    st = YG_OK;\nout:\n");
    } else if (op->schema.n_returns == 1) {
        gen_sb_puts(sb, "    st = yg__set_history(result, base, 0);\nout:\n");
    } else {
        for (int i = 0; i < op->schema.n_returns; i++) {
            if (!d->output_diff[i])
                continue;
            char *cond = gets_history(op, i);
            char *local = result_local(i);
            gen_sb_printf(sb,
                          "    if (%s) {\n"
                          "        st = yg__set_history(%s, base, %d);\n"
                          "        if (st != YG_OK)\n            goto out;\n    }\n",
                          cond, local, i);
            free(cond);
            free(local);
        }
        gen_sb_puts(sb, "    st = YG_OK;\nout:\n");
    }
}

/* Emits `static yg_status <op>_record(...)`, which builds the node: after
 * the kernel for functional ops (and sets result's history), before it
 * for in-place ops (see emit_inplace_body). */
static void emit_record(gen_sb *sb, const gen_op *op, const gen_backward_plan *bp)
{
    const gen_deriv *d = op->deriv;
    bool inplace = op->form == GEN_FORM_INPLACE;
    const char *old_copy = NULL;
    bool saves_here = false;
    gen_params params;

    for (int j = 0; j < bp->n_saves; j++) {
        if (bp->saves[j].old_value)
            old_copy = bp->saves[j].arg;
        saves_here |= !inplace || bp->saves[j].arg_index >= 0;
    }
    char *display = gen_node_display_name(op->cname);
    emit_record_doc(sb, op, display);
    free(display);
    record_params(op, bp, &params);
    char *prefix = gen_xprintf("static yg_status %s_record(", op->cname);
    gen_emit_call_decl(sb, prefix, &params, false, "");
    free(prefix);
    gen_params_free(&params);
    gen_sb_puts(sb, "{\n    yg_node *base = NULL;\n");
    if (saves_here)
        gen_sb_printf(sb, "    %s_backward *node;\n", op->cname);
    if (old_copy != NULL)
        gen_sb_printf(sb, "    yg_tensor *%s_before = NULL;\n", old_copy);
    gen_sb_puts(sb, "    yg_status st;\n\n");
    const gen_formula *lf = list_formula(d);
    emit_record_limits(sb, op, lf);
    emit_node_new(sb, op, lf);
    gen_sb_puts(sb, "    if (st != YG_OK)\n        return st;\n");
    if (saves_here)
        gen_sb_printf(sb, "    node = (%s_backward *)base;\n", op->cname);
    emit_edges(sb, d);
    emit_saves(sb, op, bp, inplace ? SAVES_BUT_RESULT : SAVES_ALL);
    emit_record_histories(sb, op);
    if (old_copy != NULL)
        gen_sb_printf(sb, "    yg_release(%s_before);\n", old_copy);
    gen_sb_puts(sb, "    yg__node_release(base);\n    return st;\n}\n\n");
}

/* Opens `if (<an edge that reads s wants a gradient>) {` around a save
 * that not every gradient of d reads. */
static void emit_save_condition(gen_sb *sb, const gen_deriv *d, const gen_save *s)
{
    bool first = true;

    gen_sb_puts(sb, "    if (");
    for (int e = 0; e < d->n_edges; e++) {
        if (!(s->used_by & ((uint64_t)1 << e)))
            continue;
        char *needs = gen_needs_grad(d, e);
        gen_sb_printf(sb, "%s%s", first ? "" : " || ", needs);
        free(needs);
        first = false;
    }
    gen_sb_puts(sb, ") {\n");
}

/* The save of a tensor s (argument a, or NULL for an output) at indent
 * ind: in place, a copy of self's value before the kernel; an output
 * without its history when it has one. */
static void emit_tensor_save(gen_sb *sb, const gen_op *op, const gen_save *s, const gen_arg *a,
                             const char *ind)
{
    if (s->old_value) {
        gen_sb_printf(sb,
                      "%sst = yg_clone(%s, &%s_before);\n"
                      "%sif (st != YG_OK)\n%s    goto out;\n"
                      "%sst = yg__saved_save(&node->%s, %s_before, false, 0, \"%s\");\n"
                      "%sif (st != YG_OK)\n%s    goto out;\n",
                      ind, s->arg, s->arg, ind, ind, ind, s->field, s->arg, s->arg, ind, ind);
        return;
    }
    if (a != NULL || op->schema.n_returns == 1) {
        gen_sb_printf(sb,
                      "%sst = yg__saved_save(&node->%s, %s, %s, 0, \"%s\");\n"
                      "%sif (st != YG_OK)\n%s    goto out;\n",
                      ind, s->field, s->arg, a == NULL ? "true" : "false", s->arg, ind, ind);
        return;
    }
    /* An output is saved without its history (no cycle) when it
     * has history; one without (not differentiable, or integer)
     * is saved as a plain value. */
    char *cond = gets_history(op, s->output_nr);
    char *head = gen_xprintf("%sst = yg__saved_save(", ind);
    char *a0 = gen_xprintf("&node->%s", s->field);
    char *a3 = gen_xprintf("%d", s->output_nr);
    char *a4 = gen_xprintf("\"results[%d]\"", s->output_nr);
    const char *sargs[] = {a0, s->arg, cond, a3, a4};
    gen_emit_wrapped(sb, "", head, sargs, 5, ");");
    gen_sb_printf(sb, "%sif (st != YG_OK)\n%s    goto out;\n", ind, ind);
    free(cond);
    free(head);
    free(a0);
    free(a3);
    free(a4);
}

/* The lines that save s into the node at indent ind, by its kind. */
static void emit_save(gen_sb *sb, const gen_op *op, const gen_save *s, const char *ind)
{
    const gen_arg *a = s->arg_index >= 0 ? &op->schema.args[s->arg_index] : NULL;
    bool nullable = a != NULL && a->nullable;

    switch (s->kind) {
    case GEN_SAVE_TENSOR:
        emit_tensor_save(sb, op, s, a, ind);
        break;
    case GEN_SAVE_SIZES:
        if (nullable)
            gen_sb_printf(sb, "%sif (%s != NULL)\n    ", ind, s->arg);
        gen_sb_printf(sb, "%syg__saved_sizes_save(&node->%s, %s);\n", ind, s->field, s->arg);
        break;
    case GEN_SAVE_NUMEL:
        gen_sb_printf(sb, "%snode->%s = yg_tensor_numel(%s);\n", ind, s->field, s->arg);
        break;
    case GEN_SAVE_DTYPE:
        gen_sb_printf(sb, "%snode->%s = yg_tensor_dtype(%s);\n", ind, s->field, s->arg);
        break;
    case GEN_SAVE_DEVICE:
        gen_sb_printf(sb,
                      "%snode->%s = yg_tensor_device(%s);\n"
                      "%snode->%s_index = yg_tensor_device_index(%s);\n",
                      ind, s->field, s->arg, ind, s->field, s->arg);
        break;
    case GEN_SAVE_VALUE:
        if (nullable) {
            /* int?, float?, Scalar? or ScalarType?: given or not */
            gen_sb_printf(sb,
                          "%snode->has_%s = %s != NULL;\n"
                          "%sif (%s != NULL)\n%s    node->%s = *%s;\n",
                          ind, s->field, s->arg, ind, s->arg, ind, s->field, s->arg);
            break;
        }
        gen_sb_printf(sb, "%snode->%s = %s;\n", ind, s->field, s->arg);
        break;
    case GEN_SAVE_INT_LIST:
        gen_sb_printf(sb,
                      "%sst = yg__saved_int_list_save(&node->%s, %s, %s_len);\n"
                      "%sif (st != YG_OK)\n%s    goto out;\n",
                      ind, s->field, s->arg, s->arg, ind, ind);
        break;
    case GEN_SAVE_LIST_SIZES:
        gen_sb_printf(sb,
                      "%sst = yg__saved_list_sizes_save(&node->%s, %s, %s_len, %s);\n"
                      "%sif (st != YG_OK)\n%s    goto out;\n",
                      ind, s->field, s->arg, s->arg, s->at, ind, ind);
        break;
    case GEN_SAVE_TENSOR_LIST:
        gen_sb_printf(sb,
                      "%sst = yg__saved_list_save(&node->%s, %s, %s_len, \"%s\");\n"
                      "%sif (st != YG_OK)\n%s    goto out;\n",
                      ind, s->field, s->arg, s->arg, s->arg, ind, ind);
        break;
    }
}

/* Emits the saves of op's node (which is `base`, typed `node`) that
 * filter selects, each one that not every gradient reads inside an if
 * on the gradients that do. */
static void emit_saves(gen_sb *sb, const gen_op *op, const gen_backward_plan *bp,
                       save_filter filter)
{
    const gen_deriv *d = op->deriv;
    uint64_t all_edges = d->n_edges >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << d->n_edges) - 1);

    for (int j = 0; j < bp->n_saves; j++) {
        const gen_save *s = &bp->saves[j];
        if ((filter == SAVES_RESULT && s->arg_index >= 0) ||
            (filter == SAVES_BUT_RESULT && s->arg_index < 0))
            continue;
        bool conditional = s->kind != GEN_SAVE_VALUE && (s->used_by & all_edges) != all_edges;
        if (conditional)
            emit_save_condition(sb, d, s);
        emit_save(sb, op, s, conditional ? "        " : "    ");
        if (conditional)
            gen_sb_puts(sb, "    }\n");
    }
}

/* The argument return i is a view of (Tensor(a) in, Tensor(a) out), or NULL. */
static const gen_arg *view_source(const gen_op *op, int i)
{
    const gen_return *r = &op->schema.returns[i];

    if (r->alias == NULL || r->mutable_)
        return NULL;
    for (int j = 0; j < op->schema.n_args; j++)
        if (op->schema.args[j].alias != NULL && strcmp(op->schema.args[j].alias, r->alias) == 0)
            return &op->schema.args[j];
    return NULL;
}

static bool returns_view(const gen_op *op)
{
    for (int i = 0; i < op->schema.n_returns; i++)
        if (view_source(op, i) != NULL)
            return true;
    return false;
}

/* Marks every output of an op returning Tensor(a)[] as one of several
 * views of its base: autograd/views.c refuses in-place writes to them,
 * naming the op, since each one's gradient is a part of one node's. */
static void emit_make_list_views(gen_sb *sb, const gen_op *op, bool locals)
{
    const gen_arg *src = view_source(op, 0);

    if (locals) {
        gen_sb_printf(sb,
                      "    for (int64_t i = 0; i < result_len; i++) {\n"
                      "        st = yg__make_view(result[i], %s, \"%s\");\n"
                      "        if (st != YG_OK)\n            goto out;\n    }\n",
                      src->name, op->display);
        return;
    }
    gen_sb_printf(sb,
                  "    for (int64_t i = 0; i < *out_len && st == YG_OK; i++)\n"
                  "        st = yg__make_view((*out)[i], %s, \"%s\");\n"
                  "    if (st != YG_OK) {\n"
                  "        yg_release_list(*out, *out_len);\n"
                  "        *out = NULL;\n        *out_len = 0;\n    }\n    return st;\n",
                  src->name, op->display);
}

/* Marks each view output as a view of its base (autograd/views.c needs it
 * when the view is later written in place).  With locals, the outputs
 * are in result, result1...; without, they are the out-parameters. */
static void emit_make_views(gen_sb *sb, const gen_op *op, bool locals)
{
    const char *result = locals ? "result" : NULL;

    if (gen_returns_list(op)) {
        emit_make_list_views(sb, op, locals);
        return;
    }
    for (int i = 0; i < op->schema.n_returns; i++) {
        const gen_arg *src = view_source(op, i);
        if (src == NULL)
            continue;
        char *name = gen_return_cname(op, i);
        char *target = result != NULL ? result_local(i) : gen_xprintf("*%s", name);
        char *multi = op->schema.n_returns > 1 ? gen_xprintf("\"%s\"", op->display)
                                                : gen_xstrdup("NULL");
        if (result == NULL && i > 0)
            gen_sb_puts(sb, "    if (st == YG_OK)\n    ");
        gen_sb_printf(sb, "    st = yg__make_view(%s, %s, %s);\n", target, src->name, multi);
        if (result != NULL)
            gen_sb_puts(sb, "    if (st != YG_OK)\n        goto out;\n");
        free(target);
        free(multi);
        free(name);
    }
    if (result != NULL)
        return;
    /* Out-parameters: on failure release every output. */
    gen_sb_puts(sb, "    if (st != YG_OK) {\n");
    for (int i = 0; i < op->schema.n_returns; i++) {
        char *name = gen_return_cname(op, i);
        gen_sb_printf(sb, "        yg_release(*%s);\n        *%s = NULL;\n", name, name);
        free(name);
    }
    gen_sb_puts(sb, "    }\n    return st;\n");
}

/* The body of an in-place op with a derivative: the node is built (and the
 * old values its formulas read are copied) before the kernel writes self;
 * afterwards result is saved and self's history is rebased on the node. */
static void emit_inplace_body(gen_sb *sb, const gen_op *op, const gen_backward_plan *bp,
                              int n_inputs, const char *device_of)
{
    const gen_deriv *d = op->deriv;
    const char *self = op->schema.args[0].name;
    bool saves_result = false;

    for (int j = 0; j < bp->n_saves; j++)
        saves_result |= bp->saves[j].arg_index < 0;
    emit_device_choice(sb, op, device_of);
    emit_same_device_check(sb, op);
    gen_sb_printf(sb,
                  "    kernel = %s_kernels[dev];\n"
                  "    if (kernel == NULL)\n"
                  "        return yg__fail(YG_ERR_DEVICE, \"%s: no kernel for device %%s\",\n"
                  "                        yg__device_name(dev));\n"
                  "    if (yg__any_requires_grad(%d, inputs)) {\n"
                  "        st = yg__check_inplace(\"%s\", %s);\n"
                  "        if (st != YG_OK)\n            return st;\n",
                  op->cname, op->display, n_inputs, op->display, self);
    gen_sb_printf(sb, "        st = %s_record(", op->cname);
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (!record_needs_arg(d, bp, i))
            continue;
        gen_sb_printf(sb, "%s, ", a->name);
        if (gen_arg_has_len(a))
            gen_sb_printf(sb, "%s_len, ", a->name);
    }
    gen_sb_puts(sb, "&base);\n        if (st != YG_OK)\n            return st;\n    }\n");
    gen_emit_forward_call(sb, "    ", "st = kernel(", op, "&result", ");");
    gen_sb_puts(sb, "    if (st != YG_OK)\n        goto out;\n");
    emit_state_bumps(sb, op, "    ");
    gen_sb_puts(sb, "    if (base != NULL) {\n");
    if (saves_result) {
        gen_sb_printf(sb, "        %s_backward *node = (%s_backward *)base;\n\n", op->cname,
                      op->cname);
        gen_sb sv = {0};
        emit_saves(&sv, op, bp, SAVES_RESULT);
        /* The saves one level deeper, inside this block. */
        for (const char *p = sv.buf; p != NULL && *p != '\0';) {
            size_t n = strcspn(p, "\n");
            gen_sb_puts(sb, "    ");
            gen_sb_putn(sb, p, n + (p[n] == '\n'));
            p += n + (p[n] == '\n');
        }
        gen_sb_free(&sv);
    }
    gen_sb_printf(sb,
                  "        st = yg__rebase_history(%s, base);\n"
                  "        if (st != YG_OK)\n            goto out;\n    }\n"
                  "    *out = result;\n    result = NULL;\nout:\n    yg__node_release(base);\n"
                  "    yg_release(result);\n    return st;\n}\n",
                  self);
}

/* The dispatch body's locals: the tensors whose requires_grad matters
 * (the differentiable inputs in edge order or, without a derivative,
 * every tensor argument) and the results, kernel and status; returns how
 * many tensors `inputs` holds. */
static int emit_dispatch_locals(gen_sb *sb, const gen_op *op)
{
    const gen_deriv *d = op->deriv;
    bool record = d != NULL && d->n_edges > 0;
    int n_inputs = 0;

    gen_sb inputs = {0};
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (!gen_arg_is_tensor(a) || (d != NULL && !is_differentiable_arg(d, i)))
            continue;
        gen_sb_printf(&inputs, "%s%s", n_inputs > 0 ? ", " : "", a->name);
        n_inputs++;
    }
    if (n_inputs > 0 && (d == NULL || record))
        gen_sb_printf(sb, "    const yg_tensor *inputs[%d] = {%s};\n", n_inputs, inputs.buf);
    gen_sb_free(&inputs);
    bool inplace = record && op->form == GEN_FORM_INPLACE;
    bool views = returns_view(op);
    for (int i = 0; record && i < op->schema.n_returns; i++) {
        char *local = result_local(i);
        if (op->schema.returns[i].is_list)
            gen_sb_printf(sb, "    yg_tensor **%s = NULL;\n    int64_t %s_len = 0;\n", local,
                          local);
        else
            gen_sb_printf(sb, "    yg_tensor *%s = NULL;\n", local);
        free(local);
    }
    if (inplace)
        gen_sb_puts(sb, "    yg_node *base = NULL;\n");
    gen_sb_printf(sb, "    yg_device dev;\n    %s_fn kernel;\n", op->cname);
    if (record || views || has_state_args(op))
        gen_sb_puts(sb, "    yg_status st;\n");
    gen_sb_puts(sb, "\n");
    return n_inputs;
}

/* Without a derivative entry: the refusal of inputs that require grad. */
static void emit_grad_refusal(gen_sb *sb, const gen_op *op, int n_inputs)
{
    const gen_deriv *d = op->deriv;

    gen_sb cond = {0};
    if (n_inputs > 0)
        gen_sb_printf(&cond, "yg__any_requires_grad(%d, inputs)", n_inputs);

    for (int i = 0; d == NULL && i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (gen_arg_is_tensor_list(a))
            gen_sb_printf(&cond, "%syg__any_requires_grad((int)%s_len, %s)",
                          cond.len > 0 ? " ||\n        " : "", a->name, a->name);
    }
    if (d == NULL && cond.len > 0 && op->no_derivative != NULL)
        gen_sb_printf(sb,
                      "    if (%s)\n"
                      "        return yg__fail(YG_ERR_NOT_IMPLEMENTED,\n"
                      "                        \"%s: not differentiable (%s), \"\n"
                      "                        \"but an input requires grad\");\n",
                      cond.buf, op->display, op->no_derivative);
    else if (d == NULL && cond.len > 0)
        gen_sb_printf(sb,
                      "    if (%s)\n"
                      "        return yg__fail(YG_ERR_NOT_IMPLEMENTED,\n"
                      "                        \"%s: no derivative formula in "
                      "specs/derivatives.yaml, \"\n"
                      "                        \"but an input requires grad\");\n",
                      cond.buf, op->display);
    gen_sb_free(&cond);
}

/* The argument whose device picks the kernel: the first tensor, else the
 * first item of a Tensor[] (refusing an empty list; *list_first, freed by
 * the caller, then names it). */
static const char *emit_device_source(gen_sb *sb, const gen_op *op, char **list_first)
{
    const char *device_of = first_tensor(op);
    *list_first = NULL;
    for (int i = 0; device_of == NULL && i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (!gen_arg_is_tensor_list(a) || a->nullable)
            continue;
        /* Only Tensor[] arguments: the device is that of the first. */
        gen_sb_printf(sb,
                      "    if (%s_len == 0)\n"
                      "        return yg__fail(YG_ERR_INVALID_ARGUMENT,\n"
                      "                        \"%s: expected at least one tensor in %s\");\n",
                      a->name, op->display, a->name);
        *list_first = gen_xprintf("%s[0]", a->name);
        device_of = *list_first;
    }
    return device_of;
}

/* The call of <op>_record when an input requires grad: the fixed inputs,
 * then a Tensor[] input's items; an op returning Tensor[] records a node
 * only when it has outputs. */
static void emit_record_call(gen_sb *sb, const gen_op *op, const gen_backward_plan *bp,
                             int n_inputs)
{
    const gen_deriv *d = op->deriv;

    gen_sb record_cond = {0};
    if (n_inputs > 0)
        gen_sb_printf(&record_cond, "yg__any_requires_grad(%d, inputs)", n_inputs);
    if (list_formula(d) != NULL)
        gen_sb_printf(&record_cond, "%syg__any_requires_grad((int)%s_len, %s)",
                      n_inputs > 0 ? " ||\n        " : "", list_formula(d)->input,
                      list_formula(d)->input);
    bool paren = gen_returns_list(op) && list_formula(d) != NULL && n_inputs > 0;
    gen_sb_printf(sb, "    if (%s%s%s%s) {\n        st = %s_record(",
                  gen_returns_list(op) ? "result_len > 0 && " : "", paren ? "(" : "",
                  record_cond.buf, paren ? ")" : "", op->cname);
    gen_sb_free(&record_cond);
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (!record_needs_arg(d, bp, i))
            continue;
        gen_sb_printf(sb, "%s, ", a->name);
        if (gen_arg_has_len(a))
            gen_sb_printf(sb, "%s_len, ", a->name);
    }
    bool first = true;
    for (int i = 0; i < op->schema.n_returns; i++) {
        if (!record_needs_output(d, bp, i))
            continue;
        char *local = result_local(i);
        gen_sb_printf(sb, "%s%s", first ? "" : ", ", local);
        if (op->schema.returns[i].is_list)
            gen_sb_printf(sb, ", %s_len", local);
        first = false;
        free(local);
    }
    gen_sb_puts(sb, ");\n        if (st != YG_OK)\n            goto out;\n    }\n");
}

/* The results handed to the caller, then "out:" and the releases. */
static void emit_hand_out_results(gen_sb *sb, const gen_op *op)
{
    for (int i = 0; i < op->schema.n_returns; i++) {
        char *local = result_local(i);
        char *name = gen_return_cname(op, i);
        if (op->schema.returns[i].is_list)
            gen_sb_printf(sb, "    *%s = %s;\n    *%s_len = %s_len;\n    %s = NULL;\n", name,
                          local, name, local, local);
        else
            gen_sb_printf(sb, "    *%s = %s;\n    %s = NULL;\n", name, local, local);
        free(local);
        free(name);
    }
    gen_sb_puts(sb, "out:\n");
    for (int i = op->schema.n_returns - 1; i >= 0; i--) {
        char *local = result_local(i);
        if (op->schema.returns[i].is_list)
            gen_sb_printf(sb, "    yg_release_list(%s, %s_len);\n", local, local);
        else
            gen_sb_printf(sb, "    yg_release(%s);\n", local);
        free(local);
    }
    gen_sb_puts(sb, "    return st;\n}\n");
}

/* bp: the backward plan of op's derivative entry, NULL without one. */
static void emit_dispatch_body(gen_sb *sb, const gen_op *op, const gen_backward_plan *bp)
{
    const gen_deriv *d = op->deriv;
    bool record = d != NULL && d->n_edges > 0;

    gen_sb_puts(sb, "{\n");
    int n_inputs = emit_dispatch_locals(sb, op);
    bool inplace = record && op->form == GEN_FORM_INPLACE;
    bool views = returns_view(op);
    emit_trace_check(sb, op);
    emit_check_prologue(sb, op);
    emit_grad_refusal(sb, op, n_inputs);
    char *list_first = NULL;
    const char *device_of = emit_device_source(sb, op, &list_first);
    if (inplace) {
        emit_inplace_body(sb, op, bp, n_inputs, device_of);
        free(list_first);
        return;
    }
    emit_device_choice(sb, op, device_of);
    emit_same_device_check(sb, op);
    gen_sb_printf(sb,
                  "    kernel = %s_kernels[dev];\n"
                  "    if (kernel == NULL)\n"
                  "        return yg__fail(YG_ERR_DEVICE, \"%s: no kernel for device %%s\",\n"
                  "                        yg__device_name(dev));\n",
                  op->cname, op->display);
    free(list_first);
    if (!record && !views && !has_state_args(op)) {
        gen_emit_forward_call(sb, "    ", "return kernel(", op, NULL, ");");
        gen_sb_puts(sb, "}\n");
        return;
    }
    if (!record && !views) {
        gen_emit_forward_call(sb, "    ", "st = kernel(", op, NULL, ");");
        gen_sb_puts(sb, "    if (st != YG_OK)\n        return st;\n");
        emit_state_bumps(sb, op, "    ");
        gen_sb_puts(sb, "    return YG_OK;\n}\n");
        return;
    }
    if (!record) {
        gen_emit_forward_call(sb, "    ", "st = kernel(", op, NULL, ");");
        gen_sb_puts(sb, "    if (st != YG_OK)\n        return st;\n");
        emit_state_bumps(sb, op, "    ");
        emit_make_views(sb, op, false);
        gen_sb_puts(sb, "}\n");
        return;
    }
    gen_emit_forward_call(sb, "    ", "st = kernel(", op,
                          op->schema.n_returns == 1 ? "&result" : GEN_OUT_LOCALS, ");");
    gen_sb_puts(sb, "    if (st != YG_OK)\n        return st;\n");
    emit_state_bumps(sb, op, "    ");
    if (views)
        emit_make_views(sb, op, true);
    emit_record_call(sb, op, bp, n_inputs);
    emit_hand_out_results(sb, op);
}

char *gen_emit_api_c(const gen_model *model, const gen_backward_plan *backward, int section)
{
    gen_sb sb = {0};
    const char *sec = model->sections[section].name;

    gen_emit_marker(&sb, GEN_NATIVE_FILE);
    gen_sb_printf(&sb,
                "/*\n"
                " * api/%s.c - the public entry point of every op of section %s\n"
                " * of specs/native_functions.yaml (declared in yagrad/ops_%s.h).  One\n"
                " * file per section, so editing one op recompiles its section only.\n"
                " *\n"
                " * Each checks its arguments, then either calls its composite\n"
                " * implementation (whose parts record autograd history themselves) or picks\n"
                " * a kernel by device from a per-op table, runs it, and records the backward\n"
                " * node of specs/derivatives.yaml when an input needs a gradient.  An op\n"
                " * without a derivative refuses inputs that require grad before running.\n"
                " * *out is set only on success.\n"
                " */\n"
                GEN_OPS_INCLUDES
                "\n"
                "#include \"autograd/node.h\"\n",
                sec, sec, sec);
    /* A section with an op whose CUDA implementation is the module's
     * includes the registry that finds it. */
    bool module = false;
    for (int i = 0; i < model->n_ops; i++)
        if (model->ops[i].valid && model->ops[i].section == section)
            module |= cuda_in_module(&model->ops[i]);
    if (module)
        gen_sb_puts(&sb, "#include \"core/backend.h\"\n");
    gen_sb_printf(&sb, "#include \"core/core.h\"\n"
                       "#include \"core/observer.h\"\n"
                       "#include \"cpu/cpu.h\"\n"
                       "#include \"decls/%s.h\"\n"
                       "#include \"generated_int.h\"\n", sec);
    const char *pw = model->sections[section].has_pointwise ? sec : NULL;
    if (pw != NULL)
        gen_sb_printf(&sb, "#include \"kernels/%s.h\"\n", pw);
    gen_sb_printf(&sb, "#include \"nodes/%s.h\"\n", sec);
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        if (!op->valid || op->section != section)
            continue;
        const gen_backward_plan *bp =
            op->deriv != NULL ? &backward[gen_deriv_index(model, op->deriv)] : NULL;
        gen_sb_puts(&sb, "\n");
        if (op->kind != GEN_OP_COMPOSITE) {
            emit_kernel_table(&sb, op);
            if (op->deriv != NULL && op->deriv->n_edges > 0)
                emit_record(&sb, op, bp);
        }
        emit_traced(&sb, op);
        gen_emit_schema_only(&sb, "", op->func);
        gen_params params;
        gen_op_params(op, &params);
        char *prefix = gen_xprintf("yg_status yg_%s(", op->cname);
        gen_emit_call_decl(&sb, prefix, &params, false, "");
        free(prefix);
        gen_params_free(&params);
        if (op->kind == GEN_OP_COMPOSITE)
            emit_composite(&sb, op);
        else
            emit_dispatch_body(&sb, op, bp);
        if (gen_op_has_options(op))
            gen_emit_options_def(&sb, op);
    }
    return gen_take_with_ops_includes(model, section, &sb);
}
