/*
 * sampler.c - the distributed sampler: each rank's shard of one shuffled
 * index set.  The shuffle is a Fisher-Yates pass driven by splitmix64
 * seeded from (seed, epoch), written here rather than taken from yagrad's
 * tensor RNG so that it is identical on every rank whatever else each
 * rank drew from its generators (which is the whole contract).
 */
#include "distributed/dist_int.h"

#include <stdlib.h>

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int64_t yg_distributed_sampler_len(int64_t n, int world_size) {
    if (n < 1 || world_size < 1)
        return 0;
    return (n + world_size - 1) / world_size;
}

yg_status yg_distributed_sampler_indices(int64_t n,
                                         int world_size,
                                         int rank,
                                         uint64_t seed,
                                         int64_t epoch,
                                         bool shuffle,
                                         int64_t *out,
                                         int64_t out_len) {
    int64_t *perm, len = yg_distributed_sampler_len(n, world_size);
    uint64_t state = seed ^ ((uint64_t)epoch * 0xd1b54a32d192ed03ULL);

    if (n < 1 || world_size < 1 || rank < 0 || rank >= world_size)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "distributed_sampler: need n >= 1, world_size >= 1 and 0 <= rank < "
                        "world_size, got n %lld, world_size %d, rank %d",
                        (long long)n,
                        world_size,
                        rank);
    if (out == NULL || out_len != len)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "distributed_sampler: out must hold ceil(n / world_size) = %lld indices, "
                        "got %s with out_len %lld",
                        (long long)len,
                        out == NULL ? "NULL" : "a buffer",
                        (long long)out_len);
    perm = malloc((size_t)n * sizeof *perm);
    if (perm == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY,
                        "distributed_sampler: out of memory for %lld indices",
                        (long long)n);
    for (int64_t i = 0; i < n; i++)
        perm[i] = i;
    if (shuffle) {
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = (int64_t)(splitmix64(&state) % (uint64_t)(i + 1));
            int64_t tmp = perm[i];
            perm[i] = perm[j];
            perm[j] = tmp;
        }
    }
    /* Padded by wrapping around, as PyTorch's DistributedSampler, so every
     * rank runs the same number of steps. */
    for (int64_t k = 0; k < len; k++)
        out[k] = perm[(rank + k * world_size) % n];
    free(perm);
    return YG_OK;
}
