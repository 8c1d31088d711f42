#!/usr/bin/env bash
# Sets everything up and runs the main job on real bundled models: MXNet's
# LeNet to NNabla .nnp and back, and torchvision's ResNet-18 from ONNX to
# .nnp; every conversion is checked by running both models on the same
# inputs with graphconv's reference runtime (--check), and the round trip is
# compared with the original (diff: same graph, bit-identical weights).
#
# Usage: scripts/demo.sh [OUTDIR]   (default: demo-out/ in the repository)
# The converted models stay in OUTDIR to look at (graphconv info, draw...);
# the build's output goes to OUTDIR/build.log.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
out=${1:-demo-out}
mkdir -p "$out"
echo "demo: building graphconv (log: $out/build.log)"
if ! scripts/setup.sh build-demo -Dbuildtype=release >"$out/build.log" 2>&1; then
  tail -n 30 "$out/build.log" >&2
  echo "demo: the build failed; see $out/build.log" >&2
  exit 1
fi
shared=${GIR_SHARED_DIR:-$here/../shared}
gc=build-demo/tools/graphconv
step() {
  printf '\n$ graphconv %s\n' "$*"
  "$gc" "$@"
}
step info "$shared/realworld/mxnet/lenet-symbol.json"
step -f "$shared/realworld/mxnet/lenet-symbol.json" "$out/lenet.nnp" --input-shape data:1,1,28,28 --check
step -f "$out/lenet.nnp" "$out/lenet-symbol.json" --check
step diff "$shared/realworld/mxnet/lenet-symbol.json" "$out/lenet-symbol.json" --input-shape-a data:1,1,28,28
step -f "$shared/models/resnet18.onnx" "$out/resnet18.nnp" --check
step check "$shared/models/resnet18.onnx" "$out/resnet18.nnp" --input "$shared/models/input_1x3x224x224.npy"
printf '\ndemo: the converted models are in %s/:\n' "$out"
ls "$out" | grep -v '^build.log$' | sed 's/^/  /'
