/*
 * types.c - what each argument type of the specs becomes in every place gen
 * writes it (gen.h, "argument types per target"): the public C API's
 * parameters, a graph node's attributes as the tracer records them and the
 * boxed calls and ONNX symbolics read them, an options struct's members, a
 * backward node's saved fields, and the C the formula and pointwise units
 * declare.
 *
 * Why one file: the same question ("how is an int? passed here?") used to
 * be answered by a switch in each emitter, 257 tests of gen_type in 18
 * files, so adding an argument type meant finding them all.  Here a type
 * is a row of gen_types[] plus a case in the functions that write code
 * for it; an emitter that meets a type no function here handles gets
 * false back and says so, rather than writing wrong C.
 */
#include <stdlib.h>
#include <string.h>

#include "gen.h"

/* One row per gen_type, in its order. */
static const gen_type_info gen_types[] = {
    [GEN_T_TENSOR] = {.tensor = true,
                      .formula_readable = true,
                      .unit_ctype = "Tensor",
                      .unit_ctype_opt = "Tensor",
                      .value_ctype = "double",
                      .pointwise_ctype = "double",
                      .option_member_opt = "const yg_tensor *"},
    [GEN_T_TENSOR_LIST] = {.tensor_list = true,
                           .has_len = true,
                           .formula_readable = true,
                           .unit_ctype = "TensorList",
                           .unit_ctype_opt = "TensorList",
                           .value_ctype = "double",
                           .pointwise_ctype = "double"},
    [GEN_T_INT] = {.formula_readable = true,
                   .unit_ctype = "long",
                   .unit_ctype_opt = "const long *",
                   .value_ctype = "int64_t",
                   .pointwise_ctype = "long",
                   .option_member = "yg_opt_int ",
                   .option_member_opt = "yg_opt_int "},
    [GEN_T_INT_LIST] = {.has_len = true,
                        .formula_readable = true,
                        .unit_ctype = "IntArrayRef",
                        .unit_ctype_opt = "IntArrayRef",
                        .value_ctype = "double",
                        .pointwise_ctype = "double",
                        .option_member = "yg_opt_ints ",
                        .option_member_opt = "yg_opt_ints "},
    [GEN_T_FLOAT] = {.formula_readable = true,
                     .unit_ctype = "double",
                     .unit_ctype_opt = "const double *",
                     .value_ctype = "double",
                     .pointwise_ctype = "double",
                     .option_member = "yg_opt_float ",
                     .option_member_opt = "yg_opt_float "},
    [GEN_T_BOOL] = {.formula_readable = true,
                    .unit_ctype = "_Bool",
                    .unit_ctype_opt = "_Bool",
                    .value_ctype = "bool",
                    .pointwise_ctype = "_Bool",
                    .option_member = "yg_opt_bool ",
                    .option_member_opt = "yg_opt_bool "},
    [GEN_T_BOOL_LIST] = {.unit_ctype = "const _Bool *",
                         .unit_ctype_opt = "const _Bool *",
                         .value_ctype = "double",
                         .pointwise_ctype = "double"},
    [GEN_T_SCALAR] = {.formula_readable = true,
                      .unit_ctype = "Scalar",
                      .unit_ctype_opt = "const double *",
                      .value_ctype = "double",
                      .pointwise_ctype = "double",
                      .option_member = "yg_opt_float ",
                      .option_member_opt = "yg_opt_float "},
    [GEN_T_SCALAR_TYPE] = {.formula_readable = true,
                           .unit_ctype = "ScalarType",
                           .unit_ctype_opt = "const ScalarType *",
                           .value_ctype = "yg_dtype",
                           .pointwise_ctype = "double",
                           .option_member_opt = "const yg_dtype *"},
    [GEN_T_STR] = {.unit_ctype = "const char *",
                   .unit_ctype_opt = "const char *",
                   .value_ctype = "double",
                   .pointwise_ctype = "double",
                   .option_member = "const char *",
                   .option_member_opt = "const char *"},
    [GEN_T_DEVICE] = {.unit_ctype = "int",
                      .unit_ctype_opt = "const int *",
                      .value_ctype = "double",
                      .pointwise_ctype = "double",
                      .option_member_opt = "const yg_device *"},
    [GEN_T_GENERATOR] = {.unit_ctype = "void *",
                         .unit_ctype_opt = "void *",
                         .value_ctype = "double",
                         .pointwise_ctype = "double",
                         .option_member = "yg_generator *",
                         .option_member_opt = "yg_generator *"},
};

const gen_type_info *gen_type_of(const gen_arg *a)
{
    return &gen_types[a->type];
}

bool gen_arg_is_tensor(const gen_arg *a)
{
    return gen_types[a->type].tensor;
}

bool gen_arg_is_tensor_list(const gen_arg *a)
{
    return gen_types[a->type].tensor_list;
}

bool gen_arg_is_input(const gen_arg *a)
{
    return gen_types[a->type].tensor || gen_types[a->type].tensor_list;
}

bool gen_arg_has_len(const gen_arg *a)
{
    return gen_types[a->type].has_len;
}

bool gen_arg_is_int(const gen_arg *a)
{
    return a->type == GEN_T_INT;
}

bool gen_arg_is_int_list(const gen_arg *a)
{
    return a->type == GEN_T_INT_LIST;
}

bool gen_arg_is_bool_list(const gen_arg *a)
{
    return a->type == GEN_T_BOOL_LIST;
}

bool gen_arg_is_generator(const gen_arg *a)
{
    return a->type == GEN_T_GENERATOR;
}

bool gen_arg_is_device(const gen_arg *a)
{
    return a->type == GEN_T_DEVICE;
}

bool gen_arg_is_dtype(const gen_arg *a)
{
    return a->type == GEN_T_SCALAR_TYPE;
}

bool gen_arg_is_number(const gen_arg *a)
{
    return a->type == GEN_T_INT || a->type == GEN_T_FLOAT || a->type == GEN_T_SCALAR;
}

bool gen_arg_is_state(const gen_arg *a)
{
    return a->type == GEN_T_TENSOR && a->mutable_ && a->nullable;
}

const char *gen_option_member(const gen_arg *a)
{
    const gen_type_info *t = gen_type_of(a);

    /* State (Tensor(a!)?) is written: not const. */
    if (t->tensor && a->nullable && (a->mutable_ || gen_arg_is_state(a)))
        return "yg_tensor *";
    return a->nullable ? t->option_member_opt : t->option_member;
}

/* ---- writing code per type ---- */

const char *gen_default_c(const char *d)
{
    if (strcmp(d, "True") == 0)
        return "true";
    if (strcmp(d, "False") == 0)
        return "false";
    return d;
}

/* ---- a graph node's attributes: the boxed calls (emit_boxed.c) and the
 * graph derivatives (emit_graph_grad.c) read them ---- */

/* A C string literal for a quoted YAML default ('mean' -> "mean"). */
static char *str_literal(const char *d)
{
    size_t n = strlen(d);
    return gen_xprintf("\"%.*s\"", (int)(n - 2), d + 1);
}

static bool has_default(const gen_arg *a)
{
    return a->default_ != NULL && strcmp(a->default_, "None") != 0;
}

/* A pointer to the default of a scalar argument, for the readers' dflt. */
static char *scalar_default(const gen_arg *a, const char *ctype)
{
    if (!has_default(a))
        return gen_xstrdup("NULL");
    return gen_xprintf("&(const %s){%s}", ctype, gen_default_c(a->default_));
}

void gen_box_arg_add(gen_box_arg *b, char *expr)
{
    b->call[b->n_call++] = expr;
}

void gen_box_arg_free(gen_box_arg *b)
{
    gen_sb_free(&b->locals);
    gen_sb_free(&b->reads);
    for (int k = 0; k < b->n_call; k++)
        free(b->call[k]);
    b->n_call = 0;
}

/* A scalar argument of C type ctype (zero: its value before the read),
 * read by yg__box_<fn> (given dflt, its default, unless NULL), or, when a
 * is nullable, by yg__box_<fn>_opt into a buffer the call points to. */
static void box_scalar(gen_box_arg *b, const gen_arg *a, const char *ctype, const char *zero,
                       const char *fn, const char *dflt)
{
    const char *n = a->name, *sep = dflt != NULL ? ", " : "";

    if (dflt == NULL)
        dflt = "";
    if (a->nullable) {
        gen_sb_printf(&b->locals, "    %s %s_buf = %s;\n    const %s *%s = NULL;\n", ctype, n, zero,
                      ctype, n);
        gen_sb_printf(&b->reads,
                      "    YG_RETURN_IF_ERROR(yg__box_%s_opt(node, \"%s\"%s%s, &%s_buf, &%s));\n",
                      fn, n, sep, dflt, n, n);
    } else {
        gen_sb_printf(&b->locals, "    %s %s = %s;\n", ctype, n, zero);
        gen_sb_printf(&b->reads, "    YG_RETURN_IF_ERROR(yg__box_%s(node, \"%s\"%s%s, &%s));\n", fn,
                      n, sep, dflt, n);
    }
    gen_box_arg_add(b, gen_xstrdup(n));
}

/* Fills b for non-tensor argument a; returns false when a's type cannot
 * be boxed. */
bool gen_box_attr(const gen_arg *a, gen_box_arg *b)
{
    const char *n = a->name;
    char *dflt = NULL;
    int count = 0;

    switch (a->type) {
    case GEN_T_INT:
        dflt = scalar_default(a, "int64_t");
        if (a->enum_id > 0) { /* by name: a str attribute */
            gen_sb_printf(&b->locals, "    int64_t %s = 0;\n", n);
            gen_sb_printf(&b->reads,
                          "    YG_RETURN_IF_ERROR(yg__box_enum(node, \"%s\", yg_%s_name, %s, "
                          "&%s));\n",
                          n, gen_arg_enum(a)->cname, dflt, n);
            gen_box_arg_add(b, gen_xstrdup(n));
        } else {
            box_scalar(b, a, "int64_t", "0", "int", dflt);
        }
        break;
    case GEN_T_FLOAT:
    case GEN_T_SCALAR:
        dflt = scalar_default(a, "double");
        box_scalar(b, a, "double", "0", "double", dflt);
        break;
    case GEN_T_BOOL:
        dflt = scalar_default(a, "bool");
        gen_sb_printf(&b->locals, "    bool %s = false;\n", n);
        gen_sb_printf(&b->reads, "    YG_RETURN_IF_ERROR(yg__box_bool(node, \"%s\", %s, &%s));\n",
                      n, dflt, n);
        gen_box_arg_add(b, gen_xstrdup(n));
        break;
    case GEN_T_INT_LIST: {
        char *items = gen_xstrdup("NULL");
        char *len = gen_xstrdup("YG_BOX_REQUIRED");
        if (a->default_ != NULL) {
            char *list = gen_default_list(a->default_, a->fixed_len, false, &count);
            if (count > 0) {
                gen_sb_printf(&b->locals, "    static const int64_t %s_default[] = {%s};\n", n,
                              list);
                free(items);
                items = gen_xprintf("%s_default", n);
            }
            free(len);
            len = gen_xprintf("%d", count);
            free(list);
        }
        gen_sb_printf(&b->locals, "    yg_box_ints %s = {0};\n", n);
        gen_sb_printf(&b->reads,
                      "    YG_RETURN_IF_ERROR(yg__box_ints(node, \"%s\", %s, %s, %d, &%s));\n", n,
                      items, len, a->fixed_len, n);
        free(items);
        free(len);
        gen_box_arg_add(b, gen_xprintf("%s.items", n));
        gen_box_arg_add(b, gen_xprintf("%s.len", n));
        break;
    }
    case GEN_T_BOOL_LIST:
        if (a->default_ != NULL) {
            char *list = gen_default_list(a->default_, a->fixed_len, true, &count);
            gen_sb_printf(&b->locals, "    static const bool %s_default[] = {%s};\n", n, list);
            free(list);
        }
        gen_sb_printf(&b->locals, "    bool %s[%d];\n", n, a->fixed_len);
        gen_sb_printf(&b->reads, "    YG_RETURN_IF_ERROR(yg__box_bools(node, \"%s\", %s%s, %d, %s));\n",
                      n, a->default_ != NULL ? n : "NULL", a->default_ != NULL ? "_default" : "",
                      a->fixed_len, n);
        gen_box_arg_add(b, gen_xstrdup(n));
        break;
    case GEN_T_STR:
        dflt = a->default_ != NULL ? str_literal(a->default_) : gen_xstrdup("NULL");
        gen_sb_printf(&b->locals, "    const char *%s = NULL;\n", n);
        gen_sb_printf(&b->reads, "    YG_RETURN_IF_ERROR(yg__box_str(node, \"%s\", %s, &%s));\n", n,
                      dflt, n);
        gen_box_arg_add(b, gen_xstrdup(n));
        break;
    case GEN_T_SCALAR_TYPE:
        box_scalar(b, a, "yg_dtype", "YG_FLOAT32", "dtype", NULL);
        break;
    case GEN_T_DEVICE:
        box_scalar(b, a, "yg_device", "YG_CPU", "device", NULL);
        break;
    case GEN_T_GENERATOR:
        /* The tracer records only the default generator (NULL). */
        gen_box_arg_add(b, gen_xstrdup("NULL"));
        break;
    default:
        /* A type added to gen_type after this emitter: the op is refused
         * by the interpreter until a case boxes it. */
        return false;
    }
    free(dflt);
    return true;
}

/* ---- the tracer: how the generated wrapper records each argument as an
 * attribute of its node (emit_ops_c.c) ---- */

/* Emits the tracer call recording argument a, or returns false when the
 * tracer has no way to record its type. */
bool gen_type_emit_trace(gen_sb *sb, const gen_arg *a)
{
    const char *n = a->name;

    switch (a->type) {
    case GEN_T_TENSOR:
        gen_sb_printf(sb, "    yg__obs_input(%s);\n", n);
        return true;
    case GEN_T_TENSOR_LIST:
        /* The node's inputs in schema order: the list's length is what
         * the other tensor arguments leave (gen allows one list). */
        gen_sb_printf(sb,
                      "    for (int64_t i = 0; i < %s_len; i++)\n"
                      "        yg__obs_input(%s[i]);\n",
                      n, n);
        return true;
    case GEN_T_INT:
    case GEN_T_BOOL:
        if (a->enum_id > 0) /* by name (checked above: a value of the enum) */
            gen_sb_printf(sb, "    yg__obs_attr_str(\"%s\", yg_%s_name(%s));\n", n,
                          gen_arg_enum(a)->cname, n);
        else if (a->nullable)
            gen_sb_printf(sb, "    if (%s != NULL)\n        yg__obs_attr_int(\"%s\", *%s);\n", n,
                          n, n);
        else
            gen_sb_printf(sb, "    yg__obs_attr_int(\"%s\", %s);\n", n, n);
        return true;
    case GEN_T_INT_LIST:
        gen_sb_printf(sb, "    yg__obs_attr_ints(\"%s\", %s, %s_len);\n", n, n, n);
        return true;
    case GEN_T_BOOL_LIST:
        gen_sb_printf(sb, "    yg__obs_attr_bools(\"%s\", %s, %d);\n", n, n, a->fixed_len);
        return true;
    case GEN_T_FLOAT:
    case GEN_T_SCALAR:
        if (a->nullable)
            gen_sb_printf(sb, "    if (%s != NULL)\n        yg__obs_attr_float(\"%s\", *%s);\n",
                          n, n, n);
        else
            gen_sb_printf(sb, "    yg__obs_attr_float(\"%s\", %s);\n", n, n);
        return true;
    case GEN_T_SCALAR_TYPE:
    case GEN_T_DEVICE: /* enums: int attributes */
        if (a->nullable)
            gen_sb_printf(sb,
                          "    if (%s != NULL)\n        yg__obs_attr_int(\"%s\", (int64_t)*%s);\n",
                          n, n, n);
        else
            gen_sb_printf(sb, "    yg__obs_attr_int(\"%s\", (int64_t)%s);\n", n, n);
        return true;
    case GEN_T_STR:
        gen_sb_printf(sb, "    yg__obs_attr_str(\"%s\", %s);\n", n, n);
        return true;
    case GEN_T_GENERATOR:
        gen_sb_printf(sb, "    yg__obs_generator(\"%s\", %s);\n", n, n);
        return true;
    default:
        /* A type added after the tracer: refused at run time, not here,
         * so gen keeps building every op. */
        return false;
    }
}

/* ---- ONNX symbolics (emit_onnx.c): an attribute read from the node ---- */

/* Declares and reads argument a (a non-tensor argument of the op). */
void gen_type_onnx_read(gen_sb *decl, gen_sb *reads, const gen_arg *a)
{
    const char *n = a->name;
    char *dflt = NULL;

    switch (a->type) {
    case GEN_T_INT:
        dflt = has_default(a) ? gen_xprintf("&(const int64_t){%s}", a->default_)
                              : gen_xstrdup("NULL");
        if (a->enum_id > 0) { /* by name: a str attribute */
            gen_sb_printf(decl, "    int64_t %s = 0;\n", n);
            gen_sb_printf(reads,
                          "    YG_RETURN_IF_ERROR(yg__box_enum(node, \"%s\", yg_%s_name, %s, "
                          "&%s));\n",
                          n, gen_arg_enum(a)->cname, dflt, n);
        } else if (a->nullable) {
            gen_sb_printf(decl, "    int64_t %s_buf = 0;\n    const int64_t *%s = NULL;\n", n, n);
            gen_sb_printf(reads,
                          "    YG_RETURN_IF_ERROR(yg__box_int_opt(node, \"%s\", %s, &%s_buf, &%s));\n",
                          n, dflt, n, n);
        } else {
            gen_sb_printf(decl, "    int64_t %s = 0;\n", n);
            gen_sb_printf(reads, "    YG_RETURN_IF_ERROR(yg__box_int(node, \"%s\", %s, &%s));\n", n,
                          dflt, n);
        }
        break;
    case GEN_T_FLOAT:
    case GEN_T_SCALAR:
        dflt = has_default(a) ? gen_xprintf("&(const double){%s}", a->default_)
                              : gen_xstrdup("NULL");
        if (a->nullable) {
            gen_sb_printf(decl, "    double %s_buf = 0;\n    const double *%s = NULL;\n", n, n);
            gen_sb_printf(reads,
                          "    YG_RETURN_IF_ERROR(yg__box_double_opt(node, \"%s\", %s, &%s_buf, "
                          "&%s));\n",
                          n, dflt, n, n);
        } else {
            gen_sb_printf(decl, "    double %s = 0;\n", n);
            gen_sb_printf(reads, "    YG_RETURN_IF_ERROR(yg__box_double(node, \"%s\", %s, &%s));\n",
                          n, dflt, n);
        }
        break;
    case GEN_T_BOOL:
        dflt = has_default(a) ? gen_xprintf("&(const bool){%s}", gen_default_c(a->default_))
                              : gen_xstrdup("NULL");
        gen_sb_printf(decl, "    bool %s = false;\n", n);
        gen_sb_printf(reads, "    YG_RETURN_IF_ERROR(yg__box_bool(node, \"%s\", %s, &%s));\n", n,
                      dflt, n);
        break;
    case GEN_T_INT_LIST: {
        char *items = gen_xstrdup("NULL");
        char *len = gen_xstrdup("YG_BOX_REQUIRED");
        if (a->default_ != NULL) {
            int count = 0;
            char *list = gen_default_list(a->default_, a->fixed_len, false, &count);
            if (count > 0) {
                gen_sb_printf(decl, "    static const int64_t %s_default[] = {%s};\n", n, list);
                free(items);
                items = gen_xprintf("%s_default", n);
            }
            free(len);
            len = gen_xprintf("%d", count);
            free(list);
        }
        gen_sb_printf(decl, "    yg_box_ints %s = {0};\n", n);
        gen_sb_printf(reads, "    YG_RETURN_IF_ERROR(yg__box_ints(node, \"%s\", %s, %s, %d, &%s));\n",
                      n, items, len, a->fixed_len, n);
        free(items);
        free(len);
        break;
    }
    case GEN_T_STR: {
        size_t dl = a->default_ != NULL ? strlen(a->default_) : 0;
        dflt = a->default_ != NULL ? gen_xprintf("\"%.*s\"", (int)(dl - 2), a->default_ + 1)
                                   : gen_xstrdup("NULL");
        gen_sb_printf(decl, "    const char *%s = NULL;\n", n);
        gen_sb_printf(reads, "    YG_RETURN_IF_ERROR(yg__box_str(node, \"%s\", %s, &%s));\n", n, dflt,
                      n);
        break;
    }
    default:
        break; /* onnx_map.c accepts no other type where a value is read */
    }
    free(dflt);
}

/* Sets ONNX attribute attr of node o from argument x (int, bool, float,
 * Scalar, int[], str; an absent optional leaves it out). */
void gen_type_onnx_attr(gen_sb *body, const gen_arg *x, const char *attr)
{
    switch (x->type) {
    case GEN_T_INT:
    case GEN_T_BOOL:
        if (x->nullable)
            gen_sb_printf(body,
                          "    if (%s != NULL)\n"
                          "        YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, \"%s\", *%s));\n",
                          x->name, attr, x->name);
        else
            gen_sb_printf(body, "    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, \"%s\", %s));\n",
                          attr, x->name);
        break;
    case GEN_T_FLOAT:
    case GEN_T_SCALAR:
        if (x->nullable)
            gen_sb_printf(body,
                          "    if (%s != NULL)\n"
                          "        YG_RETURN_IF_ERROR(yg__onnx_attr_float(cx, o, \"%s\", *%s));\n",
                          x->name, attr, x->name);
        else
            gen_sb_printf(body,
                          "    YG_RETURN_IF_ERROR(yg__onnx_attr_float(cx, o, \"%s\", %s));\n",
                          attr, x->name);
        break;
    case GEN_T_INT_LIST:
        gen_sb_printf(body,
                      "    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, \"%s\", %s.items, "
                      "%s.len));\n",
                      attr, x->name, x->name);
        break;
    case GEN_T_STR:
        gen_sb_printf(body, "    YG_RETURN_IF_ERROR(yg__onnx_attr_str(cx, o, \"%s\", %s));\n",
                      attr, x->name);
        break;
    default: /* onnx_map.c refuses other types for name=arg */
        break;
    }
}

/* ---- the public C API (emit_common.c's gen_op_params): each argument's
 * parameters with their ownership and default comments ---- */

static char *default_comment(const gen_arg *a, const char *what)
{
    if (a->default_ == NULL)
        return what != NULL ? gen_xstrdup(what) : NULL;
    const char *d = a->default_;
    if (d[0] == '\'' || d[0] == '"') {
        /* default "max": a C string literal, whatever quotes the YAML used */
        size_t n = strlen(d);
        if (what != NULL)
            return gen_xprintf("%s; default \"%.*s\"", what, (int)(n - 2), d + 1);
        return gen_xprintf("default \"%.*s\"", (int)(n - 2), d + 1);
    }
    if (strcmp(d, "True") == 0)
        d = "true";
    else if (strcmp(d, "False") == 0)
        d = "false";
    else if (strcmp(d, "None") == 0)
        d = "NULL";
    if (what != NULL)
        return gen_xprintf("%s; default %s", what, d);
    return gen_xprintf("default %s", d);
}

static void push_list_param(gen_params *p, const gen_arg *a, const char *ctype)
{
    char *what = a->fixed_len > 0
                     ? gen_xprintf("borrowed, %s_len entries (must be %d)", a->name, a->fixed_len)
                     : gen_xprintf("borrowed, %s_len entries", a->name);
    gen_params_push(p, gen_xprintf("%s*%s", ctype, a->name), default_comment(a, what));
    free(what);
    gen_params_push(p, gen_xprintf("int64_t %s_len", a->name), NULL);
}

/* The parameter of Tensor argument a: state updated in place, in-out,
 * or borrowed (nullable when optional). */
static void push_tensor_param(gen_params *p, const gen_arg *a)
{
    if (gen_arg_is_state(a))
        gen_params_push(p, gen_xprintf("yg_tensor *%s", a->name),
                   default_comment(a, "nullable, in-out: updated in place"));
    else if (a->mutable_)
        gen_params_push(p, gen_xprintf("yg_tensor *%s", a->name), gen_xstrdup("in-out"));
    else if (a->nullable)
        gen_params_push(p, gen_xprintf("const yg_tensor *%s", a->name),
                   default_comment(a, "nullable, borrowed"));
    else
        gen_params_push(p, gen_xprintf("const yg_tensor *%s", a->name), gen_xstrdup("borrowed"));
}

/* The parameters of Tensor[] argument a: the array and its length; for
 * Tensor?[] the items, not the array, may be NULL. */
static void push_tensor_list_param(gen_params *p, const gen_arg *a)
{
    if (!a->nullable) {
        push_list_param(p, a, "const yg_tensor *const ");
        return;
    }
    char *what = gen_xprintf("borrowed, %s_len entries, each nullable", a->name);
    gen_params_push(p, gen_xprintf("const yg_tensor *const *%s", a->name),
                    default_comment(a, what));
    free(what);
    gen_params_push(p, gen_xprintf("int64_t %s_len", a->name), NULL);
}

/* The parameter of an enum argument a: the enum's type, its default
 * spelled as the enum's value. */
static void push_enum_param(gen_params *p, const gen_arg *a)
{
    const gen_enum *e = gen_arg_enum(a);
    char *v = a->default_ != NULL ? gen_enum_value_cname(e, atoi(a->default_)) : NULL;
    char *dc = v != NULL ? gen_xprintf("default %s", v) : NULL;

    free(v);
    gen_params_push(p, gen_xprintf("yg_%s %s", e->cname, a->name), dc);
}

/* The parameter of value argument a of C type ctype: by pointer (NULL
 * when not given) when optional. */
static void push_value_param(gen_params *p, const gen_arg *a, const char *ctype)
{
    char *decl = a->nullable ? gen_xprintf("const %s *%s", ctype, a->name)
                             : gen_xprintf("%s %s", ctype, a->name);

    gen_params_push(p, decl, default_comment(a, a->nullable ? "nullable" : NULL));
}

/* The parameters of argument a: one, or a list's two (items, length). */
void gen_type_api_params(gen_params *p, const gen_arg *a)
{
    switch (a->type) {
    case GEN_T_TENSOR:
        push_tensor_param(p, a);
        break;
    case GEN_T_TENSOR_LIST:
        push_tensor_list_param(p, a);
        break;
    case GEN_T_INT:
        if (a->enum_id > 0)
            push_enum_param(p, a);
        else
            push_value_param(p, a, "int64_t");
        break;
    case GEN_T_INT_LIST:
        push_list_param(p, a, "const int64_t ");
        break;
    case GEN_T_BOOL_LIST: {
        char *what = gen_xprintf("borrowed, %d entries", a->fixed_len);
        gen_params_push(p, gen_xprintf("const bool *%s", a->name), default_comment(a, what));
        free(what);
        break;
    }
    case GEN_T_FLOAT:
    case GEN_T_SCALAR:
        push_value_param(p, a, "double");
        break;
    case GEN_T_BOOL:
        gen_params_push(p, gen_xprintf("bool %s", a->name), default_comment(a, NULL));
        break;
    case GEN_T_SCALAR_TYPE:
        push_value_param(p, a, "yg_dtype");
        break;
    case GEN_T_STR:
        gen_params_push(p, gen_xprintf("const char *%s", a->name), default_comment(a, NULL));
        break;
    case GEN_T_DEVICE:
        push_value_param(p, a, "yg_device");
        break;
    case GEN_T_GENERATOR:
        gen_params_push(p, gen_xprintf("yg_generator *%s", a->name),
                   default_comment(a, "nullable (the default generator), advanced"));
        break;
    }
}

/* ---- options structs (emit_options.c): a defaulted argument read back ---- */

/* The call argument (after sep) for defaulted int, float, Scalar or bool
 * argument a: the option's value when set, else the default (by
 * pointer, from a static local in locals, for an optional one). */
static void default_value_arg(gen_sb *locals, gen_sb *call, const gen_arg *a, const char *sep)
{
    const char *n = a->name;
    const char *ct = gen_type_of(a)->value_ctype;

    if (!a->nullable)
        gen_sb_printf(call, "%so->%s.set ? o->%s.value : %s", sep, n, n,
                      gen_default_c(a->default_));
    else if (strcmp(a->default_, "None") == 0)
        gen_sb_printf(call, "%so->%s.set ? &o->%s.value : NULL", sep, n, n);
    else {
        gen_sb_printf(locals, "    static const %s %s_default = %s;\n", ct, n,
                      gen_default_c(a->default_));
        gen_sb_printf(call, "%so->%s.set ? &o->%s.value : &%s_default", sep, n, n, n);
    }
}

/* The call arguments (after sep) for defaulted int[] argument a, items
 * and length: the option's when set, else the default's (a static
 * local in locals) or NULL and 0 for an empty default. */
static void default_ints_arg(gen_sb *locals, gen_sb *call, const gen_arg *a, const char *sep)
{
    const char *n = a->name;
    int count = 0;
    char *items = gen_default_list(a->default_, a->fixed_len, false, &count);

    if (count > 0) {
        gen_sb_printf(locals, "    static const int64_t %s_default[] = {%s};\n", n, items);
        gen_sb_printf(call,
                      "%so->%s.set ? o->%s.items : %s_default\x01o->%s.set ? o->%s.len : %d",
                      sep, n, n, n, n, n, count);
    } else {
        gen_sb_printf(call, "%so->%s.set ? o->%s.items : NULL\x01o->%s.set ? o->%s.len : 0",
                      sep, n, n, n, n);
    }
    free(items);
}

/* The call argument(s) (after sep; \x01 between two) for defaulted
 * argument a, read from the options o, with any static default it
 * needs in locals. */
void gen_type_option_arg(gen_sb *locals, gen_sb *call, const gen_arg *a, const char *sep)
{
    const char *n = a->name;

    switch (a->type) {
    case GEN_T_INT:
    case GEN_T_FLOAT:
    case GEN_T_SCALAR:
    case GEN_T_BOOL:
        default_value_arg(locals, call, a, sep);
        break;
    case GEN_T_INT_LIST:
        default_ints_arg(locals, call, a, sep);
        break;
    case GEN_T_STR:
        if (strcmp(a->default_, "None") == 0)
            gen_sb_printf(call, "%so->%s", sep, n);
        else
            gen_sb_printf(call, "%so->%s != NULL ? o->%s : \"%.*s\"", sep, n, n,
                          (int)strlen(a->default_) - 2, a->default_ + 1);
        break;
    default: /* Tensor?, ScalarType, Device, Generator: NULL or the value */
        gen_sb_printf(call, "%so->%s", sep, n);
        break;
    }
}
