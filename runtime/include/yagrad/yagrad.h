/*
 * yagrad/yagrad.h - the whole public C API of yagrad.
 *
 * yagrad is a tensor library with reverse-mode autodiff whose ops are
 * generated from specs/native_functions.yaml and specs/derivatives.yaml.
 *
 *   status.h    status codes, yg_last_error()
 *   tensor.h    yg_tensor: create, inspect, retain/release
 *   cpu.h       the CPU capability (baseline, AVX2, AVX-512) kernels run at
 *   conv.h      the convolution backends: which one ran, forcing one
 *   autograd.h  requires_grad, yg_backward, grad mode
 *   ops.h       every op (generated): yg_add, yg_mm, yg_log_softmax, ...
 *   optim.h     optimizers: SGD, Adam, AdamW
 *   random.h    yg_generator: seeded Philox streams for the random ops
 *   jit.h       the graph IR: build, print/parse, lint, passes, dumps
 *   onnx.h      export a graph as an ONNX model
 *   safetensors.h  save and load tensors in the safetensors format
 *   distributed.h  process groups over MPI, collectives, data parallelism
 *   version.h   YG_VERSION_*, yg_version(), yg_build_info() (generated)
 *
 * Conventions, everywhere: functions return yg_status; results come back
 * through trailing out-parameters as new references; inputs are borrowed.
 */
#ifndef YAGRAD_YAGRAD_H
#define YAGRAD_YAGRAD_H

#include "yagrad/autograd.h"
#include "yagrad/conv.h"
#include "yagrad/cpu.h"
#include "yagrad/cuda.h"
#include "yagrad/distributed.h"
#include "yagrad/jit.h"
#include "yagrad/onnx.h"
#include "yagrad/ops.h"
#include "yagrad/optim.h"
#include "yagrad/random.h"
#include "yagrad/safetensors.h"
#include "yagrad/status.h"
#include "yagrad/tensor.h"
#include "yagrad/version.h"

#endif /* YAGRAD_YAGRAD_H */
