/*
 * cpu_int.h - helpers shared by the CPU kernels in runtime/cpu/ only (the
 * kernels themselves are declared in cpu.h).
 */
#ifndef YAGRAD_CPU_INT_H
#define YAGRAD_CPU_INT_H

#include "cpu/cpu.h"
#include "meta/creation.h"
#include "meta/rows.h"

/* Fails with YG_ERR_DEVICE unless t is on the CPU, and YG_ERR_DTYPE
 * ("<op>: unsupported dtype int64 for <arg> (supported: float32,
 * float64)") unless it is float32 or float64. */
yg_status yg__cpu_check_floating(const char *op, const char *arg, const yg_tensor *t);

/* Writes v to element i of the contiguous tensor t, converted to t's
 * dtype (any dtype, by the rules of core/convert.c). */
void yg__store_f64(yg_tensor *t, int64_t i, double v);

/* ---- creation and random ops (creation.c, random.c) ---- */


/* Copies src converted to dtype into rows of dst (copy.c): src seen as
 * [outer, rest] with outer the product of its sizes before dim, row o of
 * it written contiguously at dst + o * dst_row_bytes.  Nothing for an
 * empty src.  cat writes each piece into its slot of the result so. */
void yg__cpu_copy_rows(char *dst,
                       int64_t dst_row_bytes,
                       const yg_tensor *src, /* borrowed, CPU */
                       int32_t dim,
                       yg_dtype dtype);


/* Fails with YG_ERR_INVALID_ARGUMENT "<op>: <name> <v> is out of range
 * for int64" when dtype is int64 and v has no int64 value. */
yg_status yg__creation_check_value(const char *op, const char *name, double v, yg_dtype dtype);

#endif /* YAGRAD_CPU_INT_H */
