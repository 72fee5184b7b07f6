/*
 * composite/pad.c - pad, the mode-selecting entry of PyTorch's F.pad:
 * constant is constant_pad_nd (any number of dims, negative amounts
 * crop), reflect and replicate are reflection_pad and replication_pad
 * (the last 1-3 dims, cpu/pad.c).  value is read in constant mode only.
 *
 * As for every composite, messages of our own checks carry no op name (the
 * generated wrapper prefixes it).
 */
#include "composite/composite.h"
#include "decls/padding.h"
#include "yagrad/ops_padding.h"


yg_status yg__composite_pad(const yg_tensor *self,
                            const int64_t *pad,
                            int64_t pad_len,
                            int64_t mode,
                            double value,
                            yg_tensor **out) {
    /* mode was checked by the generated entry point. */
    switch (mode) {
    case YG_PAD_MODE_CONSTANT:
        return yg_constant_pad_nd(self, pad, pad_len, value, out);
    case YG_PAD_MODE_REFLECT:
        return yg_reflection_pad(self, pad, pad_len, out);
    default:
        return yg_replication_pad(self, pad, pad_len, out);
    }
}
