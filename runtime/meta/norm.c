/*
 * meta/norm.c - the meta functions of layer_norm's and batch_norm's fused
 * kernels, forward and backward (meta/meta.h): their checks, with the
 * messages both devices give, and their results.  The statistics have
 * input's dtype; grad_weight and grad_bias start at zero (the CPU's
 * kernels add rows into them); a result whose grad_input_mask entry is
 * false is not made (NULL).
 */
#include "decls/norms.h"
#include "decls/norms_backward.h"
#include "meta/meta.h"
#include "meta/norm.h"

#include "core/core.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Fails unless t (nullable) has input's dtype and exactly the sizes
 * sizes[0..n); what says what those sizes are, for the message. */
static yg_status check_operand(const char *op,
                               const char *name,
                               const yg_tensor *t,
                               const yg_tensor *input,
                               const int64_t *sizes,
                               int64_t n,
                               const char *what) {
    char tbuf[128], sbuf[160];

    if (t == NULL)
        return YG_OK;
    YG_RETURN_IF_ERROR(yg__check_floating(op, name, t));
    if (t->ndim != n || memcmp(t->sizes, sizes, sizeof(int64_t) * (size_t)n) != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected %s of %s %s, got %s",
                        op,
                        name,
                        what,
                        yg__format_sizes(sizes, n, sbuf, sizeof sbuf),
                        yg__format_sizes(t->sizes, t->ndim, tbuf, sizeof tbuf));
    if (t->dtype != input->dtype)
        return yg__fail(YG_ERR_DTYPE,
                        "%s: expected %s of input's dtype %s, got %s",
                        op,
                        name,
                        yg_dtype_name(input->dtype),
                        yg_dtype_name(t->dtype));
    return YG_OK;
}

/* Checks input's trailing sizes against normalized_shape and gives the
 * number of rows and their length. */
yg_status yg__layer_norm_geometry(const char *op,
                                     const yg_tensor *input,
                                     const int64_t *ns,
                                     int64_t len,
                                     int64_t *rows,
                                     int64_t *m) {
    char ibuf[128], sbuf[160];
    int64_t nd = input->ndim;

    if (len < 1 || len > nd || ns == NULL ||
        memcmp(input->sizes + (nd - len), ns, sizeof(int64_t) * (size_t)len) != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected input whose trailing sizes are normalized_shape %s, got %s",
                        op,
                        yg__format_sizes(ns, len, sbuf, sizeof sbuf),
                        yg__format_sizes(input->sizes, nd, ibuf, sizeof ibuf));
    /* Each part of an empty input's sizes may overflow alone (sizes.h). */
    *rows = yg__sizes_product(input->sizes, nd - len);
    *m = yg__sizes_product(input->sizes + (nd - len), len);
    if (*rows < 0 || *m < 0)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: input %s has more than 2^59 rows or elements per row",
                        op,
                        yg__format_sizes(input->sizes, nd, ibuf, sizeof ibuf));
    return YG_OK;
}

/* Fails unless g has input's sizes and dtype. */
static yg_status check_grad_out(const char *op, const yg_tensor *g, const yg_tensor *input) {
    char gbuf[128], ibuf[128];

    YG_RETURN_IF_ERROR(yg__check_floating(op, "grad_out", g));
    if (g->ndim != input->ndim ||
        memcmp(g->sizes, input->sizes, sizeof(int64_t) * (size_t)input->ndim) != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected grad_out of input's sizes %s, got %s",
                        op,
                        yg__format_sizes(input->sizes, input->ndim, ibuf, sizeof ibuf),
                        yg__format_sizes(g->sizes, g->ndim, gbuf, sizeof gbuf));
    if (g->dtype != input->dtype)
        return yg__fail(YG_ERR_DTYPE,
                        "%s: expected grad_out of input's dtype %s, got %s",
                        op,
                        yg_dtype_name(input->dtype),
                        yg_dtype_name(g->dtype));
    return YG_OK;
}

/* Fails unless the statistic t has n elements and input's dtype. */
static yg_status check_stat(const char *op,
                            const char *name,
                            const yg_tensor *t,
                            const yg_tensor *input,
                            int64_t n) {
    char tbuf[128];

    YG_RETURN_IF_ERROR(yg__check_floating(op, name, t));
    if (yg_tensor_numel(t) != n)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected %s of %" PRId64 " elements (one per %s), got %s",
                        op,
                        name,
                        n,
                        strcmp(op, "native_layer_norm_backward_fused") == 0 ? "row" : "channel",
                        yg__format_sizes(t->sizes, t->ndim, tbuf, sizeof tbuf));
    if (t->dtype != input->dtype)
        return yg__fail(YG_ERR_DTYPE,
                        "%s: expected %s of input's dtype %s, got %s",
                        op,
                        name,
                        yg_dtype_name(input->dtype),
                        yg_dtype_name(t->dtype));
    return YG_OK;
}

/* N, C and L of input [N, C, *], after checking its dims. */
yg_status
yg__batch_norm_geometry(const char *op, const yg_tensor *input, int64_t *n, int64_t *c, int64_t *l) {
    char ibuf[128];

    if (input->ndim < 2 || input->ndim > 5)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected input of 2 to 5 dims [N, C, *], got %s",
                        op,
                        yg__format_sizes(input->sizes, input->ndim, ibuf, sizeof ibuf));
    *n = input->sizes[0];
    *c = input->sizes[1];
    *l = yg__sizes_product(input->sizes + 2, input->ndim - 2);
    /* An empty input may have huge other dims (sizes.h): the kernels
     * loop over n and l per channel, so both become 0 (no element, the
     * same counts), and c stays for the per-channel results. */
    if (yg_tensor_numel(input) == 0) {
        *n = 0;
        *l = 0;
    }
    return YG_OK;
}

/* Fails unless the running statistic t (nullable) is [c] of float32 or
 * float64 on the cpu (its own dtype: it is state, never converted). */
static yg_status check_running(const char *op,
                               const char *name,
                               const yg_tensor *t,
                               int64_t c,
                               const yg_tensor *input) {
    char tbuf[128], ibuf[128];

    if (t == NULL)
        return YG_OK;
    YG_RETURN_IF_ERROR(yg__check_floating(op, name, t));
    if (t->ndim != 1 || t->sizes[0] != c)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected %s of sizes [%" PRId64 "] (the channels of input %s), got %s",
                        op,
                        name,
                        c,
                        yg__format_sizes(input->sizes, input->ndim, ibuf, sizeof ibuf),
                        yg__format_sizes(t->sizes, t->ndim, tbuf, sizeof tbuf));
    return YG_OK;
}

/* The checks of batch_norm (the same messages, naming op). */
static yg_status check_batch_norm(const char *op,
                                  const yg_tensor *input,
                                  const yg_tensor *weight,
                                  const yg_tensor *bias,
                                  const yg_tensor *running_mean,
                                  const yg_tensor *running_var,
                                  bool training) {
    int64_t n = 0, c = 0, l = 0;
    char ibuf[128];

    YG_RETURN_IF_ERROR(yg__check_floating(op, "input", input));
    YG_RETURN_IF_ERROR(yg__batch_norm_geometry(op, input, &n, &c, &l));
    YG_RETURN_IF_ERROR(check_running(op, "weight", weight, c, input));
    YG_RETURN_IF_ERROR(check_running(op, "bias", bias, c, input));
    YG_RETURN_IF_ERROR(check_operand(op, "weight", weight, input, &c, 1, "sizes"));
    YG_RETURN_IF_ERROR(check_operand(op, "bias", bias, input, &c, 1, "sizes"));
    YG_RETURN_IF_ERROR(check_running(op, "running_mean", running_mean, c, input));
    YG_RETURN_IF_ERROR(check_running(op, "running_var", running_var, c, input));
    if ((running_mean == NULL) != (running_var == NULL))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: running_mean and running_var must be given together (got only %s)",
                        op,
                        running_mean != NULL ? "running_mean" : "running_var");
    if (training && c > 0 && n * l == 1)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected more than 1 value per channel when training, got input %s",
                        op,
                        yg__format_sizes(input->sizes, input->ndim, ibuf, sizeof ibuf));
    if (!training && running_mean == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: running_mean and running_var are required when not training",
                        op);
    return YG_OK;
}

/* grad_weight and grad_bias, zero, of sizes[0..n) when wanted. */
static yg_status param_grads(const char *op,
                             const bool *grad_input_mask,
                             const int64_t *sizes,
                             int64_t n,
                             const yg_tensor *input,
                             yg_tensor **out_grad_weight,
                             yg_tensor **out_grad_bias) {
    for (int k = 1; k < 3; k++) {
        yg_tensor **out = k == 1 ? out_grad_weight : out_grad_bias;
        if (grad_input_mask[k])
            YG_RETURN_IF_ERROR(yg__tensor_zeros_on(op,
                                                   sizes,
                                                   n,
                                                   input->dtype,
                                                   input->storage->device,
                                                   input->storage->device_index,
                                                   out));
    }
    return YG_OK;
}

/* Releases the results made so far and passes st on. */
static yg_status undo(yg_status st, yg_tensor **a, yg_tensor **b, yg_tensor **c) {
    yg_tensor **all[3] = {a, b, c};
    if (st == YG_OK)
        return st;
    for (int k = 0; k < 3; k++) {
        yg_release(*all[k]);
        *all[k] = NULL;
    }
    return st;
}

yg_status yg__meta_native_layer_norm(const yg_tensor *input,
                                     const int64_t *normalized_shape,
                                     int64_t normalized_shape_len,
                                     const yg_tensor *weight,
                                     const yg_tensor *bias,
                                     double eps,
                                     yg_tensor **out_output,
                                     yg_tensor **out_mean,
                                     yg_tensor **out_rstd) {
    const char *op = "native_layer_norm";
    int64_t len = normalized_shape_len, rows, m, stat_sizes[YG_MAX_DIMS];
    int dev = input->storage->device_index;
    yg_status st;

    (void)eps;
    *out_output = NULL;
    *out_mean = NULL;
    *out_rstd = NULL;
    YG_RETURN_IF_ERROR(yg__check_floating(op, "input", input));
    YG_RETURN_IF_ERROR(yg__layer_norm_geometry(op, input, normalized_shape, len, &rows, &m));
    YG_RETURN_IF_ERROR(
        check_operand(op, "weight", weight, input, normalized_shape, len, "normalized_shape"));
    YG_RETURN_IF_ERROR(
        check_operand(op, "bias", bias, input, normalized_shape, len, "normalized_shape"));
    for (int32_t d = 0; d < input->ndim; d++)
        stat_sizes[d] = d < input->ndim - len ? input->sizes[d] : 1;
    st = yg__tensor_empty_like(input, input->dtype, out_output);
    if (st == YG_OK)
        st = yg__tensor_new_on(
            op, stat_sizes, input->ndim, input->dtype, input->storage->device, dev, out_mean);
    if (st == YG_OK)
        st = yg__tensor_new_on(
            op, stat_sizes, input->ndim, input->dtype, input->storage->device, dev, out_rstd);
    return undo(st, out_output, out_mean, out_rstd);
}

yg_status yg__meta_native_layer_norm_backward_fused(const yg_tensor *grad_out,
                                                    const yg_tensor *input,
                                                    const yg_tensor *mean,
                                                    const yg_tensor *rstd,
                                                    const yg_tensor *weight,
                                                    const int64_t *normalized_shape,
                                                    int64_t normalized_shape_len,
                                                    const bool *grad_input_mask,
                                                    yg_tensor **out_grad_input,
                                                    yg_tensor **out_grad_weight,
                                                    yg_tensor **out_grad_bias) {
    const char *op = "native_layer_norm_backward_fused";
    int64_t len = normalized_shape_len, rows, m;
    yg_status st = YG_OK;

    *out_grad_input = NULL;
    *out_grad_weight = NULL;
    *out_grad_bias = NULL;
    YG_RETURN_IF_ERROR(yg__check_floating(op, "input", input));
    YG_RETURN_IF_ERROR(check_grad_out(op, grad_out, input));
    YG_RETURN_IF_ERROR(yg__layer_norm_geometry(op, input, normalized_shape, len, &rows, &m));
    YG_RETURN_IF_ERROR(check_stat(op, "mean", mean, input, rows));
    YG_RETURN_IF_ERROR(check_stat(op, "rstd", rstd, input, rows));
    YG_RETURN_IF_ERROR(
        check_operand(op, "weight", weight, input, normalized_shape, len, "normalized_shape"));
    if (grad_input_mask[0])
        st = yg__tensor_empty_like(input, input->dtype, out_grad_input);
    if (st == YG_OK)
        st = param_grads(
            op, grad_input_mask, normalized_shape, len, input, out_grad_weight, out_grad_bias);
    return undo(st, out_grad_input, out_grad_weight, out_grad_bias);
}

yg_status yg__meta_native_batch_norm(const yg_tensor *input,
                                     const yg_tensor *weight,
                                     const yg_tensor *bias,
                                     yg_tensor *running_mean,
                                     yg_tensor *running_var,
                                     bool training,
                                     double momentum,
                                     double eps,
                                     yg_tensor **out_output,
                                     yg_tensor **out_save_mean,
                                     yg_tensor **out_save_invstd) {
    const char *op = "native_batch_norm";
    int64_t n = 0, c = 0, l = 0;
    int dev = input->storage->device_index;
    yg_status st;

    (void)momentum;
    (void)eps;
    *out_output = NULL;
    *out_save_mean = NULL;
    *out_save_invstd = NULL;
    YG_RETURN_IF_ERROR(
        check_batch_norm(op, input, weight, bias, running_mean, running_var, training));
    YG_RETURN_IF_ERROR(yg__batch_norm_geometry(op, input, &n, &c, &l));
    st = yg__tensor_empty_like(input, input->dtype, out_output);
    if (st == YG_OK)
        st = yg__tensor_new_on(
            op, &c, 1, input->dtype, input->storage->device, dev, out_save_mean);
    if (st == YG_OK)
        st = yg__tensor_new_on(
            op, &c, 1, input->dtype, input->storage->device, dev, out_save_invstd);
    return undo(st, out_output, out_save_mean, out_save_invstd);
}

yg_status yg__meta_native_batch_norm_backward_fused(const yg_tensor *grad_out,
                                                    const yg_tensor *input,
                                                    const yg_tensor *weight,
                                                    const yg_tensor *save_mean,
                                                    const yg_tensor *save_invstd,
                                                    bool training,
                                                    const bool *grad_input_mask,
                                                    yg_tensor **out_grad_input,
                                                    yg_tensor **out_grad_weight,
                                                    yg_tensor **out_grad_bias) {
    const char *op = "native_batch_norm_backward_fused";
    int64_t n = 0, c = 0, l = 0;
    yg_status st = YG_OK;

    (void)training;
    *out_grad_input = NULL;
    *out_grad_weight = NULL;
    *out_grad_bias = NULL;
    YG_RETURN_IF_ERROR(yg__check_floating(op, "input", input));
    YG_RETURN_IF_ERROR(yg__batch_norm_geometry(op, input, &n, &c, &l));
    YG_RETURN_IF_ERROR(check_grad_out(op, grad_out, input));
    YG_RETURN_IF_ERROR(check_operand(op, "weight", weight, input, &c, 1, "sizes"));
    YG_RETURN_IF_ERROR(check_stat(op, "save_mean", save_mean, input, c));
    YG_RETURN_IF_ERROR(check_stat(op, "save_invstd", save_invstd, input, c));
    if (grad_input_mask[0])
        st = yg__tensor_empty_like(input, input->dtype, out_grad_input);
    if (st == YG_OK)
        st = param_grads(op, grad_input_mask, &c, 1, input, out_grad_weight, out_grad_bias);
    return undo(st, out_grad_input, out_grad_weight, out_grad_bias);
}
