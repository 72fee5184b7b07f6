/*
 * module.c - the CUDA module's registration: when core/backend.c loads
 * the module (dlopen), this file's constructor hands the device registry
 * the module's table (cuda/backend.h).
 */
#include "cuda/backend.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

/* The launcher tables (generated/cuda/<section>.cu, cuda/copy.cu,
 * cuda/compare.cu) and the structured ops' implementations are found by
 * their symbol name in the module's own dynamic symbol table: the
 * generated files need no list of their own. */
static pthread_once_t self_once = PTHREAD_ONCE_INIT;
static void *self;

static void find_self(void) {
    Dl_info info;
    if (dladdr(&self_once, &info) != 0 && info.dli_fname != NULL)
        self = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
}

void *yg__cuda_symbol(const char *name) {
    pthread_once(&self_once, find_self);
    return self != NULL ? dlsym(self, name) : NULL;
}

static yg_kernel_fn kernel(const char *name) {
    yg_kernel_fn fn = NULL;
    void *p = yg__cuda_symbol(name);
    if (p != NULL)
        memcpy(&fn, &p, sizeof fn); /* POSIX: a data pointer dlsym gives holds a function */
    return fn;
}

static const yg_cuda_backend cuda = {
    .check = yg__cuda_check,
    .device_count = yg__cuda_device_count,
    .get_device_properties = yg__cuda_get_device_properties,
    .synchronize = yg__cuda_synchronize,
    .memory_stats_get = yg__cuda_memory_stats_get,
    .empty_cache = yg__cuda_empty_cache,
    .release_all = yg__cuda_release_all,
    .stream_create = yg__cuda_stream_create,
    .stream_destroy = yg__cuda_stream_destroy,
    .set_stream = yg__cuda_set_stream,
    .get_stream = yg__cuda_get_stream,
    .stream_device = yg__cuda_stream_device,
    .stream_synchronize = yg__cuda_stream_synchronize,
    .event_create = yg__cuda_event_create,
    .event_destroy = yg__cuda_event_destroy,
    .event_record = yg__cuda_event_record,
    .stream_wait_event = yg__cuda_stream_wait_event,
    .event_synchronize = yg__cuda_event_synchronize,
    .event_query = yg__cuda_event_query,
    .event_elapsed_ms = yg__cuda_event_elapsed_ms,
    .device_enter = yg__cuda_device_enter,
    .device_leave = yg__cuda_device_leave,
    .current_stream = yg__cuda_current_stream,
};

static const yg_device_backend device = {
    .name = "cuda",
    .check_index = yg__cuda_check_index,
    .alloc = yg__cuda_alloc,
    .free = yg__cuda_free,
    .memcpy = yg__cuda_memcpy,
    .memset = yg__cuda_memset,
    .pointwise = &yg__cuda_pointwise,
    .copy = yg__cuda_copy,
    .kernel = kernel,
    .ext = &cuda,
};

__attribute__((constructor)) static void register_module(void) {
    yg__backend_register(YG_CUDA, &device);
}
