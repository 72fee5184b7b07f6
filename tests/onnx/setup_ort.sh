#!/usr/bin/env bash
# CTest fixture onnx.ort_setup: installs the npm package onnxruntime-node
# into DIR (the build tree) unless it is there already.  Its CPU binaries
# ship in the package; ONNXRUNTIME_NODE_INSTALL=skip skips the install
# script's CUDA download.  Exits 77 (skip) when npm is missing or the
# registry cannot be reached, so the checker tests still run offline and
# the onnxruntime tests skip with the reason.
set -u
dir="$1"
version="1.30.0"
if [ -f "$dir/node_modules/onnxruntime-node/package.json" ]; then
    echo "onnxruntime-node already installed in $dir"
    exit 0
fi
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
    echo "SKIP: node/npm not found; install Node.js to run the onnxruntime tests"
    exit 77
fi
mkdir -p "$dir"
if ! ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$dir" --no-audit --no-fund \
        --fetch-retries=1 --fetch-timeout=30000 \
        "onnxruntime-node@$version" >"$dir/npm-install.log" 2>&1; then
    echo "SKIP: npm install onnxruntime-node@$version failed (offline?); see $dir/npm-install.log:"
    tail -5 "$dir/npm-install.log"
    exit 77
fi
echo "installed onnxruntime-node@$version into $dir"
