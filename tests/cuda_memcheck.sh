#!/bin/sh
# cuda_memcheck.sh - runs the GPU test programs under compute-sanitizer's
# memcheck (out-of-bounds and misaligned device accesses, leaks of device
# memory, failing API calls); exits 1 on the first error it reports.
#
#   cuda_memcheck.sh <test_cuda> [<test program>...]
#
# Skips (a line CTest's SKIP_REGULAR_EXPRESSION matches) when the first
# program finds no device, or when no compute-sanitizer is installed (it
# comes with NVIDIA's toolkit packages: on PATH or in /usr/local/cuda/bin).
probe=$("$1" test_device_properties_and_bad_indices 2>&1)
case "$probe" in
*"skipped: "*)
    echo "$probe" | grep -o "skipped: .*" | head -n 1
    exit 0
    ;;
esac
san=$(command -v compute-sanitizer || true)
[ -z "$san" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && san=/usr/local/cuda/bin/compute-sanitizer
if [ -z "$san" ]; then
    echo "skipped: no compute-sanitizer on PATH or in /usr/local/cuda/bin"
    exit 0
fi
for prog in "$@"; do
    echo "== $san --tool memcheck $prog"
    "$san" --tool memcheck --leak-check full --error-exitcode 1 "$prog" || exit 1
done
echo "memcheck clean over $# programs"
