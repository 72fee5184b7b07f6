/*
 * ir.h - the graph IR's structures and the operations passes, the parser
 * and (later) the tracer and interpreter are written against.  Not public
 * API; yagrad/jit.h is the public face.
 *
 * Shape: a graph has a prim::Param node whose outputs are the graph
 * inputs, a doubly linked list of nodes in execution order, and a
 * prim::Return node whose inputs are the graph outputs.  Param and Return
 * are not in the list, so "every node" loops never see them, yet every
 * value has a defining node and every use (graph outputs included) is a
 * (node, input index) pair: replacing all uses of a value also replaces
 * graph outputs, with no special case.
 *
 * Invariants (checked by yg_graph_lint):
 *   - value->node->outputs[value->offset] == value;
 *   - (n, i) is in v->uses exactly when n->inputs[i] == v;
 *   - every input of a node is a graph input or an output of an earlier
 *     node of the same graph;
 *   - names are unique per graph and found in the graph's name table.
 *
 * Node kinds are interned: n->kind points at yg__ops[i].name (n->op is
 * that entry) or at a prim table entry (n->op NULL), so kinds compare by
 * pointer.  Attributes are kept sorted by name, so printing and equality
 * need no sorting.
 */
#ifndef YAGRAD_JIT_IR_H
#define YAGRAD_JIT_IR_H

#include "core/core.h"
#include "generated_int.h"
#include "yagrad/jit.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Prim kinds (interned strings). */
extern const char yg__prim_param[];        /* "prim::Param": graph inputs */
extern const char yg__prim_return[];       /* "prim::Return": graph outputs */
extern const char yg__prim_constant[];     /* "prim::Constant" */
extern const char yg__prim_none[];         /* "prim::None" */
extern const char yg__prim_fusion_group[]; /* "prim::FusionGroup" */
extern const char yg__prim_diff_graph[];   /* "prim::DifferentiableGraph" */

typedef struct yg_ir_use {
    yg_ir_node *node;
    int32_t index;
} yg_ir_use;

struct yg_ir_value {
    yg_ir_node *node; /* definition (the Param node for graph inputs) */
    int32_t offset;   /* index in node->outputs */
    char *name;       /* unique in the graph, without '%' */
    yg_ir_type type;
    yg_ir_use *uses;
    int32_t n_uses, cap_uses;
    int64_t scratch; /* free for a pass to use; no meaning between passes */
    bool is_param;   /* a graph input marked as a parameter (never a node output) */
};

typedef struct yg_ir_attr {
    char *name;
    yg_ir_attr_kind kind;
    union {
        int64_t i;
        double f;
        char *s;
        struct {
            int64_t *items;
            int64_t len;
        } ints;
        struct {
            double *items;
            int64_t len;
        } floats;
        yg_tensor *t; /* contiguous, CPU, no history; never written */
        yg_graph *g;
    } u;
} yg_ir_attr;

/* What a kind's schema says, derived from the op table's schema string. */
typedef struct yg_ir_kind_info {
    int32_t n_tensor_args; /* Tensor, Tensor? (not Tensor[]) arguments */
    bool has_tensor_list;  /* a Tensor[] or Tensor?[] argument: inputs are variadic */
    int32_t n_returns;     /* -1: a Tensor[] return, any number of outputs */
    bool is_view;    /* returns Tensor(a): the result aliases self */
    bool is_inplace; /* returns Tensor(a!): the op writes self */
    int32_t list_pos; /* tensor arguments before the list (-1: no list); the
                         n_tensor_args - list_pos after it are the last inputs */
} yg_ir_kind_info;

struct yg_ir_node {
    const char *kind;     /* interned */
    const yg_op_info *op; /* NULL for prim kinds */
    yg_graph *owner;
    yg_ir_value **inputs; /* borrowed from their definitions */
    int32_t n_inputs, cap_inputs;
    yg_ir_value **outputs; /* owned */
    int32_t n_outputs;
    yg_ir_attr *attrs; /* sorted by name */
    int32_t n_attrs;
    yg_ir_node *prev, *next;
    int64_t scratch; /* free for a pass to use */
};

/* Open-addressing table from names to values (power-of-two capacity). */
typedef struct yg_ir_names {
    yg_ir_value **slots;
    int64_t cap, len;
} yg_ir_names;

/* A kind of cache that code above the IR keeps in a graph (the
 * interpreter's run plan of a frozen graph, the fuser's kernels of a
 * fusion group), one static instance per kind: the graph frees the cache
 * with free when it is released, knowing nothing else of it. */
typedef struct yg_graph_cache_kind {
    const char *name;
    void (*free)(void *cache);
} yg_graph_cache_kind;

/* How many kinds of cache one graph holds at most. */
#define YG_GRAPH_CACHE_SLOTS 4

struct yg_graph {
    atomic_long extra_refs; /* references beyond the owner's (yg__graph_retain):
                               a df graph an autograd node still runs */
    bool frozen;            /* its nodes and their inputs no longer change */
    struct {
        _Atomic(const yg_graph_cache_kind *) kind; /* claimed in index order */
        _Atomic(void *) value;
    } caches[YG_GRAPH_CACHE_SLOTS]; /* yg__graph_cache_get/put */
    yg_ir_node *param; /* outputs: graph inputs */
    yg_ir_node *ret;   /* inputs: graph outputs */
    yg_ir_node *first, *last;
    int64_t n_nodes;
    yg_ir_names names;
    int64_t next_auto_name;
};

/* g's cache of kind, or NULL when none was put there yet.  Safe from
 * any thread (an acquire load).  Cannot fail. */
void *yg__graph_cache_get(const yg_graph *g, const yg_graph_cache_kind *kind);

/* Makes cache (owned, not NULL) g's cache of kind unless another thread
 * put one first: returns the cache g holds afterwards, which is cache or
 * the other one (cache is then freed with kind->free).  NULL, with cache
 * freed, when g already holds YG_GRAPH_CACHE_SLOTS other kinds (an
 * internal limit: the caller runs without the cache).  Cannot fail. */
void *yg__graph_cache_put(yg_graph *g, const yg_graph_cache_kind *kind, void *cache);

/* Takes one more reference to g: yg_graph_release frees it only when the
 * last is dropped.  A graph shared this way must no longer change (an
 * autograd node runs it while its owner may be released).  Cannot fail. */
yg_graph *yg__graph_retain(yg_graph *g);

/* Marks g (and nothing else) as never changing again in structure:
 * yg_graph_run keeps its compiled plan.  Types and names may still be
 * set.  Cannot fail. */
void yg__graph_freeze(yg_graph *g);

/* ---- kinds (kinds.c) ---- */

/* The interned kind for name (len bytes), or NULL when it is neither an
 * op nor a public prim kind.  *op gets the op entry (NULL for prims). */
const char *yg__ir_kind_lookup(const char *name, size_t len, const yg_op_info **op);

/* What the schema of an op says (zeros for prims).  Cannot fail. */
yg_ir_kind_info yg__ir_kind_info(const yg_ir_node *n);

/* The name of the argument input idx of a node of op with n_inputs inputs
 * stands for, written into buf; false when there is none.  The inputs of a
 * Tensor[] argument (anywhere in the schema: it takes what the other tensor
 * arguments leave) all map to the list's name. */
bool yg__ir_tensor_arg_name(const yg_op_info *op,
                            int32_t idx,
                            int32_t n_inputs,
                            char *buf,
                            size_t buf_len);

/* Whether input idx (of n_inputs) may be None: its argument is `Tensor?`
 * or `Tensor?[]`. */
bool yg__ir_tensor_arg_optional(const yg_op_info *op, int32_t idx, int32_t n_inputs);

/* Whether op has a non-tensor argument called name. */
bool yg__ir_op_has_attr_arg(const yg_op_info *op, const char *name);

/* Whether the node writes memory: an in-place op (base name ends in '_'),
 * a str attribute "mutates", or a subgraph containing such a node. */
bool yg__ir_node_has_side_effects(const yg_ir_node *n);

/* ---- structure (ir.c) ---- */

/* Appends a use (n, index) to v; false when out of memory. */
bool yg__ir_value_add_use(yg_ir_value *v, yg_ir_node *n, int32_t index);
/* Removes the use (n, index) from v, keeping the order of the rest. */
void yg__ir_value_remove_use(yg_ir_value *v, yg_ir_node *n, int32_t index);

/* Creates a node of an interned kind with n_outputs outputs (auto-named,
 * unknown Tensor type) and no inputs; appended at the end of g when
 * append is true, else left unlinked (insert it with yg__ir_node_insert_*). */
yg_status yg__ir_node_create(yg_graph *g,
                             const char *kind,
                             const yg_op_info *op,
                             int32_t n_outputs,
                             bool append,
                             yg_ir_node **out);

/* Appends an output to n named name (len bytes; valid and not taken in
 * n's graph) with the given type. */
yg_status
yg__ir_node_add_output(yg_ir_node *n, const char *name, size_t len, const yg_ir_type *type);

/* Appends v as the next input of n (records the use). */
yg_status yg__ir_node_add_input(yg_ir_node *n, yg_ir_value *v);

/* Makes n read v at input i (moving the use).  Fails only when out of
 * memory, with nothing changed. */
yg_status yg__ir_node_replace_input(yg_ir_node *n, int32_t i, yg_ir_value *v);

/* Makes every use of from (graph outputs too) read to.  Fails only when
 * out of memory, with some uses moved and the graph valid. */
yg_status yg__ir_value_replace_all_uses(yg_ir_value *from, yg_ir_value *to);

/* Unlinks n and frees it with its outputs and attributes.  Its outputs
 * must have no uses (asserted).  Cannot fail. */
void yg__ir_node_destroy(yg_ir_node *n);

/* Moves (or links, for an unlinked node) n just before pos / at the
 * start of its graph.  Cannot fail. */
void yg__ir_node_move_before(yg_ir_node *n, yg_ir_node *pos);
void yg__ir_node_move_to_front(yg_ir_node *n);

/* The attribute called name, or NULL. */
const yg_ir_attr *yg__ir_node_attr(const yg_ir_node *n, const char *name);

/* Integer / float value of an int-or-float attribute; false when n has no
 * such attribute of a numeric kind. */
bool yg__ir_attr_as_int(const yg_ir_node *n, const char *name, int64_t *out);
bool yg__ir_attr_as_double(const yg_ir_node *n, const char *name, double *out);

/* Adds (or replaces) an attribute that takes ownership of the payload in
 * *attr (name, strings, lists, tensor ref, graph); on failure the payload
 * is freed.  attr->name is owned too. */
yg_status yg__ir_node_put_attr(yg_ir_node *n, yg_ir_attr *attr);

/* Frees an attribute's payload and name.  NULL-safe. */
void yg__ir_attr_clear(yg_ir_attr *a);

/* Deep copy of an attribute's payload and name into dst. */
yg_status yg__ir_attr_copy(const yg_ir_attr *src, yg_ir_attr *dst);

/* Whether two attributes are equal: name, kind and payload bit for bit
 * (floats by their bits, so -0.0 != 0.0 and NaN == the same NaN);
 * graph attributes are equal only when they are the same object. */
bool yg__ir_attr_equal(const yg_ir_attr *a, const yg_ir_attr *b);

/* The value of g named name (len bytes), or NULL. */
yg_ir_value *yg__ir_graph_find(const yg_graph *g, const char *name, size_t len);

/* Renames v (name of len bytes, already validated); fails with
 * YG_ERR_INVALID_ARGUMENT when another value has it. */
yg_status yg__ir_value_rename(yg_ir_value *v, const char *name, size_t len);

/* Whether s (len bytes) is a valid value name / attribute name. */
bool yg__ir_valid_value_name(const char *s, size_t len);
bool yg__ir_valid_attr_name(const char *s, size_t len);

/* Whether a type's fields are in range. */
bool yg__ir_type_valid(const yg_ir_type *t);
bool yg__ir_type_equal(const yg_ir_type *a, const yg_ir_type *b);

/* A contiguous CPU copy of t with no history (for tensor attributes). */
yg_status yg__ir_tensor_snapshot(const char *what, const yg_tensor *t, yg_tensor **out);

/* Checks one node against its kind: input/output counts, None inputs
 * only where the schema allows them, output types; with attrs also that
 * attribute names are arguments of the schema (or "mutates"), required
 * prim attributes and the arity of subgraph holders.  Writes the problem
 * into msg and returns false. */
bool yg__ir_check_node(const yg_ir_node *n, bool attrs, char *msg, size_t msg_len);

/* Writes n's short text "%y = mul(%a, %b)" into buf (truncated). */
void yg__ir_node_describe(const yg_ir_node *n, char *buf, size_t buf_len);

/* Runs lint in debug builds after a pass; YG_ERR_INTERNAL on violation
 * with "<pass>: lint after pass: ...". */
yg_status yg__ir_check_after_pass(const yg_graph *g, const char *pass);

#endif /* YAGRAD_JIT_IR_H */
