/*
 * graph_grad.h - building a node's gradient as IR: what the generated
 * graph derivatives (generated/graph_grad/<section>.c, one function per
 * entry of specs/derivatives.yaml, lowered from the same formula as the
 * eager backward node) are written against, and what autodiff.c gives
 * them.  Not public API.
 *
 * A graph derivative receives the forward node (its attributes are the
 * op's scalar arguments) and a yg_df: the backward graph df being built,
 * the df values of the gradients of the node's outputs, and which of the
 * node's tensor arguments want a gradient.  It appends the formula's ops to
 * df and hands back one df value per wanted gradient.
 *
 * Arguments are named by their ordinal among the op's tensor arguments
 * (Tensor, Tensor? and Tensor[] in schema order; a Tensor[] is one ordinal
 * standing for all its items); a forward value whose metadata a formula
 * reads is a "slot": an ordinal (>= 0) or YG_DF_OUT(i) for output i.
 *
 * Errors are sticky: the first failure (out of memory, metadata the
 * forward graph does not know statically, an argument the builder cannot
 * express) is kept in s->st, and every later call does nothing and returns
 * NULL or 0, so generated code checks once, at the end, through
 * yg__df_status.  YG_ERR_NOT_IMPLEMENTED means "this node has no graph
 * form here" (sizes unknown, ...): the node stays outside autodiff
 * subgraphs.
 */
#ifndef YAGRAD_JIT_GRAPH_GRAD_H
#define YAGRAD_JIT_GRAPH_GRAD_H

#include "jit/ir/ir.h"

#include <stdbool.h>
#include <stdint.h>

#define YG_DF_OUT(i) (-1 - (i))

typedef struct yg_df yg_df;

/* The df value standing for forward value v (a capture, made on first
 * use); NULL on failure with s->st set.  Supplied by autodiff.c. */
typedef yg_ir_value *(*yg_df_capture_fn)(yg_df *s, yg_ir_value *v);

struct yg_df {
    const yg_ir_node *node; /* the forward node */
    yg_graph *df;           /* the backward graph, appended to */
    yg_df_capture_fn capture;
    void *ctx;                 /* the capture's state */
    yg_ir_value **grads;       /* node->n_outputs df values; NULL: undefined
                                 (a zero gradient, made on demand) */
    const bool *needs;         /* per node input: its gradient is wanted */
    yg_ir_value **grad_inputs; /* out: per node input, NULL: none */
    yg_status st;
};

/* A graph derivative: appends node's gradient formulas to s->df.
 * Returns the sticky status. */
typedef yg_status yg_graph_grad_impl(yg_df *s, const yg_ir_node *node);
typedef yg_graph_grad_impl *yg_graph_grad_fn;

typedef struct yg_graph_grad_op {
    yg_graph_grad_fn fn;       /* NULL: no graph derivative */
    bool no_grad;            /* the op's outputs never carry a gradient
                                (no differentiable input, or a kernel
                                without an entry): no derivative needed */
    const char *unsupported; /* why fn is NULL ("no entry in
                                specs/derivatives.yaml", a
                                graph_grad: not_implemented reason) */
} yg_graph_grad_op;

/* generated/graph_grad/table.c: parallel to yg__ops[] (same index). */
extern const yg_graph_grad_op yg__graph_grad_ops[];
extern const int32_t yg__graph_grad_ops_count;

/* ---- reading the forward node ---- */

/* Whether the gradient of tensor argument ord is wanted (any item, for a
 * Tensor[]). */
bool yg__df_needs(yg_df *s, int ord);
/* The df value of forward argument ord (a prim::None of df for an absent
 * Tensor?) / of forward output i. */
yg_ir_value *yg__df_input(yg_df *s, int ord);
yg_ir_value *yg__df_output(yg_df *s, int i);
/* The gradient of output i (zeros of its static type when undefined). */
yg_ir_value *yg__df_grad(yg_df *s, int i);
/* Items of a Tensor[] argument. */
int64_t yg__df_list_len(yg_df *s, int ord);
/* Static metadata of a slot (YG_ERR_NOT_IMPLEMENTED when unknown). */
int64_t yg__df_numel(yg_df *s, int slot);
int64_t yg__df_size(yg_df *s, int slot, int64_t dim);
yg_dtype yg__df_dtype(yg_df *s, int slot);
/* Records a failure reading the forward node's attributes (st != YG_OK). */
void yg__df_check(yg_df *s, yg_status st);

/* ---- appending to df ---- */

/* A node of op kind (a yg__ops table name) with n_outputs outputs. */
yg_ir_node *yg__df_op(yg_df *s, const char *kind, int64_t n_outputs);
/* Appends v as n's next input. */
void yg__df_in(yg_df *s, yg_ir_node *n, yg_ir_value *v);
/* Appends every item of forward Tensor[] argument ord / every output
 * gradient (zeros where undefined) as inputs. */
void yg__df_in_list(yg_df *s, yg_ir_node *n, int ord);
void yg__df_in_grads(yg_df *s, yg_ir_node *n);
/* Attributes. */
void yg__df_int(yg_df *s, yg_ir_node *n, const char *name, int64_t v);
void yg__df_float(yg_df *s, yg_ir_node *n, const char *name, double v);
void yg__df_str(yg_df *s, yg_ir_node *n, const char *name, const char *v);
void yg__df_ints(yg_df *s, yg_ir_node *n, const char *name, const int64_t *v, int64_t len);
/* The static sizes of a slot; each item's size along dim of Tensor[]
 * argument ord; the dtype of a slot; grad_input_mask of the given
 * ordinals (as an int list of 0/1). */
void yg__df_sizes(yg_df *s, yg_ir_node *n, const char *name, int slot);
void yg__df_list_sizes(yg_df *s, yg_ir_node *n, const char *name, int ord, int64_t dim);
void yg__df_dtype_attr(yg_df *s, yg_ir_node *n, const char *name, int slot);
void yg__df_mask(yg_df *s, yg_ir_node *n, const char *name, const int *ords, int len);
/* Output i of n. */
yg_ir_value *yg__df_out(yg_df *s, yg_ir_node *n, int i);

/* ---- results ---- */

/* The gradient of tensor argument ord is v. */
void yg__df_set_grad(yg_df *s, int ord, yg_ir_value *v);
/* The gradients of the items of Tensor[] argument ord are n's outputs. */
void yg__df_set_list_grads(yg_df *s, int ord, yg_ir_node *n);
/* s->st. */
yg_status yg__df_status(const yg_df *s);

#endif /* YAGRAD_JIT_GRAPH_GRAD_H */
