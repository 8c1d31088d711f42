#!/usr/bin/env bash
# graphconv run and graphconv check on LightNet models (testdata/lightnet and
# the documentation example of ../shared/seeds/001).
. "$(dirname "$0")/lib.sh"
TD=${GIR_TESTDATA_DIR:?GIR_TESTDATA_DIR must point at testdata/}
NET=$TD/lightnet/convnet.json

# npy FILE SHAPE COUNT: a float32 .npy of COUNT zeros (shape text like "1, 3, 8, 8").
npy() {
  local hdr="{'descr': '<f4', 'fortran_order': False, 'shape': ($2), }"
  # pad so that magic(6) + version(2) + length(2) + header + '\n' is a multiple of 64
  local total=$(( (10 + ${#hdr} + 1 + 63) / 64 * 64 ))
  local pad=$(( total - 10 - ${#hdr} - 1 ))
  {
    printf '\x93NUMPY\x01\x00'
    printf "\\x$(printf %02x $(( (total - 10) % 256 )))\\x$(printf %02x $(( (total - 10) / 256 )))"
    printf '%s%*s\n' "$hdr" "$pad" ''
    head -c $(( $3 * 4 )) /dev/zero
  } >"$1"
}

# ---- run -------------------------------------------------------------------
run run "$NET"
expect_out "run prints each output" "out: float32 [1,4,1,1] min"
run run "$NET" -o "$TMP/o1"
expect_rc "run -o writes the outputs" 0
check "out.npy written" test -s "$TMP/o1/out.npy"
run run "$NET" -o "$TMP/o1"
expect_err "an existing output is kept" 5 "out.npy" "[output-exists]"
run run "$NET" -o "$TMP/o1" --force --threads 2
expect_rc "--force overwrites; 2 threads" 0
run run "$NET" -o "$TMP/o2"
check "1 and 2 threads give the same bytes" cmp -s "$TMP/o1/out.npy" "$TMP/o2/out.npy"

npy "$TMP/zeros.npy" "1, 3, 8, 8" 192
run run "$NET" --input "input=$TMP/zeros.npy" -o "$TMP/z1"
expect_rc "an input by name" 0
run run "$NET" --input "$TMP/zeros.npy" -o "$TMP/z2"
expect_rc "an input by position" 0
check "by name and by position agree" cmp -s "$TMP/z1/out.npy" "$TMP/z2/out.npy"
check "given input differs from the seeded one" bash -c "! cmp -s '$TMP/z1/out.npy' '$TMP/o1/out.npy'"
run run "$NET" --seed 7 -o "$TMP/s7"
run run "$NET" --seed 7 -o "$TMP/s7b"
check "the same seed gives the same output" cmp -s "$TMP/s7/out.npy" "$TMP/s7b/out.npy"
check "another seed another output" bash -c "! cmp -s '$TMP/s7/out.npy' '$TMP/o1/out.npy'"

run run "$NET" --repeat 3
expect_out "--repeat prints the latency" "latency over 3 runs (1 thread): median" "ms, min" "ms, max"
run run "$NET" --profile --repeat 2
expect_out "--profile prints a table per op type and per node" "profile over 2 runs:" "in 10 executed nodes" \
  "per operator type:" "Conv                          1" "per node (slowest first):" "conv1" "BatchNormalization+Relu      bn1"
run run "$NET" --profile
expect_out "--profile alone times 10 runs" "latency over 10 runs" "profile over 10 runs:"
run run "$NET" --profile-json - --repeat 3 -o "$TMP/pj"
expect_out "--profile-json - is the only thing on standard output" '{"model": ' '"threads": 1, "runs": 3' \
  '"nodes": [' '{"name": "conv1", "op": "Conv", "fused": [], "ms_per_run": ' '"ops": ['
check "--profile-json - leaves no other line" bash -c "! grep -q latency '$CAP/out' && head -c 10 '$CAP/out' | grep -q '^{\"model'"
run run "$NET" --profile-json "$TMP/prof.json"
expect_rc "--profile-json FILE" 0
check "the profile file is written" grep -q '"runs": 10' "$TMP/prof.json"
run run "$NET" --profile-json "$TMP/prof.json"
expect_err "an existing profile file is kept" 5 "prof.json" "[output-exists]"
run run "$NET" --profile-json "$TMP/prof.json" --force --repeat 4
check "--force replaces it" grep -q '"runs": 4' "$TMP/prof.json"
run run "$NET" --input "nosuch=$TMP/zeros.npy"
expect_err "an unknown input name" 1 "the model has no input named 'nosuch'"
npy "$TMP/bad.npy" "2, 3" 6
run run "$NET" --input "$TMP/bad.npy"
expect_err "an input of the wrong shape" 2 "input 'input' has shape [1,3,8,8], got [2,3]"
run run "$NET" --repeat 0
expect_err "--repeat 0" 1 "--repeat takes an integer"
run run "$NET" --threads 0
expect_err "--threads 0" 1 "--threads takes an integer"
run run "$TMP/missing.json"
expect_err "a missing model" 5 "missing.json"

# ---- reader options: MXNet stores no input shape or type -------------------------
LENET=$SHARED/realworld/mxnet/lenet-symbol.json
run run "$LENET"
expect_err "an input of unknown dimensions must be given" 2 "input 'data' has no known dimension (shape [?,?,?,?])" "give them with --input-shape data:"
run run "$LENET" --input-shape data:1,1,28,28
expect_out "--input-shape runs it (float32 assumed)" "hybridsequential0_dense1_fwd: float32 [1,10] min"
run "$LENET" "$TMP/lenet.onnx" --input-shape data:1,1,28,28
expect_rc "lenet converts to ONNX" 0
run check "$LENET" "$TMP/lenet.onnx" --input-shape data:1,1,28,28
expect_out "the conversion agrees" "check passed: 1 output agree"
run check "$TMP/lenet.onnx" "$LENET" --input-shape-b data:1,1,28,28
expect_out "B's reader options" "check passed: 1 output agree"

# ---- the seed's create/slice/print example -----------------------------------
seed=$SHARED/seeds/001_94c518433e874cad.txt
sed -n '/^Example$/,$p' "$seed" | sed -n '/^{$/,/^}$/p' >"$TMP/example.json"
sed -n '/^\$ lightnet example.json$/,/^info: run time/p' "$seed" | sed '1d;$d' >"$TMP/want.txt"
run run "$TMP/example.json"
check "the example prints what LightNet prints" test "$out" = "$(cat "$TMP/want.txt")"
check "which is the 2x3 slice" test "$out" = "$(printf 'tensor2:\n[[2.000 3.000 4.000]\n [6.000 7.000 8.000]]')"

# ---- check --------------------------------------------------------------------
run check "$NET" "$NET"
expect_out "a model agrees with itself" "output 'out' float32 [1,4,1,1]: max abs 0, max rel 0, cosine 1.000000, mismatches 0/4 (0%), nan/inf agree" "check passed: 1 output agree"
mkdir "$TMP/perturbed"
cp "$NET" "$TMP/perturbed/convnet.json"
sed 's/^b1 0 4 bdc170a3/b1 0 4 3f800000/' "$TD/lightnet/convnet.wts" >"$TMP/perturbed/convnet.wts"
run check "$NET" "$TMP/perturbed/convnet.json"
expect_err "a changed bias is a mismatch" 4 "1 of 1 outputs differ beyond atol 0.0001 + rtol 0.001 (first: 'out')" "[check-failed]"
case "$out" in *"output 'out'"*"mismatches "*) ok "the report shows the metrics" ;; *) bad "the report shows the metrics" ;; esac
run check "$NET" "$TMP/perturbed/convnet.json" --per-node
case "$out" in *"first divergence: node '"*) ok "--per-node names the first diverging node" ;; *) bad "--per-node names the first diverging node" ;; esac
run check "$NET" "$TMP/perturbed/convnet.json" --atol 100
expect_out "a large atol accepts it" "check passed"
run check "$NET" "$NET" --input "input=$TMP/zeros.npy" --seed 3 -q
check "quiet check prints nothing" test -z "$out$err"
run check "$NET"
expect_err "check needs two models" 1 "check needs exactly two model files"
run check "$NET" "$NET" --atol -1
expect_err "a negative tolerance" 1 "--atol takes a non-negative number"
# nnabla has no bool: a bool input and output become float32 0/1, and check
# feeds B the 0/1 of A's bool input and compares the outputs exactly.
NOT2D=/usr/share/libonnx-testdata/data/node/test_not_2d/model.onnx
if [ -f "$NOT2D" ]; then
  run "$NOT2D" "$TMP/not.nnp" --check
  expect_err "a bool model converts to nnabla with notes" 0 "note: input 'x' is bool: written as float32 0/1" \
    "note: output 'not' is bool: written as float32 0/1" "check passed"
  run check "$NOT2D" "$TMP/not.nnp"
  expect_out "check compares bool with float32 0/1 exactly" "output 'not' bool (float32 in B) [3,4]: max abs 0" \
    "mismatches 0/12"
else
  echo "skip - libonnx-testdata not installed: bool check not run"
fi

finish
