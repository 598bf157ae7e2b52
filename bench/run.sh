#!/usr/bin/env bash
# CPU benchmark: kime against this machine's FMA peak and, when the peer harness is installed,
# against ONNX Runtime on the same model, weights and batch shapes, all in this one run.
#   bench/run.sh [CONFIG...]            default: small base
# Each shape is timed ROUNDS times (default 3) for each side, kime and ORT taking turns; the
# table shows medians.
# Environment: KIME_PEERS=DIR  an installed copy of ../shared/peers (cp -r ../shared/peers DIR;
#              DIR/install.sh) to time ONNX Runtime too; SHAPES="1x16 8x16 ..."; THREADS=2;
#              BF16=0 to leave out the bf16 columns (kime-compile --cpu-precision bf16, an opt-in
#              timed beside the default f32 where the CPU has AVX512-BF16).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
configs=("${@:-small base}")
[ $# -gt 0 ] || configs=(small base)
shapes=${SHAPES:-1x16 8x16 8x64 32x128 128x32}
threads=${THREADS:-2}
out=$root/bench/out
mkdir -p "$out"
"$root/scripts/build.sh" > "$out/build.log"
bin=$root/build/bin

gcc -O2 -pthread "$root/bench/fma_peak.c" -o "$out/fma_peak"
read -r isa peak1 peak2 < <("$out/fma_peak")
echo "# FMA peak ($isa): $peak1 GFLOP/s on 1 thread, $peak2 GFLOP/s on 2 threads"

for cfg in "${configs[@]}"; do
  case_dir=$out/$cfg
  mkdir -p "$case_dir"
  cp "$root/bench/configs/$cfg.json" "$case_dir/config.json"
  [ -f "$case_dir/model.safetensors" ] ||
    "$bin/kime-graph" "$case_dir/config.json" --name "$cfg" -o "$case_dir/graph.json" \
      --random-weights "$case_dir/model.safetensors" --seed 1
  # One stage per shape, one bucket exactly the shape's size.
  python3 - "$case_dir/buckets.json" $shapes <<'PY'
import json, sys
stages = {}
for s in sys.argv[2:]:
    S, L = map(int, s.split("x"))
    stages[f"s{S}x{L}"] = [{"tokens": S * L, "seqs": S, "markers": S}]
json.dump({"stages": stages}, open(sys.argv[1], "w"))
PY
  [ -f "$case_dir/model.kime" ] && [ "$case_dir/model.kime" -nt "$bin/kime-compile" ] ||
    "$bin/kime-compile" "$case_dir/graph.json" --weights "$case_dir/model.safetensors" \
      --buckets "$case_dir/buckets.json" --target x86-64-avx2,x86-64-avx512 -o "$case_dir/model.kime" \
      -j "$(nproc)" 2> "$case_dir/compile.log"
  bf16=0
  if [ "${BF16:-1}" != 0 ] && grep -qw avx512_bf16 /proc/cpuinfo; then
    bf16=1
    [ -f "$case_dir/model-bf16.kime" ] && [ "$case_dir/model-bf16.kime" -nt "$bin/kime-compile" ] ||
      "$bin/kime-compile" "$case_dir/graph.json" --weights "$case_dir/model.safetensors" \
        --buckets "$case_dir/buckets.json" --cpu-precision bf16 -o "$case_dir/model-bf16.kime" \
        -j "$(nproc)" 2> "$case_dir/compile-bf16.log"
  fi
  : > "$case_dir/kime.txt"
  : > "$case_dir/kime-bf16.txt"
  : > "$case_dir/ort.jsonl"
  peers=0
  if [ -n "${KIME_PEERS:-}" ] && [ -d "$KIME_PEERS/node/node_modules/onnxruntime-node" ]; then
    (cd "$KIME_PEERS" && /usr/bin/python3 export_onnx.py "$case_dir" > "$case_dir/export.log" 2>&1)
    peers=1
  fi
  # Kime and ONNX Runtime take turns, shape by shape, ROUNDS times (the table takes each side's
  # median), so that the machine's slow and fast spells fall on both.
  for s in $shapes; do
    runs=20; [ "$cfg" = base ] && runs=5
    for round in $(seq "${ROUNDS:-3}"); do
      "$bin/kime-run" "$case_dir/model.kime" --bench --stage "s$s" --threads "$threads" --runs $runs --profile \
        >> "$case_dir/kime.txt"
      [ "$bf16" = 0 ] || "$bin/kime-run" "$case_dir/model-bf16.kime" --bench --stage "s$s" --threads "$threads" \
        --runs $runs --profile >> "$case_dir/kime-bf16.txt"
      [ "$peers" = 0 ] || (cd "$KIME_PEERS" && node bench_ort.js "$case_dir" "$s" >> "$case_dir/ort.jsonl")
    done
  done
  python3 - "$case_dir" "$peak2" $shapes <<'PY'
import json, re, sys
case, peak, shapes = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
c = json.load(open(f"{case}/config.json"))
d, hd, H, KV, F, nl = c["hidden"], c["hidden"] // c["heads"], c["heads"], c["kv_heads"], c["ffn"], c["layers"]
def gflop(S, L):  # the peers' count: projections, MLP, attention; 2 FLOPs per multiply-add
    T = S * L
    proj = 2 * T * d * (H * hd + 2 * KV * hd) + 2 * T * H * hd * d
    mlp = 2 * T * d * F * (3 if c["act"] == "swiglu" else 2)
    return nl * (proj + mlp + 4 * S * L * L * H * hd) / 1e9
def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2
# Per shape, each side's rounds: kime's p50 ms and GFLOP/s run, its allocations (the most of any
# round) and the profile of the round with the median time; ORT's ms.
def kime_rounds(path):
    rounds = {}
    lines = open(path).read().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\S+\s+(\d+)x(\d+)\s+([\d.]+)\s+([\d.]+)\s+\S+\s+([\d.]+)\s+(\S+)", line)
        if m:
            prof = lines[i + 1].strip() if i + 1 < len(lines) and "per kernel class" in lines[i + 1] else ""
            rounds.setdefault((int(m[1]), int(m[2])), []).append((float(m[3]), float(m[5]), int(m[6]), prof))
    out = {}
    for key, rs in rounds.items():
        ms = median([r[0] for r in rs])
        mid = min(rs, key=lambda r: abs(r[0] - ms))
        out[key] = (ms, median([r[1] for r in rs]), str(max(r[2] for r in rs)), mid[3], [r[0] for r in rs])
    return out
kime = kime_rounds(f"{case}/kime.txt")
bf16 = kime_rounds(f"{case}/kime-bf16.txt")
ort_rounds = {}
for r in map(json.loads, open(f"{case}/ort.jsonl")):
    ort_rounds.setdefault((r["S"], r["L"]), []).append(r["ms"])
ort = {k: median(v) for k, v in ort_rounds.items()}
# The ratio of each round (ORT's time over kime's, the two run back to back): its spread shows
# how far the machine's slow and fast spells moved the two apart in this run.
def spread(kime_ms, key):
    pairs = list(zip(ort_rounds.get(key, []), kime_ms))
    return f"{min(o / k for o, k in pairs):.2f}-{max(o / k for o, k in pairs):.2f}" if pairs else "-"
print(f"\n## {c.get('name', case.split('/')[-1])}: " + json.dumps(c))
# GFLOP/s: the model's FLOPs (the peers' count) per second; exec: the FLOPs kime ran per second
# (less than the model's once kime-prune-rows computes the last layer only for the heads' rows);
# % peak is of the FLOPs run.
# bf16 (opt-in): the same model compiled with --cpu-precision bf16, timed in the same rounds; its
# exec GFLOP/s may pass the f32 FMA peak (a bf16 dot product does two multiply-adds a lane).
print(f"{'S x L':>7} {'tokens':>6} {'kime ms':>9} {'GFLOP/s':>8} {'exec':>7} {'% peak':>7} {'ORT ms':>8} {'ORT/kime':>8} {'rounds':>9} {'allocs':>6}"
      + (f" | {'bf16 ms':>8} {'exec':>7} {'ORT/bf16':>8} {'rounds':>9} {'allocs':>6}" if bf16 else ""))
for s in shapes:
    S, L = map(int, s.split("x"))
    ms, run, allocs, prof, each = kime[(S, L)]
    g = gflop(S, L) / (ms / 1e3)
    o = ort.get((S, L))
    row = (f"{s:>7} {S * L:>6} {ms:9.2f} {g:8.1f} {run:7.1f} {100 * run / peak:6.1f}% "
           f"{(f'{o:8.2f}' if o else '       -')} {(f'{o / ms:7.2f}x' if o else '       -')} "
           f"{spread(each, (S, L)):>9} {allocs:>6}")
    if (S, L) in bf16:
        bms, brun, ballocs, _, beach = bf16[(S, L)]
        row += (f" | {bms:8.2f} {brun:7.1f} {(f'{o / bms:7.2f}x' if o else '       -')} "
                f"{spread(beach, (S, L)):>9} {ballocs:>6}")
    print(row)
    if prof:
        print(f"{'':>7} {prof}")
PY
done
