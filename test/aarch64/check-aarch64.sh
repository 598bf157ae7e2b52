#!/usr/bin/env bash
# AArch64 end to end, on this x86-64 host: cross-builds the runtime and kime-run with Debian's
# g++-aarch64-linux-gnu, compiles artifacts with arm-64 code beside x86-64 code, and runs them
# under qemu-aarch64: every bucket of the example model and every golden case, each checked
# against the reference evaluator within 1e-4; the example model again with a fully static
# kime-run; and a program with the model linked in (examples/embed, cross-built against the
# AArch64 runtime's install, statically linked) with no file beside it; signed artifacts, file and
# linked-in, loaded with their key trusted and refused otherwise. Prints the size report.
# Usage: check-aarch64.sh SOURCE_DIR HOST_BIN_DIR WORK_DIR
set -euo pipefail
src=$1 bin=$2 work=$3
export PATH="$bin:$PATH"
# The cross toolchain's own libraries, first: with Debian's libc6:arm64 installed too (libsodium-dev:arm64
# brings it), the host's ld.so.cache hands the cross ld.so that other build's libc.so.6, and a
# mismatched pair hangs in the first pthread_create.
qemu=(qemu-aarch64 -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib)
mkdir -p "$work"
# The example model's buckets, but a bulk bucket of 1024 tokens, not 4096: the same code (kernels
# and tiles) in a quarter of the emulated time (each self-test runs a batch at every bucket's bounds).
buckets="$src/test/aarch64/buckets.json"

echo "== cross-building the AArch64 runtime and kime-run"
cmake -G Ninja -S "$src" -B "$work/build" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/aarch64-linux-gnu.cmake" \
  -DKIME_BUILD_COMPILER=OFF -DKIME_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release > "$work/configure.log"
cmake --build "$work/build" -j"$(nproc)" > "$work/build.log"
run=("${qemu[@]}" "$work/build/bin/kime-run")
file "$work/build/bin/kime-run" | grep -q "ARM aarch64" || { echo "FAIL: kime-run is not an AArch64 executable"; exit 1; }

echo "== cross-building a fully static kime-run (for boards without a matching glibc)"
cmake -G Ninja -S "$src" -B "$work/static" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/aarch64-linux-gnu.cmake" \
  -DKIME_BUILD_COMPILER=OFF -DKIME_BUILD_TESTS=OFF -DKIME_STATIC_TOOLS=ON -DCMAKE_BUILD_TYPE=Release \
  > "$work/static-configure.log"
cmake --build "$work/static" -j"$(nproc)" > "$work/static-build.log"
file "$work/static/bin/kime-run" | grep -q "statically linked" || { echo "FAIL: kime-run is not static"; exit 1; }
# No -L: a static executable needs no AArch64 libraries on the machine.
run_static=(qemu-aarch64 "$work/static/bin/kime-run")

echo "== size report (stripped)"
for f in "$work/build/runtime/libkime.so" "$work/build/bin/kime-run" "$work/static/bin/kime-run"; do
  aarch64-linux-gnu-strip -o "$work/stripped" "$f"
  echo "${f#"$work/"}: $(stat -c %s "$work/stripped") bytes stripped ($(stat -c %s "$f") as built)"
done
# The x86-64 library's checks (test/runtime), on the AArch64 one: at most 600 KB stripped.
"$src/test/runtime/check-runtime-library.sh" "$(readlink -f "$work/build/runtime/libkime.so")" aarch64-linux-gnu-nm \
  aarch64-linux-gnu-strip

echo "== the example model, arm-64 and x86-64 code in one artifact"
ex="$src/examples/small"
kime-graph "$ex/config.json" --name small -o "$work/small.json" --random-weights "$work/small.safetensors" --seed 1
kime-compile "$work/small.json" --weights "$work/small.safetensors" --buckets "$buckets" \
  --target arm-64,x86-64-avx2 --selftest 3 -o "$work/small.kime" -j 2 2> "$work/compile.log"
"${run[@]}" "$work/small.kime" --inspect | tee "$work/inspect.txt" | grep -E "code\.cpu|cpu code loaded"
grep -q "cpu code loaded: arm-64" "$work/inspect.txt"
kime-run "$work/small.kime" --inspect | grep -q "cpu code loaded: x86-64-avx2"
python3 "$src/test/aarch64/run_buckets.py" "$buckets" "$work/small.kime" "$work/small.json" \
  "$work/small.safetensors" "$work/batches" -- "${run[@]}"

echo "== the same, with the static kime-run (kime's own loader)"
"${run_static[@]}" "$work/small.kime" --inspect | grep -q "cpu code loaded: arm-64 (kime loader)"
python3 "$src/test/aarch64/run_buckets.py" "$buckets" "$work/small.kime" "$work/small.json" \
  "$work/small.safetensors" "$work/batches-static" -- "${run_static[@]}"

echo "== the artifact's self-test on the static AArch64 runtime (one batch at the bounds of each bucket)"
"${run_static[@]}" "$work/small.kime" --selftest --threads 2 | tee "$work/selftest.txt"
grep -q "selftest on cpu arm-64" "$work/selftest.txt"
grep -q "selftest: passed (3 buckets)" "$work/selftest.txt"

echo "== signed: loaded with its key trusted (dynamic and static kime-run), refused unsigned, by another key, changed"
rm -f "$work"/build.key "$work"/build.pub "$work"/other.key "$work"/other.pub
kime-keygen -o "$work/build" > /dev/null && kime-keygen -o "$work/other" > /dev/null
kime-sign "$work/small.kime" --key "$work/build.key" -o "$work/signed.kime" 2> /dev/null
"${run[@]}" "$work/signed.kime" --trust "$work/build.pub" --inspect | grep -q "(checked: trusted)"
"${run_static[@]}" "$work/signed.kime" --trust "$work/build.pub" --selftest --threads 2 | grep -q "selftest: passed"
cp "$work/signed.kime" "$work/changed.kime" && python3 "$src/test/lit/tamper.py" "$work/changed.kime" code.cpu.arm-64 > /dev/null
for refusal in "small.kime build is not signed" "signed.kime other which is not trusted" \
               "changed.kime build section \"code.cpu.arm-64\" differs from what key"; do
  read -r file key says <<< "$refusal"
  for runner in dynamic static; do
    if [ $runner = dynamic ]; then runner_cmd=("${run[@]}"); else runner_cmd=("${run_static[@]}"); fi
    if msg=$("${runner_cmd[@]}" "$work/$file" --trust "$work/$key.pub" --inspect 2>&1); then
      echo "FAIL: $file accepted by the $runner kime-run"; exit 1
    fi
    echo "$msg" | grep -qF "$says" || { echo "FAIL ($runner): $msg"; exit 1; }
  done
done

echo "== random Graphs (generic kernels: gathers, eltwise, RoPE by ids, computed tables, a pool) on arm-64"
for seed_format in 4:1 1003:2; do
  seed=${seed_format%:*}
  kime-graph-fuzz --seed "$seed" --graph-format "${seed_format#*:}" --write "$work/random-$seed"
  r="$work/random-$seed"
  kime-compile "$r/graph.json" --weights "$r/model.safetensors" --buckets "$r/buckets.json" --target arm-64 \
    --cuda-arch none --selftest 6 -o "$r/model.kime" -j 2 2> "$r/compile.log"
  "${run_static[@]}" "$r/model.kime" --selftest --threads 2 | tee "$r/selftest.txt"
  grep -q "selftest: passed (2 buckets)" "$r/selftest.txt"
done

echo "== int8 (--cpu-precision int8): sdot and widening-multiply kernels, each bucket within the int8 tolerance"
kime-compile "$work/small.json" --weights "$work/small.safetensors" --buckets "$buckets" --cpu-precision int8 \
  --target arm-64,arm-64-dotprod --selftest 3 -o "$work/int8.kime" -j 2 2> "$work/int8-compile.log"
# qemu-aarch64's default CPU has the dot-product extension: the runtime takes the sdot kernels.
"${run[@]}" "$work/int8.kime" --inspect | grep -q "cpu code loaded: arm-64-dotprod"
for target in arm-64-dotprod arm-64; do
  "${run_static[@]}" "$work/int8.kime" --selftest --threads 2 --cpu-target $target | tee "$work/int8-$target.txt"
  grep -q "selftest on cpu $target" "$work/int8-$target.txt"
  [ "$(grep -c "(tolerance 0.1 + 0.05 |want|): ok" "$work/int8-$target.txt")" = 3 ] || { echo "FAIL: int8 tolerance"; exit 1; }
  grep -q "selftest: passed (3 buckets)" "$work/int8-$target.txt"
done

echo "== an artifact without arm-64 code is refused"
kime-compile "$work/small.json" --weights "$work/small.safetensors" --buckets "$buckets" \
  --target x86-64-avx2 -o "$work/x86.kime" 2> /dev/null
if msg=$("${run[@]}" "$work/x86.kime" --inspect 2>&1); then echo "FAIL: accepted"; exit 1; fi
echo "$msg"
echo "$msg" | grep -q "the artifact has CPU code for x86-64-avx2, but this machine needs arm-64"

echo "== the golden cases under qemu"
KIME_TARGET=arm-64 KIME_RUN="$work/build/bin/kime-run" \
  python3 "$src/test/lit/E2E/golden.py" "$src/test/data" "$ex/buckets.json" "$work/golden" 1e-4 "${qemu[@]}"
echo "== examples/embed cross-built against the AArch64 runtime install, fully static, no file beside it"
cmake --install "$work/build" --prefix "$work/prefix" > "$work/install.log"
[ ! -e "$work/prefix/bin/kime-compile" ] || { echo "FAIL: a runtime-only install holds kime-compile"; exit 1; }
cmake -G Ninja -S "$src/examples/embed" -B "$work/embed" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/aarch64-linux-gnu.cmake" \
  -DCMAKE_BUILD_TYPE=Release -Dkime_DIR="$work/prefix/lib/cmake/kime" -DKIME_COMPILE_EXECUTABLE="$bin/kime-compile" \
  -DKIME_EXAMPLE_GRAPH="$work/small.json" -DKIME_EXAMPLE_WEIGHTS="$work/small.safetensors" -DKIME_EXAMPLE_STATIC=ON \
  -DKIME_EXAMPLE_SIGN_KEY="$work/build.key" \
  > "$work/embed-configure.log"
cmake --build "$work/embed" > "$work/embed-build.log"
file "$work/embed/embed-run" | grep -q "ARM aarch64.*statically linked" || { echo "FAIL: embed-run is not a static AArch64 executable"; exit 1; }
rm -rf "$work/embed-alone" && mkdir "$work/embed-alone" && cp "$work/embed/embed-run" "$work/embed-alone/"
python3 "$src/test/aarch64/run_buckets.py" "$ex/buckets.json" - "$work/small.json" "$work/small.safetensors" \
  "$work/batches-embed" -- qemu-aarch64 "$work/embed-alone/embed-run"
echo "== the linked-in model is signed: embed-run --trust takes its key and refuses another"
qemu-aarch64 "$work/embed-alone/embed-run" "$ex/batch.json" --trust "$work/build.pub" > "$work/embed-trusted.json"
"${run[@]}" "$work/signed.kime" "$ex/batch.json" | cmp - "$work/embed-trusted.json"
if msg=$(qemu-aarch64 "$work/embed-alone/embed-run" "$ex/batch.json" --trust "$work/other.pub" 2>&1); then
  echo "FAIL: a model signed by another key was loaded"; exit 1
fi
echo "$msg" | grep -q "which is not trusted" || { echo "FAIL: $msg"; exit 1; }
echo "aarch64: all checks passed"
