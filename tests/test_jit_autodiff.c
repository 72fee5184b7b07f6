/*
 * test_jit_autodiff.c - the graph derivatives (generated from the same
 * specs/derivatives.yaml formulas as the eager backward nodes) against the
 * eager gradients, for every derivative entry with a gradcheck sample:
 * each sample is traced, its graph differentiated (yg_graph_differentiate),
 * f and df run through the interpreter, and the gradients compared with
 * yg_backward's on the same cotangent.  An entry with a graph form that
 * no sample reaches fails, so the two forms cannot drift apart unnoticed.
 */
#include "generated_int.h"
#include "jit/autodiff/graph_grad.h"
#include "opinfo/opinfo.h"
#include "testutil.h"
#include "yagrad/autograd.h"
#include "yagrad/jit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static yg_status
call_sample(void *ctx, yg_tensor *const *in, int64_t n_in, yg_tensor **out, int64_t n_out) {
    (void)n_in;
    (void)n_out;
    return opinfo_call(ctx, in, &out[0]);
}

static int op_index(const char *name) {
    for (int i = 0; i < yg__ops_count; i++)
        if (strcmp(yg__ops[i].name, name) == 0)
            return i;
    return -1;
}

/* Whether s checks an entry that has a graph derivative. */
static bool has_graph_grad(const sample *s) {
    int i = op_index(s->op);
    const yg_derivative_info *d = opinfo_derivative(s->op);
    return i >= 0 && d != NULL && d->n_inputs > 0 && yg__graph_grad_ops[i].fn != NULL;
}

static int compare(const sample *s, int i, const yg_tensor *eager, const yg_tensor *graph) {
    if (eager == NULL || graph == NULL) {
        print_error("%s (%s): input %d: gradient %s\n",
                    s->op,
                    s->what,
                    i,
                    eager == NULL ? "missing in eager" : "missing from df");
        return 1;
    }
    if (yg_tensor_numel(eager) != yg_tensor_numel(graph) ||
        yg_tensor_ndim(eager) != yg_tensor_ndim(graph)) {
        print_error("%s (%s): input %d: shapes differ\n", s->op, s->what, i);
        return 1;
    }
    double *a = yg_test_values(eager), *b = yg_test_values(graph);
    int bad = 0;
    for (int64_t k = 0; k < yg_tensor_numel(eager) && !bad; k++) {
        if (fabs(a[k] - b[k]) > 1e-12 + 1e-10 * fabs(a[k])) {
            print_error("%s (%s): d/d input %d [%lld]: eager %.17g, graph %.17g\n",
                        s->op,
                        s->what,
                        i,
                        (long long)k,
                        a[k],
                        b[k]);
            bad = 1;
        }
    }
    free(a);
    free(b);
    return bad;
}

/* Cuts g after the first node of kind: its floating outputs that require
 * grad become g's outputs.  Returns their number (0: no such node). */
static int64_t cut_after(yg_graph *g, const char *kind) {
    yg_ir_node *n = yg_graph_first_node(g);
    while (n != NULL && strcmp(yg_ir_node_kind(n), kind) != 0)
        n = yg_ir_node_next(n);
    if (n == NULL)
        return 0;
    yg_ir_value *outs[16];
    int64_t k = 0;
    for (int64_t i = 0; i < yg_ir_node_num_outputs(n) && k < 16; i++) {
        yg_ir_type t = yg_ir_value_type(yg_ir_node_output(n, i));
        if (t.requires_grad == 1 && (t.dtype == YG_FLOAT64 || t.dtype == YG_FLOAT32))
            outs[k++] = yg_ir_node_output(n, i);
    }
    if (k > 0) {
        YG_CHECK(yg_graph_set_outputs(g, outs, k));
        YG_CHECK(yg_graph_eliminate_dead_code(g));
    }
    return k;
}

/* Traces s, keeps the graph up to its op's node, differentiates it and
 * compares df's gradients with eager autograd's through the same graph
 * (the interpreter records eager history) on the same cotangents.
 * *covered: the op's node was differentiated. */
static int check_sample(const sample *s, uint64_t seed, bool *covered) {
    yg_tensor *x[MAX_IN] = {0};
    yg_trace_result *tr = NULL;
    yg_gradient *gr = NULL;
    int failures = 0;

    *covered = false;
    for (int i = 0; i < s->n_inputs; i++) {
        x[i] = opinfo_make_input(s, i, YG_FLOAT64, seed + (uint64_t)i, false, 0);
        if (s->in[i].dtype == YG_FLOAT64 && !s->in[i].constant)
            YG_CHECK(yg_tensor_set_requires_grad(x[i], true));
    }
    YG_CHECK(yg_trace(call_sample, (void *)s, x, s->n_inputs, 1, NULL, &tr));
    int64_t n_y = cut_after(tr->graph, s->op);
    if (n_y == 0)
        goto out; /* the sample reaches the op another way: not counted */
    YG_CHECK(yg_graph_decompose_composites(tr->graph));
    yg_status st = yg_graph_differentiate(tr->graph, NULL, &gr);
    if (st != YG_OK) {
        print_error("%s (%s): differentiate: %s\n", s->op, s->what, yg_last_error());
        failures++;
        goto out;
    }
    int64_t n_in = yg_graph_num_inputs(gr->f), n_f = yg_graph_num_outputs(gr->f);
    int64_t n_df_in = yg_graph_num_inputs(gr->df), n_df = yg_graph_num_outputs(gr->df);
    yg_tensor **fin = calloc((size_t)n_in + 1, sizeof *fin);
    yg_tensor **y = calloc((size_t)n_y + 1, sizeof *y);
    yg_tensor **v = calloc((size_t)n_y + 1, sizeof *v);
    yg_tensor **fout = calloc((size_t)n_f + 1, sizeof *fout);
    yg_tensor **din = calloc((size_t)n_df_in + 1, sizeof *din);
    yg_tensor **dout = calloc((size_t)n_df + 1, sizeof *dout);
    const yg_tensor *wrt[MAX_IN];
    yg_tensor *eager[MAX_IN] = {0};
    int n_wrt = 0, which[MAX_IN];
    for (int64_t i = 0; i < n_in; i++)
        fin[i] = i < s->n_inputs ? x[i] : tr->params[i - s->n_inputs];
    /* Eager: the graph through the interpreter, with history. */
    YG_CHECK(yg_graph_run(tr->graph, fin, n_in, y, n_y));
    for (int64_t i = 0; i < n_y; i++)
        v[i] = yg_test_rand(YG_FLOAT64,
                            yg_tensor_sizes(y[i]),
                            yg_tensor_ndim(y[i]),
                            -1,
                            1,
                            seed + 99 + (uint64_t)i);
    for (int i = 0; i < s->n_inputs; i++)
        if (gr->grad_of_input[i] >= 0) {
            which[n_wrt] = i;
            wrt[n_wrt++] = x[i];
        }
    YG_CHECK(yg_grad((const yg_tensor *const *)y,
                     n_y,
                     (const yg_tensor *const *)v,
                     wrt,
                     n_wrt,
                     false,
                     false,
                     true,
                     eager));
    /* Graph: f, then df on the cotangents and the captures. */
    bool prev = yg_set_grad_enabled(false);
    YG_CHECK(yg_graph_run(gr->f, fin, n_in, fout, n_f));
    for (int64_t i = 0; i < n_y; i++)
        din[i] = v[i];
    for (int64_t k = 0; k < gr->n_captures; k++) {
        int64_t ref = gr->captures[k];
        din[gr->n_outputs + k] = ref >= 0 ? fin[ref] : fout[-1 - ref];
    }
    if (getenv("YG_TEST_PRINT_GRAPHS") != NULL) {
        char *t1 = NULL, *t2 = NULL;
        YG_CHECK(yg_graph_print(gr->f, &t1));
        YG_CHECK(yg_graph_print(gr->df, &t2));
        printf("%s (%s):\nf = %sdf = %s", s->op, s->what, t1, t2);
        yg_string_release(t1);
        yg_string_release(t2);
    }
    st = yg_graph_run(gr->df, din, n_df_in, dout, n_df);
    yg_set_grad_enabled(prev);
    if (st != YG_OK) {
        print_error("%s (%s): df: %s\n", s->op, s->what, yg_last_error());
        failures++;
    }
    for (int k = 0; st == YG_OK && k < n_wrt; k++) {
        yg_tensor *g = dout[gr->grad_of_input[which[k]]];
        if (eager[k] == NULL && g == NULL)
            continue; /* neither reaches the input */
        failures += compare(s, which[k], eager[k], g);
    }
    *covered = failures == 0;
    yg_release_list(y, n_y);
    yg_release_list(v, n_y);
    yg_release_list(fout, n_f);
    yg_release_list(dout, n_df);
    for (int k = 0; k < n_wrt; k++)
        yg_release(eager[k]);
    free(fin);
    free(din);
out:
    yg_gradient_release(gr);
    yg_trace_result_release(tr);
    for (int i = 0; i < s->n_inputs; i++)
        yg_release(x[i]);
    return failures;
}

static void test_every_graph_derivative_matches_eager(void **state) {
    (void)state;
    int failures = 0, checked = 0, uncovered = 0;
    bool *covered = calloc((size_t)yg__ops_count, sizeof *covered);

    for (int i = 0; i < opinfo_sample_count(); i++) {
        const sample *s = opinfo_sample_at(i);
        if (!has_graph_grad(s))
            continue;
        bool any_float = false;
        for (int k = 0; k < s->n_inputs; k++)
            any_float |= s->in[k].dtype == YG_FLOAT64 && !s->in[k].constant;
        if (!any_float)
            continue;
        bool ok = false;
        failures += check_sample(s, 3000 + (uint64_t)i * 7, &ok);
        checked++;
        covered[op_index(s->op)] |= ok;
    }
    for (int i = 0; i < yg__ops_count; i++) {
        if (yg__graph_grad_ops[i].fn != NULL && !covered[i]) {
            print_error("%s has a graph derivative that no passing sample checked\n",
                        yg__ops[i].name);
            uncovered++;
        }
    }
    printf("graph derivatives checked against eager: %d samples, %d failures, %d ops "
           "uncovered\n",
           checked,
           failures,
           uncovered);
    free(covered);
    assert_int_equal(failures + uncovered, 0);
}

/* Every differentiable sample traced and run through an executor (plans,
 * composites split, autodiff regions, fusion groups) gives eager's output
 * and gradients.  Samples the tracer cannot record are counted, not run. */
static int executor_sample(const sample *s, uint64_t seed, bool *ran) {
    yg_tensor *x[MAX_IN] = {0}, *ey = NULL, *jy = NULL, *v = NULL;
    yg_tensor *eg[MAX_IN] = {0}, *jg[MAX_IN] = {0};
    const yg_tensor *wrt[MAX_IN];
    int n_wrt = 0, failures = 0;
    yg_trace_result *tr = NULL;
    yg_executor *e = NULL;

    *ran = false;
    for (int i = 0; i < s->n_inputs; i++) {
        x[i] = opinfo_make_input(s, i, YG_FLOAT64, seed + (uint64_t)i, false, 0);
        if (s->in[i].dtype == YG_FLOAT64 && !s->in[i].constant) {
            YG_CHECK(yg_tensor_set_requires_grad(x[i], true));
            wrt[n_wrt++] = x[i];
        }
    }
    if (yg_trace(call_sample, (void *)s, x, s->n_inputs, 1, NULL, &tr) != YG_OK)
        goto out;
    YG_CHECK(yg_executor_create(tr->graph, NULL, &e));
    yg_tensor **in = calloc((size_t)(s->n_inputs + tr->n_params + 1), sizeof *in);
    for (int i = 0; i < s->n_inputs; i++)
        in[i] = x[i];
    for (int64_t i = 0; i < tr->n_params; i++)
        in[s->n_inputs + i] = tr->params[i];
    YG_CHECK(opinfo_call(s, x, &ey));
    yg_manual_seed(OPINFO_SEED); /* random ops draw what opinfo_call drew */
    yg_status st = yg_executor_run(e, in, s->n_inputs + tr->n_params, &jy, 1);
    free(in);
    if (st != YG_OK) {
        print_error("%s (%s): executor: %s\n", s->op, s->what, yg_last_error());
        failures++;
        goto out;
    }
    *ran = true;
    failures += compare(s, -1, ey, jy);
    if (!yg_tensor_requires_grad(ey) || !yg_tensor_requires_grad(jy)) {
        if (yg_tensor_requires_grad(ey) != yg_tensor_requires_grad(jy)) {
            print_error("%s (%s): requires_grad differs from eager\n", s->op, s->what);
            failures++;
        }
        goto out;
    }
    v = yg_test_rand(YG_FLOAT64, yg_tensor_sizes(ey), yg_tensor_ndim(ey), -1, 1, seed + 7);
    const yg_tensor *eys[1] = {ey}, *jys[1] = {jy}, *vs[1] = {v};
    YG_CHECK(yg_grad(eys, 1, vs, wrt, n_wrt, false, false, true, eg));
    st = yg_grad(jys, 1, vs, wrt, n_wrt, false, false, true, jg);
    if (st != YG_OK) {
        print_error("%s (%s): executor backward: %s\n", s->op, s->what, yg_last_error());
        failures++;
        goto out;
    }
    for (int i = 0; i < n_wrt; i++) {
        if (eg[i] == NULL && jg[i] == NULL)
            continue;
        failures += compare(s, i, eg[i], jg[i]);
    }
out:
    for (int i = 0; i < MAX_IN; i++) {
        yg_release(eg[i]);
        yg_release(jg[i]);
    }
    yg_executor_release(e);
    yg_trace_result_release(tr);
    yg_release(ey);
    yg_release(jy);
    yg_release(v);
    for (int i = 0; i < s->n_inputs; i++)
        yg_release(x[i]);
    return failures;
}

static void test_every_sample_through_the_executor_matches_eager(void **state) {
    (void)state;
    int failures = 0, ran = 0, skipped = 0;
    for (int i = 0; i < opinfo_sample_count(); i++) {
        const sample *s = opinfo_sample_at(i);
        bool any_float = false;
        for (int k = 0; k < s->n_inputs; k++)
            any_float |= s->in[k].dtype == YG_FLOAT64 && !s->in[k].constant;
        const yg_op_info *op = opinfo_op(s->op);
        if (!any_float || op == NULL || (s->flags & OPINFO_NO_GRAD))
            continue;
        bool r = false;
        failures += executor_sample(s, 9000 + (uint64_t)i * 3, &r);
        ran += r;
        skipped += !r;
    }
    printf("samples through the executor: %d ran, %d not traceable, %d failures\n",
           ran,
           skipped,
           failures);
    assert_int_equal(failures, 0);
}

/* What the generated table says: every derivative entry either has a
 * graph form, or its op is in-place, has no differentiable input, or
 * is marked with a reason. */
static void test_graph_derivative_coverage_is_listed(void **state) {
    (void)state;
    int with = 0, inplace = 0, marked = 0, no_grad = 0;
    for (int d = 0; d < yg__derivatives_count; d++) {
        int i = op_index(yg__derivatives[d].name);
        assert_true(i >= 0);
        const yg_graph_grad_op *so = &yg__graph_grad_ops[i];
        if (so->fn != NULL) {
            with++;
        } else if (yg__derivatives[d].n_inputs == 0) {
            no_grad++;
        } else if (strstr(so->unsupported, "in-place") != NULL) {
            inplace++;
        } else {
            printf("  %s: %s\n", yg__derivatives[d].name, so->unsupported);
            assert_non_null(strstr(so->unsupported, "graph_grad: not_implemented: "));
            marked++;
        }
    }
    printf("derivative entries: %d, with a graph form: %d, in-place: %d, without "
           "differentiable inputs: %d, marked not_implemented: %d\n",
           yg__derivatives_count,
           with,
           inplace,
           no_grad,
           marked);
    assert_int_equal(with + inplace + no_grad + marked, yg__derivatives_count);
}

/* Bad input: each refusal names the node or argument. */
static void expect_differentiate_error(const char *text, yg_status code, const char *a,
                                       const char *b) {
    yg_graph *g = NULL;
    yg_gradient *gr = NULL;
    YG_CHECK(yg_graph_parse(text, (int64_t)strlen(text), &g));
    YG_EXPECT_ERROR(yg_graph_differentiate(g, NULL, &gr), code, a, b);
    assert_null(gr);
    yg_graph_release(g);
}

static void test_bad_inputs_are_refused_by_name(void **state) {
    (void)state;
    yg_gradient *gr = NULL;
    YG_EXPECT_ERROR(yg_graph_differentiate(NULL, NULL, &gr), YG_ERR_INVALID_ARGUMENT,
                    "differentiate: graph or out is NULL");
    /* An in-place op on a gradient path. */
    expect_differentiate_error("graph(%x : Tensor(dtype=float64, sizes=[3], requires_grad=true)):\n"
                               "  %a = exp(%x)\n"
                               "  %b = add_(%a, %x)\n"
                               "  return (%b)\n",
                               YG_ERR_NOT_IMPLEMENTED, "autodiff: %b = add_(%a, %x)",
                               "in-place");
    /* A composite op, not split first. */
    expect_differentiate_error(
        "graph(%x : Tensor(dtype=float64, sizes=[2, 3], requires_grad=true),"
        " %w : Tensor(dtype=float64, sizes=[4, 3])):\n"
        "  %n = prim::None()\n"
        "  %y = linear(%x, %w, %n)\n"
        "  return (%y)\n",
        YG_ERR_NOT_IMPLEMENTED, "autodiff: %y = linear(%x, %w, %n)",
        "no entry in specs/derivatives.yaml");
    /* A formula that reads sizes the graph does not know. */
    expect_differentiate_error("graph(%x : Tensor(dtype=float64, requires_grad=true)):\n"
                               "  %y = sum(%x)\n"
                               "  return (%y)\n",
                               YG_ERR_NOT_IMPLEMENTED, "autodiff: %y = sum(%x)",
                               "needs static sizes and dtype of %x");
    /* Passes and the fuser's CUDA form. */
    const char *text = "graph(%x : Tensor(dtype=float32, sizes=[4])):\n"
                       "  %a = exp(%x)\n"
                       "  %b = neg(%a)\n"
                       "  return (%b)\n";
    yg_graph *g = NULL;
    char *src = NULL, *ptx = NULL;
    YG_CHECK(yg_graph_parse(text, (int64_t)strlen(text), &g));
    YG_EXPECT_ERROR(yg_graph_create_autodiff_subgraphs(g, NULL, 0), YG_ERR_INVALID_ARGUMENT,
                    "min_size < 1");
    YG_CHECK(yg_graph_fuse(g));
    YG_EXPECT_ERROR(yg_fuser_cuda_ptx(g, 3, "compute_80", &src, &ptx), YG_ERR_INVALID_ARGUMENT,
                    "fuser_cuda_ptx: the graph has no prim::FusionGroup number 3");
    assert_null(src);
    assert_null(ptx);
    yg_status st = yg_fuser_cuda_ptx(g, 0, "compute_nonsense", &src, &ptx);
    if (st == YG_ERR_NOT_IMPLEMENTED) {
        /* built without NVRTC: the source only */
        assert_non_null(src);
    } else {
        YG_EXPECT_ERROR(st, YG_ERR_INVALID_ARGUMENT, "fuser: NVRTC failed for compute_nonsense");
        assert_null(src);
    }
    assert_null(ptx);
    yg_string_release(src);
    yg_graph_release(g);
}

int main(int argc, char **argv) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_graph_derivative_matches_eager),
        cmocka_unit_test(test_graph_derivative_coverage_is_listed),
        cmocka_unit_test(test_every_sample_through_the_executor_matches_eager),
        cmocka_unit_test(test_bad_inputs_are_refused_by_name),
    };
    return YG_TEST_RUN(tests, argc, argv);
}
