#!/usr/bin/env bash
# Sets everything up and runs the whole test suite under AddressSanitizer
# and UndefinedBehaviorSanitizer, with warnings as errors.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
scripts/setup.sh build-test -Db_sanitize=address,undefined -Db_lundef=false -Dwerror=true -Dbuildtype=debugoptimized
meson test -C build-test --print-errorlogs --num-processes 2 "$@"
