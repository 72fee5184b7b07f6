#!/usr/bin/env python3
"""Exports torch.nn.LSTMCell(650, 650) at batch 20 to ONNX (opset 17) as
the reference for bench/bench_onnx_lstm_cell.js: PyTorch's exporter and
yagrad's run in the same onnxruntime process.  Needs Debian's
python3-torch (a benchmark-only dependency).  Usage:
    /usr/bin/python3 bench/export_torch_lstm_cell.py OUT.onnx"""
import sys

import torch


class Cell(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = torch.nn.LSTMCell(650, 650)

    def forward(self, x, h, c):
        return self.cell(x, (h, c))


torch.manual_seed(0)
args = tuple(torch.randn(20, 650) for _ in range(3))
torch.onnx.export(Cell().eval(), args, sys.argv[1], opset_version=17,
                  input_names=["x", "h", "c"], output_names=["hy", "cy"])
