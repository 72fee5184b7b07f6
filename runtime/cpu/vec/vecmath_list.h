/*
 * vecmath_list.h - the functions of vecmath.h, as X-macro lists, shared by
 * the declarations (vecmath.h), the vector versions (vm_abi.c) and the
 * scalar ones (vm_scalar.c), so one list says what exists.
 */
#ifndef YAGRAD_CPU_VECMATH_LIST_H
#define YAGRAD_CPU_VECMATH_LIST_H

/* X(name, sleef accuracy suffix): the unary functions, then the binary. */
#define YG_VECMATH_UNARY(X)                                                                        \
    X(exp, u10)                                                                                    \
    X(exp2, u10)                                                                                   \
    X(expm1, u10)                                                                                  \
    X(log, u10)                                                                                    \
    X(log2, u10)                                                                                   \
    X(log10, u10)                                                                                  \
    X(log1p, u10)                                                                                  \
    X(sin, u10)                                                                                    \
    X(cos, u10)                                                                                    \
    X(tan, u10)                                                                                    \
    X(asin, u10)                                                                                   \
    X(acos, u10)                                                                                   \
    X(atan, u10)                                                                                   \
    X(sinh, u10)                                                                                   \
    X(cosh, u10)                                                                                   \
    X(tanh, u35)                                                                                   \
    X(asinh, u10)                                                                                  \
    X(acosh, u10)                                                                                  \
    X(atanh, u10)                                                                                  \
    X(erf, u10)                                                                                    \
    X(erfc, u15)                                                                                   \
    X(cbrt, u10)

#define YG_VECMATH_BINARY(X)                                                                       \
    X(pow, u10)                                                                                    \
    X(atan2, u10)

#endif /* YAGRAD_CPU_VECMATH_LIST_H */
