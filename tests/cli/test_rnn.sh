#!/usr/bin/env bash
# Recurrent networks end to end: PyTorch 0.3's LSTM export at opset 6
# (../shared/incoming/onnx/pytorch03_lstm_opset6.onnx) reads into canonical
# operators, runs, and converts with --check running both sides.
. "$(dirname "$0")/lib.sh"
LSTM=$SHARED/incoming/onnx/pytorch03_lstm_opset6.onnx

run info "$LSTM"
expect_out "the opset-6 LSTM reads into canonical operators" "LSTM                     1" "nodes:      22 (0 opaque)"
run run "$LSTM"
expect_out "it runs" "31: float32 [5,1,3]" "29: float32 [1,1,3]" "30: float32 [1,1,3]"
run run "$LSTM" -o "$TMP/run"
check "its outputs are written" test -s "$TMP/run/31.npy" -a -s "$TMP/run/29.npy" -a -s "$TMP/run/30.npy"

run "$LSTM" "$TMP/back.onnx" --check
expect_err "onnx -> onnx (written back at opset 6) with --check" 0 "check passed" '"method": "run"'
run "$LSTM" "$TMP/o13.onnx" --opset 13 --check
expect_err "onnx -> onnx at opset 13 with --check" 0 "check passed" '"method": "run"'
run "$LSTM" "$TMP/o14.onnx" --opset 14 --check
expect_err "onnx -> onnx at opset 14 with --check" 0 "check passed"
run "$LSTM" "$TMP/lstm.nnp" --check
expect_err "onnx -> nnabla with --check" 0 "check passed" '"method": "run"'
run "$TMP/lstm.nnp" "$TMP/lstm2.onnx" --check
expect_err "nnabla -> onnx with --check" 0 "check passed" '"method": "run"'
run "$LSTM" "$TMP/lstm.json" --to mxnet --check
expect_err "onnx -> mxnet (fused RNN) with --check" 0 "check passed" '"method": "run"'
run ops --format onnx
expect_out "the ONNX mapping lists the recurrent operators" "LSTM" "GRU" "output_sequence"
finish
