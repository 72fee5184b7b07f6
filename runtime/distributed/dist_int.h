/*
 * dist_int.h - what the files of runtime/distributed share.  Not API.
 *
 * The checks of a collective's arguments (dist_check.c) are common to the
 * MPI build and the stub, so a build without MPI gives the same messages
 * for bad arguments and the tests of those need no MPI.
 */
#ifndef YAGRAD_DISTRIBUTED_DIST_INT_H
#define YAGRAD_DISTRIBUTED_DIST_INT_H

#include "core/core.h"
#include "yagrad/distributed.h"

/* "sum", "avg", "max"; "unknown" otherwise. */
const char *yg__reduce_op_name(yg_reduce_op op);

/* Checks t for a collective named op: defined, CPU.  arg names t. */
yg_status yg__dist_check_tensor(const char *op, const char *arg, const yg_tensor *t);

/* Checks a reduction op for dtype (avg needs a floating dtype). */
yg_status yg__dist_check_reduce(const char *op, yg_reduce_op rop, yg_dtype dtype);

/* Whether a group is broken (internal, for ddp.c to fail early). */
bool yg__process_group_broken(const yg_process_group *pg);

#endif /* YAGRAD_DISTRIBUTED_DIST_INT_H */
