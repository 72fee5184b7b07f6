/*
 * meta/attention.c - the meta functions of flash_attention and of its
 * fused gradient (meta/meta.h): their checks and their results, for
 * every device.
 *
 * query [..., L, E], key [..., S, E], value [..., S, Ev] share their batch
 * dims exactly (the kernel walks them as one flat batch, so nothing
 * broadcasts) and one floating dtype; output is [..., L, Ev] and
 * logsumexp [..., L], of that dtype, on the inputs' device.
 */
#include "decls/attention.h"

#include "core/core.h"
#include "meta/meta.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Checks query, key and value (of op, forward or gradient). */
static yg_status
check_qkv(const char *op, const yg_tensor *q, const yg_tensor *k, const yg_tensor *v) {
    const yg_tensor *ts[3] = {q, k, v};
    const char *names[3] = {"query", "key", "value"};
    char a[128], b[128], c[128];

    YG_RETURN_IF_ERROR(yg__check_devices(op, 3, ts, names, NULL, 0, NULL));
    for (int i = 0; i < 3; i++) {
        if (!yg__dtype_is_floating(ts[i]->dtype) || ts[i]->dtype != q->dtype)
            return yg__fail(YG_ERR_DTYPE,
                            "%s: expected query, key and value of one floating dtype, got %s, "
                            "%s and %s",
                            op,
                            yg_dtype_name(q->dtype),
                            yg_dtype_name(k->dtype),
                            yg_dtype_name(v->dtype));
    }
    yg__format_sizes(q->sizes, q->ndim, a, sizeof a);
    yg__format_sizes(k->sizes, k->ndim, b, sizeof b);
    yg__format_sizes(v->sizes, v->ndim, c, sizeof c);
    if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: expected query [..., L, E], key [..., S, E] and value [..., S, Ev] "
                        "of at least 2 dims, got %s, %s and %s",
                        op,
                        a,
                        b,
                        c);
    int32_t nb = q->ndim - 2;
    bool same_batch = k->ndim == q->ndim && v->ndim == q->ndim &&
                      memcmp(k->sizes, q->sizes, sizeof(int64_t) * (size_t)nb) == 0 &&
                      memcmp(v->sizes, q->sizes, sizeof(int64_t) * (size_t)nb) == 0;
    if (!same_batch)
        return yg__fail(YG_ERR_SHAPE,
                        "%s: query %s, key %s and value %s must have the same batch dims "
                        "(they do not broadcast)",
                        op,
                        a,
                        b,
                        c);
    if (k->sizes[nb + 1] != q->sizes[nb + 1])
        return yg__fail(YG_ERR_SHAPE,
                        "%s: key %s must have query %s's last dim E = %" PRId64,
                        op,
                        b,
                        a,
                        q->sizes[nb + 1]);
    if (v->sizes[nb] != k->sizes[nb])
        return yg__fail(YG_ERR_SHAPE,
                        "%s: value %s must have key %s's S = %" PRId64 " rows",
                        op,
                        c,
                        b,
                        k->sizes[nb]);
    return YG_OK;
}

/* A new tensor of sizes on t's device, of t's dtype. */
static yg_status new_like_device(const char *op,
                                 const yg_tensor *t,
                                 const int64_t *sizes,
                                 int64_t ndim,
                                 yg_tensor **out) {
    return yg__tensor_new_on(
        op, sizes, ndim, t->dtype, t->storage->device, t->storage->device_index, out);
}

yg_status yg__meta_flash_attention(const yg_tensor *query,
                                   const yg_tensor *key,
                                   const yg_tensor *value,
                                   bool is_causal,
                                   const double *scale,
                                   yg_tensor **out_output,
                                   yg_tensor **out_logsumexp) {
    const char *op = "flash_attention";
    int64_t sizes[YG_MAX_DIMS];
    yg_tensor *o = NULL;
    yg_status st;

    (void)is_causal;
    (void)scale;
    *out_output = NULL;
    *out_logsumexp = NULL;
    YG_RETURN_IF_ERROR(check_qkv(op, query, key, value));
    int32_t nd = query->ndim;
    memcpy(sizes, query->sizes, sizeof(int64_t) * (size_t)nd);
    sizes[nd - 1] = value->sizes[nd - 1];
    YG_RETURN_IF_ERROR(new_like_device(op, query, sizes, nd, &o));
    st = new_like_device(op, query, query->sizes, nd - 1, out_logsumexp);
    if (st != YG_OK) {
        yg_release(o);
        return st;
    }
    *out_output = o;
    return YG_OK;
}

yg_status yg__meta_flash_attention_backward_fused(const yg_tensor *grad_output,
                                                  const yg_tensor *query,
                                                  const yg_tensor *key,
                                                  const yg_tensor *value,
                                                  const yg_tensor *output,
                                                  const yg_tensor *logsumexp,
                                                  bool is_causal,
                                                  const double *scale,
                                                  yg_tensor **out_grad_query,
                                                  yg_tensor **out_grad_key,
                                                  yg_tensor **out_grad_value) {
    const char *op = "flash_attention_backward_fused";
    int64_t sizes[YG_MAX_DIMS];
    yg_tensor *r[3] = {NULL, NULL, NULL};
    char a[128], b[128];
    yg_status st;

    (void)is_causal;
    (void)scale;
    *out_grad_query = NULL;
    *out_grad_key = NULL;
    *out_grad_value = NULL;
    YG_RETURN_IF_ERROR(check_qkv(op, query, key, value));
    int32_t nd = query->ndim;
    memcpy(sizes, query->sizes, sizeof(int64_t) * (size_t)nd);
    sizes[nd - 1] = value->sizes[nd - 1];
    const yg_tensor *gs[3] = {grad_output, output, logsumexp};
    const char *gnames[3] = {"grad_output", "output", "logsumexp"};
    for (int i = 0; i < 3; i++) {
        const yg_tensor *g = gs[i];
        int32_t gnd = i == 2 ? nd - 1 : nd;
        if (g->dtype != query->dtype || g->ndim != gnd ||
            memcmp(g->sizes, sizes, sizeof(int64_t) * (size_t)gnd) != 0)
            return yg__fail(YG_ERR_SHAPE,
                            "%s: expected %s of sizes %s and dtype %s, got %s %s",
                            op,
                            gnames[i],
                            yg__format_sizes(sizes, gnd, a, sizeof a),
                            yg_dtype_name(query->dtype),
                            yg_dtype_name(g->dtype),
                            yg__format_sizes(g->sizes, g->ndim, b, sizeof b));
    }
    YG_RETURN_IF_ERROR(
        yg__check_devices(op,
                          4,
                          (const yg_tensor *const[]){query, grad_output, output, logsumexp},
                          (const char *const[]){"query", "grad_output", "output", "logsumexp"},
                          NULL,
                          0,
                          NULL));
    st = yg__tensor_empty_like(query, query->dtype, &r[0]);
    if (st == YG_OK)
        st = yg__tensor_empty_like(key, query->dtype, &r[1]);
    if (st == YG_OK)
        st = yg__tensor_empty_like(value, query->dtype, &r[2]);
    if (st != YG_OK) {
        for (int i = 0; i < 3; i++)
            yg_release(r[i]);
        return st;
    }
    *out_grad_query = r[0];
    *out_grad_key = r[1];
    *out_grad_value = r[2];
    return YG_OK;
}
