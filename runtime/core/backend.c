/*
 * backend.c - the device registry (backend.h) and the loader of backend
 * modules.
 *
 * A device kind other than the CPU has a module file named at build time
 * (YG_CUDA_MODULE_FILE, absent in a build without that backend).  The
 * first request for the device loads it, once per process
 * (pthread_once): from $YG_CUDA_MODULE when set (a path), else from the
 * folder libyagrad itself was loaded from, else by the dynamic loader's
 * own search.  Loading runs the module's constructors, which register its
 * table here.  Why a load failed is kept and is the message of every
 * later request.
 */
#include "core/backend.h"
#include "core/core.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Atomic(const yg_device_backend *) backends[YG_DEVICE_COUNT_];

/* One loader per device kind. */
typedef struct loader {
    const char *env;  /* overrides the path */
    const char *file; /* NULL: built without the backend */
    const char *built_without;
    pthread_once_t once;
    char why[512]; /* when loading failed */
} loader;

static loader loaders[YG_DEVICE_COUNT_] = {
    [YG_CUDA] = {.env = "YG_CUDA_MODULE",
#ifdef YG_CUDA_MODULE_FILE
                 .file = YG_CUDA_MODULE_FILE,
#endif
                 .built_without = "built without CUDA (configure with the CUDA toolkit "
                                  "installed and YG_WITH_CUDA=ON)",
                 .once = PTHREAD_ONCE_INIT},
};

void yg__backend_register(yg_device device, const yg_device_backend *b)
{
    YG_ASSERT((unsigned)device < YG_DEVICE_COUNT_ && device != YG_CPU);
    atomic_store_explicit(&backends[device], b, memory_order_release);
}

const yg_device_backend *yg__backend_if_loaded(yg_device device)
{
    if ((unsigned)device >= YG_DEVICE_COUNT_)
        return NULL;
    return atomic_load_explicit(&backends[device], memory_order_acquire);
}

/* dlopen of path; on failure appends dlerror's reason to errs. */
static bool try_open(const char *path, char *errs, size_t cap)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h != NULL)
        return true; /* kept open for the life of the process */
    const char *e = dlerror();
    size_t len = strlen(errs);
    snprintf(errs + len, cap - len, "%s%s", len > 0 ? "; " : "", e ? e : path);
    return false;
}

bool yg__module_open(const char *env, const char *file, char *errs, size_t cap)
{
    const char *path = getenv(env);

    errs[0] = '\0';
    if (path != NULL && path[0] != '\0')
        return try_open(path, errs, cap);
    /* Beside libyagrad: the build tree and an install keep them in one
     * folder; then the dynamic loader's search. */
    Dl_info info;
    char beside[4096];
    const char *slash;
    if (dladdr(&backends, &info) != 0 && info.dli_fname != NULL &&
        (slash = strrchr(info.dli_fname, '/')) != NULL &&
        (size_t)(slash - info.dli_fname) + strlen(file) + 2 <= sizeof beside) {
        snprintf(beside, sizeof beside, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname,
                 file);
        if (try_open(beside, errs, cap))
            return true;
    }
    return try_open(file, errs, cap);
}

static void load(yg_device device)
{
    loader *l = &loaders[device];
    const char *env = getenv(l->env);
    char errs[400]; /* fits in why with its words */

    if (!yg__module_open(l->env, l->file, errs, sizeof errs))
        snprintf(l->why, sizeof l->why, "its backend module could not be loaded (%s)", errs);
    else if (yg__backend_if_loaded(device) == NULL)
        snprintf(l->why, sizeof l->why,
                 "its backend module %s loaded but registered nothing (the module works with "
                 "libyagrad.so, not with a program linked with libyagrad.a)",
                 env != NULL && env[0] != '\0' ? env : l->file);
}

static void load_cuda(void)
{
    load(YG_CUDA);
}

static void (*const load_fns[YG_DEVICE_COUNT_])(void) = {[YG_CUDA] = load_cuda};

bool yg__backend_load(yg_device device)
{
    if ((unsigned)device >= YG_DEVICE_COUNT_ || device == YG_CPU)
        return false;
    if (yg__backend_if_loaded(device) == NULL && loaders[device].file != NULL)
        pthread_once(&loaders[device].once, load_fns[device]);
    return yg__backend_if_loaded(device) != NULL;
}

yg_status yg__backend(const char *op, yg_device device, const yg_device_backend **out)
{
    const yg_device_backend *b;
    const loader *l;
    const char *name = yg__device_name(device);

    *out = NULL;
    if ((unsigned)device >= YG_DEVICE_COUNT_ || device == YG_CPU)
        return yg__fail(YG_ERR_DEVICE, "%s: invalid device %d", op ? op : "device", (int)device);
    l = &loaders[device];
    b = yg__backend_load(device) ? yg__backend_if_loaded(device) : NULL;
    if (b == NULL) {
        const char *why = l->file == NULL ? l->built_without : l->why;
        if (op == NULL)
            return yg__fail(YG_ERR_DEVICE, "%s: %s", name, why);
        return yg__fail(YG_ERR_DEVICE, "%s: %s: %s", op, name, why);
    }
    *out = b;
    return YG_OK;
}

const yg_device_backend *yg__backend_of(yg_device device)
{
    const yg_device_backend *b = yg__backend_if_loaded(device);
    YG_ASSERT(b != NULL);
    return b;
}

yg_status
yg__backend_kernel(const char *op, yg_device device, yg_kernel_ref *ref, yg_kernel_fn *out)
{
    yg_kernel_fn fn = atomic_load_explicit(&ref->fn, memory_order_acquire);
    const yg_device_backend *b = NULL;

    *out = NULL;
    if (fn == NULL) {
        YG_RETURN_IF_ERROR(yg__backend(op, device, &b));
        fn = b->kernel != NULL ? b->kernel(ref->name) : NULL;
        if (fn == NULL)
            return yg__fail(YG_ERR_INTERNAL, "%s: the %s backend has no %s", op, b->name,
                            ref->name);
        atomic_store_explicit(&ref->fn, fn, memory_order_release);
    }
    *out = fn;
    return YG_OK;
}
