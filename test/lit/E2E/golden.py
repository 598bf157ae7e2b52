"""Every golden case of the independent implementation through the compiled path: compile the
model for the example buckets, run each batch with kime-run, compare with the stored f64
outputs within TOL. Usage: golden.py DATA_DIR BUCKETS OUT_DIR [TOL] [RUNNER...]"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from compare import compare  # noqa: E402

data, buckets, out = sys.argv[1], sys.argv[2], sys.argv[3]
tol = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-4
runner = sys.argv[5:]  # e.g. qemu-aarch64 -L /usr/aarch64-linux-gnu for a foreign kime-run
target = os.environ.get("KIME_TARGET", "x86-64-avx2")
kime_run = os.environ.get("KIME_RUN", "kime-run")
os.makedirs(out, exist_ok=True)
checked = 0
for case in sorted(os.listdir(f"{data}/golden")):
    d = f"{data}/golden/{case}"
    if not os.path.isdir(d):
        continue
    dtype = "bf16" if case.endswith("bf16") else "f32"
    graph, art = f"{out}/{case}.json", f"{out}/{case}.kime"
    subprocess.run(["kime-graph", f"{d}/config.json", "--name", case, "--dtype", dtype, "-o", graph], check=True)
    subprocess.run(["kime-compile", graph, "--weights", f"{d}/model.safetensors", "--buckets", buckets,
                    "--target", target, "-o", art, "-j", "2"], check=True, stderr=subprocess.DEVNULL)
    for k in range(6):
        got = json.loads(subprocess.run(runner + [kime_run, art, f"{d}/batch_{k}.json"], check=True,
                                        capture_output=True, text=True).stdout)
        compare(got, json.load(open(f"{d}/expect_{k}.json")), tol, f"{case} batch {k} ")
        checked += 1
    print(f"{case}: 6 batches match within {tol}")
print(f"golden: {checked} batches")
