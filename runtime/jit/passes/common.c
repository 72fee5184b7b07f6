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

bool yg__pass_is(const yg_ir_node *n, int32_t id) {
    return n != NULL && n->op != NULL && n->op - yg__ops == id;
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

/* Copies node n of g into sub, mapping inputs by name. */
static yg_status copy_node_by_name(yg_graph *sub, const yg_ir_node *n) {
    yg_ir_node *m = NULL;
    YG_RETURN_IF_ERROR(yg__ir_node_create(sub, n->kind, n->op, 0, true, &m));
    for (int32_t i = 0; i < n->n_inputs; i++) {
        const char *name = n->inputs[i]->name;
        yg_ir_value *v = yg__ir_graph_find(sub, name, strlen(name));
        if (v == NULL)
            return yg__fail(YG_ERR_INTERNAL, "outline: %%%s not mapped", name);
        YG_RETURN_IF_ERROR(yg__ir_node_add_input(m, v));
    }
    for (int32_t i = 0; i < n->n_attrs; i++) {
        yg_ir_attr a;
        YG_RETURN_IF_ERROR(yg__ir_attr_copy(&n->attrs[i], &a));
        YG_RETURN_IF_ERROR(yg__ir_node_put_attr(m, &a));
    }
    for (int32_t i = 0; i < n->n_outputs; i++) {
        const yg_ir_value *o = n->outputs[i];
        YG_RETURN_IF_ERROR(yg__ir_node_add_output(m, o->name, strlen(o->name), &o->type));
    }
    return YG_OK;
}

yg_status yg__pass_outline(yg_ir_node *const *nodes, int32_t len, yg_graph **out) {
    yg_graph *sub = NULL;
    yg_ir_value **outs = NULL;
    int32_t n_outs = 0, cap_outs = 0;
    *out = NULL;
    for (int32_t i = 0; i < len; i++)
        nodes[i]->scratch = 1;
    yg_status st = yg_graph_create(&sub);
    for (int32_t i = 0; st == YG_OK && i < len; i++) {
        const yg_ir_node *n = nodes[i];
        for (int32_t j = 0; st == YG_OK && j < n->n_inputs; j++) {
            const yg_ir_value *v = n->inputs[j];
            if (v->node->scratch == 1 || yg__ir_graph_find(sub, v->name, strlen(v->name)) != NULL)
                continue;
            st = yg_graph_add_input(sub, &v->type, v->name, NULL);
        }
    }
    for (int32_t i = 0; st == YG_OK && i < len; i++)
        st = copy_node_by_name(sub, nodes[i]);
    for (int32_t i = 0; st == YG_OK && i < len; i++) {
        const yg_ir_node *n = nodes[i];
        for (int32_t j = 0; st == YG_OK && j < n->n_outputs; j++) {
            const yg_ir_value *v = n->outputs[j];
            bool outside = false;
            for (int32_t u = 0; u < v->n_uses && !outside; u++)
                outside = v->uses[u].node->scratch != 1;
            if (!outside)
                continue;
            if (n_outs == cap_outs) {
                cap_outs = cap_outs ? cap_outs * 2 : 8;
                yg_ir_value **p = realloc(outs, (size_t)cap_outs * sizeof *p);
                if (p == NULL) {
                    st = yg__fail(YG_ERR_OUT_OF_MEMORY, "outline: out of memory");
                    break;
                }
                outs = p;
            }
            outs[n_outs++] = yg__ir_graph_find(sub, v->name, strlen(v->name));
        }
    }
    if (st == YG_OK)
        st = yg_graph_set_outputs(sub, outs, n_outs);
    for (int32_t i = 0; i < len; i++)
        nodes[i]->scratch = 0;
    free(outs);
    if (st != YG_OK) {
        yg_graph_release(sub);
        return st;
    }
    *out = sub;
    return YG_OK;
}

yg_status yg__pass_holder(yg_graph *g, const char *kind, const yg_graph *sub, int32_t n_outputs,
                          yg_ir_node *before, yg_ir_node **out) {
    yg_ir_node *h = NULL;
    *out = NULL;
    YG_RETURN_IF_ERROR(yg__ir_node_create(g, kind, NULL, n_outputs, false, &h));
    yg__ir_node_move_before(h, before);
    yg_status st = YG_OK;
    for (int32_t i = 0; st == YG_OK && i < sub->param->n_outputs; i++) {
        const char *name = sub->param->outputs[i]->name;
        st = yg__ir_node_add_input(h, yg__ir_graph_find(g, name, strlen(name)));
    }
    if (st != YG_OK) {
        for (int32_t i = 0; i < h->n_inputs; i++)
            yg__ir_value_remove_use(h->inputs[i], h, i);
        h->n_inputs = 0;
        yg__ir_node_destroy(h);
        return st;
    }
    *out = h;
    return YG_OK;
}

yg_status yg__pass_replace_region(yg_graph *g, yg_ir_node *const *nodes, int32_t len,
                                  const yg_graph *sub, yg_ir_node *h) {
    for (int32_t k = 0; k < sub->ret->n_inputs; k++) {
        const char *name = sub->ret->inputs[k]->name;
        yg_ir_value *v = yg__ir_graph_find(g, name, strlen(name));
        h->outputs[k]->scratch = v->scratch;
        YG_RETURN_IF_ERROR(yg__ir_value_replace_all_uses(v, h->outputs[k]));
    }
    for (int32_t i = len - 1; i >= 0; i--)
        yg__ir_node_destroy(nodes[i]);
    return YG_OK;
}
