/*
 * interpreter.h - what yg_graph_run (interpreter.c) reports about its last
 * run on the calling thread, for tests that check values are freed at
 * their last use.  Not public API.
 */
#ifndef YAGRAD_JIT_INTERPRETER_H
#define YAGRAD_JIT_INTERPRETER_H

#include <stdint.h>

#include "jit/ir/ir.h"

typedef struct yg_interp_stats {
    int64_t nodes_run;      /* nodes that ran to completion */
    int64_t peak_live;      /* most values holding a tensor at once */
    int64_t released_early; /* values released before the run ended */
} yg_interp_stats;

/* The statistics of this thread's last yg_graph_run (zeros before any).
 * Cannot fail. */
void yg__interp_last_stats(yg_interp_stats *out);

/* A graph compiled for running: per node its boxed function and the
 * frame slots it reads, writes and releases.  Valid while the graph's
 * nodes and their inputs do not change (types and names may).  A frozen
 * graph (yg__graph_freeze) keeps one, made on its first run. */
typedef struct yg_interp_plan yg_interp_plan;

yg_status yg__interp_plan_create(const yg_graph *g, yg_interp_plan **out);
void yg__interp_plan_free(yg_interp_plan *p);

/* Checks tensor t (NULL for None) given as graph input i, value v:
 * defined where the type is Tensor, its dtype and device where known, and
 * its sizes (sizes true) or only its rank.  Messages start with who
 * ("interpreter: input 0 %x: expected dtype float32, got float64"). */
yg_status yg__graph_check_input(
    const char *who, const yg_ir_value *v, int64_t i, const yg_tensor *t, bool sizes);

/* yg_graph_run with a plan of g made by yg__interp_plan_create. */
yg_status yg__graph_run_planned(const yg_graph *g,
                                const yg_interp_plan *p,
                                yg_tensor *const *inputs,
                                int64_t n_inputs,
                                yg_tensor **outputs,
                                int64_t n_outputs);

#endif /* YAGRAD_JIT_INTERPRETER_H */
