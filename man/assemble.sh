#!/bin/sh
# Builds a man page from its template: @ERRORS@ and @OPS@ are replaced by
# what the graphconv binary prints from the registries (so the pages cannot
# drift from the code), @SECTIONS@ by the per-format sections in order.
# Usage: assemble.sh GRAPHCONV TEMPLATE OUTPUT [SECTION...]
set -eu
gc=$1 tmpl=$2 out=$3
shift 3
tmp=$out.tmp
: >"$tmp"
while IFS= read -r line; do
  case "$line" in
    @ERRORS@) "$gc" errors --man >>"$tmp" ;;
    @OPS@) "$gc" ops --man >>"$tmp" ;;
    @SECTIONS@) for s in "$@"; do cat "$s" >>"$tmp"; done ;;
    *) printf '%s\n' "$line" >>"$tmp" ;;
  esac
done <"$tmpl"
mv "$tmp" "$out"
