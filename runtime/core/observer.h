/*
 * observer.h - the op-call observer slot: how a layer above the ops (the
 * tracer, jit/frontend/tracer.c) watches the op calls of a thread without the ops,
 * autograd or the composites knowing it.  Not public API; the generated
 * api/<section>.c files, the autograd engine and the composites call the
 * yg__obs_* functions below, and the observer is whatever the thread
 * installed (at most one; none when nothing watches).
 *
 * Every generated yg_<op> starts with
 *     if (yg__obs_recording(<composite>))
 *         return <op>_traced(args..., out);
 * where <op>_traced (generated, one per op) pauses observing, calls yg_<op>
 * again (which now runs unobserved: ops it calls inside, kernels, autograd
 * bookkeeping, are not seen), resumes, and on success reports one call:
 *     yg__obs_begin_node("<op name>");
 *     yg__obs_input(self); ...              one per tensor, in schema order
 *     yg__obs_attr_int("dim", dim); ...     one per non-tensor argument
 *     yg__obs_output(out, NULL); ...        one per result, with the
 *                                           argument it writes (Tensor(a!))
 *     return yg__obs_end_node();
 * The begin/input/attr/output calls cannot fail: the first problem is kept
 * by the observer and end_node reports it (the idiom of a stdio stream's
 * error flag), so each generated helper reads as a list of what it
 * reports.  An argument type the observer cannot be told about makes the
 * helper call yg__obs_refuse before running anything.
 *
 * State is thread-local: the observer of this thread and a pause depth.
 * Calls are reported only at depth 0, which is exactly "the outermost op
 * call".  A composite op counts as a level unless the observer was
 * installed with through_composites, in which case it is not reported and
 * its parts, running at depth 0, are.  The autograd engine pauses around
 * backward, so gradient formulas run inside an observed function are not
 * reported.
 */
#ifndef YAGRAD_CORE_OBSERVER_H
#define YAGRAD_CORE_OBSERVER_H

#include "yagrad/random.h"
#include "yagrad/status.h"
#include "yagrad/tensor.h"

#include <stdbool.h>
#include <stdint.h>

/* What an observer implements; ctx is the pointer given at install.  The
 * functions mirror yg__obs_* below (whose comments say what each gets)
 * and are called only while the observer is installed on the calling
 * thread.  fail marks the observation failed with st, its message set. */
typedef struct yg_op_observer {
    void (*begin_node)(void *ctx, const char *kind);
    void (*input)(void *ctx, const yg_tensor *t);
    void (*attr_int)(void *ctx, const char *name, int64_t v);
    void (*attr_ints)(void *ctx, const char *name, const int64_t *v, int64_t len);
    void (*attr_bools)(void *ctx, const char *name, const bool *v, int64_t len);
    void (*attr_float)(void *ctx, const char *name, double v);
    void (*attr_str)(void *ctx, const char *name, const char *v);
    void (*output)(void *ctx, yg_tensor **slot, const yg_tensor *writes);
    void (*output_list)(void *ctx, yg_tensor ***items, int64_t *len);
    void (*generator)(void *ctx, const char *name, const yg_generator *generator);
    yg_status (*end_node)(void *ctx);
    void (*alias)(void *ctx, const yg_tensor *alias, const yg_tensor *of);
    void (*fail)(void *ctx, yg_status st);
} yg_op_observer;

/* Installs obs (borrowed, with ctx, until yg__obs_uninstall) as this
 * thread's observer, with the pause depth at 0 (the caller's depth is
 * kept and given back at uninstall).  YG_ERR_INVALID_ARGUMENT, message
 * "<who>: already tracing on this thread (yg_trace cannot nest)", when
 * one is installed already (and that one is told it failed): the tracer
 * is the only observer. */
yg_status yg__obs_install(const char *who,
                          const yg_op_observer *obs,
                          void *ctx,
                          bool through_composites);

/* Removes this thread's observer and restores the pause depth it found.
 * Cannot fail. */
void yg__obs_uninstall(void);

/* Whether an op call starting now on this thread is to be reported: an
 * observer is installed, observing is not paused, and the op is not a
 * composite being observed through.  One thread-local read when nothing
 * observes.  Cannot fail. */
bool yg__obs_recording(bool composite);

/* Pause and resume observing on this thread (nest; each pause needs one
 * resume).  No-ops in effect when nothing observes.  Cannot fail. */
void yg__obs_pause(void);
void yg__obs_resume(void);

/* Starts the report of a call of op kind (its table name, "sum.dim").
 * Cannot fail; an unknown kind is reported by yg__obs_end_node. */
void yg__obs_begin_node(const char *kind);

/* Appends tensor argument t (NULL: an absent Tensor?) as the call's next
 * input.  Cannot fail (see yg__obs_end_node). */
void yg__obs_input(const yg_tensor *t);

/* Non-tensor arguments, named after the argument.  bool and bool[N] are
 * ints 0/1; Scalar and float are floats; ScalarType is the yg_dtype
 * value.  Cannot fail (see yg__obs_end_node). */
void yg__obs_attr_int(const char *name, int64_t v);
void yg__obs_attr_ints(const char *name, const int64_t *v, int64_t len);
void yg__obs_attr_bools(const char *name, const bool *v, int64_t len);
void yg__obs_attr_float(const char *name, double v);
void yg__obs_attr_str(const char *name, const char *v); /* v NULL: left out */

/* Appends the result in *slot (the op's out-parameter, holding a new
 * reference or NULL for an undefined result) as the call's next output.
 * writes: the argument the result aliases mutably (self of an in-place
 * op, an out= argument), or NULL.  Cannot fail (see yg__obs_end_node). */
void yg__obs_output(yg_tensor **slot, const yg_tensor *writes);

/* The same for an op returning a list (`-> Tensor[]`): each of the *len
 * results in *items is the next output.  On failure yg__obs_end_node
 * releases them and the array, and sets *items NULL and *len 0.  Cannot
 * fail (see yg__obs_end_node). */
void yg__obs_output_list(yg_tensor ***items, int64_t *len);

/* A Generator? argument (NULL: the default generator).  Cannot fail (see
 * yg__obs_end_node). */
void yg__obs_generator(const char *name, const yg_generator *generator);

/* Ends the report.  On any problem met since yg__obs_begin_node the
 * observer releases every result given to yg__obs_output, sets its
 * out-parameter NULL, and the status is returned with the message set.
 * YG_ERR_INTERNAL "trace: end_node without begin_node" when nothing
 * observes. */
yg_status yg__obs_end_node(void);

/* Reports that alias, a tensor just made by a non-op (yg_detach) from of,
 * holds of's values.  No-op unless a call starting now would be reported.
 * Cannot fail (a failure fails the observation). */
void yg__obs_alias(const yg_tensor *alias, const yg_tensor *of);

/* Refuses to report an argument: fails with YG_ERR_NOT_IMPLEMENTED and
 * "trace: <op>: argument '<arg>' of type <type> cannot be recorded",
 * telling the observer it failed.  Always returns that status. */
yg_status yg__obs_refuse(const char *op, const char *arg, const char *type);

#endif /* YAGRAD_CORE_OBSERVER_H */
