#!/usr/bin/env bash
# Builds the seed corpora of the fuzz targets in OUTDIR/KIND/ from the real
# files in the shared fixtures (read by path, never copied into the
# repository), the models and the incoming files, plus the regression
# inputs in fuzz/regress/.  Inputs with a companion file are "graph, the
# FUZZ_SPLIT line, companion" (fuzz/harness.h).
# Usage: fuzz/seeds.sh OUTDIR [SHARED_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: fuzz/seeds.sh OUTDIR [SHARED_DIR]}
shared=${2:-${GIR_SHARED_DIR:-$here/../shared}}
split=$'\n#--graphconv-fuzz-companion--#\n'
max=$((2 * 1024 * 1024))   # seeds above 2 MB only slow the fuzzer down
kinds=(graph_json params nnp nntxt h5 protobuf onnx wts npy)
for k in "${kinds[@]}"; do mkdir -p "$out/$k"; done
small() { [ -f "$1" ] && [ "$(stat -c %s "$1")" -le "$max" ]; }
n=0
seed() { # KIND NAME FILE [COMPANION]
  local dst="$out/$1/$2"
  if [ $# -eq 4 ]; then { cat "$3"; printf '%s' "$split"; cat "$4"; } > "$dst"; else cp "$3" "$dst"; fi
  n=$((n + 1))
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -d "$shared" ]; then
  while IFS= read -r f; do
    small "$f" || continue
    b=$(basename "$f"); d=$(basename "$(dirname "$f")")
    case "$f" in
      *.json) seed graph_json "$d-$b" "$f" ;;
      *.nntxt) seed nntxt "$d-$b" "$f" ;;
      *.npy) seed npy "$d-$b" "$f" ;;
      *.onnx) seed onnx "$d-$b" "$f" /dev/null ;;
      *.nnp)
        seed nnp "$d-$b" "$f"
        unzip -Z1 "$f" > "$tmp/list" 2>/dev/null || continue
        net=$(grep -E '\.(nntxt|prototxt)$' "$tmp/list" | head -1 || true)
        [ -n "$net" ] || continue
        unzip -p "$f" "$net" > "$tmp/net"
        seed nntxt "$d-$b.nntxt" "$tmp/net"
        if grep -qx parameter.h5 "$tmp/list"; then
          unzip -p "$f" parameter.h5 > "$tmp/p"; seed h5 "$d-$b" "$tmp/net" "$tmp/p"
        fi
        if grep -qx parameter.protobuf "$tmp/list"; then
          unzip -p "$f" parameter.protobuf > "$tmp/p"; seed protobuf "$d-$b" "$tmp/net" "$tmp/p"
        fi ;;
    esac
  done < <(find "$shared/realworld" "$shared/incoming" "$shared/models" -type f 2>/dev/null | sort)
  # graphs beside their parameters
  r=$shared/realworld
  pair() { small "$3" && small "$4" && seed "$1" "$2" "$3" "$4" || true; }
  pair params mxnet-lenet "$r/mxnet/lenet-symbol.json" "$r/mxnet/lenet-0001.params"
  pair params nnvm-lenet "$r/nnvm/lenet_nnvm_graph.json" "$r/nnvm/lenet_nnvm_param.params"
  pair params tvm-wrn "$r/tvm/wrn_fc.json" "$r/tvm/wrn_fc.params"
  for w in "$r"/lightnet/*.wts; do
    [ -f "$w" ] && pair wts "lightnet-$(basename "$w")" "${w%.wts}.json" "$w"
  done
fi
# the LightNet weights of the tests' own models
for w in "$here"/testdata/lightnet/*.wts; do
  [ -f "$w" ] && [ -f "${w%.wts}.json" ] && seed wts "testdata-$(basename "$w")" "${w%.wts}.json" "$w"
done
# graphs graphconv writes itself, with their companions
gc=${GRAPHCONV:-$here/build/tools/graphconv}
if [ -x "$gc" ] && [ -d "$shared/realworld" ]; then
  "$gc" "$shared/realworld/mxnet/lenet-symbol.json" "$tmp/ln.json" --to lightnet --force \
    --params "$shared/realworld/mxnet/lenet-0001.params" -q 2>/dev/null &&
    [ -f "$tmp/ln.wts" ] && seed wts lenet-written "$tmp/ln.json" "$tmp/ln.wts" || true
  "$gc" "$shared/realworld/nnp/lenet_010000.nnp" "$tmp/le.nntxt" --force -q 2>/dev/null &&
    [ -f "$tmp/le.h5" ] && seed h5 lenet-written "$tmp/le.nntxt" "$tmp/le.h5" || true
fi
for k in "${kinds[@]}"; do
  [ -d "$here/fuzz/regress/$k" ] && cp "$here/fuzz/regress/$k"/* "$out/$k/" 2>/dev/null || true
done
echo "seeds: $n inputs from $shared, plus fuzz/regress" >&2
