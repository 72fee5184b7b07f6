/*
 * composite/norm.c - batch_norm: its checks, then the fused kernel
 * native_batch_norm (runtime/cpu/norm.c); and the dtype helpers of
 * norm_int.h.
 *
 * input is [N, C, *] (1-d, 2-d or 3-d positions, or none); each channel is
 * normalized over N and the positions.  Training uses the batch mean and
 * the biased variance (correction 0) and, when running_mean and
 * running_var are given, moves them towards the batch statistics:
 *   running = (1 - momentum) running + momentum batch
 * with the unbiased variance (count / (count - 1) times the biased one),
 * as PyTorch does.  Evaluation normalizes with the running statistics.
 *
 * native_batch_norm does it all in one kernel and has a derivative entry
 * (native_batch_norm_backward, composite/norm_backward.c), which also
 * differentiates twice.  The running statistics are state: the generated
 * wrappers refuse them when they require grad and bump their versions; the
 * kernel writes them last, once the output exists, so a failure leaves
 * them unchanged.  An empty input (N or a position dim 0) gives an empty
 * output and leaves them unchanged too.
 *
 * As for every composite, messages of our own checks carry no op name (the
 * generated wrapper prefixes it).  They are made here, before the kernel,
 * so that batch_norm's messages stay its own.
 */
#include "composite/composite.h"
#include "composite/norm_int.h"
#include "decls/norms.h"
#include "yagrad/autograd.h"
#include "yagrad/ops_dtype_conversion.h"
#include "yagrad/ops_norms.h"

#include <inttypes.h>
#include <stdio.h>

/* Fails unless t is NULL or has exactly the sizes [channels]. */
static yg_status check_channels(const char *name, const yg_tensor *t, const yg_tensor *input) {
    int64_t channels = yg_tensor_size(input, 1);
    char tbuf[128], ibuf[128];

    if (t == NULL)
        return YG_OK;
    if (yg_tensor_ndim(t) != 1 || yg_tensor_size(t, 0) != channels)
        return yg__fail(YG_ERR_SHAPE,
                        "expected %s of sizes [%" PRId64 "] (the channels of input %s), got %s",
                        name,
                        channels,
                        yg_tensor_format_sizes(input, ibuf, sizeof ibuf),
                        yg_tensor_format_sizes(t, tbuf, sizeof tbuf));
    return YG_OK;
}

yg_dtype yg__norm_dtype(const yg_tensor *const *operands, int n) {
    yg_dtype d = yg_tensor_dtype(operands[0]);

    if (d != YG_FLOAT32)
        return d;
    for (int i = 1; i < n; i++)
        if (operands[i] != NULL && yg_tensor_dtype(operands[i]) == YG_FLOAT64)
            return YG_FLOAT64;
    return d;
}

yg_status yg__norm_as_dtype(const yg_tensor *t, yg_dtype dtype, yg_tensor **out) {
    *out = NULL;
    if (t == NULL)
        return YG_OK;
    if (yg_tensor_dtype(t) == dtype) {
        *out = yg_retain((yg_tensor *)t);
        return YG_OK;
    }
    return yg_to_dtype(t, dtype, false, out);
}

yg_status yg__composite_batch_norm(const yg_tensor *input,
                                   const yg_tensor *weight,
                                   const yg_tensor *bias,
                                   yg_tensor *running_mean,
                                   yg_tensor *running_var,
                                   bool training,
                                   double momentum,
                                   double eps,
                                   yg_tensor **out) {
    int64_t nd = yg_tensor_ndim(input);
    yg_tensor *x = NULL, *w = NULL, *b = NULL, *save_mean = NULL, *save_invstd = NULL;
    char ibuf[128];
    yg_status st;

    *out = NULL;
    if (nd < 2 || nd > 5)
        return yg__fail(YG_ERR_SHAPE,
                        "expected input of 2 to 5 dims [N, C, *], got %s",
                        yg_tensor_format_sizes(input, ibuf, sizeof ibuf));
    YG_RETURN_IF_ERROR(check_channels("weight", weight, input));
    YG_RETURN_IF_ERROR(check_channels("bias", bias, input));
    YG_RETURN_IF_ERROR(check_channels("running_mean", running_mean, input));
    YG_RETURN_IF_ERROR(check_channels("running_var", running_var, input));
    if ((running_mean == NULL) != (running_var == NULL))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "running_mean and running_var must be given together (got only %s)",
                        running_mean != NULL ? "running_mean" : "running_var");
    int64_t channels = yg_tensor_size(input, 1);
    int64_t count = channels > 0 ? yg_tensor_numel(input) / channels : 0;
    if (training && count == 1)
        return yg__fail(YG_ERR_SHAPE,
                        "expected more than 1 value per channel when training, got input %s",
                        yg_tensor_format_sizes(input, ibuf, sizeof ibuf));
    if (!training && running_mean == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "running_mean and running_var are required when not training");
    /* the kernel runs in the promoted dtype of what the output is made of
     * (the running statistics only when they normalize, in evaluation) */
    const yg_tensor *operands[5] = {
        input, weight, bias, training ? NULL : running_mean, training ? NULL : running_var};
    yg_dtype dtype = yg__norm_dtype(operands, 5);
    st = yg__norm_as_dtype(input, dtype, &x);
    if (st == YG_OK)
        st = yg__norm_as_dtype(weight, dtype, &w);
    if (st == YG_OK)
        st = yg__norm_as_dtype(bias, dtype, &b);
    if (st == YG_OK)
        st = yg_native_batch_norm(x,
                                  w,
                                  b,
                                  running_mean,
                                  running_var,
                                  training,
                                  momentum,
                                  eps,
                                  out,
                                  &save_mean,
                                  &save_invstd);
    yg_release(x);
    yg_release(w);
    yg_release(b);
    yg_release(save_mean);
    yg_release(save_invstd);
    return st;
}
