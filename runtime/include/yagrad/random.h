/*
 * yagrad/random.h - random number generators, the source of every random
 * op (yg_rand, yg_randn, yg_randint, yg_bernoulli, yg_dropout, ...).
 *
 * A yg_generator is a counter-based Philox4x32-10 stream (Salmon, Moraes,
 * Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC 2011):
 * its state is a 64-bit seed, used as the Philox key, and a 64-bit offset.
 * A random op producing n elements reserves the counters
 * [offset, offset + n) and advances the offset by n; element i of its
 * result is computed from counter offset + i alone (one Philox block of
 * four 32-bit words per element).  Results therefore depend only on the
 * seed and on the sequence of ops drawn from the generator: they are the
 * same on every run and for every number of threads the kernels use.
 *
 * Ops take a `yg_generator *generator` that may be NULL, meaning the
 * process-wide default generator (yg_default_generator, seeded with
 * 67280421310721, PyTorch's default, until yg_manual_seed reseeds it).
 *
 * Objects: yg_generator_create makes one, yg_generator_release frees it.
 * Thread safety: a generator may be shared by threads; reserving counters
 * and reseeding hold the generator's lock, so concurrent ops get disjoint
 * counter ranges (in an order the scheduler decides).
 *
 * Errors: see status.h.  Anything not declared here is not API.
 */
#ifndef YAGRAD_RANDOM_H
#define YAGRAD_RANDOM_H

#include <stdint.h>

#include "yagrad/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct yg_generator yg_generator;

/* A new generator with the given seed and offset 0.
 *   seed: any value
 *   out:  out: new generator, release with yg_generator_release
 * Returns: YG_ERR_INVALID_ARGUMENT when out is NULL, YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_generator_create(uint64_t seed, yg_generator **out);

/* Frees a generator made by yg_generator_create.  NULL-safe; the default
 * generator is never freed (releasing it is a no-op).  Cannot fail. */
void yg_generator_release(yg_generator *generator);

/* The default generator, used by ops given a NULL generator.
 * Returns: borrowed, valid for the life of the process.  Cannot fail. */
yg_generator *yg_default_generator(void);

/* Sets generator's seed and resets its offset to 0, so the ops that follow
 * repeat the values they gave after the last seeding.
 *   generator: in-out, nullable (NULL: the default generator)
 * Cannot fail. */
void yg_generator_manual_seed(yg_generator *generator, uint64_t seed);

/* yg_generator_manual_seed(NULL, seed): reseeds the default generator.
 * Cannot fail. */
void yg_manual_seed(uint64_t seed);

/* The seed and the current offset (the next counter to be reserved).
 *   generator: borrowed, nullable (NULL: the default generator)
 * Cannot fail. */
uint64_t yg_generator_seed(const yg_generator *generator);
uint64_t yg_generator_offset(const yg_generator *generator);

/* Moves the offset (to replay, or skip, draws made after a seeding).
 *   generator: in-out, nullable (NULL: the default generator)
 * Cannot fail. */
void yg_generator_set_offset(yg_generator *generator, uint64_t offset);

/* One block of the Philox4x32-10 bijection: out = philox(counter, key).
 * Exposed so its known-answer vectors can be checked (Random123's
 * kat_vectors).  Each array is borrowed; out may not alias the inputs.
 * Cannot fail. */
void yg_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]);

#ifdef __cplusplus
}
#endif
#endif /* YAGRAD_RANDOM_H */
