/*
 * meta/softmax.c - the meta functions of softmax and log_softmax and of
 * their backwards (meta/meta.h): their checks and their result, for every
 * device.
 */
#include "decls/softmax.h"
#include "meta/meta.h"

#include "core/core.h"

#include <string.h>

static yg_status softmax_meta(const char *op, const yg_tensor *self, int64_t dim, yg_tensor **out) {
    int64_t d;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_floating(op, "self", self));
    YG_RETURN_IF_ERROR(yg__wrap_dim(op, "self", dim, self->ndim, &d));
    return yg__tensor_empty_like(self, self->dtype, out);
}

yg_status yg__meta_softmax(const yg_tensor *self, int64_t dim, yg_tensor **out) {
    return softmax_meta("softmax", self, dim, out);
}

yg_status yg__meta_log_softmax(const yg_tensor *self, int64_t dim, yg_tensor **out) {
    return softmax_meta("log_softmax", self, dim, out);
}

static yg_status backward_meta(const char *op,
                               const yg_tensor *grad_output,
                               const yg_tensor *output,
                               int64_t dim,
                               yg_tensor **out) {
    char gbuf[128], obuf[128];
    int64_t d;

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__check_floating(op, "grad_output", grad_output));
    YG_RETURN_IF_ERROR(yg__check_floating(op, "output", output));
    if (grad_output->dtype != output->dtype)
        return yg__fail(YG_ERR_DTYPE,
                        "%s: dtype mismatch: grad_output %s, output %s",
                        op,
                        yg_dtype_name(grad_output->dtype),
                        yg_dtype_name(output->dtype));
    if (grad_output->ndim != output->ndim ||
        memcmp(grad_output->sizes, output->sizes, sizeof(int64_t) * (size_t)output->ndim) != 0)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: shape mismatch: grad_output %s, output %s",
                        op,
                        yg__format_sizes(grad_output->sizes, grad_output->ndim, gbuf, sizeof gbuf),
                        yg__format_sizes(output->sizes, output->ndim, obuf, sizeof obuf));
    YG_RETURN_IF_ERROR(yg__wrap_dim(op, "output", dim, output->ndim, &d));
    return yg__tensor_empty_like(output, output->dtype, out);
}

yg_status yg__meta_log_softmax_backward(const yg_tensor *grad_output,
                                        const yg_tensor *output,
                                        int64_t dim,
                                        yg_tensor **out) {
    return backward_meta("log_softmax_backward", grad_output, output, dim, out);
}

yg_status yg__meta_softmax_backward_fused(const yg_tensor *grad_output,
                                          const yg_tensor *output,
                                          int64_t dim,
                                          yg_tensor **out) {
    return backward_meta("softmax_backward_fused", grad_output, output, dim, out);
}
