#!/usr/bin/env bash
# Runs the libFuzzer targets of fuzz/ (clang, ASan+UBSan) for SECONDS each.
#   scripts/fuzz.sh 10                 # CI smoke: every target 10 s
#   scripts/fuzz.sh 3600 h5 nnp        # the long run: an hour each for h5 and nnp
#   JOBS=2 scripts/fuzz.sh 3600        # the same with libFuzzer workers in parallel
#   FUZZ_CORPUS=/work/fuzz-corpus FUZZ_LOG=/work/fuzz-corpus/LOG.md NICE=19 \
#     scripts/fuzz.sh 600 wts          # a slice of a long run kept across sessions
# Builds build-fuzz/ (CC=clang -Dfuzz=true) when missing, makes the seed
# corpora from the shared real files (fuzz/seeds.sh) and keeps the growing
# corpora in fuzz-out/corpus/KIND (FUZZ_CORPUS/KIND when set, e.g. a
# directory outside the checkout that outlives it) and any crash, leak,
# timeout or out-of-memory input in fuzz-out/artifacts/KIND (both
# git-ignored).  FUZZ_LOG=FILE appends one Markdown table row per target
# (date, target, seconds, executions, CPU seconds, cov, ft, corpus, result,
# command) so that the time spent per target adds up across runs;
# NICE=N runs the fuzzer under nice -n N; FUZZ_NO_BUILD=1 uses the binaries
# as they are (a long run while the sources change).  A
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
if [ -z "${FUZZ_NO_BUILD:-}" ] && [ ! -f "$bdir/build.ninja" ]; then
  CC=clang meson setup "$bdir" --wrap-mode=nodownload -Dfuzz=true -Db_sanitize=address,undefined \
    -Db_lundef=false -Dtests=false -Dman=false -Dbench=false -Dbuildtype=debugoptimized >/dev/null
fi
[ -n "${FUZZ_NO_BUILD:-}" ] || ninja -C "$bdir" >/dev/null
out=${FUZZ_OUT:-fuzz-out}
corpus=${FUZZ_CORPUS:-$out/corpus}
mkdir -p "$out/seeds" "$corpus" "$out/artifacts" "$out/logs"
rm -rf "$out/seeds"
GRAPHCONV=${GRAPHCONV:-} fuzz/seeds.sh "$out/seeds" 2>/dev/null
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for k in "${targets[@]}"; do
  mkdir -p "$corpus/$k" "$out/artifacts/$k"
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
  nice=()
  [ -n "${NICE:-}" ] && nice=(nice -n "$NICE")
  cmd=("${nice[@]}" "$bdir/fuzz/fuzz-$k" "$corpus/$k" "$out/seeds/$k" "${dict[@]}" "${jobs[@]}"
    "${limit[@]}" -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=1048576
    -artifact_prefix="$out/artifacts/$k/" -print_final_stats=1)
  /usr/bin/time -f 'cpu-seconds %U %S' -o "$log.time" "${cmd[@]}" >"$log" 2>&1 || rc=$?
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}')
  cpu=$(awk '/^cpu-seconds/ {printf "%.0f", $2 + $3}' "$log.time" 2>/dev/null || true)
  echo "fuzz-$k: rc=$rc execs=$execs cpu=${cpu:-?}s ${last#*	}" | sed 's/  */ /g'
  if [ -n "${FUZZ_LOG:-}" ]; then
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last"); ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    ncorp=$(find "$corpus/$k" -type f | wc -l)
    res=ok; [ "$rc" = 0 ] || res="finding rc=$rc: $(grep -m1 -oE 'Test unit written to [^ ]*' "$log" || echo see log)"
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | `%s` |\n' "$(date -u +%FT%TZ)" "$k" "$secs" "$execs" \
      "${cpu:-?}" "${cov:-?}" "${ft:-?}" "$ncorp" "$res" "${cmd[*]}" >>"$FUZZ_LOG"
  fi
  if [ "$rc" != 0 ]; then
    status=1
    grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -5 >&2 || true
  fi
done
exit $status
