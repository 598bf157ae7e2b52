#!/usr/bin/env bash
# An imported model against the same network built by kime-graph, in one run: CONFIG's Graph and
# random weights (seed 1) from kime-graph; the same network and weights written in PyTorch
# (bench/kime_torch.py), exported to ONNX (kime.onnx.export) and imported (kime-import); both
# compiled for the bench's shapes, their plans' kernel counts side by side, their outputs on one
# batch compared, and both timed by kime-run --bench (ROUNDS rounds, taking turns; medians).
#   bench/onnx_import.sh [CONFIG]        default: base (bench/configs/CONFIG.json)
#   ROBERTA=1 bench/onnx_import.sh base  the PyTorch side spelled as HF's RoBERTa (kime_torch.py --roberta:
#                                        positions from the non-pad count, the type buffer; check batch of type 0)
# Environment: SHAPES="1x16 8x16 8x64 32x128 128x32", THREADS=2, ROUNDS=3, TARGET=x86-64-avx512
# (x86-64-avx2 where the CPU has no AVX-512).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cfg=${1:-base}
shapes=${SHAPES:-1x16 8x16 8x64 32x128 128x32}
threads=${THREADS:-2}
rounds=${ROUNDS:-3}
target=${TARGET:-$(grep -qw avx512f /proc/cpuinfo && echo x86-64-avx512 || echo x86-64-avx2)}
roberta=${ROBERTA:-0}
out=$root/bench/out/onnx-$cfg$([ "$roberta" = 1 ] && echo -roberta)
bin=$root/build/bin
mkdir -p "$out"
"$root/scripts/build.sh" > "$out/build.log"

"$bin/kime-graph" "$root/bench/configs/$cfg.json" --name "$cfg" -o "$out/graph.json" \
  --random-weights "$out/model.safetensors" --seed 1
PYTHONPATH=$root/build/python /usr/bin/python3 -W ignore "$root/bench/kime_torch.py" "$root/bench/configs/$cfg.json" \
  "$out/model.safetensors" "$out/model.onnx" $([ "$roberta" = 1 ] && echo --roberta) 2> "$out/export.log"
"$bin/kime-import" "$out/model.onnx" -o "$out/imported.json" --weights-out "$out/imported.safetensors" 2>&1
python3 - "$out/buckets.json" $shapes <<'PY'
import json, sys
stages = {f"s{s}": [{"tokens": int(s.split("x")[0]) * int(s.split("x")[1]), "seqs": int(s.split("x")[0]),
                     "markers": int(s.split("x")[0])}] for s in sys.argv[2:]}
stages["check"] = [{"tokens": 64, "seqs": 8, "markers": 16}]  # examples/small/batch.json
json.dump({"stages": stages}, open(sys.argv[1], "w"))
PY
for side in graph imported; do
  weights=$out/model.safetensors
  [ "$side" = imported ] && weights=$out/imported.safetensors
  echo "# $side: $("$bin/kime-compile" "$out/$side.json" --weights "$weights" --buckets "$out/buckets.json" --emit=plan 2>/dev/null |
    grep '^bucket' | sed 's/.*: arena [0-9]* bytes, //' | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
  "$bin/kime-compile" "$out/$side.json" --weights "$weights" --buckets "$out/buckets.json" --target "$target" \
    --cuda-arch none -j "$(nproc)" -o "$out/$side.kime" 2> "$out/compile-$side.log"
done
# One batch through both (examples/small/batch.json, its types within the config's): the same
# network and weights give the same outputs, to f32 rounding.
python3 - "$root/examples/small/batch.json" "$root/bench/configs/$cfg.json" "$out/batch.json" "$roberta" <<'PY'
import json, sys
b, cfg = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
b["qtype"] = [q % cfg["types"] if sys.argv[4] != "1" else 0 for q in b["qtype"]]  # RoBERTa: type 0
b["ids"] = [i % cfg["vocab"] if sys.argv[4] != "1" or i % cfg["vocab"] != 1 else 2 for i in b["ids"]]  # no pad id
json.dump(b, open(sys.argv[3], "w"))
PY
"$bin/kime-run" "$out/graph.kime" "$out/batch.json" --stage check > "$out/graph.out"
"$bin/kime-run" "$out/imported.kime" "$out/batch.json" --stage check > "$out/imported.out"
python3 - "$out/graph.out" "$out/imported.out" <<'PY'
import json, sys
a, b = (json.loads(open(p).read() or "null") for p in sys.argv[1:])
if a and b:
    d = max([abs(x - y) for x, y in zip(a["logits"], b["logits"])] +
            [abs(x - y) for p, q in zip(a["act"], b["act"]) for x, y in zip(p, q)])
    print(f"# outputs on examples/small/batch.json: largest difference {d:.3g}")
PY
echo "# $cfg, $target, $threads threads, $rounds rounds, medians of p50 ms (kime-run --bench)"
echo "| shape | kime-graph | imported from ONNX | imported / kime-graph |"
echo "| --- | --- | --- | --- |"
for shape in $shapes; do
  for side in graph imported; do : > "$out/$side-$shape.p50"; done
  for _ in $(seq "$rounds"); do
    for side in graph imported; do
      "$bin/kime-run" "$out/$side.kime" --bench --stage "s$shape" --threads "$threads" --runs 20 2>/dev/null |
        awk 'NR > 2 { print $3 }' >> "$out/$side-$shape.p50"
    done
  done
  python3 - "$shape" "$out/graph-$shape.p50" "$out/imported-$shape.p50" <<'PY'
import statistics, sys
g, i = (statistics.median(float(x) for x in open(p).read().split()) for p in sys.argv[2:])
print(f"| {sys.argv[1]} | {g:.3f} | {i:.3f} | {i / g:.3f} |")
PY
done
