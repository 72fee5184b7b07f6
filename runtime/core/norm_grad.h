/*
 * core/norm_grad.h - d norm / d x for one element, the one definition the
 * CPU's norm_backward (cpu/reduce_stats.c) and the GPU's (cuda/rows.cu)
 * both compile, so the two devices compute it alike.  Read by C and by
 * nvcc.  In core, below both backends, as intmath.h and rng.h: formulas
 * both devices compile.  Not public API.
 */
#ifndef YAGRAD_CORE_NORM_GRAD_H
#define YAGRAD_CORE_NORM_GRAD_H

#ifdef __CUDACC__
#define YG_NORM_GRAD_FN static inline __host__ __device__
#else
#include <math.h>
#define YG_NORM_GRAD_FN static inline
#endif

/* x its value, n the norm, count the number of elements attaining it
 * (for p = +-inf). */
YG_NORM_GRAD_FN double yg__norm_grad(double x, double n, double p, long long count)
{
    double s = (double)((x > 0) - (x < 0));
    if (p == 0)
        return 0;
    if (isinf(p))
        return fabs(x) == n ? s / (double)count : 0;
    if (p == 1)
        return s;
    /* Where the norm is 0 every element is 0: the subgradient 0. */
    if (n == 0)
        return 0;
    if (p == 2)
        return x / n;
    /* x |x|^(p-2) / n^(p-1), written as s |x|^(p-1) so that x = 0 with
     * p < 2 gives 0 rather than 0 * inf. */
    return s * pow(fabs(x), p - 1) / pow(n, p - 1);
}

#endif /* YAGRAD_CORE_NORM_GRAD_H */
