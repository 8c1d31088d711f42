#!/usr/bin/env bash
# graphconv simplify: constant folding and dead-node removal, checked by running.
. "$(dirname "$0")/lib.sh"

M="$SHARED/models"
run simplify --help
expect_out "simplify --help" "Usage: graphconv simplify"
run simplify "$M/resnet18.onnx"
expect_err "simplify needs an input and an output" 1 "needs exactly an input and an output"
run simplify "$M/resnet18.onnx" "$TMP/r18.onnx" --check
expect_err "ResNet-18 simplified and checked" 0 "nodes folded" "check passed"
check "the simplified model is written" test -s "$TMP/r18.onnx"
run simplify "$M/resnet18.onnx" "$TMP/r18.onnx"
expect_err "an existing output is kept" 5 "output exists"
run simplify "$M/resnet18.onnx" "$TMP/r18.nnp" -q
expect_rc "the output format follows the extension" 0
run info "$TMP/r18.nnp"
expect_out "and is nnabla" "nnabla"
finish
