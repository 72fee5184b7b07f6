/*
 * random.c - the random ops: rand, randn, randint and bernoulli (with a
 * probability tensor or one probability p).
 *
 * Each op validates everything first, then reserves numel counters of
 * its generator (core/rng.h), so a call that fails leaves the generator
 * untouched.  Element i is computed from counter base + i alone, so the
 * loop may be split over OpenMP threads in any way and the result is the
 * same for every thread count.  One Philox block per element wastes some
 * of its 128 bits (rand float32 uses 24), but keeps "element i <- counter
 * i" true for every op and dtype, which is what makes results easy to
 * reason about and to reproduce.
 *
 * Transforms (words w0..w3 of the element's block):
 *   rand:      float32 (w0 >> 8) 2^-24; float64 53 bits of w0, w1 times 2^-53
 *   randn:     Box-Muller on u1 = 1 - U(w0, w1) in (0, 1] and u2 = U(w2, w3):
 *              sqrt(-2 ln u1) cos(2 pi u2), in double, rounded to the dtype
 *   randint:   low + ((w0 << 32 | w1) mod (high - low)); the modulo bias is
 *              below (high - low) / 2^64, negligible for any practical range
 *   bernoulli: 1 when U(w0, w1) < p, else 0 (so p = 0 never and p = 1
 *              always gives 1)
 *
 * All are structured: the checks and the result are meta/random.c's, so
 * a call that fails draws nothing.  The GPU's implementations
 * (cuda/random.c) fill a result with cuda/random.cu from the same
 * counters with the same transforms, so it holds the CPU's values.
 */
#include <inttypes.h>
#include <math.h>

#include "core/rng.h"
#include "cpu/cpu_int.h"
#include "decls/random.h"

/* Below this many elements one thread draws them all; above it the work
 * is split into chunks of RANDOM_GRAIN elements (one Philox block costs
 * about as much as a few dozen flops, so chunks need not be huge). */
#define RANDOM_PARALLEL_MIN 32768
#define RANDOM_GRAIN 8192

typedef enum draw_kind {
    DRAW_UNIFORM,
    DRAW_NORMAL,
    DRAW_INT,
    DRAW_BERNOULLI,
} draw_kind;

typedef struct draw {
    draw_kind kind;
    yg__philox_range r;
    int64_t low;          /* DRAW_INT: values are low + (x mod range) */
    uint64_t range;
    double p;             /* DRAW_BERNOULLI without probs */
    const double *probs;  /* DRAW_BERNOULLI: one probability per element, or NULL */
} draw;

static void draw_range(const draw *d, yg_tensor *t, int64_t begin, int64_t end)
{
    char *base = yg__tensor_ptr(t);

    for (int64_t i = begin; i < end; i++) {
        uint32_t w[4];
        yg__philox_words(&d->r, (uint64_t)i, w);
        switch (d->kind) {
        case DRAW_UNIFORM:
            if (t->dtype == YG_FLOAT32)
                ((float *)base)[i] = yg__uniform_f32(w[0]);
            else
                ((double *)base)[i] = yg__uniform_f64(w[0], w[1]);
            break;
        case DRAW_NORMAL: {
            double u1 = 1.0 - yg__uniform_f64(w[0], w[1]);
            double u2 = yg__uniform_f64(w[2], w[3]);
            yg__store_f64(t, i, sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
            break;
        }
        case DRAW_INT: {
            uint64_t x = ((uint64_t)w[0] << 32 | w[1]) % d->range;
            /* In uint64 so that low + x cannot overflow a signed type. */
            int64_t v = (int64_t)((uint64_t)d->low + x);
            if (t->dtype == YG_INT64)
                ((int64_t *)base)[i] = v;
            else
                yg__store_f64(t, i, (double)v);
            break;
        }
        case DRAW_BERNOULLI: {
            double p = d->probs != NULL ? d->probs[i] : d->p;
            yg__store_f64(t, i, yg__uniform_f64(w[0], w[1]) < p ? 1.0 : 0.0);
            break;
        }
        }
    }
}

/* Reserves t's numel counters of generator and fills t. */
static void draw_all(draw *d, yg_generator *generator, yg_tensor *t)
{
    int64_t n = yg_tensor_numel(t);

    yg__generator_reserve(generator, (uint64_t)n, &d->r);
    if (n < RANDOM_PARALLEL_MIN) {
        draw_range(d, t, 0, n);
        return;
    }
    int64_t nchunks = (n + RANDOM_GRAIN - 1) / RANDOM_GRAIN;
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < nchunks; c++) {
        int64_t begin = c * RANDOM_GRAIN;
        draw_range(d, t, begin, begin + RANDOM_GRAIN < n ? begin + RANDOM_GRAIN : n);
    }
}

yg_status yg__cpu_rand_out(const int64_t *size,
                           int64_t size_len,
                           yg_generator *generator,
                           const yg_dtype *dtype,
                           const yg_device *device,
                           yg_tensor *out)
{
    draw d = {.kind = DRAW_UNIFORM};

    (void)size, (void)size_len, (void)dtype, (void)device;
    draw_all(&d, generator, out);
    return YG_OK;
}

yg_status yg__cpu_randn_out(const int64_t *size,
                            int64_t size_len,
                            yg_generator *generator,
                            const yg_dtype *dtype,
                            const yg_device *device,
                            yg_tensor *out)
{
    draw d = {.kind = DRAW_NORMAL};

    (void)size, (void)size_len, (void)dtype, (void)device;
    draw_all(&d, generator, out);
    return YG_OK;
}

yg_status yg__cpu_randint_out(int64_t low,
                              int64_t high,
                              const int64_t *size,
                              int64_t size_len,
                              yg_generator *generator,
                              const yg_dtype *dtype,
                              const yg_device *device,
                              yg_tensor *out)
{
    draw d = {.kind = DRAW_INT, .low = low, .range = (uint64_t)high - (uint64_t)low};

    (void)size, (void)size_len, (void)dtype, (void)device;
    draw_all(&d, generator, out);
    return YG_OK;
}

yg_status yg__cpu_bernoulli_out(const yg_tensor *self, yg_generator *generator, yg_tensor *out)
{
    yg_tensor *probs = NULL;
    draw d = {.kind = DRAW_BERNOULLI};

    YG_RETURN_IF_ERROR(yg__tensor_contiguous_as(self, YG_FLOAT64, true, &probs));
    d.probs = (const double *)yg__tensor_ptr(probs);
    draw_all(&d, generator, out);
    yg_release(probs);
    return YG_OK;
}

yg_status yg__cpu_bernoulli_p_out(const yg_tensor *self,
                                  double p,
                                  yg_generator *generator,
                                  yg_tensor *out)
{
    draw d = {.kind = DRAW_BERNOULLI, .p = p};

    (void)self;
    draw_all(&d, generator, out);
    return YG_OK;
}
