/*
 * sym_index.c - symbolics of advanced indexing, index and index_put.
 *
 * self[indices] with integer index tensors on dims D (in order) is
 * GatherND over self with the dims of D moved first, reading the index
 * tensors broadcast together to B and stacked on a last axis ([B..., k]);
 * its result is [B..., the other dims].  NumPy's rule puts B where the
 * indexed dims were when they are adjacent and not first, so the result
 * is transposed there.  One integer index alone is a plain Gather.  A
 * boolean mask over dims j..j+k-1 (alone) indexes by its true positions:
 * Transpose(NonZero(mask)) is the [N, k] index.  Negative indices count
 * from the end of their dim (Where(idx < 0, idx + size, idx)).
 *
 * index_put writes values (broadcast to what self[indices] would be) at
 * the same positions: ScatterND over the same moved self and index, with
 * reduction "add" for accumulate (ONNX 16), and the result moved back.
 */
#include "jit/ir/boxing.h"
#include "onnx/onnx_gen.h"
#include "onnx/onnx_int.h"

#include <string.h>

typedef struct index_plan {
    int32_t rank;                 /* self's */
    int32_t k;                    /* indexed dims */
    int32_t first;                /* the first of them */
    bool adjacent;                /* consecutive dims */
    int32_t nb;                   /* rank of B */
    int64_t perm[YG_MAX_DIMS];    /* data's dims from self's */
    bool moved;                   /* perm is not the identity */
    const char *data, *indices;   /* self moved; int64 [B..., k] */
} index_plan;

/* Where(idx < 0, idx + size of self's dim d, idx) of index input i, as int64. */
static yg_status
normalized(yg_onnx_ctx *cx, const yg_ir_node *node, int32_t i, int32_t d, const char **out) {
    yg_ir_type t = yg__onnx_input_type(node, i);
    yg_ir_type self = yg__onnx_input_type(node, 0);
    const yg_onnx_dim *dims = yg__onnx_value_dims(cx, node->inputs[0]);
    const char *idx = yg__onnx_input_name_of(cx, node, i), *size = NULL, *zero = NULL,
               *neg = NULL, *wrapped = NULL;
    yg_onnx_node *o = NULL;
    if (t.dtype != YG_INT64) {
        YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Cast", &o));
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, idx));
        YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "to", yg__onnx_dtype(YG_INT64)));
        YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "idx", &idx));
    }
    if (dims != NULL && yg__onnx_dim_is_symbolic(&dims[d]))
        YG_RETURN_IF_ERROR(yg__onnx_dim_value(cx, node, &dims[d], true, &size));
    else if (self.sizes[d] >= 0)
        YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, YG_INT64, (double)self.sizes[d], &size));
    else
        return yg__onnx_unsupported(cx, node, "the size of dim %d is unknown", (int)d);
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, YG_INT64, 0, &zero));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Less", idx, zero, NULL, &neg));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Add", idx, size, NULL, &wrapped));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Where", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, neg));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, wrapped));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, idx));
    return yg__onnx_output_fresh(cx, o, node, "idx", out);
}

/* The [B..., k] index of integer index inputs at dims d[0..k-1]
 * (inputs first_input + d[j]). */
static yg_status stacked(yg_onnx_ctx *cx,
                         const yg_ir_node *node,
                         const int32_t *d,
                         int32_t k,
                         int32_t first_input,
                         const char **out) {
    const char *idx[YG_MAX_DIMS], *zero = NULL, *acc = NULL, *shape = NULL;
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, YG_INT64, 0, &zero));
    for (int32_t j = 0; j < k; j++) {
        const char *z = NULL;
        YG_RETURN_IF_ERROR(normalized(cx, node, first_input + d[j], d[j], &idx[j]));
        /* B's shape: Shape of the sum of every index times 0 */
        YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", idx[j], zero, NULL, &z));
        if (acc == NULL)
            acc = z;
        else
            YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Add", acc, z, NULL, &acc));
    }
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Shape", acc, NULL, &shape));
    for (int32_t j = 0; j < k; j++) { /* each broadcast to B, as a column */
        const char *wide = NULL;
        YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Expand", idx[j], shape, NULL, &wide));
        YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Unsqueeze", &o));
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, wide));
        YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, (const int64_t[]){-1}, 1));
        YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "col", &idx[j]));
    }
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Concat", &o));
    for (int32_t j = 0; j < k; j++)
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, idx[j]));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "axis", -1));
    return yg__onnx_output_fresh(cx, o, node, "indices", out);
}

/* The plan of node's indices: inputs 1..n_index (None, integer tensors,
 * or one boolean mask alone). */
static yg_status plan_of(yg_onnx_ctx *cx, const yg_ir_node *node, int32_t n_index, index_plan *p) {
    yg_ir_type self = yg__onnx_input_type(node, 0);
    int32_t d[YG_MAX_DIMS], nb = 0, mask_at = -1, dim = 0;
    yg_onnx_node *o = NULL;
    memset(p, 0, sizeof *p);
    if (self.kind != YG_IR_TYPE_TENSOR || self.ndim == YG_IR_UNKNOWN)
        return yg__onnx_unsupported(cx, node, "self's rank is unknown");
    p->rank = self.ndim;
    for (int32_t i = 1; i <= n_index; i++) {
        yg_ir_type t = yg__onnx_input_type(node, i);
        if (t.kind == YG_IR_TYPE_NONE) {
            dim++;
            continue;
        }
        if (t.ndim == YG_IR_UNKNOWN || t.dtype == YG_IR_UNKNOWN)
            return yg__onnx_unsupported(cx, node, "index %d has an unknown type", (int)(i - 1));
        if (t.dtype == YG_BOOL) {
            if (mask_at >= 0 || p->k > 0)
                return yg__onnx_unsupported(
                    cx, node, "a boolean mask with other index tensors; not written yet");
            mask_at = i;
            for (int32_t j = 0; j < t.ndim; j++)
                d[p->k++] = dim++;
            nb = 1;
            continue;
        }
        if (mask_at >= 0)
            return yg__onnx_unsupported(
                cx, node, "a boolean mask with other index tensors; not written yet");
        if (t.dtype != YG_INT64 && t.dtype != YG_INT32)
            return yg__onnx_unsupported(
                cx, node, "index %d is not an integer or boolean tensor", (int)(i - 1));
        d[p->k++] = dim++;
        nb = t.ndim > nb ? t.ndim : nb;
    }
    if (p->k == 0)
        return yg__onnx_unsupported(cx, node, "no index tensor");
    if (dim > p->rank)
        return yg__onnx_unsupported(cx, node, "more indices than self's %d dims", (int)p->rank);
    p->nb = nb;
    p->first = d[0];
    p->adjacent = d[p->k - 1] - d[0] == p->k - 1;
    /* data: the indexed dims first */
    int32_t n = 0;
    for (int32_t j = 0; j < p->k; j++)
        p->perm[n++] = d[j];
    for (int32_t a = 0; a < p->rank; a++) {
        bool indexed = false;
        for (int32_t j = 0; j < p->k; j++)
            indexed = indexed || d[j] == a;
        if (!indexed)
            p->perm[n++] = a;
    }
    for (int32_t a = 0; a < p->rank; a++)
        p->moved = p->moved || p->perm[a] != a;
    p->data = yg__onnx_input_name_of(cx, node, 0);
    if (p->moved) {
        YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Transpose", &o));
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, p->data));
        YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "perm", p->perm, p->rank));
        YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "data", &p->data));
    }
    if (mask_at < 0) /* index input 1 + d reads dim d */
        return stacked(cx, node, d, p->k, 1, &p->indices);
    const char *nz = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "NonZero", yg__onnx_input_name_of(cx, node, mask_at),
                                      NULL, &nz));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Transpose", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, nz));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "perm", (const int64_t[]){1, 0}, 2));
    return yg__onnx_output_fresh(cx, o, node, "indices", &p->indices);
}

/* The permutation from GatherND's [B..., other dims] to NumPy's order:
 * B after the first plan->first other dims when the indexed dims are
 * adjacent and not first; false when it is the identity. */
static bool numpy_order(const index_plan *p, int64_t *perm) {
    const int32_t out_rank = p->nb + p->rank - p->k;
    if (!p->adjacent || p->first == 0)
        return false;
    int32_t n = 0;
    for (int32_t a = 0; a < p->first; a++)
        perm[n++] = p->nb + a;
    for (int32_t a = 0; a < p->nb; a++)
        perm[n++] = a;
    for (int32_t a = p->nb + p->first; a < out_rank; a++)
        perm[n++] = a;
    return true;
}

/* GatherND(plan's data, indices) in NumPy's order, into out_name (NULL:
 * fresh, in *out). */
static yg_status gathered(yg_onnx_ctx *cx,
                          const yg_ir_node *node,
                          const index_plan *p,
                          const char *out_name,
                          const char **out) {
    int64_t perm[2 * YG_MAX_DIMS];
    yg_onnx_node *o = NULL;
    const char *g = NULL;
    const bool reorder = numpy_order(p, perm);
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "GatherND", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, p->data));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, p->indices));
    if (!reorder && out_name != NULL)
        return yg__onnx_output_named(cx, o, out_name);
    YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "gathered", &g));
    if (!reorder) {
        *out = g;
        return YG_OK;
    }
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Transpose", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, g));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "perm", perm, p->nb + p->rank - p->k));
    if (out_name != NULL)
        return yg__onnx_output_named(cx, o, out_name);
    return yg__onnx_output_fresh(cx, o, node, "gathered", out);
}

/* Transpose(in) by the inverse of perm (n entries). */
static yg_status inverse_transpose(yg_onnx_ctx *cx,
                                   const yg_ir_node *node,
                                   const char *in,
                                   const int64_t *perm,
                                   int32_t n,
                                   const char *out_name,
                                   const char **out) {
    int64_t inv[2 * YG_MAX_DIMS];
    yg_onnx_node *o = NULL;
    for (int32_t a = 0; a < n; a++)
        inv[perm[a]] = a;
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Transpose", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, in));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "perm", inv, n));
    if (out_name != NULL)
        return yg__onnx_output_named(cx, o, out_name);
    return yg__onnx_output_fresh(cx, o, node, "moved", out);
}

yg_status yg__onnx_sym_index(yg_onnx_ctx *cx, const yg_ir_node *node) {
    index_plan p;
    int32_t n_int = 0, at = -1;
    for (int32_t i = 1; i < node->n_inputs; i++) {
        yg_ir_type t = yg__onnx_input_type(node, i);
        if (t.kind != YG_IR_TYPE_NONE && (t.dtype == YG_INT64 || t.dtype == YG_INT32) &&
            t.ndim != YG_IR_UNKNOWN)
            n_int++, at = i;
        else if (t.kind != YG_IR_TYPE_NONE)
            n_int = -node->n_inputs; /* a mask or an unknown: the general path */
    }
    if (n_int == 1) { /* one integer index: Gather on its dim (its dims replace it) */
        const char *idx = NULL;
        yg_onnx_node *o = NULL;
        YG_RETURN_IF_ERROR(normalized(cx, node, at, at - 1, &idx));
        YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Gather", &o));
        YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, idx));
        YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "axis", at - 1));
        return yg__onnx_outputs(cx, o, node);
    }
    YG_RETURN_IF_ERROR(plan_of(cx, node, node->n_inputs - 1, &p));
    return gathered(cx, node, &p, yg__onnx_output_name_of(node, 0), NULL);
}

yg_status yg__onnx_sym_index_put(yg_onnx_ctx *cx, const yg_ir_node *node) {
    index_plan p;
    bool accumulate = false;
    int64_t perm[2 * YG_MAX_DIMS];
    const int32_t v = node->n_inputs - 1;
    const char *g = NULL, *shape = NULL, *values = NULL, *scattered = NULL;
    yg_onnx_node *o = NULL;
    yg_ir_type self = yg__onnx_input_type(node, 0), vt = yg__onnx_input_type(node, v);
    YG_RETURN_IF_ERROR(yg__box_bool(node, "accumulate", &(const bool){false}, &accumulate));
    if (accumulate && yg__onnx_opset(cx) < 16)
        return yg__onnx_require_opset(cx, node, "ScatterND reduction=add", 16);
    if (self.dtype == YG_IR_UNKNOWN || vt.dtype == YG_IR_UNKNOWN)
        return yg__onnx_unsupported(cx, node, "self's or values' dtype is unknown");
    YG_RETURN_IF_ERROR(plan_of(cx, node, v - 1, &p));
    /* values broadcast to self[indices], then in GatherND's order */
    YG_RETURN_IF_ERROR(gathered(cx, node, &p, NULL, &g));
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Shape", g, NULL, &shape));
    values = yg__onnx_input_name_of(cx, node, v);
    if (vt.dtype != self.dtype) {
        YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Cast", &o));
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, values));
        YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "to", yg__onnx_dtype(self.dtype)));
        YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "values", &values));
    }
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Expand", values, shape, NULL, &values));
    if (numpy_order(&p, perm))
        YG_RETURN_IF_ERROR(inverse_transpose(
            cx, node, values, perm, p.nb + p.rank - p.k, NULL, &values));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "ScatterND", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, p.data));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, p.indices));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, values));
    if (accumulate)
        YG_RETURN_IF_ERROR(yg__onnx_attr_str(cx, o, "reduction", "add"));
    if (!p.moved)
        return yg__onnx_outputs(cx, o, node);
    YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "scattered", &scattered));
    return inverse_transpose(
        cx, node, scattered, p.perm, p.rank, yg__onnx_output_name_of(node, 0), NULL);
}
