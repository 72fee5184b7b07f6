/*
 * dims.c - which traced sizes are dynamic, and the ONNX that computes
 * them.
 *
 * A trace records sizes as numbers: view(x, [B * T, C]) keeps the
 * traced B * T.  Exported as it is, that number pins the model to the
 * traced batch and sequence length.  Before any node is emitted, this
 * pass gives every dim of every value a symbolic form, coef * the
 * product of symbols, where a symbol is one dynamic axis of a model
 * input (yg_onnx_dynamic_axis; axes that share a name and a traced size
 * are one symbol).  The symbolics of the ops that take sizes as
 * arguments (view, reshape, expand, the creation ops, arange, a causal
 * attention's mask) then write a symbolic dim as Shape/Gather/Mul
 * arithmetic on the input that holds it instead of the number.
 *
 * How a dim gets its form:
 *   - a model input's dynamic axis is its symbol; every other dim of an
 *     input, a parameter or a constant is the number;
 *   - view/reshape: each size is the input's dim at the same position
 *     when that has the traced value, else an input dim of that value,
 *     else a product of consecutive input dims, else one symbol of the
 *     input, else the number; the -1 is what the total leaves; when the
 *     product of the sizes is not the input's total as a form, every
 *     size stays a number;
 *   - transpose, t, permute move their input's dims;
 *   - expand: -1 and sizes equal to the aligned input dim keep that dim;
 *     a broadcast size and the creation ops' sizes (and arange's end)
 *     are a symbol, or a product of two, whose traced value is that size
 *     when exactly one such form has it;
 *   - any other op: a dim that has the traced value of the input dim it
 *     aligns with (from the right) takes that dim's form; otherwise the
 *     one symbolic input dim of that value when no other input dim has
 *     it; otherwise the number.
 *
 * The rules go by traced values, as the trace has nothing else: a size
 * that equals a dynamic dim by coincidence is taken to be it, and two
 * dynamic axes traced at the same size cannot be told apart.  Trace at
 * dynamic sizes above 1 that differ from each other and from the
 * model's fixed sizes (docs/onnx.md, "Dynamic axes").
 */
#include "jit/ir/boxing.h"
#include "jit/passes/passes.h"
#include "op_ids.h"
#include "onnx/onnx_int.h"

#include <string.h>

static yg_status oom(void) {
    return yg__fail(YG_ERR_OUT_OF_MEMORY, "onnx_export: out of memory");
}

static yg_onnx_dim number(int64_t v) {
    yg_onnx_dim d = {.value = v, .coef = v};
    return d;
}

bool yg__onnx_dim_is_symbolic(const yg_onnx_dim *d) {
    for (int k = 0; k < YG_ONNX_MAX_SYMS; k++)
        if (d->exp[k] != 0)
            return true;
    return false;
}

static bool same_form(const yg_onnx_dim *a, const yg_onnx_dim *b) {
    return a->coef == b->coef && memcmp(a->exp, b->exp, sizeof a->exp) == 0;
}

static yg_onnx_dim times(const yg_onnx_dim *a, const yg_onnx_dim *b) {
    yg_onnx_dim r = {.value = a->value * b->value, .coef = a->coef * b->coef};
    for (int k = 0; k < YG_ONNX_MAX_SYMS; k++)
        r.exp[k] = (uint8_t)(a->exp[k] + b->exp[k]);
    return r;
}

/* a / b as a form; false when it is not one (a symbol would go below 0,
 * or the coefficient does not divide). */
static bool divide(const yg_onnx_dim *a, const yg_onnx_dim *b, yg_onnx_dim *out) {
    if (b->coef == 0 || a->coef % b->coef != 0 || b->value == 0)
        return false;
    yg_onnx_dim r = {.value = a->value / b->value, .coef = a->coef / b->coef};
    for (int k = 0; k < YG_ONNX_MAX_SYMS; k++) {
        if (a->exp[k] < b->exp[k])
            return false;
        r.exp[k] = (uint8_t)(a->exp[k] - b->exp[k]);
    }
    *out = r;
    return true;
}

const yg_onnx_dim *yg__onnx_value_dims(const yg_onnx_ctx *cx, const yg_ir_value *v) {
    if (cx->dims == NULL || v == NULL || v->scratch < 0 || v->scratch >= cx->n_dims ||
        v->type.kind != YG_IR_TYPE_TENSOR || v->type.ndim < 0)
        return NULL;
    return cx->dims[v->scratch];
}

/* ---- the forms of one node's outputs ---- */

/* The one symbol or product of two symbols whose traced value is v; 0
 * symbols (a number) when none or several are. */
static yg_onnx_dim global_form(const yg_onnx_ctx *cx, int64_t v) {
    yg_onnx_dim found = number(v);
    int n = 0;
    if (v <= 1)
        return found;
    for (int a = 0; a < cx->n_syms; a++) {
        for (int b = a; b <= cx->n_syms; b++) { /* b == n_syms: a alone */
            yg_onnx_dim f = {.value = cx->syms[a].value, .coef = 1};
            f.exp[a] = 1;
            if (b < cx->n_syms) {
                f.value *= cx->syms[b].value;
                f.exp[b]++;
            }
            if (f.value == v) {
                bool dup = n > 0 && same_form(&f, &found);
                found = f;
                n += !dup;
            }
        }
    }
    return n == 1 ? found : number(v);
}

/* The form of a size v among the dims of one input (rank r): the dim at
 * pos when it has value v; else the one input dim of value v, when only
 * one has it (symbolic or not); else a run of consecutive dims whose
 * product is v, when one run is; else a single symbol of the input of
 * that value.  *ok false when none is. */
static yg_onnx_dim local_form(const yg_onnx_dim *in, int32_t r, int64_t pos, int64_t v, bool *ok) {
    *ok = true;
    if (pos < r && in[pos].value == v)
        return in[pos];
    int n = 0;
    yg_onnx_dim found = number(v);
    for (int32_t d = 0; d < r; d++)
        if (in[d].value == v) {
            n += n == 0 || !same_form(&found, &in[d]);
            found = in[d];
        }
    if (n == 1)
        return found;
    if (n > 1) {
        *ok = false;
        return number(v);
    }
    n = 0;
    for (int32_t a = 0; a < r; a++) {
        yg_onnx_dim p = in[a];
        for (int32_t b = a + 1; b < r && p.value < v && p.value > 0; b++) {
            p = times(&p, &in[b]);
            if (p.value == v) {
                n += n == 0 || !same_form(&found, &p);
                found = p;
            }
        }
    }
    if (n == 1)
        return found;
    *ok = false;
    return number(v);
}

static yg_onnx_dim total(const yg_onnx_dim *dims, int32_t r) {
    yg_onnx_dim t = number(1);
    for (int32_t d = 0; d < r; d++)
        t = times(&t, &dims[d]);
    return t;
}

/* The one symbol of the form whole whose traced value is v; *ok false
 * when none or several are. */
static yg_onnx_dim symbol_of(const yg_onnx_ctx *cx, const yg_onnx_dim *whole, int64_t v, bool *ok) {
    yg_onnx_dim found = number(v);
    int n = 0;
    for (int k = 0; k < cx->n_syms; k++)
        if (whole->exp[k] > 0 && cx->syms[k].value == v) {
            found = (yg_onnx_dim){.value = v, .coef = 1};
            found.exp[k] = 1;
            n++;
        }
    *ok = n == 1 && v > 1;
    return found;
}

/* view/reshape: the forms of out's sizes (the attribute; one may be
 * -1).  out keeps its numbers unless every size gets a form and their
 * product is the input's total. */
static void reshape_forms(const yg_onnx_ctx *cx,
                          const yg_ir_node *n,
                          const yg_onnx_dim *in,
                          int32_t r,
                          yg_onnx_dim *out,
                          int32_t out_r) {
    yg_box_ints size = {0};
    const char *arg = yg__pass_is(n, YG_OP_view) ? "size" : "shape";
    if (yg__box_ints(n, arg, NULL, YG_BOX_REQUIRED, 0, &size) != YG_OK || size.len != out_r)
        return; /* the numbers stay (the symbolic reports the attribute) */
    const yg_onnx_dim whole = total(in, r);
    yg_onnx_dim got[YG_MAX_DIMS];
    int32_t left = -1; /* the -1, solved from the total */
    for (int32_t i = 0; i < out_r; i++) {
        bool ok = true;
        if (size.items[i] < 0) {
            if (left >= 0)
                return;
            left = i;
            continue;
        }
        got[i] = local_form(in, r, i, out[i].value, &ok);
        if (!ok)
            got[i] = symbol_of(cx, &whole, out[i].value, &ok);
        if (!ok)
            got[i] = number(out[i].value);
    }
    yg_onnx_dim rest = whole;
    for (int32_t i = 0; i < out_r; i++) {
        yg_onnx_dim q;
        if (i != left && !divide(&rest, &got[i], &q))
            return;
        if (i != left)
            rest = q;
    }
    if (left >= 0) {
        if (rest.value != out[left].value)
            return;
        got[left] = rest;
    } else if (rest.coef != 1 || yg__onnx_dim_is_symbolic(&rest)) {
        return;
    }
    memcpy(out, got, (size_t)out_r * sizeof *out);
}

/* transpose(dim0, dim1), t, permute(dims): the input's dims moved. */
static void move_forms(const yg_ir_node *n, const yg_onnx_dim *in, int32_t r, yg_onnx_dim *out) {
    int64_t perm[YG_MAX_DIMS];
    for (int32_t d = 0; d < r; d++)
        perm[d] = d;
    if (yg__pass_is(n, YG_OP_permute)) {
        yg_box_ints dims = {0};
        if (yg__box_ints(n, "dims", NULL, YG_BOX_REQUIRED, 0, &dims) != YG_OK || dims.len != r)
            return;
        for (int32_t d = 0; d < r; d++)
            perm[d] = dims.items[d] < 0 ? dims.items[d] + r : dims.items[d];
    } else if (r == 2 || yg__pass_is(n, YG_OP_transpose)) {
        int64_t a = 0, b = 1;
        if (yg__pass_is(n, YG_OP_transpose) &&
            (yg__box_int(n, "dim0", NULL, &a) != YG_OK || yg__box_int(n, "dim1", NULL, &b) != YG_OK))
            return;
        a = a < 0 ? a + r : a;
        b = b < 0 ? b + r : b;
        if (a < 0 || b < 0 || a >= r || b >= r)
            return;
        perm[a] = b;
        perm[b] = a;
    }
    for (int32_t d = 0; d < r; d++)
        if (perm[d] < 0 || perm[d] >= r || in[perm[d]].value != out[d].value)
            return;
    for (int32_t d = 0; d < r; d++)
        out[d] = in[perm[d]];
}

/* expand(size): -1 or the aligned dim's value keeps that dim; a size
 * that broadcasts a 1 is a global form. */
static void expand_forms(const yg_onnx_ctx *cx,
                         const yg_onnx_dim *in,
                         int32_t r,
                         yg_onnx_dim *out,
                         int32_t out_r) {
    for (int32_t i = 0; i < out_r; i++) {
        int32_t d = i - (out_r - r);
        if (d >= 0 && in[d].value == out[i].value)
            out[i] = in[d];
        else
            out[i] = global_form(cx, out[i].value);
    }
}

/* Any other op: from the aligned input dims, else the one input dim of
 * that value. */
static void generic_forms(const yg_onnx_ctx *cx, const yg_ir_node *n, yg_onnx_dim *out, int32_t out_r) {
    for (int32_t i = 0; i < out_r; i++) {
        bool found = false;
        for (int32_t j = 0; j < n->n_inputs && !found; j++) {
            const yg_onnx_dim *in = yg__onnx_value_dims(cx, n->inputs[j]);
            int32_t r = n->inputs[j]->type.ndim, d = i - (out_r - r);
            if (in != NULL && d >= 0 && in[d].value == out[i].value &&
                yg__onnx_dim_is_symbolic(&in[d])) {
                out[i] = in[d];
                found = true;
            }
        }
        yg_onnx_dim f = out[i];
        int forms = 0;
        for (int32_t j = 0; j < n->n_inputs && !found; j++) {
            const yg_onnx_dim *in = yg__onnx_value_dims(cx, n->inputs[j]);
            for (int32_t d = 0; in != NULL && d < n->inputs[j]->type.ndim; d++)
                if (in[d].value == out[i].value) {
                    forms += forms == 0 || !same_form(&f, &in[d]);
                    f = in[d];
                }
        }
        if (!found && forms == 1)
            out[i] = f;
    }
}

static bool creation(const yg_ir_node *n) {
    static const int32_t ids[] = {YG_OP_zeros, YG_OP_ones, YG_OP_full, YG_OP_empty,
                                  YG_OP_arange, YG_OP_rand, YG_OP_randn};
    for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++)
        if (yg__pass_is(n, ids[k]))
            return true;
    return false;
}

static void node_forms(const yg_onnx_ctx *cx, const yg_ir_node *n, const yg_ir_value *v, yg_onnx_dim *out) {
    const int32_t out_r = v->type.ndim;
    const yg_onnx_dim *in = n->n_inputs > 0 ? yg__onnx_value_dims(cx, n->inputs[0]) : NULL;
    const int32_t r = in != NULL ? n->inputs[0]->type.ndim : -1;
    if (n->op == NULL)
        return; /* prim kinds: numbers */
    if (v->offset == 0 && in != NULL &&
        (yg__pass_is(n, YG_OP_view) || yg__pass_is(n, YG_OP_reshape)))
        reshape_forms(cx, n, in, r, out, out_r);
    else if (v->offset == 0 && in != NULL &&
             (yg__pass_is(n, YG_OP_transpose) || yg__pass_is(n, YG_OP_t) ||
              yg__pass_is(n, YG_OP_permute)) &&
             r == out_r)
        move_forms(n, in, r, out);
    else if (v->offset == 0 && in != NULL && yg__pass_is(n, YG_OP_expand) && r <= out_r)
        expand_forms(cx, in, r, out, out_r);
    else if (creation(n))
        for (int32_t i = 0; i < out_r; i++)
            out[i] = global_form(cx, out[i].value);
    else
        generic_forms(cx, n, out, out_r);
}

/* ---- the pass ---- */

static yg_status add_value(yg_onnx_ctx *cx, yg_ir_value *v) {
    v->scratch = -1;
    if (v->type.kind != YG_IR_TYPE_TENSOR || v->type.ndim < 0)
        return YG_OK;
    if (cx->n_dims == cx->cap_dims) {
        int64_t cap = cx->cap_dims == 0 ? 64 : cx->cap_dims * 2;
        yg_onnx_dim(*dims)[YG_MAX_DIMS] = yg__onnx_alloc(cx, (size_t)cap * sizeof *dims);
        if (dims == NULL)
            return oom();
        if (cx->n_dims > 0)
            memcpy(dims, cx->dims, (size_t)cx->n_dims * sizeof *dims);
        cx->dims = dims;
        cx->cap_dims = cap;
    }
    v->scratch = cx->n_dims++;
    for (int32_t d = 0; d < v->type.ndim; d++)
        cx->dims[v->scratch][d] = number(v->type.sizes[d]);
    return YG_OK;
}

yg_status yg__onnx_dims_input(yg_onnx_ctx *cx, yg_ir_value *v, const char *const *axis_names) {
    YG_RETURN_IF_ERROR(add_value(cx, v));
    for (int32_t d = 0; axis_names != NULL && v->scratch >= 0 && d < v->type.ndim; d++) {
        const int64_t size = v->type.sizes[d];
        int k = 0;
        if (axis_names[d] == NULL || size < 0)
            continue;
        while (k < cx->n_syms &&
               !(strcmp(cx->syms[k].name, axis_names[d]) == 0 && cx->syms[k].value == size))
            k++;
        if (k == cx->n_syms) {
            if (k == YG_ONNX_MAX_SYMS)
                continue; /* more dynamic axes than forms hold: a number */
            cx->syms[k] = (yg_onnx_sym){.name = axis_names[d], .input = v->name, .axis = d,
                                        .value = size};
            cx->n_syms++;
        }
        yg_onnx_dim s = {.value = size, .coef = 1};
        s.exp[k] = 1;
        cx->dims[v->scratch][d] = s;
    }
    return YG_OK;
}

yg_status yg__onnx_dims_nodes(yg_onnx_ctx *cx, yg_graph *g) {
    for (yg_ir_node *n = g->first; n != NULL; n = n->next)
        for (int32_t i = 0; i < n->n_outputs; i++) {
            yg_ir_value *v = n->outputs[i];
            YG_RETURN_IF_ERROR(add_value(cx, v));
            if (v->scratch >= 0 && cx->n_syms > 0)
                node_forms(cx, n, v, cx->dims[v->scratch]);
        }
    return YG_OK;
}

/* ---- emitting a form ---- */

/* Shape(input)[axis] of symbol k: a [1] int64 (scalar false) or a 0-d
 * one, made once. */
static yg_status symbol(yg_onnx_ctx *cx, const yg_ir_node *node, int k, bool scalar, const char **out) {
    yg_onnx_sym *s = &cx->syms[k];
    const char **cached = scalar ? &s->scalar : &s->vector;
    if (*cached == NULL) {
        const char *shape = NULL, *idx = NULL;
        for (int j = 0; j < cx->n_syms && shape == NULL; j++)
            if (strcmp(cx->syms[j].input, s->input) == 0)
                shape = cx->syms[j].shape;
        if (shape == NULL) {
            YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Shape", s->input, NULL, &shape));
            s->shape = shape;
        }
        if (scalar)
            YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, YG_INT64, (double)s->axis, &idx));
        else
            YG_RETURN_IF_ERROR(yg__onnx_const_ints(cx, &s->axis, 1, &idx));
        YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Gather", shape, idx, NULL, cached));
    }
    *out = *cached;
    return YG_OK;
}

yg_status yg__onnx_dim_value(yg_onnx_ctx *cx,
                             const yg_ir_node *node,
                             const yg_onnx_dim *d,
                             bool scalar,
                             const char **out) {
    const char *acc = NULL;
    *out = NULL;
    for (int k = 0; k < cx->n_syms; k++)
        for (int e = 0; e < d->exp[k]; e++) {
            const char *s = NULL;
            YG_RETURN_IF_ERROR(symbol(cx, node, k, scalar, &s));
            if (acc == NULL)
                acc = s;
            else
                YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", acc, s, NULL, &acc));
        }
    if (acc == NULL || d->coef != 1) {
        const char *c = NULL;
        if (scalar)
            YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, YG_INT64, (double)d->coef, &c));
        else
            YG_RETURN_IF_ERROR(yg__onnx_const_ints(cx, &d->coef, 1, &c));
        if (acc == NULL)
            acc = c;
        else
            YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", acc, c, NULL, &acc));
    }
    *out = acc;
    return YG_OK;
}

yg_status yg__onnx_shape_value(yg_onnx_ctx *cx,
                               const yg_ir_node *node,
                               const int64_t *numbers,
                               const yg_onnx_dim *const *forms,
                               int64_t n,
                               const char **out) {
    const char *parts[YG_MAX_DIMS];
    int64_t n_parts = 0, run = 0;
    bool any = false;
    for (int64_t i = 0; i < n; i++)
        any = any || forms[i] != NULL;
    if (!any)
        return yg__onnx_const_ints(cx, numbers, n, out);
    for (int64_t i = 0; i <= n; i++) {
        if (i < n && forms[i] == NULL) {
            run++;
            continue;
        }
        if (run > 0)
            YG_RETURN_IF_ERROR(yg__onnx_const_ints(cx, numbers + i - run, run, &parts[n_parts++]));
        run = 0;
        if (i < n)
            YG_RETURN_IF_ERROR(yg__onnx_dim_value(cx, node, forms[i], false, &parts[n_parts++]));
    }
    if (n_parts == 1) {
        *out = parts[0];
        return YG_OK;
    }
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Concat", &o));
    for (int64_t i = 0; i < n_parts; i++)
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, parts[i]));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "axis", 0));
    return yg__onnx_output_fresh(cx, o, node, "shape", out);
}

yg_status yg__onnx_dim_range(yg_onnx_ctx *cx,
                             const yg_ir_node *node,
                             const yg_onnx_dim *n,
                             const char *out_name,
                             const char **out) {
    const char *s = NULL, *e = NULL, *t = NULL;
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_dim_value(cx, node, n, true, &e));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, YG_INT64, 0, &s));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, YG_INT64, 1, &t));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Range", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, s));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, e));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, t));
    if (out_name != NULL)
        return yg__onnx_output_named(cx, o, out_name);
    return yg__onnx_output_fresh(cx, o, node, "range", out);
}
