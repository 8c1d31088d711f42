#!/usr/bin/env bash
# Resource limits a user can raise: each one refuses a real model when set
# below what it needs, with the message naming the limit and the option,
# and the defaults refuse none of them.  Readers honour the commit journal
# of an interrupted multi-file commit.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
R=$SHARED/realworld
nnp=$R/nnp/lenet_010000.nnp
sym=$R/mxnet/lenet-symbol.json
hint() { echo "(limit $1=$2; raise it with --$1=N or -I $1=N) [limit]"; }

# ---- each limit, through the flag and through -I --------------------------------
run info "$sym" --max-nodes=5
expect_err "max-nodes" 2 "lenet-symbol.json: the graph has more than 5 nodes $(hint max-nodes 5)"
run info "$sym" -I max-nodes=5
expect_err "max-nodes as a reader option" 2 "the graph has more than 5 nodes $(hint max-nodes 5)"
run info "$sym" --max-nodes 30
expect_rc "max-nodes 30 is enough for LeNet" 0
run info "$sym" --max-depth 2
expect_err "max-depth on JSON" 2 "lenet-symbol.json: line 3:5: JSON nesting is deeper than 2 levels $(hint max-depth 2)"
run info "$nnp" --max-depth=3
expect_err "max-depth on protobuf text" 2 "lenet_010000.nnp:network.nntxt: line 7:11: messages are nested deeper than 3 levels $(hint max-depth 3)"
run info "$nnp" --max-attrs=10
expect_err "max-attrs" 2 "lenet_010000.nnp: the model has more than 10 attributes $(hint max-attrs 10)"
run info "$nnp" --max-tensors=3
expect_err "max-tensors" 2 "lenet_010000.nnp:parameter.protobuf: the model has more than 3 tensors $(hint max-tensors 3)"
run info "$nnp" --max-weight-bytes=1000
expect_err "max-weight-bytes" 2 "lenet_010000.nnp:parameter.protobuf: the model's tensors take more than 1000 bytes $(hint max-weight-bytes 1000)"
run info "$nnp" --max-unzip-bytes=1000
expect_err "max-unzip-bytes" 2 "lenet_010000.nnp: member 'network.nntxt' declares 5517 bytes, more than the 1000 allowed $(hint max-unzip-bytes 1000)"
run run "$SHARED/models/squeezenet1_0.onnx" --max-run-elements=100000 -q
expect_err "max-run-elements (run)" 2 "node '/features/features.0/Conv': a run computes more than 100000 tensor elements $(hint max-run-elements 100000)"
run "$sym" "$TMP/l.onnx" --params "$R/mxnet/lenet-0001.params" --input-shape data:1,1,28,28 --check --max-run-elements=1000 -q
expect_err "max-run-elements (--check)" 2 "node 'hybridsequential0_conv0_fwd': model A: a run computes more than 1000 tensor elements $(hint max-run-elements 1000)"
check "nothing written when --check hits the limit" test ! -e "$TMP/l.onnx"
run "$sym" "$TMP/l.onnx" --params "$R/mxnet/lenet-0001.params" --input-shape data:1,1,28,28 --check --max-run-elements=100000 -q
expect_rc "the same conversion checks with the limit raised" 0
run info "$sym" --max-nodes=x
expect_err "a malformed limit" 1 "option max-nodes=x is not an integer"
run info "$sym" --max-depth=0
expect_err "a limit of 0" 1 "option max-depth=0 must be a positive integer"
run run "$sym" --max-run-elements=-3
expect_err "a negative run limit" 1 "option max-run-elements=-3 must be a positive integer"

# ---- the defaults refuse no real model --------------------------------------------
refused=
while IFS= read -r f; do
  case "$f" in *.json|*.nnp|*.nntxt|*.onnx) ;; *) continue ;; esac
  "$GC" info "$f" >/dev/null 2>"$CAP/err"
  grep -q '\[limit\]' "$CAP/err" && refused="$refused $f"
done < <(find "$R" "$SHARED/models" -type f | sort)
rc=-
check "no real model reaches a default limit (info):${refused:- none}" test -z "$refused"

# ---- readers honour an interrupted commit's journal --------------------------------
J=$TMP/journal
mkdir -p "$J"
"$GC" "$R/nnvm/lenet_nnvm_graph.json" "$J/m.json" --to nnvm -q
"$GC" "$R/tvm/wrn_fc.json" "$J/new.json" --to nnvm -q
# a writer killed after moving the graph, before the params: the staged
# params and the journal stay
st=$J/.m.json.graphconv-999999-abcdef.tmp
mkdir "$st"
cp "$J/new.params" "$st/m.params"
cp "$J/new.json" "$J/m.json"
printf 'graphconv-commit 1 999999\n%s\tm.json\n%s\tm.params\n' "${st##*/}/m.json" "${st##*/}/m.params" \
  >"$J/.m.json.graphconv-commit"
run info "$J/m.json"
expect_out "a reader of a half-committed model finishes the commit first" "tvm (by content)"
check "the new params are in place (rolled forward)" cmp -s "$J/m.params" "$J/new.params"
check "no journal or staging directory stays" test -z "$(ls -A "$J" | grep graphconv)"
finish
