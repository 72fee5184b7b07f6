#!/usr/bin/env python3
"""Checks exported models with onnx.checker (full check: types inferred
and checked node by node).  Usage: check_models.py DIR NAME...  where
DIR/NAME.onnx was written by test_onnx; a NAME '@list' reads the names
from DIR/list.txt (one per line).  Prints one line per
model (opset, nodes, initializers); exits 1 on the first failure."""
import os
import sys

import onnx
import onnx.checker


def names(d, args):
    for a in args:
        if a.startswith("@"):
            with open(os.path.join(d, a[1:] + ".txt")) as f:
                yield from (line.strip() for line in f if line.strip())
        else:
            yield a


def main():
    d = sys.argv[1]
    n = 0
    for name in names(d, sys.argv[2:]):
        path = os.path.join(d, name + ".onnx")
        if not os.path.exists(path):
            print(f"{name}: {path} is missing (did the export test run?)")
            return 1
        m = onnx.load(path)
        try:
            onnx.checker.check_model(m, full_check=True)
        except Exception as e:  # the checker's message names the node
            print(f"{name}: onnx.checker failed: {e}")
            return 1
        print(f"{name}: ok (ir {m.ir_version}, opset {m.opset_import[0].version}, "
              f"{len(m.graph.node)} nodes, {len(m.graph.initializer)} initializers)")
        n += 1
    print(f"{n} models pass onnx.checker.check_model(full_check=True)")
    return 0 if n > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
