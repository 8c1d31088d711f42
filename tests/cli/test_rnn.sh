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
expect_err "onnx -> onnx (written back at opset 6) with --check" 0 "check passed" "ran both models"
run "$LSTM" "$TMP/o13.onnx" --opset 13 --check
expect_err "onnx -> onnx at opset 13 with --check" 0 "check passed" "ran both models"
run "$LSTM" "$TMP/o14.onnx" --opset 14 --check
expect_err "onnx -> onnx at opset 14 with --check" 0 "check passed"
# targets without a recurrent operator get it unrolled over its steps
run "$LSTM" "$TMP/lstm.nnp" --check
expect_err "onnx -> nnabla: the LSTM is unrolled, and checks" 0 "rewritten for nnabla: LSTM unrolled over its steps" \
  "check passed: ran both models: 3 outputs agree"
# LightNet has no tanh: no exact form, refused by name, nothing written
mkdir "$TMP/refused"
run "$LSTM" "$TMP/refused/lstm.json" --to lightnet
expect_err "onnx -> lightnet names the LSTM it cannot write" 3 "cannot write as lightnet: LSTM" "lstm-unrolled" \
  "[unsupported-op]"
check "a refused conversion writes nothing" test -z "$(ls -A "$TMP/refused")"
# Its weights are computed (Slice/Concat of initializers): legalization
# folds them into constants, which MXNet's RNN can pack.
run "$LSTM" "$TMP/lstm.json" --to mxnet --check
expect_err "onnx -> mxnet: the LSTM's computed weights are folded and packed" 0 \
  "constant operands folded" "check passed: ran both models"

# MXNet's fused RNN reads into canonical layers and converts to ONNX
TD=${GIR_TESTDATA_DIR:?GIR_TESTDATA_DIR must point at testdata/}
MX=$TD/mxnet_rnn
run info "$MX/lstm2bi-symbol.json"
expect_out "a 2-layer bidirectional MXNet RNN(lstm) reads as two LSTM nodes" "LSTM                     2" "(0 opaque)"
run run "$MX/gru2bi-symbol.json" --input "data=$MX/gru2bi.data.npy" --input "state=$MX/gru2bi.state.npy" -o "$TMP/mx"
expect_rc "MXNet RNN(gru) runs" 0
run "$MX/gru2bi-symbol.json" "$TMP/gru2bi.onnx"
expect_rc "MXNet RNN(gru) -> onnx" 0
run run "$TMP/gru2bi.onnx" --input "data=$MX/gru2bi.data.npy" --input "state=$MX/gru2bi.state.npy" -o "$TMP/onnx"
expect_rc "the ONNX file runs" 0
check "both give the same bytes" cmp -s "$TMP/mx/rnn_l1_reshape.npy" "$TMP/onnx/rnn_l1_reshape.npy"
run "$TMP/gru2bi.onnx" "$TMP/back-symbol.json" --to mxnet
expect_rc "onnx -> mxnet: one fused RNN per layer" 0
check "two RNN operators written" test "$(grep -c '"op": "RNN"' "$TMP/back-symbol.json")" = 2
run run "$TMP/back-symbol.json" --input "data=$MX/gru2bi.data.npy" --input "state=$MX/gru2bi.state.npy" -o "$TMP/back"
expect_rc "the MXNet file runs" 0
check "and gives the same bytes" cmp -s "$TMP/mx/rnn_l1_reshape.npy" "$TMP/back/rnn_l1_l0_reshape.npy"
run ops --format onnx
expect_out "the ONNX mapping lists the recurrent operators" "LSTM" "GRU" "output_sequence"
finish
