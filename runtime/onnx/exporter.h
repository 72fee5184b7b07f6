/*
 * exporter.h - the exporter as onnx/onnx.c, which is yagrad/onnx.h in
 * every build, reaches it: export.c's table, in a build with ONNX.  Each
 * field is the public function of yagrad/onnx.h it stands for, with its
 * contract.  Private to runtime/onnx/.
 */
#ifndef YAGRAD_ONNX_EXPORTER_H
#define YAGRAD_ONNX_EXPORTER_H

#include "yagrad/onnx.h"

typedef struct yg__onnx_exporter {
    __typeof__(yg_onnx_export) *export_file;
    __typeof__(yg_onnx_export_to_buffer) *export_to_buffer;
    __typeof__(yg_onnx_op_exportable) *op_exportable;
} yg__onnx_exporter;

/* export.c (built with ONNX). */
extern const yg__onnx_exporter yg__onnx;

#endif /* YAGRAD_ONNX_EXPORTER_H */
