/*
 * process_group_mpi.c - yg_process_group over MPI, and its collectives.
 *
 * Why a communication thread: MPI's non-blocking collectives make
 * progress only while some thread is inside the MPI library, and a
 * backward pass spends its time in yagrad's kernels.  So each group owns
 * one thread that makes the MPI calls after creation (but a blocking call
 * made while nothing is queued or running, which the caller's thread runs
 * itself, the same way): it takes queued
 * collectives in FIFO order (which keeps the order identical on all
 * ranks), starts each as a non-blocking MPI call and polls it with
 * MPI_Test until it completes or its timeout passes.  Polling (a yield
 * for the first second, then 50 us sleeps) instead of a blocking MPI call
 * is what makes the timeout possible (MPI has none) and leaves the cores
 * to backward on a machine with fewer cores than ranks.  Not sleeping
 * sooner matters: libnbc advances a collective only inside MPI_Test, and
 * sleeping after a few milliseconds made large all-reduces several times
 * slower than MPI_Allreduce (bench_distributed; figures:
 * docs/distributed.md, section "The communication thread").
 *
 * Buffers: a contiguous tensor of a dtype MPI has is used in place; any
 * other tensor is copied, on the caller's thread at queue time, into a
 * contiguous buffer (float32 for float16/bfloat16 reductions), and the
 * result is copied back by yg_work_wait/test on the caller's thread,
 * which also applies avg's division.  So yagrad ops (and their error
 * messages) run only on the user's thread.
 *
 * Locking: pg->mu guards the queue, each work's completion fields and
 * the broken state; the MPI calls themselves run without it (only the
 * communication thread makes them).  g_mu guards the process-wide MPI
 * lifetime (how many groups live, whether yagrad initialised MPI).
 *
 * NCCL groups (backend YG_DIST_NCCL) are MPI groups too: the MPI part is
 * created as for any group and bootstraps the NCCL part (pg->nccl,
 * process_group_nccl.c), which then takes every collective; a yg_work of
 * such a group only wraps the NCCL part's work (w->nccl).
 */
#include "distributed/dist_int.h"
#include "yagrad/autograd.h"
#include "yagrad/ops_inplace_fill.h"

#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_TIMEOUT_MS 600000

typedef enum coll_kind {
    COLL_ALL_REDUCE,
    COLL_BROADCAST,
    COLL_ALL_GATHER,
    COLL_REDUCE_SCATTER,
    COLL_BARRIER,
} coll_kind;

struct yg_work {
    atomic_int refs; /* the user's handle and the communication thread */
    yg_process_group *pg;
    yg__nccl_work *nccl;  /* an NCCL group's work (the rest unused), or NULL */
    struct yg_work *next; /* queue link, under pg->mu */
    coll_kind kind;
    const char *op; /* "all_reduce", ... for messages */
    yg_reduce_op rop;
    int root;
    yg_tensor *user_in;  /* retained; NULL for all_reduce/broadcast/barrier */
    yg_tensor *user_out; /* retained; written */
    yg_tensor *buf_in;   /* what MPI reads (may be user_in or buf_out) */
    yg_tensor *buf_out;  /* what MPI writes (may be user_out) */
    /* under pg->mu */
    bool done;
    yg_status status;
    char message[YG__MESSAGE_CAP];
    /* caller's thread only */
    bool finished; /* result written back, final status kept */
    yg_status final_status;
};

struct yg_process_group {
    MPI_Comm comm;
    int rank, world_size;
    int64_t timeout_ms;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* queue non-empty / stop / a work done */
    yg_work *head, *tail;
    bool running; /* a collective is in MPI: the thread's, or a caller's inline */
    bool stop;
    bool broken;
    char broken_msg[YG__MESSAGE_CAP];
    yg__nccl_group *nccl; /* backend YG_DIST_NCCL: takes the collectives */
};

/* Used before their definitions. */
static void mpi_release(yg_process_group *pg);
static yg_status mpi_work_wait(yg_work *work);
static void mpi_work_release(yg_work *work);

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_live_groups;
static bool g_we_initialised;

/* ---- helpers ---- */

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void mpi_error_text(int rc, char *buf, size_t cap) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", rc);
    snprintf(buf, cap, "%s", text);
}

/* The MPI type a buffer of dtype travels as; reductions of half dtypes
 * use float32 buffers, so they never reach here. */
static MPI_Datatype mpi_type(yg_dtype dtype) {
    switch (dtype) {
    case YG_FLOAT32:
        return MPI_FLOAT;
    case YG_FLOAT64:
        return MPI_DOUBLE;
    case YG_INT64:
        return MPI_INT64_T;
    case YG_INT32:
        return MPI_INT32_T;
    case YG_BOOL:
        return MPI_C_BOOL;
    default: /* float16, bfloat16: moved as bits */
        return MPI_UINT16_T;
    }
}

static MPI_Op mpi_op(yg_reduce_op rop, yg_dtype dtype) {
    if (dtype == YG_BOOL)
        return MPI_LOR; /* MPI defines no sum or max on booleans */
    return rop == YG_REDUCE_MAX ? MPI_MAX : MPI_SUM;
}

/* ---- work lifetime ---- */

static void work_unref(yg_work *w) {
    if (w == NULL || atomic_fetch_sub(&w->refs, 1) != 1)
        return;
    if (w->nccl != NULL)
        yg__nccl()->work_release(w->nccl);
    yg_release(w->user_in);
    yg_release(w->user_out);
    yg_release(w->buf_in);
    yg_release(w->buf_out);
    free(w);
}

static void complete(yg_work *w, yg_status st, const char *msg) {
    yg_process_group *pg = w->pg;
    pthread_mutex_lock(&pg->mu);
    w->done = true;
    w->status = st;
    snprintf(w->message, sizeof w->message, "%s", msg != NULL ? msg : "");
    if (st != YG_OK && !pg->broken) {
        pg->broken = true;
        snprintf(pg->broken_msg, sizeof pg->broken_msg, "%s", w->message);
    }
    pthread_cond_broadcast(&pg->cv);
    pthread_mutex_unlock(&pg->mu);
}

/* ---- the communication thread ---- */

static int start_mpi(yg_work *w, MPI_Request *req) {
    yg_process_group *pg = w->pg;
    void *out = w->buf_out != NULL ? yg_tensor_data(w->buf_out) : NULL;
    void *in = w->buf_in != NULL ? yg_tensor_data(w->buf_in) : NULL;
    yg_dtype dt = w->buf_out != NULL ? yg_tensor_dtype(w->buf_out) : YG_FLOAT32;
    int64_t n = w->buf_out != NULL ? yg_tensor_numel(w->buf_out) : 0;

    switch (w->kind) {
    case COLL_ALL_REDUCE:
        return MPI_Iallreduce(
            MPI_IN_PLACE, out, (int)n, mpi_type(dt), mpi_op(w->rop, dt), pg->comm, req);
    case COLL_BROADCAST:
        return MPI_Ibcast(out, (int)n, mpi_type(dt), w->root, pg->comm, req);
    case COLL_ALL_GATHER:
        return MPI_Iallgather(in,
                              (int)(n / pg->world_size),
                              mpi_type(dt),
                              out,
                              (int)(n / pg->world_size),
                              mpi_type(dt),
                              pg->comm,
                              req);
    case COLL_REDUCE_SCATTER:
        return MPI_Ireduce_scatter_block(
            in, out, (int)n, mpi_type(dt), mpi_op(w->rop, dt), pg->comm, req);
    case COLL_BARRIER:
        return MPI_Ibarrier(pg->comm, req);
    }
    return MPI_ERR_OTHER;
}

static void run_work(yg_work *w) {
    yg_process_group *pg = w->pg;
    MPI_Request req = MPI_REQUEST_NULL;
    char msg[YG__MESSAGE_CAP], text[YG__MESSAGE_CAP / 2];
    double start = now_ms(), deadline = start + (double)pg->timeout_ms;
    int rc, flag = 0;

    rc = start_mpi(w, &req);
    if (rc != MPI_SUCCESS) {
        mpi_error_text(rc, text, sizeof text);
        snprintf(
            msg, sizeof msg, "%s: MPI failed to start it on rank %d: %s", w->op, pg->rank, text);
        complete(w, YG_ERR_IO, msg);
        return;
    }
    for (;;) {
        double t;
        rc = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            mpi_error_text(rc, text, sizeof text);
            snprintf(msg, sizeof msg, "%s: MPI failed on rank %d: %s", w->op, pg->rank, text);
            complete(w, YG_ERR_IO, msg);
            return;
        }
        if (flag)
            break;
        t = now_ms();
        if (t > deadline) {
            /* The request stays pending: MPI cannot cancel a collective. */
            snprintf(msg,
                     sizeof msg,
                     "%s: timed out after %lld ms on rank %d of %d; a peer exited, failed or "
                     "did not call the same collective",
                     w->op,
                     (long long)pg->timeout_ms,
                     pg->rank,
                     pg->world_size);
            complete(w, YG_ERR_IO, msg);
            return;
        }
        if (t - start < 1000.0) {
            sched_yield();
        } else {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
    complete(w, YG_OK, NULL);
}

static void *comm_thread(void *arg) {
    yg_process_group *pg = arg;

    for (;;) {
        yg_work *w;
        bool broken;
        char msg[YG__MESSAGE_CAP];

        pthread_mutex_lock(&pg->mu);
        while ((pg->head == NULL || pg->running) && !pg->stop)
            pthread_cond_wait(&pg->cv, &pg->mu);
        if (pg->head == NULL) {
            pthread_mutex_unlock(&pg->mu);
            return NULL;
        }
        w = pg->head;
        pg->head = w->next;
        if (pg->head == NULL)
            pg->tail = NULL;
        pg->running = true;
        broken = pg->broken;
        if (broken)
            snprintf(msg,
                     sizeof msg,
                     "%s: the process group is broken by an earlier failure: %.900s",
                     w->op,
                     pg->broken_msg);
        pthread_mutex_unlock(&pg->mu);
        if (broken)
            complete(w, YG_ERR_IO, msg);
        else
            run_work(w);
        pthread_mutex_lock(&pg->mu);
        pg->running = false;
        pthread_cond_broadcast(&pg->cv);
        pthread_mutex_unlock(&pg->mu);
        work_unref(w);
    }
}

/* ---- creation ---- */

static yg_status mpi_fail(const char *what, int rc) {
    char text[MPI_MAX_ERROR_STRING + 1];
    mpi_error_text(rc, text, sizeof text);
    return yg__fail(YG_ERR_IO, "process_group_create: %s failed: %s", what, text);
}

/* Asks Open MPI's non-blocking collectives (libnbc) for the ring
 * algorithm of MPI_Iallreduce, through the MPI tool interface, before
 * MPI_Init.  With libnbc's own choice yagrad's all_reduce was clearly
 * slower than the blocking MPI_Allreduce from 8 MiB up; with ring it is as
 * fast or faster (bench_distributed; figures: docs/distributed.md,
 * section "Figures").  Skipped when the user set the
 * variable (OMPI_MCA_coll_libnbc_iallreduce_algorithm) or MPI has no such
 * variable (not Open MPI): best effort, failures are ignored.  *t_open
 * says whether the tool interface must be closed after MPI_Init. */
static void prefer_ring_iallreduce(bool *t_open) {
    static const char name[] = "coll_libnbc_iallreduce_algorithm";
    int provided = 0, index = 0, count = 0, ring = 1;
    MPI_T_cvar_handle handle;

    *t_open = false;
    if (getenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm") != NULL)
        return;
    if (MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
        return;
    *t_open = true;
    if (MPI_T_cvar_get_index(name, &index) != MPI_SUCCESS ||
        MPI_T_cvar_handle_alloc(index, NULL, &handle, &count) != MPI_SUCCESS)
        return;
    if (count == 1)
        MPI_T_cvar_write(handle, &ring);
    MPI_T_cvar_handle_free(&handle);
}

/* Initialises MPI when no one did (under g_mu). */
static yg_status ensure_mpi(void) {
    int initialised = 0, finalised = 0, provided = 0, rc;

    MPI_Finalized(&finalised);
    if (finalised)
        return yg__fail(YG_ERR_IO,
                        "process_group_create: MPI was already finalised in this "
                        "process (the last group was released); MPI cannot be "
                        "initialised twice");
    MPI_Initialized(&initialised);
    if (!initialised) {
        bool t_open;
        prefer_ring_iallreduce(&t_open);
        rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
        if (t_open)
            MPI_T_finalize();
        if (rc != MPI_SUCCESS)
            return mpi_fail("MPI_Init_thread", rc);
        g_we_initialised = true;
    } else {
        MPI_Query_thread(&provided);
    }
    if (provided < MPI_THREAD_SERIALIZED)
        return yg__fail(YG_ERR_IO,
                        "process_group_create: MPI gives thread level %d, yagrad needs "
                        "MPI_THREAD_SERIALIZED (%d) or higher for its communication thread",
                        provided,
                        MPI_THREAD_SERIALIZED);
    return YG_OK;
}

static void finalise_if_last(void) {
    /* g_mu held */
    if (g_live_groups == 0 && g_we_initialised) {
        int finalised = 0;
        MPI_Finalized(&finalised);
        if (!finalised)
            MPI_Finalize();
    }
}

/* The MPI part of every group (options checked by the caller). */
static yg_status create_mpi(const yg_process_group_options *options, yg_process_group **out) {
    yg_process_group *pg = NULL;
    int64_t timeout = options != NULL ? options->timeout_ms : 0;
    yg_status st;
    int rc;

    pg = calloc(1, sizeof *pg);
    if (pg == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "process_group_create: out of memory");
    pg->timeout_ms = timeout > 0 ? timeout : DEFAULT_TIMEOUT_MS;
    pg->comm = MPI_COMM_NULL;
    pthread_mutex_lock(&g_mu);
    if (options != NULL && options->mpi_comm != NULL) {
        int initialised = 0;
        MPI_Initialized(&initialised);
        if (!initialised) {
            st = yg__fail(YG_ERR_INVALID_ARGUMENT,
                          "process_group_create: mpi_comm given but MPI is not initialised");
            goto out;
        }
    }
    st = ensure_mpi();
    if (st != YG_OK)
        goto out;
    rc = MPI_Comm_dup(options != NULL && options->mpi_comm != NULL
                          ? *(const MPI_Comm *)options->mpi_comm
                          : MPI_COMM_WORLD,
                      &pg->comm);
    if (rc != MPI_SUCCESS) {
        st = mpi_fail("MPI_Comm_dup", rc);
        goto out;
    }
    MPI_Comm_set_errhandler(pg->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(pg->comm, &pg->rank);
    MPI_Comm_size(pg->comm, &pg->world_size);
    pthread_mutex_init(&pg->mu, NULL);
    pthread_cond_init(&pg->cv, NULL);
    if (pthread_create(&pg->thread, NULL, comm_thread, pg) != 0) {
        pthread_cond_destroy(&pg->cv);
        pthread_mutex_destroy(&pg->mu);
        MPI_Comm_free(&pg->comm);
        st = yg__fail(YG_ERR_OUT_OF_MEMORY,
                      "process_group_create: cannot start the communication thread");
        goto out;
    }
    g_live_groups++;
out:
    if (st != YG_OK) {
        free(pg);
        pg = NULL;
        finalise_if_last();
    }
    pthread_mutex_unlock(&g_mu);
    *out = pg;
    return st;
}

static yg_status mpi_create(const yg_process_group_options *options, yg_process_group **out) {
    yg_dist_backend backend = options != NULL ? options->backend : YG_DIST_MPI;
    yg_process_group *pg = NULL;
    yg__nccl_group *nccl = NULL;
    yg_status st;

    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "process_group_create: out is NULL");
    *out = NULL;
    if (options != NULL && options->timeout_ms < 0)
        return yg__fail(YG_ERR_INVALID_ARGUMENT,
                        "process_group_create: timeout_ms must be >= 0, got %lld",
                        (long long)options->timeout_ms);
    if ((unsigned)backend >= YG_DIST_BACKEND_COUNT_)
        return yg__fail(
            YG_ERR_INVALID_ARGUMENT, "process_group_create: unknown backend %d", (int)backend);
    /* Before MPI starts: a build or a machine that cannot run NCCL says
     * so at once, on every rank alike. */
    if (backend == YG_DIST_NCCL)
        YG_RETURN_IF_ERROR(yg__nccl_check_available("process_group_create"));
    YG_RETURN_IF_ERROR(create_mpi(options, &pg));
    if (backend == YG_DIST_NCCL) {
        /* pg->nccl is still NULL, so the bootstrap's collectives run on
         * the MPI part. */
        st = yg__nccl()->group_create(pg, options, &nccl);
        if (st != YG_OK) {
            mpi_release(pg);
            return st;
        }
        pg->nccl = nccl;
    }
    *out = pg;
    return YG_OK;
}

static yg_dist_backend mpi_backend(const yg_process_group *pg) {
    return pg != NULL && pg->nccl != NULL ? YG_DIST_NCCL : YG_DIST_MPI;
}

static int mpi_cuda_device(const yg_process_group *pg) {
    return pg != NULL && pg->nccl != NULL ? yg__nccl()->group_device(pg->nccl) : -1;
}

static int mpi_rank(const yg_process_group *pg) {
    return pg != NULL ? pg->rank : 0;
}

static int mpi_world_size(const yg_process_group *pg) {
    return pg != NULL ? pg->world_size : 0;
}

static bool mpi_broken(const yg_process_group *pg) {
    bool b;
    if (pg->nccl != NULL)
        return yg__nccl()->group_broken(pg->nccl);
    pthread_mutex_lock((pthread_mutex_t *)&pg->mu);
    b = pg->broken;
    pthread_mutex_unlock((pthread_mutex_t *)&pg->mu);
    return b;
}

static void mpi_release(yg_process_group *pg) {
    bool broken;

    if (pg == NULL)
        return;
    if (pg->nccl != NULL)
        yg__nccl()->group_release(pg->nccl);
    pthread_mutex_lock(&pg->mu);
    pg->stop = true;
    pthread_cond_broadcast(&pg->cv);
    pthread_mutex_unlock(&pg->mu);
    pthread_join(pg->thread, NULL);
    broken = pg->broken;
    pthread_cond_destroy(&pg->cv);
    pthread_mutex_destroy(&pg->mu);
    pthread_mutex_lock(&g_mu);
    /* A broken communicator may have a collective pending forever; freeing
     * it would wait for it.  MPI_Finalize does not. */
    if (!broken)
        MPI_Comm_free(&pg->comm);
    g_live_groups--;
    finalise_if_last();
    pthread_mutex_unlock(&g_mu);
    free(pg);
}

/* ---- queueing ---- */

static yg_status check_pg(const char *op, yg_process_group *pg) {
    if (pg == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: process group is NULL", op);
    pthread_mutex_lock(&pg->mu);
    if (pg->broken) {
        yg_status st = yg__fail(YG_ERR_IO,
                                "%s: the process group is broken by an earlier failure: %.900s",
                                op,
                                pg->broken_msg);
        pthread_mutex_unlock(&pg->mu);
        return st;
    }
    pthread_mutex_unlock(&pg->mu);
    return YG_OK;
}

/* A contiguous buffer of t for MPI: t itself when it is contiguous in a
 * dtype MPI moves as is (reduce: not half), else a copy (as dtype). */
static yg_status buffer_for(const yg_tensor *t, bool reduce, yg_tensor **out) {
    yg_dtype dt = yg_tensor_dtype(t);
    if (reduce && yg__dtype_is_half(dt))
        dt = YG_FLOAT32;
    return yg__tensor_contiguous_as(t, dt, true, out);
}

static yg_status work_new(yg_process_group *pg, coll_kind kind, const char *op, yg_work **out) {
    yg_work *w = calloc(1, sizeof *w);
    if (w == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
    atomic_init(&w->refs, 2);
    w->pg = pg;
    w->kind = kind;
    w->op = op;
    *out = w;
    return YG_OK;
}

/* Queues w (which holds one reference for the thread and one for the
 * caller), then either hands it out or waits for it. */
static yg_status submit(yg_work *w, yg_work **work) {
    yg_process_group *pg = w->pg;
    yg_status st;

    pthread_mutex_lock(&pg->mu);
    /* A blocking call with nothing queued or running runs on the caller's
     * thread, saving the hand-over to the thread and back, which shows on
     * small all-reduces (docs/distributed.md, section "Figures");
     * `running` keeps the thread out of MPI meanwhile, so calls stay
     * serialised and in order. */
    if (work == NULL && pg->head == NULL && !pg->running && !pg->broken) {
        pg->running = true;
        pthread_mutex_unlock(&pg->mu);
        run_work(w);
        pthread_mutex_lock(&pg->mu);
        pg->running = false;
        pthread_cond_broadcast(&pg->cv);
        pthread_mutex_unlock(&pg->mu);
        work_unref(w); /* the queue's reference */
        st = mpi_work_wait(w);
        mpi_work_release(w);
        return st;
    }
    if (pg->tail != NULL)
        pg->tail->next = w;
    else
        pg->head = w;
    pg->tail = w;
    pthread_cond_broadcast(&pg->cv);
    pthread_mutex_unlock(&pg->mu);
    if (work != NULL) {
        *work = w;
        return YG_OK;
    }
    st = mpi_work_wait(w);
    mpi_work_release(w);
    return st;
}

/* An NCCL group's collective: with work NULL waits for nw and frees it,
 * else hands out a yg_work wrapping it.  st is the status of queueing
 * it (nw is NULL unless YG_OK). */
static yg_status
nccl_submit(yg_process_group *pg, const char *op, yg_status st, yg__nccl_work *nw, yg_work **work) {
    yg_work *w;

    if (st != YG_OK)
        return st;
    if (work == NULL) {
        st = yg__nccl()->work_wait(nw);
        yg__nccl()->work_release(nw);
        return st;
    }
    w = calloc(1, sizeof *w);
    if (w == NULL) {
        yg__nccl()->work_release(nw); /* waits for it */
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
    }
    atomic_init(&w->refs, 1);
    w->pg = pg;
    w->op = op;
    w->nccl = nw;
    *work = w;
    return YG_OK;
}

/* Frees a work that was never queued (both references). */
static void work_discard(yg_work *w) {
    work_unref(w);
    work_unref(w);
}

static yg_status
mpi_all_reduce(yg_process_group *pg, yg_tensor *t, yg_reduce_op op, yg_work **work) {
    yg_work *w = NULL;
    yg_status st;

    if (work != NULL)
        *work = NULL;
    YG_RETURN_IF_ERROR(check_pg("all_reduce", pg));
    if (pg->nccl != NULL) {
        yg__nccl_work *nw = NULL;
        st = yg__nccl()->all_reduce(pg->nccl, t, op, &nw);
        return nccl_submit(pg, "all_reduce", st, nw, work);
    }
    YG_RETURN_IF_ERROR(yg__dist_check_tensor("all_reduce", "tensor", t));
    YG_RETURN_IF_ERROR(yg__dist_check_reduce("all_reduce", op, yg_tensor_dtype(t)));
    YG_RETURN_IF_ERROR(work_new(pg, COLL_ALL_REDUCE, "all_reduce", &w));
    w->rop = op;
    w->user_out = yg_retain(t);
    st = buffer_for(t, true, &w->buf_out);
    if (st != YG_OK) {
        work_discard(w);
        return st;
    }
    return submit(w, work);
}

static yg_status mpi_broadcast(yg_process_group *pg, yg_tensor *t, int root, yg_work **work) {
    yg_work *w = NULL;
    yg_status st;

    if (work != NULL)
        *work = NULL;
    YG_RETURN_IF_ERROR(check_pg("broadcast", pg));
    if (pg->nccl != NULL) {
        yg__nccl_work *nw = NULL;
        st = yg__nccl()->broadcast(pg->nccl, t, root, &nw);
        return nccl_submit(pg, "broadcast", st, nw, work);
    }
    YG_RETURN_IF_ERROR(yg__dist_check_tensor("broadcast", "tensor", t));
    if (root < 0 || root >= pg->world_size)
        return yg__fail(YG_ERR_INDEX,
                        "broadcast: root %d out of range for world size %d",
                        root,
                        pg->world_size);
    YG_RETURN_IF_ERROR(work_new(pg, COLL_BROADCAST, "broadcast", &w));
    w->root = root;
    w->user_out = yg_retain(t);
    st = buffer_for(t, false, &w->buf_out);
    if (st != YG_OK) {
        work_discard(w);
        return st;
    }
    return submit(w, work);
}

static yg_status check_pair(const char *op,
                            yg_process_group *pg,
                            const yg_tensor *input,
                            const yg_tensor *output,
                            bool gather) {
    YG_RETURN_IF_ERROR(yg__dist_check_tensor(op, "input", input));
    YG_RETURN_IF_ERROR(yg__dist_check_tensor(op, "output", output));
    return yg__dist_check_pair(op, pg->world_size, input, output, gather);
}

/* all_gather on pg's MPI part (pg checked). */
static yg_status
all_gather_on_mpi(yg_process_group *pg, const yg_tensor *input, yg_tensor *output, yg_work **work) {
    yg_work *w = NULL;
    yg_status st;

    YG_RETURN_IF_ERROR(check_pair("all_gather", pg, input, output, true));
    YG_RETURN_IF_ERROR(work_new(pg, COLL_ALL_GATHER, "all_gather", &w));
    w->user_in = yg_retain((yg_tensor *)input);
    w->user_out = yg_retain(output);
    st = buffer_for(input, false, &w->buf_in);
    if (st == YG_OK)
        st = buffer_for(output, false, &w->buf_out);
    if (st != YG_OK) {
        work_discard(w);
        return st;
    }
    return submit(w, work);
}

static yg_status mpi_all_gather(yg_process_group *pg,
                                      const yg_tensor *input,
                                      yg_tensor *output,
                                      yg_work **work) {
    if (work != NULL)
        *work = NULL;
    YG_RETURN_IF_ERROR(check_pg("all_gather", pg));
    if (pg->nccl != NULL) {
        yg__nccl_work *nw = NULL;
        yg_status st = yg__nccl()->all_gather(pg->nccl, input, output, &nw);
        return nccl_submit(pg, "all_gather", st, nw, work);
    }
    return all_gather_on_mpi(pg, input, output, work);
}

static yg_status
mpi_host_all_gather(yg_process_group *pg, const yg_tensor *input, yg_tensor *output) {
    YG_RETURN_IF_ERROR(check_pg("all_gather", pg));
    return all_gather_on_mpi(pg, input, output, NULL);
}

static yg_status mpi_reduce_scatter(yg_process_group *pg,
                                          const yg_tensor *input,
                                          yg_tensor *output,
                                          yg_reduce_op op,
                                          yg_work **work) {
    yg_work *w = NULL;
    yg_status st;

    if (work != NULL)
        *work = NULL;
    YG_RETURN_IF_ERROR(check_pg("reduce_scatter", pg));
    if (pg->nccl != NULL) {
        yg__nccl_work *nw = NULL;
        st = yg__nccl()->reduce_scatter(pg->nccl, input, output, op, &nw);
        return nccl_submit(pg, "reduce_scatter", st, nw, work);
    }
    YG_RETURN_IF_ERROR(check_pair("reduce_scatter", pg, input, output, false));
    YG_RETURN_IF_ERROR(yg__dist_check_reduce("reduce_scatter", op, yg_tensor_dtype(input)));
    YG_RETURN_IF_ERROR(work_new(pg, COLL_REDUCE_SCATTER, "reduce_scatter", &w));
    w->rop = op;
    w->user_in = yg_retain((yg_tensor *)input);
    w->user_out = yg_retain(output);
    st = buffer_for(input, true, &w->buf_in);
    if (st == YG_OK)
        st = buffer_for(output, true, &w->buf_out);
    if (st != YG_OK) {
        work_discard(w);
        return st;
    }
    return submit(w, work);
}

static yg_status mpi_barrier(yg_process_group *pg, yg_work **work) {
    yg_work *w = NULL;

    if (work != NULL)
        *work = NULL;
    YG_RETURN_IF_ERROR(check_pg("barrier", pg));
    if (pg->nccl != NULL) {
        yg__nccl_work *nw = NULL;
        yg_status st = yg__nccl()->barrier(pg->nccl, &nw);
        return nccl_submit(pg, "barrier", st, nw, work);
    }
    YG_RETURN_IF_ERROR(work_new(pg, COLL_BARRIER, "barrier", &w));
    return submit(w, work);
}

/* ---- completion ---- */

static void scale(yg_tensor *t, double factor) {
    int64_t n = yg_tensor_numel(t);
    if (yg_tensor_dtype(t) == YG_FLOAT32) {
        float *p = yg_tensor_data(t), f = (float)factor;
        for (int64_t i = 0; i < n; i++)
            p[i] *= f;
    } else {
        double *p = yg_tensor_data(t);
        for (int64_t i = 0; i < n; i++)
            p[i] *= factor;
    }
}

/* After success, on the caller's thread: avg's division, and the copy
 * back when MPI wrote a buffer of our own. */
static yg_status write_back(yg_work *w) {
    yg_tensor *same = NULL;
    yg_status st = YG_OK;
    bool prev;

    if (w->buf_out == NULL)
        return YG_OK;
    if (w->rop == YG_REDUCE_AVG && (w->kind == COLL_ALL_REDUCE || w->kind == COLL_REDUCE_SCATTER))
        scale(w->buf_out, 1.0 / (double)w->pg->world_size);
    if (w->buf_out == w->user_out) {
        yg__tensor_bump_version(w->user_out);
        return YG_OK;
    }
    prev = yg_set_grad_enabled(false);
    st = yg_copy_(w->user_out, w->buf_out, &same);
    yg_set_grad_enabled(prev);
    yg_release(same);
    if (st != YG_OK)
        return yg__fail_prefix(st, w->op);
    return YG_OK;
}

static yg_status finish(yg_work *w) {
    yg_status st;

    if (!w->finished) {
        w->finished = true;
        pthread_mutex_lock(&w->pg->mu);
        st = w->status;
        pthread_mutex_unlock(&w->pg->mu);
        if (st == YG_OK)
            st = write_back(w);
        else
            yg__fail(st, "%s", w->message);
        w->final_status = st;
        if (st != YG_OK && st != w->status)
            snprintf(w->message, sizeof w->message, "%s", yg_last_error());
        return st;
    }
    if (w->final_status != YG_OK)
        return yg__fail(w->final_status, "%s", w->message);
    return YG_OK;
}

static yg_status mpi_work_wait(yg_work *work) {
    if (work == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "work_wait: work is NULL");
    if (work->nccl != NULL)
        return yg__nccl()->work_wait(work->nccl);
    pthread_mutex_lock(&work->pg->mu);
    while (!work->done)
        pthread_cond_wait(&work->pg->cv, &work->pg->mu);
    pthread_mutex_unlock(&work->pg->mu);
    return finish(work);
}

static yg_status mpi_work_test(yg_work *work, bool *done) {
    bool d;

    if (done != NULL)
        *done = false;
    if (work == NULL || done == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "work_test: work or done is NULL");
    if (work->nccl != NULL)
        return yg__nccl()->work_test(work->nccl, done);
    pthread_mutex_lock(&work->pg->mu);
    d = work->done;
    pthread_mutex_unlock(&work->pg->mu);
    if (!d)
        return YG_OK;
    *done = true;
    return finish(work);
}

static void mpi_work_release(yg_work *work) {
    work_unref(work);
}

const yg__pg_backend yg__process_group_mpi = {
    .create = mpi_create,
    .rank = mpi_rank,
    .world_size = mpi_world_size,
    .backend = mpi_backend,
    .cuda_device = mpi_cuda_device,
    .broken = mpi_broken,
    .release = mpi_release,
    .all_reduce = mpi_all_reduce,
    .broadcast = mpi_broadcast,
    .all_gather = mpi_all_gather,
    .host_all_gather = mpi_host_all_gather,
    .reduce_scatter = mpi_reduce_scatter,
    .barrier = mpi_barrier,
    .work_wait = mpi_work_wait,
    .work_test = mpi_work_test,
    .work_release = mpi_work_release,
};

/* Loaded as libyagrad_mpi (libyagrad.so's case), the module registers
 * itself; in libyagrad.a, process_group.c refers to the table directly
 * and the registration changes nothing. */
__attribute__((constructor)) static void register_mpi(void) {
    yg__pg_register(&yg__process_group_mpi);
}
