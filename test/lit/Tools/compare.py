"""Compares kime-run's outputs with the reference's: every value within TOL (absolute, or
relative where the reference exceeds 1). Usage: compare.py GOT.json WANT.json [TOL]"""
import json
import sys

got, want = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
tol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-4
flat = lambda v: [x for row in v for x in (row if isinstance(row, list) else [row])]
for key in ("logits", "act"):
    g, w = flat(got[key]), flat(want[key])
    assert len(g) == len(w), f"{key}: {len(g)} values, the reference has {len(w)}"
    for i, (a, b) in enumerate(zip(g, w)):
        assert abs(a - b) <= tol or abs(a - b) <= tol * abs(b), f"{key}[{i}]: {a} vs {b}"
print(f"match: {len(flat(got['logits']))} logits, {len(flat(got['act']))} act values within {tol}")
