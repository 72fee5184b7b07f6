#!/usr/bin/env python3
"""Runs bench_train (yagrad) and the same workloads in PyTorch, interleaved,
and prints each workload's medians and the ratio yagrad / PyTorch.

Usage: OMP_NUM_THREADS=2 ATEN_CPU_CAPABILITY=avx512 \
  LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp:$LD_LIBRARY_PATH \
  /usr/bin/python3 bench/train_vs_torch.py build/release/bench/bench_train [rounds] [repeats] \
  [BASELINE_bench_train]
With a baseline (bench_train built from another commit) it runs too, in
the same rounds, for before/after numbers from one run.  Each figure is
the minimum over rounds of a median over repeats.  PyTorch is a
benchmark-only dependency."""
import json, statistics, subprocess, sys, time

import torch

torch.set_num_threads(2)
torch.manual_seed(0)


def median_ms(fn, repeats):
    for _ in range(10):
        fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def mlp():
    dims = [784, 512, 512, 10]
    ws = [(torch.randn(dims[i + 1], dims[i]) * 0.05).requires_grad_() for i in range(3)]
    bs = [(torch.randn(dims[i + 1]) * 0.05).requires_grad_() for i in range(3)]
    x = torch.randn(128, 784)
    y = torch.randint(0, 10, (128,))
    opt = torch.optim.SGD(ws + bs, lr=0.01, momentum=0.9)

    def step():
        h = x
        for i in range(3):
            h = torch.nn.functional.linear(h, ws[i], bs[i])
            if i < 2:
                h = torch.relu(h)
        loss = torch.nn.functional.cross_entropy(h, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step


def lstm(backward):
    x, hx, cx = (torch.randn(20, 650) for _ in range(3))
    w_ih = (torch.randn(2600, 650) * 0.04).requires_grad_()
    w_hh = (torch.randn(2600, 650) * 0.04).requires_grad_()
    b_ih = (torch.randn(2600) * 0.04).requires_grad_()
    b_hh = (torch.randn(2600) * 0.04).requires_grad_()
    ps = [w_ih, w_hh, b_ih, b_hh]

    def run():
        if backward:
            for p in ps:
                p.grad = None
        hy, cy = torch._VF.lstm_cell(x, (hx, cx), w_ih, w_hh, b_ih, b_hh)
        if backward:
            (hy.sum() + cy.sum()).backward()
    return run


def main():
    exe = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    work = {"mlp_step": ("mlp", mlp()), "lstm_fwd": ("lstm_fwd", lstm(False)),
            "lstm_fwdbwd": ("lstm_fwdbwd", lstm(True))}
    base = sys.argv[4] if len(sys.argv) > 4 else None
    res = {k: ([], [], []) for k in work}

    def run_exe(path, arg):
        out = subprocess.run([path, str(repeats), arg], capture_output=True, text=True,
                             check=True).stdout
        return json.loads(out.strip().splitlines()[-1])["median_ms"]

    for _ in range(rounds):
        for name, (arg, fn) in work.items():
            res[name][0].append(run_exe(exe, arg))
            res[name][1].append(median_ms(fn, repeats))
            if base:
                res[name][2].append(run_exe(base, arg))
    for name, (yg, pt, bs) in res.items():
        y, p = min(yg), min(pt)
        line = {"bench": name, "yagrad_ms": round(y, 4), "torch_ms": round(p, 4),
                "ratio": round(y / p, 3)}
        if bs:
            line.update({"baseline_ms": round(min(bs), 4), "baseline_ratio": round(min(bs) / p, 3)})
        print(json.dumps(line))


main()
