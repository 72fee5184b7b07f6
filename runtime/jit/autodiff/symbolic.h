/*
 * symbolic.h - building a node's gradient as IR: what the generated
 * symbolic derivatives (generated/symbolic/<section>.c, one function per
 * entry of specs/derivatives.yaml, lowered from the same formula as the
 * eager backward node) are written against, and what autodiff.c gives
 * them.  Not public API.
 *
 * A symbolic derivative receives the forward node (its attributes are the
 * op's scalar arguments) and a yg_sym: the backward graph df being built,
 * the df values of the gradients of the node's outputs, and which of the
 * node's tensor arguments want a gradient.  It appends the formula's ops to
 * df and hands back one df value per wanted gradient.
 *
 * Arguments are named by their ordinal among the op's tensor arguments
 * (Tensor, Tensor? and Tensor[] in schema order; a Tensor[] is one ordinal
 * standing for all its items); a forward value whose metadata a formula
 * reads is a "slot": an ordinal (>= 0) or YG_SYM_OUT(i) for output i.
 *
 * Errors are sticky: the first failure (out of memory, metadata the
 * forward graph does not know statically, an argument the builder cannot
 * express) is kept in s->st, and every later call does nothing and returns
 * NULL or 0, so generated code checks once, at the end, through
 * yg__sym_status.  YG_ERR_NOT_IMPLEMENTED means "this node has no graph
 * form here" (sizes unknown, ...): the node stays outside autodiff
 * subgraphs.
 */
#ifndef YAGRAD_JIT_SYMBOLIC_H
#define YAGRAD_JIT_SYMBOLIC_H

#include "jit/ir/ir.h"

#include <stdbool.h>
#include <stdint.h>

#define YG_SYM_OUT(i) (-1 - (i))

typedef struct yg_sym yg_sym;

/* The df value standing for forward value v (a capture, made on first
 * use); NULL on failure with s->st set.  Supplied by autodiff.c. */
typedef yg_ir_value *(*yg_sym_capture_fn)(yg_sym *s, yg_ir_value *v);

struct yg_sym {
    const yg_ir_node *node; /* the forward node */
    yg_graph *df;           /* the backward graph, appended to */
    yg_sym_capture_fn capture;
    void *ctx;                 /* the capture's state */
    yg_ir_value **grads;       /* node->n_outputs df values; NULL: undefined
                                 (a zero gradient, made on demand) */
    const bool *needs;         /* per node input: its gradient is wanted */
    yg_ir_value **grad_inputs; /* out: per node input, NULL: none */
    yg_status st;
};

/* A symbolic derivative: appends node's gradient formulas to s->df.
 * Returns the sticky status. */
typedef yg_status yg_symbolic_impl(yg_sym *s, const yg_ir_node *node);
typedef yg_symbolic_impl *yg_symbolic_fn;

typedef struct yg_symbolic_op {
    yg_symbolic_fn fn;       /* NULL: no symbolic derivative */
    bool no_grad;            /* the op's outputs never carry a gradient
                                (no differentiable input, or a kernel
                                without an entry): no derivative needed */
    const char *unsupported; /* why fn is NULL ("no entry in
                                specs/derivatives.yaml", a
                                symbolic: not_implemented reason) */
} yg_symbolic_op;

/* generated/symbolic/table.c: parallel to yg__ops[] (same index). */
extern const yg_symbolic_op yg__symbolic_ops[];
extern const int32_t yg__symbolic_ops_count;

/* ---- reading the forward node ---- */

/* Whether the gradient of tensor argument ord is wanted (any item, for a
 * Tensor[]). */
bool yg__sym_needs(yg_sym *s, int ord);
/* The df value of forward argument ord (a prim::None of df for an absent
 * Tensor?) / of forward output i. */
yg_ir_value *yg__sym_input(yg_sym *s, int ord);
yg_ir_value *yg__sym_output(yg_sym *s, int i);
/* The gradient of output i (zeros of its static type when undefined). */
yg_ir_value *yg__sym_grad(yg_sym *s, int i);
/* Items of a Tensor[] argument. */
int64_t yg__sym_list_len(yg_sym *s, int ord);
/* Static metadata of a slot (YG_ERR_NOT_IMPLEMENTED when unknown). */
int64_t yg__sym_numel(yg_sym *s, int slot);
int64_t yg__sym_size(yg_sym *s, int slot, int64_t dim);
yg_dtype yg__sym_dtype(yg_sym *s, int slot);
/* Records a failure reading the forward node's attributes (st != YG_OK). */
void yg__sym_check(yg_sym *s, yg_status st);

/* ---- appending to df ---- */

/* A node of op kind (a yg__ops table name) with n_outputs outputs. */
yg_ir_node *yg__sym_op(yg_sym *s, const char *kind, int64_t n_outputs);
/* Appends v as n's next input. */
void yg__sym_in(yg_sym *s, yg_ir_node *n, yg_ir_value *v);
/* Appends every item of forward Tensor[] argument ord / every output
 * gradient (zeros where undefined) as inputs. */
void yg__sym_in_list(yg_sym *s, yg_ir_node *n, int ord);
void yg__sym_in_grads(yg_sym *s, yg_ir_node *n);
/* Attributes. */
void yg__sym_int(yg_sym *s, yg_ir_node *n, const char *name, int64_t v);
void yg__sym_float(yg_sym *s, yg_ir_node *n, const char *name, double v);
void yg__sym_str(yg_sym *s, yg_ir_node *n, const char *name, const char *v);
void yg__sym_ints(yg_sym *s, yg_ir_node *n, const char *name, const int64_t *v, int64_t len);
/* The static sizes of a slot; each item's size along dim of Tensor[]
 * argument ord; the dtype of a slot; grad_input_mask of the given
 * ordinals (as an int list of 0/1). */
void yg__sym_sizes(yg_sym *s, yg_ir_node *n, const char *name, int slot);
void yg__sym_list_sizes(yg_sym *s, yg_ir_node *n, const char *name, int ord, int64_t dim);
void yg__sym_dtype_attr(yg_sym *s, yg_ir_node *n, const char *name, int slot);
void yg__sym_mask(yg_sym *s, yg_ir_node *n, const char *name, const int *ords, int len);
/* Output i of n. */
yg_ir_value *yg__sym_out(yg_sym *s, yg_ir_node *n, int i);

/* ---- results ---- */

/* The gradient of tensor argument ord is v. */
void yg__sym_set_grad(yg_sym *s, int ord, yg_ir_value *v);
/* The gradients of the items of Tensor[] argument ord are n's outputs. */
void yg__sym_set_list_grads(yg_sym *s, int ord, yg_ir_node *n);
/* s->st. */
yg_status yg__sym_status(const yg_sym *s);

#endif /* YAGRAD_JIT_SYMBOLIC_H */
