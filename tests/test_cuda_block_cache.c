/*
 * test_cuda_block_cache.c - the CUDA caching allocator's bookkeeping
 * (runtime/cuda/block_cache.c) over a host backend with a memory budget,
 * so it runs on every machine: rounding, pools, splitting and merging,
 * per-stream reuse, giving segments back on out-of-memory, statistics,
 * and a randomised run checking that live blocks never overlap.
 */
#define _POSIX_C_SOURCE 200809L
#include "cuda/block_cache.h"
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((size_t)1 << 20)

/* The "device": malloc with a budget, remembering each segment's size to
 * give the budget back. */
typedef struct fake_device {
    size_t budget, held;
    int64_t live_segments;
    struct {
        void *p;
        size_t n;
    } segs[1024];
} fake_device;

static void *fake_alloc(void *ctx, size_t nbytes) {
    fake_device *d = ctx;
    void *p = NULL;
    if (d->held + nbytes > d->budget || posix_memalign(&p, 4096, nbytes) != 0)
        return NULL;
    for (int i = 0; i < 1024; i++)
        if (d->segs[i].p == NULL) {
            d->segs[i].p = p;
            d->segs[i].n = nbytes;
            d->held += nbytes;
            d->live_segments++;
            return p;
        }
    free(p);
    return NULL;
}

static void fake_free(void *ctx, void *ptr) {
    fake_device *d = ctx;
    for (int i = 0; i < 1024; i++)
        if (d->segs[i].p == ptr) {
            d->held -= d->segs[i].n;
            d->segs[i].p = NULL;
            d->live_segments--;
            free(ptr);
            return;
        }
    fail_msg("raw_free of a pointer the backend never gave");
}

static yg_block_cache *make_cache(fake_device *d, size_t budget) {
    yg_block_cache *c = NULL;
    memset(d, 0, sizeof *d);
    d->budget = budget;
    yg_block_cache_backend be = {.ctx = d, .raw_alloc = fake_alloc, .raw_free = fake_free};
    YG_CHECK(yg__block_cache_create(&be, &c));
    return c;
}

static void test_small_blocks_share_a_segment_and_come_back(void **state) {
    (void)state;
    fake_device d;
    yg_block_cache *c = make_cache(&d, 64 * MIB);
    char *a = yg__block_cache_alloc(c, 1, NULL), *b = yg__block_cache_alloc(c, 700, NULL);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(yg__block_cache_block_size(c, a), 512); /* rounded to 512 */
    assert_int_equal(yg__block_cache_block_size(c, b), 1024);
    assert_int_equal((uintptr_t)a % 512, 0);
    assert_true(b >= a + 512 || a >= b + 1024); /* disjoint */
    yg_block_cache_stats s = yg__block_cache_stats(c);
    assert_int_equal(s.num_raw_allocs, 1); /* one 2 MiB segment */
    assert_int_equal(s.reserved_bytes, 2 * MIB);
    assert_int_equal(s.allocated_bytes, 1536);
    /* Freed and asked again: the same block, no new segment. */
    assert_true(yg__block_cache_free(c, b));
    char *b2 = yg__block_cache_alloc(c, 1000, NULL);
    assert_ptr_equal(b2, b);
    assert_int_equal(yg__block_cache_stats(c).num_raw_allocs, 1);
    /* Everything back: the segment is one free block again, and empty
     * gives it back. */
    assert_true(yg__block_cache_free(c, a));
    assert_true(yg__block_cache_free(c, b2));
    s = yg__block_cache_stats(c);
    assert_int_equal(s.allocated_bytes, 0);
    assert_true(s.num_merges >= 2);
    assert_int_equal(s.peak_allocated_bytes, 1536);
    yg__block_cache_empty(c);
    s = yg__block_cache_stats(c);
    assert_int_equal(s.reserved_bytes, 0);
    assert_int_equal(s.num_raw_frees, 1);
    assert_int_equal(d.live_segments, 0);
    yg__block_cache_destroy(c);
}

static void test_large_blocks_split_and_merge(void **state) {
    (void)state;
    fake_device d;
    yg_block_cache *c = make_cache(&d, 256 * MIB);
    /* 3 MiB + 1 rounds to 3 MiB + 512 in a 4 MiB segment; the rest, 1 MiB
     * - 512, is under the large pool's 1 MiB split threshold: the block
     * is the whole segment. */
    char *a = yg__block_cache_alloc(c, 3 * MIB + 1, NULL);
    assert_non_null(a);
    assert_int_equal(yg__block_cache_stats(c).reserved_bytes, 4 * MIB);
    assert_int_equal(yg__block_cache_block_size(c, a), 4 * MIB);
    assert_true(yg__block_cache_free(c, a));
    /* Free: that 4 MiB block and a 10 MiB segment.  Best fit: 2 MiB comes
     * from the 4 MiB block (split), 3 MiB from the 10 MiB one (split). */
    char *x = yg__block_cache_alloc(c, 10 * MIB, NULL);
    assert_true(yg__block_cache_free(c, x));
    char *p = yg__block_cache_alloc(c, 2 * MIB, NULL), *q = yg__block_cache_alloc(c, 3 * MIB, NULL);
    assert_int_equal(yg__block_cache_stats(c).num_raw_allocs, 2);
    assert_int_equal(yg__block_cache_stats(c).num_splits, 2);
    assert_int_equal(yg__block_cache_block_size(c, p), 2 * MIB);
    assert_int_equal(yg__block_cache_block_size(c, q), 3 * MIB);
    char *r = yg__block_cache_alloc(c, 7 * MIB, NULL); /* the 10 MiB segment's rest */
    assert_non_null(r);
    assert_int_equal(yg__block_cache_stats(c).num_raw_allocs, 2);
    assert_true(yg__block_cache_free(c, q));
    assert_true(yg__block_cache_free(c, r)); /* merges with q's block */
    char *big = yg__block_cache_alloc(c, 10 * MIB, NULL);
    assert_int_equal(yg__block_cache_stats(c).num_raw_allocs, 2); /* merged back whole */
    assert_true(yg__block_cache_free(c, big));
    assert_true(yg__block_cache_free(c, p));
    yg__block_cache_destroy(c);
    assert_int_equal(d.live_segments, 0);
}

static void test_blocks_are_reused_on_their_stream_only(void **state) {
    (void)state;
    fake_device d;
    yg_block_cache *c = make_cache(&d, 64 * MIB);
    int s1, s2;
    char *a = yg__block_cache_alloc(c, 4096, &s1);
    assert_true(yg__block_cache_free(c, a));
    char *b = yg__block_cache_alloc(c, 4096, &s2);
    assert_ptr_not_equal(a, b);
    assert_int_equal(yg__block_cache_stats(c).num_raw_allocs, 2);
    char *a2 = yg__block_cache_alloc(c, 4096, &s1);
    assert_ptr_equal(a2, a);
    assert_true(yg__block_cache_free(c, a2));
    assert_true(yg__block_cache_free(c, b));
    yg__block_cache_destroy(c);
}

/* Issue 28, item 8: the blocks of a destroyed stream, free or still in
 * use, are refiled under the default stream: a free one is reused there
 * at once, one in use comes back there when freed, and the other
 * streams' blocks stay theirs. */
static void test_a_retired_stream_blocks_return_to_the_default_stream(void **state) {
    (void)state;
    fake_device d;
    yg_block_cache *c = make_cache(&d, 64 * MIB);
    int dead, other;
    char *freed = yg__block_cache_alloc(c, 4096, &dead);
    char *held = yg__block_cache_alloc(c, 3 * MIB, &dead);
    char *theirs = yg__block_cache_alloc(c, 4096, &other);
    assert_true(yg__block_cache_free(c, freed));
    assert_true(yg__block_cache_free(c, theirs));
    /* one small segment (2 MiB) and one large (4 MiB) were the dead stream's */
    assert_int_equal(yg__block_cache_retire_stream(c, &dead, NULL), 6 * MIB);
    assert_int_equal(yg__block_cache_retire_stream(c, &dead, NULL), 0);
    char *again = yg__block_cache_alloc(c, 4096, NULL);
    assert_ptr_equal(again, freed);
    assert_true(yg__block_cache_free(c, held));
    char *big = yg__block_cache_alloc(c, 3 * MIB, NULL);
    assert_ptr_equal(big, held);
    char *mine = yg__block_cache_alloc(c, 4096, &other);
    assert_ptr_equal(mine, theirs);
    assert_int_equal(yg__block_cache_stats(c).num_raw_allocs, 3);
    assert_true(yg__block_cache_free(c, again));
    assert_true(yg__block_cache_free(c, big));
    assert_true(yg__block_cache_free(c, mine));
    yg__block_cache_empty(c);
    assert_int_equal(d.live_segments, 0);
    yg__block_cache_destroy(c);
}

static void test_out_of_memory_gives_cached_segments_back_first(void **state) {
    (void)state;
    fake_device d;
    yg_block_cache *c = make_cache(&d, 10 * MIB);
    char *a = yg__block_cache_alloc(c, 6 * MIB, NULL);
    assert_non_null(a);
    assert_true(yg__block_cache_free(c, a)); /* cached: 6 MiB held */
    char *s = yg__block_cache_alloc(c, 512, NULL); /* a 2 MiB small segment: fits */
    assert_non_null(s);
    /* 7 MiB: the cached 6 MiB block is too small, and a new 8 MiB segment
     * does not fit beside the 8 MiB held: the unused 6 MiB segment goes
     * back and the retry succeeds. */
    char *b = yg__block_cache_alloc(c, 7 * MIB, NULL);
    assert_non_null(b);
    yg_block_cache_stats st = yg__block_cache_stats(c);
    assert_int_equal(st.num_raw_frees, 1);
    assert_int_equal(st.reserved_bytes, 10 * MIB);
    assert_int_equal(st.num_ooms, 0);
    /* What can never fit fails, counted, and the cache goes on. */
    assert_null(yg__block_cache_alloc(c, (size_t)1 << 40, NULL));
    assert_null(yg__block_cache_alloc(c, SIZE_MAX, NULL));
    assert_int_equal(yg__block_cache_stats(c).num_ooms, 2);
    char *t = yg__block_cache_alloc(c, 1024, NULL);
    assert_non_null(t);
    assert_true(yg__block_cache_free(c, t));
    assert_true(yg__block_cache_free(c, s));
    assert_true(yg__block_cache_free(c, b));
    yg__block_cache_destroy(c);
    assert_int_equal(d.live_segments, 0);
}

static void test_foreign_pointers_are_refused(void **state) {
    (void)state;
    fake_device d;
    yg_block_cache *c = make_cache(&d, 16 * MIB);
    char *a = yg__block_cache_alloc(c, 100, NULL);
    int local;
    assert_false(yg__block_cache_free(c, &local));
    assert_false(yg__block_cache_free(c, a + 1));
    assert_int_equal(yg__block_cache_block_size(c, a + 1), 0);
    assert_true(yg__block_cache_free(c, NULL));
    assert_true(yg__block_cache_free(c, a));
    assert_false(yg__block_cache_free(c, a)); /* twice */
    yg__block_cache_destroy(c);
}

/* Random allocations and frees on two streams: live blocks never
 * overlap, each is as large as asked, the counters add up, and at the
 * end everything goes back. */
static void test_random_use_keeps_blocks_disjoint(void **state) {
    (void)state;
    enum { N = 300 };
    fake_device d;
    yg_block_cache *c = make_cache(&d, 512 * MIB);
    char *live[N] = {0};
    int streams[2];
    unsigned seed = 12345;
    for (int it = 0; it < 20000; it++) {
        seed = seed * 1103515245u + 12345u;
        int i = (int)((seed >> 8) % N);
        if (live[i] != NULL) {
            assert_true(yg__block_cache_free(c, live[i]));
            live[i] = NULL;
            continue;
        }
        seed = seed * 1103515245u + 12345u;
        size_t n = (seed >> 4) % 8 == 0 ? (seed >> 9) % (8 * MIB) : (seed >> 9) % 70000;
        live[i] = yg__block_cache_alloc(c, n, &streams[i % 2]);
        assert_non_null(live[i]);
        assert_true(yg__block_cache_block_size(c, live[i]) >= n);
        if (it % 997 == 0) { /* every pair of live blocks disjoint */
            int64_t sum = 0;
            for (int x = 0; x < N; x++) {
                if (live[x] == NULL)
                    continue;
                size_t sx = yg__block_cache_block_size(c, live[x]);
                sum += (int64_t)sx;
                for (int y = x + 1; y < N; y++) {
                    if (live[y] == NULL)
                        continue;
                    size_t sy = yg__block_cache_block_size(c, live[y]);
                    assert_true(live[x] + sx <= live[y] || live[y] + sy <= live[x]);
                }
            }
            yg_block_cache_stats s = yg__block_cache_stats(c);
            assert_int_equal(s.allocated_bytes, sum);
            assert_true(s.reserved_bytes >= s.allocated_bytes);
        }
    }
    for (int i = 0; i < N; i++)
        assert_true(yg__block_cache_free(c, live[i]));
    yg_block_cache_stats s = yg__block_cache_stats(c);
    assert_int_equal(s.allocated_bytes, 0);
    assert_int_equal(s.num_allocs, s.num_frees);
    yg__block_cache_empty(c);
    assert_int_equal(yg__block_cache_stats(c).reserved_bytes, 0);
    assert_int_equal(d.live_segments, 0);
    yg__block_cache_destroy(c);
}

/* Threads sharing one cache (the tsan preset checks the locking). */
static void *worker(void *arg) {
    yg_block_cache *c = arg;
    char *mine[32] = {0};
    for (int it = 0; it < 2000; it++) {
        int i = it % 32;
        if (mine[i] != NULL && !yg__block_cache_free(c, mine[i]))
            return (void *)1;
        mine[i] = yg__block_cache_alloc(c, (size_t)(it % 5000) + 1, NULL);
        if (mine[i] == NULL)
            return (void *)1;
        mine[i][0] = 1;
    }
    for (int i = 0; i < 32; i++)
        if (!yg__block_cache_free(c, mine[i]))
            return (void *)1;
    return NULL;
}

static void test_threads_share_a_cache(void **state) {
    (void)state;
    fake_device d;
    yg_block_cache *c = make_cache(&d, 256 * MIB);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, worker, c), 0);
    for (int i = 0; i < 4; i++) {
        void *rc = NULL;
        assert_int_equal(pthread_join(t[i], &rc), 0);
        assert_null(rc);
    }
    assert_int_equal(yg__block_cache_stats(c).allocated_bytes, 0);
    yg__block_cache_destroy(c);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_blocks_share_a_segment_and_come_back),
        cmocka_unit_test(test_large_blocks_split_and_merge),
        cmocka_unit_test(test_blocks_are_reused_on_their_stream_only),
        cmocka_unit_test(test_a_retired_stream_blocks_return_to_the_default_stream),
        cmocka_unit_test(test_out_of_memory_gives_cached_segments_back_first),
        cmocka_unit_test(test_foreign_pointers_are_refused),
        cmocka_unit_test(test_random_use_keeps_blocks_disjoint),
        cmocka_unit_test(test_threads_share_a_cache),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
