/*
 * executor.c - yg_executor: runs a graph through plans cached per argument
 * spec.
 *
 * A spec is what a plan may depend on: grad mode and, per input, whether
 * it is defined, requires grad, its dtype, device, rank, contiguity and,
 * when a gradient is needed (or the options ask), its sizes.  It is built
 * on the stack, hashed (a multiply-xor over its fields) and looked up in a small
 * list under a mutex; a miss builds the plan outside the lock (two
 * threads may build the same plan: the second one is dropped).  A plan is
 * a copy of the graph with the spec's input types, intermediate types
 * cleared (a traced graph's sizes belong to its example), optimised, and
 * for a gradient spec: composites on gradient paths split into their
 * parts and differentiable runs made prim::DifferentiableGraph nodes;
 * then pointwise runs fused (yg_graph_fuse), in the graph and in each
 * region's f and df; then every graph frozen.
 * Plans are immutable once published, so runs share them without locks.
 */
#include "core/observer.h"
#include "jit/autodiff/autodiff.h"
#include "jit/exec/interpreter.h"
#include "yagrad/autograd.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct spec_input {
    int8_t defined, requires_grad, contiguous, dtype, device, ndim;
    int64_t sizes[YG_MAX_DIMS]; /* zeros unless the spec has sizes */
} spec_input;

typedef struct spec {
    uint64_t hash;
    int32_t n;
    bool grad;  /* grad mode on and an input requires grad */
    bool sizes; /* sizes are part of the spec */
    spec_input *in;
} spec;

/* Plans the cache keeps when the options do not say (max_plans 0). */
#define DEFAULT_MAX_PLANS 64

typedef struct plan {
    spec key;
    yg_graph *g;
    atomic_long refs;  /* the cache's, `last`'s, and each run's */
    uint64_t used;     /* tick of the last lookup, for eviction (under lock) */
} plan;

struct yg_executor {
    yg_graph *graph;
    yg_executor_options opt;
    pthread_mutex_t lock;
    plan **plans; /* under lock */
    int64_t n_plans, cap_plans, max_plans;
    plan *last;    /* the last run's plan, under lock (a reference) */
    uint64_t tick; /* under lock */
    atomic_llong runs, hits, misses, inlined, evictions;
};

static yg_status oom(void) {
    return yg__fail(YG_ERR_OUT_OF_MEMORY, "executor: out of memory");
}

/* ---- specs ---- */

static uint64_t mix(uint64_t h, uint64_t w) {
    h ^= w;
    h *= 0x100000001b3ULL;
    return h ^ (h >> 29);
}

static void spec_compute(const yg_executor *e, yg_tensor *const *inputs, spec *s) {
    bool any_rg = false;
    bool grad_mode = yg_is_grad_enabled();
    for (int32_t i = 0; i < s->n; i++)
        any_rg |= inputs[i] != NULL && yg_tensor_requires_grad(inputs[i]);
    s->grad = grad_mode && any_rg;
    s->sizes = s->grad || e->opt.specialize_sizes;
    uint64_t h = mix(0xcbf29ce484222325ULL, s->grad);
    for (int32_t i = 0; i < s->n; i++) {
        const yg_tensor *t = inputs[i];
        spec_input *x = &s->in[i];
        memset(x, 0, sizeof *x);
        if (t != NULL) {
            x->defined = 1;
            x->requires_grad = grad_mode && yg_tensor_requires_grad(t);
            x->contiguous = yg_tensor_is_contiguous(t);
            x->dtype = (int8_t)yg_tensor_dtype(t);
            x->device = (int8_t)yg_tensor_device(t);
            x->ndim = (int8_t)t->ndim;
            if (s->sizes)
                for (int32_t d = 0; d < t->ndim; d++)
                    x->sizes[d] = t->sizes[d];
        }
        h = mix(h,
                (uint64_t)x->defined | (uint64_t)x->requires_grad << 8 |
                    (uint64_t)x->contiguous << 16 | (uint64_t)(uint8_t)x->dtype << 24 |
                    (uint64_t)(uint8_t)x->device << 32 | (uint64_t)(uint8_t)x->ndim << 40);
        for (int32_t d = 0; s->sizes && d < x->ndim; d++)
            h = mix(h, (uint64_t)x->sizes[d]);
    }
    s->hash = h;
}

static bool spec_equal(const spec *a, const spec *b) {
    return a->hash == b->hash && a->grad == b->grad && a->n == b->n &&
           memcmp(a->in, b->in, (size_t)a->n * sizeof *a->in) == 0;
}

/* "grad=1 inputs=[float32 cpu [2, 3] requires_grad contiguous, ...]" */
static void spec_describe(const spec *s, char *buf, size_t len) {
    size_t pos = (size_t)snprintf(buf, len, "grad=%d inputs=[", s->grad);
    for (int32_t i = 0; i < s->n && pos < len; i++) {
        const spec_input *x = &s->in[i];
        if (!x->defined) {
            pos += (size_t)snprintf(buf + pos, len - pos, "%sNone", i ? ", " : "");
            continue;
        }
        pos += (size_t)snprintf(buf + pos,
                                len - pos,
                                "%s%s %s ",
                                i ? ", " : "",
                                yg_dtype_name((yg_dtype)x->dtype),
                                yg__device_name((yg_device)x->device));
        if (s->sizes) {
            char sz[128];
            pos += (size_t)snprintf(
                buf + pos, len - pos, "%s", yg__format_sizes(x->sizes, x->ndim, sz, sizeof sz));
        } else {
            pos += (size_t)snprintf(buf + pos, len - pos, "rank %d", x->ndim);
        }
        if (pos < len && x->requires_grad)
            pos += (size_t)snprintf(buf + pos, len - pos, " requires_grad");
        if (pos < len && x->contiguous)
            pos += (size_t)snprintf(buf + pos, len - pos, " contiguous");
    }
    if (pos < len)
        snprintf(buf + pos, len - pos, "]");
}

/* ---- plans ---- */

static void plan_free(plan *p) {
    if (p == NULL)
        return;
    yg_graph_release(p->g);
    free(p->key.in);
    free(p);
}

/* Drops one reference to p, freeing it with the last.  NULL-safe. */
static void plan_unref(plan *p) {
    if (p != NULL && atomic_fetch_sub(&p->refs, 1) == 1)
        plan_free(p);
}

/* Sets g's input types to the spec's and clears every other type but
 * None, so the passes see only what the spec promises. */
static yg_status specialise(yg_graph *g, const spec *s) {
    for (int32_t i = 0; i < s->n; i++) {
        const spec_input *x = &s->in[i];
        yg_ir_type t = yg_ir_type_tensor();
        if (!x->defined) {
            t = yg_ir_type_none();
        } else {
            t.dtype = x->dtype;
            t.device = x->device;
            t.ndim = x->ndim;
            for (int32_t d = 0; d < x->ndim; d++)
                t.sizes[d] = s->sizes ? x->sizes[d] : YG_IR_UNKNOWN;
            t.requires_grad = x->requires_grad;
        }
        YG_RETURN_IF_ERROR(yg_ir_value_set_type(g->param->outputs[i], &t));
    }
    yg_ir_type unknown = yg_ir_type_tensor();
    for (yg_ir_node *n = g->first; n != NULL; n = n->next)
        for (int32_t i = 0; i < n->n_outputs; i++)
            if (n->outputs[i]->type.kind == YG_IR_TYPE_TENSOR)
                n->outputs[i]->type = unknown;
    return YG_OK;
}

/* Fuses the plan's pointwise runs: in the graph, and in the forward and
 * backward graph of each autodiff region. */
static yg_status fuse_plan(yg_graph *g) {
    YG_RETURN_IF_ERROR(yg_graph_fuse(g));
    for (yg_ir_node *n = g->first; n != NULL; n = n->next) {
        if (n->kind != yg__prim_diff_graph)
            continue;
        for (int32_t k = 0; k < n->n_attrs; k++)
            if (n->attrs[k].kind == YG_IR_ATTR_GRAPH)
                YG_RETURN_IF_ERROR(yg_graph_fuse(n->attrs[k].u.g));
    }
    return YG_OK;
}

/* Marks g and every graph nested in it as never changing again, so each
 * keeps its compiled interpreter plan. */
static void freeze_all(yg_graph *g) {
    yg__graph_freeze(g);
    for (yg_ir_node *n = g->first; n != NULL; n = n->next)
        for (int32_t k = 0; k < n->n_attrs; k++)
            if (n->attrs[k].kind == YG_IR_ATTR_GRAPH)
                freeze_all(n->attrs[k].u.g);
}

static yg_status plan_build(const yg_executor *e, const spec *s, plan **out) {
    plan *p = calloc(1, sizeof *p);
    *out = NULL;
    if (p == NULL)
        return oom();
    p->key = *s;
    p->key.in = malloc((size_t)(s->n > 0 ? s->n : 1) * sizeof *s->in);
    if (p->key.in == NULL) {
        free(p);
        return oom();
    }
    memcpy(p->key.in, s->in, (size_t)s->n * sizeof *s->in);
    yg_status st = yg_graph_clone(e->graph, &p->g);
    if (st == YG_OK)
        st = specialise(p->g, s);
    if (st == YG_OK && !e->opt.no_optimize)
        st = yg_graph_optimize(p->g);
    else if (st == YG_OK && s->grad)
        st = yg_graph_run_passes(p->g, "shape_propagation,requires_grad_propagation");
    if (st == YG_OK && s->grad) {
        st = yg__decompose_composites(p->g, true);
        if (st == YG_OK && !e->opt.no_optimize)
            st = yg_graph_optimize(p->g);
        if (st == YG_OK)
            st = yg_graph_create_autodiff_subgraphs(
                p->g, NULL, e->opt.autodiff_min_size > 0 ? e->opt.autodiff_min_size : 2);
    }
    if (st == YG_OK && !e->opt.no_fuse)
        st = fuse_plan(p->g);
    if (st != YG_OK) {
        plan_free(p);
        return yg__fail_prefix(st, "executor: building a plan");
    }
    freeze_all(p->g);
    *out = p;
    return YG_OK;
}

/* Makes p the last run's plan (a reference each).  Caller holds lock. */
static void set_last(yg_executor *e, plan *p) {
    atomic_fetch_add(&p->refs, 1);
    plan_unref(e->last);
    e->last = p;
}

/* The cached plan for s (a reference the caller drops with plan_unref),
 * built and cached on a miss.  The cache keeps max_plans: a new plan
 * evicts the least recently used one, which runs still holding it finish
 * with (each run holds a reference). */
static yg_status plan_get(yg_executor *e, const spec *s, plan **out) {
    pthread_mutex_lock(&e->lock);
    for (int64_t i = 0; i < e->n_plans; i++) {
        plan *p = e->plans[i];
        if (spec_equal(&p->key, s)) {
            atomic_fetch_add(&p->refs, 1);
            p->used = ++e->tick;
            set_last(e, p);
            pthread_mutex_unlock(&e->lock);
            atomic_fetch_add(&e->hits, 1);
            *out = p;
            return YG_OK;
        }
    }
    pthread_mutex_unlock(&e->lock);
    plan *p = NULL;
    YG_RETURN_IF_ERROR(plan_build(e, s, &p));
    atomic_fetch_add(&e->misses, 1);
    atomic_store(&p->refs, 2); /* the cache's and the caller's */
    pthread_mutex_lock(&e->lock);
    for (int64_t i = 0; i < e->n_plans; i++) {
        plan *q = e->plans[i];
        if (spec_equal(&q->key, s)) { /* another thread was first */
            atomic_fetch_add(&q->refs, 1);
            q->used = ++e->tick;
            set_last(e, q);
            pthread_mutex_unlock(&e->lock);
            plan_free(p);
            *out = q;
            return YG_OK;
        }
    }
    if (e->n_plans == e->max_plans) { /* evict the least recently used */
        int64_t victim = 0;
        for (int64_t i = 1; i < e->n_plans; i++)
            if (e->plans[i]->used < e->plans[victim]->used)
                victim = i;
        plan_unref(e->plans[victim]);
        e->plans[victim] = e->plans[--e->n_plans];
        atomic_fetch_add(&e->evictions, 1);
    }
    if (e->n_plans == e->cap_plans) {
        int64_t cap = e->cap_plans ? e->cap_plans * 2 : 4;
        plan **np = realloc(e->plans, (size_t)cap * sizeof *np);
        if (np == NULL) {
            pthread_mutex_unlock(&e->lock);
            plan_free(p);
            return oom();
        }
        e->plans = np;
        e->cap_plans = cap;
    }
    p->used = ++e->tick;
    e->plans[e->n_plans++] = p;
    set_last(e, p);
    pthread_mutex_unlock(&e->lock);
    *out = p;
    return YG_OK;
}

/* ---- API ---- */

yg_status
yg_executor_create(const yg_graph *g, const yg_executor_options *options, yg_executor **out) {
    if (out != NULL)
        *out = NULL;
    if (g == NULL || out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "executor: graph or out is NULL");
    if (options != NULL && options->max_plans < 0)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "executor: max_plans %" PRId64 " is negative",
                        options->max_plans);
    YG_RETURN_IF_ERROR(yg_graph_lint(g));
    yg_executor *e = calloc(1, sizeof *e);
    if (e == NULL)
        return oom();
    if (options != NULL)
        e->opt = *options;
    e->max_plans = e->opt.max_plans > 0 ? e->opt.max_plans : DEFAULT_MAX_PLANS;
    yg_status st = yg_graph_clone(g, &e->graph);
    if (st != YG_OK) {
        free(e);
        return st;
    }
    pthread_mutex_init(&e->lock, NULL);
    *out = e;
    return YG_OK;
}

void yg_executor_release(yg_executor *e) {
    if (e == NULL)
        return;
    for (int64_t i = 0; i < e->n_plans; i++)
        plan_unref(e->plans[i]);
    plan_unref(e->last);
    free(e->plans);
    yg_graph_release(e->graph);
    pthread_mutex_destroy(&e->lock);
    free(e);
}

yg_status yg_executor_run(yg_executor *e,
                          yg_tensor *const *inputs,
                          int64_t n_inputs,
                          yg_tensor **outputs,
                          int64_t n_outputs) {
    spec_input stack_in[16];
    spec s = {0};
    yg_status st;

    for (int64_t i = 0; outputs != NULL && i < n_outputs; i++)
        outputs[i] = NULL;
    if (e == NULL || (inputs == NULL && n_inputs > 0) || (outputs == NULL && n_outputs > 0))
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "executor: executor, inputs or outputs is NULL");
    const yg_graph *g = e->graph;
    if (n_inputs != g->param->n_outputs)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "executor: graph has %d inputs, got %" PRId64,
                        g->param->n_outputs,
                        n_inputs);
    if (n_outputs != g->ret->n_inputs)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "executor: graph has %d outputs, got room for %" PRId64,
                        g->ret->n_inputs,
                        n_outputs);
    for (int64_t i = 0; i < n_inputs; i++)
        /* Sizes may differ from a traced example's. */
        YG_RETURN_IF_ERROR(
            yg__graph_check_input("executor", g->param->outputs[i], i, inputs[i], false));
    /* Inside a trace: the graph's ops run one by one and are recorded. */
    if (yg__obs_recording(false)) {
        atomic_fetch_add(&e->inlined, 1);
        return yg_graph_run(g, inputs, n_inputs, outputs, n_outputs);
    }
    s.n = (int32_t)n_inputs;
    s.in = n_inputs <= 16 ? stack_in : malloc((size_t)n_inputs * sizeof *s.in);
    if (s.in == NULL)
        return oom();
    spec_compute(e, inputs, &s);
    plan *p = NULL;
    st = plan_get(e, &s, &p);
    if (s.in != stack_in)
        free(s.in);
    if (st != YG_OK)
        return st;
    atomic_fetch_add(&e->runs, 1);
    st = yg_graph_run(p->g, inputs, n_inputs, outputs, n_outputs);
    plan_unref(p);
    return st;
}

yg_executor_stats yg_executor_get_stats(const yg_executor *e) {
    yg_executor_stats s = {0};
    if (e == NULL)
        return s;
    s.runs = atomic_load(&((yg_executor *)e)->runs);
    s.hits = atomic_load(&((yg_executor *)e)->hits);
    s.misses = atomic_load(&((yg_executor *)e)->misses);
    s.inlined = atomic_load(&((yg_executor *)e)->inlined);
    s.evictions = atomic_load(&((yg_executor *)e)->evictions);
    pthread_mutex_lock(&((yg_executor *)e)->lock);
    s.plans = e->n_plans;
    s.max_plans = e->max_plans;
    pthread_mutex_unlock(&((yg_executor *)e)->lock);
    return s;
}

yg_status yg_executor_last_graph(yg_executor *e, char **out) {
    if (out != NULL)
        *out = NULL;
    if (e == NULL || out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "executor: executor or out is NULL");
    pthread_mutex_lock(&e->lock);
    plan *p = e->last;
    if (p != NULL)
        atomic_fetch_add(&p->refs, 1);
    pthread_mutex_unlock(&e->lock);
    if (p == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "executor: no run yet");
    yg_status st = yg_graph_print(p->g, out);
    plan_unref(p);
    return st;
}

yg_status yg_executor_dump_plans(yg_executor *e, char **out) {
    if (out != NULL)
        *out = NULL;
    if (e == NULL || out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "executor: executor or out is NULL");
    size_t len = 1, cap = 4096;
    char *buf = malloc(cap);
    yg_status st = buf != NULL ? YG_OK : oom();
    if (buf != NULL)
        buf[0] = '\0';
    pthread_mutex_lock(&e->lock);
    if (st == YG_OK && e->n_plans == 0)
        st = yg__fail(YG_ERR_INVALID_ARGUMENT, "executor: no run yet");
    for (int64_t i = 0; st == YG_OK && i < e->n_plans; i++) {
        char head[2048], *text = NULL;
        spec_describe(&e->plans[i]->key, head, sizeof head);
        st = yg_graph_print(e->plans[i]->g, &text);
        if (st != YG_OK)
            break;
        size_t need = len + strlen(head) + strlen(text) + 16;
        if (need > cap) {
            char *nb = realloc(buf, need * 2);
            if (nb == NULL) {
                yg_string_release(text);
                st = oom();
                break;
            }
            buf = nb;
            cap = need * 2;
        }
        len += (size_t)sprintf(buf + len - 1, "spec: %s\n%s", head, text);
        yg_string_release(text);
    }
    pthread_mutex_unlock(&e->lock);
    if (st != YG_OK) {
        free(buf);
        return st;
    }
    *out = buf;
    return YG_OK;
}
