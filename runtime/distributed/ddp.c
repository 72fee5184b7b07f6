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
 *
 * Devices: one code path for both backends.  The buckets are tensors on
 * the parameters' device (cpu for an MPI group, the group's GPU for an
 * NCCL one), and every access to them is a tensor op on views of them
 * (copy_ of a gradient into its slot, fill_ of a count, div_ by the world
 * size, copy_ back into .grad), so on a GPU they are kernels queued on
 * the calling thread's current stream, which the NCCL backend orders its
 * collectives after and waits return to.  Only the counts are read on
 * the host, once per finish.  The checks of creation exchange host data
 * over the group's MPI part, whatever its backend.
 */
#include "autograd/node.h"
#include "distributed/dist_int.h"
#include "yagrad/autograd.h"
#include "yagrad/ops_inplace_arithmetic.h"
#include "yagrad/ops_inplace_fill.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BUCKET_BYTES (25 * 1024 * 1024)
#define DESC_LEN             (2 + YG_MAX_DIMS) /* dtype, ndim, sizes */

typedef struct ddp_param {
    yg_ddp *owner;
    yg_tensor *t;     /* retained */
    yg_tensor *slot;  /* its elements of the bucket's buffer, with t's sizes */
    yg_tensor *count; /* its count: one element of the last bucket's buffer */
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
    int64_t pending;  /* parameters not yet ready */
    yg_tensor *buf;   /* contiguous on the parameters' device: the gradients
                       * (numel elements), then in the last bucket the counts */
    yg_tensor *grads; /* buf's first numel elements */
    yg_work *work;    /* in flight, NULL when not queued */
} ddp_bucket;

struct yg_ddp {
    yg_process_group *pg;
    ddp_param *params;
    int64_t n_params;
    ddp_bucket *buckets;
    int64_t n_buckets;
    int64_t next_launch;
    yg_tensor *counts;   /* the last bucket's n_params counts */
    double *counts_host; /* n_params: the counts summed over ranks, read by finish */
    bool sync;
    yg_ddp_options opts;
};

static void emit(yg_ddp *d, yg_ddp_event ev, int64_t bucket) {
    if (d->opts.on_event != NULL)
        d->opts.on_event(ev, bucket, d->opts.on_event_ctx);
}

/* The last bucket carries one count per parameter after its gradients
 * (fill_slot writes 1 with a gradient, 0 for a missing one), in the
 * bucket's dtype (exact for any world size below 2^24): every
 * parameter's readiness is final when that bucket is queued, as it is
 * queued last, and it saves finish a collective of its own.  Finish reads
 * the sums into counts_host; this is how many ranks had parameter i's
 * gradient. */
static int count_of(const yg_ddp *d, int64_t i) {
    return (int)lround(d->counts_host[i]);
}

/* Queues every bucket from next_launch on whose parameters are ready. */
static yg_status launch_ready(yg_ddp *d) {
    while (d->next_launch < d->n_buckets && d->buckets[d->next_launch].pending == 0) {
        ddp_bucket *b = &d->buckets[d->next_launch];
        YG_RETURN_IF_ERROR(yg_process_group_all_reduce(d->pg, b->buf, YG_REDUCE_SUM, &b->work));
        emit(d, YG_DDP_BUCKET_STARTED, d->next_launch);
        d->next_launch++;
    }
    return YG_OK;
}

/* Writes p's slot (src: its gradient, any layout; NULL: zeros) and its
 * count (1 with a gradient, else 0), with ops on the bucket's device. */
static yg_status fill_slot(ddp_param *p, const yg_tensor *src) {
    yg_tensor *same = NULL, *same2 = NULL;
    bool prev = yg_set_grad_enabled(false);
    yg_status st;

    st = src != NULL ? yg_copy_(p->slot, src, &same) : yg_zero_(p->slot, &same);
    if (st == YG_OK)
        st = yg_fill_(p->count, src != NULL ? 1.0 : 0.0, &same2);
    yg_set_grad_enabled(prev);
    yg_release(same);
    yg_release(same2);
    return st;
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
    st = fill_slot(p, g);
    yg_release(g);
    if (st != YG_OK)
        return yg__fail_prefix(st, "ddp");
    p->ready = true;
    d->buckets[p->bucket].pending--;
    st = launch_ready(d);
    return st != YG_OK ? yg__fail_prefix(st, "ddp") : YG_OK;
}

/* ---- creation ---- */

static yg_status check_local(yg_process_group *pg, yg_tensor *const *params, int64_t n) {
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
        YG_RETURN_IF_ERROR(yg__ddp_check_device(i,
                                                params[i],
                                                params[0],
                                                yg_process_group_backend(pg),
                                                yg_process_group_cuda_device(pg)));
    }
    return YG_OK;
}

yg_status yg__ddp_check_device(int64_t i,
                               const yg_tensor *t,
                               const yg_tensor *first,
                               yg_dist_backend backend,
                               int cuda_device) {
    char arg[48], a[32], b[32];

    if (i > 0 && (yg_tensor_device(t) != yg_tensor_device(first) ||
                  yg_tensor_device_index(t) != yg_tensor_device_index(first)))
        return yg__fail(YG_ERR_DEVICE,
                        "ddp_create: parameter %lld is on %s but parameter 0 is on %s; every "
                        "parameter must be on one device",
                        (long long)i,
                        yg__format_device(t, a, sizeof a),
                        yg__format_device(first, b, sizeof b));
    snprintf(arg, sizeof arg, "parameter %lld", (long long)i);
    if (backend == YG_DIST_NCCL)
        return yg__dist_check_cuda_tensor("ddp_create", arg, t, cuda_device);
    return yg__dist_check_tensor("ddp_create", arg, t);
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
        st = yg__process_group_host_all_gather(pg, in, all);
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
    st = yg__process_group_host_all_gather(pg, mine, all);
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

/* A view of buf's elements from offset on, contiguous with sizes. */
static yg_status bucket_view(const yg_tensor *buf,
                             const int64_t *sizes,
                             int64_t ndim,
                             int64_t offset,
                             yg_tensor **out) {
    int64_t strides[YG_MAX_DIMS], step = 1;

    for (int64_t k = ndim - 1; k >= 0; k--) {
        strides[k] = step;
        step *= sizes[k];
    }
    return yg__tensor_view("ddp_create", buf, sizes, strides, (int32_t)ndim, offset, out);
}

/* Bucket k's buffer, zeroed on the parameters' device, and its views. */
static yg_status make_bucket(yg_ddp *d, int64_t k) {
    const yg_tensor *t0 = d->params[0].t;
    ddp_bucket *b = &d->buckets[k];
    bool last = k == d->n_buckets - 1;
    int64_t sizes[1] = {b->numel + (last ? d->n_params : 0)};
    yg_tensor *same = NULL;

    YG_RETURN_IF_ERROR(yg__tensor_new_on("ddp_create",
                                         sizes,
                                         1,
                                         b->dtype,
                                         yg_tensor_device(t0),
                                         yg_tensor_device_index(t0),
                                         &b->buf));
    YG_RETURN_IF_ERROR(yg_zero_(b->buf, &same));
    yg_release(same);
    YG_RETURN_IF_ERROR(bucket_view(b->buf, &b->numel, 1, 0, &b->grads));
    if (last)
        YG_RETURN_IF_ERROR(bucket_view(b->buf, &d->n_params, 1, b->numel, &d->counts));
    return YG_OK;
}

/* Lays the buckets out: reverse registration order, one dtype each. */
static yg_status plan_buckets(yg_ddp *d, int64_t cap_bytes) {
    int64_t one[1] = {1};

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
        d->buckets[k].pending = d->buckets[k].n_params;
        YG_RETURN_IF_ERROR(make_bucket(d, k));
    }
    for (int64_t i = 0; i < d->n_params; i++) {
        ddp_param *p = &d->params[i];
        const ddp_bucket *last = &d->buckets[d->n_buckets - 1];
        YG_RETURN_IF_ERROR(bucket_view(d->buckets[p->bucket].buf,
                                       yg_tensor_sizes(p->t),
                                       yg_tensor_ndim(p->t),
                                       p->offset,
                                       &p->slot));
        YG_RETURN_IF_ERROR(bucket_view(last->buf, one, 1, last->numel + i, &p->count));
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
        yg_release(d->buckets[k].grads);
        yg_release(d->buckets[k].buf);
    }
    for (int64_t i = 0; i < d->n_params; i++) {
        /* Cannot fail: the hook is registered (hooked). */
        if (d->params[i].hooked) {
            yg_status cannot_fail = yg_tensor_remove_post_accumulate_grad_hook(
                d->params[i].t, on_accumulated, &d->params[i]);
            (void)cannot_fail;
        }
        yg_release(d->params[i].slot);
        yg_release(d->params[i].count);
        yg_release(d->params[i].t);
    }
    yg_release(d->counts);
    free(d->counts_host);
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
    /* Every rank takes part in the count exchange, even one whose own
     * arguments are bad, so that no rank waits for it. */
    local = check_local(pg, params, params_len);
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
    d->counts_host = calloc((size_t)params_len, sizeof *d->counts_host);
    if (d->params == NULL || d->counts_host == NULL) {
        free(d->params);
        free(d->counts_host);
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

/* Reads the counts summed over ranks to the host (through a host copy
 * from a GPU, after the current stream's work: the waits ordered it
 * after the last bucket's all-reduce). */
static yg_status read_counts(yg_ddp *d) {
    return yg_tensor_to_f64(d->counts, d->counts_host, d->n_params);
}

/* Divides every bucket's gradients (the sums over ranks) by the world
 * size, in place on their device. */
static yg_status average(yg_ddp *d) {
    double world = (double)yg_process_group_world_size(d->pg);

    for (int64_t k = 0; k < d->n_buckets; k++) {
        yg_tensor *same = NULL;
        YG_RETURN_IF_ERROR(yg_div_scalar_(d->buckets[k].grads, world, &same));
        yg_release(same);
    }
    return YG_OK;
}

/* Writes p's slot (the average, after average()) into its .grad: copied
 * into the .grad there is (whatever its layout), else set as a new one. */
static yg_status write_grad(ddp_param *p) {
    yg_tensor *g = NULL, *same = NULL;
    yg_status st;
    bool prev;

    YG_RETURN_IF_ERROR(yg_tensor_grad(p->t, &g));
    if (g == NULL) /* no reference to steal: .grad is a copy of the slot */
        return yg__accumulate_grad(p->t, p->slot, 0);
    prev = yg_set_grad_enabled(false);
    st = yg_copy_(g, p->slot, &same);
    yg_set_grad_enabled(prev);
    yg_release(same);
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
        YG_RETURN_IF_ERROR(fill_slot(p, NULL));
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
    if (st == YG_OK)
        st = read_counts(ddp);
    if (st == YG_OK)
        st = check_counts(ddp);
    if (st == YG_OK)
        st = average(ddp);
    if (st == YG_OK) {
        for (int64_t i = 0; i < ddp->n_params && st == YG_OK; i++)
            if (count_of(ddp, i) > 0)
                st = write_grad(&ddp->params[i]);
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
