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
 *   cudnn   cuDNN (needs CUDA tensors; not built yet)
 *
 * Without a forced backend the dispatcher takes the best one built for
 * the call: onednn for float32 when built, native for float64, for an
 * empty batch and for whatever else oneDNN refuses
 * (docs/architecture.md, "Convolutions", has the table).  A backend is forced by
 * yg_conv_force_backend (this thread) or, when the thread forced none, by
 * the environment variable YG_CONV_BACKEND=native|onednn|cudnn (read at
 * every call).  A forced backend that is not built, or a YG_CONV_BACKEND
 * value that names no backend, makes the convolution fail with
 * YG_ERR_NOT_IMPLEMENTED or YG_ERR_INVALID_ARGUMENT and a message naming
 * it (`conv2d: convolution: convolution_dispatch: backend onednn: built
 * without oneDNN`): another backend is never used silently.  So does a
 * forced onednn on a case it refuses (`backend onednn: float64: oneDNN
 * has no float64 convolution`).  The backward
 * of a convolution uses the backend its forward would pick now.
 *
 * Thread safety: the forced backend and the last choice are per thread.
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
