/*
 * rnn.c - lstm_cell_gates and its fused gradient on a GPU: the CUDA
 * implementations of the structured ops (cuda/ops.h), which fill the
 * results meta/rnn.c made with the kernels of cuda/rnn.cu.
 */
#include "cuda/cuda.h"
#include "decls/layers.h"

#include "core/core.h"

yg_status yg__cuda_lstm_cell_gates_out(const yg_tensor *input_gates,
                                       const yg_tensor *hidden_gates,
                                       const yg_tensor *cx,
                                       yg_tensor *out_hy,
                                       yg_tensor *out_cy) {
    yg_tensor *ig = NULL, *hg = NULL, *c = NULL;
    yg_dtype dt = input_gates->dtype;
    int64_t h = input_gates->sizes[input_gates->ndim - 1] / 4;
    int64_t rows = input_gates->ndim == 2 ? input_gates->sizes[0] : 1;
    yg_status st;

    st = yg__tensor_contiguous_as(input_gates, dt, true, &ig);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(hidden_gates, dt, true, &hg);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(cx, dt, true, &c);
    if (st == YG_OK && rows * h > 0)
        st = yg__cuda_lstm_gates("lstm_cell_gates", cx->storage->device_index,
                                 dt == YG_FLOAT64, false, out_hy, out_cy, NULL, NULL, ig, hg, c,
                                 rows, h);
    yg_release(ig);
    yg_release(hg);
    yg_release(c);
    return st;
}

yg_status yg__cuda_lstm_cell_gates_backward_fused_out(const yg_tensor *grad_hy,
                                                      const yg_tensor *grad_cy,
                                                      const yg_tensor *input_gates,
                                                      const yg_tensor *hidden_gates,
                                                      const yg_tensor *cx,
                                                      yg_tensor *out_grad_gates,
                                                      yg_tensor *out_grad_cx) {
    yg_tensor *ig = NULL, *hg = NULL, *c = NULL, *ghy = NULL, *gcy = NULL;
    yg_dtype dt = cx->dtype;
    int64_t h = input_gates->sizes[input_gates->ndim - 1] / 4;
    int64_t rows = input_gates->ndim == 2 ? input_gates->sizes[0] : 1;
    yg_status st;

    st = yg__tensor_contiguous_as(input_gates, dt, true, &ig);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(hidden_gates, dt, true, &hg);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(cx, dt, true, &c);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(grad_hy, dt, true, &ghy);
    if (st == YG_OK)
        st = yg__tensor_contiguous_as(grad_cy, dt, true, &gcy);
    if (st == YG_OK && rows * h > 0)
        st = yg__cuda_lstm_gates("lstm_cell_gates_backward_fused", cx->storage->device_index,
                                 dt == YG_FLOAT64, true, out_grad_gates, out_grad_cx, ghy, gcy,
                                 ig, hg, c, rows, h);
    yg_release(ig);
    yg_release(hg);
    yg_release(c);
    yg_release(ghy);
    yg_release(gcy);
    return st;
}
