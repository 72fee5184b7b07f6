/*
 * emit_ops_h.c - writes the public declaration of every op in
 * specs/native_functions.yaml, in YAML order: include/yagrad/ops_<section>.h
 * per section, gathered by include/yagrad/ops.h.
 *
 * The header is the manual: its top comment states the contract every op
 * shares (borrowed inputs, new-reference outputs, the failure guarantee of
 * status.h, autograd), and each declaration carries its schema, its doc
 * (the '#' comment above its entry in the YAML, see gen_op.doc) and an
 * ownership comment per parameter.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

static const char ops_h_contract[] =
    "/*\n"
    " * yagrad/ops.h - every op of yagrad, generated from specs/native_functions.yaml.\n"
    " *\n"
    " * Names: yg_<name>[_<overload>]; in-place ops end in \"_\" (yg_add_).  Each\n"
    " * declaration shows the op's schema and what the op computes (the comment\n"
    " * above its entry in the YAML); generated/registry.c gives the YAML line it\n"
    " * comes from.  The declarations live in one header per\n"
    " * section of the YAML (yagrad/ops_<section>.h), all included below;\n"
    " * include this header, not those.\n"
    " *\n"
    " * Ownership: tensor inputs are borrowed (the caller keeps its reference; an\n"
    " * op that needs a tensor later takes its own).  \"in-out\" tensors are\n"
    " * modified in place.  Every out-parameter receives a NEW reference, which\n"
    " * the caller releases with yg_release(); a view shares its base's storage.\n"
    " * Lists are (const int64_t *items, int64_t items_len) pairs.  \"nullable\"\n"
    " * tensors may be NULL; any other tensor argument that is NULL makes the op\n"
    " * fail with a message naming the argument.  An op returning Tensor[]\n"
    " * (yg_split) writes a new array of *out_len new references to *out;\n"
    " * release it with yg_release_list(*out, *out_len).\n"
    " *\n"
    " * Failure (see status.h): on any status other than YG_OK every out-parameter\n"
    " * is NULL, the inputs are unchanged, nothing is leaked, and yg_last_error()\n"
    " * names the op and the offending shapes, dtypes or devices.  A declaration's\n"
    " * \"Dtypes:\" line lists the dtypes its floating tensor inputs may have (the\n"
    " * spec's claim, which the OpInfo tests check both ways); any other fails\n"
    " * with YG_ERR_DTYPE unless its doc says otherwise.  Its \"Checked:\" line\n"
    " * lists what the op checks before it runs (an enum argument's value, the\n"
    " * length of an int[N] list); a violation fails with\n"
    " * YG_ERR_INVALID_ARGUMENT.  The doc names the op's other errors.\n"
    " *\n"
    " * Autograd (see autograd.h): with grad mode on, an op with a formula in\n"
    " * specs/derivatives.yaml records a backward node when an input requires\n"
    " * grad; an op without one fails with YG_ERR_NOT_IMPLEMENTED in that case\n"
    " * rather than silently cut the graph.  Composite ops record their parts.\n"
    " *\n"
    " * Thread safety: ops may run concurrently on tensors that are not written\n"
    " * concurrently.  Anything not declared here is not API.\n"
    " */\n";

char *gen_emit_ops_h(const gen_model *model)
{
    gen_sb sb = {0};

    gen_emit_marker(&sb, GEN_NATIVE_FILE);
    gen_sb_puts(&sb, ops_h_contract);
    gen_sb_puts(&sb, "#ifndef YAGRAD_OPS_H\n#define YAGRAD_OPS_H\n\n");
    for (int i = 0; i < model->n_sections; i++)
        gen_sb_printf(&sb, "#include \"yagrad/ops_%s.h\"\n", model->sections[i].name);
    gen_sb_puts(&sb, "\n#endif /* YAGRAD_OPS_H */\n");
    return gen_sb_take(&sb);
}

/* Appends " * <line>" for each line of doc to sb, wrapping a line longer
 * than 100 columns at its last space before them (continuation lines keep
 * the line's indentation); an empty line is " *". */
static void emit_doc_lines(gen_sb *sb, const char *doc)
{
    enum { WIDTH = 100 - 3 }; /* after " * " */

    for (const char *p = doc; *p != '\0';) {
        size_t n = strcspn(p, "\n");
        size_t indent = strspn(p, " ");
        const char *s = p;
        size_t left = n;
        bool first = true;
        while (left > 0) {
            size_t room = first ? WIDTH : WIDTH - indent;
            size_t take = left;
            if (left > room) {
                size_t lead = first ? indent : 0;
                take = room;
                while (take > lead && s[take] != ' ')
                    take--;
                if (take == lead) { /* one word wider than the line: leave it long */
                    take = lead + strcspn(s + lead, " ");
                    take = take < left ? take : left;
                }
            }
            size_t shown = take;
            while (shown > 0 && s[shown - 1] == ' ')
                shown--;
            gen_sb_printf(sb, " * %*s%.*s\n", first ? 0 : (int)indent, "", (int)shown, s);
            s += take;
            left -= take;
            while (left > 0 && *s == ' ') {
                s++;
                left--;
            }
            first = false;
        }
        if (n == 0)
            gen_sb_puts(sb, " *\n");
        p += n;
        if (*p == '\n')
            p++;
    }
}

/* What the header says of an op besides its doc, from the spec alone:
 * "Dtypes: float32, float64." (its claim, which OpInfo tests both ways)
 * and "Checked: ..." for what its entry point checks before it runs (an
 * enum value, the length of an int[N] list).  yagrad/ops.h says what
 * failing either gives. */
static void spec_facts(gen_sb *sb, const gen_op *op)
{
    uint32_t all = (UINT32_C(1) << gen_n_dtypes) - 1;
    gen_sb checked = {0};
    bool tensor_in = false;
    int n = 0;

    for (int i = 0; i < op->schema.n_args; i++)
        tensor_in |= gen_arg_is_input(&op->schema.args[i]);
    /* The claim is of floating tensor inputs: creation ops have none. */
    if (tensor_in && (op->dtypes & all) == all) {
        gen_sb_puts(sb, "Dtypes: any.");
    } else if (tensor_in) {
        gen_sb_puts(sb, "Dtypes:");
        for (int d = 0, k = 0; d < gen_n_dtypes; d++)
            if (op->dtypes & (UINT32_C(1) << d))
                gen_sb_printf(sb, "%s %s", k++ == 0 ? "" : ",", gen_dtypes[d].name);
        gen_sb_puts(sb, ".");
    }
    for (int i = 0; i < op->schema.n_args; i++) {
        const gen_arg *a = &op->schema.args[i];
        const gen_enum *e = gen_arg_enum(a);
        if (e != NULL) {
            gen_sb_printf(&checked, "%s%s is ", n++ == 0 ? "" : "; ", a->name);
            for (int v = 0; v < e->n_values; v++)
                gen_sb_printf(&checked, "%s%s", v == 0 ? "" : v + 1 == e->n_values ? " or " : ", ",
                              e->values[v]);
            continue;
        }
        /* bool[N] has no length to check: the pointer holds N entries. */
        if (!gen_arg_is_int_list(a) || a->fixed_len == 0)
            continue;
        /* int[N] lists with the same N, in a row, share one clause. */
        int last = i, count = 1;
        while (last + 1 < op->schema.n_args && gen_arg_is_int_list(&op->schema.args[last + 1]) &&
               op->schema.args[last + 1].fixed_len == a->fixed_len) {
            last++;
            count++;
        }
        gen_sb_puts(&checked, n++ == 0 ? "" : "; ");
        for (int k = i; k <= last; k++)
            gen_sb_printf(&checked, "%s%s", k == i ? "" : k == last ? " and " : ", ",
                          op->schema.args[k].name);
        gen_sb_printf(&checked, " %s %d entr%s%s", count == 1 ? "has" : "have", a->fixed_len,
                      a->fixed_len == 1 ? "y" : "ies", count == 1 ? "" : " each");
        i = last;
    }
    if (n > 0)
        gen_sb_printf(sb, "%sChecked: %s.", sb->len > 0 ? "  " : "", checked.buf);
    gen_sb_free(&checked);
}

/* The op's schema comment, with its doc (if any) as a paragraph under the
 * schema inside the same comment, and then the spec's facts (spec_facts). */
static void emit_schema_and_doc(gen_sb *sb, const gen_op *op)
{
    gen_sb schema = {0}, facts = {0};

    gen_emit_schema_only(&schema, "", op->func);
    spec_facts(&facts, op);
    if (op->doc == NULL && facts.len == 0) {
        gen_sb_putn(sb, schema.buf, schema.len);
        gen_sb_free(&schema);
        gen_sb_free(&facts);
        return;
    }
    gen_sb_putn(sb, schema.buf, schema.len - strlen(" */\n"));
    if (op->doc != NULL) {
        gen_sb_puts(sb, "\n *\n");
        emit_doc_lines(sb, op->doc);
    } else {
        gen_sb_puts(sb, "\n");
    }
    if (facts.len > 0) {
        gen_sb_puts(sb, " *\n");
        emit_doc_lines(sb, facts.buf);
    }
    gen_sb_puts(sb, " */\n");
    gen_sb_free(&schema);
    gen_sb_free(&facts);
}

char *gen_emit_ops_section_h(const gen_model *model, int section)
{
    gen_sb sb = {0};
    const char *sec = model->sections[section].name;
    char *guard = gen_xstrdup(sec);

    for (char *p = guard; *p != '\0'; p++)
        if (*p >= 'a' && *p <= 'z')
            *p = (char)(*p - 'a' + 'A');
    gen_emit_marker(&sb, GEN_NATIVE_FILE);
    gen_sb_printf(&sb,
                  "/*\n"
                  " * yagrad/ops_%s.h - the ops of section %s of\n"
                  " * specs/native_functions.yaml.  Include yagrad/ops.h, whose contract\n"
                  " * (ownership, failure, autograd, thread safety) every op here keeps.\n"
                  " */\n"
                  "#ifndef YAGRAD_OPS_%s_H\n#define YAGRAD_OPS_%s_H\n\n",
                  sec, sec, guard, guard);
    gen_sb_puts(&sb, "#include <stdbool.h>\n#include <stdint.h>\n\n");
    gen_sb_puts(&sb, "#include \"yagrad/enums.h\"\n#include \"yagrad/options.h\"\n"
                     "#include \"yagrad/random.h\"\n#include \"yagrad/status.h\"\n"
                     "#include \"yagrad/tensor.h\"\n\n");
    gen_sb_puts(&sb, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n");
    for (int i = 0; i < model->n_ops; i++) {
        const gen_op *op = &model->ops[i];
        gen_params params;
        if (!op->valid || op->section != section)
            continue;
        gen_sb_puts(&sb, "\n");
        emit_schema_and_doc(&sb, op);
        gen_op_params(op, &params);
        char *prefix = gen_xprintf("YG_NODISCARD yg_status yg_%s(", op->cname);
        gen_emit_call_decl(&sb, prefix, &params, true, ";");
        free(prefix);
        gen_params_free(&params);
        if (gen_op_has_options(op))
            gen_emit_options_decl(&sb, op);
    }
    gen_sb_printf(&sb, "\n#ifdef __cplusplus\n}\n#endif\n#endif /* YAGRAD_OPS_%s_H */\n", guard);
    free(guard);
    return gen_sb_take(&sb);
}

char *gen_emit_enums_h(const gen_model *model)
{
    gen_sb sb = {0};

    gen_emit_marker(&sb, GEN_NATIVE_FILE);
    gen_sb_puts(&sb,
                "/*\n"
                " * yagrad/enums.h - the enum argument types of the ops (the `- enum:` items\n"
                " * of specs/native_functions.yaml).  An op refuses a value outside its\n"
                " * enum (YG_ERR_INVALID_ARGUMENT, naming the values); yg_<enum>_name gives\n"
                " * a value's name, for messages.  In graphs (yagrad/jit.h) a value is a\n"
                " * str attribute naming it: mse_loss[reduction=\"none\"].\n"
                " */\n"
                "#ifndef YAGRAD_ENUMS_H\n#define YAGRAD_ENUMS_H\n\n"
                "#include <stdint.h>\n\n"
                "#ifdef __cplusplus\nextern \"C\" {\n#endif\n");
    for (int i = 0; i < model->n_enums; i++) {
        const gen_enum *e = &model->enums[i];
        gen_sb_printf(&sb, "\n/* %s\n", e->name);
        if (e->doc != NULL) {
            gen_sb_puts(&sb, " *\n");
            emit_doc_lines(&sb, e->doc);
        }
        gen_sb_printf(&sb, " */\ntypedef enum yg_%s {\n", e->cname);
        for (int v = 0; v < e->n_values; v++) {
            char *name = gen_enum_value_cname(e, v);
            gen_sb_printf(&sb, "    %s = %d,\n", name, v);
            free(name);
        }
        gen_sb_printf(&sb, "} yg_%s;\n\n", e->cname);
        gen_sb_printf(&sb,
                      "/* The name of value v (\"%s\", ...), NULL when v is none of them. */\n"
                      "static inline const char *yg_%s_name(int64_t v)\n{\n"
                      "    static const char *const names[] = {",
                      e->values[0], e->cname);
        for (int v = 0; v < e->n_values; v++)
            gen_sb_printf(&sb, "%s\"%s\"", v > 0 ? ", " : "", e->values[v]);
        gen_sb_printf(&sb, "};\n    return v >= 0 && v < %d ? names[v] : (const char *)0;\n}\n",
                      e->n_values);
    }
    gen_sb_puts(&sb, "\n#ifdef __cplusplus\n}\n#endif\n#endif /* YAGRAD_ENUMS_H */\n");
    return gen_sb_take(&sb);
}
