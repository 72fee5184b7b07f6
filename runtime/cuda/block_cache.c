/*
 * block_cache.c - the caching allocator's bookkeeping (block_cache.h says
 * what it does and why).
 *
 * A segment is one backend allocation; its blocks tile it in address
 * order (prev/next).  A free block sits in one free list, by pool (small
 * or large) and power-of-two bin of its size; a block handed out sits in
 * a hash table by address (open addressing, linear probing, deletion by
 * backward shift).  Merging keeps the lower block, so a segment's first
 * block, which the segment record points to, lives as long as the
 * segment.
 */
#include "cuda/block_cache.h"

#include "core/core.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define ROUND           ((size_t)512)
#define SMALL_MAX       ((size_t)1 << 20) /* requests up to this: small pool */
#define SMALL_SEGMENT   ((size_t)2 << 20)
#define LARGE_ROUND     ((size_t)2 << 20)
#define MIN_SPLIT_LARGE ((size_t)1 << 20)
#define NUM_BINS        64

typedef struct block {
    char *ptr;
    size_t size;
    void *stream;
    bool small, used;
    struct block *prev, *next;         /* neighbours in the segment */
    struct block *bin_prev, *bin_next; /* the free list, when free */
} block;

typedef struct segment {
    char *ptr;
    size_t size;
    block *head; /* the block at ptr */
} segment;

struct yg_block_cache {
    pthread_mutex_t lock;
    yg_block_cache_backend be;
    block *bins[2][NUM_BINS]; /* [small][floor(log2(size))] */
    block **table;            /* blocks handed out, by ptr; NULL: empty slot */
    size_t table_cap, table_len;
    segment *segs;
    size_t n_segs, cap_segs;
    yg_block_cache_stats st;
};

/* ---- free lists ---- */

static int bin_of(size_t size) {
    return 63 - __builtin_clzll((unsigned long long)size);
}

static void bin_insert(yg_block_cache *c, block *b) {
    block **head = &c->bins[b->small][bin_of(b->size)];
    b->bin_prev = NULL;
    b->bin_next = *head;
    if (*head != NULL)
        (*head)->bin_prev = b;
    *head = b;
}

static void bin_remove(yg_block_cache *c, block *b) {
    if (b->bin_prev != NULL)
        b->bin_prev->bin_next = b->bin_next;
    else
        c->bins[b->small][bin_of(b->size)] = b->bin_next;
    if (b->bin_next != NULL)
        b->bin_next->bin_prev = b->bin_prev;
    b->bin_prev = b->bin_next = NULL;
}

/* The smallest free block of the pool and stream with size >= size. */
static block *best_fit(yg_block_cache *c, bool small, size_t size, void *stream) {
    for (int k = bin_of(size); k < NUM_BINS; k++) {
        block *best = NULL;
        for (block *b = c->bins[small][k]; b != NULL; b = b->bin_next)
            if (b->stream == stream && b->size >= size && (best == NULL || b->size < best->size))
                best = b;
        if (best != NULL)
            return best;
    }
    return NULL;
}

/* ---- blocks handed out, by address ---- */

static size_t slot_of(const yg_block_cache *c, const void *p) {
    uint64_t h = (uint64_t)(uintptr_t)p >> 9;
    h *= 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & (c->table_cap - 1);
}

static bool table_grow(yg_block_cache *c) {
    size_t cap = c->table_cap == 0 ? 64 : c->table_cap * 2;
    block **t = calloc(cap, sizeof *t), **old = c->table;
    size_t old_cap = c->table_cap;
    if (t == NULL)
        return false;
    c->table = t;
    c->table_cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i] == NULL)
            continue;
        size_t s = slot_of(c, old[i]->ptr);
        while (t[s] != NULL)
            s = (s + 1) & (cap - 1);
        t[s] = old[i];
    }
    free(old);
    return true;
}

/* Adds b; the caller made room (table_grow). */
static void table_put(yg_block_cache *c, block *b) {
    size_t s = slot_of(c, b->ptr);
    while (c->table[s] != NULL)
        s = (s + 1) & (c->table_cap - 1);
    c->table[s] = b;
    c->table_len++;
}

/* The block handed out at p, removed from the table; NULL if none. */
static block *table_take(yg_block_cache *c, const void *p, bool remove) {
    if (c->table_cap == 0)
        return NULL;
    size_t mask = c->table_cap - 1, s = slot_of(c, p);
    while (c->table[s] != NULL && c->table[s]->ptr != p)
        s = (s + 1) & mask;
    block *b = c->table[s];
    if (b == NULL || !remove)
        return b;
    /* Backward-shift deletion keeps every probe sequence unbroken. */
    size_t hole = s;
    for (size_t j = (s + 1) & mask; c->table[j] != NULL; j = (j + 1) & mask) {
        size_t home = slot_of(c, c->table[j]->ptr);
        bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
        if (movable) {
            c->table[hole] = c->table[j];
            hole = j;
        }
    }
    c->table[hole] = NULL;
    c->table_len--;
    return b;
}

/* ---- segments ---- */

static void release_segment(yg_block_cache *c, size_t i) {
    segment s = c->segs[i];
    c->be.raw_free(c->be.ctx, s.ptr);
    c->st.reserved_bytes -= (int64_t)s.size;
    c->st.num_raw_frees++;
    c->segs[i] = c->segs[--c->n_segs];
}

/* Gives back every segment that is one free block. */
static void release_unused(yg_block_cache *c) {
    for (size_t i = c->n_segs; i-- > 0;) {
        block *h = c->segs[i].head;
        if (h->used || h->next != NULL)
            continue;
        bin_remove(c, h);
        free(h);
        release_segment(c, i);
    }
}

/* A new segment of size for stream, as one block (not in a free list). */
static block *new_segment(yg_block_cache *c, size_t size, bool small, void *stream) {
    if (c->n_segs == c->cap_segs) {
        size_t cap = c->cap_segs == 0 ? 16 : c->cap_segs * 2;
        segment *s = realloc(c->segs, cap * sizeof *s);
        if (s == NULL)
            return NULL;
        c->segs = s;
        c->cap_segs = cap;
    }
    block *b = calloc(1, sizeof *b);
    if (b == NULL)
        return NULL;
    void *p = c->be.raw_alloc(c->be.ctx, size);
    if (p == NULL) {
        release_unused(c);
        p = c->be.raw_alloc(c->be.ctx, size);
    }
    if (p == NULL) {
        free(b);
        return NULL;
    }
    b->ptr = p;
    b->size = size;
    b->small = small;
    b->stream = stream;
    c->segs[c->n_segs++] = (segment){.ptr = p, .size = size, .head = b};
    c->st.num_raw_allocs++;
    c->st.reserved_bytes += (int64_t)size;
    if (c->st.reserved_bytes > c->st.peak_reserved_bytes)
        c->st.peak_reserved_bytes = c->st.reserved_bytes;
    return b;
}

/* ---- the interface ---- */

yg_status yg__block_cache_create(const yg_block_cache_backend *backend, yg_block_cache **out) {
    *out = NULL;
    yg_block_cache *c = calloc(1, sizeof *c);
    if (c == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "block_cache: out of host memory");
    c->be = *backend;
    pthread_mutex_init(&c->lock, NULL);
    *out = c;
    return YG_OK;
}

void yg__block_cache_destroy(yg_block_cache *c) {
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->n_segs; i++) {
        for (block *b = c->segs[i].head, *next; b != NULL; b = next) {
            next = b->next;
            free(b);
        }
        c->be.raw_free(c->be.ctx, c->segs[i].ptr);
    }
    free(c->segs);
    free(c->table);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

void *yg__block_cache_alloc(yg_block_cache *c, size_t nbytes, void *stream) {
    if (nbytes > ((size_t)1 << 60)) { /* no device has that; rounding would overflow */
        pthread_mutex_lock(&c->lock);
        c->st.num_ooms++;
        pthread_mutex_unlock(&c->lock);
        return NULL;
    }
    size_t size = nbytes == 0 ? ROUND : (nbytes + ROUND - 1) / ROUND * ROUND;
    bool small = size <= SMALL_MAX;
    block *b = NULL, *rest = NULL;

    pthread_mutex_lock(&c->lock);
    /* Room in the table first, so that nothing below fails after a block
     * has been taken. */
    if ((c->table_len + 1) * 2 > c->table_cap && !table_grow(c)) {
        c->st.num_ooms++;
        pthread_mutex_unlock(&c->lock);
        return NULL;
    }
    b = best_fit(c, small, size, stream);
    if (b != NULL)
        bin_remove(c, b);
    else
        b = new_segment(
            c, small ? SMALL_SEGMENT : (size + LARGE_ROUND - 1) / LARGE_ROUND * LARGE_ROUND, small,
            stream);
    if (b == NULL) {
        c->st.num_ooms++;
        pthread_mutex_unlock(&c->lock);
        return NULL;
    }
    /* The rest of a larger block stays free (when host memory for its
     * record is short, the block is handed out whole). */
    if (b->size - size >= (small ? ROUND : MIN_SPLIT_LARGE) && (rest = calloc(1, sizeof *rest))) {
        rest->ptr = b->ptr + size;
        rest->size = b->size - size;
        rest->stream = b->stream;
        rest->small = b->small;
        rest->prev = b;
        rest->next = b->next;
        if (b->next != NULL)
            b->next->prev = rest;
        b->next = rest;
        b->size = size;
        bin_insert(c, rest);
        c->st.num_splits++;
    }
    table_put(c, b);
    b->used = true;
    c->st.num_allocs++;
    c->st.allocated_bytes += (int64_t)b->size;
    if (c->st.allocated_bytes > c->st.peak_allocated_bytes)
        c->st.peak_allocated_bytes = c->st.allocated_bytes;
    pthread_mutex_unlock(&c->lock);
    return b->ptr;
}

bool yg__block_cache_free(yg_block_cache *c, void *ptr) {
    if (ptr == NULL)
        return true;
    pthread_mutex_lock(&c->lock);
    block *b = table_take(c, ptr, true);
    if (b == NULL) {
        pthread_mutex_unlock(&c->lock);
        return false;
    }
    b->used = false;
    c->st.num_frees++;
    c->st.allocated_bytes -= (int64_t)b->size;
    block *p = b->prev, *n = b->next;
    if (p != NULL && !p->used) {
        bin_remove(c, p);
        p->size += b->size;
        p->next = n;
        if (n != NULL)
            n->prev = p;
        free(b);
        b = p;
        c->st.num_merges++;
    }
    n = b->next;
    if (n != NULL && !n->used) {
        bin_remove(c, n);
        b->size += n->size;
        b->next = n->next;
        if (n->next != NULL)
            n->next->prev = b;
        free(n);
        c->st.num_merges++;
    }
    bin_insert(c, b);
    pthread_mutex_unlock(&c->lock);
    return true;
}

size_t yg__block_cache_block_size(yg_block_cache *c, void *ptr) {
    pthread_mutex_lock(&c->lock);
    block *b = ptr == NULL ? NULL : table_take(c, ptr, false);
    size_t size = b != NULL ? b->size : 0;
    pthread_mutex_unlock(&c->lock);
    return size;
}

size_t yg__block_cache_retire_stream(yg_block_cache *c, void *stream, void *to) {
    size_t moved = 0;
    if (stream == to)
        return 0;
    pthread_mutex_lock(&c->lock);
    /* Every block of a segment has the segment's stream (a split block's
     * rest inherits it), so the segments are refiled whole and a merge
     * never joins blocks of two streams.  The free lists are by pool and
     * size, not stream: nothing moves between them. */
    for (size_t i = 0; i < c->n_segs; i++) {
        if (c->segs[i].head->stream != stream)
            continue;
        for (block *b = c->segs[i].head; b != NULL; b = b->next)
            b->stream = to;
        moved += c->segs[i].size;
    }
    pthread_mutex_unlock(&c->lock);
    return moved;
}

void yg__block_cache_empty(yg_block_cache *c) {
    pthread_mutex_lock(&c->lock);
    release_unused(c);
    pthread_mutex_unlock(&c->lock);
}

yg_block_cache_stats yg__block_cache_stats(yg_block_cache *c) {
    pthread_mutex_lock(&c->lock);
    yg_block_cache_stats s = c->st;
    pthread_mutex_unlock(&c->lock);
    return s;
}
