"""Fast rebuilds on the example model, timed side by side in one run:
    python3 bench/rebuild_time.py [BIN_DIR] [ROUNDS] [SELFTEST]
a full compile (no cache), a full compile filling an empty kernel cache, a refit with new weights
(kime-compile --refit; and with --drop-selftest, which leaves out the f64 self-test), kime-compile
--update with other new weights (what kime_add_model runs), and a compile after adding a bucket in
the middle of a stage with the cache warm. Each new checkpoint is one the cache has not seen, so
its self-test's reference outputs are computed, as they are when a model is retrained. Every artifact is
compared with a full compile of the same inputs without the cache (they must be the same bytes).
The example model's options as scripts/main-job.sh has them: its three buckets, x86-64-avx2 and
x86-64-avx512, PTX for sm_80 and sm_90 where the build makes PTX, a self-test of SELFTEST batches
(default 6; 0 as kime_add_model compiles), -j nproc."""
import filecmp
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    bin_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "bin")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    selftest = sys.argv[3] if len(sys.argv) > 3 else "6"
    work = tempfile.mkdtemp(prefix="kime-rebuild-")
    tool = lambda name: os.path.join(bin_dir, name)
    path = lambda name: os.path.join(work, name)
    config = os.path.join(ROOT, "examples", "small", "config.json")
    for seed in (1, 2, 3):
        subprocess.run([tool("kime-graph"), config, "--name", "kime_small", "-o", path("graph.json"),
                        "--random-weights", path("w%d.safetensors" % seed), "--seed", str(seed)], check=True)
    buckets = json.load(open(os.path.join(ROOT, "examples", "small", "buckets.json")))
    json.dump(buckets, open(path("b3.json"), "w"))
    serve = buckets["stages"]["serve"]
    serve.insert(1, {"tokens": 256, "seqs": 16, "markers": 64})
    json.dump(buckets, open(path("b4.json"), "w"))

    def compile_(out, weights="w1", bucket_file="b3", extra=()):
        cmd = [tool("kime-compile"), path("graph.json"), "--weights", path(weights + ".safetensors"), "--buckets",
               path(bucket_file + ".json"), "--selftest", selftest, "-j", str(os.cpu_count()), "-o", path(out),
               "--cache-dir", path("cache")] + list(extra)
        if "--refit" in extra:  # a refit takes its graph, buckets and options from the artifact
            cmd = [tool("kime-compile"), "--weights", path(weights + ".safetensors"), "-o", path(out),
                   "-j", str(os.cpu_count()), "--cache-dir", path("cache")] + list(extra)
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
        return time.perf_counter() - start

    times = {k: [] for k in ("full, no cache", "full, empty cache", "refit (--refit)", "refit, --drop-selftest",
                             "new weights (--update)", "bucket added, warm cache")}
    for _ in range(rounds):
        shutil.rmtree(path("cache"), ignore_errors=True)
        times["full, no cache"].append(compile_("none.kime", extra=["--no-cache"]))
        times["full, empty cache"].append(compile_("full.kime"))
        times["refit (--refit)"].append(compile_("refit.kime", "w2", extra=["--refit", path("full.kime")]))
        times["refit, --drop-selftest"].append(
            compile_("nost.kime", "w2", extra=["--refit", path("full.kime"), "--drop-selftest"]))
        shutil.copy(path("full.kime"), path("update.kime"))
        times["new weights (--update)"].append(compile_("update.kime", "w3", extra=["--update"]))
        times["bucket added, warm cache"].append(compile_("added.kime", bucket_file="b4"))
    compile_("none-w2.kime", "w2", extra=["--no-cache"])
    compile_("none-w3.kime", "w3", extra=["--no-cache"])
    subprocess.run([tool("kime-compile"), path("graph.json"), "--weights", path("w2.safetensors"), "--buckets",
                    path("b3.json"), "-j", str(os.cpu_count()), "--no-cache", "-o", path("none-w2-nost.kime")],
                   check=True, stderr=subprocess.DEVNULL)
    compile_("none-b4.kime", bucket_file="b4", extra=["--no-cache"])
    same = {"full.kime": "none.kime", "refit.kime": "none-w2.kime", "nost.kime": "none-w2-nost.kime",
            "update.kime": "none-w3.kime",
            "added.kime": "none-b4.kime"}
    for got, want in same.items():
        if not filecmp.cmp(path(got), path(want), shallow=False):
            sys.exit("FAIL: %s differs from %s" % (got, want))
    full = statistics.median(times["full, no cache"])
    print("| compile of the example model | median s | of the full compile |")
    print("| --- | --- | --- |")
    for name, t in times.items():
        print("| %s | %.2f | %.0f%% |" % (name, statistics.median(t), 100 * statistics.median(t) / full))
    print("self-test of %s batches; %d rounds; every artifact byte-identical to the full compile of its inputs "
          "without the cache" % (selftest, rounds))
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
