"""Runs a test model's artifact on the CUDA backend under the fake driver and the emulated
kernels (see CMakeLists.txt here), every bucket with a few batches (at the bounds, just past the
previous bucket, ragged with an empty sequence and one without markers), once with the tensor
core kernels (tf32) and once with the exact f32 ones, and checks each against the f64 reference
(within abs 1e-2 + rel 1e-2, and 1e-4) and that it ran in the bucket meant; then the artifact's
self-test on the emulated GPU, batch invariance (kime-run --invariance) and that warm runs allocate
nothing.
Usage: check_emulated.py MODEL_DIR BUCKETS.json BIN_DIR FAKE_LIBCUDA TF32_KERNELS F32_KERNELS"""
import json
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from gpu_check import batches_for, compare, sh as run  # noqa: E402

model_dir, buckets_file, bin_dir, fake = sys.argv[1:5]
kernels = {"tf32": sys.argv[5], "f32": sys.argv[6]}
TOLERANCE = {"tf32": (1e-2, 1e-2), "f32": 1e-4}  # Reference.h: kTf32Tolerance, kF32Tolerance
graph, weights, artifact = f"{model_dir}/graph.json", f"{model_dir}/model.safetensors", f"{model_dir}/model.kime"


# With a self-test section of one batch per bucket, run on the emulated GPU below.
buckets_count = sum(len(b) for b in json.load(open(buckets_file))["stages"].values())
run([f"{bin_dir}/kime-compile", graph, "--weights", weights, "--buckets", buckets_file, "--target", "x86-64-avx2",
     "--cuda-arch", "sm_90", "--selftest", str(buckets_count), "-o", artifact])
g = json.load(open(graph))
for math in ("tf32", "f32"):
    env = dict(os.environ, KIME_LIBCUDA=fake, KIME_EMULATED_KERNELS=kernels[math])
    rng = random.Random(3)
    checked, worst_all = 0, 0.0
    for stage, buckets in json.load(open(buckets_file))["stages"].items():
        prev = None
        for b in buckets:
            for name, batch in batches_for(rng, b, prev, g["vocab"], g["types"]).items():
                path = f"{model_dir}/{stage}-{b['tokens']}-{name}.json"
                json.dump(batch, open(path, "w"))
                got = json.loads(run([f"{bin_dir}/kime-run", artifact, path, "--stage", stage, "--device", "cuda",
                                      "--cuda-math", math], env))
                want = json.loads(run([f"{bin_dir}/kime-run", "--reference", graph, weights, path]))
                assert got["bucket"] == b, f"{path}: ran in {got['bucket']}, meant {b}"
                worst = compare(got, want, f"{math} {stage} {b} {name}", TOLERANCE[math])
                worst_all = max(worst_all, worst)
                print(f"{math} {stage} {b} {name}: {len(batch['ids'])} tokens on the emulated GPU, max abs diff {worst:.1e}")
                checked += 1
            prev = b
    print(f"cuda {math} (emulated): {checked} batches match the reference within {TOLERANCE[math]} "
          f"(max abs diff {worst_all:.1e})")
    # The artifact's self-test on the GPU path, held to this arithmetic's tolerance.
    report = run([f"{bin_dir}/kime-run", artifact, "--selftest", "--device", "cuda", "--cuda-math", math], env)
    assert "selftest on cuda" in report and f"selftest: passed ({buckets_count} buckets)" in report, report
    print(report.strip())
    # A sequence's outputs the same bytes alone and among neighbours (docs/batch.md), on the GPU
    # path's kernels too.
    report = run([f"{bin_dir}/kime-run", artifact, "--invariance", "--device", "cuda", "--cuda-math", math,
                  "--trials", "2", "--seed", "3"], env)
    print(report.strip())
    # Warm runs on the GPU path allocate nothing (the fake driver's replay allocates nothing either).
    bench = run([f"{bin_dir}/kime-run", artifact, "--bench", "--device", "cuda", "--cuda-math", math, "--runs", "2"], env)
    rows = [line.split() for line in bench.splitlines() if line and line[0].isdigit()]
    assert rows, f"no bench rows:\n{bench}"
    if os.environ.get("KIME_SANITIZED"):  # a sanitizer owns malloc: kime-run cannot count (it says n/a)
        assert all(r[-1] == "n/a" for r in rows), f"a sanitized kime-run counted allocations:\n{bench}"
        print(f"cuda {math} (emulated): {len(rows)} buckets warm; allocations not counted (sanitized build)")
        continue
    assert all(r[-1] == "0" for r in rows), f"warm runs allocated:\n{bench}"
    print(f"cuda {math} (emulated): warm runs of {len(rows)} buckets allocate nothing")
