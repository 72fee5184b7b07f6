/*
 * attention.c - flash_attention and its fused gradient on a GPU: the
 * CUDA implementations of the structured ops, which fill the results
 * meta/attention.c made with the kernels of cuda/attention.cu (one
 * thread per query row or key, the CPU's online softmax; a correct path,
 * not a fast one: scaled_dot_product_attention keeps its ops on the GPU).
 */
#include "decls/attention.h"

#include "core/core.h"
#include "cuda/cuda.h"

#include <math.h>

/* cuda/attention.cu */
int yg__cuda_flash_attention_launch(int f64,
                                    int is_backward,
                                    void *p0,
                                    void *p1,
                                    void *p2,
                                    const void *go,
                                    const void *q,
                                    const void *k,
                                    const void *v,
                                    const void *o,
                                    const void *lse,
                                    long long batch,
                                    long long L,
                                    long long S,
                                    long long E,
                                    long long Ev,
                                    double scale,
                                    int causal);

/* The flat batch, L, S, E, Ev and the scale of query, key and value
 * (meta/attention.c checked them). */
typedef struct geom {
    int64_t batch, L, S, E, Ev;
    double scale;
} geom;

static geom geometry(const yg_tensor *q, const yg_tensor *k, const yg_tensor *v, const double *s) {
    int32_t nd = q->ndim;
    geom g = {1, q->sizes[nd - 2], k->sizes[nd - 2], q->sizes[nd - 1], v->sizes[nd - 1], 0};
    for (int32_t d = 0; d < nd - 2; d++)
        g.batch *= q->sizes[d];
    g.scale = s != NULL ? *s : 1 / sqrt((double)(g.E > 0 ? g.E : 1));
    return g;
}

static void *ptr_or_null(const yg_tensor *t) {
    return t != NULL ? yg__tensor_ptr(t) : NULL;
}

/* Runs the launcher on in[] made contiguous (in: q, k, v, then go, o,
 * lse for the gradient) into out[]. */
static yg_status run(const char *op,
                     bool backward,
                     const yg_tensor *const *in,
                     int n_in,
                     yg_tensor *const *out,
                     const double *scale,
                     bool causal) {
    yg_tensor *c[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    geom g = geometry(in[0], in[1], in[2], scale);
    int index = in[0]->storage->device_index, prev;
    yg_status st = YG_OK;

    /* with no query the gradient still writes grad_key and grad_value's
     * zeros (the kernels take empty ranges) */
    if (g.batch == 0 || (g.L == 0 && (!backward || g.S == 0)))
        return YG_OK;
    for (int i = 0; i < n_in && st == YG_OK; i++)
        st = yg__tensor_contiguous_as(in[i], in[0]->dtype, true, &c[i]);
    if (st == YG_OK)
        st = yg__cuda_device_enter(op, index, &prev);
    if (st == YG_OK) {
        int err = yg__cuda_flash_attention_launch(in[0]->dtype == YG_FLOAT64,
                                                  backward,
                                                  yg__tensor_ptr(out[0]),
                                                  yg__tensor_ptr(out[1]),
                                                  backward ? yg__tensor_ptr(out[2]) : NULL,
                                                  ptr_or_null(c[3]),
                                                  yg__tensor_ptr(c[0]),
                                                  yg__tensor_ptr(c[1]),
                                                  yg__tensor_ptr(c[2]),
                                                  ptr_or_null(c[4]),
                                                  ptr_or_null(c[5]),
                                                  g.batch,
                                                  g.L,
                                                  g.S,
                                                  g.E,
                                                  g.Ev,
                                                  g.scale,
                                                  causal);
        yg__cuda_device_leave(prev);
        st = yg__cuda_check_launch(op, index, err);
    }
    for (int i = 0; i < 6; i++)
        yg_release(c[i]);
    return st;
}

yg_status yg__cuda_flash_attention_out(const yg_tensor *query,
                                       const yg_tensor *key,
                                       const yg_tensor *value,
                                       bool is_causal,
                                       const double *scale,
                                       yg_tensor *out_output,
                                       yg_tensor *out_logsumexp) {
    const yg_tensor *in[3] = {query, key, value};
    yg_tensor *out[2] = {out_output, out_logsumexp};
    return run("flash_attention", false, in, 3, out, scale, is_causal);
}

yg_status yg__cuda_flash_attention_backward_fused_out(const yg_tensor *grad_output,
                                                      const yg_tensor *query,
                                                      const yg_tensor *key,
                                                      const yg_tensor *value,
                                                      const yg_tensor *output,
                                                      const yg_tensor *logsumexp,
                                                      bool is_causal,
                                                      const double *scale,
                                                      yg_tensor *out_grad_query,
                                                      yg_tensor *out_grad_key,
                                                      yg_tensor *out_grad_value) {
    const yg_tensor *in[6] = {query, key, value, grad_output, output, logsumexp};
    yg_tensor *out[3] = {out_grad_query, out_grad_key, out_grad_value};
    return run("flash_attention_backward_fused", true, in, 6, out, scale, is_causal);
}
