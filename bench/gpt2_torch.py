#!/usr/bin/env python3
"""gpt2_torch.py - the PyTorch side of bench/compare_gpt2.py: GPT-2 as
examples/gpt2 builds it (pre-norm blocks, fused qkv, causal attention
scaled by 1/sqrt(head dim), GELU with the tanh approximation, the head
tied to the token embedding, the vocabulary padded to a multiple of 64
with the padding's logits at -inf), in float32.  A benchmark-only
dependency: nothing builds or tests with it.

  python3 gpt2_torch.py step --layers 12 --channels 768 --heads 12
      --vocab 50257 --context 1024 --batch 4 --seq 64 --steps 8
  python3 gpt2_torch.py sample ... --prompt 16 --tokens 64

step: zero_grad, forward, cross entropy, backward, clip_grad_norm_(1.0),
AdamW (foreach: PyTorch 1.13's fastest CPU implementation; weight decay
0.1 on the matrices and embeddings only) -- the same step `gpt2 train`
takes; prints one JSON line with the median step time (ms) after the
first two steps.  sample: batch 1, a prompt of --prompt tokens, then
--tokens tokens one at a time through a past-key-value cache (the keys
and values of earlier positions appended to, not recomputed: the plain
PyTorch loop); greedy; prints tokens/s after the prompt.
"""
import argparse
import json
import math
import statistics
import time

import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, C, H):
        super().__init__()
        self.H = H
        self.ln_1 = torch.nn.LayerNorm(C)
        self.c_attn = torch.nn.Linear(C, 3 * C)
        self.c_proj = torch.nn.Linear(C, C)
        self.ln_2 = torch.nn.LayerNorm(C)
        self.c_fc = torch.nn.Linear(C, 4 * C)
        self.mlp_proj = torch.nn.Linear(4 * C, C)

    def forward(self, x, cache=None):
        B, T, C = x.shape
        H, D = self.H, C // self.H
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, H, D).transpose(1, 2) for t in (q, k, v))
        if cache is not None:
            if cache[0] is not None:
                k = torch.cat([cache[0], k], 2)
                v = torch.cat([cache[1], v], 2)
            cache[0], cache[1] = k, v
        S = k.shape[2]
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D))
        if T > 1:
            mask = torch.ones(T, S, dtype=torch.bool).triu(S - T + 1)
            att = att.masked_fill(mask, float("-inf"))
        y = (F.softmax(att, dim=-1) @ v).transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.c_proj(y)
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(torch.nn.Module):
    def __init__(self, L, C, H, V, ctx):
        super().__init__()
        self.V, self.Vp = V, (V + 63) // 64 * 64
        self.wte = torch.nn.Embedding(self.Vp, C)
        self.wpe = torch.nn.Embedding(ctx, C)
        self.h = torch.nn.ModuleList(Block(C, H) for _ in range(L))
        self.ln_f = torch.nn.LayerNorm(C)
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * L) if name.endswith("proj.weight") else 0.02
                torch.nn.init.normal_(p, 0, std)
            elif "ln" not in name:
                torch.nn.init.zeros_(p)
        with torch.no_grad():
            self.wte.weight[V:] = 0

    def forward(self, idx, targets=None, caches=None, pos0=0):
        B, T = idx.shape
        x = self.wte(idx) + self.wpe(torch.arange(pos0, pos0 + T))
        for i, b in enumerate(self.h):
            x = b(x, caches[i] if caches is not None else None)
        logits = self.ln_f(x) @ self.wte.weight.t()
        logits[..., self.V:] = float("-inf")
        if targets is None:
            return logits
        return F.cross_entropy(logits.view(B * T, -1), targets.view(-1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["step", "sample"])
    for name, default in [("layers", 12), ("channels", 768), ("heads", 12), ("vocab", 50257),
                          ("context", 1024), ("batch", 4), ("seq", 64), ("steps", 8),
                          ("prompt", 16), ("tokens", 64)]:
        ap.add_argument("--" + name, type=int, default=default)
    a = ap.parse_args()
    torch.manual_seed(1337)
    m = GPT(a.layers, a.channels, a.heads, a.vocab, a.context)
    if a.mode == "step":
        decay = [p for p in m.parameters() if p.dim() == 2]
        rest = [p for p in m.parameters() if p.dim() != 2]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                 {"params": rest, "weight_decay": 0.0}],
                                lr=6e-4, betas=(0.9, 0.95), eps=1e-8, foreach=True)
        x = torch.randint(0, a.vocab, (a.batch, a.seq))
        y = torch.randint(0, a.vocab, (a.batch, a.seq))
        times = []
        for _ in range(a.steps):
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            loss = m(x, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            opt.step()
            times.append(1e3 * (time.perf_counter() - t0))
        print(json.dumps({"bench": "gpt2_step", "impl": "torch", "median_ms": round(
            statistics.median(times[2:] if len(times) > 2 else times), 2),
            "steps": a.steps, "loss": loss.item()}))
    else:
        caches = [[None, None] for _ in range(a.layers)]
        idx = torch.randint(0, a.vocab, (1, a.prompt))
        pos = 0
        with torch.no_grad():
            t_gen = 0.0
            for k in range(a.tokens):
                t0 = time.perf_counter()
                logits = m(idx, caches=caches, pos0=pos)
                pos += idx.shape[1]
                idx = logits[:, -1, :a.vocab].argmax(-1, keepdim=True)
                if k > 0:
                    t_gen += time.perf_counter() - t0
        print(json.dumps({"bench": "gpt2_sample", "impl": "torch",
                          "tokens_per_s": round((a.tokens - 1) / t_gen, 2)}))


if __name__ == "__main__":
    main()
