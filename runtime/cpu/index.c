/*
 * index.c - ops that address elements through an int64 index tensor:
 * index_select, gather, scatter (from a tensor or a value), scatter_add,
 * embedding, and the gradients of index_select, gather and embedding (an
 * index-add and scatter-adds into zeros; embedding's skips the rows of
 * padding_idx).
 *
 * All are structured: their meta functions (meta/index.c) check every
 * index against the size it addresses before anything is written, so a
 * bad index fails with YG_ERR_INDEX naming the offending value instead of
 * reading or writing out of bounds, and make the result.  Inputs
 * are read through their strides (no contiguous copy); results are new
 * contiguous tensors.  The walks are one flat loop over the index (or
 * output) elements whose coordinates are recovered by division: these
 * ops are memory-bound gathers, and the division is cheap next to the
 * scattered load.
 *
 * Copies move elements as bytes, so every dtype works; the adding
 * kernels (scatter_add and the two gradients) add in the element's own
 * type, and bool adds as logical or.
 *
 * The GPU's implementations (cuda/index.c) gather, or add in the CPU's
 * order (deterministic, bit for bit).
 */
#include "cpu/cpu.h"
#include "decls/indexing.h"
#include "decls/layers.h"

#include <inttypes.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

/* Adds the element at src into the element at dst (both of dtype). */
typedef void (*add_elem_fn)(char *dst, const char *src);

static void add_f32(char *dst, const char *src) {
    *(float *)dst += *(const float *)src;
}
static void add_f64(char *dst, const char *src) {
    *(double *)dst += *(const double *)src;
}
static void add_i64(char *dst, const char *src) {
    *(int64_t *)dst += *(const int64_t *)src;
}
static void add_b8(char *dst, const char *src) {
    *(bool *)dst = *(bool *)dst || *(const bool *)src;
}
static void add_i32(char *dst, const char *src) {
    /* Unsigned: overflow wraps instead of being undefined. */
    *(int32_t *)dst = (int32_t)((uint32_t) * (int32_t *)dst + (uint32_t) * (const int32_t *)src);
}

/* float16 and bfloat16 have no adder of their own: the callers refuse
 * them first (yg__check_not_half). */
static add_elem_fn add_for(yg_dtype dtype) {
    switch (dtype) {
    case YG_FLOAT32:
        return add_f32;
    case YG_FLOAT64:
        return add_f64;
    case YG_INT64:
        return add_i64;
    case YG_INT32:
        return add_i32;
    default:
        return add_b8;
    }
}

/* Coordinates of the i-th element (row-major) of a tensor of sizes. */
static void coords_of(int64_t i, const int64_t *sizes, int32_t ndim, int64_t *c) {
    for (int32_t d = ndim - 1; d >= 0; d--) {
        c[d] = sizes[d] > 0 ? i % sizes[d] : 0;
        i = sizes[d] > 0 ? i / sizes[d] : 0;
    }
}

/* Byte address of the element of t at coordinates c, with c[dim]
 * replaced by k when dim >= 0. */
static char *elem_at(const yg_tensor *t, const int64_t *c, int64_t dim, int64_t k) {
    int64_t off = 0;
    for (int32_t d = 0; d < t->ndim; d++)
        off += (d == dim ? k : c[d]) * t->strides[d];
    return yg__tensor_ptr(t) + off * (int64_t)yg_dtype_size(t->dtype);
}

static int64_t numel(const yg_tensor *t) {
    return yg_tensor_numel(t); /* a 0 first: fits (sizes.h) */
}

/* ---- index_select ---- */

yg_status yg__cpu_index_select_out(const yg_tensor *self,
                                   int64_t dim,
                                   const yg_tensor *index,
                                   yg_tensor *out) {
    int64_t c[YG_MAX_DIMS], d;

    YG_RETURN_IF_ERROR(yg__wrap_dim("index_select", "self", dim, self->ndim, &d));
    size_t esize = yg_dtype_size(self->dtype);
    int64_t n = numel(out);
    char *dst = yg__tensor_ptr(out);
    for (int64_t i = 0; i < n; i++) {
        coords_of(i, out->sizes, self->ndim, c);
        int64_t ic[1] = {c[d]};
        int64_t k = *(const int64_t *)elem_at(index, ic, -1, 0);
        memcpy(dst + (size_t)i * esize, elem_at(self, c, d, k), esize);
    }
    return YG_OK;
}

/* Elements from which the row walks run in parallel. */
#define ROWS_PARALLEL_MIN 32768

/* out [outer, s, inner] += g [outer, k, inner] at rows idx[j] of the
 * middle dim (a row equal to skip is left out: embedding's padding_idx).
 * Rows of outer run in parallel when there are enough of them, else
 * threads split the inner columns; either way each element adds its
 * terms in the serial order, so the result is the serial one bit for bit. */
#define INDEX_ADD_ROWS(T)                                                                          \
    do {                                                                                           \
        T *o_ = (T *)yg__tensor_ptr(out);                                                          \
        const T *g_ = (const T *)yg__tensor_ptr(g);                                                \
        const bool by_rows = outer >= 2 * omp_get_max_threads();                                   \
        _Pragma("omp parallel if (parallel)") {                                                    \
            const int nt = omp_get_num_threads(), t = omp_get_thread_num();                        \
            const int64_t span = by_rows ? inner : (inner + nt - 1) / nt;                          \
            const int64_t lo = by_rows ? 0 : t * span, hi = lo + span < inner ? lo + span : inner; \
            for (int64_t o = by_rows ? t : 0; o < outer; o += by_rows ? nt : 1)                    \
                for (int64_t j = 0; j < k; j++) {                                                  \
                    if (idx[j] == skip)                                                            \
                        continue;                                                                  \
                    T *dst = o_ + (o * s + idx[j]) * inner;                                        \
                    const T *src = g_ + (o * k + j) * inner;                                       \
                    for (int64_t c = lo; c < hi; c++)                                              \
                        dst[c] += src[c];                                                          \
                }                                                                                  \
        }                                                                                          \
    } while (0)

/* INDEX_ADD_ROWS for float32 and float64 when out, g and the index are
 * contiguous; false otherwise (the general walk then runs). */
static bool index_add_rows(yg_tensor *out,
                           const yg_tensor *g,
                           const yg_tensor *index,
                           int64_t outer,
                           int64_t k,
                           int64_t s,
                           int64_t inner,
                           int64_t skip) {
    if ((out->dtype != YG_FLOAT32 && out->dtype != YG_FLOAT64) || g->dtype != out->dtype ||
        !yg_tensor_is_contiguous(out) || !yg_tensor_is_contiguous(g) ||
        !yg_tensor_is_contiguous(index))
        return false;
    const int64_t *idx = (const int64_t *)yg__tensor_ptr(index);
    const bool parallel = outer * k * inner >= ROWS_PARALLEL_MIN;
    if (out->dtype == YG_FLOAT32)
        INDEX_ADD_ROWS(float);
    else
        INDEX_ADD_ROWS(double);
    return true;
}

yg_status yg__cpu_index_select_backward_out(const yg_tensor *grad_output,
                                            const int64_t *self_sizes,
                                            int64_t self_sizes_len,
                                            int64_t dim,
                                            const yg_tensor *index,
                                            yg_tensor *out) {
    int64_t c[YG_MAX_DIMS], d;

    (void)self_sizes;
    (void)self_sizes_len;
    YG_RETURN_IF_ERROR(
        yg__wrap_dim("index_select_backward", "grad_output", dim, grad_output->ndim, &d));
    /* Nothing to add (out is zeros): an empty grad_output's other dims
     * may be huge, so outer would walk billions of empty rows, or
     * overflow (docs/architecture.md, "Size arithmetic").  Past this, outer * inner
     * is at most grad_output's element count. */
    if (numel(grad_output) == 0)
        return YG_OK;
    if (grad_output->ndim > 0) {
        int64_t outer = 1, inner = 1;
        for (int32_t e = 0; e < grad_output->ndim; e++)
            if (e < d)
                outer *= grad_output->sizes[e];
            else if (e > d)
                inner *= grad_output->sizes[e];
        if (index_add_rows(out, grad_output, index, outer, grad_output->sizes[d], out->sizes[d],
                           inner, INT64_MIN))
            return YG_OK;
    }
    add_elem_fn add = add_for(grad_output->dtype);
    int64_t n = numel(grad_output);
    for (int64_t i = 0; i < n; i++) {
        coords_of(i, grad_output->sizes, grad_output->ndim, c);
        int64_t ic[1] = {c[d]};
        int64_t k = *(const int64_t *)elem_at(index, ic, -1, 0);
        add(elem_at(out, c, d, k), elem_at(grad_output, c, -1, 0));
    }
    return YG_OK;
}

/* ---- gather and scatter ---- */

enum scatter_mode { SCATTER_COPY, SCATTER_VALUE, SCATTER_ADD };

yg_status
yg__cpu_gather_out(const yg_tensor *self, int64_t dim, const yg_tensor *index, yg_tensor *out) {
    int64_t c[YG_MAX_DIMS], d;

    YG_RETURN_IF_ERROR(yg__wrap_dim("gather", "self", dim, self->ndim, &d));
    size_t esize = yg_dtype_size(self->dtype);
    int64_t n = numel(index);
    char *dst = yg__tensor_ptr(out);
    for (int64_t i = 0; i < n; i++) {
        coords_of(i, index->sizes, index->ndim, c);
        int64_t k = *(const int64_t *)elem_at(index, c, -1, 0);
        memcpy(dst + (size_t)i * esize, elem_at(self, c, self->ndim > 0 ? d : -1, k), esize);
    }
    return YG_OK;
}

/* The sizes of the row walks when res, index and src (NULL: none) are
 * contiguous and index has src's sizes and res's outside dim d: outer
 * rows of index [k x inner] against res [s x inner]; false otherwise. */
static bool row_layout(const yg_tensor *res,
                       int64_t d,
                       const yg_tensor *index,
                       const yg_tensor *src,
                       int64_t *outer,
                       int64_t *k,
                       int64_t *s,
                       int64_t *inner) {
    if (res->ndim == 0 || index->ndim != res->ndim || !yg_tensor_is_contiguous(res) ||
        !yg_tensor_is_contiguous(index) ||
        (src != NULL && (!yg_tensor_is_contiguous(src) || src->ndim != index->ndim ||
                         memcmp(src->sizes, index->sizes, sizeof(int64_t) * (size_t)index->ndim))))
        return false;
    *outer = *inner = 1;
    for (int32_t e = 0; e < res->ndim; e++) {
        if (e != d && res->sizes[e] != index->sizes[e])
            return false;
        if (e < d)
            *outer *= res->sizes[e];
        else if (e > d)
            *inner *= res->sizes[e];
    }
    *k = index->sizes[d];
    *s = res->sizes[d];
    return true;
}

/* scatter_add / scatter of rows: res[o, idx[o, j, i], i] (+)= src[o, j, i].
 * Each outer row writes only its own slice and walks it in the serial
 * order, so running rows in parallel gives the serial result bit for bit. */
#define SCATTER_ROWS(T, add)                                                                       \
    do {                                                                                           \
        T *r_ = (T *)yg__tensor_ptr(res);                                                          \
        const T *x_ = (const T *)yg__tensor_ptr(src);                                              \
        _Pragma("omp parallel for schedule(static) if (parallel)")                               \
        for (int64_t o = 0; o < outer; o++) {                                                      \
            if (inner == 1) { /* along the last dim: a row of k into a row of s */                 \
                T *dst = r_ + o * s;                                                               \
                const T *src_ = x_ + o * k;                                                        \
                const int64_t *ix = idx + o * k;                                                   \
                for (int64_t j = 0; j < k; j++)                                                    \
                    dst[ix[j]] = add ? (T)(dst[ix[j]] + src_[j]) : src_[j];                        \
                continue;                                                                          \
            }                                                                                      \
            for (int64_t j = 0; j < k; j++)                                                        \
                for (int64_t i = 0; i < inner; i++) {                                              \
                    const int64_t at = (o * k + j) * inner + i;                                    \
                    T *dst = r_ + (o * s + idx[at]) * inner + i;                                   \
                    *dst = add ? (T)(*dst + x_[at]) : x_[at];                                      \
                }                                                                                  \
        }                                                                                          \
    } while (0)

/* The row walk of scatter_into for float32, float64 and int64 data in
 * row_layout's layout; false when it does not apply. */
static bool scatter_rows(yg_tensor *res,
                         int64_t d,
                         const yg_tensor *index,
                         const yg_tensor *src,
                         enum scatter_mode mode) {
    int64_t outer, k, s, inner;
    if (mode == SCATTER_VALUE || !row_layout(res, d, index, src, &outer, &k, &s, &inner))
        return false;
    const int64_t *idx = (const int64_t *)yg__tensor_ptr(index);
    const bool parallel = outer > 1 && outer * k * inner >= ROWS_PARALLEL_MIN;
    const bool add = mode == SCATTER_ADD;
    switch (res->dtype) {
    case YG_FLOAT32:
        SCATTER_ROWS(float, add);
        return true;
    case YG_FLOAT64:
        SCATTER_ROWS(double, add);
        return true;
    case YG_INT64: /* wraps as unsigned, as add_i64 on the machines we build for */
        SCATTER_ROWS(int64_t, add);
        return true;
    default:
        return false;
    }
}

/* res (a contiguous copy of self, or zeros) receives src or value at the
 * positions index names, by copy or addition. */
static void scatter_into(yg_tensor *res,
                         int64_t d,
                         const yg_tensor *index,
                         const yg_tensor *src,
                         double value,
                         enum scatter_mode mode) {
    int64_t c[YG_MAX_DIMS];
    int64_t n = numel(index);
    size_t esize = yg_dtype_size(res->dtype);
    add_elem_fn add = add_for(res->dtype);
    _Alignas(8) char vbuf[8];

    /* Nothing to write.  An empty index's other dims may be huge (its
     * sizes equal res's outside d): row_layout's outer would walk
     * billions of empty rows, or overflow (fuzz_ops: max.dim's backward of
     * [36854775808, 0, 0] ran for minutes).  Past this, outer * k * inner
     * is index's element count. */
    if (n == 0)
        return;
    if (scatter_rows(res, d, index, src, mode))
        return;
    if (mode == SCATTER_VALUE)
        yg__store_f64_as(vbuf, res->dtype, value);
    int64_t dd = res->ndim > 0 ? d : -1;
    for (int64_t i = 0; i < n; i++) {
        coords_of(i, index->sizes, index->ndim, c);
        int64_t k = *(const int64_t *)elem_at(index, c, -1, 0);
        char *dst = elem_at(res, c, dd, k);
        if (mode == SCATTER_VALUE)
            memcpy(dst, vbuf, esize);
        else if (mode == SCATTER_COPY)
            memcpy(dst, elem_at(src, c, -1, 0), esize);
        else
            add(dst, elem_at(src, c, -1, 0));
    }
}

static yg_status scatter(const char *op,
                         const yg_tensor *self,
                         int64_t dim,
                         const yg_tensor *index,
                         const yg_tensor *src,
                         double value,
                         enum scatter_mode mode,
                         yg_tensor *out) {
    int64_t d;

    YG_RETURN_IF_ERROR(yg__wrap_dim(op, "self", dim, self->ndim, &d));
    scatter_into(out, d, index, src, value, mode);
    return YG_OK;
}

yg_status yg__cpu_scatter_out(const yg_tensor *self,
                              int64_t dim,
                              const yg_tensor *index,
                              const yg_tensor *src,
                              yg_tensor *out) {
    return scatter("scatter", self, dim, index, src, 0, SCATTER_COPY, out);
}

yg_status yg__cpu_scatter_value_out(const yg_tensor *self,
                                    int64_t dim,
                                    const yg_tensor *index,
                                    double value,
                                    yg_tensor *out) {
    return scatter("scatter", self, dim, index, NULL, value, SCATTER_VALUE, out);
}

yg_status yg__cpu_scatter_add_out(const yg_tensor *self,
                                  int64_t dim,
                                  const yg_tensor *index,
                                  const yg_tensor *src,
                                  yg_tensor *out) {
    return scatter("scatter_add", self, dim, index, src, 0, SCATTER_ADD, out);
}

yg_status yg__cpu_gather_backward_out(const yg_tensor *grad_output,
                                      const int64_t *self_sizes,
                                      int64_t self_sizes_len,
                                      int64_t dim,
                                      const yg_tensor *index,
                                      yg_tensor *out) {
    (void)self_sizes;
    (void)self_sizes_len;
    return scatter("gather_backward", out, dim, index, grad_output, 0, SCATTER_ADD, out);
}

/* ---- embedding ---- */

yg_status yg__cpu_embedding_out(const yg_tensor *weight,
                                const yg_tensor *indices,
                                int64_t padding_idx,
                                yg_tensor *out) {
    int64_t c[YG_MAX_DIMS];

    (void)padding_idx; /* only the gradient treats the padding row apart */
    int64_t dim = weight->sizes[1], n = numel(indices);
    size_t esize = yg_dtype_size(weight->dtype);
    char *dst = yg__tensor_ptr(out);
    for (int64_t i = 0; i < n; i++) {
        coords_of(i, indices->sizes, indices->ndim, c);
        int64_t row = *(const int64_t *)elem_at(indices, c, -1, 0);
        int64_t wc[2] = {row, 0};
        for (int64_t j = 0; j < dim; j++) {
            wc[1] = j;
            memcpy(dst + (size_t)(i * dim + j) * esize, elem_at(weight, wc, -1, 0), esize);
        }
    }
    return YG_OK;
}

yg_status yg__cpu_embedding_backward_out(const yg_tensor *grad_output,
                                         const yg_tensor *indices,
                                         const int64_t *weight_sizes,
                                         int64_t weight_sizes_len,
                                         int64_t padding_idx,
                                         yg_tensor *out) {
    int64_t c[YG_MAX_DIMS], gc[YG_MAX_DIMS];

    (void)weight_sizes_len;
    int64_t dim = weight_sizes[1], n = numel(indices);
    if (index_add_rows(out, grad_output, indices, 1, n, weight_sizes[0], dim, padding_idx))
        return YG_OK;
    add_elem_fn add = add_for(grad_output->dtype);
    for (int64_t i = 0; i < n; i++) {
        coords_of(i, indices->sizes, indices->ndim, c);
        int64_t row = *(const int64_t *)elem_at(indices, c, -1, 0);
        if (row == padding_idx)
            continue;
        for (int32_t d = 0; d < indices->ndim; d++)
            gc[d] = c[d];
        for (int64_t j = 0; j < dim; j++) {
            int64_t rc[2] = {row, j};
            gc[indices->ndim] = j;
            add(elem_at(out, rc, -1, 0), elem_at(grad_output, gc, -1, 0));
        }
    }
    return YG_OK;
}
