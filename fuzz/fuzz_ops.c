/*
 * fuzz_ops.c - libFuzzer target that drives every op of the generated
 * registry (yg__ops[], generated/registry.c) through a one-node graph and
 * the interpreter (yg_graph_run, which calls the boxed table
 * yg__boxed_ops[]).  Seeds: fuzz/corpus/ops/.
 *
 * The fuzzer's bytes pick an op, then for each argument of its schema:
 *   - a tensor (Tensor, Tensor?, each item of Tensor[] / Tensor?[]):
 *     None for optional ones, else a dtype among all seven (claimed by the
 *     op or not), sizes of up to 4 dims from {0, 1, 2, 3, 4, 5}, or, when
 *     a 0 is among them, huge sizes such as 36854775808 (an empty tensor
 *     costs no memory: issue 18's class; not for ops returning a list,
 *     which would make one view per index), values from a small set (small
 *     integers, so index arguments are often in range), requires_grad for
 *     float tensors, and a non-contiguous layout (transpose, a slice with
 *     step 2 of a larger base, an expand of a size-1 dim);
 *   - every other argument an attribute, or left out where the schema has
 *     a default: ints from a list of edge values (0, 1, -1, 2^31, 2^62,
 *     INT64_MIN, ...), int lists of 0..4 of them, floats (inf, nan, 1e300
 *     included), bools, strings and dtypes by name.
 * It runs the op with grad mode off, then on, and runs backward from each
 * result that requires grad, with a zero gradient of the result's sizes.
 *
 * It checks only what must always hold: no crash, no sanitizer report,
 * no leak; a failure is a status with a non-empty message and NULL
 * outputs; a result has a geometry whose element count and extent fit
 * (sizes.h's invariant) and a consistent yg_tensor_numel.  Memory stays
 * small: inputs hold at most 256 elements, and yg__alloc refuses blocks
 * over 16 MiB on this thread (so an op asked for a huge result fails with
 * out of memory); run with -rss_limit_mb=2048.
 *
 * Ops whose schema takes an argument the boxed table cannot pass
 * (Generator?) have no boxed function and are skipped.
 */
#include "core/core.h"
#include "generated_int.h"
#include "jit/ir/boxing.h"
#include "yagrad/yagrad.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            __builtin_trap();                                                                      \
    } while (0)

/* ---- the bytes ---- */

typedef struct reader {
    const uint8_t *data;
    size_t size, pos;
} reader;

/* The next byte, 0 once the input is used up (so every input is valid). */
static unsigned next(reader *r) {
    return r->pos < r->size ? r->data[r->pos++] : 0;
}

static unsigned pick(reader *r, unsigned n) {
    return n == 0 ? 0 : next(r) % n;
}

/* ---- schemas ---- */

#define MAX_ARGS    24
#define MAX_TENSORS 12
#define MAX_OUTS    6

typedef enum arg_kind {
    ARG_TENSOR,
    ARG_TENSOR_OPT,
    ARG_TENSOR_LIST,
    ARG_TENSOR_OPT_LIST,
    ARG_INT,
    ARG_INT_OPT,
    ARG_INT_LIST,
    ARG_FLOAT,
    ARG_FLOAT_OPT,
    ARG_BOOL,
    ARG_BOOL_LIST,
    ARG_STR,
    ARG_DTYPE,
    ARG_DTYPE_OPT,
    ARG_DEVICE,
    ARG_OTHER,
} arg_kind;

typedef struct arg_info {
    arg_kind kind;
    char name[40];
    bool has_default;
    int fixed_len; /* int[N], bool[N]: N; else 0 */
} arg_info;

typedef struct op_schema {
    int n_args;
    arg_info args[MAX_ARGS];
    int n_returns; /* -1: a Tensor[] return */
    bool usable;
} op_schema;

static op_schema *schemas;

static arg_kind kind_of(const char *type, int *fixed_len) {
    char base[32];
    size_t n = strcspn(type, "([?");
    bool opt = strchr(type, '?') != NULL;
    bool list = strchr(type, '[') != NULL;

    *fixed_len = 0;
    if (n >= sizeof base)
        return ARG_OTHER;
    memcpy(base, type, n);
    base[n] = '\0';
    if (list) {
        const char *lb = strchr(type, '[');
        *fixed_len = atoi(lb + 1);
    }
    if (strcmp(base, "Tensor") == 0) {
        if (list)
            return opt ? ARG_TENSOR_OPT_LIST : ARG_TENSOR_LIST;
        return opt ? ARG_TENSOR_OPT : ARG_TENSOR;
    }
    if (strcmp(base, "int") == 0)
        return list ? ARG_INT_LIST : opt ? ARG_INT_OPT : ARG_INT;
    if (strcmp(base, "float") == 0 || strcmp(base, "Scalar") == 0)
        return opt ? ARG_FLOAT_OPT : ARG_FLOAT;
    if (strcmp(base, "bool") == 0)
        return list ? ARG_BOOL_LIST : ARG_BOOL;
    if (strcmp(base, "str") == 0)
        return ARG_STR;
    if (strcmp(base, "ScalarType") == 0)
        return opt ? ARG_DTYPE_OPT : ARG_DTYPE;
    if (strcmp(base, "Device") == 0)
        return ARG_DEVICE;
    /* Any other CamelCase type is an enum (yagrad/enums.h), whose value a
     * node names with a str attribute. */
    if (base[0] >= 'A' && base[0] <= 'Z' && strcmp(base, "Generator") != 0)
        return ARG_STR;
    return ARG_OTHER;
}

/* Parses "name(T a, T b=1, *, T c) -> R" into s. */
static void parse_schema(const char *schema, op_schema *s) {
    const char *open = strchr(schema, '(');
    const char *arrow = strstr(schema, ") -> ");
    const char *p;

    memset(s, 0, sizeof *s);
    if (open == NULL || arrow == NULL)
        return;
    p = open + 1;
    while (p < arrow) {
        const char *start = p;
        int depth = 0;
        char item[128];
        while (p < arrow && !(depth == 0 && *p == ',')) {
            depth += *p == '(' || *p == '[';
            depth -= *p == ')' || *p == ']';
            p++;
        }
        size_t len = (size_t)(p - start);
        if (p < arrow)
            p++; /* the comma */
        while (len > 0 && *start == ' ')
            start++, len--;
        if (len == 0 || len >= sizeof item)
            continue;
        memcpy(item, start, len);
        item[len] = '\0';
        if (strcmp(item, "*") == 0)
            continue;
        if (s->n_args == MAX_ARGS)
            return;
        arg_info *a = &s->args[s->n_args++];
        char *space = strrchr(item, ' ');
        char *eq = strchr(space != NULL ? space : item, '=');
        if (space == NULL)
            return;
        *space = '\0';
        a->has_default = eq != NULL;
        if (eq != NULL)
            *eq = '\0';
        snprintf(a->name, sizeof a->name, "%s", space + 1);
        a->kind = kind_of(item, &a->fixed_len);
    }
    const char *ret = arrow + 5;
    if (strstr(ret, "[]") != NULL) {
        s->n_returns = -1;
    } else {
        int n = 0;
        for (const char *q = ret; (q = strstr(q, "Tensor")) != NULL; q += 6)
            n++;
        s->n_returns = n;
    }
    s->usable = s->n_returns != 0;
    for (int i = 0; i < s->n_args; i++)
        if (s->args[i].kind == ARG_OTHER)
            s->usable = false;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    /* One thread: the kernels' OpenMP teams would only add noise. */
    setenv("OMP_NUM_THREADS", "1", 1);
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    schemas = calloc((size_t)yg__ops_count, sizeof *schemas);
    if (schemas == NULL)
        abort();
    for (int32_t i = 0; i < yg__ops_count; i++) {
        parse_schema(yg__ops[i].schema, &schemas[i]);
        if (yg__boxed_ops[i].fn == NULL)
            schemas[i].usable = false;
    }
    return 0;
}

/* ---- values ---- */

static const int64_t edge_ints[] = {
    0,
    1,
    2,
    3,
    -1,
    -2,
    4,
    5,
    1,
    0,
    2,
    -3,
    INT64_MAX,
    INT64_MIN,
    INT64_C(1) << 31,
    INT64_C(1) << 32,
    INT64_C(36854775808),
    INT64_C(1) << 62,
    -(INT64_C(1) << 62),
    INT64_C(922337200),
    INT64_MAX / 2,
    1000000007,
};
#define N_EDGE_INTS (sizeof edge_ints / sizeof edge_ints[0])

static int64_t an_int(reader *r) {
    unsigned b = next(r);
    /* Mostly small values, so arguments are often valid. */
    if (b < 192)
        return (int64_t)(b % 7) - 2;
    return edge_ints[b % N_EDGE_INTS];
}

static const char *const float_texts[] = {
    "0.0",
    "1.0",
    "-1.0",
    "0.5",
    "2.0",
    "1e-07",
    "3.0",
    "-0.5",
    "inf",
    "-inf",
    "nan",
    "1e+300",
};
static const char *const str_values[] = {
    "mean",
    "sum",
    "none",
    "same",
    "valid",
    "tanh",
    "reflect",
    "",
    "\\x01",
    "replicate",
    "constant",
    "trunc",
    "floor",
};
static const yg_dtype all_dtypes[] = {
    YG_FLOAT32,
    YG_FLOAT64,
    YG_INT64,
    YG_INT32,
    YG_BOOL,
    YG_FLOAT16,
    YG_BFLOAT16,
};

/* ---- input tensors ---- */

/* Sizes with a 0 may carry huge other dims: no memory, issue 18's class. */
static const int64_t huge_sizes[] = {
    INT64_C(36854775808),
    INT64_C(922337200),
    INT64_C(1) << 40,
    INT64_MAX,
    INT64_C(1) << 62,
};

/* A new tensor from the bytes (out NULL when building it failed, which is
 * itself checked: a status with a message). */
static void make_tensor(reader *r, const yg_op_info *op, bool allow_huge, yg_tensor **out) {
    int64_t sizes[4], numel = 1;
    int ndim = (int)pick(r, 5);
    bool has_zero = false;
    unsigned flags = next(r);
    yg_dtype dtype;
    yg_tensor *t = NULL, *v = NULL;
    double values[256];

    *out = NULL;
    /* Half the time a dtype the op claims, else any. */
    dtype = all_dtypes[pick(r, 7)];
    if ((flags & 1) && op->dtypes != 0)
        for (int k = 0; k < 7 && !(op->dtypes & YG_DTYPE_BIT(dtype)); k++)
            dtype = all_dtypes[(k + (int)flags) % 7];
    for (int i = 0; i < ndim; i++) {
        sizes[i] = (int64_t)pick(r, 6);
        has_zero |= sizes[i] == 0;
    }
    if (allow_huge && has_zero && (flags & 2) && ndim > 1) {
        int i = (int)pick(r, (unsigned)ndim);
        if (sizes[i] != 0)
            sizes[i] = huge_sizes[pick(r, 5)];
    }
    for (int i = 0; i < ndim && !has_zero; i++)
        numel *= sizes[i];
    if (has_zero)
        numel = 0;
    if (numel > 256)
        numel = 0, sizes[0] = 0;
    for (int64_t i = 0; i < numel; i++) {
        unsigned b = next(r);
        values[i] = b < 200 ? (double)((int)(b % 9) - 3) : (double)(b % 5) * 0.37 - 0.5;
        if (dtype == YG_BOOL)
            values[i] = values[i] != 0;
    }
    yg_status st = yg_tensor_empty(sizes, ndim, YG_FLOAT64, &t);
    if (st != YG_OK) {
        CHECK(t == NULL && yg_last_error()[0] != '\0');
        return;
    }
    if (numel > 0)
        memcpy(yg_tensor_data(t), values, (size_t)numel * sizeof(double));
    if (dtype != YG_FLOAT64) {
        st = yg_to_dtype(t, dtype, false, &v);
        yg_release(t);
        if (st != YG_OK) {
            CHECK(v == NULL && yg_last_error()[0] != '\0');
            return;
        }
        t = v;
        v = NULL;
    }
    if ((flags & 4) && (dtype == YG_FLOAT32 || dtype == YG_FLOAT64))
        CHECK(yg_tensor_set_requires_grad(t, true) == YG_OK);
    /* A non-contiguous layout with the same sizes, or a different one. */
    switch ((flags >> 3) & 3) {
    case 1:
        if (ndim >= 2) {
            st = yg_transpose(t, 0, ndim - 1, &v);
            CHECK(st == YG_OK);
        }
        break;
    case 2:
        if (ndim >= 1 && sizes[0] <= 4) {
            /* Every other row of a base twice as long. */
            yg_tensor *twice = NULL;
            const yg_tensor *pair[2] = {t, t};
            if (yg_cat(pair, 2, 0, &twice) == YG_OK) {
                st = yg_slice(twice, 0, 0, INT64_MAX, 2, &v);
                CHECK(st == YG_OK);
            }
            yg_release(twice);
        }
        break;
    case 3:
        if (ndim >= 1 && sizes[ndim - 1] == 1) {
            int64_t to[4];
            memcpy(to, sizes, sizeof to);
            to[ndim - 1] = 1 + (int64_t)pick(r, 4);
            st = yg_expand(t, to, ndim, &v);
            CHECK(st == YG_OK);
        }
        break;
    default:
        break;
    }
    if (v != NULL) {
        yg_release(t);
        t = v;
    }
    *out = t;
}

/* ---- the graph text ---- */

typedef struct text {
    char buf[4096];
    size_t len;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
    va_list ap;
    if (t->len >= sizeof t->buf)
        return;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, sizeof t->buf - t->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len += (size_t)n;
}

/* Writes one attribute for a; false when it is left out. */
static bool put_attr(reader *r, text *t, const arg_info *a, bool first) {
    const char *sep = first ? "" : ", ";
    int n;

    if (a->has_default || a->kind == ARG_INT_OPT || a->kind == ARG_FLOAT_OPT ||
        a->kind == ARG_DTYPE_OPT || a->kind == ARG_DEVICE)
        if (pick(r, 3) == 0)
            return false;
    switch (a->kind) {
    case ARG_INT:
    case ARG_INT_OPT:
        put(t, "%s%s=%" PRId64, sep, a->name, an_int(r));
        return true;
    case ARG_INT_LIST:
        n = a->fixed_len > 0 && pick(r, 4) != 0 ? a->fixed_len : (int)pick(r, 5);
        put(t, "%s%s=[", sep, a->name);
        for (int i = 0; i < n; i++)
            put(t, "%s%" PRId64, i ? ", " : "", an_int(r));
        put(t, "]");
        return true;
    case ARG_FLOAT:
    case ARG_FLOAT_OPT:
        put(t, "%s%s=%s", sep, a->name, float_texts[pick(r, 12)]);
        return true;
    case ARG_BOOL:
        put(t, "%s%s=%u", sep, a->name, pick(r, 2));
        return true;
    case ARG_BOOL_LIST:
        n = a->fixed_len > 0 ? a->fixed_len : 1;
        put(t, "%s%s=[", sep, a->name);
        for (int i = 0; i < n; i++)
            put(t, "%s%u", i ? ", " : "", pick(r, 2));
        put(t, "]");
        return true;
    case ARG_STR:
        n = (int)(sizeof str_values / sizeof str_values[0]);
        put(t, "%s%s=\"%s\"", sep, a->name, str_values[pick(r, (unsigned)n)]);
        return true;
    case ARG_DTYPE:
    case ARG_DTYPE_OPT:
        put(t, "%s%s=\"%s\"", sep, a->name, yg_dtype_name(all_dtypes[pick(r, 7)]));
        return true;
    case ARG_DEVICE:
        put(t, "%s%s=%u", sep, a->name, pick(r, 3));
        return true;
    default:
        return false;
    }
}

/* ---- checks on results ---- */

/* A result's geometry obeys sizes.h: every size >= 0, the element count
 * fits and matches yg_tensor_numel, and the extent fits int64. */
static void check_result(const yg_tensor *o) {
    int64_t ndim = yg_tensor_ndim(o), n = 1, lo = 0, hi = 0;
    const int64_t *sizes = yg_tensor_sizes(o), *strides = yg_tensor_strides(o);
    bool empty = false;

    CHECK(ndim >= 0 && ndim <= YG_MAX_DIMS);
    for (int64_t i = 0; i < ndim; i++) {
        CHECK(sizes[i] >= 0);
        empty |= sizes[i] == 0;
    }
    if (empty) {
        CHECK(yg_tensor_numel(o) == 0);
        return;
    }
    for (int64_t i = 0; i < ndim; i++) {
        int64_t reach;
        CHECK(!__builtin_mul_overflow(n, sizes[i], &n));
        CHECK(!__builtin_mul_overflow(sizes[i] - 1, strides[i], &reach));
        CHECK(!__builtin_add_overflow(reach < 0 ? lo : hi, reach, reach < 0 ? &lo : &hi));
    }
    CHECK(n == yg_tensor_numel(o));
    CHECK(n <= YG__MAX_NUMEL);
}

static void check_failure(yg_status st, yg_tensor **outs, int n_outs) {
    CHECK(st != YG_OK);
    CHECK(yg_last_error()[0] != '\0');
    for (int i = 0; i < n_outs; i++)
        CHECK(outs[i] == NULL);
}

/* Backward from o with a zero gradient of its sizes (ignored when the
 * gradient cannot be made: o may be a huge empty view). */
static void run_backward(yg_tensor *o) {
    yg_tensor *grad = NULL;
    yg_status st;

    if (!yg_tensor_requires_grad(o))
        return;
    st = yg_tensor_zeros(yg_tensor_sizes(o), yg_tensor_ndim(o), yg_tensor_dtype(o), &grad);
    if (st != YG_OK) {
        CHECK(grad == NULL && yg_last_error()[0] != '\0');
        return;
    }
    st = yg_backward(o, grad, false);
    if (st != YG_OK)
        CHECK(yg_last_error()[0] != '\0');
    yg_release(grad);
}

/* ---- one input ---- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader r = {data, size, 0};
    yg_tensor *inputs[MAX_TENSORS] = {NULL};
    yg_tensor *outs[MAX_OUTS] = {NULL};
    int n_inputs = 0, n_outs;
    text t = {.len = 0};
    text uses = {.len = 0};
    yg_graph *g = NULL;
    bool first_attr = true;

    if (size < 2)
        return 0;
    int32_t idx = (int32_t)(((unsigned)data[0] << 8 | data[1]) % (unsigned)yg__ops_count);
    r.pos = 2;
    const op_schema *s = &schemas[idx];
    const yg_op_info *op = &yg__ops[idx];
    if (!s->usable)
        return 0;
    n_outs = s->n_returns > 0 ? s->n_returns : 1 + (int)pick(&r, 3);
    if (n_outs > MAX_OUTS)
        return 0;

    size_t limit = yg__alloc_set_thread_limit(16u << 20);

    /* Tensor arguments become graph inputs (or prim::None values). */
    put(&t, "graph(");
    int n_none = 0;
    for (int i = 0; i < s->n_args; i++) {
        const arg_info *a = &s->args[i];
        int count = 0;
        bool opt = a->kind == ARG_TENSOR_OPT || a->kind == ARG_TENSOR_OPT_LIST;
        if (a->kind == ARG_TENSOR || a->kind == ARG_TENSOR_OPT)
            count = 1;
        else if (a->kind == ARG_TENSOR_LIST || a->kind == ARG_TENSOR_OPT_LIST)
            count = (int)pick(&r, 4);
        for (int k = 0; k < count; k++) {
            if (opt && pick(&r, 3) == 0) {
                put(&uses, "%s%%none%d", uses.len ? ", " : "", n_none++);
                continue;
            }
            if (n_inputs == MAX_TENSORS)
                goto out;
            /* An op returning a list may make one view per index of a
             * dim (unbind, split): a huge dim would ask for billions. */
            make_tensor(&r, op, s->n_returns > 0, &inputs[n_inputs]);
            if (inputs[n_inputs] == NULL)
                goto out;
            put(&t, "%s%%i%d : Tensor", n_inputs ? ", " : "", n_inputs);
            put(&uses, "%s%%i%d", uses.len ? ", " : "", n_inputs);
            n_inputs++;
        }
    }
    put(&t, "):\n");
    for (int k = 0; k < n_none; k++)
        put(&t, "  %%none%d = prim::None()\n", k);
    put(&t, "  ");
    for (int k = 0; k < n_outs; k++)
        put(&t, "%s%%o%d : Tensor", k ? ", " : "", k);
    put(&t, " = %s[", op->name);
    for (int i = 0; i < s->n_args; i++)
        if (s->args[i].kind >= ARG_INT && put_attr(&r, &t, &s->args[i], first_attr))
            first_attr = false;
    put(&t, "](%.*s)\n  return (", (int)uses.len, uses.buf);
    for (int k = 0; k < n_outs; k++)
        put(&t, "%s%%o%d", k ? ", " : "", k);
    put(&t, ")\n");
    if (t.len >= sizeof t.buf)
        goto out;
    /* FUZZ_OPS_PRINT=1 shows what an input runs (to reproduce a finding
     * as a test); the harness never prints otherwise. */
    if (getenv("FUZZ_OPS_PRINT") != NULL) {
        fprintf(stderr, "%s", t.buf);
        for (int i = 0; i < n_inputs; i++) {
            char sb[160], tb[160];
            fprintf(stderr,
                    "  %%i%d: %s sizes %s strides %s%s\n",
                    i,
                    yg_dtype_name(yg_tensor_dtype(inputs[i])),
                    yg_tensor_format_sizes(inputs[i], sb, sizeof sb),
                    yg__format_sizes(
                        yg_tensor_strides(inputs[i]), yg_tensor_ndim(inputs[i]), tb, sizeof tb),
                    yg_tensor_requires_grad(inputs[i]) ? " requires_grad" : "");
        }
    }

    yg_status st = yg_graph_parse(t.buf, (int64_t)t.len, &g);
    if (st != YG_OK) {
        /* An attribute the parser refuses (an int list where it wants
         * one value...): still a status with a message. */
        CHECK(g == NULL && yg_last_error()[0] != '\0');
        goto out;
    }

    /* Without grad mode, then with it (and backward). */
    for (int pass = 0; pass < 2; pass++) {
        bool prev = yg_set_grad_enabled(pass == 1);
        st = yg_graph_run(g, inputs, n_inputs, outs, n_outs);
        if (getenv("FUZZ_OPS_PRINT") != NULL)
            fprintf(stderr,
                    "grad mode %d: %s %s\n",
                    pass,
                    yg_status_name(st),
                    st == YG_OK ? "" : yg_last_error());
        if (st != YG_OK) {
            check_failure(st, outs, n_outs);
        } else {
            for (int k = 0; k < n_outs; k++)
                if (outs[k] != NULL)
                    check_result(outs[k]);
            if (pass == 1)
                for (int k = 0; k < n_outs; k++)
                    if (outs[k] != NULL)
                        run_backward(outs[k]);
        }
        yg_set_grad_enabled(prev);
        for (int k = 0; k < n_outs; k++) {
            yg_release(outs[k]);
            outs[k] = NULL;
        }
    }

out:
    yg_graph_release(g);
    for (int i = 0; i < n_inputs; i++)
        yg_release(inputs[i]);
    yg__alloc_set_thread_limit(limit);
    return 0;
}
