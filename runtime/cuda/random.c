/*
 * random.c - the random ops on a GPU: the CUDA implementations of the
 * structured rand, randn, randint and bernoulli (cuda/ops.h), which
 * reserve the generator's counters as the CPU's do and fill the result
 * meta/random.c made with cuda/random.cu's transforms of the same
 * counters, so a GPU holds the CPU's values.
 */
#include "cuda/cuda.h"
#include "decls/random.h"

#include "core/core.h"
#include "core/rng.h"

/* The draw kinds of cuda/random.cu (cpu/random.c's, in its order). */
enum { DRAW_UNIFORM, DRAW_NORMAL, DRAW_INT, DRAW_BERNOULLI };

static yg_status draw(const char *op, yg_generator *generator, yg_tensor *t, int kind,
                      int64_t low, uint64_t range, double p, const double *probs)
{
    yg__philox_range r;

    yg__generator_reserve(generator, (uint64_t)yg_tensor_numel(t), &r);
    return yg__cuda_draw(op, t, &r, kind, low, range, p, probs);
}

yg_status yg__cuda_rand_out(const int64_t *size,
                            int64_t size_len,
                            yg_generator *generator,
                            const yg_dtype *dtype,
                            const yg_device *device,
                            yg_tensor *out)
{
    (void)size, (void)size_len, (void)dtype, (void)device;
    return draw("rand", generator, out, DRAW_UNIFORM, 0, 0, 0, NULL);
}

yg_status yg__cuda_randn_out(const int64_t *size,
                             int64_t size_len,
                             yg_generator *generator,
                             const yg_dtype *dtype,
                             const yg_device *device,
                             yg_tensor *out)
{
    (void)size, (void)size_len, (void)dtype, (void)device;
    return draw("randn", generator, out, DRAW_NORMAL, 0, 0, 0, NULL);
}

yg_status yg__cuda_randint_out(int64_t low,
                               int64_t high,
                               const int64_t *size,
                               int64_t size_len,
                               yg_generator *generator,
                               const yg_dtype *dtype,
                               const yg_device *device,
                               yg_tensor *out)
{
    (void)size, (void)size_len, (void)dtype, (void)device;
    return draw("randint", generator, out, DRAW_INT, low, (uint64_t)high - (uint64_t)low, 0,
                NULL);
}

yg_status yg__cuda_bernoulli_out(const yg_tensor *self, yg_generator *generator, yg_tensor *out)
{
    yg_tensor *probs = NULL;

    YG_RETURN_IF_ERROR(yg__tensor_contiguous_as(self, YG_FLOAT64, true, &probs));
    yg_status st = draw("bernoulli", generator, out, DRAW_BERNOULLI, 0, 0, 0,
                        (const double *)yg__tensor_ptr(probs));
    yg_release(probs);
    return st;
}

yg_status yg__cuda_bernoulli_p_out(const yg_tensor *self,
                                   double p,
                                   yg_generator *generator,
                                   yg_tensor *out)
{
    (void)self;
    return draw("bernoulli", generator, out, DRAW_BERNOULLI, 0, 0, p, NULL);
}
