# Helpers for the CLI tests: source this file, call `run` and the checks,
# then `finish`.  Prints one line per check and the closing
# "N passed, N failed" line.
set -u
GC=${GRAPHCONV:?GRAPHCONV must point at the graphconv binary}
SHARED=${GIR_SHARED_DIR:?GIR_SHARED_DIR must point at shared/}
passed=0
failed=0
TMP=$(mktemp -d "${TMPDIR:-/tmp}/graphconv-cli-XXXXXX")
CAP=$(mktemp -d "${TMPDIR:-/tmp}/graphconv-cap-XXXXXX")
trap 'rm -rf "$TMP" "$CAP"' EXIT

# run ARGS...: runs graphconv, capturing stdout, stderr and the status.
run() {
  "$GC" "$@" >"$CAP/out" 2>"$CAP/err"
  rc=$?
  out=$(cat "$CAP/out")
  err=$(cat "$CAP/err")
}

# run_piped FILE ARGS...: run, with FILE fed through a pipe on stdin.
run_piped() {
  local file=$1
  shift
  run "$@" < <(cat "$file")
}

ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() {
  failed=$((failed + 1))
  echo "FAIL - $1"
  echo "  status: $rc"
  echo "  stdout: $(head -c 2000 "$CAP/out")"
  echo "  stderr: $(head -c 2000 "$CAP/err")"
}

# expect_rc NAME CODE: the last run exited with CODE.
expect_rc() { if [ "$rc" = "$2" ]; then ok "$1"; else bad "$1 (want exit $2)"; fi; }
# expect_err NAME CODE TEXT...: exit CODE and stderr contains every TEXT.
expect_err() {
  local name=$1 code=$2
  shift 2
  if [ "$rc" != "$code" ]; then bad "$name (want exit $code)"; return; fi
  for t in "$@"; do
    case "$err" in *"$t"*) ;; *) bad "$name (stderr lacks: $t)"; return ;; esac
  done
  ok "$name"
}
# expect_out NAME TEXT...: exit 0 and stdout contains every TEXT.
expect_out() {
  local name=$1
  shift
  if [ "$rc" != 0 ]; then bad "$name (want exit 0)"; return; fi
  for t in "$@"; do
    case "$out" in *"$t"*) ;; *) bad "$name (stdout lacks: $t)"; return ;; esac
  done
  ok "$name"
}
# check NAME COMMAND...: a shell condition.
check() {
  local name=$1
  shift
  if "$@"; then ok "$name"; else bad "$name (condition failed: $*)"; fi
}
# no_files DIR NAME: DIR holds nothing but what it held before (no partial output, no temp files).
only_files() {
  local name=$1 dir=$2
  shift 2
  local want have
  want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
  have=$(ls -A "$dir" | sort | tr '\n' ' ')
  if [ "$want" = "$have" ]; then ok "$name"; else rc=-; bad "$name (dir has: $have; want: $want)"; fi
}

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ]
}
