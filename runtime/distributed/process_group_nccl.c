/*
 * process_group_nccl.c - the NCCL part of a process group whose backend
 * is YG_DIST_NCCL: collectives on CUDA tensors.
 *
 * Bootstrap: NCCL needs every rank to hold the same ncclUniqueId, which
 * rank 0 makes and the group's MPI part broadcasts (no other transport
 * is invented).  Before that the MPI part also all-gathers the ranks'
 * host names, so that each rank knows its local rank (its place among
 * the ranks on its host), whose device it takes by default; and every
 * rank says with an all-reduce whether its local set-up (device, stream,
 * rank 0's id) worked, so that one rank's failure becomes an error on
 * all of them instead of the others waiting in ncclCommInitRank for a
 * rank that never comes.  The MPI collectives have the group's timeout;
 * ncclCommInitRank itself has none (a rank dying between the two waits
 * forever), which the header says.
 *
 * Collectives: each one is queued on the group's own stream, after an
 * event recorded on the calling thread's current stream for the group's
 * device (yg__cuda_current_stream: where that thread's kernels, copies
 * and allocations run, the legacy default stream unless
 * yg_cuda_set_stream chose another), so NCCL reads what was written
 * before the call.  A second event (done) recorded after the NCCL call
 * is what wait and test look at on the host (cudaEventQuery, polled
 * with a yield for the first 2 ms, then 50 us sleeps: the GPU makes
 * progress without the host, unlike libnbc, which needs the MPI part to
 * keep polling for a second), together with ncclCommGetAsyncError and
 * the group's timeout.
 * Once it has happened, wait (and a test that says done) also makes the
 * calling thread's current stream wait for done (cudaStreamWaitEvent),
 * so the result is ordered before later kernels on whatever stream is
 * current then.  A failure or a timeout aborts the communicator
 * (ncclCommAbort, which also ends its kernels) and breaks the group: as
 * for MPI, every later call fails at once.
 *
 * Buffers: a contiguous tensor is used in place; a non-contiguous one is
 * copied into a contiguous buffer on the device (yg__tensor_contiguous_as,
 * on the current stream before the ordering event), and wait or test
 * copies the result back (copy_, on the caller's thread and current
 * stream, then records done again after it), as the MPI part does for
 * cpu tensors.  float16, bfloat16 and the rest are reduced by NCCL in
 * their own dtype.  A work retains its tensors and buffers until it is
 * released; releasing one still in flight waits for it first, so the
 * caching allocator never hands out memory NCCL is still writing.
 *
 * Thread safety: as the header says, a group is used from one thread at
 * a time; nothing here is locked.  The calling thread's current CUDA
 * device is set to the group's for each call and restored after.
 */
#include "cuda/cuda.h"
#include "distributed/dist_int.h"
#include "yagrad/autograd.h"
#include "yagrad/ops_inplace_fill.h"

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_TIMEOUT_MS 600000
/* A host name travels as this many int32 (256 bytes, NUL-padded). */
#define HOST_WORDS 64
/* ncclUniqueId (128 bytes) travels as int32 words. */
#define ID_WORDS ((int)((sizeof(ncclUniqueId) + 3) / 4))

typedef enum coll_kind {
    COLL_ALL_REDUCE,
    COLL_BROADCAST,
    COLL_ALL_GATHER,
    COLL_REDUCE_SCATTER,
    COLL_BARRIER,
} coll_kind;

struct yg__nccl_group {
    ncclComm_t comm; /* NULL once aborted */
    cudaStream_t stream;
    cudaEvent_t queued; /* recorded on the caller's current stream before each call */
    float *barrier_buf; /* one float of device memory for barrier's all-reduce */
    int device, rank, world_size;
    int64_t timeout_ms;
    bool broken;
    char broken_msg[YG__MESSAGE_CAP];
};

struct yg__nccl_work {
    yg__nccl_group *g;
    const char *op;
    /* recorded on g->stream after the NCCL call; again on the caller's
     * stream after a copy back */
    cudaEvent_t done;
    /* what NCCL reads: the input or its contiguous copy; retained; NULL
     * for all_reduce, broadcast, barrier */
    yg_tensor *in;
    /* what NCCL writes: the tensor or its contiguous copy; retained; NULL
     * for barrier */
    yg_tensor *out;
    /* retained: the caller's non-contiguous tensor, which out is copied
     * back into; NULL when NCCL writes the caller's tensor in place */
    yg_tensor *user_out;
    double start_ms;
    bool finished; /* NCCL's part is over; status is final but for a failed copy back */
    bool copied;   /* user_out was written (or the attempt failed) */
    yg_status status;
    char message[YG__MESSAGE_CAP];
};


/* ---- helpers ---- */

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void pause_after(double start) {
    if (now_ms() - start < 2.0) {
        sched_yield();
    } else {
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
}

static yg_status cuda_fail(const char *op, const char *what, cudaError_t e) {
    (void)cudaGetLastError(); /* clear a non-sticky error for the next call */
    return yg__fail(YG_ERR_DEVICE, "%s: %s failed: %s", op, what, cudaGetErrorString(e));
}

/* NCCL's text for r, and its last error on comm when it has one. */
static void nccl_text(ncclResult_t r, ncclComm_t comm, char *buf, size_t cap) {
    const char *detail = ncclGetLastError(comm);
    if (detail != NULL && detail[0] != '\0')
        snprintf(buf, cap, "%s (%s)", ncclGetErrorString(r), detail);
    else
        snprintf(buf, cap, "%s", ncclGetErrorString(r));
}

static yg_status nccl_fail(const char *op, const char *what, ncclResult_t r, ncclComm_t comm) {
    char text[YG__MESSAGE_CAP / 2];
    nccl_text(r, comm, text, sizeof text);
    return yg__fail(YG_ERR_IO, "%s: %s failed: %s", op, what, text);
}

/* Makes device current on this thread; *prev is the device to restore. */
static yg_status enter(const char *op, int device, int *prev) {
    cudaError_t e = cudaGetDevice(prev);
    if (e != cudaSuccess)
        return cuda_fail(op, "cudaGetDevice", e);
    if (*prev == device)
        return YG_OK;
    e = cudaSetDevice(device);
    if (e != cudaSuccess)
        return cuda_fail(op, "cudaSetDevice", e);
    return YG_OK;
}

static void leave(int device, int prev) {
    if (prev != device)
        (void)cudaSetDevice(prev);
}

/* Breaks g with msg (the first failure is kept) and aborts its
 * communicator, which also ends the NCCL kernels still running. */
static void break_group(yg__nccl_group *g, const char *msg) {
    int prev = g->device;

    if (!g->broken) {
        g->broken = true;
        snprintf(g->broken_msg, sizeof g->broken_msg, "%s", msg);
    }
    if (g->comm != NULL) {
        (void)cudaGetDevice(&prev);
        (void)cudaSetDevice(g->device);
        ncclCommAbort(g->comm);
        g->comm = NULL;
        leave(g->device, prev);
    }
}

static ncclDataType_t nccl_type(yg_dtype dtype) {
    switch (dtype) {
    case YG_FLOAT32:
        return ncclFloat32;
    case YG_FLOAT64:
        return ncclFloat64;
    case YG_INT64:
        return ncclInt64;
    case YG_INT32:
        return ncclInt32;
    case YG_BOOL:
        return ncclUint8;
    case YG_FLOAT16:
        return ncclFloat16;
    case YG_BFLOAT16:
        return ncclBfloat16;
    default:
        return ncclUint8; /* unreachable: every yg_dtype is listed */
    }
}

static ncclRedOp_t nccl_op(yg_reduce_op rop, yg_dtype dtype) {
    /* bool elements are 0 or 1 bytes: max is logical or, what the MPI
     * part does for sum and max (a sum could leave a 2 in a bool). */
    if (dtype == YG_BOOL)
        return ncclMax;
    switch (rop) {
    case YG_REDUCE_AVG:
        return ncclAvg;
    case YG_REDUCE_MAX:
        return ncclMax;
    default:
        return ncclSum;
    }
}

/* ---- creation ---- */

yg_status yg__nccl_check_device(const char *op) {
    /* "<op>: cuda: no CUDA device (<the runtime's reason>)" without one. */
    return yg__cuda_check_index(op, 0);
}

/* This rank's place among the ranks of pg on its host, from an
 * all-gather of the host names over the MPI part. */
static yg_status local_rank(yg_process_group *pg, int *out) {
    int rank = yg_process_group_rank(pg), world = yg_process_group_world_size(pg), n = 0;
    int64_t one = HOST_WORDS, all_len = (int64_t)world * HOST_WORDS;
    int32_t name[HOST_WORDS];
    yg_tensor *mine = NULL, *all = NULL;
    yg_status st;

    memset(name, 0, sizeof name);
    if (gethostname((char *)name, sizeof name - 1) != 0)
        snprintf((char *)name, sizeof name, "unknown host");
    st = yg_tensor_from_data(name, &one, 1, YG_INT32, &mine);
    if (st == YG_OK)
        st = yg_tensor_empty(&all_len, 1, YG_INT32, &all);
    if (st == YG_OK)
        st = yg_process_group_all_gather(pg, mine, all, NULL);
    if (st == YG_OK) {
        const int32_t *names = yg_tensor_data(all);
        for (int r = 0; r < rank; r++)
            if (memcmp(names + (int64_t)r * HOST_WORDS, name, sizeof name) == 0)
                n++;
        *out = n;
    }
    yg_release(mine);
    yg_release(all);
    return st;
}

/* The rank's device, stream, events and barrier buffer (device current). */
static yg_status set_up_device(yg__nccl_group *g) {
    const char *op = "process_group_create";
    cudaError_t e;

    e = cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        g->stream = NULL;
        return cuda_fail(op, "cudaStreamCreateWithFlags", e);
    }
    e = cudaEventCreateWithFlags(&g->queued, cudaEventDisableTiming);
    if (e != cudaSuccess) {
        g->queued = NULL;
        return cuda_fail(op, "cudaEventCreateWithFlags", e);
    }
    e = cudaMalloc((void **)&g->barrier_buf, sizeof(float));
    if (e != cudaSuccess) {
        g->barrier_buf = NULL;
        return cuda_fail(op, "cudaMalloc", e);
    }
    e = cudaMemset(g->barrier_buf, 0, sizeof(float));
    if (e != cudaSuccess)
        return cuda_fail(op, "cudaMemset", e);
    return YG_OK;
}

/* Every rank learns whether some rank failed its local set-up (local is
 * this rank's status): the highest failing rank + 1, or 0. */
static yg_status agree(yg_process_group *pg, yg_status local, int *failed_rank) {
    int32_t flag = local != YG_OK ? yg_process_group_rank(pg) + 1 : 0;
    int64_t one = 1;
    yg_tensor *t = NULL;
    yg_status st;

    st = yg_tensor_from_data(&flag, &one, 1, YG_INT32, &t);
    if (st == YG_OK)
        st = yg_process_group_all_reduce(pg, t, YG_REDUCE_MAX, NULL);
    if (st == YG_OK)
        *failed_rank = *(const int32_t *)yg_tensor_data(t) - 1;
    yg_release(t);
    return st;
}

/* Rank 0's id to every rank, in place (rank 0 made it before agree(),
 * so a failure to make it is known to all by now). */
static yg_status share_id(yg_process_group *pg, int32_t *words) {
    int64_t n = ID_WORDS;
    yg_tensor *t = NULL;
    yg_status st;

    st = yg_tensor_from_data(words, &n, 1, YG_INT32, &t);
    if (st == YG_OK)
        st = yg_process_group_broadcast(pg, t, 0, NULL);
    if (st == YG_OK)
        memcpy(words, yg_tensor_data(t), (size_t)n * sizeof *words);
    yg_release(t);
    return st;
}

static void group_free(yg__nccl_group *g) {
    if (g->comm != NULL)
        ncclCommDestroy(g->comm);
    if (g->barrier_buf != NULL)
        cudaFree(g->barrier_buf);
    if (g->queued != NULL)
        cudaEventDestroy(g->queued);
    if (g->stream != NULL)
        cudaStreamDestroy(g->stream);
    free(g);
}

yg_status yg__nccl_group_create(yg_process_group *mpi_pg,
                                const yg_process_group_options *options,
                                yg__nccl_group **out) {
    const char *op = "process_group_create";
    yg__nccl_group *g = NULL;
    int32_t id_words[ID_WORDS];
    char local_msg[YG__MESSAGE_CAP] = "";
    ncclUniqueId id;
    ncclResult_t r;
    int lrank = 0, prev = 0, failed = -1;
    bool entered = false;
    yg_status st, local = YG_OK;

    *out = NULL;
    g = calloc(1, sizeof *g);
    if (g == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
    g->rank = yg_process_group_rank(mpi_pg);
    g->world_size = yg_process_group_world_size(mpi_pg);
    g->timeout_ms =
        options != NULL && options->timeout_ms > 0 ? options->timeout_ms : DEFAULT_TIMEOUT_MS;
    /* Collective on every rank, even one that names its device. */
    st = local_rank(mpi_pg, &lrank);
    if (st != YG_OK)
        goto out;

    /* Local set-up; a failure is kept in local_msg until every rank knows. */
    if (options != NULL && options->cuda_device != NULL)
        g->device = *options->cuda_device;
    else if (yg__cuda_device_count() > 0) /* checked before MPI started */
        g->device = lrank % yg__cuda_device_count();
    local = yg__cuda_check_index(op, g->device);
    if (local == YG_OK) {
        local = enter(op, g->device, &prev);
        entered = local == YG_OK;
    }
    if (local == YG_OK)
        local = set_up_device(g);
    memset(id_words, 0, sizeof id_words);
    if (local == YG_OK && g->rank == 0) {
        r = ncclGetUniqueId(&id);
        if (r != ncclSuccess)
            local = nccl_fail(op, "ncclGetUniqueId", r, NULL);
        else
            memcpy(id_words, &id, sizeof id);
    }
    if (local != YG_OK)
        snprintf(local_msg, sizeof local_msg, "%s", yg_last_error());

    st = agree(mpi_pg, local, &failed);
    if (st != YG_OK)
        goto out;
    if (local != YG_OK) {
        st = yg__fail(local, "%s", local_msg);
        goto out;
    }
    if (failed >= 0) {
        st = yg__fail(YG_ERR_IO,
                      "%s: rank %d of %d failed to set up its device for NCCL (its own status "
                      "says why)",
                      op,
                      failed,
                      g->world_size);
        goto out;
    }
    st = share_id(mpi_pg, id_words);
    if (st != YG_OK)
        goto out;
    memcpy(&id, id_words, sizeof id);
    r = ncclCommInitRank(&g->comm, g->world_size, id, g->rank);
    if (r != ncclSuccess) {
        g->comm = NULL;
        st = nccl_fail(op, "ncclCommInitRank", r, NULL);
        goto out;
    }
out:
    if (entered)
        leave(g->device, prev);
    if (st != YG_OK) {
        group_free(g);
        return st;
    }
    *out = g;
    return YG_OK;
}

int yg__nccl_group_device(const yg__nccl_group *g) {
    return g != NULL ? g->device : -1;
}

bool yg__nccl_group_broken(const yg__nccl_group *g) {
    return g == NULL || g->broken;
}

void yg__nccl_group_release(yg__nccl_group *g) {
    int prev = 0, device;
    bool entered;

    if (g == NULL)
        return;
    entered = enter("process_group_release", g->device, &prev) == YG_OK;
    /* Works are released before the group, so the stream is normally
     * idle; a collective released unfinished after a failure is not. */
    if (g->comm != NULL) {
        double start = now_ms();
        for (;;) {
            cudaError_t e = cudaStreamQuery(g->stream);
            ncclResult_t async = ncclSuccess;
            if (e == cudaSuccess)
                break;
            if (e != cudaErrorNotReady || ncclCommGetAsyncError(g->comm, &async) != ncclSuccess ||
                (async != ncclSuccess && async != ncclInProgress) ||
                now_ms() - start > (double)g->timeout_ms) {
                break_group(g, "process_group_release: the stream did not finish");
                break;
            }
            pause_after(start);
        }
    }
    device = g->device;
    group_free(g);
    if (entered)
        leave(device, prev);
}

/* ---- collectives ---- */

typedef struct coll {
    coll_kind kind;
    const char *op;
    const yg_tensor *in; /* all_gather, reduce_scatter */
    yg_tensor *out;      /* the tensor written (and read, in place) */
    yg_reduce_op rop;
    int root;
} coll;

/* Queues c's NCCL call on w's contiguous tensors (w->in, w->out). */
static ncclResult_t run(yg__nccl_group *g, const coll *c, const yg__nccl_work *w) {
    const void *in = w->in != NULL ? yg__tensor_ptr(w->in) : NULL;
    void *out = w->out != NULL ? yg__tensor_ptr(w->out) : NULL;
    yg_dtype dt = w->out != NULL ? yg_tensor_dtype(w->out) : YG_FLOAT32;
    size_t n = w->out != NULL ? (size_t)yg_tensor_numel(w->out) : 0;

    switch (c->kind) {
    case COLL_ALL_REDUCE:
        return ncclAllReduce(out, out, n, nccl_type(dt), nccl_op(c->rop, dt), g->comm, g->stream);
    case COLL_BROADCAST:
        return ncclBroadcast(out, out, n, nccl_type(dt), c->root, g->comm, g->stream);
    case COLL_ALL_GATHER:
        return ncclAllGather(
            in, out, (size_t)yg_tensor_numel(w->in), nccl_type(dt), g->comm, g->stream);
    case COLL_REDUCE_SCATTER:
        return ncclReduceScatter(
            in, out, n, nccl_type(dt), nccl_op(c->rop, dt), g->comm, g->stream);
    case COLL_BARRIER:
        return ncclAllReduce(
            g->barrier_buf, g->barrier_buf, 1, ncclFloat32, ncclSum, g->comm, g->stream);
    }
    return ncclInternalError;
}

static yg_status check_usable(const yg__nccl_group *g, const char *op) {
    if (g->broken)
        return yg__fail(YG_ERR_IO,
                        "%s: the process group is broken by an earlier failure: %.900s",
                        op,
                        g->broken_msg);
    return YG_OK;
}

/* Frees a work (its event and references); the caller made sure NCCL
 * no longer uses its tensors. */
static void work_free(yg__nccl_work *w) {
    if (w->done != NULL)
        cudaEventDestroy(w->done);
    yg_release(w->in);
    yg_release(w->out);
    yg_release(w->user_out);
    free(w);
}

/* w->in and w->out: c's tensors, or contiguous copies of the
 * non-contiguous ones (queued on the caller's current stream, so before
 * the event launch records); user_out when out is a copy. */
static yg_status make_buffers(yg__nccl_work *w, const coll *c) {
    yg_status st = YG_OK;

    if (c->in != NULL)
        st = yg__tensor_contiguous_as(c->in, yg_tensor_dtype(c->in), true, &w->in);
    if (st == YG_OK && c->out != NULL)
        st = yg__tensor_contiguous_as(c->out, yg_tensor_dtype(c->out), true, &w->out);
    if (st != YG_OK)
        return yg__fail_prefix(st, c->op);
    if (w->out != NULL && w->out != c->out)
        w->user_out = yg_retain(c->out);
    return YG_OK;
}

/* Queues c on g's stream after the work queued so far on the calling
 * thread's current stream for g's device. */
static yg_status launch(yg__nccl_group *g, const coll *c, yg__nccl_work **out) {
    yg__nccl_work *w = NULL;
    cudaError_t e;
    ncclResult_t r;
    int prev = 0;
    yg_status st;

    *out = NULL;
    YG_RETURN_IF_ERROR(check_usable(g, c->op));
    w = calloc(1, sizeof *w);
    if (w == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of memory", c->op);
    w->g = g;
    w->op = c->op;
    st = make_buffers(w, c);
    if (st != YG_OK) {
        work_free(w);
        return st;
    }
    st = enter(c->op, g->device, &prev);
    if (st != YG_OK) {
        work_free(w);
        return st;
    }
    e = cudaEventCreateWithFlags(&w->done, cudaEventDisableTiming);
    if (e != cudaSuccess) {
        w->done = NULL;
        st = cuda_fail(c->op, "cudaEventCreateWithFlags", e);
        goto out;
    }
    /* With g's device current: its current stream on this thread. */
    e = cudaEventRecord(g->queued, (cudaStream_t)yg__cuda_current_stream());
    if (e == cudaSuccess)
        e = cudaStreamWaitEvent(g->stream, g->queued, 0);
    if (e != cudaSuccess) {
        st = cuda_fail(c->op, "ordering after the current stream", e);
        goto out;
    }
    r = run(g, c, w);
    if (r != ncclSuccess && r != ncclInProgress) {
        st = nccl_fail(c->op, "NCCL", r, g->comm);
        break_group(g, yg_last_error());
        goto out;
    }
    e = cudaEventRecord(w->done, g->stream);
    if (e != cudaSuccess) {
        st = cuda_fail(c->op, "cudaEventRecord", e);
        break_group(g, yg_last_error()); /* ends the NCCL call before w's tensors go */
        goto out;
    }
    w->start_ms = now_ms();
out:
    leave(g->device, prev);
    if (st != YG_OK) {
        work_free(w);
        return st;
    }
    *out = w;
    return YG_OK;
}

yg_status
yg__nccl_all_reduce(yg__nccl_group *g, yg_tensor *t, yg_reduce_op op, yg__nccl_work **out) {
    coll c = {COLL_ALL_REDUCE, "all_reduce", NULL, t, op, 0};

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__dist_check_cuda_tensor("all_reduce", "tensor", t, g->device));
    YG_RETURN_IF_ERROR(yg__dist_check_reduce("all_reduce", op, yg_tensor_dtype(t)));
    return launch(g, &c, out);
}

yg_status yg__nccl_broadcast(yg__nccl_group *g, yg_tensor *t, int root, yg__nccl_work **out) {
    coll c = {COLL_BROADCAST, "broadcast", NULL, t, YG_REDUCE_SUM, root};

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__dist_check_cuda_tensor("broadcast", "tensor", t, g->device));
    if (root < 0 || root >= g->world_size)
        return yg__fail(
            YG_ERR_INDEX, "broadcast: root %d out of range for world size %d", root, g->world_size);
    return launch(g, &c, out);
}

yg_status yg__nccl_all_gather(yg__nccl_group *g,
                              const yg_tensor *input,
                              yg_tensor *output,
                              yg__nccl_work **out) {
    coll c = {COLL_ALL_GATHER, "all_gather", input, output, YG_REDUCE_SUM, 0};

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__dist_check_cuda_tensor("all_gather", "input", input, g->device));
    YG_RETURN_IF_ERROR(yg__dist_check_cuda_tensor("all_gather", "output", output, g->device));
    YG_RETURN_IF_ERROR(yg__dist_check_pair("all_gather", g->world_size, input, output, true));
    return launch(g, &c, out);
}

yg_status yg__nccl_reduce_scatter(yg__nccl_group *g,
                                  const yg_tensor *input,
                                  yg_tensor *output,
                                  yg_reduce_op op,
                                  yg__nccl_work **out) {
    coll c = {COLL_REDUCE_SCATTER, "reduce_scatter", input, output, op, 0};

    *out = NULL;
    YG_RETURN_IF_ERROR(yg__dist_check_cuda_tensor("reduce_scatter", "input", input, g->device));
    YG_RETURN_IF_ERROR(yg__dist_check_cuda_tensor("reduce_scatter", "output", output, g->device));
    YG_RETURN_IF_ERROR(yg__dist_check_pair("reduce_scatter", g->world_size, input, output, false));
    YG_RETURN_IF_ERROR(yg__dist_check_reduce("reduce_scatter", op, yg_tensor_dtype(input)));
    return launch(g, &c, out);
}

yg_status yg__nccl_barrier(yg__nccl_group *g, yg__nccl_work **out) {
    coll c = {COLL_BARRIER, "barrier", NULL, NULL, YG_REDUCE_SUM, 0};
    return launch(g, &c, out);
}

/* ---- completion ---- */

static void finish(yg__nccl_work *w, yg_status st, const char *msg) {
    w->finished = true;
    w->status = st;
    snprintf(w->message, sizeof w->message, "%s", msg != NULL ? msg : "");
    if (st == YG_OK && w->out != NULL)
        yg__tensor_bump_version(w->out);
}

/* Brings w up to date, blocking (until it completes, fails or times
 * out) or not.  Sets no thread error: wait and test report w->status. */
static void progress(yg__nccl_work *w, bool block) {
    yg__nccl_group *g = w->g;
    char msg[YG__MESSAGE_CAP], text[YG__MESSAGE_CAP / 2];

    while (!w->finished) {
        cudaError_t e;
        ncclResult_t r, async = ncclSuccess;

        if (g->comm == NULL) {
            /* Another work's failure aborted the communicator, which may
             * have cut this collective short. */
            snprintf(msg,
                     sizeof msg,
                     "%s: the process group is broken by an earlier failure: %.900s",
                     w->op,
                     g->broken_msg);
            finish(w, YG_ERR_IO, msg);
            return;
        }
        e = cudaEventQuery(w->done);
        if (e == cudaSuccess) {
            finish(w, YG_OK, NULL);
            return;
        }
        if (e != cudaErrorNotReady) {
            snprintf(msg,
                     sizeof msg,
                     "%s: CUDA failed on cuda:%d (rank %d): %s",
                     w->op,
                     g->device,
                     g->rank,
                     cudaGetErrorString(e));
            finish(w, YG_ERR_DEVICE, msg);
            break_group(g, msg);
            return;
        }
        r = ncclCommGetAsyncError(g->comm, &async);
        if (r != ncclSuccess || (async != ncclSuccess && async != ncclInProgress)) {
            nccl_text(r != ncclSuccess ? r : async, g->comm, text, sizeof text);
            snprintf(msg, sizeof msg, "%s: NCCL failed on rank %d: %s", w->op, g->rank, text);
            finish(w, YG_ERR_IO, msg);
            break_group(g, msg);
            return;
        }
        if (!block)
            return;
        if (now_ms() - w->start_ms > (double)g->timeout_ms) {
            snprintf(msg,
                     sizeof msg,
                     "%s: timed out after %lld ms on rank %d of %d; a peer exited, failed or "
                     "did not call the same collective",
                     w->op,
                     (long long)g->timeout_ms,
                     g->rank,
                     g->world_size);
            finish(w, YG_ERR_IO, msg);
            break_group(g, msg);
            return;
        }
        pause_after(w->start_ms);
    }
}

/* On the calling thread, after w finished well: makes the current stream
 * of g's device wait for done, so later work on it (any stream the
 * caller made current) comes after the collective; the first time, also
 * copies a buffer back into the caller's tensor on that stream and
 * records done again after the copy, so a later wait from another
 * stream orders after the copy too.  A failure becomes w's status. */
static void deliver(yg__nccl_work *w) {
    yg__nccl_group *g = w->g;
    yg_tensor *same = NULL;
    cudaError_t e;
    int prev = 0;
    yg_status st;
    bool grad;

    if (w->status != YG_OK)
        return;
    st = enter(w->op, g->device, &prev);
    if (st != YG_OK)
        goto fail;
    e = cudaStreamWaitEvent((cudaStream_t)yg__cuda_current_stream(), w->done, 0);
    if (e != cudaSuccess) {
        st = cuda_fail(w->op, "cudaStreamWaitEvent", e);
        goto out;
    }
    if (w->user_out != NULL && !w->copied) {
        w->copied = true;
        grad = yg_set_grad_enabled(false);
        st = yg_copy_(w->user_out, w->out, &same);
        yg_set_grad_enabled(grad);
        yg_release(same);
        if (st != YG_OK) {
            st = yg__fail_prefix(st, w->op);
            goto out;
        }
        e = cudaEventRecord(w->done, (cudaStream_t)yg__cuda_current_stream());
        if (e != cudaSuccess)
            st = cuda_fail(w->op, "cudaEventRecord", e);
    }
out:
    leave(g->device, prev);
fail:
    if (st != YG_OK) {
        w->status = st;
        snprintf(w->message, sizeof w->message, "%s", yg_last_error());
    }
}

static yg_status report(const yg__nccl_work *w) {
    if (w->status != YG_OK)
        return yg__fail(w->status, "%s", w->message);
    return YG_OK;
}

yg_status yg__nccl_work_wait(yg__nccl_work *w) {
    progress(w, true);
    deliver(w);
    return report(w);
}

yg_status yg__nccl_work_test(yg__nccl_work *w, bool *done) {
    progress(w, false);
    *done = w->finished;
    if (!w->finished)
        return YG_OK;
    deliver(w);
    return report(w);
}

void yg__nccl_work_release(yg__nccl_work *w) {
    if (w == NULL)
        return;
    progress(w, true); /* NCCL may still write the tensors' memory */
    work_free(w);
}

static const yg__nccl_backend nccl = {
    .check_device = yg__nccl_check_device,
    .group_create = yg__nccl_group_create,
    .group_release = yg__nccl_group_release,
    .group_device = yg__nccl_group_device,
    .group_broken = yg__nccl_group_broken,
    .all_reduce = yg__nccl_all_reduce,
    .broadcast = yg__nccl_broadcast,
    .all_gather = yg__nccl_all_gather,
    .reduce_scatter = yg__nccl_reduce_scatter,
    .barrier = yg__nccl_barrier,
    .work_wait = yg__nccl_work_wait,
    .work_test = yg__nccl_work_test,
    .work_release = yg__nccl_work_release,
};

/* Registered when the CUDA module loads (cuda/module.c). */
__attribute__((constructor)) static void register_nccl(void) {
    yg__nccl_register(&nccl);
}
