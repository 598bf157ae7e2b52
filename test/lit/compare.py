"""Compares kime-run's outputs with the reference's: every value within ABS + REL * |reference|
(Reference.h's Tolerance: ABS is the arithmetic's noise floor, so a wrong sign or a wrong order
of magnitude fails for any output larger than about ABS). Usage: compare.py GOT.json WANT.json
[ABS[,REL]] (REL defaults to ABS). golden.py and gpu_check.py import compare() from here."""
import json
import sys


def flat(v):
    return [x for row in v for x in (row if isinstance(row, list) else [row])]


def tolerance(tol):
    """(abs, rel) from a number (both the same), a pair, or the text "ABS[,REL]"."""
    if isinstance(tol, str):
        tol = tuple(float(x) for x in tol.split(","))
    if isinstance(tol, (int, float)):
        return float(tol), float(tol)
    return (tol[0], tol[0]) if len(tol) == 1 else (tol[0], tol[1])


def describe(tol):
    a, r = tolerance(tol)
    return f"{a}" if a == r else f"abs {a} + rel {r}"


def compare(got, want, tol, what=""):
    """Raises AssertionError naming the first value out of tolerance; returns the counts."""
    a_tol, r_tol = tolerance(tol)
    for key in ("logits", "act"):
        g, w = flat(got[key]), flat(want[key])
        assert len(g) == len(w), f"{what}{key}: {len(g)} values, the reference has {len(w)}"
        for i, (a, b) in enumerate(zip(g, w)):
            assert abs(a - b) <= a_tol + r_tol * abs(b), f"{what}{key}[{i}]: {a} vs {b} (within {describe(tol)})"
    return len(flat(got["logits"])), len(flat(got["act"]))


if __name__ == "__main__":
    tol = sys.argv[3] if len(sys.argv) > 3 else "1e-4"
    n, m = compare(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), tol)
    print(f"match: {n} logits, {m} act values within {describe(tol)}")
