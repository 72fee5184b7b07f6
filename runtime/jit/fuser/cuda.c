/*
 * cuda.c - the fuser's CUDA code: a fusion group's kernel as CUDA C++
 * (codegen.c) compiled to PTX by NVRTC, for yg_fuser_cuda_ptx and for
 * groups that run on a GPU (cuda_run.c loads the PTX).  NVRTC is loaded
 * at run time from the toolkit the build found (or the library path), so
 * a build without the CUDA toolkit, or a machine without it, says so
 * instead of failing to link or load.
 *
 * PTX is cached like the CPU's kernels (compile.c): in memory for the
 * process (source + architecture -> PTX, never freed: cuda_run.c and
 * callers borrow it) and on disk, one <key>.ptx file per source,
 * architecture, NVRTC version and calling convention in the fuser's cache
 * folder.  The file's first line is "// yg_fused_key <key>", checked when
 * it is read, so a file that is not what its name says is compiled again;
 * files are written to a name unique to the process and renamed into
 * place.  NVRTC takes ~0.5 s a kernel, so the disk cache is what makes a
 * second process start quickly.
 */
#include "jit/fuser/fuser.h"
#include "yagrad/jit.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef YG_HAVE_NVRTC
#include <dlfcn.h>
#include <errno.h>
#include <nvrtc.h>
#include <pthread.h>
#include <unistd.h>

/* Bumped when codegen's CUDA calling convention (struct yg_fused_args)
 * changes, so old cached PTX is not reused. */
#define YG_FUSER_CUDA_ABI "yagrad-fuser-cuda-1"

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
    /* Optional (NVRTC 11.2 and later): the architectures it targets. */
    nvrtcResult (*n_archs)(int *);
    nvrtcResult (*archs)(int *);
    int major, minor; /* nvrtcVersion, part of the disk cache's key */
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
            *(void **)&nv.n_archs = dlsym(h, "nvrtcGetNumSupportedArchs");
            *(void **)&nv.archs = dlsym(h, "nvrtcGetSupportedArchs");
            nvrtcResult (*version)(int *, int *) = NULL;
            *(void **)&version = dlsym(h, "nvrtcVersion");
            if (version == NULL || version(&nv.major, &nv.minor) != NVRTC_SUCCESS)
                nv.major = nv.minor = -1;
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

/* ---- the caches ---- */

typedef struct ptx_entry {
    uint64_t hash; /* of source and arch */
    char *source;
    char arch[32];
    char *ptx;
    struct ptx_entry *next;
} ptx_entry;

static pthread_mutex_t ptx_lock = PTHREAD_MUTEX_INITIALIZER;
static ptx_entry *ptx_cache;

static uint64_t hash_str(uint64_t h, const char *s) {
    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* The PTX of the cache file path (its key line removed), NULL when it is
 * missing or not what its name says: another key line, a NUL inside, or
 * an entry point missing (a truncated file). */
static char *read_ptx(const char *path, const char *key_line) {
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    long n = 0;
    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = malloc((size_t)n + 1)) != NULL && fread(text, 1, (size_t)n, f) == (size_t)n) {
        text[n] = '\0';
    } else {
        free(text);
        text = NULL;
    }
    fclose(f);
    size_t kl = strlen(key_line);
    if (text == NULL || strlen(text) != (size_t)n || strncmp(text, key_line, kl) != 0 ||
        strstr(text, ".entry yg_fused_kernel(") == NULL ||
        strstr(text, ".entry yg_fused_kernel_i32(") == NULL) {
        free(text);
        return NULL;
    }
    memmove(text, text + kl, (size_t)n - kl + 1);
    return text;
}

/* Writes ptx under its key; the cache is best effort: a folder that
 * cannot be written costs a compile next time, nothing else. */
static void write_ptx(const char *dir, const char *key, const char *key_line, const char *ptx) {
    char tmp[1200], path[1200];
    snprintf(tmp, sizeof tmp, "%s/%s.%ld.ptx.tmp", dir, key, (long)getpid());
    snprintf(path, sizeof path, "%s/%s.ptx", dir, key);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return;
    bool ok = fputs(key_line, f) >= 0 && fputs(ptx, f) >= 0;
    if (fclose(f) != 0 || !ok || rename(tmp, path) != 0)
        unlink(tmp);
}

yg_status yg__fuser_cuda_ptx_of(const char *source, const char *arch, const char **ptx) {
    *ptx = NULL;
    if (!load_nvrtc())
        return yg__fail(YG_ERR_NOT_IMPLEMENTED, "fuser: %s", nv.why);
    uint64_t h = hash_str(hash_str(0xcbf29ce484222325ULL, source), arch);
    pthread_mutex_lock(&ptx_lock);
    for (ptx_entry *e = ptx_cache; e != NULL; e = e->next) {
        if (e->hash == h && strcmp(e->arch, arch) == 0 && strcmp(e->source, source) == 0) {
            *ptx = e->ptx;
            pthread_mutex_unlock(&ptx_lock);
            yg__fuser_count_cuda_memory_hit();
            return YG_OK;
        }
    }
    /* Compiling under the lock: two threads wanting one kernel compile it
     * once. */
    char version[32], key[64], key_line[128], dir[1024], path[1200];
    snprintf(version, sizeof version, "nvrtc %d.%d", nv.major, nv.minor);
    snprintf(key, sizeof key, "%016" PRIx64, hash_str(hash_str(h, version), YG_FUSER_CUDA_ABI));
    snprintf(key_line, sizeof key_line, "// yg_fused_key %s %s %s\n", key, arch, version);
    bool disk = yg__fuser_cache_dir(dir, sizeof dir);
    char *text = NULL;
    yg_status st = YG_OK;
    if (disk) {
        snprintf(path, sizeof path, "%s/%s.ptx", dir, key);
        text = read_ptx(path, key_line);
    }
    if (text != NULL) {
        yg__fuser_count_cuda_disk_hit();
    } else {
        st = compile_ptx(source, arch, &text);
        if (st == YG_OK) {
            yg__fuser_count_cuda_compiled();
            if (disk)
                write_ptx(dir, key, key_line, text);
        }
    }
    ptx_entry *e = NULL;
    char *copy = NULL;
    if (st == YG_OK && ((e = calloc(1, sizeof *e)) == NULL || (copy = strdup(source)) == NULL)) {
        free(e);
        free(copy);
        free(text);
        st = yg__fail(YG_ERR_OUT_OF_MEMORY, "fuser: out of memory");
    } else if (st == YG_OK) {
        e->hash = h;
        e->source = copy;
        snprintf(e->arch, sizeof e->arch, "%s", arch);
        e->ptx = text;
        e->next = ptx_cache;
        ptx_cache = e;
        *ptx = text;
    }
    pthread_mutex_unlock(&ptx_lock);
    return st;
}

yg_status yg__fuser_cuda_arch(int major, int minor, char *arch, size_t len) {
    if (!load_nvrtc())
        return yg__fail(YG_ERR_NOT_IMPLEMENTED, "fuser: %s", nv.why);
    int want = major * 10 + minor, best = want, n = 0, list[128];
    if (nv.n_archs != NULL && nv.archs != NULL && nv.n_archs(&n) == NVRTC_SUCCESS && n > 0 &&
        n <= (int)(sizeof list / sizeof list[0]) && nv.archs(list) == NVRTC_SUCCESS) {
        best = -1;
        for (int i = 0; i < n; i++)
            if (list[i] <= want && list[i] > best)
                best = list[i];
        if (best < 0)
            return yg__fail(YG_ERR_DEVICE,
                            "fuser: NVRTC %d.%d compiles for no architecture up to the "
                            "device's sm_%d%d",
                            nv.major,
                            nv.minor,
                            major,
                            minor);
    }
    snprintf(arch, len, "compute_%d", best);
    return YG_OK;
}

#else

static const char no_nvrtc[] = "yagrad was built without NVRTC (no CUDA toolkit found)";

yg_status yg__fuser_cuda_ptx_of(const char *source, const char *arch, const char **ptx) {
    (void)source;
    (void)arch;
    *ptx = NULL;
    return yg__fail(YG_ERR_NOT_IMPLEMENTED, "fuser: %s", no_nvrtc);
}

yg_status yg__fuser_cuda_arch(int major, int minor, char *arch, size_t len) {
    (void)major;
    (void)minor;
    if (len > 0)
        arch[0] = '\0';
    return yg__fail(YG_ERR_NOT_IMPLEMENTED, "fuser: %s", no_nvrtc);
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
    const char *cached = NULL;
    yg_status st = yg__fuser_cuda_ptx_of(*source, arch, &cached);
    if (st == YG_ERR_NOT_IMPLEMENTED) { /* no NVRTC: the source only */
        char why[512];
        snprintf(why, sizeof why, "%s", yg_last_error() + strlen("fuser: "));
        return yg__fail(st, "fuser_cuda_ptx: %s", why);
    }
    if (st == YG_OK && (*ptx = strdup(cached)) == NULL)
        st = yg__fail(YG_ERR_OUT_OF_MEMORY, "fuser_cuda_ptx: out of memory");
    if (st != YG_OK) {
        free(*source);
        *source = NULL;
    }
    return st;
}
