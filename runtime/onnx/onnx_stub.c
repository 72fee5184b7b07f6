/*
 * onnx_stub.c - yagrad/onnx.h for a library configured with
 * -DYG_WITH_ONNX=OFF (cmake/Onnx.cmake): every export fails with
 * YG_ERR_NOT_IMPLEMENTED saying so, and no op is exportable.
 */
#include "core/core.h"
#include "yagrad/onnx.h"

bool yg_onnx_is_available(void) {
    return false;
}

static yg_status off(void) {
    return yg__fail(YG_ERR_NOT_IMPLEMENTED,
                    "onnx_export: built without ONNX (configure with -DYG_WITH_ONNX=ON and "
                    "protobuf-c and libonnx-dev installed)");
}

yg_status yg_onnx_export(const yg_graph *g,
                         yg_tensor *const *params,
                         int64_t n_params,
                         const yg_onnx_options *options,
                         const char *path) {
    (void)g;
    (void)params;
    (void)n_params;
    (void)options;
    (void)path;
    return off();
}

yg_status yg_onnx_export_to_buffer(const yg_graph *g,
                                   yg_tensor *const *params,
                                   int64_t n_params,
                                   const yg_onnx_options *options,
                                   uint8_t **out,
                                   size_t *out_len) {
    (void)g;
    (void)params;
    (void)n_params;
    (void)options;
    if (out != NULL)
        *out = NULL;
    if (out_len != NULL)
        *out_len = 0;
    return off();
}

void yg_onnx_buffer_release(uint8_t *buf) {
    (void)buf;
}

bool yg_onnx_op_exportable(const char *name, const char **onnx_op, const char **reason) {
    (void)name;
    if (onnx_op != NULL)
        *onnx_op = NULL;
    if (reason != NULL)
        *reason = "built without ONNX";
    return false;
}
