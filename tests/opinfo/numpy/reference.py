#!/usr/bin/python3
"""NumPy references for the OpInfo table (tests/opinfo/).

Runs opinfo_dump (dump.c), which writes every sample's inputs and yagrad's
output as .npy files, recomputes each output here with NumPy in float64 and
compares.  Usage:

    reference.py OPINFO_DUMP REPO_ROOT

Every op of yg__ops[] needs a reference in REFS (below) or an entry in
NAIVE_LOOPS naming the C test that checks its forward values instead (with
naive float64 loops, or known answers for the random ops); an op with
neither fails the run, and so does a NAIVE
entry whose file does not call the op.  A REFS entry is a function of the
sample's inputs (a list of float64 arrays) or a dict from the sample's
description to such a function; it repeats the constants the sample's C
call passes (alpha 2.5, dim 1, ...), since the .npy files carry tensors only.

Tolerances, with scale = max(1, max |reference|) over the sample's output:
  float64: |yagrad - numpy| <= 1e-10 * scale (libm and summation order);
  float32: |yagrad - numpy| <= 2e-5 * scale (the reference runs in float64
           on the same float32 inputs; float32 rounding, ~1e-7 per
           operation, accumulates over reductions of up to ~60 terms);
  float16, bfloat16: 1e-3 and 8e-3 (about 1 ulp of each), but for the
           products of CONDITIONED below;
  bool, int64 and int32 outputs: exactly equal (a bool result is the
  reference != 0).
Runs in the other dtypes (int64, int32, bool, float16, bfloat16, where the
op claims them) are compared for the ops in EXACT_ON_INTEGERS and
STORED_AS_DTYPE; the random ops of NAIVE_LOOPS are checked in C; any other
run is listed as not compared and fails the run.
"""
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

TOL = {"float64": 1e-10, "float32": 2e-5, "float16": 1e-3, "bfloat16": 8e-3}

# ---- helpers --------------------------------------------------------------

erf = np.vectorize(math.erf, otypes=[float])


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def softmax(x, axis):
    return np.exp(log_softmax(x, axis))


def pool_out(size, k, s, p, d, ceil):
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= size + p:
        out -= 1
    return out


def max_pool2d(x, k, s, p, d, ceil):
    h, w = x.shape[-2:]
    oh, ow = pool_out(h, k[0], s[0], p[0], d[0], ceil), pool_out(w, k[1], s[1], p[1], d[1], ceil)
    out = np.full(x.shape[:-2] + (oh, ow), -np.inf)
    for i in range(oh):
        for j in range(ow):
            for a in range(k[0]):
                for b in range(k[1]):
                    r, c = i * s[0] - p[0] + a * d[0], j * s[1] - p[1] + b * d[1]
                    if 0 <= r < h and 0 <= c < w:
                        out[..., i, j] = np.maximum(out[..., i, j], x[..., r, c])
    return out


def avg_pool2d_windows(shape, k, s, p, ceil, count_include_pad):
    """(i, j, rows, cols, divisor) of every output cell."""
    h, w = shape
    oh, ow = pool_out(h, k, s, p, 1, ceil), pool_out(w, k, s, p, 1, ceil)
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * s - p, j * s - p
            r1, c1 = min(r0 + k, h + p), min(c0 + k, w + p)
            padded = (r1 - r0) * (c1 - c0)
            rows, cols = range(max(r0, 0), min(r1, h)), range(max(c0, 0), min(c1, w))
            div = padded if count_include_pad else len(rows) * len(cols)
            yield i, j, rows, cols, div, (oh, ow)


def avg_pool2d(x, k, s, p, ceil, cip):
    cells = list(avg_pool2d_windows(x.shape[-2:], k, s, p, ceil, cip))
    out = np.zeros(x.shape[:-2] + cells[0][5])
    for i, j, rows, cols, div, _ in cells:
        out[..., i, j] = x[..., rows.start:rows.stop, cols.start:cols.stop].sum(axis=(-2, -1)) / div
    return out


def avg_pool2d_backward(g, in_shape, k, s, p, ceil, cip):
    out = np.zeros(tuple(in_shape))
    for i, j, rows, cols, div, _ in avg_pool2d_windows(tuple(in_shape[-2:]), k, s, p, ceil, cip):
        out[..., rows.start:rows.stop, cols.start:cols.stop] += g[..., i, j][..., None, None] / div
    return out


def adaptive_cells(size, out):
    return [(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]


def adaptive_avg_pool2d(x, out_hw):
    out = np.zeros(x.shape[:-2] + tuple(out_hw))
    for i, (r0, r1) in enumerate(adaptive_cells(x.shape[-2], out_hw[0])):
        for j, (c0, c1) in enumerate(adaptive_cells(x.shape[-1], out_hw[1])):
            out[..., i, j] = x[..., r0:r1, c0:c1].mean(axis=(-2, -1))
    return out


def adaptive_avg_pool2d_backward(g, in_shape):
    out = np.zeros(tuple(in_shape))
    for i, (r0, r1) in enumerate(adaptive_cells(in_shape[-2], g.shape[-2])):
        for j, (c0, c1) in enumerate(adaptive_cells(in_shape[-1], g.shape[-1])):
            out[..., r0:r1, c0:c1] += g[..., i, j][..., None, None] / ((r1 - r0) * (c1 - c0))
    return out


def nearest_index(out, size):
    return np.arange(out) * size // out


def upsample_nearest2d(x, out_hw):
    r, c = nearest_index(out_hw[0], x.shape[-2]), nearest_index(out_hw[1], x.shape[-1])
    return x[..., r, :][..., c]


def upsample_nearest2d_backward(g, in_shape):
    out = np.zeros(tuple(in_shape))
    r, c = nearest_index(g.shape[-2], in_shape[-2]), nearest_index(g.shape[-1], in_shape[-1])
    for i, ri in enumerate(r):
        for j, cj in enumerate(c):
            out[..., ri, cj] += g[..., i, j]
    return out


def scatter(self, index, src, add=False):
    out = self.copy()
    for i in range(index.shape[0]):
        for j in range(index.shape[1]):
            v = src[i, j] if np.ndim(src) else src
            out[index[i, j], j] = out[index[i, j], j] + v if add else v
    return out


def prod_double_backward(g, go, s):
    # dim 1 of [3, 4]: go_r sum_{i != k} g_ri prod_{j != i, k} s_rj
    out = np.zeros_like(s)
    for r in range(s.shape[0]):
        for k in range(s.shape[1]):
            out[r, k] = go[r] * sum(
                g[r, i] * np.prod(np.delete(s[r], [i, k])) for i in range(s.shape[1]) if i != k
            )
    return out


def cumprod_jvp(g, s):
    # dim 1 of [3, 4]: out_i = sum_{k <= i} g_k prod_{j <= i, j != k} s_j
    out = np.zeros_like(s)
    for r in range(s.shape[0]):
        for i in range(s.shape[1]):
            out[r, i] = sum(g[r, k] * np.prod(np.delete(s[r, : i + 1], k)) for k in range(i + 1))
    return out


def cumprod_double_backward(g, go, s):
    # dim 1 of [3, 4]: d/ds_m of sum_k g_k cumprod_backward(go, s)_k
    n = s.shape[1]
    out = np.zeros_like(s)
    for r in range(s.shape[0]):
        for m in range(n):
            acc = 0.0
            for i in range(m, n):
                for k in range(i + 1):
                    if k != m:
                        acc += go[r, i] * g[r, k] * np.prod(np.delete(s[r, : i + 1], [k, m]))
            out[r, m] = acc
    return out


def cumprod_backward(g, s, axis):
    g, s = np.moveaxis(g, axis, -1), np.moveaxis(s, axis, -1)
    out = np.zeros_like(s)
    n = s.shape[-1]
    for i in range(n):
        for j in range(i, n):
            others = np.prod(np.delete(s[..., : j + 1], i, axis=-1), axis=-1)
            out[..., i] += g[..., j] * others
    return np.moveaxis(out, -1, axis)


def var(x, axis, ddof, keepdims=False):
    return x.var(axis=axis, ddof=ddof, keepdims=keepdims)


def norm(x, p, axis=None, keepdims=False):
    a = np.abs(x)
    if p == math.inf:
        return a.max(axis=axis, keepdims=keepdims)
    return (a**p).sum(axis=axis, keepdims=keepdims) ** (1 / p)


def lstm_cell(x, h, c, w_ih, w_hh):
    gates = x @ w_ih.T + h @ w_hh.T
    i, f, g, o = np.split(gates, 4, axis=1)
    c2 = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    return sigmoid(o) * np.tanh(c2), c2


def lstm_gates(ig, hg, c):
    i, f, g, o = np.split(ig + hg, 4, axis=-1)
    c2 = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    return sigmoid(o) * np.tanh(c2), c2


def lstm_gates_backward(ghy, gcy, ig, hg, c, which):
    i, f, g, o = np.split(ig + hg, 4, axis=-1)
    i, f, g, o = sigmoid(i), sigmoid(f), np.tanh(g), sigmoid(o)
    tc = np.tanh(f * c + i * g)
    dc = gcy + ghy * o * (1 - tc * tc)
    if which == 2:
        return dc * f
    return np.concatenate(
        [dc * g * i * (1 - i), dc * c * f * (1 - f), dc * i * (1 - g * g), ghy * tc * o * (1 - o)],
        axis=-1,
    )


def gru_cell(x, h, w_ih, w_hh):
    gi, gh = x @ w_ih.T, h @ w_hh.T
    ir, iz, in_ = np.split(gi, 3, axis=1)
    hr, hz, hn = np.split(gh, 3, axis=1)
    r, z = sigmoid(ir + hr), sigmoid(iz + hz)
    n = np.tanh(in_ + r * hn)
    return (1 - z) * n + z * h


def sdpa(q, k, v, causal=False, scale=None):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        mask = np.triu(np.ones(scores.shape[-2:], dtype=bool), 1)
        scores = np.where(mask, -np.inf, scores)
    return softmax(scores, -1) @ v


def sdpa_backward(go, q, k, v, which, causal=False, scale=None):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        mask = np.triu(np.ones(scores.shape[-2:], dtype=bool), 1)
        scores = np.where(mask, -np.inf, scores)
    p = softmax(scores, -1)
    if which == 2:
        return np.swapaxes(p, -1, -2) @ go
    dp = go @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True)) * scale
    return ds @ k if which == 0 else np.swapaxes(ds, -1, -2) @ q


def layer_norm(x, w, b, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(x.var(axis=-1, keepdims=True) + eps) * w + b


def group_norm(x, groups, w, b, eps=1e-5):
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1)
    g = (g - g.mean(axis=-1, keepdims=True)) / np.sqrt(g.var(axis=-1, keepdims=True) + eps)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return g.reshape(x.shape) * w.reshape(shape) + b.reshape(shape)


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x**3)))


def gelu_tanh_grad(x):
    c = 0.7978845608028654
    t = np.tanh(c * (x + 0.044715 * x**3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x)


def softplus(x, beta, threshold):
    return np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta)


def bce(x, t, w=1.0):
    return -w * (t * np.log(x) + (1 - t) * np.log(1 - x))


def nll_weighted(x, t, w, reduction, ignore=-100):
    """nll_loss with class weights w; x [N, C] or [C] (then t is 0-dim)."""
    x2, t2 = np.atleast_2d(x), np.atleast_1d(t).astype(int)
    keep = t2 != ignore
    safe = np.where(keep, t2, 0)
    wt = np.where(keep, w[safe], 0.0)
    loss = -wt * x2[np.arange(len(t2)), safe]
    if reduction == "none":
        return loss.reshape(np.shape(t))
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / wt.sum()


def nll_backward_weighted(g, t, w, sizes, reduction, ignore=-100):
    """The gradient of nll_weighted with respect to x, for grad_output g."""
    t2 = np.atleast_1d(t).astype(int)
    keep = t2 != ignore
    safe = np.where(keep, t2, 0)
    wt = np.where(keep, w[safe], 0.0)
    gi = np.atleast_1d(g) if reduction == "none" else np.full(len(t2), float(g))
    if reduction == "mean":
        gi = gi / wt.sum()
    out = np.zeros((len(t2), sizes[-1]))
    out[np.arange(len(t2)), safe] = -wt * gi
    return out.reshape(sizes)


def nll(x, t, ignore=-100):
    t = t.astype(int)
    keep = t != ignore
    picked = -x[np.arange(len(t)), np.where(keep, t, 0)]
    return np.where(keep, picked, 0.0), keep


# Indices built inside the C samples (samples_derivatives.c).
ROWS = [3, 0, 3]
COLS = np.array([[1, 3], [0, 0], [2, 1]])
SCAT = np.array([[2, 0, 1], [0, 1, 2]])
EMB = np.array([[2, 0, 3], [1, 2, 2]])
# the target of the nll_loss rows with ignore_index 1 (with_nll_target)
NLL_TARGET = np.array([0, 1, 2, 1, 0, 2])


def index_select_backward(g):
    out = np.zeros((4, 3))
    np.add.at(out, ROWS, g)
    return out


def gather_backward(g):
    out = np.zeros((3, 4))
    for i in range(3):
        for j in range(2):
            out[i, COLS[i, j]] += g[i, j]
    return out


def var_mean(x, use):
    v, m = var(x, 1, 1), x.mean(axis=1)
    return {"both": v + m, "var": v, "mean": m}[use]


def pad_crop(x):
    return np.pad(x[..., 1:], [(0, 0)] * (x.ndim - 1) + [(0, 2)])


def value_selecting_backward(g, idx):
    out = np.zeros((3, 4))
    out[np.arange(3), idx.astype(int)] = g
    return out


def minmax_backward(g, s):
    mask = s == s.max(axis=1, keepdims=True)
    return g[:, None] * mask / mask.sum(axis=1, keepdims=True)


def embedding_backward(g, idx, padding_idx=-1):
    out = np.zeros((5, 4))
    np.add.at(out, idx.astype(int).ravel(), g.reshape(-1, 4))
    if padding_idx >= 0:
        out[padding_idx] = 0
    return out


def select_backward(g):
    out = np.zeros((2, 3, 4))
    out[:, 2] = g
    return out


def slice_backward(g):
    out = np.zeros((5, 3))
    out[1:5:2] = g
    return out


def where(c, a, b):
    return np.where(c != 0, a, b)


# ---- merged from main: creation, nn-ops, shape-index ----


def max_pool1d(x, k, s, p, d, ceil):
    return max_pool2d(x[..., None, :], (1, k), (1, s), (0, p), (1, d), ceil)[..., 0, :]


def max_pool1d_values_plus_indices(x):
    """kernel 2, stride 2: values + positions of the (first) maxima."""
    pairs = x[..., : x.shape[-1] // 2 * 2].reshape(x.shape[:-1] + (-1, 2))
    arg = pairs.argmax(axis=-1)
    return pairs.max(axis=-1) + 2 * np.arange(pairs.shape[-2]) + arg


def max_pool2d_with_indices_backward(g, idx, in_shape):
    planes = int(np.prod(in_shape[:-2]))
    out = np.zeros((planes, in_shape[-2] * in_shape[-1]))
    g2, i2 = g.reshape(planes, -1), idx.reshape(planes, -1).astype(int)
    for pl in range(planes):
        np.add.at(out[pl], i2[pl], g2[pl])
    return out.reshape(in_shape)


def np_pad(pad):
    """PyTorch's pad list (last dim first) as np.pad widths for the last dims."""
    return [(pad[i], pad[i + 1]) for i in range(len(pad) - 2, -1, -2)]


def pad_nd(x, pad, mode, value=0.0):
    widths = [(0, 0)] * (x.ndim - len(pad) // 2) + np_pad(pad)
    if mode == "constant":
        return np.pad(x, widths, constant_values=value)
    return np.pad(x, widths, mode={"reflect": "reflect", "replicate": "edge"}[mode])


def pad_backward(g, in_shape, pad, mode):
    """The adjoint of pad_nd: each output position adds into its source."""
    src = pad_nd(np.arange(int(np.prod(in_shape))).reshape(in_shape), pad, mode)
    out = np.zeros(int(np.prod(in_shape)))
    np.add.at(out, src.ravel(), g.ravel())
    return out.reshape(in_shape)


def batch_norm_train(x, w, b, eps=1e-5):
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    mu, var_ = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    return (x - mu) / np.sqrt(var_ + eps) * w.reshape(shape) + b.reshape(shape)


def batch_norm_eval(x, w, b, rm, rv, eps=1e-5):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - rm.reshape(shape)) / np.sqrt(rv.reshape(shape) + eps) * w.reshape(shape) + b.reshape(shape)


def ln_backward(g, x, w, which, eps=1e-5):
    """The gradients of layer_norm over the last dim, from its definition."""
    mu = x.mean(axis=-1, keepdims=True)
    rs = 1 / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    xhat, gw = (x - mu) * rs, g * w
    batch = tuple(range(x.ndim - 1))
    return [rs * (gw - gw.mean(axis=-1, keepdims=True) - xhat * (gw * xhat).mean(axis=-1, keepdims=True)),
            (g * xhat).sum(axis=batch), g.sum(axis=batch)][which]


def bn_backward(g, x, w, which, rm=None, rv=None, eps=1e-5):
    """The gradients of batch_norm (batch statistics unless rm, rv given)."""
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if rm is None:
        mu = x.mean(axis=axes, keepdims=True)
        rs = 1 / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    else:
        mu, rs = rm.reshape(shape), 1 / np.sqrt(rv.reshape(shape) + eps)
    xhat, gw = (x - mu) * rs, g * w.reshape(shape)
    if rm is None:
        gi = rs * (gw - gw.mean(axis=axes, keepdims=True) - xhat * (gw * xhat).mean(axis=axes, keepdims=True))
    else:
        gi = gw * rs
    return [gi, (g * xhat).sum(axis=axes), g.sum(axis=axes)][which]


def joined(*parts):
    """The samples of list ops join the outputs they use, flattened."""
    return np.concatenate([p.ravel() for p in parts])


def index_put(x, idx, v, accumulate):
    out = x.copy()
    if accumulate:
        np.add.at(out, idx, np.broadcast_to(v, out[idx].shape))
    else:
        out[idx] = v
    return out


# Indices built inside the C samples of index and index_put (ic_* in
# samples_derivatives.c).
IC_ROWS = np.array([[3, 0], [-1, 0]])
IC_MASK = np.array([1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 1], dtype=bool).reshape(3, 4)
IC_PAIRS = ([2, 0], [1, 2])
IC_ACC = [1, 1, 3]
PAD2D, PAD1D, PAD3D = (1, 2, 2, 1), (3, 4), (1, 1, 2, 0, 1, 2)


# ---- references, by op ------------------------------------------------------


# ---- pool branch: n-d pooling, adaptive max, bilinear, shuffles ----------


def windows_nd(in_sp, k, s, p, d, ceil):
    """Output sizes and, per output cell, the per-dim lists of input
    positions a window touches (padding included as out-of-range)."""
    out = tuple(pool_out(n, k[i], s[i], p[i], d[i], ceil) for i, n in enumerate(in_sp))
    for cell in np.ndindex(*out):
        yield out, cell, [[c * s[i] - p[i] + j * d[i] for j in range(k[i])] for i, c in enumerate(cell)]


def max_pool_nd(x, k, s, p, d, ceil):
    """Values and flat positions of the first maxima of every window."""
    n = len(k)
    sp = x.shape[-n:]
    lead = x.shape[:-n]
    flat = x.reshape((-1,) + sp)
    cells = list(windows_nd(sp, k, s, p, d, ceil))
    out = cells[0][0]
    vals = np.zeros((flat.shape[0],) + out)
    idx = np.zeros((flat.shape[0],) + out)
    for _, cell, pos in cells:
        inside = [[q for q in ps if 0 <= q < sp[i]] for i, ps in enumerate(pos)]
        for pl in range(flat.shape[0]):
            best, at = -np.inf, -1
            for coord in np.ndindex(*[len(v) for v in inside]):
                c = tuple(inside[i][j] for i, j in enumerate(coord))
                if at < 0 or flat[(pl,) + c] > best:
                    best, at = flat[(pl,) + c], int(np.ravel_multi_index(c, sp))
            vals[(pl,) + cell], idx[(pl,) + cell] = best, at
    return vals.reshape(lead + out), idx.reshape(lead + out)


def avg_pool_nd_cells(sp, k, s, p, ceil, cip, divisor):
    for out, cell, pos in windows_nd(sp, k, s, p, (1,) * len(k), ceil):
        padded = 1
        inside = []
        for i, ps in enumerate(pos):
            padded *= len([q for q in ps if q < sp[i] + p[i]])
            inside.append([q for q in ps if 0 <= q < sp[i]])
        count = int(np.prod([len(v) for v in inside]))
        div = divisor if divisor else (padded if cip else count)
        yield out, cell, inside, div


def avg_pool_nd(x, k, s, p, ceil, cip, divisor=0):
    n = len(k)
    sp, lead = x.shape[-n:], x.shape[:-n]
    flat = x.reshape((-1,) + sp)
    cells = list(avg_pool_nd_cells(sp, k, s, p, ceil, cip, divisor))
    res = np.zeros((flat.shape[0],) + cells[0][0])
    for _, cell, inside, div in cells:
        res[(slice(None),) + cell] = flat[np.ix_(range(flat.shape[0]), *inside)].reshape(flat.shape[0], -1).sum(axis=1) / div
    return res.reshape(lead + cells[0][0])


def avg_pool_nd_backward(g, in_shape, k, s, p, ceil, cip, divisor=0):
    n = len(k)
    sp = tuple(in_shape[-n:])
    res = np.zeros((int(np.prod(in_shape[:-n])),) + sp)
    gf = g.reshape((res.shape[0],) + g.shape[-n:])
    for _, cell, inside, div in avg_pool_nd_cells(sp, k, s, p, ceil, cip, divisor):
        for coord in np.ndindex(*[len(v) for v in inside]):
            c = tuple(inside[i][j] for i, j in enumerate(coord))
            res[(slice(None),) + c] += gf[(slice(None),) + cell] / div
    return res.reshape(tuple(in_shape))


def adaptive_avg_nd(x, out):
    n = len(out)
    res = np.zeros(x.shape[:-n] + tuple(out))
    for cell in np.ndindex(*out):
        box = tuple(slice(*adaptive_cells(x.shape[-n + i], out[i])[c]) for i, c in enumerate(cell))
        res[(Ellipsis,) + cell] = x[(Ellipsis,) + box].mean(axis=tuple(range(-n, 0)))
    return res


def adaptive_avg_nd_backward(g, in_shape):
    n = 3
    out = g.shape[-n:]
    res = np.zeros(tuple(in_shape))
    for cell in np.ndindex(*out):
        cs = [adaptive_cells(in_shape[-n + i], out[i])[c] for i, c in enumerate(cell)]
        box = tuple(slice(*c) for c in cs)
        size = np.prod([b - a for a, b in cs])
        res[(Ellipsis,) + box] += g[(Ellipsis,) + cell][(Ellipsis,) + (None,) * n] / size
    return res


def adaptive_max2d(x, out):
    """Values and positions h W + w of the first maxima of every cell."""
    h, w = x.shape[-2:]
    vals = np.zeros(x.shape[:-2] + tuple(out))
    idx = np.zeros(x.shape[:-2] + tuple(out))
    for i, (r0, r1) in enumerate(adaptive_cells(h, out[0])):
        for j, (c0, c1) in enumerate(adaptive_cells(w, out[1])):
            cell = x[..., r0:r1, c0:c1].reshape(x.shape[:-2] + (-1,))
            a = cell.argmax(axis=-1)
            vals[..., i, j] = cell.max(axis=-1)
            idx[..., i, j] = (r0 + a // (c1 - c0)) * w + c0 + a % (c1 - c0)
    return vals, idx


def bilinear_weights(out, size, align, scale):
    """PyTorch's source index per output (area_pixel_compute_source_index),
    as a dense [out, size] interpolation matrix."""
    m = np.zeros((out, size))
    if align:
        r = (size - 1) / (out - 1) if out > 1 else 0.0
    else:
        r = 1.0 / scale if scale > 0 else size / out
    for i in range(out):
        src = r * i if align else max(r * (i + 0.5) - 0.5, 0.0)
        i0 = min(int(math.floor(src)), size - 1)
        lam = min(max(src - i0, 0.0), 1.0)
        i1 = i0 + 1 if i0 < size - 1 else i0
        m[i, i0] += 1 - lam
        m[i, i1] += lam
    return m


def bilinear(x, out_hw, align, sh=0.0, sw=0.0):
    h, w = x.shape[-2:]
    if out_hw is None:
        out_hw = (int(h * sh), int(w * sw))
    mh, mw = bilinear_weights(out_hw[0], h, align, sh), bilinear_weights(out_hw[1], w, align, sw)
    return np.einsum("ih,...hw,jw->...ij", mh, x, mw)


def bilinear_backward(g, in_shape, align, sh=0.0, sw=0.0):
    mh = bilinear_weights(g.shape[-2], in_shape[-2], align, sh)
    mw = bilinear_weights(g.shape[-1], in_shape[-1], align, sw)
    return np.einsum("ih,...ij,jw->...hw", mh, g, mw)


def pixel_shuffle(x, r):
    *lead, c, h, w = x.shape
    out = np.zeros(tuple(lead) + (c // (r * r), h * r, w * r))
    for ch in range(c):
        oc, i, j = ch // (r * r), ch % (r * r) // r, ch % r
        out[..., oc, i::r, j::r] = x[..., ch, :, :]
    return out


def pixel_unshuffle(x, r):
    *lead, c, h, w = x.shape
    out = np.zeros(tuple(lead) + (c * r * r, h // r, w // r))
    for ch in range(c * r * r):
        ic, i, j = ch // (r * r), ch % (r * r) // r, ch % r
        out[..., ch, :, :] = x[..., ic, i::r, j::r]
    return out


def channel_shuffle(x, g):
    c = x.shape[1]
    out = np.zeros_like(x)
    for ch in range(c):
        out[:, ch % (c // g) * g + ch // (c // g)] = x[:, ch]
    return out


REFS = {
    # pointwise binary and scalar
    "add": {
        "broadcast [2, 3] + [3], alpha 2.5": lambda x: x[0] + 2.5 * x[1],
        "broadcast [2, 3] + [3], integer alpha 3": lambda x: x[0] + 3 * x[1],
        "0-dim + [2, 2]": lambda x: x[0] + 2.5 * x[1],
    },
    "sub": {
        "broadcast [2, 1] - [1, 3], alpha 0.5": lambda x: x[0] - 0.5 * x[1],
        "broadcast [2, 1] - [1, 3], integer alpha -2": lambda x: x[0] + 2 * x[1],
    },
    "mul": {"same shape": lambda x: x[0] * x[1], "transposed self": lambda x: x[0].T * x[1]},
    "div": lambda x: x[0] / x[1],
    "div.mode": {
        "trunc, divisor away from 0": lambda x: np.trunc(x[0] / x[1]),
        "floor, negative divisor": lambda x: np.floor(x[0] / x[1]),
    },
    "mul.Scalar": {"times -1.5": lambda x: -1.5 * x[0], "times -3": lambda x: -3 * x[0]},
    "div.Scalar": lambda x: x[0] / 4,
    "add.Scalar": {"plus 1.5 * 2": lambda x: x[0] + 1.5 * 2, "plus 3 * 2": lambda x: x[0] + 3 * 2},
    "sub.Scalar": {"minus 1.5 * 2": lambda x: x[0] - 1.5 * 2, "minus 3 * 2": lambda x: x[0] - 3 * 2},
    "rsub.Scalar": lambda x: 1 - 3 * x[0],
    "maximum": lambda x: np.maximum(x[0], x[1]),
    "minimum": lambda x: np.minimum(x[0], x[1]),
    "atan2": lambda x: np.arctan2(x[0], x[1]),
    "remainder": lambda x: np.remainder(x[0], x[1]),
    "remainder.Scalar": {
        "by -0.7": lambda x: np.remainder(x[0], -0.7),
        "by -3": lambda x: np.remainder(x[0], -3),
    },
    "div.trunc": lambda x: np.trunc(x[0] / x[1]),
    "div.floor": lambda x: np.floor(x[0] / x[1]),
    "pow": lambda x: x[0] ** x[1],
    "lerp.Scalar": lambda x: x[0] + 0.3 * (x[1] - x[0]),
    "lerp": lambda x: x[0] + x[2] * (x[1] - x[0]),
    "addcmul": {
        "value 0.5, broadcast": lambda x: x[0] + 0.5 * x[1] * x[2],
        "integer value -2, broadcast": lambda x: x[0] - 2 * x[1] * x[2],
    },
    "addcdiv": lambda x: x[0] - 2 * x[1] / x[2],
    "where": lambda x: where(x[0], x[1], x[2]),
    "where.ScalarOther": lambda x: where(x[0], x[1], 2.0),
    "where.ScalarSelf": lambda x: where(x[0], -1.0, x[1]),
    "masked_fill": lambda x: where(x[1], 3.0, x[0]),
    # in-place (samples write a copy of x[0])
    "add_": lambda x: x[0] + 2 * x[1],
    "sub_": {
        "into a copy": lambda x: x[0] - 0.5 * x[1],
        "into a copy, integer alpha 2": lambda x: x[0] - 2 * x[1],
    },
    "mul_": lambda x: x[0] * x[1],
    "div_": lambda x: x[0] / x[1],
    "add_.Scalar": {"plus 1.5 * -2": lambda x: x[0] + 1.5 * -2, "plus 3 * -2": lambda x: x[0] + 3 * -2},
    "mul_.Scalar": lambda x: -3 * x[0],
    "div_.Scalar": lambda x: x[0] / 4,
    "addcmul_": {
        "value 0.5, broadcast tensors": lambda x: x[0] + 0.5 * x[1] * x[2],
        "integer value -2, broadcast tensors": lambda x: x[0] - 2 * x[1] * x[2],
    },
    "addcdiv_": lambda x: x[0] - 2 * x[1] / x[2],
    "lerp_.Scalar": lambda x: x[0] + 0.3 * (x[1] - x[0]),
    "relu_": lambda x: np.maximum(x[0], 0),
    "clamp_": {"[-0.5, 0.5]": lambda x: np.clip(x[0], -0.5, 0.5), "integer bounds [-1, 1]": lambda x: np.clip(x[0], -1, 1)},
    "clamp_min_": {"min 0.1": lambda x: np.maximum(x[0], 0.1), "integer min -1": lambda x: np.maximum(x[0], -1)},
    "clamp_max_": {"max 0.1": lambda x: np.minimum(x[0], 0.1), "integer max 1": lambda x: np.minimum(x[0], 1)},
    "masked_fill_": lambda x: where(x[1], 3.0, x[0]),
    "fill_": lambda x: np.full_like(x[0], -1.25),
    "zero_": lambda x: np.zeros_like(x[0]),
    "copy_": lambda x: np.broadcast_to(x[1], x[0].shape),
    # comparisons and logic
    "eq": lambda x: x[0] == x[1],
    "ne": lambda x: x[0] != x[1],
    "lt": lambda x: x[0] < x[1],
    "le": lambda x: x[0] <= x[1],
    "gt": lambda x: x[0] > x[1],
    "ge": lambda x: x[0] >= x[1],
    "eq.Scalar": lambda x: x[0] == 0.5,
    "ne.Scalar": lambda x: x[0] != 0.5,
    "lt.Scalar": lambda x: x[0] < 0.5,
    "le.Scalar": lambda x: x[0] <= 0.5,
    "gt.Scalar": lambda x: x[0] > 0.5,
    "ge.Scalar": lambda x: x[0] >= 0.5,
    "logical_and": lambda x: (x[0] != 0) & (x[1] != 0),
    "logical_or": lambda x: (x[0] != 0) | (x[1] != 0),
    "logical_xor": lambda x: (x[0] != 0) ^ (x[1] != 0),
    "logical_not": lambda x: x[0] == 0,
    # pointwise unary
    "neg": lambda x: -x[0],
    "exp": lambda x: np.exp(x[0]),
    "log": lambda x: np.log(x[0]),
    "sqrt": lambda x: np.sqrt(x[0]),
    "tanh": lambda x: np.tanh(x[0]),
    "sigmoid": lambda x: sigmoid(x[0]),
    "relu": lambda x: np.maximum(x[0], 0),
    "pow.Scalar": {"cube": lambda x: x[0] ** 3, "square root, positive input": lambda x: np.sqrt(x[0])},
    "abs": lambda x: np.abs(x[0]),
    "sign": lambda x: np.sign(x[0]),
    "expm1": lambda x: np.expm1(x[0]),
    "log1p": lambda x: np.log1p(x[0]),
    "log2": lambda x: np.log2(x[0]),
    "rsqrt": lambda x: 1 / np.sqrt(x[0]),
    "reciprocal": lambda x: 1 / x[0],
    "sin": lambda x: np.sin(x[0]),
    "cos": lambda x: np.cos(x[0]),
    "tan": lambda x: np.tan(x[0]),
    "erf": lambda x: erf(x[0]),
    "gelu": lambda x: 0.5 * x[0] * (1 + erf(x[0] / math.sqrt(2))),
    "gelu_tanh": lambda x: gelu_tanh(x[0]),
    "silu": lambda x: x[0] * sigmoid(x[0]),
    "elu": lambda x: np.where(x[0] > 0, x[0], 0.7 * np.expm1(x[0])),
    "leaky_relu": lambda x: np.where(x[0] > 0, x[0], 0.2 * x[0]),
    "softplus": {
        "beta 2": lambda x: softplus(x[0], 2, 20),
        "threshold 0.5 crossed": lambda x: softplus(x[0], 1, 0.5),
    },
    "hardtanh": {"[-0.5, 0.8]": lambda x: np.clip(x[0], -0.5, 0.8), "integer bounds [-1, 1]": lambda x: np.clip(x[0], -1, 1)},
    "clamp": {"[-0.5, 0.5]": lambda x: np.clip(x[0], -0.5, 0.5), "integer bounds [-1, 1]": lambda x: np.clip(x[0], -1, 1)},
    "clamp_min": {"min 0.1": lambda x: np.maximum(x[0], 0.1), "integer min -1": lambda x: np.maximum(x[0], -1)},
    "clamp_max": {"max 0.1": lambda x: np.minimum(x[0], 0.1), "integer max 1": lambda x: np.minimum(x[0], 1)},
    "floor": lambda x: np.floor(x[0]),
    "ceil": lambda x: np.ceil(x[0]),
    "round": lambda x: np.round(x[0]),  # half to even, like the op
    "trunc": lambda x: np.trunc(x[0]),
    # pointwise gradient helpers
    "tanh_backward": lambda x: x[0] * (1 - x[1] ** 2),
    "sigmoid_backward": lambda x: x[0] * x[1] * (1 - x[1]),
    "relu_backward": lambda x: np.where(x[1] > 0, x[0], 0),
    "pow_backward": lambda x: x[0] * 2.5 * x[1] ** 1.5,
    "gelu_backward": lambda x: x[0]
    * (0.5 * (1 + erf(x[1] / math.sqrt(2))) + x[1] * np.exp(-0.5 * x[1] ** 2) / math.sqrt(2 * math.pi)),
    "gelu_tanh_backward": lambda x: x[0] * gelu_tanh_grad(x[1]),
    "silu_backward": lambda x: x[0] * sigmoid(x[1]) * (1 + x[1] * (1 - sigmoid(x[1]))),
    "elu_backward": lambda x: np.where(x[1] > 0, x[0], x[0] * 0.7 * np.exp(x[1])),
    "softplus_backward": lambda x: np.where(x[1] * 2 > 20, x[0], x[0] * sigmoid(2 * x[1])),
    "leaky_relu_backward": lambda x: np.where(x[1] > 0, x[0], 0.1 * x[0]),
    "hardtanh_backward": lambda x: np.where((x[1] <= -0.5) | (x[1] >= 0.5), 0, x[0]),
    "clamp_backward": lambda x: np.where((x[1] >= -0.5) & (x[1] <= 0.5), x[0], 0),
    "clamp_min_backward": lambda x: np.where(x[1] >= 0, x[0], 0),
    "clamp_max_backward": lambda x: np.where(x[1] <= 0, x[0], 0),
    "maximum_backward": lambda x: np.where(x[1] < x[2], 0, np.where(x[1] == x[2], 0.5 * x[0], x[0])),
    "minimum_backward": lambda x: np.where(x[1] > x[2], 0, np.where(x[1] == x[2], 0.5 * x[0], x[0])),
    "atan2_backward": lambda x: (x[0] * x[2] - x[0] * x[1]) / (x[1] ** 2 + x[2] ** 2),
    "pow_backward_self": lambda x: np.where(x[2] == 0, 0, x[0] * x[2] * x[1] ** (x[2] - 1)),
    "pow_backward_exponent": lambda x: x[0] * x[3] * np.log(x[1]),
    # reductions
    "sum": lambda x: x[0].sum(),
    "sum.dim": {
        "dim 1": lambda x: x[0].sum(axis=1),
        "dim 1 of empty [2, 0, 3]": lambda x: x[0].sum(axis=1),
        "dims 0 and -1, keepdim": lambda x: x[0].sum(axis=(0, -1), keepdims=True),
    },
    "mean": lambda x: x[0].mean(),
    "mean.dim": {
        "dim 0": lambda x: x[0].mean(axis=0),
        "dims 1, 2 keepdim": lambda x: x[0].mean(axis=(1, 2), keepdims=True),
    },
    "prod": lambda x: x[0].prod(),
    "prod.dim": {
        "dim 1, keepdim, mixed signs": lambda x: x[0].prod(axis=1, keepdims=True),
        "every dim (prod)": lambda x: x[0].prod(),
    },
    "amax": {
        "dim 1": lambda x: x[0].max(axis=1),
        "every dim (max)": lambda x: x[0].max(),
    },
    "amin": lambda x: x[0].min(axis=(0, 2), keepdims=True),
    "max": lambda x: x[0].max(),
    "min": lambda x: x[0].min(),
    "max.dim": lambda x: x[0].max(axis=1),
    "min.dim": lambda x: x[0].min(axis=-1, keepdims=True),
    "argmax": lambda x: np.argmax(x[0]),
    "argmax.dim": lambda x: np.argmax(x[0], axis=1),
    "argmin": lambda x: np.argmin(x[0]),
    "argmin.dim": lambda x: np.expand_dims(np.argmin(x[0], axis=0), 0),
    "all": lambda x: np.all(x[0] != 0),
    "all.dim": lambda x: np.all(x[0] != 0, axis=1),
    "any": lambda x: np.any(x[0] != 0),
    "any.dim": lambda x: np.any(x[0] != 0, axis=0, keepdims=True),
    "var": {
        "dim 1, correction 1": lambda x: var(x[0], 1, 1),
        "every dim, correction 0, keepdim": lambda x: var(x[0], None, 0, True),
    },
    "var_mean": {
        "var + mean: both gradients defined": lambda x: var_mean(x[0], "both"),
        "var only: mean's gradient undefined": lambda x: var_mean(x[0], "var"),
        "mean only: var's gradient undefined": lambda x: var_mean(x[0], "mean"),
    },
    "std": lambda x: x[0].std(axis=0, ddof=1),
    "norm": {
        "p 2 over every dim": lambda x: norm(x[0], 2),
        "p 1, dim 1": lambda x: norm(x[0], 1, 1),
        "p inf, dim 0": lambda x: norm(x[0], math.inf, 0),
        "p 3, dim -1 keepdim": lambda x: norm(x[0], 3, -1, True),
    },
    "logsumexp": {
        "dim 1": lambda x: np.log(np.exp(x[0]).sum(axis=1)),
        "every dim, keepdim": lambda x: np.log(np.exp(x[0]).sum(keepdims=True)),
    },
    "cumsum": lambda x: np.cumsum(x[0], axis=1),
    "cumprod": {
        "dim 0": lambda x: np.cumprod(x[0], axis=0),
        "dim -1": lambda x: np.cumprod(x[0], axis=-1),
    },
    # reduction gradient helpers
    "prod_backward": lambda x: x[0][:, None] * x[1].prod(axis=1, keepdims=True) / x[1],
    "value_selecting_reduction_backward": lambda x: value_selecting_backward(x[0], x[1]),
    "minmax_backward": lambda x: minmax_backward(x[0], x[1]),
    "var_backward": lambda x: x[0][:, None] * 2 * (x[1] - x[1].mean(axis=1, keepdims=True)) / 3,
    "norm_backward": {
        "p 2, dim 1, output given": lambda x: x[0][:, None] * x[1] / x[2][:, None],
        "p 3, dim 1, output given": lambda x: x[0][:, None] * np.sign(x[1]) * np.abs(x[1]) ** 2
        / x[2][:, None] ** 2,
    },
    "logsumexp_backward": lambda x: x[0][:, None] * np.exp(x[1] - x[2][:, None]),
    "cumsum_backward": lambda x: np.flip(np.cumsum(np.flip(x[0], 1), axis=1), 1),
    "cumprod_backward": lambda x: cumprod_backward(x[0], x[1], 1),
    "cumprod_jvp": lambda x: cumprod_jvp(x[0], x[1]),
    "cumprod_double_backward": lambda x: cumprod_double_backward(x[0], x[1], x[2]),
    "prod_double_backward": lambda x: prod_double_backward(x[0], x[1], x[2]),
    "sum_backward": lambda x: np.broadcast_to(x[0][:, None], (3, 4)),
    "mean_backward": lambda x: np.broadcast_to(x[0] / 4, (3, 4)),
    "sum_to": lambda x: x[0].sum(axis=0).sum(axis=-1, keepdims=True),
    # linear algebra
    "mm": {
        "[3, 4] @ [4, 2]": lambda x: x[0] @ x[1],
        "transposed operands": lambda x: x[0].T @ x[1].T,
        "empty inner dim: [3, 0] @ [0, 2] is zeros": lambda x: x[0] @ x[1],
    },
    "bmm": {
        "[2, 3, 4] @ [2, 4, 2]": lambda x: x[0] @ x[1],
        "transposed matrices": lambda x: np.swapaxes(x[0], 1, 2) @ np.swapaxes(x[1], 1, 2),
        "empty rows [2, 0, 4] @ [2, 4, 3]": lambda x: x[0] @ x[1],
    },
    "mm_mat1_backward": lambda x: x[0] @ x[2].T,
    "mm_mat2_backward": lambda x: x[1].T @ x[0],
    "matmul": lambda x: np.matmul(x[0], x[1]),
    "dot": lambda x: np.dot(x[0], x[1]),
    "mv": lambda x: x[0] @ x[1],
    "outer": lambda x: np.outer(x[0], x[1]),
    "addmm": lambda x: 0.5 * x[0] + 2 * (x[1] @ x[2]),
    "baddbmm": lambda x: 0.5 * x[0] + 2 * (x[1] @ x[2]),
    "clamp.opt": {
        "min only": lambda x: np.maximum(x[0], -0.25),
        "max only": lambda x: np.minimum(x[0], 0.5),
        "both bounds": lambda x: np.clip(x[0], -0.25, 0.5),
        "integer bounds [-1, 1]": lambda x: np.clip(x[0], -1, 1),
        "integer min -1 only": lambda x: np.maximum(x[0], -1),
    },
    "linear": {
        "with bias": lambda x: x[0] @ x[1].T + x[2],
        "without bias, batched input": lambda x: x[0] @ x[1].T,
        "empty batch": lambda x: x[0] @ x[1].T + x[2],
    },
    # shape
    "transpose": lambda x: np.swapaxes(x[0], 0, -1),
    "t": lambda x: x[0].T,
    "view": lambda x: x[0].reshape(3, -1),
    "reshape": {
        "[2, 3, 4] -> [4, -1]": lambda x: x[0].reshape(4, -1),
        "0-dim to [1]": lambda x: x[0].reshape(1),
    },
    "expand": lambda x: np.broadcast_to(x[0], (2, 3, 4)),
    "unsqueeze": {"dim 1": lambda x: np.expand_dims(x[0], 1), "0-dim": lambda x: np.expand_dims(x[0], 0)},
    "clone": lambda x: x[0],
    "contiguous": lambda x: x[0],
    "squeeze": lambda x: np.squeeze(x[0]),
    "squeeze.dim": lambda x: np.squeeze(x[0], axis=-2),
    "permute": lambda x: np.transpose(x[0], (2, 0, 1)),
    "permute_backward": lambda x: np.transpose(x[0], (1, 2, 0)),
    "select": lambda x: x[0][:, -1],
    "slice": {
        "rows 1::2": lambda x: x[0][1::2],
        "negative bounds": lambda x: x[0][..., -3:-1],
    },
    "narrow": lambda x: x[0][1:3],
    "select_backward": lambda x: select_backward(x[0]),
    "slice_backward": lambda x: slice_backward(x[0]),
    "flatten": lambda x: x[0].reshape(x[0].shape[0], -1),
    "repeat": {
        "[2, 3] x [2, 1, 2]": lambda x: np.tile(x[0], (2, 1, 2)),
        "[2, 1, 2, 3] x [2, 2, 3, 2, 1, 2]": lambda x: np.tile(x[0], (2, 2, 3, 2, 1, 2)),
    },
    "cat": {
        "three along dim 1": lambda x: np.concatenate(x, axis=1),
        "with an empty piece": lambda x: np.concatenate(x, axis=1),
        "five along dim 0, an empty and a transposed piece": lambda x: np.concatenate(
            [x[0], x[1], x[2].T, x[3], x[4]], axis=0),
    },
    "stack": {
        "two along a new last dim": lambda x: np.stack(x, axis=-1),
        "three along dim 1, the middle one transposed": lambda x: np.stack(
            [x[0], x[1].T, x[2]], axis=1),
    },
    "flip": {"dims 0, -1": lambda x: np.flip(x[0], (0, -1)), "empty [0, 3]": lambda x: np.flip(x[0], 0)},
    "tril": lambda x: np.tril(x[0]),
    "triu": lambda x: np.triu(x[0], -1),
    "constant_pad_nd": {
        "two dims": lambda x: np.pad(x[0], ((0, 1), (1, 2)), constant_values=0.5),
        "crop and pad": lambda x: pad_crop(x[0]),
    },
    "constant_pad_nd_backward": lambda x: x[0][0:-1, 1:-2],
    # indexing (the C samples build these indices; see ROWS, COLS, ...)
    "index_select": lambda x: x[0][ROWS],
    "index_select_backward": lambda x: index_select_backward(x[0]),
    "gather": lambda x: np.take_along_axis(x[0], COLS, axis=1),
    "gather_backward": lambda x: gather_backward(x[0]),
    "scatter": lambda x: scatter(x[0], SCAT, x[1]),
    "scatter.value": lambda x: scatter(x[0], SCAT, 2.5),
    "scatter_add": lambda x: scatter(x[0], SCAT, x[1], add=True),
    "scatter_src_backward": lambda x: x[0][x[1].astype(int), np.arange(3)],
    "embedding": lambda x: x[0][EMB],
    "embedding_backward": {
        "[2, 3] indices into [5, 4]": lambda x: embedding_backward(x[0], x[1]),
        "padding_idx 1, fixed indices": lambda x: embedding_backward(x[0], NLL_TARGET, 1),
    },
    # nn
    "softmax": {
        "dim 1": lambda x: softmax(x[0], 1),
        "dim 0": lambda x: softmax(x[0], 0),
        "dim 1 of empty [0, 3]": lambda x: softmax(x[0], 1),
    },
    "log_softmax": {
        "dim 1": lambda x: log_softmax(x[0], 1),
        "dim 0": lambda x: log_softmax(x[0], 0),
        "dim 1 of empty [0, 3]": lambda x: log_softmax(x[0], 1),
    },
    "softmax_backward": lambda x: x[1] * (x[0] - (x[0] * x[1]).sum(axis=1, keepdims=True)),
    "log_softmax_backward": lambda x: x[0] - np.exp(x[1]) * x[0].sum(axis=1, keepdims=True),
    "log_softmax_jvp": lambda x: x[0] - (x[0] * np.exp(x[1])).sum(axis=1, keepdims=True),
    "nll_loss": {
        "mean": lambda x: nll(x[0], x[1])[0].mean(),
        "sum, ignore_index 1": lambda x: nll(x[0], x[1], 1)[0].sum(),
        "none": lambda x: nll(x[0], x[1])[0],
        "mean, weight": lambda x: nll_weighted(x[0], x[1], x[2], "mean"),
        "mean, weight, ignore_index 1": lambda x: nll_weighted(x[0], NLL_TARGET, x[1], "mean", 1),
        "sum, weight, ignore_index 1": lambda x: nll_weighted(x[0], NLL_TARGET, x[1], "sum", 1),
        "none, weight, ignore_index 1": lambda x: nll_weighted(x[0], NLL_TARGET, x[1], "none", 1),
        "[C] self, 0-dim target, mean, weight": lambda x: nll_weighted(x[0], x[1], x[2], "mean"),
    },
    "nll_loss_backward": {
        "mean": lambda x: np.eye(5)[x[1].astype(int)] * -x[0] / 4,
        "mean, weight, ignore_index 1": lambda x: nll_backward_weighted(
            x[0], NLL_TARGET, x[1], (6, 3), "mean", 1
        ),
        "sum, weight, ignore_index 1": lambda x: nll_backward_weighted(
            x[0], NLL_TARGET, x[1], (6, 3), "sum", 1
        ),
        "none, weight, ignore_index 1": lambda x: nll_backward_weighted(
            x[0], NLL_TARGET, x[1], (6, 3), "none", 1
        ),
        "[C] self, mean, weight": lambda x: nll_backward_weighted(x[0], x[1], x[2], (5,), "mean"),
    },
    "cross_entropy": {
        "mean": lambda x: nll(log_softmax(x[0], 1), x[1])[0].mean(),
        "mean, weight, ignore_index 1": lambda x: nll_weighted(
            log_softmax(x[0], 1), NLL_TARGET, x[1], "mean", 1
        ),
        "none, weight, [N, C, d]": lambda x: nll_weighted(
            np.moveaxis(log_softmax(x[0], 1), 1, -1).reshape(-1, 3), x[1].reshape(-1), x[2], "none"
        ).reshape(x[1].shape),
        "sum, weight, class probabilities": lambda x: -(
            x[2] * x[1] * log_softmax(x[0], 1)
        ).sum(),
    },
    "mse_loss": {
        "mean": lambda x: ((x[0] - x[1]) ** 2).mean(),
        "none": lambda x: (x[0] - x[1]) ** 2,
        "0-dim": lambda x: (x[0] - x[1]) ** 2,
    },
    "l1_loss": lambda x: np.abs(x[0] - x[1]).sum(),
    "smooth_l1_loss": lambda x: np.where(
        np.abs(x[0] - x[1]) < 0.5, 0.5 * (x[0] - x[1]) ** 2 / 0.5, np.abs(x[0] - x[1]) - 0.25
    ).mean(),
    "binary_cross_entropy": {
        "mean": lambda x: bce(x[0], x[1]).mean(),
        "sum, weight": lambda x: bce(x[0], x[1], x[2]).sum(),
    },
    "binary_cross_entropy_with_logits": lambda x: (
        -(x[2] * x[1] * np.log(sigmoid(x[0])) + (1 - x[1]) * np.log(1 - sigmoid(x[0])))
    ).mean(),
    "layer_norm": {
        "last dim, affine": lambda x: layer_norm(x[0], x[1], x[2]),
        "empty batch [0, 4]": lambda x: layer_norm(x[0], 1.0, 0.0),
    },
    "group_norm": lambda x: group_norm(x[0], 2, x[1], x[2]),
    "lstm_cell": lambda x: sum(lstm_cell(*x)),
    "lstm_cell_gates": lambda x: sum(lstm_gates(*x)),
    "lstm_cell_gates_backward": {
        "grad of the gates": lambda x: lstm_gates_backward(*x, 0),
        "grad of cx": lambda x: lstm_gates_backward(*x, 2),
    },
    "lstm_cell_gates_backward_fused": {
        "grad of the gates": lambda x: lstm_gates_backward(*x, 0),
        "grad of cx": lambda x: lstm_gates_backward(*x, 2),
    },
    "flash_attention": {
        "causal, 2 heads, L = S = 5": lambda x: sdpa(*x, causal=True),
        "not causal, L 3 != S 5, E 4 != Ev 3": lambda x: sdpa(*x),
        "causal, L 6 > S 4, scale 0.5": lambda x: sdpa(*x, causal=True, scale=0.5),
        "causal, L 4 < S 6": lambda x: sdpa(*x, causal=True),
        "causal, 130 rows: two tiles, the last ragged": lambda x: sdpa(*x, causal=True),
    },
    "flash_attention_backward": {
        "grad_query, causal, L 5 != S 6": lambda x: sdpa_backward(*x, 0, causal=True),
        "grad_key, causal, L 5 != S 6": lambda x: sdpa_backward(*x, 1, causal=True),
        "grad_value, L 5 != S 6": lambda x: sdpa_backward(*x, 2),
    },
    "gru_cell": lambda x: gru_cell(*x),
    "scaled_dot_product_attention": {
        "no mask": lambda x: sdpa(*x),
        "causal, scale 0.5": lambda x: sdpa(*x, causal=True, scale=0.5),
    },
    # pooling
    "max_pool2d": {
        "2x2 windows": lambda x: max_pool2d(x[0], (2, 2), (2, 2), (0, 0), (1, 1), False),
        "padding, stride 2, dilation, ceil_mode": lambda x: max_pool2d(
            x[0], (3, 3), (2, 2), (1, 1), (1, 2), True
        ),
    },
    "avg_pool2d": {
        "3x3 stride 2 padding 1": lambda x: avg_pool2d(x[0], 3, 2, 1, False, True),
        "ceil_mode, padding not counted": lambda x: avg_pool2d(x[0], 2, 2, 1, True, False),
    },
    "avg_pool2d_backward": lambda x: avg_pool2d_backward(x[0], (2, 5, 6), 3, 2, 1, False, True),
    "adaptive_avg_pool2d": lambda x: adaptive_avg_pool2d(x[0], (3, 4)),
    "adaptive_avg_pool2d_backward": lambda x: adaptive_avg_pool2d_backward(x[0], (2, 5, 7)),
    "upsample_nearest2d": lambda x: upsample_nearest2d(x[0], (5, 7)),
    "upsample_nearest2d_backward": lambda x: upsample_nearest2d_backward(x[0], (1, 2, 3, 3)),
    "adaptive_avg_pool2d_to": lambda x: adaptive_avg_pool2d(x[0], (3, 4)),
    "upsample_nearest2d_to": lambda x: upsample_nearest2d(x[0], (5, 7)),
    # creation (empty and empty_like: the sample fills 0.25)
    "zeros": lambda x: np.zeros((2, 3)),
    "ones": lambda x: np.ones((2, 3)),
    "full": lambda x: np.full((2, 3), -1.5),
    "empty": lambda x: np.full((2, 3), 0.25),
    "arange": lambda x: np.arange(5),
    "arange.start": lambda x: np.arange(-1, 1, 0.25),
    "linspace": lambda x: np.linspace(-2, 3, 6),
    "eye": lambda x: np.eye(3),
    "eye.m": lambda x: np.eye(2, 4),
    "zeros_like": lambda x: np.zeros_like(x[0]),
    "ones_like": lambda x: np.ones_like(x[0]),
    "full_like": lambda x: np.full_like(x[0], 2.5),
    "empty_like": lambda x: np.full_like(x[0], 0.25),
    # nn-ops
    "native_layer_norm": {
        "last dim, affine": lambda x: layer_norm(x[0], x[1], x[2]),
        "last two dims, weight only": lambda x: layer_norm(x[0].reshape(2, 12), x[1].reshape(12), 0.0).reshape(x[0].shape),
    },
    "native_batch_norm": {
        "training, affine": lambda x: batch_norm_train(*x),
        "evaluation, running statistics": lambda x: batch_norm_eval(*x),
    },
    "native_layer_norm_backward": {
        "grad_input, last dim": lambda x: ln_backward(*x, 0),
        "grad_weight, last dim": lambda x: ln_backward(*x, 1),
        "grad_bias, last dim": lambda x: ln_backward(*x, 2),
    },
    "native_batch_norm_backward": {
        "grad_input, training": lambda x: bn_backward(*x, 0),
        "grad_weight, training": lambda x: bn_backward(*x, 1),
        "grad_bias, training": lambda x: bn_backward(*x, 2),
        "grad_input, evaluation": lambda x: bn_backward(*x[:3], 0, x[3], x[4]),
        "grad_weight, evaluation": lambda x: bn_backward(*x[:3], 1, x[3], x[4]),
    },
    "batch_norm": {
        "training, batch statistics, affine": lambda x: batch_norm_train(*x),
        "evaluation, running statistics": lambda x: batch_norm_eval(*x),
    },
    "max_pool2d_with_indices": {
        "2x2 windows": lambda x: max_pool2d(x[0], (2, 2), (2, 2), (0, 0), (1, 1), False),
        "padding, stride 2, dilation, ceil_mode": lambda x: max_pool2d(
            x[0], (3, 3), (2, 2), (1, 1), (1, 2), True
        ),
        "2x3 window, overlapping rows, values only": lambda x: max_pool2d(
            x[0], (2, 3), (1, 2), (1, 1), (1, 1), False
        ),
        "1-d through max_pool1d, dilation, ceil_mode": lambda x: max_pool1d(x[0], 3, 2, 1, 2, True),
    },
    "max_pool2d_with_indices_backward": lambda x: max_pool2d_with_indices_backward(x[0], x[1], (1, 2, 4, 6)),
    "max_pool1d": lambda x: max_pool1d(x[0], 3, 2, 1, 2, True),
    "max_pool1d_with_indices": lambda x: max_pool1d_values_plus_indices(x[0]),
    "reflection_pad": {
        "2-d, [C, H, W]": lambda x: pad_nd(x[0], PAD2D, "reflect"),
        "1-d, amounts up to size - 1": lambda x: pad_nd(x[0], PAD1D, "reflect"),
        "3-d through pad": lambda x: pad_nd(x[0], PAD3D, "reflect"),
    },
    "reflection_pad_backward": lambda x: pad_backward(x[0], (2, 3, 4), PAD2D, "reflect"),
    "replication_pad": {
        "2-d, [C, H, W]": lambda x: pad_nd(x[0], PAD2D, "replicate"),
        "1-d, amounts above size": lambda x: pad_nd(x[0], PAD1D, "replicate"),
        "3-d through pad": lambda x: pad_nd(x[0], PAD3D, "replicate"),
    },
    "replication_pad_backward": lambda x: pad_backward(x[0], (2, 3, 4), PAD2D, "replicate"),
    "pad": {
        "constant 0.5": lambda x: pad_nd(x[0], PAD2D, "constant", 0.5),
        "reflect": lambda x: pad_nd(x[0], PAD2D, "reflect"),
        "replicate": lambda x: pad_nd(x[0], PAD2D, "replicate"),
    },
    # shape-index
    "split": {
        "[5, 3] in pieces of 2, all used": lambda x: x[0].ravel(),
        "[2, 5] along dim -1, piece 1 unused": lambda x: joined(x[0][:, 0:2], x[0][:, 4:5]),
    },
    "split_with_sizes": lambda x: joined(x[0][:, 0:1], x[0][:, 1:5]),
    "chunk": lambda x: x[0][4:5].ravel(),
    "unbind": {
        "[3, 4] along dim 1, outputs 0 and 3 used": lambda x: joined(x[0][:, 0], x[0][:, 3]),
        "[3] into 0-dim outputs": lambda x: x[0],
    },
    "index": {
        "[4, 3] by a [2, 2] row index with repeats and -1": lambda x: x[0][IC_ROWS],
        "[3, 4, 5] by dims 0 and 2 around a kept dim": lambda x: x[0][[2, 0], :, [4, -5]],
        "[3, 4, 2] by a [3, 4] bool mask": lambda x: x[0][IC_MASK],
    },
    "index_put": {
        "(row, col) pairs of [4, 3], values [2]": lambda x: index_put(x[0], IC_PAIRS, x[1], False),
        "accumulate, row 1 twice, values [3] broadcast": lambda x: index_put(x[0], IC_ACC, x[1], True),
    },
    "index_put_": {
        "(row, col) pairs into a copy": lambda x: index_put(x[0], IC_PAIRS, x[1], False),
        "accumulate into a copy, row 1 twice": lambda x: index_put(x[0], IC_ACC, x[1], True),
    },
    "index_backward": lambda x: index_put(np.zeros((4, 3)), x[1].astype(int), x[0], True),
    "index_put_self_backward": lambda x: index_put(x[0], x[1].astype(int), 0.0, False),
    # dtypes: conversions
    "to.dtype": {
        "to float64 without copy": lambda x: x[0],
        "to int32: truncates, no gradient": lambda x: np.trunc(x[0]),
    },
    "to_copy": {
        "float64 to float64": lambda x: x[0],
        "transposed self through to.dtype(copy=true)": lambda x: x[0].T,
    },
    "to_device": {
        "to its own device": lambda x: x[0],
        "transposed self": lambda x: x[0].T,
    },
    "type_as": {
        "a floating other": lambda x: x[0],
        "an int64 other: truncates, no gradient": lambda x: np.trunc(x[0]),
    },
    # pool branch: n-d pooling, adaptive max, bilinear, shuffles
    "max_pool3d_with_indices": {
        "2x2x2 windows": lambda x: max_pool_nd(x[0], (2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 1, 1), False)[0],
        "per-dim kernel, stride, padding, dilation, ceil_mode": lambda x: max_pool_nd(
            x[0], (3, 3, 2), (2, 1, 2), (1, 1, 0), (1, 2, 1), True)[0],
        "values + indices": lambda x: sum(max_pool_nd(x[0], (2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 1, 1), False)),
    },
    "max_pool3d": lambda x: max_pool_nd(x[0], (3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), True)[0],
    "max_pool3d_with_indices_backward": lambda x: max_pool2d_with_indices_backward(
        x[0].reshape(2, 2, 6), x[1].reshape(2, 2, 6), (2, 3, 24)).reshape(2, 3, 4, 6),
    "adaptive_max_pool2d": {
        "5x7 -> 3x4 (overlapping cells)": lambda x: adaptive_max2d(x[0], (3, 4))[0],
        "values + indices, 5x3 -> 2x2": lambda x: sum(adaptive_max2d(x[0], (2, 2))),
    },
    "avg_pool3d": {
        "3x3x3 stride 2 padding 1": lambda x: avg_pool_nd(x[0], (3,) * 3, (2,) * 3, (1,) * 3, False, True),
        "ceil_mode, padding not counted": lambda x: avg_pool_nd(x[0], (2,) * 3, (2,) * 3, (1,) * 3, True, False),
        "per-dim kernel and stride, divisor_override 5": lambda x: avg_pool_nd(
            x[0], (2, 3, 2), (1, 2, 2), (0, 0, 0), False, True, 5),
    },
    "avg_pool3d_backward": {
        "into [2, 3, 5, 6]": lambda x: avg_pool_nd_backward(x[0], (2, 3, 5, 6), (3,) * 3, (2,) * 3, (1,) * 3, False, True),
        "ceil_mode, no padding counted, divisor_override 3": lambda x: avg_pool_nd_backward(
            x[0], (1, 4, 5, 5), (2,) * 3, (2,) * 3, (1,) * 3, True, False, 3),
    },
    "avg_pool1d": {
        "kernel 3, stride 2, padding 1": lambda x: avg_pool_nd(x[0], (3,), (2,), (1,), False, True),
        "kernel 2, padding 1, ceil_mode, padding not counted": lambda x: avg_pool_nd(x[0], (2,), (2,), (1,), True, False),
    },
    "adaptive_avg_pool1d": lambda x: adaptive_avg_nd(x[0], (4,)),
    "adaptive_avg_pool3d": lambda x: adaptive_avg_nd(x[0], (3, 2, 4)),
    "adaptive_avg_pool3d_backward": lambda x: adaptive_avg_nd_backward(x[0], (2, 5, 4, 7)),
    "adaptive_avg_pool3d_to": lambda x: adaptive_avg_nd(x[0], (3, 2, 4)),
    "upsample_bilinear2d": {
        "3x4 -> 5x7, align_corners": lambda x: bilinear(x[0], (5, 7), True),
        "3x4 -> 5x7": lambda x: bilinear(x[0], (5, 7), False),
        "5x7 -> 2x3": lambda x: bilinear(x[0], (2, 3), False),
        "scales 1.7, 2.3": lambda x: bilinear(x[0], None, False, 1.7, 2.3),
        "scales 1.7, 2.3, align_corners": lambda x: bilinear(x[0], None, True, 1.7, 2.3),
    },
    "upsample_bilinear2d_backward": {
        "into [1, 2, 3, 3]": lambda x: bilinear_backward(x[0], (1, 2, 3, 3), False),
        "into [2, 3, 4], align_corners": lambda x: bilinear_backward(x[0], (2, 3, 4), True),
        "into [2, 3, 4], scales 1.7, 2.3": lambda x: bilinear_backward(x[0], (2, 3, 4), False, 1.7, 2.3),
    },
    "upsample_bilinear2d_to": {
        "[1, 2, 3, 3] to [1, 2, 5, 7], align_corners": lambda x: bilinear(x[0], (5, 7), True),
        "[2, 3, 4] to [2, 5, 9], scales 1.7, 2.3": lambda x: bilinear(x[0], (5, 9), False, 1.7, 2.3),
    },
    "interpolate": {
        "nearest to [5, 7]": lambda x: upsample_nearest2d(x[0], (5, 7)),
        # [2, 2, 3] * 2.5 -> 5 x 7, mapped by in / out
        "nearest, scale_factor 2.5": lambda x: upsample_nearest2d(x[0], (5, 7)),
        "bilinear to [4] (4 x 4), align_corners": lambda x: bilinear(x[0], (4, 4), True),
        "bilinear, scale_factor 1.5": lambda x: bilinear(x[0], None, False, 1.5, 1.5),
    },
    "pixel_shuffle": {
        "factor 2, [1, 8, 2, 3]": lambda x: pixel_shuffle(x[0], 2),
        "factor 3, [9, 2, 2] (no batch)": lambda x: pixel_shuffle(x[0], 3),
    },
    "pixel_unshuffle": lambda x: pixel_unshuffle(x[0], 2),
    "channel_shuffle": {
        "groups 3, [2, 6, 2, 2]": lambda x: channel_shuffle(x[0], 3),
        "groups 2, [1, 4, 5]": lambda x: channel_shuffle(x[0], 2),
    },
}

# Ops whose reference also holds on int64, int32, bool, float16 and
# bfloat16 inputs (the reference runs on their values in float64; integer
# and bool outputs compare exactly).  Runs of other ops in those dtypes are
# listed as not compared.
EXACT_ON_INTEGERS = {
    "sum", "sum.dim", "prod", "prod.dim", "amax", "amin", "max", "min", "max.dim", "min.dim",
    "argmax", "argmax.dim", "argmin", "argmin.dim", "all", "all.dim", "any", "any.dim",
    "cumsum", "cumprod", "cumsum_backward", "sum_backward", "sum_to", "value_selecting_reduction_backward",
    "eq", "ne", "lt", "le", "gt", "ge", "eq.Scalar", "ne.Scalar", "lt.Scalar", "le.Scalar",
    "gt.Scalar", "ge.Scalar", "logical_and", "logical_or", "logical_xor", "logical_not",
    "mul", "neg", "relu", "abs", "sign", "maximum", "minimum",
    "transpose", "t", "view", "reshape", "expand", "unsqueeze", "clone", "contiguous", "squeeze",
    "squeeze.dim", "permute", "permute_backward", "select", "slice", "narrow", "select_backward",
    "slice_backward", "flatten", "repeat", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "cat", "stack", "flip", "tril", "triu",
    "index_select", "index_select_backward", "gather", "gather_backward", "scatter", "scatter_add",
    "scatter_src_backward", "embedding", "embedding_backward", "constant_pad_nd_backward",
    "dot", "outer", "zero_", "copy_", "mul_", "relu_",
    "zeros_like", "ones_like", "reflection_pad", "replication_pad", "split", "split_with_sizes",
    "chunk", "unbind", "index", "index_put", "index_put_", "index_backward",
    "index_put_self_backward", "max_pool2d_with_indices_backward", "max_pool3d_with_indices_backward",
    # Scalar arithmetic: on int64 and int32 only the samples with integer
    # Scalars run (a fractional Scalar is refused there, docs/spec-reference.md
    # "Scalars on integer tensors"), so the reference is an integer one.
    "add", "sub", "add.Scalar", "sub.Scalar", "rsub.Scalar", "mul.Scalar", "add_", "sub_",
    "add_.Scalar", "mul_.Scalar", "addcmul", "addcmul_", "clamp", "clamp_min", "clamp_max",
    "clamp.opt", "clamp_", "clamp_min_", "clamp_max_", "hardtanh", "relu_backward",
    # Rounding division and remainder: on int64 and int32 the integer
    # loops (core/intmath.h) must give what NumPy's float64 trunc/floor of
    # the quotient and np.remainder give for the samples' small values.
    "div.trunc", "div.floor", "div.mode", "remainder", "remainder.Scalar",
}

# Matrix products on float16 and bfloat16 (runtime/cpu/blas.c: float32
# math on the 16-bit inputs, one rounding on store), compared elementwise
# with a tolerance from the dtype's unit roundoff u (float16 2^-11,
# bfloat16 2^-8) and the element's conditioning:
#     |yagrad - numpy| <= u * (4 + sqrt(K)) * cond
# cond is the reference run on the absolute values of the inputs (sum
# |a_ik| |b_kj| for a product; these samples' alpha and beta are
# positive), which bounds every partial sum; 4 counts the roundings to the
# dtype on the longest path (addmm: product, two scales, add), sqrt(K), K
# the largest input dim, the float32 accumulation.  A flat 1-ulp tolerance
# would be too loose for small outputs and too tight for long sums.
UNIT_ROUNDOFF = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}
CONDITIONED = {
    "mm", "bmm", "matmul", "mv", "addmm", "baddbmm", "linear", "mm_mat1_backward",
    "mm_mat2_backward",
}

# Ops that store a Scalar (fill_ -1.25, pad 0.5, scatter 2.5) or convert
# values (to, type_as) into a tensor of the sample's dtype: the value is
# converted as a stored element is, so int64 and int32 results hold the
# reference truncated toward zero (fill_(-1.25) stores -1), bool results
# reference != 0, and float16/bfloat16 the value rounded (within their
# tolerance).
STORED_AS_DTYPE = {
    "fill_", "full_like", "empty_like", "pad", "constant_pad_nd", "scatter.value", "to.dtype", "to_copy",
    "to_device",
    "type_as",
}

# Ops whose forward values are checked in a C test instead of here: "op":
# ("tests/test_ops_<area>.c", "why no NumPy reference"); the file must call
# yg_<c name>().  Today the random ops, whose values come from yagrad's
# Philox generator: test_ops_random.c checks them against known answers
# and by their distributions.
_PHILOX = "values from yagrad's Philox generator, which NumPy does not have"
# the fused kernels compute what the composite backward ops compute
REFS["native_layer_norm_backward_fused"] = REFS["native_layer_norm_backward"]
REFS["native_batch_norm_backward_fused"] = REFS["native_batch_norm_backward"]
REFS["softmax_backward_fused"] = REFS["softmax_backward"]
REFS["flash_attention_backward_fused"] = REFS["flash_attention_backward"]

NAIVE_LOOPS = {
    op: ("tests/test_ops_random.c", _PHILOX)
    for op in ("rand", "randn", "randint", "rand_like", "randn_like", "bernoulli", "bernoulli.p", "dropout")
}
_CONV = "convolutions checked against a naive 7-loop float64 convolution and its gradients"
NAIVE_LOOPS.update({
    op: ("tests/test_ops_conv.c", _CONV)
    for op in ("conv1d", "conv1d.padding", "conv2d", "conv2d.padding", "conv3d", "conv3d.padding",
               "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "convolution",
               "convolution_dispatch", "convolution_backward")
})


# ---- driver -------------------------------------------------------------------


def reference_for(op, what):
    ref = REFS.get(op)
    if isinstance(ref, dict):
        ref = ref.get(what)
    return ref


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: reference.py OPINFO_DUMP REPO_ROOT")
    dump, root = sys.argv[1], sys.argv[2]
    failures = []
    unchecked = set()
    in_c = set()
    with tempfile.TemporaryDirectory(prefix="opinfo-") as out:
        subprocess.run([dump, out], check=True)
        ops = [line.split("\t") for line in open(os.path.join(out, "ops.txt")).read().splitlines()]
        for name, cname in ops:
            if name in REFS:
                continue
            if name not in NAIVE_LOOPS:
                failures.append(f"{name}: no NumPy reference in REFS and no NAIVE_LOOPS entry; "
                                f"a REFS line to start from (x[i] is the sample's input i):\n"
                                f"    \"{name}\": lambda x: np.{cname.split('_')[0]}(x[0]),")
                continue
            path = os.path.join(root, NAIVE_LOOPS[name][0])
            if not os.path.exists(path) or f"yg_{cname}(" not in open(path).read():
                failures.append(f"{name}: NAIVE_LOOPS names {NAIVE_LOOPS[name][0]}, which does not call yg_{cname}()")
        names = {name for name, _ in ops}
        failures += [f"{op}: REFS entry names no op" for op in REFS if op not in names]
        checked = 0
        for line in open(os.path.join(out, "manifest.txt")).read().splitlines():
            index, op, dtype, out_dtype, n_inputs, what = line.split("\t", 5)
            ref = reference_for(op, what)
            conditioned = dtype in UNIT_ROUNDOFF and op in CONDITIONED
            if dtype not in ("float32", "float64") and op not in EXACT_ON_INTEGERS | STORED_AS_DTYPE \
                    and not conditioned:
                if op in NAIVE_LOOPS:
                    in_c.add(f"{op} on {dtype}")
                else:
                    unchecked.add(f"{op} on {dtype}")
                continue
            if ref is None:
                if op in REFS:
                    failures.append(f"{op} ({what}): REFS[{op!r}] has no entry for this sample")
                continue
            stem = os.path.join(out, f"{index}_{dtype}")
            xs = [np.load(f"{stem}_in{k}.npy") for k in range(int(n_inputs))]
            got = np.load(f"{stem}_out.npy")
            where = f"{op} ({what}, {dtype})"
            try:
                with np.errstate(all="ignore"):
                    want = np.asarray(ref(xs), dtype=np.float64)
            except Exception as e:  # a reference that does not fit its sample
                failures.append(f"{where}: the NumPy reference raised {e!r}")
                continue
            if op in STORED_AS_DTYPE and out_dtype in ("int64", "int32"):
                want = np.trunc(want)
            checked += 1
            if got.shape != want.shape:
                failures.append(f"{where}: shape {got.shape}, NumPy {want.shape}")
                continue
            if out_dtype == "bool":
                bad = got != (want != 0)  # a bool result saturates: True + True is True
            elif out_dtype in ("int64", "int32"):
                bad = got != want
            elif conditioned:
                with np.errstate(all="ignore"):
                    cond = np.abs(np.asarray(ref([np.abs(x) for x in xs]), dtype=np.float64))
                k = max([1] + [d for x in xs for d in x.shape])
                bad = ~(np.abs(got - want) <= UNIT_ROUNDOFF[out_dtype] * (4 + math.sqrt(k)) * cond)
            else:
                scale = max(1.0, float(np.nanmax(np.abs(want), initial=0.0)))
                bad = ~((np.abs(got - want) <= TOL[out_dtype] * scale) | (np.isnan(got) & np.isnan(want)))
            if np.any(bad):
                k = np.argwhere(bad)[0]
                failures.append(f"{where}: element {tuple(k)} is {got[tuple(k)]!r}, NumPy {want[tuple(k)]!r}")
    failures += [
        f"{run}: no reference for this dtype; add the op to EXACT_ON_INTEGERS or STORED_AS_DTYPE "
        "(or give it an integer reference)"
        for run in sorted(unchecked)
    ]
    for f in failures:
        print(f, file=sys.stderr)
    if in_c:
        print(f"checked in C instead (NAIVE_LOOPS: random values): {', '.join(sorted(in_c))}")
    print(f"reference.py: {checked} outputs compared with NumPy, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
