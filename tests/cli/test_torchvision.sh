#!/usr/bin/env bash
# torchvision architectures exported by PyTorch (scripts/torchvision_export.py,
# random weights under a fixed seed, made here: never kept in the
# repository) converted to NNVM and MXNet with --check running both sides:
# MNASNet and MobileNetV3 (a mean over the spatial axes then a dense layer,
# which the readers once kept opaque; HardSigmoid rewritten), DenseNet (a
# Pad before each AveragePool: merged into its pads for NNVM, which has no
# Pad), ConvNeXt (GELU's Erf, which NNVM lacks, as a float32 rational
# function); `graphconv simplify` of them leaves no Identity, Shape or
# Constant node and runs to the same numbers.  Skipped when
# /usr/bin/python3 lacks torch, torchvision or onnx.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
if ! "$PY" -c 'import torch, torchvision, onnx' 2>/dev/null; then
  echo "skip: $PY lacks torch, torchvision or onnx"
  exit 77
fi
SRC=${GIR_SOURCE_DIR:?GIR_SOURCE_DIR must point at the source tree}
TV=$TMP/tv
models="mnasnet0_5 mobilenet_v3_small densenet121 convnext_tiny"
# shellcheck disable=SC2086
"$PY" "$SRC/scripts/torchvision_export.py" "$TV" $models >"$CAP/export" 2>&1
rc=$?
expect_rc "torchvision exports made" 0

for m in $models; do
  tos="nnvm mxnet"
  [ $m = convnext_tiny ] && tos=nnvm
  for to in $tos; do
    case $to in nnvm) o=$TMP/$m.json ;; mxnet) o=$TMP/$m-symbol.json ;; esac
    run "$TV/$m.onnx" "$o" --to $to --check
    expect_err "$m -> $to, both sides run and agree" 0 'check passed: ran both models'
    case $m in
      mobilenet_v3_small) expect_err "$m -> $to: HardSigmoid rewritten" 0 'HardSigmoid as Mul+Add+Clip (28 nodes)' ;;
      densenet121)
        # NNVM has no Pad: merged into the pools; MXNet writes its own Pad
        if [ $to = nnvm ]; then
          expect_err "$m -> $to: its Pads merged into the pools" 0 \
            "rewritten for $to: Pad merged into the pads of the Conv/pool that reads it (3 nodes)"
        else
          check "$m -> $to: its Pads written as MXNet Pad" grep -q '"op": "Pad"' "$o"
        fi ;;
      convnext_tiny)
        expect_err "$m -> $to: GELU's Erf as a rational function" 0 \
          'rewritten for nnvm: Erf as a float32 rational function (Clip+Mul+Add+Div, within 4.2e-7) (18 nodes)' ;;
    esac
  done
  run simplify "$TV/$m.onnx" "$TMP/$m.simple.onnx" --check
  expect_err "$m: simplified and checked" 0 'check passed: ran both models'
  run info "$TMP/$m.simple.onnx"
  check "$m: no Identity, Shape or Constant node is left" \
    sh -c '! grep -qE "^  (Identity|Shape|Constant) " "$1" && grep -q "^ops:" "$1"' _ "$CAP/out"
  [ $m = convnext_tiny ] && continue
  # what the writers wrote reads back as canonical operators and runs
  run "$TMP/$m.json" "$TMP/$m.back.onnx" --check
  expect_err "$m: the NNVM file converts back to ONNX and checks" 0 'check passed: ran both models'
  run info "$TMP/$m-symbol.json"
  expect_out "$m: the MXNet file reads back with no opaque node" '(0 opaque)' 'Gemm  '
done
# the same graph as the dense layer: Gemm, not an NNVM operator kept verbatim
check "mnasnet's classifier is written as dense" grep -q '"op": "dense"' "$TMP/mnasnet0_5.json"
finish
