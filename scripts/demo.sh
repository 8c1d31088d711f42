#!/usr/bin/env bash
# Sets everything up and runs the main job on real bundled models: MXNet's
# LeNet to NNabla .nnp and back, and torchvision's ResNet-18 from ONNX to
# .nnp; every conversion is checked by running both models on the same
# inputs with graphconv's reference runtime (--check), and the round trip is
# compared with the original (diff: same graph, bit-identical weights).
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
$gc "$shared/realworld/mxnet/lenet-symbol.json" "$out/lenet.nnp" --input-shape data:1,1,28,28 --check
$gc "$out/lenet.nnp" "$out/lenet-symbol.json" --check
$gc diff "$shared/realworld/mxnet/lenet-symbol.json" "$out/lenet-symbol.json" --input-shape-a data:1,1,28,28
$gc "$shared/models/resnet18.onnx" "$out/resnet18.nnp" --check
$gc check "$shared/models/resnet18.onnx" "$out/resnet18.nnp" --input "$shared/models/input_1x3x224x224.npy"
