#!/usr/bin/env bash
# The shape of the source tree (HACKING.md, "One shape for every format
# plugin"): every format folder has the same files, none includes another
# format's headers, and no C file in lib/formats passes 1,500 lines.
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
FMT=$SRC/lib/formats

folders=()
for d in "$FMT"/*/; do folders+=("$(basename "$d")"); done
# fail WHAT: a failed check (no command ran, so nothing captured to show).
fail() { failed=$((failed + 1)); echo "FAIL - $1"; }
if [ "${#folders[@]}" -ge 5 ]; then ok "five or more format folders"; else fail "format folders: ${folders[*]}"; fi

for f in "${folders[@]}"; do
  missing=
  for need in "$f.h" plugin.c ops.c read.c read_ops.c write.c meson.build; do
    [ -f "$FMT/$f/$need" ] || missing="$missing $need"
  done
  if [ -z "$missing" ]; then ok "$f has the plugin files"; else fail "$f lacks:$missing"; fi
  # Every C file is named by the plugin shape: plugin, ops, read*, write*,
  # or one of the named helpers.
  odd=
  for c in "$FMT/$f"/*.c; do
    b=$(basename "$c" .c)
    case $b in
      plugin | ops | read | read_* | write | write_* | params | wts | tensor | text | schema | names) ;;
      *) odd="$odd $b.c" ;;
    esac
  done
  if [ -z "$odd" ]; then ok "$f: file names follow the plugin shape"; else fail "$f: unexpected files:$odd"; fi
  # Includes of another format's folder, by path or by climbing out.
  others=$(grep -nE '#include "(formats/[a-z]+/|\.\./[a-z]+/)' "$FMT/$f"/*.[ch] | grep -v "#include \"formats/$f/" || true)
  if [ -z "$others" ]; then ok "$f includes no other format"; else fail "$f includes another format: $others"; fi
  # Another format's internal header by name.
  for o in "${folders[@]}"; do
    [ "$o" = "$f" ] && continue
    hits=$(grep -nE "#include \"([^\"]*/)?$o\.h\"" "$FMT/$f"/*.[ch] || true)
    if [ -n "$hits" ]; then fail "$f includes $o.h: $hits"; fi
  done
done

big=$(find "$FMT" -name '*.c' -exec wc -l {} + | awk '$2 != "total" && $1 > 1500 {print $2 " (" $1 " lines)"}')
if [ -z "$big" ]; then ok "no C file in lib/formats above 1,500 lines"; else fail "C files above 1,500 lines: $big"; fi

finish
