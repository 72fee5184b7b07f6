/*
 * interpreter.c - yg_graph_run: runs a graph node by node through the
 * generated boxed-op table (boxing.h), which calls the public ops, so a
 * graph computes exactly what the eager calls it was traced from compute,
 * autograd included.
 *
 * A run first makes a plan without touching the graph (so threads may
 * run one graph at once): every value gets a slot in a frame, found
 * through a pointer hash, and the index of the last node that reads it
 * (graph outputs count as read after the last node).  The frame holds one
 * reference per live value; after a node runs, the inputs it was the last
 * reader of are released, and outputs nobody reads are released at once.
 * So a chain of n ops on a large tensor holds two or three tensors at a
 * time, not n (tests/test_jit_interp.c checks both the live-value count
 * and the allocator's peak).  The plan is then compiled into steps (each
 * node's boxed function and slots, no hashing at run time).  It costs
 * O(values) to make; a frozen graph (the executor's plans, the f and df
 * graphs of DifferentiableGraph nodes) keeps it, other graphs make it on
 * every run.
 *
 * Constants: the tensor attribute of a prim::Constant is never written,
 * so when no node of the graph writes memory the frame shares it (one
 * retain, no copy: a traced graph's weights are constants).  When some
 * node does, every constant is copied per run, since an in-place op on a
 * constant or on a view of one would otherwise change the graph.  Outputs
 * that share a constant's storage are copied at the end, so a caller
 * writing an output in place cannot change the graph either.
 */
#include "jit/exec/interpreter.h"

#include "jit/autodiff/autodiff.h"
#include "jit/ir/boxing.h"
#include "jit/fuser/fuser.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the last run on this thread saw (for tests). */
static _Thread_local yg_interp_stats last_stats;

void yg__interp_last_stats(yg_interp_stats *out) {
    *out = last_stats;
}

/* ---- the plan ---- */

typedef struct plan {
    const yg_ir_value **keys; /* open addressing: value -> slot */
    int64_t *slots;
    uint64_t mask;
    int64_t n_values;
    int64_t *last_use; /* per slot: index of the last node reading it, n_nodes
                          for graph outputs, -1 when nothing reads it */
    int32_t max_inputs, max_outputs;
} plan;

static uint64_t hash_ptr(const void *p) {
    uint64_t h = (uint64_t)(uintptr_t)p;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

static void plan_put(plan *p, const yg_ir_value *v, int64_t slot) {
    uint64_t j = hash_ptr(v) & p->mask;
    while (p->keys[j] != NULL)
        j = (j + 1) & p->mask;
    p->keys[j] = v;
    p->slots[j] = slot;
}

static int64_t plan_slot(const plan *p, const yg_ir_value *v) {
    uint64_t j = hash_ptr(v) & p->mask;
    while (p->keys[j] != v) {
        YG_ASSERT(p->keys[j] != NULL);
        j = (j + 1) & p->mask;
    }
    return p->slots[j];
}

static void plan_free(plan *p) {
    free(p->keys);
    free(p->slots);
    free(p->last_use);
}

static yg_status plan_make(const yg_graph *g, plan *p) {
    int64_t n = g->param->n_outputs, k = 0, idx = 0;
    uint64_t cap = 16;
    memset(p, 0, sizeof *p);
    for (const yg_ir_node *node = g->first; node != NULL; node = node->next)
        n += node->n_outputs;
    while (cap < (uint64_t)n * 2)
        cap *= 2;
    p->mask = cap - 1;
    p->n_values = n;
    p->keys = calloc(cap, sizeof *p->keys);
    p->slots = malloc(cap * sizeof *p->slots);
    p->last_use = malloc((size_t)(n > 0 ? n : 1) * sizeof *p->last_use);
    if (p->keys == NULL || p->slots == NULL || p->last_use == NULL) {
        plan_free(p);
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "interpreter: out of memory");
    }
    for (int32_t i = 0; i < g->param->n_outputs; i++)
        plan_put(p, g->param->outputs[i], k++);
    for (const yg_ir_node *node = g->first; node != NULL; node = node->next) {
        for (int32_t i = 0; i < node->n_outputs; i++)
            plan_put(p, node->outputs[i], k++);
        if (node->n_inputs > p->max_inputs)
            p->max_inputs = node->n_inputs;
        if (node->n_outputs > p->max_outputs)
            p->max_outputs = node->n_outputs;
    }
    for (int64_t i = 0; i < n; i++)
        p->last_use[i] = -1;
    for (const yg_ir_node *node = g->first; node != NULL; node = node->next, idx++) {
        for (int32_t i = 0; i < node->n_inputs; i++)
            p->last_use[plan_slot(p, node->inputs[i])] = idx;
    }
    for (int32_t i = 0; i < g->ret->n_inputs; i++)
        p->last_use[plan_slot(p, g->ret->inputs[i])] = g->n_nodes;
    return YG_OK;
}

/* ---- checks ---- */

/* "[2, ?]" for a type's sizes. */
static void format_type_sizes(const yg_ir_type *t, char *buf, size_t len) {
    size_t pos = 0;
    pos += (size_t)snprintf(buf + pos, len - pos, "[");
    for (int32_t i = 0; i < t->ndim && pos < len; i++) {
        if (t->sizes[i] == YG_IR_UNKNOWN)
            pos += (size_t)snprintf(buf + pos, len - pos, "%s?", i > 0 ? ", " : "");
        else
            pos += (size_t)snprintf(
                buf + pos, len - pos, "%s%" PRId64, i > 0 ? ", " : "", t->sizes[i]);
    }
    if (pos < len)
        snprintf(buf + pos, len - pos, "]");
}

yg_status yg__graph_check_input(
    const char *who, const yg_ir_value *v, int64_t i, const yg_tensor *t, bool sizes) {
    const yg_ir_type *ty = &v->type;
    char want[160], got[160];
    if (ty->kind == YG_IR_TYPE_NONE) {
        if (t != NULL)
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s: input %" PRId64 " %%%s has type None but got a tensor",
                            who,
                            i,
                            v->name);
        return YG_OK;
    }
    if (t == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: input %" PRId64 " %%%s is NULL but its type is Tensor",
                        who,
                        i,
                        v->name);
    if (ty->dtype != YG_IR_UNKNOWN && ty->dtype != (int32_t)yg_tensor_dtype(t))
        return yg__fail(YG_ERR_DTYPE,
                        "%s: input %" PRId64 " %%%s: expected dtype %s, got %s",
                        who,
                        i,
                        v->name,
                        yg_dtype_name((yg_dtype)ty->dtype),
                        yg_dtype_name(yg_tensor_dtype(t)));
    if (ty->device != YG_IR_UNKNOWN && ty->device != (int32_t)yg_tensor_device(t))
        return yg__fail(YG_ERR_DEVICE,
                        "%s: input %" PRId64 " %%%s: expected device %s, got %s",
                        who,
                        i,
                        v->name,
                        yg__device_name((yg_device)ty->device),
                        yg__device_name(yg_tensor_device(t)));
    if (ty->ndim == YG_IR_UNKNOWN)
        return YG_OK;
    if (!sizes) {
        if (ty->ndim != t->ndim)
            return yg__fail(YG_ERR_SHAPE,
                            "%s: input %" PRId64 " %%%s: expected rank %d, got %d",
                            who,
                            i,
                            v->name,
                            ty->ndim,
                            t->ndim);
        return YG_OK;
    }
    bool ok = ty->ndim == t->ndim;
    for (int32_t d = 0; ok && d < ty->ndim; d++)
        ok = ty->sizes[d] == YG_IR_UNKNOWN || ty->sizes[d] == t->sizes[d];
    if (!ok) {
        format_type_sizes(ty, want, sizeof want);
        return yg__fail(YG_ERR_SHAPE,
                        "%s: input %" PRId64 " %%%s: expected sizes %s, got %s",
                        who,
                        i,
                        v->name,
                        want,
                        yg__format_sizes(t->sizes, t->ndim, got, sizeof got));
    }
    return YG_OK;
}

/* Prefixes this thread's message with "interpreter: <node as text>". */
static yg_status fail_at(yg_status st, const yg_ir_node *n) {
    char what[256];
    char prefix[300];
    yg__ir_node_describe(n, what, sizeof what);
    snprintf(prefix, sizeof prefix, "interpreter: %s", what);
    return yg__fail_prefix(st, prefix);
}

/* ---- the compiled plan ----
 *
 * The hash plan above is made once per graph and turned into steps: per
 * node its kind of work, its boxed function (op nodes: looked up and
 * checked once, not per run), the frame slots of its inputs and outputs,
 * and the slots to release after it.  A run then touches no hash table
 * and parses no schema. */

enum { STEP_OP, STEP_CONSTANT, STEP_NONE, STEP_DIFF, STEP_FUSION, STEP_REFUSED };

typedef struct step {
    const yg_ir_node *node;
    yg_boxed_fn fn;
    int32_t kind;
    int32_t n_rel;
    int64_t in, out, rel; /* offsets into the slot arrays */
} step;

struct yg_interp_plan {
    int64_t n_values, n_steps, n_inputs, n_outputs;
    step *steps;
    int64_t *in_slots, *out_slots, *rel_slots;
    int64_t *graph_out; /* slot of each graph output */
    bool *input_live;   /* per graph input: some node or output reads it */
    int32_t max_inputs, max_outputs;
    bool copy_constants;
};

void yg__interp_plan_free(yg_interp_plan *p) {
    if (p == NULL)
        return;
    free(p->steps);
    free(p->in_slots);
    free(p->out_slots);
    free(p->rel_slots);
    free(p->graph_out);
    free(p->input_live);
    free(p);
}

yg_status yg__interp_plan_create(const yg_graph *g, yg_interp_plan **out) {
    plan h;
    *out = NULL;
    YG_RETURN_IF_ERROR(plan_make(g, &h));
    yg_interp_plan *p = calloc(1, sizeof *p);
    int64_t n_in = 0, n_out = 0;
    for (const yg_ir_node *n = g->first; n != NULL; n = n->next) {
        n_in += n->n_inputs;
        n_out += n->n_outputs;
    }
    if (p != NULL) {
        p->n_values = h.n_values;
        p->n_steps = g->n_nodes;
        p->n_inputs = g->param->n_outputs;
        p->n_outputs = g->ret->n_inputs;
        p->max_inputs = h.max_inputs;
        p->max_outputs = h.max_outputs;
        p->steps = calloc((size_t)(g->n_nodes + 1), sizeof *p->steps);
        p->in_slots = malloc((size_t)(n_in + 1) * sizeof *p->in_slots);
        p->out_slots = malloc((size_t)(n_out + 1) * sizeof *p->out_slots);
        p->rel_slots = malloc((size_t)(n_in + n_out + 1) * sizeof *p->rel_slots);
        p->graph_out = malloc((size_t)(g->ret->n_inputs + 1) * sizeof *p->graph_out);
        p->input_live = calloc((size_t)(g->param->n_outputs + 1), sizeof *p->input_live);
    }
    if (p == NULL || p->steps == NULL || p->in_slots == NULL || p->out_slots == NULL ||
        p->rel_slots == NULL || p->graph_out == NULL || p->input_live == NULL) {
        yg__interp_plan_free(p);
        plan_free(&h);
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "interpreter: out of memory");
    }
    int64_t ki = 0, ko = 0, kr = 0, idx = 0;
    for (const yg_ir_node *n = g->first; n != NULL; n = n->next, idx++) {
        step *s = &p->steps[idx];
        s->node = n;
        s->in = ki;
        s->out = ko;
        s->rel = kr;
        if (n->kind == yg__prim_constant)
            s->kind = STEP_CONSTANT;
        else if (n->kind == yg__prim_none)
            s->kind = STEP_NONE;
        else if (n->kind == yg__prim_diff_graph)
            s->kind = STEP_DIFF;
        else if (n->kind == yg__prim_fusion_group)
            s->kind = STEP_FUSION;
        else if (n->op == NULL)
            s->kind = STEP_REFUSED;
        else
            s->kind = STEP_OP;
        if (s->kind == STEP_OP) {
            const yg_boxed_op *b = yg__boxed_op_of(n);
            yg_ir_kind_info info = yg__ir_kind_info(n);
            s->fn = b->fn;
            if (b->fn == NULL || (info.n_returns >= 0 && info.n_returns != n->n_outputs))
                s->kind = STEP_REFUSED; /* reported, with the reason, if it runs */
        }
        p->copy_constants |= yg__ir_node_has_side_effects(n);
        for (int32_t i = 0; i < n->n_inputs; i++)
            p->in_slots[ki++] = plan_slot(&h, n->inputs[i]);
        for (int32_t i = 0; i < n->n_outputs; i++)
            p->out_slots[ko++] = plan_slot(&h, n->outputs[i]);
        /* What dies after this node: inputs it reads last (once each),
         * and outputs nobody reads. */
        for (int32_t i = 0; i < n->n_inputs; i++) {
            int64_t sl = p->in_slots[s->in + i];
            bool dup = false;
            for (int32_t j = 0; j < i; j++)
                dup |= p->in_slots[s->in + j] == sl;
            if (h.last_use[sl] == idx && !dup)
                p->rel_slots[kr++] = sl;
        }
        for (int32_t i = 0; i < n->n_outputs; i++) {
            int64_t sl = p->out_slots[s->out + i];
            if (h.last_use[sl] < 0)
                p->rel_slots[kr++] = sl;
        }
        s->n_rel = (int32_t)(kr - s->rel);
    }
    for (int32_t i = 0; i < g->ret->n_inputs; i++)
        p->graph_out[i] = plan_slot(&h, g->ret->inputs[i]);
    for (int32_t i = 0; i < g->param->n_outputs; i++)
        p->input_live[i] = h.last_use[i] >= 0;
    plan_free(&h);
    *out = p;
    return YG_OK;
}

/* ---- running ---- */

typedef struct frame {
    yg_tensor **vals; /* one reference per live slot (NULL: None or freed) */
    int64_t n;
    int64_t live, peak;
    bool copy_constants;
    const yg_tensor **constants; /* the graph's constant tensors used */
    int64_t n_constants;
} frame;

static void frame_set(frame *f, int64_t slot, yg_tensor *t) {
    f->vals[slot] = t;
    if (t != NULL && ++f->live > f->peak)
        f->peak = f->live;
}

static void frame_drop(frame *f, int64_t slot) {
    if (f->vals[slot] != NULL) {
        yg_release(f->vals[slot]);
        f->vals[slot] = NULL;
        f->live--;
        last_stats.released_early++;
    }
}

static yg_status run_constant(frame *f, const yg_ir_node *n, yg_tensor **out) {
    const yg_ir_attr *a = yg__ir_node_attr(n, "value");
    if (a == NULL)
        return fail_at(yg__fail(YG_ERR_INVALID_ARGUMENT, "prim::Constant has no value"), n);
    switch (a->kind) {
    case YG_IR_ATTR_TENSOR:
        f->constants[f->n_constants++] = a->u.t;
        if (f->copy_constants)
            return yg__tensor_contiguous_as(a->u.t, a->u.t->dtype, false, out);
        *out = yg_retain(a->u.t);
        return YG_OK;
    case YG_IR_ATTR_INT:
        return yg_tensor_scalar((double)a->u.i, YG_INT64, out);
    case YG_IR_ATTR_FLOAT:
        return yg_tensor_scalar(a->u.f, YG_FLOAT64, out);
    default:
        return fail_at(yg__fail(YG_ERR_INVALID_ARGUMENT,
                                "prim::Constant value must be a tensor, int or float"),
                       n);
    }
}

/* Why a STEP_REFUSED node cannot run. */
static yg_status refuse(const yg_ir_node *n) {
    if (n->op == NULL)
        return fail_at(yg__fail(YG_ERR_NOT_IMPLEMENTED,
                                "%s nodes are not run by the interpreter yet",
                                n->kind),
                       n);
    const yg_boxed_op *b = yg__boxed_op_of(n);
    if (b->fn == NULL)
        return yg__fail(YG_ERR_NOT_IMPLEMENTED, "interpreter: %s: %s", n->kind, b->unsupported);
    yg_ir_kind_info info = yg__ir_kind_info(n);
    return fail_at(yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s returns %d values but the node has %d outputs",
                            n->kind,
                            info.n_returns,
                            n->n_outputs),
                   n);
}

/* Runs step s, storing its outputs in the frame. */
static yg_status
run_step(frame *f, const yg_interp_plan *p, const step *s, yg_tensor **in, yg_tensor **out) {
    const yg_ir_node *n = s->node;
    yg_status st = YG_OK;
    for (int32_t i = 0; i < n->n_outputs; i++)
        out[i] = NULL;
    for (int32_t i = 0; i < n->n_inputs; i++)
        in[i] = f->vals[p->in_slots[s->in + i]];
    switch (s->kind) {
    case STEP_OP:
        st = s->fn(n, in, n->n_inputs, out);
        if (st != YG_OK)
            st = fail_at(st, n);
        break;
    case STEP_CONSTANT:
        st = run_constant(f, n, &out[0]);
        break;
    case STEP_NONE:
        break;
    case STEP_DIFF:
        st = yg__diff_graph_run(n, in, out);
        if (st != YG_OK)
            st = fail_at(st, n);
        break;
    case STEP_FUSION:
        st = yg__fusion_group_run(n, in, out);
        if (st != YG_OK)
            st = fail_at(st, n);
        break;
    default:
        st = refuse(n);
        break;
    }
    if (st != YG_OK)
        return st;
    for (int32_t i = 0; i < n->n_outputs; i++)
        frame_set(f, p->out_slots[s->out + i], out[i]);
    return YG_OK;
}

/* The new reference returned for output value t: t itself, or a copy when
 * it shares memory with one of the graph's constants. */
static yg_status output_ref(const frame *f, yg_tensor *t, yg_tensor **out) {
    for (int64_t i = 0; t != NULL && i < f->n_constants; i++) {
        if (t->storage == f->constants[i]->storage)
            return yg__tensor_contiguous_as(t, t->dtype, false, out);
    }
    *out = yg_retain(t);
    return YG_OK;
}

static yg_status check_args(const yg_graph *g,
                            yg_tensor *const *inputs,
                            int64_t n_inputs,
                            yg_tensor **outputs,
                            int64_t n_outputs) {
    if (g == NULL || (outputs == NULL && n_outputs > 0) || (inputs == NULL && n_inputs > 0))
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "interpreter: graph, inputs or outputs is NULL");
    if (n_inputs != g->param->n_outputs)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "interpreter: graph has %d inputs, got %" PRId64,
                        g->param->n_outputs,
                        n_inputs);
    if (n_outputs != g->ret->n_inputs)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "interpreter: graph has %d outputs, got room for %" PRId64,
                        g->ret->n_inputs,
                        n_outputs);
    for (int64_t i = 0; i < n_inputs; i++)
        YG_RETURN_IF_ERROR(
            yg__graph_check_input("interpreter", g->param->outputs[i], i, inputs[i], true));
    return YG_OK;
}

/* Frames of up to this many values, and nodes of up to this many inputs
 * and outputs, live on the stack. */
#define STACK_VALUES 64
#define STACK_IO     16

static yg_status run_plan(const yg_interp_plan *p,
                          yg_tensor *const *inputs,
                          int64_t n_inputs,
                          yg_tensor **outputs,
                          int64_t n_outputs) {
    yg_tensor *vals_buf[STACK_VALUES], *io_buf[2 * STACK_IO];
    const yg_tensor *const_buf[STACK_VALUES];
    frame f = {0};
    yg_tensor **in = NULL, **out = NULL;
    yg_status st = YG_OK;
    bool small = p->n_values <= STACK_VALUES && p->n_steps <= STACK_VALUES;
    bool small_io = p->max_inputs <= STACK_IO && p->max_outputs <= STACK_IO;

    f.n = p->n_values;
    if (small) {
        memset(vals_buf, 0, (size_t)p->n_values * sizeof *vals_buf);
        f.vals = vals_buf;
        f.constants = const_buf;
    } else {
        f.vals = calloc((size_t)(f.n > 0 ? f.n : 1), sizeof *f.vals);
        f.constants = malloc((size_t)(p->n_steps > 0 ? p->n_steps : 1) * sizeof *f.constants);
    }
    if (small_io) {
        in = io_buf;
        out = io_buf + STACK_IO;
    } else {
        in = malloc((size_t)(p->max_inputs > 0 ? p->max_inputs : 1) * sizeof *in);
        out = malloc((size_t)(p->max_outputs > 0 ? p->max_outputs : 1) * sizeof *out);
    }
    if (f.vals == NULL || f.constants == NULL || in == NULL || out == NULL) {
        st = yg__fail(YG_ERR_OUT_OF_MEMORY, "interpreter: out of memory");
        goto out;
    }
    f.copy_constants = p->copy_constants;
    for (int64_t i = 0; i < n_inputs; i++) {
        if (p->input_live[i])
            frame_set(&f, i, yg_retain(inputs[i]));
    }
    for (int64_t k = 0; k < p->n_steps; k++) {
        const step *s = &p->steps[k];
        st = run_step(&f, p, s, in, out);
        if (st != YG_OK)
            goto out;
        last_stats.nodes_run++;
        for (int32_t r = 0; r < s->n_rel; r++)
            frame_drop(&f, p->rel_slots[s->rel + r]);
    }
    for (int64_t i = 0; i < n_outputs; i++) {
        st = output_ref(&f, f.vals[p->graph_out[i]], &outputs[i]);
        if (st != YG_OK)
            goto out;
    }
out:
    if (st != YG_OK) {
        for (int64_t i = 0; i < n_outputs; i++) {
            yg_release(outputs[i]);
            outputs[i] = NULL;
        }
    }
    last_stats.peak_live = f.peak;
    for (int64_t i = 0; f.vals != NULL && i < f.n; i++)
        yg_release(f.vals[i]);
    if (!small) {
        free(f.vals);
        free(f.constants);
    }
    if (!small_io) {
        free(in);
        free(out);
    }
    return st;
}

static void cached_plan_free(void *p) {
    yg__interp_plan_free(p);
}

/* A frozen graph's plan, made on its first run. */
static const yg_graph_cache_kind plan_cache = {"interpreter plan", cached_plan_free};

yg_status yg__graph_run_planned(const yg_graph *g,
                                const yg_interp_plan *p,
                                yg_tensor *const *inputs,
                                int64_t n_inputs,
                                yg_tensor **outputs,
                                int64_t n_outputs) {
    for (int64_t i = 0; outputs != NULL && i < n_outputs; i++)
        outputs[i] = NULL;
    last_stats = (yg_interp_stats){0};
    YG_RETURN_IF_ERROR(check_args(g, inputs, n_inputs, outputs, n_outputs));
    return run_plan(p, inputs, n_inputs, outputs, n_outputs);
}

yg_status yg_graph_run(const yg_graph *g,
                       yg_tensor *const *inputs,
                       int64_t n_inputs,
                       yg_tensor **outputs,
                       int64_t n_outputs) {
    yg_interp_plan *p = NULL;
    for (int64_t i = 0; outputs != NULL && i < n_outputs; i++)
        outputs[i] = NULL;
    last_stats = (yg_interp_stats){0};
    YG_RETURN_IF_ERROR(check_args(g, inputs, n_inputs, outputs, n_outputs));
    /* A frozen graph (it no longer changes) keeps its plan. */
    if (g->frozen) {
        p = yg__graph_cache_get(g, &plan_cache);
        if (p == NULL) {
            YG_RETURN_IF_ERROR(yg__interp_plan_create(g, &p));
            p = yg__graph_cache_put((yg_graph *)g, &plan_cache, p);
        }
        if (p != NULL)
            return run_plan(p, inputs, n_inputs, outputs, n_outputs);
    }
    YG_RETURN_IF_ERROR(yg__interp_plan_create(g, &p));
    yg_status st = run_plan(p, inputs, n_inputs, outputs, n_outputs);
    yg__interp_plan_free(p);
    return st;
}
