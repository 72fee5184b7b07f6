/*
 * yagrad/conv.h - which backend runs a convolution, and how to force one.
 *
 * Every convolution (conv1d/2d/3d, conv_transpose1d/2d/3d, convolution)
 * reaches one dispatcher, convolution_dispatch (runtime/conv/), which
 * validates its arguments once and hands the call to a backend:
 *
 *   native  im2col/col2im around OpenBLAS gemm, a direct kernel for
 *           depthwise convolutions, a plain gemm for 1x1; always built
 *   onednn  oneDNN primitives (float32 only; built when CMake finds
 *           oneDNN, Debian libdnnl-dev)
 *   cudnn   cuDNN (float32 and float64 CUDA tensors; built when CMake
 *           finds cuDNN next to the CUDA toolkit)
 *
 * Without a forced backend the dispatcher takes the best one built for
 * the call: cudnn for CUDA tensors (the only backend that takes them;
 * without cuDNN such a convolution fails with "backend cudnn: built
 * without cuDNN"), and for cpu tensors onednn for float32 when built,
 * native for float64, for an empty batch and for whatever else oneDNN
 * refuses
 * (docs/architecture.md, "Convolutions", has the table).  A backend is forced by
 * yg_conv_force_backend (this thread) or, when the thread forced none, by
 * the environment variable YG_CONV_BACKEND=native|onednn|cudnn (read at
 * every call).  A forced backend that is not built, or a YG_CONV_BACKEND
 * value that names no backend, makes the convolution fail with
 * YG_ERR_NOT_IMPLEMENTED or YG_ERR_INVALID_ARGUMENT and a message naming
 * it (`conv2d: convolution: convolution_dispatch: backend onednn: built
 * without oneDNN`): another backend is never used silently.  So does a
 * forced onednn on a case it refuses (`backend onednn: float64: oneDNN
 * has no float64 convolution`), and a forced backend that does not take
 * the operands' device (`backend native: needs cpu tensors, got input on
 * cuda:0`).  The backward of a convolution uses the backend its forward
 * would pick now.
 *
 * One fallback, never silent: when cudnn was chosen automatically (not
 * forced) and cannot run a case (cuDNN offers no algorithm for it within
 * the workspace limit, as may happen for float64 under cuDNN 9 or with
 * deterministic on, or a tensor has 2^31 elements or more), the pass
 * runs on native with host copies of the operands, the result is copied
 * back to the device, yg_conv_last_backend() says native and
 * yg_conv_last_note() says why.
 *
 * cuDNN has several algorithms per convolution.  By default the
 * dispatcher takes cuDNN's heuristic choice for the geometry; with
 * benchmark on it times them once per geometry (cudnnFind*) and keeps the
 * fastest; with deterministic on it takes only algorithms whose results
 * do not depend on the order of atomic additions.  Both hold for the
 * calls' forward and backward, and are set per thread here or per call
 * by convolution_dispatch's own benchmark and deterministic arguments
 * (either turns them on).  The cpu backends ignore them (they are
 * deterministic for a thread count and have nothing to time).
 *
 * Thread safety: the forced backend, the last choice and the benchmark
 * and deterministic flags are per thread; cuDNN's algorithm choices are
 * cached per process under a lock.
 * Anything not declared here is not API.
 */
#ifndef YAGRAD_CONV_H
#define YAGRAD_CONV_H

#include "yagrad/status.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Convolution backends.  Append only: the values are ABI. */
typedef enum yg_conv_backend {
    YG_CONV_BACKEND_NONE = 0, /* no choice: not forced / no convolution ran */
    YG_CONV_BACKEND_NATIVE = 1,
    YG_CONV_BACKEND_ONEDNN = 2,
    YG_CONV_BACKEND_CUDNN = 3,
    YG_CONV_BACKEND_COUNT_
} yg_conv_backend;

/* "none", "native", "onednn" or "cudnn"; "unknown" for a value that is no
 * backend.  Returns: a static string.  Cannot fail. */
const char *yg_conv_backend_name(yg_conv_backend backend);

/* Whether this build of yagrad has backend (native: always).  Cannot
 * fail; false for NONE and for values that are no backend. */
bool yg_conv_backend_available(yg_conv_backend backend);

/* Forces backend for the convolutions (forward and backward) this thread
 * runs from now on; YG_CONV_BACKEND_NONE returns to automatic choice (and
 * to YG_CONV_BACKEND).  Forcing a backend that is not built is accepted
 * here: the convolutions then fail naming it.
 *   backend: a yg_conv_backend
 * Returns: YG_OK, or YG_ERR_INVALID_ARGUMENT for a value that is no
 * backend (nothing changes). */
YG_NODISCARD yg_status yg_conv_force_backend(yg_conv_backend backend);

/* The backend this thread forced, YG_CONV_BACKEND_NONE if none.  Cannot
 * fail. */
yg_conv_backend yg_conv_forced_backend(void);

/* The backend that ran this thread's most recent convolution kernel
 * (forward or backward), YG_CONV_BACKEND_NONE before the first.  Cannot
 * fail. */
yg_conv_backend yg_conv_last_backend(void);

/* Why this thread's most recent convolution kernel ran on another
 * backend than the one chosen for it, or "" when it ran on that one (and
 * before the first): "backend cudnn: no forward algorithm for this
 * float64 convolution within a workspace of 1073741824 bytes; ran on
 * native with host copies".  Returns: text owned by yagrad, valid until
 * this thread's next convolution.  Cannot fail. */
const char *yg_conv_last_note(void);

/* Turns cuDNN algorithm benchmarking on or off for the convolutions this
 * thread runs from now on (off at thread start).  Cannot fail. */
void yg_conv_set_benchmark(bool on);

/* Whether this thread benchmarks cuDNN algorithms.  Cannot fail. */
bool yg_conv_benchmark(void);

/* Restricts this thread's convolutions from now on to deterministic cuDNN
 * algorithms (on) or lets cuDNN take any (off, the default at thread
 * start).  Cannot fail. */
void yg_conv_set_deterministic(bool on);

/* Whether this thread's convolutions are restricted to deterministic
 * algorithms.  Cannot fail. */
bool yg_conv_deterministic(void);

/* The oneDNN backend's primitive cache since the process started: hits
 * (a call that found its primitives), misses (a call that created them)
 * and the entries held now.  All 0 in a build without oneDNN.
 *   out_hits, out_misses, out_entries: out
 * Cannot fail. */
void yg_conv_onednn_cache_stats(int64_t *out_hits, int64_t *out_misses, int64_t *out_entries);

#ifdef __cplusplus
}
#endif
#endif /* YAGRAD_CONV_H */
