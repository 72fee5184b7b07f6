/*
 * meta/pointwise.h - what the pointwise iterator (cpu/pointwise.c) and
 * the backends that run its loops share: an op's descriptor (its inputs
 * and its loops per device), the merged walk of the operands, and the
 * table a device backend other than the CPU registers to run loops
 * (core/backend.h's pointwise).  Not public API.
 */
#ifndef YAGRAD_META_POINTWISE_H
#define YAGRAD_META_POINTWISE_H

#include "yagrad/cpu.h"
#include "yagrad/status.h"
#include "yagrad/tensor.h"

#include <stdatomic.h>
#include <stdint.h>

/* The output plus at most four inputs. */
#define YG_POINTWISE_MAX_OPERANDS 5

struct yg_loop_table;
struct yg_cuda_loop_table;

typedef struct yg_pointwise_desc {
    const char *op;                 /* "mul", for messages */
    int n_inputs;                   /* tensor inputs, <= 4 */
    const char *const *input_names; /* {"self", "other"} */
    /* One table per CPU capability (yagrad/cpu.h); the iterator uses the
     * chosen level's.  Generated kernels have one per level (the same
     * source compiled for each, cpu/vec/vec.h); a handwritten descriptor
     * may give only [YG_CPU_BASELINE], which then serves every level.
     * All tables of one descriptor support the same dtypes. */
    const struct yg_loop_table *loops[YG_CPU_CAPABILITY_COUNT_];
    /* The CUDA launchers (cuda/launch.h; generated/cuda/<section>.cu):
     * YG_CUDA_LOOPS(op), or NULL for a descriptor without CUDA loops,
     * whose op then refuses CUDA tensors.  Only the CUDA backend reads
     * it. */
    struct yg_cuda_loops_ref *cuda;
    int n_scalars;                        /* operand Scalars checked on integer dtypes */
    const char *const *scalar_names;      /* {"alpha"}; NULL when n_scalars is 0 */
    /* (1 << YG_FLOAT16) | (1 << YG_BFLOAT16), or one of them, for an op
     * that claims them ('dtypes:'): on the CPU such inputs are converted
     * to float32, the float32 loop runs and the result is rounded once to
     * the 16-bit dtype (nearest even).  0: the iterator refuses them. */
    uint32_t half_dtypes;
} yg_pointwise_desc;

/* A descriptor's CUDA launchers: the name of their table in the CUDA
 * module (yg__cuda_loops_<op>, generated/cuda/<section>.cu), which the
 * module looks up on the first CUDA call and keeps.  libyagrad links no
 * CUDA code, so it names the table instead of pointing to it. */
typedef struct yg_cuda_loops_ref {
    const char *name;
    _Atomic(const struct yg_cuda_loop_table *) table;
} yg_cuda_loops_ref;
#define YG_CUDA_LOOPS_DECLARE(op)                                                                  \
    static yg_cuda_loops_ref yg__cuda_ref_##op = {"yg__cuda_loops_" #op, NULL}
#define YG_CUDA_LOOPS(op) (&yg__cuda_ref_##op)

/* The walk over the output after broadcasting and merging: dim 0 is the
 * innermost (the loop's row), sizes[d] > 1 for every d > 0. */
typedef struct yg_walk {
    int nops;
    int ndim;
    int64_t sizes[YG_MAX_DIMS];
    int64_t strides[YG_MAX_DIMS][YG_POINTWISE_MAX_OPERANDS]; /* bytes, [dim][operand] */
    char *base[YG_POINTWISE_MAX_OPERANDS];
} yg_walk;

/* Fills w from the operands (ops[0] is the output, whose shape every
 * input broadcasts to; nops <= YG_POINTWISE_MAX_OPERANDS).  Dims are
 * reversed so that dim 0 is the innermost, size-1 dims are dropped, the
 * rest ordered by the output's strides and mergeable neighbours merged.
 * Cannot fail. */
void yg__walk_init(yg_walk *w, yg_tensor *const *ops, int nops);

/* How a device backend other than the CPU runs pointwise loops: the
 * iterator does everything around the loop (checks, broadcasting,
 * promotion, the output) and asks the inputs' backend for the two steps
 * that are its own. */
typedef struct yg_pointwise_backend {
    /* *loop = desc's loop for the compute dtype (NULL when it has none)
     * and *dtypes = the bit mask (1 << dtype) of the dtypes it has.
     * YG_ERR_DEVICE "<op>: no kernel for device cuda" when desc has no
     * loops for the device at all. */
    yg_status (*find)(const yg_pointwise_desc *desc,
                      yg_dtype dtype,
                      const void **loop,
                      uint32_t *dtypes);
    /* Runs loop (from find) over every element of ops[0], non-empty: the
     * output, then nops - 1 inputs of its shape or broadcast to it, each
     * of the loop's element type, all on the backend's device. */
    yg_status (*run)(const yg_pointwise_desc *desc,
                     yg_tensor *const *ops,
                     int nops,
                     const void *loop,
                     const double *scalars);
} yg_pointwise_backend;

#endif /* YAGRAD_META_POINTWISE_H */
