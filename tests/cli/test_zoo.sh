#!/usr/bin/env bash
# Real models from the zoos graphconv used to fail on (shared/incoming/):
# MTCNN's first stage (MXNet, PReLU per channel, SoftmaxActivation) and
# Paddle2ONNX's PP-OCRv2 detector (dim_value -1 dimensions), each converted
# with --check running both sides; and a symbol file without its weights.
. "$(dirname "$0")/lib.sh"
IN=$SHARED/incoming
RW=$SHARED/realworld

mt=$IN/mxnet/mtcnn_det1-symbol.json
for to in onnx nnabla mxnet; do
  case $to in onnx) o=$TMP/det1.onnx ;; nnabla) o=$TMP/det1.nnp ;; mxnet) o=$TMP/det1-symbol.json ;; esac
  run "$mt" "$o" --input-shape data:1,3,12,12 --check
  expect_err "mtcnn det1 -> $to, both sides run and agree" 0 'check passed: ran both models'
done
run "$TMP/det1-symbol.json" "$TMP/det1b.onnx" --input-shape data:1,3,12,12 --check
expect_err "the written MXNet det1 reads back and converts again" 0 'check passed: ran both models'
check "the MXNet det1 keeps LeakyReLU prelu with its [C] gamma" grep -q '"act_type": "prelu"' "$TMP/det1-symbol.json"

pd=$IN/onnx/paddle_ppocrv2_det.onnx
run info "$pd"
expect_out "paddle: dim_value -1 read as unknown" "x  float32 [?,3,?,?]"
run run "$pd" --input-shape x:1,3,32,32 -o "$TMP/pdout"
expect_rc "paddle: runs with an --input-shape" 0
check "paddle: the output is written" test -s "$TMP/pdout/save_infer_model_scale_0.tmp_1.npy" -o -n "$(ls "$TMP/pdout")"
for to in onnx nnabla mxnet; do
  run "$pd" "$TMP/pd.$to" --to $to --input-shape x:1,3,32,32 --check
  expect_err "paddle -> $to, both sides run and agree" 0 'check passed: ran both models' "written as dim_value -1 (as Paddle2ONNX writes them) as unknown"
done
run info "$pd" --input-shape x:1,4,32,32
expect_err "paddle: an input shape that contradicts the model is refused" 2 "node 'Conv_0'" "has 4 channels but weight W [8,3,3,3] expects 3"

# A symbol without its weights file: refused, then accepted as inputs.
cp "$RW/mxnet/lenet-symbol.json" "$TMP/lenet-symbol.json"
run "$TMP/lenet-symbol.json" "$TMP/lenet.nnp"
expect_err "a symbol without weights is refused" 2 "looked for lenet-NNNN.params or lenet-symbol.params" "--weights-as-inputs"
check "nothing is written for it" test ! -e "$TMP/lenet.nnp"
run "$TMP/lenet-symbol.json" "$TMP/lenet.onnx" --weights-as-inputs
expect_err "with --weights-as-inputs the weights become inputs" 0 "taken as graph inputs"
finish
