/*
 * process_group.c - yagrad/distributed.h: forwards every request to the
 * process group backend, process_group_mpi.c (NCCL groups are MPI groups
 * whose collectives the CUDA module's NCCL part runs).
 *
 * Where the backend lives.  libyagrad.so does not link MPI: the MPI
 * backend is a module of its own (YG_MPI_MODULE_FILE,
 * libyagrad_mpi.so.<soversion>), loaded on the first request of this
 * file's API, once per process, as the device backends are
 * (yg__module_open: $YG_MPI_MODULE, else libyagrad's folder, else the
 * loader's search); its constructor registers its table here.  A program
 * that never makes a process group maps no MPI library.  libyagrad.a
 * takes the backend in itself (this file compiled with YG_MPI_BUILTIN
 * beside process_group_mpi.c), since a module would bring a second copy
 * of the library.  Without a backend (a build without MPI, a module that
 * could not be loaded) no group can exist, and every request gets one
 * answer from here, which says why.
 */
#include "core/backend.h"
#include "distributed/dist_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static _Atomic(const yg__pg_backend *) registered;

void yg__pg_register(const yg__pg_backend *b) {
    atomic_store_explicit(&registered, b, memory_order_release);
}

#if defined(YG_MPI_MODULE_FILE) && !defined(YG_MPI_BUILTIN)
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_why[512]; /* why the module is not there */

static void load(void) {
    char errs[400];
    if (!yg__module_open("YG_MPI_MODULE", YG_MPI_MODULE_FILE, errs, sizeof errs))
        snprintf(load_why, sizeof load_why,
                 "yagrad's MPI backend module could not be loaded (%s)", errs);
    else if (atomic_load_explicit(&registered, memory_order_acquire) == NULL)
        snprintf(load_why, sizeof load_why,
                 "yagrad's MPI backend module %s loaded but registered nothing", YG_MPI_MODULE_FILE);
}
#endif

/* The backend, loading its module on the first call; NULL when there is
 * none (why_none says why). */
static const yg__pg_backend *backend(void) {
#ifdef YG_MPI_BUILTIN
    return &yg__process_group_mpi;
#else
    const yg__pg_backend *b = atomic_load_explicit(&registered, memory_order_acquire);
#ifdef YG_MPI_MODULE_FILE
    if (b == NULL) {
        pthread_once(&load_once, load);
        b = atomic_load_explicit(&registered, memory_order_acquire);
    }
#endif
    return b;
#endif
}

/* Why there is no backend, a sentence without its full stop. */
static const char *why_none(void) {
#if defined(YG_MPI_MODULE_FILE) && !defined(YG_MPI_BUILTIN)
    return load_why;
#else
    return "yagrad was built without MPI";
#endif
}

bool yg_distributed_is_available(void) {
    return backend() != NULL;
}

yg_status yg_process_group_create(const yg_process_group_options *options, yg_process_group **out) {
    if (backend() != NULL)
        return backend()->create(options, out);
    if (out != NULL)
        *out = NULL;
#ifdef YG_MPI_MODULE_FILE
    return yg__fail(YG_ERR_NOT_IMPLEMENTED, "process_group_create: %s", why_none());
#else
    if (options != NULL && options->backend == YG_DIST_NCCL)
        return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                        "process_group_create: yagrad was built without NCCL (NCCL groups are "
                        "bootstrapped over MPI, and this build has no MPI)");
    return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                    "process_group_create: yagrad was built without MPI (install libopenmpi-dev "
                    "and configure with -DYG_WITH_MPI=ON)");
#endif
}

/* Without a backend there is no group: the queries answer for NULL. */
int yg_process_group_rank(const yg_process_group *pg) {
    return backend() != NULL ? backend()->rank(pg) : 0;
}

int yg_process_group_world_size(const yg_process_group *pg) {
    return backend() != NULL ? backend()->world_size(pg) : 0;
}

yg_dist_backend yg_process_group_backend(const yg_process_group *pg) {
    return backend() != NULL ? backend()->backend(pg) : YG_DIST_MPI;
}

int yg_process_group_cuda_device(const yg_process_group *pg) {
    return backend() != NULL ? backend()->cuda_device(pg) : -1;
}

bool yg__process_group_broken(const yg_process_group *pg) {
    return backend() != NULL ? backend()->broken(pg) : true;
}

void yg_process_group_release(yg_process_group *pg) {
    if (backend() != NULL)
        backend()->release(pg);
}

/* A collective without a backend: its group can only be NULL. */
static yg_status no_group(const char *op, yg_work **work) {
    if (work != NULL)
        *work = NULL;
    return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: process group is NULL (%s)", op,
                    why_none());
}

yg_status
yg_process_group_all_reduce(yg_process_group *pg, yg_tensor *t, yg_reduce_op op, yg_work **work) {
    if (backend() == NULL)
        return no_group("all_reduce", work);
    return backend()->all_reduce(pg, t, op, work);
}

yg_status yg_process_group_broadcast(yg_process_group *pg, yg_tensor *t, int root, yg_work **work) {
    if (backend() == NULL)
        return no_group("broadcast", work);
    return backend()->broadcast(pg, t, root, work);
}

yg_status yg_process_group_all_gather(yg_process_group *pg,
                                      const yg_tensor *input,
                                      yg_tensor *output,
                                      yg_work **work) {
    if (backend() == NULL)
        return no_group("all_gather", work);
    return backend()->all_gather(pg, input, output, work);
}

yg_status
yg__process_group_host_all_gather(yg_process_group *pg, const yg_tensor *input, yg_tensor *output) {
    if (backend() == NULL)
        return no_group("all_gather", NULL);
    return backend()->host_all_gather(pg, input, output);
}

yg_status yg_process_group_reduce_scatter(yg_process_group *pg,
                                          const yg_tensor *input,
                                          yg_tensor *output,
                                          yg_reduce_op op,
                                          yg_work **work) {
    if (backend() == NULL)
        return no_group("reduce_scatter", work);
    return backend()->reduce_scatter(pg, input, output, op, work);
}

yg_status yg_process_group_barrier(yg_process_group *pg, yg_work **work) {
    if (backend() == NULL)
        return no_group("barrier", work);
    return backend()->barrier(pg, work);
}

yg_status yg_work_wait(yg_work *work) {
    if (backend() == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "work_wait: work is NULL");
    return backend()->work_wait(work);
}

yg_status yg_work_test(yg_work *work, bool *done) {
    if (backend() != NULL)
        return backend()->work_test(work, done);
    if (done != NULL)
        *done = false;
    return yg__fail(YG_ERR_INVALID_ARGUMENT, "work_test: work is NULL");
}

void yg_work_release(yg_work *work) {
    if (backend() != NULL)
        backend()->work_release(work);
}

/* ---- the NCCL part's slot (dist_int.h), filled by the CUDA module ---- */

static _Atomic(const yg__nccl_backend *) nccl_backend;

void yg__nccl_register(const yg__nccl_backend *b) {
    atomic_store_explicit(&nccl_backend, b, memory_order_release);
}

const yg__nccl_backend *yg__nccl(void) {
    const yg__nccl_backend *b = atomic_load_explicit(&nccl_backend, memory_order_acquire);
    if (b == NULL && yg__backend_load(YG_CUDA))
        b = atomic_load_explicit(&nccl_backend, memory_order_acquire);
    return b;
}

bool yg_distributed_nccl_is_available(void) {
    return yg__nccl() != NULL;
}

yg_status yg__nccl_check_available(const char *op) {
    const yg__nccl_backend *b = yg__nccl();
    if (b != NULL)
        return b->check_device(op);
#ifdef YG_HAVE_NCCL
    const yg_device_backend *cuda = NULL;
    yg_status st = yg__backend(op, YG_CUDA, &cuda); /* the loader's reason */
    if (st != YG_OK)
        return yg__fail(YG_ERR_NOT_IMPLEMENTED, "%s", yg_last_error());
    return yg__fail(YG_ERR_INTERNAL, "%s: the CUDA backend module has no NCCL", op);
#else
    return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                    "%s: yagrad was built without NCCL (it needs the CUDA backend and the CUDA "
                    "toolkit's nccl.h and libnccl; configure with -DYG_WITH_NCCL=ON)",
                    op);
#endif
}
