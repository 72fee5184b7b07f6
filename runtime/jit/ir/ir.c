/*
 * ir.c - graphs, nodes and values: construction, use lists, attributes,
 * names, cloning and the public accessors of yagrad/jit.h.
 *
 * Memory: every structure is malloc'd and owned by its graph (a node owns
 * its outputs and attributes; the graph owns its nodes and the Param and
 * Return nodes).  IR objects are small and short-lived next to tensor
 * storage, so they do not go through the tensor allocator (yg__alloc),
 * which caches by size class for buffers.
 *
 * Failure: constructors build the whole object before linking it into the
 * graph, so a failed call (out of memory, a bad kind) leaves the graph
 * exactly as it was; the one exception is yg__ir_node_put_attr, which
 * frees the payload it was handed, as its contract says.
 *
 * Names: each graph keeps a hash table from names to values (linear
 * probing, deletion by re-inserting the rest of the cluster, so no
 * tombstones).  Values created without a name get the smallest number
 * not yet taken, counting up from where the last one stopped, so auto
 * names stay short and unique even when parsed text already used some.
 */
#include "jit/ir/ir.h"

#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- types ---- */

yg_ir_type yg_ir_type_tensor(void) {
    yg_ir_type t;
    t.kind = YG_IR_TYPE_TENSOR;
    t.dtype = YG_IR_UNKNOWN;
    t.device = YG_IR_UNKNOWN;
    t.ndim = YG_IR_UNKNOWN;
    for (int i = 0; i < YG_MAX_DIMS; i++)
        t.sizes[i] = YG_IR_UNKNOWN;
    t.requires_grad = YG_IR_UNKNOWN;
    return t;
}

yg_ir_type yg_ir_type_none(void) {
    yg_ir_type t = yg_ir_type_tensor();
    t.kind = YG_IR_TYPE_NONE;
    return t;
}

bool yg__ir_type_valid(const yg_ir_type *t) {
    if (t->kind == YG_IR_TYPE_NONE)
        return true;
    if (t->kind != YG_IR_TYPE_TENSOR)
        return false;
    if (t->dtype < YG_IR_UNKNOWN || t->dtype >= YG_DTYPE_COUNT_)
        return false;
    if (t->device < YG_IR_UNKNOWN || t->device >= YG_DEVICE_COUNT_)
        return false;
    if (t->ndim < YG_IR_UNKNOWN || t->ndim > YG_MAX_DIMS)
        return false;
    for (int32_t i = 0; i < t->ndim; i++) {
        if (t->sizes[i] < YG_IR_UNKNOWN)
            return false;
    }
    return t->requires_grad >= YG_IR_UNKNOWN && t->requires_grad <= 1;
}

/* Copies t with the unused fields reset, so types compare with memcmp-free
 * field checks and print the same however they were built. */
static yg_ir_type normalize_type(const yg_ir_type *t) {
    if (t->kind == YG_IR_TYPE_NONE)
        return yg_ir_type_none();
    yg_ir_type n = *t;
    for (int32_t i = n.ndim < 0 ? 0 : n.ndim; i < YG_MAX_DIMS; i++)
        n.sizes[i] = YG_IR_UNKNOWN;
    return n;
}

bool yg__ir_type_equal(const yg_ir_type *a, const yg_ir_type *b) {
    if (a->kind != b->kind)
        return false;
    if (a->kind == YG_IR_TYPE_NONE)
        return true;
    if (a->dtype != b->dtype || a->device != b->device || a->ndim != b->ndim ||
        a->requires_grad != b->requires_grad)
        return false;
    for (int32_t i = 0; i < a->ndim; i++) {
        if (a->sizes[i] != b->sizes[i])
            return false;
    }
    return true;
}

/* ---- names ---- */

bool yg__ir_valid_value_name(const char *s, size_t len) {
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.';
        if (!ok)
            return false;
    }
    return true;
}

bool yg__ir_valid_attr_name(const char *s, size_t len) {
    if (len == 0 || (s[0] >= '0' && s[0] <= '9'))
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool ok =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        if (!ok)
            return false;
    }
    return true;
}

static uint64_t hash_name(const char *s, size_t len) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static bool names_grow(yg_ir_names *t) {
    int64_t cap = t->cap == 0 ? 16 : t->cap * 2;
    yg_ir_value **slots = calloc((size_t)cap, sizeof *slots);
    if (slots == NULL)
        return false;
    for (int64_t i = 0; i < t->cap; i++) {
        yg_ir_value *v = t->slots[i];
        if (v == NULL)
            continue;
        uint64_t j = hash_name(v->name, strlen(v->name)) & (uint64_t)(cap - 1);
        while (slots[j] != NULL)
            j = (j + 1) & (uint64_t)(cap - 1);
        slots[j] = v;
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return true;
}

static yg_ir_value *names_find(const yg_ir_names *t, const char *name, size_t len) {
    if (t->cap == 0)
        return NULL;
    uint64_t mask = (uint64_t)(t->cap - 1);
    for (uint64_t j = hash_name(name, len) & mask;; j = (j + 1) & mask) {
        yg_ir_value *v = t->slots[j];
        if (v == NULL)
            return NULL;
        if (strlen(v->name) == len && memcmp(v->name, name, len) == 0)
            return v;
    }
}

/* Inserts v (whose name is not in the table).  false when out of memory. */
static bool names_insert(yg_ir_names *t, yg_ir_value *v) {
    if ((t->len + 1) * 2 > t->cap && !names_grow(t))
        return false;
    uint64_t mask = (uint64_t)(t->cap - 1);
    uint64_t j = hash_name(v->name, strlen(v->name)) & mask;
    while (t->slots[j] != NULL)
        j = (j + 1) & mask;
    t->slots[j] = v;
    t->len++;
    return true;
}

static void names_remove(yg_ir_names *t, const yg_ir_value *v) {
    if (t->cap == 0)
        return;
    uint64_t mask = (uint64_t)(t->cap - 1);
    uint64_t j = hash_name(v->name, strlen(v->name)) & mask;
    while (t->slots[j] != NULL && t->slots[j] != v)
        j = (j + 1) & mask;
    if (t->slots[j] == NULL)
        return;
    t->slots[j] = NULL;
    t->len--;
    /* Re-insert the rest of the cluster so lookups never stop early; the
     * table never grows here (its length only went down). */
    for (j = (j + 1) & mask; t->slots[j] != NULL; j = (j + 1) & mask) {
        yg_ir_value *w = t->slots[j];
        t->slots[j] = NULL;
        uint64_t k = hash_name(w->name, strlen(w->name)) & mask;
        while (t->slots[k] != NULL)
            k = (k + 1) & mask;
        t->slots[k] = w;
    }
}

yg_ir_value *yg__ir_graph_find(const yg_graph *g, const char *name, size_t len) {
    return names_find(&g->names, name, len);
}

static char *dup_bytes(const char *s, size_t len) {
    char *d = malloc(len + 1);
    if (d == NULL)
        return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

/* Gives v (not yet in the table, name NULL) the next free number. */
static yg_status assign_auto_name(yg_graph *g, yg_ir_value *v) {
    char buf[32];
    for (;;) {
        int n = snprintf(buf, sizeof buf, "%lld", (long long)g->next_auto_name++);
        if (names_find(&g->names, buf, (size_t)n) == NULL) {
            v->name = dup_bytes(buf, (size_t)n);
            break;
        }
    }
    if (v->name == NULL || !names_insert(&g->names, v)) {
        free(v->name);
        v->name = NULL;
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "graph: out of memory naming a value");
    }
    return YG_OK;
}

yg_status yg__ir_value_rename(yg_ir_value *v, const char *name, size_t len) {
    yg_graph *g = v->node->owner;
    yg_ir_value *other = names_find(&g->names, name, len);
    if (other == v)
        return YG_OK;
    if (other != NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "value_set_name: name %%%.*s is taken",
                        (int)(len > 64 ? 64 : len),
                        name);
    char *copy = dup_bytes(name, len);
    if (copy == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "value_set_name: out of memory");
    char *old = v->name;
    if (old != NULL)
        names_remove(&g->names, v);
    v->name = copy;
    if (!names_insert(&g->names, v)) {
        v->name = old;
        free(copy);
        if (old != NULL && !names_insert(&g->names, v))
            YG_ASSERT(!"re-inserting a name that fit cannot fail");
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "value_set_name: out of memory");
    }
    free(old);
    return YG_OK;
}

/* ---- values and nodes ---- */

bool yg__ir_value_add_use(yg_ir_value *v, yg_ir_node *n, int32_t index) {
    if (v->n_uses == v->cap_uses) {
        int32_t cap = v->cap_uses == 0 ? 4 : v->cap_uses * 2;
        yg_ir_use *uses = realloc(v->uses, (size_t)cap * sizeof *uses);
        if (uses == NULL)
            return false;
        v->uses = uses;
        v->cap_uses = cap;
    }
    v->uses[v->n_uses++] = (yg_ir_use){n, index};
    return true;
}

void yg__ir_value_remove_use(yg_ir_value *v, yg_ir_node *n, int32_t index) {
    for (int32_t i = 0; i < v->n_uses; i++) {
        if (v->uses[i].node == n && v->uses[i].index == index) {
            memmove(&v->uses[i], &v->uses[i + 1], (size_t)(v->n_uses - i - 1) * sizeof *v->uses);
            v->n_uses--;
            return;
        }
    }
    YG_ASSERT(!"removing a use that is not recorded");
}

static void free_value(yg_ir_value *v) {
    if (v == NULL)
        return;
    free(v->name);
    free(v->uses);
    free(v);
}

void yg__ir_attr_clear(yg_ir_attr *a) {
    if (a == NULL)
        return;
    switch (a->kind) {
    case YG_IR_ATTR_STR:
        free(a->u.s);
        break;
    case YG_IR_ATTR_INTS:
        free(a->u.ints.items);
        break;
    case YG_IR_ATTR_FLOATS:
        free(a->u.floats.items);
        break;
    case YG_IR_ATTR_TENSOR:
        yg_release(a->u.t);
        break;
    case YG_IR_ATTR_GRAPH:
        yg_graph_release(a->u.g);
        break;
    default:
        break;
    }
    free(a->name);
    memset(a, 0, sizeof *a);
}

/* Frees a node that is not linked into its graph and whose outputs are
 * not in the name table. */
static void free_node_unlinked(yg_ir_node *n) {
    if (n == NULL)
        return;
    for (int32_t i = 0; i < n->n_outputs; i++)
        free_value(n->outputs[i]);
    for (int32_t i = 0; i < n->n_attrs; i++)
        yg__ir_attr_clear(&n->attrs[i]);
    free(n->attrs);
    free(n->outputs);
    free(n->inputs);
    free(n);
}

static void link_at_end(yg_graph *g, yg_ir_node *n) {
    n->prev = g->last;
    n->next = NULL;
    if (g->last != NULL)
        g->last->next = n;
    else
        g->first = n;
    g->last = n;
    g->n_nodes++;
}

static bool is_linked(const yg_ir_node *n) {
    return n->prev != NULL || n->owner->first == n;
}

static void unlink_node(yg_ir_node *n) {
    yg_graph *g = n->owner;
    if (!is_linked(n))
        return;
    if (n->prev != NULL)
        n->prev->next = n->next;
    else
        g->first = n->next;
    if (n->next != NULL)
        n->next->prev = n->prev;
    else
        g->last = n->prev;
    n->prev = n->next = NULL;
    g->n_nodes--;
}

yg_status yg__ir_node_create(yg_graph *g,
                             const char *kind,
                             const yg_op_info *op,
                             int32_t n_outputs,
                             bool append,
                             yg_ir_node **out) {
    yg_status st = YG_OK;
    int32_t named = 0;
    yg_ir_node *n = calloc(1, sizeof *n);
    *out = NULL;
    if (n == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "graph: out of memory creating a %s node", kind);
    n->kind = kind;
    n->op = op;
    n->owner = g;
    if (n_outputs > 0) {
        n->outputs = calloc((size_t)n_outputs, sizeof *n->outputs);
        if (n->outputs == NULL)
            goto oom;
    }
    for (int32_t i = 0; i < n_outputs; i++) {
        yg_ir_value *v = calloc(1, sizeof *v);
        if (v == NULL)
            goto oom;
        v->node = n;
        v->offset = i;
        v->type = kind == yg__prim_none ? yg_ir_type_none() : yg_ir_type_tensor();
        n->outputs[n->n_outputs++] = v;
    }
    for (; named < n_outputs; named++) {
        st = assign_auto_name(g, n->outputs[named]);
        if (st != YG_OK)
            goto out;
    }
    if (append)
        link_at_end(g, n);
    *out = n;
    return YG_OK;
oom:
    st = yg__fail(YG_ERR_OUT_OF_MEMORY, "graph: out of memory creating a %s node", kind);
out:
    for (int32_t i = 0; i < named; i++)
        names_remove(&g->names, n->outputs[i]);
    free_node_unlinked(n);
    return st;
}

yg_status
yg__ir_node_add_output(yg_ir_node *n, const char *name, size_t len, const yg_ir_type *type) {
    yg_ir_value *v = calloc(1, sizeof *v);
    yg_ir_value **outputs = NULL;
    if (v == NULL)
        goto oom;
    v->node = n;
    v->offset = n->n_outputs;
    v->type = normalize_type(type);
    v->name = dup_bytes(name, len);
    if (v->name == NULL)
        goto oom;
    outputs = realloc(n->outputs, (size_t)(n->n_outputs + 1) * sizeof *outputs);
    if (outputs == NULL)
        goto oom;
    n->outputs = outputs;
    if (!names_insert(&n->owner->names, v))
        goto oom;
    n->outputs[n->n_outputs++] = v;
    return YG_OK;
oom:
    free_value(v);
    return yg__fail(YG_ERR_OUT_OF_MEMORY, "graph: out of memory adding an output");
}

yg_status yg__ir_node_add_input(yg_ir_node *n, yg_ir_value *v) {
    if (n->n_inputs == n->cap_inputs) {
        int32_t cap = n->cap_inputs == 0 ? 4 : n->cap_inputs * 2;
        yg_ir_value **inputs = realloc(n->inputs, (size_t)cap * sizeof *inputs);
        if (inputs == NULL)
            return yg__fail(YG_ERR_OUT_OF_MEMORY, "graph: out of memory adding an input");
        n->inputs = inputs;
        n->cap_inputs = cap;
    }
    if (!yg__ir_value_add_use(v, n, n->n_inputs))
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "graph: out of memory adding an input");
    n->inputs[n->n_inputs++] = v;
    return YG_OK;
}

/* Drops every input of n (and the matching uses). */
static void drop_inputs(yg_ir_node *n) {
    for (int32_t i = n->n_inputs - 1; i >= 0; i--)
        yg__ir_value_remove_use(n->inputs[i], n, i);
    n->n_inputs = 0;
}

yg_status yg__ir_node_replace_input(yg_ir_node *n, int32_t i, yg_ir_value *v) {
    yg_ir_value *old = n->inputs[i];
    if (old == v)
        return YG_OK;
    /* Record the new use first: it is the step that can fail, and failing
     * before anything changed leaves the graph as it was. */
    if (!yg__ir_value_add_use(v, n, i))
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "graph: out of memory growing a use list");
    yg__ir_value_remove_use(old, n, i);
    n->inputs[i] = v;
    return YG_OK;
}

yg_status yg__ir_value_replace_all_uses(yg_ir_value *from, yg_ir_value *to) {
    if (from == to)
        return YG_OK;
    while (from->n_uses > 0) {
        yg_ir_use u = from->uses[from->n_uses - 1];
        YG_RETURN_IF_ERROR(yg__ir_node_replace_input(u.node, u.index, to));
    }
    return YG_OK;
}

void yg__ir_node_destroy(yg_ir_node *n) {
    yg_graph *g = n->owner;
    drop_inputs(n);
    unlink_node(n);
    for (int32_t i = 0; i < n->n_outputs; i++) {
        YG_ASSERT(n->outputs[i]->n_uses == 0);
        if (n->outputs[i]->name != NULL)
            names_remove(&g->names, n->outputs[i]);
    }
    free_node_unlinked(n);
}

void yg__ir_node_move_before(yg_ir_node *n, yg_ir_node *pos) {
    yg_graph *g = n->owner;
    if (n == pos)
        return;
    unlink_node(n);
    n->next = pos;
    n->prev = pos->prev;
    if (pos->prev != NULL)
        pos->prev->next = n;
    else
        g->first = n;
    pos->prev = n;
    g->n_nodes++;
}

void yg__ir_node_move_to_front(yg_ir_node *n) {
    yg_graph *g = n->owner;
    if (g->first == n)
        return;
    if (g->first == NULL) {
        link_at_end(g, n);
        return;
    }
    yg__ir_node_move_before(n, g->first);
}

/* ---- attributes ---- */

const yg_ir_attr *yg__ir_node_attr(const yg_ir_node *n, const char *name) {
    for (int32_t i = 0; i < n->n_attrs; i++) {
        if (strcmp(n->attrs[i].name, name) == 0)
            return &n->attrs[i];
    }
    return NULL;
}

bool yg__ir_attr_as_int(const yg_ir_node *n, const char *name, int64_t *out) {
    const yg_ir_attr *a = yg__ir_node_attr(n, name);
    if (a == NULL)
        return false;
    if (a->kind == YG_IR_ATTR_INT) {
        *out = a->u.i;
        return true;
    }
    /* A float counts when it is a whole number in int64's range; the
     * range test comes first because converting inf, NaN or 1e300 to an
     * integer is undefined behaviour (found by fuzz/fuzz_ir.c). */
    if (a->kind == YG_IR_ATTR_FLOAT && a->u.f >= -9223372036854775808.0 &&
        a->u.f < 9223372036854775808.0 && a->u.f == (double)(int64_t)a->u.f) {
        *out = (int64_t)a->u.f;
        return true;
    }
    return false;
}

bool yg__ir_attr_as_double(const yg_ir_node *n, const char *name, double *out) {
    const yg_ir_attr *a = yg__ir_node_attr(n, name);
    if (a == NULL)
        return false;
    if (a->kind == YG_IR_ATTR_INT) {
        *out = (double)a->u.i;
        return true;
    }
    if (a->kind == YG_IR_ATTR_FLOAT) {
        *out = a->u.f;
        return true;
    }
    return false;
}

yg_status yg__ir_node_put_attr(yg_ir_node *n, yg_ir_attr *attr) {
    int32_t pos = 0;
    while (pos < n->n_attrs && strcmp(n->attrs[pos].name, attr->name) < 0)
        pos++;
    if (pos < n->n_attrs && strcmp(n->attrs[pos].name, attr->name) == 0) {
        yg__ir_attr_clear(&n->attrs[pos]);
        n->attrs[pos] = *attr;
        return YG_OK;
    }
    yg_ir_attr *attrs = realloc(n->attrs, (size_t)(n->n_attrs + 1) * sizeof *attrs);
    if (attrs == NULL) {
        yg__ir_attr_clear(attr);
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "graph: out of memory setting an attribute");
    }
    n->attrs = attrs;
    memmove(&attrs[pos + 1], &attrs[pos], (size_t)(n->n_attrs - pos) * sizeof *attrs);
    attrs[pos] = *attr;
    n->n_attrs++;
    return YG_OK;
}

static yg_status clone_graph(const yg_graph *g, yg_graph **out);

yg_status yg__ir_attr_copy(const yg_ir_attr *src, yg_ir_attr *dst) {
    yg_status st = YG_OK;
    memset(dst, 0, sizeof *dst);
    dst->kind = src->kind;
    dst->name = dup_bytes(src->name, strlen(src->name));
    if (dst->name == NULL)
        goto oom;
    switch (src->kind) {
    case YG_IR_ATTR_INT:
        dst->u.i = src->u.i;
        break;
    case YG_IR_ATTR_FLOAT:
        dst->u.f = src->u.f;
        break;
    case YG_IR_ATTR_STR:
        dst->u.s = dup_bytes(src->u.s, strlen(src->u.s));
        if (dst->u.s == NULL)
            goto oom;
        break;
    case YG_IR_ATTR_INTS:
        dst->u.ints.items =
            malloc((size_t)(src->u.ints.len > 0 ? src->u.ints.len : 1) * sizeof(int64_t));
        if (dst->u.ints.items == NULL)
            goto oom;
        if (src->u.ints.len > 0)
            memcpy(dst->u.ints.items, src->u.ints.items, (size_t)src->u.ints.len * sizeof(int64_t));
        dst->u.ints.len = src->u.ints.len;
        break;
    case YG_IR_ATTR_FLOATS:
        dst->u.floats.items =
            malloc((size_t)(src->u.floats.len > 0 ? src->u.floats.len : 1) * sizeof(double));
        if (dst->u.floats.items == NULL)
            goto oom;
        if (src->u.floats.len > 0)
            memcpy(dst->u.floats.items,
                   src->u.floats.items,
                   (size_t)src->u.floats.len * sizeof(double));
        dst->u.floats.len = src->u.floats.len;
        break;
    case YG_IR_ATTR_TENSOR:
        /* Attribute tensors are never written, so copies share them. */
        dst->u.t = yg_retain(src->u.t);
        break;
    case YG_IR_ATTR_GRAPH:
        st = clone_graph(src->u.g, &dst->u.g);
        if (st != YG_OK)
            goto fail;
        break;
    }
    return YG_OK;
oom:
    st = yg__fail(YG_ERR_OUT_OF_MEMORY, "graph: out of memory copying an attribute");
fail:
    /* Leave dst holding only what was allocated, then clear it. */
    if (dst->kind == YG_IR_ATTR_TENSOR || dst->kind == YG_IR_ATTR_GRAPH)
        dst->u.g = NULL;
    yg__ir_attr_clear(dst);
    return st;
}

bool yg__ir_attr_equal(const yg_ir_attr *a, const yg_ir_attr *b) {
    if (a->kind != b->kind || strcmp(a->name, b->name) != 0)
        return false;
    switch (a->kind) {
    case YG_IR_ATTR_INT:
        return a->u.i == b->u.i;
    case YG_IR_ATTR_FLOAT:
        return memcmp(&a->u.f, &b->u.f, sizeof(double)) == 0;
    case YG_IR_ATTR_STR:
        return strcmp(a->u.s, b->u.s) == 0;
    case YG_IR_ATTR_INTS:
        return a->u.ints.len == b->u.ints.len &&
               (a->u.ints.len == 0 ||
                memcmp(a->u.ints.items, b->u.ints.items, (size_t)a->u.ints.len * sizeof(int64_t)) ==
                    0);
    case YG_IR_ATTR_FLOATS:
        return a->u.floats.len == b->u.floats.len &&
               (a->u.floats.len == 0 || memcmp(a->u.floats.items,
                                               b->u.floats.items,
                                               (size_t)a->u.floats.len * sizeof(double)) == 0);
    case YG_IR_ATTR_TENSOR: {
        const yg_tensor *x = a->u.t, *y = b->u.t;
        if (x == y)
            return true;
        if (x->dtype != y->dtype || x->ndim != y->ndim)
            return false;
        for (int32_t i = 0; i < x->ndim; i++) {
            if (x->sizes[i] != y->sizes[i])
                return false;
        }
        size_t bytes = (size_t)yg_tensor_numel(x) * yg_dtype_size(x->dtype);
        return bytes == 0 || memcmp(yg__tensor_ptr(x), yg__tensor_ptr(y), bytes) == 0;
    }
    case YG_IR_ATTR_GRAPH:
        return a->u.g == b->u.g;
    }
    return false;
}

yg_status yg__ir_tensor_snapshot(const char *what, const yg_tensor *t, yg_tensor **out) {
    *out = NULL;
    if (t == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: tensor is NULL", what);
    if (yg_tensor_device(t) != YG_CPU)
        return yg__fail(YG_ERR_DEVICE,
                        "%s: expected a cpu tensor, got %s",
                        what,
                        yg__device_name(yg_tensor_device(t)));
    yg_status st = yg__tensor_contiguous_as(t, t->dtype, false, out);
    if (st != YG_OK)
        return yg__fail_prefix(st, what);
    return YG_OK;
}

/* ---- graphs ---- */

yg_status yg_graph_create(yg_graph **out) {
    yg_status st;
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_create: out is NULL");
    *out = NULL;
    yg_graph *g = calloc(1, sizeof *g);
    if (g == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "graph_create: out of memory");
    st = yg__ir_node_create(g, yg__prim_param, NULL, 0, false, &g->param);
    if (st != YG_OK)
        goto out;
    st = yg__ir_node_create(g, yg__prim_return, NULL, 0, false, &g->ret);
    if (st != YG_OK)
        goto out;
    *out = g;
    return YG_OK;
out:
    yg_graph_release(g);
    return st;
}

void yg__graph_freeze(yg_graph *g) {
    g->frozen = true;
}

void *yg__graph_cache_get(const yg_graph *g, const yg_graph_cache_kind *kind) {
    yg_graph *mg = (yg_graph *)g; /* the slots are caches, not the graph's value */
    for (int i = 0; i < YG_GRAPH_CACHE_SLOTS; i++) {
        const yg_graph_cache_kind *k = atomic_load_explicit(&mg->caches[i].kind,
                                                            memory_order_acquire);
        if (k == NULL)
            return NULL;
        if (k == kind)
            return atomic_load_explicit(&mg->caches[i].value, memory_order_acquire);
    }
    return NULL;
}

void *yg__graph_cache_put(yg_graph *g, const yg_graph_cache_kind *kind, void *cache) {
    /* Slots are claimed in index order and never given up, so two threads
     * putting the same kind meet at the same slot. */
    for (int i = 0; i < YG_GRAPH_CACHE_SLOTS; i++) {
        const yg_graph_cache_kind *k = NULL;
        if (!atomic_compare_exchange_strong(&g->caches[i].kind, &k, kind) && k != kind)
            continue;
        void *expected = NULL;
        if (atomic_compare_exchange_strong(&g->caches[i].value, &expected, cache))
            return cache;
        kind->free(cache);
        return expected;
    }
    kind->free(cache);
    return NULL;
}

yg_graph *yg__graph_retain(yg_graph *g) {
    atomic_fetch_add_explicit(&g->extra_refs, 1, memory_order_relaxed);
    return g;
}

void yg_graph_release(yg_graph *g) {
    if (g == NULL)
        return;
    if (atomic_fetch_sub_explicit(&g->extra_refs, 1, memory_order_acq_rel) > 0)
        return;
    for (int i = 0; i < YG_GRAPH_CACHE_SLOTS; i++) {
        const yg_graph_cache_kind *kind = atomic_load(&g->caches[i].kind);
        void *cache = atomic_load(&g->caches[i].value);
        if (kind != NULL && cache != NULL)
            kind->free(cache);
    }
    yg_ir_node *n = g->first;
    while (n != NULL) {
        yg_ir_node *next = n->next;
        free_node_unlinked(n);
        n = next;
    }
    free_node_unlinked(g->param);
    free_node_unlinked(g->ret);
    free(g->names.slots);
    free(g);
}

/* Appends a graph input value to g's Param node. */
static yg_status
add_input(yg_graph *g, const yg_ir_type *type, const char *name, yg_ir_value **out) {
    yg_ir_node *p = g->param;
    yg_ir_value *v = calloc(1, sizeof *v);
    yg_ir_value **outputs = NULL;
    yg_status st = YG_OK;
    if (v == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "graph_add_input: out of memory");
    v->node = p;
    v->offset = p->n_outputs;
    v->type = type != NULL ? normalize_type(type) : yg_ir_type_tensor();
    if (name != NULL) {
        v->name = dup_bytes(name, strlen(name));
        if (v->name == NULL || !names_insert(&g->names, v)) {
            free_value(v);
            return yg__fail(YG_ERR_OUT_OF_MEMORY, "graph_add_input: out of memory");
        }
    } else {
        st = assign_auto_name(g, v);
        if (st != YG_OK) {
            free_value(v);
            return st;
        }
    }
    outputs = realloc(p->outputs, (size_t)(p->n_outputs + 1) * sizeof *outputs);
    if (outputs == NULL) {
        names_remove(&g->names, v);
        free_value(v);
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "graph_add_input: out of memory");
    }
    p->outputs = outputs;
    p->outputs[p->n_outputs++] = v;
    if (out != NULL)
        *out = v;
    return YG_OK;
}

yg_status
yg_graph_add_input(yg_graph *g, const yg_ir_type *type, const char *name, yg_ir_value **out) {
    if (out != NULL)
        *out = NULL;
    if (g == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_add_input: graph is NULL");
    if (type != NULL && !yg__ir_type_valid(type))
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_add_input: invalid type");
    if (name != NULL && !yg__ir_valid_value_name(name, strlen(name)))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "graph_add_input: malformed name \"%.64s\" (expected [A-Za-z0-9_.]+)",
                        name);
    if (name != NULL && names_find(&g->names, name, strlen(name)) != NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_add_input: name %%%.64s is taken", name);
    return add_input(g, type, name, out);
}

yg_status yg_graph_add_node(yg_graph *g,
                            const char *kind,
                            yg_ir_value *const *inputs,
                            int64_t n_inputs,
                            int64_t n_outputs,
                            yg_ir_node **out) {
    const yg_op_info *op = NULL;
    const char *interned;
    yg_ir_node *n = NULL;
    yg_status st;
    char msg[256];
    if (out != NULL)
        *out = NULL;
    if (g == NULL || kind == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_add_node: graph or kind is NULL");
    interned = yg__ir_kind_lookup(kind, strlen(kind), &op);
    if (interned == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_add_node: unknown kind '%.64s'", kind);
    if (n_inputs < 0 || n_inputs > INT32_MAX || (n_inputs > 0 && inputs == NULL))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "graph_add_node: %s: invalid input list (%lld entries)",
                        interned,
                        (long long)n_inputs);
    if (n_outputs < 0 || n_outputs > 4096)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "graph_add_node: %s: invalid output count %lld",
                        interned,
                        (long long)n_outputs);
    for (int64_t i = 0; i < n_inputs; i++) {
        if (inputs[i] == NULL || inputs[i]->node->owner != g)
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "graph_add_node: %s: input %lld is %s",
                            interned,
                            (long long)i,
                            inputs[i] == NULL ? "NULL" : "a value of another graph");
    }
    st = yg__ir_node_create(g, interned, op, (int32_t)n_outputs, false, &n);
    if (st != YG_OK)
        return st;
    for (int64_t i = 0; i < n_inputs; i++) {
        st = yg__ir_node_add_input(n, inputs[i]);
        if (st != YG_OK)
            goto out;
    }
    if (!yg__ir_check_node(n, false, msg, sizeof msg)) {
        st = yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_add_node: %s", msg);
        goto out;
    }
    link_at_end(g, n);
    if (out != NULL)
        *out = n;
    return YG_OK;
out:
    drop_inputs(n);
    for (int32_t i = 0; i < n->n_outputs; i++)
        names_remove(&g->names, n->outputs[i]);
    free_node_unlinked(n);
    return st;
}

yg_status yg_graph_add_constant(yg_graph *g, const yg_tensor *t, yg_ir_value **out) {
    yg_ir_node *n = NULL;
    yg_ir_attr a = {0};
    yg_status st;
    if (out != NULL)
        *out = NULL;
    if (g == NULL || t == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_add_constant: graph or tensor is NULL");
    a.kind = YG_IR_ATTR_TENSOR;
    st = yg__ir_tensor_snapshot("graph_add_constant", t, &a.u.t);
    if (st != YG_OK)
        return st;
    a.name = dup_bytes("value", 5);
    if (a.name == NULL) {
        yg_release(a.u.t);
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "graph_add_constant: out of memory");
    }
    st = yg__ir_node_create(g, yg__prim_constant, NULL, 1, false, &n);
    if (st != YG_OK) {
        yg__ir_attr_clear(&a);
        return st;
    }
    st = yg__ir_node_put_attr(n, &a); /* takes a's payload, even on failure */
    if (st != YG_OK) {
        names_remove(&g->names, n->outputs[0]);
        free_node_unlinked(n);
        return st;
    }
    yg_ir_type *ty = &n->outputs[0]->type;
    ty->dtype = (int32_t)t->dtype;
    ty->device = YG_CPU;
    ty->ndim = t->ndim;
    for (int32_t i = 0; i < t->ndim; i++)
        ty->sizes[i] = t->sizes[i];
    ty->requires_grad = 0;
    link_at_end(g, n);
    if (out != NULL)
        *out = n->outputs[0];
    return YG_OK;
}

yg_status yg_graph_set_outputs(yg_graph *g, yg_ir_value *const *values, int64_t len) {
    yg_ir_node *r;
    yg_ir_value **old_inputs;
    int32_t old_n, old_cap;
    if (g == NULL || len < 0 || len > INT32_MAX || (len > 0 && values == NULL))
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_set_outputs: invalid arguments");
    for (int64_t i = 0; i < len; i++) {
        if (values[i] == NULL || values[i]->node->owner != g)
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "graph_set_outputs: output %lld is %s",
                            (long long)i,
                            values[i] == NULL ? "NULL" : "a value of another graph");
    }
    /* Build the new output list on the side, then swap it in, so running
     * out of memory leaves the old outputs in place. */
    r = g->ret;
    old_inputs = r->inputs;
    old_n = r->n_inputs;
    old_cap = r->cap_inputs;
    r->inputs = NULL;
    r->n_inputs = r->cap_inputs = 0;
    for (int64_t i = 0; i < len; i++) {
        if (yg__ir_node_add_input(r, values[i]) != YG_OK) {
            drop_inputs(r);
            free(r->inputs);
            r->inputs = old_inputs;
            r->n_inputs = old_n;
            r->cap_inputs = old_cap;
            return yg__fail(YG_ERR_OUT_OF_MEMORY, "graph_set_outputs: out of memory");
        }
    }
    /* Drop the old uses: they were recorded against r with indices that
     * may coincide with the new ones, so remove exactly the old entries. */
    for (int32_t i = old_n - 1; i >= 0; i--) {
        yg_ir_value *v = old_inputs[i];
        for (int32_t k = 0; k < v->n_uses; k++) {
            if (v->uses[k].node == r && v->uses[k].index == i) {
                /* A value may now be used by r at index i twice (old and
                 * new); the old entry was recorded first, so it is the
                 * first match. */
                memmove(
                    &v->uses[k], &v->uses[k + 1], (size_t)(v->n_uses - k - 1) * sizeof *v->uses);
                v->n_uses--;
                break;
            }
        }
    }
    free(old_inputs);
    return YG_OK;
}

/* ---- cloning ---- */

/* The value of copy c that has src's name (always there: c is built in
 * definition order, so a node's inputs are copied before the node). */
static yg_ir_value *copy_of(const yg_graph *c, const yg_ir_value *src) {
    return names_find(&c->names, src->name, strlen(src->name));
}

static yg_status clone_graph(const yg_graph *g, yg_graph **out) {
    yg_graph *c = NULL;
    yg_status st;
    *out = NULL;
    st = yg_graph_create(&c);
    if (st != YG_OK)
        return st;
    /* Names are unique per graph and the copy keeps them, so a source
     * value's copy is found by name; the source is never written. */
    for (int32_t i = 0; i < g->param->n_outputs; i++) {
        yg_ir_value *v = g->param->outputs[i], *copy = NULL;
        st = add_input(c, &v->type, v->name, &copy);
        if (st != YG_OK)
            goto out;
        copy->is_param = v->is_param;
    }
    for (const yg_ir_node *n = g->first; n != NULL; n = n->next) {
        yg_ir_node *m = NULL;
        st = yg__ir_node_create(c, n->kind, n->op, 0, true, &m);
        if (st != YG_OK)
            goto out;
        for (int32_t i = 0; i < n->n_inputs; i++) {
            yg_ir_value *in = copy_of(c, n->inputs[i]);
            if (in == NULL) {
                st = yg__fail(YG_ERR_INTERNAL,
                              "graph_clone: %%%s is used before its definition",
                              n->inputs[i]->name);
                goto out;
            }
            st = yg__ir_node_add_input(m, in);
            if (st != YG_OK)
                goto out;
        }
        for (int32_t i = 0; i < n->n_attrs; i++) {
            yg_ir_attr a;
            st = yg__ir_attr_copy(&n->attrs[i], &a);
            if (st != YG_OK)
                goto out;
            st = yg__ir_node_put_attr(m, &a);
            if (st != YG_OK)
                goto out;
        }
        if (n->n_outputs > 0) {
            m->outputs = calloc((size_t)n->n_outputs, sizeof *m->outputs);
            if (m->outputs == NULL)
                goto oom;
        }
        for (int32_t i = 0; i < n->n_outputs; i++) {
            const yg_ir_value *src = n->outputs[i];
            yg_ir_value *v = calloc(1, sizeof *v);
            if (v == NULL)
                goto oom;
            v->node = m;
            v->offset = i;
            v->type = src->type;
            v->name = dup_bytes(src->name, strlen(src->name));
            m->outputs[m->n_outputs++] = v;
            if (v->name == NULL || !names_insert(&c->names, v)) {
                free(v->name);
                v->name = NULL; /* not in the table: the release must not look */
                goto oom;
            }
        }
    }
    for (int32_t i = 0; i < g->ret->n_inputs; i++) {
        yg_ir_value *in = copy_of(c, g->ret->inputs[i]);
        if (in == NULL) {
            st = yg__fail(YG_ERR_INTERNAL,
                          "graph_clone: output %%%s is not defined",
                          g->ret->inputs[i]->name);
            goto out;
        }
        st = yg__ir_node_add_input(c->ret, in);
        if (st != YG_OK)
            goto out;
    }
    c->next_auto_name = g->next_auto_name;
    *out = c;
    return YG_OK;
oom:
    st = yg__fail(YG_ERR_OUT_OF_MEMORY, "graph_clone: out of memory");
out:
    yg_graph_release(c);
    return st;
}

yg_status yg_graph_clone(const yg_graph *g, yg_graph **out) {
    if (out != NULL)
        *out = NULL;
    if (g == NULL || out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_clone: graph or out is NULL");
    return clone_graph(g, out);
}

/* ---- canonicalize ---- */

/* Renames g's values to 0, 1, 2, ... in definition order.  Every new name
 * is allocated first; then the table is emptied and refilled, which cannot
 * fail (it holds as many names as before, so it never grows), so running
 * out of memory leaves the old names in place. */
static yg_status canonicalize(yg_graph *g, int depth) {
    char buf[32];
    int64_t count = g->param->n_outputs, k = 0;
    char **names = NULL;
    if (depth > 256)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_canonicalize: subgraphs nested too deep");
    for (yg_ir_node *n = g->first; n != NULL; n = n->next)
        count += n->n_outputs;
    names = calloc((size_t)(count > 0 ? count : 1), sizeof *names);
    if (names == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "graph_canonicalize: out of memory");
    for (k = 0; k < count; k++) {
        int len = snprintf(buf, sizeof buf, "%lld", (long long)k);
        names[k] = dup_bytes(buf, (size_t)len);
        if (names[k] == NULL) {
            for (int64_t i = 0; i < k; i++)
                free(names[i]);
            free(names);
            return yg__fail(YG_ERR_OUT_OF_MEMORY, "graph_canonicalize: out of memory");
        }
    }
    if (g->names.cap > 0)
        memset(g->names.slots, 0, (size_t)g->names.cap * sizeof *g->names.slots);
    g->names.len = 0;
    k = 0;
    for (int32_t i = 0; i < g->param->n_outputs; i++) {
        yg_ir_value *v = g->param->outputs[i];
        free(v->name);
        v->name = names[k++];
        if (!names_insert(&g->names, v))
            YG_ASSERT(!"refilling the name table cannot grow it");
    }
    for (yg_ir_node *n = g->first; n != NULL; n = n->next) {
        for (int32_t i = 0; i < n->n_outputs; i++) {
            yg_ir_value *v = n->outputs[i];
            free(v->name);
            v->name = names[k++];
            if (!names_insert(&g->names, v))
                YG_ASSERT(!"refilling the name table cannot grow it");
        }
    }
    free(names);
    g->next_auto_name = count;
    for (yg_ir_node *n = g->first; n != NULL; n = n->next) {
        for (int32_t i = 0; i < n->n_attrs; i++) {
            if (n->attrs[i].kind == YG_IR_ATTR_GRAPH)
                YG_RETURN_IF_ERROR(canonicalize(n->attrs[i].u.g, depth + 1));
        }
    }
    return YG_OK;
}

yg_status yg_graph_canonicalize(yg_graph *g) {
    if (g == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "graph_canonicalize: graph is NULL");
    return canonicalize(g, 0);
}

/* ---- accessors ---- */

int64_t yg_graph_num_inputs(const yg_graph *g) {
    return g != NULL ? g->param->n_outputs : 0;
}

yg_ir_value *yg_graph_input(const yg_graph *g, int64_t i) {
    return g != NULL && i >= 0 && i < g->param->n_outputs ? g->param->outputs[i] : NULL;
}

int64_t yg_graph_num_outputs(const yg_graph *g) {
    return g != NULL ? g->ret->n_inputs : 0;
}

yg_ir_value *yg_graph_output(const yg_graph *g, int64_t i) {
    return g != NULL && i >= 0 && i < g->ret->n_inputs ? g->ret->inputs[i] : NULL;
}

int64_t yg_graph_num_nodes(const yg_graph *g) {
    return g != NULL ? g->n_nodes : 0;
}

yg_ir_node *yg_graph_first_node(const yg_graph *g) {
    return g != NULL ? g->first : NULL;
}

yg_ir_node *yg_ir_node_next(const yg_ir_node *n) {
    return n != NULL ? n->next : NULL;
}

const char *yg_ir_node_kind(const yg_ir_node *n) {
    return n != NULL ? n->kind : NULL;
}

int64_t yg_ir_node_num_inputs(const yg_ir_node *n) {
    return n != NULL ? n->n_inputs : 0;
}

yg_ir_value *yg_ir_node_input(const yg_ir_node *n, int64_t i) {
    return n != NULL && i >= 0 && i < n->n_inputs ? n->inputs[i] : NULL;
}

int64_t yg_ir_node_num_outputs(const yg_ir_node *n) {
    return n != NULL ? n->n_outputs : 0;
}

yg_ir_value *yg_ir_node_output(const yg_ir_node *n, int64_t i) {
    return n != NULL && i >= 0 && i < n->n_outputs ? n->outputs[i] : NULL;
}

const char *yg_ir_value_name(const yg_ir_value *v) {
    return v != NULL ? v->name : NULL;
}

yg_ir_type yg_ir_value_type(const yg_ir_value *v) {
    return v != NULL ? v->type : yg_ir_type_tensor();
}

yg_ir_node *yg_ir_value_node(const yg_ir_value *v) {
    return v != NULL && v->node->kind != yg__prim_param ? v->node : NULL;
}

int64_t yg_ir_value_num_uses(const yg_ir_value *v) {
    return v != NULL ? v->n_uses : 0;
}

yg_status yg_ir_value_set_type(yg_ir_value *v, const yg_ir_type *type) {
    if (v == NULL || type == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "value_set_type: value or type is NULL");
    if (!yg__ir_type_valid(type))
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "value_set_type: %%%s: invalid type", v->name);
    v->type = normalize_type(type);
    return YG_OK;
}

bool yg_ir_value_is_param(const yg_ir_value *v) {
    return v != NULL && v->is_param;
}

yg_status yg_ir_value_set_param(yg_ir_value *v, bool is_param) {
    if (v == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "value_set_param: value is NULL");
    if (v->node != v->node->owner->param)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "value_set_param: %%%s is not a graph input",
                        v->name);
    v->is_param = is_param;
    return YG_OK;
}

yg_status yg_ir_value_set_name(yg_ir_value *v, const char *name) {
    if (v == NULL || name == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "value_set_name: value or name is NULL");
    if (!yg__ir_valid_value_name(name, strlen(name)))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "value_set_name: malformed name \"%.64s\" (expected [A-Za-z0-9_.]+)",
                        name);
    return yg__ir_value_rename(v, name, strlen(name));
}

/* ---- attribute API ---- */

/* Starts an attribute: validates n and name and copies the name. */
static yg_status begin_attr(yg_ir_node *n, const char *name, yg_ir_attr_kind kind, yg_ir_attr *a) {
    memset(a, 0, sizeof *a);
    if (n == NULL || name == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "node_set_attr: node or name is NULL");
    if (!yg__ir_valid_attr_name(name, strlen(name)))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "node_set_attr: %s: malformed attribute name \"%.64s\"",
                        n->kind,
                        name);
    a->kind = kind;
    a->name = dup_bytes(name, strlen(name));
    if (a->name == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "node_set_attr: out of memory");
    return YG_OK;
}

yg_status yg_ir_node_set_int(yg_ir_node *n, const char *name, int64_t value) {
    yg_ir_attr a;
    YG_RETURN_IF_ERROR(begin_attr(n, name, YG_IR_ATTR_INT, &a));
    a.u.i = value;
    return yg__ir_node_put_attr(n, &a);
}

yg_status yg_ir_node_set_float(yg_ir_node *n, const char *name, double value) {
    yg_ir_attr a;
    YG_RETURN_IF_ERROR(begin_attr(n, name, YG_IR_ATTR_FLOAT, &a));
    a.u.f = value;
    return yg__ir_node_put_attr(n, &a);
}

yg_status yg_ir_node_set_str(yg_ir_node *n, const char *name, const char *value) {
    yg_ir_attr a;
    if (value == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "node_set_str: value is NULL");
    YG_RETURN_IF_ERROR(begin_attr(n, name, YG_IR_ATTR_STR, &a));
    a.u.s = dup_bytes(value, strlen(value));
    if (a.u.s == NULL) {
        yg__ir_attr_clear(&a);
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "node_set_str: out of memory");
    }
    return yg__ir_node_put_attr(n, &a);
}

yg_status yg_ir_node_set_ints(yg_ir_node *n, const char *name, const int64_t *values, int64_t len) {
    yg_ir_attr a;
    if (len < 0 || (len > 0 && values == NULL))
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "node_set_ints: invalid list");
    YG_RETURN_IF_ERROR(begin_attr(n, name, YG_IR_ATTR_INTS, &a));
    a.u.ints.items = malloc((size_t)(len > 0 ? len : 1) * sizeof(int64_t));
    if (a.u.ints.items == NULL) {
        yg__ir_attr_clear(&a);
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "node_set_ints: out of memory");
    }
    if (len > 0)
        memcpy(a.u.ints.items, values, (size_t)len * sizeof(int64_t));
    a.u.ints.len = len;
    return yg__ir_node_put_attr(n, &a);
}

yg_status
yg_ir_node_set_floats(yg_ir_node *n, const char *name, const double *values, int64_t len) {
    yg_ir_attr a;
    if (len < 0 || (len > 0 && values == NULL))
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "node_set_floats: invalid list");
    YG_RETURN_IF_ERROR(begin_attr(n, name, YG_IR_ATTR_FLOATS, &a));
    a.u.floats.items = malloc((size_t)(len > 0 ? len : 1) * sizeof(double));
    if (a.u.floats.items == NULL) {
        yg__ir_attr_clear(&a);
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "node_set_floats: out of memory");
    }
    if (len > 0)
        memcpy(a.u.floats.items, values, (size_t)len * sizeof(double));
    a.u.floats.len = len;
    return yg__ir_node_put_attr(n, &a);
}

yg_status yg_ir_node_set_tensor(yg_ir_node *n, const char *name, const yg_tensor *t) {
    yg_ir_attr a;
    yg_tensor *copy = NULL;
    YG_RETURN_IF_ERROR(yg__ir_tensor_snapshot("node_set_tensor", t, &copy));
    yg_status st = begin_attr(n, name, YG_IR_ATTR_TENSOR, &a);
    if (st != YG_OK) {
        yg_release(copy);
        return st;
    }
    a.u.t = copy;
    return yg__ir_node_put_attr(n, &a);
}

yg_status yg_ir_node_set_graph(yg_ir_node *n, const char *name, const yg_graph *sub) {
    yg_ir_attr a;
    yg_graph *copy = NULL;
    if (sub == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "node_set_graph: graph is NULL");
    if (n != NULL && sub == n->owner)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "node_set_graph: a graph cannot contain itself");
    YG_RETURN_IF_ERROR(clone_graph(sub, &copy));
    yg_status st = begin_attr(n, name, YG_IR_ATTR_GRAPH, &a);
    if (st != YG_OK) {
        yg_graph_release(copy);
        return st;
    }
    a.u.g = copy;
    return yg__ir_node_put_attr(n, &a);
}

bool yg_ir_node_has_attr(const yg_ir_node *n, const char *name, yg_ir_attr_kind *kind) {
    if (n == NULL || name == NULL)
        return false;
    const yg_ir_attr *a = yg__ir_node_attr(n, name);
    if (a != NULL && kind != NULL)
        *kind = a->kind;
    return a != NULL;
}

static const char *attr_kind_name(yg_ir_attr_kind k) {
    static const char *const names[] = {
        "int", "float", "str", "int list", "float list", "tensor", "graph"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "unknown";
}

static yg_status
get_attr(const yg_ir_node *n, const char *name, yg_ir_attr_kind kind, const yg_ir_attr **out) {
    *out = NULL;
    if (n == NULL || name == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "node_get_attr: node or name is NULL");
    const yg_ir_attr *a = yg__ir_node_attr(n, name);
    if (a == NULL)
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "node_get_attr: %s has no attribute %.64s", n->kind, name);
    if (a->kind != kind)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "node_get_attr: %s: attribute %s is a %s, not a %s",
                        n->kind,
                        a->name,
                        attr_kind_name(a->kind),
                        attr_kind_name(kind));
    *out = a;
    return YG_OK;
}

yg_status yg_ir_node_get_int(const yg_ir_node *n, const char *name, int64_t *out) {
    const yg_ir_attr *a;
    YG_RETURN_IF_ERROR(get_attr(n, name, YG_IR_ATTR_INT, &a));
    *out = a->u.i;
    return YG_OK;
}

yg_status yg_ir_node_get_float(const yg_ir_node *n, const char *name, double *out) {
    const yg_ir_attr *a;
    YG_RETURN_IF_ERROR(get_attr(n, name, YG_IR_ATTR_FLOAT, &a));
    *out = a->u.f;
    return YG_OK;
}

yg_status yg_ir_node_get_str(const yg_ir_node *n, const char *name, const char **out) {
    const yg_ir_attr *a;
    *out = NULL;
    YG_RETURN_IF_ERROR(get_attr(n, name, YG_IR_ATTR_STR, &a));
    *out = a->u.s;
    return YG_OK;
}

yg_status
yg_ir_node_get_ints(const yg_ir_node *n, const char *name, const int64_t **out, int64_t *len) {
    const yg_ir_attr *a;
    *out = NULL;
    *len = 0;
    YG_RETURN_IF_ERROR(get_attr(n, name, YG_IR_ATTR_INTS, &a));
    *out = a->u.ints.items;
    *len = a->u.ints.len;
    return YG_OK;
}

yg_status yg_ir_node_get_tensor(const yg_ir_node *n, const char *name, yg_tensor **out) {
    const yg_ir_attr *a;
    *out = NULL;
    YG_RETURN_IF_ERROR(get_attr(n, name, YG_IR_ATTR_TENSOR, &a));
    return yg__ir_tensor_snapshot("node_get_tensor", a->u.t, out);
}

yg_status yg_ir_node_get_graph(const yg_ir_node *n, const char *name, const yg_graph **out) {
    const yg_ir_attr *a;
    *out = NULL;
    YG_RETURN_IF_ERROR(get_attr(n, name, YG_IR_ATTR_GRAPH, &a));
    *out = a->u.g;
    return YG_OK;
}

void yg_string_release(char *s) {
    free(s);
}
