#!/usr/bin/env bash
# NNabla, LightNet, RelayViz and ONNX through the CLI: real files, round
# trips, what is refused, and bad input that writes nothing.
. "$(dirname "$0")/lib.sh"
RW=$SHARED/realworld
TD=${GIR_TESTDATA_DIR:?}

# ---- NNabla
run "$RW/nnp/lenet_010000.nnp" "$TMP/lenet.nnp"
expect_rc "nnp -> nnp" 0
if command -v unzip >/dev/null; then
  check "the written .nnp passes unzip -t" sh -c "unzip -t '$TMP/lenet.nnp' >/dev/null"
  unzip -p "$RW/nnp/lenet_010000.nnp" network.nntxt >"$TMP/orig.nntxt"
  unzip -p "$TMP/lenet.nnp" network.nntxt >"$TMP/ours.nntxt"
  check "network.nntxt of LeNet comes back byte for byte" cmp -s "$TMP/orig.nntxt" "$TMP/ours.nntxt"
fi
run "$RW/nnp/model_simple.nnp" "$TMP/a.nnp" -O param-format=protobuf
expect_rc "h5 parameters -> protobuf parameters" 0
run "$TMP/a.nnp" "$TMP/b.nnp"
run diff --names "$RW/nnp/model_simple.nnp" "$TMP/b.nnp"
expect_out "h5 -> protobuf -> h5 keeps every weight" "same graph"
run info --batch-size 4 "$RW/nnp/nnc_result.nnp"
expect_out "--batch-size fixes the symbolic batch" "[4,1,28,28]"
run "$RW/nnp/lenet_010000.nnp" "$TMP/l-symbol.json" --to mxnet --check
expect_rc "nnp -> mxnet, checked by running both" 0
run "$TMP/l-symbol.json" "$TMP/l2.nnp" --check
run diff "$RW/nnp/lenet_010000.nnp" "$TMP/l2.nnp"
expect_out "nnp -> mxnet -> nnp is the same graph" "same graph"
printf 'PK\003\004garbage' >"$TMP/corrupt.nnp"
run "$TMP/corrupt.nnp" "$TMP/c.json" --to nnvm
expect_err "a corrupt .nnp is bad input" 2 "corrupt.nnp" "[archive]"
check "nothing written for a corrupt archive" test ! -e "$TMP/c.json"

# ---- LightNet
run info "$RW/lightnet/squeezedet.json"
expect_out "info on LightNet SqueezeDet" "lightnet (by content)" "nodes:      101" "[1,3,384,1248]"
for f in test op_outdated squeezedet_invalid; do
  run "$RW/lightnet/$f.json" "$TMP/$f.out.json" --to lightnet
  expect_err "LightNet's own rejected file $f.json is refused" 2 "$f.json"
  check "nothing written for $f.json" test ! -e "$TMP/$f.out.json"
done
run "$TD/lightnet/tiny.json" "$TMP/tiny.json" --to lightnet
expect_rc "lightnet -> lightnet with a .wts" 0
check "the .wts file round-trips byte for byte" cmp -s "$TD/lightnet/tiny.wts" "$TMP/tiny.wts"
run "$RW/lightnet/squeezedet.json" "$TMP/sq.nnp"
expect_err "SqueezeDet cannot become NNabla: every missing op named" 3 "Cast from int64 to int32" "SqueezeDetBoxDecode" "Sort" "GatherBlocks" "[unsupported-attribute]"
check "nothing written for an unsupported conversion" test ! -e "$TMP/sq.nnp"
run "$RW/lightnet/squeezedet.json" "$TMP/sq2.json" --to lightnet -I seed=x
expect_err "a malformed reader option is a usage error" 1 "seed=x"

# ---- RelayViz
run "$RW/nnvm/lenet_nnvm_graph.json" "$TMP/m.relayviz.json"
expect_rc "nnvm -> relayviz" 0
check "weights go to a TVM .params companion" test -s "$TMP/m.params"
run "$TMP/m.relayviz.json" "$TMP/back.json" --to nnvm
run diff "$RW/nnvm/lenet_nnvm_graph.json" "$TMP/back.json"
expect_out "nnvm -> relayviz -> nnvm is the same graph" "same graph"
run "$RW/nnvm/lenet_nnvm_graph.json" "$TMP/e.relayviz.json" -O embed-weights=1
check "embedded weights need no companion" test -s "$TMP/e.relayviz.json" -a ! -e "$TMP/e.params"
for f in "$TD"/relayviz/bad/*.json; do
  b=$(basename "$f" .json)
  run "$f" "$TMP/bad-$b.json" --from relayviz --to nnvm
  expect_err "malformed RelayViz $b is refused" 2 "$b.json"
  check "nothing written for $b" test ! -e "$TMP/bad-$b.json"
done
run draw "$RW/mxnet/lenet-symbol.json" "$TMP/lenet.dot"
expect_rc "draw writes DOT" 0
if command -v dot >/dev/null; then
  check "Graphviz renders the DOT" sh -c "dot -Tsvg '$TMP/lenet.dot' >'$TMP/lenet.svg' && grep -q '<svg' '$TMP/lenet.svg'"
else
  echo "skip - Graphviz dot is not installed: rendering not checked"
fi

# ---- ONNX
run info "$SHARED/models/resnet18.onnx"
expect_out "info on ResNet-18" "onnx (by content)" "data  float32 [1,3,224,224]" "logits  float32 [1,1000]"
run "$SHARED/models/squeezenet1_0.onnx" "$TMP/sq.onnx" --opset 5
expect_err "an opset graphconv does not write" 1 "opset=5 is outside the opsets graphconv writes (6..18)"
run "$SHARED/models/squeezenet1_0.onnx" "$TMP/sq.onnx" --opset 6 -O legalize=0
expect_err "what opset 6 cannot express is named" 3 "MaxPool attribute ceil_mode needs opset 10 (writing opset 6)"
run "$SHARED/models/squeezenet1_0.onnx" "$TMP/sq.onnx" --opset 6 --check
expect_err "opset 6: ceil-mode pooling written as floor mode with end padding" 0 \
  "rewritten for onnx: ceil-mode MaxPool as floor mode with end padding (3 nodes)" "check passed: ran both models"
head -c 7 "$SHARED/models/resnet18.onnx" >"$TMP/trunc.onnx"
run "$TMP/trunc.onnx" "$TMP/t.json" --from onnx --to nnvm
expect_err "a truncated ONNX model is bad input" 2 "trunc.onnx" "truncated"
run "$SHARED/models/mobilenet_v2.onnx" "$TMP/mb.onnx" --external-data -O external-threshold=1024
expect_rc "ONNX with external data" 0
check "external data goes beside the model" test -n "$(ls "$TMP" | grep '^mb\.onnx\..*data$\|^mb\.data$')"
run diff "$SHARED/models/mobilenet_v2.onnx" "$TMP/mb.onnx"
expect_out "external data reads back to the same weights" "same graph"
run "$SHARED/models/mobilenet_v2.onnx" "$TMP/mb.json" --to nnvm --check
expect_rc "MobileNetV2 onnx -> nnvm, checked by running both" 0
finish
