#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/ (clang, ASan+UBSan) for SECONDS each.
#   scripts/fuzz.sh 10                 # CI smoke: every target 10 s
#   scripts/fuzz.sh 3600 h5 nnp        # the long run: an hour each for h5 and nnp
#   JOBS=2 scripts/fuzz.sh 3600        # the same with libFuzzer workers in parallel
# Builds build-fuzz/ (CC=clang -Dfuzz=true) when missing, makes the seed
# corpora from the shared real files (fuzz/seeds.sh) and keeps the growing
# corpora in fuzz-out/corpus/KIND and any crash, leak, timeout or
# out-of-memory input in fuzz-out/artifacts/KIND (both git-ignored).  A
# finding fails the script; minimise it (fuzz-KIND -minimize_crash=1 ...),
# fix it, and add it to fuzz/regress/KIND/, whose inputs every test run
# replays.  Prints one line per target: executions, coverage (cov, ft),
# corpus size.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
secs=${1:-10}
shift || true
all=(graph_json params nnp nntxt h5 protobuf onnx wts npy)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
bdir=${FUZZ_BUILD:-build-fuzz}
if [ ! -f "$bdir/build.ninja" ]; then
  CC=clang meson setup "$bdir" --wrap-mode=nodownload -Dfuzz=true -Db_sanitize=address,undefined \
    -Db_lundef=false -Dtests=false -Dman=false -Dbench=false -Dbuildtype=debugoptimized >/dev/null
fi
ninja -C "$bdir" >/dev/null
out=${FUZZ_OUT:-fuzz-out}
mkdir -p "$out/seeds" "$out/corpus" "$out/artifacts" "$out/logs"
rm -rf "$out/seeds"
GRAPHCONV=${GRAPHCONV:-} fuzz/seeds.sh "$out/seeds" 2>/dev/null
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for k in "${targets[@]}"; do
  mkdir -p "$out/corpus/$k" "$out/artifacts/$k"
  dict=()
  case $k in
    graph_json|params|wts) dict=(-dict=fuzz/json.dict) ;;
    nntxt|h5|protobuf) dict=(-dict=fuzz/nntxt.dict) ;;
  esac
  log=$out/logs/$k.log
  jobs=()
  [ "${JOBS:-1}" -gt 1 ] && jobs=(-jobs="$JOBS" -workers="$JOBS")
  rc=0
  # FUZZ_RUNS=N: at most N inputs, from a fixed seed (CI's smoke run): every
  # machine tries the same inputs in the same order, a slower one fewer.
  limit=(-max_total_time="$secs")
  [ -n "${FUZZ_RUNS:-}" ] && limit+=(-runs="$FUZZ_RUNS" -seed=1)
  "$bdir/fuzz/fuzz-$k" "$out/corpus/$k" "$out/seeds/$k" "${dict[@]}" "${jobs[@]}" \
    "${limit[@]}" -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=1048576 \
    -artifact_prefix="$out/artifacts/$k/" -print_final_stats=1 >"$log" 2>&1 || rc=$?
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
  echo "fuzz-$k: rc=$rc execs=$execs ${last#*	}" | sed 's/  */ /g'
  if [ "$rc" != 0 ]; then
    status=1
    grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -5 >&2 || true
  fi
done
exit $status
