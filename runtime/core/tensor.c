/*
 * tensor.c - yg_tensor and yg_storage: creation, reference counting,
 * views, inspection, and the shape helpers every module shares
 * (dim wrapping, broadcasting, size formatting, dtype promotion).
 *
 * A tensor is a header (sizes, strides, offset, dtype) over a refcounted
 * storage; views share the storage and hence its version counter.  Sizes
 * and strides live inline (YG_MAX_DIMS) so creating a view costs one
 * small allocation.  Reference counts are atomic; everything else about a
 * tensor is immutable after creation except its autograd state.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "core/core.h"
#include "yagrad/autograd.h"
#include "yagrad/ops_dtype_conversion.h"

/* ---- dtypes and devices ---- */

const char *yg_dtype_name(yg_dtype dtype)
{
    switch (dtype) {
    case YG_FLOAT32:
        return "float32";
    case YG_FLOAT64:
        return "float64";
    case YG_INT64:
        return "int64";
    case YG_BOOL:
        return "bool";
    case YG_INT32:
        return "int32";
    case YG_FLOAT16:
        return "float16";
    case YG_BFLOAT16:
        return "bfloat16";
    default:
        return "unknown";
    }
}

size_t yg_dtype_size(yg_dtype dtype)
{
    switch (dtype) {
    case YG_FLOAT32:
        return 4;
    case YG_FLOAT64:
        return 8;
    case YG_INT64:
        return 8;
    case YG_BOOL:
        return 1;
    case YG_INT32:
        return 4;
    case YG_FLOAT16:
    case YG_BFLOAT16:
        return 2;
    default:
        return 0;
    }
}

const char *yg__device_name(yg_device device)
{
    switch (device) {
    case YG_CPU:
        return "cpu";
    case YG_CUDA:
        return "cuda";
    default:
        return "unknown";
    }
}

yg_dtype yg__promote_types(yg_dtype a, yg_dtype b)
{
    /* The enum is not ordered by rank; rank explicitly.  float16 and
     * bfloat16 share a rank: neither holds the other, so together they
     * promote to float32 (as in PyTorch). */
    static const int rank[YG_DTYPE_COUNT_] = {[YG_BOOL] = 0,
                                              [YG_INT32] = 1,
                                              [YG_INT64] = 2,
                                              [YG_FLOAT16] = 3,
                                              [YG_BFLOAT16] = 3,
                                              [YG_FLOAT32] = 4,
                                              [YG_FLOAT64] = 5};
    if (a != b && rank[a] == rank[b])
        return YG_FLOAT32;
    return rank[a] >= rank[b] ? a : b;
}

/* ---- storage ---- */

static yg_status
storage_new(const char *op, yg_device device, int32_t index, size_t nbytes, yg_storage **out)
{
    yg_storage *s = malloc(sizeof *s);
    if (s == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "out of memory allocating a storage");
    if (device != YG_CPU) {
        const yg_device_backend *b = NULL;
        yg_status st = yg__backend(op, device, &b);
        if (st == YG_OK)
            st = b->alloc(op, index, nbytes, &s->data);
        if (st != YG_OK) {
            free(s);
            return st;
        }
    } else {
        s->data = yg__alloc(nbytes);
        if (s->data == NULL) {
            free(s);
            return yg__fail(YG_ERR_OUT_OF_MEMORY, "out of memory allocating %zu bytes", nbytes);
        }
        index = 0;
    }
    atomic_init(&s->refcount, 1);
    atomic_init(&s->version, 0);
    s->nbytes = nbytes;
    s->device = device;
    s->device_index = index;
    *out = s;
    return YG_OK;
}

static void storage_release(yg_storage *s)
{
    if (s == NULL || atomic_fetch_sub(&s->refcount, 1) != 1)
        return;
    if (s->device != YG_CPU)
        yg__backend_of(s->device)->free(s->device_index, s->data);
    else
        yg__free(s->data, s->nbytes);
    free(s);
}

/* ---- creation ---- */

/* Serials of tensor headers (core.h); 64 bits never wrap. */
static atomic_uint_fast64_t next_serial = 1;

uint64_t yg__tensor_next_serial(void)
{
    return atomic_load(&next_serial);
}

static yg_status check_geometry(const char *op, const int64_t *sizes, int64_t ndim, yg_dtype dtype,
                                int64_t *numel)
{
    if (ndim < 0 || ndim > YG_MAX_DIMS)
        return yg__fail(YG_ERR_SHAPE, "%s: ndim %" PRId64 " out of range [0, %d]", op, ndim,
                        YG_MAX_DIMS);
    if (ndim > 0 && sizes == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: sizes is NULL with ndim %" PRId64, op, ndim);
    if ((unsigned)dtype >= YG_DTYPE_COUNT_)
        return yg__fail(YG_ERR_DTYPE, "%s: invalid dtype %d", op, (int)dtype);
    /* numel <= YG__MAX_NUMEL, so numel * dtype size cannot overflow. */
    return yg__sizes_numel(op, "size", sizes, ndim, numel);
}

yg_status yg__tensor_new(const char *op, const int64_t *sizes, int64_t ndim, yg_dtype dtype,
                         yg_tensor **out)
{
    return yg__tensor_new_on(op, sizes, ndim, dtype, YG_CPU, 0, out);
}

yg_status yg__tensor_new_on(const char *op, const int64_t *sizes, int64_t ndim, yg_dtype dtype,
                            yg_device device, int32_t device_index, yg_tensor **out)
{
    int64_t numel = 0, strides[YG_MAX_DIMS];
    yg_tensor *t;
    yg_status st;

    *out = NULL;
    if ((unsigned)device >= YG_DEVICE_COUNT_)
        return yg__fail(YG_ERR_DEVICE, "%s: invalid device %d", op, (int)device);
    YG_RETURN_IF_ERROR(check_geometry(op, sizes, ndim, dtype, &numel));
    /* Strides before any allocation: an empty tensor whose strides do not
     * fit int64 is refused (as PyTorch's "Stride calculation overflowed"),
     * one whose strides fit exists however large its other sizes. */
    YG_RETURN_IF_ERROR(yg__sizes_strides(op, sizes, ndim, strides));
    t = calloc(1, sizeof *t);
    if (t == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
    st = storage_new(op, device, device_index, (size_t)numel * yg_dtype_size(dtype), &t->storage);
    if (st != YG_OK) {
        free(t);
        return st;
    }
    atomic_init(&t->refcount, 1);
    t->serial = atomic_fetch_add(&next_serial, 1);
    t->ndim = (int32_t)ndim;
    t->dtype = dtype;
    for (int64_t i = 0; i < ndim; i++) {
        t->sizes[i] = sizes[i];
        t->strides[i] = strides[i];
    }
    *out = t;
    return YG_OK;
}

/* memset(p, 0, n), over OpenMP's threads when n is large: one thread
 * writes a few GB/s into memory the allocator recycled, and a zeroed
 * gradient of a large embedding (GPT-2's: 154 MB) would take it
 * milliseconds alone. */
static void zero_bytes(void *p, size_t n)
{
    const size_t chunk = (size_t)1 << 20;
    if (n < 4 * chunk) {
        memset(p, 0, n);
        return;
    }
    const int64_t parts = (int64_t)((n + chunk - 1) / chunk);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < parts; i++) {
        size_t at = (size_t)i * chunk;
        memset((char *)p + at, 0, n - at < chunk ? n - at : chunk);
    }
}

yg_status yg__tensor_zeros_on(const char *op, const int64_t *sizes, int64_t ndim, yg_dtype dtype,
                              yg_device device, int32_t device_index, yg_tensor **out)
{
    yg_tensor *t = NULL;
    yg_status st = YG_OK;

    YG_RETURN_IF_ERROR(yg__tensor_new_on(op, sizes, ndim, dtype, device, device_index, &t));
    if (t->storage->nbytes == 0) {
        *out = t;
        return YG_OK;
    }
    if (device == YG_CPU)
        zero_bytes(t->storage->data, t->storage->nbytes);
    else /* the tensor exists: its backend is registered */
        st = yg__backend_of(device)->memset(op, device_index, t->storage->data, 0,
                                            t->storage->nbytes);
    if (st != YG_OK) {
        yg_release(t);
        return st;
    }
    *out = t;
    return YG_OK;
}

yg_status yg_tensor_empty(const int64_t *sizes, int64_t ndim, yg_dtype dtype, yg_tensor **out)
{
    YG_RETURN_IF_ERROR(yg__check_out("empty", "out", out));
    return yg__tensor_new("empty", sizes, ndim, dtype, out);
}

yg_status yg_tensor_zeros(const int64_t *sizes, int64_t ndim, yg_dtype dtype, yg_tensor **out)
{
    YG_RETURN_IF_ERROR(yg__check_out("zeros", "out", out));
    YG_RETURN_IF_ERROR(yg__tensor_new("zeros", sizes, ndim, dtype, out));
    zero_bytes((*out)->storage->data, (*out)->storage->nbytes);
    return YG_OK;
}

static void fill(yg_tensor *t, double value)
{
    int64_t n = yg_tensor_numel(t);
    void *d = t->storage->data;
    switch (t->dtype) {
    case YG_FLOAT32:
        for (int64_t i = 0; i < n; i++)
            ((float *)d)[i] = (float)value;
        break;
    case YG_FLOAT64:
        for (int64_t i = 0; i < n; i++)
            ((double *)d)[i] = value;
        break;
    case YG_INT64:
        for (int64_t i = 0; i < n; i++)
            ((int64_t *)d)[i] = yg__i64_from_f64(value);
        break;
    case YG_BOOL:
        memset(d, value != 0, (size_t)n);
        break;
    default:
        /* int32, float16, bfloat16: convert once, then copy the bits. */
        for (int64_t i = 0; i < n; i++)
            yg__store_f64_as((char *)d + i * (int64_t)yg_dtype_size(t->dtype), t->dtype, value);
        break;
    }
}

yg_status yg_tensor_full(const int64_t *sizes, int64_t ndim, double value, yg_dtype dtype,
                         yg_tensor **out)
{
    YG_RETURN_IF_ERROR(yg__check_out("full", "out", out));
    YG_RETURN_IF_ERROR(yg__tensor_new("full", sizes, ndim, dtype, out));
    fill(*out, value);
    return YG_OK;
}

yg_status yg_tensor_scalar(double value, yg_dtype dtype, yg_tensor **out)
{
    YG_RETURN_IF_ERROR(yg__check_out("scalar", "out", out));
    YG_RETURN_IF_ERROR(yg__tensor_new("scalar", NULL, 0, dtype, out));
    fill(*out, value);
    return YG_OK;
}

yg_status yg_tensor_from_data(const void *data, const int64_t *sizes, int64_t ndim, yg_dtype dtype,
                              yg_tensor **out)
{
    YG_RETURN_IF_ERROR(yg__check_out("from_data", "out", out));
    YG_RETURN_IF_ERROR(yg__tensor_new("from_data", sizes, ndim, dtype, out));
    if ((*out)->storage->nbytes > 0) {
        if (data == NULL) {
            int64_t n = yg_tensor_numel(*out);
            yg_release(*out);
            *out = NULL;
            return yg__fail(YG_ERR_INVALID_ARGUMENT,
                            "from_data: data is NULL for %" PRId64 " elements", n);
        }
        memcpy((*out)->storage->data, data, (*out)->storage->nbytes);
    }
    return YG_OK;
}

yg_status yg__tensor_empty_like(const yg_tensor *t, yg_dtype dtype, yg_tensor **out)
{
    *out = NULL;
    return yg__tensor_new_on("empty_like", t->sizes, t->ndim, dtype, t->storage->device,
                             t->storage->device_index, out);
}

yg_status yg__tensor_view(const char *op, const yg_tensor *t, const int64_t *sizes,
                          const int64_t *strides, int32_t ndim, int64_t offset, yg_tensor **out)
{
    yg_tensor *v;
    size_t esize = yg_dtype_size(t->dtype);

    *out = NULL;
    if (ndim < 0 || ndim > YG_MAX_DIMS)
        return yg__fail(YG_ERR_SHAPE, "%s: ndim %d out of range [0, %d]", op, (int)ndim,
                        YG_MAX_DIMS);
    YG_RETURN_IF_ERROR(yg__geometry_check(op, sizes, strides, ndim, offset,
                                          (int64_t)(t->storage->nbytes / (esize ? esize : 1))));
    v = calloc(1, sizeof *v);
    if (v == NULL)
        return yg__fail(YG_ERR_OUT_OF_MEMORY, "%s: out of memory", op);
    atomic_init(&v->refcount, 1);
    v->serial = atomic_fetch_add(&next_serial, 1);
    atomic_fetch_add(&t->storage->refcount, 1);
    v->storage = t->storage;
    v->offset = offset;
    v->ndim = ndim;
    v->dtype = t->dtype;
    for (int32_t i = 0; i < ndim; i++) {
        v->sizes[i] = sizes[i];
        v->strides[i] = strides[i];
    }
    *out = v;
    return YG_OK;
}

yg_status yg__tensor_alias(const yg_tensor *t, yg_tensor **out)
{
    return yg__tensor_view("alias", t, t->sizes, t->strides, t->ndim, t->offset, out);
}

/* ---- reference counting ---- */

yg_tensor *yg_retain(yg_tensor *t)
{
    if (t != NULL)
        atomic_fetch_add(&t->refcount, 1);
    return t;
}

void yg_release(yg_tensor *t)
{
    if (t == NULL || atomic_fetch_sub(&t->refcount, 1) != 1)
        return;
    yg__autograd_meta_free(t->autograd);
    storage_release(t->storage);
    free(t);
}

void yg_release_list(yg_tensor **items, int64_t len)
{
    if (items == NULL)
        return;
    for (int64_t i = 0; i < len; i++)
        yg_release(items[i]);
    free(items);
}

void yg__tensor_bump_version(const yg_tensor *t)
{
    atomic_fetch_add(&t->storage->version, 1);
}

uint32_t yg__tensor_version(const yg_tensor *t)
{
    return atomic_load(&t->storage->version);
}

/* ---- inspection ---- */

int64_t yg_tensor_ndim(const yg_tensor *t)
{
    return t ? t->ndim : 0;
}

const int64_t *yg_tensor_sizes(const yg_tensor *t)
{
    return t ? t->sizes : NULL;
}

const int64_t *yg_tensor_strides(const yg_tensor *t)
{
    return t ? t->strides : NULL;
}

int64_t yg_tensor_size(const yg_tensor *t, int64_t dim)
{
    if (t == NULL)
        return 0;
    if (dim < 0)
        dim += t->ndim;
    return dim >= 0 && dim < t->ndim ? t->sizes[dim] : 0;
}

int64_t yg_tensor_numel(const yg_tensor *t)
{
    /* Every header passed yg__geometry_check: the product fits. */
    return t ? yg__sizes_product(t->sizes, t->ndim) : 0;
}

yg_dtype yg_tensor_dtype(const yg_tensor *t)
{
    return t ? t->dtype : YG_FLOAT32;
}

yg_device yg_tensor_device(const yg_tensor *t)
{
    return t ? t->storage->device : YG_CPU;
}

int32_t yg_tensor_device_index(const yg_tensor *t)
{
    return t ? t->storage->device_index : 0;
}

char *yg__format_device(const yg_tensor *t, char *buf, size_t buf_len)
{
    if (t != NULL && t->storage->device == YG_CUDA)
        snprintf(buf, buf_len, "cuda:%d", (int)t->storage->device_index);
    else
        snprintf(buf, buf_len, "%s", yg__device_name(yg_tensor_device(t)));
    return buf;
}

yg_status yg__require_host(const char *op, const char *arg, const yg_tensor *t)
{
    char dev[32];
    if (t == NULL || t->storage->device == YG_CPU)
        return YG_OK;
    return yg__fail(YG_ERR_DEVICE,
                    "%s: %s is on %s; this needs a cpu tensor (copy it with yg_tensor_to_device)",
                    op,
                    arg,
                    yg__format_device(t, dev, sizeof dev));
}

yg_status yg__tensor_to(const yg_tensor *t, yg_device device, int32_t index, yg_tensor **out)
{
    yg_tensor *src = NULL, *res = NULL;
    yg_status st = YG_OK;

    *out = NULL;
    if (t->storage->device == device && t->storage->device_index == index &&
        yg_tensor_is_contiguous(t)) {
        *out = yg_retain((yg_tensor *)t);
        return YG_OK;
    }
    /* A view is gathered on its own device first (a strided copy there);
     * on the device it is on already, that copy is the result. */
    YG_RETURN_IF_ERROR(yg__tensor_contiguous_as(t, t->dtype, true, &src));
    if (t->storage->device == device && t->storage->device_index == index) {
        *out = src;
        return YG_OK;
    }
    st = yg__tensor_new_on("to_device", t->sizes, t->ndim, t->dtype, device, index, &res);
    if (st == YG_OK && res->storage->nbytes > 0) {
        size_t n = (size_t)yg_tensor_numel(t) * yg_dtype_size(t->dtype);
        /* The backend of the side that is not the host copies. */
        yg_device dev = device != YG_CPU ? device : src->storage->device;
        st = yg__backend_of(dev)->memcpy("to_device",
                                         yg__tensor_ptr(res),
                                         device == YG_CPU ? -1 : index,
                                         yg__tensor_ptr(src),
                                         src->storage->device == YG_CPU
                                             ? -1
                                             : src->storage->device_index,
                                         n);
    }
    yg_release(src);
    if (st != YG_OK) {
        yg_release(res);
        return st;
    }
    *out = res;
    return YG_OK;
}

yg_status yg_tensor_to_device(const yg_tensor *t, yg_device device, int32_t index,
                              yg_tensor **out)
{
    YG_RETURN_IF_ERROR(yg__check_out("to_device", "out", out));
    YG_RETURN_IF_ERROR(yg__check_defined("to_device", "t", t));
    if ((unsigned)device >= YG_DEVICE_COUNT_)
        return yg__fail(YG_ERR_DEVICE, "to_device: invalid device %d", (int)device);
    if (device == YG_CPU)
        index = 0;
    bool moves = t->storage->device != device || t->storage->device_index != index ||
                 !yg_tensor_is_contiguous(t);
    /* A copy that must carry history is the to_device op's. */
    if (moves && yg_is_grad_enabled() && yg_tensor_requires_grad(t))
        return yg_to_device(t, device, index, out);
    return yg__tensor_to(t, device, index, out);
}

bool yg_tensor_is_contiguous(const yg_tensor *t)
{
    int64_t expected = 1;
    if (t == NULL)
        return false;
    /* Empty tensors first: their sizes' products need not fit. */
    if (yg_tensor_numel(t) == 0)
        return true;
    for (int32_t i = t->ndim - 1; i >= 0; i--) {
        if (t->sizes[i] != 1 && t->strides[i] != expected)
            return false;
        /* The header's numel fits, so this product does (sizes.h). */
        expected *= t->sizes[i];
    }
    return true;
}

void *yg_tensor_data(const yg_tensor *t)
{
    return t ? yg__tensor_ptr(t) : NULL;
}

yg_status yg_tensor_to_f64(const yg_tensor *t, double *dst, int64_t dst_len)
{
    yg_tensor *c = NULL;
    int64_t n;
    char buf[128];

    YG_RETURN_IF_ERROR(yg__check_defined("to_f64", "t", t));
    n = yg_tensor_numel(t);
    if (dst_len != n)
        return yg__fail(YG_ERR_SHAPE, "to_f64: dst has %" PRId64 " elements, t %s has %" PRId64,
                        dst_len, yg__format_sizes(t->sizes, t->ndim, buf, sizeof buf), n);
    if (t->storage->device != YG_CPU) { /* read through a host copy */
        yg_tensor *host = NULL;
        yg_status st;
        YG_RETURN_IF_ERROR(yg__tensor_to(t, YG_CPU, 0, &host));
        st = yg_tensor_to_f64(host, dst, dst_len);
        yg_release(host);
        return st;
    }
    YG_RETURN_IF_ERROR(yg__tensor_contiguous_as(t, YG_FLOAT64, true, &c));
    if (n > 0)
        memcpy(dst, yg__tensor_ptr(c), (size_t)n * sizeof(double));
    yg_release(c);
    return YG_OK;
}

yg_status yg_tensor_item(const yg_tensor *t, double *out)
{
    char buf[128];
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "item: out-parameter out is NULL");
    *out = 0;
    YG_RETURN_IF_ERROR(yg__check_defined("item", "t", t));
    if (yg_tensor_numel(t) != 1)
        return yg__fail(YG_ERR_SHAPE, "item: expected a tensor with one element, got %s",
                        yg__format_sizes(t->sizes, t->ndim, buf, sizeof buf));
    return yg_tensor_to_f64(t, out, 1);
}

char *yg_tensor_format_sizes(const yg_tensor *t, char *buf, size_t buf_len)
{
    if (t == NULL)
        return yg__format_sizes(NULL, 0, buf, buf_len);
    return yg__format_sizes(t->sizes, t->ndim, buf, buf_len);
}

/* ---- shared shape helpers ---- */

char *yg__format_sizes(const int64_t *sizes, int64_t ndim, char *buf, size_t buf_len)
{
    size_t pos = 0;
    if (buf_len == 0)
        return buf;
    buf[0] = '\0';
    pos += (size_t)snprintf(buf, buf_len, "[");
    for (int64_t i = 0; i < ndim && pos < buf_len; i++)
        pos += (size_t)snprintf(buf + pos, buf_len - pos, i ? ", %" PRId64 : "%" PRId64,
                                sizes[i]);
    if (pos < buf_len)
        snprintf(buf + pos, buf_len - pos, "]");
    return buf;
}

yg_status yg__wrap_dim(const char *op, const char *arg, int64_t dim, int64_t ndim, int64_t *out)
{
    int64_t n = ndim > 0 ? ndim : 1; /* a 0-dim tensor accepts dim 0 and -1 */
    if (dim < -n || dim >= n)
        return yg__fail(YG_ERR_INDEX,
                        "%s: dim %" PRId64 " out of range for %s with %" PRId64
                        " dims (expected [%" PRId64 ", %" PRId64 "])",
                        op, dim, arg, ndim, -n, n - 1);
    *out = dim < 0 ? dim + n : dim;
    return YG_OK;
}

yg_status yg__broadcast_shapes(const char *op, const char *aname, const int64_t *asizes,
                               int64_t andim, const char *bname, const int64_t *bsizes,
                               int64_t bndim, int64_t *out_sizes, int64_t *out_ndim)
{
    int64_t n = andim > bndim ? andim : bndim;
    int64_t result[YG_MAX_DIMS];
    if (n > YG_MAX_DIMS)
        return yg__fail(YG_ERR_SHAPE, "%s: broadcast result has %" PRId64 " dims (max %d)", op, n,
                        YG_MAX_DIMS);
    for (int64_t i = 0; i < n; i++) {
        int64_t ai = andim - n + i, bi = bndim - n + i;
        int64_t a = ai >= 0 ? asizes[ai] : 1;
        int64_t b = bi >= 0 ? bsizes[bi] : 1;
        if (a != b && a != 1 && b != 1) {
            char abuf[128], bbuf[128];
            return yg__fail(YG_ERR_SHAPE, "%s: cannot broadcast %s %s with %s %s", op, aname,
                            yg__format_sizes(asizes, andim, abuf, sizeof abuf), bname,
                            yg__format_sizes(bsizes, bndim, bbuf, sizeof bbuf));
        }
        result[i] = a == 1 ? b : a;
    }
    /* Written last: out_sizes may alias asizes or bsizes. */
    for (int64_t i = 0; i < n; i++)
        out_sizes[i] = result[i];
    *out_ndim = n;
    return YG_OK;
}

yg_status yg__check_defined(const char *op, const char *arg, const yg_tensor *t)
{
    if (t == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: %s is undefined (NULL)", op, arg);
    return YG_OK;
}

yg_status yg__check_out(const char *op, const char *name, yg_tensor **out)
{
    if (out == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: out-parameter %s is NULL", op, name);
    *out = NULL;
    return YG_OK;
}

yg_status yg__check_list_out(const char *op, const char *name, yg_tensor ***out, int64_t *out_len)
{
    if (out == NULL || out_len == NULL)
        return yg__fail(YG_ERR_INVALID_ARGUMENT, "%s: out-parameter %s%s is NULL", op, name,
                        out == NULL ? "" : "_len");
    *out = NULL;
    *out_len = 0;
    return YG_OK;
}

yg_status yg__check_not_half(const char *op, const char *arg, const yg_tensor *t)
{
    if (t != NULL && yg__dtype_is_half(t->dtype))
        return yg__fail(YG_ERR_DTYPE,
                        "%s: %s has dtype %s, a storage type on cpu: convert it with to() to "
                        "float32 first",
                        op, arg, yg_dtype_name(t->dtype));
    return YG_OK;
}

yg_status yg__check_floating(const char *op, const char *arg, const yg_tensor *t)
{
    if (!yg__dtype_is_floating(t->dtype))
        return yg__fail(YG_ERR_DTYPE,
                        "%s: unsupported dtype %s for %s (supported: float32, float64)",
                        op,
                        yg_dtype_name(t->dtype),
                        arg);
    return YG_OK;
}

yg_status yg__check_sizes_match(const char *op,
                                const char *name,
                                const yg_tensor *t,
                                const yg_tensor *self)
{
    char tbuf[128], sbuf[128];

    if (t->ndim == self->ndim &&
        memcmp(t->sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim) == 0)
        return YG_OK;
    return yg__fail(YG_ERR_SHAPE, "%s: %s %s does not match self %s", op, name,
                    yg__format_sizes(t->sizes, t->ndim, tbuf, sizeof tbuf),
                    yg__format_sizes(self->sizes, self->ndim, sbuf, sizeof sbuf));
}
