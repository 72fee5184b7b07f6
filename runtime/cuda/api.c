/*
 * api.c - yagrad/cuda.h in libyagrad: each function asks the device
 * registry for the CUDA module (loading it on first use, core/backend.c)
 * and forwards to it (cuda/backend.h).  Without the module (a build
 * without CUDA, or a module that could not be loaded) every call that
 * needs a device fails with the registry's one status, and the queries
 * answer "none".  Functions that only release or read what the module
 * made never load it.
 */
#include "cuda/backend.h"

#include "core/core.h"

#include <stdatomic.h>
#include <string.h>

/* The module's table if it is loaded, else NULL; loads nothing. */
static const yg_cuda_backend *loaded(void) {
    const yg_device_backend *b = yg__backend_if_loaded(YG_CUDA);
    return b != NULL ? b->ext : NULL;
}

bool yg_cuda_is_available(void) {
    return yg_cuda_device_count() > 0;
}

int yg_cuda_device_count(void) {
    return yg__backend_load(YG_CUDA) ? yg__cuda()->device_count() : 0;
}

yg_status yg_cuda_check(void) {
    const yg_cuda_backend *b = NULL;

    YG_RETURN_IF_ERROR(yg__cuda_get(NULL, &b)); /* "cuda: built without CUDA (...)" */
    return b->check();
}

yg_status yg_cuda_get_device_properties(int index, yg_cuda_device_properties *out) {
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "cuda_get_device_properties: out is NULL");
    memset(out, 0, sizeof *out);
    const yg_cuda_backend *b = NULL;

    YG_RETURN_IF_ERROR(yg__cuda_get("cuda_get_device_properties", &b));
    return b->get_device_properties(index, out);
}

yg_status yg_cuda_synchronize(int index) {
    const yg_cuda_backend *b = NULL;

    YG_RETURN_IF_ERROR(yg__cuda_get("cuda_synchronize", &b));
    return b->synchronize(index);
}

yg_status yg_cuda_memory_stats_get(int index, yg_cuda_memory_stats *out) {
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "cuda_memory_stats_get: out is NULL");
    memset(out, 0, sizeof *out);
    const yg_cuda_backend *b = NULL;

    YG_RETURN_IF_ERROR(yg__cuda_get("cuda_memory_stats_get", &b));
    return b->memory_stats_get(index, out);
}

void yg_cuda_empty_cache(void) {
    const yg_cuda_backend *b = loaded();
    if (b != NULL)
        b->empty_cache();
}

void yg_cuda_release_all(bool reset) {
    const yg_cuda_backend *b = loaded();
    if (b != NULL)
        b->release_all(reset);
}

yg_status yg_cuda_stream_create(int index, yg_cuda_stream **out) {
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "cuda_stream_create: out is NULL");
    *out = NULL;
    const yg_cuda_backend *b = NULL;

    YG_RETURN_IF_ERROR(yg__cuda_get("cuda_stream_create", &b));
    return b->stream_create(index, out);
}

void yg_cuda_stream_destroy(yg_cuda_stream *stream) {
    if (stream != NULL) /* made by the module, so it is loaded */
        yg__cuda()->stream_destroy(stream);
}

yg_status yg_cuda_set_stream(int index, yg_cuda_stream *stream) {
    const yg_cuda_backend *b = NULL;

    YG_RETURN_IF_ERROR(yg__cuda_get("cuda_set_stream", &b));
    return b->set_stream(index, stream);
}

yg_cuda_stream *yg_cuda_get_stream(int index) {
    const yg_cuda_backend *b = loaded();
    return b != NULL ? b->get_stream(index) : NULL;
}

int yg_cuda_stream_device(const yg_cuda_stream *stream) {
    return yg__cuda()->stream_device(stream);
}

yg_status yg_cuda_stream_synchronize(int index, yg_cuda_stream *stream) {
    const yg_cuda_backend *b = NULL;

    YG_RETURN_IF_ERROR(yg__cuda_get("cuda_stream_synchronize", &b));
    return b->stream_synchronize(index, stream);
}

yg_status yg_cuda_event_create(int index, yg_cuda_event **out) {
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "cuda_event_create: out is NULL");
    *out = NULL;
    const yg_cuda_backend *b = NULL;

    YG_RETURN_IF_ERROR(yg__cuda_get("cuda_event_create", &b));
    return b->event_create(index, out);
}

void yg_cuda_event_destroy(yg_cuda_event *event) {
    if (event != NULL)
        yg__cuda()->event_destroy(event);
}

yg_status yg_cuda_event_record(yg_cuda_event *event, yg_cuda_stream *stream) {
    const yg_cuda_backend *b = NULL;

    YG_RETURN_IF_ERROR(yg__cuda_get("cuda_event_record", &b));
    return b->event_record(event, stream);
}

yg_status yg_cuda_stream_wait_event(yg_cuda_stream *stream, yg_cuda_event *event) {
    const yg_cuda_backend *b = NULL;

    YG_RETURN_IF_ERROR(yg__cuda_get("cuda_stream_wait_event", &b));
    return b->stream_wait_event(stream, event);
}

yg_status yg_cuda_event_synchronize(yg_cuda_event *event) {
    const yg_cuda_backend *b = NULL;

    YG_RETURN_IF_ERROR(yg__cuda_get("cuda_event_synchronize", &b));
    return b->event_synchronize(event);
}

yg_status yg_cuda_event_query(yg_cuda_event *event, bool *done) {
    const yg_cuda_backend *b = NULL;

    YG_RETURN_IF_ERROR(yg__cuda_get("cuda_event_query", &b));
    return b->event_query(event, done);
}

yg_status yg_cuda_event_elapsed_ms(yg_cuda_event *start, yg_cuda_event *end, double *ms) {
    const yg_cuda_backend *b = NULL;

    YG_RETURN_IF_ERROR(yg__cuda_get("cuda_event_elapsed_ms", &b));
    return b->event_elapsed_ms(start, end, ms);
}

/* Read by the module's cuBLAS and cuDNN calls; kept here so that setting
 * it loads nothing.  A build without CUDA ignores it. */
static atomic_bool allow_tf32;

void yg_cuda_set_allow_tf32(bool allow) {
#ifdef YG_HAVE_CUDA
    atomic_store(&allow_tf32, allow);
#else
    (void)allow;
#endif
}

bool yg_cuda_get_allow_tf32(void) {
    return atomic_load(&allow_tf32);
}
