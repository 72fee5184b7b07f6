#!/usr/bin/env python3
"""compare_gpt2.py - the GPT-2 example against PyTorch 1.13, in one run.

Alternates the two sides round by round (y, t, y, t, ...) at the same
thread count and settings as compare_torch.py (whose environment and
process runner it uses: PyTorch with tcmalloc preloaded, the OpenMP
OpenBLAS, ATEN_CPU_CAPABILITY=avx512), on the GPT-2 124M shapes:

  step:   B=4, T=64, float32, AdamW (`gpt2 train --preset gpt2-124m` vs
          bench/gpt2_torch.py step): the median step time of each round,
          the step's GFLOP/s against this run's FMA peak, peak RSS;
  sample: batch 1, a 16-token prompt then 64 tokens greedily with the
          key/value cache: tokens/s, against the bandwidth bound (this
          run's STREAM-like triad GB/s over the bytes of weights read per
          token).

  cmake --preset release && cmake --build --preset release
  python3 bench/compare_gpt2.py [--threads 2] [--rounds 3] [--steps 8]
      [--parts step,sample] [--build build/release]

stdout: the raw JSON lines of both sides and one summary line per part
({"bench":"compare","workload":"gpt2_step",...,"ratio":...}); stderr:
progress.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_torch as ct  # noqa: E402

L, C, H, V, CTX = 12, 768, 12, 50257, 1024
VP = (V + 63) // 64 * 64


def step_gflop(B, T):
    """Forward + backward of the matrix products (6 flops per weight per
    token: the blocks' 12 C^2 per layer and the tied head) and of the
    attention products (12 T^2 C per layer and sequence)."""
    weights = 12 * L * C * C + VP * C
    return (6 * B * T * weights + 12 * L * B * T * T * C) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--parts", default="step,sample")
    ap.add_argument("--build", default=os.path.join(ct.ROOT, "build", "release"))
    a = ap.parse_args()
    gpt2 = os.path.join(a.build, "examples", "gpt2")
    bench_eager = os.path.join(a.build, "bench", "bench_eager")
    torch_script = os.path.join(ct.ROOT, "bench", "gpt2_torch.py")
    env, torch_env = ct.environments(a.threads)
    have_torch = ct.torch_available()
    if not have_torch:
        ct.log("PyTorch is not importable by %s: yagrad alone" % ct.TORCH_PYTHON)
    if "LD_PRELOAD" not in torch_env:
        ct.log("tcmalloc (libtcmalloc-minimal4) is not installed: PyTorch runs on glibc's malloc")
    refs = {}
    for w in ("fma_peak", "triad"):
        line = ct.run_side([bench_eager, w], env)
        refs[w] = line
    peak = refs["fma_peak"].get("gflops") if refs["fma_peak"] else None
    triad = refs["triad"].get("gbps") if refs["triad"] else None
    prompt = ",".join(str((i * 7919) % V) for i in range(16))
    parts = {
        "step": ([gpt2, "train", "--preset", "gpt2-124m", "--batch", "4", "--seq", "64",
                  "--steps", str(a.steps), "--val-every", "0", "--val-batches", "1",
                  "--max-ratio", "1000", "--json"],
                 [ct.TORCH_PYTHON, torch_script, "step", "--steps", str(a.steps)]),
        "sample": ([gpt2, "sample", "--preset", "gpt2-124m", "--prompt-tokens", prompt,
                    "--tokens", "64", "--temperature", "0", "--json"],
                   [ct.TORCH_PYTHON, torch_script, "sample", "--prompt", "16", "--tokens", "64"]),
    }
    bad = False
    for part in a.parts.split(","):
        ours, theirs = [], []
        for r in range(a.rounds):
            ct.log("%s round %d/%d" % (part, r + 1, a.rounds))
            ours.append(ct.run_side(parts[part][0], env))
            if have_torch:
                theirs.append(ct.run_side(parts[part][1], torch_env))
        ours = [x for x in ours if x]
        theirs = [x for x in theirs if x]
        if not ours or (have_torch and not theirs):
            bad = True
            continue
        s = {"bench": "compare", "workload": "gpt2_" + part, "threads": a.threads,
             "yagrad_rss_mb": max(x["peak_rss_mb"] for x in ours)}
        if theirs:
            s["torch_rss_mb"] = max(x["peak_rss_mb"] for x in theirs)
            s["rss_ratio"] = round(s["yagrad_rss_mb"] / s["torch_rss_mb"], 3)
        if part == "step":
            y = min(x["median_ms"] for x in ours)
            s["yagrad_ms"] = y
            s["gflop"] = round(step_gflop(4, 64), 1)
            s["yagrad_gflops"] = round(s["gflop"] / (y / 1e3), 1)
            if peak:
                s["fma_peak_gflops"] = peak
                s["yagrad_pct_peak"] = round(100 * s["yagrad_gflops"] / peak, 1)
            if theirs:
                t = min(x["median_ms"] for x in theirs)
                s["torch_ms"] = t
                s["torch_gflops"] = round(s["gflop"] / (t / 1e3), 1)
                s["ratio"] = round(y / t, 3)
        else:
            y = max(x["tokens_per_s"] for x in ours)
            s["yagrad_tokens_per_s"] = y
            # per token: every weight once (float32), the head included
            weight_bytes = 4 * (12 * L * C * C + 13 * L * C + VP * C)
            if triad:
                s["triad_gbps"] = triad
                s["bound_tokens_per_s"] = round(triad * 1e9 / weight_bytes, 1)
                s["yagrad_pct_bound"] = round(100 * y / s["bound_tokens_per_s"], 1)
            if theirs:
                t = max(x["tokens_per_s"] for x in theirs)
                s["torch_tokens_per_s"] = t
                s["speedup"] = round(y / t, 3)
        print(json.dumps(s), flush=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
