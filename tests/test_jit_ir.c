/*
 * test_jit_ir.c - building graphs through the C API of yagrad/jit.h:
 * inputs, nodes, constants, attributes, types, names, outputs, cloning,
 * and the failure guarantee (status, NULL outputs, graph unchanged).
 */
#include "jit/ir/ir.h"
#include "testutil.h"
#include "yagrad/ops_views.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void expect_prints(const yg_graph *g, const char *expected) {
    char *s = NULL;
    YG_CHECK(yg_graph_print(g, &s));
    if (strcmp(s, expected) != 0) {
        print_error("printed:\n%s\nexpected:\n%s\n", s, expected);
        yg_string_release(s);
        fail();
    }
    yg_string_release(s);
}

static char *print_ok(const yg_graph *g) {
    char *s = NULL;
    YG_CHECK(yg_graph_print(g, &s));
    return s;
}

static void test_build_graph_with_the_api_prints_expected_text(void **state) {
    (void)state;
    yg_graph *g = NULL;
    yg_ir_value *x = NULL, *w = NULL;
    yg_ir_node *mm = NULL, *sum = NULL, *max = NULL;
    yg_ir_type tx = yg_ir_type_tensor();
    tx.dtype = YG_FLOAT32;
    tx.ndim = 2;
    tx.sizes[0] = 4;
    tx.sizes[1] = YG_IR_UNKNOWN;
    YG_CHECK(yg_graph_create(&g));
    YG_CHECK(yg_graph_add_input(g, &tx, "x", &x));
    YG_CHECK(yg_graph_add_input(g, NULL, NULL, &w));
    yg_ir_value *mm_in[] = {x, w};
    YG_CHECK(yg_graph_add_node(g, "mm", mm_in, 2, 1, &mm));
    yg_ir_value *y = yg_ir_node_output(mm, 0);
    YG_CHECK(yg_graph_add_node(g, "sum.dim", &y, 1, 1, &sum));
    const int64_t dims[] = {1};
    YG_CHECK(yg_ir_node_set_int(sum, "keepdim", 1));
    YG_CHECK(yg_ir_node_set_ints(sum, "dim", dims, 1));
    YG_CHECK(yg_graph_add_node(g, "max.dim", &y, 1, 2, &max));
    YG_CHECK(yg_ir_node_set_int(max, "dim", 0));
    yg_ir_value *outs[] = {yg_ir_node_output(sum, 0), yg_ir_node_output(max, 1)};
    YG_CHECK(yg_graph_set_outputs(g, outs, 2));
    expect_prints(g,
                  "graph(%x : Tensor(dtype=float32, sizes=[4, ?]), %0 : Tensor):\n"
                  "  %1 : Tensor = mm(%x, %0)\n"
                  "  %2 : Tensor = sum.dim[dim=[1], keepdim=1](%1)\n"
                  "  %3 : Tensor, %4 : Tensor = max.dim[dim=0](%1)\n"
                  "  return (%2, %4)\n");
    YG_CHECK(yg_graph_lint(g));
    assert_int_equal(yg_graph_num_inputs(g), 2);
    assert_int_equal(yg_graph_num_outputs(g), 2);
    assert_int_equal(yg_graph_num_nodes(g), 3);
    assert_ptr_equal(yg_graph_first_node(g), mm);
    assert_ptr_equal(yg_ir_node_next(mm), sum);
    assert_string_equal(yg_ir_node_kind(max), "max.dim");
    assert_int_equal(yg_ir_value_num_uses(y), 2);
    assert_ptr_equal(yg_ir_value_node(y), mm);
    assert_null(yg_ir_value_node(x));
    assert_int_equal(yg_ir_value_type(x).sizes[0], 4);
    yg_graph_release(g);
}

static void test_node_kinds_are_interned_from_the_op_table(void **state) {
    (void)state;
    yg_graph *g = NULL;
    yg_ir_value *x = NULL;
    yg_ir_node *a = NULL, *b = NULL;
    YG_CHECK(yg_graph_create(&g));
    YG_CHECK(yg_graph_add_input(g, NULL, "x", &x));
    char kind[] = "neg"; /* a stack copy: the node must not keep it */
    YG_CHECK(yg_graph_add_node(g, kind, &x, 1, 1, &a));
    YG_CHECK(yg_graph_add_node(g, "neg", &x, 1, 1, &b));
    assert_ptr_equal(a->kind, b->kind);
    assert_ptr_not_equal(a->kind, kind);
    assert_non_null(a->op);
    assert_string_equal(a->op->schema, "neg(Tensor self) -> Tensor");
    yg_graph_release(g);
}

static void test_add_node_rejects_bad_calls_and_leaves_the_graph_unchanged(void **state) {
    (void)state;
    yg_graph *g = NULL, *other = NULL;
    yg_ir_value *x = NULL, *y = NULL;
    yg_ir_node *n = (yg_ir_node *)0x1;
    YG_CHECK(yg_graph_create(&g));
    YG_CHECK(yg_graph_create(&other));
    YG_CHECK(yg_graph_add_input(g, NULL, "x", &x));
    YG_CHECK(yg_graph_add_input(other, NULL, "y", &y));
    YG_CHECK(yg_graph_set_outputs(g, &x, 1));
    char *before = print_ok(g);

    YG_EXPECT_ERROR(yg_graph_add_node(g, "nope", &x, 1, 1, &n),
                    YG_ERR_INVALID_ARGUMENT,
                    "graph_add_node: unknown kind 'nope'");
    assert_null(n);
    YG_EXPECT_ERROR(yg_graph_add_node(g, "mul", &x, 1, 1, &n),
                    YG_ERR_INVALID_ARGUMENT,
                    "mul takes 2 tensor inputs, got 1");
    YG_EXPECT_ERROR(yg_graph_add_node(g, "max.dim", &x, 1, 1, &n),
                    YG_ERR_INVALID_ARGUMENT,
                    "max.dim has 2 outputs, got 1");
    YG_EXPECT_ERROR(yg_graph_add_node(g, "neg", &y, 1, 1, &n),
                    YG_ERR_INVALID_ARGUMENT,
                    "neg: input 0 is a value of another graph");
    yg_ir_value *null_in[] = {NULL};
    YG_EXPECT_ERROR(
        yg_graph_add_node(g, "neg", null_in, 1, 1, &n), YG_ERR_INVALID_ARGUMENT, "input 0 is NULL");
    YG_EXPECT_ERROR(yg_graph_add_node(g, "prim::Param", NULL, 0, 1, &n),
                    YG_ERR_INVALID_ARGUMENT,
                    "unknown kind 'prim::Param'");
    YG_EXPECT_ERROR(yg_graph_add_node(NULL, "neg", &x, 1, 1, &n),
                    YG_ERR_INVALID_ARGUMENT,
                    "graph or kind is NULL");
    assert_null(n);

    char *after = print_ok(g);
    assert_string_equal(before, after);
    assert_int_equal(yg_ir_value_num_uses(x), 1);
    YG_CHECK(yg_graph_lint(g));
    yg_string_release(before);
    yg_string_release(after);
    yg_graph_release(other);
    yg_graph_release(g);
}

static void test_add_input_rejects_malformed_or_taken_names(void **state) {
    (void)state;
    yg_graph *g = NULL;
    yg_ir_value *v = (yg_ir_value *)0x1;
    yg_ir_type bad = yg_ir_type_tensor();
    bad.ndim = 9;
    YG_CHECK(yg_graph_create(&g));
    YG_CHECK(yg_graph_add_input(g, NULL, "x", NULL));
    YG_EXPECT_ERROR(yg_graph_add_input(g, NULL, "x", &v),
                    YG_ERR_INVALID_ARGUMENT,
                    "graph_add_input: name %x is taken");
    assert_null(v);
    YG_EXPECT_ERROR(
        yg_graph_add_input(g, NULL, "a b", &v), YG_ERR_INVALID_ARGUMENT, "malformed name \"a b\"");
    YG_EXPECT_ERROR(yg_graph_add_input(g, NULL, "", &v), YG_ERR_INVALID_ARGUMENT, "malformed name");
    YG_EXPECT_ERROR(yg_graph_add_input(g, &bad, NULL, &v), YG_ERR_INVALID_ARGUMENT, "invalid type");
    assert_int_equal(yg_graph_num_inputs(g), 1);
    /* Auto names skip numbers already taken. */
    YG_CHECK(yg_graph_add_input(g, NULL, "0", NULL));
    YG_CHECK(yg_graph_add_input(g, NULL, NULL, &v));
    assert_string_equal(yg_ir_value_name(v), "1");
    yg_graph_release(g);
}

static void test_attributes_set_get_replace_and_print_sorted(void **state) {
    (void)state;
    yg_graph *g = NULL, *sub = NULL;
    yg_ir_value *x = NULL;
    yg_ir_node *n = NULL;
    const int64_t ints[] = {3, -1};
    const double floats[] = {0.5, -2};
    YG_CHECK(yg_graph_create(&g));
    YG_CHECK(yg_graph_add_input(g, NULL, "x", &x));
    YG_CHECK(yg_graph_create(&sub));
    yg_ir_value *a = NULL;
    YG_CHECK(yg_graph_add_input(sub, NULL, "a", &a));
    YG_CHECK(yg_graph_set_outputs(sub, &a, 1));
    YG_CHECK(yg_graph_add_node(g, "prim::FusionGroup", &x, 1, 1, &n));
    YG_CHECK(yg_ir_node_set_str(n, "zeta", "z\"q"));
    YG_CHECK(yg_ir_node_set_int(n, "count", 7));
    YG_CHECK(yg_ir_node_set_float(n, "alpha", 2.0));
    YG_CHECK(yg_ir_node_set_ints(n, "dims", ints, 2));
    YG_CHECK(yg_ir_node_set_floats(n, "scales", floats, 2));
    YG_CHECK(yg_ir_node_set_graph(n, "subgraph", sub));
    YG_CHECK(yg_ir_node_set_int(n, "count", 8)); /* replaces */
    YG_CHECK(yg_graph_set_outputs(g, &n->outputs[0], 1));
    /* The node keeps its own copy of the subgraph. */
    yg_graph_release(sub);
    expect_prints(g,
                  "graph(%x : Tensor):\n"
                  "  %0 : Tensor = prim::FusionGroup[alpha=2.0, count=8, dims=[3, -1], "
                  "scales=[0.5, -2.0], subgraph=graph(%a : Tensor):\n"
                  "      return (%a)\n"
                  "  , zeta=\"z\\\"q\"](%x)\n"
                  "  return (%0)\n");
    int64_t i = 0;
    double f = 0;
    const char *s = NULL;
    const int64_t *list = NULL;
    int64_t len = 0;
    const yg_graph *got = NULL;
    yg_ir_attr_kind kind;
    YG_CHECK(yg_ir_node_get_int(n, "count", &i));
    assert_int_equal(i, 8);
    YG_CHECK(yg_ir_node_get_float(n, "alpha", &f));
    assert_true(f == 2.0);
    YG_CHECK(yg_ir_node_get_str(n, "zeta", &s));
    assert_string_equal(s, "z\"q");
    YG_CHECK(yg_ir_node_get_ints(n, "dims", &list, &len));
    assert_int_equal(len, 2);
    assert_int_equal(list[1], -1);
    YG_CHECK(yg_ir_node_get_graph(n, "subgraph", &got));
    assert_int_equal(yg_graph_num_inputs(got), 1);
    assert_true(yg_ir_node_has_attr(n, "scales", &kind));
    assert_int_equal(kind, YG_IR_ATTR_FLOATS);
    assert_false(yg_ir_node_has_attr(n, "missing", NULL));
    YG_EXPECT_ERROR(yg_ir_node_get_int(n, "alpha", &i),
                    YG_ERR_INVALID_ARGUMENT,
                    "attribute alpha is a float, not a int");
    YG_EXPECT_ERROR(yg_ir_node_get_int(n, "missing", &i),
                    YG_ERR_INVALID_ARGUMENT,
                    "prim::FusionGroup has no attribute missing");
    YG_EXPECT_ERROR(yg_ir_node_set_int(n, "9lives", 1),
                    YG_ERR_INVALID_ARGUMENT,
                    "malformed attribute name \"9lives\"");
    YG_EXPECT_ERROR(yg_ir_node_set_graph(n, "self", g),
                    YG_ERR_INVALID_ARGUMENT,
                    "a graph cannot contain itself");
    YG_CHECK(yg_graph_lint(g));
    yg_graph_release(g);
}

static void test_tensor_attributes_are_copied_and_constants_get_their_type(void **state) {
    (void)state;
    const int64_t sizes[] = {2, 2};
    const double values[] = {1, 2, 3, 4};
    yg_tensor *t = yg_test_tensor(YG_FLOAT64, sizes, 2, values), *tt = NULL, *back = NULL;
    yg_graph *g = NULL;
    yg_ir_value *c = NULL;
    YG_CHECK(yg_graph_create(&g));
    /* A transposed (non-contiguous) view is stored contiguous. */
    YG_CHECK(yg_t(t, &tt));
    YG_CHECK(yg_graph_add_constant(g, tt, &c));
    ((double *)yg_tensor_data(t))[1] = 99; /* the graph holds a copy */
    YG_CHECK(yg_graph_set_outputs(g, &c, 1));
    expect_prints(g,
                  "graph():\n"
                  "  %0 : Tensor(dtype=float64, device=cpu, sizes=[2, 2], requires_grad=false) "
                  "= prim::Constant[value=tensor(float64, [2, 2], [1, 3, 2, 4])]()\n"
                  "  return (%0)\n");
    YG_CHECK(yg_ir_node_get_tensor(yg_ir_value_node(c), "value", &back));
    const double expected[] = {1, 3, 2, 4};
    YG_EXPECT_CLOSE(back, sizes, 2, expected, 0, 0);
    yg_tensor *none = (yg_tensor *)0x1;
    YG_EXPECT_ERROR(yg_ir_node_get_tensor(yg_ir_value_node(c), "nope", &none),
                    YG_ERR_INVALID_ARGUMENT,
                    "has no attribute nope");
    assert_null(none);
    yg_release(back);
    yg_release(tt);
    yg_release(t);
    yg_graph_release(g);
}

static void test_clone_is_deep_and_prints_the_same(void **state) {
    (void)state;
    const char *text =
        "graph(%x : Tensor(dtype=float32)):\n"
        "  %c : Tensor = prim::Constant[value=tensor(float32, [1], [2])]()\n"
        "  %y : Tensor = prim::FusionGroup[subgraph=graph(%a : Tensor, %b : Tensor):\n"
        "      %p : Tensor = mul(%a, %b)\n"
        "      return (%p)\n"
        "  ](%x, %c)\n"
        "  return (%y, %x)\n";
    yg_graph *g = NULL, *c = NULL;
    YG_CHECK(yg_graph_parse(text, (int64_t)strlen(text), &g));
    YG_CHECK(yg_graph_clone(g, &c));
    yg_graph_release(g);
    expect_prints(c, text);
    YG_CHECK(yg_graph_lint(c));
    /* New auto names in the copy do not collide with copied ones. */
    yg_ir_value *in = yg_graph_input(c, 0);
    yg_ir_node *n = NULL;
    YG_CHECK(yg_graph_add_node(c, "neg", &in, 1, 1, &n));
    assert_string_not_equal(yg_ir_value_name(yg_ir_node_output(n, 0)), "c");
    YG_CHECK(yg_graph_lint(c));
    yg_graph_release(c);
}

static void test_set_outputs_replaces_and_keeps_use_counts(void **state) {
    (void)state;
    yg_graph *g = NULL, *other = NULL;
    yg_ir_value *x = NULL, *y = NULL, *z = NULL;
    YG_CHECK(yg_graph_create(&g));
    YG_CHECK(yg_graph_create(&other));
    YG_CHECK(yg_graph_add_input(g, NULL, "x", &x));
    YG_CHECK(yg_graph_add_input(g, NULL, "y", &y));
    YG_CHECK(yg_graph_add_input(other, NULL, "z", &z));
    yg_ir_value *first[] = {x, x, y};
    YG_CHECK(yg_graph_set_outputs(g, first, 3));
    assert_int_equal(yg_ir_value_num_uses(x), 2);
    yg_ir_value *second[] = {y, x};
    YG_CHECK(yg_graph_set_outputs(g, second, 2));
    assert_int_equal(yg_ir_value_num_uses(x), 1);
    assert_int_equal(yg_ir_value_num_uses(y), 1);
    YG_CHECK(yg_graph_lint(g));
    YG_EXPECT_ERROR(yg_graph_set_outputs(g, &z, 1),
                    YG_ERR_INVALID_ARGUMENT,
                    "graph_set_outputs: output 0 is a value of another graph");
    assert_ptr_equal(yg_graph_output(g, 0), y);
    YG_CHECK(yg_graph_set_outputs(g, NULL, 0));
    assert_int_equal(yg_ir_value_num_uses(x), 0);
    YG_CHECK(yg_graph_lint(g));
    yg_graph_release(other);
    yg_graph_release(g);
}

static void test_value_types_and_names_are_validated(void **state) {
    (void)state;
    yg_graph *g = NULL;
    yg_ir_value *x = NULL, *y = NULL;
    yg_ir_type t = yg_ir_type_tensor();
    YG_CHECK(yg_graph_create(&g));
    YG_CHECK(yg_graph_add_input(g, NULL, "x", &x));
    YG_CHECK(yg_graph_add_input(g, NULL, "y", &y));
    t.dtype = YG_DTYPE_COUNT_;
    YG_EXPECT_ERROR(
        yg_ir_value_set_type(x, &t), YG_ERR_INVALID_ARGUMENT, "value_set_type: %x: invalid type");
    t = yg_ir_type_tensor();
    t.ndim = 1;
    t.sizes[0] = -7;
    YG_EXPECT_ERROR(yg_ir_value_set_type(x, &t), YG_ERR_INVALID_ARGUMENT, "invalid type");
    t.sizes[0] = 5;
    t.requires_grad = 1;
    YG_CHECK(yg_ir_value_set_type(x, &t));
    assert_int_equal(yg_ir_value_type(x).requires_grad, 1);
    YG_EXPECT_ERROR(
        yg_ir_value_set_name(x, "y"), YG_ERR_INVALID_ARGUMENT, "value_set_name: name %y is taken");
    YG_EXPECT_ERROR(yg_ir_value_set_name(x, "%x"), YG_ERR_INVALID_ARGUMENT, "malformed name");
    YG_CHECK(yg_ir_value_set_name(x, "input.1"));
    YG_CHECK(yg_ir_value_set_name(y, "x"));
    assert_string_equal(yg_ir_value_name(x), "input.1");
    YG_CHECK(yg_graph_lint(g));
    yg_graph_release(g);
}

static void test_accessors_are_null_safe(void **state) {
    (void)state;
    assert_int_equal(yg_graph_num_inputs(NULL), 0);
    assert_null(yg_graph_input(NULL, 0));
    assert_null(yg_graph_first_node(NULL));
    assert_null(yg_ir_node_kind(NULL));
    assert_null(yg_ir_node_output(NULL, 0));
    assert_null(yg_ir_value_name(NULL));
    assert_int_equal(yg_ir_value_type(NULL).ndim, YG_IR_UNKNOWN);
    assert_int_equal(yg_ir_value_num_uses(NULL), 0);
    yg_graph_release(NULL);
    yg_string_release(NULL);
    YG_EXPECT_ERROR(yg_graph_create(NULL), YG_ERR_INVALID_ARGUMENT, "graph_create: out is NULL");
    YG_EXPECT_ERROR(yg_graph_lint(NULL), YG_ERR_INVALID_ARGUMENT, "graph_lint: graph is NULL");
}

static void test_side_effects_cover_inplace_ops_mutates_and_subgraphs(void **state) {
    (void)state;
    const char *text = "graph(%x : Tensor, %y : Tensor):\n"
                       "  %a : Tensor = add_(%x, %y)\n"
                       "  %b : Tensor = add_.Scalar[other=1](%x)\n"
                       "  %c : Tensor = add.Scalar[other=1](%x)\n"
                       "  %d : Tensor = neg[mutates=\"x\"](%x)\n"
                       "  %e : Tensor = prim::FusionGroup[subgraph=graph(%p : Tensor):\n"
                       "      %q : Tensor = relu_(%p)\n"
                       "      return (%q)\n"
                       "  ](%x)\n"
                       "  return (%c)\n";
    const bool expected[] = {true, true, false, true, true};
    yg_graph *g = NULL;
    YG_CHECK(yg_graph_parse(text, (int64_t)strlen(text), &g));
    int i = 0;
    for (yg_ir_node *n = g->first; n != NULL; n = n->next, i++)
        assert_int_equal(yg__ir_node_has_side_effects(n), expected[i]);
    yg_graph_release(g);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_graph_with_the_api_prints_expected_text),
        cmocka_unit_test(test_node_kinds_are_interned_from_the_op_table),
        cmocka_unit_test(test_add_node_rejects_bad_calls_and_leaves_the_graph_unchanged),
        cmocka_unit_test(test_add_input_rejects_malformed_or_taken_names),
        cmocka_unit_test(test_attributes_set_get_replace_and_print_sorted),
        cmocka_unit_test(test_tensor_attributes_are_copied_and_constants_get_their_type),
        cmocka_unit_test(test_clone_is_deep_and_prints_the_same),
        cmocka_unit_test(test_set_outputs_replaces_and_keeps_use_counts),
        cmocka_unit_test(test_value_types_and_names_are_validated),
        cmocka_unit_test(test_accessors_are_null_safe),
        cmocka_unit_test(test_side_effects_cover_inplace_ops_mutates_and_subgraphs),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
