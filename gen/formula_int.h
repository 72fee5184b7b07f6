/*
 * formula_int.h - declarations shared by the formula_*.c files only (the
 * stage's entry point, gen_analyse, is declared in gen.h):
 * formula_unit.c builds and parses the synthetic translation units and
 * holds the libclang cursor helpers, formula_saves.c walks a formula's AST
 * and records what its node saves, formula_lower.c lowers it to C.
 *
 * A gen_formula_ctx carries one formula (or one key shared by several
 * inputs) through the analysis.  It reads the model (const: resolution is
 * over) and writes the entry's plans; it owns code, members and
 * size_reads, which formula_unit.c's analyse_formulas releases.
 */
#ifndef YAGRAD_GEN_FORMULA_INT_H
#define YAGRAD_GEN_FORMULA_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <clang-c/Index.h>

#include "gen.h"

/* ---- cursor helpers (formula_unit.c) ---- */

/* The children of a cursor, in order.  The caller frees c. */
typedef struct gen_kids {
    CXCursor *c;
    unsigned n;
    unsigned cap;
} gen_kids;

gen_kids gen__cursor_children(CXCursor c);
/* The cursor's spelling.  Caller frees. */
char *gen__cursor_name(CXCursor c);
/* Whether c is an implicit cast or parentheses. */
bool gen__cursor_is_transparent(CXCursor c);
/* Skips implicit casts and parentheses. */
CXCursor gen__cursor_strip(CXCursor c);
/* Byte offset of a location in the unit. */
unsigned gen__loc_offset(CXSourceLocation loc);
/* The YAML location of a cursor inside a formula starting at expr_offset. */
gen_loc gen__cursor_loc(CXCursor c, gen_loc expr_loc, size_t expr_offset);
/* Tensor is a pointer to the incomplete struct yg_tensor_ in the unit. */
bool gen__is_tensor_type(CXType t);

/* ---- one formula under analysis ---- */

typedef struct gen_formula_ctx {
    const gen_model *model;
    const gen_deriv *d;
    const gen_formula *f;
    gen_backward_plan *bp; /* d's: the saves, temporaries and grads read */
    gen_formula_plan *fp;  /* f's, in bp */
    gen_symbolic_plan *sp; /* d's: the graph_grad lowering */
    size_t expr_offset; /* of f->expr in the unit */
    CXTranslationUnit tu;
    gen_sb code;        /* lowered code */
    /* A key naming several inputs ("self, other: f(...)"): its formulas,
     * in key order (members[0] is f); one member otherwise. */
    const gen_formula **members;
    int n_members;
    uint64_t edges;     /* the edges of members: whose gradients read a save */
    bool reads_mask;    /* the formula reads grad_input_mask */
    int n_size_locals;  /* size(x, d) calls lowered so far */
    char **size_reads;  /* per call: "x|d" as lowered, then its local */
    CXCursor cursor;    /* the scalar expression being lowered */
    bool graph_grad;    /* lowering to IR-building C (formula_graph_grad.c):
                           arguments are locals read from the forward
                           node, metadata comes from its static types */
} gen_formula_ctx;

/* ---- save analysis (formula_saves.c) ---- */

/* What dtype(x), size(x, d), device(x) and device_index(x) expand to in
 * the formula unit. */
extern const char gen__dtype_helper[];
extern const char gen__size_helper[];
extern const char gen__device_helper[];
extern const char gen__device_index_helper[];

/* Reports msg (with one %s for name) at cursor c of the formula and marks
 * the formula as failed. */
void gen__formula_error_at(gen_formula_ctx *fc, CXCursor c, const char *msg, const char *name);
void gen__formula_errorf(gen_formula_ctx *fc, CXCursor c, const char *fmt, ...) GEN_PRINTF(3, 4);
/* The index of the op's argument named name, or -1. */
int gen__arg_index(const gen_op *op, const char *name);
/* Whether c is a call to the function name. */
bool gen__is_call_to(CXCursor c, const char *name);
/* The C local holding grads[i] ("grad", "grad1"...) or results[i]
 * ("result", "result1"...) in generated code.  Caller frees. */
char *gen__output_local(const char *which, int i);
/* grads[i] / results[i] at c: true with *which = "grad" or "result" and
 * *index = i; a bad index is reported (has_error) and false returned. */
bool gen__indexed_output(gen_formula_ctx *fc, CXCursor c, const char **which, int *index);
/* Whether formulas can read (and nodes save) an argument of a's type. */
bool gen__formula_readable(const gen_arg *a);
/* Walks the formula at c (parent: its non-transparent parent, or the null
 * cursor): records saves in fc->d, reports what cannot be lowered. */
void gen__formula_infer(gen_formula_ctx *fc, CXCursor c, CXCursor parent);
/* Orders a node's saved values by argument, outputs last, then kind. */
void gen__sort_saves(const gen_deriv *d, gen_backward_plan *bp);
/* The plan of the key's member m (fc->members[m]). */
gen_formula_plan *gen__member_plan(const gen_formula_ctx *fc, int m);

/* ---- lowering (formula_lower.c) ---- */

/* Lowers the formula expression expr, accepted by gen__formula_infer, to
 * fc->code; errors are reported and set fc->f->has_error. */
void gen__formula_lower(gen_formula_ctx *fc, CXCursor expr);
/* The C text of a scalar subexpression: argument names become the node's
 * saved fields (eager) or locals (graph_grad); numel() and size() read saved
 * metadata or static types. */
char *gen__lower_scalar(gen_formula_ctx *fc, CXCursor c);

/* ---- lowering to graph derivatives (formula_graph_grad.c) ---- */

/* The ordinal of op's tensor argument name among its Tensor and Tensor[]
 * arguments, or -1. */
int gen__tensor_ordinal(const gen_op *op, const char *name);
/* The slot (graph_grad.h) of a tensor named in a formula: "2" for the third
 * tensor argument, "YG_DF_OUT(0)" for result / grad; NULL otherwise.
 * Caller frees. */
char *gen__df_slot(const gen_deriv *d, const char *name);
/* Lowers the formula at expr (already lowered for eager) to fc->code as
 * IR-building C; errors are reported and set fc->f->has_error. */
void gen__formula_lower_graph_grad(gen_formula_ctx *fc, CXCursor expr);

#endif
