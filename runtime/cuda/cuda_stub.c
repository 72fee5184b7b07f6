/*
 * cuda_stub.c - yagrad/cuda.h in a library built without the CUDA backend
 * (no nvcc found, or YG_WITH_CUDA=OFF): no device is available, and every
 * call that needs one fails with "built without CUDA".
 */
#include "cuda/cuda.h"

#include "core/core.h"

#include <string.h>

static const char why[] = "built without CUDA (configure with the CUDA toolkit installed and "
                          "YG_WITH_CUDA=ON)";

bool yg_cuda_is_available(void) {
    return false;
}

int yg_cuda_device_count(void) {
    return 0;
}

yg_status yg_cuda_check(void) {
    return yg__fail(YG_ERR_DEVICE, "cuda: %s", why);
}

yg_status yg__cuda_check_index(const char *op, int index) {
    (void)index;
    return yg__fail(YG_ERR_DEVICE, "%s: cuda: %s", op, why);
}

yg_status yg_cuda_get_device_properties(int index, yg_cuda_device_properties *out) {
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "cuda_get_device_properties: out is NULL");
    memset(out, 0, sizeof *out);
    return yg__cuda_check_index("cuda_get_device_properties", index);
}

yg_status yg_cuda_synchronize(int index) {
    return yg__cuda_check_index("cuda_synchronize", index);
}

yg_status yg_cuda_memory_stats_get(int index, yg_cuda_memory_stats *out) {
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "cuda_memory_stats_get: out is NULL");
    memset(out, 0, sizeof *out);
    return yg__cuda_check_index("cuda_memory_stats_get", index);
}

void yg_cuda_empty_cache(void) {
}

yg_status yg__cuda_launch(const char *op, int index, yg_cuda_launch_fn fn,
                          const yg_cuda_loop_args *a) {
    (void)fn;
    (void)a;
    return yg__cuda_check_index(op, index);
}

yg_status yg__cuda_copy(const char *op, yg_tensor *dst, const yg_tensor *src) {
    (void)src;
    return yg__cuda_check_index(op, dst->storage->device_index);
}

yg_status yg__cuda_device_enter(const char *op, int index, int *prev) {
    *prev = 0;
    return yg__cuda_check_index(op, index);
}

void yg__cuda_device_leave(int prev) {
    (void)prev;
}

yg_status yg__cuda_check_launch(const char *op, int index, int err) {
    (void)err;
    return yg__cuda_check_index(op, index);
}

yg_status yg__cuda_gemm(const char *op,
                        int index,
                        yg_dtype dtype,
                        bool ta,
                        bool tb,
                        int64_t m,
                        int64_t n,
                        int64_t k,
                        const void *a,
                        int64_t lda,
                        const void *b,
                        int64_t ldb,
                        double beta,
                        void *c,
                        int64_t ldc) {
    (void)dtype, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b;
    (void)ldb, (void)beta, (void)c, (void)ldc;
    return yg__cuda_check_index(op, index);
}

void yg_cuda_set_allow_tf32(bool allow) {
    (void)allow;
}

bool yg_cuda_get_allow_tf32(void) {
    return false;
}

yg_status yg__cuda_sum_rows(const char *op, int index, yg_dtype dtype, const void *src,
                            void *dst, int64_t rows, int64_t cols, bool mean) {
    (void)dtype, (void)src, (void)dst, (void)rows, (void)cols, (void)mean;
    return yg__cuda_check_index(op, index);
}

yg_status yg__cuda_softmax(const char *op, int index, bool f64, void *dst, const void *a,
                           const void *b, int64_t outer, int64_t n, int64_t inner, bool is_log,
                           bool backward) {
    (void)f64, (void)dst, (void)a, (void)b, (void)outer, (void)n, (void)inner, (void)is_log;
    (void)backward;
    return yg__cuda_check_index(op, index);
}

yg_status yg__cuda_nll(const char *op, int index, bool f64, bool backward, const void *self,
                       int64_t s0, int64_t s1, const int64_t *target, int64_t ts,
                       const void *weight, int64_t ws, int64_t batch, int64_t classes,
                       int64_t ignore_index, int64_t reduction, void *out) {
    (void)f64, (void)backward, (void)self, (void)s0, (void)s1, (void)target, (void)ts;
    (void)weight, (void)ws, (void)batch, (void)classes, (void)ignore_index, (void)reduction;
    (void)out;
    return yg__cuda_check_index(op, index);
}

yg_status yg__cuda_draw(const char *op, yg_tensor *t, const struct yg__philox_range *r, int kind,
                        int64_t low, uint64_t range, double p, const double *probs) {
    (void)r, (void)kind, (void)low, (void)range, (void)p, (void)probs;
    return yg__cuda_check_index(op, t->storage->device_index);
}

yg_status yg__cuda_gather(const char *op, const yg_tensor *src, int64_t outer, int64_t size,
                          int64_t inner, const yg_tensor *index, yg_tensor *out) {
    (void)src, (void)outer, (void)size, (void)inner, (void)index;
    return yg__cuda_check_index(op, out->storage->device_index);
}

yg_status yg__cuda_index_add(const char *op, const yg_tensor *grad, int64_t outer, int64_t size,
                             int64_t inner, const yg_tensor *index, int64_t skip, yg_tensor *out) {
    (void)grad, (void)outer, (void)size, (void)inner, (void)index, (void)skip;
    return yg__cuda_check_index(op, out->storage->device_index);
}

yg_status yg__cuda_take(
    const char *op, const yg_tensor *self, const int64_t *off, int64_t n, yg_tensor *out) {
    (void)off, (void)n, (void)out;
    return yg__cuda_check_index(op, self->storage->device_index);
}

yg_status yg__cuda_put(const char *op, yg_tensor *dst, const int64_t *off, int64_t n,
                       int64_t span, const yg_tensor *values, bool accumulate) {
    (void)off, (void)n, (void)span, (void)values, (void)accumulate;
    return yg__cuda_check_index(op, dst->storage->device_index);
}

yg_status yg__cuda_lstm_gates(const char *op, int index, bool f64, bool backward, yg_tensor *out0,
                              yg_tensor *out1, const yg_tensor *ghy, const yg_tensor *gcy,
                              const yg_tensor *ig, const yg_tensor *hg, const yg_tensor *cx,
                              int64_t rows, int64_t h) {
    (void)f64, (void)backward, (void)out0, (void)out1, (void)ghy, (void)gcy, (void)ig, (void)hg;
    (void)cx, (void)rows, (void)h;
    return yg__cuda_check_index(op, index);
}

yg_status yg__cuda_layer_norm(const char *op, int index, bool f64, bool backward, yg_tensor *p0,
                              yg_tensor *p1, yg_tensor *p2, const yg_tensor *g,
                              const yg_tensor *x, const yg_tensor *mean, const yg_tensor *rstd,
                              const yg_tensor *w, const yg_tensor *b, int64_t rows, int64_t m,
                              double eps) {
    (void)f64, (void)backward, (void)p0, (void)p1, (void)p2, (void)g, (void)x, (void)mean;
    (void)rstd, (void)w, (void)b, (void)rows, (void)m, (void)eps;
    return yg__cuda_check_index(op, index);
}

yg_status yg__cuda_rows(const char *op, const yg_tensor *data, int64_t outer, int64_t inner,
                        int kind, double param, yg_tensor *values, yg_tensor *indices) {
    (void)outer, (void)inner, (void)kind, (void)param, (void)values, (void)indices;
    return yg__cuda_check_index(op, data->storage->device_index);
}

yg_status yg__cuda_rows_grad(const char *op, int kind, double param, int64_t outer,
                             int64_t inner, yg_tensor *out, const yg_tensor *x,
                             const yg_tensor *a, const yg_tensor *b, yg_tensor *scratch) {
    (void)kind, (void)param, (void)outer, (void)inner, (void)x, (void)a, (void)b, (void)scratch;
    return yg__cuda_check_index(op, out->storage->device_index);
}

yg_status yg__cuda_scatter(const char *op, bool is_gather, int mode, yg_tensor *out,
                           const yg_tensor *src, const void *value, const yg_tensor *index, int d,
                           const yg_tensor *shape) {
    (void)is_gather, (void)mode, (void)src, (void)value, (void)index, (void)d, (void)shape;
    return yg__cuda_check_index(op, out->storage->device_index);
}
yg_status yg__cuda_max_pool(const char *op, const yg_tensor *x, const yg__cuda_pool_geom *g,
                            bool adaptive, yg_tensor *values, yg_tensor *indices) {
    (void)g, (void)adaptive, (void)values, (void)indices;
    return yg__cuda_check_index(op, x->storage->device_index);
}

yg_status yg__cuda_avg_pool(const char *op, const yg_tensor *src, const yg__cuda_pool_geom *g,
                            bool adaptive, bool backward, bool count_include_pad,
                            int64_t divisor_override, yg_tensor *dst) {
    (void)g, (void)adaptive, (void)backward, (void)count_include_pad, (void)divisor_override;
    (void)dst;
    return yg__cuda_check_index(op, src->storage->device_index);
}

yg_status yg__cuda_max_pool_backward(const char *op, const yg_tensor *grad,
                                     const yg_tensor *indices, int64_t planes, int64_t ovol,
                                     int64_t ivol, yg_tensor *out) {
    (void)grad, (void)indices, (void)planes, (void)ovol, (void)ivol;
    return yg__cuda_check_index(op, out->storage->device_index);
}

yg_status yg__cuda_upsample_nearest(const char *op, const yg_tensor *src,
                                    const yg__cuda_pool_geom *g, bool backward, yg_tensor *dst) {
    (void)src, (void)g, (void)backward;
    return yg__cuda_check_index(op, dst->storage->device_index);
}

yg_status yg__cuda_upsample_bilinear(const char *op, const yg_tensor *src,
                                     const yg__cuda_lerp_tap *taps, int64_t planes, int64_t ih,
                                     int64_t iw, int64_t oh, int64_t ow, bool backward,
                                     yg_tensor *dst) {
    (void)src, (void)taps, (void)planes, (void)ih, (void)iw, (void)oh, (void)ow, (void)backward;
    return yg__cuda_check_index(op, dst->storage->device_index);
}

yg_status yg__cuda_batch_norm(const char *op, int index, const yg__cuda_bn_args *a) {
    (void)a;
    return yg__cuda_check_index(op, index);
}

yg_status yg__cuda_batch_norm_backward(const char *op, int index,
                                       const yg__cuda_bn_backward_args *a) {
    (void)a;
    return yg__cuda_check_index(op, index);
}

yg_status yg__cuda_scan(const char *op, yg_tensor *data, int64_t outer, int64_t inner, bool prod) {
    (void)outer, (void)inner, (void)prod;
    return yg__cuda_check_index(op, data->storage->device_index);
}

void *yg__cuda_current_stream(void) {
    return NULL;
}

yg_status yg_cuda_stream_create(int index, yg_cuda_stream **out) {
    if (out != NULL)
        *out = NULL;
    return yg__cuda_check_index("cuda_stream_create", index);
}

void yg_cuda_stream_destroy(yg_cuda_stream *stream) {
    (void)stream;
}

yg_status yg_cuda_set_stream(int index, yg_cuda_stream *stream) {
    (void)stream;
    return yg__cuda_check_index("cuda_set_stream", index);
}

yg_cuda_stream *yg_cuda_get_stream(int index) {
    (void)index;
    return NULL;
}

int yg_cuda_stream_device(const yg_cuda_stream *stream) {
    (void)stream;
    return -1; /* no stream exists in this build */
}

yg_status yg_cuda_stream_synchronize(int index, yg_cuda_stream *stream) {
    (void)stream;
    return yg__cuda_check_index("cuda_stream_synchronize", index);
}

yg_status yg_cuda_event_create(int index, yg_cuda_event **out) {
    if (out != NULL)
        *out = NULL;
    return yg__cuda_check_index("cuda_event_create", index);
}

void yg_cuda_event_destroy(yg_cuda_event *event) {
    (void)event;
}

yg_status yg_cuda_event_record(yg_cuda_event *event, yg_cuda_stream *stream) {
    (void)event;
    (void)stream;
    return yg__cuda_check_index("cuda_event_record", 0);
}

yg_status yg_cuda_stream_wait_event(yg_cuda_stream *stream, yg_cuda_event *event) {
    (void)event;
    (void)stream;
    return yg__cuda_check_index("cuda_stream_wait_event", 0);
}

yg_status yg_cuda_event_synchronize(yg_cuda_event *event) {
    (void)event;
    return yg__cuda_check_index("cuda_event_synchronize", 0);
}

yg_status yg_cuda_event_query(yg_cuda_event *event, bool *done) {
    (void)event;
    if (done != NULL)
        *done = false;
    return yg__cuda_check_index("cuda_event_query", 0);
}

yg_status yg_cuda_event_elapsed_ms(yg_cuda_event *start, yg_cuda_event *end, double *ms) {
    (void)start;
    (void)end;
    if (ms != NULL)
        *ms = 0;
    return yg__cuda_check_index("cuda_event_elapsed_ms", 0);
}
