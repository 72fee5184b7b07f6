/*
 * yagrad/cpu.h - the CPU capability the kernels run at.
 *
 * The generated pointwise kernels and the hot handwritten ones (softmax
 * family, normalisations, reductions) are compiled three times from the
 * same source: for baseline x86-64 (SSE2), for AVX2 + FMA and for AVX-512
 * (F, DQ, VL, BW).  When the library is loaded it asks the processor
 * (cpuid, and the OS for the AVX/AVX-512 register state) which of these it
 * can run and picks the highest; every kernel call then uses that level's
 * code.  The choice is made once and never changes while the process runs.
 *
 * The environment variable YG_CPU_CAPABILITY (baseline, avx2 or avx512),
 * read once at load, caps the level: to compare levels, to rule one out
 * when reporting a bug, or for tests.  A value above what the processor
 * supports, or one that names no level, is ignored (the library never
 * prints): yg_cpu_capability() tells which level was taken.
 *
 * Thread safety: every function here may be called from any thread.
 * Anything not declared here is not API.
 */
#ifndef YAGRAD_PUBLIC_CPU_H
#define YAGRAD_PUBLIC_CPU_H

#ifdef __cplusplus
extern "C" {
#endif

/* Kernel levels, lowest first.  Append only. */
typedef enum yg_cpu_capability {
    YG_CPU_BASELINE = 0, /* x86-64: SSE2 */
    YG_CPU_AVX2 = 1,     /* AVX2 and FMA */
    YG_CPU_AVX512 = 2,   /* AVX-512 F, DQ, VL and BW */
    YG_CPU_CAPABILITY_COUNT_
} yg_cpu_capability;

/* The level the kernels run at in this process.  Cannot fail. */
yg_cpu_capability yg_cpu_capability_get(void);

/* The highest level this processor and OS support, whatever
 * YG_CPU_CAPABILITY says.  Cannot fail. */
yg_cpu_capability yg_cpu_capability_supported(void);

/* "baseline", "avx2" or "avx512"; "unknown" for a value that is no level.
 * Returns: a static string.  Cannot fail. */
const char *yg_cpu_capability_name(yg_cpu_capability capability);

#ifdef __cplusplus
}
#endif
#endif /* YAGRAD_PUBLIC_CPU_H */
