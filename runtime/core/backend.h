/*
 * backend.h - the device registry: what core needs of a device other than
 * the CPU (memory, copies), behind one table per device kind that its
 * backend registers.  Not public API.
 *
 * core/ calls a device only through here and includes nothing of a
 * backend.  A device whose backend is not there (a build without it, or
 * a module that failed to load) gets one status, from yg__backend, the
 * same for every request: YG_ERR_DEVICE "<op>: built without CUDA (...)".
 *
 * A backend is a module (a shared object) loaded on the first request
 * for its device; its constructor registers its table with
 * yg__backend_register, before any tensor of its device can exist, so a
 * storage on that device always finds its backend.  A program that never
 * asks for the device never loads the module nor what it links.
 */
#ifndef YAGRAD_CORE_BACKEND_H
#define YAGRAD_CORE_BACKEND_H

#include "yagrad/status.h"
#include "yagrad/tensor.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* A function of a backend module, as the dynamic loader finds it; cast
 * back to its real type by the caller, which knows it. */
typedef void (*yg_kernel_fn)(void);

struct yg_pointwise_backend;

/* Memory of a device, by index.  Every function names op in its errors. */
typedef struct yg_device_backend {
    const char *name; /* "cuda": as yg__device_name */

    /* YG_OK when index names a usable device, else YG_ERR_DEVICE. */
    yg_status (*check_index)(const char *op, int index);

    /* *out = nbytes of device memory on index (NULL on failure):
     * YG_ERR_DEVICE for an unusable index, YG_ERR_OUT_OF_MEMORY. */
    yg_status (*alloc)(const char *op, int index, size_t nbytes, void **out);

    /* Gives back memory from alloc.  NULL-safe.  Cannot fail. */
    void (*free)(int index, void *ptr);

    /* Copies nbytes from src to dst, each host memory (index -1) or
     * memory from alloc on device index; a copy with the host is complete
     * when it returns. */
    yg_status (*memcpy)(
        const char *op, void *dst, int dst_index, const void *src, int src_index, size_t nbytes);

    /* Sets nbytes of memory from alloc on device index to the byte
     * value, queued on the device's current stream (ordered before the
     * work queued after it).  YG_ERR_DEVICE with the backend's reason. */
    yg_status (*memset)(const char *op, int index, void *ptr, int value, size_t nbytes);

    /* How the backend runs the pointwise iterator's loops
     * (meta/pointwise.h's yg_pointwise_backend), or NULL: its pointwise
     * ops refuse the device. */
    const struct yg_pointwise_backend *pointwise;

    /* Copies src's elements converted to dst's dtype (core/convert.c's
     * rules) into dst: same sizes, any layouts whose elements do not
     * overlap, both on this backend's device.  Errors name op. */
    yg_status (*copy)(const char *op, yg_tensor *dst, const yg_tensor *src);

    /* The function of the backend named name (a structured op's
     * implementation, specs/native_functions.yaml), or NULL.  Cannot
     * fail. */
    yg_kernel_fn (*kernel)(const char *name);

    /* What the backend offers beyond this table (its kernels, its public
     * API), in a layout only its own callers know; may be NULL. */
    const void *ext;
} yg_device_backend;

/* A kernel of a backend by name, found once and kept: the generated
 * per-device tables hold one (static) per implementation that lives in a
 * module.  Initialise only the name, `static yg_kernel_ref ref =
 * {.name = "yg__cuda_sum"};`: fn starts NULL from static storage's zero
 * initialisation, which C11 (7.17.2.1) makes a valid atomic state.  An
 * explicit `NULL` for fn is valid C11 too, but clang 14 refuses it
 * ("initializer element is not a compile-time constant": `(void *)0`
 * converted to an _Atomic function pointer, llvm-project issue 49563),
 * which stopped the fuzz build. */
typedef struct yg_kernel_ref {
    const char *name;
    _Atomic(yg_kernel_fn) fn;
} yg_kernel_ref;

/* *out = ref's function in device's backend, loading the backend first
 * when no tensor of the device exists yet (an op that takes a Device
 * argument).  Errors name op: yg__backend's when there is no backend
 * ("<op>: cuda: built without CUDA (...)"), YG_ERR_INTERNAL "<op>: the
 * cuda backend has no <name>" when it lacks the function.  *out is NULL
 * on failure. */
yg_status
yg__backend_kernel(const char *op, yg_device device, yg_kernel_ref *ref, yg_kernel_fn *out);

/* Makes b (static, never freed) the backend of device.  Called once per
 * device kind, by the backend itself.  Cannot fail. */
void yg__backend_register(yg_device device, const yg_device_backend *b);

/* *out = the backend of device (not YG_CPU), loading its module on the
 * first request (backend.c).  YG_ERR_DEVICE when there is none, the same
 * message for every request: "<op>: cuda: built without CUDA (configure
 * with the CUDA toolkit installed and YG_WITH_CUDA=ON)", "<op>: cuda: its
 * backend module could not be loaded (<the loader's reason>)"; op NULL
 * leaves out "<op>: ".  An invalid device: "<op>: invalid device N". */
yg_status yg__backend(const char *op, yg_device device, const yg_device_backend **out);

/* Whether device has a backend, loading its module if needed; unlike
 * yg__backend it leaves this thread's message alone.  Cannot fail. */
bool yg__backend_load(yg_device device);

/* The backend of device if it is registered, else NULL; loads nothing.
 * Cannot fail. */
const yg_device_backend *yg__backend_if_loaded(yg_device device);

/* The backend of device, for a device a storage is on (whose backend is
 * therefore registered).  Cannot fail. */
const yg_device_backend *yg__backend_of(yg_device device);

/* Loads the module named file (a file name) for good: from the path in
 * the environment variable env when it is set, else from the folder
 * libyagrad was loaded from, else by the dynamic loader's search.  Its
 * constructors run before this returns.  false when it could not be
 * loaded, with the loader's reasons in errs (cap bytes, "; " between
 * the places tried).  For the backend loader here and the other modules
 * (the MPI process groups, distributed/process_group.c).  Not
 * serialised: callers load once (pthread_once). */
bool yg__module_open(const char *env, const char *file, char *errs, size_t cap);

#endif /* YAGRAD_CORE_BACKEND_H */
