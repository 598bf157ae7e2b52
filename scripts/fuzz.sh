#!/usr/bin/env bash
# Builds every fuzz target (clang-19, libFuzzer, ASan + UBSan, in build-fuzz/), makes their seed
# corpora from the test models, and runs each for SECONDS (default 60). Prints one line per
# target: executions, coverage, crashes; exits non-zero when any target crashed (the input that
# did is kept in build-fuzz/crashes/).
#   scripts/fuzz.sh [SECONDS]
# FUZZ_SEED=N fixes libFuzzer's seed (CI does, so that a run is repeatable); unset, it is random.
# FUZZ_RUNS=N also stops each target after N executions (the long runs: FUZZ_RUNS=1000000 ... 1800).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
scripts/build.sh > /dev/null   # kime-graph and kime-compile make the seeds
bin=build/bin
mkdir -p build-fuzz
cmake -G Ninja -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-19 \
  -DCMAKE_CXX_COMPILER=clang++-19 -DKIME_FUZZ=ON -DKIME_BUILD_TESTS=OFF > build-fuzz/build.log 2>&1 ||
  { cat build-fuzz/build.log; exit 1; }
targets=(graph safetensors buckets artifact batch onnx)
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]/#/kime-fuzz-}" >> build-fuzz/build.log 2>&1 ||
  { tail -50 build-fuzz/build.log; exit 1; }

# Seeds, made anew from the test models each time (nothing generated is kept in git).
corpus=build-fuzz/corpus seeds=build-fuzz/seeds
rm -rf "$seeds" && mkdir -p "$seeds"/{graph,safetensors,buckets,artifact,batch,onnx} build-fuzz/crashes
for c in test/data/configs/*.json test/data/golden/*/config.json; do
  n=$(basename "$(dirname "$c")")-$(basename "$c" .json)
  "$bin/kime-graph" "$c" --name "$n" -o "$seeds/graph/$n.json" --random-weights "$seeds/safetensors/$n.safetensors" --seed 1
done
cp test/data/buckets-small.json examples/small/buckets.json test/lit/Tools/Inputs/buckets-*.json "$seeds/buckets/"
cp test/data/golden/tiny-rms-gelu-learned/batch_*.json test/lit/Tools/Inputs/*batch*.json "$seeds/batch/"
"$bin/kime-compile" "$seeds/graph/configs-tiny.json" --weights "$seeds/safetensors/configs-tiny.safetensors" \
  --buckets test/data/buckets-small.json --target x86-64-avx2 --cuda-arch none --selftest 3 -o build-fuzz/model.kime 2> /dev/null
# The artifact target's first byte says whether to fix the checksums up (odd) or not.
{ printf '\001'; cat build-fuzz/model.kime; } > "$seeds/artifact/tiny-fixed"
{ printf '\000'; cat build-fuzz/model.kime; } > "$seeds/artifact/tiny"
# Bit 1: opened with a trusted key; the seeds signed by its secret half (a key made anew each run).
rm -f build-fuzz/fuzz.key build-fuzz/fuzz.pub
"$bin/kime-keygen" -o build-fuzz/fuzz > /dev/null
"$bin/kime-sign" build-fuzz/model.kime --key build-fuzz/fuzz.key -o build-fuzz/model-signed.kime 2> /dev/null
{ printf '\003'; cat build-fuzz/model-signed.kime; } > "$seeds/artifact/tiny-signed-fixed"
{ printf '\002'; cat build-fuzz/model-signed.kime; } > "$seeds/artifact/tiny-signed"
export KIME_FUZZ_TRUSTED_KEY=$PWD/build-fuzz/fuzz.pub
# The batch target runs batches on the example model's artifact.
"$bin/kime-graph" examples/small/config.json --name small -o build-fuzz/small.json --random-weights build-fuzz/small.safetensors --seed 1
"$bin/kime-compile" build-fuzz/small.json --weights build-fuzz/small.safetensors --buckets examples/small/buckets.json \
  --target x86-64-avx2 --cuda-arch none -o build-fuzz/small.kime 2> /dev/null
export KIME_FUZZ_MODEL=$PWD/build-fuzz/small.kime
# ONNX seeds: the lit tests' text models as ModelProto bytes, and two of the PyTorch zoo's exports.
/usr/bin/python3 - "$seeds/onnx" <<'PY'
import glob, os, sys
import onnx.parser
for f in glob.glob("test/lit/Import/Inputs/onnx/*.onnxtxt"):
    with open(os.path.join(sys.argv[1], os.path.basename(f) + ".onnx"), "wb") as out:
        out.write(onnx.parser.parse_model(open(f).read()).SerializeToString())
PY
for m in kime_family bert_post_ln; do
  PYTHONPATH=build/python /usr/bin/python3 test/onnx/torch_models.py export "$m" "$seeds/onnx/$m.onnx" --opset 17 > /dev/null 2>&1
done

failed=0
printf '%-12s %12s %10s %8s %8s %8s\n' target executions exec/s coverage crashes seconds
for t in "${targets[@]}"; do
  mkdir -p "$corpus/$t"
  args=(-max_total_time="$seconds" -runs="${FUZZ_RUNS:--1}" -seed="${FUZZ_SEED:-0}" -print_final_stats=1 -artifact_prefix=build-fuzz/crashes/"$t"- -timeout=10 -rss_limit_mb=4096)
  case $t in graph|buckets|batch) args+=(-dict=test/fuzz/json.dict) ;; esac
  [ "$t" = artifact ] && args+=(-max_len=1048576)
  rc=0 start=$SECONDS
  build-fuzz/bin/kime-fuzz-$t "${args[@]}" "$corpus/$t" "$seeds/$t" > "build-fuzz/$t.log" 2>&1 || rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "build-fuzz/$t.log" | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -o 'cov: [0-9]*' "build-fuzz/$t.log" | tail -1 | grep -o '[0-9]*$' || echo 0)
  crashes=$(find build-fuzz/crashes -name "$t-*" | wc -l)
  took=$((SECONDS - start > 0 ? SECONDS - start : 1))
  printf '%-12s %12s %10s %8s %8s %8s\n' "$t" "$execs" "$((execs / took))" "$cov" "$crashes" "$took"
  if [ "$rc" != 0 ] || [ "$crashes" != 0 ]; then failed=1; tail -30 "build-fuzz/$t.log"; fi
done
exit $failed
