/*
 * test_jit_text.c - the IR's text form: print -> parse -> print is exact,
 * the parser's tolerance and its located errors, canonicalize, and the
 * linter catching broken graphs.
 */
#include "jit/ir/ir.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Canonical texts (what the printer writes) covering every construct. */
static const char *const canonical_graphs[] = {
    /* types: every field, unknown dims, rank 0, None */
    "graph(%x : Tensor(dtype=float32, device=cpu, sizes=[2, ?, 3], requires_grad=true), "
    "%y : Tensor(sizes=[]), %z : Tensor):\n"
    "  %0 : Tensor(dtype=float32, requires_grad=false) = mul(%x, %y)\n"
    "  %n : None = prim::None()\n"
    "  return (%0, %z)\n",
    /* attributes of every scalar and list kind */
    "graph(%x : Tensor):\n"
    "  %a : Tensor = sum.dim[dim=[0, -1], keepdim=1](%x)\n"
    "  %b : Tensor = mul.Scalar[other=0.1](%a)\n"
    "  %c : Tensor = add.Scalar[alpha=-3, other=1e+20](%b)\n"
    "  %d : Tensor = leaky_relu[negative_slope=-inf](%c)\n"
    "  %e : Tensor = mul.Scalar[other=nan](%d)\n"
    "  %f : Tensor = amax[dim=[]](%e)\n"
    "  %g : Tensor = div.mode[rounding_mode=\"fl\\\"o\\\\or\\n\\t\\x01\\xff\"](%f, %f)\n"
    "  %h : Tensor = mul.Scalar[other=1.0](%g)\n"
    "  %i : Tensor = mul.Scalar[other=-0.0](%h)\n"
    "  return (%i)\n",
    /* tensor attributes of every dtype, 0-dim and empty */
    "graph():\n"
    "  %0 : Tensor = prim::Constant[value=tensor(float32, [2, 2], [1, 0.1, -2.5, inf])]()\n"
    "  %1 : Tensor = prim::Constant[value=tensor(float64, [], [0.30000000000000004])]()\n"
    "  %2 : Tensor = prim::Constant[value=tensor(int64, [3], [-9223372036854775808, 0, "
    "9223372036854775807])]()\n"
    "  %3 : Tensor = prim::Constant[value=tensor(bool, [2, 1], [1, 0])]()\n"
    "  %4 : Tensor = prim::Constant[value=tensor(float32, [0, 3], [])]()\n"
    "  %5 : Tensor = prim::Constant[value=tensor(float64, [1], [nan])]()\n"
    "  return (%0, %1, %2, %3, %4, %5)\n",
    /* int32, float16 and bfloat16 tensor attributes (16-bit floats are
     * written as their float32 value, which converts back exactly) */
    "graph():\n"
    "  %0 : Tensor = prim::Constant[value=tensor(int32, [2], [-2147483648, 2147483647])]()\n"
    "  %1 : Tensor = prim::Constant[value=tensor(float16, [4], [65504, 0.099975586, -inf, "
    "5.9604645e-08])]()\n"
    "  %2 : Tensor = prim::Constant[value=tensor(bfloat16, [2], [-0, 0.100097656])]()\n"
    "  return (%0, %1, %2)\n",
    /* multi-output nodes, repeated outputs, optional tensor inputs */
    "graph(%x : Tensor, %w : Tensor):\n"
    "  %v : Tensor, %i : Tensor(dtype=int64) = max.dim[dim=1, keepdim=0](%x)\n"
    "  %none : None = prim::None()\n"
    "  %l : Tensor = linear(%v, %w, %none)\n"
    "  %c : Tensor = cat[dim=0](%l, %l, %v)\n"
    "  return (%l, %i, %l)\n",
    /* a Tensor?[] list before the Tensor values: None items, any length */
    "graph(%x : Tensor, %i : Tensor(dtype=int64), %v : Tensor):\n"
    "  %n : None = prim::None()\n"
    "  %a : Tensor = index_put_[accumulate=1](%x, %i, %v)\n"
    "  %b : Tensor = index_put(%a, %n, %i, %n, %v)\n"
    "  %c : Tensor = index_put(%b, %v)\n"
    "  return (%b, %c)\n",
    /* nested subgraphs, two levels, and a zero-output node */
    "graph(%x : Tensor):\n"
    "  %y : Tensor = prim::FusionGroup[subgraph=graph(%a : Tensor):\n"
    "      %b : Tensor = prim::DifferentiableGraph[df=graph(%g : Tensor):\n"
    "          return (%g)\n"
    "      , f=graph(%p : Tensor):\n"
    "          %q : Tensor = neg(%p)\n"
    "          return (%q)\n"
    "      ](%a)\n"
    "      return (%b)\n"
    "  ](%x)\n"
    "  prim::FusionGroup[mutates=\"io\", subgraph=graph(%s : Tensor):\n"
    "      return ()\n"
    "  ](%y)\n"
    "  return (%y)\n",
    /* float lists, an empty float list, in-place ops */
    "graph(%x : Tensor, %y : Tensor):\n"
    "  %z : Tensor = add_[alpha=2](%x, %y)\n"
    "  %f : Tensor = prim::FusionGroup[scales=[0.5, 2.0, -1e-07], shifts=float[], "
    "subgraph=graph(%a : Tensor):\n"
    "      return (%a)\n"
    "  ](%z)\n"
    "  return (%f)\n",
};

static yg_graph *parse_ok(const char *text) {
    yg_graph *g = NULL;
    YG_CHECK(yg_graph_parse(text, (int64_t)strlen(text), &g));
    assert_non_null(g);
    return g;
}

static char *print_ok(const yg_graph *g) {
    char *s = NULL;
    YG_CHECK(yg_graph_print(g, &s));
    assert_non_null(s);
    return s;
}

static void expect_prints(const yg_graph *g, const char *expected) {
    char *s = print_ok(g);
    if (strcmp(s, expected) != 0) {
        print_error("printed:\n%s\nexpected:\n%s\n", s, expected);
        yg_string_release(s);
        fail();
    }
    yg_string_release(s);
}

static void test_print_parse_round_trip_is_exact_for_every_test_graph(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof canonical_graphs / sizeof canonical_graphs[0]; i++) {
        yg_graph *g = parse_ok(canonical_graphs[i]);
        YG_CHECK(yg_graph_lint(g));
        char *once = print_ok(g);
        if (strcmp(once, canonical_graphs[i]) != 0)
            print_error("graph %zu printed:\n%s\nexpected:\n%s\n", i, once, canonical_graphs[i]);
        assert_string_equal(once, canonical_graphs[i]);
        yg_graph *again = parse_ok(once);
        char *twice = print_ok(again);
        assert_string_equal(once, twice);
        yg_string_release(once);
        yg_string_release(twice);
        yg_graph_release(again);
        yg_graph_release(g);
    }
}

static void test_parse_accepts_free_form_text_and_prints_it_canonically(void **state) {
    (void)state;
    const char *text = "# a comment line\n"
                       "graph( %x:Tensor(sizes=[2,3],dtype=float64) ,%y ) :   # inputs\n"
                       "  %s = sum.dim [ keepdim = 0 , dim = [ 1 ] ] ( %x )\n"
                       "\t%m : Tensor(requires_grad=false, device=cpu) = mul.Scalar[other=2.50](%s)"
                       "  return(%m,%y)";
    const char *expected =
        "graph(%x : Tensor(dtype=float64, sizes=[2, 3]), %y : Tensor):\n"
        "  %s : Tensor = sum.dim[dim=[1], keepdim=0](%x)\n"
        "  %m : Tensor(device=cpu, requires_grad=false) = mul.Scalar[other=2.5](%s)\n"
        "  return (%m, %y)\n";
    yg_graph *g = parse_ok(text);
    expect_prints(g, expected);
    yg_graph_release(g);
}

static void test_canonicalize_makes_differently_numbered_graphs_print_the_same(void **state) {
    (void)state;
    const char *a = "graph(%input : Tensor, %w : Tensor):\n"
                    "  %t : Tensor = t(%w)\n"
                    "  %out.1 : Tensor = mm(%input, %t)\n"
                    "  %v : Tensor, %i : Tensor = max.dim[dim=1](%out.1)\n"
                    "  return (%v, %i)\n";
    const char *b = "graph(%9 : Tensor, %0 : Tensor):\n"
                    "  %3 : Tensor = t(%0)\n"
                    "  %1 : Tensor = mm(%9, %3)\n"
                    "  %7 : Tensor, %2 : Tensor = max.dim[dim=1](%1)\n"
                    "  return (%7, %2)\n";
    const char *expected = "graph(%0 : Tensor, %1 : Tensor):\n"
                           "  %2 : Tensor = t(%1)\n"
                           "  %3 : Tensor = mm(%0, %2)\n"
                           "  %4 : Tensor, %5 : Tensor = max.dim[dim=1](%3)\n"
                           "  return (%4, %5)\n";
    yg_graph *ga = parse_ok(a), *gb = parse_ok(b);
    char *pa = print_ok(ga), *pb = print_ok(gb);
    assert_string_not_equal(pa, pb);
    yg_string_release(pa);
    yg_string_release(pb);
    YG_CHECK(yg_graph_canonicalize(ga));
    YG_CHECK(yg_graph_canonicalize(gb));
    expect_prints(ga, expected);
    expect_prints(gb, expected);
    YG_CHECK(yg_graph_lint(ga));
    YG_CHECK(yg_graph_lint(gb));
    yg_graph_release(ga);
    yg_graph_release(gb);
}

static void test_canonicalize_renumbers_each_subgraph_from_zero(void **state) {
    (void)state;
    const char *text = "graph(%x : Tensor):\n"
                       "  %y : Tensor = prim::FusionGroup[subgraph=graph(%a : Tensor):\n"
                       "      %b : Tensor = neg(%a)\n"
                       "      return (%b)\n"
                       "  ](%x)\n"
                       "  return (%y)\n";
    const char *expected = "graph(%0 : Tensor):\n"
                           "  %1 : Tensor = prim::FusionGroup[subgraph=graph(%0 : Tensor):\n"
                           "      %1 : Tensor = neg(%0)\n"
                           "      return (%1)\n"
                           "  ](%0)\n"
                           "  return (%1)\n";
    yg_graph *g = parse_ok(text);
    YG_CHECK(yg_graph_canonicalize(g));
    expect_prints(g, expected);
    /* Names like "t.0" or digits already in use do not get in the way. */
    yg_graph *h = parse_ok("graph(%1 : Tensor, %t.0 : Tensor):\n"
                           "  %0 : Tensor = mul(%1, %t.0)\n"
                           "  return (%0)\n");
    YG_CHECK(yg_graph_canonicalize(h));
    expect_prints(h,
                  "graph(%0 : Tensor, %1 : Tensor):\n"
                  "  %2 : Tensor = mul(%0, %1)\n"
                  "  return (%2)\n");
    yg_graph_release(h);
    yg_graph_release(g);
}

/* A malformed text, where its error points and what it says. */
typedef struct bad_text {
    const char *text;
    const char *where; /* "LINE:COL:" */
    const char *what;
} bad_text;

static const bad_text bad_texts[] = {
    {"", "1:1:", "expected 'graph' to start a graph, got end of input"},
    {"grph()", "1:1:", "expected 'graph'"},
    {"graph(%x):\n  %y = mull(%x)\n  return (%y)", "2:8:", "unknown op 'mull'"},
    {"graph(%x):\n  %y = neg(%z)\n  return (%y)", "2:12:", "use of undefined value '%z'"},
    {"graph(%x):\n  %y = neg(%y)\n  return (%y)", "2:12:", "use of undefined value '%y'"},
    {"graph(%x):\n  %x = neg(%x)\n  return (%x)", "2:3:", "redefinition of '%x'"},
    {"graph(%x, %x):\n  return (%x)", "1:11:", "redefinition of '%x'"},
    {"graph(%x):\n  %a, %a = max.dim[dim=0](%x)\n  return (%a)", "2:7:", "redefinition of '%a'"},
    {"graph(%x):\n  %y = mul(%x)\n  return (%y)", "2:8:", "mul takes 2 tensor inputs, got 1"},
    {"graph(%x):\n  %y = max.dim[dim=0](%x)\n  return (%y)",
     "2:8:",
     "max.dim has 2 outputs, got 1"},
    {"graph(%x):\n  %y = sum.dim[dims=[0]](%x)\n  return (%y)",
     "2:8:",
     "sum.dim has no argument dims"},
    {"graph(%x):\n  %n = prim::None()\n  %y = neg(%n)\n  return (%y)",
     "3:8:",
     "input 0 (self) is None but is not optional"},
    {"graph(%x):\n  %y = index_put(%x)\n  return (%y)",
     "2:8:",
     "index_put takes at least 2 tensor inputs, got 1"},
    /* values follows the Tensor?[] indices: the last input, not optional */
    {"graph(%x, %i):\n  %n = prim::None()\n  %y = index_put(%x, %i, %i, %n)\n  return (%y)",
     "3:8:",
     "index_put: input 3 (values) is None but is not optional"},
    {"graph(%x, %i, %v):\n  %n = prim::None()\n  %y = index_put_(%n, %i, %n, %v)\n"
     "  return (%y)",
     "3:8:",
     "index_put_: input 0 (self) is None but is not optional"},
    {"graph():\n  %c = prim::Constant()\n  return (%c)",
     "2:8:",
     "prim::Constant needs a tensor attribute value"},
    {"graph(%x : Tensor(dtype=complex64)):\n  return (%x)", "1:25:", "unknown dtype 'complex64'"},
    {"graph(%x : Tensor(shape=[2])):\n  return (%x)", "1:19:", "unknown type field 'shape'"},
    {"graph(%x : Tensor(sizes=[1], sizes=[2])):\n  return (%x)",
     "1:30:",
     "duplicate type field 'sizes'"},
    {"graph(%x : Tensor(sizes=[1, 1, 1, 1, 1, 1, 1, 1, 1])):\n  return (%x)",
     "1:50:",
     "more than 8 dimensions"},
    {"graph(%x : Tensor(sizes=[-2])):\n  return (%x)", "1:26:", "size -2 is negative"},
    {"graph(%x : Tensr):\n  return (%x)", "1:12:", "expected a type (Tensor or None)"},
    {"graph(%x):\n  %y = mul.Scalar[other=1.5.2](%x)\n  return (%y)", "2:25:", "malformed number"},
    {"graph(%x):\n  %y = mul.Scalar[other=1e](%x)\n  return (%y)",
     "2:25:",
     "exponent without digits"},
    {"graph(%x):\n  %y = sum.dim[dim=[99999999999999999999]](%x)\n  return (%y)",
     "2:21:",
     "integer 99999999999999999999 out of range"},
    {"graph(%x):\n  %y = div.mode[rounding_mode=\"trunc](%x, %x)\n  return (%y)",
     "2:31:",
     "unterminated string"},
    {"graph(%x):\n  %y = div.mode[rounding_mode=\"a\\qb\"](%x, %x)\n  return (%y)",
     "2:31:",
     "unknown escape"},
    {"graph(%x):\n  %y = div.mode[rounding_mode=\"a\\x00\"](%x, %x)\n  return (%y)",
     "2:31:",
     "NUL byte"},
    {"graph(%x):\n  %y = sum.dim[dim=[0], dim=[1]](%x)\n  return (%y)",
     "2:25:",
     "duplicate attribute 'dim'"},
    {"graph(%x):\n  %y = sum.dim[dim=](%x)\n  return (%y)", "2:20:", "expected an attribute value"},
    {"graph():\n  %c = prim::Constant[value=tensor(float32, [2, 2], [1, 2, 3])]()\n"
     "  return (%c)",
     "2:29:",
     "tensor has 3 values but sizes [2, 2] need 4"},
    {"graph():\n  %c = prim::Constant[value=tensor(float32, [9223372036854775807, 4], [])]()\n"
     "  return (%c)",
     "2:29:",
     "need more than"},
    {"graph():\n  %c = prim::Constant[value=tensor(int64, [1], [1.5])]()\n  return (%c)",
     "2:49:",
     "expected an integer, got '1.5'"},
    {"graph():\n  %c = prim::Constant[value=tensor(bool, [1], [2])]()\n  return (%c)",
     "2:48:",
     "a bool element must be 0 or 1"},
    {"graph():\n  %c = prim::Constant[value=tensor(int32, [1], [2147483648])]()\n  return (%c)",
     "2:49:",
     "an int32 element must fit in 32 bits, got 2147483648"},
    {"graph(%x):\n  %y = neg(%x)\n", "3:1:", "expected a node or 'return', got end of input"},
    {"graph(%x):\n  return (%x)\n  %y = neg(%x)", "3:3:", "unexpected '%y' after the graph"},
    {"graph(%x):\n  return (%x) junk", "2:15:", "unexpected 'junk' after the graph"},
    {"graph(%x):\n  return (%x, )", "2:15:", "expected a value (%name), got ')'"},
    {"graph(%x, ):\n  return (%x)", "1:11:", "expected a graph input (%name), got ')'"},
    {"graph(%x):\n  %y = sum.dim[dim=[0, ]](%x)\n  return (%y)",
     "2:24:",
     "expected a number in a list, got ']'"},
    {"graph():\n  %c = prim::Constant[value=tensor(int64, [1], [1, ])]()\n  return (%c)",
     "2:52:",
     "expected an integer, got ']'"},
    {"graph(%x) \n  return (%x)", "2:3:", "expected ':' after a graph's inputs, got 'return'"},
    {"graph(%x):\n  %y = neg(%x\n  return (%y)", "3:3:", "expected ',' or ')' between values"},
    {"graph(%x):\n  %y = neg(%x) @", "2:16:", "unexpected character '@'"},
    {"graph(%x):\n  %y = neg(%x)\x01", "2:15:", "unexpected byte 0x01"},
    {"graph(%):\n  return ()", "1:7:", "expected a value name after '%'"},
    {"graph(%x):\n  %y : None = neg(%x)\n  return (%y)",
     "2:15:",
     "neg: output 0 must have a Tensor type"},
    {"graph(%x):\n  %y = prim::FusionGroup[subgraph=graph(%a, %b):\n    return (%a)\n  ](%x)\n"
     "  return (%y)",
     "2:8:",
     "prim::FusionGroup has 1 inputs and 1 outputs but its subgraph graph has 2 and 1"},
    {"graph(%x):\n  %y = prim::FusionGroup[subgraph=graph(%a):\n    %b = neg(%x)\n"
     "    return (%b)\n  ](%x)\n  return (%y)",
     "3:14:",
     "use of undefined value '%x'"},
};

static void test_malformed_text_gets_a_located_error(void **state) {
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof bad_texts / sizeof bad_texts[0]; i++) {
        const bad_text *b = &bad_texts[i];
        yg_graph *g = (yg_graph *)0x1;
        char where[32];
        snprintf(where, sizeof where, "graph_parse: %s", b->where);
        yg_status st = yg_graph_parse(b->text, (int64_t)strlen(b->text), &g);
        if (st != YG_ERR_INVALID_ARGUMENT || strstr(yg_last_error(), where) == NULL ||
            strstr(yg_last_error(), b->what) == NULL || g != NULL) {
            print_error("case %zu: text\n%s\ngave %s \"%s\"; expected \"%s ... %s\"\n",
                        i,
                        b->text,
                        yg_status_name(st),
                        yg_last_error(),
                        where,
                        b->what);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

static void test_parse_rejects_subgraphs_nested_too_deep(void **state) {
    (void)state;
    char text[8192];
    size_t pos = 0;
    int depth = 40;
    pos += (size_t)snprintf(text + pos, sizeof text - pos, "graph(%%x):\n");
    for (int i = 0; i < depth; i++)
        pos += (size_t)snprintf(
            text + pos, sizeof text - pos, "%%y = prim::FusionGroup[subgraph=graph(%%x):\n");
    for (int i = 0; i < depth; i++)
        pos += (size_t)snprintf(text + pos, sizeof text - pos, "return (%%x)](%%x)\n");
    pos += (size_t)snprintf(text + pos, sizeof text - pos, "return (%%x)\n");
    yg_graph *g = NULL;
    YG_EXPECT_ERROR(yg_graph_parse(text, (int64_t)pos, &g),
                    YG_ERR_INVALID_ARGUMENT,
                    "subgraphs nested deeper than 32");
    assert_null(g);
}

static void test_parse_reads_only_len_bytes(void **state) {
    (void)state;
    const char *text = canonical_graphs[3];
    size_t n = strlen(text);
    /* An exact-size heap copy without a NUL: ASan reports any overread. */
    char *copy = malloc(n);
    assert_non_null(copy);
    memcpy(copy, text, n);
    yg_graph *g = NULL;
    YG_CHECK(yg_graph_parse(copy, (int64_t)n, &g));
    yg_graph_release(g);
    /* Every proper prefix is malformed: each fails cleanly with a message. */
    for (size_t len = 0; len < n; len++) {
        g = NULL;
        yg_status st = yg_graph_parse(copy, (int64_t)len, &g);
        if (st == YG_OK) {
            /* A prefix ending right after "return (...)" minus the newline
             * is complete; anything else must fail. */
            assert_true(len >= n - 1);
            yg_graph_release(g);
            continue;
        }
        assert_int_equal(st, YG_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(yg_last_error(), "graph_parse: "));
        assert_null(g);
    }
    free(copy);
}

static void test_parse_rejects_null_out_and_negative_length(void **state) {
    (void)state;
    yg_graph *g = NULL;
    YG_EXPECT_ERROR(yg_graph_parse("graph():\n return ()", -1, &g),
                    YG_ERR_INVALID_ARGUMENT,
                    "graph_parse: invalid text");
    YG_EXPECT_ERROR(yg_graph_parse("graph():\n return ()", 5, NULL),
                    YG_ERR_INVALID_ARGUMENT,
                    "graph_parse: out is NULL");
}

static void test_float32_constants_round_trip_bit_exactly(void **state) {
    (void)state;
    const float values[] = {0.1f, 1.0f / 3.0f, 3.4028235e38f, 1.4e-45f, -0.0f, 16777217.0f};
    const int64_t sizes[] = {6};
    yg_tensor *t = NULL, *back = NULL;
    yg_graph *g = NULL, *h = NULL;
    yg_ir_value *c = NULL;
    YG_CHECK(yg_tensor_from_data(values, sizes, 1, YG_FLOAT32, &t));
    YG_CHECK(yg_graph_create(&g));
    YG_CHECK(yg_graph_add_constant(g, t, &c));
    YG_CHECK(yg_graph_set_outputs(g, &c, 1));
    char *text = print_ok(g);
    h = parse_ok(text);
    YG_CHECK(yg_ir_node_get_tensor(yg_graph_first_node(h), "value", &back));
    assert_memory_equal(yg_tensor_data(back), values, sizeof values);
    yg_string_release(text);
    yg_release(back);
    yg_release(t);
    yg_graph_release(g);
    yg_graph_release(h);
}

/* ---- lint ---- */

static void test_lint_accepts_every_parsed_graph(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof canonical_graphs / sizeof canonical_graphs[0]; i++) {
        yg_graph *g = parse_ok(canonical_graphs[i]);
        YG_CHECK(yg_graph_lint(g));
        yg_graph_release(g);
    }
}

static const char *const chain = "graph(%x : Tensor):\n"
                                 "  %a : Tensor = neg(%x)\n"
                                 "  %b : Tensor = exp(%a)\n"
                                 "  %v : Tensor, %i : Tensor = max.dim[dim=0](%b)\n"
                                 "  return (%v)\n";

static void test_lint_names_a_use_before_its_definition(void **state) {
    (void)state;
    yg_graph *g = parse_ok(chain);
    yg_ir_node *neg = g->first, *exp = neg->next;
    yg__ir_node_move_before(exp, neg);
    YG_EXPECT_ERROR(yg_graph_lint(g),
                    YG_ERR_INVALID_ARGUMENT,
                    "graph_lint: %b = exp(%a)",
                    "input 0 %a is used before its definition");
    yg__ir_node_move_before(neg, exp);
    YG_CHECK(yg_graph_lint(g));
    yg_graph_release(g);
}

static void test_lint_names_a_use_list_that_does_not_match_inputs(void **state) {
    (void)state;
    yg_graph *g = parse_ok(chain);
    yg_ir_node *exp = g->first->next;
    yg_ir_value *a = exp->inputs[0];
    /* Drop the recorded use: the input is no longer in a's use list. */
    yg__ir_value_remove_use(a, exp, 0);
    YG_EXPECT_ERROR(yg_graph_lint(g),
                    YG_ERR_INVALID_ARGUMENT,
                    "%b = exp(%a)",
                    "input 0 %a is missing from its use list");
    assert_true(yg__ir_value_add_use(a, exp, 0));
    /* A stale extra use (claiming input 3 of exp) is caught on the other side. */
    assert_true(yg__ir_value_add_use(a, exp, 3));
    YG_EXPECT_ERROR(yg_graph_lint(g),
                    YG_ERR_INVALID_ARGUMENT,
                    "%a = neg(%x)",
                    "output 0 %a has a stale use (input 3 of a exp node)");
    yg__ir_value_remove_use(a, exp, 3);
    YG_CHECK(yg_graph_lint(g));
    yg_graph_release(g);
}

static void test_lint_names_a_multi_output_node_that_is_inconsistent(void **state) {
    (void)state;
    yg_graph *g = parse_ok(chain);
    yg_ir_node *max = g->last;
    yg_ir_value *tmp = max->outputs[0];
    max->outputs[0] = max->outputs[1];
    max->outputs[1] = tmp;
    YG_EXPECT_ERROR(yg_graph_lint(g),
                    YG_ERR_INVALID_ARGUMENT,
                    "%i, %v = max.dim(%b)",
                    "output 0 %i does not point back at its node");
    max->outputs[1] = max->outputs[0];
    max->outputs[0] = tmp;
    /* Dropping an output breaks the schema's count. */
    max->n_outputs = 1;
    YG_EXPECT_ERROR(yg_graph_lint(g),
                    YG_ERR_INVALID_ARGUMENT,
                    "%v = max.dim(%b)",
                    "max.dim has 2 outputs, got 1");
    max->n_outputs = 2;
    YG_CHECK(yg_graph_lint(g));
    yg_graph_release(g);
}

static void test_lint_names_an_output_that_is_not_defined_in_the_graph(void **state) {
    (void)state;
    yg_graph *g = parse_ok(chain), *other = parse_ok(chain);
    yg_ir_value *mine = g->ret->inputs[0], *foreign = other->first->outputs[0];
    yg__ir_value_remove_use(mine, g->ret, 0);
    g->ret->inputs[0] = foreign;
    assert_true(yg__ir_value_add_use(foreign, g->ret, 0));
    YG_EXPECT_ERROR(yg_graph_lint(g),
                    YG_ERR_INVALID_ARGUMENT,
                    "return (%a)",
                    "input 0 %a is used before its definition");
    yg__ir_value_remove_use(foreign, g->ret, 0);
    g->ret->inputs[0] = mine;
    assert_true(yg__ir_value_add_use(mine, g->ret, 0));
    YG_CHECK(yg_graph_lint(g));
    yg_graph_release(other);
    yg_graph_release(g);
}

/* Issue 18: fuzz_ir found that this constant's strides overflowed int64
 * (undefined behaviour) while it was built; it is a valid empty tensor. */
static void test_parse_takes_an_empty_constant_with_huge_sizes(void **state) {
    (void)state;
    const char *text = "graph():\n"
                       "  %0 : Tensor = prim::Constant[value=tensor(float32, [036854775808, 0, "
                       "922337200, 3], [])]()\n"
                       "  return (%0)\n";
    yg_graph *g = NULL;
    yg_tensor *out = NULL;
    YG_CHECK(yg_graph_parse(text, (int64_t)strlen(text), &g));
    YG_CHECK(yg_graph_run(g, NULL, 0, &out, 1));
    assert_int_equal(yg_tensor_numel(out), 0);
    assert_int_equal(yg_tensor_sizes(out)[0], 36854775808LL);
    assert_int_equal(yg_tensor_strides(out)[0], 2767011600LL);
    yg_release(out);
    yg_graph_release(g);
}

/* Sizes whose contiguous strides do not fit int64 are a located parse
 * error, not a failure of the tensor constructor. */
static void test_parse_rejects_a_constant_whose_strides_overflow(void **state) {
    (void)state;
    const char *text = "graph():\n"
                       "  %0 : Tensor = prim::Constant[value=tensor(float32, [2, 0, "
                       "4611686018427387904, 4], [])]()\n"
                       "  return (%0)\n";
    yg_graph *g = NULL;
    YG_EXPECT_ERROR(yg_graph_parse(text, (int64_t)strlen(text), &g),
                    YG_ERR_INVALID_ARGUMENT,
                    "graph_parse: 2:",
                    "tensor sizes [2, 0, 4611686018427387904, 4] have no int64 strides");
    assert_null(g);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_print_parse_round_trip_is_exact_for_every_test_graph),
        cmocka_unit_test(test_parse_accepts_free_form_text_and_prints_it_canonically),
        cmocka_unit_test(test_canonicalize_makes_differently_numbered_graphs_print_the_same),
        cmocka_unit_test(test_canonicalize_renumbers_each_subgraph_from_zero),
        cmocka_unit_test(test_malformed_text_gets_a_located_error),
        cmocka_unit_test(test_parse_rejects_subgraphs_nested_too_deep),
        cmocka_unit_test(test_parse_reads_only_len_bytes),
        cmocka_unit_test(test_parse_rejects_null_out_and_negative_length),
        cmocka_unit_test(test_float32_constants_round_trip_bit_exactly),
        cmocka_unit_test(test_lint_accepts_every_parsed_graph),
        cmocka_unit_test(test_lint_names_a_use_before_its_definition),
        cmocka_unit_test(test_lint_names_a_use_list_that_does_not_match_inputs),
        cmocka_unit_test(test_lint_names_a_multi_output_node_that_is_inconsistent),
        cmocka_unit_test(test_lint_names_an_output_that_is_not_defined_in_the_graph),
        cmocka_unit_test(test_parse_takes_an_empty_constant_with_huge_sizes),
        cmocka_unit_test(test_parse_rejects_a_constant_whose_strides_overflow),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
