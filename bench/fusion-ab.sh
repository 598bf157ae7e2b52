#!/usr/bin/env bash
# The cost of generic kernels against fused ones, and (given OLD_BIN, another build's bin/) a
# before/after of the same model: bench/configs/CONFIG.json (default small, weights from seed 1),
# one stage per shape (S sequences of L tokens, 4 markers each), compiled for x86-64-avx2 and
# x86-64-avx512 by this build (fused), by this build with --no-fusion, and by OLD_BIN; each
# kime-run --bench (20 runs, 2 threads) taking turns, ROUNDS rounds (default 3); prints the
# medians of p50 as a table.
#   bench/fusion-ab.sh [CONFIG] [OLD_BIN]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cfg=${1:-small}
old=${2:-}
new=$root/build/bin
out=$root/bench/out/fusion-ab-$cfg
mkdir -p "$out"
cd "$out"
shapes=${SHAPES:-1x16 8x16 8x64 32x128 128x32}
[ -f graph.json ] || "$new/kime-graph" "$root/bench/configs/$cfg.json" --name "$cfg" -o graph.json \
  --random-weights model.safetensors --seed 1
python3 - buckets.json $shapes <<'PY'
import json, sys
stages = {}
for s in sys.argv[2:]:
    S, L = map(int, s.split("x"))
    stages["s" + s] = [{"tokens": S * L, "seqs": S, "markers": S * 4}]
json.dump({"stages": stages}, open(sys.argv[1], "w"))
PY
targets="x86-64-avx2 x86-64-avx512"
flags=(--weights model.safetensors --buckets buckets.json --target "${targets// /,}" --cuda-arch none -j 2)
"$new/kime-compile" graph.json "${flags[@]}" -o fused.kime 2>/dev/null
"$new/kime-compile" graph.json "${flags[@]}" -o generic.kime --no-fusion 2>/dev/null
sides="fused generic"
if [ -n "$old" ]; then "$old/kime-compile" graph.json "${flags[@]}" -o old.kime 2>/dev/null; sides="old $sides"; fi
: > runs.txt
for s in $shapes; do
  for round in $(seq "${ROUNDS:-3}"); do
    for t in $targets; do
      for side in $sides; do
        bin=$new; [ "$side" = old ] && bin=$old
        p50=$("$bin/kime-run" "$side.kime" --cpu-target "$t" --bench --stage "s$s" --threads 2 --runs 20 |
              awk '$1 ~ /^[0-9]/ {print $3; exit}')
        echo "$side $t $s $p50" >> runs.txt
      done
    done
  done
done
python3 - runs.txt "$sides" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    side, target, shape, p50 = line.split()
    runs[(target, shape, side)].append(float(p50))
sides = sys.argv[2].split()
cols = ["target", "shape"] + [f"{s} ms" for s in sides] + ["generic / fused"] + (["fused / old"] if "old" in sides else [])
print("| " + " | ".join(cols) + " |\n" + "| --- " * len(cols) + "|")
for target, shape in dict.fromkeys((t, s) for t, s, _ in runs):
    med = {s: statistics.median(runs[(target, shape, s)]) for s in sides}
    row = [target, shape] + [f"{med[s]:.3f}" for s in sides] + [f"{med['generic'] / med['fused']:.2f}"]
    if "old" in sides: row.append(f"{med['fused'] / med['old']:.2f}")
    print("| " + " | ".join(row) + " |")
PY
