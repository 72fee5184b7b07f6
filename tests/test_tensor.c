/*
 * test_tensor.c - tensor creation, inspection, reference counting and the
 * caching allocator.
 */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static void test_from_data_copies_values_row_major(void **state)
{
    const int64_t sizes[] = {2, 3};
    const float data[] = {1, 2, 3, 4, 5, 6};
    const double expected[] = {1, 2, 3, 4, 5, 6};
    yg_tensor *t = NULL;
    (void)state;
    YG_CHECK(yg_tensor_from_data(data, sizes, 2, YG_FLOAT32, &t));
    assert_int_equal(yg_tensor_ndim(t), 2);
    assert_int_equal(yg_tensor_numel(t), 6);
    assert_int_equal(yg_tensor_strides(t)[0], 3);
    assert_true(yg_tensor_is_contiguous(t));
    assert_int_equal(yg_tensor_dtype(t), YG_FLOAT32);
    YG_EXPECT_CLOSE(t, sizes, 2, expected, 0, 0);
    yg_release(t);
}

static void test_full_and_zeros_fill_every_element(void **state)
{
    const int64_t sizes[] = {4};
    const double sevens[] = {7, 7, 7, 7}, zeros[] = {0, 0, 0, 0};
    yg_tensor *a = NULL, *b = NULL;
    (void)state;
    YG_CHECK(yg_tensor_full(sizes, 1, 7.0, YG_INT64, &a));
    YG_CHECK(yg_tensor_zeros(sizes, 1, YG_FLOAT64, &b));
    YG_EXPECT_CLOSE(a, sizes, 1, sevens, 0, 0);
    YG_EXPECT_CLOSE(b, sizes, 1, zeros, 0, 0);
    yg_release(a);
    yg_release(b);
}

static void test_empty_rejects_negative_size(void **state)
{
    const int64_t sizes[] = {2, -1};
    yg_tensor *t = (yg_tensor *)0x1;
    (void)state;
    YG_EXPECT_ERROR(yg_tensor_empty(sizes, 2, YG_FLOAT32, &t), YG_ERR_SHAPE, "empty:",
                    "negative size -1 in size [2, -1]");
    assert_null(t);
}

static void test_empty_rejects_too_many_dims(void **state)
{
    const int64_t sizes[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    yg_tensor *t = NULL;
    (void)state;
    YG_EXPECT_ERROR(yg_tensor_empty(sizes, 9, YG_FLOAT32, &t), YG_ERR_SHAPE, "ndim 9");
    assert_null(t);
}

static void test_zero_dim_tensor_holds_one_element(void **state)
{
    yg_tensor *t = NULL;
    double v = 0;
    (void)state;
    YG_CHECK(yg_tensor_scalar(2.5, YG_FLOAT64, &t));
    assert_int_equal(yg_tensor_ndim(t), 0);
    assert_int_equal(yg_tensor_numel(t), 1);
    YG_CHECK(yg_tensor_item(t, &v));
    assert_true(v == 2.5);
    yg_release(t);
}

static void test_item_rejects_tensor_with_many_elements(void **state)
{
    const int64_t sizes[] = {2, 3};
    yg_tensor *t = NULL;
    double v = 1;
    (void)state;
    YG_CHECK(yg_tensor_zeros(sizes, 2, YG_FLOAT32, &t));
    YG_EXPECT_ERROR(yg_tensor_item(t, &v), YG_ERR_SHAPE, "item:", "[2, 3]");
    assert_true(v == 0);
    yg_release(t);
}

static void test_empty_tensor_has_no_elements(void **state)
{
    const int64_t sizes[] = {0, 3};
    yg_tensor *t = NULL;
    (void)state;
    YG_CHECK(yg_tensor_empty(sizes, 2, YG_FLOAT32, &t));
    assert_int_equal(yg_tensor_numel(t), 0);
    assert_true(yg_tensor_is_contiguous(t));
    yg_release(t);
}

static void test_release_and_getters_accept_null(void **state)
{
    (void)state;
    yg_release(NULL);
    assert_null(yg_retain(NULL));
    assert_int_equal(yg_tensor_numel(NULL), 0);
    assert_null(yg_tensor_sizes(NULL));
    assert_false(yg_tensor_requires_grad(NULL));
}

static void test_status_names_come_from_one_table(void **state)
{
    (void)state;
    assert_string_equal(yg_status_name(YG_OK), "OK");
    assert_string_equal(yg_status_name(YG_ERR_SHAPE), "ERR_SHAPE");
    assert_string_equal(yg_status_name((yg_status)999), "UNKNOWN");
    assert_string_equal(yg_status_message(YG_ERR_INTERNAL), "internal error (a bug in yagrad)");
}

/* With the cache on (the default) a freed block is handed out again; with
 * YG_ALLOC_CACHE=0 (the asan preset) none is kept to hand out. */
static void test_allocator_reuses_freed_blocks(void **state)
{
    const int64_t sizes[] = {1000};
    const char *env = getenv("YG_ALLOC_CACHE");
    bool caching = env == NULL || strcmp(env, "0") != 0;
    yg_allocator_stats before, after;
    yg_tensor *a = NULL, *b = NULL;
    (void)state;
    YG_CHECK(yg_tensor_empty(sizes, 1, YG_FLOAT32, &a));
    yg_release(a);
    yg_allocator_get_stats(&before);
    YG_CHECK(yg_tensor_empty(sizes, 1, YG_FLOAT32, &b));
    yg_allocator_get_stats(&after);
    assert_int_equal(after.num_cache_hits, before.num_cache_hits + (caching ? 1 : 0));
    yg_release(b);
    yg_allocator_empty_cache();
    yg_allocator_get_stats(&after);
    assert_int_equal(after.cached_bytes, 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_data_copies_values_row_major),
        cmocka_unit_test(test_full_and_zeros_fill_every_element),
        cmocka_unit_test(test_empty_rejects_negative_size),
        cmocka_unit_test(test_empty_rejects_too_many_dims),
        cmocka_unit_test(test_zero_dim_tensor_holds_one_element),
        cmocka_unit_test(test_item_rejects_tensor_with_many_elements),
        cmocka_unit_test(test_empty_tensor_has_no_elements),
        cmocka_unit_test(test_release_and_getters_accept_null),
        cmocka_unit_test(test_status_names_come_from_one_table),
        cmocka_unit_test(test_allocator_reuses_freed_blocks),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
