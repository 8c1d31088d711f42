#!/usr/bin/env bash
# The Python package as a user installs it: a separate build installed into
# a temporary prefix; `import graphconv` with only PYTHONPATH set finds the
# installed libgraphir by itself (no LD_LIBRARY_PATH), converts ResNet-18
# to .nnp with a check, and runs the result to ONNX Runtime's numbers.
. "$(dirname "$0")/lib.sh"
SRC=${GIR_SOURCE_DIR:?}
PY=${GIR_PYTHON:-/usr/bin/python3}
if ! "$PY" -c 'import cffi, numpy' 2>/dev/null; then
  echo "skip: $PY lacks cffi or numpy"
  exit 77
fi
prefix="$TMP/prefix"
if ! meson setup "$TMP/build" "$SRC" --prefix="$prefix" --wrap-mode=nodownload -Dtests=false -Dbench=false \
     -Dman=false -Dpython=enabled -Dbuildtype=plain >"$CAP/setup.log" 2>&1 ||
   ! ninja -C "$TMP/build" install >"$CAP/install.log" 2>&1; then
  rc=1; bad "a build installed into $prefix: $(tail -n 20 "$CAP/setup.log" "$CAP/install.log" 2>/dev/null)"; finish; exit 1
fi
rc=0
pkg=$(find "$prefix" -type d -name graphconv -path '*-packages/graphconv' | head -n1)
check "the package is installed into the prefix's site-packages" test -n "$pkg"
check "the package records the installed library's path" \
  grep -q "LIBRARY = \"$prefix/.*libgraphir.so.0\"" "$pkg/_config.py"
cat >"$TMP/use.py" <<'PYEOF'
import sys
import numpy as np
import graphconv
models = sys.argv[1]
out = sys.argv[2]
report = graphconv.convert(models + "/resnet18.onnx", out, check=True)
assert report.status == "ok" and report.check.passed and report.check.method == "run", report
x = np.load(models + "/input_1x3x224x224.npy")
with graphconv.load(out) as m:
    (y,) = m.run({"data": x}).values()
ref = np.load(models + "/resnet18.ort_out.npy")
err = float(np.max(np.abs(y - ref)))
print(f"library {graphconv._ffi.lib!r} max abs error {err:.3g}")
assert err <= 1e-4, err
PYEOF
env -u LD_LIBRARY_PATH -u GRAPHCONV_LIBRARY -u LD_PRELOAD PYTHONPATH="$(dirname "$pkg")" \
  "$PY" "$TMP/use.py" "$SHARED/models" "$TMP/r.nnp" >"$CAP/out" 2>"$CAP/err"
rc=$?; out=$(cat "$CAP/out"); err=$(cat "$CAP/err")
expect_out "import graphconv from the prefix converts ResNet-18 with a check and runs it within 1e-4 of ONNX Runtime" \
  "max abs error"
finish
