/*
 * sym_rnn.c - lstm_cell, lstm_cell_gates, gru_cell,
 * scaled_dot_product_attention and flash_attention decomposed into ONNX
 * operators, as the
 * composites of runtime/composite/ compute them (PyTorch's gate orders:
 * LSTM [i f g o], GRU [r z n]).  Not ONNX's LSTM/GRU operators: those run
 * whole sequences with their own weight layouts, and a cell traced as one
 * node is one step.  The gates are split with Split along the last axis
 * into equal parts (opset 13's Split without a `split` input), so no size
 * is pinned and the batch stays dynamic.
 */
#include "jit/ir/boxing.h"
#include "onnx/onnx_gen.h"
#include "onnx/onnx_int.h"

#include <math.h>
#include <string.h>

/* Whether node's input i is absent (None, or past its inputs). */
static bool is_none(const yg_ir_node *node, int64_t i) {
    return i < 0 || i >= node->n_inputs || node->inputs[i]->type.kind == YG_IR_TYPE_NONE;
}

static const char *in(yg_onnx_ctx *cx, const yg_ir_node *node, int64_t i) {
    return is_none(node, i) ? NULL : yg__onnx_input_name_of(cx, node, i);
}

/* Splits t into n equal parts along the last axis. */
static yg_status
split_last(yg_onnx_ctx *cx, const yg_ir_node *node, const char *t, int n, const char **parts) {
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Split", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, t));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "axis", -1));
    for (int k = 0; k < n; k++)
        YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "gate", &parts[k]));
    return YG_OK;
}

/* hy, cy from the summed gate projections (node outputs 0 and 1). */
static yg_status
lstm_gates(yg_onnx_ctx *cx, const yg_ir_node *node, const char *gates, const char *c) {
    const char *g[4], *i = NULL, *f = NULL, *gg = NULL, *o = NULL, *fc = NULL, *ig = NULL,
                      *tc = NULL;
    YG_RETURN_IF_ERROR(split_last(cx, node, gates, 4, g));
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Sigmoid", g[0], NULL, &i));
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Sigmoid", g[1], NULL, &f));
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Tanh", g[2], NULL, &gg));
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Sigmoid", g[3], NULL, &o));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", f, c, NULL, &fc));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", i, gg, NULL, &ig));
    YG_RETURN_IF_ERROR(
        yg__onnx_binary(cx, node, "Add", fc, ig, yg__onnx_output_name_of(node, 1), NULL));
    YG_RETURN_IF_ERROR(
        yg__onnx_unary(cx, node, "Tanh", yg__onnx_output_name_of(node, 1), NULL, &tc));
    return yg__onnx_binary(cx, node, "Mul", o, tc, yg__onnx_output_name_of(node, 0), NULL);
}

static yg_status rank_of(yg_onnx_ctx *cx, const yg_ir_node *node, int64_t i, int32_t *rank) {
    yg_ir_type t = yg__onnx_input_type(node, i);
    if (t.kind != YG_IR_TYPE_TENSOR || t.ndim < 0)
        return yg__onnx_unsupported(cx, node, "input %lld has an unknown rank", (long long)i);
    *rank = t.ndim;
    return YG_OK;
}

yg_status yg__onnx_sym_lstm_cell(yg_onnx_ctx *cx, const yg_ir_node *node) {
    const char *pi = NULL, *ph = NULL, *gates = NULL;
    int32_t rank = 0;
    YG_RETURN_IF_ERROR(rank_of(cx, node, 0, &rank));
    YG_RETURN_IF_ERROR(yg__onnx_linear(
        cx, node, in(cx, node, 0), rank, in(cx, node, 3), in(cx, node, 5), NULL, &pi));
    YG_RETURN_IF_ERROR(yg__onnx_linear(
        cx, node, in(cx, node, 1), rank, in(cx, node, 4), in(cx, node, 6), NULL, &ph));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Add", pi, ph, NULL, &gates));
    return lstm_gates(cx, node, gates, in(cx, node, 2));
}

yg_status yg__onnx_sym_lstm_cell_gates(yg_onnx_ctx *cx, const yg_ir_node *node) {
    const char *gates = NULL;
    YG_RETURN_IF_ERROR(
        yg__onnx_binary(cx, node, "Add", in(cx, node, 0), in(cx, node, 1), NULL, &gates));
    return lstm_gates(cx, node, gates, in(cx, node, 2));
}

yg_status yg__onnx_sym_gru_cell(yg_onnx_ctx *cx, const yg_ir_node *node) {
    const char *pi = NULL, *ph = NULL, *gi[3], *gh[3];
    const char *rs = NULL, *r = NULL, *zs = NULL, *z = NULL, *rn = NULL, *ns = NULL, *n = NULL,
               *diff = NULL, *zd = NULL;
    int32_t rank = 0;
    YG_RETURN_IF_ERROR(rank_of(cx, node, 0, &rank));
    YG_RETURN_IF_ERROR(yg__onnx_linear(
        cx, node, in(cx, node, 0), rank, in(cx, node, 2), in(cx, node, 4), NULL, &pi));
    YG_RETURN_IF_ERROR(yg__onnx_linear(
        cx, node, in(cx, node, 1), rank, in(cx, node, 3), in(cx, node, 5), NULL, &ph));
    YG_RETURN_IF_ERROR(split_last(cx, node, pi, 3, gi));
    YG_RETURN_IF_ERROR(split_last(cx, node, ph, 3, gh));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Add", gi[0], gh[0], NULL, &rs));
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Sigmoid", rs, NULL, &r));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Add", gi[1], gh[1], NULL, &zs));
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Sigmoid", zs, NULL, &z));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", r, gh[2], NULL, &rn));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Add", gi[2], rn, NULL, &ns));
    YG_RETURN_IF_ERROR(yg__onnx_unary(cx, node, "Tanh", ns, NULL, &n));
    /* (1 - z) n + z hx = n + z (hx - n), as the composite computes it */
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Sub", in(cx, node, 1), n, NULL, &diff));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", z, diff, NULL, &zd));
    return yg__onnx_binary(cx, node, "Add", n, zd, yg__onnx_output_name_of(node, 0), NULL);
}

/* The causal mask of a dynamic L or S (dims.c): -inf where column j >
 * row i, computed as Greater(Range(S), Range(L) as a column). */
static yg_status causal_where(yg_onnx_ctx *cx,
                              const yg_ir_node *node,
                              const yg_onnx_dim *L,
                              const yg_onnx_dim *S,
                              int32_t dtype,
                              const char **scores) {
    const char *rows = NULL, *cols = NULL, *col_shape = NULL, *rows2 = NULL, *above = NULL,
               *ninf = NULL;
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(yg__onnx_dim_range(cx, node, L, NULL, &rows));
    YG_RETURN_IF_ERROR(yg__onnx_dim_range(cx, node, S, NULL, &cols));
    YG_RETURN_IF_ERROR(yg__onnx_const_ints(cx, (const int64_t[]){-1, 1}, 2, &col_shape));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Reshape", rows, col_shape, NULL, &rows2));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Greater", cols, rows2, NULL, &above));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, dtype, -INFINITY, &ninf));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Where", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, above));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, ninf));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, *scores));
    return yg__onnx_output_fresh(cx, o, node, "causal", scores);
}

/* softmax(q k^T scale [+ mask]) v into the node's output 0 (the mask:
 * input 3 when there is one); a causal mask is a constant [L, S] of 0
 * and -inf added to the scores, or, when L or S is dynamic, a Where over
 * a mask computed from their Ranges.  *scores_out: the masked scores. */
static yg_status attention(yg_onnx_ctx *cx, const yg_ir_node *node, const char **scores_out) {
    bool causal = false;
    double scale_buf = 0;
    const double *scale = NULL;
    yg_onnx_node *o = NULL;
    const char *kt = NULL, *raw = NULL, *s = NULL, *scores = NULL, *attn = NULL;
    int32_t qr = 0, kr = 0;
    YG_RETURN_IF_ERROR(yg__box_bool(node, "is_causal", &(const bool){false}, &causal));
    YG_RETURN_IF_ERROR(yg__box_double_opt(node, "scale", NULL, &scale_buf, &scale));
    YG_RETURN_IF_ERROR(rank_of(cx, node, 0, &qr));
    YG_RETURN_IF_ERROR(rank_of(cx, node, 1, &kr));
    yg_ir_type q = yg__onnx_input_type(node, 0), k = yg__onnx_input_type(node, 1);
    if (qr < 2 || kr < 2 || q.sizes[qr - 1] < 0 || q.dtype == YG_IR_UNKNOWN)
        return yg__onnx_unsupported(cx, node, "query and key need rank >= 2 and a known E");
    int64_t perm[YG_MAX_DIMS];
    for (int32_t d = 0; d < kr; d++)
        perm[d] = d;
    perm[kr - 2] = kr - 1;
    perm[kr - 1] = kr - 2;
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Transpose", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, in(cx, node, 1)));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "perm", perm, kr));
    YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "kt", &kt));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "MatMul", in(cx, node, 0), kt, NULL, &raw));
    double sc =
        scale != NULL ? *scale : 1 / sqrt((double)(q.sizes[qr - 1] > 0 ? q.sizes[qr - 1] : 1));
    YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, q.dtype, sc, &s));
    YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Mul", raw, s, NULL, &scores));
    const yg_onnx_dim *qd = yg__onnx_value_dims(cx, node->inputs[0]);
    const yg_onnx_dim *kd = yg__onnx_value_dims(cx, node->inputs[1]);
    if (causal && qd != NULL && kd != NULL &&
        (yg__onnx_dim_is_symbolic(&qd[qr - 2]) || yg__onnx_dim_is_symbolic(&kd[kr - 2]))) {
        YG_RETURN_IF_ERROR(causal_where(cx, node, &qd[qr - 2], &kd[kr - 2], q.dtype, &scores));
    } else if (causal) {
        int64_t L = q.sizes[qr - 2], S = k.sizes[kr - 2];
        if (L < 0 || S < 0 || q.dtype != YG_FLOAT32 || L * S > (1 << 24))
            return yg__onnx_unsupported(cx, node, "is_causal needs known L and S and float32");
        float *mask = yg__onnx_alloc(cx, (size_t)(L * S + 1) * sizeof *mask);
        const char *mname = yg__onnx_fresh_name(cx, "const", "causal");
        if (mask == NULL || mname == NULL)
            return yg__fail(YG_ERR_OUT_OF_MEMORY, "onnx_export: out of memory");
        for (int64_t i = 0; i < L; i++)
            for (int64_t j = 0; j < S; j++)
                mask[i * S + j] = j > i ? -INFINITY : 0.0f;
        YG_RETURN_IF_ERROR(yg__onnx_add_initializer(cx,
                                                    mname,
                                                    YG_FLOAT32,
                                                    (const int64_t[]){L, S},
                                                    2,
                                                    mask,
                                                    (size_t)(L * S) * sizeof *mask));
        YG_RETURN_IF_ERROR(yg__onnx_binary(cx, node, "Add", scores, mname, NULL, &scores));
    }
    if (!is_none(node, 3)) {
        yg_ir_type m = yg__onnx_input_type(node, 3);
        if (m.dtype == YG_BOOL) {
            const char *ninf = NULL;
            YG_RETURN_IF_ERROR(yg__onnx_const_scalar(cx, q.dtype, -INFINITY, &ninf));
            YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Where", &o));
            YG_RETURN_IF_ERROR(yg__onnx_input(cx, o, node, 3));
            YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, scores));
            YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, ninf));
            YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "masked", &scores));
        } else {
            YG_RETURN_IF_ERROR(
                yg__onnx_binary(cx, node, "Add", scores, in(cx, node, 3), NULL, &scores));
        }
    }
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "Softmax", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, scores));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "axis", -1));
    YG_RETURN_IF_ERROR(yg__onnx_output_fresh(cx, o, node, "attn", &attn));
    *scores_out = scores;
    return yg__onnx_binary(
        cx, node, "MatMul", attn, in(cx, node, 2), yg__onnx_output_name_of(node, 0), NULL);
}

yg_status yg__onnx_sym_scaled_dot_product_attention(yg_onnx_ctx *cx, const yg_ir_node *node) {
    const char *scores = NULL;
    return attention(cx, node, &scores);
}

/* flash_attention as scaled_dot_product_attention without a mask (ONNX
 * has no tiles to keep; onnxruntime fuses the pattern itself where it
 * can), and its logsumexp as ReduceLogSumExp of the masked scores over
 * the last axis. */
yg_status yg__onnx_sym_flash_attention(yg_onnx_ctx *cx, const yg_ir_node *node) {
    const char *scores = NULL;
    yg_onnx_node *o = NULL;
    YG_RETURN_IF_ERROR(attention(cx, node, &scores));
    YG_RETURN_IF_ERROR(yg__onnx_node_new(cx, node, "ReduceLogSumExp", &o));
    YG_RETURN_IF_ERROR(yg__onnx_input_name(cx, o, scores));
    YG_RETURN_IF_ERROR(yg__onnx_attr_ints(cx, o, "axes", (const int64_t[]){-1}, 1));
    YG_RETURN_IF_ERROR(yg__onnx_attr_int(cx, o, "keepdims", 0));
    return yg__onnx_output(cx, o, node, 1);
}
