/*
 * cuda.c - the fuser's CUDA path: a fusion group's kernel as CUDA C++
 * (codegen.c) compiled to PTX by NVRTC.  NVRTC is loaded at run time from
 * the toolkit the build found (or the library path), so a build without
 * the CUDA toolkit, or a machine without it, says so instead of failing
 * to link or load.  Device tensors (and so launching the PTX) come with
 * the CUDA backend; until then the PTX is what the tests check, with the
 * toolkit's ptxas.
 */
#include "jit/fuser/fuser.h"
#include "yagrad/jit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef YG_HAVE_NVRTC
#include <dlfcn.h>
#include <nvrtc.h>
#include <pthread.h>

/* The NVRTC entry points used here, from the loaded library. */
static struct {
    bool tried;
    char why[256];
    nvrtcResult (*create)(nvrtcProgram *,
                          const char *,
                          const char *,
                          int,
                          const char *const *,
                          const char *const *);
    nvrtcResult (*compile)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*ptx_size)(nvrtcProgram, size_t *);
    nvrtcResult (*ptx)(nvrtcProgram, char *);
    nvrtcResult (*log_size)(nvrtcProgram, size_t *);
    nvrtcResult (*log)(nvrtcProgram, char *);
    nvrtcResult (*destroy)(nvrtcProgram *);
} nv;
static pthread_mutex_t nv_lock = PTHREAD_MUTEX_INITIALIZER;

static bool load_nvrtc(void) {
    pthread_mutex_lock(&nv_lock);
    if (!nv.tried) {
        nv.tried = true;
        void *h = dlopen(YG_NVRTC_LIBRARY, RTLD_NOW | RTLD_LOCAL);
        if (h == NULL)
            h = dlopen("libnvrtc.so", RTLD_NOW | RTLD_LOCAL);
        if (h == NULL) {
            snprintf(nv.why, sizeof nv.why, "cannot load NVRTC (%s)", YG_NVRTC_LIBRARY);
        } else {
            *(void **)&nv.create = dlsym(h, "nvrtcCreateProgram");
            *(void **)&nv.compile = dlsym(h, "nvrtcCompileProgram");
            *(void **)&nv.ptx_size = dlsym(h, "nvrtcGetPTXSize");
            *(void **)&nv.ptx = dlsym(h, "nvrtcGetPTX");
            *(void **)&nv.log_size = dlsym(h, "nvrtcGetProgramLogSize");
            *(void **)&nv.log = dlsym(h, "nvrtcGetProgramLog");
            *(void **)&nv.destroy = dlsym(h, "nvrtcDestroyProgram");
            if (nv.create == NULL || nv.compile == NULL || nv.ptx_size == NULL || nv.ptx == NULL ||
                nv.log_size == NULL || nv.log == NULL || nv.destroy == NULL)
                snprintf(nv.why, sizeof nv.why, "NVRTC lacks an entry point");
        }
    }
    bool ok = nv.why[0] == '\0';
    pthread_mutex_unlock(&nv_lock);
    return ok;
}

static yg_status compile_ptx(const char *source, const char *arch, char **ptx) {
    nvrtcProgram prog = NULL;
    char opt_arch[64];
    snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=%s", arch);
    const char *opts[] = {opt_arch, "--std=c++17", "-default-device"};
    if (nv.create(&prog, source, "yg_fused.cu", 0, NULL, NULL) != NVRTC_SUCCESS)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "fuser: NVRTC could not create a program");
    nvrtcResult r = nv.compile(prog, 3, opts);
    yg_status st = YG_OK;
    if (r != NVRTC_SUCCESS) {
        size_t n = 0;
        char log[1024] = "";
        if (nv.log_size(prog, &n) == NVRTC_SUCCESS && n > 0) {
            char *full = malloc(n);
            if (full != NULL && nv.log(prog, full) == NVRTC_SUCCESS)
                snprintf(log, sizeof log, "%s", full);
            free(full);
        }
        st = yg__fail(YG_ERR_INVALID_ARGUMENT, "fuser: NVRTC failed for %s: %s", arch, log);
    } else {
        size_t n = 0;
        char *out = NULL;
        if (nv.ptx_size(prog, &n) != NVRTC_SUCCESS || (out = malloc(n + 1)) == NULL ||
            nv.ptx(prog, out) != NVRTC_SUCCESS) {
            free(out);
            st = yg__fail(YG_ERR_OUT_OF_MEMORY, "fuser: cannot read NVRTC's PTX");
        } else {
            out[n] = '\0';
            *ptx = out;
        }
    }
    nv.destroy(&prog);
    return st;
}
#endif

yg_status
yg_fuser_cuda_ptx(const yg_graph *g, int64_t group, const char *arch, char **source, char **ptx) {
    if (source != NULL)
        *source = NULL;
    if (ptx != NULL)
        *ptx = NULL;
    if (g == NULL || arch == NULL || source == NULL || ptx == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "fuser_cuda_ptx: an argument is NULL");
    const yg_ir_node *n = g->first;
    for (int64_t k = 0; n != NULL; n = n->next)
        if (n->kind == yg__prim_fusion_group && k++ == group)
            break;
    if (n == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "fuser_cuda_ptx: the graph has no prim::FusionGroup number %lld",
                        (long long)group);
    const yg_graph *sub = NULL;
    YG_RETURN_IF_ERROR(yg_ir_node_get_graph(n, "subgraph", &sub));
    YG_RETURN_IF_ERROR(yg__fuser_codegen_cuda(sub, source));
#ifdef YG_HAVE_NVRTC
    if (!load_nvrtc())
        return yg__fail(YG_ERR_NOT_IMPLEMENTED, "fuser_cuda_ptx: %s", nv.why);
    yg_status st = compile_ptx(*source, arch, ptx);
    if (st != YG_OK) {
        free(*source);
        *source = NULL;
    }
    return st;
#else
    return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                    "fuser_cuda_ptx: yagrad was built without NVRTC (no CUDA toolkit found); "
                    "the CUDA source is returned, no PTX");
#endif
}
