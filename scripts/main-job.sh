#!/usr/bin/env bash
# The main job on the bundled example model (docs/model.md's `small` family): writes its Graph and
# deterministic random weights (seed 1), then evaluates the bundled batch and prints the outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
EX=examples/small
BIN=build/bin
[ -f $EX/graph.json ] && [ -f $EX/model.safetensors ] ||
  $BIN/kime-graph $EX/config.json --name kime_small -o $EX/graph.json \
    --random-weights $EX/model.safetensors --seed 1
echo "graph: $EX/graph.json ($(grep -c '"op"' $EX/graph.json) nodes), weights: $EX/model.safetensors"
# Compile every bucket of the example bucket file (checked against the reference; a self-test of
# six batches and their reference outputs inside), then run the self-test and the bundled batch
# on the artifact and show the reference's outputs beside it.
$BIN/kime-compile $EX/graph.json --weights $EX/model.safetensors --buckets $EX/buckets.json \
  -o $EX/model.kime --verify --selftest 6 -j "$(nproc)"
$BIN/kime-run $EX/model.kime --inspect
$BIN/kime-run $EX/model.kime --selftest
echo "outputs of $EX/batch.json (kime-run, f32):"
$BIN/kime-run $EX/model.kime $EX/batch.json
echo "reference (f64):"
$BIN/kime-run --reference $EX/graph.json $EX/model.safetensors $EX/batch.json
