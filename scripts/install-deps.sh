#!/usr/bin/env bash
# Installs what yagrad needs to build and test on Debian 12.  Idempotent:
# packages already present are not fetched again.  Needs root (or sudo).
set -euo pipefail

pkgs=(
    cmake ninja-build gcc pkg-config
    libyaml-dev           # gen: YAML loading with node positions
    libclang-14-dev       # gen: derivative formulas parsed as C
    clang-14              # sanitizer presets; fuzz/ (libFuzzer); CTest build.sources_compile_with_clang
    libomp-14-dev         # fuzz/ and the clang check: <omp.h> for clang (GCC's is its own)
    libopenblas-openmp-dev  # mm; OpenMP build shares the library's thread pool
    libsleef-dev          # vectorised exp/tanh/erf/... in the CPU kernels
    libjansson-dev        # safetensors: the JSON header, parsed and written with jansson
    libdnnl-dev           # oneDNN 2.6: the float32 convolution backend (optional to CMake)
    libcmocka-dev         # test framework
    graphviz              # jit dump test: `dot -Tsvg` over yg_graph_to_dot output
    python3-jsonschema    # jit dump test: JSON dumps checked against tools/ir_graph.schema.json
    python3-numpy         # opinfo.forward_values_match_numpy: NumPy references of every op
    chromium              # jit dump test: tools/ir_viewer.html rendered in a real (headless) browser
    libprotobuf-c-dev     # ONNX export: protobuf-c runtime for the bindings protoc-c generates
    protobuf-c-compiler   # ONNX export: protoc-c, run at build time over onnx.proto
    libonnx-dev           # ONNX export: /usr/include/onnx/onnx.proto (the bindings' source)
    python3-onnx          # ONNX tests: onnx.checker.check_model(full_check=True) on exported models
    libopenmpi-dev        # distributed: MPI process groups (optional to CMake, YG_WITH_MPI)
    openmpi-bin           # distributed tests: mpirun launches the multi-rank tests
)
# The onnxruntime tests run the npm package onnxruntime-node under Node.js;
# CTest's onnx.ort_setup fixture installs it into the build tree with npm
# (tests/onnx/setup_ort.sh) and the tests skip, saying why, without them.

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all packages present"
    exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
