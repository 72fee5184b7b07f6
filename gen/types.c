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
