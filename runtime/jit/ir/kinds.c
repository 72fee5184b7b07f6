/*
 * kinds.c - node kinds: interning op names from the generated op table
 * (yg__ops[]), the prim kinds, and what an op's schema string says about
 * its inputs and results.
 *
 * Kinds are interned so passes compare them by pointer: an op node's kind
 * is the `name` string of its yg__ops entry; a prim node's kind is one of
 * the arrays below.  Lookup is a linear scan of ~200 names (about 1 us);
 * it happens once per node built or parsed, never per pass visit, so a
 * hash table would buy nothing measurable yet.
 *
 * The schema is read from the op table's `schema` text, e.g.
 * "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values,
 * Tensor indices)": tensor arguments are those whose type starts with
 * "Tensor"; "(a)" on the result marks a view and "(a!)" an in-place op.
 * gen has already validated every schema, so this scanner only needs to
 * be right on well-formed text; on anything else it answers "no tensor
 * arguments, one result" rather than reading out of bounds.
 */
#include "jit/ir/ir.h"

#include <string.h>

const char yg__prim_param[] = "prim::Param";
const char yg__prim_return[] = "prim::Return";
const char yg__prim_constant[] = "prim::Constant";
const char yg__prim_none[] = "prim::None";
const char yg__prim_fusion_group[] = "prim::FusionGroup";
const char yg__prim_diff_graph[] = "prim::DifferentiableGraph";

/* The prim kinds a user may name (Param and Return are structural). */
static const char *const public_prims[] = {
    yg__prim_constant,
    yg__prim_none,
    yg__prim_fusion_group,
    yg__prim_diff_graph,
};

const char *yg__ir_kind_lookup(const char *name, size_t len, const yg_op_info **op) {
    *op = NULL;
    for (size_t i = 0; i < sizeof public_prims / sizeof public_prims[0]; i++) {
        if (strlen(public_prims[i]) == len && memcmp(public_prims[i], name, len) == 0)
            return public_prims[i];
    }
    for (int32_t i = 0; i < yg__ops_count; i++) {
        const char *s = yg__ops[i].name;
        if (strlen(s) == len && memcmp(s, name, len) == 0) {
            *op = &yg__ops[i];
            return s;
        }
    }
    return NULL;
}

/* One argument of a schema's parameter list: [begin, end) of its text. */
typedef struct schema_arg {
    const char *begin, *end;
} schema_arg;

/* Calls visit for each argument of the schema's parameter list (the "*"
 * separator skipped).  Returns the text after the closing ')', or NULL
 * when the schema has no parameter list. */
static const char *
for_each_arg(const char *schema, bool (*visit)(const schema_arg *arg, void *ctx), void *ctx) {
    const char *p = strchr(schema, '(');
    if (p == NULL)
        return NULL;
    p++;
    int depth = 0;
    const char *start = p;
    for (; *p != '\0'; p++) {
        if (*p == '(' || *p == '[') {
            depth++;
        } else if ((*p == ')' || *p == ']') && depth > 0) {
            depth--;
        } else if ((*p == ',' || *p == ')') && depth == 0) {
            schema_arg arg = {start, p};
            while (arg.begin < arg.end && *arg.begin == ' ')
                arg.begin++;
            while (arg.end > arg.begin && arg.end[-1] == ' ')
                arg.end--;
            bool is_star = arg.end - arg.begin == 1 && *arg.begin == '*';
            if (arg.end > arg.begin && !is_star && !visit(&arg, ctx))
                return p;
            if (*p == ')')
                return p + 1;
            start = p + 1;
        }
    }
    return NULL;
}

static bool starts_with(const schema_arg *a, const char *prefix) {
    size_t n = strlen(prefix);
    return (size_t)(a->end - a->begin) >= n && memcmp(a->begin, prefix, n) == 0;
}

typedef struct count_ctx {
    yg_ir_kind_info *info;
} count_ctx;

static bool count_tensor_args(const schema_arg *a, void *ctx) {
    yg_ir_kind_info *info = ((count_ctx *)ctx)->info;
    if (!starts_with(a, "Tensor"))
        return true;
    if (starts_with(a, "Tensor[]") || starts_with(a, "Tensor?[]")) {
        info->has_tensor_list = true;
        info->list_pos = info->n_tensor_args;
    } else {
        info->n_tensor_args++;
    }
    return true;
}

/* The tensor part of info for a schema: the counts and the list's place. */
static const char *count_schema(const char *schema, yg_ir_kind_info *info) {
    count_ctx ctx = {info};
    return for_each_arg(schema, count_tensor_args, &ctx);
}

yg_ir_kind_info yg__ir_kind_info(const yg_ir_node *n) {
    yg_ir_kind_info info = {0, false, 1, false, false, -1};
    if (n->op == NULL) {
        info.n_returns = 0;
        return info;
    }
    const char *rest = count_schema(n->op->schema, &info);
    if (rest == NULL)
        return info;
    const char *arrow = strstr(rest, "->");
    if (arrow == NULL)
        return info;
    arrow += 2;
    while (*arrow == ' ')
        arrow++;
    if (*arrow == '(') {
        /* "(Tensor values, Tensor indices)": count top-level commas. */
        int count = 1, depth = 0;
        for (const char *p = arrow + 1; *p != '\0'; p++) {
            if (*p == '(')
                depth++;
            else if (*p == ')' && depth-- == 0)
                break;
            else if (*p == ',' && depth == 0)
                count++;
        }
        info.n_returns = arrow[1] == ')' ? 0 : count;
    } else if (strstr(arrow, "[]") != NULL) {
        info.n_returns = -1; /* "Tensor(a)[]": as many as the op made */
    }
    info.is_inplace = strstr(arrow, "(a!)") != NULL;
    info.is_view = !info.is_inplace && strstr(arrow, "(a)") != NULL;
    return info;
}

typedef struct find_ctx {
    int32_t want, seen; /* tensor arguments, a list counting as one */
    schema_arg found;
    bool ok;
} find_ctx;

static bool find_tensor_arg(const schema_arg *a, void *vctx) {
    find_ctx *ctx = vctx;
    if (!starts_with(a, "Tensor"))
        return true;
    if (ctx->seen++ == ctx->want) {
        ctx->found = *a;
        ctx->ok = true;
        return false;
    }
    return true;
}

/* Finds the argument input idx of a node with n_inputs inputs stands for.
 * Inputs follow the tensor arguments in schema order; the one Tensor[] (gen
 * allows no second) takes what the others leave, wherever it sits, so the
 * arguments after it are counted from the end. */
static bool lookup_tensor_arg(const yg_op_info *op, int32_t idx, int32_t n_inputs, find_ctx *ctx) {
    *ctx = (find_ctx){-1, 0, {NULL, NULL}, false};
    if (op == NULL || idx < 0 || idx >= n_inputs)
        return false;
    yg_ir_kind_info info = {0, false, 1, false, false, -1};
    (void)count_schema(op->schema, &info);
    int32_t n_after = info.n_tensor_args - info.list_pos;
    if (!info.has_tensor_list)
        ctx->want = idx;
    else if (idx < info.list_pos)
        ctx->want = idx;
    else if (idx < n_inputs - n_after)
        ctx->want = info.list_pos;
    else
        ctx->want = info.list_pos + 1 + (idx - (n_inputs - n_after));
    (void)for_each_arg(op->schema, find_tensor_arg, ctx);
    return ctx->ok;
}

bool yg__ir_tensor_arg_name(const yg_op_info *op,
                            int32_t idx,
                            int32_t n_inputs,
                            char *buf,
                            size_t buf_len) {
    find_ctx ctx;
    if (buf_len == 0)
        return false;
    buf[0] = '\0';
    if (!lookup_tensor_arg(op, idx, n_inputs, &ctx))
        return false;
    /* "Tensor? bias=None": the name is the word after the last space
     * before any '='. */
    const char *eq = memchr(ctx.found.begin, '=', (size_t)(ctx.found.end - ctx.found.begin));
    const char *end = eq != NULL ? eq : ctx.found.end;
    const char *b = end;
    while (b > ctx.found.begin && b[-1] != ' ')
        b--;
    size_t n = (size_t)(end - b);
    if (n >= buf_len)
        n = buf_len - 1;
    memcpy(buf, b, n);
    buf[n] = '\0';
    return true;
}

bool yg__ir_tensor_arg_optional(const yg_op_info *op, int32_t idx, int32_t n_inputs) {
    find_ctx ctx;
    if (!lookup_tensor_arg(op, idx, n_inputs, &ctx))
        return false;
    /* "Tensor?", or "Tensor(a!)?" with an alias annotation between */
    const char *p = ctx.found.begin + strlen("Tensor");
    if (p < ctx.found.end && *p == '(') {
        while (p < ctx.found.end && *p != ')')
            p++;
        p++;
    }
    return p < ctx.found.end && *p == '?';
}

bool yg__ir_node_has_side_effects(const yg_ir_node *n) {
    if (n->op != NULL) {
        const char *dot = strchr(n->kind, '.');
        size_t base = dot != NULL ? (size_t)(dot - n->kind) : strlen(n->kind);
        if (base > 0 && n->kind[base - 1] == '_')
            return true;
        /* A state argument (Tensor(a!)?, batch_norm's running stats) is
         * written; a random op advances its generator, so two equal calls
         * differ and dropping one changes later draws. */
        const char *arrow = strstr(n->op->schema, "->");
        const char *bang = strstr(n->op->schema, "!)");
        const char *gen = strstr(n->op->schema, "Generator");
        if ((bang != NULL && bang < arrow) || (gen != NULL && gen < arrow))
            return true;
    }
    for (int32_t i = 0; i < n->n_attrs; i++) {
        const yg_ir_attr *a = &n->attrs[i];
        if (a->kind == YG_IR_ATTR_STR && strcmp(a->name, "mutates") == 0)
            return true;
        if (a->kind == YG_IR_ATTR_GRAPH) {
            for (const yg_ir_node *m = a->u.g->first; m != NULL; m = m->next) {
                if (yg__ir_node_has_side_effects(m))
                    return true;
            }
        }
    }
    return false;
}

typedef struct attr_ctx {
    const char *name;
    bool found;
} attr_ctx;

static bool find_attr_arg(const schema_arg *a, void *vctx) {
    attr_ctx *ctx = vctx;
    if (starts_with(a, "Tensor"))
        return true;
    const char *eq = memchr(a->begin, '=', (size_t)(a->end - a->begin));
    const char *end = eq != NULL ? eq : a->end;
    const char *b = end;
    while (b > a->begin && b[-1] != ' ')
        b--;
    size_t n = strlen(ctx->name);
    if ((size_t)(end - b) == n && memcmp(b, ctx->name, n) == 0) {
        ctx->found = true;
        return false;
    }
    return true;
}

bool yg__ir_op_has_attr_arg(const yg_op_info *op, const char *name) {
    attr_ctx ctx = {name, false};
    if (op == NULL)
        return false;
    (void)for_each_arg(op->schema, find_attr_arg, &ctx);
    return ctx.found;
}
