/*
 * test_version.c - yagrad/version.h: the version macros, yg_version() and
 * yg_build_info(), whose component words must agree with each
 * component's own predicate (yg_distributed_is_available,
 * yg_onnx_is_available, yg_conv_backend_available).
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

static void test_library_version_matches_the_headers(void **state) {
    (void)state;
    char expected[64];
    snprintf(expected, sizeof expected, "%d.%d.%d", YG_VERSION_MAJOR, YG_VERSION_MINOR,
             YG_VERSION_PATCH);
    assert_string_equal(YG_VERSION_STRING, expected);
    assert_string_equal(yg_version(), YG_VERSION_STRING);
    assert_int_equal(YG_VERSION_NUMBER,
                     YG_VERSION_MAJOR * 10000 + YG_VERSION_MINOR * 100 + YG_VERSION_PATCH);
}

/* " word" or " -word" must appear in the build line, as the predicate says. */
static void expect_component(const char *info, const char *word, bool built) {
    char with[32], without[32];
    snprintf(with, sizeof with, " %s", word);
    snprintf(without, sizeof without, " -%s", word);
    bool has_with = strstr(info, with) != NULL, has_without = strstr(info, without) != NULL;
    if (has_with != built || has_without == built)
        fail_msg("yg_build_info() is \"%s\", but %s is %s", info, word,
                 built ? "built" : "not built");
}

static void test_build_info_agrees_with_the_components(void **state) {
    (void)state;
    const char *info = yg_build_info();
    char prefix[64];
    snprintf(prefix, sizeof prefix, "yagrad %s: ", yg_version());
    assert_true(strncmp(info, prefix, strlen(prefix)) == 0);
    expect_component(info, "mpi", yg_distributed_is_available());
    expect_component(info, "onnx", yg_onnx_is_available());
    expect_component(info, "onednn", yg_conv_backend_available(YG_CONV_BACKEND_ONEDNN));
    /* nvrtc has no predicate of its own: yg_fuser_cuda_ptx says
     * YG_ERR_NOT_IMPLEMENTED without it (tests/test_jit_fuser.c). */
    assert_true(strstr(info, "nvrtc") != NULL);
    /* The CUDA backend: yg_cuda_check says "built without CUDA" without it
     * (with it, a machine may still have no device). */
    bool cuda_built = yg_cuda_check() == YG_OK || strstr(yg_last_error(), "built without") == NULL;
    expect_component(info, "cuda", cuda_built);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_library_version_matches_the_headers),
        cmocka_unit_test(test_build_info_agrees_with_the_components),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
