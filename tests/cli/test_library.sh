#!/usr/bin/env bash
# libgraphir as other programs use it: installed headers, the shared
# library with its soname, libgraphir.pc; the README's example program is
# built with pkg-config against the installed copy and run on a real model.
. "$(dirname "$0")/lib.sh"
BUILD=${GIR_BUILD_DIR:?}
SRC=${GIR_SOURCE_DIR:?}
dest="$TMP/root"
if ! meson install -C "$BUILD" --destdir "$dest" --no-rebuild >"$CAP/install.log" 2>&1; then
  rc=1; bad "meson install into a staging directory"; finish; exit 1
fi
rc=0
pc=$(find "$dest" -name libgraphir.pc | head -n1)
check "libgraphir.pc is installed" test -n "$pc"
check "graphir.h is installed" test -n "$(find "$dest" -path '*include/graphir/graphir.h')"
so=$(find "$dest" -name 'libgraphir.so.0' | head -n1)
check "the shared library has soname libgraphir.so.0" \
  sh -c "objdump -p '$so' 2>/dev/null | grep -q 'SONAME *libgraphir.so.0'"
prefix=$(sed -n 's/^prefix=//p' "$pc")
pcdir=$(dirname "$pc")
flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --define-variable=prefix="$dest$prefix" --cflags --libs libgraphir)
libdir=$(dirname "$so")
if cc ${GIR_EXTRA_CFLAGS:-} -std=c11 -Wall -Wextra -Werror -o "$TMP/histogram" "$SRC/examples/histogram.c" $flags 2>"$CAP/cc.log"; then
  ok "the README example builds with pkg-config"
else
  rc=1; bad "the README example builds with pkg-config: $(cat "$CAP/cc.log")"
fi
# Only GIR_API symbols are exported.
leaked=$(nm -D --defined-only "$so" | awk '$2 == "T" && $3 !~ /^gir_/ {print $3}' | grep -v -E '^(_init|_fini)$' || true)
check "only gir_ symbols are exported" test -z "$leaked"
LD_LIBRARY_PATH="$libdir" "$TMP/histogram" "$SHARED/realworld/mxnet/lenet-symbol.json" >"$CAP/out" 2>"$CAP/err"
rc=$?; out=$(cat "$CAP/out"); err=$(cat "$CAP/err")
expect_out "the example prints the op histogram of MXNet LeNet" "Conv " "Relu "
LD_LIBRARY_PATH="$libdir" "$TMP/histogram" "$TMP/none.json" >"$CAP/out" 2>"$CAP/err"
rc=$?; out=$(cat "$CAP/out"); err=$(cat "$CAP/err")
expect_err "the example reports a missing file" 5 "none.json" "[io]"
# The README's program and examples/histogram.c are the same program.
readme_code=$(awk '/^```c$/{f=1;next} /^```$/{f=0} f' "$SRC/README.md")
rc=0
check "examples/histogram.c is the README's program" test "$readme_code" = "$(cat "$SRC/examples/histogram.c")"
finish
