/*
 * backend.h - what the CUDA module (libyagrad_cuda-<version>.so, every file
 * of runtime/cuda/ but api.c and block_cache.c, the kernels of *.cu and
 * generated/cuda/, conv/cudnn.c and distributed/process_group_nccl.c)
 * gives the rest of the library.  Not public API.
 *
 * The module is loaded on the first request for a CUDA device
 * (core/backend.c); it registers its device table (core/backend.h), whose
 * ext is the yg_cuda_backend below.  libyagrad itself links none of the
 * CUDA libraries: a program that never asks for a GPU never maps them.
 * Each field points to the function of cuda/cuda.h, launch.h or
 * yagrad/cuda.h named in its comment, with that function's type and
 * contract (the TF32 switch is not here: cuda/api.c keeps it, so setting
 * it loads nothing).
 *
 * Code of libyagrad reaches the module only through here: yg__cuda() in a
 * kernel that holds a CUDA tensor (which exists only once the module
 * registered), yg__cuda_get() where no tensor proves it (cuda/api.c, the
 * public yagrad/cuda.h).
 */
#ifndef YAGRAD_CUDA_BACKEND_H
#define YAGRAD_CUDA_BACKEND_H

#include "core/backend.h"
#include "cuda/cuda.h"

typedef struct yg_cuda_backend {
    /* yagrad/cuda.h (the public names without the second underscore:
     * yg_cuda_check is yg__cuda_check). */
    __typeof__(yg__cuda_check) *check;
    __typeof__(yg__cuda_device_count) *device_count;
    __typeof__(yg__cuda_get_device_properties) *get_device_properties;
    __typeof__(yg__cuda_synchronize) *synchronize;
    __typeof__(yg__cuda_memory_stats_get) *memory_stats_get;
    __typeof__(yg__cuda_empty_cache) *empty_cache;
    __typeof__(yg__cuda_release_all) *release_all;
    __typeof__(yg__cuda_stream_create) *stream_create;
    __typeof__(yg__cuda_stream_destroy) *stream_destroy;
    __typeof__(yg__cuda_set_stream) *set_stream;
    __typeof__(yg__cuda_get_stream) *get_stream;
    __typeof__(yg__cuda_stream_device) *stream_device;
    __typeof__(yg__cuda_stream_synchronize) *stream_synchronize;
    __typeof__(yg__cuda_event_create) *event_create;
    __typeof__(yg__cuda_event_destroy) *event_destroy;
    __typeof__(yg__cuda_event_record) *event_record;
    __typeof__(yg__cuda_stream_wait_event) *stream_wait_event;
    __typeof__(yg__cuda_event_synchronize) *event_synchronize;
    __typeof__(yg__cuda_event_query) *event_query;
    __typeof__(yg__cuda_event_elapsed_ms) *event_elapsed_ms;

    /* Devices and streams (cuda/cuda.h, cuda/launch.h). */
    __typeof__(yg__cuda_device_enter) *device_enter;
    __typeof__(yg__cuda_device_leave) *device_leave;
    __typeof__(yg__cuda_current_stream) *current_stream;
} yg_cuda_backend;

/* The CUDA module's table, for code that holds a CUDA tensor.  Cannot
 * fail. */
static inline const yg_cuda_backend *yg__cuda(void)
{
    return (const yg_cuda_backend *)yg__backend_of(YG_CUDA)->ext;
}

/* *out = the CUDA module's table, loading the module first if needed.
 * YG_ERR_DEVICE naming op when there is none: "<op>: cuda: built without
 * CUDA (...)", or why the module could not be loaded. */
static inline yg_status yg__cuda_get(const char *op, const yg_cuda_backend **out)
{
    const yg_device_backend *b = NULL;
    yg_status st = yg__backend(op, YG_CUDA, &b);
    *out = st == YG_OK ? (const yg_cuda_backend *)b->ext : NULL;
    return st;
}

#endif /* YAGRAD_CUDA_BACKEND_H */
