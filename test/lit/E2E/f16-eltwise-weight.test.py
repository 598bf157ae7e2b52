"""Writes a Graph whose elementwise ops read f16 and bf16 weights, and its checkpoint."""
import json
import struct
import sys

out = sys.argv[1]
W = [("tok", "F16", [6, 4]), ("scale", "F16", [4]), ("shift", "BF16", [4]), ("proj.w", "F32", [4, 4]),
     ("head.w", "F32", [1, 4]), ("act.w", "F32", [2, 4])]
nodes = [
    {"op": "gelu", "name": "tok.gelu", "x": "tok"},
    {"op": "gather_rows", "name": "x", "table": "tok.gelu", "index": "ids"},
    {"op": "mul", "name": "bias", "lhs": "scale", "rhs": "shift"},
    {"op": "linear", "name": "y", "x": "x", "weight": "proj.w", "bias": "bias"},
    {"op": "gather_markers", "name": "mk", "x": "y", "cu": "cu", "markers": "markers", "mcu": "mcu"},
    {"op": "linear", "name": "lg", "x": "mk", "weight": "head.w"},
    {"op": "squeeze", "name": "logits", "x": "lg"},
    {"op": "first_rows", "name": "f", "x": "y", "cu": "cu"},
    {"op": "linear", "name": "act", "x": "f", "weight": "act.w"},
]
graph = {"format": 2, "name": "f16", "vocab": 6, "types": 1,
         "inputs": [{"name": "ids", "dtype": "u32", "shape": ["T"]}, {"name": "cu", "dtype": "u32", "shape": ["S+1"]},
                    {"name": "markers", "dtype": "u32", "shape": ["M"]},
                    {"name": "mcu", "dtype": "u32", "shape": ["S+1"]},
                    {"name": "qtype", "dtype": "u8", "shape": ["S"]}],
         "weights": [{"name": n, "dtype": d.lower(), "shape": s} for n, d, s in W],
         "nodes": nodes, "outputs": {"logits": "logits", "act": "act"}}
json.dump(graph, open(f"{out}/graph.json", "w"))

def values(n):
    return [((k * 7) % 11 - 5) / 4 for k in range(n)]

header, data = {}, b""
for name, dtype, shape in W:
    n = 1
    for d in shape:
        n *= d
    vals = values(n)
    if dtype == "F32":
        raw = struct.pack(f"<{n}f", *vals)
    elif dtype == "F16":
        raw = struct.pack(f"<{n}e", *vals)
    else:  # bf16: the top half of an f32 (these values are exact in bf16)
        raw = b"".join(struct.pack("<f", v)[2:] for v in vals)
    header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
    data += raw
h = json.dumps(header).encode()
h += b" " * ((8 - len(h) % 8) % 8)
open(f"{out}/model.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + data)
