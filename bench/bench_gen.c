/*
 * bench_gen.c - how long yagrad-gen takes on the real specs (issue #3's
 * budget: a full run under 1 s), against a reference measured in the same
 * run: loading the two YAML files alone, the part no generator can skip.
 *
 * Stages are timed in-process (gen's sources are compiled into this
 * program, main.c excepted) and the whole tool is timed end to end by
 * running the yagrad-gen executable into a scratch directory (process
 * start, libclang, emission, write-if-changed).
 * Output: one JSON line per measurement, median of the runs, e.g.
 *   {"bench":"gen","stage":"full_exec","median_ms":41.2,"runs":15,"ops":130,
 *    "derivatives":57}
 * Usage: bench_gen GEN_EXE SPECS_DIR [runs]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gen.h"

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef enum stage {
    STAGE_LOAD,    /* YAML loading only: the reference */
    STAGE_RESOLVE, /* + signatures and model */
    STAGE_ANALYSE, /* + libclang formula and pointwise analysis */
    STAGE_EMIT,    /* + every emitter (in memory) */
} stage;

static const char *const stage_names[] = {"load_yaml", "resolve", "analyse", "emit"};

/* One in-process run up to stage s; returns its time in ms. */
static double run_stage(stage s, const char *native, const char *derivs, int *n_ops,
                        int *n_derivs)
{
    gen_model model = {0};
    gen_plans plans = {0};
    double t0 = now_ms();

    gen_diag_reset(true);
    gen_load_native(native, &model);
    gen_load_derivatives(derivs, &model);
    if (s >= STAGE_RESOLVE)
        gen_model_resolve(&model);
    gen_plans_init(&plans, &model);
    if (s >= STAGE_ANALYSE)
        gen_analyse(&model, &plans);
    if (s >= STAGE_EMIT) {
        free(gen_emit_ops_h(&model));
        free(gen_emit_generated_int_h(&model));
        free(gen_emit_registry_c(&model));
        for (int sec = 0; sec < model.n_sections; sec++) {
            free(gen_emit_ops_section_h(&model, sec));
            free(gen_emit_api_c(&model, plans.backward, sec));
            free(gen_emit_nodes_h(&model, plans.backward, sec));
            free(gen_emit_nodes_c(&model, plans.backward, sec));
            if (model.sections[sec].has_pointwise)
                free(gen_emit_pointwise_c(&model, sec));
        }
    }
    double t = now_ms() - t0;
    *n_ops = model.n_ops;
    *n_derivs = model.n_derivs;
    gen_plans_free(&plans);
    gen_model_free(&model);
    return t;
}

/* Runs the executable once; returns its wall time in ms, or -1. */
static double run_exec(const char *gen, const char *specs, const char *out)
{
    double t0 = now_ms();
    pid_t pid = fork();

    if (pid < 0)
        return -1;
    if (pid == 0) {
        freopen("/dev/null", "w", stderr);
        execl(gen, gen, specs, out, (char *)NULL);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    return now_ms() - t0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fputs("usage: bench_gen GEN_EXE SPECS_DIR [runs]\n", stderr);
        return 2;
    }
    const char *gen = argv[1], *specs = argv[2];
    int runs = argc > 3 ? atoi(argv[3]) : 15;
    if (runs < 1 || runs > 1000)
        runs = 15;
    char *native = gen_xprintf("%s/native_functions.yaml", specs);
    char *derivs = gen_xprintf("%s/derivatives.yaml", specs);
    char out[] = "/tmp/bench_gen_XXXXXX";
    double *t = gen_xcalloc((size_t)runs, sizeof(double));
    int n_ops = 0, n_derivs = 0;

    for (int s = STAGE_LOAD; s <= STAGE_EMIT; s++) {
        run_stage((stage)s, native, derivs, &n_ops, &n_derivs); /* warm-up */
        for (int i = 0; i < runs; i++)
            t[i] = run_stage((stage)s, native, derivs, &n_ops, &n_derivs);
        printf("{\"bench\":\"gen\",\"stage\":\"%s\",\"median_ms\":%.3f,\"runs\":%d,\"ops\":%d,"
               "\"derivatives\":%d,\"errors\":%d}\n",
               stage_names[s], median(t, runs), runs, n_ops, n_derivs, gen_error_count());
    }
    if (mkdtemp(out) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    /* The first run writes every file; later ones find them unchanged. */
    double first = run_exec(gen, specs, out);
    for (int i = 0; i < runs; i++)
        t[i] = run_exec(gen, specs, out);
    bool ok = first >= 0;
    for (int i = 0; i < runs; i++)
        ok &= t[i] >= 0;
    if (!ok) {
        fprintf(stderr, "bench_gen: %s failed on %s (run it by hand to see why)\n", gen, specs);
        return 1;
    }
    printf("{\"bench\":\"gen\",\"stage\":\"full_exec_first\",\"median_ms\":%.3f,\"runs\":1}\n",
           first);
    printf("{\"bench\":\"gen\",\"stage\":\"full_exec\",\"median_ms\":%.3f,\"runs\":%d,"
           "\"budget_ms\":1000}\n",
           median(t, runs), runs);
    char *cmd = gen_xprintf("rm -rf '%s'", out);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_gen: could not remove %s\n", out);
    free(cmd);
    free(t);
    free(native);
    free(derivs);
    return 0;
}
