/*
 * test_safetensors.c - yagrad/safetensors.h: round trips of every dtype
 * (0-d, empty and non-contiguous tensors, metadata), files written by an
 * independent NumPy writer (tests/safetensors/numpy_safetensors.py, run
 * by a CTest fixture) and a file of ours checked by its reader, and every
 * malformed file the header promises to refuse, each with the message
 * that names the tensor and the problem.  Malformed files are opened both
 * from disk and from memory (an exact-size copy, so ASan sees any read
 * past it), and must fail the same way.
 */
#include "testutil.h"
#include "yagrad/ops_views.h"
#include "yagrad/safetensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- helpers ---- */

/* A file name of its own for this test process. */
static void tmp_path(char *buf, size_t len, const char *tag) {
    const char *dir = getenv("TMPDIR");
    if (dir == NULL || dir[0] == '\0')
        dir = "/tmp";
    snprintf(buf, len, "%s/yg_safetensors_%s_%ld.safetensors", dir, tag, (long)getpid());
}

static void write_bytes(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* An exact-size malloc'd file: the 8-byte length of header (or
 * length_field when it is not UINT64_MAX), header, then data_len bytes. */
static uint8_t *
make_file(const char *header, uint64_t length_field, size_t data_len, size_t *out_len) {
    size_t n = strlen(header);
    uint64_t field = length_field != UINT64_MAX ? length_field : n;
    uint8_t *b = malloc(8 + n + data_len + 1);
    assert_non_null(b);
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(field >> (8 * i));
    memcpy(b + 8, header, n);
    for (size_t i = 0; i < data_len; i++)
        b[8 + n + i] = (uint8_t)(i * 7 + 1);
    *out_len = 8 + n + data_len;
    return b;
}

/* Opens bytes from a file and from memory: both must fail with the same
 * status, a NULL handle and the same message after the source.  Returns
 * the status; yg_last_error() is the buffer's message. */
static yg_status refuse(const uint8_t *bytes, size_t len) {
    char path[512], file_msg[1024];
    yg_safetensors *f = (yg_safetensors *)&f;
    tmp_path(path, sizeof path, "refuse");
    write_bytes(path, bytes, len);
    yg_status from_file = yg_safetensors_open(path, &f);
    snprintf(file_msg, sizeof file_msg, "%s", yg_last_error());
    remove(path);
    assert_null(f);
    assert_int_not_equal(from_file, YG_OK);

    f = (yg_safetensors *)&f;
    yg_status st = yg_safetensors_open_buffer(bytes, len, &f);
    assert_null(f);
    assert_int_equal(st, from_file);
    const char *a = strstr(file_msg, "': ");
    const char *b = strstr(yg_last_error(), ": buffer: ");
    assert_non_null(a);
    assert_non_null(b);
    if (strcmp(a + 3, b + 10) != 0)
        fail_msg("file: %s\nbuffer: %s", file_msg, yg_last_error());
    assert_true(strncmp(file_msg, "safetensors_open: '", 19) == 0);
    assert_true(strncmp(yg_last_error(), "safetensors_open_buffer: buffer: ", 33) == 0);
    return st;
}

/* refuse() over a header and data_len bytes of data. */
static yg_status refuse_header(const char *header, size_t data_len) {
    size_t len;
    uint8_t *b = make_file(header, UINT64_MAX, data_len, &len);
    yg_status st = refuse(b, len);
    free(b);
    return st;
}

/* Asserts got has want's dtype, shape and bytes (want may be a view). */
static void expect_same(const yg_tensor *got, const yg_tensor *want) {
    yg_tensor *c = NULL;
    assert_int_equal(yg_tensor_dtype(got), yg_tensor_dtype(want));
    assert_int_equal(yg_tensor_ndim(got), yg_tensor_ndim(want));
    for (int64_t d = 0; d < yg_tensor_ndim(want); d++)
        assert_int_equal(yg_tensor_sizes(got)[d], yg_tensor_sizes(want)[d]);
    assert_true(yg_tensor_is_contiguous(got));
    YG_CHECK(yg_tensor_to_device(want, YG_CPU, 0, &c));
    size_t n = (size_t)yg_tensor_numel(want) * yg_dtype_size(yg_tensor_dtype(want));
    if (n > 0)
        assert_memory_equal(yg_tensor_data(got), yg_tensor_data(c), n);
    yg_release(c);
}

static yg_tensor *from_data(const void *data, const int64_t *sizes, int64_t ndim, yg_dtype d) {
    yg_tensor *t = NULL;
    YG_CHECK(yg_tensor_from_data(data, sizes, ndim, d, &t));
    return t;
}

/* ---- the tensors the NumPy script also holds (numpy_safetensors.py) ---- */

#define N_SHARED 10
static const char *const shared_names[N_SHARED] = {"f32",
                                                   "f64",
                                                   "f16",
                                                   "bf16",
                                                   "i64",
                                                   "i32",
                                                   "bool",
                                                   "scalar",
                                                   "empty",
                                                   "nested.name/with:chars"};
static const float f32_values[6] = {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f}; /* [2, 3] */
static const double f64_values[4] = {1.5, -2.25, 1e300, -0.0};             /* [2, 2] */
static const uint16_t f16_bits[4] = {0x3C00, 0xC100, 0x7BFF, 0x0400};  /* 1, -2.5, 65504, 2^-14 */
static const uint16_t bf16_bits[4] = {0x3F80, 0xC060, 0x3E20, 0x4380}; /* 1, -3.5, 0.15625, 256 */
static const int64_t i64_values[3] = {-(INT64_C(1) << 62), 0, (INT64_C(1) << 62) + 1};
static const int32_t i32_values[6] = {-3, -2, -1, 0, 1, 2}; /* [3, 2] */
static const uint8_t bool_values[4] = {1, 0, 0, 1};         /* [2, 2] */
static const float scalar_value = 3.25f;
static const int32_t nested_value = 7;

/* The shared tensors; "f32" is the transpose of a [3, 2] tensor, so its
 * writing gathers a non-contiguous view. */
static void make_shared(yg_tensor **t) {
    static const float f32_transposed[6] = {-1.0f, 0.5f, -0.5f, 1.0f, 0.0f, 1.5f};
    yg_tensor *base = from_data(f32_transposed, (int64_t[]){3, 2}, 2, YG_FLOAT32);
    YG_CHECK(yg_transpose(base, 0, 1, &t[0]));
    assert_false(yg_tensor_is_contiguous(t[0]));
    yg_release(base);
    t[1] = from_data(f64_values, (int64_t[]){2, 2}, 2, YG_FLOAT64);
    t[2] = from_data(f16_bits, (int64_t[]){4}, 1, YG_FLOAT16);
    t[3] = from_data(bf16_bits, (int64_t[]){4}, 1, YG_BFLOAT16);
    t[4] = from_data(i64_values, (int64_t[]){3}, 1, YG_INT64);
    t[5] = from_data(i32_values, (int64_t[]){3, 2}, 2, YG_INT32);
    t[6] = from_data(bool_values, (int64_t[]){2, 2}, 2, YG_BOOL);
    t[7] = from_data(&scalar_value, NULL, 0, YG_FLOAT32);
    t[8] = from_data(NULL, (int64_t[]){0, 4}, 2, YG_FLOAT32);
    t[9] = from_data(&nested_value, (int64_t[]){1}, 1, YG_INT32);
}

static void release_all(yg_tensor **t, int n) {
    for (int i = 0; i < n; i++)
        yg_release(t[i]);
}

/* Checks that f holds the shared tensors with their values. */
static void expect_shared(const yg_safetensors *f) {
    yg_tensor *want[N_SHARED];
    make_shared(want);
    for (int i = 0; i < N_SHARED; i++) {
        yg_tensor *got = NULL;
        YG_CHECK(yg_safetensors_get(f, shared_names[i], &got));
        expect_same(got, want[i]);
        yg_release(got);
    }
    release_all(want, N_SHARED);
    /* The float32 values as numbers, not only as bytes. */
    yg_tensor *got = NULL;
    double expect[6];
    for (int i = 0; i < 6; i++)
        expect[i] = f32_values[i];
    YG_CHECK(yg_safetensors_get(f, "f32", &got));
    YG_EXPECT_CLOSE(got, ((int64_t[]){2, 3}), 2, expect, 0, 0);
    yg_release(got);
}

/* ---- round trips ---- */

static void test_round_trip_keeps_every_dtype_shape_and_value(void **state) {
    (void)state;
    char path[512];
    yg_tensor *t[N_SHARED];
    yg_safetensors *f = NULL;
    const char *keys[] = {"format", "note"}, *values[] = {"pt", "ünïcödé, \"quoted\""};
    tmp_path(path, sizeof path, "round_trip");
    make_shared(t);
    YG_CHECK(yg_safetensors_save(path, shared_names, t, N_SHARED, keys, values, 2));
    release_all(t, N_SHARED);

    YG_CHECK(yg_safetensors_open(path, &f));
    assert_int_equal(yg_safetensors_count(f), N_SHARED);
    /* Listed by name, bytewise. */
    for (int64_t i = 1; i < N_SHARED; i++)
        assert_true(strcmp(yg_safetensors_name(f, i - 1), yg_safetensors_name(f, i)) < 0);
    assert_null(yg_safetensors_name(f, N_SHARED));
    assert_null(yg_safetensors_name(f, -1));
    expect_shared(f);

    yg_safetensors_info info;
    YG_CHECK(yg_safetensors_info_of(f, "i32", &info));
    assert_string_equal(info.dtype_name, "I32");
    assert_true(info.dtype_supported);
    assert_int_equal(info.dtype, YG_INT32);
    assert_int_equal(info.ndim, 2);
    assert_int_equal(info.sizes[0], 3);
    assert_int_equal(info.sizes[1], 2);
    assert_int_equal(info.numel, 6);
    assert_int_equal(info.nbytes, 24);
    YG_CHECK(yg_safetensors_info_of(f, "scalar", &info));
    assert_int_equal(info.ndim, 0);
    assert_int_equal(info.numel, 1);
    YG_CHECK(yg_safetensors_info_of(f, "empty", &info));
    assert_int_equal(info.numel, 0);
    assert_int_equal(info.nbytes, 0);

    assert_int_equal(yg_safetensors_metadata_count(f), 2);
    assert_string_equal(yg_safetensors_metadata_key(f, 0), "format");
    assert_string_equal(yg_safetensors_metadata(f, "format"), "pt");
    assert_string_equal(yg_safetensors_metadata(f, "note"), "ünïcödé, \"quoted\"");
    assert_null(yg_safetensors_metadata(f, "absent"));
    yg_safetensors_close(f);
    remove(path);
}

static void test_saved_header_is_padded_and_data_ordered_by_alignment(void **state) {
    (void)state;
    char path[512];
    yg_tensor *t[N_SHARED];
    tmp_path(path, sizeof path, "layout");
    make_shared(t);
    YG_CHECK(yg_safetensors_save(path, shared_names, t, N_SHARED, NULL, NULL, 0));
    release_all(t, N_SHARED);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    uint8_t len8[8];
    assert_int_equal(fread(len8, 1, 8, fp), 8);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = (n << 8) | len8[i];
    assert_int_equal(n % 8, 0);
    char *header = calloc(1, n + 1);
    assert_int_equal(fread(header, 1, n, fp), n);
    fclose(fp);
    /* Compact JSON, no metadata key, data by element size then name:
     * f64, i64 (8 bytes), then f32, "nested...", i32, "scalar"... */
    assert_null(strstr(header, "__metadata__"));
    assert_true(
        strncmp(header,
                "{\"f64\":{\"dtype\":\"F64\",\"shape\":[2,2],\"data_offsets\":[0,32]},"
                "\"i64\":{\"dtype\":\"I64\",\"shape\":[3],\"data_offsets\":[32,56]},"
                "\"empty\":",
                strlen("{\"f64\":{\"dtype\":\"F64\",\"shape\":[2,2],\"data_offsets\":[0,32]},"
                       "\"i64\":{\"dtype\":\"I64\",\"shape\":[3],\"data_offsets\":[32,56]},"
                       "\"empty\":")) == 0);
    assert_non_null(strstr(header, "\"scalar\":{\"dtype\":\"F32\",\"shape\":[],"));
    size_t end = strlen(header);
    while (end > 0 && header[end - 1] == ' ')
        end--;
    assert_true(end > 0 && header[end - 1] == '}');
    assert_true(n - end < 8);
    free(header);
    remove(path);
}

static void test_save_of_nothing_makes_a_file_that_opens(void **state) {
    (void)state;
    char path[512];
    yg_safetensors *f = NULL;
    tmp_path(path, sizeof path, "nothing");
    YG_CHECK(yg_safetensors_save(path, NULL, NULL, 0, NULL, NULL, 0));
    YG_CHECK(yg_safetensors_open(path, &f));
    assert_int_equal(yg_safetensors_count(f), 0);
    assert_int_equal(yg_safetensors_metadata_count(f), 0);
    yg_safetensors_close(f);
    remove(path);
}

static void test_save_replaces_a_file_and_leaves_no_temporary(void **state) {
    (void)state;
    char path[512], dir[256];
    yg_tensor *a = from_data(f64_values, (int64_t[]){4}, 1, YG_FLOAT64), *got = NULL;
    yg_safetensors *f = NULL;
    const char *name = "a";
    snprintf(dir,
             sizeof dir,
             "%s/yg_safetensors_dir_%ld",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (long)getpid());
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    write_bytes(path, "old contents", 12);
    YG_CHECK(yg_safetensors_save(path, &name, &a, 1, NULL, NULL, 0));
    YG_CHECK(yg_safetensors_open(path, &f));
    YG_CHECK(yg_safetensors_get(f, "a", &got));
    expect_same(got, a);
    yg_release(got);
    yg_safetensors_close(f);
    /* A failing save (a name given twice) leaves the file as it was. */
    const char *twice[] = {"a", "a"};
    yg_tensor *two[] = {a, a};
    YG_EXPECT_ERROR(yg_safetensors_save(path, twice, two, 2, NULL, NULL, 0),
                    YG_ERR_INVALID_ARGUMENT,
                    "safetensors_save: ",
                    "tensor name \"a\"",
                    "given twice");
    YG_CHECK(yg_safetensors_open(path, &f));
    assert_int_equal(yg_safetensors_count(f), 1);
    yg_safetensors_close(f);
    /* The folder holds the file and nothing else: no temporary left. */
    assert_int_equal(remove(path), 0);
    assert_int_equal(rmdir(dir), 0);
    yg_release(a);
}

static void test_read_into_fills_tensors_of_any_layout(void **state) {
    (void)state;
    char path[512];
    yg_tensor *t[N_SHARED];
    yg_safetensors *f = NULL;
    tmp_path(path, sizeof path, "read_into");
    make_shared(t);
    YG_CHECK(yg_safetensors_save(path, shared_names, t, N_SHARED, NULL, NULL, 0));
    YG_CHECK(yg_safetensors_open(path, &f));

    /* Contiguous, a leaf that requires grad (loading parameters). */
    yg_tensor *param = NULL;
    YG_CHECK(yg_tensor_zeros((int64_t[]){2, 2}, 2, YG_FLOAT64, &param));
    YG_CHECK(yg_tensor_set_requires_grad(param, true));
    YG_CHECK(yg_safetensors_read_into(f, "f64", param));
    expect_same(param, t[1]);
    assert_true(yg_tensor_requires_grad(param));
    yg_release(param);

    /* A transposed (non-contiguous) destination of the file's shape. */
    yg_tensor *base = NULL, *view = NULL;
    YG_CHECK(yg_tensor_zeros((int64_t[]){3, 2}, 2, YG_FLOAT32, &base));
    YG_CHECK(yg_transpose(base, 0, 1, &view));
    YG_CHECK(yg_safetensors_read_into(f, "f32", view));
    double expect[6];
    for (int i = 0; i < 6; i++)
        expect[i] = f32_values[i];
    YG_EXPECT_CLOSE(view, ((int64_t[]){2, 3}), 2, expect, 0, 0);
    yg_release(view);
    yg_release(base);

    /* 0-d and empty. */
    yg_tensor *s = NULL, *e = NULL;
    YG_CHECK(yg_tensor_zeros(NULL, 0, YG_FLOAT32, &s));
    YG_CHECK(yg_safetensors_read_into(f, "scalar", s));
    assert_true(*(float *)yg_tensor_data(s) == scalar_value);
    YG_CHECK(yg_tensor_zeros((int64_t[]){0, 4}, 2, YG_FLOAT32, &e));
    YG_CHECK(yg_safetensors_read_into(f, "empty", e));
    yg_release(s);
    yg_release(e);

    yg_safetensors_close(f);
    release_all(t, N_SHARED);
    remove(path);
}

/* GPU tensors are saved through a host copy and read into through one
 * (skipped, exit 77, without a GPU; labelled cuda). */
static void test_cuda_tensors_save_and_read_into(void **state) {
    (void)state;
    char path[512];
    yg_tensor *host = NULL, *dev = NULL, *view = NULL, *back = NULL, *base = NULL;
    yg_safetensors *f = NULL;
    yg_test_need_gpu();
    tmp_path(path, sizeof path, "cuda");
    static const float src[6] = {-1.0f, 0.5f, -0.5f, 1.0f, 0.0f, 1.5f};
    host = from_data(src, (int64_t[]){3, 2}, 2, YG_FLOAT32);
    YG_CHECK(yg_tensor_to_device(host, YG_CUDA, 0, &dev));
    YG_CHECK(yg_transpose(dev, 0, 1, &view)); /* non-contiguous, on the GPU */
    const char *name = "w";
    YG_CHECK(yg_safetensors_save(path, &name, &view, 1, NULL, NULL, 0));
    YG_CHECK(yg_safetensors_open(path, &f));
    yg_tensor *got = NULL;
    YG_CHECK(yg_safetensors_get(f, "w", &got));
    double expect[6];
    for (int i = 0; i < 6; i++)
        expect[i] = f32_values[i];
    YG_EXPECT_CLOSE(got, ((int64_t[]){2, 3}), 2, expect, 0, 0);
    yg_release(got);
    /* Into a contiguous GPU tensor and into a transposed GPU view. */
    yg_tensor *zeros = NULL;
    YG_CHECK(yg_tensor_zeros((int64_t[]){2, 3}, 2, YG_FLOAT32, &zeros));
    YG_CHECK(yg_tensor_to_device(zeros, YG_CUDA, 0, &back));
    YG_CHECK(yg_safetensors_read_into(f, "w", back));
    YG_EXPECT_CLOSE(back, ((int64_t[]){2, 3}), 2, expect, 0, 0);
    yg_release(back);
    YG_CHECK(yg_tensor_zeros((int64_t[]){3, 2}, 2, YG_FLOAT32, &back));
    YG_CHECK(yg_tensor_to_device(back, YG_CUDA, 0, &base));
    yg_release(back);
    YG_CHECK(yg_transpose(base, 0, 1, &back));
    YG_CHECK(yg_safetensors_read_into(f, "w", back));
    YG_EXPECT_CLOSE(back, ((int64_t[]){2, 3}), 2, expect, 0, 0);
    yg_release(back);
    yg_release(base);
    yg_release(zeros);
    yg_safetensors_close(f);
    yg_release(view);
    yg_release(dev);
    yg_release(host);
    remove(path);
}

/* ---- the independent writer and reader ---- */

static void test_file_from_numpy_writer_loads_with_right_values(void **state) {
    (void)state;
    const char *path = getenv("YG_SAFETENSORS_NUMPY_FILE");
    yg_safetensors *f = NULL;
    yg_tensor *u8 = (yg_tensor *)&f;
    if (path == NULL)
        fail_msg("YG_SAFETENSORS_NUMPY_FILE is not set (the CTest fixture "
                 "safetensors.numpy_writer_writes_a_file sets it)");
    YG_CHECK(yg_safetensors_open(path, &f));
    assert_int_equal(yg_safetensors_count(f), N_SHARED + 1);
    expect_shared(f);
    assert_string_equal(yg_safetensors_metadata(f, "format"), "np");
    assert_string_equal(yg_safetensors_metadata(f, "written by"), "numpy_safetensors.py");
    /* Its U8 tensor is listed and described, and refused when read. */
    yg_safetensors_info info;
    YG_CHECK(yg_safetensors_info_of(f, "u8", &info));
    assert_string_equal(info.dtype_name, "U8");
    assert_false(info.dtype_supported);
    assert_int_equal(info.nbytes, 3);
    YG_EXPECT_ERROR(yg_safetensors_get(f, "u8", &u8),
                    YG_ERR_DTYPE,
                    "safetensors_get: ",
                    "tensor \"u8\" has dtype U8, which yagrad does not have",
                    "F32");
    assert_null(u8);
    yg_safetensors_close(f);
}

static void test_file_for_numpy_reader_is_written(void **state) {
    (void)state;
    const char *path = getenv("YG_SAFETENSORS_YAGRAD_FILE");
    yg_tensor *t[N_SHARED];
    const char *keys[] = {"format", "written by"}, *values[] = {"np", "numpy_safetensors.py"};
    if (path == NULL)
        fail_msg("YG_SAFETENSORS_YAGRAD_FILE is not set (CTest sets it)");
    make_shared(t);
    YG_CHECK(yg_safetensors_save(path, shared_names, t, N_SHARED, keys, values, 2));
    release_all(t, N_SHARED);
}

/* ---- malformed files ---- */

#define T_A "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}"

static void test_truncated_files_are_refused(void **state) {
    (void)state;
    size_t len;
    uint8_t *b = make_file("{" T_A "}", UINT64_MAX, 8, &len);
    /* Cut in the data: tensor a runs past the end. */
    YG_EXPECT_ERROR(refuse(b, len - 3),
                    YG_ERR_INVALID_ARGUMENT,
                    "tensor \"a\": data_offsets [0, 8] run past the end of the data (5 bytes");
    /* Cut in the header. */
    YG_EXPECT_ERROR(refuse(b, 20),
                    YG_ERR_INVALID_ARGUMENT,
                    "header length 54 runs past the end "
                    "of the file (20 bytes");
    /* Cut in the length. */
    YG_EXPECT_ERROR(refuse(b, 5),
                    YG_ERR_INVALID_ARGUMENT,
                    "5 bytes, too short for the 8-byte "
                    "header length");
    YG_EXPECT_ERROR(refuse(b, 0), YG_ERR_INVALID_ARGUMENT, "0 bytes, too short");
    free(b);
}

static void test_header_length_beyond_file_or_limit_is_refused(void **state) {
    (void)state;
    size_t len;
    uint8_t *b = make_file("{}", 1000, 0, &len);
    YG_EXPECT_ERROR(refuse(b, len),
                    YG_ERR_INVALID_ARGUMENT,
                    "header length 1000 runs past the end of the file (10 bytes");
    free(b);
    b = make_file("{}", 100000001, 0, &len);
    YG_EXPECT_ERROR(refuse(b, len),
                    YG_ERR_INVALID_ARGUMENT,
                    "header length 100000001 is over the limit of 100000000 bytes");
    free(b);
    b = make_file("{}", UINT64_MAX - 1, 0, &len);
    YG_EXPECT_ERROR(refuse(b, len), YG_ERR_INVALID_ARGUMENT, "is over the limit");
    free(b);
}

static void test_bad_json_is_refused_with_its_position(void **state) {
    (void)state;
    YG_EXPECT_ERROR(refuse_header("{\"a\": {\"dtype\": \"F32\",", 0),
                    YG_ERR_INVALID_ARGUMENT,
                    "header is not valid JSON: ",
                    "(line 1, column ");
    YG_EXPECT_ERROR(refuse_header("{\"a\": 1} trailing", 0),
                    YG_ERR_INVALID_ARGUMENT,
                    "header is not valid JSON: end of file expected");
    YG_EXPECT_ERROR(refuse_header("{\"\xff\": 1}", 0),
                    YG_ERR_INVALID_ARGUMENT,
                    "header is not valid JSON: unable to decode byte 0xff");
    YG_EXPECT_ERROR(refuse_header("", 0), YG_ERR_INVALID_ARGUMENT, "header is not valid JSON");
}

static void test_header_that_is_not_an_object_is_refused(void **state) {
    (void)state;
    YG_EXPECT_ERROR(refuse_header("[1, 2]", 0),
                    YG_ERR_INVALID_ARGUMENT,
                    "header is not a JSON object (it is an array)");
    YG_EXPECT_ERROR(refuse_header("{\"a\": [1]}", 0),
                    YG_ERR_INVALID_ARGUMENT,
                    "tensor \"a\": entry is not an object");
    YG_EXPECT_ERROR(refuse_header("{\"__metadata__\": [1]}", 0),
                    YG_ERR_INVALID_ARGUMENT,
                    "\"__metadata__\" is not an object");
    YG_EXPECT_ERROR(refuse_header("{\"__metadata__\": {\"k\": 1}}", 0),
                    YG_ERR_INVALID_ARGUMENT,
                    "\"__metadata__\" entry \"k\" is not a string");
}

static void test_unknown_dtype_is_refused(void **state) {
    (void)state;
    YG_EXPECT_ERROR(
        refuse_header("{\"w\":{\"dtype\":\"F33\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4),
        YG_ERR_INVALID_ARGUMENT,
        "tensor \"w\": unknown dtype \"F33\" (the format's dtypes: ");
    YG_EXPECT_ERROR(refuse_header("{\"w\":{\"dtype\":4,\"shape\":[1],\"data_offsets\":[0,4]}}", 4),
                    YG_ERR_INVALID_ARGUMENT,
                    "tensor \"w\": \"dtype\" is not a string");
    YG_EXPECT_ERROR(refuse_header("{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4),
                    YG_ERR_INVALID_ARGUMENT,
                    "tensor \"w\": no \"dtype\"");
}

static void test_shape_that_does_not_match_the_bytes_is_refused(void **state) {
    (void)state;
    YG_EXPECT_ERROR(
        refuse_header("{\"w\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,20]}}", 20),
        YG_ERR_INVALID_ARGUMENT,
        "tensor \"w\": data_offsets [0, 20] hold 20 bytes, but shape [2, 3] of F32 needs 24");
    YG_EXPECT_ERROR(
        refuse_header("{\"w\":{\"dtype\":\"F32\",\"shape\":[2,-3],\"data_offsets\":[0,24]}}", 24),
        YG_ERR_INVALID_ARGUMENT,
        "tensor \"w\": shape entry 1 is not an integer >= 0");
    YG_EXPECT_ERROR(
        refuse_header("{\"w\":{\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,8]}}", 8),
        YG_ERR_INVALID_ARGUMENT,
        "tensor \"w\": shape entry 0 is not an integer >= 0");
    YG_EXPECT_ERROR(refuse_header("{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,8]}}", 8),
                    YG_ERR_INVALID_ARGUMENT,
                    "tensor \"w\": no \"shape\"");
    YG_EXPECT_ERROR(refuse_header("{\"w\":{\"dtype\":\"F64\",\"shape\":[4294967296,4294967296],"
                                  "\"data_offsets\":[0,8]}}",
                                  8),
                    YG_ERR_INVALID_ARGUMENT,
                    "tensor \"w\": shape [4294967296, 4294967296] has more than 2^63 elements");
    YG_EXPECT_ERROR(refuse_header("{\"w\":{\"dtype\":\"F64\",\"shape\":[4294967296,1073741824],"
                                  "\"data_offsets\":[0,8]}}",
                                  8),
                    YG_ERR_INVALID_ARGUMENT,
                    "tensor \"w\": shape [4294967296, 1073741824] of F64 "
                    "is not a whole number of bytes below 2^64");
    YG_EXPECT_ERROR(
        refuse_header("{\"w\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,1]}}", 1),
        YG_ERR_INVALID_ARGUMENT,
        "tensor \"w\": shape [3] of F4 is not a whole number of bytes");
}

static void test_offsets_out_of_range_are_refused(void **state) {
    (void)state;
    YG_EXPECT_ERROR(refuse_header("{" T_A "}", 4),
                    YG_ERR_INVALID_ARGUMENT,
                    "tensor \"a\": data_offsets [0, 8] run past the end of the data (4 bytes after "
                    "the header)");
    YG_EXPECT_ERROR(
        refuse_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,4]}}", 8),
        YG_ERR_INVALID_ARGUMENT,
        "tensor \"a\": data_offsets [8, 4] end before they begin");
    YG_EXPECT_ERROR(
        refuse_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[-8,0]}}", 8),
        YG_ERR_INVALID_ARGUMENT,
        "tensor \"a\": \"data_offsets\" is not [begin, end] of integers >= 0");
    YG_EXPECT_ERROR(
        refuse_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8,16]}}", 8),
        YG_ERR_INVALID_ARGUMENT,
        "tensor \"a\": \"data_offsets\" is not [begin, end] of integers >= 0");
    YG_EXPECT_ERROR(refuse_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,"
                                  "99999999999999999999]}}",
                                  8),
                    YG_ERR_INVALID_ARGUMENT,
                    "header is not valid JSON: too big integer");
    YG_EXPECT_ERROR(refuse_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8),
                    YG_ERR_INVALID_ARGUMENT,
                    "tensor \"a\": no \"data_offsets\"");
}

static void test_overlapping_tensors_are_refused(void **state) {
    (void)state;
    YG_EXPECT_ERROR(
        refuse_header("{" T_A ",\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                      12),
        YG_ERR_INVALID_ARGUMENT,
        "tensor \"b\": data_offsets [4, 12] overlap tensor \"a\" [0, 8]");
    /* The same bytes twice. */
    YG_EXPECT_ERROR(
        refuse_header("{" T_A ",\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
                      8),
        YG_ERR_INVALID_ARGUMENT,
        "tensor \"b\": data_offsets [0, 8] overlap tensor \"a\" [0, 8]");
}

static void test_holes_and_bytes_after_the_tensors_are_refused(void **state) {
    (void)state;
    YG_EXPECT_ERROR(
        refuse_header("{" T_A ",\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[12,16]}}",
                      16),
        YG_ERR_INVALID_ARGUMENT,
        "tensor \"b\": data_offsets [12, 16] leave a hole: bytes [8, 12) of the data belong to no "
        "tensor");
    YG_EXPECT_ERROR(
        refuse_header("{\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8),
        YG_ERR_INVALID_ARGUMENT,
        "tensor \"b\": data_offsets [4, 8] leave a hole: bytes [0, 4)");
    YG_EXPECT_ERROR(
        refuse_header("{" T_A "}", 12),
        YG_ERR_INVALID_ARGUMENT,
        "the data is 12 bytes, but the last tensor, \"a\", ends at 8: the 4 bytes after "
        "it belong to no tensor");
    YG_EXPECT_ERROR(refuse_header("{}", 3),
                    YG_ERR_INVALID_ARGUMENT,
                    "the header lists no tensor, but 3 bytes of data follow it");
}

static void test_duplicate_names_are_refused(void **state) {
    (void)state;
    YG_EXPECT_ERROR(refuse_header("{" T_A "," T_A "}", 8),
                    YG_ERR_INVALID_ARGUMENT,
                    "header: duplicate key \"a\" (a tensor name or a field given twice) at line 1");
    YG_EXPECT_ERROR(refuse_header("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[2],"
                                  "\"data_offsets\":[0,8]}}",
                                  8),
                    YG_ERR_INVALID_ARGUMENT,
                    "header: duplicate key \"dtype\"");
}

static void test_empty_tensors_may_share_an_offset(void **state) {
    (void)state;
    size_t len;
    yg_safetensors *f = NULL;
    uint8_t *b = make_file("{\"e1\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,8]},"
                           "\"e0\":{\"dtype\":\"I64\",\"shape\":[0,3],\"data_offsets\":[0,0]}," T_A
                           ",\"e2\":{\"dtype\":\"F32\",\"shape\":[4,0],\"data_offsets\":[8,8]}}",
                           UINT64_MAX,
                           8,
                           &len);
    YG_CHECK(yg_safetensors_open_buffer(b, len, &f));
    assert_int_equal(yg_safetensors_count(f), 4);
    assert_string_equal(yg_safetensors_name(f, 0), "a");
    yg_tensor *e = NULL;
    YG_CHECK(yg_safetensors_get(f, "e0", &e));
    assert_int_equal(yg_tensor_numel(e), 0);
    assert_int_equal(yg_tensor_size(e, 1), 3);
    yg_release(e);
    yg_safetensors_close(f);
    free(b);
}

static void test_bool_bytes_other_than_zero_read_as_true(void **state) {
    (void)state;
    size_t len;
    yg_safetensors *f = NULL;
    yg_tensor *t = NULL;
    uint8_t *b = make_file(
        "{\"m\":{\"dtype\":\"BOOL\",\"shape\":[3],\"data_offsets\":[0,3]}}", UINT64_MAX, 3, &len);
    b[len - 3] = 0;
    b[len - 2] = 2;
    b[len - 1] = 255;
    YG_CHECK(yg_safetensors_open_buffer(b, len, &f));
    YG_CHECK(yg_safetensors_get(f, "m", &t));
    const uint8_t *v = yg_tensor_data(t);
    assert_int_equal(v[0], 0);
    assert_int_equal(v[1], 1);
    assert_int_equal(v[2], 1);
    yg_release(t);
    yg_safetensors_close(f);
    free(b);
}

static void test_more_dims_than_yagrad_has_open_but_are_refused_when_read(void **state) {
    (void)state;
    size_t len;
    yg_safetensors *f = NULL;
    yg_tensor *t = (yg_tensor *)&f;
    uint8_t *b = make_file("{\"deep\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],"
                           "\"data_offsets\":[0,4]}}",
                           UINT64_MAX,
                           4,
                           &len);
    YG_CHECK(yg_safetensors_open_buffer(b, len, &f));
    YG_EXPECT_ERROR(yg_safetensors_get(f, "deep", &t),
                    YG_ERR_SHAPE,
                    "safetensors_get: buffer: tensor \"deep\" has 9 dims; yagrad tensors have at "
                    "most 8");
    assert_null(t);
    yg_safetensors_close(f);
    free(b);
    /* Empty, but with strides no int64 holds: listed, refused when read. */
    b = make_file("{\"huge\":{\"dtype\":\"F32\",\"shape\":[0,4611686018427387904,4],"
                  "\"data_offsets\":[0,0]}}",
                  UINT64_MAX,
                  0,
                  &len);
    YG_CHECK(yg_safetensors_open_buffer(b, len, &f));
    t = (yg_tensor *)&f;
    YG_EXPECT_ERROR(
        yg_safetensors_get(f, "huge", &t), YG_ERR_SHAPE, "safetensors_get: ", "overflow");
    assert_null(t);
    yg_safetensors_close(f);
    free(b);
}

static void test_read_into_refuses_another_shape_or_dtype_naming_both(void **state) {
    (void)state;
    size_t len;
    yg_safetensors *f = NULL;
    yg_tensor *dst = NULL, *got = (yg_tensor *)&f;
    uint8_t *b = make_file("{\"w\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]}}",
                           UINT64_MAX,
                           24,
                           &len);
    YG_CHECK(yg_safetensors_open_buffer(b, len, &f));

    YG_CHECK(yg_tensor_full((int64_t[]){3, 2}, 2, 9.0, YG_FLOAT32, &dst));
    YG_EXPECT_ERROR(yg_safetensors_read_into(f, "w", dst),
                    YG_ERR_SHAPE,
                    "safetensors_read_into: buffer: tensor \"w\" is [2, 3] in the file, but dst "
                    "is [3, 2]");
    /* Nothing written. */
    double nines[6] = {9, 9, 9, 9, 9, 9};
    YG_EXPECT_CLOSE(dst, ((int64_t[]){3, 2}), 2, nines, 0, 0);
    yg_release(dst);

    YG_CHECK(yg_tensor_full((int64_t[]){2, 3}, 2, 9.0, YG_FLOAT64, &dst));
    YG_EXPECT_ERROR(yg_safetensors_read_into(f, "w", dst),
                    YG_ERR_DTYPE,
                    "safetensors_read_into: buffer: tensor \"w\" is F32 (float32) in the file, but "
                    "dst is float64");
    YG_EXPECT_CLOSE(dst, ((int64_t[]){2, 3}), 2, nines, 0, 0);
    YG_EXPECT_ERROR(yg_safetensors_read_into(f, "missing", dst),
                    YG_ERR_INDEX,
                    "safetensors_read_into: no tensor \"missing\" in buffer (1 tensor)");
    YG_EXPECT_ERROR(yg_safetensors_read_into(f, "w", NULL), YG_ERR_INVALID_ARGUMENT, "dst");
    yg_release(dst);

    YG_EXPECT_ERROR(yg_safetensors_get(f, "missing", &got),
                    YG_ERR_INDEX,
                    "safetensors_get: no tensor \"missing\" in buffer");
    assert_null(got);
    yg_safetensors_close(f);
    free(b);
}

static void test_save_refuses_bad_arguments_naming_the_entry(void **state) {
    (void)state;
    char path[512];
    yg_tensor *a = from_data(f64_values, (int64_t[]){4}, 1, YG_FLOAT64);
    tmp_path(path, sizeof path, "bad_save");
    const char *meta_name[] = {"__metadata__"};
    YG_EXPECT_ERROR(yg_safetensors_save(path, meta_name, &a, 1, NULL, NULL, 0),
                    YG_ERR_INVALID_ARGUMENT,
                    "tensors[0] is named \"__metadata__\"");
    const char *names[] = {"a", "b"};
    yg_tensor *with_null[] = {a, NULL};
    YG_EXPECT_ERROR(yg_safetensors_save(path, names, with_null, 2, NULL, NULL, 0),
                    YG_ERR_INVALID_ARGUMENT,
                    "tensors[1] (\"b\") is NULL");
    const char *bad_utf8[] = {"caf\xe9"};
    YG_EXPECT_ERROR(yg_safetensors_save(path, bad_utf8, &a, 1, NULL, NULL, 0),
                    YG_ERR_INVALID_ARGUMENT,
                    "tensor name \"caf\xe9\" is not valid UTF-8");
    const char *keys[] = {"k", "k"}, *values[] = {"1", "2"};
    YG_EXPECT_ERROR(yg_safetensors_save(path, names, &a, 1, keys, values, 2),
                    YG_ERR_INVALID_ARGUMENT,
                    "metadata key \"k\" is given twice");
    YG_EXPECT_ERROR(yg_safetensors_save(path, names, &a, -1, NULL, NULL, 0),
                    YG_ERR_INVALID_ARGUMENT,
                    "negative length");
    YG_EXPECT_ERROR(
        yg_safetensors_save("/nonexistent-yagrad-dir/x.safetensors", names, &a, 1, NULL, NULL, 0),
        YG_ERR_IO,
        "safetensors_save: cannot create '/nonexistent-yagrad-dir/x.");
    struct stat sb;
    assert_int_not_equal(stat(path, &sb), 0); /* nothing was written */
    yg_release(a);
}

static void test_open_refuses_missing_files_and_null_arguments(void **state) {
    (void)state;
    yg_safetensors *f = (yg_safetensors *)&f;
    YG_EXPECT_ERROR(yg_safetensors_open("/nonexistent-yagrad-dir/x.safetensors", &f),
                    YG_ERR_IO,
                    "safetensors_open: '/nonexistent-yagrad-dir/x.safetensors': cannot open: ");
    assert_null(f);
    YG_EXPECT_ERROR(yg_safetensors_open("/tmp", &f), YG_ERR_IO, "not a regular file");
    /* A FIFO is refused at once, not waited on. */
    char fifo[512];
    tmp_path(fifo, sizeof fifo, "fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    YG_EXPECT_ERROR(yg_safetensors_open(fifo, &f), YG_ERR_IO, "not a regular file");
    remove(fifo);
    YG_EXPECT_ERROR(yg_safetensors_open(NULL, &f), YG_ERR_INVALID_ARGUMENT, "path is NULL");
    YG_EXPECT_ERROR(
        yg_safetensors_open_buffer(NULL, 8, &f), YG_ERR_INVALID_ARGUMENT, "data is NULL");
    YG_EXPECT_ERROR(
        yg_safetensors_open_buffer(NULL, 0, &f), YG_ERR_INVALID_ARGUMENT, "0 bytes, too short");
    /* The getters' neutral values, and a NULL-safe close. */
    assert_int_equal(yg_safetensors_count(NULL), 0);
    assert_null(yg_safetensors_name(NULL, 0));
    assert_null(yg_safetensors_metadata(NULL, "k"));
    yg_safetensors_close(NULL);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_keeps_every_dtype_shape_and_value),
        cmocka_unit_test(test_saved_header_is_padded_and_data_ordered_by_alignment),
        cmocka_unit_test(test_save_of_nothing_makes_a_file_that_opens),
        cmocka_unit_test(test_save_replaces_a_file_and_leaves_no_temporary),
        cmocka_unit_test(test_read_into_fills_tensors_of_any_layout),
        cmocka_unit_test(test_cuda_tensors_save_and_read_into),
        cmocka_unit_test(test_file_from_numpy_writer_loads_with_right_values),
        cmocka_unit_test(test_file_for_numpy_reader_is_written),
        cmocka_unit_test(test_truncated_files_are_refused),
        cmocka_unit_test(test_header_length_beyond_file_or_limit_is_refused),
        cmocka_unit_test(test_bad_json_is_refused_with_its_position),
        cmocka_unit_test(test_header_that_is_not_an_object_is_refused),
        cmocka_unit_test(test_unknown_dtype_is_refused),
        cmocka_unit_test(test_shape_that_does_not_match_the_bytes_is_refused),
        cmocka_unit_test(test_offsets_out_of_range_are_refused),
        cmocka_unit_test(test_overlapping_tensors_are_refused),
        cmocka_unit_test(test_holes_and_bytes_after_the_tensors_are_refused),
        cmocka_unit_test(test_duplicate_names_are_refused),
        cmocka_unit_test(test_empty_tensors_may_share_an_offset),
        cmocka_unit_test(test_bool_bytes_other_than_zero_read_as_true),
        cmocka_unit_test(test_more_dims_than_yagrad_has_open_but_are_refused_when_read),
        cmocka_unit_test(test_read_into_refuses_another_shape_or_dtype_naming_both),
        cmocka_unit_test(test_save_refuses_bad_arguments_naming_the_entry),
        cmocka_unit_test(test_open_refuses_missing_files_and_null_arguments),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
