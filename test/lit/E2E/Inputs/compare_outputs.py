"""Compares kime-run's outputs (GOT) with kime-run --reference's (WANT), output by output: the same
names in the same order, the same shapes, each value within 1e-4 + 1e-4 |want|. Prints a line per
output and the verdict; exits 1 where they differ."""
import json
import sys


def flat(v):
    return [x for row in v for x in (row if isinstance(row, list) else [row])]


got = json.load(open(sys.argv[1]))
want = json.load(open(sys.argv[2]))
got.pop("bucket")
if list(got) != list(want):
    sys.exit(f"outputs {list(got)} against the reference's {list(want)}")
parts, bad = [], []
for name in want:
    g, w = flat(got[name]), flat(want[name])
    if len(g) != len(w) or any(isinstance(a, list) != isinstance(b, list) for a, b in zip(got[name], want[name])):
        sys.exit(f"{name}: {len(g)} values against the reference's {len(w)}")
    bad += [f"{name}[{i}] {a} vs {b}" for i, (a, b) in enumerate(zip(g, w)) if not abs(a - b) <= 1e-4 + 1e-4 * abs(b)]
    parts.append(f"{name} {len(w)} values")
print(", ".join(parts) + (": within 1e-4" if not bad else ": DIFFER " + "; ".join(bad[:3])))
sys.exit(1 if bad else 0)
