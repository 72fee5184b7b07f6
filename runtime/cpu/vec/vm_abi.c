/*
 * vm_abi.c - the vector versions of vecmath.h's functions that GCC calls
 * from vectorised loops, for the ISA this copy is compiled for: each is
 * SLEEF's function of that width and ISA under the x86-64 vector function
 * ABI name GCC looks for.
 *
 *   build     ABI letter  floats  doubles  SLEEF
 *   baseline  b (SSE2)    4       2        Sleef_expf4_u10sse2
 *   avx2      d (AVX2)    8       4        Sleef_expf8_u10avx2
 *   avx512    e (AVX-512) 16      8        Sleef_expf16_u10avx512f
 *
 * A loop compiled for AVX-512 may also call the AVX2 versions (GCC
 * vectorises a loop's remainder with the narrower width), and the AVX2 one
 * the SSE2 versions, so every build's versions are linked in together.
 * The names are set with asm labels; nothing else calls these functions.
 */
#include "cpu/vec/vec.h"
#include "cpu/vec/vecmath.h"

#include <immintrin.h>
#include <sleef.h>

#if defined(YG_ISA_AVX512)
#define VF               __m512
#define VD               __m512d
#define ABI_F            "_ZGVeN16"
#define ABI_D            "_ZGVeN8"
#define SLEEF_F(name, u) Sleef_##name##f16_##u##avx512f
#define SLEEF_D(name, u) Sleef_##name##d8_##u##avx512f
#elif defined(YG_ISA_AVX2)
#define VF               __m256
#define VD               __m256d
#define ABI_F            "_ZGVdN8"
#define ABI_D            "_ZGVdN4"
#define SLEEF_F(name, u) Sleef_##name##f8_##u##avx2
#define SLEEF_D(name, u) Sleef_##name##d4_##u##avx2
#else
#define VF               __m128
#define VD               __m128d
#define ABI_F            "_ZGVbN4"
#define ABI_D            "_ZGVbN2"
#define SLEEF_F(name, u) Sleef_##name##f4_##u##sse2
#define SLEEF_D(name, u) Sleef_##name##d2_##u##sse2
#endif

#define YG_VM_DEFINE_UNARY(name, u)                                                                \
    VF YG_ISA_NAME(yg__vm_##name##f)(VF x) __asm__(ABI_F "v_yg_vm_" #name "f");                    \
    VF YG_ISA_NAME(yg__vm_##name##f)(VF x) {                                                       \
        return SLEEF_F(name, u)(x);                                                                \
    }                                                                                              \
    VD YG_ISA_NAME(yg__vm_##name)(VD x) __asm__(ABI_D "v_yg_vm_" #name);                           \
    VD YG_ISA_NAME(yg__vm_##name)(VD x) {                                                          \
        return SLEEF_D(name, u)(x);                                                                \
    }
#define YG_VM_DEFINE_BINARY(name, u)                                                               \
    VF YG_ISA_NAME(yg__vm_##name##f)(VF x, VF y) __asm__(ABI_F "vv_yg_vm_" #name "f");             \
    VF YG_ISA_NAME(yg__vm_##name##f)(VF x, VF y) {                                                 \
        return SLEEF_F(name, u)(x, y);                                                             \
    }                                                                                              \
    VD YG_ISA_NAME(yg__vm_##name)(VD x, VD y) __asm__(ABI_D "vv_yg_vm_" #name);                    \
    VD YG_ISA_NAME(yg__vm_##name)(VD x, VD y) {                                                    \
        return SLEEF_D(name, u)(x, y);                                                             \
    }

YG_VECMATH_UNARY(YG_VM_DEFINE_UNARY)
YG_VECMATH_BINARY(YG_VM_DEFINE_BINARY)
