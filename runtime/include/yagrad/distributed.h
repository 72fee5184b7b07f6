/*
 * yagrad/distributed.h - data-parallel training over MPI (and NCCL):
 * process groups, collectives on tensors, a data-parallel wrapper that
 * all-reduces gradients in buckets while backward runs, and a
 * distributed sampler.
 *
 * Objects:
 *   yg_process_group  the ranks of one job (mpirun -np N prog).  Created
 *                     by yg_process_group_create, released by
 *                     yg_process_group_release.  Owns one MPI communicator
 *                     (a duplicate of MPI_COMM_WORLD) and one
 *                     communication thread; an NCCL group also an NCCL
 *                     communicator and a CUDA stream.
 *   yg_work           one non-blocking collective in flight: wait or test
 *                     it, then yg_work_release it.
 *   yg_ddp            the data-parallel wrapper over a parameter list
 *                     (yg_ddp_create / yg_ddp_release).
 *
 * How collectives run: every collective is queued to the group's
 * communication thread, which starts it as a non-blocking MPI call
 * (MPI_Iallreduce, ...) and polls it with MPI_Test, so every rank issues
 * the collectives in the order the calling thread queued them (all ranks
 * must queue the same collectives in the same order, as in MPI).  Only
 * that thread makes MPI calls after creation; yagrad needs MPI's thread
 * level MPI_THREAD_SERIALIZED or higher (it asks for MPI_THREAD_MULTIPLE,
 * which Open MPI gives).  MPI's error handler on the group's communicator
 * is MPI_ERRORS_RETURN: an MPI failure becomes a status, never an abort.
 *
 * Timeouts: a collective that has not completed timeout_ms after it
 * started (a peer exited, crashed or is stuck) fails with YG_ERR_IO,
 * "<op>: timed out after <ms> ms ...".  MPI cannot cancel a collective, so
 * after a timeout or an MPI error the group is broken: every later call on
 * it fails at once with YG_ERR_IO naming the first failure.  Release it
 * and end the process.  A rank that exits without releasing its group (so
 * without MPI_Finalize) makes mpirun end the whole job.
 *
 * MPI itself: the first group created initialises MPI (MPI_Init_thread)
 * unless the program did; yagrad then finalises it when the last group
 * is released, and MPI cannot be initialised again in that process (a
 * later yg_process_group_create fails).  When yagrad initialises Open
 * MPI, it first asks (through the MPI tool interface) for the ring
 * algorithm of MPI_Iallreduce, unless the environment sets
 * OMPI_MCA_coll_libnbc_iallreduce_algorithm (docs/distributed.md has the
 * measurements).  A program that initialised MPI itself also finalises
 * it, after releasing its groups.
 *
 * Built without MPI (CMake YG_WITH_MPI=OFF, or no MPI found):
 * yg_process_group_create fails with YG_ERR_NOT_IMPLEMENTED, "... built
 * without MPI ...".  The sampler works either way.
 *
 * Backends: a group's backend (yg_process_group_options.backend) decides
 * which tensors its collectives take.  YG_DIST_MPI (the default) takes
 * CPU tensors; YG_DIST_NCCL takes CUDA tensors of the group's one device
 * and runs NCCL on a stream of its own.  An NCCL group is bootstrapped
 * over MPI: the ranks form an MPI group as above, rank 0's ncclUniqueId
 * travels to the others by an MPI broadcast, and every rank then joins
 * the NCCL communicator on its device (by default its local rank, among
 * the ranks on the same host, modulo the host's device count).  NCCL
 * needs yagrad built with CUDA, MPI and NCCL (CMake YG_WITH_NCCL, on
 * when the CUDA toolkit's nccl.h and libnccl are found); otherwise
 * creating an NCCL group fails with YG_ERR_NOT_IMPLEMENTED, "... built
 * without NCCL ...", and on a machine without a GPU with YG_ERR_DEVICE,
 * "... no CUDA device ...".  A CUDA tensor given to an MPI group, or a
 * CPU tensor (or one of another GPU) given to an NCCL group, fails with
 * YG_ERR_DEVICE naming the operation, the argument and both devices.
 * yg_ddp runs over either backend, on the parameters' device.
 *
 * Tensors: CPU tensors of every dtype; non-contiguous tensors are copied
 * to a contiguous buffer and back.  float16/bfloat16 are reduced in
 * float32 (converted once each way); bool reduces with logical or (sum and
 * max); avg needs a floating dtype.  A tensor given to a non-blocking
 * collective must not be read or written until the work completes.  A
 * tensor of more than INT_MAX elements (MPI's count is an int) fails with
 * YG_ERR_SHAPE.  On NCCL groups: CUDA tensors of every dtype, reduced in
 * their own dtype (float16 and bfloat16 too; bool with logical or), avg
 * by NCCL's ncclAvg; a non-contiguous one is copied to a contiguous
 * buffer on its device and back, as on MPI groups.
 *
 * Thread safety: a group may be used from one thread at a time (the
 * communication thread is internal).  yg_work handles are not shared.
 * Errors: see status.h; messages name the operation.  Anything not
 * declared here is not API.
 */
#ifndef YAGRAD_DISTRIBUTED_H
#define YAGRAD_DISTRIBUTED_H

#include "yagrad/status.h"
#include "yagrad/tensor.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct yg_process_group yg_process_group;
typedef struct yg_work yg_work;

/* Reduction of all_reduce and reduce_scatter. */
typedef enum yg_reduce_op {
    YG_REDUCE_SUM = 0,
    YG_REDUCE_AVG = 1, /* sum / world size; floating dtypes only */
    YG_REDUCE_MAX = 2,
    YG_REDUCE_OP_COUNT_
} yg_reduce_op;

/* Which engine a group's collectives run on. */
typedef enum yg_dist_backend {
    YG_DIST_MPI = 0,  /* CPU tensors, over MPI (the default) */
    YG_DIST_NCCL = 1, /* CUDA tensors, over NCCL, bootstrapped over MPI */
    YG_DIST_BACKEND_COUNT_
} yg_dist_backend;

typedef struct yg_process_group_options {
    int64_t timeout_ms; /* per collective, from when it starts; 0: 600000 (10 min) */
    /* nullable: points at an MPI_Comm (from <mpi.h>) whose ranks form the
     * group, e.g. one made with MPI_Comm_split; NULL: MPI_COMM_WORLD.  The
     * communicator is duplicated (collective over its ranks), so the
     * caller may free theirs at once.  Non-NULL needs MPI initialised by
     * the program or by an earlier group. */
    const void *mpi_comm;
    yg_dist_backend backend; /* YG_DIST_MPI (0) or YG_DIST_NCCL */
    /* nullable, NCCL only: the CUDA device index this rank's
     * communicator and tensors use; NULL: the rank's local rank (its
     * place among the group's ranks on the same host) modulo the
     * number of devices. */
    const int *cuda_device;
} yg_process_group_options;

/* Whether process groups can be made: yagrad was built with MPI and its
 * MPI backend is there.  With libyagrad.so the backend is a module,
 * libyagrad_mpi.so.<soversion>, that the first call of this header's
 * functions (this one included) loads, once per process: from the path
 * in $YG_MPI_MODULE when set, else from libyagrad.so's folder, else by
 * the dynamic loader's search; a program that never calls them maps no
 * MPI library.  libyagrad.a holds the backend itself.  Cannot fail. */
bool yg_distributed_is_available(void);

/* Whether yagrad was built with NCCL (a GPU is still needed to create an
 * NCCL group: yg_cuda_is_available).  Cannot fail. */
bool yg_distributed_nccl_is_available(void);

/* Creates a group of all ranks of the job, from the environment mpirun
 * sets (a program run without mpirun is a group of one rank), or of the
 * ranks of options->mpi_comm.  Collective: every rank of the group calls
 * it, groups in the same order.  With backend YG_DIST_NCCL, every rank
 * also joins an NCCL communicator on its CUDA device (see above).
 *   options: nullable, borrowed (NULL: defaults)
 *   out:     out: new group, release with yg_process_group_release
 * Returns: YG_ERR_NOT_IMPLEMENTED when built without MPI, when the MPI
 *          module could not be loaded ("process_group_create: yagrad's
 *          MPI backend module could not be loaded (<the loader's
 *          reason>)"), or for NCCL when built without NCCL ("... built without NCCL ...");
 *          YG_ERR_DEVICE for NCCL when no CUDA device is usable ("... no
 *          CUDA device ...") or cuda_device is out of range;
 *          YG_ERR_IO for NCCL when NCCL fails (ncclGetErrorString's
 *          text) or another rank failed its set-up; YG_ERR_DEVICE when
 *          the CUDA runtime fails (its text);
 *          YG_ERR_INVALID_ARGUMENT for NULL out, timeout_ms < 0 or an
 *          unknown backend;
 *          YG_ERR_IO when MPI fails to initialise, was already finalised,
 *          gives a thread level below MPI_THREAD_SERIALIZED, or cannot
 *          duplicate the communicator; YG_ERR_INVALID_ARGUMENT when
 *          mpi_comm is given before MPI is initialised;
 *          YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_process_group_create(const yg_process_group_options *options,
                                               yg_process_group **out);

/* This process's rank (0..world_size-1), and the number of ranks.  NULL
 * gives 0 and 0.  Cannot fail. */
int yg_process_group_rank(const yg_process_group *pg);
int yg_process_group_world_size(const yg_process_group *pg);

/* The group's backend (NULL gives YG_DIST_MPI), and the CUDA device index
 * of an NCCL group (-1 for an MPI group or NULL).  Cannot fail. */
yg_dist_backend yg_process_group_backend(const yg_process_group *pg);
int yg_process_group_cuda_device(const yg_process_group *pg);

/* Stops the communication thread (after the queued collectives complete
 * or time out), frees the communicator (for NCCL, after the group's
 * stream has finished, or by ncclCommAbort when the group is broken)
 * and, with the last group, MPI itself when yagrad initialised it.
 * Unfinished yg_work handles must be released before.  NULL-safe. */
void yg_process_group_release(yg_process_group *pg);

/* The collectives.  Each one, with work NULL, blocks until done (or timed
 * out); with work non-NULL it returns at once and *work (out: release with
 * yg_work_release) completes it.  Every call also fails, with YG_ERR_IO,
 * when the group is broken, and with YG_ERR_OUT_OF_MEMORY.
 * Arguments are checked on the calling rank only: ranks that disagree on
 * sizes or dtypes are an MPI error or a timeout, not a clean status.
 * Devices: an MPI group takes CPU tensors; an NCCL group CUDA tensors on
 * its device (yg_process_group_cuda_device), of any layout.  Anything
 * else fails with YG_ERR_DEVICE, e.g. "all_reduce: tensor is on cpu but
 * this NCCL process group takes tensors on cuda:0".  On an NCCL group
 * the collective runs on the group's own stream after the work queued
 * so far on the calling thread's current stream for the group's device
 * (yagrad/cuda.h: the legacy default stream unless yg_cuda_set_stream
 * chose another); a completed wait or test means the result is in the
 * tensors and makes the calling thread's current stream (then) wait for
 * the collective, so kernels queued after it on that stream see the
 * result.  NCCL failures and timeouts are YG_ERR_IO with
 * ncclGetErrorString's text, CUDA runtime failures YG_ERR_DEVICE with
 * the runtime's; either breaks the group (ncclCommAbort). */

/* Reduces t over all ranks in place: every rank ends with the result.
 *   t:  in-out, retained by work until it completes
 *   op: YG_REDUCE_SUM, _AVG or _MAX
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL pg/t or an unknown op;
 *          YG_ERR_DTYPE for avg on a non-floating dtype;
 *          YG_ERR_DEVICE for a tensor on a device the group does not
 *          take. */
YG_NODISCARD yg_status yg_process_group_all_reduce(yg_process_group *pg,
                                                   yg_tensor *t,
                                                   yg_reduce_op op,
                                                   yg_work **work);

/* Copies root's t into t on every other rank.
 *   t:    in-out (read on root, written elsewhere), retained by work
 *   root: 0..world_size-1
 * Returns: YG_ERR_INDEX for root out of range; as all_reduce. */
YG_NODISCARD yg_status yg_process_group_broadcast(yg_process_group *pg,
                                                  yg_tensor *t,
                                                  int root,
                                                  yg_work **work);

/* Gathers every rank's input into output, rank 0's first: output holds
 * world_size * numel(input) elements of input's dtype in row-major order
 * (e.g. sizes [world_size, *input sizes]).
 *   input:  borrowed, retained by work
 *   output: in-out, retained by work
 * Returns: YG_ERR_SHAPE when numel(output) != world_size * numel(input);
 *          YG_ERR_DTYPE when the dtypes differ; as all_reduce. */
YG_NODISCARD yg_status yg_process_group_all_gather(yg_process_group *pg,
                                                   const yg_tensor *input,
                                                   yg_tensor *output,
                                                   yg_work **work);

/* Reduces input over all ranks and gives rank r the r-th of world_size
 * equal row-major chunks of the result in output.
 *   input:  borrowed, world_size * numel(output) elements, retained by work
 *   output: in-out, retained by work
 * Returns: YG_ERR_SHAPE when numel(input) != world_size * numel(output);
 *          YG_ERR_DTYPE when the dtypes differ or avg on a non-floating
 *          dtype; as all_reduce. */
YG_NODISCARD yg_status yg_process_group_reduce_scatter(yg_process_group *pg,
                                                       const yg_tensor *input,
                                                       yg_tensor *output,
                                                       yg_reduce_op op,
                                                       yg_work **work);

/* Returns once every rank has entered the barrier.
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL pg; YG_ERR_IO. */
YG_NODISCARD yg_status yg_process_group_barrier(yg_process_group *pg, yg_work **work);

/* Blocks until work completes (success, MPI error or timeout) and writes
 * its result into the tensors given to the collective (on an NCCL group,
 * also makes the calling thread's current stream wait for it; see
 * above).  Waiting again returns the same status.
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL work; the collective's
 *          failure (YG_ERR_IO, with its message). */
YG_NODISCARD yg_status yg_work_wait(yg_work *work);

/* Whether work has completed, without blocking; when it has, as
 * yg_work_wait (the result is written, the status returned).
 *   done: out
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL work or done; as wait. */
YG_NODISCARD yg_status yg_work_test(yg_work *work, bool *done);

/* Releases a handle.  A collective still in flight completes in the
 * background (its tensors stay retained until then), but what wait would
 * have done on this thread is skipped: the result is not copied back into
 * a tensor that needed a buffer (non-contiguous, float16/bfloat16 in a
 * reduction), nor divided for avg.  Release after wait or a test that
 * said done for the full result.  On an NCCL group, releasing a handle
 * still in flight waits for it (up to the group's timeout) so that its
 * device memory is not reused while NCCL writes it.  NULL-safe. */
void yg_work_release(yg_work *work);

/* ---- data parallelism ----
 *
 * yg_ddp makes every rank's parameters receive the average of all ranks'
 * gradients.  Use: every rank creates it over the same parameters (same
 * order, sizes and dtypes); then each step: forward on the rank's share
 * of the batch, yg_backward, yg_ddp_finish, optimizer step, zero_grad.
 *
 * During backward, a post-accumulate hook on each parameter copies its
 * .grad into its bucket; a bucket whose parameters all have their
 * gradient starts its all-reduce at once, while backward goes on (buckets
 * start in bucket order, the same on every rank).  Buckets group the
 * parameters in reverse registration order (the order backward usually
 * produces them), one dtype per bucket, up to bucket_bytes (a larger
 * parameter gets a bucket of its own).  yg_ddp_finish waits for every
 * bucket and writes the averaged gradients into the parameters' .grad.
 * A second synchronised backward before finish makes backward fail
 * (YG_ERR_AUTOGRAD, "ddp: parameter <i> received a second gradient ...").
 *
 * Devices: the parameters must all be on one device, the one the group
 * takes: cpu for an MPI group, the group's GPU for an NCCL group
 * (yg_process_group_cuda_device).  The buckets are tensors on that
 * device, filled, averaged and copied into .grad by tensor ops (on a
 * GPU, kernels on the calling thread's current stream, which the
 * all-reduces are ordered after); only a count per parameter is read
 * back to the host, in finish.  The checks at creation exchange host
 * data over MPI (an NCCL group's MPI part).
 *
 * Parameters without a gradient in an iteration: with
 * find_unused_parameters, finish counts them as zeros on this rank (their
 * buckets start only in finish); a parameter no rank gave a gradient
 * keeps .grad none.  Without it, finish fails on every rank naming the
 * first such parameter.  Both are decided from a per-parameter count
 * (how many ranks had the gradient) summed with the last bucket.
 */

typedef struct yg_ddp yg_ddp;

/* Events reported to yg_ddp_options.on_event, on the thread that runs
 * backward or finish. */
typedef enum yg_ddp_event {
    YG_DDP_BUCKET_STARTED = 0, /* bucket's all-reduce queued (index given) */
    YG_DDP_BUCKET_FINISHED = 1 /* bucket waited for and written to .grad */
} yg_ddp_event;

typedef struct yg_ddp_options {
    int64_t bucket_bytes;        /* 0: 25 MiB (PyTorch's default) */
    bool find_unused_parameters; /* see above */
    /* nullable: called with each event (for tests and profiling) */
    void (*on_event)(yg_ddp_event event, int64_t bucket, void *ctx);
    void *on_event_ctx;
} yg_ddp_options;

/* Creates the wrapper: checks that every rank has the same parameter
 * count, sizes and dtypes, copies rank 0's parameter values into every
 * rank's parameters (a broadcast), and registers the hooks.
 *   pg:         borrowed; must outlive the wrapper
 *   params:     borrowed, params_len distinct leaves that require grad,
 *               float32 or float64, on the group's device (above); each
 *               retained until release
 *   options:    nullable, borrowed (NULL: defaults)
 *   out:        out: new wrapper, release with yg_ddp_release
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL pg/out, params_len < 1, a NULL
 *          or repeated parameter, bucket_bytes < 0; YG_ERR_AUTOGRAD for a
 *          parameter that is not a leaf requiring grad; YG_ERR_DTYPE for
 *          another dtype; YG_ERR_DEVICE naming the parameter and both
 *          devices when parameters are on two devices ("ddp_create:
 *          parameter 2 is on cpu but parameter 0 is on cuda:0 ...") or
 *          on one the group does not take ("ddp_create: parameter 0 is
 *          on cpu but this NCCL process group takes tensors on cuda:0");
 *          YG_ERR_SHAPE on every rank when the ranks'
 *          parameters differ: "ddp_create: parameter <i> is [..] float32 on
 *          rank 0 but [..] float32 on rank <r>" (the first mismatch, the
 *          same message on every rank), or "rank 0 has <n> parameters but
 *          rank <r> has <m>"; on the other ranks, when one rank rejected
 *          its own arguments (which it reports as above),
 *          YG_ERR_INVALID_ARGUMENT "ddp_create: rank <r> rejected its
 *          parameters ..."; YG_ERR_IO from the collectives;
 *          YG_ERR_OUT_OF_MEMORY.  On failure no hook stays registered. */
YG_NODISCARD yg_status yg_ddp_create(yg_process_group *pg,
                                     yg_tensor *const *params,
                                     int64_t params_len,
                                     const yg_ddp_options *options,
                                     yg_ddp **out);

/* Turns gradient synchronisation off (no_sync) or back on; returns the
 * previous setting.  While off, backward only accumulates into .grad and
 * finish does nothing; the next synchronised backward all-reduces the
 * accumulated .grad.  Call between iterations only.  NULL gives false.
 * Cannot fail. */
bool yg_ddp_set_sync(yg_ddp *ddp, bool sync);

/* Waits for every bucket, starting those backward left unstarted
 * (parameters without a gradient), and writes the average over ranks into
 * each parameter's .grad.  Resets for the next iteration.  A no-op while
 * synchronisation is off.
 * Returns: YG_ERR_INVALID_ARGUMENT for NULL ddp; YG_ERR_AUTOGRAD on every
 *          rank when a parameter got no gradient on some rank and
 *          find_unused_parameters is off ("ddp_finish: parameter <i> [..]
 *          received no gradient on <k> of <n> ranks ..."); YG_ERR_IO from
 *          the collectives (timeouts included); YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_ddp_finish(yg_ddp *ddp);

/* Number of buckets, and bucket b's parameter count.  NULL gives 0.
 * Cannot fail. */
int64_t yg_ddp_bucket_count(const yg_ddp *ddp);
int64_t yg_ddp_bucket_size(const yg_ddp *ddp, int64_t bucket);

/* Removes the hooks, waits for collectives in flight and drops the
 * references.  NULL-safe. */
void yg_ddp_release(yg_ddp *ddp);

/* ---- distributed sampler ----
 * The indices of a dataset of n items that rank `rank` of world_size
 * visits in epoch `epoch`: a permutation of 0..n-1 shuffled from (seed,
 * epoch) (the same on every rank; or 0..n-1 in order when shuffle is
 * false), padded by wrapping around to a multiple of world_size, of which
 * the rank takes every world_size-th item from position rank.  Every rank
 * gets ceil(n / world_size) indices; together they cover every item.
 *   out:     borrowed, room for out_len indices
 *   out_len: must be ceil(n / world_size) (yg_distributed_sampler_len)
 * Returns: YG_ERR_INVALID_ARGUMENT for n < 1, world_size < 1, rank out of
 *          range, NULL out or a wrong out_len.  Needs no MPI. */
YG_NODISCARD yg_status yg_distributed_sampler_indices(int64_t n,
                                                      int world_size,
                                                      int rank,
                                                      uint64_t seed,
                                                      int64_t epoch,
                                                      bool shuffle,
                                                      int64_t *out,
                                                      int64_t out_len);

/* ceil(n / world_size); 0 when n < 1 or world_size < 1.  Cannot fail. */
int64_t yg_distributed_sampler_len(int64_t n, int world_size);

#ifdef __cplusplus
}
#endif
#endif /* YAGRAD_DISTRIBUTED_H */
