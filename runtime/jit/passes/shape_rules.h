/*
 * shape_rules.h - what the two files of the shape propagation pass share:
 * the rule context, the rule table entry and small helpers.  Private to
 * shape_propagation.c (the driver and the core rules) and shape_rules_nn.c
 * (creation, random, list-returning, nn, conversion and advanced indexing
 * ops).
 */
#ifndef YAGRAD_JIT_SHAPE_RULES_H
#define YAGRAD_JIT_SHAPE_RULES_H

#include "jit/passes/passes.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* The most outputs a rule can describe (a list return of more pieces
 * keeps the types it has). */
#define YG_SHAPE_MAX_OUTPUTS 64

/* What a rule writes: one type per output. */
typedef struct shape_ctx {
    const yg_ir_node *n;
    yg_ir_type out[YG_SHAPE_MAX_OUTPUTS];
    char msg[256];
} shape_ctx;

typedef enum out_dtype {
    DT_SAME, /* dtype of the first tensor input (or promotion, for pointwise) */
    DT_BOOL,
    DT_INT64,
    DT_PROMOTE, /* the promotion of every tensor input's dtype */
    DT_RULE,    /* the rule sets dtype and device of every output itself */
    DT_SUM,     /* the first input's dtype, int64 for bool and integer ones
                   (sum's accumulation type) */
} out_dtype;

typedef bool (*rule_fn)(shape_ctx *c);

typedef struct shape_rule {
    int32_t op; /* yg_op_id (op_ids.h) */
    rule_fn fn;
    out_dtype dtype;
} shape_rule;

/* The rules of shape_rules_nn.c, looked up after the core table. */
extern const shape_rule yg__shape_rules_nn[];
extern const size_t yg__shape_rules_nn_len;

static inline const yg_ir_type *in(const shape_ctx *c, int32_t i) {
    return &c->n->inputs[i]->type;
}

static inline bool fail(shape_ctx *c, const char *fmt, ...) YG__PRINTF(2, 3);
static inline bool fail(shape_ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof c->msg, fmt, ap);
    va_end(ap);
    return false;
}

static inline void fmt_sizes(const yg_ir_type *t, char *buf, size_t len) {
    size_t pos = 0;
    if (t->ndim == YG_IR_UNKNOWN) {
        snprintf(buf, len, "[*]");
        return;
    }
    pos += (size_t)snprintf(buf + pos, len - pos, "[");
    for (int32_t i = 0; i < t->ndim && pos < len; i++) {
        if (t->sizes[i] == YG_IR_UNKNOWN)
            pos += (size_t)snprintf(buf + pos, len - pos, "%s?", i ? ", " : "");
        else
            pos += (size_t)snprintf(
                buf + pos, len - pos, "%s%lld", i ? ", " : "", (long long)t->sizes[i]);
    }
    if (pos < len)
        snprintf(buf + pos, len - pos, "]");
}

/* The element count of a type whose sizes are all known, or -1 when it
 * does not fit in int64 (sizes come from text and may be anything). */
static inline int64_t known_numel(const yg_ir_type *t) {
    /* Checked, a 0 first (core/sizes.h): [36854775808, 0, 922337200, 3]
     * has 0 elements, not an overflow. */
    return yg__sizes_product(t->sizes, t->ndim);
}

/* Sets out's rank and sizes. */
static inline void set_sizes(yg_ir_type *out, int32_t ndim, const int64_t *sizes) {
    out->ndim = ndim;
    for (int32_t i = 0; i < ndim; i++)
        out->sizes[i] = sizes[i];
}

static inline void copy_sizes(yg_ir_type *out, const yg_ir_type *from) {
    out->ndim = from->ndim;
    for (int32_t i = 0; i < YG_MAX_DIMS; i++)
        out->sizes[i] = i < from->ndim ? from->sizes[i] : YG_IR_UNKNOWN;
}

/* Wraps dim for a tensor of rank ndim (known); false when out of range. */
/* Output 0's sizes from int-list attribute `name` (zeros' "size",
 * sum_to's "size"); left unknown when the attribute is absent, fails for
 * too many dims or a negative size. */
static inline bool sizes_from_attr(shape_ctx *c, const char *name) {
    int64_t size[YG_MAX_DIMS + 1];
    int32_t nd = 0;
    if (!yg__pass_ints_attr(c->n, name, size, YG_MAX_DIMS + 1, &nd))
        return true;
    if (nd > YG_MAX_DIMS)
        return fail(c, "%s has more than %d dims", name, YG_MAX_DIMS);
    for (int32_t i = 0; i < nd; i++) {
        if (size[i] < 0)
            return fail(c, "invalid size %lld", (long long)size[i]);
    }
    set_sizes(&c->out[0], nd, size);
    return true;
}

static inline bool wrap_dim(shape_ctx *c, int64_t *dim, int32_t ndim) {
    int32_t n = ndim > 0 ? ndim : 1;
    if (*dim < -n || *dim >= n)
        return fail(c, "dim %lld out of range for %d dims", (long long)*dim, ndim);
    if (*dim < 0)
        *dim += n;
    return true;
}

/* False (with a message) when input i's rank is known and not rank. */
static inline bool want_rank(shape_ctx *c, int32_t i, int32_t rank) {
    const yg_ir_type *t = in(c, i);
    if (t->ndim != YG_IR_UNKNOWN && t->ndim != rank) {
        char a[96];
        fmt_sizes(t, a, sizeof a);
        return fail(c, "expected input %d with %d dims, got %s", i, rank, a);
    }
    return true;
}

#endif /* YAGRAD_JIT_SHAPE_RULES_H */
