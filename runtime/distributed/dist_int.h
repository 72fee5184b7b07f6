/*
 * dist_int.h - what the files of runtime/distributed share.  Not API.
 *
 * process_group.c is yagrad/distributed.h: it forwards to the process
 * group backend below (process_group_mpi.c, in a build with MPI: the
 * module libyagrad_mpi that process_group.c loads on first use, or part
 * of libyagrad.a), and without one answers every request itself, saying
 * why there is none.  The
 * checks of a collective's arguments (dist_check.c) are common to the MPI
 * and NCCL parts, so both give the same messages for bad arguments, and
 * the tests of those need no MPI.
 *
 * The NCCL backend (process_group_nccl.c, part of the CUDA module, which
 * registers it when it loads) is a part of an MPI group: the public
 * yg_process_group of process_group_mpi.c holds a yg__nccl_group when
 * its backend is YG_DIST_NCCL and hands each collective to it; the MPI
 * part then only bootstrapped it.  Every yg__nccl_* collective returns a
 * work, which process_group_mpi.c waits for (blocking calls) or wraps in
 * the public yg_work.
 */
#ifndef YAGRAD_DISTRIBUTED_DIST_INT_H
#define YAGRAD_DISTRIBUTED_DIST_INT_H

#include "core/core.h"
#include "yagrad/distributed.h"

/* "sum", "avg", "max"; "unknown" otherwise. */
const char *yg__reduce_op_name(yg_reduce_op op);

/* Checks t for a collective named op on an MPI group: defined, on the
 * CPU (a CUDA tensor: "<op>: <arg> is on cuda:0 but this MPI process
 * group takes cpu tensors ..."), at most INT_MAX elements.  arg names t. */
yg_status yg__dist_check_tensor(const char *op, const char *arg, const yg_tensor *t);

/* Checks t for a collective named op on an NCCL group of CUDA device
 * index device: defined, on cuda:<device> (YG_ERR_DEVICE naming both
 * devices: "<op>: <arg> is on cpu but this NCCL process group takes
 * tensors on cuda:0").  Any layout. */
yg_status
yg__dist_check_cuda_tensor(const char *op, const char *arg, const yg_tensor *t, int device);

/* Checks the input/output pair of all_gather (gather true: output has
 * world_size times input's elements) or reduce_scatter (input has
 * world_size times output's): the same dtype, those element counts.  The
 * tensors themselves are checked before. */
yg_status yg__dist_check_pair(const char *op,
                              int world_size,
                              const yg_tensor *input,
                              const yg_tensor *output,
                              bool gather);

/* Checks a reduction op for dtype (avg needs a floating dtype). */
yg_status yg__dist_check_reduce(const char *op, yg_reduce_op rop, yg_dtype dtype);

/* Whether a group is broken (internal, for ddp.c to fail early). */
bool yg__process_group_broken(const yg_process_group *pg);

/* yg_process_group_all_gather of cpu tensors on pg's MPI part, whatever
 * pg's backend, blocking: for exchanges of host data such as
 * yg_ddp_create's checks, which an NCCL group would refuse (its MPI part
 * is idle once it bootstrapped NCCL).  Errors as all_gather on an MPI
 * group. */
yg_status
yg__process_group_host_all_gather(yg_process_group *pg, const yg_tensor *input, yg_tensor *output);

/* A process group backend: what process_group.c forwards to, each field
 * the function of yagrad/distributed.h (or of this file) of that name,
 * with its contract.  process_group_mpi.c's is the one. */
typedef struct yg__pg_backend {
    __typeof__(yg_process_group_create) *create;
    __typeof__(yg_process_group_rank) *rank;
    __typeof__(yg_process_group_world_size) *world_size;
    __typeof__(yg_process_group_backend) *backend;
    __typeof__(yg_process_group_cuda_device) *cuda_device;
    __typeof__(yg__process_group_broken) *broken;
    __typeof__(yg_process_group_release) *release;
    __typeof__(yg_process_group_all_reduce) *all_reduce;
    __typeof__(yg_process_group_broadcast) *broadcast;
    __typeof__(yg_process_group_all_gather) *all_gather;
    __typeof__(yg__process_group_host_all_gather) *host_all_gather;
    __typeof__(yg_process_group_reduce_scatter) *reduce_scatter;
    __typeof__(yg_process_group_barrier) *barrier;
    __typeof__(yg_work_wait) *work_wait;
    __typeof__(yg_work_test) *work_test;
    __typeof__(yg_work_release) *work_release;
} yg__pg_backend;

/* process_group_mpi.c (built with MPI; its constructor registers it). */
extern const yg__pg_backend yg__process_group_mpi;

/* Makes b (static) the process group backend.  Cannot fail. */
void yg__pg_register(const yg__pg_backend *b);

/* Checks parameter i (t) of yg_ddp_create against parameter 0 (first)
 * and against what a group of backend takes (cpu tensors for MPI, those
 * on cuda:<cuda_device> for NCCL): YG_ERR_DEVICE naming the parameter
 * and both devices, "ddp_create: parameter 1 is on cpu but parameter 0
 * is on cuda:0 ..." or "ddp_create: parameter 0 is on cpu but this NCCL
 * process group takes tensors on cuda:0".  t and first are defined. */
yg_status yg__ddp_check_device(int64_t i,
                               const yg_tensor *t,
                               const yg_tensor *first,
                               yg_dist_backend backend,
                               int cuda_device);

/* ---- the NCCL backend ---- */

typedef struct yg__nccl_group yg__nccl_group;
typedef struct yg__nccl_work yg__nccl_work;

/* The NCCL backend is part of the CUDA module (process_group_nccl.c),
 * which registers the table below when it loads; process_group_mpi.c
 * reaches it only through yg__nccl().  Each field is the function of the
 * same name below. */
typedef struct yg__nccl_backend yg__nccl_backend;

/* Makes b (static) the NCCL backend.  Cannot fail. */
void yg__nccl_register(const yg__nccl_backend *b);

/* The NCCL backend, loading the CUDA module if needed; NULL in a build
 * without NCCL or when the module cannot be loaded.  Cannot fail. */
const yg__nccl_backend *yg__nccl(void);

/* YG_OK when an NCCL group can be made in this process: the NCCL backend
 * is there (yg__nccl) and a CUDA device is usable.  Else
 * YG_ERR_NOT_IMPLEMENTED "<op>: yagrad was built without NCCL ..." (or
 * "... could not load the CUDA backend module ...") or YG_ERR_DEVICE
 * "<op>: cuda: no CUDA device (...)".  Runs before MPI is touched. */
yg_status yg__nccl_check_available(const char *op);

/* process_group_nccl.c's check behind yg__nccl_check_available: a CUDA
 * device is usable. */
yg_status yg__nccl_check_device(const char *op);

/* Joins this rank to an NCCL communicator over the ranks of mpi_pg, an
 * MPI group (its collectives carry rank 0's ncclUniqueId and the hosts'
 * names for the local rank), on options->cuda_device or the local rank's
 * device.  Collective over mpi_pg.
 *   mpi_pg:  borrowed; must outlive the NCCL group
 *   options: nullable, borrowed
 *   out:     out: release with yg__nccl_group_release */
yg_status yg__nccl_group_create(yg_process_group *mpi_pg,
                                const yg_process_group_options *options,
                                yg__nccl_group **out);

/* Waits for the group's stream (aborting the communicator after the
 * timeout or when broken) and frees everything.  NULL-safe. */
void yg__nccl_group_release(yg__nccl_group *g);

/* The group's CUDA device index. */
int yg__nccl_group_device(const yg__nccl_group *g);

/* Whether a failure (NCCL error, timeout) broke the group. */
bool yg__nccl_group_broken(const yg__nccl_group *g);

/* The collectives of yagrad/distributed.h on an NCCL group, after the
 * arguments are checked; each queues the NCCL call on the group's stream
 * and returns its work (out: release with yg__nccl_work_release). */
yg_status
yg__nccl_all_reduce(yg__nccl_group *g, yg_tensor *t, yg_reduce_op op, yg__nccl_work **out);
yg_status yg__nccl_broadcast(yg__nccl_group *g, yg_tensor *t, int root, yg__nccl_work **out);
yg_status yg__nccl_all_gather(yg__nccl_group *g,
                              const yg_tensor *input,
                              yg_tensor *output,
                              yg__nccl_work **out);
yg_status yg__nccl_reduce_scatter(yg__nccl_group *g,
                                  const yg_tensor *input,
                                  yg_tensor *output,
                                  yg_reduce_op op,
                                  yg__nccl_work **out);
yg_status yg__nccl_barrier(yg__nccl_group *g, yg__nccl_work **out);

/* yg_work_wait / yg_work_test / yg_work_release of an NCCL work. */
yg_status yg__nccl_work_wait(yg__nccl_work *w);
yg_status yg__nccl_work_test(yg__nccl_work *w, bool *done);
void yg__nccl_work_release(yg__nccl_work *w);


struct yg__nccl_backend {
    __typeof__(yg__nccl_check_device) *check_device;
    __typeof__(yg__nccl_group_create) *group_create;
    __typeof__(yg__nccl_group_release) *group_release;
    __typeof__(yg__nccl_group_device) *group_device;
    __typeof__(yg__nccl_group_broken) *group_broken;
    __typeof__(yg__nccl_all_reduce) *all_reduce;
    __typeof__(yg__nccl_broadcast) *broadcast;
    __typeof__(yg__nccl_all_gather) *all_gather;
    __typeof__(yg__nccl_reduce_scatter) *reduce_scatter;
    __typeof__(yg__nccl_barrier) *barrier;
    __typeof__(yg__nccl_work_wait) *work_wait;
    __typeof__(yg__nccl_work_test) *work_test;
    __typeof__(yg__nccl_work_release) *work_release;
};
#endif /* YAGRAD_DISTRIBUTED_DIST_INT_H */
