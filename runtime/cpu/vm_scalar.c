/*
 * vm_scalar.c - the scalar versions of cpu/vec/vecmath.h's functions:
 * SLEEF's scalar function of the same accuracy as the vector ones, so an
 * element computed outside a vectorised loop (a strided operand, a loop's
 * remainder) gets the same algorithm as its neighbours.
 *
 * This file is compiled once and does not include vecmath.h: a definition
 * of a function declared with the `simd` attribute would make GCC emit its
 * own vector clones under the names vm_abi.c defines.
 */
#include "cpu/vec/vecmath_list.h"

#include <sleef.h>

#define YG_VM_SCALAR_UNARY(name, u)                                                                \
    float yg_vm_##name##f(float x);                                                                \
    float yg_vm_##name##f(float x) {                                                               \
        return Sleef_##name##f_##u(x);                                                             \
    }                                                                                              \
    double yg_vm_##name(double x);                                                                 \
    double yg_vm_##name(double x) {                                                                \
        return Sleef_##name##_##u(x);                                                              \
    }
#define YG_VM_SCALAR_BINARY(name, u)                                                               \
    float yg_vm_##name##f(float x, float y);                                                       \
    float yg_vm_##name##f(float x, float y) {                                                      \
        return Sleef_##name##f_##u(x, y);                                                          \
    }                                                                                              \
    double yg_vm_##name(double x, double y);                                                       \
    double yg_vm_##name(double x, double y) {                                                      \
        return Sleef_##name##_##u(x, y);                                                           \
    }

YG_VECMATH_UNARY(YG_VM_SCALAR_UNARY)
YG_VECMATH_BINARY(YG_VM_SCALAR_BINARY)
