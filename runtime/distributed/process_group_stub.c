/*
 * process_group_stub.c - yg_process_group when yagrad is built without
 * MPI (CMake YG_WITH_MPI=OFF, or FindMPI found none): creation fails with
 * YG_ERR_NOT_IMPLEMENTED saying so, and since no group can exist every
 * collective fails on its NULL group after the same argument checks.
 * An NCCL group needs MPI too: asking for one says "built without NCCL".
 */
#include "distributed/dist_int.h"

bool yg_distributed_is_available(void) {
    return false;
}

bool yg_distributed_nccl_is_available(void) {
    return false;
}

yg_status yg_process_group_create(const yg_process_group_options *options, yg_process_group **out) {
    if (out != NULL)
        *out = NULL;
    if (options != NULL && options->backend == YG_DIST_NCCL)
        return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                        "process_group_create: yagrad was built without NCCL (NCCL groups are "
                        "bootstrapped over MPI, and this build has no MPI)");
    return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                    "process_group_create: yagrad was built without MPI (install libopenmpi-dev "
                    "and configure with -DYG_WITH_MPI=ON)");
}

int yg_process_group_rank(const yg_process_group *pg) {
    (void)pg;
    return 0;
}

int yg_process_group_world_size(const yg_process_group *pg) {
    (void)pg;
    return 0;
}

yg_dist_backend yg_process_group_backend(const yg_process_group *pg) {
    (void)pg;
    return YG_DIST_MPI;
}

int yg_process_group_cuda_device(const yg_process_group *pg) {
    (void)pg;
    return -1;
}

void yg_process_group_release(yg_process_group *pg) {
    (void)pg;
}

bool yg__process_group_broken(const yg_process_group *pg) {
    (void)pg;
    return true;
}

static yg_status no_group(const char *op) {
    return yg__fail(
        YG_ERR_INVALID_ARGUMENT, "%s: process group is NULL (yagrad was built without MPI)", op);
}

yg_status
yg_process_group_all_reduce(yg_process_group *pg, yg_tensor *t, yg_reduce_op op, yg_work **work) {
    (void)pg, (void)t, (void)op;
    if (work != NULL)
        *work = NULL;
    return no_group("all_reduce");
}

yg_status yg_process_group_broadcast(yg_process_group *pg, yg_tensor *t, int root, yg_work **work) {
    (void)pg, (void)t, (void)root;
    if (work != NULL)
        *work = NULL;
    return no_group("broadcast");
}

yg_status yg_process_group_all_gather(yg_process_group *pg,
                                      const yg_tensor *input,
                                      yg_tensor *output,
                                      yg_work **work) {
    (void)pg, (void)input, (void)output;
    if (work != NULL)
        *work = NULL;
    return no_group("all_gather");
}

yg_status
yg__process_group_host_all_gather(yg_process_group *pg, const yg_tensor *input, yg_tensor *output) {
    (void)pg, (void)input, (void)output;
    return no_group("all_gather");
}

yg_status yg_process_group_reduce_scatter(yg_process_group *pg,
                                          const yg_tensor *input,
                                          yg_tensor *output,
                                          yg_reduce_op op,
                                          yg_work **work) {
    (void)pg, (void)input, (void)output, (void)op;
    if (work != NULL)
        *work = NULL;
    return no_group("reduce_scatter");
}

yg_status yg_process_group_barrier(yg_process_group *pg, yg_work **work) {
    (void)pg;
    if (work != NULL)
        *work = NULL;
    return no_group("barrier");
}

yg_status yg_work_wait(yg_work *work) {
    (void)work;
    return yg__fail(YG_ERR_INVALID_ARGUMENT, "work_wait: work is NULL");
}

yg_status yg_work_test(yg_work *work, bool *done) {
    (void)work;
    if (done != NULL)
        *done = false;
    return yg__fail(YG_ERR_INVALID_ARGUMENT, "work_test: work is NULL");
}

void yg_work_release(yg_work *work) {
    (void)work;
}
