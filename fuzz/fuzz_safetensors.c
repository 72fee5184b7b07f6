/*
 * fuzz_safetensors.c - libFuzzer target over the safetensors reader
 * (runtime/io/safetensors.c) and, for what it accepts, the writer.
 * Seeds: fuzz/corpus/safetensors/, whole files (a few malformed on
 * purpose).  tests/fuzz_replay.c runs them in every preset's CTest.
 *
 * Beyond "no crash, no leak, no undefined behaviour, no read outside the
 * input", each input checks the properties yagrad/safetensors.h promises,
 * and traps when one breaks:
 *   - a refused input gets YG_ERR_INVALID_ARGUMENT, a NULL handle and a
 *     "safetensors_open_buffer: buffer: ..." message;
 *   - an accepted one lists its tensors in strictly increasing name
 *     order, each found by name, and their byte sizes add up to exactly
 *     the data after the header;
 *   - each tensor of a dtype yagrad has (and at most 8 dims) reads into a
 *     tensor of its shape holding the input's bytes (BOOL bytes as 0/1);
 *     the others are refused with YG_ERR_DTYPE or YG_ERR_SHAPE (as is an
 *     empty tensor whose strides overflow int64);
 *   - what was read, saved again with the metadata and reopened, reads
 *     back the same.
 */
#include "yagrad/yagrad.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

/* The inputs are small; a round trip of more data than this is skipped. */
#define ROUND_TRIP_MAX_BYTES (1 << 20)

static uint64_t header_len(const uint8_t *data) {
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = (n << 8) | data[i];
    return n;
}

/* Saves the n tensors of names/ts with f's metadata, reopens the file
 * and checks each tensor reads back with the same bytes. */
static void round_trip(const yg_safetensors *f, const char **names, yg_tensor **ts, int64_t n) {
    char path[256];
    const char *dir = getenv("TMPDIR");
    snprintf(path,
             sizeof path,
             "%s/yg_fuzz_safetensors_%ld.safetensors",
             dir != NULL && dir[0] != '\0' ? dir : "/tmp",
             (long)getpid());
    int64_t n_meta = yg_safetensors_metadata_count(f);
    const char **keys = calloc((size_t)n_meta + 1, sizeof *keys);
    const char **values = calloc((size_t)n_meta + 1, sizeof *values);
    CHECK(keys != NULL && values != NULL);
    for (int64_t i = 0; i < n_meta; i++) {
        keys[i] = yg_safetensors_metadata_key(f, i);
        values[i] = yg_safetensors_metadata(f, keys[i]);
        CHECK(keys[i] != NULL && values[i] != NULL);
    }
    CHECK(yg_safetensors_save(path, names, ts, n, keys, values, n_meta) == YG_OK);
    yg_safetensors *again = NULL;
    CHECK(yg_safetensors_open(path, &again) == YG_OK);
    CHECK(yg_safetensors_count(again) == n);
    CHECK(yg_safetensors_metadata_count(again) == n_meta);
    for (int64_t i = 0; i < n_meta; i++)
        CHECK(strcmp(yg_safetensors_metadata(again, keys[i]), values[i]) == 0);
    for (int64_t i = 0; i < n; i++) {
        yg_tensor *t = NULL;
        CHECK(yg_safetensors_get(again, names[i], &t) == YG_OK);
        size_t bytes = (size_t)yg_tensor_numel(t) * yg_dtype_size(yg_tensor_dtype(t));
        CHECK(yg_tensor_dtype(t) == yg_tensor_dtype(ts[i]));
        CHECK(yg_tensor_ndim(t) == yg_tensor_ndim(ts[i]));
        CHECK(bytes == 0 || memcmp(yg_tensor_data(t), yg_tensor_data(ts[i]), bytes) == 0);
        yg_release(t);
    }
    yg_safetensors_close(again);
    remove(path);
    free(keys);
    free(values);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    yg_safetensors *f = NULL;
    yg_status st = yg_safetensors_open_buffer(data, size, &f);
    if (st != YG_OK) {
        CHECK(f == NULL);
        CHECK(st == YG_ERR_INVALID_ARGUMENT);
        CHECK(strncmp(yg_last_error(), "safetensors_open_buffer: buffer: ", 33) == 0);
        return 0;
    }
    CHECK(size >= 8);
    uint64_t data_start = 8 + header_len(data), total = 0;
    CHECK(data_start <= size);
    int64_t n = yg_safetensors_count(f), kept = 0;
    const char **names = calloc((size_t)n + 1, sizeof *names);
    yg_tensor **ts = calloc((size_t)n + 1, sizeof *ts);
    CHECK(names != NULL && ts != NULL);
    for (int64_t i = 0; i < n; i++) {
        const char *name = yg_safetensors_name(f, i);
        CHECK(name != NULL);
        CHECK(i == 0 || strcmp(yg_safetensors_name(f, i - 1), name) < 0);
        yg_safetensors_info info;
        CHECK(yg_safetensors_info_of(f, name, &info) == YG_OK);
        CHECK(info.nbytes >= 0 && info.numel >= 0);
        total += (uint64_t)info.nbytes;
        yg_tensor *t = NULL;
        st = yg_safetensors_get(f, name, &t);
        if (!info.dtype_supported) {
            CHECK(st == YG_ERR_DTYPE && t == NULL);
            continue;
        }
        if (info.ndim > YG_MAX_DIMS) {
            CHECK(st == YG_ERR_SHAPE && t == NULL);
            continue;
        }
        /* An empty tensor whose contiguous strides overflow int64 cannot
         * be made (yg_tensor_empty refuses it too). */
        if (st == YG_ERR_SHAPE && info.numel == 0 && t == NULL)
            continue;
        CHECK(st == YG_OK);
        CHECK(yg_tensor_dtype(t) == info.dtype && yg_tensor_ndim(t) == info.ndim);
        CHECK(yg_tensor_numel(t) == info.numel);
        CHECK((uint64_t)info.nbytes == (uint64_t)info.numel * yg_dtype_size(info.dtype));
        for (int64_t d = 0; d < info.ndim; d++)
            CHECK(yg_tensor_sizes(t)[d] == info.sizes[d]);
        /* read_into a tensor of the same kind reads the same bytes. */
        yg_tensor *again = NULL;
        CHECK(yg_tensor_empty(info.sizes, info.ndim, info.dtype, &again) == YG_OK);
        CHECK(yg_safetensors_read_into(f, name, again) == YG_OK);
        CHECK(info.nbytes == 0 ||
              memcmp(yg_tensor_data(t), yg_tensor_data(again), (size_t)info.nbytes) == 0);
        yg_release(again);
        if (info.dtype == YG_BOOL) {
            const uint8_t *b = yg_tensor_data(t);
            for (int64_t k = 0; k < info.nbytes; k++)
                CHECK(b[k] == 0 || b[k] == 1);
        }
        names[kept] = name;
        ts[kept++] = t;
    }
    /* The tensors tile the data after the header exactly. */
    CHECK(total == size - data_start);
    if (total <= ROUND_TRIP_MAX_BYTES)
        round_trip(f, names, ts, kept);
    for (int64_t i = 0; i < kept; i++)
        yg_release(ts[i]);
    free(names);
    free(ts);
    yg_safetensors_close(f);
    return 0;
}
