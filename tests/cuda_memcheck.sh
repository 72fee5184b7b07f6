#!/bin/sh
# cuda_memcheck.sh - runs the GPU test programs under compute-sanitizer's
# memcheck (out-of-bounds and misaligned device accesses, leaks of device
# memory, failing API calls); exits 1 on the first error it reports.
#
#   cuda_memcheck.sh <test_cuda> [<test program>...]
#
# Skips (exit status 77) when the first program finds no device (with
# YG_REQUIRE_GPU=1 that is a failure), or when no compute-sanitizer is
# installed (it comes with NVIDIA's toolkit packages: on PATH or in
# /usr/local/cuda/bin).
probe=$("$1" test_device_properties_and_bad_indices 2>&1)
rc=$?
if [ $rc -eq 77 ]; then
    echo "$probe" | grep -o "skipped: .*" | head -n 1
    exit 77
elif [ $rc -ne 0 ]; then
    echo "$probe"
    exit 1
fi
san=$(command -v compute-sanitizer || true)
[ -z "$san" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && san=/usr/local/cuda/bin/compute-sanitizer
if [ -z "$san" ]; then
    echo "skipped: no compute-sanitizer on PATH or in /usr/local/cuda/bin"
    exit 77
fi
for prog in "$@"; do
    echo "== $san --tool memcheck $prog"
    "$san" --tool memcheck --leak-check full --error-exitcode 1 "$prog" || exit 1
done
echo "memcheck clean over $# programs"
