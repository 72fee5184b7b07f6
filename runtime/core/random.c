/*
 * random.c - yg_generator (yagrad/random.h): a seed and an offset behind a
 * lock, and the default generator every op given NULL draws from.
 *
 * The state is two integers because Philox is counter-based (see
 * core/rng.h): an op only needs the key and a range of counters that no
 * other op gets, so reserving is one locked add, and the values are
 * computed afterwards, outside the lock, by as many threads as the kernel
 * likes.  A mutex rather than an atomic offset keeps (seed, offset) one
 * consistent pair when another thread reseeds.
 */
#include <pthread.h>
#include <stdlib.h>

#include "core/core.h"
#include "core/rng.h"

/* PyTorch's default seed, so a fresh process starts from a fixed state. */
#define YG_DEFAULT_SEED UINT64_C(67280421310721)

struct yg_generator {
    pthread_mutex_t lock;
    uint64_t seed;   /* the Philox key: {lo32(seed), hi32(seed)} */
    uint64_t offset; /* the next counter to hand out */
};

static yg_generator default_generator = {PTHREAD_MUTEX_INITIALIZER, YG_DEFAULT_SEED, 0};

static yg_generator *resolve(const yg_generator *generator)
{
    return generator != NULL ? (yg_generator *)generator : &default_generator;
}

yg_status yg_generator_create(uint64_t seed, yg_generator **out)
{
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "generator_create: out-parameter out is NULL");
    *out = NULL;
    yg_generator *g = calloc(1, sizeof *g);
    if (g == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "generator_create: out of memory");
    if (pthread_mutex_init(&g->lock, NULL) != 0) {
        free(g);
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "generator_create: cannot create its lock");
    }
    g->seed = seed;
    *out = g;
    return YG_OK;
}

void yg_generator_release(yg_generator *generator)
{
    if (generator == NULL || generator == &default_generator)
        return;
    pthread_mutex_destroy(&generator->lock);
    free(generator);
}

yg_generator *yg_default_generator(void)
{
    return &default_generator;
}

void yg_generator_manual_seed(yg_generator *generator, uint64_t seed)
{
    yg_generator *g = resolve(generator);

    pthread_mutex_lock(&g->lock);
    g->seed = seed;
    g->offset = 0;
    pthread_mutex_unlock(&g->lock);
}

void yg_manual_seed(uint64_t seed)
{
    yg_generator_manual_seed(NULL, seed);
}

uint64_t yg_generator_seed(const yg_generator *generator)
{
    yg_generator *g = resolve(generator);

    pthread_mutex_lock(&g->lock);
    uint64_t seed = g->seed;
    pthread_mutex_unlock(&g->lock);
    return seed;
}

uint64_t yg_generator_offset(const yg_generator *generator)
{
    yg_generator *g = resolve(generator);

    pthread_mutex_lock(&g->lock);
    uint64_t offset = g->offset;
    pthread_mutex_unlock(&g->lock);
    return offset;
}

void yg_generator_set_offset(yg_generator *generator, uint64_t offset)
{
    yg_generator *g = resolve(generator);

    pthread_mutex_lock(&g->lock);
    g->offset = offset;
    pthread_mutex_unlock(&g->lock);
}

void yg__generator_reserve(yg_generator *generator, uint64_t n, yg__philox_range *out)
{
    yg_generator *g = resolve(generator);

    pthread_mutex_lock(&g->lock);
    out->key[0] = (uint32_t)g->seed;
    out->key[1] = (uint32_t)(g->seed >> 32);
    out->base = g->offset;
    g->offset += n; /* wraps after 2^64 counters, far beyond any workload */
    pthread_mutex_unlock(&g->lock);
}

void yg_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4])
{
    yg__philox4x32_10(counter, key, out);
}
