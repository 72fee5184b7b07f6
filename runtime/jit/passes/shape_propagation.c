/*
 * shape_propagation.c - computes each node's output dtype, device and
 * sizes from its input types, for the ops whose shape rule is simple.
 *
 * Rules are looked up by op name in one table (rules[] below), each entry
 * naming a rule function and what the output dtype is (the input's, bool,
 * int64).  Ops of kind "pointwise" in the op table that are not listed
 * broadcast their tensor inputs and promote their dtypes; in-place ops
 * (base name ending in '_') keep self's type.  An op with no rule keeps
 * whatever its outputs already say.  (The table belongs in
 * specs/native_functions.yaml as a `shape:` key once gen can emit it;
 * until then it is the one place to add an op's rule.)
 *
 * Unknown is a first-class answer: an unknown rank gives an unknown rank,
 * an unknown size gives an unknown size, and a rule never guesses.  What
 * a rule computes overwrites the output's type field by field; what it
 * cannot compute leaves the field as it was, so a type annotated in the
 * text survives where the inputs say less.  requires_grad is left to
 * requires_grad_propagation.
 *
 * Known sizes that cannot go together (mm of [2, 3] and [4, 5], a
 * broadcast of [2] with [3]) fail with YG_ERR_SHAPE naming the node: a
 * program that would fail at run time fails here first.
 *
 * Subgraph holders pass their input types into the subgraph (an owned
 * copy), propagate there and take the subgraph's output types.
 *
 * The pass has two files: this one (the driver and the core rules) and
 * shape_rules_nn.c (creation, random, list-returning, nn, conversion,
 * indexing and gradient ops), sharing shape_rules.h.  A rule marked
 * DT_RULE sets every output's dtype and device itself, which list
 * returns (any number of outputs) and creation ops (no input) need.
 */
#include "jit/passes/shape_rules.h"
#include "op_ids.h"

#include <stdio.h>
#include <string.h>

/* ---- rules ---- */

static bool rule_broadcast(shape_ctx *c) {
    bool first = true;
    for (int32_t i = 0; i < c->n->n_inputs; i++) {
        const yg_ir_type *t = in(c, i);
        if (t->kind != YG_IR_TYPE_TENSOR)
            continue;
        if (first) {
            copy_sizes(&c->out[0], t);
            first = false;
        } else if (!yg__pass_broadcast(&c->out[0], t)) {
            char a[96], b[96];
            fmt_sizes(in(c, 0), a, sizeof a);
            fmt_sizes(t, b, sizeof b);
            return fail(c, "cannot broadcast %s with %s (input %d)", a, b, i);
        }
    }
    return true;
}

static bool rule_same(shape_ctx *c) {
    copy_sizes(&c->out[0], in(c, 0));
    return true;
}

static bool rule_scalar(shape_ctx *c) {
    c->out[0].ndim = 0;
    return true;
}

/* Reductions over an int[] "dim" (empty or absent: every dim) or an int
 * "dim" (for the .dim overloads of max, min, argmax, argmin). */
static bool rule_reduce(shape_ctx *c) {
    const yg_ir_type *t = in(c, 0);
    int64_t dims[YG_MAX_DIMS + 1];
    int32_t nd = 0;
    bool keepdim = yg__pass_int_attr(c->n, "keepdim", 0) != 0;
    bool reduce[YG_MAX_DIMS] = {false};
    if (t->ndim == YG_IR_UNKNOWN)
        return true;
    if (yg__ir_node_attr(c->n, "dim") != NULL &&
        !yg__pass_ints_attr(c->n, "dim", dims, YG_MAX_DIMS + 1, &nd))
        return fail(c, "dim must be an int or a list of at most %d ints", YG_MAX_DIMS);
    for (int32_t i = 0; i < nd; i++) {
        if (!wrap_dim(c, &dims[i], t->ndim))
            return false;
        reduce[dims[i]] = true;
    }
    if (nd == 0) {
        for (int32_t i = 0; i < t->ndim; i++)
            reduce[i] = true;
    }
    int64_t sizes[YG_MAX_DIMS];
    int32_t out = 0;
    for (int32_t i = 0; i < t->ndim; i++) {
        if (!reduce[i])
            sizes[out++] = t->sizes[i];
        else if (keepdim)
            sizes[out++] = 1;
    }
    set_sizes(&c->out[0], out, sizes);
    if (c->n->n_outputs > 1)
        set_sizes(&c->out[1], out, sizes);
    return true;
}

/* var_mean: var and mean reduce the same dims, both in self's dtype. */
static bool rule_var_mean(shape_ctx *c) {
    for (int32_t i = 0; i < 2; i++) {
        c->out[i].dtype = in(c, 0)->dtype;
        c->out[i].device = in(c, 0)->device;
    }
    return rule_reduce(c);
}

/* Checks that inner dims k1 (of a) and k2 (of b) agree where known. */
static bool check_inner(shape_ctx *c, int64_t k1, int64_t k2) {
    if (k1 != YG_IR_UNKNOWN && k2 != YG_IR_UNKNOWN && k1 != k2) {
        char a[96], b[96];
        fmt_sizes(in(c, 0), a, sizeof a);
        fmt_sizes(in(c, 1), b, sizeof b);
        return fail(c, "cannot multiply %s by %s", a, b);
    }
    return true;
}

/* mm, addmm (operands at inputs first, first + 1), bmm, baddbmm. */
static bool matmul_2d_3d(shape_ctx *c, int32_t first, int32_t rank) {
    if (!want_rank(c, first, rank) || !want_rank(c, first + 1, rank))
        return false;
    const yg_ir_type *a = in(c, first), *b = in(c, first + 1);
    if (a->ndim == YG_IR_UNKNOWN || b->ndim == YG_IR_UNKNOWN) {
        if (a->ndim == YG_IR_UNKNOWN && b->ndim == YG_IR_UNKNOWN)
            return true;
        c->out[0].ndim = rank;
        for (int32_t i = 0; i < rank; i++)
            c->out[0].sizes[i] = YG_IR_UNKNOWN;
        if (a->ndim != YG_IR_UNKNOWN)
            for (int32_t i = 0; i < rank - 1; i++)
                c->out[0].sizes[i] = a->sizes[i];
        else
            c->out[0].sizes[rank - 1] = b->sizes[rank - 1];
        return true;
    }
    if (!check_inner(c, a->sizes[rank - 1], b->sizes[rank - 2]))
        return false;
    int64_t sizes[3];
    if (rank == 3) {
        int64_t ba = a->sizes[0], bb = b->sizes[0];
        if (ba != YG_IR_UNKNOWN && bb != YG_IR_UNKNOWN && ba != bb)
            return fail(c, "batch sizes differ: %lld and %lld", (long long)ba, (long long)bb);
        sizes[0] = ba != YG_IR_UNKNOWN ? ba : bb;
    }
    sizes[rank - 2] = a->sizes[rank - 2];
    sizes[rank - 1] = b->sizes[rank - 1];
    set_sizes(&c->out[0], rank, sizes);
    return true;
}

static bool rule_mm(shape_ctx *c) {
    return matmul_2d_3d(c, 0, 2);
}

static bool rule_addmm(shape_ctx *c) {
    return matmul_2d_3d(c, 1, 2);
}

static bool rule_bmm(shape_ctx *c) {
    return matmul_2d_3d(c, 0, 3);
}

static bool rule_baddbmm(shape_ctx *c) {
    return matmul_2d_3d(c, 1, 3);
}

static bool rule_mv(shape_ctx *c) {
    if (!want_rank(c, 0, 2) || !want_rank(c, 1, 1))
        return false;
    const yg_ir_type *a = in(c, 0), *b = in(c, 1);
    if (a->ndim == YG_IR_UNKNOWN)
        return true;
    if (b->ndim != YG_IR_UNKNOWN && !check_inner(c, a->sizes[1], b->sizes[0]))
        return false;
    set_sizes(&c->out[0], 1, a->sizes);
    return true;
}

static bool rule_outer(shape_ctx *c) {
    if (!want_rank(c, 0, 1) || !want_rank(c, 1, 1))
        return false;
    int64_t sizes[2] = {in(c, 0)->ndim == 1 ? in(c, 0)->sizes[0] : YG_IR_UNKNOWN,
                        in(c, 1)->ndim == 1 ? in(c, 1)->sizes[0] : YG_IR_UNKNOWN};
    set_sizes(&c->out[0], 2, sizes);
    return true;
}

static bool rule_dot(shape_ctx *c) {
    if (!want_rank(c, 0, 1) || !want_rank(c, 1, 1))
        return false;
    if (in(c, 0)->ndim == 1 && in(c, 1)->ndim == 1 &&
        !check_inner(c, in(c, 0)->sizes[0], in(c, 1)->sizes[0]))
        return false;
    c->out[0].ndim = 0;
    return true;
}

/* matmul: 1-D and 2-D as dot/mv/mm; batched with broadcast batch dims. */
static bool rule_matmul(shape_ctx *c) {
    const yg_ir_type *a = in(c, 0), *b = in(c, 1);
    if (a->ndim == YG_IR_UNKNOWN || b->ndim == YG_IR_UNKNOWN)
        return true;
    if (a->ndim == 0 || b->ndim == 0)
        return fail(c, "matmul needs at least 1-D inputs");
    int64_t ka = a->sizes[a->ndim - 1];
    int64_t kb = b->ndim == 1 ? b->sizes[0] : b->sizes[b->ndim - 2];
    if (!check_inner(c, ka, kb))
        return false;
    /* Batch dims: a without its last 2 (or 1) dims, b likewise. */
    yg_ir_type ba = yg_ir_type_tensor(), bb = yg_ir_type_tensor();
    ba.ndim = a->ndim >= 2 ? a->ndim - 2 : 0;
    bb.ndim = b->ndim >= 2 ? b->ndim - 2 : 0;
    for (int32_t i = 0; i < ba.ndim; i++)
        ba.sizes[i] = a->sizes[i];
    for (int32_t i = 0; i < bb.ndim; i++)
        bb.sizes[i] = b->sizes[i];
    if (!yg__pass_broadcast(&ba, &bb))
        return fail(c, "matmul batch dims do not broadcast");
    int64_t sizes[YG_MAX_DIMS];
    int32_t nd = 0;
    for (int32_t i = 0; i < ba.ndim; i++)
        sizes[nd++] = ba.sizes[i];
    if (a->ndim >= 2)
        sizes[nd++] = a->sizes[a->ndim - 2];
    if (b->ndim >= 2)
        sizes[nd++] = b->sizes[b->ndim - 1];
    if (nd > YG_MAX_DIMS)
        return fail(c, "matmul result has more than %d dims", YG_MAX_DIMS);
    set_sizes(&c->out[0], nd, sizes);
    return true;
}

static bool rule_linear(shape_ctx *c) {
    const yg_ir_type *x = in(c, 0), *w = in(c, 1);
    if (!want_rank(c, 1, 2))
        return false;
    if (x->ndim == YG_IR_UNKNOWN)
        return true;
    if (x->ndim == 0)
        return fail(c, "linear needs at least a 1-D input");
    if (w->ndim == 2 && !check_inner(c, x->sizes[x->ndim - 1], w->sizes[1]))
        return false;
    copy_sizes(&c->out[0], x);
    c->out[0].sizes[x->ndim - 1] = w->ndim == 2 ? w->sizes[0] : YG_IR_UNKNOWN;
    return true;
}

static bool rule_transpose(shape_ctx *c) {
    const yg_ir_type *t = in(c, 0);
    int64_t d0 = yg__pass_int_attr(c->n, "dim0", INT64_MIN);
    int64_t d1 = yg__pass_int_attr(c->n, "dim1", INT64_MIN);
    if (t->ndim == YG_IR_UNKNOWN || d0 == INT64_MIN || d1 == INT64_MIN)
        return true;
    if (!wrap_dim(c, &d0, t->ndim) || !wrap_dim(c, &d1, t->ndim))
        return false;
    copy_sizes(&c->out[0], t);
    if (t->ndim > 0) {
        c->out[0].sizes[d0] = t->sizes[d1];
        c->out[0].sizes[d1] = t->sizes[d0];
    }
    return true;
}

static bool rule_t(shape_ctx *c) {
    const yg_ir_type *t = in(c, 0);
    if (t->ndim == YG_IR_UNKNOWN)
        return true;
    if (t->ndim > 2)
        return fail(c, "t expects at most 2 dims, got %d", t->ndim);
    copy_sizes(&c->out[0], t);
    if (t->ndim == 2) {
        c->out[0].sizes[0] = t->sizes[1];
        c->out[0].sizes[1] = t->sizes[0];
    }
    return true;
}

static bool rule_permute(shape_ctx *c) {
    const yg_ir_type *t = in(c, 0);
    int64_t dims[YG_MAX_DIMS];
    int32_t nd = 0;
    bool seen[YG_MAX_DIMS] = {false};
    if (t->ndim == YG_IR_UNKNOWN || !yg__pass_ints_attr(c->n, "dims", dims, YG_MAX_DIMS, &nd))
        return true;
    if (nd != t->ndim)
        return fail(c, "permute of %d dims given %d dims", t->ndim, nd);
    for (int32_t i = 0; i < nd; i++) {
        if (!wrap_dim(c, &dims[i], t->ndim))
            return false;
        if (seen[dims[i]])
            return fail(c, "permute repeats dim %lld", (long long)dims[i]);
        seen[dims[i]] = true;
        c->out[0].sizes[i] = t->sizes[dims[i]];
    }
    c->out[0].ndim = nd;
    return true;
}

/* view / reshape: the size list, with one -1 inferred when the input's
 * element count is known. */
static bool view_like(shape_ctx *c, const char *attr) {
    const yg_ir_type *t = in(c, 0);
    int64_t size[YG_MAX_DIMS + 1];
    int32_t nd = 0, infer = -1;
    int64_t known = 1, rest[YG_MAX_DIMS];
    int32_t n_rest = 0;
    if (!yg__pass_ints_attr(c->n, attr, size, YG_MAX_DIMS + 1, &nd))
        return true;
    if (nd > YG_MAX_DIMS)
        return fail(c, "%s has more than %d dims", attr, YG_MAX_DIMS);
    for (int32_t i = 0; i < nd; i++) {
        if (size[i] == -1) {
            if (infer >= 0)
                return fail(c, "only one dim of %s may be -1", attr);
            infer = i;
        } else if (size[i] < 0) {
            return fail(c, "invalid size %lld in %s", (long long)size[i], attr);
        } else {
            rest[n_rest++] = size[i];
        }
    }
    /* Checked, a 0 first (core/sizes.h), as the view kernel counts. */
    known = yg__sizes_product(rest, n_rest);
    if (known < 0)
        return fail(c, "%s has too many elements", attr);
    int64_t numel = yg__pass_sizes_known(t) ? known_numel(t) : -1;
    if (infer >= 0) {
        size[infer] = numel >= 0 && known != 0 ? numel / known : YG_IR_UNKNOWN;
        if (numel >= 0 && known != 0 && numel % known != 0)
            return fail(c,
                        "cannot view %lld elements as a multiple of %lld",
                        (long long)numel,
                        (long long)known);
    } else if (numel >= 0 && numel != known) {
        return fail(c, "cannot view %lld elements as %lld", (long long)numel, (long long)known);
    }
    set_sizes(&c->out[0], nd, size);
    return true;
}

static bool rule_view(shape_ctx *c) {
    return view_like(c, "size");
}

static bool rule_reshape(shape_ctx *c) {
    return view_like(c, "shape");
}

static bool rule_expand(shape_ctx *c) {
    const yg_ir_type *t = in(c, 0);
    int64_t size[YG_MAX_DIMS + 1];
    int32_t nd = 0;
    if (!yg__pass_ints_attr(c->n, "size", size, YG_MAX_DIMS + 1, &nd))
        return true;
    if (nd > YG_MAX_DIMS)
        return fail(c, "size has more than %d dims", YG_MAX_DIMS);
    if (t->ndim != YG_IR_UNKNOWN && t->ndim > nd)
        return fail(c, "cannot expand %d dims to %d", t->ndim, nd);
    for (int32_t i = 0; i < nd; i++) {
        int32_t ti = t->ndim == YG_IR_UNKNOWN ? -1 : i - (nd - t->ndim);
        int64_t have = ti >= 0 ? t->sizes[ti] : (t->ndim == YG_IR_UNKNOWN ? YG_IR_UNKNOWN : 1);
        if (size[i] == -1) {
            if (ti < 0 && t->ndim != YG_IR_UNKNOWN)
                return fail(c, "-1 is not allowed for a new leading dim");
            size[i] = have;
        } else if (size[i] < 0) {
            return fail(c, "invalid size %lld", (long long)size[i]);
        } else if (have != YG_IR_UNKNOWN && have != 1 && have != size[i]) {
            return fail(c,
                        "cannot expand dim %d of size %lld to %lld",
                        i,
                        (long long)have,
                        (long long)size[i]);
        }
    }
    set_sizes(&c->out[0], nd, size);
    return true;
}

static bool rule_unsqueeze(shape_ctx *c) {
    const yg_ir_type *t = in(c, 0);
    int64_t dim = yg__pass_int_attr(c->n, "dim", INT64_MIN);
    if (t->ndim == YG_IR_UNKNOWN || dim == INT64_MIN)
        return true;
    if (t->ndim == YG_MAX_DIMS)
        return fail(c, "unsqueeze would give more than %d dims", YG_MAX_DIMS);
    if (!wrap_dim(c, &dim, t->ndim + 1))
        return false;
    int64_t sizes[YG_MAX_DIMS];
    for (int32_t i = 0, k = 0; i <= t->ndim; i++)
        sizes[i] = i == dim ? 1 : t->sizes[k++];
    set_sizes(&c->out[0], t->ndim + 1, sizes);
    return true;
}

static bool rule_squeeze(shape_ctx *c) {
    const yg_ir_type *t = in(c, 0);
    int64_t sizes[YG_MAX_DIMS];
    int32_t nd = 0;
    if (t->ndim == YG_IR_UNKNOWN)
        return true;
    if (yg__pass_is(c->n, YG_OP_squeeze_dim)) {
        int64_t dim = yg__pass_int_attr(c->n, "dim", INT64_MIN);
        if (dim == INT64_MIN)
            return true;
        if (!wrap_dim(c, &dim, t->ndim))
            return false;
        if (t->ndim > 0 && t->sizes[dim] == YG_IR_UNKNOWN)
            return true; /* whether it goes depends on the size */
        for (int32_t i = 0; i < t->ndim; i++) {
            if (i != dim || t->sizes[i] != 1)
                sizes[nd++] = t->sizes[i];
        }
    } else {
        for (int32_t i = 0; i < t->ndim; i++) {
            if (t->sizes[i] == YG_IR_UNKNOWN)
                return true;
            if (t->sizes[i] != 1)
                sizes[nd++] = t->sizes[i];
        }
    }
    set_sizes(&c->out[0], nd, sizes);
    return true;
}

static bool rule_flatten(shape_ctx *c) {
    const yg_ir_type *t = in(c, 0);
    int64_t s = yg__pass_int_attr(c->n, "start_dim", 0), e = yg__pass_int_attr(c->n, "end_dim", -1);
    if (t->ndim == YG_IR_UNKNOWN)
        return true;
    if (t->ndim == 0) {
        int64_t one = 1;
        set_sizes(&c->out[0], 1, &one);
        return true;
    }
    if (!wrap_dim(c, &s, t->ndim) || !wrap_dim(c, &e, t->ndim))
        return false;
    if (s > e)
        return fail(c, "start_dim %lld is after end_dim %lld", (long long)s, (long long)e);
    int64_t sizes[YG_MAX_DIMS], prod = 1;
    int32_t nd = 0;
    for (int32_t i = 0; i < t->ndim; i++) {
        if (i < s || i > e) {
            sizes[nd++] = t->sizes[i];
            continue;
        }
        if (prod != YG_IR_UNKNOWN &&
            (t->sizes[i] == YG_IR_UNKNOWN || __builtin_mul_overflow(prod, t->sizes[i], &prod)))
            prod = YG_IR_UNKNOWN;
        if (i == e)
            sizes[nd++] = prod;
    }
    set_sizes(&c->out[0], nd, sizes);
    return true;
}

/* select / narrow / slice: one dim shrinks or goes. */
static bool rule_select_slice(shape_ctx *c) {
    const yg_ir_type *t = in(c, 0);
    int64_t dim = yg__pass_int_attr(c->n, "dim", 0);
    if (t->ndim == YG_IR_UNKNOWN)
        return true;
    if (t->ndim == 0)
        return fail(c, "cannot index a 0-dim tensor");
    if (!wrap_dim(c, &dim, t->ndim))
        return false;
    copy_sizes(&c->out[0], t);
    int64_t size = t->sizes[dim];
    if (yg__pass_is(c->n, YG_OP_select)) {
        for (int32_t i = (int32_t)dim; i + 1 < t->ndim; i++)
            c->out[0].sizes[i] = t->sizes[i + 1];
        c->out[0].sizes[t->ndim - 1] = YG_IR_UNKNOWN;
        c->out[0].ndim = t->ndim - 1;
        return true;
    }
    int64_t len = YG_IR_UNKNOWN;
    if (yg__pass_is(c->n, YG_OP_narrow)) {
        len = yg__pass_int_attr(c->n, "length", YG_IR_UNKNOWN);
        if (len < YG_IR_UNKNOWN || (len == YG_IR_UNKNOWN && yg__ir_node_attr(c->n, "length")))
            return fail(c, "invalid length %lld", (long long)len);
    } else if (size != YG_IR_UNKNOWN) {
        int64_t start = yg__pass_int_attr(c->n, "start", 0);
        int64_t end = yg__pass_int_attr(c->n, "end", INT64_MAX);
        int64_t step = yg__pass_int_attr(c->n, "step", 1);
        if (step <= 0)
            return fail(c, "slice step must be positive, got %lld", (long long)step);
        if (start < 0)
            start = start + size < 0 ? 0 : start + size;
        if (end < 0)
            end = end + size < 0 ? 0 : end + size;
        if (start > size)
            start = size;
        if (end > size)
            end = size;
        len = end > start ? 1 + (end - start - 1) / step : 0;
    }
    c->out[0].sizes[dim] = len;
    return true;
}

/* cat / stack over a variadic tensor list. */
static bool rule_cat_stack(shape_ctx *c) {
    bool stack = yg__pass_is(c->n, YG_OP_stack);
    int64_t dim = yg__pass_int_attr(c->n, "dim", 0);
    int32_t rank = YG_IR_UNKNOWN;
    for (int32_t i = 0; i < c->n->n_inputs; i++) {
        if (in(c, i)->ndim != YG_IR_UNKNOWN &&
            !(!stack && in(c, i)->ndim == 1 && in(c, i)->sizes[0] == 0)) {
            rank = in(c, i)->ndim;
            break;
        }
    }
    if (rank == YG_IR_UNKNOWN || c->n->n_inputs == 0)
        return true;
    if (stack && rank == YG_MAX_DIMS)
        return fail(c, "stack would give more than %d dims", YG_MAX_DIMS);
    if (!wrap_dim(c, &dim, stack ? rank + 1 : rank))
        return false;
    int64_t sizes[YG_MAX_DIMS], total = 0;
    for (int32_t k = 0; k < rank; k++)
        sizes[k] = YG_IR_UNKNOWN;
    for (int32_t i = 0; i < c->n->n_inputs; i++) {
        const yg_ir_type *t = in(c, i);
        if (t->ndim == YG_IR_UNKNOWN) {
            total = YG_IR_UNKNOWN;
            continue;
        }
        if (!stack && t->ndim == 1 && t->sizes[0] == 0 && rank != 1)
            continue; /* cat skips empty 1-D tensors */
        if (t->ndim != rank)
            return fail(c, "input %d has %d dims, expected %d", i, t->ndim, rank);
        for (int32_t k = 0; k < rank; k++) {
            if (!stack && k == dim)
                continue;
            if (t->sizes[k] == YG_IR_UNKNOWN)
                continue;
            if (sizes[k] != YG_IR_UNKNOWN && sizes[k] != t->sizes[k])
                return fail(c,
                            "input %d has size %lld at dim %d, expected %lld",
                            i,
                            (long long)t->sizes[k],
                            k,
                            (long long)sizes[k]);
            sizes[k] = t->sizes[k];
        }
        if (!stack && total != YG_IR_UNKNOWN &&
            (t->sizes[dim] == YG_IR_UNKNOWN ||
             __builtin_add_overflow(total, t->sizes[dim], &total)))
            total = YG_IR_UNKNOWN;
    }
    if (stack) {
        int64_t out[YG_MAX_DIMS];
        for (int32_t i = 0, k = 0; i <= rank; i++)
            out[i] = i == dim ? c->n->n_inputs : sizes[k++];
        set_sizes(&c->out[0], rank + 1, out);
    } else {
        sizes[dim] = total;
        set_sizes(&c->out[0], rank, sizes);
    }
    return true;
}

static bool rule_sum_to(shape_ctx *c) {
    return sizes_from_attr(c, "size");
}

static bool rule_embedding(shape_ctx *c) {
    const yg_ir_type *w = in(c, 0), *idx = in(c, 1);
    if (!want_rank(c, 0, 2) || idx->ndim == YG_IR_UNKNOWN)
        return true;
    if (idx->ndim == YG_MAX_DIMS)
        return fail(c, "embedding result would have more than %d dims", YG_MAX_DIMS);
    copy_sizes(&c->out[0], idx);
    c->out[0].sizes[idx->ndim] = w->ndim == 2 ? w->sizes[1] : YG_IR_UNKNOWN;
    c->out[0].ndim = idx->ndim + 1;
    return true;
}

/* Losses: reduction "none" keeps the elementwise shape, "mean" (the
 * default) and "sum" give a scalar; a bad value is the op's error. */
static bool rule_loss(shape_ctx *c) {
    const yg_ir_attr *r = yg__ir_node_attr(c->n, "reduction");
    if (r == NULL || r->kind != YG_IR_ATTR_STR)
        return r == NULL ? rule_scalar(c) : true;
    if (strcmp(r->u.s, "none") != 0)
        return strcmp(r->u.s, "mean") == 0 || strcmp(r->u.s, "sum") == 0 ? rule_scalar(c) : true;
    if (yg__pass_is(c->n, YG_OP_nll_loss) || yg__pass_is(c->n, YG_OP_cross_entropy)) {
        const yg_ir_type *t = in(c, 0);
        if (t->ndim == YG_IR_UNKNOWN)
            return true;
        if (t->ndim == 1)
            return rule_scalar(c);
        set_sizes(&c->out[0], 1, t->sizes);
        return true;
    }
    return rule_broadcast(c);
}

static const shape_rule rules[] = {
    {YG_OP_eq, rule_broadcast, DT_BOOL},
    {YG_OP_ne, rule_broadcast, DT_BOOL},
    {YG_OP_lt, rule_broadcast, DT_BOOL},
    {YG_OP_le, rule_broadcast, DT_BOOL},
    {YG_OP_gt, rule_broadcast, DT_BOOL},
    {YG_OP_ge, rule_broadcast, DT_BOOL},
    {YG_OP_eq_scalar, rule_same, DT_BOOL},
    {YG_OP_ne_scalar, rule_same, DT_BOOL},
    {YG_OP_lt_scalar, rule_same, DT_BOOL},
    {YG_OP_le_scalar, rule_same, DT_BOOL},
    {YG_OP_gt_scalar, rule_same, DT_BOOL},
    {YG_OP_ge_scalar, rule_same, DT_BOOL},
    {YG_OP_logical_and, rule_broadcast, DT_BOOL},
    {YG_OP_logical_or, rule_broadcast, DT_BOOL},
    {YG_OP_logical_xor, rule_broadcast, DT_BOOL},
    {YG_OP_logical_not, rule_same, DT_BOOL},
    {YG_OP_sum, rule_scalar, DT_SUM},
    {YG_OP_mean, rule_scalar, DT_SAME},
    {YG_OP_prod, rule_scalar, DT_SAME},
    {YG_OP_max, rule_scalar, DT_SAME},
    {YG_OP_min, rule_scalar, DT_SAME},
    {YG_OP_all, rule_scalar, DT_BOOL},
    {YG_OP_any, rule_scalar, DT_BOOL},
    {YG_OP_argmax, rule_scalar, DT_INT64},
    {YG_OP_argmin, rule_scalar, DT_INT64},
    {YG_OP_sum_dim, rule_reduce, DT_SUM},
    {YG_OP_mean_dim, rule_reduce, DT_SAME},
    {YG_OP_prod_dim, rule_reduce, DT_SAME},
    {YG_OP_amax, rule_reduce, DT_SAME},
    {YG_OP_amin, rule_reduce, DT_SAME},
    {YG_OP_var, rule_reduce, DT_SAME},
    {YG_OP_std, rule_reduce, DT_SAME},
    {YG_OP_norm, rule_reduce, DT_SAME},
    {YG_OP_logsumexp, rule_reduce, DT_SAME},
    {YG_OP_all_dim, rule_reduce, DT_BOOL},
    {YG_OP_any_dim, rule_reduce, DT_BOOL},
    {YG_OP_argmax_dim, rule_reduce, DT_INT64},
    {YG_OP_argmin_dim, rule_reduce, DT_INT64},
    {YG_OP_max_dim, rule_reduce, DT_SAME}, /* indices: int64, set by the driver */
    {YG_OP_min_dim, rule_reduce, DT_SAME},
    {YG_OP_var_mean, rule_var_mean, DT_RULE},
    {YG_OP_div_mode, rule_broadcast, DT_PROMOTE}, /* div, then trunc or floor */
    {YG_OP_mm, rule_mm, DT_SAME},
    {YG_OP_addmm, rule_addmm, DT_SAME},
    {YG_OP_bmm, rule_bmm, DT_SAME},
    {YG_OP_baddbmm, rule_baddbmm, DT_SAME},
    {YG_OP_matmul, rule_matmul, DT_SAME},
    {YG_OP_mv, rule_mv, DT_SAME},
    {YG_OP_dot, rule_dot, DT_SAME},
    {YG_OP_outer, rule_outer, DT_SAME},
    {YG_OP_linear, rule_linear, DT_SAME},
    {YG_OP_transpose, rule_transpose, DT_SAME},
    {YG_OP_t, rule_t, DT_SAME},
    {YG_OP_permute, rule_permute, DT_SAME},
    {YG_OP_view, rule_view, DT_SAME},
    {YG_OP_reshape, rule_reshape, DT_SAME},
    {YG_OP_expand, rule_expand, DT_SAME},
    {YG_OP_unsqueeze, rule_unsqueeze, DT_SAME},
    {YG_OP_squeeze, rule_squeeze, DT_SAME},
    {YG_OP_squeeze_dim, rule_squeeze, DT_SAME},
    {YG_OP_flatten, rule_flatten, DT_SAME},
    {YG_OP_select, rule_select_slice, DT_SAME},
    {YG_OP_slice, rule_select_slice, DT_SAME},
    {YG_OP_narrow, rule_select_slice, DT_SAME},
    {YG_OP_cat, rule_cat_stack, DT_SAME},
    {YG_OP_stack, rule_cat_stack, DT_SAME},
    {YG_OP_sum_to, rule_sum_to, DT_SAME},
    {YG_OP_clone, rule_same, DT_SAME},
    {YG_OP_contiguous, rule_same, DT_SAME},
    {YG_OP_softmax, rule_same, DT_SAME},
    {YG_OP_log_softmax, rule_same, DT_SAME},
    {YG_OP_softmax_backward, rule_same, DT_SAME},
    {YG_OP_log_softmax_backward, rule_same, DT_SAME},
    {YG_OP_cumsum, rule_same, DT_SAME},
    {YG_OP_cumprod, rule_same, DT_SAME},
    {YG_OP_tril, rule_same, DT_SAME},
    {YG_OP_triu, rule_same, DT_SAME},
    {YG_OP_flip, rule_same, DT_SAME},
    {YG_OP_layer_norm, rule_same, DT_SAME},
    {YG_OP_group_norm, rule_same, DT_SAME},
    {YG_OP_embedding, rule_embedding, DT_SAME},
    {YG_OP_mse_loss, rule_loss, DT_SAME},
    {YG_OP_l1_loss, rule_loss, DT_SAME},
    {YG_OP_smooth_l1_loss, rule_loss, DT_SAME},
    {YG_OP_binary_cross_entropy, rule_loss, DT_SAME},
    {YG_OP_binary_cross_entropy_with_logits, rule_loss, DT_SAME},
    {YG_OP_nll_loss, rule_loss, DT_SAME},
    {YG_OP_cross_entropy, rule_loss, DT_SAME},
};

static const shape_rule *find_rule(const yg_ir_node *n) {
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        if (yg__pass_is(n, rules[i].op))
            return &rules[i];
    }
    for (size_t i = 0; i < yg__shape_rules_nn_len; i++) {
        if (yg__pass_is(n, yg__shape_rules_nn[i].op))
            return &yg__shape_rules_nn[i];
    }
    return NULL;
}

static bool is_inplace(const yg_ir_node *n) {
    const char *dot = strchr(n->kind, '.');
    size_t base = dot != NULL ? (size_t)(dot - n->kind) : strlen(n->kind);
    return base > 0 && n->kind[base - 1] == '_';
}

/* The dtype of the first tensor input, or the promotion of all of them
 * (promote), or unknown. */
static int32_t input_dtype(const yg_ir_node *n, bool promote) {
    int32_t d = YG_IR_UNKNOWN;
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const yg_ir_type *t = &n->inputs[i]->type;
        if (t->kind != YG_IR_TYPE_TENSOR)
            continue;
        if (t->dtype == YG_IR_UNKNOWN)
            return YG_IR_UNKNOWN;
        d = d == YG_IR_UNKNOWN ? t->dtype
                               : (int32_t)yg__promote_types((yg_dtype)d, (yg_dtype)t->dtype);
        if (!promote)
            return d;
    }
    return d;
}

static int32_t input_device(const yg_ir_node *n) {
    for (int32_t i = 0; i < n->n_inputs; i++) {
        if (n->inputs[i]->type.kind == YG_IR_TYPE_TENSOR)
            return n->inputs[i]->type.device;
    }
    return YG_IR_UNKNOWN;
}

/* Writes what was computed into v's type, keeping what it cannot say. */
static void merge(yg_ir_value *v, const yg_ir_type *c) {
    yg_ir_type *t = &v->type;
    if (t->kind != YG_IR_TYPE_TENSOR)
        return;
    if (c->dtype != YG_IR_UNKNOWN)
        t->dtype = c->dtype;
    if (c->device != YG_IR_UNKNOWN)
        t->device = c->device;
    if (c->ndim != YG_IR_UNKNOWN) {
        bool same_rank = t->ndim == c->ndim;
        for (int32_t i = 0; i < c->ndim; i++) {
            if (c->sizes[i] != YG_IR_UNKNOWN || !same_rank)
                t->sizes[i] = c->sizes[i];
        }
        for (int32_t i = c->ndim; i < YG_MAX_DIMS; i++)
            t->sizes[i] = YG_IR_UNKNOWN;
        t->ndim = c->ndim;
    }
}

static yg_status propagate(yg_graph *g, int depth);

static yg_status node_fail(const yg_ir_node *n, yg_status st, const char *msg) {
    char desc[160];
    yg__ir_node_describe(n, desc, sizeof desc);
    return yg__fail(st, "propagate_shapes: %s: %s: %s", desc, n->kind, msg);
}

static yg_status propagate_holder(yg_ir_node *n, int depth) {
    for (int32_t k = 0; k < n->n_attrs; k++) {
        yg_ir_attr *a = &n->attrs[k];
        if (a->kind != YG_IR_ATTR_GRAPH || strcmp(a->name, "df") == 0)
            continue;
        yg_graph *sub = a->u.g;
        if (sub->param->n_outputs != n->n_inputs || sub->ret->n_inputs != n->n_outputs)
            continue;
        for (int32_t i = 0; i < n->n_inputs; i++)
            merge(sub->param->outputs[i], &n->inputs[i]->type);
        yg_status st = propagate(sub, depth + 1);
        if (st != YG_OK) {
            char desc[160];
            yg__ir_node_describe(n, desc, sizeof desc);
            return yg__fail_prefix(st, desc);
        }
        for (int32_t i = 0; i < n->n_outputs; i++)
            merge(n->outputs[i], &sub->ret->inputs[i]->type);
    }
    return YG_OK;
}

static yg_status propagate_node(yg_ir_node *n, int depth) {
    if (n->kind == yg__prim_constant) {
        const yg_ir_attr *a = yg__ir_node_attr(n, "value");
        if (a == NULL || a->kind != YG_IR_ATTR_TENSOR)
            return YG_OK;
        yg_ir_type t = yg_ir_type_tensor();
        t.dtype = (int32_t)a->u.t->dtype;
        t.device = YG_CPU;
        t.ndim = a->u.t->ndim;
        for (int32_t i = 0; i < t.ndim; i++)
            t.sizes[i] = a->u.t->sizes[i];
        merge(n->outputs[0], &t);
        return YG_OK;
    }
    if (n->kind == yg__prim_fusion_group || n->kind == yg__prim_diff_graph)
        return depth < 256 ? propagate_holder(n, depth) : YG_OK;
    if (n->op == NULL || n->n_outputs == 0 || n->n_outputs > YG_SHAPE_MAX_OUTPUTS)
        return YG_OK;
    const shape_rule *r = find_rule(n);
    if (n->n_outputs > 2 && (r == NULL || r->dtype != DT_RULE))
        return YG_OK;
    shape_ctx c;
    c.n = n;
    c.msg[0] = '\0';
    for (int32_t i = 0; i < n->n_outputs; i++)
        c.out[i] = yg_ir_type_tensor();
    bool ok = true;
    int32_t dtype;
    if (is_inplace(n) && n->n_inputs > 0) {
        ok = rule_same(&c);
        dtype = input_dtype(n, false);
    } else if (r != NULL) {
        ok = r->fn(&c); /* a DT_RULE rule sets dtypes: dtype is unused */
        dtype = r->dtype == DT_BOOL    ? YG_BOOL
                : r->dtype == DT_INT64 ? YG_INT64
                                       : input_dtype(n, r->dtype == DT_PROMOTE);
        if (r->dtype == DT_SUM && (dtype == YG_BOOL || dtype == YG_INT32 || dtype == YG_INT64))
            dtype = YG_INT64;
    } else if (n->op->kind == YG_OP_KIND_POINTWISE) {
        ok = rule_broadcast(&c);
        dtype = input_dtype(n, true);
    } else {
        return YG_OK;
    }
    if (!ok)
        return node_fail(n, YG_ERR_SHAPE, c.msg);
    /* A DT_RULE rule has set every output's dtype and device itself. */
    bool own_dtypes = r != NULL && r->dtype == DT_RULE && !is_inplace(n);
    if (!own_dtypes) {
        c.out[0].dtype = dtype;
        c.out[0].device = input_device(n);
    }
    if (n->n_outputs == 2 && !own_dtypes) {
        c.out[1].dtype = YG_INT64; /* max.dim / min.dim indices */
        c.out[1].device = c.out[0].device;
    }
    for (int32_t i = 0; i < n->n_outputs; i++) {
        /* A rule that lets a hostile attribute through (a size below -1)
         * is a bug here, reported rather than written into the graph. */
        if (!yg__ir_type_valid(&c.out[i]))
            return node_fail(n, YG_ERR_INTERNAL, "the shape rule computed an invalid type");
    }
    for (int32_t i = 0; i < n->n_outputs; i++)
        merge(n->outputs[i], &c.out[i]);
    return YG_OK;
}

yg_status yg__shape_propagate_node(yg_ir_node *n) {
    return propagate_node(n, 0);
}

static yg_status propagate(yg_graph *g, int depth) {
    for (yg_ir_node *n = g->first; n != NULL; n = n->next)
        YG_RETURN_IF_ERROR(propagate_node(n, depth));
    return YG_OK;
}

yg_status yg_graph_propagate_shapes(yg_graph *g) {
    if (g == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "propagate_shapes: graph is NULL");
    YG_RETURN_IF_ERROR(propagate(g, 0));
    return yg__ir_check_after_pass(g, "propagate_shapes");
}
