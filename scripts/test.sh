#!/usr/bin/env bash
# Sets everything up and runs the whole test suite under AddressSanitizer
# and UndefinedBehaviorSanitizer, with warnings as errors.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
scripts/setup.sh build-test -Db_sanitize=address,undefined -Db_lundef=false -Dwerror=true -Dbuildtype=debugoptimized
status=0
meson test -C build-test --print-errorlogs --num-processes 2 "$@" || status=$?
# Smoke fuzzing: every libFuzzer target of fuzz/ under ASan+UBSan (clang;
# build-fuzz/), for a few seconds each and from a fixed seed, so that every
# machine tries the same inputs in the same order.  The long run:
# scripts/fuzz.sh 3600.
if [ $# -eq 0 ] && [ "${GIR_SKIP_FUZZ:-0}" != 1 ]; then
  echo "smoke fuzzing (scripts/fuzz.sh ${GIR_FUZZ_SECONDS:-8}, at most ${GIR_FUZZ_RUNS:-20000} inputs per target, seed 1):"
  GRAPHCONV=$here/build-test/tools/graphconv FUZZ_RUNS=${GIR_FUZZ_RUNS:-20000} \
    scripts/fuzz.sh "${GIR_FUZZ_SECONDS:-8}" || status=1
fi
# One closing line over every test program (each prints its own cases).
log=build-test/meson-logs/testlog.json
if [ -f "$log" ]; then
  ok=$(grep -c '"result": "OK"' "$log" || true)
  skipped=$(grep -c '"result": "SKIP"' "$log" || true)
  failed=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)
  cases=$(grep -o -E '\[       OK \]|ok - ' build-test/meson-logs/testlog.txt | wc -l)
  echo "test programs: $ok passed, $failed failed, $skipped skipped ($cases test cases passed)"
  echo "$ok passed, $failed failed"
fi
exit "$status"
