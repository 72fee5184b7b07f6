#!/usr/bin/env python3
"""Exports the models of tests/test_onnx.c with PyTorch 1.13's exporter
(opset 17, do_constant_folding, the same dynamic axes) and prints, one
JSON line per model, yagrad's export next to PyTorch's: ONNX nodes,
initializers, file bytes and the ratio of the file sizes.  The models are
the same architectures with the same parameter shapes (values do not
matter for the size).  Needs Debian's python3-torch and python3-onnx
(benchmark-only dependencies).  Usage, after `ctest --preset dev -R onnx`
wrote yagrad's models:
    /usr/bin/python3 bench/onnx_model_sizes.py build/dev/tests/onnx_out"""
import json
import math
import os
import sys
import tempfile

import onnx
import torch
from torch import nn

torch.manual_seed(0)


def causal_attention(q, k, v):
    # softmax(q k^T / sqrt(E) + causal mask) v (torch 1.13 has no sdpa op)
    L, S = q.size(-2), k.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    mask = torch.ones(L, S, dtype=torch.bool).triu(1)
    return torch.softmax(scores.masked_fill(mask, float("-inf")), -1) @ v


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))

    def forward(self, x):
        return self.net(x)


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                                 nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64, 10))

    def forward(self, x):
        return self.net(x)


class Block(nn.Module):
    def __init__(self, c=16):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(c), nn.LayerNorm(c)
        self.q, self.k, self.v, self.o = (nn.Linear(c, c) for _ in range(4))
        self.up, self.down = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.o(causal_attention(self.q(h), self.k(h), self.v(h)))
        return x + self.down(nn.functional.gelu(self.up(self.ln2(x))))


class Gpt(nn.Module):
    V, C, H, T = 11, 8, 2, 16

    def __init__(self):
        super().__init__()
        V, C = self.V, self.C
        self.wte, self.wpe = nn.Embedding(V, C), nn.Embedding(self.T, C)
        self.ln1, self.ln2, self.lnf = nn.LayerNorm(C), nn.LayerNorm(C), nn.LayerNorm(C)
        self.qkv, self.proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        self.up, self.down = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)

    def forward(self, idx):
        B, T = idx.shape
        C, H = self.C, self.H
        x = self.wte(idx) + self.wpe(torch.arange(T))
        q, k, v = self.qkv(self.ln1(x)).split(C, -1)
        q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
        y = causal_attention(q, k, v).transpose(1, 2).reshape(B, T, C)
        x = x + self.proj(y)
        x = x + self.down(nn.functional.gelu(self.up(self.ln2(x))))
        return (self.lnf(x) @ self.wte.weight.t()).view(B * T, self.V)


class EncDec(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, 6, 3, stride=2, padding=1), nn.ReLU(),
                                 nn.ConvTranspose2d(6, 4, 2, stride=2), nn.ReLU(),
                                 nn.Upsample(size=(16, 16), mode="bilinear"),
                                 nn.Conv2d(4, 1, 3, padding=1), nn.Sigmoid())

    def forward(self, x):
        return self.net(x)


class Lm(nn.Module):
    def __init__(self, gru, V=40, E=12, H=10):
        super().__init__()
        cell = nn.GRUCell if gru else nn.LSTMCell
        self.gru = gru
        self.emb, self.dec = nn.Embedding(V, E), nn.Linear(H, V)
        self.c1, self.c2 = cell(E, H), cell(H, H)

    def forward(self, tok, *state):
        e = self.emb(tok)
        if self.gru:
            h1 = self.c1(e, state[0])
            h2 = self.c2(h1, state[1])
            return self.dec(h2), h1, h2
        h1, c1 = self.c1(e, (state[0], state[1]))
        h2, c2 = self.c2(h1, (state[2], state[3]))
        return self.dec(h2), h1, c1, h2, c2


class Cell(nn.Module):
    def __init__(self, gru):
        super().__init__()
        self.gru = gru
        self.cell = nn.GRUCell(8, 16) if gru else nn.LSTMCell(8, 16)

    def forward(self, x, *state):
        return self.cell(x, state[0]) if self.gru else self.cell(x, (state[0], state[1]))


def seq(B, T, C):
    return torch.randn(B, T, C)


# name: (module, example inputs, input names, output names, dynamic axes)
def models():
    ids = torch.randint(0, 40, (3,))
    hs = [torch.randn(3, 10) for _ in range(4)]
    return {
        "mlp": (Mlp(), (torch.randn(5, 4),), ["x"], ["logits"], {"x": {0: "batch"}, "logits": {0: "batch"}}),
        "cnn": (Cnn(), (torch.randn(2, 1, 8, 8),), ["image"], ["logits"],
                {"image": {0: "batch"}, "logits": {0: "batch"}}),
        "transformer_block": (Block(), (seq(3, 5, 16),), ["x"], ["y"],
                              {"x": {0: "batch", 1: "sequence"}, "y": {0: "batch", 1: "sequence"}}),
        "gpt": (Gpt(), (torch.randint(0, 11, (3, 5)),), ["idx"], ["logits"],
                {"idx": {0: "batch", 1: "sequence"}, "logits": {0: "tokens"}}),
        "encdec": (EncDec(), (torch.randn(3, 1, 8, 8),), ["image"], ["decoded"],
                   {"image": {0: "batch"}, "decoded": {0: "batch"}}),
        "lstm_lm": (Lm(False), (ids, *hs), ["token", "h1", "c1", "h2", "c2"],
                    ["logits", "h1_out", "c1_out", "h2_out", "c2_out"],
                    {n: {0: "batch"} for n in ["token", "h1", "c1", "h2", "c2", "logits",
                                               "h1_out", "c1_out", "h2_out", "c2_out"]}),
        "gru_lm": (Lm(True), (ids, hs[0], hs[1]), ["token", "h1", "h2"], ["logits", "h1_out", "h2_out"],
                   {n: {0: "batch"} for n in ["token", "h1", "h2", "logits", "h1_out", "h2_out"]}),
        "lstm_cell": (Cell(False), (torch.randn(3, 8), torch.randn(3, 16), torch.randn(3, 16)),
                      ["x", "h", "c"], ["hy", "cy"], {n: {0: "batch"} for n in ["x", "h", "c", "hy", "cy"]}),
        "gru_cell": (Cell(True), (torch.randn(4, 8), torch.randn(4, 16)), ["x", "h"], ["hy"],
                     {n: {0: "batch"} for n in ["x", "h", "hy"]}),
    }


def figures(path):
    m = onnx.load(path)
    return {"nodes": len(m.graph.node), "initializers": len(m.graph.initializer),
            "bytes": os.path.getsize(path)}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    ours = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        for name, (module, args, ins, outs, axes) in models().items():
            path = os.path.join(tmp, name + ".onnx")
            torch.onnx.export(module.eval(), args, path, opset_version=17, do_constant_folding=True,
                              input_names=ins, output_names=outs, dynamic_axes=axes)
            mine = os.path.join(ours, name + ".onnx")
            if not os.path.exists(mine):
                print(json.dumps({"model": name, "error": f"{mine} not found (run ctest -R onnx)"}))
                continue
            y, t = figures(mine), figures(path)
            print(json.dumps({"model": name, "yagrad": y, "torch": t,
                              "bytes_ratio": round(y["bytes"] / t["bytes"], 3)}))


if __name__ == "__main__":
    main()
