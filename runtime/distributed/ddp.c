/*
 * ddp.c - yg_ddp: gradients averaged over ranks, all-reduced in buckets
 * while backward runs (PyTorch's DistributedDataParallel reducer, cut to
 * what a C library needs).
 *
 * Invariants:
 *   - buckets are fixed at creation: parameters in reverse registration
 *     order, one dtype per bucket, greedily up to bucket_bytes;
 *   - a bucket's all-reduce is queued only when every bucket before it
 *     has been (next_launch), so all ranks queue the same collectives in
 *     the same order even when their gradients arrive in different
 *     orders, which MPI requires;
 *   - each parameter is copied into its bucket at most once per
 *     iteration (ready); finish resets everything for the next one.
 * Unused parameters: finish queues what backward left, with zeros for the
 * missing gradients; the last bucket also sums one count per parameter (1
 * when the rank had its gradient), so every rank learns the same counts
 * and either fails with the same message or leaves globally unused
 * parameters alone.
 */
#include "autograd/node.h"
#include "distributed/dist_int.h"
#include "yagrad/autograd.h"
#include "yagrad/ops_inplace_fill.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BUCKET_BYTES (25 * 1024 * 1024)
#define DESC_LEN             (2 + YG_MAX_DIMS) /* dtype, ndim, sizes */

typedef struct ddp_param {
    yg_ddp *owner;
    yg_tensor *t; /* retained */
    int64_t bucket;
    int64_t offset; /* elements into the bucket's buffer */
    int64_t numel;
    bool ready; /* its gradient is in the bucket this iteration */
    bool hooked;
} ddp_param;

typedef struct ddp_bucket {
    yg_dtype dtype;
    int64_t numel;
    int64_t n_params;
    int64_t pending; /* parameters not yet ready */
    yg_tensor *buf;  /* contiguous, numel elements */
    yg_work *work;   /* in flight, NULL when not queued */
} ddp_bucket;

struct yg_ddp {
    yg_process_group *pg;
    ddp_param *params;
    int64_t n_params;
    ddp_bucket *buckets;
    int64_t n_buckets;
    int64_t next_launch;
    bool sync;
    yg_ddp_options opts;
};

static void emit(yg_ddp *d, yg_ddp_event ev, int64_t bucket) {
    if (d->opts.on_event != NULL)
        d->opts.on_event(ev, bucket, d->opts.on_event_ctx);
}

static char *slot_ptr(const yg_ddp *d, const ddp_param *p) {
    const ddp_bucket *b = &d->buckets[p->bucket];
    return (char *)yg_tensor_data(b->buf) + p->offset * (int64_t)yg_dtype_size(b->dtype);
}

/* The last bucket carries one count per parameter after its gradients
 * (1 where this rank had the gradient), in the bucket's dtype (exact for
 * any world size below 2^24): every parameter's readiness is final when
 * that bucket is queued, as it is queued last, and it saves finish a
 * collective of its own. */
static void *counts_ptr(const yg_ddp *d) {
    const ddp_bucket *b = &d->buckets[d->n_buckets - 1];
    return (char *)yg_tensor_data(b->buf) + b->numel * (int64_t)yg_dtype_size(b->dtype);
}

static void fill_counts(yg_ddp *d) {
    for (int64_t i = 0; i < d->n_params; i++) {
        double v = d->params[i].ready ? 1.0 : 0.0;
        if (d->buckets[d->n_buckets - 1].dtype == YG_FLOAT32)
            ((float *)counts_ptr(d))[i] = (float)v;
        else
            ((double *)counts_ptr(d))[i] = v;
    }
}

/* How many ranks had parameter i's gradient (after the last bucket). */
static int count_of(const yg_ddp *d, int64_t i) {
    if (d->buckets[d->n_buckets - 1].dtype == YG_FLOAT32)
        return (int)lround(((const float *)counts_ptr(d))[i]);
    return (int)lround(((const double *)counts_ptr(d))[i]);
}

/* Queues every bucket from next_launch on whose parameters are ready. */
static yg_status launch_ready(yg_ddp *d) {
    while (d->next_launch < d->n_buckets && d->buckets[d->next_launch].pending == 0) {
        ddp_bucket *b = &d->buckets[d->next_launch];
        if (d->next_launch == d->n_buckets - 1)
            fill_counts(d);
        YG_RETURN_IF_ERROR(yg_process_group_all_reduce(d->pg, b->buf, YG_REDUCE_SUM, &b->work));
        emit(d, YG_DDP_BUCKET_STARTED, d->next_launch);
        d->next_launch++;
    }
    return YG_OK;
}

/* Copies src (any layout) into the contiguous slot of p. */
static yg_status copy_into_slot(yg_ddp *d, ddp_param *p, const yg_tensor *src) {
    yg_tensor *c = NULL;
    yg_dtype dt = d->buckets[p->bucket].dtype;

    YG_RETURN_IF_ERROR(yg__tensor_contiguous_as(src, dt, true, &c));
    memcpy(slot_ptr(d, p), yg_tensor_data(c), (size_t)p->numel * yg_dtype_size(dt));
    yg_release(c);
    return YG_OK;
}

static yg_status on_accumulated(yg_tensor *leaf, void *ctx) {
    ddp_param *p = ctx;
    yg_ddp *d = p->owner;
    yg_tensor *g = NULL;
    yg_status st;

    (void)leaf;
    if (!d->sync)
        return YG_OK;
    if (p->ready)
        return yg__fail(YG_ERR_AUTOGRAD,
                        "ddp: parameter %lld received a second gradient before yg_ddp_finish; "
                        "call finish after each synchronised backward (or turn sync off to "
                        "accumulate)",
                        (long long)(p - d->params));
    YG_RETURN_IF_ERROR(yg_tensor_grad(p->t, &g));
    if (g == NULL)
        return YG_OK;
    st = copy_into_slot(d, p, g);
    yg_release(g);
    if (st != YG_OK)
        return yg__fail_prefix(st, "ddp");
    p->ready = true;
    d->buckets[p->bucket].pending--;
    st = launch_ready(d);
    return st != YG_OK ? yg__fail_prefix(st, "ddp") : YG_OK;
}

/* ---- creation ---- */

static yg_status check_local(yg_tensor *const *params, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        if (params[i] == NULL)
            return yg__fail(
                YG_ERR_INVALID_ARGUMENT, "ddp_create: parameter %lld is NULL", (long long)i);
        for (int64_t j = 0; j < i; j++)
            if (params[j] == params[i])
                return yg__fail(YG_ERR_INVALID_ARGUMENT,
                                "ddp_create: parameter %lld repeats parameter %lld",
                                (long long)i,
                                (long long)j);
        if (!yg_tensor_requires_grad(params[i]) || !yg_tensor_is_leaf(params[i]))
            return yg__fail(YG_ERR_AUTOGRAD,
                            "ddp_create: parameter %lld is not a leaf that requires grad",
                            (long long)i);
        if (!yg__dtype_is_floating(yg_tensor_dtype(params[i])))
            return yg__fail(YG_ERR_DTYPE,
                            "ddp_create: parameter %lld is %s; float32 or float64 expected",
                            (long long)i,
                            yg_dtype_name(yg_tensor_dtype(params[i])));
        YG_RETURN_IF_ERROR(yg__dist_check_tensor("ddp_create", "parameter", params[i]));
    }
    return YG_OK;
}

static void describe(const yg_tensor *t, int64_t *desc) {
    memset(desc, 0, DESC_LEN * sizeof *desc);
    desc[0] = yg_tensor_dtype(t);
    desc[1] = yg_tensor_ndim(t);
    for (int64_t k = 0; k < yg_tensor_ndim(t); k++)
        desc[2 + k] = yg_tensor_sizes(t)[k];
}

static void format_desc(const int64_t *desc, char *buf, size_t cap) {
    char sizes[160];
    yg__format_sizes(desc + 2, desc[1], sizes, sizeof sizes);
    snprintf(buf, cap, "%s %s", sizes, yg_dtype_name((yg_dtype)desc[0]));
}

/* Gathers one int64 per rank: each rank's parameter count, or -1 when it
 * rejected its own arguments (local_st), so no rank waits for one that
 * already returned. */
static yg_status agree_on_count(yg_process_group *pg, int64_t n, yg_status local_st) {
    int world = yg_process_group_world_size(pg);
    int64_t mine = local_st == YG_OK ? n : -1, sizes[1] = {world};
    int64_t one[1] = {1};
    yg_tensor *in = NULL, *all = NULL;
    char saved[YG__MESSAGE_CAP];
    yg_status st;

    snprintf(saved, sizeof saved, "%s", yg_last_error());
    st = yg_tensor_from_data(&mine, one, 1, YG_INT64, &in);
    if (st == YG_OK)
        st = yg_tensor_empty(sizes, 1, YG_INT64, &all);
    if (st == YG_OK)
        st = yg_process_group_all_gather(pg, in, all, NULL);
    if (st != YG_OK)
        goto out;
    if (local_st != YG_OK) {
        st = yg__fail(local_st, "%s", saved);
        goto out;
    }
    for (int r = 0; r < world; r++) {
        int64_t v = ((int64_t *)yg_tensor_data(all))[r];
        if (v < 0) {
            st = yg__fail(YG_ERR_INVALID_ARGUMENT,
                          "ddp_create: rank %d rejected its parameters (its own status says why)",
                          r);
            goto out;
        }
        if (v != ((int64_t *)yg_tensor_data(all))[0]) {
            st = yg__fail(YG_ERR_SHAPE,
                          "ddp_create: rank 0 has %lld parameters but rank %d has %lld",
                          (long long)((int64_t *)yg_tensor_data(all))[0],
                          r,
                          (long long)v);
            goto out;
        }
    }
out:
    yg_release(in);
    yg_release(all);
    return st;
}

/* Every rank gathers every rank's descriptors and reports the first
 * mismatch with rank 0, by parameter then rank: the same on every rank. */
static yg_status check_shapes(yg_process_group *pg, yg_tensor *const *params, int64_t n) {
    int world = yg_process_group_world_size(pg);
    int64_t mine_sizes[1] = {n * DESC_LEN}, all_sizes[1] = {(int64_t)world * n * DESC_LEN};
    yg_tensor *mine = NULL, *all = NULL;
    yg_status st;

    st = yg_tensor_empty(mine_sizes, 1, YG_INT64, &mine);
    if (st == YG_OK)
        st = yg_tensor_empty(all_sizes, 1, YG_INT64, &all);
    if (st != YG_OK)
        goto out;
    for (int64_t i = 0; i < n; i++)
        describe(params[i], (int64_t *)yg_tensor_data(mine) + i * DESC_LEN);
    st = yg_process_group_all_gather(pg, mine, all, NULL);
    if (st != YG_OK)
        goto out;
    for (int64_t i = 0; i < n && st == YG_OK; i++) {
        const int64_t *d = yg_tensor_data(all);
        const int64_t *ref = d + i * DESC_LEN;
        for (int r = 1; r < world; r++) {
            const int64_t *other = d + ((int64_t)r * n + i) * DESC_LEN;
            char a[192], b[192];
            if (memcmp(ref, other, DESC_LEN * sizeof *ref) == 0)
                continue;
            format_desc(ref, a, sizeof a);
            format_desc(other, b, sizeof b);
            st = yg__fail(YG_ERR_SHAPE,
                          "ddp_create: parameter %lld is %s on rank 0 but %s on rank %d",
                          (long long)i,
                          a,
                          b,
                          r);
            break;
        }
    }
out:
    yg_release(mine);
    yg_release(all);
    return st;
}

static yg_status broadcast_params(yg_process_group *pg, yg_tensor *const *params, int64_t n) {
    yg_work **works = calloc((size_t)n, sizeof *works);
    yg_status st = YG_OK;

    if (works == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "ddp_create: out of memory");
    for (int64_t i = 0; i < n && st == YG_OK; i++)
        st = yg_process_group_broadcast(pg, params[i], 0, &works[i]);
    for (int64_t i = 0; i < n; i++) {
        if (works[i] != NULL) {
            yg_status w = yg_work_wait(works[i]);
            if (st == YG_OK)
                st = w;
        }
        yg_work_release(works[i]);
    }
    free(works);
    return st;
}

/* Lays the buckets out: reverse registration order, one dtype each. */
static yg_status plan_buckets(yg_ddp *d, int64_t cap_bytes) {
    d->buckets = calloc((size_t)d->n_params, sizeof *d->buckets);
    if (d->buckets == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "ddp_create: out of memory");
    for (int64_t i = d->n_params - 1; i >= 0; i--) {
        ddp_param *p = &d->params[i];
        yg_dtype dt = yg_tensor_dtype(p->t);
        int64_t bytes = p->numel * (int64_t)yg_dtype_size(dt);
        ddp_bucket *b = d->n_buckets > 0 ? &d->buckets[d->n_buckets - 1] : NULL;
        if (b == NULL || b->dtype != dt ||
            (b->numel > 0 && (b->numel * (int64_t)yg_dtype_size(dt) + bytes > cap_bytes))) {
            b = &d->buckets[d->n_buckets++];
            b->dtype = dt;
        }
        p->bucket = b - d->buckets;
        p->offset = b->numel;
        b->numel += p->numel;
        b->n_params++;
    }
    for (int64_t k = 0; k < d->n_buckets; k++) {
        ddp_bucket *b = &d->buckets[k];
        int64_t sizes[1] = {b->numel + (k == d->n_buckets - 1 ? d->n_params : 0)};
        b->pending = b->n_params;
        YG_RETURN_IF_ERROR(yg_tensor_zeros(sizes, 1, b->dtype, &b->buf));
    }
    return YG_OK;
}

static void ddp_free(yg_ddp *d) {
    for (int64_t k = 0; k < d->n_buckets; k++) {
        /* Its status is dropped: release cannot fail, and a failure
         * already broke the group, which reports it on the next call. */
        if (d->buckets[k].work != NULL) {
            yg_status dropped = yg_work_wait(d->buckets[k].work);
            (void)dropped;
        }
        yg_work_release(d->buckets[k].work);
        yg_release(d->buckets[k].buf);
    }
    for (int64_t i = 0; i < d->n_params; i++) {
        /* Cannot fail: the hook is registered (hooked). */
        if (d->params[i].hooked) {
            yg_status cannot_fail = yg_tensor_remove_post_accumulate_grad_hook(
                d->params[i].t, on_accumulated, &d->params[i]);
            (void)cannot_fail;
        }
        yg_release(d->params[i].t);
    }
    free(d->buckets);
    free(d->params);
    free(d);
}

yg_status yg_ddp_create(yg_process_group *pg,
                        yg_tensor *const *params,
                        int64_t params_len,
                        const yg_ddp_options *options,
                        yg_ddp **out) {
    yg_ddp *d = NULL;
    yg_status st, local;

    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "ddp_create: out is NULL");
    *out = NULL;
    if (pg == NULL || params == NULL || params_len < 1)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "ddp_create: need a process group and at least one parameter, got pg %s, "
                        "params_len %lld",
                        pg == NULL ? "NULL" : "set",
                        (long long)params_len);
    if (options != NULL && options->bucket_bytes < 0)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "ddp_create: bucket_bytes must be >= 0, got %lld",
                        (long long)options->bucket_bytes);
    /* Buckets are packed and averaged by CPU code; over NCCL they would
     * need CUDA kernels yagrad does not have yet.  Every rank of a group
     * has the same backend, so all refuse alike. */
    if (yg_process_group_backend(pg) != YG_DIST_MPI)
        return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                        "ddp_create: the process group is an NCCL group (cuda:%d); data "
                        "parallelism runs over MPI groups and cpu parameters only for now",
                        yg_process_group_cuda_device(pg));
    /* Every rank takes part in the count exchange, even one whose own
     * arguments are bad, so that no rank waits for it. */
    local = check_local(params, params_len);
    st = agree_on_count(pg, params_len, local);
    if (st == YG_OK)
        st = check_shapes(pg, params, params_len);
    if (st == YG_OK)
        st = broadcast_params(pg, params, params_len);
    if (st != YG_OK)
        return st;
    d = calloc(1, sizeof *d);
    if (d == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "ddp_create: out of memory");
    d->pg = pg;
    d->sync = true;
    if (options != NULL)
        d->opts = *options;
    if (d->opts.bucket_bytes == 0)
        d->opts.bucket_bytes = DEFAULT_BUCKET_BYTES;
    d->params = calloc((size_t)params_len, sizeof *d->params);
    if (d->params == NULL) {
        free(d);
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "ddp_create: out of memory");
    }
    d->n_params = params_len;
    for (int64_t i = 0; i < params_len; i++) {
        d->params[i].owner = d;
        d->params[i].t = yg_retain(params[i]);
        d->params[i].numel = yg_tensor_numel(params[i]);
    }
    st = plan_buckets(d, d->opts.bucket_bytes);
    for (int64_t i = 0; i < params_len && st == YG_OK; i++) {
        st = yg_tensor_register_post_accumulate_grad_hook(
            d->params[i].t, on_accumulated, &d->params[i]);
        d->params[i].hooked = st == YG_OK;
    }
    if (st != YG_OK) {
        ddp_free(d);
        return st;
    }
    *out = d;
    return YG_OK;
}

bool yg_ddp_set_sync(yg_ddp *ddp, bool sync) {
    bool prev;
    if (ddp == NULL)
        return false;
    prev = ddp->sync;
    ddp->sync = sync;
    return prev;
}

int64_t yg_ddp_bucket_count(const yg_ddp *ddp) {
    return ddp != NULL ? ddp->n_buckets : 0;
}

int64_t yg_ddp_bucket_size(const yg_ddp *ddp, int64_t bucket) {
    if (ddp == NULL || bucket < 0 || bucket >= ddp->n_buckets)
        return 0;
    return ddp->buckets[bucket].n_params;
}

/* ---- finish ---- */

/* Multiplies the n elements at p (float32 or float64) by inv, into dst
 * (may be p). */
static void scale_into(void *dst, const void *src, int64_t n, yg_dtype dt, double inv) {
    if (dt == YG_FLOAT32) {
        float *o = dst, f = (float)inv;
        const float *i = src;
        for (int64_t e = 0; e < n; e++)
            o[e] = i[e] * f;
    } else {
        double *o = dst;
        const double *i = src;
        for (int64_t e = 0; e < n; e++)
            o[e] = i[e] * inv;
    }
}

/* Writes p's slot (the sum over ranks) divided by the world size into
 * its .grad: one pass straight into a plain contiguous .grad (the usual
 * case), else through a tensor of the slot. */
static yg_status write_grad(yg_ddp *d, ddp_param *p) {
    yg_tensor *g = NULL, *src = NULL, *same = NULL;
    yg_dtype dt = d->buckets[p->bucket].dtype;
    double inv = 1.0 / (double)yg_process_group_world_size(d->pg);
    yg_status st;
    bool prev;

    YG_RETURN_IF_ERROR(yg_tensor_grad(p->t, &g));
    if (g != NULL && yg_tensor_is_contiguous(g) && yg_tensor_dtype(g) == dt &&
        !yg_tensor_requires_grad(g)) {
        scale_into(yg_tensor_data(g), slot_ptr(d, p), p->numel, dt, inv);
        yg__tensor_bump_version(g);
        yg_release(g);
        return YG_OK;
    }
    scale_into(slot_ptr(d, p), slot_ptr(d, p), p->numel, dt, inv);
    st = yg_tensor_from_data(slot_ptr(d, p), yg_tensor_sizes(p->t), yg_tensor_ndim(p->t), dt, &src);
    if (st == YG_OK && g == NULL) {
        st = yg__accumulate_grad(p->t, src, 1);
    } else if (st == YG_OK) {
        prev = yg_set_grad_enabled(false);
        st = yg_copy_(g, src, &same);
        yg_set_grad_enabled(prev);
    }
    yg_release(same);
    yg_release(src);
    yg_release(g);
    return st;
}

static void reset(yg_ddp *d) {
    for (int64_t k = 0; k < d->n_buckets; k++) {
        yg_work_release(d->buckets[k].work);
        d->buckets[k].work = NULL;
        d->buckets[k].pending = d->buckets[k].n_params;
    }
    for (int64_t i = 0; i < d->n_params; i++)
        d->params[i].ready = false;
    d->next_launch = 0;
}

/* Queues the buckets backward left, with zeros for missing gradients
 * (the last one with the counts). */
static yg_status launch_rest(yg_ddp *d) {
    for (int64_t i = 0; i < d->n_params; i++) {
        ddp_param *p = &d->params[i];
        if (p->ready || p->bucket < d->next_launch)
            continue;
        memset(slot_ptr(d, p), 0, (size_t)p->numel * yg_dtype_size(d->buckets[p->bucket].dtype));
        d->buckets[p->bucket].pending--;
    }
    return launch_ready(d);
}

static yg_status check_counts(const yg_ddp *d) {
    int world = yg_process_group_world_size(d->pg);
    for (int64_t i = 0; i < d->n_params; i++) {
        char s[128];
        if (count_of(d, i) == world || d->opts.find_unused_parameters)
            continue;
        return yg__fail(YG_ERR_AUTOGRAD,
                        "ddp_finish: parameter %lld %s received no gradient on %d of %d ranks in "
                        "this iteration; create the wrapper with find_unused_parameters when "
                        "some parameters may go unused",
                        (long long)i,
                        yg_tensor_format_sizes(d->params[i].t, s, sizeof s),
                        world - count_of(d, i),
                        world);
    }
    return YG_OK;
}

yg_status yg_ddp_finish(yg_ddp *ddp) {
    yg_status st, w;

    if (ddp == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "ddp_finish: ddp is NULL");
    if (!ddp->sync)
        return YG_OK;
    st = launch_rest(ddp);
    /* Wait for everything queued, whatever failed, before touching any
     * buffer again. */
    for (int64_t k = 0; k < ddp->n_buckets; k++) {
        if (ddp->buckets[k].work == NULL)
            continue;
        w = yg_work_wait(ddp->buckets[k].work);
        if (st == YG_OK)
            st = w;
    }
    if (st == YG_OK) {
        st = check_counts(ddp);
        for (int64_t i = 0; i < ddp->n_params && st == YG_OK; i++)
            if (count_of(ddp, i) > 0)
                st = write_grad(ddp, &ddp->params[i]);
        for (int64_t k = 0; k < ddp->n_buckets && st == YG_OK; k++)
            emit(ddp, YG_DDP_BUCKET_FINISHED, k);
    }
    reset(ddp);
    return st;
}

void yg_ddp_release(yg_ddp *ddp) {
    if (ddp == NULL)
        return;
    ddp_free(ddp);
}
