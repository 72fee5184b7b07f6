/*
 * test_jit_dump.c - the JSON and Graphviz dumps of a graph: the JSON of
 * every test graph passes tools/check_ir_json.py (the schema
 * tools/ir_graph.schema.json plus checks of edges and names), and the DOT
 * renders with Graphviz's `dot -Tsvg`.  The external tools run through
 * system(); a test whose tool is missing is skipped with the reason
 * (scripts/install-deps.sh installs graphviz and python3-jsonschema).
 */
#define _GNU_SOURCE /* mkstemps, fdopen */
#include "testutil.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const graphs[] = {
    "graph(%x : Tensor(dtype=float32, device=cpu, sizes=[2, ?, 3], requires_grad=true), "
    "%y : Tensor(sizes=[]), %z : Tensor):\n"
    "  %0 : Tensor(dtype=float32, requires_grad=false) = mul(%x, %y)\n"
    "  %n : None = prim::None()\n"
    "  return (%0, %z, %0)\n",
    "graph(%x : Tensor):\n"
    "  %a : Tensor = sum.dim[dim=[0, -1], keepdim=1](%x)\n"
    "  %b : Tensor = mul.Scalar[other=nan](%a)\n"
    "  %c : Tensor = leaky_relu[negative_slope=-inf](%b)\n"
    "  %g : Tensor = div.mode[rounding_mode=\"q\\\"\\\\\\n\\x01\\xff\"](%c, %c)\n"
    "  %v : Tensor, %i : Tensor = max.dim[dim=1](%g)\n"
    "  return (%i)\n",
    "graph():\n"
    "  %0 : Tensor = prim::Constant[value=tensor(float32, [2, 2], [1, 0.1, -2.5, inf])]()\n"
    "  %1 : Tensor = prim::Constant[value=tensor(float64, [1], [nan])]()\n"
    "  %2 : Tensor = prim::Constant[value=tensor(int64, [0], [])]()\n"
    "  %3 : Tensor = prim::Constant[value=tensor(bool, [2], [1, 0])]()\n"
    "  %4 : Tensor = prim::Constant[value=tensor(int32, [2], [-2147483648, 7])]()\n"
    "  %5 : Tensor = prim::Constant[value=tensor(float16, [2], [65504, -inf])]()\n"
    "  %6 : Tensor = prim::Constant[value=tensor(bfloat16, [1], [0.100097656])]()\n"
    "  return (%0, %1, %2, %3, %4, %5, %6)\n",
    "graph(%x : Tensor):\n"
    "  %y : Tensor = prim::FusionGroup[scales=[0.5, nan], shifts=float[], "
    "subgraph=graph(%a : Tensor):\n"
    "      %b : Tensor = prim::DifferentiableGraph[df=graph(%g : Tensor):\n"
    "          return (%g)\n"
    "      , f=graph(%p : Tensor):\n"
    "          %q : Tensor = neg(%p)\n"
    "          return (%q)\n"
    "      ](%a)\n"
    "      return (%b)\n"
    "  ](%x)\n"
    "  return (%y)\n",
};

/* The repository root, from this file's path (CMake compiles it by its
 * absolute path). */
static void source_path(char *buf, size_t len, const char *rel) {
    const char *file = __FILE__;
    const char *slash = strrchr(file, '/');
    size_t dir = slash != NULL ? (size_t)(slash - file) : 0;
    snprintf(buf, len, "%.*s/../%s", (int)dir, file, rel);
}

static bool have_command(const char *cmd) {
    char line[256];
    snprintf(line, sizeof line, "command -v %s > /dev/null 2>&1", cmd);
    return system(line) == 0;
}

/* Writes text to a new temporary file; returns its path in buf. */
static void write_temp(const char *text, const char *suffix, char *buf, size_t len) {
    snprintf(
        buf, len, "%s/yg_jit_dump_XXXXXX%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", suffix);
    int fd = mkstemps(buf, (int)strlen(suffix));
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static yg_graph *parse_ok(const char *text) {
    yg_graph *g = NULL;
    YG_CHECK(yg_graph_parse(text, (int64_t)strlen(text), &g));
    return g;
}

static void test_json_dump_of_every_test_graph_matches_the_schema(void **state) {
    (void)state;
    char checker[1024], schema[1024], files[4][256], cmd[4096];
    size_t pos;
    if (!have_command("python3"))
        fail_msg("python3 is needed to run tools/check_ir_json.py: run scripts/install-deps.sh");
    source_path(checker, sizeof checker, "tools/check_ir_json.py");
    source_path(schema, sizeof schema, "tools/ir_graph.schema.json");
    pos = (size_t)snprintf(cmd, sizeof cmd, "python3 %s %s", checker, schema);
    for (size_t i = 0; i < sizeof graphs / sizeof graphs[0]; i++) {
        yg_graph *g = parse_ok(graphs[i]);
        char *json = NULL;
        YG_CHECK(yg_graph_to_json(g, &json));
        write_temp(json, ".json", files[i], sizeof files[i]);
        pos += (size_t)snprintf(cmd + pos, sizeof cmd - pos, " %s", files[i]);
        yg_string_release(json);
        yg_graph_release(g);
    }
    int rc = system(cmd);
    for (size_t i = 0; i < sizeof graphs / sizeof graphs[0]; i++)
        remove(files[i]);
    if (rc != 0)
        print_error("%s failed (%d)\n", cmd, rc);
    assert_int_equal(rc, 0);
}

static void test_json_dump_spells_types_attributes_and_edges(void **state) {
    (void)state;
    const char *expected[] = {
        "{\"inputs\": [{\"name\": \"x\", \"type\": {\"kind\": \"Tensor\", \"dtype\": null, "
        "\"device\": null, \"sizes\": null, \"requires_grad\": null}}],",
        "{\"name\": \"other\", \"kind\": \"float\", \"value\": \"nan\"}",
        "{\"name\": \"rounding_mode\", \"kind\": \"str\", \"value\": "
        "\"q\\\"\\\\\\u000a\\u0001\\u00ff\"}",
        "{\"name\": \"dim\", \"kind\": \"ints\", \"value\": [0, -1]}",
        "{\"id\": 4, \"kind\": \"max.dim\", \"inputs\": [\"g\"], \"outputs\": [{\"name\": \"v\"",
        "{\"value\": \"g\", \"from\": {\"node\": 3, \"index\": 0}, \"to\": {\"node\": 4, "
        "\"index\": 0}}",
        "{\"value\": \"i\", \"from\": {\"node\": 4, \"index\": 1}, \"to\": {\"node\": -1, "
        "\"index\": 0}}",
        "\"outputs\": [\"i\"]}",
    };
    yg_graph *g = parse_ok(graphs[1]);
    char *json = NULL;
    YG_CHECK(yg_graph_to_json(g, &json));
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        if (strstr(json, expected[i]) == NULL)
            print_error("JSON\n%s\nlacks\n%s\n", json, expected[i]);
        assert_non_null(strstr(json, expected[i]));
    }
    yg_string_release(json);
    yg_graph_release(g);
}

static void test_dot_dump_renders_with_graphviz(void **state) {
    (void)state;
    char path[256], svg[300], cmd[1024];
    if (!have_command("dot"))
        fail_msg("Graphviz's dot is needed: run scripts/install-deps.sh (installs graphviz)");
    for (size_t i = 0; i < sizeof graphs / sizeof graphs[0]; i++) {
        yg_graph *g = parse_ok(graphs[i]);
        char *dot = NULL;
        YG_CHECK(yg_graph_to_dot(g, &dot));
        write_temp(dot, ".dot", path, sizeof path);
        snprintf(svg, sizeof svg, "%s.svg", path);
        snprintf(cmd, sizeof cmd, "dot -Tsvg %s -o %s", path, svg);
        int rc = system(cmd);
        if (rc != 0)
            print_error("%s failed (%d) on:\n%s\n", cmd, rc, dot);
        assert_int_equal(rc, 0);
        FILE *f = fopen(svg, "r");
        assert_non_null(f);
        char head[512] = "";
        size_t n = fread(head, 1, sizeof head - 1, f);
        fclose(f);
        head[n] = '\0';
        assert_non_null(strstr(head, "<svg"));
        remove(path);
        remove(svg);
        yg_string_release(dot);
        yg_graph_release(g);
    }
}

static void test_dot_dump_nests_subgraphs_as_clusters(void **state) {
    (void)state;
    yg_graph *g = parse_ok(graphs[3]);
    char *dot = NULL;
    YG_CHECK(yg_graph_to_dot(g, &dot));
    assert_non_null(strstr(dot, "digraph yagrad {"));
    assert_non_null(strstr(dot, "subgraph cluster_g1 {"));
    assert_non_null(strstr(dot, "subgraph cluster_g2 {")); /* df, inside g1 */
    assert_non_null(strstr(dot, "subgraph cluster_g3 {")); /* f */
    assert_non_null(strstr(dot, "g0_n0 -> g1_entry [style=dashed"));
    assert_non_null(strstr(dot, "g3_in0 -> g3_n0 [label=\"%p\", tooltip=\"%p : Tensor\"]"));
    /* g2 and g3 are drawn inside g1: they open before g1 closes. */
    assert_true(strstr(dot, "cluster_g3") < strstr(dot, "g0_n0 -> g1_entry"));
    yg_string_release(dot);
    yg_graph_release(g);
}

/* Counts the occurrences of needle in haystack. */
static int count_of(const char *haystack, const char *needle) {
    int n = 0;
    for (const char *p = strstr(haystack, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* tools/ir_viewer.html opened in a real browser (headless Chromium) on the
 * JSON dump of the nested test graph, through the viewer's #json= address:
 * the rendered page must hold one box per node of every graph and one
 * collapsible section per subgraph. */
static void test_viewer_renders_nested_graph_in_chromium(void **state) {
    (void)state;
    static const char unreserved[] = "-_.~";
    char viewer[1024], out[256];
    if (!have_command("chromium"))
        fail_msg("chromium is needed to check tools/ir_viewer.html: run scripts/install-deps.sh");
    source_path(viewer, sizeof viewer, "tools/ir_viewer.html");
    yg_graph *g = parse_ok(graphs[3]);
    char *json = NULL;
    YG_CHECK(yg_graph_to_json(g, &json));
    size_t len = strlen(json), pos = 0, cap = 3 * len + 2048;
    char *cmd = malloc(cap);
    assert_non_null(cmd);
    write_temp("", ".html", out, sizeof out);
    pos += (size_t)snprintf(cmd, cap,
                            "chromium --headless --no-sandbox --disable-gpu --dump-dom "
                            "'file://%s#json=",
                            viewer);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)json[i];
        if (isalnum(c) || strchr(unreserved, c) != NULL)
            cmd[pos++] = (char)c;
        else
            pos += (size_t)snprintf(cmd + pos, cap - pos, "%%%02X", c);
    }
    snprintf(cmd + pos, cap - pos, "' > %s 2> /dev/null", out);
    int rc = system(cmd);
    free(cmd);
    yg_string_release(json);
    yg_graph_release(g);
    assert_int_equal(rc, 0);

    FILE *f = fopen(out, "r");
    assert_non_null(f);
    static char dom[1 << 16];
    size_t n = fread(dom, 1, sizeof dom - 1, f);
    fclose(f);
    remove(out);
    dom[n] = '\0';
    if (count_of(dom, "<g class=\"node") != 3 || count_of(dom, "<details") != 3)
        print_error("rendered page:\n%s\n", dom);
    /* FusionGroup in the graph, DifferentiableGraph in its subgraph, neg in f. */
    assert_int_equal(count_of(dom, "<g class=\"node"), 3);
    assert_int_equal(count_of(dom, "<details"), 3); /* subgraph, df, f */
    assert_non_null(strstr(dom, "prim::DifferentiableGraph"));
    assert_null(strstr(dom, "<p class=\"err\">")); /* the viewer could not read it */
}

static void test_dumps_reject_null_arguments(void **state) {
    (void)state;
    char *s = (char *)0x1;
    yg_graph *g = parse_ok(graphs[0]);
    YG_EXPECT_ERROR(yg_graph_to_json(NULL, &s), YG_ERR_INVALID_ARGUMENT, "graph_to_json:");
    assert_null(s);
    YG_EXPECT_ERROR(yg_graph_to_dot(g, NULL), YG_ERR_INVALID_ARGUMENT, "graph_to_dot:");
    yg_graph_release(g);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_dump_of_every_test_graph_matches_the_schema),
        cmocka_unit_test(test_json_dump_spells_types_attributes_and_edges),
        cmocka_unit_test(test_dot_dump_renders_with_graphviz),
        cmocka_unit_test(test_dot_dump_nests_subgraphs_as_clusters),
        cmocka_unit_test(test_viewer_renders_nested_graph_in_chromium),
        cmocka_unit_test(test_dumps_reject_null_arguments),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
