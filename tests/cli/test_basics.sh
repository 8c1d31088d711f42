#!/usr/bin/env bash
# The CLI's conventions: usage, exit statuses, atomic outputs, documentation.
. "$(dirname "$0")/lib.sh"

run --help
expect_out "help lists the commands" "info MODEL" "diff A B" "formats" "draw MODEL OUT" "batch INPUT" "run MODEL" "check A B" "Exit status"
run --version
expect_out "version names the libraries" "graphconv 0.1.0" "yajl" "libzip" "hdf5"
run
expect_rc "no arguments is a usage error" 1
run only-one.onnx
expect_err "one file is a usage error" 1 "exactly an input and an output"
run --bogus a b
expect_rc "unknown option is a usage error" 1
run a.json b.weird
expect_err "unknown output extension" 1 "cannot tell the output format" "--to"
run a.json b.json --to nosuchformat
expect_err "unknown --to" 1 "unknown output format 'nosuchformat'"
run "$TMP/missing.json" "$TMP/out.json" --to nnvm
expect_err "missing input is an I/O error" 5 "missing.json" "cannot open" "[io]"
: >"$TMP/empty.json"
run "$TMP/empty.json" "$TMP/out.json" --to nnvm
expect_err "empty input is bad input" 2 "empty.json" "empty"
only_files "nothing written for a failed conversion" "$TMP" empty.json
printf 'precious' >"$TMP/exists.json"
run "$TMP/empty.json" "$TMP/exists.json" --to nnvm
expect_err "existing output is refused" 5 "exists.json" "--force" "[output-exists]"
check "existing output untouched" test "$(cat "$TMP/exists.json")" = precious
run info "$TMP"
expect_err "a directory is not a model" 5 "is a directory"
run errors
expect_out "errors lists the registry" "unsupported-op" "check-failed" "output-exists"
run ops
expect_out "ops lists canonical operators" "Conv" "BatchNormalization" "Softmax"
run ops NotAnOp
expect_err "ops on an unknown op" 1 "not a canonical operator"
run ops --format nosuch
expect_err "ops on an unknown format" 1 "unknown format 'nosuch'"
run formats
expect_out "formats lists common options" "params" "allow-opaque"

# The quick start's round trip: MXNet LeNet records no input shape, so the
# conversion is given one; diff compares once side A is given it too.
run "$SHARED/realworld/mxnet/lenet-symbol.json" "$TMP/rt-lenet.nnp" --input-shape data:1,1,28,28 --check
expect_rc "LeNet -> nnp with an input shape, checked" 0
run "$TMP/rt-lenet.nnp" "$TMP/rt-lenet-symbol.json" --check
expect_rc "and back to MXNet, checked" 0
run diff "$SHARED/realworld/mxnet/lenet-symbol.json" "$TMP/rt-lenet-symbol.json"
expect_rc "without the shape, diff finds differences" 4
check "they are the shapes the round trip learnt" sh -c "printf '%s' \"\$1\" | grep -qF \"value 'data': shape [?,?,?,?] in A, [1,1,28,28] in B\"" sh "$out"
run diff "$SHARED/realworld/mxnet/lenet-symbol.json" "$TMP/rt-lenet-symbol.json" --input-shape-a data:1,1,28,28
expect_out "with --input-shape-a the round trip is the same graph" "same graph: 12 nodes, identical weights"

# Progress of writing the weights: asked for, it is shown whatever stderr is;
# otherwise only on a terminal, and never with -q.
run "$SHARED/models/resnet18.onnx" "$TMP/progress.json" --to nnvm --progress
expect_err "--progress shows the weights written" 0 "graphconv: writing $TMP/progress.json:   0% (0.0 of 44.6 MiB)" \
  "graphconv: writing $TMP/progress.json: 100% (44.6 of 44.6 MiB)"
check "--progress prints at most a line per tenth" test "$(printf '%s\n' "$err" | grep -c ': writing ')" -le 12
run "$SHARED/models/resnet18.onnx" "$TMP/progress-q.json" --to nnvm --progress -q
check "-q silences progress" test -z "$err"
run "$SHARED/models/resnet18.onnx" "$TMP/progress-none.json" --to nnvm
check "no progress when stderr is not a terminal" sh -c "! printf '%s' \"\$1\" | grep -q ': writing '" sh "$err"

# Standard input ("-", or any pipe): read whole into a temporary file that
# is gone afterwards, tensors loaded; the result is the file's own.
mkdir "$TMP/spool"
run_piped "$SHARED/realworld/mxnet/lenet-symbol.json" info - -I weights-as-inputs=1
expect_out "info - reads a pipe" "file:       -" "format:     mxnet (by content)"
TMPDIR="$TMP/spool" run_piped "$SHARED/models/squeezenet1_0.onnx" - "$TMP/piped.nnp"
expect_rc "a model converts from a pipe" 0
run "$SHARED/models/squeezenet1_0.onnx" "$TMP/direct.nnp"
check "the pipe's conversion is byte-identical to the file's" cmp -s "$TMP/piped.nnp" "$TMP/direct.nnp"
check "no copy of the input is left behind" test -z "$(ls -A "$TMP/spool")"
run_piped /dev/null info /dev/stdin
expect_err "an empty pipe is named and refused" 2 "graphconv: /dev/stdin: file is empty"
printf '{"nodes": [{"op": "null", "name": "x", "inputs": []}], "arg_nodes": [0], "heads": [[0, 0' >"$TMP/cut.json"
TMPDIR="$TMP/spool" run_piped "$TMP/cut.json" info -
expect_err "a truncated pipe gets the parser's message, not the copy's name" 2 "graphconv: /dev/stdin: line 1:89: JSON text ends early"
check "a failed read leaves no copy either" test -z "$(ls -A "$TMP/spool")"

# The man pages are generated from the same registries.
if [ -n "${GIR_MAN_DIR:-}" ] && command -v man >/dev/null; then
  page=$(MANWIDTH=200 man -l "$GIR_MAN_DIR/graphconv.1" 2>/dev/null)
  missing=""
  for code in $("$GC" errors | awk 'NR>1 {print $1}'); do
    case "$page" in *"$code"*) ;; *) missing="$missing $code" ;; esac
  done
  rc=0
  check "graphconv(1) documents every error code" test -z "$missing"
  for cmd in info diff formats ops errors draw batch run check; do
    case "$page" in *"$cmd"*) ;; *) missing="$missing $cmd" ;; esac
  done
  check "graphconv(1) documents every command" test -z "$missing"
else
  echo "skip - man(1) not installed: man page checks not run"
fi
finish
