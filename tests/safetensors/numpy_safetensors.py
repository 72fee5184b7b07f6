#!/usr/bin/env python3
"""An independent safetensors writer and reader, in NumPy, for the tests
of yagrad/safetensors.h (tests/test_safetensors.c).

It follows the format's specification
(https://github.com/huggingface/safetensors, "Format"), not yagrad's code:
8 bytes little-endian u64 N, N bytes of JSON header, then the data,
little-endian and row-major, each tensor at its data_offsets counted from
the end of the header.

  numpy_safetensors.py write FILE   writes TENSORS below (header keys in
                                    reverse name order, data in name order,
                                    no padding: what a minimal writer does)
  numpy_safetensors.py check FILE   reads FILE (yagrad's writer) and checks
                                    it holds TENSORS and METADATA exactly,
                                    with the layout the reference writer
                                    gives: header padded with spaces to a
                                    multiple of 8, data ordered by element
                                    size (largest first) then name, the
                                    tensors tiling the data

test_safetensors.c holds the same values: keep the two in step.
"""
import json
import struct
import sys

import numpy as np


def bf16(values):
    """bfloat16 bits of float32 values that bfloat16 holds exactly."""
    bits = np.asarray(values, dtype="<f4").view("<u4")
    assert np.all(bits & 0xFFFF == 0), "value not exact in bfloat16"
    return (bits >> 16).astype("<u2")


# name -> (safetensors dtype, array of little-endian values)
TENSORS = {
    "f32": ("F32", np.arange(6, dtype="<f4").reshape(2, 3) * np.float32(0.5) - np.float32(1)),
    "f64": ("F64", np.array([[1.5, -2.25], [1e300, -0.0]], dtype="<f8")),
    "f16": ("F16", np.array([1.0, -2.5, 65504.0, 0.000061035156], dtype="<f2")),
    "bf16": ("BF16", bf16([1.0, -3.5, 0.15625, 256.0])),
    "i64": ("I64", np.array([-(2**62), 0, 2**62 + 1], dtype="<i8")),
    "i32": ("I32", np.arange(-3, 3, dtype="<i4").reshape(3, 2)),
    "bool": ("BOOL", np.array([[True, False], [False, True]], dtype=np.bool_)),
    "scalar": ("F32", np.array(3.25, dtype="<f4")),
    "empty": ("F32", np.zeros((0, 4), dtype="<f4")),
    "nested.name/with:chars": ("I32", np.array([7], dtype="<i4")),
}
# Only in the file this script writes: a dtype yagrad does not have.
UNSUPPORTED = {"u8": ("U8", np.array([1, 2, 255], dtype=np.uint8))}
METADATA = {"format": "np", "written by": "numpy_safetensors.py"}

SIZES = {"F64": 8, "I64": 8, "F32": 4, "I32": 4, "F16": 2, "BF16": 2, "BOOL": 1, "U8": 1}


def write(path):
    tensors = dict(TENSORS)
    tensors.update(UNSUPPORTED)
    header, chunks, offset = {}, [], 0
    for name in sorted(tensors):
        dtype, array = tensors[name]
        data = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    ordered = {"__metadata__": METADATA}
    for name in sorted(header, reverse=True):
        ordered[name] = header[name]
    text = json.dumps(ordered).encode("utf-8")
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for c in chunks:
            f.write(c)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    if n % 8 != 0:
        fail("header length %d is not a multiple of 8" % n)
    text = raw[8:8 + n].decode("utf-8")
    if not text.rstrip(" ").endswith("}") or n - len(text.rstrip(" ")) >= 8:
        fail("header %r is not JSON padded with fewer than 8 spaces" % text[-16:])
    header = json.loads(text)
    data = raw[8 + n:]
    if header.pop("__metadata__", None) != METADATA:
        fail("metadata differs")
    if sorted(header) != sorted(TENSORS):
        fail("names %s, expected %s" % (sorted(header), sorted(TENSORS)))
    expected_order = sorted(header, key=lambda k: (-SIZES[header[k]["dtype"]], k))
    by_offset = sorted(header, key=lambda k: tuple(header[k]["data_offsets"]))
    if by_offset != expected_order:
        fail("data order %s, expected %s" % (by_offset, expected_order))
    at = 0
    for name in by_offset:
        info = header[name]
        dtype, want = TENSORS[name]
        b, e = info["data_offsets"]
        if b != at:
            fail("%s begins at %d, expected %d" % (name, b, at))
        at = e
        if info["dtype"] != dtype or info["shape"] != list(want.shape):
            fail("%s is %s %s, expected %s %s" % (name, info["dtype"], info["shape"], dtype,
                                                   list(want.shape)))
        got = np.frombuffer(data[b:e], dtype=want.dtype).reshape(want.shape)
        if got.tobytes() != np.ascontiguousarray(want).tobytes():
            fail("%s holds %s, expected %s" % (name, got, want))
    if at != len(data):
        fail("the tensors end at %d, the data at %d" % (at, len(data)))
    print("ok: %d tensors, metadata, layout and values as written by the reference" % len(header))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "check"):
        sys.exit("usage: numpy_safetensors.py write|check FILE")
    (write if sys.argv[1] == "write" else check)(sys.argv[2])
