#!/usr/bin/env bash
# Hostile input and the output promise, through the CLI:
# - each real file cut at ten points and with single bytes flipped at fifty
#   places converts or fails with exit 2 or 3 and a message: never a
#   signal, and a failure leaves no output and no temporary file;
# - a conversion killed with SIGKILL at random moments leaves the previous
#   output complete (or the new one, complete), and the next run leaves no
#   temporary file or journal behind;
# - four conversions writing the same graph + params pair with --force at
#   once leave one complete pair from one of them.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
R=$SHARED/realworld

SRC=${GIR_SOURCE_DIR:-$here/../..}
RG=$SRC/fuzz/regress/graph_json

# ---- the findings of the first fuzzing run, by hand ---------------------------------

run info "$RG/tvm_storage_id_negative"
expect_err "TVM storage_id -1" 2 "storage_id entries must be buffer numbers from 0 to the entry count less one, found the number -1"
run info "$RG/tvm_storage_id_huge"
expect_err "TVM storage_id 2^40" 2 "found the number 1099511627776"
run info "$RG/tvm_dltype_float4096"
expect_err "TVM dltype float4096" 2 "dltype entries must be TVM type names"
run info "$RG/tvm_shape_2p66"
expect_err "TVM shape of 2^68 elements" 2 "shape entries must be shapes whose element count fits in 64 bits"
run info "$RG/tvm_node_row_ptr_negative"
expect_err "negative node_row_ptr" 2 '"node_row_ptr" must hold offsets of 0 or more, found -1'
run info "$RG/lightnet_probe_overread"
expect_err "LightNet probe at the end of its window" 2 "JSON text ends early"
printf '{"nodes":[{"op":"nope","name":"a\\u001b[31mred","inputs":[]}],"arg_nodes":[],"heads":[[0,0,0]]}' >"$TMP/esc.json"
run "$TMP/esc.json" "$TMP/esc.onnx"
case "$err" in *$'\x1b'*) rc=-; bad "no control byte reaches the terminal" ;; *'\x1b[31mred'*) ok "control bytes in names are escaped" ;; *) bad "control bytes in names are escaped (message lacks the escaped name)" ;; esac
mkfifo "$TMP/fifo"
run "$R/nnvm/lenet_nnvm_graph.json" "$TMP/fifo" --to onnx --force
expect_err "--force onto a FIFO is refused" 5 "output is a FIFO; graphconv replaces only regular files"
check "the FIFO is still a FIFO" test -p "$TMP/fifo"

# parameter.h5 files crafted like the ones that broke libhdf5 (our own
# file, written by graphconv, with the same structures damaged)
split() { python3 -c 'import sys
d = open(sys.argv[1], "rb").read(); s = b"\n#--graphconv-fuzz-companion--#\n"; i = d.find(s)
open(sys.argv[2], "wb").write(d[:i]); open(sys.argv[3], "wb").write(d[i + len(s):])' "$@"; }
h5_ok=true
for f in "$SRC"/fuzz/regress/h5/*; do
  split "$f" "$TMP/h.nntxt" "$TMP/h.h5"
  "$GC" "$TMP/h.nntxt" "$TMP/h.onnx" --params "$TMP/h.h5" --force -q >"$CAP/out" 2>"$CAP/err"
  r=$?
  case "$(basename "$f"):$r" in
    valid:0) ;;
    valid:*) h5_ok=false; echo "  $f: exit $r" ;;
    *:2) grep -q 'HDF5\|tensor of float32 is larger' "$CAP/err" || { h5_ok=false; echo "  $f: $(cat "$CAP/err")"; } ;;
    *) h5_ok=false; echo "  $f: exit $r: $(cat "$CAP/err")" ;;
  esac
done
rc=-
check "crafted parameter.h5 files are refused with a message (exit 2)" $h5_ok

# ---- truncation and byte flips ------------------------------------------------

work=$TMP/hostile
mkdir -p "$work"
bad_runs=0
runs=0
# mutate NAME MUTANT [graphconv args...]: converts (the input is MUTANT or
# given in the args) into $work/out/ and checks the outcome.
mutate_run() {
  local label=$1
  shift
  rm -rf "$work/out"
  mkdir -p "$work/out"
  "$GC" "$@" "$work/out/m.json" --to nnvm -q >"$CAP/out" 2>"$CAP/err"
  local r=$?
  runs=$((runs + 1))
  local left
  left=$(ls -A "$work/out")
  if [ $r -ge 128 ] || { [ $r != 0 ] && [ $r != 2 ] && [ $r != 3 ]; }; then
    bad_runs=$((bad_runs + 1))
    echo "  $label: exit $r: $(head -c 300 "$CAP/err")"
  elif [ $r != 0 ] && { [ ! -s "$CAP/err" ] || [ -n "$left" ]; }; then
    bad_runs=$((bad_runs + 1))
    echo "  $label: exit $r with message '$(head -c 200 "$CAP/err")' and files: $left"
  elif [ $r = 0 ] && ls -A "$work/out" | grep -q 'graphconv'; then
    bad_runs=$((bad_runs + 1))
    echo "  $label: temporary files left: $left"
  fi
}

byte_at() { od -An -tu1 -j "$2" -N1 "$1" | tr -d ' '; }
# mutants FILE ROLE [other args]: ROLE "in" = FILE is the input, "params" =
# FILE is the params file of the input given in the other args.
mutants() {
  local file=$1 role=$2
  shift 2
  local size
  size=$(stat -c %s "$file")
  local ext=${file##*.}
  local m=$work/mutant.$ext
  local i p
  for i in 1 2 3 4 5 6 7 8 9 10; do
    p=$(((size * i) / 11))
    head -c "$p" "$file" >"$m"
    if [ "$role" = in ]; then mutate_run "$(basename "$file") cut at $p" "$m" "$@"; else
      mutate_run "$(basename "$file") cut at $p" "$@" --params "$m"; fi
  done
  for i in $(seq 0 49); do
    # half spread over the file, half near its start where the headers are
    if [ $((i % 2)) = 0 ]; then p=$(((size * i / 50 + i * 7919) % size)); else p=$(((i * 104729) % (size < 4096 ? size : 4096))); fi
    cp "$file" "$m"
    local v
    v=$(byte_at "$file" "$p")
    printf "$(printf '\\%03o' $((v ^ 0xff)))" | dd of="$m" bs=1 seek="$p" conv=notrunc status=none
    if [ "$role" = in ]; then mutate_run "$(basename "$file") byte $p" "$m" "$@"; else
      mutate_run "$(basename "$file") byte $p" "$@" --params "$m"; fi
  done
}

mutants "$R/mxnet/lenet-symbol.json" in --params "$R/mxnet/lenet-0001.params"
mutants "$R/mxnet/lenet-0001.params" params "$R/mxnet/lenet-symbol.json"
mutants "$R/nnvm/lenet_nnvm_graph.json" in
mutants "$R/tvm/wrn_fc.json" in
mutants "$R/lightnet/test.json" in
mutants "$R/nnp/model_simple.nnp" in
mutants "$R/nnp/lenet_010000.nnp" in
mutants "$R/nnp-onnx-pairs/conv.onnx" in
mutants "$R/nnp-onnx-pairs/batch_norm.nnp" in
rc=$bad_runs
check "truncated and flipped real files ($runs runs): exit 0, 2 or 3, a message, nothing left" test "$bad_runs" = 0

# ---- SIGKILL at random moments ---------------------------------------------------

kd=$TMP/kill
mkdir -p "$kd"
src=$R/tvm/wrn_fc.json
"$GC" "$src" "$kd/ref_new.json" --to nnvm -q
"$GC" "$R/nnvm/lenet_nnvm_graph.json" "$kd/m.json" --to nnvm -q
cp "$kd/m.json" "$kd/old.json"
cp "$kd/m.params" "$kd/old.params"
kills_ok=true
for i in $(seq 1 12); do
  "$GC" "$src" "$kd/m.json" --to nnvm --force -q 2>/dev/null &
  pid=$!
  sleep "0.$(((i * 37) % 10))$(((i * 53) % 10))"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  # the next output in the directory cleans up after the dead one
  "$GC" "$R/nnvm/lenet_nnvm_graph.json" "$kd/other.json" --to nnvm --force -q
  if cmp -s "$kd/m.json" "$kd/old.json" && cmp -s "$kd/m.params" "$kd/old.params"; then
    :
  elif cmp -s "$kd/m.json" "$kd/ref_new.json" && cmp -s "$kd/m.params" "$kd/ref_new.params"; then
    cp "$kd/m.json" "$kd/old.json" # the next kill must leave this pair
    cp "$kd/m.params" "$kd/old.params"
    cp "$R/nnvm/lenet_nnvm_graph.json" /dev/null
  else
    kills_ok=false
    echo "  kill $i: m.json/m.params are neither the previous nor the new pair"
  fi
  if ls -A "$kd" | grep -q 'graphconv'; then
    kills_ok=false
    echo "  kill $i: left $(ls -A "$kd" | grep graphconv | tr '\n' ' ')"
  fi
done
rc=-
check "SIGKILL at 12 moments: the previous or the new pair, complete; no temporary file after the next run" $kills_ok

# ---- SIGINT and SIGTERM: the process cleans up itself ---------------------------------

sd=$TMP/sig
mkdir -p "$sd"
sig_ok=true
for s in INT TERM; do
  for delay in 0.2 0.4 0.6; do
    "$GC" "$src" "$sd/m.json" --to nnvm --force -q 2>/dev/null &
    pid=$!
    sleep "$delay"
    kill -s "$s" "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    if ls -A "$sd" | grep -q graphconv; then
      sig_ok=false
      echo "  SIG$s after $delay s: left $(ls -A "$sd" | tr '\n' ' ')"
    fi
  done
done
check "SIGINT/SIGTERM at 6 moments leave no temporary file (without a next run)" $sig_ok

# ---- four concurrent --force writers ---------------------------------------------

cd4=$TMP/conc
mkdir -p "$cd4/ref"
inputs=("$R/nnvm/lenet_nnvm_graph.json" "$R/tvm/wrn_fc.json" "$R/mxnet/lenet-symbol.json" "$R/nnp/model_simple.nnp")
for k in 0 1 2 3; do
  "$GC" "${inputs[$k]}" "$cd4/ref/r$k.json" --to nnvm -q
done
conc_ok=true
for round in 1 2 3 4 5; do
  for k in 0 1 2 3; do
    "$GC" "${inputs[$k]}" "$cd4/m.json" --to nnvm --force -q &
  done
  wait
  match=no
  for k in 0 1 2 3; do
    if cmp -s "$cd4/m.json" "$cd4/ref/r$k.json" && { [ ! -f "$cd4/ref/r$k.params" ] && [ ! -f "$cd4/m.params" ] ||
      cmp -s "$cd4/m.params" "$cd4/ref/r$k.params"; }; then match=$k; fi
  done
  # a graph without params (none of these) would leave an old params file: all four have params
  if [ "$match" = no ]; then
    conc_ok=false
    echo "  round $round: the pair is from no single writer"
  fi
  if ls -A "$cd4" | grep -q graphconv; then
    conc_ok=false
    echo "  round $round: left $(ls -A "$cd4" | grep graphconv | tr '\n' ' ')"
  fi
done
check "four concurrent --force writers, 5 rounds: one complete pair from one writer" $conc_ok

finish
