/*
 * meta/rnn.c - the meta functions of lstm_cell_gates and of its fused
 * gradient (meta/meta.h): their checks and their results, for every
 * device.
 */
#include "decls/layers.h"
#include "meta/meta.h"

#include "core/core.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Checks the operands of lstm_cell_gates (and of its gradient, with the
 * names it has there) and finds rows and h. */
static yg_status check_gates(const char *op,
                             const yg_tensor *ig,
                             const yg_tensor *hg,
                             const yg_tensor *cx,
                             int64_t *rows,
                             int64_t *h) {
    const yg_tensor *ts[3] = {ig, hg, cx};
    const char *names[3] = {"input_gates", "hidden_gates", "cx"};
    char a[128], b[128];

    YG_RETURN_IF_ERROR(yg__check_devices(op, 3, ts, names, NULL, 0, NULL));
    for (int k = 0; k < 3; k++) {
        if (!yg__dtype_is_floating(ts[k]->dtype) || ts[k]->dtype != ig->dtype)
            return yg__fail(
                YG_ERR_DTYPE,
                "%s: expected %s of dtype %s (float32 or float64, as input_gates), "
                "got %s",
                op,
                names[k],
                yg_dtype_name(yg__dtype_is_floating(ig->dtype) ? ig->dtype : YG_FLOAT32),
                yg_dtype_name(ts[k]->dtype));
    }
    if ((ig->ndim != 1 && ig->ndim != 2) || ig->sizes[ig->ndim - 1] % 4 != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected input_gates [N, 4H] or [4H], got %s",
                        op,
                        yg__format_sizes(ig->sizes, ig->ndim, a, sizeof a));
    if (hg->ndim != ig->ndim || memcmp(hg->sizes, ig->sizes, sizeof(int64_t) * ig->ndim) != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: hidden_gates %s does not match input_gates %s",
                        op,
                        yg__format_sizes(hg->sizes, hg->ndim, b, sizeof b),
                        yg__format_sizes(ig->sizes, ig->ndim, a, sizeof a));
    *h = ig->sizes[ig->ndim - 1] / 4;
    *rows = ig->ndim == 2 ? ig->sizes[0] : 1;
    bool ok = cx->ndim == ig->ndim && cx->sizes[cx->ndim - 1] == *h &&
              (cx->ndim == 1 || cx->sizes[0] == *rows);
    if (!ok)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected cx of sizes [%" PRId64 ", %" PRId64 "] (or [%" PRId64
                        "] unbatched) for input_gates %s, got %s",
                        op,
                        *rows,
                        *h,
                        *h,
                        yg__format_sizes(ig->sizes, ig->ndim, a, sizeof a),
                        yg__format_sizes(cx->sizes, cx->ndim, b, sizeof b));
    return YG_OK;
}

yg_status yg__meta_lstm_cell_gates(const yg_tensor *input_gates,
                                   const yg_tensor *hidden_gates,
                                   const yg_tensor *cx,
                                   yg_tensor **out_hy,
                                   yg_tensor **out_cy) {
    yg_tensor *hy = NULL;
    int64_t rows, h;
    yg_status st;

    *out_hy = NULL;
    *out_cy = NULL;
    YG_RETURN_IF_ERROR(check_gates("lstm_cell_gates", input_gates, hidden_gates, cx, &rows, &h));
    YG_RETURN_IF_ERROR(yg__tensor_empty_like(cx, input_gates->dtype, &hy));
    st = yg__tensor_empty_like(cx, input_gates->dtype, out_cy);
    if (st != YG_OK) {
        yg_release(hy);
        return st;
    }
    *out_hy = hy;
    return YG_OK;
}

yg_status yg__meta_lstm_cell_gates_backward_fused(const yg_tensor *grad_hy,
                                                  const yg_tensor *grad_cy,
                                                  const yg_tensor *input_gates,
                                                  const yg_tensor *hidden_gates,
                                                  const yg_tensor *cx,
                                                  yg_tensor **out_grad_gates,
                                                  yg_tensor **out_grad_cx) {
    const char *op = "lstm_cell_gates_backward_fused";
    yg_tensor *gg = NULL;
    int64_t rows, h;
    char a[128], b[128];
    yg_status st;

    *out_grad_gates = NULL;
    *out_grad_cx = NULL;
    YG_RETURN_IF_ERROR(check_gates(op, input_gates, hidden_gates, cx, &rows, &h));
    const yg_tensor *gs[2] = {grad_hy, grad_cy};
    const char *gnames[2] = {"grad_hy", "grad_cy"};
    for (int k = 0; k < 2; k++) {
        const yg_tensor *g = gs[k];
        if (g->dtype != cx->dtype || g->ndim != cx->ndim ||
            memcmp(g->sizes, cx->sizes, sizeof(int64_t) * cx->ndim) != 0)
            return yg__fail(YG_ERR_SHAPE,
                            "%s: expected %s of cx's sizes %s and dtype %s, got %s %s",
                            op,
                            gnames[k],
                            yg__format_sizes(cx->sizes, cx->ndim, a, sizeof a),
                            yg_dtype_name(cx->dtype),
                            yg_dtype_name(g->dtype),
                            yg__format_sizes(g->sizes, g->ndim, b, sizeof b));
    }
    YG_RETURN_IF_ERROR(yg__check_devices(op, 2, gs, gnames, NULL, 0, NULL));
    YG_RETURN_IF_ERROR(yg__check_devices(op,
                                         2,
                                         (const yg_tensor *const[]){grad_hy, cx},
                                         (const char *const[]){"grad_hy", "cx"},
                                         NULL,
                                         0,
                                         NULL));
    YG_RETURN_IF_ERROR(yg__tensor_empty_like(input_gates, cx->dtype, &gg));
    st = yg__tensor_empty_like(cx, cx->dtype, out_grad_cx);
    if (st != YG_OK) {
        yg_release(gg);
        return st;
    }
    *out_grad_gates = gg;
    return YG_OK;
}
