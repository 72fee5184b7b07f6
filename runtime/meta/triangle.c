/*
 * meta/triangle.c - the meta functions of tril and triu (meta/meta.h):
 * self of at least 2 dims; the result a contiguous copy of self, whose
 * elements outside the triangle the implementations zero (cpu/triangle.c,
 * cuda/triangle.c).
 */
#include "decls/indexing.h"
#include "meta/meta.h"

#include "core/core.h"

static yg_status triangle_meta(const char *op, const yg_tensor *self, yg_tensor **out) {
    char buf[128];

    *out = NULL;
    if (self->ndim < 2)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected self with at least 2 dims, got %s",
                        op,
                        yg__format_sizes(self->sizes, self->ndim, buf, sizeof buf));
    return yg__tensor_contiguous_as(self, self->dtype, false, out);
}

yg_status yg__meta_tril(const yg_tensor *self, int64_t diagonal, yg_tensor **out) {
    (void)diagonal;
    return triangle_meta("tril", self, out);
}

yg_status yg__meta_triu(const yg_tensor *self, int64_t diagonal, yg_tensor **out) {
    (void)diagonal;
    return triangle_meta("triu", self, out);
}
