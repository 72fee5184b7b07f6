/*
 * gen.h - the model yagrad-gen builds from the specs and the interfaces of
 * its stages: load (yaml_load.c), parse signatures (schema.c), analyse
 * formulas with libclang (formula_*.c) and emit (emit_*.c) through a string builder that writes files only when their
 * text changed (out.c).  Errors are collected by diag.c.  The spec language
 * and the error catalogue are documented in docs/spec-reference.md.
 *
 * Ownership: a gen_model owns every string and array reachable from it;
 * gen_model_free releases all of it.  Every location is a display location
 * ("specs/<file>.yaml", 1-based line and column) so messages and generated
 * comments never depend on the directory gen was given.
 */
#ifndef YAGRAD_GEN_H
#define YAGRAD_GEN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GEN_NATIVE_FILE "specs/native_functions.yaml"
#define GEN_DERIV_FILE "specs/derivatives.yaml"

#if defined(__GNUC__)
#define GEN_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define GEN_PRINTF(a, b)
#endif

/* ---- locations and diagnostics (diag.c) ---- */

typedef struct gen_loc {
    const char *file; /* static display path, GEN_NATIVE_FILE or GEN_DERIV_FILE */
    int line;         /* 1-based; 0 when unknown */
    int col;          /* 1-based; 0 when unknown */
} gen_loc;

/* Prints "file:line:col: error: message" to stderr and counts it. */
void gen_error(gen_loc loc, const char *fmt, ...) GEN_PRINTF(2, 3);
/* The same with the entry named first: "file:line:col: error: sum.dim: message".
 * entry may be NULL. */
void gen_error_in(const char *entry, gen_loc loc, const char *fmt, ...) GEN_PRINTF(3, 4);
int gen_error_count(void);
/* Levenshtein distance between a and b.  Cannot fail. */
size_t gen_edit_distance(const char *a, const char *b);
/* The candidate nearest to want, when it is near enough to be the name
 * meant (distance <= 2, and less than half of want's length); NULL
 * otherwise.  For "did you mean" hints. */
const char *gen_nearest_name(const char *want, const char *const *candidates, int n);
/* Zeroes the count; with be_quiet, errors are counted but not printed (the
 * fuzz harness and the benchmark run gen many times in one process). */
void gen_diag_reset(bool be_quiet);

/* ---- memory and strings (out.c) ---- */

/* Allocation that cannot fail: on exhaustion gen prints a message and exits
 * with status 1 (there is nothing useful to recover in a build tool). */
void *gen_xmalloc(size_t n);
void *gen_xcalloc(size_t n, size_t size);
void *gen_xrealloc(void *p, size_t n);
char *gen_xstrdup(const char *s);
char *gen_xstrndup(const char *s, size_t n);
char *gen_xprintf(const char *fmt, ...) GEN_PRINTF(1, 2);

/* A growable string; zero-initialise before use. */
typedef struct gen_sb {
    char *buf;
    size_t len;
    size_t cap;
} gen_sb;

void gen_sb_puts(gen_sb *sb, const char *s);
void gen_sb_putn(gen_sb *sb, const char *s, size_t n);
void gen_sb_printf(gen_sb *sb, const char *fmt, ...) GEN_PRINTF(2, 3);
void gen_sb_vprintf(gen_sb *sb, const char *fmt, va_list ap) GEN_PRINTF(2, 0);
/* Returns the text ("" when empty) and resets sb; the caller frees it. */
char *gen_sb_take(gen_sb *sb);
void gen_sb_free(gen_sb *sb);

/* Writes text to dir/relpath (creating directories) unless the file already
 * holds exactly that text.  Returns false and reports on I/O failure. */
bool gen_write_if_changed(const char *dir, const char *relpath, const char *text);

/* ---- signatures (schema.c) ---- */

typedef enum gen_type {
    GEN_T_TENSOR,      /* Tensor, Tensor?, Tensor(a), Tensor(a!) */
    GEN_T_TENSOR_LIST, /* Tensor[], Tensor?[] (nullable: items may be NULL) */
    GEN_T_INT,         /* int, int? */
    GEN_T_INT_LIST,    /* int[], int[N] */
    GEN_T_FLOAT,       /* float, float? */
    GEN_T_BOOL,        /* bool */
    GEN_T_BOOL_LIST,   /* bool[N] */
    GEN_T_SCALAR,      /* Scalar, Scalar? */
    GEN_T_SCALAR_TYPE, /* ScalarType, ScalarType? */
    GEN_T_STR,         /* str */
    GEN_T_DEVICE,      /* Device, Device? */
    GEN_T_GENERATOR,   /* Generator? (always nullable: NULL is the default generator) */
} gen_type;

typedef struct gen_arg {
    char *name;
    gen_type type;
    bool nullable;     /* Tensor?, int?, float?, Scalar?, ScalarType?, Device?, Generator?,
                          Tensor?[] */
    int fixed_len;     /* N of int[N] / bool[N]; 0 for int[] */
    char *alias;       /* "a" for Tensor(a) / Tensor(a!), else NULL */
    bool mutable_;     /* Tensor(a!) */
    char *default_;    /* default text ("1", "False", "None", "[]"), or NULL */
    bool kwarg_only;   /* after `*` */
    int pos;           /* byte offset of its type in the func string */
    int name_pos;      /* byte offset of its name */
    int enum_id;       /* an enum type: its index in the model's enums + 1 (the
                          arg is a GEN_T_INT whose default_ is the value's
                          number); 0 for every other type */
} gen_arg;

typedef struct gen_return {
    char *name;    /* "values" for `-> (Tensor values, ...)`, else NULL */
    char *alias;   /* as in gen_arg */
    bool mutable_;
    bool is_list;  /* Tensor[] / Tensor(a)[]: a list of any length (the only return) */
    int pos;       /* byte offset in the func string */
} gen_return;

typedef struct gen_schema {
    char *name;      /* "sum", "add_" */
    char *overload;  /* "dim", or NULL */
    gen_arg *args;
    int n_args;
    gen_return *returns;
    int n_returns;
    int returns_pos; /* byte offset of what follows "->" */
} gen_schema;

/* Parses a func string.  loc is the location of its first character; errors
 * are reported at the exact column.  Returns false on error (schema is then
 * cleared). */
bool gen_schema_parse(const char *text, gen_loc loc, gen_schema *schema);
void gen_schema_free(gen_schema *schema);
/* The enum types gen_schema_parse knows besides the built-in ones (the
 * model's `- enum:` items; borrowed until the next call).  n 0: none. */
struct gen_enum;
void gen_schema_set_enums(const struct gen_enum *enums, int n);
/* The enum type of an argument with enum_id > 0 (from the set above). */
const struct gen_enum *gen_arg_enum(const gen_arg *arg);
const char *gen_type_name(const gen_arg *arg);
/* Whether arg is Tensor(a!)?: optional state (running statistics) that a
 * functional op updates in place and does not return. */
bool gen_arg_is_state(const gen_arg *arg);

/* ---- argument types per target (types.c) ----
 *
 * How each argument type appears in every place gen writes it: the public
 * C API, the kernels, a graph node's attributes (tracer and boxed calls),
 * an options struct, a backward node's saved fields, the formula unit
 * (derivatives and their IR form) and the ONNX symbolics.  Emitters ask
 * here instead of testing gen_type themselves, so a new argument type is a
 * row of the table and a case in the few functions below. */
typedef struct gen_type_info {
    bool tensor;           /* one tensor: an input of a graph node */
    bool tensor_list;      /* Tensor[]: the node's remaining inputs */
    bool has_len;          /* the C API passes (items, <name>_len) */
    bool formula_readable; /* derivative formulas may read it (and nodes save it) */
    const char *value_ctype;     /* the C type of a value of it: a saved field, a default */
    const char *unit_ctype;      /* its spelling in the formula unit */
    const char *unit_ctype_opt;  /* the same for the optional form */
    const char *pointwise_ctype; /* in the pointwise unit */
    const char *option_member;     /* an options struct's member (yagrad/options.h),
                                      NULL: cannot be one */
    const char *option_member_opt; /* the same for the optional form */
} gen_type_info;

/* The row of a's type. */
const gen_type_info *gen_type_of(const gen_arg *a);
/* Tensor or Tensor? (a Tensor(a!) too): one tensor input. */
bool gen_arg_is_tensor(const gen_arg *a);
/* Tensor[] or Tensor?[]. */
bool gen_arg_is_tensor_list(const gen_arg *a);
/* Either: an argument that is a graph node's input, not an attribute. */
bool gen_arg_is_input(const gen_arg *a);
/* int, int[], bool...: the arguments each target reads by name. */
bool gen_arg_is_int(const gen_arg *a);
bool gen_arg_is_int_list(const gen_arg *a);
bool gen_arg_is_bool_list(const gen_arg *a);
bool gen_arg_is_generator(const gen_arg *a);
bool gen_arg_is_device(const gen_arg *a);
bool gen_arg_is_dtype(const gen_arg *a);
/* int, float or Scalar (optional or not): a number. */
bool gen_arg_is_number(const gen_arg *a);
/* The member type of a in an options struct (yg_<op>_options), or NULL
 * when a member's zero value could not mean "unset" (a plain dtype or
 * device: 0 is float32, cpu) or the type has no member form. */
const char *gen_option_member(const gen_arg *a);
/* The C spelling of a scalar default: True/False as true/false, numbers
 * as written. */
const char *gen_default_c(const char *d);
/* Emits the tracer call that records argument a as an attribute of the
 * op's node (an input for a tensor), or returns false when the tracer has
 * no way to record its type. */
bool gen_type_emit_trace(gen_sb *sb, const gen_arg *a);
/* Declares (decl) and reads (reads) non-tensor argument a of an ONNX
 * symbolic from the node's attributes, with its schema default. */
void gen_type_onnx_read(gen_sb *decl, gen_sb *reads, const gen_arg *a);
/* Emits the call that sets ONNX attribute attr of node o from argument x
 * (read by gen_type_onnx_read). */
void gen_type_onnx_attr(gen_sb *body, const gen_arg *x, const char *attr);
/* The call argument(s) (after sep; \x01 between two) of yg_<op>_opt for
 * defaulted argument a, read from the options o, with any static default
 * it needs declared in locals. */
void gen_type_option_arg(gen_sb *locals, gen_sb *call, const gen_arg *a, const char *sep);

/* ---- the model ---- */

typedef enum gen_op_kind {
    GEN_OP_POINTWISE,
    GEN_OP_KERNEL,
    GEN_OP_COMPOSITE,
} gen_op_kind;

/* What the op does to its arguments, derived from alias annotations. */
typedef enum gen_op_form {
    GEN_FORM_FUNCTIONAL, /* returns new tensors */
    GEN_FORM_INPLACE,    /* add_(Tensor(a!) self, ...) -> Tensor(a!) */
    GEN_FORM_OUT,        /* writes keyword-only Tensor(a!) arguments */
    GEN_FORM_VIEW,       /* returns Tensor(a) of a Tensor(a) argument */
} gen_op_form;

struct gen_deriv;

typedef struct gen_op {
    char *func;        /* the exact func string */
    bool valid;        /* the signature parsed and the entry is consistent */
    gen_loc loc;       /* of the list entry */
    gen_loc func_loc;  /* of the func string's first character */
    gen_schema schema;
    char *full_name;   /* "sum.dim" */
    char *cname;       /* "sum_dim", "add_" (C name without yg_) */
    char *display;     /* "sum", "add_": the name in messages */
    gen_op_kind kind;
    gen_op_form form;
    char *pointwise;
    gen_loc pointwise_loc;
    /* `pointwise_int:` the expression of the int64 and int32 loops of an op
     * whose `pointwise:` expression is floating only (calls, '/'): C
     * integer arithmetic and the yg_int_* functions of core/intmath.h
     * (division and remainder by Python's rules).  NULL when absent. */
    char *pointwise_int;
    gen_loc pointwise_int_loc;
    /* `int_divisor:` the Tensor or Scalar argument that divides in the
     * integer loops; the kernel fails naming it when it holds a 0 and the
     * compute dtype is an integer one.  -1 when absent. */
    char *int_divisor;
    gen_loc int_divisor_loc;
    int int_divisor_arg;
    char *cpu_kernel;
    gen_loc cpu_kernel_loc;
    /* The CUDA kernel: cpu_kernel's name where one function serves both
     * devices, else a function of the CUDA module (runtime/cuda/ops.h)
     * that the generated table finds there by name. */
    char *cuda_kernel;
    gen_loc cuda_kernel_loc;
    /* `structured: true`: the kernels only fill an output that the op's
     * meta function (yg__meta_<cname>: checks, output shape and dtype,
     * allocation) made, once for every device; each kernel then takes
     * `yg_tensor *out`.  The CUDA kernel lives in the CUDA module and is
     * found there by name. */
    bool structured;
    gen_loc structured_loc;
    char **tags;
    gen_loc *tag_locs;
    int n_tags;
    char *onnx;
    gen_loc onnx_loc;
    uint32_t dtypes;     /* bit i: gen_dtypes[i] is claimed (gen_resolve_dtypes) */
    bool dtypes_given;   /* the entry has a 'dtypes:' key */
    gen_loc dtypes_loc;
    gen_loc dtype_locs[32]; /* of each claimed dtype's name, by bit */
    bool variant_function; /* variants: function (the default) */
    bool variant_method;   /* variants: method (no C form; validated only) */
    struct gen_deriv *deriv; /* borrowed; NULL without a derivative entry */
    /* `derivative: not_differentiable("why")`: an op that has no formula on
     * purpose (a helper of backward formulas); its wrapper refuses inputs
     * that require grad, saying why.  NULL when absent. */
    char *no_derivative;
    gen_loc no_derivative_loc;
    bool derivative_key; /* the entry has a 'derivative' key, valid or not */
    bool deriv_rejected; /* a derivatives.yaml entry names it but was rejected */
    /* The op's doc comment: the `#` lines directly above its `- func:` line
     * (no blank line between), each without its '#' and one space after
     * it, joined by '\n'; an empty line is a paragraph break.  The public
     * header prints it under the op's schema.  NULL when the entry has
     * none (tests/gen/check_op_docs.py lists such ops). */
    char *doc;
    int section;         /* index into gen_model.sections; -1 before the first */
} gen_op;

typedef struct gen_formula {
    char *input;       /* argument name */
    int arg_index;     /* into op->schema.args */
    int edge;          /* edge index, or -1 for non_differentiable; for a
                          Tensor[] input the first of its items' edges,
                          which come last (one per item, counted at
                          record time) */
    bool list;         /* the input is a Tensor[]: the formula returns a
                          Tensor[], one gradient per item */
    char *expr;        /* NULL for non_differentiable and not_implemented */
    bool not_implemented; /* not_implemented("reason") */
    char *reason;      /* its reason */
    int group;         /* formulas of one key ("input, weight: f") share it */
    int group_index;   /* position of input in its key */
    int group_size;    /* names in its key */
    gen_loc loc;       /* of the expression's first character */
    gen_loc key_loc;   /* of the input key */
    bool has_error;    /* the entry is malformed (not_implemented() without a reason) */
} gen_formula;

typedef struct gen_deriv {
    char *name_text;   /* the `name:` string */
    gen_loc loc;       /* of the list entry */
    gen_loc name_loc;
    gen_op *op;        /* borrowed */
    gen_formula *formulas; /* in signature order after resolution */
    int n_formulas;
    int n_groups;
    char *no_double_backward; /* double_backward: not_implemented("why"): why */
    char *no_graph_grad; /* graph_grad: not_implemented("why"): why */
    bool has_output_diff;  /* output_differentiability was given */
    bool *output_diff;     /* one per return; after resolution always set
                              (all true when the key is absent) */
    int n_output_diff;
    gen_loc output_diff_loc;
    int n_edges;
} gen_deriv;

/* A `- section: <name>` item of native_functions.yaml: every following op
 * belongs to it until the next one.  The name is the stem of the section's
 * output files (see "Output is split by section" below). */
typedef struct gen_section {
    char *name;          /* a slug: [a-z][a-z0-9_]* */
    gen_loc loc;         /* of the name */
    bool has_pointwise;  /* some op of it has a `pointwise:` expression */
} gen_section;

/* `- enum: Reduction` with `values: [none, mean, sum]`: an argument type
 * whose C form is `yg_reduction` (YG_REDUCTION_NONE = 0, ...) in the
 * public API and an int64_t in the kernels.  In the IR the value is a str
 * attribute naming it (`mse_loss[reduction="none"]`): the tracer records
 * yg_<cname>_name(v) and yg__box_enum (runtime/jit/ir/boxing.c) maps the name
 * back to the number. */
typedef struct gen_enum {
    char *name;    /* "Reduction": the type's spelling in signatures */
    char *cname;   /* "reduction": yg_reduction, YG_REDUCTION_* */
    char **values; /* "none", "mean", "sum": lowercase slugs, value i = i */
    int n_values;
    char *doc; /* the comment above the item (as gen_op's doc), or NULL */
    gen_loc loc;
} gen_enum;

typedef struct gen_model {
    gen_section *sections; /* in YAML order */
    int n_sections;
    gen_op *ops;
    int n_ops;
    gen_deriv *derivs;
    int n_derivs;
    bool unreadable; /* a YAML file did not parse: nothing after loading runs */
    gen_enum *enums;
    int n_enums;
} gen_model;

/* yaml_load.c: loads both files into model; reports located errors. */
void gen_load_native(const char *path, gen_model *model);
void gen_load_derivatives(const char *path, gen_model *model);
/* The same from memory (text need not be NUL-terminated). */
void gen_load_native_text(const char *text, size_t len, gen_model *model);
void gen_load_derivatives_text(const char *text, size_t len, gen_model *model);
/* Resolves names, C names, derivative entries and edges (after loading). */
void gen_model_resolve(gen_model *model);
/* After gen_resolve_dtypes: every functional or in-place op that computes
 * floating values with a kernel has a derivative entry or says why not
 * (`derivative:`), so a missing formula is found when gen runs, not when
 * an input first requires grad.  Views and out variants are exempt. */
void gen_check_derivatives_present(const gen_model *model);

/* The dtypes an op may claim with 'dtypes:', in the order of their bits in
 * gen_op.dtypes.  A new runtime dtype is one more row of gen_dtypes in
 * model.c. */
typedef struct gen_dtype {
    const char *name;      /* "float32": the spelling in the YAML */
    const char *enum_name; /* "YG_FLOAT32": the runtime's yg_dtype */
} gen_dtype;
extern const gen_dtype gen_dtypes[];
extern const int gen_n_dtypes;
/* The index of name in gen_dtypes, or -1. */
int gen_dtype_lookup(const char *name);
/* "float32, float64, int64 or bool", for messages.  Caller frees. */
char *gen_dtype_choices(void);
void gen_model_free(gen_model *model);
void gen_model_free_op(gen_op *op);
const gen_op *gen_model_find_cname(const gen_model *model, const char *cname);

/* ---- the plans: what the analyses found (plans.c) ----
 *
 * The model holds what the specs say and what resolution derives from
 * them (C names, kinds, forms, edges).  It is written by loading and
 * resolution only, then read as `const gen_model *`: each analysis writes
 * its own table keyed by the model's op or derivative entry, and an
 * emitter names in its signature the tables it reads.  (The one write
 * after the first analysis is gen_resolve_dtypes, which needs the
 * pointwise plan to know which loops exist; it runs before any other
 * analysis.) */

/* Per op with a `pointwise:` expression (formula_unit.c's pointwise
 * unit). */
typedef struct gen_pointwise_plan {
    bool int_safe; /* the expression may run on int64 (no calls, no '/') */
    /* The loop bodies gen writes from the expression, [0] for float64 and
     * integer loops, [1] for float32 loops (whose floating literals get an
     * f suffix, so float math stays float): body[k][0] alone is the value;
     * when the expression is a top-level `c ? a : b` whose arms call math
     * functions, body[k] is {c, a, b} and loops evaluate both arms before
     * the choice (GCC 12 does not vectorise a call under a condition, and
     * the arms are pure).  NULL when the expression was not analysed. */
    char *body[2][3];
} gen_pointwise_plan;

typedef enum gen_save_kind {
    GEN_SAVE_TENSOR,
    GEN_SAVE_SIZES,
    GEN_SAVE_NUMEL,
    GEN_SAVE_DTYPE,    /* a Tensor read only through dtype(): its yg_dtype */
    GEN_SAVE_DEVICE,   /* a Tensor read only through device() / device_index():
                          its yg_device and index */
    GEN_SAVE_VALUE,    /* int, float, Scalar, bool, ScalarType(?): copied */
    GEN_SAVE_INT_LIST, /* int[]: copied into a yg_saved_int_list */
    GEN_SAVE_TENSOR_LIST, /* Tensor[] / Tensor?[]: a yg_saved_tensor_list */
    GEN_SAVE_LIST_SIZES,  /* list_sizes(<Tensor[]>, <int arg>): each item's size
                             along that dim, in a yg_saved_int_list */
} gen_save_kind;

typedef struct gen_save {
    char *field;       /* node field: "self", "self_sizes", "self_dtype", "alpha" */
    char *arg;         /* the argument (or "result", "result1"...) it comes from */
    int arg_index;     /* index into schema.args, or -1 for an output */
    int output_nr;     /* for an output (results[i]): i; else -1 */
    gen_save_kind kind;
    uint64_t used_by;  /* bit e: formula of edge e reads it */
    bool old_value;    /* in-place self read by a formula: a copy taken
                          before the kernel writes it */
    char *at;          /* GEN_SAVE_LIST_SIZES: the int argument naming the dim */
} gen_save;

/* Per formula of a derivative entry (formula_unit.c's formula unit). */
typedef struct gen_formula_plan {
    char *grad_name;     /* the local holding its gradient: grad_self (every formula
                            with an expression or not_implemented) */
    char *lowered;       /* straight-line C, indented 8 spaces; NULL unless lowered */
    uint64_t grads_read; /* bit i: the formula reads grads[i] (grad is grads[0]) */
    bool failed;         /* an error was reported in it */
} gen_formula_plan;

/* Per derivative entry: its backward node, what the forward wrapper saves
 * for it and the C of its apply function. */
typedef struct gen_backward_plan {
    gen_formula_plan *formulas; /* parallel to the entry's formulas */
    int n_formulas;             /* the entry's */
    gen_save *saves;            /* in field order (gen__sort_saves) */
    int n_saves;
    uint64_t grads_used;  /* bit i: some formula reads grads[i] */
    bool reads_grad_list; /* an op returning Tensor[]: a formula reads grads whole */
    char **temps;         /* temporaries the lowered formulas declare */
    int n_temps;
} gen_backward_plan;

/* Per derivative entry: its formulas as IR-building C
 * (runtime/jit/autodiff/graph_grad.h), the symbolic derivative that
 * autodiff subgraphs use. */
typedef struct gen_symbolic_plan {
    char **graph_grad; /* parallel to the entry's formulas, indented 8 spaces;
                          NULL where the formula has none */
    int n_formulas;    /* the entry's */
    int n_df_temps;    /* temporaries the lowering named */
} gen_symbolic_plan;

/* The tables of one run, each parallel to the model's array it is keyed
 * by.  main.c owns them; gen_plans_free releases all. */
struct gen_onnx_map;
typedef struct gen_plans {
    gen_pointwise_plan *pointwise; /* [model->n_ops] */
    gen_backward_plan *backward;   /* [model->n_derivs] */
    gen_symbolic_plan *symbolic;   /* [model->n_derivs] */
    struct gen_onnx_map *onnx;     /* [model->n_ops]: gen_onnx_check (onnx_map.h) */
    int n_ops;
    int n_derivs;
} gen_plans;

void gen_plans_init(gen_plans *plans, const gen_model *model);
void gen_plans_free(gen_plans *plans);
/* The index of d in model->derivs: the key of its backward and symbolic
 * plans. */
int gen_deriv_index(const gen_model *model, const gen_deriv *d);

/* The gen_dtypes bits of the loops emit_pointwise.c writes for op, whose
 * pointwise plan is pp. */
uint32_t gen_pointwise_loop_dtypes(const gen_op *op, const gen_pointwise_plan *pp);
/* Gives each op without 'dtypes:' its default claim and checks given
 * claims against what gen can emit (pointwise: the ops' pointwise plans,
 * [model->n_ops]).  The last write to the model. */
void gen_resolve_dtypes(gen_model *model, const gen_pointwise_plan *pointwise);

/* formula_unit.c: parses pointwise expressions and formulas with libclang,
 * reports located errors, infers saves and lowers formulas. */
/* The pointwise analysis: fills plans->pointwise. */
void gen_analyse_pointwise(const gen_model *model, gen_plans *plans);
/* The formula analysis: fills plans->backward and plans->symbolic. */
void gen_analyse_formulas(const gen_model *model, gen_plans *plans);
/* Every analysis, in order (the pointwise one, gen_resolve_dtypes,
 * gen_check_derivatives_present, the formulas); plans must come from
 * gen_plans_init.  After it the model is only read. */
void gen_analyse(gen_model *model, gen_plans *plans);

/* Output is split by section (the `- section:` items of
 * native_functions.yaml, grouped by meaning) so that editing one op
 * recompiles one or two files, not the library, and each file stays short
 * enough to read: include/yagrad/ops_<section>.h (the declarations),
 * api/<section>.c (the yg_<op> wrappers), nodes/<section>.{h,c} (the
 * backward nodes of its ops' derivatives.yaml entries), boxed/<section>.c
 * and, for a section with a pointwise op, kernels/<section>.c (generated
 * CPU kernels) and loops/<section>.c (their loops, compiled per CPU
 * capability).  The build asks gen for the set at configure time
 * (--list-outputs, from cmake/GenFiles.cmake; the table is in main.c). */

/* emit_*.c: each returns the full text of one generated file. */
/* A section argument is an index into model->sections. */
char *gen_emit_ops_h(const gen_model *model);
char *gen_emit_ops_section_h(const gen_model *model, int section);
char *gen_emit_api_c(const gen_model *model, const gen_backward_plan *backward, int section);
char *gen_emit_nodes_h(const gen_model *model, const gen_backward_plan *backward, int section);
char *gen_emit_nodes_c(const gen_model *model, const gen_backward_plan *backward, int section);
char *gen_emit_pointwise_c(const gen_model *model, int section);
char *gen_emit_loops_c(const gen_model *model, const gen_pointwise_plan *pointwise, int section);
char *gen_emit_cuda_cu(const gen_model *model, const gen_pointwise_plan *pointwise, int section);
char *gen_emit_generated_int_h(const gen_model *model);
char *gen_emit_kernels_h(const gen_model *model, int section);
/* decls/<section>.h: the declarations of the handwritten functions (meta,
 * device implementations, composites) behind the section's ops. */
char *gen_emit_decls_h(const gen_model *model, int section);
/* op_ids.h: YG_OP_<op>, each op's index in yg__ops[]. */
char *gen_emit_op_ids_h(const gen_model *model);
char *gen_emit_enums_h(const gen_model *model);
/* emit_options.c: the short form yg_<op>_opt of an op with several
 * defaulted arguments (its options struct and function). */
bool gen_op_has_options(const gen_op *op);
void gen_emit_options_decl(gen_sb *sb, const gen_op *op);
void gen_emit_options_def(gen_sb *sb, const gen_op *op);
char *gen_emit_registry_c(const gen_model *model);
/* emit_boxed.c: boxed/<section>.c, boxed/boxed.h, boxed/table.c. */
char *gen_emit_boxed_c(const gen_model *model, int section);
char *gen_emit_boxed_h(const gen_model *model);
char *gen_emit_boxed_table_c(const gen_model *model);

/* emit_graph_grad.c: graph_grad/<section>.c, graph_grad/graph_grad.h,
 * graph_grad/table.c (the derivative formulas as IR builders). */
char *gen_emit_graph_grad_c(const gen_model *model, const gen_backward_plan *backward,
                            const gen_symbolic_plan *symbolic, int section);
char *gen_emit_graph_grad_h(const gen_model *model);
char *gen_emit_graph_grad_table_c(const gen_model *model, const gen_symbolic_plan *symbolic);
/* Whether d, whose symbolic plan is sp, has a graph derivative (every
 * formula lowered to one). */
bool gen_deriv_has_graph_grad(const gen_deriv *d, const gen_symbolic_plan *sp);

/* emit_fuser.c: fuser/table.c (the pointwise expressions for the fuser). */
char *gen_emit_fuser_table_c(const gen_model *model, const gen_pointwise_plan *pointwise);

/* types.c: how a non-tensor argument is read from a graph node's
 * attributes (the helpers of runtime/jit/ir/boxing.h, with the schema's
 * default): C declarations, the reading statements (each a
 * YG_RETURN_IF_ERROR on a `node` in scope) and the C call arguments the
 * value becomes (two for lists).  Returns false for a type it cannot
 * read.  Free with gen_box_arg_free. */
typedef struct gen_box_arg {
    gen_sb locals;
    gen_sb reads;
    char *call[2];
    int n_call;
} gen_box_arg;
bool gen_box_attr(const gen_arg *a, gen_box_arg *b);
/* Appends a C call argument (taken over) to b. */
void gen_box_arg_add(gen_box_arg *b, char *expr);
void gen_box_arg_free(gen_box_arg *b);

/* emit_common.c: shared formatting. */

/* "@generated" marker line for a file generated from specs/<file>. */
void gen_emit_marker(gen_sb *sb, const char *spec_file);
/* C parameter declarations of op (without the out-parameters when
 * with_outs is false), one string per C parameter, plus a parallel
 * ownership comment (may be NULL).  Free with gen_params_free. */
typedef struct gen_params {
    char **decls;
    char **comments;
    int n;
} gen_params;
void gen_op_params(const gen_op *op, gen_params *params);
/* The same with an enum argument as the int64_t the kernels and
 * composites take (the public API takes the enum type). */
void gen_op_params_kernel(const gen_op *op, gen_params *params);
/* A structured op's implementation: the kernel's, with the result as
 * `yg_tensor *out`, made by its meta function, to fill. */
void gen_op_params_impl(const gen_op *op, gen_params *params);
void gen_params_free(gen_params *params);
/* Appends one C parameter (decl and comment, may be NULL, taken over). */
void gen_params_push(gen_params *params, char *decl, char *comment);
/* types.c: appends the public API parameters of argument a: one, or a
 * list's two (items, length), each with its ownership comment. */
void gen_type_api_params(gen_params *params, const gen_arg *a);
/* "YG_REDUCTION_MEAN": the C name of value v of enum e.  Caller frees. */
char *gen_enum_value_cname(const struct gen_enum *e, int v);
/* Emits "prefix(p0,\n<indent>p1, ...)" with one parameter per line when the
 * one-line form exceeds 100 columns; with comments when with_comments. */
void gen_emit_call_decl(gen_sb *sb, const char *prefix, const gen_params *params,
                        bool with_comments, const char *suffix);
/* The C name of return i: "out", "out_<name>" or "out<i>".  Caller frees. */
char *gen_return_cname(const gen_op *op, int i);
/* Whether a maps to two C parameters (items and <name>_len). */
bool gen_arg_has_len(const gen_arg *a);
/* Whether op returns Tensor[]: C out-parameters (yg_tensor ***out, int64_t *out_len). */
bool gen_returns_list(const gen_op *op);
/* "yg__node_needs_grad(base, e)", or for the edges of a Tensor[] input
 * (which start at e) "yg__node_needs_grad_from(base, e)".  Caller frees. */
char *gen_needs_grad(const gen_deriv *d, int edge);
/* Emits indent + head + the argument names of op in C order + tail, with
 * out_name (or the op's own out-parameters when NULL, or &result,
 * &result1... for GEN_OUT_LOCALS, result, result1... for
 * GEN_OUT_LOCAL_VALUES) last; wrapped one argument per line past
 * 100 columns. */
#define GEN_OUT_LOCALS "&result..."
/* result, result1...: the locals themselves (a structured op's results). */
#define GEN_OUT_LOCAL_VALUES "result..."
void gen_emit_forward_call(gen_sb *sb, const char *indent, const char *head, const gen_op *op,
                           const char *out_name, const char *tail);
/* "/<star> mul(Tensor self, ...) -> Tensor <star>/", wrapped past 100
 * columns.  Generated code names an entry by its schema, never by its
 * line in the YAML: a line shift must change no generated file but the
 * op tables (generated/registry.c, whose .location fields say where each
 * entry is), or adding an op would touch every section's files. */
void gen_emit_schema_only(gen_sb *sb, const char *indent, const char *schema);
/* Where an emitter wants the public headers of the ops its file calls:
 * gen_take_with_ops_includes replaces this line by one
 * `#include "yagrad/ops_<section>.h"` per section (in YAML order) whose ops
 * the text calls (yg_<cname>(), plus section own when own >= 0, and
 * returns the text (sb is consumed).  A file includes what it uses, not
 * the umbrella yagrad/ops.h, so adding an op recompiles the files that
 * call its section's ops, not every generated file. */
#define GEN_OPS_INCLUDES "@ops-includes@\n"
char *gen_take_with_ops_includes(const gen_model *model, int own, gen_sb *sb);
/* The items of an int[] or bool[] default as C ("[1, 2]" -> "1, 2"; for
 * bool, True/False -> true/false), or the single number d repeated n times
 * for "int[2] stride=1"; *count gets their number.  Caller frees. */
char *gen_default_list(const char *d, int n, bool as_bool, int *count);
/* Emits indent + head + args joined by ", " + tail + "\n", or, past 100
 * columns, one argument per line aligned after head. */
void gen_emit_wrapped(gen_sb *sb, const char *indent, const char *head, const char *const *args,
                      int n, const char *tail);
/* "MulBackward" for cname "mul". */
char *gen_node_display_name(const char *cname);
const char *gen_kind_name(gen_op_kind kind);

#endif /* YAGRAD_GEN_H */
