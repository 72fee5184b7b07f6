/*
 * rnn.c - lstm_cell_gates, the pointwise part of an LSTM step, and its
 * fused gradient (the loops are cpu/vec/rnn_loops.c).
 *
 * input_gates and hidden_gates are [N, 4H] (or [4H]) of one floating
 * dtype, cx [N, H] (or [H]) of the same; they are made contiguous (a
 * shared reference when they already are) and read as rows.  The
 * gradient of both projections is the same tensor (the cell reads their
 * sum), returned once per masked output.  Both serve both devices: a
 * GPU's run cuda/rnn.cu's kernels, the same expressions.
 */
#include "cpu/cpu.h"
#include "cpu/vec/kernels.h"
#include "cuda/backend.h"

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

yg_status yg__kernel_lstm_cell_gates(const yg_tensor *input_gates,
                                     const yg_tensor *hidden_gates,
                                     const yg_tensor *cx,
                                     yg_tensor **out_hy,
                                     yg_tensor **out_cy) {
    yg_tensor *ig = NULL, *hg = NULL, *c = NULL, *hy = NULL, *cy = NULL;
    int64_t rows, h;
    yg_status st;

    *out_hy = NULL;
    *out_cy = NULL;
    YG_RETURN_IF_ERROR(check_gates("lstm_cell_gates", input_gates, hidden_gates, cx, &rows, &h));
    yg_dtype dt = input_gates->dtype;
    st = yg__tensor_contiguous_as(input_gates, dt, true, &ig);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(hidden_gates, dt, true, &hg);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(cx, dt, true, &c);
    if (st == YG_OK)
        st = yg__tensor_empty_like(cx, dt, &hy);
    if (st == YG_OK)
        st = yg__tensor_empty_like(cx, dt, &cy);
    if (st == YG_OK && rows * h > 0 && cx->storage->device == YG_CUDA)
        st = yg__cuda()->lstm_gates("lstm_cell_gates",
                                 cx->storage->device_index,
                                 dt == YG_FLOAT64,
                                 false,
                                 hy,
                                 cy,
                                 NULL,
                                 NULL,
                                 ig,
                                 hg,
                                 c,
                                 rows,
                                 h);
    else if (st == YG_OK && rows * h > 0)
        yg__vec()->lstm_gates[dt == YG_FLOAT64](yg__tensor_ptr(hy),
                                                yg__tensor_ptr(cy),
                                                yg__tensor_ptr(ig),
                                                yg__tensor_ptr(hg),
                                                yg__tensor_ptr(c),
                                                rows,
                                                h);
    if (st != YG_OK)
        goto out;
    *out_hy = hy;
    *out_cy = cy;
    hy = cy = NULL;
out:
    yg_release(ig);
    yg_release(hg);
    yg_release(c);
    yg_release(hy);
    yg_release(cy);
    return st;
}

yg_status yg__kernel_lstm_cell_gates_backward(const yg_tensor *grad_hy,
                                              const yg_tensor *grad_cy,
                                              const yg_tensor *input_gates,
                                              const yg_tensor *hidden_gates,
                                              const yg_tensor *cx,
                                              const bool *grad_input_mask,
                                              yg_tensor **out_grad_input_gates,
                                              yg_tensor **out_grad_hidden_gates,
                                              yg_tensor **out_grad_cx) {
    const char *op = "lstm_cell_gates_backward";
    yg_tensor *ig = NULL, *hg = NULL, *c = NULL, *ghy = NULL, *gcy = NULL;
    yg_tensor *gg = NULL, *gcx = NULL;
    int64_t rows, h;
    char a[128], b[128];
    yg_status st;

    *out_grad_input_gates = NULL;
    *out_grad_hidden_gates = NULL;
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
    bool want_gates = grad_input_mask[0] || grad_input_mask[1], want_cx = grad_input_mask[2];
    yg_dtype dt = cx->dtype;
    st = yg__tensor_contiguous_as(input_gates, dt, true, &ig);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(hidden_gates, dt, true, &hg);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(cx, dt, true, &c);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(grad_hy, dt, true, &ghy);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(grad_cy, dt, true, &gcy);
    /* the kernel writes both; an unwanted one is released below */
    if (st == YG_OK)
        st = yg__tensor_empty_like(input_gates, dt, &gg);
    if (st == YG_OK)
        st = yg__tensor_empty_like(cx, dt, &gcx);
    if (st == YG_OK && rows * h > 0 && (want_gates || want_cx) && cx->storage->device == YG_CUDA)
        st = yg__cuda()->lstm_gates(op,
                                 cx->storage->device_index,
                                 dt == YG_FLOAT64,
                                 true,
                                 gg,
                                 gcx,
                                 ghy,
                                 gcy,
                                 ig,
                                 hg,
                                 c,
                                 rows,
                                 h);
    else if (st == YG_OK && rows * h > 0 && (want_gates || want_cx))
        yg__vec()->lstm_gates_backward[dt == YG_FLOAT64](yg__tensor_ptr(gg),
                                                         yg__tensor_ptr(gcx),
                                                         yg__tensor_ptr(ghy),
                                                         yg__tensor_ptr(gcy),
                                                         yg__tensor_ptr(ig),
                                                         yg__tensor_ptr(hg),
                                                         yg__tensor_ptr(c),
                                                         rows,
                                                         h);
    if (st != YG_OK)
        goto out;
    if (grad_input_mask[0])
        *out_grad_input_gates = yg_retain(gg);
    if (grad_input_mask[1])
        *out_grad_hidden_gates = yg_retain(gg);
    if (want_cx) {
        *out_grad_cx = gcx;
        gcx = NULL;
    }
out:
    yg_release(ig);
    yg_release(hg);
    yg_release(c);
    yg_release(ghy);
    yg_release(gcy);
    yg_release(gg);
    yg_release(gcx);
    return st;
}
