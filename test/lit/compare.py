"""Compares kime-run's outputs with the reference's: every value within TOL (absolute, or
relative where the reference exceeds 1). Usage: compare.py GOT.json WANT.json [TOL]
golden.py imports compare() from here."""
import json
import sys


def flat(v):
    return [x for row in v for x in (row if isinstance(row, list) else [row])]


def compare(got, want, tol, what=""):
    """Raises AssertionError naming the first value out of tolerance; returns the counts."""
    for key in ("logits", "act"):
        g, w = flat(got[key]), flat(want[key])
        assert len(g) == len(w), f"{what}{key}: {len(g)} values, the reference has {len(w)}"
        for i, (a, b) in enumerate(zip(g, w)):
            assert abs(a - b) <= tol or abs(a - b) <= tol * abs(b), f"{what}{key}[{i}]: {a} vs {b}"
    return len(flat(got["logits"])), len(flat(got["act"]))


if __name__ == "__main__":
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-4
    n, m = compare(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), tol)
    print(f"match: {n} logits, {m} act values within {tol}")
