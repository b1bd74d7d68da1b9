#!/usr/bin/env python3
"""Writes the safetensors files of safetensors.test: a LLaMA-style MLP's
weights under Hugging Face's names, as PyTorch stores them (nn.Linear
weights [out, in]), in F32 and BF16, plus damaged copies. Standard library
only: the format is an 8-byte little-endian header length, a JSON header
and the raw little-endian data."""
import json
import struct
import sys

D, F = 24, 40
PREFIX = "model.layers.0."


def values(n, seed):
    """n deterministic values in [-0.2, 0.2) (a 32-bit LCG)."""
    out, state = [], seed
    for _ in range(n):
        state = (state * 1664525 + 1013904223) % (1 << 32)
        out.append((state / (1 << 32) - 0.5) * 0.4)
    return out


def encode(vals, dtype):
    if dtype == "F32":
        return struct.pack("<%df" % len(vals), *vals)
    # BF16: the upper half of the f32 bits, rounded to nearest even.
    out = bytearray()
    for v in vals:
        bits = struct.unpack("<I", struct.pack("<f", v))[0]
        bits += 0x7FFF + ((bits >> 16) & 1)
        out += struct.pack("<H", (bits >> 16) & 0xFFFF)
    return bytes(out)


def tensors(dtype):
    return [
        (PREFIX + "mlp.gate_proj.weight", [F, D], values(F * D, 1)),
        (PREFIX + "mlp.up_proj.weight", [F, D], values(F * D, 2)),
        (PREFIX + "mlp.down_proj.weight", [D, F], values(D * F, 3)),
        (PREFIX + "post_attention_layernorm.weight", [D],
         [1.0 + v for v in values(D, 4)]),
    ]


def transposed(name, shape, vals):
    """The same tensor [in, out], under ffnc's parameter name."""
    names = {"gate_proj": "w_gate", "up_proj": "w_up", "down_proj": "w_down"}
    if len(shape) == 1:
        return "norm_scale", shape, vals
    rows, cols = shape
    flipped = [vals[c * cols + r] for r in range(cols) for c in range(rows)]
    return names[name.split(".")[-2]], [cols, rows], flipped


def write(path, dtype, damage=None, in_out=False):
    header, data = {"__metadata__": {"format": "pt"}}, b""
    for name, shape, vals in tensors(dtype):
        if in_out:
            name, shape, vals = transposed(name, shape, vals)
        raw = encode(vals, dtype)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if damage == "offsets":
        header[PREFIX + "mlp.down_proj.weight"]["data_offsets"][1] += 4096
    if damage == "dtype":
        header[PREFIX + "mlp.up_proj.weight"]["dtype"] = "Q7"
    if damage == "huge":
        header[PREFIX + "mlp.up_proj.weight"]["shape"] = [1 << 40, 1 << 40]
    text = json.dumps(header).encode()
    if damage == "deep":
        # Nesting far beyond any reader's recursion budget.
        text = text[:-1] + b', "__metadata__": ' + b"[" * 100000 + b"]" * 100000 + b"}"
    if damage == "json":
        text = text[:-1]
    length = struct.pack("<Q", len(text))
    if damage == "length":
        length = struct.pack("<Q", 1 << 40)
    blob = length + text + data
    if damage == "truncated":
        blob = blob[:5]
    with open(path, "wb") as f:
        f.write(blob)


if __name__ == "__main__":
    out = sys.argv[1]
    write(out + "/mlp-f32.safetensors", "F32")
    write(out + "/mlp-bf16.safetensors", "BF16")
    write(out + "/mlp-f32-in-out.safetensors", "F32", in_out=True)
    for damage in ["offsets", "dtype", "json", "length", "truncated", "huge",
                   "deep"]:
        write(out + "/bad-%s.safetensors" % damage, "F32", damage)
