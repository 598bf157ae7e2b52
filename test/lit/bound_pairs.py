"""Rewrites a safetensors checkpoint so that every 2-D f32 weight's rows have their pairs (inputs
2p, 2p + 1) within 127/128 of the row's largest |w| in sum of magnitudes (each pair scaled down
where it is not; the largest's partner set to 0): weights that --cpu-precision int8 and int8pairs
quantize the same way (quant/Int8.h). Usage: bound_pairs.py IN.safetensors OUT.safetensors"""
import json
import struct
import sys
from array import array


def bound_row(row):
    largest = max((abs(v) for v in row), default=0.0)
    limit = largest * 127 / 128
    for p in range(0, len(row) - 1, 2):
        a, b = abs(row[p]), abs(row[p + 1])
        if a + b <= limit:
            continue
        if max(a, b) == largest:  # the row's largest stays, its partner goes
            row[p + (1 if a == largest else 0)] = 0.0
        else:
            row[p] *= limit / (a + b)
            row[p + 1] *= limit / (a + b)


def main(src, dst):
    data = open(src, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    body = bytearray(data[8 + n :])
    for name, t in header.items():
        if name == "__metadata__" or t["dtype"] != "F32" or len(t["shape"]) != 2:
            continue
        begin, end = t["data_offsets"]
        values = array("f", bytes(body[begin:end]))
        width = t["shape"][1]
        for r in range(t["shape"][0]):
            row = values[r * width : (r + 1) * width]
            bound_row(row)
            values[r * width : (r + 1) * width] = row
        body[begin:end] = values.tobytes()
    open(dst, "wb").write(data[: 8 + n] + bytes(body))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
