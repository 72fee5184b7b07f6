/*
 * rnn.c - lstm_cell_gates, the pointwise part of an LSTM step, and its
 * fused gradient on the CPU (the loops are cpu/vec/rnn_loops.c).
 *
 * input_gates and hidden_gates are [N, 4H] (or [4H]) of one floating
 * dtype, cx [N, H] (or [H]) of the same; they are made contiguous (a
 * shared reference when they already are) and read as rows.  Both are
 * structured: the checks and the results are meta/rnn.c's, which the
 * GPU's implementations (cuda/rnn.c, over cuda/rnn.cu's kernels, the same
 * expressions) share.
 */
#include "cpu/cpu.h"
#include "cpu/vec/kernels.h"
#include "decls/layers.h"

yg_status yg__cpu_lstm_cell_gates_out(const yg_tensor *input_gates,
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
        yg__vec()->lstm_gates[dt == YG_FLOAT64](yg__tensor_ptr(out_hy),
                                                yg__tensor_ptr(out_cy),
                                                yg__tensor_ptr(ig),
                                                yg__tensor_ptr(hg),
                                                yg__tensor_ptr(c),
                                                rows,
                                                h);
    yg_release(ig);
    yg_release(hg);
    yg_release(c);
    return st;
}

yg_status yg__cpu_lstm_cell_gates_backward_fused_out(const yg_tensor *grad_hy,
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
        yg__vec()->lstm_gates_backward[dt == YG_FLOAT64](yg__tensor_ptr(out_grad_gates),
                                                         yg__tensor_ptr(out_grad_cx),
                                                         yg__tensor_ptr(ghy),
                                                         yg__tensor_ptr(gcy),
                                                         yg__tensor_ptr(ig),
                                                         yg__tensor_ptr(hg),
                                                         yg__tensor_ptr(c),
                                                         rows,
                                                         h);
    yg_release(ig);
    yg_release(hg);
    yg_release(c);
    yg_release(ghy);
    yg_release(gcy);
    return st;
}
