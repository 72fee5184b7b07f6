/*
 * onnx.c - yagrad/onnx.h: forwards to the exporter (export.c, with its
 * table yg__onnx) in a build with ONNX; without it every export fails
 * from here with "built without ONNX" and no op is exportable.  This file
 * is built either way and includes nothing of the exporter's protobuf
 * bindings.
 */
#include "core/core.h"
#include "onnx/exporter.h"

#include <stdlib.h>

/* The exporter, when built with ONNX. */
static const yg__onnx_exporter *exporter(void) {
#ifdef YG_HAVE_ONNX
    return &yg__onnx;
#else
    return NULL;
#endif
}

static yg_status built_without(void) {
    return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                    "onnx_export: built without ONNX (configure with -DYG_WITH_ONNX=ON and "
                    "protobuf-c and libonnx-dev installed)");
}

bool yg_onnx_is_available(void) {
    return exporter() != NULL;
}

yg_status yg_onnx_export(const yg_graph *g,
                         yg_tensor *const *params,
                         int64_t n_params,
                         const yg_onnx_options *options,
                         const char *path) {
    if (exporter() == NULL)
        return built_without();
    return exporter()->export_file(g, params, n_params, options, path);
}

yg_status yg_onnx_export_to_buffer(const yg_graph *g,
                                   yg_tensor *const *params,
                                   int64_t n_params,
                                   const yg_onnx_options *options,
                                   uint8_t **out,
                                   size_t *out_len) {
    if (exporter() != NULL)
        return exporter()->export_to_buffer(g, params, n_params, options, out, out_len);
    if (out != NULL)
        *out = NULL;
    if (out_len != NULL)
        *out_len = 0;
    return built_without();
}

void yg_onnx_buffer_release(uint8_t *buf) {
    free(buf);
}

bool yg_onnx_op_exportable(const char *name, const char **onnx_op, const char **reason) {
    if (exporter() != NULL)
        return exporter()->op_exportable(name, onnx_op, reason);
    if (onnx_op != NULL)
        *onnx_op = NULL;
    if (reason != NULL)
        *reason = "built without ONNX";
    return false;
}
