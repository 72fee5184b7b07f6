/*
 * capability.c - picks, once at load, the CPU capability the kernels run
 * at (yagrad/cpu.h) and answers which one it is.
 *
 * GCC's __builtin_cpu_supports reads cpuid and, for AVX and AVX-512, also
 * checks with xgetbv that the OS saves the wider registers, so a level it
 * reports is one the process can use.  AVX-512 here means F, DQ, VL and BW
 * together: the kernels are built with all four (as ATen's AVX512 level),
 * which every AVX-512 server core since Skylake-SP has.  The choice is
 * made in a constructor, before any thread of the program can call a
 * kernel, and never written again, so readers need no lock.
 */
#include "cpu/cpu.h"
#include "cpu/vec/kernels.h"

#include <stdlib.h>
#include <string.h>

static yg_cpu_capability supported = YG_CPU_BASELINE;
static yg_cpu_capability chosen = YG_CPU_BASELINE;

static const char *const names[YG_CPU_CAPABILITY_COUNT_] = {
    [YG_CPU_BASELINE] = "baseline",
    [YG_CPU_AVX2] = "avx2",
    [YG_CPU_AVX512] = "avx512",
};

static yg_cpu_capability detect(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
        return YG_CPU_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return YG_CPU_AVX2;
#endif
    return YG_CPU_BASELINE;
}

static void choose(void) __attribute__((constructor));
static void choose(void) {
    const char *env = getenv("YG_CPU_CAPABILITY");

    supported = detect();
    chosen = supported;
    if (env == NULL)
        return;
    for (int c = 0; c < YG_CPU_CAPABILITY_COUNT_; c++) {
        if (strcmp(env, names[c]) == 0 && (yg_cpu_capability)c < supported)
            chosen = (yg_cpu_capability)c;
    }
}

yg_cpu_capability yg_cpu_capability_get(void) {
    return chosen;
}

yg_cpu_capability yg_cpu_capability_supported(void) {
    return supported;
}

const char *yg_cpu_capability_name(yg_cpu_capability capability) {
    if ((int)capability < 0 || capability >= YG_CPU_CAPABILITY_COUNT_)
        return "unknown";
    return names[capability];
}

const yg_vec_kernels *yg__vec(void) {
    static const yg_vec_kernels *const tables[YG_CPU_CAPABILITY_COUNT_] = {
        [YG_CPU_BASELINE] = &yg__vec_kernels_baseline,
        [YG_CPU_AVX2] = &yg__vec_kernels_avx2,
        [YG_CPU_AVX512] = &yg__vec_kernels_avx512,
    };

    return tables[chosen];
}
