/*
 * conv/cudnn.c - the cuDNN backend of the convolution dispatcher: the
 * three passes of conv/conv.h (forward, data gradient, weight gradient)
 * on CUDA tensors, with cuDNN's legacy convolution API (cudnn_cnn.h,
 * still shipped by cuDNN 9 and the one that takes float64).
 *
 * Descriptors.  A call describes the ordinary convolution A of
 * conv/conv.h: x [N, cx, *X], w [cy, cx / G, *K], y [N, cy, *Y], all
 * contiguous NC(D)HW.  1-d and 2-d convolutions are given to cuDNN as 2-d
 * (4-d tensors; the 1-d ones with height 1), 3-d ones as 3-d: cuDNN's
 * 2-d kernels are its fast ones, and conv/conv.h already pads the
 * geometry to 3-d with size-1 leading dims.  The compute type is the
 * data type (float32 accumulates in float32, float64 in float64).  Math:
 * FMA only (CUDNN_FMA_MATH), so float32 stays IEEE float32 as on the
 * cpu, unless yg_cuda_set_allow_tf32 allowed TF32, as cuBLAS does
 * (cuda/blas.c).  cuDNN indexes with int: a tensor of 2^31 elements or
 * more is refused with YG_ERR_NOT_IMPLEMENTED.  An empty batch runs
 * nothing (the weight gradient is zeros).
 *
 * Algorithms.  Per geometry (and pass, device, dtype, TF32, flags) the
 * candidates are cuDNN's heuristic order (cudnnGet*Algorithm_v7) or,
 * with benchmark, the order of their measured times (cudnnFind*Ex, run
 * once on the call's own buffers with a workspace of at most
 * YG_CUDNN_WORKSPACE_LIMIT); candidates that fail, need more workspace
 * than the limit, or (deterministic) may add in a varying order, are
 * dropped.  The list is cached in a bounded table under the lock.  A call
 * takes the first candidate whose workspace it can allocate from the
 * caching allocator, so memory pressure falls back to leaner algorithms
 * instead of failing.
 *
 * Threads.  One cuDNN handle per device, made on first use (and
 * destroyed by yg_cuda_release_all); a handle is not safe for concurrent
 * calls, so every call holds the lock from the algorithm choice to the
 * last launch (as cuda/blas.c does for cuBLAS).
 * Everything runs on the calling thread's current stream, as the rest of
 * the CUDA backend (cuda/device.c), so workspaces go back to the
 * allocator right after the launch and are reused only by later work on
 * that stream.
 */
#include "conv/conv.h"
#include "cuda/cuda.h"

#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

/* The most workspace one convolution may take: 1 GiB.  cuDNN's fastest
 * algorithms (FFT, Winograd) ask for hundreds of MiB on large layers;
 * capping them keeps one convolution from emptying the caching allocator
 * of the memory the activations live in.  A candidate over it is
 * dropped, not failed. */
#define YG_CUDNN_WORKSPACE_LIMIT ((size_t)1 << 30)

/* Cached candidate lists.  A training run has a few dozen geometries
 * (each layer's three passes); the table wraps around beyond that. */
#define CACHE_SLOTS    256
#define MAX_CANDIDATES 8

typedef enum conv_pass { PASS_FORWARD = 0, PASS_DATA = 1, PASS_WEIGHT = 2 } conv_pass;

static const char *const pass_names[3] = {"forward", "backward data", "backward filter"};

/* The geometry one list of candidates is for; compared with memcmp, so
 * it is zeroed before it is filled (padding bytes included). */
typedef struct algo_key {
    int32_t pass, device_index, dtype, tf32, benchmark, deterministic;
    int64_t batch, groups, cx, cy, x[3], y[3], k[3], stride[3], pad[3], dil[3];
} algo_key;

typedef struct candidate {
    int algo;
    int math; /* a cudnnMathType_t */
    size_t workspace;
} candidate;

typedef struct algo_entry {
    algo_key key;
    int n;
    candidate c[MAX_CANDIDATES];
} algo_entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cudnnHandle_t handles[YG_CUDA_MAX_DEVICES];
static algo_entry cache[CACHE_SLOTS];
static int cache_len, cache_next;

/* The descriptors of one call. */
typedef struct descs {
    cudnnTensorDescriptor_t x, y, bias;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    cudnnDataType_t type;
} descs;

static yg_status cudnn_fail(const yg_conv_params *p, const char *what, cudnnStatus_t s) {
    return yg__fail(YG_ERR_DEVICE,
                    "backend cudnn: %s on cuda:%d: %s",
                    what,
                    p->device_index,
                    cudnnGetErrorString(s));
}

static void descs_destroy(descs *d) {
    if (d->x != NULL)
        cudnnDestroyTensorDescriptor(d->x);
    if (d->y != NULL)
        cudnnDestroyTensorDescriptor(d->y);
    if (d->bias != NULL)
        cudnnDestroyTensorDescriptor(d->bias);
    if (d->w != NULL)
        cudnnDestroyFilterDescriptor(d->w);
    if (d->conv != NULL)
        cudnnDestroyConvolutionDescriptor(d->conv);
}

/* Sizes [n, c, sp...] of nd dims (the last nd - 2 of sp[3]) and their
 * contiguous strides, as int; false when an extent or the element count
 * does not fit an int. */
static bool dims_of(int nd, int64_t n, int64_t c, const int64_t *sp, int *dims, int *strides) {
    int64_t all[5] = {n, c, sp[0], sp[1], sp[2]}, numel = 1;
    for (int i = 0; i < nd; i++) {
        int64_t v = i < 2 ? all[i] : all[i + (5 - nd)];
        if (v > INT_MAX)
            return false;
        dims[i] = (int)v;
    }
    for (int i = nd - 1; i >= 0; i--) {
        if (numel > INT_MAX)
            return false;
        strides[i] = (int)numel;
        numel *= dims[i];
    }
    return numel <= INT_MAX;
}

/* The descriptors of p (bias_channels > 0: a bias descriptor too). */
static yg_status descs_make(const yg_conv_params *p, int64_t bias_channels, descs *d) {
    int nd = p->n_spatial == 3 ? 5 : 4, nsp = nd - 2, off = 3 - nsp;
    int xd[5], xs[5], yd[5], ys[5], wd[5], ws[5], bd[5], bs[5];
    int pad[3], stride[3], dil[3];
    const int64_t one3[3] = {1, 1, 1};
    cudnnStatus_t s;

    memset(d, 0, sizeof *d);
    d->type = p->dtype == YG_FLOAT64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    if (!dims_of(nd, p->batch, p->cx, p->x, xd, xs) ||
        !dims_of(nd, p->batch, p->cy, p->y, yd, ys) ||
        !dims_of(nd, p->cy, p->cx / p->groups, p->k, wd, ws) ||
        !dims_of(nd, 1, bias_channels > 0 ? bias_channels : 1, one3, bd, bs))
        return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                        "backend cudnn: tensors of 2^31 elements or more (input [%" PRId64
                        ", %" PRId64 ", ...]) are not supported by cuDNN",
                        p->batch,
                        p->cx);
    for (int i = 0; i < nsp; i++) {
        if (p->pad[off + i] > INT_MAX || p->stride[off + i] > INT_MAX || p->dil[off + i] > INT_MAX)
            return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                            "backend cudnn: padding, stride or dilation beyond 2^31 are not "
                            "supported by cuDNN");
        pad[i] = (int)p->pad[off + i];
        stride[i] = (int)p->stride[off + i];
        dil[i] = (int)p->dil[off + i];
    }
    s = cudnnCreateTensorDescriptor(&d->x);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnCreateTensorDescriptor(&d->y);
    if (s == CUDNN_STATUS_SUCCESS && bias_channels > 0)
        s = cudnnCreateTensorDescriptor(&d->bias);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnCreateFilterDescriptor(&d->w);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnCreateConvolutionDescriptor(&d->conv);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetTensorNdDescriptor(d->x, d->type, nd, xd, xs);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetTensorNdDescriptor(d->y, d->type, nd, yd, ys);
    if (s == CUDNN_STATUS_SUCCESS && bias_channels > 0)
        s = cudnnSetTensorNdDescriptor(d->bias, d->type, nd, bd, bs);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetFilterNdDescriptor(d->w, d->type, CUDNN_TENSOR_NCHW, nd, wd);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetConvolutionNdDescriptor(
            d->conv, nsp, pad, stride, dil, CUDNN_CROSS_CORRELATION, d->type);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetConvolutionGroupCount(d->conv, (int)p->groups);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetConvolutionMathType(d->conv,
                                        yg_cuda_get_allow_tf32() && p->dtype == YG_FLOAT32
                                            ? CUDNN_TENSOR_OP_MATH
                                            : CUDNN_FMA_MATH);
    if (s != CUDNN_STATUS_SUCCESS) {
        descs_destroy(d);
        memset(d, 0, sizeof *d);
        return cudnn_fail(p, "describing the convolution", s);
    }
    return YG_OK;
}

static void key_of(const yg_conv_params *p, conv_pass pass, algo_key *k) {
    memset(k, 0, sizeof *k);
    k->pass = (int32_t)pass;
    k->device_index = p->device_index;
    k->dtype = (int32_t)p->dtype;
    k->tf32 = yg_cuda_get_allow_tf32();
    k->benchmark = p->benchmark;
    k->deterministic = p->deterministic;
    k->batch = p->batch;
    k->groups = p->groups;
    k->cx = p->cx;
    k->cy = p->cy;
    memcpy(k->x, p->x, sizeof k->x);
    memcpy(k->y, p->y, sizeof k->y);
    memcpy(k->k, p->k, sizeof k->k);
    memcpy(k->stride, p->stride, sizeof k->stride);
    memcpy(k->pad, p->pad, sizeof k->pad);
    memcpy(k->dil, p->dil, sizeof k->dil);
}

/* Caller holds lock. */
static const algo_entry *cache_find(const algo_key *k) {
    for (int i = 0; i < cache_len; i++)
        if (memcmp(&cache[i].key, k, sizeof *k) == 0)
            return &cache[i];
    return NULL;
}

static const algo_entry *cache_put(const algo_entry *e) {
    int at = cache_len < CACHE_SLOTS ? cache_len++ : cache_next;
    cache_next = (at + 1) % CACHE_SLOTS;
    cache[at] = *e;
    return &cache[at];
}

/* Appends the perf result (algo, status, memory, determinism, math) to e
 * when it is usable under the flags. */
static void consider(algo_entry *e,
                     bool deterministic,
                     bool tf32,
                     bool f32,
                     int algo,
                     cudnnStatus_t status,
                     size_t memory,
                     cudnnDeterminism_t determinism,
                     cudnnMathType_t math) {
    if (e->n >= MAX_CANDIDATES || status != CUDNN_STATUS_SUCCESS ||
        memory > YG_CUDNN_WORKSPACE_LIMIT)
        return;
    if (deterministic && determinism != CUDNN_DETERMINISTIC)
        return;
    /* Without TF32, a float32 result computed on tensor cores would round
     * the operands to 10 mantissa bits: not the IEEE float32 asked for.
     * CUDNN_DEFAULT_MATH permits TF32 for float32 on Ampere and later, so
     * float32 takes only FMA math then (as PyTorch asserts); TF32 does not
     * apply to float64, whose candidates may keep the default. */
    if (!tf32 && math != CUDNN_FMA_MATH && (f32 || math != CUDNN_DEFAULT_MATH))
        return;
    e->c[e->n].algo = algo;
    e->c[e->n].math = (int)math;
    e->c[e->n].workspace = memory;
    e->n++;
}

/* *need = the workspace algo of pass asks for under the descriptor's
 * current math type. */
static cudnnStatus_t
workspace_of(cudnnHandle_t h, const descs *d, conv_pass pass, int algo, size_t *need) {
    *need = 0;
    if (pass == PASS_FORWARD)
        return cudnnGetConvolutionForwardWorkspaceSize(
            h, d->x, d->w, d->conv, d->y, (cudnnConvolutionFwdAlgo_t)algo, need);
    if (pass == PASS_DATA)
        return cudnnGetConvolutionBackwardDataWorkspaceSize(
            h, d->w, d->y, d->conv, d->x, (cudnnConvolutionBwdDataAlgo_t)algo, need);
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(
        h, d->x, d->y, d->conv, d->w, (cudnnConvolutionBwdFilterAlgo_t)algo, need);
}

/* Keeps the candidates of e whose workspace cuDNN can say, with that
 * size: the heuristics' memory field is an estimate, the size asked for
 * at run time is this one (as PyTorch does). */
static void settle_workspaces(cudnnHandle_t h, const descs *d, conv_pass pass, algo_entry *e) {
    int kept = 0;
    for (int i = 0; i < e->n; i++) {
        size_t need = 0;
        if (cudnnSetConvolutionMathType(d->conv, (cudnnMathType_t)e->c[i].math) !=
                CUDNN_STATUS_SUCCESS ||
            workspace_of(h, d, pass, e->c[i].algo, &need) != CUDNN_STATUS_SUCCESS ||
            need > YG_CUDNN_WORKSPACE_LIMIT)
            continue;
        e->c[kept] = e->c[i];
        e->c[kept].workspace = need;
        kept++;
    }
    e->n = kept;
}

/* The largest workspace any algorithm of pass asks for, capped at the
 * limit: what cudnnFind*Ex is given to try them all. */
static size_t find_workspace(cudnnHandle_t h, const descs *d, conv_pass pass) {
    size_t most = 0, need;
    int count = pass == PASS_FORWARD ? CUDNN_CONVOLUTION_FWD_ALGO_COUNT
                : pass == PASS_DATA  ? CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT
                                     : CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
    for (int a = 0; a < count; a++)
        if (workspace_of(h, d, pass, a, &need) == CUDNN_STATUS_SUCCESS &&
            need <= YG_CUDNN_WORKSPACE_LIMIT && need > most)
            most = need;
    return most;
}

/* The candidates of pass for p, from the cache or from cuDNN (then
 * cached).  Buffers a (x or y) and b (w or y) are the call's own, and out
 * its result buffer, which cudnnFind*Ex may overwrite.  Caller holds
 * lock. */
static yg_status choose(const yg_conv_params *p,
                        cudnnHandle_t h,
                        const descs *d,
                        conv_pass pass,
                        const void *in0,
                        const void *in1,
                        void *out,
                        const algo_entry **chosen) {
    enum { PERF_MAX = 8 };
    algo_key key;
    algo_entry e;
    int n = 0;
    cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
    void *ws = NULL;
    size_t ws_size = 0;
    bool tf32 = yg_cuda_get_allow_tf32() && p->dtype == YG_FLOAT32;

    key_of(p, pass, &key);
    if ((*chosen = cache_find(&key)) != NULL)
        return YG_OK;
    memset(&e, 0, sizeof e);
    e.key = key;
    if (p->benchmark) {
        /* As much workspace as the hungriest algorithm under the limit
         * asks for; less when the allocator cannot give it (the
         * algorithms that need more then report failure and drop out). */
        ws_size = find_workspace(h, d, pass);
        while (ws_size > 0 && yg__cuda_alloc("cudnn", p->device_index, ws_size, &ws) != YG_OK)
            ws_size /= 2;
    }
    if (pass == PASS_FORWARD) {
        cudnnConvolutionFwdAlgoPerf_t perf[PERF_MAX];
        if (p->benchmark)
            s = cudnnFindConvolutionForwardAlgorithmEx(
                h, d->x, in0, d->w, in1, d->conv, d->y, out, PERF_MAX, &n, perf, ws, ws_size);
        else
            s = cudnnGetConvolutionForwardAlgorithm_v7(
                h, d->x, d->w, d->conv, d->y, PERF_MAX, &n, perf);
        for (int i = 0; s == CUDNN_STATUS_SUCCESS && i < n; i++)
            consider(&e,
                     p->deterministic,
                     tf32,
                     p->dtype == YG_FLOAT32,
                     (int)perf[i].algo,
                     perf[i].status,
                     perf[i].memory,
                     perf[i].determinism,
                     perf[i].mathType);
    } else if (pass == PASS_DATA) {
        cudnnConvolutionBwdDataAlgoPerf_t perf[PERF_MAX];
        if (p->benchmark)
            s = cudnnFindConvolutionBackwardDataAlgorithmEx(
                h, d->w, in1, d->y, in0, d->conv, d->x, out, PERF_MAX, &n, perf, ws, ws_size);
        else
            s = cudnnGetConvolutionBackwardDataAlgorithm_v7(
                h, d->w, d->y, d->conv, d->x, PERF_MAX, &n, perf);
        for (int i = 0; s == CUDNN_STATUS_SUCCESS && i < n; i++)
            consider(&e,
                     p->deterministic,
                     tf32,
                     p->dtype == YG_FLOAT32,
                     (int)perf[i].algo,
                     perf[i].status,
                     perf[i].memory,
                     perf[i].determinism,
                     perf[i].mathType);
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[PERF_MAX];
        if (p->benchmark)
            s = cudnnFindConvolutionBackwardFilterAlgorithmEx(
                h, d->x, in0, d->y, in1, d->conv, d->w, out, PERF_MAX, &n, perf, ws, ws_size);
        else
            s = cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                h, d->x, d->y, d->conv, d->w, PERF_MAX, &n, perf);
        for (int i = 0; s == CUDNN_STATUS_SUCCESS && i < n; i++)
            consider(&e,
                     p->deterministic,
                     tf32,
                     p->dtype == YG_FLOAT32,
                     (int)perf[i].algo,
                     perf[i].status,
                     perf[i].memory,
                     perf[i].determinism,
                     perf[i].mathType);
    }
    yg__cuda_free(p->device_index, ws);
    if (s == CUDNN_STATUS_SUCCESS && !p->benchmark)
        settle_workspaces(h, d, pass, &e);
    if (s != CUDNN_STATUS_SUCCESS)
        return cudnn_fail(p, p->benchmark ? "timing the algorithms" : "choosing an algorithm", s);
    if (e.n == 0)
        return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                        "backend cudnn: no %s%s algorithm for this %s convolution within a "
                        "workspace of %zu bytes",
                        p->deterministic ? "deterministic " : "",
                        pass_names[pass],
                        yg_dtype_name(p->dtype),
                        (size_t)YG_CUDNN_WORKSPACE_LIMIT);
    *chosen = cache_put(&e);
    return YG_OK;
}

/* Runs pass on candidate c with workspace ws of ws_size bytes. */
static cudnnStatus_t run_pass(cudnnHandle_t h,
                              const descs *d,
                              conv_pass pass,
                              const candidate *c,
                              void *ws,
                              size_t ws_size,
                              const void *in0,
                              const void *in1,
                              void *out) {
    const double one64 = 1, zero64 = 0;
    const float one32 = 1, zero32 = 0;
    bool f64 = d->type == CUDNN_DATA_DOUBLE;
    const void *one = f64 ? (const void *)&one64 : (const void *)&one32;
    const void *zero = f64 ? (const void *)&zero64 : (const void *)&zero32;
    cudnnStatus_t s = cudnnSetConvolutionMathType(d->conv, (cudnnMathType_t)c->math);
    if (s != CUDNN_STATUS_SUCCESS)
        return s;
    if (pass == PASS_FORWARD)
        return cudnnConvolutionForward(h,
                                       one,
                                       d->x,
                                       in0,
                                       d->w,
                                       in1,
                                       d->conv,
                                       (cudnnConvolutionFwdAlgo_t)c->algo,
                                       ws,
                                       ws_size,
                                       zero,
                                       d->y,
                                       out);
    if (pass == PASS_DATA)
        return cudnnConvolutionBackwardData(h,
                                            one,
                                            d->w,
                                            in1,
                                            d->y,
                                            in0,
                                            d->conv,
                                            (cudnnConvolutionBwdDataAlgo_t)c->algo,
                                            ws,
                                            ws_size,
                                            zero,
                                            d->x,
                                            out);
    return cudnnConvolutionBackwardFilter(h,
                                          one,
                                          d->x,
                                          in0,
                                          d->y,
                                          in1,
                                          d->conv,
                                          (cudnnConvolutionBwdFilterAlgo_t)c->algo,
                                          ws,
                                          ws_size,
                                          zero,
                                          d->w,
                                          out);
}

/* One pass: in0, in1 are (x, w) forward, (y, w) data, (x, y) weight;
 * out is y, x or w; bias (nullable) is added per channel of out (forward
 * and data only). */
static yg_status pass_run(const yg_conv_params *p,
                          conv_pass pass,
                          const void *in0,
                          const void *in1,
                          const void *bias,
                          void *out) {
    int64_t bias_channels = bias == NULL ? 0 : pass == PASS_FORWARD ? p->cy : p->cx;
    const algo_entry *e = NULL;
    descs d;
    int prev;
    void *ws = NULL;
    size_t ws_size = 0;
    int at = -1;
    yg_status st;
    cudnnStatus_t s = CUDNN_STATUS_SUCCESS;

    YG_RETURN_IF_ERROR(yg__cuda_device_enter("cudnn", p->device_index, &prev));
    if (p->batch == 0) {
        /* Nothing to convolve: y and x are empty, and the weight
         * gradient of no sample is zeros. */
        cudaError_t err = cudaSuccess;
        if (pass == PASS_WEIGHT)
            err = cudaMemsetAsync(
                out,
                0,
                (size_t)(p->cy * (p->cx / p->groups) * p->k[0] * p->k[1] * p->k[2]) *
                    yg_dtype_size(p->dtype),
                (cudaStream_t)yg__cuda_current_stream());
        yg__cuda_device_leave(prev);
        return yg__cuda_check_launch(
            "backend cudnn: zeroing the weight gradient", p->device_index, (int)err);
    }
    st = descs_make(p, bias_channels, &d);
    if (st != YG_OK) {
        yg__cuda_device_leave(prev);
        return st;
    }
    pthread_mutex_lock(&lock);
    if (handles[p->device_index] == NULL)
        s = cudnnCreate(&handles[p->device_index]);
    if (s != CUDNN_STATUS_SUCCESS) {
        handles[p->device_index] = NULL;
        st = cudnn_fail(p, "creating a handle", s);
    }
    cudnnHandle_t h = handles[p->device_index];
    /* On the calling thread's current stream (the handle is shared). */
    if (st == YG_OK && (s = cudnnSetStream(h, (cudaStream_t)yg__cuda_current_stream())) !=
                           CUDNN_STATUS_SUCCESS)
        st = cudnn_fail(p, "setting the stream", s);
    if (st == YG_OK)
        st = choose(p, h, &d, pass, in0, in1, out, &e);
    /* The first candidate whose workspace the allocator can give. */
    for (int i = 0; st == YG_OK && e != NULL && i < e->n && at < 0; i++) {
        ws_size = e->c[i].workspace;
        if (ws_size == 0 || yg__cuda_alloc("cudnn", p->device_index, ws_size, &ws) == YG_OK)
            at = i;
    }
    if (st == YG_OK && at < 0) {
        size_t least = e->c[0].workspace;
        for (int i = 1; i < e->n; i++)
            least = e->c[i].workspace < least ? e->c[i].workspace : least;
        st = yg__fail(YG_ERR_OUT_OF_MEMORY,
                      "backend cudnn: out of CUDA memory for the workspace of every %s "
                      "algorithm on cuda:%d (the least needs %zu bytes)",
                      pass_names[pass],
                      p->device_index,
                      least);
    }
    if (st == YG_OK) {
        s = run_pass(h, &d, pass, &e->c[at], ws, ws_size, in0, in1, out);
        if (s != CUDNN_STATUS_SUCCESS)
            st = cudnn_fail(p, pass_names[pass], s);
    }
    if (st == YG_OK && bias != NULL) {
        const double one64 = 1;
        const float one32 = 1;
        const void *one = p->dtype == YG_FLOAT64 ? (const void *)&one64 : (const void *)&one32;
        s = cudnnAddTensor(h, one, d.bias, bias, one, pass == PASS_FORWARD ? d.y : d.x, out);
        if (s != CUDNN_STATUS_SUCCESS)
            st = cudnn_fail(p, "adding the bias", s);
    }
    pthread_mutex_unlock(&lock);
    yg__cuda_free(p->device_index, ws); /* stream-ordered: reused only by later work */
    descs_destroy(&d);
    yg__cuda_device_leave(prev);
    return st;
}

static yg_status cudnn_forward(const yg_conv_params *p,
                                 const void *x,
                                 const void *w,
                                 const void *bias,
                                 void *y) {
    return pass_run(p, PASS_FORWARD, x, w, bias, y);
}

static yg_status cudnn_data(const yg_conv_params *p,
                              const void *y,
                              const void *w,
                              const void *bias,
                              void *x) {
    return pass_run(p, PASS_DATA, y, w, bias, x);
}

static yg_status cudnn_weight(const yg_conv_params *p, const void *y, const void *x, void *w) {
    return pass_run(p, PASS_WEIGHT, x, y, NULL, w);
}

static const yg_conv_impl cudnn = {
    .device = YG_CUDA,
    .forward = cudnn_forward,
    .data = cudnn_data,
    .weight = cudnn_weight,
};

/* yg_cuda_release_all's part here: every handle destroyed (made again
 * on the next convolution) and the candidate cache forgotten (its lists
 * hold no device memory, but a reset device may differ). */
static void release_handles(void) {
    int prev = 0;
    if (cudaGetDevice(&prev) != cudaSuccess)
        prev = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < YG_CUDA_MAX_DEVICES; i++) {
        if (handles[i] == NULL)
            continue;
        (void)cudaSetDevice(i);
        (void)cudnnDestroy(handles[i]);
        handles[i] = NULL;
    }
    cache_len = cache_next = 0;
    pthread_mutex_unlock(&lock);
    (void)cudaSetDevice(prev);
    (void)cudaGetLastError();
}

/* Registered when the CUDA module loads (cuda/module.c). */
__attribute__((constructor)) static void register_cudnn(void) {
    yg__conv_register(YG_CONV_BACKEND_CUDNN, &cudnn);
    yg__cuda_at_release(release_handles);
}
