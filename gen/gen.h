/*
 * gen.h - the model yagrad-gen builds from the specs and the interfaces of
 * its stages: load (yaml_load.c), parse signatures (schema.c), analyse
 * formulas with libclang (formula.c), check kernel headers (kernels.c) and
 * emit (emit_*.c) through a string builder that writes files only when their
 * text changed (out.c).  Errors are collected by diag.c.
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
int gen_error_count(void);

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
    GEN_T_TENSOR,   /* Tensor, Tensor?, Tensor(a), Tensor(a!) */
    GEN_T_INT,      /* int */
    GEN_T_INT_LIST, /* int[] */
    GEN_T_FLOAT,    /* float */
    GEN_T_BOOL,     /* bool */
    GEN_T_SCALAR,   /* Scalar */
} gen_type;

typedef struct gen_arg {
    char *name;
    gen_type type;
    bool nullable;     /* Tensor? */
    char *alias;       /* "a" for Tensor(a) / Tensor(a!), else NULL */
    bool mutable_;     /* Tensor(a!) */
    char *default_;    /* default text ("1", "False", "None", "[]"), or NULL */
    bool kwarg_only;   /* after `*` */
} gen_arg;

typedef struct gen_return {
    char *alias;   /* as in gen_arg */
    bool mutable_;
} gen_return;

typedef struct gen_schema {
    char *name;      /* "sum", "add_" */
    char *overload;  /* "dim", or NULL */
    gen_arg *args;
    int n_args;
    gen_return *returns;
    int n_returns;
} gen_schema;

/* Parses a func string.  loc is the location of its first character; errors
 * are reported at the exact column.  Returns false on error (schema is then
 * cleared). */
bool gen_schema_parse(const char *text, gen_loc loc, gen_schema *schema);
void gen_schema_free(gen_schema *schema);
const char *gen_type_name(const gen_arg *arg);

/* ---- the model ---- */

typedef enum gen_op_kind {
    GEN_OP_POINTWISE,
    GEN_OP_KERNEL,
    GEN_OP_COMPOSITE,
} gen_op_kind;

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
    char *pointwise;
    gen_loc pointwise_loc;
    bool int_safe;     /* the pointwise expression may run on int64 */
    char *cpu_kernel;
    gen_loc cpu_kernel_loc;
    char *cuda_kernel;
    char **tags;
    int n_tags;
    char *onnx;
    struct gen_deriv *deriv; /* borrowed; NULL without a derivative entry */
} gen_op;

typedef enum gen_save_kind {
    GEN_SAVE_TENSOR,
    GEN_SAVE_SIZES,
    GEN_SAVE_NUMEL,
    GEN_SAVE_VALUE,    /* int, float, Scalar, bool: copied */
    GEN_SAVE_INT_LIST, /* int[]: copied into a yg_saved_int_list */
} gen_save_kind;

typedef struct gen_save {
    char *field;       /* node field: "self", "self_sizes", "alpha" */
    char *arg;         /* the argument (or "result") it comes from */
    int arg_index;     /* index into schema.args, or -1 for result */
    gen_save_kind kind;
    uint64_t used_by;  /* bit e: formula of edge e reads it */
} gen_save;

typedef struct gen_formula {
    char *input;       /* argument name */
    int arg_index;     /* into op->schema.args */
    int edge;          /* edge index, or -1 for non_differentiable */
    char *expr;        /* NULL for non_differentiable */
    gen_loc loc;       /* of the expression's first character */
    gen_loc key_loc;   /* of the input key */
    bool has_error;
    char *lowered;     /* straight-line C, indented 8 spaces; NULL until lowered */
    char *grad_name;   /* the local holding its gradient: grad_self */
} gen_formula;

typedef struct gen_deriv {
    char *name_text;   /* the `name:` string */
    gen_loc loc;       /* of the list entry */
    gen_loc name_loc;
    gen_op *op;        /* borrowed */
    gen_formula *formulas; /* in signature order after resolution */
    int n_formulas;
    int n_edges;
    gen_save *saves;
    int n_saves;
    bool uses_grad;    /* some formula reads grad */
    char **temps;      /* temporaries the lowered formulas declare */
    int n_temps;
} gen_deriv;

typedef struct gen_model {
    gen_op *ops;
    int n_ops;
    gen_deriv *derivs;
    int n_derivs;
} gen_model;

/* yaml_load.c: loads both files into model; reports located errors. */
void gen_load_native(const char *path, gen_model *model);
void gen_load_derivatives(const char *path, gen_model *model);
/* Resolves names, C names, derivative entries and edges (after loading). */
void gen_model_resolve(gen_model *model);
void gen_model_free(gen_model *model);
void gen_model_free_op(gen_op *op);
gen_op *gen_model_find_cname(const gen_model *model, const char *cname);

/* formula.c: parses pointwise expressions and formulas with libclang,
 * reports located errors, infers saves and lowers formulas. */
void gen_analyse(gen_model *model);

/* kernels.c: checks dispatch and composite names against the kernel
 * headers under runtime_dir with libclang. */
void gen_check_kernels(const gen_model *model, const char *runtime_dir);

/* emit_*.c: each returns the full text of one generated file. */
char *gen_emit_ops_h(const gen_model *model);
char *gen_emit_ops_c(const gen_model *model);
char *gen_emit_nodes_h(const gen_model *model);
char *gen_emit_nodes_c(const gen_model *model);
char *gen_emit_pointwise_c(const gen_model *model);
char *gen_emit_generated_int_h(const gen_model *model);
char *gen_emit_registry_c(const gen_model *model);

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
void gen_params_free(gen_params *params);
/* Emits "prefix(p0,\n<indent>p1, ...)" with one parameter per line when the
 * one-line form exceeds 100 columns; with comments when with_comments. */
void gen_emit_call_decl(gen_sb *sb, const char *prefix, const gen_params *params,
                        bool with_comments, const char *suffix);
/* The argument names of op in C order, for forwarding a call. */
void gen_emit_forward_args(gen_sb *sb, const gen_op *op, const char *out_name);
/* "/<star> mul(Tensor self, ...) -> Tensor  [specs/native_functions.yaml:25] <star>/" */
void gen_emit_schema_comment(gen_sb *sb, const char *indent, const char *schema, gen_loc loc);
/* Emits indent + head + args joined by ", " + tail + "\n", or, past 100
 * columns, one argument per line aligned after head. */
void gen_emit_wrapped(gen_sb *sb, const char *indent, const char *head, const char *const *args,
                      int n, const char *tail);
/* "MulBackward" for cname "mul". */
char *gen_node_display_name(const char *cname);
const char *gen_kind_name(gen_op_kind kind);

#endif /* YAGRAD_GEN_H */
