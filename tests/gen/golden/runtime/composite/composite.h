/* composite.h of the golden test: the composite ops of the golden spec. */
#ifndef YAGRAD_GOLDEN_COMPOSITE_H
#define YAGRAD_GOLDEN_COMPOSITE_H

#include "../../../../../runtime/core/core.h"

yg_status yg__composite_linear(const yg_tensor *input,
                               const yg_tensor *weight,
                               const yg_tensor *bias,
                               yg_tensor **out);
yg_status yg__composite_chunk(const yg_tensor *self,
                              int64_t chunks,
                              yg_tensor ***out,
                              int64_t *out_len);

#endif /* YAGRAD_GOLDEN_COMPOSITE_H */
