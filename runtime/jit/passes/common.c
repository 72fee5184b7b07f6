/*
 * common.c - the helpers of passes.h: mutation analysis, broadcasting
 * with unknown sizes, attribute readers.
 *
 * Mutation analysis is deliberately coarse (what TorchScript's first
 * alias analysis did): values are grouped into alias classes with a
 * union-find, joining a view's result (schema `-> Tensor(a)`) and an
 * in-place op's result (`-> Tensor(a!)`) to their self input; a class is
 * "mutated" when any member is written.  Passes then leave alone anything
 * that reads or produces a mutated value.  It never says "not mutated"
 * wrongly; it may say "mutated" for values that are only near a write,
 * which costs an optimisation, never a wrong answer.
 */
#include "jit/passes/passes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int64_t find(int64_t *parent, int64_t i) {
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

static void join(int64_t *parent, int64_t a, int64_t b) {
    a = find(parent, a);
    b = find(parent, b);
    if (a != b)
        parent[a < b ? b : a] = a < b ? a : b;
}

bool yg__pass_has_side_effects(const yg_graph *g) {
    for (const yg_ir_node *n = g->first; n != NULL; n = n->next) {
        if (yg__ir_node_has_side_effects(n))
            return true;
    }
    return false;
}

yg_status yg__pass_mark_mutated(yg_graph *g, const char *pass, bool *any) {
    int64_t count = g->param->n_outputs, k = 0;
    int64_t *parent = NULL;
    bool *mutated = NULL;
    *any = false;
    for (yg_ir_node *n = g->first; n != NULL; n = n->next)
        count += n->n_outputs;
    /* Number the values through scratch; the marks replace it below. */
    for (int32_t i = 0; i < g->param->n_outputs; i++)
        g->param->outputs[i]->scratch = k++;
    for (yg_ir_node *n = g->first; n != NULL; n = n->next) {
        for (int32_t i = 0; i < n->n_outputs; i++)
            n->outputs[i]->scratch = k++;
    }
    if (!yg__pass_has_side_effects(g)) {
        for (int32_t i = 0; i < g->param->n_outputs; i++)
            g->param->outputs[i]->scratch = 0;
        for (yg_ir_node *n = g->first; n != NULL; n = n->next) {
            for (int32_t i = 0; i < n->n_outputs; i++)
                n->outputs[i]->scratch = 0;
        }
        return YG_OK;
    }
    *any = true;
    parent = malloc((size_t)count * sizeof *parent);
    mutated = calloc((size_t)count, sizeof *mutated);
    if (parent == NULL || mutated == NULL) {
        free(parent);
        free(mutated);
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of memory", pass);
    }
    for (int64_t i = 0; i < count; i++)
        parent[i] = i;
    for (yg_ir_node *n = g->first; n != NULL; n = n->next) {
        yg_ir_kind_info info = yg__ir_kind_info(n);
        if ((info.is_view || info.is_inplace) && n->n_inputs > 0 && n->n_outputs > 0)
            join(parent, n->outputs[0]->scratch, n->inputs[0]->scratch);
    }
    for (yg_ir_node *n = g->first; n != NULL; n = n->next) {
        if (!yg__ir_node_has_side_effects(n))
            continue;
        yg_ir_kind_info info = yg__ir_kind_info(n);
        if (info.is_inplace && n->n_inputs > 0) {
            mutated[find(parent, n->inputs[0]->scratch)] = true;
        } else {
            for (int32_t i = 0; i < n->n_inputs; i++)
                mutated[find(parent, n->inputs[i]->scratch)] = true;
        }
        for (int32_t i = 0; i < n->n_outputs; i++)
            mutated[find(parent, n->outputs[i]->scratch)] = true;
    }
    for (int32_t i = 0; i < g->param->n_outputs; i++) {
        yg_ir_value *v = g->param->outputs[i];
        v->scratch = mutated[find(parent, v->scratch)] ? 1 : 0;
    }
    for (yg_ir_node *n = g->first; n != NULL; n = n->next) {
        for (int32_t i = 0; i < n->n_outputs; i++) {
            yg_ir_value *v = n->outputs[i];
            v->scratch = mutated[find(parent, v->scratch)] ? 1 : 0;
        }
    }
    free(parent);
    free(mutated);
    return YG_OK;
}

bool yg__pass_sizes_known(const yg_ir_type *t) {
    if (t->kind != YG_IR_TYPE_TENSOR || t->ndim == YG_IR_UNKNOWN)
        return false;
    for (int32_t i = 0; i < t->ndim; i++) {
        if (t->sizes[i] == YG_IR_UNKNOWN)
            return false;
    }
    return true;
}

bool yg__pass_same_known_sizes(const yg_ir_type *a, const yg_ir_type *b) {
    if (!yg__pass_sizes_known(a) || !yg__pass_sizes_known(b) || a->ndim != b->ndim)
        return false;
    for (int32_t i = 0; i < a->ndim; i++) {
        if (a->sizes[i] != b->sizes[i])
            return false;
    }
    return true;
}

bool yg__pass_broadcast(yg_ir_type *acc, const yg_ir_type *b) {
    if (acc->ndim == YG_IR_UNKNOWN || b->ndim == YG_IR_UNKNOWN) {
        acc->ndim = YG_IR_UNKNOWN;
        return true;
    }
    int32_t nd = acc->ndim > b->ndim ? acc->ndim : b->ndim;
    int64_t out[YG_MAX_DIMS];
    for (int32_t i = 0; i < nd; i++) {
        int32_t ia = i - (nd - acc->ndim), ib = i - (nd - b->ndim);
        int64_t da = ia >= 0 ? acc->sizes[ia] : 1, db = ib >= 0 ? b->sizes[ib] : 1;
        if (da == 1)
            out[i] = db;
        else if (db == 1)
            out[i] = da;
        else if (da == YG_IR_UNKNOWN)
            out[i] = db;
        else if (db == YG_IR_UNKNOWN || da == db)
            out[i] = da;
        else
            return false;
    }
    acc->ndim = nd;
    for (int32_t i = 0; i < nd; i++)
        acc->sizes[i] = out[i];
    return true;
}

int64_t yg__pass_int_attr(const yg_ir_node *n, const char *name, int64_t dflt) {
    int64_t v;
    return yg__ir_attr_as_int(n, name, &v) ? v : dflt;
}

bool yg__pass_ints_attr(const yg_ir_node *n,
                        const char *name,
                        int64_t *out,
                        int32_t cap,
                        int32_t *len) {
    const yg_ir_attr *a = yg__ir_node_attr(n, name);
    *len = 0;
    if (a == NULL)
        return false;
    if (a->kind == YG_IR_ATTR_INT) {
        if (cap < 1)
            return false;
        out[0] = a->u.i;
        *len = 1;
        return true;
    }
    if (a->kind != YG_IR_ATTR_INTS || a->u.ints.len > cap)
        return false;
    for (int64_t i = 0; i < a->u.ints.len; i++)
        out[i] = a->u.ints.items[i];
    *len = (int32_t)a->u.ints.len;
    return true;
}

bool yg__pass_is(const yg_ir_node *n, const char *name) {
    return n != NULL && n->op != NULL && strcmp(n->kind, name) == 0;
}

bool yg__pass_constant_all(const yg_ir_node *n, double v) {
    if (n == NULL || n->kind != yg__prim_constant)
        return false;
    const yg_ir_attr *a = yg__ir_node_attr(n, "value");
    if (a == NULL || a->kind != YG_IR_ATTR_TENSOR)
        return false;
    const yg_tensor *t = a->u.t;
    int64_t numel = yg_tensor_numel(t);
    const char *p = yg__tensor_ptr(t);
    for (int64_t i = 0; i < numel; i++) {
        double e;
        switch (t->dtype) {
        case YG_FLOAT32:
            e = ((const float *)p)[i];
            break;
        case YG_FLOAT64:
            e = ((const double *)p)[i];
            break;
        case YG_INT64:
            e = (double)((const int64_t *)p)[i];
            break;
        case YG_BOOL:
            e = ((const unsigned char *)p)[i];
            break;
        case YG_INT32:
        case YG_FLOAT16:
        case YG_BFLOAT16:
            e = yg__load_f64(p + i * (int64_t)yg_dtype_size(t->dtype), t->dtype);
            break;
        default:
            return false;
        }
        if (e != v)
            return false;
    }
    return numel > 0;
}

yg_status yg__pass_inline(yg_graph *g, yg_ir_node *n, const yg_graph *tg, yg_ir_value **map) {
    /* tg's values are numbered by scratch; copies[k] is value k's copy. */
    int64_t count = tg->param->n_outputs;
    for (const yg_ir_node *m = tg->first; m != NULL; m = m->next)
        count += m->n_outputs;
    yg_ir_value **copies = calloc((size_t)count + 1, sizeof *copies);
    if (copies == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "inline: out of memory");
    int64_t k = 0;
    for (int32_t i = 0; i < tg->param->n_outputs; i++, k++) {
        tg->param->outputs[i]->scratch = k;
        copies[k] = map[i];
    }
    yg_status st = YG_OK;
    for (const yg_ir_node *m = tg->first; st == YG_OK && m != NULL; m = m->next) {
        yg_ir_node *c = NULL;
        st = yg__ir_node_create(g, m->kind, m->op, m->n_outputs, false, &c);
        if (st != YG_OK)
            break;
        yg__ir_node_move_before(c, n);
        for (int32_t i = 0; st == YG_OK && i < m->n_inputs; i++)
            st = yg__ir_node_add_input(c, copies[m->inputs[i]->scratch]);
        for (int32_t i = 0; st == YG_OK && i < m->n_attrs; i++) {
            yg_ir_attr a;
            st = yg__ir_attr_copy(&m->attrs[i], &a);
            if (st == YG_OK)
                st = yg__ir_node_put_attr(c, &a);
        }
        for (int32_t i = 0; st == YG_OK && i < m->n_outputs; i++) {
            yg_ir_type t = m->outputs[i]->type;
            t.requires_grad = YG_IR_UNKNOWN;
            st = yg_ir_value_set_type(c->outputs[i], &t);
            m->outputs[i]->scratch = k;
            copies[k++] = c->outputs[i];
        }
    }
    for (int32_t i = 0; st == YG_OK && i < n->n_outputs; i++) {
        yg_ir_value *to = copies[tg->ret->inputs[i]->scratch];
        yg_ir_type t = n->outputs[i]->type;
        /* The node's static type stays (a traced copy's requires_grad is
         * its example's). */
        if (to->node->owner == g && to->node != g->param)
            st = yg_ir_value_set_type(to, &t);
        if (st == YG_OK)
            st = yg__ir_value_replace_all_uses(n->outputs[i], to);
    }
    free(copies);
    if (st == YG_OK)
        yg__ir_node_destroy(n);
    return st;
}
