/*
 * tracer.h - the hook the generated op wrappers call to record a trace
 * (yg_trace in yagrad/jit.h).  Not public API; the generated api/<section>.c
 * files and the autograd engine include it.
 *
 * Every generated yg_<op> starts with
 *     if (yg__trace_recording(<composite>))
 *         return <op>_traced(args..., out);
 * where <op>_traced (generated, one per op) pauses tracing, calls yg_<op>
 * again (which now runs untraced: ops it calls inside, kernels, autograd
 * bookkeeping, are not recorded), resumes, and on success records one
 * node:
 *     yg__trace_begin_node("<op name>");
 *     yg__trace_input(self); ...              one per tensor, in schema order
 *     yg__trace_attr_int("dim", dim); ...     one per non-tensor argument
 *     yg__trace_output(out, NULL); ...        one per result, with the
 *                                             argument it writes (Tensor(a!))
 *     return yg__trace_end_node();
 * The begin/input/attr/output calls cannot fail: the first problem is kept
 * in the node being built and end_node reports it (the idiom of a stdio
 * stream's error flag), so each generated helper reads as a list of what
 * it records.  An argument type the tracer cannot record makes the helper
 * call yg__trace_refuse before running anything.
 *
 * State is thread-local: the tracer of this thread (NULL when it is not
 * tracing) and a pause depth.  Recording happens only at depth 0, which
 * is exactly "the outermost op call".  A composite op counts as a level
 * unless the trace was started with trace_through_composites, in which
 * case it is not recorded and its parts, running at depth 0, are.
 */
#ifndef YAGRAD_JIT_TRACER_H
#define YAGRAD_JIT_TRACER_H

#include "core/core.h"
#include "yagrad/random.h"

#include <stdbool.h>
#include <stdint.h>

/* Whether an op call starting now on this thread is to be recorded: the
 * thread is tracing, tracing is not paused, and the op is not a composite
 * being traced through.  One thread-local read when not tracing.  Cannot
 * fail. */
bool yg__trace_recording(bool composite);

/* Pause and resume recording on this thread (nest; each pause needs one
 * resume).  The op helpers pause around the call they record; the
 * autograd engine pauses around backward, so gradient formulas run inside
 * a traced function are not recorded.  No-ops when not tracing.  Cannot
 * fail. */
void yg__trace_pause(void);
void yg__trace_resume(void);

/* Starts the node of op kind (its table name, "sum.dim").  Cannot fail;
 * an unknown kind is reported by yg__trace_end_node. */
void yg__trace_begin_node(const char *kind);

/* Appends tensor argument t (NULL: an absent Tensor?, recorded as the
 * output of prim::None) as the next input of the node.  A tensor that no
 * recorded op produced becomes a graph input marked as a parameter (it
 * existed before the trace began) or a prim::Constant (created during the
 * trace by something other than an op); docs/ir.md gives the rule.
 * Cannot fail (see yg__trace_end_node). */
void yg__trace_input(const yg_tensor *t);

/* Non-tensor arguments, as attributes named after the argument.  bool
 * and bool[N] are ints 0/1; Scalar and float are floats; ScalarType is
 * the yg_dtype value.  Cannot fail (see yg__trace_end_node). */
void yg__trace_attr_int(const char *name, int64_t v);
void yg__trace_attr_ints(const char *name, const int64_t *v, int64_t len);
void yg__trace_attr_bools(const char *name, const bool *v, int64_t len);
void yg__trace_attr_float(const char *name, double v);
void yg__trace_attr_str(const char *name, const char *v); /* v NULL: left out */

/* Appends the result in *slot (the op's out-parameter, holding a new
 * reference or NULL for an undefined result) as the next output of the
 * node.  writes: the argument the result aliases mutably (self of an
 * in-place op, an out= argument), or NULL; later reads of writes (and of
 * the result) see the new value.  Cannot fail (see yg__trace_end_node). */
void yg__trace_output(yg_tensor **slot, const yg_tensor *writes);

/* The same for an op returning a list (`-> Tensor[]`): records each of
 * the *len results in *items as the next outputs.  On failure
 * yg__trace_end_node releases them and the array, and sets *items NULL
 * and *len 0.  Cannot fail (see yg__trace_end_node). */
void yg__trace_output_list(yg_tensor ***items, int64_t *len);
/* A Generator? argument: NULL (the default generator, which the graph's
 * node draws from when it runs) records nothing; a caller's generator
 * cannot be recorded, so the node fails with "trace: <op>: argument
 * '<name>' of type Generator? cannot be recorded (only NULL, the default
 * generator, can)".  Cannot fail (see yg__trace_end_node). */
void yg__trace_generator(const char *name, const yg_generator *generator);
/* Links the node into the graph and maps its outputs.  On any problem
 * met since yg__trace_begin_node (out of memory, an unknown kind, a
 * constant not on the CPU), nothing is linked, every result given to
 * yg__trace_output is released and its out-parameter set to NULL, the
 * trace is marked failed (yg_trace reports it even if the traced function
 * ignores the status), and the status is returned with the message set. */
yg_status yg__trace_end_node(void);

/* Records that alias, a tensor just made by a non-op (yg_detach) from of,
 * holds of's values: the trace reads of's value for it instead of taking
 * it for a constant made inside the traced function.  The graph has no
 * node for it, so it does not stop gradients there.  No-op unless this
 * call is to be recorded.  Cannot fail (a failure fails the trace). */
void yg__trace_alias(const yg_tensor *alias, const yg_tensor *of);

/* Refuses to record an argument: fails with YG_ERR_NOT_IMPLEMENTED and
 * "trace: <op>: argument '<arg>' of type <type> cannot be recorded",
 * marking the trace failed.  Always returns that status. */
yg_status yg__trace_refuse(const char *op, const char *arg, const char *type);

#endif /* YAGRAD_JIT_TRACER_H */
