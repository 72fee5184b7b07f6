#!/usr/bin/env bash
# gpu-check.sh - the one check to run first on a machine with an NVIDIA
# GPU: what the machine is, every cuda-labelled test with a missing GPU
# counted as a failure (YG_REQUIRE_GPU=1), then the memcheck runs
# (labelled memcheck; YG_GPU_CHECK_MEMCHECK=0 leaves them out), the GPU
# benchmarks, and one summary at the end.
#
#   scripts/gpu-check.sh [BUILD_DIR]
#
# BUILD_DIR (default build/dev) is used as it is when it holds a build
# (carried over from another machine, say: the CUDA module and the test
# programs are in it); otherwise the dev preset configures and builds it.
# Everything it prints also goes to BUILD_DIR/gpu-check.log; the summary
# is the last block.  Exit status: 0 when every cuda test passed, 1 when
# one failed or none could run, 2 on a usage or build error.
#
# On a machine without a GPU it goes as far as it can and says where it
# stopped: the tests then fail, naming why there is no usable device.
set -u
cd "$(dirname "$0")/.."
build=${1:-build/dev}
log=$build/gpu-check.log
mkdir -p "$build" || exit 2
: > "$log"
say() { printf '%s\n' "$*" | tee -a "$log"; }
run() { "$@" 2>&1 | tee -a "$log"; return "${PIPESTATUS[0]}"; }
start=$(date +%s)

say "== gpu-check $(git rev-parse --short HEAD 2>/dev/null || echo '?') on $(hostname), $(date -u +%FT%TZ)"
say "== the machine"
if command -v nvidia-smi > /dev/null; then
    run nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
else
    say "nvidia-smi: not found (no NVIDIA driver installed?)"
fi
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [ -x "$nvcc" ]; then
    run "$nvcc" --version | tail -n 1
else
    say "nvcc: not found"
fi

say "== the build ($build)"
if [ -f "$build/CMakeCache.txt" ] && [ -f "$build/tests/test_cuda" ]; then
    say "using the build found there"
    if [ "$build" = build/dev ]; then
        run cmake --build --preset dev > /dev/null || { say "the build failed"; exit 2; }
    fi
else
    run cmake --preset dev > /dev/null || { say "configuring failed"; exit 2; }
    run cmake --build --preset dev > /dev/null || { say "the build failed"; exit 2; }
fi
if ! ls "$build"/libyagrad_cuda.so* > /dev/null 2>&1; then
    say "this build has no CUDA module (built without the CUDA toolkit): nothing to check"
    exit 1
fi

say "== the cuda tests (YG_REQUIRE_GPU=1: a missing GPU fails them)"
YG_REQUIRE_GPU=1 run ctest --test-dir "$build" -L cuda -LE memcheck -j "$(nproc)" \
    --output-on-failure --timeout 600
tests_rc=$?
summary=$(grep -E '^[0-9]+% tests passed|tests failed out of' "$log" | tail -n 1)

# Each test program under compute-sanitizer, one test at a time (far
# slower: each program's CTest has its own TIMEOUT; YG_GPU_CHECK_MEMCHECK=0
# leaves them out when minutes are short).
memcheck_summary="left out (YG_GPU_CHECK_MEMCHECK=0)"
memcheck_rc=0
if [ "${YG_GPU_CHECK_MEMCHECK:-1}" != 0 ]; then
    say "== memcheck (compute-sanitizer, tests/cuda_memcheck_allow.txt)"
    YG_REQUIRE_GPU=1 run ctest --test-dir "$build" -L memcheck -j 3 --output-on-failure
    memcheck_rc=$?
    memcheck_summary=$(grep -E '^[0-9]+% tests passed|tests failed out of' "$log" | tail -n 1)
fi

say "== the benchmarks"
bench_out=""
if [ -x "$build/bench/bench_cuda" ]; then
    bench_out=$(run "$build/bench/bench_cuda")
else
    say "bench_cuda: not built (the release preset builds bench/)"
fi

end=$(date +%s)
say ""
say "== summary ($((end - start)) s)"
say "tests: ${summary:-none ran} (ctest exit status $tests_rc)"
say "memcheck: ${memcheck_summary:-none ran} (ctest exit status $memcheck_rc)"
reason=$(grep -m 1 -o 'no usable GPU: .*' "$log")
[ -n "$reason" ] && say "why: $reason"
notes=$(grep -E '^[[:space:]]+[0-9]+ - .*\((Failed|Timeout|Skipped)\)$' "$log" | sort -u -n -k1,1 | head -n 60)
[ -n "$notes" ] && say "$notes"
if [ -n "$bench_out" ]; then
    say "benchmarks (bench_cuda, JSON lines):"
    printf '%s\n' "$bench_out" | grep '"bench":"cuda"' | sed 's/^/  /' | tee -a "$log"
fi
if [ "$tests_rc" -ne 0 ] || [ "$memcheck_rc" -ne 0 ]; then
    exit 1
fi
exit 0
