#!/usr/bin/env bash
# Sets everything up and runs the main job on real bundled models: converts
# MXNet's LeNet to NNVM JSON + TVM params and back, and checks that the
# round trip gives the same graph with bit-identical weights.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
scripts/setup.sh build-demo -Dbuildtype=release
shared=${GIR_SHARED_DIR:-$here/../shared}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
gc=build-demo/tools/graphconv
set -x
$gc info "$shared/realworld/mxnet/lenet-symbol.json"
$gc "$shared/realworld/mxnet/lenet-symbol.json" "$out/lenet.json" --to nnvm
$gc "$out/lenet.json" "$out/lenet-symbol.json" --to mxnet
$gc diff "$shared/realworld/mxnet/lenet-symbol.json" "$out/lenet-symbol.json"
