/*
 * process_group_nccl_stub.c - the NCCL backend of an MPI build without
 * NCCL (CMake YG_WITH_NCCL=OFF, or no CUDA backend or no nccl.h/libnccl
 * found): creating an NCCL group fails with YG_ERR_NOT_IMPLEMENTED
 * saying so, before MPI is touched.  Since no NCCL group can exist, the
 * other entry points are never reached; they answer YG_ERR_INTERNAL.
 */
#include "distributed/dist_int.h"

bool yg_distributed_nccl_is_available(void) {
    return false;
}

yg_status yg__nccl_check_available(const char *op) {
    return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                    "%s: yagrad was built without NCCL (it needs the CUDA backend and the CUDA "
                    "toolkit's nccl.h and libnccl; configure with -DYG_WITH_NCCL=ON)",
                    op);
}

static yg_status unreachable(const char *op) {
    return yg__fail(YG_ERR_INTERNAL, "%s: an NCCL group in a build without NCCL", op);
}

yg_status yg__nccl_group_create(yg_process_group *mpi_pg,
                                const yg_process_group_options *options,
                                yg__nccl_group **out) {
    (void)mpi_pg, (void)options;
    *out = NULL;
    return yg__nccl_check_available("process_group_create");
}

void yg__nccl_group_release(yg__nccl_group *g) {
    (void)g;
}

int yg__nccl_group_device(const yg__nccl_group *g) {
    (void)g;
    return -1;
}

bool yg__nccl_group_broken(const yg__nccl_group *g) {
    (void)g;
    return true;
}

yg_status
yg__nccl_all_reduce(yg__nccl_group *g, yg_tensor *t, yg_reduce_op op, yg__nccl_work **out) {
    (void)g, (void)t, (void)op;
    *out = NULL;
    return unreachable("all_reduce");
}

yg_status yg__nccl_broadcast(yg__nccl_group *g, yg_tensor *t, int root, yg__nccl_work **out) {
    (void)g, (void)t, (void)root;
    *out = NULL;
    return unreachable("broadcast");
}

yg_status yg__nccl_all_gather(yg__nccl_group *g,
                              const yg_tensor *input,
                              yg_tensor *output,
                              yg__nccl_work **out) {
    (void)g, (void)input, (void)output;
    *out = NULL;
    return unreachable("all_gather");
}

yg_status yg__nccl_reduce_scatter(yg__nccl_group *g,
                                  const yg_tensor *input,
                                  yg_tensor *output,
                                  yg_reduce_op op,
                                  yg__nccl_work **out) {
    (void)g, (void)input, (void)output, (void)op;
    *out = NULL;
    return unreachable("reduce_scatter");
}

yg_status yg__nccl_barrier(yg__nccl_group *g, yg__nccl_work **out) {
    (void)g;
    *out = NULL;
    return unreachable("barrier");
}

yg_status yg__nccl_work_wait(yg__nccl_work *w) {
    (void)w;
    return unreachable("work_wait");
}

yg_status yg__nccl_work_test(yg__nccl_work *w, bool *done) {
    (void)w;
    *done = false;
    return unreachable("work_test");
}

void yg__nccl_work_release(yg__nccl_work *w) {
    (void)w;
}
