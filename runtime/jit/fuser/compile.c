/*
 * compile.c - a fused kernel's source to a function: the memory cache
 * (source hash -> function, for the process), the disk cache (one shared
 * object per source under $YG_FUSER_CACHE_DIR, else
 * $XDG_CACHE_HOME/yagrad/fuser, else ~/.cache/yagrad/fuser) and the system
 * C compiler ($YG_FUSER_CC, else the compiler that built yagrad).
 *
 * A cache entry's name is a hash of the source, the compiler, its flags
 * and this library's version; the object also carries the hash as a
 * string (yg_fused_key), checked after dlopen, so a file that is not what
 * its name says (truncated, overwritten) is rebuilt.  Builds write to a
 * name unique to the process and rename into place, so processes sharing
 * the cache never see half a file.  Kernels link against the libyagrad
 * that is running (its SLEEF-backed math).  $YG_FUSER_DUMP=<dir> writes
 * each source there.  Nothing here fails for a compiler problem: the
 * caller gets no function and the reason (the compiler's first lines),
 * and runs the group through the interpreter.
 */
#include "jit/fuser/fuser.h"
#include "yagrad/cpu.h"
#include "yagrad/jit.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bumped when the kernel calling convention changes, so old cached objects
 * are not reused. */
#define YG_FUSER_ABI "yagrad-fuser-1"

#ifndef YG_FUSER_CC
#define YG_FUSER_CC "cc"
#endif
#ifndef YG_FUSER_FLAGS_AVX2
#define YG_FUSER_FLAGS_AVX2 "-mavx2;-mfma"
#endif
#ifndef YG_FUSER_FLAGS_AVX512
#define YG_FUSER_FLAGS_AVX512 "-mavx512f;-mavx512dq;-mavx512vl;-mavx512bw;-mavx2;-mfma"
#endif

/* ---- counters ---- */

static atomic_llong n_compiled, n_disk_hits, n_memory_hits, n_fallbacks;
static atomic_llong n_cuda_compiled, n_cuda_disk_hits, n_cuda_memory_hits, n_cuda_launches;
static pthread_mutex_t reason_lock = PTHREAD_MUTEX_INITIALIZER;
static char last_reason[512];

void yg__fuser_count_compiled(void) {
    atomic_fetch_add(&n_compiled, 1);
}
void yg__fuser_count_disk_hit(void) {
    atomic_fetch_add(&n_disk_hits, 1);
}
void yg__fuser_count_memory_hit(void) {
    atomic_fetch_add(&n_memory_hits, 1);
}
void yg__fuser_count_fallback(const char *reason) {
    atomic_fetch_add(&n_fallbacks, 1);
    pthread_mutex_lock(&reason_lock);
    snprintf(last_reason, sizeof last_reason, "%s", reason);
    pthread_mutex_unlock(&reason_lock);
}

void yg__fuser_count_cuda_compiled(void) {
    atomic_fetch_add(&n_cuda_compiled, 1);
}
void yg__fuser_count_cuda_disk_hit(void) {
    atomic_fetch_add(&n_cuda_disk_hits, 1);
}
void yg__fuser_count_cuda_memory_hit(void) {
    atomic_fetch_add(&n_cuda_memory_hits, 1);
}
void yg__fuser_count_cuda_launch(void) {
    atomic_fetch_add(&n_cuda_launches, 1);
}

yg_fuser_stats yg_fuser_get_stats(void) {
    yg_fuser_stats s;
    s.kernels_compiled = atomic_load(&n_compiled);
    s.disk_cache_hits = atomic_load(&n_disk_hits);
    s.memory_cache_hits = atomic_load(&n_memory_hits);
    s.fallbacks = atomic_load(&n_fallbacks);
    s.cuda_kernels_compiled = atomic_load(&n_cuda_compiled);
    s.cuda_disk_cache_hits = atomic_load(&n_cuda_disk_hits);
    s.cuda_memory_cache_hits = atomic_load(&n_cuda_memory_hits);
    s.cuda_launches = atomic_load(&n_cuda_launches);
    pthread_mutex_lock(&reason_lock);
    snprintf(s.last_fallback, sizeof s.last_fallback, "%s", last_reason);
    pthread_mutex_unlock(&reason_lock);
    return s;
}

/* ---- the memory cache ---- */

typedef struct entry {
    uint64_t hash;
    char *source;
    yg_fused_fn fn;
    struct entry *next;
} entry;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static entry *memory_cache;

static uint64_t hash_str(uint64_t h, const char *s) {
    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* ---- compiler and paths ---- */

static const char *compiler(void) {
    const char *cc = getenv("YG_FUSER_CC");
    return cc != NULL && cc[0] != '\0' ? cc : YG_FUSER_CC;
}

/* The ISA flags of the level the CPU runs ("-mavx2 -mfma"), from the
 * CMake lists the per-ISA kernels are built with. */
static void isa_flags(char *buf, size_t len) {
    const char *list = "";
    switch (yg_cpu_capability_get()) {
    case YG_CPU_AVX512:
        list = YG_FUSER_FLAGS_AVX512;
        break;
    case YG_CPU_AVX2:
        list = YG_FUSER_FLAGS_AVX2;
        break;
    default:
        break;
    }
    snprintf(buf, len, "%s", list);
    for (char *p = buf; *p != '\0'; p++)
        if (*p == ';')
            *p = ' ';
}

static bool mkdirs(const char *path) {
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p != '\0'; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            return false;
        *p = '/';
    }
    return mkdir(tmp, 0755) == 0 || errno == EEXIST;
}

bool yg__fuser_cache_dir(char *buf, size_t len) {
    const char *d = getenv("YG_FUSER_CACHE_DIR");
    if (d != NULL && d[0] != '\0')
        snprintf(buf, len, "%s", d);
    else if ((d = getenv("XDG_CACHE_HOME")) != NULL && d[0] != '\0')
        snprintf(buf, len, "%s/yagrad/fuser", d);
    else if ((d = getenv("HOME")) != NULL && d[0] != '\0')
        snprintf(buf, len, "%s/.cache/yagrad/fuser", d);
    else
        snprintf(buf, len, "/tmp/yagrad-fuser-%d", (int)getuid());
    return mkdirs(buf);
}

/* An object only this library refers to (a table a program reads may be
 * copied into the program by the linker), to find the library by. */
static const char library_anchor = 0;

/* The path of the running libyagrad, which kernels link against; "" when
 * yagrad is part of the program itself (its symbols are then found in
 * the program). */
static bool library_path(char *buf, size_t len) {
    Dl_info info;
    if (dladdr(&library_anchor, &info) == 0 || info.dli_fname == NULL)
        return false;
    bool shared = strstr(info.dli_fname, ".so") != NULL;
    snprintf(buf, len, "%s", shared ? info.dli_fname : "");
    return true;
}

/* Opens a cached object and checks its key; NULL when it is missing or not
 * what its name says. */
static yg_fused_fn open_object(const char *path, const char *key) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL)
        return NULL;
    const char *const *k = dlsym(h, "yg_fused_key");
    yg_fused_fn fn = NULL;
    if (k != NULL && *k != NULL && strcmp(*k, key) == 0)
        *(void **)&fn = dlsym(h, "yg_fused_kernel");
    if (fn == NULL)
        dlclose(h);
    return fn; /* the handle stays open for the process */
}

static bool write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return false;
    bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

/* The first line of a file, for a reason. */
static void first_lines(const char *path, char *buf, size_t len) {
    FILE *f = fopen(path, "r");
    size_t n = 0;
    buf[0] = '\0';
    if (f == NULL)
        return;
    n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
    for (char *p = buf; *p != '\0'; p++)
        if (*p == '\n')
            *p = ' ';
}

static void dump(const char *source, const char *key) {
    const char *dir = getenv("YG_FUSER_DUMP");
    char path[1200];
    if (dir == NULL || dir[0] == '\0' || !mkdirs(dir))
        return;
    snprintf(path, sizeof path, "%s/%s.c", dir, key);
    (void)write_file(path, source);
}

/* Compiles source into the disk cache and opens it. */
static yg_fused_fn build(const char *dir,
                         const char *key,
                         const char *source,
                         const char *flags,
                         const char *lib,
                         char *reason,
                         size_t reason_len) {
    char src[1200], obj[1200], tmp[1200], err[1200], cmd[6000];
    long pid = (long)getpid();
    snprintf(src, sizeof src, "%s/%s.%ld.c", dir, key, pid);
    snprintf(tmp, sizeof tmp, "%s/%s.%ld.so", dir, key, pid);
    snprintf(err, sizeof err, "%s/%s.%ld.err", dir, key, pid);
    snprintf(obj, sizeof obj, "%s/%s.so", dir, key);
    size_t n = strlen(source) + strlen(key) + 64;
    char *text = malloc(n);
    if (text == NULL) {
        snprintf(reason, reason_len, "out of memory");
        return NULL;
    }
    snprintf(text, n, "%sconst char *const yg_fused_key = \"%s\";\n", source, key);
    bool wrote = write_file(src, text);
    free(text);
    if (!wrote) {
        snprintf(reason, reason_len, "cannot write %s: %s", src, strerror(errno));
        return NULL;
    }
    snprintf(cmd,
             sizeof cmd,
             "'%s' -std=gnu11 -O3 %s -fopenmp -fno-math-errno -fno-trapping-math "
             "-fvect-cost-model=dynamic -fPIC -shared -o '%s' '%s' %s%s%s 2>'%s'",
             compiler(),
             flags,
             tmp,
             src,
             lib[0] ? "'" : "",
             lib,
             lib[0] ? "'" : "",
             err);
    int rc = system(cmd);
    yg_fused_fn fn = NULL;
    if (rc != 0) {
        char msg[400];
        first_lines(err, msg, sizeof msg);
        snprintf(reason,
                 reason_len,
                 "compiler '%s' failed (status %d): %s",
                 compiler(),
                 rc,
                 msg[0] != '\0' ? msg : "no output");
    } else if (rename(tmp, obj) != 0) {
        snprintf(reason, reason_len, "cannot rename %s: %s", tmp, strerror(errno));
    } else if ((fn = open_object(obj, key)) == NULL) {
        snprintf(reason, reason_len, "cannot load %s: %s", obj, dlerror());
    }
    unlink(src);
    unlink(err);
    unlink(tmp);
    return fn;
}

yg_status yg__fuser_compile(const char *source, yg_fused_fn *fn, char *reason, size_t reason_len) {
    char flags[256], lib[1024], dir[1024], key[64];
    *fn = NULL;
    reason[0] = '\0';
    isa_flags(flags, sizeof flags);
    if (!library_path(lib, sizeof lib)) {
        snprintf(reason, reason_len, "cannot find the path of libyagrad to link kernels with");
        return YG_OK;
    }
    uint64_t h = hash_str(0xcbf29ce484222325ULL, source);
    h = hash_str(h, compiler());
    h = hash_str(h, flags);
    h = hash_str(h, YG_FUSER_ABI);
    snprintf(key, sizeof key, "%016" PRIx64, h);

    pthread_mutex_lock(&cache_lock);
    for (entry *e = memory_cache; e != NULL; e = e->next) {
        if (e->hash == h && strcmp(e->source, source) == 0) {
            *fn = e->fn;
            pthread_mutex_unlock(&cache_lock);
            yg__fuser_count_memory_hit();
            return YG_OK;
        }
    }
    /* Compiling under the lock: two threads wanting one kernel compile it
     * once. */
    dump(source, key);
    if (!yg__fuser_cache_dir(dir, sizeof dir)) {
        snprintf(reason, reason_len, "cannot create the cache folder %s: %s", dir, strerror(errno));
    } else {
        char obj[1200];
        snprintf(obj, sizeof obj, "%s/%s.so", dir, key);
        if (access(obj, R_OK) == 0 && (*fn = open_object(obj, key)) != NULL) {
            yg__fuser_count_disk_hit();
        } else {
            if (access(obj, F_OK) == 0)
                unlink(obj); /* not what its name says: rebuilt */
            *fn = build(dir, key, source, flags, lib, reason, reason_len);
            if (*fn != NULL)
                yg__fuser_count_compiled();
        }
    }
    if (*fn != NULL) {
        entry *e = calloc(1, sizeof *e);
        char *copy = strdup(source);
        if (e != NULL && copy != NULL) {
            e->hash = h;
            e->source = copy;
            e->fn = *fn;
            e->next = memory_cache;
            memory_cache = e;
        } else {
            free(e);
            free(copy);
        }
    }
    pthread_mutex_unlock(&cache_lock);
    return YG_OK;
}
