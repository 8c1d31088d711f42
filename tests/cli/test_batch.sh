#!/usr/bin/env bash
# graphconv batch: mixed good and bad models, the JSON report, -j, shards,
# dry runs, manifests, and a batch killed with SIGKILL.
. "$(dirname "$0")/lib.sh"
RW=$SHARED/realworld
zoo=$TMP/zoo
mkdir -p "$zoo/mx" "$zoo/bad" "$zoo/tvm"
cp "$RW/mxnet/lenet-symbol.json" "$RW/mxnet/lenet-0001.params" "$zoo/mx/"
cp "$RW/nnvm/lenet_nnvm_graph.json" "$RW/nnvm/lenet_nnvm_param.params" "$zoo/"
cp "$RW/tvm/wrn_fc.json" "$RW/tvm/wrn_fc.params" "$zoo/tvm/"
cp "$RW/mxnet/vgg_dnnl_model1.json" "$zoo/mx/vgg-symbol.json"
head -c 700 "$RW/mxnet/lenet-symbol.json" >"$zoo/bad/truncated-symbol.json"
printf 'PK\003\004this is not a zip' >"$zoo/bad/wrongmagic.nnp"
printf '{"nodes": [1, 2], "arg_nodes": "x"' >"$zoo/bad/invalid.json"
# A stored zip whose only member is named ../evil.nntxt (zip-slip).
name='../evil.nntxt'
{
  printf 'PK\003\004\024\000\000\000\000\000\000\000\041\000\000\000\000\000\000\000\000\000\000\000\000\000\015\000\000\000'
  printf '%s' "$name"
  printf 'PK\001\002\024\000\024\000\000\000\000\000\000\000\041\000\000\000\000\000\000\000\000\000\000\000\000\000\015\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000'
  printf '%s' "$name"
  printf 'PK\005\006\000\000\000\000\001\000\001\000\073\000\000\000\053\000\000\000\000\000'
} >"$zoo/bad/zipslip.nnp"
: >"$zoo/README.txt"   # not a model: skipped by the directory walk

out1=$TMP/out1
run batch "$zoo" --to nnvm -o "$out1" --report "$TMP/report1.jsonl" -j 1
expect_err "a mixed zoo exits with the input-error status" 2 "batch: 8 models" "3 converted, 5 failed"
lines=$(wc -l <"$TMP/report1.jsonl")
check "one report line per model" test "$lines" = 8
if command -v json_verify >/dev/null; then
  bad_json=0
  while IFS= read -r l; do printf '%s' "$l" | json_verify -q >/dev/null 2>&1 || bad_json=1; done <"$TMP/report1.jsonl"
  check "every report line is valid JSON" test "$bad_json" = 0
fi
check "good models are converted" test -s "$out1/mx/lenet-symbol.json" -a -s "$out1/lenet_nnvm_graph.json" -a -s "$out1/tvm/wrn_fc.json"
check "the truncated model is reported with its code" grep -q '"input": ".*truncated-symbol.json".*"status": "failed", "code": "syntax"' "$TMP/report1.jsonl"
check "the zip-slip archive is reported as an unsafe archive" grep -q 'zipslip.nnp".*"code": "archive".*evil.nntxt' "$TMP/report1.jsonl"
check "the wrong-magic archive is reported" grep -q 'wrongmagic.nnp".*"status": "failed", "code": "archive"' "$TMP/report1.jsonl"
check "invalid JSON is reported" grep -q 'invalid.json".*"status": "failed"' "$TMP/report1.jsonl"
check "a symbol without its weights file is refused, naming the flag" grep -q 'vgg-symbol.json".*"status": "failed", "code": "params".*looked for vgg-NNNN.params or vgg-symbol.params.*--weights-as-inputs' "$TMP/report1.jsonl"
check "no output for a failed model" test ! -e "$out1/bad"
check "reports carry op histograms" grep -q '"ops": {.*"Conv": 2' "$TMP/report1.jsonl"

out2=$TMP/out2
run batch "$zoo" --to nnvm -o "$out2" --report "$TMP/report2.jsonl" -j 2
expect_rc "-j 2 exits the same" 2
same=1
for f in $(cd "$out1" && find . -type f | sort); do cmp -s "$out1/$f" "$out2/$f" || same=0; done
check "-j 2 writes byte-identical outputs" test "$same" = 1 -a "$(cd "$out1" && find . -type f | sort)" = "$(cd "$out2" && find . -type f | sort)"
strip() { sed -e 's/"wall_ms": [0-9.]*, "peak_rss_kb": [0-9]*//' -e "s|$1|OUT|g" "$2"; }
check "-j 2 gives the same report, in input order" test "$(strip "$out1" "$TMP/report1.jsonl")" = "$(strip "$out2" "$TMP/report2.jsonl")"

all=""
for i in 1 2 3; do
  run batch "$zoo" --to nnvm -o "$TMP/shard$i" --shard "$i/3" --dry-run -q
  all="$all$out"$'\n'
done
inputs() { grep -o '"input": "[^"]*"' | sort; }
check "shards 1/3, 2/3, 3/3 cover every model exactly once" test "$(printf '%s' "$all" | inputs)" = "$(inputs <"$TMP/report1.jsonl")"
check "a dry run writes nothing" test ! -e "$TMP/shard1/mx" -a ! -e "$TMP/shard2/mx" -a ! -e "$TMP/shard3/mx"
run batch "$zoo" --to nnvm -o "$TMP/dry" --dry-run
check "a dry run reports would-convert" grep -q '"status": "dry-run"' "$CAP/out"

run batch "$zoo/bad" "$zoo/mx" --to nnvm -o "$TMP/ff" --fail-fast -q
check "--fail-fast stops after the first failure" test "$(printf '%s\n' "$out" | grep -c '"status"')" -lt 6

cat >"$TMP/manifest.jsonl" <<EOM
{"input": "zoo/mx/lenet-symbol.json", "output": "m/lenet.json", "to": "nnvm"}
{"input": "zoo/lenet_nnvm_graph.json", "params": "zoo/lenet_nnvm_param.params", "output": "m/lenet-symbol.json", "to": "mxnet"}
EOM
run batch --manifest "$TMP/manifest.jsonl"
expect_rc "a manifest batch succeeds" 0
check "manifest outputs are written where asked" test -s "$TMP/m/lenet.json" -a -s "$TMP/m/lenet-symbol.json"
printf '{"input": 3}\n' >"$TMP/badmanifest.jsonl"
run batch --manifest "$TMP/badmanifest.jsonl"
expect_err "a malformed manifest line is a bad input" 2 "badmanifest.jsonl:1" "input"

# Every real model to every target format, checked: one valid report line per
# model; what a target cannot express is reported as unsupported, naming it.
# --check=structure: models the runtime cannot run (opaque operators) are
# compared structurally, and their report lines say so.
nreal=0
for t in nnvm mxnet tvm nnabla lightnet relayviz onnx; do
  run batch "$RW" "$SHARED/models" --to "$t" -o "$TMP/all-$t" --check=structure -j 2 --report "$TMP/all-$t.jsonl" -q
  n=$(wc -l <"$TMP/all-$t.jsonl")
  [ "$nreal" = 0 ] && nreal=$n
  check "to $t: one report line per real model ($n)" test "$n" = "$nreal" -a "$n" -ge 90
  if command -v json_verify >/dev/null; then
    okj=1
    while IFS= read -r l; do printf '%s' "$l" | json_verify -q >/dev/null 2>&1 || okj=0; done <"$TMP/all-$t.jsonl"
    check "to $t: every line is valid JSON" test "$okj" = 1
  fi
  check "to $t: LightNet's rejected files fail as bad input" \
    test "$(grep -c -E '(squeezedet_invalid|op_outdated|/test)\.json", .*"code": "(syntax|schema)"' "$TMP/all-$t.jsonl")" = 3
  check "to $t: unsupported models name what does not map" \
    sh -c "! grep '\"code\": \"unsupported-op\"' '$TMP/all-$t.jsonl' | grep -v -q 'cannot write as'"
done
check "ResNet-18 to nnabla runs and agrees" grep -q 'resnet18.onnx".*"status": "ok".*"method": "run"' "$TMP/all-nnabla.jsonl"
check "MXNet LeNet to tvm is refused naming Conv" grep -q 'lenet-symbol.json".*"code": "unsupported-op".*Conv' "$TMP/all-tvm.jsonl"
check "SqueezeDet to onnx is refused naming its decoder" grep -q 'squeezedet.json".*"code": "unsupported-op".*SqueezeDetBoxDecode' "$TMP/all-onnx.jsonl"
check "every real conversion agrees with its source (no check failures)" \
  test "$(cat "$TMP"/all-*.jsonl | grep -c '"check-failed"')" = 0
check "the structural checks are labelled as such in the report" \
  test "$(cat "$TMP"/all-*.jsonl | grep -c '"status": "ok".*"method": "structural", "passed": true')" -gt 0
# A check that fails (LRN spelled with SumPooling differs in the last bit,
# and no difference is tolerated here) leaves no output.
mkdir -p "$TMP/strict"
cp "$RW/nnp-onnx-pairs/lrn_c4_s3.onnx" "$TMP/strict/"
run batch "$TMP/strict" --to nnabla -o "$TMP/strict-out" --check --atol 0 --rtol 0 -q --report "$TMP/strict.jsonl"
expect_rc "a strict check fails with exit 4" 4
check "the failure is reported as check-failed" grep -q '"code": "check-failed".*differ beyond atol 0 + rtol 0' "$TMP/strict.jsonl"
check "a check failure leaves no output" test -z "$(ls -A "$TMP/strict-out" 2>/dev/null)"

# SIGKILL in the middle of a batch leaves only complete outputs.
big=$TMP/big
mkdir -p "$big"
for i in $(seq 1 60); do
  cp "$RW/nnvm/lenet_nnvm_graph.json" "$big/m$i.json"
  cp "$RW/nnvm/lenet_nnvm_param.params" "$big/m$i.params"
done
"$GC" batch "$big" --to mxnet -o "$TMP/ref" -q >/dev/null 2>&1
"$GC" batch "$big" --to mxnet -o "$TMP/killed" -q >/dev/null 2>&1 &
pid=$!
sleep 0.5
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
complete=1
for f in $(cd "$TMP/killed" 2>/dev/null && ls); do cmp -s "$TMP/killed/$f" "$TMP/ref/$f" || complete=0; done
rc=0
check "after SIGKILL every visible output is complete" test "$complete" = 1
"$GC" batch "$big" --to mxnet -o "$TMP/killed" -q -f >/dev/null 2>&1
check "a rerun removes stale temporaries" test -z "$(ls -A "$TMP/killed" | grep '^\.')"
finish
