/*
 * interpreter.h - what yg_graph_run (interpreter.c) reports about its last
 * run on the calling thread, for tests that check values are freed at
 * their last use.  Not public API.
 */
#ifndef YAGRAD_JIT_INTERPRETER_H
#define YAGRAD_JIT_INTERPRETER_H

#include <stdint.h>

typedef struct yg_interp_stats {
    int64_t nodes_run;      /* nodes that ran to completion */
    int64_t peak_live;      /* most values holding a tensor at once */
    int64_t released_early; /* values released before the run ended */
} yg_interp_stats;

/* The statistics of this thread's last yg_graph_run (zeros before any).
 * Cannot fail. */
void yg__interp_last_stats(yg_interp_stats *out);

#endif /* YAGRAD_JIT_INTERPRETER_H */
