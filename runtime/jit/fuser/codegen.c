/*
 * codegen.c - the C source of a fusion group's kernel, from the same
 * `pointwise:` expressions the eager loops are generated from
 * (yg__fuse_ops[], generated/fuser/table.c).
 *
 * The kernel walks the output in tiles: a tile is up to YG_FUSE_TILE
 * elements of one row of the innermost dim, so both a flat contiguous
 * problem (one row) and a broadcast one (many rows) split over OpenMP
 * threads and run a simple inner loop the compiler vectorises.  Per tile
 * each operand's offset comes from the row index by div/mod over the outer
 * dims.  The inner loop reads each input as the stride pattern given to
 * codegen says: 'c' unit stride, 'b' broadcast (one value per row, read
 * before the loop), 's' any other stride; a pattern is part of the source,
 * so each pattern gets its own compiled kernel.  Each node of the group is
 * a block that binds its argument names (self, other, alpha, ...) to the
 * values it reads and computes the op's expression, so the expression text
 * is pasted unchanged.  Math functions are yagrad's SLEEF-backed ones
 * (cpu/vec/vecmath.h), declared here with the same `simd` attribute, so
 * the kernel vectorises through them as the eager loops do.
 */
#include "cpu/vec/vecmath_list.h"
#include "jit/fuser/fuser.h"
#include "jit/passes/passes.h"
#include "op_ids.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Inner-loop elements per tile. */
#define YG_FUSE_TILE 4096

bool yg__fuser_is_cat(const yg_ir_node *n) {
    return yg__pass_is(n, YG_OP_cat);
}

int32_t yg__fuser_kernel_outputs(const yg_graph *sub, const yg_ir_value **out, int32_t cap) {
    int32_t k = 0;
    for (int32_t o = 0; o < sub->ret->n_inputs; o++) {
        const yg_ir_value *v = sub->ret->inputs[o];
        if (v->node != sub->param && yg__fuser_is_cat(v->node)) {
            for (int32_t i = 0; i < v->node->n_inputs; i++) {
                if (k == cap)
                    return -1;
                out[k++] = v->node->inputs[i];
            }
        } else {
            if (k == cap)
                return -1;
            out[k++] = v;
        }
    }
    return k;
}

int64_t yg__fuser_layer_norm_size(const yg_ir_node *n) {
    const yg_ir_attr *a = yg__ir_node_attr(n, "normalized_shape");
    if (a != NULL && a->kind == YG_IR_ATTR_INTS && a->u.ints.len == 1 && a->u.ints.items[0] > 0)
        return a->u.ints.items[0];
    if (a != NULL && a->kind == YG_IR_ATTR_INT && a->u.i > 0)
        return a->u.i;
    return -1;
}

yg_fuse_anchor yg__fuser_anchor(const yg_ir_node *n) {
    if (n->op == NULL || n->n_inputs < 1 || n->n_outputs != 1)
        return YG_ANCHOR_NONE;
    int32_t nd = n->inputs[0]->type.ndim;
    if (nd == YG_IR_UNKNOWN || nd < 1)
        return YG_ANCHOR_NONE;
    if (yg__pass_is(n, YG_OP_layer_norm)) {
        /* Over the last dim, with a weight and a bias of that size.  Sizes
         * the graph does not know (an executor's plan keeps only ranks)
         * are checked when the group runs (run.c). */
        int64_t norm = yg__fuser_layer_norm_size(n);
        int64_t last = n->inputs[0]->type.sizes[nd - 1];
        if (norm < 0 || (last != YG_IR_UNKNOWN && last != norm) || n->n_inputs != 3)
            return YG_ANCHOR_NONE;
        for (int32_t i = 1; i < 3; i++) {
            const yg_ir_type *t = &n->inputs[i]->type;
            if (t->kind != YG_IR_TYPE_TENSOR || t->ndim != 1 ||
                (t->sizes[0] != norm && t->sizes[0] != YG_IR_UNKNOWN))
                return YG_ANCHOR_NONE;
        }
        return YG_ANCHOR_LAYER_NORM;
    }
    if (n->n_inputs != 1)
        return YG_ANCHOR_NONE;
    if (yg__pass_is(n, YG_OP_softmax) || yg__pass_is(n, YG_OP_log_softmax)) {
        int64_t dim = 0;
        if (!yg__ir_attr_as_int(n, "dim", &dim) || (dim != nd - 1 && dim != -1))
            return YG_ANCHOR_NONE;
        return yg__pass_is(n, YG_OP_softmax) ? YG_ANCHOR_SOFTMAX : YG_ANCHOR_LOG_SOFTMAX;
    }
    if (yg__pass_is(n, YG_OP_sum_dim)) {
        const yg_ir_attr *a = yg__ir_node_attr(n, "dim");
        int64_t d;
        if (a != NULL && a->kind == YG_IR_ATTR_INTS && a->u.ints.len == 1)
            d = a->u.ints.items[0];
        else if (a != NULL && a->kind == YG_IR_ATTR_INT)
            d = a->u.i;
        else
            return YG_ANCHOR_NONE;
        return d == nd - 1 || d == -1 ? YG_ANCHOR_SUM : YG_ANCHOR_NONE;
    }
    return YG_ANCHOR_NONE;
}

const yg_fuse_op *yg__fuse_op_of(const yg_ir_node *n) {
    if (n->op == NULL)
        return NULL;
    const yg_fuse_op *f = &yg__fuse_ops[n->op - yg__ops];
    return f->expr[0] != NULL ? f : NULL;
}

/* ---- a growing string ---- */

typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool oom;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...) {
    va_list ap;
    if (b->oom)
        return;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(
            b->p != NULL ? b->p + b->len : NULL, b->p != NULL ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = true;
            return;
        }
        if (b->p != NULL && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap ? b->cap : 4096);
        while (cap <= b->len + (size_t)n)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (np == NULL) {
            b->oom = true;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
}

/* Hands b's text to *source when st is YG_OK and nothing ran out of
 * memory; frees it otherwise. */
static yg_status take(sbuf *b, yg_status st, char **source) {
    if (st == YG_OK && b->oom)
        st = yg__fail(YG_ERR_OUT_OF_MEMORY, "fuser: out of memory");
    if (st != YG_OK) {
        free(b->p);
        return st;
    }
    *source = b->p;
    return YG_OK;
}

/* The math prelude: yagrad's vector math under the usual names. */
#define DECL1(name, u)                                                                             \
    "__attribute__((simd(\"notinbranch\"), const, nothrow, leaf)) float yg_vm_" #name              \
    "f(float);\n"                                                                                  \
    "__attribute__((simd(\"notinbranch\"), const, nothrow, leaf)) double yg_vm_" #name             \
    "(double);\n"                                                                                  \
    "#undef " #name "\n#define " #name "(x) _Generic((x), float : yg_vm_" #name                    \
    "f, default : yg_vm_" #name ")(x)\n",
#define DECL2(name, u)                                                                             \
    "__attribute__((simd(\"notinbranch\"), const, nothrow, leaf)) float yg_vm_" #name              \
    "f(float, float);\n"                                                                           \
    "__attribute__((simd(\"notinbranch\"), const, nothrow, leaf)) double yg_vm_" #name             \
    "(double, double);\n"                                                                          \
    "#undef " #name "\n#define " #name "(x, y) _Generic((x) + (y), float : yg_vm_" #name           \
    "f, default : yg_vm_" #name ")((x), (y))\n",
static const char *const prelude[] = {"#include <stdint.h>\n#include <tgmath.h>\n",
                                      YG_VECMATH_UNARY(DECL1) YG_VECMATH_BINARY(DECL2)};
#undef DECL1
#undef DECL2

/* The value of scalar argument k of node n: its attribute, or the
 * schema's default. */
static bool scalar_value(const yg_ir_node *n, const yg_fuse_op *f, int32_t k, double *v) {
    if (yg__ir_attr_as_double(n, f->scalar_names[k], v))
        return true;
    *v = f->scalar_defaults[k];
    return !isnan(*v);
}

/* The C literal of v for dtype T (exact: %a). */
static void put_scalar(sbuf *b, double v, bool f32) {
    if (isinf(v))
        put(b, "%s(T)INFINITY", v < 0 ? "-" : "");
    else if (isnan(v))
        put(b, "(T)NAN");
    else
        put(b, "(T)%a", f32 ? (double)(float)v : v);
}

static yg_status fail(const char *why, const char *detail) {
    return yg__fail(YG_ERR_NOT_IMPLEMENTED, "fuser: %s%s", why, detail);
}

/* The body: one block per node; value k of the subgraph is v<k> (inputs
 * first, as x<i> are bound to v<i>). */
static yg_status put_body(sbuf *b, const yg_graph *sub, bool f32) {
    int k = 0;
    for (int32_t i = 0; i < sub->param->n_outputs; i++)
        sub->param->outputs[i]->scratch = k++;
    for (const yg_ir_node *n = sub->first; n != NULL; n = n->next) {
        if (yg__fuser_is_cat(n) || yg__fuser_anchor(n) != YG_ANCHOR_NONE)
            continue; /* an exit, or the anchor: the kernel's frame does them */
        const yg_fuse_op *f = yg__fuse_op_of(n);
        if (f == NULL || n->n_outputs != 1 || n->n_inputs != f->n_inputs)
            return fail("not a fusible node: ", n->kind);
        n->outputs[0]->scratch = k;
        put(b, "            T v%d;\n            { /* %s */\n", k, n->kind);
        for (int32_t i = 0; i < n->n_inputs; i++)
            put(b,
                "                const T %s = v%" PRId64 ";\n",
                f->input_names[i],
                n->inputs[i]->scratch);
        for (int32_t s = 0; s < f->n_scalars; s++) {
            double v;
            if (!scalar_value(n, f, s, &v))
                return fail("a scalar argument has no value: ", f->scalar_names[s]);
            put(b, "                const T %s = ", f->scalar_names[s]);
            put_scalar(b, v, f32);
            put(b, ";\n");
        }
        for (int32_t s = 0; s < f->n_scalars; s++)
            put(b, "                (void)%s;\n", f->scalar_names[s]);
        if (f->then_[f32] != NULL)
            put(b,
                "                const T yg_then = (T)(%s);\n"
                "                const T yg_else = (T)(%s);\n"
                "                v%d = (%s) ? yg_then : yg_else;\n",
                f->then_[f32],
                f->else_[f32],
                k,
                f->expr[f32]);
        else
            put(b, "                v%d = (T)(%s);\n", k, f->expr[f32]);
        put(b, "            }\n");
        k++;
    }
    return YG_OK;
}

/* The row kernel of a group ending in reduction anchor a: per row of the
 * anchor's input, pass 1 evaluates the group (writing its other outputs)
 * and reduces (max for the softmax family, the sum in double for sum and
 * layer_norm's mean); softmax, log_softmax and layer_norm then make two
 * more passes over the row, which is in cache by then, recomputing the
 * anchor's input rather than keeping it (softmax writes its exponentials
 * in the second and scales them in the third, as the eager kernel does;
 * the compiler drops the recomputation a pass does not read). */
static yg_status codegen_rows(const yg_graph *sub, const yg_ir_node *a, const char *pattern,
                              char **source) {
    sbuf b = {0};
    const yg_ir_value *kout[YG_FUSE_MAX_OUTPUTS];
    int32_t n_in = sub->param->n_outputs;
    int32_t n_out = yg__fuser_kernel_outputs(sub, kout, YG_FUSE_MAX_OUTPUTS);
    int32_t dtype = sub->param->outputs[0]->type.dtype;
    bool f32 = dtype == YG_FLOAT32;
    yg_fuse_anchor kind = yg__fuser_anchor(a);
    int32_t ao = -1;
    for (int32_t o = 0; o < n_out; o++)
        if (kout[o] == a->outputs[0])
            ao = o;
    if (n_out < 0 || ao < 0)
        return fail("an anchored group must output its anchor", "");
    for (size_t i = 0; i < sizeof prelude / sizeof prelude[0]; i++)
        put(&b, "%s", prelude[i]);
    put(&b, "\ntypedef %s T;\n\n", f32 ? "float" : "double");
    put(&b,
        "/* a fusion group of %" PRId64 " nodes anchored by %s, input strides %s */\n"
        "void yg_fused_kernel(int64_t n, int ndim, const int64_t *sizes, char *const *ptrs,\n"
        "                     const int64_t *strides)\n{\n"
        "    const int64_t inner = sizes[ndim - 1];\n"
        "    if (n == 0 || inner == 0)\n        return;\n"
        "    const int64_t rows = n / inner;\n"
        "#pragma omp parallel for schedule(static) if (n >= 32768 && rows > 1)\n"
        "    for (int64_t row = 0; row < rows; row++) {\n"
        "        int64_t off[%d] = {0};\n"
        "        int64_t r = row;\n"
        "        for (int d = ndim - 2; d >= 0; d--) {\n"
        "            const int64_t c = r %% sizes[d];\n"
        "            r /= sizes[d];\n"
        "            for (int k = 0; k < %d; k++)\n"
        "                off[k] += c * strides[k * ndim + d];\n"
        "        }\n",
        sub->n_nodes, a->kind, pattern, n_in + n_out, n_in + n_out);
    for (int32_t o = 0; o < n_out; o++)
        put(&b, "        T *restrict o%d = (T *)ptrs[%d] + off[%d];\n", o, o, o);
    for (int32_t i = 0; i < n_in; i++) {
        int k = n_out + i;
        put(&b, "        const T *restrict a%d = (const T *)ptrs[%d] + off[%d];\n", i, k, k);
        if (pattern[i] == 's')
            put(&b, "        const int64_t s%d = strides[%d * ndim + ndim - 1];\n", i, k);
    }
    int64_t x = 0;
    int passes = kind == YG_ANCHOR_SUM ? 1 : 3;
    double eps = 1e-5;
    if (kind == YG_ANCHOR_LAYER_NORM)
        (void)yg__ir_attr_as_double(a, "eps", &eps);
    put(&b, kind == YG_ANCHOR_SUM || kind == YG_ANCHOR_LAYER_NORM ? "        double acc = 0;\n"
                                                                  : "        T m = -INFINITY;\n");
    yg_status st = YG_OK;
    for (int pass = 0; st == YG_OK && pass < passes; pass++) {
        if (pass == 1 && kind == YG_ANCHOR_LAYER_NORM)
            put(&b, "        const double mean = acc / (double)inner;\n        double acc2 = 0;\n");
        else if (pass == 1)
            put(&b, "        double acc = 0;\n");
        if (pass == 2 && kind == YG_ANCHOR_LAYER_NORM) {
            put(&b,
                "        const T rstd = (T)(1 / sqrt(acc2 / (double)inner + %a));\n"
                "        const T tmean = (T)mean;\n",
                eps);
        } else if (pass == 2) {
            put(&b,
                kind == YG_ANCHOR_SOFTMAX ? "        const T inv = (T)(1 / acc);\n"
                                          : "        const T lse = m + (T)log(acc);\n");
        }
        const char *red = kind == YG_ANCHOR_LAYER_NORM && pass == 1 ? "reduction(+ : acc2)"
                          : kind == YG_ANCHOR_LAYER_NORM && pass == 0 ? "reduction(+ : acc)"
                          : kind == YG_ANCHOR_LAYER_NORM              ? ""
                          : kind == YG_ANCHOR_SUM || pass == 1        ? "reduction(+ : acc)"
                          : pass == 0                                 ? "reduction(max : m)"
                                                                      : "";
        put(&b, "#pragma omp simd %s\n        for (int64_t j = 0; j < inner; j++) {\n", red);
        for (int32_t i = 0; i < n_in; i++) {
            if (pattern[i] == 'b')
                put(&b, "            const T v%d = a%d[0];\n", i, i);
            else if (pattern[i] == 's')
                put(&b, "            const T v%d = a%d[j * s%d];\n", i, i, i);
            else
                put(&b, "            const T v%d = a%d[j];\n", i, i);
        }
        st = put_body(&b, sub, f32);
        x = a->inputs[0]->scratch;
        if (pass == 0)
            for (int32_t o = 0; st == YG_OK && o < n_out; o++)
                if (o != ao)
                    put(&b, "            o%d[j] = v%" PRId64 ";\n", o, kout[o]->scratch);
        if (kind == YG_ANCHOR_LAYER_NORM && pass == 0)
            put(&b, "            acc += v%" PRId64 ";\n", x);
        else if (kind == YG_ANCHOR_LAYER_NORM && pass == 1)
            put(&b,
                "            const double dv = (double)v%" PRId64 " - mean;\n"
                "            acc2 += dv * dv;\n",
                x);
        else if (kind == YG_ANCHOR_LAYER_NORM)
            put(&b,
                "            o%d[j] = (v%" PRId64 " - tmean) * rstd * v%" PRId64 " + v%" PRId64
                ";\n",
                ao, x, a->inputs[1]->scratch, a->inputs[2]->scratch);
        else if (kind == YG_ANCHOR_SUM)
            put(&b, "            acc += v%" PRId64 ";\n", x);
        else if (pass == 0)
            put(&b, "            m = v%" PRId64 " > m ? v%" PRId64 " : m;\n", x, x);
        else if (pass == 1 && kind == YG_ANCHOR_SOFTMAX)
            put(&b,
                "            const T e = exp(v%" PRId64 " - m);\n"
                "            o%d[j] = e;\n"
                "            acc += e;\n",
                x, ao);
        else if (pass == 1)
            put(&b, "            acc += exp(v%" PRId64 " - m);\n", x);
        else if (kind == YG_ANCHOR_SOFTMAX)
            put(&b, "            o%d[j] *= inv;\n", ao);
        else
            put(&b, "            o%d[j] = v%" PRId64 " - lse;\n", ao, x);
        put(&b, "        }\n");
    }
    if (kind == YG_ANCHOR_SUM)
        put(&b, "        o%d[0] = (T)acc;\n", ao);
    put(&b, "    }\n}\n");
    return take(&b, st, source);
}

yg_status yg__fuser_codegen_pattern(const yg_graph *sub, const char *pattern, char **source) {
    sbuf b = {0};
    if (sub->last != NULL && yg__fuser_anchor(sub->last) != YG_ANCHOR_NONE &&
        sub->param->n_outputs > 0 && (sub->param->outputs[0]->type.dtype == YG_FLOAT32 ||
                                      sub->param->outputs[0]->type.dtype == YG_FLOAT64))
        return codegen_rows(sub, sub->last, pattern, source);
    const yg_ir_value *kout[YG_FUSE_MAX_OUTPUTS];
    int32_t n_in = sub->param->n_outputs;
    int32_t n_out = yg__fuser_kernel_outputs(sub, kout, YG_FUSE_MAX_OUTPUTS);
    if (n_out < 0)
        return fail("a group writes too many outputs", "");
    int32_t dtype = n_in > 0 ? sub->param->outputs[0]->type.dtype : YG_IR_UNKNOWN;
    bool f32 = dtype == YG_FLOAT32;

    *source = NULL;
    if (dtype != YG_FLOAT32 && dtype != YG_FLOAT64)
        return fail("a group needs a float32 or float64 dtype", "");
    put(&b, "/* a fusion group of %" PRId64 " nodes, input strides %s */\n", sub->n_nodes, pattern);
    for (size_t i = 0; i < sizeof prelude / sizeof prelude[0]; i++)
        put(&b, "%s", prelude[i]);
    put(&b, "\ntypedef %s T;\n\n", f32 ? "float" : "double");
    put(&b,
        "void yg_fused_kernel(int64_t n, int ndim, const int64_t *sizes, char *const *ptrs,\n"
        "                     const int64_t *strides)\n{\n"
        "    const int64_t inner = sizes[ndim - 1];\n"
        "    if (n == 0 || inner == 0)\n        return;\n"
        "    const int64_t chunks = (inner + %d - 1) / %d;\n"
        "    const int64_t tiles = (n / inner) * chunks;\n"
        "#pragma omp parallel for schedule(static) if (n >= 32768)\n"
        "    for (int64_t t = 0; t < tiles; t++) {\n"
        "        const int64_t j0 = (t %% chunks) * %d;\n"
        "        const int64_t j1 = j0 + %d < inner ? j0 + %d : inner;\n"
        "        int64_t off[%d] = {0};\n"
        "        int64_t r = t / chunks;\n"
        "        for (int d = ndim - 2; d >= 0; d--) {\n"
        "            const int64_t c = r %% sizes[d];\n"
        "            r /= sizes[d];\n"
        "            for (int k = 0; k < %d; k++)\n"
        "                off[k] += c * strides[k * ndim + d];\n"
        "        }\n",
        YG_FUSE_TILE,
        YG_FUSE_TILE,
        YG_FUSE_TILE,
        YG_FUSE_TILE,
        YG_FUSE_TILE,
        n_in + n_out,
        n_in + n_out);
    for (int32_t o = 0; o < n_out; o++)
        put(&b, "        T *restrict o%d = (T *)ptrs[%d] + off[%d];\n", o, o, o);
    for (int32_t i = 0; i < n_in; i++) {
        int k = n_out + i;
        put(&b, "        const T *restrict a%d = (const T *)ptrs[%d] + off[%d];\n", i, k, k);
        if (pattern[i] == 'b')
            put(&b, "        const T b%d = a%d[0];\n", i, i);
        else if (pattern[i] == 's')
            put(&b, "        const int64_t s%d = strides[%d * ndim + ndim - 1];\n", i, k);
    }
    put(&b, "#pragma omp simd\n        for (int64_t j = j0; j < j1; j++) {\n");
    for (int32_t i = 0; i < n_in; i++) {
        if (pattern[i] == 'b')
            put(&b, "            const T v%d = b%d;\n", i, i);
        else if (pattern[i] == 's')
            put(&b, "            const T v%d = a%d[j * s%d];\n", i, i, i);
        else
            put(&b, "            const T v%d = a%d[j];\n", i, i);
    }
    yg_status st = put_body(&b, sub, f32);
    for (int32_t o = 0; st == YG_OK && o < n_out; o++)
        put(&b, "            o%d[j] = v%" PRId64 ";\n", o, kout[o]->scratch);
    put(&b, "        }\n    }\n}\n");
    return take(&b, st, source);
}

/* ---- CUDA ----
 *
 * The same body as CUDA C++ for NVRTC.  Every operand is addressed by
 * div/mod of an index over the dims through its strides (0 where
 * broadcast).  Each kernel comes in two index widths from one template:
 * yg_fused_kernel (64-bit) and yg_fused_kernel_i32, which a launch may
 * take when yg__fuser_cuda_index32_ok says the sizes allow (32-bit
 * division is several times cheaper on the GPU).  Math is CUDA's own
 * device functions under the same names (C++ overloads take float for
 * float).
 *   elementwise: one thread per output element, a grid-stride loop;
 *   anchored:    one block per row (a grid-stride loop over rows), the
 *                block's threads striding along the row; the passes of
 *                the CPU row kernel, each ending in a block reduction
 *                (warp shuffles, then one warp over the warps' partials),
 *                in double for sums as on the CPU.  Launch with a multiple
 *                of 32 threads per block, at most 1024. */

static const char cuda_prelude[] =
    "typedef long long int64_t;\n"
    "#define INFINITY __int_as_float(0x7f800000)\n"
    "#define NAN __int_as_float(0x7fffffff)\n";

/* Block-wide sum and max in double, every thread of the block calling;
 * sh: 32 doubles of shared memory. */
static const char cuda_block_reduce[] =
    "__device__ double yg_block_reduce(double v, double *sh, bool max)\n"
    "{\n"
    "    for (int o = 16; o > 0; o >>= 1) {\n"
    "        const double w = __shfl_down_sync(0xffffffffu, v, o);\n"
    "        v = max ? (w > v ? w : v) : v + w;\n"
    "    }\n"
    "    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
    "    __syncthreads(); /* sh may still be read from the last call */\n"
    "    if (lane == 0)\n"
    "        sh[warp] = v;\n"
    "    __syncthreads();\n"
    "    if (warp == 0) {\n"
    "        v = lane < (int)((blockDim.x + 31) >> 5) ? sh[lane] : (max ? -INFINITY : 0.0);\n"
    "        for (int o = 16; o > 0; o >>= 1) {\n"
    "            const double w = __shfl_down_sync(0xffffffffu, v, o);\n"
    "            v = max ? (w > v ? w : v) : v + w;\n"
    "        }\n"
    "        if (lane == 0)\n"
    "            sh[0] = v;\n"
    "    }\n"
    "    __syncthreads();\n"
    "    return sh[0];\n"
    "}\n\n";

/* The argument block and the two entry points over body template
 * yg_fused_body<I>. */
static void cuda_head(sbuf *b, const yg_graph *sub, const char *what, bool f32, int32_t nops,
                      bool rows) {
    put(b,
        "/* a fusion group of %" PRId64 " nodes%s, CUDA */\n%s\ntypedef %s T;\n\n",
        sub->n_nodes,
        what,
        cuda_prelude,
        f32 ? "float" : "double");
    if (rows)
        put(b, "%s", cuda_block_reduce);
    put(b,
        "struct yg_fused_args {\n"
        "    int64_t n;\n"
        "    int ndim;\n"
        "    int64_t sizes[%d];\n"
        "    int64_t strides[%d][%d]; /* outputs, then inputs; elements */\n"
        "    char *ptrs[%d];\n"
        "};\n\n"
        "template <typename I>\n"
        "__device__ __forceinline__ void yg_fused_body(const yg_fused_args &a)\n{\n",
        YG_MAX_DIMS,
        nops,
        YG_MAX_DIMS,
        nops);
}

static const char cuda_entries[] =
    "extern \"C\" __global__ void yg_fused_kernel(const yg_fused_args a)\n"
    "{\n    yg_fused_body<int64_t>(a);\n}\n\n"
    "extern \"C\" __global__ void yg_fused_kernel_i32(const yg_fused_args a)\n"
    "{\n    yg_fused_body<int>(a);\n}\n";

/* The operands' offsets for index r over dims [0, last) (the row's, or
 * the element's with last = ndim). */
static void cuda_offsets(sbuf *b, int32_t nops, const char *index, const char *last) {
    put(b,
        "        I off[%d] = {0};\n"
        "        I r = %s;\n"
        "        for (int d = %s - 1; d >= 0; d--) {\n"
        "            const I c = r %% (I)a.sizes[d];\n"
        "            r /= (I)a.sizes[d];\n"
        "            for (int k = 0; k < %d; k++)\n"
        "                off[k] += c * (I)a.strides[k][d];\n"
        "        }\n",
        nops,
        index,
        last,
        nops);
}

static yg_status codegen_cuda_rows(const yg_graph *sub, const yg_ir_node *an, char **source) {
    sbuf b = {0};
    const yg_ir_value *kout[YG_FUSE_MAX_OUTPUTS];
    int32_t n_in = sub->param->n_outputs;
    int32_t n_out = yg__fuser_kernel_outputs(sub, kout, YG_FUSE_MAX_OUTPUTS);
    bool f32 = sub->param->outputs[0]->type.dtype == YG_FLOAT32;
    yg_fuse_anchor kind = yg__fuser_anchor(an);
    int32_t ao = -1, nops = n_in + n_out;
    char what[128];
    for (int32_t o = 0; o < n_out; o++)
        if (kout[o] == an->outputs[0])
            ao = o;
    if (n_out < 0 || ao < 0)
        return fail("an anchored group must output its anchor", "");
    snprintf(what, sizeof what, " anchored by %s", an->kind);
    cuda_head(&b, sub, what, f32, nops, true);
    put(&b,
        "    __shared__ double sh[32];\n"
        "    const I inner = (I)a.sizes[a.ndim - 1];\n"
        "    const I rows = inner == 0 ? 0 : (I)a.n / inner;\n"
        "    for (I row = blockIdx.x; row < rows; row += (I)gridDim.x) {\n");
    cuda_offsets(&b, nops, "row", "(a.ndim - 1)");
    for (int32_t o = 0; o < n_out; o++)
        put(&b,
            "        T *o%d = (T *)a.ptrs[%d] + off[%d];\n"
            "        const I so%d = (I)a.strides[%d][a.ndim - 1];\n",
            o, o, o, o, o);
    for (int32_t i = 0; i < n_in; i++) {
        int k = n_out + i;
        put(&b,
            "        const T *a%d = (const T *)a.ptrs[%d] + off[%d];\n"
            "        const I s%d = (I)a.strides[%d][a.ndim - 1];\n",
            i, k, k, i, k);
    }
    int passes = kind == YG_ANCHOR_SUM ? 1 : 3;
    double eps = 1e-5;
    if (kind == YG_ANCHOR_LAYER_NORM)
        (void)yg__ir_attr_as_double(an, "eps", &eps);
    int64_t x = an->inputs[0]->scratch;
    yg_status st = YG_OK;
    bool max_pass0 = kind == YG_ANCHOR_SOFTMAX || kind == YG_ANCHOR_LOG_SOFTMAX;
    put(&b, "        double acc = %s;\n", max_pass0 ? "-INFINITY" : "0");
    for (int pass = 0; st == YG_OK && pass < passes; pass++) {
        if (pass == 1 && kind == YG_ANCHOR_LAYER_NORM)
            put(&b, "        const double mean = acc / (double)inner;\n        acc = 0;\n");
        else if (pass == 1)
            put(&b, "        const T m = (T)acc;\n        acc = 0;\n");
        if (pass == 2 && kind == YG_ANCHOR_LAYER_NORM)
            put(&b,
                "        const T rstd = (T)(1 / sqrt(acc / (double)inner + %a));\n"
                "        const T tmean = (T)mean;\n",
                eps);
        else if (pass == 2)
            put(&b,
                kind == YG_ANCHOR_SOFTMAX ? "        const T inv = (T)(1 / acc);\n"
                                          : "        const T lse = m + (T)log(acc);\n");
        put(&b, "        for (I j = threadIdx.x; j < inner; j += (I)blockDim.x) {\n");
        for (int32_t i = 0; i < n_in; i++)
            put(&b, "            const T v%d = a%d[j * s%d];\n", i, i, i);
        st = put_body(&b, sub, f32);
        x = an->inputs[0]->scratch;
        if (pass == 0)
            for (int32_t o = 0; st == YG_OK && o < n_out; o++)
                if (o != ao)
                    put(&b, "            o%d[j * so%d] = v%" PRId64 ";\n", o, o, kout[o]->scratch);
        if (kind == YG_ANCHOR_LAYER_NORM && pass == 1)
            put(&b,
                "            const double dv = (double)v%" PRId64 " - mean;\n"
                "            acc += dv * dv;\n",
                x);
        else if (kind == YG_ANCHOR_LAYER_NORM && pass == 2)
            put(&b,
                "            o%d[j * so%d] = (v%" PRId64 " - tmean) * rstd * v%" PRId64
                " + v%" PRId64 ";\n",
                ao, ao, x, an->inputs[1]->scratch, an->inputs[2]->scratch);
        else if (pass == 0 && max_pass0)
            put(&b, "            acc = (double)v%" PRId64 " > acc ? (double)v%" PRId64 " : acc;\n",
                x, x);
        else if (pass == 0)
            put(&b, "            acc += v%" PRId64 ";\n", x);
        else if (pass == 1 && kind == YG_ANCHOR_SOFTMAX)
            put(&b,
                "            const T e = exp(v%" PRId64 " - m);\n"
                "            o%d[j * so%d] = e;\n"
                "            acc += e;\n",
                x, ao, ao);
        else if (pass == 1)
            put(&b, "            acc += exp(v%" PRId64 " - m);\n", x);
        else if (kind == YG_ANCHOR_SOFTMAX)
            put(&b, "            o%d[j * so%d] *= inv;\n", ao, ao);
        else
            put(&b, "            o%d[j * so%d] = v%" PRId64 " - lse;\n", ao, ao, x);
        put(&b, "        }\n");
        if (pass < 2)
            put(&b, "        acc = yg_block_reduce(acc, sh, %s);\n",
                pass == 0 && max_pass0 ? "true" : "false");
    }
    if (kind == YG_ANCHOR_SUM)
        put(&b, "        if (threadIdx.x == 0)\n            o%d[0] = (T)acc;\n", ao);
    put(&b, "    }\n}\n\n%s", cuda_entries);
    return take(&b, st, source);
}

yg_status yg__fuser_codegen_cuda(const yg_graph *sub, char **source) {
    sbuf b = {0};
    const yg_ir_value *kout[YG_FUSE_MAX_OUTPUTS];
    int32_t n_in = sub->param->n_outputs;
    int32_t n_out = yg__fuser_kernel_outputs(sub, kout, YG_FUSE_MAX_OUTPUTS);
    int32_t dtype = n_in > 0 ? sub->param->outputs[0]->type.dtype : YG_IR_UNKNOWN;
    bool f32 = dtype == YG_FLOAT32;

    *source = NULL;
    if (n_out < 0)
        return fail("a group writes too many outputs", "");
    if (dtype != YG_FLOAT32 && dtype != YG_FLOAT64)
        return fail("a group needs a float32 or float64 dtype", "");
    if (sub->last != NULL && yg__fuser_anchor(sub->last) != YG_ANCHOR_NONE)
        return codegen_cuda_rows(sub, sub->last, source);
    int32_t nops = n_in + n_out;
    cuda_head(&b, sub, "", f32, nops, false);
    put(&b,
        "    for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < (I)a.n;\n"
        "         i += (I)gridDim.x * (I)blockDim.x) {\n");
    cuda_offsets(&b, nops, "i", "a.ndim");
    for (int32_t i = 0; i < n_in; i++)
        put(&b,
            "        const T v%d = ((const T *)a.ptrs[%d])[off[%d]];\n",
            i,
            n_out + i,
            n_out + i);
    /* The block's body is indented for the CPU loop; it reads as well here. */
    yg_status st = put_body(&b, sub, f32);
    for (int32_t o = 0; st == YG_OK && o < n_out; o++)
        put(&b, "        ((T *)a.ptrs[%d])[off[%d]] = v%" PRId64 ";\n", o, o, kout[o]->scratch);
    put(&b, "    }\n}\n\n%s", cuda_entries);
    return take(&b, st, source);
}

bool yg__fuser_cuda_index32_ok(int64_t n, int ndim, const int64_t *sizes,
                               const int64_t *strides, int nops, int64_t grid_threads) {
    const int64_t lim = INT32_MAX;
    if (n < 0 || grid_threads < 0 || n > lim - grid_threads)
        return false;
    for (int k = 0; k < nops; k++) {
        int64_t last = 0; /* the operand's largest offset */
        for (int d = 0; d < ndim; d++) {
            int64_t st = strides[k * ndim + d], t;
            if (sizes[d] <= 0)
                return n == 0;
            if (st < 0 || __builtin_mul_overflow(sizes[d] - 1, st, &t) ||
                __builtin_add_overflow(last, t, &last) || last > lim)
                return false;
        }
    }
    return true;
}
