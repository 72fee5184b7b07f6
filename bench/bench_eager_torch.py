#!/usr/bin/python3
"""bench_eager_torch.py - the workloads of bench/bench_eager.c in PyTorch.

Usage: bench_eager_torch.py [--check] [--reps R] WORKLOAD   (--list names them)

Prints the same JSON line as bench_eager with "impl":"torch" (the triad,
"impl":"c" there, is torch.add(b, c, alpha=s, out=a) here).  Each
workload mirrors its C twin op for op: the same shapes, the same inputs
bit for bit (fill_pattern), the same warm-up, the same backward from a
fixed gradient g, the same bytes for gbps.  Read bench_eager.c's
comments for what each workload does and why.

The thread count is OMP_NUM_THREADS (default: PyTorch's own), applied
with torch.set_num_threads.  PyTorch is a benchmark-only dependency.
"""
import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F

WARMUP = 3
OVERHEAD_OPS = 1000
CHAIN_N = 16 * 1024 * 1024
ROWS_COLS = (4096, 1024)


class Bench:
    def __init__(self, workload, reps, check):
        self.workload = workload
        self.reps = reps
        self.check = check
        self.samples = []
        self.ops_per_rep = 1
        self.bytes = 0.0
        self.flops = 0.0
        self.impl = "torch"
        self.checks = {}

    def total_reps(self):
        return WARMUP + self.reps

    def record(self, rep, seconds):
        if rep >= WARMUP:
            self.samples.append(seconds / self.ops_per_rep)

    def check_tensor(self, rep, name, t):
        """[sum, sum |.|, sum of squares] in float64, first rep only."""
        if not self.check or rep != 0:
            return
        d = t.detach().double()
        self.checks[name] = [d.sum().item(), d.abs().sum().item(), (d * d).sum().item()]

    def check_grad(self, rep, name, t):
        if not self.check or rep != 0:
            return
        if t.grad is None:
            sys.exit("bench_eager_torch: %s has no gradient" % name)
        self.check_tensor(rep, name, t.grad)


def fill_pattern(sizes, seed, scale, offset, requires_grad=False):
    """bench_eager.c's fill_pattern, bit for bit: int64 and float64 ops
    are exact or correctly rounded, then one rounding to float32."""
    n = math.prod(sizes)
    i = torch.arange(n, dtype=torch.int64)
    h = (i * 2654435761 + seed * 1013904223) & 0xFFFFFFFF
    u = h.double() / 4294967296.0 - 0.5
    t = (u * scale + offset).float().reshape(sizes).contiguous()
    return t.requires_grad_(requires_grad)


# ---- op overhead ------------------------------------------------------------

def wl_overhead_add(b, requires_grad):
    x = fill_pattern([1], 1, 1, 0, requires_grad)
    w = fill_pattern([1], 2, 1, 0, requires_grad)
    b.ops_per_rep = OVERHEAD_OPS
    add = torch.add
    for r in range(b.total_reps()):
        t0 = time.perf_counter()
        for _ in range(OVERHEAD_OPS):
            y = add(x, w)
        del y
        b.record(r, time.perf_counter() - t0)


def wl_overhead_plain(b):
    wl_overhead_add(b, False)


def wl_overhead_autograd(b):
    wl_overhead_add(b, True)


def wl_overhead_backward(b):
    x = fill_pattern([1], 1, 1, 0, True)
    b.ops_per_rep = OVERHEAD_OPS
    for r in range(b.total_reps()):
        y = x
        for _ in range(OVERHEAD_OPS):
            y = y * 1.0
        x.grad = None
        t0 = time.perf_counter()
        y.backward()
        b.record(r, time.perf_counter() - t0)
        b.check_grad(r, "x.grad", x)
        del y


# ---- MLP train step -----------------------------------------------------------

def wl_mlp_step(b):
    dims = (784, 512, 512, 10)
    batch = 128
    params = []
    for l in range(3):
        scale = 2.0 / math.sqrt(dims[l])
        params.append(fill_pattern([dims[l + 1], dims[l]], 10 + l, scale, 0, True))
        params.append(fill_pattern([dims[l + 1]], 20 + l, scale, 0, True))
    x = fill_pattern([batch, dims[0]], 1, 2, 0)
    target = torch.arange(batch, dtype=torch.int64) % 10
    opt = torch.optim.SGD(params, lr=0.01, momentum=0.9)
    names = ["w1.grad", "b1.grad", "w2.grad", "b2.grad", "w3.grad", "b3.grad"]
    for r in range(b.total_reps()):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)  # yagrad's zero_grad sets grads to none
        h = x
        for l in range(3):
            h = F.linear(h, params[2 * l], params[2 * l + 1])
            if l < 2:
                h = F.relu(h)
        loss = F.cross_entropy(h, target)
        loss.backward()
        if b.check and r == 0:
            b.check_tensor(r, "loss", loss)
            for p, name in zip(params, names):
                b.check_grad(r, name, p)
        opt.step()
        b.record(r, time.perf_counter() - t0)
        del loss, h
    for l in range(3):
        b.check_tensor(0, "w%d.final" % (l + 1), params[2 * l])


# ---- a small CNN's training step -------------------------------------------------

def wl_cnn_step(b):
    batch, ch = 64, (3, 32, 64)
    params, running = [], []
    for l in range(2):
        scale = 2.0 / math.sqrt(ch[l] * 9)
        params.append(fill_pattern([ch[l + 1], ch[l], 3, 3], 30 + l, scale, 0, True))
        params.append(fill_pattern([ch[l + 1]], 40 + l, scale, 0, True))
        params.append(fill_pattern([ch[l + 1]], 50 + l, 0.2, 1, True))
        params.append(fill_pattern([ch[l + 1]], 60 + l, 0.2, 0, True))
        running.append(fill_pattern([ch[l + 1]], 70 + l, 0, 0))
        running.append(fill_pattern([ch[l + 1]], 80 + l, 0, 1))
    params.append(fill_pattern([10, 4096], 90, 2.0 / 64, 0, True))
    params.append(fill_pattern([10], 91, 2.0 / 64, 0, True))
    x = fill_pattern([batch, 3, 32, 32], 1, 2, 0)
    target = torch.arange(batch, dtype=torch.int64) % 10
    opt = torch.optim.SGD(params, lr=0.01)
    names = ["c1.w.grad", "c1.b.grad", "bn1.w.grad", "bn1.b.grad",
             "c2.w.grad", "c2.b.grad", "bn2.w.grad", "bn2.b.grad", "fc.w.grad", "fc.b.grad"]
    for r in range(b.total_reps()):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        h = x
        for l in range(2):
            h = F.conv2d(h, params[4 * l], params[4 * l + 1], padding=1)
            h = F.batch_norm(h, running[2 * l], running[2 * l + 1], params[4 * l + 2],
                             params[4 * l + 3], training=True, momentum=0.1, eps=1e-5)
            h = F.max_pool2d(F.relu(h), 2, 2)
        loss = F.cross_entropy(F.linear(h.flatten(1), params[8], params[9]), target)
        loss.backward()
        if b.check and r == 0:
            b.check_tensor(r, "loss", loss)
            for k, (p, name) in enumerate(zip(params, names)):
                if k not in (1, 5):  # conv biases before batch_norm: 0 up to noise
                    b.check_grad(r, name, p)
        opt.step()
        b.record(r, time.perf_counter() - t0)
        del loss, h


# ---- LSTM cell ----------------------------------------------------------------

def wl_lstm(b, backward):
    n, hid = 20, 650
    ws = 2.0 / math.sqrt(hid)
    inp = [
        fill_pattern([n, hid], 1, 2, 0, backward),
        fill_pattern([n, hid], 2, 2, 0, backward),
        fill_pattern([n, hid], 3, 2, 0, backward),
        fill_pattern([4 * hid, hid], 4, ws, 0, backward),
        fill_pattern([4 * hid, hid], 5, ws, 0, backward),
        fill_pattern([4 * hid], 6, ws, 0, backward),
        fill_pattern([4 * hid], 7, ws, 0, backward),
    ]
    g = (fill_pattern([n, hid], 8, 2, 0), fill_pattern([n, hid], 9, 2, 0))
    names = ["input.grad", "hx.grad", "cx.grad", "w_ih.grad", "w_hh.grad", "b_ih.grad",
             "b_hh.grad"]
    for r in range(b.total_reps()):
        t0 = time.perf_counter()
        hy, cy = torch.lstm_cell(inp[0], (inp[1], inp[2]), inp[3], inp[4], inp[5], inp[6])
        grads = None
        if backward:
            grads = torch.autograd.grad((hy, cy), inp, g)
        b.record(r, time.perf_counter() - t0)
        b.check_tensor(r, "hy", hy)
        b.check_tensor(r, "cy", cy)
        if backward:
            for name, gr in zip(names, grads):
                b.check_tensor(r, name, gr)
        del hy, cy, grads


def wl_lstm_fwd(b):
    wl_lstm(b, False)


def wl_lstm_fwdbwd(b):
    wl_lstm(b, True)


# ---- backward from y with a fixed g -------------------------------------------

def run_fwd_or_fwdbwd(b, f, inp, names, g):
    for r in range(b.total_reps()):
        if g is not None:
            for t in inp:
                t.grad = None
        t0 = time.perf_counter()
        y = f(inp)
        if g is not None:
            y.backward(g)
        b.record(r, time.perf_counter() - t0)
        b.check_tensor(r, "y", y)
        if g is not None:
            for name, t in zip(names, inp):
                b.check_grad(r, name, t)
        del y


def chain_forward(inp):
    x, w, bias = inp
    return torch.tanh(x * w + bias) * torch.sigmoid(x)


def wl_chain(b, backward):
    inp = [fill_pattern([CHAIN_N], 1, 4, 0, backward),
           fill_pattern([CHAIN_N], 2, 2, 0, backward),
           fill_pattern([CHAIN_N], 3, 2, 0, backward)]
    g = fill_pattern([CHAIN_N], 4, 2, 0) if backward else None
    b.bytes = (11.0 if backward else 4.0) * 4.0 * CHAIN_N
    run_fwd_or_fwdbwd(b, chain_forward, inp, ["x.grad", "w.grad", "b.grad"], g)


def wl_chain_fwd(b):
    wl_chain(b, False)


def wl_chain_fwdbwd(b):
    wl_chain(b, True)


def norm_bytes(numel, backward):
    return (5.0 if backward else 2.0) * 4.0 * numel


def wl_rows(b, f, affine, backward):
    inp = [fill_pattern(list(ROWS_COLS), 1, 8, 0, backward)]
    if affine:
        inp.append(fill_pattern([ROWS_COLS[1]], 2, 0.2, 1, backward))
        inp.append(fill_pattern([ROWS_COLS[1]], 3, 0.2, 0, backward))
    g = fill_pattern(list(ROWS_COLS), 4, 2, 0) if backward else None
    b.bytes = norm_bytes(ROWS_COLS[0] * ROWS_COLS[1], backward)
    run_fwd_or_fwdbwd(b, f, inp, ["x.grad", "weight.grad", "bias.grad"], g)


def softmax_forward(inp):
    return torch.softmax(inp[0], 1)


def log_softmax_forward(inp):
    return torch.log_softmax(inp[0], 1)


def layer_norm_forward(inp):
    return F.layer_norm(inp[0], (ROWS_COLS[1],), inp[1], inp[2], 1e-5)


def scaled_softmax_forward(inp):
    return torch.softmax(inp[0] * 0.125, 1)


def wl_scaled_softmax_fwd(b):
    wl_rows(b, scaled_softmax_forward, False, False)


def wl_softmax_fwd(b):
    wl_rows(b, softmax_forward, False, False)


def wl_softmax_fwdbwd(b):
    wl_rows(b, softmax_forward, False, True)


def wl_log_softmax_fwd(b):
    wl_rows(b, log_softmax_forward, False, False)


def wl_log_softmax_fwdbwd(b):
    wl_rows(b, log_softmax_forward, False, True)


def add_layer_norm_forward(inp):
    x, w, bias, r = inp
    return F.layer_norm(x + r, (ROWS_COLS[1],), w, bias, 1e-5)


def wl_add_layer_norm_fwd(b):
    inp = [fill_pattern(list(ROWS_COLS), 1, 8, 0), fill_pattern([ROWS_COLS[1]], 2, 0.2, 1),
           fill_pattern([ROWS_COLS[1]], 3, 0.2, 0), fill_pattern(list(ROWS_COLS), 5, 2, 0)]
    b.bytes = 3.0 * 4.0 * ROWS_COLS[0] * ROWS_COLS[1]
    run_fwd_or_fwdbwd(b, add_layer_norm_forward, inp, [], None)


def wl_layer_norm_fwd(b):
    wl_rows(b, layer_norm_forward, True, False)


def wl_layer_norm_fwdbwd(b):
    wl_rows(b, layer_norm_forward, True, True)


# ---- batch_norm ----------------------------------------------------------------

def wl_batch_norm(b, backward):
    s = [32, 64, 56, 56]
    inp = [fill_pattern(s, 1, 8, 0, backward),
           fill_pattern([64], 2, 0.2, 1, backward),
           fill_pattern([64], 3, 0.2, 0, backward)]
    running_mean = torch.zeros(64)
    running_var = torch.ones(64)

    def forward(t):
        return F.batch_norm(t[0], running_mean, running_var, t[1], t[2], True, 0.1, 1e-5)

    g = fill_pattern(s, 4, 2, 0) if backward else None
    b.bytes = norm_bytes(math.prod(s), backward)
    run_fwd_or_fwdbwd(b, forward, inp, ["x.grad", "weight.grad", "bias.grad"], g)
    b.check_tensor(0, "running_mean", running_mean)
    b.check_tensor(0, "running_var", running_var)


def wl_batch_norm_fwd(b):
    wl_batch_norm(b, False)


def wl_batch_norm_fwdbwd(b):
    wl_batch_norm(b, True)


# ---- max pooling -----------------------------------------------------------------

def wl_max_pool(b, backward):
    s = [64, 32, 32, 32]
    inp = [fill_pattern(s, 1, 8, 0, backward)]
    g = fill_pattern([64, 32, 16, 16], 4, 2, 0) if backward else None
    n = math.prod(s)
    m = n / 4
    b.bytes = 4 * n + 12 * m + ((4 * m + 8 * m + 4 * n) if backward else 0)
    run_fwd_or_fwdbwd(b, lambda t: F.max_pool2d(t[0], 2, 2), inp, ["x.grad"], g)


def wl_max_pool_fwd(b):
    wl_max_pool(b, False)


def wl_max_pool_fwdbwd(b):
    wl_max_pool(b, True)


# ---- index-adds -------------------------------------------------------------------

def wl_index_add_common(b, embedding):
    rows, dim = (50304, 768) if embedding else (4096, 512)
    n = 256 if embedding else 16384
    ids = (torch.arange(n, dtype=torch.int64) * 2654435761) % rows
    g = fill_pattern([n, dim], 3, 2, 0)
    b.bytes = 4.0 * rows * dim + 4.0 * 3 * n * dim
    for r in range(b.total_reps()):
        t0 = time.perf_counter()
        if embedding:
            out = torch.ops.aten.embedding_backward(g, ids, rows, -1, False, False)
        else:
            out = torch.zeros(rows, dim).index_add_(0, ids, g)
        b.record(r, time.perf_counter() - t0)
        b.check_tensor(r, "y", out)


def wl_embedding_bwd(b):
    wl_index_add_common(b, True)


def wl_index_add(b):
    wl_index_add_common(b, False)


# ---- triad ---------------------------------------------------------------------

def wl_triad(b):
    n = CHAIN_N
    a = torch.zeros(n)
    x = torch.full((n,), 1.0)
    y = torch.full((n,), 2.0)
    b.bytes = 3.0 * 4.0 * n
    for r in range(b.total_reps()):
        t0 = time.perf_counter()
        torch.add(x, y, alpha=3.0, out=a)
        b.record(r, time.perf_counter() - t0)
    b.check_tensor(0, "a", a)


# ---- convolutions ---------------------------------------------------------------

# (n, c_in, c_out, h, w, k, stride, padding, groups, transposed): bench_eager.c's
# conv_shape table.
CONV3X3 = (32, 64, 64, 56, 56, 3, 1, 1, 1, False)
CONV1X1 = (32, 256, 64, 56, 56, 1, 1, 0, 1, False)
DEPTHWISE3X3 = (32, 64, 64, 56, 56, 3, 1, 1, 64, False)
CONV_TRANSPOSE = (32, 128, 64, 28, 28, 4, 2, 1, 1, True)


def conv_out_size(s, size):
    n, c_in, c_out, h, w, k, stride, padding, groups, transposed = s
    if transposed:
        return (size - 1) * stride - 2 * padding + k
    return (size + 2 * padding - k) // stride + 1


def conv_macs(s):
    n, c_in, c_out, h, w, k, stride, padding, groups, transposed = s
    if transposed:
        return n * c_in * h * w * (c_out // groups) * k * k
    return n * c_out * conv_out_size(s, h) * conv_out_size(s, w) * (c_in // groups) * k * k


def wl_conv(b, s, backward):
    n, c_in, c_out, h, w, k, stride, padding, groups, transposed = s
    ws = [c_in, c_out // groups, k, k] if transposed else [c_out, c_in // groups, k, k]
    fan_in = ws[1] * k * k
    inp = [fill_pattern([n, c_in, h, w], 1, 2, 0, backward),
           fill_pattern(ws, 2, 2 / math.sqrt(fan_in), 0, backward),
           fill_pattern([c_out], 3, 2 / math.sqrt(fan_in), 0, backward)]
    ys = [n, c_out, conv_out_size(s, h), conv_out_size(s, w)]
    g = fill_pattern(ys, 4, 2, 0) if backward else None

    def forward(t):
        if transposed:
            return F.conv_transpose2d(t[0], t[1], t[2], stride, padding, 0, groups, 1)
        return F.conv2d(t[0], t[1], t[2], stride, padding, 1, groups)

    b.flops = (6.0 if backward else 2.0) * conv_macs(s)
    run_fwd_or_fwdbwd(b, forward, inp, ["x.grad", "weight.grad", "bias.grad"], g)


def wl_conv3x3_fwd(b):
    wl_conv(b, CONV3X3, False)


def wl_conv3x3_fwdbwd(b):
    wl_conv(b, CONV3X3, True)


def wl_conv1x1_fwd(b):
    wl_conv(b, CONV1X1, False)


def wl_depthwise3x3_fwd(b):
    wl_conv(b, DEPTHWISE3X3, False)


def wl_conv_transpose2d_fwd(b):
    wl_conv(b, CONV_TRANSPOSE, False)


# ---- causal attention -----------------------------------------------------------

def attention_forward(inp):
    # PyTorch 1.13's attention, (output, weights), the [T, T] weights made;
    # its arguments are (q, k, v, attn_mask, dropout_p, need_attn_weights,
    # is_causal): (..., None, 0.0, True) would ask for the weights and not
    # be causal
    return F._scaled_dot_product_attention(inp[0], inp[1], inp[2], None, 0.0, False, True)[0]


def wl_attention_t(b, t):
    s = [1, 12, t, 64]
    inp = [fill_pattern(s, 1, 2, 0, True), fill_pattern(s, 2, 2, 0, True),
           fill_pattern(s, 3, 2, 0, True)]
    g = fill_pattern(s, 4, 2, 0)
    b.flops = 6.0 * t * t * 64 * 12
    run_fwd_or_fwdbwd(b, attention_forward, inp, ["q.grad", "k.grad", "v.grad"], g)


def wl_attention(b):
    wl_attention_t(b, 1024)


def wl_attention_long(b):
    wl_attention_t(b, 4096)


# fma_peak has no twin here: it is a C loop (bench_eager.c), run on the
# yagrad side only.
WORKLOADS = {
    "overhead_plain": (wl_overhead_plain, 100),
    "overhead_autograd": (wl_overhead_autograd, 100),
    "overhead_backward": (wl_overhead_backward, 100),
    "mlp_step": (wl_mlp_step, 50),
    "cnn_step": (wl_cnn_step, 20),
    "lstm_fwd": (wl_lstm_fwd, 50),
    "lstm_fwdbwd": (wl_lstm_fwdbwd, 50),
    # yagrad runs the cell written as ops through its executor (its gates
    # fused); PyTorch's lstm_cell eager is the reference.
    "lstm_fused_fwd": (wl_lstm_fwd, 50),
    "lstm_fused_fwdbwd": (wl_lstm_fwdbwd, 50),
    "chain_fwd": (wl_chain_fwd, 10),
    "chain_fwdbwd": (wl_chain_fwdbwd, 10),
    # yagrad runs these through its executor (fused); PyTorch eager is the
    # reference, as for chain_*.
    "chain_fused_fwd": (wl_chain_fwd, 10),
    "chain_fused_fwdbwd": (wl_chain_fwdbwd, 10),
    "softmax_fwd": (wl_softmax_fwd, 20),
    "softmax_fwdbwd": (wl_softmax_fwdbwd, 20),
    "scaled_softmax_fwd": (wl_scaled_softmax_fwd, 20),
    # yagrad runs this through its executor (a group anchored by softmax);
    # PyTorch eager is the reference.
    "scaled_softmax_fused_fwd": (wl_scaled_softmax_fwd, 20),
    "log_softmax_fwd": (wl_log_softmax_fwd, 20),
    "log_softmax_fwdbwd": (wl_log_softmax_fwdbwd, 20),
    "layer_norm_fwd": (wl_layer_norm_fwd, 20),
    "layer_norm_fwdbwd": (wl_layer_norm_fwdbwd, 20),
    "add_layer_norm_fwd": (wl_add_layer_norm_fwd, 20),
    # yagrad runs this through its executor (a group anchored by
    # layer_norm); PyTorch eager is the reference.
    "add_layer_norm_fused_fwd": (wl_add_layer_norm_fwd, 20),
    "batch_norm_fwd": (wl_batch_norm_fwd, 10),
    "batch_norm_fwdbwd": (wl_batch_norm_fwdbwd, 10),
    "max_pool_fwd": (wl_max_pool_fwd, 20),
    "max_pool_fwdbwd": (wl_max_pool_fwdbwd, 20),
    "embedding_bwd": (wl_embedding_bwd, 20),
    "index_add": (wl_index_add, 20),
    "triad": (wl_triad, 20),
    "conv3x3_fwd": (wl_conv3x3_fwd, 10),
    "conv3x3_fwdbwd": (wl_conv3x3_fwdbwd, 5),
    "conv1x1_fwd": (wl_conv1x1_fwd, 10),
    "depthwise3x3_fwd": (wl_depthwise3x3_fwd, 10),
    "conv_transpose2d_fwd": (wl_conv_transpose2d_fwd, 10),
    "attention": (wl_attention, 20),
    "attention_long": (wl_attention_long, 3),
}


def quantile(v, q):
    """bench_eager.c's quantile: linear between neighbours of sorted v."""
    pos = q * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def usage():
    sys.exit("usage: bench_eager_torch.py [--check] [--reps R] WORKLOAD | --list")


def main(argv):
    check, reps, name = False, None, None
    it = iter(argv)
    for arg in it:
        if arg == "--check":
            check = True
        elif arg == "--reps":
            reps = int(next(it, "0"))
            if reps < 1:
                usage()
        elif arg == "--list":
            print("\n".join(WORKLOADS))
            return 0
        elif name is None and not arg.startswith("-"):
            name = arg
        else:
            usage()
    if name not in WORKLOADS:
        sys.exit("bench_eager_torch: unknown workload %s (--list names them)" % name)
    threads = os.environ.get("OMP_NUM_THREADS")
    if threads:
        torch.set_num_threads(int(threads))
    run, default_reps = WORKLOADS[name]
    b = Bench(name, reps or default_reps, check)
    run(b)
    v = sorted(b.samples)
    med = quantile(v, 0.5)
    line = {"bench": "eager", "impl": b.impl, "workload": name,
            "threads": torch.get_num_threads(), "reps": b.reps,
            "median_us": round(med * 1e6, 3), "p10_us": round(quantile(v, 0.1) * 1e6, 3),
            "p90_us": round(quantile(v, 0.9) * 1e6, 3)}
    if b.bytes > 0:
        line["gbps"] = round(b.bytes / med * 1e-9, 2)
    if b.flops > 0:
        line["gflops"] = round(b.flops / med * 1e-9, 2)
    if check:
        line["check"] = b.checks
    print(json.dumps(line, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
