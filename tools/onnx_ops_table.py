#!/usr/bin/env python3
"""Writes gen/onnx_ops.c: the ONNX operators (default domain) of opset 17
as gen's mapping checker needs them -- name, the opset version that
introduced the signature in force at opset 17, input names and counts,
attribute names, output counts.  Run by hand when the target opset moves:

    /usr/bin/python3 tools/onnx_ops_table.py > gen/onnx_ops.c

(Debian's python3-onnx; the output depends only on the onnx version.)"""
import onnx
import onnx.defs as defs

OPSET = 17
rows = []
for s in defs.get_all_schemas():
    if s.domain != "" or s.deprecated:
        continue
    try:
        cur = defs.get_schema(s.name, OPSET, "")
    except Exception:
        continue
    if cur.deprecated:
        continue
    # The earliest opset whose version of the op has the same inputs and
    # attributes as the opset-17 one: later versions that only widened the
    # types (Add-14, Relu-14, Where-16) do not raise what an export needs.
    # Every version at or below 13 counts as 13's, the lowest opset the
    # exporter targets (Softmax-13 changed meaning, not names).
    first = cur.since_version
    v = first - 1
    while v >= 13:
        try:
            old = defs.get_schema(s.name, v, "")
        except Exception:
            break
        if ([i.name for i in old.inputs] != [i.name for i in cur.inputs]
                or sorted(old.attributes) != sorted(cur.attributes)
                or old.min_input != cur.min_input or old.max_input != cur.max_input):
            break
        first = old.since_version
        v = first - 1
    rows.append((cur, max(first, 1)))
rows.sort(key=lambda r: r[0].name)

def strs(xs):
    return "{" + ", ".join('"%s"' % x for x in xs) + (", " if xs else "") + "NULL}"

mx = lambda n: -1 if n > 1000 else n
print("/* gen/onnx_ops.c - the ONNX operators of opset %d (onnx %s), written by" % (OPSET, onnx.__version__))
print(" * tools/onnx_ops_table.py; do not edit by hand, rerun the script.  gen checks")
print(" * each `onnx:` mapping of specs/native_functions.yaml against this table:")
print(" * the op name, how many inputs and outputs it takes, which attributes it")
print(" * has, the lowest opset with its opset-%d inputs and attributes (what an" % OPSET)
print(" * export using it needs) and which input's type its first output has")
print(" * (-1: none).  Max counts of -1 mean variadic. */")
print('#include "onnx_map.h"')
print()
print("const gen_onnx_schema gen_onnx_schemas[] = {")
for r, first in rows:
    ins = [i.name for i in r.inputs]
    # The input whose type the first output has (ONNX type constraints:
    # Add's C is T like A; Where's output is T like X, input 1), or -1.
    same = -1
    if r.outputs:
        for k, i in enumerate(r.inputs):
            if i.typeStr == r.outputs[0].typeStr:
                same = k
                break
    print('    {"%s", %d, %d, %d, %d, %d, %d,' % (r.name, first, r.min_input, mx(r.max_input), r.min_output, mx(r.max_output), same))
    print("     (const char *const[])%s," % strs(ins))
    print("     (const char *const[])%s}," % strs(sorted(r.attributes)))
print("};")
print("const int gen_n_onnx_schemas = %d;" % len(rows))
