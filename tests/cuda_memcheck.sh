#!/bin/sh
# cuda_memcheck.sh - runs one GPU test program under compute-sanitizer's
# memcheck, one test function at a time: out-of-bounds and misaligned
# device accesses, hardware exceptions, failing CUDA API calls and leaks
# of device memory.  Exits 0 when every error it reports is on the
# allow-list, 1 otherwise (printing the sanitizer's report), 77 (skipped)
# when there is no device or no compute-sanitizer.
#
#   cuda_memcheck.sh PROBE ALLOW PROGRAM TEST...
#
# PROBE: test_cuda, whose test_device_properties_and_bad_indices says
# whether a device is usable (with YG_REQUIRE_GPU=1 a missing one is a
# failure).  ALLOW: the allow-list (tests/cuda_memcheck_allow.txt): lines
# "<test function or *> <extended regex>", each reported error line
# matching a regex of its test being a deliberate one; '#' starts a
# comment.  Each test runs in its own process, so one that skips (77:
# it needs two GPUs, say) skips alone, and a test's errors are its own.
# Each runs with YG_CUDA_RESET_AT_EXIT=1: at exit the test harness gives
# back every cache and resets the devices (yg_cuda_release_all), so what
# the leak check reports was really lost.  YG_MEMCHECK_TIMEOUT (seconds,
# default 600) bounds each test: instrumented kernels run 10-100 times
# slower.
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
allow=$2
prog=$3
shift 3
limit=${YG_MEMCHECK_TIMEOUT:-600}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
failed=0
passed=0
skipped=""
for t in "$@"; do
    YG_CUDA_RESET_AT_EXIT=1 timeout "$limit" "$san" --tool memcheck --leak-check full \
        --print-limit 200 "$prog" "$t" > "$out" 2>&1
    rc=$?
    if [ $rc -eq 77 ]; then
        skipped="$skipped $t"
        continue
    fi
    # "ERROR SUMMARY: 3 errors": every error the tool reported.
    total=$(sed -n 's/.*ERROR SUMMARY: \([0-9][0-9]*\) error.*/\1/p' "$out" | tail -n 1)
    # The reported lines of errors on the allow-list for this test.
    allowed=0
    while read -r name regex; do
        case "$name" in '' | '#'*) continue ;; esac
        if [ "$name" = "$t" ] || [ "$name" = "*" ]; then
            n=$(grep -c -E "^=+ .*($regex)" "$out")
            allowed=$((allowed + n))
        fi
    done < "$allow"
    if [ $rc -eq 124 ]; then
        why="timed out after $limit s under memcheck (YG_MEMCHECK_TIMEOUT)"
    elif [ -z "$total" ]; then
        why="no ERROR SUMMARY from compute-sanitizer (exit status $rc)"
    elif [ "$total" -gt "$allowed" ]; then
        why="$((total - allowed)) error(s) not on the allow-list ($total reported, $allowed allowed)"
    elif [ $rc -ne 0 ]; then
        why="the test failed under memcheck (exit status $rc)"
    else
        passed=$((passed + 1))
        echo "ok   $t ($total allowed error(s))"
        continue
    fi
    failed=$((failed + 1))
    echo "FAIL $t: $why"
    cat "$out"
done
[ -n "$skipped" ] && echo "skipped (the test itself skipped):$skipped"
echo "memcheck of $(basename "$prog"): $passed clean, $failed failed"
[ $failed -eq 0 ] || exit 1
exit 0
