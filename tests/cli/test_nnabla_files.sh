#!/usr/bin/env bash
# Real nnabla / Neural Network Console files (../shared/incoming/nnp and
# every .nnp of ../shared/realworld): each reads, survives .nnp -> .nnp
# with the same graph and weights for every network it holds (the
# executor's one and the training/validation ones), and converts to ONNX
# with --check passing.
. "$(dirname "$0")/lib.sh"

files="$SHARED/incoming/nnp/nnc_titanic.nnp $(ls "$SHARED"/realworld/nnp/*.nnp "$SHARED"/realworld/nnp-onnx-pairs/*.nnp)"
for f in $files; do
  b=$(basename "$f" .nnp)
  run "$f" "$TMP/$b.nnp" --force
  expect_rc "$b reads and writes as nnabla" 0
  run diff "$f" "$TMP/$b.nnp"
  expect_rc "$b: .nnp -> .nnp, same graph and weights" 0
  # every network of the file, through the graph the reader builds
  for net in $(unzip -p "$f" '*.nntxt' '*.prototxt' 2>/dev/null | tr -d '\r' |
               awk '/^network *[:]? *\{/ { innet = 1; next } innet && /^  name:/ { gsub(/^  name: *"|"$/, ""); print; innet = 0 }'); do
    run convert -I network="$net" "$f" "$TMP/$b.$net.a.nnp" --force
    r1=$rc
    run convert -I network="$net" "$TMP/$b.nnp" "$TMP/$b.$net.b.nnp" --force
    if [ "$r1" = 0 ] && [ "$rc" = 0 ]; then
      run diff "$TMP/$b.$net.a.nnp" "$TMP/$b.$net.b.nnp"
      expect_rc "$b: network $net the same after .nnp -> .nnp" 0
    else
      rc="$r1/$rc"
      bad "$b: network $net reads from the original and the copy"
    fi
  done
  run "$f" "$TMP/$b.onnx" --check --force
  expect_rc "$b converts to ONNX with --check" 0
done
finish
