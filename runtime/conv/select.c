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
 * that reads device memory; conv/dispatch.c runs native on host copies
 * when cudnn cannot run the case, and notes it); for cpu operands onednn when built and it
 * takes the case (float32, a non-empty batch: its refuses),
 * else native.  The benchmark and deterministic flags are thread-local
 * too; yg__conv_params_init copies them into each call's parameters.
 */
#include "conv/conv.h"
#include "core/backend.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local yg_conv_backend forced = YG_CONV_BACKEND_NONE;
static _Thread_local yg_conv_backend last = YG_CONV_BACKEND_NONE;
static _Thread_local bool benchmark_on = false;
static _Thread_local bool deterministic_on = false;
static _Thread_local char note[384];

static const char *const names[YG_CONV_BACKEND_COUNT_] = {
    [YG_CONV_BACKEND_NONE] = "none",
    [YG_CONV_BACKEND_NATIVE] = "native",
    [YG_CONV_BACKEND_ONEDNN] = "onednn",
    [YG_CONV_BACKEND_CUDNN] = "cudnn",
};

/* What a missing backend lacks, for the message. */
static const char *const missing[YG_CONV_BACKEND_COUNT_] = {
    [YG_CONV_BACKEND_ONEDNN] = "built without oneDNN",
#ifdef YG_HAVE_CUDNN
    [YG_CONV_BACKEND_CUDNN] = "the CUDA backend module, which has cuDNN, could not be loaded",
#else
    [YG_CONV_BACKEND_CUDNN] = "built without cuDNN",
#endif
};

/* The registry: the library's own backends, and the slot cudnn.c fills
 * when the CUDA module loads. */
static _Atomic(const yg_conv_impl *) impls[YG_CONV_BACKEND_COUNT_] = {
    [YG_CONV_BACKEND_NATIVE] = &yg__conv_native,
#ifdef YG_HAVE_ONEDNN
    [YG_CONV_BACKEND_ONEDNN] = &yg__conv_onednn,
#endif
};

void yg__conv_register(yg_conv_backend b, const yg_conv_impl *impl) {
    atomic_store_explicit(&impls[b], impl, memory_order_release);
}

const yg_conv_impl *yg__conv_impl(yg_conv_backend b) {
    if ((int)b <= YG_CONV_BACKEND_NONE || b >= YG_CONV_BACKEND_COUNT_)
        return NULL;
    const yg_conv_impl *impl = atomic_load_explicit(&impls[b], memory_order_acquire);
    if (impl == NULL && b == YG_CONV_BACKEND_CUDNN && yg__backend_load(YG_CUDA))
        impl = atomic_load_explicit(&impls[b], memory_order_acquire);
    return impl;
}

#ifndef YG_HAVE_ONEDNN
void yg_conv_onednn_cache_stats(int64_t *out_hits, int64_t *out_misses, int64_t *out_entries) {
    *out_hits = 0;
    *out_misses = 0;
    *out_entries = 0;
}
#endif

const char *yg_conv_backend_name(yg_conv_backend backend) {
    if ((int)backend < 0 || backend >= YG_CONV_BACKEND_COUNT_)
        return "unknown";
    return names[backend];
}

bool yg_conv_backend_available(yg_conv_backend backend) {
    return yg__conv_impl(backend) != NULL;
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

const char *yg_conv_last_note(void) {
    return note;
}

void yg__conv_note_fallback(yg_conv_backend ran, const char *why) {
    last = ran;
    snprintf(note, sizeof note, "%s", why);
}

bool yg__conv_is_forced(void) {
    const char *v = getenv("YG_CONV_BACKEND");
    return forced != YG_CONV_BACKEND_NONE || (v != NULL && v[0] != '\0');
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
    if (b != YG_CONV_BACKEND_NONE) {
        const yg_conv_impl *impl = yg__conv_impl(b);
        char dev[32];
        if (impl == NULL)
            return yg__fail(YG_ERR_NOT_IMPLEMENTED, "backend %s: %s", names[b], missing[b]);
        if (impl->device != p->device) {
            if (p->device == YG_CUDA)
                snprintf(dev, sizeof dev, "cuda:%d", (int)p->device_index);
            else
                snprintf(dev, sizeof dev, "%s", yg__device_name(p->device));
            return yg__fail(YG_ERR_DEVICE,
                            "backend %s: needs %s tensors, got input on %s",
                            names[b],
                            yg__device_name(impl->device),
                            dev);
        }
        if (impl->refuses != NULL && (refused = impl->refuses(p)) != NULL)
            return yg__fail(YG_ERR_NOT_IMPLEMENTED, "backend %s: %s", names[b], refused);
    } else {
        const yg_conv_impl *onednn = yg__conv_impl(YG_CONV_BACKEND_ONEDNN);
        b = allow_choice && onednn != NULL && onednn->refuses(p) == NULL ? YG_CONV_BACKEND_ONEDNN
                                                                        : YG_CONV_BACKEND_NATIVE;
    }
    last = b;
    note[0] = '\0';
    *out = b;
    return YG_OK;
}
