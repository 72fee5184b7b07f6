/*
 * conv/onednn_stub.c - the oneDNN backend's entry points in a build
 * without oneDNN (CMake compiles this file instead of conv/onednn.c):
 * selection never picks it, and a forced onednn fails in conv/select.c
 * with "built without oneDNN" before any of these runs.
 */
#include "conv/conv.h"

static yg_status absent(void) {
    return yg__fail(YG_ERR_NOT_IMPLEMENTED, "backend onednn: built without oneDNN");
}

bool yg__conv_onednn_built(void) {
    return false;
}

const char *yg__conv_onednn_refuses(const yg_conv_params *p) {
    (void)p;
    return "built without oneDNN";
}

void yg_conv_onednn_cache_stats(int64_t *out_hits, int64_t *out_misses, int64_t *out_entries) {
    *out_hits = 0;
    *out_misses = 0;
    *out_entries = 0;
}

yg_status yg__conv_onednn_forward(const yg_conv_params *p,
                                  const void *x,
                                  const void *w,
                                  const void *bias,
                                  void *y) {
    (void)p, (void)x, (void)w, (void)bias, (void)y;
    return absent();
}

yg_status yg__conv_onednn_data(const yg_conv_params *p,
                               const void *y,
                               const void *w,
                               const void *bias,
                               void *x) {
    (void)p, (void)y, (void)w, (void)bias, (void)x;
    return absent();
}

yg_status yg__conv_onednn_weight(const yg_conv_params *p, const void *y, const void *x, void *w) {
    (void)p, (void)y, (void)x, (void)w;
    return absent();
}
