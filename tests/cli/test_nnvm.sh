#!/usr/bin/env bash
# NNVM / MXNet / TVM JSON through the CLI: real files, round trips, and bad
# input (exit 2, the file, the location and the problem; nothing written,
# an existing output untouched).
. "$(dirname "$0")/lib.sh"
RW=$SHARED/realworld

run info "$RW/mxnet/lenet-symbol.json"
expect_out "info on MXNet LeNet" "mxnet (by content)" "nodes:      12" "Conv                     2" "parameters: 8 tensors"
run info --json "$RW/tvm/wrn_fc.json"
expect_out "info --json on a TVM executor graph" '"format": "tvm"' '"opaque_nodes": 4'
run info "$RW/nnvm/lenet_nnvm_graph.json" --input-shape data:1,1,28,28
expect_out "info with an input shape infers the output shape" "float32 [1,10]"

# Round trips through the CLI, checked by diff.
run "$RW/mxnet/lenet-symbol.json" "$TMP/l.json" --to nnvm
expect_rc "mxnet -> nnvm" 0
run "$TMP/l.json" "$TMP/l-symbol.json" --to mxnet
expect_rc "nnvm -> mxnet" 0
run diff "$RW/mxnet/lenet-symbol.json" "$TMP/l-symbol.json"
expect_out "MXNet LeNet -> nnvm -> mxnet is the same graph" "same graph"
run "$RW/tvm/wrn_fc.json" "$TMP/wrn.json" --to tvm
run diff --names --meta "$RW/tvm/wrn_fc.json" "$TMP/wrn.json"
expect_out "tvm -> tvm keeps names and metadata" "same graph"
run "$RW/tvm/wrn_fc.json" "$TMP/wrn2.json" --to tvm
check "writing twice gives byte-identical files" cmp -s "$TMP/wrn.json" "$TMP/wrn2.json"
run "$RW/tvm/wrn_fc.json" "$TMP/wrn.nnp"
expect_err "an executor graph's tvm_op cannot become NNabla" 3 "tvm_op" "[unsupported-op]"
check "nothing written for an unsupported conversion" test ! -e "$TMP/wrn.nnp"

# Bad input: exit 2, nothing written, an existing output untouched.
bad_input() {  # NAME FILE TEXT...
  local name=$1 file=$2
  shift 2
  printf 'keep' >"$TMP/out.json"
  run "$file" "$TMP/out.json" --to nnvm --force
  expect_err "$name" 2 "$@"
  check "$name: the existing output is untouched" test "$(cat "$TMP/out.json")" = keep
  run "$file" "$TMP/new.json" --to nnvm
  check "$name: no output is created" test ! -e "$TMP/new.json" -a ! -e "$TMP/new.params"
}
head -c 900 "$RW/mxnet/lenet-symbol.json" >"$TMP/truncated-symbol.json"
bad_input "truncated JSON" "$TMP/truncated-symbol.json" "truncated-symbol.json" "line"
printf '{"nodes": 3, "arg_nodes": [], "heads": []}' >"$TMP/types.json"
bad_input "wrong JSON types" "$TMP/types.json" "types.json" "/nodes"
sed 's/\[\[3, 0, 0\]\]/[[99, 0, 0]]/' "$RW/mxnet/lenet-symbol.json" >"$TMP/dangling-symbol.json"
bad_input "an out-of-range entry" "$TMP/dangling-symbol.json" "dangling-symbol.json" "/inputs/0" "99"
cat >"$TMP/cycle.json" <<'EOJ'
{"nodes": [{"op": "null", "name": "x", "inputs": []},
 {"op": "relu", "name": "a", "inputs": [[2, 0, 0]]},
 {"op": "relu", "name": "b", "inputs": [[1, 0, 0]]}],
 "arg_nodes": [0], "heads": [[2, 0, 0]]}
EOJ
bad_input "a cycle" "$TMP/cycle.json" "cycle.json" "cycle"
cp "$RW/mxnet/lenet-symbol.json" "$TMP/m-symbol.json"
printf 'not a params file at all' >"$TMP/m-0001.params"
bad_input "params with a bad magic" "$TMP/m-symbol.json" "m-0001.params" "magic"
head -c 4000 "$RW/mxnet/lenet-0001.params" >"$TMP/m-0001.params"
bad_input "params with short data" "$TMP/m-symbol.json" "m-0001.params"
cp "$RW/mxnet/lenet-0001.params" "$TMP/m-0001.params"
sed 's/hybridsequential0_conv0_weight/renamed_weight/g' "$RW/mxnet/lenet-symbol.json" >"$TMP/m-symbol.json"
bad_input "a parameter name that matches no variable" "$TMP/m-symbol.json" "m-0001.params" "hybridsequential0_conv0_weight"
cp "$RW/nnvm/lenet_nnvm_param.params" "$TMP/p.json"
run "$TMP/p.json" "$TMP/x.json" --to nnvm
expect_err "a .params given where JSON is expected" 2 "p.json" "params"
run "$RW/nnvm/lenet_nnvm_param.params" "$TMP/x.json" --to nnvm
expect_err "a .params file as the model" 2 "lenet_nnvm_param.params"
finish
