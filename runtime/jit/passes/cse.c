/*
 * cse.c - common subexpression elimination: a node equal to an earlier
 * one (same kind, same input values, same attributes) is replaced by it.
 *
 * The graph is straight-line, so an earlier equal node always dominates
 * the later one and its outputs can stand in for the later node's.  Nodes
 * are looked up in a hash table keyed by kind, inputs and attributes;
 * equality is then checked field by field (yg__ir_attr_equal compares
 * floats by their bits, so 0.0 and -0.0 stay apart).
 *
 * What is never merged: nodes with side effects (two add_ calls write
 * twice); nodes reading or producing a value that something mutates
 * (yg__pass_mark_mutated): neg(x) before and after add_(x, y) differ, and
 * two results merged into one would share a later in-place write;
 * nodes holding subgraphs (compared by identity only, so never equal);
 * prim::Constant, which constant pooling merges by value.
 */
#include "jit/passes/passes.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}

static uint64_t hash_attr(const yg_ir_attr *a) {
    uint64_t h = mix((uint64_t)a->kind, (uint64_t)strlen(a->name));
    for (const char *p = a->name; *p != '\0'; p++)
        h = mix(h, (unsigned char)*p);
    switch (a->kind) {
    case YG_IR_ATTR_INT:
        return mix(h, (uint64_t)a->u.i);
    case YG_IR_ATTR_FLOAT: {
        uint64_t bits;
        memcpy(&bits, &a->u.f, sizeof bits);
        return mix(h, bits);
    }
    case YG_IR_ATTR_INTS:
        for (int64_t i = 0; i < a->u.ints.len; i++)
            h = mix(h, (uint64_t)a->u.ints.items[i]);
        return h;
    case YG_IR_ATTR_FLOATS:
        return mix(h, (uint64_t)a->u.floats.len);
    case YG_IR_ATTR_STR:
        for (const char *p = a->u.s; *p != '\0'; p++)
            h = mix(h, (unsigned char)*p);
        return h;
    default:
        return h;
    }
}

static uint64_t hash_node(const yg_ir_node *n) {
    uint64_t h = mix(0, (uint64_t)(uintptr_t)n->kind);
    for (int32_t i = 0; i < n->n_inputs; i++)
        h = mix(h, (uint64_t)(uintptr_t)n->inputs[i]);
    for (int32_t i = 0; i < n->n_attrs; i++)
        h = mix(h, hash_attr(&n->attrs[i]));
    return h;
}

static bool nodes_equal(const yg_ir_node *a, const yg_ir_node *b) {
    if (a->kind != b->kind || a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs ||
        a->n_attrs != b->n_attrs)
        return false;
    for (int32_t i = 0; i < a->n_inputs; i++) {
        if (a->inputs[i] != b->inputs[i])
            return false;
    }
    for (int32_t i = 0; i < a->n_attrs; i++) {
        if (!yg__ir_attr_equal(&a->attrs[i], &b->attrs[i]))
            return false;
    }
    return true;
}

static bool candidate(const yg_ir_node *n) {
    if (n->kind == yg__prim_constant || yg__ir_node_has_side_effects(n))
        return false;
    for (int32_t i = 0; i < n->n_attrs; i++) {
        if (n->attrs[i].kind == YG_IR_ATTR_GRAPH)
            return false;
    }
    for (int32_t i = 0; i < n->n_inputs; i++) {
        if (n->inputs[i]->scratch != 0)
            return false;
    }
    for (int32_t i = 0; i < n->n_outputs; i++) {
        if (n->outputs[i]->scratch != 0)
            return false;
    }
    return true;
}

static yg_status cse(yg_graph *g, int depth) {
    bool any = false;
    yg_ir_node **table = NULL;
    uint64_t cap = 16, mask;
    YG_RETURN_IF_ERROR(yg__pass_mark_mutated(g, "cse", &any));
    while (cap < (uint64_t)g->n_nodes * 2)
        cap *= 2;
    mask = cap - 1;
    table = calloc(cap, sizeof *table);
    if (table == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "cse: out of memory");
    for (yg_ir_node *n = g->first, *next; n != NULL; n = next) {
        next = n->next;
        if (!candidate(n))
            continue;
        uint64_t j = hash_node(n) & mask;
        while (table[j] != NULL && !nodes_equal(table[j], n))
            j = (j + 1) & mask;
        if (table[j] == NULL) {
            table[j] = n;
            continue;
        }
        for (int32_t i = 0; i < n->n_outputs; i++) {
            yg_status st = yg__ir_value_replace_all_uses(n->outputs[i], table[j]->outputs[i]);
            if (st != YG_OK) {
                free(table);
                return st;
            }
        }
        yg__ir_node_destroy(n);
    }
    free(table);
    for (yg_ir_node *n = g->first; n != NULL; n = n->next) {
        for (int32_t i = 0; i < n->n_attrs; i++) {
            if (n->attrs[i].kind == YG_IR_ATTR_GRAPH && depth < 256)
                YG_RETURN_IF_ERROR(cse(n->attrs[i].u.g, depth + 1));
        }
    }
    return YG_OK;
}

yg_status yg_graph_eliminate_common_subexpressions(yg_graph *g) {
    if (g == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "cse: graph is NULL");
    YG_RETURN_IF_ERROR(cse(g, 0));
    return yg__ir_check_after_pass(g, "cse");
}
