/*
 * emit_options.c - the short form of ops with several defaulted arguments:
 * yg_<op>_opt(required arguments, const yg_<op>_options *options, outs).
 *
 * C has no default arguments, so the full form yg_<op> takes every
 * argument.  An op with at least YG_OPTIONS_MIN defaulted arguments also
 * gets an options struct holding exactly those, whose zero value means
 * "all defaults", so a call names only what differs, with designated
 * initializers:
 *
 *   yg_max_pool2d_opt(x, YG_LIST(2, 2), &(yg_max_pool2d_options){.stride = YG_INTS(1, 1)}, &y);
 *
 * Members by argument type (yagrad/options.h has the types and macros):
 *   int, float, Scalar, bool   yg_opt_int / yg_opt_float / yg_opt_bool:
 *                              {.set, .value}, YG_SET(v) sets one
 *   int[]                      yg_opt_ints {.set, .items, .len}, YG_INTS(...)
 *   int?, float?, Scalar?      the same yg_opt_*: unset is the default (None
 *                              when that is the default)
 *   Tensor?, ScalarType?,      the full form's pointer: NULL is the default
 *   Device?, Generator?        (None, the default generator)
 *   str                        const char *: NULL is the default
 * The function fills in the defaults and calls yg_<op>: one behaviour.
 * Ops with a defaulted bool[N] or Tensor[] argument get no short form.
 */
#include <stdlib.h>
#include <string.h>

#include "gen.h"

/* Ops with this many defaulted arguments or more get a short form. */
#define YG_OPTIONS_MIN 2

static bool defaulted(const gen_arg *a)
{
    return a->default_ != NULL;
}

bool gen_op_has_options(const gen_op *op)
{
    int n = 0;
    if (!op->valid || !op->variant_function)
        return false;
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (!defaulted(a))
            continue;
        /* A member's zero value must be able to mean "unset": not so for
         * a plain dtype or device (0 is float32, cpu). */
        if (gen_option_member(a) == NULL)
            return false;
        n++;
    }
    return n >= YG_OPTIONS_MIN;
}


void gen_emit_options_decl(gen_sb *sb, const gen_op *op)
{
    gen_params full, shortp = {0};
    int k = 0;

    gen_sb_printf(sb,
                  "\n/* %s with options\n"
                  " *\n"
                  " * As yg_%s, with its defaulted arguments in *options: NULL, or a\n"
                  " * member left zero, means the argument's default (yagrad/options.h).\n"
                  " */\n"
                  "typedef struct yg_%s_options {\n",
                  op->full_name, op->cname, op->cname);
    size_t widest = 0;
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        size_t w = defaulted(a) ? strlen(gen_option_member(a)) + strlen(a->name) + 1 : 0;
        if (defaulted(a) && w > widest)
            widest = w;
    }
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        if (!defaulted(a))
            continue;
        char *decl = gen_xprintf("%s%s;", gen_option_member(a), a->name);
        const gen_enum *e = gen_arg_enum(a);
        char *d = e != NULL ? gen_enum_value_cname(e, atoi(a->default_)) : gen_xstrdup(a->default_);
        gen_sb_printf(sb, "    %-*s /* default %s */\n", (int)widest, decl, d);
        free(d);
        free(decl);
    }
    gen_sb_printf(sb, "} yg_%s_options;\n", op->cname);
    gen_op_params(op, &full);
    shortp.decls = gen_xcalloc((size_t)full.n + 1, sizeof(char *));
    shortp.comments = gen_xcalloc((size_t)full.n + 1, sizeof(char *));
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        int n = gen_arg_has_len(a) ? 2 : 1;
        for (int j = 0; j < n && !defaulted(a); j++) {
            shortp.decls[shortp.n] = gen_xstrdup(full.decls[k + j]);
            shortp.comments[shortp.n] =
                full.comments[k + j] != NULL ? gen_xstrdup(full.comments[k + j]) : NULL;
            shortp.n++;
        }
        k += n;
    }
    shortp.decls[shortp.n] = gen_xprintf("const yg_%s_options *options", op->cname);
    shortp.comments[shortp.n++] = gen_xstrdup("nullable, borrowed: NULL is all defaults");
    for (; k < full.n; k++) {
        shortp.decls[shortp.n] = gen_xstrdup(full.decls[k]);
        shortp.comments[shortp.n++] = full.comments[k] != NULL ? gen_xstrdup(full.comments[k])
                                                               : NULL;
    }
    char *prefix = gen_xprintf("YG_NODISCARD yg_status yg_%s_opt(", op->cname);
    gen_emit_call_decl(sb, prefix, &shortp, true, ";");
    free(prefix);
    gen_params_free(&shortp);
    gen_params_free(&full);
}

/* The body of yg_<op>_opt: the defaults, any static default locals,
 * then the call of the full form with call's arguments (\x01 between
 * them), one per line so it reads as the full form's parameter list. */
static void emit_options_body(gen_sb *sb, const gen_op *op, const gen_sb *locals,
                              const gen_sb *call)
{
    gen_sb_printf(sb,
                  "{\n"
                  "    static const yg_%s_options defaults = {0};\n"
                  "    const yg_%s_options *o = options != NULL ? options : &defaults;\n",
                  op->cname, op->cname);
    if (locals->len > 0)
        gen_sb_puts(sb, locals->buf);
    gen_sb_printf(sb, "    return yg_%s(", op->cname);
    for (const char *p = call->buf != NULL ? call->buf : ""; *p != '\0';) {
        size_t len = strcspn(p, "\x01");
        gen_sb_printf(sb, "\n        %.*s%s", (int)len, p, p[len] != '\0' ? "," : "");
        p += len + (p[len] != '\0');
    }
    gen_sb_puts(sb, ");\n}\n");
}

void gen_emit_options_def(gen_sb *sb, const gen_op *op)
{
    gen_params full, shortp = {0};
    gen_sb locals = {0}, call = {0};
    int k = 0;

    gen_op_params(op, &full);
    shortp.decls = gen_xcalloc((size_t)full.n + 1, sizeof(char *));
    shortp.comments = gen_xcalloc((size_t)full.n + 1, sizeof(char *));
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        const char *n = a->name;
        int np = gen_arg_has_len(a) ? 2 : 1;
        const char *sep = call.len > 0 ? "\x01" : "";
        if (!defaulted(a)) {
            for (int j = 0; j < np; j++)
                shortp.decls[shortp.n++] = gen_xstrdup(full.decls[k + j]);
            gen_sb_printf(&call, np == 2 ? "%s%s\x01%s_len" : "%s%s", sep, n, n);
        } else {
            gen_type_option_arg(&locals, &call, a, sep);
        }
        k += np;
    }
    shortp.decls[shortp.n++] = gen_xprintf("const yg_%s_options *options", op->cname);
    for (; k < full.n; k++) {
        shortp.decls[shortp.n++] = gen_xstrdup(full.decls[k]);
        char *name = gen_xstrdup(strrchr(full.decls[k], '*') + 1);
        gen_sb_printf(&call, "%s%s", call.len > 0 ? "\x01" : "", name);
        free(name);
    }
    char *prefix = gen_xprintf("yg_status yg_%s_opt(", op->cname);
    gen_sb_puts(sb, "\n");
    gen_emit_call_decl(sb, prefix, &shortp, false, "");
    emit_options_body(sb, op, &locals, &call);
    free(prefix);
    gen_sb_free(&locals);
    gen_sb_free(&call);
    gen_params_free(&shortp);
    gen_params_free(&full);
}
