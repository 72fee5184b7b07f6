#!/usr/bin/python3
"""layer_norm and batch_norm (float32) in yagrad builds and PyTorch, interleaved.

Runs bench_norms of each yagrad build given (e.g. an old and a new one) and
the same workloads in PyTorch, round after round in one process, at the
same thread count, and prints each median and the ratios to PyTorch.

  OMP_NUM_THREADS=2 ATEN_CPU_CAPABILITY=avx512 \\
  LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp:$LD_LIBRARY_PATH \\
  bench/norms_vs_torch.py new=build/release/bench/bench_norms old=/tmp/old/bench_norms
"""
import json
import os
import statistics
import subprocess
import sys
import time

import torch

THREADS = int(os.environ.get("OMP_NUM_THREADS", "2"))
ROUNDS, REPEATS = 3, 20


def torch_times():
    torch.set_num_threads(THREADS)
    out = {}
    for backward in (False, True):
        x = torch.rand(4096, 1024, requires_grad=backward)
        w = torch.rand(1024, requires_grad=backward)
        b = torch.rand(1024, requires_grad=backward)
        g = torch.rand(4096, 1024)

        def ln():
            with torch.set_grad_enabled(backward):
                y = torch.nn.functional.layer_norm(x, (1024,), w, b, 1e-5)
                if backward:
                    torch.autograd.grad(y, (x, w, b), g)

        bx = torch.rand(32, 64, 56, 56, requires_grad=backward)
        bw = torch.rand(64, requires_grad=backward)
        bb = torch.rand(64, requires_grad=backward)
        rm, rv, bg = torch.rand(64), torch.rand(64), torch.rand(32, 64, 56, 56)

        def bn():
            with torch.set_grad_enabled(backward):
                y = torch.nn.functional.batch_norm(bx, rm, rv, bw, bb, True, 0.1, 1e-5)
                if backward:
                    torch.autograd.grad(y, (bx, bw, bb), bg)

        suffix = " fwd+bwd" if backward else " fwd"
        for name, f in (("layer_norm 4096x1024" + suffix, ln), ("batch_norm train 32x64x56x56" + suffix, bn)):
            f()
            ts = []
            for _ in range(REPEATS):
                t0 = time.perf_counter()
                f()
                ts.append(time.perf_counter() - t0)
            out[name] = 1e3 * statistics.median(ts)
    return out


def yagrad_times(exe):
    res = subprocess.run([exe, str(REPEATS)], check=True, capture_output=True, text=True)
    return {d["bench"]: d["median_ms"] for d in map(json.loads, res.stdout.splitlines())}


def main():
    builds = dict(arg.split("=", 1) for arg in sys.argv[1:])
    runs = {name: [] for name in ["torch"] + list(builds)}
    for _ in range(ROUNDS):
        runs["torch"].append(torch_times())
        for name, exe in builds.items():
            runs[name].append(yagrad_times(exe))
    best = {name: {k: min(r[k] for r in rs) for k in rs[0]} for name, rs in runs.items()}
    print(f"threads {THREADS}, torch {torch.__version__}, best of {ROUNDS} rounds of median-of-{REPEATS} (ms)")
    cols = ["torch"] + list(builds)
    print(f"{'workload':40s}" + "".join(f"{c:>10s}" for c in cols) + "".join(f"{c + '/torch':>12s}" for c in builds))
    for k in best["torch"]:
        line = f"{k:40s}" + "".join(f"{best[c][k]:10.2f}" for c in cols)
        line += "".join(f"{best[c][k] / best['torch'][k]:12.2f}" for c in builds)
        print(line)


if __name__ == "__main__":
    main()
