"""The two halves of scripts/gpu-check.sh (see there).
  gpu_check.py prepare BUNDLE ROOT      build host: model, artifact, batches, reference outputs
  gpu_check.py run BUNDLE KIME_RUN      GPU machine: correctness on every bucket, then the benchmark"""
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "lit"))
from compare import compare as within, flat  # noqa: E402

# Stages of the GPU artifact: the example's serving buckets and one bucket per benchmark shape
# (S sequences of L tokens, one marker each), the shapes of the CPU benchmark (bench/run.sh).
SERVE = [{"tokens": 128, "seqs": 8, "markers": 32}, {"tokens": 512, "seqs": 32, "markers": 128}]
BULK = [{"tokens": 4096, "seqs": 128, "markers": 1024}]
SHAPES = [(1, 16), (8, 16), (8, 64), (32, 128), (128, 32)]
TOL = 1e-4  # the f32 kernels against the f64 reference
MATH_TOL = {"tf32": (1e-2, 1e-2), "f32": TOL}  # tensor cores take TF32 inputs (Reference.h: kTf32Tolerance)


def sh(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"gpu-check: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr.strip()}")
    return p.stdout


def make_batch(rng, lens, markers_per_seq, vocab, types):
    b = {"ids": [], "cu": [0], "markers": [], "mcu": [0], "qtype": []}
    for n, m in zip(lens, markers_per_seq):
        b["ids"] += [rng.randrange(vocab) for _ in range(n)]
        b["cu"].append(len(b["ids"]))
        b["markers"] += [rng.randrange(n) for _ in range(m if n else 0)]
        b["mcu"].append(len(b["markers"]))
        b["qtype"].append(rng.randrange(types))
    return b


def batches_for(rng, bucket, prev, vocab, types):
    """A few batches the bucket holds: at its bounds; just past the previous bucket; ragged with
    an empty sequence and one without markers."""
    T, S, M = bucket["tokens"], bucket["seqs"], bucket["markers"]
    out = {}
    per = [M // S + (1 if s < M % S else 0) for s in range(S)]
    lens = [T // S + (1 if s < T % S else 0) for s in range(S)]
    out["bounds"] = make_batch(rng, lens, [min(p, n) for p, n in zip(per, lens)], vocab, types)
    if prev:
        s = min(S, prev["seqs"] + 1) if prev["seqs"] < S else min(S, 3)
        t = max(prev["tokens"] + 1, s) if prev["tokens"] < T else min(T, 40)
        lens = [t // s + (1 if i < t % s else 0) for i in range(s)]
        out["past-previous"] = make_batch(rng, lens, [1] * s, vocab, types)
    s = min(S, 5)
    lens = [max(1, min(T // (2 * s), 60)) for _ in range(s)]
    lens[1 if s > 1 else 0] = 0
    marks = [min(2, n) for n in lens]
    marks[-1] = 0
    while sum(marks) > M:
        marks[marks.index(max(marks))] -= 1
    out["ragged"] = make_batch(rng, lens, marks, vocab, types)
    return out


def compare(got, want, what, tol=TOL):
    """Asserts every output within tol of the reference (compare.py's rule); returns the largest
    absolute difference."""
    within(got, want, tol, what + ": ")
    return max((abs(a - b) for key in ("logits", "act") for a, b in zip(flat(got[key]), flat(want[key]))),
               default=0.0)

def prepare(bundle, root):
    bin_dir = f"{root}/build/bin"
    cfg_path = f"{root}/bench/configs/small.json"
    cfg = json.load(open(cfg_path))
    json.dump(cfg, open(f"{bundle}/config.json", "w"))
    sh([f"{bin_dir}/kime-graph", cfg_path, "--name", "small", "-o", f"{bundle}/graph.json",
        "--random-weights", f"{bundle}/model.safetensors", "--seed", "1"])
    stages = {"serve": SERVE, "bulk": BULK}
    for S, L in SHAPES:
        stages[f"s{S}x{L}"] = [{"tokens": S * L, "seqs": S, "markers": S}]
    json.dump({"stages": stages}, open(f"{bundle}/buckets.json", "w"))
    t0 = time.time()
    subprocess.run([f"{bin_dir}/kime-compile", f"{bundle}/graph.json", "--weights", f"{bundle}/model.safetensors",
                    "--buckets", f"{bundle}/buckets.json", "--target", "x86-64-avx2", "--cuda-arch", "sm_80,sm_90",
                    "-o", f"{bundle}/model.kime", "-j", str(os.cpu_count())], check=True,
                   stderr=open(f"{bundle}/compile.log", "w"))
    print(f"compiled {bundle}/model.kime in {time.time() - t0:.1f} s")
    rng = random.Random(7)
    os.makedirs(f"{bundle}/cases", exist_ok=True)
    cases = []
    for stage, buckets in stages.items():
        prev = None
        for i, b in enumerate(buckets):
            for name, batch in batches_for(rng, b, prev, cfg["vocab"], cfg["types"]).items():
                base = f"cases/{stage}_{i}_{name}"
                json.dump(batch, open(f"{bundle}/{base}.json", "w"))
                want = sh([f"{bin_dir}/kime-run", "--reference", f"{bundle}/graph.json",
                           f"{bundle}/model.safetensors", f"{bundle}/{base}.json"])
                open(f"{bundle}/{base}.expect.json", "w").write(want)
                # The same batch on this machine's CPU runtime first: the bundle is consistent.
                got = json.loads(sh([f"{bin_dir}/kime-run", f"{bundle}/model.kime", f"{bundle}/{base}.json",
                                     "--stage", stage]))
                assert got["bucket"] == b, f"{base}: ran in {got['bucket']}, meant {b}"
                compare(got, json.loads(want), f"cpu {base}")
                cases.append({"stage": stage, "bucket": b, "name": name, "batch": f"{base}.json",
                              "expect": f"{base}.expect.json"})
            prev = b
    json.dump({"cases": cases, "shapes": SHAPES}, open(f"{bundle}/cases.json", "w"), indent=1)
    print(f"{len(cases)} batches with reference outputs, checked on the CPU runtime; bundle: {bundle}")


def bench_kime(kime_run, bundle, stage, runs, math):
    out = sh([kime_run, f"{bundle}/model.kime", "--bench", "--device", "cuda", "--cuda-math", math, "--stage", stage,
              "--runs", str(runs)])
    rows = []
    for line in out.splitlines():
        f = line.split()
        if line.startswith("#") or not f or not re.match(r"^\d+/\d+/\d+$", f[0]):
            continue
        rows.append({"bucket": f[0], "shape": f[1], "p50": float(f[2]), "p99": float(f[3]),
                     "tokens_s": float(f[4]), "gflops": float(f[5]), "allocs": f[6]})
    return out, rows


def bench_torch(bundle, shapes, runs, tf32):
    sys.path.insert(0, f"{bundle}/peer")
    import torch
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    from kime_padded import KimePadded
    from safetensors_io import load

    cfg = json.load(open(f"{bundle}/config.json"))
    model = KimePadded(cfg, load(f"{bundle}/model.safetensors")[0]).cuda().eval()
    results = {}
    g = torch.Generator().manual_seed(0)
    with torch.inference_mode():
        for S, L in shapes:
            ids_h = torch.randint(0, cfg["vocab"], (S, L), generator=g).pin_memory()
            qt_h = torch.randint(0, cfg["types"], (S,), generator=g).pin_memory()
            ids, qt = ids_h.cuda(), qt_h.cuda()
            mask = torch.ones(S, L, dtype=torch.long, device="cuda")
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    model(ids, mask, qt)
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                logits, act = model(ids, mask, qt)
            # As kime's run: inputs in, the graph, outputs back, wait.
            times = []
            for r in range(runs + 5):
                t = time.perf_counter()
                ids.copy_(ids_h, non_blocking=True)
                qt.copy_(qt_h, non_blocking=True)
                graph.replay()
                lo, ac = logits.cpu(), act.cpu()
                torch.cuda.synchronize()
                if r >= 5:
                    times.append(time.perf_counter() - t)
            results[(S, L)] = 1e3 * statistics.median(times)
    return results, torch.__version__, torch.cuda.get_device_name()


def run(bundle, kime_run):
    index = json.load(open(f"{bundle}/cases.json"))
    print("\n".join(l for l in sh([kime_run, f"{bundle}/model.kime", "--inspect"]).splitlines() if "code." in l))
    for math in ("tf32", "f32"):
        print(f"== every bucket on the GPU, {math}, against the f64 reference (tolerance {MATH_TOL[math]})")
        worst_by_bucket = {}
        t0 = time.time()
        for c in index["cases"]:
            got = json.loads(sh([kime_run, f"{bundle}/model.kime", f"{bundle}/{c['batch']}", "--stage", c["stage"],
                                 "--device", "cuda", "--cuda-math", math]))
            what = f"gpu {math} {c['stage']} {c['bucket']} {c['name']}"
            assert got["bucket"] == c["bucket"], f"{what}: ran in {got['bucket']}"
            worst = compare(got, json.load(open(f"{bundle}/{c['expect']}")), what, MATH_TOL[math])
            key = (c["stage"], json.dumps(c["bucket"]))
            worst_by_bucket[key] = max(worst_by_bucket.get(key, 0.0), worst)
        for (stage, b), w in worst_by_bucket.items():
            print(f"  {stage:8} {b}: ok, max abs diff {w:.2e}")
        print(f"  {len(index['cases'])} batches match ({time.time() - t0:.1f} s)")
        # Reported, not required: the GPU's kernels are not promised batch-invariant (docs/batch.md).
        inv = subprocess.run([kime_run, f"{bundle}/model.kime", "--invariance", "--device", "cuda", "--cuda-math", math,
                              "--trials", "4"], capture_output=True, text=True)
        print(f"  batch invariance on the GPU ({math}), for the record:\n{inv.stdout}{inv.stderr}".rstrip())

    print("== benchmark: kime (one CUDA graph per bucket) and PyTorch (CUDA graphs), same model and batches")
    shapes = [tuple(s) for s in index["shapes"]]
    kime = {}
    for math in ("tf32", "f32"):
        for S, L in shapes:
            out, rows = bench_kime(kime_run, bundle, f"s{S}x{L}", 200, math)
            for r in rows:
                assert r["allocs"] == "0", f"warm GPU runs allocated: {out}"
                kime[(math, S, L)] = r
        for stage in ("serve", "bulk"):
            out, rows = bench_kime(kime_run, bundle, stage, 100, math)
            print(out.rstrip())
            for r in rows:
                assert r["allocs"] == "0", f"warm GPU runs allocated: {out}"
    if not os.path.exists(f"{bundle}/peer/kime_padded.py"):
        print("# no PyTorch peer in the bundle (KIME_PEERS_SRC at prepare): kime's times only, above")
        print("gpu-check: all checks passed")
        return
    torch_ms = {}
    for math in ("tf32", "f32"):
        ms, version, device = bench_torch(bundle, shapes, 200, math == "tf32")
        for k, v in ms.items():
            torch_ms[(math,) + k] = v
    print(f"# {device}; torch {version}; wall clock per batch (copies and sync included), medians")
    print(f"{'math':>5} {'S x L':>8} {'tokens':>7} {'kime ms':>9} {'kime tok/s':>11} {'GFLOP/s':>8} {'torch ms':>9} "
          f"{'torch tok/s':>12} {'torch/kime':>10}")
    for math in ("tf32", "f32"):
        for S, L in shapes:
            k, t = kime[(math, S, L)], torch_ms[(math, S, L)]
            print(f"{math:>5} {S}x{L:<5} {S * L:>7} {k['p50']:>9.3f} {k['tokens_s']:>11.0f} {k['gflops']:>8.1f} {t:>9.3f} "
                  f"{S * L / (t / 1e3):>12.0f} {t / k['p50']:>9.2f}x")
    print("gpu-check: all checks passed")


if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
