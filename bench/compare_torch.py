#!/usr/bin/env python3
"""compare_torch.py - yagrad against PyTorch, side by side, in one run.

Runs each workload of issue 10's table (bench/bench_eager.c) in yagrad
(build/release/bench/bench_eager) and in PyTorch (bench/bench_eager_torch.py
under /usr/bin/python3), alternating the two processes round by round
(y, t, y, t, ...) so that a noisy neighbour or a clock change hits both
sides alike, at the same thread count.  Standard library only; PyTorch is
needed only for its side, and when `/usr/bin/python3 -c 'import torch'`
fails yagrad runs alone and this says so.

  cmake --preset release && cmake --build --preset release
  python3 bench/compare_torch.py [--threads 2] [--rounds 3] [--reps R]
      [--workloads softmax_fwd,mlp_step] [--build build/release] [--check]

stdout: every raw JSON line of both sides, then one summary line per
workload:
  {"bench":"compare","workload":"softmax_fwd","threads":2,
   "yagrad_us":..,"torch_us":..,"ratio":..,
   "yagrad_gbps":..,"torch_gbps":..,"triad_gbps":..,
   "yagrad_pct_triad":..,"torch_pct_triad":..}
where each *_us is the best (lowest) of the rounds' medians and ratio is
yagrad / torch (lower is better for yagrad); ratio_p10 is the same ratio
from the best of the rounds' 10th percentiles, which other work on the
cores disturbs less.  Memory-bound workloads carry
GB/s against the STREAM-like triad (a plain C loop, bench_eager triad),
measured in this same run; convolutions carry GFLOP/s against fma_peak
(a register-resident FMA loop in C, bench_eager fma_peak, no PyTorch
side), also measured in this run.  stderr: progress and a markdown table.

Both sides get OMP_NUM_THREADS and OPENBLAS_NUM_THREADS; PyTorch also
gets ATEN_CPU_CAPABILITY=avx512 when the CPU has avx512f, the OpenMP
build of OpenBLAS first in LD_LIBRARY_PATH (Debian's default (pthreads)
OpenBLAS spins its own threads against PyTorch's OpenMP ones for the
same cores) and tcmalloc preloaded when Debian's libtcmalloc-minimal4 is
installed, as PyTorch's CPU tuning guide advises (the log line says when
it is not).  Every summary also carries each side's peak resident memory
(yagrad_rss_mb, torch_rss_mb: the process's maximum RSS from wait4, the
largest over the rounds) and their ratio rss_ratio.

--check passes --check to both sides and compares the checksums of the
first round's outputs and gradients ([sum, sum |.|, sum of squares] in
float64): sums within 1e-3 of the sum of |.|, the other two within 1e-3
relative.  Exit status 1 when a check fails or a side fails to run.
"""
import argparse
import json
import os
import subprocess
import tempfile
import threading
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_PYTHON = "/usr/bin/python3"
OPENBLAS_OPENMP = "/usr/lib/x86_64-linux-gnu/openblas-openmp"
# PyTorch's CPU tuning guide preloads tcmalloc (Debian libtcmalloc-minimal4):
# on glibc's malloc its big buffers come back from the OS page by page.
TCMALLOC = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"
WORKLOADS = [
    "overhead_plain", "overhead_autograd", "overhead_backward",
    "mlp_step", "cnn_step", "lstm_fwd", "lstm_fwdbwd", "lstm_fused_fwd", "lstm_fused_fwdbwd",
    "chain_fwd", "chain_fwdbwd", "chain_fused_fwd", "chain_fused_fwdbwd",
    "softmax_fwd", "softmax_fwdbwd", "scaled_softmax_fwd", "scaled_softmax_fused_fwd",
    "log_softmax_fwd", "log_softmax_fwdbwd",
    "layer_norm_fwd", "layer_norm_fwdbwd", "add_layer_norm_fwd", "add_layer_norm_fused_fwd",
    "batch_norm_fwd", "batch_norm_fwdbwd",
    "max_pool_fwd", "max_pool_fwdbwd", "embedding_bwd", "index_add",
    "triad",
    "conv3x3_fwd", "conv3x3_fwdbwd", "conv1x1_fwd", "depthwise3x3_fwd", "conv_transpose2d_fwd",
    "attention",
    "fma_peak",
]
# Workloads whose lines carry gbps; the triad is run first when any is asked for.
MEMORY_BOUND = {"chain_fwd", "chain_fwdbwd", "chain_fused_fwd", "chain_fused_fwdbwd",
                "softmax_fwd", "scaled_softmax_fwd", "scaled_softmax_fused_fwd", "softmax_fwdbwd",
                "log_softmax_fwd", "log_softmax_fwdbwd", "layer_norm_fwd",
                "add_layer_norm_fwd", "add_layer_norm_fused_fwd",
                "layer_norm_fwdbwd", "batch_norm_fwd", "batch_norm_fwdbwd",
                "max_pool_fwd", "max_pool_fwdbwd", "embedding_bwd", "index_add"}
# Workloads whose lines carry gflops; fma_peak, the compute reference, is
# run first when any is asked for.
COMPUTE_BOUND = {"conv3x3_fwd", "conv3x3_fwdbwd", "conv1x1_fwd", "depthwise3x3_fwd",
                 "conv_transpose2d_fwd", "attention"}
# References without a PyTorch twin (a register-resident C loop): one side.
C_ONLY = {"fma_peak"}
TOL = 1e-3
TIMEOUT_S = 900


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def cpu_has_avx512f():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return "avx512f" in line.split()
    except OSError:
        pass
    return False


def torch_available():
    try:
        r = subprocess.run([TORCH_PYTHON, "-c", "import torch"], capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def environments(threads):
    base = dict(os.environ)
    base["OMP_NUM_THREADS"] = str(threads)
    base["OPENBLAS_NUM_THREADS"] = str(threads)
    torch_env = dict(base)
    if cpu_has_avx512f():
        torch_env["ATEN_CPU_CAPABILITY"] = "avx512"
    if os.path.isdir(OPENBLAS_OPENMP):
        old = torch_env.get("LD_LIBRARY_PATH")
        torch_env["LD_LIBRARY_PATH"] = OPENBLAS_OPENMP + (":" + old if old else "")
    if os.path.exists(TCMALLOC):
        old = torch_env.get("LD_PRELOAD")
        torch_env["LD_PRELOAD"] = TCMALLOC + (":" + old if old else "")
    return base, torch_env


def run_side(cmd, env):
    """Runs one side; returns its JSON line (a dict, with the process's
    peak resident memory added as "peak_rss_mb", from wait4) or None on
    failure."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, text=True)
        fired = []
        timer = threading.Timer(TIMEOUT_S, lambda: (fired.append(1), p.kill()))
        timer.start()
        try:
            _, status, usage = os.wait4(p.pid, 0)
        finally:
            timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if fired:
        log("timed out: %s" % " ".join(cmd))
        return None
    if p.returncode != 0:
        log("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), stderr.strip()))
        return None
    for line in stdout.splitlines():
        if line.startswith("{"):
            print(line, flush=True)
            d = json.loads(line)
            d["peak_rss_mb"] = round(usage.ru_maxrss / 1024.0, 1)  # Linux: KiB
            return d
    log("no JSON line from: %s" % " ".join(cmd))
    return None


def compare_checks(ours, theirs):
    """Names of the checksums that disagree (or are missing on one side)."""
    bad = []
    for name in sorted(set(ours) | set(theirs)):
        if name not in ours or name not in theirs:
            bad.append(name + " (missing)")
            continue
        (s0, a0, q0), (s1, a1, q1) = ours[name], theirs[name]
        scale = max(abs(a0), abs(a1), 1e-30)
        ok = abs(s0 - s1) <= TOL * scale
        ok = ok and abs(a0 - a1) <= TOL * scale
        ok = ok and abs(q0 - q1) <= TOL * max(abs(q0), abs(q1), 1e-30)
        if not ok:
            bad.append("%s ([%g, %g, %g] vs [%g, %g, %g])" % (name, s0, a0, q0, s1, a1, q1))
    return bad


def best(lines):
    """The line with the lowest median among a side's rounds, or None."""
    good = [l for l in lines if l is not None]
    return min(good, key=lambda l: l["median_us"]) if good else None


def best_p10(lines):
    good = [l["p10_us"] for l in lines if l is not None]
    return min(good) if good else None


def summarize(workload, threads, ours, theirs, triad_gbps, peak_gflops, check_result):
    b0, b1 = best(ours), best(theirs)
    name0 = b0["impl"] if b0 else "yagrad"
    s = {"bench": "compare", "workload": workload, "threads": threads}
    s[name0 + "_us"] = b0["median_us"] if b0 else None
    if theirs:
        s["torch_us"] = b1["median_us"] if b1 else None
        s["ratio"] = round(b0["median_us"] / b1["median_us"], 3) if b0 and b1 else None
        # The same from the best p10s: steadier when other work shares the
        # cores, since a rep that a preempted thread stalled only lengthens
        # the tail.
        p0, p1 = best_p10(ours), best_p10(theirs)
        s["ratio_p10"] = round(p0 / p1, 3) if p0 and p1 else None
    for key, line in ((name0, b0), ("torch", b1)):
        if line is not None and "gbps" in line:
            s[key + "_gbps"] = line["gbps"]
            if triad_gbps and workload != "triad":
                s[key + "_pct_triad"] = round(100.0 * line["gbps"] / triad_gbps, 1)
    if triad_gbps and workload != "triad" and workload in MEMORY_BOUND:
        s["triad_gbps"] = triad_gbps
    for key, line in ((name0, b0), ("torch", b1)):
        if line is not None and "gflops" in line:
            s[key + "_gflops"] = line["gflops"]
            if peak_gflops and workload in COMPUTE_BOUND:
                s[key + "_pct_peak"] = round(100.0 * line["gflops"] / peak_gflops, 1)
    if peak_gflops and workload in COMPUTE_BOUND:
        s["peak_gflops"] = peak_gflops
    # Peak resident memory of the whole process, the largest over the rounds.
    for key, lines in ((name0, ours), ("torch", theirs)):
        rss = [l["peak_rss_mb"] for l in lines if l is not None and "peak_rss_mb" in l]
        if rss:
            s[key + "_rss_mb"] = max(rss)
    if s.get(name0 + "_rss_mb") and s.get("torch_rss_mb"):
        s["rss_ratio"] = round(s[name0 + "_rss_mb"] / s["torch_rss_mb"], 3)
    if check_result is not None:
        s["check"] = check_result
    print(json.dumps(s, separators=(",", ":")), flush=True)
    return s


def fmt(v, digits=1):
    return "-" if v is None else "%.*f" % (digits, v)


def print_table(summaries, threads, with_torch, triad_gbps, peak_gflops):
    log("")
    log("yagrad vs PyTorch, %d threads, best of rounds' medians (us per rep; per op/node "
        "for overhead_*)%s" % (threads, "" if with_torch else " - PyTorch NOT available"))
    if triad_gbps:
        log("triad (plain C, OpenMP): %.1f GB/s" % triad_gbps)
    if peak_gflops:
        log("fma_peak (register-resident FMA loop, OpenMP): %.1f GFLOP/s" % peak_gflops)
    log("")
    log("| workload | yagrad us | torch us | yagrad/torch | same, from p10s "
        "| yagrad GB/s (% triad) | torch GB/s (% triad) "
        "| yagrad GFLOP/s (% peak) | torch GFLOP/s (% peak) | peak RSS MB yagrad / torch "
        "| check |")
    log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for s in summaries:
        ours_us = s.get("yagrad_us", s.get("c_us"))
        digits = 3 if s["workload"].startswith("overhead") else 1

        def bw(key):
            if key + "_gbps" not in s:
                return "-"
            pct = s.get(key + "_pct_triad")
            return "%.1f" % s[key + "_gbps"] + (" (%.0f%%)" % pct if pct is not None else "")

        def fl(key):
            if key + "_gflops" not in s:
                return "-"
            pct = s.get(key + "_pct_peak")
            return "%.1f" % s[key + "_gflops"] + (" (%.0f%%)" % pct if pct is not None else "")

        ours_key = "c" if "c_us" in s else "yagrad"
        name = s["workload"] + (" (C loop)" if ours_key == "c" else "")
        log("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s |" % (
            name, fmt(ours_us, digits), fmt(s.get("torch_us"), digits),
            fmt(s.get("ratio"), 2), fmt(s.get("ratio_p10"), 2), bw(ours_key), bw("torch"),
            fl(ours_key), fl("torch"), fmt(s.get(ours_key + "_rss_mb"), 0),
            fmt(s.get("torch_rss_mb"), 0),
            s.get("check", "-") if isinstance(s.get("check", "-"), str) else "FAIL"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3, help="processes per side per workload")
    ap.add_argument("--reps", type=int, default=None,
                    help="timed reps per process (default: each workload's own)")
    ap.add_argument("--workloads", default=",".join(WORKLOADS),
                    help="comma-separated, from: " + ",".join(WORKLOADS))
    ap.add_argument("--build", default="build/release", help="build directory (of the repo)")
    ap.add_argument("--check", action="store_true",
                    help="compare output/gradient checksums of both sides")
    args = ap.parse_args()

    workloads = [w for w in args.workloads.split(",") if w]
    unknown = [w for w in workloads if w not in WORKLOADS]
    if unknown:
        ap.error("unknown workloads: %s" % ",".join(unknown))
    if any(w in MEMORY_BOUND for w in workloads) and "triad" not in workloads:
        workloads.insert(0, "triad")
    elif "triad" in workloads:  # the reference first, so later lines can cite it
        workloads.remove("triad")
        workloads.insert(0, "triad")
    if "fma_peak" in workloads or any(w in COMPUTE_BOUND for w in workloads):
        if "fma_peak" in workloads:
            workloads.remove("fma_peak")
        workloads.insert(0, "fma_peak")

    build = args.build if os.path.isabs(args.build) else os.path.join(ROOT, args.build)
    exe = os.path.join(build, "bench", "bench_eager")
    if not os.access(exe, os.X_OK):
        sys.exit("compare_torch: %s not found; build first:\n"
                 "  cmake --preset release && cmake --build --preset release" % exe)
    torch_script = os.path.join(ROOT, "bench", "bench_eager_torch.py")
    with_torch = torch_available()
    if not with_torch:
        log("compare_torch: `%s -c 'import torch'` failed: running yagrad alone" % TORCH_PYTHON)
    env, torch_env = environments(args.threads)
    log("compare_torch: %d threads, %d rounds, torch side: ATEN_CPU_CAPABILITY=%s, "
        "LD_LIBRARY_PATH=%s, LD_PRELOAD=%s" % (
            args.threads, args.rounds, torch_env.get("ATEN_CPU_CAPABILITY", "(default)"),
            torch_env.get("LD_LIBRARY_PATH", ""),
            torch_env.get("LD_PRELOAD", "(none: install libtcmalloc-minimal4, as PyTorch's "
                                        "tuning guide advises)")))
    load_before = os.getloadavg()

    extra = (["--reps", str(args.reps)] if args.reps else []) + (["--check"] if args.check else [])
    summaries, triad_gbps, peak_gflops, failed = [], None, None, False
    for w in workloads:
        log("compare_torch: %s" % w)
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours.append(run_side([exe] + extra + [w], env))
            if with_torch and w not in C_ONLY:
                theirs.append(run_side([TORCH_PYTHON, torch_script] + extra + [w], torch_env))
        failed = failed or any(l is None for l in ours + theirs)
        check_result = None
        if args.check and theirs and ours[0] is not None and theirs[0] is not None:
            bad = compare_checks(ours[0].get("check", {}), theirs[0].get("check", {}))
            check_result = "ok" if not bad else bad
            if bad:
                failed = True
                log("compare_torch: %s: checksums differ: %s" % (w, "; ".join(bad)))
        s = summarize(w, args.threads, ours, theirs, triad_gbps, peak_gflops, check_result)
        if w == "triad":
            triad_gbps = s.get("c_gbps")
        if w == "fma_peak":
            peak_gflops = s.get("c_gflops")
        summaries.append(s)
    print_table(summaries, args.threads, with_torch, triad_gbps, peak_gflops)
    # Other processes on the same cores make both sides slower and noisier
    # (OpenMP barriers spin on a preempted thread): say how busy it was.
    log("\nload average (1 min) before: %.2f, after: %.2f on %d CPUs"
        % (load_before[0], os.getloadavg()[0], os.cpu_count() or 0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
