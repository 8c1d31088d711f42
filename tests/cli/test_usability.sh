#!/usr/bin/env bash
# The CLI as a new user meets it (issue 19, items 1-7), and the --check
# verdicts of issue 16: a check that did not run both models says so and
# fails unless a structural check is accepted; the written model gets the
# source's input shapes before the structural comparison.
. "$(dirname "$0")/lib.sh"
LENET="$SHARED/realworld/mxnet/lenet-symbol.json"
RESNET="$SHARED/models/resnet18.onnx"
SHUFFLE="$SHARED/realworld/lightnet/shufflenetv2.json"
MTCNN="$SHARED/incoming/mxnet/mtcnn_det1-symbol.json"
json_ok() { printf '%s' "$out" | /usr/bin/python3 -c 'import json, sys; json.load(sys.stdin)'; }

# ---- 1. unknown commands and options, --help of every subcommand ----
run frobnicate
expect_err "an unknown command is named as one" 1 "graphconv: 'frobnicate' is not a graphconv command" \
  "Commands: convert, info"
case "$err" in *"needs exactly an input"*) rc=x; bad "an unknown command is not taken for a conversion" ;; *) ok "an unknown command is not taken for a conversion" ;; esac
run inof "$LENET"
expect_err "a mistyped command gets a suggestion" 1 "Did you mean 'graphconv info'?"
run info --bogus "$LENET"
expect_err "an unknown option of a subcommand has the prefix and a hint" 1 "graphconv: info: unknown option '--bogus'" \
  "Try 'graphconv info --help'."
run ops --format
expect_err "an option without its value says so" 1 "graphconv: ops: option '--format' needs a value"
run --bogus a b
expect_err "an unknown option of the conversion" 1 "graphconv: unknown option '--bogus'" "Try 'graphconv --help'."
run errors --help
expect_out "errors --help works" "Usage: graphconv errors" "--json"
run info --help
expect_out "info --help explains its options" "--values" "--input-shape" "--batch-size" "--params"
run diff --help
expect_out "diff --help explains its options" "--names" "--meta" "--no-weights" "Exit status 0"
run formats --help
expect_out "formats --help explains its options" "--json" "reads (r)"
run ops --help
expect_out "ops --help explains its options" "--format" "--json"
run batch --help
expect_out "batch --help explains its options" "--shard I/N" "--shard auto" "CI_NODE_INDEX" \
  "SLURM_ARRAY_TASK_ID" "JOB_COMPLETION_INDEX" "--dry-run" "--check[=run|structure]"
run draw --help
expect_out "draw --help explains its options" "--input-shape" "--all-attrs"

# ---- 2. --input-shape and --batch-size for every format and subcommand ----
run info "$RESNET" --input-shape data:2,3,224,224
expect_out "info --input-shape on ONNX re-infers the shapes" "data  float32 [2,3,224,224]" "logits  float32 [2,1000]"
run info "$RESNET" --batch-size 4
expect_out "info --batch-size on a fixed-batch ONNX model" "data  float32 [4,3,224,224]" "logits  float32 [4,1000]"
run info "$RESNET" --input-shape nosuch:1,3,224,224
expect_err "an --input-shape naming no input is refused" 1 "the model has no input named 'nosuch'"
run info "$RESNET" --input-shape data:1,3,224
expect_err "an --input-shape of another rank is refused" 2 "input 'data' is [1,3,224,224]" "another rank"
run draw "$RESNET" "$TMP/r2.dot" --batch-size 2
check "draw --batch-size labels the edges with the new shapes" grep -q '2,1000' "$TMP/r2.dot"
run run "$RESNET" --batch-size 2 -o "$TMP/run2"
check "run --batch-size on ONNX runs a batch of 2" test -f "$TMP/run2/logits.npy"
run "$RESNET" "$TMP/r2.json" --to nnvm --batch-size 2
expect_rc "convert --batch-size to nnvm" 0
run info "$TMP/r2.json"
expect_out "the converted model has the batch of 2" "[2,3,224,224]"
run diff "$RESNET" "$RESNET" --batch-size-a 3 --batch-size-b 3
expect_rc "diff takes --batch-size-a/-b" 0

# ---- 3. hints that point the right way ----
run "$LENET" "$TMP/x.nnp"
expect_err "a shape-less MXNet model to nnabla hints at --input-shape" 3 \
  "hint: the model's input shapes are not known; give them with --input-shape data:"
run run "$LENET" -o "$TMP/runx"
expect_err "run's shape error has its [code] and hints at --input-shape" 2 "[shape]" "--input-shape data:"
case "$err" in *"--input ["*) rc=x; bad "run no longer names a --input [shape] flag" ;; *) ok "run no longer names a --input [shape] flag" ;; esac

# ---- 4. notes alike summarised ----
run "$SHUFFLE" "$TMP/s.onnx"
expect_err "338 alike notes print once with a count" 0 "note (338 alike, first tensor conv1_conv_wts (op create1); -v lists each)"
check "and the conversion prints few lines" test "$(printf '%s\n' "$err" | wc -l)" -le 4
run "$SHUFFLE" "$TMP/s2.onnx" -v
check "-v prints each note" test "$(printf '%s\n' "$err" | grep -c 'uniform random values')" -ge 338

# ---- 5. files chosen and written ----
cp "$LENET" "$SHARED/realworld/mxnet/lenet-0001.params" "$TMP/"
run "$TMP/lenet-symbol.json" "$TMP/o.nnp" --to onnx --input-shape data:1,1,28,28
expect_err "--to contradicting the extension is warned about" 0 "warning: $TMP/o.nnp is written as onnx, but its extension is nnabla's"
run "$TMP/lenet-symbol.json" "$TMP/o.json" --input-shape data:1,1,28,28
expect_err "an extension several formats take says which was chosen" 0 \
  "$TMP/o.json: writing nnvm (mxnet, tvm, lightnet take the extension too; choose with --to)"
expect_err "the summary names every file written" 0 "wrote $TMP/o.json, $TMP/o.params" "1 input, 1 output"
sum_before=$(cksum <"$TMP/o.params")
run "$TMP/lenet-symbol.json" "$TMP/o.relayviz.json" --input-shape data:1,1,28,28
expect_err "a companion file another conversion wrote is not overwritten" 5 "$TMP/o.params" \
  "companion file exists" "--out-params"
check "and the first conversion's weights are intact" test "$(cksum <"$TMP/o.params")" = "$sum_before"
check "nor is the model written" test ! -e "$TMP/o.relayviz.json"
mkdir -p "$TMP/zoo"
cp "$TMP/o.json" "$TMP/o.params" "$TMP/zoo/"
# two jobs of one batch whose companion files share a name
cat >"$TMP/m.json" <<EOF
{"input": "$TMP/zoo/o.json", "output": "$TMP/bout/sq.json", "to": "nnvm"}
{"input": "$TMP/zoo/o.json", "output": "$TMP/bout/sq.relayviz.json", "to": "relayviz"}
EOF
run batch --manifest "$TMP/m.json" -f
case "$out" in *"also written by"*) ok "batch refuses two jobs writing one companion file, even with -f" ;; *) bad "batch refuses two jobs writing one companion file, even with -f" ;; esac

# ---- 6. ops filter, --json, grammar, info's opset and weights file ----
run ops --format onnx Conv
expect_out "ops --format onnx Conv prints Conv's mapping" "Conv                     rw  Conv" "kernel_shape"
check "and only Conv's" test "$(printf '%s\n' "$out" | wc -l)" -le 12
case "$out" in *Relu*) rc=x; bad "no other operator is listed" ;; *) ok "no other operator is listed" ;; esac
run ops --format onnx NoSuchOp
expect_err "a filter matching nothing says so" 1 "onnx maps no operator named NoSuchOp"
run formats --json
check "formats --json is JSON" json_ok
expect_out "formats --json lists formats and options" '"name": "onnx"' '"common_options"' '"input-shape"'
run ops --json Conv
check "ops --json is JSON" json_ok
expect_out "ops --json Conv" '"name": "Conv"' '"attributes"'
run ops --format nnvm --json conv2d
check "ops --format --json is JSON" json_ok
run errors --json
check "errors --json is JSON" json_ok
expect_out "errors --json lists codes and exits" '"code": "check-failed", "exit": 4'
run check "$RESNET" "$RESNET" --json
check "check --json is JSON" json_ok
expect_out "check --json says it passed with the metrics" '"passed": true' '"method": "run"'
run check "$RESNET" "$RESNET"
case "$out" in *'{"method"'*) rc=x; bad "check's human output has no raw JSON" ;; *) ok "check's human output has no raw JSON" ;; esac
run "$TMP/lenet-symbol.json" "$TMP/c.onnx" --input-shape data:1,1,28,28 --check
expect_err "convert --check's verdict is a sentence" 0 "check passed: ran both models: 1 output agrees"
case "$err" in *'{"method"'*) rc=x; bad "convert --check prints no raw JSON" ;; *) ok "convert --check prints no raw JSON" ;; esac
run info "$RESNET"
expect_out "info shows the ONNX opset" "opset:      ai.onnx "
expect_out "info says '1 input', '1 output'" "input:      1" "output:     1"
run info "$TMP/lenet-symbol.json"
expect_out "info names the weights file read" "params:     $TMP/lenet-0001.params"

# ---- 7. draw readable on deep networks ----
run draw "$RESNET" "$TMP/r.dot"
check "draw hides attributes at their default" sh -c "! grep -q 'dilations=\\[1,1\\]' '$TMP/r.dot'"
run draw "$RESNET" "$TMP/rall.dot" --all-attrs
check "--all-attrs shows them" grep -q 'dilations=\[1,1\]' "$TMP/rall.dot"
check "the default picture has less text" test "$(wc -c <"$TMP/r.dot")" -lt "$(wc -c <"$TMP/rall.dot")"
run draw "$RESNET" "$TMP/rc.dot" --collapse
check "--collapse draws repeated blocks as one box" grep -q 'more block.* like the one above\\nConv, Relu, Conv, Add, Relu' "$TMP/rc.dot"
check "--collapse draws fewer operator boxes" \
  test "$(grep -c 'shape=box,' "$TMP/rc.dot")" -lt "$(grep -c 'shape=box,' "$TMP/r.dot")"
if command -v dot >/dev/null; then
  dot -Tsvg "$TMP/rc.dot" -o "$TMP/rc.svg"
  check "the collapsed picture renders" grep -q '<svg' "$TMP/rc.svg"
fi

# ---- issue 16: --check verdicts ----
if [ -f "$MTCNN" ]; then
  run "$MTCNN" "$TMP/m1-symbol.json" --input-shape data:1,3,12,12 --check
  if [ "$rc" = 0 ]; then
    expect_err "MXNet -> MXNet --check with --input-shape runs both models" 0 "check passed: ran both models"
  else
    expect_err "a check that could not run both models fails and says so" 4 "the models were not run" \
      "--check=structure"
    case "$err" in *"in A, ? in B"*) rc=x; bad "the written model gets the source's input shapes" ;; *) ok "the written model gets the source's input shapes" ;; esac
    check "a failed check leaves no output" test ! -e "$TMP/m1-symbol.json"
    run "$MTCNN" "$TMP/m2-symbol.json" --input-shape data:1,3,12,12 --check=structure
    expect_err "--check=structure accepts a structural check and says so" 0 \
      "check passed: structure only (the models were not run): graphs and weights match"
    mkdir -p "$TMP/mz"
    cp "$MTCNN" "$SHARED/incoming/mxnet/mtcnn_det1-0001.params" "$TMP/mz/"
    run batch "$TMP/mz" -t mxnet -o "$TMP/mzout" --check -I input-shape=data:1,3,12,12
    expect_rc "batch --check fails a structural-only check" 4
    case "$out" in *'"method": "structural", "passed": false'*"the models were not run"*|*"the models were not run"*'"method": "structural", "passed": false'*)
      ok "and its report says the models were not run" ;;
    *) bad "and its report says the models were not run" ;; esac
    run batch "$TMP/mz" -t mxnet -o "$TMP/mzout2" --check=structure -I input-shape=data:1,3,12,12
    expect_out "batch --check=structure reports the structural pass" '"method": "structural", "passed": true'
  fi
fi
run "$TMP/lenet-symbol.json" "$TMP/l2-symbol.json" --input-shape data:1,1,28,28 --check
expect_err "MXNet -> MXNet --check with --input-shape passes by running both" 0 "check passed: ran both models"

# ---- batch --shard auto ----
mkdir -p "$TMP/many"
for i in 1 2 3 4 5 6; do cp "$TMP/o.json" "$TMP/many/m$i.json"; cp "$TMP/o.params" "$TMP/many/m$i.params"; done
shard_inputs() { printf '%s\n' "$out" | sed -n 's/^{"input": "\([^"]*\)".*/\1/p' | sort | tr '\n' ' '; }
run batch "$TMP/many" -t onnx -o "$TMP/sh" --dry-run --shard 2/3
want=$(shard_inputs)
check "--shard 2/3 picks some of the models" test -n "$want"
CI_NODE_INDEX=2 CI_NODE_TOTAL=3 run batch "$TMP/many" -t onnx -o "$TMP/sh" --dry-run --shard auto
check "--shard auto from GitLab's CI_NODE_INDEX/CI_NODE_TOTAL" test "$(shard_inputs)" = "$want"
SLURM_ARRAY_TASK_ID=11 SLURM_ARRAY_TASK_MIN=10 SLURM_ARRAY_TASK_COUNT=3 run batch "$TMP/many" -t onnx -o "$TMP/sh" --dry-run --shard auto
check "--shard auto from Slurm's array task (ID - MIN + 1 of COUNT)" test "$(shard_inputs)" = "$want"
JOB_COMPLETION_INDEX=1 run batch "$TMP/many" -t onnx -o "$TMP/sh" --dry-run --shard auto/3
check "--shard auto/3 from a Kubernetes indexed Job's JOB_COMPLETION_INDEX" test "$(shard_inputs)" = "$want"
JOB_COMPLETION_INDEX=1 run batch "$TMP/many" -t onnx -o "$TMP/sh" --dry-run --shard auto
expect_err "Kubernetes without a count asks for auto/N" 1 "give it as --shard auto/N"
run batch "$TMP/many" -t onnx -o "$TMP/sh" --dry-run --shard auto
expect_err "--shard auto with no job-array variable says which it looks for" 1 "CI_NODE_INDEX" "SLURM_ARRAY_TASK_ID" \
  "JOB_COMPLETION_INDEX"
finish
