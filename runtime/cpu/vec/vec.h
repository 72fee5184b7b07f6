/*
 * vec.h - what a file compiled once per CPU capability includes first.
 *
 * CMake builds every source under runtime/cpu/vec/ and every generated
 * loops/<section>.c three times (yagrad/cpu.h: baseline, avx2, avx512),
 * each time with that ISA's flags and YG_ISA defined to its name, and
 * links all three into the library.  Their external names must differ per
 * build: YG_ISA_NAME(yg__softmax_rows_f32) is yg__softmax_rows_f32_avx2 in
 * the AVX2 build.  Which build runs is chosen at load (cpu/capability.c)
 * through the tables declared in cpu/cpu.h and cpu/vec/kernels.h.
 */
#ifndef YAGRAD_CPU_VEC_H
#define YAGRAD_CPU_VEC_H

#include "cpu/cpu.h"

#ifndef YG_ISA
#error "files under cpu/vec/ are compiled once per ISA with YG_ISA set (CMakeLists.txt)"
#endif

#define YG_ISA_CAT_(name, isa) name##_##isa
#define YG_ISA_CAT(name, isa)  YG_ISA_CAT_(name, isa)
#define YG_ISA_NAME(name)      YG_ISA_CAT(name, YG_ISA)

#endif /* YAGRAD_CPU_VEC_H */
