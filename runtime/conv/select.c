/*
 * conv/select.c - which backend runs a convolution (yagrad/conv.h).
 *
 * The forced backend and the last choice are thread-local, so tests and
 * programs that force a backend on one thread never affect another.  The
 * environment variable YG_CONV_BACKEND is read at every call (a getenv is
 * nothing next to a convolution), so a program may change it between
 * calls.  Availability is a property of the build (oneDNN and cuDNN
 * when CMake found them), and a forced backend that is not built, that
 * does not take the operands' device, or that refuses the case (onednn
 * on float64), fails rather than falling back.
 *
 * Automatic choice, per call: cudnn for CUDA operands (the only backend
 * that reads device memory); for cpu operands onednn when built and it
 * takes the case (float32, a non-empty batch: yg__conv_onednn_refuses),
 * else native.  The benchmark and deterministic flags are thread-local
 * too; yg__conv_params_init copies them into each call's parameters.
 */
#include "conv/conv.h"

#include <stdlib.h>
#include <string.h>

static _Thread_local yg_conv_backend forced = YG_CONV_BACKEND_NONE;
static _Thread_local yg_conv_backend last = YG_CONV_BACKEND_NONE;
static _Thread_local bool benchmark_on = false;
static _Thread_local bool deterministic_on = false;

static const char *const names[YG_CONV_BACKEND_COUNT_] = {
    [YG_CONV_BACKEND_NONE] = "none",
    [YG_CONV_BACKEND_NATIVE] = "native",
    [YG_CONV_BACKEND_ONEDNN] = "onednn",
    [YG_CONV_BACKEND_CUDNN] = "cudnn",
};

/* What a missing backend lacks, for the message. */
static const char *const missing[YG_CONV_BACKEND_COUNT_] = {
    [YG_CONV_BACKEND_ONEDNN] = "built without oneDNN",
    [YG_CONV_BACKEND_CUDNN] = "built without cuDNN",
};

const char *yg_conv_backend_name(yg_conv_backend backend) {
    if ((int)backend < 0 || backend >= YG_CONV_BACKEND_COUNT_)
        return "unknown";
    return names[backend];
}

bool yg_conv_backend_available(yg_conv_backend backend) {
    return backend == YG_CONV_BACKEND_NATIVE ||
           (backend == YG_CONV_BACKEND_ONEDNN && yg__conv_onednn_built()) ||
           (backend == YG_CONV_BACKEND_CUDNN && yg__conv_cudnn_built());
}

void yg_conv_set_benchmark(bool on) {
    benchmark_on = on;
}

bool yg_conv_benchmark(void) {
    return benchmark_on;
}

void yg_conv_set_deterministic(bool on) {
    deterministic_on = on;
}

bool yg_conv_deterministic(void) {
    return deterministic_on;
}

yg_status yg_conv_force_backend(yg_conv_backend backend) {
    if ((int)backend < 0 || backend >= YG_CONV_BACKEND_COUNT_)
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "yg_conv_force_backend: %d is no backend", (int)backend);
    forced = backend;
    return YG_OK;
}

yg_conv_backend yg_conv_forced_backend(void) {
    return forced;
}

yg_conv_backend yg_conv_last_backend(void) {
    return last;
}

/* The backend YG_CONV_BACKEND names (NONE when unset or empty). */
static yg_status from_env(yg_conv_backend *out) {
    const char *v = getenv("YG_CONV_BACKEND");

    *out = YG_CONV_BACKEND_NONE;
    if (v == NULL || v[0] == '\0')
        return YG_OK;
    for (int b = YG_CONV_BACKEND_NATIVE; b < YG_CONV_BACKEND_COUNT_; b++) {
        if (strcmp(v, names[b]) == 0) {
            *out = (yg_conv_backend)b;
            return YG_OK;
        }
    }
    return yg__fail(YG_ERR_INVALID_ARGUMENT,
                    "YG_CONV_BACKEND '%.40s' names no backend (expected native, onednn or cudnn)",
                    v);
}

yg_status yg__conv_select(const yg_conv_params *p, bool allow_choice, yg_conv_backend *out) {
    yg_conv_backend b = forced;
    const char *refused;

    *out = YG_CONV_BACKEND_NONE;
    if (b == YG_CONV_BACKEND_NONE)
        YG_RETURN_IF_ERROR(from_env(&b));
    /* CUDA operands have one backend: an unforced choice is cudnn, and
     * allow_choice does not send them to native (which reads host
     * memory). */
    if (b == YG_CONV_BACKEND_NONE && p->device == YG_CUDA)
        b = YG_CONV_BACKEND_CUDNN;
    if (b != YG_CONV_BACKEND_NONE && !yg_conv_backend_available(b))
        return yg__fail(YG_ERR_NOT_IMPLEMENTED, "backend %s: %s", names[b], missing[b]);
    if (b == YG_CONV_BACKEND_CUDNN && p->device != YG_CUDA)
        return yg__fail(YG_ERR_DEVICE,
                        "backend cudnn: needs cuda tensors, got input on %s",
                        yg__device_name(p->device));
    if (b != YG_CONV_BACKEND_CUDNN && p->device == YG_CUDA)
        return yg__fail(YG_ERR_DEVICE,
                        "backend %s: needs cpu tensors, got input on cuda:%d",
                        names[b],
                        p->device_index);
    if (b == YG_CONV_BACKEND_ONEDNN && (refused = yg__conv_onednn_refuses(p)) != NULL)
        return yg__fail(YG_ERR_NOT_IMPLEMENTED, "backend onednn: %s", refused);
    if (b == YG_CONV_BACKEND_NONE)
        b = allow_choice && yg__conv_onednn_refuses(p) == NULL ? YG_CONV_BACKEND_ONEDNN
                                                               : YG_CONV_BACKEND_NATIVE;
    last = b;
    *out = b;
    return YG_OK;
}
