/*
 * composite/parts.c - when a composite must run as its parts
 * (yg__composite_needs_parts, composite.h).
 *
 * A composite written with public ops is recorded by autograd and, when
 * traced through, by the tracer, op by op.  Some composites (softmax_backward,
 * the norms' backward) also have a fused kernel that computes the same
 * result in one pass but records nothing; they may use it exactly when
 * neither would record: no graph is being built through them.
 */
#include "composite/composite.h"
#include "core/observer.h"
#include "yagrad/autograd.h"

bool yg__composite_needs_parts(const yg_tensor *const *inputs, int n_inputs) {
    if (yg__obs_recording(false))
        return true;
    if (!yg_is_grad_enabled())
        return false;
    for (int i = 0; i < n_inputs; i++) {
        if (inputs[i] != NULL && yg_tensor_requires_grad(inputs[i]))
            return true;
    }
    return false;
}
