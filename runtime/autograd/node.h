/*
 * node.h - backward nodes, edges and saved values: what the generated
 * autograd wrappers and backward nodes are written against.  Not public API.
 *
 * Graph shape: a node represents one recorded op call.  Its "outputs" are
 * the op's outputs (it receives one gradient per output) and its
 * "next edges" point, per op input, at the node that produced that input
 * (the input's grad_fn, at output_nr) or at the leaf's AccumulateGrad node.
 * An edge with node == NULL means "this input needs no gradient".
 *
 * Ownership: nodes are reference counted.  A tensor holds a reference to
 * its grad_fn; a node holds references to the nodes its edges point at.
 * An AccumulateGrad node holds a reference to its leaf tensor; the leaf
 * points back at it weakly (cleared when the node dies), so there is no
 * cycle.  Saved outputs are stored without their grad_fn for the same
 * reason and are re-attached to the saving node when unpacked.
 */
#ifndef YAGRAD_AUTOGRAD_NODE_H
#define YAGRAD_AUTOGRAD_NODE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "yagrad/autograd.h"

typedef struct yg_edge {
    yg_node *node;     /* strong ref; NULL: no gradient needed */
    int32_t input_nr;  /* which output slot of node this gradient feeds */
} yg_edge;

/* What a node knows about each forward output it receives a grad for;
 * the engine uses it to check and (by summing broadcast dims) reduce
 * gradients flowing into the node. */
typedef struct yg_output_meta {
    yg_dtype dtype;
    int32_t ndim;
    int64_t sizes[YG_MAX_DIMS];
    yg_device device; /* where a zero gradient for it is made */
    int32_t device_index;
} yg_output_meta;

typedef struct yg_node_vtable {
    const char *name; /* "MulBackward" */
    /* Computes gradients for the op's inputs.
     *   grads:       borrowed, n_outputs entries; an entry is NULL when
     *                that output's gradient is undefined (not all NULL)
     *   grad_inputs: n_edges entries, all NULL on entry; set entry i to a
     *                new ref (or leave NULL) for each input i whose edge
     *                needs a gradient.
     * On failure every grad_inputs entry must be NULL again. */
    yg_status (*apply)(yg_node *self, yg_tensor *const *grads, yg_tensor **grad_inputs);
    /* Releases every saved value (idempotent).  May be NULL. */
    void (*release_saved)(yg_node *self);
    /* Releases what the node owns beyond saved values and edges, once,
     * when it dies.  May be NULL (generated nodes own nothing else). */
    void (*destroy)(yg_node *self);
} yg_node_vtable;

/* A registered hook (autograd/hooks.c).  Tensor hooks of a non-leaf and
 * node pre-hooks live in the producing node's pre_hooks list; a leaf's
 * tensor hooks live in its autograd meta. */
typedef enum yg_hook_kind {
    YG_HOOK_TENSOR,      /* user tensor hook on output_nr */
    YG_HOOK_RETAIN_GRAD, /* stores the grad of output_nr into target .grad */
    YG_HOOK_NODE_PRE,
    YG_HOOK_NODE_POST,
    YG_HOOK_POST_ACCUMULATE, /* leaf: after the gradient is added into .grad */
} yg_hook_kind;

typedef struct yg_hook {
    struct yg_hook *next;
    yg_hook_kind kind;
    int32_t output_nr;
    union {
        yg_tensor_hook_fn tensor;
        yg_node_pre_hook_fn pre;
        yg_node_post_hook_fn post;
        yg_post_accumulate_hook_fn post_accumulate;
    } fn;
    void *ctx;
    yg_tensor *target; /* RETAIN_GRAD: weak; cleared when the tensor dies */
} yg_hook;

struct yg_node {
    const yg_node_vtable *vt;
    atomic_long refcount;
    uint64_t seq_nr; /* creation order; later nodes run first among ready */
    bool saved_released;
    int32_t n_edges;
    int32_t n_outputs;
    yg_edge *next_edges;        /* n_edges */
    yg_output_meta *outputs;    /* n_outputs */
    yg_node *release_next;      /* private to node.c: the release worklist */
    yg_hook *pre_hooks;         /* tensor, retain-grad and node pre-hooks */
    yg_hook *post_hooks;
};

/* Per-tensor autograd state (tensor->autograd), created on demand. */
struct yg_autograd_meta {
    bool requires_grad;         /* leaf: user asked for grads */
    bool view_no_grad;          /* a view made with grad mode off, or
                                   detach_'d: no history regenerated */
    yg_tensor *grad;            /* accumulated grad (leaf), strong ref */
    yg_node *grad_fn;           /* strong ref; NULL for leaves */
    int32_t output_nr;          /* which output of grad_fn this tensor is */
    atomic_uint view_version;   /* views: the storage version when grad_fn
                                   was last set; a read that finds another
                                   version regenerates it (views.c).  Here
                                   it fills output_nr's padding. */
    yg_node *grad_accumulator;  /* weak: AccumulateGrad of this leaf */
    yg_hook *hooks;             /* leaf tensor and post-accumulate hooks (owned) */
    yg_hook *retain_hook;       /* weak: this tensor's RETAIN_GRAD hook in
                                   grad_fn->pre_hooks, cleared on death */
    yg_tensor *view_base;       /* strong: the (root) tensor this one views,
                                   NULL when not a view */
    const char *view_op;        /* the multi-output view op that made it
                                   ("split"), NULL otherwise */
};

/* ---- nodes ---- */

/* Allocates a node of size bytes (a struct whose first member is
 * yg_node) with n_edges zeroed edges and n_outputs output slots; refcount
 * 1; fields after the header zeroed.  NULL with message on OOM. */
yg_status yg__node_new(const yg_node_vtable *vt,
                       size_t size,
                       int32_t n_edges,
                       int32_t n_outputs,
                       yg_node **out);
yg_node *yg__node_retain(yg_node *n);
/* NULL-safe; frees the node (release_saved, edges) with the last ref. */
void yg__node_release(yg_node *n);

/* Whether gradient i is wanted (edge i points somewhere). */
static inline bool yg__node_needs_grad(const yg_node *n, int32_t i)
{
    return n->next_edges[i].node != NULL;
}

/* Whether any gradient from i on is wanted: the edges of a differentiable
 * Tensor[] input, one per item, come after the node's other edges. */
static inline bool yg__node_needs_grad_from(const yg_node *n, int32_t i)
{
    for (; i < n->n_edges; i++)
        if (n->next_edges[i].node != NULL)
            return true;
    return false;
}

/* The autograd state of t, created on first use (autograd/meta.c). */
yg_status yg__autograd_meta_get(yg_tensor *t, yg_autograd_meta **out);

/* The AccumulateGrad node of a leaf that requires grad, created on first
 * use and cached weakly in the leaf (autograd/meta.c).  out: new ref. */
yg_status yg__grad_accumulator(yg_tensor *leaf, yg_node **out);

/* Adds g into leaf's .grad (autograd/meta.c): the AccumulateGrad step.
 * A contiguous g (in leaf's dtype, without history) is stored as .grad
 * itself when steal_refs references are all there are to it and its
 * storage (0: never; it is copied); a .grad that only leaf's autograd
 * state holds is added into in place. */
yg_status yg__accumulate_grad(yg_tensor *leaf, const yg_tensor *g, long steal_refs);

/* Whether refs references are all that hold t and no other tensor
 * shares its storage but the root base t's autograd state keeps when t
 * is a view (and only t holds that base): no one else can see a write to
 * t or see t change, so the engine may keep a gradient as .grad, or add
 * into one in place, instead of copying it.  Cannot fail. */
bool yg__tensor_is_exclusive(const yg_tensor *t, long refs);

/* The lock guarding a leaf's .grad, hooks and grad_accumulator, so that
 * threads running backward over graphs that share the leaf accumulate
 * correctly (striped: a small array of mutexes picked by address). */
void yg__leaf_lock(const yg_tensor *leaf);
void yg__leaf_unlock(const yg_tensor *leaf);
/* Which of the striped mutexes guards t.  Cannot fail. */
int yg__leaf_lock_stripe(const yg_tensor *t);
/* For tests: with on, every tensor maps to one mutex, so code that takes
 * a leaf lock while holding another (they do not nest) deadlocks at once
 * instead of when two addresses happen to share a stripe.  Only while no
 * other thread holds a leaf lock.  Cannot fail. */
void yg__leaf_locks_share_one(bool on);

/* A RETAIN_GRAD hook for t on output_nr, not yet in any list
 * (autograd/hooks.c).  out: owned by the caller until appended. */
yg_status yg__retain_hook_new(yg_tensor *t, int32_t output_nr, yg_hook **out);

/* Runs hooks (autograd/hooks.c). */
yg_status yg__run_tensor_hooks(yg_hook *hooks, int32_t output_nr, yg_tensor **grad);
yg_status yg__run_pre_hooks(yg_node *node, yg_tensor **grads);
yg_status yg__run_post_hooks(yg_node *node, yg_tensor **grad_inputs, yg_tensor *const *grads);
/* Runs leaf's post-accumulate hooks (in hooks, its meta's list). */
yg_status yg__run_post_accumulate_hooks(yg_hook *hooks, yg_tensor *leaf);
void yg__hooks_free(yg_hook *hooks);

/* ---- recording (called by generated wrappers) ---- */

/* True when grad mode is on and any of the n tensors (NULLs allowed)
 * requires grad. */
bool yg__any_requires_grad(int n, const yg_tensor *const *tensors);

/* Sets edge i of node to the gradient edge of t: its grad_fn, or its
 * leaf's AccumulateGrad, or none when t is NULL or needs no grad. */
yg_status yg__node_set_edge(yg_node *node, int32_t i, const yg_tensor *t);

/* Makes output slot output_nr of node the history of t: t->grad_fn = node
 * (new ref), records t's dtype/sizes in node->outputs[output_nr].  An
 * integer or bool t gets no history and the call does nothing (such
 * tensors never carry gradients); float16 and bfloat16 carry it like
 * float32 (their gradients have their dtype). */
yg_status yg__set_history(yg_tensor *t, yg_node *node, int32_t output_nr);

/* ---- views and in-place (autograd/views.c) ---- */

/* Marks view (an output of an op whose return is annotated (a)) as a
 * view of self's root base.  multi_output_op: the op's name when it
 * returns several views (split, chunk, unbind), else NULL: in-place on
 * such views is refused later. */
yg_status yg__make_view(yg_tensor *view, const yg_tensor *self, const char *multi_output_op);

/* Checks, before an in-place op writes self with grad mode on, that the
 * write is allowed: not a leaf that requires grad, not a view of one, not
 * a view from a multi-output op that requires grad.  Messages name op. */
yg_status yg__check_inplace(const char *op, const yg_tensor *self);

/* Whether view t's history was set at its storage's current version
 * (acquire: a grad_fn published by a regeneration is visible after it). */
static inline bool yg__view_is_current(const yg_tensor *t)
{
    return atomic_load_explicit(&t->autograd->view_version, memory_order_acquire) ==
           atomic_load(&t->storage->version);
}

/* Brings a stale view's history up to date (t->autograd and its
 * view_base non-NULL): since t's grad_fn was set, t's storage was written
 * in place (through another view, or on the base), so grad_fn becomes an
 * AsStridedBackward of the base's current history (none when the base
 * needs no gradient), and t's retain_grad hook moves to it.  A view
 * without history that is a leaf that requires grad, or was made with
 * grad mode off or detach_'d, stays without.  Thread-safe against other readers
 * of t (t's leaf lock). */
yg_status yg__view_refresh(const yg_tensor *t);

/* Whether stale view t (as above) has history, as it will after a
 * refresh.  Cannot fail. */
bool yg__view_has_history(const yg_tensor *t);

/* Call before reading t->autograd->grad_fn / output_nr to record an edge
 * or a hook: regenerates t's history when t is a stale view.  One
 * version comparison when nothing changed. */
static inline yg_status yg__refresh_history(const yg_tensor *t)
{
    if (t == NULL || t->autograd == NULL || t->autograd->view_base == NULL ||
        yg__view_is_current(t))
        return YG_OK;
    return yg__view_refresh(t);
}

/* After the kernel wrote self in place: makes node (whose edge 0 already
 * holds self's old gradient edge) self's history.  When self is a view,
 * the base's history is rewritten instead: the base gets a CopySlices
 * node wrapping node, and self becomes an as_strided view of the base. */
yg_status yg__rebase_history(yg_tensor *self, yg_node *node);

/* ---- saved values ---- */

typedef struct yg_saved_tensor {
    yg_tensor *data;     /* strong ref; for an input the tensor itself, for
                            an output a detached alias; NULL: nothing saved */
    uint32_t version;    /* storage version when saved */
    bool was_saved;      /* save was called with a tensor */
    bool is_output;      /* re-attach grad_fn = saving node on unpack */
    int32_t output_nr;
    const char *name;    /* argument name for messages: "self", "result" */
} yg_saved_tensor;

/* Saves t (NULL saves nothing).  is_output: t is an output of node. */
yg_status yg__saved_save(yg_saved_tensor *s, const yg_tensor *t, bool is_output, int32_t output_nr,
                         const char *name);

/* Gives back the saved tensor as a new ref (NULL when nothing was saved).
 * Fails with YG_ERR_AUTOGRAD when the node's saved values were released
 * ("... a second time ...") or the tensor was modified in place since it
 * was saved ("... version 1, expected 0 ..."). */
yg_status yg__saved_unpack(const yg_saved_tensor *s, yg_node *node, yg_tensor **out);

/* Drops the saved reference.  Idempotent. */
void yg__saved_release(yg_saved_tensor *s);

/* Sizes saved instead of a tensor when a formula only reads metadata. */
typedef struct yg_saved_sizes {
    int32_t ndim;
    int64_t sizes[YG_MAX_DIMS];
} yg_saved_sizes;

static inline void yg__saved_sizes_save(yg_saved_sizes *s, const yg_tensor *t)
{
    s->ndim = t->ndim;
    for (int32_t i = 0; i < t->ndim; i++)
        s->sizes[i] = t->sizes[i];
}

/* Size of dim `dim` of saved sizes (size(x, d) in a formula; a negative
 * dim counts from the end) into *out.  name is x's name for the message.
 * Fails with YG_ERR_INDEX, "size(<name>, <dim>): dim <dim> out of range
 * for <name> [sizes] ...", when there is no such dim (a 0-dim x has
 * none); the node's apply prefixes its own name. */
yg_status yg__saved_sizes_at(const yg_saved_sizes *s, const char *name, int64_t dim, int64_t *out);

/* A saved int[] argument (copied: the caller's array is borrowed). */
typedef struct yg_saved_int_list {
    int64_t len;
    int64_t *items; /* owned; NULL when len == 0 */
} yg_saved_int_list;

yg_status yg__saved_int_list_save(yg_saved_int_list *s, const int64_t *items, int64_t len);
void yg__saved_int_list_release(yg_saved_int_list *s);
/* Each item's size along dim (wrapped against its ndim) of a Tensor[]
 * (list_sizes(tensors, dim) in a formula): metadata only, the items
 * themselves are not kept. */
yg_status yg__saved_list_sizes_save(yg_saved_int_list *s,
                                    const yg_tensor *const *items, /* borrowed, len entries */
                                    int64_t len,
                                    int64_t dim);

/* A saved Tensor[] / Tensor?[] argument: one saved tensor per item (a
 * NULL item saves nothing and unpacks as NULL), each version-checked. */
typedef struct yg_saved_tensor_list {
    int64_t len;
    yg_saved_tensor *items; /* owned; NULL when len == 0 */
} yg_saved_tensor_list;

yg_status yg__saved_list_save(yg_saved_tensor_list *s,
                              const yg_tensor *const *items,
                              int64_t len,
                              const char *name);
/* out: a new array of s->len new refs (NULL items stay NULL), released
 * with yg_release_list(*out, s->len); NULL when s->len == 0.  Fails as
 * yg__saved_unpack does, leaving *out NULL.  Release frees the items but
 * keeps len, so an unpack after it fails ("... a second time ..."). */
yg_status yg__saved_list_unpack(const yg_saved_tensor_list *s, yg_node *node, yg_tensor ***out);
void yg__saved_list_release(yg_saved_tensor_list *s);

/* The gradients of node's outputs as one array for a formula that reads
 * them as a list (ops returning Tensor[]): grads[i] retained, or zeros of
 * output i's recorded dtype and sizes where it is undefined (NULL).
 * out: new array of node->n_outputs new refs; release with
 * yg_release_list(*out, node->n_outputs). */
yg_status yg__node_defined_grads(const yg_node *node, yg_tensor *const *grads, yg_tensor ***out);

/* ---- grad mode (autograd/grad_mode.c) ---- */
/* yg_is_grad_enabled / yg_set_grad_enabled are public (autograd.h). */

#endif /* YAGRAD_AUTOGRAD_NODE_H */
