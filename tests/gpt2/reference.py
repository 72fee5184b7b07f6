#!/usr/bin/env python3
"""GPT-2's loss and every parameter gradient, in float64 NumPy, against
what examples/gpt2 computes: an independent reference (forward and
backward written out by hand here, nothing shared with yagrad).

    reference.py GPT2 WORKDIR

runs `GPT2 check` on the tiny config in float64 over a token file this
script writes (the C GPT-2 trainers' format: 256 int32 header, uint16
tokens), reads the parameters and the gradients it saved (safetensors,
parsed here with json + NumPy) and fails unless the loss and every
gradient match within 1e-10.
"""
import json
import os
import struct
import subprocess
import sys

import numpy as np

TOL = 1e-10
B, T = 2, 16


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    dtypes = {"F64": "<f8", "F32": "<f4", "I64": "<i8", "I32": "<i4"}
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        out[name] = np.frombuffer(data[b:end], dtype=dtypes[e["dtype"]]).reshape(e["shape"])
    return out, header.get("__metadata__", {})


def write_tokens(path, tokens):
    head = np.zeros(256, dtype="<i4")
    head[:3] = [20240520, 1, len(tokens)]
    with open(path, "wb") as f:
        f.write(head.tobytes())
        f.write(np.asarray(tokens, dtype="<u2").tobytes())


def layer_norm(x, w, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    rstd = 1 / np.sqrt(var + 1e-5)
    xhat = (x - mu) * rstd
    return xhat * w + b, (xhat, rstd, w)


def layer_norm_back(dy, cache):
    xhat, rstd, w = cache
    dw = (dy * xhat).reshape(-1, xhat.shape[-1]).sum(0)
    db = dy.reshape(-1, xhat.shape[-1]).sum(0)
    dxhat = dy * w
    dx = (dxhat - dxhat.mean(-1, keepdims=True)
          - xhat * (dxhat * xhat).mean(-1, keepdims=True)) * rstd
    return dx, dw, db


K = np.sqrt(2 / np.pi)


def gelu(x):
    return 0.5 * x * (1 + np.tanh(K * (x + 0.044715 * x ** 3)))


def gelu_back(dy, x):
    t = np.tanh(K * (x + 0.044715 * x ** 3))
    return dy * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * K * (1 + 3 * 0.044715 * x * x))


def model(p, tok, tgt, L, H):
    """Loss and gradients of every parameter."""
    V, C = p["wte.weight"].shape
    D = C // H
    s = 1 / np.sqrt(D)
    mask = np.triu(np.ones((T, T), dtype=bool), 1)
    x = p["wte.weight"][tok] + p["wpe.weight"][np.arange(T)]
    caches = []
    for l in range(L):
        g = lambda n: p[f"h.{l}.{n}"]
        h, c1 = layer_norm(x, g("ln_1.weight"), g("ln_1.bias"))
        qkv = h @ g("attn.c_attn.weight") + g("attn.c_attn.bias")
        q, k, v = (qkv[..., i * C:(i + 1) * C].reshape(B, T, H, D).transpose(0, 2, 1, 3)
                   for i in range(3))
        att = q @ k.transpose(0, 1, 3, 2) * s
        att[..., mask] = -np.inf
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        y = (att @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
        x1 = x + y @ g("attn.c_proj.weight") + g("attn.c_proj.bias")
        h2, c2 = layer_norm(x1, g("ln_2.weight"), g("ln_2.bias"))
        f = h2 @ g("mlp.c_fc.weight") + g("mlp.c_fc.bias")
        gf = gelu(f)
        x2 = x1 + gf @ g("mlp.c_proj.weight") + g("mlp.c_proj.bias")
        caches.append((h, c1, q, k, v, att, y, h2, c2, f, gf))
        x = x2
    xf, cf = layer_norm(x, p["ln_f.weight"], p["ln_f.bias"])
    logits = xf @ p["wte.weight"].T
    m = logits.max(-1, keepdims=True)
    lse = m + np.log(np.exp(logits - m).sum(-1, keepdims=True))
    logp = logits - lse
    n = B * T
    loss = -logp.reshape(n, V)[np.arange(n), tgt.reshape(n)].mean()

    gr = {name: np.zeros_like(a) for name, a in p.items()}
    dlogits = np.exp(logp)
    dlogits.reshape(n, V)[np.arange(n), tgt.reshape(n)] -= 1
    dlogits /= n
    gr["wte.weight"] += dlogits.reshape(n, V).T @ xf.reshape(n, C)
    dx, gr["ln_f.weight"], gr["ln_f.bias"] = layer_norm_back(dlogits @ p["wte.weight"], cf)
    for l in reversed(range(L)):
        g = lambda n: p[f"h.{l}.{n}"]
        h, c1, q, k, v, att, y, h2, c2, f, gf = caches[l]
        pre = f"h.{l}."
        # x2 = x1 + mlp(ln_2(x1))
        gr[pre + "mlp.c_proj.weight"] = gf.reshape(n, -1).T @ dx.reshape(n, C)
        gr[pre + "mlp.c_proj.bias"] = dx.reshape(n, C).sum(0)
        df = gelu_back(dx @ g("mlp.c_proj.weight").T, f)
        gr[pre + "mlp.c_fc.weight"] = h2.reshape(n, C).T @ df.reshape(n, -1)
        gr[pre + "mlp.c_fc.bias"] = df.reshape(n, -1).sum(0)
        dh2, gr[pre + "ln_2.weight"], gr[pre + "ln_2.bias"] = layer_norm_back(
            df @ g("mlp.c_fc.weight").T, c2)
        dx1 = dx + dh2
        # x1 = x + attn(ln_1(x))
        gr[pre + "attn.c_proj.weight"] = y.reshape(n, C).T @ dx1.reshape(n, C)
        gr[pre + "attn.c_proj.bias"] = dx1.reshape(n, C).sum(0)
        dy = (dx1 @ g("attn.c_proj.weight").T).reshape(B, T, H, -1).transpose(0, 2, 1, 3)
        dv = att.transpose(0, 1, 3, 2) @ dy
        datt = dy @ v.transpose(0, 1, 3, 2)
        ds = att * (datt - (datt * att).sum(-1, keepdims=True)) / np.sqrt(q.shape[-1])
        dq = ds @ k
        dk = ds.transpose(0, 1, 3, 2) @ q
        dqkv = np.concatenate([a.transpose(0, 2, 1, 3).reshape(B, T, C) for a in (dq, dk, dv)], -1)
        gr[pre + "attn.c_attn.weight"] = h.reshape(n, C).T @ dqkv.reshape(n, 3 * C)
        gr[pre + "attn.c_attn.bias"] = dqkv.reshape(n, -1).sum(0)
        dh, gr[pre + "ln_1.weight"], gr[pre + "ln_1.bias"] = layer_norm_back(
            dqkv @ g("attn.c_attn.weight").T, c1)
        dx = dx1 + dh
    np.add.at(gr["wte.weight"], tok, dx)
    gr["wpe.weight"][:T] = dx.sum(0)
    return loss, gr


def main():
    gpt2, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(7)
    tokens = os.path.join(work, "tokens.bin")
    write_tokens(tokens, rng.integers(0, 97, size=4000))
    params_path = os.path.join(work, "params.safetensors")
    grads_path = os.path.join(work, "grads.safetensors")
    run = subprocess.run([gpt2, "check", "--preset", "gpt2-tiny", "--dtype", "f64", "--seed", "5",
                          "--batch", str(B), "--seq", str(T), "--data", tokens,
                          "--out", grads_path, "--params-out", params_path],
                         capture_output=True, text=True)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    if run.returncode != 0:
        sys.exit("FAIL: gpt2 check exited %d" % run.returncode)
    p, meta = read_safetensors(params_path)
    got, _ = read_safetensors(grads_path)
    cfg = dict(kv.split("=") for kv in meta["yagrad.gpt2.config"].split())
    L, H = int(cfg["layers"]), int(cfg["heads"])
    p = {k: v.astype(np.float64) for k, v in p.items()}
    loss, ref = model(p, got["tokens"], got["targets"], L, H)
    # the printed loss (17 digits) and the saved one
    printed = float(run.stdout.split("loss ")[1].split()[0])
    worst = abs(printed - loss)
    print("loss: yagrad %.17g, numpy %.17g, |diff| %.3g" % (printed, loss, worst))
    bad = worst > TOL or abs(float(got["loss"]) - loss) > TOL
    for name, want in ref.items():
        have = got[name]
        if name == "wte.weight":
            have = have[:want.shape[0]]  # the gradient of the padding rows is 0
            if np.any(got[name][want.shape[0]:] != 0):
                print("FAIL: wte.weight's padding rows got a gradient")
                bad = True
        if have.shape != want.shape:
            print("FAIL: %s: shape %s, want %s" % (name, have.shape, want.shape))
            bad = True
            continue
        d = np.max(np.abs(have - want))
        worst = max(worst, d)
        if d > TOL:
            print("FAIL: %s: max |diff| %.3g (scale %.3g)" % (name, d, np.max(np.abs(want))))
            bad = True
    print("%d gradients compared; largest |diff| %.3g (tolerance %g)" % (len(ref), worst, TOL))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
