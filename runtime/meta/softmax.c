/*
 * meta/softmax.c - the meta functions of softmax and log_softmax
 * (meta/meta.h): their checks and their result, for every device.
 */
#include "meta/meta.h"

#include "core/core.h"

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
