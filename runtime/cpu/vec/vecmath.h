/*
 * vecmath.h - vectorised float and double math for the kernels compiled
 * per CPU capability (cpu/vec/, generated loops/): SLEEF behind the
 * compiler's own vectoriser.
 *
 * Each function yg_vm_<f>f / yg_vm_<f> is declared with GCC's `simd`
 * attribute, a promise that vector versions exist under the x86-64 vector
 * function ABI names (_ZGVeN16v_yg_vm_expf: AVX-512, 16 floats, and so on).
 * When GCC vectorises a loop that calls one, it calls that vector version
 * for the vector width it chose; vm_abi.c defines them, for each ISA, as
 * SLEEF's function of that width and ISA (Sleef_expf16_u10avx512f).  So a
 * plain C loop, generated from a `pointwise:` expression or written by
 * hand, becomes AVX-512 code calling SLEEF, with no intrinsics in it.
 * Where the loop is not vectorised (a strided operand, the remainder, a
 * -O0 build) the scalar yg_vm_* (vm_scalar.c: SLEEF's scalar function of
 * the same accuracy) runs instead.
 *
 * Accuracy: the u10 functions are within 1.0 ULP of the exact result
 * (erfc 1.5 ULP), in float for float and in double for double (SLEEF 3.5
 * documentation); tanh is SLEEF's u35 (within 3.5 ULP, about 2 measured
 * in float), which runs 2.8 times as fast as its u10 on AVX-512: the
 * activation of every RNN and of the fused chains, where u10's tanh was
 * 38% of the time (perf, bench_eager chain_fused_fwd).  The vector and scalar versions of one function compute
 * with the same algorithm, so a result does not depend on where in a
 * tensor its element lies beyond the last bit FMA contraction may move.
 *
 * After this header, exp(x), tanh(x), pow(x, y), ... in a loop are
 * type-generic (as <tgmath.h>, which this header includes for the other
 * functions): float arguments call the float version, anything else the
 * double one.  Include it only in kernel files; it redefines those names.
 */
#ifndef YAGRAD_CPU_VECMATH_H
#define YAGRAD_CPU_VECMATH_H

#include "cpu/vec/vecmath_list.h"

#include <tgmath.h>

#define YG_VM_DECLARE_UNARY(name, u)                                                               \
    __attribute__((simd("notinbranch"), const, nothrow, leaf)) float yg_vm_##name##f(float);       \
    __attribute__((simd("notinbranch"), const, nothrow, leaf)) double yg_vm_##name(double);
#define YG_VM_DECLARE_BINARY(name, u)                                                              \
    __attribute__((simd("notinbranch"), const, nothrow, leaf)) float yg_vm_##name##f(float,        \
                                                                                     float);       \
    __attribute__((simd("notinbranch"), const, nothrow, leaf)) double yg_vm_##name(double, double);
YG_VECMATH_UNARY(YG_VM_DECLARE_UNARY)
YG_VECMATH_BINARY(YG_VM_DECLARE_BINARY)
#undef YG_VM_DECLARE_UNARY
#undef YG_VM_DECLARE_BINARY

/* Type-generic names over them, replacing <tgmath.h>'s: a float argument
 * (or, for two, a float sum of both) takes the float version. */
#define YG_VM_GENERIC1(name, x) _Generic((x), float : yg_vm_##name##f, default : yg_vm_##name)(x)
#define YG_VM_GENERIC2(name, x, y)                                                                 \
    _Generic((x) + (y), float : yg_vm_##name##f, default : yg_vm_##name)((x), (y))

#undef exp
#undef exp2
#undef expm1
#undef log
#undef log2
#undef log10
#undef log1p
#undef sin
#undef cos
#undef tan
#undef asin
#undef acos
#undef atan
#undef sinh
#undef cosh
#undef tanh
#undef asinh
#undef acosh
#undef atanh
#undef erf
#undef erfc
#undef cbrt
#undef pow
#undef atan2
#define exp(x)      YG_VM_GENERIC1(exp, x)
#define exp2(x)     YG_VM_GENERIC1(exp2, x)
#define expm1(x)    YG_VM_GENERIC1(expm1, x)
#define log(x)      YG_VM_GENERIC1(log, x)
#define log2(x)     YG_VM_GENERIC1(log2, x)
#define log10(x)    YG_VM_GENERIC1(log10, x)
#define log1p(x)    YG_VM_GENERIC1(log1p, x)
#define sin(x)      YG_VM_GENERIC1(sin, x)
#define cos(x)      YG_VM_GENERIC1(cos, x)
#define tan(x)      YG_VM_GENERIC1(tan, x)
#define asin(x)     YG_VM_GENERIC1(asin, x)
#define acos(x)     YG_VM_GENERIC1(acos, x)
#define atan(x)     YG_VM_GENERIC1(atan, x)
#define sinh(x)     YG_VM_GENERIC1(sinh, x)
#define cosh(x)     YG_VM_GENERIC1(cosh, x)
#define tanh(x)     YG_VM_GENERIC1(tanh, x)
#define asinh(x)    YG_VM_GENERIC1(asinh, x)
#define acosh(x)    YG_VM_GENERIC1(acosh, x)
#define atanh(x)    YG_VM_GENERIC1(atanh, x)
#define erf(x)      YG_VM_GENERIC1(erf, x)
#define erfc(x)     YG_VM_GENERIC1(erfc, x)
#define cbrt(x)     YG_VM_GENERIC1(cbrt, x)
#define pow(x, y)   YG_VM_GENERIC2(pow, x, y)
#define atan2(x, y) YG_VM_GENERIC2(atan2, x, y)

#endif /* YAGRAD_CPU_VECMATH_H */
