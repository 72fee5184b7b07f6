/*
 * test_onnx_passes.c - the exporter's graph passes (runtime/onnx/passes.h)
 * on IR text: each test gives a graph, runs one pass (then DCE, which
 * sweeps what the pass bypassed) and compares the printed result with
 * the expected graph; the must-not-fire cases expect their input back.
 */
#ifdef YG_WITHOUT_ONNX
/* Configured with -DYG_WITH_ONNX=OFF: nothing to test; CTest skips. */
#include <stdio.h>
int main(void);
int main(void) {
    puts("SKIP: built without ONNX (-DYG_WITH_ONNX=OFF)");
    return 77;
}
#else
#include "onnx/passes.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#define F(sizes) "Tensor(dtype=float32, sizes=" sizes ")"

typedef yg_status (*pass_fn)(yg_graph *g);

static char *printed(const yg_graph *g) {
    char *s = NULL;
    YG_CHECK(yg_graph_print(g, &s));
    return s;
}

/* Runs pass (and DCE) on `in` and asserts the result prints as `out`. */
static void expect_pass(pass_fn pass, const char *in, const char *out) {
    yg_graph *g = NULL, *want = NULL;
    YG_CHECK(yg_graph_parse(in, (int64_t)strlen(in), &g));
    YG_CHECK(yg_graph_parse(out, (int64_t)strlen(out), &want));
    YG_CHECK(pass(g));
    YG_CHECK(yg__onnx_eliminate_dead_code(g));
    YG_CHECK(yg_graph_lint(g));
    char *got = printed(g), *exp = printed(want);
    if (strcmp(got, exp) != 0)
        fail_msg("pass result:\n%s\nexpected:\n%s", got, exp);
    yg_string_release(got);
    yg_string_release(exp);
    yg_graph_release(g);
    yg_graph_release(want);
}

static void expect_unchanged(pass_fn pass, const char *in) {
    expect_pass(pass, in, in);
}

/* ---- broadcast fusion ---- */

static void test_broadcast_fusion_folds_an_expand_of_a_suffix_into_add(void **state) {
    (void)state;
    expect_pass(yg__onnx_fuse_broadcast,
                "graph(%x : " F("[4, 3]") ", %y : " F(
                    "[3]") "):\n"
                           "  %e : " F("[4, 3]") " = expand[size=[4, 3]](%y)\n"
                                                 "  %z : " F("[4, 3]") " = add[alpha=1](%x, %e)\n"
                                                                       "  return (%z)\n",
                "graph(%x : " F("[4, 3]") ", %y : " F(
                    "[3]") "):\n"
                           "  %z : " F("[4, 3]") " = add[alpha=1](%x, %y)\n"
                                                 "  return (%z)\n");
}

static void test_broadcast_fusion_folds_the_bias_expand_into_gemm_c(void **state) {
    (void)state;
    expect_pass(
        yg__onnx_fuse_broadcast,
        "graph(%b : " F("[5]") ", %a : " F("[3, 4]") ", %w : " F(
            "[4, 5]") "):\n"
                      "  %e : " F("[3, 5]") " = expand[size=[3, 5]](%b)\n"
                                            "  %z : " F(
                                                "[3, 5]") " = addmm[alpha=1, beta=1](%e, %a, %w)\n"
                                                          "  return (%z)\n",
        "graph(%b : " F("[5]") ", %a : " F("[3, 4]") ", %w : " F(
            "[4, 5]") "):\n"
                      "  %z : " F("[3, 5]") " = addmm[alpha=1, beta=1](%b, %a, %w)\n"
                                            "  return (%z)\n");
}

static void test_broadcast_fusion_must_not_fold_a_non_suffix_expand(void **state) {
    (void)state;
    /* [1, 3] is not a suffix of [4, 3] (the seed's rule), though ONNX
     * would broadcast it: the expand stays. */
    expect_unchanged(yg__onnx_fuse_broadcast,
                     "graph(%x : " F("[4, 3]") ", %y : " F(
                         "[1, 3]") "):\n"
                                   "  %e : " F("[4, 3]") " = expand[size=[4, 3]](%y)\n"
                                                         "  %z : " F("[4, 3]") " = mul(%x, %e)\n"
                                                                               "  return (%z)\n");
}

static void test_broadcast_fusion_must_not_fold_an_expand_that_sizes_the_result(void **state) {
    (void)state;
    /* add(x [3], y [3]) would be [3], not the [2, 3] the expand makes. */
    expect_unchanged(
        yg__onnx_fuse_broadcast,
        "graph(%x : " F("[3]") ", %y : " F(
            "[3]") "):\n"
                   "  %e : " F("[2, 3]") " = expand[size=[2, 3]](%y)\n"
                                         "  %z : " F("[2, 3]") " = add[alpha=1](%x, %e)\n"
                                                               "  return (%z)\n");
}

static void
test_broadcast_fusion_must_not_touch_unknown_sizes_or_non_broadcasting_ops(void **state) {
    (void)state;
    expect_unchanged(
        yg__onnx_fuse_broadcast,
        "graph(%x : " F("[4, 3]") ", %y : Tensor(dtype=float32)):\n"
                                  "  %e : " F("[4, 3]") " = expand[size=[4, 3]](%y)\n"
                                                        "  %z : " F(
                                                            "[4, 3]") " = add[alpha=1](%x, %e)\n"
                                                                      "  return (%z)\n");
    expect_unchanged(yg__onnx_fuse_broadcast,
                     "graph(%x : " F("[3, 4]") ", %y : " F(
                         "[4]") "):\n"
                                "  %e : " F("[4, 4]") " = expand[size=[4, 4]](%y)\n"
                                                      "  %z : " F("[3, 4]") " = mm(%x, %e)\n"
                                                                            "  return (%z)\n");
}

/* ---- peephole ---- */

static void test_peephole_removes_export_no_ops(void **state) {
    (void)state;
    expect_pass(
        yg__onnx_peephole,
        "graph(%x : " F(
            "[2, 3]") "):\n"
                      "  %a : " F(
                          "[2, 3]") " = expand[size=[2, 3]](%x)\n"
                                    "  %b : " F(
                                        "[2, 3]") " = view[size=[2, 3]](%a)\n"
                                                  "  %c : " F(
                                                      "[2, 3]") " = contiguous(%b)\n"
                                                                "  %d : " F(
                                                                    "[2, 3]") " = dropout[p=0.5, "
                                                                              "train=0](%c)\n"
                                                                              "  %e : " F(
                                                                                  "[2, 3]") " = "
                                                                                            "to."
                                                                                            "dtype["
                                                                                            "copy="
                                                                                            "0, "
                                                                                            "dtype="
                                                                                            "0](%d)"
                                                                                            "\n"
                                                                                            "  %f "
                                                                                            ": " F(
                                                                                                "[3"
                                                                                                ", "
                                                                                                "2"
                                                                                                "]") " = t(%e)\n"
                                                                                                     "  %g : " F(
                                                                                                         "[2, 3]") " = t(%f)\n"
                                                                                                                   "  %h : " F(
                                                                                                                       "[2, 3]") " = relu(%g)\n"
                                                                                                                                 "  return (%h)\n",
        "graph(%x : " F("[2, 3]") "):\n"
                                  "  %h : " F("[2, 3]") " = relu(%x)\n"
                                                        "  return (%h)\n");
}

static void test_peephole_must_not_remove_real_conversions_or_random_dropout(void **state) {
    (void)state;
    expect_unchanged(
        yg__onnx_peephole,
        "graph(%x : " F(
            "[2, 3]") "):\n"
                      "  %a : Tensor(dtype=float64, sizes=[2, 3]) = to.dtype[copy=0, dtype=1](%x)\n"
                      "  %b : Tensor(dtype=float64, sizes=[2, 3]) = dropout[p=0.5, train=1](%a)\n"
                      "  %c : Tensor(dtype=float64, sizes=[3, 2]) = view[size=[3, 2]](%b)\n"
                      "  return (%c)\n");
}

static void test_peephole_must_not_fire_in_graphs_with_side_effects(void **state) {
    (void)state;
    /* clone's result is written in place: replacing it by %x would make
     * the write reach the input. */
    expect_unchanged(
        yg__onnx_peephole,
        "graph(%x : " F("[2, 3]") ", %y : " F(
            "[2, 3]") "):\n"
                      "  %a : " F("[2, 3]") " = clone(%x)\n"
                                            "  %b : " F("[2, 3]") " = add_[alpha=1](%a, %y)\n"
                                                                  "  return (%b)\n");
}

static void test_peephole_folds_a_traced_through_linear_back_for_gemm(void **state) {
    (void)state;
    /* linear traced through its composite: t, matmul, add of the bias */
    expect_pass(
        yg__onnx_peephole,
        "graph(%x : " F("[2, 3]") ", %w : " F("[4, 3]") ", %b : " F(
            "[4]") "):\n"
                   "  %wt : " F(
                       "[3, 4]") " = t(%w)\n"
                                 "  %p : " F(
                                     "[2, 4]") " = matmul(%x, %wt)\n"
                                               "  %y : " F(
                                                   "[2, 4]") " = add[alpha=1](%p, %b)\n"
                                                             "  %z : " F(
                                                                 "[2, 4]") " = mm(%y, %wt)\n"
                                                                           "  return (%y)\n",
        "graph(%x : " F("[2, 3]") ", %w : " F("[4, 3]") ", %b : " F(
            "[4]") "):\n"
                   "  %y : " F("[2, 4]") " = linear(%x, %w, %b)\n"
                                         "  return (%y)\n");
}

static void test_peephole_must_not_fold_a_bias_that_is_not_one_per_output(void **state) {
    (void)state;
    /* a [2, 4] addend is not linear's bias: only the matmul folds */
    expect_pass(
        yg__onnx_peephole,
        "graph(%x : " F("[2, 3]") ", %w : " F("[4, 3]") ", %b : " F(
            "[2, 4]") "):\n"
                      "  %wt : " F("[3, 4]") " = t(%w)\n"
                                             "  %p : " F(
                                                 "[2, 4]") " = mm(%x, %wt)\n"
                                                           "  %y : " F(
                                                               "[2, 4]") " = add[alpha=2](%p, %b)\n"
                                                                         "  return (%y)\n",
        "graph(%x : " F("[2, 3]") ", %w : " F("[4, 3]") ", %b : " F(
            "[2, 4]") "):\n"
                      "  %0 : None = prim::None()\n"
                      "  %p : " F("[2, 4]") " = linear(%x, %w, %0)\n"
                                            "  %y : " F("[2, 4]") " = add[alpha=2](%p, %b)\n"
                                                                  "  return (%y)\n");
}

/* ---- dce ---- */

static void test_dce_removes_unused_nodes_but_keeps_in_place_ones(void **state) {
    (void)state;
    expect_pass(
        yg__onnx_eliminate_dead_code,
        "graph(%x : " F("[2]") ", %y : " F(
            "[2]") "):\n"
                   "  %a : " F("[2]") " = exp(%x)\n"
                                      "  %b : " F("[2]") " = add_[alpha=1](%y, %x)\n"
                                                         "  %c : " F("[2]") " = neg(%x)\n"
                                                                            "  return (%c)\n",
        "graph(%x : " F("[2]") ", %y : " F("[2]") "):\n"
                                                  "  %b : " F("[2]") " = add_[alpha=1](%y, %x)\n"
                                                                     "  %c : " F(
                                                                         "[2]") " = neg(%x)\n"
                                                                                "  return (%c)\n");
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_broadcast_fusion_folds_an_expand_of_a_suffix_into_add),
        cmocka_unit_test(test_broadcast_fusion_folds_the_bias_expand_into_gemm_c),
        cmocka_unit_test(test_broadcast_fusion_must_not_fold_a_non_suffix_expand),
        cmocka_unit_test(test_broadcast_fusion_must_not_fold_an_expand_that_sizes_the_result),
        cmocka_unit_test(
            test_broadcast_fusion_must_not_touch_unknown_sizes_or_non_broadcasting_ops),
        cmocka_unit_test(test_peephole_removes_export_no_ops),
        cmocka_unit_test(test_peephole_must_not_remove_real_conversions_or_random_dropout),
        cmocka_unit_test(test_peephole_must_not_fire_in_graphs_with_side_effects),
        cmocka_unit_test(test_peephole_folds_a_traced_through_linear_back_for_gemm),
        cmocka_unit_test(test_peephole_must_not_fold_a_bias_that_is_not_one_per_output),
        cmocka_unit_test(test_dce_removes_unused_nodes_but_keeps_in_place_ones),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
#endif /* YG_WITHOUT_ONNX */
