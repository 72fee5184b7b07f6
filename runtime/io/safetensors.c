/*
 * safetensors.c - yagrad/safetensors.h: tensors saved to and loaded from
 * the safetensors format.
 *
 * The header is JSON and is read with jansson (Debian's libjansson), never
 * by hand: it checks UTF-8, reports errors with line and column, keeps
 * the keys in file order and refuses duplicate keys (JSON_REJECT_DUPLICATES),
 * which is how a tensor name given twice is caught.  Open validates the
 * whole header before it returns a handle, so every later read trusts the
 * table: each tensor's [begin, end) lies inside the data, holds exactly
 * numel * element-size bytes, and the tensors sorted by offsets tile the
 * data with no hole and no overlap (the reference implementation's
 * Metadata::validate).  After open the handle is read-only; tensors are
 * read with pread (or memcpy from a caller's buffer) straight into the
 * tensor's memory, so several threads may read one handle at once and a
 * file that shrinks under us gives an I/O error, not the SIGBUS a mapping
 * would.
 *
 * The writer builds the header with jansson too (compact, keys in data
 * order, padded with spaces to a multiple of 8 as the reference writer
 * does) and streams each tensor's bytes into a temporary file that is
 * renamed over the target once complete.
 */
#include "yagrad/safetensors.h"

#include "core/core.h"
#include "yagrad/autograd.h"
#include "yagrad/ops_inplace_fill.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The reference implementation's MAX_HEADER_SIZE: a larger header is
 * refused before anything is allocated for it. */
#define MAX_HEADER_BYTES 100000000u

/* The format's dtypes (safetensors' Dtype), with their width in bits and
 * yagrad's dtype where there is one.  F4 and F6 pack below a byte: a
 * tensor of them must fill whole bytes. */
typedef struct st_dtype {
    const char *name;
    int bits;
    bool supported;
    yg_dtype dtype;
} st_dtype;

static const st_dtype dtypes[] = {
    {"F64", 64, true, YG_FLOAT64},
    {"F32", 32, true, YG_FLOAT32},
    {"F16", 16, true, YG_FLOAT16},
    {"BF16", 16, true, YG_BFLOAT16},
    {"I64", 64, true, YG_INT64},
    {"I32", 32, true, YG_INT32},
    {"BOOL", 8, true, YG_BOOL},
    {"U8", 8, false, YG_DTYPE_COUNT_},
    {"I8", 8, false, YG_DTYPE_COUNT_},
    {"I16", 16, false, YG_DTYPE_COUNT_},
    {"U16", 16, false, YG_DTYPE_COUNT_},
    {"U32", 32, false, YG_DTYPE_COUNT_},
    {"U64", 64, false, YG_DTYPE_COUNT_},
    {"C64", 64, false, YG_DTYPE_COUNT_},
    {"F8_E4M3", 8, false, YG_DTYPE_COUNT_},
    {"F8_E5M2", 8, false, YG_DTYPE_COUNT_},
    {"F8_E8M0", 8, false, YG_DTYPE_COUNT_},
    {"F6_E2M3", 6, false, YG_DTYPE_COUNT_},
    {"F6_E3M2", 6, false, YG_DTYPE_COUNT_},
    {"F4", 4, false, YG_DTYPE_COUNT_},
};
#define N_DTYPES       ((int)(sizeof dtypes / sizeof dtypes[0]))
#define SUPPORTED_LIST "F64, F32, F16, BF16, I64, I32, BOOL"

typedef struct st_tensor {
    char *name;
    const st_dtype *dtype;
    int64_t ndim;
    int64_t *sizes; /* NULL when ndim is 0 */
    int64_t numel;
    uint64_t begin, end; /* data_offsets, from the first byte after the header */
} st_tensor;

struct yg_safetensors {
    int fd;              /* the file; -1 over a buffer */
    const uint8_t *buf;  /* the caller's bytes; NULL over a file */
    char *source;        /* "'path'" or "buffer", for messages */
    uint64_t data_start; /* 8 + header length */
    uint64_t data_len;
    int64_t n;
    st_tensor *tensors; /* sorted by name */
    int64_t n_meta;
    char **meta_keys; /* header order */
    char **meta_values;
};

static yg_status oom(const char *op) {
    return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
}

/* The format is little-endian and nothing here swaps bytes. */
static yg_status check_host(const char *op) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                    "%s: this host is big-endian; safetensors files are little-endian and "
                    "yagrad does not swap them",
                    op);
#else
    (void)op;
    return YG_OK;
#endif
}

static const st_dtype *dtype_by_name(const char *name) {
    for (int i = 0; i < N_DTYPES; i++)
        if (strcmp(dtypes[i].name, name) == 0)
            return &dtypes[i];
    return NULL;
}

static const st_dtype *dtype_of(yg_dtype d) {
    for (int i = 0; i < N_DTYPES; i++)
        if (dtypes[i].supported && dtypes[i].dtype == d)
            return &dtypes[i];
    return NULL;
}

static char *dup_string(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

/* ------------------------------------------------------------------------
 * Reading the header
 * ------------------------------------------------------------------------ */

static void free_tensors(st_tensor *t, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        free(t[i].name);
        free(t[i].sizes);
    }
    free(t);
}

void yg_safetensors_close(yg_safetensors *f) {
    if (f == NULL)
        return;
    if (f->fd >= 0)
        close(f->fd);
    free(f->source);
    free_tensors(f->tensors, f->n);
    for (int64_t i = 0; i < f->n_meta; i++) {
        free(f->meta_keys[i]);
        free(f->meta_values[i]);
    }
    free(f->meta_keys);
    free(f->meta_values);
    free(f);
}

/* A JSON integer >= 0 into *out; false for anything else. */
static bool json_u64(const json_t *v, uint64_t *out) {
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return false;
    *out = (uint64_t)json_integer_value(v);
    return true;
}

/* "__metadata__": an object of strings, kept in header order. */
static yg_status parse_metadata(yg_safetensors *f, json_t *meta, const char *op) {
    if (!json_is_object(meta))
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "%s: %s: \"__metadata__\" is not an object", op, f->source);
    size_t n = json_object_size(meta);
    f->meta_keys = calloc(n ? n : 1, sizeof *f->meta_keys);
    f->meta_values = calloc(n ? n : 1, sizeof *f->meta_values);
    if (f->meta_keys == NULL || f->meta_values == NULL)
        return oom(op);
    const char *key;
    json_t *value;
    json_object_foreach(meta, key, value) {
        if (!json_is_string(value))
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s: %s: \"__metadata__\" entry \"%s\" is not a string",
                            op,
                            f->source,
                            key);
        f->meta_keys[f->n_meta] = dup_string(key);
        f->meta_values[f->n_meta] = dup_string(json_string_value(value));
        f->n_meta++; /* counted before the check: close frees what was made */
        if (f->meta_keys[f->n_meta - 1] == NULL || f->meta_values[f->n_meta - 1] == NULL)
            return oom(op);
    }
    return YG_OK;
}

/* One tensor entry: its dtype, shape and offsets, and the checks that need
 * only the entry itself (byte size, bounds). */
static yg_status parse_entry(const yg_safetensors *f,
                             const char *name,
                             json_t *entry,
                             st_tensor *t,
                             const char *op) {
    char shape[256];
    if (!json_is_object(entry))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %s: tensor \"%s\": entry is not an object",
                        op,
                        f->source,
                        name);
    json_t *dtype = json_object_get(entry, "dtype");
    json_t *sizes = json_object_get(entry, "shape");
    json_t *offsets = json_object_get(entry, "data_offsets");
    if (!json_is_string(dtype))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %s: tensor \"%s\": %s",
                        op,
                        f->source,
                        name,
                        dtype == NULL ? "no \"dtype\"" : "\"dtype\" is not a string");
    t->dtype = dtype_by_name(json_string_value(dtype));
    if (t->dtype == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %s: tensor \"%s\": unknown dtype \"%s\" (the format's dtypes: "
                        "BOOL, U8, I8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64, C64, "
                        "F8_E4M3, F8_E5M2, F8_E8M0, F6_E2M3, F6_E3M2, F4)",
                        op,
                        f->source,
                        name,
                        json_string_value(dtype));
    if (!json_is_array(sizes))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %s: tensor \"%s\": %s",
                        op,
                        f->source,
                        name,
                        sizes == NULL ? "no \"shape\"" : "\"shape\" is not an array");
    t->ndim = (int64_t)json_array_size(sizes);
    if (t->ndim > 0) {
        t->sizes = malloc((size_t)t->ndim * sizeof *t->sizes);
        if (t->sizes == NULL)
            return oom(op);
    }
    uint64_t numel = 1;
    bool overflow = false;
    for (int64_t d = 0; d < t->ndim; d++) {
        json_t *v = json_array_get(sizes, (size_t)d);
        uint64_t s;
        if (!json_u64(v, &s))
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s: %s: tensor \"%s\": shape entry %" PRId64 " is not an integer >= 0",
                            op,
                            f->source,
                            name,
                            d);
        t->sizes[d] = (int64_t)s;
        /* With a zero anywhere the tensor is empty whatever the others are. */
        if (s != 0 && numel > INT64_MAX / s)
            overflow = true;
        else
            numel *= s;
    }
    if (numel == 0)
        overflow = false;
    if (overflow)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %s: tensor \"%s\": shape %s has more than 2^63 elements",
                        op,
                        f->source,
                        name,
                        yg__format_sizes(t->sizes, t->ndim, shape, sizeof shape));
    t->numel = (int64_t)numel;
    if (!json_is_array(offsets) || json_array_size(offsets) != 2 ||
        !json_u64(json_array_get(offsets, 0), &t->begin) ||
        !json_u64(json_array_get(offsets, 1), &t->end))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %s: tensor \"%s\": %s",
                        op,
                        f->source,
                        name,
                        offsets == NULL ? "no \"data_offsets\""
                                        : "\"data_offsets\" is not [begin, end] of integers >= 0");
    if (t->end < t->begin)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %s: tensor \"%s\": data_offsets [%" PRIu64 ", %" PRIu64
                        "] end before they begin",
                        op,
                        f->source,
                        name,
                        t->begin,
                        t->end);
    if (t->end > f->data_len)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %s: tensor \"%s\": data_offsets [%" PRIu64 ", %" PRIu64
                        "] run past the end of the data (%" PRIu64 " bytes after the header)",
                        op,
                        f->source,
                        name,
                        t->begin,
                        t->end,
                        f->data_len);
    /* numel < 2^63 and bits <= 64, so numel * bits fits in 70 bits: test
     * before multiplying. */
    uint64_t bits = (uint64_t)t->dtype->bits, held = t->end - t->begin;
    if (numel > UINT64_MAX / bits || (numel * bits) % 8 != 0)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %s: tensor \"%s\": shape %s of %s is not a whole number of bytes "
                        "below 2^64",
                        op,
                        f->source,
                        name,
                        yg__format_sizes(t->sizes, t->ndim, shape, sizeof shape),
                        t->dtype->name);
    if (numel * bits / 8 != held)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %s: tensor \"%s\": data_offsets [%" PRIu64 ", %" PRIu64
                        "] hold %" PRIu64 " bytes, but shape %s of %s needs %" PRIu64,
                        op,
                        f->source,
                        name,
                        t->begin,
                        t->end,
                        held,
                        yg__format_sizes(t->sizes, t->ndim, shape, sizeof shape),
                        t->dtype->name,
                        numel * bits / 8);
    return YG_OK;
}

static int by_offsets(const void *pa, const void *pb) {
    const st_tensor *a = *(const st_tensor *const *)pa, *b = *(const st_tensor *const *)pb;
    if (a->begin != b->begin)
        return a->begin < b->begin ? -1 : 1;
    if (a->end != b->end)
        return a->end < b->end ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int by_name(const void *pa, const void *pb) {
    return strcmp(((const st_tensor *)pa)->name, ((const st_tensor *)pb)->name);
}

/* The tensors sorted by offsets must tile the data: each begins where the
 * one before ends, and the last ends where the data ends. */
static yg_status check_tiling(const yg_safetensors *f, const char *op) {
    const st_tensor **order = malloc((size_t)(f->n ? f->n : 1) * sizeof *order);
    if (order == NULL)
        return oom(op);
    for (int64_t i = 0; i < f->n; i++)
        order[i] = &f->tensors[i];
    qsort(order, (size_t)f->n, sizeof *order, by_offsets);
    uint64_t at = 0;
    const st_tensor *prev = NULL;
    yg_status st = YG_OK;
    for (int64_t i = 0; i < f->n && st == YG_OK; i++) {
        const st_tensor *t = order[i];
        if (t->begin < at)
            st = yg__fail(YG_ERR_INVALID_ARGUMENT,
                          "%s: %s: tensor \"%s\": data_offsets [%" PRIu64 ", %" PRIu64
                          "] overlap tensor \"%s\" [%" PRIu64 ", %" PRIu64 "]",
                          op,
                          f->source,
                          t->name,
                          t->begin,
                          t->end,
                          prev->name,
                          prev->begin,
                          prev->end);
        else if (t->begin > at)
            st = yg__fail(YG_ERR_INVALID_ARGUMENT,
                          "%s: %s: tensor \"%s\": data_offsets [%" PRIu64 ", %" PRIu64
                          "] leave a hole: bytes [%" PRIu64 ", %" PRIu64
                          ") of the data belong to no tensor",
                          op,
                          f->source,
                          t->name,
                          t->begin,
                          t->end,
                          at,
                          t->begin);
        at = t->end;
        prev = t;
    }
    if (st == YG_OK && at != f->data_len) {
        if (prev != NULL)
            st = yg__fail(YG_ERR_INVALID_ARGUMENT,
                          "%s: %s: the data is %" PRIu64 " bytes, but the last tensor, \"%s\", "
                          "ends at %" PRIu64 ": the %" PRIu64 " bytes after it belong to no tensor",
                          op,
                          f->source,
                          f->data_len,
                          prev->name,
                          at,
                          f->data_len - at);
        else
            st = yg__fail(YG_ERR_INVALID_ARGUMENT,
                          "%s: %s: the header lists no tensor, but %" PRIu64
                          " bytes of data follow it",
                          op,
                          f->source,
                          f->data_len);
    }
    free(order);
    return st;
}

/* Parses and checks the header (n bytes at text), filling f. */
static yg_status parse_header(yg_safetensors *f, const char *text, size_t n, const char *op) {
    json_error_t err;
    json_t *root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &err);
    if (root == NULL) {
        if (json_error_code(&err) == json_error_duplicate_key) {
            /* jansson says "duplicate object key near '"name"'": the key as
             * written in the file, quotes included. */
            const char *near = strstr(err.text, "near '");
            const char *key = near != NULL ? near + 6 : "?";
            int len = near != NULL ? (int)strlen(key) - 1 : 1;
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s: %s: header: duplicate key %.*s (a tensor name or a field given "
                            "twice) at line %d, column %d",
                            op,
                            f->source,
                            len > 0 ? len : 0,
                            key,
                            err.line,
                            err.column);
        }
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %s: header is not valid JSON: %s (line %d, column %d)",
                        op,
                        f->source,
                        err.text,
                        err.line,
                        err.column);
    }
    yg_status st = YG_OK;
    if (!json_is_object(root)) {
        static const char *const kinds[] = {
            "an object", "an array", "a string", "an integer", "a real", "true", "false", "null"};
        int k = (int)json_typeof(root);
        st = yg__fail(YG_ERR_INVALID_ARGUMENT,
                      "%s: %s: header is not a JSON object (it is %s)",
                      op,
                      f->source,
                      k >= 0 && k < 8 ? kinds[k] : "something else");
        goto out;
    }
    size_t n_keys = json_object_size(root);
    f->tensors = calloc(n_keys ? n_keys : 1, sizeof *f->tensors);
    if (f->tensors == NULL) {
        st = oom(op);
        goto out;
    }
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value) {
        if (strcmp(key, "__metadata__") == 0) {
            st = parse_metadata(f, value, op);
        } else {
            st_tensor *t = &f->tensors[f->n++];
            t->name = dup_string(key);
            st = t->name == NULL ? oom(op) : parse_entry(f, key, value, t, op);
        }
        if (st != YG_OK)
            goto out;
    }
    st = check_tiling(f, op);
    if (st == YG_OK)
        qsort(f->tensors, (size_t)f->n, sizeof *f->tensors, by_name);
out:
    json_decref(root);
    return st;
}

static uint64_t load_u64_le(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* Reads len bytes at offset of the file into dst; YG_ERR_IO naming what
 * for errors and a file that ends early. */
static yg_status pread_all(const yg_safetensors *f,
                           void *dst,
                           uint64_t len,
                           uint64_t offset,
                           const char *op,
                           const char *what) {
    uint8_t *p = dst;
    while (len > 0) {
        size_t chunk = len > ((size_t)1 << 30) ? ((size_t)1 << 30) : (size_t)len;
        ssize_t got = pread(f->fd, p, chunk, (off_t)offset);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return yg__fail(
                YG_ERR_IO, "%s: %s: cannot read %s: %s", op, f->source, what, strerror(errno));
        if (got == 0)
            return yg__fail(YG_ERR_IO,
                            "%s: %s: cannot read %s: the file ends at byte %" PRIu64
                            " (it changed since it was opened)",
                            op,
                            f->source,
                            what,
                            offset);
        p += got;
        offset += (uint64_t)got;
        len -= (uint64_t)got;
    }
    return YG_OK;
}

/* Checks the 8-byte length against the size and parses the header; text
 * is the header's bytes (NULL: read them from the file). */
static yg_status
open_common(yg_safetensors *f, const uint8_t *first8, uint64_t size, const char *op) {
    if (size < 8)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %s: %" PRIu64 " bytes, too short for the 8-byte header length "
                        "(truncated or not a safetensors file)",
                        op,
                        f->source,
                        size);
    uint64_t n = load_u64_le(first8);
    if (n > MAX_HEADER_BYTES)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %s: header length %" PRIu64 " is over the limit of %u bytes",
                        op,
                        f->source,
                        n,
                        MAX_HEADER_BYTES);
    if (n > size - 8)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %s: header length %" PRIu64 " runs past the end of the file (%" PRIu64
                        " bytes; truncated?)",
                        op,
                        f->source,
                        n,
                        size);
    f->data_start = 8 + n;
    f->data_len = size - 8 - n;
    if (f->buf != NULL)
        return parse_header(f, (const char *)f->buf + 8, (size_t)n, op);
    char *text = malloc(n ? (size_t)n : 1);
    if (text == NULL)
        return oom(op);
    yg_status st = pread_all(f, text, n, 8, op, "the header");
    if (st == YG_OK)
        st = parse_header(f, text, (size_t)n, op);
    free(text);
    return st;
}

static yg_status new_handle(const char *op, const char *source, yg_safetensors **out) {
    yg_safetensors *f = calloc(1, sizeof *f);
    if (f == NULL)
        return oom(op);
    f->fd = -1;
    f->source = dup_string(source);
    if (f->source == NULL) {
        free(f);
        return oom(op);
    }
    *out = f;
    return YG_OK;
}

yg_status yg_safetensors_open(const char *path, yg_safetensors **out) {
    static const char op[] = "safetensors_open";
    if (out != NULL)
        *out = NULL;
    if (path == NULL || out == NULL)
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "%s: %s is NULL", op, path == NULL ? "path" : "out");
    YG_RETURN_IF_ERROR(check_host(op));
    size_t len = strlen(path);
    char *source = malloc(len + 3);
    if (source == NULL)
        return oom(op);
    snprintf(source, len + 3, "'%s'", path);
    yg_safetensors *f = NULL;
    yg_status st = new_handle(op, source, &f);
    free(source);
    if (st != YG_OK)
        return st;
    struct stat sb;
    uint8_t first8[8] = {0};
    /* O_NONBLOCK: opening a FIFO must not wait for a writer (it is
     * refused below); it changes nothing for a regular file. */
    f->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (f->fd < 0) {
        st = yg__fail(YG_ERR_IO, "%s: %s: cannot open: %s", op, f->source, strerror(errno));
    } else if (fstat(f->fd, &sb) != 0) {
        st = yg__fail(YG_ERR_IO, "%s: %s: cannot stat: %s", op, f->source, strerror(errno));
    } else if (!S_ISREG(sb.st_mode)) {
        st = yg__fail(YG_ERR_IO, "%s: %s: not a regular file", op, f->source);
    } else {
        uint64_t size = (uint64_t)sb.st_size;
        if (size >= 8)
            st = pread_all(f, first8, 8, 0, op, "the header length");
        if (st == YG_OK)
            st = open_common(f, first8, size, op);
    }
    if (st != YG_OK) {
        yg_safetensors_close(f);
        return st;
    }
    *out = f;
    return YG_OK;
}

yg_status yg_safetensors_open_buffer(const void *data, size_t len, yg_safetensors **out) {
    static const char op[] = "safetensors_open_buffer";
    if (out != NULL)
        *out = NULL;
    if ((data == NULL && len > 0) || out == NULL)
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "%s: %s is NULL", op, out == NULL ? "out" : "data");
    YG_RETURN_IF_ERROR(check_host(op));
    yg_safetensors *f = NULL;
    YG_RETURN_IF_ERROR(new_handle(op, "buffer", &f));
    static const uint8_t empty[8] = {0};
    f->buf = data != NULL ? data : empty;
    yg_status st = open_common(f, f->buf, (uint64_t)len, op);
    if (st != YG_OK) {
        yg_safetensors_close(f);
        return st;
    }
    *out = f;
    return YG_OK;
}

/* ------------------------------------------------------------------------
 * Looking up and reading tensors
 * ------------------------------------------------------------------------ */

int64_t yg_safetensors_count(const yg_safetensors *f) {
    return f != NULL ? f->n : 0;
}

const char *yg_safetensors_name(const yg_safetensors *f, int64_t i) {
    return f != NULL && i >= 0 && i < f->n ? f->tensors[i].name : NULL;
}

int64_t yg_safetensors_metadata_count(const yg_safetensors *f) {
    return f != NULL ? f->n_meta : 0;
}

const char *yg_safetensors_metadata_key(const yg_safetensors *f, int64_t i) {
    return f != NULL && i >= 0 && i < f->n_meta ? f->meta_keys[i] : NULL;
}

const char *yg_safetensors_metadata(const yg_safetensors *f, const char *key) {
    if (f == NULL || key == NULL)
        return NULL;
    for (int64_t i = 0; i < f->n_meta; i++)
        if (strcmp(f->meta_keys[i], key) == 0)
            return f->meta_values[i];
    return NULL;
}

/* The tensor name, or a failure naming op. */
static yg_status
find(const yg_safetensors *f, const char *name, const char *op, const st_tensor **out) {
    *out = NULL;
    if (f == NULL || name == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: %s is NULL", op, f == NULL ? "f" : "name");
    st_tensor key = {.name = (char *)name};
    *out = bsearch(&key, f->tensors, (size_t)f->n, sizeof *f->tensors, by_name);
    if (*out == NULL)
        return yg__fail(YG_ERR_INDEX,
                        "%s: no tensor \"%s\" in %s (%" PRId64 " tensor%s)",
                        op,
                        name,
                        f->source,
                        f->n,
                        f->n == 1 ? "" : "s");
    return YG_OK;
}

yg_status
yg_safetensors_info_of(const yg_safetensors *f, const char *name, yg_safetensors_info *out) {
    const st_tensor *t;
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "safetensors_info: out is NULL");
    memset(out, 0, sizeof *out);
    YG_RETURN_IF_ERROR(find(f, name, "safetensors_info", &t));
    out->dtype_name = t->dtype->name;
    out->dtype_supported = t->dtype->supported;
    out->dtype = t->dtype->dtype;
    out->ndim = t->ndim;
    out->sizes = t->sizes;
    out->numel = t->numel;
    out->nbytes = (int64_t)(t->end - t->begin);
    return YG_OK;
}

/* Fails unless yagrad can hold t: a dtype it has, at most YG_MAX_DIMS. */
static yg_status check_readable(const yg_safetensors *f, const st_tensor *t, const char *op) {
    if (!t->dtype->supported)
        return yg__fail(YG_ERR_DTYPE,
                        "%s: %s: tensor \"%s\" has dtype %s, which yagrad does not have (it "
                        "reads " SUPPORTED_LIST ")",
                        op,
                        f->source,
                        t->name,
                        t->dtype->name);
    if (t->ndim > YG_MAX_DIMS)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: %s: tensor \"%s\" has %" PRId64
                        " dims; yagrad tensors have at most %d",
                        op,
                        f->source,
                        t->name,
                        t->ndim,
                        YG_MAX_DIMS);
    return YG_OK;
}

/* Copies t's bytes into dst (nbytes of host memory). */
static yg_status read_data(const yg_safetensors *f, const st_tensor *t, void *dst, const char *op) {
    uint64_t len = t->end - t->begin;
    if (len == 0)
        return YG_OK;
    if (f->buf != NULL) {
        memcpy(dst, f->buf + f->data_start + t->begin, (size_t)len);
    } else {
        char what[64];
        snprintf(what, sizeof what, "tensor \"%.40s\"", t->name);
        YG_RETURN_IF_ERROR(pread_all(f, dst, len, f->data_start + t->begin, op, what));
    }
    /* yagrad's bool is 0 or 1; a file may hold any byte. */
    if (t->dtype->supported && t->dtype->dtype == YG_BOOL) {
        uint8_t *p = dst;
        for (uint64_t i = 0; i < len; i++)
            p[i] = p[i] != 0;
    }
    return YG_OK;
}

static yg_status get(const yg_safetensors *f, const st_tensor *t, const char *op, yg_tensor **out) {
    yg_tensor *r = NULL;
    YG_RETURN_IF_ERROR(check_readable(f, t, op));
    YG_RETURN_IF_ERROR(yg__tensor_new(op, t->sizes, t->ndim, t->dtype->dtype, &r));
    yg_status st = read_data(f, t, yg_tensor_data(r), op);
    if (st != YG_OK) {
        yg_release(r);
        return st;
    }
    *out = r;
    return YG_OK;
}

yg_status yg_safetensors_get(const yg_safetensors *f, const char *name, yg_tensor **out) {
    static const char op[] = "safetensors_get";
    const st_tensor *t;
    YG_RETURN_IF_ERROR(yg__check_out(op, "out", out));
    YG_RETURN_IF_ERROR(find(f, name, op, &t));
    return get(f, t, op, out);
}

yg_status yg_safetensors_read_into(const yg_safetensors *f, const char *name, yg_tensor *dst) {
    static const char op[] = "safetensors_read_into";
    const st_tensor *t;
    char a[256], b[256];
    YG_RETURN_IF_ERROR(find(f, name, op, &t));
    YG_RETURN_IF_ERROR(yg__check_defined(op, "dst", dst));
    YG_RETURN_IF_ERROR(check_readable(f, t, op));
    if (dst->dtype != t->dtype->dtype)
        return yg__fail(YG_ERR_DTYPE,
                        "%s: %s: tensor \"%s\" is %s (%s) in the file, but dst is %s",
                        op,
                        f->source,
                        t->name,
                        t->dtype->name,
                        yg_dtype_name(t->dtype->dtype),
                        yg_dtype_name(dst->dtype));
    if (dst->ndim != t->ndim ||
        (t->ndim > 0 && memcmp(dst->sizes, t->sizes, (size_t)t->ndim * sizeof(int64_t)) != 0))
        return yg__fail(YG_ERR_SHAPE,
                        "%s: %s: tensor \"%s\" is %s in the file, but dst is %s",
                        op,
                        f->source,
                        t->name,
                        yg__format_sizes(t->sizes, t->ndim, a, sizeof a),
                        yg__format_sizes(dst->sizes, dst->ndim, b, sizeof b));
    if (yg_tensor_device(dst) == YG_CPU && yg_tensor_is_contiguous(dst)) {
        yg_status st = read_data(f, t, yg_tensor_data(dst), op);
        yg__tensor_bump_version(dst);
        return st;
    }
    /* A view or a GPU tensor: read into a contiguous host tensor, take it
     * to dst's device (copy_ takes tensors of one device only), and copy_
     * it into dst's layout. */
    yg_tensor *tmp = NULL, *there = NULL, *same = NULL;
    YG_RETURN_IF_ERROR(get(f, t, op, &tmp));
    yg_status st = yg__tensor_to(tmp, yg_tensor_device(dst), yg_tensor_device_index(dst), &there);
    if (st == YG_OK) {
        bool prev = yg_set_grad_enabled(false);
        st = yg_copy_(dst, there, &same);
        yg_set_grad_enabled(prev);
    }
    if (st != YG_OK)
        st = yg__fail_prefix(st, op);
    yg_release(same);
    yg_release(there);
    yg_release(tmp);
    return st;
}

/* ------------------------------------------------------------------------
 * Writing
 * ------------------------------------------------------------------------ */

typedef struct save_item {
    const char *name;
    yg_tensor *t;
    const st_dtype *dtype;
    uint64_t nbytes;
} save_item;

/* Data order: element size, largest first, then name (the reference
 * writer's order, which keeps every tensor aligned to its element). */
static int by_alignment_then_name(const void *pa, const void *pb) {
    const save_item *a = pa, *b = pb;
    if (a->dtype->bits != b->dtype->bits)
        return a->dtype->bits > b->dtype->bits ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int by_item_name(const void *pa, const void *pb) {
    return strcmp(((const save_item *)pa)->name, ((const save_item *)pb)->name);
}

static int by_string(const void *pa, const void *pb) {
    return strcmp(*(const char *const *)pa, *(const char *const *)pb);
}

/* Writes all len bytes to fd. */
static bool write_all(int fd, const void *data, uint64_t len) {
    const uint8_t *p = data;
    while (len > 0) {
        size_t chunk = len > ((size_t)1 << 30) ? ((size_t)1 << 30) : (size_t)len;
        ssize_t put = write(fd, p, chunk);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            return false;
        p += put;
        len -= (uint64_t)put;
    }
    return true;
}

/* The header text: compact JSON padded with spaces to a multiple of 8. */
static yg_status build_header(const save_item *items,
                              int64_t n,
                              const char *const *keys,
                              const char *const *values,
                              int64_t n_meta,
                              char **out,
                              size_t *out_len) {
    static const char op[] = "safetensors_save";
    yg_status st = YG_OK;
    json_t *root = json_object();
    if (root == NULL)
        return oom(op);
    if (n_meta > 0) {
        json_t *meta = json_object();
        if (meta == NULL || json_object_set_new(root, "__metadata__", meta) != 0) {
            st = oom(op);
            goto out;
        }
        for (int64_t i = 0; i < n_meta; i++) {
            json_t *v = json_string(values[i]);
            if (v == NULL) {
                st = yg__fail(YG_ERR_INVALID_ARGUMENT,
                              "%s: metadata value %" PRId64 " (of key \"%s\") is not valid UTF-8",
                              op,
                              i,
                              keys[i]);
                goto out;
            }
            if (json_object_set_new(meta, keys[i], v) != 0) {
                st = yg__fail(YG_ERR_INVALID_ARGUMENT,
                              "%s: metadata key %" PRId64 " is not valid UTF-8",
                              op,
                              i);
                goto out;
            }
        }
    }
    uint64_t offset = 0;
    for (int64_t i = 0; i < n; i++) {
        const save_item *it = &items[i];
        json_t *shape = json_array();
        bool ok = shape != NULL;
        for (int64_t d = 0; ok && d < yg_tensor_ndim(it->t); d++)
            ok = json_array_append_new(shape, json_integer(yg_tensor_sizes(it->t)[d])) == 0;
        if (!ok) {
            json_decref(shape);
            st = oom(op);
            goto out;
        }
        /* "o" hands shape to the entry, or frees it on failure. */
        json_t *entry = json_pack("{s:s, s:o, s:[I, I]}",
                                  "dtype",
                                  it->dtype->name,
                                  "shape",
                                  shape,
                                  "data_offsets",
                                  (json_int_t)offset,
                                  (json_int_t)(offset + it->nbytes));
        if (entry == NULL) {
            st = oom(op);
            goto out;
        }
        if (json_object_set_new(root, it->name, entry) != 0) {
            st = yg__fail(
                YG_ERR_INVALID_ARGUMENT, "%s: tensor name \"%s\" is not valid UTF-8", op, it->name);
            goto out;
        }
        offset += it->nbytes;
    }
    char *text = json_dumps(root, JSON_COMPACT);
    if (text == NULL) {
        st = oom(op);
        goto out;
    }
    size_t len = strlen(text), padded = (len + 7) / 8 * 8;
    char *buf = realloc(text, padded + 1);
    if (buf == NULL) {
        free(text);
        st = oom(op);
        goto out;
    }
    memset(buf + len, ' ', padded - len);
    buf[padded] = '\0';
    *out = buf;
    *out_len = padded;
out:
    json_decref(root);
    return st;
}

static yg_status check_save_args(const char *path,
                                 const char *const *names,
                                 yg_tensor *const *tensors,
                                 int64_t n,
                                 const char *const *keys,
                                 const char *const *values,
                                 int64_t n_meta) {
    static const char op[] = "safetensors_save";
    if (path == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: path is NULL", op);
    if (n < 0 || n_meta < 0)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: negative length (tensors_len %" PRId64 ", metadata_len %" PRId64 ")",
                        op,
                        n,
                        n_meta);
    if (n > 0 && (names == NULL || tensors == NULL))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %s is NULL with tensors_len %" PRId64,
                        op,
                        names == NULL ? "names" : "tensors",
                        n);
    if (n_meta > 0 && (keys == NULL || values == NULL))
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "%s: %s is NULL with metadata_len %" PRId64,
                        op,
                        keys == NULL ? "metadata_keys" : "metadata_values",
                        n_meta);
    for (int64_t i = 0; i < n; i++) {
        if (names[i] == NULL)
            return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: names[%" PRId64 "] is NULL", op, i);
        if (tensors[i] == NULL)
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s: tensors[%" PRId64 "] (\"%s\") is NULL",
                            op,
                            i,
                            names[i]);
        if (strcmp(names[i], "__metadata__") == 0)
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s: tensors[%" PRId64 "] is named \"__metadata__\", the format's "
                            "key for metadata",
                            op,
                            i);
    }
    for (int64_t i = 0; i < n_meta; i++)
        if (keys[i] == NULL || values[i] == NULL)
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "%s: metadata_%s[%" PRId64 "] is NULL",
                            op,
                            keys[i] == NULL ? "keys" : "values",
                            i);
    if (n_meta > 1) {
        const char **sorted = malloc((size_t)n_meta * sizeof *sorted);
        if (sorted == NULL)
            return oom(op);
        memcpy(sorted, keys, (size_t)n_meta * sizeof *sorted);
        qsort(sorted, (size_t)n_meta, sizeof *sorted, by_string);
        for (int64_t i = 1; i < n_meta; i++)
            if (strcmp(sorted[i - 1], sorted[i]) == 0) {
                yg_status st = yg__fail(YG_ERR_INVALID_ARGUMENT,
                                        "%s: metadata key \"%s\" is given twice",
                                        op,
                                        sorted[i]);
                free(sorted);
                return st;
            }
        free(sorted);
    }
    return YG_OK;
}

/* Writes the header and each tensor's bytes to fd. */
static yg_status write_file(int fd,
                            const char *path,
                            const char *header,
                            size_t header_len,
                            const save_item *items,
                            int64_t n) {
    static const char op[] = "safetensors_save";
    uint8_t len8[8];
    for (int i = 0; i < 8; i++)
        len8[i] = (uint8_t)((uint64_t)header_len >> (8 * i));
    if (!write_all(fd, len8, 8) || !write_all(fd, header, header_len))
        return yg__fail(YG_ERR_IO, "%s: cannot write '%s': %s", op, path, strerror(errno));
    for (int64_t i = 0; i < n; i++) {
        yg_tensor *c = NULL;
        yg_status st = yg__tensor_to(items[i].t, YG_CPU, 0, &c);
        if (st != YG_OK)
            return yg__fail_prefix(st, op);
        bool ok = write_all(fd, yg_tensor_data(c), items[i].nbytes);
        int e = errno;
        yg_release(c);
        if (!ok)
            return yg__fail(YG_ERR_IO,
                            "%s: cannot write '%s' (tensor \"%s\"): %s",
                            op,
                            path,
                            items[i].name,
                            strerror(e));
    }
    if (fsync(fd) != 0)
        return yg__fail(YG_ERR_IO, "%s: cannot write '%s': %s", op, path, strerror(errno));
    return YG_OK;
}

/* Creates a new file beside path (mode 0666 less the umask, which
 * mkstemp's 0600 would not give) and returns its fd and name. */
static yg_status create_temp(const char *path, char **out_name, int *out_fd) {
    static atomic_uint counter;
    size_t cap = strlen(path) + 48;
    char *name = malloc(cap);
    if (name == NULL)
        return oom("safetensors_save");
    for (int tries = 0; tries < 100; tries++) {
        snprintf(name, cap, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&counter, 1u));
        int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            *out_name = name;
            *out_fd = fd;
            return YG_OK;
        }
        if (errno != EEXIST)
            break;
    }
    yg_status st =
        yg__fail(YG_ERR_IO, "safetensors_save: cannot create '%s': %s", name, strerror(errno));
    free(name);
    return st;
}

yg_status yg_safetensors_save(const char *path,
                              const char *const *names,
                              yg_tensor *const *tensors,
                              int64_t tensors_len,
                              const char *const *metadata_keys,
                              const char *const *metadata_values,
                              int64_t metadata_len) {
    static const char op[] = "safetensors_save";
    YG_RETURN_IF_ERROR(check_host(op));
    YG_RETURN_IF_ERROR(check_save_args(
        path, names, tensors, tensors_len, metadata_keys, metadata_values, metadata_len));
    save_item *items = calloc((size_t)(tensors_len ? tensors_len : 1), sizeof *items);
    char *header = NULL, *tmp = NULL;
    size_t header_len = 0;
    int fd = -1;
    yg_status st = YG_OK;
    if (items == NULL)
        return oom(op);
    for (int64_t i = 0; i < tensors_len; i++) {
        items[i].name = names[i];
        items[i].t = tensors[i];
        items[i].dtype = dtype_of(yg_tensor_dtype(tensors[i]));
        if (items[i].dtype == NULL) {
            st = yg__fail(YG_ERR_DTYPE,
                          "%s: tensor \"%s\" has dtype %s, which has no safetensors "
                          "dtype",
                          op,
                          names[i],
                          yg_dtype_name(yg_tensor_dtype(tensors[i])));
            goto out;
        }
        items[i].nbytes = (uint64_t)yg_tensor_numel(tensors[i]) *
                          (uint64_t)yg_dtype_size(yg_tensor_dtype(tensors[i]));
    }
    qsort(items, (size_t)tensors_len, sizeof *items, by_item_name);
    for (int64_t i = 1; i < tensors_len; i++)
        if (strcmp(items[i - 1].name, items[i].name) == 0) {
            st = yg__fail(YG_ERR_INVALID_ARGUMENT,
                          "%s: tensor name \"%s\" is given twice",
                          op,
                          items[i].name);
            goto out;
        }
    qsort(items, (size_t)tensors_len, sizeof *items, by_alignment_then_name);
    st = build_header(
        items, tensors_len, metadata_keys, metadata_values, metadata_len, &header, &header_len);
    if (st != YG_OK)
        goto out;
    st = create_temp(path, &tmp, &fd);
    if (st != YG_OK)
        goto out;
    st = write_file(fd, path, header, header_len, items, tensors_len);
    if (close(fd) != 0 && st == YG_OK)
        st = yg__fail(YG_ERR_IO, "%s: cannot write '%s': %s", op, path, strerror(errno));
    if (st == YG_OK && rename(tmp, path) != 0)
        st = yg__fail(
            YG_ERR_IO, "%s: cannot rename '%s' to '%s': %s", op, tmp, path, strerror(errno));
    if (st != YG_OK)
        unlink(tmp);
out:
    free(tmp);
    free(header);
    free(items);
    return st;
}
