#!/usr/bin/env python3
"""Checks that clang accepts the C the library is built from.

The build compiles with GCC; the fuzz build (fuzz/, libFuzzer) needs
clang, so a construct GCC takes and clang refuses (an extension, or a
clang bug) breaks it without any GCC build noticing.  It did:
`static yg_kernel_ref ref = {"yg__cuda_sum", NULL}`, core/backend.h.  This runs clang -fsyntax-only -pedantic-errors over every
C file of runtime/, gen/ and gen's output (the real and the golden spec's)
with the flags, definitions and include folders the build gave it, taken
from the build's compile_commands.json.  Only errors fail: clang's own
warnings (GCC attributes it ignores, say) are printed, not fatal.

usage: check_clang_c11.py CLANG SOURCE_DIR BUILD_DIR
       check_clang_c11.py --catches CLANG SOURCE_DIR BUILD_DIR
The second form checks the check: a file with the initialiser above must
be refused.  Exit status 77 (skipped) when CLANG is not installed.
"""
import concurrent.futures
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

SKIP = 77

# Flags of GCC's that clang does not know or must not get here.
GCC_ONLY = {"-fvect-cost-model=dynamic", "-fno-tree-sink"}
# Flags followed by an argument that only concerns the object file.
DROP_WITH_ARG = {"-o", "-MT", "-MF", "-MQ"}
DROP = {"-c", "-MD", "-MMD", "-Werror"}


def clang_args(clang, command):
    """The entry's compiler line for clang, checking syntax only."""
    argv = shlex.split(command)
    out = [clang]
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in DROP_WITH_ARG:
            i += 2
            continue
        i += 1
        if a in DROP or a in GCC_ONLY or a.startswith("-Werror="):
            continue
        out.append(a)
    return out + ["-std=c11", "-fsyntax-only", "-pedantic-errors"]


def entries(src, build):
    """compile_commands.json's C files of runtime/, gen/ and gen's output."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        db = json.load(f)
    roots = [os.path.join(src, "runtime") + os.sep, os.path.join(src, "gen") + os.sep,
             os.path.join(build, "generated") + os.sep,
             os.path.join(build, "tests", "gen", "golden") + os.sep]
    seen = set()
    for e in db:
        path = os.path.normpath(os.path.join(e["directory"], e["file"]))
        if not path.endswith(".c") or not any(path.startswith(r) for r in roots):
            continue
        if "command" not in e:  # "arguments" form (not written by Ninja/Makefiles)
            e["command"] = shlex.join(e["arguments"])
        key = (path, e["command"].split(" -o ")[0])
        if key in seen:
            continue
        seen.add(key)
        yield path, e


def check(clang, path, e):
    args = clang_args(clang, e["command"])
    r = subprocess.run(args, cwd=e["directory"], capture_output=True, text=True)
    return path, r.returncode, r.stderr


def main(argv):
    catches = argv[1:2] == ["--catches"]
    if catches:
        argv = argv[:1] + argv[2:]
    if len(argv) != 4:
        sys.exit(__doc__)
    clang, src, build = argv[1:]
    if shutil.which(clang) is None:
        print(f"SKIPPED: {clang} is not installed (scripts/install-deps.sh installs it); "
              "nothing checks that clang, and so the fuzz build, accepts the sources")
        return SKIP
    if not os.path.exists(os.path.join(build, "compile_commands.json")):
        print(f"SKIPPED: no compile_commands.json in {build} (written by the Ninja and "
              "Makefile generators): nothing to take the build's flags from")
        return SKIP
    files = list(entries(src, build))
    if not files:
        print(f"no runtime/ or generated C file in {build}/compile_commands.json")
        return 1
    if catches:
        return check_catches(clang, src, files)
    jobs = 2  # as the test's PROCESSORS (tests/CMakeLists.txt)
    failed = []
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for path, rc, err in pool.map(lambda pe: check(clang, *pe), files):
            if rc != 0:
                failed.append((path, err))
    for path, err in failed:
        print(f"--- {clang} refuses {os.path.relpath(path, src)}:\n{err}")
    print(f"{clang} -std=c11 -fsyntax-only -pedantic-errors: {len(files) - len(failed)} of "
          f"{len(files)} compilations accepted")
    if failed:
        print("GCC accepts these, clang does not: the fuzz build (fuzz/CMakeLists.txt) stops "
              "there.  Write what both accept (generated files: change gen/, then "
              "`cmake --build --preset dev --target regenerate`).")
        return 1
    return 0


def check_catches(clang, src, files):
    """The old kernel-ref initialiser, compiled with a generated file's
    flags, must be refused."""
    path, e = next((p, e) for p, e in files if os.sep + "api" + os.sep in p)
    with tempfile.TemporaryDirectory() as tmp:
        bad = os.path.join(tmp, "kernel_ref.c")
        with open(bad, "w") as f:
            f.write('#include "core/backend.h"\n\n'
                    "yg_status yg__kernel_ref_probe(yg_kernel_fn *out);\n"
                    "yg_status yg__kernel_ref_probe(yg_kernel_fn *out)\n{\n"
                    '    static yg_kernel_ref ref = {"yg__cuda_sum", NULL};\n\n'
                    '    return yg__backend_kernel("sum", YG_CUDA, &ref, out);\n}\n')
        e = dict(e, command=e["command"].replace(e["file"], bad))
        _, rc, err = check(clang, bad, e)
    if rc != 0 and "not a compile-time constant" in err:
        print(f"refused as expected:\n{err}")
        return 0
    print(f"{clang} accepted (or refused for another reason) a file the check must refuse "
          f"(status {rc}):\n{err}")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
