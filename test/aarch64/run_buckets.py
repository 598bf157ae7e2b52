"""Runs one batch in every bucket of every stage of an artifact with a (possibly emulated)
kime-run (or a program with the model linked in: ARTIFACT "-"), and checks each against the host's reference evaluator within 1e-4, and that the
bucket it ran in is the one meant.
Usage: run_buckets.py BUCKETS.json ARTIFACT GRAPH WEIGHTS OUTDIR -- RUNNER... (e.g. qemu-aarch64 -L
/usr/aarch64-linux-gnu build/aarch64/bin/kime-run)"""
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lit"))
from compare import compare  # noqa: E402

split = sys.argv.index("--")
buckets_file, artifact, graph, weights, out = sys.argv[1:split]
runner = sys.argv[split + 1:]
graph_json = json.load(open(graph))
vocab, types = graph_json["vocab"], graph_json["types"]
rng = random.Random(5)
os.makedirs(out, exist_ok=True)
done = 0
for stage, buckets in json.load(open(buckets_file))["stages"].items():
    prev = None
    for i, b in enumerate(buckets):
        # A batch this bucket holds and the one before it does not (few tokens: qemu is slow).
        seqs = min(b["seqs"], 4)
        tokens = min(b["tokens"], 40)
        if prev and prev["seqs"] < b["seqs"]:
            seqs = prev["seqs"] + 1
        elif prev:
            tokens = prev["tokens"] + 1
        seqs = min(seqs, tokens)
        lens = [tokens // seqs + (1 if s < tokens % seqs else 0) for s in range(seqs)]
        batch = {"ids": [], "cu": [0], "markers": [], "mcu": [0], "qtype": []}
        for n in lens:
            batch["ids"] += [rng.randrange(vocab) for _ in range(n)]
            batch["cu"].append(len(batch["ids"]))
            if len(batch["markers"]) < b["markers"]:
                batch["markers"].append(rng.randrange(n))
            batch["mcu"].append(len(batch["markers"]))
            batch["qtype"].append(rng.randrange(types))
        path = f"{out}/{stage}_{i}.json"
        json.dump(batch, open(path, "w"))
        model = [] if artifact == "-" else [artifact]
        got = json.loads(subprocess.run(runner + model + [path, "--stage", stage], check=True,
                                        capture_output=True, text=True).stdout)
        want = json.loads(subprocess.run(["kime-run", "--reference", graph, weights, path], check=True,
                                         capture_output=True, text=True).stdout)
        assert got["bucket"] == b, f"stage {stage}: ran in {got['bucket']}, meant {b}"
        n, m = compare(got, want, 1e-4, f"stage {stage} bucket {i} ")
        print(f"stage {stage} bucket {i} {b}: {sum(lens)} tokens, {n} logits, {m} act values match")
        done += 1
        prev = b
print(f"buckets: {done} checked")
