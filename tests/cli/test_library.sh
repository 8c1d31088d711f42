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
# The library test program (tests/api_program.c): built against the
# installed headers with pkg-config, linked with the shared library and with
# the static one, it builds a graph from nothing, saves it in every writable
# format, loads each back from memory and runs it to the expected numbers.
# PKG_CONFIG_LIBDIR hides every other .pc file: as on a machine without the
# dependencies' development packages.
inc=$(PKG_CONFIG_LIBDIR="$pcdir" pkg-config --define-variable=prefix="$dest$prefix" --cflags libgraphir 2>&1)
check "pkg-config --cflags works with no other .pc file and names only libgraphir's headers" \
  test "$(echo $inc)" = "-I$dest$prefix/include"
check "libgraphir.pc requires no dependency's .pc (Requires.private empty)" sh -c "! grep -q '^Requires' '$pc'"
static=$(find "$dest" -name 'libgraphir.a' | head -n1)
check "the static library is installed beside the shared one" test -n "$static" -a "$(dirname "$static")" = "$libdir"
if cc ${GIR_EXTRA_CFLAGS:-} -std=c11 -Wall -Wextra -Werror -o "$TMP/api_shared" "$SRC/tests/api_program.c" $flags -lm \
    2>"$CAP/cc.log"; then
  rc=0; ok "the API test program builds against the shared library"
else
  rc=1; bad "the API test program builds against the shared library: $(cat "$CAP/cc.log")"
fi
sflags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --define-variable=prefix="$dest$prefix" --static --cflags --libs libgraphir |
  sed "s|-lgraphir|$static|")
if cc ${GIR_EXTRA_CFLAGS:-} -std=c11 -Wall -Wextra -Werror -o "$TMP/api_static" "$SRC/tests/api_program.c" $sflags \
    2>"$CAP/cc.log"; then
  rc=0; ok "the API test program builds against the static library (pkg-config --static)"
else
  rc=1; bad "the API test program builds against the static library: $(cat "$CAP/cc.log")"
fi
check "the static build does not need libgraphir.so" sh -c "! ldd '$TMP/api_static' | grep -q libgraphir"
for kind in shared static; do
  LD_LIBRARY_PATH="$libdir" "$TMP/api_$kind" >"$CAP/out" 2>"$CAP/err"
  rc=$?; out=$(cat "$CAP/out"); err=$(cat "$CAP/err")
  expect_out "API program ($kind): built, saved in every format, loaded from memory, run to the numbers" \
    "ok - onnx: runs to the expected numbers" "ok - nnabla: runs to the expected numbers" \
    "ok - nnvm: runs to the expected numbers" "ok - mxnet: runs to the expected numbers" \
    "ok - relayviz: runs to the expected numbers" "ok - lightnet: runs to the expected numbers" \
    "ok - a Reshape to [1,-1] is named as pinning the batch" " 0 failed"
done
# libgraphir(3)'s program: loads, runs and prints an output.
if cc ${GIR_EXTRA_CFLAGS:-} -std=c11 -Wall -Wextra -Werror -o "$TMP/run_model" "$SRC/examples/run_model.c" $flags \
    2>"$CAP/cc.log"; then
  rc=0; ok "libgraphir(3)'s example builds"
else
  rc=1; bad "libgraphir(3)'s example builds: $(cat "$CAP/cc.log")"
fi
LD_LIBRARY_PATH="$libdir" "$TMP/run_model" "$SHARED/models/resnet18.onnx" >"$CAP/out" 2>"$CAP/err"
rc=$?; out=$(cat "$CAP/out"); err=$(cat "$CAP/err")
expect_out "libgraphir(3)'s example runs ResNet-18 and prints its output" "logits [1,1000]: "
man3=$(find "$dest" -path '*man3/libgraphir.3' | head -n1)
rc=0
check "libgraphir(3) is installed and shows the example program" sh -c "grep -q 'gir_session_feed(s, 0, NULL' '$man3'"
# Every GIR_API function has its page, installed, saying who owns what it returns.
missing=""
for f in $(grep -ho 'GIR_API[^(]*\bgir_[a-z0-9_]*(' "$SRC"/lib/include/graphir/*.h | sed 's/.*\(gir_[a-z0-9_]*\)(/\1/'); do
  p="$(dirname "$man3")/$f.3"
  if [ ! -f "$p" ] || ! grep -q '^\.SH OWNERSHIP' "$p"; then missing="$missing $f"; fi
done
check "every GIR_API function has a section-3 page with OWNERSHIP (missing:$missing)" test -z "$missing"
check "libgraphir(3) lists every function's page" \
  test "$(grep -c '^\.BR gir_.* (3)' "$man3")" -ge "$(grep -ho 'GIR_API[^(]*\bgir_[a-z0-9_]*(' "$SRC"/lib/include/graphir/*.h | wc -l)"
# The README's program and examples/histogram.c are the same program.
readme_code=$(awk '/^```c$/{f=1;next} /^```$/{f=0} f' "$SRC/README.md")
rc=0
check "examples/histogram.c is the README's program" test "$readme_code" = "$(cat "$SRC/examples/histogram.c")"
finish
