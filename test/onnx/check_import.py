#!/usr/bin/env python3
"""kime-import against PyTorch: every model of torch_models.py exported at each opset, imported,
compiled for every bucket, and run on random packed batches (lengths 1 to what the bucket holds,
markers anywhere), its outputs compared with torch's on the same sequences padded. Models outside
the contract must be refused with their reason, and nothing written.

  /usr/bin/python3 test/onnx/check_import.py --bin build/bin [--models a,b] [--opsets 14,17]

Needs the built package on PYTHONPATH (build/python) for kime.compiler and kime.Model. Prints a
table (model, opset, Graph nodes, kernels, batches, worst error) and exits 1 on any failure."""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import torch_models as zoo  # noqa: E402

TOLERANCE = 1e-4  # |kime - torch| on every output, both in f32 arithmetic
BUCKETS = {"stages": {"serve": [{"tokens": 24, "seqs": 3, "markers": 6},
                                {"tokens": 160, "seqs": 8, "markers": 40}]}}
SEEDS_PER_BUCKET = 2


def random_batch(rng, bucket, smaller, types, padding_id=-1):
    """Sequences that fill `bucket` past `smaller` (so that the executor picks it): lengths 1 to
    the model's positions, markers anywhere in their sequence, no token the model's padding id
    (which a batch may not hold: the Graph's padding_id)."""
    while True:
        seqs = []
        budget = bucket["tokens"]
        for _ in range(int(rng.integers(1, bucket["seqs"] + 1))):
            if budget < 1:
                break
            n = int(rng.integers(1, min(zoo.MAX_POS, budget) + 1))
            budget -= n
            markers = sorted(rng.choice(n, size=int(rng.integers(0, min(n, 5) + 1)), replace=False).tolist())
            ids = [(t + 1) % zoo.VOCAB if t == padding_id else t for t in rng.integers(0, zoo.VOCAB, n).tolist()]
            seqs.append((ids, markers, int(rng.integers(0, types))))
        total_markers = sum(len(s[1]) for s in seqs)
        tokens = sum(len(s[0]) for s in seqs)
        if total_markers > bucket["markers"]:
            continue
        fits_smaller = smaller and tokens <= smaller["tokens"] and len(seqs) <= smaller["seqs"] and \
            total_markers <= smaller["markers"]
        if not fits_smaller:
            return seqs


def packed(seqs):
    ids = [t for s in seqs for t in s[0]]
    cu = np.cumsum([0] + [len(s[0]) for s in seqs]).tolist()
    markers = [m for s in seqs for m in s[1]]
    mcu = np.cumsum([0] + [len(s[1]) for s in seqs]).tolist()
    qtype = [s[2] for s in seqs]
    return (np.array(ids, np.uint32), np.array(cu, np.uint32), np.array(markers, np.uint32), np.array(mcu, np.uint32),
            np.array(qtype, np.uint8))


def import_model(kime_bin, onnx_path, out):
    graph, weights = out / "graph.json", out / "model.safetensors"
    r = subprocess.run([kime_bin / "kime-import", onnx_path, "-o", graph, "--weights-out", weights],
                       capture_output=True, text=True)
    return r, graph, weights


def check_valid(name, opset, kime_bin, tmp, model):
    import kime
    import kime.compiler

    onnx_path = tmp / f"{name}.{opset}.onnx"
    zoo.export(name, str(onnx_path), opset)
    r, graph, weights = import_model(kime_bin, onnx_path, tmp / f"{name}.{opset}")
    if r.returncode != 0:
        return f"FAIL import: {r.stderr.strip()}", None
    g = json.loads(graph.read_text())
    buckets = tmp / "buckets.json"
    buckets.write_text(json.dumps(BUCKETS))
    data = kime.compiler.compile(str(graph), str(weights), str(buckets), cuda_archs=[], jobs=2)
    exe = kime.Model.from_bytes(data).executor()
    rng = np.random.default_rng(opset * 1000 + sum(map(ord, name)))
    worst, batches = 0.0, 0
    stage = BUCKETS["stages"]["serve"]
    for k, bucket in enumerate(stage):
        for _ in range(SEEDS_PER_BUCKET):
            seqs = random_batch(rng, bucket, stage[k - 1] if k else None, g["types"], g.get("padding_id", -1))
            logits, act = exe.run(*packed(seqs))
            want_logits, want_act = zoo.torch_outputs(name, model, seqs)
            err = max(np.max(np.abs(logits - want_logits), initial=0.0), np.max(np.abs(act - want_act), initial=0.0))
            worst = max(worst, float(err))
            batches += 1
    status = "ok" if worst <= TOLERANCE else f"FAIL: worst error {worst:.3g} > {TOLERANCE}"
    return status, {"nodes": len(g["nodes"]), "batches": batches, "worst": worst}


def check_refused(name, opset, kime_bin, tmp):
    onnx_path = tmp / f"{name}.{opset}.onnx"
    zoo.export(name, str(onnx_path), opset)
    out = tmp / f"{name}.{opset}"
    out.mkdir(exist_ok=True)
    r, graph, weights = import_model(kime_bin, onnx_path, out)
    want = zoo.MODELS[name].refuse
    if r.returncode == 0:
        return "FAIL: imported, but should be refused", ""
    if graph.exists() or weights.exists():
        return "FAIL: refused, but wrote files", r.stderr.strip()
    if want not in r.stderr:
        return f"FAIL: refused without \"{want}\"", r.stderr.strip()
    return "ok", r.stderr.strip()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", required=True, type=pathlib.Path)
    p.add_argument("--models", default="")
    p.add_argument("--opsets", default=",".join(map(str, zoo.OPSETS)))
    args = p.parse_args()
    names = [n for n in args.models.split(",") if n] or list(zoo.MODELS)
    opsets = [int(o) for o in args.opsets.split(",")]
    failures = 0
    print("| model | opset | Graph nodes | batches | worst error vs torch | |")
    print("| --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as t:
        tmp = pathlib.Path(t)
        for name in names:
            case = zoo.MODELS[name]
            model = case.build().eval()
            for opset in opsets:
                out = tmp / f"{name}.{opset}"
                out.mkdir(exist_ok=True)
                if case.refuse:
                    status, why = check_refused(name, opset, args.bin, tmp)
                    print(f"| {name} | {opset} | refused | | | {status}: {why} |", flush=True)
                else:
                    status, r = check_valid(name, opset, args.bin, tmp, model)
                    if r:
                        print(f"| {name} | {opset} | {r['nodes']} | {r['batches']} | {r['worst']:.2e} | {status} |",
                              flush=True)
                    else:
                        print(f"| {name} | {opset} | | | | {status} |", flush=True)
                failures += status != "ok"
    print(f"{len(names) * len(opsets) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
