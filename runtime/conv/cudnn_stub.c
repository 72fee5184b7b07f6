/*
 * conv/cudnn_stub.c - the cuDNN backend's entry points in a build without
 * cuDNN (CMake compiles this file instead of conv/cudnn.c: no CUDA
 * backend, or cuDNN not found): selection fails for CUDA operands and for
 * a forced cudnn in conv/select.c with "built without cuDNN" before any
 * of these runs.
 */
#include "conv/conv.h"

static yg_status absent(void) {
    return yg__fail(YG_ERR_NOT_IMPLEMENTED, "backend cudnn: built without cuDNN");
}

bool yg__conv_cudnn_built(void) {
    return false;
}

yg_status yg__conv_cudnn_forward(const yg_conv_params *p,
                                 const void *x,
                                 const void *w,
                                 const void *bias,
                                 void *y) {
    (void)p, (void)x, (void)w, (void)bias, (void)y;
    return absent();
}

yg_status yg__conv_cudnn_data(const yg_conv_params *p,
                              const void *y,
                              const void *w,
                              const void *bias,
                              void *x) {
    (void)p, (void)y, (void)w, (void)bias, (void)x;
    return absent();
}

yg_status yg__conv_cudnn_weight(const yg_conv_params *p, const void *y, const void *x, void *w) {
    (void)p, (void)y, (void)x, (void)w;
    return absent();
}
