/*
 * cuda_run.c - loading a fusion group's CUDA kernel (codegen.c's CUDA C++,
 * compiled to PTX by cuda.c) onto a GPU and launching it, through the CUDA
 * driver API.
 *
 * The driver (libcuda.so.1) is loaded at run time with dlopen, as cuda.c
 * loads NVRTC: a machine without one gets a reason (which run.c counts as
 * a fallback and the interpreter runs the group), never a link error.
 * The CUDA runtime that runtime/cuda/ is built on uses each device's
 * primary context, and every device tensor's memory belongs to it, so the
 * kernels are loaded into and launched in that context: retained once per
 * device (cuDevicePrimaryCtxRetain, which also creates it, as cudaFree(0)
 * would) and pushed for a launch unless it is already current (after
 * cudaSetDevice it is).  Launches go to the calling thread's current
 * stream, where the eager CUDA kernels go (cuda/launch.h: YG_CUDA_STREAM),
 * so a fused kernel is ordered after the ops that made its inputs and
 * before the ops that read its outputs.
 *
 * A kernel is loaded once per CUDA source and device and kept for the
 * process (modules are not unloaded while a graph may still be running
 * one asynchronously; the CPU's dlopen'd kernels stay loaded too).  Each
 * carries the most threads a block of each entry point may have (its
 * registers decide), read from the driver, so a launch never asks for more.
 *
 * Unproven here: the machines that build yagrad have no GPU, so this file
 * compiles and its argument block is checked against the PTX's parameter
 * size (tests/test_jit_fuser.c), but only a GPU machine runs it (the
 * jit_fuser.cuda_* tests).
 */
#include "cuda/backend.h"
#include "jit/fuser/fuser.h"
#include "yagrad/jit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t yg__fuser_cuda_args_size(int nops) {
    /* codegen.c's struct: int64_t n; int ndim (padded to 8);
     * int64_t sizes[YG_MAX_DIMS]; int64_t strides[nops][YG_MAX_DIMS];
     * char *ptrs[nops]; every member 8-aligned, so no other padding. */
    return 8 * (size_t)(2 + YG_MAX_DIMS + nops * YG_MAX_DIMS + nops);
}

#ifdef YG_HAVE_NVRTC
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>

struct yg_fuser_cuda_kernel {
    uint64_t hash;
    char *source;
    int index;
    CUcontext ctx;
    CUmodule module;
    CUfunction fn[2];   /* [0] 64-bit indices, [1] 32-bit */
    int max_threads[2]; /* per block, for fn[i] */
    struct yg_fuser_cuda_kernel *next;
};

/* The driver entry points used here, from the loaded library (the names
 * dlsym finds: cuda.h maps some calls to _v2 symbols by macro). */
static struct {
    bool tried;
    char why[256];
    CUresult (*init)(unsigned int);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*device_attribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*primary_retain)(CUcontext *, CUdevice);
    CUresult (*ctx_get_current)(CUcontext *);
    CUresult (*ctx_push)(CUcontext);
    CUresult (*ctx_pop)(CUcontext *);
    CUresult (*module_load_data)(CUmodule *, const void *);
    CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
    CUresult (*module_unload)(CUmodule);
    CUresult (*func_attribute)(int *, CUfunction_attribute, CUfunction);
    CUresult (*launch)(CUfunction,
                       unsigned int,
                       unsigned int,
                       unsigned int,
                       unsigned int,
                       unsigned int,
                       unsigned int,
                       unsigned int,
                       CUstream,
                       void **,
                       void **);
    CUresult (*error_string)(CUresult, const char **);
} drv;
static pthread_mutex_t drv_lock = PTHREAD_MUTEX_INITIALIZER;

/* Loaded kernels, and the primary context retained per device. */
static yg_fuser_cuda_kernel *kernels;
static CUcontext contexts[YG_CUDA_MAX_DEVICES];

/* The driver's words for r (its number when it has none: the toolkit's
 * stub library, an old driver), valid until the thread's next call. */
static const char *driver_error(CUresult r) {
    static _Thread_local char buf[64];
    const char *s = NULL;
    if (drv.error_string != NULL && drv.error_string(r, &s) == CUDA_SUCCESS && s != NULL)
        return s;
    snprintf(buf, sizeof buf, "CUDA driver error %d", (int)r);
    return buf;
}

/* Loads the driver once; false with drv.why when it is not usable.  Under
 * drv_lock. */
static bool load_driver(void) {
    if (drv.tried)
        return drv.why[0] == '\0';
    drv.tried = true;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *e = dlerror();
        snprintf(drv.why,
                 sizeof drv.why,
                 "cannot load the CUDA driver (%s)",
                 e != NULL ? e : "libcuda.so.1");
        return false;
    }
    static const struct {
        void *slot;
        const char *name;
    } syms[] = {
        {&drv.init, "cuInit"},
        {&drv.device_get, "cuDeviceGet"},
        {&drv.device_attribute, "cuDeviceGetAttribute"},
        {&drv.primary_retain, "cuDevicePrimaryCtxRetain"},
        {&drv.ctx_get_current, "cuCtxGetCurrent"},
        {&drv.ctx_push, "cuCtxPushCurrent_v2"},
        {&drv.ctx_pop, "cuCtxPopCurrent_v2"},
        {&drv.module_load_data, "cuModuleLoadData"},
        {&drv.module_get_function, "cuModuleGetFunction"},
        {&drv.module_unload, "cuModuleUnload"},
        {&drv.func_attribute, "cuFuncGetAttribute"},
        {&drv.launch, "cuLaunchKernel"},
        {&drv.error_string, "cuGetErrorString"},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *f = dlsym(h, syms[i].name);
        if (f == NULL) {
            snprintf(drv.why, sizeof drv.why, "the CUDA driver lacks %s", syms[i].name);
            return false;
        }
        memcpy(syms[i].slot, &f, sizeof f);
    }
    CUresult r = drv.init(0);
    if (r != CUDA_SUCCESS) {
        snprintf(
            drv.why, sizeof drv.why, "the CUDA driver failed to initialise: %s", driver_error(r));
        return false;
    }
    return true;
}

/* Device index's primary context, retained on first use.  Under drv_lock. */
static CUresult primary_context(int index, CUcontext *ctx) {
    if (contexts[index] == NULL) {
        CUdevice dev;
        CUresult r = drv.device_get(&dev, index);
        if (r == CUDA_SUCCESS)
            r = drv.primary_retain(&contexts[index], dev);
        if (r != CUDA_SUCCESS) {
            contexts[index] = NULL;
            return r;
        }
    }
    *ctx = contexts[index];
    return CUDA_SUCCESS;
}

/* Makes ctx current unless it is; *pushed says whether to pop it. */
static CUresult enter(CUcontext ctx, bool *pushed) {
    CUcontext cur = NULL;
    *pushed = false;
    CUresult r = drv.ctx_get_current(&cur);
    if (r == CUDA_SUCCESS && cur != ctx) {
        r = drv.ctx_push(ctx);
        *pushed = r == CUDA_SUCCESS;
    }
    return r;
}

static void leave(bool pushed) {
    CUcontext popped;
    if (pushed)
        (void)drv.ctx_pop(&popped);
}

static uint64_t hash_str(uint64_t h, const char *s) {
    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* Compiles and loads source on device index into *k (its ctx set).
 * Under drv_lock.  false with the reason in reason. */
static bool
load_kernel(yg_fuser_cuda_kernel *k, const char *source, char *reason, size_t reason_len) {
    CUdevice dev;
    int major = 0, minor = 0;
    char arch[32];
    const char *ptx = NULL;
    bool pushed = false;
    CUresult r = drv.device_get(&dev, k->index);
    if (r == CUDA_SUCCESS)
        r = drv.device_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    if (r == CUDA_SUCCESS)
        r = drv.device_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    if (r == CUDA_SUCCESS)
        r = primary_context(k->index, &k->ctx);
    if (r != CUDA_SUCCESS) {
        snprintf(reason, reason_len, "fuser: cuda:%d: %s", k->index, driver_error(r));
        return false;
    }
    if (yg__fuser_cuda_arch(major, minor, arch, sizeof arch) != YG_OK ||
        yg__fuser_cuda_ptx_of(source, arch, &ptx) != YG_OK) {
        snprintf(reason, reason_len, "%s", yg_last_error());
        return false;
    }
    r = enter(k->ctx, &pushed);
    if (r == CUDA_SUCCESS)
        r = drv.module_load_data(&k->module, ptx);
    if (r == CUDA_SUCCESS) {
        static const char *const names[2] = {"yg_fused_kernel", "yg_fused_kernel_i32"};
        for (int i = 0; i < 2 && r == CUDA_SUCCESS; i++) {
            r = drv.module_get_function(&k->fn[i], k->module, names[i]);
            if (r == CUDA_SUCCESS)
                r = drv.func_attribute(
                    &k->max_threads[i], CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k->fn[i]);
        }
        if (r != CUDA_SUCCESS)
            (void)drv.module_unload(k->module);
    }
    leave(pushed);
    if (r != CUDA_SUCCESS) {
        snprintf(reason,
                 reason_len,
                 "fuser: loading the PTX for %s on cuda:%d: %s",
                 arch,
                 k->index,
                 driver_error(r));
        return false;
    }
    return true;
}

const yg_fuser_cuda_kernel *
yg__fuser_cuda_kernel_get(const char *source, int index, char *reason, size_t reason_len) {
    reason[0] = '\0';
    if (index < 0 || index >= YG_CUDA_MAX_DEVICES) {
        snprintf(reason, reason_len, "fuser: no CUDA device cuda:%d", index);
        return NULL;
    }
    uint64_t h = hash_str(0xcbf29ce484222325ULL, source);
    yg_fuser_cuda_kernel *k = NULL;
    pthread_mutex_lock(&drv_lock);
    if (!load_driver()) {
        snprintf(reason, reason_len, "fuser: %s", drv.why);
        pthread_mutex_unlock(&drv_lock);
        return NULL;
    }
    for (k = kernels; k != NULL; k = k->next)
        if (k->hash == h && k->index == index && strcmp(k->source, source) == 0)
            break;
    if (k != NULL) {
        pthread_mutex_unlock(&drv_lock);
        yg__fuser_count_cuda_memory_hit();
        return k;
    }
    /* Loading under the lock: two threads wanting one kernel load it once. */
    k = calloc(1, sizeof *k);
    char *copy = strdup(source);
    if (k == NULL || copy == NULL) {
        snprintf(reason, reason_len, "fuser: out of memory");
    } else {
        k->hash = h;
        k->source = copy;
        k->index = index;
        if (load_kernel(k, source, reason, reason_len)) {
            k->next = kernels;
            kernels = k;
            pthread_mutex_unlock(&drv_lock);
            return k;
        }
    }
    free(copy);
    free(k);
    pthread_mutex_unlock(&drv_lock);
    return NULL;
}

/* Fills codegen's struct yg_fused_args (yg__fuser_cuda_args_size bytes)
 * into words: n, ndim, sizes, strides, ptrs; unused dims 0. */
static void pack_args(uint64_t *words,
                      int64_t n,
                      int ndim,
                      const int64_t *sizes,
                      const int64_t *strides,
                      char *const *ptrs,
                      int nops) {
    memset(words, 0, yg__fuser_cuda_args_size(nops));
    int32_t nd = ndim;
    memcpy(&words[0], &n, sizeof n);
    memcpy(&words[1], &nd, sizeof nd); /* little-endian: the int's bytes first */
    memcpy(&words[2], sizes, sizeof(int64_t) * (size_t)ndim);
    uint64_t *st = &words[2 + YG_MAX_DIMS], *pt = st + (size_t)nops * YG_MAX_DIMS;
    for (int k = 0; k < nops; k++) {
        memcpy(&st[k * YG_MAX_DIMS], &strides[k * ndim], sizeof(int64_t) * (size_t)ndim);
        memcpy(&pt[k], &ptrs[k], sizeof ptrs[k]);
    }
}

yg_status yg__fuser_cuda_launch(const yg_fuser_cuda_kernel *k,
                                int index,
                                bool rows,
                                int64_t n,
                                int ndim,
                                const int64_t *sizes,
                                const int64_t *strides,
                                char *const *ptrs,
                                int nops) {
    const char *op = "prim::FusionGroup";
    if (n == 0)
        return YG_OK;
    if (k == NULL || k->index != index || ndim < 1 || ndim > YG_MAX_DIMS || nops < 1 ||
        nops > YG_FUSE_MAX_INPUTS + YG_FUSE_MAX_OUTPUTS)
        return yg__fail(YG_ERR_INTERNAL,
                        "%s: a CUDA launch of a kernel for another device "
                        "or with %d dims and %d operands",
                        op,
                        ndim,
                        nops);
    /* Elementwise: YG_CUDA_BLOCK threads an element; anchored: a block a
     * row, its threads striding along the row: a multiple of 32 up to the
     * row's length, at most 512 (the reductions' partials fit any block
     * of up to 1024).  Both loops stride over the grid, so the grid is
     * capped only at CUDA's limit for x, 2^31 - 1 blocks (cuda/grid.cuh);
     * the 32-bit kernel is taken only when the index past the last
     * element, a grid's step beyond it, still fits. */
    int64_t threads, blocks, inner = sizes[ndim - 1];
    if (rows) {
        threads = inner >= 512 ? 512 : (inner + 31) / 32 * 32;
        blocks = inner > 0 ? n / inner : 0;
    } else {
        threads = YG_CUDA_BLOCK;
        blocks = (n + threads - 1) / threads;
    }
    blocks = blocks > INT32_MAX ? INT32_MAX : blocks;
    if (blocks == 0)
        return YG_OK;
    int which = yg__fuser_cuda_index32_ok(n, ndim, sizes, strides, nops, blocks * threads) ? 1 : 0;
    int most = k->max_threads[which] / 32 * 32;
    if (threads > most) {
        if (!rows && most < 32)
            return yg__fail(YG_ERR_DEVICE,
                            "%s: the fused kernel on cuda:%d allows %d threads "
                            "a block",
                            op,
                            index,
                            k->max_threads[which]);
        threads = most >= 32 ? most : 32;
    }
    uint64_t
        words[2 + YG_MAX_DIMS + (YG_FUSE_MAX_INPUTS + YG_FUSE_MAX_OUTPUTS) * (YG_MAX_DIMS + 1)];
    pack_args(words, n, ndim, sizes, strides, ptrs, nops);
    void *params[1] = {words};
    int prev = 0;
    bool pushed = false;
    YG_RETURN_IF_ERROR(yg__cuda()->device_enter(op, index, &prev));
    CUresult r = enter(k->ctx, &pushed);
    if (r == CUDA_SUCCESS)
        r = drv.launch(
            k->fn[which], (unsigned)blocks, 1, 1, (unsigned)threads, 1, 1, 0,
            (CUstream)yg__cuda()->current_stream(), params, NULL);
    leave(pushed);
    yg__cuda()->device_leave(prev);
    if (r != CUDA_SUCCESS)
        return yg__fail(YG_ERR_DEVICE,
                        "%s: launching a fused kernel on cuda:%d: %s",
                        op,
                        index,
                        driver_error(r));
    yg__fuser_count_cuda_launch();
    return YG_OK;
}

#else

struct yg_fuser_cuda_kernel {
    int unused;
};

const yg_fuser_cuda_kernel *
yg__fuser_cuda_kernel_get(const char *source, int index, char *reason, size_t reason_len) {
    (void)source;
    (void)index;
    snprintf(reason,
             reason_len,
             "fuser: yagrad was built without NVRTC (no CUDA toolkit found): fused groups "
             "on a GPU run through the interpreter");
    return NULL;
}

yg_status yg__fuser_cuda_launch(const yg_fuser_cuda_kernel *k,
                                int index,
                                bool rows,
                                int64_t n,
                                int ndim,
                                const int64_t *sizes,
                                const int64_t *strides,
                                char *const *ptrs,
                                int nops) {
    (void)k, (void)rows, (void)n, (void)ndim, (void)sizes, (void)strides, (void)ptrs, (void)nops;
    return yg__fail(YG_ERR_INTERNAL,
                    "prim::FusionGroup: a CUDA launch on cuda:%d in a build "
                    "without NVRTC",
                    index);
}

#endif
