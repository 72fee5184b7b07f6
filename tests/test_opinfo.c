/*
 * test_opinfo.c - generic checks over the OpInfo table (tests/opinfo/):
 * every op of yg__ops[] has samples; every dtype an op claims in
 * specs/native_functions.yaml ('dtypes:', yg_op_info.dtypes) runs and
 * every other dtype is refused with a message naming the op and the dtype;
 * non-contiguous inputs give the values of their contiguous copies; ops
 * that take any shape take 0-dim and empty inputs; in-place ops equal
 * their out-of-place twins.  Gradients are test_gradcheck.c's, forward
 * values against NumPy tests/opinfo/numpy_ref.py's.
 */
#include "opinfo/opinfo.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool claims(const yg_op_info *op, yg_dtype d) {
    return (op->dtypes & YG_DTYPE_BIT(d)) != 0;
}

static bool has_floating_input(const sample *s) {
    for (int i = 0; i < s->n_inputs; i++)
        if (s->in[i].dtype != YG_INT64)
            return true;
    return false;
}

/* Runs s on inputs of dtype; *out gets the result (NULL on failure). */
static yg_status run(const sample *s,
                     uint64_t seed,
                     yg_dtype dtype,
                     bool noncontig,
                     int shape_mode,
                     yg_tensor **out) {
    yg_tensor *x[MAX_IN] = {0};
    yg_status st;

    for (int i = 0; i < s->n_inputs; i++)
        x[i] = opinfo_make_input(s, i, dtype, seed + (uint64_t)i, noncontig, shape_mode);
    *out = NULL;
    st = opinfo_call(s, x, out);
    for (int i = 0; i < s->n_inputs; i++)
        yg_release(x[i]);
    return st;
}

/* Whether a and b have the same dtype, sizes and values (within tol,
 * relative to the larger magnitude; NaNs equal). */
static bool same_values(const yg_tensor *a, const yg_tensor *b, double tol, char *why, size_t len) {
    double *va, *vb;
    int64_t n = yg_tensor_numel(a);
    bool ok = true;

    if (yg_tensor_dtype(a) != yg_tensor_dtype(b) || yg_tensor_ndim(a) != yg_tensor_ndim(b) ||
        n != yg_tensor_numel(b) ||
        (yg_tensor_ndim(a) > 0 && memcmp(yg_tensor_sizes(a),
                                         yg_tensor_sizes(b),
                                         (size_t)yg_tensor_ndim(a) * sizeof(int64_t)) != 0)) {
        char sa[64], sb[64];
        snprintf(why,
                 len,
                 "%s %s vs %s %s",
                 yg_dtype_name(yg_tensor_dtype(a)),
                 yg_tensor_format_sizes(a, sa, sizeof sa),
                 yg_dtype_name(yg_tensor_dtype(b)),
                 yg_tensor_format_sizes(b, sb, sizeof sb));
        return false;
    }
    va = yg_test_values(a);
    vb = yg_test_values(b);
    for (int64_t i = 0; i < n && ok; i++) {
        double scale = fmax(1.0, fmax(fabs(va[i]), fabs(vb[i])));
        if (isnan(va[i]) && isnan(vb[i]))
            continue;
        if (!(fabs(va[i] - vb[i]) <= tol * scale)) {
            snprintf(why, len, "element %lld: %.17g vs %.17g", (long long)i, va[i], vb[i]);
            ok = false;
        }
    }
    free(va);
    free(vb);
    return ok;
}

static bool has_sample(const char *op) {
    for (int s = 0; s < opinfo_sample_count(); s++)
        if (strcmp(opinfo_sample_at(s)->op, op) == 0)
            return true;
    return false;
}

static bool is_known_gap(const char *op) {
    for (const char *const *g = opinfo_known_gaps; *g != NULL; g++)
        if (strcmp(*g, op) == 0)
            return true;
    return false;
}

/* Prints a row to paste for op (the test failing is the place a new op's
 * author looks): a call wrapper passing the Tensor arguments as x[i] and
 * the others as placeholders to fill in, and a row with float64 inputs. */
static void print_row_to_paste(const yg_op_info *op) {
    char cname[128], call[512] = "", inputs[256] = "";
    int n_tensor = 0, depth = 0;
    size_t k = 0;
    for (const char *c = op->name; *c != '\0' && k + 1 < sizeof cname; c++)
        cname[k++] = *c == '.' ? '_' : (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    cname[k] = '\0';
    const char *a = strchr(op->schema, '(');
    const char *end = strstr(op->schema, ") ->");
    if (a == NULL || end == NULL)
        return;
    for (const char *p = a + 1; p < end;) {
        while (*p == ' ' || *p == ',' || *p == '*')
            p++;
        const char *q = p;
        for (depth = 0; q < end && (depth > 0 || *q != ','); q++)
            depth += *q == '[' ? 1 : *q == ']' ? -1 : 0;
        if (q > p) {
            char arg[128];
            snprintf(arg, sizeof arg, "%.*s", (int)(q - p), p);
            char piece[160];
            if (strncmp(arg, "Tensor ", 7) == 0 || strncmp(arg, "Tensor(", 7) == 0) {
                snprintf(piece, sizeof piece, "%sx[%d]", call[0] ? ", " : "", n_tensor);
                snprintf(inputs + strlen(inputs), sizeof inputs - strlen(inputs),
                         "%sF64(-1, 1, 2, 3)", n_tensor ? ", " : "");
                n_tensor++;
            } else {
                snprintf(piece, sizeof piece, "%s/* %s */", call[0] ? ", " : "", arg);
            }
            snprintf(call + strlen(call), sizeof call - strlen(call), "%s", piece);
        }
        p = q;
    }
    print_error("  a row to start from (tests/opinfo/samples_*.c; fill in the /* */ arguments "
                "and a value range the op is smooth on):\n"
                "    static yg_status f_%s(yg_tensor *const *x, yg_tensor **o) { return yg_%s(%s%so); }\n"
                "    {\"%s\", \"<what the sample covers>\", %d, {%s}, f_%s},\n",
                cname, cname, call, call[0] ? ", " : "", op->name, n_tensor, inputs, cname);
}

static void test_every_op_has_samples(void **state) {
    int missing = 0, gaps = 0;
    (void)state;
    for (int32_t i = 0; i < yg__ops_count; i++) {
        if (has_sample(yg__ops[i].name))
            continue;
        if (is_known_gap(yg__ops[i].name)) {
            print_message("known gap: %s (%s) has no OpInfo sample yet "
                          "(tests/opinfo/opinfo.c opinfo_known_gaps)\n",
                          yg__ops[i].name,
                          yg__ops[i].location);
            gaps++;
            continue;
        }
        print_error("op %s (%s) has no sample in tests/opinfo/samples_*.c\n",
                    yg__ops[i].name,
                    yg__ops[i].location);
        print_row_to_paste(&yg__ops[i]);
        missing++;
    }
    for (const char *const *g = opinfo_known_gaps; *g != NULL; g++) {
        if (opinfo_op(*g) == NULL || has_sample(*g)) {
            print_error("%s is listed in opinfo_known_gaps but %s: remove it from the list\n",
                        *g,
                        opinfo_op(*g) == NULL ? "is no op" : "has samples");
            missing++;
        }
    }
    if (gaps > 0)
        print_message("%d of %d ops are known gaps without samples\n", gaps, (int)yg__ops_count);
    assert_int_equal(missing, 0);
}

static void test_every_sample_names_an_op(void **state) {
    int stale = 0;
    (void)state;
    for (int s = 0; s < opinfo_sample_count(); s++) {
        if (opinfo_op(opinfo_sample_at(s)->op) == NULL) {
            print_error("sample for %s names no op of specs/native_functions.yaml\n",
                        opinfo_sample_at(s)->op);
            stale++;
        }
    }
    assert_int_equal(stale, 0);
}

static bool sweeps_dtypes(const sample *s) {
    return (s->flags & OPINFO_NO_DTYPE_SWEEP) == 0 && has_floating_input(s);
}

/* Whether the dtype runners leave dtype d out for s (OPINFO_JOINS_WITH_CAT). */
static bool skips(const sample *s, yg_dtype d)
{
    return (s->flags & OPINFO_JOINS_WITH_CAT) && !claims(opinfo_op("cat"), d);
}

/* The op's name as messages spell it: "sum" for "sum.dim". */
static void display_name(const char *op, char *buf, size_t len) {
    snprintf(buf, len, "%s", op);
    buf[strcspn(buf, ".")] = '\0';
}

static void test_claimed_dtypes_run(void **state) {
    int failures = 0;
    (void)state;
    for (int i = 0; i < opinfo_sample_count(); i++) {
        const sample *s = opinfo_sample_at(i);
        const yg_op_info *op = opinfo_op(s->op);
        if (op == NULL || !sweeps_dtypes(s))
            continue;
        for (int d = 0; d < YG_DTYPE_COUNT_; d++) {
            yg_tensor *y = NULL;
            if (!claims(op, (yg_dtype)d) || skips(s, (yg_dtype)d))
                continue;
            if (opinfo_refused_on(s, (yg_dtype)d)) {
                char name[64];
                display_name(s->op, name, sizeof name);
                if (run(s, 300 + (uint64_t)i, (yg_dtype)d, false, 0, &y) == YG_OK ||
                    strstr(yg_last_error(), name) == NULL ||
                    strstr(yg_last_error(), "is not an integer") == NULL ||
                    strstr(yg_last_error(), yg_dtype_name((yg_dtype)d)) == NULL) {
                    print_error("%s (%s) passes a fractional Scalar: %s should refuse it with "
                                "\"<op>: <arg> <value> is not an integer, <input> is %s\", got: "
                                "%s\n",
                                s->op,
                                s->what,
                                yg_dtype_name((yg_dtype)d),
                                yg_dtype_name((yg_dtype)d),
                                y != NULL ? "a result" : yg_last_error());
                    failures++;
                }
                yg_release(y);
                continue;
            }
            if (run(s, 300 + (uint64_t)i, (yg_dtype)d, false, 0, &y) != YG_OK) {
                print_error("%s (%s) claims %s but fails on it: %s\n",
                            s->op,
                            s->what,
                            yg_dtype_name((yg_dtype)d),
                            yg_last_error());
                failures++;
            }
            yg_release(y);
        }
    }
    assert_int_equal(failures, 0);
}

static const opinfo_accepted *accepted(const char *op, yg_dtype d) {
    for (const opinfo_accepted *a = opinfo_accepts_unclaimed; a->op != NULL; a++)
        if (strcmp(a->op, op) == 0 && a->dtype == d)
            return a;
    return NULL;
}

static void test_unclaimed_dtypes_are_refused(void **state) {
    int failures = 0;
    (void)state;
    for (const opinfo_accepted *a = opinfo_accepts_unclaimed; a->op != NULL; a++) {
        const yg_op_info *op = opinfo_op(a->op);
        bool runs = false;
        for (int i = 0; i < opinfo_sample_count() && op != NULL; i++) {
            const sample *s = opinfo_sample_at(i);
            yg_tensor *y = NULL;
            if (strcmp(s->op, a->op) == 0 && sweeps_dtypes(s))
                runs |= run(s, 300 + (uint64_t)i, a->dtype, false, 0, &y) == YG_OK;
            yg_release(y);
        }
        if (op == NULL || claims(op, a->dtype) || !runs) {
            print_error("opinfo_accepts_unclaimed lists %s on %s, but %s: remove the entry\n",
                        a->op,
                        yg_dtype_name(a->dtype),
                        op == NULL             ? "there is no such op"
                        : claims(op, a->dtype) ? "the op claims it"
                                               : "no sample runs on it");
            failures++;
        } else {
            print_message("accepted though not claimed: %s on %s (%s)\n",
                          a->op,
                          yg_dtype_name(a->dtype),
                          a->why);
        }
    }
    for (int i = 0; i < opinfo_sample_count(); i++) {
        const sample *s = opinfo_sample_at(i);
        const yg_op_info *op = opinfo_op(s->op);
        char name[64];
        if (op == NULL || !sweeps_dtypes(s))
            continue;
        display_name(s->op, name, sizeof name);
        for (int d = 0; d < YG_DTYPE_COUNT_; d++) {
            yg_tensor *y = NULL;
            const char *dn = yg_dtype_name((yg_dtype)d);
            if (claims(op, (yg_dtype)d) || accepted(s->op, (yg_dtype)d) != NULL ||
                skips(s, (yg_dtype)d))
                continue;
            if (run(s, 300 + (uint64_t)i, (yg_dtype)d, false, 0, &y) == YG_OK) {
                print_error("%s (%s) does not claim %s but runs on it: add it to 'dtypes:' "
                            "(%s) or refuse it\n",
                            s->op,
                            s->what,
                            dn,
                            op->location);
                failures++;
            } else if (strstr(yg_last_error(), name) == NULL ||
                       strstr(yg_last_error(), dn) == NULL) {
                print_error("%s (%s) refuses %s, but the message names not both '%s' and '%s': "
                            "%s\n",
                            s->op,
                            s->what,
                            dn,
                            name,
                            dn,
                            yg_last_error());
                failures++;
            }
            yg_release(y);
        }
    }
    assert_int_equal(failures, 0);
}

static void test_noncontiguous_inputs_match_contiguous(void **state) {
    int failures = 0, checked = 0;
    (void)state;
    for (int i = 0; i < opinfo_sample_count(); i++) {
        const sample *s = opinfo_sample_at(i);
        yg_tensor *a = NULL, *b = NULL;
        char why[160];
        yg_status sa = run(s, 500 + (uint64_t)i, YG_FLOAT64, false, 0, &a);
        yg_status sb = run(s, 500 + (uint64_t)i, YG_FLOAT64, true, 0, &b);
        if (s->flags & OPINFO_CONTIGUOUS_ONLY) {
            if (sa != YG_OK || sb == YG_OK) {
                print_error("%s (%s): marked OPINFO_CONTIGUOUS_ONLY but %s\n",
                            s->op,
                            s->what,
                            sa != YG_OK ? "fails on contiguous inputs"
                                        : "takes non-contiguous ones");
                failures++;
            }
        } else if (sa != YG_OK || sb != YG_OK) {
            print_error("%s (%s): %s inputs fail: %s\n",
                        s->op,
                        s->what,
                        sa != YG_OK ? "contiguous" : "non-contiguous",
                        yg_last_error());
            failures++;
        } else if (!same_values(a, b, 1e-12, why, sizeof why)) {
            print_error(
                "%s (%s): non-contiguous inputs give other values: %s\n", s->op, s->what, why);
            failures++;
        }
        checked++;
        yg_release(a);
        yg_release(b);
    }
    assert_true(checked > 0);
    assert_int_equal(failures, 0);
}

static void test_any_shape_ops_take_0dim_and_empty(void **state) {
    int failures = 0;
    (void)state;
    for (int i = 0; i < opinfo_sample_count(); i++) {
        const sample *s = opinfo_sample_at(i);
        const yg_op_info *op = opinfo_op(s->op);
        if ((s->flags & OPINFO_FIXED_SHAPE) || ((s->flags & OPINFO_ANY_SHAPE) == 0 &&
                                                (op == NULL || op->kind != YG_OP_KIND_POINTWISE)))
            continue;
        for (int mode = 1; mode <= 2; mode++) {
            yg_tensor *y = NULL;
            if (run(s, 700 + (uint64_t)i, YG_FLOAT64, mode == 2, mode, &y) != YG_OK) {
                print_error("%s (%s): %s inputs fail: %s\n",
                            s->op,
                            s->what,
                            mode == 1 ? "0-dim" : "empty",
                            yg_last_error());
                failures++;
            } else if ((mode == 1 && yg_tensor_ndim(y) != 0) ||
                       (mode == 2 && yg_tensor_numel(y) != 0)) {
                print_error("%s (%s): %s inputs give a result of %lld elements in %lld dims\n",
                            s->op,
                            s->what,
                            mode == 1 ? "0-dim" : "empty",
                            (long long)yg_tensor_numel(y),
                            (long long)yg_tensor_ndim(y));
                failures++;
            }
            yg_release(y);
        }
    }
    assert_int_equal(failures, 0);
}

/* The out-of-place twin of an in-place op's name ("add" for "add_",
 * "mul.Scalar" for "mul_.Scalar"), in buf; false when name is not
 * in-place. */
static bool twin_name(const char *name, char *buf, size_t len) {
    size_t base = strcspn(name, ".");
    if (base < 2 || name[base - 1] != '_' || base >= len)
        return false;
    snprintf(buf, len, "%.*s%s", (int)(base - 1), name, name + base);
    return true;
}

static void test_inplace_matches_out_of_place(void **state) {
    int failures = 0;
    (void)state;
    for (int32_t k = 0; k < yg__ops_count; k++) {
        char twin[64];
        int compared = 0;
        if (!twin_name(yg__ops[k].name, twin, sizeof twin))
            continue;
        if (opinfo_op(twin) == NULL) {
            print_message(
                "%s: no out-of-place twin '%s' in the YAML; not compared\n", yg__ops[k].name, twin);
            continue;
        }
        for (int i = 0; i < opinfo_sample_count(); i++) {
            const sample *s = opinfo_sample_at(i);
            if (strcmp(s->op, yg__ops[k].name) != 0 || s->twin == NULL)
                continue;
            for (int d = 0; d < YG_DTYPE_COUNT_; d++) {
                yg_tensor *x[MAX_IN] = {0}, *a = NULL, *b = NULL;
                char why[160];
                if (!claims(&yg__ops[k], (yg_dtype)d) || (d != YG_FLOAT64 && d != YG_FLOAT32) ||
                    (d != YG_FLOAT64 && !sweeps_dtypes(s)))
                    continue;
                for (int j = 0; j < s->n_inputs; j++)
                    x[j] = opinfo_make_input(s, j, (yg_dtype)d, 900 + (uint64_t)(i + j), false, 0);
                yg_manual_seed(OPINFO_SEED);
                YG_CHECK(s->twin(x, &b));
                YG_CHECK(opinfo_call(s, x, &a));
                if (!same_values(a, b, 0, why, sizeof why)) {
                    print_error("%s (%s, %s) differs from %s: %s\n",
                                s->op,
                                s->what,
                                yg_dtype_name((yg_dtype)d),
                                twin,
                                why);
                    failures++;
                }
                compared++;
                yg_release(a);
                yg_release(b);
                for (int j = 0; j < s->n_inputs; j++)
                    yg_release(x[j]);
            }
        }
        if (compared == 0 && has_sample(yg__ops[k].name)) {
            print_error("%s has an out-of-place twin %s but no sample with a twin call "
                        "(INPLACE_TWIN_SAMPLE in tests/opinfo/)\n",
                        yg__ops[k].name,
                        twin);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_op_has_samples),
        cmocka_unit_test(test_every_sample_names_an_op),
        cmocka_unit_test(test_claimed_dtypes_run),
        cmocka_unit_test(test_unclaimed_dtypes_are_refused),
        cmocka_unit_test(test_noncontiguous_inputs_match_contiguous),
        cmocka_unit_test(test_any_shape_ops_take_0dim_and_empty),
        cmocka_unit_test(test_inplace_matches_out_of_place),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
