/*
 * sym_shape.c - handwritten ONNX symbolics of the view and join/split
 * ops (`onnx: custom` in native_functions.yaml): their ONNX forms need
 * arguments rewritten (negative dims normalised by the input's rank,
 * expand's -1, chunk's piece sizes read from the output types), which
 * the mapping language does not express.  Each needs the ranks or sizes
 * it reads to be known in the graph's types (a trace knows them all) and
 * otherwise fails naming the node.
 */
#include "jit/ir/boxing.h"
#include "onnx/onnx_gen.h"
#include "onnx/onnx_int.h"

#include <string.h>

/* The known rank of node's input i, or a failure naming the node. */
static yg_status input_rank(yg_onnx_ctx *cx, const yg_ir_node *node, int64_t i, int32_t *rank) {
    yg_ir_type t = yg__onnx_input_type(node, i);
    if (t.kind != YG_IR_TYPE_TENSOR || t.ndim < 0)
        return yg__onnx_unsupported(cx, node, "input %lld has an unknown rank", (long long)i);
    *rank = t.ndim;
    return YG_OK;
}

static int64_t wrap(int64_t d, int64_t rank) {
    return d < 0 ? d + rank : d;
}

static yg_status
transpose(yg_onnx_ctx *cx, const yg_ir_node *node, const int64_t *perm, int64_t rank) {
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Transpose", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "perm", perm, rank));
    return yg__onnx_outputs(cx, o, node);
}

static yg_status identity(yg_onnx_ctx *cx, const yg_ir_node *node) {
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Identity", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    return yg__onnx_outputs(cx, o, node);
}

yg_status yg__onnx_sym_t(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int32_t rank = 0;
    YG_RETURN_IF_ERROR(input_rank(cx, node, 0, &rank));
    if (rank < 2)
        return identity(cx, node);
    return transpose(cx, node, (const int64_t[]){1, 0}, 2);
}

yg_status yg__onnx_sym_transpose(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int64_t d0 = 0, d1 = 0, perm[YG_MAX_DIMS];
    int32_t rank = 0;
    YG_RETURN_IF_ERROR(yg__box_int(node, "dim0", NULL, &d0));
    YG_RETURN_IF_ERROR(yg__box_int(node, "dim1", NULL, &d1));
    YG_RETURN_IF_ERROR(input_rank(cx, node, 0, &rank));
    if (rank == 0)
        return identity(cx, node);
    d0 = wrap(d0, rank);
    d1 = wrap(d1, rank);
    if (d0 < 0 || d0 >= rank || d1 < 0 || d1 >= rank)
        return yg__onnx_unsupported(cx, node, "dims out of range for rank %d", (int)rank);
    for (int32_t d = 0; d < rank; d++)
        perm[d] = d;
    perm[d0] = d1;
    perm[d1] = d0;
    return transpose(cx, node, perm, rank);
}

yg_status yg__onnx_sym_permute(yg_onnx_ctx *cx, const yg_ir_node *node) {
    yg_box_ints dims = {0};
    int64_t perm[YG_MAX_DIMS];
    int32_t rank = 0;
    YG_RETURN_IF_ERROR(yg__box_ints(node, "dims", NULL, YG_BOX_REQUIRED, 0, &dims));
    YG_RETURN_IF_ERROR(input_rank(cx, node, 0, &rank));
    if (dims.len != rank)
        return yg__onnx_unsupported(
            cx, node, "%lld dims for rank %d", (long long)dims.len, (int)rank);
    for (int32_t d = 0; d < rank; d++)
        perm[d] = wrap(dims.items[d], rank);
    return transpose(cx, node, perm, rank);
}

/* Reshape(self, shape): a 0 in shape would mean "copy the input's dim"
 * in ONNX (allowzero=0), so sizes of 0 are refused.  A size that is the
 * input's dim at the same position is written as 0, ONNX's "copy this
 * dim"; other dynamic sizes (dims.c) are computed from the inputs'
 * shapes, so view(x, [B * T, C]) follows both B and T. */
static yg_status reshape(yg_onnx_ctx *cx, const yg_ir_node *node, const char *arg) {
    yg_box_ints size = {0};
    int64_t shape[YG_MAX_DIMS];
    const yg_onnx_dim *forms[YG_MAX_DIMS] = {NULL};
    const char *shape_value = NULL;
    yg_onnx_node *o = NULL;
    yg_ir_type in = yg__onnx_input_type(node, 0);
    const yg_onnx_dim *id = yg__onnx_value_dims(cx, node->inputs[0]);
    const yg_onnx_dim *od = yg__onnx_value_dims(cx, node->outputs[0]);
    YG_RETURN_IF_ERROR(yg__box_ints(node, arg, NULL, YG_BOX_REQUIRED, 0, &size));
    if (size.len > YG_MAX_DIMS)
        return yg__onnx_unsupported(cx, node, "more than %d dims", YG_MAX_DIMS);
    for (int64_t i = 0; i < size.len; i++) {
        if (size.items[i] == 0)
            return yg__onnx_unsupported(cx, node, "a size of 0 means 'copy' to ONNX Reshape");
        shape[i] = size.items[i];
        if (shape[i] < 0 || od == NULL || node->outputs[0]->type.ndim != size.len)
            continue;
        bool copy = id != NULL && i < in.ndim && id[i].value == od[i].value &&
                    id[i].coef == od[i].coef && memcmp(id[i].exp, od[i].exp, sizeof od[i].exp) == 0;
        if (copy)
            shape[i] = 0;
        else if (yg__onnx_dim_is_symbolic(&od[i]))
            forms[i] = &od[i];
    }
    YG_RETURN_IF_ERROR(yg__onnx_shape_value(cx, node, shape, forms, size.len, &shape_value));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Reshape", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, shape_value));
    return yg__onnx_outputs(cx, o, node);
}

yg_status yg__onnx_sym_view(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return reshape(cx, node, "size");
}

yg_status yg__onnx_sym_reshape(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return reshape(cx, node, "shape");
}

/* Expand broadcasts the input against shape, so expand's -1 ("keep") is
 * 1, and so is a size equal to the input's dim it aligns with (from the
 * right): Expand keeps that dim, so it follows a dynamic batch.  A
 * dynamic size that broadcasts a 1 is computed (dims.c). */
yg_status yg__onnx_sym_expand(yg_onnx_ctx *cx, const yg_ir_node *node) {
    yg_box_ints size = {0};
    int64_t shape[YG_MAX_DIMS];
    const yg_onnx_dim *forms[YG_MAX_DIMS] = {NULL};
    const char *shape_value = NULL;
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__box_ints(node, "size", NULL, YG_BOX_REQUIRED, 0, &size));
    if (size.len > YG_MAX_DIMS)
        return yg__onnx_unsupported(cx, node, "more than %d dims", YG_MAX_DIMS);
    yg_ir_type in = yg__onnx_input_type(node, 0);
    const yg_onnx_dim *od = yg__onnx_value_dims(cx, node->outputs[0]);
    for (int64_t i = 0; i < size.len; i++) {
        int64_t d = i - (size.len - in.ndim);
        bool same = in.ndim >= 0 && d >= 0 && in.sizes[d] > 0 && in.sizes[d] == size.items[i];
        shape[i] = size.items[i] < 0 || same ? 1 : size.items[i];
        if (shape[i] != 1 && od != NULL && node->outputs[0]->type.ndim == size.len &&
            yg__onnx_dim_is_symbolic(&od[i]))
            forms[i] = &od[i];
    }
    YG_RETURN_IF_ERROR(yg__onnx_shape_value(cx, node, shape, forms, size.len, &shape_value));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Expand", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, shape_value));
    return yg__onnx_outputs(cx, o, node);
}

/* Reshape to [0 x start_dim, -1, the sizes after end_dim]: the leading 0s
 * copy the input's dims, so a dynamic batch stays dynamic. */
yg_status yg__onnx_sym_flatten(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int64_t start = 0, end = 0, shape[YG_MAX_DIMS + 1];
    int32_t rank = 0, n = 0;
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__box_int(node, "start_dim", &(const int64_t){0}, &start));
    YG_RETURN_IF_ERROR(yg__box_int(node, "end_dim", &(const int64_t){-1}, &end));
    YG_RETURN_IF_ERROR(input_rank(cx, node, 0, &rank));
    yg_ir_type t = yg__onnx_input_type(node, 0);
    if (rank == 0)
        return reshape(cx, node, "start_dim"); /* never: flatten of a 0-d is [1] */
    start = wrap(start, rank);
    end = wrap(end, rank);
    if (start < 0 || end >= rank || start > end)
        return yg__onnx_unsupported(cx, node, "dims out of range for rank %d", (int)rank);
    for (int64_t d = 0; d < start; d++)
        shape[n++] = 0;
    shape[n++] = -1;
    for (int64_t d = end + 1; d < rank; d++) {
        if (t.sizes[d] <= 0)
            return yg__onnx_unsupported(cx, node, "trailing size %lld unknown or 0", (long long)d);
        shape[n++] = t.sizes[d];
    }
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Reshape", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, shape, n));
    return yg__onnx_outputs(cx, o, node);
}

/* Gather with a 0-d index removes the axis, as select does. */
yg_status yg__onnx_sym_select(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int64_t dim = 0, index = 0;
    const char *idx = NULL;
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__box_int(node, "dim", NULL, &dim));
    YG_RETURN_IF_ERROR(yg__box_int(node, "index", NULL, &index));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, YG_INT64, (double)index, &idx));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Gather", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, idx));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "axis", dim));
    return yg__onnx_outputs(cx, o, node);
}

static yg_status slice(yg_onnx_ctx *cx,
                       const yg_ir_node *node,
                       int64_t dim,
                       int64_t start,
                       int64_t end,
                       int64_t step) {
    yg_onnx_node *o = NULL;
    if (step <= 0)
        return yg__onnx_unsupported(cx, node, "step %lld must be positive", (long long)step);
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Slice", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, &start, 1));
    YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, &end, 1));
    YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, &dim, 1));
    YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, &step, 1));
    return yg__onnx_outputs(cx, o, node);
}

yg_status yg__onnx_sym_slice(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int64_t dim = 0, start = 0, end = 0, step = 0;
    YG_RETURN_IF_ERROR(yg__box_int(node, "dim", &(const int64_t){0}, &dim));
    YG_RETURN_IF_ERROR(yg__box_int(node, "start", &(const int64_t){0}, &start));
    YG_RETURN_IF_ERROR(yg__box_int(node, "end", &(const int64_t){INT64_MAX}, &end));
    YG_RETURN_IF_ERROR(yg__box_int(node, "step", &(const int64_t){1}, &step));
    return slice(cx, node, dim, start, end, step);
}

yg_status yg__onnx_sym_narrow(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int64_t dim = 0, start = 0, length = 0;
    YG_RETURN_IF_ERROR(yg__box_int(node, "dim", NULL, &dim));
    YG_RETURN_IF_ERROR(yg__box_int(node, "start", NULL, &start));
    YG_RETURN_IF_ERROR(yg__box_int(node, "length", NULL, &length));
    if (start < 0) {
        yg_ir_type t = yg__onnx_input_type(node, 0);
        int64_t d = t.ndim > 0 ? wrap(dim, t.ndim) : -1;
        if (d < 0 || d >= t.ndim || t.sizes[d] < 0)
            return yg__onnx_unsupported(cx, node, "a negative start needs the dim's size");
        start += t.sizes[d];
    }
    return slice(cx, node, dim, start, start + length, 1);
}

yg_status yg__onnx_sym_stack(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int64_t dim = 0;
    int32_t rank = 0;
    yg_onnx_node *cat = NULL;
    YG_RETURN_IF_ERROR(yg__box_int(node, "dim", &(const int64_t){0}, &dim));
    if (node->n_inputs == 0)
        return yg__onnx_unsupported(cx, node, "no tensors to stack");
    YG_RETURN_IF_ERROR(input_rank(cx, node, 0, &rank));
    dim = wrap(dim, rank + 1);
    const char **names = yg__onnx_alloc(cx, (size_t)node->n_inputs * sizeof *names);
    if (names == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "onnx_export: out of memory");
    for (int32_t i = 0; i < node->n_inputs; i++) {
        yg_onnx_node *u = NULL;
        YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Unsqueeze", &u));
        YG_RETURN_IF_ERROR(yg__onnx_input(cx, u, node, i));
        YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, u, &dim, 1));
        YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, u, node, "unsqueeze", &names[i]));
    }
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Concat", &cat));
    for (int32_t i = 0; i < node->n_inputs; i++)
        YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, cat, names[i]));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, cat, "axis", dim));
    return yg__onnx_outputs(cx, cat, node);
}

/* Split by the sizes the outputs have along dim (chunk, split and
 * split_with_sizes alike), read from the output types. */
static yg_status split_by_outputs(yg_onnx_ctx *cx, const yg_ir_node *node) {
    int64_t dim = 0;
    int32_t rank = 0;
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__box_int(node, "dim", &(const int64_t){0}, &dim));
    YG_RETURN_IF_ERROR(input_rank(cx, node, 0, &rank));
    dim = wrap(dim, rank);
    if (dim < 0 || dim >= rank || node->n_outputs > 4096)
        return yg__onnx_unsupported(cx, node, "dim out of range for rank %d", (int)rank);
    int64_t *sizes = yg__onnx_alloc(cx, (size_t)(node->n_outputs + 1) * sizeof *sizes);
    if (sizes == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "onnx_export: out of memory");
    for (int32_t i = 0; i < node->n_outputs; i++) {
        const yg_ir_type *t = &node->outputs[i]->type;
        if (t->ndim != rank || t->sizes[dim] < 0)
            return yg__onnx_unsupported(cx, node, "output %d has unknown sizes", (int)i);
        sizes[i] = t->sizes[dim];
    }
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Split", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 0));
    YG_RETURN_IF_ERROR(yg__onnx_input_ints(cx, o, sizes, node->n_outputs));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "axis", dim));
    return yg__onnx_outputs(cx, o, node);
}

yg_status yg__onnx_sym_split(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return split_by_outputs(cx, node);
}

yg_status yg__onnx_sym_split_with_sizes(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return split_by_outputs(cx, node);
}

yg_status yg__onnx_sym_chunk(yg_onnx_ctx *cx, const yg_ir_node *node) {
    return split_by_outputs(cx, node);
}
