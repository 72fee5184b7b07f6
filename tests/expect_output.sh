#!/bin/sh
# expect_output.sh - runs a command for CTest and passes only when it
# exits 0 and its output matches a pattern (CTest's PASS_REGULAR_EXPRESSION
# alone ignores the exit status, so an error after the expected line
# would pass).  Status 77 (a skip: no GPU, say) is passed on as it is,
# or is a failure with YG_REQUIRE_GPU=1 (the examples skip only for want
# of a GPU).
#
#   expect_output.sh <extended regex> <command> [args...]
pattern=$1
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ $rc -eq 77 ]; then
    if [ -n "$YG_REQUIRE_GPU" ] && [ "$YG_REQUIRE_GPU" != 0 ]; then
        echo "FAIL: skipped, but YG_REQUIRE_GPU=$YG_REQUIRE_GPU" >&2
        exit 1
    fi
    exit 77
fi
if [ $rc -ne 0 ]; then
    echo "FAIL: exit status $rc" >&2
    exit 1
fi
if ! printf '%s\n' "$out" | grep -Eq "$pattern"; then
    echo "FAIL: the output has no line matching /$pattern/" >&2
    exit 1
fi
