/*
 * shape_rules_nn.c - the second half of the shape propagation pass: rules
 * for creation ops (sizes and dtype from attributes), *_like and random
 * ops, list-returning ops (one output per piece), batch_norm, pooling
 * (max with indices, average, adaptive), resampling, padding, dtype conversion and advanced indexing.  The
 * driver (shape_propagation.c) looks these up after its own table; the
 * same principles hold: a rule is exact or leaves a field unknown, and
 * known sizes that cannot go together fail.
 *
 * Most rules here are DT_RULE: they set each output's dtype and device,
 * since a creation op has no input to take them from and a conversion
 * takes its dtype from an attribute.
 */
#include "jit/passes/shape_rules.h"
#include "op_ids.h"

#include <math.h>
#include <string.h>

/* ---- attribute readers ---- */

/* A ScalarType attribute: absent gives dflt; an int naming a dtype or a
 * str naming one gives it; anything else unknown. */
static int32_t dtype_attr(const shape_ctx *c, const char *name, int32_t dflt) {
    const yg_ir_attr *a = yg__ir_node_attr(c->n, name);
    if (a == NULL)
        return dflt;
    if (a->kind == YG_IR_ATTR_INT)
        return a->u.i >= 0 && a->u.i < YG_DTYPE_COUNT_ ? (int32_t)a->u.i : YG_IR_UNKNOWN;
    if (a->kind == YG_IR_ATTR_STR) {
        for (int32_t d = 0; d < YG_DTYPE_COUNT_; d++) {
            if (strcmp(a->u.s, yg_dtype_name((yg_dtype)d)) == 0)
                return d;
        }
    }
    return YG_IR_UNKNOWN;
}

/* The Device attribute "device": absent gives dflt. */
static int32_t device_attr(const shape_ctx *c, int32_t dflt) {
    const yg_ir_attr *a = yg__ir_node_attr(c->n, "device");
    if (a == NULL)
        return dflt;
    if (a->kind == YG_IR_ATTR_INT && a->u.i >= 0 && a->u.i < YG_DEVICE_COUNT_)
        return (int32_t)a->u.i;
    return YG_IR_UNKNOWN;
}

/* A Scalar attribute as a double: false when absent or not a number. */
static bool scalar_attr(const shape_ctx *c, const char *name, double *v) {
    const yg_ir_attr *a = yg__ir_node_attr(c->n, name);
    if (a != NULL && a->kind == YG_IR_ATTR_INT) {
        *v = (double)a->u.i;
        return true;
    }
    if (a != NULL && a->kind == YG_IR_ATTR_FLOAT) {
        *v = a->u.f;
        return true;
    }
    return false;
}

/* Every output gets dtype and device. */
static void set_all(shape_ctx *c, int32_t dtype, int32_t device) {
    for (int32_t i = 0; i < c->n->n_outputs; i++) {
        c->out[i].dtype = dtype;
        c->out[i].device = device;
    }
}

/* ---- creation ---- */

/* zeros, ones, full, empty, rand, randn, randint: sizes from "size". */
static bool sized_creation(shape_ctx *c, int32_t default_dtype) {
    set_all(c, dtype_attr(c, "dtype", default_dtype), device_attr(c, YG_CPU));
    return sizes_from_attr(c, "size");
}

static bool rule_float_creation(shape_ctx *c) {
    return sized_creation(c, YG_FLOAT32);
}

static bool rule_randint(shape_ctx *c) {
    return sized_creation(c, YG_INT64);
}

static bool is_integral(double v) {
    return isfinite(v) && floor(v) == v;
}

/* arange, arange.start: int64 when start, end and step are integral (as
 * the kernel decides), float32 otherwise; length ceil((end - start) /
 * step), computed as the kernel does.  Bounds the kernel refuses leave
 * the length unknown. */
static bool rule_arange(shape_ctx *c) {
    double start = 0, end = 0, step = 1;
    bool known = scalar_attr(c, "end", &end);
    if (yg__ir_node_attr(c->n, "start") != NULL)
        known = scalar_attr(c, "start", &start) && known;
    if (yg__ir_node_attr(c->n, "step") != NULL)
        known = scalar_attr(c, "step", &step) && known;
    int32_t dflt = !known                                                        ? YG_IR_UNKNOWN
                   : is_integral(start) && is_integral(end) && is_integral(step) ? YG_INT64
                                                                                 : YG_FLOAT32;
    set_all(c, dtype_attr(c, "dtype", dflt), device_attr(c, YG_CPU));
    int64_t len = YG_IR_UNKNOWN;
    if (known && isfinite(start) && isfinite(end) && isfinite(step) && step != 0 &&
        !(step > 0 && end < start) && !(step < 0 && end > start)) {
        double n = ceil((end - start) / step);
        if (n < 4611686018427387904.0)
            len = (int64_t)n;
    }
    set_sizes(&c->out[0], 1, &len);
    return true;
}

static bool rule_linspace(shape_ctx *c) {
    int64_t steps = yg__pass_int_attr(c->n, "steps", -1);
    set_all(c, dtype_attr(c, "dtype", YG_FLOAT32), device_attr(c, YG_CPU));
    if (steps >= 0)
        set_sizes(&c->out[0], 1, &steps);
    return true;
}

/* eye [n, n], eye.m [n, m]; a negative count leaves that size unknown. */
static bool rule_eye(shape_ctx *c) {
    int64_t n = yg__pass_int_attr(c->n, "n", -1);
    int64_t sizes[2] = {n,
                        yg__ir_node_attr(c->n, "m") != NULL ? yg__pass_int_attr(c->n, "m", -1) : n};
    set_all(c, dtype_attr(c, "dtype", YG_FLOAT32), device_attr(c, YG_CPU));
    for (int32_t i = 0; i < 2; i++)
        sizes[i] = sizes[i] >= 0 ? sizes[i] : YG_IR_UNKNOWN;
    set_sizes(&c->out[0], 2, sizes);
    return true;
}

/* zeros_like and the rest: self's sizes; dtype and device from the
 * attributes, else self's. */
static bool rule_like(shape_ctx *c) {
    const yg_ir_type *t = in(c, 0);
    copy_sizes(&c->out[0], t);
    set_all(c, dtype_attr(c, "dtype", t->dtype), device_attr(c, t->device));
    return true;
}

/* ---- conversion ---- */

/* to_copy, to.dtype: self's sizes and device, dtype from "dtype". */
static bool rule_to_dtype(shape_ctx *c) {
    copy_sizes(&c->out[0], in(c, 0));
    set_all(c, dtype_attr(c, "dtype", YG_IR_UNKNOWN), in(c, 0)->device);
    return true;
}

/* type_as: self's sizes and device, other's dtype. */
static bool rule_type_as(shape_ctx *c) {
    copy_sizes(&c->out[0], in(c, 0));
    set_all(c, in(c, 1)->dtype, in(c, 0)->device);
    return true;
}

/* ---- list returns: one output per piece ---- */

/* split, split_with_sizes, chunk, unbind: every piece is self with the
 * size of dim replaced (unbind: removed).  The number of pieces the sizes
 * give must be the node's output count. */
static bool rule_pieces(shape_ctx *c) {
    const yg_ir_type *t = in(c, 0);
    int32_t n_out = c->n->n_outputs;
    int64_t dim = yg__pass_int_attr(c->n, "dim", 0);
    bool unbind = yg__pass_is(c->n, YG_OP_unbind);
    set_all(c, t->dtype, t->device);
    if (t->ndim == YG_IR_UNKNOWN)
        return true;
    if (t->ndim == 0)
        return fail(c, "cannot split a 0-dim tensor");
    if (!wrap_dim(c, &dim, t->ndim))
        return false;
    int64_t size = t->sizes[dim];
    int64_t piece[YG_SHAPE_MAX_OUTPUTS];
    int32_t count = -1; /* pieces the sizes give, -1 when unknown */
    for (int32_t i = 0; i < n_out; i++)
        piece[i] = YG_IR_UNKNOWN;
    if (unbind) {
        count = size == YG_IR_UNKNOWN ? -1 : (size > n_out ? n_out + 1 : (int32_t)size);
    } else if (yg__pass_is(c->n, YG_OP_split_with_sizes)) {
        int64_t sizes[YG_SHAPE_MAX_OUTPUTS + 1];
        int32_t len = 0;
        if (!yg__pass_ints_attr(c->n, "split_sizes", sizes, YG_SHAPE_MAX_OUTPUTS + 1, &len))
            return true;
        int64_t total = 0;
        for (int32_t i = 0; i < len; i++) {
            if (sizes[i] < 0)
                return fail(c, "invalid split size %lld", (long long)sizes[i]);
            if (__builtin_add_overflow(total, sizes[i], &total))
                return fail(c, "split sizes overflow");
            if (i < n_out)
                piece[i] = sizes[i];
        }
        if (size != YG_IR_UNKNOWN && total != size)
            return fail(c,
                        "split sizes sum to %lld, but dim %lld has size %lld",
                        (long long)total,
                        (long long)dim,
                        (long long)size);
        count = len;
    } else {
        bool chunk = yg__pass_is(c->n, YG_OP_chunk);
        int64_t k = yg__pass_int_attr(c->n, chunk ? "chunks" : "split_size", 0);
        if (k <= 0 || (chunk && size == 0))
            return true; /* refused or an edge case: left to the op */
        /* ceil(size / k) without overflow (sizes may be near INT64_MAX) */
        int64_t each = chunk && size != YG_IR_UNKNOWN ? size / k + (size % k != 0) : k;
        if (size != YG_IR_UNKNOWN) {
            int64_t pieces = size / each + (size % each != 0);
            if (pieces == 0)
                pieces = 1; /* a dim of size 0: one empty piece */
            count = pieces > n_out ? n_out + 1 : (int32_t)pieces;
            for (int32_t i = 0; count == n_out && i < n_out; i++) {
                int64_t left = size - (int64_t)i * each; /* i < pieces: no overflow */
                piece[i] = left < each ? left : each;
            }
        } else if (!chunk) {
            /* every piece but the last has split_size elements */
            for (int32_t i = 0; i + 1 < n_out; i++)
                piece[i] = each;
        }
    }
    if (count >= 0 && count != n_out)
        return fail(c,
                    "gives %s%d pieces, the node has %d outputs",
                    count > n_out ? "more than " : "",
                    count > n_out ? n_out : count,
                    n_out);
    for (int32_t i = 0; i < n_out; i++) {
        copy_sizes(&c->out[i], t);
        if (!unbind) {
            c->out[i].sizes[dim] = piece[i];
            continue;
        }
        for (int32_t j = (int32_t)dim; j + 1 < t->ndim; j++)
            c->out[i].sizes[j] = t->sizes[j + 1];
        c->out[i].sizes[t->ndim - 1] = YG_IR_UNKNOWN;
        c->out[i].ndim = t->ndim - 1;
    }
    return true;
}

/* ---- nn ---- */

/* batch_norm: input's type; input [N, C, *] and every given per-channel
 * tensor [C]. */
static bool rule_batch_norm(shape_ctx *c) {
    const yg_ir_type *x = in(c, 0);
    copy_sizes(&c->out[0], x);
    set_all(c, x->dtype, x->device);
    if (x->ndim == YG_IR_UNKNOWN)
        return true;
    if (x->ndim < 2)
        return fail(c, "batch_norm expects input [N, C, *], got %d dims", x->ndim);
    for (int32_t i = 1; i < c->n->n_inputs; i++) {
        const yg_ir_type *t = in(c, i);
        if (t->kind != YG_IR_TYPE_TENSOR || t->ndim == YG_IR_UNKNOWN)
            continue;
        if (t->ndim != 1 || (t->sizes[0] != YG_IR_UNKNOWN && x->sizes[1] != YG_IR_UNKNOWN &&
                             t->sizes[0] != x->sizes[1])) {
            char a[96], b[96];
            fmt_sizes(x, a, sizeof a);
            fmt_sizes(t, b, sizeof b);
            return fail(c, "input %d is %s, expected [C] for input %s", i, b, a);
        }
    }
    return true;
}

/* One or two window parameters (len 0 takes dflt). */
static bool
window_pair(const shape_ctx *c, const char *name, int32_t n, const int64_t *dflt, int64_t *v) {
    int64_t buf[3];
    int32_t len = 0;
    if (yg__ir_node_attr(c->n, name) == NULL || !yg__pass_ints_attr(c->n, name, buf, 3, &len))
        len = 0;
    if (len == 0 && dflt != NULL) {
        for (int32_t i = 0; i < n; i++)
            v[i] = dflt[i];
        return true;
    }
    if (len < 1 || len > n)
        return false;
    for (int32_t i = 0; i < n; i++)
        v[i] = buf[len == n ? i : 0];
    return true;
}

/* The pooled size, as runtime/cpu/pool.c computes it; -1 when the
 * arithmetic would overflow (hostile attributes). */
static int64_t pooled(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
    int64_t span, reach, pad2, inp;
    if (__builtin_mul_overflow(d, k - 1, &reach) || __builtin_mul_overflow(p, 2, &pad2) ||
        __builtin_add_overflow(in, pad2, &span) || __builtin_sub_overflow(span, reach, &span) ||
        __builtin_sub_overflow(span, 1, &span) || __builtin_add_overflow(in, p, &inp))
        return -1;
    if (span < 0)
        return 0;
    if (ceil_mode && __builtin_add_overflow(span, s - 1, &span))
        return -1;
    int64_t n = span / s + 1;
    if (ceil_mode && (n - 1) * s >= inp)
        n--;
    return n;
}

/* The spatial dims a pooling op works on, from its name: 1, 2 or 3. */
static int32_t pool_dims(const shape_ctx *c) {
    if (strstr(c->n->kind, "pool1d") != NULL)
        return 1;
    return strstr(c->n->kind, "pool3d") != NULL ? 3 : 2;
}

/* max_pool1d/2d/3d (and *_with_indices: int64 indices of the same
 * sizes), avg_pool1d/2d/3d: the last 1, 2 or 3 dims pooled.  Window
 * arguments the kernel refuses, or an input too small, leave those sizes
 * unknown (the kernel's message says why at run time). */
static bool rule_max_pool(shape_ctx *c) {
    const yg_ir_type *x = in(c, 0);
    int32_t n = pool_dims(c);
    set_all(c, x->dtype, x->device);
    if (c->n->n_outputs == 2)
        c->out[1].dtype = YG_INT64;
    if (x->ndim == YG_IR_UNKNOWN)
        return true;
    if (x->ndim != n + 1 && x->ndim != n + 2)
        return fail(c, "expected input with %d or %d dims, got %d", n + 1, n + 2, x->ndim);
    int64_t k[3], s[3], p[3], d[3];
    static const int64_t zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
    bool ok = window_pair(c, "kernel_size", n, NULL, k) && window_pair(c, "stride", n, k, s) &&
              window_pair(c, "padding", n, zero, p) && window_pair(c, "dilation", n, one, d);
    bool ceil_mode = yg__pass_int_attr(c->n, "ceil_mode", 0) != 0;
    for (int32_t i = 0; ok && i < n; i++)
        ok = k[i] >= 1 && s[i] >= 1 && p[i] >= 0 && d[i] >= 1 && p[i] <= k[i] / 2;
    for (int32_t o = 0; o < c->n->n_outputs; o++) {
        copy_sizes(&c->out[o], x);
        for (int32_t i = 0; i < n; i++) {
            int32_t dim = x->ndim - n + i;
            int64_t size = x->sizes[dim];
            int64_t r = ok && size != YG_IR_UNKNOWN
                            ? pooled(size, k[i], s[i], p[i], d[i], ceil_mode)
                            : YG_IR_UNKNOWN;
            c->out[o].sizes[dim] = r >= 1 ? r : YG_IR_UNKNOWN;
        }
    }
    return true;
}

/* reflection_pad, replication_pad, pad: the last len(pad) / 2 dims grow
 * by their (before, after) pair, the last dim first, as
 * runtime/cpu/pad.c checks them: mode constant takes any even length up
 * to twice the rank and negative amounts (which crop); reflect and
 * replicate pad 1 to 3 dims of a tensor with one or two more dims.
 * Amounts the op refuses as arguments (not as shapes) leave the size
 * unknown. */
static bool rule_pad(shape_ctx *c) {
    const yg_ir_type *x = in(c, 0);
    int64_t pad[2 * YG_MAX_DIMS + 1];
    int32_t len = 0;
    const char *mode = "constant";
    const yg_ir_attr *m = yg__ir_node_attr(c->n, "mode");
    set_all(c, x->dtype, x->device);
    if (yg__pass_is(c->n, YG_OP_reflection_pad))
        mode = "reflect";
    else if (yg__pass_is(c->n, YG_OP_replication_pad))
        mode = "replicate";
    else if (m != NULL)
        mode = m->kind == YG_IR_ATTR_STR ? m->u.s : "";
    bool constant = strcmp(mode, "constant") == 0, reflect = strcmp(mode, "reflect") == 0;
    if (x->ndim == YG_IR_UNKNOWN || (!constant && !reflect && strcmp(mode, "replicate") != 0) ||
        !yg__pass_ints_attr(c->n, "pad", pad, 2 * YG_MAX_DIMS + 1, &len))
        return true;
    int32_t k = len / 2;
    if (constant && (len % 2 != 0 || k > x->ndim))
        return fail(c, "pad of %d entries for %d dims", len, x->ndim);
    if (!constant && len != 2 && len != 4 && len != 6)
        return true;
    if (!constant && x->ndim != k + 1 && x->ndim != k + 2)
        return fail(c,
                    "%d-d %s padding needs self of %d or %d dims, got %d",
                    k,
                    mode,
                    k + 1,
                    k + 2,
                    x->ndim);
    copy_sizes(&c->out[0], x);
    for (int32_t j = 0; j < k; j++) {
        int32_t dim = x->ndim - 1 - j;
        int64_t size = x->sizes[dim], lo = pad[2 * j], hi = pad[2 * j + 1], grown = 0;
        bool ok = size != YG_IR_UNKNOWN && (constant || (lo >= 0 && hi >= 0)) &&
                  !__builtin_add_overflow(size, lo, &grown) &&
                  !__builtin_add_overflow(grown, hi, &grown);
        if (ok && constant && grown < 0)
            return fail(c, "pad crops dim %d of size %lld below 0", dim, (long long)size);
        if (ok && reflect && (lo >= size || hi >= size) && (lo > 0 || hi > 0))
            return fail(c,
                        "reflect pad (%lld, %lld) of dim %d must be less than its size %lld",
                        (long long)lo,
                        (long long)hi,
                        dim,
                        (long long)size);
        if (ok && !constant && !reflect && size == 0 && (lo > 0 || hi > 0))
            return fail(c, "replicate pad of dim %d needs a non-empty dim", dim);
        c->out[0].sizes[dim] = ok ? grown : YG_IR_UNKNOWN;
    }
    return true;
}

/* adaptive_avg_pool1d/2d/3d, adaptive_max_pool2d (int64 indices of the
 * same sizes), upsample_nearest2d, upsample_bilinear2d: [C, *] or
 * [N, C, *] with the last 1, 2 or 3 dims replaced by output_size (1 or n
 * entries, each at least 1).  upsample_bilinear2d with output_size []
 * takes floor(in * scale) of scales_h and scales_w. */
static bool rule_output_size(shape_ctx *c) {
    const yg_ir_type *x = in(c, 0);
    int32_t n = strstr(c->n->kind, "upsample") != NULL ? 2 : pool_dims(c);
    int64_t o[3] = {0, 0, 0}, given[3];
    int32_t given_len = 0;
    set_all(c, x->dtype, x->device);
    if (c->n->n_outputs == 2)
        c->out[1].dtype = YG_INT64;
    if (x->ndim == YG_IR_UNKNOWN)
        return true;
    if (x->ndim != n + 1 && x->ndim != n + 2)
        return fail(c, "expected input with %d or %d dims, got %d", n + 1, n + 2, x->ndim);
    bool ok = window_pair(c, "output_size", n, NULL, o);
    if (!ok && yg__pass_is(c->n, YG_OP_upsample_bilinear2d) &&
        yg__pass_ints_attr(c->n, "output_size", given, 3, &given_len) && given_len == 0) {
        /* sizes from the scales, as the kernel computes them */
        const char *names[2] = {"scales_h", "scales_w"};
        ok = true;
        for (int32_t i = 0; i < 2; i++) {
            double sc = 0, in_size = (double)x->sizes[x->ndim - 2 + i];
            ok = ok && x->sizes[x->ndim - 2 + i] != YG_IR_UNKNOWN &&
                 scalar_attr(c, names[i], &sc) && sc > 0 && isfinite(sc) && in_size * sc < 9.0e18;
            o[i] = ok ? (int64_t)(in_size * sc) : 0;
        }
    }
    for (int32_t i = 0; i < n; i++)
        ok = ok && o[i] >= 1;
    for (int32_t out = 0; out < c->n->n_outputs; out++) {
        copy_sizes(&c->out[out], x);
        for (int32_t i = 0; i < n; i++)
            c->out[out].sizes[x->ndim - n + i] = ok ? o[i] : YG_IR_UNKNOWN;
    }
    return true;
}

/* interpolate: [C, H, W] or [N, C, H, W] with H, W from size (1 or 2
 * entries) or, when size is [], floor(in * scale_factor).  Arguments the
 * op refuses leave the sizes unknown (the op's error is the message). */
static bool rule_interpolate(shape_ctx *c) {
    const yg_ir_type *x = in(c, 0);
    int64_t o[2] = {0, 0}, given[3];
    int32_t given_len = 0;
    double sc = 0;
    set_all(c, x->dtype, x->device);
    if (x->ndim == YG_IR_UNKNOWN)
        return true;
    if (x->ndim != 3 && x->ndim != 4)
        return fail(c, "expected input with 3 or 4 dims, got %d", x->ndim);
    bool ok = window_pair(c, "size", 2, NULL, o);
    if (!ok && (!yg__pass_ints_attr(c->n, "size", given, 3, &given_len) || given_len == 0) &&
        scalar_attr(c, "scale_factor", &sc) && sc > 0 && isfinite(sc)) {
        ok = true;
        for (int32_t i = 0; i < 2; i++) {
            double in_size = (double)x->sizes[x->ndim - 2 + i];
            ok = ok && x->sizes[x->ndim - 2 + i] != YG_IR_UNKNOWN && in_size * sc < 9.0e18;
            o[i] = ok ? (int64_t)floor(in_size * sc) : 0;
        }
    }
    copy_sizes(&c->out[0], x);
    for (int32_t i = 0; i < 2; i++)
        c->out[0].sizes[x->ndim - 2 + i] = ok && o[i] >= 1 ? o[i] : YG_IR_UNKNOWN;
    return true;
}

/* pixel_shuffle, pixel_unshuffle: [*, C, H, W] with C divided by r^2
 * and H, W multiplied by r (or the reverse).  A factor or sizes the op
 * refuses leave the sizes unknown. */
static bool rule_pixel_shuffle(shape_ctx *c) {
    const yg_ir_type *x = in(c, 0);
    bool up = yg__pass_is(c->n, YG_OP_pixel_shuffle);
    int64_t r = yg__pass_int_attr(c->n, up ? "upscale_factor" : "downscale_factor", 0);
    set_all(c, x->dtype, x->device);
    if (x->ndim == YG_IR_UNKNOWN)
        return true;
    if (x->ndim < 3)
        return fail(c, "expected input with at least 3 dims, got %d", x->ndim);
    copy_sizes(&c->out[0], x);
    int64_t rr = 0;
    bool ok = r >= 1 && !__builtin_mul_overflow(r, r, &rr);
    for (int32_t i = 0; i < 3; i++) {
        int32_t dim = x->ndim - 3 + i;
        int64_t size = x->sizes[dim], v = YG_IR_UNKNOWN;
        if (ok && size != YG_IR_UNKNOWN) {
            if (i == 0)
                v = up ? (size % rr == 0 ? size / rr : YG_IR_UNKNOWN)
                       : (__builtin_mul_overflow(size, rr, &v) ? YG_IR_UNKNOWN : v);
            else
                v = up ? (__builtin_mul_overflow(size, r, &v) ? YG_IR_UNKNOWN : v)
                       : (size % r == 0 ? size / r : YG_IR_UNKNOWN);
        }
        c->out[0].sizes[dim] = v;
    }
    return true;
}

/* ---- shape ops on one dim or the whole tensor ---- */

/* repeat: self treated as having len(repeats) dims (leading dims of size
 * 1), each multiplied by its repeat count.  Negative counts (refused by
 * the op) or products past int64 leave that size unknown. */
static bool rule_repeat(shape_ctx *c) {
    const yg_ir_type *x = in(c, 0);
    int64_t rep[YG_MAX_DIMS + 1];
    int32_t len = 0;
    set_all(c, x->dtype, x->device);
    if (x->ndim == YG_IR_UNKNOWN ||
        !yg__pass_ints_attr(c->n, "repeats", rep, YG_MAX_DIMS + 1, &len))
        return true;
    if (len < x->ndim || len > YG_MAX_DIMS)
        return fail(c, "repeats of %d entries for %d dims", len, x->ndim);
    int64_t sizes[YG_MAX_DIMS];
    for (int32_t i = 0; i < len; i++) {
        int32_t xi = i - (len - x->ndim);
        int64_t have = xi >= 0 ? x->sizes[xi] : 1;
        if (have == YG_IR_UNKNOWN || rep[i] < 0 || __builtin_mul_overflow(have, rep[i], &sizes[i]))
            sizes[i] = YG_IR_UNKNOWN;
    }
    set_sizes(&c->out[0], len, sizes);
    return true;
}

/* index_select: self with dim's size replaced by the number of indices
 * (index 0-D or 1-D). */
static bool rule_index_select(shape_ctx *c) {
    const yg_ir_type *x = in(c, 0), *idx = in(c, 1);
    int64_t dim = yg__pass_int_attr(c->n, "dim", 0);
    set_all(c, x->dtype, x->device);
    if (x->ndim == YG_IR_UNKNOWN)
        return true;
    if (x->ndim == 0)
        return fail(c, "self must have at least 1 dim");
    if (idx->ndim != YG_IR_UNKNOWN && idx->ndim > 1)
        return fail(c, "expected index of 0 or 1 dims, got %d", idx->ndim);
    if (!wrap_dim(c, &dim, x->ndim))
        return false;
    copy_sizes(&c->out[0], x);
    c->out[0].sizes[dim] = idx->ndim == 0 ? 1 : idx->ndim == 1 ? idx->sizes[0] : YG_IR_UNKNOWN;
    return true;
}

/* gather: index's sizes in self's dtype; index has self's rank. */
static bool rule_gather(shape_ctx *c) {
    const yg_ir_type *x = in(c, 0), *idx = in(c, 1);
    set_all(c, x->dtype, x->device);
    if (x->ndim != YG_IR_UNKNOWN && idx->ndim != YG_IR_UNKNOWN && x->ndim != idx->ndim)
        return fail(c, "index has %d dims, self has %d", idx->ndim, x->ndim);
    copy_sizes(&c->out[0], idx);
    return true;
}

/* ---- backward ops ---- */

/* Gradients whose sizes an attribute gives (the forward input's sizes),
 * in the incoming gradient's dtype. */
static bool rule_sizes_attr(shape_ctx *c) {
    static const char *const names[] = {
        "sizes", "input_sizes", "self_sizes", "weight_sizes", "src_sizes"};
    int64_t sizes[YG_MAX_DIMS + 1];
    int32_t nd = 0;
    set_all(c, in(c, 0)->dtype, in(c, 0)->device);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (yg__ir_node_attr(c->n, names[i]) == NULL)
            continue;
        if (!yg__pass_ints_attr(c->n, names[i], sizes, YG_MAX_DIMS + 1, &nd))
            return true;
        if (nd > YG_MAX_DIMS)
            return fail(c, "%s has more than %d dims", names[i], YG_MAX_DIMS);
        for (int32_t d = 0; d < nd; d++) {
            if (sizes[d] < 0)
                return fail(c, "invalid size %lld in %s", (long long)sizes[d], names[i]);
        }
        set_sizes(&c->out[0], nd, sizes);
        return true;
    }
    return true;
}

/* Gradient ops whose outputs are shaped like some of their inputs: output
 * k like input first + k (var_backward, mm_mat1_backward: like the forward
 * input; the LSTM gates' backward: like the two gate tensors and cx), in
 * the incoming gradient's dtype. */
static bool like_inputs(shape_ctx *c, int32_t first) {
    set_all(c, in(c, 0)->dtype, in(c, 0)->device);
    for (int32_t k = 0; k < c->n->n_outputs && first + k < c->n->n_inputs; k++)
        copy_sizes(&c->out[k], in(c, first + k));
    return true;
}

static bool rule_like_input1(shape_ctx *c) {
    return like_inputs(c, 1);
}

static bool rule_like_input2(shape_ctx *c) {
    return like_inputs(c, 2);
}

/* permute_backward: grad permuted back (grad's dim i is dim dims[i]). */
static bool rule_permute_backward(shape_ctx *c) {
    const yg_ir_type *g = in(c, 0);
    int64_t dims[YG_MAX_DIMS];
    int32_t nd = 0;
    bool seen[YG_MAX_DIMS] = {false};
    set_all(c, g->dtype, g->device);
    if (g->ndim == YG_IR_UNKNOWN || !yg__pass_ints_attr(c->n, "dims", dims, YG_MAX_DIMS, &nd))
        return true;
    if (nd != g->ndim)
        return fail(c, "permute of %d dims given %d dims", g->ndim, nd);
    for (int32_t i = 0; i < nd; i++) {
        if (!wrap_dim(c, &dims[i], g->ndim))
            return false;
        if (seen[dims[i]])
            return fail(c, "permute repeats dim %lld", (long long)dims[i]);
        seen[dims[i]] = true;
        c->out[0].sizes[dims[i]] = g->sizes[i];
    }
    c->out[0].ndim = nd;
    return true;
}

/* constant_pad_nd_backward: grad with the padding taken off again. */
static bool rule_constant_pad_nd_backward(shape_ctx *c) {
    const yg_ir_type *g = in(c, 0);
    int64_t pad[2 * YG_MAX_DIMS + 1];
    int32_t len = 0;
    set_all(c, g->dtype, g->device);
    if (g->ndim == YG_IR_UNKNOWN ||
        !yg__pass_ints_attr(c->n, "pad", pad, 2 * YG_MAX_DIMS + 1, &len))
        return true;
    if (len % 2 != 0 || len / 2 > g->ndim)
        return fail(c, "pad of %d entries for %d dims", len, g->ndim);
    copy_sizes(&c->out[0], g);
    for (int32_t j = 0; j < len / 2; j++) {
        int32_t dim = g->ndim - 1 - j;
        int64_t size = g->sizes[dim], shrunk = 0;
        bool ok = size != YG_IR_UNKNOWN && !__builtin_sub_overflow(size, pad[2 * j], &shrunk) &&
                  !__builtin_sub_overflow(shrunk, pad[2 * j + 1], &shrunk) && shrunk >= 0;
        c->out[0].sizes[dim] = ok ? shrunk : YG_IR_UNKNOWN;
    }
    return true;
}

/* ---- recurrent cells ---- */

/* The type of linear(x, w, b) (inputs ix, iw, ib; ib may be None), as
 * the cells use it: x's sizes with the last replaced by w's rows, then
 * broadcast with the bias.  False (with a message) when known sizes
 * cannot go together. */
static bool cell_linear(shape_ctx *c, int32_t ix, int32_t iw, int32_t ib, yg_ir_type *out) {
    const yg_ir_type *x = in(c, ix), *w = in(c, iw);
    *out = yg_ir_type_tensor();
    if (!want_rank(c, iw, 2))
        return false;
    if (x->ndim == 0)
        return fail(c, "input %d is 0-dim; linear needs at least 1 dim", ix);
    if (x->ndim != YG_IR_UNKNOWN) {
        int64_t k = x->sizes[x->ndim - 1];
        if (w->ndim == 2 && k != YG_IR_UNKNOWN && w->sizes[1] != YG_IR_UNKNOWN && k != w->sizes[1])
            return fail(c,
                        "input %d has %lld features, weight %d expects %lld",
                        ix,
                        (long long)k,
                        iw,
                        (long long)w->sizes[1]);
        copy_sizes(out, x);
        out->sizes[x->ndim - 1] = w->ndim == 2 ? w->sizes[0] : YG_IR_UNKNOWN;
    }
    if (ib < c->n->n_inputs && in(c, ib)->kind == YG_IR_TYPE_TENSOR &&
        !yg__pass_broadcast(out, in(c, ib)))
        return fail(c, "bias %d does not broadcast with the projection", ib);
    return true;
}

/* One of n gates stacked along the last dim of t. */
static bool cell_gate(shape_ctx *c, yg_ir_type *t, int64_t n) {
    if (t->ndim == YG_IR_UNKNOWN || t->sizes[t->ndim - 1] == YG_IR_UNKNOWN)
        return true;
    if (t->sizes[t->ndim - 1] % n != 0)
        return fail(c,
                    "gate projections of size %lld are not %lld stacked gates",
                    (long long)t->sizes[t->ndim - 1],
                    (long long)n);
    t->sizes[t->ndim - 1] /= n;
    return true;
}

/* The inputs' common dtype, or unknown when they differ. */
static int32_t cell_dtype(const shape_ctx *c) {
    int32_t d = YG_IR_UNKNOWN;
    for (int32_t i = 0; i < c->n->n_inputs; i++) {
        const yg_ir_type *t = in(c, i);
        if (t->kind != YG_IR_TYPE_TENSOR)
            continue;
        if (t->dtype == YG_IR_UNKNOWN || (d != YG_IR_UNKNOWN && t->dtype != d))
            return YG_IR_UNKNOWN;
        d = t->dtype;
    }
    return d;
}

/* lstm_cell (input, hx, cx, w_ih, w_hh, b_ih?, b_hh?), as
 * runtime/composite/rnn.c computes it: gates = linear(input) +
 * linear(hx), a quarter of the last dim each; cy = f cx + i g and hy =
 * o tanh(cy) broadcast the gates with cx. */
static bool rule_lstm_cell(shape_ctx *c) {
    yg_ir_type g, h;
    set_all(c, cell_dtype(c), in(c, 0)->device);
    if (!cell_linear(c, 0, 3, 5, &g) || !cell_linear(c, 1, 4, 6, &h))
        return false;
    if (!yg__pass_broadcast(&g, &h))
        return fail(c, "the input and hidden projections do not broadcast");
    if (!cell_gate(c, &g, 4))
        return false;
    if (!yg__pass_broadcast(&g, in(c, 2)))
        return fail(c, "the gates do not broadcast with cx");
    copy_sizes(&c->out[0], &g);
    copy_sizes(&c->out[1], &g);
    return true;
}

/* lstm_cell_gates (input_gates, hidden_gates, cx), lstm_cell's pointwise
 * part: the two projections sum into the gates, a quarter of the last dim
 * each; hy and cy are the gates broadcast with cx (the kernel requires
 * equal sizes). */
static bool rule_lstm_cell_gates(shape_ctx *c) {
    yg_ir_type g = yg_ir_type_tensor();
    set_all(c, cell_dtype(c), in(c, 0)->device);
    copy_sizes(&g, in(c, 0));
    if (!yg__pass_broadcast(&g, in(c, 1)))
        return fail(c, "input_gates and hidden_gates do not broadcast");
    if (!cell_gate(c, &g, 4))
        return false;
    if (!yg__pass_broadcast(&g, in(c, 2)))
        return fail(c, "the gates do not broadcast with cx");
    copy_sizes(&c->out[0], &g);
    copy_sizes(&c->out[1], &g);
    return true;
}

/* gru_cell (input, hx, w_ih, w_hh, b_ih?, b_hh?): each projection split
 * in three gates, the gates broadcast together and hy with hx. */
static bool rule_gru_cell(shape_ctx *c) {
    yg_ir_type g, h;
    set_all(c, cell_dtype(c), in(c, 0)->device);
    if (!cell_linear(c, 0, 2, 4, &g) || !cell_linear(c, 1, 3, 5, &h) || !cell_gate(c, &g, 3) ||
        !cell_gate(c, &h, 3))
        return false;
    if (!yg__pass_broadcast(&g, &h))
        return fail(c, "the input and hidden gates do not broadcast");
    if (!yg__pass_broadcast(&g, in(c, 1)))
        return fail(c, "the gates do not broadcast with hx");
    copy_sizes(&c->out[0], &g);
    return true;
}

/* ---- attention ---- */

/* The sizes of a @ b for a, b of known rank >= 2 (batch dims broadcast);
 * transpose_b uses b's last two dims swapped.  False (with a message)
 * when known sizes cannot go together. */
static bool batched_mm(shape_ctx *c,
                       const yg_ir_type *a,
                       const yg_ir_type *b,
                       bool transpose_b,
                       yg_ir_type *out) {
    yg_ir_type ba = yg_ir_type_tensor(), bb = yg_ir_type_tensor();
    int64_t bk = b->sizes[b->ndim - (transpose_b ? 1 : 2)];
    int64_t bn = b->sizes[b->ndim - (transpose_b ? 2 : 1)];
    int64_t ak = a->sizes[a->ndim - 1];
    if (ak != YG_IR_UNKNOWN && bk != YG_IR_UNKNOWN && ak != bk)
        return fail(c, "inner sizes %lld and %lld differ", (long long)ak, (long long)bk);
    ba.ndim = a->ndim - 2;
    bb.ndim = b->ndim - 2;
    for (int32_t i = 0; i < ba.ndim; i++)
        ba.sizes[i] = a->sizes[i];
    for (int32_t i = 0; i < bb.ndim; i++)
        bb.sizes[i] = b->sizes[i];
    if (!yg__pass_broadcast(&ba, &bb))
        return fail(c, "batch dims do not broadcast");
    if (ba.ndim + 2 > YG_MAX_DIMS)
        return fail(c, "the result would have more than %d dims", YG_MAX_DIMS);
    copy_sizes(out, &ba);
    out->sizes[ba.ndim] = a->sizes[a->ndim - 2];
    out->sizes[ba.ndim + 1] = bn;
    out->ndim = ba.ndim + 2;
    return true;
}

/* scaled_dot_product_attention (query, key, value, attn_mask?), as
 * runtime/composite/nn.c computes it: scores = query key^T [..., L, S],
 * broadcast with the mask (a floating mask is added, promoting), then
 * softmax(scores) value [..., L, Ev].  The dtype is known when the
 * inputs agree. */
static bool rule_sdpa(shape_ctx *c) {
    const yg_ir_type *q = in(c, 0), *k = in(c, 1), *v = in(c, 2);
    const yg_ir_type *mask =
        c->n->n_inputs > 3 && in(c, 3)->kind == YG_IR_TYPE_TENSOR ? in(c, 3) : NULL;
    int32_t dtype = q->dtype == k->dtype ? q->dtype : YG_IR_UNKNOWN;
    if (mask != NULL && mask->dtype != YG_BOOL)
        dtype = dtype == YG_IR_UNKNOWN || mask->dtype == YG_IR_UNKNOWN
                    ? YG_IR_UNKNOWN
                    : (int32_t)yg__promote_types((yg_dtype)dtype, (yg_dtype)mask->dtype);
    set_all(c, dtype == v->dtype ? dtype : YG_IR_UNKNOWN, q->device);
    for (int32_t i = 0; i < 3; i++) {
        if (in(c, i)->ndim != YG_IR_UNKNOWN && in(c, i)->ndim < 2)
            return fail(c, "input %d has %d dims, expected at least 2", i, in(c, i)->ndim);
    }
    if (q->ndim == YG_IR_UNKNOWN || k->ndim == YG_IR_UNKNOWN || v->ndim == YG_IR_UNKNOWN ||
        (mask != NULL && mask->ndim == YG_IR_UNKNOWN))
        return true;
    yg_ir_type scores = yg_ir_type_tensor();
    if (!batched_mm(c, q, k, true, &scores))
        return false;
    if (mask != NULL && !yg__pass_broadcast(&scores, mask))
        return fail(c, "attn_mask does not broadcast with the scores");
    if (scores.ndim > YG_MAX_DIMS)
        return fail(c, "the scores would have more than %d dims", YG_MAX_DIMS);
    return batched_mm(c, &scores, v, false, &c->out[0]);
}

/* flash_attention (query, key, value): output as scaled_dot_product_attention
 * without a mask, [..., L, Ev], and logsumexp [..., L], output's sizes
 * but the last.  flash_attention_backward_fused: the gradients have the
 * sizes of query, key and value. */
static bool rule_flash_attention(shape_ctx *c) {
    if (!rule_sdpa(c))
        return false;
    if (c->out[0].ndim != YG_IR_UNKNOWN) {
        copy_sizes(&c->out[1], &c->out[0]);
        c->out[1].ndim = c->out[0].ndim - 1;
    }
    return true;
}

static bool rule_flash_attention_backward(shape_ctx *c) {
    const yg_ir_type *q = in(c, 1);
    set_all(c, q->dtype, q->device);
    for (int32_t i = 0; i < 3; i++)
        copy_sizes(&c->out[i], in(c, 1 + i));
    return true;
}

/* ---- advanced indexing ---- */

/* index(self, indices...): inputs after self are the indices (None keeps
 * a dim).  int64 indices broadcast together to B; a bool mask of k dims
 * stands for k 1-D index tensors of its (unknown) true count.  B replaces
 * the indexed dims when they are adjacent and comes first otherwise.
 * Unknown ranks or index dtypes leave the result unknown. */
static bool rule_index(shape_ctx *c) {
    const yg_ir_type *t = in(c, 0);
    bool indexed[YG_MAX_DIMS] = {false};
    yg_ir_type b = yg_ir_type_tensor();
    int32_t d = 0, first = -1, last = -1;
    bool any = false;
    set_all(c, t->dtype, t->device);
    if (t->ndim == YG_IR_UNKNOWN)
        return true;
    b.ndim = 0;
    for (int32_t i = 1; i < c->n->n_inputs; i++) {
        const yg_ir_type *x = in(c, i);
        if (x->kind != YG_IR_TYPE_TENSOR) {
            if (d + 1 > t->ndim)
                return fail(c, "too many indices for %d dims", t->ndim);
            d++;
            continue;
        }
        if (x->ndim == YG_IR_UNKNOWN || (x->dtype != YG_INT64 && x->dtype != YG_BOOL))
            return true; /* the dims it indexes, or whether it is valid, are unknown */
        int32_t k = x->dtype == YG_BOOL ? x->ndim : 1;
        if (x->dtype == YG_BOOL && k == 0)
            return fail(c, "indices[%d] is a 0-dim bool mask", i - 1);
        if (d + k > t->ndim)
            return fail(c, "too many indices for %d dims", t->ndim);
        yg_ir_type piece = *x;
        if (x->dtype == YG_BOOL) {
            for (int32_t j = 0; j < k; j++) {
                if (x->sizes[j] != YG_IR_UNKNOWN && t->sizes[d + j] != YG_IR_UNKNOWN &&
                    x->sizes[j] != t->sizes[d + j])
                    return fail(c, "mask indices[%d] does not match self at dim %d", i - 1, d + j);
            }
            piece.ndim = 1;
            piece.sizes[0] = YG_IR_UNKNOWN;
        }
        for (int32_t j = 0; j < k; j++) {
            indexed[d] = true;
            if (first < 0)
                first = d;
            last = d++;
        }
        /* A k-dim mask is k index tensors of one shape: broadcasting one
         * of them is the same. */
        if (!yg__pass_broadcast(&b, &piece))
            return fail(c, "the indices cannot be broadcast together");
        any = true;
    }
    if (!any) {
        copy_sizes(&c->out[0], t);
        return true;
    }
    bool adjacent = true;
    for (int32_t e = first; e <= last; e++)
        adjacent = adjacent && indexed[e];
    int32_t bpos = adjacent ? first : 0;
    int32_t kept = 0;
    for (int32_t e = 0; e < t->ndim; e++)
        kept += !indexed[e];
    if (b.ndim == YG_IR_UNKNOWN)
        return true;
    if (kept + b.ndim > YG_MAX_DIMS)
        return fail(c, "the result would have %d dims, more than %d", kept + b.ndim, YG_MAX_DIMS);
    int64_t sizes[YG_MAX_DIMS];
    int32_t o = 0, seen = 0;
    for (int32_t e = 0; e <= t->ndim; e++) {
        if (seen == bpos && o == seen)
            for (int32_t j = 0; j < b.ndim; j++)
                sizes[o++] = b.sizes[j];
        if (e < t->ndim && !indexed[e]) {
            sizes[o++] = t->sizes[e];
            seen++;
        }
    }
    set_sizes(&c->out[0], o, sizes);
    return true;
}

/* index_put: a copy of self (values are written into it). */
static bool rule_self_type(shape_ctx *c) {
    copy_sizes(&c->out[0], in(c, 0));
    set_all(c, in(c, 0)->dtype, in(c, 0)->device);
    return true;
}

const shape_rule yg__shape_rules_nn[] = {
    {YG_OP_zeros, rule_float_creation, DT_RULE},
    {YG_OP_ones, rule_float_creation, DT_RULE},
    {YG_OP_full, rule_float_creation, DT_RULE},
    {YG_OP_empty, rule_float_creation, DT_RULE},
    {YG_OP_rand, rule_float_creation, DT_RULE},
    {YG_OP_randn, rule_float_creation, DT_RULE},
    {YG_OP_randint, rule_randint, DT_RULE},
    {YG_OP_arange, rule_arange, DT_RULE},
    {YG_OP_arange_start, rule_arange, DT_RULE},
    {YG_OP_linspace, rule_linspace, DT_RULE},
    {YG_OP_eye, rule_eye, DT_RULE},
    {YG_OP_eye_m, rule_eye, DT_RULE},
    {YG_OP_zeros_like, rule_like, DT_RULE},
    {YG_OP_ones_like, rule_like, DT_RULE},
    {YG_OP_full_like, rule_like, DT_RULE},
    {YG_OP_empty_like, rule_like, DT_RULE},
    {YG_OP_rand_like, rule_like, DT_RULE},
    {YG_OP_randn_like, rule_like, DT_RULE},
    {YG_OP_bernoulli, rule_self_type, DT_RULE},
    {YG_OP_bernoulli_p, rule_self_type, DT_RULE},
    {YG_OP_dropout, rule_self_type, DT_RULE},
    {YG_OP_clamp_opt, rule_self_type, DT_RULE},
    {YG_OP_to_copy, rule_to_dtype, DT_RULE},
    {YG_OP_to_dtype, rule_to_dtype, DT_RULE},
    {YG_OP_type_as, rule_type_as, DT_RULE},
    {YG_OP_split, rule_pieces, DT_RULE},
    {YG_OP_split_with_sizes, rule_pieces, DT_RULE},
    {YG_OP_chunk, rule_pieces, DT_RULE},
    {YG_OP_unbind, rule_pieces, DT_RULE},
    {YG_OP_batch_norm, rule_batch_norm, DT_RULE},
    {YG_OP_max_pool1d, rule_max_pool, DT_RULE},
    {YG_OP_max_pool2d, rule_max_pool, DT_RULE},
    {YG_OP_max_pool1d_with_indices, rule_max_pool, DT_RULE},
    {YG_OP_max_pool2d_with_indices, rule_max_pool, DT_RULE},
    {YG_OP_max_pool3d, rule_max_pool, DT_RULE},
    {YG_OP_max_pool3d_with_indices, rule_max_pool, DT_RULE},
    {YG_OP_reflection_pad, rule_pad, DT_RULE},
    {YG_OP_replication_pad, rule_pad, DT_RULE},
    {YG_OP_pad, rule_pad, DT_RULE},
    {YG_OP_index, rule_index, DT_RULE},
    {YG_OP_index_put, rule_self_type, DT_RULE},
    {YG_OP_avg_pool1d, rule_max_pool, DT_RULE},
    {YG_OP_avg_pool2d, rule_max_pool, DT_RULE},
    {YG_OP_avg_pool3d, rule_max_pool, DT_RULE},
    {YG_OP_adaptive_avg_pool1d, rule_output_size, DT_RULE},
    {YG_OP_adaptive_avg_pool2d, rule_output_size, DT_RULE},
    {YG_OP_adaptive_avg_pool3d, rule_output_size, DT_RULE},
    {YG_OP_adaptive_max_pool2d, rule_output_size, DT_RULE},
    {YG_OP_upsample_nearest2d, rule_output_size, DT_RULE},
    {YG_OP_upsample_bilinear2d, rule_output_size, DT_RULE},
    {YG_OP_interpolate, rule_interpolate, DT_RULE},
    {YG_OP_pixel_shuffle, rule_pixel_shuffle, DT_RULE},
    {YG_OP_pixel_unshuffle, rule_pixel_shuffle, DT_RULE},
    {YG_OP_channel_shuffle, rule_self_type, DT_RULE},
    {YG_OP_constant_pad_nd, rule_pad, DT_RULE},
    {YG_OP_repeat, rule_repeat, DT_RULE},
    {YG_OP_index_select, rule_index_select, DT_RULE},
    {YG_OP_gather, rule_gather, DT_RULE},
    {YG_OP_scatter, rule_self_type, DT_RULE},
    {YG_OP_scatter_value, rule_self_type, DT_RULE},
    {YG_OP_scatter_add, rule_self_type, DT_RULE},
    {YG_OP_sum_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_mm_mat1_backward, rule_like_input1, DT_RULE},
    {YG_OP_mm_mat2_backward, rule_like_input2, DT_RULE},
    {YG_OP_lstm_cell_gates_backward, rule_like_input2, DT_RULE},
    {YG_OP_mean_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_value_selecting_reduction_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_select_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_slice_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_index_select_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_gather_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_scatter_src_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_index_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_nll_loss_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_embedding_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_max_pool2d_with_indices_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_max_pool3d_with_indices_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_avg_pool2d_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_avg_pool3d_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_adaptive_avg_pool2d_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_adaptive_avg_pool3d_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_upsample_nearest2d_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_upsample_bilinear2d_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_reflection_pad_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_replication_pad_backward, rule_sizes_attr, DT_RULE},
    {YG_OP_prod_backward, rule_like_input1, DT_RULE},
    {YG_OP_minmax_backward, rule_like_input1, DT_RULE},
    {YG_OP_var_backward, rule_like_input1, DT_RULE},
    {YG_OP_norm_backward, rule_like_input1, DT_RULE},
    {YG_OP_logsumexp_backward, rule_like_input1, DT_RULE},
    {YG_OP_cumsum_backward, rule_self_type, DT_RULE},
    {YG_OP_cumprod_backward, rule_self_type, DT_RULE},
    {YG_OP_permute_backward, rule_permute_backward, DT_RULE},
    {YG_OP_constant_pad_nd_backward, rule_constant_pad_nd_backward, DT_RULE},
    {YG_OP_index_put_self_backward, rule_self_type, DT_RULE},
    {YG_OP_lstm_cell, rule_lstm_cell, DT_RULE},
    {YG_OP_lstm_cell_gates, rule_lstm_cell_gates, DT_RULE},
    {YG_OP_gru_cell, rule_gru_cell, DT_RULE},
    {YG_OP_scaled_dot_product_attention, rule_sdpa, DT_RULE},
    {YG_OP_flash_attention, rule_flash_attention, DT_RULE},
    {YG_OP_flash_attention_backward, rule_flash_attention_backward, DT_RULE},
    {YG_OP_flash_attention_backward_fused, rule_flash_attention_backward, DT_RULE},
};

const size_t yg__shape_rules_nn_len = sizeof yg__shape_rules_nn / sizeof yg__shape_rules_nn[0];
