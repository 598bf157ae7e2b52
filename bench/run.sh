#!/usr/bin/env bash
# CPU benchmark: every x86 code path kime emits that this CPU runs (AVX2 always, AVX-512 where
# present, each forced with kime-run --cpu-target), each against its own ISA's FMA peak and, when
# the peer harness is installed, against ONNX Runtime on the same model, weights and batch
# shapes, all in this one run.
#   bench/run.sh [CONFIG...]            default: small base
# Each shape is timed ROUNDS times (default 3) for each side, the code paths and ORT taking
# turns; the tables show medians, one table per code path.
# On a CPU with AVX-512, ONNX Runtime picks its AVX-512 kernels; where the CPU can make CPUID
# fault (cpuid_fault), ORT is also timed with CPUID showing no AVX-512 (bench/avx2_only.c), i.e.
# on the kernels it runs on an AVX2-only CPU, and the AVX2 table sets kime's AVX2 path beside that.
# Environment: KIME_PEERS=DIR  an ONNX Runtime peer harness, kept outside this repository, to time
#              ORT too: DIR/export_onnx.py CASE (the case's Graph and weights to CASE/model.onnx),
#              DIR/bench_ort.js CASE SHAPE (one JSON line of timings) and onnxruntime-node
#              installed under DIR/node/node_modules; SHAPES="1x16 8x16 ..."; THREADS=2;
#              BF16=0 to leave out the bf16 columns (kime-compile --cpu-precision bf16, an opt-in
#              timed beside the default f32 where the CPU has AVX512-BF16); INT8=0 to leave out
#              the int8 tables: kime-compile --cpu-precision int8 on each of its x86 code paths
#              this CPU runs (AVX2, AVX-512, AVX512-VNNI), and --cpu-precision int8pairs on AVX2,
#              beside kime f32 and ORT's int8 path (bench/onnx_int8.py) on the same ISA: AVX2
#              against ORT's int8 with CPUID masked to AVX2 where it can be, and AVX-512 (without
#              VNNI) against ORT's int8 with CPUID masked to AVX-512 without VNNI where the CPU
#              has VNNI (bench/avx2_only.c built with KEEP_AVX512_CORE: a Skylake-SP's view).
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
"$out/fma_peak" > "$out/peaks.txt"
while read -r isa peak1 peak2; do
  echo "# FMA peak ($isa): $peak1 GFLOP/s on 1 thread, $peak2 GFLOP/s on 2 threads"
done < "$out/peaks.txt"
# The code paths to time: x86-64-<isa> for each ISA the peak probe found.
targets=()
while read -r isa _; do targets+=("x86-64-$isa"); done < "$out/peaks.txt"
# ORT on its AVX2 kernels too, where this CPU has more and CPUID can be masked.
ort_avx2=0 ort_avx512core=0
if [[ " ${targets[*]} " == *" x86-64-avx512 "* ]]; then
  gcc -O2 -shared -fPIC "$root/bench/avx2_only.c" -o "$out/avx2_only.so" -ldl
  gcc -O2 "$root/bench/cpuid_probe.c" -o "$out/cpuid_probe"
  if LD_PRELOAD="$out/avx2_only.so" "$out/cpuid_probe" 2>&1 | tr '\n' ' ' | grep -q 'avx2 1 avx512f 0'; then
    ort_avx2=1
    echo "# ONNX Runtime also on its AVX2 kernels: CPUID masked to show no AVX-512 (bench/avx2_only.c)"
    # and its int8 on the AVX-512 kernels of a CPU without VNNI, where this one has VNNI.
    gcc -O2 -shared -fPIC -DKEEP_AVX512_CORE "$root/bench/avx2_only.c" -o "$out/avx512_core_only.so" -ldl
    if grep -qw avx512_vnni /proc/cpuinfo && LD_PRELOAD="$out/avx512_core_only.so" "$out/cpuid_probe" 2>&1 |
      tr '\n' ' ' | grep -q 'avx512f 1 avx512bw 1 avx512_vnni 0'; then
      ort_avx512core=1
      echo "# ONNX Runtime's int8 also on its AVX-512 kernels without VNNI: CPUID masked (avx512_core_only.so)"
    fi
  else
    echo "# ONNX Runtime on its AVX-512 kernels only: this CPU cannot make CPUID fault (no cpuid_fault)"
  fi
fi

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
  # int8 (opt-in): each x86 int8 path this CPU runs (the runtime's rule for the VNNI one).
  int8_targets=()
  if [ "${INT8:-1}" != 0 ]; then
    int8_targets=("${targets[@]}")
    if grep -qw avx512_vnni /proc/cpuinfo && grep -qw avx512_bf16 /proc/cpuinfo &&
      grep -qw avx512vbmi /proc/cpuinfo && grep -qw avx512ifma /proc/cpuinfo; then
      int8_targets+=(x86-64-avx512vnni)
    fi
    [ -f "$case_dir/model-int8.kime" ] && [ "$case_dir/model-int8.kime" -nt "$bin/kime-compile" ] ||
      "$bin/kime-compile" "$case_dir/graph.json" --weights "$case_dir/model.safetensors" \
        --buckets "$case_dir/buckets.json" --cpu-precision int8 -o "$case_dir/model-int8.kime" \
        -j "$(nproc)" 2> "$case_dir/compile-int8.log"
    # int8pairs: int8 with its weights bounded in pairs, for AVX2's vpmaddubsw (quant/Int8.h).
    [ -f "$case_dir/model-int8pairs.kime" ] && [ "$case_dir/model-int8pairs.kime" -nt "$bin/kime-compile" ] ||
      "$bin/kime-compile" "$case_dir/graph.json" --weights "$case_dir/model.safetensors" \
        --buckets "$case_dir/buckets.json" --cpu-precision int8pairs --target x86-64-avx2 \
        -o "$case_dir/model-int8pairs.kime" -j "$(nproc)" 2> "$case_dir/compile-int8pairs.log"
  fi
  for t in "${targets[@]}"; do : > "$case_dir/kime-$t.txt"; done
  for t in "${int8_targets[@]}"; do : > "$case_dir/kime-int8-$t.txt"; done
  : > "$case_dir/kime-int8pairs-x86-64-avx2.txt"
  : > "$case_dir/kime-bf16.txt"
  : > "$case_dir/ort.jsonl"
  : > "$case_dir/ort-avx2.jsonl"
  : > "$case_dir/ort-int8.jsonl"
  : > "$case_dir/ort-int8-avx2.jsonl"
  : > "$case_dir/ort-int8-avx512core.jsonl"
  peers=0 ort_int8=0
  if [ -n "${KIME_PEERS:-}" ] && [ -d "$KIME_PEERS/node/node_modules/onnxruntime-node" ]; then
    (cd "$KIME_PEERS" && /usr/bin/python3 export_onnx.py "$case_dir" > "$case_dir/export.log" 2>&1)
    peers=1
    # ORT's own int8 path on kime's int8 weights (bench/onnx_int8.py), timed as a case of its own.
    if [ "${INT8:-1}" != 0 ]; then
      KIME_PEERS="$KIME_PEERS" /usr/bin/python3 "$root/bench/onnx_int8.py" "$case_dir" "$case_dir/int8" \
        > "$case_dir/int8.log" 2>&1 && ort_int8=1
    fi
  fi
  # Kime and ONNX Runtime take turns, shape by shape, ROUNDS times (the table takes each side's
  # median), so that the machine's slow and fast spells fall on both.
  for s in $shapes; do
    runs=20; [ "$cfg" = base ] && runs=5
    for round in $(seq "${ROUNDS:-3}"); do
      for t in "${targets[@]}"; do
        "$bin/kime-run" "$case_dir/model.kime" --cpu-target "$t" --bench --stage "s$s" --threads "$threads" \
          --runs $runs --profile >> "$case_dir/kime-$t.txt"
      done
      [ "$bf16" = 0 ] || "$bin/kime-run" "$case_dir/model-bf16.kime" --bench --stage "s$s" --threads "$threads" \
        --runs $runs --profile >> "$case_dir/kime-bf16.txt"
      for t in "${int8_targets[@]}"; do
        "$bin/kime-run" "$case_dir/model-int8.kime" --cpu-target "$t" --bench --stage "s$s" --threads "$threads" \
          --runs $runs --profile >> "$case_dir/kime-int8-$t.txt"
      done
      [ "${#int8_targets[@]}" = 0 ] || "$bin/kime-run" "$case_dir/model-int8pairs.kime" --cpu-target x86-64-avx2 \
        --bench --stage "s$s" --threads "$threads" --runs $runs --profile >> "$case_dir/kime-int8pairs-x86-64-avx2.txt"
      [ "$peers" = 0 ] || (cd "$KIME_PEERS" && node bench_ort.js "$case_dir" "$s" >> "$case_dir/ort.jsonl")
      [ "$ort_int8" = 0 ] || (cd "$KIME_PEERS" && node bench_ort.js "$case_dir/int8" "$s" >> "$case_dir/ort-int8.jsonl")
      [ "$peers" = 0 ] || [ "$ort_avx2" = 0 ] ||
        (cd "$KIME_PEERS" && LD_PRELOAD="$out/avx2_only.so" node bench_ort.js "$case_dir" "$s" >> "$case_dir/ort-avx2.jsonl")
      [ "$ort_int8" = 0 ] || [ "$ort_avx2" = 0 ] || (cd "$KIME_PEERS" &&
        LD_PRELOAD="$out/avx2_only.so" node bench_ort.js "$case_dir/int8" "$s" >> "$case_dir/ort-int8-avx2.jsonl")
      [ "$ort_int8" = 0 ] || [ "$ort_avx512core" = 0 ] || (cd "$KIME_PEERS" && LD_PRELOAD="$out/avx512_core_only.so" \
        node bench_ort.js "$case_dir/int8" "$s" >> "$case_dir/ort-int8-avx512core.jsonl")
    done
  done
  python3 - "$case_dir" "$out/peaks.txt" "${targets[*]}" "${int8_targets[*]}" $shapes <<'PY'
import json, os, re, sys
case, peaks_file, targets, int8_targets, shapes = (sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split(),
                                                   sys.argv[5:])
peaks = {f"x86-64-{l.split()[0]}": float(l.split()[2]) for l in open(peaks_file) if l.strip()}
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
def ort_runs(path):
    rounds = {}
    for r in map(json.loads, open(path) if os.path.exists(path) else []):
        rounds.setdefault((r["S"], r["L"]), []).append(r["ms"])
    return rounds
# ORT as it runs on this CPU, and (where CPUID could be masked) on its AVX2 kernels.
ort_native, ort_avx2 = ort_runs(f"{case}/ort.jsonl"), ort_runs(f"{case}/ort-avx2.jsonl")
# The ratio of each round (ORT's time over kime's, the two run back to back): its spread shows
# how far the machine's slow and fast spells moved the two apart in this run.
def spread(ort_rounds, kime_ms, key):
    pairs = list(zip(ort_rounds.get(key, []), kime_ms))
    return f"{min(o / k for o, k in pairs):.2f}-{max(o / k for o, k in pairs):.2f}" if pairs else "-"
print(f"\n## {c.get('name', case.split('/')[-1])}: " + json.dumps(c))
# One table per code path. GFLOP/s: the model's FLOPs (the peers' count) per second; exec: the
# FLOPs kime ran per second (less than the model's once kime-prune-rows computes the last layer
# only for the heads' rows); % peak is of the FLOPs run, against the FMA peak of the path's own
# ISA; linear: the linear kernels' FLOPs per second of their time (from --profile), and that
# against the same peak.
# bf16 (opt-in): the same model compiled with --cpu-precision bf16, timed in the same rounds; its
# exec GFLOP/s may pass the f32 FMA peak (a bf16 dot product does two multiply-adds a lane).
def table(title, rounds, peak, ort_rounds, ort_name):
    ort = {k: median(v) for k, v in ort_rounds.items()}
    print(f"\n### {title}: FMA peak {peak:.1f} GFLOP/s on 2 threads; ORT: {ort_name}")
    print(f"{'S x L':>7} {'tokens':>6} {'kime ms':>9} {'GFLOP/s':>8} {'exec':>7} {'% peak':>7} {'linear':>7} {'% peak':>7} "
          f"{'ORT ms':>8} {'ORT/kime':>8} {'rounds':>9} {'allocs':>6}")
    for s in shapes:
        S, L = map(int, s.split("x"))
        if (S, L) not in rounds:
            continue
        ms, run, allocs, prof, each = rounds[(S, L)]
        g = gflop(S, L) / (ms / 1e3)
        o = ort.get((S, L))
        lin = re.search(r"linear [\d.]+% \([\d.]+ ms, ([\d.]+) GFLOP/s\)", prof)
        lin = float(lin[1]) if lin else 0.0
        print(f"{s:>7} {S * L:>6} {ms:9.2f} {g:8.1f} {run:7.1f} {100 * run / peak:6.1f}% {lin:7.1f} {100 * lin / peak:6.1f}% "
              f"{(f'{o:8.2f}' if o else '       -')} {(f'{o / ms:7.2f}x' if o else '       -')} "
              f"{spread(ort_rounds, each, (S, L)):>9} {allocs:>6}")
        if prof:
            print(f"{'':>7} {prof}")
native = "its own kernels for this CPU" + (" (AVX-512)" if "x86-64-avx512" in targets else "")
for t in targets:
    if t == "x86-64-avx2" and ort_avx2:  # each path beside the peer's kernels for the same ISA
        table(f"kime f32, {t}", kime_rounds(f"{case}/kime-{t}.txt"), peaks[t], ort_avx2,
              "its AVX2 kernels (CPUID masked: bench/avx2_only.c)")
    else:
        table(f"kime f32, {t}", kime_rounds(f"{case}/kime-{t}.txt"), peaks[t], ort_native, native)
bf16 = kime_rounds(f"{case}/kime-bf16.txt")
if bf16:
    table("kime bf16 (--cpu-precision bf16), x86-64-avx512bf16", bf16, peaks["x86-64-avx512"], ort_native, native)
# ORT's int8 path (bench/onnx_int8.py: the linears but the heads in int8, its own kernels) beside
# ORT f32 and kime's fastest f32 path, in the same rounds; its error is in CASE/int8.log.
ort_int8 = {k: median(v) for k, v in ort_runs(f"{case}/ort-int8.jsonl").items()}
if ort_int8:
    best = {}
    for t in targets:
        for key, r in kime_rounds(f"{case}/kime-{t}.txt").items():
            best[key] = min(best.get(key, r[0]), r[0])
    print(f"\n### ORT int8 (DynamicQuantizeLinear + MatMulInteger), {native}")
    print(f"{'S x L':>7} {'ORT int8 ms':>11} {'ORT f32 ms':>10} {'f32/int8':>8} {'kime f32 ms':>11} {'kime/int8':>9}")
    for s in shapes:
        S, L = map(int, s.split("x"))
        o8, o32, k = ort_int8.get((S, L)), ort_native.get((S, L)), best.get((S, L))
        if not o8:
            continue
        o32 = median(o32) if o32 else None
        print(f"{s:>7} {o8:11.2f} " + (f"{o32:10.2f} {o32 / o8:7.2f}x" if o32 else f"{'-':>10} {'-':>8}") + " " +
              (f"{k:11.2f} {k / o8:8.2f}x" if k else f"{'-':>11} {'-':>9}"))
# kime int8 (--cpu-precision int8), each of its paths beside kime f32 on the same ISA (AVX-512's
# for VNNI) and ORT's int8 path on the same ISA where CPUID could be masked (its AVX2 kernels
# under avx2_only.so for kime's AVX2 path, its AVX-512 kernels without VNNI under
# avx512_core_only.so for kime's AVX-512 one), all in the same rounds; then int8pairs on AVX2.
ort_int8_masked = {"x86-64-avx2": (ort_runs(f"{case}/ort-int8-avx2.jsonl"),
                                   "its AVX2 kernels (CPUID masked: bench/avx2_only.c)"),
                   "x86-64-avx512": (ort_runs(f"{case}/ort-int8-avx512core.jsonl"),
                                     "its AVX-512 kernels without VNNI (CPUID masked: avx512_core_only.so)")}
def int8_table(precision, t, rounds):
    f32 = kime_rounds(f"{case}/kime-{t if t in targets else 'x86-64-avx512'}.txt")
    peer, peer_name = ort_int8_masked.get(t, ({}, ""))
    if not peer:
        peer, peer_name = ort_runs(f"{case}/ort-int8.jsonl"), native
    print(f"\n### kime int8 (--cpu-precision {precision}), {t}; ORT int8: {peer_name}")
    print(f"{'S x L':>7} {'int8 ms':>8} {'f32 ms':>8} {'f32/int8':>8} {'ORT int8':>8} {'ORT/kime':>8} {'rounds':>9} "
          f"{'allocs':>6}")
    for s in shapes:
        S, L = map(int, s.split("x"))
        if (S, L) not in rounds:
            continue
        ms, _, allocs, prof, each = rounds[(S, L)]
        k32 = f32.get((S, L), (None,))[0]
        o8 = median(peer[(S, L)]) if peer.get((S, L)) else None
        print(f"{s:>7} {ms:8.2f} " + (f"{k32:8.2f} {k32 / ms:7.2f}x" if k32 else f"{'-':>8} {'-':>8}") + " " +
              (f"{o8:8.2f} {o8 / ms:7.2f}x" if o8 else f"{'-':>8} {'-':>8}") +
              f" {spread(peer, each, (S, L)):>9} {allocs:>6}")
        if prof:
            print(f"{'':>7} {prof}")
for t in int8_targets:
    int8_table("int8", t, kime_rounds(f"{case}/kime-int8-{t}.txt"))
pairs = kime_rounds(f"{case}/kime-int8pairs-x86-64-avx2.txt")
if pairs:
    int8_table("int8pairs", "x86-64-avx2", pairs)
PY
done
