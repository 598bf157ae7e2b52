#!/usr/bin/env bash
# Build-time compilation as a user has it: installs this build into a temporary prefix, builds
# examples/embed against it as a separate CMake project (find_package(kime) and
# kime_add_model(... EMBED): the model compiled during that build and linked into embed-run), runs
# a batch in every bucket of every stage with no .kime file beside the program and checks the
# outputs against the reference within 1e-4. Then: a second build does nothing; touching the
# weights compiles the model again, to the same bytes; new weights are refit (kime-compile
# --update keeps the code), to the bytes of a full compile, and run against their reference; a
# build that signs the model (SIGN) runs with its key trusted and is refused with another, as the
# unsigned one is.
# Usage: check-embed.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
src=$1 build=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
prefix=$work/prefix ex=$work/example

echo "== cmake --install into $prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
for f in bin/kime-compile bin/kime-run bin/kime-sign bin/kime-keygen include/kime/kime.h lib/libkime.a lib/cmake/kime/kimeConfig.cmake \
         lib/cmake/kime/KimeAddModel.cmake lib/pkgconfig/kime.pc; do
  [ -e "$prefix/$f" ] || { echo "FAIL: the install has no $f"; exit 1; }
done
ls "$prefix"/lib/libkime.so* > /dev/null
# pkg-config finds the runtime at the prefix the install was given.
PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs kime | grep -q -- "-I$prefix/lib/pkgconfig/../../include"

echo "== examples/embed configured and built against the install"
cmake -G Ninja -S "$src/examples/embed" -B "$ex" -DCMAKE_PREFIX_PATH="$prefix" > "$work/configure.log"
cmake --build "$ex" > "$work/build-1.log"
grep -q "kime: compiling model example_model" "$work/build-1.log" || { echo "FAIL: the model was not compiled"; exit 1; }
artifact=$ex/kime/example_model/example_model.kime
cp "$artifact" "$work/first.kime"

echo "== embed-run, with no .kime file beside it"
mkdir -p "$work/run" && cp "$ex/embed-run" "$work/run/"
mv "$artifact" "$work/moved-away.kime"
export PATH="$prefix/bin:$PATH"
python3 "$src/test/aarch64/run_buckets.py" "$src/examples/small/buckets.json" - "$ex/small/graph.json" \
  "$ex/small/model.safetensors" "$work/batches" -- "$work/run/embed-run"
# The example's batch prints what kime-run prints for it.
"$work/run/embed-run" "$src/examples/small/batch.json" > "$work/embed.json"
kime-run "$work/moved-away.kime" "$src/examples/small/batch.json" > "$work/kime-run.json"
cmp "$work/embed.json" "$work/kime-run.json" || { echo "FAIL: embed-run and kime-run print different outputs"; exit 1; }
mv "$work/moved-away.kime" "$artifact"

echo "== nothing touched: nothing rebuilt"
cmake --build "$ex" > "$work/build-2.log"
if grep -q "kime: compiling model" "$work/build-2.log" || ! grep -q "no work to do" "$work/build-2.log"; then
  echo "FAIL: a build with nothing changed did work:"; cat "$work/build-2.log"; exit 1
fi

echo "== the weights touched: the model compiled again, to the same bytes"
sleep 1 && touch "$ex/small/model.safetensors"
cmake --build "$ex" > "$work/build-3.log"
grep -q "kime: compiling model example_model" "$work/build-3.log" || { echo "FAIL: touching the weights did not recompile"; cat "$work/build-3.log"; exit 1; }
grep -q "Linking CXX executable embed-run" "$work/build-3.log" || { echo "FAIL: embed-run was not relinked"; exit 1; }
cmp "$artifact" "$work/first.kime" || { echo "FAIL: the recompiled artifact differs"; exit 1; }

echo "== new weights: the artifact refit (kime-compile --update), as a full compile makes it, and run on them"
kime-graph "$src/examples/small/config.json" --name small -o "$work/graph2.json" \
  --random-weights "$work/model2.safetensors" --seed 2 > /dev/null
cmp "$work/graph2.json" "$ex/small/graph.json"  # the same Graph: only the weights are new
cp "$work/model2.safetensors" "$ex/small/model.safetensors"
cmake --build "$ex" > "$work/build-4.log"
grep -q "update: .*example_model.kime was compiled from this Graph, bucket file and options by this build: refitting it" \
  "$work/build-4.log" || { echo "FAIL: new weights did not refit:"; cat "$work/build-4.log"; exit 1; }
if grep -q "codegen cpu:" "$work/build-4.log"; then echo "FAIL: the refit compiled kernels"; exit 1; fi
kime-compile "$ex/small/graph.json" --weights "$ex/small/model.safetensors" --buckets "$src/examples/small/buckets.json" \
  --target x86-64-avx2,x86-64-avx512 --cuda-arch none --no-cache -o "$work/full2.kime" 2> "$work/full2.log"
cmp "$artifact" "$work/full2.kime" || { echo "FAIL: the refit artifact differs from a full compile"; exit 1; }
python3 "$src/test/aarch64/run_buckets.py" "$src/examples/small/buckets.json" - "$ex/small/graph.json" \
  "$ex/small/model.safetensors" "$work/batches2" -- "$ex/embed-run"
echo "== signed (kime_add_model SIGN): embed-run --trust loads it only with its key"
kime-keygen -o "$work/build" > /dev/null && kime-keygen -o "$work/other" > /dev/null
cmake -G Ninja -S "$src/examples/embed" -B "$work/signed" -DCMAKE_PREFIX_PATH="$prefix" \
  -DKIME_EXAMPLE_SIGN_KEY="$work/build.key" > "$work/signed-configure.log"
cmake --build "$work/signed" > "$work/signed-build.log"
"$work/signed/embed-run" "$src/examples/small/batch.json" --trust "$work/build.pub" > "$work/signed.json"
cmp "$work/signed.json" "$work/kime-run.json" || { echo "FAIL: the signed model's outputs differ"; exit 1; }
if msg=$("$work/signed/embed-run" "$src/examples/small/batch.json" --trust "$work/other.pub" 2>&1); then
  echo "FAIL: a model signed by another key was loaded"; exit 1
fi
echo "$msg" | grep -q "which is not trusted" || { echo "FAIL: $msg"; exit 1; }
if msg=$("$ex/embed-run" "$src/examples/small/batch.json" --trust "$work/build.pub" 2>&1); then
  echo "FAIL: an unsigned model was loaded with a trusted key"; exit 1
fi
echo "$msg" | grep -q "is not signed" || { echo "FAIL: $msg"; exit 1; }
echo "embed: all checks passed"
