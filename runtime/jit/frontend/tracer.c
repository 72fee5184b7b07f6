/*
 * tracer.c - yg_trace: runs a function once and records the ops it calls
 * as a graph, as the op-call observer of its thread (core/observer.h).
 *
 * State.  The tracer of this thread lives on yg_trace's stack and is
 * installed as the thread's op-call observer while fn runs; core keeps
 * the pause depth: an op call is reported only at depth 0, and each
 * generated <op>_traced helper pauses around the call it reports, so what
 * an op does inside (a composite's parts, a kernel calling ops,
 * autograd's saves) is never recorded.  The autograd engine pauses too,
 * so a backward run inside fn records nothing.  Other threads are not
 * traced.
 *
 * Values.  A table maps each tensor the trace has met to the value it
 * stands for: example inputs to graph inputs, op results to node
 * outputs, and an in-place op's written argument to that op's output, so
 * later reads see the new value.  The table holds a reference to every
 * tensor in it until the trace ends, so a tensor freed by fn cannot have
 * its address reused by a new one and be mistaken for it.  A tensor met
 * for the first time is classified by its creation serial (core.h)
 * against the serial read when the trace began: older tensors (weights,
 * buffers the function closes over) become graph inputs marked as
 * parameters, never constants, so the graph stays valid when they are
 * trained; newer ones (made inside fn by yg_tensor_from_data and the
 * like) become prim::Constant.
 *
 * Failure.  Recording can fail (out of memory, an argument type the hook
 * cannot record, a constant on CUDA).  The first failure is kept with its
 * message, the op reports it to fn, and yg_trace reports it even if fn
 * ignores it.
 */
#include "core/core.h"
#include "core/observer.h"
#include "jit/ir/ir.h"
#include "yagrad/autograd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct trace_entry {
    yg_tensor *tensor; /* a reference held until the trace ends; NULL: free slot */
    yg_ir_value *value;
} trace_entry;

/* A result of the node being recorded and the argument it writes. */
typedef struct pending_output {
    yg_tensor **slot;        /* the op's out-parameter; *slot NULL: undefined result */
    const yg_tensor *writes; /* nullable */
} pending_output;

/* The node being recorded, between begin_node and end_node. */
typedef struct pending_node {
    const char *kind;
    yg_status st; /* first problem met while building, with its message set */
    yg_ir_value **inputs;
    int32_t n_inputs, cap_inputs;
    yg_ir_attr *attrs;
    int32_t n_attrs, cap_attrs;
    pending_output *outputs;
    int32_t n_outputs, cap_outputs;
    yg_tensor ***list; /* a list return's out-parameters, or NULL */
    int64_t *list_len;
} pending_node;

typedef struct tracer {
    yg_graph *graph;
    bool through_composites;
    uint64_t start_serial;
    trace_entry *slots; /* open addressing, linear probing, power-of-two cap */
    int64_t cap, len;
    yg_tensor **params; /* new refs, in graph input order */
    int64_t n_params, cap_params;
    pending_node node;
    yg_status failure; /* first recording failure, message in failure_msg */
    char failure_msg[1024];
} tracer;


/* ---- the tensor -> value table ---- */

static uint64_t hash_ptr(const void *p) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static trace_entry *table_slot(const tracer *tr, const yg_tensor *t) {
    uint64_t mask = (uint64_t)tr->cap - 1;
    for (uint64_t i = hash_ptr(t) & mask;; i = (i + 1) & mask) {
        if (tr->slots[i].tensor == t || tr->slots[i].tensor == NULL)
            return &tr->slots[i];
    }
}

static yg_ir_value *table_find(const tracer *tr, const yg_tensor *t) {
    if (tr->cap == 0)
        return NULL;
    trace_entry *e = table_slot(tr, t);
    return e->tensor != NULL ? e->value : NULL;
}

static bool table_grow(tracer *tr) {
    int64_t cap = tr->cap == 0 ? 64 : tr->cap * 2;
    trace_entry *old = tr->slots;
    int64_t old_cap = tr->cap;
    tr->slots = calloc((size_t)cap, sizeof *tr->slots);
    if (tr->slots == NULL) {
        tr->slots = old;
        return false;
    }
    tr->cap = cap;
    for (int64_t i = 0; i < old_cap; i++) {
        if (old[i].tensor != NULL)
            *table_slot(tr, old[i].tensor) = old[i];
    }
    free(old);
    return true;
}

/* Maps t to v (replacing an earlier value), retaining t when it is new. */
static yg_status table_set(tracer *tr, const yg_tensor *t, yg_ir_value *v) {
    if ((tr->len + 1) * 2 > tr->cap && !table_grow(tr))
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "trace: out of memory");
    trace_entry *e = table_slot(tr, t);
    if (e->tensor == NULL) {
        e->tensor = yg_retain((yg_tensor *)t);
        tr->len++;
    }
    e->value = v;
    return YG_OK;
}

static void table_free(tracer *tr) {
    for (int64_t i = 0; i < tr->cap; i++)
        yg_release(tr->slots[i].tensor);
    free(tr->slots);
    tr->slots = NULL;
    tr->cap = tr->len = 0;
}

/* ---- values ---- */

static yg_ir_type type_of(const yg_tensor *t) {
    yg_ir_type ty = yg_ir_type_tensor();
    ty.dtype = (int32_t)t->dtype;
    ty.device = (int32_t)t->storage->device;
    ty.ndim = t->ndim;
    for (int32_t i = 0; i < t->ndim; i++)
        ty.sizes[i] = t->sizes[i];
    ty.requires_grad = yg_tensor_requires_grad(t) ? 1 : 0;
    return ty;
}

/* A graph input for a tensor that existed before the trace began. */
static yg_status add_param(tracer *tr, const yg_tensor *t, yg_ir_value **out) {
    yg_ir_type ty = type_of(t);
    if (tr->n_params == tr->cap_params) {
        int64_t cap = tr->cap_params == 0 ? 8 : tr->cap_params * 2;
        yg_tensor **params = realloc(tr->params, (size_t)cap * sizeof *params);
        if (params == NULL)
            return yg__fail(YG_ERR_OUT_OF_MEMORY, "trace: out of memory");
        tr->params = params;
        tr->cap_params = cap;
    }
    YG_RETURN_IF_ERROR(yg_graph_add_input(tr->graph, &ty, NULL, out));
    (*out)->is_param = true;
    tr->params[tr->n_params++] = yg_retain((yg_tensor *)t);
    return YG_OK;
}

/* The value t stands for, making a parameter input or a constant for a
 * tensor met for the first time (see the comment at the top). */
static yg_status value_of(tracer *tr, const yg_tensor *t, yg_ir_value **out) {
    yg_ir_value *v = table_find(tr, t);
    yg_status st;
    if (v != NULL) {
        *out = v;
        return YG_OK;
    }
    if (t->serial < tr->start_serial)
        st = add_param(tr, t, &v);
    else
        st = yg_graph_add_constant(tr->graph, t, &v);
    if (st == YG_OK)
        st = table_set(tr, t, v);
    if (st != YG_OK)
        return yg__fail_prefix(st, "trace");
    *out = v;
    return YG_OK;
}

/* ---- recording state ---- */

static void fail_trace(tracer *tr, yg_status st) {
    if (tr->failure != YG_OK)
        return;
    tr->failure = st;
    snprintf(tr->failure_msg, sizeof tr->failure_msg, "%s", yg_last_error());
}

static void pending_clear(pending_node *p) {
    for (int32_t i = 0; i < p->n_attrs; i++)
        yg__ir_attr_clear(&p->attrs[i]);
    p->kind = NULL;
    p->st = YG_OK;
    p->n_inputs = p->n_attrs = p->n_outputs = 0;
    p->list = NULL;
    p->list_len = NULL;
}

static void pending_free(pending_node *p) {
    pending_clear(p);
    free(p->inputs);
    free(p->attrs);
    free(p->outputs);
    memset(p, 0, sizeof *p);
}

/* Grows one of the pending node's arrays to hold one more item. */
static bool reserve(void **items, int32_t n, int32_t *cap, size_t size) {
    if (n < *cap)
        return true;
    int32_t c = *cap == 0 ? 8 : *cap * 2;
    void *p = realloc(*items, (size_t)c * size);
    if (p == NULL)
        return false;
    *items = p;
    *cap = c;
    return true;
}

/* The pending node, or NULL when it already failed (or nothing is being
 * recorded, which the generated helpers never do). */
static pending_node *pending(tracer *tr) {
    if ( tr->node.kind == NULL || tr->node.st != YG_OK)
        return NULL;
    return &tr->node;
}

static void pending_fail(pending_node *p, yg_status st) {
    p->st = st;
}

static void obs_begin_node(void *ctx, const char *kind) {
    tracer *tr = ctx;
    pending_clear(&tr->node);
    tr->node.kind = kind;
}

static void obs_input(void *ctx, const yg_tensor *t) {
    tracer *tr = ctx;
    pending_node *p = pending(tr);
    yg_ir_value *v = NULL;
    yg_status st;
    if (p == NULL)
        return;
    if (!reserve((void **)&p->inputs, p->n_inputs, &p->cap_inputs, sizeof *p->inputs)) {
        pending_fail(p, yg__fail(YG_ERR_OUT_OF_MEMORY, "trace: %s: out of memory", p->kind));
        return;
    }
    if (t == NULL) {
        yg_ir_node *none = NULL;
        st = yg_graph_add_node(tr->graph, "prim::None", NULL, 0, 1, &none);
        if (st == YG_OK)
            v = none->outputs[0];
    } else {
        st = value_of(tr, t, &v);
    }
    if (st != YG_OK) {
        pending_fail(p, yg__fail_prefix(st, "trace"));
        return;
    }
    p->inputs[p->n_inputs++] = v;
}

/* Appends attribute name with its kind; the caller fills the payload.
 * NULL when the node failed or memory ran out. */
static yg_ir_attr *add_attr(tracer *tr, const char *name, yg_ir_attr_kind kind) {
    pending_node *p = pending(tr);
    if (p == NULL)
        return NULL;
    if (!reserve((void **)&p->attrs, p->n_attrs, &p->cap_attrs, sizeof *p->attrs))
        goto oom;
    yg_ir_attr *a = &p->attrs[p->n_attrs];
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->name = malloc(strlen(name) + 1);
    if (a->name == NULL)
        goto oom;
    strcpy(a->name, name);
    p->n_attrs++;
    return a;
oom:
    pending_fail(p, yg__fail(YG_ERR_OUT_OF_MEMORY, "trace: %s: out of memory", p->kind));
    return NULL;
}

/* Drops the attribute add_attr just appended (its payload failed). */
static void drop_last_attr(tracer *tr) {
    pending_node *p = &tr->node;
    yg__ir_attr_clear(&p->attrs[--p->n_attrs]);
    pending_fail(p, yg__fail(YG_ERR_OUT_OF_MEMORY, "trace: %s: out of memory", p->kind));
}

static void obs_attr_int(void *ctx, const char *name, int64_t v) {
    yg_ir_attr *a = add_attr(ctx, name, YG_IR_ATTR_INT);
    if (a != NULL)
        a->u.i = v;
}

static void obs_attr_float(void *ctx, const char *name, double v) {
    yg_ir_attr *a = add_attr(ctx, name, YG_IR_ATTR_FLOAT);
    if (a != NULL)
        a->u.f = v;
}

static void obs_attr_ints(void *ctx, const char *name, const int64_t *v, int64_t len) {
    yg_ir_attr *a = add_attr(ctx, name, YG_IR_ATTR_INTS);
    if (a == NULL)
        return;
    a->u.ints.items = malloc((size_t)(len > 0 ? len : 1) * sizeof *v);
    if (a->u.ints.items == NULL) {
        drop_last_attr(ctx);
        return;
    }
    if (len > 0)
        memcpy(a->u.ints.items, v, (size_t)len * sizeof *v);
    a->u.ints.len = len;
}

static void obs_attr_bools(void *ctx, const char *name, const bool *v, int64_t len) {
    yg_ir_attr *a = add_attr(ctx, name, YG_IR_ATTR_INTS);
    if (a == NULL)
        return;
    a->u.ints.items = malloc((size_t)(len > 0 ? len : 1) * sizeof *a->u.ints.items);
    if (a->u.ints.items == NULL) {
        drop_last_attr(ctx);
        return;
    }
    for (int64_t i = 0; i < len; i++)
        a->u.ints.items[i] = v[i] ? 1 : 0;
    a->u.ints.len = len;
}

static void obs_attr_str(void *ctx, const char *name, const char *v) {
    if (v == NULL)
        return; /* absent, as an optional scalar that is NULL */
    yg_ir_attr *a = add_attr(ctx, name, YG_IR_ATTR_STR);
    if (a == NULL)
        return;
    a->u.s = malloc(strlen(v) + 1);
    if (a->u.s == NULL) {
        drop_last_attr(ctx);
        return;
    }
    strcpy(a->u.s, v);
}

static void obs_output(void *ctx, yg_tensor **slot, const yg_tensor *writes) {
    tracer *tr = ctx;
    pending_node *p = tr->node.kind != NULL ? &tr->node : NULL;
    /* Kept even after a failure: end_node releases every result. */
    if (p == NULL)
        return;
    if (!reserve((void **)&p->outputs, p->n_outputs, &p->cap_outputs, sizeof *p->outputs)) {
        if (p->st == YG_OK)
            pending_fail(p, yg__fail(YG_ERR_OUT_OF_MEMORY, "trace: %s: out of memory", p->kind));
        yg_release(*slot);
        *slot = NULL;
        return;
    }
    p->outputs[p->n_outputs++] = (pending_output){slot, writes};
}

static void obs_output_list(void *ctx, yg_tensor ***items, int64_t *len) {
    tracer *tr = ctx;
    if (tr->node.kind == NULL)
        return;
    tr->node.list = items;
    tr->node.list_len = len;
    for (int64_t i = 0; i < *len; i++)
        obs_output(ctx, &(*items)[i], NULL);
}

static void obs_generator(void *ctx, const char *name, const yg_generator *generator) {
    pending_node *p = pending(ctx);
    if (p == NULL || generator == NULL)
        return;
    pending_fail(p,
                 yg__fail(YG_ERR_NOT_IMPLEMENTED,
                          "trace: %s: argument '%s' of type Generator? cannot be recorded (only "
                          "NULL, the default generator, can)",
                          p->kind,
                          name));
}

/* Builds the pending node at the end of the graph and maps its results.
 * On failure the node is destroyed (constants and parameters its inputs
 * created stay: they are valid, merely unused). */
static yg_status link_pending(tracer *tr) {
    pending_node *p = &tr->node;
    const yg_op_info *op = NULL;
    const char *kind = yg__ir_kind_lookup(p->kind, strlen(p->kind), &op);
    yg_ir_node *n = NULL;
    yg_status st;
    char msg[256];
    if (kind == NULL)
        return yg__fail(YG_ERR_INTERNAL, "trace: %s is not a kind of the IR", p->kind);
    YG_RETURN_IF_ERROR(yg__ir_node_create(tr->graph, kind, op, p->n_outputs, true, &n));
    for (int32_t i = 0; i < p->n_inputs; i++) {
        st = yg__ir_node_add_input(n, p->inputs[i]);
        if (st != YG_OK)
            goto out;
    }
    for (int32_t i = 0; i < p->n_attrs; i++) {
        /* put_attr takes the payload, even when it fails. */
        st = yg__ir_node_put_attr(n, &p->attrs[i]);
        memset(&p->attrs[i], 0, sizeof p->attrs[i]);
        if (st != YG_OK)
            goto out;
    }
    for (int32_t i = 0; i < p->n_outputs; i++) {
        if (*p->outputs[i].slot != NULL)
            n->outputs[i]->type = type_of(*p->outputs[i].slot);
    }
    if (!yg__ir_check_node(n, true, msg, sizeof msg)) {
        st = yg__fail(YG_ERR_INTERNAL, "trace: %s", msg);
        goto out;
    }
    for (int32_t i = 0; i < p->n_outputs; i++) {
        if (*p->outputs[i].slot != NULL) {
            st = table_set(tr, *p->outputs[i].slot, n->outputs[i]);
            if (st != YG_OK)
                goto out;
        }
        if (p->outputs[i].writes != NULL) {
            st = table_set(tr, p->outputs[i].writes, n->outputs[i]);
            if (st != YG_OK)
                goto out;
        }
    }
    return YG_OK;
out:
    /* Results mapped before the failure would point at a destroyed node;
     * the trace fails anyway, so drop the whole table's view of them. */
    for (int32_t i = 0; i < p->n_outputs; i++) {
        for (int32_t k = 0; k < 2; k++) {
            const yg_tensor *t = k == 0 ? *p->outputs[i].slot : p->outputs[i].writes;
            if (t != NULL && tr->cap > 0 && table_slot(tr, t)->value == n->outputs[i])
                table_slot(tr, t)->value = NULL;
        }
    }
    yg__ir_node_destroy(n); /* nothing reads a node just built */
    return st;
}

static yg_status obs_end_node(void *ctx) {
    tracer *tr = ctx;
    yg_status st;
    if (tr->node.kind == NULL)
        return yg__fail(YG_ERR_INTERNAL, "trace: end_node without begin_node");
    st = tr->node.st;
    if (st == YG_OK)
        st = link_pending(tr);
    if (st != YG_OK) {
        fail_trace(tr, st);
        for (int32_t i = 0; i < tr->node.n_outputs; i++) {
            yg_release(*tr->node.outputs[i].slot);
            *tr->node.outputs[i].slot = NULL;
        }
        if (tr->node.list != NULL) {
            yg_release_list(*tr->node.list, *tr->node.list_len);
            *tr->node.list = NULL;
            *tr->node.list_len = 0;
        }
    }
    pending_clear(&tr->node);
    return st;
}

static void obs_alias(void *ctx, const yg_tensor *alias, const yg_tensor *of) {
    yg_ir_value *v = NULL;
    yg_status st = value_of(ctx, of, &v);
    if (st == YG_OK)
        st = table_set(ctx, alias, v);
    if (st != YG_OK)
        fail_trace(ctx, st);
}

static void obs_fail(void *ctx, yg_status st) {
    fail_trace(ctx, st);
}

static const yg_op_observer tracer_observer = {
    .begin_node = obs_begin_node,
    .input = obs_input,
    .attr_int = obs_attr_int,
    .attr_ints = obs_attr_ints,
    .attr_bools = obs_attr_bools,
    .attr_float = obs_attr_float,
    .attr_str = obs_attr_str,
    .output = obs_output,
    .output_list = obs_output_list,
    .generator = obs_generator,
    .end_node = obs_end_node,
    .alias = obs_alias,
    .fail = obs_fail,
};

/* ---- yg_trace ---- */

static yg_status check_args(yg_trace_fn fn,
                            yg_tensor *const *inputs,
                            int64_t n_inputs,
                            int64_t n_outputs,
                            yg_trace_result **out) {
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "trace: out is NULL");
    *out = NULL;
    if (fn == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "trace: fn is NULL");
    if (n_inputs < 0 || n_inputs > INT32_MAX || (n_inputs > 0 && inputs == NULL))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "trace: invalid input list (%lld entries)",
                        (long long)n_inputs);
    if (n_outputs < 0 || n_outputs > INT32_MAX)
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "trace: invalid output count %lld", (long long)n_outputs);
    for (int64_t i = 0; i < n_inputs; i++) {
        if (inputs[i] == NULL)
            return yg__fail(YG_ERR_INVALID_ARGUMENT, "trace: input %lld is NULL", (long long)i);
    }
    return YG_OK;
}

/* Graph inputs for the example inputs. */
static yg_status add_inputs(tracer *tr, yg_tensor *const *inputs, int64_t n_inputs) {
    for (int64_t i = 0; i < n_inputs; i++) {
        yg_ir_type ty = type_of(inputs[i]);
        yg_ir_value *v = NULL;
        YG_RETURN_IF_ERROR(yg_graph_add_input(tr->graph, &ty, NULL, &v));
        if (table_find(tr, inputs[i]) == NULL)
            YG_RETURN_IF_ERROR(table_set(tr, inputs[i], v));
    }
    return YG_OK;
}

/* Runs fn with this thread's tracer set, and clears it whatever happens. */
static yg_status run_traced(tracer *tr,
                            yg_trace_fn fn,
                            void *ctx,
                            yg_tensor *const *inputs,
                            int64_t n_inputs,
                            yg_tensor **outputs,
                            int64_t n_outputs) {
    yg_status st;
    YG_RETURN_IF_ERROR(yg__obs_install("trace", &tracer_observer, tr, tr->through_composites));
    st = fn(ctx, inputs, n_inputs, outputs, n_outputs);
    yg__obs_uninstall();
    if (tr->failure != YG_OK) {
        /* The root cause, even when fn ignored it or failed later. */
        return yg__fail(tr->failure, "%s", tr->failure_msg);
    }
    if (st != YG_OK)
        return yg__fail_prefix(st, "trace");
    for (int64_t i = 0; i < n_outputs; i++) {
        if (outputs[i] == NULL)
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "trace: fn returned YG_OK but left output %lld NULL",
                            (long long)i);
    }
    return YG_OK;
}

static yg_status set_outputs(tracer *tr, yg_tensor *const *outputs, int64_t n_outputs) {
    yg_ir_value **values = calloc((size_t)(n_outputs > 0 ? n_outputs : 1), sizeof *values);
    yg_status st = YG_OK;
    if (values == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "trace: out of memory");
    for (int64_t i = 0; i < n_outputs && st == YG_OK; i++)
        st = value_of(tr, outputs[i], &values[i]);
    if (st == YG_OK)
        st = yg_graph_set_outputs(tr->graph, values, n_outputs);
    free(values);
    return st;
}

yg_status yg_trace(yg_trace_fn fn,
                   void *ctx,
                   yg_tensor *const *inputs,
                   int64_t n_inputs,
                   int64_t n_outputs,
                   const yg_trace_options *options,
                   yg_trace_result **out) {
    tracer tr;
    yg_trace_result *r = NULL;
    yg_tensor **outputs = NULL;
    yg_status st;
    YG_RETURN_IF_ERROR(check_args(fn, inputs, n_inputs, n_outputs, out));
    memset(&tr, 0, sizeof tr);
    tr.through_composites = options != NULL && options->trace_through_composites;
    tr.start_serial = yg__tensor_next_serial();
    outputs = calloc((size_t)(n_outputs > 0 ? n_outputs : 1), sizeof *outputs);
    r = calloc(1, sizeof *r);
    if (outputs == NULL || r == NULL) {
        st = yg__fail(YG_ERR_OUT_OF_MEMORY, "trace: out of memory");
        goto out;
    }
    st = yg_graph_create(&tr.graph);
    if (st == YG_OK)
        st = add_inputs(&tr, inputs, n_inputs);
    if (st == YG_OK)
        st = run_traced(&tr, fn, ctx, inputs, n_inputs, outputs, n_outputs);
    if (st == YG_OK)
        st = set_outputs(&tr, outputs, n_outputs);
    if (st == YG_OK) {
        st = yg_graph_lint(tr.graph);
        if (st != YG_OK)
            st = yg__fail_prefix(YG_ERR_INTERNAL, "trace");
    }
    if (st != YG_OK)
        goto out;
    r->graph = tr.graph;
    r->outputs = outputs;
    r->n_outputs = n_outputs;
    r->params = tr.params;
    r->n_params = tr.n_params;
    tr.graph = NULL;
    tr.params = NULL;
    tr.n_params = 0;
    outputs = NULL;
    *out = r;
    r = NULL;
out:
    for (int64_t i = 0; outputs != NULL && i < n_outputs; i++)
        yg_release(outputs[i]);
    free(outputs);
    for (int64_t i = 0; i < tr.n_params; i++)
        yg_release(tr.params[i]);
    free(tr.params);
    pending_free(&tr.node);
    table_free(&tr);
    yg_graph_release(tr.graph);
    free(r);
    return st;
}

void yg_trace_result_release(yg_trace_result *r) {
    if (r == NULL)
        return;
    yg_graph_release(r->graph);
    for (int64_t i = 0; r->outputs != NULL && i < r->n_outputs; i++)
        yg_release(r->outputs[i]);
    free(r->outputs);
    for (int64_t i = 0; r->params != NULL && i < r->n_params; i++)
        yg_release(r->params[i]);
    free(r->params);
    free(r);
}
