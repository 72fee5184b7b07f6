/*
 * cuda_ptx.c - compiles CUDA sources to PTX with NVRTC and has the
 * toolkit's ptxas assemble them for sm_80 and sm_90: no GPU needed.
 *
 *   cuda_ptx <ptxas> <include dir> <file.cu>...
 *
 * CTest runs it over the generated CUDA loops (generated/cuda/*.cu, the
 * checked-in copy), which under NVRTC instantiate every kernel instead of
 * defining launchers (cuda/pointwise.cuh).  Each file must yield four
 * kernels per YG_CUDA_LOOP line, with the linear kernels' vector stores,
 * and PTX ptxas accepts for both architectures.  Prints one line per file; exits 1 on the first failure
 * with NVRTC's log or ptxas's complaint.
 */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s != NULL && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s != NULL)
        s[n] = '\0';
    fclose(f);
    return s;
}

static int count(const char *s, const char *needle) {
    int n = 0;
    for (const char *p = strstr(s, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* The PTX of source for compute_80, or NULL after printing the log. */
static char *compile(const char *path, const char *source, const char *include_dir) {
    nvrtcProgram prog;
    char inc[1024];
    snprintf(inc, sizeof inc, "--include-path=%s", include_dir);
    const char *opts[] = {"--gpu-architecture=compute_80", "--std=c++17", inc};
    if (nvrtcCreateProgram(&prog, source, path, 0, NULL, NULL) != NVRTC_SUCCESS) {
        fprintf(stderr, "%s: nvrtcCreateProgram failed\n", path);
        return NULL;
    }
    char *ptx = NULL;
    size_t n = 0;
    if (nvrtcCompileProgram(prog, 3, opts) != NVRTC_SUCCESS) {
        if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS) {
            char *log = malloc(n + 1);
            if (log != NULL && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS)
                fprintf(stderr, "%s: NVRTC failed:\n%s\n", path, log);
            free(log);
        }
    } else if (nvrtcGetPTXSize(prog, &n) == NVRTC_SUCCESS && (ptx = malloc(n + 1)) != NULL) {
        if (nvrtcGetPTX(prog, ptx) != NVRTC_SUCCESS) {
            free(ptx);
            ptx = NULL;
        } else {
            ptx[n] = '\0';
        }
    }
    nvrtcDestroyProgram(&prog);
    return ptx;
}

static int assemble(const char *ptxas, const char *path, const char *ptx) {
    char tmp[256], cmd[1400];
    snprintf(tmp, sizeof tmp, "/tmp/yg-cuda-ptx-%d.ptx", (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (f == NULL || fputs(ptx, f) < 0) {
        fprintf(stderr, "%s: cannot write %s\n", path, tmp);
        if (f != NULL)
            fclose(f);
        return 1;
    }
    fclose(f);
    int rc = 0;
    for (int a = 0; a < 2 && rc == 0; a++) {
        const char *arch = a == 0 ? "sm_80" : "sm_90";
        snprintf(cmd, sizeof cmd, "'%s' -arch=%s '%s' -o /dev/null", ptxas, arch, tmp);
        if (system(cmd) != 0) {
            fprintf(stderr, "%s: ptxas rejected the PTX for %s\n", path, arch);
            rc = 1;
        }
    }
    unlink(tmp);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s <ptxas> <include dir> <file.cu>...\n", argv[0]);
        return 2;
    }
    int total = 0;
    for (int i = 3; i < argc; i++) {
        char *src = read_file(argv[i]);
        if (src == NULL) {
            fprintf(stderr, "%s: cannot read\n", argv[i]);
            return 1;
        }
        char *ptx = compile(argv[i], src, argv[2]);
        if (ptx == NULL) {
            free(src);
            return 1;
        }
        /* "YG_CUDA_LOOP(" also names the macro in the header comment of
         * pointwise.cuh, not in a generated file. */
        int loops = count(src, "\nYG_CUDA_LOOP(");
        int entries = count(ptx, ".entry ");
        int rc = entries == 4 * loops ? 0 : 1;
        if (rc != 0)
            fprintf(stderr,
                    "%s: %d kernels in the PTX, expected 4 per loop (%d loops)\n",
                    argv[i],
                    entries,
                    loops);
        /* The linear kernels' vector path (pointwise.cuh): 16-byte
         * stores of packed elements. */
        int vec = count(ptx, "st.global.v");
        if (rc == 0 && loops > 0 && vec == 0) {
            fprintf(stderr, "%s: no vector store in the PTX of %d loops\n", argv[i], loops);
            rc = 1;
        }
        if (rc == 0)
            rc = assemble(argv[1], argv[i], ptx);
        if (rc == 0)
            printf("%s: %d loops, %d kernels (%d vector stores), assembled for sm_80 and "
                   "sm_90\n",
                   argv[i],
                   loops,
                   entries,
                   vec);
        total += loops;
        free(ptx);
        free(src);
        if (rc != 0)
            return 1;
    }
    printf("%d loops of %d files compiled to PTX\n", total, argc - 3);
    return 0;
}
