/*
 * yagrad/safetensors.h - saving and loading tensors in the safetensors
 * format (https://github.com/huggingface/safetensors), the format of the
 * model.safetensors files of the Hugging Face hub.
 *
 * A file is an 8-byte little-endian unsigned header length N, then N bytes
 * of UTF-8 JSON, an object mapping each tensor's name to
 * {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]} (and the
 * optional key "__metadata__" to an object of string values), then the
 * tensors' bytes: little-endian, row-major, each in [begin, end) counted
 * from the first byte after the header.
 *
 * yg_safetensors_save writes named tensors (any device, any strides) and
 * string metadata to a file.  yg_safetensors_open (a file) and
 * yg_safetensors_open_buffer (bytes in memory) return a handle, opaque,
 * released with yg_safetensors_close, after reading and checking the
 * whole header; then any tensor can be listed, looked at (dtype, shape),
 * read into a new tensor (yg_safetensors_get) or into an existing one
 * (yg_safetensors_read_into), each read going straight from the file
 * (pread) to the tensor's memory: the file is never copied whole.
 *
 * dtypes: F64, F32, F16, BF16, I64, I32 and BOOL are yagrad's float64,
 * float32, float16, bfloat16, int64, int32 and bool.  A file may also hold
 * the format's other dtypes (U8, I8, I16, U16, U32, U64, C64, F8_E4M3,
 * F8_E5M2, F8_E8M0, F6_E2M3, F6_E3M2, F4): it opens, they are listed
 * (yg_safetensors_info_of), and reading one of them fails with
 * YG_ERR_DTYPE naming the tensor and its dtype.  A dtype the format does
 * not define fails the open.
 *
 * What open refuses (YG_ERR_INVALID_ARGUMENT, the message naming the
 * tensor and the problem), as the format's reference implementation does:
 * a file shorter than 8 bytes; a header longer than 100,000,000 bytes or
 * running past the end of the file; a header that is not valid JSON
 * (jansson's message, with line and column), not an object, or has a key
 * twice (a tensor name given twice); an entry that is not an object with
 * a known "dtype", a "shape" of non-negative integers and "data_offsets"
 * [begin, end] with begin <= end; an end past the data; byte sizes that
 * are not numel * element size; tensors that overlap, leave a hole
 * between them or do not end where the file ends; a "__metadata__" that
 * is not an object of strings.  I/O failures give YG_ERR_IO.
 *
 * Byte order: the format is little-endian; on a big-endian host
 * yg_safetensors_save, _open and _open_buffer fail with
 * YG_ERR_NOT_IMPLEMENTED (nothing is swapped).
 *
 * Thread safety: a handle does not change after open, so several threads
 * may read tensors from one handle at once (each into its own
 * destination); close it once, after them.
 *
 * Errors: see status.h.  Anything not declared here is not API.
 */
#ifndef YAGRAD_SAFETENSORS_H
#define YAGRAD_SAFETENSORS_H

#include "yagrad/status.h"
#include "yagrad/tensor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct yg_safetensors yg_safetensors;

/* Writes tensors to path as a safetensors file, atomically: into a new
 * file beside path (its name path + ".tmp.<pid>.<n>", mode 0666 less the
 * umask) that is renamed over path once complete, so path is either the
 * old file or the whole new one.  The header lists "__metadata__" first
 * (when metadata_len > 0), then the tensors in data order: by element
 * size, largest first (alignment), then by name (bytewise), as the
 * reference writer does; it is padded with spaces to a multiple of 8
 * bytes.  Each tensor's values are written as they are (any strides, CPU
 * or GPU: a non-contiguous or GPU tensor is copied to a contiguous host
 * tensor first, one at a time).
 *   path:            borrowed, NUL-terminated
 *   names:           borrowed array of tensors_len NUL-terminated UTF-8
 *                    names, distinct, none "__metadata__"
 *   tensors:         borrowed array of tensors_len tensors (not NULL)
 *   tensors_len:     >= 0 (0 writes a file with no tensors)
 *   metadata_keys:   borrowed array of metadata_len UTF-8 keys, distinct;
 *                    nullable when metadata_len == 0
 *   metadata_values: borrowed array of metadata_len UTF-8 values
 *   metadata_len:    >= 0
 * Returns: YG_ERR_INVALID_ARGUMENT for a NULL argument, a negative
 *          length, a name given twice or named "__metadata__", a metadata
 *          key given twice, or text that is not UTF-8 (each names the
 *          offending entry); YG_ERR_IO when the file cannot be written
 *          (path unchanged, the temporary removed); YG_ERR_DEVICE when a
 *          GPU tensor cannot be copied; YG_ERR_OUT_OF_MEMORY. */
YG_NODISCARD yg_status yg_safetensors_save(const char *path,
                                           const char *const *names,
                                           yg_tensor *const *tensors,
                                           int64_t tensors_len,
                                           const char *const *metadata_keys,
                                           const char *const *metadata_values,
                                           int64_t metadata_len);

/* Opens a safetensors file: reads and checks the header (every check of
 * the top of this file) and keeps the file open for reads.
 *   path: borrowed, NUL-terminated
 *   out:  out: new handle, release with yg_safetensors_close
 * Returns: YG_ERR_INVALID_ARGUMENT for a NULL argument or a malformed
 *          file ("safetensors_open: 'model.safetensors': tensor \"w\":
 *          data_offsets [0, 20] hold 20 bytes, but shape [2, 3] of F32
 *          needs 24"); YG_ERR_IO when the file cannot be opened or read;
 *          YG_ERR_OUT_OF_MEMORY.  On failure *out is NULL. */
YG_NODISCARD yg_status yg_safetensors_open(const char *path, yg_safetensors **out);

/* As yg_safetensors_open, over len bytes in memory (a whole file's
 * contents); messages say "buffer" where they would name the file.
 *   data: borrowed; must stay valid and unchanged until the handle is
 *         closed (reads copy from it); nullable when len == 0
 *   len:  its length in bytes
 *   out:  out: new handle, release with yg_safetensors_close
 * Returns: as yg_safetensors_open (no YG_ERR_IO). */
YG_NODISCARD yg_status yg_safetensors_open_buffer(const void *data,
                                                  size_t len,
                                                  yg_safetensors **out);

/* Closes the file and frees the handle; the names, dtype names, sizes and
 * metadata strings it returned are invalid after it.  NULL-safe.  Cannot
 * fail. */
void yg_safetensors_close(yg_safetensors *f);

/* The number of tensors in the file; 0 for NULL.  Cannot fail. */
int64_t yg_safetensors_count(const yg_safetensors *f);

/* The name of tensor i, the tensors ordered by name (bytewise, as
 * strcmp); NULL for NULL or i out of [0, count).  Borrowed, valid while f
 * is open.  Cannot fail. */
const char *yg_safetensors_name(const yg_safetensors *f, int64_t i);

/* What the header says of one tensor. */
typedef struct yg_safetensors_info {
    const char *dtype_name; /* the format's spelling: "F32", "U8", ...; borrowed, valid while
                               the handle is open */
    bool dtype_supported;   /* whether yagrad has this dtype (top of this file) */
    yg_dtype dtype;         /* yagrad's dtype when dtype_supported, else YG_DTYPE_COUNT_ */
    int64_t ndim;           /* any rank (yg_safetensors_get refuses more than YG_MAX_DIMS) */
    const int64_t *sizes;   /* ndim entries (NULL when ndim is 0); borrowed, as dtype_name */
    int64_t numel;          /* the product of sizes (1 for a 0-d tensor) */
    int64_t nbytes;         /* end - begin of data_offsets */
} yg_safetensors_info;

/* Fills *out with what the header says of the tensor name.
 *   f: borrowed;  name: borrowed;  out: out: filled (borrowed pointers)
 * Returns: YG_ERR_INVALID_ARGUMENT for a NULL argument; YG_ERR_INDEX when
 *          the file has no tensor of that name ("safetensors_info: no
 *          tensor \"x\" in 'model.safetensors' (3 tensors)").  On failure
 *          *out is zeroed. */
YG_NODISCARD yg_status yg_safetensors_info_of(const yg_safetensors *f,
                                              const char *name,
                                              yg_safetensors_info *out);

/* Reads the tensor name into a new contiguous CPU tensor of the file's
 * dtype and shape (no autograd history).
 *   f: borrowed;  name: borrowed;  out: out: new ref
 * Returns: YG_ERR_INVALID_ARGUMENT for a NULL argument; YG_ERR_INDEX for
 *          no such tensor; YG_ERR_DTYPE for a dtype yagrad does not have
 *          ("safetensors_get: tensor \"mask\" has dtype U8, which yagrad
 *          does not have (it reads F64, F32, F16, BF16, I64, I32, BOOL)");
 *          YG_ERR_SHAPE for more than YG_MAX_DIMS dims or an empty shape
 *          whose contiguous strides overflow int64 ([0, 2^62, 4], which
 *          no yagrad tensor can have); YG_ERR_IO when
 *          the file cannot be read (it changed since open);
 *          YG_ERR_OUT_OF_MEMORY.  On failure *out is NULL. */
YG_NODISCARD yg_status yg_safetensors_get(const yg_safetensors *f,
                                          const char *name,
                                          yg_tensor **out);

/* Reads the tensor name into dst, which must have the file's dtype and
 * shape (any strides, any device: through a host copy when dst is not a
 * contiguous CPU tensor): loading parameters into a model built before.
 * The write is not recorded by autograd, as a copy with grad mode off
 * (dst may be a leaf that requires grad); dst's version counter is
 * bumped, as by an in-place op, so a graph that saved dst refuses to run
 * backward through the old value.  A BOOL byte other than 0 reads as
 * true (1), here and in yg_safetensors_get.
 *   f: borrowed;  name: borrowed;  dst: in-out
 * Returns: as yg_safetensors_get, and YG_ERR_SHAPE / YG_ERR_DTYPE when
 *          dst's shape or dtype differs, naming the tensor and both
 *          ("safetensors_read_into: tensor \"w\" is [2, 3] in the file,
 *          but dst is [3, 2]").  Every check runs before anything is
 *          written; a read error (YG_ERR_IO) may leave dst partly
 *          written. */
YG_NODISCARD yg_status yg_safetensors_read_into(const yg_safetensors *f,
                                                const char *name,
                                                yg_tensor *dst);

/* The number of "__metadata__" entries; 0 for NULL.  Cannot fail. */
int64_t yg_safetensors_metadata_count(const yg_safetensors *f);

/* The key of metadata entry i, in header order; NULL for NULL or i out
 * of range.  Borrowed, valid while f is open.  Cannot fail. */
const char *yg_safetensors_metadata_key(const yg_safetensors *f, int64_t i);

/* The value of metadata key, or NULL when f is NULL or has no such key.
 * Borrowed, valid while f is open.  Cannot fail. */
const char *yg_safetensors_metadata(const yg_safetensors *f, const char *key);

#ifdef __cplusplus
}
#endif
#endif /* YAGRAD_SAFETENSORS_H */
