/*
 * onnx_map.h - the `onnx:` key of native_functions.yaml: its mapping
 * language, parsed and checked by onnx_map.c against the ONNX operator
 * table of onnx_ops.c, and emitted by emit_onnx.c as the symbolic
 * functions of generated/onnx/.  docs/onnx.md describes the language:
 *
 *   onnx: Relu(self)                                  inputs from Tensor arguments
 *   onnx: LeakyRelu(self, alpha=negative_slope)       attributes from arguments
 *   onnx: ReduceSum(self, ints(dim), keepdims=keepdim)  int[] argument as an int64 initializer input
 *   onnx: Mul(self, scalar(other))                    Scalar argument as a 0-d initializer of the
 *                                                     previous input's dtype (scalar(other, self): self's)
 *   onnx: Gather(weight, indices, ignore(padding_idx))  argument that does not change the forward value
 *   onnx: Add(self, other) where alpha == 1           argument the export accepts only at that value
 *   onnx: Softmax(self, axis=dim)
 *   onnx: custom                                      handwritten in runtime/onnx/ (yg__onnx_sym_<cname>)
 *   onnx: unsupported("why")                          not exportable, with the reason
 *
 * Every argument of the op must appear in the mapping (as an input, an
 * attribute value or a `where` guard); an op without the key is reported
 * by the coverage test, not by gen (so small test specs need none).
 */
#ifndef YAGRAD_GEN_ONNX_MAP_H
#define YAGRAD_GEN_ONNX_MAP_H

#include "gen.h"

/* One operator of the ONNX default domain at the target opset. */
typedef struct gen_onnx_schema {
    const char *name;
    int min_opset; /* the lowest opset with the same inputs and attributes */
    int min_inputs, max_inputs;   /* max -1: variadic */
    int min_outputs, max_outputs; /* max -1: variadic */
    int out_type_input;           /* the input whose type output 0 has (Add: 0), or -1 */
    const char *const *inputs;    /* NULL-terminated */
    const char *const *attrs;     /* NULL-terminated */
} gen_onnx_schema;

extern const gen_onnx_schema gen_onnx_schemas[];
extern const int gen_n_onnx_schemas;

typedef enum gen_onnx_form {
    GEN_ONNX_UNMAPPED,    /* no onnx: key */
    GEN_ONNX_OP,          /* a generated symbolic */
    GEN_ONNX_CUSTOM,      /* handwritten */
    GEN_ONNX_UNSUPPORTED, /* unsupported("why") */
} gen_onnx_form;

typedef enum gen_onnx_item_kind {
    GEN_ONNX_IN_TENSOR,  /* a Tensor argument: the node's input */
    GEN_ONNX_IN_LIST,    /* a Tensor[] argument: all of its inputs */
    GEN_ONNX_IN_SCALAR,  /* scalar(arg): a 0-d initializer of the first input's dtype */
    GEN_ONNX_IN_INTS,    /* ints(arg): a 1-d int64 initializer */
    GEN_ONNX_IGNORE,     /* ignore(arg): no effect on the forward value */
    GEN_ONNX_ATTR_ARG,   /* name=arg */
    GEN_ONNX_ATTR_INT,   /* name=123 */
    GEN_ONNX_ATTR_FLOAT, /* name=1.5 */
    GEN_ONNX_ATTR_STR,   /* name="s" */
} gen_onnx_item_kind;

typedef struct gen_onnx_item {
    gen_onnx_item_kind kind;
    char *attr;    /* the ONNX attribute name (attributes only) */
    char *arg;     /* the op argument it reads, or NULL for literals */
    int arg_index; /* into op->schema.args, or -1 */
    int like_index; /* IN_SCALAR: the tensor argument whose dtype it takes */
    char *literal; /* the literal's text (ATTR_INT/FLOAT/STR, without quotes) */
    gen_loc loc;
} gen_onnx_item;

typedef struct gen_onnx_guard {
    char *arg;
    int arg_index;
    char *literal; /* a number, True or False */
    gen_loc loc;
} gen_onnx_guard;

typedef struct gen_onnx_map {
    gen_onnx_form form;
    char *op_type;                 /* GEN_ONNX_OP */
    const gen_onnx_schema *schema; /* GEN_ONNX_OP */
    gen_onnx_item *items;
    int n_items;
    gen_onnx_guard *guards;
    int n_guards;
    char *reason; /* GEN_ONNX_UNSUPPORTED */
} gen_onnx_map;

/* Parses and checks the onnx: key of every valid op of model, reporting
 * located errors; returns model->n_ops maps (UNMAPPED for ops without the
 * key or with errors).  Free with gen_onnx_maps_free. */
gen_onnx_map *gen_onnx_check(const gen_model *model);
void gen_onnx_maps_free(gen_onnx_map *maps, int n);

/* emit_onnx.c: onnx/<section>.c (the generated symbolics of a section's
 * ops) and onnx/table.c (yg__onnx_symbolics[], parallel to yg__ops[]). */
char *gen_emit_onnx_c(const gen_model *model, const gen_onnx_map *maps, int section);
char *gen_emit_onnx_table_c(const gen_model *model, const gen_onnx_map *maps);
char *gen_emit_onnx_gen_h(const gen_model *model, const gen_onnx_map *maps);

#endif /* YAGRAD_GEN_ONNX_MAP_H */
