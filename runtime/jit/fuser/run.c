/*
 * run.c - running a prim::FusionGroup node: its compiled kernel when the
 * inputs are what the group was made for (its dtype, all on one device,
 * every output of the broadcast shape of all inputs) and no gradient is
 * being recorded, the interpreter over its subgraph otherwise (which also
 * records eager history when grad mode needs it).  Inputs on two devices
 * are refused, as every op refuses them.
 *
 * Per subgraph the fuser keeps, in the graph (a cache of the graph, yg__graph_cache_put), which
 * inputs each output depends on, one CPU kernel per input stride pattern
 * (codegen.c), and one CUDA kernel per device (cuda_run.c: the CUDA source
 * reads every operand through its strides, so one kernel serves every
 * pattern; the group fixes the dtype), each made on first use.  Outputs
 * are new contiguous tensors on the inputs' device.  The geometry handed
 * to a kernel (compressed dims, element strides per operand, outputs
 * first) is the same for both devices.
 */
#include "jit/fuser/fuser.h"
#include "yagrad/autograd.h"
#include "yagrad/jit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct variant {
    char pattern[YG_FUSE_MAX_INPUTS + 1];
    yg_fused_fn fn;
    char reason[512];
    struct variant *next;
} variant;

/* A group's CUDA kernel on one device, or why there is none. */
typedef struct cuda_variant {
    int index;
    const yg_fuser_cuda_kernel *kernel; /* NULL: fall back to the interpreter */
    char reason[512];
    struct cuda_variant *next;
} cuda_variant;

typedef struct fuser_state {
    int32_t n_kout; /* values the kernel writes; -1: too many */
    uint32_t deps[YG_FUSE_MAX_OUTPUTS];
    _Atomic(variant *) variants;
    _Atomic(cuda_variant *) cuda_variants;
} fuser_state;

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;

static void fuser_state_free(void *p) {
    fuser_state *s = p;
    if (s == NULL)
        return;
    variant *v = atomic_load(&s->variants);
    while (v != NULL) {
        variant *next = v->next;
        free(v);
        v = next;
    }
    cuda_variant *c = atomic_load(&s->cuda_variants);
    while (c != NULL) {
        cuda_variant *next = c->next;
        free(c); /* its kernel stays loaded for the process (cuda_run.c) */
        c = next;
    }
    free(s);
}

/* Which inputs each value the kernel writes depends on (bit sets, in the
 * scratch of sub's values while computing). */
static void compute_deps(const yg_graph *sub, fuser_state *s) {
    const yg_ir_value *kout[YG_FUSE_MAX_OUTPUTS];
    int32_t n_in = sub->param->n_outputs;
    for (int32_t i = 0; i < n_in; i++)
        sub->param->outputs[i]->scratch = (int64_t)1 << i;
    for (const yg_ir_node *n = sub->first; n != NULL; n = n->next) {
        int64_t m = 0;
        for (int32_t i = 0; i < n->n_inputs; i++)
            m |= n->inputs[i]->scratch;
        for (int32_t i = 0; i < n->n_outputs; i++)
            n->outputs[i]->scratch = m;
    }
    s->n_kout = yg__fuser_kernel_outputs(sub, kout, YG_FUSE_MAX_OUTPUTS);
    for (int32_t o = 0; o < s->n_kout; o++)
        s->deps[o] = (uint32_t)kout[o]->scratch;
}

static const yg_graph_cache_kind state_cache = {"fuser kernels", fuser_state_free};

static fuser_state *state_of(yg_graph *sub) {
    fuser_state *s = yg__graph_cache_get(sub, &state_cache);
    if (s != NULL)
        return s;
    pthread_mutex_lock(&state_lock);
    s = yg__graph_cache_get(sub, &state_cache);
    if (s == NULL && (s = calloc(1, sizeof *s)) != NULL) {
        compute_deps(sub, s);
        s = yg__graph_cache_put(sub, &state_cache, s);
    }
    pthread_mutex_unlock(&state_lock);
    return s;
}

/* The kernel for pattern, made on first use (NULL with v->reason). */
static const variant *variant_of(yg_graph *sub, fuser_state *s, const char *pattern) {
    for (variant *v = atomic_load_explicit(&s->variants, memory_order_acquire); v != NULL;
         v = v->next)
        if (strcmp(v->pattern, pattern) == 0)
            return v;
    pthread_mutex_lock(&state_lock);
    variant *v = atomic_load(&s->variants);
    while (v != NULL && strcmp(v->pattern, pattern) != 0)
        v = v->next;
    if (v == NULL && (v = calloc(1, sizeof *v)) != NULL) {
        char *source = NULL;
        snprintf(v->pattern, sizeof v->pattern, "%s", pattern);
        yg_status st = yg__fuser_codegen_pattern(sub, pattern, &source);
        if (st != YG_OK)
            snprintf(v->reason, sizeof v->reason, "%s", yg_last_error());
        else
            st = yg__fuser_compile(source, &v->fn, v->reason, sizeof v->reason);
        if (st != YG_OK && v->reason[0] == '\0')
            snprintf(v->reason, sizeof v->reason, "%s", yg_last_error());
        free(source);
        v->next = atomic_load(&s->variants);
        atomic_store_explicit(&s->variants, v, memory_order_release);
    }
    pthread_mutex_unlock(&state_lock);
    return v;
}

/* The CUDA kernel for device index, made on first use (NULL with
 * c->reason).  The source is made per device: codegen writes the scratch
 * of sub's values, so it runs under state_lock, and once per device is
 * rare enough not to keep it. */
static const cuda_variant *cuda_variant_of(yg_graph *sub, fuser_state *s, int index) {
    for (cuda_variant *c = atomic_load_explicit(&s->cuda_variants, memory_order_acquire);
         c != NULL;
         c = c->next)
        if (c->index == index)
            return c;
    pthread_mutex_lock(&state_lock);
    cuda_variant *c = atomic_load(&s->cuda_variants);
    while (c != NULL && c->index != index)
        c = c->next;
    if (c == NULL && (c = calloc(1, sizeof *c)) != NULL) {
        char *source = NULL;
        c->index = index;
        if (yg__fuser_codegen_cuda(sub, &source) != YG_OK)
            snprintf(c->reason, sizeof c->reason, "%s", yg_last_error());
        else
            c->kernel = yg__fuser_cuda_kernel_get(source, index, c->reason, sizeof c->reason);
        free(source);
        c->next = atomic_load(&s->cuda_variants);
        atomic_store_explicit(&s->cuda_variants, c, memory_order_release);
    }
    pthread_mutex_unlock(&state_lock);
    return c;
}

/* Whether the inputs are on one device (*device, *index: it); else
 * YG_ERR_DEVICE naming the first two that differ, by the group node's
 * input names. */
static yg_status
one_device(const yg_ir_node *n, yg_tensor *const *in, yg_device *device, int32_t *index) {
    const char *names[YG_FUSE_MAX_INPUTS];
    int32_t n_in = n->n_inputs, first = 0;
    while (first < n_in && in[first] == NULL)
        first++;
    first = first < n_in ? first : -1;
    *device = first >= 0 ? in[first]->storage->device : YG_CPU;
    *index = first >= 0 ? in[first]->storage->device_index : 0;
    if (n_in < 2 || n_in > YG_FUSE_MAX_INPUTS)
        return YG_OK; /* more inputs than a kernel takes: the interpreter runs it */
    for (int32_t i = 0; i < n_in; i++)
        names[i] = n->inputs[i]->name;
    return yg__check_devices("prim::FusionGroup", n_in, (const yg_tensor *const *)in, names,
                             NULL, 0, NULL);
}

/* Broadcasts the inputs' sizes (NumPy rules); false when they do not go
 * together (the interpreter then reports it). */
static bool
broadcast(yg_tensor *const *in, int32_t n_in, uint32_t mask, int64_t *sizes, int32_t *ndim) {
    int32_t nd = 0;
    for (int32_t i = 0; i < n_in; i++)
        if ((mask >> i) & 1)
            nd = in[i]->ndim > nd ? in[i]->ndim : nd;
    for (int32_t d = 0; d < nd; d++)
        sizes[d] = 1;
    for (int32_t i = 0; i < n_in; i++) {
        if (!((mask >> i) & 1))
            continue;
        const yg_tensor *t = in[i];
        for (int32_t d = 0; d < t->ndim; d++) {
            int64_t s = t->sizes[t->ndim - 1 - d], *o = &sizes[nd - 1 - d];
            if (s == *o || s == 1)
                continue;
            if (*o != 1)
                return false;
            *o = s;
        }
    }
    *ndim = nd;
    return true;
}

static yg_status
interpret(const yg_graph *sub, yg_tensor *const *in, int32_t n_in, yg_tensor **out, int32_t n_out) {
    return yg_graph_run(sub, in, n_in, out, n_out);
}

/* Frees the outputs made so far. */
static void drop(yg_tensor **out, int32_t n) {
    for (int32_t o = 0; o < n; o++) {
        yg_release(out[o]);
        out[o] = NULL;
    }
}

yg_status yg__fusion_group_run(const yg_ir_node *n, yg_tensor *const *in, yg_tensor **out) {
    const yg_graph *csub = NULL;
    YG_RETURN_IF_ERROR(yg_ir_node_get_graph(n, "subgraph", &csub));
    yg_graph *sub = (yg_graph *)csub;
    int32_t n_in = n->n_inputs, n_out = n->n_outputs;
    int32_t dtype = n_in > 0 ? sub->param->outputs[0]->type.dtype : YG_IR_UNKNOWN;
    yg_device device = YG_CPU;
    int32_t index = 0;
    YG_RETURN_IF_ERROR(one_device(n, in, &device, &index));
    bool fused = n_in <= YG_FUSE_MAX_INPUTS && n_in > 0;
    bool grad = yg_is_grad_enabled();
    for (int32_t i = 0; fused && i < n_in; i++)
        fused = in[i] != NULL && (int32_t)in[i]->dtype == dtype &&
                !(grad && yg_tensor_requires_grad(in[i]));
    fuser_state *s = fused ? state_of(sub) : NULL;
    int64_t sizes[YG_MAX_DIMS], osz[YG_MAX_DIMS];
    int32_t nd = 0, ond = 0, n_k = s != NULL ? s->n_kout : -1;
    fused = n_k >= 0 && broadcast(in, n_in, UINT32_MAX >> (32 - n_in), sizes, &nd);
    for (int32_t o = 0; fused && o < n_k; o++) {
        fused = broadcast(in, n_in, s->deps[o], osz, &ond) && ond == nd;
        for (int32_t d = 0; fused && d < nd; d++)
            fused = osz[d] == sizes[d];
    }
    /* A cat exit needs a dim to cat along; an anchor, non-empty rows. */
    for (int32_t o = 0; fused && o < n_out; o++)
        fused = !yg__fuser_is_cat(sub->ret->inputs[o]->node) || nd > 0;
    const yg_ir_node *anchor =
        sub->last != NULL && yg__fuser_anchor(sub->last) != YG_ANCHOR_NONE ? sub->last : NULL;
    /* The broadcast of tensors that exist may still be too large: then
     * the interpreter's ops refuse it with their message. */
    int64_t numel = yg__sizes_product(sizes, nd);
    fused = fused && numel >= 0;
    for (int32_t o = 0; fused && o < n_out; o++) {
        const yg_ir_node *def = sub->ret->inputs[o]->node;
        int64_t whole = 0;
        if (def != sub->param && yg__fuser_is_cat(def))
            fused = yg__mul_ok(numel, def->n_inputs, &whole) && whole <= YG__MAX_NUMEL;
    }
    if (anchor != NULL)
        fused = fused && nd > 0 && numel > 0;
    /* layer_norm: the sizes the graph may not have known.  The rows are
     * normalized_shape long, and weight and bias (inputs of the group, or
     * values of it whose sizes the graph knows) hold one value per column;
     * otherwise the interpreter's layer_norm says what is wrong. */
    if (fused && anchor != NULL && yg__fuser_anchor(anchor) == YG_ANCHOR_LAYER_NORM) {
        int64_t norm = yg__fuser_layer_norm_size(anchor);
        fused = sizes[nd - 1] == norm;
        for (int32_t i = 1; fused && i < 3; i++) {
            const yg_ir_value *v = anchor->inputs[i];
            if (v->node == sub->param)
                fused = in[v->offset]->ndim == 1 && in[v->offset]->sizes[0] == norm;
            else
                fused = v->type.ndim == 1 && v->type.sizes[0] == norm;
        }
    }
    if (!fused)
        return interpret(sub, in, n_in, out, n_out);
    /* On a GPU: its kernel before any output is allocated (no driver, no
     * NVRTC: the interpreter runs the eager CUDA ops, and says why). */
    const cuda_variant *cv = NULL;
    if (device == YG_CUDA) {
        cv = cuda_variant_of(sub, s, index);
        if (cv == NULL || cv->kernel == NULL) {
            yg__fuser_count_fallback(cv != NULL ? cv->reason : "out of memory");
            return interpret(sub, in, n_in, out, n_out);
        }
    }
    /* The outputs, and where each value the kernel writes goes: a base
     * pointer and strides over the iteration shape (a cat's pieces are
     * slices of its result). */
    int32_t nops = n_k + n_in;
    char *base[YG_FUSE_MAX_INPUTS + YG_FUSE_MAX_OUTPUTS];
    int64_t st[YG_FUSE_MAX_INPUTS + YG_FUSE_MAX_OUTPUTS][YG_MAX_DIMS];
    yg_status stt = YG_OK;
    int32_t k = 0;
    for (int32_t o = 0; o < n_out && stt == YG_OK; o++) {
        const yg_ir_node *def = sub->ret->inputs[o]->node;
        if (def == anchor && yg__fuser_anchor(anchor) == YG_ANCHOR_SUM) {
            /* One value per row: the reduced shape, stride 0 along the row. */
            int64_t keep = 0, rsz[YG_MAX_DIMS], acc = 1;
            (void)yg__ir_attr_as_int(anchor, "keepdim", &keep);
            for (int32_t d = 0; d < nd; d++)
                rsz[d] = d == nd - 1 ? 1 : sizes[d];
            stt = yg__tensor_new_on("prim::FusionGroup",
                                    rsz,
                                    keep ? nd : nd - 1,
                                    (yg_dtype)dtype,
                                    device,
                                    index,
                                    &out[o]);
            if (stt != YG_OK)
                break;
            /* Strides of the result just allocated: bounded. */
            base[k] = (char *)yg__tensor_ptr(out[o]);
            for (int32_t d = nd - 1; d >= 0; d--) {
                st[k][d] = d == nd - 1 ? 0 : acc;
                acc *= rsz[d];
            }
            k++;
            continue;
        }
        bool cat = def != sub->param && yg__fuser_is_cat(def);
        int64_t csz[YG_MAX_DIMS], cd = 0, pieces = cat ? def->n_inputs : 1;
        for (int32_t d = 0; d < nd; d++)
            csz[d] = sizes[d];
        if (cat) {
            int64_t dim = 0;
            (void)yg__ir_attr_as_int(def, "dim", &dim);
            cd = dim < 0 ? dim + nd : dim;
            if (cd < 0 || cd >= nd) {
                drop(out, o);
                return interpret(sub, in, n_in, out, n_out);
            }
            csz[cd] *= pieces; /* numel * pieces was checked above */
        }
        stt = yg__tensor_new_on(
            "prim::FusionGroup", csz, nd, (yg_dtype)dtype, device, index, &out[o]);
        if (stt != YG_OK)
            break;
        /* Strides and offsets below stay inside this result, which was just
         * allocated (its element count is bounded). */
        int64_t acc = 1, cst[YG_MAX_DIMS];
        for (int32_t d = nd - 1; d >= 0; d--) {
            cst[d] = acc;
            acc *= csz[d];
        }
        for (int64_t p = 0; p < pieces; p++, k++) {
            base[k] = (char *)yg__tensor_ptr(out[o]) +
                      (cat ? p * sizes[cd] * cst[cd] * (int64_t)yg_dtype_size((yg_dtype)dtype) : 0);
            for (int32_t d = 0; d < nd; d++)
                st[k][d] = cst[d];
        }
    }
    if (stt != YG_OK) {
        drop(out, n_out);
        return stt;
    }
    for (int32_t i = 0; i < n_in; i++, k++) {
        const yg_tensor *t = in[i];
        base[k] = (char *)yg__tensor_ptr(t);
        for (int32_t d = 0; d < nd; d++) {
            int32_t td = d - (nd - t->ndim);
            st[k][d] = td < 0 || t->sizes[td] == 1 ? 0 : t->strides[td];
        }
    }
    /* Drop size-1 dims and merge dims contiguous for every operand (an
     * anchored group keeps its dims: its kernel walks rows of the last).
     * A merged size is a product of the output's sizes (bounded by its
     * element count); stride * size is the extent of an existing operand. */
    int64_t cs[YG_MAX_DIMS];
    int64_t cst2[YG_FUSE_MAX_INPUTS + YG_FUSE_MAX_OUTPUTS][YG_MAX_DIMS];
    int32_t cdn = 0;
    for (int32_t d = 0; anchor != NULL && d < nd; d++, cdn++) {
        cs[d] = sizes[d];
        for (int32_t q = 0; q < nops; q++)
            cst2[q][d] = st[q][d];
    }
    for (int32_t d = 0; anchor == NULL && d < nd; d++) {
        if (sizes[d] == 1)
            continue;
        bool merge = cdn > 0;
        for (int32_t q = 0; merge && q < nops; q++)
            merge = cst2[q][cdn - 1] == st[q][d] * sizes[d];
        if (merge) {
            cs[cdn - 1] *= sizes[d];
            for (int32_t q = 0; q < nops; q++)
                cst2[q][cdn - 1] = st[q][d];
        } else {
            cs[cdn] = sizes[d];
            for (int32_t q = 0; q < nops; q++)
                cst2[q][cdn] = st[q][d];
            cdn++;
        }
    }
    if (cdn == 0) {
        cs[0] = 1;
        for (int32_t q = 0; q < nops; q++)
            cst2[q][0] = 1;
        cdn = 1;
    }
    int64_t flat[(YG_FUSE_MAX_INPUTS + YG_FUSE_MAX_OUTPUTS) * YG_MAX_DIMS];
    for (int32_t q = 0; q < nops; q++)
        for (int32_t d = 0; d < cdn; d++)
            flat[q * cdn + d] = cst2[q][d];
    if (device == YG_CUDA) {
        /* The CUDA kernels address outputs through their strides too. */
        stt = yg__fuser_cuda_launch(cv->kernel, index, anchor != NULL, numel, cdn, cs, flat, base,
                                    nops);
        if (stt != YG_OK)
            drop(out, n_out);
        return stt;
    }
    /* The kernel writes its outputs with unit inner stride (an anchored
     * sum's output, one value per row, has stride 0 there). */
    bool unit = true;
    for (int32_t q = 0; q < n_k; q++)
        unit &= cst2[q][cdn - 1] == 1 || cs[cdn - 1] == 1 ||
                (anchor != NULL && cst2[q][cdn - 1] == 0);
    char pattern[YG_FUSE_MAX_INPUTS + 1];
    for (int32_t i = 0; i < n_in; i++) {
        int64_t inner = cst2[n_k + i][cdn - 1];
        pattern[i] = inner == 1 ? 'c' : inner == 0 ? 'b' : 's';
    }
    pattern[n_in] = '\0';
    const variant *v = unit ? variant_of(sub, s, pattern) : NULL;
    if (v == NULL || v->fn == NULL) {
        if (unit)
            yg__fuser_count_fallback(v != NULL ? v->reason : "out of memory");
        drop(out, n_out);
        return interpret(sub, in, n_in, out, n_out);
    }
    v->fn(numel, cdn, cs, base, flat);
    return YG_OK;
}
