#!/usr/bin/env bash
# Installs what graphconv needs from Debian's packages (only what is
# missing), then configures and builds it.  Usage: scripts/setup.sh BUILDDIR [meson options...]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:?usage: scripts/setup.sh BUILDDIR [meson options...]}
shift

packages=(
  gcc pkg-config meson ninja-build
  libyajl-dev libprotobuf-c-dev protobuf-c-compiler libzip-dev zlib1g-dev libhdf5-dev libcmocka-dev
  libonnx-dev libonnx-testdata
  hdf5-tools unzip graphviz yajl-tools man-db
  clang libclang-rt-14-dev llvm
  python3 python3-cffi python3-numpy python3-pytest
  python3-torchvision python3-onnx
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "setup: run as root (apt-get is needed for: ${missing[*]})" >&2; exit 1; }
    sudo=sudo
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cd "$here"
if [ ! -d "$builddir" ]; then
  meson setup "$builddir" --wrap-mode=nodownload "$@"
fi
ninja -C "$builddir"
