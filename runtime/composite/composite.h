/*
 * composite.h - ops without kernels of their own.  Each is declared in
 * specs/native_functions.yaml with neither `dispatch:` nor `pointwise:`;
 * the generated yg_<op> calls yg__composite_<op>, written in runtime/
 * composite/ in terms of other public ops, so autograd records (and
 * differentiates) its parts.  Same signature and contract as the public
 * op; gen declares each in decls/<section>.h from the YAML.  This header
 * holds what the composites share.  Not public API.
 */
#ifndef YAGRAD_COMPOSITE_H
#define YAGRAD_COMPOSITE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/core.h"
#include "yagrad/random.h"

/* Whether a composite must run as its parts (public ops): autograd would
 * record them (grad mode is on and one of inputs, n_inputs entries,
 * NULL-safe, requires grad) or a tracer would (trace_through_composites).
 * When it returns false a composite may run a fused kernel instead, e.g.
 * a backward formula's first-order run, whose result needs no history;
 * with create_graph the parts run and stay differentiable.  Cannot fail. */
bool yg__composite_needs_parts(const yg_tensor *const *inputs, int n_inputs);

/* The check of the *_to ops: sizes are the result's full sizes, whose
 * leading dims (all but the last nsp) must be self's. */
yg_status
yg__check_to_sizes(const yg_tensor *self, const int64_t *sizes, int64_t sizes_len, int64_t nsp);

/* resample.c: upsample_bilinear2d_to (double-backward), interpolate,
 * pixel_shuffle, pixel_unshuffle, channel_shuffle */
yg_status
yg__composite_pixel_shuffle(const yg_tensor *self, int64_t upscale_factor, yg_tensor **out);
yg_status
yg__composite_pixel_unshuffle(const yg_tensor *self, int64_t downscale_factor, yg_tensor **out);

#endif /* YAGRAD_COMPOSITE_H */
