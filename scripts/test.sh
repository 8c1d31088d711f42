#!/usr/bin/env bash
# Sets everything up and runs the whole test suite under AddressSanitizer
# and UndefinedBehaviorSanitizer, with warnings as errors.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
scripts/setup.sh build-test -Db_sanitize=address,undefined -Db_lundef=false -Dwerror=true -Dbuildtype=debugoptimized
status=0
meson test -C build-test --print-errorlogs --num-processes 2 "$@" || status=$?
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
