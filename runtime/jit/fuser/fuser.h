/*
 * fuser.h - the pointwise fuser: what its files share (fuse.c: the pass
 * making prim::FusionGroup nodes; codegen.c: a group's C kernel; compile.c:
 * the system compiler, the disk and memory caches, dlopen; run.c: running a
 * group on the CPU or a GPU; cuda.c: the CUDA form to PTX with NVRTC;
 * cuda_run.c: loading and launching it with the driver API) and the
 * generated table they read.  Not public API; yagrad/jit.h
 * has yg_graph_fuse and the fuser's counters.
 *
 * A fusion group is a prim::FusionGroup node whose `subgraph` holds a run
 * of pointwise ops (ops with a `pointwise:` expression) over one floating
 * dtype, and possibly `cat` nodes as exits: a cat of values of the group,
 * all of one shape, whose result nothing in the group reads.  Its kernel evaluates the
 * subgraph per element: every value has the broadcast shape of the
 * group's inputs, each input is read through its own strides (0 where it
 * is broadcast); a cat exit's pieces are written straight into their
 * slices of the cat's result, which is allocated once.  A group may also
 * end in a reduction anchor (softmax, log_softmax, sum or an affine
 * layer_norm over the last dim of a value of the group): its kernel then walks rows, evaluates the
 * group for a row and reduces it while the row is in cache.  The kernel's
 * outputs are the subgraph's outputs with each cat replaced by its pieces
 * (yg__fuser_kernel_outputs).
 */
#ifndef YAGRAD_JIT_FUSER_H
#define YAGRAD_JIT_FUSER_H

#include "jit/ir/ir.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* generated/fuser/table.c: parallel to yg__ops[]; expr[0] NULL for ops
 * that are not fused. */
typedef struct yg_fuse_op {
    /* The pointwise expression, [0] for float64, [1] for float32; for a
     * top-level select whose arms call functions, expr is the condition
     * and then_/else_ the arms (evaluated both, as the eager loops do, so
     * the compiler vectorises the calls). */
    const char *expr[2];
    const char *then_[2];
    const char *else_[2];
    int32_t n_inputs;
    const char *const *input_names;
    int32_t n_scalars;
    const char *const *scalar_names;
    const double *scalar_defaults; /* NAN: the argument has no default */
} yg_fuse_op;

extern const yg_fuse_op yg__fuse_ops[];
extern const int32_t yg__fuse_ops_count;

/* The fuse entry of an op node, NULL when the op is not fusible. */
const yg_fuse_op *yg__fuse_op_of(const yg_ir_node *n);

/* The most inputs and outputs a group has (deps below is a bit per
 * input: at most 32). */
#define YG_FUSE_MAX_INPUTS  32
#define YG_FUSE_MAX_OUTPUTS 16

/* A compiled kernel:
 *   n:       output elements;  ndim, sizes: the (compressed) output shape,
 *            ndim >= 1, the last dim innermost
 *   ptrs:    outputs, then inputs
 *   strides: per operand (same order), ndim element strides */
typedef void (*yg_fused_fn)(int64_t n,
                            int ndim,
                            const int64_t *sizes,
                            char *const *ptrs,
                            const int64_t *strides);

/* A group's kernel, or why there is none. */
typedef struct yg_fused_kernel {
    yg_fused_fn fn;   /* NULL: fall back to the interpreter */
    char reason[512]; /* when fn is NULL */
    int32_t n_inputs, n_outputs;
    int32_t dtype; /* the group's dtype */
    /* Per output, a bit per input it depends on: an output must have the
     * broadcast shape of all inputs, checked per run. */
    uint32_t deps[YG_FUSE_MAX_OUTPUTS];
} yg_fused_kernel;

/* Whether n is a cat exit of a fusion group (a `cat` node). */
bool yg__fuser_is_cat(const yg_ir_node *n);

/* Reduction anchors: a group may end in a reduction over the last dim of
 * a value of the group, computed row by row in the same kernel. */
typedef enum yg_fuse_anchor {
    YG_ANCHOR_NONE = 0,
    YG_ANCHOR_SOFTMAX,     /* softmax(x, dim = last) */
    YG_ANCHOR_LOG_SOFTMAX, /* log_softmax(x, dim = last) */
    YG_ANCHOR_SUM,         /* sum.dim(x, [last], keepdim) */
    YG_ANCHOR_LAYER_NORM,  /* layer_norm(x, [last], weight, bias, eps), affine */
} yg_fuse_anchor;

/* What anchor n is (its input's rank must be known), NONE for any other
 * node.  A layer_norm's sizes may be unknown (an executor's plan keeps
 * ranks only); yg__fusion_group_run checks them. */
yg_fuse_anchor yg__fuser_anchor(const yg_ir_node *n);

/* The one size of layer_norm node n's normalized_shape, -1 when it has
 * not exactly one positive entry. */
int64_t yg__fuser_layer_norm_size(const yg_ir_node *n);

/* The values the kernel of sub writes, in order: each output of sub, a
 * cat exit's output replaced by its pieces.  Returns their number (at
 * most cap; -1 when more). */
int32_t yg__fuser_kernel_outputs(const yg_graph *sub, const yg_ir_value **out, int32_t cap);

/* codegen.c: the C source of the kernel of subgraph sub (dtype: its
 * inputs' dtype) for an input stride pattern (one char per input: 'c'
 * unit inner stride, 'b' broadcast along the inner dim, 's' other), or
 * YG_ERR_NOT_IMPLEMENTED with the reason.  *source: caller frees.
 * Writes the scratch of sub's values. */
yg_status yg__fuser_codegen_pattern(const yg_graph *sub, const char *pattern, char **source);

/* codegen.c: the CUDA C++ source of sub's kernel (for NVRTC), or
 * YG_ERR_NOT_IMPLEMENTED with the reason.  *source: caller frees.  It
 * defines yg_fused_kernel (64-bit indices) and yg_fused_kernel_i32, both
 * taking one struct yg_fused_args by value (n, ndim, sizes, strides per
 * operand, ptrs: outputs then inputs); an anchored group's kernels take a
 * block per row and a multiple of 32 threads per block. */
yg_status yg__fuser_codegen_cuda(const yg_graph *sub, char **source);

/* Whether yg_fused_kernel_i32 may run: n output elements plus the
 * launch's grid_threads (blocks x threads, the grid-stride loop's step)
 * and every operand's largest offset (strides: nops x ndim, elements,
 * non-negative) fit in int32.  Cannot fail. */
bool yg__fuser_cuda_index32_ok(int64_t n, int ndim, const int64_t *sizes,
                               const int64_t *strides, int nops, int64_t grid_threads);

/* compile.c: a kernel for source: from the memory cache, the disk cache,
 * or the compiler.  Never fails for a compiler problem: *fn NULL and the
 * reason in reason (size reason_len). */
yg_status yg__fuser_compile(const char *source, yg_fused_fn *fn, char *reason, size_t reason_len);

/* compile.c: the disk cache's folder (created if missing) into buf; false
 * when it cannot be created. */
bool yg__fuser_cache_dir(char *buf, size_t len);

/* cuda.c: the PTX of CUDA source for virtual architecture arch
 * ("compute_90"): from the memory cache, the disk cache (a .ptx file per
 * source, arch and NVRTC version, next to the CPU kernels) or NVRTC.
 * *ptx: borrowed, valid for the process.  Returns YG_ERR_NOT_IMPLEMENTED
 * when NVRTC is not there (built without it, or it cannot be loaded),
 * YG_ERR_INVALID_ARGUMENT with NVRTC's log when it fails,
 * YG_ERR_OUT_OF_MEMORY. */
yg_status yg__fuser_cuda_ptx_of(const char *source, const char *arch, const char **ptx);

/* cuda.c: "compute_XY" for a device of compute capability major.minor:
 * the newest architecture NVRTC supports that is not newer than the
 * device (the driver compiles its PTX for the device).  Errors as
 * yg__fuser_cuda_ptx_of, YG_ERR_DEVICE when NVRTC supports none. */
yg_status yg__fuser_cuda_arch(int major, int minor, char *arch, size_t len);

/* cuda_run.c: a CUDA kernel loaded on a device: both index widths of
 * codegen's yg_fused_kernel, in the device's primary context (the one
 * the CUDA runtime, and so every device tensor, uses).  Loaded once per
 * source and device and kept for the process, as the CPU's dlopen'd
 * kernels are. */
typedef struct yg_fuser_cuda_kernel yg_fuser_cuda_kernel;

/* cuda_run.c: the kernel of CUDA source on device index (compiled for
 * its compute capability), loaded on first use.  NULL with the reason in
 * reason when there is none: no CUDA driver (libcuda.so.1 is loaded at
 * run time), no NVRTC, NVRTC or the driver refusing the code.  Cannot
 * fail otherwise. */
const yg_fuser_cuda_kernel *
yg__fuser_cuda_kernel_get(const char *source, int index, char *reason, size_t reason_len);

/* cuda_run.c: the bytes of codegen's struct yg_fused_args for a kernel
 * of nops operands (the kernel's one parameter).  Cannot fail. */
size_t yg__fuser_cuda_args_size(int nops);

/* cuda_run.c: launches k on device index (its stream: the legacy default
 * stream, which the eager CUDA kernels use too) over the compressed
 * geometry run.c passes the CPU kernel (n, ndim, sizes; strides: nops x
 * ndim elements; ptrs: outputs then inputs, device memory).  rows: an
 * anchored kernel (a block per row of sizes[ndim - 1] elements), else a
 * grid-stride loop over the elements.  Picks yg_fused_kernel_i32 when
 * yg__fuser_cuda_index32_ok allows.  Asynchronous.  Errors:
 * YG_ERR_DEVICE "prim::FusionGroup: launching a fused kernel on cuda:I:
 * <the driver's reason>". */
yg_status yg__fuser_cuda_launch(const yg_fuser_cuda_kernel *k,
                                int index,
                                bool rows,
                                int64_t n,
                                int ndim,
                                const int64_t *sizes,
                                const int64_t *strides,
                                char *const *ptrs,
                                int nops);

/* run.c: runs a prim::FusionGroup node (interpreter.c calls it). */
yg_status yg__fusion_group_run(const yg_ir_node *n, yg_tensor *const *in, yg_tensor **out);

/* Counters (compile.c, run.c). */
void yg__fuser_count_compiled(void);
void yg__fuser_count_disk_hit(void);
void yg__fuser_count_memory_hit(void);
void yg__fuser_count_fallback(const char *reason);
void yg__fuser_count_cuda_compiled(void);
void yg__fuser_count_cuda_disk_hit(void);
void yg__fuser_count_cuda_memory_hit(void);
void yg__fuser_count_cuda_launch(void);

#endif /* YAGRAD_JIT_FUSER_H */
