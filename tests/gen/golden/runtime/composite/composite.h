/* composite.h of the golden test: the one composite op of the golden spec. */
#ifndef YAGRAD_GOLDEN_COMPOSITE_H
#define YAGRAD_GOLDEN_COMPOSITE_H

#include "../../../../../runtime/core/core.h"

yg_status yg__composite_linear(const yg_tensor *input,
                               const yg_tensor *weight,
                               const yg_tensor *bias,
                               yg_tensor **out);

#endif /* YAGRAD_GOLDEN_COMPOSITE_H */
