#!/usr/bin/env bash
# Usage: gpu_check_test.sh SOURCE_DIR BUILD_DIR. Exit 0 when every check holds.
set -u
src=$1
build=$2
tool=$src/tools/gpu-check
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() {  # name want_rc want_text rc output
  if [ "$4" != "$2" ] || ! grep -qF -- "$3" <<<"$5"; then
    echo "FAIL: $1: exit $4 (want $2), output: $5"
    fails=$((fails + 1))
  else
    echo "ok: $1"
  fi
}
run() { out=$("$@" 2>&1); rc=$?; }

if command -v shellcheck >/dev/null; then
  run shellcheck "$tool"
  check "shellcheck" 0 "" "$rc" "$out"
fi
run "$tool" --help
check "--help" 0 "--prepare" "$rc" "$out"
run "$tool" --bogus
check "unknown argument" 2 "unknown argument: --bogus" "$rc" "$out"
run "$tool" --jobs many
check "--jobs not a number" 2 "--jobs: not a number: many" "$rc" "$out"
run "$tool" --python
check "flag without value" 2 "--python needs a value" "$rc" "$out"

# Stand-ins: an nvidia-smi listing no GPU, then one GPU; a python whose torch has no CUDA.
mkdir -p "$tmp/nogpu" "$tmp/gpu" "$tmp/nocuda"
printf '#!/bin/sh\necho "No devices were found"\nexit 6\n' >"$tmp/nogpu/nvidia-smi"
printf '#!/bin/sh\necho "GPU 0: Stand-in (UUID: GPU-0)"\n' >"$tmp/gpu/nvidia-smi"
printf '#!/bin/sh\nexit 1\n' >"$tmp/nocuda/python3"
printf '#!/bin/sh\nexit 0\n' >"$tmp/gpu/python3"
chmod +x "$tmp"/*/*
base=/usr/bin:/bin
run env PATH="$base" "$tool"
check "no nvidia-smi" 2 "no NVIDIA GPU on this machine" "$rc" "$out"
run env PATH="$tmp/nogpu:$base" "$tool"
check "nvidia-smi lists no GPU" 2 "no NVIDIA GPU on this machine" "$rc" "$out"
run env PATH="$tmp/nocuda:$tmp/gpu:$base" "$tool"
check "torch without CUDA" 2 "has no torch that sees the GPU" "$rc" "$out"
run env PATH="$tmp/gpu:$base" "$tool" --carry "$tmp/none"
check "no carried folder" 2 "--carry: no folder $tmp/none" "$rc" "$out"
mkdir -p "$tmp/half/bin"
run env PATH="$tmp/gpu:$base" "$tool" --carry "$tmp/half"
check "carried folder incomplete" 2 "bin/pjemu is missing" "$rc" "$out"

# --prepare from this build: the layout the GPU machine needs, under the device tool's 64 MiB.
if [ -x "$build/bin/pjemu" ]; then
  run env PJEMU_BUILD_DIR="$build" "$tool" --prepare "$tmp/carry"
  check "--prepare" 0 "gpu-check: prepared" "$rc" "$out"
  for f in bin/pjemu prefix/usr/include/gloo/algorithm.h prefix/usr/include/CLI/CLI.hpp \
           prefix/usr/include/fmt/format.h fashion-mnist/t10k-labels-idx1-ubyte.gz; do
    [ -e "$tmp/carry/$f" ] || { echo "FAIL: --prepare left out $f"; fails=$((fails + 1)); }
  done
  compgen -G "$tmp/carry/lib/libyaml-cpp*" >/dev/null ||
    { echo "FAIL: --prepare left out libyaml-cpp"; fails=$((fails + 1)); }
  for lib in libc.so.6 libstdc++.so.6 libssl.so.3; do
    [ ! -e "$tmp/carry/lib/$lib" ] || { echo "FAIL: --prepare carried $lib"; fails=$((fails + 1)); }
  done
  kib=$(du -sk "$tmp/carry" | cut -f1)
  [ "$kib" -lt $((64 * 1024)) ] || { echo "FAIL: --prepare made $kib KiB"; fails=$((fails + 1)); }
  run env LD_LIBRARY_PATH="$tmp/carry/lib" "$tmp/carry/bin/pjemu" version
  check "carried pjemu runs" 0 "pjemu version" "$rc" "$out"
fi
[ "$fails" = 0 ]
